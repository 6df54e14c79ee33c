/* System memory behind the library's allocations (see sysmem.c). */
#ifndef C10C_SYSMEM_H
#define C10C_SYSMEM_H

#include "internal.h"

/* Bookkeeping memory (object shells, tables). NULL on failure. */
void *c10c__malloc(size_t size);
void *c10c__calloc(size_t count, size_t size);
void c10c__free(void *ptr);
/* An array of *cap items of size bytes each, n of them in use, moved into one of twice *cap
 * (first when it is 0; through c10c__malloc, so that failure injection sweeps it): the new
 * array, the old one freed and *cap updated; NULL without host memory or past SIZE_MAX bytes,
 * nothing changed. */
void *c10c__grow(void *items, size_t *cap, size_t n, size_t size, size_t first);

/* Whether a test has armed the hook that fails the k-th request (caches then step aside, so the
 * requests they would save are made and can fail). */
bool c10c__failure_injection_armed(void);

/* Counts a memory request made outside this file (a shared memory reservation); false when
 * the test hook fails it. */
bool c10c__request_allowed(void);

/* Aligned bytes from the C library (posix_memalign; _aligned_malloc on Windows); returns 0 or
 * an errno value. */
int c10c__os_alloc(void **out, size_t size, size_t alignment);
void c10c__os_free(void *ptr);

/* Page-aligned bytes mapped from the kernel; with huge_pages, 2 MiB-aligned and advised as
 * transparent huge pages. size is rounded up to whole pages of c10c__page_size() (unmapping and
 * remapping with the unrounded size reach the same pages). Returns 0 or an errno. */
int c10c__os_map(void **out, size_t size, bool huge_pages);

void c10c__os_unmap(void *ptr, size_t size);

/* Resizes a mapping made by c10c__os_map, keeping its pages (they need not fault in again);
 * ENOTSUP where the system cannot (Windows), and callers then map afresh.
 * Without may_move it stays at its address (so a huge-page-aligned block stays aligned) or fails.
 * Returns 0 (the address in *inout) or an errno, leaving the mapping as it was. */
int c10c__os_remap(void **inout, size_t old_size, size_t new_size, bool may_move);

/* The system's page size (sysconf), a power of two: 4096 where the system will not say. */
size_t c10c__page_size(void);

#endif /* C10C_SYSMEM_H */
