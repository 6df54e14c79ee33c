/* numpy interop: Tensor.numpy() and __array__ (a tensor's memory seen by numpy), and
 * pyc10.from_numpy (an array's memory seen as a tensor), with torch's errors.
 *
 * numpy() and __array__ make their arrays through numpy's C API table (below), as torch's numpy()
 * does; the array's base is the tensor, which keeps the memory alive. (torch's base is a new,
 * detached tensor object over the same storage, which it also makes unresizable, so that set_,
 * .data = and resize_ on the tensor leave the array's memory alone; here an array made before
 * those on its tensor may lose its memory, as before: a new tensor object per array would cost
 * about 70 ns a call, a third of numpy() in all, and libc10c has no unresizable switch.)
 * Where the table cannot be had, numpy.asarray reads the array interface from a stand-in object.
 * The tensor itself has neither __array_struct__ nor __array_interface__ (torch's has neither):
 * numpy.asarray(t) looks for them before __array__ and would take its slower way through them.
 * from_numpy reads an array's fields directly (checked once against __array_interface__) and
 * holds the array until the tensor's storage goes.
 */
#include <stdlib.h>
#include <string.h>

#include "common.h"

/* The most dimensions from_numpy reads: numpy's own limit (NPY_MAXDIMS: 64 in numpy 2, 32 in
 * numpy 1), so that its reading fits a small stack frame. */
enum { MAX_DIMS = 64 };

#define raise_with(cls, ...) pyc10_raise_in(cls, PyExc_RuntimeError, __VA_ARGS__)

/* ---- tensor to numpy ---- */

static PyObject *numpy_attr(const char *name) {
  static PyObject *np;
  if (np == NULL) {
    np = PyImport_ImportModule("numpy");
    if (np == NULL) return NULL;
  }
  return PyObject_GetAttrString(np, name);
}

/* numpy's type string of dt's elements (a borrowed, interned string), or NULL without an error. */
static PyObject *typestr(c10c_dtype dt) {
  static PyObject *cache[64];
  const char *s;
  switch (dt) {
    case C10C_DTYPE_BOOL: s = "|b1"; break;
    case C10C_DTYPE_UINT8: s = "|u1"; break;
    case C10C_DTYPE_INT8: s = "|i1"; break;
    case C10C_DTYPE_INT16: s = "<i2"; break;
    case C10C_DTYPE_UINT16: s = "<u2"; break;
    case C10C_DTYPE_INT32: s = "<i4"; break;
    case C10C_DTYPE_UINT32: s = "<u4"; break;
    case C10C_DTYPE_INT64: s = "<i8"; break;
    case C10C_DTYPE_UINT64: s = "<u8"; break;
    case C10C_DTYPE_FLOAT16: s = "<f2"; break;
    case C10C_DTYPE_FLOAT32: s = "<f4"; break;
    case C10C_DTYPE_FLOAT64: s = "<f8"; break;
    case C10C_DTYPE_COMPLEX64: s = "<c8"; break;
    case C10C_DTYPE_COMPLEX128: s = "<c16"; break;
    default: return NULL;
  }
  if (cache[dt] == NULL) cache[dt] = PyUnicode_InternFromString(s);
  return cache[dt];
}

/* The checks before numpy may see a tensor's memory: a CPU tensor, of a dtype numpy has, whose
 * storage still holds its elements. Its type string in *ts and its data (NULL for none) in *p. */
static int numpy_checks(PyObject *self, c10c_tensor *h, PyObject **ts, void **p) {
  if (c10c_tensor_device(h).type != C10C_DEVICE_TYPE_CPU) {
    PyObject *dev = PyObject_GetAttrString(self, "device");
    if (dev == NULL) return -1;
    TYPE_ERROR(
        "can't convert %S device type tensor to numpy. Use Tensor.cpu() to copy the "
        "tensor to host memory first.",
        dev);
    Py_DECREF(dev);
    return -1;
  }
  c10c_dtype dt = c10c_tensor_dtype(h);
  *ts = typestr(dt);
  if (*ts == NULL) {
    if (!PyErr_Occurred()) TYPE_ERROR("Got unsupported ScalarType %s", c10c_dtype_c10_name(dt));
    return -1;
  }
  *p = c10c_tensor_data(h);
  if (*p == NULL && c10c_tensor_numel(h) > 0) return pyc10_raise(c10c_last_error_status()), -1;
  return 0;
}

/* numpy's array interface (version 3) of a CPU tensor's memory (numpy_checks passed: type
 * string ts, data p), a new dict. */
static PyObject *interface_dict(c10c_tensor *h, PyObject *ts, void *p) {
  size_t ndim = c10c_tensor_dim(h), item = c10c_tensor_itemsize(h);
  /* no elements: strides 0, as numpy gives torch's numpy() for them */
  if (c10c_tensor_numel(h) == 0) item = 0;
  const int64_t *sizes = c10c_tensor_sizes(h), *strides = c10c_tensor_strides(h);
  PyObject *shape = PyTuple_New((Py_ssize_t)ndim), *st = PyTuple_New((Py_ssize_t)ndim);
  PyObject *data = NULL, *d = NULL;
  if (shape == NULL || st == NULL) goto done;
  for (size_t i = 0; i < ndim; i++) {
    PyObject *a = PyLong_FromLongLong((long long)sizes[i]);
    PyObject *b = PyLong_FromLongLong((long long)(strides[i] * (int64_t)item));
    if (a == NULL || b == NULL) {
      Py_XDECREF(a);
      Py_XDECREF(b);
      goto done;
    }
    PyTuple_SetItem(shape, (Py_ssize_t)i, a);
    PyTuple_SetItem(st, (Py_ssize_t)i, b);
  }
  /* numpy refuses a NULL pointer even for no elements; any aligned address will do */
  data = Py_BuildValue("(NO)", PyLong_FromVoidPtr(p != NULL ? p : (void *)(uintptr_t)16),
                       c10c_tensor_is_read_only(h) ? Py_True : Py_False);
  if (data == NULL) goto done;
  d = Py_BuildValue("{s:i,s:O,s:O,s:O,s:O}", "version", 3, "shape", shape, "typestr", ts, "strides",
                    st, "data", data);
done:
  Py_XDECREF(shape);
  Py_XDECREF(st);
  Py_XDECREF(data);
  return d;
}

/* ---- numpy's C API ----
 *
 * numpy exports its C API as a table of function and type pointers: the _ARRAY_API capsule of
 * numpy._core._multiarray_umath (numpy.core._multiarray_umath in numpy 1), the table numpy's own
 * import_array() reads. The slots keep their index across releases (numpy's
 * numpy/_core/code_generators/numpy_api.py fixes them; numpy 2.4's __multiarray_api.h has these
 * indices, as numpy 1's). pyc10 is built for the limited API without numpy's headers, so the few
 * slots it calls are named here, and arrays are made and given their base only through them. */
typedef Py_intptr_t npy_intp;
enum {
  API_C_VERSION = 0,         /* unsigned int PyArray_GetNDArrayCVersion(void) */
  API_ARRAY_TYPE = 2,        /* PyTypeObject PyArray_Type */
  API_DESCR_FROM_TYPE = 45,  /* PyArray_Descr *PyArray_DescrFromType(int) */
  API_NEW_FROM_DESCR = 94,   /* PyArray_NewFromDescr, below */
  API_FEATURE_VERSION = 211, /* unsigned int PyArray_GetNDArrayCFeatureVersion(void) */
  API_SET_BASE_OBJECT = 282, /* int PyArray_SetBaseObject(PyArrayObject *, PyObject *) */
  NPY_WRITEABLE = 0x400,     /* NPY_ARRAY_WRITEABLE */
  API_MAX_DIMS = 64,         /* numpy 2's NPY_MAXDIMS (numpy 1's 32 is checked by numpy) */
};
/* PyArray_NewFromDescr(subtype, descr (stolen), nd, dims, strides, data, flags, obj): an array
 * over data (numpy works out contiguity and alignment itself); PyArray_SetBaseObject steals its
 * object, also on failure. */
typedef PyObject *(*new_from_descr_fn)(PyTypeObject *, PyObject *, int, const npy_intp *,
                                       const npy_intp *, void *, int, PyObject *);
typedef int (*set_base_fn)(PyObject *, PyObject *);
typedef PyObject *(*descr_from_type_fn)(int);
typedef unsigned int (*version_fn)(void);

/* numpy's type number of dt's elements as numpy's own dtypes give them (np.dtype("int64").num is
 * NPY_LONG where a C long has 64 bits), or -1 for a dtype numpy has not. */
static int type_num(c10c_dtype dt) {
  switch (dt) {
    case C10C_DTYPE_BOOL: return 0;
    case C10C_DTYPE_INT8: return 1;
    case C10C_DTYPE_UINT8: return 2;
    case C10C_DTYPE_INT16: return 3;
    case C10C_DTYPE_UINT16: return 4;
    case C10C_DTYPE_INT32: return 5;
    case C10C_DTYPE_UINT32: return 6;
    case C10C_DTYPE_INT64: return sizeof(long) == 8 ? 7 : 9;
    case C10C_DTYPE_UINT64: return sizeof(long) == 8 ? 8 : 10;
    case C10C_DTYPE_FLOAT32: return 11;
    case C10C_DTYPE_FLOAT64: return 12;
    case C10C_DTYPE_COMPLEX64: return 14;
    case C10C_DTYPE_COMPLEX128: return 15;
    case C10C_DTYPE_FLOAT16: return 23;
    default: return -1;
  }
}

static void **api;           /* numpy's table, or NULL (not loaded yet, or not to be had) */
static bool api_tried;       /* loaded once: numpy_api() answers from api afterwards */
static PyObject *descrs[24]; /* numpy's dtypes by type number, made once and kept */

/* An array over n elements at data made through the table; NULL with an error. */
static PyObject *api_new(void **table, int num, int nd, const npy_intp *dims,
                         const npy_intp *strides, void *data, bool writeable) {
  PyObject *descr = ((descr_from_type_fn)table[API_DESCR_FROM_TYPE])(num);
  if (descr == NULL) return NULL;
  return ((new_from_descr_fn)table[API_NEW_FROM_DESCR])((PyTypeObject *)table[API_ARRAY_TYPE],
                                                        descr, nd, dims, strides, data,
                                                        writeable ? NPY_WRITEABLE : 0, NULL);
}

/* Whether an array the table makes is what numpy says it is: a float32 (2, 3) array over a
 * buffer with byte strides (12, 4), read-only, whose base is the object given. */
static bool api_agrees(void **table) {
  static float buf[6];
  npy_intp dims[2] = {2, 3}, strides[2] = {12, 4};
  PyObject *a = api_new(table, 11, 2, dims, strides, buf, false);
  if (a == NULL) return false;
  PyObject *marker = PyList_New(0), *ai = NULL, *st = NULL, *base = NULL, *want = NULL;
  bool ok = false;
  if (marker == NULL) goto done;
  Py_INCREF(marker);
  if (((set_base_fn)table[API_SET_BASE_OBJECT])(a, marker) < 0) goto done;
  ai = PyObject_GetAttrString(a, "__array_interface__");
  st = PyObject_GetAttrString(a, "strides");
  base = PyObject_GetAttrString(a, "base");
  want = Py_BuildValue("((ii)(ii)(NO)s)", 2, 3, 12, 4, PyLong_FromVoidPtr(buf), Py_True, "<f4");
  if (ai == NULL || st == NULL || base == NULL || want == NULL || !PyDict_Check(ai)) goto done;
  PyObject *shape = PyDict_GetItemString(ai, "shape"), *data = PyDict_GetItemString(ai, "data"),
           *ts = PyDict_GetItemString(ai, "typestr");
  ok = Py_IS_TYPE(a, (PyTypeObject *)table[API_ARRAY_TYPE]) && base == marker && shape != NULL &&
       data != NULL && ts != NULL &&
       PyObject_RichCompareBool(shape, PyTuple_GetItem(want, 0), Py_EQ) == 1 &&
       PyObject_RichCompareBool(st, PyTuple_GetItem(want, 1), Py_EQ) == 1 &&
       PyObject_RichCompareBool(data, PyTuple_GetItem(want, 2), Py_EQ) == 1 &&
       PyObject_RichCompareBool(ts, PyTuple_GetItem(want, 3), Py_EQ) == 1;
done:
  Py_DECREF(a);
  Py_XDECREF(marker);
  Py_XDECREF(ai);
  Py_XDECREF(st);
  Py_XDECREF(base);
  Py_XDECREF(want);
  return ok;
}

/* numpy's table, loaded on first use; NULL without an error where it cannot be had (numpy
 * missing, a C API version whose slots may differ, or arrays that disagree with the probe): the
 * callers then go through numpy.asarray and the array interface. */
static void **numpy_api(void) {
  if (api_tried) return api;
  api_tried = true;
  PyObject *mod = PyImport_ImportModule("numpy._core._multiarray_umath");
  if (mod == NULL) {
    PyErr_Clear();
    mod = PyImport_ImportModule("numpy.core._multiarray_umath");
  }
  PyObject *capsule = mod != NULL ? PyObject_GetAttrString(mod, "_ARRAY_API") : NULL;
  void **table = NULL;
  if (capsule != NULL && PyCapsule_CheckExact(capsule))
    table = PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule));
  if (table != NULL) {
    /* numpy 1's ABI (with PyArray_SetBaseObject, numpy >= 1.7) or numpy 2's */
    unsigned int abi = ((version_fn)table[API_C_VERSION])();
    bool known =
        abi >> 24 == 2 || (abi == 0x01000009 && ((version_fn)table[API_FEATURE_VERSION])() >= 7);
    if (known && api_agrees(table)) {
      api = table;
      Py_INCREF(capsule); /* the table lives as long as its capsule: kept for the process */
    }
  }
  PyErr_Clear();
  Py_XDECREF(capsule);
  Py_XDECREF(mod);
  return api;
}

void **pyc10_numpy_table(void) { return numpy_api(); }

/* An array over the memory of a CPU tensor self (numpy_checks passed: h its tensor, data p, numpy
 * type number num) made through numpy's table; its base is self. NULL with an error; Py_None (not
 * a new reference) where the table cannot serve (the caller takes the slow path). */
static PyObject *api_array(void **table, PyObject *self, c10c_tensor *h, int num, void *p) {
  size_t nd = c10c_tensor_dim(h), item = c10c_tensor_itemsize(h);
  if (nd > API_MAX_DIMS) return Py_None;
  npy_intp dims[API_MAX_DIMS], strides[API_MAX_DIMS];
  const int64_t *sizes = c10c_tensor_sizes(h), *st = c10c_tensor_strides(h);
  for (size_t i = 0; i < nd; i++) {
    dims[i] = (npy_intp)sizes[i];
    strides[i] = (npy_intp)(st[i] * (int64_t)item);
  }
  PyObject *descr = descrs[num];
  if (descr == NULL) {
    descr = descrs[num] = ((descr_from_type_fn)table[API_DESCR_FROM_TYPE])(num);
    if (descr == NULL) return NULL;
  }
  Py_INCREF(descr);
  /* no elements: numpy's own empty memory, as torch's numpy() passes numpy no data (numpy's
   * strides are then all 0, and 0 asks for numpy's default flags) */
  bool empty = c10c_tensor_numel(h) == 0, read_only = c10c_tensor_is_read_only(h);
  PyObject *a = ((new_from_descr_fn)table[API_NEW_FROM_DESCR])(
      (PyTypeObject *)table[API_ARRAY_TYPE], descr, (int)nd, dims, strides, empty ? NULL : p,
      empty || read_only ? 0 : NPY_WRITEABLE, NULL);
  if (a == NULL) return NULL;
  if (empty && read_only) {
    PyObject *r = PyObject_CallMethod(a, "setflags", "(O)", Py_False);
    if (r == NULL) {
      Py_DECREF(a);
      return NULL;
    }
    Py_DECREF(r);
  }
  Py_INCREF(self);
  if (((set_base_fn)table[API_SET_BASE_OBJECT])(a, self) < 0) {
    Py_DECREF(a);
    return NULL;
  }
  return a;
}

/* Where numpy's table cannot serve: numpy.asarray over an object carrying the array interface
 * and the tensor self (numpy's only way in without the table; the array's base is that object,
 * which keeps the memory alive). */
static PyObject *slow_array(PyObject *self, c10c_tensor *h, PyObject *ts, void *p) {
  static PyObject *asarray, *holder;
  if (asarray == NULL) {
    asarray = numpy_attr("asarray");
    if (asarray == NULL) return NULL;
  }
  if (holder == NULL) {
    PyObject *types = PyImport_ImportModule("types");
    if (types == NULL) return NULL;
    holder = PyObject_GetAttrString(types, "SimpleNamespace");
    Py_DECREF(types);
    if (holder == NULL) return NULL;
  }
  PyObject *d = interface_dict(h, ts, p), *kw = NULL, *o = NULL, *a = NULL;
  if (d != NULL) kw = Py_BuildValue("{s:O,s:O}", "__array_interface__", d, "tensor", self);
  PyObject *none = kw != NULL ? PyTuple_New(0) : NULL;
  if (none != NULL) o = PyObject_Call(holder, none, kw);
  if (o != NULL) a = PyObject_CallFunctionObjArgs(asarray, o, NULL);
  Py_XDECREF(d);
  Py_XDECREF(kw);
  Py_XDECREF(none);
  Py_XDECREF(o);
  return a;
}

static bool api_off; /* _numpy_c_api(False): the slow path, for its tests */

/* An array over a tensor's memory: through numpy's table where it serves, else slow_array. */
static PyObject *as_array(PyObject *self, c10c_tensor *h) {
  PyObject *ts;
  void *p;
  if (numpy_checks(self, h, &ts, &p) < 0) return NULL;
  void **table = api_off ? NULL : numpy_api();
  PyObject *a =
      table != NULL ? api_array(table, self, h, type_num(c10c_tensor_dtype(h)), p) : Py_None;
  return a == Py_None ? slow_array(self, h, ts, p) : a;
}

PyObject *pyc10_numpy_c_api(PyObject *m, PyObject *use) {
  (void)m;
  int on = PyObject_IsTrue(use);
  if (on < 0) return NULL;
  bool was = !api_off;
  api_off = !on;
  return PyBool_FromLong(was);
}

/* A copy of a (stolen) in a's own layout, as numpy.array(t) makes of torch's array (order K). */
static PyObject *copy_of(PyObject *a) {
  PyObject *r = PyObject_CallMethod(a, "copy", "s", "K");
  Py_DECREF(a);
  return r;
}

static pa_parser numpy_p = PA_PARSER("Tensor", "numpy");
static PyObject *t_numpy(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
  bool force = false;
  if (nargs != 0 || kwnames != NULL) {
    pa_args r;
    if (pa_parse(&numpy_p, args, nargs, kwnames, &r) < 0) return NULL;
    if (pa_bool(&r, 0, &force) < 0) return NULL;
  }
  SELF_HANDLE(h);
  if (!force || c10c_tensor_device(h).type == C10C_DEVICE_TYPE_CPU) return as_array(self, h);
  /* torch's force=True: a CPU copy of a tensor elsewhere (torch's detach().cpu(); pyc10 has no
   * autograd, conjugate or negative bits to resolve); the memory of a CPU tensor itself */
  c10c_tensor *cpu = NULL;
  c10c_device to = {C10C_DEVICE_TYPE_CPU, -1};
  c10c_status st =
      c10c_tensor_empty_like(&cpu, h, c10c_tensor_dtype(h), to, C10C_MEMORY_FORMAT_PRESERVE);
  if (st == C10C_STATUS_OK) st = c10c_tensor_copy_(cpu, h);
  if (st != C10C_STATUS_OK) {
    pyc10_release_tensor(cpu);
    return pyc10_raise(st);
  }
  PyObject *t = pyc10_wrap(cpu);
  if (t == NULL) return NULL;
  PyObject *a = as_array(t, cpu);
  Py_DECREF(t);
  return a;
}

/* __array__(dtype=None, copy=None): numpy's protocol; a view, cast to dtype (a copy) if it
 * differs, copied when copy is true. */
static PyObject *t_array(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
  PyObject *dtype = Py_None, *copy = Py_None;
  if (nargs > 2) return TYPE_ERROR("__array__() takes at most 2 arguments (%zd given)", nargs);
  if (nargs > 0) dtype = args[0];
  if (nargs > 1) copy = args[1];
  Py_ssize_t nkw = kwnames != NULL ? PyTuple_Size(kwnames) : 0;
  for (Py_ssize_t i = 0; i < nkw; i++) {
    PyObject *key = PyTuple_GetItem(kwnames, i);
    bool is_dtype = PyUnicode_CompareWithASCIIString(key, "dtype") == 0;
    if ((!is_dtype && PyUnicode_CompareWithASCIIString(key, "copy") != 0) ||
        (is_dtype ? nargs > 0 : nargs > 1))
      return TYPE_ERROR("__array__() got an unexpected keyword argument '%U'", key);
    if (is_dtype)
      dtype = args[nargs + i];
    else
      copy = args[nargs + i];
  }
  SELF_HANDLE(h);
  PyObject *a = as_array(self, h);
  if (a == NULL) return NULL;
  if (dtype != Py_None) {
    PyObject *make = numpy_attr("dtype");
    PyObject *want = make == NULL ? NULL : PyObject_CallFunctionObjArgs(make, dtype, NULL);
    Py_XDECREF(make);
    PyObject *have = want == NULL ? NULL : PyObject_GetAttrString(a, "dtype");
    int differs = have == NULL ? -1 : PyObject_RichCompareBool(want, have, Py_NE);
    Py_XDECREF(have);
    PyObject *r = differs <= 0 ? NULL : PyObject_CallMethod(a, "astype", "O", want);
    Py_XDECREF(want);
    if (differs != 0) {
      Py_DECREF(a);
      return r;
    }
  }
  int c = PyObject_IsTrue(copy);
  if (c < 0) {
    Py_DECREF(a);
    return NULL;
  }
  return c ? copy_of(a) : a;
}

/* numpy.ndarray, once imported (NULL without an error while numpy cannot be imported). */
static PyObject *ndarray_type(void) {
  static PyObject *type;
  if (type == NULL) {
    type = numpy_attr("ndarray");
    if (type == NULL) PyErr_Clear();
  }
  return type;
}

bool pyc10_is_ndarray(PyObject *o) {
  PyObject *type = ndarray_type();
  return type != NULL && PyObject_TypeCheck(o, (PyTypeObject *)type);
}

/* ---- from_numpy ---- */

/* The storage deleter of from_numpy: drops the array with the GIL held (it may run on any thread),
 * keeping any exception in flight (a failing call dropping its temporary tensor has one set). */
static void release_array(void *ctx) {
  if (!Py_IsInitialized()) return;
  PyGILState_STATE gil = PyGILState_Ensure();
  if (PyErr_Occurred() == NULL) /* the common case: no exception to set aside */
    Py_DECREF((PyObject *)ctx);
  else
    KEEPING_ERROR(Py_DECREF((PyObject *)ctx));
  PyGILState_Release(gil);
}

/* numpy's typestr ("<f4", "|b1") as a dtype code torch takes, or -1. */
static int typestr_dtype(PyObject *typestr) {
  const char *t = PyUnicode_AsUTF8AndSize(typestr, NULL);
  if (t == NULL || strlen(t) < 3) return -1;
  if (t[0] == '>') return -2; /* not native on the little-endian hosts pyc10 runs on */
  char kind = t[1];
  long size = strtol(t + 2, NULL, 10);
  switch (kind) {
    case 'b': return size == 1 ? C10C_DTYPE_BOOL : -1;
    case 'i':
      return size == 1   ? C10C_DTYPE_INT8
             : size == 2 ? C10C_DTYPE_INT16
             : size == 4 ? C10C_DTYPE_INT32
             : size == 8 ? C10C_DTYPE_INT64
                         : -1;
    case 'u':
      return size == 1   ? C10C_DTYPE_UINT8
             : size == 2 ? C10C_DTYPE_UINT16
             : size == 4 ? C10C_DTYPE_UINT32
             : size == 8 ? C10C_DTYPE_UINT64
                         : -1;
    case 'f':
      return size == 2   ? C10C_DTYPE_FLOAT16
             : size == 4 ? C10C_DTYPE_FLOAT32
             : size == 8 ? C10C_DTYPE_FLOAT64
                         : -1;
    case 'c': return size == 8 ? C10C_DTYPE_COMPLEX64 : size == 16 ? C10C_DTYPE_COMPLEX128 : -1;
    default: return -1;
  }
}

static PyObject *unsupported_dtype(PyObject *a) {
  PyObject *name = NULL, *d = PyObject_GetAttrString(a, "dtype");
  PyObject *type = d ? PyObject_GetAttrString(d, "type") : NULL;
  name = type ? PyObject_GetAttrString(type, "__name__") : NULL;
  Py_XDECREF(d);
  Py_XDECREF(type);
  if (name == NULL) return NULL;
  raise_with(pa_cls.type_error,
             "can't convert np.ndarray of type numpy.%U. The only supported types are: float64, "
             "float32, float16, complex64, complex128, int64, int32, int16, int8, uint64, uint32, "
             "uint16, uint8, and bool.",
             name);
  Py_DECREF(name);
  return NULL;
}

/* Reads n ints of a tuple into out. */
static int int_tuple(PyObject *t, int64_t *out, Py_ssize_t n) {
  for (Py_ssize_t i = 0; i < n; i++) {
    out[i] = PyLong_AsLongLong(PyTuple_GetItem(t, i));
    if (out[i] == -1 && PyErr_Occurred()) return -1;
  }
  return 0;
}

/* What from_numpy reads of an array: its memory, sizes and byte strides, dtype, writability. */
typedef struct {
  void *data;
  Py_ssize_t ndim;
  int64_t sizes[MAX_DIMS], strides[MAX_DIMS]; /* strides in bytes */
  int dtype;                                  /* -1: one torch does not take */
  int read_only;
} array_info;

/* numpy's array object as numpy documents it (PyArrayObject_fields, the same in numpy 1 and 2),
 * and the head of its dtype (PyArray_Descr: kind, type, byteorder, then type_num in both). */
typedef struct {
  PyObject_HEAD char *data;
  int nd;
  Py_ssize_t *dimensions, *strides;
  PyObject *base;
  struct {
    PyObject_HEAD PyTypeObject *typeobj;
    char kind, type, byteorder, flags;
    int type_num;
  } * descr;
  int flags;
} np_array;

/* numpy's type numbers (stable: numpy's NPY_TYPES) as the dtypes torch takes: torch's
 * numpy_dtype_to_aten, which takes the unsigned ints only under numpy's NPY_UINT32/NPY_UINT64
 * names (NPY_UINT and NPY_ULONG where a C long has 64 bits, so not NPY_ULONGLONG there). */
static int type_num_dtype(int num) {
  switch (num) {
    case 0: return C10C_DTYPE_BOOL;
    case 1: return C10C_DTYPE_INT8;
    case 2: return C10C_DTYPE_UINT8;
    case 3: return C10C_DTYPE_INT16;
    case 4: return C10C_DTYPE_UINT16;
    case 5: return C10C_DTYPE_INT32;
    case 6: return sizeof(long) == 8 ? C10C_DTYPE_UINT32 : -1;
    case 7: return sizeof(long) == 8 ? C10C_DTYPE_INT64 : C10C_DTYPE_INT32;
    case 8: return sizeof(long) == 8 ? C10C_DTYPE_UINT64 : C10C_DTYPE_UINT32;
    case 9: return C10C_DTYPE_INT64;
    case 10: return sizeof(long) == 8 ? -1 : C10C_DTYPE_UINT64;
    case 11: return C10C_DTYPE_FLOAT32;
    case 12: return C10C_DTYPE_FLOAT64;
    case 14: return C10C_DTYPE_COMPLEX64;
    case 15: return C10C_DTYPE_COMPLEX128;
    case 23: return C10C_DTYPE_FLOAT16;
    default: return -1;
  }
}

/* The fast reader: the array's fields directly (1), or 0 where the layout is not numpy's. */
static int read_fields(PyObject *a, array_info *info) {
  const np_array *arr = (const np_array *)a;
  if (arr->nd < 0 || arr->nd > MAX_DIMS) return 0;
  info->data = arr->data;
  info->ndim = arr->nd;
  for (int i = 0; i < arr->nd; i++)
    info->sizes[i] = arr->dimensions[i], info->strides[i] = arr->strides[i];
  info->dtype = arr->descr->byteorder == '>' ? -2 : type_num_dtype(arr->descr->type_num);
  info->read_only = !(arr->flags & NPY_WRITEABLE);
  return 1;
}

/* The portable reader: __array_interface__ and a.strides; 0 or -1 with an error. */
static int read_interface(PyObject *a, array_info *info) {
  PyObject *ai = PyObject_GetAttrString(a, "__array_interface__");
  PyObject *strides = ai ? PyObject_GetAttrString(a, "strides") : NULL;
  int rc = -1;
  if (strides == NULL) goto done;
  PyObject *typestr = PyDict_GetItemString(ai, "typestr"),
           *shape = PyDict_GetItemString(ai, "shape"), *data = PyDict_GetItemString(ai, "data");
  if (typestr == NULL || shape == NULL || data == NULL || !PyTuple_Check(shape) ||
      !PyTuple_Check(data) || !PyTuple_Check(strides)) {
    PyErr_SetString(PyExc_RuntimeError, "from_numpy: unexpected __array_interface__");
    goto done;
  }
  info->dtype = typestr_dtype(typestr);
  info->ndim = PyTuple_Size(shape);
  if (info->ndim > MAX_DIMS) {
    raise_with(pa_cls.runtime_error, "from_numpy: too many dimensions (%zd)", info->ndim);
    goto done;
  }
  if (int_tuple(shape, info->sizes, info->ndim) < 0 ||
      int_tuple(strides, info->strides, info->ndim) < 0)
    goto done;
  info->data = PyLong_AsVoidPtr(PyTuple_GetItem(data, 0));
  info->read_only = PyObject_IsTrue(PyTuple_GetItem(data, 1));
  rc = PyErr_Occurred() || info->read_only < 0 ? -1 : 0;
done:
  Py_XDECREF(ai);
  Py_XDECREF(strides);
  return rc;
}

/* Whether numpy's arrays have the layout read_fields reads: checked once on a probe array. */
static int fields_usable(void) {
  static int usable = -1;
  if (usable >= 0) return usable;
  usable = 0;
  PyObject *mod = PyImport_ImportModule("numpy");
  PyObject *probe = mod ? PyObject_CallMethod(mod, "zeros", "((ii)s)", 2, 3, "float32") : NULL;
  array_info f, i;
  if (probe != NULL && read_fields(probe, &f) && read_interface(probe, &i) == 0)
    usable = f.data == i.data && f.ndim == 2 && f.sizes[0] == 2 && f.sizes[1] == 3 &&
             f.strides[0] == 12 && f.strides[1] == 4 && f.dtype == C10C_DTYPE_FLOAT32 &&
             f.read_only == 0;
  PyErr_Clear();
  Py_XDECREF(probe);
  Py_XDECREF(mod);
  return usable;
}

/* from_numpy(a): a CPU tensor over a's memory, holding a reference to a until its storage goes
 * (release_array). A read-only array gives a read-only tensor (torch only warns). */
PyObject *pyc10_from_numpy(PyObject *m, PyObject *a) {
  (void)m;
  if (!pyc10_is_ndarray(a)) {
    PyObject *name = PyObject_GetAttrString((PyObject *)Py_TYPE(a), "__name__");
    if (name == NULL) return NULL;
    raise_with(pa_cls.type_error, "expected np.ndarray (got %U)", name);
    Py_DECREF(name);
    return NULL;
  }
  array_info info;
  if (!(fields_usable() && read_fields(a, &info)) && read_interface(a, &info) < 0) return NULL;
  if (info.dtype == -2)
    return raise_with(pa_cls.value_error,
                      "given numpy array has byte order different from the native byte order. "
                      "Conversion between byte orders is currently not supported.");
  if (info.dtype < 0) return unsupported_dtype(a);
  int64_t item = (int64_t)c10c_dtype_itemsize((c10c_dtype)info.dtype), nbytes = item;
  int shift = 0; /* numpy's itemsizes pyc10 takes are powers of two: a shift, not a division */
  while (((int64_t)1 << shift) < item) shift++;
  if (((int64_t)1 << shift) != item) return unsupported_dtype(a);
  bool empty = false;
  for (Py_ssize_t i = 0; i < info.ndim; i++) {
    if (info.strides[i] < 0)
      return raise_with(pa_cls.value_error,
                        "At least one stride in the given numpy array is negative, and tensors "
                        "with negative strides are not currently supported. (You can probably "
                        "work around this by making a copy of your array  with array.copy().) ");
    if ((info.strides[i] & (item - 1)) != 0)
      return raise_with(pa_cls.value_error,
                        "given numpy array strides not a multiple of the element byte size. Copy "
                        "the numpy array to reallocate the memory.");
    info.strides[i] >>= shift;
    if (info.sizes[i] == 0) empty = true;
    nbytes += (info.sizes[i] - 1) * info.strides[i] * item;
  }
  if (empty) nbytes = 0;
  c10c_storage *storage = NULL;
  c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
  Py_INCREF(a);
  c10c_status st = c10c_storage_new_external(&storage, info.data, nbytes, cpu, release_array, a);
  if (st != C10C_STATUS_OK) {
    Py_DECREF(a);
    return pyc10_raise(st);
  }
  if (info.read_only) c10c_storage_set_read_only(storage);
  c10c_tensor *out = NULL;
  st = c10c_tensor_new_from_storage(&out, storage, info.sizes, info.strides, (size_t)info.ndim, 0,
                                    (c10c_dtype)info.dtype);
  c10c_storage_release(storage); /* the tensor holds it now (or it is gone, and a with it) */
  return pyc10_result(st, &out);
}

#define M(name, fn) \
  { name, PYC10_FASTCALL(fn), METH_FASTCALL | METH_KEYWORDS, NULL }

PyMethodDef pyc10_numpy_methods[] = {
    M("numpy", t_numpy),
    {"__array__", PYC10_FASTCALL(t_array), METH_FASTCALL | METH_KEYWORDS,
     "__array__(dtype=None, copy=None) -> numpy.ndarray\n\nnumpy.asarray(t): a view of the "
     "tensor's memory (cast to dtype, a copy, when it differs; copied when copy is true)."},
    {NULL, NULL, 0, NULL},
};
