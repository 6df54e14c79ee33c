//! DLPack 1.x exchange (`DLManagedTensorVersioned`): export a tensor, import a producer's.

use crate::error::{check, Result};
use crate::sys;
use crate::tensor::Tensor;
use std::ptr::NonNull;
use std::sync::Arc;

/// An owned `DLManagedTensorVersioned`: the consumer's side of a DLPack export. `Drop` calls its
/// deleter (exactly once); [`Tensor::from_dlpack`] hands it to libc10c instead, which calls the
/// deleter when the last tensor over the memory goes.
///
/// Exports made by [`Tensor::to_dlpack`] are wrapped by this binding (a struct of its own whose
/// deleter calls libc10c's, then runs the callbacks of [`on_delete`](DLPackTensor::on_delete)),
/// and count as a holder of the tensor for the binding's exclusivity checks until the deleter
/// runs.
///
/// `Send + Sync`: DLPack 1.x deleters may be called from any thread, and `&self` only reads.
pub struct DLPackTensor {
    ptr: NonNull<sys::DLManagedTensorVersioned>,
}

// SAFETY: DLPack deleters may run on any thread (dlpack.h); &self methods only read the struct.
unsafe impl Send for DLPackTensor {}
// SAFETY: as above.
unsafe impl Sync for DLPackTensor {}

#[repr(C)]
struct Wrapper {
    managed: sys::DLManagedTensorVersioned, // first: a pointer to it is a pointer to the Wrapper
    inner: *mut sys::DLManagedTensorVersioned,
    guard: Option<Arc<()>>,
    on_delete: Vec<Box<dyn FnOnce() + Send>>,
}

unsafe extern "C" fn wrapper_deleter(p: *mut sys::DLManagedTensorVersioned) {
    if p.is_null() {
        return;
    }
    // SAFETY: p came from Box::into_raw of a Wrapper (wrap below); this deleter runs once.
    let w = unsafe { Box::from_raw(p as *mut Wrapper) };
    let Wrapper {
        inner,
        guard,
        on_delete,
        ..
    } = *w;
    // SAFETY: inner is the producer's struct, owned by this wrapper until now.
    unsafe {
        if let Some(d) = (*inner).deleter {
            d(inner);
        }
    }
    drop(guard);
    for f in on_delete {
        // A panic must not unwind into C.
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err() {
            std::process::abort();
        }
    }
}

fn is_wrapper(p: NonNull<sys::DLManagedTensorVersioned>) -> bool {
    // SAFETY: p is a valid struct.
    let d = unsafe { (*p.as_ptr()).deleter };
    d.map(|f| f as usize) == Some(wrapper_deleter as unsafe extern "C" fn(*mut sys::DLManagedTensorVersioned) as usize)
}

/// # Safety
/// `inner` is a valid struct the caller owns; ownership moves into the wrapper.
unsafe fn wrap(
    inner: NonNull<sys::DLManagedTensorVersioned>,
    guard: Option<Arc<()>>,
) -> NonNull<sys::DLManagedTensorVersioned> {
    let mut managed = *inner.as_ptr();
    managed.manager_ctx = inner.as_ptr().cast();
    managed.deleter = Some(wrapper_deleter);
    let w = Box::new(Wrapper {
        managed,
        inner: inner.as_ptr(),
        guard,
        on_delete: Vec::new(),
    });
    NonNull::new(Box::into_raw(w)).unwrap().cast()
}

impl DLPackTensor {
    /// Adopts a producer's struct (its deleter is called on drop, or by libc10c after import).
    ///
    /// # Safety
    /// `ptr` is a non-NULL, valid `DLManagedTensorVersioned` the caller owns, whose deleter may
    /// be called from any thread, and whose memory nobody writes while tensors over it are read.
    pub unsafe fn from_raw(ptr: *mut sys::DLManagedTensorVersioned) -> DLPackTensor {
        DLPackTensor {
            ptr: NonNull::new(ptr).expect("DLManagedTensorVersioned is NULL"),
        }
    }

    /// Gives up ownership: the caller must call the struct's deleter once.
    pub fn into_raw(self) -> *mut sys::DLManagedTensorVersioned {
        let p = self.ptr.as_ptr();
        std::mem::forget(self);
        p
    }

    /// The struct (borrowed).
    pub fn as_raw(&self) -> &sys::DLManagedTensorVersioned {
        // SAFETY: valid while self lives.
        unsafe { self.ptr.as_ref() }
    }

    /// Runs `f` (on whichever thread) right after the struct's deleter has run.
    pub fn on_delete(mut self, f: impl FnOnce() + Send + 'static) -> DLPackTensor {
        if !is_wrapper(self.ptr) {
            // SAFETY: self owns the struct; ownership moves into the wrapper.
            self.ptr = unsafe { wrap(self.ptr, None) };
        }
        // SAFETY: a Wrapper (checked or made above), owned by self.
        unsafe { (*(self.ptr.as_ptr() as *mut Wrapper)).on_delete.push(Box::new(f)) };
        self
    }

    /// The DLPack version of the struct (major, minor).
    pub fn version(&self) -> (u32, u32) {
        let v = self.as_raw().version;
        (v.major, v.minor)
    }

    /// The flags (`C10C_DLPACK_FLAG_BITMASK_*`).
    pub fn flags(&self) -> u64 {
        self.as_raw().flags
    }

    /// Whether the READ_ONLY flag is set.
    pub fn is_read_only(&self) -> bool {
        self.flags() & sys::C10C_DLPACK_FLAG_BITMASK_READ_ONLY as u64 != 0
    }

    /// The data pointer (NULL for a tensor without elements); the first element is at
    /// `data + byte_offset`.
    pub fn data_ptr(&self) -> *mut std::ffi::c_void {
        self.as_raw().dl_tensor.data
    }

    /// The byte offset of the first element from `data_ptr()`.
    pub fn byte_offset(&self) -> u64 {
        self.as_raw().dl_tensor.byte_offset
    }

    /// The shape.
    pub fn shape(&self) -> &[i64] {
        let t = &self.as_raw().dl_tensor;
        let n = t.ndim.max(0) as usize;
        if n == 0 || t.shape.is_null() {
            &[]
        } else {
            // SAFETY: ndim entries, valid until the deleter runs (not while self lives).
            unsafe { std::slice::from_raw_parts(t.shape, n) }
        }
    }

    /// The strides in elements (`None`: compact row-major).
    pub fn strides(&self) -> Option<&[i64]> {
        let t = &self.as_raw().dl_tensor;
        let n = t.ndim.max(0) as usize;
        if t.strides.is_null() {
            None
        } else {
            // SAFETY: as shape().
            Some(unsafe { std::slice::from_raw_parts(t.strides, n) })
        }
    }

    /// The DLPack dtype (code, bits, lanes).
    pub fn dtype(&self) -> sys::DLDataType {
        self.as_raw().dl_tensor.dtype
    }

    /// The DLPack device (type, id).
    pub fn device(&self) -> sys::DLDevice {
        self.as_raw().dl_tensor.device
    }
}

impl Drop for DLPackTensor {
    fn drop(&mut self) {
        // SAFETY: we own the struct; its deleter frees it (once).
        unsafe {
            if let Some(d) = (*self.ptr.as_ptr()).deleter {
                d(self.ptr.as_ptr());
            }
        }
    }
}

impl std::fmt::Debug for DLPackTensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DLPackTensor")
            .field("version", &self.version())
            .field("shape", &self.shape())
            .field("strides", &self.strides())
            .field("dtype", &self.dtype())
            .field("device", &self.device())
            .field("flags", &self.flags())
            .finish()
    }
}

impl Tensor {
    /// Exports the tensor as DLPack 1.x, sharing its memory (`c10c_tensor_to_dlpack_versioned`).
    /// The export holds a reference to the tensor until its deleter runs; meanwhile the tensor
    /// cannot be written through the safe API.
    pub fn to_dlpack(&self) -> Result<DLPackTensor> {
        let mut out = std::ptr::null_mut();
        // SAFETY: valid handle and out.
        check(unsafe { sys::c10c_tensor_to_dlpack_versioned(&mut out, self.as_ptr()) })?;
        let inner = NonNull::new(out).expect("to_dlpack gave NULL");
        // SAFETY: a new struct we own.
        let ptr = unsafe { wrap(inner, Some(self.token_clone())) };
        Ok(DLPackTensor { ptr })
    }

    /// A tensor over a DLPack producer's memory (`c10c_tensor_from_dlpack_versioned`). On
    /// success libc10c owns `src` and calls its deleter when the last tensor, view or storage
    /// over the memory goes; on failure `src` is dropped here (its deleter runs) and the
    /// library's error is returned. The imported memory is external: written only through
    /// `data_ptr()` (it may be aliased by the producer).
    pub fn from_dlpack(src: DLPackTensor) -> Result<Tensor> {
        let mut out = std::ptr::null_mut();
        // SAFETY: src is a valid struct we own; out valid.
        check(unsafe { sys::c10c_tensor_from_dlpack_versioned(&mut out, src.ptr.as_ptr()) })?;
        std::mem::forget(src); // now libc10c's
                               // SAFETY: a new reference on success.
        Ok(unsafe { Tensor::from_raw(out) })
    }
}
