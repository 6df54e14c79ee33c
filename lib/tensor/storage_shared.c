/* Storages any process can open: bytes moved into a memory file (shared by file descriptor), a
 * named POSIX shared memory object with torch's RefcountedMapAllocator header (shared by name),
 * or a mapped regular file (torch's from_file). The mapping is the storage's data pointer; its
 * context (a `mapping`) says what backs it, and its deleter unmaps, closes and unlinks.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "shm.h"
#include "storage_internal.h"
#include "sysmem.h"

/* torch's map_alloc_alignment: a named object holds this header, then the bytes
 * (MapAllocator.cpp: RefcountedMapAllocator maps size + 64, its MapInfo's atomic<int> refcount
 * at offset 0, data() at base + 64). */
enum { HEADER = 64 };
_Static_assert(sizeof(_Atomic int32_t) == 4, "torch's MapInfo holds a 4-byte std::atomic<int>");
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "a refcount shared between processes must be lock-free");

typedef enum {
  BY_FD,        /* a memory file: the fd (if kept) is the handle */
  BY_NAME,      /* a named shm object with the refcount header */
  FILE_SHARED,  /* a regular file mapped MAP_SHARED (from_file shared=True) */
  FILE_PRIVATE, /* a regular file mapped copy-on-write (from_file shared=False) */
} backing;

typedef struct {
  void *base;  /* the mapping (NULL for 0 bytes of a memory file) */
  size_t size; /* its length */
  int fd;      /* BY_FD: the fd kept, or -1 */
  backing kind;
  int64_t fd_limit; /* BY_FD, fd -1: the soft RLIMIT_NOFILE when the received fd was closed */
  char *name;       /* BY_NAME: the shm name; FILE_*: the path */
} mapping;

static void free_mapping(void *ctx) {
  mapping *m = ctx;
  if (m->kind == BY_NAME && m->base != NULL) {
    /* the last user unlinks (RefcountedMapAllocator::close); ENOENT when a torch manager
     * process already did. A count that another process dropped to 0 under this user is left
     * at 0 (never below) and the name goes too: nobody would unlink it later. */
    if (c10c__shm_count_release(m->base) <= 1) c10c__shm_unlink(m->name);
  }
  c10c__os_unmap(m->base, m->size);
  c10c__fd_close(m->fd);
  c10c__free(m->name);
  c10c__free(m);
}

static mapping *mapping_of(const c10c_storage *s) {
  const c10c_data_ptr *dp = c10c__storage_data_ptr_ref(s);
  return dp->deleter == free_mapping ? dp->ctx : NULL;
}

static char *copy_string(const char *text) {
  size_t n = strlen(text) + 1;
  char *copy = c10c__malloc(n);
  if (copy != NULL) memcpy(copy, text, n);
  return copy;
}

static c10c_status out_of_memory(const char *what) {
  return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory %s", what);
}

static c10c_status check_cpu(const c10c_storage *s, const char *op) {
  if (c10c_storage_device(s).type != C10C_DEVICE_TYPE_CPU)
    return c10c__fail(C10C_STATUS_ERROR, "%s: only available on CPU", op); /* torch's words */
  return C10C_STATUS_OK;
}

/* Reserves size bytes of fd's file; the error names the size and the free space. */
static c10c_status reserve(int fd, int64_t size, const char *what) {
  int err = c10c__fd_reserve(fd, size);
  if (err == 0) return C10C_STATUS_OK;
  char buf[128];
  int64_t free_bytes = c10c__fd_free_space(fd);
  char free_text[64] = "unknown";
  if (free_bytes >= 0) snprintf(free_text, sizeof free_text, "%lld", (long long)free_bytes);
  /* a full tmpfs is memory running out */
  return c10c__fail(err == ENOSPC || err == ENOMEM ? C10C_STATUS_OUT_OF_MEMORY : C10C_STATUS_ERROR,
                    "cannot reserve %lld bytes of %s: %s (%d); %s bytes free on its file system",
                    (long long)size, what, c10c__errno_text(err, buf, sizeof buf), err, free_text);
}

static c10c_status map_failed(int err, int64_t size, const char *what) {
  char buf[128];
  return c10c__fail(err == ENOMEM ? C10C_STATUS_OUT_OF_MEMORY : C10C_STATUS_ERROR,
                    "unable to mmap %lld bytes from %s: %s (%d)", (long long)size, what,
                    c10c__errno_text(err, buf, sizeof buf), err);
}

/* size >= 0 bytes that one mapping can span: beyond PTRDIFF_MAX (a 32-bit platform) mmap's
 * size_t would truncate them, so the mapping fails as mmap would, before a file is reserved
 * or grown for it. */
static c10c_status check_mappable(int64_t size, const char *what) {
  if ((uint64_t)size <= (uint64_t)PTRDIFF_MAX) return C10C_STATUS_OK;
  return map_failed(ENOMEM, size, what);
}

/* A new memory file of nbytes, reserved and mapped. With populate (a copy into it follows), its
 * pages are also mapped at once; without (fresh memory that the caller fills), they come at first
 * touch: reserved, so a touch never meets a full file system, and the caller's one pass both
 * faults them in and writes them, which is faster than mapping them first. */
static c10c_status new_memfd(mapping **out, int64_t nbytes, bool populate) {
  *out = NULL;
  c10c_status st = check_mappable(nbytes, "a shared memory file");
  if (st != C10C_STATUS_OK) return st;
  mapping *m = c10c__malloc(sizeof *m);
  if (m == NULL) return out_of_memory("sharing a storage");
  *m = (mapping){NULL, 0, -1, BY_FD, 0, NULL};
  char buf[128];
  int err = c10c__shm_memfd(&m->fd, "c10c_shared_storage");
  if (err != 0) {
    c10c__free(m);
    return c10c__fail(C10C_STATUS_ERROR, "unable to create a shared memory file: %s (%d)",
                      c10c__errno_text(err, buf, sizeof buf), err);
  }
  st = reserve(m->fd, nbytes, "shared memory");
  /* receivers check the size once; sealed, it cannot shrink under them later */
  if (st == C10C_STATUS_OK && (err = c10c__fd_seal_shrinking(m->fd)) != 0)
    st = c10c__fail(C10C_STATUS_ERROR, "unable to seal a shared memory file: %s (%d)",
                    c10c__errno_text(err, buf, sizeof buf), err);
  if (st == C10C_STATUS_OK && nbytes > 0) {
    err = c10c__fd_map(&m->base, m->fd, (size_t)nbytes, true, populate);
    if (err == 0)
      m->size = (size_t)nbytes;
    else
      st = map_failed(err, nbytes, "a shared memory file");
  }
  if (st != C10C_STATUS_OK) {
    free_mapping(m);
    return st;
  }
  *out = m;
  return C10C_STATUS_OK;
}

static char name_char_ok(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

/* A new named object of nbytes + HEADER (O_EXCL, 0600), reserved and mapped, refcount 1;
 * populate as for new_memfd. */
static c10c_status new_named(mapping **out, int64_t nbytes, bool populate) {
  *out = NULL;
  if (nbytes > INT64_MAX - HEADER)
    return c10c__fail(C10C_STATUS_ERROR, "cannot share %lld bytes by name: too large",
                      (long long)nbytes);
  c10c_status st = check_mappable(nbytes + HEADER, "a shared memory object");
  if (st != C10C_STATUS_OK) return st;
  mapping *m = c10c__malloc(sizeof *m);
  char *name = c10c__malloc(64);
  if (m == NULL || name == NULL) {
    c10c__free(m);
    c10c__free(name);
    return out_of_memory("sharing a storage");
  }
  *m = (mapping){NULL, 0, -1, BY_NAME, 0, name};
  char buf[128];
  int fd = -1, err = EEXIST;
  for (int attempt = 0; attempt < 16 && err == EEXIST; attempt++) {
    snprintf(name, 64, "/c10c_%lld_%016llx", (long long)c10c__process_id(),
             (unsigned long long)c10c__random64());
    err = c10c__shm_open(&fd, name, true);
  }
  if (err != 0) {
    st = c10c__fail(C10C_STATUS_ERROR, "unable to create shared memory object <%s>: %s (%d)", name,
                    c10c__errno_text(err, buf, sizeof buf), err);
    free_mapping(m);
    return st;
  }
  size_t size = (size_t)(nbytes + HEADER);
  st = reserve(fd, nbytes + HEADER, "shared memory");
  if (st == C10C_STATUS_OK) {
    err = c10c__fd_map(&m->base, fd, size, true, populate);
    if (err == 0)
      m->size = size;
    else
      st = map_failed(err, (int64_t)size, "a shared memory object");
  }
  c10c__fd_close(fd); /* the name is the handle: no descriptor per storage */
  if (st != C10C_STATUS_OK) {
    c10c__shm_unlink(name);
    free_mapping(m);
    return st;
  }
  atomic_init((_Atomic int32_t *)m->base, 1); /* nobody else knows the name yet */
  *out = m;
  return C10C_STATUS_OK;
}

static void *mapping_data(const mapping *m) {
  if (m->base == NULL) return NULL;
  return m->kind == BY_NAME ? (char *)m->base + HEADER : m->base;
}

/* Moves storage's bytes into m (one copy) and makes m its data pointer; frees m on failure. */
static c10c_status move_into(c10c_storage *s, mapping *m) {
  int64_t nbytes = c10c_storage_nbytes(s);
  void *data = mapping_data(m);
  if (nbytes > 0) memcpy(data, c10c__storage_data(s), (size_t)nbytes);
  c10c_data_ptr fresh = {data, m, free_mapping, {C10C_DEVICE_TYPE_CPU, -1}};
  c10c_status st = c10c__storage_install_shared(s, fresh);
  if (st != C10C_STATUS_OK) free_mapping(m); /* a name's count drops to 0: unlinked */
  return st;
}

/* A new storage over m (nbytes), not resizable, shared unless a privately mapped file; frees m
 * on failure. */
static c10c_status wrap(c10c_storage **out, mapping *m, int64_t nbytes) {
  c10c_status st = c10c_storage_new_external(
      out, mapping_data(m), nbytes, (c10c_device){C10C_DEVICE_TYPE_CPU, -1}, free_mapping, m);
  if (st != C10C_STATUS_OK) {
    free_mapping(m);
    return st;
  }
  c10c__storage_set_shared(*out, m->kind != FILE_PRIVATE);
  return C10C_STATUS_OK;
}

/* ---- by file descriptor ---- */

c10c_status c10c_storage_share_fd(c10c_storage *storage) {
  C10C__CHECK_NOT_NULL(storage);
  c10c_status st = check_cpu(storage, "_share_fd_");
  if (st != C10C_STATUS_OK) return st;
  mapping *old = mapping_of(storage);
  if (old != NULL && old->kind != FILE_PRIVATE) return C10C_STATUS_OK; /* shared already */
  mapping *m;
  st = new_memfd(&m, c10c_storage_nbytes(storage), true);
  if (st != C10C_STATUS_OK) return st;
  return move_into(storage, m);
}

c10c_status c10c_storage_share_memory(c10c_storage *storage) {
  C10C__CHECK_NOT_NULL(storage);
  /* torch's share_memory_: CUDA storages are shared through IPC as they are */
  if (c10c_storage_device(storage).type == C10C_DEVICE_TYPE_CUDA) return C10C_STATUS_OK;
#ifdef _WIN32
  /* torch's file_system strategy, its only one on Windows (no memory files to pass) */
  return c10c_storage_share_filename(storage);
#else
  return c10c_storage_share_fd(storage);
#endif
}

c10c_status c10c_storage_shared_fd(int *out_fd, int64_t *out_nbytes, const c10c_storage *storage) {
  C10C__CHECK_NOT_NULL(out_fd);
  C10C__CHECK_NOT_NULL(out_nbytes);
  *out_fd = -1;
  *out_nbytes = 0;
  C10C__CHECK_NOT_NULL(storage);
  mapping *m = mapping_of(storage);
  if (m == NULL || m->kind == FILE_PRIVATE)
    return c10c__fail(C10C_STATUS_ERROR,
                      "storage is not shared by file descriptor; call share_fd first");
  if (m->kind == BY_NAME)
    return c10c__fail(C10C_STATUS_ERROR, "storage is shared by name (%s), not by file descriptor",
                      m->name);
  if (m->kind == FILE_SHARED)
    return c10c__fail(C10C_STATUS_ERROR,
                      "storage maps the file <%s>, not a shared memory file descriptor", m->name);
  if (m->fd < 0)
    return c10c__fail(C10C_STATUS_ERROR,
                      "storage was received by file descriptor when this process had half of its "
                      "open file limit (RLIMIT_NOFILE %lld) in use, so its descriptor was closed "
                      "after mapping; it cannot be shared by file descriptor again (clone it)",
                      (long long)m->fd_limit);
  *out_fd = m->fd;
  *out_nbytes = c10c_storage_nbytes(storage);
  return C10C_STATUS_OK;
}

static c10c_status check_size(int64_t nbytes, const char *what) {
  if (nbytes < 0)
    return c10c__fail(C10C_STATUS_ERROR, "unable to mmap %lld bytes from %s: negative size",
                      (long long)nbytes, what);
  return C10C_STATUS_OK;
}

c10c_status c10c_storage_new_shared_fd(c10c_storage **out, int fd, int64_t nbytes) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  c10c_status st = check_size(nbytes, "a shared memory file descriptor");
  if (st == C10C_STATUS_OK) st = check_mappable(nbytes, "a shared memory file descriptor");
  if (st != C10C_STATUS_OK) return st;
  char buf[128];
  c10c__fd_info info;
  int err = fd < 0 ? EBADF : c10c__fd_stat(&info, fd);
  if (err != 0)
    return c10c__fail(C10C_STATUS_ERROR, "could not use shared memory file descriptor %d: %s (%d)",
                      fd, c10c__errno_text(err, buf, sizeof buf), err);
  if (!info.regular)
    return c10c__fail(C10C_STATUS_ERROR,
                      "file descriptor %d is not a shared memory file (not a regular file)", fd);
  /* The size is checked once, so it must never shrink: a sender that cuts pages from under the
   * mapping would end this process with SIGBUS at its next touch (torch maps any file). Seals
   * never come off, so a file sealed now stays sealed; its size is read after the seal. */
  bool sealed = false;
  err = c10c__fd_shrink_sealed(&sealed, fd);
  if (err == 0 && !sealed)
    return c10c__fail(C10C_STATUS_ERROR,
                      "file descriptor %d is not sealed against shrinking (F_SEAL_SHRINK): its "
                      "sender could shrink it under this process's mapping (SIGBUS); libc10c and "
                      "pyc10 send sealed memory files, torch's _share_fd_cpu_ does not (share "
                      "those by name: the file_system strategy)",
                      fd);
  if (err == 0) err = c10c__fd_stat(&info, fd);
  if (err != 0)
    return c10c__fail(C10C_STATUS_ERROR,
                      "cannot check that file descriptor %d is sealed against shrinking: %s (%d)",
                      fd, c10c__errno_text(err, buf, sizeof buf), err);
  if (info.size < nbytes)
    return c10c__fail(C10C_STATUS_ERROR,
                      "storage size %lld is larger than the mapping behind file descriptor %d "
                      "(%lld bytes)",
                      (long long)nbytes, fd, (long long)info.size);
  mapping *m = c10c__malloc(sizeof *m);
  if (m == NULL) return out_of_memory("receiving a storage");
  *m = (mapping){NULL, 0, -1, BY_FD, 0, NULL};
  if (nbytes > 0) {
    err = c10c__fd_map(&m->base, fd, (size_t)nbytes, true, false);
    if (err != 0) {
      c10c__free(m);
      return map_failed(err, nbytes, "a shared memory file descriptor");
    }
    m->size = (size_t)nbytes;
  }
  /* Keep a descriptor (so the storage can be shared on) only while that costs little: past half
   * the soft limit, received storages would exhaust the process's descriptors. */
  int64_t limit = c10c__fd_soft_limit();
  int kept = -1;
  if (c10c__fd_dup(&kept, fd) == 0 && (int64_t)kept >= limit / 2) {
    c10c__fd_close(kept);
    kept = -1;
  }
  m->fd = kept;
  m->fd_limit = limit;
  return wrap(out, m, nbytes);
}

/* A new storage of nbytes fresh shared bytes from make (new_memfd, new_named): reserved, not
 * populated (the pages come as they are first written). */
static c10c_status new_using(c10c_storage **out, int64_t nbytes, const char *what,
                             c10c_status (*make)(mapping **, int64_t, bool)) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  c10c_status st = check_size(nbytes, what);
  if (st != C10C_STATUS_OK) return st;
  mapping *m;
  st = make(&m, nbytes, false);
  if (st != C10C_STATUS_OK) return st;
  return wrap(out, m, nbytes);
}

c10c_status c10c_storage_new_using_fd(c10c_storage **out, int64_t nbytes) {
  return new_using(out, nbytes, "a shared memory file", new_memfd);
}

/* ---- by name ---- */

c10c_status c10c_storage_share_filename(c10c_storage *storage) {
  C10C__CHECK_NOT_NULL(storage);
  c10c_status st = check_cpu(storage, "_share_filename_");
  if (st != C10C_STATUS_OK) return st;
  mapping *old = mapping_of(storage);
  if (old != NULL && old->kind == BY_NAME) return C10C_STATUS_OK;
  mapping *m;
  st = new_named(&m, c10c_storage_nbytes(storage), true);
  if (st != C10C_STATUS_OK) return st;
  return move_into(storage, m);
}

c10c_status c10c_storage_shared_name(const char **out, const c10c_storage *storage) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  C10C__CHECK_NOT_NULL(storage);
  mapping *m = mapping_of(storage);
  if (m == NULL || m->kind != BY_NAME)
    return c10c__fail(C10C_STATUS_ERROR,
                      "storage is not shared by name; call share_filename first");
  *out = m->name;
  return C10C_STATUS_OK;
}

c10c_status c10c_storage_shared_refcount_add(int32_t *out_before, c10c_storage *storage,
                                             int32_t delta) {
  C10C__CHECK_NOT_NULL(out_before);
  *out_before = 0;
  C10C__CHECK_NOT_NULL(storage);
  mapping *m = mapping_of(storage);
  if (m == NULL || m->kind != BY_NAME || m->base == NULL)
    return c10c__fail(C10C_STATUS_ERROR,
                      "storage is not shared by name; call share_filename first");
  if (!c10c__shm_count_add(out_before, m->base, delta))
    return c10c__fail(C10C_STATUS_OVERFLOW,
                      "shared memory object <%s>: cannot add %d to the reference count %d: it "
                      "would be %lld, outside 0 to INT32_MAX (2147483647); the count is unchanged",
                      m->name, (int)delta, (int)*out_before, (long long)*out_before + delta);
  return C10C_STATUS_OK;
}

static c10c_status check_name(const char *name) {
  size_t n = strlen(name);
  bool ok = n >= 2 && n <= 255 && name[0] == '/';
  for (size_t i = 1; ok && i < n; i++) ok = name_char_ok(name[i]);
  if (!ok)
    return c10c__fail(C10C_STATUS_ERROR, /* a RuntimeError, as torch's failed shm_open */
                      "invalid shared memory name <%.64s%s>: expected '/' then 1 to 254 letters, "
                      "digits, '_', '-' or '.'",
                      name, n > 64 ? "..." : "");
  return C10C_STATUS_OK;
}

c10c_status c10c_storage_new_shared_filename(c10c_storage **out, const char *name, int64_t nbytes) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  C10C__CHECK_NOT_NULL(name);
  c10c_status st = check_name(name);
  if (st == C10C_STATUS_OK) st = check_size(nbytes, "a shared memory object");
  if (st != C10C_STATUS_OK) return st;
  if (nbytes > INT64_MAX - HEADER)
    return c10c__fail(C10C_STATUS_ERROR, "shared memory object <%s>: %lld bytes is too large", name,
                      (long long)nbytes);
  st = check_mappable(nbytes + HEADER, "a shared memory object");
  if (st != C10C_STATUS_OK) return st;
  char buf[128];
  int fd;
  int err = c10c__shm_open(&fd, name, false);
  if (err != 0) /* torch's words */
    return c10c__fail(C10C_STATUS_ERROR,
                      "unable to open shared memory object <%s> in read-write mode: %s (%d)", name,
                      c10c__errno_text(err, buf, sizeof buf), err);
  c10c__fd_info info;
  err = c10c__fd_stat(&info, fd);
  if (err != 0) {
    st = c10c__fail(C10C_STATUS_ERROR, "unable to stat shared memory object <%s>: %s (%d)", name,
                    c10c__errno_text(err, buf, sizeof buf), err);
  } else if (info.uid != c10c__effective_uid()) {
    st = c10c__fail(C10C_STATUS_ERROR,
                    "shared memory object <%s> belongs to user %u, not to this process's user "
                    "%u: a handle from another user is refused",
                    name, (unsigned)info.uid, (unsigned)c10c__effective_uid());
  } else if (!info.regular) {
    st = c10c__fail(C10C_STATUS_ERROR, "shared memory object <%s> is not a regular file", name);
  } else if (info.size < nbytes + HEADER) {
    st = c10c__fail(C10C_STATUS_ERROR,
                    "shared memory object <%s> holds %lld bytes, fewer than the %lld a storage of "
                    "%lld bytes needs with its %d-byte reference count header",
                    name, (long long)info.size, (long long)(nbytes + HEADER), (long long)nbytes,
                    (int)HEADER);
  }
  mapping *m = NULL;
  char *copy = NULL;
  if (st == C10C_STATUS_OK) {
    m = c10c__malloc(sizeof *m);
    copy = copy_string(name);
    if (m == NULL || copy == NULL) st = out_of_memory("receiving a storage");
  }
  size_t size = (size_t)(nbytes + HEADER);
  void *base = NULL;
  if (st == C10C_STATUS_OK) {
    err = c10c__fd_map(&base, fd, size, true, false);
    if (err != 0) st = map_failed(err, (int64_t)size, "a shared memory object");
  }
  c10c__fd_close(fd);
  if (st != C10C_STATUS_OK) {
    c10c__free(m);
    c10c__free(copy);
    return st;
  }
  /* +1 unless every user has gone (a stale name whose last user unlinked it, or a file that
   * never had a count) or the count is full: torch adds blindly (and overflows at INT32_MAX),
   * we refuse to revive it or to wrap it */
  int32_t seen = c10c__shm_count_acquire(base);
  if (seen <= 0 || seen == INT32_MAX) {
    c10c__os_unmap(base, size);
    c10c__free(m);
    c10c__free(copy);
    if (seen == INT32_MAX)
      return c10c__fail(C10C_STATUS_OVERFLOW,
                        "shared memory object <%s> cannot be opened: its reference count is "
                        "already %d (INT32_MAX), the most torch's header counts; the count is "
                        "unchanged",
                        name, (int)seen);
    return c10c__fail(C10C_STATUS_ERROR,
                      "shared memory object <%s> is stale: its reference count is %d (every user "
                      "released it)",
                      name, (int)seen);
  }
  *m = (mapping){base, size, -1, BY_NAME, 0, copy};
  return wrap(out, m, nbytes);
}

c10c_status c10c_storage_new_using_filename(c10c_storage **out, int64_t nbytes) {
  return new_using(out, nbytes, "a shared memory object", new_named);
}

/* ---- regular files ---- */

c10c_status c10c_storage_new_from_file(c10c_storage **out, const char *filename, bool shared,
                                       int64_t nbytes) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  C10C__CHECK_NOT_NULL(filename);
  mapping *m = c10c__malloc(sizeof *m);
  char *copy = copy_string(filename);
  if (m == NULL || copy == NULL) {
    c10c__free(m);
    c10c__free(copy);
    return out_of_memory("mapping a file");
  }
  *m = (mapping){NULL, 0, -1, shared ? FILE_SHARED : FILE_PRIVATE, 0, copy};
  if (nbytes == 0) return wrap(out, m, 0); /* torch opens nothing for 0 bytes */
  char buf[128];
  int fd;
  const char *mode = shared ? "read-write" : "read-only";
  int err = c10c__file_open(&fd, filename, shared, shared);
  if (err != 0) {
    free_mapping(m);
    return c10c__fail(C10C_STATUS_ERROR, "unable to open file <%s> in %s mode: %s (%d)", filename,
                      mode, c10c__errno_text(err, buf, sizeof buf), err);
  }
  c10c_status st = C10C_STATUS_OK;
  c10c__fd_info info;
  err = c10c__fd_stat(&info, fd);
  if (nbytes < 0 || (uint64_t)nbytes > (uint64_t)PTRDIFF_MAX) {
    /* torch's mmap of (size_t)-1, or beyond one mapping (32-bit): mmap's ENOMEM, said before
     * the file grows for it */
    st = c10c__fail(C10C_STATUS_ERROR,
                    "unable to mmap %lld bytes from file <%s>: Cannot allocate memory (12)",
                    (long long)nbytes, filename);
  } else if (err != 0) {
    st = c10c__fail(C10C_STATUS_ERROR, "unable to stat the file <%s>", filename);
  } else if (!info.regular) {
    st = c10c__fail(C10C_STATUS_ERROR, "file <%s> is not a regular file", filename);
  } else if (info.size < nbytes) {
    if (!shared)
      st = c10c__fail(C10C_STATUS_ERROR,
                      "file <%s> size <%lld> is smaller than the required mapping size <%lld>",
                      filename, (long long)info.size, (long long)nbytes);
    else /* grown and reserved, so writes through the mapping never fault */
      st = reserve(fd, nbytes, "file space");
  }
  if (st == C10C_STATUS_OK) {
    err = c10c__fd_map(&m->base, fd, (size_t)nbytes, shared, false);
    if (err == 0)
      m->size = (size_t)nbytes;
    else
      st = c10c__fail(C10C_STATUS_ERROR, "unable to mmap %lld bytes from file <%s>: %s (%d)",
                      (long long)nbytes, filename, c10c__errno_text(err, buf, sizeof buf), err);
  }
  c10c__fd_close(fd);
  if (st != C10C_STATUS_OK) {
    free_mapping(m);
    return st;
  }
  return wrap(out, m, nbytes);
}

c10c_status c10c_storage_filename(const char **out, const c10c_storage *storage) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  C10C__CHECK_NOT_NULL(storage);
  mapping *m = mapping_of(storage);
  if (m != NULL && m->kind == FILE_SHARED) *out = m->name;
  return C10C_STATUS_OK;
}
