/* The caching engine (lib/caching_engine.c) over a fake backend of fabricated addresses: PyTorch's
 * rounding and segment sizes, the small pool packing 2 MiB segments, reuse without backend calls,
 * best fit per stream, splitting and coalescing, the free-cache-and-retry step before an
 * out-of-memory error, empty_cache, and DeviceStats bookkeeping. White-box: links the static
 * library and sees lib/. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "caching_engine.h"
#include "plan_engine.h"
#include "c10c/testing.h"
#include "harness.h"
#include "sysmem.h"

/* A device of `capacity` bytes whose addresses are fabricated (nothing is touched). */
static size_t capacity, in_use;
static uintptr_t next_address = 0x10000000;
static int mallocs, frees;

static c10c_status fake_malloc(void *self, int device, size_t size, void **out) {
  (void)self, (void)device;
  if (size > capacity - in_use) return C10C_STATUS_OUT_OF_MEMORY;
  in_use += size;
  *out = (void *)next_address;
  next_address += size + 4096;
  mallocs++;
  return C10C_STATUS_OK;
}

static void fake_free(void *self, int device, void *ptr, size_t size) {
  (void)self, (void)device, (void)ptr;
  in_use -= size;
  frees++;
}

/* Events on a fake clock: an event recorded on stream s completes at busy[s]. */
static uint64_t clock_now, busy[8];
static int live_events, syncs;
typedef struct fake_event {
  uint64_t done_at;
} fake_event;

static int record_failures; /* the next this many event records fail */

static c10c_status fake_record(void *self, int device, c10c_stream_id stream, void **out) {
  (void)self, (void)device;
  if (record_failures > 0) {
    record_failures--;
    return C10C_STATUS_ERROR;
  }
  fake_event *ev = malloc(sizeof *ev);
  if (ev == NULL) return C10C_STATUS_OUT_OF_MEMORY;
  ev->done_at = busy[stream & 7];
  live_events++;
  *out = ev;
  return C10C_STATUS_OK;
}

static c10c_status fake_query(void *self, void *event, bool *done) {
  (void)self;
  *done = ((fake_event *)event)->done_at <= clock_now;
  return C10C_STATUS_OK;
}

static void fake_sync(void *self, void *event) {
  (void)self;
  fake_event *ev = event;
  if (ev->done_at > clock_now) clock_now = ev->done_at;
  syncs++;
}

static void fake_destroy(void *self, void *event) {
  (void)self;
  free(event);
  live_events--;
}

/* Virtual memory: reservations of fabricated addresses, pages counted against the capacity. */
static int maps, unmaps, reservations, waits, synchronizes;

static c10c_status fake_mem_info(void *self, int device, size_t *free_bytes, size_t *total) {
  (void)self, (void)device;
  *free_bytes = capacity - in_use;
  *total = capacity;
  return C10C_STATUS_OK;
}

static c10c_status fake_reserve(void *self, int device, size_t size, void **base) {
  (void)self, (void)device;
  *base = (void *)next_address;
  next_address += size + 4096;
  reservations++;
  return C10C_STATUS_OK;
}

static c10c_status fake_map(void *self, int device, void *ptr, size_t size, void **handle) {
  (void)self, (void)device;
  if (size > capacity - in_use) return C10C_STATUS_OUT_OF_MEMORY;
  in_use += size;
  maps++;
  *handle = ptr;
  return C10C_STATUS_OK;
}

static void fake_unmap(void *self, int device, void *ptr, size_t size, void *handle) {
  (void)self, (void)device;
  ASSERT_TRUE(ptr == handle);
  in_use -= size;
  unmaps++;
}

static void fake_unreserve(void *self, int device, void *base, size_t size) {
  (void)self, (void)device, (void)base, (void)size;
  reservations--;
}

static c10c_status fake_wait(void *self, int device, c10c_stream_id stream, void *event) {
  (void)self, (void)device;
  fake_event *ev = event;
  if (busy[stream & 7] < ev->done_at) busy[stream & 7] = ev->done_at; /* stream order */
  waits++;
  return C10C_STATUS_OK;
}

static void fake_synchronize(void *self, int device) {
  (void)self, (void)device;
  synchronizes++;
}

static bool without_synchronize; /* the next fresh engine's backend cannot synchronize */

static c10c__engine *fresh(size_t bytes) {
  capacity = bytes;
  in_use = 0;
  mallocs = frees = maps = unmaps = reservations = waits = synchronizes = 0;
#if SIZE_MAX < UINT64_MAX
  next_address = 0x10000000; /* a 32-bit target's fabricated addresses would wrap around */
#endif
  c10c__engine *e = NULL;
  c10c__segment_backend backend = {.malloc = fake_malloc,
                                   .free = fake_free,
                                   .event_record = fake_record,
                                   .event_query = fake_query,
                                   .event_synchronize = fake_sync,
                                   .event_destroy = fake_destroy,
                                   .mem_info = fake_mem_info,
                                   .reserve = fake_reserve,
                                   .map = fake_map,
                                   .unmap = fake_unmap,
                                   .unreserve = fake_unreserve,
                                   .stream_wait = fake_wait,
                                   .synchronize = without_synchronize ? NULL : fake_synchronize};
  ASSERT_OK(c10c__engine_new(&e, backend, 2, &c10c__plan_engine_hooks));
  return e;
}

static c10c_memory_stats stats_of(c10c__engine *e, int device) {
  c10c_memory_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  ASSERT_OK(c10c__engine_stats(e, device, &s));
  return s;
}

static void expect_valid(c10c__engine *e, int step) {
  char msg[512];
  if (!c10c__engine_validate(e, msg, sizeof msg)) FAIL_AT("after step %d: %s", step, msg);
}

enum { MiB = 1 << 20 };

TEST(rounding_and_segment_sizes_are_pytorchs) {
  ASSERT_EQ(c10c__engine_round_size(1), 512);
  ASSERT_EQ(c10c__engine_round_size(512), 512);
  ASSERT_EQ(c10c__engine_round_size(513), 1024);
  ASSERT_EQ(c10c__engine_segment_size(512), 2 * MiB);
  ASSERT_EQ(c10c__engine_segment_size(MiB), 2 * MiB);
  ASSERT_EQ(c10c__engine_segment_size(MiB + 512), 20 * MiB);
  ASSERT_EQ(c10c__engine_segment_size(10 * MiB), 10 * MiB);
  ASSERT_EQ(c10c__engine_segment_size(11 * MiB - 512), 12 * MiB);
}

/* An engine made without the planned mode's hooks serves as the engine alone and refuses the
 * planning settings (nothing changes); step marks do nothing. */
TEST(an_engine_without_a_planned_mode_refuses_planning) {
  c10c__engine *e = NULL;
  c10c__segment_backend backend = {.malloc = fake_malloc, .free = fake_free};
  ASSERT_OK(c10c__engine_new(&e, backend, 1, NULL));
  c10c__device_alloc_config config = c10c__device_alloc_config_default();
  config.planning = true;
  ASSERT_STATUS(C10C_STATUS_NOT_IMPLEMENTED, c10c__engine_configure(e, &config));
  ASSERT_TRUE(strstr(c10c_last_error_message(), "planned mode") != NULL);
  config.planning = false;
  snprintf(config.plan_file, sizeof config.plan_file, "%s", "/nonexistent.plan");
  ASSERT_STATUS(C10C_STATUS_NOT_IMPLEMENTED, c10c__engine_configure(e, &config));
  void *p = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 0, 4096, 0, &p));
  ASSERT_OK(c10c__engine_step(e, 0));
  ASSERT_OK(c10c__engine_free(e, p));
  expect_valid(e, 0);
  c10c__engine_destroy(e);
}

TEST(small_blocks_pack_a_segment_and_come_back_without_the_backend) {
  c10c__engine *e = fresh(100 * MiB);
  void *p[4];
  for (int i = 0; i < 4; i++) ASSERT_OK(c10c__engine_malloc(e, 0, 500 * 1024, 0, &p[i]));
  ASSERT_EQ(mallocs, 1); /* four 500 KiB blocks in one 2 MiB segment */
  ASSERT_TRUE((char *)p[1] == (char *)p[0] + 500 * 1024);
  c10c_memory_stats s = stats_of(e, 0);
  ASSERT_EQ(s.allocation[C10C_STAT_SMALL_POOL].current, 4);
  ASSERT_EQ(s.segment[C10C_STAT_ALL].current, 1);
  ASSERT_EQ(s.reserved_bytes[C10C_STAT_ALL].current, 2 * MiB);
  ASSERT_EQ(s.allocated_bytes[C10C_STAT_ALL].current, 4 * 500 * 1024);
  ASSERT_EQ(s.requested_bytes[C10C_STAT_ALL].current, 4 * 500 * 1024);
  /* free and ask again: the same address, no backend call */
  ASSERT_OK(c10c__engine_free(e, p[2]));
  void *again = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 0, 400 * 1024, 0, &again));
  ASSERT_TRUE(again == p[2]);
  ASSERT_EQ(mallocs, 1);
  /* everything freed coalesces back to one block the size of the segment */
  ASSERT_OK(c10c__engine_free(e, again));
  for (int i = 0; i < 4; i++)
    if (i != 2) ASSERT_OK(c10c__engine_free(e, p[i]));
  s = stats_of(e, 0);
  ASSERT_EQ(s.allocation[C10C_STAT_ALL].current, 0);
  ASSERT_EQ(s.allocated_bytes[C10C_STAT_ALL].current, 0);
  ASSERT_EQ(s.allocated_bytes[C10C_STAT_ALL].peak, 4 * 500 * 1024);
  ASSERT_EQ(s.reserved_bytes[C10C_STAT_ALL].current, 2 * MiB);
  void *whole = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 0, MiB, 0, &whole)); /* fits only if it coalesced */
  ASSERT_TRUE(whole == p[0]);
  ASSERT_EQ(mallocs, 1);
  ASSERT_OK(c10c__engine_free(e, whole));
  c10c__engine_empty_cache(e);
  ASSERT_EQ(frees, 1);
  ASSERT_EQ(stats_of(e, 0).reserved_bytes[C10C_STAT_ALL].current, 0);
  c10c__engine_destroy(e);
}

TEST(large_blocks_split_only_beyond_a_mebibyte_and_stay_per_stream) {
  c10c__engine *e = fresh(200 * MiB);
  void *a = NULL, *b = NULL, *c = NULL, *d = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 0, 5 * MiB, 0, &a)); /* a 20 MiB segment, split */
  ASSERT_OK(c10c__engine_malloc(e, 0, 5 * MiB, 0, &b)); /* from the remaining 15 MiB */
  ASSERT_EQ(mallocs, 1);
  ASSERT_TRUE((char *)b == (char *)a + 5 * MiB);
  ASSERT_OK(c10c__engine_malloc(e, 0, 9 * MiB + 512 * 1024, 0, &c)); /* 10 MiB left: no split */
  ASSERT_EQ(mallocs, 1);
  c10c_memory_stats s = stats_of(e, 0);
  ASSERT_EQ(s.allocated_bytes[C10C_STAT_LARGE_POOL].current, 20 * MiB); /* c took the rest */
  /* another stream does not take a's block once freed */
  ASSERT_OK(c10c__engine_free(e, a));
  ASSERT_OK(c10c__engine_malloc(e, 0, 5 * MiB, 7, &d));
  ASSERT_TRUE(d != a);
  ASSERT_EQ(mallocs, 2);
  /* a segment of its own for a request of 10 MiB or more, rounded to 2 MiB */
  void *big = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 1, 11 * MiB, 0, &big));
  ASSERT_EQ(stats_of(e, 1).reserved_bytes[C10C_STAT_LARGE_POOL].current, 12 * MiB);
  ASSERT_OK(c10c__engine_free(e, big));
  ASSERT_OK(c10c__engine_free(e, b));
  ASSERT_OK(c10c__engine_free(e, c));
  ASSERT_OK(c10c__engine_free(e, d));
  c10c__engine_destroy(e);
  ASSERT_EQ(in_use, 0);
}

TEST(a_full_device_frees_the_cache_and_retries_before_failing) {
  c10c__engine *e = fresh(40 * MiB);
  void *a = NULL, *b = NULL, *c = NULL, *d = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 0, 15 * MiB, 0, &a)); /* 16 MiB segment */
  ASSERT_OK(c10c__engine_malloc(e, 0, 15 * MiB, 0, &b)); /* 16 MiB segment: 32 of 40 used */
  ASSERT_OK(c10c__engine_free(e, a));                    /* cached, not returned */
  ASSERT_OK(c10c__engine_malloc(e, 0, 20 * MiB, 0, &c)); /* needs the cached 16 MiB back */
  c10c_memory_stats s = stats_of(e, 0);
  ASSERT_EQ(s.num_alloc_retries, 1);
  ASSERT_EQ(s.num_device_free, 1);
  ASSERT_EQ(s.num_ooms, 0);
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c__engine_malloc(e, 0, 30 * MiB, 0, &d));
  ASSERT_TRUE(d == NULL);
  ASSERT_ERROR_MESSAGE(
      "CUDA out of memory. Tried to allocate 30.00 MiB. GPU 0 has a total capacity of 40.00 MiB of "
      "which 4.00 MiB is free. Of the allocated memory on device 0 36.00 MiB is allocated by "
      "libc10c, and 0 bytes is reserved "
      "by libc10c but unallocated.");
  s = stats_of(e, 0);
  ASSERT_EQ(s.num_ooms, 1);
  ASSERT_EQ(s.num_alloc_retries, 2);
  /* bad frees are refused and change nothing */
  int local;
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c__engine_free(e, &local));
  ASSERT_OK(c10c__engine_free(e, b));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c__engine_free(e, b)); /* double free */
  ASSERT_OK(c10c__engine_free(e, c));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c__engine_malloc(e, 5, 1, 0, &d));
  void *none = &local;
  ASSERT_OK(c10c__engine_malloc(e, 0, 0, 0, &none));
  ASSERT_TRUE(none == NULL);
  c10c__engine_destroy(e);
  ASSERT_EQ(in_use, 0);
}

/* record_stream: a block used on stream 2 is not reused for stream 1's next allocation until
 * the work stream 2 had queued when the block was freed has completed. */
TEST(record_stream_holds_a_block_until_the_other_streams_work_is_done) {
  c10c__engine *e = fresh(100 * MiB);
  clock_now = 0;
  busy[2] = 10; /* stream 2 has 10 ticks of work queued */
  void *a = NULL, *b = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 0, 4096, 1, &a));
  ASSERT_OK(c10c__engine_record_stream(e, a, 2));
  ASSERT_OK(c10c__engine_record_stream(e, a, 2)); /* once per stream */
  ASSERT_OK(c10c__engine_record_stream(e, a, 1)); /* its own stream: nothing to wait for */
  ASSERT_OK(c10c__engine_free(e, a));
  ASSERT_EQ(live_events, 1);
  c10c_memory_stats s = stats_of(e, 0);
  ASSERT_EQ(s.allocated_bytes[C10C_STAT_ALL].current, 0); /* freed for the program */
  ASSERT_EQ(s.active_bytes[C10C_STAT_ALL].current, 4096); /* still busy for the device */
  ASSERT_OK(c10c__engine_malloc(e, 0, 4096, 1, &b));
  ASSERT_TRUE(b != a); /* not reused while stream 2 may still touch it */
  ASSERT_OK(c10c__engine_free(e, b));
  clock_now = 10; /* stream 2 is done */
  ASSERT_OK(c10c__engine_malloc(e, 0, 4096, 1, &b));
  ASSERT_TRUE(b == a); /* now it is */
  ASSERT_EQ(live_events, 0);
  /* releasing the cache waits for pending events first (synchronize_and_free_events) */
  busy[3] = 50;
  ASSERT_OK(c10c__engine_record_stream(e, b, 3));
  ASSERT_OK(c10c__engine_free(e, b));
  c10c__engine_empty_cache(e);
  ASSERT_EQ(syncs, 1);
  ASSERT_EQ(live_events, 0);
  s = stats_of(e, 0);
  ASSERT_EQ(s.num_sync_all_streams, 1);
  ASSERT_EQ(s.reserved_bytes[C10C_STAT_ALL].current, 0);
  int local;
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c__engine_record_stream(e, &local, 2));
  c10c__engine_destroy(e);
  ASSERT_EQ(in_use, 0);
}

TEST(roundup_power2_divisions_round_as_pytorch) {
  ASSERT_EQ(c10c__engine_round_size_with(1000, 4), 1024); /* not above 512 * 4: plain rounding */
  ASSERT_EQ(c10c__engine_round_size_with(2049, 4), 2560); /* steps of 512 in [2048, 4096) */
  ASSERT_EQ(c10c__engine_round_size_with(3000, 4), 3072);
  ASSERT_EQ(c10c__engine_round_size_with(4096, 4), 4096); /* powers of two stay */
  ASSERT_EQ(c10c__engine_round_size_with(1200 * MiB, 4), 1280 * MiB);
  ASSERT_EQ(c10c__engine_round_size_with(1200 * MiB, 1), 1200 * MiB);
  ASSERT_EQ(c10c__engine_round_size_with(1200 * MiB, 0), 1200 * MiB);
  /* any power of two (PyTorch 2.13 has no limit); 512 x divisions must not wrap */
  ASSERT_EQ(c10c__engine_round_size_with(2 * MiB + 1, 2048), 2 * MiB + 1024);
#if SIZE_MAX > UINT32_MAX
  ASSERT_EQ_U64(c10c__engine_round_size_with(((size_t)1 << 40) + 1, (size_t)1 << 60),
                ((size_t)1 << 40) + 512);
#else /* the same on a 32-bit host's largest sizes */
  ASSERT_EQ_U64(c10c__engine_round_size_with(((size_t)1 << 30) + 1, (size_t)1 << 30),
                ((size_t)1 << 30) + 512);
#endif
}

TEST(max_split_size_keeps_oversize_blocks_whole_and_for_their_size) {
  c10c__engine *e = fresh(400 * MiB);
  c10c__device_alloc_config config = c10c__device_alloc_config_default();
  config.max_split_size = 40 * MiB;
  ASSERT_OK(c10c__engine_configure(e, &config));
  void *big = NULL, *again = NULL, *mid = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 0, 50 * MiB, 0, &big)); /* oversize: its own segment, whole */
  c10c_memory_stats s = stats_of(e, 0);
  ASSERT_EQ(s.oversize_allocations.current, 1);
  ASSERT_EQ(s.oversize_segments.current, 1);
  ASSERT_EQ(s.max_split_size, 40 * MiB);
  ASSERT_OK(c10c__engine_free(e, big));
  ASSERT_OK(c10c__engine_malloc(e, 0, 45 * MiB, 0, &again)); /* within 20 MiB: reused, unsplit */
  ASSERT_TRUE(again == big);
  ASSERT_EQ(stats_of(e, 0).allocated_bytes[C10C_STAT_ALL].current, 50 * MiB);
  ASSERT_OK(c10c__engine_free(e, again));
  ASSERT_OK(c10c__engine_malloc(e, 0, 25 * MiB, 0, &mid)); /* below the limit: not the big one */
  ASSERT_TRUE(mid != big);
  ASSERT_EQ(mallocs, 2);
  ASSERT_OK(c10c__engine_free(e, mid));
  c10c__engine_destroy(e);
  ASSERT_EQ(in_use, 0);
}

TEST(device_config_strings_follow_pytorch) {
  c10c__device_alloc_config c = c10c__device_alloc_config_default();
  char msg[256];
  ASSERT_OK(c10c__parse_device_alloc_config(
      "max_split_size_mb:64, roundup_power2_divisions:4,backend:native,expandable_segments:False",
      &c, msg, sizeof msg));
  ASSERT_EQ(c.max_split_size, 64 * MiB);
  for (int i = 0; i < C10C__ROUNDUP_INTERVALS; i++) ASSERT_EQ(c.roundup_power2_divisions[i], 4);
  ASSERT_FALSE(c.expandable_segments);
  /* the list form, applied as PyTorch applies it: the first entry covers the intervals below
   * it, ">" fills from the last named interval on (overwriting it) */
  ASSERT_OK(c10c__parse_device_alloc_config(
      "roundup_power2_divisions:[256:1,512:2,>:4],garbage_collection_threshold:0.6,"
      "expandable_segments:True,stream_ordered_reuse:True",
      &c, msg, sizeof msg));
  for (int i = 0; i <= 8; i++) ASSERT_EQ(c.roundup_power2_divisions[i], 1);
  for (int i = 9; i < C10C__ROUNDUP_INTERVALS; i++) ASSERT_EQ(c.roundup_power2_divisions[i], 4);
  ASSERT_TRUE(c.garbage_collection_threshold == (double)0.6); /* no x87 excess precision */
  ASSERT_TRUE(c.expandable_segments && c.stream_ordered_reuse);
  ASSERT_OK(
      c10c__parse_device_alloc_config("roundup_power2_divisions:[1:2,64:8]", &c, msg, sizeof msg));
  /* PyTorch's parser takes "last index 0" for "first entry": an entry at 1 MiB is overwritten
   * by the next one's fill */
  ASSERT_EQ(c.roundup_power2_divisions[0], 8);
  ASSERT_EQ(c.roundup_power2_divisions[5], 8);
  ASSERT_EQ(c.roundup_power2_divisions[6], 8);
  ASSERT_EQ(c.roundup_power2_divisions[7], 1); /* untouched by this list */
  ASSERT_EQ(c10c__engine_divisions_for(c.roundup_power2_divisions, 100), 8);
  ASSERT_EQ(c10c__engine_divisions_for(c.roundup_power2_divisions, 64 * MiB), 8);
#if SIZE_MAX > UINT32_MAX
  ASSERT_EQ(c10c__engine_divisions_for(c.roundup_power2_divisions, (size_t)1 << 40), 4);
#endif
  /* PyTorch 2.13: max_split_size_mb from 20 on, clamped when larger than any size; divisions
   * any power of two */
  ASSERT_OK(c10c__parse_device_alloc_config("max_split_size_mb:20,roundup_power2_divisions:2048",
                                            &c, msg, sizeof msg));
  ASSERT_EQ(c.max_split_size, 20 * MiB);
  ASSERT_EQ(c.roundup_power2_divisions[3], 2048);
  ASSERT_OK(c10c__parse_device_alloc_config("max_split_size_mb:18446744073709551615", &c, msg,
                                            sizeof msg));
  ASSERT_EQ_U64(c.max_split_size, (SIZE_MAX >> 20) << 20);
  /* the same 64-bit numbers on every target: an interval bound beyond a 32-bit size names the
   * last interval, a number beyond 64 bits is refused */
  ASSERT_OK(c10c__parse_device_alloc_config("roundup_power2_divisions:[1099511627776:2]", &c, msg,
                                            sizeof msg));
  ASSERT_EQ(c.roundup_power2_divisions[C10C__ROUNDUP_INTERVALS - 1], 2);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c__parse_device_alloc_config("max_split_size_mb:18446744073709551616", &c, msg,
                                                sizeof msg));
  ASSERT_STR_EQ(msg,
                "Expected a non-negative integer (and not too large) for max_split_size_mb, "
                "got '18446744073709551616'");
  const struct {
    const char *text, *message;
    c10c_status status;
  } bad[] = {
      {"max_split_size_mb:19", "CachingAllocator option max_split_size_mb too small, must be >= 20",
       C10C_STATUS_INVALID_ARGUMENT},
      {"roundup_power2_divisions:0", "For roundups, the divisions has to be power of 2 ",
       C10C_STATUS_INVALID_ARGUMENT},
      {"max_non_split_rounding_mb:30",
       "CUDA allocator option 'max_non_split_rounding_mb' is not supported yet",
       C10C_STATUS_NOT_IMPLEMENTED},
      {"backend:foo", "Unknown allocator backend, options are native and cudaMallocAsync",
       C10C_STATUS_INVALID_ARGUMENT},
      {"roundup_power2_divisions:3", "For roundups, the divisions has to be power of 2 ",
       C10C_STATUS_INVALID_ARGUMENT},
      {"roundup_power2_divisions:[256:3]",
       "For roundups, the divisions has to be power of 2 or 0 to disable roundup ",
       C10C_STATUS_INVALID_ARGUMENT},
      {"roundup_power2_divisions:[3:2]", "For roundups, the intervals have to be power of 2 ",
       C10C_STATUS_INVALID_ARGUMENT},
      {"roundup_power2_divisions:[256:1",
       "Expected ']' closing roundup_power2_divisions, got "
       "'[256:1'",
       C10C_STATUS_INVALID_ARGUMENT},
      {"garbage_collection_threshold:1.0",
       "garbage_collect_threshold is invalid, set it in (0.0, 1.0)", C10C_STATUS_INVALID_ARGUMENT},
      {"garbage_collection_threshold:0",
       "garbage_collect_threshold is invalid, set it in (0.0, 1.0)", C10C_STATUS_INVALID_ARGUMENT},
      {"garbage_collection_threshold:abc",
       "Expected a number for garbage_collection_threshold, got 'abc'",
       C10C_STATUS_INVALID_ARGUMENT},
      {"expandable_segments:yes", "Expected True or False for expandable_segments, got 'yes'",
       C10C_STATUS_INVALID_ARGUMENT},
      {"max_split_size_mb:x",
       "Expected a non-negative integer (and not too large) for "
       "max_split_size_mb, got 'x'",
       C10C_STATUS_INVALID_ARGUMENT},
      {"foo:1", "Unrecognized key 'foo' in CUDA allocator config.", C10C_STATUS_INVALID_ARGUMENT},
      {"max_split_size_mb", "Expected key:value in CUDA allocator config, got 'max_split_size_mb'",
       C10C_STATUS_INVALID_ARGUMENT},
      {"pinned_num_register_threads:8",
       "CUDA allocator option 'pinned_num_register_threads' is not supported yet",
       C10C_STATUS_NOT_IMPLEMENTED},
      {"backend:cudaMallocAsync", "CUDA allocator backend 'cudaMallocAsync' is not supported yet",
       C10C_STATUS_NOT_IMPLEMENTED},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    c10c__device_alloc_config before = c;
    ASSERT_EQ(c10c__parse_device_alloc_config(bad[i].text, &c, msg, sizeof msg), bad[i].status);
    ASSERT_STR_EQ(msg, bad[i].message);
    ASSERT_EQ(c.max_split_size, before.max_split_size); /* unchanged */
  }
}

TEST(garbage_collection_releases_old_cached_blocks_past_the_threshold) {
  c10c__engine *e = fresh(400 * MiB);
  c10c__device_alloc_config config = c10c__device_alloc_config_default();
  config.garbage_collection_threshold = 0.5;
  ASSERT_OK(c10c__engine_configure(e, &config));
  void *p[3], *q = NULL, *r = NULL;
  for (int i = 0; i < 3; i++) ASSERT_OK(c10c__engine_malloc(e, 0, 22 * MiB, 0, &p[i]));
  for (int i = 0; i < 3; i++) ASSERT_OK(c10c__engine_free(e, p[i]));
  /* no memory fraction: garbage collection stays off (as PyTorch), the cache is kept */
  ASSERT_OK(c10c__engine_malloc(e, 0, 30 * MiB, 0, &q));
  ASSERT_EQ(frees, 0);
  ASSERT_OK(c10c__engine_free(e, q));
  c10c__engine_set_limit(e, 0, 100 * MiB); /* reserved 96 MiB > 0.5 x 100 MiB */
  ASSERT_OK(c10c__engine_malloc(e, 0, 40 * MiB, 0, &r));
  c10c_memory_stats s = stats_of(e, 0);
  ASSERT_EQ(frees, 4); /* every cached block was as old as the average: all released */
  ASSERT_EQ(s.num_alloc_retries, 0);
  ASSERT_EQ(s.num_sync_all_streams, 0);
  ASSERT_EQ(s.reserved_bytes[C10C_STAT_ALL].current, 40 * MiB);
  ASSERT_OK(c10c__engine_free(e, r));
  c10c__engine_destroy(e);
  ASSERT_EQ(in_use, 0);
}

TEST(a_full_device_releases_oversize_blocks_before_the_whole_cache) {
  c10c__engine *e = fresh(132 * MiB);
  c10c__device_alloc_config config = c10c__device_alloc_config_default();
  config.max_split_size = 40 * MiB;
  ASSERT_OK(c10c__engine_configure(e, &config));
  void *small = NULL, *a = NULL, *b = NULL, *c = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 0, 1000, 0, &small));
  ASSERT_OK(c10c__engine_free(e, small)); /* a cached small segment */
  ASSERT_OK(c10c__engine_malloc(e, 0, 50 * MiB, 0, &a));
  ASSERT_OK(c10c__engine_malloc(e, 0, 60 * MiB, 0, &b));
  ASSERT_OK(c10c__engine_free(e, a));
  ASSERT_OK(c10c__engine_free(e, b));
  /* 70 MiB: no cached block fits; the oversize ones go (largest first) and the retry works */
  ASSERT_OK(c10c__engine_malloc(e, 0, 70 * MiB, 0, &c));
  c10c_memory_stats s = stats_of(e, 0);
  ASSERT_EQ(s.num_alloc_retries, 0);
  ASSERT_EQ(s.segment[C10C_STAT_SMALL_POOL].current, 1); /* the small pool was not released */
  ASSERT_EQ(s.oversize_segments.current, 1);
  ASSERT_OK(c10c__engine_free(e, c));
  c10c__engine_destroy(e);
  ASSERT_EQ(in_use, 0);
}

TEST(inactive_split_counts_free_pieces_of_split_segments) {
  c10c__engine *e = fresh(100 * MiB);
  void *a = NULL, *c = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 0, 1000, 0, &a));
  c10c_memory_stats s = stats_of(e, 0);
  ASSERT_EQ(s.inactive_split[C10C_STAT_ALL].current, 1); /* the rest of the segment */
  ASSERT_EQ(s.inactive_split_bytes[C10C_STAT_SMALL_POOL].current, 2 * MiB - 1024);
  ASSERT_OK(c10c__engine_malloc(e, 0, 1000, 0, &c));
  s = stats_of(e, 0);
  ASSERT_EQ(s.inactive_split[C10C_STAT_ALL].current, 1);
  ASSERT_EQ(s.inactive_split_bytes[C10C_STAT_ALL].current, 2 * MiB - 2048);
  ASSERT_OK(c10c__engine_free(e, a));
  s = stats_of(e, 0);
  ASSERT_EQ(s.inactive_split[C10C_STAT_ALL].current, 2);
  ASSERT_EQ(s.inactive_split_bytes[C10C_STAT_ALL].current, 2 * MiB - 1024);
  ASSERT_OK(c10c__engine_free(e, c)); /* everything merges: the segment is whole again */
  s = stats_of(e, 0);
  ASSERT_EQ(s.inactive_split[C10C_STAT_ALL].current, 0);
  ASSERT_EQ(s.inactive_split_bytes[C10C_STAT_ALL].current, 0);
  ASSERT_EQ(s.inactive_split[C10C_STAT_ALL].peak, 2);
  c10c__engine_destroy(e);
}

static c10c__engine *expandable(size_t bytes) {
  c10c__engine *e = fresh(bytes);
  c10c__device_alloc_config config = c10c__device_alloc_config_default();
  config.expandable_segments = true;
  ASSERT_OK(c10c__engine_configure(e, &config));
  return e;
}

TEST(expandable_segments_grow_in_place_and_unmap_when_released) {
  c10c__engine *e = expandable(200 * MiB);
  void *a = NULL, *b = NULL, *c = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 0, 30 * MiB, 0, &a));
  ASSERT_EQ(reservations, 1);
  ASSERT_EQ(maps, 2);                                    /* two 20 MiB pages */
  ASSERT_OK(c10c__engine_malloc(e, 0, 31 * MiB, 0, &b)); /* the "N + 1" request */
  ASSERT_TRUE((char *)b == (char *)a + 30 * MiB);        /* right after a: no sliver, no segment */
  ASSERT_EQ(reservations, 1);
  ASSERT_EQ(maps, 4);
  c10c_memory_stats s = stats_of(e, 0);
  ASSERT_EQ(s.reserved_bytes[C10C_STAT_ALL].current, 80 * MiB);
  ASSERT_EQ(s.segment[C10C_STAT_ALL].current, 1);
  ASSERT_EQ(s.num_device_alloc, 2);                      /* two map calls */
  ASSERT_EQ(s.inactive_split[C10C_STAT_ALL].current, 0); /* not counted for expandable blocks */
  /* a request that no longer fits the device: the free pages are unmapped and reused */
  ASSERT_OK(c10c__engine_free(e, a));
  ASSERT_OK(c10c__engine_malloc(e, 0, 150 * MiB, 0, &c));
  ASSERT_TRUE(c != NULL);
  s = stats_of(e, 0);
  ASSERT_EQ(s.num_alloc_retries, 1);
  ASSERT_TRUE(synchronizes >= 1); /* pages are unmapped only after the device's work */
  ASSERT_TRUE(s.reserved_bytes[C10C_STAT_ALL].current <= 200 * MiB);
  ASSERT_EQ(in_use, (size_t)s.reserved_bytes[C10C_STAT_ALL].current);
  void *d = NULL;
  ASSERT_EQ(c10c__engine_malloc(e, 0, 100 * MiB, 0, &d), C10C_STATUS_OUT_OF_MEMORY);
  ASSERT_TRUE(strstr(c10c_last_error_message(),
                     "CUDA out of memory. Tried to allocate 100.00 "
                     "MiB. GPU 0 has a total capacity of 200.00 MiB") != NULL);
  ASSERT_OK(c10c__engine_free(e, b));
  ASSERT_OK(c10c__engine_free(e, c));
  c10c__engine_empty_cache(e);
  s = stats_of(e, 0);
  ASSERT_EQ(s.reserved_bytes[C10C_STAT_ALL].current, 0);
  ASSERT_EQ(s.segment[C10C_STAT_ALL].current, 0);
  ASSERT_EQ(in_use, 0);
  ASSERT_EQ(reservations, 0);
  ASSERT_EQ(maps, unmaps);
  c10c__engine_destroy(e);
}

TEST(expandable_segments_keep_growing_sizes_within_a_page_of_the_peak) {
  /* the varlen pattern: each step allocates a slightly larger set of activations */
  for (int expand = 0; expand < 2; expand++) {
#if SIZE_MAX < UINT64_MAX
    size_t device = (size_t)1536 * MiB; /* what a 32-bit address space holds, reserved 1.125x */
#else
    size_t device = (size_t)4096 * MiB;
#endif
    c10c__engine *e = expand ? expandable(device) : fresh(device);
    size_t peak_live = 0;
    for (int step = 0; step < 12; step++) {
      void *p[8];
      size_t live = 0;
      for (int i = 0; i < 8; i++) {
        size_t size = (size_t)(24 + step) * MiB + (size_t)i * 512 * 1024;
        ASSERT_OK(c10c__engine_malloc(e, 0, size, 0, &p[i]));
        live += size;
      }
      if (live > peak_live) peak_live = live;
      for (int i = 0; i < 8; i++) ASSERT_OK(c10c__engine_free(e, p[i]));
    }
    c10c_memory_stats s = stats_of(e, 0);
    double ratio = (double)s.reserved_bytes[C10C_STAT_ALL].peak / (double)peak_live;
    if (expand)
      ASSERT_TRUE(ratio < 1.10); /* one segment, grown by 20 MiB pages */
    else
      ASSERT_TRUE(ratio > 2.0); /* a new set of segments whenever the sizes outgrow the old */
    c10c__engine_destroy(e);
    ASSERT_EQ(in_use, 0);
  }
}

/* PyTorch's get_free_block with expandable segments: a free block at the end of the mapped
 * memory counts for the best fit as what it could grow to, so a request that fits both it and
 * a larger hole between allocated blocks goes to the hole, and the end stays free to grow the
 * next large request with fewer new pages. (Seen on a real trace, codelocation_train_expandable
 * in bench/traces: libc10c used the end and mapped one 20 MiB page more than PyTorch.) */
TEST(expandable_best_fit_prefers_a_hole_to_the_growable_end) {
  c10c__engine *e = expandable(200 * MiB);
  void *a = NULL, *b = NULL, *c = NULL, *r = NULL, *big = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 0, 12 * MiB, 0, &a)); /* page 1: a, 8 MiB free */
  ASSERT_OK(c10c__engine_malloc(e, 0, 8 * MiB, 0, &b));  /* fills page 1 */
  ASSERT_OK(c10c__engine_malloc(e, 0, 16 * MiB, 0, &c)); /* page 2: c, 4 MiB free at the end */
  ASSERT_EQ(maps, 2);
  ASSERT_OK(c10c__engine_free(e, b)); /* an 8 MiB hole between a and c */
  ASSERT_OK(c10c__engine_malloc(e, 0, 3 * MiB, 0, &r));
  ASSERT_TRUE(r == b); /* the hole (8 MiB), not the end (4 MiB, but growable) */
  ASSERT_OK(c10c__engine_malloc(e, 0, 24 * MiB, 0, &big));
  ASSERT_TRUE((char *)big == (char *)c + 16 * MiB); /* the free 4 MiB and one new page */
  ASSERT_EQ(maps, 3);
  ASSERT_EQ(stats_of(e, 0).reserved_bytes[C10C_STAT_ALL].peak, 60 * MiB);
  char msg[256];
  ASSERT_TRUE(c10c__engine_validate(e, msg, sizeof msg));
  void *all[] = {a, c, r, big};
  for (int i = 0; i < 4; i++) ASSERT_OK(c10c__engine_free(e, all[i]));
  c10c__engine_destroy(e);
}

/* PyTorch's get_free_block when expandable segments were switched off after some were made:
 * their free blocks are passed over (memory for IPC must come from an ordinary segment). */
TEST(expandable_blocks_are_not_reused_once_expandable_segments_are_off) {
  c10c__engine *e = expandable(200 * MiB);
  void *a = NULL, *b = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 0, 12 * MiB, 0, &a));
  ASSERT_OK(c10c__engine_free(e, a)); /* a free 20 MiB page of the expandable segment */
  c10c__device_alloc_config config = c10c__device_alloc_config_default();
  ASSERT_OK(c10c__engine_configure(e, &config));
  ASSERT_OK(c10c__engine_malloc(e, 0, 12 * MiB, 0, &b));
  ASSERT_EQ(mallocs, 1); /* a segment of its own */
  ASSERT_TRUE(b != a);
  ASSERT_OK(c10c__engine_free(e, b));
  c10c__engine_destroy(e);
}

/* Regression (fuzz_engine, corpus engine/expandable_reservation_size_wraps): 1.125 x a device's
 * total bytes, in pages, wrapped around for a total above 16 EiB x 8 / 9, and the engine reserved
 * 18 MiB of address space for a device it believed to be that large. Such a device is now full. */
TEST(an_expandable_reservation_too_large_to_count_is_out_of_memory) {
#if SIZE_MAX < UINT64_MAX
  c10c__engine *e = expandable((size_t)0xE38E38E4u); /* the same above 4 GiB x 8 / 9 */
#else
  c10c__engine *e = expandable((size_t)0xE38E38E38F38E38Full);
#endif
  void *a = NULL;
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c__engine_malloc(e, 0, 1000, 0, &a));
  ASSERT_EQ(reservations, 0);
  c10c__engine_destroy(e);
}

TEST(a_failed_map_leaves_the_segment_consistent) {
  c10c__engine *e = expandable(100 * MiB);
  void *a = NULL, *b = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 0, 30 * MiB, 0, &a));
  ASSERT_EQ(c10c__engine_malloc(e, 0, 90 * MiB, 0, &b), C10C_STATUS_OUT_OF_MEMORY);
  ASSERT_EQ(in_use, 40 * MiB); /* pages mapped by the failed attempt were unmapped again */
  ASSERT_OK(c10c__engine_malloc(e, 0, 60 * MiB, 0, &b));
  ASSERT_TRUE((char *)b == (char *)a + 30 * MiB);
  ASSERT_OK(c10c__engine_free(e, a));
  ASSERT_OK(c10c__engine_free(e, b));
  c10c__engine_destroy(e);
  ASSERT_EQ(in_use, 0);
  ASSERT_EQ(reservations, 0);
}

/* Regression (fuzz_engine, corpus engine/unmap_split_fails_without_a_tail): releasing the free
 * pages of a block that ends on a page boundary but starts inside a page dereferenced NULL when
 * the host had no memory for the split (there was no tail piece to fold back). */
TEST(releasing_pages_without_host_memory_for_the_split_leaves_the_block_mapped) {
  c10c__engine *e = expandable(200 * MiB);
  void *a = NULL, *c = NULL, *d = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 0, 10 * MiB, 0, &a)); /* [0, 10) of a 20 MiB page */
  ASSERT_OK(c10c__engine_malloc(e, 0, 30 * MiB, 0, &c)); /* [10, 40): a second page */
  ASSERT_OK(c10c__engine_free(e, c));                    /* free [10, 40), ending on a page */
  ASSERT_OK(c10c__engine_malloc(e, 0, 1000, 0, &d));     /* uses up the spare block record */
  c10c_testing_fail_allocation(1);
  c10c__engine_empty_cache(e); /* [20, 40) cannot be split off: stays mapped */
  c10c_testing_fail_allocation(0);
  expect_valid(e, 0);
  ASSERT_EQ(stats_of(e, 0).reserved_bytes[C10C_STAT_LARGE_POOL].current, 40 * MiB);
  c10c__engine_empty_cache(e); /* with memory it is released */
  ASSERT_EQ(stats_of(e, 0).reserved_bytes[C10C_STAT_LARGE_POOL].current, 20 * MiB);
  ASSERT_OK(c10c__engine_free(e, a));
  ASSERT_OK(c10c__engine_free(e, d));
  c10c__engine_destroy(e);
  ASSERT_EQ(in_use, 0);
}

static int count_of(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle)) n++;
  return n;
}

/* torch's history and blocks: alloc, free_requested and free_completed carry the requested size
 * (free_completed when the block's record_stream events are done), segment events the segment's;
 * a block freed but pending on events is active_pending_free with its requested_size still. */
TEST(history_and_pending_blocks_carry_the_requested_size_as_torchs) {
  c10c__engine *e = fresh(100 * MiB);
  ASSERT_OK(c10c__engine_record_history(e, 100));
  clock_now = 0;
  busy[2] = 10;
  void *a = NULL, *b = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 0, 1001, 1, &a));
  ASSERT_OK(c10c__engine_record_stream(e, a, 2));
  ASSERT_OK(c10c__engine_free(e, a));
  char *json = NULL;
  size_t len = 0;
  ASSERT_OK(c10c__engine_snapshot(e, &json, &len));
  ASSERT_TRUE(strstr(json,
                     "\"size\": 1024, \"requested_size\": 1001, \"state\": "
                     "\"active_pending_free\"") != NULL);
  ASSERT_EQ(count_of(json, "\"size\": 1001, \"stream\""), 2);    /* alloc, free_requested */
  ASSERT_EQ(count_of(json, "\"size\": 2097152, \"stream\""), 1); /* segment_alloc */
  c10c__free(json);
  clock_now = 10; /* stream 2 is done: the next malloc completes the free */
  ASSERT_OK(c10c__engine_malloc(e, 0, 1001, 1, &b));
  ASSERT_OK(c10c__engine_snapshot(e, &json, &len));
  ASSERT_EQ(count_of(json, "\"action\": \"free_completed\""), 1);
  ASSERT_EQ(count_of(json, "\"size\": 1001, \"stream\""), 4);
  c10c__free(json);
  ASSERT_OK(c10c__engine_free(e, b));
  c10c__engine_destroy(e);
  ASSERT_EQ(in_use, 0);
}

TEST(snapshots_list_segments_blocks_and_a_bounded_trace) {
  c10c__engine *e = fresh(100 * MiB);
  ASSERT_OK(c10c__engine_record_history(e, 8));
  void *a = NULL, *b = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 0, 1000, 0, &a));
  ASSERT_OK(c10c__engine_malloc(e, 1, 12 * MiB, 5, &b));
  char *json = NULL;
  size_t len = 0;
  ASSERT_OK(c10c__engine_snapshot(e, &json, &len));
  ASSERT_EQ(strlen(json), len);
  ASSERT_EQ(count_of(json, "\"segment_type\": \"small\""), 1);
  ASSERT_EQ(count_of(json, "\"segment_type\": \"large\""), 1);
  ASSERT_EQ(count_of(json, "\"state\": \"active_allocated\""), 2);
  ASSERT_EQ(count_of(json, "\"state\": \"inactive\""), 1); /* the rest of the small segment */
  ASSERT_TRUE(strstr(json, "\"requested_size\": 1000") != NULL);
  ASSERT_TRUE(strstr(json, "\"total_size\": 12582912") != NULL); /* 12 MiB: its own segment */
  ASSERT_TRUE(strstr(json, "\"stream\": 5") != NULL);
  ASSERT_EQ(count_of(json, "\"action\": \"segment_alloc\""), 2);
  ASSERT_EQ(count_of(json, "\"action\": \"alloc\""), 2);
  c10c__free(json);
  for (int i = 0; i < 10; i++) { /* 30 more events: only the last 8 per device stay */
    ASSERT_OK(c10c__engine_free(e, a));
    ASSERT_OK(c10c__engine_malloc(e, 0, 1000, 0, &a));
  }
  ASSERT_OK(c10c__engine_snapshot(e, &json, &len));
  const char *device1 = strstr(json, "], [");
  ASSERT_TRUE(device1 != NULL);
  ASSERT_EQ(count_of(json, "\"action\"") - count_of(device1, "\"action\""), 8);
  ASSERT_TRUE(strstr(json, "\"trace_max_entries\": 8") != NULL);
  c10c__free(json);
  ASSERT_EQ(c10c__engine_record_history(e, (size_t)1 << 30), C10C_STATUS_INVALID_ARGUMENT);
  ASSERT_OK(c10c__engine_record_history(e, 0));
  ASSERT_OK(c10c__engine_free(e, a));
  ASSERT_OK(c10c__engine_free(e, b));
  c10c__engine_destroy(e);
}

TEST(stream_ordered_reuse_waits_on_an_event_instead_of_a_new_segment) {
  for (int on = 0; on < 2; on++) {
    c10c__engine *e = fresh(100 * MiB);
    c10c__device_alloc_config config = c10c__device_alloc_config_default();
    config.stream_ordered_reuse = on;
    ASSERT_OK(c10c__engine_configure(e, &config));
    clock_now = 0;
    busy[1] = busy[2] = busy[3] = 0;
    void *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    ASSERT_OK(c10c__engine_malloc(e, 0, 12 * MiB, 1, &a));
    busy[1] = 50; /* stream 1 still works on a when it is freed */
    ASSERT_OK(c10c__engine_free(e, a));
    ASSERT_OK(c10c__engine_malloc(e, 0, 12 * MiB, 2, &b));
    ASSERT_EQ(b == a, on);
    ASSERT_EQ(busy[2], on ? 50u : 0u); /* stream 2 waits for stream 1's work */
    /* a block waiting for record_stream's event goes to the waiting stream the same way */
    ASSERT_OK(c10c__engine_record_stream(e, b, 3));
    busy[3] = 80;
    ASSERT_OK(c10c__engine_free(e, b));
    ASSERT_OK(c10c__engine_malloc(e, 0, 12 * MiB, 2, &c));
    ASSERT_EQ(c == b, on);
    ASSERT_EQ(busy[2], on ? 80u : 0u);
    /* stream 2 waited for stream 1 (a's stream) twice, the second time because b, though used
     * on stream 2, stays stream 1's memory; and for stream 3's event, not for its own */
    ASSERT_EQ(waits, on ? 3 : 0);
    ASSERT_EQ(mallocs, on ? 1 : 3);
    ASSERT_OK(c10c__engine_free(e, c));
    clock_now = 100;
    ASSERT_OK(c10c__engine_malloc(e, 0, 1, 1, &d)); /* processes the events */
    ASSERT_OK(c10c__engine_free(e, d));
    c10c__engine_destroy(e);
    ASSERT_EQ(in_use, 0);
    ASSERT_EQ(live_events, 0);
  }
}

/* A small deterministic generator (splitmix64). */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Sizes from 1 byte to 64 MiB, most of them small, as tensors are. */
static size_t random_size(uint64_t r) {
  int bits = (int)(r % 27);
  return ((size_t)1 << bits) + (size_t)((r >> 8) % ((size_t)1 << bits));
}

/* Regression (fuzz_engine, corpus engine/event_record_fails_segment_kept_after_destroy): a
 * block freed while one of its record_stream events could not be recorded was held forever, and
 * c10c__engine_destroy left its segment with the backend. It now waits for a device
 * synchronization: when the cache is released (empty_cache, or the retry before an
 * out-of-memory error) the engine synchronizes the device and the block returns. */
TEST(a_block_whose_event_cannot_be_recorded_waits_for_a_device_synchronization) {
  c10c__engine *e = fresh(100 * MiB);
  clock_now = 0;
  busy[2] = busy[3] = 50;
  void *a = NULL, *b = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 0, 12 * MiB, 1, &a));
  ASSERT_OK(c10c__engine_record_stream(e, a, 2));
  ASSERT_OK(c10c__engine_record_stream(e, a, 3));
  record_failures = 1; /* one of the two events */
  ASSERT_OK(c10c__engine_free(e, a));
  ASSERT_EQ(live_events, 1);
  clock_now = 100; /* the recorded event completes; the other stream's use is unknown */
  ASSERT_OK(c10c__engine_malloc(e, 0, 12 * MiB, 1, &b));
  ASSERT_TRUE(b != a);
  ASSERT_EQ(live_events, 0);
  ASSERT_OK(c10c__engine_free(e, b));
  int before = synchronizes;
  c10c__engine_empty_cache(e);
  ASSERT_EQ(synchronizes, before + 1);
  expect_valid(e, 0);
  ASSERT_EQ(in_use, 0);
  ASSERT_EQ(stats_of(e, 0).active_bytes[C10C_STAT_ALL].current, 0);
  c10c__engine_destroy(e);
}

TEST(destroy_gives_back_a_stuck_block_even_without_a_device_synchronization) {
  without_synchronize = true;
  c10c__engine *e = fresh(100 * MiB);
  without_synchronize = false;
  void *a = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 0, 12 * MiB, 1, &a));
  ASSERT_OK(c10c__engine_record_stream(e, a, 2));
  record_failures = 1;
  ASSERT_OK(c10c__engine_free(e, a));
  c10c__engine_empty_cache(e); /* cannot know when stream 2 is done: the block stays */
  ASSERT_EQ(in_use, 12 * MiB);
  expect_valid(e, 0);
  c10c__engine_destroy(e);
  ASSERT_EQ(in_use, 0);
  ASSERT_EQ(live_events, 0);
}

/* Regression (fuzz_engine, corpus engine/ordered_reuse_split_leaves_free_neighbours and
 * ordered_reuse_rest_without_a_wait): a block taken back from its record_stream events by
 * stream-ordered reuse had never been merged with its free neighbours, and splitting it put its
 * rest beside a free block (two free neighbours: the segment could never coalesce whole again);
 * and that rest went to its stream's pool while the recorded stream might still be at work on
 * it. The rest now waits for the recorded streams (events recorded on them anew) and merges
 * with its neighbours once they are done. */
TEST(stream_ordered_reuse_of_a_pending_block_keeps_its_rest_waiting) {
  c10c__engine *e = fresh(400 * MiB);
  c10c__device_alloc_config config = c10c__device_alloc_config_default();
  config.stream_ordered_reuse = true;
  ASSERT_OK(c10c__engine_configure(e, &config));
  clock_now = 0;
  memset(busy, 0, sizeof busy);
  void *a = NULL, *b = NULL, *c = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 0, 261 * MiB / 2, 1, &a)); /* a 132 MiB segment, split */
  ASSERT_EQ(stats_of(e, 0).inactive_split_bytes[C10C_STAT_ALL].current, 3 * MiB / 2);
  ASSERT_OK(c10c__engine_record_stream(e, a, 3));
  busy[3] = 80;
  ASSERT_OK(c10c__engine_free(e, a)); /* pending on stream 3's event */
  ASSERT_OK(c10c__engine_malloc(e, 0, 15 * MiB / 2, 2, &b));
  ASSERT_TRUE(b == a); /* taken back, stream 2 made to wait */
  expect_valid(e, 0);
  c10c_memory_stats s = stats_of(e, 0);
  ASSERT_EQ(s.inactive_split[C10C_STAT_ALL].current, 1); /* the 1.5 MiB at the end */
  ASSERT_EQ(s.active_bytes[C10C_STAT_ALL].current, 132 * MiB - 3 * MiB / 2);
  /* stream 1 gets the rest only after waiting for stream 3 */
  ASSERT_OK(c10c__engine_malloc(e, 0, 60 * MiB, 1, &c));
  ASSERT_TRUE(c == (char *)a + 15 * MiB / 2);
  ASSERT_EQ(busy[1], 80u);
  expect_valid(e, 1);
  ASSERT_OK(c10c__engine_free(e, c));
  ASSERT_OK(c10c__engine_free(e, b));
  expect_valid(e, 2);
  c10c__engine_empty_cache(e); /* whole again: released */
  ASSERT_EQ(in_use, 0);
  c10c__engine_destroy(e);
}

/* Regression (fuzz_engine, corpus engine/ordered_reuse_skips_the_blocks_own_stream): stream-
 * ordered reuse of a block waiting for its record_stream events made the new stream wait for
 * those events only, not for the work of the block's own stream, which may still use it
 * (here stream 2, ordered after stream 1's work until tick 52). */
TEST(stream_ordered_reuse_of_a_pending_block_waits_for_its_own_stream_too) {
  c10c__engine *e = fresh(100 * MiB);
  c10c__device_alloc_config config = c10c__device_alloc_config_default();
  config.stream_ordered_reuse = true;
  ASSERT_OK(c10c__engine_configure(e, &config));
  clock_now = 0;
  memset(busy, 0, sizeof busy);
  void *a = NULL, *b = NULL, *c = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 0, 12 * MiB, 1, &a));
  busy[1] = 52;
  ASSERT_OK(c10c__engine_free(e, a));
  ASSERT_OK(c10c__engine_malloc(e, 0, 12 * MiB, 2, &b)); /* stream 2 waits for stream 1 */
  ASSERT_TRUE(b == a);
  ASSERT_EQ(busy[2], 52u);
  ASSERT_OK(c10c__engine_record_stream(e, b, 3));
  busy[3] = 33;
  ASSERT_OK(c10c__engine_free(e, b));
  ASSERT_OK(c10c__engine_malloc(e, 0, 15 * MiB / 2, 0, &c));
  ASSERT_TRUE(c == b);
  ASSERT_EQ(busy[0], 52u); /* after stream 2's work, not just stream 3's */
  ASSERT_OK(c10c__engine_free(e, c));
  c10c__engine_destroy(e);
  ASSERT_EQ(live_events, 0);
}

/* Regression (fuzz_engine, corpus engine/ordered_reuse_merges_across_streams): stream-ordered
 * reuse moved a block (and the rest split off it) to the allocating stream, so one segment held
 * free blocks of several streams, and freeing one merged it into a neighbour of another stream:
 * memory stream 3 was still working on became stream 0's and was handed to stream 0 without a
 * wait. A reused block now stays its segment's stream's memory, used on the new stream as
 * record_stream notes a use; every block of a segment has the segment's stream (validated). */
TEST(stream_ordered_reuse_keeps_blocks_in_their_segments_stream) {
  c10c__engine *e = fresh(100 * MiB);
  c10c__device_alloc_config config = c10c__device_alloc_config_default();
  config.stream_ordered_reuse = true;
  ASSERT_OK(c10c__engine_configure(e, &config));
  clock_now = 0;
  memset(busy, 0, sizeof busy);
  void *x = NULL, *y = NULL, *z = NULL, *w = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 0, 1000, 3, &x)); /* a small segment of stream 3 */
  ASSERT_OK(c10c__engine_free(e, x));
  ASSERT_OK(c10c__engine_malloc(e, 0, 98, 0, &y)); /* stream 0 takes a piece of it */
  ASSERT_TRUE(y == x);
  ASSERT_OK(c10c__engine_malloc(e, 0, 459008, 3, &z)); /* the rest is still stream 3's */
  ASSERT_TRUE((char *)z == (char *)y + 512);
  expect_valid(e, 0);
  ASSERT_OK(c10c__engine_free(e, y));
  busy[3] = 2; /* stream 3 still works on z */
  ASSERT_OK(c10c__engine_free(e, z));
  expect_valid(e, 1);
  ASSERT_OK(c10c__engine_malloc(e, 0, 20992, 0, &w));
  ASSERT_TRUE(w == y);    /* z's memory again... */
  ASSERT_EQ(busy[0], 2u); /* ...after stream 3's work */
  ASSERT_OK(c10c__engine_free(e, w));
  c10c__engine_destroy(e);
  ASSERT_EQ(live_events, 0);
}

/* Thousands of random mallocs, frees, record_streams, clock moves and cache releases under each
 * configuration, on two devices and three streams, with a device small enough to run out: the
 * engine's invariants (c10c__engine_validate) hold after every step, and nothing is left at
 * the end. */
TEST(random_operations_keep_the_invariants) {
  for (int config = 0; config < 6; config++) {
    c10c__engine *e = fresh(256 * MiB);
    c10c__device_alloc_config c = c10c__device_alloc_config_default();
    if (config == 1) c.max_split_size = 40 * MiB;
    if (config == 2) c.expandable_segments = true;
    if (config == 3) c.garbage_collection_threshold = 0.5;
    if (config == 4) c.stream_ordered_reuse = true;
    if (config == 5)
      for (int i = 0; i < C10C__ROUNDUP_INTERVALS; i++) c.roundup_power2_divisions[i] = 4;
    ASSERT_OK(c10c__engine_configure(e, &c));
    if (config == 3) c10c__engine_set_limit(e, 0, 200 * MiB);
    ASSERT_OK(c10c__engine_record_history(e, 64));
    clock_now = 0;
    memset(busy, 0, sizeof busy);
    void *live[48] = {0};
    int served = 0, refused = 0;
    uint64_t state = 0x5EED + (uint64_t)config;
    for (int step = 0; step < 3000 && !test_current_failed; step++) {
      uint64_t r = next_random(&state);
      size_t slot = (size_t)(r >> 16) % 48;
      int op = (int)(r % 16);
      if (op < 8) {
        if (live[slot] != NULL) ASSERT_OK(c10c__engine_free(e, live[slot]));
        live[slot] = NULL;
        c10c_status st = c10c__engine_malloc(e, (int)(r >> 40) % 2, random_size(r >> 20),
                                             (c10c_stream_id)((r >> 50) % 3), &live[slot]);
        ASSERT_TRUE(st == C10C_STATUS_OK || st == C10C_STATUS_OUT_OF_MEMORY);
        served += st == C10C_STATUS_OK, refused += st != C10C_STATUS_OK;
      } else if (op < 13) {
        if (live[slot] != NULL) ASSERT_OK(c10c__engine_free(e, live[slot]));
        live[slot] = NULL;
      } else if (op == 13) {
        if (live[slot] != NULL) {
          c10c_stream_id user = (c10c_stream_id)((r >> 40) % 3);
          ASSERT_OK(c10c__engine_record_stream(e, live[slot], user));
          busy[user] = clock_now + (r >> 56) % 20;
        }
      } else if (op == 14) {
        clock_now += (r >> 32) % 10;
      } else if ((r >> 32) % 8 == 0) {
        c10c__engine_empty_cache(e);
      } else {
        char *json = NULL;
        size_t len = 0;
        ASSERT_OK(c10c__engine_snapshot(e, &json, &len));
        c10c__free(json);
      }
      expect_valid(e, step);
    }
    ASSERT_TRUE(served > 1000 && refused > 10); /* the device did fill up */
    for (size_t i = 0; i < 48; i++) ASSERT_OK(c10c__engine_free(e, live[i]));
    c10c__engine_empty_cache(e);
    expect_valid(e, -1);
    c10c_memory_stats s0 = stats_of(e, 0), s1 = stats_of(e, 1);
    ASSERT_EQ(s0.reserved_bytes[C10C_STAT_ALL].current + s1.reserved_bytes[C10C_STAT_ALL].current,
              0);
    ASSERT_EQ(in_use, 0);
    ASSERT_EQ(live_events, 0);
    c10c__engine_destroy(e);
    ASSERT_EQ(reservations, 0);
  }
}

/* Four threads allocating and freeing on their own streams while a fifth releases the cache
 * and takes snapshots (TSan runs this). */
static c10c__engine *shared_engine;

static void *churn(void *arg) {
  uint64_t state = (uint64_t)(uintptr_t)arg;
  void *mine[8] = {0};
  for (int i = 0; i < 4000; i++) {
    uint64_t r = next_random(&state);
    size_t k = (size_t)(r >> 8) % 8;
    if (mine[k] != NULL && c10c__engine_free(shared_engine, mine[k]) != C10C_STATUS_OK) break;
    mine[k] = NULL;
    c10c__engine_malloc(shared_engine, 0, random_size(r >> 16) % (8 * MiB) + 1,
                        (c10c_stream_id)(uintptr_t)arg % 4, &mine[k]);
  }
  for (size_t k = 0; k < 8; k++) c10c__engine_free(shared_engine, mine[k]);
  return NULL;
}

static void *tidy(void *arg) {
  (void)arg;
  for (int i = 0; i < 200; i++) {
    c10c__engine_empty_cache(shared_engine);
    char *json = NULL;
    size_t len = 0;
    if (c10c__engine_snapshot(shared_engine, &json, &len) == C10C_STATUS_OK) c10c__free(json);
  }
  return NULL;
}

TEST(threads_share_an_engine) {
  for (int expand = 0; expand < 2; expand++) {
    shared_engine = expand ? expandable(1024 * MiB) : fresh(1024 * MiB);
    ASSERT_OK(c10c__engine_record_history(shared_engine, 128));
    pthread_t threads[5];
    for (uintptr_t i = 0; i < 4; i++) pthread_create(&threads[i], NULL, churn, (void *)(i + 1));
    pthread_create(&threads[4], NULL, tidy, NULL);
    for (int i = 0; i < 5; i++) pthread_join(threads[i], NULL);
    expect_valid(shared_engine, -1);
    ASSERT_EQ(stats_of(shared_engine, 0).allocated_bytes[C10C_STAT_ALL].current, 0);
    c10c__engine_destroy(shared_engine);
    ASSERT_EQ(in_use, 0);
  }
}

RUN_TESTS(T(roundup_power2_divisions_round_as_pytorch),
          T(max_split_size_keeps_oversize_blocks_whole_and_for_their_size),
          T(device_config_strings_follow_pytorch),
          T(record_stream_holds_a_block_until_the_other_streams_work_is_done),
          T(rounding_and_segment_sizes_are_pytorchs),
          T(an_engine_without_a_planned_mode_refuses_planning),
          T(small_blocks_pack_a_segment_and_come_back_without_the_backend),
          T(large_blocks_split_only_beyond_a_mebibyte_and_stay_per_stream),
          T(a_full_device_frees_the_cache_and_retries_before_failing),
          T(garbage_collection_releases_old_cached_blocks_past_the_threshold),
          T(a_full_device_releases_oversize_blocks_before_the_whole_cache),
          T(inactive_split_counts_free_pieces_of_split_segments),
          T(expandable_segments_grow_in_place_and_unmap_when_released),
          T(expandable_segments_keep_growing_sizes_within_a_page_of_the_peak),
          T(expandable_best_fit_prefers_a_hole_to_the_growable_end),
          T(expandable_blocks_are_not_reused_once_expandable_segments_are_off),
          T(a_failed_map_leaves_the_segment_consistent),
          T(an_expandable_reservation_too_large_to_count_is_out_of_memory),
          T(releasing_pages_without_host_memory_for_the_split_leaves_the_block_mapped),
          T(history_and_pending_blocks_carry_the_requested_size_as_torchs),
          T(snapshots_list_segments_blocks_and_a_bounded_trace),
          T(stream_ordered_reuse_waits_on_an_event_instead_of_a_new_segment),
          T(a_block_whose_event_cannot_be_recorded_waits_for_a_device_synchronization),
          T(destroy_gives_back_a_stuck_block_even_without_a_device_synchronization),
          T(stream_ordered_reuse_of_a_pending_block_keeps_its_rest_waiting),
          T(stream_ordered_reuse_of_a_pending_block_waits_for_its_own_stream_too),
          T(stream_ordered_reuse_keeps_blocks_in_their_segments_stream),
          T(random_operations_keep_the_invariants), T(threads_share_an_engine))
