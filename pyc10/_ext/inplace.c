/* Tensor methods that give self a new geometry over new or grown storage (resize_, resize_as_,
 * set_; the in-place views t_, transpose_, squeeze_, ... are views.c's bindings), the
 * tensor_split family (tensor_split, hsplit, vsplit, dsplit), the complex views real/imag and
 * conj (is_shared and share_memory_ are _tensor.py's, as torch's are Python).
 *
 * libc10c's tensors have no in-place geometry API: the new geometry is made with the public ABI
 * and the Python object swaps its c10c_tensor handle for it (pyc10_become, as `t.data = other`
 * does), dropping its cached shape and strides. Everyone holding this Python object sees torch's
 * semantics. A c10c tensor can be shared by two Python objects only through the C ABI (a host
 * wrapping the same handle twice): such another object keeps the old geometry.
 */
#include <string.h>

#include "common.h"

#define BECOME(call)                      \
  do {                                    \
    c10c_tensor *out_ = NULL;             \
    c10c_status st_ = (call);             \
    return pyc10_become(self, st_, out_); \
  } while (0)

/* ---- resize_, resize_as_, set_: new geometry over self's (or another) storage, which grows as
 * ATen's maybe_resize_storage_cpu grows it ---- */

/* c10's contiguous strides (CONTIGUOUS), or channels-last ones for 4 (5) dims. */
static int layout_strides(int64_t *strides, const int64_t *sizes, size_t n, int format) {
  static const int cl4[] = {1, 3, 2, 0}, cl5[] = {1, 4, 3, 2, 0};
  const int *order = NULL;
  if (format == C10C_MEMORY_FORMAT_CHANNELS_LAST) {
    if (n != 4) return RUNTIME_ERROR("required rank 4 tensor to use channels_last format"), -1;
    order = cl4;
  } else if (format == C10C_MEMORY_FORMAT_CHANNELS_LAST_3D) {
    if (n != 5) return RUNTIME_ERROR("required rank 5 tensor to use channels_last_3d format"), -1;
    order = cl5;
  } else if (format == C10C_MEMORY_FORMAT_PRESERVE) {
    return RUNTIME_ERROR("Unsupported memory formatPreserve"), -1;
  }
  int64_t s = 1;
  if (order != NULL) { /* c10's get_channels_last_strides: innermost first, sizes as they are */
    for (size_t k = 0; k < n; k++) {
      strides[order[k]] = s;
      if (__builtin_mul_overflow(s, sizes[order[k]], &s)) s = INT64_MAX;
    }
    return 0;
  }
  for (size_t k = n; k-- > 0;) {
    strides[k] = s;
    if (__builtin_mul_overflow(s, sizes[k] > 1 ? sizes[k] : 1, &s)) s = INT64_MAX;
  }
  return 0;
}

/* Grows storage to hold sizes/strides at offset (ATen's maybe_resize_storage_cpu); -1 with an
 * error. Negative sizes fail first with torch's message. */
static int ensure_storage(c10c_storage *storage, const int64_t *sizes, const int64_t *strides,
                          size_t n, int64_t offset, size_t itemsize) {
  for (size_t i = 0; i < n; i++)
    if (sizes[i] < 0) return RUNTIME_ERROR("numel: integer multiplication overflow"), -1;
  if (offset < 0)
    return RUNTIME_ERROR("Tensor: invalid storage offset %lld", (long long)offset), -1;
  int64_t extent = 1; /* elements reached, counting the first */
  for (size_t i = 0; i < n; i++) {
    if (sizes[i] == 0) return 0;
    int64_t step;
    if (strides[i] < 0 || __builtin_mul_overflow(sizes[i] - 1, strides[i], &step) ||
        __builtin_add_overflow(extent, step, &extent))
      return 0; /* c10c_tensor_new_from_storage reports it with torch's words */
  }
  int64_t need;
  if (__builtin_add_overflow(extent, offset, &need) ||
      __builtin_mul_overflow(need, (int64_t)itemsize, &need))
    return 0;
  if (need <= c10c_storage_nbytes(storage)) return 0;
  c10c_status st = c10c_storage_resize(storage, need);
  if (st != C10C_STATUS_OK) return pyc10_raise(st), -1;
  return 0;
}

/* self becomes a tensor of its dtype over storage with this geometry (the storage grown). */
static PyObject *set_geometry(PyObject *self, c10c_tensor *h, c10c_storage *storage,
                              const int64_t *sizes, const int64_t *strides, size_t n,
                              int64_t offset) {
  if (ensure_storage(storage, sizes, strides, n, offset, c10c_tensor_itemsize(h)) < 0) return NULL;
  BECOME(c10c_tensor_new_from_storage(&out_, storage, sizes, strides, n, offset,
                                      c10c_tensor_dtype(h)));
}

/* ATen's resize_: same sizes keep the strides, others take contiguous ones; then a given memory
 * format restrides (after the resize, as ATen: a bad format raises with self resized). */
static PyObject *resize_to(PyObject *self, const int64_t *sizes, size_t n, int format) {
  c10c_tensor *h = pyc10_handle(self);
  if (h == NULL) return NULL;
  int64_t strides[PA_MAX_DIMS];
  bool same = n == c10c_tensor_dim(h) &&
              (n == 0 || memcmp(sizes, c10c_tensor_sizes(h), n * sizeof(int64_t)) == 0);
  PyObject *r;
  if (same) {
    r = Py_NewRef(self);
  } else {
    if (layout_strides(strides, sizes, n, C10C_MEMORY_FORMAT_CONTIGUOUS) < 0) return NULL;
    r = set_geometry(self, h, c10c_tensor_storage(h), sizes, strides, n,
                     c10c_tensor_storage_offset(h));
  }
  if (r == NULL || format < 0) return r;
  Py_DECREF(r);
  h = pyc10_handle(self);
  if (layout_strides(strides, sizes, n, format) < 0) return NULL;
  return set_geometry(self, h, c10c_tensor_storage(h), sizes, strides, n,
                      c10c_tensor_storage_offset(h));
}

static pa_parser resize__p = PA_PARSER("Tensor", "resize_");
static PyObject *t_resize_(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  PARSE(resize__p, r);
  int64_t sizes[PA_MAX_DIMS];
  Py_ssize_t n;
  int format;
  if (pa_intlist(&r, 0, sizes, PA_MAX_DIMS, &n) < 0 || pa_memory_format(&r, 1, &format) < 0)
    return NULL;
  return resize_to(self, sizes, (size_t)n, format);
}

static pa_parser resize_as__p = PA_PARSER("Tensor", "resize_as_");
static PyObject *t_resize_as_(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  PARSE(resize_as__p, r);
  int format;
  if (pa_memory_format(&r, 1, &format) < 0) return NULL;
  c10c_tensor *o = pyc10_handle(r.obj[0]);
  if (o == NULL) return NULL;
  if (format == C10C_MEMORY_FORMAT_PRESERVE) /* ATen: the template's suggest_memory_format() */
    format = c10c_tensor_is_strides_like(o, C10C_MEMORY_FORMAT_CHANNELS_LAST)
                 ? C10C_MEMORY_FORMAT_CHANNELS_LAST
             : c10c_tensor_is_strides_like(o, C10C_MEMORY_FORMAT_CHANNELS_LAST_3D)
                 ? C10C_MEMORY_FORMAT_CHANNELS_LAST_3D
                 : C10C_MEMORY_FORMAT_CONTIGUOUS;
  size_t n = c10c_tensor_dim(o);
  int64_t sizes[PA_MAX_DIMS];
  if (n > PA_MAX_DIMS) return RUNTIME_ERROR("resize_as_: too many dimensions (%zu)", n);
  if (n > 0) memcpy(sizes, c10c_tensor_sizes(o), n * sizeof(int64_t));
  return resize_to(self, sizes, n, format);
}

/* c10's TypeMeta names, which torch's set_ prints ("long int", "float", ...). */
static const char *type_meta_name(c10c_dtype d) {
  switch (d) {
    case C10C_DTYPE_UINT8: return "unsigned char";
    case C10C_DTYPE_INT8: return "signed char";
    case C10C_DTYPE_INT16: return "short int";
    case C10C_DTYPE_INT32: return "int";
    case C10C_DTYPE_INT64: return "long int";
    case C10C_DTYPE_FLOAT16: return "c10::Half";
    case C10C_DTYPE_FLOAT32: return "float";
    case C10C_DTYPE_FLOAT64: return "double";
    case C10C_DTYPE_COMPLEX32: return "c10::complex<c10::Half>";
    case C10C_DTYPE_COMPLEX64: return "c10::complex<float>";
    case C10C_DTYPE_COMPLEX128: return "c10::complex<double>";
    case C10C_DTYPE_BOOL: return "bool";
    case C10C_DTYPE_BFLOAT16: return "c10::BFloat16";
    default: return c10c_dtype_c10_name(d);
  }
}

/* "[2, 3]" */
static PyObject *int_list(const int64_t *v, size_t n) {
  PyObject *out = PyUnicode_FromString("[");
  for (size_t i = 0; out != NULL && i < n; i++)
    PA_SETREF(out, PyUnicode_FromFormat("%U%s%lld", out, i ? ", " : "", (long long)v[i]));
  if (out != NULL) PA_SETREF(out, PyUnicode_FromFormat("%U]", out));
  return out;
}

/* set_(storage, offset, size[, stride]) with self's sizes (and strides, if given): ATen's resize
 * returns early, self keeps its strides, the storage does not grow, and the bounds check names
 * the strides as given ([] for None). */
static PyObject *set_same_sizes(PyObject *self, c10c_tensor *h, c10c_storage *storage,
                                int64_t offset, bool has_stride) {
  size_t n = c10c_tensor_dim(h);
  const int64_t *sizes = c10c_tensor_sizes(h), *strides = c10c_tensor_strides(h);
  int64_t itemsize = (int64_t)c10c_tensor_itemsize(h), need = 0, extent = 1;
  bool empty = false, overflow = offset < 0;
  for (size_t i = 0; i < n; i++) {
    empty |= sizes[i] == 0;
    int64_t step;
    overflow |= __builtin_mul_overflow(sizes[i] - 1, strides[i], &step) ||
                __builtin_add_overflow(extent, step, &extent);
  }
  overflow |= __builtin_add_overflow(extent, offset, &need) ||
              __builtin_mul_overflow(need, itemsize, &need);
  if (!empty && !overflow && need > c10c_storage_nbytes(storage) &&
      c10c_storage_device(storage).type != C10C_DEVICE_TYPE_META) { /* meta: no bytes to hold */
    PyObject *sz = int_list(sizes, n), *st = int_list(strides, has_stride ? n : 0);
    if (sz != NULL && st != NULL)
      RUNTIME_ERROR(
          "setStorage: sizes %U, strides %U, storage offset %lld, and itemsize %lld "
          "requiring a storage size of %lld are out of bounds for storage of size %lld",
          sz, st, (long long)offset, (long long)itemsize, (long long)need,
          (long long)c10c_storage_nbytes(storage));
    Py_XDECREF(sz);
    Py_XDECREF(st);
    return NULL;
  }
  BECOME(c10c_tensor_new_from_storage(&out_, storage, sizes, strides, n, offset,
                                      c10c_tensor_dtype(h)));
}

/* c10's set_ refuses a storage on another device than the tensor's storage, in its words. */
static int check_same_device(c10c_tensor *h, c10c_storage *storage) {
  c10c_device mine = c10c_storage_device(c10c_tensor_storage(h));
  c10c_device theirs = c10c_storage_device(storage);
  /* CPU memory from outside (numpy, DLPack) may carry index 0: one CPU all the same */
  bool indexless = mine.type == C10C_DEVICE_TYPE_CPU || mine.type == C10C_DEVICE_TYPE_META;
  if (mine.type == theirs.type && (indexless || mine.index == theirs.index)) return 0;
  char a[64], b[64];
  if (c10c_device_to_string(a, sizeof a, mine) != C10C_STATUS_OK ||
      c10c_device_to_string(b, sizeof b, theirs) != C10C_STATUS_OK)
    return pyc10_raise(c10c_last_error_status()), -1;
  RUNTIME_ERROR(
      "Attempted to set the storage of a tensor on device \"%s\" to a storage on "
      "different device \"%s\".  This is no longer allowed; the devices must match.",
      a, b);
  return -1;
}

static pa_parser set__p = PA_PARSER("Tensor", "set_");
static PyObject *t_set_(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames) {
  SELF_HANDLE(h);
  PARSE(set__p, r);
  if (r.overload == 0) { /* an empty storage of self's dtype and device, sizes [0] */
    int64_t zero = 0;
    BECOME(c10c_tensor_empty(&out_, &zero, 1, c10c_tensor_dtype(h), c10c_tensor_device(h),
                             C10C_MEMORY_FORMAT_CONTIGUOUS));
  }
  c10c_storage *storage;
  if (r.overload <= 2) {
    storage = pyc10_storage_of(r.obj[0]);
    if (storage == NULL) return RUNTIME_ERROR("this pyc10.UntypedStorage holds no storage");
  } else {
    c10c_tensor *src = pyc10_handle(r.obj[0]);
    if (src == NULL) return NULL;
    if (r.overload == 3 && c10c_tensor_dtype(src) != c10c_tensor_dtype(h)) /* as torch */
      return RUNTIME_ERROR("Could not set tensor of type %s to a tensor of type %s",
                           type_meta_name(c10c_tensor_dtype(src)),
                           type_meta_name(c10c_tensor_dtype(h)));
    if (r.overload == 3) {
      if (src == h) return Py_NewRef(self);
      if (check_same_device(h, c10c_tensor_storage(src)) < 0) return NULL;
      BECOME(c10c_tensor_new_from_storage(&out_, c10c_tensor_storage(src), c10c_tensor_sizes(src),
                                          c10c_tensor_strides(src), c10c_tensor_dim(src),
                                          c10c_tensor_storage_offset(src), c10c_tensor_dtype(h)));
    }
    storage = c10c_tensor_storage(src);
  }
  if (r.overload == 1) { /* the whole storage as a 1-dim tensor */
    if (check_same_device(h, storage) < 0) return NULL;
    int64_t size = c10c_storage_nbytes(storage) / (int64_t)c10c_tensor_itemsize(h), one = 1;
    BECOME(c10c_tensor_new_from_storage(&out_, storage, &size, &one, 1, 0, c10c_tensor_dtype(h)));
  }
  int64_t offset, sizes[PA_MAX_DIMS], strides[PA_MAX_DIMS];
  Py_ssize_t n, m;
  if (pa_int(&r, 1, &offset) < 0 || pa_intlist(&r, 2, sizes, PA_MAX_DIMS, &n) < 0) return NULL;
  bool has_stride = pa_has(&r, 3);
  if (has_stride) {
    if (pa_intlist(&r, 3, strides, PA_MAX_DIMS, &m) < 0) return NULL;
    if (m != n) return RUNTIME_ERROR("unequal size length (%zd) and stride length (%zd)", n, m);
  }
  /* __index__ of an int above may have swapped self's handle or the source tensor's (releasing
   * the storage read from it) */
  SELF_HANDLE_AGAIN(h);
  if (r.overload > 2) storage = c10c_tensor_storage(((TensorObject *)r.obj[0])->h);
  if (check_same_device(h, storage) < 0) return NULL;
  size_t nd = c10c_tensor_dim(h);
  if ((size_t)n == nd &&
      (nd == 0 ||
       (memcmp(sizes, c10c_tensor_sizes(h), nd * sizeof(int64_t)) == 0 &&
        (!has_stride || memcmp(strides, c10c_tensor_strides(h), nd * sizeof(int64_t)) == 0))))
    return set_same_sizes(self, h, storage, offset, has_stride);
  if (!has_stride && layout_strides(strides, sizes, (size_t)n, C10C_MEMORY_FORMAT_CONTIGUOUS) < 0)
    return NULL;
  return set_geometry(self, h, storage, sizes, strides, (size_t)n, offset);
}

/* ---- tensor_split, hsplit, vsplit, dsplit (views, as ATen) ---- */

static PyObject *need_dims(c10c_tensor *h) {
  return RUNTIME_ERROR(
      "tensor_split expected at least a 1-dimensional tensor, but got a tensor with %zu dims",
      c10c_tensor_dim(h));
}

/* pieces[i] = slice(dim, bounds[i], bounds[i + 1]) for i < n (bounds increasing). */
static PyObject *slices(c10c_tensor *h, int64_t dim, const int64_t *bounds, size_t n) {
  c10c_tensor **pieces = PyMem_Calloc(n + 1, sizeof *pieces);
  if (pieces == NULL) return PyErr_NoMemory();
  for (size_t i = 0; i < n; i++) {
    c10c_status st = c10c_tensor_slice(&pieces[i], h, dim, bounds[i], bounds[i + 1], 1);
    if (st != C10C_STATUS_OK) {
      for (size_t k = 0; k < i; k++) c10c_tensor_release(pieces[k]);
      PyMem_Free(pieces);
      return pyc10_raise(st);
    }
  }
  PyObject *t = pyc10_wrap_tuple(pieces, n);
  PyMem_Free(pieces);
  return t;
}

static PyObject *split_sections(c10c_tensor *h, int64_t sections, int64_t dim) {
  if (c10c_tensor_dim(h) == 0) return need_dims(h);
  if (sections <= 0)
    return RUNTIME_ERROR("number of sections must be larger than 0, got %lld", (long long)sections);
  int64_t dim_size;
  c10c_status st = c10c_tensor_size(&dim_size, h, dim);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  if (dim < 0) dim += (int64_t)c10c_tensor_dim(h);
  if (sections > (int64_t)1 << 24) return PyErr_NoMemory();
  int64_t *bounds = PyMem_Malloc(sizeof(int64_t) * (size_t)(sections + 1));
  if (bounds == NULL) return PyErr_NoMemory();
  int64_t min = dim_size / sections, extra = dim_size % sections;
  bounds[0] = 0;
  for (int64_t i = 0; i < sections; i++) bounds[i + 1] = bounds[i] + min + (i < extra);
  PyObject *out = slices(h, dim, bounds, (size_t)sections);
  PyMem_Free(bounds);
  return out;
}

/* ATen's tensor_split(indices): slice(prev, index) for each, then the rest. Each slice wraps
 * and clamps its own bounds, so the bounds go to c10c_tensor_slice as they are. */
static PyObject *split_indices(c10c_tensor *h, const int64_t *indices, size_t n, int64_t dim) {
  if (c10c_tensor_dim(h) == 0) return need_dims(h);
  int64_t dim_size;
  c10c_status st = c10c_tensor_size(&dim_size, h, dim);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  if (dim < 0) dim += (int64_t)c10c_tensor_dim(h);
  c10c_tensor **pieces = PyMem_Calloc(n + 2, sizeof *pieces);
  if (pieces == NULL) return PyErr_NoMemory();
  int64_t start = 0;
  for (size_t i = 0; i <= n; i++) {
    int64_t end = i < n ? indices[i] : dim_size;
    st = c10c_tensor_slice(&pieces[i], h, dim, start, end, 1);
    if (st != C10C_STATUS_OK) {
      for (size_t k = 0; k < i; k++) c10c_tensor_release(pieces[k]);
      PyMem_Free(pieces);
      return pyc10_raise(st);
    }
    start = end;
  }
  PyObject *t = pyc10_wrap_tuple(pieces, n + 1);
  PyMem_Free(pieces);
  return t;
}

static pa_parser tensor_split_p = PA_PARSER("Tensor", "tensor_split");
static PyObject *tensor_split(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  SELF_HANDLE(h);
  PARSE(tensor_split_p, r);
  int64_t dim;
  if (pa_int(&r, 1, &dim) < 0) return NULL;
  if (r.overload == 2) {
    int64_t sections;
    if (pa_int(&r, 0, &sections) < 0) return NULL;
    SELF_HANDLE_AGAIN(h);
    return split_sections(h, sections, dim);
  }
  int64_t stack[PA_MAX_DIMS];
  if (r.overload == 0) {
    Py_ssize_t n;
    if (pa_intlist(&r, 0, stack, PA_MAX_DIMS, &n) < 0) return NULL;
    SELF_HANDLE_AGAIN(h);
    return split_indices(h, stack, (size_t)n, dim);
  }
  c10c_tensor *ix = pyc10_handle(r.obj[0]);
  if (ix == NULL) return NULL;
  SELF_HANDLE_AGAIN(h); /* dim's __index__ may have swapped it */
  c10c_device dev = c10c_tensor_device(ix);
  if (dev.type != C10C_DEVICE_TYPE_CPU) {
    PyObject *d = PyObject_GetAttrString(r.obj[0], "device");
    if (d == NULL) return NULL;
    RUNTIME_ERROR("tensor_split expected tensor_indices_or_sections to be on cpu, but it's on %S",
                  d);
    Py_DECREF(d);
    return NULL;
  }
  if (c10c_tensor_dtype(ix) != C10C_DTYPE_INT64)
    return RUNTIME_ERROR(
        "tensor_split expected tensor_indices_or_sections to have dtype of long, but got %s",
        c10c_dtype_c10_name(c10c_tensor_dtype(ix)));
  size_t nd = c10c_tensor_dim(ix);
  if (nd > 1)
    return RUNTIME_ERROR(
        "tensor_split expected tensor_indices_or_sections to be a "
        "zero-dimensional or one-dimensional tensor, but got a tensor with %zu "
        "dims",
        nd);
  if (nd == 0) {
    int64_t sections;
    if (pa_tensor_int64(r.obj[0], &sections) < 0) return NULL;
    return split_sections(h, sections, dim);
  }
  int64_t n = c10c_tensor_numel(ix), stride = c10c_tensor_strides(ix)[0];
  const int64_t *data = n > 0 ? c10c_tensor_data(ix) : NULL;
  if (n > 0 && data == NULL) return pyc10_raise(C10C_STATUS_ERROR);
  int64_t *indices = n > PA_MAX_DIMS ? PyMem_Malloc(sizeof(int64_t) * (size_t)n) : stack;
  if (indices == NULL) return PyErr_NoMemory();
  for (int64_t i = 0; i < n; i++) indices[i] = data[i * stride];
  PyObject *out = split_indices(h, indices, (size_t)n, dim);
  if (indices != stack) PyMem_Free(indices);
  return out;
}

static PyObject *t_tensor_split(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  return pyc10_viewed(self, tensor_split(self, args, nargs, kwnames));
}

/* hsplit/vsplit/dsplit: tensor_split along dim (hsplit: 0 for 1-dim tensors, else 1) after
 * torch's checks. */
static PyObject *xsplit(PyObject *self, pa_parser *p, const char *name, size_t min_dims,
                        PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  SELF_HANDLE(h);
  pa_args r;
  if (pa_parse(p, args, nargs, kwnames, &r) < 0) return NULL;
  int64_t sections = 0, indices[PA_MAX_DIMS];
  Py_ssize_t n = 0;
  if (r.overload == 0 ? pa_int(&r, 0, &sections) : pa_intlist(&r, 0, indices, PA_MAX_DIMS, &n))
    return NULL;
  SELF_HANDLE_AGAIN(h);
  size_t nd = c10c_tensor_dim(h);
  if (nd < min_dims)
    return RUNTIME_ERROR(
        "torch.%s requires a tensor with at least %zu dimension, but got a "
        "tensor with %zu dimensions!",
        name, min_dims, nd);
  int64_t dim = min_dims == 1 ? (nd == 1 ? 0 : 1) : min_dims == 2 ? 0 : 2;
  if (r.overload == 1) return split_indices(h, indices, (size_t)n, dim);
  int64_t dim_size = c10c_tensor_sizes(h)[dim];
  if (sections == 0 || (sections != -1 && dim_size % sections != 0))
    return RUNTIME_ERROR(
        "torch.%s attempted to split along dimension %lld, but the size of the "
        "dimension %lld is not divisible by the split_size %lld!",
        name, (long long)dim, (long long)dim_size, (long long)sections);
  return split_sections(h, sections, dim);
}
static pa_parser hsplit_p = PA_PARSER("Tensor", "hsplit");
static pa_parser vsplit_p = PA_PARSER("Tensor", "vsplit");
static pa_parser dsplit_p = PA_PARSER("Tensor", "dsplit");
static PyObject *t_hsplit(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  return pyc10_viewed(self, xsplit(self, &hsplit_p, "hsplit", 1, args, nargs, kwnames));
}
static PyObject *t_vsplit(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  return pyc10_viewed(self, xsplit(self, &vsplit_p, "vsplit", 2, args, nargs, kwnames));
}
static PyObject *t_dsplit(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  return pyc10_viewed(self, xsplit(self, &dsplit_p, "dsplit", 3, args, nargs, kwnames));
}

/* ---- complex views ---- */

/* The real (part 0) or imaginary (part 1) floats of a complex tensor: view_as_real's geometry
 * with its last dim selected, over the same storage (so the same version counter). */
static PyObject *complex_part(c10c_tensor *h, int part) {
  c10c_dtype real;
  c10c_status st = c10c_dtype_to_real(&real, c10c_tensor_dtype(h));
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  size_t n = c10c_tensor_dim(h);
  int64_t strides[PA_MAX_DIMS], offset;
  if (n > PA_MAX_DIMS) return RUNTIME_ERROR("real/imag: too many dimensions (%zu)", n);
  const int64_t *s = c10c_tensor_strides(h);
  bool overflow = __builtin_mul_overflow(c10c_tensor_storage_offset(h), 2, &offset) ||
                  __builtin_add_overflow(offset, part, &offset);
  for (size_t i = 0; i < n; i++) overflow |= __builtin_mul_overflow(s[i], 2, &strides[i]);
  if (overflow) return pyc10_raise(C10C_STATUS_OVERFLOW);
  c10c_tensor *out = NULL;
  st = c10c_tensor_new_from_storage(&out, c10c_tensor_storage(h), c10c_tensor_sizes(h), strides, n,
                                    offset, real);
  return pyc10_result(st, &out);
}

static PyObject *get_real(PyObject *self, void *closure) {
  (void)closure;
  SELF_HANDLE(h);
  if (!c10c_dtype_is_complex(c10c_tensor_dtype(h))) return Py_NewRef(self);
  return pyc10_viewed(self, complex_part(h, 0));
}

static PyObject *get_imag(PyObject *self, void *closure) {
  (void)closure;
  SELF_HANDLE(h);
  if (!c10c_dtype_is_complex(c10c_tensor_dtype(h)))
    return RUNTIME_ERROR("imag is not implemented for tensors with non-complex dtypes.");
  return pyc10_viewed(self, complex_part(h, 1));
}

/* t.real = v / t.imag = v: copies v into the part, as torch. */
static int set_part(PyObject *self, PyObject *value, void *closure) {
  PyObject *part = (closure != NULL ? get_imag : get_real)(self, NULL);
  if (part == NULL) return -1;
  if (value == NULL) {
    Py_DECREF(part);
    PyErr_SetString(pa_cls.type_error != NULL ? pa_cls.type_error : PyExc_TypeError,
                    "cannot delete a tensor's real or imag part");
    return -1;
  }
  PyObject *r = PyObject_CallMethod(part, "copy_", "O", value);
  Py_DECREF(part);
  Py_XDECREF(r);
  return r == NULL ? -1 : 0;
}

/* conj(): self for real dtypes (as torch). pyc10 has no conjugate bit: for complex dtypes a new
 * contiguous tensor holding the conjugated values (torch returns a lazy view of self; writes to
 * pyc10's result do not reach self). The imaginary parts' sign bits are flipped, which negates
 * every floating format (NaN and -0.0 as torch's conj). */
static PyObject *t_conj(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  if (!c10c_dtype_is_complex(c10c_tensor_dtype(h))) return Py_NewRef(self);
  c10c_tensor *out = NULL;
  c10c_status st = c10c_tensor_clone(&out, h, C10C_MEMORY_FORMAT_CONTIGUOUS);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  int64_t numel = c10c_tensor_numel(out);
  size_t item = c10c_tensor_itemsize(out);
  unsigned char *data = numel > 0 ? c10c_tensor_data(out) : NULL;
  if (numel > 0 && c10c_tensor_device(out).type != C10C_DEVICE_TYPE_CPU) {
    c10c_tensor_release(out);
    return RUNTIME_ERROR("conj(): pyc10 conjugates complex tensors on the CPU only");
  }
  if (numel > 0 && data == NULL) {
    c10c_tensor_release(out);
    return pyc10_raise(C10C_STATUS_ERROR);
  }
  for (int64_t i = 0; i < numel; i++) data[(size_t)i * item + item - 1] ^= 0x80;
  return pyc10_wrap(out);
}

#define M(name, fn) \
  { name, PYC10_FASTCALL(fn), METH_FASTCALL | METH_KEYWORDS, NULL }
PyMethodDef pyc10_inplace_methods[] = {
    {"conj", t_conj, METH_NOARGS,
     "conj() -> Tensor\n\nself for real dtypes; for complex ones a new tensor holding the "
     "conjugates (pyc10 has no conjugate bit: torch returns a lazy view of self)."},
    M("resize_", t_resize_),
    M("resize_as_", t_resize_as_),
    M("set_", t_set_),
    M("tensor_split", t_tensor_split),
    M("hsplit", t_hsplit),
    M("vsplit", t_vsplit),
    M("dsplit", t_dsplit),
    {NULL, NULL, 0, NULL},
};

static char imag_closure;
PyGetSetDef pyc10_inplace_getset[] = {
    {"real", get_real, set_part,
     "The real parts of a complex tensor as a view of floats; self for real dtypes.", NULL},
    {"imag", get_imag, set_part,
     "The imaginary parts of a complex tensor as a view of floats (RuntimeError for real "
     "dtypes).",
     &imag_closure},
    {NULL, NULL, NULL, NULL, NULL},
};
