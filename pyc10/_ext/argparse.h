/* pyc10's argument parser: torch's calling conventions (python_arg_parser.cpp) for every function
 * and method of the extension, driven by the signature table in signatures.h.
 *
 * A parser is a static pa_parser naming a table entry; its signature strings (torch's own, e.g.
 * "view(SymIntArrayRef size)" and "view(ScalarType dtype)") are parsed on first use. pa_parse
 * binds METH_FASTCALL|METH_KEYWORDS arguments to the first signature that accepts them, as torch
 * tries its overloads, and otherwise raises torch's TypeError for the call. The accessors then
 * convert one bound argument each (pa_int, pa_intlist, ...), applying the signature's default
 * where the argument is absent, with torch's errors for values the type check let through.
 */
#ifndef PYC10_ARGPARSE_H
#define PYC10_ARGPARSE_H

#include <Python.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "c10c/c10c.h"

enum { PA_MAX_PARAMS = 12, PA_MAX_SIGS = 6, PA_MAX_DEFAULT_INTS = 4, PA_MAX_DIMS = 256 };

typedef enum {
  PA_TENSOR,
  PA_SCALAR,
  PA_INT64,
  PA_SYMINT,
  PA_DOUBLE,
  PA_COMPLEX,
  PA_INT_LIST,
  PA_SYM_INT_LIST,
  PA_BOOL,
  PA_STORAGE,
  PA_PYOBJECT,
  PA_SCALARTYPE,
  PA_LAYOUT,
  PA_MEMORY_FORMAT,
  PA_DEVICE,
  PA_STREAM,
  PA_STRING,
  PA_TENSOR_LIST,
} pa_type;

typedef struct {
  pa_type type;
  bool optional;           /* has a default */
  bool allow_none;         /* `Type?` or default None */
  bool keyword_only;       /* after `*` */
  int size;                /* IntArrayRef[N]: N, else 0 */
  bool numbers_as_tensors; /* a Python number binds to Tensor (torch's list: to, copy_, ...) */
  PyObject *name;          /* interned */
  PyObject *numpy_name;    /* torch's numpy alias (dim: axis, keepdim: keepdims), or NULL */
  int64_t default_int;
  double default_double;
  bool default_bool;
  int default_none; /* the default is None */
  int64_t default_ints[PA_MAX_DEFAULT_INTS];
  int n_default_ints;
  const char *default_enum; /* e.g. "contiguous_format", "torch.int64" */
  const char *default_text; /* the default as the signature writes it, or NULL */
  char cname[32];
} pa_param;

typedef struct {
  char name[48];
  pa_param params[PA_MAX_PARAMS];
  int n_params, min_args, max_pos_args;
  bool hidden, deprecated;
  const char *returns; /* the text after "->", for the stubs; NULL if none */
} pa_signature;

typedef struct pa_parser {
  const char *kind; /* "Tensor", "pyc10", "UntypedStorage", "Size" */
  const char *name;
  /* filled on first use */
  int ready;
  const char *doc;
  pa_signature sigs[PA_MAX_SIGS];
  int n_sigs;
} pa_parser;

#define PA_PARSER(kind_, name_) \
  { .kind = kind_, .name = name_ }

/* Py_SETREF, which the limited API lacks. */
#define PA_SETREF(dst, src)             \
  do {                                  \
    PyObject *old_ = (PyObject *)(dst); \
    (dst) = (src);                      \
    Py_XDECREF(old_);                   \
  } while (0)

typedef struct {
  const pa_signature *sig;
  int overload;                 /* index of the signature that matched, in table order */
  PyObject *obj[PA_MAX_PARAMS]; /* borrowed; NULL where the default applies (or None passed) */
  PyObject *const *varargs;     /* the positional arguments when they formed param 0's int list */
  Py_ssize_t n_varargs;
} pa_args;

/* The pyc10 classes the type checks and conversions need, set once by the module's setup. */
typedef struct {
  PyTypeObject *tensor, *dtype, *layout, *memory_format, *device, *storage, *size, *stream;
  PyObject *dtype_value, *layout_value,
      *format_value;                    /* interned attribute names: "value", "_value" */
  PyObject *device_type, *device_index; /* "_type", "_index" */
  PyObject *make_device;                /* pyc10.device */
  PyObject *float_dtype, *long_dtype, *bool_dtype, *cdouble_dtype;  /* for Python scalar types */
  PyObject *default_dtype;                                          /* callable: () -> dtype */
  PyObject *formats_by_name;                                        /* {"contiguous_format": obj} */
  PyObject *type_error, *value_error, *runtime_error, *index_error; /* pyc10's classes */
} pa_classes;
extern pa_classes pa_cls;

/* Binds a call to the first signature of p that accepts it; -1 with torch's TypeError. `self`
 * is only used for error messages. */
int pa_parse(pa_parser *p, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
             pa_args *out);

/* Parses p's signatures without a call (for __doc__ and the stub generator); -1 on error. */
int pa_prepare(pa_parser *p);

/* The accessors: index i of the matched signature's parameters. Each returns 0, or -1 with an
 * exception set. Absent arguments take the signature's default. */
static inline bool pa_has(const pa_args *r, int i) {
  return r->obj[i] != NULL || (i == 0 && r->varargs);
}
int pa_int(const pa_args *r, int i, int64_t *out);
/* *n elements into out (at most cap), torch's unpacking errors; a single int for IntArrayRef[N]. */
int pa_intlist(const pa_args *r, int i, int64_t *out, Py_ssize_t cap, Py_ssize_t *n);
int pa_bool(const pa_args *r, int i, bool *out);
int pa_double(const pa_args *r, int i, double *out);
/* A dtype code, or -1 in *out where the argument is None or absent with default None. */
int pa_dtype(const pa_args *r, int i, int *out);
int pa_layout(const pa_args *r, int i, int *out);
/* A memory format code, or -1 for None. */
int pa_memory_format(const pa_args *r, int i, int *out);
/* *has = false where None/absent. */
int pa_device(const pa_args *r, int i, c10c_device *out, bool *has);

/* A one-element tensor's value converted to int64 (c10's cast, as int(t)); -1 with an error. */
int pa_tensor_int64(PyObject *tensor, int64_t *out);

/* Converts anything with __index__ (not bool) to int64 as torch's THPUtils_unpackIndex. */
int pa_index(PyObject *obj, int64_t *out);

/* The table's entries, for code that makes one object per entry (functions.c). */
size_t pa_table_count(void);
void pa_table_entry(size_t i, const char **kind, const char **name);

/* The docstring of a table entry: its signatures, a blank line, its summary (NULL if none). */
const char *pa_doc(const char *kind, const char *name);

/* ---- shared by the parser's files only (defined in argparse_match.c but pa__print_error) ---- */

/* pyc10's exception classes (C10TypeError derives from TypeError), the builtins before setup. */
#define PA_TYPE_ERROR  (pa_cls.type_error != NULL ? pa_cls.type_error : PyExc_TypeError)
#define PA_VALUE_ERROR (pa_cls.value_error != NULL ? pa_cls.value_error : PyExc_ValueError)

/* torch's FunctionParameter::type_name, with pyc10 in place of torch in class names. */
const char *pa__type_name(pa_type t);
/* The name torch's messages give o's type (its tp_name; pyc10's classes as "pyc10.Name"); a new
 * reference. */
PyObject *pa__typename_of(PyObject *o);
/* FunctionSignature::parse: 1 if s binds the call into *r, 0 if not (an error set only when
 * raise). */
int pa__parse_one(const pa_signature *s, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                  pa_args *r, bool raise);
/* Raises torch's "invalid combination of arguments" TypeError for a call p cannot bind. */
void pa__print_error(const pa_parser *p, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames);
bool pa__is_tensor(PyObject *o);
/* THPUtils_checkLong: int or numpy int, not bool. */
bool pa__check_long(PyObject *o);
/* The dtype code of a tensor, its dims in *ndim (-1 if it cannot be read). */
int pa__tensor_dtype_and_dim(PyObject *o, int64_t *ndim);

#endif
