//! Device types and devices (`c10c_device_type`, `c10c_device`).

use crate::error::{check, static_str, Error, Result, Status};
use crate::sys;
use std::fmt;

macro_rules! device_types {
    ($($(#[$doc:meta])* $name:ident = $c:ident,)*) => {
        /// A device type: every value of `c10c_device_type_value` (c10's DeviceType), numbered
        /// as the library (and torch 2.13) numbers them. [`DeviceType::try_from`] refuses
        /// numbers it does not know.
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
        #[repr(i8)]
        pub enum DeviceType {
            $($(#[$doc])* $name = sys::$c,)*
        }

        impl DeviceType {
            /// Every device type, in numeric order.
            pub const ALL: &'static [DeviceType] = &[$(DeviceType::$name,)*];
        }

        impl TryFrom<sys::c10c_device_type> for DeviceType {
            type Error = Error;
            /// The device type of a raw value; an unknown one gives `Status::InvalidArgument`
            /// "Unknown device type N".
            fn try_from(v: sys::c10c_device_type) -> Result<DeviceType> {
                match v {
                    $(sys::$c => Ok(DeviceType::$name),)*
                    _ => Err(Error::new(Status::InvalidArgument, format!("Unknown device type {v}"))),
                }
            }
        }
    };
}

device_types! {
    /// "cpu"
    Cpu = C10C_DEVICE_TYPE_CPU,
    /// "cuda"
    Cuda = C10C_DEVICE_TYPE_CUDA,
    /// "mkldnn"
    Mkldnn = C10C_DEVICE_TYPE_MKLDNN,
    /// "opengl"
    OpenGl = C10C_DEVICE_TYPE_OPENGL,
    /// "opencl"
    OpenCl = C10C_DEVICE_TYPE_OPENCL,
    /// "ideep"
    Ideep = C10C_DEVICE_TYPE_IDEEP,
    /// "hip"
    Hip = C10C_DEVICE_TYPE_HIP,
    /// "fpga"
    Fpga = C10C_DEVICE_TYPE_FPGA,
    /// "maia"
    Maia = C10C_DEVICE_TYPE_MAIA,
    /// "xla"
    Xla = C10C_DEVICE_TYPE_XLA,
    /// "vulkan"
    Vulkan = C10C_DEVICE_TYPE_VULKAN,
    /// "metal"
    Metal = C10C_DEVICE_TYPE_METAL,
    /// "xpu"
    Xpu = C10C_DEVICE_TYPE_XPU,
    /// "mps"
    Mps = C10C_DEVICE_TYPE_MPS,
    /// "meta": sizes and strides, no data.
    Meta = C10C_DEVICE_TYPE_META,
    /// "hpu"
    Hpu = C10C_DEVICE_TYPE_HPU,
    /// "ve"
    Ve = C10C_DEVICE_TYPE_VE,
    /// "lazy"
    Lazy = C10C_DEVICE_TYPE_LAZY,
    /// "ipu"
    Ipu = C10C_DEVICE_TYPE_IPU,
    /// "mtia"
    Mtia = C10C_DEVICE_TYPE_MTIA,
    /// "privateuseone" (or its registered name)
    PrivateUse1 = C10C_DEVICE_TYPE_PRIVATEUSE1,
}

impl DeviceType {
    /// The raw `c10c_device_type`.
    pub fn raw(self) -> sys::c10c_device_type {
        self as sys::c10c_device_type
    }

    /// c10's lower-case name ("cuda").
    pub fn name(self) -> &'static str {
        // SAFETY: static strings (or NULL, never for a valid type).
        unsafe { static_str(sys::c10c_device_type_name(self.raw(), true)) }
    }
}

impl fmt::Display for DeviceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A device: a type and an optional index (c10's Device; `None` is index -1, "the current
/// device of that type").
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Device {
    /// The device type.
    pub kind: DeviceType,
    /// The index, 0..=127, or `None`.
    pub index: Option<u8>,
}

impl Device {
    /// The CPU (`cpu`, no index).
    pub const CPU: Device = Device {
        kind: DeviceType::Cpu,
        index: None,
    };
    /// The meta device (sizes and strides, no data).
    pub const META: Device = Device {
        kind: DeviceType::Meta,
        index: None,
    };

    /// A device of `kind` with `index` (`None`: no index). Checked by `c10c_device_init`
    /// (an index above 127 is `Status::Error`).
    pub fn new(kind: DeviceType, index: Option<u32>) -> Result<Device> {
        let mut out = sys::c10c_device { r#type: 0, index: -1 };
        let idx = index.map(i64::from).unwrap_or(-1);
        // SAFETY: out is valid.
        check(unsafe { sys::c10c_device_init(&mut out, kind.raw(), idx) })?;
        Device::try_from(out)
    }

    /// CUDA device `index`.
    pub fn cuda(index: u8) -> Device {
        Device {
            kind: DeviceType::Cuda,
            index: Some(index),
        }
    }

    /// The C value.
    pub fn raw(self) -> sys::c10c_device {
        sys::c10c_device {
            r#type: self.kind.raw(),
            index: self.index.map(|i| i as i8).unwrap_or(-1),
        }
    }

    /// Parses a device string as torch.device(str) does (`c10c_device_from_chars`).
    pub fn parse(s: &str) -> Result<Device> {
        let mut out = sys::c10c_device { r#type: 0, index: -1 };
        // SAFETY: s is valid for len bytes.
        check(unsafe { sys::c10c_device_from_chars(&mut out, s.as_ptr().cast(), s.len()) })?;
        Device::try_from(out)
    }
}

impl TryFrom<sys::c10c_device> for Device {
    type Error = Error;
    /// Refuses an unknown type and an index outside -1..=127 (`Status::InvalidArgument`).
    fn try_from(d: sys::c10c_device) -> Result<Device> {
        let kind = DeviceType::try_from(d.r#type)?;
        let index = match d.index {
            -1 => None,
            i if i >= 0 => Some(i as u8),
            i => {
                return Err(Error::new(
                    Status::InvalidArgument,
                    format!("Device index must be -1 or non-negative, got {i}"),
                ))
            }
        };
        Ok(Device { kind, index })
    }
}

impl From<Device> for sys::c10c_device {
    fn from(d: Device) -> sys::c10c_device {
        d.raw()
    }
}

impl Default for Device {
    /// The CPU.
    fn default() -> Device {
        Device::CPU
    }
}

impl fmt::Display for Device {
    /// c10's Device::str(): "cuda:1", "cpu".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0 as std::ffi::c_char; sys::C10C_DEVICE_STRING_MAX as usize];
        // SAFETY: buf holds C10C_DEVICE_STRING_MAX bytes, which always fit.
        let st = unsafe { sys::c10c_device_to_string(buf.as_mut_ptr(), buf.len(), self.raw()) };
        if st != sys::C10C_STATUS_OK {
            return write!(f, "{}:{:?}", self.kind.raw(), self.index);
        }
        // SAFETY: NUL-terminated on success.
        let s = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
        f.write_str(&s.to_string_lossy())
    }
}

impl std::str::FromStr for Device {
    type Err = Error;
    fn from_str(s: &str) -> Result<Device> {
        Device::parse(s)
    }
}

/// A memory format (`c10c_memory_format_value`): how `empty`, `clone` and `contiguous` lay
/// strides out, and what `is_contiguous_as` asks.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
#[repr(i8)]
pub enum MemoryFormat {
    /// Row-major.
    #[default]
    Contiguous = sys::C10C_MEMORY_FORMAT_CONTIGUOUS,
    /// Keep the input's layout (empty_like, clone).
    Preserve = sys::C10C_MEMORY_FORMAT_PRESERVE,
    /// NHWC for 4 dims.
    ChannelsLast = sys::C10C_MEMORY_FORMAT_CHANNELS_LAST,
    /// NDHWC for 5 dims.
    ChannelsLast3d = sys::C10C_MEMORY_FORMAT_CHANNELS_LAST_3D,
}

impl MemoryFormat {
    /// The raw `c10c_memory_format`.
    pub fn raw(self) -> sys::c10c_memory_format {
        self as sys::c10c_memory_format
    }
}
