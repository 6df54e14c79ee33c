/* The CUDA caching allocator: PyTorch's caching engine (caching_engine.c) over segments from the
 * driver (cuMemAlloc_v2 / cuMemFree_v2 on the owning device), keyed by the current device and its
 * current stream; and byte copies between host and device memory. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "allocator_internal.h"
#include "caching_engine.h"
#include "plan_engine.h"
#include "cuda_internal.h"
#include "internal.h"
#include "os.h"
#include "shm.h"
#include "sysmem.h"

/* ---- the engine's backend: segments from the driver ---- */

static c10c_status segment_malloc(void *self, int device, size_t size, void **out) {
  (void)self;
  c10c_status st = c10c__cuda_activate((c10c_device_index)device);
  if (st != C10C_STATUS_OK) return st;
  CUdeviceptr ptr = 0; /* c10c__cuda_check: CUDA_ERROR_OUT_OF_MEMORY is OUT_OF_MEMORY */
  st = c10c__cuda_check(c10c__cuda.cuMemAlloc(&ptr, size), "cuMemAlloc_v2");
  if (st == C10C_STATUS_OK) *out = (void *)(uintptr_t)ptr;
  return c10c__cuda_restore(st);
}

static void segment_free(void *self, int device, void *ptr, size_t size) {
  (void)self, (void)size;
  /* a failure here has no caller to report to; the driver keeps its own accounting */
  if (c10c__cuda_activate((c10c_device_index)device) == C10C_STATUS_OK) {
    c10c__cuda.cuMemFree((CUdeviceptr)(uintptr_t)ptr);
    c10c__cuda_restore(C10C_STATUS_OK);
  }
}

static c10c_status segment_mem_info(void *self, int device, size_t *free_bytes, size_t *total) {
  (void)self;
  c10c_status st = c10c__cuda_activate((c10c_device_index)device);
  if (st != C10C_STATUS_OK) return st;
  return c10c__cuda_restore(
      c10c__cuda_check(c10c__cuda.cuMemGetInfo(free_bytes, total), "cuMemGetInfo_v2"));
}

/* The driver handle of the stream the engine names by device and id: a stream of this library,
 * or one PyTorch passed to the pluggable entry points, whose id is its handle (c10's rule for
 * external streams: an even id other than 0 is a CUstream). */
static c10c_status handle_of(void **handle, int device, c10c_stream_id stream) {
  if (stream != 0 && (stream & 1) == 0) {
    *handle = (void *)(uintptr_t)stream;
    return C10C_STATUS_OK;
  }
  return c10c_cuda_stream_handle(
      handle, (c10c_stream){{C10C_DEVICE_TYPE_CUDA, (c10c_device_index)device}, stream});
}

/* record_stream's events: driver events (timing off) on the stream the engine names by id. */
static c10c_status segment_event_record(void *self, int device, c10c_stream_id stream, void **out) {
  (void)self;
  void *handle = NULL;
  c10c_status st = handle_of(&handle, device, stream);
  if (st == C10C_STATUS_OK) st = c10c__cuda_activate((c10c_device_index)device);
  if (st != C10C_STATUS_OK) return st;
  CUevent event = NULL;
  st = c10c__cuda_check(c10c__cuda.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  if (st == C10C_STATUS_OK)
    st = c10c__cuda_check(c10c__cuda.cuEventRecord(event, (CUstream)handle), "cuEventRecord");
  if (st != C10C_STATUS_OK && event != NULL) c10c__cuda.cuEventDestroy(event);
  if (st == C10C_STATUS_OK) *out = event;
  return c10c__cuda_restore(st);
}

static c10c_status segment_event_query(void *self, void *event, bool *done) {
  (void)self;
  c10c_status st = c10c__cuda_ensure(); /* not in a forked child */
  if (st != C10C_STATUS_OK) return st;
  CUresult r = c10c__cuda.cuEventQuery((CUevent)event);
  *done = r == 0;
  return r == CUDA_ERROR_NOT_READY ? C10C_STATUS_OK : c10c__cuda_check(r, "cuEventQuery");
}

static void segment_event_synchronize(void *self, void *event) {
  (void)self;
  if (c10c__cuda_usable()) c10c__cuda.cuEventSynchronize((CUevent)event);
}

static void segment_event_destroy(void *self, void *event) {
  (void)self;
  if (c10c__cuda_usable()) c10c__cuda.cuEventDestroy((CUevent)event);
}

/* ---- expandable segments over the driver's virtual memory management ---- */

static c10c_status segment_reserve(void *self, int device, size_t size, void **base) {
  (void)self;
  c10c_status st = c10c__cuda_activate((c10c_device_index)device);
  if (st != C10C_STATUS_OK) return st;
  CUdeviceptr ptr = 0;
  st = c10c__cuda_check(c10c__cuda.cuMemAddressReserve(&ptr, size, 0, 0, 0), "cuMemAddressReserve");
  if (st == C10C_STATUS_OK) *base = (void *)(uintptr_t)ptr;
  return c10c__cuda_restore(st);
}

/* The virtual-memory calls run in the device's context, as PyTorch's run under its device
 * guard (the engine may release another device's pages). */
static void segment_unreserve(void *self, int device, void *base, size_t size) {
  (void)self;
  if (c10c__cuda_activate((c10c_device_index)device) == C10C_STATUS_OK) {
    c10c__cuda.cuMemAddressFree((CUdeviceptr)(uintptr_t)base, size);
    c10c__cuda_restore(C10C_STATUS_OK);
  }
}

/* New physical memory on the device, mapped at ptr and made read-write for the device and for
 * every device that can access it (PyTorch's ExpandableSegment::map: cuMemCreate, cuMemMap, and
 * setAccess for the device and each of peers_). PyTorch adds a peer when a copy first needs it
 * (get_p2p_access -> enablePeerAccess -> addPeer, which also grants the pages already mapped);
 * libc10c grants every device the driver says can access the memory (cuDeviceCanAccessPeer)
 * when the pages are mapped, so no page is ever missing a peer. */
/* The read-write access of device and its peers (device's context current). */
static c10c_status access_of(int device, CUmemAccessDesc *access, size_t *n) {
  *n = 0;
  access[(*n)++] =
      (CUmemAccessDesc){{CU_MEM_LOCATION_TYPE_DEVICE, device}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  uint64_t peers = 0;
  c10c_status st = c10c__cuda_peers(&peers, (c10c_device_index)device);
  if (st != C10C_STATUS_OK) return st;
  for (int p = 0; p < C10C_CUDA_MAX_DEVICES && *n < C10C_CUDA_MAX_DEVICES; p++)
    if (peers >> p & 1)
      access[(*n)++] =
          (CUmemAccessDesc){{CU_MEM_LOCATION_TYPE_DEVICE, p}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  return C10C_STATUS_OK;
}

static c10c_status segment_map(void *self, int device, void *ptr, size_t size, void **handle) {
  (void)self;
  CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                              .requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE,
                              .location = {CU_MEM_LOCATION_TYPE_DEVICE, device}};
  CUmemAccessDesc access[C10C_CUDA_MAX_DEVICES];
  size_t n = 0;
  CUmemGenericAllocationHandle h = 0;
  CUdeviceptr at = (CUdeviceptr)(uintptr_t)ptr;
  c10c_status st = c10c__cuda_activate((c10c_device_index)device);
  if (st != C10C_STATUS_OK) return st;
  st = access_of(device, access, &n);
  if (st != C10C_STATUS_OK) return c10c__cuda_restore(st);
  /* exportable to another process as a file descriptor, c10's default handle type for
   * expandable segments (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), when the driver can export */
  if (c10c__cuda_ipc.cuMemExportToShareableHandle != NULL)
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  st = c10c__cuda_check(c10c__cuda.cuMemCreate(&h, size, &prop, 0), "cuMemCreate");
  if (st != C10C_STATUS_OK) return c10c__cuda_restore(st);
  st = c10c__cuda_check(c10c__cuda.cuMemMap(at, size, 0, h, 0), "cuMemMap");
  if (st == C10C_STATUS_OK) {
    st = c10c__cuda_check(c10c__cuda.cuMemSetAccess(at, size, access, n), "cuMemSetAccess");
    if (st != C10C_STATUS_OK) c10c__cuda.cuMemUnmap(at, size);
  }
  if (st != C10C_STATUS_OK) {
    c10c__cuda.cuMemRelease(h);
    return c10c__cuda_restore(st);
  }
  *handle = (void *)(uintptr_t)h;
  return c10c__cuda_restore(C10C_STATUS_OK);
}

/* Stitching: the physical memory of a page segment_map made (still mapped there) mapped at ptr
 * too, with the same access (cuMemMap of its handle and cuMemSetAccess, no cuMemCreate). */
static c10c_status segment_map_existing(void *self, int device, void *ptr, size_t size,
                                        void *handle) {
  (void)self;
  CUmemAccessDesc access[C10C_CUDA_MAX_DEVICES];
  size_t n = 0;
  CUdeviceptr at = (CUdeviceptr)(uintptr_t)ptr;
  c10c_status st = c10c__cuda_activate((c10c_device_index)device);
  if (st != C10C_STATUS_OK) return st;
  st = access_of(device, access, &n);
  if (st != C10C_STATUS_OK) return c10c__cuda_restore(st);
  st = c10c__cuda_check(
      c10c__cuda.cuMemMap(at, size, 0, (CUmemGenericAllocationHandle)(uintptr_t)handle, 0),
      "cuMemMap");
  if (st == C10C_STATUS_OK) {
    st = c10c__cuda_check(c10c__cuda.cuMemSetAccess(at, size, access, n), "cuMemSetAccess");
    if (st != C10C_STATUS_OK) c10c__cuda.cuMemUnmap(at, size);
  }
  return c10c__cuda_restore(st);
}

/* Unmaps a page mapped by segment_map_existing: the memory stays (cuMemUnmap, no cuMemRelease;
 * its handle is released where segment_map mapped it). */
static void segment_unmap_existing(void *self, int device, void *ptr, size_t size) {
  (void)self;
  if (c10c__cuda_activate((c10c_device_index)device) == C10C_STATUS_OK) {
    c10c__cuda.cuMemUnmap((CUdeviceptr)(uintptr_t)ptr, size);
    c10c__cuda_restore(C10C_STATUS_OK);
  }
}

/* The driver's minimum granularity for the device's memory (cuMemGetAllocationGranularity with
 * CU_MEM_ALLOC_GRANULARITY_MINIMUM, what cuMemCreate and cuMemMap sizes must be multiples of),
 * asked once per device. PyTorch maps fixed 2 MiB / 20 MiB pages without asking (a multiple of
 * every NVIDIA GPU's granularity so far); the engine keeps those sizes and rounds them up to a
 * multiple of this when a driver needs more. */
static size_t granularities[C10C_CUDA_MAX_DEVICES];

static c10c_status segment_granularity(void *self, int device, size_t *out) {
  (void)self;
  if (device < 0 || device >= C10C_CUDA_MAX_DEVICES)
    return c10c__fail(C10C_STATUS_ERROR, "CUDA error: invalid device ordinal");
  size_t g = __atomic_load_n(&granularities[device], __ATOMIC_RELAXED);
  if (g == 0) {
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                .requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE,
                                .location = {CU_MEM_LOCATION_TYPE_DEVICE, device}};
    c10c_status st = c10c__cuda_check(
        c10c__cuda.cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
        "cuMemGetAllocationGranularity");
    if (st != C10C_STATUS_OK) return st;
    if (g == 0) g = 1;
    __atomic_store_n(&granularities[device], g, __ATOMIC_RELAXED);
  }
  *out = g;
  return C10C_STATUS_OK;
}

/* The file descriptors exported for expandable pages, one per page for as long as it is mapped
 * (c10's Handle::shareable_handle): a block shared again reuses them, so its bytes are equal.
 * Kept here, beside the pages' lifetime, so that sharing (cuda_ipc.c) only asks. */
typedef struct exported {
  CUmemGenericAllocationHandle handle;
  int fd;
  struct exported *next;
} exported;

static c10c__mutex exports_lock = C10C__MUTEX_INIT;
static exported *exports;

c10c_status c10c__cuda_page_fd(int *out, void *handle) {
  CUmemGenericAllocationHandle h = (CUmemGenericAllocationHandle)(uintptr_t)handle;
  c10c_status st = C10C_STATUS_OK;
  c10c__mutex_lock(&exports_lock);
  exported *e = exports;
  while (e != NULL && e->handle != h) e = e->next;
  if (e == NULL) {
    int fd = -1;
    st = c10c__cuda_check(c10c__cuda_ipc.cuMemExportToShareableHandle(
                              &fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                          "cuMemExportToShareableHandle");
    e = st == C10C_STATUS_OK ? c10c__calloc(1, sizeof *e) : NULL;
    if (st == C10C_STATUS_OK && e == NULL) {
      c10c__fd_close(fd);
      st = c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory sharing CUDA memory");
    }
    if (e != NULL) *e = (exported){h, fd, exports}, exports = e;
  }
  *out = e != NULL ? e->fd : -1;
  c10c__mutex_unlock(&exports_lock);
  return st;
}

/* An expandable page is unmapped: the file descriptor exported for it (if any) is closed. */
static void forget_page(void *handle) {
  c10c__mutex_lock(&exports_lock);
  for (exported **link = &exports; *link != NULL; link = &(*link)->next)
    if ((*link)->handle == (CUmemGenericAllocationHandle)(uintptr_t)handle) {
      exported *e = *link;
      *link = e->next;
      c10c__fd_close(e->fd);
      c10c__free(e);
      break;
    }
  c10c__mutex_unlock(&exports_lock);
}

static void segment_unmap(void *self, int device, void *ptr, size_t size, void *handle) {
  (void)self;
  forget_page(handle); /* closes the descriptor exported for it */
  if (c10c__cuda_activate((c10c_device_index)device) == C10C_STATUS_OK) {
    c10c__cuda.cuMemUnmap((CUdeviceptr)(uintptr_t)ptr, size);
    c10c__cuda.cuMemRelease((CUmemGenericAllocationHandle)(uintptr_t)handle);
    c10c__cuda_restore(C10C_STATUS_OK);
  }
}

/* Unmapping does not wait for the device's work (PyTorch synchronizes first too). */
static void segment_synchronize(void *self, int device) {
  (void)self;
  if (c10c__cuda_activate((c10c_device_index)device) == C10C_STATUS_OK) {
    c10c__cuda.cuCtxSynchronize();
    c10c__cuda_restore(C10C_STATUS_OK);
  }
}

/* Stream-ordered reuse: the allocating stream waits for an event of the block's last user. */
static c10c_status segment_stream_wait(void *self, int device, c10c_stream_id stream, void *event) {
  (void)self;
  void *handle = NULL;
  c10c_status st = handle_of(&handle, device, stream);
  if (st != C10C_STATUS_OK) return st;
  return c10c__cuda_check(c10c__cuda.cuStreamWaitEvent((CUstream)handle, (CUevent)event, 0),
                          "cuStreamWaitEvent");
}

/* Settings for the engine, after checking that every device can map memory when expandable
 * segments are asked for. */
static c10c_status configure(c10c__engine *e, const c10c__device_alloc_config *config) {
  if (config->expandable_segments) {
    c10c_status st = c10c__cuda_check_vmm();
    if (st != C10C_STATUS_OK) return st;
  }
  return c10c__engine_configure(e, config);
}

static c10c__once engine_once = C10C__ONCE_INIT;
static char config_error[256];
static c10c__engine *engine;
static c10c_status engine_status;

/* C10C_ALLOC_CONF, or PYTORCH_CUDA_ALLOC_CONF when that is unset (PyTorch's key names). */
static const char *config_text(void) {
  const char *text = getenv("C10C_ALLOC_CONF");
  if (text == NULL) text = getenv("PYTORCH_CUDA_ALLOC_CONF");
  return text;
}

static void make_engine(void) {
  bool vmm = c10c__cuda_has_vmm();
  c10c__segment_backend backend = {.malloc = segment_malloc,
                                   .free = segment_free,
                                   .mem_info = segment_mem_info,
                                   .event_record = segment_event_record,
                                   .event_query = segment_event_query,
                                   .event_synchronize = segment_event_synchronize,
                                   .event_destroy = segment_event_destroy,
                                   .reserve = vmm ? segment_reserve : NULL,
                                   .map = vmm ? segment_map : NULL,
                                   .unmap = vmm ? segment_unmap : NULL,
                                   .unreserve = vmm ? segment_unreserve : NULL,
                                   .granularity = vmm ? segment_granularity : NULL,
                                   .stream_wait = segment_stream_wait,
                                   .synchronize = segment_synchronize,
                                   .map_existing = vmm ? segment_map_existing : NULL,
                                   .unmap_existing = vmm ? segment_unmap_existing : NULL};
  c10c__engine *made = NULL;
  engine_status =
      c10c__engine_new(&made, backend, c10c_cuda_device_count(), &c10c__plan_engine_hooks);
  const char *text = config_text();
  char msg[256] = "";
  if (engine_status == C10C_STATUS_OK && text != NULL) {
    c10c__device_alloc_config config = c10c__device_alloc_config_default();
    engine_status = c10c__parse_device_alloc_config(text, &config, msg, sizeof msg);
    if (engine_status == C10C_STATUS_OK) {
      engine_status = configure(made, &config);
      if (engine_status != C10C_STATUS_OK)
        snprintf(msg, sizeof msg, "%s", c10c_last_error_message());
    }
    if (engine_status != C10C_STATUS_OK) {
      c10c__fail(engine_status, "%s", msg); /* every allocation reports it */
      c10c__engine_destroy(made);
      made = NULL;
      snprintf(config_error, sizeof config_error, "%s", msg);
    }
  }
  __atomic_store_n(&engine, made, __ATOMIC_RELEASE);
}

/* The process's CUDA caching engine (made on first use, once CUDA is known to be there). */
static c10c_status get_engine(c10c__engine **out) {
  c10c_status st = c10c__cuda_ensure();
  if (st != C10C_STATUS_OK) return st;
  c10c__engine *e = __atomic_load_n(&engine, __ATOMIC_ACQUIRE);
  if (e == NULL) { /* first use, or it could not be made */
    c10c__once_call(&engine_once, make_engine);
    e = __atomic_load_n(&engine, __ATOMIC_ACQUIRE);
  }
  if (e == NULL)
    return c10c__fail(engine_status != C10C_STATUS_OK ? engine_status : C10C_STATUS_INTERNAL,
                      "the CUDA caching allocator could not be made%s%s",
                      config_error[0] ? ": " : "", config_error);
  *out = e;
  return C10C_STATUS_OK;
}

c10c_status c10c__cuda_caching_engine(c10c__engine **out) { return get_engine(out); }

/* ---- the allocator: blocks of the current device for its current stream ---- */

static void block_free(void *ctx) {
  c10c__engine *e = __atomic_load_n(&engine, __ATOMIC_ACQUIRE);
  if (e != NULL) c10c__engine_free(e, ctx); /* an unknown pointer cannot reach here */
}

static bool (*free_memory_callback)(void);

void c10c__cuda_set_free_memory_callback(bool (*callback)(void)) {
  __atomic_store_n(&free_memory_callback, callback, __ATOMIC_RELEASE);
}

c10c_status c10c__cuda_block_share(c10c__block_share *out, const c10c_data_ptr *data,
                                   c10c_status (*visit)(void *ctx, void *handle), void *ctx) {
  c10c__engine *e = __atomic_load_n(&engine, __ATOMIC_ACQUIRE);
  if (data->deleter != block_free || data->ctx == NULL || e == NULL)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "only memory of the CUDA caching allocator can be shared with another "
                      "process");
  return c10c__engine_share(e, data->ctx, out, visit, ctx);
}

static c10c_status cuda_allocate(c10c_data_ptr *out, void *self, size_t nbytes, size_t alignment) {
  (void)self, (void)alignment; /* blocks are 512-byte aligned in 256-aligned segments */
  c10c__engine *e = NULL;
  c10c_status st = get_engine(&e);
  if (st != C10C_STATUS_OK) return st;
  c10c_device_index device = c10c__cuda_current();
  out->device = (c10c_device){C10C_DEVICE_TYPE_CUDA, device};
  c10c_stream stream;
  st = c10c_cuda_current_stream(&stream, device);
  void *ptr = NULL;
  if (st == C10C_STATUS_OK) st = c10c__engine_malloc(e, device, nbytes, stream.id, &ptr);
  /* torch's FreeCudaMemoryCallbacksRegistry: blocks kept for other processes that no longer
   * use them are freed (CudaIPCCollect), then the allocation is tried once more */
  if (st == C10C_STATUS_OUT_OF_MEMORY) { /* the callback is read only on this path */
    bool (*callback)(void) = __atomic_load_n(&free_memory_callback, __ATOMIC_ACQUIRE);
    if (callback != NULL && callback())
      st = c10c__engine_malloc(e, device, nbytes, stream.id, &ptr);
  }
  if (st != C10C_STATUS_OK || ptr == NULL) return st;
  out->data = out->ctx = ptr;
  out->deleter = block_free;
  return C10C_STATUS_OK;
}

/* ---- PyTorch's pluggable allocator interface (torch.cuda.memory.CUDAPluggableAllocator) ---- */

/* The engine's id of a stream PyTorch passes: its handle (c10's external stream ids), with the
 * legacy default stream (NULL, or cudaStreamLegacy = 0x1) as stream 0. */
static c10c_status pluggable_stream(c10c_stream_id *out, void *stream) {
  uintptr_t handle = (uintptr_t)stream;
  if (handle == 0 || handle == 1) {
    *out = 0;
    return C10C_STATUS_OK;
  }
  if (handle & 1)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "%p is not a CUDA stream handle (handles are aligned pointers)", stream);
  *out = (c10c_stream_id)handle;
  return C10C_STATUS_OK;
}

static c10c_status pluggable_device(int device) {
  int count = c10c_cuda_device_count();
  if (device < 0 || device >= count)
    return c10c__fail(C10C_STATUS_ERROR,
                      "CUDA error: invalid device ordinal (device %d; this machine has %d)", device,
                      count);
  return C10C_STATUS_OK;
}

void *c10c_cuda_pluggable_malloc(size_t size, int device, void *stream) {
  if (size == 0) return NULL; /* as PyTorch's allocator: no memory for 0 bytes */
  c10c__engine *e = NULL;
  c10c_stream_id id = 0;
  c10c_status st = get_engine(&e);
  if (st == C10C_STATUS_OK) st = pluggable_device(device);
  if (st == C10C_STATUS_OK) st = pluggable_stream(&id, stream);
  void *ptr = NULL;
  if (st == C10C_STATUS_OK) st = c10c__engine_malloc(e, device, size, id, &ptr);
  if (st == C10C_STATUS_OUT_OF_MEMORY) { /* as cuda_allocate: IPC blocks no longer used first */
    bool (*callback)(void) = __atomic_load_n(&free_memory_callback, __ATOMIC_ACQUIRE);
    if (callback != NULL && callback()) st = c10c__engine_malloc(e, device, size, id, &ptr);
  }
  return st == C10C_STATUS_OK ? ptr : NULL;
}

void c10c_cuda_pluggable_free(void *ptr, size_t size, int device, void *stream) {
  (void)size, (void)device, (void)stream; /* the engine knows each block's size and stream */
  c10c__engine *e = __atomic_load_n(&engine, __ATOMIC_ACQUIRE);
  if (ptr == NULL) return;
  if (e == NULL) {
    c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
               "free of %p, which the caching allocator did not allocate (it has allocated "
               "nothing)",
               ptr);
    return;
  }
  c10c__engine_free(e, ptr); /* an unknown pointer is refused with the engine's message */
}

c10c_status c10c_cuda_pluggable_record_stream(void *ptr, void *stream) {
  C10C__CHECK_NOT_NULL(ptr);
  c10c_stream_id id = 0;
  c10c_status st = pluggable_stream(&id, stream);
  c10c__engine *e = __atomic_load_n(&engine, __ATOMIC_ACQUIRE);
  if (st == C10C_STATUS_OK && e == NULL)
    st = c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                    "record_stream of %p, which the caching allocator did not allocate", ptr);
  return st == C10C_STATUS_OK ? c10c__engine_record_stream(e, ptr, id) : st;
}

static c10c_status cuda_stats(c10c_memory_stats *out, void *self) {
  (void)self;
  c10c__engine *e = NULL;
  c10c_status st = get_engine(&e);
  return st == C10C_STATUS_OK ? c10c__engine_stats(e, c10c__cuda_current(), out) : st;
}

static void cuda_empty_cache(void *self) {
  (void)self;
  c10c__engine *e = __atomic_load_n(&engine, __ATOMIC_ACQUIRE);
  if (e != NULL) c10c__engine_empty_cache(e);
}

static void cuda_reset_peaks(void *self) {
  (void)self;
  c10c__engine *e = __atomic_load_n(&engine, __ATOMIC_ACQUIRE);
  if (e != NULL) c10c__engine_reset_peaks(e, c10c__cuda_current());
}

static c10c_allocator cuda_allocator = {
    .obj = {.refcount = C10C__IMMORTAL_REF, .type = &c10c__immortal_type},
    .vt = {.struct_size = sizeof(c10c_allocator_vtable),
           .allocate = cuda_allocate,
           .get_stats = cuda_stats,
           .empty_cache = cuda_empty_cache,
           .reset_peak_stats = cuda_reset_peaks,
           .name = "cuda_caching"},
    .device_type = C10C_DEVICE_TYPE_CUDA,
    .builtin = true,
};

/* CUDACachingAllocator.cpp's REGISTER_ALLOCATOR(kCUDA, ...): the registry's CUDA allocator until
 * one is set (loading no driver: that happens at its first use). */
C10C__AT_LOAD(register_cuda_caching) { c10c__allocator_register_builtin(&cuda_allocator); }

/* The driver handle of the device's current stream (NULL: the default stream). */
static c10c_status current_handle(CUstream *out, c10c_device_index device) {
  c10c_stream stream;
  void *handle = NULL;
  c10c_status st = c10c_cuda_current_stream(&stream, device);
  if (st == C10C_STATUS_OK) st = c10c_cuda_stream_handle(&handle, stream);
  *out = (CUstream)handle;
  return st;
}

/* A copy between two devices, as Copy.cu's copy_device_to_device: on the source device's
 * current stream, after the destination device's current stream (its earlier reads and writes
 * of dst), and before the destination stream's later work. */
static c10c_status copy_between_devices(CUdeviceptr dst, c10c_device_index dst_device,
                                        CUdeviceptr src, c10c_device_index src_device,
                                        size_t bytes) {
  CUstream dst_stream = NULL, src_stream = NULL;
  c10c_status st = current_handle(&dst_stream, dst_device);
  if (st == C10C_STATUS_OK) st = current_handle(&src_stream, src_device);
  if (st != C10C_STATUS_OK) return st;
  CUevent dst_ready = NULL;
  CUcontext dst_ctx = NULL, src_ctx = NULL;
  st = c10c__cuda_activate(dst_device);
  if (st == C10C_STATUS_OK)
    st = c10c__cuda_check(c10c__cuda.cuCtxGetCurrent(&dst_ctx), "cuCtxGetCurrent");
  if (st == C10C_STATUS_OK)
    st = c10c__cuda_check(c10c__cuda.cuEventCreate(&dst_ready, CU_EVENT_DISABLE_TIMING),
                          "cuEventCreate");
  if (st == C10C_STATUS_OK)
    st = c10c__cuda_check(c10c__cuda.cuEventRecord(dst_ready, dst_stream), "cuEventRecord");
  if (st == C10C_STATUS_OK) st = c10c__cuda_activate(src_device);
  if (st == C10C_STATUS_OK)
    st = c10c__cuda_check(c10c__cuda.cuCtxGetCurrent(&src_ctx), "cuCtxGetCurrent");
  if (st == C10C_STATUS_OK)
    st = c10c__cuda_check(c10c__cuda.cuStreamWaitEvent(src_stream, dst_ready, 0),
                          "cuStreamWaitEvent");
  if (dst_ready != NULL) c10c__cuda.cuEventDestroy(dst_ready);
  /* between contexts: the peer copy (cudaMemcpyAsync's choice for pointers of two devices) */
  if (st == C10C_STATUS_OK)
    st = c10c__cuda_check(
        c10c__cuda.cuMemcpyPeerAsync(dst, dst_ctx, src, src_ctx, bytes, src_stream),
        "cuMemcpyPeerAsync");
  CUevent src_ready = NULL;
  if (st == C10C_STATUS_OK)
    st = c10c__cuda_check(c10c__cuda.cuEventCreate(&src_ready, CU_EVENT_DISABLE_TIMING),
                          "cuEventCreate");
  if (st == C10C_STATUS_OK)
    st = c10c__cuda_check(c10c__cuda.cuEventRecord(src_ready, src_stream), "cuEventRecord");
  if (st == C10C_STATUS_OK) st = c10c__cuda_activate(dst_device);
  if (st == C10C_STATUS_OK)
    st = c10c__cuda_check(c10c__cuda.cuStreamWaitEvent(dst_stream, src_ready, 0),
                          "cuStreamWaitEvent");
  if (src_ready != NULL) c10c__cuda.cuEventDestroy(src_ready);
  return st;
}

c10c_status c10c__cuda_memcpy_async(void *dst, c10c_device_index dst_device, const void *src,
                                    c10c_device_index src_device, size_t bytes, bool synchronize) {
  if (bytes == 0) return C10C_STATUS_OK;
  CUdeviceptr d = (CUdeviceptr)(uintptr_t)dst, s = (CUdeviceptr)(uintptr_t)src;
  if (dst_device >= 0 && src_device >= 0 && dst_device != src_device)
    return c10c__cuda_restore(copy_between_devices(d, dst_device, s, src_device, bytes));
  c10c_device_index device = dst_device >= 0 ? dst_device : src_device;
  CUstream stream = NULL;
  c10c_status st = current_handle(&stream, device);
  if (st == C10C_STATUS_OK) st = c10c__cuda_activate(device);
  if (st != C10C_STATUS_OK) return c10c__cuda_restore(st);
  if (dst_device >= 0 && src_device >= 0)
    return c10c__cuda_restore(c10c__cuda_check(c10c__cuda.cuMemcpyDtoDAsync(d, s, bytes, stream),
                                               "cuMemcpyDtoDAsync_v2"));
  if (dst_device >= 0)
    st = c10c__cuda_check(c10c__cuda.cuMemcpyHtoDAsync(d, src, bytes, stream),
                          "cuMemcpyHtoDAsync_v2");
  else
    st = c10c__cuda_check(c10c__cuda.cuMemcpyDtoHAsync(dst, s, bytes, stream),
                          "cuMemcpyDtoHAsync_v2");
  /* memcpy_and_sync: the host sees (or may reuse) its memory when copy_ returns */
  if (st == C10C_STATUS_OK && synchronize)
    st = c10c__cuda_check(c10c__cuda.cuStreamSynchronize(stream), "cuStreamSynchronize");
  return c10c__cuda_restore(st);
}

c10c_status c10c__cuda_memcpy(void *dst, c10c_device_index dst_device, const void *src,
                              c10c_device_index src_device, size_t bytes) {
  return c10c__cuda_memcpy_async(dst, dst_device, src, src_device, bytes, true);
}

c10c_status c10c__cuda_memzero(void *dst, c10c_device_index device, size_t bytes) {
  if (bytes == 0) return C10C_STATUS_OK;
  CUstream stream = NULL;
  c10c_status st = current_handle(&stream, device);
  if (st == C10C_STATUS_OK) st = c10c__cuda_activate(device);
  if (st != C10C_STATUS_OK) return c10c__cuda_restore(st);
  return c10c__cuda_restore(
      c10c__cuda_check(c10c__cuda.cuMemsetD8Async((CUdeviceptr)(uintptr_t)dst, 0, bytes, stream),
                       "cuMemsetD8Async"));
}

c10c_status c10c_cuda_record_stream(const c10c_data_ptr *data, c10c_stream stream) {
  C10C__CHECK_NOT_NULL(data);
  void *handle = NULL;
  c10c_status st = c10c_cuda_stream_handle(&handle, stream); /* checks the stream value */
  if (st != C10C_STATUS_OK) return st;
  if (data->device.type == C10C_DEVICE_TYPE_CUDA && data->device.index != stream.device.index)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "record_stream: the memory is on cuda:%d, the stream on cuda:%d",
                      (int)data->device.index, (int)stream.device.index);
  /* memory of another allocator (a DLPack import, a host's allocator): nothing to hold back */
  c10c__engine *e = __atomic_load_n(&engine, __ATOMIC_ACQUIRE);
  if (data->deleter != block_free || data->ctx == NULL || e == NULL) return C10C_STATUS_OK;
  return c10c__engine_record_stream(e, data->ctx, stream.id);
}

c10c_status c10c_cuda_set_allocator_settings(const char *config) {
  C10C__CHECK_NOT_NULL(config);
  c10c__engine *e = NULL;
  c10c_status st = get_engine(&e);
  if (st != C10C_STATUS_OK) return st;
  c10c__device_alloc_config parsed = c10c__device_alloc_config_default();
  char msg[256];
  st = c10c__parse_device_alloc_config(config, &parsed, msg, sizeof msg);
  if (st != C10C_STATUS_OK) return c10c__fail(st, "%s", msg);
  return configure(e, &parsed);
}

c10c_status c10c_cuda_allocator_step(c10c_device_index device) {
  c10c__engine *e = NULL;
  c10c_status st = get_engine(&e);
  if (st == C10C_STATUS_OK && device != -1) st = c10c__cuda_resolve(&device);
  return st == C10C_STATUS_OK ? c10c__engine_step(e, device) : st;
}

c10c_status c10c_cuda_record_memory_history(size_t max_entries) {
  c10c__engine *e = NULL;
  c10c_status st = get_engine(&e);
  return st == C10C_STATUS_OK ? c10c__engine_record_history(e, max_entries) : st;
}

c10c_status c10c_cuda_memory_snapshot(char *out, size_t out_size, size_t *out_len) {
  if (out_size > 0) C10C__CHECK_NOT_NULL(out);
  c10c__engine *e = NULL;
  c10c_status st = get_engine(&e);
  char *json = NULL;
  size_t len = 0;
  if (st == C10C_STATUS_OK) st = c10c__engine_snapshot(e, &json, &len);
  if (st != C10C_STATUS_OK) return st;
  if (out_len != NULL) *out_len = len;
  if (len + 1 > out_size) {
    c10c__free(json);
    return c10c__fail(C10C_STATUS_BUFFER_TOO_SMALL,
                      "the snapshot needs %zu bytes with its NUL, the buffer has %zu", len + 1,
                      out_size);
  }
  memcpy(out, json, len + 1);
  c10c__free(json);
  return C10C_STATUS_OK;
}

/* Python's repr of a float, as torch's f-string message shows it: the fewest digits that read
 * back as v, fixed notation for decimal exponents -4..15 (with ".0" when integral), else
 * d.ddde+XX; nan, inf, -inf. */
static void python_float(char *out, size_t size, double v) {
  if (v != v || v == HUGE_VAL || v == -HUGE_VAL) {
    snprintf(out, size, "%s", v != v ? "nan" : v > 0 ? "inf" : "-inf");
    return;
  }
  char digits[40];
  int precision = 1;
  for (; precision < 17; precision++) {
    snprintf(digits, sizeof digits, "%.*e", precision - 1, v);
    if (strtod(digits, NULL) == v) break;
  }
  snprintf(digits, sizeof digits, "%.*e", precision - 1, v);
  int exponent = atoi(strchr(digits, 'e') + 1);
  if (exponent < -4 || exponent >= 16) {
    snprintf(out, size, "%s", digits);
    return;
  }
  int decimals = precision - 1 - exponent;
  if (decimals > 0)
    snprintf(out, size, "%.*f", decimals, v);
  else
    snprintf(out, size, "%.0f.0", v);
}

c10c_status c10c_cuda_set_memory_fraction(double fraction, c10c_device_index device) {
  if (!(fraction >= 0.0 && fraction <= 1.0)) { /* NaN too */
    char value[48];
    python_float(value, sizeof value, fraction);
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "Invalid fraction value: %s. Allowed range: 0~1", value);
  }
  c10c__engine *e = NULL;
  c10c_status st = get_engine(&e);
  if (st == C10C_STATUS_OK) st = c10c__cuda_resolve(&device);
  size_t free_bytes = 0, total = 0;
  if (st == C10C_STATUS_OK) st = segment_mem_info(NULL, device, &free_bytes, &total);
  if (st == C10C_STATUS_OK) c10c__engine_set_limit(e, device, c10c__fraction_of(fraction, total));
  return st;
}
