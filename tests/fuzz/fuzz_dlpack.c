/* Fuzzes DLPack import (c10c_tensor_from_dlpack_versioned and the legacy c10c_tensor_from_dlpack)
 * with every field of the producer's struct taken from the input, over a heap buffer of known
 * size, and checks what dlpack.h promises against a reference model computed from the fields:
 *
 * - the model says which documented errors the fields call for; a failure must be one of them
 *   (or running out of memory), an input without any must be imported; a failure leaves the
 *   struct to the caller: the deleter has not run, and runs exactly once when the harness calls it;
 * - an import is exactly the elements described (sizes, strides with the stride of a dim that
 *   never moves normalised, first element, storage of the bytes they reach, device, dtype,
 *   read-only flag), and the producer's deleter runs exactly once, when the last reference to the
 *   memory goes (tensors, views, exports of them, imports of those exports, storage references),
 *   released in an order the input picks;
 * - every element an import or a view of it addresses lies in the described bytes, and where
 *   those lie in the buffer they are all read (clone, copy into a fresh tensor) and written
 *   (fill_, zero_, copy_; refused for READ_ONLY memory, which must then be unchanged), so that
 *   ASan sees any access outside; bytes of the buffer that are no element are never written;
 * - exports (versioned and legacy) of the import and of its views describe the same elements
 *   (shape, strides normalised as dlpack.h says, data pointer, dtype, device, flags) and import
 *   again as the same tensor;
 * - after the storage is shrunk (set_nbytes), every data access of a tensor that reaches past it
 *   is refused and none reads.
 */
#include <stdint.h>

#include "c10c/c10c.h"
#include "c10c/dlpack.h"
#include "fuzz.h"

enum {
  MAX_NDIM = 1100,    /* real shape arrays up to this many dims */
  MAX_BUFFER = 4096,  /* the producer's heap buffer */
  MAX_CHECKED = 4096, /* element-wise checks only for tensors this small */
  MAX_HOLDERS = 32,   /* references to the memory alive at once */
  MAX_STEPS = 12,     /* views, exports, shrinks after the import */
  STATUS_BITS = 32,   /* statuses are 0 .. -31 */
  ALLOW_OOM = 1 << (-C10C_STATUS_OUT_OF_MEMORY)
};

static unsigned bit(c10c_status st) { return 1u << (unsigned)(-st); }

/* ---- the producer ---- */

typedef struct producer {
  DLManagedTensorVersioned versioned; /* the deleter gets one of these two addresses */
  DLManagedTensor legacy;
  bool is_versioned;
  int deletes;
} producer;

static void delete_versioned(DLManagedTensorVersioned *self) {
  producer *p = self->manager_ctx;
  FUZZ_CHECK(p != NULL && self == &p->versioned, "the versioned deleter got another struct");
  p->deletes++;
}

static void delete_legacy(DLManagedTensor *self) {
  producer *p = self->manager_ctx;
  FUZZ_CHECK(p != NULL && self == &p->legacy, "the legacy deleter got another struct");
  p->deletes++;
}

static void call_deleter(producer *p) {
  if (p->is_versioned)
    p->versioned.deleter(&p->versioned);
  else
    p->legacy.deleter(&p->legacy);
}

/* ---- the reference model of an import ---- */

typedef struct dtype_entry {
  uint8_t code, bits;
  c10c_dtype dtype;
} dtype_entry;

/* dlpack.h: every (code, bits) with a c10 equivalent, lanes 1. */
static const dtype_entry dtypes[] = {
    {kDLUInt, 8, C10C_DTYPE_UINT8},
    {kDLUInt, 16, C10C_DTYPE_UINT16},
    {kDLUInt, 32, C10C_DTYPE_UINT32},
    {kDLUInt, 64, C10C_DTYPE_UINT64},
    {kDLInt, 8, C10C_DTYPE_INT8},
    {kDLInt, 16, C10C_DTYPE_INT16},
    {kDLInt, 32, C10C_DTYPE_INT32},
    {kDLInt, 64, C10C_DTYPE_INT64},
    {kDLFloat, 16, C10C_DTYPE_FLOAT16},
    {kDLFloat, 32, C10C_DTYPE_FLOAT32},
    {kDLFloat, 64, C10C_DTYPE_FLOAT64},
    {kDLBfloat, 16, C10C_DTYPE_BFLOAT16},
    {kDLComplex, 32, C10C_DTYPE_COMPLEX32},
    {kDLComplex, 64, C10C_DTYPE_COMPLEX64},
    {kDLComplex, 128, C10C_DTYPE_COMPLEX128},
    {kDLBool, 8, C10C_DTYPE_BOOL},
    {kDLFloat8_e4m3fn, 8, C10C_DTYPE_FLOAT8_E4M3FN},
    {kDLFloat8_e4m3fnuz, 8, C10C_DTYPE_FLOAT8_E4M3FNUZ},
    {kDLFloat8_e5m2, 8, C10C_DTYPE_FLOAT8_E5M2},
    {kDLFloat8_e5m2fnuz, 8, C10C_DTYPE_FLOAT8_E5M2FNUZ},
    {kDLFloat8_e8m0fnu, 8, C10C_DTYPE_FLOAT8_E8M0FNU},
};
enum { DTYPES = sizeof dtypes / sizeof dtypes[0] };

typedef struct model {
  unsigned errors;    /* bit(status) of every documented error the fields call for */
  bool host;          /* the memory is host memory (CPU, CUDA host, ROCm host) */
  c10c_device device; /* the device the import must be on */
  c10c_dtype dtype;   /* the dtype it must have */
  size_t itemsize;    /* its item size */
  size_t ndim;        /* when there are no errors: */
  int64_t numel;      /* the elements' count */
  int64_t *strides;   /* ndim effective strides (MAX_NDIM entries) */
  uintptr_t first;    /* data + byte_offset when there are elements, else 0 */
  int64_t nbytes;     /* the bytes the elements reach from first (0 without elements) */
  bool read_only;
} model;

static bool mul_overflows(int64_t a, int64_t b, int64_t *out) {
  return __builtin_mul_overflow(a, b, out);
}

/* Fills m from the DLTensor (read exactly as the library may read it: shape and strides only
 * when ndim > 0 and they are not NULL). */
static void build_model(model *m, const DLTensor *dl, bool versioned, DLPackVersion version,
                        uint64_t flags) {
  m->errors = 0;
  m->numel = 0;
  m->first = 0;
  m->nbytes = 0;
  m->read_only = versioned && (flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
  if (versioned && version.major != 1) m->errors |= bit(C10C_STATUS_UNSUPPORTED);
  m->dtype = C10C_DTYPE_UNDEFINED;
  m->itemsize = 1;
  for (size_t i = 0; i < DTYPES; i++)
    if (dl->dtype.lanes == 1 && dl->dtype.code == dtypes[i].code &&
        dl->dtype.bits == dtypes[i].bits) {
      m->dtype = dtypes[i].dtype;
      m->itemsize = dtypes[i].bits / 8u;
    }
  /* float4_e2m1fn_x2: only (kDLFloat4_e2m1fn, 4, 2), one byte an element (torch 2.13) */
  if (dl->dtype.code == kDLFloat4_e2m1fn && dl->dtype.bits == 4 && dl->dtype.lanes == 2) {
    m->dtype = C10C_DTYPE_FLOAT4_E2M1FN_X2;
    m->itemsize = 1;
  }
  if (m->dtype == C10C_DTYPE_UNDEFINED) m->errors |= bit(C10C_STATUS_UNSUPPORTED);
  /* devices dlpack.h accepts (OpenCL has no c10 tensors: refused as unknown ones are) */
  m->host = false;
  c10c_device_type type = C10C_DEVICE_TYPE_CPU;
  switch ((int)dl->device.device_type) {
    case kDLCPU:
    case kDLCUDAHost:
    case kDLROCMHost: m->host = true; break;
    case kDLCUDA: type = C10C_DEVICE_TYPE_CUDA; break;
    case kDLROCM: type = C10C_DEVICE_TYPE_HIP; break;
    case kDLOneAPI: type = C10C_DEVICE_TYPE_XPU; break;
    case kDLMAIA: type = C10C_DEVICE_TYPE_MAIA; break;
    case kDLExtDev: type = C10C_DEVICE_TYPE_PRIVATEUSE1; break;
    default: m->errors |= bit(C10C_STATUS_UNSUPPORTED); type = C10C_DEVICE_TYPE_COUNT;
  }
  if (m->host) {
    m->device = (c10c_device){C10C_DEVICE_TYPE_CPU, -1};
  } else if (type != C10C_DEVICE_TYPE_COUNT) {
    if (dl->device.device_id < 0 || dl->device.device_id > 127) m->errors |= bit(C10C_STATUS_ERROR);
    m->device = (c10c_device){type, (int8_t)dl->device.device_id};
  }
  if (dl->ndim < 0) {
    m->errors |= bit(C10C_STATUS_ERROR);
    return;
  }
  m->ndim = (size_t)dl->ndim;
  if (m->ndim > 0 && dl->shape == NULL) {
    m->errors |= bit(C10C_STATUS_NULL_POINTER);
    return;
  }
  const int64_t *shape = dl->shape;
  bool negative_size = false, empty = false, numel_overflow = false;
  uint64_t product = 1;
  for (size_t i = 0; i < m->ndim; i++) {
    negative_size |= shape[i] < 0;
    empty |= shape[i] == 0;
    numel_overflow |= __builtin_mul_overflow(product, (uint64_t)shape[i], &product);
  }
  if (negative_size) {
    m->errors |= bit(C10C_STATUS_ERROR);
    /* which of the other checks also runs depends on their order: any of theirs may come */
    m->errors |= bit(C10C_STATUS_UNSUPPORTED) | bit(C10C_STATUS_OVERFLOW);
    return;
  }
  if (numel_overflow || product > (uint64_t)INT64_MAX) m->errors |= bit(C10C_STATUS_OVERFLOW);
  m->numel = empty || product > (uint64_t)INT64_MAX ? 0 : (int64_t)product;
  /* effective strides: given (a negative one on a dim that never moves, of size 0 or 1 or of a
   * tensor without elements, becomes what a contiguous layout gives it, or 1 past int64), or
   * contiguous (c10's, max(size, 1) per dim, refused past int64) */
  if (dl->strides == NULL) {
    int64_t s = 1;
    for (size_t i = m->ndim; i-- > 0;) {
      m->strides[i] = s;
      if (i > 0 && mul_overflows(s, shape[i] > 1 ? shape[i] : 1, &s)) {
        m->errors |= bit(C10C_STATUS_OVERFLOW);
        break;
      }
    }
  } else {
    for (size_t i = m->ndim; i-- > 0;) {
      int64_t st = dl->strides[i];
      if (st < 0 && (shape[i] < 2 || empty)) {
        int64_t next = 1;
        if (i + 1 < m->ndim &&
            mul_overflows(m->strides[i + 1], shape[i + 1] > 1 ? shape[i + 1] : 1, &next))
          next = 1;
        st = next;
      }
      if (st < 0) m->errors |= bit(C10C_STATUS_UNSUPPORTED);
      m->strides[i] = st;
    }
  }
  if (m->errors != 0 || m->numel == 0) return;
  /* the bytes the elements reach */
  uint64_t last = 0, term;
  bool overflow = false;
  for (size_t i = 0; i < m->ndim; i++) {
    overflow |= __builtin_mul_overflow((uint64_t)shape[i] - 1, (uint64_t)m->strides[i], &term);
    overflow |= __builtin_add_overflow(last, term, &last);
  }
  overflow |= __builtin_add_overflow(last, 1, &last); /* the last element's bytes: (last + 1) */
  overflow |= __builtin_mul_overflow(last, (uint64_t)m->itemsize, &last);
  if (overflow || last > (uint64_t)PTRDIFF_MAX) { /* INT64_MAX, or a 32-bit address space */
    m->errors |= bit(C10C_STATUS_OVERFLOW);
    return;
  }
  m->nbytes = (int64_t)last;
  if (dl->data == NULL) {
    m->errors |= bit(C10C_STATUS_NULL_POINTER);
    return;
  }
  uintptr_t first;
  if (__builtin_add_overflow((uintptr_t)dl->data, dl->byte_offset, &first) ||
      first > UINTPTR_MAX - (uint64_t)m->nbytes) {
    m->errors |= bit(C10C_STATUS_OVERFLOW);
    return;
  }
  m->first = first;
}

/* The importable entry of a dtype, or NULL. */
static const dtype_entry *entry_of(c10c_dtype dtype) {
  for (size_t i = 0; i < DTYPES; i++)
    if (dtypes[i].dtype == dtype) return &dtypes[i];
  return NULL;
}

/* What dlpack.h says an export of dtype carries: false for the dtypes it refuses (QInt, Bits).
 * back: the dtype an import of that export makes (UNDEFINED: refused). */
static bool exported_dtype(DLDataType *out, c10c_dtype *back, c10c_dtype dtype) {
  const dtype_entry *e = entry_of(dtype);
  *back = dtype;
  if (e != NULL) {
    *out = (DLDataType){e->code, e->bits, 1};
    return true;
  }
  if (dtype >= C10C_DTYPE_UINT1 && dtype <= C10C_DTYPE_UINT7) {
    *out = (DLDataType){kDLUInt, 8, 1};
    *back = C10C_DTYPE_UINT8;
    return true;
  }
  if (dtype >= C10C_DTYPE_INT1 && dtype <= C10C_DTYPE_INT7) {
    *out = (DLDataType){kDLInt, 8, 1};
    *back = C10C_DTYPE_INT8;
    return true;
  }
  if (dtype == C10C_DTYPE_FLOAT4_E2M1FN_X2) { /* torch 2.13's triple, imported back as itself */
    *out = (DLDataType){kDLFloat4_e2m1fn, 4, 2};
    *back = C10C_DTYPE_FLOAT4_E2M1FN_X2;
    return true;
  }
  return false; /* QInt*, QUInt*, Bits* */
}

/* ---- element-wise checks ---- */

/* Calls visit(offset in bytes from the first element, ctx) for every element of a geometry with
 * numel elements (numel > 0 and small). */
static void for_each_element(const int64_t *sizes, const int64_t *strides, size_t ndim,
                             int64_t numel, size_t itemsize,
                             void (*visit)(int64_t offset, void *ctx), void *ctx) {
  static int64_t index[MAX_NDIM + 8];
  for (size_t i = 0; i < ndim; i++) index[i] = 0;
  for (int64_t n = 0; n < numel; n++) {
    int64_t offset = 0;
    for (size_t i = 0; i < ndim; i++) offset += index[i] * strides[i];
    visit(offset * (int64_t)itemsize, ctx);
    for (size_t i = ndim; i-- > 0;) {
      if (++index[i] < sizes[i]) break;
      index[i] = 0;
    }
  }
}

/* What check_inside needs of one tensor. */
typedef struct span {
  uintptr_t lo, hi; /* the described bytes */
  uintptr_t first;  /* the tensor's first element */
  size_t itemsize;
  unsigned char *covered;      /* per buffer byte: covered by an element (counts, saturating) */
  const unsigned char *buffer; /* where covered starts */
} span;

static void check_inside(int64_t offset, void *ctx) {
  span *s = ctx;
  uintptr_t p = s->first + (uintptr_t)offset;
  FUZZ_CHECK(p >= s->lo && p + s->itemsize <= s->hi,
             "an element at %#lx is outside the described bytes [%#lx, %#lx)", (unsigned long)p,
             (unsigned long)s->lo, (unsigned long)s->hi);
  if (s->covered != NULL)
    for (size_t k = 0; k < s->itemsize; k++) {
      unsigned char *c = &s->covered[p - (uintptr_t)s->buffer + k];
      if (*c < 255) (*c)++;
    }
}

/* Checks that every element of t lies in [lo, hi) and marks the buffer bytes they cover. (Two
 * elements of one tensor share all their bytes or none: their offsets are multiples of the item
 * size.) */
static void check_elements_inside(const c10c_tensor *t, uintptr_t first, uintptr_t lo, uintptr_t hi,
                                  const unsigned char *buffer, unsigned char *covered) {
  span s = {lo, hi, first, c10c_tensor_itemsize(t), covered, buffer};
  for_each_element(c10c_tensor_sizes(t), c10c_tensor_strides(t), c10c_tensor_dim(t),
                   c10c_tensor_numel(t), s.itemsize, check_inside, &s);
}

/* The visitor of a comparison: the elements of t (first) and of another tensor (other, with its
 * strides) are walked together; offsets of t are given, the other's are recomputed. */
typedef struct pair {
  const unsigned char *a;
  const int64_t *a_strides;
  const unsigned char *b;
  const int64_t *b_strides;
  const int64_t *sizes;
  size_t ndim;
  size_t itemsize;
  const unsigned char *value; /* compare a with value instead of b when set */
} pair;

static void compare_elements(const pair *p, int64_t numel) {
  static int64_t index[MAX_NDIM + 8];
  for (size_t i = 0; i < p->ndim; i++) index[i] = 0;
  for (int64_t n = 0; n < numel; n++) {
    int64_t oa = 0, ob = 0;
    for (size_t i = 0; i < p->ndim; i++) {
      oa += index[i] * p->a_strides[i];
      if (p->b != NULL) ob += index[i] * p->b_strides[i];
    }
    const unsigned char *x = p->a + oa * (int64_t)p->itemsize;
    const unsigned char *y = p->value != NULL ? p->value : p->b + ob * (int64_t)p->itemsize;
    FUZZ_CHECK(memcmp(x, y, p->itemsize) == 0, "element %lld differs", (long long)n);
    for (size_t i = p->ndim; i-- > 0;) {
      if (++index[i] < p->sizes[i]) break;
      index[i] = 0;
    }
  }
}

/* ---- the run of one input ---- */

typedef enum { TENSOR, EXPORT_VERSIONED, EXPORT_LEGACY, STORAGE } holder_kind;

typedef struct holder {
  holder_kind kind;
  void *p;
} holder;

typedef struct run {
  fuzz_input in;
  producer prod;
  model m;
  unsigned char *buffer;
  size_t buffer_size;
  c10c_storage *storage; /* the import's storage (borrowed from the holders) */
  bool in_buffer;        /* the described bytes lie in the buffer, on the host */
  holder holders[MAX_HOLDERS];
  size_t nholders;
  c10c_weak_storage *weak;
  unsigned char *snapshot, *covered;
} run;

static void add_holder(run *r, holder_kind kind, void *p) {
  FUZZ_CHECK(r->nholders < MAX_HOLDERS, "too many holders");
  r->holders[r->nholders++] = (holder){kind, p};
}

static void release_holder(holder h) {
  switch (h.kind) {
    case TENSOR: c10c_tensor_release(h.p); break;
    case EXPORT_VERSIONED: {
      DLManagedTensorVersioned *e = h.p;
      e->deleter(e);
      break;
    }
    case EXPORT_LEGACY: {
      DLManagedTensor *e = h.p;
      e->deleter(e);
      break;
    }
    case STORAGE: c10c_storage_release(h.p); break;
  }
}

static int64_t extent_of(const c10c_tensor *t) {
  if (c10c_tensor_numel(t) == 0) return 0;
  const int64_t *sizes = c10c_tensor_sizes(t), *strides = c10c_tensor_strides(t);
  int64_t last = c10c_tensor_storage_offset(t), term;
  bool overflow = false;
  for (size_t i = 0; i < c10c_tensor_dim(t); i++) {
    overflow |= __builtin_mul_overflow(sizes[i] - 1, strides[i], &term);
    overflow |= __builtin_add_overflow(last, term, &last);
  }
  overflow |= __builtin_add_overflow(last, 1, &last);
  overflow |= __builtin_mul_overflow(last, (int64_t)c10c_tensor_itemsize(t), &last);
  FUZZ_CHECK(!overflow, "a tensor's extent exceeds int64");
  return last;
}

/* The read checks of a tensor whose elements lie in the buffer: clone and a copy into a fresh
 * tensor hold the same elements. */
static void check_reads(run *r, c10c_tensor *t, const unsigned char *first) {
  int64_t numel = c10c_tensor_numel(t);
  size_t ndim = c10c_tensor_dim(t), itemsize = c10c_tensor_itemsize(t);
  c10c_tensor *copy = NULL;
  c10c_status st = c10c_tensor_clone(&copy, t, C10C_MEMORY_FORMAT_PRESERVE);
  FUZZ_CHECK(st == C10C_STATUS_OK || st == C10C_STATUS_OUT_OF_MEMORY, "clone: %s: %s",
             c10c_status_name(st), c10c_last_error_message());
  if (st == C10C_STATUS_OK && numel > 0) {
    pair p = {first,
              c10c_tensor_strides(t),
              c10c_tensor_data(copy),
              c10c_tensor_strides(copy),
              c10c_tensor_sizes(t),
              ndim,
              itemsize,
              NULL};
    compare_elements(&p, numel);
  }
  c10c_tensor_release(copy);
  copy = NULL;
  st = c10c_tensor_empty(&copy, c10c_tensor_sizes(t), ndim, c10c_tensor_dtype(t),
                         (c10c_device){C10C_DEVICE_TYPE_CPU, -1}, C10C_MEMORY_FORMAT_CONTIGUOUS);
  FUZZ_CHECK(st == C10C_STATUS_OK || st == C10C_STATUS_OUT_OF_MEMORY, "empty: %s",
             c10c_last_error_message());
  if (st == C10C_STATUS_OK) {
    st = c10c_tensor_copy_(copy, t);
    FUZZ_CHECK(st == C10C_STATUS_OK, "copy_ from an import: %s", c10c_last_error_message());
    if (numel > 0) {
      pair p = {first,
                c10c_tensor_strides(t),
                c10c_tensor_data(copy),
                c10c_tensor_strides(copy),
                c10c_tensor_sizes(t),
                ndim,
                itemsize,
                NULL};
      compare_elements(&p, numel);
    }
    /* and back: copy_ into the import (refused with a stride-0 dim, or read-only memory) */
    if (fuzz_bool(&r->in)) {
      memcpy(r->snapshot, r->buffer, r->buffer_size);
      st = c10c_tensor_copy_(t, copy);
      if (c10c_tensor_is_read_only(t)) {
        FUZZ_CHECK(st == C10C_STATUS_ERROR, "copy_ into read-only memory: %s",
                   c10c_status_name(st));
        FUZZ_CHECK(memcmp(r->snapshot, r->buffer, r->buffer_size) == 0,
                   "a refused copy_ wrote read-only memory");
      } else {
        FUZZ_CHECK(st == C10C_STATUS_OK || st == C10C_STATUS_ERROR, "copy_ into an import: %s",
                   c10c_last_error_message());
        for (size_t k = 0; k < r->buffer_size; k++)
          FUZZ_CHECK(r->covered[k] != 0 || r->buffer[k] == r->snapshot[k],
                     "copy_ wrote byte %zu, which is no element", k);
      }
    }
  }
  c10c_tensor_release(copy);
}

/* fill_ and zero_: they write every element and nothing else, or are refused for read-only
 * memory (which stays as it was). */
static void check_writes(run *r, c10c_tensor *t, const unsigned char *first) {
  unsigned char value[16] = {0};
  size_t itemsize = c10c_tensor_itemsize(t);
  for (size_t k = 0; k < itemsize; k++) value[k] = fuzz_u8(&r->in);
  if (c10c_tensor_dtype(t) == C10C_DTYPE_BOOL) value[0] &= 1;
  bool zero = fuzz_bool(&r->in);
  memcpy(r->snapshot, r->buffer, r->buffer_size);
  c10c_status st = zero ? c10c_tensor_zero_(t) : c10c_tensor_fill_(t, value);
  if (c10c_tensor_is_read_only(t)) {
    FUZZ_CHECK(st == C10C_STATUS_ERROR, "a write to read-only memory: %s", c10c_status_name(st));
    FUZZ_CHECK(memcmp(r->snapshot, r->buffer, r->buffer_size) == 0,
               "a refused write changed read-only memory");
    return;
  }
  FUZZ_CHECK(st == C10C_STATUS_OK, "%s: %s", zero ? "zero_" : "fill_", c10c_last_error_message());
  for (size_t k = 0; k < r->buffer_size; k++)
    FUZZ_CHECK(r->covered[k] != 0 || r->buffer[k] == r->snapshot[k],
               "%s wrote byte %zu, which is no element", zero ? "zero_" : "fill_", k);
  if (zero) memset(value, 0, sizeof value);
  pair p = {
      first, c10c_tensor_strides(t), NULL, NULL, c10c_tensor_sizes(t), c10c_tensor_dim(t), itemsize,
      value};
  compare_elements(&p, c10c_tensor_numel(t));
}

/* Everything checked of a tensor over the imported memory (the import itself or a view). */
static void check_tensor(run *r, c10c_tensor *t) {
  FUZZ_CHECK(c10c_tensor_storage(t) == r->storage, "a view has another storage");
  FUZZ_CHECK(r->prod.deletes == 0, "the deleter ran while a tensor holds the memory");
  int64_t numel = c10c_tensor_numel(t), extent = extent_of(t);
  /* every element it addresses is a described byte (views of a storage shrunk meanwhile too) */
  FUZZ_CHECK(extent <= r->m.nbytes, "a tensor reaches %lld bytes of %lld described",
             (long long)extent, (long long)r->m.nbytes);
  bool fits = extent <= c10c_storage_nbytes(r->storage);
  void *data = c10c_tensor_data(t);
  if (numel > 0 && !fits) {
    FUZZ_CHECK(data == NULL && c10c_last_error_status() == C10C_STATUS_ERROR,
               "data of a tensor past its shrunk storage");
    /* (on other devices than the host, a missing allocator or kernel may say no first; clone
     * allocates before it reads: an expanded view may not fit in memory, or in int64) */
    c10c_tensor *copy = NULL;
    c10c_status st = c10c_tensor_clone(&copy, t, C10C_MEMORY_FORMAT_PRESERVE);
    bool refused =
        st == C10C_STATUS_ERROR || st == C10C_STATUS_OUT_OF_MEMORY || st == C10C_STATUS_OVERFLOW;
    FUZZ_CHECK(copy == NULL && (r->m.host ? refused : st != C10C_STATUS_OK),
               "clone past a shrunk storage: %s", c10c_status_name(st));
    st = c10c_tensor_zero_(t);
    FUZZ_CHECK(r->m.host ? st == C10C_STATUS_ERROR : st != C10C_STATUS_OK,
               "zero_ past a shrunk storage: %s", c10c_status_name(st));
    DLManagedTensorVersioned *e = NULL;
    FUZZ_CHECK(c10c_tensor_to_dlpack_versioned(&e, t) == C10C_STATUS_ERROR && e == NULL,
               "export past a shrunk storage");
    return;
  }
  if (numel == 0) return;
  uintptr_t first = (uintptr_t)data;
  FUZZ_CHECK(first == r->m.first + (uintptr_t)(c10c_tensor_storage_offset(t) *
                                               (int64_t)c10c_tensor_itemsize(t)),
             "data is not the storage's data + offset");
  /* (copies of the other dtypes may not be implemented: their elements are still checked) */
  bool copyable = entry_of(c10c_tensor_dtype(t)) != NULL;
  if (!r->in_buffer || numel > MAX_CHECKED) return;
  memset(r->covered, 0, r->buffer_size);
  check_elements_inside(t, first, r->m.first, r->m.first + (uintptr_t)r->m.nbytes, r->buffer,
                        r->covered);
  if (!copyable) return;
  check_reads(r, t, data);
  if (fuzz_bool(&r->in)) check_writes(r, t, data);
}

/* The device an export must name for the import's device. */
static DLDevice expected_dl_device(const model *m, const DLTensor *src) {
  if (m->host) return (DLDevice){kDLCPU, 0};
  return (DLDevice){src->device.device_type, src->device.device_id};
}

/* An export of t describes t's elements; an import of it is t again. */
static void check_export(run *r, c10c_tensor *t, const DLTensor *src) {
  bool versioned = fuzz_bool(&r->in);
  DLManagedTensorVersioned *ev = NULL;
  DLManagedTensor *el = NULL;
  c10c_status st =
      versioned ? c10c_tensor_to_dlpack_versioned(&ev, t) : c10c_tensor_to_dlpack(&el, t);
  if (!versioned && c10c_tensor_is_read_only(t)) {
    FUZZ_CHECK(st == C10C_STATUS_UNSUPPORTED && el == NULL, "a legacy export of read-only memory");
    return;
  }
  DLDataType want_dtype;
  c10c_dtype back_dtype;
  if (!exported_dtype(&want_dtype, &back_dtype, c10c_tensor_dtype(t))) {
    bool past = extent_of(t) > c10c_storage_nbytes(c10c_tensor_storage(t)); /* checked first */
    FUZZ_CHECK((st == C10C_STATUS_UNSUPPORTED || (past && st == C10C_STATUS_ERROR)) && ev == NULL &&
                   el == NULL,
               "an export of %s: %s", c10c_dtype_name(c10c_tensor_dtype(t)), c10c_status_name(st));
    return;
  }
  if (st == C10C_STATUS_ERROR) { /* past a shrunk storage */
    FUZZ_CHECK(extent_of(t) > c10c_storage_nbytes(c10c_tensor_storage(t)), "export refused: %s",
               c10c_last_error_message());
    return;
  }
  FUZZ_CHECK(st == C10C_STATUS_OK || st == C10C_STATUS_OUT_OF_MEMORY, "export: %s",
             c10c_last_error_message());
  if (st != C10C_STATUS_OK) return;
  const DLTensor *dl = versioned ? &ev->dl_tensor : &el->dl_tensor;
  if (versioned) {
    FUZZ_CHECK(ev->version.major == 1 && ev->version.minor == C10C_DLPACK_MINOR, "export version");
    FUZZ_CHECK(ev->flags == (c10c_tensor_is_read_only(t) ? DLPACK_FLAG_BITMASK_READ_ONLY : 0u),
               "export flags %llu", (unsigned long long)ev->flags);
  }
  size_t ndim = c10c_tensor_dim(t);
  const int64_t *sizes = c10c_tensor_sizes(t), *strides = c10c_tensor_strides(t);
  FUZZ_CHECK(dl->ndim == (int32_t)ndim, "export ndim");
  FUZZ_CHECK(ndim > 0 ? dl->shape != NULL && dl->strides != NULL
                      : dl->shape == NULL && dl->strides == NULL,
             "export shape/strides pointers");
  for (size_t i = 0; i < ndim; i++) {
    FUZZ_CHECK(dl->shape[i] == sizes[i], "export shape[%zu]", i);
    FUZZ_CHECK(dl->strides[i] == (sizes[i] < 2 ? 1 : strides[i]), "export strides[%zu]", i);
  }
  FUZZ_CHECK(dl->byte_offset == 0, "export byte_offset");
  FUZZ_CHECK(dl->data == (c10c_tensor_numel(t) > 0 ? c10c_tensor_data(t) : NULL), "export data");
  FUZZ_CHECK(dl->dtype.code == want_dtype.code && dl->dtype.bits == want_dtype.bits &&
                 dl->dtype.lanes == want_dtype.lanes,
             "export dtype (%u, %u, %u) of %s", (unsigned)dl->dtype.code, (unsigned)dl->dtype.bits,
             (unsigned)dl->dtype.lanes, c10c_dtype_name(c10c_tensor_dtype(t)));
  DLDevice want = expected_dl_device(&r->m, src), named;
  FUZZ_CHECK(dl->device.device_type == want.device_type && dl->device.device_id == want.device_id,
             "export device (%d, %d), imported from (%d, %d)", (int)dl->device.device_type,
             (int)dl->device.device_id, (int)src->device.device_type, (int)src->device.device_id);
  FUZZ_CHECK(c10c_device_to_dlpack(&named, c10c_tensor_device(t)) == C10C_STATUS_OK &&
                 named.device_type == want.device_type && named.device_id == want.device_id,
             "c10c_device_to_dlpack disagrees with the export");
  /* import it again, or keep it for the release order */
  if (fuzz_bool(&r->in)) {
    add_holder(r, versioned ? EXPORT_VERSIONED : EXPORT_LEGACY,
               versioned ? (void *)ev : (void *)el);
    return;
  }
  c10c_tensor *back = NULL;
  st =
      versioned ? c10c_tensor_from_dlpack_versioned(&back, ev) : c10c_tensor_from_dlpack(&back, el);
  FUZZ_CHECK(back_dtype == C10C_DTYPE_UNDEFINED
                 ? st == C10C_STATUS_UNSUPPORTED
                 : st == C10C_STATUS_OK || st == C10C_STATUS_OUT_OF_MEMORY,
             "import of an export: %s", c10c_last_error_message());
  if (st != C10C_STATUS_OK) {
    add_holder(r, versioned ? EXPORT_VERSIONED : EXPORT_LEGACY,
               versioned ? (void *)ev : (void *)el);
    return;
  }
  FUZZ_CHECK(c10c_tensor_dim(back) == ndim && c10c_tensor_numel(back) == c10c_tensor_numel(t) &&
                 c10c_tensor_dtype(back) == back_dtype &&
                 c10c_tensor_is_read_only(back) == c10c_tensor_is_read_only(t),
             "the import of an export is another tensor");
  c10c_device d0 = c10c_tensor_device(t), d1 = c10c_tensor_device(back);
  FUZZ_CHECK(d0.type == d1.type && d0.index == d1.index, "the import of an export moved");
  for (size_t i = 0; i < ndim; i++)
    FUZZ_CHECK(c10c_tensor_sizes(back)[i] == sizes[i] &&
                   (sizes[i] < 2 || c10c_tensor_strides(back)[i] == strides[i]),
               "the import of an export has other sizes or strides");
  FUZZ_CHECK(c10c_tensor_numel(t) == 0 || c10c_tensor_data(back) == c10c_tensor_data(t),
             "the import of an export has other data");
  add_holder(r, TENSOR, back);
}

/* A view of t with arguments from the input; NULL when refused (with a documented status). */
static c10c_tensor *make_view(run *r, c10c_tensor *t) {
  fuzz_input *in = &r->in;
  size_t ndim = c10c_tensor_dim(t);
  int64_t a[MAX_NDIM + 8], b[MAX_NDIM + 8];
  size_t n = (size_t)fuzz_range(in, 0, (int64_t)ndim + 2), m = 0;
  if (ndim > 8) n = ndim; /* long lists: permutations of every dim */
  for (size_t i = 0; i < n; i++) a[i] = ndim > 8 ? (int64_t)i : fuzz_int64(in);
  c10c_tensor *out = NULL;
  c10c_status st;
  uint8_t op = fuzz_u8(in) % 18;
  /* reshape and flatten copy what they cannot view: only memory that is there may be read, and
   * only small tensors copied (an expanded view of 2^31 elements would be gigabytes) */
  if ((op == 11 || op == 12) && (!r->in_buffer || c10c_tensor_numel(t) > MAX_CHECKED)) op = 6;
  switch (op) {
    case 0: st = c10c_tensor_transpose(&out, t, fuzz_int64(in), fuzz_int64(in)); break;
    case 1: {
      if (ndim > 8 && n > 1) { /* a few swaps of the identity */
        for (int k = 0; k < 4; k++) {
          size_t x = (size_t)fuzz_range(in, 0, (int64_t)n - 1),
                 y = (size_t)fuzz_range(in, 0, (int64_t)n - 1);
          int64_t tmp = a[x];
          a[x] = a[y];
          a[y] = tmp;
        }
      }
      st = c10c_tensor_permute(&out, t, a, n);
      break;
    }
    case 2:
      st = c10c_tensor_slice(&out, t, fuzz_int64(in), fuzz_int64(in), fuzz_int64(in),
                             fuzz_int64(in));
      break;
    case 3: st = c10c_tensor_narrow(&out, t, fuzz_int64(in), fuzz_int64(in), fuzz_int64(in)); break;
    case 4: st = c10c_tensor_select(&out, t, fuzz_int64(in), fuzz_int64(in)); break;
    case 5: st = c10c_tensor_unsqueeze(&out, t, fuzz_int64(in)); break;
    case 6: st = c10c_tensor_squeeze(&out, t); break;
    case 7: st = c10c_tensor_squeeze_dims(&out, t, a, n); break;
    case 8: st = c10c_tensor_expand(&out, t, a, n); break;
    case 9: {
      m = n;
      for (size_t i = 0; i < m; i++) b[i] = ndim > 8 ? 1 : fuzz_int64(in);
      int64_t offset = fuzz_int64(in);
      st = c10c_tensor_as_strided(&out, t, a, n, b, m, fuzz_bool(in) ? &offset : NULL);
      break;
    }
    case 10: st = c10c_tensor_view(&out, t, a, n); break;
    case 11: st = c10c_tensor_reshape(&out, t, a, n); break;
    case 12: st = c10c_tensor_flatten(&out, t, fuzz_int64(in), fuzz_int64(in)); break;
    case 13: st = c10c_tensor_unflatten(&out, t, fuzz_int64(in), a, n); break;
    case 14: {
      m = (size_t)fuzz_range(in, 0, 3);
      for (size_t i = 0; i < m; i++) b[i] = fuzz_int64(in);
      st = c10c_tensor_movedim(&out, t, a, n < 3 ? n : 3, b, m);
      break;
    }
    case 15:
      st = c10c_tensor_diagonal(&out, t, fuzz_int64(in), fuzz_int64(in), fuzz_int64(in));
      break;
    case 16:
      st = c10c_tensor_unfold(&out, t, fuzz_int64(in), fuzz_int64(in), fuzz_int64(in));
      break;
    default: /* mostly the importable dtypes; any c10 dtype (exports refuse or map some) */
      st = c10c_tensor_view_dtype(&out, t,
                                  fuzz_bool(in) ? dtypes[fuzz_u8(in) % DTYPES].dtype
                                                : (c10c_dtype)(fuzz_u8(in) % C10C_DTYPE_UNDEFINED));
      break;
  }
  if (st != C10C_STATUS_OK) {
    FUZZ_CHECK(out == NULL && st < 0 && c10c_last_error_message()[0] != '\0',
               "a refused view (op %u) left a tensor or no message", op);
    return NULL;
  }
  FUZZ_CHECK(out != NULL, "a view succeeded without a tensor");
  if (c10c_tensor_storage(out) != r->storage) { /* reshape copied: checked as a fresh tensor */
    FUZZ_CHECK(op == 11 || op == 12, "op %u made a tensor over another storage", op);
    c10c_tensor_release(out);
    return NULL;
  }
  return out;
}

static void release_all(run *r) {
  /* an order the input picks; the deleter runs with the last holder, not before */
  while (r->nholders > 0) {
    FUZZ_CHECK(r->prod.deletes == 0, "the deleter ran while %zu holders remain", r->nholders);
    size_t i = (size_t)fuzz_range(&r->in, 0, (int64_t)r->nholders - 1);
    holder h = r->holders[i];
    r->holders[i] = r->holders[--r->nholders];
    if (r->weak != NULL && fuzz_bool(&r->in)) {
      c10c_weak_storage_release(r->weak);
      r->weak = NULL;
    }
    release_holder(h);
  }
  FUZZ_CHECK(r->prod.deletes == 1, "the deleter ran %d times once every holder went",
             r->prod.deletes);
  if (r->weak != NULL) {
    c10c_storage *locked = NULL;
    FUZZ_CHECK(c10c_weak_storage_expired(r->weak) &&
                   c10c_weak_storage_lock(&locked, r->weak) == C10C_STATUS_OK && locked == NULL,
               "a weak reference outlived the memory");
    c10c_weak_storage_release(r->weak);
  }
}

/* The steps after a successful import: views, exports, shrinks, data checks. */
static void exercise(run *r, c10c_tensor *t, const DLTensor *src) {
  r->storage = c10c_tensor_storage(t);
  add_holder(r, TENSOR, t);
  check_tensor(r, t);
  int64_t full = c10c_storage_nbytes(r->storage);
  size_t steps = (size_t)fuzz_range(&r->in, 0, MAX_STEPS);
  for (size_t s = 0; s < steps && r->nholders < MAX_HOLDERS - 2; s++) {
    /* a tensor over the memory to work on */
    size_t tensors[MAX_HOLDERS], nt = 0;
    for (size_t i = 0; i < r->nholders; i++)
      if (r->holders[i].kind == TENSOR && c10c_tensor_storage(r->holders[i].p) == r->storage)
        tensors[nt++] = i;
    c10c_tensor *base = r->holders[tensors[fuzz_range(&r->in, 0, (int64_t)nt - 1)]].p;
    switch (fuzz_u8(&r->in) % 6) {
      case 0:
      case 1: {
        c10c_tensor *v = make_view(r, base);
        if (v != NULL) {
          add_holder(r, TENSOR, v);
          check_tensor(r, v);
        }
        break;
      }
      case 2: check_export(r, base, src); break;
      case 3: /* shrink the storage under its tensors, check them, and grow it back */
        if (full > 0) {
          int64_t smaller = fuzz_range(&r->in, 0, full - 1);
          FUZZ_CHECK(c10c_storage_set_nbytes(r->storage, smaller) == C10C_STATUS_OK, "set_nbytes");
          check_tensor(r, base);
          if (fuzz_bool(&r->in)) check_export(r, base, src);
          FUZZ_CHECK(full == INT64_MAX || c10c_storage_set_nbytes(r->storage, full + 1) ==
                                              C10C_STATUS_INVALID_ARGUMENT,
                     "set_nbytes past the memory");
          FUZZ_CHECK(c10c_storage_set_nbytes(r->storage, full) == C10C_STATUS_OK,
                     "set_nbytes back");
        }
        break;
      case 4: add_holder(r, STORAGE, c10c_storage_retain(r->storage)); break;
      default:
        if (r->weak == NULL)
          FUZZ_CHECK(c10c_storage_weak_ref(&r->weak, r->storage) == C10C_STATUS_OK, "weak_ref");
        check_tensor(r, base);
        break;
    }
  }
  release_all(r);
}

/* ---- the input's fields ---- */

static int64_t size_value(fuzz_input *in) {
  return fuzz_u8(in) % 4 != 0 ? fuzz_range(in, 0, 5) : fuzz_int64(in);
}

static int64_t stride_value(fuzz_input *in) {
  switch (fuzz_u8(in) % 4) {
    case 0: return fuzz_range(in, 0, 8);
    case 1: return fuzz_range(in, -2, 64);
    default: return fuzz_int64(in);
  }
}

static DLDataType dtype_value(fuzz_input *in) {
  uint8_t kind = fuzz_u8(in);
  if (kind % 4 != 0) {
    uint8_t which = fuzz_u8(in);
    if (which == 255) return (DLDataType){kDLFloat4_e2m1fn, 4, 2};
    const dtype_entry *e = &dtypes[which % DTYPES];
    return (DLDataType){e->code, e->bits, 1};
  }
  DLDataType dt = {fuzz_u8(in), fuzz_u8(in), 1};
  if (kind & 8) dt.lanes = (uint16_t)fuzz_bytes(in, 2);
  return dt;
}

static DLDevice device_value(fuzz_input *in) {
  static const int32_t types[] = {kDLCPU,      kDLCPU,    kDLCPU,    kDLCPU,         kDLCUDAHost,
                                  kDLROCMHost, kDLCUDA,   kDLROCM,   kDLOneAPI,      kDLMAIA,
                                  kDLExtDev,   kDLOpenCL, kDLVulkan, kDLCUDAManaged, 5};
  uint8_t kind = fuzz_u8(in);
  int32_t type =
      kind & 128 ? (int32_t)fuzz_bytes(in, 4) : types[kind % (sizeof types / sizeof types[0])];
  int32_t id = kind & 64 ? (int32_t)fuzz_int64(in) : (int32_t)fuzz_range(in, 0, 3);
  return (DLDevice){(DLDeviceType)type, id};
}

/* With FUZZ_VERBOSE set in the environment: the struct an input makes, for triage. */
static void describe(const DLTensor *dl, bool versioned, DLPackVersion version, uint64_t flags) {
  if (getenv("FUZZ_VERBOSE") == NULL) return;
  fprintf(stderr,
          "%s %u.%u flags %#llx data %p byte_offset %llu device (%d, %d) dtype (%u, %u, %u) "
          "ndim %d\n",
          versioned ? "versioned" : "legacy", (unsigned)version.major, (unsigned)version.minor,
          (unsigned long long)flags, dl->data, (unsigned long long)dl->byte_offset,
          (int)dl->device.device_type, (int)dl->device.device_id, (unsigned)dl->dtype.code,
          (unsigned)dl->dtype.bits, (unsigned)dl->dtype.lanes, (int)dl->ndim);
  for (int32_t i = 0; i < dl->ndim && i < 16 && dl->shape != NULL; i++)
    fprintf(stderr, "  dim %d: size %lld stride %lld\n", (int)i, (long long)dl->shape[i],
            dl->strides != NULL ? (long long)dl->strides[i] : -999LL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int64_t shape[MAX_NDIM], strides[MAX_NDIM], model_strides[MAX_NDIM];
  run r;
  memset(&r, 0, sizeof r);
  r.in = (fuzz_input){data, size};
  fuzz_input *in = &r.in;
  uint8_t header = fuzz_u8(in);
  bool versioned = !(header & 1);
  /* the producer's buffer and where data points */
  r.buffer_size = (size_t)fuzz_range(in, 0, MAX_BUFFER);
  r.buffer = malloc(r.buffer_size ? r.buffer_size : 1);
  r.snapshot = malloc(r.buffer_size ? r.buffer_size : 1);
  r.covered = malloc(r.buffer_size ? r.buffer_size : 1);
  FUZZ_CHECK(r.buffer != NULL && r.snapshot != NULL && r.covered != NULL, "out of memory");
  for (size_t i = 0; i < r.buffer_size; i++) r.buffer[i] = (unsigned char)(i * 7 + 1);
  void *dl_data;
  switch ((header >> 1) % 8) {
    case 0: dl_data = NULL; break;
    case 1: dl_data = (void *)(uintptr_t)fuzz_u64(in); break; /* never read unless imported */
    case 2: dl_data = (void *)(UINTPTR_MAX - (uintptr_t)fuzz_range(in, 0, 4096)); break;
    default: dl_data = r.buffer + fuzz_range(in, 0, (int64_t)r.buffer_size); break;
  }
  uint64_t byte_offset;
  switch (fuzz_u8(in) % 8) {
    case 0: byte_offset = (uint64_t)fuzz_int64(in); break;
    case 1: byte_offset = UINT64_MAX - (uint64_t)fuzz_range(in, 0, 64); break;
    case 2:
    case 3: byte_offset = (uint64_t)fuzz_range(in, 0, 512); break;
    default: byte_offset = 0; break;
  }
  DLPackVersion version = {1, (uint32_t)fuzz_range(in, 0, 5)};
  if (fuzz_u8(in) % 16 == 0)
    version = (DLPackVersion){(uint32_t)fuzz_bytes(in, 4), (uint32_t)fuzz_bytes(in, 4)};
  uint64_t flags = fuzz_u8(in) % 4 == 0 ? fuzz_u64(in) : (uint64_t)fuzz_range(in, 0, 7);
  DLDataType dtype = dtype_value(in);
  DLDevice device = device_value(in);
  /* ndim: small mostly; large with real arrays; negative or huge (then shape is NULL) */
  int32_t ndim;
  uint8_t ndim_kind = fuzz_u8(in);
  bool shape_null = false, strides_null = fuzz_u8(in) % 3 == 0;
  switch (ndim_kind % 16) {
    case 0: ndim = (int32_t)fuzz_range(in, 9, MAX_NDIM); break;
    case 1:
      ndim = (int32_t)fuzz_int64(in);
      shape_null = ndim > MAX_NDIM;
      break;
    case 2:
      ndim = (int32_t)fuzz_range(in, 0, 4);
      shape_null = true;
      break;
    default: ndim = (int32_t)fuzz_range(in, 0, 8); break;
  }
  size_t real = ndim > 0 && !shape_null ? (size_t)ndim : 0;
  bool ones = real > 16 && fuzz_bool(in); /* long shapes of mostly 1s */
  for (size_t i = 0; i < real; i++) {
    shape[i] = ones && fuzz_u8(in) % 8 != 0 ? 1 : size_value(in);
    strides[i] = stride_value(in);
  }
  DLTensor dl = {
      dl_data,    device, ndim, dtype, shape_null ? NULL : shape, strides_null ? NULL : strides,
      byte_offset};
  r.prod.is_versioned = versioned;
  r.prod.versioned = (DLManagedTensorVersioned){version, &r.prod, delete_versioned, flags, dl};
  r.prod.legacy = (DLManagedTensor){dl, &r.prod, delete_legacy};
  r.m.strides = model_strides;
  build_model(&r.m, &dl, versioned, version, flags);
  describe(&dl, versioned, version, flags);

  c10c_tensor *t = NULL;
  c10c_status st = versioned ? c10c_tensor_from_dlpack_versioned(&t, &r.prod.versioned)
                             : c10c_tensor_from_dlpack(&t, &r.prod.legacy);
  if (st != C10C_STATUS_OK) {
    FUZZ_CHECK(st < 0 && st > -STATUS_BITS, "status %d", (int)st);
    FUZZ_CHECK((bit(st) & (r.m.errors | ALLOW_OOM)) != 0,
               "import failed with %s (%s), which the fields do not call for (model: %#x)",
               c10c_status_name(st), c10c_last_error_message(), r.m.errors);
    FUZZ_CHECK(t == NULL, "a failed import left a tensor");
    FUZZ_CHECK(c10c_last_error_message()[0] != '\0', "a failed import without a message");
    FUZZ_CHECK(r.prod.deletes == 0, "a failed import called the deleter");
    call_deleter(&r.prod); /* still ours */
    FUZZ_CHECK(r.prod.deletes == 1, "the caller's deleter call");
  } else {
    FUZZ_CHECK(r.m.errors == 0, "import succeeded although the fields call for %#x", r.m.errors);
    FUZZ_CHECK(t != NULL && r.prod.deletes == 0, "an import without a tensor, or deleted");
    /* exactly the described elements */
    FUZZ_CHECK(c10c_tensor_dim(t) == r.m.ndim && c10c_tensor_numel(t) == r.m.numel &&
                   c10c_tensor_storage_offset(t) == 0 && c10c_tensor_dtype(t) == r.m.dtype,
               "the import's geometry or dtype");
    for (size_t i = 0; i < r.m.ndim; i++)
      FUZZ_CHECK(c10c_tensor_sizes(t)[i] == shape[i] && c10c_tensor_strides(t)[i] == r.m.strides[i],
                 "the import's size or stride %zu: %lld, %lld; described %lld, %lld", i,
                 (long long)c10c_tensor_sizes(t)[i], (long long)c10c_tensor_strides(t)[i],
                 (long long)shape[i], (long long)r.m.strides[i]);
    c10c_device d = c10c_tensor_device(t);
    FUZZ_CHECK(d.type == r.m.device.type && d.index == r.m.device.index, "the import's device");
    FUZZ_CHECK(c10c_tensor_is_read_only(t) == r.m.read_only, "the import's read-only flag");
    c10c_storage *s = c10c_tensor_storage(t);
    FUZZ_CHECK(c10c_storage_nbytes(s) == r.m.nbytes, "storage of %lld bytes for %lld described",
               (long long)c10c_storage_nbytes(s), (long long)r.m.nbytes);
    FUZZ_CHECK((uintptr_t)c10c_storage_data(s) == r.m.first && !c10c_storage_resizable(s),
               "the storage's data");
    FUZZ_CHECK((uintptr_t)c10c_tensor_data(t) == r.m.first, "the import's data");
    r.in_buffer = r.m.host && r.m.numel > 0 && r.m.first >= (uintptr_t)r.buffer &&
                  r.m.first + (uintptr_t)r.m.nbytes <= (uintptr_t)r.buffer + r.buffer_size;
    exercise(&r, t, &dl);
  }
  free(r.covered);
  free(r.snapshot);
  free(r.buffer);
  return 0;
}
