/* The operating system's shareable memory (see shm.c): memory files (memfd), named POSIX shared
 * memory objects, regular files, and mappings of them. Every function returns 0 or an errno
 * value and leaves errno alone; nothing above lib/base calls the system for these. On Windows
 * (shm_win32.c) named objects are named file mappings and memfd and pidfd return ENOSYS. */
#ifndef C10C_SHM_H
#define C10C_SHM_H

#include <stdatomic.h>

#include "internal.h"

/* What fstat says about an open file. */
typedef struct {
  int64_t size;
  bool regular; /* a regular file (memfd and shm objects are too) */
  uint32_t uid; /* owner */
} c10c__fd_info;

/* A new anonymous memory file (memfd_create, close-on-exec, sealable), empty. */
int c10c__shm_memfd(int *out_fd, const char *label);

/* Opens the POSIX shared memory object name read-write (close-on-exec); with create, makes it
 * (O_CREAT | O_EXCL, mode 0600) and fails with EEXIST if it exists. */
int c10c__shm_open(int *out_fd, const char *name, bool create);
int c10c__shm_unlink(const char *name);

/* Opens a regular file: read-write (creating it, mode 0600, when create) or read-only. */
int c10c__file_open(int *out_fd, const char *path, bool writable, bool create);

int c10c__fd_stat(c10c__fd_info *out, int fd);
/* Bytes free for an unprivileged writer on fd's file system (fstatvfs), or -1 if unknown. */
int64_t c10c__fd_free_space(int fd);
/* Reserves [0, size) of fd's file, growing it (posix_fallocate), so writes through a mapping
 * never meet a full file system (SIGBUS). ENOSPC, EFBIG and others on failure. Counts as a
 * memory request for the test hook (testing.h), failing with ENOSPC when it says so. */
int c10c__fd_reserve(int fd, int64_t size);
/* Seals a memory file against shrinking (and further seals): no process that receives it can
 * cut the pages from under another's mapping (SIGBUS). */
int c10c__fd_seal_shrinking(int fd);
/* Whether fd's file is sealed against shrinking (F_SEAL_SHRINK; seals never come off): 0 with
 * *out set (false for a file that takes no seals: a regular file, a POSIX shm object, a memory
 * file made without MFD_ALLOW_SEALING or not sealed yet), or an errno value (ENOSYS where the
 * system has no seals: macOS, Windows). */
int c10c__fd_shrink_sealed(bool *out, int fd);
/* Sets fd's file size (ftruncate). */
int c10c__fd_truncate(int fd, int64_t size);

/* Maps size bytes of fd from offset 0: shared (writes reach the file) or private (copy on
 * write); with populate, its pages mapped writable at once where the kernel can
 * (MADV_POPULATE_WRITE: a copy into it then takes no page faults), best effort. Freed with
 * c10c__os_unmap (sysmem.h). */
int c10c__fd_map(void **out, int fd, size_t size, bool shared, bool populate);

/* A descriptor referring to the process pid (pidfd_open), to take its file descriptors with
 * c10c__pidfd_getfd. ENOSYS when the kernel has no such call (before Linux 5.3). */
int c10c__pidfd_open(int *out_fd, int64_t pid);
/* A close-on-exec copy in this process of the descriptor fd of the process pidfd refers to
 * (pidfd_getfd; ptrace access to it needed). ENOSYS before Linux 5.6. */
int c10c__pidfd_getfd(int *out_fd, int pidfd, int fd);

/* A close-on-exec duplicate of fd (the lowest free number). */
int c10c__fd_dup(int *out_fd, int fd);
void c10c__fd_close(int fd);
/* The soft limit on open files (RLIMIT_NOFILE), or INT64_MAX when unlimited or unknown. */
int64_t c10c__fd_soft_limit(void);

/* Random bits from the kernel (getrandom), mixed with a counter when it cannot give them. */
uint64_t c10c__random64(void);
int64_t c10c__process_id(void);
uint32_t c10c__effective_uid(void);

#ifdef _WIN32
/* Unmaps view if c10c__fd_map made it (closing the handle that kept a named object's name alive
 * for it) and returns true; false for anything else. c10c__os_unmap asks it first. */
bool c10c__shm_view_unmapped(void *view);
#endif

/* The count at offset 0 of torch's RefcountedMapAllocator header (a named object's users, an
 * std::atomic<int> shared by every process that maps it). It can never overflow or go below 0
 * here (compare-and-swap, never fetch_add: seen + 1 at INT32_MAX was undefined, and the count
 * then read INT32_MIN, a live object taken for stale). Each returns the count it saw. */

/* One user more unless the count is <= 0 (every user released it: stale, never revived) or
 * INT32_MAX (full): added only when 0 < seen < INT32_MAX. */
static inline int32_t c10c__shm_count_acquire(_Atomic int32_t *count) {
  int32_t seen = atomic_load(count);
  while (seen > 0 && seen < INT32_MAX && !atomic_compare_exchange_weak(count, &seen, seen + 1)) {
  }
  return seen;
}

/* One user fewer unless the count is <= 0 already (someone dropped it too far: it stays): the
 * caller was the last user when seen <= 1. */
static inline int32_t c10c__shm_count_release(_Atomic int32_t *count) {
  int32_t seen = atomic_load(count);
  while (seen > 0 && !atomic_compare_exchange_weak(count, &seen, seen - 1)) {
  }
  return seen;
}

/* Adds delta unless the count would leave [0, INT32_MAX] (then it is untouched): true when
 * added; *seen is the count before either way. */
static inline bool c10c__shm_count_add(int32_t *seen, _Atomic int32_t *count, int32_t delta) {
  *seen = atomic_load(count);
  for (;;) {
    int64_t next = (int64_t)*seen + delta;
    if (next < 0 || next > INT32_MAX) return false;
    if (atomic_compare_exchange_weak(count, seen, (int32_t)next)) return true;
  }
}

/* strerror's text for err (thread-safe; buf may hold it). */
const char *c10c__errno_text(int err, char *buf, size_t size);

#endif /* C10C_SHM_H */
