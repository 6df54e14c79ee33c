/* PyTorch's caching algorithm for device memory (see caching_engine.h), in C over a segment
 * backend. Free blocks of a pool are kept in one list ordered by (stream, size, address), so the
 * first fit of a stream is its best fit; blocks of a segment are linked in address order, so a
 * freed block merges with free neighbours in O(1); allocated blocks are found by address in a
 * hash table. */
#include "caching_engine.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator_internal.h"
#include "os.h"
#include "planner.h"
#include "sysmem.h"

typedef struct segment segment;

typedef struct block {
  char *ptr;
  size_t size, requested;
  c10c_stream_id stream;
  segment *seg;
  bool small, allocated;
  bool pending;         /* freed, waiting for events of the streams it was used on */
  bool mapped;          /* false: address space of an expandable segment without memory */
  bool lent;            /* whole free pages mapped into the stitched range `stitch` too */
  int events;           /* how many of those events are outstanding */
  c10c_stream_id *uses; /* other streams it was used on (record_stream) */
  size_t nuses;
  uint64_t gc_base;                    /* the pool's get_free_block count when it was cached */
  int bin;                             /* its size bin, while in a pool */
  struct block *prev, *next;           /* neighbours in the segment, by address */
  struct block *pool_prev, *pool_next; /* the pool's free list (or the unmapped list) */
  struct block *hash_next;             /* the address table, when allocated */
  uint64_t plan_tag;                   /* planning: its request in the step's recording */
  segment *stitch;                     /* lent: the stitched range its pages are mapped in */
} block;

/* A segment: a backend allocation, or an expandable segment (an address range whose pages are
 * mapped as needed; its blocks cover the whole range, mapped or not). */
struct segment {
  char *base;
  size_t size;
  int device;
  c10c_stream_id stream;
  bool small, expandable;
  bool stitched;  /* a stitched range (expandable too): other segments' pages mapped anew */
  size_t page;    /* expandable: the mapping granularity (2 MiB small, 20 MiB large) */
  void **handles; /* expandable: per page, NULL when unmapped (stitched: the source pages') */
  block **parts;  /* stitched: the lent blocks whose pages it maps, in that order */
  size_t nparts;
  block *head;      /* the block at base (never merged away: merges keep the left block) */
  uint64_t used_at; /* the device's allocation count when a block of it was last handed out */
  segment *prev, *next;
};

/* An event recorded at free time on a stream a block was used on. */
typedef struct pending_event {
  void *event;
  block *b;
  c10c_stream_id stream; /* where it was recorded */
  struct pending_event *next;
} pending_event;

/* An allocator event for snapshots (PyTorch's TraceEntry). */
typedef enum trace_action {
  TRACE_ALLOC,
  TRACE_FREE_REQUESTED,
  TRACE_FREE_COMPLETED,
  TRACE_SEGMENT_ALLOC,
  TRACE_SEGMENT_FREE,
  TRACE_SEGMENT_MAP,
  TRACE_SEGMENT_UNMAP,
  TRACE_OOM
} trace_action;

static const char *const trace_names[] = {
    "alloc",        "free_requested", "free_completed", "segment_alloc",
    "segment_free", "segment_map",    "segment_unmap",  "oom"};

typedef struct trace_entry {
  trace_action action;
  uintptr_t addr;
  size_t size;
  c10c_stream_id stream;
  int64_t time_us;
} trace_entry;

/* Free blocks in size bins (4 per power of two), each bin a list ordered by (stream, size,
 * address), with a bitmap of the bins in use: the first fit of a stream from the request's bin
 * on is its best fit, found without walking every free block. */
enum { BINS = 256 };

typedef struct pool {
  block *bins[BINS];
  uint64_t used[BINS / 64];
} pool;

typedef struct device_state {
  pool pools[2];       /* free blocks: [0] small, [1] large */
  block *unmapped[2];  /* unmapped ranges of expandable segments, by (stream, address) */
  block *stitch_cache; /* free stitched ranges (their one block), by (stream, size, address) */
  segment *segments;
  pending_event *events;
  size_t allowed;    /* set_per_process_memory_fraction's limit on reserved bytes; SIZE_MAX: none */
  uint64_t gc_calls; /* get_free_block calls on the large pool while garbage collection is on */
  int64_t stream_waits; /* blocks handed to another stream by stream-ordered reuse */
  size_t stuck;         /* freed blocks some of whose record_stream events could not be recorded */
  trace_entry *trace;   /* ring of e->trace_capacity entries */
  size_t trace_next, trace_count;
  c10c__plan_state *plan; /* planning:True or plan_file (plan_engine.c); NULL: never asked */
  uint64_t handed;        /* blocks handed out so far (segment.used_at counts on it) */
  c10c_memory_stats stats;
} device_state;

enum { BUCKETS = 1 << 12 };

struct c10c__engine {
  c10c__mutex lock;
  c10c__segment_backend backend;
  c10c__device_alloc_config config;
  int devices;
  size_t trace_capacity;
  block *spare; /* block records kept for reuse (no host malloc on a split) */
  size_t nspare;
  device_state *state;
  block *table[BUCKETS];
  size_t in_table;              /* blocks in the table (the allocated ones) */
  bool planning;                /* some device has a plan state */
  const c10c__plan_hooks *plan; /* the planned mode (plan_engine.c); NULL: none */
};

/* A zeroed block record: a spare one, or new host memory (NULL without). Lock held. */
static block *block_new(c10c__engine *e) {
  block *b = e->spare;
  if (b == NULL) return c10c__calloc(1, sizeof *b);
  e->spare = b->pool_next;
  e->nspare--;
  memset(b, 0, sizeof *b);
  return b;
}

/* Keeps up to 4096 records for reuse. Lock held. */
static void block_drop(c10c__engine *e, block *b) {
  if (e->nspare >= 4096) {
    c10c__free(b);
    return;
  }
  b->pool_next = e->spare;
  e->spare = b;
  e->nspare++;
}

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
  /* size > 512 x divisions, which would wrap for divisions above 2^55 */
  if (divisions > 1 && (size - 1) / C10C__MIN_BLOCK >= divisions)
    return next_division(size, divisions);
  return C10C__MIN_BLOCK * ((size + C10C__MIN_BLOCK - 1) / C10C__MIN_BLOCK);
}

size_t c10c__engine_divisions_for(const size_t *divisions, size_t size) {
  int index = size == 0 ? 0 : (63 - __builtin_clzll((unsigned long long)size)) - 20;
  if (index < 0) index = 0;
  if (index > C10C__ROUNDUP_INTERVALS - 1) index = C10C__ROUNDUP_INTERVALS - 1;
  return divisions[index];
}

static size_t round_size(const c10c__engine *e, size_t size) {
  if (size < C10C__MIN_BLOCK) return C10C__MIN_BLOCK;
  return c10c__engine_round_size_with(
      size, c10c__engine_divisions_for(e->config.roundup_power2_divisions, size));
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

/* ---- the trace ---- */

static void trace_record(c10c__engine *e, int device, trace_action action, const void *addr,
                         size_t size, c10c_stream_id stream) {
  device_state *d = &e->state[device];
  d->trace[d->trace_next] =
      (trace_entry){action, (uintptr_t)addr, size, stream, c10c__realtime_us()};
  d->trace_next = (d->trace_next + 1) % e->trace_capacity;
  if (d->trace_count < e->trace_capacity) d->trace_count++;
}

/* Records an allocator event when a trace is kept (the common case is one test). */
static inline void trace(c10c__engine *e, int device, trace_action action, const void *addr,
                         size_t size, c10c_stream_id stream) {
  if (e->trace_capacity != 0) trace_record(e, device, action, addr, size, stream);
}

/* ---- the pools: free blocks by (stream, size, address); unmapped ranges by (stream, address) */

static bool before(const block *a, const block *b) {
  if (a->stream != b->stream) return a->stream < b->stream;
  if (a->mapped && a->size != b->size) return a->size < b->size;
  return a->ptr < b->ptr;
}

/* ---- plain ordered lists (a bin; the unmapped ranges) ---- */

static void list_insert(block **list, block *b) {
  block *prev = NULL, *at = *list;
  while (at != NULL && before(at, b)) prev = at, at = at->pool_next;
  b->pool_prev = prev;
  b->pool_next = at;
  if (at) at->pool_prev = b;
  if (prev)
    prev->pool_next = b;
  else
    *list = b;
}

static void list_remove(block **list, block *b) {
  if (b->pool_prev)
    b->pool_prev->pool_next = b->pool_next;
  else
    *list = b->pool_next;
  if (b->pool_next) b->pool_next->pool_prev = b->pool_prev;
  b->pool_prev = b->pool_next = NULL;
}

/* ---- pools ---- */

static int bin_of(size_t size) {
  int log = 63 - __builtin_clzll((unsigned long long)(size | 1));
  if (log < 9) return 0;
  int bin = (log - 9) * 4 + (int)((size >> (log - 2)) & 3);
  return bin < BINS ? bin : BINS - 1;
}

static void pool_insert(pool *p, block *b) {
  b->bin = bin_of(b->size);
  list_insert(&p->bins[b->bin], b);
  p->used[b->bin / 64] |= (uint64_t)1 << (b->bin % 64);
}

static void pool_remove(pool *p, block *b) {
  list_remove(&p->bins[b->bin], b);
  if (p->bins[b->bin] == NULL) p->used[b->bin / 64] &= ~((uint64_t)1 << (b->bin % 64));
}

/* The first block of the first bin in use at or after bin. */
static block *pool_from(const pool *p, int bin) {
  for (int w = bin / 64; bin < BINS && w < BINS / 64; w++, bin = w * 64) {
    uint64_t bits = p->used[w] & (~(uint64_t)0 << (bin % 64));
    if (bits != 0) return p->bins[w * 64 + __builtin_ctzll(bits)];
  }
  return NULL;
}

/* Iteration over a pool in (bin, stream, size, address) order. */
static block *pool_first(const pool *p) { return pool_from(p, 0); }

static block *pool_after(const pool *p, const block *b) {
  return b->pool_next != NULL ? b->pool_next : pool_from(p, b->bin + 1);
}

/* PyTorch's max_split_size rules for handing a cached block of block_size bytes to a request of
 * size (<= block_size): no oversize block for a request below the limit, and an oversize request
 * takes an oversize block at most 20 MiB larger. */
static bool oversize_refused(size_t block_size, size_t size, size_t max_split) {
  if (size < max_split) return block_size >= max_split;
  return block_size >= size + C10C__LARGE_BUFFER;
}

/* The block after b of the same stream in (size, address) order, or NULL. */
static block *next_of_stream(const pool *p, block *b) {
  c10c_stream_id stream = b->stream;
  for (b = pool_after(p, b); b != NULL;) {
    if (b->stream == stream) return b;
    b = b->stream > stream ? pool_from(p, b->bin + 1) : pool_after(p, b);
  }
  return NULL;
}

/* What a free block of an expandable segment can grow to: itself and the unmapped range after
 * it. */
static size_t expandable_size(const block *b) {
  return b->size + (b->next != NULL && !b->next->mapped ? b->next->size : 0);
}

/* The smallest free block of stream that holds size, as PyTorch's get_free_block picks it. A
 * block of an expandable segment counts, for the best fit, as the size it can grow to: while
 * expandable segments are on, the search moves on to the next larger block of the stream as
 * long as that one can grow to less (so a request goes to a hole between allocated blocks
 * rather than to the end of the mapped memory, which could map more pages instead); while they
 * are off, blocks of expandable segments are passed over. */
static block *best_fit(const pool *p, c10c_stream_id stream, size_t size, size_t max_split,
                       bool expandable_on) {
  block *b = pool_from(p, bin_of(size));
  while (b != NULL && (b->stream != stream || b->size < size)) {
    if (b->stream > stream) /* this bin has no block of the stream left */
      b = pool_from(p, b->bin + 1);
    else
      b = pool_after(p, b);
  }
  if (b == NULL) return NULL;
  if (b->seg->expandable && expandable_on) {
    for (block *next = next_of_stream(p, b);
         b->seg->expandable && next != NULL && expandable_size(next) < expandable_size(b);
         next = next_of_stream(p, b))
      b = next;
  } else if (b->seg->expandable) {
    do b = next_of_stream(p, b);
    while (b != NULL && b->seg->expandable);
    if (b == NULL) return NULL;
  }
  return oversize_refused(b->size, size, max_split) ? NULL : b; /* the rest are larger still */
}

static device_state *state_of(c10c__engine *e, const block *b) { return &e->state[b->seg->device]; }

/* Puts a free block in its pool (a stitched range in the stitch cache), or an unmapped range in
 * its list. */
static void attach(c10c__engine *e, block *b) {
  device_state *d = state_of(e, b);
  if (b->seg->stitched)
    list_insert(&d->stitch_cache, b);
  else if (b->mapped)
    pool_insert(&d->pools[b->small ? 0 : 1], b);
  else
    list_insert(&d->unmapped[b->small ? 0 : 1], b);
}

static void detach(c10c__engine *e, block *b) {
  device_state *d = state_of(e, b);
  if (b->seg->stitched)
    list_remove(&d->stitch_cache, b);
  else if (b->mapped)
    pool_remove(&d->pools[b->small ? 0 : 1], b);
  else
    list_remove(&d->unmapped[b->small ? 0 : 1], b);
}

static bool is_split(const block *b) { return b->prev != NULL || b->next != NULL; }

/* Free, mapped, not lent and not waiting for events: can merge with a freed neighbour. */
static bool mergeable(const block *b) {
  return b != NULL && !b->allocated && !b->pending && b->mapped && !b->lent;
}

/* Folds right into left, its neighbour in the segment; pooled (one of them, or NULL) leaves its
 * list first. Returns left. Lock held. */
static block *absorb(c10c__engine *e, block *left, block *right, block *pooled) {
  if (pooled != NULL) detach(e, pooled);
  left->size += right->size;
  left->next = right->next;
  if (right->next) right->next->prev = left;
  block_drop(e, right);
  return left;
}

/* A new block [ptr, ptr + size) of b's segment placed right after b. NULL without host memory. */
static block *split_after(c10c__engine *e, block *b, size_t offset) {
  block *rest = block_new(e);
  if (rest == NULL) return NULL;
  *rest = (block){.ptr = b->ptr + offset,
                  .size = b->size - offset,
                  .stream = b->stream,
                  .seg = b->seg,
                  .small = b->small,
                  .mapped = b->mapped,
                  .prev = b,
                  .next = b->next};
  if (b->next) b->next->prev = rest;
  b->next = rest;
  b->size = offset;
  return rest;
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
  e->in_table++;
}

static block *table_find(c10c__engine *e, const void *ptr, bool take) {
  for (block **link = &e->table[bucket(ptr)]; *link != NULL; link = &(*link)->hash_next)
    if ((*link)->ptr == ptr) {
      block *b = *link;
      if (take) {
        *link = b->hash_next;
        b->hash_next = NULL;
        e->in_table--;
      }
      return b;
    }
  return NULL;
}

/* A freed block stops being active: its stream uses and its pending state go. Lock held. */
static void deactivate(c10c__engine *e, block *b) {
  device_state *d = state_of(e, b);
  c10c__stat_pool_update(d->stats.active, b->small, -1);
  c10c__stat_pool_update(d->stats.active_bytes, b->small, -(int64_t)b->size);
  c10c__free(b->uses);
  b->uses = NULL;
  b->nuses = 0;
  b->pending = false;
}

/* ---- segments ---- */

static void process_events(c10c__engine *e, int device, bool wait);

/* Host records for a new segment: the segment, its head block and, for an expandable one, a
 * table of `pages` page handles. NULL without host memory. Lock held. */
static segment *segment_new(c10c__engine *e, size_t pages) {
  block *b = block_new(e);
  segment *s = b ? c10c__calloc(1, sizeof *s) : NULL;
  void **handles = s && pages > 0 ? c10c__calloc(pages, sizeof *handles) : NULL;
  if (s == NULL || (pages > 0 && handles == NULL)) {
    c10c__free(s);
    if (b != NULL) block_drop(e, b);
    return NULL;
  }
  s->head = b;
  s->handles = handles;
  return s;
}

/* Records from segment_new the backend could not back. Lock held. */
static void segment_discard(c10c__engine *e, segment *s) {
  block_drop(e, s->head);
  c10c__free(s->handles);
  c10c__free(s);
}

/* Fills a new segment over [base, base + size) for stream, its head block covering all of it
 * (not mapped: the caller says), and links it to the device's segments. */
static void segment_init(device_state *d, int device, segment *s, void *base, size_t size,
                         c10c_stream_id stream, bool small) {
  s->base = base;
  s->size = size;
  s->device = device;
  s->stream = stream;
  s->small = small;
  *s->head = (block){.ptr = base, .size = size, .stream = stream, .seg = s, .small = small};
  s->prev = NULL;
  s->next = d->segments;
  if (d->segments) d->segments->prev = s;
  d->segments = s;
}

static void segment_unlink(device_state *d, segment *s) {
  if (s->prev)
    s->prev->next = s->next;
  else
    d->segments = s->next;
  if (s->next) s->next->prev = s->prev;
  c10c__free(s->handles);
  c10c__free(s->parts);
  c10c__free(s);
}

/* Returns a free block that is a whole fixed segment to the backend (PyTorch's release_block).
 * Lock held. */
static void release_block(c10c__engine *e, block *b) {
  device_state *d = state_of(e, b);
  int device = b->seg->device;
  detach(e, b);
  e->backend.free(e->backend.self, device, b->ptr, b->size);
  trace(e, device, TRACE_SEGMENT_FREE, b->ptr, b->size, b->stream);
  c10c__stat_pool_update(d->stats.segment, b->small, -1);
  c10c__stat_pool_update(d->stats.reserved_bytes, b->small, -(int64_t)b->size);
  if (b->size >= e->config.max_split_size) c10c__stat_update(&d->stats.oversize_segments, -1);
  d->stats.num_device_free++;
  segment_unlink(d, b->seg);
  block_drop(e, b);
}

/* Unmaps the whole pages inside the free block b of an expandable segment (PyTorch's
 * unmap_block); the unmapped range joins unmapped neighbours. Returns whether pages were
 * unmapped. Lock held. */
static bool unmap_block(c10c__engine *e, block *b) {
  segment *s = b->seg;
  device_state *d = state_of(e, b);
  size_t first = ((size_t)(b->ptr - s->base) + s->page - 1) / s->page;
  size_t last = (size_t)(b->ptr + b->size - s->base) / s->page; /* one past */
  if (last <= first) return false;
  detach(e, b);
  block *mid = b;
  char *start = s->base + first * s->page, *end = s->base + last * s->page;
  /* the pieces before and after the pages stay free and mapped; without host memory for the
   * split the block is simply left as it is */
  block *tail = NULL;
  if (end < b->ptr + b->size && (tail = split_after(e, b, (size_t)(end - b->ptr))) == NULL) {
    attach(e, b);
    return false;
  }
  if (start > b->ptr && (mid = split_after(e, b, (size_t)(start - b->ptr))) == NULL) {
    if (tail != NULL) absorb(e, b, tail, NULL);
    attach(e, b);
    return false;
  }
  if (mid != b) attach(e, b);
  if (tail != NULL) attach(e, tail);
  for (size_t i = first; i < last; i++) {
    e->backend.unmap(e->backend.self, s->device, s->base + i * s->page, s->page, s->handles[i]);
    s->handles[i] = NULL;
  }
  mid->mapped = false;
  size_t bytes = (size_t)(end - start);
  if (mid->prev != NULL && !mid->prev->mapped) mid = absorb(e, mid->prev, mid, mid->prev);
  if (mid->next != NULL && !mid->next->mapped) mid = absorb(e, mid, mid->next, mid->next);
  attach(e, mid);
  c10c__stat_pool_update(d->stats.reserved_bytes, s->small, -(int64_t)bytes);
  d->stats.num_device_free++;
  trace(e, s->device, TRACE_SEGMENT_UNMAP, start, bytes, s->stream);
  return true;
}

/* Gives an expandable segment that is wholly unmapped back (its address range). Lock held. */
static void release_reservation(c10c__engine *e, segment *s) {
  device_state *d = &e->state[s->device];
  block *b = s->head;
  detach(e, b);
  e->backend.unreserve(e->backend.self, s->device, s->base, s->size);
  c10c__stat_pool_update(d->stats.segment, s->small, -1);
  block_drop(e, b);
  segment_unlink(d, s);
}

/* Whether b is an expandable block with a whole page inside it. */
static bool has_whole_page(const block *b) {
  const segment *s = b->seg;
  if (!s->expandable) return false;
  size_t first = ((size_t)(b->ptr - s->base) + s->page - 1) / s->page;
  return (size_t)(b->ptr + b->size - s->base) / s->page > first;
}

static void free_block(c10c__engine *e, block *b);
static bool dissolve_cached(c10c__engine *e, int device, bool all, c10c_stream_id stream);

/* Returns the stuck blocks of a device (insert_events) to their pools once the device has
 * finished all its work: after a device synchronization, or, when the engine is destroyed
 * over a backend that cannot synchronize, regardless (everything goes back then). Their events
 * that were recorded are gone already (release_cached waited for every event first). Lock
 * held. */
static void release_stuck(c10c__engine *e, int device, bool destroying) {
  device_state *d = &e->state[device];
  if (d->stuck == 0) return;
  if (e->backend.synchronize != NULL)
    e->backend.synchronize(e->backend.self, device);
  else if (!destroying)
    return;
  /* free_block may merge b into its neighbour: the walk starts over after each */
  for (segment *s = d->segments; s != NULL; s = s->next)
    for (block *b = s->head; b != NULL;) {
      if (!b->pending || b->events >= 0) {
        b = b->next;
        continue;
      }
      b->events = 0;
      free_block(e, b);
      b = s->head;
    }
  d->stuck = 0;
}

/* Releases the free blocks that are whole segments and unmaps the free pages of expandable
 * segments (PyTorch's release_cached_blocks), after waiting for pending events (and for the
 * device, when blocks are stuck): of the segments a block of which was handed out after the
 * device's count since (0: of all). Lock held. */
static void release_cached(c10c__engine *e, int device, bool destroying, uint64_t since) {
  device_state *d = &e->state[device];
  if (d->plan != NULL) e->plan->note_reserved(d->plan); /* the step's peak, before it falls */
  if (e->backend.event_synchronize != NULL && d->events != NULL) {
    process_events(e, device, true);
    d->stats.num_sync_all_streams++;
  }
  release_stuck(e, device, destroying);
  bool synced = dissolve_cached(e, device, true, 0); /* their pages are unmapped below */
  for (int p = 0; p < 2; p++) {
    block *b = pool_first(&d->pools[p]);
    while (b != NULL) {
      block *next = pool_after(&d->pools[p], b);
      if (b->seg->used_at <= since && since > 0) {
        b = next;
        continue;
      }
      if (!b->seg->expandable && !is_split(b)) {
        release_block(e, b);
      } else if (has_whole_page(b)) {
        if (!synced && e->backend.synchronize != NULL)
          e->backend.synchronize(e->backend.self, device);
        synced = true;
        if (unmap_block(e, b)) next = pool_first(&d->pools[p]); /* changed: start over */
      }
      b = next;
    }
  }
  for (segment *s = d->segments, *next; s != NULL; s = next) {
    next = s->next;
    if (s->expandable && !s->head->mapped && s->head->next == NULL) release_reservation(e, s);
  }
}

/* PyTorch's release_available_cached_blocks: with max_split_size set, releases one cached
 * oversize block of the stream large enough for the request, or else the largest ones until
 * enough bytes are freed. Returns whether it released enough. Lock held. */
static bool release_available(c10c__engine *e, int device, bool small, size_t size,
                              c10c_stream_id stream) {
  size_t max_split = e->config.max_split_size;
  if (max_split == SIZE_MAX) return false;
  pool *p = &e->state[device].pools[small ? 0 : 1];
  size_t key = size < max_split ? max_split : size;
  /* the smallest block of the stream holding key (iteration goes up in size) */
  block *at = pool_from(p, bin_of(key));
  while (at != NULL && (at->stream != stream || at->size < key)) at = pool_after(p, at);
  if (at != NULL && !at->seg->expandable && !is_split(at)) {
    release_block(e, at);
    return true;
  }
  /* else the stream's oversize blocks below key, largest first */
  size_t released = 0;
  while (released < key) {
    block *largest = NULL;
    for (block *b = pool_first(p); b != NULL; b = pool_after(p, b))
      if (b->stream == stream && b->size >= max_split && b->size < key && !b->seg->expandable &&
          !is_split(b) && (largest == NULL || b->size >= largest->size))
        largest = b;
    if (largest == NULL) break;
    released += largest->size;
    release_block(e, largest);
  }
  return released >= key;
}

/* PyTorch's garbage_collect_cached_blocks: past garbage_collection_threshold x the allowed
 * bytes, releases unsplit large cached blocks at least as old (in get_free_block calls) as the
 * average, until the excess is reclaimed. No synchronization. Lock held. */
static void garbage_collect(c10c__engine *e, int device) {
  device_state *d = &e->state[device];
  size_t reserved = (size_t)d->stats.reserved_bytes[C10C_STAT_ALL].current;
  size_t threshold = c10c__fraction_of(e->config.garbage_collection_threshold, d->allowed);
  if (reserved <= threshold) return;
  size_t target = reserved - threshold, reclaimed = 0;
  uint64_t total_age = 0;
  size_t count = 0;
  pool *large = &d->pools[1];
  for (block *b = pool_first(large); b != NULL; b = pool_after(large, b))
    if (!is_split(b)) total_age += d->gc_calls - b->gc_base, count++;
  bool freed = true;
  while (reclaimed < target && freed && count > 0) {
    double threshold_age = (double)total_age / (double)count;
    freed = false;
    for (block *b = pool_first(large), *next; b != NULL; b = next) {
      next = pool_after(large, b);
      uint64_t age = d->gc_calls - b->gc_base;
      if (!is_split(b) && !b->seg->expandable && (double)age >= threshold_age) {
        freed = true;
        reclaimed += b->size;
        total_age -= age;
        count--;
        release_block(e, b);
      }
    }
  }
}

static c10c_status out_of_memory(c10c__engine *e, int device, size_t size, c10c_stream_id stream) {
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
  trace(e, device, TRACE_OOM, (void *)(uintptr_t)free_bytes, size, stream);
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

/* Whether size more bytes would take the device past its memory fraction. */
static bool over_limit(const device_state *d, size_t size) {
  size_t reserved = (size_t)d->stats.reserved_bytes[C10C_STAT_ALL].current;
  return size > d->allowed || reserved > d->allowed - size; /* reserved + size, unwrapped */
}

/* A new fixed segment holding at least rounded bytes (PyTorch's alloc_block). Lock held. */
static c10c_status fixed_segment(c10c__engine *e, int device, size_t rounded, bool small,
                                 c10c_stream_id stream, block **out) {
  device_state *d = &e->state[device];
  size_t size = c10c__engine_segment_size(rounded);
  if (over_limit(d, size)) return C10C_STATUS_OUT_OF_MEMORY;
  segment *s = segment_new(e, 0);
  if (s == NULL) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory (host) for a segment");
  void *ptr = NULL;
  c10c_status st = e->backend.malloc(e->backend.self, device, size, &ptr);
  if (st != C10C_STATUS_OK) {
    segment_discard(e, s);
    return st;
  }
  segment_init(d, device, s, ptr, size, stream, small);
  s->head->mapped = true;
  c10c__stat_pool_update(d->stats.segment, small, 1);
  c10c__stat_pool_update(d->stats.reserved_bytes, small, (int64_t)size);
  if (size >= e->config.max_split_size) c10c__stat_update(&d->stats.oversize_segments, 1);
  d->stats.num_device_alloc++;
  trace(e, device, TRACE_SEGMENT_ALLOC, ptr, size, stream);
  *out = s->head;
  return C10C_STATUS_OK;
}

/* ---- expandable segments (PyTorch's ExpandableSegment) ---- */

static bool allocatable(const block *b) {
  return b != NULL && !b->allocated && !b->pending && b->nuses == 0 && !b->lent;
}

/* Maps memory under the first bytes (rounded up to pages) of the unmapped block b; the mapped
 * part joins free neighbours and goes to the pool. Returns the block now holding it, or NULL
 * (OUT_OF_MEMORY in *st when the device or the memory fraction is full). Lock held. */
static block *map_block(c10c__engine *e, block *b, size_t bytes, c10c_status *st) {
  segment *s = b->seg;
  device_state *d = state_of(e, b);
  size_t size = (bytes + s->page - 1) / s->page * s->page;
  if (size > b->size) size = b->size;
  size_t first = (size_t)(b->ptr - s->base) / s->page, pages = size / s->page, done = 0;
  *st = over_limit(d, size) ? C10C_STATUS_OUT_OF_MEMORY : C10C_STATUS_OK;
  while (*st == C10C_STATUS_OK && done < pages) {
    *st = e->backend.map(e->backend.self, s->device, s->base + (first + done) * s->page, s->page,
                         &s->handles[first + done]);
    if (*st == C10C_STATUS_OK) done++;
  }
  block *rest = NULL;
  /* the rest of the range stays unmapped in a block of its own (its next block is mapped:
   * unmapped neighbours always merge) */
  if (*st == C10C_STATUS_OK && size < b->size && (rest = split_after(e, b, size)) == NULL)
    *st = c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory (host) for a block");
  if (*st != C10C_STATUS_OK) {
    for (size_t i = 0; i < done; i++) {
      e->backend.unmap(e->backend.self, s->device, s->base + (first + i) * s->page, s->page,
                       s->handles[first + i]);
      s->handles[first + i] = NULL;
    }
    return NULL;
  }
  detach(e, b);
  if (rest != NULL) attach(e, rest);
  b->mapped = true;
  if (mergeable(b->prev)) b = absorb(e, b->prev, b, b->prev);
  if (mergeable(b->next)) b = absorb(e, b, b->next, b->next);
  b->gc_base = d->gc_calls;
  attach(e, b);
  c10c__stat_pool_update(d->stats.reserved_bytes, s->small, (int64_t)size);
  d->stats.num_device_alloc++;
  trace(e, s->device, TRACE_SEGMENT_MAP, s->base + first * s->page, size, s->stream);
  return b;
}

/* A new expandable segment for stream: address space for 1.125 x the device's memory, nothing
 * mapped (PyTorch's sizing). Lock held. */
static c10c_status new_expandable(c10c__engine *e, int device, bool small, c10c_stream_id stream,
                                  block **out) {
  device_state *d = &e->state[device];
  size_t free_bytes = 0, total = 0, page = small ? C10C__SMALL_BUFFER : C10C__LARGE_BUFFER;
  c10c_status st = e->backend.mem_info(e->backend.self, device, &free_bytes, &total);
  if (st != C10C_STATUS_OK) return st;
  if (e->backend.granularity != NULL) { /* pages the driver can map */
    size_t granularity = 0;
    st = e->backend.granularity(e->backend.self, device, &granularity);
    if (st != C10C_STATUS_OK) return st;
    if (granularity > 1) {
      if (page > SIZE_MAX - (granularity - 1)) return C10C_STATUS_OUT_OF_MEMORY;
      page = (page + granularity - 1) / granularity * granularity;
    }
  }
  /* 1.125 x total in whole pages; a device too large for that to be counted is full */
  if (total == 0 || total > SIZE_MAX - total / 8 - (page - 1)) return C10C_STATUS_OUT_OF_MEMORY;
  size_t size = (total + total / 8 + page - 1) / page * page;
  segment *s = segment_new(e, size / page);
  if (s == NULL) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory (host) for a segment");
  void *base = NULL;
  st = e->backend.reserve(e->backend.self, device, size, &base);
  if (st != C10C_STATUS_OK) {
    segment_discard(e, s);
    return st;
  }
  segment_init(d, device, s, base, size, stream, small);
  s->expandable = true;
  s->page = page;
  attach(e, s->head); /* all of it unmapped */
  c10c__stat_pool_update(d->stats.segment, small, 1);
  *out = s->head;
  return C10C_STATUS_OK;
}

/* Whether the free or unmapped blocks from b on cover size bytes. */
static bool has_room(const block *b, size_t size) {
  size_t bytes = 0;
  for (; bytes < size && allocatable(b); b = b->next) bytes += b->size;
  return bytes >= size;
}

/* PyTorch's try_allocate_expandable_block: the lowest unmapped range of the stream's expandable
 * segments (with the free block before it) that can hold size, mapped as far as needed; a new
 * segment when none can. Lock held. */
static c10c_status expandable_block(c10c__engine *e, int device, size_t size, bool small,
                                    c10c_stream_id stream, block **out) {
  device_state *d = &e->state[device];
  block *candidate = NULL;
  for (block *c = d->unmapped[small ? 0 : 1]; c != NULL && candidate == NULL; c = c->pool_next) {
    if (c->stream != stream) continue;
    block *start = allocatable(c->prev) ? c->prev : c;
    if (has_room(start, size)) candidate = start;
  }
  c10c_status st = C10C_STATUS_OK;
  if (candidate == NULL) st = new_expandable(e, device, small, stream, &candidate);
  if (st != C10C_STATUS_OK) return st;
  if (!candidate->mapped) candidate = map_block(e, candidate, size, &st);
  while (candidate != NULL && candidate->size < size)
    candidate = map_block(e, candidate->next, size - candidate->size, &st);
  if (candidate == NULL) return st;
  detach(e, candidate);
  *out = candidate;
  return C10C_STATUS_OK;
}

/* ---- stitching (GMLake's): free whole pages mapped into a new range ---- */

/* The whole pages inside the block b of an expandable segment: how many, from page *first. */
static size_t whole_pages(const block *b, size_t *first) {
  const segment *s = b->seg;
  size_t from = ((size_t)(b->ptr - s->base) + s->page - 1) / s->page;
  size_t end = (size_t)(b->ptr + b->size - s->base) / s->page;
  *first = from;
  return end > from ? end - from : 0;
}

/* Takes the pages [first, first + n) of the free block b (a member of its pool) out of the pool
 * as a block of their own lent to the stitched range st; the pieces of b before and after them
 * stay free in the pool. NULL without host memory for the split (b is left as it was). Lock
 * held. */
static block *lend(c10c__engine *e, block *b, size_t first, size_t n, segment *st) {
  segment *s = b->seg;
  char *start = s->base + first * s->page, *end = start + n * s->page;
  block *tail = NULL, *mid = b;
  detach(e, b);
  if (end < b->ptr + b->size && (tail = split_after(e, b, (size_t)(end - b->ptr))) == NULL) {
    attach(e, b);
    return NULL;
  }
  if (start > b->ptr && (mid = split_after(e, b, (size_t)(start - b->ptr))) == NULL) {
    if (tail != NULL) absorb(e, b, tail, NULL);
    attach(e, b);
    return NULL;
  }
  if (mid != b) attach(e, b);
  if (tail != NULL) attach(e, tail);
  mid->lent = true;
  mid->stitch = st;
  return mid;
}

/* A lent block back to its pool, merged with its free neighbours. Lock held. */
static void give_back(c10c__engine *e, block *b) {
  b->lent = false;
  b->stitch = NULL;
  if (mergeable(b->prev)) b = absorb(e, b->prev, b, b->prev);
  if (mergeable(b->next)) b = absorb(e, b, b->next, b->next);
  b->gc_base = state_of(e, b)->gc_calls;
  attach(e, b);
}

/* Undoes the stitched range s (out of the stitch cache): unmaps its first `mapped` pages (the
 * physical memory stays, mapped in its segment), gives its lent blocks back and releases its
 * address range and records. Lock held. */
static void unstitch(c10c__engine *e, segment *s, size_t mapped) {
  for (size_t i = 0; i < mapped; i++)
    e->backend.unmap_existing(e->backend.self, s->device, s->base + i * s->page, s->page);
  for (size_t i = 0; i < s->nparts; i++) give_back(e, s->parts[i]);
  e->backend.unreserve(e->backend.self, s->device, s->base, s->size);
  block_drop(e, s->head);
  segment_unlink(&e->state[s->device], s);
}

/* Dissolves the cached stitched ranges of the device (all, or stream's), after waiting for the
 * device's work (their addresses are unmapped). Returns whether it waited. Lock held. */
static bool dissolve_cached(c10c__engine *e, int device, bool all, c10c_stream_id stream) {
  device_state *d = &e->state[device];
  bool synced = false;
  for (block *b = d->stitch_cache, *next; b != NULL; b = next) {
    next = b->pool_next;
    if (!all && b->stream != stream) continue;
    if (!synced && e->backend.synchronize != NULL) e->backend.synchronize(e->backend.self, device);
    synced = true;
    detach(e, b);
    c10c__stat_update(&d->stats.stitched_bytes, -(int64_t)b->size);
    unstitch(e, b->seg, b->seg->size / b->seg->page);
  }
  return synced;
}

/* Free whole pages of a stream's large expandable segments: a pool block and the pages of it
 * to lend. */
typedef struct piece {
  block *b;
  size_t first, n;
} piece;

static int more_pages(const void *x, const void *y) {
  const piece *a = x, *b = y;
  if (a->n != b->n) return a->n > b->n ? -1 : 1;
  return a->b->ptr < b->b->ptr ? -1 : 1;
}

static int lower_address(const void *x, const void *y) {
  const piece *a = x, *b = y;
  return a->b->ptr < b->b->ptr ? -1 : 1;
}

/* The free whole pages of stream's large expandable segments of `page` bytes: how many, and
 * how many blocks hold them (*blocks), into out (when not NULL). Lock held. */
static size_t free_pages(const pool *p, c10c_stream_id stream, size_t page, size_t *blocks,
                         piece *out) {
  size_t pages = 0, first = 0;
  *blocks = 0;
  for (block *b = pool_first(p); b != NULL; b = pool_after(p, b)) {
    if (b->stream != stream || !b->seg->expandable || b->seg->page != page) continue;
    size_t n = whole_pages(b, &first);
    if (n == 0) continue;
    if (out != NULL) out[*blocks] = (piece){b, first, n};
    pages += n;
    ++*blocks;
  }
  return pages;
}

/* A stitched range of n pages of `page` bytes for stream over the free pages of its large
 * expandable segments (out of the pool, the range not in the stitch cache), or NULL when the
 * host, the address space or the backend cannot make one (nothing changed then). Lock held. */
static block *stitch_new(c10c__engine *e, int device, size_t n, size_t page,
                         c10c_stream_id stream) {
  device_state *d = &e->state[device];
  const pool *p = &d->pools[1];
  size_t count = 0, size = n * page, taken = 0, k = 0;
  free_pages(p, stream, page, &count, NULL);
  piece *pieces = c10c__malloc(count * sizeof *pieces);
  segment *s = pieces != NULL ? segment_new(e, n) : NULL;
  block **parts = s != NULL ? c10c__malloc(count * sizeof *parts) : NULL;
  void *base = NULL;
  if (parts == NULL || e->backend.reserve(e->backend.self, device, size, &base) != 0) {
    c10c__free(parts);
    if (s != NULL) segment_discard(e, s);
    c10c__free(pieces);
    return NULL;
  }
  free_pages(p, stream, page, &count, pieces);
  /* the blocks with most pages first (fewest pieces), the last one cut to what is missing */
  qsort(pieces, count, sizeof *pieces, more_pages);
  for (; taken < n; k++) {
    if (pieces[k].n > n - taken) pieces[k].n = n - taken;
    taken += pieces[k].n;
  }
  qsort(pieces, k, sizeof *pieces, lower_address);
  segment_init(d, device, s, base, size, stream, false);
  s->expandable = s->stitched = true;
  s->page = page;
  s->head->mapped = true;
  s->parts = parts;
  size_t at = 0;
  bool ok = true;
  for (size_t i = 0; i < k && ok; i++) {
    block *lent = lend(e, pieces[i].b, pieces[i].first, pieces[i].n, s);
    if ((ok = lent != NULL)) {
      s->parts[s->nparts++] = lent;
      for (size_t j = 0; j < pieces[i].n; j++)
        s->handles[at++] = lent->seg->handles[pieces[i].first + j];
    }
  }
  c10c__free(pieces);
  size_t mapped = 0;
  while (ok && mapped < n)
    if ((ok = e->backend.map_existing(e->backend.self, device, s->base + mapped * page, page,
                                      s->handles[mapped]) == C10C_STATUS_OK))
      mapped++;
  if (!ok) {
    unstitch(e, s, mapped);
    return NULL;
  }
  d->stats.num_stitches++;
  c10c__stat_update(&d->stats.stitched_bytes, (int64_t)size);
  return s->head;
}

/* Stitching for a large request of rounded bytes on stream that no free block fits: a cached
 * stitched range of as many pages; else (the stream's cached ranges dissolved first when the free
 * blocks lack pages: a stitch or new pages needs them) a free block that fits once they are
 * back, or a new stitched range. NULL when the request needs new pages. Lock held. */
static block *stitch_block(c10c__engine *e, int device, size_t rounded, c10c_stream_id stream) {
  device_state *d = &e->state[device];
  pool *p = &d->pools[1];
  size_t page = 0, blocks = 0, cached = 0;
  for (const segment *s = d->segments; s != NULL && page == 0; s = s->next)
    if (s->expandable && !s->stitched && !s->small && s->stream == stream) page = s->page;
  if (page == 0) return NULL;
  size_t n = rounded / page + (rounded % page != 0);
  for (block *b = d->stitch_cache; b != NULL; b = b->pool_next) {
    if (b->stream != stream) continue;
    if (b->size == n * page) { /* the list is by size: the first is the best fit */
      detach(e, b);
      return b;
    }
    cached += b->seg->size / b->seg->page;
  }
  size_t have = free_pages(p, stream, page, &blocks, NULL);
  if (have < n && cached > 0) {
    dissolve_cached(e, device, false, stream);
    block *b = best_fit(p, stream, rounded, e->config.max_split_size, true);
    if (b != NULL) {
      pool_remove(p, b);
      return b;
    }
    have = free_pages(p, stream, page, &blocks, NULL);
  }
  return have >= n ? stitch_new(e, device, n, page, stream) : NULL;
}

/* ---- stream-ordered reuse ---- */

/* Makes stream wait for the work queued so far on user: an event recorded there now. Lock
 * held. */
static bool order_after(c10c__engine *e, int device, c10c_stream_id user, c10c_stream_id stream) {
  void *event = NULL;
  if (e->backend.event_record(e->backend.self, device, user, &event) != C10C_STATUS_OK)
    return false;
  c10c_status st = e->backend.stream_wait(e->backend.self, device, stream, event);
  e->backend.event_destroy(e->backend.self, event);
  return st == C10C_STATUS_OK;
}

/* Whether b could serve a request of size bytes on stream by stream-ordered reuse. */
static bool reusable(const c10c__engine *e, const block *b, bool small, size_t size) {
  return b->small == small && b->size >= size && !b->seg->expandable &&
         !oversize_refused(b->size, size, e->config.max_split_size);
}

/* The stream uses of a block handed to another stream: that stream (NULL without host memory;
 * none for the block's own stream). */
static bool other_stream_use(const block *b, c10c_stream_id stream, c10c_stream_id **uses) {
  *uses = NULL;
  return b->stream == stream || (*uses = c10c__malloc(sizeof **uses)) != NULL;
}

/* b, free or taken from its events, is used on stream from now on: noted as record_stream
 * would, so that after the free it goes back to its own stream's pool only once stream's work
 * on it has completed. b keeps the stream of its segment (its free neighbours, which it merges
 * with, are that stream's memory). */
static void note_use(block *b, c10c_stream_id stream, c10c_stream_id *uses) {
  if (uses == NULL) return;
  uses[0] = stream;
  b->uses = uses;
  b->nuses = 1;
}

/* Streams that may still use memory taken from its pending events (take_pending). */
typedef struct stream_list {
  c10c_stream_id *ids;
  size_t n;
} stream_list;

/* The streams of b's pending events, into *out (false without host memory). */
static bool pending_streams(const device_state *d, const block *b, stream_list *out) {
  *out = (stream_list){c10c__malloc((size_t)b->events * sizeof *out->ids), 0};
  if (out->ids == NULL) return false;
  for (const pending_event *x = d->events; x != NULL; x = x->next)
    if (x->b == b) out->ids[out->n++] = x->stream;
  return true;
}

/* Makes stream wait for the pending block b's record_stream events and for its own stream's
 * work (whose last use of it came before the free), then takes it from its events; the streams
 * of those events go to *still_used (for the rest of b, if it is split). False when a wait
 * cannot be made. Lock held. */
static bool take_pending(c10c__engine *e, int device, block *b, c10c_stream_id stream,
                         stream_list *still_used) {
  device_state *d = &e->state[device];
  c10c_stream_id *uses;
  if (!other_stream_use(b, stream, &uses)) return false;
  if (!pending_streams(d, b, still_used)) {
    c10c__free(uses);
    return false;
  }
  bool ok = b->stream == stream || order_after(e, device, b->stream, stream);
  for (pending_event *x = d->events; x != NULL && ok; x = x->next)
    if (x->b == b && x->stream != stream) /* a stream's own work is ordered already */
      ok = e->backend.stream_wait(e->backend.self, device, stream, x->event) == C10C_STATUS_OK;
  if (!ok) {
    c10c__free(uses);
    c10c__free(still_used->ids);
    *still_used = (stream_list){NULL, 0};
    return false;
  }
  for (pending_event **l = &d->events; *l != NULL;) {
    pending_event *x = *l;
    if (x->b != b) {
      l = &x->next;
      continue;
    }
    *l = x->next;
    e->backend.event_destroy(e->backend.self, x->event);
    c10c__free(x);
  }
  b->events = 0;
  deactivate(e, b);
  note_use(b, stream, uses);
  return true;
}

/* A free block of another stream (or one waiting for its record_stream events) that fits,
 * handed to stream after making it wait for every stream that may still use it: the block's
 * own stream (an event recorded there now, after its last use) and the block's pending events
 * (whose streams go to *still_used). The block stays its segment's stream's, used on stream
 * (note_use). Lock held. */
static block *reuse_across_streams(c10c__engine *e, int device, bool small, size_t size,
                                   c10c_stream_id stream, bool *was_free, stream_list *still_used) {
  device_state *d = &e->state[device];
  pool *p = &d->pools[small ? 0 : 1];
  for (block *b = pool_first(p); b != NULL; b = pool_after(p, b)) {
    c10c_stream_id *uses;
    if (b->stream == stream || !reusable(e, b, small, size) || !other_stream_use(b, stream, &uses))
      continue;
    if (!order_after(e, device, b->stream, stream)) {
      c10c__free(uses);
      continue;
    }
    note_use(b, stream, uses);
    detach(e, b);
    d->stream_waits++;
    *was_free = true;
    return b;
  }
  for (pending_event *x = d->events; x != NULL; x = x->next) {
    block *b = x->b;
    if (b->events <= 0 || !reusable(e, b, small, size) ||
        !take_pending(e, device, b, stream, still_used))
      continue;
    d->stream_waits++;
    *was_free = false; /* it never went back to a pool */
    return b;
  }
  return NULL;
}

/* ---- the engine ---- */

c10c_status c10c__engine_new(c10c__engine **out, c10c__segment_backend backend, int devices,
                             const c10c__plan_hooks *plan) {
  *out = NULL;
  if (devices < 1) devices = 1;
  c10c__engine *e = c10c__calloc(1, sizeof *e);
  device_state *state = e ? c10c__calloc((size_t)devices, sizeof *state) : NULL;
  if (state == NULL) {
    c10c__free(e);
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory making a caching allocator");
  }
  c10c__mutex_init(&e->lock);
  e->backend = backend;
  e->config = c10c__device_alloc_config_default();
  e->devices = devices;
  e->state = state;
  e->plan = plan;
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
  for (size_t i = 0; i < BUCKETS && e->in_table > 0; i++)
    while (e->table[i] != NULL) c10c__engine_free(e, e->table[i]->ptr);
  c10c__mutex_lock(&e->lock);
  for (int i = 0; i < e->devices; i++) {
    if (e->state[i].plan != NULL) e->plan->state_destroy(e->state[i].plan);
    e->state[i].plan = NULL;
    release_cached(e, i, true, 0);
  }
  c10c__mutex_unlock(&e->lock);
  for (int i = 0; i < e->devices; i++) c10c__free(e->state[i].trace);
  while (e->spare != NULL) {
    block *b = e->spare;
    e->spare = b->pool_next;
    c10c__free(b);
  }
  c10c__mutex_destroy(&e->lock);
  c10c__free(e->state);
  c10c__free(e);
}

/* ---- planning (plan_engine.c) ---- */

/* The plan state whose arena holds ptr, or NULL. Lock held. */
static c10c__plan_state *plan_holding(c10c__engine *e, const void *ptr) {
  for (int i = 0; i < e->devices; i++)
    if (e->state[i].plan != NULL && e->plan->holds(e->state[i].plan, ptr)) return e->state[i].plan;
  return NULL;
}

c10c_memory_stats *c10c__engine_device_stats(c10c__engine *e, int device) {
  return &e->state[device].stats;
}

const c10c__segment_backend *c10c__engine_backend(const c10c__engine *e) { return &e->backend; }

void c10c__engine_release_cache(c10c__engine *e, int device, uint64_t since) {
  release_cached(e, device, false, since);
}

uint64_t c10c__engine_handed(const c10c__engine *e, int device) { return e->state[device].handed; }

/* Moves count from a statistic's small pool to its large pool, as a free there and an
 * allocation here (the aggregate stays). */
static void to_large_pool(c10c_stat *s, int64_t count) {
  c10c__stat_update(&s[C10C_STAT_SMALL_POOL], -count);
  c10c__stat_update(&s[C10C_STAT_LARGE_POOL], count);
}

c10c_status c10c__engine_adopt(c10c__engine *e, int device, char *base, size_t size,
                               c10c_stream_id stream, const c10c__adopted *blocks, size_t n) {
  device_state *d = &e->state[device];
  /* every record first, so that nothing changes when host memory runs out */
  size_t records = 2 * n + 1, made = 0;
  block **pieces = c10c__malloc(records * sizeof *pieces);
  segment *s = pieces != NULL ? segment_new(e, 0) : NULL;
  while (s != NULL && made + 1 < records && (pieces[made] = c10c__calloc(1, sizeof(block))) != NULL)
    made++;
  if (s == NULL || made + 1 < records) {
    while (made > 0) c10c__free(pieces[--made]);
    if (s != NULL) segment_discard(e, s);
    c10c__free(pieces);
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory (host) taking a plan's arena over");
  }
  segment_init(d, device, s, base, size, stream, false);
  s->used_at = d->handed;
  if (size >= e->config.max_split_size) c10c__stat_update(&d->stats.oversize_segments, 1);
  /* the blocks in address order: a free piece before each live block and after the last */
  block *prev = NULL;
  size_t at = 0, used = 0;
  int64_t free_pieces = 0, free_bytes = 0;
  for (size_t k = 0; k <= n; k++) {
    size_t next = k < n ? blocks[k].offset : size;
    for (int live = 0; live < 2; live++) {
      if (live == 1 && k == n) break;
      size_t bytes = live ? blocks[k].size : next - at;
      if (bytes == 0) continue;
      block *b = prev == NULL ? s->head : pieces[used++];
      *b = (block){.ptr = base + at,
                   .size = bytes,
                   .stream = stream,
                   .seg = s,
                   .mapped = true,
                   .prev = prev};
      if (prev != NULL) prev->next = b;
      prev = b;
      at += bytes;
      if (live) {
        const c10c__adopted *a = &blocks[k];
        b->allocated = true;
        b->requested = a->requested;
        b->uses = a->uses;
        b->nuses = a->nuses;
        b->plan_tag = a->tag;
        table_insert(e, b);
        if (a->small) { /* counted by its size; a block of this segment is the large pool's */
          to_large_pool(d->stats.allocation, 1);
          to_large_pool(d->stats.active, 1);
          to_large_pool(d->stats.allocated_bytes, (int64_t)a->size);
          to_large_pool(d->stats.active_bytes, (int64_t)a->size);
          to_large_pool(d->stats.requested_bytes, (int64_t)a->requested);
        }
      } else {
        free_pieces++, free_bytes += (int64_t)bytes;
      }
    }
  }
  for (block *b = s->head; b != NULL; b = b->next) /* the free ones join the pool */
    if (!b->allocated) {
      b->gc_base = d->gc_calls;
      pool_insert(&d->pools[1], b);
    }
  if (is_split(s->head)) {
    c10c__stat_pool_update(d->stats.inactive_split, false, free_pieces);
    c10c__stat_pool_update(d->stats.inactive_split_bytes, false, free_bytes);
  }
  while (used < made) c10c__free(pieces[used++]);
  c10c__free(pieces);
  return C10C_STATUS_OK;
}

/* The free ranges release_cached keeps (free pieces of split fixed segments; the mapped bytes
 * of free expandable blocks outside their whole pages), each visited with its size, stream and
 * pool. Lock held. */
void c10c__engine_holes(const c10c__engine *e, int device,
                        void (*visit)(void *ctx, size_t size, c10c_stream_id stream, bool small),
                        void *ctx) {
  const device_state *d = &e->state[device];
  for (int p = 0; p < 2; p++)
    for (const block *b = pool_first(&d->pools[p]); b != NULL; b = pool_after(&d->pools[p], b)) {
      const segment *s = b->seg;
      if (!s->expandable) {
        if (is_split(b)) visit(ctx, b->size, b->stream, b->small);
        continue;
      }
      size_t page, pages = whole_pages(b, &page);
      if (pages == 0) {
        visit(ctx, b->size, b->stream, b->small);
        continue;
      }
      char *first = s->base + page * s->page, *last = first + pages * s->page;
      if (first > b->ptr) visit(ctx, (size_t)(first - b->ptr), b->stream, b->small);
      if (b->ptr + b->size > last)
        visit(ctx, (size_t)(b->ptr + b->size - last), b->stream, b->small);
    }
}

bool c10c__engine_expandable(const c10c__engine *e) {
  return e->config.expandable_segments && e->backend.map != NULL;
}

/* The bytes release_cached would give back now, counted without releasing: free blocks
 * that are whole fixed segments and the whole pages inside free blocks of expandable segments,
 * of the segments handed out from after `since`. Pages lent to cached stitched ranges and
 * blocks waiting for events are not counted (the release may give back more, never less). Lock
 * held. */
size_t c10c__engine_releasable(const c10c__engine *e, int device, uint64_t since) {
  const device_state *d = &e->state[device];
  size_t bytes = 0;
  for (int p = 0; p < 2; p++)
    for (const block *b = pool_first(&d->pools[p]); b != NULL; b = pool_after(&d->pools[p], b)) {
      const segment *s = b->seg;
      size_t first;
      if (since > 0 && s->used_at <= since) continue;
      if (!s->expandable) {
        if (!is_split(b)) bytes += b->size;
      } else if (b->mapped) {
        bytes += whole_pages(b, &first) * s->page;
      }
    }
  return bytes;
}

c10c_status c10c__engine_arena_malloc(c10c__engine *e, int device, size_t size, void **out) {
  device_state *d = &e->state[device];
  if (over_limit(d, size)) return C10C_STATUS_OUT_OF_MEMORY;
  c10c_status st = e->backend.malloc(e->backend.self, device, size, out);
  if (st != C10C_STATUS_OK) return st;
  c10c__stat_pool_update(d->stats.segment, false, 1);
  c10c__stat_pool_update(d->stats.reserved_bytes, false, (int64_t)size);
  d->stats.num_device_alloc++;
  trace(e, device, TRACE_SEGMENT_ALLOC, *out, size, 0);
  return C10C_STATUS_OK;
}

void c10c__engine_arena_free(c10c__engine *e, int device, void *ptr, size_t size) {
  device_state *d = &e->state[device];
  e->backend.free(e->backend.self, device, ptr, size);
  c10c__stat_pool_update(d->stats.segment, false, -1);
  c10c__stat_pool_update(d->stats.reserved_bytes, false, -(int64_t)size);
  d->stats.num_device_free++;
  trace(e, device, TRACE_SEGMENT_FREE, ptr, size, 0);
}

void c10c__engine_trace_block(c10c__engine *e, int device, bool alloc, const void *ptr, size_t size,
                              c10c_stream_id stream) {
  if (e->trace_capacity == 0) return;
  if (alloc) {
    trace_record(e, device, TRACE_ALLOC, ptr, size, stream);
  } else {
    trace_record(e, device, TRACE_FREE_REQUESTED, ptr, size, stream);
    trace_record(e, device, TRACE_FREE_COMPLETED, ptr, size, stream);
  }
}

c10c_status c10c__engine_step(c10c__engine *e, int device) {
  if (device < -1 || device >= e->devices)
    return c10c__fail(C10C_STATUS_ERROR, "CUDA error: invalid device ordinal");
  c10c_status st = C10C_STATUS_OK;
  c10c__mutex_lock(&e->lock);
  for (int i = 0; i < e->devices; i++)
    if ((device == -1 || device == i) && e->state[i].plan != NULL) {
      c10c_status one = e->plan->host_step(e->state[i].plan);
      if (st == C10C_STATUS_OK) st = one;
    }
  c10c__mutex_unlock(&e->lock);
  return st;
}

/* The plan file of config read and checked (*out NULL without one). */
static c10c_status read_plan_file(c10c__engine *e, const c10c__device_alloc_config *config,
                                  c10c__plan **out) {
  *out = NULL;
  if (config->plan_file[0] == '\0') return C10C_STATUS_OK;
  c10c_status st = c10c__plan_read(out, config->plan_file);
  if (st != C10C_STATUS_OK) return st;
  if ((*out)->device < 0 || (*out)->device >= e->devices) {
    int32_t device = (*out)->device;
    c10c__plan_destroy(*out);
    *out = NULL;
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "plan file %s: it is a plan for device %d, and there %s %d device%s",
                      config->plan_file, (int)device, e->devices == 1 ? "is" : "are", e->devices,
                      e->devices == 1 ? "" : "s");
  }
  return C10C_STATUS_OK;
}

/* PyTorch's should_split: with expandable segments on (the setting, not the block's segment: a
 * block of a segment made before they were switched on splits the same way), any remainder of
 * 512 bytes or more. */
static bool should_split(const c10c__engine *e, const block *b, size_t size) {
  size_t remaining = b->size - size;
  if (b->seg->stitched) return false; /* a stitched range is used whole */
  if (b->small || e->config.expandable_segments) return remaining >= C10C__MIN_BLOCK;
  return size < e->config.max_split_size && remaining > C10C__SMALL_SIZE;
}

/* A block for the request when no cached one fits: garbage collection, a new segment, then
 * PyTorch's ladder (release oversize cached blocks and retry; release all and retry). */
static c10c_status alloc_block(c10c__engine *e, int device, size_t rounded, bool small,
                               c10c_stream_id stream, block **out) {
  device_state *d = &e->state[device];
  bool expandable = e->config.expandable_segments && e->backend.map != NULL;
  if (e->config.garbage_collection_threshold > 0 && d->allowed != SIZE_MAX)
    garbage_collect(e, device);
  /* stitching, before new pages are mapped */
  if (expandable && !small && e->config.stitching && e->backend.map_existing != NULL &&
      (*out = stitch_block(e, device, rounded, stream)) != NULL)
    return C10C_STATUS_OK;
  c10c_status st = expandable ? expandable_block(e, device, rounded, small, stream, out)
                              : fixed_segment(e, device, rounded, small, stream, out);
  if (st == C10C_STATUS_OUT_OF_MEMORY && !expandable &&
      release_available(e, device, small, rounded, stream))
    st = fixed_segment(e, device, rounded, small, stream, out);
  if (st == C10C_STATUS_OUT_OF_MEMORY) {
    release_cached(e, device, false, 0);
    if (d->plan != NULL) e->plan->release_idle(d->plan); /* an idle arena too */
    d->stats.num_alloc_retries++;
    st = expandable ? expandable_block(e, device, rounded, small, stream, out)
                    : fixed_segment(e, device, rounded, small, stream, out);
  }
  if (st == C10C_STATUS_OUT_OF_MEMORY) {
    d->stats.num_ooms++;
    return out_of_memory(e, device, rounded, stream);
  }
  return st;
}

static void insert_events(c10c__engine *e, block *b);

/* Splits what b does not need off into a free block of its pool (PyTorch's alloc_found_block)
 * and keeps inactive_split as PyTorch does, expandable blocks left out: b leaves it if it was a
 * free piece of a split segment (counted), the rest joins it. A block taken back from its
 * pending events (stream-ordered reuse) may still be used by still_used's streams: its rest is
 * pending on events recorded on them now (as after a record_stream) and joins its pool once
 * they complete, instead of going to its stream, which never waited for them. Lock held. */
static void split_off_rest(c10c__engine *e, block *b, size_t rounded, bool counted,
                           stream_list *still_used) {
  device_state *d = state_of(e, b);
  int64_t pieces = -(int64_t)counted, bytes = counted ? -(int64_t)b->size : 0;
  block *rest = should_split(e, b, rounded) ? split_after(e, b, rounded) : NULL;
  if (rest != NULL && still_used->n > 0) {
    rest->uses = still_used->ids;
    rest->nuses = still_used->n;
    *still_used = (stream_list){NULL, 0};
    c10c__stat_pool_update(d->stats.active, rest->small, 1);
    c10c__stat_pool_update(d->stats.active_bytes, rest->small, (int64_t)rest->size);
    insert_events(e, rest);
  } else if (rest != NULL) { /* without host memory for it the block is just used whole */
    rest->gc_base = d->gc_calls;
    pool_insert(&d->pools[b->small ? 0 : 1], rest);
    pieces++, bytes += (int64_t)rest->size;
  }
  c10c__free(still_used->ids);
  if (!b->seg->expandable) {
    c10c__stat_pool_update(d->stats.inactive_split, b->small, pieces);
    c10c__stat_pool_update(d->stats.inactive_split_bytes, b->small, bytes);
  }
}

c10c_status c10c__engine_malloc(c10c__engine *e, int device, size_t size, c10c_stream_id stream,
                                void **out) {
  *out = NULL;
  if (device < 0 || device >= e->devices)
    return c10c__fail(C10C_STATUS_ERROR, "CUDA error: invalid device ordinal");
  if (size == 0) return C10C_STATUS_OK;
  /* no device holds it (2^62 bytes; 2^30 on a 32-bit host); keeps the rounding from overflowing */
  if (size > (SIZE_MAX >> 2) + 1) {
    c10c__mutex_lock(&e->lock);
    e->state[device].stats.num_ooms++;
    c10c_status st = out_of_memory(e, device, size, stream);
    c10c__mutex_unlock(&e->lock);
    return st;
  }
  c10c__mutex_lock(&e->lock);
  device_state *d = &e->state[device];
  uint64_t tag = 0;
  if (d->plan != NULL && e->plan->malloc(d->plan, size, stream, out, &tag)) {
    c10c__mutex_unlock(&e->lock);
    return C10C_STATUS_OK;
  }
  size_t rounded = round_size(e, size);
  bool small = rounded <= C10C__SMALL_SIZE;
  if (e->backend.event_query != NULL)
    for (int i = 0; i < e->devices; i++) process_events(e, i, false);
  pool *p = &d->pools[small ? 0 : 1];
  c10c_status st = C10C_STATUS_OK;
  size_t max_split = e->config.max_split_size;
  if (!small && e->config.garbage_collection_threshold > 0 && d->allowed != SIZE_MAX) d->gc_calls++;
  block *b = best_fit(p, stream, rounded, max_split, e->config.expandable_segments);
  bool was_free = b != NULL; /* a free block of the pool: counted in inactive_split if split */
  stream_list still_used = {NULL, 0};
  if (b != NULL) {
    pool_remove(p, b);
  } else {
    if (e->config.stream_ordered_reuse && e->backend.stream_wait != NULL)
      b = reuse_across_streams(e, device, small, rounded, stream, &was_free, &still_used);
    /* planning never makes the device reserve more than the engine alone: before it grows, a
     * plan past that gives its arena up (plan_engine.h), maybe as free blocks of this pool */
    if (b == NULL && d->plan != NULL && e->plan->make_room(d->plan, rounded) &&
        (b = best_fit(p, stream, rounded, max_split, e->config.expandable_segments)) != NULL) {
      pool_remove(p, b);
      was_free = true;
    }
    if (b == NULL) st = alloc_block(e, device, rounded, small, stream, &b);
  }
  if (st == C10C_STATUS_OK) {
    split_off_rest(e, b, rounded, was_free && is_split(b), &still_used);
    b->allocated = true;
    b->requested = size;
    b->plan_tag = tag;
    table_insert(e, b);
    b->seg->used_at = ++d->handed;
    c10c__stat_pool_update(d->stats.allocation, small, 1);
    c10c__stat_pool_update(d->stats.active, small, 1);
    c10c__stat_pool_update(d->stats.allocated_bytes, small, (int64_t)b->size);
    c10c__stat_pool_update(d->stats.active_bytes, small, (int64_t)b->size);
    c10c__stat_pool_update(d->stats.requested_bytes, small, (int64_t)size);
    if (b->size >= max_split) c10c__stat_update(&d->stats.oversize_allocations, 1);
    /* torch records what was asked for in the three block events (alloc_found_block's
     * orig_size, then the block's requested_size); the segment events carry the segment's */
    trace(e, device, TRACE_ALLOC, b->ptr, size, stream);
    *out = b->ptr;
  } else if (tag != 0) {
    e->plan->unrecord(d->plan, tag);
  }
  c10c__mutex_unlock(&e->lock);
  return st;
}

/* A block back in its pool, merged with free neighbours (PyTorch's free_block). Lock held. */
static void free_block(c10c__engine *e, block *b) {
  device_state *d = state_of(e, b);
  /* planning's recording: the block's bytes are free from now (after record_stream's events) */
  if (d->plan != NULL) e->plan->record_free(d->plan, b->plan_tag, b->requested, b->stream);
  b->plan_tag = 0;
  bool expandable = b->seg->expandable;
  int64_t split_blocks = 0, split_bytes = 0;
  deactivate(e, b);
  trace(e, b->seg->device, TRACE_FREE_COMPLETED, b->ptr, b->requested, b->stream);
  if (mergeable(b->prev)) {
    split_blocks--, split_bytes -= (int64_t)b->prev->size;
    b = absorb(e, b->prev, b, b->prev);
  }
  if (mergeable(b->next)) {
    split_blocks--, split_bytes -= (int64_t)b->next->size;
    b = absorb(e, b, b->next, b->next);
  }
  if (is_split(b)) split_blocks++, split_bytes += (int64_t)b->size;
  if (!expandable) {
    c10c__stat_pool_update(d->stats.inactive_split, b->small, split_blocks);
    c10c__stat_pool_update(d->stats.inactive_split_bytes, b->small, split_bytes);
  }
  b->gc_base = d->gc_calls;
  attach(e, b);
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
 * event cannot be recorded, b is stuck: it waits for a device synchronization (release_stuck)
 * instead, the safe side (memory held, not reused early). Lock held. */
static void insert_events(c10c__engine *e, block *b) {
  device_state *d = state_of(e, b);
  int device = b->seg->device;
  b->pending = true;
  for (size_t i = 0; i < b->nuses; i++) {
    pending_event *p = c10c__malloc(sizeof *p);
    void *event = NULL;
    if (p == NULL || e->backend.event_record(e->backend.self, device, b->uses[i], &event) != 0) {
      c10c__free(p);
      if (b->events >= 0) d->stuck++;
      b->events = -1; /* never reaches 0 */
      continue;
    }
    *p = (pending_event){event, b, b->uses[i], d->events};
    d->events = p;
    if (b->events >= 0) b->events++;
  }
}

c10c_status c10c__engine_free(c10c__engine *e, void *ptr) {
  if (ptr == NULL) return C10C_STATUS_OK;
  c10c__mutex_lock(&e->lock);
  c10c__plan_state *planned = e->planning ? plan_holding(e, ptr) : NULL;
  if (planned != NULL) {
    c10c_status st = e->plan->free(planned, ptr);
    c10c__mutex_unlock(&e->lock);
    return st;
  }
  block *b = table_find(e, ptr, true);
  if (b == NULL) {
    c10c__mutex_unlock(&e->lock);
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "free of %p, which the caching allocator did not allocate (or already "
                      "freed)",
                      ptr);
  }
  device_state *d = state_of(e, b);
  c10c__stat_pool_update(d->stats.allocation, b->small, -1);
  c10c__stat_pool_update(d->stats.allocated_bytes, b->small, -(int64_t)b->size);
  c10c__stat_pool_update(d->stats.requested_bytes, b->small, -(int64_t)b->requested);
  if (b->size >= e->config.max_split_size) c10c__stat_update(&d->stats.oversize_allocations, -1);
  b->allocated = false;
  trace(e, b->seg->device, TRACE_FREE_REQUESTED, b->ptr, b->requested, b->stream);
  if (b->nuses > 0 && e->backend.event_record != NULL)
    insert_events(e, b);
  else
    free_block(e, b);
  c10c__mutex_unlock(&e->lock);
  return C10C_STATUS_OK;
}

c10c_status c10c__engine_share(c10c__engine *e, const void *ptr, c10c__block_share *out,
                               c10c_status (*visit)(void *ctx, void *handle), void *ctx) {
  c10c__mutex_lock(&e->lock);
  block *b = table_find(e, ptr, false);
  c10c_status st = C10C_STATUS_OK;
  c10c__plan_state *planned = b == NULL && e->planning ? plan_holding(e, ptr) : NULL;
  if (planned != NULL) { /* a planned block lies at its offset in the arena's segment */
    st = e->plan->share(planned, ptr, out);
    c10c__mutex_unlock(&e->lock);
    return st;
  }
  if (b == NULL) {
    c10c__mutex_unlock(&e->lock);
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "%p is not memory the CUDA caching allocator allocated", ptr);
  }
  const segment *s = b->seg;
  *out = (c10c__block_share){.base = s->base,
                             .size = s->size,
                             .offset = (size_t)(b->ptr - s->base),
                             .block_size = b->size,
                             .device = s->device,
                             .expandable = s->expandable};
  if (s->expandable) { /* ExpandableSegment::share: the pages from segmentLeft to segmentRight */
    size_t first = (size_t)(b->ptr - s->base) / s->page;
    size_t end = ((size_t)(b->ptr - s->base) + b->size + s->page - 1) / s->page;
    out->base = s->base + first * s->page;
    out->size = (end - first) * s->page;
    out->offset = (size_t)(b->ptr - out->base);
    out->page = s->page;
    for (size_t i = first; visit != NULL && i < end && st == C10C_STATUS_OK; i++)
      st = visit(ctx, s->handles[i]);
  }
  c10c__mutex_unlock(&e->lock);
  return st;
}

c10c_status c10c__engine_record_stream(c10c__engine *e, void *ptr, c10c_stream_id stream) {
  c10c__mutex_lock(&e->lock);
  block *b = table_find(e, ptr, false);
  c10c_status st = C10C_STATUS_OK;
  c10c__plan_state *planned = b == NULL && e->planning ? plan_holding(e, ptr) : NULL;
  if (planned != NULL) {
    st = e->plan->record_stream(planned, ptr, stream);
  } else if (b == NULL) {
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
  c10c__mutex_unlock(&e->lock);
  return st;
}

void c10c__engine_empty_cache(c10c__engine *e) {
  c10c__mutex_lock(&e->lock);
  for (int i = 0; i < e->devices; i++) release_cached(e, i, false, 0);
  c10c__mutex_unlock(&e->lock);
}

c10c_status c10c__engine_configure(c10c__engine *e, const c10c__device_alloc_config *config) {
  if (config->expandable_segments && (e->backend.map == NULL || e->backend.mem_info == NULL))
    return c10c__fail(C10C_STATUS_NOT_IMPLEMENTED,
                      "expandable_segments:True needs the driver's virtual memory management");
  if (config->stream_ordered_reuse &&
      (e->backend.stream_wait == NULL || e->backend.event_record == NULL))
    return c10c__fail(C10C_STATUS_NOT_IMPLEMENTED,
                      "stream_ordered_reuse:True needs events and stream waits");
  if (config->stitching && (!config->expandable_segments || e->backend.map_existing == NULL ||
                            e->backend.unmap_existing == NULL))
    return c10c__fail(C10C_STATUS_NOT_IMPLEMENTED,
                      "stitching:True needs expandable_segments:True and a driver that can map "
                      "memory at a second address");
  if ((config->planning || config->plan_file[0] != '\0') && e->plan == NULL)
    return c10c__fail(C10C_STATUS_NOT_IMPLEMENTED,
                      "planning:True and plan_file need an allocator with a planned mode");
  /* planning: the file read and the devices' states made first, so that nothing changes when
   * either fails */
  c10c__plan *file = NULL;
  c10c_status st = read_plan_file(e, config, &file);
  c10c__plan_state **made = NULL;
  if (st == C10C_STATUS_OK && (config->planning || file != NULL)) {
    made = c10c__calloc((size_t)e->devices, sizeof *made);
    if (made == NULL) st = c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory for planning");
    for (int i = 0; st == C10C_STATUS_OK && i < e->devices; i++)
      st = e->plan->state_new(&made[i], e, i);
  }
  if (st != C10C_STATUS_OK) {
    for (int i = 0; made != NULL && i < e->devices; i++) e->plan->state_destroy(made[i]);
    c10c__free(made);
    c10c__plan_destroy(file);
    return st;
  }
  int file_device = file != NULL ? (int)file->device : -1; /* the file is handed over below */
  c10c__mutex_lock(&e->lock);
  if (!config->stitching) /* nothing would reuse or dissolve the cached stitched ranges */
    for (int i = 0; i < e->devices; i++) dissolve_cached(e, i, true, 0);
  e->config = *config;
  for (int i = 0; i < e->devices; i++) {
    device_state *d = &e->state[i];
    if (d->plan == NULL && made != NULL) d->plan = made[i], made[i] = NULL, e->planning = true;
    if (d->plan != NULL)
      e->plan->configure(d->plan, config->planning, file_device == i ? file : NULL);
  }
  for (int i = 0; i < e->devices; i++)
    e->state[i].stats.max_split_size =
        config->max_split_size == SIZE_MAX ? -1 : (int64_t)config->max_split_size;
  c10c__mutex_unlock(&e->lock);
  for (int i = 0; made != NULL && i < e->devices; i++) e->plan->state_destroy(made[i]);
  c10c__free(made);
  return C10C_STATUS_OK;
}

c10c_status c10c__engine_record_history(c10c__engine *e, size_t max_entries) {
  if (max_entries > ((size_t)1 << 24))
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "max_entries %zu is more than the %zu entries a trace may keep", max_entries,
                      (size_t)1 << 24);
  trace_entry **fresh = c10c__calloc((size_t)e->devices, sizeof *fresh);
  bool ok = fresh != NULL;
  for (int i = 0; ok && max_entries > 0 && i < e->devices; i++)
    ok = (fresh[i] = c10c__malloc(max_entries * sizeof **fresh)) != NULL;
  if (!ok) {
    for (int i = 0; fresh != NULL && i < e->devices; i++) c10c__free(fresh[i]);
    c10c__free(fresh);
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory for a trace of %zu entries",
                      max_entries);
  }
  c10c__mutex_lock(&e->lock);
  e->trace_capacity = max_entries;
  for (int i = 0; i < e->devices; i++) {
    trace_entry *old = e->state[i].trace;
    e->state[i].trace = fresh[i];
    e->state[i].trace_next = e->state[i].trace_count = 0;
    fresh[i] = old;
  }
  c10c__mutex_unlock(&e->lock);
  for (int i = 0; i < e->devices; i++) c10c__free(fresh[i]);
  c10c__free(fresh);
  return C10C_STATUS_OK;
}

void c10c__engine_set_limit(c10c__engine *e, int device, size_t bytes) {
  if (device < 0 || device >= e->devices) return;
  c10c__mutex_lock(&e->lock);
  e->state[device].allowed = bytes;
  c10c__mutex_unlock(&e->lock);
}

void c10c__engine_reset_peaks(c10c__engine *e, int device) {
  if (device < 0 || device >= e->devices) return;
  c10c__mutex_lock(&e->lock);
  c10c_memory_stats *s = &e->state[device].stats;
  c10c__stats_reset_peaks(s, s);
  s->stitched_bytes.peak = s->stitched_bytes.current;
  c10c__mutex_unlock(&e->lock);
}

c10c_status c10c__engine_stats(c10c__engine *e, int device, c10c_memory_stats *out) {
  if (device < 0 || device >= e->devices)
    return c10c__fail(C10C_STATUS_ERROR, "CUDA error: invalid device ordinal");
  c10c__mutex_lock(&e->lock);
  c10c__copy_versioned(out, &e->state[device].stats, sizeof e->state[device].stats);
  c10c__mutex_unlock(&e->lock);
  return C10C_STATUS_OK;
}

/* ---- snapshots ---- */

/* A growing text buffer; ok turns false (and stays) when host memory runs out. */
typedef struct text {
  char *data;
  size_t len, cap;
  bool ok;
} text;

static void put(text *t, const char *format, ...) C10C__PRINTF(2, 3);

static void put(text *t, const char *format, ...) {
  if (!t->ok) return;
  for (;;) {
    va_list args;
    va_start(args, format);
    int n = vsnprintf(t->data + t->len, t->cap - t->len, format, args);
    va_end(args);
    if (n < 0) {
      t->ok = false;
      return;
    }
    if ((size_t)n < t->cap - t->len) {
      t->len += (size_t)n;
      return;
    }
    size_t cap = t->cap * 2 + (size_t)n + 1;
    char *grown = c10c__malloc(cap);
    if (grown == NULL) {
      t->ok = false;
      return;
    }
    memcpy(grown, t->data, t->len + 1);
    c10c__free(t->data);
    t->data = grown;
    t->cap = cap;
  }
}

/* A block's snapshot state; torch's requested_size goes with the active ones (an inactive
 * block's is 0 here where torch shows whatever its last or merged block asked for). */
static const char *block_state(const block *b) {
  return b->allocated ? "active_allocated" : b->pending ? "active_pending_free" : "inactive";
}

/* Mapped and not lent to a stitched range: in its segment's snapshot entries. */
static bool shown(const block *b) { return b != NULL && b->mapped && !b->lent; }

/* One snapshot segment: a fixed segment, or a run of shown blocks of an expandable one, or a
 * stitched range (with the source pages it maps). */
static void put_segment(text *t, const segment *s, const block *first, bool *comma) {
  size_t total = 0, allocated = 0, active = 0, requested = 0;
  const block *b = first;
  for (; shown(b); b = b->next) {
    total += b->size;
    if (b->allocated) allocated += b->size, requested += b->requested;
    if (b->allocated || b->pending) active += b->size;
  }
  put(t,
      "%s{\"device\": %d, \"address\": %" PRIuPTR
      ", \"total_size\": %zu, \"allocated_size\": "
      "%zu, \"active_size\": %zu, \"requested_size\": %zu, \"stream\": %" PRId64
      ", \"segment_type\": \"%s\", \"segment_pool_id\": [0, 0], \"is_expandable\": %s, "
      "\"frames\": [], \"blocks\": [",
      *comma ? ", " : "", s->device, (uintptr_t)first->ptr, total, allocated, active, requested,
      (int64_t)s->stream,
      s->stitched ? "stitched"
      : s->small  ? "small"
                  : "large",
      s->expandable ? "true" : "false");
  *comma = true;
  for (b = first; shown(b); b = b->next)
    put(t,
        "%s{\"address\": %" PRIuPTR
        ", \"size\": %zu, \"requested_size\": %zu, \"state\": "
        "\"%s\", \"frames\": []}",
        b == first ? "" : ", ", (uintptr_t)b->ptr, b->size,
        b->allocated || b->pending ? b->requested : 0, block_state(b));
  if (s->stitched) {
    put(t, "], \"stitched_pages\": [");
    for (size_t i = 0; i < s->nparts; i++)
      put(t, "%s[%" PRIuPTR ", %zu]", i ? ", " : "", (uintptr_t)s->parts[i]->ptr,
          s->parts[i]->size);
  }
  put(t, "]}");
}

c10c_status c10c__engine_snapshot(c10c__engine *e, char **out, size_t *len) {
  text t = {c10c__malloc(4096), 0, 4096, true};
  if (t.data == NULL) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory for a snapshot");
  t.data[0] = '\0';
  c10c__mutex_lock(&e->lock);
  put(&t, "{\"segments\": [");
  bool comma = false;
  for (int i = 0; i < e->devices; i++)
    for (const segment *s = e->state[i].segments; s != NULL; s = s->next)
      for (const block *b = s->head; b != NULL; b = b->next)
        if (shown(b) && !shown(b->prev)) put_segment(&t, s, b, &comma);
  for (int i = 0; i < e->devices; i++) { /* a plan's arena: one segment of its own */
    char *arena = NULL;
    if (e->state[i].plan == NULL) continue;
    if (e->plan->snapshot(e->state[i].plan, &arena) != C10C_STATUS_OK) t.ok = false;
    if (arena != NULL && arena[0] != '\0') {
      put(&t, "%s%s", comma ? ", " : "", arena);
      comma = true;
    }
    c10c__free(arena);
  }
  put(&t, "], \"device_traces\": [");
  for (int i = 0; i < e->devices; i++) {
    const device_state *d = &e->state[i];
    put(&t, "%s[", i ? ", " : "");
    for (size_t k = 0; k < d->trace_count; k++) {
      size_t at = (d->trace_next + e->trace_capacity - d->trace_count + k) % e->trace_capacity;
      const trace_entry *x = &d->trace[at];
      put(&t,
          "%s{\"action\": \"%s\", \"addr\": %" PRIuPTR ", \"size\": %zu, \"stream\": %" PRId64
          ", \"time_us\": %" PRId64 ", \"frames\": []%s}",
          k ? ", " : "", trace_names[x->action], x->addr, x->size, (int64_t)x->stream, x->time_us,
          "");
    }
    put(&t, "]");
  }
  const c10c__device_alloc_config *c = &e->config;
  put(&t,
      "], \"allocator_settings\": {\"max_split_size\": %" PRId64
      ", \"garbage_collection_threshold\": %g, \"expandable_segments\": %s, "
      "\"stream_ordered_reuse\": %s, \"trace_max_entries\": %zu, \"roundup_power2_divisions\": [",
      c->max_split_size == SIZE_MAX ? (int64_t)-1 : (int64_t)c->max_split_size,
      c->garbage_collection_threshold, c->expandable_segments ? "true" : "false",
      c->stream_ordered_reuse ? "true" : "false", e->trace_capacity);
  for (int i = 0; i < C10C__ROUNDUP_INTERVALS; i++)
    put(&t, "%s%zu", i ? ", " : "", c->roundup_power2_divisions[i]);
  put(&t, "], \"planning\": %s, \"plan_file\": \"", c->planning ? "true" : "false");
  for (const char *ch = c->plan_file; *ch != '\0'; ch++) /* a JSON string */
    if (*ch == '"' || *ch == '\\')
      put(&t, "\\%c", *ch);
    else if ((unsigned char)*ch < 0x20)
      put(&t, "\\u%04x", (unsigned)(unsigned char)*ch);
    else
      put(&t, "%c", *ch);
  put(&t, "\", \"stitching\": %s}}", c->stitching ? "true" : "false");
  c10c__mutex_unlock(&e->lock);
  if (!t.ok) {
    c10c__free(t.data);
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory for a snapshot");
  }
  *out = t.data;
  *len = t.len;
  return C10C_STATUS_OK;
}

/* ---- invariants (tests) ---- */

static size_t pool_count(const pool *p) {
  size_t n = 0;
  for (const block *b = pool_first(p); b != NULL; b = pool_after(p, b)) n++;
  return n;
}

/* Whether s is one of the device's segments, and a stitched range mapping the lent block b. */
static bool lent_to(const device_state *d, const segment *s, const block *b) {
  const segment *at = d->segments;
  while (at != NULL && at != s) at = at->next;
  for (size_t i = 0; at != NULL && at->stitched && i < at->nparts; i++)
    if (at->parts[i] == b) return true;
  return false;
}

/* The stitched range s's invariants (validate). */
static bool stitched_valid(const device_state *d, const segment *s, char *msg, size_t msg_size) {
  const block *h = s->head;
  size_t pages = s->page > 0 ? s->size / s->page : 0, page = 0;
  if (s->small || !s->expandable || pages == 0 || s->size % s->page != 0 || h->next != NULL ||
      h->size != s->size || !h->mapped || h->lent) {
    snprintf(msg, msg_size, "stitched range %p: not one mapped block over whole pages",
             (void *)s->base);
    return false;
  }
  for (size_t k = 0; k < s->nparts; k++) {
    const block *q = s->parts[k];
    const segment *src = q->seg;
    if (!q->lent || q->stitch != s || src == s || !src->expandable || src->stitched ||
        src->page != s->page || src->stream != s->stream || src->device != s->device) {
      snprintf(msg, msg_size, "stitched range %p: its part %p is not lent to it", (void *)s->base,
               (void *)q->ptr);
      return false;
    }
    size_t first = (size_t)(q->ptr - src->base) / src->page;
    for (size_t j = 0; j < q->size / src->page; j++, page++)
      if (page >= pages || src->handles[first + j] == NULL ||
          src->handles[first + j] != s->handles[page]) {
        snprintf(msg, msg_size, "stitched range %p: its page %zu is not its source's mapped page",
                 (void *)s->base, page);
        return false;
      }
  }
  bool cached = !h->allocated && !h->pending, listed = false;
  for (const block *b = d->stitch_cache; b != NULL && !listed; b = b->pool_next) listed = b == h;
  if (page != pages || cached != listed) {
    snprintf(msg, msg_size, "stitched range %p: %zu of %zu pages lent, %s, %s the cache",
             (void *)s->base, page, pages, cached ? "free" : "used", listed ? "in" : "not in");
    return false;
  }
  return true;
}

bool c10c__engine_validate(c10c__engine *e, char *msg, size_t msg_size) {
  bool ok = true;
#define EXPECT(cond, ...)                 \
  if (ok && !(cond)) {                    \
    snprintf(msg, msg_size, __VA_ARGS__); \
    ok = false;                           \
  }
  c10c__mutex_lock(&e->lock);
  size_t allocated_blocks = 0;
  for (int i = 0; i < e->devices && ok; i++) {
    device_state *d = &e->state[i];
    int64_t reserved[2] = {0, 0}, allocated[2] = {0, 0}, active[2] = {0, 0}, segments[2] = {0, 0};
    int64_t split_free[2] = {0, 0}, split_free_bytes[2] = {0, 0}; /* inactive_split */
    size_t free_mapped[2] = {0, 0}, unmapped[2] = {0, 0}, cached_stitched = 0;
    int64_t stitched_bytes = 0, lent_bytes = 0;
    for (const segment *s = d->segments; s != NULL && ok; s = s->next) {
      int p = s->small ? 0 : 1;
      if (s->stitched) { /* address space only: no segment, no reserved bytes */
        ok = stitched_valid(d, s, msg, msg_size);
        stitched_bytes += (int64_t)s->size;
        cached_stitched += !s->head->allocated && !s->head->pending;
      } else {
        segments[p]++;
      }
      EXPECT(s->head != NULL && s->head->ptr == s->base && s->head->prev == NULL,
             "segment %p: its first block is not at its base", (void *)s->base);
      char *at = s->base;
      for (const block *b = s->head; b != NULL && ok; b = b->next) {
        EXPECT(b->ptr == at, "segment %p: a gap or overlap at %p", (void *)s->base, (void *)b->ptr);
        EXPECT(b->seg == s && b->small == s->small && b->stream == s->stream,
               "block %p: wrong segment, pool or stream", (void *)b->ptr);
        EXPECT(b->next == NULL || b->next->prev == b, "block %p: broken links", (void *)b->ptr);
        EXPECT(!(mergeable(b) && mergeable(b->next)), "blocks %p and %p are free neighbours",
               (void *)b->ptr, (void *)b->next->ptr);
        EXPECT(b->mapped || s->expandable, "block %p: unmapped in a fixed segment", (void *)b->ptr);
        if (!b->mapped) {
          EXPECT(
              !b->allocated && (size_t)(b->ptr - s->base) % s->page == 0 && b->size % s->page == 0,
              "unmapped block %p: allocated or not page aligned", (void *)b->ptr);
          EXPECT(b->next == NULL || b->next->mapped, "unmapped blocks %p and its next not merged",
                 (void *)b->ptr);
          unmapped[p]++;
        } else if (!s->stitched) {
          reserved[p] += (int64_t)b->size;
        }
        if (b->lent) {
          EXPECT(b->mapped && !b->allocated && !b->pending && s->expandable && !s->stitched &&
                     (size_t)(b->ptr - s->base) % s->page == 0 && b->size % s->page == 0,
                 "lent block %p: not free whole mapped pages", (void *)b->ptr);
          EXPECT(lent_to(d, b->stitch, b), "lent block %p: not mapped by a stitched range",
                 (void *)b->ptr);
          lent_bytes += (int64_t)b->size;
        }
        if (b->allocated) {
          allocated[p] += (int64_t)b->size;
          allocated_blocks++;
          EXPECT(table_find(e, b->ptr, false) == b, "block %p: allocated, not in the table",
                 (void *)b->ptr);
        }
        if (b->allocated || b->pending) active[p] += (int64_t)b->size;
        if (mergeable(b) && !s->stitched) {
          free_mapped[p]++;
          if (!s->expandable && is_split(b))
            split_free[p]++, split_free_bytes[p] += (int64_t)b->size;
          EXPECT(b->bin == bin_of(b->size), "block %p: in bin %d, its size says %d", (void *)b->ptr,
                 b->bin, bin_of(b->size));
        }
        at += b->size;
      }
      EXPECT(at == s->base + s->size, "segment %p: blocks cover %zu of %zu bytes", (void *)s->base,
             (size_t)(at - s->base), s->size);
    }
    if (ok && d->plan != NULL)
      ok = e->plan->validate(d->plan, reserved, allocated, active, segments, msg, msg_size);
    size_t listed_stitched = 0;
    for (const block *b = d->stitch_cache; b != NULL; b = b->pool_next) listed_stitched++;
    EXPECT(listed_stitched == cached_stitched && lent_bytes == stitched_bytes &&
               d->stats.stitched_bytes.current == stitched_bytes,
           "device %d: %zu stitched ranges cached, %zu listed; %lld bytes lent, %lld stitched, "
           "stitched_bytes says %lld",
           i, cached_stitched, listed_stitched, (long long)lent_bytes, (long long)stitched_bytes,
           (long long)d->stats.stitched_bytes.current);
    for (int p = 0; p < 2 && ok; p++) {
      EXPECT(pool_count(&d->pools[p]) == free_mapped[p],
             "device %d pool %d: %zu blocks listed, %zu free", i, p, pool_count(&d->pools[p]),
             free_mapped[p]);
      size_t listed = 0;
      for (const block *b = d->unmapped[p]; b != NULL; b = b->pool_next) listed++;
      EXPECT(listed == unmapped[p], "device %d: %zu unmapped ranges listed, %zu in segments", i,
             listed, unmapped[p]);
      int kind = p == 0 ? C10C_STAT_SMALL_POOL : C10C_STAT_LARGE_POOL;
      const c10c_memory_stats *st = &d->stats;
      EXPECT(st->reserved_bytes[kind].current == reserved[p] &&
                 st->allocated_bytes[kind].current == allocated[p] &&
                 st->active_bytes[kind].current == active[p] &&
                 st->segment[kind].current == segments[p],
             "device %d pool %d: statistics say reserved %lld allocated %lld active %lld segments "
             "%lld; the blocks %lld %lld %lld %lld",
             i, p, (long long)st->reserved_bytes[kind].current,
             (long long)st->allocated_bytes[kind].current,
             (long long)st->active_bytes[kind].current, (long long)st->segment[kind].current,
             (long long)reserved[p], (long long)allocated[p], (long long)active[p],
             (long long)segments[p]);
      EXPECT(
          st->inactive_split[kind].current == split_free[p] &&
              st->inactive_split_bytes[kind].current == split_free_bytes[p],
          "device %d pool %d: inactive_split says %lld blocks, %lld bytes; the blocks %lld, %lld",
          i, p, (long long)st->inactive_split[kind].current,
          (long long)st->inactive_split_bytes[kind].current, (long long)split_free[p],
          (long long)split_free_bytes[p]);
    }
  }
  /* every allocated block was found in the table above: the count says there are no others */
  EXPECT(!ok || e->in_table == allocated_blocks, "%zu blocks in the address table, %zu allocated",
         e->in_table, allocated_blocks);
#undef EXPECT
  c10c__mutex_unlock(&e->lock);
  return ok;
}
