/* torch's advanced indexing: t[index] and t[index] = value where the index holds tensors with
 * dims, lists or numpy arrays (index tensors and masks), beside the ints, slices, None, Ellipsis
 * and bools of basic indexing (indexing.c walks those, as torch's applySlicing, and hands the
 * sliced view and the index tensors it recorded to the functions here).
 *
 * The model is ATen's at::index / index_put_ (TensorAdvancedIndexing.cpp, IndexKernel.cpp):
 * masks (bool and uint8) become one long index per dim of the mask (its nonzero coordinates,
 * after torch's shape check), all indices are broadcast together, and the broadcast index shape
 * replaces the indexed dims in place when they are adjacent, else goes first (transposeToFront).
 * Every index value is checked before anything is read or written (torch's "index 5 is out of
 * bounds for dimension 0 with size 4", the dimension being the index's position among the
 * indices, as the kernel reports it). Elements are gathered and scattered as raw bytes of the
 * element size, so every dtype is indexed, and the result is laid out as TensorIterator lays out
 * the index kernel's output. index_put_ checks what torch checks first: the masked_fill fast
 * path (one mask, a one-element value: no dtype check), overlap of the value and the indices with
 * the destination, the value's shape, then matching dtypes.
 *
 * Tensors off the CPU are staged through host memory with the library's copies: the indexed view
 * (and the value, the indices) are copied to the CPU, indexed there, and the result (or, for a
 * write, the whole view) copied back.
 */
#include <string.h>

#include "common.h"

/* ---- the index tensors a walk records ---- */

void pyc10_adv_release(pyc10_adv *a) {
  for (size_t i = 0; i < a->n; i++) pyc10_release_tensor(a->tensors[i]);
  a->n = 0;
}

int pyc10_adv_add(pyc10_adv *a, int64_t dim, c10c_tensor *t) {
  if (a->n >= PYC10_MAX_ADV) {
    c10c_tensor_release(t);
    INDEX_ERROR("too many indices");
    return -1;
  }
  a->dims[a->n] = dim;
  a->tensors[a->n++] = t;
  return 0;
}

/* torch's boolToIndexingTensor: a long index [0] for True, an empty one for False. */
int pyc10_adv_add_bool(pyc10_adv *a, int64_t dim, bool value) {
  c10c_tensor *t = NULL;
  int64_t n = value ? 1 : 0;
  c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
  c10c_status st =
      c10c_tensor_empty(&t, &n, 1, C10C_DTYPE_INT64, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS);
  if (st == C10C_STATUS_OK && value) st = c10c_tensor_zero_(t);
  if (st != C10C_STATUS_OK) {
    c10c_tensor_release(t);
    pyc10_raise(st);
    return -1;
  }
  return pyc10_adv_add(a, dim, t);
}

/* numpy.ndarray exactly (torch's PyArray_CheckExact), when numpy is loaded. */
bool pyc10_adv_is_ndarray(PyObject *o) {
  static PyObject *ndarray;
  if (ndarray == NULL) {
    PyObject *np = PyDict_GetItemString(PyImport_GetModuleDict(), "numpy"); /* borrowed */
    if (np == NULL) return false;
    ndarray = PyObject_GetAttrString(np, "ndarray");
    if (ndarray == NULL) {
      PyErr_Clear();
      return false;
    }
  }
  return (PyObject *)Py_TYPE(o) == ndarray;
}

/* torch's treatSequenceAsTuple for an index that is not a tuple: a short sequence (not a tensor
 * or an ndarray) holding a tensor, a sequence, a slice, Ellipsis or None is read as the tuple of
 * its items, with torch's deprecation warning. 1 yes, 0 no, -1 when the warning raised. */
int pyc10_adv_sequence_as_tuple(PyObject *index) {
  if (PyTuple_Check(index) || PyLong_Check(index) || PySlice_Check(index) || index == Py_None ||
      index == Py_Ellipsis)
    return 0;
  if (pa_cls.tensor != NULL && PyObject_TypeCheck(index, pa_cls.tensor)) return 0;
  if (pyc10_adv_is_ndarray(index) || !PySequence_Check(index)) return 0;
  Py_ssize_t n = PySequence_Size(index);
  if (n < 0) {
    PyErr_Clear();
    return 0;
  }
  if (n >= 32) return 0;
  bool as_tuple = false;
  for (Py_ssize_t i = 0; i < n && !as_tuple; i++) {
    PyObject *o = PySequence_GetItem(index, i);
    if (o == NULL) {
      PyErr_Clear();
      return 0;
    }
    as_tuple = (pa_cls.tensor != NULL && PyObject_TypeCheck(o, pa_cls.tensor)) ||
               PySequence_Check(o) || PySlice_Check(o) || o == Py_Ellipsis || o == Py_None;
    Py_DECREF(o);
  }
  if (as_tuple &&
      PyErr_WarnEx(PyExc_UserWarning,
                   "Using a non-tuple sequence for multidimensional indexing is deprecated and "
                   "will be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In "
                   "pytorch 2.9 this will be interpreted as tensor index, x[torch.tensor(seq)], "
                   "which will result either in an error or a different result",
                   1) < 0)
    return -1;
  return as_tuple;
}

/* torch's indexing_tensor_from_data: pyc10.tensor(seq), kept when it is bool or uint8, else made
 * again as int64 (floats truncate, as torch's). A new reference, or NULL with the error. */
/* A list of exact ints (the common index) as an int64 tensor without pyc10.tensor's inference;
 * NULL without an error for any other sequence (or an int beyond int64). */
static c10c_tensor *int_list(PyObject *seq) {
  if (!PyList_CheckExact(seq)) return NULL;
  Py_ssize_t n = PyList_Size(seq);
  if (n < 1 || n > 256) return NULL;
  int64_t buf[256];
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *o = PyList_GetItem(seq, i); /* borrowed */
    if (!PyLong_CheckExact(o)) return NULL;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0 || (v == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return NULL;
    }
    buf[i] = (int64_t)v;
  }
  c10c_tensor *t = NULL;
  int64_t size = (int64_t)n;
  c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
  if (c10c_tensor_empty(&t, &size, 1, C10C_DTYPE_INT64, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS) !=
      C10C_STATUS_OK) {
    c10c_clear_last_error();
    return NULL;
  }
  void *d = c10c_tensor_data(t);
  if (d == NULL) {
    c10c_clear_last_error();
    c10c_tensor_release(t);
    return NULL;
  }
  memcpy(d, buf, (size_t)n * sizeof *buf);
  return t;
}

c10c_tensor *pyc10_adv_from_sequence(PyObject *seq) {
  static PyObject *make, *int64;
  c10c_tensor *fast = int_list(seq);
  if (fast != NULL) return fast;
  if (make == NULL) {
    PyObject *mod = PyImport_ImportModule("pyc10");
    if (mod == NULL) return NULL;
    make = PyObject_GetAttrString(mod, "tensor");
    int64 = make == NULL ? NULL : PyObject_GetAttrString(mod, "int64");
    Py_DECREF(mod);
    if (int64 == NULL) {
      Py_CLEAR(make);
      return NULL;
    }
  }
  PyObject *t = PyObject_CallFunctionObjArgs(make, seq, NULL);
  if (t == NULL) return NULL;
  c10c_tensor *h = pyc10_handle(t);
  c10c_dtype dt = h == NULL ? C10C_DTYPE_UNDEFINED : c10c_tensor_dtype(h);
  if (h != NULL && dt != C10C_DTYPE_BOOL && dt != C10C_DTYPE_UINT8 && dt != C10C_DTYPE_INT64) {
    Py_DECREF(t);
    PyObject *args = PyTuple_Pack(1, seq), *kw = Py_BuildValue("{s:O}", "dtype", int64);
    t = args == NULL || kw == NULL ? NULL : PyObject_Call(make, args, kw);
    Py_XDECREF(args);
    Py_XDECREF(kw);
    if (t == NULL) return NULL;
    h = pyc10_handle(t);
  }
  if (h != NULL) c10c_tensor_retain(h);
  Py_DECREF(t);
  return h;
}

/* ---- the kernel ---- */

enum { MAXD = 64 };

/* One long index after masks are expanded: int32 or int64 elements at data, its geometry, and the
 * dim of the sliced view it indexes. */
typedef struct {
  const char *data;
  int elsize;
  size_t ndim;
  int64_t sizes[MAXD], strides[MAXD];
  int64_t pos;
  bool dense; /* non-overlapping and dense after the broadcast (an int32 one stays so as long) */
} index_t;

typedef struct {
  c10c_tensor *self; /* the sliced view, on the CPU (a staged copy for other devices) */
  size_t nidx;
  index_t idx[MAXD];
  size_t nbuf;
  void *bufs[MAXD];            /* the masks' coordinates */
  c10c_tensor *hold[MAXD * 2]; /* staged tensors to release */
  size_t nhold;
  /* the result's geometry */
  size_t bnd; /* the broadcast index shape */
  int64_t bshape[MAXD];
  size_t rnd;
  int64_t rsizes[MAXD], sstride[MAXD], bstride[MAXD];
  int is_b[MAXD];
  int64_t *offs; /* per broadcast index position: its element offset in self */
  bool meta;     /* torch's meta kernel (a meta operand): geometry only, its checks and words */
} plan_t;

static void plan_free(plan_t *p) {
  for (size_t i = 0; i < p->nbuf; i++) PyMem_Free(p->bufs[i]);
  for (size_t i = 0; i < p->nhold; i++) pyc10_release_tensor(p->hold[i]);
  PyMem_Free(p->offs);
  PyMem_Free(p);
}

static bool on_cpu(const c10c_tensor *t) {
  return c10c_tensor_device(t).type == C10C_DEVICE_TYPE_CPU;
}

/* The next element of a walk in row-major order over k dims of sizes and strides: advances the
 * counters cnt and returns the element offset that follows off. */
static int64_t odometer(int64_t *cnt, const int64_t *sizes, const int64_t *strides, size_t k,
                        int64_t off) {
  for (size_t j = k; j-- > 0;) {
    if (++cnt[j] < sizes[j]) return off + strides[j];
    off -= strides[j] * (sizes[j] - 1);
    cnt[j] = 0;
  }
  return off;
}

/* A copy of src on device (a new reference) with src's strides, or contiguous; NULL with an
 * error. */
static c10c_tensor *copy_on(c10c_tensor *src, c10c_device device, bool same_strides) {
  c10c_tensor *t = NULL;
  const int64_t *sizes = c10c_tensor_sizes(src);
  size_t n = c10c_tensor_dim(src);
  c10c_dtype dtype = c10c_tensor_dtype(src);
  c10c_status st =
      same_strides
          ? c10c_tensor_empty_strided(&t, sizes, c10c_tensor_strides(src), n, dtype, device)
          : c10c_tensor_empty(&t, sizes, n, dtype, device, C10C_MEMORY_FORMAT_CONTIGUOUS);
  if (st == C10C_STATUS_OK) st = c10c_tensor_copy_(t, src);
  if (st != C10C_STATUS_OK) {
    c10c_tensor_release(t);
    pyc10_raise(st);
    return NULL;
  }
  return t;
}

/* A contiguous CPU copy of t (a new reference); NULL with an error. */
static c10c_tensor *host_copy(c10c_tensor *t) {
  c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
  return copy_on(t, cpu, false);
}

/* t itself on the CPU, else a contiguous CPU copy held by the plan; NULL with an error. */
static c10c_tensor *host(plan_t *p, c10c_tensor *t) {
  if (on_cpu(t)) return t;
  c10c_tensor *c = host_copy(t);
  if (c != NULL) p->hold[p->nhold++] = c;
  return c;
}

/* The first element's address (a stand-in for no elements); NULL with the library's error. */
static char *data_of(c10c_tensor *t) {
  static _Alignas(16) char none[16];
  if (c10c_tensor_numel(t) == 0) return none;
  char *d = c10c_tensor_data(t);
  if (d == NULL) pyc10_raise(c10c_last_error_status());
  return d;
}

/* Formats sizes as c10 prints an IntArrayRef: "[2, 3]". */
static void format_sizes(char *buf, size_t cap, const int64_t *sizes, size_t n) {
  size_t k = (size_t)snprintf(buf, cap, "[");
  for (size_t i = 0; i < n && k < cap; i++)
    k += (size_t)snprintf(buf + k, cap - k, i ? ", %lld" : "%lld", (long long)sizes[i]);
  if (k < cap) snprintf(buf + k, cap - k, "]");
}

/* Formats sizes as torch.Size prints in Python messages: "pyc10.Size([2, 3])". */
static void format_size_object(char *buf, size_t cap, const int64_t *sizes, size_t n) {
  size_t k = (size_t)snprintf(buf, cap, "pyc10.Size(");
  if (k < cap) format_sizes(buf + k, cap - k, sizes, n);
  k = strlen(buf);
  if (k < cap) snprintf(buf + k, cap - k, ")");
}

static bool is_meta(const c10c_tensor *t) {
  return c10c_tensor_device(t).type == C10C_DEVICE_TYPE_META;
}

static bool any_meta(const pyc10_adv *a) {
  for (size_t i = 0; i < a->n; i++)
    if (is_meta(a->tensors[i])) return true;
  return false;
}

static bool is_mask(c10c_dtype dt) { return dt == C10C_DTYPE_BOOL || dt == C10C_DTYPE_UINT8; }

/* The masks of torch's meta index kernel (meta_index_Tensor): bool and int8, where uint8 is
 * refused by its dtype check. */
static bool is_meta_mask(c10c_dtype dt) { return dt == C10C_DTYPE_BOOL || dt == C10C_DTYPE_INT8; }

/* torch's checkIndexTensorTypes: long, int, byte or bool indices (the meta kernel's check says
 * the same as a RuntimeError, and takes int8 where the words say byte). */
static int check_types(const pyc10_adv *a, bool meta) {
  for (size_t i = 0; i < a->n; i++) {
    c10c_dtype dt = c10c_tensor_dtype(a->tensors[i]);
    if (dt == C10C_DTYPE_INT64 || dt == C10C_DTYPE_INT32 || (meta ? is_meta_mask(dt) : is_mask(dt)))
      continue;
    if (meta)
      RUNTIME_ERROR("tensors used as indices must be long, int, byte or bool tensors");
    else
      INDEX_ERROR("tensors used as indices must be long, int, byte or bool tensors");
    return -1;
  }
  return 0;
}

/* torch's check that a mask's shape is that of the dims it indexes. */
static int check_mask(c10c_tensor *self, c10c_tensor *m, int64_t at) {
  size_t k = c10c_tensor_dim(m), nd = c10c_tensor_dim(self);
  const int64_t *ms = c10c_tensor_sizes(m), *ss = c10c_tensor_sizes(self);
  if ((size_t)at + k > nd) {
    INDEX_ERROR("too many indices for tensor of dimension %zu (got %zu)", nd, (size_t)at + k);
    return -1;
  }
  for (size_t j = 0; j < k; j++) {
    if (ms[j] != ss[at + (int64_t)j]) {
      char a[256], b[256];
      format_sizes(a, sizeof a, ms, k);
      format_sizes(b, sizeof b, ss, nd);
      INDEX_ERROR(
          "The shape of the mask %s at index %zu does not match the shape of the indexed tensor "
          "%s at index %lld",
          a, j, b, (long long)(at + (int64_t)j));
      return -1;
    }
  }
  return 0;
}

/* The meta kernel's mask checks (torch/_meta_registrations.py meta_index_Tensor), after its
 * nonzero(): the mask is the at-th entry of torch's index list and starts at dim k of self. */
static int check_mask_meta(c10c_tensor *self, c10c_tensor *m, size_t at, int64_t k) {
  size_t nd = c10c_tensor_dim(self), km = c10c_tensor_dim(m);
  const int64_t *ms = c10c_tensor_sizes(m), *ss = c10c_tensor_sizes(self);
  if ((size_t)k + km > nd) {
    INDEX_ERROR("too many indices for tensor of dimension %zu", nd);
    return -1;
  }
  for (size_t j = 0; j < km; j++) {
    if (ms[j] != ss[k + (int64_t)j]) {
      char a[256], b[256];
      format_size_object(a, sizeof a, ms, km);
      format_size_object(b, sizeof b, ss, nd);
      INDEX_ERROR(
          "The shape of the mask %s at index %zu does not match the shape of the indexed tensor "
          "%s at index %lld",
          a, at, b, (long long)(k + (int64_t)j));
      return -1;
    }
  }
  return 0;
}

/* torch's expandTensors: each mask (after its shape check and the uint8 warning) as one int64
 * index per dim, its nonzero coordinates in C order; the other indices as they are. */
static int expand(plan_t *p, const pyc10_adv *a) {
  size_t extra = 0; /* the dims masks took beyond one each: torch's list has one entry a mask */
  for (size_t i = 0; i < a->n; i++) {
    c10c_tensor *t = a->tensors[i];
    c10c_dtype dt = c10c_tensor_dtype(t);
    size_t nd = c10c_tensor_dim(p->self);
    if (!is_mask(dt) && (a->dims[i] < 0 || (size_t)a->dims[i] >= nd)) {
      /* several "..." can place an index past the dims (torch's count of its indices) */
      INDEX_ERROR("too many indices for tensor of dimension %zu (got %lld)", nd,
                  (long long)a->dims[i] + 1);
      return -1;
    }
    if (p->meta ? !is_meta_mask(dt) : !is_mask(dt)) {
      c10c_tensor *h = p->meta ? t : host(p, t); /* the meta kernel reads no index value */
      if (h == NULL) return -1;
      index_t *x = &p->idx[p->nidx++];
      x->data = p->meta ? NULL : data_of(h);
      if (x->data == NULL && !p->meta) return -1;
      x->elsize = dt == C10C_DTYPE_INT64 ? 8 : 4;
      x->ndim = c10c_tensor_dim(h);
      memcpy(x->sizes, c10c_tensor_sizes(h), x->ndim * sizeof(int64_t));
      memcpy(x->strides, c10c_tensor_strides(h), x->ndim * sizeof(int64_t));
      x->pos = a->dims[i];
      x->dense = c10c_tensor_is_non_overlapping_and_dense(h);
      continue;
    }
    if (p->meta && is_meta(t)) { /* a meta mask has no nonzero elements to count */
      pyc10_not_implemented(
          "The register_meta function for torch.nonzero() raises unimplemented by default, as "
          "a correct data-independent implementation does not exist.");
      return -1;
    }
    if (dt == C10C_DTYPE_UINT8 &&
        PyErr_WarnEx(PyExc_UserWarning,
                     "indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                     "torch.bool instead.",
                     1) < 0)
      return -1;
    if (!p->meta && check_mask(p->self, t, a->dims[i]) < 0) return -1;
    c10c_tensor *h = host(p, t);
    if (h == NULL) return -1;
    size_t k = c10c_tensor_dim(h);
    if (p->nidx + k > MAXD) {
      INDEX_ERROR("too many indices");
      return -1;
    }
    const char *d = data_of(h);
    if (d == NULL) return -1;
    const int64_t *ms = c10c_tensor_sizes(h), *mst = c10c_tensor_strides(h);
    int64_t n = c10c_tensor_numel(h), nnz = 0, cnt[MAXD] = {0}, off = 0;
    for (int64_t e = 0; e < n; e++) { /* count */
      nnz += d[off] != 0;
      off = odometer(cnt, ms, mst, k, off);
    }
    int64_t *coords = PyMem_Malloc((size_t)(nnz > 0 ? nnz : 1) * (k > 0 ? k : 1) * sizeof(int64_t));
    if (coords == NULL) return PyErr_NoMemory(), -1;
    p->bufs[p->nbuf++] = coords;
    memset(cnt, 0, sizeof cnt);
    off = 0;
    int64_t w = 0;
    for (int64_t e = 0; e < n; e++) {
      if (d[off] != 0) {
        for (size_t j = 0; j < k; j++) coords[w * (int64_t)k + (int64_t)j] = cnt[j];
        w++;
      }
      off = odometer(cnt, ms, mst, k, off);
    }
    if (p->meta && check_mask_meta(p->self, t, (size_t)a->dims[i] - extra, a->dims[i]) < 0)
      return -1;
    extra += k > 0 ? k - 1 : 0;
    for (size_t j = 0; j < k; j++) {
      index_t *x = &p->idx[p->nidx++];
      x->data = (const char *)(coords + j);
      x->elsize = 8;
      x->ndim = 1;
      x->sizes[0] = nnz;
      x->strides[0] = (int64_t)k;
      x->pos = a->dims[i] + (int64_t)j;
      x->dense = k == 1;
    }
  }
  return 0;
}

/* The meta kernel's broadcast of the indices (torch._refs._broadcast_shapes): the shapes in
 * order from the last dim, its RuntimeError at the first that does not fit the shape so far. */
static int broadcast_error_meta(const plan_t *p, size_t nd) {
  int64_t common[MAXD];
  for (size_t d = 0; d < nd; d++) common[d] = 1;
  for (size_t i = 0; i < p->nidx; i++) {
    const index_t *x = &p->idx[i];
    for (size_t j = 1; j <= x->ndim; j++) {
      int64_t s = x->sizes[x->ndim - j], *c = &common[nd - j];
      if (s == *c || s == 1) continue;
      if (*c == 1) {
        *c = s;
        continue;
      }
      char shape[512], want[512];
      format_size_object(shape, sizeof shape, x->sizes, x->ndim);
      format_sizes(want, sizeof want, common, nd);
      RUNTIME_ERROR(
          "Attempting to broadcast a dimension of length %lld at -%zu! Mismatching "
          "argument at index %zu had %s; but expected shape should be broadcastable "
          "to %s",
          (long long)s, j, i, shape, want);
      return -1;
    }
  }
  return 0; /* not reached: broadcast found a mismatch */
}

/* torch's expand_outplace of the indices, with its IndexError when they do not broadcast. */
static int broadcast(plan_t *p) {
  size_t nd = 0;
  for (size_t i = 0; i < p->nidx; i++)
    if (p->idx[i].ndim > nd) nd = p->idx[i].ndim;
  for (size_t d = 0; d < nd; d++) p->bshape[d] = 1;
  bool ok = true;
  for (size_t i = 0; i < p->nidx && ok; i++) {
    index_t *x = &p->idx[i];
    for (size_t j = 0; j < x->ndim; j++) {
      int64_t *b = &p->bshape[nd - x->ndim + j], s = x->sizes[j];
      if (*b == 1)
        *b = s;
      else if (s != 1 && s != *b)
        ok = false;
    }
  }
  if (!ok && p->meta) return broadcast_error_meta(p, nd);
  if (!ok) {
    char msg[1024];
    size_t k = 0;
    for (size_t i = 0; i < p->nidx && k < sizeof msg; i++) {
      if (i > 0) k += (size_t)snprintf(msg + k, sizeof msg - k, ", ");
      if (k < sizeof msg) format_sizes(msg + k, sizeof msg - k, p->idx[i].sizes, p->idx[i].ndim);
      k = strlen(msg);
    }
    INDEX_ERROR("shape mismatch: indexing tensors could not be broadcast together with shapes %s",
                msg);
    return -1;
  }
  p->bnd = nd;
  for (size_t i = 0; i < p->nidx; i++) { /* the strides over the broadcast shape */
    index_t *x = &p->idx[i];
    int64_t sizes[MAXD], strides[MAXD];
    size_t lead = nd - x->ndim;
    for (size_t d = 0; d < nd; d++) {
      bool has = d >= lead;
      int64_t s = has ? x->sizes[d - lead] : 1;
      strides[d] = has && s == p->bshape[d] ? x->strides[d - lead] : 0;
      if (strides[d] == 0 && p->bshape[d] > 1) x->dense = false;
      sizes[d] = p->bshape[d];
    }
    x->ndim = nd;
    memcpy(x->sizes, sizes, nd * sizeof *sizes);
    memcpy(x->strides, strides, nd * sizeof *strides);
  }
  return 0;
}

/* The result's geometry (torch's AdvancedIndex: the broadcast shape in place of adjacent indexed
 * dims, else first) and every index position's offset into self, each index value checked. */
static int layout(plan_t *p) {
  c10c_tensor *self = p->self;
  size_t nd = c10c_tensor_dim(self);
  const int64_t *ss = c10c_tensor_sizes(self), *st = c10c_tensor_strides(self);
  bool indexed[MAXD] = {false};
  for (size_t i = 0; i < p->nidx; i++) indexed[p->idx[i].pos] = true;
  bool adjacent = true;
  for (size_t i = 1; i < p->nidx; i++)
    adjacent = adjacent && p->idx[i].pos == p->idx[i - 1].pos + 1;
  /* torch's check: an indexed dim of size 0 with a broadcast shape without 0 */
  bool zero_dim = false, zero_b = false;
  for (size_t i = 0; i < p->nidx; i++) zero_dim = zero_dim || ss[p->idx[i].pos] == 0;
  for (size_t d = 0; d < p->bnd; d++) zero_b = zero_b || p->bshape[d] == 0;
  if (zero_dim && !zero_b && !p->meta) { /* the meta kernel reads no index: no check */
    INDEX_ERROR("index is out of bounds for dimension with size 0");
    return -1;
  }
  size_t r = 0, before = adjacent && p->nidx > 0 ? (size_t)p->idx[0].pos : 0;
  if (nd - p->nidx + p->bnd > MAXD) {
    INDEX_ERROR("too many dimensions");
    return -1;
  }
  for (size_t d = 0; d < before; d++, r++) {
    p->rsizes[r] = ss[d], p->sstride[r] = st[d], p->is_b[r] = 0;
  }
  int64_t bs = 1;
  for (size_t d = p->bnd; d-- > 0;) {
    p->rsizes[r + d] = p->bshape[d], p->sstride[r + d] = 0, p->is_b[r + d] = 1;
    p->bstride[r + d] = bs;
    bs *= p->bshape[d];
  }
  r += p->bnd;
  for (size_t d = before; d < nd; d++) {
    if (indexed[d]) continue;
    p->rsizes[r] = ss[d], p->sstride[r] = st[d], p->is_b[r] = 0, p->bstride[r] = 0;
    r++;
  }
  for (size_t d = 0; d < r; d++)
    if (!p->is_b[d]) p->bstride[d] = 0;
  p->rnd = r;
  return 0;
}

/* Every index position's offset into self, each value checked as the kernel does (in C order of
 * the positions, then index by index), before anything is read or written. */
static int offsets(plan_t *p) {
  const int64_t *ss = c10c_tensor_sizes(p->self), *st = c10c_tensor_strides(p->self);
  int64_t nb = 1, total = 1;
  for (size_t d = 0; d < p->bnd; d++) nb *= p->bshape[d];
  for (size_t d = 0; d < p->rnd; d++) total *= p->rsizes[d];
  if (total == 0) nb = 0; /* the kernel runs over no element: nothing is read or checked */
  p->offs = PyMem_Malloc((size_t)(nb > 0 ? nb : 1) * sizeof(int64_t));
  if (p->offs == NULL) return PyErr_NoMemory(), -1;
  for (int64_t b = 0; b < nb; b++) {
    int64_t off = 0;
    for (size_t i = 0; i < p->nidx; i++) {
      const index_t *x = &p->idx[i];
      int64_t e = 0, rem = b;
      for (size_t d = p->bnd; d-- > 0;) {
        e += (rem % p->bshape[d]) * x->strides[d];
        rem /= p->bshape[d];
      }
      int64_t v;
      if (x->elsize == 8) {
        memcpy(&v, x->data + e * 8, 8);
      } else {
        int32_t v32;
        memcpy(&v32, x->data + e * 4, 4);
        v = v32;
      }
      int64_t size = ss[x->pos];
      if (!(v >= -size && v < size)) {
        INDEX_ERROR("index %lld is out of bounds for dimension %zu with size %lld", (long long)v, i,
                    (long long)size);
        return -1;
      }
      off += (v < 0 ? v + size : v) * st[x->pos];
    }
    p->offs[b] = off;
  }
  return 0;
}

/* The plan for self[indices]: self (a CPU view) indexed by a's tensors, or (meta) the geometry
 * of torch's meta kernel, which reads no index value. NULL with an error. */
static plan_t *make_plan(c10c_tensor *self, const pyc10_adv *a, bool meta) {
  plan_t *p = PyMem_Malloc(sizeof *p); /* large: only the counts are set */
  if (p == NULL) return (plan_t *)PyErr_NoMemory();
  p->self = self;
  p->nidx = p->nbuf = p->nhold = p->bnd = p->rnd = 0;
  p->offs = NULL;
  p->meta = meta;
  if (check_types(a, meta) < 0 || expand(p, a) < 0 || broadcast(p) < 0 || layout(p) < 0) {
    plan_free(p);
    return NULL;
  }
  return p;
}

/* c10's computeStride: the strides of a view of (old sizes, old strides) as new sizes; false
 * when there is none (reshape then copies). */
static bool view_strides(const int64_t *os, const int64_t *ost, size_t on, const int64_t *ns,
                         size_t nn, int64_t *out) {
  if (on == 0) {
    for (size_t d = 0; d < nn; d++) out[d] = 1;
    return true;
  }
  int64_t view_d = (int64_t)nn - 1, base = ost[on - 1], tn = 1, vn = 1;
  for (int64_t td = (int64_t)on - 1; td >= 0; td--) {
    tn *= os[td];
    if (td == 0 || (os[td - 1] != 1 && ost[td - 1] != tn * base)) {
      while (view_d >= 0 && (vn < tn || ns[view_d] == 1)) {
        out[view_d] = vn * base;
        vn *= ns[view_d];
        view_d--;
      }
      if (vn != tn) return false;
      if (td > 0) {
        base = ost[td - 1];
        tn = 1;
        vn = 1;
      }
    }
  }
  return view_d == -1;
}

void pyc10_iter_order(size_t n, size_t nops, const int64_t *const *ops, const int64_t *sizes,
                      int64_t *perm) {
  for (size_t i = 0; i < n; i++) perm[i] = (int64_t)(n - 1 - i);
  for (size_t i = 1; i < n; i++) {
    size_t d1 = i;
    for (size_t k = i; k-- > 0;) {
      int64_t a = perm[k], b = perm[d1];
      int cmp = 0; /* TensorIterator's should_swap */
      for (size_t o = 0; o < nops && cmp == 0; o++) {
        int64_t s0 = ops[o][a], s1 = ops[o][b];
        if (s0 == 0 || s1 == 0) continue;
        if (s0 < s1)
          cmp = -1;
        else if (s0 > s1 || sizes[a] > sizes[b])
          cmp = 1;
      }
      if (cmp > 0) {
        perm[k] = b;
        perm[d1] = a;
        d1 = k;
      } else if (cmp < 0) {
        break;
      }
    }
  }
}

/* TensorIterator's output strides for the index kernel: its insertion sort of the dims by the
 * operands' byte strides (the restrided source, then each index; broadcast dims compare with
 * nothing; equal strides put the smaller size first), then dense strides in that order. */
static void result_strides(const plan_t *p, size_t itemsize, int64_t *out) {
  size_t n = p->rnd, nops = 1 + p->nidx;
  if (n == 0) return;
  /* the operands' byte strides over the result's dims */
  int64_t ops[MAXD + 1][MAXD];
  for (size_t d = 0; d < n; d++) ops[0][d] = p->is_b[d] ? 0 : p->sstride[d] * (int64_t)itemsize;
  for (size_t i = 0; i < p->nidx; i++) {
    const index_t *x = &p->idx[i];
    /* an int32 index is made long (dense ones keep their strides, others become contiguous),
     * then reshaped with size-1 dims around the broadcast dims (torch's reshape_indexer) */
    int64_t old[MAXD], news[MAXD], newst[MAXD], next = 1;
    for (size_t d = p->bnd; d-- > 0;) {
      old[d] = x->elsize == 4 && !x->dense ? next : x->strides[d];
      next *= p->bshape[d] > 1 ? p->bshape[d] : 1;
    }
    size_t k = 0;
    for (size_t d = 0; d < n; d++) news[d] = p->is_b[d] ? p->bshape[k++] : 1;
    if (!view_strides(p->bshape, old, p->bnd, news, n, newst)) {
      next = 1;
      for (size_t d = n; d-- > 0;) {
        newst[d] = next;
        next *= news[d] > 1 ? news[d] : 1;
      }
    }
    for (size_t d = 0; d < n; d++) /* TensorIterator: a broadcast size-1 dim strides 0 */
      ops[1 + i][d] = news[d] == 1 && p->rsizes[d] != 1 ? 0 : newst[d] * 8;
  }
  int64_t perm[MAXD];
  const int64_t *op_strides[MAXD + 1];
  for (size_t o = 0; o < nops; o++) op_strides[o] = ops[o];
  pyc10_iter_order(n, nops, op_strides, p->rsizes, perm);
  bool inverted = true;
  for (size_t i = 0; i < n; i++) inverted = inverted && perm[i] == (int64_t)(n - 1 - i);
  if (inverted) { /* contiguous */
    int64_t next = 1;
    for (size_t d = n; d-- > 0;) {
      out[d] = next;
      next *= p->rsizes[d] > 1 ? p->rsizes[d] : 1;
    }
    return;
  }
  int64_t next = 1;
  for (size_t i = 0; i < n; i++) {
    out[perm[i]] = next;
    next *= p->rsizes[perm[i]];
  }
}

static inline void copy_element(char *dst, const char *src, size_t n) {
  switch (n) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 16: memcpy(dst, src, 16); break;
    default: memcpy(dst, src, n); break;
  }
}

/* Walks the result's positions in C order: for each, the element of self the indices select (at
 * self_base) and the one of other (at other_base with other_strides over the result's dims);
 * copies other's into self's when put, else self's into other's. */
static void walk(const plan_t *p, char *self_base, char *other_base, const int64_t *other_strides,
                 size_t itemsize, bool put) {
  size_t n = p->rnd;
  int64_t total = 1;
  for (size_t d = 0; d < n; d++) total *= p->rsizes[d];
  if (total == 0) return;
  int64_t cnt[MAXD] = {0}, so = 0, oo = 0, bo = 0;
  for (int64_t e = 0; e < total; e++) {
    char *s = self_base + (so + p->offs[bo]) * (int64_t)itemsize;
    char *o = other_base + oo * (int64_t)itemsize;
    if (put)
      copy_element(s, o, itemsize);
    else
      copy_element(o, s, itemsize);
    for (size_t d = n; d-- > 0;) {
      if (++cnt[d] < p->rsizes[d]) {
        so += p->sstride[d];
        oo += other_strides[d];
        bo += p->bstride[d];
        break;
      }
      so -= p->sstride[d] * (p->rsizes[d] - 1);
      oo -= other_strides[d] * (p->rsizes[d] - 1);
      bo -= p->bstride[d] * (p->rsizes[d] - 1);
      cnt[d] = 0;
    }
  }
}

/* self[indices] with a meta operand: torch's meta index kernel runs, which reads no element and
 * checks no index value; the result has its geometry, on self's device (uninitialized memory
 * when self is not meta, as torch's). */
static c10c_tensor *meta_get(c10c_tensor *self, const pyc10_adv *a) {
  plan_t *p = make_plan(self, a, true);
  if (p == NULL) return NULL;
  int64_t strides[MAXD];
  result_strides(p, c10c_tensor_itemsize(self), strides);
  c10c_tensor *out = NULL;
  c10c_status st = c10c_tensor_empty_strided(&out, p->rsizes, strides, p->rnd,
                                             c10c_tensor_dtype(self), c10c_tensor_device(self));
  plan_free(p);
  if (st != C10C_STATUS_OK) pyc10_raise(st);
  return out;
}

c10c_tensor *pyc10_adv_get(c10c_tensor *sliced, const pyc10_adv *a) {
  if (is_meta(sliced) || any_meta(a)) return meta_get(sliced, a);
  c10c_tensor *self = sliced, *staged = NULL;
  if (!on_cpu(sliced)) {
    self = staged = host_copy(sliced);
    if (self == NULL) return NULL;
  }
  plan_t *p = make_plan(self, a, false);
  c10c_tensor *out = NULL;
  char *src = p == NULL || offsets(p) < 0 ? NULL : data_of(self);
  if (src != NULL) {
    size_t item = c10c_tensor_itemsize(self);
    int64_t strides[MAXD];
    result_strides(p, item, strides);
    c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
    c10c_status st =
        c10c_tensor_empty_strided(&out, p->rsizes, strides, p->rnd, c10c_tensor_dtype(self), cpu);
    char *dst = st == C10C_STATUS_OK ? data_of(out) : NULL;
    if (st != C10C_STATUS_OK) {
      pyc10_raise(st);
    } else if (dst == NULL) {
      c10c_tensor_release(out);
      out = NULL;
    } else {
      walk(p, src, dst, strides, item, false);
    }
  }
  if (p != NULL) plan_free(p);
  if (out != NULL && staged != NULL) {
    c10c_tensor *d = copy_on(out, c10c_tensor_device(sliced), true);
    c10c_tensor_release(out);
    out = d;
  }
  pyc10_release_tensor(staged);
  return out;
}

/* torch's assert_no_overlap: the destination and another tensor in the same memory. */
static int no_overlap(c10c_tensor *dst, c10c_tensor *other) {
  if (c10c_tensor_numel(dst) == 0 || c10c_tensor_numel(other) == 0) return 0;
  if (c10c_tensor_storage(dst) != c10c_tensor_storage(other)) return 0;
  if (!c10c_tensor_is_non_overlapping_and_dense(dst) ||
      !c10c_tensor_is_non_overlapping_and_dense(other))
    return 0;
  const char *a = c10c_tensor_data(dst), *b = c10c_tensor_data(other);
  if (a == NULL || b == NULL) return 0;
  const char *ae = a + c10c_tensor_nbytes(dst), *be = b + c10c_tensor_nbytes(other);
  if (a < be && b < ae) {
    RUNTIME_ERROR(
        "unsupported operation: some elements of the input tensor and the written-to tensor "
        "refer to a single memory location. Please clone() the tensor before performing the "
        "operation.");
    return -1;
  }
  return 0;
}

/* torch's canDispatchToMaskedFill: one index, a mask (its shape checked here), and a value of
 * one element on the CPU. */
static int masked_fill_case(c10c_tensor *self, const pyc10_adv *a, c10c_tensor *value) {
  if (value != NULL && (c10c_tensor_numel(value) != 1 || !on_cpu(value))) return 0;
  if (a->n != 1 || !is_mask(c10c_tensor_dtype(a->tensors[0]))) return 0;
  if (c10c_tensor_device(a->tensors[0]).type != c10c_tensor_device(self).type) return 0;
  return check_mask(self, a->tensors[0], a->dims[0]) < 0 ? -1 : 1;
}

/* value's one element converted to dt with torch's checks (Scalar's checked conversion). */
static int convert_one(c10c_tensor *value, c10c_dtype dt, unsigned char *out) {
  const char *d = data_of(value);
  if (d == NULL) return -1;
  PyObject *num = pyc10_load_element(d, c10c_tensor_dtype(value));
  if (num == NULL && PyErr_Occurred()) return -1;
  if (num != NULL) {
    int rc = pyc10_encode_scalar(out, dt, num);
    Py_DECREF(num);
    return rc;
  }
  /* a reduced float: the library's cast */
  c10c_tensor *z = NULL;
  c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
  c10c_status st = c10c_tensor_empty(&z, NULL, 0, dt, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS);
  c10c_tensor *one = NULL;
  if (st == C10C_STATUS_OK) st = c10c_tensor_as_strided(&one, value, NULL, 0, NULL, 0, NULL);
  if (st == C10C_STATUS_OK) st = c10c_tensor_copy_(z, one);
  if (st == C10C_STATUS_OK) memcpy(out, c10c_tensor_data(z), c10c_tensor_itemsize(z));
  c10c_tensor_release(one);
  c10c_tensor_release(z);
  if (st != C10C_STATUS_OK) return pyc10_raise(st), -1;
  return 0;
}

int pyc10_adv_put(c10c_tensor *sliced, const pyc10_adv *a, c10c_tensor *value, const void *number) {
  /* a meta operand: torch's meta index_put_ (and masked_fill_) kernels, which check nothing
   * here and write nothing, whatever the devices of the others */
  if (is_meta(sliced) || any_meta(a) || (value != NULL && is_meta(value))) return 0;
  c10c_dtype dt = c10c_tensor_dtype(sliced);
  size_t item = c10c_tensor_itemsize(sliced);
  _Alignas(16) unsigned char one[16];
  bool fill = value == NULL;
  size_t vnd = 0;
  const int64_t *vs = NULL, *vst = NULL;
  int mf = masked_fill_case(sliced, a, value); /* a number is a one-element value */
  if (mf < 0) return -1;
  if (mf && c10c_tensor_dtype(a->tensors[0]) == C10C_DTYPE_UINT8) {
    RUNTIME_ERROR(
        "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char");
    return -1;
  }
  if (fill) {
    memcpy(one, number, item);
  } else {
    /* torch's slicePrefix1sSize: the value's leading size-1 dims dropped */
    vnd = c10c_tensor_dim(value);
    vs = c10c_tensor_sizes(value), vst = c10c_tensor_strides(value);
    while (vnd > 0 && vs[0] == 1) vs++, vst++, vnd--;
    if (mf) {
      if (convert_one(value, dt, one) < 0) return -1;
      fill = true;
    } else if (no_overlap(sliced, value) < 0) {
      return -1;
    }
  }
  for (size_t i = 0; i < a->n; i++)
    if (no_overlap(sliced, a->tensors[i]) < 0) return -1;
  c10c_tensor *self = sliced, *staged = NULL;
  if (!on_cpu(sliced)) {
    self = staged = host_copy(sliced);
    if (self == NULL) return -1;
  }
  int rc = -1;
  plan_t *p = make_plan(self, a, false);
  if (p == NULL) goto done;
  int64_t vstrides[MAXD] = {0};
  const char *src = NULL;
  if (fill) {
    src = (const char *)one;
  } else {
    /* torch's make_index_put_iterator: the value's shape, then its dtype */
    bool fits = vnd <= p->rnd;
    for (size_t j = 0; j < vnd && fits; j++) {
      int64_t r = p->rsizes[p->rnd - vnd + j];
      fits = vs[j] == r || vs[j] == 1;
    }
    if (!fits) {
      char x[512], y[512];
      format_sizes(x, sizeof x, vs, vnd);
      format_sizes(y, sizeof y, p->rsizes, p->rnd);
      RUNTIME_ERROR(
          "shape mismatch: value tensor of shape %s cannot be broadcast to indexing "
          "result of shape %s",
          x, y);
      goto done;
    }
    if (c10c_tensor_dtype(value) != dt) {
      RUNTIME_ERROR(
          "Index put requires the source and destination dtypes match, got %s for the "
          "destination and %s for the source.",
          c10c_dtype_c10_name(dt), c10c_dtype_c10_name(c10c_tensor_dtype(value)));
      goto done;
    }
    c10c_tensor *hv = host(p, value);
    if (hv == NULL) goto done;
    if (hv != value) { /* the staged copy is contiguous: its strides over the kept dims */
      vst = c10c_tensor_strides(hv) + (c10c_tensor_dim(hv) - vnd);
    }
    src = data_of(hv);
    if (src == NULL) goto done;
    for (size_t j = 0; j < vnd; j++) {
      size_t d = p->rnd - vnd + j;
      vstrides[d] = vs[j] == p->rsizes[d] ? vst[j] : 0;
    }
  }
  if (offsets(p) < 0) goto done;
  char *dst = data_of(self);
  if (dst == NULL) goto done;
  c10c_status st = c10c_tensor_bump_version(sliced); /* the library's read-only check */
  if (st != C10C_STATUS_OK) {
    pyc10_raise(st);
    goto done;
  }
  walk(p, dst, (char *)src, vstrides, item, true);
  if (staged != NULL) st = c10c_tensor_copy_(sliced, staged);
  if (st != C10C_STATUS_OK) {
    pyc10_raise(st);
    goto done;
  }
  rc = 0;
done:
  if (p != NULL) plan_free(p);
  pyc10_release_tensor(staged);
  return rc;
}
