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
 *
 * This file owns the table, the signature grammar, the type checks and the binding of a call
 * (pa_parse); argparse_errors.c writes the "invalid combination of arguments" TypeError, and
 * argparse_convert.c converts bound arguments to C values (pa_int, pa_intlist, pa_dtype, ...).
 */
#include "argparse.h"

#include "common.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pa_classes pa_cls;

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

int pa_parse(pa_parser *p, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
             pa_args *out) {
  if (!p->ready && pa_prepare(p) < 0) return -1;
  if (kwnames != NULL && PyTuple_Size(kwnames) == 0) kwnames = NULL;
  if (p->n_sigs == 1) {
    if (pa__parse_one(&p->sigs[0], args, nargs, kwnames, out, true)) return 0;
    return -1;
  }
  for (int i = 0; i < p->n_sigs; i++) {
    if (pa__parse_one(&p->sigs[i], args, nargs, kwnames, out, false)) {
      out->overload = i;
      return 0;
    }
    if (PyErr_Occurred()) return -1;
  }
  pa__print_error(p, args, nargs, kwnames);
  if (!PyErr_Occurred()) PyErr_SetString(PA_TYPE_ERROR, "invalid arguments");
  return -1;
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
