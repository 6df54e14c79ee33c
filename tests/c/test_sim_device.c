/* The simulated device (include/c10c/replay.h): PyTorch's segment sizes and reuse over
 * fabricated addresses, expandable pages, capacity, and bad input as errors. */
#include <string.h>

#include "harness.h"

#define MIB ((size_t)1 << 20)

/* A device large enough that one big allocation uses no memory of the test's own: 40 GiB with a
 * 30 GiB allocation where the address space holds it, 1.5 GiB with 1 GiB on a 32-bit target
 * (whose simulated device holds at most SIZE_MAX / 2 bytes; bad_input_is_an_error checks that a
 * larger one is refused). */
#if SIZE_MAX < UINT64_MAX
#define DEVICE_BYTES ((uint64_t)3 << 29)
#define BIG_BYTES    ((size_t)1 << 30)
#else
#define DEVICE_BYTES ((uint64_t)40 << 30)
#define BIG_BYTES    ((size_t)30 << 30)
#endif

static c10c_sim_device_stats stats_of(c10c_sim_device *d) {
  c10c_sim_device_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  c10c_status st = c10c_sim_device_get_stats(&s, d);
  if (st != C10C_STATUS_OK) memset(&s, 0, sizeof s);
  return s;
}

TEST(segments_as_pytorchs_caching_allocator) {
  c10c_sim_device *d = NULL;
  ASSERT_OK(c10c_sim_device_new(&d, DEVICE_BYTES, NULL, 0));
  uint64_t a = 0, b = 0, c = 0, big = 0;
  ASSERT_OK(c10c_sim_device_malloc(&a, d, 1000, 0));    /* a 2 MiB small segment */
  ASSERT_OK(c10c_sim_device_malloc(&b, d, 3 * MIB, 0)); /* a 20 MiB large one */
  ASSERT_OK(c10c_sim_device_malloc(&c, d, 5 * MIB, 0)); /* split from it */
  ASSERT_EQ_U64(c, b + 3 * MIB);
  ASSERT_OK(c10c_sim_device_malloc(&big, d, BIG_BYTES, 7)); /* no memory used */
  c10c_sim_device_stats s = stats_of(d);
  ASSERT_EQ(s.device_mallocs, 3);
  ASSERT_EQ(s.reserved, (int64_t)(22 * MIB + BIG_BYTES));
  ASSERT_EQ(s.allocated, (int64_t)(1024 + 8 * MIB + BIG_BYTES));
  ASSERT_OK(c10c_sim_device_free(d, big));
  ASSERT_OK(c10c_sim_device_free(d, b));
  uint64_t again = 0;
  ASSERT_OK(c10c_sim_device_malloc(&again, d, 3 * MIB, 0)); /* the cache serves it */
  ASSERT_EQ_U64(again, b);
  ASSERT_OK(c10c_sim_device_empty_cache(d)); /* the big segment goes back */
  s = stats_of(d);
  ASSERT_EQ(s.device_mallocs, 3);
  ASSERT_EQ(s.device_frees, 1);
  ASSERT_EQ(s.reserved, (int64_t)(22 * MIB));
  ASSERT_EQ(s.peak_reserved, (int64_t)(22 * MIB + BIG_BYTES));
  ASSERT_OK(c10c_sim_device_reset_peaks(d));
  ASSERT_EQ(stats_of(d).peak_reserved, (int64_t)(22 * MIB));
  c10c_sim_device_destroy(d);
}

TEST(descending_addresses) {
  c10c_sim_device *d = NULL;
  ASSERT_OK(c10c_sim_device_new(&d, (uint64_t)1 << 30, "", C10C_SIM_DESCENDING));
  uint64_t a = 0, b = 0;
  ASSERT_OK(c10c_sim_device_malloc(&a, d, 30 * MIB, 0));
  ASSERT_OK(c10c_sim_device_malloc(&b, d, 30 * MIB, 0));
  ASSERT_TRUE(b < a);
  c10c_sim_device_destroy(d);
}

TEST(expandable_segments_map_pages) {
  c10c_sim_device *d = NULL;
  ASSERT_OK(c10c_sim_device_new(&d, (uint64_t)1 << 30, "expandable_segments:True", 0));
  uint64_t a = 0, b = 0;
  ASSERT_OK(c10c_sim_device_malloc(&a, d, 30 * MIB, 0)); /* two 20 MiB pages */
  ASSERT_OK(c10c_sim_device_malloc(&b, d, 5 * MIB, 0));  /* in the second page's rest */
  ASSERT_EQ_U64(b, a + 30 * MIB);
  c10c_sim_device_stats s = stats_of(d);
  ASSERT_EQ(s.maps, 1); /* one run of pages */
  ASSERT_EQ(s.device_mallocs, 0);
  ASSERT_EQ(s.reserved, (int64_t)(40 * MIB));
  ASSERT_OK(c10c_sim_device_free(d, a));
  ASSERT_OK(c10c_sim_device_free(d, b));
  ASSERT_OK(c10c_sim_device_empty_cache(d));
  s = stats_of(d);
  ASSERT_EQ(s.unmaps, 1);
  ASSERT_EQ(s.reserved, 0);
  c10c_sim_device_destroy(d);
}

TEST(capacity_is_enforced_with_pytorchs_message) {
  c10c_sim_device *d = NULL;
  ASSERT_OK(c10c_sim_device_new(&d, 100 * MIB, NULL, 0));
  uint64_t a = 0, b = 0;
  ASSERT_OK(c10c_sim_device_malloc(&a, d, 60 * MIB, 0));
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c_sim_device_malloc(&b, d, 60 * MIB, 0));
  ASSERT_TRUE(strstr(c10c_last_error_message(), "Tried to allocate 60.00 MiB") != NULL);
  ASSERT_EQ(stats_of(d).num_ooms, 1);
  ASSERT_OK(c10c_sim_device_free(d, a));
  ASSERT_OK(c10c_sim_device_malloc(&b, d, 60 * MIB, 0)); /* the cache released for it */
  c10c_sim_device_destroy(d);
}

TEST(bad_input_is_an_error) {
  c10c_sim_device *d = NULL;
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_sim_device_new(NULL, 1, NULL, 0));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_sim_device_new(&d, 0, NULL, 0));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_sim_device_new(&d, 1, NULL, 2));
#if SIZE_MAX < UINT64_MAX
  /* A capacity beyond half the address space is refused, not truncated. */
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_sim_device_new(&d, (uint64_t)40 << 30, NULL, 0));
  ASSERT_ERROR_MESSAGE(
      "a simulated device needs a capacity from 1 byte to 2147483647 bytes, not 42949672960");
  ASSERT_TRUE(d == NULL);
#endif
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_sim_device_new(&d, 1 << 30, "foo:1", 0));
  ASSERT_ERROR_MESSAGE("Unrecognized key 'foo' in CUDA allocator config.");
  ASSERT_TRUE(d == NULL);
  ASSERT_OK(c10c_sim_device_new(&d, 1 << 30, "max_split_size_mb:40", 0));
  uint64_t a = 0;
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_sim_device_malloc(&a, NULL, 1, 0));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_sim_device_malloc(NULL, d, 1, 0));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_sim_device_free(d, 12345));
  ASSERT_OK(c10c_sim_device_free(d, 0));
  c10c_sim_device_stats s = {.struct_size = 8};
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_sim_device_get_stats(&s, d));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_sim_device_empty_cache(NULL));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_sim_device_reset_peaks(NULL));
  ASSERT_OK(c10c_sim_device_malloc(&a, d, 3 * MIB, 0));
  c10c_sim_device_destroy(d); /* with a block still allocated */
  c10c_sim_device_destroy(NULL);
}

TEST(memory_fraction_caps_reserved_bytes) {
  c10c_sim_device *d = NULL;
  ASSERT_OK(c10c_sim_device_new(&d, 1000 * MIB, "garbage_collection_threshold:0.5", 0));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_sim_device_set_memory_fraction(d, 1.5));
  ASSERT_ERROR_MESSAGE("Invalid fraction value: 1.5. Allowed range: 0~1");
  ASSERT_OK(c10c_sim_device_set_memory_fraction(d, 0.1)); /* 100 MiB */
  uint64_t a = 0, b = 0;
  ASSERT_OK(c10c_sim_device_malloc(&a, d, 60 * MIB, 0));
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c_sim_device_malloc(&b, d, 60 * MIB, 0));
  ASSERT_OK(c10c_sim_device_free(d, a));
  ASSERT_OK(c10c_sim_device_malloc(&b, d, 80 * MIB, 0)); /* the 60 MiB segment released */
  ASSERT_EQ(stats_of(d).reserved, (int64_t)(80 * MIB));
  c10c_sim_device_destroy(d);
  /* 0.6 x 100 MiB is 60 MiB on every target: the double product is rounded as a double before
   * it becomes a size (x87's 80 bits would truncate 62914559.99... to a byte less) */
  ASSERT_OK(c10c_sim_device_new(&d, 100 * MIB, NULL, 0));
  ASSERT_OK(c10c_sim_device_set_memory_fraction(d, 0.6));
  ASSERT_OK(c10c_sim_device_malloc(&a, d, 60 * MIB, 0));
  ASSERT_OK(c10c_sim_device_free(d, a));
  c10c_sim_device_destroy(d);
}

TEST(settings_change_from_now_on) {
  c10c_sim_device *d = NULL;
  ASSERT_OK(c10c_sim_device_new(&d, (uint64_t)1 << 30, NULL, 0));
  uint64_t a = 0, b = 0;
  ASSERT_OK(c10c_sim_device_malloc(&a, d, 30 * MIB, 0)); /* a fixed segment */
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_sim_device_configure(d, "foo:1"));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_sim_device_configure(NULL, ""));
  ASSERT_OK(c10c_sim_device_configure(d, "expandable_segments:True"));
  ASSERT_OK(c10c_sim_device_malloc(&b, d, 30 * MIB, 0)); /* pages of an expandable one */
  c10c_sim_device_stats s = stats_of(d);
  ASSERT_EQ(s.device_mallocs, 1);
  ASSERT_EQ(s.maps, 1);
  ASSERT_EQ(s.reserved, (int64_t)(70 * MIB));
  c10c_sim_device_destroy(d);
}

RUN_TESTS(T(segments_as_pytorchs_caching_allocator), T(descending_addresses),
          T(expandable_segments_map_pages), T(capacity_is_enforced_with_pytorchs_message),
          T(bad_input_is_an_error), T(memory_fraction_caps_reserved_bytes),
          T(settings_change_from_now_on))
