/* pyc10._ctensor.StorageBase: the C part of pyc10.UntypedStorage (torch's StorageBase), one
 * strong reference to a c10c_storage, and Tensor.untyped_storage().
 *
 * Every libc10c storage has at most one Python object at a time (torch keeps it in the
 * StorageImpl's PyObject slot; libc10c has none, so a small open-addressing table maps storage
 * pointers to their live object): tensors over one storage give the same object, so pickle and
 * deepcopy keep tensors that shared a storage sharing one. Byte copies and fills go through uint8
 * tensors over the storages, so they work on every device libc10c's copy_ and fill_ serve.
 * Messages and exception classes are torch's (torch/csrc/Storage.cpp, StorageMethods.cpp) with
 * pyc10 for torch in class names; the few deliberate differences are said where they are.
 */
#include <Python.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>

#include "common.h"

typedef struct {
  PyObject_HEAD c10c_storage *s; /* one strong reference, released in tp_dealloc */
  PyObject *handle;              /* the pointer as a cffi cdata, made on first use */
  PyObject *weakreflist;
} StorageObject;

/* Set by StorageBase._setup (pyc10._storage): the Python subclass every storage is made as, and
 * the Python pieces C hands over to. */
static PyTypeObject *storage_type; /* pyc10.UntypedStorage */
static allocfunc storage_alloc;
static PyObject *make_handle;     /* address -> cffi "c10c_storage *" */
static PyObject *make_device;     /* (type, index) -> pyc10.device */
static PyObject *not_implemented; /* pyc10.C10NotImplementedError */
static PyObject *cpu_device;      /* pyc10.device("cpu"), cached */
static PyTypeObject *base_type;   /* StorageBase itself (before _setup) */

#define TYPE_ERROR_CLASS  (pa_cls.type_error != NULL ? pa_cls.type_error : PyExc_TypeError)
#define VALUE_ERROR_CLASS (pa_cls.value_error != NULL ? pa_cls.value_error : PyExc_ValueError)
#define RUNTIME_ERROR_CLASS \
  (pa_cls.runtime_error != NULL ? pa_cls.runtime_error : PyExc_RuntimeError)
#define INDEX_ERROR_CLASS (pa_cls.index_error != NULL ? pa_cls.index_error : PyExc_IndexError)

/* The last release of a storage over memory another library owns runs its deleter, which may
 * run Python code: KEEPING_ERROR (common.h) sets any exception in flight aside around it. */

static void release_storage(c10c_storage *s) {
  if (s != NULL) KEEPING_ERROR(c10c_storage_release(s));
}

/* ---- storage pointer -> its live Python object --------------------------------------------- */

/* Linear probing with backward-shift deletion (no tombstones); the GIL guards it. A key stays
 * valid while its object lives: the object holds a strong reference, so the address cannot be
 * reused by another storage before the entry goes (in tp_dealloc). */
static struct {
  c10c_storage **keys;
  StorageObject **values;
  size_t cap, n; /* cap: a power of two, or 0 */
} live;

static size_t slot_of(const c10c_storage *s, size_t mask) {
  uint64_t h = (uint64_t)(uintptr_t)s;
  h ^= h >> 33;
  h *= UINT64_C(0xff51afd7ed558ccd);
  h ^= h >> 33;
  return (size_t)h & mask;
}

static StorageObject *live_find(const c10c_storage *s) {
  if (live.n == 0) return NULL;
  size_t mask = live.cap - 1;
  for (size_t i = slot_of(s, mask);; i = (i + 1) & mask) {
    if (live.keys[i] == s) return live.values[i];
    if (live.keys[i] == NULL) return NULL;
  }
}

static int live_grow(void) {
  size_t cap = live.cap ? live.cap * 2 : 64;
  c10c_storage **keys = PyMem_Calloc(cap, sizeof *keys);
  StorageObject **values = PyMem_Calloc(cap, sizeof *values);
  if (keys == NULL || values == NULL) {
    PyMem_Free(keys);
    PyMem_Free(values);
    PyErr_NoMemory();
    return -1;
  }
  for (size_t j = 0; j < live.cap; j++) {
    if (live.keys[j] == NULL) continue;
    size_t i = slot_of(live.keys[j], cap - 1);
    while (keys[i] != NULL) i = (i + 1) & (cap - 1);
    keys[i] = live.keys[j];
    values[i] = live.values[j];
  }
  PyMem_Free(live.keys);
  PyMem_Free(live.values);
  live.keys = keys, live.values = values, live.cap = cap;
  return 0;
}

static int live_insert(c10c_storage *s, StorageObject *o) {
  if ((live.n + 1) * 2 > live.cap && live_grow() < 0) return -1;
  size_t mask = live.cap - 1, i = slot_of(s, mask);
  while (live.keys[i] != NULL && live.keys[i] != s) i = (i + 1) & mask;
  if (live.keys[i] == NULL) live.n++;
  live.keys[i] = s;
  live.values[i] = o;
  return 0;
}

static void live_remove(const c10c_storage *s, const StorageObject *o) {
  if (live.n == 0) return;
  size_t mask = live.cap - 1, i = slot_of(s, mask);
  while (live.keys[i] != s) {
    if (live.keys[i] == NULL) return;
    i = (i + 1) & mask;
  }
  if (live.values[i] != o) return;
  live.n--;
  /* shift back the entries after i whose home slot is at or before i */
  for (size_t j = (i + 1) & mask; live.keys[j] != NULL; j = (j + 1) & mask) {
    size_t home = slot_of(live.keys[j], mask);
    if (((j - home) & mask) >= ((j - i) & mask)) {
      live.keys[i] = live.keys[j];
      live.values[i] = live.values[j];
      i = j;
    }
  }
  live.keys[i] = NULL;
  live.values[i] = NULL;
}

/* ---- wrapping ------------------------------------------------------------------------------ */

/* A new object of type owning s (a new reference, released if the object cannot be made). */
static PyObject *wrap_owned(PyTypeObject *type, c10c_storage *s) {
  allocfunc alloc = type == storage_type && storage_alloc != NULL
                        ? storage_alloc
                        : (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
  StorageObject *o = (StorageObject *)alloc(type, 0);
  if (o == NULL || live_insert(s, o) < 0) {
    Py_XDECREF(o);
    release_storage(s);
    return NULL;
  }
  o->s = s;
  return (PyObject *)o;
}

static PyTypeObject *default_type(void) { return storage_type != NULL ? storage_type : base_type; }

/* The one object of a borrowed storage: the live one, or a new one holding a new reference. */
static PyObject *wrap_borrowed(c10c_storage *s) {
  StorageObject *o = live_find(s);
  if (o != NULL) {
    Py_INCREF(o);
    return (PyObject *)o;
  }
  return wrap_owned(default_type(), c10c_storage_retain(s));
}

static c10c_storage *storage_of(PyObject *self) {
  c10c_storage *s = ((StorageObject *)self)->s;
  if (s == NULL) PyErr_SetString(RUNTIME_ERROR_CLASS, "this pyc10.UntypedStorage holds no storage");
  return s;
}

/* torch's THPUtils_typename: a class's __name__, with its module for C types outside builtins. */
static PyObject *typename_of(PyObject *o) {
  PyTypeObject *t = Py_TYPE(o);
  PyObject *name = PyObject_GetAttrString((PyObject *)t, "__name__");
  if (name == NULL || (PyType_GetFlags(t) & Py_TPFLAGS_HEAPTYPE)) return name;
  PyObject *mod = PyObject_GetAttrString((PyObject *)t, "__module__");
  if (mod == NULL || !PyUnicode_Check(mod) ||
      PyUnicode_CompareWithASCIIString(mod, "builtins") == 0) {
    PyErr_Clear();
    Py_XDECREF(mod);
    return name;
  }
  PyObject *r = PyUnicode_FromFormat("%U.%U", mod, name);
  Py_DECREF(mod);
  Py_DECREF(name);
  return r;
}

/* Raises cls with fmt, whose one %U is o's torch type name. */
static PyObject *raise_with_type(PyObject *cls, const char *fmt, PyObject *o) {
  PyObject *tn = typename_of(o);
  if (tn == NULL) return NULL;
  PyErr_Format(cls, fmt, tn);
  Py_DECREF(tn);
  return NULL;
}

/* THPUtils_checkLong: an int (not bool) or a numpy integer. */
static bool check_long(PyObject *o) {
  if (PyBool_Check(o)) return false;
  if (PyLong_Check(o)) return true;
  PyObject *mod = PyObject_GetAttrString((PyObject *)Py_TYPE(o), "__module__");
  if (mod == NULL) return PyErr_Clear(), false;
  bool numpy = PyUnicode_Check(mod) && PyUnicode_CompareWithASCIIString(mod, "numpy") == 0;
  Py_DECREF(mod);
  return numpy && PyIndex_Check(o);
}

/* ---- byte copies through uint8 tensors ----------------------------------------------------- */

/* A 1-d uint8 tensor over all of s's bytes. */
static c10c_tensor *bytes_tensor(c10c_storage *s) {
  c10c_tensor *t = NULL;
  int64_t n = c10c_storage_nbytes(s), one = 1;
  c10c_status st = c10c_tensor_new_from_storage(&t, s, &n, &one, 1, 0, C10C_DTYPE_UINT8);
  if (st != C10C_STATUS_OK) pyc10_raise(st);
  return t;
}

/* dst's bytes = src's bytes (same size), on any pair of devices copy_ serves. */
static int copy_bytes(c10c_storage *dst, c10c_storage *src) {
  if (c10c_storage_nbytes(dst) == 0) return 0;
  c10c_tensor *d = bytes_tensor(dst);
  if (d == NULL) return -1;
  c10c_tensor *s = bytes_tensor(src);
  if (s == NULL) {
    c10c_tensor_release(d);
    return -1;
  }
  c10c_status st;
  Py_BEGIN_ALLOW_THREADS st = c10c_tensor_copy_(d, s);
  Py_END_ALLOW_THREADS c10c_tensor_release(d);
  c10c_tensor_release(s);
  return st == C10C_STATUS_OK ? 0 : (pyc10_raise(st), -1);
}

static bool is_meta(c10c_storage *s) {
  return c10c_storage_device(s).type == C10C_DEVICE_TYPE_META;
}

static PyObject *meta_error(void) {
  PyErr_SetString(not_implemented != NULL ? not_implemented : PyExc_NotImplementedError,
                  "Not available for 'meta' device type");
  return NULL;
}

/* A bytes object of n bytes from offset start of s (copied to the host first off the CPU). */
static PyObject *read_bytes(c10c_storage *s, int64_t start, int64_t n) {
  if (is_meta(s)) return meta_error();
  if (n == 0) return PyBytes_FromStringAndSize(NULL, 0);
  if (c10c_storage_device(s).type == C10C_DEVICE_TYPE_CPU)
    return PyBytes_FromStringAndSize((const char *)c10c_storage_data(s) + start, (Py_ssize_t)n);
  c10c_storage *host = NULL;
  c10c_status st =
      c10c_storage_new(&host, c10c_storage_nbytes(s), NULL, C10C_DEVICE_TYPE_CPU, true);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  PyObject *r =
      copy_bytes(host, s) < 0
          ? NULL
          : PyBytes_FromStringAndSize((const char *)c10c_storage_data(host) + start, (Py_ssize_t)n);
  c10c_storage_release(host);
  return r;
}

/* Sets bytes [start, stop) of s to value. */
static int fill_bytes(c10c_storage *s, int64_t start, int64_t stop, uint8_t value) {
  if (stop <= start) return 0;
  if (c10c_storage_is_read_only(s)) {
    PyErr_SetString(RUNTIME_ERROR_CLASS, "cannot write to a read-only storage");
    return -1;
  }
  if (c10c_storage_device(s).type == C10C_DEVICE_TYPE_CPU) {
    memset((unsigned char *)c10c_storage_data(s) + start, value, (size_t)(stop - start));
    return 0;
  }
  c10c_tensor *t = NULL;
  int64_t n = stop - start, one = 1;
  c10c_status st = c10c_tensor_new_from_storage(&t, s, &n, &one, 1, start, C10C_DTYPE_UINT8);
  if (st == C10C_STATUS_OK) st = c10c_tensor_fill_(t, &value);
  c10c_tensor_release(t);
  return st == C10C_STATUS_OK ? 0 : (pyc10_raise(st), -1);
}

/* ---- construction -------------------------------------------------------------------------- */

static c10c_status new_storage(c10c_storage **out, int64_t nbytes, c10c_device device) {
  return c10c_storage_new(out, nbytes, NULL, device.type, true);
}

/* UntypedStorage(sequence): each item an int (bool too), stored modulo 256, as torch. */
static PyObject *from_sequence(PyTypeObject *type, PyObject *seq, c10c_device device) {
  if (!PySequence_Check(seq))
    return raise_with_type(RUNTIME_ERROR_CLASS,
                           "pyc10.UntypedStorage(): Expected a sequence type, but got %U", seq);
  Py_ssize_t n = PySequence_Size(seq);
  if (n < 0) {
    PyErr_Clear();
    return raise_with_type(
        RUNTIME_ERROR_CLASS,
        "pyc10.UntypedStorage(): Could not obtain the length of sequence of type %U", seq);
  }
  c10c_storage *host = NULL;
  c10c_status st = c10c_storage_new(&host, n, NULL, C10C_DEVICE_TYPE_CPU, true);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  unsigned char *data = c10c_storage_data(host);
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = PySequence_GetItem(seq, i);
    if (item == NULL) {
      c10c_storage_release(host);
      return NULL;
    }
    int overflow = 0;
    long long v = PyLong_Check(item) ? PyLong_AsLongLongAndOverflow(item, &overflow) : 0;
    if (!PyLong_Check(item) || overflow) {
      PyObject *tn = typename_of(seq), *itn = typename_of(item);
      if (tn != NULL && itn != NULL)
        PyErr_Format(RUNTIME_ERROR_CLASS,
                     "pyc10.UntypedStorage(): tried to construct a storage from a sequence (%U), "
                     "but one of the items was of type %U instead of int",
                     tn, itn);
      Py_XDECREF(tn);
      Py_XDECREF(itn);
      Py_DECREF(item);
      c10c_storage_release(host);
      return NULL;
    }
    Py_DECREF(item);
    data[i] = (unsigned char)v;
  }
  if (device.type == C10C_DEVICE_TYPE_CPU) return wrap_owned(type, host);
  c10c_storage *s = NULL;
  st = new_storage(&s, n, device);
  if (st != C10C_STATUS_OK) {
    c10c_storage_release(host);
    return pyc10_raise(st);
  }
  int rc = copy_bytes(s, host);
  c10c_storage_release(host);
  if (rc < 0) {
    c10c_storage_release(s);
    return NULL;
  }
  return wrap_owned(type, s);
}

/* torch.UntypedStorage(...): the three signatures of torch's THPStorage_pynew. */
static PyObject *storage_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static pa_parser p = PA_PARSER("UntypedStorage", "__new__");
  Py_ssize_t nargs = PyTuple_Size(args), nkw = kwargs != NULL ? PyDict_Size(kwargs) : 0;
  PyObject *stack[PA_MAX_PARAMS + 1];
  if (nargs + nkw > PA_MAX_PARAMS) {
    PyErr_Format(TYPE_ERROR_CLASS, "pyc10.UntypedStorage() takes at most %d arguments",
                 PA_MAX_PARAMS);
    return NULL;
  }
  for (Py_ssize_t i = 0; i < nargs; i++) stack[i] = PyTuple_GetItem(args, i);
  PyObject *kwnames = NULL;
  if (nkw > 0) {
    kwnames = PyTuple_New(nkw);
    if (kwnames == NULL) return NULL;
    Py_ssize_t pos = 0, k = 0;
    PyObject *key, *value;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      Py_INCREF(key);
      PyTuple_SetItem(kwnames, k, key);
      stack[nargs + k++] = value;
    }
  }
  pa_args r;
  PyObject *result = NULL;
  if (pa_parse(&p, stack, nargs, kwnames, &r) < 0) goto done;
  c10c_device device = {C10C_DEVICE_TYPE_CPU, -1};
  bool has_device;
  int64_t size = 0;
  int dev_param = r.overload == 0 ? 1 : 2, alloc_param = dev_param - 1;
  if (pa_device(&r, dev_param, &device, &has_device) < 0) goto done;
  if (pa_has(&r, alloc_param)) {
    PyErr_SetString(RUNTIME_ERROR_CLASS,
                    "pyc10.UntypedStorage(): allocator= is not supported: pyc10 allocates from "
                    "the device's installed allocator (pyc10.memory)");
    goto done;
  }
  if (r.overload == 2) {
    result = from_sequence(type, r.obj[0], device);
    goto done;
  }
  if (r.overload == 1 && pa_int(&r, 0, &size) < 0) goto done;
  c10c_storage *s = NULL;
  c10c_status st = new_storage(&s, size, device);
  result = st == C10C_STATUS_OK ? wrap_owned(type, s) : pyc10_raise(st);
done:
  Py_XDECREF(kwnames);
  return result;
}

static void storage_dealloc(PyObject *self) {
  StorageObject *o = (StorageObject *)self;
  PyTypeObject *tp = Py_TYPE(self);
  if (o->weakreflist != NULL) PyObject_ClearWeakRefs(self);
  c10c_storage *s = o->s;
  o->s = NULL;
  if (s != NULL) live_remove(s, o);
  Py_CLEAR(o->handle);
  release_storage(s); /* may run a deleter that calls back into Python */
  freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  tp_free(self);
  Py_DECREF(tp);
}

/* ---- methods without arguments ------------------------------------------------------------- */

static PyObject *s_nbytes(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_storage *s = storage_of(self);
  return s ? PyLong_FromLongLong((long long)c10c_storage_nbytes(s)) : NULL;
}

static PyObject *s_element_size(PyObject *self, PyObject *unused) {
  (void)unused;
  return storage_of(self) ? PyLong_FromLong(1) : NULL;
}

static PyObject *s_data_ptr(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_storage *s = storage_of(self);
  return s ? PyLong_FromVoidPtr(c10c_storage_data(s)) : NULL;
}

static PyObject *s_resizable(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_storage *s = storage_of(self);
  return s ? PyBool_FromLong(c10c_storage_resizable(s)) : NULL;
}

static PyObject *s_use_count(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_storage *s = storage_of(self);
  return s ? PyLong_FromUnsignedLong(c10c_storage_use_count(s)) : NULL;
}

/* pyc10 has no shared-memory storages (libc10c has no such allocator): always False, where torch
 * says True after share_memory_ and for from_file storages. */
static PyObject *s_is_shared(PyObject *self, PyObject *unused) {
  (void)unused;
  return storage_of(self) ? Py_NewRef(Py_False) : NULL;
}

static PyObject *s_tolist(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_storage *s = storage_of(self);
  if (s == NULL) return NULL;
  PyObject *bytes = read_bytes(s, 0, c10c_storage_nbytes(s));
  if (bytes == NULL) return NULL;
  Py_ssize_t n = PyBytes_Size(bytes);
  const unsigned char *data = (const unsigned char *)PyBytes_AsString(bytes);
  PyObject *list = PyList_New(n);
  for (Py_ssize_t i = 0; list != NULL && i < n; i++) {
    PyObject *v = PyLong_FromLong(data[i]); /* small ints: cached, cannot fail */
    PyList_SetItem(list, i, v);
  }
  Py_DECREF(bytes);
  return list;
}

static PyObject *s_bytes(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_storage *s = storage_of(self);
  return s ? read_bytes(s, 0, c10c_storage_nbytes(s)) : NULL;
}

static PyObject *s_iter(PyObject *self) {
  PyObject *list = s_tolist(self, NULL);
  if (list == NULL) return NULL;
  PyObject *it = PyObject_GetIter(list);
  Py_DECREF(list);
  return it;
}

/* A storage of the same size on the same device holding a copy of the bytes (torch's clone). */
static PyObject *s_clone(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_storage *s = storage_of(self);
  if (s == NULL) return NULL;
  c10c_storage *out = NULL;
  c10c_status st = new_storage(&out, c10c_storage_nbytes(s), c10c_storage_device(s));
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  if (!is_meta(s) && copy_bytes(out, s) < 0) {
    c10c_storage_release(out);
    return NULL;
  }
  return wrap_owned(default_type(), out);
}

/* CPU storages cannot move to shared memory in pyc10 (torch moves them to POSIX shared memory
 * for torch.multiprocessing); other devices need no move, as torch: self. */
static PyObject *s_share_memory_(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_storage *s = storage_of(self);
  if (s == NULL) return NULL;
  c10c_device_type t = c10c_storage_device(s).type;
  if (t == C10C_DEVICE_TYPE_CPU || t == C10C_DEVICE_TYPE_META) {
    PyErr_SetString(RUNTIME_ERROR_CLASS,
                    "share_memory_(): pyc10 cannot move a storage to shared memory (libc10c has "
                    "no shared-memory allocator, and pyc10 no torch.multiprocessing)");
    return NULL;
  }
  return Py_NewRef(self);
}

/* ---- methods with arguments (the parser, kind UntypedStorage) ------------------------------ */

/* resize_(size): torch checks the type itself (RuntimeError "resize_ expects an int"). */
static PyObject *s_resize_(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  static pa_parser p = PA_PARSER("UntypedStorage", "resize_");
  pa_args r;
  c10c_storage *s = storage_of(self);
  if (s == NULL || pa_parse(&p, args, nargs, kwnames, &r) < 0) return NULL;
  if (!check_long(r.obj[0]))
    return raise_with_type(RUNTIME_ERROR_CLASS, "resize_ expects an int, but got %U", r.obj[0]);
  int64_t size;
  if (pa_index(r.obj[0], &size) < 0) return NULL;
  c10c_status st = c10c_storage_resize(s, size);
  return st == C10C_STATUS_OK ? Py_NewRef(self) : pyc10_raise(st);
}

/* torch's THPByteUtils_checkReal and unpackReal: an int or bool, kept modulo 256. */
static int byte_value(PyObject *o, uint8_t *out) {
  int overflow;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow) {
    PyErr_SetString(VALUE_ERROR_CLASS, "Overflow when unpacking long long");
    return -1;
  }
  if (v == -1 && PyErr_Occurred()) return -1;
  *out = (uint8_t)v;
  return 0;
}

static PyObject *s_fill_(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
  static pa_parser p = PA_PARSER("UntypedStorage", "fill_");
  pa_args r;
  c10c_storage *s = storage_of(self);
  if (s == NULL || pa_parse(&p, args, nargs, kwnames, &r) < 0) return NULL;
  if (!PyLong_Check(r.obj[0]))
    return raise_with_type(RUNTIME_ERROR_CLASS, "fill_ expects int, but got %U", r.obj[0]);
  uint8_t v;
  if (byte_value(r.obj[0], &v) < 0) return NULL;
  if (is_meta(s)) return Py_NewRef(self);
  return fill_bytes(s, 0, c10c_storage_nbytes(s), v) < 0 ? NULL : Py_NewRef(self);
}

static PyObject *s_copy_(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
  static pa_parser p = PA_PARSER("UntypedStorage", "copy_");
  pa_args r;
  c10c_storage *s = storage_of(self);
  if (s == NULL || pa_parse(&p, args, nargs, kwnames, &r) < 0) return NULL;
  c10c_storage *src = storage_of(r.obj[0]);
  if (src == NULL) return NULL;
  int64_t n = c10c_storage_nbytes(s), m = c10c_storage_nbytes(src);
  if (n != m)
    return PyErr_Format(RUNTIME_ERROR_CLASS,
                        "size does not match, self was %lld bytes but src was %lld bytes",
                        (long long)n, (long long)m);
  if (c10c_storage_is_read_only(s) && n > 0) {
    PyErr_SetString(RUNTIME_ERROR_CLASS, "cannot write to a read-only storage");
    return NULL;
  }
  if (is_meta(s) || is_meta(src)) return Py_NewRef(self);
  return copy_bytes(s, src) < 0 ? NULL : Py_NewRef(self);
}

/* Reverses each unit-byte group of n bytes at p. */
static void swap_units(unsigned char *p, size_t n, size_t unit) {
  for (size_t i = 0; i + unit <= n; i += unit)
    for (size_t a = i, b = i + unit - 1; a < b; a++, b--) {
      unsigned char t = p[a];
      p[a] = p[b];
      p[b] = t;
    }
}

/* from_buffer(buffer, byte_order=None, count=-1, offset=0, dtype=None): torch's
 * THPStorage_fromBuffer (its checks, in its order, and its messages). */
static PyObject *s_from_buffer(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
  static pa_parser p = PA_PARSER("UntypedStorage", "from_buffer");
  pa_args r;
  if (pa_parse(&p, args, nargs, kwnames, &r) < 0) return NULL;
  int64_t count, offset;
  int dtype;
  if (pa_int(&r, 2, &count) < 0 || pa_int(&r, 3, &offset) < 0 || pa_dtype(&r, 4, &dtype) < 0)
    return NULL;
  if (dtype < 0) {
    PyErr_SetString(RUNTIME_ERROR_CLASS, "argument 'dtype' cannot be None");
    return NULL;
  }
  c10c_dtype d = (c10c_dtype)dtype;
  bool independent = d == C10C_DTYPE_UINT8 || d == C10C_DTYPE_INT8 || d == C10C_DTYPE_FLOAT8_E5M2 ||
                     d == C10C_DTYPE_FLOAT8_E5M2FNUZ || d == C10C_DTYPE_FLOAT8_E4M3FN ||
                     d == C10C_DTYPE_FLOAT8_E4M3FNUZ;
  const char *order = NULL;
  if (r.obj[1] != NULL && (order = PyUnicode_AsUTF8AndSize(r.obj[1], NULL)) == NULL) return NULL;
  if (!independent && order == NULL) {
    PyErr_SetString(RUNTIME_ERROR_CLASS, "function missing required argument 'byte_order' (pos 2)");
    return NULL;
  }
  const uint16_t probe = 1;
  bool little = *(const unsigned char *)&probe == 1, swap = false;
  if (!independent) {
    if (strcmp(order, "native") == 0) {
      swap = false;
    } else if (strcmp(order, "big") == 0) {
      swap = little;
    } else if (strcmp(order, "little") == 0) {
      swap = !little;
    } else {
      return PyErr_Format(VALUE_ERROR_CLASS,
                          "invalid byte_order '%s' (expected 'big', 'little', or 'native')", order);
    }
  }
  /* the bytes through a memoryview: the limited API (3.10) has no buffer protocol */
  PyObject *mv = PyMemoryView_FromObject(r.obj[0]);
  if (mv == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) return NULL;
    PyErr_Clear();
    return raise_with_type(TYPE_ERROR_CLASS, "a bytes-like object is required, not '%U'", r.obj[0]);
  }
  PyObject *bytes = PyBytes_FromObject(mv);
  Py_DECREF(mv);
  if (bytes == NULL) return NULL;
  PyObject *result = NULL;
  int64_t size = (int64_t)c10c_dtype_itemsize(d), len = (int64_t)PyBytes_Size(bytes);
  if (offset < 0 || offset > len) {
    /* torch's fmt arguments are in this order */
    PyErr_Format(VALUE_ERROR_CLASS,
                 "offset must be non-negative and no greater than buffer length (%lld) , but got "
                 "%lld",
                 (long long)offset, (long long)len);
    goto done;
  }
  if (count < 0) {
    if ((len - offset) % size != 0) {
      PyErr_Format(VALUE_ERROR_CLASS,
                   "buffer size (%lld) must be a multiple of element size (%lld)", (long long)len,
                   (long long)size);
      goto done;
    }
    count = (len - offset) / size;
  }
  if (count > (len - offset) / size) {
    PyErr_Format(VALUE_ERROR_CLASS,
                 "buffer has only %lld elements after offset %lld, but specified a size of %lld",
                 (long long)(len - offset), (long long)offset, (long long)count);
    goto done;
  }
  bool known = independent || d == C10C_DTYPE_BOOL || d == C10C_DTYPE_INT16 ||
               d == C10C_DTYPE_INT32 || d == C10C_DTYPE_INT64 || d == C10C_DTYPE_FLOAT16 ||
               d == C10C_DTYPE_BFLOAT16 || d == C10C_DTYPE_FLOAT32 || d == C10C_DTYPE_FLOAT64 ||
               d == C10C_DTYPE_COMPLEX64 || d == C10C_DTYPE_COMPLEX128;
  if (!known) {
    PyErr_Format(RUNTIME_ERROR_CLASS, "Unknown type: %s", c10c_dtype_c10_name(d));
    goto done;
  }
  c10c_storage *s = NULL;
  size_t nbytes = (size_t)(count * size);
  c10c_status st = c10c_storage_new(&s, (int64_t)nbytes, NULL, C10C_DEVICE_TYPE_CPU, true);
  if (st != C10C_STATUS_OK) {
    pyc10_raise(st);
    goto done;
  }
  unsigned char *data = c10c_storage_data(s);
  if (nbytes > 0) memcpy(data, PyBytes_AsString(bytes) + offset, nbytes);
  if (d == C10C_DTYPE_BOOL) {
    for (size_t i = 0; i < nbytes; i++) data[i] = data[i] != 0;
  } else if (swap) {
    /* complex numbers swap their real and imaginary parts each (torch's decode) */
    bool complex = d == C10C_DTYPE_COMPLEX64 || d == C10C_DTYPE_COMPLEX128;
    swap_units(data, nbytes, (size_t)size / (complex ? 2 : 1));
  }
  result = wrap_owned(cls == (PyObject *)base_type ? default_type() : (PyTypeObject *)cls, s);
done:
  Py_DECREF(bytes);
  return result;
}

/* ---- memory owned by a Python object (from_file's mappings) -------------------------------- */

/* The storage deleter of _from_owner: drops the owner with the GIL held (it may run on any
 * thread), keeping any exception in flight; after the interpreter is gone nothing is released. */
static void release_owner(void *ctx) {
  if (!Py_IsInitialized()) return;
  PyGILState_STATE gil = PyGILState_Ensure();
  KEEPING_ERROR(Py_DECREF((PyObject *)ctx));
  PyGILState_Release(gil);
}

/* _from_owner(address, nbytes, owner, read_only): a CPU storage over nbytes at address, memory
 * that owner keeps valid (from_file's mapping), holding owner until its last reference goes. */
static PyObject *s_from_owner(PyObject *cls, PyObject *args) {
  PyObject *address, *owner;
  long long nbytes;
  int read_only;
  if (!PyArg_ParseTuple(args, "OLOp:_from_owner", &address, &nbytes, &owner, &read_only))
    return NULL;
  void *data = PyLong_AsVoidPtr(address);
  if (data == NULL && PyErr_Occurred()) return NULL;
  c10c_storage *s = NULL;
  c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
  Py_INCREF(owner);
  c10c_status st = c10c_storage_new_external(&s, data, (int64_t)nbytes, cpu, release_owner, owner);
  if (st != C10C_STATUS_OK) {
    Py_DECREF(owner);
    return pyc10_raise(st);
  }
  if (read_only) c10c_storage_set_read_only(s);
  return wrap_owned(cls == (PyObject *)base_type ? default_type() : (PyTypeObject *)cls, s);
}

/* ---- mapping protocol ---------------------------------------------------------------------- */

static Py_ssize_t storage_length(PyObject *self) {
  c10c_storage *s = storage_of(self);
  return s ? (Py_ssize_t)c10c_storage_nbytes(s) : -1;
}

/* The slice's bounds on n bytes, or -1 with torch's error for a step other than 1. */
static int unit_slice(PyObject *slice, int64_t n, Py_ssize_t *start, Py_ssize_t *length) {
  Py_ssize_t stop, step;
  if (PySlice_Unpack(slice, start, &stop, &step) < 0) return -1;
  *length = PySlice_AdjustIndices((Py_ssize_t)n, start, &stop, step);
  if (step != 1) {
    PyErr_Format(RUNTIME_ERROR_CLASS,
                 "Trying to slice with a step of %zd, but only a step of 1 is supported", step);
    return -1;
  }
  return 0;
}

/* The byte at an index (negative from the end); a slice is a new storage over the same bytes
 * (not resizable, keeping the base alive), as torch. */
static PyObject *storage_getitem(PyObject *self, PyObject *index) {
  c10c_storage *s = storage_of(self);
  if (s == NULL) return NULL;
  if (is_meta(s)) return meta_error();
  int64_t n = c10c_storage_nbytes(s);
  if (check_long(index)) {
    int64_t i;
    if (pa_index(index, &i) < 0) return NULL;
    if (i < 0) i += n;
    if (i < 0 || i >= n)
      return PyErr_Format(INDEX_ERROR_CLASS, "index %lld out of range for storage of size %lld",
                          (long long)i, (long long)n);
    if (c10c_storage_device(s).type == C10C_DEVICE_TYPE_CPU)
      return PyLong_FromLong(((const unsigned char *)c10c_storage_data(s))[i]);
    PyObject *b = read_bytes(s, i, 1);
    if (b == NULL) return NULL;
    PyObject *v = PyLong_FromLong(((const unsigned char *)PyBytes_AsString(b))[0]);
    Py_DECREF(b);
    return v;
  }
  if (PySlice_Check(index)) {
    Py_ssize_t start, length;
    if (unit_slice(index, n, &start, &length) < 0) return NULL;
    unsigned char *data = c10c_storage_data(s);
    c10c_storage *view = NULL;
    c10c_status st = c10c_storage_new_external(
        &view, data != NULL ? data + start : NULL, (int64_t)length, c10c_storage_device(s),
        (c10c_deleter)c10c_storage_release, c10c_storage_retain(s));
    if (st != C10C_STATUS_OK) {
      c10c_storage_release(s); /* the base reference the view did not take */
      return pyc10_raise(st);
    }
    if (c10c_storage_is_read_only(s)) c10c_storage_set_read_only(view);
    return wrap_owned(default_type(), view);
  }
  return raise_with_type(TYPE_ERROR_CLASS, "can't index a pyc10.UntypedStorage with %U", index);
}

/* s[i] = v and s[a:b] = v for an int v (modulo 256). Deliberate differences from torch, whose
 * __setitem__ raises RuntimeError "out of bounds" for every negative index: a negative index
 * counts from the end and an index out of range raises __getitem__'s IndexError. */
static int storage_setitem(PyObject *self, PyObject *index, PyObject *value) {
  c10c_storage *s = storage_of(self);
  if (s == NULL) return -1;
  if (value == NULL) {
    PyErr_SetString(TYPE_ERROR_CLASS, "'UntypedStorage' object doesn't support item deletion");
    return -1;
  }
  if (!PyLong_Check(value)) {
    raise_with_type(RUNTIME_ERROR_CLASS,
                    "can only set storage content with a int types, but got %U instead", value);
    return -1;
  }
  uint8_t v;
  if (byte_value(value, &v) < 0) return -1;
  int64_t n = c10c_storage_nbytes(s);
  if (check_long(index)) {
    int64_t i;
    if (pa_index(index, &i) < 0) return -1;
    if (i < 0) i += n;
    if (i < 0 || i >= n) {
      PyErr_Format(INDEX_ERROR_CLASS, "index %lld out of range for storage of size %lld",
                   (long long)i, (long long)n);
      return -1;
    }
    return fill_bytes(s, i, i + 1, v);
  }
  if (PySlice_Check(index)) {
    Py_ssize_t start, length;
    if (unit_slice(index, n, &start, &length) < 0) return -1;
    return fill_bytes(s, start, start + length, v);
  }
  raise_with_type(RUNTIME_ERROR_CLASS, "can't index a pyc10.UntypedStorage with %U", index);
  return -1;
}

/* ---- properties ---------------------------------------------------------------------------- */

static PyObject *s_get_device(PyObject *self, void *closure) {
  (void)closure;
  c10c_storage *s = storage_of(self);
  if (s == NULL) return NULL;
  c10c_device d = c10c_storage_device(s);
  if (d.type == C10C_DEVICE_TYPE_CPU && d.index == -1 && cpu_device != NULL)
    return Py_NewRef(cpu_device);
  if (make_device == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "pyc10._ctensor.StorageBase._setup was not called");
    return NULL;
  }
  return PyObject_CallFunction(make_device, "ii", (int)d.type, (int)d.index);
}

static PyObject *s_get_is_cuda(PyObject *self, void *closure) {
  (void)closure;
  c10c_storage *s = storage_of(self);
  return s ? PyBool_FromLong(c10c_storage_device(s).type == C10C_DEVICE_TYPE_CUDA) : NULL;
}

static PyObject *s_get_handle(PyObject *self, void *closure) {
  (void)closure;
  StorageObject *o = (StorageObject *)self;
  if (o->handle == NULL) {
    if (storage_of(self) == NULL) return NULL;
    if (make_handle == NULL) {
      PyErr_SetString(PyExc_RuntimeError, "pyc10._ctensor.StorageBase._setup was not called");
      return NULL;
    }
    PyObject *address = PyLong_FromVoidPtr(o->s);
    if (address == NULL) return NULL;
    o->handle = PyObject_CallFunctionObjArgs(make_handle, address, NULL);
    Py_DECREF(address);
    if (o->handle == NULL) return NULL;
  }
  return Py_NewRef(o->handle);
}

/* _setup(UntypedStorage, make_handle, make_device, NotImplementedError): the Python subclass
 * storages are made as, and the Python pieces the methods need. */
static PyObject *s_setup(PyObject *cls, PyObject *args) {
  (void)cls;
  PyObject *type, *handle_fn, *device_fn, *ni;
  if (!PyArg_ParseTuple(args, "O!OOO:_setup", &PyType_Type, &type, &handle_fn, &device_fn, &ni))
    return NULL;
  int ok = PyObject_IsSubclass(type, (PyObject *)base_type);
  if (ok <= 0) {
    if (ok == 0) PyErr_SetString(PyExc_TypeError, "_setup: the class must subclass StorageBase");
    return NULL;
  }
  PyObject *cpu = PyObject_CallFunction(device_fn, "ii", (int)C10C_DEVICE_TYPE_CPU, -1);
  if (cpu == NULL) return NULL;
  PA_SETREF(cpu_device, cpu);
  Py_INCREF(type);
  PA_SETREF(storage_type, (PyTypeObject *)type);
  storage_alloc = (allocfunc)PyType_GetSlot(storage_type, Py_tp_alloc);
  Py_INCREF(handle_fn);
  PA_SETREF(make_handle, handle_fn);
  Py_INCREF(device_fn);
  PA_SETREF(make_device, device_fn);
  Py_INCREF(ni);
  PA_SETREF(not_implemented, ni);
  Py_RETURN_NONE;
}

#define FAST(fn) (PyCFunction)(void (*)(void))(fn)

static PyMethodDef storage_methods[] = {
    {"nbytes", s_nbytes, METH_NOARGS, "nbytes() -> int\n\nSize in bytes."},
    {"size", s_nbytes, METH_NOARGS, "size() -> int\n\nSize in bytes (nbytes())."},
    {"element_size", s_element_size, METH_NOARGS,
     "element_size() -> int\n\n1: an untyped storage counts bytes."},
    {"data_ptr", s_data_ptr, METH_NOARGS,
     "data_ptr() -> int\n\nAddress of the first byte (0 for an empty storage)."},
    {"resizable", s_resizable, METH_NOARGS,
     "resizable() -> bool\n\nWhether resize_ may change the size (storages over external "
     "memory, such as slices and from_file mappings, may not)."},
    {"use_count", s_use_count, METH_NOARGS,
     "use_count() -> int\n\nStrong references to the storage (Python objects and C holders)."},
    {"is_shared", s_is_shared, METH_NOARGS,
     "is_shared() -> bool\n\nAlways False: pyc10 has no shared-memory storages."},
    {"tolist", s_tolist, METH_NOARGS, "tolist() -> list[int]\n\nThe bytes as a list of ints."},
    {"_bytes", s_bytes, METH_NOARGS, "The bytes as a bytes object (copied to the host)."},
    {"clone", s_clone, METH_NOARGS,
     "clone() -> UntypedStorage\n\nA copy of the bytes in a new storage on the same device."},
    {"share_memory_", s_share_memory_, METH_NOARGS,
     "share_memory_() -> UntypedStorage\n\nself for storages off the CPU (as torch); CPU "
     "storages raise RuntimeError: pyc10 has no shared memory."},
    {"resize_", FAST(s_resize_), METH_FASTCALL | METH_KEYWORDS, NULL},
    {"fill_", FAST(s_fill_), METH_FASTCALL | METH_KEYWORDS, NULL},
    {"copy_", FAST(s_copy_), METH_FASTCALL | METH_KEYWORDS, NULL},
    {"from_buffer", FAST(s_from_buffer), METH_FASTCALL | METH_KEYWORDS | METH_CLASS, NULL},
    {"_from_owner", s_from_owner, METH_VARARGS | METH_CLASS,
     "A CPU storage over memory a Python object keeps valid, holding the object."},
    {"_setup", s_setup, METH_VARARGS | METH_CLASS, "Connect StorageBase to pyc10._storage."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef storage_getset[] = {
    {"device", s_get_device, NULL, "The device of the bytes.", NULL},
    {"is_cuda", s_get_is_cuda, NULL, "Whether the bytes are on a CUDA device.", NULL},
    {"_handle", s_get_handle, NULL, "The storage as a cffi ``c10c_storage *`` (borrowed).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef storage_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(StorageObject, weakreflist), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot storage_slots[] = {
    {Py_tp_new, (void *)storage_new},
    {Py_tp_dealloc, (void *)storage_dealloc},
    {Py_tp_methods, storage_methods},
    {Py_tp_getset, storage_getset},
    {Py_tp_members, storage_members},
    {Py_tp_iter, (void *)s_iter},
    {Py_mp_length, (void *)storage_length},
    {Py_sq_length, (void *)storage_length},
    {Py_mp_subscript, (void *)storage_getitem},
    {Py_mp_ass_subscript, (void *)storage_setitem},
    {Py_tp_doc, (void *)"The C part of pyc10.UntypedStorage: one reference to a libc10c storage."},
    {0, NULL},
};

static PyType_Spec storage_spec = {
    .name = "pyc10._ctensor.StorageBase",
    .basicsize = sizeof(StorageObject),
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .slots = storage_slots,
};

/* ---- Tensor.untyped_storage() and the module's entry point --------------------------------- */

/* The tensor keeps the storage object it handed out (torch keeps it in the StorageImpl), so
 * untyped_storage() in a loop costs a comparison; a tensor whose storage changed (set_, a new
 * .data) gets the new one. */
static PyObject *t_untyped_storage(PyObject *self, PyObject *unused) {
  (void)unused;
  TensorObject *t = (TensorObject *)self;
  c10c_tensor *h = pyc10_handle(self);
  if (h == NULL) return NULL;
  c10c_storage *st = c10c_tensor_storage(h);
  if (t->storage != NULL && ((StorageObject *)t->storage)->s == st) {
    Py_INCREF(t->storage);
    return t->storage;
  }
  PyObject *o = wrap_borrowed(st);
  if (o == NULL) return NULL;
  Py_INCREF(o);
  PA_SETREF(t->storage, o);
  return o;
}

PyMethodDef pyc10_storage_tensor_methods[] = {
    {"untyped_storage", t_untyped_storage, METH_NOARGS,
     "untyped_storage() -> UntypedStorage\n\nThe storage (shared, not copied): one object per "
     "storage while it lives."},
    {NULL, NULL, 0, NULL},
};

PyObject *pyc10_storage_wrap(c10c_storage *s) { return wrap_borrowed(s); }

c10c_storage *pyc10_storage_of(PyObject *storage) { return ((StorageObject *)storage)->s; }

int pyc10_storage_init(PyObject *module) {
  for (PyMethodDef *m = storage_methods; m->ml_name != NULL; m++)
    if (m->ml_doc == NULL) m->ml_doc = pa_doc("UntypedStorage", m->ml_name);
  PyObject *type = PyType_FromSpec(&storage_spec);
  if (type == NULL) return -1;
  base_type = (PyTypeObject *)type;
  Py_INCREF(type); /* base_type keeps one */
  if (PyModule_AddObject(module, "StorageBase", type) < 0) {
    Py_DECREF(type);
    return -1;
  }
  return 0;
}
