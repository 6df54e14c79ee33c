/* Copies and fills: copy_ with src broadcast to dst, fill_, zero_, clone, contiguous. The checks
 * and messages are ATen's (TensorIterator's overlap and shape checks, empty_like's preserve
 * rule, the meta kernels' shape-only checks); the loops are one strided kernel: drop size-1 dims,
 * order dims by dst stride, coalesce dims that are contiguous in both tensors, then run an odometer
 * over the outer dims with a memcpy or a fixed-width element loop inside. */
#include <string.h>

#include "convert.h"
#include "cuda_internal.h"
#include "geometry.h"
#include "sysmem.h"
#include "tensor_internal.h"

static const char internal_overlap_message[] =
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation.";
static const char partial_overlap_message[] =
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to "
    "a single memory location. Please clone() the tensor before performing the operation.";

enum { STACK_DIMS = 16 };

/* The loop nest of one copy: sizes and byte strides, innermost dim last. */
typedef struct loop {
  size_t ndim;
  int64_t *sizes, *dst, *src, *index;
  int64_t stack[4 * STACK_DIMS];
  int64_t *heap;
} loop;

static c10c_status loop_init(loop *l, size_t capacity) {
  l->heap = NULL;
  int64_t *base = l->stack;
  if (capacity > STACK_DIMS) {
    l->heap = c10c__malloc(4 * capacity * sizeof(int64_t));
    if (l->heap == NULL) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory in copy_");
    base = l->heap;
  } else {
    capacity = STACK_DIMS;
  }
  l->sizes = base;
  l->dst = base + capacity;
  l->src = base + 2 * capacity;
  l->index = base + 3 * capacity;
  l->ndim = 0;
  return C10C_STATUS_OK;
}

/* Orders dims by descending dst stride (stable, so broadcast and ties keep their order) and
 * merges neighbours that are contiguous in both tensors. */
static void loop_simplify(loop *l) {
  for (size_t i = 1; i < l->ndim; i++) {
    for (size_t j = i; j > 0 && l->dst[j - 1] < l->dst[j]; j--) {
      int64_t *arrays[3] = {l->sizes, l->dst, l->src};
      for (int a = 0; a < 3; a++) {
        int64_t tmp = arrays[a][j];
        arrays[a][j] = arrays[a][j - 1];
        arrays[a][j - 1] = tmp;
      }
    }
  }
  size_t kept = 0;
  for (size_t i = 0; i < l->ndim; i++) {
    if (kept > 0) {
      size_t p = kept - 1; /* the outer neighbour already kept */
      if (l->dst[p] == l->dst[i] * l->sizes[i] && l->src[p] == l->src[i] * l->sizes[i]) {
        l->sizes[p] *= l->sizes[i];
        l->dst[p] = l->dst[i];
        l->src[p] = l->src[i];
        continue;
      }
    }
    l->sizes[kept] = l->sizes[i];
    l->dst[kept] = l->dst[i];
    l->src[kept] = l->src[i];
    kept++;
  }
  l->ndim = kept;
}

#define ELEMENT_LOOP(width)                                                \
  for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, (width)); \
  break

/* One element held in a local (so the compiler knows no store changes it) written to n
 * contiguous slots: a vectorized fill (0.9 ms for 19 MB, as torch's, against 1.7 ms for the
 * element loop that rereads it through a pointer that may alias d). */
#define FILL_LOOP(type)                                                              \
  do {                                                                               \
    type v;                                                                          \
    memcpy(&v, s, sizeof v);                                                         \
    for (int64_t i = 0; i < n; i++) memcpy(d + i * (int64_t)sizeof v, &v, sizeof v); \
  } while (0)

/* n elements of itemsize bytes from s (byte stride ss, 0 repeats one element) to d. */
static void inner_copy(char *d, const char *s, int64_t n, int64_t ds, int64_t ss, size_t item) {
  if (ds == (int64_t)item && ss == (int64_t)item) {
    memcpy(d, s, (size_t)n * item);
    return;
  }
  if (ss == 0 && ds == (int64_t)item) {
    switch (item) {
      case 2: FILL_LOOP(uint16_t); return;
      case 4: FILL_LOOP(uint32_t); return;
      case 8: FILL_LOOP(uint64_t); return;
      default: break;
    }
  }
  switch (item) {
    case 1:
      if (ss == 0 && ds == 1) {
        memset(d, *(const unsigned char *)s, (size_t)n);
        break;
      }
      ELEMENT_LOOP(1);
    case 2: ELEMENT_LOOP(2);
    case 4: ELEMENT_LOOP(4);
    case 8: ELEMENT_LOOP(8);
    case 16: ELEMENT_LOOP(16);
    default: ELEMENT_LOOP(item);
  }
}

/* Tiles of a 2-d transpose-like copy. Small on purpose: with a power-of-two row pitch every row
 * of a tile falls in the same cache set, so larger tiles thrash L1 (1024x1024 float32: rows
 * 3.5 ms, 32x32 tiles 3.2 ms, 8x8 tiles 1.0 ms; torch single-threaded 0.68 ms). */
enum { TILE = 8 };

/* The last two dims, n0 x n1 with byte strides (d0, d1) and (s0, s1). When dst runs along the
 * inner dim while src runs along the outer one (a transpose), copy in TILE x TILE blocks. */
static void block_copy(char *d, const char *s, const int64_t *n, const int64_t *dst,
                       const int64_t *src, size_t item) {
  bool transposed =
      src[0] == (int64_t)item && src[1] != (int64_t)item && n[0] >= TILE && n[1] >= TILE;
  if (!transposed) {
    for (int64_t i = 0; i < n[0]; i++)
      inner_copy(d + i * dst[0], s + i * src[0], n[1], dst[1], src[1], item);
    return;
  }
  for (int64_t i0 = 0; i0 < n[0]; i0 += TILE) {
    int64_t e0 = i0 + TILE < n[0] ? i0 + TILE : n[0];
    for (int64_t i1 = 0; i1 < n[1]; i1 += TILE) {
      int64_t len = n[1] - i1 < TILE ? n[1] - i1 : TILE;
      for (int64_t i = i0; i < e0; i++)
        inner_copy(d + i * dst[0] + i1 * dst[1], s + i * src[0] + i1 * src[1], len, dst[1], src[1],
                   item);
    }
  }
}

/* Advances the odometer over the first `outer` dims (moving d and s); false when it wrapped. */
static bool loop_advance(const loop *l, size_t outer, char **d, const char **s) {
  for (size_t k = outer; k-- > 0;) {
    *d += l->dst[k];
    *s += l->src[k];
    if (++l->index[k] < l->sizes[k]) return true;
    *d -= l->dst[k] * l->sizes[k];
    *s -= l->src[k] * l->sizes[k];
    l->index[k] = 0;
  }
  return false;
}

static void loop_run(const loop *l, char *d, const char *s, size_t item) {
  if (l->ndim == 0) { /* one element */
    memcpy(d, s, item);
    return;
  }
  if (l->ndim == 1) {
    inner_copy(d, s, l->sizes[0], l->dst[0], l->src[0], item);
    return;
  }
  size_t inner = l->ndim - 2; /* the last two dims are one block */
  for (size_t k = 0; k < inner; k++) l->index[k] = 0;
  do block_copy(d, s, l->sizes + inner, l->dst + inner, l->src + inner, item);
  while (loop_advance(l, inner, &d, &s));
}

/* The same walk, converting each element from src_type to dst_type. */
static void loop_convert(const loop *l, char *d, const char *s, c10c_dtype dst_type,
                         c10c_dtype src_type) {
  if (l->ndim == 0) {
    c10c__convert_run(d, 0, dst_type, s, 0, src_type, 1);
    return;
  }
  size_t inner = l->ndim - 1;
  for (size_t k = 0; k < inner; k++) l->index[k] = 0;
  do c10c__convert_run(d, l->dst[inner], dst_type, s, l->src[inner], src_type, l->sizes[inner]);
  while (loop_advance(l, inner, &d, &s));
}

static bool is_cuda(const c10c_tensor *t) {
  return c10c_tensor_device(t).type == C10C_DEVICE_TYPE_CUDA;
}

/* A meta tensor has sizes, strides and a dtype but no data: writes to it only check what they
 * would check (ATen's meta kernels), reads of it are refused with torch's words. */
static bool is_meta(const c10c_tensor *t) {
  return c10c_tensor_device(t).type == C10C_DEVICE_TYPE_META;
}

static c10c_status meta_read_error(void) {
  return c10c__fail(C10C_STATUS_NOT_IMPLEMENTED, "Cannot copy out of meta tensor; no data!");
}

/* Data is reachable from the host for CPU tensors, and through the driver for CUDA ones; meta
 * tensors have none to reach. */
static c10c_status check_device(const c10c_tensor *t) {
  if (c10c_tensor_device(t).type != C10C_DEVICE_TYPE_CPU && !is_cuda(t) && !is_meta(t))
    return c10c__fail(C10C_STATUS_NOT_IMPLEMENTED,
                      "copies and fills of %s tensors are not implemented yet",
                      c10c_device_type_name(c10c_tensor_device(t).type, false));
  return C10C_STATUS_OK;
}

/* In-place writes: inference tensors refuse them outside inference mode (c10's bump()). */
static c10c_status check_writable(const c10c_tensor *t) {
  c10c_status st = c10c__check_inplace(t);
  return st == C10C_STATUS_OK ? check_device(t) : st;
}

/* ATen's has_internal_overlap: YES only when a dim of size > 1 has stride 0. */
static bool has_internal_overlap(const c10c_tensor *t) {
  if (c10c_tensor_is_non_overlapping_and_dense(t)) return false;
  const int64_t *sizes = c10c_tensor_sizes(t), *strides = c10c_tensor_strides(t);
  for (size_t d = 0; d < c10c_tensor_dim(t); d++)
    if (strides[d] == 0 && sizes[d] > 1) return true;
  return false;
}

/* ATen's get_overlap_status(a, b) == PARTIAL. */
static bool partially_overlap(const c10c_tensor *a, const c10c_tensor *b) {
  if (a == b || c10c_tensor_numel(a) == 0 || c10c_tensor_numel(b) == 0) return false;
  if (!c10c_tensor_is_non_overlapping_and_dense(a) || !c10c_tensor_is_non_overlapping_and_dense(b))
    return false; /* TOO_HARD: ATen lets it through */
  if (c10c_tensor_storage(a) != c10c_tensor_storage(b)) return false; /* is_alias_of */
  const char *a0 = c10c__tensor_data_unchecked(a), *b0 = c10c__tensor_data_unchecked(b);
  const char *a1 = a0 + c10c_tensor_nbytes(a), *b1 = b0 + c10c_tensor_nbytes(b);
  if (a0 == b0 && a1 == b1) {
    size_t n = c10c_tensor_dim(a);
    return n != c10c_tensor_dim(b) ||
           (n > 0 && memcmp(c10c_tensor_strides(a), c10c_tensor_strides(b), n * sizeof(int64_t)));
  }
  return a0 < b1 && b0 < a1;
}

/* Broadcasting aligns dims from the right: the size `off` places from the last, 1 past the front.
 */
static int64_t size_from_right(const int64_t *sizes, size_t n, size_t off) {
  return off < n ? sizes[n - 1 - off] : 1;
}

/* ATen's infer_size for (dst, src), then the output-shape check of a TensorIterator. */
static c10c_status check_broadcast(const c10c_tensor *dst, const c10c_tensor *src) {
  size_t nd = c10c_tensor_dim(dst), ns = c10c_tensor_dim(src), n = nd > ns ? nd : ns;
  const int64_t *a = c10c_tensor_sizes(dst), *b = c10c_tensor_sizes(src);
  bool matches = ns <= nd;
  for (size_t i = n; i-- > 0;) {
    int64_t sa = size_from_right(a, nd, n - 1 - i), sb = size_from_right(b, ns, n - 1 - i);
    if (sa != sb && sa != 1 && sb != 1)
      return c10c__fail(C10C_STATUS_ERROR,
                        "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                        "non-singleton dimension %zu",
                        (long long)sa, (long long)sb, i);
    if (sa == 1 && sb != 1) matches = false;
  }
  if (matches) return C10C_STATUS_OK;
  int64_t stack[STACK_DIMS], *shape = n <= STACK_DIMS ? stack : c10c__malloc(n * sizeof(int64_t));
  if (shape == NULL) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory in copy_");
  for (size_t i = 0; i < n; i++) {
    int64_t sa = size_from_right(a, nd, n - 1 - i), sb = size_from_right(b, ns, n - 1 - i);
    shape[i] = sa == 1 ? sb : sa;
  }
  char out_list[256], shape_list[256];
  c10c__format_int_list(out_list, sizeof out_list, a, nd);
  c10c__format_int_list(shape_list, sizeof shape_list, shape, n);
  if (shape != stack) c10c__free(shape);
  return c10c__fail(C10C_STATUS_ERROR, "output with shape %s doesn't match the broadcast shape %s",
                    out_list, shape_list);
}

/* Runs the strided kernel writing dst from src (src may be NULL with value: a fill), converting
 * elements when their dtypes differ. */
static c10c_status strided_write(c10c_tensor *dst, const c10c_tensor *src, const void *value) {
  size_t item = c10c_tensor_itemsize(dst), nd = c10c_tensor_dim(dst);
  size_t src_item = src != NULL ? c10c_tensor_itemsize(src) : item;
  size_t ns = src != NULL ? c10c_tensor_dim(src) : 0;
  loop l;
  c10c_status st = loop_init(&l, nd);
  if (st != C10C_STATUS_OK) return st;
  const int64_t *sizes = c10c_tensor_sizes(dst), *dstr = c10c_tensor_strides(dst);
  const int64_t *ssz = src != NULL ? c10c_tensor_sizes(src) : NULL;
  const int64_t *sstr = src != NULL ? c10c_tensor_strides(src) : NULL;
  for (size_t d = 0; d < nd; d++) {
    if (sizes[d] == 1) continue;
    size_t off = nd - 1 - d;
    int64_t src_stride = 0;
    if (src != NULL && off < ns && ssz[ns - 1 - off] != 1) src_stride = sstr[ns - 1 - off];
    l.sizes[l.ndim] = sizes[d];
    l.dst[l.ndim] = dstr[d] * (int64_t)item;
    l.src[l.ndim] = src_stride * (int64_t)src_item;
    l.ndim++;
  }
  loop_simplify(&l);
  if (src != NULL && c10c_tensor_dtype(src) != c10c_tensor_dtype(dst))
    loop_convert(&l, c10c__tensor_data_unchecked(dst), c10c__tensor_data_unchecked(src),
                 c10c_tensor_dtype(dst), c10c_tensor_dtype(src));
  else
    loop_run(&l, c10c__tensor_data_unchecked(dst),
             src != NULL ? c10c__tensor_data_unchecked(src) : value, item);
  c10c__free(l.heap);
  return C10C_STATUS_OK;
}

static const unsigned char zero_bytes[64];

/* memcpy of one element, with the common sizes as constants (no call). */
static const void *copy_element(unsigned char *dst, const void *src, size_t item) {
  switch (item) {
    case 1: memcpy(dst, src, 1); break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 16: memcpy(dst, src, 16); break;
    default: memcpy(dst, src, item);
  }
  return dst;
}

/* A CPU tensor with t's sizes and strides, for staging t's bytes on the host: its storage
 * holds exactly t's span (empty_strided's size). */
static c10c_status host_twin(c10c_tensor **out, const c10c_tensor *t) {
  return c10c_tensor_empty_strided(out, c10c_tensor_sizes(t), c10c_tensor_strides(t),
                                   c10c_tensor_dim(t), c10c_tensor_dtype(t),
                                   (c10c_device){C10C_DEVICE_TYPE_CPU, -1});
}

/* The bytes t's elements lie in, from its first element (strides are not negative) to past its
 * last: numel x itemsize for a dense tensor, more for a strided view. */
static size_t span_bytes(const c10c_tensor *t) {
  if (c10c_tensor_numel(t) == 0) return 0;
  const int64_t *sizes = c10c_tensor_sizes(t), *strides = c10c_tensor_strides(t);
  int64_t last = 0;
  for (size_t d = 0; d < c10c_tensor_dim(t); d++) last += (sizes[d] - 1) * strides[d];
  return (size_t)(last + 1) * c10c_tensor_itemsize(t);
}

static c10c_device_index where(const c10c_tensor *t) {
  return is_cuda(t) ? c10c_tensor_device(t).index : -1;
}

static bool same_geometry(const c10c_tensor *a, const c10c_tensor *b) {
  size_t n = c10c_tensor_dim(a);
  return n == c10c_tensor_dim(b) &&
         (n == 0 || (!memcmp(c10c_tensor_sizes(a), c10c_tensor_sizes(b), n * sizeof(int64_t)) &&
                     !memcmp(c10c_tensor_strides(a), c10c_tensor_strides(b), n * sizeof(int64_t))));
}

/* A CUDA tensor's span on the host, in a CPU tensor of its geometry. */
static c10c_status to_host(c10c_tensor **out, const c10c_tensor *t) {
  c10c_status st = host_twin(out, t);
  if (st == C10C_STATUS_OK)
    st = c10c__cuda_memcpy(c10c__tensor_data_unchecked(*out), -1, c10c__tensor_data_unchecked(t),
                           where(t), span_bytes(t));
  if (st != C10C_STATUS_OK) {
    c10c_tensor_release(*out);
    *out = NULL;
  }
  return st;
}

/* A host twin to write t's elements into before its span goes back to the device: a dense t's
 * span is all elements; a strided one's other bytes are read first, so that writing the span
 * back leaves them as they were. */
static c10c_status host_target(c10c_tensor **out, const c10c_tensor *t) {
  return c10c_tensor_is_non_overlapping_and_dense(t) ? host_twin(out, t) : to_host(out, t);
}

/* copy_ with a CUDA tensor on either side, without kernels: dense tensors of one layout are one
 * driver copy of their bytes; anything else is arranged on the host, where the CPU copy does the
 * strides and broadcasting: the source's span comes to the host, and a CUDA destination's span
 * is read, written there and copied back (stream-ordered, as the driver's synchronous copies
 * are; a strided destination costs its whole span twice). */
static c10c_status cuda_copy(c10c_tensor *dst, const c10c_tensor *src) {
  c10c_status st = check_broadcast(dst, src);
  if (st != C10C_STATUS_OK || c10c_tensor_numel(dst) == 0) return st;
  if (c10c_tensor_dtype(dst) == c10c_tensor_dtype(src) &&
      c10c_tensor_is_non_overlapping_and_dense(dst) &&
      c10c_tensor_is_non_overlapping_and_dense(src) && same_geometry(dst, src))
    return c10c__cuda_memcpy_maybe_async(c10c__tensor_data_unchecked(dst), where(dst),
                                         c10c__tensor_data_unchecked(src), where(src),
                                         span_bytes(dst));
  c10c_tensor *src_host = NULL, *dst_host = NULL;
  const c10c_tensor *from = src;
  if (is_cuda(src)) {
    st = to_host(&src_host, src);
    from = src_host;
  }
  /* checked already (copy_impl's overlap checks, the broadcast above): the CPU kernel alone */
  if (st == C10C_STATUS_OK && !is_cuda(dst)) {
    st = strided_write(dst, from, NULL);
  } else if (st == C10C_STATUS_OK) {
    st = host_target(&dst_host, dst);
    if (st == C10C_STATUS_OK) st = strided_write(dst_host, from, NULL);
    if (st == C10C_STATUS_OK)
      st = c10c__cuda_memcpy(c10c__tensor_data_unchecked(dst), where(dst),
                             c10c__tensor_data_unchecked(dst_host), -1, span_bytes(dst));
  }
  c10c_tensor_release(src_host);
  c10c_tensor_release(dst_host);
  return st;
}

/* Whether the bytes dst's elements lie in and those src's lie in intersect (on one device). Two
 * storages an allocator made hold bytes of their own; external memory (numpy, DLPack) may be
 * anyone's, a libc10c storage's included. */
static bool spans_intersect(const c10c_tensor *dst, const c10c_tensor *src) {
  const c10c_storage *a = c10c_tensor_storage(dst), *b = c10c_tensor_storage(src);
  if (a != b && c10c_storage_allocator(a) != NULL && c10c_storage_allocator(b) != NULL)
    return false;
  if (c10c_tensor_numel(dst) == 0 || c10c_tensor_numel(src) == 0 ||
      !c10c_device_equal(c10c_tensor_device(dst), c10c_tensor_device(src)))
    return false;
  uintptr_t d0 = (uintptr_t)c10c__tensor_data_unchecked(dst),
            s0 = (uintptr_t)c10c__tensor_data_unchecked(src);
  return d0 < s0 + span_bytes(src) && s0 < d0 + span_bytes(dst);
}

/* copy_ without the version bump and inference check: also the second half of clone. */
static c10c_status copy_impl(c10c_tensor *dst, const c10c_tensor *src) {
  c10c_status st = check_device(dst);
  if (st == C10C_STATUS_OK) st = check_device(src);
  if (st != C10C_STATUS_OK) return st;
  /* ATen's meta copy_ checks only the shapes (no dtype, overlap or storage checks: there are no
   * bytes); a meta src with a real dst is refused before anything else, as torch */
  if (is_meta(dst)) return check_broadcast(dst, src);
  if (is_meta(src)) return meta_read_error();
  st = c10c__tensor_check_extent(dst, "copy_ (to this tensor)");
  if (st == C10C_STATUS_OK) st = c10c__tensor_check_extent(src, "copy_ (from this tensor)");
  if (st != C10C_STATUS_OK) return st;
  c10c_dtype to = c10c_tensor_dtype(dst), from = c10c_tensor_dtype(src);
  /* ATen's quantized copy_: never to a plain dtype, nor between two quantized ones */
  if (to != from && c10c_dtype_is_quantized(from))
    return c10c__fail(C10C_STATUS_ERROR,
                      c10c_dtype_is_quantized(to)
                          ? "Expected self.scalar_type() == src.scalar_type() to be true, but got "
                            "false.  (Could this error message be improved?  If so, please report "
                            "an enhancement request to PyTorch.)"
                          : "Copying from quantized Tensor to non-quantized Tensor is not "
                            "allowed, please use dequantize to get a float Tensor from a "
                            "quantized Tensor");
  if (to != from && (!c10c__convertible(to) || !c10c__convertible(from)))
    return c10c__fail(C10C_STATUS_NOT_IMPLEMENTED,
                      "copy_ from %s to %s: conversions of %s are not implemented",
                      c10c_dtype_c10_name(from), c10c_dtype_c10_name(to),
                      c10c_dtype_c10_name(c10c__convertible(from) ? to : from));
  /* ATen's early exit: dst and src are the same view of the same storage, with the same dtype
   * (two dtypes over the same bytes convert in place, or partly overlap). */
  size_t n = c10c_tensor_dim(dst);
  size_t bytes = n * sizeof(int64_t);
  bool same = c10c_tensor_storage(dst) == c10c_tensor_storage(src) && to == from &&
              c10c_tensor_storage_offset(dst) == c10c_tensor_storage_offset(src) &&
              n == c10c_tensor_dim(src) &&
              (n == 0 || (!memcmp(c10c_tensor_sizes(dst), c10c_tensor_sizes(src), bytes) &&
                          !memcmp(c10c_tensor_strides(dst), c10c_tensor_strides(src), bytes)));
  if (same) return C10C_STATUS_OK;
  if (has_internal_overlap(dst)) return c10c__fail(C10C_STATUS_ERROR, internal_overlap_message);
  if (partially_overlap(dst, src)) return c10c__fail(C10C_STATUS_ERROR, partial_overlap_message);
  if (spans_intersect(dst, src)) {
    /* What ATen lets through (views it cannot prove apart, such as t[:, 1:] from t[:, :3]) it
     * copies in the order of its loops, so its result depends on its vector width (rows of 3
     * come out smeared, rows of 31 half shifted). Here src is read whole before dst is written,
     * as numpy does: through a copy of src, so no loop ever copies between overlapping bytes. */
    c10c_tensor *staged = NULL;
    st = check_broadcast(dst, src);
    if (st == C10C_STATUS_OK) st = c10c_tensor_clone(&staged, src, C10C_MEMORY_FORMAT_PRESERVE);
    if (st == C10C_STATUS_OK) st = copy_impl(dst, staged);
    c10c_tensor_release(staged);
    return st;
  }
  if (is_cuda(dst) || is_cuda(src)) return cuda_copy(dst, src);
  st = check_broadcast(dst, src);
  if (st == C10C_STATUS_OK && c10c_tensor_numel(dst) > 0) st = strided_write(dst, src, NULL);
  return st;
}

c10c_status c10c_tensor_copy_(c10c_tensor *dst, const c10c_tensor *src) {
  C10C__CHECK_NOT_NULL(dst);
  C10C__CHECK_NOT_NULL(src);
  c10c_status st = check_writable(dst);
  if (st == C10C_STATUS_OK) st = copy_impl(dst, src);
  return st == C10C_STATUS_OK ? c10c_tensor_bump_version(dst) : st;
}

/* fill_ without the version bump; value NULL writes zero bytes. */
static c10c_status fill_impl(c10c_tensor *tensor, const void *value, const char *op) {
  c10c_status st = check_device(tensor);
  if (st != C10C_STATUS_OK || is_meta(tensor)) return st; /* a meta fill writes nothing */
  st = c10c__tensor_check_extent(tensor, op);
  if (st != C10C_STATUS_OK || c10c_tensor_numel(tensor) == 0) return st;
  /* the value is read once, before any write: it may lie in the tensor's own bytes */
  unsigned char element[sizeof zero_bytes];
  if (c10c_tensor_itemsize(tensor) > sizeof element)
    return c10c__fail(C10C_STATUS_INTERNAL, "%s: itemsize above %zu bytes", op, sizeof element);
  if (value != NULL) value = copy_element(element, value, c10c_tensor_itemsize(tensor));
  bool dense = c10c_tensor_is_non_overlapping_and_dense(tensor);
  if (dense && value == NULL) { /* zeros over a dense span: one memset (the driver's on CUDA) */
    if (is_cuda(tensor))
      return c10c__cuda_memzero(c10c__tensor_data_unchecked(tensor), where(tensor),
                                span_bytes(tensor));
    memset(c10c__tensor_data_unchecked(tensor), 0, span_bytes(tensor));
    return C10C_STATUS_OK;
  }
  if (value == NULL) value = zero_bytes;
  if (is_cuda(tensor)) { /* through a host twin of its span, as cuda_copy */
    c10c_tensor *staged = NULL;
    st = host_target(&staged, tensor);
    if (st == C10C_STATUS_OK) st = strided_write(staged, NULL, value);
    if (st == C10C_STATUS_OK)
      st = c10c__cuda_memcpy(c10c__tensor_data_unchecked(tensor), where(tensor),
                             c10c__tensor_data_unchecked(staged), -1, span_bytes(tensor));
    c10c_tensor_release(staged);
    return st;
  }
  return strided_write(tensor, NULL, value);
}

c10c_status c10c_tensor_fill_(c10c_tensor *tensor, const void *value) {
  C10C__CHECK_NOT_NULL(tensor);
  C10C__CHECK_NOT_NULL(value);
  c10c_status st = check_writable(tensor);
  if (st == C10C_STATUS_OK) st = fill_impl(tensor, value, "fill_");
  return st == C10C_STATUS_OK ? c10c_tensor_bump_version(tensor) : st;
}

c10c_status c10c_tensor_zero_(c10c_tensor *tensor) {
  C10C__CHECK_NOT_NULL(tensor);
  c10c_status st = check_writable(tensor);
  if (st == C10C_STATUS_OK) st = fill_impl(tensor, NULL, "zero_");
  return st == C10C_STATUS_OK ? c10c_tensor_bump_version(tensor) : st;
}

/* ATen's infer_dense_strides: dense strides that keep the order of t's strides (the stable
 * insertion sort TensorIterator uses; stride-0 dims stay put). */
static void infer_dense_strides(int64_t *out, const int64_t *sizes, const int64_t *strides,
                                size_t n, size_t *perm) {
  for (size_t i = 0; i < n; i++) perm[i] = n - 1 - i;
  for (size_t i = 1; i < n; i++) {
    size_t dim1 = i;
    for (size_t j = 1; j <= i; j++) {
      size_t dim0 = i - j;
      int64_t s0 = strides[perm[dim0]], s1 = strides[perm[dim1]];
      int cmp = 0;
      if (s0 != 0 && s1 != 0) {
        if (s0 < s1)
          cmp = -1;
        else if (s0 > s1)
          cmp = 1;
        else if (sizes[perm[dim0]] > sizes[perm[dim1]])
          cmp = 1;
      }
      if (cmp > 0) {
        size_t tmp = perm[dim0];
        perm[dim0] = perm[dim1];
        perm[dim1] = tmp;
        dim1 = dim0;
      } else if (cmp < 0) {
        break;
      }
    }
  }
  int64_t stride = 1;
  for (size_t i = 0; i < n; i++) {
    out[perm[i]] = stride;
    if (sizes[perm[i]] > 1) stride *= sizes[perm[i]];
  }
}

c10c_status c10c_tensor_empty_like(c10c_tensor **out, const c10c_tensor *tensor, c10c_dtype dtype,
                                   c10c_device device, c10c_memory_format memory_format) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  C10C__CHECK_NOT_NULL(tensor);
  size_t n = c10c_tensor_dim(tensor);
  const int64_t *sizes = c10c_tensor_sizes(tensor);
  if (memory_format != C10C_MEMORY_FORMAT_PRESERVE)
    return c10c_tensor_empty(out, sizes, n, dtype, device, memory_format);
  if (c10c_tensor_is_non_overlapping_and_dense(tensor))
    return c10c_tensor_empty_strided(out, sizes, c10c_tensor_strides(tensor), n, dtype, device);
  int64_t stack[STACK_DIMS * 2];
  int64_t *strides = n <= STACK_DIMS ? stack : c10c__malloc(n * 2 * sizeof(int64_t));
  if (strides == NULL) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory in empty_like");
  infer_dense_strides(strides, sizes, c10c_tensor_strides(tensor), n,
                      (size_t *)(void *)(strides + n));
  c10c_status st = c10c_tensor_empty_strided(out, sizes, strides, n, dtype, device);
  if (strides != stack) c10c__free(strides);
  return st;
}

/* Releases made and clears *out when st is an error. */
static c10c_status finish_new(c10c_tensor **out, c10c_status st) {
  if (st != C10C_STATUS_OK) {
    c10c_tensor_release(*out);
    *out = NULL;
  }
  return st;
}

c10c_status c10c_tensor_full_like(c10c_tensor **out, const c10c_tensor *tensor, c10c_dtype dtype,
                                  c10c_device device, c10c_memory_format memory_format,
                                  const void *value) {
  C10C__CHECK_NOT_NULL(out);
  c10c_status st = c10c_tensor_empty_like(out, tensor, dtype, device, memory_format);
  if (st == C10C_STATUS_OK) st = fill_impl(*out, value, "full_like");
  return finish_new(out, st);
}

c10c_status c10c_tensor_full(c10c_tensor **out, const int64_t *sizes, size_t ndim, c10c_dtype dtype,
                             c10c_device device, c10c_memory_format memory_format,
                             const void *value) {
  C10C__CHECK_NOT_NULL(out);
  c10c_status st = c10c_tensor_empty(out, sizes, ndim, dtype, device, memory_format);
  if (st == C10C_STATUS_OK) st = fill_impl(*out, value, "full");
  return finish_new(out, st);
}

c10c_status c10c_tensor_clone(c10c_tensor **out, const c10c_tensor *tensor,
                              c10c_memory_format memory_format) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  C10C__CHECK_NOT_NULL(tensor);
  /* before the copy is made: a shrunk storage is the error, not the copy's size (a meta tensor
   * has no bytes to read: its clone is its geometry, as torch's) */
  c10c_status st = is_meta(tensor) ? C10C_STATUS_OK : c10c__tensor_check_extent(tensor, "clone");
  if (st == C10C_STATUS_OK)
    st = c10c_tensor_empty_like(out, tensor, c10c_tensor_dtype(tensor), c10c_tensor_device(tensor),
                                memory_format);
  if (st == C10C_STATUS_OK) st = copy_impl(*out, tensor);
  return finish_new(out, st);
}

c10c_status c10c_tensor_contiguous(c10c_tensor **out, const c10c_tensor *tensor,
                                   c10c_memory_format memory_format) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  C10C__CHECK_NOT_NULL(tensor);
  /* ATen's order: a tensor contiguous in the format is returned as it is, PRESERVE included
   * (is_contiguous(Preserve) asks for row-major contiguity: torch's x.contiguous(
   * memory_format=torch.preserve_format) is x); only a copy in PRESERVE is refused. */
  bool contiguous = false;
  c10c_status st = c10c_tensor_is_contiguous(&contiguous, tensor, memory_format);
  if (st != C10C_STATUS_OK) return st;
  if (contiguous) {
    *out = c10c_tensor_retain((c10c_tensor *)(uintptr_t)tensor);
    return C10C_STATUS_OK;
  }
  if (memory_format == C10C_MEMORY_FORMAT_PRESERVE)
    return c10c__fail(C10C_STATUS_ERROR,
                      "preserve memory format is unsupported by the contiguous operator");
  return c10c_tensor_clone(out, tensor, memory_format);
}
