/* pyc10._ctensor: the Python object behind pyc10.Tensor, and the hot paths that go through it.
 *
 * Everything pyc10 does goes through the cffi extension (pyc10._c10c) except the few calls a
 * program makes millions of times: creating a tensor and dropping it, its shape and rank, and the
 * cheapest views (view, transpose/t, t[i], t[a:b]). Through cffi each of these costs a Python
 * object with slots, a finalizer and a foreign call, 1-2 us in all, where numpy takes 0.1-0.2 us;
 * here they take a fraction of that. TensorBase owns one reference to a c10c_tensor and releases
 * it in tp_dealloc. pyc10.Tensor (Python, _tensor.py) subclasses it with everything else.
 *
 * Each fast path takes only what it is sure of (exact ints, plain slices, the default device) and
 * hands anything else to the Python method of the same meaning (_view_py, _transpose_py, ...),
 * which gives torch's full argument handling and messages. Errors from the library are raised by
 * pyc10's own raise_status, so they carry the same exception classes as every other call.
 *
 * Built against the limited API (abi3), like the cffi extension.
 */
#include <Python.h>
#include <stdbool.h>
#include <structmember.h>

#include "c10c/c10c.h"
#include "c10c/dlpack.h"
#include "common.h"

enum { MAX_FAST_DIMS = 64 };

/* Set once by pyc10._tensor (_C.setup): the Python-level pieces the fast paths hand over to. */
static PyTypeObject *tensor_type; /* pyc10.Tensor (a subclass of TensorBase) */
static allocfunc tensor_alloc;
static PyTypeObject *size_type; /* pyc10.Size */
static allocfunc size_alloc;
static PyObject *make_handle;      /* address -> cffi "c10c_tensor *" */
static PyObject *raise_status;     /* status -> raises the matching pyc10 error */
static PyObject *dtype_codes;      /* {pyc10.dtype: c10c_dtype value} */
static PyObject *buffer_error;     /* pyc10's BufferError, TypeError and ValueError classes */
static PyObject *dlpack_device_of; /* device -> DLPack (type, id) it may import to, or raises */
static PyObject *type_error;
static PyObject *value_error;
/* what from_dlpack passes to __dlpack__: the name, (1, 3), (1, 0), and the keyword names */
static PyObject *dlpack_name, *versioned_max, *cpu_dl_device;
static PyObject *kw_max, *kw_max_device, *kw_max_copy, *kw_max_device_copy;
/* __dlpack__'s keyword names, interned: call sites pass interned names, so identity matches */
static PyObject *kw_stream, *kw_max_version, *kw_dl_device, *kw_copy;

/* Whether a keyword name is `interned` (identity first, then by value). */
static bool is_keyword(PyObject *name, PyObject *interned) {
  return name == interned || PyUnicode_Compare(name, interned) == 0;
}
/* The default dtype (pyc10.set_default_dtype), as the object and its code. */
static PyObject *float32_dtype;
int pyc10_default_dtype = C10C_DTYPE_FLOAT32;

/* Stores a new reference in *slot, dropping the old one. */
static void replace(PyObject **slot, PyObject *value) {
  PyObject *old = *slot;
  Py_INCREF(value);
  *slot = value;
  Py_XDECREF(old);
}

/* Runs stmt with any exception in flight set aside: dropping the last reference to memory another
 * library owns runs its deleter, which may run Python code (pyc10.from_numpy's deleter; numpy's
 * and torch's DLPack deleters under an import) that must neither see nor clear that exception
 * (a failing call dropping its temporary tensor has one set). */
#define KEEPING_ERROR(stmt)                    \
  do {                                         \
    PyObject *type_, *value_, *traceback_;     \
    PyErr_Fetch(&type_, &value_, &traceback_); \
    stmt;                                      \
    PyErr_Restore(type_, value_, traceback_);  \
  } while (0)

/* Drops a tensor reference (NULL-safe), keeping any exception in flight. */
static void release_tensor(c10c_tensor *h) {
  if (h != NULL) KEEPING_ERROR(c10c_tensor_release(h));
}

static PyObject *raise_for(c10c_status st) {
  if (raise_status == NULL) {
    PyErr_Format(PyExc_RuntimeError, "libc10c error %d: %s", (int)st, c10c_last_error_message());
    return NULL;
  }
  PyObject *code = PyLong_FromLong((long)st);
  if (code == NULL) return NULL;
  PyObject *r = PyObject_CallFunctionObjArgs(raise_status, code, NULL);
  Py_DECREF(code);
  Py_XDECREF(r); /* raise_status always raises */
  if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "libc10c call failed");
  return NULL;
}

/* A new pyc10.Tensor owning h (a new reference, released if the object cannot be made). */
static PyObject *wrap_handle(c10c_tensor *h) {
  if (tensor_type == NULL) {
    release_tensor(h);
    PyErr_SetString(PyExc_RuntimeError, "pyc10._ctensor.setup was not called");
    return NULL;
  }
  TensorObject *t = (TensorObject *)tensor_alloc(tensor_type, 0);
  if (t == NULL) {
    release_tensor(h);
    return NULL;
  }
  t->h = h;
  return (PyObject *)t;
}

/* The tensor a library call made in *out, or its error. (Takes the pointer's address: an
 * argument `out` beside the call itself could be read before the call writes it.) */
static PyObject *result(c10c_status st, c10c_tensor *const *out) {
  return st == C10C_STATUS_OK ? wrap_handle(*out) : raise_for(st);
}

/* Calls self.<name>(*args): the Python implementation for what a fast path does not take. */
static PyObject *fall_back(PyObject *self, const char *name, PyObject *const *args,
                           Py_ssize_t nargs) {
  PyObject *method = PyObject_GetAttrString(self, name);
  if (method == NULL) return NULL;
  PyObject *tuple = PyTuple_New(nargs);
  if (tuple == NULL) {
    Py_DECREF(method);
    return NULL;
  }
  for (Py_ssize_t i = 0; i < nargs; i++) {
    Py_INCREF(args[i]);
    PyTuple_SetItem(tuple, i, args[i]);
  }
  PyObject *r = PyObject_Call(method, tuple, NULL);
  Py_DECREF(tuple);
  Py_DECREF(method);
  return r;
}

/* Reads exact ints (not bools, not other index types) into out; false (no error set) when an
 * item is anything else or does not fit an int64_t. */
static int exact_ints(PyObject *const *items, Py_ssize_t n, int64_t *out) {
  for (Py_ssize_t i = 0; i < n; i++) {
    if (!PyLong_CheckExact(items[i])) return 0;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(items[i], &overflow);
    if (overflow != 0 || (v == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return 0;
    }
    out[i] = (int64_t)v;
  }
  return 1;
}

/* ---- what the other files of the module call (common.h) ---- */

PyObject *pyc10_wrap(c10c_tensor *h) { return wrap_handle(h); }
PyObject *pyc10_raise(c10c_status st) { return raise_for(st); }
PyObject *pyc10_result(c10c_status st, c10c_tensor *const *out) { return result(st, out); }

PyObject *pyc10_wrap_tuple(c10c_tensor **hs, size_t n) {
  PyObject *t = PyTuple_New((Py_ssize_t)n);
  size_t i = 0;
  for (; t != NULL && i < n; i++) {
    PyObject *x = wrap_handle(hs[i]);
    hs[i] = NULL;
    if (x == NULL || PyTuple_SetItem(t, (Py_ssize_t)i, x) < 0) {
      Py_CLEAR(t);
      i++;
      break;
    }
  }
  for (; i < n; i++) release_tensor(hs[i]);
  return t;
}

/* ---- TensorBase ---- */

static void tensor_dealloc(PyObject *self) {
  TensorObject *t = (TensorObject *)self;
  PyTypeObject *tp = Py_TYPE(self);
  if (t->weakreflist != NULL) PyObject_ClearWeakRefs(self);
  c10c_tensor *h = t->h;
  t->h = NULL;
  Py_CLEAR(t->handle);
  Py_CLEAR(t->shape);
  Py_CLEAR(t->strides);
  Py_CLEAR(t->storage);
  release_tensor(h); /* may run a storage deleter that calls back into Python */
  freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  tp_free(self);
  Py_DECREF(tp);
}

static c10c_tensor *handle_of(PyObject *self) {
  c10c_tensor *h = ((TensorObject *)self)->h;
  if (h == NULL) PyErr_SetString(PyExc_RuntimeError, "this pyc10.Tensor holds no tensor");
  return h;
}

c10c_tensor *pyc10_handle(PyObject *self) { return handle_of(self); }

static PyObject *tensor_get_handle(PyObject *self, void *closure) {
  (void)closure;
  TensorObject *t = (TensorObject *)self;
  if (t->handle == NULL) {
    if (handle_of(self) == NULL) return NULL;
    if (make_handle == NULL) {
      PyErr_SetString(PyExc_RuntimeError, "pyc10._ctensor.setup was not called");
      return NULL;
    }
    PyObject *address = PyLong_FromVoidPtr(t->h);
    if (address == NULL) return NULL;
    t->handle = PyObject_CallFunctionObjArgs(make_handle, address, NULL);
    Py_DECREF(address);
    if (t->handle == NULL) return NULL;
  }
  Py_INCREF(t->handle);
  return t->handle;
}

static PyObject *tensor_get_shape(PyObject *self, void *closure) {
  (void)closure;
  TensorObject *t = (TensorObject *)self;
  if (t->shape == NULL) {
    c10c_tensor *h = handle_of(self);
    if (h == NULL) return NULL;
    PyObject *shape = pyc10_size_new(c10c_tensor_sizes(h), c10c_tensor_dim(h));
    if (shape == NULL) return NULL;
    t->shape = shape;
  }
  Py_INCREF(t->shape);
  return t->shape;
}

static PyObject *tensor_get_ndim(PyObject *self, void *closure) {
  (void)closure;
  c10c_tensor *h = handle_of(self);
  return h ? PyLong_FromSize_t(c10c_tensor_dim(h)) : NULL;
}

/* t[i] and t[a:b:c] on a tensor with dims; everything else (tuples, None, Ellipsis, negative
 * steps, out-of-range ints with their message, 0-dim tensors) in Python. */
static PyObject *tensor_getitem(PyObject *self, PyObject *index) {
  c10c_tensor *h = handle_of(self);
  if (h == NULL) return NULL;
  if (c10c_tensor_dim(h) > 0) {
    c10c_tensor *out = NULL;
    if (PyLong_CheckExact(index)) {
      int64_t i;
      int64_t size = c10c_tensor_sizes(h)[0];
      if (exact_ints(&index, 1, &i) && i >= -size && i < size)
        return result(c10c_tensor_select(&out, h, 0, i), &out);
    } else if (PySlice_Check(index)) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(index, &start, &stop, &step) < 0) {
        PyErr_Clear(); /* a zero or non-int step: Python raises torch's error */
      } else if (step > 0) {
        return result(c10c_tensor_slice(&out, h, 0, start, stop, step), &out);
      }
    }
  }
  return fall_back(self, "_getitem_py", &index, 1);
}

/* in the DLPack section below */
static PyObject *tensor_dlpack(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames);
static PyObject *tensor_dlpack_device(PyObject *self, PyObject *unused);

static PyGetSetDef tensor_getset[] = {
    {"_handle", tensor_get_handle, NULL, "The tensor as a cffi ``c10c_tensor *`` (borrowed).",
     NULL},
    {"shape", tensor_get_shape, NULL, "The sizes, as ``torch.Tensor.shape``.", NULL},
    {"ndim", tensor_get_ndim, NULL, "The number of dimensions.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef tensor_members[] = {
    {"_strides", T_OBJECT_EX, offsetof(TensorObject, strides), 0, "cached strides"},
    {"__weaklistoffset__", T_PYSSIZET, offsetof(TensorObject, weakreflist), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyMethodDef tensor_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))tensor_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)\n\nA DLPack "
     "capsule sharing this tensor's memory: \"dltensor_versioned\" (DLPack 1.x) when max_version "
     "allows it, else a legacy \"dltensor\"."},
    {"__dlpack_device__", tensor_dlpack_device, METH_NOARGS,
     "(device_type, device_id) as DLPack numbers them."},
    {NULL, NULL, 0, NULL},
};

static PyObject *tensor_base_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  (void)type, (void)args, (void)kwargs;
  PyErr_SetString(PyExc_TypeError, "create tensors with pyc10.empty, pyc10.empty_strided, ...");
  return NULL;
}

static PyType_Slot tensor_slots[] = {
    {Py_tp_dealloc, (void *)tensor_dealloc},
    {Py_tp_new, (void *)tensor_base_new},
    {Py_tp_getset, tensor_getset},
    {Py_tp_members, tensor_members},
    {Py_tp_methods, tensor_methods},
    {Py_mp_subscript, (void *)tensor_getitem},
    {Py_tp_doc, (void *)"The C part of pyc10.Tensor: one reference to a libc10c tensor."},
    {0, NULL},
};

static PyType_Spec tensor_spec = {
    .name = "pyc10._ctensor.TensorBase",
    .basicsize = sizeof(TensorObject),
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .slots = tensor_slots,
};

/* ---- DLPack (the Python specification: dlpack docs/source/python_spec.rst) ---- */

static const char VERSIONED[] = "dltensor_versioned", USED_VERSIONED[] = "used_dltensor_versioned";
static const char LEGACY[] = "dltensor", USED_LEGACY[] = "used_dltensor";

static PyObject *raise_class(PyObject *cls, PyObject *fallback, const char *message) {
  PyErr_SetString(cls != NULL ? cls : fallback, message);
  return NULL;
}

/* The deleter of whichever struct a capsule holds under its unused name. */
static void delete_export(PyObject *capsule, const char *name) {
  void *m = PyCapsule_GetPointer(capsule, name);
  if (m == NULL) {
    PyErr_Clear();
  } else if (name == VERSIONED) {
    DLManagedTensorVersioned *v = m;
    if (v->deleter != NULL) v->deleter(v);
  } else {
    DLManagedTensor *l = m;
    if (l->deleter != NULL) l->deleter(l);
  }
}

/* A capsule nobody consumed frees its export; a consumed one (renamed) is the consumer's. Runs
 * from the garbage collector too, so it keeps any exception in flight. */
static void capsule_destructor(PyObject *capsule) {
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  if (PyCapsule_IsValid(capsule, VERSIONED))
    delete_export(capsule, VERSIONED);
  else if (PyCapsule_IsValid(capsule, LEGACY))
    delete_export(capsule, LEGACY);
  PyErr_Restore(type, value, traceback);
}

/* Reads a (major, minor) or (device_type, device_id) pair of ints; -1 with an error if it is not
 * one. */
static int int_pair(PyObject *pair, const char *what, long *first, long *second) {
  if (!PyTuple_Check(pair) || PyTuple_Size(pair) != 2) {
    PyErr_Format(type_error != NULL ? type_error : PyExc_TypeError,
                 "%s must be a tuple of two ints", what);
    return -1;
  }
  *first = PyLong_AsLong(PyTuple_GetItem(pair, 0));
  if (*first == -1 && PyErr_Occurred()) return -1;
  *second = PyLong_AsLong(PyTuple_GetItem(pair, 1));
  if (*second == -1 && PyErr_Occurred()) return -1;
  return 0;
}

/* __dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None) */
static PyObject *tensor_dlpack(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
  c10c_tensor *h = handle_of(self);
  if (h == NULL) return NULL;
  if (nargs != 0)
    return raise_class(type_error, PyExc_TypeError,
                       "__dlpack__() takes keyword arguments only (stream, max_version, "
                       "dl_device, copy)");
  PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
  Py_ssize_t nkw = kwnames != NULL ? PyTuple_Size(kwnames) : 0;
  for (Py_ssize_t i = 0; i < nkw; i++) {
    PyObject *name = PyTuple_GetItem(kwnames, i), *value = args[i];
    if (kw_copy == NULL)
      return raise_class(NULL, PyExc_RuntimeError, "pyc10._ctensor.setup_dlpack was not called");
    if (is_keyword(name, kw_max_version))
      max_version = value;
    else if (is_keyword(name, kw_dl_device))
      dl_device = value;
    else if (is_keyword(name, kw_copy))
      copy = value;
    else if (is_keyword(name, kw_stream))
      stream = value;
    else
      return PyErr_Format(type_error != NULL ? type_error : PyExc_TypeError,
                          "__dlpack__() got an unexpected keyword argument '%U'", name);
  }
  DLDevice here;
  c10c_status st = c10c_device_to_dlpack(&here, c10c_tensor_device(h));
  if (st != C10C_STATUS_OK) return raise_for(st);
  long long stream_value = 1; /* None: the consumer uses the legacy default stream */
  if (stream != Py_None) {
    if (!PyLong_Check(stream) || PyBool_Check(stream))
      return raise_class(type_error, PyExc_TypeError, "stream must be ``int`` or ``none``");
    stream_value = PyLong_AsLongLong(stream);
    if (stream_value == -1 && PyErr_Occurred()) return NULL;
    if (here.device_type == kDLCPU && stream_value != -1) /* -1: "do not synchronize" */
      return raise_class(buffer_error, PyExc_BufferError,
                         "stream must be None (or -1) for a CPU tensor");
  }
  if (here.device_type == kDLCUDA && stream_value != -1) {
    /* as torch: 1 (or None) is the legacy default stream, 2 (per-thread default) is refused, 0
     * is invalid; the consumer's stream waits for the work queued on the current stream */
    if (stream_value == 2)
      return raise_class(buffer_error, PyExc_BufferError,
                         "per-thread default stream is not supported.");
    if (stream_value == 0)
      return PyErr_Format(PyExc_AssertionError, "unsupported stream on CUDA: %lld.", stream_value);
    void *consumer = stream_value == 1 ? NULL : (void *)(uintptr_t)stream_value;
    st = c10c_cuda_wait_current_stream(consumer, (c10c_device_index)here.device_id);
    if (st != C10C_STATUS_OK) return raise_for(st);
  }
  long major = 0, minor = 0;
  if (max_version != Py_None && int_pair(max_version, "max_version", &major, &minor) < 0)
    return NULL;
  if (dl_device != Py_None) {
    long type, id;
    if (int_pair(dl_device, "dl_device", &type, &id) < 0) return NULL;
    if (type != (long)here.device_type || id != (long)here.device_id)
      return raise_class(buffer_error, PyExc_BufferError, "unsupported device requested");
  }
  int copy_wanted = 0;
  if (copy != Py_None && (copy_wanted = PyObject_IsTrue(copy)) < 0) return NULL;
  c10c_tensor *source = h, *copied = NULL;
  if (copy_wanted) {
    st = c10c_tensor_clone(&copied, h, C10C_MEMORY_FORMAT_PRESERVE);
    if (st != C10C_STATUS_OK) return raise_for(st);
    source = copied;
  }
  PyObject *capsule = NULL;
  if (major >= 1) {
    DLManagedTensorVersioned *m = NULL;
    st = c10c_tensor_to_dlpack_versioned(&m, source);
    if (st == C10C_STATUS_OK) {
      if (major == 1 && minor < C10C_DLPACK_MINOR)
        m->version.minor = minor < 0 ? 0 : (uint32_t)minor; /* at most what was asked for */
      if (copy_wanted) m->flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
      capsule = PyCapsule_New(m, VERSIONED, capsule_destructor);
      if (capsule == NULL) KEEPING_ERROR(m->deleter(m)); /* it may run Python code */
    }
  } else {
    DLManagedTensor *m = NULL;
    st = c10c_tensor_to_dlpack(&m, source);
    if (st == C10C_STATUS_OK) {
      capsule = PyCapsule_New(m, LEGACY, capsule_destructor);
      if (capsule == NULL) KEEPING_ERROR(m->deleter(m)); /* it may run Python code */
    }
  }
  release_tensor(copied); /* the export holds its own reference */
  return st == C10C_STATUS_OK ? capsule : raise_for(st);
}

static PyObject *tensor_dlpack_device(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_tensor *h = handle_of(self);
  if (h == NULL) return NULL;
  DLDevice d;
  c10c_status st = c10c_device_to_dlpack(&d, c10c_tensor_device(h));
  if (st != C10C_STATUS_OK) return raise_for(st);
  if (d.device_type == kDLCPU && cpu_dl_device != NULL) {
    Py_INCREF(cpu_dl_device);
    return cpu_dl_device;
  }
  return Py_BuildValue("(ii)", (int)d.device_type, (int)d.device_id);
}

/* A tensor from a "dltensor_versioned" or "dltensor" capsule. The capsule is renamed "used_..."
 * before the import (so its destructor leaves the struct alone once a tensor owns it) and named
 * back if the import fails (the struct is still the capsule's then). */
static PyObject *consume_capsule(PyObject *capsule, int copy_wanted) {
  bool versioned = PyCapsule_IsValid(capsule, VERSIONED);
  if (!versioned && !PyCapsule_IsValid(capsule, LEGACY))
    return raise_class(value_error, PyExc_ValueError,
                       "from_dlpack received an invalid capsule: its name is neither "
                       "\"dltensor_versioned\" nor \"dltensor\" (a DLPack capsule can be consumed "
                       "only once)");
  const char *name = versioned ? VERSIONED : LEGACY;
  void *m = PyCapsule_GetPointer(capsule, name);
  if (m == NULL || PyCapsule_SetName(capsule, versioned ? USED_VERSIONED : USED_LEGACY) < 0)
    return NULL;
  c10c_tensor *out = NULL;
  c10c_status st =
      versioned ? c10c_tensor_from_dlpack_versioned(&out, m) : c10c_tensor_from_dlpack(&out, m);
  if (st != C10C_STATUS_OK) {
    PyCapsule_SetName(capsule, name);
    return raise_for(st);
  }
  bool copied_by_producer =
      versioned && (((DLManagedTensorVersioned *)m)->flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0;
  if (copy_wanted && !copied_by_producer) {
    c10c_tensor *copy = NULL;
    st = c10c_tensor_clone(&copy, out, C10C_MEMORY_FORMAT_PRESERVE);
    release_tensor(out);
    if (st != C10C_STATUS_OK) return raise_for(st);
    out = copy;
  }
  return wrap_handle(out);
}

/* The consumer's stream for a producer on a CUDA device (dl_device if asked for, else x's own
 * __dlpack_device__()): torch's rule, the current stream's handle, 1 for the legacy default
 * stream. *out stays NULL for other devices. Returns -1 with an exception set. */
static int consumer_stream(PyObject *x, PyObject *dl_device, PyObject **out) {
  PyObject *where = dl_device;
  if (where == NULL) {
    where = PyObject_CallMethod(x, "__dlpack_device__", NULL);
    if (where == NULL) {
      if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
      PyErr_Clear(); /* a producer without it: nothing to say */
      return 0;
    }
  } else {
    Py_INCREF(where);
  }
  long type = 0, id = 0;
  int ok = int_pair(where, "__dlpack_device__()", &type, &id);
  Py_DECREF(where);
  if (ok < 0) return -1;
  if (type != kDLCUDA) return 0;
  c10c_stream current;
  void *handle = NULL;
  c10c_status st = c10c_cuda_current_stream(&current, (c10c_device_index)id);
  if (st == C10C_STATUS_OK) st = c10c_cuda_stream_handle(&handle, current);
  if (st != C10C_STATUS_OK) {
    raise_for(st);
    return -1;
  }
  *out = PyLong_FromUnsignedLongLong(handle != NULL ? (unsigned long long)(uintptr_t)handle : 1);
  return *out != NULL ? 0 : -1;
}

/* x.__dlpack__(stream=stream, max_version=(1, 3)[, dl_device=...][, copy=...]), keywords by
 * dict (the CUDA path; the CPU one above uses interned keyword tuples). */
static PyObject *dlpack_with_stream(PyObject *x, PyObject *dl_device, PyObject *copy,
                                    PyObject *stream) {
  PyObject *method = PyObject_GetAttr(x, dlpack_name);
  PyObject *kwargs = method != NULL ? PyDict_New() : NULL;
  PyObject *args = kwargs != NULL ? PyTuple_New(0) : NULL;
  PyObject *capsule = NULL;
  if (args != NULL && PyDict_SetItem(kwargs, kw_stream, stream) == 0 &&
      PyDict_SetItem(kwargs, kw_max_version, versioned_max) == 0 &&
      (dl_device == NULL || PyDict_SetItem(kwargs, kw_dl_device, dl_device) == 0) &&
      (copy == Py_None || PyDict_SetItem(kwargs, kw_copy, copy) == 0))
    capsule = PyObject_Call(method, args, kwargs);
  Py_XDECREF(args);
  Py_XDECREF(kwargs);
  Py_XDECREF(method);
  return capsule;
}

/* from_dlpack(x, /, *, device=None, copy=None): x is a capsule or has __dlpack__. */
static PyObject *module_from_dlpack(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  (void)module;
  if (nargs != 1)
    return raise_class(type_error, PyExc_TypeError,
                       "from_dlpack() takes exactly one positional argument");
  PyObject *x = args[0], *device = Py_None, *copy = Py_None;
  Py_ssize_t nkw = kwnames != NULL ? PyTuple_Size(kwnames) : 0;
  for (Py_ssize_t i = 0; i < nkw; i++) {
    PyObject *name = PyTuple_GetItem(kwnames, i), *value = args[1 + i];
    if (PyUnicode_CompareWithASCIIString(name, "device") == 0)
      device = value;
    else if (PyUnicode_CompareWithASCIIString(name, "copy") == 0)
      copy = value;
    else
      return PyErr_Format(type_error != NULL ? type_error : PyExc_TypeError,
                          "from_dlpack() got an unexpected keyword argument '%U'", name);
  }
  int copy_wanted = 0;
  if (copy != Py_None && (copy_wanted = PyObject_IsTrue(copy)) < 0) return NULL;
  PyObject *dl_device = NULL; /* a new reference when device was given */
  if (device != Py_None) {
    if (dlpack_device_of == NULL)
      return raise_class(NULL, PyExc_RuntimeError, "pyc10._ctensor.setup_dlpack was not called");
    dl_device = PyObject_CallFunctionObjArgs(dlpack_device_of, device, NULL);
    if (dl_device == NULL) return NULL;
  }
  if (PyCapsule_CheckExact(x)) {
    Py_XDECREF(dl_device); /* a capsule's memory is where it is: checked by the import */
    return consume_capsule(x, copy_wanted);
  }
  /* a CUDA producer is told the consumer's stream, this thread's current one, when the process
   * uses CUDA (before that, the default stream: what None means) */
  PyObject *stream = NULL;
  if (c10c_cuda_is_initialized() && consumer_stream(x, dl_device, &stream) < 0) {
    Py_XDECREF(dl_device);
    return NULL;
  }
  if (stream != NULL) {
    PyObject *capsule = dlpack_with_stream(x, dl_device, copy, stream);
    Py_DECREF(stream);
    Py_XDECREF(dl_device);
    if (capsule == NULL) return NULL;
    PyObject *tensor =
        PyCapsule_CheckExact(capsule)
            ? consume_capsule(capsule, copy_wanted)
            : raise_class(type_error, PyExc_TypeError, "__dlpack__() did not return a capsule");
    Py_DECREF(capsule);
    return tensor;
  }
  /* x.__dlpack__(max_version=(1, 3)[, dl_device=(1, 0)][, copy=copy]) */
  PyObject *call[4] = {x, versioned_max, NULL, NULL};
  Py_ssize_t ncall = 2;
  PyObject *names = kw_max;
  if (device != Py_None && copy != Py_None) {
    call[ncall++] = dl_device, call[ncall++] = copy, names = kw_max_device_copy;
  } else if (device != Py_None) {
    call[ncall++] = dl_device, names = kw_max_device;
  } else if (copy != Py_None) {
    call[ncall++] = copy, names = kw_max_copy;
  }
  PyObject *capsule = names == NULL ? raise_class(NULL, PyExc_RuntimeError, "not set up")
                                    : PyObject_VectorcallMethod(dlpack_name, call, 1, names);
  Py_XDECREF(dl_device); /* the fallback below passes no keywords */
  if (capsule == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
    PyErr_Clear();
    return PyErr_Format(type_error != NULL ? type_error : PyExc_TypeError,
                        "from_dlpack() needs an object with __dlpack__ or a DLPack capsule, not "
                        "%S",
                        (PyObject *)Py_TYPE(x));
  }
  if (capsule == NULL && PyErr_ExceptionMatches(PyExc_TypeError) && ncall == 2) {
    PyErr_Clear(); /* a producer older than the keywords: the specification's fallback */
    capsule = PyObject_VectorcallMethod(dlpack_name, call, 1, NULL);
  }
  if (capsule == NULL) return NULL;
  if (!PyCapsule_CheckExact(capsule)) {
    Py_DECREF(capsule);
    return raise_class(type_error, PyExc_TypeError, "__dlpack__() did not return a capsule");
  }
  PyObject *tensor = consume_capsule(capsule, copy_wanted);
  Py_DECREF(capsule);
  return tensor;
}

/* setup_dlpack(BufferError, TypeError, ValueError, device_of): pyc10's classes for what C raises
 * here, and the function that checks from_dlpack's device argument. */
static PyObject *module_setup_dlpack(PyObject *module, PyObject *args) {
  (void)module;
  PyObject *b, *t, *v, *d;
  if (!PyArg_ParseTuple(args, "OOOO:setup_dlpack", &b, &t, &v, &d)) return NULL;
  replace(&dlpack_device_of, d);
  replace(&buffer_error, b);
  replace(&type_error, t);
  replace(&value_error, v);
  if (kw_max_device_copy == NULL) {
    dlpack_name = PyUnicode_InternFromString("__dlpack__");
    versioned_max = Py_BuildValue("(ii)", C10C_DLPACK_MAJOR, C10C_DLPACK_MINOR);
    cpu_dl_device = Py_BuildValue("(ii)", (int)kDLCPU, 0);
    kw_max = Py_BuildValue("(s)", "max_version");
    kw_max_device = Py_BuildValue("(ss)", "max_version", "dl_device");
    kw_max_copy = Py_BuildValue("(ss)", "max_version", "copy");
    kw_max_device_copy = Py_BuildValue("(sss)", "max_version", "dl_device", "copy");
    kw_stream = PyUnicode_InternFromString("stream");
    kw_max_version = PyUnicode_InternFromString("max_version");
    kw_dl_device = PyUnicode_InternFromString("dl_device");
    kw_copy = PyUnicode_InternFromString("copy");
    if (kw_copy == NULL) return NULL;
    if (kw_max_device_copy == NULL) return NULL; /* the rest, if NULL, fail the same way first */
  }
  Py_RETURN_NONE;
}

/* ---- module functions ---- */

/* setup(Tensor, Size, make_handle, raise_status, dtype_codes, float32) */
static PyObject *module_setup(PyObject *module, PyObject *args) {
  (void)module;
  PyObject *tensor, *size, *handle_fn, *raise_fn, *codes, *f32;
  if (!PyArg_ParseTuple(args, "O!O!OOO!O:setup", &PyType_Type, &tensor, &PyType_Type, &size,
                        &handle_fn, &raise_fn, &PyDict_Type, &codes, &f32))
    return NULL;
  PyObject *base = PyObject_GetAttrString(module, "TensorBase");
  if (base == NULL) return NULL;
  int ok = PyObject_IsSubclass(tensor, base);
  Py_DECREF(base);
  if (ok <= 0) {
    if (ok == 0) PyErr_SetString(PyExc_TypeError, "setup: Tensor must subclass TensorBase");
    return NULL;
  }
  replace((PyObject **)&tensor_type, tensor);
  replace((PyObject **)&size_type, size);
  replace(&make_handle, handle_fn);
  replace(&raise_status, raise_fn);
  replace(&dtype_codes, codes);
  replace(&float32_dtype, f32);
  tensor_alloc = (allocfunc)PyType_GetSlot(tensor_type, Py_tp_alloc);
  size_alloc = (allocfunc)PyType_GetSlot(size_type, Py_tp_alloc);
  Py_RETURN_NONE;
}

/* setup_parser(dtype, layout, memory_format, device, storage, formats_by_name, TypeError,
 * ValueError, RuntimeError, IndexError): the classes the argument parser checks and converts,
 * and pyc10's exception classes it raises. */
static PyObject *module_setup_parser(PyObject *module, PyObject *args) {
  (void)module;
  PyObject *dt, *lay, *fmt, *dev, *storage, *formats, *te, *ve, *re, *ie;
  if (!PyArg_ParseTuple(args, "O!O!O!O!OO!OOOO:setup_parser", &PyType_Type, &dt, &PyType_Type, &lay,
                        &PyType_Type, &fmt, &PyType_Type, &dev, &storage, &PyDict_Type, &formats,
                        &te, &ve, &re, &ie))
    return NULL;
  replace(&pa_cls.type_error, te);
  replace(&pa_cls.value_error, ve);
  replace(&pa_cls.runtime_error, re);
  replace(&pa_cls.index_error, ie);
  if (tensor_type == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "setup_parser: call setup first");
    return NULL;
  }
  pa_cls.tensor = tensor_type;
  pa_cls.size = size_type;
  replace((PyObject **)&pa_cls.dtype, dt);
  replace((PyObject **)&pa_cls.layout, lay);
  replace((PyObject **)&pa_cls.memory_format, fmt);
  replace((PyObject **)&pa_cls.device, dev);
  if (storage != Py_None) replace((PyObject **)&pa_cls.storage, storage);
  replace(&pa_cls.formats_by_name, formats);
  replace(&pa_cls.make_device, dev);
  pa_cls.dtype_value = PyUnicode_InternFromString("value");
  pa_cls.layout_value = PyUnicode_InternFromString("_value");
  pa_cls.format_value = PyUnicode_InternFromString("_value");
  pa_cls.device_type = PyUnicode_InternFromString("_type");
  pa_cls.device_index = PyUnicode_InternFromString("_index");
  if (!pa_cls.dtype_value || !pa_cls.layout_value || !pa_cls.device_type || !pa_cls.device_index)
    return NULL;
  Py_RETURN_NONE;
}

/* wrap(address, handle): a pyc10.Tensor taking over the reference at address (a
 * c10c_tensor *), with handle (its cffi cdata) kept for Python code. */
static PyObject *module_wrap(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  (void)module;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "wrap(address, handle)");
    return NULL;
  }
  void *address = PyLong_AsVoidPtr(args[0]);
  if (address == NULL) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "wrap: NULL tensor");
    return NULL;
  }
  TensorObject *t = (TensorObject *)wrap_handle(address);
  if (t == NULL) return NULL;
  Py_INCREF(args[1]);
  t->handle = args[1];
  return (PyObject *)t;
}

/* The default device of factories without a device= (pyc10.set_default_device, `with
 * pyc10.device(...)`): per thread, as torch's. */
static _Thread_local c10c_device default_device = {C10C_DEVICE_TYPE_CPU, -1};
c10c_device pyc10_default_device(void) { return default_device; }

/* set_default_device(device): this thread's default device (pyc10._defaults calls it). */
static PyObject *module_set_default_device(PyObject *module, PyObject *d) {
  (void)module;
  PyObject *t = PyObject_GetAttrString(d, "_type"),
           *i = t ? PyObject_GetAttrString(d, "_index") : NULL;
  long type = t ? PyLong_AsLong(t) : -1, index = i ? PyLong_AsLong(i) : -1;
  Py_XDECREF(t);
  Py_XDECREF(i);
  if (PyErr_Occurred()) return NULL;
  default_device.type = (c10c_device_type)type;
  default_device.index = (c10c_device_index)index;
  Py_RETURN_NONE;
}

/* set_default_dtype(dtype): what factories without a dtype make (pyc10._defaults tells). */
static PyObject *module_set_default_dtype(PyObject *module, PyObject *d) {
  (void)module;
  PyObject *v = PyObject_GetAttrString(d, "value");
  if (v == NULL) return NULL;
  long code = PyLong_AsLong(v);
  Py_DECREF(v);
  if (code == -1 && PyErr_Occurred()) return NULL;
  replace(&float32_dtype, d);
  pyc10_default_dtype = (int)code;
  Py_RETURN_NONE;
}

/* functions(Tensor, module_name) */
static PyObject *module_functions(PyObject *module, PyObject *args) {
  (void)module;
  PyObject *tensor, *name;
  if (!PyArg_ParseTuple(args, "OU:functions", &tensor, &name)) return NULL;
  return pyc10_functions(name, tensor);
}

static PyMethodDef module_methods[] = {
    {"set_default_device", module_set_default_device, METH_O,
     "This thread's device for factories given none (called by pyc10._defaults)."},
    {"set_default_dtype", module_set_default_dtype, METH_O,
     "The dtype factories make when given none (called by pyc10._defaults)."},
    {"functions", module_functions, METH_VARARGS,
     "The function forms (pyc10.transpose(x, 0, 1), ...) of the table's Tensor methods."},
    {"setup", module_setup, METH_VARARGS, "Connect the fast paths to pyc10's Python side."},
    {"setup_parser", module_setup_parser, METH_VARARGS, "The classes the argument parser checks."},
    {"setup_dlpack", module_setup_dlpack, METH_VARARGS, "pyc10's error classes for DLPack."},
    {"from_dlpack", (PyCFunction)(void (*)(void))module_from_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "from_dlpack(x, /, *, device=None, copy=None) -> Tensor\n\nA tensor sharing the memory of "
     "x (anything with __dlpack__: numpy arrays, torch tensors, ...) or of a DLPack capsule."},
    {"wrap", (PyCFunction)(void (*)(void))module_wrap, METH_FASTCALL,
     "A pyc10.Tensor owning the reference at an address."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "pyc10._ctensor",
    .m_doc = "pyc10's tensor object and its hot paths.",
    .m_size = -1,
    .m_methods = module_methods,
};

/* TensorBase's methods: this file's and each concern's table, in one array made once. */
static PyMethodDef *merged_methods(void) {
  PyMethodDef *tables[] = {tensor_methods, pyc10_view_methods, pyc10_attr_methods,
                           pyc10_data_methods, pyc10_storage_tensor_methods};
  size_t n = 0;
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
    for (PyMethodDef *m = tables[t]; m->ml_name != NULL; m++) n++;
  PyMethodDef *all = PyMem_Calloc(n + 1, sizeof *all); /* kept for the process, as the type */
  if (all == NULL) return (PyMethodDef *)PyErr_NoMemory();
  n = 0;
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
    for (PyMethodDef *m = tables[t]; m->ml_name != NULL; m++) {
      all[n] = *m;
      if (all[n].ml_doc == NULL) all[n].ml_doc = pa_doc("Tensor", m->ml_name);
      n++;
    }
  return all;
}

/* TensorBase's attributes: this file's and attrs.c's, in one array made once. */
static PyGetSetDef *merged_getset(void) {
  PyGetSetDef *tables[] = {tensor_getset, pyc10_attr_getset};
  size_t n = 0;
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
    for (PyGetSetDef *g = tables[t]; g->name != NULL; g++) n++;
  PyGetSetDef *all = PyMem_Calloc(n + 1, sizeof *all); /* kept for the process, as the type */
  if (all == NULL) return (PyGetSetDef *)PyErr_NoMemory();
  n = 0;
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
    for (PyGetSetDef *g = tables[t]; g->name != NULL; g++) all[n++] = *g;
  return all;
}

/* TensorBase's slots: this file's and attrs.c's (the dunders), in one array made once. */
static PyType_Slot *merged_slots(PyMethodDef *methods, PyGetSetDef *getset) {
  PyType_Slot *tables[] = {tensor_slots, pyc10_attr_slots};
  size_t n = 0;
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
    for (PyType_Slot *s = tables[t]; s->slot != 0; s++) n++;
  PyType_Slot *all = PyMem_Calloc(n + 1, sizeof *all); /* kept for the process, as the type */
  if (all == NULL) return (PyType_Slot *)PyErr_NoMemory();
  n = 0;
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
    for (PyType_Slot *s = tables[t]; s->slot != 0; s++) {
      all[n] = *s;
      if (s->slot == Py_tp_methods) all[n].pfunc = methods;
      if (s->slot == Py_tp_getset) all[n].pfunc = getset;
      n++;
    }
  return all;
}

PyMODINIT_FUNC PyInit__ctensor(void) {
  PyMethodDef *methods = merged_methods();
  if (methods == NULL) return NULL;
  PyGetSetDef *getset = merged_getset();
  if (getset == NULL) return NULL;
  PyType_Slot *slots = merged_slots(methods, getset);
  if (slots == NULL) return NULL;
  tensor_spec.slots = slots;
  PyObject *m = PyModule_Create(&module_def);
  if (m == NULL) return NULL;
  PyObject *size = pyc10_size_type_create();
  if (size == NULL || PyModule_AddObject(m, "Size", size) < 0) {
    Py_XDECREF(size);
    Py_DECREF(m);
    return NULL;
  }
  PyObject *type = PyType_FromSpec(&tensor_spec);
  if (type == NULL || PyModule_AddObject(m, "TensorBase", type) < 0) {
    Py_XDECREF(type);
    Py_DECREF(m);
    return NULL;
  }
  if (pyc10_storage_init(m) < 0 || pyc10_factories_init(m) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
