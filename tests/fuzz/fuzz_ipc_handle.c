/* CUDA IPC handles from another process: arbitrary bytes as the memory handle and arbitrary
 * fields of the description (c10c_cuda_ipc_info) given to c10c_storage_new_shared_cuda, starting
 * from or mixed with real handles that a child process made (the stand-in driver refuses a handle
 * in the process that exported it). The child, forked at the first input before this process
 * touches CUDA, shares two storages of the caching allocator (the second at an offset in its
 * segment) and waits until this process exits.
 * Checked: every failure is a status with a message and no storage; a storage that opens lies
 * inside the memory the handle maps (copying all of it to the host makes the stand-in driver
 * count no access outside any mapping), has the size asked for, and holds the child's bytes
 * where it lies in one of the child's storages.
 * Kept away from other processes of the machine: every process id in the bytes (a handle's, an
 * event's, an expandable segment's header) becomes the child's, this process's or one that
 * cannot exist, and the counter name is "" or one of this harness's that does not exist. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <sys/mman.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif
#include <unistd.h>

#include "fuzz.h"

#include "c10c/c10c.h"

enum { SHARED = 2, STORAGE_BYTES = 1000, MAX_HANDLE = 256 };

static const c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
static const c10c_device cuda0 = {C10C_DEVICE_TYPE_CUDA, 0};

typedef struct made {
  c10c_cuda_ipc_info info;
  uint8_t handle[MAX_HANDLE];
  uint8_t value; /* every byte of the child's storage */
} made;

static made handles[SHARED];
static int32_t child = -1; /* 0: no child (no stand-in driver, or it could not share) */

static long stub_violations(void) {
  void *lib = dlopen(getenv("C10C_CUDA_DRIVER"), RTLD_NOW | RTLD_NOLOAD);
  void *address = lib ? dlsym(lib, "c10c_stub_violations") : NULL;
  if (lib) dlclose(lib);
  long (*fn)(void) = NULL;
  memcpy(&fn, &address, sizeof address);
  return fn ? fn() : 0;
}

/* The child: makes and shares the storages, writes them to out, then waits for EOF on in. */
static void run_child(int out, int in) {
#if defined(__linux__)
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* elsewhere the parent's EOF on in ends the child */
#endif
  made m[SHARED];
  memset(m, 0, sizeof m);
  c10c_tensor *keep[SHARED] = {NULL};
  bool ok = true;
  for (int i = 0; i < SHARED && ok; i++) {
    int64_t n = STORAGE_BYTES;
    c10c_tensor *host = NULL;
    m[i].value = (uint8_t)(0x5a + i);
    ok = c10c_tensor_empty(&keep[i], &n, 1, C10C_DTYPE_UINT8, cuda0, 0) == C10C_STATUS_OK &&
         c10c_tensor_empty(&host, &n, 1, C10C_DTYPE_UINT8, cpu, 0) == C10C_STATUS_OK;
    if (ok) memset(c10c_tensor_data(host), m[i].value, (size_t)n);
    ok = ok && c10c_tensor_copy_(keep[i], host) == C10C_STATUS_OK;
    c10c_tensor_release(host);
    m[i].info.struct_size = sizeof m[i].info;
    ok = ok && c10c_storage_share_cuda(&m[i].info, m[i].handle, sizeof m[i].handle,
                                       c10c_tensor_storage(keep[i])) == C10C_STATUS_OK;
  }
  if (!ok) memset(m, 0, sizeof m);
  ssize_t wrote = write(out, m, sizeof m);
  (void)wrote;
  char byte;
  while (read(in, &byte, 1) > 0) continue;
  _exit(0); /* its storages stay the driver's: no leak report (its counter file: the parent's) */
}

/* The child's counter file: its exit hook never runs (it is killed, or leaves with _exit), so
 * this process removes the name when it exits. */
static void remove_child_files(void) {
  for (int i = 0; i < SHARED; i++)
    if (handles[i].info.ref_counter_handle[0] != '\0')
      shm_unlink(handles[i].info.ref_counter_handle);
}

static void start_child(void) {
  child = 0;
  if (getenv("C10C_CUDA_DRIVER") == NULL) return;
  int to_parent[2], to_child[2];
  if (pipe(to_parent) != 0) return;
  if (pipe(to_child) != 0) {
    close(to_parent[0]), close(to_parent[1]);
    return;
  }
  pid_t pid = fork();
  if (pid == 0) {
    close(to_parent[0]), close(to_child[1]);
    run_child(to_parent[1], to_child[0]);
  }
  close(to_parent[1]), close(to_child[0]);
  /* to_child[1] stays open, unused, until this process exits: then the child sees EOF */
  size_t got = 0;
  ssize_t n;
  while (pid > 0 && got < sizeof handles &&
         (n = read(to_parent[0], (char *)handles + got, sizeof handles - got)) > 0)
    got += (size_t)n;
  close(to_parent[0]);
  if (pid > 0 && got == sizeof handles && handles[0].info.handle_len > 0) child = (int32_t)pid;
  if (child > 0) atexit(remove_child_files);
}

/* A process id the bytes may keep: the child's, this process's, or one above any pid_max;
 * little-endian (an 'e' header's, on every target) or in the target's order (the stand-in
 * driver's own handles). */
static void fix_pid(uint8_t *at, bool little) {
  uint32_t raw = 0;
  if (little)
    for (int i = 0; i < 4; i++) raw |= (uint32_t)at[i] << (8 * i);
  else
    memcpy(&raw, at, sizeof raw);
  int32_t pid = (int32_t)raw;
  if (pid == child || pid == (int32_t)getpid()) return;
  uint32_t pick = raw % 3;
  pid = pick == 0 && child > 0 ? child : pick == 1 ? (int32_t)getpid() : INT32_MAX - 7;
  raw = (uint32_t)pid;
  if (little)
    for (int i = 0; i < 4; i++) at[i] = (uint8_t)(raw >> (8 * i));
  else
    memcpy(at, &raw, sizeof raw);
}

/* The process ids in a memory handle (a raw or 'c' handle is the driver's 64 bytes, the pid at
 * 12; an 'e' handle starts with its header's pid) and in an event handle. */
static void fix_handle(uint8_t *h, size_t len) {
  if (len == 64) fix_pid(h + 12, false);
  if (len >= 2 + 16 && h[1] == 'c') fix_pid(h + 2 + 12, false);
  if (len >= 2 + 4 && h[1] == 'e') fix_pid(h + 2, true);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (child < 0) start_child();
  fuzz_input in = {data, size};
  uint8_t handle[MAX_HANDLE];
  size_t len = 0;
  int from = -1; /* the child's handle this one is, unchanged */
  c10c_cuda_ipc_info info;
  memset(&info, 0, sizeof info);
  int source = (int)fuzz_range(&in, 0, 3);
  if (source < SHARED && child > 0) { /* one of the child's, maybe changed below */
    from = source;
    info = handles[from].info;
    len = (size_t)handles[from].info.handle_len;
    memcpy(handle, handles[from].handle, len);
  } else { /* bytes from the input */
    len = (size_t)fuzz_range(&in, 0, MAX_HANDLE);
    for (size_t i = 0; i < len; i++) handle[i] = fuzz_u8(&in);
    from = -1;
  }
  /* changed bytes of the handle */
  for (int edits = (int)fuzz_range(&in, 0, 3); edits > 0 && len > 0; edits--) {
    handle[fuzz_range(&in, 0, (int64_t)len - 1)] = fuzz_u8(&in);
    from = -1;
  }
  if (fuzz_bool(&in)) { /* a shorter or longer handle */
    size_t to = (size_t)fuzz_range(&in, 0, MAX_HANDLE);
    for (size_t i = len; i < to; i++) handle[i] = fuzz_u8(&in);
    if (to != len) from = -1;
    len = to;
  }
  /* changed fields of the description */
  uint8_t fields = fuzz_u8(&in);
  if (fields & 1) info.storage_size_bytes = fuzz_int64(&in);
  if (fields & 2) info.storage_offset_bytes = fuzz_int64(&in);
  if (fields & 4) info.device = (int32_t)fuzz_range(&in, -3, 3);
  if (fields & 8) info.ref_counter_offset = fuzz_int64(&in);
  if (fields & 16) {
    info.event_sync_required = fuzz_bool(&in);
    if (fuzz_bool(&in))
      for (size_t i = 0; i < sizeof info.event_handle; i++) info.event_handle[i] = fuzz_u8(&in);
  }
  if (fields & 32)
    info.struct_size = (uint32_t)fuzz_range(&in, 0, sizeof info + 8);
  else
    info.struct_size = sizeof info;
  switch (fuzz_range(&in, 0, 2)) { /* the counter: none, absent, or a name not terminated */
    case 0: memset(info.ref_counter_handle, 0, sizeof info.ref_counter_handle); break;
    case 1:
      snprintf(info.ref_counter_handle, sizeof info.ref_counter_handle, "/c10c_fuzz_%d_absent",
               (int)getpid());
      break;
    default: memset(info.ref_counter_handle, 'x', sizeof info.ref_counter_handle);
  }
  fix_handle(handle, len);
  fix_pid(info.event_handle + 12, false);
  info.handle_len = len;
  FUZZ_TRACE("handle of %zu bytes (child's %d), size %lld at %lld, device %d, struct %u", len, from,
             (long long)info.storage_size_bytes, (long long)info.storage_offset_bytes,
             (int)info.device, (unsigned)info.struct_size);

  long violations = stub_violations();
  c10c_storage *s = NULL;
  c10c_status st = c10c_storage_new_shared_cuda(&s, &info, handle, len);
  if (st != C10C_STATUS_OK) {
    FUZZ_TRACE("  %s: %s", c10c_status_name(st), c10c_last_error_message());
    FUZZ_CHECK(s == NULL, "a failed open left a storage");
    FUZZ_CHECK(c10c_last_error_message()[0] != '\0', "status %d without a message", (int)st);
    return 0;
  }
  FUZZ_CHECK(s != NULL, "no storage");
  int64_t n = c10c_storage_nbytes(s), one = 1;
  FUZZ_CHECK(n == info.storage_size_bytes, "%lld bytes, not %lld", (long long)n,
             (long long)info.storage_size_bytes);
  FUZZ_CHECK(c10c_storage_device(s).type == C10C_DEVICE_TYPE_CUDA, "not a CUDA storage");
  /* every byte through the driver, which counts any outside the mapping */
  c10c_tensor *dev = NULL, *host = NULL;
  bool copied =
      n > 0 && n <= (64 << 20) &&
      c10c_tensor_new_from_storage(&dev, s, &n, &one, 1, 0, C10C_DTYPE_UINT8) == C10C_STATUS_OK &&
      c10c_tensor_empty(&host, &n, 1, C10C_DTYPE_UINT8, cpu, 0) == C10C_STATUS_OK &&
      c10c_tensor_copy_(host, dev) == C10C_STATUS_OK;
  FUZZ_CHECK(stub_violations() == violations, "an opened storage reaches outside its mapping");
  /* where it lies inside one of the child's storages of the same segment, its bytes are those */
  for (int i = 0; copied && i < SHARED && from >= 0; i++) {
    const c10c_cuda_ipc_info *c = &handles[i].info;
    if (c->handle_len != len || memcmp(handles[i].handle, handle, len) != 0) continue;
    int64_t lo = info.storage_offset_bytes, hi = lo + n;
    for (int64_t at = lo > c->storage_offset_bytes ? lo : c->storage_offset_bytes;
         at < hi && at < c->storage_offset_bytes + c->storage_size_bytes; at++)
      FUZZ_CHECK(((uint8_t *)c10c_tensor_data(host))[at - lo] == handles[i].value,
                 "byte %lld of the segment is not the child's", (long long)at);
  }
  c10c_tensor_release(host);
  c10c_tensor_release(dev);
  c10c_storage_release(s);
  return 0;
}
