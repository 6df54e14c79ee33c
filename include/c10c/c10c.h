/* libc10c: the whole public API. Include this, or the module headers you use.
 *
 * libc10c is the core of a tensor runtime (PyTorch's c10) behind a stable C ABI: status codes
 * and errors (status.h), versions and the ABI check (version.h), devices (device.h), dtypes and
 * type promotion (dtype.h), layouts and memory formats (layout.h), dispatch keys (dispatch_key.h),
 * streams (stream.h), allocators and data pointers (allocator.h), storages (storage.h), tensors
 * (tensor.h), and hooks for tests (testing.h).
 *
 * Conventions: functions that can fail return c10c_status and write results through
 * out-parameters, which come first (out, or out_<what>), also in the allocator vtable; a failure
 * leaves a message for the calling thread in c10c_last_error_message(). Value types (devices,
 * dtypes, key sets, streams) are passed by value. An object written through an out-parameter is
 * the caller's (a new reference); one returned is borrowed. Strings and tables a caller passes
 * are copied or only read during the call. Structs a caller fills or allocates begin with
 * struct_size and only ever grow at the end. Constants an FFI needs are enum constants (a macro
 * has an enum twin where it matters: C10C_ABI_VERSION_VALUE). Every function may be called from
 * any thread.
 *
 * Numbering: dtypes, device types, layouts, memory formats, dispatch keys and key-set bits have
 * torch 2.13's c10 values, frozen for every 1.x: when a later PyTorch renumbers, libc10c does
 * not, and a host that meets another torch version converts by name (c10c_dtype_from_name,
 * c10c_device_from_string, c10c_dispatch_key_parse), never by number.
 */
#ifndef C10C_H
#define C10C_H

#include "allocator.h"
#include "common.h"
#include "cuda.h"
#include "cuda_host.h"
#include "cuda_ipc.h"
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
