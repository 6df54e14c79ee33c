/* The library's only door to system memory: its own bookkeeping (c10c__malloc) and tensor bytes
 * (c10c__os_alloc). Both honour the test hook that fails the k-th request (testing.h), so a test
 * can make every allocation path fail in turn.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "sysmem.h"

static _Atomic int64_t requests;     /* memory requests made so far */
static _Atomic int64_t fail_at = -1; /* the request number that fails, -1: none */

void c10c_testing_fail_allocation(int64_t k) {
  int64_t at = k > 0 ? atomic_load_explicit(&requests, memory_order_relaxed) + k : -1;
  atomic_store_explicit(&fail_at, at, memory_order_relaxed);
}

int64_t c10c_testing_allocation_count(void) {
  return atomic_load_explicit(&requests, memory_order_relaxed);
}

/* Counts a request; false when the test hook says this one fails. */
static bool request_allowed(void) {
  int64_t n = atomic_fetch_add_explicit(&requests, 1, memory_order_relaxed) + 1;
  return n != atomic_load_explicit(&fail_at, memory_order_relaxed);
}

bool c10c__request_allowed(void) { return request_allowed(); }

bool c10c__failure_injection_armed(void) {
  return atomic_load_explicit(&fail_at, memory_order_relaxed) != -1;
}

void *c10c__malloc(size_t size) {
  if (!request_allowed()) return NULL;
  return malloc(size);
}

void *c10c__calloc(size_t count, size_t size) {
  if (!request_allowed()) return NULL;
  return calloc(count, size);
}

void c10c__free(void *ptr) { free(ptr); }

void *c10c__grow(void *items, size_t *cap, size_t n, size_t size, size_t first) {
  size_t want = *cap <= SIZE_MAX / 2 ? (*cap ? 2 * *cap : first) : 0;
  if (want == 0 || want > SIZE_MAX / size) return NULL;
  void *grown = c10c__malloc(want * size);
  if (grown == NULL) return NULL;
  if (n) memcpy(grown, items, n * size);
  c10c__free(items);
  *cap = want;
  return grown;
}

/* The system side below is POSIX's; sysmem_win32.c has Windows'. */
#ifndef _WIN32
int c10c__os_alloc(void **out, size_t size, size_t alignment) {
  *out = NULL;
  if (!request_allowed()) return ENOMEM;
  return posix_memalign(out, alignment, size);
}

void c10c__os_free(void *ptr) { free(ptr); }

enum { HUGE_PAGE = 2 << 20 };

int c10c__os_map(void **out, size_t size, bool huge_pages) {
  *out = NULL;
  if (!request_allowed()) return ENOMEM;
  /* Map 2 MiB more than asked and trim, so the block starts on a huge-page boundary. The trim
   * works in whole pages, whatever their size (4 KiB, 16 KiB, 64 KiB on aarch64): the kernel
   * rounds the mapping up to them, and the tail cut off must start on one. */
  size_t page = c10c__page_size();
  size = (size + page - 1) & ~(page - 1);
  size_t span = size + (huge_pages ? HUGE_PAGE : 0);
  if (size == 0 || span < size) return ENOMEM;
  char *base = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return errno;
  char *start = base;
  if (huge_pages) {
    start = (char *)(((uintptr_t)base + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (start > base) munmap(base, (size_t)(start - base));
    size_t tail = (size_t)(base + span - (start + size));
    if (tail > 0) munmap(start + size, tail);
#ifdef MADV_HUGEPAGE
    madvise(start, size, MADV_HUGEPAGE); /* advice only: failure leaves normal pages */
#endif
  }
  *out = start;
  return 0;
}

int c10c__os_remap(void **inout, size_t old_size, size_t new_size, bool may_move) {
  if (!request_allowed()) return ENOMEM;
#if defined(__linux__)
  void *p = mremap(*inout, old_size, new_size, may_move ? MREMAP_MAYMOVE : 0);
  if (p == MAP_FAILED) return errno;
  *inout = p;
  return 0;
#else
  (void)inout; /* no mremap (macOS): the caller maps anew and copies */
  (void)old_size;
  (void)new_size;
  (void)may_move;
  return ENOSYS;
#endif
}

void c10c__os_unmap(void *ptr, size_t size) {
  if (ptr != NULL) munmap(ptr, size);
}

size_t c10c__page_size(void) {
  static _Atomic size_t page;
  size_t p = atomic_load_explicit(&page, memory_order_relaxed);
  if (p == 0) {
    long v = sysconf(_SC_PAGESIZE);
    /* a power of two (the rounding in c10c__os_map relies on it), as on every Linux port */
    p = v > 0 && ((unsigned long)v & ((unsigned long)v - 1)) == 0 ? (size_t)v : 4096;
    atomic_store_explicit(&page, p, memory_order_relaxed);
  }
  return p;
}
#endif /* !_WIN32 */
