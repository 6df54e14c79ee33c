/* pyc10's argument parser, its lowest part: which Python values each parameter type accepts
 * (torch's FunctionParameter::check), the type names torch's messages print, and the binding of a
 * call to one signature (pa__parse_one, torch's FunctionSignature::parse) with its TypeErrors for
 * missing, extra and unknown arguments. The parser's other files call it; it calls none of
 * them (and names none of their functions: a lower file knows nothing of its users).
 */
#include <string.h>

#include "argparse.h"
#include "common.h"

int pa__tensor_dtype_and_dim(PyObject *o, int64_t *ndim) {
  c10c_tensor *h = ((TensorObject *)o)->h;
  if (h == NULL) return -1;
  *ndim = (int64_t)c10c_tensor_dim(h);
  return (int)c10c_tensor_dtype(h);
}

/* torch's FunctionParameter::type_name, with pyc10 in place of torch in class names. */
const char *pa__type_name(pa_type t) {
  switch (t) {
    case PA_TENSOR: return "Tensor";
    case PA_SCALAR: return "Number";
    case PA_INT64:
    case PA_SYMINT: return "int";
    case PA_DOUBLE: return "float";
    case PA_COMPLEX: return "complex";
    case PA_TENSOR_LIST: return "tuple of Tensors";
    case PA_INT_LIST:
    case PA_SYM_INT_LIST: return "tuple of ints";
    case PA_BOOL: return "bool";
    case PA_STORAGE: return "pyc10.Storage";
    case PA_PYOBJECT: return "object";
    case PA_SCALARTYPE: return "pyc10.dtype";
    case PA_LAYOUT: return "pyc10.layout";
    case PA_MEMORY_FORMAT: return "pyc10.memory_format";
    case PA_DEVICE: return "pyc10.device";
    case PA_STREAM: return "pyc10.cuda.Stream";
    case PA_STRING: return "str";
  }
  return "object";
}

/* ---- type checks (FunctionParameter::check) --------------------------------------------- */

bool pa__is_tensor(PyObject *o) { return PyObject_TypeCheck(o, pa_cls.tensor); }

/* numpy's integer scalars, found by name as torch's is_numpy_int does (numpy need not be loaded).
 */
static bool is_numpy_int(PyObject *o) {
  PyTypeObject *t = Py_TYPE(o);
  PyObject *mod = PyObject_GetAttrString((PyObject *)t, "__module__");
  if (mod == NULL) return PyErr_Clear(), false;
  bool numpy = PyUnicode_Check(mod) && PyUnicode_CompareWithASCIIString(mod, "numpy") == 0;
  Py_DECREF(mod);
  if (!numpy) return false;
  static PyObject *integer;
  if (integer == NULL) {
    PyObject *np = PyImport_ImportModule("numpy");
    if (np == NULL) return PyErr_Clear(), false;
    integer = PyObject_GetAttrString(np, "integer");
    Py_DECREF(np);
    if (integer == NULL) return PyErr_Clear(), false;
  }
  int r = PyObject_IsInstance(o, integer);
  if (r < 0) PyErr_Clear();
  return r > 0;
}

/* THPUtils_checkLong: int or numpy int, not bool. */
bool pa__check_long(PyObject *o) {
  if (PyBool_Check(o)) return false;
  return PyLong_Check(o) || is_numpy_int(o);
}

/* THPUtils_checkIndex: not bool; an int; or anything whose __index__ succeeds. */
static bool check_index(PyObject *o) {
  if (PyBool_Check(o)) return false;
  if (pa__check_long(o)) return true;
  if (pa__is_tensor(o)) {
    int64_t ndim;
    int dt = pa__tensor_dtype_and_dim(o, &ndim);
    return dt >= 0 && ndim == 0 && c10c_dtype_is_integral((c10c_dtype)dt, false);
  }
  PyObject *i = PyNumber_Index(o);
  if (i == NULL) return PyErr_Clear(), false;
  Py_DECREF(i);
  return true;
}

static bool is_int_list(PyObject *o, int size, Py_ssize_t *failed) {
  if (PyTuple_Check(o) || PyList_Check(o)) {
    Py_ssize_t n = PySequence_Size(o);
    if (n <= 0) return n == 0;
    PyObject *first = PySequence_GetItem(o, 0);
    if (first == NULL) return PyErr_Clear(), false;
    bool ok = check_index(first);
    Py_DECREF(first);
    if (!ok && failed != NULL) *failed = 0;
    return ok;
  }
  return size > 0 && pa__check_long(o);
}

static bool is_int_list_args(PyObject *const *items, Py_ssize_t n) {
  return n == 0 || check_index(items[0]);
}

/* numpy's scalars (torch's is_numpy_scalar): integers, floats, bools, complex. */
static bool is_numpy_scalar(PyObject *o) {
  PyObject *mod = PyObject_GetAttrString((PyObject *)Py_TYPE(o), "__module__");
  if (mod == NULL) return PyErr_Clear(), false;
  bool numpy = PyUnicode_Check(mod) && PyUnicode_CompareWithASCIIString(mod, "numpy") == 0;
  Py_DECREF(mod);
  if (!numpy || !PyNumber_Check(o)) return false;
  PyObject *name = PyObject_GetAttrString((PyObject *)Py_TYPE(o), "__name__");
  if (name == NULL) return PyErr_Clear(), false;
  bool array = PyUnicode_CompareWithASCIIString(name, "ndarray") == 0;
  Py_DECREF(name);
  return !array;
}

/* THPUtils_checkDouble: floats, ints (bool too), numpy scalars. */
static bool check_double(PyObject *o) {
  return PyFloat_Check(o) || PyLong_Check(o) || is_numpy_scalar(o);
}

static bool check_scalar(PyObject *o) {
  return PyFloat_Check(o) || PyLong_Check(o) || PyComplex_Check(o) || is_numpy_scalar(o);
}

static bool check_scalar(PyObject *o);
static bool check_param(const pa_param *p, PyObject *o, Py_ssize_t *failed) {
  switch (p->type) {
    case PA_TENSOR: return pa__is_tensor(o) || (p->numbers_as_tensors && check_scalar(o));
    case PA_SCALAR:
      if (check_scalar(o)) return true;
      /* fall through */
    case PA_COMPLEX:
      if (PyComplex_Check(o)) return true;
      /* fall through */
    case PA_DOUBLE: {
      if (check_double(o)) return true;
      if (pa__is_tensor(o)) {
        int64_t ndim;
        return pa__tensor_dtype_and_dim(o, &ndim) >= 0 && ndim == 0;
      }
      return false;
    }
    case PA_INT64: {
      if (pa__check_long(o)) return true;
      if (pa__is_tensor(o)) {
        int64_t ndim;
        int dt = pa__tensor_dtype_and_dim(o, &ndim);
        return dt >= 0 && ndim == 0 && c10c_dtype_is_integral((c10c_dtype)dt, false);
      }
      return false;
    }
    case PA_SYMINT: return check_index(o);
    case PA_INT_LIST:
    case PA_SYM_INT_LIST: return is_int_list(o, p->size, failed);
    case PA_BOOL: return PyBool_Check(o);
    case PA_STORAGE: return pa_cls.storage != NULL && PyObject_TypeCheck(o, pa_cls.storage);
    case PA_PYOBJECT: return true;
    case PA_SCALARTYPE:
      return PyObject_TypeCheck(o, pa_cls.dtype) || o == (PyObject *)&PyFloat_Type ||
             o == (PyObject *)&PyBool_Type || o == (PyObject *)&PyLong_Type ||
             o == (PyObject *)&PyComplex_Type;
    case PA_LAYOUT: return PyObject_TypeCheck(o, pa_cls.layout);
    case PA_MEMORY_FORMAT: return PyObject_TypeCheck(o, pa_cls.memory_format);
    case PA_DEVICE:
      return pa__check_long(o) || PyUnicode_Check(o) || PyObject_TypeCheck(o, pa_cls.device);
    case PA_STREAM: return pa_cls.stream != NULL && PyObject_TypeCheck(o, pa_cls.stream);
    case PA_STRING: return PyUnicode_Check(o);
    case PA_TENSOR_LIST: {
      if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
      Py_ssize_t n = PySequence_Size(o);
      for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *it = PySequence_GetItem(o, k);
        bool ok = it != NULL && pa__is_tensor(it);
        Py_XDECREF(it);
        if (!ok) return PyErr_Clear(), false;
      }
      return true;
    }
  }
  return false;
}

/* ---- type names as torch prints them ---------------------------------------------------- */

/* Py_TYPE(o)->tp_name: "module.Name" for C types outside builtins, the name for classes; pyc10's
 * own classes as "pyc10.Name" (torch's C types say "torch.Name"). */
PyObject *pa__typename_of(PyObject *o) {
  PyTypeObject *t = Py_TYPE(o);
  if (t == pa_cls.dtype || t == pa_cls.layout || t == pa_cls.memory_format || t == pa_cls.device ||
      t == pa_cls.size || (pa_cls.storage != NULL && PyObject_TypeCheck(o, pa_cls.storage))) {
    /* storages too: torch names its own with their module (torch.storage.UntypedStorage) */
    PyObject *n = PyObject_GetAttrString((PyObject *)t, "__name__");
    if (n == NULL) return NULL;
    PyObject *r = PyUnicode_FromFormat("pyc10.%U", n);
    Py_DECREF(n);
    return r;
  }
  PyObject *name = PyObject_GetAttrString((PyObject *)t, "__name__");
  if (name == NULL) return NULL;
  if (PyType_GetFlags(t) & Py_TPFLAGS_HEAPTYPE) return name;
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

/* ---- errors ----------------------------------------------------------------------------- */

static void extra_args(const pa_signature *s, Py_ssize_t nargs) {
  if (s->min_args != s->max_pos_args) {
    PyErr_Format(PA_TYPE_ERROR, "%s() takes from %d to %d positional arguments but %zd were given",
                 s->name, s->min_args, s->max_pos_args, nargs);
  } else {
    PyErr_Format(PA_TYPE_ERROR, "%s() takes %d positional argument%s but %zd %s given", s->name,
                 s->max_pos_args, s->max_pos_args == 1 ? "" : "s", nargs,
                 nargs == 1 ? "was" : "were");
  }
}

static void missing_args(const pa_signature *s, int idx) {
  int missing = 0;
  PyObject *names = PyUnicode_FromString("");
  for (int i = idx; i < s->n_params && names != NULL; i++) {
    if (s->params[i].optional) continue;
    PyObject *n =
        PyUnicode_FromFormat("%U%s\"%s\"", names, missing > 0 ? ", " : "", s->params[i].cname);
    PA_SETREF(names, n);
    missing++;
  }
  if (names == NULL) return;
  /* torch's own plural rule, kept: "1 required positional arguments" */
  PyErr_Format(PA_TYPE_ERROR, "%s() missing %d required positional argument%s: %U", s->name,
               missing, missing == 1 ? "s" : "", names);
  Py_DECREF(names);
}

static int find_param(const pa_signature *s, PyObject *key) {
  for (int i = 0; i < s->n_params; i++) {
    if (s->params[i].name == key || PyUnicode_Compare(s->params[i].name, key) == 0) return i;
  }
  return -1;
}

static void extra_kwargs(const pa_signature *s, PyObject *kwnames, Py_ssize_t nargs) {
  Py_ssize_t nk = PyTuple_Size(kwnames);
  for (Py_ssize_t k = 0; k < nk; k++) {
    PyObject *key = PyTuple_GetItem(kwnames, k);
    int i = find_param(s, key);
    if (i < 0) {
      PyErr_Format(PA_TYPE_ERROR, "%s() got an unexpected keyword argument '%U'", s->name, key);
      return;
    }
    if (i < nargs) {
      PyErr_Format(PA_TYPE_ERROR, "%s() got multiple values for argument '%U'", s->name, key);
      return;
    }
  }
  PyErr_SetString(PA_TYPE_ERROR, "invalid keyword arguments");
}

/* A call's keywords, read once: their names (kept here for up to KW_CACHED), and whether each is
 * one of the signature's (interned) parameter names by identity. Then a parameter no name is
 * identical to is not given, with no string compared. Keywords are interned where a call spells
 * them; one from a built dict may be another string of equal text. */
enum { KW_CACHED = 16 };
typedef struct {
  PyObject *tuple; /* kwnames, or NULL */
  Py_ssize_t n;
  PyObject *names[KW_CACHED];
  bool identical;
} keywords;

static PyObject *kw_name(const keywords *kw, Py_ssize_t k) {
  return kw->n <= KW_CACHED ? kw->names[k] : PyTuple_GetItem(kw->tuple, k);
}

static void read_keywords(const pa_signature *s, PyObject *kwnames, keywords *kw) {
  kw->tuple = kwnames;
  kw->n = kwnames != NULL ? PyTuple_Size(kwnames) : 0;
  kw->identical = true;
  for (Py_ssize_t k = 0; k < kw->n; k++) {
    PyObject *key = PyTuple_GetItem(kwnames, k);
    if (k < KW_CACHED) kw->names[k] = key;
    bool found = false;
    for (int i = 0; i < s->n_params && !found; i++)
      found = s->params[i].name == key || s->params[i].numpy_name == key;
    kw->identical = kw->identical && found;
  }
}

static PyObject *keyword_value(const pa_param *p, PyObject *const *args, Py_ssize_t nargs,
                               const keywords *kw) {
  for (int pass = 0; pass < 2; pass++) {
    PyObject *want = pass == 0 ? p->name : p->numpy_name;
    if (want == NULL) break;
    for (Py_ssize_t k = 0; k < kw->n; k++) {
      if (kw_name(kw, k) == want) return args[nargs + k];
    }
    if (kw->identical) continue;
    for (Py_ssize_t k = 0; k < kw->n; k++) {
      if (PyUnicode_Compare(kw_name(kw, k), want) == 0) return args[nargs + k];
    }
  }
  return NULL;
}

/* FunctionSignature::parse. Returns 1 if bound, 0 if not (an error set only when raise). */
int pa__parse_one(const pa_signature *s, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                  pa_args *r, bool raise) {
  Py_ssize_t remaining = kwnames != NULL ? PyTuple_Size(kwnames) : 0;
  /* torch 2.13: varargs only when the first positional argument is itself an int (else
   * reshape(4.0, 6.0) is "takes 1 positional argument but 2 were given") */
  bool allow_varargs = s->max_pos_args == 1 &&
                       (s->params[0].type == PA_INT_LIST || s->params[0].type == PA_SYM_INT_LIST) &&
                       is_int_list_args(args, nargs);
  if (nargs > s->max_pos_args && !allow_varargs) {
    if (raise) extra_args(s, nargs);
    return 0;
  }
  memset(r, 0, sizeof *r);
  r->sig = s;
  keywords kw;
  read_keywords(s, kwnames, &kw);
  Py_ssize_t pos = 0;
  for (int i = 0; i < s->n_params; i++) {
    const pa_param *p = &s->params[i];
    PyObject *obj = NULL;
    bool is_kwd = false;
    if (pos < nargs) {
      if (p->keyword_only) {
        if (raise) extra_args(s, nargs);
        return 0;
      }
      obj = args[pos];
    } else if (kwnames != NULL) {
      obj = keyword_value(p, args, nargs, &kw);
      is_kwd = true;
    }
    Py_ssize_t failed = -1;
    bool varargs_eligible = allow_varargs && pos == 0 && !is_kwd;
    if ((obj == NULL && p->optional) || (obj == Py_None && p->allow_none)) {
      r->obj[i] = NULL;
    } else if (obj == NULL) {
      if (raise) missing_args(s, i);
      return 0;
    } else if (check_param(p, obj, &failed)) {
      r->obj[i] = obj;
    } else if (varargs_eligible && is_int_list_args(args, nargs)) {
      r->varargs = args;
      r->n_varargs = nargs;
      pos = nargs;
      continue;
    } else {
      if (!raise) return 0;
      PyObject *tn = pa__typename_of(obj);
      if (tn == NULL) return 0;
      if (is_kwd) {
        PyErr_Format(PA_TYPE_ERROR, "%s(): argument '%s' must be %s, not %U", s->name, p->cname,
                     pa__type_name(p->type), tn);
      } else if (failed >= 0) {
        PyObject *seq = (PyTuple_Check(obj) || PyList_Check(obj)) ? obj : NULL;
        PyObject *item =
            seq != NULL ? PySequence_GetItem(seq, failed) : (Py_INCREF(args[failed]), args[failed]);
        PyObject *itn = item != NULL ? pa__typename_of(item) : NULL;
        Py_XDECREF(item);
        if (itn != NULL) {
          PyErr_Format(PA_TYPE_ERROR,
                       "%s(): argument '%s' (position %zd) must be %s, but found element of type "
                       "%U at pos %zd",
                       s->name, p->cname, pos + 1, pa__type_name(p->type), itn, failed);
          Py_DECREF(itn);
        }
      } else {
        PyErr_Format(PA_TYPE_ERROR, "%s(): argument '%s' (position %zd) must be %s, not %U",
                     s->name, p->cname, pos + 1, pa__type_name(p->type), tn);
      }
      Py_DECREF(tn);
      return 0;
    }
    if (!is_kwd) {
      pos++;
    } else if (obj != NULL) {
      remaining--;
    }
  }
  if (pos < nargs) { /* an int list bound as one argument, and more positional ones after it */
    if (raise) extra_args(s, nargs);
    return 0;
  }
  if (remaining > 0) {
    if (raise) extra_kwargs(s, kwnames, nargs);
    return 0;
  }
  return 1;
}
