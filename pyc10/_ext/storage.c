/* pyc10._ctensor.StorageBase: the C part of pyc10.UntypedStorage (torch's StorageBase), one
 * strong reference to a c10c_storage, and Tensor.untyped_storage(). This file owns the object's
 * identity (one Python object per storage), construction, byte copies, attributes and _setup;
 * the methods, the mapping protocol and the type's spec are in storage_methods.c, above it (the
 * files that only need a storage's pointer or its object, data.c and inplace.c, call this one).
 *
 * Every libc10c storage has at most one Python object at a time (torch keeps it in the
 * StorageImpl's PyObject slot; libc10c has none, so a small open-addressing table maps storage
 * pointers to their live object): tensors over one storage give the same object, so pickle and
 * deepcopy keep tensors that shared a storage sharing one.
 * Messages and exception classes are torch's (torch/csrc/Storage.cpp, StorageMethods.cpp) with
 * pyc10 for torch in class names; the few deliberate differences are said where they are.
 */
#include <Python.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>

#include "common.h"
#include "storage.h"

/* Set by StorageBase._setup (pyc10._storage): the Python subclass every storage is made as, and
 * the Python pieces C hands over to. */
static PyTypeObject *storage_type; /* pyc10.UntypedStorage */
static allocfunc storage_alloc;
static PyObject *make_handle;       /* address -> cffi "c10c_storage *" */
static PyObject *make_device;       /* (type, index) -> pyc10.device */
PyObject *storage__not_implemented; /* pyc10.C10NotImplementedError */
static PyObject *cpu_device;        /* pyc10.device("cpu"), cached */
PyTypeObject *storage__base_type;   /* StorageBase itself (before _setup) */

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
PyObject *storage__wrap_owned(PyTypeObject *type, c10c_storage *s) {
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

PyTypeObject *storage__default_type(void) {
  return storage_type != NULL ? storage_type : storage__base_type;
}

/* The one object of a borrowed storage: the live one, or a new one holding a new reference. */
static PyObject *wrap_borrowed(c10c_storage *s) {
  StorageObject *o = live_find(s);
  if (o != NULL) {
    Py_INCREF(o);
    return (PyObject *)o;
  }
  return storage__wrap_owned(storage__default_type(), c10c_storage_retain(s));
}

c10c_storage *storage__of(PyObject *self) {
  c10c_storage *s = ((StorageObject *)self)->s;
  if (s == NULL) PyErr_SetString(RUNTIME_ERROR_CLASS, "this pyc10.UntypedStorage holds no storage");
  return s;
}

/* Raises cls with fmt, whose one %U is o's torch type name. */
PyObject *storage__raise_with_type(PyObject *cls, const char *fmt, PyObject *o) {
  PyObject *tn = pa__typename_of(o);
  if (tn == NULL) return NULL;
  PyErr_Format(cls, fmt, tn);
  Py_DECREF(tn);
  return NULL;
}

/* THPUtils_checkLong: an int (not bool) or a numpy integer. */
bool storage__check_long(PyObject *o) {
  if (PyBool_Check(o)) return false;
  if (PyLong_Check(o)) return true;
  PyObject *mod = PyObject_GetAttrString((PyObject *)Py_TYPE(o), "__module__");
  if (mod == NULL) return PyErr_Clear(), false;
  bool numpy = PyUnicode_Check(mod) && PyUnicode_CompareWithASCIIString(mod, "numpy") == 0;
  Py_DECREF(mod);
  return numpy && PyIndex_Check(o);
}

/* ---- construction -------------------------------------------------------------------------- */

/* New bytes on device. The allocator registry serves a device type and CUDA allocates on the
 * current device, so a CUDA index is made current for the allocation (torch's UntypedStorage(n,
 * device="cuda:1") and clone() allocate on that device, whatever the current one). */
c10c_status storage__new(c10c_storage **out, int64_t nbytes, c10c_device device) {
  if (device.type != C10C_DEVICE_TYPE_CUDA || device.index < 0)
    return c10c_storage_new(out, nbytes, NULL, device.type, true);
  c10c_cuda_device_guard guard = C10C_CUDA_DEVICE_GUARD_INIT;
  c10c_status st = c10c_cuda_device_guard_enter(&guard, device.index);
  if (st != C10C_STATUS_OK) return st;
  st = c10c_storage_new(out, nbytes, NULL, device.type, true);
  c10c_status restored = c10c_cuda_device_guard_exit(&guard);
  if (st == C10C_STATUS_OK && restored != C10C_STATUS_OK) {
    c10c_storage_release(*out);
    *out = NULL;
    return restored;
  }
  return st;
}

/* UntypedStorage(sequence): each item an int (bool too), stored modulo 256, as torch. */
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
int storage__copy_bytes(c10c_storage *dst, c10c_storage *src) {
  if (c10c_storage_nbytes(dst) == 0) return 0;
  c10c_tensor *d = bytes_tensor(dst);
  if (d == NULL) return -1;
  c10c_tensor *s = bytes_tensor(src);
  if (s == NULL) {
    c10c_tensor_release(d);
    return -1;
  }
  c10c_status st;
  Py_BEGIN_ALLOW_THREADS
  st = c10c_tensor_copy_(d, s);
  Py_END_ALLOW_THREADS
  c10c_tensor_release(d);
  c10c_tensor_release(s);
  return st == C10C_STATUS_OK ? 0 : (pyc10_raise(st), -1);
}

static PyObject *from_sequence(PyTypeObject *type, PyObject *seq, c10c_device device) {
  if (!PySequence_Check(seq))
    return storage__raise_with_type(
        RUNTIME_ERROR_CLASS, "pyc10.UntypedStorage(): Expected a sequence type, but got %U", seq);
  Py_ssize_t n = PySequence_Size(seq);
  if (n < 0) {
    PyErr_Clear();
    return storage__raise_with_type(
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
      PyObject *tn = pa__typename_of(seq), *itn = pa__typename_of(item);
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
  if (device.type == C10C_DEVICE_TYPE_CPU) return storage__wrap_owned(type, host);
  c10c_storage *s = NULL;
  st = storage__new(&s, n, device);
  if (st != C10C_STATUS_OK) {
    c10c_storage_release(host);
    return pyc10_raise(st);
  }
  int rc = storage__copy_bytes(s, host);
  c10c_storage_release(host);
  if (rc < 0) {
    c10c_storage_release(s);
    return NULL;
  }
  return storage__wrap_owned(type, s);
}

/* torch.UntypedStorage(...): the three signatures of torch's THPStorage_pynew. */
PyObject *storage__tp_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
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
  c10c_status st = storage__new(&s, size, device);
  result = st == C10C_STATUS_OK ? storage__wrap_owned(type, s) : pyc10_raise(st);
done:
  Py_XDECREF(kwnames);
  return result;
}

void storage__dealloc(PyObject *self) {
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

/* ---- properties ---------------------------------------------------------------------------- */

static PyObject *s_get_device(PyObject *self, void *closure) {
  (void)closure;
  c10c_storage *s = storage__of(self);
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
  c10c_storage *s = storage__of(self);
  return s ? PyBool_FromLong(c10c_storage_device(s).type == C10C_DEVICE_TYPE_CUDA) : NULL;
}

static PyObject *s_get_handle(PyObject *self, void *closure) {
  (void)closure;
  StorageObject *o = (StorageObject *)self;
  if (o->handle == NULL) {
    if (storage__of(self) == NULL) return NULL;
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
PyObject *storage__setup(PyObject *cls, PyObject *args) {
  (void)cls;
  PyObject *type, *handle_fn, *device_fn, *ni;
  if (!PyArg_ParseTuple(args, "O!OOO:_setup", &PyType_Type, &type, &handle_fn, &device_fn, &ni))
    return NULL;
  int ok = PyObject_IsSubclass(type, (PyObject *)storage__base_type);
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
  PA_SETREF(storage__not_implemented, ni);
  Py_RETURN_NONE;
}

PyGetSetDef storage__getset[] = {
    {"device", s_get_device, NULL, "The device of the bytes.", NULL},
    {"is_cuda", s_get_is_cuda, NULL, "Whether the bytes are on a CUDA device.", NULL},
    {"_handle", s_get_handle, NULL, "The storage as a cffi ``c10c_storage *`` (borrowed).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
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
