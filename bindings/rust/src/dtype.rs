//! Element types (`c10c_dtype`, c10's ScalarType).

use crate::error::{check, static_str, Error, Result, Status};
use crate::sys;
use std::ffi::CString;
use std::fmt;

macro_rules! dtypes {
    ($($(#[$doc:meta])* $name:ident = $c:ident,)*) => {
        /// An element type: every value of `c10c_dtype_value` (c10's ScalarType), numbered as
        /// the library numbers them. [`DType::try_from`] refuses numbers it does not know.
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
        #[repr(i8)]
        pub enum DType {
            $($(#[$doc])* $name = sys::$c,)*
        }

        impl DType {
            /// Every dtype, in numeric order (`Undefined` last).
            pub const ALL: &'static [DType] = &[$(DType::$name,)*];
        }

        impl TryFrom<sys::c10c_dtype> for DType {
            type Error = Error;
            /// The dtype of a raw value; an unknown one gives `Status::InvalidArgument`
            /// "invalid dtype N".
            fn try_from(v: sys::c10c_dtype) -> Result<DType> {
                match v {
                    $(sys::$c => Ok(DType::$name),)*
                    _ => Err(Error::new(Status::InvalidArgument, format!("invalid dtype {v}"))),
                }
            }
        }
    };
}

dtypes! {
    /// torch.uint8
    UInt8 = C10C_DTYPE_UINT8,
    /// torch.int8
    Int8 = C10C_DTYPE_INT8,
    /// torch.int16
    Int16 = C10C_DTYPE_INT16,
    /// torch.int32
    Int32 = C10C_DTYPE_INT32,
    /// torch.int64
    Int64 = C10C_DTYPE_INT64,
    /// torch.float16
    Float16 = C10C_DTYPE_FLOAT16,
    /// torch.float32
    Float32 = C10C_DTYPE_FLOAT32,
    /// torch.float64
    Float64 = C10C_DTYPE_FLOAT64,
    /// torch.complex32
    Complex32 = C10C_DTYPE_COMPLEX32,
    /// torch.complex64
    Complex64 = C10C_DTYPE_COMPLEX64,
    /// torch.complex128
    Complex128 = C10C_DTYPE_COMPLEX128,
    /// torch.bool
    Bool = C10C_DTYPE_BOOL,
    /// torch.qint8
    QInt8 = C10C_DTYPE_QINT8,
    /// torch.quint8
    QUInt8 = C10C_DTYPE_QUINT8,
    /// torch.qint32
    QInt32 = C10C_DTYPE_QINT32,
    /// torch.bfloat16
    BFloat16 = C10C_DTYPE_BFLOAT16,
    /// torch.quint4x2
    QUInt4x2 = C10C_DTYPE_QUINT4X2,
    /// torch.quint2x4
    QUInt2x4 = C10C_DTYPE_QUINT2X4,
    /// torch.bits1x8
    Bits1x8 = C10C_DTYPE_BITS1X8,
    /// torch.bits2x4
    Bits2x4 = C10C_DTYPE_BITS2X4,
    /// torch.bits4x2
    Bits4x2 = C10C_DTYPE_BITS4X2,
    /// torch.bits8
    Bits8 = C10C_DTYPE_BITS8,
    /// torch.bits16
    Bits16 = C10C_DTYPE_BITS16,
    /// torch.float8_e5m2
    Float8E5M2 = C10C_DTYPE_FLOAT8_E5M2,
    /// torch.float8_e4m3fn
    Float8E4M3Fn = C10C_DTYPE_FLOAT8_E4M3FN,
    /// torch.float8_e5m2fnuz
    Float8E5M2Fnuz = C10C_DTYPE_FLOAT8_E5M2FNUZ,
    /// torch.float8_e4m3fnuz
    Float8E4M3Fnuz = C10C_DTYPE_FLOAT8_E4M3FNUZ,
    /// torch.uint16
    UInt16 = C10C_DTYPE_UINT16,
    /// torch.uint32
    UInt32 = C10C_DTYPE_UINT32,
    /// torch.uint64
    UInt64 = C10C_DTYPE_UINT64,
    /// torch.uint1
    UInt1 = C10C_DTYPE_UINT1,
    /// torch.uint2
    UInt2 = C10C_DTYPE_UINT2,
    /// torch.uint3
    UInt3 = C10C_DTYPE_UINT3,
    /// torch.uint4
    UInt4 = C10C_DTYPE_UINT4,
    /// torch.uint5
    UInt5 = C10C_DTYPE_UINT5,
    /// torch.uint6
    UInt6 = C10C_DTYPE_UINT6,
    /// torch.uint7
    UInt7 = C10C_DTYPE_UINT7,
    /// torch.int1
    Int1 = C10C_DTYPE_INT1,
    /// torch.int2
    Int2 = C10C_DTYPE_INT2,
    /// torch.int3
    Int3 = C10C_DTYPE_INT3,
    /// torch.int4
    Int4 = C10C_DTYPE_INT4,
    /// torch.int5
    Int5 = C10C_DTYPE_INT5,
    /// torch.int6
    Int6 = C10C_DTYPE_INT6,
    /// torch.int7
    Int7 = C10C_DTYPE_INT7,
    /// torch.float8_e8m0fnu
    Float8E8M0Fnu = C10C_DTYPE_FLOAT8_E8M0FNU,
    /// torch.float4_e2m1fn_x2
    Float4E2M1FnX2 = C10C_DTYPE_FLOAT4_E2M1FN_X2,
    /// No dtype (c10's Undefined): item size 0; no tensor has it.
    Undefined = C10C_DTYPE_UNDEFINED,
}

impl DType {
    /// The raw `c10c_dtype`.
    pub fn raw(self) -> sys::c10c_dtype {
        self as sys::c10c_dtype
    }

    /// Looks a dtype up by torch name or legacy alias (`"float32"`, `"float"`), as
    /// `c10c_dtype_from_name`: `Status::InvalidArgument` "Unknown dtype name: x" otherwise.
    pub fn from_name(name: &str) -> Result<DType> {
        let c = CString::new(name)
            .map_err(|_| Error::new(Status::InvalidArgument, format!("Unknown dtype name: {name}")))?;
        let mut out: sys::c10c_dtype = 0;
        // SAFETY: out and c are valid for the call.
        check(unsafe { sys::c10c_dtype_from_name(&mut out, c.as_ptr()) })?;
        DType::try_from(out)
    }

    /// torch's name without "torch." (`"float32"`); `""` for Undefined.
    pub fn name(self) -> &'static str {
        // SAFETY: static strings or NULL.
        unsafe { static_str(sys::c10c_dtype_name(self.raw())) }
    }

    /// c10's name (`"Float"`, `"Undefined"`).
    pub fn c10_name(self) -> &'static str {
        // SAFETY: static strings.
        unsafe { static_str(sys::c10c_dtype_c10_name(self.raw())) }
    }

    /// Bytes per element (0 for Undefined).
    pub fn itemsize(self) -> usize {
        // SAFETY: pure function.
        unsafe { sys::c10c_dtype_itemsize(self.raw()) }
    }

    /// c10's isFloatingType.
    pub fn is_floating_point(self) -> bool {
        // SAFETY: pure function.
        unsafe { sys::c10c_dtype_is_floating_point(self.raw()) }
    }

    /// c10's isComplexType.
    pub fn is_complex(self) -> bool {
        // SAFETY: pure function.
        unsafe { sys::c10c_dtype_is_complex(self.raw()) }
    }

    /// c10's isIntegralType(include_bool).
    pub fn is_integral(self, include_bool: bool) -> bool {
        // SAFETY: pure function.
        unsafe { sys::c10c_dtype_is_integral(self.raw(), include_bool) }
    }

    /// c10's isQIntType.
    pub fn is_quantized(self) -> bool {
        // SAFETY: pure function.
        unsafe { sys::c10c_dtype_is_quantized(self.raw()) }
    }

    /// torch.promote_types(self, other).
    pub fn promote(self, other: DType) -> Result<DType> {
        let mut out: sys::c10c_dtype = 0;
        // SAFETY: out is valid.
        check(unsafe { sys::c10c_promote_types(&mut out, self.raw(), other.raw()) })?;
        DType::try_from(out)
    }

    /// torch.can_cast(self, to).
    pub fn can_cast(self, to: DType) -> bool {
        // SAFETY: pure function.
        unsafe { sys::c10c_dtype_can_cast(self.raw(), to.raw()) }
    }
}

impl From<DType> for sys::c10c_dtype {
    fn from(d: DType) -> sys::c10c_dtype {
        d.raw()
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DType::Undefined => f.write_str("undefined"),
            d => f.write_str(d.name()),
        }
    }
}

impl std::str::FromStr for DType {
    type Err = Error;
    fn from_str(s: &str) -> Result<DType> {
        DType::from_name(s)
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that is the element of a dtype, for typed data access
/// ([`Tensor::as_slice`](crate::Tensor::as_slice), [`Tensor::from_slice`](crate::Tensor::from_slice), ...).
///
/// Implemented for the integer and float types, every bit pattern of which is a valid value (so
/// reading any tensor's bytes as them is sound). `bool` is not one: read a bool tensor as `u8`
/// through `view_dtype(DType::UInt8)`. Sealed.
pub trait Element: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The dtype whose elements are `Self`.
    const DTYPE: DType;
    /// `self` as an f64 (for printing and comparisons in tests).
    fn to_f64(self) -> f64;
    /// The element nearest to `v` (`as` conversion).
    fn from_f64(v: f64) -> Self;
}

macro_rules! element {
    ($($t:ty => $d:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            fn to_f64(self) -> f64 { self as f64 }
            fn from_f64(v: f64) -> Self { v as $t }
        }
    )*};
}

element!(u8 => UInt8, i8 => Int8, i16 => Int16, i32 => Int32, i64 => Int64, f32 => Float32,
         f64 => Float64, u16 => UInt16, u32 => UInt32, u64 => UInt64);
