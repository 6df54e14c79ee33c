/* A stand-in for the CUDA driver (libcuda.so.1), built only for the tests: it exports the driver
 * entry points libc10c resolves, with the driver's signatures and error codes, over host memory.
 * Machines without a GPU run libc10c's real driver code against it (C10C_CUDA_DRIVER=<this>).
 *
 * - Devices: C10C_STUB_DEVICES (default 2), each with C10C_STUB_CAPACITY bytes (default 1 GiB):
 *   cuMemAlloc fails with CUDA_ERROR_OUT_OF_MEMORY past it, so out-of-memory is real.
 * - Memory is real (malloc'd) with canaries before and after each block, checked at free: a
 *   write outside a block, a double free or a free of an unknown pointer is counted (and the call
 *   fails as the driver would), so tests can assert none happened.
 * - cuInit returns C10C_STUB_INIT_ERROR when that is set (e.g. 100, CUDA_ERROR_NO_DEVICE).
 * - Streams and events run on a logical clock the tests move (c10c_stub_advance): work queued
 *   with c10c_stub_enqueue(stream, ticks) completes only when the clock passes it, so "not ready
 *   yet" and cross-stream ordering are deterministic; one tick is one millisecond of elapsed time.
 * - Stream semantics: NULL and CU_STREAM_LEGACY (0x1) are the legacy default stream, which
 *   orders with the blocking streams (created without CU_STREAM_NON_BLOCKING, and
 *   CU_STREAM_PER_THREAD, 0x2, one for all threads here) both ways; non-blocking streams order only
 *   by events, stream/context synchronization. Copies and memsets (the ...Async calls on their
 *   stream, the synchronous ones on the legacy stream: host copies return when done, DtoD and
 *   memsets before) take c10c_stub_set_copy_ticks ticks (C10C_STUB_COPY_TICKS, default 0)
 *   of their stream; their device reads and writes, and a test's c10c_stub_touch(ptr, bytes,
 *   stream, write) ("a kernel"), are checked against other streams' unfinished work they do not
 *   wait for: each overlap, one side a write, counts in c10c_stub_races (not in the violations).
 *   Data moves at once.
 * - Failure injection: c10c_stub_fail("cuMemAlloc_v2", k, error) makes the k-th next call of
 *   that entry point return error; c10c_stub_calls(name) counts calls.
 * - Built three times: the second copy (-DSTUB_WITHOUT_cuMemFree_v2) lacks one symbol, for the
 *   loader's missing-symbol path; the third (-DSTUB_WITHOUT_VMM) lacks the virtual memory
 *   management entry points, as drivers older than CUDA 10.2.
 * - Virtual memory management (expandable segments): cuMemAddressReserve reserves address space
 *   (PROT_NONE), cuMemCreate makes physical memory (a memfd, counted against the capacity),
 *   cuMemMap maps it at an address of a reservation, cuMemSetAccess makes it accessible,
 *   cuMemUnmap / cuMemRelease / cuMemAddressFree undo these, with the driver's checks (maps
 *   outside a reservation, overlapping maps, unmaps of unmapped ranges and frees of
 *   reservations still mapped are refused and counted as violations). One physical allocation
 *   may be mapped at several addresses (stitching): the memfd is mapped at each, so bytes
 *   written through one address read back through the others. Releasing a handle that is
 *   still mapped somewhere counts as a violation too (the driver frees it at the last unmap;
 *   libc10c always unmaps first, and a stitched page must not be released under its alias).
 * - Devices (contexts, peers, granularity): cuDevicePrimaryCtxRetain is counted per device
 *   (c10c_stub_retains) and cuDevicePrimaryCtxGetState reports a context active while retained;
 *   cuDeviceCanAccessPeer answers C10C_STUB_PEERS ("all", or pairs "a:b,..." where device a can
 *   access device b's memory; none by default); cuMemSetAccess records which devices each
 *   mapping is accessible to (c10c_stub_access) and refuses a device that cannot access it;
 *   cuMemGetAllocationGranularity answers C10C_STUB_GRANULARITY (default 2 MiB), which the
 *   virtual memory calls enforce; cuDriverGetVersion answers even when cuInit fails.
 * - Interprocess memory and events: cuMemAlloc's memory is a memfd mapped shared, so another
 *   process can map it (cuIpcGetMemHandle / cuIpcOpenMemHandle_v2 / cuIpcCloseMemHandle, with
 *   the driver's refusals and counts: see "interprocess memory and event handles" below); an
 *   event made with CU_EVENT_INTERPROCESS keeps its state in a shared page (cuIpcGetEventHandle /
 *   cuIpcOpenEventHandle); C10C_STUB_CLOCK=<file> shares the logical clock between the processes
 *   of a test so that an event recorded in one orders work in another; physical memory made with
 *   requestedHandleTypes CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR exports as a file descriptor
 *   (cuMemExportToShareableHandle / cuMemImportFromShareableHandle). Freeing memory another
 *   process still maps is counted as a violation (the driver's undefined behaviour).
 * - Fake-address mode (C10C_STUB_FAKE=1 or c10c_stub_set_fake(1) before the first allocation):
 *   no memory behind allocations, addresses fabricated, capacity still enforced; copies and
 *   memsets fail. For replaying traces of tens of GiB (bench/replay_trace.c).
 */
#define _GNU_SOURCE /* memfd_create */
#include <pthread.h>
#include <stdint.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

#if defined(__APPLE__) /* no memory files: an unlinked POSIX shared memory object instead */
#define MFD_CLOEXEC 1u
static int memfd_create(const char *name, unsigned flags) {
  static _Atomic unsigned counter;
  char path[32];
  (void)name;
  (void)flags;
  snprintf(path, sizeof path, "/c10c_stub_%d_%u", (int)getpid(), counter++);
  int fd = shm_open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd >= 0) {
    shm_unlink(path);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  return fd;
}
#endif

typedef int CUresult;
typedef int CUdevice;
typedef uint64_t CUdeviceptr;
typedef struct stub_context *CUcontext;
typedef struct stub_stream *CUstream;
typedef struct stub_event *CUevent;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_UNKNOWN = 999,
};

enum { MAX_DEVICES = 16, CANARY = 64 };
static const unsigned char CANARY_BYTE = 0xC5;

struct stub_context {
  int device;
};

/* Work on a stream completes at logical times: a stream is busy until busy_until. */
struct stub_stream {
  int device;
  int priority;
  uint64_t busy_until;
  unsigned flags;           /* CU_STREAM_NON_BLOCKING: no ordering with the legacy default stream */
  int kind;                 /* STREAM_LEGACY, STREAM_PER_THREAD or STREAM_CREATED */
  uint64_t serial;          /* identifies the stream in the access records (never reused) */
  struct stub_stream *next; /* created streams, for the legacy stream's implicit waits */
};

struct stub_event {
  int device;
  unsigned flags;
  int recorded;
  uint64_t done_at; /* when the work recorded before it completes */
  /* interprocess events: the state lives in a shared page (a memfd) every process that opened
   * the event reads and writes */
  struct ipc_event_state *shared;
  int fd;
  uint64_t serial, nonce;
};

enum { STREAM_LEGACY, STREAM_PER_THREAD, STREAM_CREATED };
enum { CU_STREAM_NON_BLOCKING = 1, CU_EVENT_DISABLE_TIMING = 2 };

typedef struct block {
  struct block *next;
  unsigned char *base; /* canary, payload, canary (NULL in fake-address mode) */
  CUdeviceptr addr;    /* the payload */
  size_t size;
  int device;
  int fd;                 /* the memfd behind it (-1 in fake-address mode) */
  unsigned char *map;     /* its mapping: the IPC header page, then base */
  size_t span;            /* bytes mapped */
  uint64_t serial, nonce; /* what an IPC handle names it by */
} block;

/* Virtual memory: reservations, physical allocations and the mappings between them. */
typedef struct physical {
  int fd; /* -1 in fake-address mode */
  size_t size;
  int device;
  int maps;         /* live mappings of it */
  int released;     /* cuMemRelease called: freed when the last mapping goes */
  int handle_types; /* requestedHandleTypes (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR: exportable)
                     */
  int imported;     /* cuMemImportFromShareableHandle: another process's memory, not counted */
  struct physical *next;
} physical;

typedef struct reservation {
  CUdeviceptr base;
  size_t size;
  struct reservation *next;
} reservation;

typedef struct mapping {
  CUdeviceptr ptr;
  size_t size;
  physical *phys;
  unsigned long long accessible; /* bit d: device d may access it (cuMemSetAccess) */
  struct mapping *next;
} mapping;

static physical *physicals __attribute__((unused)); /* unused without VMM */
static reservation *reservations __attribute__((unused));
static mapping *mappings;
static int fake; /* fake-address mode */
#if UINTPTR_MAX < UINT64_MAX
static CUdeviceptr next_fake = 1ull << 28; /* a 32-bit pointer holds them from 256 MiB up */
#else
static CUdeviceptr next_fake = 1ull << 44; /* fabricated addresses */
#endif

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int initialized, device_count = -1;
static size_t capacity;
static uint64_t copy_ticks; /* ticks per copy and memset (streams block) */

/* ---- devices: primary-context retains, peers, granularity ---- */
static long retains[MAX_DEVICES], retained[MAX_DEVICES]; /* calls; references held */
static unsigned long long peer_mask[MAX_DEVICES];        /* bit b of [a]: a can access b */
static size_t granularity_bytes = 2 << 20;

/* C10C_STUB_PEERS: "all", or "a:b,c:d" (device a can access device b's memory). */
static void read_peers(void) {
  const char *v = getenv("C10C_STUB_PEERS");
  if (!v) return;
  if (strcmp(v, "all") == 0) {
    for (int a = 0; a < MAX_DEVICES; a++) peer_mask[a] = ~0ULL & ~(1ULL << a);
    return;
  }
  while (*v) {
    char *end = NULL;
    long a = strtol(v, &end, 10);
    if (end == v || *end != ':') return;
    v = end + 1;
    long b = strtol(v, &end, 10);
    if (end == v) return;
    if (a >= 0 && a < MAX_DEVICES && b >= 0 && b < MAX_DEVICES && a != b) peer_mask[a] |= 1ULL << b;
    v = *end == ',' ? end + 1 : end;
    if (end == v && *end) return;
  }
}

EXPORT long c10c_stub_retains(int device) {
  return device >= 0 && device < MAX_DEVICES ? retains[device] : 0;
}
static size_t used[MAX_DEVICES];
static struct stub_context contexts[MAX_DEVICES];
/* initial-exec, as libc10c's own thread-locals: the stand-in is dlopen'ed, and a general-dynamic
 * thread-local is reached through __tls_get_addr, whose blocks clang 14's LeakSanitizer (Debian
 * 12's) sometimes records with a garbage range ("DTLS 4 at 0x95-0x800001197") and then crashes
 * scanning ("Tracer caught signal 11"): about 1 fuzz run in 100 failed that way. */
#if defined(__GLIBC__) /* musl refuses to dlopen a library with initial-exec thread-locals */
static _Thread_local CUcontext current __attribute__((tls_model("initial-exec")));
#else
static _Thread_local CUcontext current;
#endif
static struct stub_stream default_streams[MAX_DEVICES];    /* legacy: NULL, CU_STREAM_LEGACY */
static struct stub_stream per_thread_streams[MAX_DEVICES]; /* CU_STREAM_PER_THREAD, shared */
static struct stub_stream *created_streams;
static long live_streams, live_events;
static block *live;
/* The logical clock: this process's own, or a file shared by the processes of a test
 * (C10C_STUB_CLOCK=<path>, mapped at cuInit) so that interprocess events order across them. */
static uint64_t local_clock, *clock_ptr = &local_clock;
#define clock_now (*clock_ptr)
static long violations; /* canary damage, double or unknown frees */

/* ---- counters and failure injection, by entry-point name ---- */

enum { MAX_ENTRIES = 64 };
static struct {
  char name[48];
  long calls;
  long fail_countdown;
  CUresult fail_with;
} entries[MAX_ENTRIES];

/* The slot of an entry point's counters (lock held). */
static int entry_index(const char *name) {
  for (int i = 0; i < MAX_ENTRIES; i++) {
    if (entries[i].name[0] == '\0') {
      snprintf(entries[i].name, sizeof entries[i].name, "%s", name);
      return i;
    }
    if (strcmp(entries[i].name, name) == 0) return i;
  }
  return MAX_ENTRIES - 1;
}

/* Counts a call of name; returns the injected error when its countdown reaches 0. */
static CUresult enter(const char *name) {
  pthread_mutex_lock(&lock);
  int i = entry_index(name);
  entries[i].calls++;
  CUresult r = CUDA_SUCCESS;
  if (entries[i].fail_countdown > 0 && --entries[i].fail_countdown == 0) r = entries[i].fail_with;
  pthread_mutex_unlock(&lock);
  return r;
}

#define ENTER(name)                   \
  do {                                \
    CUresult injected_ = enter(name); \
    if (injected_) return injected_;  \
  } while (0)

EXPORT void c10c_stub_fail(const char *name, long k, CUresult error) {
  pthread_mutex_lock(&lock);
  int i = entry_index(name);
  entries[i].fail_countdown = k;
  entries[i].fail_with = error;
  pthread_mutex_unlock(&lock);
}

EXPORT long c10c_stub_calls(const char *name) {
  pthread_mutex_lock(&lock);
  long n = 0;
  for (int i = 0; i < MAX_ENTRIES && entries[i].name[0]; i++)
    if (strcmp(entries[i].name, name) == 0) n = entries[i].calls;
  pthread_mutex_unlock(&lock);
  return n;
}

EXPORT long c10c_stub_violations(void) { return violations; }

EXPORT size_t c10c_stub_used(int device) {
  return device >= 0 && device < MAX_DEVICES ? used[device] : 0;
}

EXPORT void c10c_stub_set_capacity(size_t bytes) { capacity = bytes; }

EXPORT void c10c_stub_set_fake(int on) { fake = on; }

/* ---- fake-address order ----
 * The real driver's address order differs between runs and machines, and PyTorch's best fit
 * breaks ties between equal-size free blocks by address, so a replay reproduces PyTorch's
 * figures only with the order the driver had in the recorded run. Fabricated addresses ascend
 * (each range above the last) unless C10C_STUB_ADDRESS_ORDER=descending, read at the first
 * allocation: each range below the last, as the driver handed them out in sqattn_compress
 * (bench/traces/README.md). */
#if UINTPTR_MAX < UINT64_MAX
static CUdeviceptr next_fake_down = 15ull << 28; /* descending, from 3.75 GiB on 32 bits */
#else
static CUdeviceptr next_fake_down = 1ull << 46; /* descending: the start of the last range */
#endif

static int fake_descending(void) {
  static int order = -1; /* -1: not read yet, else 1 descending, 0 ascending */
  if (order < 0) {
    const char *v = getenv("C10C_STUB_ADDRESS_ORDER");
    order = v != NULL && strcmp(v, "descending") == 0;
  }
  return order == 1;
}

/* A fabricated address range (fake-address mode), 2 MiB aligned with a 2 MiB gap between it and
 * the next one. Lock held. */
static CUdeviceptr fabricate(size_t bytes) {
  CUdeviceptr span = ((bytes + (2u << 20) - 1) & ~(CUdeviceptr)((2u << 20) - 1)) + (2u << 20);
  if (fake_descending()) return next_fake_down -= span;
  CUdeviceptr at = next_fake;
  next_fake += span;
  return at;
}

/* Moves the logical clock: work queued up to the new time has completed. */
EXPORT void c10c_stub_advance(uint64_t ticks) {
  pthread_mutex_lock(&lock);
  clock_now += ticks;
  pthread_mutex_unlock(&lock);
}

EXPORT uint64_t c10c_stub_now(void) { return clock_now; }

/* ---- the driver API ---- */

static long env_long(const char *name, long fallback) {
  const char *v = getenv(name);
  return v && *v ? strtol(v, NULL, 0) : fallback;
}

EXPORT CUresult cuInit(unsigned flags) {
  ENTER("cuInit");
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  CUresult forced = (CUresult)env_long("C10C_STUB_INIT_ERROR", 0);
  if (forced) return forced;
  pthread_mutex_lock(&lock);
  if (!initialized) {
    device_count = (int)env_long("C10C_STUB_DEVICES", 2);
    if (device_count > MAX_DEVICES) device_count = MAX_DEVICES;
    capacity = (size_t)env_long("C10C_STUB_CAPACITY", 1L << 30);
    if (env_long("C10C_STUB_FAKE", 0)) fake = 1;
    long ticks = env_long("C10C_STUB_COPY_TICKS", 0);
    if (ticks > 0) copy_ticks = (uint64_t)ticks;
    long g = env_long("C10C_STUB_GRANULARITY", 2L << 20);
    if (g > 0 && (g & (g - 1)) == 0) granularity_bytes = (size_t)g;
    read_peers();
    const char *clock_file = getenv("C10C_STUB_CLOCK");
    if (clock_file && *clock_file) {
      int fd = open(clock_file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
      void *map = fd >= 0 && ftruncate(fd, sizeof(uint64_t)) == 0
                      ? mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                      : MAP_FAILED;
      if (fd >= 0) close(fd);
      if (map != MAP_FAILED) clock_ptr = map;
    }
    for (int i = 0; i < MAX_DEVICES; i++) {
      contexts[i].device = default_streams[i].device = per_thread_streams[i].device = i;
      default_streams[i].kind = STREAM_LEGACY, default_streams[i].serial = 1 + 2 * (uint64_t)i;
      per_thread_streams[i].kind = STREAM_PER_THREAD;
      per_thread_streams[i].serial = 2 + 2 * (uint64_t)i;
    }
    initialized = 1;
  }
  pthread_mutex_unlock(&lock);
  return device_count > 0 ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

EXPORT CUresult cuDriverGetVersion(int *version) {
  ENTER("cuDriverGetVersion");
  if (!version) return CUDA_ERROR_INVALID_VALUE;
  *version = 12080;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *count) {
  ENTER("cuDeviceGetCount");
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  *count = device_count;
  return CUDA_SUCCESS;
}

static CUresult check_device(CUdevice d) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  return d >= 0 && d < device_count ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

EXPORT CUresult cuDeviceGet(CUdevice *out, int ordinal) {
  ENTER("cuDeviceGet");
  CUresult r = check_device(ordinal);
  if (r == CUDA_SUCCESS) *out = ordinal;
  return r;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
  ENTER("cuDeviceGetName");
  CUresult r = check_device(d);
  if (r == CUDA_SUCCESS) snprintf(name, (size_t)len, "libc10c stand-in GPU %d", d);
  return r;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) {
  ENTER("cuDeviceTotalMem_v2");
  CUresult r = check_device(d);
  if (r == CUDA_SUCCESS) *bytes = capacity;
  return r;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice d) {
  ENTER("cuDevicePrimaryCtxRetain");
  CUresult r = check_device(d);
  if (r == CUDA_SUCCESS) {
    *ctx = &contexts[d];
    pthread_mutex_lock(&lock);
    retains[d]++, retained[d]++;
    pthread_mutex_unlock(&lock);
  }
  return r;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
  ENTER("cuDevicePrimaryCtxRelease_v2");
  CUresult r = check_device(d);
  pthread_mutex_lock(&lock);
  if (r == CUDA_SUCCESS && retained[d] > 0) retained[d]--;
  pthread_mutex_unlock(&lock);
  return r;
}

/* Active while retained; the flags are the defaults (0). */
EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned *flags, int *active) {
  ENTER("cuDevicePrimaryCtxGetState");
  CUresult r = check_device(d);
  if (r != CUDA_SUCCESS) return r;
  if (!flags || !active) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  *flags = 0;
  *active = retained[d] > 0;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceCanAccessPeer(int *can, CUdevice d, CUdevice peer) {
  ENTER("cuDeviceCanAccessPeer");
  CUresult r = check_device(d);
  if (r == CUDA_SUCCESS) r = check_device(peer);
  if (r != CUDA_SUCCESS) return r;
  if (!can) return CUDA_ERROR_INVALID_VALUE;
  *can = d != peer && (peer_mask[d] >> peer & 1);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
  ENTER("cuCtxSetCurrent");
  current = ctx;
  return CUDA_SUCCESS;
}

/* The device of the calling thread's current context, -1 for none (devices block). */
EXPORT int c10c_stub_current_device(void) { return current ? current->device : -1; }

EXPORT CUresult cuCtxGetCurrent(CUcontext *ctx) {
  ENTER("cuCtxGetCurrent");
  *ctx = current;
  return CUDA_SUCCESS;
}

static void ctx_wait_all(int device);

EXPORT CUresult cuCtxSynchronize(void) {
  ENTER("cuCtxSynchronize");
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  pthread_mutex_lock(&lock);
  ctx_wait_all(current->device); /* the host waited for every stream of the context */
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

/* ---- device memory, shareable with other processes ----
 * cuMemAlloc's memory is a memfd (a header page for IPC, then canary, payload, canary) mapped
 * shared, so another process can map the same pages (cuIpcOpenMemHandle opens the exporter's
 * memfd through /proc/<pid>/fd). The header names the allocation (serial, nonce: a handle of a
 * freed allocation, or a forged one, matches no header) and counts the processes that have it
 * open: freeing memory another process still maps is undefined behaviour in the driver, counted
 * here as a violation. */
enum { IPC_HEADER = 4096 };
static const uint64_t IPC_MAGIC = 0x43313043495043ULL; /* "C10CIPC" */

typedef struct ipc_header {
  uint64_t magic, serial, nonce, size;
  int32_t device, pid;
  int32_t importers; /* processes that have it open (atomic) */
} ipc_header;

static uint64_t next_serial_ipc = 1;

/* A number no other process guesses (for the nonce of a handle). */
static uint64_t random64(void) {
  uint64_t v = 0;
  FILE *f = fopen("/dev/urandom", "rb");
  if (f) {
    if (fread(&v, sizeof v, 1, f) != 1) v = 0;
    fclose(f);
  }
  return v ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&v;
}

#ifndef STUB_WITHOUT_cuMemAlloc_v2
/* Makes b's memory: a shared mapping of a new memfd (lock held). 0 on failure. */
static int shareable_memory(block *b, size_t bytes, int device) {
  size_t span = IPC_HEADER + bytes + 2 * CANARY;
  int fd = memfd_create("c10c_stub_mem", MFD_CLOEXEC);
  if (fd < 0) return 0;
  void *map = ftruncate(fd, (off_t)span) == 0
                  ? mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                  : MAP_FAILED;
  if (map == MAP_FAILED) {
    close(fd);
    return 0;
  }
  b->fd = fd, b->map = map, b->span = span;
  b->serial = next_serial_ipc++, b->nonce = random64();
  b->base = (unsigned char *)map + IPC_HEADER;
  ipc_header *h = map;
  *h = (ipc_header){IPC_MAGIC, b->serial, b->nonce, bytes, device, (int32_t)getpid(), 0};
  return 1;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *out, size_t bytes) {
  ENTER("cuMemAlloc_v2");
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  if (!out || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  int d = current->device;
  pthread_mutex_lock(&lock);
  CUresult r = CUDA_SUCCESS;
  if (bytes > capacity - used[d]) r = CUDA_ERROR_OUT_OF_MEMORY;
  block *b = r == CUDA_SUCCESS ? calloc(1, sizeof *b) : NULL;
  if (b) b->fd = -1;
  if (r == CUDA_SUCCESS && (b == NULL || (!fake && !shareable_memory(b, bytes, d))))
    r = CUDA_ERROR_OUT_OF_MEMORY;
  if (r == CUDA_SUCCESS) {
    unsigned char *base = b->base;
    CUdeviceptr addr = fake ? fabricate(bytes) : (CUdeviceptr)(uintptr_t)(base + CANARY);
    if (!fake) {
      memset(base, CANARY_BYTE, CANARY);
      memset(base + CANARY + bytes, CANARY_BYTE, CANARY);
    }
    b->next = live, b->addr = addr, b->size = bytes, b->device = d;
    live = b;
    used[d] += bytes;
    *out = addr;
  } else {
    free(b);
  }
  pthread_mutex_unlock(&lock);
  return r;
}
#endif

#ifndef STUB_WITHOUT_cuMemFree_v2
EXPORT CUresult cuMemFree_v2(CUdeviceptr ptr) {
  ENTER("cuMemFree_v2");
  pthread_mutex_lock(&lock);
  block **link = &live;
  while (*link && (*link)->addr != ptr) link = &(*link)->next;
  block *b = *link;
  CUresult r = CUDA_SUCCESS;
  if (b == NULL) {
    violations++; /* unknown pointer or double free */
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    for (int i = 0; b->base != NULL && i < CANARY; i++)
      if (b->base[i] != CANARY_BYTE || b->base[CANARY + b->size + (size_t)i] != CANARY_BYTE) {
        violations++;
        break;
      }
    /* another process still maps it: the driver's undefined behaviour */
    if (b->map && __atomic_load_n(&((ipc_header *)b->map)->importers, __ATOMIC_ACQUIRE) > 0)
      violations++;
    *link = b->next;
    used[b->device] -= b->size;
    if (b->map) {
      ((ipc_header *)b->map)->magic = 0; /* stale from now on */
      munmap(b->map, b->span);
      close(b->fd);
    }
    free(b);
  }
  pthread_mutex_unlock(&lock);
  return r;
}
#endif

/* Memory of another process mapped here (cuIpcOpenMemHandle), one mapping per allocation and
 * process, counted by opens. */
typedef struct imported {
  struct imported *next;
  int32_t pid;
  uint64_t serial;
  unsigned char *map;
  size_t span;
  CUdeviceptr addr;
  size_t size;
  long refs;
} imported;

static imported *imports;

/* Whether [ptr, ptr + bytes) is accessible memory (lock held): inside one live block, or
 * covered by accessible mappings; counts a violation if not. Never in fake-address mode. */
static int inside_block(CUdeviceptr ptr, size_t bytes) {
  for (block *b = live; b && !fake; b = b->next) {
    CUdeviceptr start = b->addr;
    if (ptr >= start && bytes <= b->size && ptr - start <= b->size - bytes) return 1;
  }
  for (imported *m = imports; m && !fake; m = m->next)
    if (ptr >= m->addr && bytes <= m->size && ptr - m->addr <= m->size - bytes) return 1;
  CUdeviceptr at = ptr, end = ptr + bytes;
  for (int progress = 1; at < end && progress && !fake;) {
    progress = 0;
    for (mapping *m = mappings; m; m = m->next)
      if (m->accessible && at >= m->ptr && at < m->ptr + m->size) {
        at = m->ptr + m->size;
        progress = 1;
      }
  }
  if (at >= end && !fake) return 1;
  violations++;
  return 0;
}

/* ---- stream-ordered copies and memsets, and the ordering checker ----
 * Every copy, memset and c10c_stub_touch is an access of device memory by a stream: it starts
 * when its stream's earlier work is done (start_time: the legacy default stream also waits for
 * the device's blocking streams and they for it; non-blocking streams wait only for their own
 * work and what they waited for by events) and takes copy_ticks (c10c_stub_set_copy_ticks,
 * default 0). An access of a range that another stream reads or writes with work not done by
 * the access's start (one of them a write) is a race: counted (c10c_stub_races), as a GPU
 * would read or write memory still in use. The data moves at once (the order is what is
 * checked). */

typedef struct access_record {
  CUdeviceptr ptr;
  size_t bytes;
  uint64_t stream; /* serial */
  uint64_t done_at;
  int write;
  struct access_record *next;
} access_record;

static access_record *accesses;
static long races;

EXPORT void c10c_stub_set_copy_ticks(uint64_t ticks) {
  pthread_mutex_lock(&lock);
  copy_ticks = ticks;
  pthread_mutex_unlock(&lock);
}

EXPORT long c10c_stub_races(void) {
  pthread_mutex_lock(&lock);
  long n = races;
  pthread_mutex_unlock(&lock);
  return n;
}

static struct stub_stream *resolve(CUstream s);

/* When new work on st can start (lock held). */
static uint64_t start_time(struct stub_stream *st) {
  uint64_t t = st->busy_until > clock_now ? st->busy_until : clock_now;
  if (st->kind == STREAM_LEGACY) {
    struct stub_stream *pt = &per_thread_streams[st->device];
    if (pt->busy_until > t) t = pt->busy_until;
    for (struct stub_stream *o = created_streams; o; o = o->next)
      if (o->device == st->device && !(o->flags & CU_STREAM_NON_BLOCKING) && o->busy_until > t)
        t = o->busy_until;
  } else if (!(st->flags & CU_STREAM_NON_BLOCKING)) {
    struct stub_stream *legacy = &default_streams[st->device];
    if (legacy->busy_until > t) t = legacy->busy_until;
  }
  return t;
}

/* Checks an access of [ptr, ptr + bytes) by st from start to done against the other streams'
 * unfinished accesses, and records it (lock held). */
static void check_access(struct stub_stream *st, uint64_t start, uint64_t done, CUdeviceptr ptr,
                         size_t bytes, int write) {
  if (bytes == 0) return;
  for (access_record *r = accesses; r; r = r->next)
    if (r->stream != st->serial && r->done_at > start && (r->write || write) &&
        ptr < r->ptr + r->bytes && r->ptr < ptr + bytes)
      races++;
  access_record *r = done > clock_now ? malloc(sizeof *r) : NULL;
  if (r) {
    *r = (access_record){ptr, bytes, st->serial, done, write, accesses};
    accesses = r;
  }
}

/* Queues ticks of work on st that reads [src, src + bytes) and writes [dst, dst + bytes) (0:
 * none), checked; returns when it is done (lock held). */
static uint64_t queue_access(struct stub_stream *st, CUdeviceptr src, CUdeviceptr dst, size_t bytes,
                             uint64_t ticks) {
  for (access_record **link = &accesses; *link;) { /* forget finished work */
    access_record *r = *link;
    if (r->done_at <= clock_now) {
      *link = r->next;
      free(r);
    } else {
      link = &r->next;
    }
  }
  uint64_t start = start_time(st), done = start + ticks;
  st->busy_until = done;
  if (src) check_access(st, start, done, src, bytes, 0);
  if (dst) check_access(st, start, done, dst, bytes, 1);
  return done;
}

/* The host waits for every stream of the device (cuCtxSynchronize; lock held). */
static void ctx_wait_all(int device) {
  uint64_t t = clock_now;
  if (default_streams[device].busy_until > t) t = default_streams[device].busy_until;
  if (per_thread_streams[device].busy_until > t) t = per_thread_streams[device].busy_until;
  for (struct stub_stream *o = created_streams; o; o = o->next)
    if (o->device == device && o->busy_until > t) t = o->busy_until;
  clock_now = t;
}

/* A "kernel" of the test: st reads (write 0) or writes [ptr, ptr + bytes), checked against the
 * other streams' unfinished work like the copies; CUDA_ERROR_INVALID_VALUE for memory that is
 * not device memory. */
EXPORT CUresult c10c_stub_touch(CUdeviceptr ptr, size_t bytes, CUstream s, int write) {
  pthread_mutex_lock(&lock);
  struct stub_stream *st = resolve(s);
  CUresult r = !st                         ? CUDA_ERROR_INVALID_CONTEXT
               : !inside_block(ptr, bytes) ? CUDA_ERROR_INVALID_VALUE
                                           : CUDA_SUCCESS;
  if (r == CUDA_SUCCESS) queue_access(st, write ? 0 : ptr, write ? ptr : 0, bytes, copy_ticks);
  pthread_mutex_unlock(&lock);
  return r;
}

/* A copy on stream s (dcheck/scheck: the device addresses to check and record, 0 for host
 * memory); wait_host: the host waits until it is done (the synchronous calls' host copies). */
static CUresult stream_copy(CUstream s, void *dst, const void *src, size_t bytes,
                            CUdeviceptr dcheck, CUdeviceptr scheck, int wait_host) {
  pthread_mutex_lock(&lock);
  struct stub_stream *st = resolve(s);
  CUresult r = !st ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
  int ok = r == CUDA_SUCCESS && (!dcheck || inside_block(dcheck, bytes)) &&
           (!scheck || inside_block(scheck, bytes));
  if (r == CUDA_SUCCESS && !ok) r = CUDA_ERROR_INVALID_VALUE;
  if (ok) {
    memmove(dst, src, bytes);
    uint64_t done = queue_access(st, scheck, dcheck, bytes, copy_ticks);
    if (wait_host && done > clock_now) clock_now = done;
  }
  pthread_mutex_unlock(&lock);
  return r;
}

static CUresult stream_memset(CUstream s, CUdeviceptr dst, unsigned char value, size_t count) {
  pthread_mutex_lock(&lock);
  struct stub_stream *st = resolve(s);
  CUresult r = !st                         ? CUDA_ERROR_INVALID_CONTEXT
               : !inside_block(dst, count) ? CUDA_ERROR_INVALID_VALUE
                                           : CUDA_SUCCESS;
  if (r == CUDA_SUCCESS) {
    memset((void *)(uintptr_t)dst, value, count);
    queue_access(st, 0, dst, count, copy_ticks);
  }
  pthread_mutex_unlock(&lock);
  return r;
}

/* The synchronous calls run on the legacy default stream; the host copies return when done,
 * DtoD and memsets before (as the driver's). */
EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes) {
  ENTER("cuMemcpyHtoD_v2");
  return stream_copy(NULL, (void *)(uintptr_t)dst, src, bytes, dst, 0, 1);
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
  ENTER("cuMemcpyDtoH_v2");
  return stream_copy(NULL, dst, (const void *)(uintptr_t)src, bytes, 0, src, 1);
}

EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  ENTER("cuMemcpyDtoD_v2");
  return stream_copy(NULL, (void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes, dst, src,
                     0);
}

EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t count) {
  ENTER("cuMemsetD8_v2");
  return stream_memset(NULL, dst, value, count);
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, CUstream s) {
  ENTER("cuMemcpyHtoDAsync_v2");
  return stream_copy(s, (void *)(uintptr_t)dst, src, bytes, dst, 0, 0);
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, CUstream s) {
  ENTER("cuMemcpyDtoHAsync_v2");
  return stream_copy(s, dst, (const void *)(uintptr_t)src, bytes, 0, src, 0);
}

EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s) {
  ENTER("cuMemcpyDtoDAsync_v2");
  return stream_copy(s, (void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes, dst, src, 0);
}

/* Between two contexts (either device's memory reachable: the driver stages through the host
 * without peer access). */
EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src,
                                  CUcontext src_ctx, size_t bytes, CUstream s) {
  ENTER("cuMemcpyPeerAsync");
  if (!dst_ctx || !src_ctx) return CUDA_ERROR_INVALID_CONTEXT;
  return stream_copy(s, (void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes, dst, src, 0);
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count, CUstream s) {
  ENTER("cuMemsetD8Async");
  return stream_memset(s, dst, value, count);
}

EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total) {
  ENTER("cuMemGetInfo_v2");
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  *free_bytes = capacity - used[current->device];
  *total = capacity;
  return CUDA_SUCCESS;
}

static const struct {
  CUresult code;
  const char *name, *text;
} errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
     "peer access is not supported between these two devices"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

/* The driver's name (which 0) or text (which 1) of an error; INVALID_VALUE for unknown codes. */
static CUresult describe(CUresult error, int which, const char **out) {
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    if (errors[i].code == error) {
      *out = which == 0 ? errors[i].name : errors[i].text;
      return CUDA_SUCCESS;
    }
  *out = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuGetErrorName(CUresult error, const char **out) { return describe(error, 0, out); }

EXPORT CUresult cuGetErrorString(CUresult error, const char **out) {
  return describe(error, 1, out);
}

/* ---- streams and events on the logical clock ---- */

/* NULL and CU_STREAM_LEGACY (0x1) are the current device's legacy default stream,
 * CU_STREAM_PER_THREAD (0x2) its per-thread default stream (one for all threads here: a blocking
 * stream). */
static struct stub_stream *resolve(CUstream s) {
  if ((uintptr_t)s > 2) return s;
  if (!current) return NULL;
  return (uintptr_t)s == 2 ? &per_thread_streams[current->device]
                           : &default_streams[current->device];
}

/* Queues ticks of work on a stream (a kernel, a copy) from the test: it starts when the stream
 * could start new work (the legacy stream after the blocking ones, and they after it). */
EXPORT void c10c_stub_enqueue(CUstream s, uint64_t ticks) {
  pthread_mutex_lock(&lock);
  struct stub_stream *st = resolve(s);
  if (st) queue_access(st, 0, 0, 0, ticks);
  pthread_mutex_unlock(&lock);
}

/* When the work queued on a stream so far completes (for the replay's cross-stream checks). */
EXPORT uint64_t c10c_stub_stream_busy(CUstream s) {
  pthread_mutex_lock(&lock);
  struct stub_stream *st = resolve(s);
  uint64_t t = st ? st->busy_until : 0;
  pthread_mutex_unlock(&lock);
  return t;
}

EXPORT long c10c_stub_live_streams(void) { return live_streams; }
EXPORT long c10c_stub_live_events(void) { return live_events; }

EXPORT CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest) {
  ENTER("cuCtxGetStreamPriorityRange");
  if (least) *least = 0;
  if (greatest) *greatest = -5;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamCreateWithPriority(CUstream *out, unsigned flags, int priority) {
  ENTER("cuStreamCreateWithPriority");
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  if (!out || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING)) return CUDA_ERROR_INVALID_VALUE;
  struct stub_stream *st = calloc(1, sizeof *st);
  if (!st) return CUDA_ERROR_OUT_OF_MEMORY;
  st->device = current->device;
  st->priority = priority < -5 ? -5 : priority > 0 ? 0 : priority;
  st->flags = flags;
  st->kind = STREAM_CREATED;
  pthread_mutex_lock(&lock);
  static uint64_t next_serial = 2 * MAX_DEVICES + 1;
  st->serial = next_serial++;
  st->next = created_streams;
  created_streams = st;
  live_streams++;
  pthread_mutex_unlock(&lock);
  *out = st;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamDestroy_v2(CUstream s) {
  ENTER("cuStreamDestroy_v2");
  if ((uintptr_t)s <= 2) return CUDA_ERROR_INVALID_HANDLE;
  pthread_mutex_lock(&lock);
  struct stub_stream **link = &created_streams;
  while (*link && *link != s) link = &(*link)->next;
  if (*link) *link = s->next;
  live_streams--;
  pthread_mutex_unlock(&lock);
  free(s);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamQuery(CUstream s) {
  ENTER("cuStreamQuery");
  pthread_mutex_lock(&lock);
  struct stub_stream *st = resolve(s);
  CUresult r = !st                          ? CUDA_ERROR_INVALID_CONTEXT
               : st->busy_until > clock_now ? CUDA_ERROR_NOT_READY
                                            : CUDA_SUCCESS;
  pthread_mutex_unlock(&lock);
  return r;
}

EXPORT CUresult cuStreamSynchronize(CUstream s) {
  ENTER("cuStreamSynchronize");
  pthread_mutex_lock(&lock);
  struct stub_stream *st = resolve(s);
  if (st && st->busy_until > clock_now) clock_now = st->busy_until; /* the host waited */
  pthread_mutex_unlock(&lock);
  return st ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

/* The shared state of an interprocess event (a memfd page). */
typedef struct ipc_event_state {
  uint64_t magic, serial, nonce;
  int32_t device, recorded;
  uint64_t done_at;
} ipc_event_state;

enum { CU_EVENT_BLOCKING_SYNC = 1, CU_EVENT_INTERPROCESS = 4 };

/* An interprocess event reads its state from the shared page first (another process may have
 * recorded it), and writes it back after a record (lock held). */
static void event_pull(struct stub_event *e) {
  if (!e->shared) return;
  e->recorded = __atomic_load_n(&e->shared->recorded, __ATOMIC_ACQUIRE);
  e->done_at = __atomic_load_n(&e->shared->done_at, __ATOMIC_ACQUIRE);
}

static void event_push(struct stub_event *e) {
  if (!e->shared) return;
  __atomic_store_n(&e->shared->done_at, e->done_at, __ATOMIC_RELEASE);
  __atomic_store_n(&e->shared->recorded, e->recorded, __ATOMIC_RELEASE);
}

EXPORT CUresult cuEventCreate(CUevent *out, unsigned flags) {
  ENTER("cuEventCreate");
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  if (!out || (flags & ~(unsigned)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING |
                                   CU_EVENT_INTERPROCESS)))
    return CUDA_ERROR_INVALID_VALUE;
  /* the driver: an interprocess event must have timing disabled */
  if ((flags & CU_EVENT_INTERPROCESS) && !(flags & CU_EVENT_DISABLE_TIMING))
    return CUDA_ERROR_INVALID_VALUE;
  struct stub_event *e = calloc(1, sizeof *e);
  if (!e) return CUDA_ERROR_OUT_OF_MEMORY;
  e->device = current->device;
  e->flags = flags;
  e->fd = -1;
  if (flags & CU_EVENT_INTERPROCESS) {
    e->fd = memfd_create("c10c_stub_event", MFD_CLOEXEC);
    void *map =
        e->fd >= 0 && ftruncate(e->fd, sizeof(ipc_event_state)) == 0
            ? mmap(NULL, sizeof(ipc_event_state), PROT_READ | PROT_WRITE, MAP_SHARED, e->fd, 0)
            : MAP_FAILED;
    if (map == MAP_FAILED) {
      if (e->fd >= 0) close(e->fd);
      free(e);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    e->shared = map;
    pthread_mutex_lock(&lock);
    e->serial = next_serial_ipc++;
    pthread_mutex_unlock(&lock);
    e->nonce = random64();
    *e->shared = (ipc_event_state){IPC_MAGIC, e->serial, e->nonce, e->device, 0, 0};
  }
  pthread_mutex_lock(&lock);
  live_events++;
  pthread_mutex_unlock(&lock);
  *out = e;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuEventDestroy_v2(CUevent e) {
  ENTER("cuEventDestroy_v2");
  if (!e) return CUDA_ERROR_INVALID_HANDLE;
  pthread_mutex_lock(&lock);
  live_events--;
  pthread_mutex_unlock(&lock);
  if (e->shared) munmap(e->shared, sizeof(ipc_event_state));
  if (e->fd >= 0) close(e->fd);
  free(e);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuEventRecord(CUevent e, CUstream s) {
  ENTER("cuEventRecord");
  if (!e) return CUDA_ERROR_INVALID_HANDLE;
  pthread_mutex_lock(&lock);
  struct stub_stream *st = resolve(s);
  CUresult r = CUDA_SUCCESS;
  if (!st || st->device != e->device) {
    r = CUDA_ERROR_INVALID_HANDLE; /* an event records only on its own device's streams */
  } else {
    e->recorded = 1;
    e->done_at = start_time(st); /* on the legacy stream: after the blocking streams too */
    event_push(e);
  }
  pthread_mutex_unlock(&lock);
  return r;
}

EXPORT CUresult cuEventQuery(CUevent e) {
  ENTER("cuEventQuery");
  if (!e) return CUDA_ERROR_INVALID_HANDLE;
  pthread_mutex_lock(&lock);
  event_pull(e);
  CUresult r = e->recorded && e->done_at > clock_now ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
  pthread_mutex_unlock(&lock);
  return r;
}

EXPORT CUresult cuEventSynchronize(CUevent e) {
  ENTER("cuEventSynchronize");
  if (!e) return CUDA_ERROR_INVALID_HANDLE;
  pthread_mutex_lock(&lock);
  event_pull(e);
  if (e->recorded && e->done_at > clock_now) clock_now = e->done_at;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags) {
  ENTER("cuStreamWaitEvent");
  if (!e || flags != 0) return !e ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  struct stub_stream *st = resolve(s);
  event_pull(e);
  if (st && e->recorded && e->done_at > st->busy_until) st->busy_until = e->done_at;
  pthread_mutex_unlock(&lock);
  return st ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

EXPORT CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
  ENTER("cuEventElapsedTime");
  if (!ms || !start || !end) return CUDA_ERROR_INVALID_VALUE;
  if ((start->flags | end->flags) & CU_EVENT_DISABLE_TIMING) return CUDA_ERROR_INVALID_HANDLE;
  if (!start->recorded || !end->recorded) return CUDA_ERROR_INVALID_HANDLE;
  pthread_mutex_lock(&lock);
  CUresult r =
      start->done_at > clock_now || end->done_at > clock_now ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
  if (r == CUDA_SUCCESS) *ms = (float)((double)end->done_at - (double)start->done_at);
  pthread_mutex_unlock(&lock);
  return r;
}

/* ---- interprocess memory and event handles ----
 * A handle (64 bytes, opaque to callers as the driver's) names the exporting process, the fd of
 * the memfd behind the allocation or event there, and the serial and nonce its header carries:
 * another process opens /proc/<pid>/fd/<fd> and checks the header, so a handle of a freed
 * allocation, of an exited process or forged bytes open nothing. As the driver: an address
 * inside an allocation exports the allocation's base; opening a memory handle in the exporting
 * process is refused (CUDA_ERROR_INVALID_CONTEXT); a second open in a process returns the same
 * address with its count raised, cuIpcCloseMemHandle lowers it and unmaps at 0; an event
 * handle needs CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING (else CUDA_ERROR_INVALID_VALUE);
 * bytes that are not a handle: CUDA_ERROR_INVALID_VALUE; a handle whose allocation or event is
 * gone: CUDA_ERROR_INVALID_HANDLE. */

typedef struct CUipcMemHandle {
  char reserved[64];
} CUipcMemHandle;

typedef struct CUipcEventHandle {
  char reserved[64];
} CUipcEventHandle;

enum { WIRE_MEM = 1, WIRE_EVENT = 2, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 1 };

typedef struct ipc_wire {
  uint64_t magic;
  uint32_t kind;
  int32_t pid, fd, device;
  uint64_t serial, nonce, size;
  char zero[16];
} ipc_wire;
_Static_assert(sizeof(ipc_wire) == 64, "a CUipcMemHandle is 64 bytes");

/* The wire form of a handle, or CUDA_ERROR_INVALID_VALUE for bytes that are not one. */
static CUresult read_wire(ipc_wire *w, const char *bytes, uint32_t kind) {
  memcpy(w, bytes, sizeof *w);
  static const char zero[16];
  if (w->magic != IPC_MAGIC || w->kind != kind || w->pid <= 0 || w->fd < 0 || w->device < 0 ||
      w->device >= MAX_DEVICES || memcmp(w->zero, zero, sizeof zero) != 0)
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

/* Opens the exporter's memfd (-1 when it is gone). */
static int open_exported(const ipc_wire *w) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)w->pid, (int)w->fd);
  return open(path, O_RDWR | O_CLOEXEC);
}

EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle *handle, CUdeviceptr ptr) {
  ENTER("cuIpcGetMemHandle");
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  if (!handle) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  block *b = live;
  while (b && !(ptr >= b->addr && ptr - b->addr < b->size)) b = b->next;
  CUresult r = !b ? CUDA_ERROR_INVALID_VALUE : !b->map ? CUDA_ERROR_NOT_SUPPORTED : CUDA_SUCCESS;
  if (r == CUDA_SUCCESS) {
    ipc_wire w = {IPC_MAGIC, WIRE_MEM, (int32_t)getpid(), b->fd, b->device,
                  b->serial, b->nonce, b->size,           {0}};
    memcpy(handle->reserved, &w, sizeof w);
  }
  pthread_mutex_unlock(&lock);
  return r;
}

EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *out, CUipcMemHandle handle, unsigned flags) {
  ENTER("cuIpcOpenMemHandle_v2");
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  ipc_wire w;
  if (!out || flags != CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) return CUDA_ERROR_INVALID_VALUE;
  CUresult r = read_wire(&w, handle.reserved, WIRE_MEM);
  if (r != CUDA_SUCCESS) return r;
  if (w.pid == (int32_t)getpid()) return CUDA_ERROR_INVALID_CONTEXT; /* the exporting process */
  if (w.device >= device_count) return CUDA_ERROR_INVALID_DEVICE;
  /* another device's memory: peer access, which the lazy flag enables where it can */
  if (w.device != current->device && !(peer_mask[current->device] >> w.device & 1))
    return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
  pthread_mutex_lock(&lock);
  for (imported *m = imports; m; m = m->next)
    if (m->pid == w.pid && m->serial == w.serial) {
      m->refs++;
      *out = m->addr;
      pthread_mutex_unlock(&lock);
      return CUDA_SUCCESS;
    }
  pthread_mutex_unlock(&lock);
  int fd = open_exported(&w);
  if (fd < 0) return CUDA_ERROR_INVALID_HANDLE;
  size_t span = IPC_HEADER + (size_t)w.size + 2 * CANARY;
  struct stat st;
  void *map = w.size > 0 && fstat(fd, &st) == 0 && (size_t)st.st_size == span
                  ? mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                  : MAP_FAILED;
  close(fd);
  if (map == MAP_FAILED) return CUDA_ERROR_INVALID_HANDLE;
  ipc_header *h = map;
  if (h->magic != IPC_MAGIC || h->serial != w.serial || h->nonce != w.nonce || h->size != w.size ||
      h->pid != w.pid) {
    munmap(map, span);
    return CUDA_ERROR_INVALID_HANDLE;
  }
  imported *m = malloc(sizeof *m);
  if (!m) {
    munmap(map, span);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  __atomic_add_fetch(&h->importers, 1, __ATOMIC_ACQ_REL);
  pthread_mutex_lock(&lock);
  *m = (imported){
      imports,        w.pid,
      w.serial,       map,
      span,           (CUdeviceptr)(uintptr_t)((unsigned char *)map + IPC_HEADER + CANARY),
      (size_t)w.size, 1};
  imports = m;
  *out = m->addr;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr ptr) {
  ENTER("cuIpcCloseMemHandle");
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  pthread_mutex_lock(&lock);
  imported **link = &imports;
  while (*link && (*link)->addr != ptr) link = &(*link)->next;
  imported *m = *link;
  if (m && --m->refs == 0) *link = m->next;
  pthread_mutex_unlock(&lock);
  if (!m) return CUDA_ERROR_INVALID_VALUE;
  if (m->refs == 0) {
    __atomic_sub_fetch(&((ipc_header *)m->map)->importers, 1, __ATOMIC_ACQ_REL);
    munmap(m->map, m->span);
    free(m);
  }
  return CUDA_SUCCESS;
}

/* The allocation holding ptr: this process's own or one it opened. */
EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr ptr) {
  ENTER("cuMemGetAddressRange_v2");
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  pthread_mutex_lock(&lock);
  CUresult r = CUDA_ERROR_NOT_FOUND;
  for (block *b = live; b && r != CUDA_SUCCESS; b = b->next)
    if (ptr >= b->addr && ptr - b->addr < b->size) {
      if (base) *base = b->addr;
      if (size) *size = b->size;
      r = CUDA_SUCCESS;
    }
  for (imported *m = imports; m && r != CUDA_SUCCESS; m = m->next)
    if (ptr >= m->addr && ptr - m->addr < m->size) {
      if (base) *base = m->addr;
      if (size) *size = m->size;
      r = CUDA_SUCCESS;
    }
  pthread_mutex_unlock(&lock);
  return r;
}

/* Allocations of other processes this process has open (for the tests). */
EXPORT long c10c_stub_ipc_open_count(void) {
  pthread_mutex_lock(&lock);
  long n = 0;
  for (imported *m = imports; m; m = m->next) n++;
  pthread_mutex_unlock(&lock);
  return n;
}

EXPORT CUresult cuIpcGetEventHandle(CUipcEventHandle *handle, CUevent e) {
  ENTER("cuIpcGetEventHandle");
  if (!e) return CUDA_ERROR_INVALID_HANDLE;
  if (!handle || !(e->flags & CU_EVENT_INTERPROCESS) || !(e->flags & CU_EVENT_DISABLE_TIMING) ||
      !e->shared)
    return CUDA_ERROR_INVALID_VALUE;
  ipc_wire w = {IPC_MAGIC, WIRE_EVENT, (int32_t)getpid(), e->fd, e->device, e->serial, e->nonce,
                0,         {0}};
  memcpy(handle->reserved, &w, sizeof w);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuIpcOpenEventHandle(CUevent *out, CUipcEventHandle handle) {
  ENTER("cuIpcOpenEventHandle");
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  ipc_wire w;
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  CUresult r = read_wire(&w, handle.reserved, WIRE_EVENT);
  if (r != CUDA_SUCCESS) return r;
  int fd = open_exported(&w);
  if (fd < 0) return CUDA_ERROR_INVALID_HANDLE;
  struct stat st;
  void *map = fstat(fd, &st) == 0 && (size_t)st.st_size == sizeof(ipc_event_state)
                  ? mmap(NULL, sizeof(ipc_event_state), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                  : MAP_FAILED;
  ipc_event_state *state = map;
  if (map != MAP_FAILED &&
      (state->magic != IPC_MAGIC || state->serial != w.serial || state->nonce != w.nonce)) {
    munmap(map, sizeof(ipc_event_state));
    map = MAP_FAILED;
  }
  struct stub_event *e = map != MAP_FAILED ? calloc(1, sizeof *e) : NULL;
  if (!e) {
    if (map != MAP_FAILED) munmap(map, sizeof(ipc_event_state));
    close(fd);
    return map == MAP_FAILED ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_OUT_OF_MEMORY;
  }
  e->device = w.device;
  e->flags = CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
  e->shared = state, e->fd = fd, e->serial = w.serial, e->nonce = w.nonce;
  pthread_mutex_lock(&lock);
  live_events++;
  event_pull(e);
  pthread_mutex_unlock(&lock);
  *out = e;
  return CUDA_SUCCESS;
}

/* ---- virtual memory management (left out with -DSTUB_WITHOUT_VMM: an older driver) ---- */
#ifndef STUB_WITHOUT_VMM

typedef struct CUmemLocation {
  int type; /* CU_MEM_LOCATION_TYPE_DEVICE = 1 */
  int id;
} CUmemLocation;

typedef struct CUmemAllocationProp {
  int type;                 /* CU_MEM_ALLOCATION_TYPE_PINNED = 1 */
  int requestedHandleTypes; /* CU_MEM_HANDLE_TYPE_NONE = 0 */
  CUmemLocation location;
  void *win32HandleMetaData;
  struct {
    unsigned char compressionType, gpuDirectRDMACapable;
    unsigned short usage;
    unsigned char reserved[4];
  } allocFlags;
} CUmemAllocationProp;

typedef struct CUmemAccessDesc {
  CUmemLocation location;
  int flags; /* CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3 */
} CUmemAccessDesc;

typedef unsigned long long CUmemGenericAllocationHandle;

#define GRANULARITY granularity_bytes

EXPORT long c10c_stub_mapped_bytes(void) {
  pthread_mutex_lock(&lock);
  long n = 0;
  for (mapping *m = mappings; m; m = m->next) n += (long)m->size;
  pthread_mutex_unlock(&lock);
  return n;
}

/* Attribute 102 (virtual memory management supported): 1, or 0 with C10C_STUB_NO_VMM_DEVICE set
 * (a device that lacks it). The attributes torch.cuda.get_device_properties reports: an
 * A100-like device (compute capability C10C_STUB_CC_MAJOR.C10C_STUB_CC_MINOR, 8.0 by default;
 * PCI bus d + 1); other attributes 0. */
EXPORT CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice d) {
  ENTER("cuDeviceGetAttribute");
  CUresult r = check_device(d);
  if (r != CUDA_SUCCESS) return r;
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  switch (attribute) {
    case 1: *value = 1024; break;                                    /* max threads per block */
    case 8: *value = 49152; break;                                   /* shared memory per block */
    case 10: *value = 32; break;                                     /* warp size */
    case 13: *value = 1410000; break;                                /* clock rate (kHz) */
    case 16: *value = 108; break;                                    /* multiprocessors */
    case 33: *value = d + 1; break;                                  /* PCI bus id */
    case 36: *value = 1215000; break;                                /* memory clock rate (kHz) */
    case 37: *value = 5120; break;                                   /* memory bus width (bits) */
    case 38: *value = 40 << 20; break;                               /* L2 cache (bytes) */
    case 39: *value = 2048; break;                                   /* max threads per SM */
    case 75: *value = (int)env_long("C10C_STUB_CC_MAJOR", 8); break; /* compute capability */
    case 76: *value = (int)env_long("C10C_STUB_CC_MINOR", 0); break;
    case 81: *value = 167936; break; /* shared memory per SM */
    case 82: *value = 65536; break;  /* registers per SM */
    case 97: *value = 166912; break; /* shared memory opt-in */
    case 102: *value = !env_long("C10C_STUB_NO_VMM_DEVICE", 0); break;
    default: *value = 0;
  }
  return CUDA_SUCCESS;
}

typedef struct CUuuid {
  char bytes[16];
} CUuuid;

/* A fixed UUID per device: bytes 0..14 are 0x10 + i, byte 15 the device. */
EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice d) {
  ENTER("cuDeviceGetUuid_v2");
  CUresult r = check_device(d);
  if (r != CUDA_SUCCESS) return r;
  if (!uuid) return CUDA_ERROR_INVALID_VALUE;
  for (int i = 0; i < 15; i++) uuid->bytes[i] = (char)(0x10 + i);
  uuid->bytes[15] = (char)d;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                              int option) {
  ENTER("cuMemGetAllocationGranularity");
  if (!granularity || !prop || option < 0 || option > 1) return CUDA_ERROR_INVALID_VALUE;
  if (prop->type != 1 || prop->location.type != 1) return CUDA_ERROR_INVALID_VALUE;
  if (check_device(prop->location.id) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_DEVICE;
  *granularity = GRANULARITY;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAddressReserve(CUdeviceptr *out, size_t size, size_t alignment,
                                    CUdeviceptr addr, unsigned long long flags) {
  ENTER("cuMemAddressReserve");
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  (void)addr; /* a hint */
  if (!out || size == 0 || size % GRANULARITY || flags || (alignment & (alignment - 1)))
    return CUDA_ERROR_INVALID_VALUE;
  reservation *r = malloc(sizeof *r);
  if (!r) return CUDA_ERROR_OUT_OF_MEMORY;
  pthread_mutex_lock(&lock);
  CUdeviceptr base = 0;
  if (fake) {
    base = fabricate(size);
  } else {
    /* aligned to the granularity, as the driver's (mmap only promises pages): the slack
     * around the aligned range is given back */
    size_t slack = GRANULARITY;
    void *p =
        mmap(NULL, size + slack, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) {
      uintptr_t start = (uintptr_t)p, aligned = (start + slack - 1) & ~(uintptr_t)(slack - 1);
      if (aligned > start) munmap(p, aligned - start);
      if (aligned + size < start + size + slack)
        munmap((void *)(aligned + size), start + size + slack - (aligned + size));
      base = (CUdeviceptr)aligned;
    }
  }
  if (base != 0) {
    *r = (reservation){base, size, reservations};
    reservations = r;
    *out = base;
  }
  pthread_mutex_unlock(&lock);
  if (base == 0) free(r);
  return base ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  ENTER("cuMemAddressFree");
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  pthread_mutex_lock(&lock);
  reservation **link = &reservations;
  while (*link && ((*link)->base != ptr || (*link)->size != size)) link = &(*link)->next;
  CUresult r = *link ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  for (mapping *m = mappings; m && r == CUDA_SUCCESS; m = m->next)
    if (m->ptr >= ptr && m->ptr < ptr + size) r = CUDA_ERROR_INVALID_VALUE; /* still mapped */
  if (r == CUDA_SUCCESS) {
    reservation *res = *link;
    *link = res->next;
    if (!fake) munmap((void *)(uintptr_t)res->base, res->size);
    free(res);
  } else {
    violations++;
  }
  pthread_mutex_unlock(&lock);
  return r;
}

EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                            const CUmemAllocationProp *prop, unsigned long long flags) {
  ENTER("cuMemCreate");
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  if (!handle || !prop || size == 0 || size % GRANULARITY || flags || prop->type != 1 ||
      prop->location.type != 1 || (prop->requestedHandleTypes & ~1))
    return CUDA_ERROR_INVALID_VALUE;
  int d = prop->location.id;
  if (d < 0 || d >= device_count) return CUDA_ERROR_INVALID_DEVICE;
  physical *ph = malloc(sizeof *ph);
  if (!ph) return CUDA_ERROR_OUT_OF_MEMORY;
  pthread_mutex_lock(&lock);
  CUresult r = size > capacity - used[d] ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_SUCCESS;
  int fd = -1;
  if (r == CUDA_SUCCESS && !fake) {
    char name[32];
    snprintf(name, sizeof name, "c10c_stub_d%d", d); /* an importer reads the device from it */
    fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) r = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (r == CUDA_SUCCESS) {
    *ph = (physical){fd, size, d, 0, 0, prop->requestedHandleTypes, 0, physicals};
    physicals = ph;
    used[d] += size;
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)ph;
  } else {
    if (fd >= 0) close(fd);
    free(ph);
  }
  pthread_mutex_unlock(&lock);
  return r;
}

/* Frees a physical allocation that is released and unmapped (lock held). */
static void physical_maybe_free(physical *ph) {
  if (!ph->released || ph->maps > 0) return;
  physical **link = &physicals;
  while (*link != ph) link = &(*link)->next;
  *link = ph->next;
  if (!ph->imported) used[ph->device] -= ph->size;
  if (ph->fd >= 0) close(ph->fd);
  free(ph);
}

static physical *find_physical(CUmemGenericAllocationHandle handle) {
  for (physical *ph = physicals; ph; ph = ph->next)
    if ((CUmemGenericAllocationHandle)(uintptr_t)ph == handle && !ph->released) return ph;
  return NULL;
}

EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  ENTER("cuMemRelease");
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  pthread_mutex_lock(&lock);
  physical *ph = find_physical(handle);
  if (ph) {
    ph->released = 1;
    if (ph->maps > 0) violations++; /* the driver defers the free; libc10c unmaps first */
    physical_maybe_free(ph);
  } else {
    violations++;
  }
  pthread_mutex_unlock(&lock);
  return ph ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                         CUmemGenericAllocationHandle handle, unsigned long long flags) {
  ENTER("cuMemMap");
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  if (flags || size == 0 || size % GRANULARITY || ptr % GRANULARITY)
    return CUDA_ERROR_INVALID_VALUE;
  mapping *m = malloc(sizeof *m);
  if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
  pthread_mutex_lock(&lock);
  physical *ph = find_physical(handle);
  int inside = 0, overlaps = 0;
  for (reservation *r = reservations; r; r = r->next)
    inside |= ptr >= r->base && size <= r->size && ptr - r->base <= r->size - size;
  for (mapping *o = mappings; o; o = o->next)
    overlaps |= ptr < o->ptr + o->size && o->ptr < ptr + size;
  CUresult r = !ph                                               ? CUDA_ERROR_INVALID_HANDLE
               : !inside || overlaps || offset + size > ph->size ? CUDA_ERROR_INVALID_VALUE
                                                                 : CUDA_SUCCESS;
  if (r == CUDA_SUCCESS && !fake &&
      mmap((void *)(uintptr_t)ptr, size, PROT_NONE, MAP_SHARED | MAP_FIXED, ph->fd,
           (off_t)offset) == MAP_FAILED)
    r = CUDA_ERROR_OUT_OF_MEMORY;
  if (r == CUDA_SUCCESS) {
    *m = (mapping){ptr, size, ph, 0, mappings};
    mappings = m;
    ph->maps++;
  } else {
    violations++;
    free(m);
  }
  pthread_mutex_unlock(&lock);
  return r;
}

EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                               size_t count) {
  ENTER("cuMemSetAccess");
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  if (!desc || count == 0) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; i++)
    if (desc[i].location.type != 1 || desc[i].flags != 3) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  size_t covered = 0;
  CUresult r = CUDA_SUCCESS;
  for (mapping *m = mappings; m; m = m->next)
    if (m->ptr >= ptr && m->ptr + m->size <= ptr + size) {
      covered += m->size;
      /* a device other than the memory's own must be able to access it (peer access) */
      for (size_t i = 0; i < count; i++) {
        int d = desc[i].location.id;
        if (d < 0 || d >= device_count)
          r = CUDA_ERROR_INVALID_DEVICE;
        else if (d != m->phys->device && !(peer_mask[d] >> m->phys->device & 1))
          r = CUDA_ERROR_INVALID_DEVICE;
      }
    }
  if (r == CUDA_SUCCESS && covered != size) r = CUDA_ERROR_INVALID_VALUE;
  for (mapping *m = mappings; m && r == CUDA_SUCCESS; m = m->next)
    if (m->ptr >= ptr && m->ptr + m->size <= ptr + size) {
      if (!fake) mprotect((void *)(uintptr_t)m->ptr, m->size, PROT_READ | PROT_WRITE);
      for (size_t i = 0; i < count; i++) m->accessible |= 1ULL << desc[i].location.id;
    }
  if (r != CUDA_SUCCESS) violations++;
  pthread_mutex_unlock(&lock);
  return r;
}

/* The devices the mapping holding ptr is accessible to (bit d: device d); -1 if none holds it. */
EXPORT long long c10c_stub_access(CUdeviceptr ptr) {
  pthread_mutex_lock(&lock);
  long long bits = -1;
  for (mapping *m = mappings; m; m = m->next)
    if (ptr >= m->ptr && ptr < m->ptr + m->size) bits = (long long)m->accessible;
  pthread_mutex_unlock(&lock);
  return bits;
}

EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  ENTER("cuMemUnmap");
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  pthread_mutex_lock(&lock);
  size_t covered = 0;
  for (mapping *m = mappings; m; m = m->next)
    if (m->ptr >= ptr && m->ptr + m->size <= ptr + size) covered += m->size;
  CUresult r = covered == size && size ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  for (mapping **link = &mappings; *link && r == CUDA_SUCCESS;) {
    mapping *m = *link;
    if (m->ptr >= ptr && m->ptr + m->size <= ptr + size) {
      *link = m->next;
      if (!fake)
        mmap((void *)(uintptr_t)m->ptr, m->size, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
      m->phys->maps--;
      physical_maybe_free(m->phys);
      free(m);
    } else {
      link = &m->next;
    }
  }
  if (r != CUDA_SUCCESS) violations++;
  pthread_mutex_unlock(&lock);
  return r;
}
/* Exports physical memory made with requestedHandleTypes CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
 * as a new file descriptor of this process (the driver's: the caller closes it). */
EXPORT CUresult cuMemExportToShareableHandle(void *out, CUmemGenericAllocationHandle handle,
                                             int type, unsigned long long flags) {
  ENTER("cuMemExportToShareableHandle");
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  if (!out || type != 1 || flags) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  physical *ph = find_physical(handle);
  CUresult r = !ph                                     ? CUDA_ERROR_INVALID_HANDLE
               : ph->fd < 0 || !(ph->handle_types & 1) ? CUDA_ERROR_INVALID_VALUE
                                                       : CUDA_SUCCESS;
  int fd = r == CUDA_SUCCESS ? fcntl(ph->fd, F_DUPFD_CLOEXEC, 0) : -1;
  if (r == CUDA_SUCCESS && fd < 0) r = CUDA_ERROR_OUT_OF_MEMORY;
  pthread_mutex_unlock(&lock);
  if (r == CUDA_SUCCESS) memcpy(out, &fd, sizeof fd);
  return r;
}

/* Imports physical memory another process exported as a file descriptor (the caller keeps its
 * fd); anything but the stand-in's memory is CUDA_ERROR_INVALID_VALUE. */
EXPORT CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *os,
                                               int type) {
  ENTER("cuMemImportFromShareableHandle");
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  if (!handle || type != 1) return CUDA_ERROR_INVALID_VALUE;
  int fd = (int)(intptr_t)os;
  char path[64], target[128];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(path, target, sizeof target - 1);
  int device = -1;
  struct stat st;
  if (n > 0) {
    target[n] = '\0';
    if (sscanf(target, "/memfd:c10c_stub_d%d", &device) != 1) device = -1;
  }
  if (device < 0 || device >= device_count || fstat(fd, &st) != 0 || st.st_size <= 0 ||
      (size_t)st.st_size % GRANULARITY)
    return CUDA_ERROR_INVALID_VALUE;
  physical *ph = malloc(sizeof *ph);
  int mine = ph ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
  if (mine < 0) {
    free(ph);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  pthread_mutex_lock(&lock);
  *ph = (physical){mine, (size_t)st.st_size, device, 0, 0, 1, 1, physicals};
  physicals = ph;
  *handle = (CUmemGenericAllocationHandle)(uintptr_t)ph;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}
#endif /* STUB_WITHOUT_VMM */

/* ---- pinned host memory: cuMemHostAlloc / cuMemFreeHost over malloc'd memory, page-locked
 * bytes counted (c10c_stub_pinned_bytes) against C10C_STUB_PINNED_LIMIT (bytes; unset: no limit)
 * or c10c_stub_set_pinned_limit. ---- */

enum { MAX_PINNED = 4096 };
static struct {
  void *ptr;
  size_t size;
} pinned[MAX_PINNED];
static size_t pinned_count, pinned_bytes;
static long long pinned_limit = -1; /* -1: read the environment */

static long long env_ll(const char *name, long long fallback) {
  const char *v = getenv(name);
  return v != NULL && *v != '\0' ? strtoll(v, NULL, 10) : fallback;
}

EXPORT size_t c10c_stub_pinned_bytes(void) { return pinned_bytes; }
EXPORT void c10c_stub_set_pinned_limit(long long bytes) { pinned_limit = bytes; }

EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags) {
  ENTER("cuMemHostAlloc");
  (void)flags;
  if (pp == NULL || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  if (current == NULL) return CUDA_ERROR_INVALID_CONTEXT;
  pthread_mutex_lock(&lock);
  if (pinned_limit == -1) pinned_limit = env_ll("C10C_STUB_PINNED_LIMIT", -2);
  CUresult r = CUDA_SUCCESS;
  void *p = NULL;
  if ((pinned_limit >= 0 && pinned_bytes + bytes > (size_t)pinned_limit) ||
      pinned_count == MAX_PINNED || posix_memalign(&p, 4096, bytes) != 0) {
    r = CUDA_ERROR_OUT_OF_MEMORY;
  } else {
    pinned[pinned_count].ptr = p;
    pinned[pinned_count].size = bytes;
    pinned_count++;
    pinned_bytes += bytes;
    *pp = p;
  }
  pthread_mutex_unlock(&lock);
  return r;
}

EXPORT CUresult cuMemFreeHost(void *p) {
  ENTER("cuMemFreeHost");
  pthread_mutex_lock(&lock);
  size_t i = 0;
  while (i < pinned_count && pinned[i].ptr != p) i++;
  CUresult r = CUDA_SUCCESS;
  if (i == pinned_count) {
    violations++;
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    pinned_bytes -= pinned[i].size;
    pinned[i] = pinned[--pinned_count];
    free(p);
  }
  pthread_mutex_unlock(&lock);
  return r;
}
