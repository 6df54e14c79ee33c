/* libc10c: CUDA, optional at run time.
 *
 * libc10c never links the CUDA driver. On first use it loads it with dlopen (libcuda.so.1, or the
 * path in the environment variable C10C_CUDA_DRIVER), resolves the driver entry points it uses
 * (the versioned names, e.g. cuMemAlloc_v2), calls cuInit and counts the devices, once per
 * process and thread-safely. Without a library, with a library missing an entry point, with
 * cuInit failing or with no device, CUDA is unavailable: c10c_cuda_is_available() is false,
 * c10c_cuda_device_count() is 0, and every other call returns C10C_STATUS_UNAVAILABLE with the
 * reason (the driver's own error name and text where it gave one) in the message.
 *
 * A process that forks after CUDA was initialized cannot use it in the child (the driver does
 * not survive fork): calls there fail with torch's message "Cannot re-initialize CUDA in forked
 * subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method".
 *
 * The current device is per thread (0 until set), as c10's CUDA device guard keeps it.
 */
#ifndef C10C_CUDA_H
#define C10C_CUDA_H

#include "common.h"
#include "device.h"

C10C_BEGIN_DECLS

/* Loads and initializes the driver if that was not done yet. Errors: C10C_STATUS_UNAVAILABLE
 * with the reason, e.g. "CUDA driver not found: libcuda.so.1: cannot open shared object file: No
 * such file or directory", "CUDA driver /x/libcuda.so.1 has no cuMemFree_v2", "cuInit failed:
 * CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)", "no CUDA device found". */
C10C_API c10c_status c10c_cuda_init(void);

/* Whether the driver loaded and has at least one device (loads it). Errors: none. */
C10C_API bool c10c_cuda_is_available(void);

/* Number of devices, 0 when CUDA is unavailable (loads the driver). Errors: none. */
C10C_API int c10c_cuda_device_count(void);

/* Why CUDA is unavailable ("" when it is available; loads the driver). The string lives as long
 * as the process. Errors: none. */
C10C_API const char *c10c_cuda_unavailable_reason(void);

/* The driver's version (cuDriverGetVersion: 1000 * major + 10 * minor, e.g. 12080).
 * Errors: C10C_STATUS_NULL_POINTER, C10C_STATUS_UNAVAILABLE. */
C10C_API c10c_status c10c_cuda_driver_version(int *out);

/* The calling thread's current device (torch.cuda.current_device(); 0 until set).
 * Errors: C10C_STATUS_NULL_POINTER, C10C_STATUS_UNAVAILABLE. */
C10C_API c10c_status c10c_cuda_current_device(c10c_device_index *out);

/* Makes index the calling thread's current device and its primary context current
 * (torch.cuda.set_device). Errors: C10C_STATUS_UNAVAILABLE; C10C_STATUS_ERROR "CUDA error:
 * invalid device ordinal" for an index outside 0..count-1 (as torch); a driver failure as
 * C10C_STATUS_ERROR "CUDA driver error: <name> (<text>) in <call>". */
C10C_API c10c_status c10c_cuda_set_device(c10c_device_index index);

/* c10's CUDAGuard: makes index current for a scope and restores the previous device on exit.
 * A negative index leaves the device as it is (c10's OptionalDeviceGuard with no device). */
typedef struct c10c_cuda_device_guard {
  c10c_device_index original; /* -1 when the guard changed nothing */
  c10c_device_index current;
} c10c_cuda_device_guard;

/* Errors: as c10c_cuda_set_device (the guard is then inactive and exit is a no-op). */
C10C_API c10c_status c10c_cuda_device_guard_enter(c10c_cuda_device_guard *guard,
                                                  c10c_device_index index);
C10C_API c10c_status c10c_cuda_device_guard_exit(c10c_cuda_device_guard *guard);

/* The device's name (cuDeviceGetName) into out (size bytes, NUL-terminated, truncated to fit).
 * Errors: C10C_STATUS_NULL_POINTER, C10C_STATUS_UNAVAILABLE, "CUDA error: invalid device
 * ordinal". */
C10C_API c10c_status c10c_cuda_device_name(char *out, size_t size, c10c_device_index index);

/* Free and total bytes of a device (torch.cuda.mem_get_info; cuMemGetInfo_v2 in its primary
 * context). Errors: as c10c_cuda_device_name. */
C10C_API c10c_status c10c_cuda_mem_get_info(int64_t *free_bytes, int64_t *total_bytes,
                                            c10c_device_index index);

/* Waits for all work on a device (torch.cuda.synchronize; cuCtxSynchronize). Errors: as
 * c10c_cuda_device_name. */
C10C_API c10c_status c10c_cuda_synchronize(c10c_device_index index);

C10C_END_DECLS

#endif /* C10C_CUDA_H */
