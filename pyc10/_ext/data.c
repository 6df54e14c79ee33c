/* Tensor methods that write or convert data: fill_ and zero_, the conversions (to, float(),
 * half(), ..., cpu(), cuda(), type()) and the new_* factories (new_tensor included) over self's
 * dtype and device.
 *
 * A Python scalar becomes one element of the tensor's dtype here, in C, for the common dtypes
 * (c10's checked_convert: the same overflow errors as torch); other values and dtypes go through
 * pyc10._scalar.scalar_bytes; and back (pyc10_load_element), the one element a Python number for
 * the files that read elements. Conversions allocate with c10c_tensor_empty_like and copy with
 * c10c_tensor_copy_ (c10's casts), returning self where ATen's to_will_alias does.
 */
#include <math.h>
#include <string.h>

#include "common.h"

/* ---- errors ---- */

#define raise_with(cls, ...) pyc10_raise_in(cls, PyExc_RuntimeError, __VA_ARGS__)

#define not_implemented pyc10_not_implemented

/* ---- copy.deepcopy ---- */

/* memo[key] (a new reference), or NULL: absent (no error) or an error. `key in memo` first, as
 * torch's __deepcopy__ asks (its TypeError for a memo that is no container). */
static PyObject *memo_get(PyObject *memo, PyObject *key) {
  int has = PySequence_Contains(memo, key);
  return has > 0 ? PyObject_GetItem(memo, key) : NULL;
}

/* copy's _keep_alive: x joins the list at memo[id(memo)], so that ids stay unique while memo
 * lives. */
static int keep_alive(PyObject *memo, PyObject *x) {
  PyObject *key = PyLong_FromVoidPtr(memo);
  if (key == NULL) return -1;
  PyObject *list = memo_get(memo, key);
  int rc = -1;
  if (list != NULL && PyList_Check(list)) {
    rc = PyList_Append(list, x);
  } else if (list != NULL) {
    PyObject *none = PyObject_CallMethod(list, "append", "O", x);
    rc = none != NULL ? 0 : -1;
    Py_XDECREF(none);
  } else if (!PyErr_Occurred()) {
    list = PyList_New(1);
    if (list != NULL) {
      Py_INCREF(x);
      PyList_SetItem(list, 0, x);
      rc = PyObject_SetItem(memo, key, list);
    }
  }
  Py_XDECREF(list);
  Py_DECREF(key);
  return rc;
}

/* The copy of storage (the storage's Python object) in this deepcopy: made once per memo, as
 * copy.deepcopy(storage, memo) makes it (memo[id(storage)]), so tensors sharing a storage, and the
 * storage itself, copied together share one copy. */
static PyObject *storage_copy(PyObject *memo, PyObject *storage) {
  PyObject *key = PyLong_FromVoidPtr(storage);
  if (key == NULL) return NULL;
  PyObject *copy = memo_get(memo, key);
  if (copy == NULL && !PyErr_Occurred()) {
    copy = PyObject_CallMethod(storage, "clone", NULL); /* torch's UntypedStorage.__deepcopy__ */
    if (copy != NULL && (PyObject_SetItem(memo, key, copy) < 0 || keep_alive(memo, storage) < 0))
      Py_CLEAR(copy);
  } else if (copy != NULL && !PyObject_TypeCheck(copy, Py_TYPE(storage))) {
    PyErr_SetString(PyExc_TypeError,
                    "deepcopy: the memo holds a non-storage for a tensor's storage");
    Py_CLEAR(copy);
  }
  Py_DECREF(key);
  return copy;
}

/* __deepcopy__(memo): torch's Tensor.__deepcopy__ without autograd: the tensor memo already holds
 * for self, else a view with self's sizes, strides, offset and dtype of a copy of self's whole
 * storage (one copy per storage in one deepcopy); a meta tensor is cloned (torch's clone()). */
static PyObject *t_deepcopy(PyObject *self, PyObject *memo) {
  SELF_HANDLE(h);
  PyObject *self_key = PyLong_FromVoidPtr(self);
  if (self_key == NULL) return NULL;
  PyObject *r = memo_get(memo, self_key), *storage = NULL, *copy = NULL;
  if (r != NULL || PyErr_Occurred()) goto done;
  c10c_tensor *out = NULL;
  c10c_status st;
  if (c10c_tensor_device(h).type == C10C_DEVICE_TYPE_META) {
    st = c10c_tensor_clone(&out, h, C10C_MEMORY_FORMAT_PRESERVE);
  } else {
    storage = pyc10_storage_wrap(c10c_tensor_storage(h));
    copy = storage != NULL ? storage_copy(memo, storage) : NULL;
    if (copy == NULL) goto done;
    st = c10c_tensor_new_from_storage(&out, pyc10_storage_of(copy), c10c_tensor_sizes(h),
                                      c10c_tensor_strides(h), c10c_tensor_dim(h),
                                      c10c_tensor_storage_offset(h), c10c_tensor_dtype(h));
  }
  r = pyc10_result(st, &out);
  if (r != NULL && PyObject_SetItem(memo, self_key, r) < 0) Py_CLEAR(r);
done:
  Py_DECREF(self_key);
  Py_XDECREF(storage);
  Py_XDECREF(copy);
  return r;
}

/* ---- Python scalars as one element of a dtype ---- */

/* c10's C++ type name in "value cannot be converted to type ... without overflow". */
static const char *cpp_name(c10c_dtype dt) {
  switch (dt) {
    case C10C_DTYPE_UINT8: return "uint8_t";
    case C10C_DTYPE_INT8: return "int8_t";
    case C10C_DTYPE_INT16: return "int16_t";
    case C10C_DTYPE_INT32: return "int";
    case C10C_DTYPE_INT64: return "int64_t";
    case C10C_DTYPE_FLOAT32: return "float";
    default: return "double";
  }
}

static int overflow(c10c_dtype dt) {
  raise_with(pa_cls.runtime_error, "value cannot be converted to type %s without overflow",
             cpp_name(dt));
  return -1;
}

/* The integer dtypes of the fast path: their range as c10's numeric_limits. */
static bool int_range(c10c_dtype dt, int64_t *lo, int64_t *hi) {
  switch (dt) {
    case C10C_DTYPE_UINT8: *lo = 0, *hi = UINT8_MAX; return true;
    case C10C_DTYPE_INT8: *lo = INT8_MIN, *hi = INT8_MAX; return true;
    case C10C_DTYPE_INT16: *lo = INT16_MIN, *hi = INT16_MAX; return true;
    case C10C_DTYPE_INT32: *lo = INT32_MIN, *hi = INT32_MAX; return true;
    case C10C_DTYPE_INT64: *lo = INT64_MIN, *hi = INT64_MAX; return true;
    default: return false;
  }
}

static void store_int(void *out, c10c_dtype dt, int64_t v) {
  switch (dt) {
    case C10C_DTYPE_UINT8: *(uint8_t *)out = (uint8_t)v; break;
    case C10C_DTYPE_INT8: *(int8_t *)out = (int8_t)v; break;
    case C10C_DTYPE_INT16: *(int16_t *)out = (int16_t)v; break;
    case C10C_DTYPE_INT32: *(int32_t *)out = (int32_t)v; break;
    default: *(int64_t *)out = v; break;
  }
}

/* An int64 into dt (c10's checked_convert from int64: unsigned types take negatives whose
 * magnitude fits, wrapping as C++). 1 if dt is not a fast-path dtype. */
static int encode_int(void *out, c10c_dtype dt, int64_t v) {
  int64_t lo, hi;
  if (dt == C10C_DTYPE_BOOL) {
    *(uint8_t *)out = v != 0;
  } else if (dt == C10C_DTYPE_FLOAT64) {
    *(double *)out = (double)v;
  } else if (dt == C10C_DTYPE_FLOAT32) {
    *(float *)out = (float)v;
  } else if (int_range(dt, &lo, &hi)) {
    bool fits = lo == 0 ? (v <= hi && v >= -hi) : (v >= lo && v <= hi);
    if (!fits) return overflow(dt);
    store_int(out, dt, v);
  } else {
    return 1;
  }
  return 0;
}

/* A double into dt: c10 compares in double against the type's limits, so 2^63 passes into
 * int64 and converts as x86 does (INT64_MIN, as torch); NaN and infinities overflow integers,
 * finite values beyond float's largest overflow float. 1 if dt is not a fast-path dtype. */
static int encode_double(void *out, c10c_dtype dt, double f) {
  int64_t lo, hi;
  if (dt == C10C_DTYPE_BOOL) {
    *(uint8_t *)out = f != 0.0;
  } else if (dt == C10C_DTYPE_FLOAT64) {
    *(double *)out = f;
  } else if (dt == C10C_DTYPE_FLOAT32) {
    if (isfinite(f) && fabs(f) > 3.4028234663852886e38) return overflow(dt);
    *(float *)out = (float)f;
  } else if (int_range(dt, &lo, &hi)) {
    if (!(f >= (double)lo && f <= (double)hi)) return overflow(dt);
    store_int(out, dt, f >= 0x1p63 ? INT64_MIN : (int64_t)f);
  } else {
    return 1;
  }
  return 0;
}

/* The pyc10.dtype object of a code (pyc10._tensor._DTYPES_BY_VALUE), a new reference. */
static PyObject *dtype_object(c10c_dtype dt) {
  static PyObject *by_value;
  if (by_value == NULL) {
    PyObject *mod = PyImport_ImportModule("pyc10._tensor");
    if (mod == NULL) return NULL;
    by_value = PyObject_GetAttrString(mod, "_DTYPES_BY_VALUE");
    Py_DECREF(mod);
    if (by_value == NULL) return NULL;
  }
  PyObject *key = PyLong_FromLong((long)dt);
  if (key == NULL) return NULL;
  PyObject *d = PyDict_GetItemWithError(by_value, key);
  Py_DECREF(key);
  if (d == NULL && !PyErr_Occurred()) PyErr_Format(PyExc_SystemError, "no dtype %d", (int)dt);
  Py_XINCREF(d);
  return d;
}

/* value (a Scalar the parser accepted) as one element of dt in out (16 bytes). */
int pyc10_encode_scalar(unsigned char *out, c10c_dtype dt, PyObject *value) {
  int rc = 1;
  if (PyFloat_CheckExact(value)) {
    rc = encode_double(out, dt, PyFloat_AsDouble(value));
  } else if (PyBool_Check(value)) {
    rc = encode_int(out, dt, value == Py_True);
  } else if (PyLong_CheckExact(value)) {
    int over;
    long long v = PyLong_AsLongLongAndOverflow(value, &over);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (over < 0) { /* torch converts through uint64 first */
      PyErr_SetString(PyExc_OverflowError, "can't convert negative int to unsigned");
      return -1;
    }
    if (over == 0) rc = encode_int(out, dt, (int64_t)v);
  }
  if (rc <= 0) return rc;
  /* the rest (complex, numpy scalars, big ints, other dtypes): pyc10._scalar */
  static PyObject *scalar_bytes;
  if (scalar_bytes == NULL) {
    PyObject *mod = PyImport_ImportModule("pyc10._scalar");
    if (mod == NULL) return -1;
    scalar_bytes = PyObject_GetAttrString(mod, "scalar_bytes");
    Py_DECREF(mod);
    if (scalar_bytes == NULL) return -1;
  }
  PyObject *d = dtype_object(dt);
  if (d == NULL) return -1;
  PyObject *b = PyObject_CallFunctionObjArgs(scalar_bytes, value, d, NULL);
  Py_DECREF(d);
  if (b == NULL) return -1;
  char *bytes;
  Py_ssize_t n;
  if (PyBytes_AsStringAndSize(b, &bytes, &n) < 0) {
    Py_DECREF(b);
    return -1;
  }
  memcpy(out, bytes, (size_t)n < 16 ? (size_t)n : 16);
  Py_DECREF(b);
  return 0;
}

/* ---- fill_, zero_ ---- */

/* The inverse of pyc10_encode_scalar for the dtypes C reads natively (indexing.c's item and
 * tolist, advindex.c, attrs.c). */
PyObject *pyc10_load_element(const void *p, c10c_dtype dt) {
  /* copied out first: the element may sit at any address (a tensor over an unaligned numpy
   * array, as torch accepts), where a typed load is undefined */
  union {
    uint8_t u8;
    int8_t i8;
    int16_t i16;
    uint16_t u16;
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f32;
    double f64;
    float c64[2];
    double c128[2];
  } v;
  size_t size = c10c_dtype_itemsize(dt);
  if (size == 0 || size > sizeof v) return NULL;
  memcpy(&v, p, size);
  switch (dt) {
    case C10C_DTYPE_BOOL: return PyBool_FromLong(v.u8 != 0);
    case C10C_DTYPE_UINT8: return PyLong_FromLong(v.u8);
    case C10C_DTYPE_INT8: return PyLong_FromLong(v.i8);
    case C10C_DTYPE_INT16: return PyLong_FromLong(v.i16);
    case C10C_DTYPE_UINT16: return PyLong_FromLong(v.u16);
    case C10C_DTYPE_INT32: return PyLong_FromLong(v.i32);
    case C10C_DTYPE_UINT32: return PyLong_FromUnsignedLong(v.u32);
    case C10C_DTYPE_INT64: return PyLong_FromLongLong(v.i64);
    case C10C_DTYPE_UINT64: return PyLong_FromUnsignedLongLong(v.u64);
    case C10C_DTYPE_FLOAT32: return PyFloat_FromDouble(v.f32);
    case C10C_DTYPE_FLOAT64: return PyFloat_FromDouble(v.f64);
    case C10C_DTYPE_COMPLEX64: return PyComplex_FromDoubles(v.c64[0], v.c64[1]);
    case C10C_DTYPE_COMPLEX128: return PyComplex_FromDoubles(v.c128[0], v.c128[1]);
    default: return NULL;
  }
}

/* A 0-dim tensor value: converted to dt with copy_'s casts (no overflow check, as torch's
 * fill_(Tensor)) through a 0-dim host tensor. */
static int encode_tensor(unsigned char *out, c10c_dtype dt, PyObject *value) {
  c10c_tensor *v = pyc10_handle(value);
  if (v == NULL) return -1;
  size_t ndim = c10c_tensor_dim(v);
  if (ndim != 0) {
    raise_with(pa_cls.runtime_error,
               "fill_ only supports 0-dimension value tensor but got tensor with %zu dimensions.",
               ndim);
    return -1;
  }
  c10c_tensor *tmp = NULL;
  c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
  c10c_status st = c10c_tensor_empty(&tmp, NULL, 0, dt, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS);
  if (st == C10C_STATUS_OK) st = c10c_tensor_copy_(tmp, v);
  if (st == C10C_STATUS_OK) memcpy(out, c10c_tensor_data(tmp), c10c_dtype_itemsize(dt));
  c10c_tensor_release(tmp);
  if (st != C10C_STATUS_OK) return pyc10_raise(st), -1;
  return 0;
}

/* fill_ (value) or zero_ (value NULL), without the GIL when it writes GIL_FREE_BYTES or more,
 * as torch's bindings release it: other threads run meanwhile (a DataLoader worker's queue
 * feeder, multiprocessing's resource sharer handing a descriptor to a receiver). The tensor
 * (self) and its storage are held for the call; one tensor changed from two threads at once is
 * the caller's race, as in c10. */
enum { GIL_FREE_BYTES = 1 << 16 };
static c10c_status fill_unlocked(c10c_tensor *h, const void *value, bool zero) {
  int64_t n = c10c_tensor_numel(h);
  if (n < GIL_FREE_BYTES / (int64_t)c10c_tensor_itemsize(h))
    return zero ? c10c_tensor_zero_(h) : c10c_tensor_fill_(h, value);
  c10c_storage *held = c10c_storage_retain(c10c_tensor_storage(h));
  c10c_status st;
  Py_BEGIN_ALLOW_THREADS
  st = zero ? c10c_tensor_zero_(h) : c10c_tensor_fill_(h, value);
  Py_END_ALLOW_THREADS
  c10c_storage_release(held);
  return st;
}

static pa_parser fill_p = PA_PARSER("Tensor", "fill_");
static PyObject *t_fill_(PyObject *self, FASTCALL_ARGS) {
  SELF_HANDLE(h);
  c10c_dtype dt = c10c_tensor_dtype(h);
  _Alignas(16) unsigned char data[16] = {0};
  PyObject *value;
  if (nargs == 1 && kwnames == NULL &&
      (PyFloat_CheckExact(args[0]) || PyLong_CheckExact(args[0]))) {
    value = args[0]; /* the common call: the parser would bind it to Scalar value */
  } else {
    PARSE(fill_p, r);
    value = r.obj[0];
    if (r.overload == 0) {
      if (encode_tensor(data, dt, value) < 0) return NULL;
      goto fill;
    }
  }
  if (pyc10_encode_scalar(data, dt, value) < 0) return NULL;
fill:;
  c10c_status st = fill_unlocked(h, data, false);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  Py_INCREF(self);
  return self;
}

static PyObject *t_zero_(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  c10c_status st = fill_unlocked(h, NULL, true);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  Py_INCREF(self);
  return self;
}

/* ---- conversions ---- */

/* A CUDA device without an index is the current one, as torch's to(). */
static int resolve_device(c10c_device *d) {
  if (d->type != C10C_DEVICE_TYPE_CUDA || d->index >= 0) return 0;
  c10c_device_index i;
  c10c_status st = c10c_cuda_current_device(&i);
  if (st != C10C_STATUS_OK) return pyc10_raise(st), -1;
  d->index = i;
  return 0;
}

/* non_blocking of the to()/cuda()/type() call being converted (the GIL is held): the copy is
 * queued on the current stream when the host side is pinned (c10c_tensor_copy_nonblocking_). */
static bool convert_non_blocking;

/* A contiguous CPU tensor of h's sizes over pinned memory (the pinned host allocator). */
static c10c_status pinned_empty(c10c_tensor **out, const c10c_tensor *h, c10c_dtype dt) {
  size_t ndim = c10c_tensor_dim(h);
  int64_t strides[64], nbytes = (int64_t)c10c_dtype_itemsize(dt);
  const int64_t *sizes = c10c_tensor_sizes(h);
  if (ndim > 64) return C10C_STATUS_INVALID_ARGUMENT;
  for (size_t i = ndim; i-- > 0;) {
    strides[i] = nbytes / (int64_t)c10c_dtype_itemsize(dt);
    nbytes *= sizes[i] > 0 ? sizes[i] : 1;
  }
  if (c10c_tensor_numel(h) == 0) nbytes = 0;
  c10c_storage *storage = NULL;
  c10c_status st =
      c10c_storage_new(&storage, nbytes, c10c_cuda_host_allocator(), C10C_DEVICE_TYPE_CPU, false);
  if (st == C10C_STATUS_OK)
    st = c10c_tensor_new_from_storage(out, storage, sizes, strides, ndim, 0, dt);
  c10c_storage_release(storage);
  return st;
}

/* ATen's to_impl: self where to_will_alias (same dtype and device, no copy, and the format
 * preserve or self's suggest_memory_format), else empty_like + copy_. format -1 is None. */
static PyObject *convert(PyObject *self, c10c_tensor *h, c10c_device device, int dtype, bool copy,
                         int format) {
  /* the callers' arguments may have run __index__, which may have swapped self's handle */
  h = ((TensorObject *)self)->h;
  bool nb = convert_non_blocking;
  convert_non_blocking = false;
  if (resolve_device(&device) < 0) return NULL;
  c10c_dtype dt = dtype < 0 ? c10c_tensor_dtype(h) : (c10c_dtype)dtype;
  if (format < 0) format = C10C_MEMORY_FORMAT_PRESERVE;
  if (!copy && dt == c10c_tensor_dtype(h) && c10c_device_equal(device, c10c_tensor_device(h))) {
    bool alias = format == C10C_MEMORY_FORMAT_PRESERVE;
    if (!alias) { /* c10's suggest_memory_format */
      int suggested = c10c_tensor_is_strides_like(h, C10C_MEMORY_FORMAT_CHANNELS_LAST)
                          ? C10C_MEMORY_FORMAT_CHANNELS_LAST
                      : c10c_tensor_is_strides_like(h, C10C_MEMORY_FORMAT_CHANNELS_LAST_3D)
                          ? C10C_MEMORY_FORMAT_CHANNELS_LAST_3D
                          : C10C_MEMORY_FORMAT_CONTIGUOUS;
      alias = suggested == format;
    }
    if (alias) {
      Py_INCREF(self);
      return self;
    }
  }
  c10c_tensor *out = NULL;
  c10c_status st;
  if (nb && c10c_tensor_device(h).type == C10C_DEVICE_TYPE_CUDA &&
      device.type == C10C_DEVICE_TYPE_CPU)
    st = pinned_empty(&out, h, dt); /* ATen's _to_copy: pin_out for a non-blocking D2H copy */
  else
    st = c10c_tensor_empty_like(&out, h, dt, device, (c10c_memory_format)format);
  if (st == C10C_STATUS_OK) st = c10c_tensor_copy_nonblocking_(out, h, nb);
  if (st != C10C_STATUS_OK) {
    c10c_tensor_release(out);
    return pyc10_raise(st);
  }
  return pyc10_wrap(out);
}

/* The dtype of a Python number bound to to(Tensor tensor): torch's scalar_to_tensor. */
static int number_dtype(PyObject *o) {
  if (PyBool_Check(o)) return C10C_DTYPE_BOOL;
  if (PyComplex_Check(o)) return C10C_DTYPE_COMPLEX128;
  if (PyFloat_Check(o)) return C10C_DTYPE_FLOAT64;
  if (PyLong_Check(o)) return C10C_DTYPE_INT64;
  return -1;
}

static pa_parser to_p = PA_PARSER("Tensor", "to");
static PyObject *t_to(PyObject *self, FASTCALL_ARGS) {
  SELF_HANDLE(h);
  c10c_device device = c10c_tensor_device(h);
  if (nargs == 1 && kwnames == NULL && Py_TYPE(args[0]) == pa_cls.dtype) {
    /* the common call to(dtype): the parser's second overload */
    PyObject *v = PyObject_GetAttr(args[0], pa_cls.dtype_value);
    if (v == NULL) return NULL;
    long code = PyLong_AsLong(v);
    Py_DECREF(v);
    if (code == -1 && PyErr_Occurred()) return NULL;
    return convert(self, h, device, (int)code, false, -1);
  }
  PARSE(to_p, r);
  int dtype = -1, format;
  bool copy, has_device = false;
  int first = r.overload == 0 ? 2 : 1; /* non_blocking's index */
  bool non_blocking;
  if (pa_bool(&r, first, &non_blocking) < 0 || pa_bool(&r, first + 1, &copy) < 0 ||
      pa_memory_format(&r, first + 2, &format) < 0)
    return NULL;
  if (r.overload == 0) {
    c10c_device d;
    if (pa_device(&r, 0, &d, &has_device) < 0 || pa_dtype(&r, 1, &dtype) < 0) return NULL;
    if (has_device) device = d;
  } else if (r.overload == 1) {
    if (pa_dtype(&r, 0, &dtype) < 0) return NULL;
  } else if (PyObject_TypeCheck(r.obj[0], pa_cls.tensor)) {
    c10c_tensor *o = pyc10_handle(r.obj[0]);
    if (o == NULL) return NULL;
    device = c10c_tensor_device(o);
    dtype = (int)c10c_tensor_dtype(o);
  } else { /* a number, taken as a 0-dim CPU tensor */
    device.type = C10C_DEVICE_TYPE_CPU;
    device.index = -1;
    dtype = number_dtype(r.obj[0]);
    if (dtype < 0) /* numpy scalars: torch takes their dtype */
      return not_implemented("to(): a numpy scalar as the tensor argument is not supported yet");
  }
  convert_non_blocking = non_blocking;
  return convert(self, h, device, dtype, copy, format);
}

/* float(), double(), ...: to(dtype) with (*, MemoryFormat? memory_format=None). */
static PyObject *to_dtype(PyObject *self, pa_parser *p, c10c_dtype dt, FASTCALL_ARGS) {
  SELF_HANDLE(h);
  int format = -1;
  if (nargs != 0 || kwnames != NULL) {
    pa_args r;
    if (pa_parse(p, args, nargs, kwnames, &r) < 0 || pa_memory_format(&r, 0, &format) < 0)
      return NULL;
  }
  SELF_HANDLE_AGAIN(h);
  return convert(self, h, c10c_tensor_device(h), (int)dt, false, format);
}

#define CONVERSION(name, code)                                    \
  static pa_parser name##_p = PA_PARSER("Tensor", #name);         \
  static PyObject *t_##name(PyObject *self, FASTCALL_ARGS) {      \
    return to_dtype(self, &name##_p, code, args, nargs, kwnames); \
  }
CONVERSION(float, C10C_DTYPE_FLOAT32)
CONVERSION(double, C10C_DTYPE_FLOAT64)
CONVERSION(half, C10C_DTYPE_FLOAT16)
CONVERSION(bfloat16, C10C_DTYPE_BFLOAT16)
CONVERSION(int, C10C_DTYPE_INT32)
CONVERSION(long, C10C_DTYPE_INT64)
CONVERSION(short, C10C_DTYPE_INT16)
CONVERSION(char, C10C_DTYPE_INT8)
CONVERSION(byte, C10C_DTYPE_UINT8)
CONVERSION(bool, C10C_DTYPE_BOOL)
CONVERSION(cfloat, C10C_DTYPE_COMPLEX64)
CONVERSION(cdouble, C10C_DTYPE_COMPLEX128)

static pa_parser cpu_p = PA_PARSER("Tensor", "cpu");
static PyObject *t_cpu(PyObject *self, FASTCALL_ARGS) {
  SELF_HANDLE(h);
  int format = -1;
  if (nargs != 0 || kwnames != NULL) {
    PARSE(cpu_p, r);
    if (pa_memory_format(&r, 0, &format) < 0) return NULL;
  }
  c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
  return convert(self, h, cpu, -1, false, format);
}

static pa_parser cuda_p = PA_PARSER("Tensor", "cuda");
static PyObject *t_cuda(PyObject *self, FASTCALL_ARGS) {
  SELF_HANDLE(h);
  PARSE(cuda_p, r);
  c10c_device device = {C10C_DEVICE_TYPE_CUDA, -1};
  bool has;
  int format;
  if (pa_device(&r, 0, &device, &has) < 0 || pa_memory_format(&r, 2, &format) < 0) return NULL;
  if (!has) {
    device.type = C10C_DEVICE_TYPE_CUDA;
    device.index = -1;
  } else if (device.type != C10C_DEVICE_TYPE_CUDA) {
    return raise_with(pa_cls.runtime_error, "Invalid device, must be cuda device");
  }
  bool non_blocking;
  if (pa_bool(&r, 1, &non_blocking) < 0) return NULL;
  convert_non_blocking = non_blocking;
  return convert(self, h, device, -1, false, format);
}

/* "torch.FloatTensor", "torch.cuda.LongTensor": torch's legacy type name of self. */
static PyObject *type_name(c10c_tensor *h) {
  c10c_device d = c10c_tensor_device(h);
  const char *name = c10c_dtype_c10_name(c10c_tensor_dtype(h));
  if (d.type == C10C_DEVICE_TYPE_CPU) return PyUnicode_FromFormat("torch.%sTensor", name);
  return PyUnicode_FromFormat("torch.%s.%sTensor", c10c_device_type_name(d.type, true), name);
}

/* torch's options_from_string: "torch[.cuda].<c10 name>Tensor" or "torch[.cuda].Tensor" (the
 * default dtype, float32). -1 with ValueError "invalid type: '...'" for others. */
static int parse_type_name(PyObject *str, int *dtype, c10c_device *device) {
  const char *s = PyUnicode_AsUTF8AndSize(str, NULL);
  if (s == NULL) return -1;
  const char *rest = NULL;
  device->index = -1;
  if (strncmp(s, "torch.cuda.", 11) == 0) {
    rest = s + 11;
    device->type = C10C_DEVICE_TYPE_CUDA;
  } else if (strncmp(s, "torch.", 6) == 0) {
    rest = s + 6;
    device->type = C10C_DEVICE_TYPE_CPU;
  }
  size_t n = rest != NULL ? strlen(rest) : 0;
  if (rest != NULL && n >= 6 && strcmp(rest + n - 6, "Tensor") == 0) {
    n -= 6;
    if (n == 0) { /* 'torch.Tensor': the default dtype */
      *dtype = pyc10_default_dtype;
      return 0;
    }
    for (int t = 0; t < C10C_DTYPE_UNDEFINED; t++) {
      const char *name = c10c_dtype_c10_name((c10c_dtype)t);
      if (strlen(name) == n && strncmp(name, rest, n) == 0) {
        *dtype = t;
        return 0;
      }
    }
  }
  raise_with(pa_cls.value_error, "invalid type: '%U'", str);
  return -1;
}

static pa_parser type_p = PA_PARSER("Tensor", "type");
static PyObject *t_type(PyObject *self, FASTCALL_ARGS) {
  SELF_HANDLE(h);
  if (nargs == 0 && kwnames == NULL) return type_name(h);
  PARSE(type_p, r);
  PyObject *o = r.obj[0];
  if (o == NULL || o == Py_None) return type_name(h);
  int format;
  bool non_blocking;
  if (pa_memory_format(&r, 2, &format) < 0 || pa_bool(&r, 1, &non_blocking) < 0) return NULL;
  c10c_device device = c10c_tensor_device(h);
  int dtype;
  if (PyObject_TypeCheck(o, pa_cls.dtype)) {
    if (pa_dtype(&r, 0, &dtype) < 0) return NULL;
    convert_non_blocking = non_blocking;
    return convert(self, h, device, dtype, false, format);
  }
  PyObject *name;
  if (PyUnicode_Check(o)) {
    name = o;
    Py_INCREF(name);
  } else if (PyType_Check(o)) { /* torch: the class's module-qualified name */
    PyObject *mod = PyObject_GetAttrString(o, "__module__");
    PyObject *qual = mod != NULL ? PyObject_GetAttrString(o, "__name__") : NULL;
    if (qual == NULL) {
      Py_XDECREF(mod);
      return NULL;
    }
    name = PyUnicode_Check(mod) && PyUnicode_CompareWithASCIIString(mod, "builtins") != 0
               ? PyUnicode_FromFormat("%U.%U", mod, qual)
               : (Py_INCREF(qual), qual);
    Py_DECREF(mod);
    Py_DECREF(qual);
    if (name == NULL) return NULL;
  } else {
    return raise_with(pa_cls.type_error, "dtype must be a type, str, or dtype object");
  }
  c10c_device target;
  int rc = parse_type_name(name, &dtype, &target);
  Py_DECREF(name);
  if (rc < 0) return NULL;
  if (target.type != device.type) device = target; /* torch keeps the index on the same type */
  convert_non_blocking = non_blocking;
  return convert(self, h, device, dtype, false, format);
}

/* ---- new_* ---- */

/* The keyword options of the new_* factories: dtype and device default to self's; a layout
 * other than strided, pinned memory and autograd are refused (pyc10 has none of them yet). */
static int new_options(const pa_args *r, int first, c10c_tensor *h, c10c_dtype *dt,
                       c10c_device *device) {
  *dt = c10c_tensor_dtype(h);
  *device = c10c_tensor_device(h);
  return pyc10_tensor_options(r, first, dt, device);
}

/* new_empty, new_zeros, new_ones, new_full: c10c_tensor_full (or empty) with value. */
static PyObject *new_filled(PyObject *self, pa_parser *p, int kind, FASTCALL_ARGS) {
  SELF_HANDLE(h);
  pa_args r;
  if (pa_parse(p, args, nargs, kwnames, &r) < 0) return NULL;
  int64_t sizes[PA_MAX_DIMS];
  Py_ssize_t n;
  if (pa_intlist(&r, 0, sizes, PA_MAX_DIMS, &n) < 0) return NULL;
  int first = kind == 3 ? 2 : 1; /* new_full has fill_value at 1 */
  c10c_dtype dt;
  c10c_device device;
  if (new_options(&r, first, SELF_HANDLE_AGAIN(h), &dt, &device) < 0) return NULL;
  c10c_tensor *out = NULL;
  c10c_status st;
  if (kind == 0) {
    st = c10c_tensor_empty(&out, sizes, (size_t)n, dt, device, C10C_MEMORY_FORMAT_CONTIGUOUS);
  } else {
    _Alignas(16) unsigned char data[16] = {0};
    const void *value = NULL;
    if (kind == 2 && pyc10_encode_scalar(data, dt, Py_True) < 0) return NULL;
    if (kind == 3 && pyc10_encode_scalar(data, dt, r.obj[1]) < 0) return NULL;
    if (kind >= 2) value = data;
    st = c10c_tensor_full(&out, sizes, (size_t)n, dt, device, C10C_MEMORY_FORMAT_CONTIGUOUS, value);
  }
  return pyc10_result(st, &out);
}

static pa_parser new_empty_p = PA_PARSER("Tensor", "new_empty");
static pa_parser new_zeros_p = PA_PARSER("Tensor", "new_zeros");
static pa_parser new_ones_p = PA_PARSER("Tensor", "new_ones");
static pa_parser new_full_p = PA_PARSER("Tensor", "new_full");
static PyObject *t_new_empty(PyObject *self, FASTCALL_ARGS) {
  return new_filled(self, &new_empty_p, 0, args, nargs, kwnames);
}
static PyObject *t_new_zeros(PyObject *self, FASTCALL_ARGS) {
  return new_filled(self, &new_zeros_p, 1, args, nargs, kwnames);
}
static PyObject *t_new_ones(PyObject *self, FASTCALL_ARGS) {
  return new_filled(self, &new_ones_p, 2, args, nargs, kwnames);
}
static PyObject *t_new_full(PyObject *self, FASTCALL_ARGS) {
  return new_filled(self, &new_full_p, 3, args, nargs, kwnames);
}

static pa_parser new_empty_strided_p = PA_PARSER("Tensor", "new_empty_strided");
static PyObject *t_new_empty_strided(PyObject *self, FASTCALL_ARGS) {
  SELF_HANDLE(h);
  PARSE(new_empty_strided_p, r);
  int64_t sizes[PA_MAX_DIMS], strides[PA_MAX_DIMS];
  Py_ssize_t n, m;
  if (pa_intlist(&r, 0, sizes, PA_MAX_DIMS, &n) < 0 ||
      pa_intlist(&r, 1, strides, PA_MAX_DIMS, &m) < 0)
    return NULL;
  c10c_dtype dt;
  c10c_device device;
  if (new_options(&r, 2, SELF_HANDLE_AGAIN(h), &dt, &device) < 0) return NULL;
  if (n != m) {
    return raise_with(pa_cls.runtime_error,
                      "dimensionality of sizes (%zd) must match dimensionality of strides (%zd)", n,
                      m);
  }
  c10c_tensor *out = NULL;
  c10c_status st = c10c_tensor_empty_strided(&out, sizes, strides, (size_t)n, dt, device);
  return pyc10_result(st, &out);
}

/* new_tensor(data): a copy of data with self's dtype and device unless given (torch's
 * tensor_new.cpp new_tensor: no type inference). A tensor is copied here, with torch's warning;
 * every other kind of data goes through pyc10.tensor (factories.c). */
static pa_parser new_tensor_p = PA_PARSER("Tensor", "new_tensor");
static PyObject *t_new_tensor(PyObject *self, FASTCALL_ARGS) {
  SELF_HANDLE(h);
  PARSE(new_tensor_p, r);
  int dtype;
  c10c_device device;
  bool has_device, grad;
  if (pa_dtype(&r, 1, &dtype) < 0 || pa_device(&r, 2, &device, &has_device) < 0 ||
      pa_bool(&r, 3, &grad) < 0)
    return NULL;
  SELF_HANDLE_AGAIN(h);
  c10c_dtype dt = dtype < 0 ? c10c_tensor_dtype(h) : (c10c_dtype)dtype;
  if (!has_device) device = c10c_tensor_device(h);
  PyObject *data = r.obj[0], *out;
  if (PyObject_TypeCheck(data, pa_cls.tensor)) {
    if (PyErr_WarnEx(PyExc_UserWarning,
                     "To copy construct from a tensor, it is recommended to use "
                     "sourceTensor.detach().clone() or "
                     "sourceTensor.detach().clone().requires_grad_(True), rather than "
                     "tensor.new_tensor(sourceTensor).",
                     1) < 0)
      return NULL;
    c10c_tensor *src = pyc10_handle(data), *copy = NULL;
    c10c_status st = c10c_tensor_empty_like(&copy, src, dt, device, C10C_MEMORY_FORMAT_PRESERVE);
    if (st == C10C_STATUS_OK) {
      st = c10c_tensor_copy_(copy, src);
      if (st != C10C_STATUS_OK) {
        pyc10_release_tensor(copy);
        copy = NULL;
      }
    }
    out = pyc10_result(st, &copy);
  } else {
    static PyObject *module, *name, *kwnames_dd;
    if (module == NULL && (module = PyImport_ImportModule("pyc10._ctensor")) == NULL) return NULL;
    if (name == NULL && (name = PyUnicode_InternFromString("tensor")) == NULL) return NULL;
    if (kwnames_dd == NULL && (kwnames_dd = Py_BuildValue("(ss)", "dtype", "device")) == NULL)
      return NULL;
    PyObject *dtype_obj = dtype < 0 ? PyObject_GetAttrString(self, "dtype") : r.obj[1];
    PyObject *device_obj = has_device ? r.obj[2] : PyObject_GetAttrString(self, "device");
    out = NULL;
    if (dtype_obj != NULL && device_obj != NULL) {
      PyObject *call[] = {module, data, dtype_obj, device_obj}; /* module.tensor(data, ...) */
      out = PyObject_VectorcallMethod(name, call, 2, kwnames_dd);
    }
    if (dtype < 0) Py_XDECREF(dtype_obj);
    if (!has_device) Py_XDECREF(device_obj);
  }
  if (out != NULL && grad) {
    /* torch sets requires_grad on the result: its dtype check first */
    c10c_dtype got = c10c_tensor_dtype(pyc10_handle(out));
    Py_DECREF(out);
    if (!c10c_dtype_is_floating_point(got) && !c10c_dtype_is_complex(got))
      return raise_with(pa_cls.runtime_error,
                        "Only Tensors of floating point and complex dtype can require gradients");
    return not_implemented("requires_grad=True: pyc10 has no autograd");
  }
  return out;
}

#define M(name, fn) \
  { name, PYC10_FASTCALL(fn), METH_FASTCALL | METH_KEYWORDS, NULL }
PyMethodDef pyc10_data_methods[] = {
    {"__deepcopy__", t_deepcopy, METH_O,
     "__deepcopy__(memo) -> Tensor\n\ncopy.deepcopy(t): a tensor of t's sizes, strides, offset "
     "and dtype over a copy of t's storage, one copy per storage in one deepcopy (as torch)."},
    {"zero_", t_zero_, METH_NOARGS, "zero_() -> Tensor\n\nEvery element set to zero; self."},
    M("fill_", t_fill_),
    M("to", t_to),
    M("float", t_float),
    M("double", t_double),
    M("half", t_half),
    M("bfloat16", t_bfloat16),
    M("int", t_int),
    M("long", t_long),
    M("short", t_short),
    M("char", t_char),
    M("byte", t_byte),
    M("bool", t_bool),
    M("cfloat", t_cfloat),
    M("cdouble", t_cdouble),
    M("cpu", t_cpu),
    M("cuda", t_cuda),
    M("type", t_type),
    M("new_empty", t_new_empty),
    M("new_zeros", t_new_zeros),
    M("new_ones", t_new_ones),
    M("new_full", t_new_full),
    M("new_empty_strided", t_new_empty_strided),
    M("new_tensor", t_new_tensor),
    {NULL, NULL, 0, NULL},
};

/* self.to(device, dtype) without a copy where it can alias (attrs.c's type_as). */
PyObject *pyc10_to(PyObject *self, c10c_device device, c10c_dtype dtype) {
  SELF_HANDLE(h);
  return convert(self, h, device, (int)dtype, false, -1);
}
