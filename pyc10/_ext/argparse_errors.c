/* pyc10's argument parser, its TypeError for a call no signature takes: torch's
 * format_invalid_args (torch/csrc/utils/invalid_arguments.cpp), "X() received an invalid
 * combination of arguments - got (...), but expected one of: ..." with its "!type!" marks and
 * its quirks. The binding itself is in argparse.c.
 */
#include <stdarg.h>
#include <string.h>

#include "argparse.h"

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
      o->types[o->n] = pa__type_name(s->params[i].type);
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
    PA_SETREF(out, PyUnicode_FromFormat("%U%s%s%s %s%s%s", out, sep, star, pa__type_name(p->type),
                                        p->cname, p->optional ? " = " : "",
                                        p->optional ? p->default_text : ""));
  }
  if (out != NULL) PA_SETREF(out, PyUnicode_FromFormat("%U)", out));
  return out;
}

/* SimpleType/MultiType::is_matching: by the printed type name. */
static int name_matches(const char *type, PyObject *obj) {
  PyObject *tn = pa__typename_of(obj);
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
  PyObject *tn = pa__typename_of(arg);
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
    PyObject *itn = item != NULL ? pa__typename_of(item) : NULL;
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
    PyObject *tn = pa__typename_of(args[k]);
    if (tn == NULL) return Py_DECREF(out), NULL;
    out = append(out, "%U, ", tn);
    Py_DECREF(tn);
  }
  /* torch lists keywords in its std::unordered_map's order: the reverse of the call's */
  Py_ssize_t nk = kwnames != NULL ? PyTuple_Size(kwnames) : 0;
  for (Py_ssize_t k = nk - 1; k >= 0 && out != NULL; k--) {
    PyObject *tn = pa__typename_of(args[nargs + k]);
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

void pa__print_error(const pa_parser *p, PyObject *const *args, Py_ssize_t nargs,
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
    pa__parse_one(&p->sigs[plausible], args, nargs, kwnames, &scratch, true);
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
