/* Tensors (c10's TensorImpl): a storage reference, sizes and strides kept inline up to 5
 * dimensions, a storage offset in elements, and what c10 caches beside them (numel, contiguity
 * flags, the dispatch key set). Creation follows ATen's empty / empty_strided / set_ checks. */
#include <stdatomic.h>
#include <string.h>

#include "checked.h"
#include "geometry.h"
#include "tensor_internal.h"
#include "refcount.h"
#include "shell_cache.h"
#include "storage_internal.h"
#include "sysmem.h"

enum { INLINE_DIMS = 5, INFERENCE_FLAG = 1 << 6 };

struct c10c_tensor {
  c10c__object obj;
  c10c_storage *storage; /* a reference */
  int64_t storage_offset;
  int64_t numel;
  /* The bytes of the storage the elements reach (c10c__extent: 0 without elements). Every read
   * or write of the data first checks it against the storage's current size, which a resize or
   * set_nbytes may have made smaller since (c10c__tensor_check_extent). */
  int64_t extent;
  c10c_dispatch_key_set keys;
  uint32_t ndim;
  c10c_dtype dtype;
  uint8_t flags; /* geometry.h's contiguity bits, INFERENCE_FLAG */
  c10c_device device;
  union {
    struct {
      int64_t sizes[INLINE_DIMS];
      int64_t strides[INLINE_DIMS];
    } small;       /* ndim <= INLINE_DIMS */
    int64_t *heap; /* ndim > INLINE_DIMS: sizes then strides */
  } dims;
};

_Static_assert(sizeof(struct c10c_tensor) <= 144, "smaller than c10's 176-byte TensorImpl");

static _Thread_local bool inference_mode C10C__TLS_FAST;

bool c10c_inference_mode_set(bool enabled) {
  bool previous = inference_mode;
  inference_mode = enabled;
  return previous;
}

bool c10c_inference_mode_enabled(void) { return inference_mode; }

static int64_t *sizes_of(const c10c_tensor *t) {
  return t->ndim > INLINE_DIMS ? t->dims.heap : (int64_t *)(uintptr_t)t->dims.small.sizes;
}

static int64_t *strides_of(const c10c_tensor *t) {
  return t->ndim > INLINE_DIMS ? t->dims.heap + t->ndim
                               : (int64_t *)(uintptr_t)t->dims.small.strides;
}

static void tensor_destroy(c10c__object *obj) {
  c10c_tensor *t = (c10c_tensor *)obj;
  c10c_storage_release(t->storage);
  if (t->ndim > INLINE_DIMS) c10c__free(t->dims.heap);
  c10c__shell_free(C10C__SHELL_TENSOR, t, sizeof *t);
}

static const c10c__object_type tensor_type = {NULL, tensor_destroy};

/* A shell with room for ndim sizes and strides; NULL when out of memory. Only what destroying it
 * reads is set (no storage, the heap geometry): every constructor fills in the rest. */
static c10c_tensor *new_shell(size_t ndim) {
  c10c_tensor *t = c10c__shell_alloc(C10C__SHELL_TENSOR, sizeof *t);
  if (t == NULL) return NULL;
  if (ndim > INLINE_DIMS) {
    t->dims.heap = c10c__malloc(2 * ndim * sizeof(int64_t));
    if (t->dims.heap == NULL) {
      c10c__shell_free(C10C__SHELL_TENSOR, t, sizeof *t);
      return NULL;
    }
  }
  t->storage = NULL;
  t->ndim = (uint32_t)ndim;
  c10c__object_init(&t->obj, &tensor_type);
  return t;
}

/* A shell holding a copy of sizes and strides. */
static c10c_tensor *new_shell_with(const int64_t *sizes, const int64_t *strides, size_t ndim) {
  c10c_tensor *t = new_shell(ndim);
  if (t != NULL && ndim > 0) {
    memcpy(sizes_of(t), sizes, ndim * sizeof *sizes);
    memcpy(strides_of(t), strides, ndim * sizeof *strides);
  }
  return t;
}

static c10c_status out_of_memory(void) {
  return c10c__fail(C10C_STATUS_OUT_OF_MEMORY,
                    "Could not allocate memory for Tensor SizesAndStrides!");
}

static c10c_status check_sizes(const int64_t *sizes, size_t ndim) {
  for (size_t i = 0; i < ndim; i++) {
    if (sizes[i] < 0) {
      char list[256];
      c10c__format_int_list(list, sizeof list, sizes, ndim);
      return c10c__fail(C10C_STATUS_ERROR,
                        "Trying to create tensor with negative dimension %lld: %s",
                        (long long)sizes[i], list);
    }
  }
  return C10C_STATUS_OK;
}

static c10c_status check_dtype(c10c_dtype dtype) {
  if (!c10c_dtype_is_valid(dtype) || dtype == C10C_DTYPE_UNDEFINED)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "invalid dtype %d", (int)dtype);
  return C10C_STATUS_OK;
}

/* The key set of a new tensor depends only on (dtype, device type, inference mode): computed once
 * per combination (0 marks "not yet"; no real key set is empty). Racing threads store the same
 * value, so relaxed atomics suffice. */
static _Atomic uint64_t key_set_cache[C10C_DTYPE_COUNT][C10C_DEVICE_TYPE_COUNT][2];

static c10c_status key_set_for(c10c_dispatch_key_set *out, c10c_dtype dtype,
                               c10c_device_type device_type, bool inference) {
  _Atomic uint64_t *slot = &key_set_cache[dtype][device_type][inference];
  uint64_t repr = atomic_load_explicit(slot, memory_order_relaxed);
  if (repr != 0) {
    out->repr = repr;
    return C10C_STATUS_OK;
  }
  c10c_status st =
      c10c_dispatch_key_set_for_tensor(out, dtype, C10C_LAYOUT_STRIDED, device_type, inference);
  if (st == C10C_STATUS_OK) atomic_store_explicit(slot, out->repr, memory_order_relaxed);
  return st;
}

/* Fills in the rest once numel and the contiguity flags are known. */
static c10c_status finish_with_flags(c10c_tensor *t, c10c_storage *storage, int64_t offset,
                                     c10c_dtype dtype, c10c_device device, uint8_t flags) {
  t->storage = storage;
  t->storage_offset = offset;
  t->dtype = dtype;
  t->device = device;
  bool inference = inference_mode;
  c10c_status st = key_set_for(&t->keys, dtype, t->device.type, inference);
  if (st != C10C_STATUS_OK) return st;
  t->flags = inference ? (uint8_t)(flags | INFERENCE_FLAG) : flags;
  return C10C_STATUS_OK;
}

/* Fills in everything c10 derives from the geometry, dtype and device. The tensor owns storage
 * from the start: releasing it after an error releases the storage too. */
static c10c_status finish(c10c_tensor *t, c10c_storage *storage, int64_t offset, c10c_dtype dtype,
                          c10c_device device) {
  t->storage = storage;
  const int64_t *sizes = sizes_of(t), *strides = strides_of(t);
  if (!c10c__compute_numel(&t->numel, sizes, t->ndim))
    return c10c__fail(C10C_STATUS_OVERFLOW, "numel: integer multiplication overflow");
  return finish_with_flags(t, storage, offset, dtype, device,
                           c10c__contiguity_flags(sizes, strides, t->ndim, t->numel));
}

/* A new storage of nbytes on device; for CUDA under a guard of the device, as ATen's empty_cuda
 * (an index of -1, "cuda", becomes the current device). */
static c10c_status new_storage_on(c10c_storage **out, int64_t nbytes, c10c_device *device) {
  if (device->type != C10C_DEVICE_TYPE_CUDA)
    return c10c_storage_new(out, nbytes, NULL, device->type, true);
  c10c_cuda_device_guard guard = C10C_CUDA_DEVICE_GUARD_INIT;
  c10c_status st = device->index < 0 ? c10c_cuda_current_device(&device->index) : C10C_STATUS_OK;
  if (st == C10C_STATUS_OK) st = c10c_cuda_device_guard_enter(&guard, device->index);
  if (st == C10C_STATUS_OK) st = c10c_storage_new(out, nbytes, NULL, device->type, true);
  c10c_status restored = c10c_cuda_device_guard_exit(&guard);
  return st != C10C_STATUS_OK ? st : restored;
}

/* Builds a tensor over a new storage of nbytes; on failure frees what it made. known_contiguous:
 * t is a contiguous tensor of other than 4 or 5 dims with its numel set, which c10's rules make
 * non-overlapping and dense and nothing else (geometry.c), so no flags need computing. */
static c10c_status make_with_new_storage(c10c_tensor **out, c10c_tensor *t, int64_t nbytes,
                                         c10c_dtype dtype, c10c_device device,
                                         bool known_contiguous) {
  c10c_storage *storage = NULL;
  t->extent = nbytes; /* empty's and empty_strided's storage is exactly what the elements reach */
  c10c_status st = new_storage_on(&storage, nbytes, &device);
  /* CPU and meta tensors carry no index (torch.empty(device="cpu:0").device is cpu, "meta:1"
   * gives meta); others keep it. */
  if (device.type == C10C_DEVICE_TYPE_CPU || device.type == C10C_DEVICE_TYPE_META)
    device.index = -1;
  if (st == C10C_STATUS_OK) {
    if (known_contiguous)
      st = finish_with_flags(t, storage, 0, dtype, device,
                             C10C__CONTIGUOUS | C10C__NON_OVERLAPPING_AND_DENSE);
    else
      st = finish(t, storage, 0, dtype, device);
  }
  if (st != C10C_STATUS_OK) {
    bool owned = t->storage != NULL; /* finish took the storage: the tensor releases it */
    c10c_tensor_release(t);
    if (!owned) c10c_storage_release(storage);
    return st;
  }
  *out = t;
  return C10C_STATUS_OK;
}

/* c10c_tensor_empty's common case (contiguous, at most INLINE_DIMS dims) in one pass over the
 * sizes: checks, numel, strides and bytes together. Returns false, having made nothing, when a
 * size is negative or something overflows: the general path then reports it with ATen's words.
 * Otherwise *st is the outcome (out of memory included). */
static bool empty_contiguous(c10c_status *st, c10c_tensor **out, const int64_t *sizes, size_t ndim,
                             c10c_dtype dtype, c10c_device device) {
  c10c_tensor *t = new_shell(ndim); /* from the thread's cache: cheaper to give back than to wait */
  if (t == NULL) {
    *st = out_of_memory();
    return true;
  }
  int64_t *t_sizes = t->dims.small.sizes, *t_strides = t->dims.small.strides;
  uint64_t numel = 1, nbytes = 0;
  int64_t stride = 1;
  bool bad = false;
  for (size_t i = ndim; i-- > 0;) {
    int64_t size = t_sizes[i] = sizes[i];
    /* a size 0 takes the general path: c10's numel overflow check runs from the first size
     * and is sticky (2^62 x 2^62 x 0 overflows), which a product from the last cannot see */
    bad |= size <= 0;
    bad |= c10c__umul_overflows(numel, (uint64_t)size, &numel);
    t_strides[i] = stride;
    if (i > 0) bad |= c10c__mul_overflows(stride, size > 1 ? size : 1, &stride);
  }
  bad |= c10c__umul_overflows(numel, c10c_dtype_itemsize(dtype), &nbytes);
  if (bad || nbytes > C10C__STORAGE_MAX) {
    c10c_tensor_release(t);
    return false;
  }
  t->numel = (int64_t)numel;
  /* 4 and 5 dims have channels-last flags to compute */
  *st = make_with_new_storage(out, t, (int64_t)nbytes, dtype, device, ndim < 4);
  return true;
}

c10c_status c10c_tensor_empty(c10c_tensor **out, const int64_t *sizes, size_t ndim,
                              c10c_dtype dtype, c10c_device device,
                              c10c_memory_format memory_format) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  if (ndim > 0) C10C__CHECK_NOT_NULL(sizes);
  c10c_status st = check_dtype(dtype);
  if (st == C10C_STATUS_OK) st = c10c__check_device(device);
  if (st != C10C_STATUS_OK) return st;
  if (memory_format == C10C_MEMORY_FORMAT_CONTIGUOUS && ndim <= INLINE_DIMS &&
      empty_contiguous(&st, out, sizes, ndim, dtype, device))
    return st;
  st = check_sizes(sizes, ndim);
  int64_t nbytes = 0;
  if (st == C10C_STATUS_OK)
    st = c10c__storage_nbytes(&nbytes, sizes, NULL, ndim, 0, c10c_dtype_itemsize(dtype));
  if (st != C10C_STATUS_OK) return st;
  c10c_tensor *t = new_shell(ndim);
  if (t == NULL) return out_of_memory();
  if (ndim > 0) memcpy(sizes_of(t), sizes, ndim * sizeof *sizes);
  st = c10c__default_strides(strides_of(t), sizes, ndim, memory_format);
  if (st != C10C_STATUS_OK) {
    c10c_tensor_release(t);
    return st;
  }
  return make_with_new_storage(out, t, nbytes, dtype, device, false);
}

static c10c_status check_strides(const int64_t *sizes, const int64_t *strides, size_t ndim) {
  for (size_t i = 0; i < ndim; i++) {
    if (strides[i] < 0) {
      char s1[256], s2[256];
      c10c__format_int_list(s1, sizeof s1, sizes, ndim);
      c10c__format_int_list(s2, sizeof s2, strides, ndim);
      return c10c__fail(C10C_STATUS_OVERFLOW,
                        "Storage size calculation overflowed with sizes=%s and strides=%s", s1, s2);
    }
  }
  return C10C_STATUS_OK;
}

c10c_status c10c_tensor_empty_strided(c10c_tensor **out, const int64_t *sizes,
                                      const int64_t *strides, size_t ndim, c10c_dtype dtype,
                                      c10c_device device) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  if (ndim > 0) {
    C10C__CHECK_NOT_NULL(sizes);
    C10C__CHECK_NOT_NULL(strides);
  }
  c10c_status st = check_dtype(dtype);
  if (st == C10C_STATUS_OK) st = c10c__check_device(device);
  if (st == C10C_STATUS_OK) st = check_sizes(sizes, ndim);
  if (st == C10C_STATUS_OK) st = check_strides(sizes, strides, ndim);
  int64_t nbytes = 0;
  if (st == C10C_STATUS_OK)
    st = c10c__storage_nbytes(&nbytes, sizes, strides, ndim, 0, c10c_dtype_itemsize(dtype));
  if (st != C10C_STATUS_OK) return st;
  c10c_tensor *t = new_shell_with(sizes, strides, ndim);
  if (t == NULL) return out_of_memory();
  return make_with_new_storage(out, t, nbytes, dtype, device, false);
}

c10c_status c10c_tensor_new_from_storage(c10c_tensor **out, c10c_storage *storage,
                                         const int64_t *sizes, const int64_t *strides, size_t ndim,
                                         int64_t storage_offset, c10c_dtype dtype) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  C10C__CHECK_NOT_NULL(storage);
  if (ndim > 0) {
    C10C__CHECK_NOT_NULL(sizes);
    C10C__CHECK_NOT_NULL(strides);
  }
  c10c_status st = check_dtype(dtype);
  if (st != C10C_STATUS_OK) return st;
  if (storage_offset < 0)
    return c10c__fail(C10C_STATUS_ERROR, "Tensor: invalid storage offset %lld",
                      (long long)storage_offset);
  int64_t extent = 0;
  st = check_sizes(sizes, ndim);
  if (st == C10C_STATUS_OK) st = check_strides(sizes, strides, ndim);
  if (st == C10C_STATUS_OK)
    st = c10c__check_in_bounds(&extent, storage, sizes, strides, ndim, storage_offset,
                               c10c_dtype_itemsize(dtype));
  if (st != C10C_STATUS_OK) return st;
  c10c_tensor *t = new_shell_with(sizes, strides, ndim);
  if (t == NULL) return out_of_memory();
  t->extent = extent;
  st = finish(t, c10c_storage_retain(storage), storage_offset, dtype, c10c_storage_device(storage));
  if (st != C10C_STATUS_OK) {
    c10c_tensor_release(t);
    return st;
  }
  *out = t;
  return C10C_STATUS_OK;
}

c10c_status c10c__check_in_bounds(int64_t *needed, const c10c_storage *storage,
                                  const int64_t *sizes, const int64_t *strides, size_t ndim,
                                  int64_t storage_offset, size_t itemsize) {
  c10c_status st = c10c__storage_nbytes(needed, sizes, strides, ndim, storage_offset, itemsize);
  if (st != C10C_STATUS_OK) return st;
  /* a meta storage has no bytes to stay inside: torch's set_ and as_strided accept any geometry
   * over it (the extent still says what the elements would reach) */
  if (c10c_storage_device(storage).type == C10C_DEVICE_TYPE_META) return C10C_STATUS_OK;
  if (*needed > c10c_storage_nbytes(storage)) {
    char s1[256], s2[256];
    c10c__format_int_list(s1, sizeof s1, sizes, ndim);
    c10c__format_int_list(s2, sizeof s2, strides, ndim);
    return c10c__fail(C10C_STATUS_ERROR,
                      "setStorage: sizes %s, strides %s, storage offset %lld, and itemsize %zu "
                      "requiring a storage size of %lld are out of bounds for storage of size %lld",
                      s1, s2, (long long)storage_offset, itemsize, (long long)*needed,
                      (long long)c10c_storage_nbytes(storage));
  }
  return C10C_STATUS_OK;
}

c10c_status c10c__tensor_view_start(c10c_tensor **out, const c10c_tensor *base, size_t ndim,
                                    bool keep_geometry, int64_t **sizes, int64_t **strides) {
  c10c_tensor *t = new_shell(ndim);
  if (t == NULL) return out_of_memory();
  if (keep_geometry) {
    if (ndim <= INLINE_DIMS) { /* fixed-size copies: a few vector moves, no call */
      memcpy(&t->dims.small, &base->dims.small, sizeof t->dims.small);
    } else {
      memcpy(t->dims.heap, base->dims.heap, 2 * ndim * sizeof(int64_t));
    }
  }
  /* A view shares the storage (and so the version counter), the dtype, device and key set; it
   * is an inference tensor exactly when its base is. */
  t->storage = c10c_storage_retain(base->storage);
  t->storage_offset = base->storage_offset;
  t->dtype = base->dtype;
  t->device = base->device;
  t->keys = base->keys;     /* kept even by view(dtype), as ATen */
  t->extent = base->extent; /* what a view of the same elements keeps (c10c__tensor_view_finish) */
  t->flags = base->flags & INFERENCE_FLAG;
  *sizes = sizes_of(t);
  *strides = strides_of(t);
  *out = t;
  return C10C_STATUS_OK;
}

c10c_status c10c__tensor_view_finish(c10c_tensor **out, int64_t storage_offset,
                                     bool same_elements) {
  c10c_tensor *t = *out;
  const int64_t *sizes = sizes_of(t), *strides = strides_of(t);
  if (!c10c__compute_numel(&t->numel, sizes, t->ndim)) {
    c10c_tensor_release(t);
    *out = NULL;
    return c10c__fail(C10C_STATUS_OVERFLOW, "numel: integer multiplication overflow");
  }
  /* Views never make negative sizes (expand and as_strided refuse them), so numel says whether
   * there are elements; a view of the same elements kept its base's extent. An overflow is not
   * reached from a valid base by the views' checked arithmetic (as_strided checked its extent). */
  if (t->numel == 0) {
    t->extent = 0;
  } else if (!same_elements &&
             !c10c__extent_nonempty(&t->extent, sizes, strides, t->ndim, storage_offset,
                                    c10c_dtype_itemsize(t->dtype))) {
    c10c_tensor_release(t);
    *out = NULL;
    return c10c__fail(C10C_STATUS_OVERFLOW, "view: the elements' extent overflows int64");
  }
  t->storage_offset = storage_offset;
  t->flags = (uint8_t)(c10c__contiguity_flags(sizes, strides, t->ndim, t->numel) |
                       (t->flags & INFERENCE_FLAG));
  return C10C_STATUS_OK;
}

c10c_status c10c__tensor_make_view_as(c10c_tensor **out, const c10c_tensor *base,
                                      const int64_t *sizes, const int64_t *strides, size_t ndim,
                                      int64_t storage_offset, c10c_dtype dtype,
                                      bool same_elements) {
  int64_t *t_sizes = NULL, *t_strides = NULL;
  c10c_status st = c10c__tensor_view_start(out, base, ndim, false, &t_sizes, &t_strides);
  if (st != C10C_STATUS_OK) return st;
  if (ndim > 0) {
    memcpy(t_sizes, sizes, ndim * sizeof *sizes);
    memcpy(t_strides, strides, ndim * sizeof *strides);
  }
  (*out)->dtype = dtype;
  return c10c__tensor_view_finish(out, storage_offset, same_elements);
}

c10c_status c10c__tensor_make_view(c10c_tensor **out, const c10c_tensor *base, const int64_t *sizes,
                                   const int64_t *strides, size_t ndim, int64_t storage_offset,
                                   bool same_elements) {
  return c10c__tensor_make_view_as(out, base, sizes, strides, ndim, storage_offset, base->dtype,
                                   same_elements);
}

c10c_tensor *c10c_tensor_retain(c10c_tensor *tensor) {
  if (tensor != NULL) c10c__incref(&tensor->obj);
  return tensor;
}

void c10c_tensor_release(c10c_tensor *tensor) {
  if (tensor != NULL) c10c__decref(&tensor->obj);
}

size_t c10c_tensor_dim(const c10c_tensor *tensor) { return tensor ? tensor->ndim : 0; }

int64_t c10c_tensor_numel(const c10c_tensor *tensor) { return tensor ? tensor->numel : 0; }

const int64_t *c10c_tensor_sizes(const c10c_tensor *tensor) {
  return tensor ? sizes_of(tensor) : NULL;
}

const int64_t *c10c_tensor_strides(const c10c_tensor *tensor) {
  return tensor ? strides_of(tensor) : NULL;
}

c10c_status c10c_tensor_size(int64_t *out, const c10c_tensor *tensor, int64_t dim) {
  C10C__CHECK_NOT_NULL(out);
  C10C__CHECK_NOT_NULL(tensor);
  c10c_status st = c10c__wrap_dim(&dim, (int64_t)tensor->ndim, false);
  if (st == C10C_STATUS_OK) *out = sizes_of(tensor)[dim];
  return st;
}

c10c_status c10c_tensor_stride(int64_t *out, const c10c_tensor *tensor, int64_t dim) {
  C10C__CHECK_NOT_NULL(out);
  C10C__CHECK_NOT_NULL(tensor);
  c10c_status st = c10c__wrap_dim(&dim, (int64_t)tensor->ndim, false);
  if (st == C10C_STATUS_OK) *out = strides_of(tensor)[dim];
  return st;
}

int64_t c10c_tensor_storage_offset(const c10c_tensor *tensor) {
  return tensor ? tensor->storage_offset : 0;
}

c10c_dtype c10c_tensor_dtype(const c10c_tensor *tensor) {
  return tensor ? tensor->dtype : C10C_DTYPE_UNDEFINED;
}

c10c_device c10c_tensor_device(const c10c_tensor *tensor) {
  if (tensor == NULL) return (c10c_device){C10C_DEVICE_TYPE_CPU, -1};
  return tensor->device;
}

size_t c10c_tensor_itemsize(const c10c_tensor *tensor) {
  return tensor ? c10c_dtype_itemsize(tensor->dtype) : 0;
}

int64_t c10c_tensor_nbytes(const c10c_tensor *tensor) {
  if (tensor == NULL) return 0;
  /* an expanded tensor's numel can be up to INT64_MAX whatever its storage: saturate */
  int64_t bytes;
  if (c10c__mul_overflows(tensor->numel, (int64_t)c10c_dtype_itemsize(tensor->dtype), &bytes))
    return INT64_MAX;
  return bytes;
}

c10c_storage *c10c_tensor_storage(const c10c_tensor *tensor) {
  return tensor ? tensor->storage : NULL;
}

void *c10c_tensor_data(const c10c_tensor *tensor) {
  if (tensor == NULL || tensor->device.type == C10C_DEVICE_TYPE_META) return NULL; /* no data */
  if (c10c__tensor_check_extent(tensor, "data") != C10C_STATUS_OK) return NULL;
  c10c__storage_mark_exposed(tensor->storage);
  return c10c__tensor_data_unchecked(tensor);
}

void *c10c__tensor_data_unchecked(const c10c_tensor *tensor) {
  char *base = c10c__storage_data(tensor->storage);
  if (base == NULL) return NULL;
  uint64_t offset; /* bytes: below the extent when there are elements */
  if (c10c__umul_overflows((uint64_t)tensor->storage_offset, c10c_dtype_itemsize(tensor->dtype),
                           &offset) ||
      offset > (uint64_t)c10c_storage_nbytes(tensor->storage))
    return NULL; /* no elements, and an offset past the storage: nothing to point at */
  return base + offset;
}

/* The message of a tensor whose storage no longer holds its elements. */
static c10c_status extent_error(const c10c_tensor *t, const char *op) {
  char s1[256], s2[256];
  c10c__format_int_list(s1, sizeof s1, sizes_of(t), t->ndim);
  c10c__format_int_list(s2, sizeof s2, strides_of(t), t->ndim);
  return c10c__fail(C10C_STATUS_ERROR,
                    "%s: the tensor's elements (sizes %s, strides %s, storage offset %lld, "
                    "itemsize %zu) reach %lld bytes of its storage, which holds %lld bytes now "
                    "(resized or set_nbytes after the tensor was made)",
                    op, s1, s2, (long long)t->storage_offset, c10c_dtype_itemsize(t->dtype),
                    (long long)t->extent, (long long)c10c_storage_nbytes(t->storage));
}

c10c_status c10c__tensor_check_extent(const c10c_tensor *tensor, const char *op) {
  if (tensor->extent <= c10c_storage_nbytes(tensor->storage)) return C10C_STATUS_OK;
  return extent_error(tensor, op);
}

c10c_dispatch_key_set c10c_tensor_keys(const c10c_tensor *tensor) {
  c10c_dispatch_key_set empty = {0};
  return tensor ? tensor->keys : empty;
}

c10c_status c10c_tensor_is_contiguous(bool *out, const c10c_tensor *tensor,
                                      c10c_memory_format memory_format) {
  C10C__CHECK_NOT_NULL(out);
  C10C__CHECK_NOT_NULL(tensor);
  switch (memory_format) {
    case C10C_MEMORY_FORMAT_CONTIGUOUS:
    case C10C_MEMORY_FORMAT_PRESERVE: *out = tensor->flags & C10C__CONTIGUOUS; break;
    case C10C_MEMORY_FORMAT_CHANNELS_LAST:
      *out = tensor->flags & C10C__CHANNELS_LAST_CONTIGUOUS;
      break;
    case C10C_MEMORY_FORMAT_CHANNELS_LAST_3D:
      *out = tensor->flags & C10C__CHANNELS_LAST_3D_CONTIGUOUS;
      break;
    default:
      return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "Unknown memory format %d",
                        (int)memory_format);
  }
  return C10C_STATUS_OK;
}

bool c10c_tensor_is_strides_like(const c10c_tensor *tensor, c10c_memory_format memory_format) {
  if (tensor == NULL) return false;
  if (memory_format == C10C_MEMORY_FORMAT_CHANNELS_LAST) return tensor->flags & C10C__CHANNELS_LAST;
  if (memory_format == C10C_MEMORY_FORMAT_CHANNELS_LAST_3D)
    return tensor->flags & C10C__CHANNELS_LAST_3D;
  return false;
}

bool c10c_tensor_is_non_overlapping_and_dense(const c10c_tensor *tensor) {
  return tensor != NULL && (tensor->flags & C10C__NON_OVERLAPPING_AND_DENSE);
}

bool c10c_tensor_is_inference(const c10c_tensor *tensor) {
  return tensor != NULL && (tensor->flags & INFERENCE_FLAG);
}

c10c_status c10c_tensor_version(int64_t *out, const c10c_tensor *tensor) {
  C10C__CHECK_NOT_NULL(out);
  C10C__CHECK_NOT_NULL(tensor);
  if (tensor->flags & INFERENCE_FLAG)
    return c10c__fail(C10C_STATUS_ERROR, "Inference tensors do not track version counter.");
  *out = c10c__storage_version(tensor->storage);
  return C10C_STATUS_OK;
}

bool c10c_tensor_is_read_only(const c10c_tensor *tensor) {
  return tensor != NULL && c10c_storage_is_read_only(tensor->storage);
}

c10c_status c10c__check_inplace(const c10c_tensor *tensor) {
  if (c10c_storage_is_read_only(tensor->storage))
    return c10c__fail(C10C_STATUS_ERROR,
                      "cannot write to a read-only tensor: its memory was shared read-only (a "
                      "read-only numpy array or DLPack export); clone() it to get a writable copy");
  if ((tensor->flags & INFERENCE_FLAG) && !c10c_inference_mode_enabled())
    return c10c__fail(C10C_STATUS_ERROR,
                      "Inplace update to inference tensor outside InferenceMode is not allowed.You "
                      "can make a clone to get a normal tensor before doing inplace update.See "
                      "https://github.com/pytorch/rfcs/pull/17 for more details.");
  return C10C_STATUS_OK;
}

c10c_status c10c_tensor_bump_version(c10c_tensor *tensor) {
  C10C__CHECK_NOT_NULL(tensor);
  c10c_status st = c10c__check_inplace(tensor);
  if (st != C10C_STATUS_OK) return st;
  /* an inference tensor has no counter: inside inference mode, nothing to count */
  if (!(tensor->flags & INFERENCE_FLAG)) c10c__storage_bump_version(tensor->storage);
  return C10C_STATUS_OK;
}
