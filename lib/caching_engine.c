/* PyTorch's caching algorithm for device memory (see caching_engine.h), in C over a segment
 * backend. Free blocks of a pool are kept in one list ordered by (stream, size, address), so the
 * first fit of a stream is its best fit; blocks of a segment are linked in address order, so a
 * freed block merges with free neighbours in O(1); allocated blocks are found by address in a
 * hash table. */
#include "caching_engine.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "allocator_internal.h"
#include "sysmem.h"

typedef struct block {
  char *ptr;
  size_t size, requested;
  c10c_stream_id stream;
  int device;
  bool small, allocated;
  bool pending;         /* freed, waiting for events of the streams it was used on */
  int events;           /* how many of those events are outstanding */
  c10c_stream_id *uses; /* other streams it was used on (record_stream) */
  size_t nuses;
  struct block *prev, *next;           /* neighbours in the segment, by address */
  struct block *pool_prev, *pool_next; /* the pool's free list, when free */
  struct block *hash_next;             /* the address table, when allocated */
} block;

/* An event recorded at free time on a stream a block was used on. */
typedef struct pending_event {
  void *event;
  block *b;
  struct pending_event *next;
} pending_event;

typedef struct device_state {
  block *pools[2]; /* free lists: [0] small, [1] large */
  pending_event *events;
  size_t allowed; /* set_per_process_memory_fraction's limit on reserved bytes; SIZE_MAX: none */
  c10c_memory_stats stats;
} device_state;

enum { BUCKETS = 1 << 12 };

struct c10c__engine {
  pthread_mutex_t lock;
  c10c__segment_backend backend;
  c10c__device_alloc_config config;
  int devices;
  device_state *state;
  block *table[BUCKETS];
};

size_t c10c__engine_round_size(size_t size) { return c10c__engine_round_size_with(size, 0); }

/* PyTorch's roundup_power2_next_division: the interval between two powers of two is cut into
 * `divisions` equal steps and size goes up to the next step. */
static size_t next_division(size_t size, size_t divisions) {
  if ((size & (size - 1)) == 0) return size;
  size_t floor = (size_t)1 << (63 - __builtin_clzll((unsigned long long)size));
  size_t step = floor >> (63 - __builtin_clzll((unsigned long long)divisions));
  if (step == 0) return floor << 1;
  size_t rounded = size & ~(step - 1);
  return rounded == size ? size : rounded + step;
}

size_t c10c__engine_round_size_with(size_t size, size_t divisions) {
  if (size < C10C__MIN_BLOCK) return C10C__MIN_BLOCK;
  if (divisions > 1 && size > C10C__MIN_BLOCK * divisions) return next_division(size, divisions);
  return C10C__MIN_BLOCK * ((size + C10C__MIN_BLOCK - 1) / C10C__MIN_BLOCK);
}

size_t c10c__engine_segment_size(size_t rounded) {
  if (rounded <= C10C__SMALL_SIZE) return C10C__SMALL_BUFFER;
  if (rounded < C10C__MIN_LARGE_ALLOC) return C10C__LARGE_BUFFER;
  return C10C__ROUND_LARGE * ((rounded + C10C__ROUND_LARGE - 1) / C10C__ROUND_LARGE);
}

/* torch's format_size: "20.00 MiB" */
void c10c__format_size(char *out, size_t size, double bytes) {
  static const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) bytes /= 1024, u++;
  if (u == 0)
    snprintf(out, size, "%.0f %s", bytes, units[u]);
  else
    snprintf(out, size, "%.2f %s", bytes, units[u]);
}

/* ---- statistics: all and the block's pool ---- */

static void stat(c10c_stat *s, bool small, int64_t delta) {
  c10c__stat_update(&s[C10C_STAT_ALL], delta);
  c10c__stat_update(&s[small ? C10C_STAT_SMALL_POOL : C10C_STAT_LARGE_POOL], delta);
}

/* ---- the pools ---- */

static bool before(const block *a, const block *b) {
  if (a->stream != b->stream) return a->stream < b->stream;
  if (a->size != b->size) return a->size < b->size;
  return a->ptr < b->ptr;
}

static void pool_insert(block **pool, block *b) {
  block *prev = NULL, *at = *pool;
  while (at != NULL && before(at, b)) prev = at, at = at->pool_next;
  b->pool_prev = prev;
  b->pool_next = at;
  if (at) at->pool_prev = b;
  if (prev)
    prev->pool_next = b;
  else
    *pool = b;
}

static void pool_remove(block **pool, block *b) {
  if (b->pool_prev)
    b->pool_prev->pool_next = b->pool_next;
  else
    *pool = b->pool_next;
  if (b->pool_next) b->pool_next->pool_prev = b->pool_prev;
  b->pool_prev = b->pool_next = NULL;
}

/* The smallest free block of stream that holds size (PyTorch's get_free_block), with its
 * max_split_size rules: no oversize block for a request below the limit, and an oversize request
 * takes an oversize block at most 20 MiB larger. */
static block *best_fit(block *pool, c10c_stream_id stream, size_t size, size_t max_split) {
  for (block *b = pool; b != NULL; b = b->pool_next) {
    if (b->stream != stream || b->size < size) continue;
    if (size < max_split && b->size >= max_split) return NULL; /* the rest are larger still */
    if (size >= max_split && b->size >= size + C10C__LARGE_BUFFER) return NULL;
    return b;
  }
  return NULL;
}

static block **pool_of(c10c__engine *e, const block *b) {
  return &e->state[b->device].pools[b->small ? 0 : 1];
}

/* ---- the address table ---- */

static size_t bucket(const void *ptr) {
  uintptr_t p = (uintptr_t)ptr;
  return (size_t)((p >> 9) ^ (p >> 21)) & (BUCKETS - 1);
}

static void table_insert(c10c__engine *e, block *b) {
  size_t i = bucket(b->ptr);
  b->hash_next = e->table[i];
  e->table[i] = b;
}

static block *table_take(c10c__engine *e, const void *ptr) {
  for (block **link = &e->table[bucket(ptr)]; *link != NULL; link = &(*link)->hash_next)
    if ((*link)->ptr == ptr) {
      block *b = *link;
      *link = b->hash_next;
      b->hash_next = NULL;
      return b;
    }
  return NULL;
}

/* ---- segments ---- */

static void process_events(c10c__engine *e, int device, bool wait);

/* Releases the free blocks that are whole segments (PyTorch's release_cached_blocks without the
 * event synchronization, which comes with record_stream). Lock held. */
static void release_cached(c10c__engine *e, int device) {
  device_state *d = &e->state[device];
  if (e->backend.event_synchronize != NULL && d->events != NULL) {
    process_events(e, device, true);
    d->stats.num_sync_all_streams++;
  }
  for (int p = 0; p < 2; p++) {
    block *b = d->pools[p];
    while (b != NULL) {
      block *next = b->pool_next;
      if (b->prev == NULL && b->next == NULL) {
        pool_remove(&d->pools[p], b);
        e->backend.free(e->backend.self, device, b->ptr, b->size);
        stat(d->stats.segment, b->small, -1);
        stat(d->stats.reserved_bytes, b->small, -(int64_t)b->size);
        if (b->size >= e->config.max_split_size) c10c__stat_update(&d->stats.oversize_segments, -1);
        d->stats.num_device_free++;
        c10c__free(b);
      }
      b = next;
    }
  }
}

static c10c_status out_of_memory(c10c__engine *e, int device, size_t size) {
  const c10c_memory_stats *s = &e->state[device].stats;
  char want[32], allocated[32], unallocated[32], capacity[128] = "";
  size_t free_bytes = 0, total = 0;
  if (e->backend.mem_info != NULL &&
      e->backend.mem_info(e->backend.self, device, &free_bytes, &total) == C10C_STATUS_OK) {
    char t[32], f[32];
    c10c__format_size(t, sizeof t, (double)total);
    c10c__format_size(f, sizeof f, (double)free_bytes);
    snprintf(capacity, sizeof capacity, " GPU %d has a total capacity of %s of which %s is free.",
             device, t, f);
  }
  c10c__format_size(want, sizeof want, (double)size);
  int64_t in_use = s->allocated_bytes[C10C_STAT_ALL].current;
  c10c__format_size(allocated, sizeof allocated, (double)in_use);
  c10c__format_size(unallocated, sizeof unallocated,
                    (double)(s->reserved_bytes[C10C_STAT_ALL].current - in_use));
  return c10c__fail(C10C_STATUS_OUT_OF_MEMORY,
                    "CUDA out of memory. Tried to allocate %s.%s Of the allocated memory on device "
                    "%d %s is allocated by libc10c, and %s is reserved by libc10c but unallocated.",
                    want, capacity, device, allocated, unallocated);
}

/* A segment from the backend, unless it would take the device past its memory fraction. */
static c10c_status segment_malloc(c10c__engine *e, int device, size_t size, void **ptr) {
  device_state *d = &e->state[device];
  if ((size_t)d->stats.reserved_bytes[C10C_STAT_ALL].current + size > d->allowed)
    return C10C_STATUS_OUT_OF_MEMORY;
  return e->backend.malloc(e->backend.self, device, size, ptr);
}

/* A new segment holding at least rounded bytes, retried once after releasing the cache. */
static c10c_status new_segment(c10c__engine *e, int device, size_t rounded, bool small,
                               c10c_stream_id stream, block **out) {
  device_state *d = &e->state[device];
  size_t size = c10c__engine_segment_size(rounded);
  block *b = c10c__calloc(1, sizeof *b);
  if (b == NULL) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory (host) for a block");
  void *ptr = NULL;
  c10c_status st = segment_malloc(e, device, size, &ptr);
  if (st == C10C_STATUS_OUT_OF_MEMORY) {
    release_cached(e, device);
    d->stats.num_alloc_retries++;
    st = segment_malloc(e, device, size, &ptr);
  }
  if (st != C10C_STATUS_OK) {
    c10c__free(b);
    if (st != C10C_STATUS_OUT_OF_MEMORY) return st;
    d->stats.num_ooms++;
    return out_of_memory(e, device, rounded);
  }
  *b = (block){.ptr = ptr, .size = size, .stream = stream, .device = device, .small = small};
  stat(d->stats.segment, small, 1);
  stat(d->stats.reserved_bytes, small, (int64_t)size);
  if (size >= e->config.max_split_size) c10c__stat_update(&d->stats.oversize_segments, 1);
  d->stats.num_device_alloc++;
  *out = b;
  return C10C_STATUS_OK;
}

/* ---- the engine ---- */

c10c_status c10c__engine_new(c10c__engine **out, c10c__segment_backend backend, int devices) {
  *out = NULL;
  if (devices < 1) devices = 1;
  c10c__engine *e = c10c__calloc(1, sizeof *e);
  device_state *state = e ? c10c__calloc((size_t)devices, sizeof *state) : NULL;
  if (state == NULL) {
    c10c__free(e);
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory making a caching allocator");
  }
  pthread_mutex_init(&e->lock, NULL);
  e->backend = backend;
  e->config = (c10c__device_alloc_config){SIZE_MAX, 0};
  e->devices = devices;
  e->state = state;
  for (int i = 0; i < devices; i++) {
    state[i].stats.struct_size = sizeof state[i].stats;
    state[i].stats.max_split_size = -1; /* as torch reports "no limit" */
    state[i].allowed = SIZE_MAX;
  }
  *out = e;
  return C10C_STATUS_OK;
}

void c10c__engine_destroy(c10c__engine *e) {
  if (e == NULL) return;
  /* allocated blocks are the caller's leak; their segments go with the cached ones */
  for (size_t i = 0; i < BUCKETS; i++)
    while (e->table[i] != NULL) c10c__engine_free(e, e->table[i]->ptr);
  c10c__engine_empty_cache(e);
  pthread_mutex_destroy(&e->lock);
  c10c__free(e->state);
  c10c__free(e);
}

static bool should_split(const block *b, size_t size, size_t max_split) {
  size_t remaining = b->size - size;
  return b->small ? remaining >= C10C__MIN_BLOCK : size < max_split && remaining > C10C__SMALL_SIZE;
}

c10c_status c10c__engine_malloc(c10c__engine *e, int device, size_t size, c10c_stream_id stream,
                                void **out) {
  *out = NULL;
  if (device < 0 || device >= e->devices)
    return c10c__fail(C10C_STATUS_ERROR, "CUDA error: invalid device ordinal");
  if (size == 0) return C10C_STATUS_OK;
  size_t rounded = c10c__engine_round_size_with(size, e->config.roundup_power2_divisions);
  bool small = rounded <= C10C__SMALL_SIZE;
  pthread_mutex_lock(&e->lock);
  if (e->backend.event_query != NULL)
    for (int i = 0; i < e->devices; i++) process_events(e, i, false);
  device_state *d = &e->state[device];
  block **pool = &d->pools[small ? 0 : 1];
  c10c_status st = C10C_STATUS_OK;
  size_t max_split = e->config.max_split_size;
  block *b = best_fit(*pool, stream, rounded, max_split);
  if (b != NULL)
    pool_remove(pool, b);
  else
    st = new_segment(e, device, rounded, small, stream, &b);
  if (st == C10C_STATUS_OK && should_split(b, rounded, max_split)) {
    block *rest = c10c__calloc(1, sizeof *rest);
    if (rest != NULL) { /* without it the block is just used whole */
      *rest = (block){.ptr = b->ptr + rounded,
                      .size = b->size - rounded,
                      .stream = stream,
                      .device = device,
                      .small = small,
                      .prev = b,
                      .next = b->next};
      if (b->next) b->next->prev = rest;
      b->next = rest;
      b->size = rounded;
      pool_insert(pool, rest);
    }
  }
  if (st == C10C_STATUS_OK) {
    b->allocated = true;
    b->requested = size;
    table_insert(e, b);
    stat(d->stats.allocation, small, 1);
    stat(d->stats.active, small, 1);
    stat(d->stats.allocated_bytes, small, (int64_t)b->size);
    stat(d->stats.active_bytes, small, (int64_t)b->size);
    stat(d->stats.requested_bytes, small, (int64_t)size);
    if (b->size >= max_split) c10c__stat_update(&d->stats.oversize_allocations, 1);
    *out = b->ptr;
  }
  pthread_mutex_unlock(&e->lock);
  return st;
}

/* Folds right into left, its neighbour in the segment; pooled (one of them) leaves its pool
 * first. Returns left. Lock held. */
static block *absorb(c10c__engine *e, block *left, block *right, block *pooled) {
  pool_remove(pool_of(e, pooled), pooled);
  left->size += right->size;
  left->next = right->next;
  if (right->next) right->next->prev = left;
  c10c__free(right);
  return left;
}

/* A block back in its pool, merged with free neighbours (PyTorch's free_block). Lock held. */
static void free_block(c10c__engine *e, block *b) {
  device_state *d = &e->state[b->device];
  stat(d->stats.active, b->small, -1);
  stat(d->stats.active_bytes, b->small, -(int64_t)b->size);
  c10c__free(b->uses);
  b->uses = NULL;
  b->nuses = 0;
  b->pending = false;
  if (b->prev != NULL && !b->prev->allocated && !b->prev->pending)
    b = absorb(e, b->prev, b, b->prev);
  if (b->next != NULL && !b->next->allocated && !b->next->pending)
    b = absorb(e, b, b->next, b->next);
  pool_insert(pool_of(e, b), b);
}

/* One of b's events completed (or was waited for). Lock held. */
static void event_done(c10c__engine *e, pending_event *p) {
  e->backend.event_destroy(e->backend.self, p->event);
  if (--p->b->events == 0) free_block(e, p->b);
  c10c__free(p);
}

/* Returns the blocks whose streams are done to their pools (PyTorch's process_events); with
 * wait, waits for every event first (synchronize_and_free_events). Lock held. */
static void process_events(c10c__engine *e, int device, bool wait) {
  pending_event **link = &e->state[device].events;
  while (*link != NULL) {
    pending_event *p = *link;
    bool done = false;
    if (wait) {
      e->backend.event_synchronize(e->backend.self, p->event);
      done = true;
    } else if (e->backend.event_query(e->backend.self, p->event, &done) != C10C_STATUS_OK) {
      done = false; /* asked again at the next malloc */
    }
    if (done) {
      *link = p->next;
      event_done(e, p);
    } else {
      link = &p->next;
    }
  }
}

/* Records an event on every stream b was used on; b is pending until they complete. If an
 * event cannot be recorded, b never returns (the safe side: memory held, not reused early).
 * Lock held. */
static void insert_events(c10c__engine *e, block *b) {
  device_state *d = &e->state[b->device];
  b->pending = true;
  for (size_t i = 0; i < b->nuses; i++) {
    pending_event *p = c10c__malloc(sizeof *p);
    void *event = NULL;
    if (p == NULL || e->backend.event_record(e->backend.self, b->device, b->uses[i], &event) != 0) {
      c10c__free(p);
      b->events = -1; /* never reaches 0 */
      continue;
    }
    *p = (pending_event){event, b, d->events};
    d->events = p;
    if (b->events >= 0) b->events++;
  }
}

c10c_status c10c__engine_free(c10c__engine *e, void *ptr) {
  if (ptr == NULL) return C10C_STATUS_OK;
  pthread_mutex_lock(&e->lock);
  block *b = table_take(e, ptr);
  if (b == NULL) {
    pthread_mutex_unlock(&e->lock);
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "free of %p, which the caching allocator did not allocate (or already "
                      "freed)",
                      ptr);
  }
  device_state *d = &e->state[b->device];
  stat(d->stats.allocation, b->small, -1);
  stat(d->stats.allocated_bytes, b->small, -(int64_t)b->size);
  stat(d->stats.requested_bytes, b->small, -(int64_t)b->requested);
  if (b->size >= e->config.max_split_size) c10c__stat_update(&d->stats.oversize_allocations, -1);
  b->allocated = false;
  if (b->nuses > 0 && e->backend.event_record != NULL)
    insert_events(e, b);
  else
    free_block(e, b);
  pthread_mutex_unlock(&e->lock);
  return C10C_STATUS_OK;
}

c10c_status c10c__engine_record_stream(c10c__engine *e, void *ptr, c10c_stream_id stream) {
  pthread_mutex_lock(&e->lock);
  block *b = NULL;
  for (b = e->table[bucket(ptr)]; b != NULL && b->ptr != ptr; b = b->hash_next) {
  }
  c10c_status st = C10C_STATUS_OK;
  if (b == NULL) {
    st = c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                    "record_stream of %p, which the caching allocator did not allocate", ptr);
  } else if (stream != b->stream) {
    bool known = false;
    for (size_t i = 0; i < b->nuses && !known; i++) known = b->uses[i] == stream;
    if (!known) {
      c10c_stream_id *grown = c10c__malloc((b->nuses + 1) * sizeof *grown);
      if (grown == NULL) {
        st = c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory recording a stream use");
      } else {
        if (b->nuses) memcpy(grown, b->uses, b->nuses * sizeof *grown);
        grown[b->nuses++] = stream;
        c10c__free(b->uses);
        b->uses = grown;
      }
    }
  }
  pthread_mutex_unlock(&e->lock);
  return st;
}

void c10c__engine_empty_cache(c10c__engine *e) {
  pthread_mutex_lock(&e->lock);
  for (int i = 0; i < e->devices; i++) release_cached(e, i);
  pthread_mutex_unlock(&e->lock);
}

void c10c__engine_configure(c10c__engine *e, const c10c__device_alloc_config *config) {
  pthread_mutex_lock(&e->lock);
  e->config = *config;
  for (int i = 0; i < e->devices; i++)
    e->state[i].stats.max_split_size =
        config->max_split_size == SIZE_MAX ? -1 : (int64_t)config->max_split_size;
  pthread_mutex_unlock(&e->lock);
}

void c10c__engine_set_limit(c10c__engine *e, int device, size_t bytes) {
  if (device < 0 || device >= e->devices) return;
  pthread_mutex_lock(&e->lock);
  e->state[device].allowed = bytes;
  pthread_mutex_unlock(&e->lock);
}

void c10c__engine_reset_peaks(c10c__engine *e, int device) {
  if (device < 0 || device >= e->devices) return;
  pthread_mutex_lock(&e->lock);
  c10c_memory_stats *s = &e->state[device].stats;
  c10c__stats_reset_peaks(s, s);
  pthread_mutex_unlock(&e->lock);
}

c10c_status c10c__engine_stats(c10c__engine *e, int device, c10c_memory_stats *out) {
  if (device < 0 || device >= e->devices)
    return c10c__fail(C10C_STATUS_ERROR, "CUDA error: invalid device ordinal");
  pthread_mutex_lock(&e->lock);
  c10c__stats_copy_prefix(out, &e->state[device].stats);
  pthread_mutex_unlock(&e->lock);
  return C10C_STATUS_OK;
}
