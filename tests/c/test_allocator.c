/* The allocator ABI (host vtables, the registry's priority rule), the built-in CPU allocators,
 * their statistics, configuration, empty_cache and out-of-memory behaviour. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#ifndef _WIN32
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "harness.h"
#include "os_compat.h"

/* A request the test's host pool refuses, and its decimal text: 2 TiB on a 64-bit target, 1.5 GiB
 * (below PTRDIFF_MAX, which c10c_allocator_allocate refuses itself) on a 32-bit one. */
#if SIZE_MAX > UINT32_MAX
#define POOL_LIMIT    ((size_t)1 << 40)
#define TOO_BIG       ((size_t)1 << 41)
#define TOO_BIG_BYTES "2199023255552"
#else
#define POOL_LIMIT    ((size_t)1 << 30)
#define TOO_BIG       ((size_t)3 << 29)
#define TOO_BIG_BYTES "1610612736"
#endif

/* A host allocator that counts its calls. */
typedef struct host_pool {
  int allocs, frees, copies, destroyed, empties, resets;
} host_pool;

typedef struct host_block {
  host_pool *pool;
  void *raw;
} host_block;

static void host_free(void *ctx) {
  host_block *b = ctx;
  b->pool->frees++;
  compat_aligned_free(b->raw);
  free(b);
}

static c10c_status host_allocate(c10c_data_ptr *out, void *self, size_t nbytes, size_t alignment) {
  host_pool *pool = self;
  if (nbytes == 0) return C10C_STATUS_OK;
  if (nbytes > POOL_LIMIT) return C10C_STATUS_OUT_OF_MEMORY;
  host_block *b = malloc(sizeof *b);
  void *raw = NULL;
  if (b == NULL || posix_memalign(&raw, alignment, nbytes) != 0) {
    free(b);
    return C10C_STATUS_OUT_OF_MEMORY;
  }
  pool->allocs++;
  b->pool = pool;
  b->raw = raw;
  out->data = raw;
  out->ctx = b;
  out->deleter = host_free;
  return C10C_STATUS_OK;
}

static void host_copy(void *self, void *dst, const void *src, size_t n) {
  ((host_pool *)self)->copies++;
  memcpy(dst, src, n);
}

static void host_destroy(void *self) { ((host_pool *)self)->destroyed++; }
static void host_empty(void *self) { ((host_pool *)self)->empties++; }
static void host_reset(void *self) { ((host_pool *)self)->resets++; }

static c10c_allocator_vtable host_vtable(void) {
  c10c_allocator_vtable vt;
  memset(&vt, 0, sizeof vt);
  vt.struct_size = sizeof vt;
  vt.allocate = host_allocate;
  vt.copy = host_copy;
  vt.destroy = host_destroy;
  vt.empty_cache = host_empty;
  vt.reset_peak_stats = host_reset;
  vt.name = "host_pool";
  return vt;
}

TEST(host_allocator_serves_storages_and_frees_through_its_deleter) {
  host_pool pool = {0};
  c10c_allocator_vtable vt = host_vtable();
  c10c_allocator *a;
  ASSERT_OK(c10c_allocator_new(&a, &vt, &pool, C10C_DEVICE_TYPE_CPU));
  ASSERT_STR_EQ(c10c_allocator_name(a), "host_pool");
  ASSERT_EQ(c10c_allocator_device_type(a), C10C_DEVICE_TYPE_CPU);
  c10c_storage *s;
  ASSERT_OK(c10c_storage_new(&s, 100, a, C10C_DEVICE_TYPE_CPU, true));
  ASSERT_EQ(pool.allocs, 1);
  ASSERT_OK(c10c_storage_resize(s, 200)); /* new block, prefix copied with the host's copy */
  ASSERT_EQ(pool.allocs, 2);
  ASSERT_EQ(pool.frees, 1);
  ASSERT_EQ(pool.copies, 1);
  c10c_allocator_release(a); /* the storage still holds a reference */
  ASSERT_EQ(pool.destroyed, 0);
  c10c_storage_release(s);
  ASSERT_EQ(pool.frees, 2);
  ASSERT_EQ(pool.destroyed, 1);
}

TEST(host_allocator_failures_are_reported_with_its_name) {
  host_pool pool = {0};
  c10c_allocator_vtable vt = host_vtable();
  c10c_allocator *a;
  ASSERT_OK(c10c_allocator_new(&a, &vt, &pool, C10C_DEVICE_TYPE_CPU));
  c10c_data_ptr dp;
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c_allocator_allocate(&dp, a, TOO_BIG));
  ASSERT_ERROR_MESSAGE("allocator 'host_pool' failed to allocate " TOO_BIG_BYTES
                       " bytes (out of memory)");
  ASSERT_TRUE(dp.data == NULL && dp.ctx == NULL);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_allocator_allocate(&dp, a, SIZE_MAX));
  ASSERT_OK(c10c_allocator_empty_cache(a));
  ASSERT_OK(c10c_allocator_reset_peak_stats(a));
  ASSERT_EQ(pool.empties, 1);
  ASSERT_EQ(pool.resets, 1);
  c10c_memory_stats stats;
  stats.struct_size = sizeof stats;
  ASSERT_OK(c10c_allocator_get_stats(&stats, a)); /* no get_stats: all zero */
  ASSERT_EQ(stats.allocation[C10C_STAT_ALL].current, 0);
  c10c_allocator_release(a);
}

TEST(vtable_is_validated) {
  c10c_allocator_vtable vt = host_vtable();
  c10c_allocator *a = NULL;
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_allocator_new(&a, NULL, NULL, 0));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_allocator_new(NULL, &vt, NULL, 0));
  vt.struct_size = 4;
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_allocator_new(&a, &vt, NULL, 0));
  vt = host_vtable();
  vt.allocate = NULL;
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_allocator_new(&a, &vt, NULL, 0));
  vt = host_vtable();
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_allocator_new(&a, &vt, NULL, 21));
  /* A vtable from a newer host (larger struct_size) is accepted; unknown fields are ignored. */
  struct {
    c10c_allocator_vtable vt;
    void *future_field;
  } newer;
  memset(&newer, 0, sizeof newer);
  newer.vt = host_vtable();
  newer.vt.struct_size = sizeof newer;
  host_pool pool = {0};
  ASSERT_OK(c10c_allocator_new(&a, &newer.vt, &pool, C10C_DEVICE_TYPE_CPU));
  c10c_allocator_release(a);
  ASSERT_EQ(pool.destroyed, 1);
  /* An older host: only allocate known; the rest reads as absent. */
  c10c_allocator_vtable old = host_vtable();
  old.struct_size = (uint32_t)(offsetof(c10c_allocator_vtable, allocate) + sizeof(void *));
  ASSERT_OK(c10c_allocator_new(&a, &old, &pool, C10C_DEVICE_TYPE_CPU));
  ASSERT_STR_EQ(c10c_allocator_name(a), "custom");
  c10c_allocator_release(a);
  ASSERT_EQ(pool.destroyed, 1); /* destroy was beyond its struct_size */
  c10c_allocator_release(NULL);
  ASSERT_TRUE(c10c_allocator_retain(NULL) == NULL);
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_allocator_allocate(NULL, NULL, 1));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_allocator_empty_cache(NULL));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_allocator_reset_peak_stats(NULL));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_allocator_get_stats(NULL, NULL));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_allocator_copy(NULL, NULL, NULL, 1));
  c10c_memory_stats tiny;
  tiny.struct_size = 8;
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_allocator_get_stats(&tiny, c10c_cpu_caching_allocator()));
}

TEST(registry_follows_c10s_priority_rule) {
  c10c_allocator *got;
  ASSERT_OK(c10c_allocator_get(&got, C10C_DEVICE_TYPE_CPU));
  ASSERT_TRUE(got == c10c_cpu_caching_allocator());
  ASSERT_STATUS(C10C_STATUS_UNAVAILABLE, c10c_allocator_get(&got, C10C_DEVICE_TYPE_XLA));
  ASSERT_ERROR_MESSAGE("Allocator for XLA is not set.");
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_allocator_get(&got, 30));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_allocator_get(NULL, 0));
  bool installed = true;
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_allocator_set(&installed, NULL, 0));
  ASSERT_ERROR_MESSAGE("c10c_allocator_set: argument 'allocator' must not be NULL");
  ASSERT_TRUE(!installed);
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER,
                c10c_allocator_set(NULL, c10c_cpu_caching_allocator(), 0));
  ASSERT_ERROR_MESSAGE("c10c_allocator_set: argument 'out_installed' must not be NULL");

  host_pool pool_high = {0}, pool_low = {0};
  c10c_allocator_vtable vt = host_vtable();
  c10c_allocator *high, *low;
  ASSERT_OK(c10c_allocator_new(&high, &vt, &pool_high, C10C_DEVICE_TYPE_MTIA));
  ASSERT_OK(c10c_allocator_new(&low, &vt, &pool_low, C10C_DEVICE_TYPE_MTIA));
  ASSERT_OK(c10c_allocator_set(&installed, high, 5));
  ASSERT_TRUE(installed);
  /* lower priority: c10 keeps the installed one; reported through out_installed, not an error */
  installed = true;
  ASSERT_OK(c10c_allocator_set(&installed, low, 4));
  ASSERT_TRUE(!installed);
  ASSERT_OK(c10c_allocator_get(&got, C10C_DEVICE_TYPE_MTIA));
  ASSERT_TRUE(got == high);
  c10c_allocator_release(got); /* a new reference */
  /* a storage of the installed allocator keeps it alive after it is replaced */
  c10c_storage *s;
  ASSERT_OK(c10c_storage_new(&s, 64, NULL, C10C_DEVICE_TYPE_MTIA, false));
  ASSERT_TRUE(c10c_storage_allocator(s) == high);
  ASSERT_EQ(c10c_storage_device(s).type, C10C_DEVICE_TYPE_MTIA);
  c10c_allocator_release(high);                      /* the registry and the storage keep theirs */
  ASSERT_OK(c10c_allocator_set(&installed, low, 5)); /* equal priority replaces */
  ASSERT_TRUE(installed);
  ASSERT_EQ(pool_high.destroyed, 0); /* the storage still uses it */
  ASSERT_OK(c10c_allocator_get(&got, C10C_DEVICE_TYPE_MTIA));
  ASSERT_TRUE(got == low);
  c10c_allocator_release(got);
  c10c_storage_release(s);
  ASSERT_EQ(pool_high.frees, 1);
  ASSERT_EQ(pool_high.destroyed, 1); /* after its last storage, exactly once */
  c10c_allocator_release(low);       /* the registry keeps its own reference */
  ASSERT_EQ(pool_low.destroyed, 0);
  ASSERT_OK(c10c_allocator_get(&got, C10C_DEVICE_TYPE_MTIA));
  ASSERT_TRUE(got == low);
  ASSERT_STR_EQ(c10c_allocator_name(got), "host_pool");
  c10c_allocator_release(got);
  ASSERT_EQ(pool_high.destroyed, 1);
  ASSERT_EQ(pool_low.destroyed, 0);
}

TEST(a_replaced_allocator_is_destroyed_once_its_last_user_goes) {
  /* replaced while a host reference, a c10c_allocator_get result and two storages hold it: its
   * destroy runs exactly once, when the last of them goes, whatever the order */
  host_pool first = {0}, second = {0}, third = {0};
  c10c_allocator_vtable vt = host_vtable();
  char *name = strdup("replaced_pool");
  vt.name = name;
  c10c_allocator *a, *b, *c, *got;
  ASSERT_OK(c10c_allocator_new(&a, &vt, &first, C10C_DEVICE_TYPE_VE));
  memset(name, 'x', strlen(name)); /* the host reuses and frees its string at once */
  free(name);
  vt.name = "host_pool";
  ASSERT_OK(c10c_allocator_new(&b, &vt, &second, C10C_DEVICE_TYPE_VE));
  ASSERT_OK(c10c_allocator_new(&c, &vt, &third, C10C_DEVICE_TYPE_VE));
  bool installed = false;
  ASSERT_OK(c10c_allocator_set(&installed, a, 100));
  ASSERT_TRUE(installed);
  c10c_storage *s1, *s2;
  ASSERT_OK(c10c_storage_new(&s1, 16, NULL, C10C_DEVICE_TYPE_VE, false));
  ASSERT_OK(c10c_storage_new(&s2, 32, NULL, C10C_DEVICE_TYPE_VE, true));
  ASSERT_OK(c10c_allocator_get(&got, C10C_DEVICE_TYPE_VE));
  ASSERT_STR_EQ(c10c_allocator_name(got), "replaced_pool"); /* the copy, through the registry */
  ASSERT_OK(c10c_allocator_set(&installed, b, 100));
  ASSERT_TRUE(installed);
  c10c_allocator_release(a);
  ASSERT_EQ(first.destroyed, 0);
  c10c_storage_release(s1);
  ASSERT_EQ(first.destroyed, 0);
  ASSERT_OK(c10c_storage_resize(s2, 64)); /* still served by the allocator that made it */
  ASSERT_EQ(first.allocs, 3);
  ASSERT_STR_EQ(c10c_allocator_name(c10c_storage_allocator(s2)), "replaced_pool");
  c10c_allocator_release(got);
  ASSERT_EQ(first.destroyed, 0);
  c10c_storage_release(s2);
  ASSERT_EQ(first.frees, 3);
  ASSERT_EQ(first.destroyed, 1);
  /* an allocator replaced with no user left but the registry goes at once */
  c10c_allocator_release(b);
  ASSERT_EQ(second.destroyed, 0);
  ASSERT_OK(c10c_allocator_set(&installed, c, 100));
  ASSERT_EQ(second.destroyed, 1);
  c10c_allocator_release(c);
  ASSERT_EQ(first.destroyed, 1);
  ASSERT_EQ(second.destroyed, 1);
  ASSERT_EQ(third.destroyed, 0); /* installed: the registry keeps it for the process */
}

static int64_t stat_current(c10c_allocator *a, size_t which) {
  c10c_memory_stats s;
  s.struct_size = sizeof s;
  c10c_allocator_get_stats(&s, a);
  switch (which) {
    case 0: return s.allocated_bytes[C10C_STAT_ALL].current;
    case 1: return s.allocation[C10C_STAT_ALL].current;
    case 2: return s.reserved_bytes[C10C_STAT_ALL].current;
    default: return s.requested_bytes[C10C_STAT_LARGE_POOL].current;
  }
}

TEST(caching_allocator_statistics_follow_allocations) {
  c10c_allocator *a = c10c_cpu_caching_allocator();
  c10c_allocator_empty_cache(a);
  int64_t bytes0 = stat_current(a, 0), count0 = stat_current(a, 1);
  c10c_data_ptr small, large;
  ASSERT_OK(c10c_allocator_allocate(&small, a, 100));    /* class 128 */
  ASSERT_OK(c10c_allocator_allocate(&large, a, 300000)); /* class 327680 */
  ASSERT_EQ(stat_current(a, 0) - bytes0, 128 + 327680);
  ASSERT_EQ(stat_current(a, 1) - count0, 2);
  ASSERT_EQ(stat_current(a, 3), 300000);
  ASSERT_TRUE(stat_current(a, 2) >= stat_current(a, 0));
  c10c_memory_stats s;
  s.struct_size = sizeof s;
  ASSERT_OK(c10c_allocator_get_stats(&s, a));
  ASSERT_EQ(s.allocation[C10C_STAT_LARGE_POOL].current, 1);
  ASSERT_TRUE(s.allocated_bytes[C10C_STAT_ALL].peak >= s.allocated_bytes[C10C_STAT_ALL].current);
  ASSERT_EQ(s.active_bytes[C10C_STAT_ALL].current, s.allocated_bytes[C10C_STAT_ALL].current);
  ASSERT_TRUE(s.num_device_alloc >= 1);
  c10c_data_ptr_free(&small);
  c10c_data_ptr_free(&large);
  c10c_data_ptr_free(&large); /* cleared: a second free does nothing */
  ASSERT_EQ(stat_current(a, 0), bytes0);
  ASSERT_EQ(stat_current(a, 1), count0);
  /* the large block stays cached: reserved above allocated until empty_cache */
  ASSERT_TRUE(stat_current(a, 2) > stat_current(a, 0));
  ASSERT_OK(c10c_allocator_reset_peak_stats(a));
  ASSERT_OK(c10c_allocator_get_stats(&s, a));
  ASSERT_EQ(s.allocated_bytes[C10C_STAT_LARGE_POOL].peak, 0);
  ASSERT_OK(c10c_allocator_empty_cache(a));
  ASSERT_OK(c10c_allocator_get_stats(&s, a));
  ASSERT_EQ(s.reserved_bytes[C10C_STAT_LARGE_POOL].current, 0);
}

TEST(cached_large_blocks_are_reused) {
  c10c_allocator *a = c10c_cpu_caching_allocator();
  c10c_data_ptr p;
  ASSERT_OK(c10c_allocator_allocate(&p, a, 3 << 20));
  void *first = p.data;
  c10c_data_ptr_free(&p);
  c10c_memory_stats before, after;
  before.struct_size = after.struct_size = sizeof before;
  c10c_allocator_get_stats(&before, a);
  ASSERT_OK(c10c_allocator_allocate(&p, a, 3 << 20));
  c10c_allocator_get_stats(&after, a);
  ASSERT_TRUE(p.data == first);
  ASSERT_EQ(after.num_device_alloc, before.num_device_alloc);
  c10c_data_ptr_free(&p);
}

TEST(summary_looks_like_torchs) {
  char buf[8192];
  size_t len = 0;
  ASSERT_OK(c10c_allocator_summary(buf, sizeof buf, &len, c10c_cpu_caching_allocator()));
  ASSERT_EQ(len, strlen(buf));
  ASSERT_TRUE(strstr(buf, "libc10c memory summary, allocator cpu_caching (CPU)") != NULL);
  ASSERT_TRUE(strstr(buf, "| Allocated memory      |") != NULL);
  ASSERT_TRUE(strstr(buf, "|       from small pool |") != NULL);
  ASSERT_TRUE(strstr(buf, "| Oversize segments     |") != NULL);
  char small[16];
  ASSERT_STATUS(C10C_STATUS_BUFFER_TOO_SMALL,
                c10c_allocator_summary(small, sizeof small, &len, c10c_cpu_caching_allocator()));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_allocator_summary(buf, sizeof buf, NULL, NULL));
}

TEST(configuration_rejects_unknown_keys_and_bad_values) {
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cpu_caching_allocator_configure("foo:1"));
  ASSERT_ERROR_MESSAGE("Unrecognized key 'foo' in CPU allocator config.");
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_cpu_caching_allocator_configure("max_cached_mb:-1"));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_cpu_caching_allocator_configure("huge_pages:yes"));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cpu_caching_allocator_configure("nocolon"));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cpu_caching_allocator_configure(NULL));
  ASSERT_OK(c10c_cpu_caching_allocator_configure(""));
  /* max_cached_mb:0 caches nothing: a freed large block goes straight back to the system */
  ASSERT_OK(c10c_cpu_caching_allocator_configure("max_cached_mb:0,huge_pages:False"));
  c10c_allocator *a = c10c_cpu_caching_allocator();
  c10c_data_ptr p;
  ASSERT_OK(c10c_allocator_allocate(&p, a, 1 << 20));
  c10c_data_ptr_free(&p);
  c10c_memory_stats s;
  s.struct_size = sizeof s;
  c10c_allocator_get_stats(&s, a);
  ASSERT_EQ(s.reserved_bytes[C10C_STAT_LARGE_POOL].current, 0);
  ASSERT_OK(c10c_cpu_caching_allocator_configure(
      "max_cached_mb:1024, huge_pages:True,thread_cache_kb:256"));
}

TEST(fill_modes_write_zeros_or_cs_junk_pattern) {
  c10c_allocator *a = c10c_cpu_caching_allocator();
  static const size_t sizes[] = {24, 4096, 300000};
  for (size_t i = 0; i < 3; i++) {
    c10c_data_ptr p;
    ASSERT_OK(c10c_cpu_caching_allocator_configure("fill:junk"));
    ASSERT_OK(c10c_allocator_allocate(&p, a, sizes[i]));
    const unsigned char *b = p.data;
    /* c10's memset_junk: the int32 0x7fedbeef in every word, in the target's byte order */
    uint32_t word;
    memcpy(&word, b, 4);
    ASSERT_EQ_U64(word, 0x7fedbeef);
    memcpy(&word, b + sizes[i] / 8 * 8 - 4, 4);
    ASSERT_EQ_U64(word, 0x7fedbeef);
    ASSERT_EQ(b[sizes[i] - 1], b[(sizes[i] - 1) % 8]); /* the tail: the pattern's first bytes */
    memset(p.data, 0x55, sizes[i]);
    c10c_data_ptr_free(&p);
    ASSERT_OK(c10c_cpu_caching_allocator_configure("fill:zero"));
    ASSERT_OK(c10c_allocator_allocate(&p, a, sizes[i])); /* the same block, reused */
    b = p.data;
    ASSERT_EQ(b[0], 0);
    ASSERT_EQ(b[sizes[i] - 1], 0);
    c10c_data_ptr_free(&p);
  }
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cpu_caching_allocator_configure("fill:nan"));
  ASSERT_OK(c10c_cpu_caching_allocator_configure("fill:none"));
}

TEST(out_of_memory_releases_the_cache_retries_and_reports_sizes) {
  c10c_allocator *a = c10c_cpu_caching_allocator();
  c10c_allocator_empty_cache(a); /* no cached block to resize: the request goes to the system */
  c10c_memory_stats before, after;
  before.struct_size = after.struct_size = sizeof before;
  c10c_allocator_get_stats(&before, a);
  c10c_data_ptr p;
  /* the first system request fails: the cache is released and the retry succeeds */
  c10c_testing_fail_allocation(1);
  ASSERT_OK(c10c_allocator_allocate(&p, a, 5 << 20));
  c10c_testing_fail_allocation(0);
  c10c_allocator_get_stats(&after, a);
  ASSERT_EQ(after.num_alloc_retries, before.num_alloc_retries + 1);
  ASSERT_EQ(after.num_ooms, before.num_ooms);
  c10c_data_ptr_free(&p);
#if SIZE_MAX > UINT32_MAX /* 32-bit: tests/c/test_address_space.c has the sizes past it */
  /* an impossible request fails on both tries */
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c_allocator_allocate(&p, a, (size_t)1 << 46));
  ASSERT_TRUE(strstr(c10c_last_error_message(),
                     "DefaultCPUAllocator: can't allocate memory: you tried to allocate "
                     "70368744177664 bytes. Error code ") != NULL);
  ASSERT_TRUE(strstr(c10c_last_error_message(), "bytes allocated and") != NULL);
  c10c_allocator_get_stats(&after, a);
  ASSERT_EQ(after.num_ooms, before.num_ooms + 1);
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY,
                c10c_allocator_allocate(&p, c10c_cpu_default_allocator(), (size_t)1 << 50));
  /* the C library's words for ENOMEM, as torch's message has them ("Out of memory" on musl) */
  char want[200];
  snprintf(want, sizeof want,
           "DefaultCPUAllocator: can't allocate memory: you tried to allocate 1125899906842624 "
           "bytes. Error code 12 (%s)",
           strerror(ENOMEM));
  ASSERT_ERROR_MESSAGE(want);
#endif
}

TEST(the_allocator_name_is_copied_so_the_host_may_free_it) {
  /* fuzz_storage: the handle kept the host's pointer, and read it after the host freed it */
  host_pool pool = {0};
  c10c_allocator_vtable vt = host_vtable();
  char *name = strdup("pool_on_the_heap");
  vt.name = name;
  c10c_allocator *a;
  ASSERT_OK(c10c_allocator_new(&a, &vt, &pool, C10C_DEVICE_TYPE_CPU));
  memset(name, 'x', strlen(name));
  free(name);
  ASSERT_STR_EQ(c10c_allocator_name(a), "pool_on_the_heap");
  c10c_data_ptr dp;
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c_allocator_allocate(&dp, a, TOO_BIG));
  ASSERT_ERROR_MESSAGE("allocator 'pool_on_the_heap' failed to allocate " TOO_BIG_BYTES
                       " bytes (out of memory)");
  /* a vtable of the first version's size: no name field to read; and a struct_size ending
   * inside the name or destroy pointer leaves that field out, never half a pointer */
  size_t sizes[3] = {offsetof(c10c_allocator_vtable, allocate) + sizeof(void *),
                     offsetof(c10c_allocator_vtable, name) + sizeof(void *) / 2,
                     offsetof(c10c_allocator_vtable, destroy) + sizeof(void *) * 3 / 4};
  for (int i = 0; i < 3; i++) {
    host_pool fresh = {0};
    vt.name = "named";
    vt.struct_size = (uint32_t)sizes[i];
    c10c_allocator *old = NULL;
    ASSERT_OK(c10c_allocator_new(&old, &vt, &fresh, C10C_DEVICE_TYPE_CPU));
    ASSERT_STR_EQ(c10c_allocator_name(old), "custom");
    c10c_allocator_release(old);
    ASSERT_EQ(fresh.destroyed, i == 1); /* destroy (before name) is whole only in the second */
  }
  c10c_allocator_release(a);
}

static c10c_status hollow_allocate(c10c_data_ptr *out, void *self, size_t nbytes,
                                   size_t alignment) {
  (void)self, (void)nbytes, (void)alignment, (void)out;
  return C10C_STATUS_OK; /* claims success, gives nothing */
}

TEST(an_allocator_that_succeeds_without_memory_is_refused) {
  /* a host allocator breaking its contract would give storages that claim bytes they do not
   * have, and tensors over them would write through NULL */
  c10c_allocator_vtable vt = host_vtable();
  vt.allocate = hollow_allocate;
  vt.destroy = NULL;
  vt.name = "hollow";
  c10c_allocator *a;
  ASSERT_OK(c10c_allocator_new(&a, &vt, NULL, C10C_DEVICE_TYPE_CPU));
  c10c_data_ptr dp;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_allocator_allocate(&dp, a, 16));
  ASSERT_ERROR_MESSAGE("allocator 'hollow' returned no memory for 16 bytes");
  ASSERT_TRUE(dp.data == NULL && dp.deleter == NULL);
  c10c_storage *s = NULL;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new(&s, 16, a, C10C_DEVICE_TYPE_CPU, true));
  ASSERT_TRUE(s == NULL);
  ASSERT_OK(c10c_storage_new(&s, 0, a, C10C_DEVICE_TYPE_CPU, true)); /* 0 bytes: nothing owed */
  c10c_storage_release(s);
  c10c_allocator_release(a);
}

/* In a child process (the environment is read once per process, on first use): a malformed
 * C10C_CPU_ALLOC_CONF fails every allocation of the caching allocator until configure succeeds.
 * Runs first, before this process's caching allocator has read its environment. Returns 0 when
 * all went as expected. */
static int malformed_environment_configuration(void) {
  setenv("C10C_CPU_ALLOC_CONF", "foo:1", 1);
  c10c_data_ptr dp;
  int bad = 0;
  bad |= c10c_allocator_allocate(&dp, c10c_cpu_caching_allocator(), 16) !=
         C10C_STATUS_INVALID_ARGUMENT;
  bad |= strcmp(c10c_last_error_message(),
                "C10C_CPU_ALLOC_CONF: Unrecognized key 'foo' in CPU allocator config.") != 0;
  c10c_storage *s = NULL;
  bad |= c10c_storage_new(&s, 1 << 20, NULL, C10C_DEVICE_TYPE_CPU, true) !=
         C10C_STATUS_INVALID_ARGUMENT;
  bad |= c10c_cpu_caching_allocator_configure("") != C10C_STATUS_OK;
  bad |= c10c_allocator_allocate(&dp, c10c_cpu_caching_allocator(), 16) != C10C_STATUS_OK;
  c10c_data_ptr_free(&dp);
  return bad;
}

TEST(a_malformed_environment_configuration_fails_allocations_until_configured) {
#ifdef _WIN32
  /* no fork: in this process, which has not read its environment yet either (this test runs
   * first) */
  ASSERT_EQ(malformed_environment_configuration(), 0);
  setenv("C10C_CPU_ALLOC_CONF", "", 1);
#else
  fflush(stdout);
  fflush(stderr);
  pid_t child = fork();
  if (child == 0) _exit(malformed_environment_configuration());
  ASSERT_TRUE(child > 0);
  int status = -1;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
#endif
}

static c10c_status odd_allocate(c10c_data_ptr *out, void *self, size_t nbytes, size_t alignment) {
  (void)nbytes, (void)alignment, (void)out;
  return *(const c10c_status *)self; /* whatever number the host likes */
}

static c10c_status failing_stats(c10c_memory_stats *out, void *self) {
  (void)out;
  return *(const c10c_status *)self;
}

TEST(a_hosts_failures_become_statuses_with_messages) {
  c10c_status returned = 5;
  c10c_allocator_vtable vt;
  memset(&vt, 0, sizeof vt);
  vt.struct_size = sizeof vt;
  vt.allocate = odd_allocate;
  vt.get_stats = failing_stats;
  vt.name = "odd";
  c10c_allocator *a = NULL;
  ASSERT_OK(c10c_allocator_new(&a, &vt, &returned, C10C_DEVICE_TYPE_CPU));
  c10c_data_ptr dp;
  /* a number that is not a failure code is an error, never passed on */
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_allocator_allocate(&dp, a, 16));
  ASSERT_ERROR_MESSAGE(
      "allocator 'odd' failed to allocate 16 bytes (status 5, which is not a c10c_status failure "
      "code)");
  ASSERT_TRUE(dp.data == NULL && dp.ctx == NULL && dp.deleter == NULL);
  c10c_storage *s = NULL;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new(&s, 16, a, C10C_DEVICE_TYPE_CPU, true));
  ASSERT_TRUE(s == NULL);
  returned = -100;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_allocator_allocate(&dp, a, 16));
  ASSERT_ERROR_MESSAGE(
      "allocator 'odd' failed to allocate 16 bytes (status -100, which is not a c10c_status "
      "failure code)");
  /* get_stats: the host's status, with a message the host could not set */
  returned = C10C_STATUS_UNAVAILABLE;
  c10c_memory_stats stats;
  stats.struct_size = sizeof stats;
  c10c_clear_last_error();
  ASSERT_STATUS(C10C_STATUS_UNAVAILABLE, c10c_allocator_get_stats(&stats, a));
  ASSERT_ERROR_MESSAGE(
      "allocator 'odd' failed to report its statistics (device or backend unavailable)");
  char buf[64];
  size_t len = 0;
  ASSERT_STATUS(C10C_STATUS_UNAVAILABLE, c10c_allocator_summary(buf, sizeof buf, &len, a));
  returned = 1;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_allocator_get_stats(&stats, a));
  ASSERT_ERROR_MESSAGE(
      "allocator 'odd' failed to report its statistics (status 1, which is not a c10c_status "
      "failure code)");
  c10c_allocator_release(a);
}

TEST(allocator_functions_refuse_bad_arguments_as_documented) {
  c10c_data_ptr dp = {&dp, &dp, NULL, {C10C_DEVICE_TYPE_CPU, -1}};
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_allocator_allocate(&dp, NULL, 1));
  ASSERT_ERROR_MESSAGE("c10c_allocator_allocate: argument 'allocator' must not be NULL");
  ASSERT_TRUE(dp.data == NULL && dp.ctx == NULL); /* nothing to free */
  ASSERT_STATUS(C10C_STATUS_ERROR,
                c10c_allocator_allocate(&dp, c10c_cpu_default_allocator(), SIZE_MAX));
  char negative[100];
  snprintf(negative, sizeof negative,
           "alloc_cpu() seems to have been called with negative number: %zu", SIZE_MAX);
  ASSERT_ERROR_MESSAGE(negative);
  char a[4] = "abc", b[4] = {0};
  c10c_allocator *def = c10c_cpu_default_allocator();
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_allocator_copy(def, NULL, a, 4));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_allocator_copy(def, b, NULL, 4));
  ASSERT_OK(c10c_allocator_copy(def, NULL, NULL, 0));
  ASSERT_OK(c10c_allocator_copy(def, b, a, 4));
  ASSERT_STR_EQ(b, "abc");
  c10c_memory_stats stats;
  stats.struct_size = sizeof stats;
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_allocator_get_stats(&stats, NULL));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_allocator_get_stats(NULL, def));
  stats.struct_size = 8;
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_allocator_get_stats(&stats, def));
  char expected[160]; /* the first version (1.0) ends with max_split_size */
  snprintf(expected, sizeof expected,
           "c10c_memory_stats.struct_size is 8, smaller than any version (%zu); set it to "
           "sizeof(c10c_memory_stats)",
           offsetof(c10c_memory_stats, max_split_size) + sizeof(int64_t));
  ASSERT_ERROR_MESSAGE(expected);
  /* the handle's constructor */
  c10c_allocator_vtable vt = host_vtable();
  c10c_allocator *made = NULL;
  vt.struct_size = 4;
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_allocator_new(&made, &vt, NULL, C10C_DEVICE_TYPE_CPU));
  snprintf(expected, sizeof expected,
           "c10c_allocator_vtable.struct_size is 4, smaller than any version of the vtable (%zu); "
           "set it to sizeof(c10c_allocator_vtable)",
           offsetof(c10c_allocator_vtable, allocate) + sizeof(void *)); /* 16, 12 on 32-bit */
  ASSERT_ERROR_MESSAGE(expected);
  vt = host_vtable();
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_allocator_new(&made, &vt, NULL, 21));
  ASSERT_ERROR_MESSAGE("Unknown device type 21");
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_allocator_new(&made, &vt, NULL, -1));
  ASSERT_TRUE(made == NULL);
  c10c_allocator *got = NULL;
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_allocator_get(&got, 30));
  ASSERT_ERROR_MESSAGE("Unknown device type 30");
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_allocator_get(&got, -1));
  ASSERT_TRUE(got == NULL);
  /* NULL-safe getters */
  ASSERT_STR_EQ(c10c_allocator_name(NULL), "");
  ASSERT_EQ(c10c_allocator_device_type(NULL), C10C_DEVICE_TYPE_CPU);
  c10c_data_ptr_free(NULL);
}

TEST(summary_reports_its_length_and_refuses_a_null_buffer) {
  c10c_allocator *a = c10c_cpu_default_allocator();
  size_t len = 0, full = 0;
  char buf[8192];
  ASSERT_OK(c10c_allocator_summary(buf, sizeof buf, &full, a));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_allocator_summary(NULL, 10, &len, a));
  ASSERT_ERROR_MESSAGE("c10c_allocator_summary: argument 'out' must not be NULL");
  /* out NULL with out_size 0: a length query */
  ASSERT_STATUS(C10C_STATUS_BUFFER_TOO_SMALL, c10c_allocator_summary(NULL, 0, &len, a));
  ASSERT_EQ(len, full);
  char expected[128];
  snprintf(expected, sizeof expected, "c10c_allocator_summary: %zu bytes needed, the buffer has 0",
           full + 1);
  ASSERT_ERROR_MESSAGE(expected);
  /* exactly one byte short: truncated, terminated */
  char *small = malloc(full);
  ASSERT_STATUS(C10C_STATUS_BUFFER_TOO_SMALL, c10c_allocator_summary(small, full, &len, a));
  ASSERT_EQ(strlen(small), full - 1);
  free(small);
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER,
                c10c_allocator_summary(buf, sizeof buf, NULL, NULL)); /* allocator */
}

RUN_TESTS(T(a_malformed_environment_configuration_fails_allocations_until_configured),
          T(host_allocator_serves_storages_and_frees_through_its_deleter),
          T(host_allocator_failures_are_reported_with_its_name), T(vtable_is_validated),
          T(registry_follows_c10s_priority_rule),
          T(a_replaced_allocator_is_destroyed_once_its_last_user_goes),
          T(caching_allocator_statistics_follow_allocations), T(cached_large_blocks_are_reused),
          T(summary_looks_like_torchs), T(configuration_rejects_unknown_keys_and_bad_values),
          T(fill_modes_write_zeros_or_cs_junk_pattern),
          T(out_of_memory_releases_the_cache_retries_and_reports_sizes),
          T(the_allocator_name_is_copied_so_the_host_may_free_it),
          T(an_allocator_that_succeeds_without_memory_is_refused),
          T(a_hosts_failures_become_statuses_with_messages),
          T(allocator_functions_refuse_bad_arguments_as_documented),
          T(summary_reports_its_length_and_refuses_a_null_buffer))
