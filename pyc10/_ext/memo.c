/* pyc10._ctensor.memo(cache, fallback): a callable that answers a call of one positional argument
 * found in the dict cache with the cached value, and any other call with fallback(*args,
 * **kwargs). pyc10.finfo and pyc10.iinfo make it their metaclass's __call__, so that
 * finfo(float32), a dict lookup, costs no Python frame (torch's finfo is a C type).
 */
#include "common.h"

typedef struct {
  PyObject_HEAD PyObject *cache; /* a dict */
  PyObject *fallback;
} MemoObject;

static PyTypeObject *memo_type;

static PyObject *memo_call(PyObject *self, PyObject *args, PyObject *kwargs) {
  MemoObject *m = (MemoObject *)self;
  if ((kwargs == NULL || PyDict_Size(kwargs) == 0) && PyTuple_Size(args) == 1) {
    PyObject *hit = PyDict_GetItemWithError(m->cache, PyTuple_GetItem(args, 0)); /* borrowed */
    if (hit != NULL) {
      Py_INCREF(hit);
      return hit;
    }
    PyErr_Clear(); /* a miss or an unhashable argument: the fallback answers (or raises) */
  }
  return PyObject_Call(m->fallback, args, kwargs);
}

static int memo_traverse(PyObject *self, visitproc visit, void *arg) {
  MemoObject *m = (MemoObject *)self;
  Py_VISIT(m->cache);
  Py_VISIT(m->fallback);
  Py_VISIT((PyObject *)Py_TYPE(self));
  return 0;
}

static int memo_clear(PyObject *self) {
  MemoObject *m = (MemoObject *)self;
  Py_CLEAR(m->cache);
  Py_CLEAR(m->fallback);
  return 0;
}

static void memo_dealloc(PyObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  memo_clear(self);
  freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  tp_free(self);
  Py_DECREF(tp);
}

static PyType_Slot memo_slots[] = {
    {Py_tp_call, (void *)memo_call},
    {Py_tp_traverse, (void *)memo_traverse},
    {Py_tp_clear, (void *)memo_clear},
    {Py_tp_dealloc, (void *)memo_dealloc},
    {Py_tp_doc, (void *)"A dict lookup as a call, with a fallback (pyc10._ctensor.memo)."},
    {0, NULL},
};

static PyType_Spec memo_spec = {
    .name = "pyc10._ctensor.Memo",
    .basicsize = sizeof(MemoObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .slots = memo_slots,
};

static PyObject *f_memo(PyObject *module, PyObject *args) {
  (void)module;
  PyObject *cache, *fallback;
  if (!PyArg_ParseTuple(args, "O!O:memo", &PyDict_Type, &cache, &fallback)) return NULL;
  if (!PyCallable_Check(fallback)) return TYPE_ERROR("memo: fallback must be callable");
  if (memo_type == NULL && (memo_type = (PyTypeObject *)PyType_FromSpec(&memo_spec)) == NULL)
    return NULL;
  allocfunc alloc = (allocfunc)PyType_GetSlot(memo_type, Py_tp_alloc);
  MemoObject *m = (MemoObject *)alloc(memo_type, 0);
  if (m == NULL) return NULL;
  Py_INCREF(cache);
  Py_INCREF(fallback);
  m->cache = cache;
  m->fallback = fallback;
  return (PyObject *)m;
}

PyMethodDef pyc10_memo_functions[] = {
    {"memo", f_memo, METH_VARARGS,
     "memo(cache, fallback) -> callable\n\nA callable answering f(key) from the dict cache, and "
     "any other call (or a key not in it) with fallback(*args, **kwargs)."},
    {NULL, NULL, 0, NULL},
};
