/* The function forms of Tensor methods: pyc10.transpose(x, 0, 1) as torch.transpose(x, 0, 1).
 *
 * Every table entry of kind pyc10 whose signatures take "Tensor input" first becomes a module
 * function: it binds its arguments with its own signatures (so errors name torch's function
 * positions and parameters), then calls the method of the same name on input with the rest of
 * the arguments, which binds them again and does the work.
 */
#include <string.h>

#include "common.h"

typedef struct {
  pa_parser parser;
  PyObject *method; /* interned method name */
  bool attribute;   /* an attribute, not a method (real, imag): input.<name> */
  PyMethodDef def;
} function;

static void function_free(PyObject *capsule) {
  function *f = PyCapsule_GetPointer(capsule, "pyc10.function");
  if (f == NULL) return;
  Py_XDECREF(f->method);
  PyMem_Free(f);
}

static PyObject *call(PyObject *capsule, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames) {
  function *f = PyCapsule_GetPointer(capsule, "pyc10.function");
  if (f == NULL) return NULL;
  pa_args r;
  if (pa_parse(&f->parser, args, nargs, kwnames, &r) < 0) return NULL;
  if (f->attribute) return PyObject_GetAttr(r.obj[0], f->method);
  if (nargs > 0) return PyObject_VectorcallMethod(f->method, args, (size_t)nargs, kwnames);
  /* input came as a keyword: the method gets it as self, the other keywords as they were */
  Py_ssize_t nk = PyTuple_Size(kwnames);
  PyObject *stack[PA_MAX_PARAMS + 1];
  PyObject *names = PyTuple_New(nk - 1);
  if (names == NULL) return NULL;
  stack[0] = r.obj[0];
  Py_ssize_t k2 = 0;
  for (Py_ssize_t k = 0; k < nk; k++) {
    PyObject *key = PyTuple_GetItem(kwnames, k);
    if (PyUnicode_CompareWithASCIIString(key, "input") == 0) continue;
    if (k2 >= nk - 1 || k2 >= PA_MAX_PARAMS) break;
    Py_INCREF(key);
    PyTuple_SetItem(names, k2, key);
    stack[1 + k2++] = args[k];
  }
  PyObject *out = PyObject_VectorcallMethod(f->method, stack, 1, k2 > 0 ? names : NULL);
  Py_DECREF(names);
  return out;
}

/* functions(Tensor, "pyc10"): {name: function} for every "Tensor input" entry whose method Tensor
 * has, each with __module__ module_name. */
PyObject *pyc10_functions(PyObject *module_name, PyObject *tensor_class) {
  PyObject *out = PyDict_New();
  for (size_t i = 0; out != NULL && i < pa_table_count(); i++) {
    const char *kind, *name;
    pa_table_entry(i, &kind, &name);
    if (strcmp(kind, "pyc10") != 0) continue;
    function *f = PyMem_Calloc(1, sizeof *f);
    if (f == NULL) {
      Py_DECREF(out);
      return PyErr_NoMemory();
    }
    f->parser.kind = "pyc10";
    f->parser.name = name;
    PyObject *capsule = PyCapsule_New(f, "pyc10.function", function_free);
    if (capsule == NULL) {
      PyMem_Free(f);
      Py_CLEAR(out);
      break;
    }
    bool usable = pa_prepare(&f->parser) == 0;
    for (int s = 0; usable && s < f->parser.n_sigs; s++) {
      const pa_signature *sig = &f->parser.sigs[s];
      usable = sig->n_params > 0 && sig->params[0].type == PA_TENSOR &&
               strcmp(sig->params[0].cname, "input") == 0;
    }
    f->method = usable ? PyUnicode_InternFromString(name) : NULL;
    int has = f->method != NULL ? PyObject_HasAttr(tensor_class, f->method) : 0;
    if (!has) {
      PyErr_Clear();
      Py_DECREF(capsule);
      continue;
    }
    PyObject *attr = PyObject_GetAttr(tensor_class, f->method);
    f->attribute = attr != NULL && !PyCallable_Check(attr); /* a getset descriptor */
    Py_XDECREF(attr);
    PyErr_Clear();
    f->def.ml_name = name;
    f->def.ml_meth = PYC10_FASTCALL(call);
    f->def.ml_flags = METH_FASTCALL | METH_KEYWORDS;
    f->def.ml_doc = pa_doc("pyc10", name);
    PyObject *fn = PyCFunction_NewEx(&f->def, capsule, module_name);
    Py_DECREF(capsule);
    if (fn == NULL || PyDict_SetItemString(out, name, fn) < 0) Py_CLEAR(out);
    Py_XDECREF(fn);
  }
  return out;
}
