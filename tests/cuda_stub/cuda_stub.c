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
 * - A logical clock the tests move (c10c_stub_advance), for the streams and events to come.
 * - Failure injection: c10c_stub_fail("cuMemAlloc_v2", k, error) makes the k-th next call of
 *   that entry point return error; c10c_stub_calls(name) counts calls.
 * - Built twice: the second copy (-DSTUB_WITHOUT_cuMemFree_v2) lacks one symbol, for the
 *   loader's missing-symbol path.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef int CUresult;
typedef int CUdevice;
typedef uint64_t CUdeviceptr;
typedef struct stub_context *CUcontext;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_UNKNOWN = 999,
};

enum { MAX_DEVICES = 16, CANARY = 64 };
static const unsigned char CANARY_BYTE = 0xC5;

struct stub_context {
  int device;
};

typedef struct block {
  struct block *next;
  unsigned char *base; /* canary, payload, canary */
  size_t size;
  int device;
} block;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int initialized, device_count = -1;
static size_t capacity;
static size_t used[MAX_DEVICES];
static struct stub_context contexts[MAX_DEVICES];
static _Thread_local CUcontext current;
static block *live;
static uint64_t clock_now;
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
    for (int i = 0; i < MAX_DEVICES; i++) contexts[i].device = i;
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
  if (r == CUDA_SUCCESS) *ctx = &contexts[d];
  return r;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
  ENTER("cuDevicePrimaryCtxRelease_v2");
  return check_device(d);
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
  ENTER("cuCtxSetCurrent");
  current = ctx;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *ctx) {
  ENTER("cuCtxGetCurrent");
  *ctx = current;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSynchronize(void) {
  ENTER("cuCtxSynchronize");
  return current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

#ifndef STUB_WITHOUT_cuMemAlloc_v2
EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *out, size_t bytes) {
  ENTER("cuMemAlloc_v2");
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  if (!out || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  int d = current->device;
  pthread_mutex_lock(&lock);
  CUresult r = CUDA_SUCCESS;
  if (bytes > capacity - used[d]) r = CUDA_ERROR_OUT_OF_MEMORY;
  block *b = r == CUDA_SUCCESS ? malloc(sizeof *b) : NULL;
  unsigned char *base = b ? malloc(bytes + 2 * CANARY) : NULL;
  if (r == CUDA_SUCCESS && base == NULL) r = CUDA_ERROR_OUT_OF_MEMORY;
  if (r == CUDA_SUCCESS) {
    memset(base, CANARY_BYTE, CANARY);
    memset(base + CANARY + bytes, CANARY_BYTE, CANARY);
    *b = (block){live, base, bytes, d};
    live = b;
    used[d] += bytes;
    *out = (CUdeviceptr)(uintptr_t)(base + CANARY);
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
  while (*link && (CUdeviceptr)(uintptr_t)((*link)->base + CANARY) != ptr) link = &(*link)->next;
  block *b = *link;
  CUresult r = CUDA_SUCCESS;
  if (b == NULL) {
    violations++; /* unknown pointer or double free */
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    for (int i = 0; i < CANARY; i++)
      if (b->base[i] != CANARY_BYTE || b->base[CANARY + b->size + (size_t)i] != CANARY_BYTE) {
        violations++;
        break;
      }
    *link = b->next;
    used[b->device] -= b->size;
    free(b->base);
    free(b);
  }
  pthread_mutex_unlock(&lock);
  return r;
}
#endif

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
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
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
