/* Shareable memory on Windows (shm.c has POSIX's). Regular files work as on POSIX: the C
 * runtime's descriptors, mapped through a file mapping (CreateFileMappingW, MapViewOfFile),
 * which is what torch.from_file needs. Memory files (memfd), POSIX shared memory objects and
 * taking another process's descriptors (pidfd) have no Windows counterpart here: those return
 * ENOSYS, which c10c__errno_text words as the sharing strategy being unavailable on Windows, so
 * the storage and IPC layers report it clearly.
 */
#ifdef _WIN32

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "shm.h"
#include "sysmem.h"

int c10c__shm_memfd(int *out_fd, const char *label) {
  (void)label;
  *out_fd = -1;
  return ENOSYS;
}

int c10c__shm_open(int *out_fd, const char *name, bool create) {
  (void)name, (void)create;
  *out_fd = -1;
  return ENOSYS;
}

int c10c__shm_unlink(const char *name) {
  (void)name;
  return ENOSYS;
}

int c10c__file_open(int *out_fd, const char *path, bool writable, bool create) {
  *out_fd = -1;
  int flags = (writable ? _O_RDWR : _O_RDONLY) | _O_BINARY | _O_NOINHERIT |
              (writable && create ? _O_CREAT : 0);
  int fd = _open(path, flags, _S_IREAD | _S_IWRITE);
  if (fd < 0) return errno;
  *out_fd = fd;
  return 0;
}

int c10c__fd_stat(c10c__fd_info *out, int fd) {
  struct _stat64 st;
  if (_fstat64(fd, &st) != 0) return errno;
  out->size = (int64_t)st.st_size;
  out->regular = (st.st_mode & _S_IFMT) == _S_IFREG;
  out->uid = 0; /* Windows has no numeric owner; c10c__effective_uid is 0 too */
  return 0;
}

int64_t c10c__fd_free_space(int fd) {
  (void)fd;
  return -1; /* unknown */
}

int c10c__fd_reserve(int fd, int64_t size) {
  /* a memory request for the test hook (testing.h): when it fails, the file system is full */
  if (!c10c__request_allowed()) return ENOSPC;
  if (size <= 0) return 0;
  struct _stat64 st;
  if (_fstat64(fd, &st) != 0) return errno;
  if (st.st_size >= size) return 0;
  /* grown with zeros written (NTFS allocates them), so writes through a view find space */
  return _chsize_s(fd, size);
}

int c10c__fd_seal_shrinking(int fd) {
  (void)fd;
  return ENOSYS;
}

int c10c__fd_truncate(int fd, int64_t size) { return _chsize_s(fd, size); }

static int errno_of(DWORD code) {
  switch (code) {
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
    case ERROR_COMMITMENT_LIMIT: return ENOMEM;
    case ERROR_ACCESS_DENIED: return EACCES;
    case ERROR_DISK_FULL: return ENOSPC;
    case ERROR_FILE_INVALID: return ENXIO;
    default: return EINVAL;
  }
}

int c10c__fd_map(void **out, int fd, size_t size, bool shared, bool populate) {
  (void)populate; /* only a speed-up on Linux */
  *out = NULL;
  if (size == 0) return EINVAL; /* as mmap answers */
  intptr_t h = _get_osfhandle(fd);
  if (h == -1) return EBADF;
  uint64_t s = size;
  /* shared: writes reach the file; private: copy on write, which a read-only handle allows */
  HANDLE mapping = CreateFileMappingW((HANDLE)h, NULL, shared ? PAGE_READWRITE : PAGE_WRITECOPY,
                                      (DWORD)(s >> 32), (DWORD)s, NULL);
  if (mapping == NULL) return errno_of(GetLastError());
  void *p = MapViewOfFile(mapping, shared ? FILE_MAP_WRITE : FILE_MAP_COPY, 0, 0, size);
  DWORD code = GetLastError();
  CloseHandle(mapping); /* the view keeps the mapping alive */
  if (p == NULL) return errno_of(code);
  *out = p; /* unmapped by c10c__os_unmap, which tells a view from VirtualAlloc's pages */
  return 0;
}

int c10c__pidfd_open(int *out_fd, int64_t pid) {
  (void)pid;
  *out_fd = -1;
  return ENOSYS;
}

int c10c__pidfd_getfd(int *out_fd, int pidfd, int fd) {
  (void)pidfd, (void)fd;
  *out_fd = -1;
  return ENOSYS;
}

int c10c__fd_dup(int *out_fd, int fd) {
  *out_fd = -1;
  int d = _dup(fd);
  if (d < 0) return errno;
  *out_fd = d;
  return 0;
}

void c10c__fd_close(int fd) {
  if (fd >= 0) _close(fd);
}

int64_t c10c__fd_soft_limit(void) { return _getmaxstdio(); /* the C runtime's descriptor table */ }

uint64_t c10c__random64(void) {
  static _Atomic uint64_t counter;
  /* no system random source without another import library: the performance counter, the
   * process id, a per-process counter and an address, mixed (splitmix64); creation with a unique
   * name catches the rest, as on POSIX */
  LARGE_INTEGER t;
  QueryPerformanceCounter(&t);
  uint64_t x = (uint64_t)t.QuadPart ^ ((uint64_t)GetCurrentProcessId() << 32) ^
               (atomic_fetch_add(&counter, 1) * 0x9e3779b97f4a7c15u) ^ (uint64_t)(uintptr_t)&t;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

const char *c10c__errno_text(int err, char *buf, size_t size) {
  if (err == ENOSYS)
    return "not available on Windows (this sharing strategy needs POSIX shared memory, memory "
           "files or descriptor passing)";
  if (size == 0) return "";
  if (strerror_s(buf, size, err) != 0) snprintf(buf, size, "error %d", err);
  return buf;
}

int64_t c10c__process_id(void) { return (int64_t)GetCurrentProcessId(); }

uint32_t c10c__effective_uid(void) { return 0; }

#else
/* ISO C forbids an empty translation unit */
typedef int c10c__shm_win32_unused;
#endif
