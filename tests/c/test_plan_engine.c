/* The caching engine's planned mode (lib/memory/plan_engine.c): steps recorded and served from
 * an offset plan in one arena, over the simulated device (c10c_sim_device_*) and over the engine
 * with a backend that has events (white-box: links the static library and sees lib/), plan
 * files, and one run through the CUDA allocator over the stand-in driver (argument "cuda"). */
#define _GNU_SOURCE /* truncate */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "c10c/replay.h"
#include "c10c/testing.h"
#include "caching_engine.h"
#include "plan_engine.h"
#include "harness.h"
#include "planner.h"
#include "sysmem.h"

/* The simulated device: 16 GiB, or 1 GiB where size_t is 32 bits. */
#if SIZE_MAX > UINT32_MAX
#define DEVICE_BYTES ((size_t)1 << 34)
#else
#define DEVICE_BYTES ((size_t)1 << 30)
#endif
/* The simulated device of the c10c_sim_device tests: 8 GiB, 1 GiB on a 32-bit target (a
 * simulated device holds at most SIZE_MAX / 2 bytes). */
#if SIZE_MAX > UINT32_MAX
#define SIM_BYTES ((uint64_t)8 << 30)
#else
#define SIM_BYTES ((uint64_t)1 << 30)
#endif

enum { KiB = 1 << 10, MiB = 1 << 20 };

/* ---- a backend of fabricated addresses with events on a fake clock ---- */

static size_t capacity, in_use;
static uintptr_t next_address = 0x10000000;
static int mallocs, frees, records, waits, live_events, fail_mallocs;
static uint64_t clock_now, busy[16];

static c10c_status fake_malloc(void *self, int device, size_t size, void **out) {
  (void)self, (void)device;
  if (fail_mallocs > 0 || size > capacity - in_use) {
    if (fail_mallocs > 0) fail_mallocs--;
    return C10C_STATUS_OUT_OF_MEMORY;
  }
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

typedef struct fake_event {
  uint64_t done_at;
} fake_event;

static c10c_status fake_record(void *self, int device, c10c_stream_id stream, void **out) {
  (void)self, (void)device;
  fake_event *ev = malloc(sizeof *ev);
  if (ev == NULL) return C10C_STATUS_OUT_OF_MEMORY;
  ev->done_at = busy[stream & 15];
  records++;
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
}

static void fake_destroy(void *self, void *event) {
  (void)self;
  free(event);
  live_events--;
}

static c10c_status fake_wait(void *self, int device, c10c_stream_id stream, void *event) {
  (void)self, (void)device;
  fake_event *ev = event;
  if (busy[stream & 15] < ev->done_at) busy[stream & 15] = ev->done_at;
  waits++;
  return C10C_STATUS_OK;
}

/* The device finishes all its work: the clock moves to the last stream's end. */
static void fake_device_sync(void *self, int device) {
  (void)self, (void)device;
  for (int i = 0; i < 16; i++)
    if (busy[i] > clock_now) clock_now = busy[i];
}

static c10c_status fake_mem_info(void *self, int device, size_t *free_bytes, size_t *total) {
  (void)self, (void)device;
  *free_bytes = capacity - in_use;
  *total = capacity;
  return C10C_STATUS_OK;
}

static c10c__engine *fresh(size_t bytes, const char *settings) {
  capacity = bytes;
  in_use = 0;
  mallocs = frees = records = waits = fail_mallocs = 0;
  clock_now = 0;
  memset(busy, 0, sizeof busy);
  c10c__engine *e = NULL;
  c10c__segment_backend backend = {.malloc = fake_malloc,
                                   .free = fake_free,
                                   .event_record = fake_record,
                                   .event_query = fake_query,
                                   .event_synchronize = fake_sync,
                                   .event_destroy = fake_destroy,
                                   .mem_info = fake_mem_info,
                                   .stream_wait = fake_wait,
                                   .synchronize = fake_device_sync};
  ASSERT_OK(c10c__engine_new(&e, backend, 2, &c10c__plan_engine_hooks));
  c10c__device_alloc_config config = c10c__device_alloc_config_default();
  char msg[256];
  ASSERT_OK(c10c__parse_device_alloc_config(settings, &config, msg, sizeof msg));
  ASSERT_OK(c10c__engine_configure(e, &config));
  return e;
}

static void finish(c10c__engine *e) {
  c10c__engine_destroy(e);
  ASSERT_EQ(live_events, 0);
  ASSERT_EQ(in_use, 0);
}

static c10c_memory_stats stats_of(c10c__engine *e, int device) {
  c10c_memory_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  ASSERT_OK(c10c__engine_stats(e, device, &s));
  return s;
}

static void expect_valid(c10c__engine *e, const char *where) {
  char msg[512];
  if (!c10c__engine_validate(e, msg, sizeof msg)) FAIL_AT("%s: %s", where, msg);
}

/* ---- steps as lists of operations ---- */

typedef struct op {
  char kind; /* 'a': slot = malloc(size, stream); 'f': free(slot); 'k': keep (no free); 'e':
              * empty_cache (the simulated device's) */
  int slot;
  size_t size;
  c10c_stream_id stream;
} op;

/* One stream: a 4 MiB block, a 1 MiB one, the first freed, 2 MiB and 600 KiB, all freed. */
static const op one_stream[] = {{'a', 0, 4 * MiB, 0}, {'a', 1, 1 * MiB, 0},   {'f', 0, 0, 0},
                                {'a', 2, 2 * MiB, 0}, {'a', 3, 600 * KiB, 0}, {'f', 1, 0, 0},
                                {'f', 2, 0, 0},       {'f', 3, 0, 0}};
enum { ONE_STREAM_ALLOCS = 4 };

static void run_engine(c10c__engine *e, int device, const op *ops, size_t n, void **slots) {
  for (size_t i = 0; i < n; i++) {
    if (ops[i].kind == 'a')
      ASSERT_OK(c10c__engine_malloc(e, device, ops[i].size, ops[i].stream, &slots[ops[i].slot]));
    else if (ops[i].kind == 'f')
      ASSERT_OK(c10c__engine_free(e, slots[ops[i].slot]));
    expect_valid(e, "an operation");
  }
}

#define RUN(e, ops, slots) run_engine(e, 0, ops, sizeof ops / sizeof ops[0], slots)

static void run_sim(c10c_sim_device *d, const op *ops, size_t n, uint64_t *slots) {
  for (size_t i = 0; i < n; i++) {
    if (ops[i].kind == 'a')
      ASSERT_OK(c10c_sim_device_malloc(&slots[ops[i].slot], d, ops[i].size, ops[i].stream));
    else if (ops[i].kind == 'f')
      ASSERT_OK(c10c_sim_device_free(d, slots[ops[i].slot]));
    else if (ops[i].kind == 'e')
      ASSERT_OK(c10c_sim_device_empty_cache(d));
  }
}

static c10c_sim_device_stats sim_stats(c10c_sim_device *d) {
  c10c_sim_device_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  ASSERT_OK(c10c_sim_device_get_stats(&s, d));
  return s;
}

/* ---- tests ---- */

TEST(identical_steps_are_served_from_the_plan_without_device_mallocs) {
  c10c_sim_device *d = NULL;
  ASSERT_OK(c10c_sim_device_new(&d, SIM_BYTES, "planning:True", 0));
  uint64_t persistent = 0, slots[4];
  ASSERT_OK(c10c_sim_device_malloc(&persistent, d, 10 * MiB, 0)); /* never freed: not planned */
  ASSERT_OK(c10c_sim_device_step(d));                             /* the prologue */
  c10c_sim_device_stats s = sim_stats(d);
  ASSERT_EQ(s.plan_rebuilds, 0);
  int64_t persistent_reserved = s.reserved;
  for (int step = 1; step <= 5; step++) {
    c10c_sim_device_stats before = sim_stats(d);
    run_sim(d, one_stream, sizeof one_stream / sizeof one_stream[0], slots);
    c10c_sim_device_stats after = sim_stats(d);
    if (step >= 2) { /* the step after the first recorded one, and every one after it */
      ASSERT_EQ(after.plan_served - before.plan_served, ONE_STREAM_ALLOCS);
      ASSERT_EQ(after.plan_fallbacks - before.plan_fallbacks, 0);
      ASSERT_EQ(after.device_mallocs, before.device_mallocs);
      ASSERT_EQ(after.reserved, persistent_reserved + after.plan_arena_bytes);
      ASSERT_EQ(after.allocated, 10 * MiB);
    } else {
      ASSERT_EQ(after.plan_served, 0);
    }
    ASSERT_OK(c10c_sim_device_step(d));
    s = sim_stats(d);
    ASSERT_EQ(s.plan_rebuilds, 1);
    /* the arena is the peak of live bytes rounded to 2 MiB: 4 + 1 MiB, then 1 + 2 MiB + 600 KiB */
    ASSERT_EQ(s.plan_arena_bytes, 6 * MiB);
    ASSERT_EQ(s.reserved, persistent_reserved + s.plan_arena_bytes);
  }
  ASSERT_EQ(s.plan_drops, 0);
  ASSERT_OK(c10c_sim_device_free(d, persistent));
  c10c_sim_device_destroy(d);
}

/* A step of twelve requests of distinct sizes, each freed within it, the first kept alive
 * across most of the step (a repeating pattern with a quiet point between steps). */
/* clang-format off */
#define TWELVE_OPS                                                                                 \
    {'a', 0, 3 * MiB, 0},   {'a', 1, 1 * MiB, 0}, {'f', 1, 0, 0},           {'a', 2, 5 * MiB, 0},  \
    {'a', 3, 700 * KiB, 0}, {'f', 2, 0, 0},       {'a', 4, 2 * MiB, 0},     {'f', 3, 0, 0},        \
    {'a', 5, 9 * MiB, 0},   {'f', 4, 0, 0},       {'a', 6, 300 * KiB, 0},   {'f', 5, 0, 0},        \
    {'a', 7, 6 * MiB, 0},   {'f', 6, 0, 0},       {'a', 8, 4 * MiB, 0},     {'f', 7, 0, 0},        \
    {'a', 9, 8 * MiB, 0},   {'f', 8, 0, 0},       {'a', 10, 1500 * KiB, 0}, {'f', 9, 0, 0},        \
    {'a', 11, 7 * MiB, 0},  {'f', 10, 0, 0},      {'f', 11, 0, 0},          {'f', 0, 0, 0}
/* clang-format on */
static const op twelve[] = {TWELVE_OPS};

/* twelve, then the cache emptied (as a program that calls empty_cache each step) */
static const op twelve_emptied[] = {TWELVE_OPS, {'e', 0, 0, 0}};

TEST(steps_are_found_in_the_requests_when_the_host_marks_none) {
  /* found, but a plan of them would need the cache they use given back, which other phases of
   * a program whose steps are only guessed may use again: the engine goes on, byte for byte */
  c10c_sim_device *d = NULL, *plain = NULL;
  ASSERT_OK(c10c_sim_device_new(&d, SIM_BYTES, "planning:True", 0));
  ASSERT_OK(c10c_sim_device_new(&plain, SIM_BYTES, "", 0));
  uint64_t slots[12];
  for (int step = 0; step < 8; step++) {
    run_sim(d, twelve, sizeof twelve / sizeof twelve[0], slots);
    run_sim(plain, twelve, sizeof twelve / sizeof twelve[0], slots);
  }
  c10c_sim_device_stats after = sim_stats(d);
  ASSERT_TRUE(after.plan_declines >= 1);
  ASSERT_EQ(after.plan_served, 0);
  ASSERT_EQ(after.peak_reserved, sim_stats(plain).peak_reserved);
  ASSERT_EQ(after.device_mallocs, sim_stats(plain).device_mallocs);
  c10c_sim_device_destroy(d);
  c10c_sim_device_destroy(plain);
  /* a step that gives its cache back itself (empty_cache) is planned beside the rest: by the
   * last step every request is served from the plan */
  ASSERT_OK(c10c_sim_device_new(&d, SIM_BYTES, "planning:True", 0));
  c10c_sim_device_stats before = sim_stats(d);
  after = before;
  for (int step = 0; step < 8; step++) {
    before = after;
    run_sim(d, twelve_emptied, sizeof twelve_emptied / sizeof twelve_emptied[0], slots);
    after = sim_stats(d);
  }
  ASSERT_TRUE(after.plan_rebuilds >= 1);
  ASSERT_EQ(after.plan_served - before.plan_served, 12);
  ASSERT_EQ(after.device_mallocs, before.device_mallocs);
  ASSERT_EQ(after.plan_drops, 0);
  c10c_sim_device_destroy(d);
  /* the host's own marks take over (here one in mid-step: that step falls back, the plan
   * rebuilt from the host's steps), and the cache of a step the host marks goes back */
  ASSERT_OK(c10c_sim_device_new(&d, SIM_BYTES, "planning:True", 0));
  for (int step = 0; step < 8; step++) run_sim(d, twelve, sizeof twelve / sizeof twelve[0], slots);
  ASSERT_OK(c10c_sim_device_step(d));
  for (int step = 0; step < 4; step++) {
    before = sim_stats(d);
    run_sim(d, twelve, sizeof twelve / sizeof twelve[0], slots);
    ASSERT_OK(c10c_sim_device_step(d));
  }
  after = sim_stats(d);
  ASSERT_EQ(after.plan_served - before.plan_served, 12);
  c10c_sim_device_destroy(d);
}

TEST(blocks_a_step_keeps_stay_the_engines_and_the_rest_is_served) {
  /* each step frees the block the step before kept (gradients at zero_grad) and keeps a new one
   * between its temporaries: the plan leaves it to the engine by position (in the room the
   * freed one left), and every temporary is served */
  static const op keeps[] = {{'a', 0, 3 * MiB, 0},  {'a', 1, 5 * MiB, 0},  {'f', 0, 0, 0},
                             {'a', 2, 13 * MiB, 0}, {'a', 3, 13 * MiB, 0}, {'f', 2, 0, 0},
                             {'f', 3, 0, 0}};
  c10c_sim_device *d = NULL;
  ASSERT_OK(c10c_sim_device_new(&d, SIM_BYTES, "planning:True", 0));
  uint64_t slots[4];
  ASSERT_OK(c10c_sim_device_step(d));
  c10c_sim_device_stats before = sim_stats(d), after = before;
  int64_t recorded_peak = 0;
  for (int step = 0; step < 4; step++) {
    uint64_t kept = slots[1];
    before = sim_stats(d);
    if (step > 0) ASSERT_OK(c10c_sim_device_free(d, kept));
    run_sim(d, keeps, sizeof keeps / sizeof keeps[0], slots); /* slot 1 (5 MiB) is kept */
    after = sim_stats(d);
    if (step == 0) recorded_peak = after.peak_reserved;
    ASSERT_TRUE(after.reserved <= recorded_peak); /* never more than the engine alone */
    ASSERT_OK(c10c_sim_device_step(d));
  }
  ASSERT_EQ(after.plan_served - before.plan_served, 3);
  ASSERT_EQ(after.plan_fallbacks - before.plan_fallbacks, 1);
  ASSERT_EQ(sim_stats(d).plan_rebuilds, 1);
  ASSERT_EQ(sim_stats(d).plan_declines, 0);
  ASSERT_EQ(sim_stats(d).plan_arena_bytes, 26 * MiB); /* 3 MiB, then 13 and 13 MiB at once */
  ASSERT_OK(c10c_sim_device_free(d, slots[1]));
  c10c_sim_device_destroy(d);
}

TEST(a_plan_that_would_reserve_more_than_the_engine_is_declined) {
  /* the engine keeps the step's temporaries in the segment of the block each step keeps: a plan
   * would need an arena on top of that segment, so the engine goes on serving */
  static const op keeps[] = {{'a', 0, 3 * MiB, 0},
                             {'a', 1, 5 * MiB, 0},
                             {'f', 0, 0, 0},
                             {'a', 2, 1 * MiB, 0},
                             {'f', 2, 0, 0}};
  c10c_sim_device *d = NULL, *plain = NULL;
  ASSERT_OK(c10c_sim_device_new(&d, SIM_BYTES, "planning:True", 0));
  ASSERT_OK(c10c_sim_device_new(&plain, SIM_BYTES, "", 0));
  uint64_t slots[3], plain_slots[3];
  for (int step = 0; step < 6; step++) {
    if (step > 0) {
      ASSERT_OK(c10c_sim_device_free(d, slots[1]));
      ASSERT_OK(c10c_sim_device_free(plain, plain_slots[1]));
    }
    run_sim(d, keeps, sizeof keeps / sizeof keeps[0], slots);
    run_sim(plain, keeps, sizeof keeps / sizeof keeps[0], plain_slots);
    ASSERT_OK(c10c_sim_device_step(d));
    ASSERT_OK(c10c_sim_device_step(plain));
    ASSERT_EQ(sim_stats(d).reserved, sim_stats(plain).reserved);
    ASSERT_EQ(sim_stats(d).device_mallocs, sim_stats(plain).device_mallocs);
  }
  c10c_sim_device_stats s = sim_stats(d);
  ASSERT_EQ(s.plan_served, 0);
  ASSERT_EQ(s.plan_rebuilds, 0);
  ASSERT_TRUE(s.plan_declines >= 1); /* once: the same step again gives the same answer */
  ASSERT_TRUE(s.plan_declines <= 2);
  ASSERT_EQ(s.peak_reserved, sim_stats(plain).peak_reserved);
  c10c_sim_device_destroy(d);
  c10c_sim_device_destroy(plain);
}

TEST(a_changed_step_falls_back_and_rebuilds_the_plan) {
  c10c__engine *e = fresh(DEVICE_BYTES, "planning:True");
  void *slots[4];
  static const op changed[] = {{'a', 0, 8 * MiB, 0}, {'a', 1, 1 * MiB, 0}, {'f', 0, 0, 0},
                               {'a', 2, 2 * MiB, 0}, {'f', 1, 0, 0},       {'f', 2, 0, 0}};
  for (int step = 0; step < 3; step++) {
    RUN(e, one_stream, slots);
    ASSERT_OK(c10c__engine_step(e, 0));
  }
  c10c_memory_stats before = stats_of(e, 0);
  RUN(e, changed, slots); /* 8 MiB is not in the plan; 1 and 2 MiB are, one place on */
  c10c_memory_stats after = stats_of(e, 0);
  ASSERT_EQ(after.plan_fallbacks - before.plan_fallbacks, 1);
  ASSERT_EQ(after.plan_served - before.plan_served, 2);
  ASSERT_OK(c10c__engine_step(e, 0));
  after = stats_of(e, 0);
  ASSERT_EQ(after.plan_rebuilds, 2);
  ASSERT_EQ(after.plan_arena_bytes, 10 * MiB);
  for (int step = 0; step < 2; step++) {
    before = stats_of(e, 0);
    RUN(e, changed, slots);
    after = stats_of(e, 0);
    ASSERT_EQ(after.plan_served - before.plan_served, 3);
    ASSERT_EQ(after.plan_fallbacks, before.plan_fallbacks);
    ASSERT_EQ(after.num_device_alloc, before.num_device_alloc);
    ASSERT_OK(c10c__engine_step(e, 0));
  }
  ASSERT_EQ(stats_of(e, 0).plan_rebuilds, 2);
  expect_valid(e, "the end");
  finish(e);
}

TEST(steps_that_keep_changing_drop_planning) {
  c10c__engine *e = fresh(DEVICE_BYTES, "planning:True");
  void *p = NULL;
  for (int step = 1; step <= 12; step++) { /* a new size every step: every plan misses */
    ASSERT_OK(c10c__engine_malloc(e, 0, (size_t)step * MiB, 0, &p));
    ASSERT_OK(c10c__engine_free(e, p));
    ASSERT_OK(c10c__engine_step(e, 0));
    expect_valid(e, "a step");
  }
  c10c_memory_stats s = stats_of(e, 0);
  /* dropped: for the misses, or before the engine grew past what it reserves alone */
  ASSERT_TRUE(s.plan_drops >= 1);
  ASSERT_EQ(s.plan_arena_bytes, 0);
  /* a missed step rebuilds its plan, or declines one larger than the first step reserved (a
   * decline is not tried again for a step of the same figures) */
  ASSERT_TRUE(s.plan_rebuilds >= 1 && s.plan_rebuilds + s.plan_declines >= 2);
  ASSERT_TRUE(s.plan_rebuilds + s.plan_declines <= 6);
  finish(e);
}

TEST(a_block_kept_across_the_boundary_hands_the_arena_to_the_engine) {
  c10c__engine *e = fresh(DEVICE_BYTES, "planning:True");
  void *slots[4];
  static const op keeping[] = {{'a', 0, 4 * MiB, 0}, {'a', 1, 1 * MiB, 0},   {'f', 0, 0, 0},
                               {'a', 2, 2 * MiB, 0}, {'a', 3, 600 * KiB, 0}, {'f', 1, 0, 0},
                               {'f', 2, 0, 0}};
  for (int step = 0; step < 2; step++) {
    RUN(e, one_stream, slots);
    ASSERT_OK(c10c__engine_step(e, 0));
  }
  ASSERT_EQ(stats_of(e, 0).plan_served, ONE_STREAM_ALLOCS);
  RUN(e, keeping, slots); /* served, slot 3 still allocated at the boundary */
  c10c_memory_stats before = stats_of(e, 0);
  ASSERT_OK(c10c__engine_step(e, 0));
  void *kept = slots[3];
  c10c_memory_stats after = stats_of(e, 0);
  expect_valid(e, "the hand-over");
  /* the arena is now a segment of the engine, the kept block one of its blocks (nothing is
   * given back or allocated for it); a new plan of the step that kept it has an arena of its
   * own */
  ASSERT_EQ(after.reserved_bytes[C10C_STAT_ALL].current,
            before.reserved_bytes[C10C_STAT_ALL].current + after.plan_arena_bytes);
  ASSERT_EQ(after.num_device_free, before.num_device_free);
  ASSERT_EQ(after.allocated_bytes[C10C_STAT_ALL].current,
            before.allocated_bytes[C10C_STAT_ALL].current);
  for (int step = 0; step < 3; step++) {
    before = stats_of(e, 0);
    RUN(e, one_stream, slots);
    if (step == 0) ASSERT_OK(c10c__engine_free(e, kept)); /* through the engine */
    after = stats_of(e, 0);
    ASSERT_OK(c10c__engine_step(e, 0));
    expect_valid(e, "a step after the hand-over");
  }
  /* planned again: the step's plan (of the step that kept its 600 KiB block) leaves that block
   * to the engine */
  ASSERT_EQ(after.plan_served - before.plan_served, ONE_STREAM_ALLOCS - 1);
  ASSERT_EQ(after.plan_fallbacks - before.plan_fallbacks, 1);
  finish(e);
}

TEST(reuse_across_streams_makes_the_second_stream_wait) {
  c10c__engine *e = fresh(DEVICE_BYTES, "planning:True");
  void *slots[2];
  static const op two[] = {
      {'a', 0, 4 * MiB, 1}, {'f', 0, 0, 1}, {'a', 1, 4 * MiB, 2}, {'f', 1, 0, 2}};
  RUN(e, two, slots);
  ASSERT_OK(c10c__engine_step(e, 0));
  ASSERT_EQ(stats_of(e, 0).plan_arena_bytes, 4 * MiB); /* both at offset 0 */
  int records0 = records, waits0 = waits;
  busy[1] = 5; /* stream 1's work on the first block ends at 5 */
  RUN(e, two, slots);
  ASSERT_TRUE(slots[0] == slots[1]);
  ASSERT_EQ(records - records0, 1); /* at the first block's free, on stream 1 */
  ASSERT_EQ(waits - waits0, 1);     /* stream 2 waits for it */
  ASSERT_EQ(busy[2], 5);
  busy[2] = 9;
  ASSERT_OK(c10c__engine_step(e, 0)); /* events on both streams for the next step */
  ASSERT_EQ(records - records0, 3);
  RUN(e, two, slots); /* stream 1 waits for stream 2's last step first */
  ASSERT_EQ(busy[1], 9);
  ASSERT_EQ(stats_of(e, 0).plan_served, 4);
  finish(e);
}

TEST(record_stream_on_a_planned_block_holds_its_bytes_until_the_stream_is_done) {
  c10c__engine *e = fresh(DEVICE_BYTES, "planning:True");
  void *slots[2];
  static const op first[] = {{'a', 0, 4 * MiB, 1}};
  static const op rest[] = {{'f', 0, 0, 1}, {'a', 1, 4 * MiB, 1}, {'f', 1, 0, 1}};
  RUN(e, first, slots);
  RUN(e, rest, slots);
  ASSERT_OK(c10c__engine_step(e, 0));
  RUN(e, first, slots);
  ASSERT_OK(c10c__engine_record_stream(e, slots[0], 3));
  busy[3] = 7;
  c10c_memory_stats before = stats_of(e, 0);
  RUN(e, rest, slots); /* the second block cannot have the first one's bytes yet */
  c10c_memory_stats after = stats_of(e, 0);
  ASSERT_TRUE(slots[0] != slots[1]);
  ASSERT_EQ(after.plan_fallbacks - before.plan_fallbacks, 1);
  clock_now = 7;
  ASSERT_OK(c10c__engine_step(e, 0));
  before = stats_of(e, 0);
  RUN(e, first, slots);
  RUN(e, rest, slots);
  after = stats_of(e, 0);
  ASSERT_EQ(after.plan_served - before.plan_served, 2);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c__engine_record_stream(e, slots[0], 3));
  finish(e);
}

TEST(requests_the_plan_does_not_know_go_to_the_engine) {
  c10c__engine *e = fresh(DEVICE_BYTES, "planning:True");
  void *slots[4];
  static const op two[] = {
      {'a', 0, 4 * MiB, 1}, {'a', 1, 2 * MiB, 2}, {'f', 0, 0, 1}, {'f', 1, 0, 2}};
  static const op one[] = {
      {'a', 0, 4 * MiB, 5}, {'a', 1, 2 * MiB, 5}, {'f', 0, 0, 5}, {'f', 1, 0, 5}};
  static const op larger[] = {
      {'a', 0, 4 * MiB + 512, 1}, {'a', 1, 2 * MiB, 2}, {'f', 0, 0, 1}, {'f', 1, 0, 2},
      {'a', 2, 1 * MiB, 1},       {'f', 2, 0, 1}};
  RUN(e, two, slots);
  ASSERT_OK(c10c__engine_step(e, 0));
  c10c_memory_stats before = stats_of(e, 0);
  RUN(e, one, slots); /* stream 5 is plan stream 0; plan stream 1 never comes */
  c10c_memory_stats after = stats_of(e, 0);
  ASSERT_EQ(after.plan_served - before.plan_served, 1);
  ASSERT_EQ(after.plan_fallbacks - before.plan_fallbacks, 1);
  ASSERT_OK(c10c__engine_step(e, 0)); /* half missed: rebuilt for one stream */
  ASSERT_EQ(stats_of(e, 0).plan_rebuilds, 2);
  RUN(e, two, slots);
  ASSERT_OK(c10c__engine_step(e, 0));
  RUN(e, larger, slots); /* larger than planned, and more requests than planned */
  expect_valid(e, "larger");
  ASSERT_OK(c10c__engine_step(e, 0));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c__engine_free(e, (char *)slots[0] + 512));
  finish(e);
}

TEST(step_markers_without_planning_or_a_recording_do_nothing) {
  c10c__engine *e = fresh(DEVICE_BYTES, "");
  void *slots[4];
  RUN(e, one_stream, slots);
  ASSERT_OK(c10c__engine_step(e, -1));
  ASSERT_OK(c10c__engine_step(e, 1));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c__engine_step(e, 2));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c__engine_step(e, -2));
  RUN(e, one_stream, slots);
  ASSERT_EQ(stats_of(e, 0).plan_rebuilds, 0);
  c10c__engine_destroy(e);
  e = fresh(DEVICE_BYTES, "planning:True");
  for (int i = 0; i < 3; i++) ASSERT_OK(c10c__engine_step(e, -1)); /* empty steps */
  ASSERT_EQ(stats_of(e, 0).plan_rebuilds, 0);
  finish(e);
  c10c_sim_device *d = NULL;
  ASSERT_OK(c10c_sim_device_new(&d, (uint64_t)1 << 30, NULL, 0));
  ASSERT_OK(c10c_sim_device_step(d));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_sim_device_step(NULL));
  c10c_sim_device_destroy(d);
}

TEST(an_arena_the_device_cannot_give_drops_the_plan) {
  c10c__engine *e = fresh(DEVICE_BYTES, "planning:True");
  void *slots[4];
  RUN(e, one_stream, slots);
  fail_mallocs = 1;
  ASSERT_OK(c10c__engine_step(e, 0));
  c10c_memory_stats s = stats_of(e, 0);
  ASSERT_EQ(s.plan_drops, 1);
  ASSERT_EQ(s.plan_arena_bytes, 0);
  RUN(e, one_stream, slots); /* the engine's */
  ASSERT_EQ(stats_of(e, 0).plan_served, 0);
  finish(e);
}

TEST(a_full_device_takes_back_an_idle_arena_before_running_out_of_memory) {
  c10c__engine *e = fresh(24 * MiB, "planning:True");
  void *slots[4], *big = NULL;
  RUN(e, one_stream, slots);
  ASSERT_OK(c10c__engine_step(e, 0));
  ASSERT_EQ(stats_of(e, 0).plan_arena_bytes, 6 * MiB);
  ASSERT_OK(c10c__engine_malloc(e, 0, 20 * MiB, 0, &big)); /* 20 MiB + the arena's 6: too much */
  c10c_memory_stats s = stats_of(e, 0);
  ASSERT_EQ(s.plan_arena_bytes, 0);
  ASSERT_EQ(s.plan_drops, 1);
  ASSERT_EQ(s.num_ooms, 0);
  expect_valid(e, "after the retry");
  ASSERT_OK(c10c__engine_free(e, big));
  ASSERT_OK(c10c__engine_step(e, 0)); /* the step had a request: planned again */
  ASSERT_EQ(stats_of(e, 0).plan_rebuilds, 2);
  finish(e);
}

TEST(switching_planning_off_releases_the_arena_once_its_blocks_are_freed) {
  c10c__engine *e = fresh(DEVICE_BYTES, "planning:True");
  void *slots[4], *p = NULL;
  RUN(e, one_stream, slots);
  ASSERT_OK(c10c__engine_step(e, 0));
  ASSERT_OK(c10c__engine_malloc(e, 0, 4 * MiB, 0, &p)); /* planned */
  ASSERT_EQ(stats_of(e, 0).plan_served, 1);
  c10c__device_alloc_config config = c10c__device_alloc_config_default();
  ASSERT_OK(c10c__engine_configure(e, &config));
  RUN(e, one_stream, slots);
  ASSERT_EQ(stats_of(e, 0).plan_served, 1);
  ASSERT_EQ(stats_of(e, 0).plan_arena_bytes, 6 * MiB);
  ASSERT_OK(c10c__engine_free(e, p));
  expect_valid(e, "planning off");
  ASSERT_EQ(stats_of(e, 0).plan_arena_bytes, 0);
  finish(e);
}

TEST(snapshots_and_sharing_show_the_arena_as_a_segment) {
  c10c__engine *e = fresh(DEVICE_BYTES, "planning:True");
  void *slots[4], *p = NULL;
  RUN(e, one_stream, slots);
  ASSERT_OK(c10c__engine_step(e, 0));
  ASSERT_OK(c10c__engine_malloc(e, 0, 4 * MiB, 0, &p));
  char *json = NULL;
  size_t len = 0;
  ASSERT_OK(c10c__engine_snapshot(e, &json, &len));
  ASSERT_TRUE(strstr(json, "\"segment_type\": \"plan\"") != NULL);
  ASSERT_TRUE(strstr(json, "\"state\": \"active_allocated\"") != NULL);
  ASSERT_TRUE(strstr(json, "\"planning\": true, \"plan_file\": \"\"") != NULL);
  c10c__free(json);
  c10c__block_share share;
  ASSERT_OK(c10c__engine_share(e, p, &share, NULL, NULL));
  ASSERT_EQ(share.size, 6 * MiB);
  ASSERT_EQ(share.block_size, 4 * MiB);
  ASSERT_TRUE(share.base + share.offset == (char *)p);
  ASSERT_FALSE(share.expandable);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c__engine_share(e, (char *)p + 512, &share, NULL, NULL));
  ASSERT_OK(c10c__engine_free(e, p));
  finish(e);
}

/* torch's history carries the requested size in alloc, free_requested and free_completed (the
 * block's size only in the snapshot's blocks): blocks the plan serves too. */
static const op odd_sizes[] = {
    {'a', 0, 3000001, 0}, {'a', 1, 1, 0}, {'f', 0, 0, 0}, {'f', 1, 0, 0}};

static int occurrences(const char *text, const char *needle) {
  int n = 0;
  for (const char *at = strstr(text, needle); at != NULL; at = strstr(at + 1, needle)) n++;
  return n;
}

TEST(planned_blocks_carry_the_requested_size_in_the_history) {
  c10c__engine *e = fresh(DEVICE_BYTES, "planning:True");
  void *slots[2];
  RUN(e, odd_sizes, slots);
  ASSERT_OK(c10c__engine_step(e, 0));
  ASSERT_OK(c10c__engine_record_history(e, 100));
  c10c_memory_stats before = stats_of(e, 0);
  RUN(e, odd_sizes, slots);
  ASSERT_EQ(stats_of(e, 0).plan_served - before.plan_served, 2);
  char *json = NULL;
  size_t len = 0;
  ASSERT_OK(c10c__engine_snapshot(e, &json, &len));
  ASSERT_EQ(occurrences(json, "\"size\": 3000001, \"stream\""), 3);
  ASSERT_EQ(occurrences(json, "\"size\": 1, \"stream\""), 3);
  ASSERT_EQ(occurrences(json, "\"size\": 512, \"stream\""), 0);
  c10c__free(json);
  ASSERT_OK(c10c__engine_record_history(e, 0));
  finish(e);
}

/* A plan file of the one-stream step, made by c10c_plan_make. */
static void make_plan_file(const char *path, int32_t device) {
  uint64_t sizes[] = {4 * MiB, 1 * MiB, 2 * MiB, 600 * KiB};
  int64_t streams[] = {0, 0, 0, 0};
  uint64_t begins[] = {0, 1, 3, 4}, ends[] = {2, 5, 6, 7}, arena = 0;
  ASSERT_OK(c10c_plan_make(&arena, NULL, path, device, 4, sizes, streams, begins, ends));
  ASSERT_EQ(arena, 6 * MiB);
}

static void temp_path(char *out, size_t size, const char *name) {
  snprintf(out, size, "%s/c10c_plan_%d_%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
           (int)getpid(), name);
}

TEST(a_plan_file_is_served_from_the_first_request) {
  char path[512], settings[600];
  temp_path(path, sizeof path, "good");
  make_plan_file(path, 0);
  snprintf(settings, sizeof settings, "plan_file:%s", path);
  c10c_sim_device *d = NULL;
  ASSERT_OK(c10c_sim_device_new(&d, SIM_BYTES, settings, 0));
  c10c_sim_device_stats s = sim_stats(d);
  ASSERT_EQ(s.plan_rebuilds, 1);
  ASSERT_EQ(s.plan_arena_bytes, 6 * MiB);
  ASSERT_EQ(s.device_mallocs, 1);
  uint64_t slots[4];
  run_sim(d, one_stream, 5, slots);
  ASSERT_OK(c10c_sim_device_step(d)); /* the file goes on across markers */
  run_sim(d, one_stream + 5, 3, slots);
  s = sim_stats(d);
  ASSERT_EQ(s.plan_served, 4);
  ASSERT_EQ(s.device_mallocs, 1);
  run_sim(d, one_stream, 8, slots); /* past its end: the engine's */
  ASSERT_OK(c10c_sim_device_step(d));
  s = sim_stats(d);
  ASSERT_EQ(s.plan_served, 4);
  ASSERT_EQ(s.plan_arena_bytes, 0); /* without planning:True nothing takes over */
  c10c_sim_device_destroy(d);
  /* with planning:True, online planning takes over */
  snprintf(settings, sizeof settings, "planning:True,plan_file:%s", path);
  ASSERT_OK(c10c_sim_device_new(&d, SIM_BYTES, settings, 0));
  run_sim(d, one_stream, 8, slots);
  ASSERT_OK(c10c_sim_device_step(d));
  run_sim(d, one_stream, 8, slots);
  ASSERT_OK(c10c_sim_device_step(d));
  run_sim(d, one_stream, 8, slots);
  s = sim_stats(d);
  ASSERT_EQ(s.plan_served, 12);
  ASSERT_EQ(s.plan_rebuilds, 2);
  c10c_sim_device_destroy(d);
  unlink(path);
}

#ifdef _WIN32
/* Windows file names cannot hold a quote */
#define QUOTED_NAME      "quoted'name"
#define QUOTED_NAME_JSON "quoted'name"
#else
#define QUOTED_NAME      "quoted\"name"
#define QUOTED_NAME_JSON "quoted\\\"name"
#endif

TEST(new_settings_stop_a_plan_files_plan_and_snapshots_name_the_file) {
  char path[512], settings[600];
  temp_path(path, sizeof path, QUOTED_NAME);
  make_plan_file(path, 0);
  snprintf(settings, sizeof settings, "plan_file:%s", path);
  c10c__engine *e = fresh(DEVICE_BYTES, settings);
  void *slots[4];
  RUN(e, one_stream, slots);
  ASSERT_EQ(stats_of(e, 0).plan_served, ONE_STREAM_ALLOCS);
  char *json = NULL;
  size_t len = 0;
  ASSERT_OK(c10c__engine_snapshot(e, &json, &len));
  ASSERT_TRUE(strstr(json, QUOTED_NAME_JSON "\", \"stitching\": false}}") !=
              NULL); /* a JSON string */
  ASSERT_TRUE(strstr(json, "\"planning\": false") != NULL);
  c10c__free(json);
  /* the file again, a block kept; then settings without planning: served no more, and the
   * arena goes with the kept block */
  c10c__device_alloc_config config = c10c__device_alloc_config_default();
  char msg[256];
  ASSERT_OK(c10c__parse_device_alloc_config(settings, &config, msg, sizeof msg));
  ASSERT_OK(c10c__engine_configure(e, &config));
  void *kept = NULL;
  ASSERT_OK(c10c__engine_malloc(e, 0, 4 * MiB, 0, &kept));
  ASSERT_EQ(stats_of(e, 0).plan_served, ONE_STREAM_ALLOCS + 1);
  config = c10c__device_alloc_config_default();
  ASSERT_OK(c10c__engine_configure(e, &config));
  c10c_memory_stats before = stats_of(e, 0);
  RUN(e, one_stream, slots);
  ASSERT_EQ(stats_of(e, 0).plan_served, before.plan_served);
  ASSERT_EQ(stats_of(e, 0).plan_arena_bytes, 6 * MiB);
  ASSERT_OK(c10c__engine_free(e, kept));
  ASSERT_EQ(stats_of(e, 0).plan_arena_bytes, 0);
  ASSERT_EQ(stats_of(e, 0).plan_rebuilds, 2);
  expect_valid(e, "the end");
  finish(e);
  unlink(path);
}

TEST(bad_plan_files_fail_the_setting_and_change_nothing) {
  char path[512], settings[600];
  c10c_sim_device *d = NULL;
  ASSERT_OK(c10c_sim_device_new(&d, SIM_BYTES, "planning:True", 0));
  /* a device this engine does not have */
  temp_path(path, sizeof path, "device");
  make_plan_file(path, 3);
  snprintf(settings, sizeof settings, "plan_file:%s", path);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_sim_device_configure(d, settings));
  ASSERT_TRUE(strstr(c10c_last_error_message(), "device 3") != NULL);
  c10c_sim_device *other = NULL;
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_sim_device_new(&other, SIM_BYTES, settings, 0));
  ASSERT_TRUE(other == NULL);
  unlink(path);
  /* truncated */
  temp_path(path, sizeof path, "truncated");
  make_plan_file(path, 0);
  FILE *f = fopen(path, "rb");
  ASSERT_TRUE(f != NULL);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fclose(f);
  ASSERT_EQ(truncate(path, size / 2), 0);
  snprintf(settings, sizeof settings, "plan_file:%s", path);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_sim_device_configure(d, settings));
  ASSERT_TRUE(strstr(c10c_last_error_message(), path) != NULL);
  unlink(path);
  /* another version (the little-endian version number after the 8-byte magic) */
  temp_path(path, sizeof path, "version");
  make_plan_file(path, 0);
  f = fopen(path, "r+b");
  ASSERT_TRUE(f != NULL);
  fseek(f, 8, SEEK_SET);
  fputc(99, f);
  fclose(f);
  snprintf(settings, sizeof settings, "plan_file:%s", path);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_sim_device_configure(d, settings));
  ASSERT_TRUE(strstr(c10c_last_error_message(), "version 99") != NULL);
  unlink(path);
  /* unreadable */
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_sim_device_configure(d, settings));
  /* nothing changed: planning still on */
  uint64_t slots[4];
  run_sim(d, one_stream, 8, slots);
  ASSERT_OK(c10c_sim_device_step(d));
  run_sim(d, one_stream, 8, slots);
  ASSERT_EQ(sim_stats(d).plan_served, 4);
  c10c_sim_device_destroy(d);
}

/* Every host allocation of a planned run failing in turn: each failure is an error status or
 * planning quietly left out, never a crash or a leak, and the engine stays consistent. */
/* Four planned steps of one_stream; k > 0 makes the k-th host allocation fail. Returns how many
 * host allocations the run made. */
static int64_t sweep_run(int64_t k) {
  c10c__engine *e = fresh(DEVICE_BYTES, "planning:True");
  void *slots[4];
  int64_t start = c10c_testing_allocation_count();
  c10c_testing_fail_allocation(k);
  for (int step = 0; step < 4; step++) {
    for (size_t i = 0; i < sizeof one_stream / sizeof one_stream[0]; i++) {
      const op *o = &one_stream[i];
      if (o->kind == 'a') {
        c10c_status st = c10c__engine_malloc(e, 0, o->size, o->stream, &slots[o->slot]);
        if (st != C10C_STATUS_OK) ASSERT_EQ(st, C10C_STATUS_OUT_OF_MEMORY);
      } else {
        ASSERT_OK(c10c__engine_free(e, slots[o->slot]));
      }
    }
    c10c_status st = c10c__engine_step(e, 0);
    if (st != C10C_STATUS_OK) ASSERT_EQ(st, C10C_STATUS_OUT_OF_MEMORY);
    expect_valid(e, "the sweep");
  }
  c10c_testing_fail_allocation(0);
  int64_t made = c10c_testing_allocation_count() - start;
  if (k == 0) ASSERT_EQ(stats_of(e, 0).plan_served, 3 * ONE_STREAM_ALLOCS);
  finish(e);
  return made;
}

TEST(failing_host_allocations_while_recording_and_planning_are_clean) {
  int64_t total = sweep_run(0);
  ASSERT_TRUE(total > 0);
  for (int64_t k = 1; k <= total; k++) sweep_run(k);
}

TEST(devices_are_planned_apart) {
  c10c__engine *e = fresh(DEVICE_BYTES, "planning:True");
  void *slots[2][4];
  for (int step = 0; step < 4; step++)
    for (int device = 0; device < 2; device++) {
      run_engine(e, device, one_stream, sizeof one_stream / sizeof one_stream[0], slots[device]);
      ASSERT_OK(c10c__engine_step(e, device));
    }
  ASSERT_EQ(stats_of(e, 1).plan_served, 3 * ONE_STREAM_ALLOCS);
  finish(e);
}

/* ---- through the CUDA allocator over the stand-in driver ---- */

TEST(the_cuda_allocator_serves_marked_steps_from_a_plan) {
  c10c_allocator *alloc = NULL;
  ASSERT_OK(c10c_allocator_get(&alloc, C10C_DEVICE_TYPE_CUDA));
  ASSERT_OK(c10c_cuda_set_allocator_settings("planning:True"));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_cuda_allocator_step(99));
  c10c_memory_stats s;
  for (int step = 0; step < 4; step++) {
    c10c_data_ptr a, b, c;
    ASSERT_OK(c10c_allocator_allocate(&a, alloc, 4 * MiB));
    ASSERT_OK(c10c_allocator_allocate(&b, alloc, 1 * MiB));
    c10c_data_ptr_free(&a);
    ASSERT_OK(c10c_allocator_allocate(&c, alloc, 2 * MiB));
    c10c_data_ptr_free(&b);
    c10c_data_ptr_free(&c);
    ASSERT_OK(c10c_cuda_allocator_step(step % 2 ? -1 : 0));
  }
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  ASSERT_OK(c10c_allocator_get_stats(&s, alloc));
  ASSERT_EQ(s.plan_served, 9);
  ASSERT_EQ(s.plan_fallbacks, 0);
  ASSERT_EQ(s.plan_rebuilds, 1);
  ASSERT_EQ(s.plan_arena_bytes, 6 * MiB);
  ASSERT_OK(c10c_cuda_set_allocator_settings(""));
  ASSERT_OK(c10c_allocator_get_stats(&s, alloc));
  ASSERT_EQ(s.plan_arena_bytes, 0);
}

int main(int argc, char **argv) {
  static const test_case engine_tests[] = {
      T(identical_steps_are_served_from_the_plan_without_device_mallocs),
      T(steps_are_found_in_the_requests_when_the_host_marks_none),
      T(blocks_a_step_keeps_stay_the_engines_and_the_rest_is_served),
      T(a_plan_that_would_reserve_more_than_the_engine_is_declined),
      T(a_changed_step_falls_back_and_rebuilds_the_plan),
      T(steps_that_keep_changing_drop_planning),
      T(a_block_kept_across_the_boundary_hands_the_arena_to_the_engine),
      T(reuse_across_streams_makes_the_second_stream_wait),
      T(record_stream_on_a_planned_block_holds_its_bytes_until_the_stream_is_done),
      T(requests_the_plan_does_not_know_go_to_the_engine),
      T(step_markers_without_planning_or_a_recording_do_nothing),
      T(an_arena_the_device_cannot_give_drops_the_plan),
      T(a_full_device_takes_back_an_idle_arena_before_running_out_of_memory),
      T(switching_planning_off_releases_the_arena_once_its_blocks_are_freed),
      T(snapshots_and_sharing_show_the_arena_as_a_segment),
      T(planned_blocks_carry_the_requested_size_in_the_history),
      T(a_plan_file_is_served_from_the_first_request),
      T(new_settings_stop_a_plan_files_plan_and_snapshots_name_the_file),
      T(bad_plan_files_fail_the_setting_and_change_nothing),
      T(failing_host_allocations_while_recording_and_planning_are_clean),
      T(devices_are_planned_apart)};
  static const test_case cuda_tests[] = {T(the_cuda_allocator_serves_marked_steps_from_a_plan)};
  bool cuda = argc > 1 && strcmp(argv[1], "cuda") == 0;
  const test_case *tests = cuda ? cuda_tests : engine_tests;
  int count = cuda ? 1 : (int)(sizeof engine_tests / sizeof engine_tests[0]);
  for (int i = 0; i < count; i++) {
    test_current_failed = 0;
    tests[i].fn();
    printf("%s %s\n", test_current_failed ? "FAIL" : "ok  ", tests[i].name);
    test_failures += test_current_failed;
  }
  printf("%d passed, %d failed\n", count - test_failures, test_failures);
  return test_failures ? 1 : 0;
}
