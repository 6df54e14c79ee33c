/* libc10c: tensors, c10's TensorImpl: a refcounted view of a storage with sizes, strides, a storage
 * offset, a dtype, a device and a dispatch key set.
 *
 * Sizes and strides are counted in elements and kept inline up to 5 dimensions (on the heap
 * beyond, with no fixed limit). numel and the contiguity flags are computed once, by c10's rules,
 * whenever the geometry changes. Tensors that share a storage share its version counter, which
 * in-place writes bump; inference tensors (made while inference mode is on) have none.
 *
 * A tensor never touches bytes outside its storage. Its storage may shrink after it was made
 * (c10c_storage_resize, c10c_storage_set_nbytes); every function that reads or writes the data
 * (copies, fills, clone, contiguous copies, conversions, c10c_tensor_data, DLPack export) first
 * checks that the storage still holds every element the tensor reaches, and otherwise fails with
 * C10C_STATUS_ERROR "fill_: the tensor's elements (sizes [100], strides [1], storage offset 0,
 * itemsize 4) reach 400 bytes of its storage, which holds 100 bytes now (resized or set_nbytes
 * after the tensor was made)". This goes beyond torch, whose fill_ after
 * untyped_storage().resize_(0) writes through NULL. All size, stride and offset arithmetic is
 * checked: what would exceed int64 fails (C10C_STATUS_OVERFLOW) where ATen lets it wrap.
 *
 * Meta tensors (device type C10C_DEVICE_TYPE_META, c10's meta device) have sizes, strides, a
 * dtype and a storage with a size but no data: their storages come from the built-in meta
 * allocator, which gives no bytes for any size (a 2^40-byte meta tensor costs its shell only).
 * Everything about their geometry works as for CPU tensors (views, empty, empty_strided,
 * empty_like, clone, contiguous, storage resizes), except that a meta storage bounds nothing (any
 * geometry may lie over it, as torch's set_ and as_strided allow) and that, as CPU tensors, they
 * carry no device index (a tensor made for "meta:1" is on "meta"); writes into them check what
 * torch's meta kernels check and write nothing (copy_ checks the shapes; fill_, zero_, full,
 * full_like check the in-place refusals); reading their data is refused: copy_ from a meta tensor
 * into a tensor on another device fails with C10C_STATUS_NOT_IMPLEMENTED "Cannot copy out of meta
 * tensor; no data!" (torch's NotImplementedError), DLPack export with C10C_STATUS_UNSUPPORTED
 * "Cannot pack tensors on meta", and c10c_tensor_data gives NULL.
 *
 * Thread-safety: retain/release from any thread; reading one tensor's metadata from many threads
 * is fine; changing it while another thread reads or changes it is the caller's race, as in c10.
 */
#ifndef C10C_TENSOR_H
#define C10C_TENSOR_H

#include "allocator.h"
#include "common.h"
#include "device.h"
#include "dispatch_key.h"
#include "dtype.h"
#include "layout.h"
#include "storage.h"

C10C_BEGIN_DECLS

typedef struct c10c_tensor c10c_tensor;

/* ---- inference mode (c10's InferenceMode, per thread) ---- */

/* Turns inference mode on or off for the calling thread and returns the previous setting.
 * Tensors made while it is on are inference tensors: no autograd keys, no version counter.
 * Errors: none. */
C10C_API bool c10c_inference_mode_set(bool enabled);

/* Whether inference mode is on for the calling thread. Errors: none. */
C10C_API bool c10c_inference_mode_enabled(void);

/* ---- creation ---- */

/* A new tensor of the given sizes with uninitialized bytes from the device's installed allocator,
 * laid out as memory_format says: CONTIGUOUS (row-major), CHANNELS_LAST (4 dims) or
 * CHANNELS_LAST_3D (5 dims), as at::empty. A CPU device's index is dropped (torch's
 * empty(device="cpu:0").device is cpu); a CUDA tensor with index -1 goes on the current device.
 * Ownership: *out is a new reference (NULL on failure).
 * Errors: C10C_STATUS_NULL_POINTER (out; sizes with ndim > 0); C10C_STATUS_INVALID_ARGUMENT for an
 * invalid dtype (Undefined included: "invalid dtype 46"), device ("Unknown device type 40",
 * "Device index must be -1 or non-negative, got -2") or memory format ("Unknown memory format
 * 9"); C10C_STATUS_ERROR "Trying to create tensor with negative dimension -1: [-1]";
 * C10C_STATUS_OVERFLOW "Storage size calculation overflowed with sizes=[1099511627776,
 * 1099511627776]" for a byte size beyond int64 (also when a later size is 0: [2^62, 2^62, 0]) and
 * "Stride calculation overflowed" for strides beyond int64 (sizes such as [0, 2^40, 2^40]), as
 * torch; C10C_STATUS_ERROR "required rank 4 tensor to use channels_last format" ("required rank 5
 * tensor to use channels_last_3d format"), "unsupported memory format Preserve";
 * C10C_STATUS_UNAVAILABLE "Allocator for XLA is not set." (no allocator for the device type) and
 * for CUDA when CUDA is unavailable; C10C_STATUS_ERROR "CUDA error: invalid device ordinal" for a
 * CUDA index past the devices; C10C_STATUS_ERROR for a Caffe2 device type (MKLDNN, OPENGL,
 * OPENCL, IDEEP) whose allocator a host installed (c10 gives them no dispatch key);
 * C10C_STATUS_OUT_OF_MEMORY; and the allocator's other failures (c10c_allocator_allocate). */
C10C_API c10c_status c10c_tensor_empty(c10c_tensor **out, const int64_t *sizes, size_t ndim,
                                       c10c_dtype dtype, c10c_device device,
                                       c10c_memory_format memory_format);

/* A new tensor with the given sizes and strides over a new storage just large enough for them
 * (at::empty_strided). Ownership: *out is a new reference (NULL on failure).
 * Errors: C10C_STATUS_NULL_POINTER (out; sizes and strides with ndim > 0);
 * C10C_STATUS_INVALID_ARGUMENT for an invalid dtype or device; C10C_STATUS_ERROR "Trying to
 * create tensor with negative dimension -5: [-5, 0]"; C10C_STATUS_OVERFLOW "Storage size
 * calculation overflowed with sizes=[2, 3] and strides=[1, -1]" for a negative stride or a byte
 * size beyond int64, and "numel: integer multiplication overflow" for sizes whose product
 * overflows before a 0 ([2^62, 2^62, 0]), both as torch; and as c10c_tensor_empty the device's
 * failures (C10C_STATUS_UNAVAILABLE, "CUDA error: invalid device ordinal",
 * C10C_STATUS_OUT_OF_MEMORY, the allocator's). */
C10C_API c10c_status c10c_tensor_empty_strided(c10c_tensor **out, const int64_t *sizes,
                                               const int64_t *strides, size_t ndim,
                                               c10c_dtype dtype, c10c_device device);

/* A tensor over an existing storage (which it retains) at storage_offset elements, on the
 * storage's device, checked against the storage's size as ATen's setStorage (as_strided; torch's
 * set_ grows the storage instead): "setStorage: sizes [2, 2], strides [1, 2], storage offset 23,
 * and itemsize 4 requiring a storage size of 108 are out of bounds for storage of size 96".
 * Zero-element tensors may sit at any non-negative offset, and any geometry over a meta storage
 * (no bytes to stay inside; as torch).
 * Ownership: *out is a new reference (NULL on failure); the caller keeps its storage reference.
 * Errors: C10C_STATUS_NULL_POINTER (out, storage; sizes and strides with ndim > 0);
 * C10C_STATUS_INVALID_ARGUMENT for an invalid dtype; C10C_STATUS_ERROR "Tensor: invalid storage
 * offset -1"; C10C_STATUS_ERROR "Trying to create tensor with negative dimension -1: [-1]" (torch's
 * set_: "numel: integer multiplication overflow"); C10C_STATUS_OVERFLOW "Storage size
 * calculation overflowed with sizes=[2, 2] and strides=[1, -2]" for a negative stride or an
 * extent beyond int64 (as torch's set_) and "numel: integer multiplication overflow";
 * C10C_STATUS_ERROR the out-of-bounds message above; C10C_STATUS_ERROR for a storage on a Caffe2
 * device type (MKLDNN, OPENGL, OPENCL, IDEEP), which c10 gives no dispatch key;
 * C10C_STATUS_OUT_OF_MEMORY. */
C10C_API c10c_status c10c_tensor_new_from_storage(c10c_tensor **out, c10c_storage *storage,
                                                  const int64_t *sizes, const int64_t *strides,
                                                  size_t ndim, int64_t storage_offset,
                                                  c10c_dtype dtype);

/* Adds a reference (NULL-safe). Ownership: returns tensor, owned once more. Errors: none. */
C10C_API c10c_tensor *c10c_tensor_retain(c10c_tensor *tensor);

/* Drops a reference (NULL-safe); the last one releases the storage reference. Errors: none. */
C10C_API void c10c_tensor_release(c10c_tensor *tensor);

/* ---- metadata ----
 * O(1) getters. Errors: none; each is NULL-safe and says below what it returns for NULL. */

/* The number of dimensions and of elements (0 for NULL). */
C10C_API size_t c10c_tensor_dim(const c10c_tensor *tensor);
C10C_API int64_t c10c_tensor_numel(const c10c_tensor *tensor);

/* The sizes and strides arrays (dim() entries each; NULL for NULL). Ownership: borrowed, valid
 * until the tensor's geometry changes or it is freed. */
C10C_API const int64_t *c10c_tensor_sizes(const c10c_tensor *tensor);
C10C_API const int64_t *c10c_tensor_strides(const c10c_tensor *tensor);

/* Size and stride of dimension dim, wrapped as c10's maybe_wrap_dim (-1 is the last) without
 * wrap_scalar: a 0-dim tensor has no dimension to name, as torch's size(0) and stride(-1).
 * Errors: C10C_STATUS_NULL_POINTER (out, tensor); C10C_STATUS_INDEX_OUT_OF_RANGE "Dimension out
 * of range (expected to be in range of [-3, 2], but got 3)", and "Dimension specified as 0 but
 * tensor has no dimensions" for any dim of a 0-dim tensor; *out is left alone then. */
C10C_API c10c_status c10c_tensor_size(int64_t *out, const c10c_tensor *tensor, int64_t dim);
C10C_API c10c_status c10c_tensor_stride(int64_t *out, const c10c_tensor *tensor, int64_t dim);

/* The storage offset in elements (0 for NULL). */
C10C_API int64_t c10c_tensor_storage_offset(const c10c_tensor *tensor);

/* The dtype (C10C_DTYPE_UNDEFINED for NULL). */
C10C_API c10c_dtype c10c_tensor_dtype(const c10c_tensor *tensor);

/* The device ({CPU, -1} for NULL). */
C10C_API c10c_device c10c_tensor_device(const c10c_tensor *tensor);

/* The dtype's size in bytes (0 for NULL). */
C10C_API size_t c10c_tensor_itemsize(const c10c_tensor *tensor);

/* numel * itemsize; INT64_MAX when that exceeds int64 (an expanded tensor: torch's nbytes
 * wraps); 0 for NULL. */
C10C_API int64_t c10c_tensor_nbytes(const c10c_tensor *tensor);

/* The storage (NULL for NULL). Ownership: borrowed. */
C10C_API c10c_storage *c10c_tensor_storage(const c10c_tensor *tensor);

/* storage data + storage_offset * itemsize. NULL for NULL, for a meta tensor (sizes, strides
 * and a dtype, no data: torch's data_ptr() gives storage_offset * itemsize there), for a storage
 * without bytes, and for a tensor without elements whose offset lies past its storage's end
 * (torch gives that address anyway). NULL also when the storage no longer holds the tensor's
 * elements (see the top of this file), and then the thread's last error says so
 * (C10C_STATUS_ERROR "data: the tensor's elements ..."): for a tensor with elements on a device
 * other than meta NULL always means that. Ownership: borrowed. */
C10C_API void *c10c_tensor_data(const c10c_tensor *tensor);

/* The dispatch key set c10 gives such a tensor (the empty set for NULL). */
C10C_API c10c_dispatch_key_set c10c_tensor_keys(const c10c_tensor *tensor);

/* c10's is_contiguous(memory_format): CONTIGUOUS and PRESERVE ask for row-major contiguity,
 * CHANNELS_LAST(_3D) for channels-last contiguity. Errors: C10C_STATUS_NULL_POINTER (out,
 * tensor); C10C_STATUS_INVALID_ARGUMENT "Unknown memory format 9". */
C10C_API c10c_status c10c_tensor_is_contiguous(bool *out, const c10c_tensor *tensor,
                                               c10c_memory_format memory_format);

/* c10's is_strides_like(format): channels-last strides (true even when not contiguous);
 * false for other formats, invalid ones included, and for NULL. Errors: none. */
C10C_API bool c10c_tensor_is_strides_like(const c10c_tensor *tensor,
                                          c10c_memory_format memory_format);

/* c10's is_non_overlapping_and_dense (false for NULL). Errors: none. */
C10C_API bool c10c_tensor_is_non_overlapping_and_dense(const c10c_tensor *tensor);

/* Whether the tensor was made in inference mode (no version counter; false for NULL).
 * Errors: none. */
C10C_API bool c10c_tensor_is_inference(const c10c_tensor *tensor);

/* The version counter shared by tensors over the same storage. Errors: C10C_STATUS_NULL_POINTER
 * (out, tensor); C10C_STATUS_ERROR "Inference tensors do not track version counter." */
C10C_API c10c_status c10c_tensor_version(int64_t *out, const c10c_tensor *tensor);

/* Whether the tensor's storage is read-only (c10c_storage_set_read_only; false for NULL).
 * Errors: none. */
C10C_API bool c10c_tensor_is_read_only(const c10c_tensor *tensor);

/* Counts an in-place write, as ATen's in-place ops do: call it after writing through
 * c10c_tensor_data(). Every tensor over the same storage sees the new version. An inference
 * tensor has no counter: a no-op inside inference mode, outside it C10C_STATUS_ERROR
 * "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone
 * to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17
 * for more details." (sic, c10's message).
 * Errors: C10C_STATUS_NULL_POINTER; the inference error above; C10C_STATUS_ERROR "cannot write to
 * a read-only tensor: its memory was shared read-only (a read-only numpy array or DLPack
 * export); clone() it to get a writable copy" over a read-only storage (checked first; beyond
 * torch, which warns when it wraps such memory and then writes). Every in-place write (copy_,
 * fill_, zero_) refuses the same two ways. */
C10C_API c10c_status c10c_tensor_bump_version(c10c_tensor *tensor);

/* ---- views: new tensors sharing the storage and its version counter ----
 * Each makes *out a new reference (NULL on failure); dims are wrapped as ATen's maybe_wrap_dim (a
 * 0-dim tensor accepts 0 and -1), with IndexError-class errors C10C_STATUS_INDEX_OUT_OF_RANGE
 * "Dimension out of range (expected to be in range of [-2, 1], but got 2)". The errors each lists
 * are ATen's, with its words and its class: C10C_STATUS_ERROR (RuntimeError) unless marked an index
 * error (IndexError, C10C_STATUS_INDEX_OUT_OF_RANGE). Beside them: C10C_STATUS_NULL_POINTER for
 * out, tensor, and an array argument that is NULL with a non-zero length;
 * C10C_STATUS_OUT_OF_MEMORY; C10C_STATUS_OVERFLOW where a new stride or offset would exceed int64
 * ("unsqueeze: the new dim's stride, size * stride (4611686018427387904 and
 * 4611686018427387904) overflows int64": only a tensor without elements, whose sizes and strides
 * may be anything, or over an external storage of more than 2^62 bytes gets there; ATen lets the
 * value wrap). Views are metadata: they are made over a storage that shrank under their base as
 * over any other, and refuse data access as their base does. */

/* torch.Tensor.view(shape): one -1 is inferred. Errors: "only one dimension can be inferred",
 * "invalid shape dimension -2 at index 0 of shape [-2, 12]", "shape '[5, 5]' is invalid for input
 * of size 24", "cannot reshape tensor of 0 elements into shape [0, -1] because ...", and "view
 * size is not compatible with input tensor's size and stride (...). Use .reshape(...) instead.";
 * C10C_STATUS_OVERFLOW "Stride calculation overflowed" (a shape without elements whose strides
 * exceed int64, such as [0, 2^40, 2^40, 2]). */
C10C_API c10c_status c10c_tensor_view(c10c_tensor **out, const c10c_tensor *tensor,
                                      const int64_t *shape, size_t ndim);

/* torch.Tensor.as_strided(size, stride, storage_offset): storage_offset NULL keeps the tensor's.
 * Errors: "mismatch in length of strides and shape", "as_strided: Negative strides are not
 * supported at the moment, got strides: [1, -1]", "Tensor: invalid storage offset -1", the
 * "setStorage: ... out of bounds" message, and C10C_STATUS_OVERFLOW "Storage size calculation
 * overflowed with sizes=[-5, 0] and strides=[0, 0]" for an extent past int64 or a negative size
 * (also beside a 0, which torch accepts). */
C10C_API c10c_status c10c_tensor_as_strided(c10c_tensor **out, const c10c_tensor *tensor,
                                            const int64_t *sizes, size_t nsizes,
                                            const int64_t *strides, size_t nstrides,
                                            const int64_t *storage_offset);

/* torch.Tensor.transpose(dim0, dim1). Errors: only the common ones above. */
C10C_API c10c_status c10c_tensor_transpose(c10c_tensor **out, const c10c_tensor *tensor,
                                           int64_t dim0, int64_t dim1);

/* torch.Tensor.permute(dims). Errors: "permute(sparse_coo): number of dimensions in the tensor
 * input does not match the length of the desired ordering of dimensions i.e. input.dim() = 3 is
 * not equal to len(dims) = 2" (sic, as ATen), "permute(): duplicate dims are not allowed." */
C10C_API c10c_status c10c_tensor_permute(c10c_tensor **out, const c10c_tensor *tensor,
                                         const int64_t *dims, size_t ndims);

/* aten::slice(dim, start, end, step): negative start/end count from the end, both are clamped
 * to the size (use INT64_MAX for "to the end"). Errors: "slice() cannot be applied to a 0-dim
 * tensor." (index error), "slice step must be positive" (step <= 0), and for a stride * step
 * past int64 ATen's "as_strided: Negative strides are not supported at the moment, got strides:
 * [...]" when ATen's product wraps negative, C10C_STATUS_OVERFLOW when it wraps positive and the
 * dim keeps two or more elements (with one or none the stride never moves: ATen's value is
 * kept). */
C10C_API c10c_status c10c_tensor_slice(c10c_tensor **out, const c10c_tensor *tensor, int64_t dim,
                                       int64_t start, int64_t end, int64_t step);

/* torch.Tensor.narrow(dim, start, length). Errors: "narrow() cannot be applied to a 0-dim
 * tensor.", "narrow(): length must be non-negative.", "start out of range (expected to be in
 * range of [-3, 3], but got 4)" (index error), "start (2) + length (2) exceeds dimension size
 * (3)." */
C10C_API c10c_status c10c_tensor_narrow(c10c_tensor **out, const c10c_tensor *tensor, int64_t dim,
                                        int64_t start, int64_t length);

/* torch.Tensor.select(dim, index). Errors (index errors): "select() cannot be applied to a 0-dim
 * tensor.", "select(): index 3 out of range for tensor of size [2, 3, 4] at dimension 1". */
C10C_API c10c_status c10c_tensor_select(c10c_tensor **out, const c10c_tensor *tensor, int64_t dim,
                                        int64_t index);

/* torch.Tensor.unsqueeze(dim): dim in [-(dim+1), dim] ("Dimension out of range (expected to be
 * in range of [-4, 3], but got 4)" for a 3-dim tensor). Errors: only the common ones above. */
C10C_API c10c_status c10c_tensor_unsqueeze(c10c_tensor **out, const c10c_tensor *tensor,
                                           int64_t dim);

/* torch.Tensor.squeeze(): drops every size-1 dim. Errors: only the common ones above. */
C10C_API c10c_status c10c_tensor_squeeze(c10c_tensor **out, const c10c_tensor *tensor);

/* torch.Tensor.squeeze(dims): drops the listed dims that have size 1, keeps the others.
 * Errors: "dim 0 appears multiple times in the list of dims". */
C10C_API c10c_status c10c_tensor_squeeze_dims(c10c_tensor **out, const c10c_tensor *tensor,
                                              const int64_t *dims, size_t ndims);

/* torch.Tensor.expand(sizes): -1 keeps a size; size-1 dims broadcast with stride 0.
 * Errors: "expand(torch.FloatTensor{[3, 1]}, size=[4]): the number of sizes provided (1) must be
 * greater or equal to the number of dimensions in the tensor (2)", "The expanded size of the
 * tensor (4) must match the existing size (3) at non-singleton dimension 0.  Target sizes: [4,
 * 4].  Tensor sizes: [3, 1]", "The expanded size of the tensor (-1) isn't allowed in a leading,
 * non-existing dimension 0"; C10C_STATUS_OVERFLOW "numel: integer multiplication overflow" for a
 * negative size, as ATen, also beside a 0 (where ATen makes a tensor of negative size). */
C10C_API c10c_status c10c_tensor_expand(c10c_tensor **out, const c10c_tensor *tensor,
                                        const int64_t *sizes, size_t nsizes);

/* torch.Tensor.view(dtype): same sizes and strides when the itemsizes match; else the last dim
 * (stride 1) is rescaled, as ATen. Errors: "self.dim() cannot be 0 to view Float as Double
 * (different element sizes)", "self.stride(-1) must be 1 to view Float as Short (different
 * element sizes), but got 4", "self.size(-1) must be divisible by 2 ...", "self.storage_offset()
 * must be divisible by 2 ...", "self.stride(0) must be divisible by 2 ..."; and
 * C10C_STATUS_INVALID_ARGUMENT "view: invalid dtype 46" for a dtype that is not valid or is
 * Undefined. */
C10C_API c10c_status c10c_tensor_view_dtype(c10c_tensor **out, const c10c_tensor *tensor,
                                            c10c_dtype dtype);

/* torch.Tensor.reshape(shape): a view when view() could make one, else a contiguous copy (a new
 * storage, version 0). One -1 is inferred; errors as c10c_tensor_view's size inference and
 * "Stride calculation overflowed", and for the copy c10c_tensor_clone's ("copy_ (from this
 * tensor): the tensor's elements ..." when its storage shrank). */
C10C_API c10c_status c10c_tensor_reshape(c10c_tensor **out, const c10c_tensor *tensor,
                                         const int64_t *shape, size_t ndim);

/* torch.Tensor.flatten(start_dim, end_dim) (reshape semantics; a 0-dim tensor becomes [1];
 * start_dim == end_dim gives the tensor itself, as ATen). Errors: "flatten() has invalid args:
 * start_dim cannot come after end_dim", and c10c_tensor_reshape's when it copies. */
C10C_API c10c_status c10c_tensor_flatten(c10c_tensor **out, const c10c_tensor *tensor,
                                         int64_t start_dim, int64_t end_dim);

/* torch.Tensor.unflatten(dim, sizes) (a view; one -1 inferred). Errors: "unflatten: sizes must
 * be non-empty", "unflatten: Provided sizes [3, 2] don't multiply up to the size of dim 2 (4) in
 * the input tensor", and ATen's wrapping of the other size errors, "unflatten got an unexpected
 * error:\nonly one dimension can be inferred" ("...\nDimension specified as 0 but tensor has no
 * dimensions" for a 0-dim tensor). */
C10C_API c10c_status c10c_tensor_unflatten(c10c_tensor **out, const c10c_tensor *tensor,
                                           int64_t dim, const int64_t *sizes, size_t nsizes);

/* torch.Tensor.movedim(source, destination). Errors: "movedim: Invalid source or destination
 * dims: source ([0, 1] dims) should contain the same number of dims as destination ([0] dims)",
 * "movedim: repeated dim in `source` ([0, 0])", "movedim: repeated dim in `destination` ...". */
C10C_API c10c_status c10c_tensor_movedim(c10c_tensor **out, const c10c_tensor *tensor,
                                         const int64_t *source, size_t nsource,
                                         const int64_t *destination, size_t ndestination);

/* torch.Tensor.diagonal(offset, dim1, dim2): the diagonal becomes the last dim. Errors:
 * "diagonal dimensions cannot be identical 1, 1". */
C10C_API c10c_status c10c_tensor_diagonal(c10c_tensor **out, const c10c_tensor *tensor,
                                          int64_t offset, int64_t dim1, int64_t dim2);

/* torch.Tensor.unfold(dim, size, step): windows of size along dim as a new last dim. Errors:
 * "maximum size for tensor at dimension 2 is 4 but size is 5", "size is -1 but must be >= 0",
 * "step is 0 but must be > 0". */
C10C_API c10c_status c10c_tensor_unfold(c10c_tensor **out, const c10c_tensor *tensor, int64_t dim,
                                        int64_t size, int64_t step);

/* ---- copies and fills (CPU, CUDA and meta tensors; others give C10C_STATUS_NOT_IMPLEMENTED) ----
 * In-place writes bump the version counter of every tensor over the storage, and refuse, with
 * C10C_STATUS_ERROR, a read-only storage and an inference tensor outside inference mode (c10's
 * message; see c10c_tensor_bump_version). Meta tensors write nothing and cannot be read (see the
 * top of this file). A tensor on another device than CPU, CUDA and meta gives
 * C10C_STATUS_NOT_IMPLEMENTED "copies and fills of XLA tensors are not implemented yet"; a CUDA
 * tensor the driver's failures (C10C_STATUS_UNAVAILABLE "CUDA driver not found: ..." without
 * one; cuda.h). */

/* torch.Tensor.copy_(src): src broadcast to dst's shape and converted to dst's dtype with c10's
 * casts (bool, integers, Half, BFloat16, the five Float8 formats (e4m3fn saturating, as torch
 * 2.13), float, double, complex). The other dtypes (quantized, bits, sub-byte) copy only to their
 * own dtype. NaN and out-of-range floats to integers, undefined in C++, give what x86's scalar
 * conversions give (and 0 from the NaN of the fnuz and e8m0 Float8 formats, as torch). A src that
 * is the same view of the same storage is a no-op (that still counts a write). Other overlapping
 * tensors (views ATen cannot prove apart, such as t[:, 1:] from t[:, :3]; two storages over the
 * same memory) are copied as if src were read whole before dst is written, as numpy does
 * (torch's result depends on its vector width there).
 * Errors: C10C_STATUS_NULL_POINTER (dst, src); TensorIterator's, as C10C_STATUS_ERROR:
 * "unsupported operation: more than one element of the written-to tensor refers to a single
 * memory location. Please clone() the tensor before performing the operation." (dst has a
 * stride-0 dim), "unsupported operation: some elements of the input tensor and the written-to
 * tensor refer to a single memory location. ..." (dense views of one storage that partly
 * overlap), "The size of tensor a (4) must match the size of tensor b (3) at non-singleton
 * dimension 1", "output with shape [3] doesn't match the broadcast shape [2, 3]";
 * C10C_STATUS_ERROR "copy_ (to this tensor): the tensor's elements ..." and "copy_ (from this
 * tensor): ..." when a storage no longer holds its tensor's elements;
 * torch's C10C_STATUS_ERROR "Copying from quantized Tensor to non-quantized Tensor is not
 * allowed, please use dequantize to get a float Tensor from a quantized Tensor" from a quantized
 * src, and c10's "Expected self.scalar_type() == src.scalar_type() to be true, but got false. ..."
 * between two quantized dtypes; C10C_STATUS_NOT_IMPLEMENTED "copy_ from Float to QInt8:
 * conversions of QInt8 are not implemented" into a quantized dtype (it needs a quantizer) and
 * between two dtypes one of which has no conversions (bits, sub-byte; torch raises
 * NotImplementedError for those too); the
 * refusals of every in-place write and device (above); C10C_STATUS_OUT_OF_MEMORY and, for CUDA,
 * the driver's errors. */
C10C_API c10c_status c10c_tensor_copy_(c10c_tensor *dst, const c10c_tensor *src);

/* torch.Tensor.fill_(value): value points to one element of the tensor's dtype (itemsize bytes,
 * the dtype's native representation; it may lie in the tensor itself: it is read first).
 * Tensors with stride-0 dims are allowed, as ATen. Errors: C10C_STATUS_NULL_POINTER (tensor,
 * value); C10C_STATUS_ERROR "fill_: the tensor's elements ..." (see the top of this file); the
 * refusals of every in-place write and device (above). */
C10C_API c10c_status c10c_tensor_fill_(c10c_tensor *tensor, const void *value);

/* torch.Tensor.zero_(): all bytes zero (0, 0.0, false for every dtype). Errors: as fill_
 * (C10C_STATUS_NULL_POINTER, "zero_: the tensor's elements ...", the in-place refusals). */
C10C_API c10c_status c10c_tensor_zero_(c10c_tensor *tensor);

/* torch.full / torch.zeros: c10c_tensor_empty then every element set to *value (one element of
 * dtype, as c10c_tensor_fill_), or to zero bytes when value is NULL. The version counter of the
 * new tensor is 0, as torch's factories. CPU, CUDA and meta tensors (a meta one is not written).
 * Ownership: *out is a new reference (NULL on failure).
 * Errors: as c10c_tensor_empty; C10C_STATUS_NOT_IMPLEMENTED on a device other than CPU, CUDA and
 * meta (whose allocator a host installed). */
C10C_API c10c_status c10c_tensor_full(c10c_tensor **out, const int64_t *sizes, size_t ndim,
                                      c10c_dtype dtype, c10c_device device,
                                      c10c_memory_format memory_format, const void *value);

/* torch.empty_like(tensor, dtype, device, memory_format): tensor's sizes; PRESERVE keeps the
 * strides of a non-overlapping and dense tensor, else lays out dense strides in the order of the
 * tensor's strides (ATen's infer_dense_strides); other formats as c10c_tensor_empty.
 * Ownership: *out is a new reference (NULL on failure).
 * Errors: C10C_STATUS_NULL_POINTER (out, tensor); then as c10c_tensor_empty (PRESERVE: as
 * c10c_tensor_empty_strided), "required rank 4 tensor to use channels_last format" included. */
C10C_API c10c_status c10c_tensor_empty_like(c10c_tensor **out, const c10c_tensor *tensor,
                                            c10c_dtype dtype, c10c_device device,
                                            c10c_memory_format memory_format);

/* torch.full_like / zeros_like: c10c_tensor_empty_like, filled as c10c_tensor_full.
 * Ownership: *out is a new reference (NULL on failure). Errors: as c10c_tensor_empty_like, and
 * C10C_STATUS_NOT_IMPLEMENTED as c10c_tensor_full. */
C10C_API c10c_status c10c_tensor_full_like(c10c_tensor **out, const c10c_tensor *tensor,
                                           c10c_dtype dtype, c10c_device device,
                                           c10c_memory_format memory_format, const void *value);

/* torch.Tensor.clone(memory_format): empty_like with the tensor's dtype and device, then a copy
 * of the data (version counter 0, as torch). Ownership: *out is a new reference (NULL on
 * failure); a meta tensor's clone is a meta tensor of empty_like's geometry. Errors: as
 * c10c_tensor_empty_like and copy_ ("copy_ (from this tensor): the tensor's elements ..." when its
 * storage shrank; C10C_STATUS_NOT_IMPLEMENTED off CPU, CUDA and meta). */
C10C_API c10c_status c10c_tensor_clone(c10c_tensor **out, const c10c_tensor *tensor,
                                       c10c_memory_format memory_format);

/* torch.Tensor.contiguous(memory_format): a new reference to the tensor itself when it is
 * already contiguous in that format (PRESERVE asks for row-major contiguity, as
 * c10c_tensor_is_contiguous), else clone(memory_format). Ownership: *out is a new reference (NULL
 * on failure). Errors: C10C_STATUS_NULL_POINTER (out, tensor); C10C_STATUS_INVALID_ARGUMENT
 * "Unknown memory format 9"; C10C_STATUS_ERROR "preserve memory format is unsupported by the
 * contiguous operator" for PRESERVE and a tensor that is not row-major contiguous (torch returns
 * a contiguous one as it is); otherwise as c10c_tensor_clone. */
C10C_API c10c_status c10c_tensor_contiguous(c10c_tensor **out, const c10c_tensor *tensor,
                                            c10c_memory_format memory_format);

C10C_END_DECLS

#endif /* C10C_TENSOR_H */
