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
 * This file owns the table, the signature grammar and pa_parse (trying each overload in turn);
 * argparse_match.c checks values against parameter types and binds a call to one signature,
 * argparse_errors.c writes the "invalid combination of arguments" TypeError, and
 * argparse_convert.c converts bound arguments to C values (pa_int, pa_intlist, pa_dtype, ...).
 */
#include "argparse.h"

#include "common.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
