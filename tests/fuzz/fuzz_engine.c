/* The caching engine (lib/caching_engine.h) over a fake backend, driven by operations read from
 * the input: mallocs of any size (0 and absurd ones included) on any device and stream, frees
 * (and bad frees), record_stream, work queued on streams and time passing, empty_cache,
 * c10c__engine_configure with any settings the configuration parser can produce, set_limit,
 * reset_peaks, stats, record_history and snapshots, planning (step markers, planning on and off,
 * plan files made by c10c_plan_make from the input), and failures of the backend (segment
 * mallocs, page maps, reservations, events, stream waits, memory queries) and of host memory
 * at chosen points.
 *
 * The backend has fabricated addresses (nothing is touched), an event clock (an event recorded
 * on a stream completes when the clock passes the work queued there), and optional groups
 * (events, virtual memory, stream waits, device synchronization, memory queries) chosen by the
 * input. It checks what it is given back: only live segments, mappings, reservations and
 * events, each exactly once, and that no mapping or segment is dropped while a stream's work on
 * it may still run.
 *
 * After every step: c10c__engine_validate holds; every live block lies in memory the backend
 * handed out and still backs; live blocks do not overlap; the statistics agree with the
 * backend's own counts (reserved bytes, segments) and with the harness's (live allocations);
 * and no block is handed to a stream while another stream that used it may still be at work,
 * unless the new stream was made to wait. At the end the engine is destroyed and the backend
 * must have got back every segment, mapping and reservation, and every event destroyed.
 */
#define _POSIX_C_SOURCE 200809L /* getpid */
#include <stdio.h>
#include <unistd.h>

#include "fuzz.h"

#include "c10c/replay.h"
#include "c10c/testing.h"
#include "caching_engine.h"
#include "plan_engine.h"
#include "sysmem.h"

enum { MiB = 1 << 20, STREAMS = 4, MAX_LIVE = 64, MAX_RANGES = 1024, MAX_DEVICES = 3 };

/* Fabricated addresses stay below this, so that no range the engine computes wraps. */
#if UINTPTR_MAX < UINT64_MAX
#define ADDRESS_LIMIT ((uintptr_t)0xF0000000u) /* 32 bits: 256 MiB to 3.75 GiB */
#else
#define ADDRESS_LIMIT ((uintptr_t)1 << 62)
#endif

/* ---- the fake backend ---- */

typedef enum backend_call {
  CALL_MALLOC,
  CALL_MAP,
  CALL_RESERVE,
  CALL_EVENT_RECORD,
  CALL_EVENT_QUERY,
  CALL_STREAM_WAIT,
  CALL_MEM_INFO,
  CALL_KINDS
} backend_call;

typedef struct range {
  uintptr_t start;
  size_t size;
  int device;
  void *handle; /* mappings: the handle map returned */
} range;

typedef struct fake_event {
  uint64_t magic;
  uint64_t done_at;
} fake_event;

#define EVENT_MAGIC UINT64_C(0xE7E7E7E7E7E7E7E7)

/* Memory still used by a stream's work: [start, end) until done_at, by stream user. */
typedef struct busy_range {
  uintptr_t start, end;
  uint64_t done_at;
  int user;
} busy_range;

typedef struct fake {
  size_t capacity, in_use[MAX_DEVICES], reserved[MAX_DEVICES];
  uintptr_t next_address;
  range segments[MAX_RANGES], mappings[MAX_RANGES], reservations[64];
  size_t nsegments, nmappings, nreservations;
  int live_events;
  uint64_t now, busy[STREAMS];
  /* failure injection: the call of that kind that fails next (countdown), and how many after it */
  int fail_in[CALL_KINDS], fail_more[CALL_KINDS];
  bool synchronize; /* the backend has the synchronize entry point */
  bool released;    /* memory went back (free or unmap) during this step */
  busy_range busy_ranges[MAX_RANGES];
  size_t nbusy;
} fake;

static fake F;

/* FUZZ_ENGINE_TRACE=1 in the environment prints every operation and backend call (to read a
 * finding). */
static bool tracing;
#define TRACE(...)                                  \
  do {                                              \
    if (tracing) fprintf(stderr, "  " __VA_ARGS__); \
  } while (0)

static int stream_slot(c10c_stream_id s) { return (int)((uint64_t)s % STREAMS); }

/* Whether this call of the kind is to fail (a c10c__fail message set, as a driver would). */
static bool injected(backend_call kind) {
  if (F.fail_in[kind] <= 0) return false;
  if (--F.fail_in[kind] > 0) return false;
  if (F.fail_more[kind] > 0) {
    F.fail_more[kind]--;
    F.fail_in[kind] = 1;
  }
  return true;
}

static c10c_status injected_failure(backend_call kind) {
  return c10c__fail(
      kind == CALL_MALLOC || kind == CALL_MAP ? C10C_STATUS_OUT_OF_MEMORY : C10C_STATUS_ERROR,
      "injected failure of backend call %d", (int)kind);
}

static bool device_ok(int device) { return device >= 0 && device < MAX_DEVICES; }

/* Fabricated address space for size bytes, or 0 when none is left below ADDRESS_LIMIT. */
static uintptr_t take_addresses(size_t size) {
  if (size > ADDRESS_LIMIT - F.next_address) return 0;
  uintptr_t at = F.next_address;
  F.next_address += size;
  F.next_address = (F.next_address + 4095 + 4096) & ~(uintptr_t)4095; /* a gap */
  return at;
}

static bool overlaps(uintptr_t a, size_t an, uintptr_t b, size_t bn) {
  return a < b + bn && b < a + an;
}

/* No queued work may still use [start, start + size) when memory is unmapped or freed. */
static void check_idle(uintptr_t start, size_t size, const char *what) {
  for (size_t i = 0; i < F.nbusy; i++) {
    const busy_range *b = &F.busy_ranges[i];
    FUZZ_CHECK(b->done_at <= F.now || !overlaps(start, size, b->start, b->end - b->start),
               "%s of [%#lx, +%zu) while stream %d works on it until %llu (now %llu)", what,
               (unsigned long)start, size, b->user, (unsigned long long)b->done_at,
               (unsigned long long)F.now);
  }
}

/* The device finished all its work (cuCtxSynchronize; cudaFree synchronizes implicitly too). */
static void all_work_done(void) {
  for (int s = 0; s < STREAMS; s++)
    if (F.busy[s] > F.now) F.now = F.busy[s];
}

static c10c_status fake_malloc(void *self, int device, size_t size, void **out) {
  (void)self;
  FUZZ_CHECK(device_ok(device) && size > 0, "malloc(%d, %zu)", device, size);
  if (injected(CALL_MALLOC)) return injected_failure(CALL_MALLOC);
  if (size > F.capacity - F.in_use[device] || F.nsegments == MAX_RANGES)
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "fake device %d is full", device);
  uintptr_t at = take_addresses(size);
  if (at == 0) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "no address space left");
  F.segments[F.nsegments++] = (range){at, size, device, NULL};
  TRACE("  backend: segment [%#lx, +%zu) on device %d\n", (unsigned long)at, size, device);
  F.in_use[device] += size;
  F.reserved[device] += size;
  *out = (void *)at;
  return C10C_STATUS_OK;
}

/* Removes the entry of list matching (ptr, size, device[, handle]); false if none does. */
static bool take_range(range *list, size_t *n, uintptr_t ptr, size_t size, int device,
                       const void *handle, bool check_handle) {
  for (size_t i = 0; i < *n; i++)
    if (list[i].start == ptr && list[i].size == size && list[i].device == device &&
        (!check_handle || list[i].handle == handle)) {
      list[i] = list[--*n];
      return true;
    }
  return false;
}

static void fake_free(void *self, int device, void *ptr, size_t size) {
  (void)self;
  FUZZ_CHECK(take_range(F.segments, &F.nsegments, (uintptr_t)ptr, size, device, NULL, false),
             "free of %p (%zu bytes, device %d), which is no live segment", ptr, size, device);
  TRACE("  backend: free segment %p\n", ptr);
  all_work_done();
  F.in_use[device] -= size;
  F.reserved[device] -= size;
  F.released = true;
}

static c10c_status fake_mem_info(void *self, int device, size_t *free_bytes, size_t *total) {
  (void)self;
  FUZZ_CHECK(device_ok(device), "mem_info(%d)", device);
  if (injected(CALL_MEM_INFO)) return injected_failure(CALL_MEM_INFO);
  *free_bytes = F.capacity - F.in_use[device];
  *total = F.capacity;
  return C10C_STATUS_OK;
}

static c10c_status fake_event_record(void *self, int device, c10c_stream_id stream, void **out) {
  (void)self;
  FUZZ_CHECK(device_ok(device), "event_record(%d)", device);
  if (injected(CALL_EVENT_RECORD)) return injected_failure(CALL_EVENT_RECORD);
  fake_event *ev = malloc(sizeof *ev);
  if (ev == NULL) abort();
  *ev = (fake_event){EVENT_MAGIC, F.busy[stream_slot(stream)]};
  TRACE("  backend: event %p on stream %d, done at %llu\n", (void *)ev, stream_slot(stream),
        (unsigned long long)ev->done_at);
  F.live_events++;
  *out = ev;
  return C10C_STATUS_OK;
}

static fake_event *live_event(void *event) {
  fake_event *ev = event;
  FUZZ_CHECK(ev != NULL && ev->magic == EVENT_MAGIC, "an event that is not live");
  return ev;
}

static c10c_status fake_event_query(void *self, void *event, bool *done) {
  (void)self;
  fake_event *ev = live_event(event);
  if (injected(CALL_EVENT_QUERY)) return injected_failure(CALL_EVENT_QUERY);
  *done = ev->done_at <= F.now;
  return C10C_STATUS_OK;
}

static void fake_event_synchronize(void *self, void *event) {
  (void)self;
  fake_event *ev = live_event(event);
  if (ev->done_at > F.now) F.now = ev->done_at;
  TRACE("  backend: synchronize event %p\n", event);
}

static void fake_event_destroy(void *self, void *event) {
  (void)self;
  live_event(event)->magic = 0;
  free(event);
  F.live_events--;
}

static c10c_status fake_stream_wait(void *self, int device, c10c_stream_id stream, void *event) {
  (void)self;
  FUZZ_CHECK(device_ok(device), "stream_wait(%d)", device);
  fake_event *ev = live_event(event);
  if (injected(CALL_STREAM_WAIT)) return injected_failure(CALL_STREAM_WAIT);
  uint64_t *busy = &F.busy[stream_slot(stream)];
  if (*busy < ev->done_at) *busy = ev->done_at; /* stream order: its later work runs after */
  TRACE("  backend: stream %d waits for event %p\n", stream_slot(stream), event);
  return C10C_STATUS_OK;
}

static void fake_synchronize(void *self, int device) {
  (void)self;
  FUZZ_CHECK(device_ok(device), "synchronize(%d)", device);
  all_work_done();
}

static c10c_status fake_reserve(void *self, int device, size_t size, void **base) {
  (void)self;
  /* expandable segments reserve more than the capacity, stitched ranges what they map */
  FUZZ_CHECK(device_ok(device) && size > 0, "reserve(%d, %zu) on a device of %zu bytes", device,
             size, F.capacity);
  if (injected(CALL_RESERVE)) return injected_failure(CALL_RESERVE);
  uintptr_t at = F.nreservations < 64 ? take_addresses(size) : 0;
  if (at == 0) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "no address space left");
  F.reservations[F.nreservations++] = (range){at, size, device, NULL};
  *base = (void *)at;
  return C10C_STATUS_OK;
}

static c10c_status fake_map(void *self, int device, void *ptr, size_t size, void **handle) {
  (void)self;
  uintptr_t at = (uintptr_t)ptr;
  bool inside = false;
  for (size_t i = 0; i < F.nreservations && !inside; i++)
    inside = F.reservations[i].device == device && at >= F.reservations[i].start &&
             size <= F.reservations[i].size &&
             at - F.reservations[i].start <= F.reservations[i].size - size;
  FUZZ_CHECK(inside && size > 0, "map of [%p, +%zu) outside the device's reservations", ptr, size);
  for (size_t i = 0; i < F.nmappings; i++)
    FUZZ_CHECK(!overlaps(at, size, F.mappings[i].start, F.mappings[i].size),
               "map of [%p, +%zu) over a mapping", ptr, size);
  if (injected(CALL_MAP)) return injected_failure(CALL_MAP);
  if (size > F.capacity - F.in_use[device] || F.nmappings == MAX_RANGES)
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "fake device %d is full", device);
  static uintptr_t handles = 1;
  void *h = (void *)handles++;
  F.mappings[F.nmappings++] = (range){at, size, device, h};
  TRACE("  backend: map [%p, +%zu)\n", ptr, size);
  F.in_use[device] += size;
  F.reserved[device] += size;
  *handle = h;
  return C10C_STATUS_OK;
}

static bool handle_mapped(const void *handle) {
  for (size_t i = 0; i < F.nmappings; i++)
    if (F.mappings[i].handle == handle) return true;
  return false;
}

static void fake_unmap(void *self, int device, void *ptr, size_t size, void *handle) {
  (void)self;
  FUZZ_CHECK(take_range(F.mappings, &F.nmappings, (uintptr_t)ptr, size, device, handle, true),
             "unmap of [%p, +%zu) (device %d), which is no live mapping", ptr, size, device);
  FUZZ_CHECK(!handle_mapped(handle), "unmap and free of [%p, +%zu) still mapped elsewhere", ptr,
             size);
  TRACE("  backend: unmap [%p, +%zu)\n", ptr, size);
  if (F.synchronize) check_idle((uintptr_t)ptr, size, "unmap");
  F.in_use[device] -= size;
  F.reserved[device] -= size;
  F.released = true;
}

static void fake_unreserve(void *self, int device, void *base, size_t size) {
  (void)self;
  uintptr_t at = (uintptr_t)base;
  for (size_t i = 0; i < F.nmappings; i++)
    FUZZ_CHECK(!overlaps(at, size, F.mappings[i].start, F.mappings[i].size),
               "unreserve of %p with pages still mapped", base);
  FUZZ_CHECK(take_range(F.reservations, &F.nreservations, at, size, device, NULL, false),
             "unreserve of %p (%zu bytes, device %d), which is no live reservation", base, size,
             device);
}

/* Stitching: a live page's memory mapped at a second address (no more memory), and unmapped
 * from there while its own mapping stays. */
static c10c_status fake_map_existing(void *self, int device, void *ptr, size_t size, void *handle) {
  (void)self;
  uintptr_t at = (uintptr_t)ptr;
  bool inside = false, page = false;
  for (size_t i = 0; i < F.nreservations && !inside; i++)
    if ((inside = F.reservations[i].device == device && at >= F.reservations[i].start &&
                  size <= F.reservations[i].size &&
                  at - F.reservations[i].start <= F.reservations[i].size - size))
      F.reservations[i].handle = &F; /* a stitched range's: no segment */
  for (size_t i = 0; i < F.nmappings; i++) {
    FUZZ_CHECK(!overlaps(at, size, F.mappings[i].start, F.mappings[i].size),
               "map_existing of [%p, +%zu) over a mapping", ptr, size);
    page |= F.mappings[i].handle == handle && F.mappings[i].size == size;
  }
  FUZZ_CHECK(inside && page, "map_existing of [%p, +%zu): outside a reservation or no live page",
             ptr, size);
  if (injected(CALL_MAP)) return injected_failure(CALL_MAP);
  if (F.nmappings == MAX_RANGES) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "no mappings left");
  F.mappings[F.nmappings++] = (range){at, size, device, handle};
  TRACE("  backend: map_existing [%p, +%zu)\n", ptr, size);
  return C10C_STATUS_OK;
}

static void fake_unmap_existing(void *self, int device, void *ptr, size_t size) {
  (void)self;
  void *handle = NULL;
  for (size_t i = 0; i < F.nmappings && handle == NULL; i++)
    if (F.mappings[i].start == (uintptr_t)ptr) handle = F.mappings[i].handle;
  FUZZ_CHECK(take_range(F.mappings, &F.nmappings, (uintptr_t)ptr, size, device, NULL, false) &&
                 handle_mapped(handle),
             "unmap_existing of [%p, +%zu), which is no second mapping of a page", ptr, size);
  TRACE("  backend: unmap_existing [%p, +%zu)\n", ptr, size);
  if (F.synchronize) check_idle((uintptr_t)ptr, size, "unmap_existing");
  F.released = true;
}

/* ---- the harness's own record ---- */

typedef struct live_block {
  uintptr_t ptr;
  size_t size; /* requested */
  int device;
  int stream;
  uint32_t used_on; /* bit s: used on stream slot s (allocated there or record_stream) */
} live_block;

static live_block live[MAX_LIVE];
static size_t nlive;

static bool backs(const range *list, size_t n, const live_block *b) {
  size_t covered = 0;
  for (size_t i = 0; i < n; i++) {
    const range *r = &list[i];
    if (r->device != b->device || !overlaps(b->ptr, b->size, r->start, r->size)) continue;
    uintptr_t lo = b->ptr > r->start ? b->ptr : r->start;
    uintptr_t hi = b->ptr + b->size < r->start + r->size ? b->ptr + b->size : r->start + r->size;
    covered += hi - lo;
  }
  return covered == b->size;
}

/* A live block lies in one live segment or in live mappings of its device. */
static void check_backed(const live_block *b) {
  bool in_segment = false;
  for (size_t k = 0; k < F.nsegments && !in_segment; k++) {
    const range *s = &F.segments[k];
    in_segment = s->device == b->device && b->ptr >= s->start && b->ptr - s->start <= s->size &&
                 b->size <= s->size - (b->ptr - s->start);
  }
  FUZZ_CHECK(in_segment || backs(F.mappings, F.nmappings, b),
             "block [%#lx, +%zu) of device %d is not in memory the backend backs",
             (unsigned long)b->ptr, b->size, b->device);
}

/* A new block is backed and overlaps no other live block; when memory went back to the
 * backend, every live block is still backed. */
static void check_live_blocks(const live_block *fresh) {
  if (fresh != NULL) {
    check_backed(fresh);
    for (size_t j = 0; j < nlive; j++)
      FUZZ_CHECK(fresh == &live[j] || !overlaps(fresh->ptr, fresh->size, live[j].ptr, live[j].size),
                 "live blocks [%#lx, +%zu) and [%#lx, +%zu) overlap", (unsigned long)fresh->ptr,
                 fresh->size, (unsigned long)live[j].ptr, live[j].size);
  }
  if (F.released)
    for (size_t i = 0; i < nlive; i++) check_backed(&live[i]);
  F.released = false;
}

static void forget_finished_work(void) {
  size_t kept = 0;
  for (size_t i = 0; i < F.nbusy; i++)
    if (F.busy_ranges[i].done_at > F.now) F.busy_ranges[kept++] = F.busy_ranges[i];
  F.nbusy = kept;
}

/* A freed block may still be used by the work queued so far on each stream it was used on. */
static void note_free(const live_block *b, bool events) {
  forget_finished_work();
  for (int s = 0; s < STREAMS; s++) {
    bool used = s == b->stream || (events && (b->used_on >> s & 1));
    if (!used || F.busy[s] <= F.now || F.nbusy == MAX_RANGES) continue;
    F.busy_ranges[F.nbusy++] = (busy_range){b->ptr, b->ptr + b->size, F.busy[s], s};
  }
}

/* Memory handed to stream s must not still be in use by another stream's work, unless s was
 * made to wait for it (stream order). */
static void check_safe_reuse(const live_block *b) {
  for (size_t i = 0; i < F.nbusy; i++) {
    const busy_range *r = &F.busy_ranges[i];
    if (r->done_at <= F.now || r->user == b->stream) continue;
    if (!overlaps(b->ptr, b->size, r->start, r->end - r->start)) continue;
    FUZZ_CHECK(F.busy[b->stream] >= r->done_at,
               "[%#lx, +%zu) handed to stream %d while stream %d works on it until %llu "
               "(stream %d is ordered up to %llu)",
               (unsigned long)b->ptr, b->size, b->stream, r->user, (unsigned long long)r->done_at,
               b->stream, (unsigned long long)F.busy[b->stream]);
  }
}

/* ---- operations ---- */

typedef struct run {
  c10c__engine *e;
  int devices;
  bool events, vmm, waits, mem_info;
} run;

static size_t fuzz_size(fuzz_input *in) {
  switch (fuzz_u8(in) % 8) {
    case 0: return (size_t)fuzz_range(in, 0, 2048);             /* tiny */
    case 1: return (size_t)fuzz_range(in, 0, 2 * MiB);          /* small pool and around */
    case 2: return (size_t)fuzz_range(in, MiB, 24 * MiB);       /* 20 MiB segments */
    case 3: return (size_t)fuzz_range(in, 0, 300) * MiB / 2;    /* large, MiB steps */
    case 4: return (size_t)fuzz_range(in, 0, (int64_t)1 << 34); /* up to 16 GiB */
    case 5: return (size_t)fuzz_int64(in);                      /* absurd ones */
    case 6: return ((size_t)1 << fuzz_range(in, 0, 63)) + (size_t)fuzz_range(in, -2, 2);
    default: return (size_t)fuzz_range(in, 1, 64) * 512;
  }
}

static int fuzz_device(fuzz_input *in, const run *r) {
  int d = (int)fuzz_range(in, -1, r->devices);
  return d; /* -1 and devices are invalid */
}

static c10c_stream_id fuzz_stream(fuzz_input *in) {
  uint8_t s = fuzz_u8(in);
  return s < 250 ? (c10c_stream_id)(s % STREAMS) : (c10c_stream_id)fuzz_int64(in);
}

static void do_malloc(run *r, int device, size_t size, c10c_stream_id stream);

static void op_malloc(fuzz_input *in, run *r) {
  int device = fuzz_device(in, r);
  size_t size = fuzz_size(in);
  c10c_stream_id stream = fuzz_stream(in);
  do_malloc(r, device, size, stream);
}

/* A malloc, checked, and the block kept in live when there is room. */
static void do_malloc(run *r, int device, size_t size, c10c_stream_id stream) {
  void *ptr = (void *)1;
  c10c_status st = c10c__engine_malloc(r->e, device, size, stream, &ptr);
  TRACE("malloc(device %d, %zu bytes, stream %lld) = %p, %s\n", device, size, (long long)stream,
        ptr, c10c_status_name(st));
  if (device < 0 || device >= r->devices) {
    FUZZ_CHECK(st == C10C_STATUS_ERROR && ptr == NULL, "malloc on device %d gave %s", device,
               c10c_status_name(st));
    return;
  }
  if (st != C10C_STATUS_OK) {
    FUZZ_CHECK(ptr == NULL, "a failed malloc returned a pointer");
    FUZZ_CHECK(st == C10C_STATUS_OUT_OF_MEMORY || st == C10C_STATUS_ERROR,
               "malloc of %zu gave %s: %s", size, c10c_status_name(st), c10c_last_error_message());
    return;
  }
  if (size == 0) {
    FUZZ_CHECK(ptr == NULL, "malloc of 0 bytes returned %p", ptr);
    return;
  }
  FUZZ_CHECK(ptr != NULL, "malloc of %zu returned NULL", size);
  live_block b = {(uintptr_t)ptr, size, device, stream_slot(stream), 1u << stream_slot(stream)};
  forget_finished_work();
  check_safe_reuse(&b);
  if (nlive == MAX_LIVE) { /* no room to track it: give it back */
    FUZZ_CHECK(c10c__engine_free(r->e, ptr) == C10C_STATUS_OK, "free");
    note_free(&b, r->events);
    return;
  }
  live[nlive++] = b;
  check_live_blocks(&live[nlive - 1]);
}

static void do_free(run *r, size_t i);

static void op_free(fuzz_input *in, run *r) {
  uint8_t pick = fuzz_u8(in);
  if (nlive == 0 || pick >= 240) { /* pointers the engine did not hand out */
    uintptr_t bad = pick % 3 == 0 ? 0x10 : nlive > 0 ? live[pick % nlive].ptr + 512 : 0x1234000;
    if (pick % 3 == 2) bad = (uintptr_t)&F;
    bool known = false;
    for (size_t i = 0; i < nlive; i++) known |= live[i].ptr == bad;
    if (!known) {
      c10c_status st = c10c__engine_free(r->e, (void *)bad);
      FUZZ_CHECK(st == C10C_STATUS_INVALID_ARGUMENT, "free of %#lx gave %s", (unsigned long)bad,
                 c10c_status_name(st));
    }
    FUZZ_CHECK(c10c__engine_free(r->e, NULL) == C10C_STATUS_OK, "free(NULL)");
    return;
  }
  do_free(r, pick % nlive);
}

/* Frees live[i], checked. */
static void do_free(run *r, size_t i) {
  live_block b = live[i];
  live[i] = live[--nlive];
  TRACE("free(%#lx)\n", (unsigned long)b.ptr);
  FUZZ_CHECK(c10c__engine_free(r->e, (void *)b.ptr) == C10C_STATUS_OK, "free: %s",
             c10c_last_error_message());
  note_free(&b, r->events);
  FUZZ_CHECK(c10c__engine_free(r->e, (void *)b.ptr) == C10C_STATUS_INVALID_ARGUMENT,
             "a double free was accepted");
}

static void op_record_stream(fuzz_input *in, run *r) {
  uint8_t pick = fuzz_u8(in);
  c10c_stream_id stream = fuzz_stream(in);
  if (nlive == 0) {
    FUZZ_CHECK(
        c10c__engine_record_stream(r->e, (void *)0x10, stream) == C10C_STATUS_INVALID_ARGUMENT,
        "record_stream of an unknown pointer");
    return;
  }
  live_block *b = &live[pick % nlive];
  c10c_status st = c10c__engine_record_stream(r->e, (void *)b->ptr, stream);
  TRACE("record_stream(%#lx, stream %lld)\n", (unsigned long)b->ptr, (long long)stream);
  FUZZ_CHECK(st == C10C_STATUS_OK || st == C10C_STATUS_OUT_OF_MEMORY, "record_stream gave %s",
             c10c_status_name(st));
  if (st == C10C_STATUS_OK) b->used_on |= 1u << stream_slot(stream);
}

/* Work queued on a stream, or time passing. */
static void op_clock(fuzz_input *in) {
  uint8_t what = fuzz_u8(in);
  uint64_t ticks = (uint64_t)fuzz_range(in, 0, 100);
  if (what & 1) {
    uint64_t *busy = &F.busy[(what >> 1) % STREAMS];
    *busy = (*busy > F.now ? *busy : F.now) + ticks;
    TRACE("stream %d busy until %llu\n", (what >> 1) % STREAMS, (unsigned long long)*busy);
  } else {
    F.now += ticks;
    TRACE("now %llu\n", (unsigned long long)F.now);
  }
}

/* 0 or a power of two (the parser allows any): mostly small, up to 2^63 */
static size_t fuzz_divisions(fuzz_input *in) {
  int64_t log = fuzz_range(in, -1, 63);
  return log < 0 ? 0 : (size_t)1 << (log > 12 && log < 60 ? log % 12 : log);
}

static bool plan_file(fuzz_input *in, run *r, char *path, size_t size);

/* Settings as the configuration parser can produce them. */
static void op_configure(fuzz_input *in, run *r) {
  c10c__device_alloc_config c = c10c__device_alloc_config_default();
  uint8_t flags = fuzz_u8(in);
  if (flags & 1) {
    /* from PyTorch 2.13's least, 20 MiB, to the parser's clamp */
    static const size_t mib[] = {20, 21, 22, 40, 64, 100, 1024, (size_t)1 << 30, SIZE_MAX >> 20};
    c.max_split_size = mib[fuzz_u8(in) % (sizeof mib / sizeof mib[0])] << 20;
  }
  if (flags & 2) {
    size_t d = fuzz_divisions(in);
    for (int i = 0; i < C10C__ROUNDUP_INTERVALS; i++)
      c.roundup_power2_divisions[i] = flags & 32 ? fuzz_divisions(in) : d;
  }
  if (flags & 4) c.garbage_collection_threshold = (double)fuzz_range(in, 1, 255) / 256.0;
  c.expandable_segments = flags & 8;
  c.stream_ordered_reuse = flags & 16;
  c.planning = flags & 64;
  bool file = (flags & 128) && plan_file(in, r, c.plan_file, sizeof c.plan_file);
  if (!file) c.plan_file[0] = '\0'; /* none made: the path may name an earlier input's file */
  if (c.expandable_segments) c.stitching = fuzz_u8(in) & 1;
  c10c_status st = c10c__engine_configure(r->e, &c);
  TRACE(
      "configure(max_split %zu, divisions[0] %zu, gc %g, expandable %d, ordered %d, "
      "stitching %d) = %s\n",
      c.max_split_size, c.roundup_power2_divisions[0], c.garbage_collection_threshold,
      c.expandable_segments, c.stream_ordered_reuse, c.stitching, c10c_status_name(st));
  bool possible = (!c.expandable_segments || (r->vmm && r->mem_info)) &&
                  (!c.stream_ordered_reuse || (r->waits && r->events)) &&
                  (!c.stitching || (c.expandable_segments && r->vmm));
  if (file && possible) { /* a plan of a device the engine lacks, or no host memory to read it */
    FUZZ_CHECK(st == C10C_STATUS_OK || st == C10C_STATUS_INVALID_ARGUMENT ||
                   st == C10C_STATUS_OUT_OF_MEMORY,
               "configure with a plan file gave %s: %s", c10c_status_name(st),
               c10c_last_error_message());
    return;
  }
  FUZZ_CHECK(possible ? st == C10C_STATUS_OK || (c.planning && st == C10C_STATUS_OUT_OF_MEMORY)
                      : st == C10C_STATUS_NOT_IMPLEMENTED,
             "configure gave %s", c10c_status_name(st));
}

/* A plan file of a few requests from the input (sizes, streams and lifetimes) for a device
 * that may not exist, written by c10c_plan_make; its path into path. False when none could be
 * made (host memory failing on purpose). */
static bool plan_file(fuzz_input *in, run *r, char *path, size_t size) {
  enum { N = 16 };
  uint64_t sizes[N], begins[N], ends[N];
  int64_t streams[N];
  size_t n = (size_t)fuzz_range(in, 0, N);
  for (size_t i = 0; i < n; i++) {
    sizes[i] = (uint64_t)fuzz_range(in, 0, 64) * 512 * (fuzz_bool(in) ? 1024 : 1);
    streams[i] = fuzz_stream(in);
    begins[i] = (uint64_t)fuzz_range(in, 0, 2 * N);
    ends[i] = fuzz_u8(in) < 16 ? UINT64_MAX : begins[i] + (uint64_t)fuzz_range(in, 0, 2 * N);
  }
  snprintf(path, size, "%s/c10c_fuzz_plan_%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
           (int)getpid());
  uint64_t arena = 0;
  int32_t device = (int32_t)fuzz_range(in, 0, r->devices);
  c10c_status st = c10c_plan_make(&arena, NULL, path, device, n, sizes, streams, begins, ends);
  TRACE("plan file of %zu requests for device %d: %s\n", n, (int)device, c10c_status_name(st));
  return st == C10C_STATUS_OK;
}

/* One step of a few requests (sizes, streams, an order of frees, work queued on the streams)
 * from the input, run 2 to 5 times with a step boundary after each, so that plans are made
 * and served (and reuse across streams is checked against the streams' work). */
static void op_repeat(fuzz_input *in, run *r) {
  enum { K = 8 };
  int device = (int)fuzz_range(in, 0, r->devices - 1);
  size_t n = (size_t)fuzz_range(in, 1, K), frees_after[K], sizes[K];
  c10c_stream_id streams[K];
  uint64_t work[K];
  for (size_t i = 0; i < n; i++) {
    /* up to 64 MiB: repeated absurd sizes would only saturate the cumulative statistics */
    sizes[i] = fuzz_u8(in) % 4 == 0 ? (size_t)fuzz_range(in, 0, 64 * MiB)
                                    : (size_t)fuzz_range(in, 1, 64) * 64 * 1024;
    streams[i] = (c10c_stream_id)(fuzz_u8(in) % STREAMS);
    frees_after[i] = (size_t)fuzz_range(in, 0, 2); /* how many live blocks to free after it */
    work[i] = (uint64_t)fuzz_range(in, 0, 20);
  }
  int times = (int)fuzz_range(in, 2, 5);
  TRACE("repeat %d times a step of %zu requests on device %d\n", times, n, device);
  for (int t = 0; t < times; t++) {
    size_t first = nlive;
    for (size_t i = 0; i < n; i++) {
      size_t before = nlive;
      do_malloc(r, device, sizes[i], streams[i]);
      if (nlive > before) { /* the stream works on it for a while */
        uint64_t *busy = &F.busy[stream_slot(streams[i])];
        *busy = (*busy > F.now ? *busy : F.now) + work[i];
      }
      for (size_t k = 0; k < frees_after[i] && nlive > first; k++) do_free(r, first);
    }
    while (nlive > first) do_free(r, first);
    F.now += (uint64_t)(t * 7 % 11);
    FUZZ_CHECK(c10c__engine_step(r->e, device) == C10C_STATUS_OK ||
                   c10c_last_error_status() == C10C_STATUS_OUT_OF_MEMORY,
               "step: %s", c10c_last_error_message());
  }
}

/* A step boundary on a device (-1: all; past the devices: refused). */
static void op_step(fuzz_input *in, run *r) {
  int device = (int)fuzz_range(in, -2, r->devices);
  c10c_status st = c10c__engine_step(r->e, device);
  c10c_memory_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  if (tracing) c10c__engine_stats(r->e, 0, &s);
  TRACE("step(device %d) = %s (device 0: plan served %lld, fallbacks %lld, rebuilds %lld)\n",
        device, c10c_status_name(st), (long long)s.plan_served, (long long)s.plan_fallbacks,
        (long long)s.plan_rebuilds);
  if (device < -1 || device >= r->devices)
    FUZZ_CHECK(st == C10C_STATUS_ERROR, "step of device %d gave %s", device, c10c_status_name(st));
  else
    FUZZ_CHECK(st == C10C_STATUS_OK || st == C10C_STATUS_OUT_OF_MEMORY, "step gave %s",
               c10c_status_name(st));
}

static void op_limit(fuzz_input *in, run *r) {
  int device = fuzz_device(in, r);
  size_t bytes;
  switch (fuzz_u8(in) % 4) {
    case 0: bytes = SIZE_MAX; break;
    case 1: bytes = (size_t)fuzz_int64(in); break;
    default: bytes = (size_t)fuzz_range(in, 0, 1024) * MiB; break;
  }
  c10c__engine_set_limit(r->e, device, bytes);
  TRACE("set_limit(device %d, %zu)\n", device, bytes);
}

static void op_stats(fuzz_input *in, run *r) {
  int device = fuzz_device(in, r);
  if (fuzz_bool(in)) c10c__engine_reset_peaks(r->e, device);
  c10c_memory_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  c10c_status st = c10c__engine_stats(r->e, device, &s);
  if (device < 0 || device >= r->devices) {
    FUZZ_CHECK(st == C10C_STATUS_ERROR, "stats of device %d gave %s", device, c10c_status_name(st));
    return;
  }
  FUZZ_CHECK(st == C10C_STATUS_OK, "stats gave %s", c10c_status_name(st));
  const c10c_stat *all[] = {
      s.allocation,      s.segment,        s.active,       s.inactive_split,
      s.allocated_bytes, s.reserved_bytes, s.active_bytes, s.inactive_split_bytes,
      s.requested_bytes};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    for (int k = 0; k < 3; k++)
      FUZZ_CHECK(all[i][k].current >= 0 && all[i][k].current <= all[i][k].peak &&
                     (all[i][k].allocated - all[i][k].freed == all[i][k].current ||
                      all[i][k].allocated == INT64_MAX), /* the totals saturate */
                 "statistic %zu[%d]: current %lld peak %lld allocated %lld freed %lld", i, k,
                 (long long)all[i][k].current, (long long)all[i][k].peak,
                 (long long)all[i][k].allocated, (long long)all[i][k].freed);
}

/* The statistics agree with what the backend holds and what the harness holds. */
static void check_accounting(run *r) {
  for (int d = 0; d < r->devices; d++) {
    c10c_memory_stats s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    FUZZ_CHECK(c10c__engine_stats(r->e, d, &s) == C10C_STATUS_OK, "stats");
    FUZZ_CHECK((size_t)s.reserved_bytes[C10C_STAT_ALL].current == F.reserved[d],
               "device %d: reserved_bytes %lld, the backend holds %zu", d,
               (long long)s.reserved_bytes[C10C_STAT_ALL].current, F.reserved[d]);
    int64_t mine = 0;
    for (size_t i = 0; i < nlive; i++) mine += live[i].device == d;
    FUZZ_CHECK(s.allocation[C10C_STAT_ALL].current == mine,
               "device %d: %lld allocations, the harness holds %lld", d,
               (long long)s.allocation[C10C_STAT_ALL].current, (long long)mine);
    size_t fixed = 0, reservations = 0;
    for (size_t i = 0; i < F.nsegments; i++) fixed += F.segments[i].device == d;
    for (size_t i = 0; i < F.nreservations; i++)
      reservations += F.reservations[i].device == d && F.reservations[i].handle == NULL;
    FUZZ_CHECK((size_t)s.segment[C10C_STAT_ALL].current == fixed + reservations,
               "device %d: %lld segments, the backend has %zu segments and %zu reservations", d,
               (long long)s.segment[C10C_STAT_ALL].current, fixed, reservations);
  }
}

/* A snapshot is one NUL-free JSON text of the length reported, brackets balanced. */
static void op_snapshot(fuzz_input *in, run *r) {
  uint8_t what = fuzz_u8(in);
  if (what & 1) {
    size_t entries =
        what & 2 ? (size_t)fuzz_range(in, 0, 64) : (size_t)fuzz_int64(in); /* mostly refused */
    c10c_status st = c10c__engine_record_history(r->e, entries);
    FUZZ_CHECK(entries > ((size_t)1 << 24)
                   ? st == C10C_STATUS_INVALID_ARGUMENT
                   : st == C10C_STATUS_OK || st == C10C_STATUS_OUT_OF_MEMORY,
               "record_history(%zu) gave %s", entries, c10c_status_name(st));
  }
  char *json = NULL;
  size_t len = 0;
  c10c_status st = c10c__engine_snapshot(r->e, &json, &len);
  if (st != C10C_STATUS_OK) {
    FUZZ_CHECK(st == C10C_STATUS_OUT_OF_MEMORY, "snapshot gave %s", c10c_status_name(st));
    return;
  }
  FUZZ_CHECK(json[len] == '\0' && memchr(json, '\0', len) == NULL, "snapshot length");
  int depth = 0;
  bool quoted = false;
  for (size_t i = 0; i < len; i++) {
    char c = json[i];
    if (c == '"') quoted = !quoted;
    if (quoted) continue;
    depth += (c == '{' || c == '[') - (c == '}' || c == ']');
    FUZZ_CHECK(depth >= 0, "snapshot brackets");
  }
  FUZZ_CHECK(depth == 0 && !quoted && len > 0 && json[0] == '{', "snapshot is not one object");
  c10c__free(json);
}

/* A backend call of some kind fails after a few more such calls (and maybe a few after it);
 * or the library's own memory requests do. */
static void op_fail(fuzz_input *in) {
  uint8_t what = fuzz_u8(in);
  if (what >= 224) {
    int64_t k = fuzz_range(in, 0, 8);
    TRACE("host memory request %lld fails\n", (long long)k);
    c10c_testing_fail_allocation(k);
    return;
  }
  backend_call kind = (backend_call)(what % CALL_KINDS);
  F.fail_in[kind] = (int)fuzz_range(in, 0, 8);
  F.fail_more[kind] = (int)fuzz_range(in, 0, 3);
  TRACE("backend call %d fails in %d (and %d more)\n", (int)kind, F.fail_in[kind],
        F.fail_more[kind]);
}

typedef enum op {
  OP_MALLOC,
  OP_MALLOC2,
  OP_FREE,
  OP_FREE2,
  OP_RECORD_STREAM,
  OP_CLOCK,
  OP_EMPTY_CACHE,
  OP_CONFIGURE,
  OP_LIMIT,
  OP_STATS,
  OP_SNAPSHOT,
  OP_STEP,
  OP_REPEAT,
  OP_FAIL,
  OPS
} op;

static void step(fuzz_input *in, run *r) {
  switch ((op)(fuzz_u8(in) % OPS)) {
    case OP_MALLOC:
    case OP_MALLOC2: op_malloc(in, r); break;
    case OP_FREE:
    case OP_FREE2: op_free(in, r); break;
    case OP_RECORD_STREAM: op_record_stream(in, r); break;
    case OP_CLOCK: op_clock(in); break;
    case OP_EMPTY_CACHE:
      TRACE("empty_cache\n");
      c10c__engine_empty_cache(r->e);
      break;
    case OP_CONFIGURE: op_configure(in, r); break;
    case OP_LIMIT: op_limit(in, r); break;
    case OP_STATS: op_stats(in, r); break;
    case OP_SNAPSHOT: op_snapshot(in, r); break;
    case OP_STEP: op_step(in, r); break;
    case OP_REPEAT: op_repeat(in, r); break;
    default: op_fail(in); break;
  }
}

static size_t fuzz_capacity(fuzz_input *in) {
  switch (fuzz_u8(in) % 4) {
    case 0: return (size_t)fuzz_range(in, 0, 64) * MiB;
    case 1: return (size_t)fuzz_range(in, 0, 4096) * MiB;
    case 2: { /* the extremes; between 64 GiB and 8 EiB only what fits 64 GiB (the page table
               * of an expandable segment would be megabytes or more, which only slows the
               * fuzzer; above 8 EiB the engine refuses to make one) */
      uint64_t v = (uint64_t)fuzz_int64(in);
      v = v > ((uint64_t)1 << 36) && v < ((uint64_t)1 << 63) ? v % ((uint64_t)1 << 36) : v;
      return v > SIZE_MAX ? SIZE_MAX : (size_t)v; /* 32 bits: the address space's extreme */
    }
    default: return 256 * (size_t)MiB;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_input in = {data, size};
  tracing = getenv("FUZZ_ENGINE_TRACE") != NULL;
  memset(&F, 0, sizeof F);
  F.next_address = 0x10000000;
  nlive = 0;
  c10c_testing_fail_allocation(0);
  uint8_t groups = fuzz_u8(&in);
  run r = {.devices = (int)fuzz_range(&in, 0, MAX_DEVICES),
           .events = !(groups & 1),
           .vmm = !(groups & 2),
           .waits = !(groups & 4),
           .mem_info = !(groups & 8)};
  F.synchronize = !(groups & 16);
  F.capacity = fuzz_capacity(&in);
  c10c__segment_backend backend = {.malloc = fake_malloc, .free = fake_free};
  if (r.mem_info) backend.mem_info = fake_mem_info;
  if (r.events) {
    backend.event_record = fake_event_record;
    backend.event_query = fake_event_query;
    backend.event_synchronize = fake_event_synchronize;
    backend.event_destroy = fake_event_destroy;
  }
  if (r.vmm) {
    backend.reserve = fake_reserve;
    backend.map = fake_map;
    backend.unmap = fake_unmap;
    backend.unreserve = fake_unreserve;
    backend.map_existing = fake_map_existing;
    backend.unmap_existing = fake_unmap_existing;
  }
  if (r.waits) backend.stream_wait = fake_stream_wait;
  if (F.synchronize) backend.synchronize = fake_synchronize;
  TRACE("devices %d, capacity %zu, events %d, vmm %d, waits %d, mem_info %d, synchronize %d\n",
        r.devices, F.capacity, r.events, r.vmm, r.waits, r.mem_info, F.synchronize);
  c10c_status st = c10c__engine_new(&r.e, backend, r.devices, &c10c__plan_engine_hooks);
  FUZZ_CHECK(st == C10C_STATUS_OK, "engine_new: %s", c10c_last_error_message());
  if (r.devices < 1) r.devices = 1; /* as the engine does */
  char msg[512];
  for (int n = 0; !fuzz_done(&in) && n < 400; n++) {
    step(&in, &r);
    FUZZ_CHECK(c10c__engine_validate(r.e, msg, sizeof msg), "after step %d: %s", n, msg);
    check_live_blocks(NULL);
    check_accounting(&r);
  }
  c10c_testing_fail_allocation(0);
  for (int k = 0; k < CALL_KINDS; k++) F.fail_in[k] = 0;
  c10c__engine_destroy(r.e);
  FUZZ_CHECK(F.nsegments == 0 && F.nmappings == 0 && F.nreservations == 0,
             "after destroy the backend still has %zu segments, %zu mappings, %zu reservations",
             F.nsegments, F.nmappings, F.nreservations);
  FUZZ_CHECK(F.live_events == 0, "after destroy %d events are not destroyed", F.live_events);
  return 0;
}
