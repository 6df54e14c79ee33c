/* The system's page size as the library sees it (lib/base/sysmem.c), and kernel mappings made in
 * whole pages of it: 4 KiB on x86-64, 64 KiB on many aarch64 kernels (the cross target
 * aarch64-linux-gnu-64k runs this under qemu presenting 64 KiB pages, and says so in
 * C10C_TEST_EXPECT_PAGE_SIZE, so that a runner that quietly gave 4 KiB pages fails here).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>

#include "harness.h"
#include "sysmem.h"

#ifdef _WIN32
#include "os_compat.h"
static size_t system_page_size(void) {
  SYSTEM_INFO info;
  GetSystemInfo(&info);
  return info.dwPageSize;
}
#else
#include <unistd.h>
static size_t system_page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }
#endif

TEST(the_page_size_is_the_systems_and_a_power_of_two) {
  size_t page = c10c__page_size();
  ASSERT_EQ(page, system_page_size());
  ASSERT_TRUE(page >= 4096 && (page & (page - 1)) == 0);
  const char *expect = getenv("C10C_TEST_EXPECT_PAGE_SIZE");
  if (expect != NULL) ASSERT_EQ(page, strtoll(expect, NULL, 10));
  printf("  (page size %zu)\n", page);
}

TEST(mappings_are_whole_pages_aligned_as_asked_whatever_the_size) {
  size_t page = c10c__page_size(), huge = (size_t)2 << 20;
  const size_t sizes[] = {1, page - 1, page, page + 1, 3 * page + 5, huge - 1, huge + 1};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    for (int h = 0; h < 2; h++) {
      void *p = NULL;
      ASSERT_EQ(c10c__os_map(&p, sizes[i], h == 1), 0);
      if (p == NULL) continue;
      ASSERT_EQ((uintptr_t)p % (h ? huge : page), 0);
      /* every byte of the last page is there (the trim cut on a page boundary) */
      size_t whole = (sizes[i] + page - 1) / page * page;
      memset(p, 0x5a, whole);
      ASSERT_EQ(((unsigned char *)p)[whole - 1], 0x5a);
      c10c__os_unmap(p, sizes[i]);
    }
  }
}

TEST(cpu_allocations_of_every_class_size_are_usable_to_their_last_byte) {
  /* large blocks (past 256 KiB) are mapped: their class sizes in whole pages or not */
  const size_t sizes[] = {300000, (size_t)1 << 20, ((size_t)2 << 20) + 12345, (size_t)5 << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    c10c_storage *s = NULL;
    ASSERT_OK(c10c_storage_new(&s, (int64_t)sizes[i], NULL, C10C_DEVICE_TYPE_CPU, true));
    if (s == NULL) continue;
    unsigned char *d = c10c_storage_data(s);
    memset(d, 0xa5, sizes[i]);
    ASSERT_EQ(d[sizes[i] - 1], 0xa5);
    ASSERT_OK(c10c_storage_resize(s, (int64_t)sizes[i] * 3 + 7)); /* remapped in place or moved */
    ASSERT_EQ(((unsigned char *)c10c_storage_data(s))[sizes[i] - 1], 0xa5);
    c10c_storage_release(s);
  }
}

RUN_TESTS(T(the_page_size_is_the_systems_and_a_power_of_two),
          T(mappings_are_whole_pages_aligned_as_asked_whatever_the_size),
          T(cpu_allocations_of_every_class_size_are_usable_to_their_last_byte))
