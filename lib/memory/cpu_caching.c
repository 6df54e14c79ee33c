/* The caching CPU allocator, libc10c's default for CPU tensors.
 *
 * Requests are rounded to size classes (multiples of 64 bytes up to 1 KiB, then four classes per
 * power of two, so at most 25% is wasted). Small blocks (up to 256 KiB) live in per-thread caches
 * with no locks or atomics on the fast path; a thread that frees a block keeps it, whichever thread
 * allocated it, and overflow goes to a central cache. Large blocks are mapped from the kernel
 * (2 MiB-aligned, with transparent huge pages, from 2 MiB on) and cached per class under one lock,
 * least recently freed first out. The central and large caches together hold at most
 * max_cached_mb; a miss in the large cache resizes the least recently freed cached block in place
 * (mremap keeps its pages, so they need not fault in again) rather than mapping fresh memory, so
 * reserved memory stays near live memory. When the system refuses memory, the caches
 * are released and the request retried once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_config.h"
#include "allocator_internal.h"
#include "os.h"
#include "sysmem.h"

enum {
  ALIGNMENT = 64,
  SMALL_CLASSES = 48, /* classes of 64 B .. 256 KiB */
  MAX_CLASSES = 168,  /* up to 2^47 bytes */
  FLUSH_BYTES = 64 << 10,
};
#define SMALL_MAX      ((size_t)256 << 10)
#define HUGE_THRESHOLD ((size_t)2 << 20)
#if SIZE_MAX > UINT32_MAX
#define LARGEST_REQUEST ((size_t)1 << 47)
#else
#define LARGEST_REQUEST ((size_t)PTRDIFF_MAX) /* 32-bit: the address space is the limit */
#endif

/* ---- size classes ---- */

/* The class of an n-byte request (n >= 1) and its rounded size. */
static inline unsigned class_of(size_t n, size_t *class_size) {
  if (n <= 1024) {
    size_t c = (n + ALIGNMENT - 1) / ALIGNMENT - 1;
    *class_size = (c + 1) * ALIGNMENT;
    return (unsigned)c;
  }
  int p = 63 - __builtin_clzll((unsigned long long)(n - 1)); /* floor(log2(n - 1)) >= 10 */
  size_t step = (size_t)1 << (p - 2);
  size_t size = (n + step - 1) & ~(step - 1);
  *class_size = size;
  return 16 + (unsigned)(p - 10) * 4 + (unsigned)(size / step) - 5;
}

/* ---- configuration ---- */

/* The parsed settings; max_cached_bytes is read and written under `lock`, the other two are
 * mirrored in atomics because the lock-free fast paths read them. */
static c10c__cpu_alloc_config cfg = {(size_t)1024 << 20, true, (size_t)256 << 10, C10C__FILL_NONE};
static _Atomic size_t thread_cache_bytes = (size_t)256 << 10;
static _Atomic bool huge_pages = true;
static _Atomic int fill_mode = C10C__FILL_NONE;
static c10c__once env_once = C10C__ONCE_INIT;
static _Atomic bool env_read;
static _Atomic c10c_status env_status = C10C_STATUS_OK;
static char env_message[256];

static void publish_config(void) {
  atomic_store_explicit(&thread_cache_bytes, cfg.thread_cache_bytes, memory_order_relaxed);
  atomic_store_explicit(&huge_pages, cfg.huge_pages, memory_order_relaxed);
  atomic_store_explicit(&fill_mode, cfg.fill, memory_order_relaxed);
}

/* Fills a new block as configured (c10's fill patterns: the junk word repeats per 8 bytes). */
static void fill_block(void *data, size_t n, int mode) {
  if (mode == C10C__FILL_ZERO) {
    memset(data, 0, n);
  } else if (mode == C10C__FILL_JUNK) {
    static const uint64_t junk = UINT64_C(0x7fedbeef7fedbeef);
    unsigned char *p = data;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) memcpy(p + i, &junk, 8);
    memcpy(p + i, &junk, n - i);
  }
}

static void read_environment(void) {
  const char *text = getenv("C10C_CPU_ALLOC_CONF");
  if (text != NULL) {
    char msg[200];
    c10c_status st = c10c__parse_cpu_alloc_config(text, &cfg, msg, sizeof msg);
    if (st != C10C_STATUS_OK)
      snprintf(env_message, sizeof env_message, "C10C_CPU_ALLOC_CONF: %s", msg);
    publish_config();
    atomic_store_explicit(&env_status, st, memory_order_relaxed);
  }
  atomic_store_explicit(&env_read, true, memory_order_release);
}

/* The configuration from the environment, read once; its error (if any) fails allocations until
 * c10c_cpu_caching_allocator_configure succeeds. */
static inline c10c_status check_environment(void) {
  if (!atomic_load_explicit(&env_read, memory_order_acquire))
    c10c__once_call(&env_once, read_environment);
  c10c_status st = atomic_load_explicit(&env_status, memory_order_relaxed);
  if (st != C10C_STATUS_OK) return c10c__fail(st, "%s", env_message);
  return C10C_STATUS_OK;
}

/* ---- shared state (guarded by lock) ---- */

typedef struct large_block {
  char *ptr;
  size_t size; /* mapped bytes (the class size) */
  size_t requested;
  unsigned cls;
  struct large_block *bin_prev, *bin_next; /* cached blocks of this class */
  struct large_block *lru_prev, *lru_next; /* all cached blocks, most recently freed first */
} large_block;

typedef struct thread_cache thread_cache;

/* One lock guards the shared caches and statistics. Its critical sections are a few list and
 * counter updates (system calls happen outside it), so a spinlock that yields after a short spin
 * costs less than a mutex: about half of a large-block allocate+free pair. */
static _Atomic bool lock_held;

static void lock_acquire(void) {
  for (int spins = 0;; spins++) {
    if (!atomic_load_explicit(&lock_held, memory_order_relaxed) &&
        !atomic_exchange_explicit(&lock_held, true, memory_order_acquire))
      return;
    if (spins >= 64) c10c__thread_yield();
  }
}

static inline void lock_release(void) {
  atomic_store_explicit(&lock_held, false, memory_order_release);
}
static void *central_head[SMALL_CLASSES];
static size_t central_count[SMALL_CLASSES];
static large_block *bins[MAX_CLASSES];
static large_block *lru_head, *lru_tail;
static size_t cached_bytes;  /* central small blocks plus cached large blocks */
static thread_cache *caches; /* live thread caches, for statistics */

/* Exact statistics of everything but the thread-local small-block counts. */
static c10c_memory_stats shared;
/* Small-pool totals of exited threads, and the flushed running sums behind the small peaks. */
static int64_t retired_alloc_n, retired_free_n, retired_alloc_bytes, retired_free_bytes;
static int64_t small_bytes_flushed, small_count_flushed;

/* ---- per-thread small-block caches ---- */

/* Counters only the owning thread writes (relaxed load + store, no lock prefix); other threads
 * read them for statistics. */
typedef struct thread_counters {
  _Atomic int64_t alloc_n, free_n, alloc_bytes, free_bytes;
} thread_counters;

struct thread_cache {
  void *head[SMALL_CLASSES];
  size_t count[SMALL_CLASSES];
  thread_counters counters;
  int64_t unflushed_bytes, unflushed_count; /* owner only */
  thread_cache *prev, *next;
};

/* initial-exec: the fast path reads these with one instruction instead of calling
 * __tls_get_addr (as glibc's, jemalloc's and mimalloc's thread caches do); with glibc only
 * (C10C__TLS_FAST in internal.h). */
static _Thread_local thread_cache *my_cache C10C__TLS_FAST;
static _Thread_local bool my_cache_failed
    C10C__TLS_FAST; /* none could be made: use the central cache */
static c10c__tls_key cache_key;
static c10c__once key_once = C10C__ONCE_INIT;
static bool key_ok;

static inline void bump(_Atomic int64_t *counter, int64_t delta) {
  atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + delta,
                        memory_order_relaxed);
}

static inline int64_t load_counter(_Atomic int64_t *counter) {
  return atomic_load_explicit(counter, memory_order_relaxed);
}

static void update_all_peaks(void) {
  int64_t bytes = small_bytes_flushed + shared.allocated_bytes[C10C_STAT_LARGE_POOL].current;
  int64_t count = small_count_flushed + shared.allocation[C10C_STAT_LARGE_POOL].current;
  c10c_stat *b = &shared.allocated_bytes[C10C_STAT_ALL], *c = &shared.allocation[C10C_STAT_ALL];
  if (bytes > b->peak) b->peak = bytes;
  if (count > c->peak) c->peak = count;
  if (small_bytes_flushed > shared.allocated_bytes[C10C_STAT_SMALL_POOL].peak)
    shared.allocated_bytes[C10C_STAT_SMALL_POOL].peak = small_bytes_flushed;
  if (small_count_flushed > shared.allocation[C10C_STAT_SMALL_POOL].peak)
    shared.allocation[C10C_STAT_SMALL_POOL].peak = small_count_flushed;
}

/* Folds a thread's recent net change into the shared running sums that track peaks. */
static void flush_counts(thread_cache *tc) {
  lock_acquire();
  small_bytes_flushed += tc->unflushed_bytes;
  small_count_flushed += tc->unflushed_count;
  update_all_peaks();
  lock_release();
  tc->unflushed_bytes = tc->unflushed_count = 0;
}

static inline void count_small(thread_cache *tc, int64_t bytes, bool alloc) {
  if (alloc) {
    bump(&tc->counters.alloc_n, 1);
    bump(&tc->counters.alloc_bytes, bytes);
    tc->unflushed_bytes += bytes;
    tc->unflushed_count++;
  } else {
    bump(&tc->counters.free_n, 1);
    bump(&tc->counters.free_bytes, bytes);
    tc->unflushed_bytes -= bytes;
    tc->unflushed_count--;
  }
  if (tc->unflushed_bytes >= FLUSH_BYTES || tc->unflushed_bytes <= -FLUSH_BYTES) flush_counts(tc);
}

static size_t small_class_size(unsigned cls) {
  if (cls < 16) return ((size_t)cls + 1) * ALIGNMENT;
  unsigned p = 10 + (cls - 16) / 4;
  return ((size_t)1 << (p - 2)) * ((cls - 16) % 4 + 5);
}

/* Releases n small blocks of a class to the system (lock held), updating reserved statistics. */
static void release_small_locked(void **blocks, size_t n, unsigned cls) {
  int64_t size = (int64_t)small_class_size(cls);
  for (size_t i = 0; i < n; i++) {
    c10c__os_free(blocks[i]);
    c10c__stat_update(&shared.reserved_bytes[C10C_STAT_SMALL_POOL], -size);
    c10c__stat_update(&shared.reserved_bytes[C10C_STAT_ALL], -size);
    c10c__stat_update(&shared.segment[C10C_STAT_SMALL_POOL], -1);
    c10c__stat_update(&shared.segment[C10C_STAT_ALL], -1);
    shared.num_device_free++;
  }
}

/* Keeps a free small block in the central cache, or gives it back to the system beyond the cap.
 * Lock held. */
static void central_put_locked(void *block, unsigned cls, size_t size) {
  if (cached_bytes + size <= cfg.max_cached_bytes) {
    *(void **)block = central_head[cls];
    central_head[cls] = block;
    central_count[cls]++;
    cached_bytes += size;
  } else {
    release_small_locked(&block, 1, cls);
  }
}

/* Moves a thread's cached blocks of one class to the central cache (or the system, beyond the
 * cap); lock held. keep: how many stay with the thread. */
static void drain_class_locked(thread_cache *tc, unsigned cls, size_t keep) {
  size_t size = small_class_size(cls);
  while (tc->count[cls] > keep) {
    void *block = tc->head[cls];
    tc->head[cls] = *(void **)block;
    tc->count[cls]--;
    central_put_locked(block, cls, size);
  }
}

static void thread_exit(void *arg) {
  thread_cache *tc = arg;
  lock_acquire();
  for (unsigned c = 0; c < SMALL_CLASSES; c++) drain_class_locked(tc, c, 0);
  retired_alloc_n += load_counter(&tc->counters.alloc_n);
  retired_free_n += load_counter(&tc->counters.free_n);
  retired_alloc_bytes += load_counter(&tc->counters.alloc_bytes);
  retired_free_bytes += load_counter(&tc->counters.free_bytes);
  small_bytes_flushed += tc->unflushed_bytes;
  small_count_flushed += tc->unflushed_count;
  if (tc->prev)
    tc->prev->next = tc->next;
  else
    caches = tc->next;
  if (tc->next) tc->next->prev = tc->prev;
  lock_release();
  c10c__free(tc);
  my_cache = NULL;
}

static void make_key(void) { key_ok = c10c__tls_key_create(&cache_key, thread_exit); }

/* A host that unloads libc10c (dlclose) must not have threads call thread_exit afterwards: the
 * key goes with the library. Its caches' memory is then simply not returned. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((destructor)) static void forget_key(void) {
  if (key_ok) c10c__tls_key_delete(cache_key);
}
#endif

static thread_cache *create_cache(void) {
  c10c__once_call(&key_once, make_key);
  thread_cache *tc = key_ok ? c10c__calloc(1, sizeof *tc) : NULL;
  if (tc == NULL || !c10c__tls_set(cache_key, tc)) {
    c10c__free(tc);
    my_cache_failed = true; /* fall back to the central cache for this thread */
    return NULL;
  }
  lock_acquire();
  tc->next = caches;
  if (caches) caches->prev = tc;
  caches = tc;
  lock_release();
  my_cache = tc;
  return tc;
}

static inline thread_cache *get_cache(void) {
  thread_cache *tc = my_cache;
  if (tc != NULL || my_cache_failed) return tc;
  return create_cache();
}

/* ---- out of memory ---- */

static void release_all_cached(void);

static c10c_status out_of_memory(size_t requested, int err) {
  lock_acquire();
  shared.num_ooms++;
  lock_release();
  c10c_memory_stats s;
  c10c__cpu_caching_stats(&s);
  return c10c__fail(
      C10C_STATUS_OUT_OF_MEMORY,
      "DefaultCPUAllocator: can't allocate memory: you tried to allocate %zu bytes. "
      "Error code %d (%s). libc10c's caching CPU allocator had %" PRId64
      " bytes allocated and %" PRId64 " bytes cached, released its cache and retried once.",
      requested, err, strerror(err), s.allocated_bytes[C10C_STAT_ALL].current,
      s.reserved_bytes[C10C_STAT_ALL].current - s.allocated_bytes[C10C_STAT_ALL].current);
}

/* Runs an allocation from the system; on failure releases every cache and tries once more. */
#define WITH_RETRY(err, call)     \
  do {                            \
    err = (call);                 \
    if (err != 0) {               \
      release_all_cached();       \
      lock_acquire();             \
      shared.num_alloc_retries++; \
      lock_release();             \
      err = (call);               \
    }                             \
  } while (0)

/* ---- small blocks ---- */

static void small_deleter(void *ctx);

static c10c_status small_alloc_slow(thread_cache *tc, unsigned cls, size_t size, size_t requested,
                                    c10c_data_ptr *out) {
  void *block = NULL;
  size_t limit = tc ? atomic_load_explicit(&thread_cache_bytes, memory_order_relaxed) / size : 0;
  lock_acquire();
  if (central_count[cls] > 0) {
    block = central_head[cls];
    central_head[cls] = *(void **)block;
    central_count[cls]--;
    cached_bytes -= size;
    /* Refill the thread cache with up to half its capacity in one visit to the lock. */
    for (size_t moved = 0; tc && moved < limit / 2 && central_count[cls] > 0; moved++) {
      void *b = central_head[cls];
      central_head[cls] = *(void **)b;
      central_count[cls]--;
      cached_bytes -= size;
      *(void **)b = tc->head[cls];
      tc->head[cls] = b;
      tc->count[cls]++;
    }
  }
  lock_release();
  if (block == NULL) {
    int err;
    WITH_RETRY(err, c10c__os_alloc(&block, size, ALIGNMENT));
    if (err != 0) return out_of_memory(requested, err);
    lock_acquire();
    c10c__stat_update(&shared.reserved_bytes[C10C_STAT_SMALL_POOL], (int64_t)size);
    c10c__stat_update(&shared.reserved_bytes[C10C_STAT_ALL], (int64_t)size);
    c10c__stat_update(&shared.segment[C10C_STAT_SMALL_POOL], 1);
    c10c__stat_update(&shared.segment[C10C_STAT_ALL], 1);
    shared.num_device_alloc++;
    lock_release();
  }
  if (tc) {
    count_small(tc, (int64_t)size, true);
  } else {
    lock_acquire();
    retired_alloc_n++;
    retired_alloc_bytes += (int64_t)size;
    small_bytes_flushed += (int64_t)size;
    small_count_flushed++;
    update_all_peaks();
    lock_release();
  }
  out->data = block;
  out->ctx = (void *)((uintptr_t)block | cls); /* blocks are 64-aligned: the class fits */
  out->deleter = small_deleter;
  return C10C_STATUS_OK;
}

static void small_deleter(void *ctx) {
  unsigned cls = (unsigned)((uintptr_t)ctx & (ALIGNMENT - 1));
  void *block = (void *)((uintptr_t)ctx & ~(uintptr_t)(ALIGNMENT - 1));
  size_t size = small_class_size(cls);
  thread_cache *tc = get_cache();
  if (tc != NULL) {
    *(void **)block = tc->head[cls];
    tc->head[cls] = block;
    tc->count[cls]++;
    count_small(tc, (int64_t)size, false);
    size_t budget = atomic_load_explicit(&thread_cache_bytes, memory_order_relaxed);
    if (tc->count[cls] * size > budget) {
      lock_acquire();
      drain_class_locked(tc, cls, budget / size / 2);
      lock_release();
    }
    return;
  }
  lock_acquire();
  retired_free_n++;
  retired_free_bytes += (int64_t)size;
  small_bytes_flushed -= (int64_t)size;
  small_count_flushed--;
  central_put_locked(block, cls, size);
  lock_release();
}

/* ---- large blocks ---- */

static void bin_remove(large_block *b) {
  if (b->bin_prev)
    b->bin_prev->bin_next = b->bin_next;
  else
    bins[b->cls] = b->bin_next;
  if (b->bin_next) b->bin_next->bin_prev = b->bin_prev;
  if (b->lru_prev)
    b->lru_prev->lru_next = b->lru_next;
  else
    lru_head = b->lru_next;
  if (b->lru_next)
    b->lru_next->lru_prev = b->lru_prev;
  else
    lru_tail = b->lru_prev;
  cached_bytes -= b->size;
}

static void bin_push(large_block *b) {
  b->bin_prev = NULL;
  b->bin_next = bins[b->cls];
  if (bins[b->cls]) bins[b->cls]->bin_prev = b;
  bins[b->cls] = b;
  b->lru_prev = NULL;
  b->lru_next = lru_head;
  if (lru_head) lru_head->lru_prev = b;
  lru_head = b;
  if (lru_tail == NULL) lru_tail = b;
  cached_bytes += b->size;
}

/* Unlinks cached large blocks, least recently freed first, until at least `bytes` are gathered;
 * returns them as a list (through lru_next) to release after the lock is dropped. */
static large_block *evict_locked(size_t bytes) {
  large_block *list = NULL;
  size_t gathered = 0;
  while (gathered < bytes && lru_tail != NULL) {
    large_block *b = lru_tail;
    bin_remove(b);
    gathered += b->size;
    b->lru_next = list;
    list = b;
  }
  return list;
}

static void release_large_list(large_block *list) {
  while (list != NULL) {
    large_block *next = list->lru_next;
    c10c__os_unmap(list->ptr, list->size);
    lock_acquire();
    c10c__stat_update(&shared.reserved_bytes[C10C_STAT_LARGE_POOL], -(int64_t)list->size);
    c10c__stat_update(&shared.reserved_bytes[C10C_STAT_ALL], -(int64_t)list->size);
    c10c__stat_update(&shared.segment[C10C_STAT_LARGE_POOL], -1);
    c10c__stat_update(&shared.segment[C10C_STAT_ALL], -1);
    shared.num_device_free++;
    lock_release();
    c10c__free(list);
    list = next;
  }
}

static void large_deleter(void *ctx);

static void count_large_locked(const large_block *b, int sign) {
  c10c__stat_update(&shared.allocated_bytes[C10C_STAT_LARGE_POOL], sign * (int64_t)b->size);
  c10c__stat_update(&shared.allocation[C10C_STAT_LARGE_POOL], sign);
  c10c__stat_update(&shared.requested_bytes[C10C_STAT_LARGE_POOL], sign * (int64_t)b->requested);
  c10c__stat_update(&shared.requested_bytes[C10C_STAT_ALL], sign * (int64_t)b->requested);
  update_all_peaks();
}

/* Takes a cached block of the request's class (or the next, at most 25% larger); on a miss,
 * unlinks the least recently freed block as *victim to be resized. Lock held. */
static large_block *take_cached_locked(unsigned cls, size_t requested, large_block **victim) {
  large_block *b = bins[cls];
  if (b == NULL && cls + 1 < MAX_CLASSES) b = bins[cls + 1];
  if (b != NULL) {
    bin_remove(b);
    b->requested = requested;
    count_large_locked(b, +1);
    return b;
  }
  *victim = lru_tail;
  if (lru_tail != NULL) bin_remove(lru_tail);
  return NULL;
}

/* Resizes a victim block to serve the request, so its pages (already faulted in) need not be
 * mapped afresh; a block that must sit on huge pages is resized only in place, since moving could
 * misalign it. Returns the block, or NULL after releasing the victim. */
static large_block *reuse_victim(large_block *victim, unsigned cls, size_t size, size_t requested,
                                 size_t *dirty) {
  void *ptr = victim->ptr;
  size_t old_size = victim->size;
  bool huge = atomic_load_explicit(&huge_pages, memory_order_relaxed) && size >= HUGE_THRESHOLD;
  bool aligned = ((uintptr_t)ptr & (HUGE_THRESHOLD - 1)) == 0;
  bool resized = c10c__os_remap(&ptr, old_size, size, !huge || !aligned) == 0;
  bool usable = resized && (!huge || ((uintptr_t)ptr & (HUGE_THRESHOLD - 1)) == 0);
  lock_acquire();
  if (resized) {
    int64_t delta = (int64_t)size - (int64_t)old_size;
    c10c__stat_update(&shared.reserved_bytes[C10C_STAT_LARGE_POOL], delta);
    c10c__stat_update(&shared.reserved_bytes[C10C_STAT_ALL], delta);
    shared.num_device_alloc++;
    victim->ptr = ptr;
    victim->size = size;
  }
  if (usable) {
    *dirty = old_size < size ? old_size : size; /* mremap's new pages are zero */
    *victim = (large_block){.ptr = ptr, .size = size, .requested = requested, .cls = cls};
    count_large_locked(victim, +1);
  }
  lock_release();
  if (usable) return victim;
  victim->lru_next = NULL;
  release_large_list(victim);
  return NULL;
}

/* Maps a new block, releasing the caches and retrying once when the system refuses. */
static c10c_status map_fresh(unsigned cls, size_t size, size_t requested, large_block **out) {
  void *ptr;
  int err;
  bool huge = atomic_load_explicit(&huge_pages, memory_order_relaxed) && size >= HUGE_THRESHOLD;
  WITH_RETRY(err, c10c__os_map(&ptr, size, huge));
  if (err != 0) return out_of_memory(requested, err);
  large_block *b = c10c__malloc(sizeof *b);
  if (b == NULL) {
    c10c__os_unmap(ptr, size);
    return out_of_memory(requested, ENOMEM);
  }
  *b = (large_block){.ptr = ptr, .size = size, .requested = requested, .cls = cls};
  lock_acquire();
  c10c__stat_update(&shared.reserved_bytes[C10C_STAT_LARGE_POOL], (int64_t)size);
  c10c__stat_update(&shared.reserved_bytes[C10C_STAT_ALL], (int64_t)size);
  c10c__stat_update(&shared.segment[C10C_STAT_LARGE_POOL], 1);
  c10c__stat_update(&shared.segment[C10C_STAT_ALL], 1);
  shared.num_device_alloc++;
  count_large_locked(b, +1);
  lock_release();
  *out = b;
  return C10C_STATUS_OK;
}

/* A large block; *dirty says how many of its first bytes may hold old data (the rest is fresh
 * from the kernel, so zero). */
static c10c_status large_alloc(size_t requested, c10c_data_ptr *out, size_t *dirty) {
  size_t size;
  unsigned cls = class_of(requested, &size);
  large_block *victim = NULL;
  lock_acquire();
  large_block *b = take_cached_locked(cls, requested, &victim);
  lock_release();
  *dirty = size;
  if (b == NULL && victim != NULL) b = reuse_victim(victim, cls, size, requested, dirty);
  if (b == NULL) {
    c10c_status st = map_fresh(cls, size, requested, &b);
    if (st != C10C_STATUS_OK) return st;
    *dirty = 0;
  }
  out->data = b->ptr;
  out->ctx = b;
  out->deleter = large_deleter;
  return C10C_STATUS_OK;
}

static void large_deleter(void *ctx) {
  large_block *b = ctx;
  large_block *evicted = NULL;
  lock_acquire();
  count_large_locked(b, -1);
  if (b->size > cfg.max_cached_bytes) {
    b->lru_next = NULL;
    evicted = b;
  } else {
    if (cached_bytes + b->size > cfg.max_cached_bytes)
      evicted = evict_locked(cached_bytes + b->size - cfg.max_cached_bytes);
    bin_push(b);
  }
  lock_release();
  release_large_list(evicted);
}

/* ---- the allocator ---- */

static c10c_status caching_allocate_slow(size_t nbytes, size_t alignment, c10c_data_ptr *out) {
  c10c_status st = check_environment();
  if (st != C10C_STATUS_OK) return st;
  if (nbytes == 0) {
    out->data = out->ctx = NULL;
    out->deleter = NULL;
    return C10C_STATUS_OK;
  }
  if (alignment > ALIGNMENT)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "the caching CPU allocator aligns to %d bytes, %zu was asked", ALIGNMENT,
                      alignment);
  if (nbytes > LARGEST_REQUEST) return out_of_memory(nbytes, ENOMEM);
  size_t dirty;
  if (nbytes > SMALL_MAX) return large_alloc(nbytes, out, &dirty);
  size_t size;
  unsigned cls = class_of(nbytes, &size);
  return small_alloc_slow(get_cache(), cls, size, nbytes, out);
}

/* The fast path: a small block from this thread's cache, no locks, no atomic read-modify-write.
 * The caller (c10c_allocator_allocate) has set out->device. */
static c10c_status caching_allocate(c10c_data_ptr *out, void *self, size_t nbytes,
                                    size_t alignment) {
  (void)self;
  thread_cache *tc = my_cache; /* exists only after the environment was read */
  if (tc != NULL && nbytes - 1 < SMALL_MAX && alignment <= ALIGNMENT) {
    size_t size;
    unsigned cls = class_of(nbytes, &size);
    void *block = tc->head[cls];
    if (block != NULL) {
      tc->head[cls] = *(void **)block;
      tc->count[cls]--;
      count_small(tc, (int64_t)size, true);
      out->data = block;
      out->ctx = (void *)((uintptr_t)block | cls); /* 64-aligned blocks: the class fits */
      out->deleter = small_deleter;
      int mode = atomic_load_explicit(&fill_mode, memory_order_relaxed);
      if (mode != C10C__FILL_NONE) fill_block(block, nbytes, mode);
      return C10C_STATUS_OK;
    }
  }
  c10c_status st = caching_allocate_slow(nbytes, alignment, out);
  int mode = atomic_load_explicit(&fill_mode, memory_order_relaxed);
  if (st == C10C_STATUS_OK && mode != C10C__FILL_NONE && out->data != NULL)
    fill_block(out->data, nbytes, mode);
  return st;
}

c10c_status c10c__cpu_caching_allocate(c10c_data_ptr *out, size_t nbytes) {
  return caching_allocate(out, NULL, nbytes, ALIGNMENT);
}

c10c_status c10c__cpu_caching_allocate_zeroed(c10c_data_ptr *out, size_t nbytes) {
  out->device = (c10c_device){C10C_DEVICE_TYPE_CPU, -1};
  if (nbytes <= SMALL_MAX || nbytes > LARGEST_REQUEST) {
    c10c_status st = caching_allocate(out, NULL, nbytes, ALIGNMENT);
    if (st == C10C_STATUS_OK && out->data != NULL) memset(out->data, 0, nbytes);
    return st;
  }
  c10c_status st = check_environment();
  size_t dirty = 0;
  if (st == C10C_STATUS_OK) st = large_alloc(nbytes, out, &dirty);
  if (st == C10C_STATUS_OK) memset(out->data, 0, dirty < nbytes ? dirty : nbytes);
  return st;
}

/* Gives the central cache's small blocks back to the system until the caches hold at most
 * `keep` bytes (lock held). */
static void release_central_locked(size_t keep) {
  for (unsigned c = 0; c < SMALL_CLASSES && cached_bytes > keep; c++) {
    while (central_count[c] > 0 && cached_bytes > keep) {
      void *block = central_head[c];
      central_head[c] = *(void **)block;
      central_count[c]--;
      cached_bytes -= small_class_size(c);
      release_small_locked(&block, 1, c);
    }
  }
}

static void release_all_cached(void) {
  thread_cache *tc = my_cache;
  lock_acquire();
  if (tc != NULL)
    for (unsigned c = 0; c < SMALL_CLASSES; c++) drain_class_locked(tc, c, 0);
  release_central_locked(0);
  large_block *evicted = evict_locked(SIZE_MAX);
  lock_release();
  release_large_list(evicted);
}

static void caching_empty_cache(void *self) {
  (void)self;
  release_all_cached();
}

c10c_status c10c__cpu_caching_stats(c10c_memory_stats *out) {
  memset(out, 0, sizeof *out);
  lock_acquire();
  *out = shared;
  int64_t alloc_n = retired_alloc_n, free_n = retired_free_n;
  int64_t alloc_bytes = retired_alloc_bytes, free_bytes = retired_free_bytes;
  for (thread_cache *tc = caches; tc != NULL; tc = tc->next) {
    alloc_n += load_counter(&tc->counters.alloc_n);
    free_n += load_counter(&tc->counters.free_n);
    alloc_bytes += load_counter(&tc->counters.alloc_bytes);
    free_bytes += load_counter(&tc->counters.free_bytes);
  }
  lock_release();
  c10c_stat *sb = &out->allocated_bytes[C10C_STAT_SMALL_POOL];
  c10c_stat *sn = &out->allocation[C10C_STAT_SMALL_POOL];
  sb->current = alloc_bytes - free_bytes;
  sb->allocated = alloc_bytes;
  sb->freed = free_bytes;
  if (sb->current > sb->peak) sb->peak = sb->current;
  sn->current = alloc_n - free_n;
  sn->allocated = alloc_n;
  sn->freed = free_n;
  if (sn->current > sn->peak) sn->peak = sn->current;
  /* Small blocks carry no header, so their requested size is their class size. */
  out->requested_bytes[C10C_STAT_SMALL_POOL] = *sb;
  const c10c_stat *lb = &out->allocated_bytes[C10C_STAT_LARGE_POOL];
  const c10c_stat *ln = &out->allocation[C10C_STAT_LARGE_POOL];
  c10c_stat *ab = &out->allocated_bytes[C10C_STAT_ALL], *an = &out->allocation[C10C_STAT_ALL];
  ab->current = sb->current + lb->current;
  ab->allocated = sb->allocated + lb->allocated;
  ab->freed = sb->freed + lb->freed;
  if (ab->current > ab->peak) ab->peak = ab->current;
  an->current = sn->current + ln->current;
  an->allocated = sn->allocated + ln->allocated;
  an->freed = sn->freed + ln->freed;
  if (an->current > an->peak) an->peak = an->current;
  c10c_stat *ra = &out->requested_bytes[C10C_STAT_ALL];
  const c10c_stat *rl = &out->requested_bytes[C10C_STAT_LARGE_POOL];
  ra->current = sb->current + rl->current;
  ra->allocated = sb->allocated + rl->allocated;
  ra->freed = sb->freed + rl->freed;
  if (ra->current > ra->peak) ra->peak = ra->current;
  for (int i = 0; i < 3; i++) { /* no streams: active is allocated */
    out->active[i] = out->allocation[i];
    out->active_bytes[i] = out->allocated_bytes[i];
  }
  out->max_split_size = -1;
  out->struct_size = sizeof *out;
  return C10C_STATUS_OK;
}

static c10c_status caching_get_stats(c10c_memory_stats *out, void *self) {
  (void)self;
  c10c_memory_stats all;
  c10c__cpu_caching_stats(&all);
  c10c__copy_versioned(out, &all, sizeof all);
  return C10C_STATUS_OK;
}

static void caching_reset_peak(void *self) {
  (void)self;
  c10c_memory_stats now;
  c10c__cpu_caching_stats(&now);
  lock_acquire();
  c10c__stats_reset_peaks(&shared, &now);
  small_bytes_flushed = now.allocated_bytes[C10C_STAT_SMALL_POOL].current;
  small_count_flushed = now.allocation[C10C_STAT_SMALL_POOL].current;
  lock_release();
}

c10c_status c10c_cpu_caching_allocator_configure(const char *config_text) {
  C10C__CHECK_NOT_NULL(config_text);
  c10c__once_call(&env_once, read_environment);
  char msg[200];
  lock_acquire();
  c10c_status st = c10c__parse_cpu_alloc_config(config_text, &cfg, msg, sizeof msg);
  large_block *evicted = NULL;
  if (st == C10C_STATUS_OK) {
    publish_config();
    atomic_store_explicit(&env_status, C10C_STATUS_OK, memory_order_relaxed); /* overrides */
    /* a lower cap holds from now on: what the caches keep beyond it goes back */
    if (cached_bytes > cfg.max_cached_bytes)
      evicted = evict_locked(cached_bytes - cfg.max_cached_bytes);
    release_central_locked(cfg.max_cached_bytes);
  }
  lock_release();
  release_large_list(evicted);
  if (st != C10C_STATUS_OK) return c10c__fail(st, "%s", msg);
  return C10C_STATUS_OK;
}

static c10c_allocator caching_allocator = {
    .obj = {.refcount = C10C__IMMORTAL_REF, .type = &c10c__immortal_type},
    .vt =
        {
            .struct_size = sizeof(c10c_allocator_vtable),
            .allocate = caching_allocate,
            .get_stats = caching_get_stats,
            .empty_cache = caching_empty_cache,
            .reset_peak_stats = caching_reset_peak,
            .name = "cpu_caching",
        },
    .device_type = C10C_DEVICE_TYPE_CPU,
    .builtin = true,
};

c10c_allocator *c10c_cpu_caching_allocator(void) { return &caching_allocator; }

/* c10's REGISTER_ALLOCATOR(kCPU, ...): the registry's CPU allocator until one is set. */
C10C__AT_LOAD(register_cpu_caching) { c10c__allocator_register_builtin(&caching_allocator); }
