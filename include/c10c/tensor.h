/* libc10c: tensors, c10's TensorImpl: a refcounted view of a storage with sizes, strides, a storage
 * offset, a dtype, a device and a dispatch key set.
 *
 * Sizes and strides are counted in elements and kept inline up to 5 dimensions (on the heap
 * beyond, with no fixed limit). numel and the contiguity flags are computed once, by c10's rules,
 * whenever the geometry changes. Tensors that share a storage share its version counter, which
 * in-place writes bump; inference tensors (made while inference mode is on) have none.
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
 * Tensors made while it is on are inference tensors: no autograd keys, no version counter. */
C10C_API bool c10c_inference_mode_set(bool enabled);

/* Whether inference mode is on for the calling thread. */
C10C_API bool c10c_inference_mode_enabled(void);

/* ---- creation ---- */

/* A new tensor of the given sizes with uninitialized bytes from the device's installed allocator,
 * laid out as memory_format says: CONTIGUOUS (row-major), CHANNELS_LAST (4 dims) or
 * CHANNELS_LAST_3D (5 dims), as at::empty.
 * Ownership: *out is a new reference.
 * Errors: C10C_STATUS_NULL_POINTER (out; sizes with ndim > 0); C10C_STATUS_ERROR "Trying to
 * create tensor with negative dimension -1: [-1]"; C10C_STATUS_OVERFLOW for a numel or byte size
 * beyond int64 ("numel: integer multiplication overflow", "Storage size calculation overflowed
 * with sizes=[...]"); C10C_STATUS_ERROR "required rank 4 tensor to use channels_last format" (and
 * the 3d variant), "unsupported memory format Preserve"; C10C_STATUS_INVALID_ARGUMENT (invalid
 * dtype, device or memory format); C10C_STATUS_UNAVAILABLE (no allocator for the device);
 * C10C_STATUS_OUT_OF_MEMORY. */
C10C_API c10c_status c10c_tensor_empty(c10c_tensor **out, const int64_t *sizes, size_t ndim,
                                       c10c_dtype dtype, c10c_device device,
                                       c10c_memory_format memory_format);

/* A new tensor with the given sizes and strides over a new storage just large enough for them
 * (at::empty_strided). Errors: as c10c_tensor_empty, plus C10C_STATUS_ERROR for negative strides
 * ("as_strided: Negative strides are not supported at the moment, got strides: [1, -1]"). */
C10C_API c10c_status c10c_tensor_empty_strided(c10c_tensor **out, const int64_t *sizes,
                                               const int64_t *strides, size_t ndim,
                                               c10c_dtype dtype, c10c_device device);

/* A tensor over an existing storage (which it retains) at storage_offset elements, checked
 * against the storage's size as ATen's setStorage: "setStorage: sizes [2, 2], strides [1, 2],
 * storage offset 23, and itemsize 4 requiring a storage size of 108 are out of bounds for storage
 * of size 96". Zero-element tensors may sit at any non-negative offset.
 * Errors: as c10c_tensor_empty_strided, plus C10C_STATUS_ERROR "Tensor: invalid storage offset
 * -1" and the out-of-bounds message above. */
C10C_API c10c_status c10c_tensor_new_from_storage(c10c_tensor **out, c10c_storage *storage,
                                                  const int64_t *sizes, const int64_t *strides,
                                                  size_t ndim, int64_t storage_offset,
                                                  c10c_dtype dtype);

/* Adds a reference (NULL-safe). Ownership: returns tensor, owned once more. */
C10C_API c10c_tensor *c10c_tensor_retain(c10c_tensor *tensor);

/* Drops a reference (NULL-safe); the last one releases the storage reference. */
C10C_API void c10c_tensor_release(c10c_tensor *tensor);

/* ---- metadata (O(1); NULL-safe getters return 0 / NULL) ---- */

C10C_API size_t c10c_tensor_dim(const c10c_tensor *tensor);
C10C_API int64_t c10c_tensor_numel(const c10c_tensor *tensor);

/* The sizes and strides arrays (dim() entries each). Ownership: borrowed, valid until the
 * tensor's geometry changes or it is freed. */
C10C_API const int64_t *c10c_tensor_sizes(const c10c_tensor *tensor);
C10C_API const int64_t *c10c_tensor_strides(const c10c_tensor *tensor);

/* Size and stride of dimension dim, wrapped as c10's maybe_wrap_dim (-1 is the last; a 0-dim
 * tensor accepts 0 and -1). Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_INDEX_OUT_OF_RANGE
 * "Dimension out of range (expected to be in range of [-3, 2], but got 3)" (and "Dimension
 * specified as 0 but tensor has no dimensions" for a 0-dim tensor's size/stride). */
C10C_API c10c_status c10c_tensor_size(int64_t *out, const c10c_tensor *tensor, int64_t dim);
C10C_API c10c_status c10c_tensor_stride(int64_t *out, const c10c_tensor *tensor, int64_t dim);

C10C_API int64_t c10c_tensor_storage_offset(const c10c_tensor *tensor);
C10C_API c10c_dtype c10c_tensor_dtype(const c10c_tensor *tensor);
C10C_API c10c_device c10c_tensor_device(const c10c_tensor *tensor);
C10C_API size_t c10c_tensor_itemsize(const c10c_tensor *tensor);

/* numel * itemsize. */
C10C_API int64_t c10c_tensor_nbytes(const c10c_tensor *tensor);

/* The storage. Ownership: borrowed. */
C10C_API c10c_storage *c10c_tensor_storage(const c10c_tensor *tensor);

/* storage data + storage_offset * itemsize (NULL for a storage without bytes).
 * Ownership: borrowed. */
C10C_API void *c10c_tensor_data(const c10c_tensor *tensor);

/* The dispatch key set c10 gives such a tensor. */
C10C_API c10c_dispatch_key_set c10c_tensor_keys(const c10c_tensor *tensor);

/* c10's is_contiguous(memory_format): CONTIGUOUS and PRESERVE ask for row-major contiguity,
 * CHANNELS_LAST(_3D) for channels-last contiguity. Errors: C10C_STATUS_NULL_POINTER,
 * C10C_STATUS_INVALID_ARGUMENT (invalid format). */
C10C_API c10c_status c10c_tensor_is_contiguous(bool *out, const c10c_tensor *tensor,
                                               c10c_memory_format memory_format);

/* c10's is_strides_like(format): channels-last strides (true even when not contiguous);
 * false for other formats. */
C10C_API bool c10c_tensor_is_strides_like(const c10c_tensor *tensor,
                                          c10c_memory_format memory_format);

/* c10's is_non_overlapping_and_dense. */
C10C_API bool c10c_tensor_is_non_overlapping_and_dense(const c10c_tensor *tensor);

/* Whether the tensor was made in inference mode (no version counter). */
C10C_API bool c10c_tensor_is_inference(const c10c_tensor *tensor);

/* The version counter shared by tensors over the same storage. Errors: C10C_STATUS_NULL_POINTER;
 * C10C_STATUS_ERROR "Inference tensors do not track version counter." */
C10C_API c10c_status c10c_tensor_version(int64_t *out, const c10c_tensor *tensor);

C10C_END_DECLS

#endif /* C10C_TENSOR_H */
