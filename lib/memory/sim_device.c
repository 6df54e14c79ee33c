/* A simulated device (include/c10c/replay.h): the caching engine over a backend that fabricates
 * addresses and counts bytes, as the stand-in driver's fake-address mode does
 * (tests/cuda_stub/cuda_stub.c), without a driver. */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "alloc_config.h"
#include "c10c/replay.h"
#include "caching_engine.h"
#include "plan_engine.h"
#include "internal.h"
#include "sysmem.h"

/* An address range given back (an expandable segment's reservation), for reuse once the
 * fabricated addresses run out. */
typedef struct sim_range {
  uint64_t at, span;
} sim_range;

struct c10c_sim_device {
  c10c__engine *engine;
  uint64_t capacity, used;     /* device bytes: segments plus mapped pages */
  uint64_t next_up, next_down; /* the next ascending range; the last descending one */
  bool descending;
  int64_t mallocs, frees; /* fixed segments; the engine counts maps with them */
  sim_range *returned;    /* reservations given back, reused when addresses run out */
  size_t nreturned, capreturned;
};

enum { SIM_ALIGN = 2 << 20 };

/* Fabricated ranges go from 16 TiB up (the stand-in's), or down from 4 EiB: room for millions
 * of expandable segments' reservations (1.125 x the capacity each, one per stream and pool,
 * made again after each empty_cache), so that address space never fails a replay a real
 * driver, which reuses addresses, would complete. A 32-bit pointer holds neither (they would
 * all be address 0), so there from 256 MiB up or down from 3.75 GiB. */
#if UINTPTR_MAX > UINT32_MAX
#define SIM_UP   ((uint64_t)1 << 44)
#define SIM_DOWN ((uint64_t)1 << 62)
#else
#define SIM_UP   ((uint64_t)1 << 28)
#define SIM_DOWN ((uint64_t)15 << 28)
#endif

static uint64_t span_of(size_t bytes) {
  return (((uint64_t)bytes + SIM_ALIGN - 1) & ~(uint64_t)(SIM_ALIGN - 1)) + SIM_ALIGN;
}

/* A 2 MiB aligned range with a 2 MiB gap after it (the stand-in's fabricate); once the
 * fabricated addresses are used up, a reservation given back that is large enough; 0 when
 * there is none (on a 32-bit target, after 3.5 GiB of ranges). */
static uint64_t fabricate(c10c_sim_device *d, size_t bytes) {
  uint64_t span = span_of(bytes);
  if (d->descending && d->next_down - SIM_UP >= span) return d->next_down -= span;
  if (!d->descending && SIM_DOWN - d->next_up >= span) {
    uint64_t at = d->next_up;
    d->next_up += span;
    return at;
  }
  for (size_t i = 0; i < d->nreturned; i++)
    if (d->returned[i].span >= span) {
      uint64_t at = d->returned[i].at;
      d->returned[i] = d->returned[--d->nreturned];
      return at;
    }
  return 0;
}

static c10c_status take(c10c_sim_device *d, size_t size) {
  if (size > d->capacity - d->used)
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "CUDA error: out of memory");
  d->used += size;
  return C10C_STATUS_OK;
}

static c10c_status sim_malloc(void *self, int device, size_t size, void **out) {
  (void)device;
  c10c_sim_device *d = self;
  c10c_status st = take(d, size);
  if (st != C10C_STATUS_OK) return st;
  uint64_t at = fabricate(d, size);
  if (at == 0) {
    d->used -= size;
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "CUDA error: out of memory");
  }
  d->mallocs++;
  *out = (void *)(uintptr_t)at;
  return C10C_STATUS_OK;
}

static void sim_free(void *self, int device, void *ptr, size_t size) {
  (void)device, (void)ptr;
  c10c_sim_device *d = self;
  d->used -= size;
  d->frees++;
}

static c10c_status sim_mem_info(void *self, int device, size_t *free_bytes, size_t *total) {
  (void)device;
  c10c_sim_device *d = self;
  *free_bytes = (size_t)(d->capacity - d->used);
  *total = (size_t)d->capacity;
  return C10C_STATUS_OK;
}

static c10c_status sim_reserve(void *self, int device, size_t size, void **base) {
  (void)device;
  uint64_t at = fabricate(self, size);
  if (at == 0) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "CUDA error: out of memory");
  *base = (void *)(uintptr_t)at;
  return C10C_STATUS_OK;
}

static c10c_status sim_map(void *self, int device, void *ptr, size_t size, void **handle) {
  (void)device;
  c10c_sim_device *d = self;
  c10c_status st = take(d, size);
  if (st != C10C_STATUS_OK) return st;
  *handle = ptr;
  return C10C_STATUS_OK;
}

static void sim_unmap(void *self, int device, void *ptr, size_t size, void *handle) {
  (void)device, (void)ptr, (void)handle;
  c10c_sim_device *d = self;
  d->used -= size;
}

static void sim_unreserve(void *self, int device, void *base, size_t size) {
  (void)device;
  c10c_sim_device *d = self;
  if (d->nreturned == d->capreturned) {
    sim_range *grown = c10c__grow(d->returned, &d->capreturned, d->nreturned, sizeof *grown, 16);
    if (grown == NULL) return; /* without host memory the range is simply not reused */
    d->returned = grown;
  }
  d->returned[d->nreturned++] = (sim_range){(uint64_t)(uintptr_t)base, span_of(size)};
}

/* Events and stream waits: nothing runs on a simulated device's streams, so every event has
 * completed when it is recorded. They let stream-ordered reuse and plans spread over several
 * streams work as over a driver. */
static char sim_event; /* every event is this one */

static c10c_status sim_event_record(void *self, int device, c10c_stream_id stream, void **out) {
  (void)self, (void)device, (void)stream;
  *out = &sim_event;
  return C10C_STATUS_OK;
}

static c10c_status sim_event_query(void *self, void *event, bool *done) {
  (void)self, (void)event;
  *done = true;
  return C10C_STATUS_OK;
}

static void sim_event_nothing(void *self, void *event) { (void)self, (void)event; }

static c10c_status sim_stream_wait(void *self, int device, c10c_stream_id stream, void *event) {
  (void)self, (void)device, (void)stream, (void)event;
  return C10C_STATUS_OK;
}

static void sim_synchronize(void *self, int device) { (void)self, (void)device; }

/* Stitching: a page mapped at a second address takes no more memory. */
static c10c_status sim_map_existing(void *self, int device, void *ptr, size_t size, void *handle) {
  (void)self, (void)device, (void)ptr, (void)size, (void)handle;
  return C10C_STATUS_OK;
}

static void sim_unmap_existing(void *self, int device, void *ptr, size_t size) {
  (void)self, (void)device, (void)ptr, (void)size;
}

c10c_status c10c_sim_device_new(c10c_sim_device **out, uint64_t capacity, const char *settings,
                                uint32_t flags) {
  C10C__CHECK_NOT_NULL(out);
  if (capacity == 0 || capacity > (uint64_t)SIZE_MAX / 2)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "a simulated device needs a capacity from 1 byte to %zu bytes, not %" PRIu64,
                      (size_t)SIZE_MAX / 2, capacity);
  if (flags & ~(uint32_t)C10C_SIM_DESCENDING)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "unknown simulated device flags 0x%x",
                      (unsigned)flags);
  c10c__device_alloc_config config = c10c__device_alloc_config_default();
  char msg[256];
  c10c_status st =
      c10c__parse_device_alloc_config(settings ? settings : "", &config, msg, sizeof msg);
  if (st != C10C_STATUS_OK) return c10c__fail(st, "%s", msg);
  c10c_sim_device *d = c10c__malloc(sizeof *d);
  if (d == NULL) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory (host)");
  *d = (c10c_sim_device){.capacity = capacity,
                         .next_up = SIM_UP,
                         .next_down = SIM_DOWN,
                         .descending = flags & C10C_SIM_DESCENDING};
  c10c__segment_backend backend = {.malloc = sim_malloc,
                                   .free = sim_free,
                                   .mem_info = sim_mem_info,
                                   .event_record = sim_event_record,
                                   .event_query = sim_event_query,
                                   .event_synchronize = sim_event_nothing,
                                   .event_destroy = sim_event_nothing,
                                   .stream_wait = sim_stream_wait,
                                   .synchronize = sim_synchronize,
                                   .self = d,
                                   .reserve = sim_reserve,
                                   .map = sim_map,
                                   .unmap = sim_unmap,
                                   .unreserve = sim_unreserve,
                                   .map_existing = sim_map_existing,
                                   .unmap_existing = sim_unmap_existing};
  st = c10c__engine_new(&d->engine, backend, 1, &c10c__plan_engine_hooks);
  if (st == C10C_STATUS_OK) st = c10c__engine_configure(d->engine, &config);
  if (st != C10C_STATUS_OK) {
    if (d->engine != NULL) c10c__engine_destroy(d->engine);
    c10c__free(d->returned);
    c10c__free(d);
    return st;
  }
  *out = d;
  return C10C_STATUS_OK;
}

c10c__engine *c10c__sim_device_engine(c10c_sim_device *d) { return d->engine; }

void c10c_sim_device_destroy(c10c_sim_device *d) {
  if (d == NULL) return;
  c10c__engine_destroy(d->engine);
  c10c__free(d->returned);
  c10c__free(d);
}

c10c_status c10c_sim_device_malloc(uint64_t *out_address, c10c_sim_device *d, size_t size,
                                   int64_t stream) {
  C10C__CHECK_NOT_NULL(out_address);
  C10C__CHECK_NOT_NULL(d);
  void *ptr = NULL;
  c10c_status st = c10c__engine_malloc(d->engine, 0, size, (c10c_stream_id)stream, &ptr);
  if (st == C10C_STATUS_OK) *out_address = (uint64_t)(uintptr_t)ptr;
  return st;
}

c10c_status c10c_sim_device_free(c10c_sim_device *d, uint64_t address) {
  C10C__CHECK_NOT_NULL(d);
  if (address == 0) return C10C_STATUS_OK;
  return c10c__engine_free(d->engine, (void *)(uintptr_t)address);
}

c10c_status c10c_sim_device_empty_cache(c10c_sim_device *d) {
  C10C__CHECK_NOT_NULL(d);
  c10c__engine_empty_cache(d->engine);
  return C10C_STATUS_OK;
}

c10c_status c10c_sim_device_configure(c10c_sim_device *d, const char *settings) {
  C10C__CHECK_NOT_NULL(d);
  c10c__device_alloc_config config = c10c__device_alloc_config_default();
  char msg[256];
  c10c_status st =
      c10c__parse_device_alloc_config(settings ? settings : "", &config, msg, sizeof msg);
  if (st != C10C_STATUS_OK) return c10c__fail(st, "%s", msg);
  return c10c__engine_configure(d->engine, &config);
}

c10c_status c10c_sim_device_set_memory_fraction(c10c_sim_device *d, double fraction) {
  C10C__CHECK_NOT_NULL(d);
  if (!(fraction >= 0.0 && fraction <= 1.0)) /* NaN too */
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "Invalid fraction value: %.17g. Allowed range: 0~1", fraction);
  c10c__engine_set_limit(d->engine, 0, c10c__fraction_of(fraction, d->capacity));
  return C10C_STATUS_OK;
}

c10c_status c10c_sim_device_reset_peaks(c10c_sim_device *d) {
  C10C__CHECK_NOT_NULL(d);
  c10c__engine_reset_peaks(d->engine, 0);
  return C10C_STATUS_OK;
}

c10c_status c10c_sim_device_step(c10c_sim_device *d) {
  C10C__CHECK_NOT_NULL(d);
  return c10c__engine_step(d->engine, 0);
}

/* The size of the first published version of the figures (up to and including capacity). */
#define SIM_STATS_MIN_SIZE (offsetof(c10c_sim_device_stats, capacity) + sizeof(uint64_t))

c10c_status c10c_sim_device_get_stats(c10c_sim_device_stats *out, c10c_sim_device *d) {
  C10C__CHECK_NOT_NULL(out);
  C10C__CHECK_NOT_NULL(d);
  c10c_status checked =
      c10c__check_struct_size(out->struct_size, SIM_STATS_MIN_SIZE, "c10c_sim_device_stats", "");
  if (checked != C10C_STATUS_OK) return checked;
  c10c_memory_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  c10c_status st = c10c__engine_stats(d->engine, 0, &s);
  if (st != C10C_STATUS_OK) return st;
  c10c_sim_device_stats all = {.struct_size = (uint32_t)sizeof all,
                               .device_mallocs = d->mallocs,
                               .device_frees = d->frees,
                               .maps = s.num_device_alloc - d->mallocs,
                               .unmaps = s.num_device_free - d->frees,
                               .reserved = s.reserved_bytes[C10C_STAT_ALL].current,
                               .peak_reserved = s.reserved_bytes[C10C_STAT_ALL].peak,
                               .allocated = s.allocated_bytes[C10C_STAT_ALL].current,
                               .peak_allocated = s.allocated_bytes[C10C_STAT_ALL].peak,
                               .num_ooms = s.num_ooms,
                               .capacity = d->capacity,
                               .plan_arena_bytes = s.plan_arena_bytes,
                               .plan_served = s.plan_served,
                               .plan_fallbacks = s.plan_fallbacks,
                               .plan_rebuilds = s.plan_rebuilds,
                               .plan_drops = s.plan_drops,
                               .num_stitches = s.num_stitches,
                               .stitched_bytes = s.stitched_bytes.current,
                               .peak_stitched_bytes = s.stitched_bytes.peak,
                               .plan_declines = s.plan_declines};
  c10c__copy_versioned(out, &all, sizeof all);
  return C10C_STATUS_OK;
}
