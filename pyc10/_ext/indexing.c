/* Indexing and element access: t[index] and t[index] = value with torch's basic indexing (ints,
 * slices, None, Ellipsis, bools, 0-dim integer and bool tensors, and tuples of those), and the
 * reads of elements into Python: item() and tolist() (numpy() and the array protocols: numpy.c).
 *
 * Indexing follows torch's THPVariable_getitem/setitem and applySlicing (python_variable_indexing
 * .cpp, TensorIndexing.h): an int selects (torch's "index 5 is out of bounds for dimension 0 with
 * size 3", naming the index's position in the tuple), a slice narrows (step > 0), None and a bool
 * add a dim, each Ellipsis skips the dims the other items leave. A bool (or 0-dim bool/uint8
 * tensor) is torch's one-element advanced index: the result is a copy whose new dim has size 1
 * (True) or 0 (False). Other advanced indices (lists, tensors with dims) raise NotImplementedError.
 * setitem converts the value first (torch's "can't assign a str to a torch.FloatTensor"), then
 * fills the indexed view with a number or copies a tensor into it as torch's copy_to (leading
 * size-1 dims of the value dropped, then expanded).
 *
 * Elements are read in place for the dtypes C has (bool, the ints, float, double, complex); the
 * others (float16, bfloat16, float8, complex32) and tensors off the CPU go through a CPU copy
 * widened to double or complex double with the library's casts.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "common.h"

/* pyc10's C10NotImplementedError (looked up on first use: only advanced indexing raises it). */
static PyObject *not_implemented_class(void) {
  static PyObject *cls;
  if (cls == NULL) {
    PyObject *mod = PyImport_ImportModule("pyc10._errors");
    if (mod == NULL) return NULL;
    cls = PyObject_GetAttrString(mod, "C10NotImplementedError");
    Py_DECREF(mod);
  }
  return cls;
}

/* A type's name as CPython's tp_name reads ("str", "numpy.float32"): the limited API has no
 * tp_name, so __module__ (unless builtins) and __qualname__. */
static PyObject *type_name(PyObject *o) {
  PyObject *type = (PyObject *)Py_TYPE(o);
  PyObject *name = PyObject_GetAttrString(type, "__qualname__");
  if (name == NULL) return NULL;
  PyObject *module = PyObject_GetAttrString(type, "__module__");
  if (module == NULL) {
    PyErr_Clear();
    return name;
  }
  PyObject *r = name;
  if (PyUnicode_Check(module) && PyUnicode_CompareWithASCIIString(module, "builtins") != 0) {
    r = PyUnicode_FromFormat("%U.%U", module, name);
    Py_DECREF(name);
  }
  Py_DECREF(module);
  return r;
}

static PyObject *advanced(PyObject *item) {
  PyObject *cls = not_implemented_class();
  if (cls == NULL) return NULL;
  PyObject *name = PyObject_GetAttrString((PyObject *)Py_TYPE(item), "__name__");
  if (name == NULL) return NULL;
  PyObject *r = pyc10_raise_in(cls, NULL,
                               "indexing with %U (advanced indexing) is not implemented yet", name);
  Py_DECREF(name);
  return r;
}

/* numpy.integer when numpy is loaded (torch's is_numpy_int), else NULL without an error. */
static bool is_numpy_int(PyObject *o) {
  static PyObject *integer;
  if (integer == NULL) {
    PyObject *np = PyDict_GetItemString(PyImport_GetModuleDict(), "numpy"); /* borrowed */
    if (np == NULL) return false;
    integer = PyObject_GetAttrString(np, "integer");
    if (integer == NULL) {
      PyErr_Clear();
      return false;
    }
  }
  int r = PyObject_IsInstance(o, integer);
  if (r < 0) PyErr_Clear();
  return r > 0;
}

/* ---- reading elements ---- */

PyObject *pyc10_load_element(const void *p, c10c_dtype dt) {
  switch (dt) {
    case C10C_DTYPE_BOOL: return PyBool_FromLong(*(const bool *)p);
    case C10C_DTYPE_UINT8: return PyLong_FromLong(*(const uint8_t *)p);
    case C10C_DTYPE_INT8: return PyLong_FromLong(*(const int8_t *)p);
    case C10C_DTYPE_INT16: return PyLong_FromLong(*(const int16_t *)p);
    case C10C_DTYPE_UINT16: return PyLong_FromLong(*(const uint16_t *)p);
    case C10C_DTYPE_INT32: return PyLong_FromLong(*(const int32_t *)p);
    case C10C_DTYPE_UINT32: return PyLong_FromUnsignedLong(*(const uint32_t *)p);
    case C10C_DTYPE_INT64: return PyLong_FromLongLong(*(const int64_t *)p);
    case C10C_DTYPE_UINT64: return PyLong_FromUnsignedLongLong(*(const uint64_t *)p);
    case C10C_DTYPE_FLOAT32: return PyFloat_FromDouble(*(const float *)p);
    case C10C_DTYPE_FLOAT64: return PyFloat_FromDouble(*(const double *)p);
    case C10C_DTYPE_COMPLEX64: {
      const float *c = p;
      return PyComplex_FromDoubles(c[0], c[1]);
    }
    case C10C_DTYPE_COMPLEX128: {
      const double *c = p;
      return PyComplex_FromDoubles(c[0], c[1]);
    }
    default: return NULL;
  }
}

/* One element of a dtype C reads natively; NULL with torch's TypeError for the others. */
static PyObject *load(const char *p, c10c_dtype dt) {
  PyObject *v = pyc10_load_element(p, dt);
  if (v == NULL && !PyErr_Occurred())
    return TYPE_ERROR("Got unsupported ScalarType %s", c10c_dtype_c10_name(dt));
  return v;
}

/* The dtype elements of dt are read as: itself where load() reads it, double for the reduced
 * floats, complex double for complex32; UNDEFINED for the dtypes without Python numbers. */
static c10c_dtype readable_dtype(c10c_dtype dt) {
  switch (dt) {
    case C10C_DTYPE_BOOL:
    case C10C_DTYPE_UINT8:
    case C10C_DTYPE_INT8:
    case C10C_DTYPE_INT16:
    case C10C_DTYPE_UINT16:
    case C10C_DTYPE_INT32:
    case C10C_DTYPE_UINT32:
    case C10C_DTYPE_INT64:
    case C10C_DTYPE_UINT64:
    case C10C_DTYPE_FLOAT32:
    case C10C_DTYPE_FLOAT64:
    case C10C_DTYPE_COMPLEX64:
    case C10C_DTYPE_COMPLEX128: return dt;
    case C10C_DTYPE_FLOAT16:
    case C10C_DTYPE_BFLOAT16:
    case C10C_DTYPE_FLOAT8_E5M2:
    case C10C_DTYPE_FLOAT8_E4M3FN:
    case C10C_DTYPE_FLOAT8_E5M2FNUZ:
    case C10C_DTYPE_FLOAT8_E4M3FNUZ:
    case C10C_DTYPE_FLOAT8_E8M0FNU: return C10C_DTYPE_FLOAT64;
    case C10C_DTYPE_COMPLEX32: return C10C_DTYPE_COMPLEX128;
    default: return C10C_DTYPE_UNDEFINED;
  }
}

/* h itself (a new reference) when its elements can be read in place, else a contiguous CPU copy
 * in readable_dtype; NULL with an error. */
static c10c_tensor *readable(c10c_tensor *h) {
  c10c_dtype dt = c10c_tensor_dtype(h), w = readable_dtype(dt);
  if (w == C10C_DTYPE_UNDEFINED) {
    TYPE_ERROR("Got unsupported ScalarType %s", c10c_dtype_c10_name(dt));
    return NULL;
  }
  if (w == dt && c10c_tensor_device(h).type == C10C_DEVICE_TYPE_CPU) return c10c_tensor_retain(h);
  c10c_tensor *tmp = NULL;
  c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
  c10c_status st = c10c_tensor_empty(&tmp, c10c_tensor_sizes(h), c10c_tensor_dim(h), w, cpu,
                                     C10C_MEMORY_FORMAT_CONTIGUOUS);
  if (st == C10C_STATUS_OK) st = c10c_tensor_copy_(tmp, h);
  if (st != C10C_STATUS_OK) {
    c10c_tensor_release(tmp);
    pyc10_raise(st);
    return NULL;
  }
  return tmp;
}

/* The first element's address, or a stand-in when there are none; NULL with the library's error
 * when the storage no longer holds the elements. */
static const char *elements(c10c_tensor *h) {
  static const _Alignas(16) char none[16];
  if (c10c_tensor_numel(h) == 0) return none;
  const char *p = c10c_tensor_data(h);
  if (p == NULL) pyc10_raise(c10c_last_error_status());
  return p;
}

static PyObject *t_item(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  int64_t n = c10c_tensor_numel(h);
  if (n != 1)
    return RUNTIME_ERROR("a Tensor with %lld elements cannot be converted to Scalar", (long long)n);
  c10c_dtype dt = c10c_tensor_dtype(h);
  if (readable_dtype(dt) == dt && c10c_tensor_device(h).type == C10C_DEVICE_TYPE_CPU) {
    const char *p = elements(h);
    return p == NULL ? NULL : load(p, dt);
  }
  c10c_tensor *r = readable(h);
  if (r == NULL) return NULL;
  const char *p = elements(r);
  PyObject *v = p == NULL ? NULL : load(p, c10c_tensor_dtype(r));
  c10c_tensor_release(r);
  return v;
}

/* Nested lists of the elements at p along dims [d, ndim). */
static PyObject *nested(const char *p, c10c_dtype dt, size_t itemsize, const int64_t *sizes,
                        const int64_t *strides, size_t ndim, size_t d) {
  if (d == ndim) return load(p, dt);
  int64_t n = sizes[d];
  ptrdiff_t step = (ptrdiff_t)(strides[d] * (int64_t)itemsize);
  PyObject *list = PyList_New((Py_ssize_t)n);
  if (list == NULL) return NULL;
  for (int64_t i = 0; i < n; i++) {
    PyObject *x =
        d + 1 == ndim ? load(p, dt) : nested(p, dt, itemsize, sizes, strides, ndim, d + 1);
    if (x == NULL) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SetItem(list, (Py_ssize_t)i, x); /* steals x */
    p += step;
  }
  return list;
}

static PyObject *t_tolist(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  c10c_tensor *r = readable(h);
  if (r == NULL) return NULL;
  const char *p = elements(r);
  PyObject *list = NULL;
  if (p != NULL) {
    if (c10c_tensor_numel(r) == 0) p = NULL; /* nothing is read: only the lists' shape counts */
    c10c_dtype dt = c10c_tensor_dtype(r);
    list = nested(p, dt, c10c_tensor_itemsize(r), c10c_tensor_sizes(r), c10c_tensor_strides(r),
                  c10c_tensor_dim(r), 0);
  }
  c10c_tensor_release(r);
  return list;
}

/* ---- indexing ---- */

enum kind { K_INT, K_SLICE, K_NONE, K_ELLIPSIS, K_BOOL };

/* An index item's value as an int64 (torch's "Overflow when unpacking long long"). */
static int unpack_long(PyObject *o, int64_t *out) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (v == -1 && PyErr_Occurred()) return -1;
  if (overflow != 0) {
    VALUE_ERROR("Overflow when unpacking long long");
    return -1;
  }
  *out = (int64_t)v;
  return 0;
}

/* What one item of an index is (ints and bools with their value in *v); -1 with torch's error
 * for what basic indexing does not take. */
static int classify(PyObject *o, int64_t *v) {
  if (o == Py_None) return K_NONE;
  if (o == Py_Ellipsis) return K_ELLIPSIS;
  if (PyBool_Check(o)) {
    *v = o == Py_True;
    return K_BOOL;
  }
  if (PyLong_Check(o)) return unpack_long(o, v) < 0 ? -1 : K_INT;
  if (PySlice_Check(o)) return K_SLICE;
  if (pa_cls.tensor != NULL && PyObject_TypeCheck(o, pa_cls.tensor)) {
    c10c_tensor *t = pyc10_handle(o);
    if (t == NULL) return -1;
    c10c_dtype dt = c10c_tensor_dtype(t);
    if (!c10c_dtype_is_integral(dt, true)) {
      INDEX_ERROR("tensors used as indices must be long, int, byte or bool tensors");
      return -1;
    }
    if (c10c_tensor_dim(t) != 0) {
      advanced(o);
      return -1;
    }
    PyObject *x = t_item(o, NULL);
    if (x == NULL) return -1;
    int rc = unpack_long(x, v);
    Py_DECREF(x);
    if (rc < 0) return -1;
    if (dt == C10C_DTYPE_BOOL || dt == C10C_DTYPE_UINT8) {
      *v = *v != 0;
      return K_BOOL;
    }
    return K_INT;
  }
  if (PySequence_Check(o)) {
    advanced(o);
    return -1;
  }
  PyObject *i = PyIndex_Check(o) ? PyNumber_Index(o) : NULL;
  if (i == NULL) {
    PyErr_Clear();
    PyObject *name = type_name(o);
    if (name == NULL) return -1;
    INDEX_ERROR(
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
        "are valid indices (got %U)",
        name);
    Py_DECREF(name);
    return -1;
  }
  int rc = unpack_long(i, v);
  Py_DECREF(i);
  return rc < 0 ? -1 : K_INT;
}

/* A slice's bounds as Python reads them, with torch's ValueErrors for a step <= 0. */
static int unpack_slice(PyObject *slice, Py_ssize_t *start, Py_ssize_t *stop, Py_ssize_t *step) {
  if (PySlice_Unpack(slice, start, stop, step) < 0) {
    if (PyErr_ExceptionMatches(PyExc_ValueError)) { /* "slice step cannot be zero" */
      PyErr_Clear();
      VALUE_ERROR("slice step cannot be zero");
    }
    return -1;
  }
  if (*step <= 0) {
    VALUE_ERROR("step must be greater than zero");
    return -1;
  }
  return 0;
}

enum { MAX_ITEMS = 64 };

/* Replaces *cur by a view made from it (st the call's status, *next its result: a pointer, as an
 * argument beside the call could be read before the call writes it). */
static int step_to(c10c_tensor **cur, c10c_status st, c10c_tensor *const *next) {
  if (st != C10C_STATUS_OK) {
    pyc10_raise(st);
    return -1;
  }
  c10c_tensor_release(*cur);
  *cur = *next;
  return 0;
}

/* torch's applySlicing: the view of h an index makes, in *out (a new reference). The dims that
 * bools added (each of size 1) are listed in bool_dims (*nbool of them; *all_true whether every
 * bool was True): the caller turns them into torch's advanced-index dim. */
static int apply_index(c10c_tensor *h, PyObject *index, c10c_tensor **out, int64_t *bool_dims,
                       size_t *nbool, bool *all_true) {
  PyObject *const *items = &index;
  Py_ssize_t n = 1;
  *nbool = 0;
  *all_true = true;
  bool tuple = PyTuple_Check(index);
  if (tuple) {
    n = PyTuple_Size(index);
    if (n > MAX_ITEMS) {
      INDEX_ERROR("too many indices for tensor of dimension %zu", c10c_tensor_dim(h));
      return -1;
    }
  }
  PyObject *buf[MAX_ITEMS];
  if (tuple) {
    for (Py_ssize_t i = 0; i < n; i++) buf[i] = PyTuple_GetItem(index, i); /* borrowed */
    items = buf;
  }
  int kinds[MAX_ITEMS];
  int64_t values[MAX_ITEMS];
  int64_t ndim = (int64_t)c10c_tensor_dim(h), specified = 0;
  for (Py_ssize_t i = 0; i < n; i++) {
    kinds[i] = classify(items[i], &values[i]);
    if (kinds[i] < 0) return -1;
    if (kinds[i] == K_INT || kinds[i] == K_SLICE) specified++;
  }
  if (!tuple && ndim == 0 && kinds[0] == K_INT &&
      (PyLong_Check(index) || is_numpy_int(index))) { /* torch's applySelect on a 0-dim tensor */
    if (values[0] == 0)
      INDEX_ERROR(
          "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
          "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number");
    else
      INDEX_ERROR("index %lld is out of bounds for dimension 0 with size 0", (long long)values[0]);
    return -1;
  }
  if (!tuple && ndim == 0 && kinds[0] == K_SLICE) { /* torch's applySlice: the library's error */
    c10c_tensor *out_ = NULL;
    Py_ssize_t start, stop, step;
    if (unpack_slice(index, &start, &stop, &step) < 0) return -1;
    c10c_status st = c10c_tensor_slice(&out_, h, 0, start, stop, step);
    if (st != C10C_STATUS_OK) return pyc10_raise(st), -1;
    *out = out_;
    return 0;
  }
  if (specified > ndim) {
    INDEX_ERROR("too many indices for tensor of dimension %d", (int)ndim);
    return -1;
  }
  c10c_tensor *cur = c10c_tensor_retain(h), *next = NULL;
  int64_t dim = 0;
  for (Py_ssize_t i = 0; i < n; i++) {
    int rc = 0;
    switch (kinds[i]) {
      case K_NONE:
        rc = step_to(&cur, c10c_tensor_unsqueeze(&next, cur, dim), &next);
        dim++;
        break;
      case K_BOOL:
        rc = step_to(&cur, c10c_tensor_unsqueeze(&next, cur, dim), &next);
        bool_dims[(*nbool)++] = dim;
        *all_true = *all_true && values[i] != 0;
        dim++;
        break;
      case K_ELLIPSIS: dim += ndim - specified; break;
      case K_SLICE: {
        Py_ssize_t start, stop, step;
        rc = unpack_slice(items[i], &start, &stop, &step);
        if (rc == 0)
          rc = step_to(&cur, c10c_tensor_slice(&next, cur, dim, start, stop, step), &next);
        dim++;
        break;
      }
      default: { /* K_INT */
        if (c10c_tensor_dim(cur) == 0) {
          INDEX_ERROR(
              "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
              "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number");
          rc = -1;
          break;
        }
        int64_t size = c10c_tensor_sizes(cur)[dim], v = values[i];
        if (!(size > -1 - v && size > v)) {
          INDEX_ERROR("index %lld is out of bounds for dimension %zd with size %lld", (long long)v,
                      i, (long long)size);
          rc = -1;
          break;
        }
        rc = step_to(&cur, c10c_tensor_select(&next, cur, dim, v), &next);
        break;
      }
    }
    if (rc < 0) {
      c10c_tensor_release(cur);
      return -1;
    }
  }
  *out = cur;
  return 0;
}

static bool adjacent(const int64_t *dims, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (dims[i] != dims[i - 1] + 1) return false;
  return true;
}

/* A copy of v (whose dim `at` is the advanced-index dim) laid out as torch's index kernel lays
 * out its result: TensorIterator's insertion sort of the dims by v's strides, where the index dim
 * (and a stride-0 dim) compares with nothing, then dense strides in that order. */
static c10c_status index_copy(c10c_tensor **out, c10c_tensor *v, int64_t at) {
  size_t n = c10c_tensor_dim(v);
  const int64_t *sizes = c10c_tensor_sizes(v), *strides = c10c_tensor_strides(v);
  int64_t perm[MAX_ITEMS * 2], out_strides[MAX_ITEMS * 2];
  if (n > MAX_ITEMS * 2) return c10c_tensor_clone(out, v, C10C_MEMORY_FORMAT_PRESERVE);
  for (size_t i = 0; i < n; i++) perm[i] = (int64_t)(n - 1 - i);
  for (size_t i = 1; i < n; i++) {
    size_t d1 = i;
    for (size_t k = i; k-- > 0;) {
      int64_t a = perm[k], b = perm[d1];
      int cmp = 0;
      if (a != at && b != at && strides[a] != 0 && strides[b] != 0) {
        if (strides[a] < strides[b])
          cmp = -1;
        else if (strides[a] > strides[b] || sizes[a] > sizes[b])
          cmp = 1;
      }
      if (cmp > 0) {
        perm[k] = b;
        perm[d1] = a;
        d1 = k;
      } else if (cmp < 0) {
        break;
      }
    }
  }
  int64_t next = 1;
  for (size_t i = 0; i < n; i++) {
    out_strides[perm[i]] = next;
    next *= sizes[perm[i]] > 1 ? sizes[perm[i]] : 1;
  }
  c10c_status st = c10c_tensor_empty_strided(out, sizes, out_strides, n, c10c_tensor_dtype(v),
                                             c10c_tensor_device(v));
  if (st == C10C_STATUS_OK) st = c10c_tensor_copy_(*out, v);
  return st;
}

/* The bools' dims of v (each of size 1) made into torch's one advanced-index dim: in place when
 * they are adjacent, else first; of size 0 when a bool was False. A new reference in *out. */
static int bool_dim(c10c_tensor *v, const int64_t *bool_dims, size_t nbool, bool all_true,
                    c10c_tensor **out) {
  int64_t at = adjacent(bool_dims, nbool) ? bool_dims[0] : 0;
  c10c_tensor *cur = c10c_tensor_retain(v), *next = NULL;
  if (step_to(&cur, c10c_tensor_squeeze_dims(&next, cur, bool_dims, nbool), &next) < 0 ||
      step_to(&cur, c10c_tensor_unsqueeze(&next, cur, at), &next) < 0 ||
      (!all_true && step_to(&cur, c10c_tensor_slice(&next, cur, at, 0, 0, 1), &next) < 0)) {
    c10c_tensor_release(cur);
    return -1;
  }
  *out = cur;
  return 0;
}

/* t[i, j, ...] with exact ints in range, the common element access: one as_strided view instead
 * of a select per int. 1 with the view in *out, 0 (no error) for any other index. */
static int int_tuple(c10c_tensor *h, PyObject *index, c10c_tensor **out) {
  if (!PyTuple_CheckExact(index)) return 0;
  Py_ssize_t n = PyTuple_Size(index);
  size_t ndim = c10c_tensor_dim(h);
  if (n < 2 || (size_t)n > ndim) return 0;
  const int64_t *sizes = c10c_tensor_sizes(h), *strides = c10c_tensor_strides(h);
  int64_t offset = c10c_tensor_storage_offset(h);
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *o = PyTuple_GetItem(index, i);
    if (!PyLong_CheckExact(o)) return 0;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0 || v < -sizes[i] || v >= sizes[i]) {
      PyErr_Clear();
      return 0; /* the general path raises torch's error */
    }
    offset += (v < 0 ? v + sizes[i] : v) * strides[i];
  }
  c10c_status st = c10c_tensor_as_strided(out, h, sizes + n, ndim - (size_t)n, strides + n,
                                          ndim - (size_t)n, &offset);
  if (st != C10C_STATUS_OK) {
    c10c_clear_last_error();
    return 0;
  }
  return 1;
}

/* self[index]: a view, or a copy when a bool took part (torch's advanced indexing). */
static c10c_tensor *index_of(c10c_tensor *h, PyObject *index, bool for_write, size_t *bools) {
  int64_t bool_dims[MAX_ITEMS];
  size_t nbool;
  bool all_true;
  c10c_tensor *v = NULL, *r = NULL;
  if (bools != NULL) *bools = 0;
  if (int_tuple(h, index, &v)) return v;
  if (apply_index(h, index, &v, bool_dims, &nbool, &all_true) < 0) return NULL;
  if (bools != NULL) *bools = nbool;
  if (nbool == 0) {
    if (v != h || for_write) return v;
    /* x[...], x[()]: a new tensor object over the same view, as torch's alias */
    c10c_status st = c10c_tensor_squeeze_dims(&r, v, bool_dims, 0);
    c10c_tensor_release(v);
    if (st != C10C_STATUS_OK) pyc10_raise(st);
    return r;
  }
  int rc = bool_dim(v, bool_dims, nbool, all_true, &r);
  c10c_tensor_release(v);
  if (rc < 0 || for_write) return rc < 0 ? NULL : r;
  c10c_tensor *copy = NULL;
  c10c_status st =
      index_copy(&copy, r, nbool == 1 || adjacent(bool_dims, nbool) ? bool_dims[0] : 0);
  c10c_tensor_release(r);
  if (st != C10C_STATUS_OK) pyc10_raise(st);
  return copy;
}

static PyObject *tensor_getitem(PyObject *self, PyObject *index) {
  SELF_HANDLE(h);
  c10c_tensor *out = NULL;
  size_t ndim = c10c_tensor_dim(h);
  if (ndim > 0) { /* t[i] and t[a:b:c], the common calls */
    if (PyLong_CheckExact(index)) {
      int overflow = 0;
      long long i = PyLong_AsLongLongAndOverflow(index, &overflow);
      int64_t size = c10c_tensor_sizes(h)[0];
      if (overflow == 0 && i >= -size && i < size)
        return pyc10_result(c10c_tensor_select(&out, h, 0, (int64_t)i), &out);
    } else if (PySlice_Check(index)) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(index, &start, &stop, &step) < 0)
        PyErr_Clear(); /* the general path raises torch's error */
      else if (step > 0)
        return pyc10_result(c10c_tensor_slice(&out, h, 0, start, stop, step), &out);
    }
  }
  out = index_of(h, index, false, NULL);
  return out == NULL ? NULL : pyc10_wrap(out);
}

/* torch's checked conversion of a Python float or int for the dtypes whose checks are short;
 * false for the others (fill_ converts those, with torch's errors). */
static bool encode_fast(PyObject *value, c10c_dtype dt, unsigned char *out) {
  if (PyFloat_CheckExact(value)) {
    double f = PyFloat_AsDouble(value);
    if (dt == C10C_DTYPE_FLOAT64) {
      memcpy(out, &f, sizeof f);
      return true;
    }
    if (dt == C10C_DTYPE_FLOAT32 && (isnan(f) || isinf(f) || fabs(f) <= FLT_MAX)) {
      float g = (float)f;
      memcpy(out, &g, sizeof g);
      return true;
    }
    return false;
  }
  if (PyLong_CheckExact(value)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow != 0 || (v == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return false;
    }
    switch (dt) {
      case C10C_DTYPE_INT64: memcpy(out, &(int64_t){(int64_t)v}, 8); return true;
      case C10C_DTYPE_FLOAT64: memcpy(out, &(double){(double)v}, 8); return true;
      case C10C_DTYPE_FLOAT32: memcpy(out, &(float){(float)v}, 4); return true;
      case C10C_DTYPE_INT32:
        if (v < INT32_MIN || v > INT32_MAX) return false;
        memcpy(out, &(int32_t){(int32_t)v}, 4);
        return true;
      default: return false;
    }
  }
  return false;
}

/* torch's copy_to: dst.copy_(src) with src's leading size-1 dims dropped and src expanded to dst
 * (torch's "The expanded size of the tensor ..." when it does not broadcast). */
static c10c_status copy_to(c10c_tensor *dst, c10c_tensor *src) {
  size_t nd = c10c_tensor_dim(dst), ns = c10c_tensor_dim(src);
  const int64_t *ds = c10c_tensor_sizes(dst), *ss = c10c_tensor_sizes(src);
  if (nd == ns && memcmp(ds, ss, nd * sizeof *ds) == 0) return c10c_tensor_copy_(dst, src);
  size_t lead = 0;
  while (lead < ns && ss[lead] == 1) lead++;
  c10c_tensor *view = NULL, *wide = NULL;
  c10c_status st = c10c_tensor_as_strided(&view, src, ss + lead, ns - lead,
                                          c10c_tensor_strides(src) + lead, ns - lead, NULL);
  if (st == C10C_STATUS_OK) st = c10c_tensor_expand(&wide, view, ds, nd);
  if (st == C10C_STATUS_OK) st = c10c_tensor_copy_(dst, wide);
  c10c_tensor_release(wide);
  c10c_tensor_release(view);
  return st;
}

static int tensor_setitem(PyObject *self, PyObject *index, PyObject *value) {
  c10c_tensor *h = pyc10_handle(self);
  if (h == NULL) return -1;
  if (value == NULL) {
    TYPE_ERROR("Tensor does not support deleting items");
    return -1;
  }
  c10c_tensor *src = NULL;
  if (pa_cls.tensor != NULL && PyObject_TypeCheck(value, pa_cls.tensor)) {
    src = pyc10_handle(value);
    if (src == NULL) return -1;
  } else if (!(PyLong_Check(value) || PyFloat_Check(value) || PyComplex_Check(value) ||
               is_numpy_int(value))) { /* torch's valueToTensor */
    PyObject *name = type_name(value);
    PyObject *type = name == NULL ? NULL : PyObject_CallMethod(self, "type", NULL);
    if (type != NULL) TYPE_ERROR("can't assign a %U to a %U", name, type);
    Py_XDECREF(name);
    Py_XDECREF(type);
    return -1;
  }
  /* a number: its element of self's dtype, converted with torch's checks before indexing */
  _Alignas(16) unsigned char bytes[16];
  PyObject *scalar = NULL; /* a 0-dim CPU tensor holding it, where fill_ converts it */
  bool fast = src == NULL && encode_fast(value, c10c_tensor_dtype(h), bytes);
  if (src == NULL && !fast) {
    c10c_tensor *z = NULL;
    c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
    c10c_status st =
        c10c_tensor_empty(&z, NULL, 0, c10c_tensor_dtype(h), cpu, C10C_MEMORY_FORMAT_CONTIGUOUS);
    scalar = st == C10C_STATUS_OK ? pyc10_wrap(z) : pyc10_raise(st);
    if (scalar == NULL) return -1;
    static PyObject *fill_name;
    if (fill_name == NULL) fill_name = PyUnicode_InternFromString("fill_");
    PyObject *call[2] = {scalar, value};
    PyObject *r = fill_name == NULL ? NULL : PyObject_VectorcallMethod(fill_name, call, 2, NULL);
    if (r == NULL) {
      Py_DECREF(scalar);
      return -1;
    }
    Py_DECREF(r);
    src = pyc10_handle(scalar);
  }
  int rc = 0;
  if (index != Py_False) { /* x[False] = v: torch writes nothing and checks nothing */
    size_t bools = 0;
    c10c_tensor *dst = index_of(h, index, true, &bools);
    c10c_status st = C10C_STATUS_OK;
    if (dst == NULL) {
      rc = -1;
    } else if (bools > 0 && index != Py_True && !fast &&
               c10c_tensor_dtype(src) != c10c_tensor_dtype(dst)) { /* torch's index_put_ */
      RUNTIME_ERROR(
          "Index put requires the source and destination dtypes match, got %s for the "
          "destination and %s for the source.",
          c10c_dtype_c10_name(c10c_tensor_dtype(dst)), c10c_dtype_c10_name(c10c_tensor_dtype(src)));
      rc = -1;
    }
    if (rc == 0) st = fast ? c10c_tensor_fill_(dst, bytes) : copy_to(dst, src);
    c10c_tensor_release(dst);
    if (st != C10C_STATUS_OK) rc = (pyc10_raise(st), -1);
  }
  Py_XDECREF(scalar);
  return rc;
}

#define M(name, fn) \
  { name, PYC10_FASTCALL(fn), METH_FASTCALL | METH_KEYWORDS, NULL }

PyMethodDef pyc10_index_methods[] = {
    {"item", t_item, METH_NOARGS,
     "item() -> number\n\nThe one element as a Python number (bool, int, float or complex)."},
    {"tolist", t_tolist, METH_NOARGS,
     "tolist() -> list\n\nThe elements as nested lists of Python numbers (a 0-dim tensor: its "
     "item)."},
    {NULL, NULL, 0, NULL},
};

PyType_Slot pyc10_index_slots[] = {
    {Py_mp_subscript, (void *)tensor_getitem},
    {Py_mp_ass_subscript, (void *)tensor_setitem},
    {0, NULL},
};
