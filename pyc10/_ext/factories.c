/* The module-level factories: pyc10.empty, zeros, ones, full, the *_like forms, empty_strided,
 * tensor, as_tensor, is_tensor and from_numpy (in numpy.c), with torch's signatures through the
 * parser.
 *
 * empty and zeros with exact int sizes and no keywords (the hot call) skip the parser; every other
 * call binds through it. tensor() builds nested lists of Python numbers here, in C (torch's
 * inference: bools, ints, a float anywhere, a complex anywhere); numpy arrays and scalars, pyc10
 * tensors and other leaves go to pyc10._tensor._tensor_from_data (numpy does the walking there).
 * out= is checked and resized with outarg.c's helpers.
 */
#include <stdlib.h>
#include <string.h>

#include "common.h"

/* Factories take as many dimensions as c10 (torch.empty((1,) * 70) works): more than views. */
enum { MAX_DIMS = 1024 };

#define raise_with(cls, ...) pyc10_raise_in(cls, PyExc_RuntimeError, __VA_ARGS__)

/* pyc10.<module>.<name>, imported once. */
static PyObject *py_attr(PyObject **cache, const char *module, const char *name) {
  if (*cache != NULL) return *cache;
  PyObject *mod = PyImport_ImportModule(module);
  if (mod == NULL) return NULL;
  *cache = PyObject_GetAttrString(mod, name);
  Py_DECREF(mod);
  return *cache;
}

#define not_implemented pyc10_not_implemented

/* ---- the keyword options every factory shares ---- */

typedef struct {
  c10c_dtype dtype;
  c10c_device device;
} options;

/* pin_memory=True of the factory call being made (the GIL is held): the result is moved to
 * pinned memory by pinned_result (torch allocates it there; a copy here). */
static bool pin_requested;

/* torch's refusals of pin_memory=True: a device other than the CPU, or no accelerator. */
static int pin_check(c10c_device device) {
  if (device.type != C10C_DEVICE_TYPE_CPU) {
    raise_with(pa_cls.runtime_error, "Only dense CPU tensors can be pinned");
    return -1;
  }
  if (!c10c_cuda_is_available()) {
    raise_with(pa_cls.runtime_error,
               "pin_memory=True requires a CUDA or other accelerator backend; no pinned memory "
               "allocator is available on this system.");
    return -1;
  }
  return 0;
}

/* t, or t.pin_memory() when the call asked for pinned memory (t's reference is taken). */
static PyObject *pinned_result(PyObject *t) {
  bool pin = pin_requested;
  pin_requested = false;
  if (t == NULL || !pin) return t;
  PyObject *pinned = PyObject_CallMethod(t, "pin_memory", NULL);
  Py_DECREF(t);
  return pinned;
}

/* dtype, layout, device, pin_memory, requires_grad at first..first+4: dtype and device default to
 * dflt; a layout other than strided, pinned memory and autograd are refused as data.c's new_*. */
static int read_options(const pa_args *r, int first, options dflt, options *o) {
  int dtype, layout;
  bool has_device, pin, grad;
  if (pa_dtype(r, first, &dtype) < 0 || pa_layout(r, first + 1, &layout) < 0 ||
      pa_device(r, first + 2, &o->device, &has_device) < 0 || pa_bool(r, first + 3, &pin) < 0 ||
      pa_bool(r, first + 4, &grad) < 0)
    return -1;
  o->dtype = dtype < 0 ? dflt.dtype : (c10c_dtype)dtype;
  if (!has_device) o->device = dflt.device;
  if (layout >= 0 && layout != C10C_LAYOUT_STRIDED) {
    not_implemented(
        "pyc10 tensors are strided: layouts other than pyc10.strided are not implemented");
    return -1;
  }
  if (pin && pin_check(o->device) < 0) return -1;
  pin_requested = pin;
  if (grad) {
    if (!c10c_dtype_is_floating_point(o->dtype) && !c10c_dtype_is_complex(o->dtype)) {
      raise_with(pa_cls.runtime_error,
                 "Only Tensors of floating point and complex dtype can require gradients");
      return -1;
    }
    not_implemented("requires_grad=True: pyc10 has no autograd");
    return -1;
  }
  return 0;
}

int pyc10_tensor_options(const pa_args *r, int first, c10c_dtype *dt, c10c_device *device) {
  options dflt = {*dt, *device}, o;
  if (read_options(r, first, dflt, &o) < 0) return -1;
  if (pin_requested) {
    pin_requested = false;
    not_implemented("pin_memory=True on new_* is not implemented: use pin_memory()");
    return -1;
  }
  *dt = o.dtype;
  *device = o.device;
  return 0;
}

int pyc10_factory_options(const pa_args *r, int first, c10c_dtype *dt, c10c_device *device) {
  options dflt = {*dt, *device}, o;
  pin_requested = false;
  if (read_options(r, first, dflt, &o) < 0) return -1;
  *dt = o.dtype;
  *device = o.device;
  return 0;
}

PyObject *pyc10_pinned_result(PyObject *t) { return pinned_result(t); }

static options default_options(void) {
  options o = {(c10c_dtype)pyc10_default_dtype, pyc10_default_device()};
  return o;
}

/* t.fill_(value) on a new tensor t (stolen): the parser and fill_'s conversions (data.c). */
static PyObject *filled(PyObject *t, PyObject *value) {
  static PyObject *fill_name;
  if (t == NULL) return NULL;
  if (fill_name == NULL && (fill_name = PyUnicode_InternFromString("fill_")) == NULL) {
    Py_DECREF(t);
    return NULL;
  }
  PyObject *stack[2] = {t, value};
  PyObject *r = PyObject_VectorcallMethod(fill_name, stack, 2, NULL);
  if (r == NULL) {
    Py_DECREF(t);
    return NULL;
  }
  Py_DECREF(r);
  return t;
}

/* The dtype full() infers from its fill value, as torch: bool, int64, the default dtype, the
 * default complex dtype; other Scalars (numpy scalars, 0-dim tensors) ask pyc10._defaults. */
static int fill_dtype(PyObject *value, c10c_dtype *out) {
  if (PyBool_Check(value)) {
    *out = C10C_DTYPE_BOOL;
  } else if (PyLong_CheckExact(value)) {
    *out = C10C_DTYPE_INT64;
  } else if (PyFloat_CheckExact(value)) {
    *out = (c10c_dtype)pyc10_default_dtype;
  } else if (PyComplex_CheckExact(value)) {
    *out = pyc10_default_dtype == C10C_DTYPE_FLOAT64 ? C10C_DTYPE_COMPLEX128 : C10C_DTYPE_COMPLEX64;
  } else {
    static PyObject *scalar_dtype;
    if (py_attr(&scalar_dtype, "pyc10._defaults", "scalar_dtype") == NULL) return -1;
    PyObject *d = PyObject_CallFunctionObjArgs(scalar_dtype, value, NULL);
    if (d == NULL) return -1;
    PyObject *v = PyObject_GetAttr(d, pa_cls.dtype_value);
    Py_DECREF(d);
    if (v == NULL) return -1;
    long code = PyLong_AsLong(v);
    Py_DECREF(v);
    if (code == -1 && PyErr_Occurred()) return -1;
    *out = (c10c_dtype)code;
  }
  return 0;
}

/* value as one element of dt in out when that needs no conversion check (1 for ones, and a
 * Python float, int or bool of its own inferred dtype); false for what fill_ must convert. */
static bool plain_element(unsigned char *out, c10c_dtype dt, PyObject *value) {
  if (value == NULL) { /* one */
    switch (dt) {
      case C10C_DTYPE_BOOL:
      case C10C_DTYPE_UINT8:
      case C10C_DTYPE_INT8: out[0] = 1; return true;
      case C10C_DTYPE_INT16: *(int16_t *)out = 1; return true;
      case C10C_DTYPE_INT32: *(int32_t *)out = 1; return true;
      case C10C_DTYPE_INT64: *(int64_t *)out = 1; return true;
      case C10C_DTYPE_FLOAT16: *(uint16_t *)out = 0x3C00; return true;
      case C10C_DTYPE_BFLOAT16: *(uint16_t *)out = 0x3F80; return true;
      case C10C_DTYPE_COMPLEX64:
      case C10C_DTYPE_FLOAT32: *(float *)out = 1.0f; return true;
      case C10C_DTYPE_COMPLEX128:
      case C10C_DTYPE_FLOAT64: *(double *)out = 1.0; return true;
      default: return false;
    }
  }
  if (PyFloat_CheckExact(value) && dt == C10C_DTYPE_FLOAT64) {
    *(double *)out = PyFloat_AsDouble(value);
    return true;
  }
  if (PyFloat_CheckExact(value) && dt == C10C_DTYPE_FLOAT32) {
    double v = PyFloat_AsDouble(value);
    if (v == v && (v > 3.4028234663852886e38 || v < -3.4028234663852886e38) && v != 1.0 / 0.0 &&
        v != -1.0 / 0.0)
      return false; /* fill_ raises c10's overflow error */
    *(float *)out = (float)v;
    return true;
  }
  if (PyLong_CheckExact(value) && dt == C10C_DTYPE_INT64) {
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow) return false;
    *(int64_t *)out = v;
    return true;
  }
  if (PyBool_Check(value) && dt == C10C_DTYPE_BOOL) {
    out[0] = value == Py_True;
    return true;
  }
  return false;
}

/* ---- empty, zeros, ones, full ---- */

/* empty(2, 3) and zeros((2, 3)): exact ints and nothing else; 0 (no error) for anything more. */
static int plain_sizes(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, int64_t *sizes,
                       Py_ssize_t *n) {
  if (kwnames != NULL && PyTuple_Size(kwnames) > 0) return 0;
  PyObject *seq = NULL;
  if (nargs == 1 && (PyTuple_CheckExact(args[0]) || PyList_CheckExact(args[0]))) {
    seq = args[0];
    nargs = PySequence_Size(seq);
  }
  if (nargs == 0 || nargs > MAX_DIMS) return 0;
  for (Py_ssize_t i = 0; i < nargs; i++) {
    PyObject *item = seq == NULL          ? args[i]
                     : PyTuple_Check(seq) ? PyTuple_GetItem(seq, i)
                                          : PyList_GetItem(seq, i);
    if (!PyLong_CheckExact(item)) return 0;
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(item, &overflow);
    if (overflow || v < 0) return 0; /* the parser gives torch's error */
    sizes[i] = v;
  }
  *n = nargs;
  return 1;
}

enum { EMPTY, ZEROS, ONES, FULL };

static pa_parser empty_p = PA_PARSER("pyc10", "empty");
static pa_parser zeros_p = PA_PARSER("pyc10", "zeros");
static pa_parser ones_p = PA_PARSER("pyc10", "ones");
static pa_parser full_p = PA_PARSER("pyc10", "full");

/* empty, zeros, ones, full with out=: ATen's empty_out, zeros_out, full_out resize out with
 * resize_ (no warning; same sizes keep out's strides) and then fill it; their meta kernels resize
 * as resize_output does, with the meta warning (but empty's). */
static PyObject *make_out(int kind, PyObject *into, const int64_t *sizes, size_t n, int format,
                          PyObject *value) {
  if (kind == EMPTY && format >= 0)
    return raise_with(pa_cls.runtime_error,
                      "'memory_format' argument is incompatible with 'out' tensor argument");
  c10c_tensor *h = pyc10_handle(into);
  if (h == NULL) return NULL;
  bool meta = c10c_tensor_device(h).type == C10C_DEVICE_TYPE_META;
  if (kind == EMPTY || meta)
    for (size_t i = 0; i < n; i++)
      if (sizes[i] < 0) {
        char text[512];
        pyc10_sizes_text(text, sizeof text, sizes, n);
        return raise_with(pa_cls.runtime_error,
                          "Trying to create tensor with negative dimension %lld: %s",
                          (long long)sizes[i], text);
      }
  int rc = meta && kind != EMPTY ? pyc10_resize_output(into, sizes, n, -1, true)
                                 : pyc10_resize_(into, sizes, n, -1);
  if (rc < 0) return NULL;
  if (kind == EMPTY || meta) return Py_NewRef(into); /* torch's meta kernels fill nothing */
  static PyObject *one, *zero;
  if (one == NULL && (one = PyLong_FromLong(1)) == NULL) return NULL;
  if (zero == NULL && (zero = PyLong_FromLong(0)) == NULL) return NULL;
  return filled(Py_NewRef(into), kind == ZEROS ? zero : kind == ONES ? one : value);
}

static PyObject *make(int kind, FASTCALL_ARGS) {
  int64_t sizes[MAX_DIMS];
  Py_ssize_t n;
  c10c_tensor *out = NULL;
  _Alignas(16) unsigned char one[16] = {0};
  if (kind <= ONES && plain_sizes(args, nargs, kwnames, sizes, &n)) {
    c10c_dtype dt = (c10c_dtype)pyc10_default_dtype;
    c10c_device dev = pyc10_default_device();
    if (kind == EMPTY) {
      c10c_status st =
          c10c_tensor_empty(&out, sizes, (size_t)n, dt, dev, C10C_MEMORY_FORMAT_CONTIGUOUS);
      return pyc10_result(st, &out);
    }
    if (kind == ZEROS || plain_element(one, dt, NULL)) {
      c10c_status st = c10c_tensor_full(&out, sizes, (size_t)n, dt, dev,
                                        C10C_MEMORY_FORMAT_CONTIGUOUS, kind == ONES ? one : NULL);
      return pyc10_result(st, &out);
    }
  }
  pa_parser *p = kind == EMPTY   ? &empty_p
                 : kind == ZEROS ? &zeros_p
                 : kind == ONES  ? &ones_p
                                 : &full_p;
  pa_args r;
  if (pa_parse(p, args, nargs, kwnames, &r) < 0) return NULL;
  if (pa_intlist(&r, 0, sizes, MAX_DIMS, &n) < 0) return NULL;
  int format = C10C_MEMORY_FORMAT_CONTIGUOUS, out_at = kind == EMPTY ? 2 : kind == FULL ? 2 : 1;
  /* torch's zeros checks its sizes first, with its own text (the others, and zeros on the meta
   * device, fail in empty with "Trying to create tensor with negative dimension ...") */
  if (kind == ZEROS && (!pa_has(&r, 1) || r.obj[1] == Py_None)) {
    c10c_device dev;
    bool has_device;
    if (pa_device(&r, out_at + 3, &dev, &has_device) < 0) return NULL;
    if (!has_device) dev = pyc10_default_device();
    for (Py_ssize_t i = 0; dev.type != C10C_DEVICE_TYPE_META && i < n; i++)
      if (sizes[i] < 0)
        return raise_with(pa_cls.runtime_error, "zeros: Dimension size must be non-negative.");
  }
  if (kind == EMPTY && pa_memory_format(&r, 1, &format) < 0) return NULL;
  PyObject *into;
  if (pyc10_out_arg(&r, out_at, out_at + 1, &into) < 0) return NULL;
  if (into != NULL) return make_out(kind, into, sizes, (size_t)n, format, r.obj[1]);
  if (format < 0) format = C10C_MEMORY_FORMAT_CONTIGUOUS;
  options dflt = default_options(), o;
  if (kind == FULL && fill_dtype(r.obj[1], &dflt.dtype) < 0) return NULL;
  if (read_options(&r, out_at + 1, dflt, &o) < 0) return NULL;
  c10c_status st;
  bool plain = kind == ZEROS ||
               (kind >= ONES && plain_element(one, o.dtype, kind == FULL ? r.obj[1] : NULL));
  if (!plain)
    st = c10c_tensor_empty(&out, sizes, (size_t)n, o.dtype, o.device, (c10c_memory_format)format);
  else
    st = c10c_tensor_full(&out, sizes, (size_t)n, o.dtype, o.device, (c10c_memory_format)format,
                          kind == ZEROS ? NULL : one);
  PyObject *t = pyc10_result(st, &out);
  if (plain) return t;
  if (kind == ONES) {
    static PyObject *one;
    if (one == NULL && (one = PyLong_FromLong(1)) == NULL) {
      Py_XDECREF(t);
      return NULL;
    }
    return filled(t, one);
  }
  if (kind == FULL) return filled(t, r.obj[1]);
  return t;
}

static PyObject *f_empty(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  pin_requested = false;
  return pinned_result(make(EMPTY, args, nargs, kwnames));
}
static PyObject *f_zeros(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  pin_requested = false;
  return pinned_result(make(ZEROS, args, nargs, kwnames));
}
static PyObject *f_ones(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  pin_requested = false;
  return pinned_result(make(ONES, args, nargs, kwnames));
}
static PyObject *f_full(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  pin_requested = false;
  return pinned_result(make(FULL, args, nargs, kwnames));
}

/* ---- empty_like, zeros_like, ones_like, full_like ---- */

static pa_parser empty_like_p = PA_PARSER("pyc10", "empty_like");
static pa_parser zeros_like_p = PA_PARSER("pyc10", "zeros_like");
static pa_parser ones_like_p = PA_PARSER("pyc10", "ones_like");
static pa_parser full_like_p = PA_PARSER("pyc10", "full_like");

static PyObject *make_like(int kind, FASTCALL_ARGS) {
  pa_parser *p = kind == EMPTY   ? &empty_like_p
                 : kind == ZEROS ? &zeros_like_p
                 : kind == ONES  ? &ones_like_p
                                 : &full_like_p;
  pa_args r;
  if (pa_parse(p, args, nargs, kwnames, &r) < 0) return NULL;
  c10c_tensor *h = pyc10_handle(r.obj[0]);
  if (h == NULL) return NULL;
  int first = kind == FULL ? 2 : 1, format;
  if (pa_memory_format(&r, first, &format) < 0) return NULL;
  if (format < 0) format = C10C_MEMORY_FORMAT_PRESERVE;
  options dflt = {c10c_tensor_dtype(h), c10c_tensor_device(h)}, o;
  if (read_options(&r, first + 1, dflt, &o) < 0) return NULL;
  c10c_tensor *out = NULL;
  c10c_status st =
      kind == ZEROS
          ? c10c_tensor_full_like(&out, h, o.dtype, o.device, (c10c_memory_format)format, NULL)
          : c10c_tensor_empty_like(&out, h, o.dtype, o.device, (c10c_memory_format)format);
  PyObject *t = pyc10_result(st, &out);
  if (kind == ONES) {
    static PyObject *one;
    if (one == NULL && (one = PyLong_FromLong(1)) == NULL) {
      Py_XDECREF(t);
      return NULL;
    }
    return filled(t, one);
  }
  if (kind == FULL) return filled(t, r.obj[1]);
  return t;
}

static PyObject *f_empty_like(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  pin_requested = false;
  return pinned_result(make_like(EMPTY, args, nargs, kwnames));
}
static PyObject *f_zeros_like(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  pin_requested = false;
  return pinned_result(make_like(ZEROS, args, nargs, kwnames));
}
static PyObject *f_ones_like(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  pin_requested = false;
  return pinned_result(make_like(ONES, args, nargs, kwnames));
}
static PyObject *f_full_like(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  pin_requested = false;
  return pinned_result(make_like(FULL, args, nargs, kwnames));
}

/* ---- empty_strided ---- */

static pa_parser empty_strided_p = PA_PARSER("pyc10", "empty_strided");
static PyObject *empty_strided_impl(FASTCALL_ARGS);
static PyObject *f_empty_strided(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  pin_requested = false;
  return pinned_result(empty_strided_impl(args, nargs, kwnames));
}
static PyObject *empty_strided_impl(FASTCALL_ARGS) {
  pa_args r;
  if (pa_parse(&empty_strided_p, args, nargs, kwnames, &r) < 0) return NULL;
  int64_t sizes[MAX_DIMS], strides[MAX_DIMS];
  Py_ssize_t n, k;
  if (pa_intlist(&r, 0, sizes, MAX_DIMS, &n) < 0 || pa_intlist(&r, 1, strides, MAX_DIMS, &k) < 0)
    return NULL;
  options o;
  if (read_options(&r, 2, default_options(), &o) < 0) return NULL;
  if (n != k)
    return raise_with(pa_cls.runtime_error,
                      "dimensionality of sizes (%zd) must match dimensionality of strides (%zd)", n,
                      k);
  c10c_tensor *out = NULL;
  c10c_status st = c10c_tensor_empty_strided(&out, sizes, strides, (size_t)n, o.dtype, o.device);
  return pyc10_result(st, &out);
}

/* ---- tensor, as_tensor, is_tensor ---- */

enum {
  SEEN_BOOL = 1,
  SEEN_INT = 2,
  SEEN_FLOAT = 4,
  SEEN_COMPLEX = 8,
  SEEN_OTHER = 16,
  SEEN_STR = 32,
  SEEN_TENSOR = 64 /* a pyc10 tensor leaf: taken here only when the dtype is given */
};

static bool is_seq(PyObject *o) { return PyList_Check(o) || PyTuple_Check(o); }

/* The sizes of nested lists of Python numbers, following the first element of each level. */
static int nested_sizes(PyObject *data, int64_t *sizes, int *ndim) {
  *ndim = 0;
  while (is_seq(data)) {
    if (*ndim == PA_MAX_DIMS) return 0;
    Py_ssize_t n = PySequence_Size(data);
    sizes[(*ndim)++] = n;
    if (n == 0) break;
    data = PyList_Check(data) ? PyList_GetItem(data, 0) : PyTuple_GetItem(data, 0);
  }
  return 1;
}

/* Checks data against sizes from dim on, and collects what kinds of numbers its leaves are;
 * -1 with torch's error for a ragged list. */
static int scan(PyObject *data, const int64_t *sizes, int ndim, int dim, int *seen) {
  if (dim == ndim) {
    if (PyBool_Check(data))
      *seen |= SEEN_BOOL;
    else if (PyLong_Check(data))
      *seen |= SEEN_INT;
    else if (PyFloat_CheckExact(data)) /* not numpy's float64 (a subclass): its own dtype */
      *seen |= SEEN_FLOAT;
    else if (PyComplex_CheckExact(data)) /* nor complex128: pyc10._tensor's walk takes them */
      *seen |= SEEN_COMPLEX;
    else if (PyUnicode_Check(data))
      *seen |= SEEN_STR;
    else if (pa_cls.tensor != NULL && PyObject_TypeCheck(data, pa_cls.tensor))
      *seen |= SEEN_TENSOR;
    else if (!is_seq(data)) /* a list where a number belongs: write_leaves raises torch's error */
      *seen |= SEEN_OTHER;
    return 0;
  }
  if (!is_seq(data)) {
    raise_with(pa_cls.type_error, "not a sequence");
    return -1;
  }
  Py_ssize_t n = PySequence_Size(data);
  if (n != sizes[dim]) {
    raise_with(pa_cls.value_error, "expected sequence of length %lld at dim %d (got %zd)",
               (long long)sizes[dim], dim, n);
    return -1;
  }
  bool list = PyList_Check(data);
  for (Py_ssize_t i = 0; i < n && !(*seen & SEEN_OTHER); i++) {
    PyObject *item = list ? PyList_GetItem(data, i) : PyTuple_GetItem(data, i);
    if (scan(item, sizes, ndim, dim + 1, seen) < 0) return -1;
  }
  return 0;
}

/* A pyc10 tensor leaf of a tensor of dtype to: its element copied when it is one CPU
 * element of dtype dt itself (what unpacking it to a Python number and storing that gives),
 * else the number pyc10._tensor._leaf unpacks it to for that dtype, written as the other leaves. */
static int write_leaves(PyObject *data, int ndim, int dim, c10c_dtype dt, c10c_dtype to, char **p);
static int write_tensor_leaf(PyObject *data, c10c_dtype dt, c10c_dtype to, char **p) {
  c10c_tensor *h = pyc10_handle(data);
  if (h == NULL) return -1;
  if (c10c_tensor_dtype(h) == dt && c10c_tensor_numel(h) == 1 &&
      c10c_tensor_device(h).type == C10C_DEVICE_TYPE_CPU) {
    const void *src = c10c_tensor_data(h);
    if (src != NULL) {
      size_t n = c10c_dtype_itemsize(dt);
      memcpy(*p, src, n), *p += n;
      return 0;
    }
  }
  static PyObject *leaf;
  if (py_attr(&leaf, "pyc10._tensor", "_leaf_of_value") == NULL) return -1;
  PyObject *v = PyObject_CallFunction(leaf, "Oi", data, (int)to);
  if (v == NULL) return -1;
  int r = write_leaves(v, 0, 0, dt, to, p);
  Py_DECREF(v);
  return r;
}

/* Writes the leaves of data, in order, as dt (bool, int64, float32/64, complex64/128) at *p;
 * to is the tensor's dtype (dt, or the one dt is cast to). */
static int write_leaves(PyObject *data, int ndim, int dim, c10c_dtype dt, c10c_dtype to, char **p) {
  if (dim < ndim) {
    bool list = PyList_Check(data);
    Py_ssize_t n = PySequence_Size(data);
    for (Py_ssize_t i = 0; i < n; i++) {
      PyObject *item = list ? PyList_GetItem(data, i) : PyTuple_GetItem(data, i);
      if (write_leaves(item, ndim, dim + 1, dt, to, p) < 0) return -1;
    }
    return 0;
  }
  bool real = PyLong_Check(data) || PyFloat_Check(data),
       integral = dt == C10C_DTYPE_BOOL || dt == C10C_DTYPE_INT64;
  if (!real && !PyComplex_Check(data) && pa_cls.tensor != NULL &&
      PyObject_TypeCheck(data, pa_cls.tensor))
    return write_tensor_leaf(data, dt, to, p);
  bool ok = integral ? real || (dt == C10C_DTYPE_BOOL && PyComplex_Check(data))
                     : real || (PyComplex_Check(data) && c10c_dtype_is_complex(dt));
  if (!ok) {
    PyObject *name = PyObject_GetAttrString((PyObject *)Py_TYPE(data), "__name__");
    if (name == NULL) return -1;
    raise_with(pa_cls.type_error,
               integral ? "'%U' object cannot be interpreted as an integer"
                        : "must be real number, not %U",
               name);
    Py_DECREF(name);
    return -1;
  }
  switch (dt) {
    case C10C_DTYPE_BOOL: {
      int b = PyObject_IsTrue(data);
      if (b < 0) return -1;
      *(*p)++ = (char)b;
      return 0;
    }
    case C10C_DTYPE_INT64: {
      if (PyFloat_Check(data)) { /* torch truncates */
        int64_t w = (int64_t)PyFloat_AsDouble(data);
        memcpy(*p, &w, 8), *p += 8;
        return 0;
      }
      int overflow;
      long long v = PyLong_AsLongLongAndOverflow(data, &overflow);
      if (overflow) {
        raise_with(pa_cls.value_error, "Overflow when unpacking long long");
        return -1;
      }
      if (v == -1 && PyErr_Occurred()) return -1;
      int64_t w = v;
      memcpy(*p, &w, 8), *p += 8;
      return 0;
    }
    case C10C_DTYPE_FLOAT32:
    case C10C_DTYPE_FLOAT64: {
      double v = PyFloat_AsDouble(data);
      if (v == -1.0 && PyErr_Occurred()) return -1;
      if (dt == C10C_DTYPE_FLOAT32) {
        float f = (float)v;
        memcpy(*p, &f, 4), *p += 4;
      } else {
        memcpy(*p, &v, 8), *p += 8;
      }
      return 0;
    }
    default: {
      double re = PyComplex_RealAsDouble(data), im = PyComplex_ImagAsDouble(data);
      if (re == -1.0 && PyErr_Occurred()) return -1;
      if (dt == C10C_DTYPE_COMPLEX64) {
        float f[2] = {(float)re, (float)im};
        memcpy(*p, f, 8), *p += 8;
      } else {
        double d[2] = {re, im};
        memcpy(*p, d, 16), *p += 16;
      }
      return 0;
    }
  }
}

/* src (stolen) as dtype on device: itself when both match, else a copy with c10's casts. */
static PyObject *copied(PyObject *src, c10c_dtype dt, c10c_device device, bool force) {
  if (src == NULL) return NULL;
  c10c_tensor *h = pyc10_handle(src);
  c10c_device have = c10c_tensor_device(h);
  if (!force && c10c_tensor_dtype(h) == dt && have.type == device.type &&
      (device.index < 0 || have.index == device.index))
    return src;
  c10c_tensor *out = NULL;
  c10c_status st = c10c_tensor_empty_like(&out, h, dt, device, C10C_MEMORY_FORMAT_CONTIGUOUS);
  if (st == C10C_STATUS_OK) {
    st = c10c_tensor_copy_(out, h);
    if (st != C10C_STATUS_OK) c10c_tensor_release(out);
  }
  Py_DECREF(src);
  return pyc10_result(st, &out);
}
static PyObject *converted(PyObject *src, c10c_dtype dt, c10c_device device) {
  return copied(src, dt, device, false);
}

/* A CPU tensor of nested Python numbers, or Py_None (a new reference) for data this does not
 * take (other leaves: pyc10._tensor._tensor_from_data takes them). */
static PyObject *from_numbers(PyObject *data, int dtype) {
  int64_t sizes[PA_MAX_DIMS];
  int ndim, seen = 0;
  if (!nested_sizes(data, sizes, &ndim)) Py_RETURN_NONE;
  if (scan(data, sizes, ndim, 0, &seen) < 0) {
    if (!(seen & SEEN_TENSOR)) return NULL;
    PyErr_Clear(); /* a tensor leaf before the ragged dim may fail first: pyc10._tensor's walk */
    Py_RETURN_NONE;
  }
  if (seen & SEEN_OTHER || (seen & SEEN_TENSOR && dtype < 0)) Py_RETURN_NONE;
  if (seen & SEEN_STR && dtype < 0)
    return raise_with(pa_cls.type_error, "new(): invalid data type 'str'");
  c10c_dtype dt;
  if (dtype >= 0)
    dt = (c10c_dtype)dtype;
  else if (seen & SEEN_COMPLEX)
    dt = pyc10_default_dtype == C10C_DTYPE_FLOAT64 ? C10C_DTYPE_COMPLEX128 : C10C_DTYPE_COMPLEX64;
  else if (seen & SEEN_FLOAT || seen == 0)
    dt = (c10c_dtype)pyc10_default_dtype;
  else if (seen & SEEN_INT)
    dt = C10C_DTYPE_INT64;
  else
    dt = C10C_DTYPE_BOOL;
  /* written as the widest dtype of its kind (each number converted as torch converts it), then
   * cast where dt is another */
  c10c_dtype write = dt;
  if (dt != C10C_DTYPE_BOOL && dt != C10C_DTYPE_INT64 && dt != C10C_DTYPE_FLOAT32 &&
      dt != C10C_DTYPE_FLOAT64 && dt != C10C_DTYPE_COMPLEX64 && dt != C10C_DTYPE_COMPLEX128)
    write = c10c_dtype_is_complex(dt)          ? C10C_DTYPE_COMPLEX128
            : c10c_dtype_is_floating_point(dt) ? C10C_DTYPE_FLOAT64
                                               : C10C_DTYPE_INT64;
  c10c_tensor *out = NULL;
  c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
  c10c_status st =
      c10c_tensor_empty(&out, sizes, (size_t)ndim, write, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  PyObject *t = pyc10_wrap(out);
  if (t == NULL) return NULL;
  char *p = c10c_tensor_data(out);
  if (write_leaves(data, ndim, 0, write, dt, &p) < 0) {
    Py_DECREF(t);
    return NULL;
  }
  return write == dt ? t : converted(t, dt, cpu);
}

/* tensor() and as_tensor(): copy says which. */
static PyObject *from_data(PyObject *data, PyObject *dtype_obj, int dtype, PyObject *device_obj,
                           bool has_device, c10c_device device, bool copy) {
  PyObject *t = NULL;
  if (is_seq(data) || PyFloat_CheckExact(data) || PyLong_CheckExact(data) || PyBool_Check(data) ||
      PyComplex_CheckExact(data)) {
    t = from_numbers(data, dtype);
    if (t == NULL) return NULL;
    if (t == Py_None) {
      Py_CLEAR(t);
    } else {
      if (!has_device) device = pyc10_default_device();
      return converted(t, dtype < 0 ? c10c_tensor_dtype(pyc10_handle(t)) : (c10c_dtype)dtype,
                       device);
    }
  }
  if (pyc10_is_ndarray(data)) {
    t = pyc10_from_numpy(NULL, data); /* numpy's dtype kept; torch's errors for its strides */
    if (t == NULL) return NULL;
    c10c_tensor *h = pyc10_handle(t);
    return copied(t, dtype < 0 ? c10c_tensor_dtype(h) : (c10c_dtype)dtype,
                  has_device ? device : c10c_tensor_device(h), copy);
  }
  /* a DLPack producer (torch's tensors, JAX's arrays, ...), which torch's internal_new_from_data
   * takes through from_dlpack before reading anything as a sequence: its C exchange table first */
  if (!pa__is_tensor(data)) {
    PyObject *shared = pyc10_from_exchange(data, 0);
    if (shared == Py_None) {
      int has = PyObject_HasAttrString(data, "__dlpack__");
      shared = has ? pyc10_dlpack_import(data) : Py_None;
    }
    if (shared == NULL) return NULL;
    if (shared != Py_None) {
      c10c_tensor *h = pyc10_handle(shared);
      return copied(shared, dtype < 0 ? c10c_tensor_dtype(h) : (c10c_dtype)dtype,
                    has_device ? device : c10c_tensor_device(h), copy);
    }
  }
  static PyObject *slow;
  if (py_attr(&slow, "pyc10._tensor", "_tensor_from_data") == NULL) return NULL;
  return PyObject_CallFunctionObjArgs(slow, data, dtype_obj ? dtype_obj : Py_None,
                                      device_obj ? device_obj : Py_None, copy ? Py_True : Py_False,
                                      NULL);
}

static pa_parser tensor_p = PA_PARSER("pyc10", "tensor");
static PyObject *f_tensor(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  pa_args r;
  if (pa_parse(&tensor_p, args, nargs, kwnames, &r) < 0) return NULL;
  int dtype;
  c10c_device device;
  bool has_device, pin, grad;
  if (pa_dtype(&r, 1, &dtype) < 0 || pa_device(&r, 2, &device, &has_device) < 0 ||
      pa_bool(&r, 3, &pin) < 0 || pa_bool(&r, 4, &grad) < 0)
    return NULL;
  /* torch's order (internal_new_from_data): a str is refused first, then pinned memory, then the
   * data is read (ragged lists, bad leaves), then requires_grad */
  if (pin && !PyUnicode_Check(r.obj[0]) &&
      pin_check(has_device ? device : (c10c_device){C10C_DEVICE_TYPE_CPU, -1}) < 0)
    return NULL;
  PyObject *t = from_data(r.obj[0], r.obj[1], dtype, r.obj[2], has_device, device, true);
  pin_requested = pin;
  t = pinned_result(t);
  if (t != NULL && grad) {
    Py_DECREF(t);
    return not_implemented("requires_grad=True: pyc10 has no autograd");
  }
  return t;
}

static pa_parser as_tensor_p = PA_PARSER("pyc10", "as_tensor");
static PyObject *f_as_tensor(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  /* as_tensor(ndarray), the hot call: from_numpy itself (no dtype or device to convert to) */
  if (nargs == 1 && kwnames == NULL && pyc10_is_ndarray(args[0]))
    return pyc10_from_numpy(NULL, args[0]);
  pa_args r;
  if (pa_parse(&as_tensor_p, args, nargs, kwnames, &r) < 0) return NULL;
  int dtype;
  c10c_device device;
  bool has_device;
  if (pa_dtype(&r, 1, &dtype) < 0 || pa_device(&r, 2, &device, &has_device) < 0) return NULL;
  return from_data(r.obj[0], r.obj[1], dtype, r.obj[2], has_device, device, false);
}

/* _device_error(*args, **kwargs): torch.device's error for a call that pyc10.device's Python
 * binding refused (pyc10._device), from the parser (its "invalid combination" layout); None when
 * the parser binds the call. */
static pa_parser device_p = PA_PARSER("device", "device");
static PyObject *f_device_error(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  (void)m;
  pa_args r;
  if (pa_parse(&device_p, args, nargs, kwnames, &r) < 0) return NULL;
  Py_RETURN_NONE;
}

/* torch writes is_tensor(obj, /) in Python: a bad call gets Python's words, as torch's. */
static PyObject *f_is_tensor(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  (void)m;
  static const char *const names[] = {"obj"};
  PyObject *obj;
  if (pyc10_bind_python(NULL, "is_tensor", names, 1, 1, args, nargs, kwnames, &obj) < 0)
    return NULL;
  return PyBool_FromLong(PyObject_TypeCheck(obj, pa_cls.tensor));
}

#define F(name, fn) \
  { name, PYC10_FASTCALL(fn), METH_FASTCALL | METH_KEYWORDS, NULL }
PyMethodDef pyc10_factory_functions[] = {
    F("empty", f_empty),
    F("zeros", f_zeros),
    F("ones", f_ones),
    F("full", f_full),
    F("empty_like", f_empty_like),
    F("zeros_like", f_zeros_like),
    F("ones_like", f_ones_like),
    F("full_like", f_full_like),
    F("empty_strided", f_empty_strided),
    F("tensor", f_tensor),
    F("as_tensor", f_as_tensor),
    {"from_numpy", pyc10_from_numpy, METH_O,
     "from_numpy(ndarray, /) -> Tensor\n\nA CPU tensor sharing a numpy array's memory (zero-copy; "
     "keeps the array alive). A read-only array gives a read-only tensor: in-place writes raise "
     "(torch only warns)."},
    {"_numpy_c_api", pyc10_numpy_c_api, METH_O,
     "_numpy_c_api(use, /) -> bool\n\nWhether Tensor.numpy() and __array__ make arrays through "
     "numpy's C API table (where it can be had) or through numpy.asarray; the old setting."},
    {"_device_error", PYC10_FASTCALL(f_device_error), METH_FASTCALL | METH_KEYWORDS,
     "_device_error(*args, **kwargs) -> None\n\ntorch.device's error for the call (pyc10.device "
     "asks when its binding fails); None when torch's parser would take it."},
    {"is_tensor", PYC10_FASTCALL(f_is_tensor), METH_FASTCALL | METH_KEYWORDS,
     "is_tensor(obj, /) -> bool\n\nWhether obj is a pyc10.Tensor, as ``torch.is_tensor``."},
    {NULL, NULL, 0, NULL},
};

int pyc10_factories_init(PyObject *module) {
  for (PyMethodDef *f = pyc10_factory_functions; f->ml_name != NULL; f++)
    if (f->ml_doc == NULL) f->ml_doc = pa_doc("pyc10", f->ml_name);
  return PyModule_AddFunctions(module, pyc10_factory_functions);
}
