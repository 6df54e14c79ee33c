/* The CUDA driver, loaded at run time (see include/c10c/cuda.h). Real driver API code: the entry
 * points, types and error codes are the driver's (cuda.h), declared here because libc10c builds
 * without the CUDA toolkit. The tests drive it through a stand-in driver (tests/cuda_stub/). */
#define _GNU_SOURCE
#include "c10c/cuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "internal.h"

/* ---- the driver table ---- */

c10c__cuda_driver c10c__cuda;

/* The entry points, with the versioned names the driver exports them under. */
#define DRIVER_ENTRIES(X)                                       \
  X(cuInit, "cuInit")                                           \
  X(cuDriverGetVersion, "cuDriverGetVersion")                   \
  X(cuDeviceGetCount, "cuDeviceGetCount")                       \
  X(cuDeviceGet, "cuDeviceGet")                                 \
  X(cuDeviceGetName, "cuDeviceGetName")                         \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2")                    \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")       \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2")  \
  X(cuCtxSetCurrent, "cuCtxSetCurrent")                         \
  X(cuCtxGetCurrent, "cuCtxGetCurrent")                         \
  X(cuCtxSynchronize, "cuCtxSynchronize")                       \
  X(cuMemAlloc, "cuMemAlloc_v2")                                \
  X(cuMemFree, "cuMemFree_v2")                                  \
  X(cuMemGetInfo, "cuMemGetInfo_v2")                            \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2")                            \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2")                            \
  X(cuMemcpyDtoD, "cuMemcpyDtoD_v2")                            \
  X(cuMemsetD8, "cuMemsetD8_v2")                                \
  X(cuCtxGetStreamPriorityRange, "cuCtxGetStreamPriorityRange") \
  X(cuStreamCreateWithPriority, "cuStreamCreateWithPriority")   \
  X(cuStreamDestroy, "cuStreamDestroy_v2")                      \
  X(cuStreamQuery, "cuStreamQuery")                             \
  X(cuStreamSynchronize, "cuStreamSynchronize")                 \
  X(cuStreamWaitEvent, "cuStreamWaitEvent")                     \
  X(cuEventCreate, "cuEventCreate")                             \
  X(cuEventDestroy, "cuEventDestroy_v2")                        \
  X(cuEventRecord, "cuEventRecord")                             \
  X(cuEventQuery, "cuEventQuery")                               \
  X(cuEventSynchronize, "cuEventSynchronize")                   \
  X(cuEventElapsedTime, "cuEventElapsedTime")                   \
  X(cuGetErrorName, "cuGetErrorName")                           \
  X(cuGetErrorString, "cuGetErrorString")

/* Entry points libc10c works without (older drivers): expandable segments need them. */
#define OPTIONAL_DRIVER_ENTRIES(X)              \
  X(cuMemAddressReserve, "cuMemAddressReserve") \
  X(cuMemAddressFree, "cuMemAddressFree")       \
  X(cuMemCreate, "cuMemCreate")                 \
  X(cuMemRelease, "cuMemRelease")               \
  X(cuMemMap, "cuMemMap")                       \
  X(cuMemUnmap, "cuMemUnmap")                   \
  X(cuMemSetAccess, "cuMemSetAccess")           \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute")

/* ---- pinned host memory (lib/cuda_host_allocator.c): resolved when present; the pinned calls
 * fail naming a missing one ---- */
c10c__cuda_host_driver c10c__cuda_host;
#define HOST_DRIVER_ENTRIES(X)                 \
  X(cuMemHostAlloc, "cuMemHostAlloc")          \
  X(cuMemFreeHost, "cuMemFreeHost")            \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2") \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2")
#define RESOLVE_HOST(field, symbol)                           \
  {                                                           \
    void *address = dlsym(library, symbol);                   \
    memcpy(&c10c__cuda_host.field, &address, sizeof address); \
  }

typedef enum { NOT_LOADED, AVAILABLE, UNAVAILABLE } load_state;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static load_state state = NOT_LOADED;
static char reason[512];
static void *library;
static int count;
static bool forked; /* this process is a child forked after the driver was initialized */
static CUcontext primary[C10C_CUDA_MAX_DEVICES];
static pthread_mutex_t primary_lock = PTHREAD_MUTEX_INITIALIZER;

/* initial-exec: every CUDA allocation reads it (one load, no __tls_get_addr) */
static _Thread_local c10c_device_index current_device __attribute__((tls_model("initial-exec")));

static void after_fork_in_child(void) {
  if (state == AVAILABLE) forked = true;
}

/* "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)", with the driver's own words. */
static void describe(char *out, size_t size, CUresult r) {
  const char *name = NULL, *text = NULL;
  if (c10c__cuda.cuGetErrorName == NULL || c10c__cuda.cuGetErrorName(r, &name) != 0) name = NULL;
  if (c10c__cuda.cuGetErrorString == NULL || c10c__cuda.cuGetErrorString(r, &text) != 0)
    text = NULL;
  if (name != NULL)
    snprintf(out, size, "%s (%s)", name, text != NULL ? text : "no description");
  else
    snprintf(out, size, "CUresult %d", r);
}

/* Records why CUDA is unavailable (reason already written) and unloads the driver. */
static void give_up(void) {
  if (library != NULL) dlclose(library);
  library = NULL;
  memset(&c10c__cuda, 0, sizeof c10c__cuda);
  memset(&c10c__cuda_host, 0, sizeof c10c__cuda_host);
  __atomic_store_n(&state, UNAVAILABLE, __ATOMIC_RELEASE);
}

bool c10c__cuda_has_vmm(void) {
  return c10c__cuda.cuMemAddressReserve != NULL && c10c__cuda.cuMemAddressFree != NULL &&
         c10c__cuda.cuMemCreate != NULL && c10c__cuda.cuMemRelease != NULL &&
         c10c__cuda.cuMemMap != NULL && c10c__cuda.cuMemUnmap != NULL &&
         c10c__cuda.cuMemSetAccess != NULL && c10c__cuda.cuDeviceGetAttribute != NULL;
}

c10c_status c10c__cuda_check_vmm(void) {
  c10c_status st = c10c__cuda_ensure();
  if (st != C10C_STATUS_OK) return st;
  if (!c10c__cuda_has_vmm())
    return c10c__fail(C10C_STATUS_NOT_IMPLEMENTED,
                      "expandable_segments:True needs the driver's virtual memory management");
  for (int i = 0; i < count; i++) {
    CUdevice device = 0;
    int supported = 0;
    st = c10c__cuda_check(c10c__cuda.cuDeviceGet(&device, i), "cuDeviceGet");
    if (st == C10C_STATUS_OK)
      st = c10c__cuda_check(
          c10c__cuda.cuDeviceGetAttribute(
              &supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device),
          "cuDeviceGetAttribute");
    if (st != C10C_STATUS_OK) return st;
    if (!supported)
      return c10c__fail(C10C_STATUS_NOT_IMPLEMENTED,
                        "expandable_segments:True needs virtual memory management, which CUDA "
                        "device %d does not support",
                        i);
  }
  return C10C_STATUS_OK;
}

static void load(void) {
  const char *path = getenv("C10C_CUDA_DRIVER");
  if (path == NULL || *path == '\0') path = "libcuda.so.1";
  library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    const char *why = dlerror();
    snprintf(reason, sizeof reason, "CUDA driver not found: %s", why != NULL ? why : path);
    give_up();
    return;
  }
  /* POSIX: a data pointer from dlsym converts to a function pointer (through memcpy, which
   * ISO C allows, as the conversion itself is not) */
#define RESOLVE(field, symbol)                                                          \
  {                                                                                     \
    void *address = dlsym(library, symbol);                                             \
    if (address == NULL) {                                                              \
      snprintf(reason, sizeof reason, "CUDA driver %s has no %s", path, symbol);        \
      give_up();                                                                        \
      return;                                                                           \
    }                                                                                   \
    _Static_assert(sizeof c10c__cuda.field == sizeof address, "function pointer size"); \
    memcpy(&c10c__cuda.field, &address, sizeof address);                                \
  }
  DRIVER_ENTRIES(RESOLVE)
#undef RESOLVE
#define RESOLVE_OPTIONAL(field, symbol)                  \
  {                                                      \
    void *address = dlsym(library, symbol);              \
    memcpy(&c10c__cuda.field, &address, sizeof address); \
  }
  OPTIONAL_DRIVER_ENTRIES(RESOLVE_OPTIONAL)
#undef RESOLVE_OPTIONAL
  HOST_DRIVER_ENTRIES(RESOLVE_HOST)
  if (!c10c__cuda_has_vmm()) /* all or none */
    c10c__cuda.cuMemAddressReserve = NULL, c10c__cuda.cuDeviceGetAttribute = NULL;
  char what[256];
  CUresult r = c10c__cuda.cuInit(0);
  if (r != 0) {
    describe(what, sizeof what, r);
    snprintf(reason, sizeof reason, "cuInit failed: %s", what);
    give_up();
    return;
  }
  r = c10c__cuda.cuDeviceGetCount(&count);
  if (r != 0) {
    describe(what, sizeof what, r);
    snprintf(reason, sizeof reason, "cuDeviceGetCount failed: %s", what);
    give_up();
    return;
  }
  if (count <= 0) {
    snprintf(reason, sizeof reason, "no CUDA device found");
    give_up();
    return;
  }
  if (count > C10C_CUDA_MAX_DEVICES) count = C10C_CUDA_MAX_DEVICES;
  pthread_atfork(NULL, NULL, after_fork_in_child);
  __atomic_store_n(&state, AVAILABLE, __ATOMIC_RELEASE);
}

static c10c_status ensure_loaded(void) {
  /* loaded and not forked since: the common case without pthread_once's call */
  if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == AVAILABLE && !forked) return C10C_STATUS_OK;
  pthread_once(&load_once, load);
  if (forked)
    return c10c__fail(C10C_STATUS_UNAVAILABLE,
                      "Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
                      "multiprocessing, you must use the 'spawn' start method");
  if (state != AVAILABLE) return c10c__fail(C10C_STATUS_UNAVAILABLE, "%s", reason);
  return C10C_STATUS_OK;
}

c10c_status c10c__cuda_ensure(void) { return ensure_loaded(); }

c10c_device_index c10c__cuda_current(void) { return current_device; }

c10c_status c10c__cuda_check(CUresult r, const char *call) {
  if (r == 0) return C10C_STATUS_OK;
  char what[256];
  describe(what, sizeof what, r);
  return c10c__fail(r == CUDA_ERROR_OUT_OF_MEMORY ? C10C_STATUS_OUT_OF_MEMORY : C10C_STATUS_ERROR,
                    "CUDA driver error: %s in %s", what, call);
}

static c10c_status check_index(c10c_device_index index) {
  if (index < 0 || index >= count)
    return c10c__fail(C10C_STATUS_ERROR, "CUDA error: invalid device ordinal");
  return C10C_STATUS_OK;
}

c10c_status c10c__cuda_resolve(c10c_device_index *index) {
  c10c_status st = ensure_loaded();
  if (st != C10C_STATUS_OK) return st;
  if (*index == -1) *index = current_device;
  return check_index(*index);
}

/* Makes the device's primary context current on this thread (retained once per process). */
c10c_status c10c__cuda_activate(c10c_device_index index) {
  c10c_status st = ensure_loaded();
  if (st == C10C_STATUS_OK) st = check_index(index);
  if (st != C10C_STATUS_OK) return st;
  pthread_mutex_lock(&primary_lock);
  CUcontext ctx = primary[index];
  if (ctx == NULL) {
    CUdevice device;
    st = c10c__cuda_check(c10c__cuda.cuDeviceGet(&device, index), "cuDeviceGet");
    if (st == C10C_STATUS_OK)
      st = c10c__cuda_check(c10c__cuda.cuDevicePrimaryCtxRetain(&ctx, device),
                            "cuDevicePrimaryCtxRetain");
    if (st == C10C_STATUS_OK) primary[index] = ctx;
  }
  pthread_mutex_unlock(&primary_lock);
  if (st != C10C_STATUS_OK) return st;
  return c10c__cuda_check(c10c__cuda.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
}

/* ---- public API ---- */

c10c_status c10c_cuda_init(void) { return ensure_loaded(); }

bool c10c_cuda_is_available(void) {
  pthread_once(&load_once, load);
  return state == AVAILABLE;
}

bool c10c_cuda_is_initialized(void) {
  return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == AVAILABLE;
}

int c10c_cuda_device_count(void) { return c10c_cuda_is_available() ? count : 0; }

const char *c10c_cuda_unavailable_reason(void) {
  pthread_once(&load_once, load);
  return state == AVAILABLE ? "" : reason;
}

c10c_status c10c_cuda_driver_version(int *out) {
  C10C__CHECK_NOT_NULL(out);
  c10c_status st = ensure_loaded();
  if (st != C10C_STATUS_OK) return st;
  return c10c__cuda_check(c10c__cuda.cuDriverGetVersion(out), "cuDriverGetVersion");
}

c10c_status c10c_cuda_current_device(c10c_device_index *out) {
  C10C__CHECK_NOT_NULL(out);
  c10c_status st = ensure_loaded();
  if (st == C10C_STATUS_OK) *out = current_device;
  return st;
}

c10c_status c10c_cuda_set_device(c10c_device_index index) {
  c10c_status st = c10c__cuda_activate(index);
  if (st == C10C_STATUS_OK) current_device = index;
  return st;
}

c10c_status c10c_cuda_device_guard_enter(c10c_cuda_device_guard *guard, c10c_device_index index) {
  C10C__CHECK_NOT_NULL(guard);
  guard->original = guard->current = -1;
  c10c_status st = ensure_loaded();
  if (st != C10C_STATUS_OK || index < 0) return st;
  c10c_device_index before = current_device;
  st = c10c_cuda_set_device(index);
  if (st != C10C_STATUS_OK) return st;
  guard->original = before;
  guard->current = index;
  return C10C_STATUS_OK;
}

c10c_status c10c_cuda_device_guard_exit(c10c_cuda_device_guard *guard) {
  C10C__CHECK_NOT_NULL(guard);
  if (guard->original < 0) return C10C_STATUS_OK;
  c10c_device_index original = guard->original;
  guard->original = guard->current = -1;
  return c10c_cuda_set_device(original);
}

c10c_status c10c__cuda_restore(c10c_status st) {
  c10c_status restore = c10c__cuda_activate(current_device);
  return st != C10C_STATUS_OK ? st : restore;
}

c10c_status c10c_cuda_device_name(char *out, size_t size, c10c_device_index index) {
  C10C__CHECK_NOT_NULL(out);
  c10c_status st = c10c__cuda_resolve(&index);
  if (st != C10C_STATUS_OK) return st;
  if (size == 0) return c10c__fail(C10C_STATUS_BUFFER_TOO_SMALL, "a device name needs a buffer");
  char name[256];
  CUdevice device;
  st = c10c__cuda_check(c10c__cuda.cuDeviceGet(&device, index), "cuDeviceGet");
  if (st == C10C_STATUS_OK)
    st = c10c__cuda_check(c10c__cuda.cuDeviceGetName(name, (int)sizeof name, device),
                          "cuDeviceGetName");
  if (st == C10C_STATUS_OK) snprintf(out, size, "%s", name);
  return st;
}

c10c_status c10c_cuda_mem_get_info(int64_t *free_bytes, int64_t *total_bytes,
                                   c10c_device_index index) {
  C10C__CHECK_NOT_NULL(free_bytes);
  C10C__CHECK_NOT_NULL(total_bytes);
  c10c_status st = c10c__cuda_activate(index);
  size_t f = 0, t = 0;
  if (st == C10C_STATUS_OK)
    st = c10c__cuda_restore(c10c__cuda_check(c10c__cuda.cuMemGetInfo(&f, &t), "cuMemGetInfo_v2"));
  if (st == C10C_STATUS_OK) {
    *free_bytes = (int64_t)f;
    *total_bytes = (int64_t)t;
  }
  return st;
}

c10c_status c10c_cuda_synchronize(c10c_device_index index) {
  c10c_status st = c10c__cuda_activate(index);
  if (st != C10C_STATUS_OK) return st;
  return c10c__cuda_restore(c10c__cuda_check(c10c__cuda.cuCtxSynchronize(), "cuCtxSynchronize"));
}
