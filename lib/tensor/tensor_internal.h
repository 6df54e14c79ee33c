/* What the view functions (views.c) need from tensor.c. */
#ifndef C10C_TENSOR_INTERNAL_H
#define C10C_TENSOR_INTERNAL_H

#include "internal.h"

/* A new tensor over base's storage with this geometry, sharing its dtype, device, key set and
 * version counter (c10's view constructor). same_elements: the view reaches exactly base's
 * elements, in another arrangement (transpose, permute, view, squeeze, expand, ...) or none;
 * its extent is then base's, not computed again. */
c10c_status c10c__tensor_make_view(c10c_tensor **out, const c10c_tensor *base, const int64_t *sizes,
                                   const int64_t *strides, size_t ndim, int64_t storage_offset,
                                   bool same_elements);

/* The same with another dtype (view(dtype)): the caller has rescaled the geometry. */
c10c_status c10c__tensor_make_view_as(c10c_tensor **out, const c10c_tensor *base,
                                      const int64_t *sizes, const int64_t *strides, size_t ndim,
                                      int64_t storage_offset, c10c_dtype dtype, bool same_elements);

/* How every view is made: a shell for ndim dims over base's storage (retained) with base's
 * dtype, device, key set, inference flag and storage offset, whose sizes and strides (*sizes,
 * *strides) start as a copy of base's with keep_geometry (ndim must then be base's) and are
 * uninitialized otherwise. The caller fills them in place, then calls c10c__tensor_view_finish,
 * or releases *out on an error of its own. */
c10c_status c10c__tensor_view_start(c10c_tensor **out, const c10c_tensor *base, size_t ndim,
                                    bool keep_geometry, int64_t **sizes, int64_t **strides);

/* Sets the offset and computes numel, the contiguity flags and (unless same_elements, as in
 * c10c__tensor_make_view) the extent. An overflowing numel is an error that releases *out and
 * sets it to NULL. */
c10c_status c10c__tensor_view_finish(c10c_tensor **out, int64_t storage_offset, bool same_elements);

/* c10's check before an in-place write: inference tensors refuse it outside inference mode. */
c10c_status c10c__check_inplace(const c10c_tensor *tensor);

/* Whether the storage still holds every element the tensor reaches (a resize or set_nbytes may
 * have shrunk it since the tensor was made): C10C_STATUS_ERROR naming op, the geometry and both
 * sizes otherwise. Every path that reads or writes a tensor's data calls it first (ATen does
 * not: torch's fill_ after untyped_storage().resize_(0) writes through NULL). One comparison. */
c10c_status c10c__tensor_check_extent(const c10c_tensor *tensor, const char *op);

/* c10c_tensor_data for code that checked the extent already (copies, fills): no second check. */
void *c10c__tensor_data_unchecked(const c10c_tensor *tensor);

/* ATen's checkInBoundsForStorage with its "setStorage: ..." message; *needed receives the
 * storage bytes the geometry reaches (its extent, c10c__extent). */
c10c_status c10c__check_in_bounds(int64_t *needed, const c10c_storage *storage,
                                  const int64_t *sizes, const int64_t *strides, size_t ndim,
                                  int64_t storage_offset, size_t itemsize);

#endif /* C10C_TENSOR_INTERNAL_H */
