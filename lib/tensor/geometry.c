/* Sizes-and-strides arithmetic with c10's exact rules (c10/core/Contiguity.h, TensorImpl.cpp,
 * MemoryFormat.h) and ATen's storage-size check (aten/src/ATen/EmptyTensor.cpp). */
#include <stdio.h>
#include <string.h>

#include "checked.h"
#include "geometry.h"

bool c10c__compute_numel(int64_t *out, const int64_t *sizes, size_t ndim) {
  uint64_t product = 1;
  bool overflow = false;
  for (size_t i = 0; i < ndim; i++)
    overflow |= c10c__umul_overflows(product, (uint64_t)sizes[i], &product);
  if (overflow || product > (uint64_t)INT64_MAX) return false;
  *out = (int64_t)product;
  return true;
}

static bool compute_contiguous(const int64_t *sizes, const int64_t *strides, size_t ndim,
                               int64_t numel) {
  if (numel == 0) return true;
  int64_t expected = 1;
  for (size_t i = ndim; i-- > 0;) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i]; /* a product of sizes of a tensor with numel > 0: fits */
  }
  return true;
}

/* Channels-last contiguity walks the dims in a fixed order with no numel == 0 shortcut. */
static bool contiguous_in_order(const int64_t *sizes, const int64_t *strides, const int *order,
                                size_t n) {
  int64_t expected = 1;
  for (size_t k = 0; k < n; k++) {
    int d = order[k];
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    /* c10 lets this wrap; an overflowing product cannot equal a later stride of a real layout */
    if (c10c__mul_overflows(expected, sizes[d], &expected)) return false;
  }
  return true;
}

/* c10's is_channels_last_strides_{2d,3d}_s{4,5}: ambiguous N111-like cases default to NCHW. */
static bool strides_like_in_order(const int64_t *sizes, const int64_t *strides, const int *order,
                                  size_t n) {
  if (strides[1] == 0) return false;
  int64_t min = 0;
  for (size_t k = 0; k < n; k++) {
    int d = order[k];
    if (sizes[d] == 0) return false;
    if (strides[d] < min) return false;
    if (d == 0 && min == strides[1]) return false;
    min = strides[d];
    if (sizes[d] > 1 && c10c__mul_overflows(min, sizes[d], &min)) return false;
  }
  return true;
}

/* c10 sorts the dims by stride (dims of size < 2 last) and requires strides 1, s0, s0*s1, ...
 * up to the first dim of size < 2. The same answer without sorting or memory: repeatedly find a
 * dim of size >= 2 whose stride is the next required one. (Equal strides fail either way: the
 * required stride grows past them.) O(ndim^2) for any rank. */
static bool compute_non_overlapping_and_dense(const int64_t *sizes, const int64_t *strides,
                                              size_t ndim) {
  if (ndim == 0) return true;
  if (ndim == 1) return sizes[0] < 2 || strides[0] == 1;
  if (ndim == 2) { /* the loop below, unrolled for the most common rank */
    bool big0 = sizes[0] >= 2, big1 = sizes[1] >= 2;
    if (!big0) return !big1 || strides[1] == 1;
    if (!big1) return strides[0] == 1;
    if (strides[1] == 1) return strides[0] == sizes[1];
    return strides[0] == 1 && strides[1] == sizes[0];
  }
  size_t big = 0;
  for (size_t d = 0; d < ndim; d++) big += sizes[d] >= 2;
  int64_t require = 1;
  for (size_t k = 0; k < big; k++) {
    size_t d = 0;
    while (d < ndim && !(sizes[d] >= 2 && strides[d] == require)) d++;
    if (d == ndim) return false;
    if (c10c__mul_overflows(require, sizes[d], &require)) return false;
  }
  return true;
}

uint8_t c10c__contiguity_flags(const int64_t *sizes, const int64_t *strides, size_t ndim,
                               int64_t numel) {
  static const int order_2d[4] = {1, 3, 2, 0};
  static const int order_3d[5] = {1, 4, 3, 2, 0};
  uint8_t f = 0;
  bool contiguous = compute_contiguous(sizes, strides, ndim, numel);
  if (contiguous) f |= C10C__CONTIGUOUS;
  /* outside 4 and 5 dims a contiguous tensor is non-overlapping and dense and nothing else */
  if (contiguous && ndim != 4 && ndim != 5) return f | C10C__NON_OVERLAPPING_AND_DENSE;
  if (ndim == 4) {
    bool cl = contiguous_in_order(sizes, strides, order_2d, 4);
    if (cl) f |= C10C__CHANNELS_LAST_CONTIGUOUS;
    if (strides_like_in_order(sizes, strides, order_2d, 4)) f |= C10C__CHANNELS_LAST;
    if (contiguous || cl || compute_non_overlapping_and_dense(sizes, strides, ndim))
      f |= C10C__NON_OVERLAPPING_AND_DENSE;
  } else if (ndim == 5) {
    bool cl3 = contiguous_in_order(sizes, strides, order_3d, 5);
    if (cl3) f |= C10C__CHANNELS_LAST_3D_CONTIGUOUS;
    if (strides_like_in_order(sizes, strides, order_3d, 5)) f |= C10C__CHANNELS_LAST_3D;
    if (contiguous || cl3 || compute_non_overlapping_and_dense(sizes, strides, ndim))
      f |= C10C__NON_OVERLAPPING_AND_DENSE;
  } else if (contiguous || compute_non_overlapping_and_dense(sizes, strides, ndim)) {
    f |= C10C__NON_OVERLAPPING_AND_DENSE;
  }
  return f;
}

c10c_status c10c__default_strides(int64_t *strides, const int64_t *sizes, size_t ndim,
                                  c10c_memory_format memory_format) {
  switch (memory_format) {
    case C10C_MEMORY_FORMAT_CONTIGUOUS: {
      int64_t s = 1;
      for (size_t i = ndim; i-- > 0;) {
        strides[i] = s;
        int64_t size = sizes[i] > 1 ? sizes[i] : 1;
        if (i > 0 && c10c__mul_overflows(s, size, &s))
          return c10c__fail(C10C_STATUS_OVERFLOW, "Stride calculation overflowed");
      }
      return C10C_STATUS_OK;
    }
    case C10C_MEMORY_FORMAT_CHANNELS_LAST:
    case C10C_MEMORY_FORMAT_CHANNELS_LAST_3D: {
      bool is3d = memory_format == C10C_MEMORY_FORMAT_CHANNELS_LAST_3D;
      if (ndim != (is3d ? 5u : 4u))
        return c10c__fail(C10C_STATUS_ERROR, "required rank %d tensor to use %s format",
                          is3d ? 5 : 4, is3d ? "channels_last_3d" : "channels_last");
      /* c10's get_channels_last_strides_{2d,3d}: C fastest, then the spatial dims, then N
       * (no max(size, 1) here, as in c10). */
      static const int order_2d[4] = {1, 3, 2, 0}, order_3d[5] = {1, 4, 3, 2, 0};
      const int *order = is3d ? order_3d : order_2d;
      int64_t s = 1;
      for (size_t k = 0; k < ndim; k++) {
        strides[order[k]] = s;
        if (k + 1 < ndim && c10c__mul_overflows(s, sizes[order[k]], &s))
          return c10c__fail(C10C_STATUS_OVERFLOW, "Stride calculation overflowed");
      }
      return C10C_STATUS_OK;
    }
    case C10C_MEMORY_FORMAT_PRESERVE:
      return c10c__fail(C10C_STATUS_ERROR, "unsupported memory format Preserve");
    default:
      return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "Unknown memory format %d",
                        (int)memory_format);
  }
}

void c10c__format_int_list(char *buf, size_t size, const int64_t *values, size_t n) {
  size_t len = 0;
  int w = snprintf(buf, size, "[");
  len = w > 0 ? (size_t)w : 0;
  for (size_t i = 0; i < n && len + 24 < size; i++) {
    w = snprintf(buf + len, size - len, "%s%lld", i ? ", " : "", (long long)values[i]);
    if (w > 0) len += (size_t)w;
    if (i + 1 < n && len + 24 >= size) {
      snprintf(buf + len, size - len, ", ...");
      len = strlen(buf);
    }
  }
  if (len + 1 < size) snprintf(buf + len, size - len, "]");
}

bool c10c__extent(int64_t *out, const int64_t *sizes, const int64_t *strides, size_t ndim,
                  int64_t offset, size_t itemsize) {
  bool empty = false, negative = false;
  for (size_t i = 0; i < ndim; i++) {
    negative |= sizes[i] < 0;
    empty |= sizes[i] == 0;
  }
  if (empty && !negative) {
    *out = 0;
    return true;
  }
  return c10c__extent_sum(out, sizes, strides, ndim, offset, itemsize, empty);
}

c10c_status c10c__storage_nbytes(int64_t *out, const int64_t *sizes, const int64_t *strides,
                                 size_t ndim, int64_t offset, size_t itemsize) {
  bool overflow = false;
  if (strides == NULL) {
    /* computeStorageNbytesContiguous: the product of the sizes, sticky (an overflow before a
     * later 0 still counts: torch.empty(2**62, 2**62, 0) fails) */
    uint64_t bytes = 1;
    for (size_t i = 0; i < ndim; i++)
      overflow |= c10c__umul_overflows(bytes, (uint64_t)sizes[i], &bytes);
    overflow |= c10c__uadd_overflows(bytes, (uint64_t)offset, &bytes);
    overflow |= c10c__umul_overflows(bytes, (uint64_t)itemsize, &bytes);
    overflow |= bytes > C10C__STORAGE_MAX;
    if (!overflow) *out = (int64_t)bytes;
  } else {
    /* computeStorageNbytes: 0 once a size is 0, unless a size is negative: then as for the same
     * sizes without the 0 (ATen answers 0 for [-5, 0] and makes a tensor of size -5) */
    overflow = !c10c__extent(out, sizes, strides, ndim, offset, itemsize);
  }
  if (!overflow) return C10C_STATUS_OK;
  char s1[256], s2[256];
  c10c__format_int_list(s1, sizeof s1, sizes, ndim);
  if (strides == NULL)
    return c10c__fail(C10C_STATUS_OVERFLOW, "Storage size calculation overflowed with sizes=%s",
                      s1);
  c10c__format_int_list(s2, sizeof s2, strides, ndim);
  return c10c__fail(C10C_STATUS_OVERFLOW,
                    "Storage size calculation overflowed with sizes=%s and strides=%s", s1, s2);
}

c10c_status c10c__wrap_dim(int64_t *dim, int64_t ndim, bool wrap_scalar) {
  if (ndim == 0 && !wrap_scalar)
    return c10c__fail(C10C_STATUS_INDEX_OUT_OF_RANGE,
                      "Dimension specified as %lld but tensor has no dimensions", (long long)*dim);
  int64_t n = ndim > 0 ? ndim : 1;
  if (*dim < -n || *dim > n - 1)
    return c10c__fail(C10C_STATUS_INDEX_OUT_OF_RANGE,
                      "Dimension out of range (expected to be in range of [%lld, %lld], but got "
                      "%lld)",
                      (long long)-n, (long long)(n - 1), (long long)*dim);
  if (*dim < 0) *dim += n;
  return C10C_STATUS_OK;
}
