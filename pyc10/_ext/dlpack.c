/* DLPack glue (the Python specification, dlpack docs/source/python_spec.rst): Tensor.__dlpack__ and
 * __dlpack_device__, which export through libc10c's DLPack ABI, and pyc10.from_dlpack, which
 * imports any producer (numpy, torch, JAX, a capsule) with the stream handshake and the
 * versioned/legacy fallbacks of the specification. Capsules are named and renamed as the
 * specification says; a deleter that may run Python code runs with any exception set aside.
 */
#include "c10c/dlpack.h"
#include "common.h"

#define handle_of   pyc10_handle
#define raise_for   pyc10_raise
#define wrap_handle pyc10_wrap

#define release_tensor pyc10_release_tensor
#define replace        pyc10_replace

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
  /* torch's __dlpack_device__ has no DLPack device for meta: its ValueError */
  if (c10c_tensor_device(h).type == C10C_DEVICE_TYPE_META)
    return raise_class(value_error, PyExc_ValueError, "Unknown device type meta for Dlpack");
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
  return pyc10_dlpack_wrap_import(out, copy_wanted && !copied_by_producer);
}

/* x.__dlpack_device__(), which torch's from_dlpack asks before anything else, so that a producer
 * that cannot export (a meta tensor: ValueError) fails there. *out stays NULL for a producer
 * without the method (the __dlpack__ call then says what is missing). Returns -1 with an
 * exception set. */
static int producer_device(PyObject *x, PyObject **out) {
  *out = PyObject_CallMethod(x, "__dlpack_device__", NULL);
  if (*out != NULL) return 0;
  if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
  PyErr_Clear();
  return 0;
}

/* The consumer's stream for a producer on a CUDA device (dl_device if asked for, else the
 * producer's own device `where`, NULL when unknown): torch's rule, the current stream's handle, 1
 * for the legacy default stream. *out stays NULL for other devices. Returns -1 with an exception
 * set. */
static int consumer_stream(PyObject *where, PyObject *dl_device, PyObject **out) {
  if (dl_device != NULL) where = dl_device;
  if (where == NULL) return 0; /* a producer without __dlpack_device__: nothing to say */
  long type = 0, id = 0;
  if (int_pair(where, "__dlpack_device__()", &type, &id) < 0) return -1;
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

/* from_dlpack(ext_tensor, *, device=None, copy=None): ext_tensor is a capsule or has __dlpack__;
 * argument errors are Python's for torch's def (torch/utils/dlpack.py). */
static PyObject *module_from_dlpack(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  (void)module;
  PyObject *cls = type_error != NULL ? type_error : PyExc_TypeError;
  if (nargs > 1)
    return PyErr_Format(cls, "from_dlpack() takes 1 positional argument but %zd were given", nargs);
  PyObject *x = nargs == 1 ? args[0] : NULL, *device = Py_None, *copy = Py_None;
  Py_ssize_t nkw = kwnames != NULL ? PyTuple_Size(kwnames) : 0;
  for (Py_ssize_t i = 0; i < nkw; i++) {
    PyObject *name = PyTuple_GetItem(kwnames, i), *value = args[nargs + i];
    if (PyUnicode_CompareWithASCIIString(name, "device") == 0) {
      device = value;
    } else if (PyUnicode_CompareWithASCIIString(name, "copy") == 0) {
      copy = value;
    } else if (PyUnicode_CompareWithASCIIString(name, "ext_tensor") == 0) {
      if (x != NULL)
        return PyErr_Format(cls, "from_dlpack() got multiple values for argument 'ext_tensor'");
      x = value;
    } else {
      return PyErr_Format(cls, "from_dlpack() got an unexpected keyword argument '%U'", name);
    }
  }
  if (x == NULL)
    return PyErr_Format(cls, "from_dlpack() missing 1 required positional argument: 'ext_tensor'");
  int copy_wanted = 0;
  if (copy != Py_None && (copy_wanted = PyObject_IsTrue(copy)) < 0) return NULL;
  /* a producer's C exchange table first (torch's: no Python call), for host memory */
  if (device == Py_None && !PyCapsule_CheckExact(x)) {
    PyObject *fast = pyc10_from_exchange(x, copy_wanted);
    if (fast != Py_None) return fast;
  }
  /* a producer's device first, as torch asks it (a capsule's memory is where it is: checked by
   * the import) */
  PyObject *where = NULL;
  if (!PyCapsule_CheckExact(x) && producer_device(x, &where) < 0) return NULL;
  PyObject *dl_device = NULL; /* a new reference when device was given */
  if (device != Py_None) {
    dl_device =
        dlpack_device_of == NULL
            ? raise_class(NULL, PyExc_RuntimeError, "pyc10._ctensor.setup_dlpack was not called")
            : PyObject_CallFunctionObjArgs(dlpack_device_of, device, NULL);
    if (dl_device == NULL) {
      Py_XDECREF(where);
      return NULL;
    }
  }
  if (PyCapsule_CheckExact(x)) {
    Py_XDECREF(dl_device);
    return consume_capsule(x, copy_wanted);
  }
  /* a CUDA producer is told the consumer's stream, this thread's current one, when the process
   * uses CUDA (before that, the default stream: what None means) */
  PyObject *stream = NULL;
  int failed = c10c_cuda_is_initialized() && consumer_stream(where, dl_device, &stream) < 0;
  Py_XDECREF(where);
  if (failed) {
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

PyObject *pyc10_dlpack_import(PyObject *x) { return module_from_dlpack(NULL, &x, 1, NULL); }

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

PyMethodDef pyc10_dlpack_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))tensor_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)\n\nA DLPack "
     "capsule sharing this tensor's memory: \"dltensor_versioned\" (DLPack 1.x) when max_version "
     "allows it, else a legacy \"dltensor\"."},
    {"__dlpack_device__", tensor_dlpack_device, METH_NOARGS,
     "(device_type, device_id) as DLPack numbers them."},
    {NULL, NULL, 0, NULL},
};

PyMethodDef pyc10_dlpack_functions[] = {
    {"setup_dlpack", module_setup_dlpack, METH_VARARGS, "pyc10's error classes for DLPack."},
    {"from_dlpack", (PyCFunction)(void (*)(void))module_from_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "from_dlpack(x, /, *, device=None, copy=None) -> Tensor\n\nA tensor sharing the memory of "
     "x (anything with __dlpack__: numpy arrays, torch tensors, ...) or of a DLPack capsule."},
    {NULL, NULL, 0, NULL},
};
