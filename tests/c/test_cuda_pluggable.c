/* PyTorch's pluggable allocator entry points (c10c_cuda_pluggable_malloc/free/record_stream)
 * over the stand-in driver, called as PyTorch calls them: sizes, a device ordinal and raw
 * CUstream handles of streams libc10c did not make (the stand-in's cuStreamCreate, as torch's
 * stream pool creates its streams).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "stub_client.h"

typedef void *CUstream;

#if SIZE_MAX > UINT32_MAX
#define ABSURD_BYTES ((size_t)1 << 50)
#else
#define ABSURD_BYTES ((size_t)3 << 29)
#endif

/* A stream as PyTorch makes one: straight from the driver, on device 0's primary context made
 * current (as cudaSetDevice does). */
static CUstream torch_stream(void) {
  ASSERT_TRUE(c10c_cuda_is_available());
  typedef int (*retain_fn)(void **, int);
  typedef int (*set_fn)(void *);
  STUB_FN(retain_fn, retain, "cuDevicePrimaryCtxRetain");
  STUB_FN(set_fn, set_current, "cuCtxSetCurrent");
  void *ctx = NULL; /* retained once per stream made: the test's streams live for the process */
  if (retain == NULL || set_current == NULL || retain(&ctx, 0) != 0 || set_current(ctx) != 0)
    FAIL_AT("primary context");
  typedef int (*create_fn)(CUstream *, unsigned, int);
  STUB_FN(create_fn, create, "cuStreamCreateWithPriority");
  CUstream s = NULL;
  if (create == NULL || create(&s, 1 /* CU_STREAM_NON_BLOCKING */, 0) != 0)
    FAIL_AT("cuStreamCreateWithPriority");
  return s;
}

static c10c_memory_stats device_stats(void) {
  c10c_allocator *a = NULL;
  c10c_memory_stats s = {.struct_size = sizeof s};
  c10c_allocator_get(&a, C10C_DEVICE_TYPE_CUDA);
  c10c_allocator_get_stats(&s, a);
  c10c_allocator_release(a);
  return s;
}

static void enqueue(CUstream s, uint64_t ticks) {
  typedef void (*fn_type)(CUstream, uint64_t);
  STUB_FN(fn_type, fn, "c10c_stub_enqueue");
  if (fn) fn(s, ticks);
}

static void advance(uint64_t ticks) {
  typedef void (*fn_type)(uint64_t);
  STUB_FN(fn_type, fn, "c10c_stub_advance");
  if (fn) fn(ticks);
}

TEST(blocks_are_allocated_freed_and_reused_per_stream) {
  CUstream s1 = torch_stream(), s2 = torch_stream();
  int64_t before = device_stats().allocation[C10C_STAT_ALL].current;
  void *p = c10c_cuda_pluggable_malloc(1000, 0, s1);
  ASSERT_TRUE(p != NULL);
  ASSERT_EQ(device_stats().allocation[C10C_STAT_ALL].current - before, 1);
  ASSERT_EQ(device_stats().requested_bytes[C10C_STAT_ALL].current, 1000);
  c10c_cuda_pluggable_free(p, 1000, 0, s1);
  ASSERT_EQ(device_stats().allocation[C10C_STAT_ALL].current, before);
  void *q = c10c_cuda_pluggable_malloc(1000, 0, s1);
  ASSERT_TRUE(q == p); /* the cached block, on its own stream */
  c10c_cuda_pluggable_free(q, 1000, 0, s1);
  void *r = c10c_cuda_pluggable_malloc(1000, 0, s2);
  ASSERT_TRUE(r != NULL && r != p); /* another stream's pool: not s1's free block */
  void *d = c10c_cuda_pluggable_malloc(1000, 0, NULL);           /* the legacy default stream */
  void *legacy = c10c_cuda_pluggable_malloc(1000, 0, (void *)1); /* cudaStreamLegacy */
  ASSERT_TRUE(d != NULL && legacy != NULL && d != legacy);
  c10c_cuda_pluggable_free(r, 1000, 0, s2);
  c10c_cuda_pluggable_free(d, 1000, 0, NULL);
  c10c_cuda_pluggable_free(legacy, 1000, 0, (void *)1);
  if (c10c_cuda_device_count() > 1) {
    void *on1 = c10c_cuda_pluggable_malloc(4096, 1, NULL); /* device 1 */
    ASSERT_TRUE(on1 != NULL);
    c10c_cuda_pluggable_free(on1, 4096, 1, NULL);
  }
  c10c_allocator *a = NULL;
  ASSERT_OK(c10c_allocator_get(&a, C10C_DEVICE_TYPE_CUDA));
  ASSERT_OK(c10c_allocator_empty_cache(a));
  c10c_allocator_release(a);
  ASSERT_EQ(device_stats().reserved_bytes[C10C_STAT_ALL].current, 0);
}

TEST(failures_are_null_with_the_reason_in_the_last_error) {
  ASSERT_TRUE(c10c_cuda_pluggable_malloc(0, 0, NULL) == NULL); /* 0 bytes: no memory, as torch */
  int n = c10c_cuda_device_count();
  ASSERT_TRUE(c10c_cuda_pluggable_malloc(16, n, NULL) == NULL);
  char want[96];
  snprintf(want, sizeof want, "CUDA error: invalid device ordinal (device %d; this machine has %d)",
           n, n);
  ASSERT_ERROR_MESSAGE(want);
  ASSERT_TRUE(c10c_cuda_pluggable_malloc(16, -1, NULL) == NULL);
  ASSERT_TRUE(c10c_cuda_pluggable_malloc(16, 0, (void *)3) == NULL);
  ASSERT_ERROR_MESSAGE("0x3 is not a CUDA stream handle (handles are aligned pointers)");
  ASSERT_TRUE(c10c_cuda_pluggable_malloc(ABSURD_BYTES, 0, NULL) == NULL);
  ASSERT_TRUE(strncmp(c10c_last_error_message(), "CUDA out of memory. Tried to allocate", 37) == 0);
  void *p = c10c_cuda_pluggable_malloc(100, 0, NULL);
  c10c_cuda_pluggable_free((char *)p + 512, 100, 0, NULL); /* not a block: refused */
  ASSERT_TRUE(strstr(c10c_last_error_message(), "which the caching allocator did not allocate") !=
              NULL);
  c10c_cuda_pluggable_free(NULL, 0, 0, NULL);
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_pluggable_record_stream(NULL, NULL));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_cuda_pluggable_record_stream((char *)p + 512, NULL));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_pluggable_record_stream(p, (void *)5));
  c10c_cuda_pluggable_free(p, 100, 0, NULL);
}

TEST(record_stream_holds_a_block_until_the_other_streams_work_is_done) {
  if (getenv("C10C_CUDA_DRIVER") && strstr(getenv("C10C_CUDA_DRIVER"), "stub") == NULL) {
    printf("  (skipped: the stand-in's clock orders this test; the real driver has none)\n");
    return;
  }
  CUstream a = torch_stream(), b = torch_stream();
  void *first = c10c_cuda_pluggable_malloc(1 << 20, 0, a);
  ASSERT_OK(c10c_cuda_pluggable_record_stream(first, b));
  enqueue(b, 4); /* b works on the block for 4 ticks */
  c10c_cuda_pluggable_free(first, 1 << 20, 0, a);
  void *second = c10c_cuda_pluggable_malloc(1 << 20, 0, a);
  ASSERT_TRUE(second != first); /* b may still be using it */
  c10c_cuda_pluggable_free(second, 1 << 20, 0, a);
  advance(4);
  void *third = c10c_cuda_pluggable_malloc(1 << 20, 0, a);
  ASSERT_TRUE(third == first || third == second); /* b is done: both are free to reuse */
  c10c_cuda_pluggable_free(third, 1 << 20, 0, a);
}

TEST(snapshots_and_history_show_what_the_entry_points_allocated) {
  ASSERT_OK(c10c_cuda_record_memory_history(100));
  CUstream s = torch_stream();
  void *p = c10c_cuda_pluggable_malloc(3 << 20, 0, s);
  size_t len = 0;
  ASSERT_STATUS(C10C_STATUS_BUFFER_TOO_SMALL, c10c_cuda_memory_snapshot(NULL, 0, &len));
  char *json = malloc(len + 1);
  ASSERT_OK(c10c_cuda_memory_snapshot(json, len + 1, NULL));
  char address[64], stream[64];
  snprintf(address, sizeof address, "\"address\": %ju", (uintmax_t)(uintptr_t)p);
  snprintf(stream, sizeof stream, "\"stream\": %ju", (uintmax_t)(uintptr_t)s);
  ASSERT_TRUE(strstr(json, address) != NULL);
  ASSERT_TRUE(strstr(json, stream) != NULL); /* the stream torch passed, as torch shows it */
  ASSERT_TRUE(strstr(json, "\"action\": \"alloc\"") != NULL);
  free(json);
  c10c_cuda_pluggable_free(p, 3 << 20, 0, s);
  ASSERT_OK(c10c_cuda_record_memory_history(0));
}

TEST(expandable_segments_stitching_and_planning_serve_through_them) {
  ASSERT_OK(c10c_cuda_set_allocator_settings("expandable_segments:True,stitching:True"));
  CUstream s = torch_stream();
  void *p = c10c_cuda_pluggable_malloc(6 << 20, 0, s);
  size_t len = 0;
  c10c_cuda_memory_snapshot(NULL, 0, &len);
  char *json = malloc(len + 1);
  ASSERT_OK(c10c_cuda_memory_snapshot(json, len + 1, NULL));
  ASSERT_TRUE(strstr(json, "\"is_expandable\": true") != NULL);
  free(json);
  c10c_cuda_pluggable_free(p, 6 << 20, 0, s);
  /* planning: the same step again and again is served from the plan after the first */
  ASSERT_OK(c10c_cuda_set_allocator_settings("planning:True"));
  static const size_t sizes[] = {3 << 20, 512, 1 << 20, 7000, 5 << 20};
  for (int step = 0; step < 6; step++) {
    void *live[5];
    for (int i = 0; i < 5; i++) {
      live[i] = c10c_cuda_pluggable_malloc(sizes[i], 0, s);
      ASSERT_TRUE(live[i] != NULL);
    }
    for (int i = 4; i >= 0; i--) c10c_cuda_pluggable_free(live[i], sizes[i], 0, s);
    ASSERT_OK(c10c_cuda_allocator_step(0));
  }
  c10c_memory_stats st = device_stats();
  ASSERT_TRUE(st.plan_rebuilds >= 1);
  ASSERT_TRUE(st.plan_served + st.plan_fallbacks > 0);
  ASSERT_EQ(st.allocation[C10C_STAT_ALL].current, 0);
  ASSERT_OK(c10c_cuda_set_allocator_settings(""));
}

RUN_TESTS(T(blocks_are_allocated_freed_and_reused_per_stream),
          T(failures_are_null_with_the_reason_in_the_last_error),
          T(record_stream_holds_a_block_until_the_other_streams_work_is_done),
          T(snapshots_and_history_show_what_the_entry_points_allocated),
          T(expandable_segments_stitching_and_planning_serve_through_them))
