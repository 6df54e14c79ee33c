/* pyc10's argument parser: torch's python_arg_parser.cpp rules over the signature table.
 *
 * What is torch's here, on purpose: the signature grammar and type names, the order overloads are
 * tried in, varargs int lists ("view(2, 3)" as "view((2, 3))" when the only positional parameter
 * is an int list), numpy's keyword aliases (axis for dim), which Python values each type accepts
 * (anything with __index__ but bool for ints, bool only for bool, 0-dim integer tensors for ints,
 * Python scalar types for dtypes), and every TypeError text, including format_invalid_args'
 * "received an invalid combination of arguments" (its "!type!" marks and its quirks: "1 required
 * positional arguments", a trailing ", " after keyword-only descriptions). torch's and pyc10's
 * class names differ only in their prefix: pyc10.dtype where torch says torch.dtype.
 */
#include "argparse.h"

#include "common.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pa_classes pa_cls;

/* pyc10's exception classes (C10TypeError derives from TypeError), the builtins before setup. */
#define PA_TYPE_ERROR  (pa_cls.type_error != NULL ? pa_cls.type_error : PyExc_TypeError)
#define PA_VALUE_ERROR (pa_cls.value_error != NULL ? pa_cls.value_error : PyExc_ValueError)

/* ---- the table -------------------------------------------------------------------------- */

typedef struct {
  const char *kind, *name, *doc;
  const char *const *sigs;
} table_entry;

#define PA_ENTRY(kind, name, doc, ...) \
  {#kind, #name, doc, (const char *const[]){__VA_ARGS__, NULL}},
static const table_entry table[] = {
#include "signatures.h"
};
#undef PA_ENTRY

/* ---- parsing signature strings ---------------------------------------------------------- */

static const struct {
  const char *text;
  pa_type type;
} type_names[] = {
    {"Tensor", PA_TENSOR},
    {"Scalar", PA_SCALAR},
    {"int64_t", PA_INT64},
    {"SymInt", PA_SYMINT},
    {"double", PA_DOUBLE},
    {"complex", PA_COMPLEX},
    {"TensorList", PA_TENSOR_LIST},
    {"IntArrayRef", PA_INT_LIST},
    {"SymIntArrayRef", PA_SYM_INT_LIST},
    {"bool", PA_BOOL},
    {"Storage", PA_STORAGE},
    {"PyObject*", PA_PYOBJECT},
    {"ScalarType", PA_SCALARTYPE},
    {"Layout", PA_LAYOUT},
    {"MemoryFormat", PA_MEMORY_FORMAT},
    {"Device", PA_DEVICE},
    {"Stream", PA_STREAM},
    {"c10::string_view", PA_STRING},
    {"std::string", PA_STRING},
};

/* torch's FunctionParameter::type_name, with pyc10 in place of torch in class names. */
static const char *type_name(pa_type t) {
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

static int bad_table(const char *fmt, const char *what) {
  PyErr_Format(PyExc_SystemError, "pyc10 signature table: %s in \"%s\"", what, fmt);
  return -1;
}

static int parse_default(pa_param *p, const char *text, const char *fmt) {
  if (strcmp(text, "None") == 0) {
    p->allow_none = true;
    p->default_none = 1;
    return 0;
  }
  switch (p->type) {
    case PA_INT64:
    case PA_SYMINT: p->default_int = strtoll(text, NULL, 10); return 0;
    case PA_BOOL:
      p->default_bool = strcmp(text, "True") == 0 || strcmp(text, "true") == 0;
      return 0;
    case PA_DOUBLE:
    case PA_SCALAR: p->default_double = strtod(text, NULL); return 0;
    case PA_INT_LIST:
    case PA_SYM_INT_LIST:
      if (text[0] != '{') {
        for (int k = 0; k < p->size && k < PA_MAX_DEFAULT_INTS; k++)
          p->default_ints[k] = strtoll(text, NULL, 10);
        p->n_default_ints = p->size;
        return 0;
      }
      for (const char *c = text + 1; *c && *c != '}';) {
        char *end;
        if (p->n_default_ints == PA_MAX_DEFAULT_INTS)
          return bad_table(fmt, "too many default ints");
        p->default_ints[p->n_default_ints++] = strtoll(c, &end, 10);
        c = *end == ',' ? end + 1 : end;
        if (end == c && *c != '}') return bad_table(fmt, "bad int list default");
      }
      return 0;
    default: p->default_enum = text; return 0;
  }
}

/* One "Type name=default" between the parentheses. */
static int parse_param(pa_param *p, const char *start, size_t len, bool keyword_only,
                       const char *fmt) {
  char buf[160];
  if (len >= sizeof buf) return bad_table(fmt, "parameter too long");
  memcpy(buf, start, len);
  buf[len] = '\0';
  char *space = strrchr(buf, ' ');
  if (space == NULL) return bad_table(fmt, "missing type");
  *space = '\0';
  char *type = buf, *name = space + 1;
  memset(p, 0, sizeof *p);
  p->keyword_only = keyword_only;
  char *q = strchr(type, '?');
  if (q != NULL) {
    p->allow_none = true;
    *q = '\0';
  }
  char *bracket = strchr(type, '[');
  if (bracket != NULL) {
    p->size = atoi(bracket + 1);
    *bracket = '\0';
  }
  size_t t;
  for (t = 0; t < sizeof type_names / sizeof type_names[0]; t++) {
    if (strcmp(type, type_names[t].text) == 0) break;
  }
  if (t == sizeof type_names / sizeof type_names[0]) return bad_table(fmt, "unknown type");
  p->type = type_names[t].type;
  char *eq = strchr(name, '=');
  if (eq != NULL) {
    *eq = '\0';
    p->optional = true;
    /* the default text must outlive buf: find it in fmt */
    const char *in_fmt = start + (size_t)(eq + 1 - buf);
    size_t dlen = len - (size_t)(eq + 1 - buf);
    char *copy = PyMem_Malloc(dlen + 1); /* kept for the process: parsers are static */
    if (copy == NULL) return PyErr_NoMemory(), -1;
    memcpy(copy, in_fmt, dlen);
    copy[dlen] = '\0';
    p->default_text = copy;
    if (parse_default(p, copy, fmt) < 0) return -1;
  }
  if (strlen(name) >= sizeof p->cname) return bad_table(fmt, "name too long");
  strcpy(p->cname, name);
  p->name = PyUnicode_InternFromString(name);
  if (p->name == NULL) return -1;
  const char *alias = strcmp(name, "dim") == 0       ? "axis"
                      : strcmp(name, "keepdim") == 0 ? "keepdims"
                                                     : NULL;
  if (alias != NULL && (p->numpy_name = PyUnicode_InternFromString(alias)) == NULL) return -1;
  return 0;
}

static int parse_signature(pa_signature *s, const char *fmt) {
  memset(s, 0, sizeof *s);
  const char *open = strchr(fmt, '(');
  if (open == NULL || (size_t)(open - fmt) >= sizeof s->name) return bad_table(fmt, "bad name");
  memcpy(s->name, fmt, (size_t)(open - fmt));
  const char *close = strrchr(fmt, ')');
  if (close == NULL) return bad_table(fmt, "missing )");
  bool keyword_only = false;
  for (const char *c = open + 1; c < close;) {
    const char *end = strstr(c, ", ");
    if (end == NULL || end > close) end = close;
    if (end - c == 1 && *c == '*') {
      keyword_only = true;
    } else {
      if (s->n_params == PA_MAX_PARAMS) return bad_table(fmt, "too many parameters");
      if (parse_param(&s->params[s->n_params++], c, (size_t)(end - c), keyword_only, fmt) < 0)
        return -1;
    }
    c = end == close ? close : end + 2;
  }
  const char *rest = close + 1;
  const char *arrow = strstr(rest, "->");
  s->returns = arrow != NULL ? arrow + 2 + (arrow[2] == ' ') : NULL;
  s->deprecated = strstr(rest, "|deprecated") != NULL;
  s->hidden = s->deprecated || strstr(rest, "|hidden") != NULL;
  /* torch's should_allow_numbers_as_tensors, for the names pyc10 has */
  bool numbers = strcmp(s->name, "to") == 0 || strcmp(s->name, "copy_") == 0;
  for (int i = 0; i < s->n_params; i++) {
    s->params[i].numbers_as_tensors = numbers;
    if (!s->params[i].optional) s->min_args++;
    if (!s->params[i].keyword_only) s->max_pos_args++;
  }
  return 0;
}

int pa_prepare(pa_parser *p) {
  if (p->ready) return 0;
  for (size_t e = 0; e < sizeof table / sizeof table[0]; e++) {
    if (strcmp(table[e].kind, p->kind) != 0 || strcmp(table[e].name, p->name) != 0) continue;
    p->doc = table[e].doc;
    p->n_sigs = 0;
    /* torch checks deprecated signatures last */
    for (int pass = 0; pass < 2; pass++) {
      for (const char *const *f = table[e].sigs; *f != NULL; f++) {
        bool deprecated = strstr(*f, "|deprecated") != NULL;
        if (deprecated != (pass == 1)) continue;
        if (p->n_sigs == PA_MAX_SIGS) return bad_table(*f, "too many overloads");
        if (parse_signature(&p->sigs[p->n_sigs++], *f) < 0) return -1;
      }
    }
    p->ready = 1;
    return 0;
  }
  PyErr_Format(PyExc_SystemError, "pyc10 signature table has no %s.%s", p->kind, p->name);
  return -1;
}

/* ---- type checks (FunctionParameter::check) --------------------------------------------- */

static bool is_tensor(PyObject *o) { return PyObject_TypeCheck(o, pa_cls.tensor); }

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
static bool check_long(PyObject *o) {
  if (PyBool_Check(o)) return false;
  return PyLong_Check(o) || is_numpy_int(o);
}

/* The dtype code of a tensor (-1 if it cannot be read). */
static int tensor_dtype_and_dim(PyObject *o, int64_t *ndim);

/* THPUtils_checkIndex: not bool; an int; or anything whose __index__ succeeds. */
static bool check_index(PyObject *o) {
  if (PyBool_Check(o)) return false;
  if (check_long(o)) return true;
  if (is_tensor(o)) {
    int64_t ndim;
    int dt = tensor_dtype_and_dim(o, &ndim);
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
  return size > 0 && check_long(o);
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
    case PA_TENSOR: return is_tensor(o) || (p->numbers_as_tensors && check_scalar(o));
    case PA_SCALAR:
      if (check_scalar(o)) return true;
      /* fall through */
    case PA_COMPLEX:
      if (PyComplex_Check(o)) return true;
      /* fall through */
    case PA_DOUBLE: {
      if (check_double(o)) return true;
      if (is_tensor(o)) {
        int64_t ndim;
        return tensor_dtype_and_dim(o, &ndim) >= 0 && ndim == 0;
      }
      return false;
    }
    case PA_INT64: {
      if (check_long(o)) return true;
      if (is_tensor(o)) {
        int64_t ndim;
        int dt = tensor_dtype_and_dim(o, &ndim);
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
      return check_long(o) || PyUnicode_Check(o) || PyObject_TypeCheck(o, pa_cls.device);
    case PA_STREAM: return pa_cls.stream != NULL && PyObject_TypeCheck(o, pa_cls.stream);
    case PA_STRING: return PyUnicode_Check(o);
    case PA_TENSOR_LIST: {
      if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
      Py_ssize_t n = PySequence_Size(o);
      for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *it = PySequence_GetItem(o, k);
        bool ok = it != NULL && is_tensor(it);
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
static PyObject *typename_of(PyObject *o) {
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

static PyObject *keyword_value(const pa_param *p, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
  if (kwnames == NULL) return NULL;
  Py_ssize_t nk = PyTuple_Size(kwnames);
  for (int pass = 0; pass < 2; pass++) {
    PyObject *want = pass == 0 ? p->name : p->numpy_name;
    if (want == NULL) break;
    for (Py_ssize_t k = 0; k < nk; k++) {
      if (PyTuple_GetItem(kwnames, k) == want) return args[nargs + k];
    }
    for (Py_ssize_t k = 0; k < nk; k++) {
      if (PyUnicode_Compare(PyTuple_GetItem(kwnames, k), want) == 0) return args[nargs + k];
    }
  }
  return NULL;
}

/* FunctionSignature::parse. Returns 1 if bound, 0 if not (an error set only when raise). */
static int parse_one(const pa_signature *s, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames, pa_args *r, bool raise) {
  Py_ssize_t remaining = kwnames != NULL ? PyTuple_Size(kwnames) : 0;
  bool allow_varargs = s->max_pos_args == 1 &&
                       (s->params[0].type == PA_INT_LIST || s->params[0].type == PA_SYM_INT_LIST);
  if (nargs > s->max_pos_args && !allow_varargs) {
    if (raise) extra_args(s, nargs);
    return 0;
  }
  memset(r, 0, sizeof *r);
  r->sig = s;
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
      obj = keyword_value(p, args, nargs, kwnames);
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
      PyObject *tn = typename_of(obj);
      if (tn == NULL) return 0;
      if (is_kwd) {
        PyErr_Format(PA_TYPE_ERROR, "%s(): argument '%s' must be %s, not %U", s->name, p->cname,
                     type_name(p->type), tn);
      } else if (failed >= 0) {
        PyObject *seq = (PyTuple_Check(obj) || PyList_Check(obj)) ? obj : NULL;
        PyObject *item =
            seq != NULL ? PySequence_GetItem(seq, failed) : (Py_INCREF(args[failed]), args[failed]);
        PyObject *itn = item != NULL ? typename_of(item) : NULL;
        Py_XDECREF(item);
        if (itn != NULL) {
          PyErr_Format(PA_TYPE_ERROR,
                       "%s(): argument '%s' (position %zd) must be %s, but found element of type "
                       "%U at pos %zd",
                       s->name, p->cname, pos + 1, type_name(p->type), itn, failed);
          Py_DECREF(itn);
        }
      } else {
        PyErr_Format(PA_TYPE_ERROR, "%s(): argument '%s' (position %zd) must be %s, not %U",
                     s->name, p->cname, pos + 1, type_name(p->type), tn);
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

/* ---- format_invalid_args (torch/csrc/utils/invalid_arguments.cpp) ----------------------- */

/* An option as torch's _parseOption reads it back from toString(): its arguments' printed type
 * names ("*" included, which counts as an argument there) and names. */
typedef struct {
  const char *types[PA_MAX_PARAMS + 1];
  const char *names[PA_MAX_PARAMS + 1];
  int n;
} option;

static void option_of(const pa_signature *s, option *o) {
  o->n = 0;
  if (s->n_params == 0) { /* torch splits "" into one nameless argument */
    o->types[0] = "";
    o->names[0] = "";
    o->n = 1;
    return;
  }
  bool kw = false;
  for (int i = 0; i < s->n_params; i++) {
    if (s->params[i].keyword_only && !kw) {
      kw = true;
      o->types[o->n] = "*";
      o->names[o->n++] = "*";
    }
    if (s->params[i].optional) {
      /* torch's _parseOption splits "bool copy = False" at its last space: the type is "bool
       * copy =" (which no value matches) and the name is the default's text */
      o->types[o->n] = "";
      o->names[o->n++] = s->params[i].default_text;
    } else {
      o->types[o->n] = type_name(s->params[i].type);
      o->names[o->n++] = s->params[i].cname;
    }
  }
}

static PyObject *option_text(const pa_signature *s) {
  PyObject *out = PyUnicode_FromString("(");
  bool kw = false;
  for (int i = 0; i < s->n_params && out != NULL; i++) {
    const char *sep = i != 0 ? ", " : "";
    const char *star = "";
    if (s->params[i].keyword_only && !kw) {
      kw = true;
      star = "*, ";
    }
    const pa_param *p = &s->params[i];
    PA_SETREF(out,
              PyUnicode_FromFormat("%U%s%s%s %s%s%s", out, sep, star, type_name(p->type), p->cname,
                                   p->optional ? " = " : "", p->optional ? p->default_text : ""));
  }
  if (out != NULL) PA_SETREF(out, PyUnicode_FromFormat("%U)", out));
  return out;
}

/* SimpleType/MultiType::is_matching: by the printed type name. */
static int name_matches(const char *type, PyObject *obj) {
  PyObject *tn = typename_of(obj);
  if (tn == NULL) return -1;
  int r;
  if (strcmp(type, "float") == 0) {
    r = PyUnicode_CompareWithASCIIString(tn, "float") == 0 ||
        PyUnicode_CompareWithASCIIString(tn, "int") == 0;
  } else {
    r = PyUnicode_CompareWithASCIIString(tn, type) == 0;
  }
  Py_DECREF(tn);
  return r;
}

static PyObject *append(PyObject *s, const char *fmt, ...) {
  if (s == NULL) return NULL;
  va_list ap;
  va_start(ap, fmt);
  PyObject *add = PyUnicode_FromFormatV(fmt, ap);
  va_end(ap);
  if (add == NULL) {
    Py_DECREF(s);
    return NULL;
  }
  PyObject *r = PyUnicode_Concat(s, add);
  Py_DECREF(s);
  Py_DECREF(add);
  return r;
}

/* One argument's description: "int", "tuple of (int, str)", "list of [int]". */
static PyObject *describe(PyObject *out, PyObject *arg) {
  PyObject *tn = typename_of(arg);
  if (tn == NULL) {
    Py_XDECREF(out);
    return NULL;
  }
  bool tuple = PyTuple_Check(arg);
  out = append(out, "%U", tn);
  Py_DECREF(tn);
  if (!tuple && !PyList_Check(arg)) return out;
  Py_ssize_t n = PySequence_Size(arg);
  out = append(out, tuple ? " of (" : " of [");
  for (Py_ssize_t k = 0; k < n && out != NULL; k++) {
    PyObject *item = PySequence_GetItem(arg, k);
    PyObject *itn = item != NULL ? typename_of(item) : NULL;
    Py_XDECREF(item);
    if (itn == NULL) {
      Py_DECREF(out);
      return NULL;
    }
    out = append(out, "%s%U", k != 0 ? ", " : "", itn);
    Py_DECREF(itn);
  }
  if (tuple) return append(out, n == 1 ? ",)" : ")");
  return append(out, "]");
}

static PyObject *arg_desc(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  PyObject *out = PyUnicode_FromString("(");
  for (Py_ssize_t k = 0; k < nargs && out != NULL; k++) {
    PyObject *tn = typename_of(args[k]);
    if (tn == NULL) return Py_DECREF(out), NULL;
    out = append(out, "%U, ", tn);
    Py_DECREF(tn);
  }
  /* torch lists keywords in its std::unordered_map's order: the reverse of the call's */
  Py_ssize_t nk = kwnames != NULL ? PyTuple_Size(kwnames) : 0;
  for (Py_ssize_t k = nk - 1; k >= 0 && out != NULL; k--) {
    PyObject *tn = typename_of(args[nargs + k]);
    if (tn == NULL) return Py_DECREF(out), NULL;
    out = append(out, "%U=%U, ", PyTuple_GetItem(kwnames, k), tn);
    Py_DECREF(tn);
  }
  if (out != NULL && nargs > 0)
    PA_SETREF(out, PyUnicode_Substring(out, 0, PyUnicode_GetLength(out) - 2));
  return append(out, ")");
}

static int option_index(const option *o, PyObject *key) {
  for (int i = 0; i < o->n; i++) {
    if (PyUnicode_CompareWithASCIIString(key, o->names[i]) == 0) return i;
  }
  return -1;
}

static PyObject *formatted_arg_desc(const option *o, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  Py_ssize_t nk = kwnames != NULL ? PyTuple_Size(kwnames) : 0;
  PyObject *out = PyUnicode_FromString("(");
  for (Py_ssize_t i = 0; i < nargs + nk && out != NULL; i++) {
    bool is_kwarg = i >= nargs;
    PyObject *arg;
    const char *kwname = NULL;
    if (is_kwarg) {
      /* torch looks the value up by the option's i-th argument name */
      if (i >= o->n)
        return Py_DECREF(out), PyErr_SetString(PA_TYPE_ERROR, "invalid arguments"), NULL;
      kwname = o->names[i];
      arg = NULL;
      for (Py_ssize_t k = 0; k < nk; k++) {
        if (PyUnicode_CompareWithASCIIString(PyTuple_GetItem(kwnames, k), kwname) == 0)
          arg = args[nargs + k];
      }
      if (arg == NULL)
        arg = args[i]; /* what torch's map lookup would throw on; keep the call's value */
    } else {
      arg = args[i];
    }
    int matching = i < o->n ? name_matches(o->types[i], arg) : 0;
    if (matching < 0) return Py_DECREF(out), NULL;
    if (!matching) out = append(out, "!");
    if (is_kwarg) out = append(out, "%s=", kwname);
    out = describe(out, arg);
    if (!matching) out = append(out, "!");
    out = append(out, ", ");
  }
  if (out != NULL && nargs > 0)
    PA_SETREF(out, PyUnicode_Substring(out, 0, PyUnicode_GetLength(out) - 2));
  return append(out, ")");
}

static bool argcount_match(const option *o, Py_ssize_t nargs, PyObject *kwnames) {
  Py_ssize_t got = nargs + (kwnames != NULL ? PyTuple_Size(kwnames) : 0);
  return got == o->n;
}

/* The keywords no argument of the option's tail is named (torch's _tryMatchKwargs). */
static PyObject *unmatched_kwargs(const option *o, PyObject *kwnames) {
  Py_ssize_t nk = kwnames != NULL ? PyTuple_Size(kwnames) : 0;
  Py_ssize_t start = o->n - nk;
  if (start < 0) start = 0;
  PyObject *out = NULL;
  for (Py_ssize_t k = nk - 1; k >= 0; k--) { /* torch's map order: the call's, reversed */
    PyObject *key = PyTuple_GetItem(kwnames, k);
    int i = option_index(o, key);
    if (i >= 0 && i >= start) continue;
    out = out == NULL ? PyUnicode_FromFormat("%U", key) : append(out, ", %U", key);
    if (out == NULL) return NULL;
  }
  return out;
}

static void print_error(const pa_parser *p, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames) {
  Py_ssize_t num_args = nargs + (kwnames != NULL ? PyTuple_Size(kwnames) : 0);
  int plausible = -1, n_plausible = 0, n_options = 0;
  for (int i = 0; i < p->n_sigs; i++) {
    const pa_signature *s = &p->sigs[i];
    n_options += !s->hidden;
    if (num_args >= s->min_args && num_args <= s->n_params && !s->hidden) {
      plausible = i;
      n_plausible++;
    }
  }
  if (n_plausible == 1) {
    pa_args scratch;
    parse_one(&p->sigs[plausible], args, nargs, kwnames, &scratch, true);
    if (PyErr_Occurred()) return;
  }
  bool has_kwargs = kwnames != NULL && PyTuple_Size(kwnames) > 0;
  PyObject *msg =
      PyUnicode_FromFormat("%s() received an invalid combination of arguments - ", p->sigs[0].name);
  if (n_options > 1) {
    PyObject *d = arg_desc(args, nargs, kwnames);
    if (d == NULL) return Py_XDECREF(msg);
    msg = append(msg, "got %U, but expected one of:\n", d);
    Py_DECREF(d);
  }
  for (int i = 0; i < p->n_sigs && msg != NULL; i++) {
    const pa_signature *s = &p->sigs[i];
    if (s->hidden) continue;
    option o;
    option_of(s, &o);
    PyObject *text = option_text(s);
    if (text == NULL) return Py_DECREF(msg);
    PyObject *unmatched = has_kwargs ? unmatched_kwargs(&o, kwnames) : NULL;
    if (has_kwargs && unmatched == NULL && PyErr_Occurred()) return Py_DECREF(text), Py_DECREF(msg);
    if (n_options == 1) {
      if (unmatched != NULL) {
        msg = append(msg, "got unrecognized keyword arguments: %U", unmatched);
      } else {
        PyObject *d = argcount_match(&o, nargs, kwnames)
                          ? formatted_arg_desc(&o, args, nargs, kwnames)
                          : arg_desc(args, nargs, kwnames);
        if (d == NULL) return Py_DECREF(text), Py_DECREF(msg);
        msg = append(msg, "got %U, but expected %U", d, text);
        Py_DECREF(d);
      }
    } else {
      msg = append(msg, " * %U\n", text);
      if (msg != NULL && argcount_match(&o, nargs, kwnames)) {
        if (unmatched != NULL) {
          msg = append(msg, "      didn't match because some of the keywords were incorrect: %U\n",
                       unmatched);
        } else {
          PyObject *d = formatted_arg_desc(&o, args, nargs, kwnames);
          if (d == NULL) return Py_DECREF(text), Py_XDECREF(msg), Py_XDECREF(unmatched);
          msg = append(
              msg, "      didn't match because some of the arguments have invalid types: %U\n", d);
          Py_DECREF(d);
        }
      }
    }
    Py_XDECREF(unmatched);
    Py_DECREF(text);
  }
  if (msg == NULL) return;
  PyErr_SetObject(PA_TYPE_ERROR, msg);
  Py_DECREF(msg);
}

int pa_parse(pa_parser *p, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
             pa_args *out) {
  if (!p->ready && pa_prepare(p) < 0) return -1;
  if (kwnames != NULL && PyTuple_Size(kwnames) == 0) kwnames = NULL;
  if (p->n_sigs == 1) {
    if (parse_one(&p->sigs[0], args, nargs, kwnames, out, true)) return 0;
    return -1;
  }
  for (int i = 0; i < p->n_sigs; i++) {
    if (parse_one(&p->sigs[i], args, nargs, kwnames, out, false)) {
      out->overload = i;
      return 0;
    }
    if (PyErr_Occurred()) return -1;
  }
  print_error(p, args, nargs, kwnames);
  if (!PyErr_Occurred()) PyErr_SetString(PA_TYPE_ERROR, "invalid arguments");
  return -1;
}

/* ---- conversions (PythonArgs) ----------------------------------------------------------- */

static int tensor_dtype_and_dim(PyObject *o, int64_t *ndim) {
  c10c_tensor *h = ((TensorObject *)o)->h;
  if (h == NULL) return -1;
  *ndim = (int64_t)c10c_tensor_dim(h);
  return (int)c10c_tensor_dtype(h);
}

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
  if (!is_tensor(o)) return 0;
  int64_t ndim;
  int dt = tensor_dtype_and_dim(o, &ndim);
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
  if (PyLong_CheckExact(item)) {
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(item, &overflow);
    if (!overflow) {
      *out = v;
      return 0;
    }
    PyErr_Format(PA_TYPE_ERROR,
                 "%s(): argument '%s' failed to unpack the object at pos %zd with error \"%s\"",
                 r->sig->name, r->sig->params[i].cname, idx + 1,
                 "Overflow when unpacking long long");
    return -1;
  }
  int t = tensor_int(item, out);
  if (t != 0) return t < 0 ? -1 : 0;
  PyObject *ix = PyNumber_Index(item);
  if (ix != NULL) {
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(ix, &overflow);
    Py_DECREF(ix);
    if (!overflow) {
      *out = v;
      return 0;
    }
    PyErr_Format(PA_TYPE_ERROR,
                 "%s(): argument '%s' failed to unpack the object at pos %zd with error \"%s\"",
                 r->sig->name, r->sig->params[i].cname, idx + 1,
                 "Overflow when unpacking long long");
    return -1;
  }
  PyErr_Clear();
  PyObject *tn = typename_of(item);
  if (tn == NULL) return -1;
  PyErr_Format(PA_TYPE_ERROR,
               "%s(): argument '%s' failed to unpack the object at pos %zd with error \"type must "
               "be tuple of ints,but got %U\"",
               r->sig->name, r->sig->params[i].cname, idx + 1, tn);
  Py_DECREF(tn);
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
  if (p->size > 0 && check_long(o)) {
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

/* ---- documentation ---------------------------------------------------------------------- */

const char *pa_doc(const char *kind, const char *name) {
  for (size_t e = 0; e < sizeof table / sizeof table[0]; e++) {
    if (strcmp(table[e].kind, kind) != 0 || strcmp(table[e].name, name) != 0) continue;
    size_t len = strlen(table[e].doc) + 2;
    for (const char *const *f = table[e].sigs; *f != NULL; f++) len += strlen(*f) + 1;
    char *doc = PyMem_Malloc(len + 1); /* kept: method tables live as long as the module */
    if (doc == NULL) return NULL;
    doc[0] = '\0';
    for (const char *const *f = table[e].sigs; *f != NULL; f++) {
      if (strstr(*f, "|deprecated") != NULL || strstr(*f, "|hidden") != NULL) continue;
      strcat(doc, *f);
      strcat(doc, "\n");
    }
    strcat(doc, "\n");
    strcat(doc, table[e].doc);
    return doc;
  }
  return NULL;
}

size_t pa_table_count(void) { return sizeof table / sizeof table[0]; }

void pa_table_entry(size_t i, const char **kind, const char **name) {
  *kind = table[i].kind;
  *name = table[i].name;
}
