//! Rust binding of **libc10c**: PyTorch's c10 core (tensors, storages, dtypes, devices, views,
//! DLPack, allocators) behind a stable C ABI.
//!
//! * [`sys`]: the generated low-level declarations of the whole C API (all of abi/api.json).
//! * [`Tensor`], [`Storage`]: refcounted handles (`Clone` = retain, `Drop` = release) with
//!   metadata, every view of the C API, data access and DLPack in and out ([`DLPackTensor`]).
//! * [`DType`], [`Device`], [`DeviceType`], [`MemoryFormat`]: the library's enums.
//! * [`Error`]: every failure carries the library's [`Status`] and its message, word for word.
//!
//! ```
//! use c10c::{DType, Device, Tensor};
//! let t = Tensor::from_slice(&[0f32, 1., 2., 3., 4., 5.], &[2, 3])?;
//! let v = t.transpose(0, 1)?;
//! assert_eq!(v.sizes(), &[3, 2]);
//! assert_eq!(v.to_vec::<f32>()?, vec![0., 3., 1., 4., 2., 5.]);
//! let e = t.view(&[5, 5]).unwrap_err();
//! assert_eq!(e.status.c_name(), "C10C_STATUS_ERROR");
//! assert_eq!(e.message, "shape '[5, 5]' is invalid for input of size 6");
//! # let _ = (DType::Float32, Device::CPU);
//! # Ok::<(), c10c::Error>(())
//! ```
//!
//! Thread-safety: see [`Tensor`] (Send + Sync; writes need `&mut self` and an exclusive
//! tensor) and [`Storage`].

#![warn(missing_docs)]

#[allow(missing_docs)]
#[rustfmt::skip]
pub mod sys;

mod device;
mod dlpack;
mod dtype;
mod error;
mod storage;
mod tensor;

pub use device::{Device, DeviceType, MemoryFormat};
pub use dlpack::DLPackTensor;
pub use dtype::{DType, Element};
pub use error::{check, Error, Result, Status};
pub use storage::{Allocator, MemoryStats, Storage, WeakStorage};
pub use tensor::{InferenceMode, Tensor};

/// The release version of the loaded library ("1.1.0").
pub fn version() -> &'static str {
    // SAFETY: static string.
    unsafe { error::static_str(sys::c10c_version_string()) }
}

/// Checks that the loaded library serves this binding's ABI (`c10c_abi_check` with the sizes
/// of the generated declarations): same ABI major, a minor at least this binding's.
pub fn abi_check() -> Result<()> {
    use std::mem::size_of;
    let info = sys::c10c_abi_info {
        struct_size: size_of::<sys::c10c_abi_info>() as u32,
        abi_version: sys::C10C_ABI_VERSION_VALUE as u32,
        sizeof_device: size_of::<sys::c10c_device>() as u32,
        sizeof_stream: size_of::<sys::c10c_stream>() as u32,
        sizeof_stream_data3: size_of::<sys::c10c_stream_data3>() as u32,
        sizeof_dispatch_key_set: size_of::<sys::c10c_dispatch_key_set>() as u32,
        sizeof_data_ptr: size_of::<sys::c10c_data_ptr>() as u32,
    };
    // SAFETY: info is valid.
    check(unsafe { sys::c10c_abi_check(&info) })
}

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
