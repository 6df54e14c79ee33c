/* pyc10.arange, frombuffer, asarray, view_as_real and view_as_complex: tensors made from numbers,
 * over other memory (a buffer, any array-like) or over another tensor's storage as another dtype,
 * with torch's signatures through the parser.
 *
 * arange follows ATen's arange_out (RangeUtils.h): bounds checked in double, the size in int64
 * arithmetic for int64 results and in double otherwise, each element start + step * i computed in
 * the accumulate type (int64 for integers, double for float32/64, float for float16/bfloat16) and
 * then cast. frombuffer and asarray bind here and do their work in pyc10._creation (Python: the
 * buffer protocol is outside the limited API this extension keeps to).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

#define raise_with(cls, ...) pyc10_raise_in(cls, PyExc_RuntimeError, __VA_ARGS__)

/* pyc10._creation.<name>, imported once. */
static PyObject *creation_attr(PyObject **cache, const char *name) {
  if (*cache != NULL) return *cache;
  PyObject *mod = PyImport_ImportModule("pyc10._creation");
  if (mod == NULL) return NULL;
  *cache = PyObject_GetAttrString(mod, name);
  Py_DECREF(mod);
  return *cache;
}

/* ---- arange ---- */

/* A Scalar argument as c10::Scalar holds it: integral (bool, int) or not, and its value. */
typedef struct {
  bool integral, complex;
  int64_t i;
  double d, imag;
} number;

/* o (a Python number, numpy scalar or 0-dim tensor: what the parser binds to Scalar) as a number;
 * NULL o (an absent argument) is dflt. */
static int read_number(PyObject *o, int64_t dflt, number *n) {
  memset(n, 0, sizeof *n);
  if (o == NULL) {
    n->integral = true, n->i = dflt, n->d = (double)dflt;
    return 0;
  }
  PyObject *v = o, *owned = NULL;
  if (PyObject_TypeCheck(o, pa_cls.tensor)) {
    v = owned = PyObject_CallMethod(o, "item", NULL); /* a 0-dim tensor: its value's kind */
    if (v == NULL) return -1;
  } else if (!PyBool_Check(o) && !PyLong_Check(o) && !PyFloat_Check(o) && !PyComplex_Check(o)) {
    /* numpy scalars as torch's parser converts them: integers, else doubles (np.bool_ too) */
    v = owned = PyNumber_Index(o);
    if (v == NULL) {
      PyErr_Clear();
      v = owned = PyNumber_Float(o);
      if (v == NULL) return -1;
    }
  }
  int rc = 0;
  if (PyBool_Check(v) || PyLong_Check(v)) {
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow) {
      raise_with(pa_cls.runtime_error,
                 "value cannot be converted to type int64_t without overflow");
      rc = -1;
    } else if (x == -1 && PyErr_Occurred()) {
      rc = -1;
    }
    n->integral = true, n->i = x, n->d = (double)x;
  } else if (PyFloat_Check(v)) {
    n->d = PyFloat_AsDouble(v);
  } else if (PyComplex_Check(v)) {
    n->complex = true, n->d = PyComplex_RealAsDouble(v), n->imag = PyComplex_ImagAsDouble(v);
  } else {
    TYPE_ERROR("arange(): expected a number, got %R", (PyObject *)Py_TYPE(v));
    rc = -1;
  }
  Py_XDECREF(owned);
  return rc;
}

/* c10::Scalar::to<double>(): a complex with an imaginary part does not convert. */
static int to_double(const number *n, double *out) {
  if (n->complex && n->imag != 0) {
    raise_with(pa_cls.runtime_error, "value cannot be converted to type double without overflow");
    return -1;
  }
  *out = n->d;
  return 0;
}

/* c10::Scalar::to<int64_t>() (checked_convert): a double outside int64 does not convert. */
static int to_int64(const number *n, int64_t *out) {
  if (n->integral) {
    *out = n->i;
    return 0;
  }
  double d;
  if (to_double(n, &d) < 0) return -1;
  if (d < -9223372036854775808.0 || d >= 9223372036854775808.0) {
    raise_with(pa_cls.runtime_error, "value cannot be converted to type int64_t without overflow");
    return -1;
  }
  *out = d != d ? INT64_MIN : (int64_t)d; /* NaN: what x86 makes of the cast */
  return 0;
}

/* The dtypes ATen's arange kernel has (AT_DISPATCH_ALL_TYPES_AND2(Half, BFloat16)). */
static bool arange_dtype(c10c_dtype dt) {
  switch (dt) {
    case C10C_DTYPE_UINT8:
    case C10C_DTYPE_INT8:
    case C10C_DTYPE_INT16:
    case C10C_DTYPE_INT32:
    case C10C_DTYPE_INT64:
    case C10C_DTYPE_FLOAT16:
    case C10C_DTYPE_BFLOAT16:
    case C10C_DTYPE_FLOAT32:
    case C10C_DTYPE_FLOAT64: return true;
    default: return false;
  }
}

/* ATen's arange_check_bounds and compute_arange_size: the element count, or -1 with its error. */
static int arange_size(c10c_dtype dt, const number *start, const number *end, const number *step,
                       int64_t *out) {
  double ds = 0, de = 0, dst = 0;
  if (to_double(start, &ds) < 0 || to_double(end, &de) < 0 || to_double(step, &dst) < 0) return -1;
  if (!(dst > 0 || dst < 0)) {
    raise_with(pa_cls.runtime_error, "step must be nonzero");
    return -1;
  }
  if (!isfinite(ds) || !isfinite(de)) {
    char text[96];
    snprintf(text, sizeof text, "unsupported range: %g -> %g", ds, de);
    raise_with(pa_cls.runtime_error, "%s", text);
    return -1;
  }
  if (!((dst > 0 && de >= ds) || (dst < 0 && de <= ds))) {
    raise_with(pa_cls.runtime_error, "upper bound and lower bound inconsistent with step sign");
    return -1;
  }
  double size_d;
  if (dt == C10C_DTYPE_INT64) {
    int64_t xs, xe, xst;
    if (to_int64(start, &xs) < 0 || to_int64(end, &xe) < 0 || to_int64(step, &xst) < 0) return -1;
    if (xst == 0) { /* a fractional step truncated to 0: ATen's TORCH_CHECK_VALUE */
      pyc10_raise_in(pa_cls.value_error, PyExc_ValueError, "step must be nonzero");
      return -1;
    }
    int64_t sgn = (xst > 0) - (xst < 0);
    uint64_t span = (uint64_t)xe - (uint64_t)xs + (uint64_t)xst - (uint64_t)sgn;
    size_d = (double)((int64_t)span / xst);
  } else {
    size_d = ceil((de - ds) / dst);
  }
  if (!(size_d >= 0 && size_d < 9223372036854775808.0)) {
    raise_with(pa_cls.runtime_error, "invalid size, possible overflow?");
    return -1;
  }
  *out = (int64_t)size_d;
  return 0;
}

/* The n elements start + step * i in the accumulate type of dt, as a new CPU tensor. */
static c10c_tensor *arange_values(c10c_dtype dt, const number *start, const number *step,
                                  int64_t n) {
  c10c_dtype acc =
      c10c_dtype_is_floating_point(dt)
          ? (dt == C10C_DTYPE_FLOAT16 || dt == C10C_DTYPE_BFLOAT16 ? C10C_DTYPE_FLOAT32
                                                                   : C10C_DTYPE_FLOAT64)
          : C10C_DTYPE_INT64;
  int64_t xs = 0, xst = 0;
  double ds = 0, dst = 0;
  if (acc == C10C_DTYPE_INT64 ? to_int64(start, &xs) < 0 || to_int64(step, &xst) < 0
                              : to_double(start, &ds) < 0 || to_double(step, &dst) < 0)
    return NULL;
  if (acc == C10C_DTYPE_FLOAT32 && ((isfinite(ds) && fabs(ds) > 3.4028234663852886e38) ||
                                    (isfinite(dst) && fabs(dst) > 3.4028234663852886e38))) {
    raise_with(pa_cls.runtime_error, "value cannot be converted to type float without overflow");
    return NULL;
  }
  c10c_tensor *t = NULL;
  c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
  c10c_status st = c10c_tensor_empty(&t, &n, 1, acc, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS);
  if (st != C10C_STATUS_OK) return (c10c_tensor *)pyc10_raise(st);
  void *p = c10c_tensor_data(t);
  if (acc == C10C_DTYPE_INT64) {
    for (int64_t i = 0; i < n; i++) /* int64 arithmetic, wrapping as ATen's does in practice */
      ((int64_t *)p)[i] = (int64_t)((uint64_t)xs + (uint64_t)xst * (uint64_t)i);
  } else if (acc == C10C_DTYPE_FLOAT64) {
    for (int64_t i = 0; i < n; i++) ((double *)p)[i] = ds + dst * (double)i;
  } else {
    float fs = (float)ds, fst = (float)dst;
    for (int64_t i = 0; i < n; i++) ((float *)p)[i] = fs + fst * (float)i;
  }
  return t;
}

/* "arange_cpu" not implemented for 'Bool' (the kernels AT_DISPATCH error). */
static PyObject *arange_dtype_error(c10c_dtype dt, c10c_device device) {
  char text[96];
  const char *name = c10c_dtype_c10_name(dt);
  snprintf(text, sizeof text, "\"arange_%s\" not implemented for '%s'",
           device.type == C10C_DEVICE_TYPE_CUDA ? "cuda" : "cpu", name ? name : "?");
  return pyc10_not_implemented(text);
}

/* ATen's arange_out into out=: out's dtype decides the computation; out is resized (resize_,
 * after its warning when it had elements) only when its element count is not the range's, so
 * an out of that many elements keeps its shape and strides and takes the values in its logical
 * order. torch's meta kernel resizes as resize_output does whenever the shape is not (n,). */
static PyObject *arange_out(PyObject *into, const number *start, const number *end,
                            const number *step) {
  c10c_tensor *h = pyc10_handle(into);
  if (h == NULL) return NULL;
  c10c_dtype dt = c10c_tensor_dtype(h);
  c10c_device device = c10c_tensor_device(h);
  if (!arange_dtype(dt)) return arange_dtype_error(dt, device);
  int64_t n, numel = c10c_tensor_numel(h);
  if (arange_size(dt, start, end, step, &n) < 0) return NULL;
  if (device.type == C10C_DEVICE_TYPE_META) {
    if (pyc10_resize_output(into, &n, 1, -1, true) < 0) return NULL;
    return Py_NewRef(into); /* no data to write */
  }
  if (numel != n) {
    if (numel > 0) {
      char shape[512];
      pyc10_sizes_text(shape, sizeof shape, c10c_tensor_sizes(h), c10c_tensor_dim(h));
      if (PyErr_WarnFormat(PyExc_UserWarning, 1,
                           "The number of elements in the out tensor of shape %s is %lld which "
                           "does not match the computed number of elements %lld. Note that this "
                           "may occur as a result of rounding error. The out tensor will be "
                           "resized to a tensor of shape (%lld,).",
                           shape, (long long)numel, (long long)n, (long long)n) < 0)
        return NULL;
    }
    if (pyc10_resize_(into, &n, 1, -1) < 0) return NULL;
    if ((h = pyc10_handle(into)) == NULL) return NULL;
  }
  c10c_tensor *acc = arange_values(dt, start, step, n), *shaped = NULL;
  if (acc == NULL) return NULL;
  c10c_status st = c10c_tensor_view(&shaped, acc, c10c_tensor_sizes(h), c10c_tensor_dim(h));
  if (st == C10C_STATUS_OK) st = c10c_tensor_copy_(h, shaped);
  pyc10_release_tensor(shaped);
  pyc10_release_tensor(acc);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  return Py_NewRef(into);
}

static pa_parser arange_p = PA_PARSER("pyc10", "arange");
static PyObject *arange_impl(FASTCALL_ARGS) {
  PARSE(arange_p, r);
  /* (end, *, out, options...), (start, end, *, options...), (start, end, step, *, out, ...) */
  int ov = r.overload, first = ov == 2 ? 4 : 2, out_at = ov == 0 ? 1 : ov == 2 ? 3 : -1;
  number start, end, step;
  if (read_number(ov == 0 ? NULL : r.obj[0], 0, &start) < 0 ||
      read_number(r.obj[ov == 0 ? 0 : 1], 0, &end) < 0 ||
      read_number(ov == 2 ? r.obj[2] : NULL, 1, &step) < 0)
    return NULL;
  /* ATen: int64 when no dtype is given and all three are integral (bools count) */
  c10c_dtype dt = start.integral && end.integral && step.integral ? C10C_DTYPE_INT64
                                                                  : (c10c_dtype)pyc10_default_dtype;
  c10c_device device = pyc10_default_device();
  PyObject *into = NULL;
  if (out_at >= 0 && pyc10_out_arg(&r, out_at, first, &into) < 0) return NULL;
  if (into != NULL) return arange_out(into, &start, &end, &step);
  if (pyc10_factory_options(&r, first, &dt, &device) < 0) return NULL;
  if (!arange_dtype(dt)) return arange_dtype_error(dt, device);
  int64_t n;
  if (arange_size(dt, &start, &end, &step, &n) < 0) return NULL;
  c10c_tensor *acc = arange_values(dt, &start, &step, n);
  if (acc == NULL) return NULL;
  c10c_device have = c10c_tensor_device(acc);
  if (c10c_tensor_dtype(acc) == dt && have.type == device.type) return pyc10_wrap(acc);
  c10c_tensor *out = NULL;
  c10c_status st = c10c_tensor_empty(&out, &n, 1, dt, device, C10C_MEMORY_FORMAT_CONTIGUOUS);
  if (st == C10C_STATUS_OK) {
    st = c10c_tensor_copy_(out, acc); /* c10's casts: integers wrap, floats round */
    if (st != C10C_STATUS_OK) pyc10_release_tensor(out), out = NULL;
  }
  pyc10_release_tensor(acc);
  return pyc10_result(st, &out);
}
static PyObject *f_arange(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  return pyc10_pinned_result(arange_impl(args, nargs, kwnames));
}

/* ---- frombuffer, asarray: bound here, made by pyc10._creation ---- */

static pa_parser frombuffer_p = PA_PARSER("pyc10", "frombuffer");
static PyObject *f_frombuffer(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  PARSE(frombuffer_p, r);
  int dtype;
  int64_t count, offset;
  bool grad;
  if (pa_dtype(&r, 1, &dtype) < 0 || pa_int(&r, 2, &count) < 0 || pa_int(&r, 3, &offset) < 0 ||
      pa_bool(&r, 4, &grad) < 0)
    return NULL;
  static PyObject *impl;
  if (creation_attr(&impl, "_frombuffer") == NULL) return NULL;
  return PyObject_CallFunction(impl, "OiLLO", r.obj[0], dtype, (long long)count, (long long)offset,
                               grad ? Py_True : Py_False);
}

/* from_file(filename, shared=None, size=0, *, dtype, ...): torch's tensor over
 * UntypedStorage.from_file(filename, shared, size * itemsize) (c10c_storage_new_from_file). */
static pa_parser from_file_p = PA_PARSER("pyc10", "from_file");
static PyObject *f_from_file(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  PARSE(from_file_p, r);
  bool shared, pin;
  int64_t size = 0;
  if (pa_bool(&r, 1, &shared) < 0 || pa_bool(&r, 6, &pin) < 0 ||
      (r.obj[2] != NULL && r.obj[2] != Py_None && pa_int(&r, 2, &size) < 0))
    return NULL;
  if (pin) return RUNTIME_ERROR("tensors constructed from a file cannot be pinned");
  c10c_dtype dt = (c10c_dtype)pyc10_default_dtype;
  c10c_device device = {C10C_DEVICE_TYPE_CPU, -1};
  if (pyc10_factory_options(&r, 3, &dt, &device) < 0) return NULL;
  if (device.type != C10C_DEVICE_TYPE_CPU)
    return pyc10_not_implemented("from_file: only CPU tensors can be mapped to files");
  const char *filename = PyUnicode_AsUTF8AndSize(r.obj[0], NULL);
  if (filename == NULL) return NULL;
  int64_t itemsize = (int64_t)c10c_dtype_itemsize(dt);
  int64_t nbytes =
      size * (size > INT64_MAX / itemsize || size < INT64_MIN / itemsize ? 0 : itemsize);
  if (nbytes == 0 && size != 0)
    return RUNTIME_ERROR("from_file: %lld elements of %lld bytes overflow", (long long)size,
                         (long long)itemsize);
  c10c_storage *s = NULL;
  c10c_status st = c10c_storage_new_from_file(&s, filename, shared, nbytes);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  c10c_tensor *t = NULL;
  int64_t stride = 1;
  st = c10c_tensor_new_from_storage(&t, s, &size, &stride, 1, 0, dt);
  c10c_storage_release(s);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  return pyc10_wrap(t);
}

static pa_parser asarray_p = PA_PARSER("pyc10", "asarray");
static PyObject *f_asarray(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  PARSE(asarray_p, r);
  int dtype;
  c10c_device device;
  bool has_device, copy = false, grad = false;
  if (pa_dtype(&r, 1, &dtype) < 0 || pa_device(&r, 2, &device, &has_device) < 0 ||
      (r.obj[3] != NULL && pa_bool(&r, 3, &copy) < 0) ||
      (r.obj[4] != NULL && pa_bool(&r, 4, &grad) < 0))
    return NULL;
  static PyObject *impl;
  if (creation_attr(&impl, "_asarray") == NULL) return NULL;
  PyObject *dev = Py_None, *copy_obj = r.obj[3] == NULL ? Py_None : copy ? Py_True : Py_False;
  if (has_device && !PyObject_TypeCheck(r.obj[2], pa_cls.device)) {
    dev = PyObject_CallFunctionObjArgs(pa_cls.make_device, r.obj[2], NULL); /* "cpu", 0 */
    if (dev == NULL) return NULL;
  } else {
    dev = has_device ? r.obj[2] : Py_None;
    Py_INCREF(dev);
  }
  PyObject *out = PyObject_CallFunction(impl, "OiOOO", r.obj[0], dtype, dev, copy_obj,
                                        grad ? Py_True : Py_False);
  Py_DECREF(dev);
  return out;
}

/* ---- view_as_real, view_as_complex (ATen's ComplexHelper.h) ---- */

/* A tensor over t's storage with another dtype and geometry: a view. */
static PyObject *restrided(c10c_tensor *t, const int64_t *sizes, const int64_t *strides,
                           size_t ndim, int64_t offset, c10c_dtype dt) {
  c10c_tensor *out = NULL;
  c10c_status st =
      c10c_tensor_new_from_storage(&out, c10c_tensor_storage(t), sizes, strides, ndim, offset, dt);
  return pyc10_result(st, &out);
}

static pa_parser view_as_real_p = PA_PARSER("pyc10", "view_as_real");
static PyObject *f_view_as_real(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  PARSE(view_as_real_p, r);
  c10c_tensor *h = pyc10_handle(r.obj[0]);
  if (h == NULL) return NULL;
  c10c_dtype dt = c10c_tensor_dtype(h);
  if (!c10c_dtype_is_complex(dt))
    return raise_with(pa_cls.runtime_error, "view_as_real is only supported for complex tensors");
  size_t n = c10c_tensor_dim(h);
  if (n >= PA_MAX_DIMS) return raise_with(pa_cls.runtime_error, "too many dimensions");
  int64_t sizes[PA_MAX_DIMS + 1], strides[PA_MAX_DIMS + 1];
  const int64_t *sz = c10c_tensor_sizes(h), *sd = c10c_tensor_strides(h);
  for (size_t i = 0; i < n; i++) sizes[i] = sz[i], strides[i] = sd[i] * 2;
  sizes[n] = 2, strides[n] = 1;
  c10c_dtype real;
  c10c_status st = c10c_dtype_to_real(&real, dt);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  return restrided(h, sizes, strides, n + 1, c10c_tensor_storage_offset(h) * 2, real);
}

static pa_parser view_as_complex_p = PA_PARSER("pyc10", "view_as_complex");
static PyObject *f_view_as_complex(PyObject *m, FASTCALL_ARGS) {
  (void)m;
  PARSE(view_as_complex_p, r);
  c10c_tensor *h = pyc10_handle(r.obj[0]);
  if (h == NULL) return NULL;
  c10c_dtype dt = c10c_tensor_dtype(h);
  if (dt != C10C_DTYPE_FLOAT32 && dt != C10C_DTYPE_FLOAT64 && dt != C10C_DTYPE_FLOAT16) {
    const char *name = c10c_dtype_c10_name(dt);
    return raise_with(pa_cls.runtime_error,
                      "view_as_complex is only supported for half, float and double tensors, but "
                      "got a tensor of scalar type: %s",
                      name ? name : "?");
  }
  size_t n = c10c_tensor_dim(h);
  if (n == 0)
    return raise_with(pa_cls.runtime_error, "Input tensor must have one or more dimensions");
  const int64_t *sz = c10c_tensor_sizes(h), *sd = c10c_tensor_strides(h);
  if (sz[n - 1] != 2)
    return raise_with(pa_cls.runtime_error, "Tensor must have a last dimension of size 2");
  if (sd[n - 1] != 1)
    return raise_with(pa_cls.runtime_error, "Tensor must have a last dimension with stride 1");
  int64_t sizes[PA_MAX_DIMS], strides[PA_MAX_DIMS];
  for (size_t i = 0; i + 1 < n && i < PA_MAX_DIMS; i++) {
    if (sd[i] % 2 != 0)
      return raise_with(pa_cls.runtime_error,
                        "Tensor must have a stride divisible by 2 for all but last dimension");
    sizes[i] = sz[i], strides[i] = sd[i] / 2;
  }
  int64_t offset = c10c_tensor_storage_offset(h);
  if (offset % 2 != 0)
    return raise_with(pa_cls.runtime_error, "Tensor must have a storage_offset divisible by 2");
  c10c_dtype complex;
  c10c_status st = c10c_dtype_to_complex(&complex, dt);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  return restrided(h, sizes, strides, n - 1, offset / 2, complex);
}

#define F(name, fn) \
  { name, PYC10_FASTCALL(fn), METH_FASTCALL | METH_KEYWORDS, NULL }
static PyMethodDef creation_functions[] = {
    F("arange", f_arange),
    F("frombuffer", f_frombuffer),
    F("asarray", f_asarray),
    F("from_file", f_from_file),
    F("view_as_real", f_view_as_real),
    F("view_as_complex", f_view_as_complex),
    {NULL, NULL, 0, NULL},
};

int pyc10_creation_init(PyObject *module) {
  for (PyMethodDef *f = creation_functions; f->ml_name != NULL; f++)
    if (f->ml_doc == NULL) f->ml_doc = pa_doc("pyc10", f->ml_name);
  return PyModule_AddFunctions(module, creation_functions);
}
