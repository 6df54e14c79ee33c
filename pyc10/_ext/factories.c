/* The module-level factories: empty, zeros, ones, full, their *_like forms and empty_strided,
 * bound by the parser with torch's signatures (torch/csrc/autograd/generated/
 * python_torch_functions.cpp) and made by one libc10c call.
 *
 * Defaults as torch's: the default dtype (pyc10.set_default_dtype) and this thread's default
 * device (pyc10.set_default_device, `with pyc10.device(...)`); full() infers its dtype from the
 * fill value; the *_like forms take the input's dtype and device and preserve its layout. What
 * pyc10 has not (out=, layouts other than strided, pinned memory, autograd) is refused clearly.
 * tensor() and as_tensor() build nested lists of Python numbers here, in C (torch's inference:
 * bools, ints, a float anywhere, a complex anywhere); numpy arrays and scalars, pyc10 tensors and
 * other leaves go to pyc10._tensor._tensor_from_data (numpy walks those).
 */
#include <string.h>

#include "common.h"

#define not_implemented pyc10_not_implemented

int pyc10_tensor_options(const pa_args *r, int first, c10c_dtype *dt, c10c_device *device) {
  int dtype, layout;
  bool has_device, pin, grad;
  if (pa_dtype(r, first, &dtype) < 0 || pa_layout(r, first + 1, &layout) < 0 ||
      pa_device(r, first + 2, device, &has_device) < 0 || pa_bool(r, first + 3, &pin) < 0 ||
      pa_bool(r, first + 4, &grad) < 0)
    return -1;
  if (dtype >= 0) *dt = (c10c_dtype)dtype;
  if (layout >= 0 && layout != C10C_LAYOUT_STRIDED) {
    not_implemented(
        "pyc10 tensors are strided: layouts other than pyc10.strided are not implemented");
    return -1;
  }
  if (pin) {
    not_implemented("pin_memory=True: pyc10 has no pinned memory allocator yet");
    return -1;
  }
  if (grad) {
    if (!c10c_dtype_is_floating_point(*dt) && !c10c_dtype_is_complex(*dt)) {
      PyErr_SetString(pa_cls.runtime_error,
                      "Only Tensors of floating point and complex dtype can require gradients");
      return -1;
    }
    not_implemented("requires_grad=True: pyc10 has no autograd");
    return -1;
  }
  return 0;
}

static int no_out(const pa_args *r, int i) {
  if (!pa_has(r, i)) return 0;
  not_implemented("out=: pyc10's factories make new tensors; pass no out");
  return -1;
}

/* torch's full(): the dtype of a fill value given none (bool, int64, the default dtype, or the
 * complex dtype of the default). */
static int inferred_dtype(PyObject *value, c10c_dtype *out) {
  if (PyBool_Check(value)) {
    *out = C10C_DTYPE_BOOL;
  } else if (PyLong_Check(value)) {
    *out = C10C_DTYPE_INT64;
  } else if (PyFloat_Check(value)) {
    *out = (c10c_dtype)pyc10_default_dtype;
  } else if (PyComplex_Check(value)) {
    *out = pyc10_default_dtype == C10C_DTYPE_FLOAT64 ? C10C_DTYPE_COMPLEX128 : C10C_DTYPE_COMPLEX64;
  } else { /* numpy scalars, 0-dim tensors: pyc10._defaults.scalar_dtype */
    PyObject *mod = PyImport_ImportModule("pyc10._defaults");
    PyObject *d = mod != NULL ? PyObject_CallMethod(mod, "scalar_dtype", "O", value) : NULL;
    Py_XDECREF(mod);
    PyObject *v = d != NULL ? PyObject_GetAttrString(d, "value") : NULL;
    Py_XDECREF(d);
    if (v == NULL) return -1;
    *out = (c10c_dtype)PyLong_AsLong(v);
    Py_DECREF(v);
  }
  return 0;
}

/* kind: 0 empty, 1 zeros, 2 ones, 3 full (value at index 1) */
static PyObject *make(int kind, const int64_t *sizes, Py_ssize_t n, c10c_dtype dt,
                      c10c_device device, int format, PyObject *value) {
  c10c_tensor *out = NULL;
  c10c_status st;
  if (kind == 0) {
    st = c10c_tensor_empty(&out, sizes, (size_t)n, dt, device, (c10c_memory_format)format);
  } else {
    _Alignas(16) unsigned char data[16] = {0};
    if (kind >= 2 && pyc10_encode_scalar(data, dt, kind == 2 ? Py_True : value) < 0) return NULL;
    st = c10c_tensor_full(&out, sizes, (size_t)n, dt, device, (c10c_memory_format)format,
                          kind >= 2 ? data : NULL);
  }
  return pyc10_result(st, &out);
}

/* empty(2, 3) and empty((2, 3)): exact ints and no keywords, bound without the parser (the
 * parser binds them the same way). */
static int exact_sizes(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, int64_t *out,
                       Py_ssize_t *n) {
  if (kwnames != NULL || nargs == 0) return 0;
  if (nargs == 1 && PyTuple_CheckExact(args[0])) {
    nargs = PyTuple_Size(args[0]);
    if (nargs > PA_MAX_DIMS) return 0;
    for (Py_ssize_t i = 0; i < nargs; i++) {
      PyObject *it = PyTuple_GetItem(args[0], i);
      int overflow;
      if (!PyLong_CheckExact(it)) return 0;
      out[i] = PyLong_AsLongLongAndOverflow(it, &overflow);
      if (overflow) return 0;
    }
    *n = nargs;
    return 1;
  }
  if (nargs > PA_MAX_DIMS) return 0;
  for (Py_ssize_t i = 0; i < nargs; i++) {
    int overflow;
    if (!PyLong_CheckExact(args[i])) return 0;
    out[i] = PyLong_AsLongLongAndOverflow(args[i], &overflow);
    if (overflow) return 0;
  }
  *n = nargs;
  return 1;
}

static pa_parser empty_p = PA_PARSER("pyc10", "empty");
static PyObject *f_empty(PyObject *module, FASTCALL_ARGS) {
  (void)module;
  int64_t sizes[PA_MAX_DIMS];
  Py_ssize_t n;
  if (exact_sizes(args, nargs, kwnames, sizes, &n))
    return make(0, sizes, n, (c10c_dtype)pyc10_default_dtype, pyc10_default_device(),
                C10C_MEMORY_FORMAT_CONTIGUOUS, NULL);
  pa_args r;
  if (pa_parse(&empty_p, args, nargs, kwnames, &r) < 0) return NULL;
  int format;
  c10c_dtype dt = (c10c_dtype)pyc10_default_dtype;
  c10c_device device = pyc10_default_device();
  if (pa_intlist(&r, 0, sizes, PA_MAX_DIMS, &n) < 0 || pa_memory_format(&r, 1, &format) < 0 ||
      no_out(&r, 2) < 0 || pyc10_tensor_options(&r, 3, &dt, &device) < 0)
    return NULL;
  return make(0, sizes, n, dt, device, format < 0 ? C10C_MEMORY_FORMAT_CONTIGUOUS : format, NULL);
}

/* zeros and ones: (size, *, out, dtype, layout, device, pin_memory, requires_grad) */
static PyObject *filled(int kind, pa_parser *p, FASTCALL_ARGS) {
  int64_t sizes[PA_MAX_DIMS];
  Py_ssize_t n;
  if (exact_sizes(args, nargs, kwnames, sizes, &n))
    return make(kind, sizes, n, (c10c_dtype)pyc10_default_dtype, pyc10_default_device(),
                C10C_MEMORY_FORMAT_CONTIGUOUS, NULL);
  pa_args r;
  if (pa_parse(p, args, nargs, kwnames, &r) < 0) return NULL;
  c10c_dtype dt = (c10c_dtype)pyc10_default_dtype;
  c10c_device device = pyc10_default_device();
  if (pa_intlist(&r, 0, sizes, PA_MAX_DIMS, &n) < 0 || no_out(&r, 1) < 0 ||
      pyc10_tensor_options(&r, 2, &dt, &device) < 0)
    return NULL;
  return make(kind, sizes, n, dt, device, C10C_MEMORY_FORMAT_CONTIGUOUS, NULL);
}

static pa_parser zeros_p = PA_PARSER("pyc10", "zeros");
static PyObject *f_zeros(PyObject *module, FASTCALL_ARGS) {
  (void)module;
  return filled(1, &zeros_p, args, nargs, kwnames);
}

static pa_parser ones_p = PA_PARSER("pyc10", "ones");
static PyObject *f_ones(PyObject *module, FASTCALL_ARGS) {
  (void)module;
  return filled(2, &ones_p, args, nargs, kwnames);
}

static pa_parser full_p = PA_PARSER("pyc10", "full");
static PyObject *f_full(PyObject *module, FASTCALL_ARGS) {
  (void)module;
  pa_args r;
  if (pa_parse(&full_p, args, nargs, kwnames, &r) < 0) return NULL;
  int64_t sizes[PA_MAX_DIMS];
  Py_ssize_t n;
  c10c_dtype dt;
  c10c_device device = pyc10_default_device();
  if (pa_intlist(&r, 0, sizes, PA_MAX_DIMS, &n) < 0 || inferred_dtype(r.obj[1], &dt) < 0 ||
      no_out(&r, 2) < 0 || pyc10_tensor_options(&r, 3, &dt, &device) < 0)
    return NULL;
  return make(3, sizes, n, dt, device, C10C_MEMORY_FORMAT_CONTIGUOUS, r.obj[1]);
}

/* empty_like, zeros_like, ones_like (input, *, memory_format, dtype, ...) and full_like (input,
 * fill_value, *, memory_format, dtype, ...): the input's dtype and device unless given. */
static PyObject *like(int kind, pa_parser *p, FASTCALL_ARGS) {
  pa_args r;
  if (pa_parse(p, args, nargs, kwnames, &r) < 0) return NULL;
  c10c_tensor *in = pyc10_handle(r.obj[0]);
  if (in == NULL) return NULL;
  int at = kind == 3 ? 2 : 1, format;
  c10c_dtype dt = c10c_tensor_dtype(in);
  c10c_device device = c10c_tensor_device(in);
  if (pa_memory_format(&r, at, &format) < 0 || pyc10_tensor_options(&r, at + 1, &dt, &device) < 0)
    return NULL;
  if (format < 0) format = C10C_MEMORY_FORMAT_PRESERVE;
  c10c_tensor *out = NULL;
  c10c_status st;
  if (kind == 0) {
    st = c10c_tensor_empty_like(&out, in, dt, device, (c10c_memory_format)format);
  } else {
    _Alignas(16) unsigned char data[16] = {0};
    if (kind >= 2 && pyc10_encode_scalar(data, dt, kind == 2 ? Py_True : r.obj[1]) < 0) return NULL;
    st = c10c_tensor_full_like(&out, in, dt, device, (c10c_memory_format)format,
                               kind >= 2 ? data : NULL);
  }
  return pyc10_result(st, &out);
}

static pa_parser empty_like_p = PA_PARSER("pyc10", "empty_like");
static pa_parser zeros_like_p = PA_PARSER("pyc10", "zeros_like");
static pa_parser ones_like_p = PA_PARSER("pyc10", "ones_like");
static pa_parser full_like_p = PA_PARSER("pyc10", "full_like");
static PyObject *f_empty_like(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  return like(0, &empty_like_p, args, nargs, kwnames);
}
static PyObject *f_zeros_like(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  return like(1, &zeros_like_p, args, nargs, kwnames);
}
static PyObject *f_ones_like(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  return like(2, &ones_like_p, args, nargs, kwnames);
}
static PyObject *f_full_like(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  return like(3, &full_like_p, args, nargs, kwnames);
}

static pa_parser empty_strided_p = PA_PARSER("pyc10", "empty_strided");
static PyObject *f_empty_strided(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  pa_args r;
  if (pa_parse(&empty_strided_p, args, nargs, kwnames, &r) < 0) return NULL;
  int64_t sizes[PA_MAX_DIMS], strides[PA_MAX_DIMS];
  Py_ssize_t n, k;
  c10c_dtype dt = (c10c_dtype)pyc10_default_dtype;
  c10c_device device = pyc10_default_device();
  if (pa_intlist(&r, 0, sizes, PA_MAX_DIMS, &n) < 0 ||
      pa_intlist(&r, 1, strides, PA_MAX_DIMS, &k) < 0 ||
      pyc10_tensor_options(&r, 2, &dt, &device) < 0)
    return NULL;
  if (n != k) {
    PyErr_Format(pa_cls.runtime_error,
                 "dimensionality of sizes (%zd) must match dimensionality of strides (%zd)", n, k);
    return NULL;
  }
  c10c_tensor *out = NULL;
  c10c_status st = c10c_tensor_empty_strided(&out, sizes, strides, (size_t)n, dt, device);
  return pyc10_result(st, &out);
}

/* ---- tensor, as_tensor ---- */

enum { SEEN_BOOL = 1, SEEN_INT = 2, SEEN_FLOAT = 4, SEEN_COMPLEX = 8, SEEN_OTHER = 16 };

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
    else if (PyFloat_Check(data))
      *seen |= SEEN_FLOAT;
    else if (PyComplex_Check(data))
      *seen |= SEEN_COMPLEX;
    else
      *seen |= SEEN_OTHER;
    return 0;
  }
  if (!is_seq(data)) {
    TYPE_ERROR("not a sequence");
    return -1;
  }
  Py_ssize_t n = PySequence_Size(data);
  if (n != sizes[dim]) {
    VALUE_ERROR("expected sequence of length %lld at dim %d (got %zd)", (long long)sizes[dim], dim,
                n);
    return -1;
  }
  bool list = PyList_Check(data);
  for (Py_ssize_t i = 0; i < n && !(*seen & SEEN_OTHER); i++) {
    PyObject *item = list ? PyList_GetItem(data, i) : PyTuple_GetItem(data, i);
    if (scan(item, sizes, ndim, dim + 1, seen) < 0) return -1;
  }
  return 0;
}

/* Writes the leaves of data, in order, as dt (bool, int64, float32/64, complex64/128) at *p. */
static int write_leaves(PyObject *data, int ndim, int dim, c10c_dtype dt, char **p) {
  if (dim < ndim) {
    bool list = PyList_Check(data);
    Py_ssize_t n = PySequence_Size(data);
    for (Py_ssize_t i = 0; i < n; i++) {
      PyObject *item = list ? PyList_GetItem(data, i) : PyTuple_GetItem(data, i);
      if (write_leaves(item, ndim, dim + 1, dt, p) < 0) return -1;
    }
    return 0;
  }
  switch (dt) {
    case C10C_DTYPE_BOOL: *(*p)++ = (char)(data == Py_True); return 0;
    case C10C_DTYPE_INT64: {
      int overflow;
      long long v = PyLong_AsLongLongAndOverflow(data, &overflow);
      if (overflow) {
        VALUE_ERROR("Overflow when unpacking long long");
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
static PyObject *converted(PyObject *src, c10c_dtype dt, c10c_device device) {
  if (src == NULL) return NULL;
  c10c_tensor *h = pyc10_handle(src);
  c10c_device have = c10c_tensor_device(h);
  if (c10c_tensor_dtype(h) == dt && have.type == device.type &&
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

/* A CPU tensor of nested Python numbers, or Py_None (a new reference) for data this does not
 * take (other leaves: pyc10._tensor._tensor_from_data takes them). */
static PyObject *from_numbers(PyObject *data) {
  int64_t sizes[PA_MAX_DIMS];
  int ndim, seen = 0;
  if (!nested_sizes(data, sizes, &ndim)) Py_RETURN_NONE;
  if (scan(data, sizes, ndim, 0, &seen) < 0) return NULL;
  if (seen & SEEN_OTHER) Py_RETURN_NONE;
  c10c_dtype dt;
  if (seen & SEEN_COMPLEX)
    dt = pyc10_default_dtype == C10C_DTYPE_FLOAT64 ? C10C_DTYPE_COMPLEX128 : C10C_DTYPE_COMPLEX64;
  else if (seen & SEEN_FLOAT || seen == 0)
    dt = (c10c_dtype)pyc10_default_dtype;
  else if (seen & SEEN_INT)
    dt = C10C_DTYPE_INT64;
  else
    dt = C10C_DTYPE_BOOL;
  /* half and bfloat16 defaults are written as float32, then cast */
  c10c_dtype write =
      dt == C10C_DTYPE_FLOAT16 || dt == C10C_DTYPE_BFLOAT16 ? C10C_DTYPE_FLOAT32 : dt;
  c10c_tensor *out = NULL;
  c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
  c10c_status st =
      c10c_tensor_empty(&out, sizes, (size_t)ndim, write, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  PyObject *t = pyc10_wrap(out);
  if (t == NULL) return NULL;
  char *p = c10c_tensor_data(out);
  if (write_leaves(data, ndim, 0, write, &p) < 0) {
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
    t = from_numbers(data);
    if (t == NULL) return NULL;
    if (t == Py_None) {
      Py_CLEAR(t);
    } else {
      if (!has_device) device = pyc10_default_device();
      return converted(t, dtype < 0 ? c10c_tensor_dtype(pyc10_handle(t)) : (c10c_dtype)dtype,
                       device);
    }
  }
  static PyObject *slow; /* pyc10._tensor._tensor_from_data, looked up on first use */
  if (slow == NULL) {
    PyObject *mod = PyImport_ImportModule("pyc10._tensor");
    slow = mod != NULL ? PyObject_GetAttrString(mod, "_tensor_from_data") : NULL;
    Py_XDECREF(mod);
    if (slow == NULL) return NULL;
  }
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
  if (pin && !PyUnicode_Check(r.obj[0]))
    return not_implemented("pin_memory=True: pyc10 has no pinned memory allocator yet");
  PyObject *t = from_data(r.obj[0], r.obj[1], dtype, r.obj[2], has_device, device, true);
  if (t != NULL && grad) {
    Py_DECREF(t);
    return not_implemented("requires_grad=True: pyc10 has no autograd");
  }
  return t;
}

static pa_parser as_tensor_p = PA_PARSER("pyc10", "as_tensor");
static PyObject *f_as_tensor(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  pa_args r;
  if (pa_parse(&as_tensor_p, args, nargs, kwnames, &r) < 0) return NULL;
  int dtype;
  c10c_device device;
  bool has_device;
  if (pa_dtype(&r, 1, &dtype) < 0 || pa_device(&r, 2, &device, &has_device) < 0) return NULL;
  return from_data(r.obj[0], r.obj[1], dtype, r.obj[2], has_device, device, false);
}

static PyObject *f_is_tensor(PyObject *m, PyObject *obj) {
  (void)m;
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
    {"is_tensor", f_is_tensor, METH_O, "is_tensor(obj) -> bool\n\nWhether obj is a pyc10.Tensor."},
    {NULL, NULL, 0, NULL},
};
