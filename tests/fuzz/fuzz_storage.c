/* Storages and allocators: random sequences of storage creation (default, plain, caching, custom
 * and CUDA allocators, external memory), strong and weak references, locks, resizes, set_nbytes,
 * read-only marks, tensors over the storages, direct allocations through allocator handles,
 * statistics and summaries, with the library's memory requests (and the stand-in driver's) made
 * to fail at fuzz-chosen points. A model counts the references the harness holds and what each
 * storage's bytes should be; custom allocators record every block they hand out.
 * Checked: use counts and expiry follow c10's intrusive_ptr rules; a failed call changes nothing
 * (a storage keeps its bytes and size, nothing is leaked); every block a custom allocator gave is
 * freed exactly once, every external deleter and every allocator's destroy runs exactly once,
 * when the last reference goes and not before; the caching allocator's live bytes come back to
 * where they were; messages are never empty. */
#define _GNU_SOURCE /* RTLD_NOLOAD */
#include <dlfcn.h>

#include "fuzz.h"

#include "c10c/c10c.h"
#include "c10c/testing.h"

enum { MAX_STORAGES = 6, MAX_WEAK = 4, MAX_ALLOCATORS = 3, MAX_BLOCKS = 256, MAX_STEPS = 64 };
enum { MAX_BYTES = 1 << 16 };

static const c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};

/* ---- custom allocators: every block recorded ---- */

typedef struct custom {
  c10c_allocator *handle; /* the harness's reference, NULL once released */
  int mode;  /* 0 works, 1 fails every allocation, 2 "succeeds" without memory for > 0 bytes */
  bool made; /* allocator_new succeeded (a slot is used once per input) */
  bool has_destroy; /* its struct_size covers destroy, so the library calls it */
  int destroyed;    /* vtable->destroy calls */
  int id;
} custom;

typedef struct block {
  void *data;
  int owner; /* custom id */
  bool live;
} block;

typedef struct storage_model {
  c10c_storage *handle;
  int strong;            /* references the harness holds (0: slot empty) */
  unsigned char *shadow; /* the bytes, as far as they are known */
  int64_t nbytes;        /* recorded size */
  int64_t capacity;      /* what the memory holds (the shadow's size) */
  bool known;            /* shadow holds the first nbytes bytes */
  bool resizable, external, read_only, cuda;
  int custom;            /* allocator: custom id, or -1 */
  unsigned char *buffer; /* external memory */
  int *deletes;          /* its deleter's count */
} storage_model;

typedef struct weak_model {
  c10c_weak_storage *handle;
  int target; /* storage slot it refers to (the storage may be gone) */
  bool alive; /* the harness believes the storage still has strong references */
  int count;  /* weak references the harness holds on it */
} weak_model;

typedef struct state {
  fuzz_input in;
  custom customs[MAX_ALLOCATORS];
  block blocks[MAX_BLOCKS];
  storage_model storages[MAX_STORAGES];
  weak_model weak[MAX_WEAK];
  int externals_made, external_deletes[MAX_STORAGES * MAX_STEPS];
  bool armed; /* a memory request of this step may fail (injected) */
} state;

/* What a call that should succeed may return: OK, or out of memory while a failure is armed. */
static bool ok_or_injected(const state *s, c10c_status st) {
  return st == C10C_STATUS_OK || (s->armed && st == C10C_STATUS_OUT_OF_MEMORY);
}

static state *current; /* for the allocators' callbacks */

/* A storage size: usually small, sometimes negative or absurd (which must fail cleanly), never
 * the gigabytes in between, which would only be slow to fill. */
static int64_t fuzz_size(fuzz_input *in) {
  if (fuzz_u8(in) < 230) return fuzz_range(in, 0, MAX_BYTES);
  int64_t n = fuzz_int64(in);
  return n > MAX_BYTES && n < (INT64_C(1) << 50) ? MAX_BYTES : n;
}

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  FUZZ_CHECK(p != NULL, "harness out of memory");
  return p;
}

static void custom_free(void *ctx) {
  block *b = ctx;
  FUZZ_CHECK(b->live, "a custom allocator's block freed twice");
  b->live = false;
  free(b->data);
  b->data = NULL;
}

static c10c_status custom_allocate(c10c_data_ptr *out, void *self, size_t nbytes,
                                   size_t alignment) {
  custom *c = self;
  FUZZ_CHECK(alignment >= 64 && (alignment & (alignment - 1)) == 0, "alignment %zu", alignment);
  if (c->mode == 1) return C10C_STATUS_OUT_OF_MEMORY;
  if (nbytes == 0) return C10C_STATUS_OK;
  if (c->mode == 2) return C10C_STATUS_OK; /* a broken host allocator: OK without memory */
  if (nbytes > MAX_BYTES * 4) return C10C_STATUS_OUT_OF_MEMORY;
  block *b = NULL;
  for (int i = 0; i < MAX_BLOCKS && b == NULL; i++)
    if (!current->blocks[i].live && current->blocks[i].data == NULL) b = &current->blocks[i];
  if (b == NULL) return C10C_STATUS_OUT_OF_MEMORY;
  if (posix_memalign(&b->data, alignment, nbytes) != 0) return C10C_STATUS_OUT_OF_MEMORY;
  b->live = true;
  b->owner = c->id;
  out->data = b->data;
  out->ctx = b;
  out->deleter = custom_free;
  return C10C_STATUS_OK;
}

static void custom_copy(void *self, void *dst, const void *src, size_t nbytes) {
  (void)self;
  memmove(dst, src, nbytes);
}

static void custom_destroy(void *self) {
  custom *c = self;
  c->destroyed++;
  FUZZ_CHECK(c->destroyed == 1, "an allocator destroyed twice");
}

static void make_custom(state *s) {
  int slot = (int)fuzz_range(&s->in, 0, MAX_ALLOCATORS - 1);
  custom *c = &s->customs[slot];
  if (c->made || c->handle != NULL) return;
  c->mode = fuzz_u8(&s->in) % 3;
  c->destroyed = 0;
  c->id = slot;
  c10c_allocator_vtable vt = {
      .struct_size = sizeof vt, .allocate = custom_allocate, .destroy = custom_destroy};
  /* the vtable and its name are the caller's: a copy must be kept, as the header says */
  char *name = fuzz_u8(&s->in) & 1 ? strdup("fuzz_pool") : NULL;
  vt.name = name;
  uint8_t variant = fuzz_u8(&s->in);
  if (variant < 20) vt.struct_size = (uint32_t)fuzz_range(&s->in, 0, sizeof vt + 64);
  if (variant >= 20 && variant < 30) vt.allocate = NULL;
  if (variant >= 40 && variant < 140) vt.copy = custom_copy; /* resize copies through it */
  c10c_device_type type =
      variant >= 30 && variant < 40 ? (c10c_device_type)fuzz_u8(&s->in) : C10C_DEVICE_TYPE_CPU;
  c10c_status st = c10c_allocator_new(&c->handle, &vt, c, type);
  free(name);
  if (st != C10C_STATUS_OK) {
    FUZZ_CHECK(c->handle == NULL && c10c_last_error_message()[0], "a failed allocator_new");
    FUZZ_CHECK(c->destroyed == 0, "a refused allocator was destroyed");
    return;
  }
  FUZZ_CHECK(vt.allocate != NULL && c10c_device_type_is_valid(type), "allocator_new accepted %s",
             vt.allocate == NULL ? "no allocate" : "an invalid device type");
  c->made = true;
  /* fields beyond the host's struct_size are not read: an older host has no destroy or name */
  size_t covered = vt.struct_size;
  c->has_destroy = covered >= offsetof(c10c_allocator_vtable, destroy) + sizeof vt.destroy;
  bool has_name = covered >= offsetof(c10c_allocator_vtable, name) + sizeof vt.name;
  if (type != C10C_DEVICE_TYPE_CPU) { /* a valid type of no use here */
    c10c_allocator_release(c->handle);
    c->handle = NULL;
    FUZZ_CHECK(c->destroyed == c->has_destroy, "the last release did not destroy the allocator");
    return;
  }
  FUZZ_CHECK(strcmp(c10c_allocator_name(c->handle), name && has_name ? "fuzz_pool" : "custom") == 0,
             "allocator name '%s'", c10c_allocator_name(c->handle));
}

/* ---- storages ---- */

static void count_delete(void *ctx) { (*(int *)ctx)++; }

/* What c10c_storage_new_external accepts as a device: a valid type, index -1 or 0..127. */
static bool device_ok(c10c_device d) { return c10c_device_type_is_valid(d.type) && d.index >= -1; }

static int free_slot(state *s) {
  for (int i = 0; i < MAX_STORAGES; i++)
    if (s->storages[i].strong == 0) return i;
  return -1;
}

static void forget(storage_model *m) {
  free(m->shadow);
  memset(m, 0, sizeof *m);
}

/* The harness drops one strong reference; the last one frees the bytes (the external deleter
 * runs then, not before). */
static void release(state *s, int slot) {
  storage_model *m = &s->storages[slot];
  FUZZ_CHECK(c10c_storage_use_count(m->handle) == (uint32_t)m->strong, "use_count %u, model %d",
             c10c_storage_use_count(m->handle), m->strong);
  int before = m->deletes ? *m->deletes : 0;
  c10c_storage_release(m->handle);
  if (--m->strong > 0) {
    if (m->deletes) FUZZ_CHECK(*m->deletes == before, "the deleter ran too early");
    return;
  }
  if (m->deletes) FUZZ_CHECK(*m->deletes == 1, "external deleter ran %d times", *m->deletes);
  for (int w = 0; w < MAX_WEAK; w++)
    if (s->weak[w].count > 0 && s->weak[w].target == slot) s->weak[w].alive = false;
  free(m->buffer);
  forget(m);
}

static void fill_pattern(storage_model *m, uint8_t seed) {
  unsigned char *p = c10c_storage_data(m->handle);
  for (int64_t b = 0; b < m->nbytes; b++) m->shadow[b] = (unsigned char)(seed + b * 31);
  if (m->nbytes > 0) memcpy(p, m->shadow, (size_t)m->nbytes); /* (CUDA: the stand-in's memory) */
  m->known = true;
}

static void check_bytes(const storage_model *m, const char *after) {
  if (!m->known || m->nbytes == 0) return;
  const unsigned char *p = c10c_storage_data(m->handle);
  FUZZ_CHECK(p != NULL, "after %s: no data for %lld bytes", after, (long long)m->nbytes);
  FUZZ_CHECK(memcmp(p, m->shadow, (size_t)m->nbytes) == 0, "after %s: bytes changed", after);
}

static void make_storage(state *s, bool cuda_on) {
  int slot = free_slot(s);
  if (slot < 0) return;
  storage_model *m = &s->storages[slot];
  int64_t n = fuzz_size(&s->in);
  uint8_t kind = fuzz_u8(&s->in) % 6;
  bool resizable = fuzz_u8(&s->in) < 200;
  c10c_status st;
  c10c_allocator *allocator = NULL;
  c10c_device_type type = C10C_DEVICE_TYPE_CPU;
  m->custom = -1;
  if (kind == 5) { /* external memory: a buffer of n bytes (NULL data: none) */
    bool null_data = fuzz_u8(&s->in) < 10;
    if (!null_data && (n < 0 || n > MAX_BYTES)) n = fuzz_range(&s->in, 0, MAX_BYTES);
    m->buffer = xmalloc((size_t)(!null_data && n > 0 ? n : 1)); /* NULL data: any size */
    int *deletes = &s->external_deletes[s->externals_made++];
    c10c_device device = cpu;
    if (fuzz_u8(&s->in) >= 240)
      device = (c10c_device){(c10c_device_type)fuzz_u8(&s->in), (c10c_device_index)fuzz_u8(&s->in)};
    st = c10c_storage_new_external(&m->handle, null_data ? NULL : m->buffer, n, device,
                                   count_delete, deletes);
    bool valid = n >= 0 && (!null_data || n == 0) && device_ok(device);
    FUZZ_CHECK(valid ? ok_or_injected(s, st) : st != C10C_STATUS_OK,
               "new_external(%lld bytes%s): %s", (long long)n, null_data ? ", NULL" : "",
               c10c_status_name(st));
    if (st != C10C_STATUS_OK || device.type != C10C_DEVICE_TYPE_CPU || device.index != -1) {
      if (st == C10C_STATUS_OK) c10c_storage_release(m->handle); /* not modelled: drop it */
      FUZZ_CHECK(*deletes == (st == C10C_STATUS_OK), "the deleter of a dropped or refused storage");
      *deletes = 1; /* accounted for */
      free(m->buffer);
      forget(m);
      return;
    }
    m->deletes = deletes;
    m->external = true;
    m->resizable = false;
  } else {
    if (kind == 1) allocator = c10c_cpu_default_allocator();
    if (kind == 2) allocator = c10c_cpu_caching_allocator();
    if (kind == 3) {
      int c = (int)fuzz_range(&s->in, 0, MAX_ALLOCATORS - 1);
      if (s->customs[c].handle == NULL) return;
      allocator = s->customs[c].handle;
      m->custom = c;
      if (c == 2 && resizable && n > MAX_BYTES / 2) { /* a CPU allocator asked for CUDA memory */
        c10c_storage *wrong = NULL;
        FUZZ_CHECK(c10c_storage_new(&wrong, 16, allocator, C10C_DEVICE_TYPE_CUDA, true) ==
                       C10C_STATUS_INVALID_ARGUMENT,
                   "an allocator of another device type was accepted");
      }
    }
    if (kind == 4 && cuda_on) type = C10C_DEVICE_TYPE_CUDA;
    if (kind == 4 && !cuda_on) type = (c10c_device_type)fuzz_u8(&s->in); /* often invalid */
    st = c10c_storage_new(&m->handle, n, allocator, type, resizable);
    bool broken = kind == 3 && s->customs[m->custom].mode != 0;
    if (st != C10C_STATUS_OK) {
      FUZZ_CHECK(m->handle == NULL && c10c_last_error_message()[0], "a failed storage_new");
      FUZZ_CHECK(n < 0 || n > MAX_BYTES || st == C10C_STATUS_OUT_OF_MEMORY || broken ||
                     (kind == 4 && !cuda_on),
                 "storage_new(%lld) refused: %s", (long long)n, c10c_last_error_message());
      forget(m);
      return;
    }
    FUZZ_CHECK(n >= 0, "storage_new accepted %lld bytes", (long long)n);
    /* an allocator that fails, or "succeeds" without memory for bytes, makes no storage */
    FUZZ_CHECK(!broken || n == 0, "storage_new succeeded over a broken allocator");
    if (type != C10C_DEVICE_TYPE_CPU && type != C10C_DEVICE_TYPE_CUDA) {
      c10c_storage_release(m->handle); /* an allocator some other device type has: keep none */
      forget(m);
      return;
    }
    m->cuda = type == C10C_DEVICE_TYPE_CUDA;
    m->resizable = resizable;
  }
  m->strong = 1;
  m->nbytes = m->capacity = n;
  FUZZ_CHECK(c10c_storage_nbytes(m->handle) == n, "nbytes");
  FUZZ_CHECK(n == 0 || c10c_storage_data(m->handle) != NULL,
             "a storage of %lld bytes without memory", (long long)n);
  if (!m->external && !m->cuda && n > 0) /* (the stand-in's device memory is malloc's) */
    FUZZ_CHECK((uintptr_t)c10c_storage_data(m->handle) % 64 == 0, "alignment");
  m->shadow = xmalloc((size_t)(n > 0 ? n : 1));
  fill_pattern(m, fuzz_u8(&s->in));
}

static void do_resize(state *s, int slot) {
  storage_model *m = &s->storages[slot];
  int64_t n = fuzz_size(&s->in);
  void *before = c10c_storage_data(m->handle);
  c10c_status st = c10c_storage_resize(m->handle, n);
  if (st != C10C_STATUS_OK) {
    FUZZ_CHECK(c10c_last_error_message()[0], "resize failed without a message");
    FUZZ_CHECK(!m->resizable || m->external || n < 0 || n > MAX_BYTES ||
                   st == C10C_STATUS_OUT_OF_MEMORY || m->custom >= 0,
               "resize(%lld) refused: %s", (long long)n, c10c_last_error_message());
    FUZZ_CHECK(
        c10c_storage_nbytes(m->handle) == m->nbytes && c10c_storage_data(m->handle) == before,
        "a failed resize changed the storage");
    check_bytes(m, "a failed resize");
    return;
  }
  FUZZ_CHECK(m->resizable && !m->external && n >= 0, "resize of a storage that cannot be");
  /* the recorded size's common prefix is kept */
  int64_t common = n < m->nbytes ? n : m->nbytes;
  if (m->known && common > 0)
    FUZZ_CHECK(memcmp(c10c_storage_data(m->handle), m->shadow, (size_t)common) == 0,
               "resize lost bytes");
  free(m->shadow);
  m->shadow = xmalloc((size_t)(n > 0 ? n : 1));
  m->nbytes = m->capacity = n;
  fill_pattern(m, fuzz_u8(&s->in));
}

static void do_set_nbytes(state *s, int slot) {
  storage_model *m = &s->storages[slot];
  int64_t n = fuzz_u8(&s->in) < 230 ? fuzz_range(&s->in, 0, m->capacity + 8) : fuzz_int64(&s->in);
  c10c_status st = c10c_storage_set_nbytes(m->handle, n);
  /* within what the memory holds (the bytes beyond the recorded size untouched), never more */
  FUZZ_CHECK((st == C10C_STATUS_OK) == (n >= 0 && n <= m->capacity), "set_nbytes(%lld) of %lld: %s",
             (long long)n, (long long)m->capacity, c10c_status_name(st));
  if (st != C10C_STATUS_OK)
    FUZZ_CHECK(st == C10C_STATUS_INVALID_ARGUMENT, "set_nbytes: %s", c10c_status_name(st));
  else
    m->nbytes = n;
  FUZZ_CHECK(c10c_storage_nbytes(m->handle) == m->nbytes, "set_nbytes recorded %lld",
             (long long)c10c_storage_nbytes(m->handle));
}

/* A tensor over the storage: its data accesses must fail when its elements reach past the
 * recorded size, and writes must be refused on a read-only storage. */
static void do_tensor(state *s, int slot) {
  storage_model *m = &s->storages[slot];
  int64_t size = fuzz_range(&s->in, 0, 64), offset = fuzz_range(&s->in, 0, 16);
  c10c_tensor *t = NULL;
  int64_t unit = 1;
  c10c_status st =
      c10c_tensor_new_from_storage(&t, m->handle, &size, &unit, 1, offset, C10C_DTYPE_UINT8);
  bool fits = size == 0 || offset + size <= m->nbytes;
  FUZZ_CHECK(fits ? ok_or_injected(s, st) : st != C10C_STATUS_OK, "new_from_storage: %s",
             c10c_status_name(st));
  if (st != C10C_STATUS_OK) return;
  if (fuzz_u8(&s->in) & 1) { /* shrink under it */
    do_set_nbytes(s, slot);
    fits = size == 0 || offset + size <= m->nbytes;
  }
  uint8_t value = fuzz_u8(&s->in);
  st = c10c_tensor_fill_(t, &value);
  if (!fits || m->read_only) {
    FUZZ_CHECK(st == C10C_STATUS_ERROR, "fill_ past the storage or read-only: %s",
               c10c_status_name(st));
  } else {
    FUZZ_CHECK(ok_or_injected(s, st), "fill_: %s", c10c_last_error_message());
    if (st == C10C_STATUS_OK && m->known && size > 0)
      memset(m->shadow + offset, value, (size_t)size);
  }
  check_bytes(m, "fill_ of a tensor over the storage");
  FUZZ_CHECK(c10c_storage_use_count(m->handle) == (uint32_t)m->strong + 1,
             "the tensor's reference");
  c10c_tensor_release(t);
}

static void do_weak(state *s, int slot) {
  int w = (int)fuzz_range(&s->in, 0, MAX_WEAK - 1);
  weak_model *wm = &s->weak[w];
  uint8_t op = fuzz_u8(&s->in) % 4;
  if (wm->count == 0) { /* make one */
    if (slot < 0) return;
    FUZZ_CHECK(c10c_storage_weak_ref(&wm->handle, s->storages[slot].handle) == 0, "weak_ref");
    wm->target = slot;
    wm->alive = true;
    wm->count = 1;
    return;
  }
  storage_model *m = &s->storages[wm->target];
  FUZZ_CHECK(c10c_weak_storage_expired(wm->handle) == !wm->alive, "expired is %d, model %d",
             c10c_weak_storage_expired(wm->handle), !wm->alive);
  FUZZ_CHECK(c10c_weak_storage_use_count(wm->handle) == (uint32_t)(wm->alive ? m->strong : 0),
             "weak use_count");
  if (op == 0) { /* lock */
    c10c_storage *locked = NULL;
    FUZZ_CHECK(c10c_weak_storage_lock(&locked, wm->handle) == 0, "lock");
    FUZZ_CHECK((locked != NULL) == wm->alive, "lock gave %p, model alive %d", (void *)locked,
               wm->alive);
    if (locked) { /* the harness holds one more strong reference */
      FUZZ_CHECK(locked == m->handle, "lock gave another storage");
      m->strong++;
    }
  } else if (op == 1) {
    c10c_weak_storage_retain(wm->handle);
    wm->count++;
  } else {
    c10c_weak_storage_release(wm->handle);
    if (--wm->count == 0) wm->handle = NULL;
  }
}

/* allocate / free through a handle, statistics, summaries */
static void do_allocator(state *s) {
  c10c_allocator *a = NULL;
  uint8_t which = fuzz_u8(&s->in) % 4;
  if (which == 0) a = c10c_cpu_default_allocator();
  if (which == 1) a = c10c_cpu_caching_allocator();
  if (which == 2) a = s->customs[fuzz_range(&s->in, 0, MAX_ALLOCATORS - 1)].handle;
  if (which == 3) {
    /* the registry: any device type (unknown ones refused, those without an allocator too), and
     * a CPU allocator of lower priority than the installed one, which changes nothing */
    c10c_device_type type = (c10c_device_type)fuzz_u8(&s->in);
    c10c_status st = c10c_allocator_get(&a, type);
    if (!c10c_device_type_is_valid(type))
      FUZZ_CHECK(st == C10C_STATUS_INVALID_ARGUMENT, "allocator_get(%d)", (int)type);
    if (st != C10C_STATUS_OK) FUZZ_CHECK(a == NULL && c10c_last_error_message()[0], "get");
    if (st == C10C_STATUS_OK && type == C10C_DEVICE_TYPE_CPU && s->customs[0].handle != NULL) {
      c10c_allocator *before = a, *after = NULL;
      bool installed = true;
      c10c_status set = c10c_allocator_set(&installed, s->customs[0].handle, -1 - fuzz_u8(&s->in));
      FUZZ_CHECK(set == C10C_STATUS_OK && !installed, "allocator_set: %s, installed %d",
                 c10c_status_name(set), (int)installed);
      FUZZ_CHECK(c10c_allocator_get(&after, C10C_DEVICE_TYPE_CPU) == 0 && after == before,
                 "a lower-priority allocator was installed");
      c10c_allocator_release(after);
    }
    if (type != C10C_DEVICE_TYPE_CPU) {
      c10c_allocator_release(a); /* a new reference (a no-op for the built-in ones) */
      return;
    }
  }
  if (a == NULL) return;
  switch (fuzz_u8(&s->in) % 5) {
    case 0: {
      size_t n = fuzz_u8(&s->in) < 240 ? (size_t)fuzz_range(&s->in, 0, MAX_BYTES)
                                       : (size_t)fuzz_u64(&s->in);
      c10c_data_ptr d;
      c10c_status st = c10c_allocator_allocate(&d, a, n);
      if (st == C10C_STATUS_OK) {
        FUZZ_CHECK(n == 0 || d.data != NULL, "allocate(%zu) gave no memory", n);
        if (n > 0) memset(d.data, 0xAB, n < 4096 ? n : 4096);
        c10c_data_ptr_free(&d);
        FUZZ_CHECK(d.data == NULL && d.ctx == NULL && d.deleter == NULL, "data_ptr_free");
      } else {
        FUZZ_CHECK(d.data == NULL && d.deleter == NULL, "a failed allocate left a pointer");
        FUZZ_CHECK(c10c_last_error_message()[0], "allocate failed without a message");
      }
      break;
    }
    case 1: {
      c10c_memory_stats stats;
      memset(&stats, 0xEE, sizeof stats);
      stats.struct_size =
          (uint32_t)(fuzz_u8(&s->in) < 200 ? sizeof stats
                                           : (size_t)fuzz_range(&s->in, 0, sizeof stats));
      uint32_t asked = stats.struct_size;
      c10c_status st = c10c_allocator_get_stats(&stats, a);
      FUZZ_CHECK(stats.struct_size == asked, "get_stats changed struct_size");
      (void)st;
      break;
    }
    case 2: FUZZ_CHECK(c10c_allocator_empty_cache(a) == 0, "empty_cache"); break;
    case 3: FUZZ_CHECK(c10c_allocator_reset_peak_stats(a) == 0, "reset_peak_stats"); break;
    default: {
      size_t size = (size_t)fuzz_range(&s->in, 0, 4096), len = 0;
      char *buf = xmalloc(size + 1);
      buf[size] = 0x5A;
      c10c_status st = c10c_allocator_summary(size ? buf : NULL, size, &len, a);
      FUZZ_CHECK(buf[size] == 0x5A, "summary wrote past its buffer");
      if (st == C10C_STATUS_OK) FUZZ_CHECK(len < size && buf[len] == '\0', "summary length");
      if (st == C10C_STATUS_BUFFER_TOO_SMALL && size > 0)
        FUZZ_CHECK(len >= size && buf[size - 1] == '\0', "a truncated summary is terminated");
      free(buf);
    }
  }
}

static int64_t caching_live_bytes(void) {
  c10c_memory_stats stats = {.struct_size = sizeof stats};
  FUZZ_CHECK(c10c_allocator_get_stats(&stats, c10c_cpu_caching_allocator()) == 0, "stats");
  return stats.allocated_bytes[C10C_STAT_ALL].current;
}

/* The stand-in driver's failure injection, when it is the driver. */
static void (*stub_fail)(const char *, long, int);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static state s;
  static bool cuda_on, set_up;
  if (!set_up) {
    set_up = true;
    const char *driver = getenv("C10C_CUDA_DRIVER");
    cuda_on = driver != NULL && c10c_cuda_is_available();
    void *handle = cuda_on ? dlopen(driver, RTLD_NOW | RTLD_NOLOAD) : NULL;
    void *address = handle ? dlsym(handle, "c10c_stub_fail") : NULL;
    if (address) memcpy(&stub_fail, &address, sizeof stub_fail);
    cuda_on = stub_fail != NULL;
  }
  memset(&s, 0, sizeof s);
  current = &s;
  s.in = (fuzz_input){data, size};
  int64_t live_at_start = caching_live_bytes();
  for (int step = 0; step < MAX_STEPS && !fuzz_done(&s.in); step++) {
    uint8_t op = fuzz_u8(&s.in);
    /* arm a failure of the k-th memory request of this step, sometimes */
    bool armed = s.armed = op & 0x80;
    if (armed) {
      int64_t k = fuzz_range(&s.in, 1, 8);
      c10c_testing_fail_allocation(k);
      if (cuda_on && (k & 1)) stub_fail("cuMemAlloc_v2", (long)k, 2 /* out of memory */);
    }
    int slot = -1;
    for (int i = 0, start = (int)fuzz_range(&s.in, 0, MAX_STORAGES - 1); i < MAX_STORAGES; i++)
      if (s.storages[(start + i) % MAX_STORAGES].strong > 0) {
        slot = (start + i) % MAX_STORAGES;
        break;
      }
    FUZZ_TRACE("step %d: op %d on storage %d%s", step, op & 0x0F, slot, armed ? " (armed)" : "");
    switch (op & 0x0F) {
      case 0:
      case 1: make_storage(&s, cuda_on); break;
      case 2: make_custom(&s); break;
      case 3:
        if (slot >= 0) release(&s, slot);
        break;
      case 4:
        if (slot >= 0) {
          FUZZ_CHECK(c10c_storage_retain(s.storages[slot].handle) == s.storages[slot].handle,
                     "retain");
          s.storages[slot].strong++;
        }
        break;
      case 5:
      case 6:
        if (slot >= 0) do_resize(&s, slot);
        break;
      case 7:
        if (slot >= 0) do_set_nbytes(&s, slot);
        break;
      case 8:
      case 9:
        if (slot >= 0) do_tensor(&s, slot);
        break;
      case 10:
      case 11: do_weak(&s, slot); break;
      case 12: do_allocator(&s); break;
      case 13:
        if (slot >= 0) {
          FUZZ_CHECK(c10c_storage_set_read_only(s.storages[slot].handle) == 0, "set_read_only");
          s.storages[slot].read_only = true;
        }
        break;
      case 14: { /* a custom allocator's handle goes; storages keep theirs */
        int c = (int)fuzz_range(&s.in, 0, MAX_ALLOCATORS - 1);
        if (s.customs[c].handle) {
          c10c_allocator_release(s.customs[c].handle);
          s.customs[c].handle = NULL;
        }
        break;
      }
      default:
        if (slot >= 0) { /* the getters agree with the model */
          storage_model *m = &s.storages[slot];
          check_bytes(m, "nothing");
          c10c_data_ptr dp;
          FUZZ_CHECK(
              c10c_storage_data_ptr(&dp, m->handle) == 0 && dp.data == c10c_storage_data(m->handle),
              "data_ptr");
          FUZZ_CHECK(c10c_storage_resizable(m->handle) == (m->resizable && !m->external),
                     "resizable");
          FUZZ_CHECK(c10c_storage_is_read_only(m->handle) == m->read_only, "read_only");
          FUZZ_CHECK(c10c_storage_weak_use_count(m->handle) >= 1, "weak_use_count");
          FUZZ_CHECK(c10c_storage_device(m->handle).type ==
                         (m->cuda ? C10C_DEVICE_TYPE_CUDA : C10C_DEVICE_TYPE_CPU),
                     "device");
          FUZZ_CHECK((c10c_storage_allocator(m->handle) == NULL) == m->external, "allocator");
          FUZZ_CHECK(c10c_storage_data_ptr(NULL, m->handle) == C10C_STATUS_NULL_POINTER &&
                         c10c_storage_data_ptr(&dp, NULL) == C10C_STATUS_NULL_POINTER &&
                         c10c_storage_resize(NULL, 1) == C10C_STATUS_NULL_POINTER &&
                         c10c_storage_nbytes(NULL) == 0 && c10c_storage_data(NULL) == NULL,
                     "NULL arguments");
        }
    }
    c10c_testing_fail_allocation(0);
    if (cuda_on) stub_fail("cuMemAlloc_v2", 0, 0);
  }
  /* teardown: every reference goes; then every block, deleter and destroy ran exactly once */
  for (int w = 0; w < MAX_WEAK; w++)
    while (s.weak[w].count-- > 0) c10c_weak_storage_release(s.weak[w].handle);
  for (int i = 0; i < MAX_STORAGES; i++)
    while (s.storages[i].strong > 0) release(&s, i);
  for (int c = 0; c < MAX_ALLOCATORS; c++)
    if (s.customs[c].handle) c10c_allocator_release(s.customs[c].handle);
  for (int b = 0; b < MAX_BLOCKS; b++)
    FUZZ_CHECK(!s.blocks[b].live, "a custom allocator's block was never freed");
  for (int c = 0; c < MAX_ALLOCATORS; c++)
    FUZZ_CHECK(s.customs[c].destroyed == (s.customs[c].made && s.customs[c].has_destroy),
               "allocator %d destroyed %d times", c, s.customs[c].destroyed);
  for (int e = 0; e < s.externals_made; e++)
    FUZZ_CHECK(s.external_deletes[e] == 1, "external deleter %d ran %d times", e,
               s.external_deletes[e]);
  FUZZ_CHECK(caching_live_bytes() == live_at_start, "the caching allocator holds %lld bytes more",
             (long long)(caching_live_bytes() - live_at_start));
  return 0;
}
