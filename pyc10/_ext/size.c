/* pyc10.Size: a tensor's shape, as torch.Size (torch/csrc/Size.cpp) — a tuple of ints whose
 * slices, sums and products are Sizes again, with numel() and torch's constructor rules: items
 * are ints or anything with __index__ (numpy integers, 0-dim integer tensors), bools included as
 * torch takes them, and "pyc10.Size() takes an iterable of 'int' (item 0 is 'float')" otherwise.
 * Also a tensor's shape as a Size, made once (pyc10_shape), which views and attributes read.
 */
#include "common.h"

static PyTypeObject *size_type;

/* A new Size holding the items of a tuple (new references). */
static PyObject *size_from_tuple(PyObject *tuple) {
  Py_ssize_t n = PyTuple_Size(tuple);
  if (n < 0) return NULL;
  allocfunc alloc = (allocfunc)PyType_GetSlot(size_type, Py_tp_alloc);
  PyObject *s = alloc(size_type, n);
  if (s == NULL) return NULL;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = PyTuple_GetItem(tuple, i);
    Py_INCREF(item);
    PyTuple_SetItem(s, i, item);
  }
  return s;
}

PyObject *pyc10_size_new(const int64_t *sizes, size_t n) {
  allocfunc alloc = (allocfunc)PyType_GetSlot(size_type, Py_tp_alloc);
  PyObject *shape = alloc(size_type, (Py_ssize_t)n);
  if (shape == NULL) return NULL;
  for (size_t i = 0; i < n; i++) {
    PyObject *v = PyLong_FromLongLong((long long)sizes[i]);
    if (v == NULL || PyTuple_SetItem(shape, (Py_ssize_t)i, v) < 0) {
      Py_DECREF(shape);
      return NULL;
    }
  }
  return shape;
}

static PyObject *type_error(void) {
  return pa_cls.type_error != NULL ? pa_cls.type_error : PyExc_TypeError;
}

/* Size(sizes=()): torch's THPSize_pynew hands its arguments to tuple's, whose words a bad call
 * gets ("tuple expected at most 1 argument, got 2") */
static PyObject *size_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  (void)type;
  PyObject *arg = NULL;
  if (kwargs != NULL && PyDict_Size(kwargs) > 0) {
    PyErr_SetString(PyExc_TypeError, "tuple() takes no keyword arguments");
    return NULL;
  }
  if (PyTuple_Size(args) == 1) {
    arg = PyTuple_GetItem(args, 0);
  } else if (!PyArg_UnpackTuple(args, "tuple", 0, 1, &arg)) {
    return NULL;
  }
  if (arg != NULL && (PyList_CheckExact(arg) || PyTuple_CheckExact(arg))) {
    /* the common call, Size([2, 3]): exact ints in range go in as they are, straight from the
     * list or tuple into the new Size (no intermediate tuple) */
    bool list = PyList_CheckExact(arg);
    Py_ssize_t n = list ? PyList_Size(arg) : PyTuple_Size(arg);
    bool plain = n >= 0;
    for (Py_ssize_t i = 0; plain && i < n; i++) {
      PyObject *it = list ? PyList_GetItem(arg, i) : PyTuple_GetItem(arg, i);
      int overflow;
      plain = PyLong_CheckExact(it) && (PyLong_AsLongLongAndOverflow(it, &overflow), !overflow);
    }
    if (plain) {
      allocfunc alloc = (allocfunc)PyType_GetSlot(size_type, Py_tp_alloc);
      PyObject *r = alloc(size_type, n);
      if (r == NULL) return NULL;
      for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *it = list ? PyList_GetItem(arg, i) : PyTuple_GetItem(arg, i);
        Py_INCREF(it);
        PyTuple_SetItem(r, i, it);
      }
      return r;
    }
  }
  PyObject *seq = arg == NULL ? PyTuple_New(0) : PySequence_Tuple(arg);
  if (seq == NULL) return NULL;
  Py_ssize_t n = PyTuple_Size(seq);
  PyObject *values = PyTuple_New(n);
  for (Py_ssize_t i = 0; values != NULL && i < n; i++) {
    PyObject *item = PyTuple_GetItem(seq, i);
    int64_t v;
    if (PyLong_Check(item)) {
      int overflow;
      v = PyLong_AsLongLongAndOverflow(item, &overflow);
      if (overflow) {
        PyErr_SetString(pa_cls.value_error != NULL ? pa_cls.value_error : PyExc_ValueError,
                        "Overflow when unpacking long long");
        Py_CLEAR(values);
        break;
      }
    } else if (pa_index(item, &v) < 0) {
      if (PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        PyObject *name = PyObject_GetAttrString((PyObject *)Py_TYPE(item), "__name__");
        if (name != NULL) {
          PyErr_Format(type_error(), "pyc10.Size() takes an iterable of 'int' (item %zd is '%U')",
                       i, name);
          Py_DECREF(name);
        }
      }
      Py_CLEAR(values);
      break;
    }
    PyObject *o = PyLong_FromLongLong((long long)v);
    if (o == NULL || PyTuple_SetItem(values, i, o) < 0) Py_CLEAR(values);
  }
  Py_DECREF(seq);
  if (values == NULL) return NULL;
  PyObject *s = size_from_tuple(values);
  Py_DECREF(values);
  return s;
}

static PyObject *size_repr(PyObject *self) {
  PyObject *list = PySequence_List(self);
  if (list == NULL) return NULL;
  PyObject *r = PyUnicode_FromFormat("pyc10.Size(%R)", list);
  Py_DECREF(list);
  return r;
}

/* s[i] is an int, s[a:b] a Size. */
static PyObject *size_subscript(PyObject *self, PyObject *key) {
  binaryfunc tuple_subscript = (binaryfunc)PyType_GetSlot(&PyTuple_Type, Py_mp_subscript);
  PyObject *r = tuple_subscript(self, key);
  if (r == NULL || !PySlice_Check(key)) return r;
  PyObject *s = size_from_tuple(r);
  Py_DECREF(r);
  return s;
}

/* Size + tuple and tuple + Size are Sizes (torch's Size defines both sides). */
static PyObject *size_add(PyObject *a, PyObject *b) {
  if (!PyTuple_Check(a) || !PyTuple_Check(b)) Py_RETURN_NOTIMPLEMENTED;
  binaryfunc concat = (binaryfunc)PyType_GetSlot(&PyTuple_Type, Py_sq_concat);
  PyObject *t = concat(a, b);
  if (t == NULL) return NULL;
  PyObject *s = size_from_tuple(t);
  Py_DECREF(t);
  return s;
}

static PyObject *size_multiply(PyObject *a, PyObject *b) {
  PyObject *seq = PyTuple_Check(a) ? a : b, *count = seq == a ? b : a;
  if (!PyTuple_Check(seq) || !PyIndex_Check(count)) Py_RETURN_NOTIMPLEMENTED;
  Py_ssize_t n = PyNumber_AsSsize_t(count, PyExc_OverflowError);
  if (n == -1 && PyErr_Occurred()) return NULL;
  ssizeargfunc repeat = (ssizeargfunc)PyType_GetSlot(&PyTuple_Type, Py_sq_repeat);
  PyObject *t = repeat(seq, n);
  if (t == NULL) return NULL;
  PyObject *s = size_from_tuple(t);
  Py_DECREF(t);
  return s;
}

static PyObject *size_numel(PyObject *self, PyObject *unused) {
  (void)unused;
  PyObject *n = PyLong_FromLong(1);
  Py_ssize_t len = PyTuple_Size(self);
  for (Py_ssize_t i = 0; n != NULL && i < len; i++)
    PA_SETREF(n, PyNumber_Multiply(n, PyTuple_GetItem(self, i)));
  return n;
}

static PyObject *size_reduce(PyObject *self, PyObject *unused) {
  (void)unused;
  PyObject *t = PySequence_Tuple(self);
  if (t == NULL) return NULL;
  PyObject *r = Py_BuildValue("(O(N))", (PyObject *)Py_TYPE(self), t);
  return r;
}

static PyMethodDef size_methods[] = {
    {"numel", size_numel, METH_NOARGS,
     "numel() -> int\n\nThe number of elements a tensor of this shape has."},
    {"__reduce__", size_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot size_slots[] = {
    {Py_tp_new, (void *)size_new},
    {Py_tp_repr, (void *)size_repr},
    {Py_tp_methods, size_methods},
    {Py_mp_subscript, (void *)size_subscript},
    {Py_nb_add, (void *)size_add},
    {Py_nb_multiply, (void *)size_multiply},
    {Py_tp_doc,
     (void *)"Size(sizes=()) -> Size\n\nA tensor's shape, as torch.Size: a tuple of ints "
             "whose slices, sums and products are Sizes."},
    {0, NULL},
};

static PyType_Spec size_spec = {
    .name = "pyc10.Size",
    .basicsize = 0,
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT,
    .slots = size_slots,
};

PyObject *pyc10_size_type_create(void) {
  PyObject *bases = PyTuple_Pack(1, (PyObject *)&PyTuple_Type);
  if (bases == NULL) return NULL;
  PyObject *t = PyType_FromSpecWithBases(&size_spec, bases);
  Py_DECREF(bases);
  if (t == NULL) return NULL;
  size_type = (PyTypeObject *)t;
  Py_INCREF(t); /* one reference kept here for the process */
  return t;
}

/* self.shape: made once, kept in the tensor object (TensorBase's shape getter, tensor.c). */
PyObject *pyc10_shape(PyObject *self) {
  TensorObject *t = (TensorObject *)self;
  if (t->shape == NULL) {
    c10c_tensor *h = pyc10_handle(self);
    if (h == NULL) return NULL;
    PyObject *shape = pyc10_size_new(c10c_tensor_sizes(h), c10c_tensor_dim(h));
    if (shape == NULL) return NULL;
    t->shape = shape;
  }
  Py_INCREF(t->shape);
  return t->shape;
}
