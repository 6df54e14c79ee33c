/* The CUDA driver API as libc10c calls it: the types and codes of the driver's cuda.h (declared
 * here: libc10c builds without the CUDA toolkit) and the table of entry points lib/cuda/cuda.c
 * resolves at run time. */
#ifndef C10C_CUDA_INTERNAL_H
#define C10C_CUDA_INTERNAL_H

#include "c10c/allocator.h"
#include "c10c/cuda.h"

typedef int CUresult; /* cudaError_enum */
typedef int CUdevice;
typedef uint64_t CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

enum {
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_READY = 600,
  CU_STREAM_NON_BLOCKING = 1,
  CU_EVENT_DEFAULT = 0,
  CU_EVENT_DISABLE_TIMING = 2,
  C10C_CUDA_MAX_DEVICES = 64
};

/* The virtual memory management API (CUDA >= 10.2), as in the driver's cuda.h. */
typedef unsigned long long CUmemGenericAllocationHandle;

typedef struct CUmemLocation {
  int type; /* CU_MEM_LOCATION_TYPE_DEVICE */
  int id;
} CUmemLocation;

typedef struct CUmemAllocationProp {
  int type;                 /* CU_MEM_ALLOCATION_TYPE_PINNED */
  int requestedHandleTypes; /* CU_MEM_HANDLE_TYPE_NONE */
  CUmemLocation location;
  void *win32HandleMetaData;
  struct {
    unsigned char compressionType;
    unsigned char gpuDirectRDMACapable;
    unsigned short usage;
    unsigned char reserved[4];
  } allocFlags;
} CUmemAllocationProp;

typedef struct CUmemAccessDesc {
  CUmemLocation location;
  int flags; /* CU_MEM_ACCESS_FLAGS_PROT_READWRITE */
} CUmemAccessDesc;

enum {
  CU_MEM_ALLOCATION_TYPE_PINNED = 1,
  CU_MEM_HANDLE_TYPE_NONE = 0,
  CU_MEM_LOCATION_TYPE_DEVICE = 1,
  CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3,
  CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102
};

typedef struct c10c__cuda_driver {
  CUresult (*cuInit)(unsigned int flags);
  CUresult (*cuDriverGetVersion)(int *version);
  CUresult (*cuDeviceGetCount)(int *count);
  CUresult (*cuDeviceGet)(CUdevice *device, int ordinal);
  CUresult (*cuDeviceGetName)(char *name, int len, CUdevice device);
  CUresult (*cuDeviceTotalMem)(size_t *bytes, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device);
  CUresult (*cuCtxSetCurrent)(CUcontext ctx);
  CUresult (*cuCtxGetCurrent)(CUcontext *ctx);
  CUresult (*cuCtxSynchronize)(void);
  CUresult (*cuMemAlloc)(CUdeviceptr *ptr, size_t bytes);
  CUresult (*cuMemFree)(CUdeviceptr ptr);
  CUresult (*cuMemGetInfo)(size_t *free_bytes, size_t *total_bytes);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes);
  CUresult (*cuMemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);
  CUresult (*cuMemcpyDtoD)(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
  CUresult (*cuMemsetD8)(CUdeviceptr dst, unsigned char value, size_t count);
  CUresult (*cuCtxGetStreamPriorityRange)(int *least, int *greatest);
  CUresult (*cuStreamCreateWithPriority)(CUstream *stream, unsigned int flags, int priority);
  CUresult (*cuStreamDestroy)(CUstream stream);
  CUresult (*cuStreamQuery)(CUstream stream);
  CUresult (*cuStreamSynchronize)(CUstream stream);
  CUresult (*cuStreamWaitEvent)(CUstream stream, CUevent event, unsigned int flags);
  CUresult (*cuEventCreate)(CUevent *event, unsigned int flags);
  CUresult (*cuEventDestroy)(CUevent event);
  CUresult (*cuEventRecord)(CUevent event, CUstream stream);
  CUresult (*cuEventQuery)(CUevent event);
  CUresult (*cuEventSynchronize)(CUevent event);
  CUresult (*cuEventElapsedTime)(float *ms, CUevent start, CUevent end);
  CUresult (*cuGetErrorName)(CUresult error, const char **name);
  CUresult (*cuGetErrorString)(CUresult error, const char **text);
  /* Optional (NULL when the driver lacks them): virtual memory management, for expandable
   * segments. */
  CUresult (*cuMemAddressReserve)(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                  unsigned long long flags);
  CUresult (*cuMemAddressFree)(CUdeviceptr ptr, size_t size);
  CUresult (*cuMemCreate)(CUmemGenericAllocationHandle *handle, size_t size,
                          const CUmemAllocationProp *prop, unsigned long long flags);
  CUresult (*cuMemRelease)(CUmemGenericAllocationHandle handle);
  CUresult (*cuMemMap)(CUdeviceptr ptr, size_t size, size_t offset,
                       CUmemGenericAllocationHandle handle, unsigned long long flags);
  CUresult (*cuMemUnmap)(CUdeviceptr ptr, size_t size);
  CUresult (*cuMemSetAccess)(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                             size_t count);
  CUresult (*cuDeviceGetAttribute)(int *value, int attribute, CUdevice device);
  /* Devices: contexts only where used, peers, the granularity (the last optional, with VMM). */
  CUresult (*cuDevicePrimaryCtxGetState)(CUdevice device, unsigned int *flags, int *active);
  CUresult (*cuDeviceCanAccessPeer)(int *can_access, CUdevice device, CUdevice peer);
  CUresult (*cuMemGetAllocationGranularity)(size_t *granularity, const CUmemAllocationProp *prop,
                                            int option);
  /* Stream-ordered copies and memsets (on the current stream, as ATen's copy_). */
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream);
  CUresult (*cuMemcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes, CUstream stream);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
  CUresult (*cuMemcpyPeerAsync)(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src,
                                CUcontext src_ctx, size_t bytes, CUstream stream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream);
} c10c__cuda_driver;

/* Whether the driver has the virtual memory management entry points. */
bool c10c__cuda_has_vmm(void);

/* Whether every device supports virtual memory management (the driver's
 * CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED); if not, C10C_STATUS_NOT_IMPLEMENTED
 * naming the device. */
c10c_status c10c__cuda_check_vmm(void);

/* Filled once the driver is loaded (all NULL while CUDA is unavailable). */
extern c10c__cuda_driver c10c__cuda;

/* A status for a driver result: OK, C10C_STATUS_OUT_OF_MEMORY for CUDA_ERROR_OUT_OF_MEMORY, else
 * C10C_STATUS_ERROR "CUDA driver error: <name> (<text>) in <call>". */
c10c_status c10c__cuda_check(CUresult r, const char *call);

/* Loads the driver if needed and makes the device's primary context current on this thread. */
c10c_status c10c__cuda_activate(c10c_device_index index);

/* Loads the driver if needed; C10C_STATUS_UNAVAILABLE with the reason otherwise. */
c10c_status c10c__cuda_ensure(void);

/* Loads the driver if needed, turns -1 into the thread's current device and checks the index
 * ("CUDA error: invalid device ordinal"). */
c10c_status c10c__cuda_resolve(c10c_device_index *index);

/* After driver calls made in another device's context: makes the thread's current device's
 * context current again. Returns st, or the restoring error when st is OK. */
c10c_status c10c__cuda_restore(c10c_status st);

/* The thread's current device after the driver is loaded (0 until set). */
c10c_device_index c10c__cuda_current(void);

/* Copies bytes between host and device memory or within devices (pointers into CUDA storages
 * carry their device: src_device/dst_device, -1 for host memory), as ATen's copy_kernel_cuda
 * (aten/src/ATen/native/cuda/Copy.cu): queued on the device's current stream (the source
 * device's for a copy between devices, which is ordered after the destination device's current
 * stream and before its later work by events); a copy between host and device then synchronizes
 * that stream when synchronize is true (memcpy_and_sync: copy_ with non_blocking=False). Copies
 * within devices never synchronize. With synchronize false the host memory must stay untouched
 * until the stream reaches the copy (page-locked memory held by an event: non_blocking=True). */
c10c_status c10c__cuda_memcpy_async(void *dst, c10c_device_index dst_device, const void *src,
                                    c10c_device_index src_device, size_t bytes, bool synchronize);

/* c10c__cuda_memcpy_async synchronizing host copies (copy_ with non_blocking=False). */
c10c_status c10c__cuda_memcpy(void *dst, c10c_device_index dst_device, const void *src,
                              c10c_device_index src_device, size_t bytes);

/* Sets bytes of device memory to zero, queued on the device's current stream (no wait). */
c10c_status c10c__cuda_memzero(void *dst, c10c_device_index device, size_t bytes);

/* ---- devices ---- */

enum { CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED = 1 };

/* The devices whose kernels can access memory of device (cuDeviceCanAccessPeer, asked once per
 * device until it answers), as a bit mask in *out (bit i: device i; never device itself).
 * Errors: the driver's, naming the call; "CUDA error: invalid device ordinal". */
c10c_status c10c__cuda_peers(uint64_t *out, c10c_device_index device);

/* Whether the driver is loaded and this is not a child forked since (no error recorded): for
 * paths with no caller to report to (destroying an event) that must not reach the driver in a
 * forked child. */
bool c10c__cuda_usable(void);

/* c10's getDeviceIndexWithPrimaryContext: the thread's current device if its primary context
 * exists, else the first device whose context exists, else -1 (for work any device can do, e.g.
 * page-locked host memory, so that it makes no new context: PyTorch's CachingHostAllocator). */
c10c_device_index c10c__cuda_device_with_primary_context(void);

/* ---- interprocess memory and events (lib/cuda/cuda_ipc.c) ---- */

enum {
  CU_IPC_HANDLE_SIZE = 64,
  CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 1,
  CU_EVENT_BLOCKING_SYNC = 1,
  CU_EVENT_INTERPROCESS = 4,
  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1
};

typedef struct CUipcMemHandle {
  char reserved[CU_IPC_HANDLE_SIZE];
} CUipcMemHandle;

typedef struct CUipcEventHandle {
  char reserved[CU_IPC_HANDLE_SIZE];
} CUipcEventHandle;

/* Driver entry points of IPC, resolved with the others when present (lib/cuda/cuda.c): the five
 * cuIpc calls and cuMemGetAddressRange_v2 (the size of an opened mapping) as one group (all or
 * none: a driver without them loses IPC, not CUDA), the two shareable-handle calls of expandable
 * segments as another. */
typedef struct c10c__cuda_ipc_driver {
  CUresult (*cuIpcGetMemHandle)(CUipcMemHandle *handle, CUdeviceptr ptr);
  CUresult (*cuIpcOpenMemHandle)(CUdeviceptr *ptr, CUipcMemHandle handle, unsigned int flags);
  CUresult (*cuIpcCloseMemHandle)(CUdeviceptr ptr);
  CUresult (*cuIpcGetEventHandle)(CUipcEventHandle *handle, CUevent event);
  CUresult (*cuIpcOpenEventHandle)(CUevent *event, CUipcEventHandle handle);
  CUresult (*cuMemGetAddressRange)(CUdeviceptr *base, size_t *size, CUdeviceptr ptr);
  CUresult (*cuMemExportToShareableHandle)(void *shareable, CUmemGenericAllocationHandle handle,
                                           int type, unsigned long long flags);
  CUresult (*cuMemImportFromShareableHandle)(CUmemGenericAllocationHandle *handle, void *os_handle,
                                             int type);
} c10c__cuda_ipc_driver;

/* Filled with c10c__cuda (NULL while CUDA is unavailable or the driver lacks a group). */
extern c10c__cuda_ipc_driver c10c__cuda_ipc;

/* torch's handle bytes for the CUDA caching allocator's block at data->ctx (c10's
 * shareIpcHandle): version 2, type 'c' and the segment's cudaIpcMemHandle_t, or type 'e' and an
 * expandable segment's ShareHeader and page descriptors; *offset is the block's offset in the
 * segment (in its first shared page) plus data->data's in the block. out_size bytes at out;
 * *out_len the length (C10C_STATUS_BUFFER_TOO_SMALL, nothing exported, when out_size is less).
 * Errors: C10C_STATUS_INVALID_ARGUMENT for memory the caching allocator did not allocate;
 * C10C_STATUS_NOT_IMPLEMENTED without the driver's IPC (or its shareable handles for an
 * expandable segment); the driver's. */
c10c_status c10c__cuda_ipc_share(uint8_t *out, size_t out_size, size_t *out_len, size_t *offset,
                                 const c10c_data_ptr *data);

/* Where the caching allocator's block at data->ctx lies (caching_engine.h). Errors:
 * C10C_STATUS_INVALID_ARGUMENT for memory of another allocator. */
struct c10c__block_share;
c10c_status c10c__cuda_block_share(struct c10c__block_share *out, const c10c_data_ptr *data,
                                   c10c_status (*visit)(void *ctx, void *handle), void *ctx);

/* The file descriptor exported for an expandable page of the caching allocator (exported on the
 * first call, then the same one while the page is mapped; closed when it is unmapped). Call it
 * under the engine's lock (c10c__cuda_block_share's visit). Errors: the driver's export error;
 * C10C_STATUS_OUT_OF_MEMORY. */
c10c_status c10c__cuda_page_fd(int *out, void *handle);

/* Maps the memory a handle from c10c__cuda_ipc_share names, on device (c10's getIpcDevPtr):
 * one mapping per handle and process, counted; *token is released with c10c__cuda_ipc_close.
 * *size is the bytes mapped at *base (at least; the segment's for a cudaIpcMemHandle_t). */
c10c_status c10c__cuda_ipc_open(void **base, size_t *size, void **token, const uint8_t *handle,
                                size_t len, c10c_device_index device);
void c10c__cuda_ipc_close(void *token);

/* An interprocess event recorded on device's current stream now, with its handle (torch's
 * CudaIPCSentData event: DisableTiming | Interprocess | BlockingSync). */
c10c_status c10c__cuda_ipc_event_record(void **event, uint8_t handle[CU_IPC_HANDLE_SIZE],
                                        c10c_device_index device);
void c10c__cuda_ipc_event_destroy(void *event);

/* Makes device's current stream wait for the event a handle names (torch's
 * CUDAEvent(device, handle).block(current stream)). */
c10c_status c10c__cuda_ipc_event_wait(const uint8_t handle[CU_IPC_HANDLE_SIZE],
                                      c10c_device_index device);

/* Synchronizes device's current stream (a received storage's deleter). */
c10c_status c10c__cuda_sync_current_stream(c10c_device_index device);

/* Called when a CUDA allocation runs out of memory, before it is retried once (torch's
 * FreeCudaMemoryCallbacksRegistry, where CudaIPCCollect frees blocks kept for consumers): true
 * when it freed something. Set from above (lib/tensor/storage_ipc.c). */
void c10c__cuda_set_free_memory_callback(bool (*callback)(void));

/* ---- pinned host memory (lib/cuda/cuda_host_allocator.c) ---- */

enum { C10C_CU_MEMHOSTALLOC_PORTABLE = 1 };

/* Driver entry points of the pinned host allocator, resolved with the others (lib/cuda/cuda.c). */
typedef struct c10c__cuda_host_driver {
  CUresult (*cuMemHostAlloc)(void **ptr, size_t bytes, unsigned int flags);
  CUresult (*cuMemFreeHost)(void *ptr);
} c10c__cuda_host_driver;

/* Filled with c10c__cuda (NULL while CUDA is unavailable). */
extern c10c__cuda_host_driver c10c__cuda_host;

/* Whether the copy being made on this thread is non_blocking (c10c_tensor_copy_nonblocking_). */
extern _Thread_local bool c10c__copy_non_blocking;

/* c10c__cuda_memcpy, but when c10c__copy_non_blocking is set and the host side of a host-device
 * copy is pinned: c10c__cuda_memcpy_async without synchronizing (cuMemcpy{HtoD,DtoH}Async_v2 on
 * the device's current stream), the host block recorded on that stream (Copy.cu's
 * CachingHostAllocator_recordEvent). From pageable memory the copy synchronizes, as CUDA's own
 * cudaMemcpyAsync from pageable memory returns only once the host side is consumed. */
c10c_status c10c__cuda_memcpy_maybe_async(void *dst, c10c_device_index dst_device, const void *src,
                                          c10c_device_index src_device, size_t bytes);

#endif /* C10C_CUDA_INTERNAL_H */
