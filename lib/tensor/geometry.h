/* Pure computations over sizes and strides with c10's and ATen's exact rules: numel, contiguity
 * flags, default strides for a memory format, and the storage bytes a geometry needs. */
#ifndef C10C_GEOMETRY_H
#define C10C_GEOMETRY_H

#include "checked.h"
#include "internal.h"

/* ATen's storage_max(): the most bytes a storage size calculation may give, min(INT64_MAX,
 * SIZE_MAX). Beyond it the size "overflowed": on a 32-bit platform that is 4 GiB, as in torch
 * there, so a tensor the address space cannot hold fails before its size is truncated. */
#define C10C__STORAGE_MAX \
  ((uint64_t)SIZE_MAX < (uint64_t)INT64_MAX ? (uint64_t)SIZE_MAX : (uint64_t)INT64_MAX)

/* Contiguity flag bits (refresh_contiguous in c10's TensorImpl). */
enum {
  C10C__CONTIGUOUS = 1 << 0,
  C10C__CHANNELS_LAST_CONTIGUOUS = 1 << 1,
  C10C__CHANNELS_LAST_3D_CONTIGUOUS = 1 << 2,
  C10C__CHANNELS_LAST = 1 << 3,    /* strides like channels_last */
  C10C__CHANNELS_LAST_3D = 1 << 4, /* strides like channels_last_3d */
  C10C__NON_OVERLAPPING_AND_DENSE = 1 << 5,
};

/* c10's safe_compute_numel: false when the product overflows int64 (the overflow is sticky, so an
 * overflow before a later 0 still counts). */
bool c10c__compute_numel(int64_t *out, const int64_t *sizes, size_t ndim);

/* The six contiguity flags of a dense (non-sparse) tensor, as c10's refresh_contiguous. */
uint8_t c10c__contiguity_flags(const int64_t *sizes, const int64_t *strides, size_t ndim,
                               int64_t numel);

/* Writes the strides of a new tensor of these sizes in a memory format (CONTIGUOUS,
 * CHANNELS_LAST for 4 dims, CHANNELS_LAST_3D for 5), as c10's empty_tensor_restride. */
c10c_status c10c__default_strides(int64_t *strides, const int64_t *sizes, size_t ndim,
                                  c10c_memory_format memory_format);

/* The bytes of storage a tensor's elements reach: itemsize * (offset + 1 + sum((size - 1) *
 * stride)), or 0 when a size is 0 (no element: any offset will do). False when that exceeds
 * C10C__STORAGE_MAX or the offset or a stride is negative. Negative sizes are ATen's uint64
 * arithmetic (computeStorageNbytes): with stride 0 a size -5 reaches nothing, otherwise it
 * overflows; beside a 0 they count as for the same sizes without the 0 (ATen would answer 0 and
 * make a tensor of negative size). */
bool c10c__extent(int64_t *out, const int64_t *sizes, const int64_t *strides, size_t ndim,
                  int64_t offset, size_t itemsize);

/* The sum behind c10c__extent, over the dims of a size other than 0 when skip_empty (else every
 * dim, of sizes >= 1 or negative). */
static inline bool c10c__extent_sum(int64_t *out, const int64_t *sizes, const int64_t *strides,
                                    size_t ndim, int64_t offset, size_t itemsize, bool skip_empty) {
  uint64_t last = (uint64_t)offset, term;
  bool overflow = offset < 0;
  for (size_t i = 0; i < ndim; i++) {
    if (skip_empty && sizes[i] == 0) continue;
    overflow |= strides[i] < 0 && sizes[i] != 1;
    overflow |= c10c__umul_overflows((uint64_t)sizes[i] - 1, (uint64_t)strides[i], &term);
    overflow |= c10c__uadd_overflows(last, term, &last);
  }
  overflow |= c10c__uadd_overflows(last, 1, &last); /* the last element at 2^64 - 1 wraps here */
  overflow |= c10c__umul_overflows(last, (uint64_t)itemsize, &last);
  if (overflow || last > C10C__STORAGE_MAX) return false;
  *out = (int64_t)last;
  return true;
}

/* The same for sizes known to be >= 1 (a tensor with elements): one pass, inlined on the view
 * path. */
static inline bool c10c__extent_nonempty(int64_t *out, const int64_t *sizes, const int64_t *strides,
                                         size_t ndim, int64_t offset, size_t itemsize) {
  return c10c__extent_sum(out, sizes, strides, ndim, offset, itemsize, false);
}

/* ATen's computeStorageNbytes (c10c__extent), and with strides NULL its contiguous variant
 * (itemsize * (offset + product of the sizes), the product's overflow sticky past a later 0).
 * Errors with ATen's "Storage size calculation overflowed with sizes=[...] and strides=[...]"
 * (strides omitted when NULL), which is also what a negative size with a stride other than 0
 * gets, even beside a 0 (c10c__extent). */
c10c_status c10c__storage_nbytes(int64_t *out, const int64_t *sizes, const int64_t *strides,
                                 size_t ndim, int64_t offset, size_t itemsize);

/* c10's maybe_wrap_dim: a dim in [-ndim, ndim-1] made non-negative, else
 * C10C_STATUS_INDEX_OUT_OF_RANGE with c10's message. wrap_scalar lets a 0-dim tensor take 0 and
 * -1 (as views do); without it a 0-dim tensor has no dim to name (as size() and stride()). */
c10c_status c10c__wrap_dim(int64_t *dim, int64_t ndim, bool wrap_scalar);

/* Formats "[2, 3]" into buf (truncated with "..." when it does not fit). */
void c10c__format_int_list(char *buf, size_t size, const int64_t *values, size_t n);

#endif /* C10C_GEOMETRY_H */
