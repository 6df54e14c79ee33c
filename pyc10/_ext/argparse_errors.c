/* pyc10's argument parser, its TypeError for a call no signature takes: torch's
 * format_invalid_args (torch/csrc/utils/invalid_arguments.cpp), "X() received an invalid
 * combination of arguments - got (...), but expected one of: ..." with its "!type!" marks and
 * its quirks. The binding itself is in argparse_match.c.
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

/* ---- the order torch lists a call's keywords in ----
 * format_invalid_args copies the keywords into a std::unordered_map<std::string, PyObject *> one
 * by one, in the call's order, and prints them in the map's iteration order. With libstdc++ (the
 * library torch's Linux wheels are built with) that order follows from std::hash<std::string> and
 * the _Prime_rehash_policy: a key whose bucket is new goes to the front of the map's list,
 * one whose bucket is taken to the front of that bucket's keys, and a rehash walks the list
 * in order doing the same under the new bucket count. Checked against libstdc++ itself (g++ 12)
 * for 20,000 random key sets of 1 to 40 keys. */

static uint64_t shift_mix(uint64_t v) { return v ^ (v >> 47); }

/* libstdc++'s _Hash_bytes (64-bit size_t) with std::hash<std::string>'s seed. */
static uint64_t std_string_hash(const char *s, size_t len) {
  const uint64_t mul = ((uint64_t)0xc6a4a793u << 32) + 0x5bd1e995u;
  uint64_t hash = 0xc70f6907u ^ (len * mul);
  size_t aligned = len & ~(size_t)7;
  for (size_t i = 0; i < aligned; i += 8) {
    uint64_t data;
    memcpy(&data, s + i, 8); /* the machine's byte order, as its unaligned_load */
    hash ^= shift_mix(data * mul) * mul;
    hash *= mul;
  }
  if ((len & 7) != 0) {
    uint64_t data = 0;
    for (size_t n = len & 7; n-- > 0;) data = (data << 8) + (unsigned char)s[aligned + n];
    hash ^= data;
    hash *= mul;
  }
  return shift_mix(shift_mix(hash) * mul);
}

/* _Prime_rehash_policy::_M_next_bkt for the counts a call's keywords reach (0 beyond them);
 * sets *next_resize as it does (max_load_factor 1). */
static size_t next_bucket_count(size_t n, size_t *next_resize) {
  static const unsigned char fast[] = {2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13};
  static const unsigned short primes[] = {
      17, 19,  23,  29,  31,  37,  41,  43,  47,  53,  59,  61,  67,  71,  73,  79,  83, 89,
      97, 103, 109, 113, 127, 137, 139, 149, 157, 167, 179, 193, 199, 211, 227, 241, 257};
  if (n < sizeof fast) {
    if (n == 0) return 1;
    return *next_resize = fast[n];
  }
  for (size_t i = 0; i < sizeof primes / sizeof primes[0]; i++)
    if (primes[i] >= n) return *next_resize = primes[i];
  return 0;
}

/* node into list (len nodes) at the front of its bucket's keys, or of the list. */
static void insert_node(size_t *list, size_t len, size_t node, const uint64_t *hash,
                        size_t buckets) {
  size_t at = 0, b = hash[node] % buckets;
  while (at < len && hash[list[at]] % buckets != b) at++;
  if (at == len) at = 0;
  memmove(list + at + 1, list + at, (len - at) * sizeof *list);
  list[at] = node;
}

enum { MAP_MAX_KEYS = 64 };

/* order[0..nk): indices into kwnames in the map's order; false (nothing set) for more than
 * MAP_MAX_KEYS keywords or a name that is not text. */
static bool map_order(PyObject *kwnames, Py_ssize_t nk, size_t *order) {
  uint64_t hash[MAP_MAX_KEYS];
  if (nk > MAP_MAX_KEYS) return false;
  for (Py_ssize_t k = 0; k < nk; k++) {
    Py_ssize_t len;
    const char *name = PyUnicode_AsUTF8AndSize(PyTuple_GetItem(kwnames, k), &len);
    if (name == NULL) {
      PyErr_Clear();
      return false;
    }
    hash[k] = std_string_hash(name, (size_t)len);
  }
  size_t buckets = 1, next_resize = 0, old[MAP_MAX_KEYS];
  for (size_t i = 0; i < (size_t)nk; i++) {
    if (i + 1 > next_resize) { /* _M_need_rehash */
      size_t min_buckets = i + 1 > (next_resize != 0 ? 0 : 11) ? i + 1 : 11;
      if (min_buckets >= buckets) {
        size_t want = min_buckets + 1 > 2 * buckets ? min_buckets + 1 : 2 * buckets;
        size_t count = next_bucket_count(want, &next_resize);
        if (count == 0) return false;
        memcpy(old, order, i * sizeof *order);
        for (size_t k = 0; k < i; k++) insert_node(order, k, old[k], hash, count);
        buckets = count;
      } else {
        next_resize = buckets;
      }
    }
    insert_node(order, i, i, hash, buckets);
  }
  return true;
}

/* The call's nk keywords (indices into kwnames) in torch's order: the map's, or the call's
 * reversed (which it is whenever no two share a bucket) where the map's is not computed. In stack
 * (MAP_MAX_KEYS long) or memory to PyMem_Free; NULL with the error. */
static size_t *keyword_order(PyObject *kwnames, Py_ssize_t nk, size_t *stack) {
  size_t *order = nk <= MAP_MAX_KEYS ? stack : PyMem_Malloc((size_t)nk * sizeof *order);
  if (order == NULL) return (size_t *)PyErr_NoMemory();
  if (!map_order(kwnames, nk, order))
    for (Py_ssize_t k = 0; k < nk; k++) order[k] = (size_t)(nk - 1 - k);
  return order;
}

static PyObject *arg_desc(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  PyObject *out = PyUnicode_FromString("(");
  for (Py_ssize_t k = 0; k < nargs && out != NULL; k++) {
    PyObject *tn = pa__typename_of(args[k]);
    if (tn == NULL) return Py_DECREF(out), NULL;
    out = append(out, "%U, ", tn);
    Py_DECREF(tn);
  }
  Py_ssize_t nk = kwnames != NULL ? PyTuple_Size(kwnames) : 0;
  size_t stack[MAP_MAX_KEYS], *order = out != NULL ? keyword_order(kwnames, nk, stack) : NULL;
  if (order == NULL) return Py_XDECREF(out), NULL;
  for (Py_ssize_t j = 0; j < nk && out != NULL; j++) {
    Py_ssize_t k = (Py_ssize_t)order[j];
    PyObject *tn = pa__typename_of(args[nargs + k]);
    if (tn == NULL)
      Py_CLEAR(out);
    else
      out = append(out, "%U=%U, ", PyTuple_GetItem(kwnames, k), tn);
    Py_XDECREF(tn);
  }
  if (order != stack) PyMem_Free(order);
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
  size_t stack[MAP_MAX_KEYS], *order = keyword_order(kwnames, nk, stack);
  if (order == NULL) return NULL;
  for (Py_ssize_t j = 0; j < nk; j++) {
    PyObject *key = PyTuple_GetItem(kwnames, (Py_ssize_t)order[j]);
    int i = option_index(o, key);
    if (i >= 0 && i >= start) continue;
    out = out == NULL ? PyUnicode_FromFormat("%U", key) : append(out, ", %U", key);
    if (out == NULL) break;
  }
  if (order != stack) PyMem_Free(order);
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
