/* Tensor geometry: random tensors over random storages, random chains of every view operation
 * with fuzzed (often extreme) arguments, data operations (copy_ with broadcasting and dtype
 * conversion, fill_, zero_, clone, contiguous, c10c_tensor_data) between the results, and
 * storages resized or set_nbytes-shrunk under live tensors; each step checked against a reference
 * model the harness keeps itself:
 * - per tensor, its sizes and the byte address of every element in row-major order, derived from
 *   the operation's index semantics (transpose swaps two indices, select inserts one, expand
 *   broadcasts, view keeps the row-major order, ...), never from the library's stride formulas;
 * - per storage, a shadow of every byte of its memory (up to what it holds, past its recorded
 *   size too), updated by the model of each write.
 * A view that succeeds must have the model's sizes and addresses; one whose arguments are valid
 * on a small tensor must succeed; a data access of a tensor whose elements its storage no longer
 * holds must fail; a write must change exactly the model's bytes, and a failure none.
 *
 * With the stand-in CUDA driver (C10C_CUDA_DRIVER=tests/libc10c_cuda_stub.so, as the meson test
 * and run.sh set it) storages and tensors are on cuda:0 too, and copies go between devices. The
 * stand-in's device memory is host memory the harness reads directly, and it counts every driver
 * copy or memset outside a live block: that count must stay 0. */
#define _GNU_SOURCE /* RTLD_NOLOAD */
#include <dlfcn.h>

#include "fuzz.h"

#include "c10c/c10c.h"

enum {
  MAX_DIMS = 8,
  MAX_TENSORS = 8,
  MAX_STORAGES = 4,
  MAX_ELEMENTS = 2048, /* elements modelled one by one (bigger tensors are metadata only) */
  MAX_BYTES = 16384,   /* storages the harness makes */
  MAX_STEPS = 48,
  MAX_CONVERT_ELEMENTS = 64, /* converting copies modelled element by element */
  /* reshape and flatten copy when the layout needs it: of a bigger tensor (an expanded one of
   * 2^30 elements, metadata only) that would write gigabytes, which once took this harness past
   * libFuzzer's 2 GB in one input; only those that are views are tried */
  MAX_COPY_ELEMENTS = 1 << 20
};

static const c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
static const c10c_device cuda = {C10C_DEVICE_TYPE_CUDA, 0};

/* The stand-in driver's count of accesses outside its blocks; NULL: no CUDA in this run. */
static long (*stub_violations)(void);

static void cuda_setup(void) {
  static bool done;
  if (done) return;
  done = true;
  const char *driver = getenv("C10C_CUDA_DRIVER");
  if (driver == NULL || !c10c_cuda_is_available()) return;
  void *handle = dlopen(driver, RTLD_NOW | RTLD_NOLOAD); /* loaded by the library already */
  void *address = handle != NULL ? dlsym(handle, "c10c_stub_violations") : NULL;
  if (address != NULL) memcpy(&stub_violations, &address, sizeof stub_violations); /* POSIX */
}

/* dtypes exercised: every itemsize, and every kind of conversion */
static const c10c_dtype dtypes[] = {
    C10C_DTYPE_UINT8,           C10C_DTYPE_INT8,
    C10C_DTYPE_INT16,           C10C_DTYPE_INT32,
    C10C_DTYPE_INT64,           C10C_DTYPE_FLOAT16,
    C10C_DTYPE_FLOAT32,         C10C_DTYPE_FLOAT64,
    C10C_DTYPE_COMPLEX32,       C10C_DTYPE_COMPLEX64,
    C10C_DTYPE_COMPLEX128,      C10C_DTYPE_BOOL,
    C10C_DTYPE_BFLOAT16,        C10C_DTYPE_UINT16,
    C10C_DTYPE_UINT32,          C10C_DTYPE_UINT64,
    C10C_DTYPE_FLOAT8_E5M2,     C10C_DTYPE_FLOAT8_E4M3FN,
    C10C_DTYPE_FLOAT8_E5M2FNUZ, C10C_DTYPE_FLOAT8_E4M3FNUZ,
    C10C_DTYPE_FLOAT8_E8M0FNU,
};
enum { NDTYPES = sizeof dtypes / sizeof dtypes[0] };

typedef struct storage_model {
  c10c_storage *handle;  /* a reference of the harness */
  unsigned char *shadow; /* capacity bytes */
  int64_t capacity, nbytes;
  unsigned char *external; /* the harness's buffer for an external storage, else NULL */
  bool read_only;
  int64_t version; /* the version counter its tensors share */
} storage_model;

typedef struct tensor_model {
  c10c_tensor *handle;
  int storage; /* slot in storages[] */
  c10c_dtype dtype;
  size_t ndim;
  int64_t sizes[MAX_DIMS];
  int64_t numel;  /* -1: the product overflows (the library must refuse such a tensor) */
  int64_t *addr;  /* numel byte offsets into the storage, row-major; NULL: not modelled */
  int64_t extent; /* one past the last byte an element reaches (0 without elements) */
  bool inference; /* made in inference mode (views: as their base) */
} tensor_model;

typedef struct state {
  fuzz_input in;
  storage_model storages[MAX_STORAGES];
  tensor_model tensors[MAX_TENSORS];
  int external_deletes, externals_made;
  bool inference; /* this thread's inference mode */
} state;

/* ---- helpers ---- */

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  FUZZ_CHECK(p != NULL, "harness out of memory");
  return p;
}

/* The number of elements, -1 for a negative size or c10's numel overflow (a uint64 product whose
 * overflow is sticky, so 3 x 2^62 x 0 is 0 while 2^62 x 2^62 x 0 overflows). */
static int64_t product(const int64_t *sizes, size_t n) {
  uint64_t p = 1;
  bool overflow = false;
  for (size_t i = 0; i < n; i++) {
    if (sizes[i] < 0) return -1;
    overflow |= __builtin_mul_overflow(p, (uint64_t)sizes[i], &p);
  }
  return overflow || p > (uint64_t)INT64_MAX ? -1 : (int64_t)p;
}

/* Row-major odometer: advances idx over sizes; false after the last index. */
static bool next_index(int64_t *idx, const int64_t *sizes, size_t n) {
  for (size_t d = n; d-- > 0;) {
    if (++idx[d] < sizes[d]) return true;
    idx[d] = 0;
  }
  return false;
}

static int64_t ravel(const int64_t *idx, const int64_t *sizes, size_t n) {
  int64_t k = 0;
  for (size_t d = 0; d < n; d++) k = k * sizes[d] + idx[d];
  return k;
}

static void model_set_extent(tensor_model *m) {
  m->extent = 0;
  if (m->addr == NULL) return;
  size_t item = c10c_dtype_itemsize(m->dtype);
  for (int64_t k = 0; k < m->numel; k++)
    if (m->addr[k] + (int64_t)item > m->extent) m->extent = m->addr[k] + (int64_t)item;
}

static void drop_tensor(state *s, int slot) {
  c10c_tensor_release(s->tensors[slot].handle);
  free(s->tensors[slot].addr);
  memset(&s->tensors[slot], 0, sizeof s->tensors[slot]);
}

static void drop_storage(state *s, int slot) {
  storage_model *m = &s->storages[slot];
  c10c_storage_release(m->handle);
  free(m->shadow);
  memset(m, 0, sizeof *m);
}

static int free_tensor_slot(state *s) {
  for (int i = 0; i < MAX_TENSORS; i++)
    if (s->tensors[i].handle == NULL) return i;
  int victim = (int)fuzz_range(&s->in, 0, MAX_TENSORS - 1);
  drop_tensor(s, victim);
  return victim;
}

static int pick_tensor(state *s) {
  int start = (int)fuzz_range(&s->in, 0, MAX_TENSORS - 1);
  for (int i = 0; i < MAX_TENSORS; i++)
    if (s->tensors[(start + i) % MAX_TENSORS].handle != NULL) return (start + i) % MAX_TENSORS;
  return -1;
}

static int pick_storage(state *s) {
  int start = (int)fuzz_range(&s->in, 0, MAX_STORAGES - 1);
  for (int i = 0; i < MAX_STORAGES; i++)
    if (s->storages[(start + i) % MAX_STORAGES].handle != NULL) return (start + i) % MAX_STORAGES;
  return -1;
}

static int storage_slot_of(state *s, const c10c_storage *handle) {
  for (int i = 0; i < MAX_STORAGES; i++)
    if (s->storages[i].handle == handle) return i;
  return -1;
}

/* The memory a storage slot's shadow mirrors. */
static unsigned char *memory_of(const storage_model *m) {
  return m->external ? m->external : c10c_storage_data(m->handle);
}

/* Every byte of every storage equals its shadow. */
static void check_memory(const state *s, const char *after) {
  if (stub_violations != NULL) {
    FUZZ_CHECK(c10c_cuda_synchronize(0) == C10C_STATUS_OK, "synchronize: %s",
               c10c_last_error_message());
    FUZZ_CHECK(stub_violations() == 0, "after %s: a driver access outside a live block", after);
  }
  for (int i = 0; i < MAX_STORAGES; i++) {
    const storage_model *m = &s->storages[i];
    if (m->handle == NULL || m->capacity == 0) continue;
    const unsigned char *real = memory_of(m);
    FUZZ_CHECK(real != NULL, "storage %d lost its memory after %s", i, after);
    for (int64_t b = 0; b < m->capacity; b++)
      FUZZ_CHECK(real[b] == m->shadow[b],
                 "after %s: storage %d byte %lld is %u, the model says %u (recorded size %lld of "
                 "%lld)",
                 after, i, (long long)b, real[b], m->shadow[b], (long long)m->nbytes,
                 (long long)m->capacity);
  }
}

/* Frees a storage slot for a new storage: the tensors over the victim (never slot `protect`, the
 * storage an operation is reading) go, and with the last reference its memory (an external
 * buffer once its deleter ran). */
static int free_storage_slot(state *s, int protect) {
  for (int i = 0; i < MAX_STORAGES; i++)
    if (s->storages[i].handle == NULL) return i;
  int victim = (int)fuzz_range(&s->in, 0, MAX_STORAGES - 2);
  if (victim >= protect && protect >= 0) victim++;
  for (int t = 0; t < MAX_TENSORS; t++)
    if (s->tensors[t].handle != NULL && s->tensors[t].storage == victim) drop_tensor(s, t);
  unsigned char *external = s->storages[victim].external;
  int before = s->external_deletes;
  drop_storage(s, victim);
  if (external != NULL) {
    FUZZ_CHECK(s->external_deletes == before + 1, "the deleter did not run at the last release");
    free(external);
  }
  return victim;
}

/* A new storage slot for memory the library made (clone, empty, a reshape copy): the shadow
 * starts as what is there. */
static int adopt_storage(state *s, c10c_storage *handle, int protect) {
  int slot = storage_slot_of(s, handle);
  if (slot >= 0) return slot;
  int64_t n = c10c_storage_nbytes(handle);
  if (n > MAX_BYTES * 64) return -1;
  int i = free_storage_slot(s, protect);
  storage_model *m = &s->storages[i];
  m->handle = c10c_storage_retain(handle);
  m->capacity = m->nbytes = n;
  m->shadow = xmalloc((size_t)n);
  if (n > 0) memcpy(m->shadow, c10c_storage_data(handle), (size_t)n);
  return i;
}

/* Checks a tensor the library made against the model's sizes and addresses (addr may be NULL:
 * sizes only), then keeps both in a slot (taking ownership of t and addr). */
static void keep(state *s, c10c_tensor *t, int storage, c10c_dtype dtype, const int64_t *sizes,
                 size_t ndim, int64_t *addr, bool inference, const char *op) {
  FUZZ_CHECK(c10c_tensor_is_inference(t) == inference, "%s: inference flag %d, expected %d", op,
             c10c_tensor_is_inference(t), inference);
  FUZZ_CHECK(c10c_tensor_dim(t) == ndim, "%s: %zu dims, the model says %zu", op, c10c_tensor_dim(t),
             ndim);
  FUZZ_CHECK(c10c_tensor_dtype(t) == dtype, "%s: dtype %d, expected %d", op,
             (int)c10c_tensor_dtype(t), (int)dtype);
  const int64_t *ts = c10c_tensor_sizes(t), *tst = c10c_tensor_strides(t);
  for (size_t d = 0; d < ndim; d++) {
    FUZZ_CHECK(ts[d] == sizes[d], "%s: size %zu is %lld, the model says %lld", op, d,
               (long long)ts[d], (long long)sizes[d]);
    FUZZ_CHECK(tst[d] >= 0, "%s: stride %zu is negative (%lld)", op, d, (long long)tst[d]);
  }
  int64_t numel = product(sizes, ndim);
  FUZZ_CHECK(numel >= 0 && c10c_tensor_numel(t) == numel, "%s: numel %lld, the model says %lld", op,
             (long long)c10c_tensor_numel(t), (long long)numel);
  FUZZ_CHECK(c10c_tensor_storage_offset(t) >= 0, "%s: negative storage offset", op);
  size_t item = c10c_dtype_itemsize(dtype);
  if (addr != NULL) {
    int64_t idx[MAX_DIMS] = {0};
    for (int64_t k = 0; k < numel; k++) {
      /* exact, whatever the library's strides */
      fuzz_wide off = fuzz_wide_of(c10c_tensor_storage_offset(t));
      for (size_t d = 0; d < ndim; d++)
        off = fuzz_wide_add(off, fuzz_wide_mul(fuzz_wide_of(idx[d]), fuzz_wide_of(tst[d])));
      fuzz_wide at = fuzz_wide_mul(off, fuzz_wide_of((int64_t)item));
      FUZZ_CHECK(fuzz_wide_cmp(at, fuzz_wide_of(addr[k])) == 0,
                 "%s: element %lld is at byte %lld, the model says %lld", op, (long long)k,
                 (long long)fuzz_wide_low(at), (long long)addr[k]);
      next_index(idx, sizes, ndim);
    }
  }
  int64_t kept_sizes[MAX_DIMS]; /* sizes may lie in the slot about to be given up */
  memcpy(kept_sizes, sizes, ndim * sizeof *sizes);
  int slot = free_tensor_slot(s);
  tensor_model *m = &s->tensors[slot];
  m->handle = t;
  m->storage = storage;
  m->dtype = dtype;
  m->ndim = ndim;
  memcpy(m->sizes, kept_sizes, ndim * sizeof *sizes);
  m->numel = numel;
  m->addr = addr;
  m->inference = inference;
  model_set_extent(m);
  if (storage < 0) { /* storage not modelled: keep nothing */
    drop_tensor(s, slot);
  }
}

/* Whether the model says t's elements lie inside its storage's recorded size. */
static bool in_bounds(const state *s, const tensor_model *t) {
  return t->addr != NULL && t->extent <= s->storages[t->storage].nbytes;
}

/* ---- view operations: each builds the model's result from the base model ---- */

typedef struct view_result {
  int64_t sizes[MAX_DIMS];
  size_t ndim;
  int64_t *addr; /* NULL when the base is not modelled or the result too big */
} view_result;

/* new index -> base index, for remap */
typedef void (*index_map)(const int64_t *new_index, int64_t *base_index, const void *ctx);

/* The result's addresses: for every new index, the base's address of the base index f maps it
 * to. */
static int64_t *remap(const tensor_model *base, const int64_t *sizes, size_t ndim, index_map f,
                      const void *ctx) {
  int64_t n = product(sizes, ndim);
  if (base->addr == NULL || n < 0 || n > MAX_ELEMENTS) return NULL;
  int64_t *addr = xmalloc((size_t)n * sizeof *addr);
  int64_t idx[MAX_DIMS] = {0}, old[MAX_DIMS + 1];
  for (int64_t k = 0; k < n; k++) {
    f(idx, old, ctx);
    int64_t j = ravel(old, base->sizes, base->ndim);
    FUZZ_CHECK(j >= 0 && j < base->numel, "model: index %lld outside the base", (long long)j);
    addr[k] = base->addr[j];
    next_index(idx, sizes, ndim);
  }
  return addr;
}

/* ATen's maybe_wrap_dim with wrap_scalar: a 0-dim tensor takes 0 and -1 (both meaning 0). */
/* The model of the bytes a geometry reaches (non-negative sizes, strides and offset, no size 0):
 * exact, saturating at 2^100 (which no storage holds) so that the model itself cannot overflow. */
static fuzz_wide model_end(const int64_t *sizes, const int64_t *strides, size_t k, int64_t offset,
                           size_t item) {
  const fuzz_wide cap = fuzz_wide_pow2(100);
  fuzz_wide last = fuzz_wide_of(offset);
  for (size_t i = 0; i < k && fuzz_wide_cmp(last, cap) < 0; i++)
    last = fuzz_wide_add(last, fuzz_wide_mul(fuzz_wide_of(sizes[i] - 1), fuzz_wide_of(strides[i])));
  return fuzz_wide_cmp(last, cap) < 0
             ? fuzz_wide_mul(fuzz_wide_add(last, fuzz_wide_of(1)), fuzz_wide_of((int64_t)item))
             : cap;
}

static int64_t wrap_dim(int64_t d, int64_t n) { return d < 0 ? d + (n > 0 ? n : 1) : d; }

/* Whether shape views b, for a tensor too big to copy (MAX_COPY_ELEMENTS); true for a small one. */
static bool copies_little(const tensor_model *b, const int64_t *shape, size_t k) {
  if (b->numel <= MAX_COPY_ELEMENTS) return true;
  c10c_tensor *probe = NULL;
  if (c10c_tensor_view(&probe, b->handle, shape, k) != C10C_STATUS_OK) return false;
  c10c_tensor_release(probe);
  return true;
}

static bool valid_dim(int64_t d, int64_t n) {
  int64_t m = n > 0 ? n : 1;
  return d >= -m && d < m;
}

typedef struct perm_ctx {
  size_t n;
  int64_t perm[MAX_DIMS]; /* new dim i is base dim perm[i] */
} perm_ctx;

static void map_perm(const int64_t *ni, int64_t *bi, const void *ctx) {
  const perm_ctx *c = ctx;
  for (size_t i = 0; i < c->n; i++) bi[c->perm[i]] = ni[i];
}

typedef struct axis_ctx {
  size_t base_ndim;
  int64_t dim, start, step; /* base index along dim = start + new * step */
  int mode;                 /* 0: slice, 1: select (dim removed), 2: unsqueeze (dim added) */
} axis_ctx;

static void map_axis(const int64_t *ni, int64_t *bi, const void *ctx) {
  const axis_ctx *c = ctx;
  size_t j = 0;
  for (size_t d = 0; d < c->base_ndim; d++) {
    if (c->mode == 2 && (int64_t)j == c->dim) j++; /* skip the new size-1 dim */
    if ((int64_t)d == c->dim && c->mode == 1) {
      bi[d] = c->start;
      continue;
    }
    bi[d] = (int64_t)d == c->dim && c->mode == 0 ? c->start + ni[j] * c->step : ni[j];
    j++;
  }
}

typedef struct keep_ctx {
  size_t base_ndim;
  bool kept[MAX_DIMS]; /* base dims present in the result (others are size 1: index 0) */
} keep_ctx;

static void map_keep(const int64_t *ni, int64_t *bi, const void *ctx) {
  const keep_ctx *c = ctx;
  size_t j = 0;
  for (size_t d = 0; d < c->base_ndim; d++) bi[d] = c->kept[d] ? ni[j++] : 0;
}

typedef struct expand_ctx {
  size_t base_ndim, lead;
  const int64_t *base_sizes;
} expand_ctx;

static void map_expand(const int64_t *ni, int64_t *bi, const void *ctx) {
  const expand_ctx *c = ctx;
  for (size_t d = 0; d < c->base_ndim; d++) bi[d] = c->base_sizes[d] == 1 ? 0 : ni[d + c->lead];
}

typedef struct diag_ctx {
  size_t base_ndim;
  int64_t d1, d2, offset;
} diag_ctx;

static void map_diag(const int64_t *ni, int64_t *bi, const void *ctx) {
  const diag_ctx *c = ctx;
  size_t j = 0, last = c->base_ndim - 2;
  for (size_t d = 0; d < c->base_ndim; d++)
    if ((int64_t)d != c->d1 && (int64_t)d != c->d2) bi[d] = ni[j++];
  int64_t k = ni[last];
  bi[c->d1] = k + (c->offset < 0 ? -c->offset : 0);
  bi[c->d2] = k + (c->offset > 0 ? c->offset : 0);
}

typedef struct unfold_ctx {
  size_t base_ndim;
  int64_t dim, step;
} unfold_ctx;

static void map_unfold(const int64_t *ni, int64_t *bi, const void *ctx) {
  const unfold_ctx *c = ctx;
  for (size_t d = 0; d < c->base_ndim; d++) bi[d] = ni[d];
  if (c->base_ndim > 0) bi[c->dim] = ni[c->dim] * c->step + ni[c->base_ndim];
}

/* The addresses of a view that keeps the row-major order of the elements (view, reshape,
 * flatten, unflatten): the same list. */
static int64_t *same_order(const tensor_model *base) {
  if (base->addr == NULL) return NULL;
  int64_t *addr = xmalloc((size_t)(base->numel > 0 ? base->numel : 1) * sizeof *addr);
  memcpy(addr, base->addr, (size_t)base->numel * sizeof *addr);
  return addr;
}

/* Reads a dim argument: usually a valid one, sometimes anything. */
static int64_t fuzz_dim(state *s, int64_t ndim) {
  if (fuzz_u8(&s->in) < 230)
    return fuzz_range(&s->in, -(ndim > 0 ? ndim : 1), ndim > 0 ? ndim - 1 : 0);
  return fuzz_int64(&s->in);
}

/* A "small" base: views of it with valid arguments have no arithmetic that can overflow. */
static bool small(const tensor_model *b) {
  if (b->numel <= 0 || b->addr == NULL) return false;
  const int64_t *st = c10c_tensor_strides(b->handle);
  for (size_t d = 0; d < b->ndim; d++)
    if (st[d] > (INT64_C(1) << 30) || b->sizes[d] > (INT64_C(1) << 30)) return false;
  return c10c_tensor_storage_offset(b->handle) < (INT64_C(1) << 30);
}

/* Runs one view operation on tensor slot `bi` with fuzzed arguments. */
static void do_view(state *s, int bi) {
  tensor_model *b = &s->tensors[bi];
  int64_t n = (int64_t)b->ndim;
  c10c_tensor *out = NULL;
  c10c_status st = C10C_STATUS_OK;
  view_result r = {.ndim = b->ndim};
  memcpy(r.sizes, b->sizes, sizeof r.sizes);
  bool must_succeed = false, must_fail = false, modelled = true;
  c10c_dtype dtype = b->dtype;
  const char *op = "?";
  switch (fuzz_u8(&s->in) % 18) {
    case 0: { /* transpose */
      op = "transpose";
      int64_t d0 = fuzz_dim(s, n), d1 = fuzz_dim(s, n);
      st = c10c_tensor_transpose(&out, b->handle, d0, d1);
      if ((must_fail = !valid_dim(d0, n) || !valid_dim(d1, n))) break;
      must_succeed =
          b->numel > 0; /* without elements, c10's sticky numel may overflow in another order */
      perm_ctx c = {.n = (size_t)n};
      for (int64_t d = 0; d < n; d++) c.perm[d] = d;
      if (n > 0) {
        d0 = wrap_dim(d0, n), d1 = wrap_dim(d1, n);
        c.perm[d0] = d1, c.perm[d1] = d0;
        r.sizes[d0] = b->sizes[d1], r.sizes[d1] = b->sizes[d0];
      }
      r.addr = remap(b, r.sizes, r.ndim, map_perm, &c);
      break;
    }
    case 1: { /* permute */
      op = "permute";
      int64_t dims[MAX_DIMS] = {0};
      size_t k = fuzz_u8(&s->in) < 240 ? (size_t)n : (size_t)fuzz_range(&s->in, 0, MAX_DIMS);
      bool seen[MAX_DIMS] = {false}, valid = k == (size_t)n;
      perm_ctx c = {.n = (size_t)n};
      for (size_t i = 0; i < k; i++) {
        dims[i] = fuzz_dim(s, n);
        if (!valid_dim(dims[i], n) || n == 0) {
          valid = false;
          continue;
        }
        int64_t w = wrap_dim(dims[i], n);
        if (seen[w]) valid = false;
        seen[w] = true;
        c.perm[i] = w;
      }
      st = c10c_tensor_permute(&out, b->handle, dims, k);
      if ((must_fail = !valid)) break;
      must_succeed =
          b->numel > 0; /* without elements, c10's sticky numel may overflow in another order */
      for (size_t i = 0; i < k; i++) r.sizes[i] = b->sizes[c.perm[i]];
      r.addr = remap(b, r.sizes, r.ndim, map_perm, &c);
      break;
    }
    case 2:   /* slice */
    case 3: { /* narrow */
      bool narrow = false;
      int64_t dim = fuzz_dim(s, n), start = fuzz_int64(&s->in), end = 0, step = 1;
      if (fuzz_u8(&s->in) & 1) {
        op = "narrow";
        narrow = true;
        end = fuzz_int64(&s->in); /* the length */
        st = c10c_tensor_narrow(&out, b->handle, dim, start, end);
      } else {
        op = "slice";
        end = fuzz_int64(&s->in);
        step = fuzz_u8(&s->in) < 220 ? fuzz_range(&s->in, 1, 5) : fuzz_int64(&s->in);
        st = c10c_tensor_slice(&out, b->handle, dim, start, end, step);
      }
      if ((must_fail = n == 0 || !valid_dim(dim, n))) break;
      dim = wrap_dim(dim, n);
      int64_t size = b->sizes[dim];
      if (narrow) {
        int64_t length = end;
        if ((must_fail = length < 0 || start < -size || start > size)) break;
        if (start < 0) start += size;
        if ((must_fail = start > size - length)) break;
        end = start + length;
      } else {
        if ((must_fail = step <= 0)) break;
        if (start < 0) start = start < -size ? 0 : start + size;
        if (end < 0) end = end < -size ? 0 : end + size;
        if (start > size) start = size;
        if (end > size) end = size;
        if (end < start) end = start;
      }
      r.sizes[dim] = end == start ? 0 : 1 + (end - start - 1) / step;
      must_succeed = small(b) && step < (INT64_C(1) << 30); /* else stride * step may wrap */
      axis_ctx c = {.base_ndim = (size_t)n, .dim = dim, .start = start, .step = step, .mode = 0};
      r.addr = remap(b, r.sizes, r.ndim, map_axis, &c);
      break;
    }
    case 4: { /* select */
      op = "select";
      int64_t dim = fuzz_dim(s, n),
              index = fuzz_u8(&s->in) < 200 ? fuzz_range(&s->in, -4, 4) : fuzz_int64(&s->in);
      st = c10c_tensor_select(&out, b->handle, dim, index);
      if ((must_fail = n == 0 || !valid_dim(dim, n))) break;
      dim = wrap_dim(dim, n);
      int64_t size = b->sizes[dim];
      if ((must_fail = index < -size || index >= size)) break;
      if (index < 0) index += size;
      r.ndim = (size_t)n - 1;
      for (int64_t d = dim; d < n - 1; d++) r.sizes[d] = b->sizes[d + 1];
      must_succeed = small(b);
      axis_ctx c = {.base_ndim = (size_t)n, .dim = dim, .start = index, .mode = 1};
      r.addr = remap(b, r.sizes, r.ndim, map_axis, &c);
      break;
    }
    case 5: { /* unsqueeze */
      op = "unsqueeze";
      int64_t dim = fuzz_dim(s, n + 1);
      if (n >= MAX_DIMS) return;
      st = c10c_tensor_unsqueeze(&out, b->handle, dim);
      if ((must_fail = !valid_dim(dim, n + 1))) break;
      dim = wrap_dim(dim, n + 1);
      r.ndim = (size_t)n + 1;
      for (int64_t d = 0; d <= n; d++)
        r.sizes[d] = d < dim ? b->sizes[d] : d == dim ? 1 : b->sizes[d - 1];
      must_succeed = small(b);
      axis_ctx c = {.base_ndim = (size_t)n, .dim = dim, .mode = 2};
      r.addr = remap(b, r.sizes, r.ndim, map_axis, &c);
      break;
    }
    case 6:   /* squeeze */
    case 7: { /* squeeze(dims) */
      keep_ctx c = {.base_ndim = (size_t)n};
      bool valid = true, drop[MAX_DIMS] = {false};
      if (fuzz_u8(&s->in) & 1) {
        op = "squeeze";
        st = c10c_tensor_squeeze(&out, b->handle);
        for (int64_t d = 0; d < n; d++) drop[d] = true;
      } else {
        op = "squeeze_dims";
        int64_t dims[MAX_DIMS] = {0};
        size_t k = (size_t)fuzz_range(&s->in, 0, n > 0 ? n : 1);
        bool seen[MAX_DIMS] = {false};
        for (size_t i = 0; i < k; i++) {
          dims[i] = fuzz_dim(s, n);
          if (!valid_dim(dims[i], n)) {
            valid = false;
            continue;
          }
          int64_t w = wrap_dim(dims[i], n > 0 ? n : 1);
          if (seen[w]) valid = false;
          seen[w] = drop[w] = true;
        }
        st = c10c_tensor_squeeze_dims(&out, b->handle, dims, k);
      }
      if ((must_fail = !valid)) break;
      must_succeed =
          b->numel > 0; /* without elements, c10's sticky numel may overflow in another order */
      r.ndim = 0;
      for (int64_t d = 0; d < n; d++) {
        c.kept[d] = !(drop[d] && b->sizes[d] == 1);
        if (c.kept[d]) r.sizes[r.ndim++] = b->sizes[d];
      }
      r.addr = remap(b, r.sizes, r.ndim, map_keep, &c);
      break;
    }
    case 8: { /* expand */
      op = "expand";
      size_t k = (size_t)fuzz_range(&s->in, 0, MAX_DIMS);
      int64_t target[MAX_DIMS] = {0};
      bool valid = k >= (size_t)n;
      size_t lead = valid ? k - (size_t)n : 0;
      for (size_t i = 0; i < k; i++) {
        uint8_t how = fuzz_u8(&s->in);
        bool existing = valid && i >= lead;
        int64_t size = existing ? b->sizes[i - lead] : 1;
        target[i] = how < 100   ? size
                    : how < 160 ? -1
                    : how < 220 ? fuzz_range(&s->in, 0, 4)
                                : fuzz_int64(&s->in);
        if (target[i] == -1 && existing) {
          r.sizes[i] = size;
          continue;
        }
        if (target[i] < 0 || (size != 1 && target[i] != size)) valid = false;
        r.sizes[i] = target[i];
      }
      st = c10c_tensor_expand(&out, b->handle, target, k);
      if ((must_fail = !valid)) break;
      r.ndim = k;
      int64_t numel = product(r.sizes, k);
      if (numel < 0) break;
      must_succeed = small(b) && numel < (INT64_C(1) << 40);
      expand_ctx c = {.base_ndim = (size_t)n, .lead = lead, .base_sizes = b->sizes};
      r.addr = remap(b, r.sizes, r.ndim, map_expand, &c);
      break;
    }
    case 9:    /* view */
    case 10: { /* reshape */
      bool reshape = fuzz_u8(&s->in) & 1;
      op = reshape ? "reshape" : "view";
      size_t k = (size_t)fuzz_range(&s->in, 0, MAX_DIMS);
      int64_t shape[MAX_DIMS];
      for (size_t i = 0; i < k; i++) {
        uint8_t how = fuzz_u8(&s->in);
        shape[i] = how < 40 ? -1 : how < 220 ? fuzz_range(&s->in, 0, 6) : fuzz_int64(&s->in);
      }
      if (reshape && !copies_little(b, shape, k)) return;
      st = reshape ? c10c_tensor_reshape(&out, b->handle, shape, k)
                   : c10c_tensor_view(&out, b->handle, shape, k);
      if (st != C10C_STATUS_OK) break;
      /* success: the shape with its -1 inferred, and the same elements in the same order */
      r.ndim = k;
      memcpy(r.sizes, c10c_tensor_sizes(out), k * sizeof(int64_t));
      int64_t known = 1;
      int infer = -1;
      for (size_t i = 0; i < k; i++) {
        FUZZ_CHECK(shape[i] >= -1, "%s accepted size %lld", op, (long long)shape[i]);
        if (shape[i] == -1) {
          FUZZ_CHECK(infer < 0, "%s inferred two sizes", op);
          infer = (int)i;
        } else {
          FUZZ_CHECK(shape[i] == r.sizes[i], "%s: size %zu changed", op, i);
          FUZZ_CHECK(!__builtin_mul_overflow(known, shape[i], &known), "%s: overflow", op);
        }
      }
      FUZZ_CHECK(product(r.sizes, k) == b->numel, "%s changed the number of elements", op);
      if (c10c_tensor_storage(out) != c10c_tensor_storage(b->handle)) {
        /* reshape's copy: a new contiguous storage holding the elements in order */
        FUZZ_CHECK(reshape, "view made a copy");
        bool contiguous = false;
        c10c_tensor_is_contiguous(&contiguous, out, C10C_MEMORY_FORMAT_CONTIGUOUS);
        FUZZ_CHECK(contiguous, "reshape's copy is not contiguous");
        int slot = adopt_storage(s, c10c_tensor_storage(out), b->storage);
        if (slot < 0 || b->addr == NULL) {
          c10c_tensor_release(out);
          return;
        }
        size_t item = c10c_dtype_itemsize(dtype);
        int64_t *addr = xmalloc((size_t)(b->numel ? b->numel : 1) * sizeof *addr);
        const unsigned char *src = s->storages[b->storage].shadow;
        for (int64_t e = 0; e < b->numel; e++) {
          addr[e] = (c10c_tensor_storage_offset(out) + e) * (int64_t)item;
          FUZZ_CHECK(memcmp(s->storages[slot].shadow + addr[e], src + b->addr[e], item) == 0,
                     "reshape's copy: element %lld differs", (long long)e);
        }
        keep(s, out, slot, dtype, r.sizes, r.ndim, addr, s->inference, op);
        return;
      }
      r.addr = same_order(b);
      break;
    }
    case 11: { /* flatten */
      op = "flatten";
      int64_t a = fuzz_dim(s, n), z = fuzz_dim(s, n);
      if (b->numel > MAX_COPY_ELEMENTS && valid_dim(a, n) && valid_dim(z, n) && n > 0 &&
          wrap_dim(a, n) <= wrap_dim(z, n)) { /* the flattened shape must be a view */
        int64_t shape[MAX_DIMS], p = 1;
        size_t k = 0;
        for (int64_t d = 0; d < n; d++) {
          if (d >= wrap_dim(a, n) && d <= wrap_dim(z, n)) p *= b->sizes[d]; /* numel: no wrap */
          if (d < wrap_dim(a, n) || d >= wrap_dim(z, n))
            shape[k++] = d == wrap_dim(z, n) ? p : b->sizes[d];
        }
        if (!copies_little(b, shape, k)) return;
      }
      st = c10c_tensor_flatten(&out, b->handle, a, z);
      if ((must_fail = !valid_dim(a, n) || !valid_dim(z, n))) break;
      a = wrap_dim(a, n), z = wrap_dim(z, n);
      if ((must_fail = a > z)) break;
      if (n == 0) {
        r.ndim = 1, r.sizes[0] = 1;
      } else {
        int64_t p = 1;
        bool wraps = false; /* only beside a size 0, whose sizes may be anything */
        for (int64_t d = a; d <= z; d++) wraps |= __builtin_mul_overflow(p, b->sizes[d], &p);
        if (wraps) {
          FUZZ_CHECK(st == C10C_STATUS_OVERFLOW, "flatten of sizes whose product wraps: %s",
                     c10c_status_name(st));
          break;
        }
        r.ndim = (size_t)(n - (z - a));
        for (int64_t d = 0, j = 0; d < n; d++) {
          if (d > a && d <= z) continue;
          r.sizes[j++] = d == a ? p : b->sizes[d];
        }
      }
      if (st != C10C_STATUS_OK) break; /* beside a size 0 the product may overflow */
      if (c10c_tensor_storage(out) != c10c_tensor_storage(b->handle)) {
        c10c_tensor_release(out); /* a copy when the layout needs one: covered by reshape */
        return;
      }
      r.addr = same_order(b);
      break;
    }
    case 12: { /* unflatten */
      op = "unflatten";
      int64_t dim = fuzz_dim(s, n), parts[MAX_DIMS];
      size_t k = (size_t)fuzz_range(&s->in, 0, 3);
      for (size_t i = 0; i < k; i++) {
        uint8_t how = fuzz_u8(&s->in);
        parts[i] = how < 60 ? -1 : how < 230 ? fuzz_range(&s->in, 0, 6) : fuzz_int64(&s->in);
      }
      if (n - 1 + (int64_t)k > MAX_DIMS) return;
      st = c10c_tensor_unflatten(&out, b->handle, dim, parts, k);
      if (st != C10C_STATUS_OK) break;
      dim = wrap_dim(dim, n);
      r.ndim = (size_t)n - 1 + k;
      memcpy(r.sizes, c10c_tensor_sizes(out), r.ndim * sizeof(int64_t));
      for (size_t i = 0; i < k; i++)
        FUZZ_CHECK(parts[i] == -1 || parts[i] == r.sizes[dim + (int64_t)i],
                   "unflatten changed a size");
      FUZZ_CHECK(product(r.sizes + dim, k) == b->sizes[dim], "unflatten: sizes don't multiply");
      r.addr = same_order(b);
      break;
    }
    case 13: { /* movedim */
      op = "movedim";
      size_t k = (size_t)fuzz_range(&s->in, 0, n > 0 ? n : 1);
      int64_t src[MAX_DIMS] = {0}, dst[MAX_DIMS] = {0};
      for (size_t i = 0; i < k; i++) src[i] = fuzz_dim(s, n), dst[i] = fuzz_dim(s, n);
      st = c10c_tensor_movedim(&out, b->handle, src, k, dst, k);
      bool valid = true, seen_s[MAX_DIMS] = {false}, seen_d[MAX_DIMS] = {false};
      for (size_t i = 0; i < k && valid; i++) {
        if (!valid_dim(src[i], n) || !valid_dim(dst[i], n)) valid = false;
        if (!valid || n == 0) break;
        int64_t a = wrap_dim(src[i], n), z = wrap_dim(dst[i], n);
        if (seen_s[a] || seen_d[z]) valid = false;
        seen_s[a] = seen_d[z] = true;
      }
      if ((must_fail = !valid)) break;
      must_succeed =
          b->numel > 0; /* without elements, c10's sticky numel may overflow in another order */
      /* result dim dst[i] is source dim src[i]; the other dims keep their order */
      perm_ctx c = {.n = (size_t)n};
      bool used[MAX_DIMS] = {false};
      for (size_t i = 0; i < k && n > 0; i++) c.perm[wrap_dim(dst[i], n)] = wrap_dim(src[i], n);
      int64_t next = 0;
      for (int64_t d = 0; d < n; d++) {
        if (seen_d[d]) continue;
        while (seen_s[next] || used[next]) next++;
        c.perm[d] = next;
        used[next] = true;
      }
      for (int64_t d = 0; d < n; d++) r.sizes[d] = b->sizes[c.perm[d]];
      r.addr = remap(b, r.sizes, r.ndim, map_perm, &c);
      break;
    }
    case 14: { /* diagonal */
      op = "diagonal";
      int64_t offset = fuzz_u8(&s->in) < 200 ? fuzz_range(&s->in, -4, 4) : fuzz_int64(&s->in);
      int64_t d1 = fuzz_dim(s, n), d2 = fuzz_dim(s, n);
      st = c10c_tensor_diagonal(&out, b->handle, offset, d1, d2);
      if (n < 2) break; /* ATen wraps dims of a 0- or 1-dim tensor before refusing them */
      if ((must_fail = !valid_dim(d1, n) || !valid_dim(d2, n))) break;
      d1 = wrap_dim(d1, n), d2 = wrap_dim(d2, n);
      if ((must_fail = d1 == d2)) break;
      int64_t s1 = b->sizes[d1], s2 = b->sizes[d2], diag;
      if (offset >= 0)
        diag = s2 - offset < s1 ? s2 - offset : s1;
      else
        diag = offset < -s1 ? 0 : (s1 + offset < s2 ? s1 + offset : s2);
      if (diag < 0) diag = 0;
      r.ndim = (size_t)n - 1;
      for (int64_t d = 0, j = 0; d < n; d++)
        if (d != d1 && d != d2) r.sizes[j++] = b->sizes[d];
      r.sizes[n - 2] = diag;
      must_succeed = small(b) && offset > -(INT64_C(1) << 30) && offset < (INT64_C(1) << 30);
      diag_ctx c = {.base_ndim = (size_t)n, .d1 = d1, .d2 = d2, .offset = offset};
      r.addr = remap(b, r.sizes, r.ndim, map_diag, &c);
      break;
    }
    case 15: { /* unfold */
      op = "unfold";
      int64_t dim = fuzz_dim(s, n);
      /* the window size: small, anything, or (bytes 248 and up) the dim's own size or just
       * under it, which with a huge dim (beside a 0) leaves few windows or, for size 0 and step
       * 1, more than int64 holds */
      uint8_t how = fuzz_u8(&s->in);
      int64_t whole = n > 0 && valid_dim(dim, n) ? b->sizes[wrap_dim(dim, n)] : 1;
      int64_t size = how < 220   ? fuzz_range(&s->in, 0, 4)
                     : how < 248 ? fuzz_int64(&s->in)
                                 : whole - fuzz_range(&s->in, 0, 2);
      int64_t step = fuzz_u8(&s->in) < 220 ? fuzz_range(&s->in, 1, 4) : fuzz_int64(&s->in);
      if (n >= MAX_DIMS) return;
      st = c10c_tensor_unfold(&out, b->handle, dim, size, step);
      if ((must_fail = !valid_dim(dim, n) || size < 0 || step <= 0)) break;
      dim = wrap_dim(dim, n);
      int64_t max = n == 0 ? 1 : b->sizes[dim];
      if ((must_fail = size > max)) break;
      /* windows start at 0, step, 2 * step, ... while a whole window fits */
      /* (0 <= size <= sizes[dim]: the difference fits; one more window may not) */
      fuzz_wide windows =
          fuzz_wide_add(fuzz_wide_of(n == 0 ? 0 : (b->sizes[dim] - size) / step), fuzz_wide_of(1));
      if ((must_fail = fuzz_wide_cmp(windows, fuzz_wide_of(INT64_MAX)) > 0)) {
        FUZZ_CHECK(st == C10C_STATUS_OVERFLOW, "unfold into more than INT64_MAX windows: %s",
                   c10c_status_name(st));
        break;
      }
      r.ndim = (size_t)n + 1;
      r.sizes[n] = size;
      if (n > 0) r.sizes[dim] = fuzz_wide_low(windows);
      must_succeed = (small(b) && step < (INT64_C(1) << 30)) || (n == 0 && b->numel > 0);
      unfold_ctx c = {.base_ndim = (size_t)n, .dim = dim, .step = step};
      r.addr = remap(b, r.sizes, r.ndim, map_unfold, &c);
      break;
    }
    case 16: { /* as_strided: the model is the definition */
      op = "as_strided";
      size_t k = (size_t)fuzz_range(&s->in, 0, MAX_DIMS);
      int64_t sizes[MAX_DIMS], strides[MAX_DIMS];
      for (size_t i = 0; i < k; i++) {
        sizes[i] = fuzz_u8(&s->in) < 220 ? fuzz_range(&s->in, 0, 5) : fuzz_int64(&s->in);
        strides[i] = fuzz_u8(&s->in) < 220 ? fuzz_range(&s->in, 0, 9) : fuzz_int64(&s->in);
      }
      int64_t offset = fuzz_u8(&s->in) < 220 ? fuzz_range(&s->in, 0, 64) : fuzz_int64(&s->in);
      bool keep_offset = fuzz_u8(&s->in) < 40;
      if (keep_offset) offset = c10c_tensor_storage_offset(b->handle);
      st = c10c_tensor_as_strided(&out, b->handle, sizes, k, strides, k,
                                  keep_offset ? NULL : &offset);
      /* the model: valid when sizes, strides and offset are >= 0 and the extent fits */
      size_t item = c10c_dtype_itemsize(dtype);
      bool valid = offset >= 0, empty = false;
      for (size_t i = 0; i < k; i++) {
        valid &= sizes[i] >= 0 && strides[i] >= 0;
        empty |= sizes[i] == 0;
      }
      if (!valid) {
        FUZZ_CHECK(st != C10C_STATUS_OK, "as_strided accepted a negative size, stride or offset");
        break;
      }
      fuzz_wide need = empty ? fuzz_wide_of(0) : model_end(sizes, strides, k, offset, item);
      bool fits = fuzz_wide_cmp(
                      need, fuzz_wide_of(c10c_storage_nbytes(c10c_tensor_storage(b->handle)))) <= 0;
      if (!fits) {
        FUZZ_CHECK(st != C10C_STATUS_OK, "as_strided accepted a view past its storage");
        break;
      }
      int64_t numel = product(sizes, k);
      FUZZ_CHECK(st == C10C_STATUS_OK || numel < 0,
                 "as_strided refused a view inside its storage: %s", c10c_last_error_message());
      if (st != C10C_STATUS_OK) break;
      r.ndim = k;
      memcpy(r.sizes, sizes, k * sizeof *sizes);
      r.addr = NULL;
      if (numel <= MAX_ELEMENTS) {
        r.addr = xmalloc((size_t)(numel ? numel : 1) * sizeof *r.addr);
        int64_t idx[MAX_DIMS] = {0};
        for (int64_t e = 0; e < numel; e++) {
          int64_t off = offset;
          for (size_t d = 0; d < k; d++) off += idx[d] * strides[d];
          r.addr[e] = off * (int64_t)item;
          next_index(idx, sizes, k);
        }
      }
      break;
    }
    default: { /* view(dtype) */
      op = "view_dtype";
      dtype = dtypes[fuzz_range(&s->in, 0, NDTYPES - 1)];
      st = c10c_tensor_view_dtype(&out, b->handle, dtype);
      if (st != C10C_STATUS_OK) break;
      size_t old_item = c10c_dtype_itemsize(b->dtype), new_item = c10c_dtype_itemsize(dtype);
      r.ndim = (size_t)n;
      if (n > 0 && new_item < old_item) r.sizes[n - 1] *= (int64_t)(old_item / new_item);
      if (n > 0 && new_item > old_item) r.sizes[n - 1] /= (int64_t)(new_item / old_item);
      modelled = b->addr != NULL;
      if (!modelled) break;
      int64_t count = product(r.sizes, r.ndim);
      if (count < 0 || count > MAX_ELEMENTS) {
        modelled = false;
        break;
      }
      r.addr = xmalloc((size_t)(count ? count : 1) * sizeof *r.addr);
      /* byte-wise: a new element starts where the old bytes it covers start */
      for (int64_t e = 0; e < count; e++) {
        if (new_item == old_item) {
          r.addr[e] = b->addr[e];
        } else if (new_item < old_item) {
          int64_t ratio = (int64_t)(old_item / new_item);
          r.addr[e] = b->addr[e / ratio] + (e % ratio) * (int64_t)new_item;
        } else {
          int64_t ratio = (int64_t)(new_item / old_item);
          r.addr[e] = b->addr[e * ratio];
        }
      }
      break;
    }
  }
  if (st != C10C_STATUS_OK) {
    FUZZ_TRACE("  view %s of tensor %d: %s %s", op, bi, c10c_status_name(st),
               c10c_last_error_message());
    FUZZ_CHECK(out == NULL, "%s failed but returned a tensor", op);
    FUZZ_CHECK(st < 0 && c10c_last_error_message()[0] != '\0', "%s failed without a message", op);
    FUZZ_CHECK(!must_succeed, "%s refused valid arguments on a small tensor: %s (%s)", op,
               c10c_status_name(st), c10c_last_error_message());
    free(r.addr);
    return;
  }
  FUZZ_TRACE("  view %s of tensor %d: %s", op, bi, c10c_status_name(st));
  FUZZ_CHECK(!must_fail, "%s accepted arguments the model says are invalid", op);
  FUZZ_CHECK(out != NULL, "%s succeeded without a tensor", op);
  FUZZ_CHECK(c10c_tensor_storage(out) == c10c_tensor_storage(b->handle),
             "%s: a view with another storage", op);
  if (!modelled) {
    keep(s, out, b->storage, dtype, c10c_tensor_sizes(out), c10c_tensor_dim(out), NULL,
         b->inference, op);
    return;
  }
  keep(s, out, b->storage, dtype, r.sizes, r.ndim, r.addr, b->inference, op);
}

/* ---- data operations ---- */

/* The library's conversion of one element (the model for converting copies: a 1-element copy,
 * so that what is checked is that the strided walk converts every element at the right
 * addresses). */
static void convert_one(unsigned char *out, c10c_dtype to, const unsigned char *in,
                        c10c_dtype from) {
  c10c_tensor *a = NULL, *z = NULL;
  FUZZ_CHECK(c10c_tensor_empty(&a, NULL, 0, from, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS) == 0 &&
                 c10c_tensor_empty(&z, NULL, 0, to, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS) == 0,
             "scalar tensors");
  memcpy(c10c_tensor_data(a), in, c10c_dtype_itemsize(from));
  FUZZ_CHECK(c10c_tensor_copy_(z, a) == C10C_STATUS_OK, "scalar conversion %d -> %d: %s", (int)from,
             (int)to, c10c_last_error_message());
  memcpy(out, c10c_tensor_data(z), c10c_dtype_itemsize(to));
  c10c_tensor_release(a);
  c10c_tensor_release(z);
}

static bool convertible(c10c_dtype d) {
  for (int i = 0; i < NDTYPES; i++)
    if (dtypes[i] == d) return true;
  return false;
}

/* Whether an in-place write to t must be refused: a read-only storage, or an inference tensor
 * outside inference mode (c10's rule). */
static bool write_refused(const state *s, const tensor_model *t) {
  return s->storages[t->storage].read_only || (t->inference && !s->inference);
}

/* After an in-place write: every tensor over the storage sees the new version (inference tensors
 * have no counter). */
static void count_write(state *s, const tensor_model *t) {
  if (t->inference) return;
  int64_t v = -1, expected = ++s->storages[t->storage].version;
  FUZZ_CHECK(c10c_tensor_version(&v, t->handle) == C10C_STATUS_OK && v == expected,
             "version %lld after a write, the model says %lld", (long long)v, (long long)expected);
}

/* copy_(dst, src): the model reads all of src (broadcast to dst's shape) first, then writes. */
static void do_copy(state *s, int di, int si) {
  tensor_model *d = &s->tensors[di], *src = &s->tensors[si];
  if (d->numel < 0 || src->numel < 0 || d->numel > MAX_ELEMENTS) return;
  c10c_status st = c10c_tensor_copy_(d->handle, src->handle);
  FUZZ_TRACE("  copy_ to tensor %d (dtype %d) from tensor %d (dtype %d): %s", di, (int)d->dtype, si,
             (int)src->dtype, c10c_status_name(st));
  bool out_of_bounds = (d->addr && !in_bounds(s, d)) || (src->addr && !in_bounds(s, src));
  if (out_of_bounds || write_refused(s, d))
    FUZZ_CHECK(st == C10C_STATUS_ERROR, "copy_ of a tensor past its storage or not writable: %s",
               c10c_status_name(st));
  if (st != C10C_STATUS_OK) {
    check_memory(s, "a failed copy_");
    return;
  }
  count_write(s, d);
  if (d->addr == NULL || src->addr == NULL) { /* not modelled: take what is there */
    storage_model *m = &s->storages[d->storage];
    if (m->capacity) memcpy(m->shadow, memory_of(m), (size_t)m->capacity);
    return;
  }
  /* broadcast: dst index -> src index, aligned from the right */
  size_t dn = d->ndim, sn = src->ndim;
  size_t ditem = c10c_dtype_itemsize(d->dtype), sitem = c10c_dtype_itemsize(src->dtype);
  bool convert = d->dtype != src->dtype;
  if (convert &&
      (d->numel > MAX_CONVERT_ELEMENTS || !convertible(d->dtype) || !convertible(src->dtype))) {
    storage_model *m = &s->storages[d->storage];
    if (m->capacity) memcpy(m->shadow, memory_of(m), (size_t)m->capacity);
    return;
  }
  unsigned char *values = xmalloc((size_t)(d->numel ? d->numel : 1) * ditem);
  const unsigned char *sshadow = s->storages[src->storage].shadow;
  int64_t idx[MAX_DIMS] = {0}, sidx[MAX_DIMS];
  for (int64_t k = 0; k < d->numel; k++) {
    for (size_t j = 0; j < sn; j++) {
      size_t from_right = sn - 1 - j;
      FUZZ_CHECK(from_right < dn, "copy_ accepted a source with more dims");
      int64_t di_ = idx[dn - 1 - from_right];
      FUZZ_CHECK(src->sizes[j] == 1 || src->sizes[j] == d->sizes[dn - 1 - from_right],
                 "copy_ accepted shapes that do not broadcast");
      sidx[j] = src->sizes[j] == 1 ? 0 : di_;
    }
    const unsigned char *from = sshadow + src->addr[ravel(sidx, src->sizes, sn)];
    if (convert)
      convert_one(values + k * (int64_t)ditem, d->dtype, from, src->dtype);
    else
      memcpy(values + k * (int64_t)ditem, from, sitem);
    next_index(idx, d->sizes, dn);
  }
  /* two elements of dst at one address: the library refuses a stride-0 dim; other internal
   * overlaps (as_strided) ATen lets through, and then either value may land */
  unsigned char *dshadow = s->storages[d->storage].shadow;
  const unsigned char *real = memory_of(&s->storages[d->storage]);
  for (int64_t k = 0; k < d->numel; k++)
    memcpy(dshadow + d->addr[k], values + k * (int64_t)ditem, ditem);
  for (int64_t k = 0; k < d->numel; k++) {
    if (memcmp(real + d->addr[k], dshadow + d->addr[k], ditem) == 0) continue;
    bool written = false; /* the byte range may hold another element written to the same place */
    for (int64_t j = 0; j < d->numel && !written; j++)
      written = d->addr[j] == d->addr[k] &&
                memcmp(real + d->addr[k], values + j * (int64_t)ditem, ditem) == 0;
    FUZZ_CHECK(written,
               "copy_: element %lld holds something no source element gave it (first byte %u, "
               "the model's %u)",
               (long long)k, real[d->addr[k]], dshadow[d->addr[k]]);
    memcpy(dshadow + d->addr[k], real + d->addr[k], ditem);
  }
  free(values);
  check_memory(s, "copy_");
}

static void do_fill(state *s, int ti, bool zero) {
  tensor_model *t = &s->tensors[ti];
  if (t->numel < 0 || t->numel > MAX_ELEMENTS) return;
  size_t item = c10c_dtype_itemsize(t->dtype);
  unsigned char value[16] = {0};
  for (size_t i = 0; i < item && !zero; i++) value[i] = fuzz_u8(&s->in);
  /* sometimes the value comes from the tensor's own memory */
  const void *from = value;
  bool inside = !zero && t->addr && t->numel > 0 && in_bounds(s, t) && fuzz_u8(&s->in) < 30;
  if (inside) {
    from = (const unsigned char *)memory_of(&s->storages[t->storage]) + t->addr[t->numel - 1];
    memcpy(value, from, item);
  }
  c10c_status st = zero ? c10c_tensor_zero_(t->handle) : c10c_tensor_fill_(t->handle, from);
  bool out_of_bounds = t->addr && !in_bounds(s, t);
  if (out_of_bounds || write_refused(s, t))
    FUZZ_CHECK(st == C10C_STATUS_ERROR, "%s of a tensor past its storage or not writable: %s",
               zero ? "zero_" : "fill_", c10c_status_name(st));
  if (st != C10C_STATUS_OK) {
    check_memory(s, "a failed fill_");
    return;
  }
  count_write(s, t);
  storage_model *m = &s->storages[t->storage];
  if (t->addr == NULL) {
    if (m->capacity) memcpy(m->shadow, memory_of(m), (size_t)m->capacity);
    return;
  }
  for (int64_t k = 0; k < t->numel; k++) memcpy(m->shadow + t->addr[k], value, item);
  check_memory(s, zero ? "zero_" : "fill_");
}

/* clone / contiguous: a new storage with the elements in the same order of indices. */
static void do_clone(state *s, int ti) {
  tensor_model *t = &s->tensors[ti];
  if (t->numel < 0 || t->numel > MAX_ELEMENTS) return;
  static const c10c_memory_format formats[] = {
      C10C_MEMORY_FORMAT_CONTIGUOUS, C10C_MEMORY_FORMAT_PRESERVE, C10C_MEMORY_FORMAT_CHANNELS_LAST,
      C10C_MEMORY_FORMAT_CHANNELS_LAST_3D};
  c10c_memory_format format = formats[fuzz_u8(&s->in) % 4];
  bool contiguous_op = fuzz_u8(&s->in) & 1;
  c10c_tensor *out = NULL;
  c10c_status st = contiguous_op ? c10c_tensor_contiguous(&out, t->handle, format)
                                 : c10c_tensor_clone(&out, t->handle, format);
  bool out_of_bounds = t->addr && !in_bounds(s, t);
  if (st != C10C_STATUS_OK) {
    FUZZ_CHECK(out == NULL, "a failed clone returned a tensor");
    return;
  }
  if (contiguous_op && out == t->handle) { /* already contiguous: itself */
    c10c_tensor_release(out);
    return;
  }
  FUZZ_CHECK(!out_of_bounds, "clone of a tensor past its storage succeeded");
  FUZZ_CHECK(c10c_tensor_storage(out) != c10c_tensor_storage(t->handle), "clone shares storage");
  FUZZ_CHECK(c10c_tensor_is_non_overlapping_and_dense(out), "clone is not dense");
  int slot = adopt_storage(s, c10c_tensor_storage(out), t->storage);
  if (slot < 0 || t->addr == NULL) {
    c10c_tensor_release(out);
    return;
  }
  size_t item = c10c_dtype_itemsize(t->dtype);
  int64_t *addr = xmalloc((size_t)(t->numel ? t->numel : 1) * sizeof *addr);
  const int64_t *cst = c10c_tensor_strides(out);
  int64_t idx[MAX_DIMS] = {0};
  for (int64_t k = 0; k < t->numel; k++) {
    int64_t off = c10c_tensor_storage_offset(out);
    for (size_t d = 0; d < t->ndim; d++) off += idx[d] * cst[d];
    addr[k] = off * (int64_t)item;
    FUZZ_CHECK(addr[k] >= 0 && addr[k] + (int64_t)item <= s->storages[slot].capacity,
               "clone's element outside its storage");
    FUZZ_CHECK(memcmp(s->storages[slot].shadow + addr[k],
                      s->storages[t->storage].shadow + t->addr[k], item) == 0,
               "clone: element %lld differs", (long long)k);
    next_index(idx, t->sizes, t->ndim);
  }
  keep(s, out, slot, t->dtype, t->sizes, t->ndim, addr, s->inference, "clone");
}

/* c10c_tensor_data: the first element's address, NULL past the storage. */
static void check_data_pointer(state *s, int ti) {
  tensor_model *t = &s->tensors[ti];
  storage_model *m = &s->storages[t->storage];
  const char *p = c10c_tensor_data(t->handle);
  if (t->addr == NULL) return;
  if (!in_bounds(s, t)) {
    FUZZ_CHECK(p == NULL, "data of a tensor past its storage is not NULL");
    return;
  }
  const char *base = c10c_storage_data(m->handle);
  fuzz_wide first = fuzz_wide_mul(fuzz_wide_of(c10c_tensor_storage_offset(t->handle)),
                                  fuzz_wide_of((int64_t)c10c_dtype_itemsize(t->dtype)));
  if (base == NULL || fuzz_wide_cmp(first, fuzz_wide_of(m->nbytes)) > 0) {
    FUZZ_CHECK(p == NULL, "data points outside its storage");
    return;
  }
  FUZZ_CHECK(p == base + fuzz_wide_low(first), "data is not the first element's address");
  if (t->numel > 0)
    FUZZ_CHECK(fuzz_wide_cmp(first, fuzz_wide_of(t->addr[0])) == 0,
               "the first element is not at data");
  FUZZ_CHECK(c10c_tensor_nbytes(t->handle) == t->numel * (int64_t)c10c_dtype_itemsize(t->dtype),
             "nbytes");
}

/* size(d), stride(d), the contiguity answers, version and flags against the model. */
static void check_metadata(state *s, int ti) {
  tensor_model *t = &s->tensors[ti];
  int64_t n = (int64_t)t->ndim, d = fuzz_dim(s, n), v = -1;
  c10c_status st = c10c_tensor_size(&v, t->handle, d);
  if (n == 0 || d < -n || d >= n) {
    FUZZ_CHECK(st == C10C_STATUS_INDEX_OUT_OF_RANGE, "size(%lld) of %lld dims: %s", (long long)d,
               (long long)n, c10c_status_name(st));
  } else {
    FUZZ_CHECK(st == C10C_STATUS_OK && v == t->sizes[wrap_dim(d, n)], "size(%lld)", (long long)d);
    FUZZ_CHECK(c10c_tensor_stride(&v, t->handle, d) == C10C_STATUS_OK &&
                   v == c10c_tensor_strides(t->handle)[wrap_dim(d, n)],
               "stride(%lld)", (long long)d);
  }
  /* c10's row-major contiguity: the dims of size > 1, from the last, have strides 1, s1, s1*s2 */
  const int64_t *sizes = c10c_tensor_sizes(t->handle), *strides = c10c_tensor_strides(t->handle);
  bool contiguous = true;
  fuzz_wide expected = fuzz_wide_of(1);
  for (int64_t k = n; k-- > 0 && t->numel > 0;) {
    if (sizes[k] == 1) continue;
    contiguous &= fuzz_wide_cmp(fuzz_wide_of(strides[k]), expected) == 0;
    expected = fuzz_wide_mul(expected, fuzz_wide_of(sizes[k]));
  }
  bool answer = false;
  FUZZ_CHECK(c10c_tensor_is_contiguous(&answer, t->handle, C10C_MEMORY_FORMAT_CONTIGUOUS) == 0 &&
                 answer == contiguous,
             "is_contiguous is %d, the model says %d", answer, contiguous);
  FUZZ_CHECK(c10c_tensor_is_contiguous(&answer, t->handle, C10C_MEMORY_FORMAT_PRESERVE) == 0 &&
                 answer == contiguous,
             "is_contiguous(preserve)");
  for (int f = C10C_MEMORY_FORMAT_CHANNELS_LAST; f <= C10C_MEMORY_FORMAT_CHANNELS_LAST_3D; f++) {
    FUZZ_CHECK(c10c_tensor_is_contiguous(&answer, t->handle, (c10c_memory_format)f) == 0,
               "is_contiguous(%d)", f);
    if (answer) FUZZ_CHECK(n == (f == C10C_MEMORY_FORMAT_CHANNELS_LAST ? 4 : 5), "channels last");
    (void)c10c_tensor_is_strides_like(t->handle, (c10c_memory_format)f);
  }
  FUZZ_CHECK(c10c_tensor_is_contiguous(&answer, t->handle, (c10c_memory_format)99) ==
                 C10C_STATUS_INVALID_ARGUMENT,
             "an unknown memory format");
  st = c10c_tensor_version(&v, t->handle);
  if (t->inference)
    FUZZ_CHECK(st == C10C_STATUS_ERROR, "an inference tensor has a version");
  else
    FUZZ_CHECK(st == C10C_STATUS_OK && v == s->storages[t->storage].version, "version %lld",
               (long long)v);
  FUZZ_CHECK(c10c_tensor_is_read_only(t->handle) == s->storages[t->storage].read_only,
             "read-only flag");
  c10c_dispatch_key_set keys = c10c_tensor_keys(t->handle);
  bool has = false;
  FUZZ_CHECK(c10c_dispatch_key_set_has(&has, keys, C10C_DISPATCH_KEY_AUTOGRAD_FUNCTIONALITY) == 0 &&
                 has == !t->inference,
             "autograd keys of an %s tensor", t->inference ? "inference" : "ordinary");
}

/* An element of size bytes at p as a number, in the target's byte order (as the tensor holds it;
 * wider elements: their first 8 bytes). */
static uint64_t element_bits(const unsigned char *p, size_t size) {
  uint8_t u8;
  uint16_t u16;
  uint32_t u32;
  uint64_t u64;
  switch (size) {
    case 1: memcpy(&u8, p, 1); return u8;
    case 2: memcpy(&u16, p, 2); return u16;
    case 4: memcpy(&u32, p, 4); return u32;
    default: memcpy(&u64, p, 8); return u64;
  }
}

/* A contiguous run long enough for the conversions' vector loops (float <-> half with F16C,
 * float -> int32 and -> bfloat16 with SSE2), sometimes misaligned (external memory at an odd
 * address, as numpy or DLPack may hand over): every element must be what the scalar conversion
 * of that element gives. */
static void do_bulk_convert(state *s) {
  static const c10c_dtype pairs[][2] = {
      {C10C_DTYPE_FLOAT32, C10C_DTYPE_INT32},   {C10C_DTYPE_FLOAT32, C10C_DTYPE_BFLOAT16},
      {C10C_DTYPE_FLOAT32, C10C_DTYPE_FLOAT16}, {C10C_DTYPE_FLOAT16, C10C_DTYPE_FLOAT32},
      {C10C_DTYPE_FLOAT64, C10C_DTYPE_FLOAT32}, {C10C_DTYPE_INT64, C10C_DTYPE_FLOAT32}};
  c10c_dtype from, to;
  uint8_t which = fuzz_u8(&s->in);
  if (which < 200) {
    from = pairs[which % 6][0], to = pairs[which % 6][1];
  } else {
    from = dtypes[fuzz_range(&s->in, 0, NDTYPES - 1)];
    to = dtypes[fuzz_range(&s->in, 0, NDTYPES - 1)];
  }
  int64_t n = fuzz_range(&s->in, 1, 40);
  size_t fi = c10c_dtype_itemsize(from), ti = c10c_dtype_itemsize(to);
  size_t misalign = (size_t)fuzz_range(&s->in, 0, 3);
  unsigned char *in = xmalloc((size_t)n * fi + 4), *out = xmalloc((size_t)n * ti + 4);
  for (size_t b = 0; b < (size_t)n * fi; b++) in[misalign + b] = fuzz_u8(&s->in);
  c10c_storage *si = NULL, *so = NULL;
  c10c_tensor *a = NULL, *z = NULL;
  int64_t unit = 1;
  FUZZ_CHECK(
      c10c_storage_new_external(&si, in + misalign, n * (int64_t)fi, cpu, NULL, NULL) == 0 &&
          c10c_storage_new_external(&so, out + misalign, n * (int64_t)ti, cpu, NULL, NULL) == 0 &&
          c10c_tensor_new_from_storage(&a, si, &n, &unit, 1, 0, from) == 0 &&
          c10c_tensor_new_from_storage(&z, so, &n, &unit, 1, 0, to) == 0,
      "bulk conversion tensors");
  c10c_status st = c10c_tensor_copy_(z, a);
  FUZZ_CHECK(st == C10C_STATUS_OK, "copy_ %d -> %d: %s", (int)from, (int)to,
             c10c_last_error_message());
  unsigned char expected[16];
  for (int64_t k = 0; k < n; k++) {
    convert_one(expected, to, in + misalign + k * (int64_t)fi, from);
    /* the elements' bits for the message (the first 8 bytes of a complex one) */
    uint64_t a_bits = element_bits(in + misalign + k * (int64_t)fi, fi);
    uint64_t z_bits = element_bits(out + misalign + k * (int64_t)ti, ti);
    uint64_t e_bits = element_bits(expected, ti);
    FUZZ_CHECK(memcmp(expected, out + misalign + k * (int64_t)ti, ti) == 0,
               "converting %d -> %d: element %lld of %lld (0x%llx) is 0x%llx, the scalar "
               "conversion gives 0x%llx",
               (int)from, (int)to, (long long)k, (long long)n, (unsigned long long)a_bits,
               (unsigned long long)z_bits, (unsigned long long)e_bits);
  }
  c10c_tensor_release(a);
  c10c_tensor_release(z);
  c10c_storage_release(si);
  c10c_storage_release(so);
  free(in);
  free(out);
}

/* ---- storages and tensors made from the input ---- */

static void external_delete(void *ctx) { ((state *)ctx)->external_deletes++; }

static void make_storage(state *s) {
  int slot = free_storage_slot(s, -1);
  storage_model *m = &s->storages[slot];
  int64_t n = fuzz_range(&s->in, 0, MAX_BYTES);
  if (fuzz_u8(&s->in) < 60) {
    m->external = xmalloc((size_t)n);
    for (int64_t b = 0; b < n; b++) m->external[b] = (unsigned char)(b * 7 + 3);
    FUZZ_CHECK(c10c_storage_new_external(&m->handle, n ? m->external : NULL, n, cpu,
                                         external_delete, s) == 0,
               "external storage");
    s->externals_made++;
  } else {
    c10c_device_type type = stub_violations != NULL && fuzz_u8(&s->in) < 80 ? C10C_DEVICE_TYPE_CUDA
                                                                            : C10C_DEVICE_TYPE_CPU;
    FUZZ_CHECK(c10c_storage_new(&m->handle, n, NULL, type, true) == 0, "storage of %lld bytes: %s",
               (long long)n, c10c_last_error_message());
    unsigned char *p = c10c_storage_data(m->handle);
    for (int64_t b = 0; b < n; b++) p[b] = (unsigned char)(b * 13 + 1);
  }
  m->capacity = m->nbytes = n;
  m->shadow = xmalloc((size_t)n);
  if (n) memcpy(m->shadow, memory_of(m), (size_t)n);
  FUZZ_TRACE("  storage %d: %lld bytes%s", slot, (long long)n, m->external ? ", external" : "");
}

/* A tensor over a storage with fuzzed geometry (c10c_tensor_new_from_storage), checked as
 * as_strided is. */
static void make_tensor(state *s) {
  int si = pick_storage(s);
  if (si < 0) return;
  storage_model *m = &s->storages[si];
  c10c_dtype dtype = dtypes[fuzz_range(&s->in, 0, NDTYPES - 1)];
  size_t item = c10c_dtype_itemsize(dtype);
  size_t k = (size_t)fuzz_range(&s->in, 0, 5);
  int64_t sizes[MAX_DIMS], strides[MAX_DIMS];
  bool contiguous = fuzz_u8(&s->in) < 128;
  for (size_t i = 0; i < k; i++)
    sizes[i] = fuzz_u8(&s->in) < 230 ? fuzz_range(&s->in, 0, 6) : fuzz_int64(&s->in);
  int64_t stride = 1;
  for (size_t i = k; i-- > 0;) {
    strides[i] = contiguous              ? stride
                 : fuzz_u8(&s->in) < 230 ? fuzz_range(&s->in, 0, 12)
                                         : fuzz_int64(&s->in);
    if (contiguous && sizes[i] > 0 && __builtin_mul_overflow(stride, sizes[i], &stride)) stride = 1;
  }
  int64_t offset = fuzz_u8(&s->in) < 220 ? fuzz_range(&s->in, 0, 32) : fuzz_int64(&s->in);
  c10c_tensor *t = NULL;
  c10c_status st = c10c_tensor_new_from_storage(&t, m->handle, sizes, strides, k, offset, dtype);
  FUZZ_TRACE("  new_from_storage over storage %d (%zu dims, offset %lld, dtype %d): %s", si, k,
             (long long)offset, (int)dtype, c10c_status_name(st));
  bool valid = offset >= 0, empty = false;
  for (size_t i = 0; i < k; i++) {
    valid &= sizes[i] >= 0 && strides[i] >= 0;
    empty |= sizes[i] == 0;
  }
  bool fits = valid && (empty || fuzz_wide_cmp(model_end(sizes, strides, k, offset, item),
                                               fuzz_wide_of(m->nbytes)) <= 0);
  int64_t numel = product(sizes, k);
  if (!fits || numel < 0) {
    FUZZ_CHECK(st != C10C_STATUS_OK, "a tensor past its storage (or of negative size) was made");
    return;
  }
  FUZZ_CHECK(st == C10C_STATUS_OK, "a tensor inside its storage was refused: %s",
             c10c_last_error_message());
  int64_t *addr = NULL;
  if (numel <= MAX_ELEMENTS) {
    addr = xmalloc((size_t)(numel ? numel : 1) * sizeof *addr);
    int64_t idx[MAX_DIMS] = {0};
    for (int64_t e = 0; e < numel; e++) {
      int64_t off = offset;
      for (size_t d = 0; d < k; d++) off += idx[d] * strides[d];
      addr[e] = off * (int64_t)item;
      next_index(idx, sizes, k);
    }
  }
  keep(s, t, si, dtype, sizes, k, addr, s->inference, "new_from_storage");
}

/* A tensor from the factories (its own storage). */
static void make_new(state *s) {
  c10c_dtype dtype = dtypes[fuzz_range(&s->in, 0, NDTYPES - 1)];
  size_t k = (size_t)fuzz_range(&s->in, 0, 5);
  int64_t sizes[MAX_DIMS];
  for (size_t i = 0; i < k; i++)
    sizes[i] = fuzz_u8(&s->in) < 240 ? fuzz_range(&s->in, 0, 5) : fuzz_int64(&s->in);
  static const c10c_memory_format formats[] = {
      C10C_MEMORY_FORMAT_CONTIGUOUS, C10C_MEMORY_FORMAT_CHANNELS_LAST,
      C10C_MEMORY_FORMAT_CHANNELS_LAST_3D, C10C_MEMORY_FORMAT_PRESERVE};
  c10c_memory_format format = formats[fuzz_u8(&s->in) % 4];
  c10c_tensor *t = NULL;
  unsigned char value[16];
  for (size_t i = 0; i < sizeof value; i++) value[i] = fuzz_u8(&s->in);
  int64_t numel = product(sizes, k);
  if (numel > (INT64_C(1) << 20)) return; /* sizes that allocate gigabytes: nothing to learn */
  bool full = fuzz_u8(&s->in) & 1;
  if (numel < 0 || numel > MAX_ELEMENTS) full = false; /* no giant fills */
  c10c_device device = stub_violations != NULL && fuzz_u8(&s->in) < 80 ? cuda : cpu;
  c10c_status st = full ? c10c_tensor_full(&t, sizes, k, dtype, device, format, value)
                        : c10c_tensor_empty(&t, sizes, k, dtype, device, format);
  if (numel < 0) FUZZ_CHECK(st != C10C_STATUS_OK, "empty of a negative or overflowing size");
  if (st != C10C_STATUS_OK) {
    FUZZ_CHECK(t == NULL, "a failed factory returned a tensor");
    return;
  }
  if (numel > MAX_ELEMENTS) {
    c10c_tensor_release(t);
    return;
  }
  int slot = adopt_storage(s, c10c_tensor_storage(t), -1);
  if (slot < 0) {
    c10c_tensor_release(t);
    return;
  }
  size_t item = c10c_dtype_itemsize(dtype);
  int64_t *addr = xmalloc((size_t)(numel ? numel : 1) * sizeof *addr);
  const int64_t *st_ = c10c_tensor_strides(t);
  int64_t idx[MAX_DIMS] = {0};
  for (int64_t e = 0; e < numel; e++) {
    int64_t off = 0;
    for (size_t d = 0; d < k; d++) off += idx[d] * st_[d];
    addr[e] = off * (int64_t)item;
    if (full)
      FUZZ_CHECK(memcmp(s->storages[slot].shadow + addr[e], value, item) == 0,
                 "full: element %lld is not the value", (long long)e);
    next_index(idx, sizes, k);
  }
  FUZZ_CHECK(c10c_tensor_is_non_overlapping_and_dense(t), "a new tensor is not dense");
  keep(s, t, slot, dtype, sizes, k, addr, s->inference, "empty");
}

/* resize or set_nbytes under live tensors */
static void shrink_or_grow(state *s) {
  int si = pick_storage(s);
  if (si < 0) return;
  storage_model *m = &s->storages[si];
  if (fuzz_u8(&s->in) & 1) { /* set_nbytes: within what the memory holds */
    int64_t n = fuzz_u8(&s->in) < 230 ? fuzz_range(&s->in, 0, m->capacity + 8) : fuzz_int64(&s->in);
    c10c_status st = c10c_storage_set_nbytes(m->handle, n);
    if (n < 0 || n > m->capacity) {
      FUZZ_CHECK(st == C10C_STATUS_INVALID_ARGUMENT, "set_nbytes(%lld) of %lld bytes: %s",
                 (long long)n, (long long)m->capacity, c10c_status_name(st));
    } else {
      FUZZ_CHECK(st == C10C_STATUS_OK, "set_nbytes within the memory refused");
      m->nbytes = n;
    }
    FUZZ_CHECK(c10c_storage_nbytes(m->handle) == m->nbytes, "set_nbytes recorded another size");
    return;
  }
  int64_t n = fuzz_range(&s->in, 0, MAX_BYTES);
  c10c_status st = c10c_storage_resize(m->handle, n);
  if (m->external) {
    FUZZ_CHECK(st == C10C_STATUS_ERROR, "an external storage was resized");
    return;
  }
  FUZZ_CHECK(st == C10C_STATUS_OK, "resize to %lld: %s", (long long)n, c10c_last_error_message());
  /* the recorded bytes' common prefix is kept; the rest is whatever the new block holds */
  int64_t keep_bytes = n < m->nbytes ? n : m->nbytes;
  unsigned char *shadow = xmalloc((size_t)n);
  if (keep_bytes) memcpy(shadow, m->shadow, (size_t)keep_bytes);
  const unsigned char *real = c10c_storage_data(m->handle);
  for (int64_t b = 0; b < n; b++) {
    if (b < keep_bytes) FUZZ_CHECK(real[b] == shadow[b], "resize lost byte %lld", (long long)b);
    shadow[b] = real[b];
  }
  free(m->shadow);
  m->shadow = shadow;
  m->capacity = m->nbytes = n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static state s;
  cuda_setup();
  memset(&s, 0, sizeof s);
  c10c_inference_mode_set(false);
  s.in = (fuzz_input){data, size};
  make_storage(&s);
  for (int step = 0; step < MAX_STEPS && !fuzz_done(&s.in); step++) {
    int a, b;
    /* op bytes below 240 keep the first version's meaning (byte % 12), so that the kept inputs
     * still do what they did; 240 and above pick the operations added since */
    uint8_t byte = fuzz_u8(&s.in), what = byte < 240 ? byte % 12 : 12 + byte % 4;
    FUZZ_TRACE("step %d: %d", step, what);
    switch (what) {
      case 0: make_storage(&s); break;
      case 1:
      case 2: make_tensor(&s); break;
      case 3: make_new(&s); break;
      case 4:
      case 5:
      case 6:
        if ((a = pick_tensor(&s)) >= 0) do_view(&s, a);
        break;
      case 7:
        if ((a = pick_tensor(&s)) >= 0 && (b = pick_tensor(&s)) >= 0) do_copy(&s, a, b);
        break;
      case 8:
        if ((a = pick_tensor(&s)) >= 0) do_fill(&s, a, fuzz_u8(&s.in) < 60);
        break;
      case 9:
        if ((a = pick_tensor(&s)) >= 0) do_clone(&s, a);
        break;
      case 10: shrink_or_grow(&s); break;
      case 12:
        if ((a = pick_tensor(&s)) >= 0) check_metadata(&s, a);
        break;
      case 13: do_bulk_convert(&s); break;
      case 14:
        if (fuzz_u8(&s.in) & 1) {
          s.inference = !s.inference;
          c10c_inference_mode_set(s.inference);
        } else if ((a = pick_storage(&s)) >= 0) {
          FUZZ_CHECK(c10c_storage_set_read_only(s.storages[a].handle) == 0, "set_read_only");
          s.storages[a].read_only = true;
        }
        break;
      default:
        if ((a = pick_tensor(&s)) >= 0) {
          if (fuzz_u8(&s.in) < 40)
            drop_tensor(&s, a);
          else
            check_data_pointer(&s, a);
        }
    }
  }
  for (int i = 0; i < MAX_TENSORS; i++) drop_tensor(&s, i);
  for (int i = 0; i < MAX_STORAGES; i++)
    if (s.storages[i].handle)
      FUZZ_TRACE("storage %d: %u references at the end", i,
                 c10c_storage_use_count(s.storages[i].handle));
  unsigned char *externals[MAX_STORAGES];
  for (int i = 0; i < MAX_STORAGES; i++) {
    externals[i] = s.storages[i].external;
    drop_storage(&s, i);
  }
  FUZZ_CHECK(s.external_deletes == s.externals_made, "%d external storages, %d deleter calls",
             s.externals_made, s.external_deletes);
  for (int i = 0; i < MAX_STORAGES; i++) free(externals[i]);
  return 0;
}
