/* What the view functions (views.c) need from tensor.c. */
#ifndef C10C_TENSOR_INTERNAL_H
#define C10C_TENSOR_INTERNAL_H

#include "internal.h"

/* A new tensor over base's storage with this geometry, sharing its dtype, device, key set and
 * version counter (c10's view constructor). */
c10c_status c10c__tensor_make_view(c10c_tensor **out, const c10c_tensor *base, const int64_t *sizes,
                                   const int64_t *strides, size_t ndim, int64_t storage_offset);

/* The same with another dtype (view(dtype)): the caller has rescaled the geometry. */
c10c_status c10c__tensor_make_view_as(c10c_tensor **out, const c10c_tensor *base,
                                      const int64_t *sizes, const int64_t *strides, size_t ndim,
                                      int64_t storage_offset, c10c_dtype dtype);

/* c10's check before an in-place write: inference tensors refuse it outside inference mode. */
c10c_status c10c__check_inplace(const c10c_tensor *tensor);

/* ATen's checkInBoundsForStorage with its "setStorage: ..." message. */
c10c_status c10c__check_in_bounds(const c10c_storage *storage, const int64_t *sizes,
                                  const int64_t *strides, size_t ndim, int64_t storage_offset,
                                  size_t itemsize);

#endif /* C10C_TENSOR_INTERNAL_H */
