/* Shareable memory on Windows (shm.c has POSIX's). Regular files work as on POSIX: the C
 * runtime's descriptors, mapped through a file mapping (CreateFileMappingW, MapViewOfFile),
 * which is what torch.from_file needs. Named shared memory (torch's file_system strategy, the
 * only one torch has on Windows) is a named file mapping backed by the paging file, as torch's
 * Windows MapAllocator makes it: c10c__shm_open gives a descriptor of this file's own (from
 * NAMED_BASE up) that c10c__fd_reserve, c10c__fd_map, c10c__fd_stat and c10c__fd_close
 * understand. Such an object lives while any process holds a handle or a view of it, so unlink
 * has nothing to do, and no name outlives its last user, even one killed. Memory files (memfd)
 * and taking another process's descriptors (pidfd) have no counterpart: those return ENOSYS,
 * which c10c__errno_text words as the sharing strategy being unavailable on Windows.
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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "shm.h"
#include "sysmem.h"

int c10c__shm_memfd(int *out_fd, const char *label) {
  (void)label;
  *out_fd = -1;
  return ENOSYS;
}

/* Open named objects: the mapping (NULL for a name made but not yet sized by
 * c10c__fd_reserve) and its name. A storage holds no descriptor (it closes it once mapped), so a
 * few slots serve. */
enum { NAMED_BASE = 1 << 24, NAMED_SLOTS = 64, NAME_CAPACITY = 256 };
typedef struct {
  bool used;
  HANDLE mapping;
  char name[NAME_CAPACITY];
} named_object;
static named_object objects[NAMED_SLOTS];
static SRWLOCK objects_lock = SRWLOCK_INIT;

static named_object *named_of(int fd) {
  return fd >= NAMED_BASE && fd < NAMED_BASE + NAMED_SLOTS && objects[fd - NAMED_BASE].used
             ? &objects[fd - NAMED_BASE]
             : NULL;
}

static int errno_of(DWORD code);

/* Every view c10c__fd_map made, so that c10c__os_unmap knows a view from VirtualAlloc's pages.
 * A named object's name lasts only while some process holds a handle to it (a view alone keeps
 * the memory, not the name), so each view of one keeps a handle of its own (NULL for a view of a
 * regular file), closed when the view is unmapped. */
typedef struct view_handle {
  struct view_handle *next;
  void *view;
  HANDLE mapping;
} view_handle;
static view_handle *views;     /* under objects_lock */
static _Atomic int view_count; /* read without it: none, nothing to look up */

bool c10c__shm_view_unmapped(void *view) {
  if (atomic_load_explicit(&view_count, memory_order_relaxed) == 0) return false;
  AcquireSRWLockExclusive(&objects_lock);
  view_handle **at = &views;
  while (*at != NULL && (*at)->view != view) at = &(*at)->next;
  view_handle *found = *at;
  if (found != NULL) {
    *at = found->next;
    atomic_fetch_sub(&view_count, 1);
  }
  ReleaseSRWLockExclusive(&objects_lock);
  if (found == NULL) return false;
  UnmapViewOfFile(view);
  if (found->mapping != NULL) CloseHandle(found->mapping);
  free(found);
  return true;
}

static int remember_view(void *view, HANDLE mapping) {
  /* not a memory request for the test hook: mmap on POSIX makes none */
  view_handle *v = malloc(sizeof *v);
  if (v == NULL) return ENOMEM;
  v->view = view;
  v->mapping = mapping;
  AcquireSRWLockExclusive(&objects_lock);
  v->next = views;
  views = v;
  atomic_fetch_add(&view_count, 1);
  ReleaseSRWLockExclusive(&objects_lock);
  return 0;
}

int c10c__shm_open(int *out_fd, const char *name, bool create) {
  *out_fd = -1;
  if (strlen(name) >= NAME_CAPACITY) return ENAMETOOLONG;
  HANDLE h = OpenFileMappingA(FILE_MAP_ALL_ACCESS, FALSE, name);
  if (h == NULL && !create) return errno_of(GetLastError());
  if (h != NULL && create) {
    CloseHandle(h);
    return EEXIST;
  }
  AcquireSRWLockExclusive(&objects_lock);
  int i = 0;
  while (i < NAMED_SLOTS && objects[i].used) i++;
  if (i < NAMED_SLOTS) {
    objects[i].used = true;
    objects[i].mapping = h; /* created: made with its size by c10c__fd_reserve */
    strcpy(objects[i].name, name);
  }
  ReleaseSRWLockExclusive(&objects_lock);
  if (i == NAMED_SLOTS) {
    if (h != NULL) CloseHandle(h);
    return EMFILE;
  }
  *out_fd = NAMED_BASE + i;
  return 0;
}

int c10c__shm_unlink(const char *name) {
  (void)name;
  return 0; /* the object goes with its last handle and view */
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
  named_object *o = named_of(fd);
  if (o != NULL) {
    if (o->mapping == NULL) return EINVAL;
    /* the section's size, in whole pages: what a view of all of it spans */
    void *view = MapViewOfFile(o->mapping, FILE_MAP_READ, 0, 0, 0);
    if (view == NULL) return errno_of(GetLastError());
    MEMORY_BASIC_INFORMATION info;
    SIZE_T got = VirtualQuery(view, &info, sizeof info);
    UnmapViewOfFile(view);
    if (got == 0) return EINVAL;
    out->size = (int64_t)info.RegionSize;
    out->regular = true;
    out->uid = 0;
    return 0;
  }
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
  named_object *o = named_of(fd);
  if (o != NULL) {
    if (o->mapping != NULL) return size <= 0 ? 0 : EINVAL; /* sized once, when made */
    if (size <= 0) return EINVAL;
    /* committed now (SEC_COMMIT), against the system's commit limit: no page fault later */
    uint64_t s = (uint64_t)size;
    HANDLE h = CreateFileMappingA(INVALID_HANDLE_VALUE, NULL, PAGE_READWRITE | SEC_COMMIT,
                                  (DWORD)(s >> 32), (DWORD)s, o->name);
    DWORD code = GetLastError();
    if (h == NULL) return code == ERROR_COMMITMENT_LIMIT ? ENOSPC : errno_of(code);
    if (code == ERROR_ALREADY_EXISTS) { /* made by another process since the open */
      CloseHandle(h);
      return EEXIST;
    }
    o->mapping = h;
    return 0;
  }
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

int c10c__fd_shrink_sealed(bool *out, int fd) {
  (void)fd;
  *out = false;
  return ENOSYS;
}

int c10c__fd_truncate(int fd, int64_t size) {
  return named_of(fd) != NULL ? EINVAL : _chsize_s(fd, size);
}

static int errno_of(DWORD code) {
  switch (code) {
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
    case ERROR_COMMITMENT_LIMIT: return ENOMEM;
    case ERROR_ACCESS_DENIED: return EACCES;
    case ERROR_DISK_FULL: return ENOSPC;
    case ERROR_FILE_INVALID: return ENXIO;
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND: return ENOENT;
    case ERROR_INVALID_NAME: return EINVAL;
    default: return EINVAL;
  }
}

int c10c__fd_map(void **out, int fd, size_t size, bool shared, bool populate) {
  (void)populate; /* only a speed-up on Linux */
  *out = NULL;
  if (size == 0) return EINVAL; /* as mmap answers */
  named_object *o = named_of(fd);
  if (o != NULL) {
    if (o->mapping == NULL) return EINVAL;
    HANDLE self = GetCurrentProcess(), mine;
    if (!DuplicateHandle(self, o->mapping, self, &mine, 0, FALSE, DUPLICATE_SAME_ACCESS))
      return errno_of(GetLastError());
    void *view = MapViewOfFile(o->mapping, shared ? FILE_MAP_WRITE : FILE_MAP_COPY, 0, 0, size);
    int err = view != NULL ? remember_view(view, mine) : errno_of(GetLastError());
    if (err != 0) {
      if (view != NULL) UnmapViewOfFile(view);
      CloseHandle(mine);
      return err;
    }
    *out = view;
    return 0;
  }
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
  int err = remember_view(p, NULL);
  if (err != 0) {
    UnmapViewOfFile(p);
    return err;
  }
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
  if (named_of(fd) != NULL) return EINVAL;
  int d = _dup(fd);
  if (d < 0) return errno;
  *out_fd = d;
  return 0;
}

void c10c__fd_close(int fd) {
  named_object *o = named_of(fd);
  if (o != NULL) {
    if (o->mapping != NULL) CloseHandle(o->mapping);
    AcquireSRWLockExclusive(&objects_lock);
    o->used = false;
    o->mapping = NULL;
    ReleaseSRWLockExclusive(&objects_lock);
  } else if (fd >= 0) {
    _close(fd);
  }
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
    return "not available on Windows (sharing by file descriptor needs memory files and "
           "descriptor passing; share by name instead)";
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
