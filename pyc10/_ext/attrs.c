/* Tensor attributes and the small methods and dunders torch code reads everywhere: the immutable
 * facts (dtype, device, is_cuda, layout, itemsize, nbytes, data_ptr(), _version), the autograd
 * attributes of a tensor that never requires grad (pyc10 has no autograd), the conversions to
 * Python numbers (__bool__, __int__, __float__, __complex__, __index__), len/iter/reversed, the
 * transposes T/H/mT/mH, dtype predicates, and the operators pyc10 refuses (no math kernels).
 *
 * The dtype and device objects come from tables _setup_attrs fills once from pyc10's Python side,
 * so reading them is a library getter and an array lookup.
 */
#include <string.h>

#include "common.h"

enum { N_DTYPES = 64, N_DEVICE_TYPES = 32, N_DEVICE_INDEXES = 129 };

static PyObject *dtype_objs[N_DTYPES];                          /* pyc10.dtype by code */
static PyObject *device_objs[N_DEVICE_TYPES][N_DEVICE_INDEXES]; /* made on first use */
static PyObject *make_device;    /* (type value, index) -> pyc10's interned device */
static PyObject *strided_layout; /* pyc10.strided */
static PyObject *item_name;

static PyObject *not_set_up(void) {
  PyErr_SetString(PyExc_RuntimeError, "pyc10._ctensor.TensorBase._setup_attrs was not called");
  return NULL;
}

/* _setup_attrs({code: dtype}, make_device, strided) */
static PyObject *t_setup_attrs(PyObject *unused, PyObject *args) {
  (void)unused;
  PyObject *dtypes, *make, *strided;
  if (!PyArg_ParseTuple(args, "O!OO:_setup_attrs", &PyDict_Type, &dtypes, &make, &strided))
    return NULL;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(dtypes, &pos, &key, &value)) {
    long code = PyLong_AsLong(key);
    if (code == -1 && PyErr_Occurred()) return NULL;
    if (code < 0 || code >= N_DTYPES) continue;
    Py_INCREF(value);
    PA_SETREF(dtype_objs[code], value);
  }
  Py_INCREF(make);
  PA_SETREF(make_device, make);
  Py_INCREF(strided);
  PA_SETREF(strided_layout, strided);
  if (item_name == NULL) item_name = PyUnicode_InternFromString("item");
  if (item_name == NULL) return NULL;
  Py_RETURN_NONE;
}

static PyObject *dtype_object(c10c_dtype code) {
  PyObject *d = (int)code >= 0 && (int)code < N_DTYPES ? dtype_objs[code] : NULL;
  if (d == NULL) return not_set_up();
  Py_INCREF(d);
  return d;
}

static PyObject *device_object(c10c_device dev) {
  int type = (int)dev.type, index = (int)dev.index + 1;
  if (type < 0 || type >= N_DEVICE_TYPES || index < 0 || index >= N_DEVICE_INDEXES)
    return PyErr_Format(PyExc_SystemError, "device (%d, %d) out of range", type, index - 1);
  PyObject **slot = &device_objs[type][index];
  if (*slot == NULL) {
    if (make_device == NULL) return not_set_up();
    *slot = PyObject_CallFunction(make_device, "ii", type, index - 1);
    if (*slot == NULL) return NULL;
  }
  Py_INCREF(*slot);
  return *slot;
}

/* ---- immutable facts ---- */

static PyObject *get_dtype(PyObject *self, void *closure) {
  (void)closure;
  SELF_HANDLE(h);
  return dtype_object(c10c_tensor_dtype(h));
}

static PyObject *get_device(PyObject *self, void *closure) {
  (void)closure;
  SELF_HANDLE(h);
  return device_object(c10c_tensor_device(h));
}

static PyObject *device_is(PyObject *self, c10c_device_type type) {
  SELF_HANDLE(h);
  return PyBool_FromLong(c10c_tensor_device(h).type == type);
}
static PyObject *get_is_cuda(PyObject *self, void *closure) {
  (void)closure;
  return device_is(self, C10C_DEVICE_TYPE_CUDA);
}
static PyObject *get_is_cpu(PyObject *self, void *closure) {
  (void)closure;
  return device_is(self, C10C_DEVICE_TYPE_CPU);
}
/* is_xpu, is_mps, ...: the device type in the getset's closure. */
static PyObject *get_is_device(PyObject *self, void *closure) {
  return device_is(self, (c10c_device_type)(intptr_t)closure);
}
#define IS_DEVICE(name, type)                                                       \
  {                                                                                 \
    "is_" name, get_is_device, NULL, "Whether the tensor is on a " name " device.", \
        (void *)(intptr_t)(type)                                                    \
  }
static PyObject *get_is_meta(PyObject *self, void *closure) {
  (void)closure;
  return device_is(self, C10C_DEVICE_TYPE_META);
}

static PyObject *get_layout(PyObject *self, void *closure) {
  (void)closure;
  SELF_HANDLE(h);
  (void)h;
  if (strided_layout == NULL) return not_set_up();
  Py_INCREF(strided_layout);
  return strided_layout;
}

static PyObject *get_itemsize(PyObject *self, void *closure) {
  (void)closure;
  SELF_HANDLE(h);
  return PyLong_FromSize_t(c10c_tensor_itemsize(h));
}

static PyObject *get_nbytes(PyObject *self, void *closure) {
  (void)closure;
  SELF_HANDLE(h);
  return PyLong_FromLongLong((long long)c10c_tensor_nbytes(h));
}

static PyObject *get_version(PyObject *self, void *closure) {
  (void)closure;
  SELF_HANDLE(h);
  int64_t v = 0;
  c10c_status st = c10c_tensor_version(&v, h);
  return st == C10C_STATUS_OK ? PyLong_FromLongLong((long long)v) : pyc10_raise(st);
}

/* The address of the first element. NULL with elements means the storage no longer holds them
 * (resized smaller since): the library's error, where torch would hand out freed memory. A meta
 * tensor's storage has no data (address 0): torch gives 0 + storage_offset * itemsize. */
static PyObject *t_data_ptr(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  if (c10c_tensor_device(h).type == C10C_DEVICE_TYPE_META)
    return PyLong_FromUnsignedLongLong((unsigned long long)c10c_tensor_storage_offset(h) *
                                       c10c_tensor_itemsize(h));
  void *p = c10c_tensor_data(h);
  if (p == NULL && c10c_tensor_numel(h) > 0) return pyc10_raise(c10c_last_error_status());
  return PyLong_FromVoidPtr(p);
}

static PyObject *t_is_inference(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  return PyBool_FromLong(c10c_tensor_is_inference(h));
}

static PyObject *t_is_floating_point(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  return PyBool_FromLong(c10c_dtype_is_floating_point(c10c_tensor_dtype(h)));
}

static PyObject *t_is_complex(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  return PyBool_FromLong(c10c_dtype_is_complex(c10c_tensor_dtype(h)));
}

static PyObject *t_is_signed(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  bool out = false;
  c10c_status st = c10c_dtype_is_signed(&out, c10c_tensor_dtype(h));
  return st == C10C_STATUS_OK ? PyBool_FromLong(out) : pyc10_raise(st);
}

/* torch: -1 on the CPU, else the device's index. */
static PyObject *t_get_device(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  c10c_device d = c10c_tensor_device(h);
  return PyLong_FromLong(d.type == C10C_DEVICE_TYPE_CPU ? -1 : (long)d.index);
}

static bool same_sizes(const c10c_tensor *a, const c10c_tensor *b) {
  size_t n = c10c_tensor_dim(a);
  return n == c10c_tensor_dim(b) &&
         (n == 0 || memcmp(c10c_tensor_sizes(a), c10c_tensor_sizes(b), n * sizeof(int64_t)) == 0);
}

static pa_parser is_same_size_p = PA_PARSER("Tensor", "is_same_size");
static PyObject *t_is_same_size(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  SELF_HANDLE(h);
  PARSE(is_same_size_p, r);
  c10c_tensor *o = pyc10_handle(r.obj[0]);
  return o == NULL ? NULL : PyBool_FromLong(same_sizes(h, o));
}

/* at::native::is_pinned: a CPU tensor's storage from the pinned host allocator. device, deprecated
 * (torch's DeprecationWarning), is only parsed: an int is an accelerator's index, which raises
 * without one, as torch's. */
static pa_parser is_pinned_p = PA_PARSER("Tensor", "is_pinned");
static PyObject *t_is_pinned(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  PARSE(is_pinned_p, r);
  c10c_device device;
  bool has_device;
  if (pa_device(&r, 0, &device, &has_device) < 0) return NULL;
  if (has_device && PyErr_WarnEx(PyExc_DeprecationWarning,
                                 "The argument 'device' of Tensor.is_pinned() is deprecated. "
                                 "Please do not pass this argument.",
                                 1) < 0)
    return NULL;
  SELF_HANDLE(h);
  if (c10c_tensor_device(h).type != C10C_DEVICE_TYPE_CPU) Py_RETURN_FALSE;
  const void *data = c10c_storage_data(c10c_tensor_storage(h));
  return PyBool_FromLong(data != NULL && c10c_cuda_host_is_pinned(data));
}

/* ATen's is_set_to: the same storage, offset, sizes and strides. */
static pa_parser is_set_to_p = PA_PARSER("Tensor", "is_set_to");
static PyObject *t_is_set_to(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  SELF_HANDLE(h);
  PARSE(is_set_to_p, r);
  c10c_tensor *o = pyc10_handle(r.obj[0]);
  if (o == NULL) return NULL;
  size_t n = c10c_tensor_dim(h);
  bool same =
      c10c_tensor_storage(h) == c10c_tensor_storage(o) &&
      c10c_tensor_storage_offset(h) == c10c_tensor_storage_offset(o) && same_sizes(h, o) &&
      (n == 0 || memcmp(c10c_tensor_strides(h), c10c_tensor_strides(o), n * sizeof(int64_t)) == 0);
  return PyBool_FromLong(same);
}

/* ---- autograd attributes: pyc10 has none, so a tensor is a leaf that never requires grad ---- */

static PyObject *no_autograd(void) {
  return RUNTIME_ERROR("pyc10 has no autograd: a tensor cannot require gradients");
}

/* torch refuses requires_grad for other dtypes first, with this message; then pyc10 refuses. */
static PyObject *refuse_requires_grad(c10c_tensor *h, const char *dtypes) {
  c10c_dtype d = c10c_tensor_dtype(h);
  if (!c10c_dtype_is_floating_point(d) && !c10c_dtype_is_complex(d))
    return RUNTIME_ERROR("only Tensors of %s dtype can require gradients", dtypes);
  return no_autograd();
}

static PyObject *get_false(PyObject *self, void *closure) {
  (void)self, (void)closure;
  Py_RETURN_FALSE;
}
/* torch's _base: the tensor a view method made this one from (views.c records it), else None. */
static PyObject *get_base(PyObject *self, void *closure) {
  (void)closure;
  PyObject *base = ((TensorObject *)self)->base;
  return Py_NewRef(base != NULL ? base : Py_None);
}
static PyObject *get_true(PyObject *self, void *closure) {
  (void)self, (void)closure;
  Py_RETURN_TRUE;
}
static PyObject *get_none(PyObject *self, void *closure) {
  (void)self, (void)closure;
  Py_RETURN_NONE;
}

static int set_requires_grad(PyObject *self, PyObject *value, void *closure) {
  (void)closure;
  c10c_tensor *h = pyc10_handle(self);
  if (h == NULL) return -1;
  if (value == NULL) {
    TYPE_ERROR("cannot delete requires_grad");
    return -1;
  }
  if (!PyBool_Check(value)) {
    RUNTIME_ERROR("requires_grad must be a bool");
    return -1;
  }
  if (value == Py_True) {
    refuse_requires_grad(h, "floating point and complex");
    return -1;
  }
  return 0;
}

/* grad is always None: None may be assigned (generic code clears grads so). */
static int set_grad(PyObject *self, PyObject *value, void *closure) {
  (void)self, (void)closure;
  if (value == Py_None) return 0;
  if (value == NULL) return 0; /* del t.grad: torch allows it */
  RUNTIME_ERROR("pyc10 has no autograd: Tensor.grad can only be None");
  return -1;
}

static pa_parser requires_grad__p = PA_PARSER("Tensor", "requires_grad_");
static PyObject *t_requires_grad_(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames) {
  SELF_HANDLE(h);
  PARSE(requires_grad__p, r);
  bool wanted = true;
  if (pa_bool(&r, 0, &wanted) < 0) return NULL;
  if (wanted) return refuse_requires_grad(h, "floating point");
  Py_INCREF(self);
  return self;
}

/* A new tensor over the same elements (sizes, strides, offset): as_strided shares the version
 * counter, as torch's detach() does. */
static PyObject *alias(c10c_tensor *h) {
  c10c_tensor *out = NULL;
  size_t n = c10c_tensor_dim(h);
  int64_t offset = c10c_tensor_storage_offset(h);
  c10c_status st =
      c10c_tensor_as_strided(&out, h, c10c_tensor_sizes(h), n, c10c_tensor_strides(h), n, &offset);
  return pyc10_result(st, &out);
}

static PyObject *t_detach(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  return alias(h);
}

static PyObject *t_detach_(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  (void)h;
  Py_INCREF(self);
  return self;
}

/* torch's .data: a new tensor over the same storage. */
static PyObject *get_data(PyObject *self, void *closure) {
  (void)closure;
  SELF_HANDLE(h);
  c10c_tensor *out = NULL;
  c10c_status st = c10c_tensor_new_from_storage(
      &out, c10c_tensor_storage(h), c10c_tensor_sizes(h), c10c_tensor_strides(h),
      c10c_tensor_dim(h), c10c_tensor_storage_offset(h), c10c_tensor_dtype(h));
  return pyc10_result(st, &out);
}

/* t.data = other: t becomes other's tensor (torch's set_data), its cached shape and strides
 * dropped. */
static int set_data(PyObject *self, PyObject *value, void *closure) {
  (void)closure;
  if (pyc10_handle(self) == NULL) return -1;
  if (value == NULL || pa_cls.tensor == NULL || !PyObject_TypeCheck(value, pa_cls.tensor)) {
    PyObject *name = pa__typename_of(value == NULL ? Py_None : value); /* "torch.dtype" */
    if (name != NULL) TYPE_ERROR("Variable data has to be a tensor, but got %U", name);
    Py_XDECREF(name);
    return -1;
  }
  c10c_tensor *o = pyc10_handle(value);
  if (o == NULL) return -1;
  Py_DECREF(pyc10_become(self, C10C_STATUS_OK, c10c_tensor_retain(o)));
  return 0;
}

/* ---- transposes ---- */

static int warn(const char *message) { return PyErr_WarnEx(PyExc_UserWarning, message, 1); }

static PyObject *transpose(c10c_tensor *h, int64_t d0, int64_t d1) {
  c10c_tensor *out = NULL;
  c10c_status st = c10c_tensor_transpose(&out, h, d0, d1);
  return pyc10_result(st, &out);
}

/* pyc10 has no conjugate views: the conjugating transposes take real tensors only (-1 with the
 * error for a complex one). */
static int no_conj(c10c_tensor *h, const char *what) {
  if (!c10c_dtype_is_complex(c10c_tensor_dtype(h))) return 0;
  RUNTIME_ERROR("%s of a complex tensor needs a conjugate view, which pyc10 does not have", what);
  return -1;
}

static PyObject *get_T(PyObject *self, void *closure) {
  (void)closure;
  SELF_HANDLE(h);
  size_t n = c10c_tensor_dim(h);
  if (n == 0) {
    if (warn("Tensor.T is deprecated on 0-D tensors. This function is the identity in these "
             "cases.") < 0)
      return NULL;
    return pyc10_viewed(self, alias(h));
  }
  if (n == 2) return pyc10_viewed(self, transpose(h, 0, 1));
  if (warn("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
           "deprecated and it will throw an error in a future release. Consider `x.mT` to "
           "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to "
           "reverse the dimensions of a tensor.") < 0)
    return NULL;
  int64_t dims[64];
  if (n > 64) return RUNTIME_ERROR("T: too many dimensions (%zu)", n);
  for (size_t i = 0; i < n; i++) dims[i] = (int64_t)(n - 1 - i);
  c10c_tensor *out = NULL;
  c10c_status st = c10c_tensor_permute(&out, h, dims, n);
  return pyc10_viewed(self, pyc10_result(st, &out));
}

static PyObject *get_H(PyObject *self, void *closure) {
  (void)closure;
  SELF_HANDLE(h);
  size_t n = c10c_tensor_dim(h);
  if (n == 0) {
    if (warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().") < 0) return NULL;
  } else if (n != 2) {
    return RUNTIME_ERROR(
        "tensor.H is only supported on matrices (2-D tensors). Got %zu-D tensor.%s", n,
        n > 2 ? " For batches of matrices, consider using tensor.mH" : "");
  }
  if (no_conj(h, "Tensor.H") < 0) return NULL;
  return pyc10_viewed(self, n == 0 ? alias(h) : transpose(h, 0, 1));
}

/* mT, mH and adjoint(): the last two dims transposed (conjugated for mH and adjoint). */
static PyObject *matrix_transpose(PyObject *self, const char *name, const char *zero_dim_warning,
                                  bool conj) {
  SELF_HANDLE(h);
  size_t n = c10c_tensor_dim(h);
  if (n == 0) {
    if (warn(zero_dim_warning) < 0) return NULL;
  } else if (n < 2) {
    return RUNTIME_ERROR(
        "%s is only supported on matrices or batches of matrices. Got %zu-D "
        "tensor.",
        name, n);
  }
  if (conj && no_conj(h, name) < 0) return NULL;
  return pyc10_viewed(self, n == 0 ? alias(h) : transpose(h, -2, -1));
}

static PyObject *get_mT(PyObject *self, void *closure) {
  (void)closure;
  return matrix_transpose(
      self, "tensor.mT",
      "Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases.",
      false);
}

static PyObject *get_mH(PyObject *self, void *closure) {
  (void)closure;
  return matrix_transpose(self, "tensor.mH",
                          "Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().", true);
}

static PyObject *t_adjoint(PyObject *self, PyObject *unused) {
  (void)unused;
  return matrix_transpose(self, "tensor.adjoint()",
                          "adjoint() is deprecated on 0-D tensors. Consider using x.conj().", true);
}

static PyObject *t_ravel(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  int64_t all = -1;
  c10c_tensor *out = NULL;
  c10c_status st = c10c_tensor_reshape(&out, h, &all, 1);
  return pyc10_viewed(self, pyc10_result(st, &out));
}

/* torch's type_as: self.type(other.type()), the dtype and device of other. */
static pa_parser type_as_p = PA_PARSER("Tensor", "type_as");
static PyObject *t_type_as(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  SELF_HANDLE(h);
  (void)h;
  PARSE(type_as_p, r);
  c10c_tensor *o = pyc10_handle(r.obj[0]);
  if (o == NULL) return NULL;
  return pyc10_to(self, c10c_tensor_device(o), c10c_tensor_dtype(o));
}

/* ---- conversions to Python numbers ---- */

/* The one element of a CPU tensor read in place, for the dtypes C reads natively; NULL without
 * an error for the others (float16, bfloat16, float8, ...: Python's item() widens them). */
static PyObject *read_element(c10c_tensor *h) {
  if (c10c_tensor_numel(h) != 1 || c10c_tensor_device(h).type != C10C_DEVICE_TYPE_CPU) return NULL;
  const void *p = c10c_tensor_data(h);
  if (p == NULL) return NULL;
  return pyc10_load_element(p, c10c_tensor_dtype(h));
}

/* The one element as a Python number: read in place where C can, else the Python item(). */
static PyObject *item_of(PyObject *self) {
  c10c_tensor *h = pyc10_handle(self);
  if (h == NULL) return NULL;
  PyObject *v = read_element(h);
  if (v != NULL || PyErr_Occurred()) return v;
  if (item_name == NULL) return not_set_up();
  return PyObject_CallMethodObjArgs(self, item_name, NULL);
}

/* The one element of a one-element CPU tensor of float32, float64, int64 or bool, read as a
 * double without the general path (bool(t), float(t)); false (no error) for any other tensor
 * or an int64 a double cannot hold exactly. */
static bool fast_double(c10c_tensor *h, double *out) {
  if (h == NULL || c10c_tensor_numel(h) != 1 || c10c_tensor_device(h).type != C10C_DEVICE_TYPE_CPU)
    return false;
  c10c_dtype dt = c10c_tensor_dtype(h);
  if (dt != C10C_DTYPE_FLOAT32 && dt != C10C_DTYPE_FLOAT64 && dt != C10C_DTYPE_BOOL &&
      dt != C10C_DTYPE_INT64)
    return false;
  const void *p = c10c_tensor_data(h);
  if (p == NULL) return false; /* the general path raises the library's error */
  switch (dt) {
    case C10C_DTYPE_FLOAT32: {
      float f;
      memcpy(&f, p, sizeof f);
      *out = f;
      return true;
    }
    case C10C_DTYPE_FLOAT64: memcpy(out, p, sizeof *out); return true;
    case C10C_DTYPE_BOOL: *out = *(const unsigned char *)p != 0; return true;
    default: {
      int64_t v;
      memcpy(&v, p, sizeof v);
      if (v > ((int64_t)1 << 53) || v < -((int64_t)1 << 53)) return false;
      *out = (double)v;
      return true;
    }
  }
}

/* torch's is_nonzero and __bool__: the one element's truth. */
static int truth(PyObject *self) {
  double d;
  if (fast_double(((TensorObject *)self)->h, &d)) return d != 0.0; /* NaN is true, as item()'s */
  c10c_tensor *h = pyc10_handle(self);
  if (h == NULL) return -1;
  int64_t n = c10c_tensor_numel(h);
  if (n != 1) {
    RUNTIME_ERROR("Boolean value of Tensor with %s is ambiguous",
                  n == 0 ? "no values" : "more than one value");
    return -1;
  }
  PyObject *v = item_of(self);
  if (v == NULL) return -1;
  int r = PyObject_IsTrue(v);
  Py_DECREF(v);
  return r;
}

static PyObject *t_is_nonzero(PyObject *self, PyObject *unused) {
  (void)unused;
  int r = truth(self);
  return r < 0 ? NULL : PyBool_FromLong(r);
}

/* The one element (torch's ValueError for other counts). For int() and float() of a complex
 * element, torch's checked conversion: an imaginary part (and, for int64_t, a real part out of
 * its range, inf or nan) is its RuntimeError. */
static PyObject *scalar_of(PyObject *self, const char *cpp_type) {
  SELF_HANDLE(h);
  if (c10c_tensor_numel(h) != 1)
    return VALUE_ERROR("only one element tensors can be converted to Python scalars");
  PyObject *v = item_of(self);
  if (v == NULL || cpp_type == NULL || !PyComplex_Check(v)) return v;
  double imag = PyComplex_ImagAsDouble(v), real = PyComplex_RealAsDouble(v);
  Py_DECREF(v);
  bool to_int = strcmp(cpp_type, "int64_t") == 0;
  if (imag != 0.0 || (to_int && !(real >= -0x1p63 && real < 0x1p63)))
    return RUNTIME_ERROR("value cannot be converted to type %s without overflow", cpp_type);
  return PyFloat_FromDouble(real);
}

/* The one element of a CPU int64 tensor, the common index, read without the general path;
 * NULL without an error for any other tensor. */
static PyObject *int64_element(c10c_tensor *h) {
  if (h == NULL || c10c_tensor_dtype(h) != C10C_DTYPE_INT64 || c10c_tensor_numel(h) != 1 ||
      c10c_tensor_device(h).type != C10C_DEVICE_TYPE_CPU)
    return NULL;
  const void *p = c10c_tensor_data(h);
  if (p == NULL) return NULL; /* the general path raises the library's error */
  int64_t v;
  memcpy(&v, p, sizeof v);
  return PyLong_FromLongLong((long long)v);
}

static PyObject *t_int(PyObject *self) {
  PyObject *fast = int64_element(((TensorObject *)self)->h);
  if (fast != NULL) return fast;
  PyObject *v = scalar_of(self, "int64_t");
  if (v == NULL) return NULL;
  PyObject *r = PyNumber_Long(v);
  Py_DECREF(v);
  return r;
}

static PyObject *t_float(PyObject *self) {
  double d;
  if (fast_double(((TensorObject *)self)->h, &d)) return PyFloat_FromDouble(d);
  PyObject *v = scalar_of(self, "double");
  if (v == NULL) return NULL;
  PyObject *r = PyNumber_Float(v);
  Py_DECREF(v);
  return r;
}

static PyObject *t_complex(PyObject *self, PyObject *unused) {
  (void)unused;
  PyObject *v = scalar_of(self, NULL);
  if (v == NULL) return NULL;
  PyObject *r = PyObject_CallFunctionObjArgs((PyObject *)&PyComplex_Type, v, NULL);
  Py_DECREF(v);
  return r;
}

/* Only integer (and bool) tensors of one element are indexes, as torch. */
static PyObject *t_index(PyObject *self) {
  PyObject *fast = int64_element(((TensorObject *)self)->h);
  if (fast != NULL) return fast;
  SELF_HANDLE(h);
  if (c10c_tensor_numel(h) != 1 || !c10c_dtype_is_integral(c10c_tensor_dtype(h), true))
    return TYPE_ERROR("only integer tensors of a single element can be converted to an index");
  PyObject *v = item_of(self);
  if (v == NULL) return NULL;
  PyObject *r = PyNumber_Index(v);
  Py_DECREF(v);
  return r;
}

/* ---- len, iter, reversed ---- */

static Py_ssize_t t_len(PyObject *self) {
  c10c_tensor *h = pyc10_handle(self);
  if (h == NULL) return -1;
  if (c10c_tensor_dim(h) == 0) {
    TYPE_ERROR("len() of a 0-d tensor");
    return -1;
  }
  return (Py_ssize_t)c10c_tensor_sizes(h)[0];
}

/* The tensors along dim 0, first to last or last to first. */
static PyObject *rows(c10c_tensor *h, bool reversed) {
  int64_t n = c10c_tensor_sizes(h)[0];
  c10c_tensor **hs = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof *hs);
  if (hs == NULL) return PyErr_NoMemory();
  for (int64_t i = 0; i < n; i++) {
    c10c_status st = c10c_tensor_select(&hs[i], h, 0, reversed ? n - 1 - i : i);
    if (st != C10C_STATUS_OK) {
      for (int64_t j = 0; j < i; j++) c10c_tensor_release(hs[j]);
      PyMem_Free(hs);
      return pyc10_raise(st);
    }
  }
  PyObject *tuple = pyc10_wrap_tuple(hs, (size_t)n);
  PyMem_Free(hs);
  return tuple;
}

/* torch: iter(self.unbind(0)). */
static PyObject *t_iter(PyObject *self) {
  SELF_HANDLE(h);
  if (c10c_tensor_dim(h) == 0) return TYPE_ERROR("iteration over a 0-d tensor");
  PyObject *tuple = pyc10_viewed(self, rows(h, false));
  if (tuple == NULL) return NULL;
  PyObject *it = PyObject_GetIter(tuple);
  Py_DECREF(tuple);
  return it;
}

/* torch: self for a 0-dim tensor, else self.flip(0): a copy with the rows in reverse order
 * (c10 has no negative strides, so flip copies there too). */
static PyObject *t_reversed(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  if (c10c_tensor_dim(h) == 0) {
    Py_INCREF(self);
    return self;
  }
  c10c_tensor *out = NULL;
  c10c_status st = c10c_tensor_empty_like(&out, h, c10c_tensor_dtype(h), c10c_tensor_device(h),
                                          C10C_MEMORY_FORMAT_CONTIGUOUS);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  PyObject *result = pyc10_wrap(out); /* owns out from here */
  if (result == NULL) return NULL;
  int64_t n = c10c_tensor_sizes(h)[0];
  bool contiguous = false;
  if (c10c_tensor_device(h).type == C10C_DEVICE_TYPE_CPU && c10c_tensor_numel(h) > 0 &&
      c10c_tensor_is_contiguous(&contiguous, h, C10C_MEMORY_FORMAT_CONTIGUOUS) == C10C_STATUS_OK &&
      contiguous) { /* rows of the same bytes: one memcpy each (the data calls check bounds) */
    const char *from = c10c_tensor_data(h);
    char *to = c10c_tensor_data(out);
    if (from == NULL || to == NULL) {
      Py_DECREF(result);
      return pyc10_raise(c10c_last_error_status());
    }
    size_t row = (size_t)c10c_tensor_nbytes(h) / (size_t)n;
    for (int64_t i = 0; i < n; i++)
      memcpy(to + (size_t)i * row, from + (size_t)(n - 1 - i) * row, row);
    return result;
  }
  for (int64_t i = 0; i < n && st == C10C_STATUS_OK; i++) {
    c10c_tensor *dst = NULL, *src = NULL;
    st = c10c_tensor_select(&dst, out, 0, i);
    if (st == C10C_STATUS_OK) st = c10c_tensor_select(&src, h, 0, n - 1 - i);
    if (st == C10C_STATUS_OK) st = c10c_tensor_copy_(dst, src);
    c10c_tensor_release(dst);
    c10c_tensor_release(src);
  }
  if (st != C10C_STATUS_OK) {
    Py_DECREF(result);
    return pyc10_raise(st);
  }
  return result;
}

/* ---- operators pyc10 refuses: it has no math kernels ---- */

static PyObject *no_operator(const char *op) {
  return TYPE_ERROR(
      "pyc10.Tensor has no math operators (%s): pyc10 is a tensor runtime without "
      "math kernels; compute with torch or numpy (torch.from_dlpack(t), t.numpy())",
      op);
}

/* ==, != and the orderings are elementwise in torch; pyc10 cannot give that answer, so it
 * refuses them (None compares by identity, as torch's NotImplemented for it gives). Hashing stays
 * by identity, as torch's, so tensors still work as dict keys and set members. */
static PyObject *t_richcompare(PyObject *self, PyObject *other, int op) {
  static const char *names[] = {"<", "<=", "==", "!=", ">", ">="};
  if (other == Py_None) Py_RETURN_NOTIMPLEMENTED;
  (void)self;
  return no_operator(names[op]);
}

static Py_hash_t t_hash(PyObject *self) {
  size_t y = (size_t)self; /* CPython's pointer hash: the low 4 bits are always 0 */
  y = (y >> 4) | (y << (8 * sizeof(void *) - 4));
  Py_hash_t x = (Py_hash_t)y;
  return x == -1 ? -2 : x;
}

#define BINARY(fn, op)                            \
  static PyObject *fn(PyObject *a, PyObject *b) { \
    (void)a, (void)b;                             \
    return no_operator(op);                       \
  }
#define UNARY(fn, op)                \
  static PyObject *fn(PyObject *a) { \
    (void)a;                         \
    return no_operator(op);          \
  }
BINARY(op_add, "+")
BINARY(op_sub, "-")
BINARY(op_mul, "*")
BINARY(op_truediv, "/")
BINARY(op_floordiv, "//")
BINARY(op_mod, "%")
BINARY(op_matmul, "@")
BINARY(op_and, "&")
BINARY(op_or, "|")
BINARY(op_xor, "^")
BINARY(op_lshift, "<<")
BINARY(op_rshift, ">>")
BINARY(op_iadd, "+=")
BINARY(op_isub, "-=")
BINARY(op_imul, "*=")
BINARY(op_itruediv, "/=")
BINARY(op_ifloordiv, "//=")
BINARY(op_imod, "%=")
BINARY(op_imatmul, "@=")
BINARY(op_iand, "&=")
BINARY(op_ior, "|=")
BINARY(op_ixor, "^=")
BINARY(op_ilshift, "<<=")
BINARY(op_irshift, ">>=")
UNARY(op_neg, "unary -")
UNARY(op_pos, "unary +")
UNARY(op_abs, "abs")
UNARY(op_invert, "~")
static PyObject *op_pow(PyObject *a, PyObject *b, PyObject *c) {
  (void)a, (void)b, (void)c;
  return no_operator("**");
}
static PyObject *op_ipow(PyObject *a, PyObject *b, PyObject *c) {
  (void)a, (void)b, (void)c;
  return no_operator("**=");
}

static int t_bool(PyObject *self) { return truth(self); }

/* The dunders behind the slots, as methods (METH_COEXIST: in the type's dict instead of the slot
 * wrappers, the slots themselves stay these C functions): a bad call gets torch's words, CPython's
 * for a C method ("TensorBase.__bool__() takes no arguments (1 given)") where torch's is in C,
 * Python's own for a function ("Tensor.__len__() takes 1 positional argument but 2 were given")
 * where torch writes it in Python (torch/_tensor.py). */
static PyObject *m_bool(PyObject *self, PyObject *unused) {
  (void)unused;
  int r = t_bool(self);
  return r < 0 ? NULL : PyBool_FromLong(r);
}
static PyObject *m_int(PyObject *self, PyObject *unused) {
  (void)unused;
  return t_int(self);
}
static PyObject *m_float(PyObject *self, PyObject *unused) {
  (void)unused;
  return t_float(self);
}
static PyObject *m_index(PyObject *self, PyObject *unused) {
  (void)unused;
  return t_index(self);
}
static PyObject *m_len(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  PyObject *none[1];
  if (pyc10_bind_python((PyObject *)Py_TYPE(self), "__len__", NULL, 0, 0, args, nargs, kwnames,
                        none) < 0)
    return NULL;
  Py_ssize_t n = t_len(self);
  return n < 0 ? NULL : PyLong_FromSsize_t(n);
}
static PyObject *m_iter(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames) {
  PyObject *none[1];
  if (pyc10_bind_python((PyObject *)Py_TYPE(self), "__iter__", NULL, 0, 0, args, nargs, kwnames,
                        none) < 0)
    return NULL;
  return t_iter(self);
}

PyType_Slot pyc10_attr_slots[] = {
    {Py_nb_bool, (void *)t_bool},
    {Py_nb_int, (void *)t_int},
    {Py_nb_float, (void *)t_float},
    {Py_nb_index, (void *)t_index},
    {Py_sq_length, (void *)t_len},
    {Py_mp_length, (void *)t_len},
    {Py_tp_iter, (void *)t_iter},
    {Py_tp_richcompare, (void *)t_richcompare},
    {Py_tp_hash, (void *)t_hash},
    {Py_nb_add, (void *)op_add},
    {Py_nb_subtract, (void *)op_sub},
    {Py_nb_multiply, (void *)op_mul},
    {Py_nb_true_divide, (void *)op_truediv},
    {Py_nb_floor_divide, (void *)op_floordiv},
    {Py_nb_remainder, (void *)op_mod},
    {Py_nb_power, (void *)op_pow},
    {Py_nb_matrix_multiply, (void *)op_matmul},
    {Py_nb_and, (void *)op_and},
    {Py_nb_or, (void *)op_or},
    {Py_nb_xor, (void *)op_xor},
    {Py_nb_lshift, (void *)op_lshift},
    {Py_nb_rshift, (void *)op_rshift},
    {Py_nb_inplace_add, (void *)op_iadd},
    {Py_nb_inplace_subtract, (void *)op_isub},
    {Py_nb_inplace_multiply, (void *)op_imul},
    {Py_nb_inplace_true_divide, (void *)op_itruediv},
    {Py_nb_inplace_floor_divide, (void *)op_ifloordiv},
    {Py_nb_inplace_remainder, (void *)op_imod},
    {Py_nb_inplace_power, (void *)op_ipow},
    {Py_nb_inplace_matrix_multiply, (void *)op_imatmul},
    {Py_nb_inplace_and, (void *)op_iand},
    {Py_nb_inplace_or, (void *)op_ior},
    {Py_nb_inplace_xor, (void *)op_ixor},
    {Py_nb_inplace_lshift, (void *)op_ilshift},
    {Py_nb_inplace_rshift, (void *)op_irshift},
    {Py_nb_negative, (void *)op_neg},
    {Py_nb_positive, (void *)op_pos},
    {Py_nb_absolute, (void *)op_abs},
    {Py_nb_invert, (void *)op_invert},
    {0, NULL},
};

/* ---- the tables tensor.c merges into TensorBase ---- */

PyGetSetDef pyc10_attr_getset[] = {
    {"dtype", get_dtype, NULL, "The element type.", NULL},
    {"device", get_device, NULL, "The device of the elements.", NULL},
    {"is_cuda", get_is_cuda, NULL, "Whether the tensor is on a CUDA device.", NULL},
    {"is_cpu", get_is_cpu, NULL, "Whether the tensor is on the CPU.", NULL},
    {"is_meta", get_is_meta, NULL, "Whether the tensor is on the meta device.", NULL},
    {"layout", get_layout, NULL, "pyc10.strided.", NULL},
    {"itemsize", get_itemsize, NULL, "Bytes per element.", NULL},
    {"nbytes", get_nbytes, NULL, "numel() * itemsize.", NULL},
    {"_version", get_version, NULL, "The version counter (writes in place count).", NULL},
    {"requires_grad", get_false, set_requires_grad,
     "False: pyc10 has no autograd (setting True raises).", NULL},
    {"grad", get_none, set_grad, "None: pyc10 has no autograd (only None may be set).", NULL},
    {"is_leaf", get_true, NULL, "True: pyc10 has no autograd graph.", NULL},
    {"grad_fn", get_none, NULL, "None: pyc10 has no autograd graph.", NULL},
    {"data", get_data, set_data,
     "A new tensor over the same storage; assigning a tensor makes this one that tensor.", NULL},
    {"T", get_T, NULL, "The dims reversed (transpose for a matrix).", NULL},
    {"H", get_H, NULL, "The conjugate transpose of a matrix (real dtypes only in pyc10).", NULL},
    {"mT", get_mT, NULL, "The last two dims transposed.", NULL},
    {"mH", get_mH, NULL, "mT conjugated (real dtypes only in pyc10).", NULL},
    {"_base", get_base, NULL, "The tensor this view was made from (its own base), else None.",
     NULL},
    {"is_sparse", get_false, NULL, "False: pyc10 tensors are strided (no sparse layouts).", NULL},
    {"is_sparse_csr", get_false, NULL, "False: pyc10 tensors are strided (no sparse layouts).",
     NULL},
    {"is_quantized", get_false, NULL, "False: pyc10 has no quantized dtypes.", NULL},
    {"is_mkldnn", get_false, NULL, "False: pyc10 tensors are strided (no mkldnn layout).", NULL},
    {"is_nested", get_false, NULL, "False: pyc10 has no nested tensors.", NULL},
    IS_DEVICE("xpu", C10C_DEVICE_TYPE_XPU),
    IS_DEVICE("mps", C10C_DEVICE_TYPE_MPS),
    IS_DEVICE("ipu", C10C_DEVICE_TYPE_IPU),
    IS_DEVICE("vulkan", C10C_DEVICE_TYPE_VULKAN),
    IS_DEVICE("xla", C10C_DEVICE_TYPE_XLA),
    IS_DEVICE("maia", C10C_DEVICE_TYPE_MAIA),
    IS_DEVICE("mtia", C10C_DEVICE_TYPE_MTIA),
    {NULL, NULL, NULL, NULL, NULL},
};

#define M(name, fn) \
  { name, PYC10_FASTCALL(fn), METH_FASTCALL | METH_KEYWORDS, NULL }
#define NOARGS(name, fn, doc) \
  { name, fn, METH_NOARGS, name "()\n\n" doc }

PyMethodDef pyc10_attr_methods[] = {
    {"_setup_attrs", t_setup_attrs, METH_VARARGS | METH_STATIC,
     "_setup_attrs(dtypes_by_code, make_device, strided): the objects the attributes return."},
    NOARGS("data_ptr", t_data_ptr, "The address of the first element."),
    NOARGS("const_data_ptr", t_data_ptr, "The address of the first element (data_ptr())."),
    NOARGS("is_inference", t_is_inference, "Whether the tensor was made in inference mode."),
    NOARGS("is_floating_point", t_is_floating_point, "Whether the dtype is a floating point one."),
    NOARGS("is_complex", t_is_complex, "Whether the dtype is complex."),
    NOARGS("is_signed", t_is_signed, "Whether the dtype is signed."),
    NOARGS("get_device", t_get_device, "-1 on the CPU, else the device index."),
    NOARGS("is_nonzero", t_is_nonzero, "The one element's truth."),
    NOARGS("detach", t_detach, "A new tensor over the same elements (pyc10 has no autograd)."),
    NOARGS("detach_", t_detach_, "self (pyc10 has no autograd)."),
    NOARGS("adjoint", t_adjoint, "The last two dims transposed (real dtypes only in pyc10)."),
    NOARGS("ravel", t_ravel, "The elements as one dim (a view when possible, else a copy)."),
    NOARGS("__reversed__", t_reversed, "The rows in reverse order (a copy, as torch's flip)."),
    NOARGS("__complex__", t_complex, "The one element as a Python complex."),
    {"__bool__", m_bool, METH_NOARGS | METH_COEXIST, "__bool__()\n\nThe one element's truth."},
    {"__int__", m_int, METH_NOARGS | METH_COEXIST, "__int__()\n\nThe one element as an int."},
    {"__float__", m_float, METH_NOARGS | METH_COEXIST,
     "__float__()\n\nThe one element as a float."},
    {"__index__", m_index, METH_NOARGS | METH_COEXIST,
     "__index__()\n\nThe one element of an integer tensor as an int."},
    {"__len__", PYC10_FASTCALL(m_len), METH_FASTCALL | METH_KEYWORDS | METH_COEXIST,
     "__len__()\n\nThe size of the first dimension (TypeError for a 0-dim tensor)."},
    {"__iter__", PYC10_FASTCALL(m_iter), METH_FASTCALL | METH_KEYWORDS | METH_COEXIST,
     "__iter__()\n\nThe views t[0], t[1], ... (TypeError for a 0-dim tensor)."},
    M("is_pinned", t_is_pinned),
    M("is_same_size", t_is_same_size),
    M("is_set_to", t_is_set_to),
    M("requires_grad_", t_requires_grad_),
    M("type_as", t_type_as),
    {NULL, NULL, 0, NULL},
};
