/* The CUDA driver, loaded at run time (see include/c10c/cuda.h). Real driver API code: the entry
 * points, types and error codes are the driver's (cuda.h), declared here because libc10c builds
 * without the CUDA toolkit. The tests drive it through a stand-in driver (tests/cuda_stub/). */
#define _GNU_SOURCE
#include "c10c/cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "internal.h"
#include "os.h"

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
  X(cuGetErrorString, "cuGetErrorString")                       \
  DEVICES_DRIVER_ENTRIES(X)                                     \
  STREAM_COPY_DRIVER_ENTRIES(X)

/* Contexts only where used (c10's hasPrimaryContext) and peer access for expandable segments:
 * both entry points are as old as the primary context API (CUDA 7 / 4). */
#define DEVICES_DRIVER_ENTRIES(X)                             \
  X(cuDevicePrimaryCtxGetState, "cuDevicePrimaryCtxGetState") \
  X(cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer")

/* Copies and memsets ordered on the current stream, as ATen's copy_ (CUDA 3.2 / 4.0: every
 * driver libc10c can run on has them); cuMemcpyPeerAsync between two devices' contexts, which
 * works with or without peer access (the driver stages through the host without it). */
#define STREAM_COPY_DRIVER_ENTRIES(X)          \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2") \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2") \
  X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2") \
  X(cuMemcpyPeerAsync, "cuMemcpyPeerAsync")    \
  X(cuMemsetD8Async, "cuMemsetD8Async")

/* Entry points libc10c works without (older drivers): expandable segments need them. */
#define OPTIONAL_DRIVER_ENTRIES(X)                \
  X(cuMemAddressReserve, "cuMemAddressReserve")   \
  X(cuMemAddressFree, "cuMemAddressFree")         \
  X(cuMemCreate, "cuMemCreate")                   \
  X(cuMemRelease, "cuMemRelease")                 \
  X(cuMemMap, "cuMemMap")                         \
  X(cuMemUnmap, "cuMemUnmap")                     \
  X(cuMemSetAccess, "cuMemSetAccess")             \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute") \
  X(cuMemGetAllocationGranularity, "cuMemGetAllocationGranularity")

/* ---- pinned host memory (lib/cuda/cuda_host_allocator.c): resolved when present; the pinned calls
 * fail naming a missing one ---- */
c10c__cuda_host_driver c10c__cuda_host;
#define HOST_DRIVER_ENTRIES(X)        \
  X(cuMemHostAlloc, "cuMemHostAlloc") \
  X(cuMemFreeHost, "cuMemFreeHost")
#define RESOLVE_HOST(field, symbol)                           \
  {                                                           \
    void *address = c10c__dl_symbol(library, symbol);         \
    memcpy(&c10c__cuda_host.field, &address, sizeof address); \
  }

/* ---- IPC (lib/cuda/cuda_ipc.c): two optional groups, each resolved all or none ---- */
c10c__cuda_ipc_driver c10c__cuda_ipc;
#define IPC_DRIVER_ENTRIES(X)                                     \
  X(cuIpcGetMemHandle, "cuIpcGetMemHandle")                       \
  X(cuIpcOpenMemHandle, "cuIpcOpenMemHandle_v2")                  \
  X(cuIpcCloseMemHandle, "cuIpcCloseMemHandle")                   \
  X(cuIpcGetEventHandle, "cuIpcGetEventHandle")                   \
  X(cuIpcOpenEventHandle, "cuIpcOpenEventHandle")                 \
  X(cuMemGetAddressRange, "cuMemGetAddressRange_v2")              \
  X(cuMemExportToShareableHandle, "cuMemExportToShareableHandle") \
  X(cuMemImportFromShareableHandle, "cuMemImportFromShareableHandle")
#define RESOLVE_IPC(field, symbol)                           \
  {                                                          \
    void *address = c10c__dl_symbol(library, symbol);        \
    memcpy(&c10c__cuda_ipc.field, &address, sizeof address); \
  }

/* All or none of each group. */
static void settle_ipc_groups(void) {
  c10c__cuda_ipc_driver *d = &c10c__cuda_ipc;
  if (!d->cuIpcGetMemHandle || !d->cuIpcOpenMemHandle || !d->cuIpcCloseMemHandle ||
      !d->cuIpcGetEventHandle || !d->cuIpcOpenEventHandle || !d->cuMemGetAddressRange)
    d->cuMemGetAddressRange = NULL, d->cuIpcGetMemHandle = NULL, d->cuIpcOpenMemHandle = NULL,
    d->cuIpcCloseMemHandle = NULL, d->cuIpcGetEventHandle = NULL, d->cuIpcOpenEventHandle = NULL;
  if (!d->cuMemExportToShareableHandle || !d->cuMemImportFromShareableHandle ||
      !c10c__cuda_has_vmm())
    d->cuMemExportToShareableHandle = NULL, d->cuMemImportFromShareableHandle = NULL;
}

typedef enum { NOT_LOADED, AVAILABLE, UNAVAILABLE } load_state;

static c10c__once load_once = C10C__ONCE_INIT;
static load_state state = NOT_LOADED;
static char reason[512];
static void *library;
static int count;
static bool forked;        /* this process is a child forked after the driver was initialized */
static int driver_version; /* cuDriverGetVersion's answer, 0 when the driver gave none */
static CUcontext primary[C10C_CUDA_MAX_DEVICES];
static c10c__mutex primary_lock = C10C__MUTEX_INIT;

/* initial-exec (glibc): every CUDA allocation reads it (one load, no __tls_get_addr). The thread's
 * current device as torch.cuda.current_device() reports it (0 until set): like c10's
 * targetDeviceIndex, it may name a device whose context was never made current on this thread
 * (made only when work runs there). */
static _Thread_local c10c_device_index current_device C10C__TLS_FAST;
/* The device whose primary context libc10c last made current on this thread, -1 for none. */
static _Thread_local c10c_device_index active_device C10C__TLS_FAST = -1;

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
  if (library != NULL) c10c__dl_close(library);
  library = NULL;
  memset(&c10c__cuda, 0, sizeof c10c__cuda);
  memset(&c10c__cuda_host, 0, sizeof c10c__cuda_host);
  memset(&c10c__cuda_ipc, 0, sizeof c10c__cuda_ipc);
  __atomic_store_n(&state, UNAVAILABLE, __ATOMIC_RELEASE);
}

bool c10c__cuda_has_vmm(void) {
  return c10c__cuda.cuMemAddressReserve != NULL && c10c__cuda.cuMemAddressFree != NULL &&
         c10c__cuda.cuMemCreate != NULL && c10c__cuda.cuMemRelease != NULL &&
         c10c__cuda.cuMemMap != NULL && c10c__cuda.cuMemUnmap != NULL &&
         c10c__cuda.cuMemSetAccess != NULL && c10c__cuda.cuDeviceGetAttribute != NULL &&
         c10c__cuda.cuMemGetAllocationGranularity != NULL;
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
  if (path == NULL || *path == '\0') path = c10c__cuda_driver_name();
  char why[sizeof reason - 32];
  library = c10c__dl_open(path, why, sizeof why);
  if (library == NULL) {
    snprintf(reason, sizeof reason, "CUDA driver not found: %s", why);
    give_up();
    return;
  }
  {
    /* The version needs no cuInit (torch.cuda's _cuda_getDriverVersion answers without a
     * device), so it is asked first and kept when CUDA turns out unavailable. */
    CUresult (*get_version)(int *) = NULL;
    void *address = c10c__dl_symbol(library, "cuDriverGetVersion");
    memcpy(&get_version, &address, sizeof address);
    int version = 0;
    if (get_version != NULL && get_version(&version) == 0 && version > 0) driver_version = version;
  }
  /* POSIX: a data pointer from dlsym (c10c__dl_symbol) converts to a function pointer (through
   * memcpy, which ISO C allows, as the conversion itself is not) */
#define RESOLVE(field, symbol)                                                          \
  {                                                                                     \
    void *address = c10c__dl_symbol(library, symbol);                                   \
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
    void *address = c10c__dl_symbol(library, symbol);    \
    memcpy(&c10c__cuda.field, &address, sizeof address); \
  }
  OPTIONAL_DRIVER_ENTRIES(RESOLVE_OPTIONAL)
#undef RESOLVE_OPTIONAL
  HOST_DRIVER_ENTRIES(RESOLVE_HOST)
  if (!c10c__cuda_has_vmm()) /* all or none */
    c10c__cuda.cuMemAddressReserve = NULL, c10c__cuda.cuDeviceGetAttribute = NULL,
    c10c__cuda.cuMemGetAllocationGranularity = NULL;
  IPC_DRIVER_ENTRIES(RESOLVE_IPC)
  settle_ipc_groups();
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
  c10c__at_fork(NULL, NULL, after_fork_in_child);
  __atomic_store_n(&state, AVAILABLE, __ATOMIC_RELEASE);
}

static c10c_status ensure_loaded(void) {
  /* loaded and not forked since: the common case without the once-call */
  if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == AVAILABLE && !forked) return C10C_STATUS_OK;
  c10c__once_call(&load_once, load);
  if (forked)
    return c10c__fail(C10C_STATUS_UNAVAILABLE,
                      "Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
                      "multiprocessing, you must use the 'spawn' start method");
  if (state != AVAILABLE) return c10c__fail(C10C_STATUS_UNAVAILABLE, "%s", reason);
  return C10C_STATUS_OK;
}

c10c_status c10c__cuda_ensure(void) { return ensure_loaded(); }

bool c10c__cuda_usable(void) {
  return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == AVAILABLE && !forked;
}

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
  c10c__mutex_lock(&primary_lock);
  CUcontext ctx = primary[index];
  if (ctx == NULL) {
    CUdevice device;
    st = c10c__cuda_check(c10c__cuda.cuDeviceGet(&device, index), "cuDeviceGet");
    if (st == C10C_STATUS_OK)
      st = c10c__cuda_check(c10c__cuda.cuDevicePrimaryCtxRetain(&ctx, device),
                            "cuDevicePrimaryCtxRetain");
    if (st == C10C_STATUS_OK) __atomic_store_n(&primary[index], ctx, __ATOMIC_RELEASE);
  }
  c10c__mutex_unlock(&primary_lock);
  if (st != C10C_STATUS_OK) return st;
  st = c10c__cuda_check(c10c__cuda.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  active_device = st == C10C_STATUS_OK ? index : -1;
  return st;
}

/* c10's hasPrimaryContext: whether the device's primary context exists (libc10c retained it,
 * or the driver reports it active: another library in the process made it). Making it current
 * then creates nothing. */
static bool has_primary_context(c10c_device_index index) {
  if (index < 0 || index >= count) return false;
  if (__atomic_load_n(&primary[index], __ATOMIC_ACQUIRE) != NULL) return true;
  CUdevice device;
  unsigned flags = 0;
  int active = 0;
  return c10c__cuda.cuDeviceGet(&device, index) == 0 &&
         c10c__cuda.cuDevicePrimaryCtxGetState(device, &flags, &active) == 0 && active;
}

/* c10's MaybeSetDevice: index becomes the thread's current device; its context is made current
 * only if it exists, else it is made when work first runs there (c10's targetDeviceIndex).
 * Right after libc10c's own work (restore) the context it left current is known; elsewhere (a
 * guard's exit) the host may have switched contexts since, so it is set again. */
static c10c_status maybe_set_device(c10c_device_index index, bool known) {
  current_device = index;
  if ((known && active_device == index) || !has_primary_context(index)) return C10C_STATUS_OK;
  return c10c__cuda_activate(index);
}

/* cudaGetDevice's answer for the thread: the device of its current context (a primary context
 * libc10c retained), 0 with none (as the runtime answers on a fresh thread), -1 for a context
 * libc10c does not know. */
static c10c_device_index thread_device(void) {
  CUcontext ctx = NULL;
  if (c10c__cuda.cuCtxGetCurrent(&ctx) != 0) return -1;
  if (ctx == NULL) return 0;
  for (int i = 0; i < count; i++)
    if (__atomic_load_n(&primary[i], __ATOMIC_ACQUIRE) == ctx) return (c10c_device_index)i;
  return -1;
}

/* c10's SetDevice / ExchangeDevice: a device the thread asks for gets its context made current,
 * unless the thread is already on it (c10 skips cudaSetDevice when cudaGetDevice answers the
 * device: torch.cuda.set_device(0) on a fresh thread makes no context). */
static c10c_status set_device(c10c_device_index index) {
  c10c_status st = ensure_loaded();
  if (st == C10C_STATUS_OK) st = check_index(index);
  if (st != C10C_STATUS_OK) return st;
  if (thread_device() != index) st = c10c__cuda_activate(index);
  if (st == C10C_STATUS_OK) current_device = index;
  return st;
}

c10c_device_index c10c__cuda_device_with_primary_context(void) {
  if (has_primary_context(current_device)) return current_device;
  for (int i = 0; i < count; i++)
    if (i != current_device && has_primary_context((c10c_device_index)i))
      return (c10c_device_index)i;
  return -1;
}

/* ---- public API ---- */

c10c_status c10c_cuda_init(void) { return ensure_loaded(); }

bool c10c_cuda_is_available(void) {
  c10c__once_call(&load_once, load);
  return state == AVAILABLE;
}

bool c10c_cuda_is_initialized(void) {
  return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == AVAILABLE;
}

int c10c_cuda_device_count(void) { return c10c_cuda_is_available() ? count : 0; }

const char *c10c_cuda_unavailable_reason(void) {
  c10c__once_call(&load_once, load);
  return state == AVAILABLE ? "" : reason;
}

c10c_status c10c_cuda_driver_version(int *out) {
  C10C__CHECK_NOT_NULL(out);
  c10c__once_call(&load_once, load);
  if (driver_version > 0) { /* asked at load, before cuInit (no driver call in a forked child) */
    *out = driver_version;
    return C10C_STATUS_OK;
  }
  return ensure_loaded() != C10C_STATUS_OK
             ? C10C_STATUS_UNAVAILABLE
             : c10c__fail(C10C_STATUS_UNAVAILABLE, "the CUDA driver gave no version");
}

c10c_status c10c_cuda_current_device(c10c_device_index *out) {
  C10C__CHECK_NOT_NULL(out);
  c10c_status st = ensure_loaded();
  if (st == C10C_STATUS_OK) *out = current_device;
  return st;
}

c10c_status c10c_cuda_set_device(c10c_device_index index) { return set_device(index); }

/* The size of the first published version of the guard (struct_size, original, current). */
#define GUARD_MIN_SIZE (offsetof(c10c_cuda_device_guard, current) + sizeof(c10c_device_index))

/* A guard's struct_size must cover the first version: the fields this version reads and writes
 * are all in it, so a larger (newer) guard is served the same. */
static c10c_status check_guard(const c10c_cuda_device_guard *guard) {
  return c10c__check_struct_size(guard->struct_size, GUARD_MIN_SIZE, "c10c_cuda_device_guard",
                                 " of the guard");
}

c10c_status c10c_cuda_device_guard_enter(c10c_cuda_device_guard *guard, c10c_device_index index) {
  C10C__CHECK_NOT_NULL(guard);
  c10c_status checked = check_guard(guard);
  if (checked != C10C_STATUS_OK) return checked;
  guard->original = guard->current = -1;
  c10c_status st = ensure_loaded();
  if (st != C10C_STATUS_OK || index < 0) return st;
  c10c_device_index before = current_device;
  st = set_device(index);
  if (st != C10C_STATUS_OK) return st;
  guard->original = before;
  guard->current = index;
  return C10C_STATUS_OK;
}

c10c_status c10c_cuda_device_guard_exit(c10c_cuda_device_guard *guard) {
  C10C__CHECK_NOT_NULL(guard);
  c10c_status checked = check_guard(guard);
  if (checked != C10C_STATUS_OK) return checked;
  if (guard->original < 0) return C10C_STATUS_OK;
  c10c_device_index original = guard->original;
  guard->original = guard->current = -1;
  c10c_status st = ensure_loaded();
  if (st != C10C_STATUS_OK) return st;
  return maybe_set_device(original, false); /* c10's CUDAGuardImpl::uncheckedSetDevice */
}

/* After work on another device: c10's device guard exit (MaybeSetDevice), which never makes a
 * context on the thread's current device. */
c10c_status c10c__cuda_restore(c10c_status st) {
  c10c_status restore =
      active_device == current_device ? C10C_STATUS_OK : maybe_set_device(current_device, true);
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

/* ---- peers ---- */

static uint64_t peer_masks[C10C_CUDA_MAX_DEVICES];
static int peers_asked[C10C_CUDA_MAX_DEVICES]; /* 1 once peer_masks[i] is known */

c10c_status c10c__cuda_peers(uint64_t *out, c10c_device_index device) {
  *out = 0;
  c10c_status st = check_index(device);
  if (st != C10C_STATUS_OK) return st;
  if (__atomic_load_n(&peers_asked[device], __ATOMIC_ACQUIRE)) {
    *out = __atomic_load_n(&peer_masks[device], __ATOMIC_RELAXED);
    return C10C_STATUS_OK;
  }
  uint64_t mask = 0;
  CUdevice owner, peer;
  st = c10c__cuda_check(c10c__cuda.cuDeviceGet(&owner, device), "cuDeviceGet");
  for (int i = 0; i < count && st == C10C_STATUS_OK; i++) {
    int can = 0;
    if (i == device) continue;
    st = c10c__cuda_check(c10c__cuda.cuDeviceGet(&peer, i), "cuDeviceGet");
    if (st == C10C_STATUS_OK)
      st = c10c__cuda_check(c10c__cuda.cuDeviceCanAccessPeer(&can, peer, owner),
                            "cuDeviceCanAccessPeer");
    if (st == C10C_STATUS_OK && can) mask |= (uint64_t)1 << i;
  }
  if (st != C10C_STATUS_OK) return st; /* asked again next time */
  __atomic_store_n(&peer_masks[device], mask, __ATOMIC_RELAXED);
  __atomic_store_n(&peers_asked[device], 1, __ATOMIC_RELEASE);
  *out = mask;
  return C10C_STATUS_OK;
}
