/* Views: new tensors over the same storage with another geometry, following ATen's rules and
 * messages (TensorShape.cpp, InferSize.h, ExpandUtils.cpp). Each works on
 * a stack copy of sizes and strides and ends in c10c__tensor_make_view. */
#include <stdio.h>
#include <string.h>

#include "checked.h"
#include "geometry.h"
#include "sysmem.h"
#include "tensor_internal.h"

/* Dims on the stack up to this rank; larger ranks borrow heap scratch. */
enum { STACK_DIMS = 16 };

typedef struct geometry {
  int64_t *sizes, *strides;
  size_t ndim;
  int64_t offset;
  int64_t stack[2 * STACK_DIMS];
  int64_t *heap;
} geometry;

/* Scratch for `capacity` dims, starting as a copy of t's geometry (first `ndim` dims). */
static c10c_status geometry_init(geometry *g, const c10c_tensor *t, size_t capacity) {
  size_t ndim = c10c_tensor_dim(t);
  if (capacity < ndim) capacity = ndim;
  g->heap = NULL;
  if (capacity > STACK_DIMS) {
    g->heap = c10c__malloc(2 * capacity * sizeof(int64_t));
    if (g->heap == NULL)
      return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory computing a view");
    g->sizes = g->heap;
  } else {
    g->sizes = g->stack;
  }
  g->strides = g->sizes + capacity;
  g->ndim = ndim;
  g->offset = c10c_tensor_storage_offset(t);
  if (ndim > 0) {
    memcpy(g->sizes, c10c_tensor_sizes(t), ndim * sizeof(int64_t));
    memcpy(g->strides, c10c_tensor_strides(t), ndim * sizeof(int64_t));
  }
  return C10C_STATUS_OK;
}

/* same_elements: as c10c__tensor_make_view's. */
static c10c_status geometry_finish(c10c_tensor **out, const c10c_tensor *t, geometry *g,
                                   c10c_status st, bool same_elements) {
  if (st == C10C_STATUS_OK)
    st = c10c__tensor_make_view(out, t, g->sizes, g->strides, g->ndim, g->offset, same_elements);
  c10c__free(g->heap);
  return st;
}

/* Views wrap dims as ATen's maybe_wrap_dim with wrap_scalar: a 0-dim tensor accepts 0 and -1. */
static c10c_status wrap(int64_t *dim, int64_t ndim) {
  if (*dim >= 0 && *dim < ndim) return C10C_STATUS_OK; /* the common case, without a call */
  return c10c__wrap_dim(dim, ndim, true);
}

/* as_strided's refusal, which slice() meets too when a step overflows a stride */
static c10c_status negative_strides(const int64_t *strides, size_t n) {
  char list[256];
  c10c__format_int_list(list, sizeof list, strides, n);
  return c10c__fail(C10C_STATUS_ERROR,
                    "as_strided: Negative strides are not supported at the moment, got strides: %s",
                    list);
}

/* What a view's size, stride or offset arithmetic could not hold in int64. Only a tensor without
 * elements (whose sizes and strides may be anything) or over an external storage claiming more
 * than 2^62 bytes can get here; ATen lets the values wrap (undefined in C++), into negative or
 * wrong strides and offsets. */
static c10c_status overflow(const char *op, const char *what, int64_t a, int64_t b) {
  return c10c__fail(C10C_STATUS_OVERFLOW, "%s: %s (%lld and %lld) overflows int64", op, what,
                    (long long)a, (long long)b);
}

/* strides[dim] *= step for a dim left with `count` elements (slice, unfold). ATen's product
 * wraps (t[::2**62] of a float tensor). Wrapped negative, its as_strided refuses the view with
 * that message, kept here (torch: as_strided([2], [8]).unfold(0, 1, 2**60 + 2**59); at exactly
 * INT64_MIN torch fails earlier, that its SymInt cannot hold the value). Wrapped positive,
 * ATen's view has that stride: harmless on a dim of 0 or 1 elements, which nothing moves along
 * (kept, as torch), a wrong view otherwise (refused). strides holds the n strides the message
 * lists. */
static c10c_status step_stride(const char *op, int64_t *strides, size_t n, size_t dim, int64_t step,
                               int64_t count) {
  int64_t stride = strides[dim];
  if (!c10c__mul_overflows(stride, step, &strides[dim])) return C10C_STATUS_OK;
  strides[dim] = (int64_t)((uint64_t)stride * (uint64_t)step);
  if (strides[dim] < 0) return negative_strides(strides, n);
  if (count > 1) return overflow(op, "stride * step", stride, step);
  return C10C_STATUS_OK;
}

/* out = a + b * c, false when any step overflows. */
static bool add_mul(int64_t *out, int64_t a, int64_t b, int64_t c) {
  int64_t product;
  return !c10c__mul_overflows(b, c, &product) && !c10c__add_overflows(a, product, out);
}

#define CHECK_ARGS(out, t)     \
  do {                         \
    C10C__CHECK_NOT_NULL(out); \
    *(out) = NULL;             \
    C10C__CHECK_NOT_NULL(t);   \
  } while (0)

/* ---- transpose, permute ---- */

c10c_status c10c_tensor_transpose(c10c_tensor **out, const c10c_tensor *t, int64_t dim0,
                                  int64_t dim1) {
  CHECK_ARGS(out, t);
  int64_t n = (int64_t)c10c_tensor_dim(t);
  c10c_status st = wrap(&dim0, n);
  if (st == C10C_STATUS_OK) st = wrap(&dim1, n);
  if (st != C10C_STATUS_OK) return st;
  int64_t *sizes, *strides;
  st = c10c__tensor_view_start(out, t, (size_t)n, true, &sizes, &strides);
  if (st != C10C_STATUS_OK) return st;
  if (n > 0 && dim0 != dim1) {
    int64_t s = sizes[dim0], r = strides[dim0];
    sizes[dim0] = sizes[dim1], strides[dim0] = strides[dim1];
    sizes[dim1] = s, strides[dim1] = r;
  }
  return c10c__tensor_view_finish(out, c10c_tensor_storage_offset(t), true);
}

c10c_status c10c_tensor_permute(c10c_tensor **out, const c10c_tensor *t, const int64_t *dims,
                                size_t ndims) {
  CHECK_ARGS(out, t);
  if (ndims > 0) C10C__CHECK_NOT_NULL(dims);
  size_t n = c10c_tensor_dim(t);
  if (ndims != n)
    return c10c__fail(C10C_STATUS_ERROR,
                      "permute(sparse_coo): number of dimensions in the tensor input does not "
                      "match the length of the desired ordering of dimensions i.e. input.dim() = "
                      "%zu is not equal to len(dims) = %zu",
                      n, ndims);
  /* scratch: the source in [0, n), the wrapped dims in [n, 2n), the result sizes in [2n, 3n) */
  geometry g;
  c10c_status st = geometry_init(&g, t, 3 * n);
  if (st != C10C_STATUS_OK) return st;
  int64_t *perm = g.sizes + n, *new_sizes = g.sizes + 2 * n, *new_strides = g.strides + n;
  for (size_t i = 0; i < n && st == C10C_STATUS_OK; i++) {
    perm[i] = dims[i];
    st = wrap(&perm[i], (int64_t)n);
    for (size_t j = 0; j < i && st == C10C_STATUS_OK; j++)
      if (perm[j] == perm[i])
        st = c10c__fail(C10C_STATUS_ERROR, "permute(): duplicate dims are not allowed.");
  }
  if (st == C10C_STATUS_OK) {
    for (size_t i = 0; i < n; i++) {
      new_sizes[i] = g.sizes[perm[i]];
      new_strides[i] = g.strides[perm[i]];
    }
    memmove(g.sizes, new_sizes, n * sizeof(int64_t));
    memmove(g.strides, new_strides, n * sizeof(int64_t));
  }
  return geometry_finish(out, t, &g, st, true);
}

/* ---- narrow, select, slice ---- */

c10c_status c10c_tensor_slice(c10c_tensor **out, const c10c_tensor *t, int64_t dim, int64_t start,
                              int64_t end, int64_t step) {
  CHECK_ARGS(out, t);
  int64_t n = (int64_t)c10c_tensor_dim(t);
  if (n == 0)
    return c10c__fail(C10C_STATUS_INDEX_OUT_OF_RANGE,
                      "slice() cannot be applied to a 0-dim tensor.");
  c10c_status st = wrap(&dim, n);
  if (st != C10C_STATUS_OK) return st;
  if (step <= 0) return c10c__fail(C10C_STATUS_ERROR, "slice step must be positive");
  int64_t *sizes, *strides;
  st = c10c__tensor_view_start(out, t, (size_t)n, true, &sizes, &strides);
  if (st != C10C_STATUS_OK) return st;
  int64_t size = sizes[dim];
  if (start < 0) start += size;
  if (end < 0) end += size;
  if (start < 0)
    start = 0;
  else if (start >= size)
    start = size;
  if (end < start)
    end = start;
  else if (end >= size)
    end = size;
  int64_t offset = 0;
  int64_t size_after = end == start ? 0 : 1 + (end - start - 1) / step; /* ATen's ceil */
  if (!add_mul(&offset, c10c_tensor_storage_offset(t), start, strides[dim]))
    st = overflow("slice", "storage offset + start * stride", start, strides[dim]);
  else
    st = step_stride("slice", strides, (size_t)n, (size_t)dim, step, size_after);
  if (st != C10C_STATUS_OK) {
    c10c_tensor_release(*out);
    *out = NULL;
    return st;
  }
  sizes[dim] = size_after;
  return c10c__tensor_view_finish(out, offset, false);
}

c10c_status c10c_tensor_narrow(c10c_tensor **out, const c10c_tensor *t, int64_t dim, int64_t start,
                               int64_t length) {
  CHECK_ARGS(out, t);
  int64_t n = (int64_t)c10c_tensor_dim(t);
  if (n == 0) return c10c__fail(C10C_STATUS_ERROR, "narrow() cannot be applied to a 0-dim tensor.");
  if (length < 0) return c10c__fail(C10C_STATUS_ERROR, "narrow(): length must be non-negative.");
  c10c_status st = wrap(&dim, n);
  if (st != C10C_STATUS_OK) return st;
  int64_t size = c10c_tensor_sizes(t)[dim];
  if (start < -size || start > size)
    return c10c__fail(C10C_STATUS_INDEX_OUT_OF_RANGE,
                      "start out of range (expected to be in range of [%lld, %lld], but got %lld)",
                      (long long)-size, (long long)size, (long long)start);
  if (start < 0) start += size;
  if (start > size - length)
    return c10c__fail(C10C_STATUS_ERROR,
                      "start (%lld) + length (%lld) exceeds dimension size (%lld).",
                      (long long)start, (long long)length, (long long)size);
  return c10c_tensor_slice(out, t, dim, start, start + length, 1);
}

c10c_status c10c_tensor_select(c10c_tensor **out, const c10c_tensor *t, int64_t dim,
                               int64_t index) {
  CHECK_ARGS(out, t);
  int64_t n = (int64_t)c10c_tensor_dim(t);
  if (n == 0)
    return c10c__fail(C10C_STATUS_INDEX_OUT_OF_RANGE,
                      "select() cannot be applied to a 0-dim tensor.");
  c10c_status st = wrap(&dim, n);
  if (st != C10C_STATUS_OK) return st;
  int64_t size = c10c_tensor_sizes(t)[dim];
  if (index < -size || index >= size) {
    char list[256];
    c10c__format_int_list(list, sizeof list, c10c_tensor_sizes(t), (size_t)n);
    return c10c__fail(C10C_STATUS_INDEX_OUT_OF_RANGE,
                      "select(): index %lld out of range for tensor of size %s at dimension %lld",
                      (long long)index, list, (long long)dim);
  }
  if (index < 0) index += size;
  const int64_t *old_sizes = c10c_tensor_sizes(t), *old_strides = c10c_tensor_strides(t);
  int64_t offset;
  if (!add_mul(&offset, c10c_tensor_storage_offset(t), index, old_strides[dim]))
    return overflow("select()", "storage offset + index * stride", index, old_strides[dim]);
  int64_t *sizes, *strides;
  st = c10c__tensor_view_start(out, t, (size_t)n - 1, false, &sizes, &strides);
  if (st != C10C_STATUS_OK) return st;
  for (int64_t i = 0, j = 0; i < n; i++) {
    if (i == dim) continue;
    sizes[j] = old_sizes[i];
    strides[j++] = old_strides[i];
  }
  return c10c__tensor_view_finish(out, offset, false);
}

/* ---- squeeze, unsqueeze ---- */

c10c_status c10c_tensor_unsqueeze(c10c_tensor **out, const c10c_tensor *t, int64_t dim) {
  CHECK_ARGS(out, t);
  int64_t n = (int64_t)c10c_tensor_dim(t);
  c10c_status st = wrap(&dim, n + 1);
  if (st != C10C_STATUS_OK) return st;
  geometry g;
  st = geometry_init(&g, t, (size_t)n + 1);
  if (st != C10C_STATUS_OK) return st;
  int64_t stride = 1;
  if (dim < n && c10c__mul_overflows(g.sizes[dim], g.strides[dim], &stride))
    return geometry_finish(
        out, t, &g,
        overflow("unsqueeze", "the new dim's stride, size * stride", g.sizes[dim], g.strides[dim]),
        true); /* (the message is made before the scratch is freed) */
  memmove(g.sizes + dim + 1, g.sizes + dim, (size_t)(n - dim) * sizeof(int64_t));
  memmove(g.strides + dim + 1, g.strides + dim, (size_t)(n - dim) * sizeof(int64_t));
  g.sizes[dim] = 1;
  g.strides[dim] = stride;
  g.ndim++;
  return geometry_finish(out, t, &g, C10C_STATUS_OK, true);
}

/* Removes the size-1 dims marked in `drop` (one flag per dim; NULL marks every dim). */
static c10c_status squeeze_marked(c10c_tensor **out, const c10c_tensor *t, const bool *drop) {
  geometry g;
  c10c_status st = geometry_init(&g, t, 0);
  if (st != C10C_STATUS_OK) return st;
  size_t kept = 0;
  for (size_t d = 0; d < g.ndim; d++) {
    if ((drop == NULL || drop[d]) && g.sizes[d] == 1) continue;
    g.sizes[kept] = g.sizes[d];
    g.strides[kept] = g.strides[d];
    kept++;
  }
  g.ndim = kept;
  return geometry_finish(out, t, &g, C10C_STATUS_OK, true);
}

c10c_status c10c_tensor_squeeze(c10c_tensor **out, const c10c_tensor *t) {
  CHECK_ARGS(out, t);
  return squeeze_marked(out, t, NULL);
}

c10c_status c10c_tensor_squeeze_dims(c10c_tensor **out, const c10c_tensor *t, const int64_t *dims,
                                     size_t ndims) {
  CHECK_ARGS(out, t);
  if (ndims > 0) C10C__CHECK_NOT_NULL(dims);
  size_t n = c10c_tensor_dim(t);
  /* One slot even for a 0-dim tensor: wrap() maps its dims to 0, and a repeat is still an error. */
  bool stack[64], *drop = n <= 64 ? stack : c10c__malloc(n);
  if (drop == NULL) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory in squeeze");
  for (size_t d = 0; d < (n > 0 ? n : 1); d++) drop[d] = false;
  c10c_status st = C10C_STATUS_OK;
  for (size_t i = 0; i < ndims && st == C10C_STATUS_OK; i++) {
    int64_t d = dims[i];
    st = wrap(&d, (int64_t)n);
    if (st != C10C_STATUS_OK) break;
    if (drop[d])
      st = c10c__fail(C10C_STATUS_ERROR, "dim %lld appears multiple times in the list of dims",
                      (long long)d);
    else
      drop[d] = true;
  }
  if (n == 0) drop[0] = false; /* nothing to squeeze in a 0-dim tensor */
  if (st == C10C_STATUS_OK) st = squeeze_marked(out, t, drop);
  if (drop != stack) c10c__free(drop);
  return st;
}

/* ---- expand ---- */

/* Whether torch's Python layer renames "CPU<T>Type" and "CUDA<T>Type" to a legacy tensor type
 * ("torch.FloatTensor", "torch.cuda.ByteTensor"): only these eight dtypes have one. */
static bool has_legacy_type(c10c_dtype dtype) {
  switch (dtype) {
    case C10C_DTYPE_UINT8:
    case C10C_DTYPE_INT8:
    case C10C_DTYPE_INT16:
    case C10C_DTYPE_INT32:
    case C10C_DTYPE_INT64:
    case C10C_DTYPE_FLOAT16:
    case C10C_DTYPE_FLOAT32:
    case C10C_DTYPE_FLOAT64: return true;
    default: return false;
  }
}

/* How torch names a tensor in expand's message: ATen's TensorBase::toString() gives the backend
 * dispatch key, the scalar type and "Type" ("CPUFloatType", "MetaBoolType",
 * "QuantizedCPUQInt8Type"; PrivateUse1 under its backend's name), and torch's Python layer then
 * renames the CPU and CUDA types of the eight legacy dtypes ("torch.FloatTensor",
 * "torch.cuda.HalfTensor") but no other (torch 2.13: "expand(CPUBoolType{[3, 1]}, ..."). */
static void describe(char *buf, size_t size, const c10c_tensor *t) {
  char list[256];
  c10c__format_int_list(list, sizeof list, c10c_tensor_sizes(t), c10c_tensor_dim(t));
  c10c_dtype dtype = c10c_tensor_dtype(t);
  c10c_device_type type = c10c_tensor_device(t).type;
  const char *scalar = c10c_dtype_c10_name(dtype);
  if ((type == C10C_DEVICE_TYPE_CPU || type == C10C_DEVICE_TYPE_CUDA) && has_legacy_type(dtype)) {
    snprintf(buf, size, "torch.%s%sTensor{%s}", type == C10C_DEVICE_TYPE_CPU ? "" : "cuda.", scalar,
             list);
    return;
  }
  /* a tensor exists only where c10 computes a key (tensor.c's key set needs one) */
  c10c_dispatch_key key = C10C_DISPATCH_KEY_UNDEFINED;
  c10c_dispatch_key_compute(&key, dtype, C10C_LAYOUT_STRIDED, type);
  const char *backend = key == C10C_DISPATCH_KEY_PRIVATE_USE1 ? c10c_privateuse1_backend_name(true)
                                                              : c10c_dispatch_key_name(key);
  snprintf(buf, size, "%s%sType{%s}", backend, scalar, list);
}

c10c_status c10c_tensor_expand(c10c_tensor **out, const c10c_tensor *t, const int64_t *sizes,
                               size_t nsizes) {
  CHECK_ARGS(out, t);
  if (nsizes > 0) C10C__CHECK_NOT_NULL(sizes);
  size_t n = c10c_tensor_dim(t);
  if (nsizes < n) {
    char what[320], list[256];
    describe(what, sizeof what, t);
    c10c__format_int_list(list, sizeof list, sizes, nsizes);
    return c10c__fail(C10C_STATUS_ERROR,
                      "expand(%s, size=%s): the number of sizes provided (%zu) must be greater or "
                      "equal to the number of dimensions in the tensor (%zu)",
                      what, list, nsizes, n);
  }
  geometry g;
  c10c_status st = geometry_init(&g, t, nsizes + n);
  if (st != C10C_STATUS_OK) return st;
  const int64_t *old_sizes = c10c_tensor_sizes(t), *old_strides = c10c_tensor_strides(t);
  int64_t *new_sizes = g.sizes, *new_strides = g.strides;
  bool negative = false;
  for (size_t k = nsizes; k-- > 0 && st == C10C_STATUS_OK;) {
    size_t offset = nsizes - n;
    bool existing = k >= offset;
    int64_t size = existing ? old_sizes[k - offset] : 1;
    int64_t target = sizes[k];
    /* -1 keeps an existing size and is refused for a new leading dim, except (as ATen) when the
     * tensor is 0-dim, where it stays -1 and fails below. */
    if (target == -1 && !existing && n > 0) {
      st = c10c__fail(C10C_STATUS_ERROR,
                      "The expanded size of the tensor (%lld) isn't allowed in a leading, "
                      "non-existing dimension %zu",
                      (long long)target, k);
      break;
    }
    if (target == -1 && existing) target = size;
    if (size != target && size != 1) {
      char target_list[256], tensor_list[256];
      c10c__format_int_list(target_list, sizeof target_list, sizes, nsizes);
      c10c__format_int_list(tensor_list, sizeof tensor_list, old_sizes, n);
      st = c10c__fail(C10C_STATUS_ERROR,
                      "The expanded size of the tensor (%lld) must match the existing size "
                      "(%lld) at non-singleton dimension %zu.  Target sizes: %s.  Tensor "
                      "sizes: %s",
                      (long long)target, (long long)size, k, target_list, tensor_list);
      break;
    }
    /* ATen lets other negative sizes through to its numel check (after this loop), which fails
     * on them unless a size is 0 ([-5, 0] becomes a tensor of size -5); refused below whatever
     * the other sizes. */
    negative |= target < 0;
    int64_t stride = 0; /* a broadcast dim */
    if (size == target && existing) {
      stride = old_strides[k - offset];
    } else if (size == target && k + 1 < nsizes && !negative &&
               c10c__mul_overflows(new_sizes[k + 1], new_strides[k + 1], &stride)) {
      /* a new leading dim of size 1: the next dim's size * stride, as ATen */
      st = overflow("expand", "a new dim's stride, size * stride", new_sizes[k + 1],
                    new_strides[k + 1]);
      break;
    }
    /* (a new last dim of size 1 gets stride 0, as ATen: verified, 0-dim expanded to (1,)) */
    new_sizes[k] = target;
    new_strides[k] = stride;
  }
  if (st == C10C_STATUS_OK && negative)
    st = c10c__fail(C10C_STATUS_OVERFLOW, "numel: integer multiplication overflow");
  g.ndim = nsizes;
  return geometry_finish(out, t, &g, st, true);
}

/* ---- view ---- */

/* ATen's infer_size: at most one -1, replaced by what makes the numel match. */
static c10c_status infer_size(int64_t *shape, size_t n, int64_t numel) {
  int64_t product = 1;
  long infer = -1;
  bool overflow = false;
  for (size_t i = 0; i < n; i++) {
    if (shape[i] == -1) {
      if (infer >= 0) return c10c__fail(C10C_STATUS_ERROR, "only one dimension can be inferred");
      infer = (long)i;
    } else if (shape[i] >= 0) {
      overflow |= c10c__mul_overflows(product, shape[i], &product);
    } else {
      char list[256];
      c10c__format_int_list(list, sizeof list, shape, n);
      return c10c__fail(C10C_STATUS_ERROR, "invalid shape dimension %lld at index %zu of shape %s",
                        (long long)shape[i], i, list);
    }
  }
  char list[256]; /* formatted only for an error: snprintf would triple view()'s cost */
  if (!overflow && (numel == product || (infer >= 0 && product > 0 && numel % product == 0))) {
    if (infer >= 0) {
      /* numel == product == 0: the -1 could be anything */
      if (product == 0) {
        c10c__format_int_list(list, sizeof list, shape, n);
        return c10c__fail(C10C_STATUS_ERROR,
                          "cannot reshape tensor of 0 elements into shape %s because the "
                          "unspecified dimension size -1 can be any value and is ambiguous",
                          list);
      }
      shape[infer] = numel / product;
    }
    return C10C_STATUS_OK;
  }
  c10c__format_int_list(list, sizeof list, shape, n);
  return c10c__fail(C10C_STATUS_ERROR, "shape '%s' is invalid for input of size %lld", list,
                    (long long)numel);
}

/* ATen's computeStride: strides for viewing (old sizes, old strides) as new sizes. */
typedef enum { STRIDES_OK, STRIDES_INCOMPATIBLE, STRIDES_OVERFLOW } strides_result;

static strides_result compute_stride(int64_t *new_strides, const int64_t *old_sizes,
                                     const int64_t *old_strides, size_t old_n,
                                     const int64_t *new_sizes, size_t new_n, int64_t numel) {
  if (old_n == 0) {
    for (size_t i = 0; i < new_n; i++) new_strides[i] = 1;
    return STRIDES_OK;
  }
  if (numel == 0) {
    bool same = old_n == new_n && memcmp(old_sizes, new_sizes, new_n * sizeof(int64_t)) == 0;
    if (same) {
      memcpy(new_strides, old_strides, new_n * sizeof(int64_t));
      return STRIDES_OK;
    }
    /* as a new tensor's: the sizes of a tensor without elements may multiply past int64 */
    return c10c__default_strides(new_strides, new_sizes, new_n, C10C_MEMORY_FORMAT_CONTIGUOUS) ==
                   C10C_STATUS_OK
               ? STRIDES_OK
               : STRIDES_OVERFLOW;
  }
  long view_d = (long)new_n - 1;
  /* products of sizes here stay <= numel; times a chunk's base stride they stay within the
   * elements' extent, except for a size-1 dim's stride past the chunk's outermost dim */
  int64_t chunk_base = old_strides[old_n - 1], tensor_numel = 1, view_numel = 1;
  for (size_t d = old_n; d-- > 0;) {
    tensor_numel *= old_sizes[d];
    int64_t chunk_stride;
    if (d == 0 ||
        (old_sizes[d - 1] != 1 && (c10c__mul_overflows(tensor_numel, chunk_base, &chunk_stride) ||
                                   old_strides[d - 1] != chunk_stride))) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        if (c10c__mul_overflows(view_numel, chunk_base, &new_strides[view_d]))
          return STRIDES_OVERFLOW;
        view_numel *= new_sizes[view_d];
        view_d--;
      }
      if (view_numel != tensor_numel) return STRIDES_INCOMPATIBLE;
      if (d > 0) {
        chunk_base = old_strides[d - 1];
        tensor_numel = view_numel = 1;
      }
    }
  }
  return view_d == -1 ? STRIDES_OK : STRIDES_INCOMPATIBLE;
}

/* view(shape) (one -1 inferred). What ATen's computeStride cannot express is an error for
 * view() and, for reshape() (may_copy), a contiguous copy viewed instead. */
static c10c_status view_or_copy(c10c_tensor **out, const c10c_tensor *t, const int64_t *shape,
                                size_t n, bool may_copy) {
  CHECK_ARGS(out, t);
  if (n > 0) C10C__CHECK_NOT_NULL(shape);
  int64_t *sizes, *strides;
  c10c_status st = c10c__tensor_view_start(out, t, n, false, &sizes, &strides);
  if (st != C10C_STATUS_OK) return st;
  if (n > 0) memcpy(sizes, shape, n * sizeof(int64_t));
  st = infer_size(sizes, n, c10c_tensor_numel(t));
  strides_result how = STRIDES_INCOMPATIBLE;
  if (st == C10C_STATUS_OK)
    how = compute_stride(strides, c10c_tensor_sizes(t), c10c_tensor_strides(t), c10c_tensor_dim(t),
                         sizes, n, c10c_tensor_numel(t));
  if (how == STRIDES_OK) return c10c__tensor_view_finish(out, c10c_tensor_storage_offset(t), true);
  c10c_tensor *result = *out;
  *out = NULL;
  if (how == STRIDES_OVERFLOW) /* (ATen lets the strides wrap) */
    st = c10c__fail(C10C_STATUS_OVERFLOW, "Stride calculation overflowed");
  if (st == C10C_STATUS_OK && !may_copy)
    st = c10c__fail(C10C_STATUS_ERROR,
                    "view size is not compatible with input tensor's size and stride (at least "
                    "one dimension spans across two contiguous subspaces). Use .reshape(...) "
                    "instead.");
  if (st == C10C_STATUS_OK) { /* reshape: a contiguous copy, viewed */
    c10c_tensor *copy = NULL;
    st = c10c_tensor_clone(&copy, t, C10C_MEMORY_FORMAT_CONTIGUOUS);
    if (st == C10C_STATUS_OK) st = view_or_copy(out, copy, sizes, n, false);
    c10c_tensor_release(copy);
  }
  c10c_tensor_release(result);
  return st;
}

c10c_status c10c_tensor_view(c10c_tensor **out, const c10c_tensor *t, const int64_t *shape,
                             size_t n) {
  return view_or_copy(out, t, shape, n, false);
}

/* ---- as_strided ---- */

c10c_status c10c_tensor_as_strided(c10c_tensor **out, const c10c_tensor *t, const int64_t *sizes,
                                   size_t nsizes, const int64_t *strides, size_t nstrides,
                                   const int64_t *storage_offset) {
  CHECK_ARGS(out, t);
  if (nsizes > 0) C10C__CHECK_NOT_NULL(sizes);
  if (nstrides > 0) C10C__CHECK_NOT_NULL(strides);
  int64_t offset = storage_offset ? *storage_offset : c10c_tensor_storage_offset(t);
  if (nsizes != nstrides)
    return c10c__fail(C10C_STATUS_ERROR, "mismatch in length of strides and shape");
  for (size_t i = 0; i < nstrides; i++)
    if (strides[i] < 0) return negative_strides(strides, nstrides);
  if (offset < 0)
    return c10c__fail(C10C_STATUS_ERROR, "Tensor: invalid storage offset %lld", (long long)offset);
  int64_t extent;
  c10c_status st = c10c__check_in_bounds(&extent, c10c_tensor_storage(t), sizes, strides, nsizes,
                                         offset, c10c_tensor_itemsize(t));
  if (st != C10C_STATUS_OK) return st;
  /* a negative size that passed (with stride 0) fails ATen's numel check, also beside a 0,
   * where ATen's product is 0 and it makes a tensor of negative size */
  for (size_t i = 0; i < nsizes; i++)
    if (sizes[i] < 0)
      return c10c__fail(C10C_STATUS_OVERFLOW, "numel: integer multiplication overflow");
  return c10c__tensor_make_view(out, t, sizes, strides, nsizes, offset, false);
}

/* ---- reshape, flatten, unflatten ---- */

c10c_status c10c_tensor_reshape(c10c_tensor **out, const c10c_tensor *t, const int64_t *shape,
                                size_t n) {
  return view_or_copy(out, t, shape, n, true);
}

c10c_status c10c_tensor_flatten(c10c_tensor **out, const c10c_tensor *t, int64_t start_dim,
                                int64_t end_dim) {
  CHECK_ARGS(out, t);
  int64_t n = (int64_t)c10c_tensor_dim(t);
  c10c_status st = wrap(&start_dim, n);
  if (st == C10C_STATUS_OK) st = wrap(&end_dim, n);
  if (st != C10C_STATUS_OK) return st;
  if (start_dim > end_dim)
    return c10c__fail(C10C_STATUS_ERROR,
                      "flatten() has invalid args: start_dim cannot come after end_dim");
  if (n == 0) {
    int64_t one = 1;
    return view_or_copy(out, t, &one, 1, true);
  }
  if (start_dim == end_dim) {
    *out = c10c_tensor_retain((c10c_tensor *)(uintptr_t)t); /* ATen returns self */
    return C10C_STATUS_OK;
  }
  const int64_t *sizes = c10c_tensor_sizes(t);
  size_t m = (size_t)(n - (end_dim - start_dim));
  int64_t stack[STACK_DIMS], *shape = m <= STACK_DIMS ? stack : c10c__malloc(m * sizeof(int64_t));
  if (shape == NULL) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory in flatten");
  size_t k = 0;
  for (int64_t d = 0; d < start_dim; d++) shape[k++] = sizes[d];
  int64_t product = 1;
  for (int64_t d = start_dim; d <= end_dim && st == C10C_STATUS_OK; d++)
    if (c10c__mul_overflows(product, sizes[d], &shape[k])) /* only beside a size 0 */
      st = overflow("flatten", "the product of the flattened sizes", product, sizes[d]);
    else
      product = shape[k];
  shape[k++] = product;
  for (int64_t d = end_dim + 1; d < n; d++) shape[k++] = sizes[d];
  if (st == C10C_STATUS_OK) st = view_or_copy(out, t, shape, m, true);
  if (shape != stack) c10c__free(shape);
  return st;
}

c10c_status c10c_tensor_unflatten(c10c_tensor **out, const c10c_tensor *t, int64_t dim,
                                  const int64_t *sizes, size_t nsizes) {
  CHECK_ARGS(out, t);
  if (nsizes > 0) C10C__CHECK_NOT_NULL(sizes);
  size_t n = c10c_tensor_dim(t);
  c10c_status st = wrap(&dim, (int64_t)n);
  if (st != C10C_STATUS_OK) return st;
  if (nsizes == 0) return c10c__fail(C10C_STATUS_ERROR, "unflatten: sizes must be non-empty");
  if (n == 0) /* ATen reaches sym_size(0) inside its try block */
    return c10c__fail(C10C_STATUS_ERROR,
                      "unflatten got an unexpected error:\nDimension "
                      "specified as 0 but tensor has no dimensions");
  size_t m = n - 1 + nsizes;
  int64_t stack[STACK_DIMS], *shape = m <= STACK_DIMS ? stack : c10c__malloc(m * sizeof(int64_t));
  if (shape == NULL) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory in unflatten");
  const int64_t *old = c10c_tensor_sizes(t);
  memcpy(shape + dim, sizes, nsizes * sizeof(int64_t));
  st = infer_size(shape + dim, nsizes, old[dim]);
  if (st != C10C_STATUS_OK) {
    /* ATen rewrites infer_size's size mismatch and wraps anything else */
    char message[512], list[256];
    snprintf(message, sizeof message, "%s", c10c_last_error_message());
    c10c__format_int_list(list, sizeof list, sizes, nsizes);
    if (strstr(message, "is invalid for input of size") != NULL)
      st = c10c__fail(C10C_STATUS_ERROR,
                      "unflatten: Provided sizes %s don't multiply up to the size of dim %lld "
                      "(%lld) in the input tensor",
                      list, (long long)dim, (long long)old[dim]);
    else
      st = c10c__fail(C10C_STATUS_ERROR, "unflatten got an unexpected error:\n%s", message);
  } else {
    memcpy(shape, old, (size_t)dim * sizeof(int64_t));
    memcpy(shape + dim + (int64_t)nsizes, old + dim + 1, (n - 1 - (size_t)dim) * sizeof(int64_t));
    st = c10c_tensor_view(out, t, shape, m);
  }
  if (shape != stack) c10c__free(shape);
  return st;
}

/* ---- movedim, diagonal, unfold ---- */

c10c_status c10c_tensor_movedim(c10c_tensor **out, const c10c_tensor *t, const int64_t *source,
                                size_t nsource, const int64_t *destination, size_t ndestination) {
  CHECK_ARGS(out, t);
  if (nsource > 0) C10C__CHECK_NOT_NULL(source);
  if (ndestination > 0) C10C__CHECK_NOT_NULL(destination);
  char src_list[256], dst_list[256];
  c10c__format_int_list(src_list, sizeof src_list, source, nsource);
  c10c__format_int_list(dst_list, sizeof dst_list, destination, ndestination);
  if (nsource != ndestination)
    return c10c__fail(C10C_STATUS_ERROR,
                      "movedim: Invalid source or destination dims: source (%s dims) should "
                      "contain the same number of dims as destination (%s dims)",
                      src_list, dst_list);
  size_t n = c10c_tensor_dim(t), k = nsource;
  /* scratch: wrapped src, wrapped dst, order, source_dims, destination_dims, seen flags */
  size_t cap = (k > n ? k : n) + 1;
  int64_t stack[6 * STACK_DIMS],
      *buf = cap <= STACK_DIMS ? stack : c10c__malloc(6 * cap * sizeof(int64_t));
  if (buf == NULL) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory in movedim");
  int64_t *src = buf, *dst = buf + cap, *order = buf + 2 * cap, *sdims = buf + 3 * cap;
  int64_t *ddims = buf + 4 * cap, *seen = buf + 5 * cap;
  c10c_status st = C10C_STATUS_OK;
  for (size_t i = 0; i < k && st == C10C_STATUS_OK; i++) {
    src[i] = source[i];
    st = wrap(&src[i], (int64_t)n);
  }
  for (size_t i = 0; i < k && st == C10C_STATUS_OK; i++) {
    dst[i] = destination[i];
    st = wrap(&dst[i], (int64_t)n);
  }
  for (int pass = 0; pass < 2 && st == C10C_STATUS_OK; pass++) {
    const int64_t *dims = pass == 0 ? src : dst;
    for (size_t d = 0; d < cap; d++) seen[d] = 0;
    for (size_t i = 0; i < k && st == C10C_STATUS_OK; i++)
      if (seen[dims[i]]++)
        st = c10c__fail(C10C_STATUS_ERROR, "movedim: repeated dim in `%s` (%s)",
                        pass == 0 ? "source" : "destination", pass == 0 ? src_list : dst_list);
  }
  if (st == C10C_STATUS_OK && n == 0) {
    st = c10c_tensor_squeeze_dims(out, t, NULL, 0); /* a 0-dim tensor: an alias */
  } else if (st == C10C_STATUS_OK) {
    for (size_t d = 0; d < n; d++) sdims[d] = ddims[d] = (int64_t)d;
    for (size_t i = 0; i < k; i++) {
      order[dst[i]] = src[i];
      sdims[src[i]] = -1;
      ddims[dst[i]] = -1;
    }
    size_t a = 0, b = 0;
    for (size_t d = 0; d < n; d++) {
      if (sdims[d] != -1) sdims[a++] = sdims[d];
      if (ddims[d] != -1) ddims[b++] = ddims[d];
    }
    for (size_t i = 0; i < n - k; i++) order[ddims[i]] = sdims[i];
    st = c10c_tensor_permute(out, t, order, n);
  }
  if (buf != stack) c10c__free(buf);
  return st;
}

c10c_status c10c_tensor_diagonal(c10c_tensor **out, const c10c_tensor *t, int64_t offset,
                                 int64_t dim1, int64_t dim2) {
  CHECK_ARGS(out, t);
  int64_t n = (int64_t)c10c_tensor_dim(t), d1 = dim1, d2 = dim2;
  c10c_status st = wrap(&d1, n);
  if (st == C10C_STATUS_OK) st = wrap(&d2, n);
  if (st != C10C_STATUS_OK) return st;
  if (d1 == d2)
    return c10c__fail(C10C_STATUS_ERROR, "diagonal dimensions cannot be identical %lld, %lld",
                      (long long)dim1, (long long)dim2);
  geometry g;
  st = geometry_init(&g, t, 0);
  if (st != C10C_STATUS_OK) return st;
  int64_t s1 = g.sizes[d1], s2 = g.sizes[d2], st1 = g.strides[d1], st2 = g.strides[d2];
  int64_t diag;
  if (offset >= 0)
    diag = s2 - offset < s1 ? s2 - offset : s1;
  else
    diag = s1 + offset < s2 ? s1 + offset : s2;
  if (diag < 0) diag = 0;
  /* within the elements' extent unless another dim is 0, whose sizes and strides may be anything */
  if (diag > 0 &&
      !add_mul(&g.offset, g.offset, offset >= 0 ? offset : -offset, offset >= 0 ? st2 : st1))
    st = overflow("diagonal", "storage offset + offset * stride", offset, offset >= 0 ? st2 : st1);
  int64_t diag_stride = 0;
  if (st == C10C_STATUS_OK && c10c__add_overflows(st1, st2, &diag_stride))
    st = overflow("diagonal", "the sum of the strides", st1, st2);
  size_t k = 0;
  for (int64_t d = 0; d < n; d++) {
    if (d == d1 || d == d2) continue;
    g.sizes[k] = g.sizes[d];
    g.strides[k] = g.strides[d];
    k++;
  }
  g.sizes[k] = diag;
  g.strides[k] = diag_stride;
  g.ndim = k + 1;
  return geometry_finish(out, t, &g, st, false);
}

c10c_status c10c_tensor_unfold(c10c_tensor **out, const c10c_tensor *t, int64_t dim, int64_t size,
                               int64_t step) {
  CHECK_ARGS(out, t);
  int64_t n = (int64_t)c10c_tensor_dim(t);
  c10c_status st = wrap(&dim, n);
  if (st != C10C_STATUS_OK) return st;
  geometry g;
  st = geometry_init(&g, t, (size_t)n + 1);
  if (st != C10C_STATUS_OK) return st;
  int64_t max_size = n == 0 ? 1 : g.sizes[dim];
  if (size > max_size)
    st = c10c__fail(C10C_STATUS_ERROR,
                    "maximum size for tensor at dimension %lld is %lld but size "
                    "is %lld",
                    (long long)dim, (long long)max_size, (long long)size);
  else if (size < 0)
    st = c10c__fail(C10C_STATUS_ERROR, "size is %lld but must be >= 0", (long long)size);
  else if (step <= 0)
    st = c10c__fail(C10C_STATUS_ERROR, "step is %lld but must be > 0", (long long)step);
  if (st == C10C_STATUS_OK) {
    g.sizes[n] = size;
    g.strides[n] = n == 0 ? 1 : g.strides[dim];
    /* 0 <= size <= the dim's size, so only the + 1 can overflow: a dim of INT64_MAX elements
     * (a tensor without elements) cut into windows of size 0 with step 1. ATen's count wraps to
     * INT64_MIN (torch: "IntArrayRef contains an int that cannot be represented as a SymInt"). */
    int64_t windows = 0;
    if (n > 0 && c10c__add_overflows((g.sizes[dim] - size) / step, 1, &windows)) {
      st = overflow("unfold", "the number of windows, (size of dim - size) / step + 1",
                    g.sizes[dim], size);
    } else if (n > 0) {
      g.sizes[dim] = windows;
      st = step_stride("unfold", g.strides, (size_t)n + 1, (size_t)dim, step, windows);
    }
    g.ndim = (size_t)n + 1;
  }
  return geometry_finish(out, t, &g, st, false);
}

/* ---- view(dtype) ---- */

static c10c_status stride_last_error(const char *from, const char *to, int64_t stride) {
  return c10c__fail(C10C_STATUS_ERROR,
                    "self.stride(-1) must be 1 to view %s as %s (different element sizes), but "
                    "got %lld",
                    from, to, (long long)stride);
}

c10c_status c10c_tensor_view_dtype(c10c_tensor **out, const c10c_tensor *t, c10c_dtype dtype) {
  CHECK_ARGS(out, t);
  size_t new_item = c10c_dtype_itemsize(dtype), old_item = c10c_tensor_itemsize(t);
  if (!c10c_dtype_is_valid(dtype) || new_item == 0)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "view: invalid dtype %d", (int)dtype);
  c10c_dtype old = c10c_tensor_dtype(t);
  const char *from = c10c_dtype_c10_name(old), *to = c10c_dtype_c10_name(dtype);
  int64_t n = (int64_t)c10c_tensor_dim(t);
  geometry g;
  c10c_status st = geometry_init(&g, t, 0);
  if (st != C10C_STATUS_OK) return st;
  if (new_item != old_item) {
    if (n == 0) {
      st =
          c10c__fail(C10C_STATUS_ERROR,
                     "self.dim() cannot be 0 to view %s as %s (different element sizes)", from, to);
    } else if (old_item > new_item && g.strides[n - 1] != 1) {
      st = stride_last_error(from, to, g.strides[n - 1]);
    } else if (old_item > new_item) {
      int64_t ratio = (int64_t)(old_item / new_item);
      bool overflow = c10c__mul_overflows(g.sizes[n - 1], ratio, &g.sizes[n - 1]) ||
                      c10c__mul_overflows(g.offset, ratio, &g.offset);
      for (int64_t i = 0; i < n - 1; i++)
        overflow |= c10c__mul_overflows(g.strides[i], ratio, &g.strides[i]);
      if (overflow) st = c10c__fail(C10C_STATUS_OVERFLOW, "view(dtype): geometry overflows");
    } else {
      int64_t ratio = (int64_t)(new_item / old_item);
      if (g.sizes[n - 1] % ratio != 0) {
        st = c10c__fail(C10C_STATUS_ERROR,
                        "self.size(-1) must be divisible by %lld to view %s as %s (different "
                        "element sizes), but got %lld",
                        (long long)ratio, from, to, (long long)g.sizes[n - 1]);
      } else if (g.offset % ratio != 0) {
        st = c10c__fail(C10C_STATUS_ERROR,
                        "self.storage_offset() must be divisible by %lld to view %s as %s "
                        "(different element sizes), but got %lld",
                        (long long)ratio, from, to, (long long)g.offset);
      } else if (g.strides[n - 1] != 1) {
        st = stride_last_error(from, to, g.strides[n - 1]);
      }
      for (int64_t i = 0; i < n - 1 && st == C10C_STATUS_OK; i++) {
        if (g.strides[i] % ratio != 0)
          st = c10c__fail(C10C_STATUS_ERROR,
                          "self.stride(%lld) must be divisible by %lld to view %s as %s "
                          "(different element sizes), but got %lld",
                          (long long)i, (long long)ratio, from, to, (long long)g.strides[i]);
        g.strides[i] /= ratio;
      }
      g.sizes[n - 1] /= ratio;
      g.offset /= ratio;
    }
  }
  if (st == C10C_STATUS_OK)
    st = c10c__tensor_make_view_as(out, t, g.sizes, g.strides, g.ndim, g.offset, dtype, false);
  c10c__free(g.heap);
  return st;
}
