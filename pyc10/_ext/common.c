/* What every file of pyc10._ctensor uses, below all of them: the state pyc10's Python side hands
 * over at import (the Tensor and Size classes, the error callback, pyc10's classes for the parser
 * in pa_cls, the default dtype and this thread's default device) with the module functions that
 * set it, and the helpers over it: wrapping a c10c_tensor in a pyc10.Tensor (with a free list of
 * dead tensors' memory, which tp_dealloc fills), raising pyc10's exception for a status, a
 * tensor object's handle, and replacing it in place. Declared in common.h; calls no other file.
 */
#include <Python.h>
#include <stdbool.h>
#include <string.h>

#include "c10c/c10c.h"
#include "common.h"

pa_classes pa_cls;

/* Set once by pyc10._tensor (_C.setup): the Python-level pieces the fast paths hand over to. */
static PyTypeObject *tensor_type; /* pyc10.Tensor: TensorBase itself, its Python part added */
static freefunc tensor_free;
static PyTypeObject *size_type; /* pyc10.Size */
static allocfunc size_alloc;
static PyObject *make_handle;  /* address -> cffi "c10c_tensor *" */
static PyObject *raise_status; /* status -> raises the matching pyc10 error */
/* The default dtype (pyc10.set_default_dtype), as the object and its code. */
static PyObject *float32_dtype;
int pyc10_default_dtype = C10C_DTYPE_FLOAT32;

void pyc10_replace(PyObject **slot, PyObject *value) {
  PyObject *old = *slot;
  Py_INCREF(value);
  *slot = value;
  Py_XDECREF(old);
}

void pyc10_release_tensor(c10c_tensor *h) {
  if (h == NULL) return;
  if (PyErr_Occurred() == NULL) /* the common case: nothing to set aside */
    c10c_tensor_release(h);
  else
    KEEPING_ERROR(c10c_tensor_release(h));
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
/* The memory of tensors that died, for the next ones (as CPython's own free lists do for its
 * small objects): a view made and dropped in a loop costs no malloc/free. The GIL guards it. */
enum { FREE_TENSORS = 32 };
static TensorObject *free_tensors[FREE_TENSORS];
static int n_free;

static PyObject *wrap_handle(c10c_tensor *h) {
  if (tensor_type == NULL) {
    pyc10_release_tensor(h);
    PyErr_SetString(PyExc_RuntimeError, "pyc10._ctensor.setup was not called");
    return NULL;
  }
  /* PyType_GenericAlloc's work without its generality (no GC, no items): the type is not
   * garbage-collected, so tp_free is PyObject_Free; a dead tensor's memory is reused first */
  TensorObject *t = n_free > 0 ? free_tensors[--n_free] : PyObject_Malloc(sizeof *t);
  if (t == NULL) {
    pyc10_release_tensor(h);
    return PyErr_NoMemory();
  }
  PyObject_Init((PyObject *)t, tensor_type);
  t->h = h;
  t->handle = t->shape = t->strides = t->storage = t->weakreflist = t->base = NULL;
  t->views = 0;
  return (PyObject *)t;
}

/* The tensor a library call made in *out, or its error. (Takes the pointer's address: an
 * argument `out` beside the call itself could be read before the call writes it.) */
static PyObject *result(c10c_status st, c10c_tensor *const *out) {
  return st == C10C_STATUS_OK ? wrap_handle(*out) : raise_for(st);
}

/* ---- what the other files of the module call (common.h) ---- */

PyObject *pyc10_raise_in(PyObject *cls, PyObject *fallback, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
  va_end(ap);
  if (msg == NULL) return NULL;
  PyErr_SetObject(cls != NULL ? cls : fallback, msg);
  Py_DECREF(msg);
  return NULL;
}

/* "'a'", "'a' and 'b'", "'a', 'b', and 'c'": CPython's list of missing parameters. */
static PyObject *missing_names(const char *const *names, const int *which, int k) {
  PyObject *text = PyUnicode_FromString("");
  for (int i = 0; i < k && text != NULL; i++) {
    const char *sep = i == 0 ? "" : (k == 2 ? " and " : (i == k - 1 ? ", and " : ", "));
    PyObject *next = PyUnicode_FromFormat("%U%s'%s'", text, sep, names[which[i]]);
    Py_DECREF(text);
    text = next;
  }
  return text;
}

/* The function's name as CPython's errors print it: "Tensor.__len__", "is_tensor". */
static PyObject *python_qualname(PyObject *self_cls, const char *fn) {
  if (self_cls == NULL) return PyUnicode_FromString(fn);
  PyObject *cls = PyObject_GetAttrString(self_cls, "__qualname__");
  if (cls == NULL) return NULL;
  PyObject *qual = PyUnicode_FromFormat("%U.%s", cls, fn);
  Py_DECREF(cls);
  return qual;
}

int pyc10_bind_python(PyObject *self_cls, const char *fn, const char *const *names, int n,
                      int posonly, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                      PyObject **out) {
  Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_Size(kwnames);
  for (int i = 0; i < n; i++) out[i] = i < nargs ? args[i] : NULL;
  if (nkw == 0 && nargs == n) return 0; /* the right call: nothing else to read */
  /* what is wrong, in CPython's order (keywords bound before positionals are counted) */
  enum { OK, POSONLY, UNEXPECTED, MULTIPLE, TOO_MANY, MISSING } what = OK;
  PyObject *key = NULL;
  int at = 0;
  for (Py_ssize_t k = 0; k < nkw && what == OK; k++) {
    key = PyTuple_GetItem(kwnames, k);
    at = 0;
    while (at < n && PyUnicode_CompareWithASCIIString(key, names[at]) != 0) at++;
    if (at < posonly)
      what = POSONLY;
    else if (at == n)
      what = UNEXPECTED;
    else if (out[at] != NULL)
      what = MULTIPLE;
    else
      out[at] = args[nargs + k];
  }
  int which[8], k = 0;
  if (what == OK && nargs > n) what = TOO_MANY;
  if (what == OK) {
    for (int i = 0; i < n && k < 8; i++)
      if (out[i] == NULL) which[k++] = i;
    if (k > 0) what = MISSING;
  }
  if (what == OK) return 0;
  PyObject *qual = python_qualname(self_cls, fn);
  if (qual == NULL) return -1;
  int self = self_cls != NULL;
  Py_ssize_t given = nargs + self;
  PyObject *list = NULL;
  switch (what) {
    case POSONLY:
      PyErr_Format(PyExc_TypeError,
                   "%U() got some positional-only arguments passed as keyword arguments: '%s'",
                   qual, names[at]);
      break;
    case UNEXPECTED:
      PyErr_Format(PyExc_TypeError, "%U() got an unexpected keyword argument '%U'", qual, key);
      break;
    case MULTIPLE:
      PyErr_Format(PyExc_TypeError, "%U() got multiple values for argument '%s'", qual, names[at]);
      break;
    case TOO_MANY:
      PyErr_Format(PyExc_TypeError, "%U() takes %d positional argument%s but %zd %s given", qual,
                   n + self, n + self == 1 ? "" : "s", given, given == 1 ? "was" : "were");
      break;
    case MISSING:
      list = missing_names(names, which, k);
      if (list != NULL)
        PyErr_Format(PyExc_TypeError, "%U() missing %d required positional argument%s: %U", qual, k,
                     k == 1 ? "" : "s", list);
      Py_XDECREF(list);
      break;
    case OK: break;
  }
  Py_DECREF(qual);
  return -1;
}

PyObject *pyc10_not_implemented(const char *what) {
  static PyObject *cls; /* pyc10._errors.C10NotImplementedError, looked up on first use */
  if (cls == NULL) {
    PyObject *mod = PyImport_ImportModule("pyc10._errors");
    if (mod == NULL) return NULL;
    cls = PyObject_GetAttrString(mod, "C10NotImplementedError");
    Py_DECREF(mod);
    if (cls == NULL) return NULL;
  }
  PyErr_SetString(cls, what);
  return NULL;
}

PyObject *pyc10_view_result(PyObject *self, c10c_status st, c10c_tensor *const *out) {
  if (st != C10C_STATUS_OK) return raise_for(st);
  TensorObject *view = (TensorObject *)wrap_handle(*out);
  if (view != NULL) { /* the hot views' bookkeeping, made here so that wrapping inlines */
    PyObject *base = ((TensorObject *)self)->base;
    if (base == NULL) base = self;
    ((TensorObject *)base)->views++;
    Py_INCREF(base);
    view->base = base;
  }
  return (PyObject *)view;
}

PyObject *pyc10_wrap(c10c_tensor *h) { return wrap_handle(h); }

PyObject *pyc10_dlpack_wrap_import(c10c_tensor *imported, bool clone) {
  if (clone) {
    c10c_tensor *copy = NULL;
    c10c_status st = c10c_tensor_clone(&copy, imported, C10C_MEMORY_FORMAT_PRESERVE);
    pyc10_release_tensor(imported);
    if (st != C10C_STATUS_OK) return raise_for(st);
    imported = copy;
  }
  return wrap_handle(imported);
}
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
  for (; i < n; i++) pyc10_release_tensor(hs[i]);
  return t;
}

/* ---- TensorBase ---- */

void pyc10_tensor_dealloc(PyObject *self) {
  TensorObject *t = (TensorObject *)self;
  PyTypeObject *tp = Py_TYPE(self);
  if (t->weakreflist != NULL) PyObject_ClearWeakRefs(self);
  c10c_tensor *h = t->h;
  t->h = NULL;
  Py_CLEAR(t->handle);
  Py_CLEAR(t->shape);
  Py_CLEAR(t->strides);
  Py_CLEAR(t->storage);
  if (t->base != NULL) ((TensorObject *)t->base)->views--;
  Py_CLEAR(t->base);
  pyc10_release_tensor(h); /* may run a storage deleter that calls back into Python */
  if (tp == tensor_type && n_free < FREE_TENSORS) {
    free_tensors[n_free++] = t;
  } else {
    freefunc free_fn = tensor_free;
    if (tp != tensor_type) { /* a subclass: its tp_free (ISO C: no void * to function cast) */
      void *slot = PyType_GetSlot(tp, Py_tp_free);
      memcpy(&free_fn, &slot, sizeof free_fn);
    }
    free_fn(self);
  }
  Py_DECREF(tp);
}

static c10c_tensor *handle_of(PyObject *self) {
  c10c_tensor *h = ((TensorObject *)self)->h;
  if (h == NULL) PyErr_SetString(PyExc_RuntimeError, "this pyc10.Tensor holds no tensor");
  return h;
}

c10c_tensor *pyc10_handle(PyObject *self) { return handle_of(self); }

PyObject *pyc10_become(PyObject *self, c10c_status st, c10c_tensor *new_h) {
  if (st != C10C_STATUS_OK) {
    pyc10_release_tensor(new_h);
    return raise_for(st);
  }
  TensorObject *t = (TensorObject *)self;
  c10c_tensor *old = t->h;
  t->h = new_h;
  Py_CLEAR(t->handle);
  Py_CLEAR(t->shape);
  Py_CLEAR(t->strides);
  pyc10_release_tensor(old); /* may run a deleter that calls into Python */
  Py_INCREF(self);
  return self;
}

PyObject *pyc10_tensor_get_handle(PyObject *self, void *closure) {
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

/* setup(Tensor, Size, make_handle, raise_status, float32) */
static PyObject *module_setup(PyObject *module, PyObject *args) {
  (void)module;
  PyObject *tensor, *size, *handle_fn, *raise_fn, *f32;
  if (!PyArg_ParseTuple(args, "O!O!OOO:setup", &PyType_Type, &tensor, &PyType_Type, &size,
                        &handle_fn, &raise_fn, &f32))
    return NULL;
  PyObject *base = PyObject_GetAttrString(module, "TensorBase");
  if (base == NULL) return NULL;
  Py_DECREF(base);      /* the module holds it */
  if (tensor != base) { /* wrap_handle makes objects of exactly this size, freed as such */
    PyErr_SetString(PyExc_TypeError, "setup: Tensor must be TensorBase (pyc10._tensor._adopt)");
    return NULL;
  }
  pyc10_replace((PyObject **)&tensor_type, tensor);
  pyc10_replace((PyObject **)&size_type, size);
  pyc10_replace(&make_handle, handle_fn);
  pyc10_replace(&raise_status, raise_fn);
  pyc10_replace(&float32_dtype, f32);
  tensor_free = (freefunc)PyType_GetSlot(tensor_type, Py_tp_free);
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
  pyc10_replace(&pa_cls.type_error, te);
  pyc10_replace(&pa_cls.value_error, ve);
  pyc10_replace(&pa_cls.runtime_error, re);
  pyc10_replace(&pa_cls.index_error, ie);
  if (tensor_type == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "setup_parser: call setup first");
    return NULL;
  }
  pa_cls.tensor = tensor_type;
  pa_cls.size = size_type;
  pyc10_replace((PyObject **)&pa_cls.dtype, dt);
  pyc10_replace((PyObject **)&pa_cls.layout, lay);
  pyc10_replace((PyObject **)&pa_cls.memory_format, fmt);
  pyc10_replace((PyObject **)&pa_cls.device, dev);
  if (storage != Py_None) pyc10_replace((PyObject **)&pa_cls.storage, storage);
  pyc10_replace(&pa_cls.formats_by_name, formats);
  pyc10_replace(&pa_cls.make_device, dev);
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

/* set_default_device(device): this thread's default device (pyc10._device calls it). */
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
  pyc10_replace(&float32_dtype, d);
  pyc10_default_dtype = (int)code;
  Py_RETURN_NONE;
}

/* get_default_dtype(): pyc10.get_default_dtype itself (a builtin, as torch's). */
static PyObject *module_get_default_dtype(PyObject *module, PyObject *unused) {
  (void)module, (void)unused;
  if (float32_dtype == NULL) return RUNTIME_ERROR("pyc10._ctensor.setup was not called");
  Py_INCREF(float32_dtype);
  return float32_dtype;
}

PyMethodDef pyc10_setup_functions[] = {
    {"set_default_device", module_set_default_device, METH_O,
     "This thread's device for factories given none (called by pyc10._device)."},
    {"get_default_dtype", module_get_default_dtype, METH_NOARGS,
     "get_default_dtype() -> dtype\n\nThe default floating point dtype (pyc10.float32 until "
     "changed), "
     "as torch's."},
    {"set_default_dtype", module_set_default_dtype, METH_O,
     "The dtype factories make when given none (called by pyc10._defaults)."},
    {"setup", module_setup, METH_VARARGS, "Connect the fast paths to pyc10's Python side."},
    {"setup_parser", module_setup_parser, METH_VARARGS, "The classes the argument parser checks."},
    {"wrap", (PyCFunction)(void (*)(void))module_wrap, METH_FASTCALL,
     "A pyc10.Tensor owning the reference at an address."},
    {NULL, NULL, 0, NULL},
};
