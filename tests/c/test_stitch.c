/* Stitching (stitching:True with expandable segments, lib/memory/caching_engine.h): a large
 * request that no free block fits is served by mapping free whole pages of its stream's
 * expandable segment into a new address range instead of mapping new pages. Over the simulated
 * device (meson test "stitch") and over the stand-in driver in its real-memory mode (argument
 * "stub", test "stitch_stub": bytes written through a stitched range read back through the
 * source pages). The engine's invariants (c10c__engine_validate) are checked after every step.
 * White-box: links the static library and sees lib/. */
#define _POSIX_C_SOURCE 200809L
#ifndef _WIN32
#include <dlfcn.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c10c/cuda.h"
#include "c10c/replay.h"
#include "c10c/testing.h"
#include "caching_engine.h"
#include "plan_engine.h"
#include "harness.h"
#include "os_compat.h"
#include "sysmem.h"

enum { MiB = 1 << 20, PAGE = 20 << 20 };

static void check(c10c__engine *e, const char *step) {
  char msg[512];
  if (!c10c__engine_validate(e, msg, sizeof msg)) FAIL_AT("after %s: %s", step, msg);
}

static c10c_memory_stats stats_of(c10c__engine *e, int device) {
  c10c_memory_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  ASSERT_OK(c10c__engine_stats(e, device, &s));
  return s;
}

static char *snapshot_of(c10c__engine *e) {
  char *json = NULL;
  size_t len = 0;
  ASSERT_OK(c10c__engine_snapshot(e, &json, &len));
  char *copy = malloc(len + 1);
  memcpy(copy, json, len + 1);
  c10c__free(json);
  return copy;
}

/* The sum of a numeric key's values in the snapshot. */
static long long sum_of(const char *json, const char *key) {
  long long total = 0;
  size_t n = strlen(key);
  for (const char *at = strstr(json, key); at != NULL; at = strstr(at + n, key))
    total += strtoll(at + n, NULL, 10);
  return total;
}

static int count_of(const char *json, const char *text) {
  int n = 0;
  for (const char *at = strstr(json, text); at != NULL; at = strstr(at + 1, text)) n++;
  return n;
}

/* ---- over the simulated device ---- */

static c10c_sim_device *sim(uint64_t capacity, const char *settings) {
  c10c_sim_device *d = NULL;
  ASSERT_OK(c10c_sim_device_new(&d, capacity, settings, 0));
  return d;
}

static c10c_sim_device_stats sim_stats(c10c_sim_device *d) {
  c10c_sim_device_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  ASSERT_OK(c10c_sim_device_get_stats(&s, d));
  return s;
}

static uint64_t sim_malloc(c10c_sim_device *d, size_t size) {
  uint64_t at = 0;
  ASSERT_OK(c10c_sim_device_malloc(&at, d, size, 0));
  check(c10c__sim_device_engine(d), "a malloc");
  return at;
}

static void sim_free(c10c_sim_device *d, uint64_t at) {
  ASSERT_OK(c10c_sim_device_free(d, at));
  check(c10c__sim_device_engine(d), "a free");
}

/* Five one-page blocks, the first and third freed: two free pages, not neighbours. */
static void fragment(c10c_sim_device *d, uint64_t page[5]) {
  for (int i = 0; i < 5; i++) page[i] = sim_malloc(d, PAGE);
  for (int i = 1; i < 5; i++) ASSERT_EQ_U64(page[i], page[0] + (uint64_t)i * PAGE);
  sim_free(d, page[0]);
  sim_free(d, page[2]);
}

/* The same pattern with and without stitching: expandable segments alone map two more pages for
 * a 40 MiB request; stitching maps the two free ones at a new address and maps nothing. */
TEST(stitching_maps_free_pages_where_expandable_segments_map_new_ones) {
  c10c_sim_device *plain = sim((uint64_t)1 << 30, "expandable_segments:True");
  c10c_sim_device *d = sim((uint64_t)1 << 30, "expandable_segments:True,stitching:True");
  uint64_t pages[5], plain_pages[5];
  fragment(plain, plain_pages);
  fragment(d, pages);
  sim_malloc(plain, 2 * PAGE);
  c10c_sim_device_stats p = sim_stats(plain);
  ASSERT_EQ(p.maps, 6); /* map operations: one per malloc */
  ASSERT_EQ(p.peak_reserved, 7 * PAGE);
  ASSERT_EQ(p.num_stitches, 0);
  uint64_t s = sim_malloc(d, 2 * PAGE);
  c10c_sim_device_stats t = sim_stats(d);
  ASSERT_EQ(t.maps, 5);
  ASSERT_EQ(t.reserved, 5 * PAGE);
  ASSERT_EQ(t.peak_reserved, 5 * PAGE);
  ASSERT_EQ(t.allocated, 5 * PAGE);
  ASSERT_EQ(t.num_stitches, 1);
  ASSERT_EQ(t.stitched_bytes, 2 * PAGE);
  ASSERT_EQ(t.peak_stitched_bytes, 2 * PAGE);
  ASSERT_TRUE(s < pages[0] || s >= pages[4] + PAGE); /* a new range */
  c10c_memory_stats m = stats_of(c10c__sim_device_engine(d), 0);
  ASSERT_EQ(m.num_stitches, 1);
  ASSERT_EQ(m.stitched_bytes.current, 2 * PAGE);
  ASSERT_EQ(m.segment[C10C_STAT_ALL].current, 1); /* the stitched range is not a segment */
  ASSERT_EQ(m.num_alloc_retries, 0);
  /* the snapshot: the stitched range with its pages; the source segment's entries without
   * them; every reserved byte once */
  char *json = snapshot_of(c10c__sim_device_engine(d));
  ASSERT_EQ(count_of(json, "\"segment_type\": \"stitched\""), 1);
  ASSERT_EQ(count_of(json, "\"segment_type\": \"large\""), 2); /* b; d and e */
  ASSERT_EQ(sum_of(json, "\"total_size\": "), 5 * PAGE);
  ASSERT_EQ(sum_of(json, "\"allocated_size\": "), 5 * PAGE);
  char pages_text[128];
  snprintf(pages_text, sizeof pages_text, "\"stitched_pages\": [[%llu, %d], [%llu, %d]]",
           (unsigned long long)pages[0], PAGE, (unsigned long long)pages[2], PAGE);
  ASSERT_TRUE(strstr(json, pages_text) != NULL);
  ASSERT_TRUE(strstr(json, "\"stitching\": true") != NULL);
  free(json);
  c10c_sim_device_destroy(plain);
  c10c_sim_device_destroy(d);
}

/* A freed stitched range stays cached (its pages lent) and serves the next request of as many
 * pages at the same address, without stitching again. */
TEST(a_cached_stitched_range_is_reused) {
  c10c_sim_device *d = sim((uint64_t)1 << 30, "expandable_segments:True,stitching:True");
  uint64_t pages[5];
  fragment(d, pages);
  uint64_t s = sim_malloc(d, 2 * PAGE);
  sim_free(d, s);
  c10c_sim_device_stats t = sim_stats(d);
  ASSERT_EQ(t.stitched_bytes, 2 * PAGE); /* cached */
  ASSERT_EQ(t.allocated, 3 * PAGE);
  ASSERT_EQ_U64(sim_malloc(d, 2 * PAGE), s);
  sim_free(d, s);
  ASSERT_EQ_U64(sim_malloc(d, 30 * MiB), s); /* two pages too */
  t = sim_stats(d);
  ASSERT_EQ(t.num_stitches, 1);
  ASSERT_EQ(t.maps, 5);
  ASSERT_EQ(t.allocated, 5 * PAGE); /* the range is used whole */
  sim_free(d, s);
  c10c_sim_device_destroy(d);
}

/* A request its cached stitched range cannot serve but its pages can: the range is dissolved
 * (pages back to their free blocks) and the request served there, with no new page. */
TEST(a_cached_stitched_range_is_dissolved_when_its_pages_are_needed) {
  c10c_sim_device *d = sim((uint64_t)1 << 30, "expandable_segments:True,stitching:True");
  uint64_t pages[5];
  fragment(d, pages);
  uint64_t s = sim_malloc(d, 2 * PAGE);
  sim_free(d, s);
  ASSERT_EQ_U64(sim_malloc(d, PAGE), pages[0]);
  c10c_sim_device_stats t = sim_stats(d);
  ASSERT_EQ(t.stitched_bytes, 0);
  ASSERT_EQ(t.peak_stitched_bytes, 2 * PAGE);
  ASSERT_EQ(t.maps, 5);
  ASSERT_EQ(t.num_stitches, 1);
  /* three pages needed, two free: new pages are mapped after the segment's end, none stitched */
  sim_free(d, pages[0]);
  sim_malloc(d, 3 * PAGE);
  t = sim_stats(d);
  ASSERT_EQ(t.num_stitches, 1);
  ASSERT_EQ(t.maps, 6);
  ASSERT_EQ(t.reserved, 8 * PAGE);
  c10c_sim_device_destroy(d);
}

/* empty_cache dissolves cached stitched ranges and unmaps their pages; a stitched range in use
 * keeps its pages through it. */
TEST(empty_cache_dissolves_cached_stitched_ranges) {
  c10c_sim_device *d = sim((uint64_t)1 << 30, "expandable_segments:True,stitching:True");
  c10c__engine *e = c10c__sim_device_engine(d);
  uint64_t pages[5];
  fragment(d, pages);
  uint64_t s = sim_malloc(d, 2 * PAGE);
  ASSERT_OK(c10c_sim_device_empty_cache(d));
  check(e, "empty_cache with a stitched range in use");
  c10c_sim_device_stats t = sim_stats(d);
  ASSERT_EQ(t.reserved, 5 * PAGE);
  ASSERT_EQ(t.stitched_bytes, 2 * PAGE);
  sim_free(d, s);
  ASSERT_OK(c10c_sim_device_empty_cache(d));
  check(e, "empty_cache");
  t = sim_stats(d);
  ASSERT_EQ(t.reserved, 3 * PAGE);
  ASSERT_EQ(t.stitched_bytes, 0);
  ASSERT_EQ(t.unmaps, 2);
  for (int i = 1; i < 5; i += 2) sim_free(d, pages[i]);
  sim_free(d, pages[4]);
  ASSERT_OK(c10c_sim_device_empty_cache(d));
  check(e, "the last empty_cache");
  ASSERT_EQ(sim_stats(d).reserved, 0);
  char *json = snapshot_of(e);
  ASSERT_TRUE(strstr(json, "\"segments\": []") != NULL);
  free(json);
  c10c_sim_device_destroy(d);
}

/* Only whole free pages are lent: the partial pages of a free block stay in the pool. */
TEST(partial_pages_are_not_stitched) {
  c10c_sim_device *d = sim((uint64_t)1 << 30, "expandable_segments:True,stitching:True");
  uint64_t a = sim_malloc(d, 30 * MiB), b = sim_malloc(d, 30 * MiB);
  uint64_t c = sim_malloc(d, 30 * MiB);
  sim_malloc(d, 10 * MiB); /* the segment's five pages all used */
  ASSERT_EQ_U64(b, a + 30 * MiB);
  sim_free(d, a);
  sim_free(d, c); /* free: [0, 30) and [60, 90) MiB; whole pages [0, 20) and [60, 80) */
  sim_malloc(d, 2 * PAGE);
  c10c_sim_device_stats t = sim_stats(d);
  ASSERT_EQ(t.num_stitches, 1);
  ASSERT_EQ(t.peak_reserved, 5 * PAGE);
  /* the 10 MiB pieces left: [20, 30) is the best fit of a 10 MiB request */
  ASSERT_EQ_U64(sim_malloc(d, 10 * MiB), a + PAGE);
  ASSERT_EQ_U64(sim_malloc(d, 10 * MiB), c + PAGE);
  c10c_sim_device_destroy(d);
}

/* A full device: stitching serves what would need the cache released and pages remapped; a
 * request beyond the free pages and the device fails with the usual error and leaves the state
 * consistent; after it a stitched range's pages are still lent, and once freed they go back. */
TEST(stitching_on_a_full_device_and_out_of_memory) {
  c10c_sim_device *d = sim(5 * (uint64_t)PAGE, "expandable_segments:True,stitching:True");
  c10c__engine *e = c10c__sim_device_engine(d);
  uint64_t pages[5];
  fragment(d, pages);
  uint64_t s = sim_malloc(d, 2 * PAGE);
  ASSERT_EQ(stats_of(e, 0).num_alloc_retries, 0);
  uint64_t none = 0;
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c_sim_device_malloc(&none, d, 2 * PAGE, 0));
  ASSERT_TRUE(strstr(c10c_last_error_message(), "CUDA out of memory. Tried to allocate") != NULL);
  check(e, "an out-of-memory error");
  ASSERT_EQ(sim_stats(d).stitched_bytes, 2 * PAGE);
  sim_free(d, s);
  /* three pages: the two lent ones and one the device does not have */
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c_sim_device_malloc(&none, d, 3 * PAGE, 0));
  check(e, "an out-of-memory error after a dissolution");
  c10c_sim_device_stats t = sim_stats(d);
  ASSERT_EQ(t.stitched_bytes, 0);
  ASSERT_EQ(t.reserved, 3 * PAGE); /* the free pages were released by the retry */
  ASSERT_EQ(t.num_ooms, 2);
  sim_malloc(d, 2 * PAGE);
  c10c_sim_device_destroy(d);
}

/* Host memory running out at each of a stitch's own allocations in turn: the request is served
 * (stitched, or by new pages when the stitch could not be made) and the state stays consistent;
 * the sweep ends once nothing fails. */
TEST(a_stitch_without_host_memory_falls_back_to_new_pages) {
  for (int k = 1;; k++) {
    c10c_sim_device *d = sim((uint64_t)1 << 30, "expandable_segments:True,stitching:True");
    uint64_t pages[5], at = 0;
    fragment(d, pages);
    int64_t before = c10c_testing_allocation_count();
    c10c_testing_fail_allocation(k);
    c10c_status st = c10c_sim_device_malloc(&at, d, 2 * PAGE, 0);
    c10c_testing_fail_allocation(0);
    bool done = c10c_testing_allocation_count() - before < k;
    ASSERT_OK(st);
    check(c10c__sim_device_engine(d), "a stitch without host memory");
    c10c_sim_device_stats t = sim_stats(d);
    ASSERT_EQ(t.reserved, (t.num_stitches ? 5 : 7) * (int64_t)PAGE);
    sim_free(d, at);
    c10c_sim_device_destroy(d);
    if (done) {
      ASSERT_EQ(t.num_stitches, 1);
      break;
    }
    ASSERT_TRUE(k < 32);
  }
}

/* stitching:True needs expandable segments and a backend that maps a page twice. */
TEST(stitching_needs_expandable_segments_and_map_existing) {
  c10c_sim_device *d = NULL;
  ASSERT_STATUS(C10C_STATUS_NOT_IMPLEMENTED, c10c_sim_device_new(&d, 1 << 30, "stitching:True", 0));
  ASSERT_TRUE(strstr(c10c_last_error_message(), "stitching:True needs") != NULL);
  d = sim((uint64_t)1 << 30, "expandable_segments:True,stitching:True");
  c10c__engine *e = c10c__sim_device_engine(d);
  uint64_t pages[5];
  fragment(d, pages);
  sim_free(d, sim_malloc(d, 2 * PAGE)); /* a cached stitched range */
  /* switching stitching off dissolves it: nothing would reuse it */
  ASSERT_OK(c10c_sim_device_configure(d, "expandable_segments:True"));
  check(e, "stitching switched off");
  ASSERT_EQ(sim_stats(d).stitched_bytes, 0);
  ASSERT_STATUS(C10C_STATUS_NOT_IMPLEMENTED,
                c10c_sim_device_configure(d, "expandable_segments:False,stitching:True"));
  c10c_sim_device_destroy(d);
  /* a backend without map_existing */
  c10c__segment_backend backend;
  memset(&backend, 0, sizeof backend);
  ASSERT_OK(c10c__engine_new(&e, backend, 1, &c10c__plan_engine_hooks));
  c10c__device_alloc_config config = c10c__device_alloc_config_default();
  config.stitching = true;
  ASSERT_STATUS(C10C_STATUS_NOT_IMPLEMENTED, c10c__engine_configure(e, &config));
  c10c__engine_destroy(e);
}

/* Pages of several blocks, most pages first, mapped in address order; streams apart. */
TEST(stitching_takes_pages_of_its_own_stream_in_address_order) {
  c10c_sim_device *d = sim((uint64_t)1 << 30, "expandable_segments:True,stitching:True");
  c10c__engine *e = c10c__sim_device_engine(d);
  uint64_t p[8];
  for (int i = 0; i < 8; i++) p[i] = sim_malloc(d, PAGE);
  sim_free(d, p[0]);
  sim_free(d, p[2]);
  sim_free(d, p[3]); /* [2, 4) free: two pages in one block */
  sim_free(d, p[5]);
  uint64_t other = 0;
  ASSERT_OK(c10c_sim_device_malloc(&other, d, 3 * PAGE, 1)); /* stream 1: its own segment */
  check(e, "a request of another stream");
  ASSERT_EQ(sim_stats(d).num_stitches, 0);
  uint64_t s = sim_malloc(d, 3 * PAGE); /* pages 2, 3 (most first) and 0, in address order */
  char *json = snapshot_of(e);
  char text[128];
  snprintf(text, sizeof text, "\"stitched_pages\": [[%llu, %d], [%llu, %d]]",
           (unsigned long long)p[0], PAGE, (unsigned long long)p[2], 2 * PAGE);
  ASSERT_TRUE(strstr(json, text) != NULL);
  free(json);
  sim_free(d, s);
  ASSERT_OK(c10c_sim_device_free(d, other));
  c10c_sim_device_destroy(d);
}

/* ---- over the stand-in driver (real memory) ---- */

static void *stub(const char *symbol) {
  void *handle = dlopen(getenv("C10C_CUDA_DRIVER"), RTLD_NOW | RTLD_NOLOAD);
  void *address = handle ? dlsym(handle, symbol) : NULL;
  if (handle) dlclose(handle);
  return address;
}

static long stub_long(const char *symbol, int arg) {
  long (*fn)(int) = NULL;
  void *address = stub(symbol);
  memcpy(&fn, &address, sizeof address);
  return fn ? fn(arg) : -1;
}

static long stub_calls(const char *entry) {
  long (*calls)(const char *) = NULL;
  void *address = stub("c10c_stub_calls");
  memcpy(&calls, &address, sizeof address);
  return calls ? calls(entry) : -1;
}

static void stub_fail(const char *entry, long k, int error) {
  void (*fail)(const char *, long, int) = NULL;
  void *address = stub("c10c_stub_fail");
  memcpy(&fail, &address, sizeof address);
  if (fail) fail(entry, k, error);
}

static c10c__engine *cuda_engine(void) {
  c10c__engine *e = NULL;
  ASSERT_OK(c10c__cuda_caching_engine(&e));
  return e;
}

static char *cuda_malloc(c10c_allocator *alloc, size_t size) {
  c10c_data_ptr p;
  ASSERT_OK(c10c_allocator_allocate(&p, alloc, size));
  check(cuda_engine(), "a malloc");
  return p.data;
}

static void cuda_free(char *ptr) {
  ASSERT_OK(c10c__engine_free(cuda_engine(), ptr));
  check(cuda_engine(), "a free");
}

/* The fragmented pattern over the driver's virtual memory calls: two cuMemMap of existing pages,
 * no cuMemCreate; bytes written through the stitched range are the source pages' bytes; the
 * alias is unmapped (not released) when dissolved; nothing leaks or is released twice. */
TEST(stitched_ranges_alias_the_source_pages_memory) {
  c10c_allocator *alloc = NULL;
  ASSERT_OK(c10c_allocator_get(&alloc, C10C_DEVICE_TYPE_CUDA));
  ASSERT_OK(c10c_cuda_set_allocator_settings("expandable_segments:True,stitching:True"));
  c10c__engine *e = cuda_engine();
  char *p[5];
  for (int i = 0; i < 5; i++) p[i] = cuda_malloc(alloc, PAGE);
  memset(p[1], 0x11, PAGE);
  memset(p[3], 0x33, PAGE);
  cuda_free(p[0]);
  cuda_free(p[2]);
  long creates = stub_calls("cuMemCreate"), maps = stub_calls("cuMemMap");
  long used = stub_long("c10c_stub_used", 0);
  char *s = cuda_malloc(alloc, 2 * PAGE);
  ASSERT_EQ(stub_calls("cuMemCreate"), creates);
  ASSERT_EQ(stub_calls("cuMemMap") - maps, 2);
  ASSERT_EQ(stub_long("c10c_stub_used", 0), used);
  memset(s, 0xA0, PAGE);
  memset(s + PAGE, 0xC2, PAGE);
  ASSERT_EQ((unsigned char)p[0][0], 0xA0);
  ASSERT_EQ((unsigned char)p[0][PAGE - 1], 0xA0);
  ASSERT_EQ((unsigned char)p[2][0], 0xC2);
  ASSERT_EQ((unsigned char)p[2][PAGE - 1], 0xC2);
  ASSERT_EQ((unsigned char)p[1][0], 0x11); /* the neighbours untouched */
  ASSERT_EQ((unsigned char)p[3][PAGE - 1], 0x33);
  c10c_memory_stats m = stats_of(e, 0);
  ASSERT_EQ(m.num_stitches, 1);
  ASSERT_EQ(m.reserved_bytes[C10C_STAT_ALL].current, 5 * PAGE);
  size_t len = 0;
  ASSERT_STATUS(C10C_STATUS_BUFFER_TOO_SMALL, c10c_cuda_memory_snapshot(NULL, 0, &len));
  char *json = malloc(len + 1);
  ASSERT_OK(c10c_cuda_memory_snapshot(json, len + 1, NULL));
  ASSERT_EQ(count_of(json, "\"segment_type\": \"stitched\""), 1);
  ASSERT_EQ(sum_of(json, "\"total_size\": "), 5 * PAGE);
  free(json);
  /* cached, reused, then dissolved for a one-page request: the page is p[0] again, its bytes
   * those written through the stitched range */
  cuda_free(s);
  ASSERT_TRUE(cuda_malloc(alloc, 2 * PAGE) == s);
  cuda_free(s);
  long unmaps = stub_calls("cuMemUnmap"), releases = stub_calls("cuMemRelease");
  ASSERT_TRUE(cuda_malloc(alloc, PAGE) == p[0]);
  ASSERT_EQ(stub_calls("cuMemUnmap") - unmaps, 2);
  ASSERT_EQ(stub_calls("cuMemRelease"), releases);
  ASSERT_EQ((unsigned char)p[0][1], 0xA0);
  ASSERT_EQ(stub_long("c10c_stub_violations", 0), 0);
  /* a failed map of an existing page: the stitch is undone, new pages serve the request */
  cuda_free(p[0]);
  stub_fail("cuMemMap", 2, 2);
  creates = stub_calls("cuMemCreate");
  s = cuda_malloc(alloc, 2 * PAGE);
  ASSERT_EQ(stub_calls("cuMemCreate") - creates, 2);
  ASSERT_EQ(stats_of(e, 0).num_stitches, 1);
  ASSERT_EQ(stats_of(e, 0).stitched_bytes.current, 0);
  cuda_free(s);
  /* a stitched range in use at empty_cache keeps its pages; once freed everything goes */
  s = cuda_malloc(alloc, 2 * PAGE); /* the two new pages, now free */
  ASSERT_OK(c10c_allocator_empty_cache(alloc));
  check(e, "empty_cache");
  cuda_free(s);
  cuda_free(p[1]);
  cuda_free(p[3]);
  cuda_free(p[4]);
  ASSERT_OK(c10c_allocator_empty_cache(alloc));
  check(e, "the last empty_cache");
  ASSERT_EQ(stub_long("c10c_stub_used", 0), 0);
  ASSERT_EQ(stub_long("c10c_stub_mapped_bytes", 0), 0);
  ASSERT_EQ(stub_long("c10c_stub_violations", 0), 0);
  ASSERT_OK(c10c_cuda_set_allocator_settings(""));
}

static const test_case sim_tests[] = {
    T(stitching_maps_free_pages_where_expandable_segments_map_new_ones),
    T(a_cached_stitched_range_is_reused),
    T(a_cached_stitched_range_is_dissolved_when_its_pages_are_needed),
    T(empty_cache_dissolves_cached_stitched_ranges),
    T(partial_pages_are_not_stitched),
    T(stitching_on_a_full_device_and_out_of_memory),
    T(a_stitch_without_host_memory_falls_back_to_new_pages),
    T(stitching_needs_expandable_segments_and_map_existing),
    T(stitching_takes_pages_of_its_own_stream_in_address_order)};

static const test_case stub_tests[] = {T(stitched_ranges_alias_the_source_pages_memory)};

int main(int argc, char **argv) {
  bool on_stub = argc > 1 && strcmp(argv[1], "stub") == 0;
  const test_case *tests = on_stub ? stub_tests : sim_tests;
  size_t count =
      on_stub ? sizeof stub_tests / sizeof stub_tests[0] : sizeof sim_tests / sizeof sim_tests[0];
  for (size_t i = 0; i < count; i++) {
    test_current_failed = 0;
    tests[i].fn();
    printf("%s %s\n", test_current_failed ? "FAIL" : "ok  ", tests[i].name);
    test_failures += test_current_failed;
  }
  printf("%d passed, %d failed\n", (int)count - test_failures, test_failures);
  return test_failures ? 1 : 0;
}
