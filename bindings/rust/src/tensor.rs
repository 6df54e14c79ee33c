//! Tensors (`c10c_tensor`, c10's TensorImpl): a refcounted view of a storage with sizes, strides,
//! a storage offset, a dtype and a device.

use crate::device::{Device, DeviceType, MemoryFormat};
use crate::dtype::{DType, Element};
use crate::error::{check, Error, Result, Status};
use crate::storage::Storage;
use crate::sys;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::Arc;

/// A reference to a libc10c tensor.
///
/// `Clone` adds a reference to the *same* tensor (`c10c_tensor_retain`; use
/// [`deep_clone`](Tensor::deep_clone) for a copy of the data), `Drop` drops one
/// (`c10c_tensor_release`).
///
/// # Thread-safety and data access
///
/// `Tensor` is `Send` and `Sync`:
///
/// * The library's refcounts are atomic: a tensor may be dropped (released) on any thread.
/// * A tensor's geometry (sizes, strides, offset, dtype, device) never changes after it is made:
///   the C API has no in-place geometry change, so every `&self` method (metadata, views,
///   `to_dlpack`, reading the data) is a read, which tensor.h allows from many threads at once.
/// * Everything that writes (`fill`, `zero`, `copy_from`, `as_mut_slice`, which also counts the
///   write in the version counter) takes `&mut self` and first checks that nothing else can
///   reach the bytes: this `Tensor` is the only Rust handle of its `c10c_tensor` (clones and
///   DLPack exports share a counter the binding keeps beside the pointer, since the C API has no
///   tensor use count), its storage has exactly one strong reference (this tensor's: no view, no
///   [`Storage`]) and no weak one, and the storage's memory came from an allocator (external
///   memory, such as a DLPack import, may be aliased by its producer). Otherwise the call fails
///   with `Status::Error` and nothing is written. So no other thread can read the bytes while
///   they are written, and [`as_slice`](Tensor::as_slice) can hand out a `&[T]`.
///
/// Raw pointers ([`data_ptr`](Tensor::data_ptr), [`as_ptr`](Tensor::as_ptr)) leave that model:
/// what is done through them is the caller's (unsafe) business.
pub struct Tensor {
    ptr: NonNull<sys::c10c_tensor>,
    /// Shared by every Rust value holding a reference to this c10c_tensor (clones, DLPack
    /// exports): `Arc::get_mut` succeeds only on the sole holder.
    token: Arc<()>,
}

// SAFETY: see the type's documentation: atomic refcounts; geometry immutable; writes need &mut
// self and a reference nobody else shares.
unsafe impl Send for Tensor {}
// SAFETY: as above.
unsafe impl Sync for Tensor {}

fn new_out() -> *mut sys::c10c_tensor {
    std::ptr::null_mut()
}

fn len_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Tensor {
    // ---- construction ----

    /// Adopts a reference.
    ///
    /// # Safety
    /// `ptr` is a non-NULL `c10c_tensor` reference the caller owns (released on drop), and no
    /// code outside this binding writes to its data while the returned value lives (the
    /// binding's exclusivity checks see only Rust handles, views and storage references).
    pub unsafe fn from_raw(ptr: *mut sys::c10c_tensor) -> Tensor {
        Tensor {
            ptr: NonNull::new(ptr).expect("c10c_tensor reference is NULL"),
            token: Arc::new(()),
        }
    }

    /// A result of an operation on `self`: the same c10c_tensor (`contiguous` and `flatten` may
    /// return the tensor itself) shares `self`'s token.
    fn derived(&self, out: *mut sys::c10c_tensor) -> Tensor {
        let ptr = NonNull::new(out).expect("c10c returned OK and a NULL tensor");
        if ptr == self.ptr {
            Tensor {
                ptr,
                token: self.token.clone(),
            }
        } else {
            Tensor {
                ptr,
                token: Arc::new(()),
            }
        }
    }

    /// Another share of the token (for DLPack exports, which hold a reference to the tensor).
    pub(crate) fn token_clone(&self) -> Arc<()> {
        self.token.clone()
    }

    fn made(out: *mut sys::c10c_tensor) -> Tensor {
        Tensor {
            ptr: NonNull::new(out).expect("c10c returned OK and a NULL tensor"),
            token: Arc::new(()),
        }
    }

    /// The tensor pointer (borrowed: valid while `self` lives). Writing through it bypasses the
    /// binding's checks.
    pub fn as_ptr(&self) -> *mut sys::c10c_tensor {
        self.ptr.as_ptr()
    }

    /// Gives up the reference without releasing it (release it with `c10c_tensor_release`).
    pub fn into_raw(self) -> *mut sys::c10c_tensor {
        let p = self.ptr.as_ptr();
        std::mem::forget(self);
        p
    }

    /// A tensor of `sizes` with uninitialized (arbitrary) contents, row-major (`c10c_tensor_empty`).
    pub fn empty(sizes: &[i64], dtype: DType, device: Device) -> Result<Tensor> {
        Tensor::empty_with_format(sizes, dtype, device, MemoryFormat::Contiguous)
    }

    /// As [`empty`](Tensor::empty), laid out as `format` says (ChannelsLast needs 4 dims).
    pub fn empty_with_format(sizes: &[i64], dtype: DType, device: Device, format: MemoryFormat) -> Result<Tensor> {
        let mut out = new_out();
        // SAFETY: sizes valid for len; out valid.
        check(unsafe {
            sys::c10c_tensor_empty(
                &mut out,
                sizes.as_ptr(),
                sizes.len(),
                dtype.raw(),
                device.raw(),
                format.raw(),
            )
        })?;
        Ok(Tensor::made(out))
    }

    /// A tensor with the given sizes and strides over a new storage just large enough
    /// (`c10c_tensor_empty_strided`). `sizes` and `strides` must have the same length.
    pub fn empty_strided(sizes: &[i64], strides: &[i64], dtype: DType, device: Device) -> Result<Tensor> {
        if sizes.len() != strides.len() {
            return Err(Error::new(
                Status::InvalidArgument,
                "mismatch in length of strides and shape",
            ));
        }
        let mut out = new_out();
        // SAFETY: arrays valid for len; out valid.
        check(unsafe {
            sys::c10c_tensor_empty_strided(
                &mut out,
                sizes.as_ptr(),
                strides.as_ptr(),
                sizes.len(),
                dtype.raw(),
                device.raw(),
            )
        })?;
        Ok(Tensor::made(out))
    }

    /// torch.zeros (`c10c_tensor_full` with zero bytes).
    pub fn zeros(sizes: &[i64], dtype: DType, device: Device) -> Result<Tensor> {
        let mut out = new_out();
        // SAFETY: NULL value means zero bytes.
        check(unsafe {
            sys::c10c_tensor_full(
                &mut out,
                sizes.as_ptr(),
                sizes.len(),
                dtype.raw(),
                device.raw(),
                MemoryFormat::Contiguous.raw(),
                std::ptr::null(),
            )
        })?;
        Ok(Tensor::made(out))
    }

    /// torch.full: every element `value`, dtype `T::DTYPE`.
    pub fn full<T: Element>(sizes: &[i64], value: T, device: Device) -> Result<Tensor> {
        let mut out = new_out();
        // SAFETY: value points to one element of the dtype.
        check(unsafe {
            sys::c10c_tensor_full(
                &mut out,
                sizes.as_ptr(),
                sizes.len(),
                T::DTYPE.raw(),
                device.raw(),
                MemoryFormat::Contiguous.raw(),
                (&value as *const T).cast(),
            )
        })?;
        Ok(Tensor::made(out))
    }

    /// A CPU tensor of `sizes` holding a copy of `data` (row-major). `data.len()` must equal the
    /// product of `sizes` (`Status::InvalidArgument`). Its version counter is 0.
    pub fn from_slice<T: Element>(data: &[T], sizes: &[i64]) -> Result<Tensor> {
        let t = Tensor::empty(sizes, T::DTYPE, Device::CPU)?;
        let n = t.numel();
        if n != len_i64(data.len()) {
            return Err(Error::new(
                Status::InvalidArgument,
                format!(
                    "from_slice: {} elements do not fill sizes {:?} ({} elements)",
                    data.len(),
                    sizes,
                    n
                ),
            ));
        }
        if n > 0 {
            let p = t.raw_data()? as *mut T;
            // SAFETY: a new, contiguous CPU tensor of n elements of T that nobody else references.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
        }
        Ok(t)
    }

    /// A tensor over `storage` (which it retains) at `storage_offset` elements, checked against
    /// the storage's size (`c10c_tensor_new_from_storage`).
    pub fn from_storage(
        storage: &Storage,
        sizes: &[i64],
        strides: &[i64],
        storage_offset: i64,
        dtype: DType,
    ) -> Result<Tensor> {
        if sizes.len() != strides.len() {
            return Err(Error::new(
                Status::InvalidArgument,
                "mismatch in length of strides and shape",
            ));
        }
        let mut out = new_out();
        // SAFETY: valid storage and arrays.
        check(unsafe {
            sys::c10c_tensor_new_from_storage(
                &mut out,
                storage.as_ptr(),
                sizes.as_ptr(),
                strides.as_ptr(),
                sizes.len(),
                storage_offset,
                dtype.raw(),
            )
        })?;
        Ok(Tensor::made(out))
    }

    /// torch.empty_like(self, dtype, device, memory_format) (`None`: self's dtype / device).
    pub fn empty_like(&self, dtype: Option<DType>, device: Option<Device>, format: MemoryFormat) -> Result<Tensor> {
        let mut out = new_out();
        let (d, v) = (dtype.unwrap_or(self.dtype()), device.unwrap_or(self.device()));
        // SAFETY: valid handle and out.
        check(unsafe { sys::c10c_tensor_empty_like(&mut out, self.ptr.as_ptr(), d.raw(), v.raw(), format.raw()) })?;
        Ok(Tensor::made(out))
    }

    /// torch.zeros_like(self) (self's dtype and device, its layout preserved).
    pub fn zeros_like(&self) -> Result<Tensor> {
        let mut out = new_out();
        // SAFETY: NULL value: zero bytes.
        check(unsafe {
            sys::c10c_tensor_full_like(
                &mut out,
                self.ptr.as_ptr(),
                self.dtype().raw(),
                self.device().raw(),
                MemoryFormat::Preserve.raw(),
                std::ptr::null(),
            )
        })?;
        Ok(Tensor::made(out))
    }

    /// torch.full_like(self, value) with dtype `T::DTYPE` on self's device, its layout preserved.
    pub fn full_like<T: Element>(&self, value: T) -> Result<Tensor> {
        let mut out = new_out();
        // SAFETY: value points to one element of T::DTYPE.
        check(unsafe {
            sys::c10c_tensor_full_like(
                &mut out,
                self.ptr.as_ptr(),
                T::DTYPE.raw(),
                self.device().raw(),
                MemoryFormat::Preserve.raw(),
                (&value as *const T).cast(),
            )
        })?;
        Ok(Tensor::made(out))
    }

    /// torch.Tensor.clone(memory_format): a new tensor with a copy of the data.
    pub fn deep_clone(&self, format: MemoryFormat) -> Result<Tensor> {
        let mut out = new_out();
        // SAFETY: valid handle and out.
        check(unsafe { sys::c10c_tensor_clone(&mut out, self.ptr.as_ptr(), format.raw()) })?;
        Ok(Tensor::made(out))
    }

    /// torch.Tensor.contiguous(): the tensor itself when already row-major contiguous, else a
    /// contiguous copy.
    pub fn contiguous(&self) -> Result<Tensor> {
        self.contiguous_as(MemoryFormat::Contiguous)
    }

    /// torch.Tensor.contiguous(memory_format).
    pub fn contiguous_as(&self, format: MemoryFormat) -> Result<Tensor> {
        let mut out = new_out();
        // SAFETY: valid handle and out.
        check(unsafe { sys::c10c_tensor_contiguous(&mut out, self.ptr.as_ptr(), format.raw()) })?;
        Ok(self.derived(out))
    }

    // ---- metadata ----

    /// Number of dimensions.
    pub fn dim(&self) -> usize {
        // SAFETY: valid handle.
        unsafe { sys::c10c_tensor_dim(self.ptr.as_ptr()) }
    }

    /// Number of elements.
    pub fn numel(&self) -> i64 {
        // SAFETY: valid handle.
        unsafe { sys::c10c_tensor_numel(self.ptr.as_ptr()) }
    }

    /// The sizes, one per dimension.
    pub fn sizes(&self) -> &[i64] {
        // SAFETY: dim() entries, valid until the geometry changes (never, in this API) or the
        // tensor is freed (not while &self is borrowed).
        unsafe { raw_slice(sys::c10c_tensor_sizes(self.ptr.as_ptr()), self.dim()) }
    }

    /// The strides in elements, one per dimension.
    pub fn strides(&self) -> &[i64] {
        // SAFETY: as sizes().
        unsafe { raw_slice(sys::c10c_tensor_strides(self.ptr.as_ptr()), self.dim()) }
    }

    /// The size of dimension `dim` (negative counts from the end), as torch's size(dim).
    pub fn size(&self, dim: i64) -> Result<i64> {
        let mut out = 0;
        // SAFETY: valid handle and out.
        check(unsafe { sys::c10c_tensor_size(&mut out, self.ptr.as_ptr(), dim) })?;
        Ok(out)
    }

    /// The stride of dimension `dim`, as torch's stride(dim).
    pub fn stride(&self, dim: i64) -> Result<i64> {
        let mut out = 0;
        // SAFETY: valid handle and out.
        check(unsafe { sys::c10c_tensor_stride(&mut out, self.ptr.as_ptr(), dim) })?;
        Ok(out)
    }

    /// The storage offset in elements.
    pub fn storage_offset(&self) -> i64 {
        // SAFETY: valid handle.
        unsafe { sys::c10c_tensor_storage_offset(self.ptr.as_ptr()) }
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        // SAFETY: valid handle.
        let d = unsafe { sys::c10c_tensor_dtype(self.ptr.as_ptr()) };
        DType::try_from(d).unwrap_or(DType::Undefined)
    }

    /// The device.
    pub fn device(&self) -> Device {
        // SAFETY: valid handle.
        let d = unsafe { sys::c10c_tensor_device(self.ptr.as_ptr()) };
        Device::try_from(d).unwrap_or(Device::CPU)
    }

    /// Bytes per element.
    pub fn itemsize(&self) -> usize {
        // SAFETY: valid handle.
        unsafe { sys::c10c_tensor_itemsize(self.ptr.as_ptr()) }
    }

    /// numel * itemsize (i64::MAX when that overflows).
    pub fn nbytes(&self) -> i64 {
        // SAFETY: valid handle.
        unsafe { sys::c10c_tensor_nbytes(self.ptr.as_ptr()) }
    }

    /// Whether the tensor is row-major contiguous (c10's is_contiguous()).
    pub fn is_contiguous(&self) -> bool {
        self.is_contiguous_as(MemoryFormat::Contiguous).unwrap_or(false)
    }

    /// c10's is_contiguous(memory_format).
    pub fn is_contiguous_as(&self, format: MemoryFormat) -> Result<bool> {
        let mut out = false;
        // SAFETY: valid handle and out.
        check(unsafe { sys::c10c_tensor_is_contiguous(&mut out, self.ptr.as_ptr(), format.raw()) })?;
        Ok(out)
    }

    /// c10's is_strides_like(format).
    pub fn is_strides_like(&self, format: MemoryFormat) -> bool {
        // SAFETY: valid handle.
        unsafe { sys::c10c_tensor_is_strides_like(self.ptr.as_ptr(), format.raw()) }
    }

    /// c10's is_non_overlapping_and_dense.
    pub fn is_non_overlapping_and_dense(&self) -> bool {
        // SAFETY: valid handle.
        unsafe { sys::c10c_tensor_is_non_overlapping_and_dense(self.ptr.as_ptr()) }
    }

    /// Whether the tensor was made in inference mode.
    pub fn is_inference(&self) -> bool {
        // SAFETY: valid handle.
        unsafe { sys::c10c_tensor_is_inference(self.ptr.as_ptr()) }
    }

    /// Whether its storage is read-only (in-place writes refused).
    pub fn is_read_only(&self) -> bool {
        // SAFETY: valid handle.
        unsafe { sys::c10c_tensor_is_read_only(self.ptr.as_ptr()) }
    }

    /// The version counter shared by the tensors over the storage (inference tensors: an error).
    pub fn version(&self) -> Result<i64> {
        let mut out = 0;
        // SAFETY: valid handle and out.
        check(unsafe { sys::c10c_tensor_version(&mut out, self.ptr.as_ptr()) })?;
        Ok(out)
    }

    /// The raw dispatch key set c10 gives such a tensor (`c10c_dispatch_key_set.repr`).
    pub fn dispatch_keys(&self) -> u64 {
        // SAFETY: valid handle.
        unsafe { sys::c10c_tensor_keys(self.ptr.as_ptr()).repr }
    }

    /// A new reference to the tensor's storage. While it lives the tensor's data cannot be
    /// written through the safe API (the storage is shared).
    pub fn storage(&self) -> Storage {
        // SAFETY: c10c_tensor_storage is borrowed; retain makes it ours.
        unsafe {
            let s = sys::c10c_tensor_storage(self.ptr.as_ptr());
            Storage::from_raw(sys::c10c_storage_retain(s))
        }
    }

    // ---- views ----

    fn view_op(
        &self,
        f: impl FnOnce(*mut *mut sys::c10c_tensor, *const sys::c10c_tensor) -> sys::c10c_status,
    ) -> Result<Tensor> {
        let mut out = new_out();
        check(f(&mut out, self.ptr.as_ptr()))?;
        Ok(self.derived(out))
    }

    /// torch.Tensor.view(shape): one -1 is inferred.
    pub fn view(&self, shape: &[i64]) -> Result<Tensor> {
        // SAFETY: valid handle, array and out.
        self.view_op(|o, t| unsafe { sys::c10c_tensor_view(o, t, shape.as_ptr(), shape.len()) })
    }

    /// torch.Tensor.reshape(shape): a view when possible, else a contiguous copy.
    pub fn reshape(&self, shape: &[i64]) -> Result<Tensor> {
        // SAFETY: as view.
        self.view_op(|o, t| unsafe { sys::c10c_tensor_reshape(o, t, shape.as_ptr(), shape.len()) })
    }

    /// torch.Tensor.as_strided(sizes, strides, storage_offset) (`None` keeps the offset).
    pub fn as_strided(&self, sizes: &[i64], strides: &[i64], storage_offset: Option<i64>) -> Result<Tensor> {
        let off = storage_offset.as_ref().map_or(std::ptr::null(), |o| o as *const i64);
        // SAFETY: arrays valid for their lengths; off NULL or valid.
        self.view_op(|o, t| unsafe {
            sys::c10c_tensor_as_strided(o, t, sizes.as_ptr(), sizes.len(), strides.as_ptr(), strides.len(), off)
        })
    }

    /// torch.Tensor.transpose(dim0, dim1).
    pub fn transpose(&self, dim0: i64, dim1: i64) -> Result<Tensor> {
        // SAFETY: valid handle and out.
        self.view_op(|o, t| unsafe { sys::c10c_tensor_transpose(o, t, dim0, dim1) })
    }

    /// torch.Tensor.permute(dims).
    pub fn permute(&self, dims: &[i64]) -> Result<Tensor> {
        // SAFETY: valid array.
        self.view_op(|o, t| unsafe { sys::c10c_tensor_permute(o, t, dims.as_ptr(), dims.len()) })
    }

    /// aten::slice(dim, start, end, step) (`i64::MAX` as end: to the end).
    pub fn slice(&self, dim: i64, start: i64, end: i64, step: i64) -> Result<Tensor> {
        // SAFETY: valid handle and out.
        self.view_op(|o, t| unsafe { sys::c10c_tensor_slice(o, t, dim, start, end, step) })
    }

    /// torch.Tensor.narrow(dim, start, length).
    pub fn narrow(&self, dim: i64, start: i64, length: i64) -> Result<Tensor> {
        // SAFETY: valid handle and out.
        self.view_op(|o, t| unsafe { sys::c10c_tensor_narrow(o, t, dim, start, length) })
    }

    /// torch.Tensor.select(dim, index).
    pub fn select(&self, dim: i64, index: i64) -> Result<Tensor> {
        // SAFETY: valid handle and out.
        self.view_op(|o, t| unsafe { sys::c10c_tensor_select(o, t, dim, index) })
    }

    /// torch.Tensor.unsqueeze(dim).
    pub fn unsqueeze(&self, dim: i64) -> Result<Tensor> {
        // SAFETY: valid handle and out.
        self.view_op(|o, t| unsafe { sys::c10c_tensor_unsqueeze(o, t, dim) })
    }

    /// torch.Tensor.squeeze(): drops every size-1 dim.
    pub fn squeeze(&self) -> Result<Tensor> {
        // SAFETY: valid handle and out.
        self.view_op(|o, t| unsafe { sys::c10c_tensor_squeeze(o, t) })
    }

    /// torch.Tensor.squeeze(dims): drops the listed dims of size 1.
    pub fn squeeze_dims(&self, dims: &[i64]) -> Result<Tensor> {
        // SAFETY: valid array.
        self.view_op(|o, t| unsafe { sys::c10c_tensor_squeeze_dims(o, t, dims.as_ptr(), dims.len()) })
    }

    /// torch.Tensor.expand(sizes): -1 keeps a size; size-1 dims broadcast with stride 0.
    pub fn expand(&self, sizes: &[i64]) -> Result<Tensor> {
        // SAFETY: valid array.
        self.view_op(|o, t| unsafe { sys::c10c_tensor_expand(o, t, sizes.as_ptr(), sizes.len()) })
    }

    /// torch.Tensor.view(dtype): the same bytes as another dtype.
    pub fn view_dtype(&self, dtype: DType) -> Result<Tensor> {
        // SAFETY: valid handle and out.
        self.view_op(|o, t| unsafe { sys::c10c_tensor_view_dtype(o, t, dtype.raw()) })
    }

    /// torch.Tensor.flatten(start_dim, end_dim).
    pub fn flatten(&self, start_dim: i64, end_dim: i64) -> Result<Tensor> {
        // SAFETY: valid handle and out.
        self.view_op(|o, t| unsafe { sys::c10c_tensor_flatten(o, t, start_dim, end_dim) })
    }

    /// torch.Tensor.unflatten(dim, sizes).
    pub fn unflatten(&self, dim: i64, sizes: &[i64]) -> Result<Tensor> {
        // SAFETY: valid array.
        self.view_op(|o, t| unsafe { sys::c10c_tensor_unflatten(o, t, dim, sizes.as_ptr(), sizes.len()) })
    }

    /// torch.Tensor.movedim(source, destination).
    pub fn movedim(&self, source: &[i64], destination: &[i64]) -> Result<Tensor> {
        // SAFETY: valid arrays.
        self.view_op(|o, t| unsafe {
            sys::c10c_tensor_movedim(
                o,
                t,
                source.as_ptr(),
                source.len(),
                destination.as_ptr(),
                destination.len(),
            )
        })
    }

    /// torch.Tensor.diagonal(offset, dim1, dim2).
    pub fn diagonal(&self, offset: i64, dim1: i64, dim2: i64) -> Result<Tensor> {
        // SAFETY: valid handle and out.
        self.view_op(|o, t| unsafe { sys::c10c_tensor_diagonal(o, t, offset, dim1, dim2) })
    }

    /// torch.Tensor.unfold(dim, size, step).
    pub fn unfold(&self, dim: i64, size: i64, step: i64) -> Result<Tensor> {
        // SAFETY: valid handle and out.
        self.view_op(|o, t| unsafe { sys::c10c_tensor_unfold(o, t, dim, size, step) })
    }

    // ---- data ----

    /// The address of the first element (`c10c_tensor_data`): NULL for meta tensors, storages
    /// without bytes, and (with the library's error) when the storage no longer holds the
    /// elements. Dereferencing it is unsafe and outside the binding's exclusivity checks.
    pub fn data_ptr(&self) -> *mut c_void {
        // SAFETY: valid handle.
        unsafe { sys::c10c_tensor_data(self.ptr.as_ptr()) }
    }

    /// data_ptr(), or the library's error when it is NULL for a tensor with elements.
    fn raw_data(&self) -> Result<*mut c_void> {
        // SAFETY: valid handle; the error is read on this thread right away.
        unsafe { sys::c10c_clear_last_error() };
        let p = self.data_ptr();
        if p.is_null() && self.numel() > 0 {
            // SAFETY: reads this thread's last error.
            let st = unsafe { sys::c10c_last_error_status() };
            return Err(match Status::from_code(st) {
                Some(s) => Error::last(s),
                None => Error::new(Status::Error, format!("the {} tensor has no data", self.device())),
            });
        }
        Ok(p)
    }

    fn check_host_layout<T: Element>(&self, what: &str) -> Result<()> {
        if T::DTYPE != self.dtype() {
            return Err(Error::new(
                Status::TypeError,
                format!("{what}: the tensor's dtype is {}, not {}", self.dtype(), T::DTYPE),
            ));
        }
        let d = self.device();
        if d.kind != DeviceType::Cpu {
            return Err(Error::new(
                Status::Unsupported,
                format!("{what}: the data of a {d} tensor is not host memory"),
            ));
        }
        if !self.is_contiguous() {
            return Err(Error::new(
                Status::Error,
                format!(
                    "{what}: the tensor is not contiguous (sizes {:?}, strides {:?}); call contiguous() first",
                    self.sizes(),
                    self.strides()
                ),
            ));
        }
        Ok(())
    }

    /// The elements of a contiguous CPU tensor of dtype `T::DTYPE`, in row-major order.
    /// Errors: `Status::TypeError` for another dtype, `Status::Unsupported` off the CPU,
    /// `Status::Error` when not contiguous, and the library's error when its storage no longer
    /// holds the elements.
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        self.check_host_layout::<T>("as_slice")?;
        let n = self.numel() as usize;
        if n == 0 {
            return Ok(&[]);
        }
        let p = self.raw_data()?;
        // SAFETY: n contiguous elements of T in host memory (checked above; every bit pattern
        // is a T). Nobody writes them while &self lives: writers need the only reference.
        Ok(unsafe { std::slice::from_raw_parts(p as *const T, n) })
    }

    /// The elements, writable: as [`as_slice`](Tensor::as_slice), and the tensor must be
    /// exclusive (see the type's documentation: `Status::Error` otherwise). Counts one write in
    /// the version counter (`c10c_tensor_bump_version`, which also refuses read-only storages
    /// and inference tensors outside inference mode with the library's messages).
    pub fn as_mut_slice<T: Element>(&mut self) -> Result<&mut [T]> {
        self.check_host_layout::<T>("as_mut_slice")?;
        self.check_exclusive("write to")?;
        // SAFETY: valid handle, exclusive.
        check(unsafe { sys::c10c_tensor_bump_version(self.ptr.as_ptr()) })?;
        let n = self.numel() as usize;
        if n == 0 {
            return Ok(&mut []);
        }
        let p = self.raw_data()?;
        // SAFETY: n contiguous host elements of T, and nothing else reaches them (checked).
        Ok(unsafe { std::slice::from_raw_parts_mut(p as *mut T, n) })
    }

    /// A copy of the elements in row-major order (any layout; CPU only).
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        if T::DTYPE != self.dtype() {
            return Err(Error::new(
                Status::TypeError,
                format!("to_vec: the tensor's dtype is {}, not {}", self.dtype(), T::DTYPE),
            ));
        }
        let c = self.contiguous()?;
        Ok(c.as_slice::<T>()?.to_vec())
    }

    /// Sets every element to `value` (torch's fill_; `T::DTYPE` must be the tensor's dtype,
    /// else `Status::TypeError`). Needs an exclusive tensor.
    pub fn fill<T: Element>(&mut self, value: T) -> Result<()> {
        if T::DTYPE != self.dtype() {
            return Err(Error::new(
                Status::TypeError,
                format!("fill: the tensor's dtype is {}, not {}", self.dtype(), T::DTYPE),
            ));
        }
        self.check_exclusive("write to")?;
        // SAFETY: valid handle, exclusive; value is one element of the dtype.
        check(unsafe { sys::c10c_tensor_fill_(self.ptr.as_ptr(), (&value as *const T).cast()) })
    }

    /// Sets every byte to zero (torch's zero_). Needs an exclusive tensor.
    pub fn zero(&mut self) -> Result<()> {
        self.check_exclusive("write to")?;
        // SAFETY: valid handle, exclusive.
        check(unsafe { sys::c10c_tensor_zero_(self.ptr.as_ptr()) })
    }

    /// torch's copy_(src): src broadcast and converted into self. Needs an exclusive tensor.
    pub fn copy_from(&mut self, src: &Tensor) -> Result<()> {
        self.check_exclusive("write to")?;
        // SAFETY: valid handles; self exclusive, so src cannot share its bytes.
        check(unsafe { sys::c10c_tensor_copy_(self.ptr.as_ptr(), src.ptr.as_ptr()) })
    }

    /// Whether this handle may write the data through the safe API (see the type's
    /// documentation): `Ok(())` or the reason as a `Status::Error`.
    pub fn check_exclusive(&mut self, what: &str) -> Result<()> {
        if Arc::get_mut(&mut self.token).is_none() {
            return Err(Error::new(
                Status::Error,
                format!("cannot {what} this tensor: it is shared (cloned, or exported to DLPack and not yet released); deep_clone() it for a writable copy"),
            ));
        }
        // SAFETY: valid handle; the storage is borrowed for these reads.
        let (uses, weak, external) = unsafe {
            let s = sys::c10c_tensor_storage(self.ptr.as_ptr());
            (
                sys::c10c_storage_use_count(s),
                sys::c10c_storage_weak_use_count(s),
                sys::c10c_storage_allocator(s).is_null(),
            )
        };
        if uses != 1 || weak != 1 {
            return Err(Error::new(
                Status::Error,
                format!("cannot {what} this tensor: its storage is shared with another tensor, view or Storage ({uses} strong references, weak use count {weak}); deep_clone() it for a writable copy"),
            ));
        }
        if external {
            return Err(Error::new(
                Status::Error,
                format!("cannot {what} this tensor through the safe API: its memory is external (a DLPack import or memory handed in) and may be aliased by its producer; use data_ptr()"),
            ));
        }
        Ok(())
    }
}

/// # Safety
/// `p` points to `n` i64 values (or n is 0) that live as long as the returned slice.
unsafe fn raw_slice<'a>(p: *const i64, n: usize) -> &'a [i64] {
    if n == 0 || p.is_null() {
        &[]
    } else {
        std::slice::from_raw_parts(p, n)
    }
}

impl Clone for Tensor {
    /// Another reference to the same tensor (`c10c_tensor_retain`); the data is shared.
    fn clone(&self) -> Tensor {
        // SAFETY: valid handle; retain returns it owned once more.
        let p = unsafe { sys::c10c_tensor_retain(self.ptr.as_ptr()) };
        Tensor {
            ptr: NonNull::new(p).expect("retain gave NULL"),
            token: self.token.clone(),
        }
    }
}

impl Drop for Tensor {
    fn drop(&mut self) {
        // SAFETY: we own one reference.
        unsafe { sys::c10c_tensor_release(self.ptr.as_ptr()) }
    }
}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tensor")
            .field("sizes", &self.sizes())
            .field("strides", &self.strides())
            .field("storage_offset", &self.storage_offset())
            .field("dtype", &self.dtype())
            .field("device", &self.device())
            .finish()
    }
}

/// Inference mode for the calling thread while the guard lives (c10's InferenceMode): tensors
/// made meanwhile have no version counter. Restores the previous setting on drop. Not `Send`:
/// the setting is per thread.
pub struct InferenceMode {
    prev: bool,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl InferenceMode {
    /// Turns inference mode on (`enabled`) or off for this thread.
    pub fn new(enabled: bool) -> InferenceMode {
        // SAFETY: per-thread setting.
        let prev = unsafe { sys::c10c_inference_mode_set(enabled) };
        InferenceMode {
            prev,
            _not_send: std::marker::PhantomData,
        }
    }

    /// Whether inference mode is on for this thread.
    pub fn is_enabled() -> bool {
        // SAFETY: per-thread read.
        unsafe { sys::c10c_inference_mode_enabled() }
    }
}

impl Drop for InferenceMode {
    fn drop(&mut self) {
        // SAFETY: per-thread setting.
        unsafe { sys::c10c_inference_mode_set(self.prev) };
    }
}
