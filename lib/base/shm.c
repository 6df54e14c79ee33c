/* The operating-system side of shareable memory: memory files (memfd), named POSIX shared memory
 * objects, regular files, their space reserved with posix_fallocate, and mappings of them.
 * Storages (lib/tensor/storage_shared.c) build on these; nothing above lib/base calls the system
 * for them. Every function returns 0 or an errno value. shm_win32.c has Windows' side.
 */
#ifndef _WIN32
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/random.h>
#include <sys/syscall.h>
#endif

#include "shm.h"
#include "sysmem.h"

int c10c__shm_memfd(int *out_fd, const char *label) {
  *out_fd = -1;
#if defined(__linux__)
  int fd = memfd_create(label, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return errno;
  *out_fd = fd;
  return 0;
#else
  (void)label; /* no memory files (macOS): callers share by name or file instead */
  return ENOSYS;
#endif
}

int c10c__shm_open(int *out_fd, const char *name, bool create) {
  *out_fd = -1;
  int flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT | O_EXCL : 0);
  int fd = shm_open(name, flags, (mode_t)0600);
  if (fd < 0) return errno;
  *out_fd = fd;
  return 0;
}

int c10c__shm_unlink(const char *name) { return shm_unlink(name) == 0 ? 0 : errno; }

int c10c__file_open(int *out_fd, const char *path, bool writable, bool create) {
  *out_fd = -1;
  int flags = (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | (writable && create ? O_CREAT : 0);
  int fd = open(path, flags, (mode_t)0600);
  if (fd < 0) return errno;
  *out_fd = fd;
  return 0;
}

int c10c__fd_stat(c10c__fd_info *out, int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return errno;
  out->size = (int64_t)st.st_size;
  out->regular = S_ISREG(st.st_mode);
  out->uid = (uint32_t)st.st_uid;
  return 0;
}

int64_t c10c__fd_free_space(int fd) {
  struct statvfs vfs;
  if (fstatvfs(fd, &vfs) != 0) return -1;
  uint64_t bytes = (uint64_t)vfs.f_bavail * (uint64_t)vfs.f_frsize;
  return bytes > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)bytes;
}

int c10c__fd_reserve(int fd, int64_t size) {
  /* a memory request for the test hook (testing.h): when it fails, the file system is full */
  if (!c10c__request_allowed()) return ENOSPC;
  if (size <= 0) return 0;
#if defined(__APPLE__)
  /* no posix_fallocate: reserve the blocks where the file system can (F_PREALLOCATE; not on
   * shared memory objects), then set the size as posix_fallocate does */
  struct stat st;
  if (fstat(fd, &st) != 0) return errno;
  if (st.st_size >= size) return 0;
  fstore_t store = {F_ALLOCATEALL, F_PEOFPOSMODE, 0, (off_t)(size - st.st_size), 0};
  if (fcntl(fd, F_PREALLOCATE, &store) != 0 && errno != ENOTSUP && errno != EINVAL) return errno;
  return c10c__fd_truncate(fd, size);
#else
  int err;
  do err = posix_fallocate(fd, 0, (off_t)size);
  while (err == EINTR);
  return err;
#endif
}

int c10c__fd_seal_shrinking(int fd) {
#if defined(F_ADD_SEALS)
  return fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) == 0 ? 0 : errno;
#else
  (void)fd; /* only memory files take seals, and only Linux has them */
  return ENOSYS;
#endif
}

int c10c__fd_shrink_sealed(bool *out, int fd) {
  *out = false;
#if defined(F_GET_SEALS)
  int seals = fcntl(fd, F_GET_SEALS);
  if (seals < 0) return errno == EINVAL ? 0 : errno; /* EINVAL: a file that takes no seals */
  *out = (seals & F_SEAL_SHRINK) != 0;
  return 0;
#else
  (void)fd;
  return ENOSYS;
#endif
}

int c10c__fd_truncate(int fd, int64_t size) {
  int rc;
  do rc = ftruncate(fd, (off_t)size);
  while (rc != 0 && errno == EINTR);
  return rc == 0 ? 0 : errno;
}

#if defined(__linux__) && !defined(MADV_POPULATE_WRITE)
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older headers lack the name */
#endif

int c10c__fd_map(void **out, int fd, size_t size, bool shared, bool populate) {
  *out = NULL;
  int flags = shared ? MAP_SHARED : MAP_PRIVATE;
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, fd, 0);
  if (p == MAP_FAILED) return errno;
    /* Populated by write faults (MADV_POPULATE_WRITE, Linux 5.14), not MAP_POPULATE's read faults
     * on a shared mapping: measured about 15% faster for a 19 MB copy into a memory file. Only a
     * speed-up: where it is missing (EINVAL) or fails, the pages come at first touch, and callers
     * that need them backed reserved them first (c10c__fd_reserve), so a touch cannot fault. */
#if defined(MADV_POPULATE_WRITE)
  if (populate) {
    int saved = errno;
    (void)madvise(p, size, MADV_POPULATE_WRITE);
    errno = saved;
  }
#else
  (void)populate;
#endif
  *out = p;
  return 0;
}

#if defined(__linux__)
int c10c__pidfd_open(int *out_fd, int64_t pid) {
  *out_fd = -1;
  if (pid <= 0 || pid > INT32_MAX) return EINVAL; /* as the kernel answers for pid 0 */
  long fd = syscall(SYS_pidfd_open, (pid_t)pid, 0);
  if (fd < 0) return errno;
  *out_fd = (int)fd;
  return 0;
}

int c10c__pidfd_getfd(int *out_fd, int pidfd, int fd) {
  *out_fd = -1;
  long mine = syscall(SYS_pidfd_getfd, pidfd, fd, 0); /* the copy is close-on-exec */
  if (mine < 0) return errno;
  *out_fd = (int)mine;
  return 0;
}
#else
/* no process file descriptors (macOS): descriptors of another process are out of reach */
int c10c__pidfd_open(int *out_fd, int64_t pid) {
  *out_fd = -1;
  return pid <= 0 || pid > INT32_MAX ? EINVAL : ENOSYS;
}

int c10c__pidfd_getfd(int *out_fd, int pidfd, int fd) {
  (void)pidfd;
  (void)fd;
  *out_fd = -1;
  return ENOSYS;
}
#endif

int c10c__fd_dup(int *out_fd, int fd) {
  *out_fd = -1;
  int d = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (d < 0) return errno;
  *out_fd = d;
  return 0;
}

void c10c__fd_close(int fd) {
  if (fd >= 0) close(fd); /* Linux frees the number even when close reports EINTR */
}

int64_t c10c__fd_soft_limit(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
      rl.rlim_cur > (rlim_t)INT64_MAX)
    return INT64_MAX;
  return (int64_t)rl.rlim_cur;
}

uint64_t c10c__random64(void) {
  static _Atomic uint64_t counter;
  uint64_t bits = 0;
#if defined(__APPLE__)
  arc4random_buf(&bits, sizeof bits); /* never fails */
  return bits;
#else
  if (getrandom(&bits, sizeof bits, GRND_NONBLOCK) == (ssize_t)sizeof bits) return bits;
#endif
  /* no entropy yet (early boot): a per-process counter still keeps names apart in one process,
   * and O_EXCL creation catches the rest */
  uint64_t x = atomic_fetch_add(&counter, 1) + 0x9e3779b97f4a7c15u * (uint64_t)getpid();
  x ^= (uint64_t)(uintptr_t)&bits;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

const char *c10c__errno_text(int err, char *buf, size_t size) {
#if defined(__GLIBC__)
  return strerror_r(err, buf, size); /* GNU: a static text or buf */
#else
  return strerror_r(err, buf, size) == 0 ? buf : "unknown error"; /* XSI (macOS, musl): fills buf */
#endif
}

int64_t c10c__process_id(void) { return (int64_t)getpid(); }

uint32_t c10c__effective_uid(void) { return (uint32_t)geteuid(); }

#else
/* ISO C forbids an empty translation unit */
typedef int c10c__shm_posix_unused;
#endif /* !_WIN32 */
