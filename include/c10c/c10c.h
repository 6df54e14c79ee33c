/* libc10c: the whole public API. Include this, or the module headers you use.
 *
 * libc10c is the core of a tensor runtime (PyTorch's c10) behind a stable C ABI: status codes
 * and errors (status.h), versions and the ABI check (version.h), devices (device.h), dtypes and
 * type promotion (dtype.h), layouts and memory formats (layout.h), dispatch keys (dispatch_key.h),
 * streams (stream.h), allocators and data pointers (allocator.h), storages (storage.h), tensors
 * (tensor.h), and hooks for tests (testing.h).
 *
 * Conventions: functions that can fail return c10c_status and write results through
 * out-parameters, which come first and are named out; a failure leaves a message for the calling
 * thread in c10c_last_error_message(). Value types (devices, dtypes, key sets, streams) are
 * passed by value. Every function may be called from any thread.
 */
#ifndef C10C_H
#define C10C_H

#include "allocator.h"
#include "common.h"
#include "cuda.h"
#include "cuda_host.h"
#include "device.h"
#include "dispatch_key.h"
#include "dlpack.h"
#include "dtype.h"
#include "layout.h"
#include "replay.h"
#include "status.h"
#include "storage.h"
#include "stream.h"
#include "tensor.h"
#include "testing.h"
#include "version.h"

#endif /* C10C_H */
