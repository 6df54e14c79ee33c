/* Tensor methods over shape and strides: the metadata queries (size, stride, dim, numel, ...) and
 * every view (view, reshape, permute, expand, transpose, squeeze, narrow, select, split, ...).
 *
 * Each method binds its arguments with the parser (torch's signatures from signatures.h) and
 * calls libc10c's public ABI once; the library gives torch's value errors and messages.
 */
#include <string.h>

#include "common.h"

/* The view `call` made (a method whose result is always a view of self's storage): a new tensor
 * recorded as a view of self, or, for the in-place forms (squeeze_, transpose_, ...), self taking
 * it (pyc10_become). h is read again here (SELF_HANDLE_AGAIN). */
#define VIEW_OR_BECOME(call)                                                               \
  do {                                                                                     \
    SELF_HANDLE_AGAIN(h);                                                                  \
    c10c_tensor *out_ = NULL;                                                              \
    c10c_status st_ = (call);                                                              \
    return in_place ? pyc10_become(self, st_, out_) : pyc10_view_result(self, st_, &out_); \
  } while (0)

#define VIEW(call)                              \
  do {                                          \
    SELF_HANDLE_AGAIN(h);                       \
    c10c_tensor *out_ = NULL;                   \
    c10c_status st_ = (call);                   \
    return pyc10_view_result(self, st_, &out_); \
  } while (0)

/* The tensor `call` made, a view of self only where it shares self's storage (reshape's result
 * is a copy when no view has its shape). */
#define MAYBE_VIEW(call)                                 \
  do {                                                   \
    SELF_HANDLE_AGAIN(h);                                \
    c10c_tensor *out_ = NULL;                            \
    c10c_status st_ = (call);                            \
    return pyc10_viewed(self, pyc10_result(st_, &out_)); \
  } while (0)

/* ---- torch's _base: which tensors are views ----
 * The library does not record which tensor a view came from (every tensor over one storage is
 * alike to it), so the Python object does: a tensor a view method made keeps its ultimate base
 * (autograd's rule: a view of a view has the first tensor as _base). A result over another
 * storage (reshape's or clone's copy) is no view; one over the same storage made by a method
 * that is no view in torch (detach, unsafe_split, .data) never comes here. The methods whose
 * result is always a view of self's storage record it with pyc10_view_result (common.c), which
 * skips the checks below. */

static void record_base(PyObject *self, PyObject *view) {
  if (view == self || !PyObject_TypeCheck(view, pa_cls.tensor)) return;
  TensorObject *v = (TensorObject *)view, *s = (TensorObject *)self;
  if (v->h == NULL || s->h == NULL || c10c_tensor_storage(v->h) != c10c_tensor_storage(s->h))
    return;
  PyObject *base = s->base != NULL ? s->base : self;
  if (v->base != NULL) ((TensorObject *)v->base)->views--;
  ((TensorObject *)base)->views++;
  Py_INCREF(base);
  PA_SETREF(v->base, base);
}

PyObject *pyc10_viewed(PyObject *self, PyObject *result) {
  if (result == NULL || !PyObject_TypeCheck(self, pa_cls.tensor)) return result;
  /* a tensor first: PyTuple_Check is a call under the limited API */
  if (!Py_IS_TYPE(result, pa_cls.tensor) && PyTuple_Check(result)) {
    for (Py_ssize_t i = 0; i < PyTuple_Size(result); i++)
      record_base(self, PyTuple_GetItem(result, i));
  } else {
    record_base(self, result);
  }
  return result;
}

static int python_binding(const char *fname, const char *const *names, int n, int nrequired,
                          PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                          PyObject **out);

/* ---- metadata ---- */

static PyObject *t_dim(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  return PyLong_FromSize_t(c10c_tensor_dim(h));
}

static PyObject *t_numel(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  return PyLong_FromLongLong((long long)c10c_tensor_numel(h));
}

static PyObject *t_storage_offset(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  return PyLong_FromLongLong((long long)c10c_tensor_storage_offset(h));
}

static PyObject *t_element_size(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  return PyLong_FromSize_t(c10c_tensor_itemsize(h));
}

static pa_parser size_p = PA_PARSER("Tensor", "size");
static PyObject *t_size(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames) {
  SELF_HANDLE(h);
  if (nargs == 0 && kwnames == NULL) return pyc10_shape(self);
  PARSE(size_p, r);
  if (!pa_has(&r, 0)) return pyc10_shape(self);
  int64_t dim, v;
  if (pa_int(&r, 0, &dim) < 0) return NULL;
  c10c_status st = c10c_tensor_size(&v, h, dim);
  return st == C10C_STATUS_OK ? PyLong_FromLongLong((long long)v) : pyc10_raise(st);
}

static pa_parser stride_p = PA_PARSER("Tensor", "stride");
static PyObject *t_stride(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  SELF_HANDLE(h);
  PARSE(stride_p, r);
  if (!pa_has(&r, 0)) {
    TensorObject *t = (TensorObject *)self;
    if (t->strides == NULL) {
      size_t n = c10c_tensor_dim(h);
      const int64_t *s = c10c_tensor_strides(h);
      PyObject *tuple = PyTuple_New((Py_ssize_t)n);
      for (size_t i = 0; tuple != NULL && i < n; i++) {
        PyObject *v = PyLong_FromLongLong((long long)s[i]);
        if (v == NULL || PyTuple_SetItem(tuple, (Py_ssize_t)i, v) < 0) Py_CLEAR(tuple);
      }
      if (tuple == NULL) return NULL;
      t->strides = tuple;
    }
    Py_INCREF(t->strides);
    return t->strides;
  }
  int64_t dim, v;
  if (pa_int(&r, 0, &dim) < 0) return NULL;
  c10c_status st = c10c_tensor_stride(&v, h, dim);
  return st == C10C_STATUS_OK ? PyLong_FromLongLong((long long)v) : pyc10_raise(st);
}

static pa_parser is_contiguous_p = PA_PARSER("Tensor", "is_contiguous");
static PyObject *t_is_contiguous(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  SELF_HANDLE(h);
  int format = C10C_MEMORY_FORMAT_CONTIGUOUS;
  if (nargs != 0 || kwnames != NULL) {
    PARSE(is_contiguous_p, r);
    if (pa_memory_format(&r, 0, &format) < 0) return NULL;
  }
  bool contiguous = false;
  c10c_status st = c10c_tensor_is_contiguous(&contiguous, h, (c10c_memory_format)format);
  return st == C10C_STATUS_OK ? PyBool_FromLong(contiguous) : pyc10_raise(st);
}

/* ---- views ---- */

/* The call every int-list method sees most: exact ints as varargs, or one tuple of exact ints,
 * and no keywords. Bound here without the parser, which would bind them the same way; anything
 * else (or an int beyond int64) returns 0 and goes through the parser. */
static int exact_int_list(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, int64_t *out,
                          Py_ssize_t *n) {
  if (kwnames != NULL || nargs == 0) return 0;
  PyObject *const *items = args;
  if (nargs == 1 && PyTuple_CheckExact(args[0])) {
    nargs = PyTuple_Size(args[0]);
    if (nargs > PA_MAX_DIMS) return 0;
    for (Py_ssize_t i = 0; i < nargs; i++) {
      PyObject *it = PyTuple_GetItem(args[0], i);
      if (!PyLong_CheckExact(it)) return 0;
      int overflow;
      out[i] = PyLong_AsLongLongAndOverflow(it, &overflow);
      if (overflow) return 0;
    }
    *n = nargs;
    return 1;
  }
  if (nargs > PA_MAX_DIMS) return 0;
  for (Py_ssize_t i = 0; i < nargs; i++) {
    if (!PyLong_CheckExact(items[i])) return 0;
    int overflow;
    out[i] = PyLong_AsLongLongAndOverflow(items[i], &overflow);
    if (overflow) return 0;
  }
  *n = nargs;
  return 1;
}

static pa_parser view_p = PA_PARSER("Tensor", "view");
static PyObject *t_view(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames) {
  SELF_HANDLE(h);
  int64_t fast[PA_MAX_DIMS];
  Py_ssize_t nfast;
  if (exact_int_list(args, nargs, kwnames, fast, &nfast))
    VIEW(c10c_tensor_view(&out_, h, fast, (size_t)nfast));
  PARSE(view_p, r);
  if (r.overload == 0) {
    int dtype;
    if (pa_dtype(&r, 0, &dtype) < 0) return NULL;
    /* torch's view(dtype) is no differentiable view: autograd does not record it (_base None) */
    c10c_tensor *out = NULL;
    c10c_status st = c10c_tensor_view_dtype(&out, h, (c10c_dtype)dtype);
    return pyc10_result(st, &out);
  }
  int64_t shape[PA_MAX_DIMS];
  Py_ssize_t n;
  if (pa_intlist(&r, 0, shape, PA_MAX_DIMS, &n) < 0) return NULL;
  VIEW(c10c_tensor_view(&out_, h, shape, (size_t)n));
}

/* The other tensor of a (Tensor other) method, its handle. */
static c10c_tensor *other_handle(const pa_args *r, int i) { return pyc10_handle(r->obj[i]); }

static pa_parser view_as_p = PA_PARSER("Tensor", "view_as");
static PyObject *t_view_as(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  SELF_HANDLE(h);
  PARSE(view_as_p, r);
  c10c_tensor *o = other_handle(&r, 0);
  if (o == NULL) return NULL;
  VIEW(c10c_tensor_view(&out_, h, c10c_tensor_sizes(o), c10c_tensor_dim(o)));
}

static pa_parser reshape_p = PA_PARSER("Tensor", "reshape");
static PyObject *t_reshape(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  SELF_HANDLE(h);
  int64_t fast[PA_MAX_DIMS];
  Py_ssize_t nfast;
  if (exact_int_list(args, nargs, kwnames, fast, &nfast))
    MAYBE_VIEW(c10c_tensor_reshape(&out_, h, fast, (size_t)nfast));
  PARSE(reshape_p, r);
  int64_t shape[PA_MAX_DIMS];
  Py_ssize_t n;
  if (pa_intlist(&r, 0, shape, PA_MAX_DIMS, &n) < 0) return NULL;
  MAYBE_VIEW(c10c_tensor_reshape(&out_, h, shape, (size_t)n));
}

static pa_parser reshape_as_p = PA_PARSER("Tensor", "reshape_as");
static PyObject *t_reshape_as(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  SELF_HANDLE(h);
  PARSE(reshape_as_p, r);
  c10c_tensor *o = other_handle(&r, 0);
  if (o == NULL) return NULL;
  MAYBE_VIEW(c10c_tensor_reshape(&out_, h, c10c_tensor_sizes(o), c10c_tensor_dim(o)));
}

static pa_parser permute_p = PA_PARSER("Tensor", "permute");
static PyObject *t_permute(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  SELF_HANDLE(h);
  int64_t fast[PA_MAX_DIMS];
  Py_ssize_t nfast;
  if (exact_int_list(args, nargs, kwnames, fast, &nfast))
    VIEW(c10c_tensor_permute(&out_, h, fast, (size_t)nfast));
  PARSE(permute_p, r);
  int64_t dims[PA_MAX_DIMS];
  Py_ssize_t n;
  if (pa_intlist(&r, 0, dims, PA_MAX_DIMS, &n) < 0) return NULL;
  VIEW(c10c_tensor_permute(&out_, h, dims, (size_t)n));
}

static pa_parser expand_p = PA_PARSER("Tensor", "expand");
static PyObject *t_expand(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  SELF_HANDLE(h);
  int64_t fast[PA_MAX_DIMS];
  Py_ssize_t nfast;
  if (exact_int_list(args, nargs, kwnames, fast, &nfast))
    VIEW(c10c_tensor_expand(&out_, h, fast, (size_t)nfast));
  PARSE(expand_p, r);
  int64_t sizes[PA_MAX_DIMS];
  Py_ssize_t n;
  if (pa_intlist(&r, 0, sizes, PA_MAX_DIMS, &n) < 0) return NULL;
  VIEW(c10c_tensor_expand(&out_, h, sizes, (size_t)n));
}

static pa_parser expand_as_p = PA_PARSER("Tensor", "expand_as");
static PyObject *t_expand_as(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  SELF_HANDLE(h);
  PARSE(expand_as_p, r);
  c10c_tensor *o = other_handle(&r, 0);
  if (o == NULL) return NULL;
  VIEW(c10c_tensor_expand(&out_, h, c10c_tensor_sizes(o), c10c_tensor_dim(o)));
}

static pa_parser broadcast_to_p = PA_PARSER("Tensor", "broadcast_to");
static PyObject *t_broadcast_to(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  SELF_HANDLE(h);
  PARSE(broadcast_to_p, r);
  int64_t sizes[PA_MAX_DIMS];
  Py_ssize_t n;
  if (pa_intlist(&r, 0, sizes, PA_MAX_DIMS, &n) < 0) return NULL;
  VIEW(c10c_tensor_expand(&out_, h, sizes, (size_t)n));
}

/* transpose and its two aliases: the same binding under each name's parameter names. */
static PyObject *two_dims(PyObject *self, pa_parser *p, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames, bool in_place) {
  SELF_HANDLE(h);
  int64_t d[2];
  if (nargs == 2 && kwnames == NULL && PyLong_CheckExact(args[0]) && PyLong_CheckExact(args[1])) {
    /* the common call, bound without the parser (same result: exact ints need no checks; one
     * beyond int64 goes to the parser, which raises torch's error) */
    int overflow0, overflow1;
    d[0] = PyLong_AsLongLongAndOverflow(args[0], &overflow0);
    d[1] = PyLong_AsLongLongAndOverflow(args[1], &overflow1);
    if (!overflow0 && !overflow1) VIEW_OR_BECOME(c10c_tensor_transpose(&out_, h, d[0], d[1]));
  }
  pa_args r;
  if (pa_parse(p, args, nargs, kwnames, &r) < 0) return NULL;
  if (pa_int(&r, 0, &d[0]) < 0 || pa_int(&r, 1, &d[1]) < 0) return NULL;
  VIEW_OR_BECOME(c10c_tensor_transpose(&out_, h, d[0], d[1]));
}

static pa_parser transpose_p = PA_PARSER("Tensor", "transpose");
static pa_parser swapaxes_p = PA_PARSER("Tensor", "swapaxes");
static pa_parser swapdims_p = PA_PARSER("Tensor", "swapdims");
static PyObject *t_transpose(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  return two_dims(self, &transpose_p, args, nargs, kwnames, false);
}
static PyObject *t_swapaxes(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
  return two_dims(self, &swapaxes_p, args, nargs, kwnames, false);
}
static PyObject *t_swapdims(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
  return two_dims(self, &swapdims_p, args, nargs, kwnames, false);
}

static PyObject *t_t(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  size_t n = c10c_tensor_dim(h);
  if (n > 2) return RUNTIME_ERROR("t() expects a tensor with <= 2 dimensions, but self is %zuD", n);
  VIEW(c10c_tensor_transpose(&out_, h, 0, n < 2 ? 0 : 1));
}

static PyObject *squeeze_with(PyObject *self, pa_parser *p, FASTCALL_ARGS, bool in_place) {
  SELF_HANDLE(h);
  pa_args r;
  if (pa_parse(p, args, nargs, kwnames, &r) < 0) return NULL;
  if (r.overload == 0) VIEW_OR_BECOME(c10c_tensor_squeeze(&out_, h));
  int64_t dims[PA_MAX_DIMS];
  Py_ssize_t n = 1;
  if (r.overload == 1 ? pa_int(&r, 0, &dims[0]) : pa_intlist(&r, 0, dims, PA_MAX_DIMS, &n))
    return NULL;
  VIEW_OR_BECOME(c10c_tensor_squeeze_dims(&out_, h, dims, (size_t)n));
}

static PyObject *unsqueeze_with(PyObject *self, pa_parser *p, FASTCALL_ARGS, bool in_place) {
  SELF_HANDLE(h);
  pa_args r;
  if (pa_parse(p, args, nargs, kwnames, &r) < 0) return NULL;
  int64_t dim;
  if (pa_int(&r, 0, &dim) < 0) return NULL;
  VIEW_OR_BECOME(c10c_tensor_unsqueeze(&out_, h, dim));
}

static pa_parser squeeze_p = PA_PARSER("Tensor", "squeeze");
static PyObject *t_squeeze(PyObject *self, FASTCALL_ARGS) {
  return squeeze_with(self, &squeeze_p, args, nargs, kwnames, false);
}

static pa_parser unsqueeze_p = PA_PARSER("Tensor", "unsqueeze");
static PyObject *t_unsqueeze(PyObject *self, FASTCALL_ARGS) {
  return unsqueeze_with(self, &unsqueeze_p, args, nargs, kwnames, false);
}

static pa_parser flatten_p = PA_PARSER("Tensor", "flatten");
static PyObject *t_flatten(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  SELF_HANDLE(h);
  PARSE(flatten_p, r);
  int64_t a, b;
  if (pa_int(&r, 0, &a) < 0 || pa_int(&r, 1, &b) < 0) return NULL;
  c10c_tensor *out = NULL;
  c10c_status st = c10c_tensor_flatten(&out, h, a, b);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  int64_t n = (int64_t)c10c_tensor_dim(h);
  if (n > 0 && (a < 0 ? a + n : a) == (b < 0 ? b + n : b)) { /* ATen: start == end is self */
    c10c_tensor_release(out);
    Py_INCREF(self);
    return self;
  }
  return pyc10_viewed(self, pyc10_wrap(out));
}

static pa_parser unflatten_p = PA_PARSER("Tensor", "unflatten");
/* Tensor.unflatten(dim, sizes) is a Python function in torch (torch/_tensor.py): Python binds
 * it, `if not sizes` refuses an empty one, then the C method binds (dim, sizes) positionally. */
static PyObject *t_unflatten(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  SELF_HANDLE(h);
  static const char *const names[] = {"dim", "sizes"};
  PyObject *bound[2];
  if (python_binding("unflatten", names, 2, 2, args, nargs, kwnames, bound) < 0) return NULL;
  int truth = PyObject_IsTrue(bound[1]);
  if (truth <= 0) return truth < 0 ? NULL : RUNTIME_ERROR("unflatten: sizes must be non-empty");
  pa_args r;
  if (pa_parse(&unflatten_p, bound, 2, NULL, &r) < 0) return NULL;
  int64_t dim, sizes[PA_MAX_DIMS];
  Py_ssize_t n;
  if (pa_int(&r, 0, &dim) < 0 || pa_intlist(&r, 1, sizes, PA_MAX_DIMS, &n) < 0) return NULL;
  VIEW(c10c_tensor_unflatten(&out_, h, dim, sizes, (size_t)n));
}

/* A 0-dim integer tensor's value (narrow's Tensor start), with ATen's narrow_tensor_symint
 * check: 0-dim and of an integral dtype other than bool. */
static int tensor_index(PyObject *t, int64_t *out) {
  c10c_tensor *h = pyc10_handle(t);
  if (h == NULL) return -1;
  if (c10c_tensor_dim(h) != 0 || !c10c_dtype_is_integral(c10c_tensor_dtype(h), false)) {
    RUNTIME_ERROR("start must be an 0-dim integral Tensor.");
    return -1;
  }
  return pa_index(t, out);
}

static pa_parser narrow_p = PA_PARSER("Tensor", "narrow");
static PyObject *t_narrow(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  SELF_HANDLE(h);
  PARSE(narrow_p, r);
  int64_t dim, start, length;
  if (pa_int(&r, 0, &dim) < 0 || pa_int(&r, 2, &length) < 0) return NULL;
  if (r.overload == 0 ? tensor_index(r.obj[1], &start) : pa_int(&r, 1, &start)) return NULL;
  VIEW(c10c_tensor_narrow(&out_, h, dim, start, length));
}

static pa_parser select_p = PA_PARSER("Tensor", "select");
static PyObject *t_select(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  SELF_HANDLE(h);
  PARSE(select_p, r);
  int64_t dim, index;
  if (pa_int(&r, 0, &dim) < 0 || pa_int(&r, 1, &index) < 0) return NULL;
  VIEW(c10c_tensor_select(&out_, h, dim, index));
}

static PyObject *move_dims(PyObject *self, pa_parser *p, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  SELF_HANDLE(h);
  pa_args r;
  if (pa_parse(p, args, nargs, kwnames, &r) < 0) return NULL;
  int64_t src[PA_MAX_DIMS], dst[PA_MAX_DIMS];
  Py_ssize_t ns = 1, nd = 1;
  if (r.overload == 0) {
    if (pa_int(&r, 0, &src[0]) < 0 || pa_int(&r, 1, &dst[0]) < 0) return NULL;
  } else if (pa_intlist(&r, 0, src, PA_MAX_DIMS, &ns) < 0 ||
             pa_intlist(&r, 1, dst, PA_MAX_DIMS, &nd) < 0) {
    return NULL;
  }
  VIEW(c10c_tensor_movedim(&out_, h, src, (size_t)ns, dst, (size_t)nd));
}
static pa_parser movedim_p = PA_PARSER("Tensor", "movedim");
static pa_parser moveaxis_p = PA_PARSER("Tensor", "moveaxis");
static PyObject *t_movedim(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  return move_dims(self, &movedim_p, args, nargs, kwnames);
}
static PyObject *t_moveaxis(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
  return move_dims(self, &moveaxis_p, args, nargs, kwnames);
}

static pa_parser diagonal_p = PA_PARSER("Tensor", "diagonal");
static PyObject *t_diagonal(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
  SELF_HANDLE(h);
  PARSE(diagonal_p, r);
  int64_t o, a, b;
  if (pa_int(&r, 0, &o) < 0 || pa_int(&r, 1, &a) < 0 || pa_int(&r, 2, &b) < 0) return NULL;
  VIEW(c10c_tensor_diagonal(&out_, h, o, a, b));
}

static pa_parser unfold_p = PA_PARSER("Tensor", "unfold");
static PyObject *t_unfold(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  SELF_HANDLE(h);
  PARSE(unfold_p, r);
  int64_t d, s, st;
  if (pa_int(&r, 0, &d) < 0 || pa_int(&r, 1, &s) < 0 || pa_int(&r, 2, &st) < 0) return NULL;
  VIEW(c10c_tensor_unfold(&out_, h, d, s, st));
}

static PyObject *as_strided_with(PyObject *self, pa_parser *p, FASTCALL_ARGS, bool in_place) {
  SELF_HANDLE(h);
  pa_args r;
  if (pa_parse(p, args, nargs, kwnames, &r) < 0) return NULL;
  int64_t sizes[PA_MAX_DIMS], strides[PA_MAX_DIMS], offset;
  Py_ssize_t n, m;
  if (pa_intlist(&r, 0, sizes, PA_MAX_DIMS, &n) < 0 ||
      pa_intlist(&r, 1, strides, PA_MAX_DIMS, &m) < 0)
    return NULL;
  bool has_offset = pa_has(&r, 2);
  if (has_offset && pa_int(&r, 2, &offset) < 0) return NULL;
  VIEW_OR_BECOME(c10c_tensor_as_strided(&out_, h, sizes, (size_t)n, strides, (size_t)m,
                                        has_offset ? &offset : NULL));
}

static pa_parser as_strided_p = PA_PARSER("Tensor", "as_strided");
static PyObject *t_as_strided(PyObject *self, FASTCALL_ARGS) {
  return as_strided_with(self, &as_strided_p, args, nargs, kwnames, false);
}

/* ---- the in-place views: the same bindings, self taking the view (pyc10_become) ---- */

static PyObject *t_t_(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  size_t n = c10c_tensor_dim(h);
  if (n > 2)
    return RUNTIME_ERROR("t_() expects a tensor with <= 2 dimensions, but self is %zuD", n);
  if (n < 2) return Py_NewRef(self);
  c10c_tensor *out = NULL;
  c10c_status st = c10c_tensor_transpose(&out, h, 0, 1);
  return pyc10_become(self, st, out);
}

static pa_parser transpose__p = PA_PARSER("Tensor", "transpose_");
static pa_parser swapdims__p = PA_PARSER("Tensor", "swapdims_");
static pa_parser swapaxes__p = PA_PARSER("Tensor", "swapaxes_");
static pa_parser squeeze__p = PA_PARSER("Tensor", "squeeze_");
static pa_parser unsqueeze__p = PA_PARSER("Tensor", "unsqueeze_");
static pa_parser as_strided__p = PA_PARSER("Tensor", "as_strided_");
static PyObject *t_transpose_(PyObject *self, FASTCALL_ARGS) {
  return two_dims(self, &transpose__p, args, nargs, kwnames, true);
}
static PyObject *t_swapdims_(PyObject *self, FASTCALL_ARGS) {
  return two_dims(self, &swapdims__p, args, nargs, kwnames, true);
}
static PyObject *t_swapaxes_(PyObject *self, FASTCALL_ARGS) {
  return two_dims(self, &swapaxes__p, args, nargs, kwnames, true);
}
static PyObject *t_squeeze_(PyObject *self, FASTCALL_ARGS) {
  return squeeze_with(self, &squeeze__p, args, nargs, kwnames, true);
}
static PyObject *t_unsqueeze_(PyObject *self, FASTCALL_ARGS) {
  return unsqueeze_with(self, &unsqueeze__p, args, nargs, kwnames, true);
}
static PyObject *t_as_strided_(PyObject *self, FASTCALL_ARGS) {
  return as_strided_with(self, &as_strided__p, args, nargs, kwnames, true);
}

/* ---- pieces ---- */

/* ATen's split_with_sizes: narrow views of the listed lengths. */
static PyObject *split_sizes(c10c_tensor *h, int64_t dim, const int64_t *sizes, Py_ssize_t n) {
  int64_t dim_size;
  c10c_status st = c10c_tensor_size(&dim_size, h, dim);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  /* ATen's int64 sum wraps ([2**63 - 1, 2**63 - 1, 2] sums to 0): the same sum, without signed
   * overflow */
  uint64_t sum = 0;
  bool negative = false;
  for (Py_ssize_t i = 0; i < n; i++) {
    negative |= sizes[i] < 0;
    sum += sizes[i] < 0 ? 0 : (uint64_t)sizes[i];
  }
  if (negative || (int64_t)sum != dim_size) {
    PyObject *list = PyUnicode_FromString("[");
    for (Py_ssize_t i = 0; list != NULL && i < n; i++) {
      PyObject *s = PyUnicode_FromFormat("%U%s%lld", list, i ? ", " : "", (long long)sizes[i]);
      PA_SETREF(list, s);
    }
    if (list == NULL) return NULL;
    PA_SETREF(list, PyUnicode_FromFormat("%U]", list));
    if (list == NULL) return NULL;
    PyObject *r;
    if (negative) {
      r = RUNTIME_ERROR(
          "split_with_sizes expects split_sizes have only non-negative entries, but got "
          "split_sizes=%U",
          list);
    } else {
      r = RUNTIME_ERROR(
          "split_with_sizes expects split_sizes to sum exactly to %lld (input tensor's size at "
          "dimension %lld), but got split_sizes=%U",
          (long long)dim_size, (long long)dim, list);
    }
    Py_DECREF(list);
    return r;
  }
  c10c_tensor **pieces = PyMem_Calloc((size_t)n + 1, sizeof *pieces);
  if (pieces == NULL) return PyErr_NoMemory();
  /* each piece is ATen's slice(dim, start, start + length): int64 bounds that wrap as the sum
   * does, then clamped into [0, dim_size] (negative ones counted from the end first) */
  uint64_t at = 0;
  for (Py_ssize_t i = 0; i < n; i++) {
    int64_t start = (int64_t)at, end = (int64_t)(at + (uint64_t)sizes[i]);
    if (start < 0) start += dim_size;
    if (end < 0) end += dim_size;
    start = start < 0 ? 0 : start > dim_size ? dim_size : start;
    end = end < start ? start : end > dim_size ? dim_size : end;
    st = c10c_tensor_narrow(&pieces[i], h, dim, start, end - start);
    if (st != C10C_STATUS_OK) {
      for (Py_ssize_t k = 0; k < i; k++) c10c_tensor_release(pieces[k]);
      PyMem_Free(pieces);
      return pyc10_raise(st);
    }
    at += (uint64_t)sizes[i];
  }
  PyObject *t = pyc10_wrap_tuple(pieces, (size_t)n);
  PyMem_Free(pieces);
  return t;
}

/* ATen's split(split_size): ceil(dim_size / size) pieces, the last smaller. */
static PyObject *split_size(c10c_tensor *h, int64_t size, int64_t dim) {
  if (c10c_tensor_dim(h) == 0)
    return RUNTIME_ERROR("split expects at least a 1-dimensional tensor");
  if (size < 0)
    return RUNTIME_ERROR("split expects split_size be non-negative, but got split_size=%lld",
                         (long long)size);
  int64_t dim_size;
  c10c_status st = c10c_tensor_size(&dim_size, h, dim);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  if (size == 0 && dim_size != 0) {
    return RUNTIME_ERROR(
        "split_size can only be 0 if dimension size is 0, but got dimension size of %lld",
        (long long)dim_size);
  }
  /* ATen: ceil(dim_size / size) in int64 arithmetic, which wraps negative past INT64_MAX (a dim
   * of 2**63 - 1 split by 2 is one piece, as torch); the same value, without signed overflow */
  int64_t count = size == 0 ? 1 : (int64_t)((uint64_t)dim_size + (uint64_t)size - 1) / size;
  if (count < 1) count = 1;
  if (count > (int64_t)1 << 40) return PyErr_NoMemory();
  int64_t *sizes = PyMem_Malloc(sizeof(int64_t) * (size_t)count);
  if (sizes == NULL) return PyErr_NoMemory();
  for (int64_t i = 0; i < count; i++)
    sizes[i] = i < count - 1 ? size : dim_size - size * (count - 1);
  PyObject *r = split_sizes(h, dim, sizes, (Py_ssize_t)count);
  PyMem_Free(sizes);
  return r;
}

/* ATen's chunk: split(ceil(dim_size / chunks), dim), pieces not recorded as views. */
static PyObject *chunk_of(c10c_tensor *h, int64_t chunks, int64_t dim, const char *name) {
  if (c10c_tensor_dim(h) == 0)
    return RUNTIME_ERROR("%s expects at least a 1-dimensional tensor", name);
  if (chunks <= 0)
    return RUNTIME_ERROR("%s expects `chunks` to be greater than 0, got: %lld", name,
                         (long long)chunks);
  int64_t dim_size;
  c10c_status st = c10c_tensor_size(&dim_size, h, dim);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  /* ATen: split_size = ceil(dim_size / chunks), in int64 arithmetic */
  uint64_t sum = (uint64_t)dim_size + (uint64_t)chunks - 1;
  int64_t wrapped = (int64_t)sum;
  int64_t size = wrapped / chunks;
  if (size == 0 && dim_size == 0) {
    if (chunks > 1 << 20) return RUNTIME_ERROR("cannot create std::vector larger than max_size()");
    int64_t *zeros = PyMem_Calloc((size_t)chunks, sizeof(int64_t));
    if (zeros == NULL) return PyErr_NoMemory();
    PyObject *out = split_sizes(h, dim, zeros, (Py_ssize_t)chunks);
    PyMem_Free(zeros);
    return out;
  }
  return split_size(h, size, dim);
}

static pa_parser chunk_p = PA_PARSER("Tensor", "chunk");
static PyObject *t_chunk(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
  SELF_HANDLE(h);
  PARSE(chunk_p, r);
  int64_t chunks, dim;
  if (pa_int(&r, 0, &chunks) < 0 || pa_int(&r, 1, &dim) < 0) return NULL;
  SELF_HANDLE_AGAIN(h);
  return pyc10_viewed(self, chunk_of(h, chunks, dim, "chunk"));
}

/* split_with_sizes and unsafe_split_with_sizes: one binding (split_sizes' pieces, not yet
 * recorded as views). */
static PyObject *split_with_sizes_call(pa_parser *p, PyObject *self, PyObject *const *args,
                                       Py_ssize_t nargs, PyObject *kwnames) {
  SELF_HANDLE(h);
  PARSE(*p, r);
  int64_t sizes[PA_MAX_DIMS * 16], dim;
  Py_ssize_t n;
  if (pa_intlist(&r, 0, sizes, PA_MAX_DIMS * 16, &n) < 0 || pa_int(&r, 1, &dim) < 0) return NULL;
  SELF_HANDLE_AGAIN(h);
  if (c10c_tensor_dim(h) == 0)
    return RUNTIME_ERROR("split expects at least a 1-dimensional tensor");
  return split_sizes(h, dim, sizes, n);
}

static pa_parser split_with_sizes_p = PA_PARSER("Tensor", "split_with_sizes");
static PyObject *t_split_with_sizes(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  return pyc10_viewed(self, split_with_sizes_call(&split_with_sizes_p, self, args, nargs, kwnames));
}

/* Binds a call as CPython binds a Python function `def fname(self, <names...>)` whose first
 * `nrequired` names have no default: torch's Tensor.split and Tensor.unflatten are such
 * functions (torch/_tensor.py), so their argument errors are Python's. out[k] is NULL where
 * absent. */
static int python_binding(const char *fname, const char *const *names, int n, int nrequired,
                          PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                          PyObject **out) {
  for (int k = 0; k < n; k++) out[k] = NULL;
  if (nargs > n) {
    if (nrequired == n)
      PyErr_Format(pa_cls.type_error,
                   "Tensor.%s() takes %d positional arguments but %zd were given", fname, n + 1,
                   nargs + 1);
    else
      PyErr_Format(pa_cls.type_error,
                   "Tensor.%s() takes from %d to %d positional arguments but %zd were given", fname,
                   nrequired + 1, n + 1, nargs + 1);
    return -1;
  }
  for (Py_ssize_t k = 0; k < nargs; k++) out[k] = args[k];
  Py_ssize_t nk = kwnames != NULL ? PyTuple_Size(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nk; k++) {
    PyObject *key = PyTuple_GetItem(kwnames, k);
    int slot = -1;
    for (int q = 0; q < n; q++)
      if (PyUnicode_CompareWithASCIIString(key, names[q]) == 0) slot = q;
    if (slot < 0) {
      PyErr_Format(pa_cls.type_error, "Tensor.%s() got an unexpected keyword argument '%U'", fname,
                   key);
      return -1;
    }
    if (out[slot] != NULL) {
      PyErr_Format(pa_cls.type_error, "Tensor.%s() got multiple values for argument '%U'", fname,
                   key);
      return -1;
    }
    out[slot] = args[nargs + k];
  }
  int missing = 0;
  for (int q = 0; q < nrequired; q++) missing += out[q] == NULL;
  if (missing == 0) return 0;
  PyObject *list = PyUnicode_FromString("");
  int seen = 0;
  for (int q = 0; q < nrequired && list != NULL; q++) {
    if (out[q] != NULL) continue;
    seen++;
    const char *sep = seen == 1 ? "" : seen == missing ? (missing == 2 ? " and " : ", and ") : ", ";
    PA_SETREF(list, PyUnicode_FromFormat("%U%s'%s'", list, sep, names[q]));
  }
  if (list != NULL) {
    PyErr_Format(pa_cls.type_error, "Tensor.%s() missing %d required positional argument%s: %U",
                 fname, missing, missing == 1 ? "" : "s", list);
    Py_DECREF(list);
  }
  return -1;
}

/* Tensor.split(split_size, dim=0), torch/_tensor.py: an int (bools too) goes to
 * torch._VF.split(self, split_size, dim), anything else to torch._VF.split_with_sizes(self,
 * split_size, dim); their errors count self as position 1. */
static PyObject *t_split(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
  SELF_HANDLE(h);
  static const char *const names[] = {"split_size", "dim"};
  PyObject *bound[2];
  if (python_binding("split", names, 2, 1, args, nargs, kwnames, bound) < 0) return NULL;
  PyObject *fn_args[3] = {self, bound[0], bound[1]};
  Py_ssize_t n = bound[1] != NULL ? 3 : 2;
  PyObject *as_int = NULL; /* torch: a one-element tensor split_size is int(split_size) */
  if (PyObject_TypeCheck(bound[0], pa_cls.tensor)) {
    c10c_tensor *t = pyc10_handle(bound[0]);
    int64_t v;
    if (t != NULL && c10c_tensor_numel(t) == 1) {
      if (pa_tensor_int64(bound[0], &v) < 0) return NULL;
      if ((as_int = PyLong_FromLongLong((long long)v)) == NULL) return NULL;
      fn_args[1] = as_int;
    }
  }
  PyObject *result = NULL;
  pa_args r;
  int64_t sizes[PA_MAX_DIMS * 16], d, one;
  Py_ssize_t count;
  if (PyLong_Check(fn_args[1])) {
    static pa_parser split_p = PA_PARSER("_VF", "split");
    if (pa_parse(&split_p, fn_args, n, NULL, &r) < 0) goto done;
    if (r.overload == 0) {
      if (pa_int(&r, 1, &one) == 0 && pa_int(&r, 2, &d) == 0)
        result = split_size(SELF_HANDLE_AGAIN(h), one, d);
      goto done;
    }
  } else {
    static pa_parser fn_p = PA_PARSER("pyc10", "split_with_sizes");
    if (pa_parse(&fn_p, fn_args, n, NULL, &r) < 0) goto done;
  }
  if (pa_intlist(&r, 1, sizes, PA_MAX_DIMS * 16, &count) < 0 || pa_int(&r, 2, &d) < 0) goto done;
  SELF_HANDLE_AGAIN(h);
  if (c10c_tensor_dim(h) == 0) {
    RUNTIME_ERROR("split expects at least a 1-dimensional tensor");
    goto done;
  }
  result = split_sizes(h, d, sizes, count);
done:
  Py_XDECREF(as_int);
  return pyc10_viewed(self, result);
}

static pa_parser unbind_p = PA_PARSER("Tensor", "unbind");
static PyObject *t_unbind(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  SELF_HANDLE(h);
  PARSE(unbind_p, r);
  int64_t dim, size;
  if (pa_int(&r, 0, &dim) < 0) return NULL;
  SELF_HANDLE_AGAIN(h);
  if (c10c_tensor_dim(h) == 0) {
    if (dim != 0 && dim != -1) {
      PyErr_Format(pa_cls.index_error,
                   "Dimension out of range (expected to be in range of [-1, 0], but got %lld)",
                   (long long)dim);
      return NULL;
    }
    PyErr_SetString(pa_cls.index_error, "Dimension specified as 0 but tensor has no dimensions");
    return NULL;
  }
  c10c_status st = c10c_tensor_size(&size, h, dim);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  c10c_tensor **pieces = PyMem_Calloc((size_t)size + 1, sizeof *pieces);
  if (pieces == NULL) return PyErr_NoMemory();
  for (int64_t i = 0; i < size; i++) {
    st = c10c_tensor_select(&pieces[i], h, dim, i);
    if (st != C10C_STATUS_OK) {
      for (int64_t k = 0; k < i; k++) c10c_tensor_release(pieces[k]);
      PyMem_Free(pieces);
      return pyc10_raise(st);
    }
  }
  PyObject *t = pyc10_viewed(self, pyc10_wrap_tuple(pieces, (size_t)size));
  PyMem_Free(pieces);
  return t;
}

/* ---- copies ---- */

static pa_parser clone_p = PA_PARSER("Tensor", "clone");
static PyObject *t_clone(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
  SELF_HANDLE(h);
  PARSE(clone_p, r);
  int format;
  if (pa_memory_format(&r, 0, &format) < 0) return NULL;
  if (format < 0) format = C10C_MEMORY_FORMAT_PRESERVE;
  MAYBE_VIEW(c10c_tensor_clone(&out_, h, (c10c_memory_format)format));
}

static pa_parser contiguous_p = PA_PARSER("Tensor", "contiguous");
static PyObject *t_contiguous(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  SELF_HANDLE(h);
  int format = C10C_MEMORY_FORMAT_CONTIGUOUS;
  if (nargs != 0 || kwnames != NULL) {
    PARSE(contiguous_p, r);
    if (pa_memory_format(&r, 0, &format) < 0) return NULL;
  }
  c10c_tensor *out = NULL;
  c10c_status st = c10c_tensor_contiguous(&out, h, (c10c_memory_format)format);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  if (out == h) { /* torch returns self itself */
    c10c_tensor_release(out);
    Py_INCREF(self);
    return self;
  }
  return pyc10_wrap(out);
}

/* Copies that write this many bytes or more run without the GIL (smaller ones cost less than
 * releasing it). */
enum { COPY_GIL_FREE_BYTES = 1 << 16 };
static pa_parser copy_p = PA_PARSER("Tensor", "copy_");
static PyObject *t_copy_(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
  SELF_HANDLE(h);
  PARSE(copy_p, r);
  if (!PyObject_TypeCheck(r.obj[0],
                          pa_cls.tensor)) { /* a number: torch copies it as a 0-dim tensor */
    PyObject *res = PyObject_CallMethod(self, "fill_", "O", r.obj[0]);
    return res;
  }
  c10c_tensor *src = other_handle(&r, 0);
  if (src == NULL) return NULL;
  bool non_blocking;
  if (pa_bool(&r, 1, &non_blocking) < 0) return NULL;
  c10c_status st;
  if (c10c_tensor_numel(h) * (int64_t)c10c_tensor_itemsize(h) < COPY_GIL_FREE_BYTES) {
    st = c10c_tensor_copy_nonblocking_(h, src, non_blocking);
  } else { /* without the GIL, as torch's bindings (both tensors held by the caller's args) */
    c10c_storage *held_dst = c10c_storage_retain(c10c_tensor_storage(h));
    c10c_storage *held_src = c10c_storage_retain(c10c_tensor_storage(src));
    Py_BEGIN_ALLOW_THREADS
    st = c10c_tensor_copy_nonblocking_(h, src, non_blocking);
    Py_END_ALLOW_THREADS
    c10c_storage_release(held_src);
    c10c_storage_release(held_dst);
  }
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  Py_INCREF(self);
  return self;
}

/* ---- torch parity: the unsafe_ pieces, narrow_copy, the conjugate and negative bits ---- */

static PyObject *t_is_view(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  (void)h;
  return PyBool_FromLong(((TensorObject *)self)->base != NULL);
}

/* torch's _use_count: the references to self's TensorImpl, one for the Python object and one
 * for each live view (autograd's view info holds its base). pyc10's library does not expose its
 * tensor refcount, so references the library holds for others (a DLPack export not yet
 * consumed) are not counted. */
static PyObject *t_use_count(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  (void)h;
  return PyLong_FromSsize_t(1 + ((TensorObject *)self)->views);
}

/* unsafe_chunk, unsafe_split, unsafe_split_with_sizes: the pieces of chunk, split and
 * split_with_sizes over self's storage, which torch does not record as views (_base None). */
static pa_parser unsafe_chunk_p = PA_PARSER("Tensor", "unsafe_chunk");
static PyObject *t_unsafe_chunk(PyObject *self, FASTCALL_ARGS) {
  SELF_HANDLE(h);
  PARSE(unsafe_chunk_p, r);
  int64_t chunks, dim;
  if (pa_int(&r, 0, &chunks) < 0 || pa_int(&r, 1, &dim) < 0) return NULL;
  SELF_HANDLE_AGAIN(h);
  return chunk_of(h, chunks, dim, "chunk");
}

static pa_parser unsafe_split_p = PA_PARSER("Tensor", "unsafe_split");
static PyObject *t_unsafe_split(PyObject *self, FASTCALL_ARGS) {
  SELF_HANDLE(h);
  PARSE(unsafe_split_p, r);
  int64_t size, dim;
  if (pa_int(&r, 0, &size) < 0 || pa_int(&r, 1, &dim) < 0) return NULL;
  SELF_HANDLE_AGAIN(h);
  return split_size(h, size, dim);
}

static pa_parser unsafe_split_with_sizes_p = PA_PARSER("Tensor", "unsafe_split_with_sizes");
static PyObject *t_unsafe_split_with_sizes(PyObject *self, FASTCALL_ARGS) {
  return split_with_sizes_call(&unsafe_split_with_sizes_p, self, args, nargs, kwnames);
}

/* ATen's narrow_copy (narrow_copy_dense_cpu_out): its own checks and messages, then narrow(dim,
 * start, length) as a new contiguous tensor. */
static pa_parser narrow_copy_p = PA_PARSER("Tensor", "narrow_copy");
static PyObject *t_narrow_copy(PyObject *self, FASTCALL_ARGS) {
  SELF_HANDLE(h);
  PARSE(narrow_copy_p, r);
  int64_t dim, start, length;
  if (pa_int(&r, 0, &dim) < 0 || pa_int(&r, 1, &start) < 0 || pa_int(&r, 2, &length) < 0)
    return NULL;
  SELF_HANDLE_AGAIN(h);
  int64_t ndim = (int64_t)c10c_tensor_dim(h), size;
  if (ndim == 0) return RUNTIME_ERROR("narrow() cannot be applied to a 0-dim tensor.");
  if (dim >= ndim)
    return RUNTIME_ERROR(
        "Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got false.  "
        "(Could this error message be improved?  If so, please report an enhancement request to "
        "PyTorch.)");
  c10c_status st = c10c_tensor_size(&size, h, dim); /* a negative dim: maybe_wrap_dim's error */
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  if (start < -size || start > size)
    return INDEX_ERROR("start out of range (expected to be in range of [%lld, %lld], but got %lld)",
                       (long long)-size, (long long)size, (long long)start);
  if (start < 0) start += size;
  if (length < 0 || start > size - length)
    return RUNTIME_ERROR("start (%lld) + length (%lld) exceeds dimension size (%lld).",
                         (long long)start, (long long)length, (long long)size);
  c10c_tensor *view = NULL, *out = NULL;
  st = c10c_tensor_narrow(&view, h, dim, start, length);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  st = c10c_tensor_clone(&out, view, C10C_MEMORY_FORMAT_CONTIGUOUS);
  pyc10_release_tensor(view);
  return pyc10_result(st, &out);
}

/* pyc10 has neither torch's conjugate bit nor its negative bit (conj() of a complex tensor
 * computes the values): no tensor has them set, and resolving them is self, as torch's for a
 * tensor without them. */
static PyObject *t_false(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  (void)h;
  Py_RETURN_FALSE;
}

static PyObject *t_self(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_HANDLE(h);
  (void)h;
  return Py_NewRef(self);
}

#define M(name, fn) \
  { name, PYC10_FASTCALL(fn), METH_FASTCALL | METH_KEYWORDS, NULL }
PyMethodDef pyc10_view_methods[] = {
    {"dim", t_dim, METH_NOARGS, "dim() -> int\n\nThe number of dimensions."},
    {"ndimension", t_dim, METH_NOARGS, "ndimension() -> int\n\nThe number of dimensions (dim())."},
    {"numel", t_numel, METH_NOARGS, "numel() -> int\n\nThe number of elements."},
    {"nelement", t_numel, METH_NOARGS, "nelement() -> int\n\nThe number of elements (numel())."},
    {"storage_offset", t_storage_offset, METH_NOARGS,
     "storage_offset() -> int\n\nThe offset in the storage, in elements."},
    {"element_size", t_element_size, METH_NOARGS,
     "element_size() -> int\n\nThe size of one element in bytes."},
    {"t", t_t, METH_NOARGS, "t() -> Tensor\n\nA tensor of at most 2 dims transposed."},
    M("size", t_size),
    M("stride", t_stride),
    M("is_contiguous", t_is_contiguous),
    M("view", t_view),
    M("view_as", t_view_as),
    M("reshape", t_reshape),
    M("reshape_as", t_reshape_as),
    M("permute", t_permute),
    M("expand", t_expand),
    M("expand_as", t_expand_as),
    M("broadcast_to", t_broadcast_to),
    M("transpose", t_transpose),
    M("swapaxes", t_swapaxes),
    M("swapdims", t_swapdims),
    M("squeeze", t_squeeze),
    M("unsqueeze", t_unsqueeze),
    M("flatten", t_flatten),
    M("unflatten", t_unflatten),
    M("narrow", t_narrow),
    M("select", t_select),
    M("movedim", t_movedim),
    M("moveaxis", t_moveaxis),
    M("diagonal", t_diagonal),
    M("unfold", t_unfold),
    M("as_strided", t_as_strided),
    {"t_", t_t_, METH_NOARGS, "t_() -> Tensor\n\nt() in place: self transposed, returned."},
    M("transpose_", t_transpose_),
    M("swapdims_", t_swapdims_),
    M("swapaxes_", t_swapaxes_),
    M("squeeze_", t_squeeze_),
    M("unsqueeze_", t_unsqueeze_),
    M("as_strided_", t_as_strided_),
    M("chunk", t_chunk),
    M("split", t_split),
    M("split_with_sizes", t_split_with_sizes),
    M("unbind", t_unbind),
    M("clone", t_clone),
    M("contiguous", t_contiguous),
    M("copy_", t_copy_),
    {"_is_view", t_is_view, METH_NOARGS,
     "_is_view() -> bool\n\nWhether a view method made this tensor (its _base is not None)."},
    {"_use_count", t_use_count, METH_NOARGS,
     "_use_count() -> int\n\nReferences to this tensor: 1 + its live views (torch's count)."},
    M("unsafe_chunk", t_unsafe_chunk),
    M("unsafe_split", t_unsafe_split),
    M("unsafe_split_with_sizes", t_unsafe_split_with_sizes),
    M("narrow_copy", t_narrow_copy),
    {"is_conj", t_false, METH_NOARGS,
     "is_conj() -> bool\n\nFalse: pyc10 has no conjugate bit (conj() computes the values)."},
    {"is_neg", t_false, METH_NOARGS, "is_neg() -> bool\n\nFalse: pyc10 has no negative bit."},
    {"resolve_conj", t_self, METH_NOARGS,
     "resolve_conj() -> Tensor\n\nself: pyc10 has no conjugate bit to resolve."},
    {"resolve_neg", t_self, METH_NOARGS,
     "resolve_neg() -> Tensor\n\nself: pyc10 has no negative bit to resolve."},
    {NULL, NULL, 0, NULL},
};
