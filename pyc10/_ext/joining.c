/* pyc10.cat (and torch's aliases concat, concatenate), pyc10.stack and pyc10.result_type: tensors
 * joined along a dimension, and the dtype promotion across inputs they share.
 *
 * cat follows ATen's cat meta function (TensorShape.cpp): legacy empty 1-dim tensors are skipped,
 * the dim is wrapped against the first tensor that is not one of them, the result's dtype is
 * at::native::result_type of all inputs and its memory format the one they agree on. Each input
 * is copied with the library's copy_ (any dtype, strides, device) into its narrowed slice of the
 * result. stack is ATen's: equal shapes checked, then cat and a view, or cat of unsqueezed inputs
 * for the last position. With out=, both follow ATen's cat.out and stack_out (out's dtype by
 * canCast, resize_output, the overlap checks) and, where a meta tensor takes part, torch's
 * Python meta kernels (their warning, device and safe-cast checks).
 */
#include <string.h>

#include "common.h"

#define raise_with(cls, ...) pyc10_raise_in(cls, PyExc_RuntimeError, __VA_ARGS__)

enum { MAX_INPUTS_ON_STACK = 64 };

/* ---- result_type: ATen's ResultTypeState (TypeProperties.cpp) ---- */

typedef struct {
  int dim, zero, wrapped; /* dtype codes; -1 for Undefined */
} rt_state;

static int promote(int a, int b, int *out) {
  if (a < 0 || b < 0) {
    *out = a < 0 ? b : a;
    return 0;
  }
  c10c_dtype r;
  c10c_status st = c10c_promote_types(&r, (c10c_dtype)a, (c10c_dtype)b);
  if (st != C10C_STATUS_OK) return pyc10_raise(st), -1;
  *out = (int)r;
  return 0;
}

static int rt_add(rt_state *s, int dt, int64_t ndim, bool wrapped) {
  if (wrapped) { /* a Python number: its category's default dtype */
    if (c10c_dtype_is_complex((c10c_dtype)dt))
      dt = pyc10_default_dtype == C10C_DTYPE_FLOAT64 ? C10C_DTYPE_COMPLEX128 : C10C_DTYPE_COMPLEX64;
    else if (c10c_dtype_is_floating_point((c10c_dtype)dt))
      dt = pyc10_default_dtype;
    return promote(s->wrapped, dt, &s->wrapped);
  }
  return ndim > 0 ? promote(s->dim, dt, &s->dim) : promote(s->zero, dt, &s->zero);
}

/* combine_categories(higher, lower). */
static int combine(int higher, int lower, int *out) {
  if (higher >= 0 && c10c_dtype_is_complex((c10c_dtype)higher)) return *out = higher, 0;
  if (lower >= 0 && c10c_dtype_is_complex((c10c_dtype)lower)) {
    if (higher >= 0 && c10c_dtype_is_floating_point((c10c_dtype)higher)) {
      c10c_dtype c;
      c10c_status st = c10c_dtype_to_complex(&c, (c10c_dtype)higher);
      if (st != C10C_STATUS_OK) return pyc10_raise(st), -1;
      return *out = (int)c, 0;
    }
    return *out = lower, 0;
  }
  if (higher >= 0 && c10c_dtype_is_floating_point((c10c_dtype)higher)) return *out = higher, 0;
  if (higher == C10C_DTYPE_BOOL || (lower >= 0 && c10c_dtype_is_floating_point((c10c_dtype)lower)))
    return promote(higher, lower, out);
  return *out = higher >= 0 ? higher : lower, 0;
}

static int rt_result(const rt_state *s, int *out) {
  int low;
  if (combine(s->zero, s->wrapped, &low) < 0) return -1;
  return combine(s->dim, low, out);
}

/* A Scalar argument's dtype as a wrapped number: bool, int64, float64 or complex128. */
static int scalar_dtype(PyObject *o) {
  if (PyBool_Check(o)) return C10C_DTYPE_BOOL;
  if (PyLong_Check(o)) return C10C_DTYPE_INT64;
  if (PyFloat_Check(o)) return C10C_DTYPE_FLOAT64;
  if (PyComplex_Check(o)) return C10C_DTYPE_COMPLEX128;
  c10c_tensor *h = PyObject_TypeCheck(o, pa_cls.tensor) ? pyc10_handle(o) : NULL;
  if (h != NULL) { /* a 0-dim tensor bound to Scalar: c10::Scalar of its kind */
    c10c_dtype dt = c10c_tensor_dtype(h);
    return dt == C10C_DTYPE_BOOL              ? C10C_DTYPE_BOOL
           : c10c_dtype_is_complex(dt)        ? C10C_DTYPE_COMPLEX128
           : c10c_dtype_is_floating_point(dt) ? C10C_DTYPE_FLOAT64
                                              : C10C_DTYPE_INT64;
  }
  /* numpy scalars as torch's parser makes Scalars of them: integers as int64, complex as
   * complex (np.complex128, a complex, above), everything else (np.bool_ too) as a double */
  PyObject *i = PyNumber_Index(o);
  if (i != NULL) {
    Py_DECREF(i);
    return C10C_DTYPE_INT64;
  }
  PyErr_Clear();
  return C10C_DTYPE_FLOAT64;
}

/* The pyc10.dtype of a code (pyc10._dtype._BY_VALUE: one object per dtype). */
static PyObject *dtype_object(int code) {
  static PyObject *by_value;
  if (by_value == NULL) {
    PyObject *mod = PyImport_ImportModule("pyc10._dtype");
    if (mod == NULL) return NULL;
    by_value = PyObject_GetAttrString(mod, "_BY_VALUE");
    Py_DECREF(mod);
    if (by_value == NULL) return NULL;
  }
  PyObject *key = PyLong_FromLong(code);
  if (key == NULL) return NULL;
  PyObject *d = PyObject_GetItem(by_value, key);
  Py_DECREF(key);
  return d;
}

/* promote_types(type1, type2), can_cast(from_, to): c10's rules, with torch's parser's binding
 * (Python's float, int, bool and complex classes are dtypes, as torch's) and errors. */
static pa_parser promote_types_p = PA_PARSER("pyc10", "promote_types");
static PyObject *f_promote_types(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  PARSE(promote_types_p, r);
  int a, b;
  if (pa_dtype(&r, 0, &a) < 0 || pa_dtype(&r, 1, &b) < 0) return NULL;
  c10c_dtype out;
  c10c_status st = c10c_promote_types(&out, (c10c_dtype)a, (c10c_dtype)b);
  return st == C10C_STATUS_OK ? dtype_object((int)out) : pyc10_raise(st);
}

static pa_parser can_cast_p = PA_PARSER("pyc10", "can_cast");
static PyObject *f_can_cast(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  PARSE(can_cast_p, r);
  int from, to;
  if (pa_dtype(&r, 0, &from) < 0 || pa_dtype(&r, 1, &to) < 0) return NULL;
  return PyBool_FromLong(c10c_dtype_can_cast((c10c_dtype)from, (c10c_dtype)to));
}

static pa_parser result_type_p = PA_PARSER("pyc10", "result_type");
static PyObject *f_result_type(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  PARSE(result_type_p, r);
  rt_state s = {-1, -1, -1};
  for (int i = 0; i < 2; i++) {
    PyObject *o = r.obj[i];
    bool tensor = r.sig->params[i].type == PA_TENSOR;
    if (tensor) {
      c10c_tensor *h = pyc10_handle(o);
      if (h == NULL) return NULL;
      if (rt_add(&s, c10c_tensor_dtype(h), (int64_t)c10c_tensor_dim(h), false) < 0) return NULL;
    } else {
      int dt = scalar_dtype(o);
      if (dt < 0 || rt_add(&s, dt, 0, true) < 0) return NULL;
    }
  }
  int out;
  if (rt_result(&s, &out) < 0) return NULL;
  return dtype_object(out);
}

/* ---- cat ---- */

/* The inputs of a TensorList argument, their handles borrowed from the list (kept alive by it),
 * or owned (inputs_own) where out= may resize one of them: the resize swaps that object's handle
 * and releases the old one. */
typedef struct {
  PyObject *seq; /* the argument as a tuple (a new reference) */
  Py_ssize_t n;
  c10c_tensor **h;
  c10c_tensor *small[MAX_INPUTS_ON_STACK];
  bool owned;
} inputs;

static int inputs_read(PyObject *list, inputs *in) {
  in->seq = PySequence_Tuple(list);
  if (in->seq == NULL) return -1;
  in->n = PyTuple_Size(in->seq);
  in->h = in->n <= MAX_INPUTS_ON_STACK ? in->small : PyMem_Malloc(sizeof(c10c_tensor *) * in->n);
  if (in->h == NULL) {
    in->h = in->small;
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < in->n; i++)
    if ((in->h[i] = pyc10_handle(PyTuple_GetItem(in->seq, i))) == NULL) return -1;
  return 0;
}

static void inputs_own(inputs *in) {
  for (Py_ssize_t i = 0; i < in->n; i++) c10c_tensor_retain(in->h[i]);
  in->owned = true;
}

/* Whether out (an out= tensor) is one of the inputs themselves. */
static bool inputs_hold(const inputs *in, PyObject *out) {
  for (Py_ssize_t i = 0; in->seq != NULL && i < in->n; i++)
    if (PyTuple_GetItem(in->seq, i) == out) return true;
  return false;
}

static void inputs_release(inputs *in) {
  for (Py_ssize_t i = 0; in->owned && i < in->n; i++) pyc10_release_tensor(in->h[i]);
  if (in->h != in->small) PyMem_Free(in->h);
  Py_CLEAR(in->seq);
}

static bool skipped(const c10c_tensor *t) { /* cat_should_skip_tensor */
  return c10c_tensor_dim(t) == 1 && c10c_tensor_sizes(t)[0] == 0;
}

static PyObject *dim_error(int64_t dim, int64_t ndim) {
  int64_t lo = ndim > 0 ? -ndim : -1, hi = ndim > 0 ? ndim - 1 : 0;
  return pyc10_raise_in(pa_cls.index_error, PyExc_IndexError,
                        "Dimension out of range (expected to be in range of [%lld, %lld], but got "
                        "%lld)",
                        (long long)lo, (long long)hi, (long long)dim);
}

/* torch's common-device check of the generated wrapper (cat's argument is "tensors"). */
static int same_device(const inputs *in) {
  c10c_device first = c10c_tensor_device(in->h[0]);
  bool cuda = false;
  for (Py_ssize_t i = 0; i < in->n; i++)
    cuda = cuda || c10c_tensor_device(in->h[i]).type == C10C_DEVICE_TYPE_CUDA;
  for (Py_ssize_t i = 1; i < in->n; i++) {
    c10c_device d = c10c_tensor_device(in->h[i]);
    if (d.type == first.type && d.index == first.index) continue;
    char a[64], b[64];
    c10c_device_to_string(a, sizeof a, d);
    c10c_device_to_string(b, sizeof b, first);
    raise_with(pa_cls.runtime_error,
               "Expected all tensors to be on the same device, but got tensors is on %s, "
               "different from other tensors on %s (when checking argument in method "
               "wrapper_%s_cat)",
               a, b, cuda ? "CUDA" : "CPU");
    return -1;
  }
  return 0;
}

/* What ATen's cat meta function computes: the result's sizes, dtype, memory format, device and
 * the wrapped dim; valid is the first input that is not skipped (n when all are). */
typedef struct {
  int64_t sizes[PA_MAX_DIMS];
  size_t ndim;
  int64_t dim;
  Py_ssize_t valid;
  int dtype, format;
  c10c_device device;
} cat_plan;

/* ATen's cat checks on in's tensors along dim; -1 with torch's error. */
static int cat_prepare(const inputs *in, int64_t dim, cat_plan *p) {
  if (in->n == 0) {
    pyc10_raise_in(pa_cls.value_error, PyExc_ValueError,
                   "torch.cat(): expected a non-empty list of Tensors");
    return -1;
  }
  if (same_device(in) < 0) return -1;
  for (Py_ssize_t i = 0; i < in->n; i++)
    if (c10c_tensor_dim(in->h[i]) == 0) {
      raise_with(pa_cls.runtime_error,
                 "zero-dimensional tensor (at position %zd) cannot be concatenated", i);
      return -1;
    }
  Py_ssize_t valid = in->n; /* the first tensor that is not skipped */
  for (Py_ssize_t i = 0; i < in->n && valid == in->n; i++)
    if (!skipped(in->h[i])) valid = i;
  if (valid < in->n) { /* legacy_cat_wrap_dim */
    int64_t ndim = (int64_t)c10c_tensor_dim(in->h[valid]);
    if (dim < -ndim || dim >= ndim) return dim_error(dim, ndim), -1;
    if (dim < 0) dim += ndim;
  }
  rt_state s = {-1, -1, -1};
  int format = C10C_MEMORY_FORMAT_CONTIGUOUS, seen = -1; /* compute_output_memory_format */
  for (Py_ssize_t i = 0; i < in->n; i++) {
    c10c_tensor *t = in->h[i];
    if (rt_add(&s, c10c_tensor_dtype(t), (int64_t)c10c_tensor_dim(t), false) < 0) return -1;
    int f = c10c_tensor_is_strides_like(t, C10C_MEMORY_FORMAT_CHANNELS_LAST)
                ? C10C_MEMORY_FORMAT_CHANNELS_LAST
            : c10c_tensor_is_strides_like(t, C10C_MEMORY_FORMAT_CHANNELS_LAST_3D)
                ? C10C_MEMORY_FORMAT_CHANNELS_LAST_3D
                : C10C_MEMORY_FORMAT_CONTIGUOUS;
    if (seen == -2) continue;
    if (f == C10C_MEMORY_FORMAT_CONTIGUOUS || (seen >= 0 && seen != f))
      seen = -2, format = C10C_MEMORY_FORMAT_CONTIGUOUS;
    else
      seen = f, format = f;
  }
  if (rt_result(&s, &p->dtype) < 0) return -1;
  p->format = format, p->dim = dim, p->valid = valid, p->ndim = 1;
  memset(p->sizes, 0, sizeof p->sizes);
  p->device = c10c_tensor_device(in->h[valid < in->n ? valid : 0]);
  if (valid == in->n) return 0;
  const c10c_tensor *first = in->h[valid];
  size_t ndim = c10c_tensor_dim(first);
  if (ndim > PA_MAX_DIMS) return raise_with(pa_cls.runtime_error, "too many dims"), -1;
  memcpy(p->sizes, c10c_tensor_sizes(first), ndim * sizeof *p->sizes);
  p->ndim = ndim;
  p->sizes[dim] = 0;
  for (Py_ssize_t i = 0; i < in->n; i++) {
    const c10c_tensor *t = in->h[i];
    if (skipped(t)) continue;
    size_t tdim = c10c_tensor_dim(t);
    if (tdim != ndim) {
      raise_with(pa_cls.runtime_error,
                 "Tensors must have same number of dimensions: got %zu and %zu", ndim, tdim);
      return -1;
    }
    const int64_t *ts = c10c_tensor_sizes(t), *fs = c10c_tensor_sizes(first);
    for (size_t d = 0; d < ndim; d++)
      if ((int64_t)d != dim && ts[d] != fs[d]) {
        raise_with(pa_cls.runtime_error,
                   "Sizes of tensors must match except in dimension %lld. Expected size %lld "
                   "but got size %lld for tensor number %zd in the list.",
                   (long long)dim, (long long)fs[d], (long long)ts[d], i);
        return -1;
      }
    p->sizes[dim] += ts[dim];
  }
  return 0;
}

/* Each input that is not skipped copied into its slice of dst along p's dim. */
static int cat_copy(const inputs *in, const cat_plan *p, c10c_tensor *dst) {
  int64_t at = 0;
  for (Py_ssize_t i = 0; p->valid < in->n && i < in->n; i++) {
    const c10c_tensor *t = in->h[i];
    if (skipped(t)) continue;
    int64_t len = c10c_tensor_sizes(t)[p->dim];
    c10c_tensor *slice = NULL;
    c10c_status st = c10c_tensor_narrow(&slice, dst, p->dim, at, len);
    if (st == C10C_STATUS_OK) st = c10c_tensor_copy_(slice, t);
    pyc10_release_tensor(slice);
    if (st != C10C_STATUS_OK) return pyc10_raise(st), -1;
    at += len;
  }
  return 0;
}

/* ATen's cat of in's tensors along dim: a new tensor, or NULL with torch's error. */
static c10c_tensor *cat(const inputs *in, int64_t dim) {
  cat_plan p;
  if (cat_prepare(in, dim, &p) < 0) return NULL;
  c10c_tensor *out = NULL;
  c10c_status st = c10c_tensor_empty(&out, p.sizes, p.ndim, (c10c_dtype)p.dtype, p.device,
                                     (c10c_memory_format)p.format);
  if (st != C10C_STATUS_OK) return (c10c_tensor *)pyc10_raise(st);
  if (cat_copy(in, &p, out) < 0) {
    pyc10_release_tensor(out);
    return NULL;
  }
  return out;
}

/* ---- out= of cat and stack ---- */

/* c10's canCast (cat's rule for out's dtype): no complex to real, floating to integral, or
 * anything but bool to bool. */
static bool can_cast(c10c_dtype from, c10c_dtype to) {
  bool from_int = !c10c_dtype_is_floating_point(from) && !c10c_dtype_is_complex(from) &&
                  from != C10C_DTYPE_BOOL;
  bool to_int =
      !c10c_dtype_is_floating_point(to) && !c10c_dtype_is_complex(to) && to != C10C_DTYPE_BOOL;
  if (c10c_dtype_is_complex(from) && !c10c_dtype_is_complex(to)) return false;
  if (c10c_dtype_is_floating_point(from) && to_int) return false;
  if ((from_int || c10c_dtype_is_floating_point(from) || c10c_dtype_is_complex(from)) &&
      to == C10C_DTYPE_BOOL)
    return false;
  return true;
}

/* torch._prims_common's can_safe_cast_to (the meta kernels' rule): by the target's kind first. */
static bool can_safe_cast(c10c_dtype from, c10c_dtype to) {
  bool (*const kinds[])(c10c_dtype) = {c10c_dtype_is_complex, c10c_dtype_is_floating_point};
  for (size_t k = 0; k < 2; k++) {
    if (kinds[k](to)) return true;
    if (kinds[k](from)) return false;
  }
  return to != C10C_DTYPE_BOOL || from == C10C_DTYPE_BOOL;
}

/* torch's assert_no_internal_overlap: dst's own elements may not share memory. */
static int no_internal_overlap(const c10c_tensor *dst) {
  if (c10c_tensor_is_non_overlapping_and_dense(dst)) return 0;
  size_t n = c10c_tensor_dim(dst);
  const int64_t *sz = c10c_tensor_sizes(dst), *sd = c10c_tensor_strides(dst);
  for (size_t i = 0; i < n; i++)
    if (sd[i] == 0 && sz[i] > 1) {
      raise_with(pa_cls.runtime_error,
                 "unsupported operation: more than one element of the written-to tensor refers "
                 "to a single memory location. Please clone() the tensor before performing the "
                 "operation.");
      return -1;
    }
  return 0;
}

/* torch's assert_no_overlap (get_overlap_status Partial or Full): dst and an input in the same
 * bytes of one storage, both non-overlapping and dense. */
static int no_overlap(const c10c_tensor *dst, const c10c_tensor *src) {
  if (dst == src) goto overlap;
  if (c10c_tensor_numel(dst) == 0 || c10c_tensor_numel(src) == 0) return 0;
  if (!c10c_tensor_is_non_overlapping_and_dense(dst) ||
      !c10c_tensor_is_non_overlapping_and_dense(src))
    return 0;
  if (c10c_tensor_storage(dst) != c10c_tensor_storage(src)) return 0;
  int64_t a = c10c_tensor_storage_offset(dst) * (int64_t)c10c_tensor_itemsize(dst);
  int64_t b = c10c_tensor_storage_offset(src) * (int64_t)c10c_tensor_itemsize(src);
  if (a < b + c10c_tensor_nbytes(src) && b < a + c10c_tensor_nbytes(dst)) goto overlap;
  return 0;
overlap:
  raise_with(pa_cls.runtime_error,
             "unsupported operation: some elements of the input tensor and the written-to tensor "
             "refer to a single memory location. Please clone() the tensor before performing the "
             "operation.");
  return -1;
}

/* torch's meta kernels (torch/_refs' cat and stack under out_wrapper): result (released here)
 * made first, out resized with their warning, then result copied into out after their device
 * and can_safe_cast_to checks. */
static int out_meta(c10c_tensor *result, PyObject *into) {
  if (result == NULL) return -1;
  int rc = pyc10_resize_output(into, c10c_tensor_sizes(result), c10c_tensor_dim(result), -1, true);
  c10c_tensor *h = rc < 0 ? NULL : pyc10_handle(into);
  if (h != NULL) {
    c10c_device from = c10c_tensor_device(result), to = c10c_tensor_device(h);
    c10c_dtype dfrom = c10c_tensor_dtype(result), dto = c10c_tensor_dtype(h);
    char a[64], b[64];
    c10c_device_to_string(a, sizeof a, from);
    c10c_device_to_string(b, sizeof b, to);
    if (from.type != to.type || from.index != to.index) {
      raise_with(pa_cls.runtime_error,
                 "Attempting to copy from device %s to device %s, but cross-device copies are "
                 "not allowed!",
                 a, b);
      rc = -1;
    } else if (!can_safe_cast(dfrom, dto)) {
      raise_with(pa_cls.runtime_error,
                 "Attempting to cast from torch.%s to out tensor with dtype torch.%s, but this "
                 "can't be cast because it is not safe!",
                 c10c_dtype_name(dfrom), c10c_dtype_name(dto));
      rc = -1;
    } else {
      c10c_status st = c10c_tensor_copy_(h, result);
      if (st != C10C_STATUS_OK) pyc10_raise(st), rc = -1;
    }
  }
  pyc10_release_tensor(result);
  return rc < 0 ? -1 : 0;
}

/* ATen's cat.out into into (a pyc10 tensor) or, when dst is given, into dst (a view of the
 * right shape, as stack's): the meta function's checks and canCast of the result type to out's
 * dtype, out's device, resize_output (restrided to the inputs' memory format when resized), the
 * overlap checks, then the copies. Any meta tensor takes torch's meta kernel's way. */
static int cat_out(const inputs *in, int64_t dim, PyObject *into, c10c_tensor *dst) {
  c10c_tensor *h = dst != NULL ? dst : pyc10_handle(into);
  if (h == NULL) return -1;
  bool meta = c10c_tensor_device(h).type == C10C_DEVICE_TYPE_META;
  for (Py_ssize_t i = 0; i < in->n; i++)
    meta = meta || c10c_tensor_device(in->h[i]).type == C10C_DEVICE_TYPE_META;
  if (meta && dst == NULL) return out_meta(cat(in, dim), into);
  cat_plan p;
  if (cat_prepare(in, dim, &p) < 0) return -1;
  c10c_dtype want = c10c_tensor_dtype(h);
  if (!can_cast((c10c_dtype)p.dtype, want)) {
    const char *name = c10c_dtype_c10_name(want);
    TYPE_ERROR("torch.cat(): input types can't be cast to the desired output type %s",
               name ? name : "?");
    return -1;
  }
  c10c_device dev = c10c_tensor_device(h);
  if (dev.type != p.device.type || dev.index != p.device.index) {
    char a[64], b[64];
    c10c_device_to_string(a, sizeof a, p.device);
    c10c_device_to_string(b, sizeof b, dev);
    raise_with(pa_cls.runtime_error, "Expected out tensor to have device %s, but got %s instead", a,
               b);
    return -1;
  }
  if (dst == NULL) {
    if (pyc10_resize_output(into, p.sizes, p.ndim, p.format, false) < 0) return -1;
    if ((h = pyc10_handle(into)) == NULL) return -1;
  }
  if (no_internal_overlap(h) < 0) return -1;
  /* out among the inputs is the same TensorImpl in ATen, resized with it: Full overlap */
  if (into != NULL && inputs_hold(in, into)) return no_overlap(h, h);
  for (Py_ssize_t i = 0; i < in->n; i++)
    if (no_overlap(h, in->h[i]) < 0) return -1;
  return cat_copy(in, &p, h);
}

/* torch's parser, for a function with one signature, names the first element of a tensor list
 * that is not a tensor (python_arg_parser.cpp's is_tensor_list_and_append_overloaded). */
static int check_list(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  PyObject *list = nargs > 0 ? args[0] : NULL;
  for (Py_ssize_t k = 0; list == NULL && kwnames != NULL && k < PyTuple_Size(kwnames); k++)
    if (PyUnicode_CompareWithASCIIString(PyTuple_GetItem(kwnames, k), "tensors") == 0)
      list = args[nargs + k];
  if (list == NULL || !(PyList_Check(list) || PyTuple_Check(list))) return 0;
  Py_ssize_t n = PySequence_Size(list);
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = PySequence_GetItem(list, i);
    if (item == NULL) return -1;
    if (!pa__is_tensor(item)) {
      PyObject *name = pa__typename_of(item);
      Py_DECREF(item);
      if (name == NULL) return -1;
      pyc10_raise_in(pa_cls.type_error, PyExc_TypeError,
                     "expected Tensor as element %zd in argument 0, but got %U", i, name);
      Py_DECREF(name);
      return -1;
    }
    Py_DECREF(item);
  }
  return 0;
}

static pa_parser cat_p = PA_PARSER("pyc10", "cat");
static pa_parser concat_p = PA_PARSER("pyc10", "concat");
static pa_parser concatenate_p = PA_PARSER("pyc10", "concatenate");

static PyObject *cat_call(pa_parser *p, FASTCALL_ARGS) {
  if (check_list(args, nargs, kwnames) < 0) return NULL;
  PARSE(*p, r);
  int64_t dim;
  if (pa_int(&r, 1, &dim) < 0) return NULL;
  PyObject *into = pa_has(&r, 2) && r.obj[2] != Py_None ? r.obj[2] : NULL;
  inputs in = {0};
  PyObject *result = NULL;
  if (inputs_read(r.obj[0], &in) == 0) {
    if (into != NULL) {
      inputs_own(&in);
      if (cat_out(&in, dim, into, NULL) == 0) result = Py_NewRef(into);
    } else {
      c10c_tensor *out = cat(&in, dim);
      if (out != NULL) result = pyc10_wrap(out);
    }
  }
  inputs_release(&in);
  return result;
}
static PyObject *f_cat(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  return cat_call(&cat_p, args, nargs, kwnames);
}
static PyObject *f_concat(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  return cat_call(&concat_p, args, nargs, kwnames);
}
static PyObject *f_concatenate(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  return cat_call(&concatenate_p, args, nargs, kwnames);
}

/* ---- stack ---- */

static void format_sizes(char *buf, size_t cap, const c10c_tensor *t) {
  size_t n = c10c_tensor_dim(t), used = 0;
  const int64_t *s = c10c_tensor_sizes(t);
  used += (size_t)snprintf(buf, cap, "[");
  for (size_t i = 0; i < n && used < cap; i++)
    used += (size_t)snprintf(buf + used, cap - used, i ? ", %lld" : "%lld", (long long)s[i]);
  if (used < cap) snprintf(buf + used, cap - used, "]");
}

static bool any_meta(const inputs *in) {
  for (Py_ssize_t i = 0; i < in->n; i++)
    if (c10c_tensor_device(in->h[i]).type == C10C_DEVICE_TYPE_META) return true;
  return false;
}

/* stack's checks: a non-empty list, dim wrapped against ndim + 1 (*dim, *ndim set), equal
 * shapes (check_stack_inputs); -1 with torch's error. */
static int stack_check(const inputs *in, int64_t *dim, int64_t *ndim) {
  if (in->n == 0)
    return raise_with(pa_cls.runtime_error, "stack expects a non-empty TensorList"), -1;
  *ndim = (int64_t)c10c_tensor_dim(in->h[0]);
  if (*dim < -(*ndim + 1) || *dim > *ndim) return dim_error(*dim, *ndim + 1), -1;
  if (*dim < 0) *dim += *ndim + 1;
  const int64_t *first = c10c_tensor_sizes(in->h[0]);
  for (Py_ssize_t i = 1; i < in->n; i++) {
    const c10c_tensor *t = in->h[i];
    bool same = (int64_t)c10c_tensor_dim(t) == *ndim &&
                (*ndim == 0 || memcmp(c10c_tensor_sizes(t), first, *ndim * sizeof *first) == 0);
    if (same) continue;
    char a[256], b[256];
    format_sizes(a, sizeof a, in->h[0]);
    format_sizes(b, sizeof b, t);
    raise_with(pa_cls.runtime_error,
               "stack expects each tensor to be equal size, but got %s at entry 0 and %s at "
               "entry %zd",
               a, b, i);
    return -1;
  }
  if (*ndim + 1 > PA_MAX_DIMS) return raise_with(pa_cls.runtime_error, "too many dims"), -1;
  return 0;
}

/* in's tensors unsqueezed at dim into un (release with unsqueezed_release); -1 with an error. */
static int unsqueezed(const inputs *in, int64_t dim, inputs *un) {
  memset(un, 0, sizeof *un);
  un->n = in->n;
  un->h = in->n <= MAX_INPUTS_ON_STACK ? un->small : PyMem_Calloc((size_t)in->n, sizeof *un->h);
  if (un->h == NULL) {
    un->n = 0;
    return PyErr_NoMemory(), -1;
  }
  for (Py_ssize_t i = 0; i < in->n; i++) {
    c10c_status st = c10c_tensor_unsqueeze(&un->h[i], in->h[i], dim);
    if (st != C10C_STATUS_OK) {
      un->n = i;
      return pyc10_raise(st), -1;
    }
  }
  return 0;
}
static void unsqueezed_release(inputs *un) {
  for (Py_ssize_t i = 0; i < un->n; i++) pyc10_release_tensor(un->h[i]);
  if (un->h != un->small) PyMem_Free(un->h);
}

static c10c_tensor *stack(inputs *in, int64_t dim) {
  int64_t ndim;
  if (stack_check(in, &dim, &ndim) < 0) return NULL;
  const int64_t *first = c10c_tensor_sizes(in->h[0]);
  int64_t sizes[PA_MAX_DIMS];
  for (int64_t d = 0, k = 0; d <= ndim; d++) sizes[d] = d == dim ? (int64_t)in->n : first[k++];
  if (dim < ndim) { /* cat along dim, then split it with a view */
    c10c_tensor *joined = cat(in, dim);
    if (joined == NULL) return NULL;
    c10c_tensor *out = NULL;
    c10c_status st = c10c_tensor_view(&out, joined, sizes, (size_t)ndim + 1);
    pyc10_release_tensor(joined);
    return st == C10C_STATUS_OK ? out : (c10c_tensor *)pyc10_raise(st);
  }
  /* the last position: cat of the inputs unsqueezed there */
  inputs un;
  c10c_tensor *out = unsqueezed(in, dim, &un) == 0 ? cat(&un, dim) : NULL;
  unsqueezed_release(&un);
  return out;
}

/* ATen's stack_out: for a dim before the last, out is resize_output to the result's shape and,
 * when it views as the cat of the inputs along dim, cat writes into that view; otherwise (and
 * at the last position) cat.out of the unsqueezed inputs into out. Meta goes torch's meta way. */
static int stack_out(inputs *in, int64_t dim, PyObject *into) {
  c10c_tensor *h = pyc10_handle(into);
  if (h == NULL) return -1;
  if (c10c_tensor_device(h).type == C10C_DEVICE_TYPE_META || any_meta(in))
    return out_meta(stack(in, dim), into);
  int64_t ndim;
  if (stack_check(in, &dim, &ndim) < 0) return -1;
  if (dim < ndim) {
    const int64_t *first = c10c_tensor_sizes(in->h[0]);
    int64_t sizes[PA_MAX_DIMS], cat_sizes[PA_MAX_DIMS];
    for (int64_t d = 0, k = 0; d <= ndim; d++) sizes[d] = d == dim ? (int64_t)in->n : first[k++];
    for (int64_t d = 0; d < ndim; d++) cat_sizes[d] = d == dim ? first[d] * in->n : first[d];
    if (pyc10_resize_output(into, sizes, (size_t)ndim + 1, -1, false) < 0) return -1;
    if ((h = pyc10_handle(into)) == NULL) return -1;
    c10c_tensor *view = NULL;
    if (c10c_tensor_view(&view, h, cat_sizes, (size_t)ndim) == C10C_STATUS_OK) {
      int rc = cat_out(in, dim, into, view);
      pyc10_release_tensor(view);
      return rc;
    }
  }
  inputs un;
  int rc = unsqueezed(in, dim, &un) == 0 ? cat_out(&un, dim, into, NULL) : -1;
  unsqueezed_release(&un);
  return rc;
}

static pa_parser stack_p = PA_PARSER("pyc10", "stack");
static PyObject *f_stack(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  if (check_list(args, nargs, kwnames) < 0) return NULL;
  PARSE(stack_p, r);
  int64_t dim;
  if (pa_int(&r, 1, &dim) < 0) return NULL;
  PyObject *into = pa_has(&r, 2) && r.obj[2] != Py_None ? r.obj[2] : NULL;
  inputs in = {0};
  PyObject *result = NULL;
  if (inputs_read(r.obj[0], &in) == 0) {
    if (into != NULL) {
      inputs_own(&in);
      if (stack_out(&in, dim, into) == 0) result = Py_NewRef(into);
    } else {
      c10c_tensor *out = stack(&in, dim);
      if (out != NULL) result = pyc10_wrap(out);
    }
  }
  inputs_release(&in);
  return result;
}

#define F(name, fn) \
  { name, PYC10_FASTCALL(fn), METH_FASTCALL | METH_KEYWORDS, NULL }
static PyMethodDef joining_functions[] = {
    F("cat", f_cat),           F("concat", f_concat),           F("concatenate", f_concatenate),
    F("stack", f_stack),       F("result_type", f_result_type), F("promote_types", f_promote_types),
    F("can_cast", f_can_cast), {NULL, NULL, 0, NULL},
};

int pyc10_joining_init(PyObject *module) {
  for (PyMethodDef *f = joining_functions; f->ml_name != NULL; f++)
    if (f->ml_doc == NULL) f->ml_doc = pa_doc("pyc10", f->ml_name);
  return PyModule_AddFunctions(module, joining_functions);
}
