/* pyc10's argument parser, its conversions (torch's PythonArgs accessors): one bound argument
 * to a C value each, the signature's default where the argument is absent, with torch's errors
 * for values the type check let through (numpy and 0-dim tensor ints, int lists, dtypes,
 * layouts, memory formats, devices). The binding itself is in argparse_match.c.
 */
#include <string.h>

#include "argparse.h"
#include "common.h"

int pa_tensor_int64(PyObject *o, int64_t *out) {
  int64_t value = 0;
  c10c_tensor *h = ((TensorObject *)o)->h, *cast = NULL;
  /* read through a conversion to int64 on the CPU: any integer dtype, any device */
  int64_t none = 0;
  c10c_status st =
      c10c_tensor_empty(&cast, &none, 0, C10C_DTYPE_INT64, (c10c_device){C10C_DEVICE_TYPE_CPU, -1},
                        C10C_MEMORY_FORMAT_CONTIGUOUS);
  if (st == C10C_STATUS_OK) st = c10c_tensor_copy_(cast, h);
  if (st == C10C_STATUS_OK) {
    const int64_t *data = c10c_tensor_data(cast);
    if (data != NULL) value = *data;
  }
  c10c_tensor_release(cast);
  if (st != C10C_STATUS_OK) {
    pyc10_raise(st);
    return -1;
  }
  *out = value;
  return 0;
}

/* The value of a 0-dim integer tensor (torch's THPVariable branch of its int checks); 1 if o is
 * one, 0 if not, -1 on error. */
static int tensor_int(PyObject *o, int64_t *out) {
  if (!pa__is_tensor(o)) return 0;
  int64_t ndim;
  int dt = pa__tensor_dtype_and_dim(o, &ndim);
  if (dt < 0 || ndim != 0 || !c10c_dtype_is_integral((c10c_dtype)dt, false)) return 0;
  return pa_tensor_int64(o, out) < 0 ? -1 : 1;
}

int pa_index(PyObject *obj, int64_t *out) {
  int t = tensor_int(obj, out);
  if (t != 0) return t < 0 ? -1 : 0;
  PyObject *i = PyNumber_Index(obj);
  if (i == NULL) return -1;
  int overflow;
  long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
  Py_DECREF(i);
  if (overflow) {
    PyErr_SetString(PA_VALUE_ERROR, "Overflow when unpacking long long");
    return -1;
  }
  if (v == -1 && PyErr_Occurred()) return -1;
  *out = v;
  return 0;
}

int pa_int(const pa_args *r, int i, int64_t *out) {
  PyObject *o = r->obj[i];
  if (o == NULL) {
    *out = r->sig->params[i].default_int;
    return 0;
  }
  if (PyLong_CheckExact(o)) {
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) {
      PyErr_SetString(PA_VALUE_ERROR, "Overflow when unpacking long long");
      return -1;
    }
    *out = v;
    return 0;
  }
  return pa_index(o, out);
}

/* THPUtils_unpackIndex on an int-list element; torch's wrapping of its failure. */
static int unpack_element(const pa_args *r, int i, PyObject *item, Py_ssize_t idx, int64_t *out) {
  PyObject *ix = NULL; /* item's __index__, for what is not an exact int */
  if (!PyLong_CheckExact(item)) {
    int t = tensor_int(item, out);
    if (t != 0) return t < 0 ? -1 : 0;
    ix = PyNumber_Index(item);
    if (ix == NULL) {
      PyErr_Clear();
      PyObject *tn = pa__typename_of(item);
      if (tn == NULL) return -1;
      PyErr_Format(PA_TYPE_ERROR,
                   "%s(): argument '%s' failed to unpack the object at pos %zd with error \"type "
                   "must be tuple of ints,but got %U\"",
                   r->sig->name, r->sig->params[i].cname, idx + 1, tn);
      Py_DECREF(tn);
      return -1;
    }
  }
  int overflow;
  long long v = PyLong_AsLongLongAndOverflow(ix != NULL ? ix : item, &overflow);
  Py_XDECREF(ix);
  if (!overflow) {
    *out = v;
    return 0;
  }
  PyErr_Format(PA_TYPE_ERROR,
               "%s(): argument '%s' failed to unpack the object at pos %zd with error \"%s\"",
               r->sig->name, r->sig->params[i].cname, idx + 1, "Overflow when unpacking long long");
  return -1;
}

static int too_many_dims(Py_ssize_t n, Py_ssize_t cap) {
  PyErr_Format(PyExc_RuntimeError, "pyc10 supports at most %zd dimensions, got %zd", cap, n);
  return -1;
}

int pa_intlist(const pa_args *r, int i, int64_t *out, Py_ssize_t cap, Py_ssize_t *n) {
  if (i == 0 && r->varargs != NULL) {
    if (r->n_varargs > cap) return too_many_dims(r->n_varargs, cap);
    for (Py_ssize_t k = 0; k < r->n_varargs; k++) {
      if (unpack_element(r, i, r->varargs[k], k, &out[k]) < 0) return -1;
    }
    *n = r->n_varargs;
    return 0;
  }
  const pa_param *p = &r->sig->params[i];
  PyObject *o = r->obj[i];
  if (o == NULL) {
    if (p->n_default_ints > cap) return too_many_dims(p->n_default_ints, cap);
    memcpy(out, p->default_ints, sizeof(int64_t) * (size_t)p->n_default_ints);
    *n = p->n_default_ints;
    return 0;
  }
  if (p->size > 0 && pa__check_long(o)) {
    int64_t v;
    if (pa_index(o, &v) < 0) return -1;
    if (p->size > cap) return too_many_dims(p->size, cap);
    for (int k = 0; k < p->size; k++) out[k] = v;
    *n = p->size;
    return 0;
  }
  Py_ssize_t len = PySequence_Size(o);
  if (len < 0) return -1;
  if (len > cap) return too_many_dims(len, cap);
  bool tuple = PyTuple_Check(o);
  for (Py_ssize_t k = 0; k < len; k++) {
    PyObject *item = tuple ? PyTuple_GetItem(o, k) : PyList_GetItem(o, k);
    if (item == NULL || unpack_element(r, i, item, k, &out[k]) < 0) return -1;
  }
  *n = len;
  return 0;
}

int pa_bool(const pa_args *r, int i, bool *out) {
  PyObject *o = r->obj[i];
  *out = o == NULL ? r->sig->params[i].default_bool : o == Py_True;
  return 0;
}

int pa_double(const pa_args *r, int i, double *out) {
  PyObject *o = r->obj[i];
  if (o == NULL) {
    *out = r->sig->params[i].default_double;
    return 0;
  }
  double v = PyFloat_AsDouble(o);
  if (v == -1.0 && PyErr_Occurred()) return -1;
  *out = v;
  return 0;
}

static int code_attr(PyObject *o, PyObject *attr, int *out) {
  PyObject *v = PyObject_GetAttr(o, attr);
  if (v == NULL) return -1;
  long code = PyLong_AsLong(v);
  Py_DECREF(v);
  if (code == -1 && PyErr_Occurred()) return -1;
  *out = (int)code;
  return 0;
}

int pa_dtype(const pa_args *r, int i, int *out) {
  PyObject *o = r->obj[i];
  if (o == NULL) {
    const char *d = r->sig->params[i].default_enum;
    if (d != NULL && strcmp(d, "torch.int64") == 0) {
      *out = C10C_DTYPE_INT64;
      return 0;
    }
    *out = -1;
    return 0;
  }
  if (o == (PyObject *)&PyFloat_Type) {
    *out = C10C_DTYPE_FLOAT64;
  } else if (o == (PyObject *)&PyLong_Type) {
    *out = C10C_DTYPE_INT64;
  } else if (o == (PyObject *)&PyBool_Type) {
    *out = C10C_DTYPE_BOOL;
  } else if (o == (PyObject *)&PyComplex_Type) {
    *out = C10C_DTYPE_COMPLEX128;
  } else {
    return code_attr(o, pa_cls.dtype_value, out);
  }
  return 0;
}

int pa_layout(const pa_args *r, int i, int *out) {
  PyObject *o = r->obj[i];
  if (o == NULL) {
    *out = -1;
    return 0;
  }
  return code_attr(o, pa_cls.layout_value, out);
}

int pa_memory_format(const pa_args *r, int i, int *out) {
  PyObject *o = r->obj[i];
  if (o == NULL) {
    const char *d = r->sig->params[i].default_enum;
    if (d != NULL && !r->sig->params[i].default_none && pa_cls.formats_by_name != NULL) {
      o = PyDict_GetItemString(pa_cls.formats_by_name, d);
    }
    if (o == NULL) {
      *out = -1;
      return 0;
    }
  }
  return code_attr(o, pa_cls.format_value, out);
}

int pa_device(const pa_args *r, int i, c10c_device *out, bool *has) {
  PyObject *o = r->obj[i];
  *has = o != NULL;
  if (o == NULL) return 0;
  PyObject *dev;
  if (PyObject_TypeCheck(o, pa_cls.device)) {
    dev = o;
    Py_INCREF(dev);
  } else if (PyUnicode_CheckExact(o)) {
    /* device strings parsed before (pyc10.device is interned: the same string, the same object) */
    static PyObject *parsed;
    if (parsed == NULL && (parsed = PyDict_New()) == NULL) return -1;
    dev = PyDict_GetItemWithError(parsed, o);
    if (dev != NULL) {
      Py_INCREF(dev);
    } else {
      if (PyErr_Occurred()) return -1;
      dev = PyObject_CallFunctionObjArgs(pa_cls.make_device, o, NULL);
      if (dev == NULL) return -1;
      if (PyDict_Size(parsed) < 256 && PyDict_SetItem(parsed, o, dev) < 0) {
        Py_DECREF(dev);
        return -1;
      }
    }
  } else {
    /* torch: an int is a CUDA index (or the current accelerator's) */
    dev = PyObject_CallFunctionObjArgs(pa_cls.make_device, o, NULL);
    if (dev == NULL) return -1;
  }
  int type, index;
  int rc = code_attr(dev, pa_cls.device_type, &type) < 0 ||
                   code_attr(dev, pa_cls.device_index, &index) < 0
               ? -1
               : 0;
  Py_DECREF(dev);
  if (rc < 0) return -1;
  out->type = (c10c_device_type)type;
  out->index = (c10c_device_index)index;
  return 0;
}
