/* c10c_cpu_malloc and friends: malloc-style blocks of the caching CPU allocator, freed by
 * address (numpy's data allocator runs on them). */
#include <pthread.h>
#include <stdint.h>

#include "harness.h"

static c10c_memory_stats stats(void) {
  c10c_memory_stats s = {.struct_size = sizeof s};
  c10c_allocator_get_stats(&s, c10c_cpu_caching_allocator());
  return s;
}

static const size_t SIZES[] = {1,     7,      64,     1000,   1024,    4032,          4096,
                               65536, 262080, 262144, 262145, 1 << 20, (8 << 20) + 3, 64 << 20};

TEST(blocks_are_64_aligned_writable_and_sized_as_asked) {
  for (size_t i = 0; i < sizeof SIZES / sizeof SIZES[0]; i++) {
    void *p = NULL;
    ASSERT_OK(c10c_cpu_malloc(&p, SIZES[i]));
    ASSERT_TRUE(p != NULL);
    ASSERT_EQ((uintptr_t)p % 64, 0);
    memset(p, 0xab, SIZES[i]);
    ASSERT_EQ(c10c_cpu_allocation_size(p), SIZES[i]);
    c10c_cpu_free(p);
  }
}

TEST(zero_bytes_give_a_unique_address) {
  void *a = NULL, *b = NULL;
  ASSERT_OK(c10c_cpu_malloc(&a, 0));
  ASSERT_OK(c10c_cpu_malloc(&b, 0));
  ASSERT_TRUE(a != NULL && b != NULL && a != b);
  c10c_cpu_free(a);
  c10c_cpu_free(b);
  c10c_cpu_free(NULL); /* NULL-safe */
}

TEST(calloc_gives_zeros_even_from_a_dirty_cache) {
  for (size_t i = 0; i < sizeof SIZES / sizeof SIZES[0]; i++) {
    size_t n = SIZES[i];
    void *p = NULL;
    ASSERT_OK(c10c_cpu_malloc(&p, n));
    memset(p, 0x5a, n);
    c10c_cpu_free(p); /* cached, dirty: the calloc below takes it back */
    unsigned char *z = NULL;
    ASSERT_OK(c10c_cpu_calloc((void **)&z, n, 1));
    size_t nonzero = 0;
    for (size_t k = 0; k < n; k++) nonzero += z[k] != 0;
    ASSERT_EQ(nonzero, 0);
    c10c_cpu_free(z);
  }
}

TEST(calloc_refuses_a_product_that_overflows) {
  void *p = (void *)1;
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c_cpu_calloc(&p, 3, SIZE_MAX / 3 + 1));
  ASSERT_TRUE(p == NULL);
  char want[160];
  snprintf(want, sizeof want, "c10c_cpu_calloc: 3 elements of %zu bytes overflow the address space",
           SIZE_MAX / 3 + 1);
  ASSERT_ERROR_MESSAGE(want);
}

TEST(an_impossible_size_is_out_of_memory_with_cs_message) {
  void *p = (void *)1;
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c_cpu_malloc(&p, SIZE_MAX - 8));
  ASSERT_TRUE(p == NULL);
  ASSERT_TRUE(strncmp(c10c_last_error_message(),
                      "DefaultCPUAllocator: can't allocate memory: you tried to allocate",
                      65) == 0);
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cpu_malloc(NULL, 8));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cpu_calloc(NULL, 1, 8));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cpu_realloc(NULL, NULL, 8));
}

TEST(realloc_keeps_the_contents_across_every_kind_of_block) {
  for (size_t i = 0; i < sizeof SIZES / sizeof SIZES[0]; i++) {
    for (size_t j = 0; j < sizeof SIZES / sizeof SIZES[0]; j++) {
      size_t from = SIZES[i], to = SIZES[j];
      if (from > (1 << 20) || to > (1 << 20)) continue; /* keep it quick */
      unsigned char *p = NULL;
      ASSERT_OK(c10c_cpu_malloc((void **)&p, from));
      for (size_t k = 0; k < from; k++) p[k] = (unsigned char)(k * 7 + 1);
      unsigned char *q = NULL;
      ASSERT_OK(c10c_cpu_realloc((void **)&q, p, to));
      size_t keep = from < to ? from : to, bad = 0;
      for (size_t k = 0; k < keep; k++) bad += q[k] != (unsigned char)(k * 7 + 1);
      ASSERT_EQ(bad, 0);
      ASSERT_EQ(c10c_cpu_allocation_size(q), to ? to : 1);
      memset(q, 0, to); /* the whole new size is ours */
      c10c_cpu_free(q);
    }
  }
  void *p = NULL;
  ASSERT_OK(c10c_cpu_realloc(&p, NULL, 100)); /* NULL: malloc */
  ASSERT_TRUE(p != NULL);
  c10c_cpu_free(p);
}

TEST(a_failed_realloc_leaves_the_block_as_it_was) {
  unsigned char *p = NULL;
  ASSERT_OK(c10c_cpu_malloc((void **)&p, 100));
  memset(p, 3, 100);
  void *q = (void *)1;
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c_cpu_realloc(&q, p, SIZE_MAX - 8));
  ASSERT_TRUE(q == NULL);
  ASSERT_EQ(p[99], 3);
  ASSERT_EQ(c10c_cpu_allocation_size(p), 100);
  c10c_cpu_free(p);
}

TEST(a_second_free_and_a_foreign_address_are_refused) {
  void *p = NULL;
  ASSERT_OK(c10c_cpu_malloc(&p, 100));
  c10c_cpu_free(p);
  c10c_cpu_free(p); /* refused: nothing is freed twice */
  char want[160];
  snprintf(want, sizeof want,
           "c10c_cpu_free: %p was not allocated by c10c_cpu_malloc, or was freed already", p);
  ASSERT_ERROR_MESSAGE(want);
  _Alignas(64) static char local[256];
  c10c_cpu_free(local + 128); /* a header-shaped place with no header */
  ASSERT_EQ(c10c_cpu_allocation_size(local + 128), 0);
  ASSERT_EQ(c10c_cpu_allocation_size(local + 3), 0); /* misaligned */
  void *q = (void *)2;
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cpu_realloc(&q, local + 128, 10));
  ASSERT_TRUE(q == NULL);
  /* a large block's address is known only while it is allocated */
  void *big = NULL;
  ASSERT_OK(c10c_cpu_malloc(&big, 1 << 20));
  c10c_cpu_free(big);
  ASSERT_EQ(c10c_cpu_allocation_size(big), 0);
}

TEST(blocks_are_counted_in_the_caching_allocators_statistics) {
  c10c_allocator_empty_cache(c10c_cpu_caching_allocator());
  c10c_memory_stats before = stats();
  void *small = NULL, *large = NULL;
  ASSERT_OK(c10c_cpu_malloc(&small, 1000));
  ASSERT_OK(c10c_cpu_malloc(&large, 8 << 20));
  c10c_memory_stats during = stats();
  ASSERT_EQ(during.allocation[C10C_STAT_ALL].current - before.allocation[C10C_STAT_ALL].current, 2);
  ASSERT_TRUE(during.allocated_bytes[C10C_STAT_LARGE_POOL].current -
                  before.allocated_bytes[C10C_STAT_LARGE_POOL].current ==
              8 << 20);
  ASSERT_EQ(during.requested_bytes[C10C_STAT_LARGE_POOL].current -
                before.requested_bytes[C10C_STAT_LARGE_POOL].current,
            8 << 20); /* no header on large blocks: an 8 MiB array is an 8 MiB block */
  c10c_cpu_free(small);
  c10c_cpu_free(large);
  c10c_memory_stats after = stats();
  ASSERT_EQ(after.allocation[C10C_STAT_ALL].current, before.allocation[C10C_STAT_ALL].current);
  ASSERT_TRUE(after.reserved_bytes[C10C_STAT_ALL].current >
              after.allocated_bytes[C10C_STAT_ALL].current); /* cached */
  c10c_allocator_empty_cache(c10c_cpu_caching_allocator());
  ASSERT_EQ(stats().reserved_bytes[C10C_STAT_LARGE_POOL].current, 0);
}

enum { THREADS = 4, PER_THREAD = 2000 };
static void *handed[THREADS][PER_THREAD];

static void *allocate_many(void *arg) {
  size_t t = (size_t)(uintptr_t)arg;
  for (size_t i = 0; i < PER_THREAD; i++) {
    size_t n = (i * 2654435761u + t) % 300000 + 1;
    if (c10c_cpu_malloc(&handed[t][i], n) != C10C_STATUS_OK) return (void *)1;
    memset(handed[t][i], (int)t, n < 64 ? n : 64);
  }
  return NULL;
}

static void *free_the_next_threads(void *arg) {
  size_t t = ((size_t)(uintptr_t)arg + 1) % THREADS;
  for (size_t i = 0; i < PER_THREAD; i++) {
    if (*(unsigned char *)handed[t][i] != t) return (void *)1;
    c10c_cpu_free(handed[t][i]);
  }
  return NULL;
}

/* Runs fn on THREADS threads (argument: the thread's number); true when every one returned NULL. */
static bool on_threads(void *(*fn)(void *)) {
  pthread_t th[THREADS];
  bool ok = true;
  for (size_t t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, fn, (void *)(uintptr_t)t);
  for (size_t t = 0; t < THREADS; t++) {
    void *r = NULL;
    pthread_join(th[t], &r);
    ok = ok && r == NULL;
  }
  return ok;
}

TEST(any_thread_frees_what_another_allocated) {
  ASSERT_TRUE(on_threads(allocate_many));
  ASSERT_TRUE(on_threads(free_the_next_threads));
}

TEST(many_large_blocks_live_at_once) {
  enum { N = 300 };
  void *p[N];
  for (size_t i = 0; i < N; i++) {
    ASSERT_OK(c10c_cpu_malloc(&p[i], 300000 + i * 4096));
    ((char *)p[i])[0] = (char)i;
  }
  for (size_t i = 0; i < N; i += 2) c10c_cpu_free(p[i]); /* holes in the table's runs */
  for (size_t i = 1; i < N; i += 2) {
    ASSERT_EQ(c10c_cpu_allocation_size(p[i]), 300000 + i * 4096);
    ASSERT_EQ(((char *)p[i])[0], (char)i);
    c10c_cpu_free(p[i]);
  }
  c10c_allocator_empty_cache(c10c_cpu_caching_allocator());
}

RUN_TESTS(T(blocks_are_64_aligned_writable_and_sized_as_asked), T(zero_bytes_give_a_unique_address),
          T(calloc_gives_zeros_even_from_a_dirty_cache), T(calloc_refuses_a_product_that_overflows),
          T(an_impossible_size_is_out_of_memory_with_cs_message),
          T(realloc_keeps_the_contents_across_every_kind_of_block),
          T(a_failed_realloc_leaves_the_block_as_it_was),
          T(a_second_free_and_a_foreign_address_are_refused),
          T(blocks_are_counted_in_the_caching_allocators_statistics),
          T(any_thread_frees_what_another_allocated), T(many_large_blocks_live_at_once))
