/* Indexing and element access: t[index] and t[index] = value with torch's basic indexing (ints,
 * slices, None, Ellipsis, bools, 0-dim integer and bool tensors, and tuples of those), and the
 * reads of elements into Python: item() and tolist() (numpy() and the array protocols: numpy.c).
 *
 * Indexing follows torch's THPVariable_getitem/setitem and applySlicing (python_variable_indexing
 * .cpp, TensorIndexing.h): an int selects (torch's "index 5 is out of bounds for dimension 0 with
 * size 3", naming the index's position in the tuple), a slice narrows (step > 0), None and a bool
 * add a dim, each Ellipsis skips the dims the other items leave. A bool (or 0-dim bool/uint8
 * tensor) is torch's one-element advanced index: the result is a copy whose new dim has size 1
 * (True) or 0 (False). Other advanced indices (index tensors, masks, lists, numpy arrays) are
 * recorded during the walk and handed with the sliced view to advindex.c (at::index, index_put_).
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
  /* a meta tensor has no element to read (torch's RuntimeError, before any copy is tried; int(),
   * float(), bool() and __index__ come through here too) */
  if (c10c_tensor_device(h).type == C10C_DEVICE_TYPE_META)
    return RUNTIME_ERROR("Tensor.item() cannot be called on meta tensors");
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

enum kind { K_INT, K_SLICE, K_NONE, K_ELLIPSIS, K_BOOL, K_TENSOR };

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

/* The one element of a 0-dim integral tensor as an int64 (torch's item(), whose RuntimeError a
 * meta one gets). */
static int item_long(c10c_tensor *h, int64_t *v) {
  if (c10c_tensor_device(h).type == C10C_DEVICE_TYPE_META) {
    RUNTIME_ERROR("Tensor.item() cannot be called on meta tensors");
    return -1;
  }
  c10c_tensor *r = readable(h);
  if (r == NULL) return -1;
  const char *p = elements(r);
  PyObject *x = p == NULL ? NULL : load(p, c10c_tensor_dtype(r));
  c10c_tensor_release(r);
  if (x == NULL) return -1;
  int rc = unpack_long(x, v);
  Py_DECREF(x);
  return rc;
}

/* A tensor item, as torch's handleDimInMultiDimIndexing: a 0-dim integral one selects (K_INT),
 * or adds a dim as a bool does when it is bool or uint8 (K_BOOL); any other is an index tensor
 * for advanced indexing (K_TENSOR, a new reference in *t). */
static int classify_tensor(c10c_tensor *h, int64_t *v, c10c_tensor **t) {
  c10c_dtype dt = c10c_tensor_dtype(h);
  if (c10c_tensor_dim(h) != 0 || !c10c_dtype_is_integral(dt, true)) {
    *t = c10c_tensor_retain(h);
    return K_TENSOR;
  }
  if (item_long(h, v) < 0) return -1;
  if (dt == C10C_DTYPE_BOOL || dt == C10C_DTYPE_UINT8) {
    *v = *v != 0;
    return K_BOOL;
  }
  return K_INT;
}

/* What one item of an index is (ints and bools with their value in *v, index tensors and
 * sequences as a tensor in *t); -1 with torch's error for what indexing does not take. */
static int classify(PyObject *o, int64_t *v, c10c_tensor **t) {
  if (o == Py_None) return K_NONE;
  if (o == Py_Ellipsis) return K_ELLIPSIS;
  if (PyBool_Check(o)) {
    *v = o == Py_True;
    return K_BOOL;
  }
  if (PyLong_Check(o)) return unpack_long(o, v) < 0 ? -1 : K_INT;
  if (PySlice_Check(o)) return K_SLICE;
  if (pa_cls.tensor != NULL && PyObject_TypeCheck(o, pa_cls.tensor)) {
    c10c_tensor *h = pyc10_handle(o);
    return h == NULL ? -1 : classify_tensor(h, v, t);
  }
  if (PySequence_Check(o)) { /* torch's sequenceToVariable */
    c10c_tensor *h = pyc10_adv_from_sequence(o);
    if (h == NULL) return -1;
    int k = classify_tensor(h, v, t);
    c10c_tensor_release(h);
    return k;
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
 * bool was True): the caller turns them into torch's advanced-index dim. Index tensors (and
 * sequences, made tensors) are recorded in adv with the dim of the view where they start; when
 * there are any, the bools are recorded there too (torch's one-element or empty long indices). */
static int apply_index_items(c10c_tensor *h, PyObject *index, bool tuple, c10c_tensor **out,
                             int64_t *bool_dims, size_t *nbool, bool *all_true, pyc10_adv *adv) {
  PyObject *const *items = &index;
  Py_ssize_t n = 1;
  *nbool = 0;
  *all_true = true;
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
  c10c_tensor *tens[MAX_ITEMS];
  int64_t ndim = (int64_t)c10c_tensor_dim(h), specified = 0;
  bool has_tensor = false;
  int rc = 0;
  Py_ssize_t classified = 0;
  for (; classified < n; classified++) {
    Py_ssize_t i = classified;
    tens[i] = NULL;
    kinds[i] = classify(items[i], &values[i], &tens[i]);
    if (kinds[i] < 0) {
      rc = -1;
      break;
    }
    if (kinds[i] == K_INT || kinds[i] == K_SLICE) specified++;
    if (kinds[i] == K_TENSOR) { /* torch's count: a mask tensor its dims, anything else one */
      c10c_dtype dt = c10c_tensor_dtype(tens[i]);
      bool mask = dt == C10C_DTYPE_BOOL || dt == C10C_DTYPE_UINT8;
      bool is_tensor = pa_cls.tensor != NULL && PyObject_TypeCheck(items[i], pa_cls.tensor);
      specified += mask && is_tensor ? (int64_t)c10c_tensor_dim(tens[i]) : 1;
      has_tensor = true;
    }
  }
  if (rc == 0 && !tuple && ndim == 0 && kinds[0] == K_INT &&
      (PyLong_Check(index) || is_numpy_int(index))) { /* torch's applySelect on a 0-dim tensor */
    if (values[0] == 0)
      INDEX_ERROR(
          "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
          "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number");
    else
      INDEX_ERROR("index %lld is out of bounds for dimension 0 with size 0", (long long)values[0]);
    rc = -1;
  }
  if (rc == 0 && !tuple && ndim == 0 && kinds[0] == K_SLICE) { /* torch's applySlice */
    c10c_tensor *out_ = NULL;
    Py_ssize_t start, stop, step;
    if (unpack_slice(index, &start, &stop, &step) < 0) return -1;
    c10c_status st = c10c_tensor_slice(&out_, h, 0, start, stop, step);
    if (st != C10C_STATUS_OK) return pyc10_raise(st), -1;
    *out = out_;
    return 0;
  }
  if (rc == 0 && specified > ndim) {
    INDEX_ERROR("too many indices for tensor of dimension %d", (int)ndim);
    rc = -1;
  }
  if (rc < 0) {
    for (Py_ssize_t i = 0; i < classified; i++) pyc10_release_tensor(tens[i]);
    return -1;
  }
  c10c_tensor *cur = c10c_tensor_retain(h), *next = NULL;
  int64_t dim = 0;
  for (Py_ssize_t i = 0; i < n && rc == 0; i++) {
    switch (kinds[i]) {
      case K_NONE:
        rc = step_to(&cur, c10c_tensor_unsqueeze(&next, cur, dim), &next);
        dim++;
        break;
      case K_BOOL:
        rc = step_to(&cur, c10c_tensor_unsqueeze(&next, cur, dim), &next);
        if (rc == 0 && has_tensor) {
          rc = pyc10_adv_add_bool(adv, dim, values[i] != 0);
        } else {
          bool_dims[(*nbool)++] = dim;
          *all_true = *all_true && values[i] != 0;
        }
        dim++;
        break;
      case K_TENSOR: {
        c10c_tensor *t = tens[i];
        c10c_dtype dt = c10c_tensor_dtype(t);
        int64_t step =
            dt == C10C_DTYPE_BOOL || dt == C10C_DTYPE_UINT8 ? (int64_t)c10c_tensor_dim(t) : 1;
        tens[i] = NULL;
        rc = pyc10_adv_add(adv, dim, t);
        dim += step;
        break;
      }
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
        /* several "..." can move dim past cur's dims, where torch reads a size out of bounds:
         * select() then refuses the dim ("Dimension out of range") */
        bool in_dims = dim >= 0 && dim < (int64_t)c10c_tensor_dim(cur);
        int64_t size = in_dims ? c10c_tensor_sizes(cur)[dim] : 0, v = values[i];
        if (in_dims && !(size > -1 - v && size > v)) {
          INDEX_ERROR("index %lld is out of bounds for dimension %zd with size %lld", (long long)v,
                      i, (long long)size);
          rc = -1;
          break;
        }
        rc = step_to(&cur, c10c_tensor_select(&next, cur, dim, v), &next);
        break;
      }
    }
  }
  if (rc < 0) {
    for (Py_ssize_t i = 0; i < n; i++) pyc10_release_tensor(tens[i]);
    pyc10_adv_release(adv);
    c10c_tensor_release(cur);
    return -1;
  }
  *out = cur;
  return 0;
}

/* apply_index_items over index, a non-tuple sequence first read as a tuple where torch does. */
static int apply_index(c10c_tensor *h, PyObject *index, c10c_tensor **out, int64_t *bool_dims,
                       size_t *nbool, bool *all_true, pyc10_adv *adv) {
  if (PyTuple_Check(index))
    return apply_index_items(h, index, true, out, bool_dims, nbool, all_true, adv);
  int as_tuple = pyc10_adv_sequence_as_tuple(index);
  if (as_tuple < 0) return -1;
  if (!as_tuple) return apply_index_items(h, index, false, out, bool_dims, nbool, all_true, adv);
  PyObject *t = PySequence_Tuple(index);
  if (t == NULL) return -1;
  int rc = apply_index_items(h, t, true, out, bool_dims, nbool, all_true, adv);
  Py_DECREF(t);
  return rc;
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
  int64_t perm[MAX_ITEMS * 2], out_strides[MAX_ITEMS * 2], op[MAX_ITEMS * 2];
  if (n > MAX_ITEMS * 2) return c10c_tensor_clone(out, v, C10C_MEMORY_FORMAT_PRESERVE);
  for (size_t i = 0; i < n; i++) op[i] = (int64_t)i == at ? 0 : strides[i];
  const int64_t *ops[1] = {op};
  pyc10_iter_order(n, 1, ops, sizes, perm);
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

/* The geometry t[i, a:b:c, ...] makes for a tuple of exact ints in range and exact slices with a
 * step > 0, the common calls: each int drops its dim and moves the offset, each slice narrows as
 * torch's slice (start and stop clamped, stride times step). The kept dims' sizes and strides in
 * sizes/strides (*nd of them) and the element offset from the tensor's first element in *delta;
 * false (no error) for any other index, which the general path takes. */
static bool basic_tuple(c10c_tensor *h, PyObject *index, int64_t *sizes, int64_t *strides,
                        size_t *nd, int64_t *delta) {
  if (!PyTuple_CheckExact(index)) return false;
  Py_ssize_t n = PyTuple_Size(index);
  size_t ndim = c10c_tensor_dim(h);
  if (n < 1 || (size_t)n > ndim) return false;
  const int64_t *hs = c10c_tensor_sizes(h), *hst = c10c_tensor_strides(h);
  int64_t off = 0;
  size_t k = 0;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *o = PyTuple_GetItem(index, i);
    int64_t size = hs[i], stride = hst[i];
    if (PyLong_CheckExact(o)) {
      int overflow = 0;
      long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
      if (overflow != 0 || v < -size || v >= size) {
        PyErr_Clear();
        return false; /* the general path raises torch's error */
      }
      off += (v < 0 ? v + size : v) * stride;
    } else if (PySlice_Check(o)) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(o, &start, &stop, &step) < 0) {
        PyErr_Clear();
        return false;
      }
      if (step <= 0) return false;
      int64_t b = start, e = stop; /* torch's slice: negatives wrap once, then clamped */
      if (b < 0) b += size;
      if (e < 0) e += size;
      b = b < 0 ? 0 : (b > size ? size : b);
      e = e < b ? b : (e > size ? size : e);
      sizes[k] = (e - b + step - 1) / step;
      if (__builtin_mul_overflow(stride, (int64_t)step, &strides[k++])) return false;
      off += b * stride;
    } else {
      return false;
    }
  }
  for (size_t d = (size_t)n; d < ndim; d++) {
    sizes[k] = hs[d];
    strides[k++] = hst[d];
  }
  *nd = k;
  *delta = off;
  return true;
}

/* t[i, a:b, ...] (see basic_tuple) as one as_strided view instead of a select or slice per item.
 * 1 with the view in *out, 0 (no error) for any other index. */
static int int_tuple(c10c_tensor *h, PyObject *index, c10c_tensor **out) {
  int64_t sizes[MAX_ITEMS], strides[MAX_ITEMS], delta;
  size_t nd;
  if (c10c_tensor_dim(h) > MAX_ITEMS || !basic_tuple(h, index, sizes, strides, &nd, &delta))
    return 0;
  int64_t offset = c10c_tensor_storage_offset(h) + delta;
  c10c_status st = c10c_tensor_as_strided(out, h, sizes, nd, strides, nd, &offset);
  if (st != C10C_STATUS_OK) {
    c10c_clear_last_error();
    return 0;
  }
  return 1;
}

/* self[index]: a view, or a copy when a bool took part (torch's advanced indexing); with index
 * tensors, the copy advindex.c makes, or for a write the sliced view, the tensors left in adv. */
static c10c_tensor *index_of(c10c_tensor *h, PyObject *index, bool for_write, size_t *bools,
                             pyc10_adv *adv) {
  int64_t bool_dims[MAX_ITEMS];
  size_t nbool;
  bool all_true;
  c10c_tensor *v = NULL, *r = NULL;
  if (bools != NULL) *bools = 0;
  if (int_tuple(h, index, &v)) return v;
  if (apply_index(h, index, &v, bool_dims, &nbool, &all_true, adv) < 0) return NULL;
  if (adv->n > 0) {
    if (for_write) return v;
    r = pyc10_adv_get(v, adv);
    pyc10_adv_release(adv);
    pyc10_release_tensor(v);
    return r;
  }
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
        return pyc10_view_result(self, c10c_tensor_select(&out, h, 0, (int64_t)i), &out);
    } else if (PySlice_Check(index)) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(index, &start, &stop, &step) < 0)
        PyErr_Clear();                                   /* the general path raises torch's error */
      else if (step > 0 && SELF_HANDLE_AGAIN(h) != NULL) /* __index__ of a bound may swap it */
        return pyc10_view_result(self, c10c_tensor_slice(&out, h, 0, start, stop, step), &out);
    }
  }
  pyc10_adv adv;
  adv.n = 0;
  /* held: an item's __index__ may resize_ or set_ self, which releases self's handle */
  c10c_tensor_retain(h);
  out = index_of(h, index, false, NULL, &adv);
  pyc10_release_tensor(h);
  return out == NULL ? NULL : pyc10_viewed(self, pyc10_wrap(out));
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

/* t[i, j, ...] = number with an exact int for every dim of a CPU tensor, the common element
 * write: the element stored in place. 1 when done, 0 (no error) to take the general path, -1
 * with the library's error (a read-only or inference tensor). */
static int set_element(c10c_tensor *h, PyObject *index, PyObject *value) {
  _Alignas(16) unsigned char bytes[16];
  int64_t sizes[MAX_ITEMS], strides[MAX_ITEMS], delta;
  size_t nd;
  if (!PyTuple_CheckExact(index) || (size_t)PyTuple_Size(index) != c10c_tensor_dim(h) ||
      c10c_tensor_dim(h) > MAX_ITEMS || c10c_tensor_device(h).type != C10C_DEVICE_TYPE_CPU)
    return 0;
  c10c_dtype dt = c10c_tensor_dtype(h);
  if (!encode_fast(value, dt, bytes) || !basic_tuple(h, index, sizes, strides, &nd, &delta) ||
      nd != 0)
    return 0;
  char *p = c10c_tensor_data(h);
  if (p == NULL) return 0;
  c10c_status st = c10c_tensor_bump_version(h); /* the library's checks of an in-place write */
  if (st != C10C_STATUS_OK) return pyc10_raise(st), -1;
  memcpy(p + delta * (int64_t)c10c_tensor_itemsize(h), bytes, c10c_tensor_itemsize(h));
  return 1;
}

/* A 0-dim CPU tensor of dtype holding fill_(value). */
static PyObject *filled_scalar(c10c_dtype dtype, PyObject *value) {
  c10c_tensor *z = NULL;
  c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
  c10c_status st = c10c_tensor_empty(&z, NULL, 0, dtype, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS);
  PyObject *scalar = st == C10C_STATUS_OK ? pyc10_wrap(z) : pyc10_raise(st);
  if (scalar == NULL) return NULL;
  static PyObject *fill_name;
  if (fill_name == NULL && (fill_name = PyUnicode_InternFromString("fill_")) == NULL)
    return Py_DECREF(scalar), NULL;
  PyObject *call[2] = {scalar, value};
  PyObject *r = PyObject_VectorcallMethod(fill_name, call, 2, NULL);
  if (r == NULL) return Py_DECREF(scalar), NULL;
  Py_DECREF(r);
  return scalar;
}

/* torch's valueToTensor for a number: an int (or bool, or numpy integer) unpacked as a long long
 * (its ValueError beyond), and the element of dtype; the reduced floats (half, bfloat16, the
 * float8s) are made from the value as a double, cast without a range check (1e300 is inf there,
 * a complex value fails as "type double"), where fill_ would check the range. */
static PyObject *scalar_tensor(c10c_dtype dtype, PyObject *value) {
  if (PyLong_Check(value) || is_numpy_int(value)) {
    PyObject *ix = PyNumber_Index(value);
    int overflow = 0;
    if (ix != NULL) PyLong_AsLongLongAndOverflow(ix, &overflow);
    Py_XDECREF(ix);
    if (PyErr_Occurred()) return NULL;
    if (overflow != 0) return VALUE_ERROR("Overflow when unpacking long long");
  }
  bool reduced = dtype == C10C_DTYPE_FLOAT16 || dtype == C10C_DTYPE_BFLOAT16 ||
                 dtype == C10C_DTYPE_FLOAT8_E5M2 || dtype == C10C_DTYPE_FLOAT8_E4M3FN ||
                 dtype == C10C_DTYPE_FLOAT8_E5M2FNUZ || dtype == C10C_DTYPE_FLOAT8_E4M3FNUZ ||
                 dtype == C10C_DTYPE_FLOAT8_E8M0FNU;
  if (!reduced) return filled_scalar(dtype, value);
  PyObject *wide = filled_scalar(C10C_DTYPE_FLOAT64, value);
  if (wide == NULL) return NULL;
  c10c_tensor *z = NULL;
  c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
  c10c_status st = c10c_tensor_empty(&z, NULL, 0, dtype, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS);
  if (st == C10C_STATUS_OK) st = c10c_tensor_copy_(z, pyc10_handle(wide));
  Py_DECREF(wide);
  if (st != C10C_STATUS_OK) {
    c10c_tensor_release(z);
    return pyc10_raise(st);
  }
  return pyc10_wrap(z);
}

static int setitem(PyObject *self, c10c_tensor *h, PyObject *index, PyObject *value);

/* self's handle and value's are held throughout: an index item's __index__ (or a slice bound's)
 * may resize_ or set_ either tensor, which swaps its handle and releases the one read here. */
static int tensor_setitem(PyObject *self, PyObject *index, PyObject *value) {
  c10c_tensor *h = pyc10_handle(self);
  if (h == NULL) return -1;
  c10c_tensor *held = NULL;
  if (value != NULL && pa_cls.tensor != NULL && PyObject_TypeCheck(value, pa_cls.tensor)) {
    if ((held = pyc10_handle(value)) == NULL) return -1;
    c10c_tensor_retain(held);
  }
  c10c_tensor_retain(h);
  int rc = setitem(self, h, index, value);
  pyc10_release_tensor(h);
  if (held != NULL) pyc10_release_tensor(held);
  return rc;
}

static int setitem(PyObject *self, c10c_tensor *h, PyObject *index, PyObject *value) {
  if (value == NULL) {
    TYPE_ERROR("Tensor does not support deleting items");
    return -1;
  }
  if (PyFloat_CheckExact(value) || PyLong_CheckExact(value)) {
    int done = set_element(h, index, value);
    if (done != 0) return done < 0 ? -1 : 0;
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
    scalar = scalar_tensor(c10c_tensor_dtype(h), value);
    if (scalar == NULL) return -1;
    src = pyc10_handle(scalar);
  }
  int rc = 0;
  if (index != Py_False) { /* x[False] = v: torch writes nothing and checks nothing */
    size_t bools = 0;
    pyc10_adv adv;
    adv.n = 0;
    c10c_tensor *dst = index_of(h, index, true, &bools, &adv);
    c10c_status st = C10C_STATUS_OK;
    if (dst == NULL) {
      rc = -1;
    } else if (adv.n > 0) { /* torch's index_put_ */
      const void *number = fast ? (const void *)bytes : NULL;
      if (scalar != NULL) number = c10c_tensor_data(src);
      rc = pyc10_adv_put(dst, &adv, number != NULL ? NULL : src, number);
      pyc10_adv_release(&adv);
      pyc10_release_tensor(dst);
      Py_XDECREF(scalar);
      return rc;
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
