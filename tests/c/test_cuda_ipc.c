/* CUDA storages and events shared between processes (include/c10c/cuda_ipc.h) through the
 * stand-in driver, whose device memory another process can map: torch's handle bytes, the
 * refusal in the exporting process, one mapping per handle per process, the producer's counter
 * and limbo, forged and stale handles, events ordering the consumer after the producer. The
 * other process is this executable run again ("child MODE INFO HANDLE"), sharing the stand-in's
 * clock through C10C_STUB_CLOCK. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static void *stub(const char *symbol) {
  void *handle = dlopen(getenv("C10C_CUDA_DRIVER"), RTLD_NOW | RTLD_NOLOAD);
  void *address = handle ? dlsym(handle, symbol) : NULL;
  if (handle) dlclose(handle);
  return address;
}

/* Whether the driver is the stand-in (tests/gpu/check.sh runs this test on a real GPU too):
 * checks of its own counters and clock only make sense there. */
static bool stand_in;
#define STAND_IN_ONLY(cond) (!stand_in || (cond))

static long stub_long(const char *symbol) {
  long (*fn)(void) = NULL;
  void *address = stub(symbol);
  memcpy(&fn, &address, sizeof address);
  return fn ? fn() : -1;
}

static long stub_calls(const char *entry) {
  long (*calls)(const char *) = NULL;
  void *address = stub("c10c_stub_calls");
  memcpy(&calls, &address, sizeof address);
  return calls ? calls(entry) : -1;
}

static void stub_enqueue(void *stream, uint64_t ticks) {
  void (*fn)(void *, uint64_t) = NULL;
  void *address = stub("c10c_stub_enqueue");
  memcpy(&fn, &address, sizeof address);
  if (fn) fn(stream, ticks);
}

static uint64_t stub_stream_busy(void *stream) {
  uint64_t (*fn)(void *) = NULL;
  void *address = stub("c10c_stub_stream_busy");
  memcpy(&fn, &address, sizeof address);
  return fn ? fn(stream) : 0;
}

static uint64_t stub_now(void) {
  uint64_t (*fn)(void) = NULL;
  void *address = stub("c10c_stub_now");
  memcpy(&fn, &address, sizeof address);
  return fn ? fn() : 0;
}

static void stub_advance(uint64_t ticks) {
  void (*fn)(uint64_t) = NULL;
  void *address = stub("c10c_stub_advance");
  memcpy(&fn, &address, sizeof address);
  if (fn) fn(ticks);
}

static void stub_set_capacity(size_t bytes) {
  void (*fn)(size_t) = NULL;
  void *address = stub("c10c_stub_set_capacity");
  memcpy(&fn, &address, sizeof address);
  if (fn) fn(bytes);
}

static const c10c_device cuda0 = {C10C_DEVICE_TYPE_CUDA, 0};

/* torch.cuda.empty_cache(): the CUDA allocator's cached segments back to the driver. */
static void cuda_empty_cache(void) {
  c10c_allocator *a = NULL;
  if (c10c_allocator_get(&a, C10C_DEVICE_TYPE_CUDA) == C10C_STATUS_OK) {
    c10c_allocator_empty_cache(a);
    c10c_allocator_release(a);
  }
}
static const c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};

/* A CUDA storage of n bytes, each set to value. */
static c10c_storage *cuda_storage(int64_t n, uint8_t value) {
  c10c_tensor *dev = NULL, *host = NULL;
  c10c_storage *s = NULL;
  if (c10c_tensor_empty(&dev, &n, 1, C10C_DTYPE_UINT8, cuda0, 0) != C10C_STATUS_OK) return NULL;
  if (c10c_tensor_empty(&host, &n, 1, C10C_DTYPE_UINT8, cpu, 0) == C10C_STATUS_OK) {
    memset(c10c_tensor_data(host), value, (size_t)n);
    if (c10c_tensor_copy_(dev, host) == C10C_STATUS_OK)
      s = c10c_storage_retain(c10c_tensor_storage(dev));
  }
  c10c_tensor_release(host);
  c10c_tensor_release(dev);
  return s;
}

/* Whether every byte of the storage is value (copied to the host through the driver). */
static bool storage_is(c10c_storage *s, uint8_t value) {
  int64_t n = c10c_storage_nbytes(s), zero = 0, one = 1;
  c10c_tensor *dev = NULL, *host = NULL;
  bool ok = c10c_tensor_new_from_storage(&dev, s, &n, &one, 1, zero, C10C_DTYPE_UINT8) ==
                C10C_STATUS_OK &&
            c10c_tensor_empty(&host, &n, 1, C10C_DTYPE_UINT8, cpu, 0) == C10C_STATUS_OK &&
            c10c_tensor_copy_(host, dev) == C10C_STATUS_OK;
  for (int64_t i = 0; ok && i < n; i++) ok = ((uint8_t *)c10c_tensor_data(host))[i] == value;
  c10c_tensor_release(host);
  c10c_tensor_release(dev);
  return ok;
}

static bool storage_fill(c10c_storage *s, uint8_t value) {
  int64_t n = c10c_storage_nbytes(s), one = 1;
  c10c_tensor *dev = NULL;
  bool ok =
      c10c_tensor_new_from_storage(&dev, s, &n, &one, 1, 0, C10C_DTYPE_UINT8) == C10C_STATUS_OK &&
      c10c_tensor_fill_(dev, &value) == C10C_STATUS_OK;
  c10c_tensor_release(dev);
  return ok;
}

/* ---- the other process ---- */

static void to_hex(char *out, const void *bytes, size_t n) {
  for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", ((const uint8_t *)bytes)[i]);
  out[2 * n] = '\0';
}

static size_t from_hex(void *bytes, size_t cap, const char *hex) {
  size_t n = strlen(hex) / 2;
  for (size_t i = 0; i < n && i < cap; i++) {
    unsigned v = 0;
    sscanf(hex + 2 * i, "%2x", &v);
    ((uint8_t *)bytes)[i] = (uint8_t)v;
  }
  return n < cap ? n : cap;
}

/* This executable's path as it was run (argv[0]); /proc/self/exe would name valgrind's tool
 * under valgrind, which refuses to be run directly. */
static const char *self_path = "/proc/self/exe";

typedef struct child {
  pid_t pid;
  int to_child; /* a byte written here lets a "hold" child go on */
} child;

static child spawn(const char *mode, const c10c_cuda_ipc_info *info, const uint8_t *handle,
                   size_t len) {
  char info_hex[2 * sizeof *info + 1], handle_hex[2 * 4096 + 1];
  to_hex(info_hex, info, sizeof *info);
  to_hex(handle_hex, handle, len);
  int fds[2];
  child c = {-1, -1};
  if (pipe(fds) != 0) return c;
  c.pid = fork();
  if (c.pid == 0) {
    dup2(fds[0], 0);
    close(fds[0]);
    close(fds[1]);
    char role[] = "child", mode_arg[32];
    snprintf(mode_arg, sizeof mode_arg, "%s", mode);
    char *argv[] = {(char *)(uintptr_t)self_path, role, mode_arg, info_hex, handle_hex, NULL};
    execv(self_path, argv);
    _exit(127);
  }
  close(fds[0]);
  c.to_child = fds[1];
  return c;
}

static int finish(child c) {
  if (c.to_child >= 0) close(c.to_child);
  int status = 0;
  if (c.pid <= 0 || waitpid(c.pid, &status, 0) != c.pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int run(const char *mode, const c10c_cuda_ipc_info *info, const uint8_t *handle,
               size_t len) {
  return finish(spawn(mode, info, handle, len));
}

/* The driver's own rule, below the library's cache: opening a handle the process has open
 * returns the same address with a count (CUDA's cuIpcOpenMemHandle documentation), each open is
 * closed once, and closing more often is refused. 0 when the driver behaves so. */
static int driver_opens_twice(const uint8_t *raw, const void *mapped) {
  typedef struct {
    char reserved[64];
  } mem_handle;
  int (*open_handle)(uint64_t *, mem_handle, unsigned) = NULL;
  int (*close_handle)(uint64_t) = NULL;
  void *o = stub("cuIpcOpenMemHandle_v2"), *c = stub("cuIpcCloseMemHandle");
  memcpy(&open_handle, &o, sizeof o);
  memcpy(&close_handle, &c, sizeof c);
  if (open_handle == NULL || close_handle == NULL) return 1;
  mem_handle h;
  memcpy(h.reserved, raw, sizeof h.reserved);
  uint64_t a = 0, b = 0;
  if (open_handle(&a, h, 1) != 0 || open_handle(&b, h, 1) != 0) return 2;
  if (a != b || a != (uint64_t)(uintptr_t)mapped) return 3;    /* the library's mapping too */
  return close_handle(a) == 0 && close_handle(b) == 0 ? 0 : 4; /* the library's open stays */
}

/* Closing an address that is no longer open: CUDA_ERROR_INVALID_VALUE (1) from the driver. */
static int driver_close(const void *mapped) {
  int (*close_handle)(uint64_t) = NULL;
  void *c = stub("cuIpcCloseMemHandle");
  memcpy(&close_handle, &c, sizeof c);
  return close_handle ? close_handle((uint64_t)(uintptr_t)mapped) : -1;
}

/* Nothing of another process's memory is mapped here (cuIpc mappings, expandable pages). */
static bool mapped_nothing(void) {
  return STAND_IN_ONLY(stub_long("c10c_stub_ipc_open_count") == 0 &&
                       stub_long("c10c_stub_mapped_bytes") == 0);
}

/* An 'e' handle's integers: little-endian on every target (lib/cuda/cuda_ipc.c). */
/* The user count at a counter file's offset 0: a native int32, as torch's RefcountedMapAllocator
 * keeps it (not little-endian like the rest of the header). */
static int32_t native_count(const uint8_t *d) {
  int32_t v;
  memcpy(&v, d, sizeof v);
  return v;
}

static uint64_t get_le(const uint8_t *d, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) v |= (uint64_t)d[i] << (8 * i);
  return v;
}

static void put_le32(uint8_t *d, uint32_t v) {
  for (int i = 0; i < 4; i++) d[i] = (uint8_t)(v >> (8 * i));
}

/* Refusals of forged handles of an expandable segment's pages: nothing stays mapped. */
static int forged_pages(const c10c_cuda_ipc_info *info, const uint8_t *handle, size_t len) {
  uint8_t bad[4096];
  c10c_storage *s = NULL;
  memcpy(bad, handle, len);
  put_le32(bad + 2, 999999999); /* no such process */
  if (c10c_storage_new_shared_cuda(&s, info, bad, len) != C10C_STATUS_ERROR ||
      strcmp(c10c_last_error_message(), "pidfd_open:No such process") != 0)
    return 50;
  memcpy(bad, handle, len);
  put_le32(bad + 2 + 24, 9999); /* not a descriptor of the producer */
  if (c10c_storage_new_shared_cuda(&s, info, bad, len) != C10C_STATUS_ERROR ||
      strcmp(c10c_last_error_message(), "pidfd_getfd: Bad file descriptor") != 0)
    return 51;
  put_le32(bad + 2 + 24, 0); /* the producer's stdin: not device memory */
  if (c10c_storage_new_shared_cuda(&s, info, bad, len) != C10C_STATUS_ERROR ||
      strstr(c10c_last_error_message(), "cuMemImportFromShareableHandle") == NULL)
    return 52;
  if (c10c_storage_new_shared_cuda(&s, info, handle, len - 4) != C10C_STATUS_INVALID_ARGUMENT ||
      strcmp(c10c_last_error_message(), "unexpected or illformed shareable handle type") != 0)
    return 53;
  c10c_cuda_ipc_info far = *info;
  far.storage_size_bytes = (int64_t)1 << 40;
  if (c10c_storage_new_shared_cuda(&s, &far, handle, len) != C10C_STATUS_INVALID_ARGUMENT)
    return 54;
  memcpy(bad, handle, len);
  bad[0] = 3; /* version 3's pages have another header: refused */
  if (c10c_storage_new_shared_cuda(&s, info, bad, len) != C10C_STATUS_INVALID_ARGUMENT ||
      strstr(c10c_last_error_message(), "future version") == NULL)
    return 56;
  return mapped_nothing() ? 0 : 55;
}

/* The consumer: the modes a test runs in the other process; the exit code is what it found
 * wrong (0: nothing). */
/* Passing s on fails with the reason when its counter file is swapped for one too small, or
 * (as root, who can give it away) for one of another user; the real file is put back. */
static bool counter_file_refused(c10c_storage *s, const char *name) {
  char path[128], saved[140];
  snprintf(path, sizeof path, "/dev/shm%s", name);
  snprintf(saved, sizeof saved, "%s.saved", path);
  if (rename(path, saved) != 0) return false;
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  c10c_cuda_ipc_info out = {.struct_size = sizeof out};
  uint8_t h[4096];
  bool ok = fd >= 0 && c10c_storage_share_cuda(&out, h, sizeof h, s) == C10C_STATUS_ERROR &&
            strstr(c10c_last_error_message(), "is not a CUDA IPC reference counter file") != NULL;
  if (!ok) fprintf(stderr, "too small: %s\n", c10c_last_error_message());
  if (ok && geteuid() == 0 && fchown(fd, 65534, 65534) == 0) {
    ok = c10c_storage_share_cuda(&out, h, sizeof h, s) == C10C_STATUS_ERROR &&
         strstr(c10c_last_error_message(), "belongs to another user") != NULL;
    if (!ok) fprintf(stderr, "another user's: %s\n", c10c_last_error_message());
  }
  if (fd >= 0) close(fd);
  unlink(path);
  return rename(saved, path) == 0 && ok;
}

/* A producer that exits: its storage shared, then freed with the consumer's reference given
 * back ("produce") or still held ("produce-held", in limbo at exit); returning from main runs
 * the library's exit hook. */
static int produce_and_exit(bool held) {
  c10c_storage *s = cuda_storage(4096, 0x11);
  c10c_cuda_ipc_info out = {.struct_size = sizeof out};
  uint8_t h[256];
  if (s == NULL || c10c_storage_share_cuda(&out, h, sizeof h, s) != C10C_STATUS_OK) return 60;
  if (!held && c10c_cuda_ipc_release_counter(out.ref_counter_handle, out.ref_counter_offset) !=
                   C10C_STATUS_OK)
    return 61;
  c10c_storage_release(s);
  return c10c_cuda_ipc_limbo_count() == (held ? 1 : 0) ? 0 : 62;
}

static int child_main(const char *mode, const char *info_hex, const char *handle_hex) {
  c10c_cuda_ipc_info info;
  uint8_t handle[4096];
  if (strncmp(mode, "produce_exit", 12) == 0) { /* ends with _exit: no exit hook runs */
    int code = produce_and_exit(true);
    if (strcmp(mode, "produce_exit-released") == 0) {
      c10c_cuda_ipc_release_files();
      c10c_cuda_ipc_release_files(); /* a second call does nothing */
    }
    _exit(code);
  }
  if (strncmp(mode, "produce", 7) == 0) return produce_and_exit(strcmp(mode, "produce-held") == 0);
  from_hex(&info, sizeof info, info_hex);
  size_t len = from_hex(handle, sizeof handle, handle_hex);
  c10c_storage *s = NULL, *again = NULL;
  if (strcmp(mode, "forged") == 0 && handle[1] == 'e') return forged_pages(&info, handle, len);
  if (strcmp(mode, "forged") == 0) { /* every refusal, nothing mapped */
    uint8_t bad[4096];
    memcpy(bad, handle, len);
    bad[2 + 34] ^= 0x5a; /* the stand-in's nonce: a handle of no allocation */
    if (c10c_storage_new_shared_cuda(&s, &info, bad, len) != C10C_STATUS_ERROR ||
        !STAND_IN_ONLY(strstr(c10c_last_error_message(), "CUDA_ERROR_INVALID_HANDLE") != NULL))
      return 10;
    memcpy(bad, handle, len);
    bad[2] ^= 0xff; /* not a handle at all */
    if (c10c_storage_new_shared_cuda(&s, &info, bad, len) != C10C_STATUS_ERROR ||
        !STAND_IN_ONLY(strstr(c10c_last_error_message(), "CUDA_ERROR_INVALID_VALUE") != NULL))
      return 11;
    memcpy(bad, handle, len);
    bad[0] = 3; /* version 3 keeps the 'c' payload: read (later torch builds write it) */
    if (c10c_storage_new_shared_cuda(&s, &info, bad, len) != C10C_STATUS_OK) return 17;
    c10c_storage_release(s);
    s = NULL;
    bad[0] = 4;
    if (c10c_storage_new_shared_cuda(&s, &info, bad, len) != C10C_STATUS_INVALID_ARGUMENT ||
        strcmp(c10c_last_error_message(),
               "received sharable handle from a future version of torch that this version does "
               "not know how to handle") != 0)
      return 12;
    bad[0] = 2, bad[1] = 'x';
    if (c10c_storage_new_shared_cuda(&s, &info, bad, len) != C10C_STATUS_INVALID_ARGUMENT ||
        strcmp(c10c_last_error_message(), "unexpected or illformed shareable handle type") != 0)
      return 13;
    c10c_cuda_ipc_info far = info;
    far.storage_offset_bytes = far.storage_offset_bytes + (16 << 20); /* past the segment */
    if (c10c_storage_new_shared_cuda(&s, &far, handle, len) != C10C_STATUS_INVALID_ARGUMENT)
      return 14;
    far = info;
    far.storage_size_bytes = (int64_t)1 << 40;
    if (c10c_storage_new_shared_cuda(&s, &far, handle, len) != C10C_STATUS_INVALID_ARGUMENT)
      return 15;
    if (!mapped_nothing()) return 16; /* every mapping closed */
    return 0;
  }
  if (strcmp(mode, "counter-refused") == 0) { /* the counter names no counter file */
    c10c_status st = c10c_storage_new_shared_cuda(&s, &info, handle, len);
    if (st == C10C_STATUS_OK) c10c_storage_release(s); /* would decrement "the counter" */
    if (st != C10C_STATUS_INVALID_ARGUMENT ||
        strstr(c10c_last_error_message(), "is not a CUDA IPC reference counter file") == NULL)
      return 70;
    return mapped_nothing() ? 0 : 71;
  }
  if (strcmp(mode, "stale") == 0) { /* the memory is gone (its event too: not waited for) */
    info.event_sync_required = false;
    if (c10c_storage_new_shared_cuda(&s, &info, handle, len) != C10C_STATUS_ERROR) return 20;
    /* a page's descriptor number may have been reused by then: refused by the driver, or
     * pidfd_getfd finds nothing */
    if (stand_in && handle[1] == 'c' &&
        strstr(c10c_last_error_message(), "CUDA_ERROR_INVALID_HANDLE") == NULL)
      return 21;
    return mapped_nothing() ? 0 : 22;
  }
  uint64_t before = stub_stream_busy(NULL);
  if (c10c_storage_new_shared_cuda(&s, &info, handle, len) != C10C_STATUS_OK) {
    fprintf(stderr, "child: %s\n", c10c_last_error_message());
    return 30;
  }
  if (!c10c_storage_is_received_cuda(s) || c10c_storage_nbytes(s) != info.storage_size_bytes)
    return 31;
  if (strcmp(mode, "event") == 0) { /* the stream waits for the producer's queued work */
    bool waited = stub_stream_busy(NULL) > before && stub_stream_busy(NULL) >= stub_now() + 10;
    c10c_storage_release(s); /* synchronizes the stream: the clock moves past the work */
    return waited ? 0 : 32;
  }
  if (!storage_is(s, 0x11)) return 33; /* the producer's bytes */
  if (strcmp(mode, "twice") == 0) {
    if (handle[1] == 'c' && driver_opens_twice(handle + 2, c10c_storage_data(s)) != 0) return 46;
    if (c10c_storage_new_shared_cuda(&again, &info, handle, len) != C10C_STATUS_OK) return 40;
    if (c10c_storage_data(again) != c10c_storage_data(s)) return 41;
    /* one mapping per process: one cuIpcOpenMemHandle, or one reservation of the pages */
    bool pages = handle[1] == 'e';
    if (!stand_in) { /* the driver's own count is not visible */
      c10c_storage_release(again);
      c10c_storage_release(s);
      return 0;
    }
    if (!pages && stub_long("c10c_stub_ipc_open_count") != 1) return 42;
    /* the library opened once; driver_opens_twice twice more, straight through the driver */
    if (stub_calls(pages ? "cuMemAddressReserve" : "cuIpcOpenMemHandle_v2") != (pages ? 1 : 3))
      return 43;
    c10c_storage_release(again);
    if (!pages && stub_long("c10c_stub_ipc_open_count") != 1) return 44;
    if (pages && stub_long("c10c_stub_mapped_bytes") <= 0) return 44;
    void *mapped = c10c_storage_data(s);
    c10c_storage_release(s);
    if (!pages && driver_close(mapped) != 1) return 47; /* closed once per open, no more */
    return mapped_nothing() ? 0 : 45;
  }
  if (!storage_fill(s, 0x22)) return 34; /* the consumer writes */
  if (strcmp(mode, "hold") == 0) {
    char go;
    if (read(0, &go, 1) != 1) return 35;
  } else if (strcmp(mode, "reshare") == 0) { /* beyond torch: passed on, counted once more */
    c10c_cuda_ipc_info out = {.struct_size = sizeof out};
    uint8_t h[4096];
    if (!counter_file_refused(s, info.ref_counter_handle)) return 49;
    if (c10c_storage_share_cuda(&out, h, sizeof h, s) != C10C_STATUS_OK) return 36;
    if (out.handle_len != len || memcmp(h, handle, len) != 0 ||
        out.storage_offset_bytes != info.storage_offset_bytes ||
        strcmp(out.ref_counter_handle, info.ref_counter_handle) != 0 ||
        out.ref_counter_offset != info.ref_counter_offset || out.event_sync_required)
      return 37;
    c10c_storage_release(s);
    /* the new consumer's reference: released as it would */
    return c10c_cuda_ipc_release_counter(out.ref_counter_handle, out.ref_counter_offset) ==
                   C10C_STATUS_OK
               ? 0
               : 38;
  }
  c10c_storage_release(s);
  return mapped_nothing() ? 0 : 39;
}

/* ---- the tests ---- */

typedef struct shared {
  c10c_cuda_ipc_info info;
  uint8_t handle[256];
} shared;

static bool share(shared *out, c10c_storage *s) {
  memset(out, 0, sizeof *out);
  out->info.struct_size = sizeof out->info;
  c10c_status st = c10c_storage_share_cuda(&out->info, out->handle, sizeof out->handle, s);
  if (st != C10C_STATUS_OK) fprintf(stderr, "share: %s\n", c10c_last_error_message());
  return st == C10C_STATUS_OK;
}

TEST(the_handle_is_torchs_version_2_cudamalloc_handle_of_the_segment) {
  c10c_storage *a = cuda_storage(1000, 0x11), *b = cuda_storage(1000, 0x11);
  shared sa, sb;
  ASSERT_TRUE(share(&sa, a) && share(&sb, b));
  ASSERT_EQ(sa.info.handle_len, 66);
  ASSERT_EQ(sa.handle[0], 2);
  ASSERT_EQ(sa.handle[1], 'c');
  ASSERT_EQ(sa.info.device, 0);
  ASSERT_EQ(sa.info.storage_size_bytes, 1000);
  /* both blocks in one 2 MiB segment: the same cudaIpcMemHandle_t (the segment base's), the
   * second 1024 bytes in (blocks round to 512) */
  ASSERT_TRUE(memcmp(sa.handle, sb.handle, 66) == 0);
  ASSERT_EQ(sa.info.storage_offset_bytes, 0);
  ASSERT_EQ(sb.info.storage_offset_bytes, 1024);
  ASSERT_TRUE(sa.info.event_sync_required);
  ASSERT_EQ(strncmp(sa.info.ref_counter_handle, "/c10c_", 6), 0);
  ASSERT_EQ(sb.info.ref_counter_offset, sa.info.ref_counter_offset + 1);
  c10c_storage_release(a);
  c10c_storage_release(b);
  ASSERT_EQ(c10c_cuda_ipc_limbo_count(), 2); /* nobody released the counters */
  ASSERT_OK(c10c_cuda_ipc_release_counter(sa.info.ref_counter_handle, sa.info.ref_counter_offset));
  ASSERT_OK(c10c_cuda_ipc_release_counter(sb.info.ref_counter_handle, sb.info.ref_counter_offset));
  bool freed = false;
  ASSERT_OK(c10c_cuda_ipc_collect(&freed));
  ASSERT_TRUE(freed);
  ASSERT_EQ(c10c_cuda_ipc_limbo_count(), 0);
}

TEST(the_exporting_process_cannot_open_its_own_handle) {
  c10c_storage *a = cuda_storage(4096, 0x11), *opened = NULL;
  shared sa;
  ASSERT_TRUE(share(&sa, a));
  ASSERT_STATUS(C10C_STATUS_ERROR,
                c10c_storage_new_shared_cuda(&opened, &sa.info, sa.handle, sa.info.handle_len));
  ASSERT_TRUE(strstr(c10c_last_error_message(), "CUDA_ERROR_INVALID_CONTEXT") != NULL);
  ASSERT_TRUE(opened == NULL);
  c10c_storage_release(a);
  ASSERT_OK(c10c_cuda_ipc_release_counter(sa.info.ref_counter_handle, sa.info.ref_counter_offset));
  ASSERT_OK(c10c_cuda_ipc_collect(NULL));
}

TEST(a_child_reads_and_writes_the_producers_memory) {
  c10c_storage *a = cuda_storage(100000, 0x11);
  shared sa;
  ASSERT_TRUE(share(&sa, a));
  ASSERT_EQ(run("write", &sa.info, sa.handle, sa.info.handle_len), 0);
  ASSERT_TRUE(storage_is(a, 0x22)); /* the child's writes, in the producer's memory */
  c10c_storage_release(a);
  ASSERT_EQ(c10c_cuda_ipc_limbo_count(), 0); /* the child released its counter */
  ASSERT_TRUE(STAND_IN_ONLY(stub_long("c10c_stub_violations") == 0));
}

TEST(a_process_maps_a_handle_once_however_often_it_is_opened) {
  c10c_storage *a = cuda_storage(5000, 0x11);
  shared sa;
  ASSERT_TRUE(share(&sa, a));
  ASSERT_EQ(run("twice", &sa.info, sa.handle, sa.info.handle_len), 0);
  c10c_storage_release(a);
  ASSERT_EQ(c10c_cuda_ipc_limbo_count(), 0);
}

TEST(memory_a_consumer_holds_is_not_reused_until_it_lets_go) {
  c10c_storage *a = cuda_storage(8192, 0x11);
  shared sa;
  ASSERT_TRUE(share(&sa, a));
  void *where = c10c_storage_data(a);
  child c = spawn("hold", &sa.info, sa.handle, sa.info.handle_len);
  usleep(200000); /* the child has it open and has written (it waits for our byte) */
  c10c_storage_release(a);
  ASSERT_EQ(c10c_cuda_ipc_limbo_count(), 1); /* in limbo, not back in the allocator's pool */
  c10c_storage *b = cuda_storage(8192, 0x44);
  ASSERT_TRUE(c10c_storage_data(b) != where);
  ASSERT_OK(c10c_cuda_ipc_collect(NULL));
  ASSERT_EQ(c10c_cuda_ipc_limbo_count(), 1); /* still held */
  ASSERT_EQ(write(c.to_child, "x", 1), 1);
  ASSERT_EQ(finish(c), 0);
  bool freed = false;
  ASSERT_OK(c10c_cuda_ipc_collect(&freed));
  ASSERT_TRUE(freed);
  ASSERT_EQ(c10c_cuda_ipc_limbo_count(), 0);
  c10c_storage_release(b);
  /* nothing freed while mapped elsewhere */
  ASSERT_TRUE(STAND_IN_ONLY(stub_long("c10c_stub_violations") == 0));
}

TEST(out_of_memory_collects_blocks_no_consumer_holds) {
  if (!stand_in) return; /* a device of 64 MiB */
  stub_set_capacity(64 << 20);
  c10c_storage *a = cuda_storage(40 << 20, 0x11);
  ASSERT_TRUE(a != NULL);
  shared sa;
  ASSERT_TRUE(share(&sa, a));
  c10c_storage_release(a);
  ASSERT_EQ(c10c_cuda_ipc_limbo_count(), 1);
  ASSERT_OK(c10c_cuda_ipc_release_counter(sa.info.ref_counter_handle, sa.info.ref_counter_offset));
  c10c_storage *b = cuda_storage(40 << 20, 0x22); /* fits only once the limbo is collected */
  ASSERT_TRUE(b != NULL);
  ASSERT_EQ(c10c_cuda_ipc_limbo_count(), 0);
  c10c_storage_release(b);
  cuda_empty_cache();
  stub_set_capacity((size_t)1 << 30);
}

TEST(forged_and_out_of_bounds_handles_open_nothing) {
  c10c_storage *a = cuda_storage(12 << 20, 0x11); /* a segment of its own */
  shared sa;
  ASSERT_TRUE(share(&sa, a));
  ASSERT_EQ(run("forged", &sa.info, sa.handle, sa.info.handle_len), 0);
  c10c_storage_release(a);
  ASSERT_OK(c10c_cuda_ipc_release_counter(sa.info.ref_counter_handle, sa.info.ref_counter_offset));
  ASSERT_OK(c10c_cuda_ipc_collect(NULL));
  ASSERT_EQ(c10c_cuda_ipc_limbo_count(), 0);
  cuda_empty_cache(); /* the segment goes back to the driver: its handle is stale */
  ASSERT_EQ(run("stale", &sa.info, sa.handle, sa.info.handle_len), 0);
}

TEST(the_consumer_waits_for_the_producers_stream) {
  if (!stand_in) return; /* queued work of a known length: the stand-in's clock */
  c10c_storage *a = cuda_storage(4096, 0x11);
  stub_enqueue(NULL, 10); /* work the producer queued that the memory depends on */
  uint64_t sa_done = stub_now() + 10;
  shared sa;
  ASSERT_TRUE(share(&sa, a));
  ASSERT_TRUE(sa.info.event_sync_required);
  ASSERT_EQ(run("event", &sa.info, sa.handle, sa.info.handle_len), 0);
  ASSERT_TRUE(stub_now() >= sa_done); /* the child waited for it */
  c10c_storage_release(a);
  ASSERT_EQ(c10c_cuda_ipc_limbo_count(), 0);
}

TEST(a_received_storage_can_be_shared_again) {
  c10c_storage *a = cuda_storage(4096, 0x11);
  shared sa;
  ASSERT_TRUE(share(&sa, a));
  ASSERT_EQ(run("reshare", &sa.info, sa.handle, sa.info.handle_len), 0);
  c10c_storage_release(a);
  ASSERT_EQ(c10c_cuda_ipc_limbo_count(), 0); /* both consumers' references came back */
}

/* How many names in /dev/shm a process made (storage_ipc.c's "/c10c_PID_..."), unlinking them
 * when asked. */
static int counter_files_of_unlinked(pid_t pid, bool unlink_them) {
  char prefix[32], path[300];
  int n = snprintf(prefix, sizeof prefix, "c10c_%lld_", (long long)pid), count = 0;
  DIR *dir = opendir("/dev/shm");
  for (struct dirent *e; dir != NULL && (e = readdir(dir)) != NULL;) {
    if (strncmp(e->d_name, prefix, (size_t)n) != 0) continue;
    count++;
    snprintf(path, sizeof path, "/%s", e->d_name);
    if (unlink_them) shm_unlink(path);
  }
  if (dir != NULL) closedir(dir);
  return count;
}

static int counter_files_of(pid_t pid) { return counter_files_of_unlinked(pid, false); }

/* torch's ~CudaIPCGlobalEntities: a producer's last counter file went with it only while
 * in use elsewhere; before, every producer left one in /dev/shm for good. */
TEST(a_producer_that_exits_leaves_no_counter_file) {
  shared none;
  memset(&none, 0, sizeof none);
  child c = spawn("produce", &none.info, none.handle, 0);
  ASSERT_EQ(finish(c), 0);
  ASSERT_EQ(counter_files_of(c.pid), 0);
  c = spawn("produce-held", &none.info, none.handle, 0); /* a consumer never gave it back */
  ASSERT_EQ(finish(c), 0);
  ASSERT_EQ(counter_files_of(c.pid), 0);
  /* a forked child's exit leaves its parent's file alone */
  c10c_storage *a = cuda_storage(4096, 0x11);
  shared sa;
  ASSERT_TRUE(share(&sa, a));
  ASSERT_EQ(counter_files_of(getpid()), 1);
  pid_t pid = fork();
  if (pid == 0) exit(0);
  int status = -1;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_EQ(counter_files_of(getpid()), 1);
  ASSERT_EQ(run("write", &sa.info, sa.handle, sa.info.handle_len), 0); /* and it still works */
  c10c_storage_release(a);
  ASSERT_EQ(c10c_cuda_ipc_limbo_count(), 0);
}

/* A process that ends with _exit (Python's multiprocessing ends its fork and Pool children so)
 * runs no exit hook: c10c_cuda_ipc_release_files does its work, else the file stays, as torch's
 * (whose ~CudaIPCGlobalEntities does not run either). */
TEST(a_producer_ending_with_exit_leaves_no_counter_file_when_it_releases_its_files) {
  shared none;
  memset(&none, 0, sizeof none);
  child c = spawn("produce_exit-released", &none.info, none.handle, 0);
  ASSERT_EQ(finish(c), 0);
  ASSERT_EQ(counter_files_of(c.pid), 0);
  c = spawn("produce_exit", &none.info, none.handle, 0);
  ASSERT_EQ(finish(c), 0);
  ASSERT_EQ(counter_files_of_unlinked(c.pid, true), 1); /* what the call is for */
  ASSERT_EQ(counter_files_of(c.pid), 0);
  c10c_cuda_ipc_release_files(); /* nothing made here yet: nothing to do */
}

enum { FILE_BYTES = 64 + 8 * C10C_CUDA_IPC_REF_COUNTER_FILE_SIZE };

/* A shm object made by hand, as another program would: size bytes, count 1 in its header, and
 * header byte at set to value (at 0: none). Mapped; NULL on failure. */
static uint8_t *make_file(const char *name, off_t size, int at, uint8_t value) {
  shm_unlink(name);
  int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
  void *p = fd < 0 || ftruncate(fd, size) != 0
                ? MAP_FAILED
                : mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (fd >= 0) close(fd);
  if (p == MAP_FAILED) return NULL;
  uint8_t *bytes = p;
  int32_t one = 1;
  memcpy(bytes, &one, 4);
  if (at > 0) bytes[at] = value;
  return bytes;
}

static int64_t counter_in(const uint8_t *file, int64_t index) {
  int64_t v;
  memcpy(&v, file + 64 + 8 * index, 8);
  return v;
}

static bool all_bytes_are(const uint8_t *p, int64_t n, uint8_t value) {
  for (int64_t i = 0; i < n; i++)
    if (p[i] != value) return false;
  return true;
}

/* A counter handle is a name, and a shared storage of 80000 bytes is byte for byte the size of a
 * counter file: before, a release decremented 8 bytes of its data, and a consumer took it as its
 * counter. Counter files are now recognised: libc10c's by their magic and version, torch's by
 * torch's name, exact size and empty header. */
TEST(a_counter_handle_naming_a_shared_storage_is_refused_and_its_bytes_unchanged) {
  int64_t n = 8 * C10C_CUDA_IPC_REF_COUNTER_FILE_SIZE;
  c10c_storage *named = NULL;
  ASSERT_OK(c10c_storage_new_using_filename(&named, n));
  uint8_t *bytes = c10c_storage_data(named);
  memset(bytes, 0x11, (size_t)n);
  const char *name = NULL;
  ASSERT_OK(c10c_storage_shared_name(&name, named));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_ipc_release_counter(name, 0));
  ASSERT_TRUE(strstr(c10c_last_error_message(), "is not a CUDA IPC reference counter file"));
  ASSERT_TRUE(all_bytes_are(bytes, n, 0x11));
  /* a consumer told it is the counter refuses the storage, so it never decrements it */
  c10c_storage *a = cuda_storage(4096, 0x11);
  shared sa, forged;
  ASSERT_TRUE(share(&sa, a));
  forged = sa;
  snprintf(forged.info.ref_counter_handle, sizeof forged.info.ref_counter_handle, "%s", name);
  ASSERT_EQ(run("counter-refused", &forged.info, forged.handle, forged.info.handle_len), 0);
  ASSERT_TRUE(all_bytes_are(bytes, n, 0x11));
  c10c_storage_release(named);
  /* libc10c's own files carry the magic and version 1 after torch's count */
  char path[128];
  snprintf(path, sizeof path, "/dev/shm%s", sa.info.ref_counter_handle);
  FILE *f = fopen(path, "rb");
  uint8_t header[64] = {0};
  ASSERT_TRUE(f != NULL && fread(header, 1, 64, f) == 64);
  if (f != NULL) fclose(f);
  ASSERT_TRUE(memcmp(header + 8, "c10c-rcf", 8) == 0);
  ASSERT_EQ(get_le(header + 16, 4), 1);
  ASSERT_OK(c10c_cuda_ipc_release_counter(sa.info.ref_counter_handle, sa.info.ref_counter_offset));
  c10c_storage_release(a);
  ASSERT_EQ(c10c_cuda_ipc_limbo_count(), 0);

  /* torch's counter files (CudaIPCCreateRefCounter) are used as torch's processes use them */
  char torch[64], other[64];
  snprintf(torch, sizeof torch, "/torch_%d_2704423827_0", (int)getpid());
  uint8_t *t = make_file(torch, FILE_BYTES, 0, 0);
  ASSERT_TRUE(t != NULL);
  if (t == NULL) return;
  int64_t five = 5;
  memcpy(t + 64 + 8 * 3, &five, 8);
  ASSERT_OK(c10c_cuda_ipc_release_counter(torch, 3));
  ASSERT_EQ(counter_in(t, 3), 4);
  ASSERT_EQ(native_count(t), 1); /* counted in and out: the maker still holds it */
  munmap(t, FILE_BYTES);
  snprintf(other, sizeof other, "/torch_%d_2704423827", (int)getpid()); /* torch before 1.2 */
  t = make_file(other, FILE_BYTES, 0, 0);
  ASSERT_OK(c10c_cuda_ipc_release_counter(other, 3));
  if (t != NULL) munmap(t, FILE_BYTES);
  shm_unlink(other);
  /* ... and nothing else: a torch name of another size (a torch storage), a header with more
   * than torch's count, a name that is not torch's, a magic of a later layout */
  t = make_file(torch, 64 + 800, 0, 0);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_ipc_release_counter(torch, 3));
  if (t != NULL) munmap(t, 64 + 800);
  t = make_file(torch, FILE_BYTES, 40, 1);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_ipc_release_counter(torch, 3));
  ASSERT_TRUE(t != NULL && counter_in(t, 3) == 0);
  if (t != NULL) munmap(t, FILE_BYTES);
  shm_unlink(torch);
  const char *not_torch[] = {"_x_0", "", "_1_2_3", "y_1_2"};
  for (size_t i = 0; i < sizeof not_torch / sizeof *not_torch; i++) {
    snprintf(other, sizeof other, "/torch_%d%s", (int)getpid(), not_torch[i]);
    t = make_file(other, FILE_BYTES, 0, 0);
    ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_ipc_release_counter(other, 3));
    ASSERT_TRUE(t != NULL && counter_in(t, 3) == 0);
    if (t != NULL) munmap(t, FILE_BYTES);
    shm_unlink(other);
  }
  snprintf(other, sizeof other, "/c10c_%d_1_2", (int)getpid());
  t = make_file(other, FILE_BYTES, 0, 0);
  ASSERT_TRUE(t != NULL);
  if (t == NULL) return;
  memcpy(t + 8, "c10c-rcf", 8);
  t[16] = 2;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_cuda_ipc_release_counter(other, 3));
  ASSERT_TRUE(strstr(c10c_last_error_message(), "made by a newer one"));
  t[16] = 1; /* a count that would wrap is refused, the counter untouched */
  int32_t full = INT32_MAX;
  memcpy(t, &full, 4);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_cuda_ipc_release_counter(other, 3));
  ASSERT_TRUE(strstr(c10c_last_error_message(), "INT32_MAX processes"));
  ASSERT_EQ(counter_in(t, 3), 0);
  ASSERT_EQ(native_count(t), INT32_MAX);
  int32_t zero = 0; /* every user released it: as gone, nothing written */
  memcpy(t, &zero, 4);
  ASSERT_OK(c10c_cuda_ipc_release_counter(other, 3));
  ASSERT_EQ(counter_in(t, 3), 0);
  ASSERT_EQ(native_count(t), 0);
  munmap(t, FILE_BYTES);
  shm_unlink(other);
}

TEST(interprocess_events_need_the_flag_and_open_in_another_process) {
  c10c_cuda_event *plain = NULL, *ipc = NULL, *timed = NULL, *opened = NULL;
  uint8_t handle[C10C_CUDA_IPC_HANDLE_SIZE];
  ASSERT_OK(c10c_cuda_event_new(&plain, false));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_cuda_event_ipc_handle(handle, plain));
  ASSERT_TRUE(strstr(c10c_last_error_message(), "CUDA_ERROR_INVALID_VALUE") != NULL);
  ASSERT_OK(c10c_cuda_event_new_with_flags(&timed, true, false, true));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_cuda_event_ipc_handle(handle, timed));
  ASSERT_OK(c10c_cuda_event_new_with_flags(&ipc, false, false, true));
  c10c_stream s;
  ASSERT_OK(c10c_cuda_current_stream(&s, 0));
  stub_enqueue(NULL, 5);
  ASSERT_OK(c10c_cuda_event_record(ipc, s));
  ASSERT_OK(c10c_cuda_event_ipc_handle(handle, ipc));
  ASSERT_OK(c10c_cuda_event_from_ipc_handle(&opened, 0, handle)); /* the same process may */
  bool done = true;
  ASSERT_OK(c10c_cuda_event_query(&done, opened));
  ASSERT_TRUE(STAND_IN_ONLY(!done)); /* 5 ticks of work before it */
  stub_advance(5);
  ASSERT_OK(c10c_cuda_event_synchronize(opened));
  ASSERT_OK(c10c_cuda_event_query(&done, opened));
  ASSERT_TRUE(done);
  uint8_t forged[C10C_CUDA_IPC_HANDLE_SIZE] = {1, 2, 3};
  c10c_cuda_event *bad = NULL;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_cuda_event_from_ipc_handle(&bad, 0, forged));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_event_from_ipc_handle(&bad, 0, NULL));
  c10c_cuda_event_free(opened);
  c10c_cuda_event_free(ipc);
  c10c_cuda_event_free(timed);
  c10c_cuda_event_free(plain);
}

TEST(bad_arguments_are_refused_and_share_nothing) {
  c10c_storage *host = NULL, *a = cuda_storage(4096, 0x11), *empty = NULL;
  ASSERT_OK(c10c_storage_new(&host, 16, NULL, C10C_DEVICE_TYPE_CPU, false));
  c10c_cuda_ipc_info info = {.struct_size = sizeof info};
  uint8_t handle[256];
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_storage_share_cuda(&info, handle, sizeof handle, host));
  ASSERT_ERROR_MESSAGE("_share_cuda_: only available on CUDA");
  ASSERT_STATUS(C10C_STATUS_BUFFER_TOO_SMALL, c10c_storage_share_cuda(&info, handle, 10, a));
  ASSERT_EQ(info.handle_len, 66);
  c10c_cuda_ipc_info old = {.struct_size = 8};
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_storage_share_cuda(&old, handle, sizeof handle, a));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_storage_share_cuda(NULL, handle, 66, a));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_storage_share_cuda(&info, handle, 66, NULL));
  ASSERT_FALSE(c10c_storage_is_received_cuda(a));
  c10c_storage_release(a); /* never shared: straight back to the allocator */
  ASSERT_EQ(c10c_cuda_ipc_limbo_count(), 0);
  int64_t zero = 0;
  c10c_tensor *t = NULL;
  ASSERT_OK(c10c_tensor_empty(&t, &zero, 1, C10C_DTYPE_UINT8, cuda0, 0));
  empty = c10c_tensor_storage(t);
  ASSERT_OK(c10c_storage_share_cuda(&info, handle, sizeof handle, empty));
  ASSERT_EQ(info.handle_len, 0);
  ASSERT_EQ(info.ref_counter_handle[0], '\0');
  ASSERT_FALSE(info.event_sync_required);
  c10c_tensor_release(t);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_ipc_release_counter("/c10c_none", -1));
  ASSERT_OK(c10c_cuda_ipc_release_counter("/c10c_no_such_file", 0)); /* best effort */
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_ipc_release_counter(NULL, 0));
  c10c_storage *out = NULL;
  info.storage_size_bytes = -1;
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_storage_new_shared_cuda(&out, &info, handle, 66));
  c10c_storage_release(host);
}

TEST(an_expandable_block_is_shared_as_its_pages_in_torchs_layout) {
  c10c_storage *a = cuda_storage(3 << 20, 0x11); /* a large block: one 20 MiB page */
  shared sa, again;
  ASSERT_TRUE(share(&sa, a));
  ASSERT_EQ(sa.handle[0], 2);
  ASSERT_EQ(sa.handle[1], 'e');
  /* c10's ShareHeader as x86-64 lays it out, on every target: little-endian integers */
  uint64_t pid = get_le(sa.handle + 2, 4), padding = get_le(sa.handle + 6, 4);
  uint64_t page = get_le(sa.handle + 10, 8), pages = get_le(sa.handle + 18, 8);
  ASSERT_EQ(pid, getpid());
  ASSERT_EQ(padding, 0); /* zeroed: the same block gives the same bytes */
  ASSERT_EQ(page, 20 << 20);
  ASSERT_EQ(pages, 1);
  ASSERT_EQ(sa.info.handle_len, 2 + 24 + 4 * pages);
  ASSERT_TRUE(get_le(sa.handle + 26, 4) < 1 << 20); /* a descriptor, little-endian too */
  ASSERT_TRUE(share(&again, a)); /* shared twice: the same bytes (one mapping in a consumer) */
  ASSERT_EQ(again.info.handle_len, sa.info.handle_len);
  ASSERT_TRUE(memcmp(again.handle, sa.handle, sa.info.handle_len) == 0);
  /* the page's descriptor reused */
  ASSERT_TRUE(STAND_IN_ONLY(stub_calls("cuMemExportToShareableHandle") == 1));
  ASSERT_EQ(run("write", &sa.info, sa.handle, sa.info.handle_len), 0);
  ASSERT_TRUE(storage_is(a, 0x22));
  c10c_storage_release(a);
  ASSERT_EQ(c10c_cuda_ipc_limbo_count(), 1); /* the second share's consumer never came */
  ASSERT_OK(
      c10c_cuda_ipc_release_counter(again.info.ref_counter_handle, again.info.ref_counter_offset));
  ASSERT_OK(c10c_cuda_ipc_collect(NULL));
  ASSERT_EQ(c10c_cuda_ipc_limbo_count(), 0);
}

static int run_tests(const test_case *tests, size_t count) {
  for (size_t i = 0; i < count; i++) {
    test_current_failed = 0;
    tests[i].fn();
    printf("%s %s\n", test_current_failed ? "FAIL" : "ok  ", tests[i].name);
    test_failures += test_current_failed;
  }
  printf("%d passed, %d failed\n", (int)count - test_failures, test_failures);
  return test_failures ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc > 0 && strchr(argv[0], '/') != NULL) self_path = argv[0];
  if (c10c_cuda_init() != C10C_STATUS_OK) {
    fprintf(stderr, "CUDA unavailable: %s\n", c10c_cuda_unavailable_reason());
    return 1;
  }
  stand_in = stub("c10c_stub_calls") != NULL;
  if (argc == 5 && strcmp(argv[1], "child") == 0) return child_main(argv[2], argv[3], argv[4]);
  if (argc == 2 && strcmp(argv[1], "expandable") == 0) { /* C10C_ALLOC_CONF expandable */
    static const test_case pages[] = {
        T(an_expandable_block_is_shared_as_its_pages_in_torchs_layout),
        T(a_child_reads_and_writes_the_producers_memory),
        T(a_process_maps_a_handle_once_however_often_it_is_opened),
        T(memory_a_consumer_holds_is_not_reused_until_it_lets_go),
        T(forged_and_out_of_bounds_handles_open_nothing),
        T(a_received_storage_can_be_shared_again),
    };
    return run_tests(pages, sizeof pages / sizeof pages[0]);
  }
  static const test_case tests[] = {
      T(the_handle_is_torchs_version_2_cudamalloc_handle_of_the_segment),
      T(the_exporting_process_cannot_open_its_own_handle),
      T(a_child_reads_and_writes_the_producers_memory),
      T(a_process_maps_a_handle_once_however_often_it_is_opened),
      T(memory_a_consumer_holds_is_not_reused_until_it_lets_go),
      T(out_of_memory_collects_blocks_no_consumer_holds),
      T(forged_and_out_of_bounds_handles_open_nothing),
      T(the_consumer_waits_for_the_producers_stream),
      T(a_received_storage_can_be_shared_again),
      T(a_producer_that_exits_leaves_no_counter_file),
      T(a_producer_ending_with_exit_leaves_no_counter_file_when_it_releases_its_files),
      T(a_counter_handle_naming_a_shared_storage_is_refused_and_its_bytes_unchanged),
      T(interprocess_events_need_the_flag_and_open_in_another_process),
      T(bad_arguments_are_refused_and_share_nothing),
  };
  return run_tests(tests, sizeof tests / sizeof tests[0]);
}
