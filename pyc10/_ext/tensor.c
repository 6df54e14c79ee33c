/* pyc10._ctensor: the C types behind pyc10.Tensor, pyc10.Size and pyc10.UntypedStorage, and the
 * module that holds them; the top of the extension. This file owns the tensor type's spec (its
 * shape and ndim; the object's making, freeing and cffi handle are common.c's) and module init,
 * which merges each concern's tables into the type: views.c (shape and views), attrs.c
 * (attributes, dunders), data.c (fills, conversions, new_*), indexing.c (getitem/setitem, item,
 * tolist), numpy.c, inplace.c, storage.c (UntypedStorage), dlpack.c (DLPack), factories.c,
 * functions.c and memo.c (module functions), size.c (Size), common.c (the setup functions that
 * connect it to pyc10's Python side); every method binds its arguments with the parser
 * (argparse.c) over the signature table (signatures.h). The files below it call nothing here.
 * TensorBase is pyc10.Tensor itself: _tensor.py adds its Python part (repr, pickling) to the type
 * rather than subclassing it, so tensors are plain objects (no GC, no subtype_dealloc).
 *
 * Built against the limited API (abi3), like the cffi extension.
 */
#include <Python.h>
#include <stdbool.h>
#include <structmember.h>

#include "c10c/c10c.h"
#include "common.h"

static PyObject *tensor_get_shape(PyObject *self, void *closure) {
  (void)closure;
  return pyc10_shape(self);
}

static PyObject *tensor_get_ndim(PyObject *self, void *closure) {
  (void)closure;
  c10c_tensor *h = ((TensorObject *)self)->h;
  return h != NULL ? PyLong_FromLong((long)c10c_tensor_dim(h)) : (pyc10_handle(self), NULL);
}

static PyGetSetDef tensor_getset[] = {
    {"_handle", pyc10_tensor_get_handle, NULL, "The tensor as a cffi ``c10c_tensor *`` (borrowed).",
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
    {NULL, NULL, 0, NULL},
};

static PyObject *tensor_base_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  (void)type, (void)args, (void)kwargs;
  PyErr_SetString(PyExc_TypeError, "create tensors with pyc10.empty, pyc10.empty_strided, ...");
  return NULL;
}

static PyType_Slot tensor_slots[] = {
    {Py_tp_dealloc, (void *)pyc10_tensor_dealloc},
    {Py_tp_new, (void *)tensor_base_new},
    {Py_tp_getset, tensor_getset},
    {Py_tp_members, tensor_members},
    {Py_tp_methods, tensor_methods},
    {Py_tp_doc, (void *)"The C part of pyc10.Tensor: one reference to a libc10c tensor."},
    {0, NULL},
};

static PyType_Spec tensor_spec = {
    .name = "pyc10.Tensor",
    .basicsize = sizeof(TensorObject),
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .slots = tensor_slots,
};

/* ---- module functions ---- */

/* functions(Tensor, module_name) */
static PyObject *module_functions(PyObject *module, PyObject *args) {
  (void)module;
  PyObject *tensor, *name;
  if (!PyArg_ParseTuple(args, "OU:functions", &tensor, &name)) return NULL;
  return pyc10_functions(name, tensor);
}

static PyMethodDef module_methods[] = {
    {"functions", module_functions, METH_VARARGS,
     "The function forms (pyc10.transpose(x, 0, 1), ...) of the table's Tensor methods."},
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
  PyMethodDef *tables[] = {tensor_methods,       pyc10_view_methods,           pyc10_attr_methods,
                           pyc10_data_methods,   pyc10_storage_tensor_methods, pyc10_index_methods,
                           pyc10_dlpack_methods, pyc10_inplace_methods,        pyc10_numpy_methods};
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
  PyGetSetDef *tables[] = {tensor_getset, pyc10_attr_getset, pyc10_inplace_getset};
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
  PyType_Slot *tables[] = {tensor_slots, pyc10_attr_slots, pyc10_index_slots};
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
  if (PyModule_AddFunctions(m, pyc10_setup_functions) < 0 || pyc10_factories_init(m) < 0 ||
      pyc10_creation_init(m) < 0 || pyc10_joining_init(m) < 0 ||
      PyModule_AddFunctions(m, pyc10_dlpack_functions) < 0 ||
      PyModule_AddFunctions(m, pyc10_memo_functions) < 0 ||
      PyModule_AddFunctions(m, pyc10_mem_handler_functions) < 0 ||
      PyModule_AddFunctions(m, pyc10_torch_oom_functions) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  PyObject *size = pyc10_size_type_create();
  if (size == NULL || PyModule_AddObject(m, "Size", size) < 0) {
    Py_XDECREF(size);
    Py_DECREF(m);
    return NULL;
  }
  PyObject *type = PyType_FromSpec(&tensor_spec);
  if (type == NULL || pyc10_exchange_publish(type) < 0 ||
      PyModule_AddObject(m, "TensorBase", type) < 0) {
    Py_XDECREF(type);
    Py_DECREF(m);
    return NULL;
  }
  if (pyc10_storage_init(m) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
