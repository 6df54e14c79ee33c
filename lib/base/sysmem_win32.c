/* System memory on Windows (sysmem.c has the request counting and POSIX's side): aligned
 * blocks from the C runtime's _aligned_malloc, as c10's alloc_cpu does there, and pages from
 * VirtualAlloc. Windows has no mremap, and no transparent huge pages (its large pages need a
 * privilege an ordinary process lacks), so huge_pages only aligns the block.
 */
#ifdef _WIN32

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>

#include "shm.h"
#include "sysmem.h"

/* Whether size bytes could ever be committed: no more than the system's commit limit (memory
 * plus paging files). Asked only for large requests: wine's heap takes about a minute to refuse
 * 64 TiB, where Windows refuses at once. */
static bool beyond_commit_limit(size_t size) {
  if (size < ((size_t)1 << 30)) return false;
  MEMORYSTATUSEX status;
  status.dwLength = sizeof status;
  return GlobalMemoryStatusEx(&status) && size > status.ullTotalPageFile;
}

int c10c__os_alloc(void **out, size_t size, size_t alignment) {
  *out = NULL;
  if (!c10c__request_allowed()) return ENOMEM;
  if (beyond_commit_limit(size)) return ENOMEM;
  /* posix_memalign's contract: a power of two, a multiple of sizeof(void *) */
  if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
  void *p = _aligned_malloc(size > 0 ? size : 1, alignment);
  if (p == NULL) return ENOMEM;
  *out = p;
  return 0;
}

void c10c__os_free(void *ptr) { _aligned_free(ptr); }

enum { HUGE_PAGE = 2 << 20 };

static void *reserve_commit(void *at, size_t size) {
  return VirtualAlloc(at, size, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
}

int c10c__os_map(void **out, size_t size, bool huge_pages) {
  *out = NULL;
  if (!c10c__request_allowed()) return ENOMEM;
  if (size == 0) return EINVAL; /* as mmap answers */
  if (beyond_commit_limit(size)) return ENOMEM;
  /* Huge pages: a reservation cannot be trimmed as munmap trims a mapping, so find a free 2
   * MiB-aligned range by reserving 2 MiB more, release it, and take the aligned part (another
   * thread may take it in between: then again). */
  size_t span = size + HUGE_PAGE;
  if (huge_pages && span < size) return ENOMEM;
  for (int attempt = 0; huge_pages && attempt < 16; attempt++) {
    char *base = VirtualAlloc(NULL, span, MEM_RESERVE, PAGE_NOACCESS);
    if (base == NULL) return ENOMEM;
    char *start = (char *)(((uintptr_t)base + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    VirtualFree(base, 0, MEM_RELEASE);
    void *p = reserve_commit(start, size);
    if (p != NULL) {
      *out = p;
      return 0;
    }
  }
  /* no alignment asked, or every race lost: unaligned pages still serve (alignment only helps
   * huge pages) */
  void *p = reserve_commit(NULL, size);
  if (p == NULL) return ENOMEM;
  *out = p;
  return 0;
}

int c10c__os_remap(void **inout, size_t old_size, size_t new_size, bool may_move) {
  (void)inout, (void)old_size, (void)new_size, (void)may_move;
  /* No mremap: callers release the block and map a fresh one, which they do on any failure. */
  return ENOTSUP;
}

void c10c__os_unmap(void *ptr, size_t size) {
  (void)size;
  if (ptr == NULL) return;
  /* a view of a file mapping (shm_win32.c) or pages of c10c__os_map */
  if (!c10c__shm_view_unmapped(ptr)) VirtualFree(ptr, 0, MEM_RELEASE);
}

size_t c10c__page_size(void) {
  static _Atomic size_t page;
  size_t p = atomic_load_explicit(&page, memory_order_relaxed);
  if (p == 0) {
    SYSTEM_INFO info;
    GetSystemInfo(&info);
    p = info.dwPageSize > 0 ? info.dwPageSize : 4096;
    atomic_store_explicit(&page, p, memory_order_relaxed);
  }
  return p;
}

#else
/* ISO C forbids an empty translation unit */
typedef int c10c__sysmem_win32_unused;
#endif
