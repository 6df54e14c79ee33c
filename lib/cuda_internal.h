/* The CUDA driver API as libc10c calls it: the types and codes of the driver's cuda.h (declared
 * here: libc10c builds without the CUDA toolkit) and the table of entry points lib/cuda.c
 * resolves at run time. */
#ifndef C10C_CUDA_INTERNAL_H
#define C10C_CUDA_INTERNAL_H

#include "c10c/cuda.h"

typedef int CUresult; /* cudaError_enum */
typedef int CUdevice;
typedef uint64_t CUdeviceptr;
typedef struct CUctx_st *CUcontext;

enum { CUDA_ERROR_OUT_OF_MEMORY = 2, C10C_CUDA_MAX_DEVICES = 64 };

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
  CUresult (*cuGetErrorName)(CUresult error, const char **name);
  CUresult (*cuGetErrorString)(CUresult error, const char **text);
} c10c__cuda_driver;

/* Filled once the driver is loaded (all NULL while CUDA is unavailable). */
extern c10c__cuda_driver c10c__cuda;

/* A status for a driver result: OK, C10C_STATUS_OUT_OF_MEMORY for CUDA_ERROR_OUT_OF_MEMORY, else
 * C10C_STATUS_ERROR "CUDA driver error: <name> (<text>) in <call>". */
c10c_status c10c__cuda_check(CUresult r, const char *call);

/* Loads the driver if needed and makes the device's primary context current on this thread. */
c10c_status c10c__cuda_activate(c10c_device_index index);

#endif /* C10C_CUDA_INTERNAL_H */
