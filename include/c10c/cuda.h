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
 * subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method"; every
 * entry point that would reach the driver checks it (events included; c10c_cuda_event_free
 * then forgets the event without calling the driver). c10c_cuda_driver_version still answers.
 *
 * The current device is per thread (0 until set), as c10's CUDA device guard keeps it.
 * Contexts only where used (c10's MaybeSetDevice / ExchangeDevice rules): a device's primary
 * context is retained (once per process) and made current on a thread only when the thread runs
 * work on that device or asks for it (c10c_cuda_set_device or a device guard on a device other
 * than the one it is on). After work on another device, and on a guard's exit, the thread's
 * current device gets its context back only if that context exists (libc10c made it, or the
 * driver reports it active); otherwise the last device's context stays current and the current
 * device (as c10c_cuda_current_device reports it) is made only when work first runs there. A
 * worker thread that only uses cuda:1 thus never makes a context on device 0.
 *
 * Tensors on cuda:N (c10c_tensor_empty and friends) allocate through the allocator registry,
 * which for CUDA defaults to the built-in caching allocator ("cuda_caching": PyTorch's pools,
 * rounding, segment sizes, best fit per stream, splitting, coalescing, and release-and-retry
 * before an out-of-memory error, over cuMemAlloc_v2 segments or expandable segments; see
 * c10c_cuda_set_allocator_settings; statistics through
 * c10c_allocator_get_stats for the current device), on device N under a device guard.
 * copy_, clone, zero_ and fill_ work without kernels: one driver copy (or memset) for dense
 * tensors of one layout and dtype; anything else (strided CUDA views, broadcasting, dtype
 * conversions) is arranged on the host: the source's span is copied there, a CUDA destination's
 * span read, written by the CPU copy and copied back.
 * Stream order, as ATen's copy_ with non_blocking=False (Copy.cu copy_kernel_cuda): every driver
 * copy and memset is queued on the device's current stream (c10c_cuda_current_stream; the
 * default stream is the legacy NULL stream), never on another; a copy between host and device
 * memory then synchronizes that stream, so copy_ (and reading values back: item, tolist, numpy)
 * returns only after the stream's earlier work and the copy are done, and the host memory may
 * be reused at once. Copies within one device and zero_ (a memset) are not waited for: later
 * work on the same stream sees them, work on other streams must wait for them (an event, or
 * c10c_tensor_record_stream). fill_ with a nonzero value and the host-arranged
 * cases are host copies, so they return done. A copy between devices runs on the source
 * device's current stream, after the destination device's current stream's earlier work and
 * before its later work (events, as copy_device_to_device), without waiting on the host.
 *
 * Errors that every fallible call below may return besides its own: C10C_STATUS_UNAVAILABLE
 * (no usable driver or device, or a forked child) and a failing driver call as
 * C10C_STATUS_ERROR "CUDA driver error: <name> (<text>) in <call>" (C10C_STATUS_OUT_OF_MEMORY for
 * CUDA_ERROR_OUT_OF_MEMORY); a NULL pointer argument is C10C_STATUS_NULL_POINTER.
 */
#ifndef C10C_CUDA_H
#define C10C_CUDA_H

#include "common.h"
#include "device.h"
#include "stream.h"
#include "tensor.h"

C10C_BEGIN_DECLS

/* Loads and initializes the driver if that was not done yet. Errors: C10C_STATUS_UNAVAILABLE
 * with the reason, e.g. "CUDA driver not found: libcuda.so.1: cannot open shared object file: No
 * such file or directory", "CUDA driver /x/libcuda.so.1 has no cuMemFree_v2", "cuInit failed:
 * CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)", "no CUDA device found". */
C10C_API c10c_status c10c_cuda_init(void);

/* Whether the driver loaded and has at least one device (loads it). Errors: none. */
C10C_API bool c10c_cuda_is_available(void);

/* Whether the driver is loaded and CUDA available, without loading it (false before first use):
 * for callers that need CUDA only if the process already uses it (a DLPack consumer's stream). */
C10C_API bool c10c_cuda_is_initialized(void);

/* Number of devices, 0 when CUDA is unavailable (loads the driver). Errors: none. */
C10C_API int c10c_cuda_device_count(void);

/* Why CUDA is unavailable ("" when it is available; loads the driver). The string lives as long
 * as the process. Errors: none. */
C10C_API const char *c10c_cuda_unavailable_reason(void);

/* The driver's version (cuDriverGetVersion: 1000 * major + 10 * minor, e.g. 12080), asked when
 * the driver is loaded, before cuInit: reported also when cuInit failed or there is no device
 * (torch's _cuda_getDriverVersion answers without a device too), and in a forked child.
 * Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_UNAVAILABLE with the reason when there is no
 * driver library or it gave no version. */
C10C_API c10c_status c10c_cuda_driver_version(int *out);

/* The calling thread's current device (torch.cuda.current_device(); 0 until set). Makes no
 * context. Errors: C10C_STATUS_NULL_POINTER, C10C_STATUS_UNAVAILABLE. */
C10C_API c10c_status c10c_cuda_current_device(c10c_device_index *out);

/* Makes index the calling thread's current device and its primary context current
 * (torch.cuda.set_device: c10's SetDevice, which skips the switch when the thread is already on
 * index, so set_device(0) on a fresh thread makes no context). Errors: C10C_STATUS_UNAVAILABLE;
 * C10C_STATUS_ERROR "CUDA error: invalid device ordinal" for an index outside 0..count-1 (as
 * torch); a driver failure as C10C_STATUS_ERROR "CUDA driver error: <name> (<text>) in <call>". */
C10C_API c10c_status c10c_cuda_set_device(c10c_device_index index);

/* c10's CUDAGuard: makes index current for a scope (c10's ExchangeDevice: its context made
 * current, unless the thread is already on index) and restores the previous device on exit
 * (c10's MaybeSetDevice: that device's context made current only if it exists).
 * A negative index leaves the device as it is (c10's OptionalDeviceGuard with no device).
 * The caller allocates the guard (on its stack, typically) and sets struct_size to
 * sizeof(c10c_cuda_device_guard) before enter, most simply with
 *   c10c_cuda_device_guard guard = C10C_CUDA_DEVICE_GUARD_INIT;
 * (from an FFI: struct_size = the size of the struct as the binding declares it). Fields are only
 * ever appended; struct_size tells the library which ones the caller's struct has. */
typedef struct c10c_cuda_device_guard {
  uint32_t struct_size;       /* sizeof(c10c_cuda_device_guard) in the caller */
  c10c_device_index original; /* -1 when the guard changed nothing */
  c10c_device_index current;
} c10c_cuda_device_guard;

#define C10C_CUDA_DEVICE_GUARD_INIT \
  { (uint32_t)sizeof(c10c_cuda_device_guard), -1, -1 }

/* Errors: C10C_STATUS_NULL_POINTER (guard); C10C_STATUS_INVALID_ARGUMENT for a struct_size smaller
 * than the first version's, 0 included ("c10c_cuda_device_guard.struct_size is 0, smaller than
 * any version of the guard (6); set it to sizeof(c10c_cuda_device_guard)"), the guard left as it
 * was; for enter, as c10c_cuda_set_device (the guard is then inactive and exit is a no-op), even
 * with a negative index when CUDA is unavailable. */
C10C_API c10c_status c10c_cuda_device_guard_enter(c10c_cuda_device_guard *guard,
                                                  c10c_device_index index);
C10C_API c10c_status c10c_cuda_device_guard_exit(c10c_cuda_device_guard *guard);

/* The device's name (cuDeviceGetName) into out (size bytes, NUL-terminated, truncated to fit);
 * index -1: the current device.
 * Errors: C10C_STATUS_NULL_POINTER (out, even with size 0), C10C_STATUS_BUFFER_TOO_SMALL for size
 * 0, C10C_STATUS_ERROR "CUDA error: invalid device ordinal", C10C_STATUS_UNAVAILABLE. */
C10C_API c10c_status c10c_cuda_device_name(char *out, size_t size, c10c_device_index index);

/* Free and total bytes of a device (torch.cuda.mem_get_info; cuMemGetInfo_v2 in its primary
 * context). Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_ERROR "CUDA error: invalid device
 * ordinal" for an index outside 0..count-1 (-1 included: no current-device shorthand here);
 * C10C_STATUS_UNAVAILABLE. */
C10C_API c10c_status c10c_cuda_mem_get_info(int64_t *free_bytes, int64_t *total_bytes,
                                            c10c_device_index index);

/* Waits for all work on a device (torch.cuda.synchronize; cuCtxSynchronize). Errors: as
 * c10c_cuda_mem_get_info. */
C10C_API c10c_status c10c_cuda_synchronize(c10c_device_index index);

/* ---- streams (c10's CUDAStream) ----
 * A CUDA stream is a c10c_stream {device cuda:i, id}. Id 0 is the device's default stream (the
 * driver's legacy default stream). The others come from per-device pools created on first use,
 * 32 streams per priority, handed out round robin, never destroyed (as c10's); their ids follow
 * c10's Note [StreamId assignment]: (index << 5) | (type << 1) | 1, type 1 for priority 0 and 2
 * for higher priorities (negative numbers, as CUDA counts them). Each thread has a current stream
 * per device, the default stream until set. index -1 means the current device.
 * Errors, for every stream argument: C10C_STATUS_INVALID_ARGUMENT "Expected a CUDA stream, got
 * stream 0 on device cpu" for another (or an invalid) device type, "Unrecognized stream ..." for
 * an id that names no stream of this library (external streams are not supported yet), the
 * device checks of c10c_cuda_set_device (index -1: the current device), and
 * C10C_STATUS_UNAVAILABLE; for every out-parameter C10C_STATUS_NULL_POINTER. */

C10C_API c10c_status c10c_cuda_default_stream(c10c_stream *out, c10c_device_index index);

/* A pool stream of priority 0 (normal) or below 0 (high). */
C10C_API c10c_status c10c_cuda_stream_from_pool(c10c_stream *out, int priority,
                                                c10c_device_index index);

C10C_API c10c_status c10c_cuda_current_stream(c10c_stream *out, c10c_device_index index);

/* Makes stream the calling thread's current stream on its device (the current device is not
 * changed, as c10's setCurrentCUDAStream). Errors: the stream's; C10C_STATUS_OUT_OF_MEMORY
 * (the thread's table of current streams, made on its first non-default stream). */
C10C_API c10c_status c10c_cuda_set_current_stream(c10c_stream stream);

/* Whether all work queued on the stream has completed (cuStreamQuery). */
C10C_API c10c_status c10c_cuda_stream_query(bool *done, c10c_stream stream);

/* Waits for the stream's work (cuStreamSynchronize). */
C10C_API c10c_status c10c_cuda_stream_synchronize(c10c_stream stream);

/* The driver's handle (CUstream / cudaStream_t; NULL for the default stream), for interop
 * (DLPack's and __cuda_array_interface__'s stream numbers). Ownership: *out is borrowed, the
 * stream's for the life of the process. */
C10C_API c10c_status c10c_cuda_stream_handle(void **out, c10c_stream stream);

/* Makes a stream, given by its driver handle (NULL: the legacy default stream; any stream of
 * the device, ours or not), wait for the work queued so far on the device's current stream
 * (device -1: the current one): an event recorded there and cuStreamWaitEvent, skipped when it
 * is the current stream itself. DLPack's and __cuda_array_interface__'s producer side (the
 * consumer's stream of __dlpack__(stream=...)). Errors: the device checks, driver errors,
 * C10C_STATUS_UNAVAILABLE. */
C10C_API c10c_status c10c_cuda_wait_current_stream(void *consumer, c10c_device_index device);

/* The stream's priority (0 for the default stream). */
C10C_API c10c_status c10c_cuda_stream_priority(int *out, c10c_stream stream);

/* Configures the CUDA caching allocator with PyTorch's key names, as C10C_ALLOC_CONF (read when
 * the allocator is first used; PYTORCH_CUDA_ALLOC_CONF when C10C_ALLOC_CONF is unset) and
 * torch.cuda.memory._set_allocator_settings:
 * - "max_split_size_mb:N" (N >= 20): blocks of N MiB or more are never split, and reused only by
 *   requests within 20 MiB of their size; on a failed segment allocation such cached blocks are
 *   released first;
 * - "roundup_power2_divisions:N" or "roundup_power2_divisions:[256:1,512:2,>:4]" (powers of
 *   two; 0 too in a list): sizes round up to N steps between powers of two, per interval (in
 *   MiB) for a list;
 * - "garbage_collection_threshold:T" (0 < T < 1): with a memory fraction set, once reserved
 *   memory passes T x the allowed bytes, old unsplit cached blocks are released before new
 *   segments are made;
 * - "expandable_segments:True|False": one growing segment per stream and pool over the driver's
 *   virtual memory management (pages of 2 MiB for the small pool, 20 MiB for the large one, as
 *   PyTorch's, rounded up to a multiple of the driver's minimum allocation granularity where it
 *   is larger; mapped read-write for the device and for every device that can access it, per
 *   cuDeviceCanAccessPeer, as PyTorch grants its peers);
 * - "stream_ordered_reuse:True|False" (not PyTorch's): a cached block of another stream, or a
 *   freed one still waiting for record_stream's events, is reused by making the allocating
 *   stream wait for every stream that may still use it instead of allocating a new segment;
 * - "planning:True|False" (not PyTorch's; ABI 1.1): steps marked by c10c_cuda_allocator_step
 *   are recorded; at a step boundary the requests of the step that ended (those allocated and
 *   freed within it) get an offset plan in one arena, served to the matching requests of the
 *   following steps (other streams made to wait where the plan reuses their memory) where that
 *   reserves no more than the caching allocator alone: the plan's arena, plus what stays
 *   reserved once the cache the step used is released, plus what the caching allocator must add
 *   for the blocks the step leaves alive, must stay below the most the step reserved, else the
 *   plan is declined (plan_declines) and the caching allocator serves on, as without planning.
 *   Requests that do not match go to the caching allocator; a plan that keeps missing is rebuilt
 *   from the last step (dropped after four rebuilds in a row); a step served as planned that
 *   reserves more than the caching allocator would stops planning; a program that leaves the
 *   step gives the arena back, or, with blocks alive in it, to the caching allocator as a
 *   segment. Until the host marks a step, steps are found in the requests: a stretch that
 *   repeats the one before it and ends with as many blocks alive as it began with is a step,
 *   cut where fewest blocks are alive (found from the third step on); such a step is planned
 *   only once it repeats exactly and where its plan fits beside the cache, which stays (the
 *   program may have other phases that use it). Best with expandable_segments:True: blocks a
 *   recorded step keeps (optimizer state) then pin only their pages;
 * - "plan_file:PATH" (not PyTorch's; ABI 1.1): a plan written by c10c_plan_make (python -m
 *   pyc10.replay SNAPSHOT --write-plan PATH), checked when the setting is applied and used
 *   from the next request on its device, across step markers, until its requests run out
 *   (then, with planning:True, online planning takes over) (the path runs to the next comma);
 * - "stitching:True|False" (not PyTorch's; ABI 1.1; with expandable segments): a large request
 *   that no contiguous free range fits, while enough free whole pages are mapped, gets those
 *   physical pages mapped into a new contiguous address range (cached and reused) instead of
 *   new pages;
 * - "backend:native".
 * A setting replaces all earlier ones (segments already made keep their kind).
 * Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_INVALID_ARGUMENT for unknown keys and
 * backends and bad values (PyTorch's messages: "Unrecognized key 'foo' in CUDA allocator
 * config.", "CachingAllocator option max_split_size_mb too small, must be >= 20", "For roundups,
 * the divisions has to be power of 2 ", "garbage_collect_threshold is invalid, set it in (0.0,
 * 1.0)", "Unknown allocator backend, options are native and cudaMallocAsync", ...);
 * C10C_STATUS_NOT_IMPLEMENTED for PyTorch 2.13's options not implemented
 * (max_non_split_rounding_mb, large_segment_size_mb, release_lock_on_cudamalloc, pinned_*,
 * graph_capture_record_stream_reuse, backend:cudaMallocAsync) and for expandable segments over a
 * driver or a device without virtual memory management; C10C_STATUS_UNAVAILABLE. A
 * C10C_ALLOC_CONF that does not parse fails every call that needs the allocator, this one
 * included, with its status and message. */
C10C_API c10c_status c10c_cuda_set_allocator_settings(const char *config);

/* ABI 1.1. Marks a step boundary (the end of one training or inference step, the start of the
 * next) for the caching allocator of device, or of every device for device -1
 * (pyc10.cuda.memory.step()). With planning:True it drives the planner (see
 * c10c_cuda_set_allocator_settings); without it, it does nothing. Errors: the device checks
 * (C10C_STATUS_ERROR "CUDA error: invalid device ordinal" for an ordinal the machine does not
 * have, as c10c_cuda_set_memory_fraction's), C10C_STATUS_OUT_OF_MEMORY (host: the step is still
 * marked, no plan is made), C10C_STATUS_UNAVAILABLE. */
C10C_API c10c_status c10c_cuda_allocator_step(c10c_device_index device);

/* torch.cuda.memory._record_memory_history(max_entries=N): keeps the last max_entries
 * allocator events per device (alloc, free_requested, free_completed, segment_alloc,
 * segment_free, segment_map, segment_unmap, oom) for c10c_cuda_memory_snapshot; 0 stops and
 * drops them. Errors: C10C_STATUS_INVALID_ARGUMENT above 2^24 entries, C10C_STATUS_OUT_OF_MEMORY,
 * C10C_STATUS_UNAVAILABLE. */
C10C_API c10c_status c10c_cuda_record_memory_history(size_t max_entries);

/* torch.cuda.memory_snapshot() / torch.cuda.memory._snapshot() as JSON text:
 * {"segments": [{"device", "address", "total_size", "allocated_size", "active_size",
 * "requested_size", "stream", "segment_type": "small"|"large", "segment_pool_id",
 * "is_expandable", "frames", "blocks": [{"address", "size", "requested_size", "state":
 * "active_allocated"|"active_pending_free"|"inactive", "frames"}]}], "device_traces": [[{"action",
 * "addr", "size", "stream", "time_us", "frames"}], ...], "allocator_settings": {...}} (an
 * expandable segment is listed once per mapped range, as PyTorch does; not PyTorch's: a plan's
 * arena is a segment of "segment_type": "plan", and a stitched range one of "segment_type":
 * "stitched" with "stitched_pages" [[address, size], ...], the pages it maps, which its source
 * segments then leave out). Writes at most out_size
 * bytes including the NUL; *out_len (if not NULL) receives the length without it. Errors:
 * C10C_STATUS_NULL_POINTER, C10C_STATUS_BUFFER_TOO_SMALL (call again with *out_len + 1 bytes),
 * C10C_STATUS_OUT_OF_MEMORY, C10C_STATUS_UNAVAILABLE. */
C10C_API c10c_status c10c_cuda_memory_snapshot(char *out, size_t out_size, size_t *out_len);

/* torch.cuda.set_per_process_memory_fraction: the caching allocator reserves at most fraction
 * of the device's total memory (device -1: the current one); beyond it allocations fail as if
 * the device were full (after releasing the cache and retrying). Errors:
 * C10C_STATUS_INVALID_ARGUMENT "Invalid fraction value: 2.0. Allowed range: 0~1" (torch's
 * message, the value as Python prints it; NaN too), the device checks, C10C_STATUS_UNAVAILABLE. */
C10C_API c10c_status c10c_cuda_set_memory_fraction(double fraction, c10c_device_index device);

/* c10's CUDACachingAllocator::recordStream(DataPtr, stream): the memory of data (from the CUDA
 * caching allocator: c10c_allocator_allocate, or a CUDA storage's c10c_storage_data_ptr) is also
 * used by work on stream, so the allocator does not reuse it after it is freed until the work
 * queued on stream by then has completed (an event recorded at free time, queried at later
 * allocations). A no-op for memory the caching allocator did not make (another allocator's, a
 * DLPack import). Errors: C10C_STATUS_NULL_POINTER; the stream checks above;
 * C10C_STATUS_INVALID_ARGUMENT "record_stream: the memory is on cuda:1, the stream on cuda:0"
 * for memory of another device. */
C10C_API c10c_status c10c_cuda_record_stream(const c10c_data_ptr *data, c10c_stream stream);

/* torch's Tensor.record_stream (ATen's record_stream_cuda): c10c_cuda_record_stream on the data
 * pointer of the tensor's storage. Errors: C10C_STATUS_NULL_POINTER; the stream checks above;
 * C10C_STATUS_INVALID_ARGUMENT "record_stream: the tensor is on CPU device -1, the stream on
 * cuda:0" when the tensor is not on the stream's device. */
C10C_API c10c_status c10c_tensor_record_stream(const c10c_tensor *tensor, c10c_stream stream);

/* ---- PyTorch's pluggable CUDA allocator (ABI 1.1) ----
 *
 * torch.cuda.memory.CUDAPluggableAllocator(path_to_libc10c, "c10c_cuda_pluggable_malloc",
 * "c10c_cuda_pluggable_free") serves every CUDA allocation of a PyTorch program from libc10c's
 * CUDA caching allocator (its settings: c10c_cuda_set_allocator_settings, C10C_ALLOC_CONF or
 * PYTORCH_CUDA_ALLOC_CONF), on each device's primary context, which PyTorch's runtime uses too.
 * The signatures are PyTorch's, so failures come back as NULL or are only recorded:
 * c10c_last_error_message() of the calling thread says why. pyc10.allocators.torch installs them
 * and gives what PyTorch cannot ask a pluggable allocator for (statistics, snapshots). */

/* Allocates size bytes on device for work on stream (a CUstream; NULL or cudaStreamLegacy for
 * the legacy default stream). Blocks are reused on the stream they were allocated for, as
 * PyTorch's allocator reuses them. Returns NULL for 0 bytes (as PyTorch's allocator, without an
 * error) and on failure: out of memory after releasing the cache and retrying (PyTorch's "CUDA
 * out of memory. Tried to allocate ..." message), an invalid device ("CUDA error: invalid device
 * ordinal ..."), a stream handle that is not an aligned pointer, CUDA unavailable, a malformed
 * C10C_ALLOC_CONF. Ownership: free the block with c10c_cuda_pluggable_free. */
C10C_API void *c10c_cuda_pluggable_malloc(size_t size, int device, void *stream);

/* Frees a block of c10c_cuda_pluggable_malloc (NULL: nothing). size, device and stream are
 * PyTorch's record of the allocation and are not needed: the allocator knows its blocks. Work
 * queued on the allocation stream before the free may still use the block; streams it was
 * recorded for (c10c_cuda_pluggable_record_stream) hold it until their work is done. An address
 * the allocator did not allocate is refused (nothing freed) with "free of 0x..., which the
 * caching allocator did not allocate ...". */
C10C_API void c10c_cuda_pluggable_free(void *ptr, size_t size, int device, void *stream);

/* PyTorch's record_stream hook for pluggable allocators (CUDAPluggableAllocator's
 * set_record_stream_fn signature, void(void *ptr, cudaStream_t stream)): the block at ptr (the
 * address c10c_cuda_pluggable_malloc returned: a tensor's untyped_storage().data_ptr()) is also
 * used by work on stream, so it is not reused after its free until that work is done.
 * Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_INVALID_ARGUMENT "record_stream of 0x..., which
 * the caching allocator did not allocate" and for a stream handle that is not an aligned
 * pointer; C10C_STATUS_OUT_OF_MEMORY (host). */
C10C_API c10c_status c10c_cuda_pluggable_record_stream(void *ptr, void *stream);

/* ---- events (c10's CUDAEvent: created on first record, on the recording stream's device) ---- */

typedef struct c10c_cuda_event c10c_cuda_event;

/* A new event (no driver object until recorded). enable_timing as torch.cuda.Event.
 * Ownership: *out is owned (c10c_cuda_event_free).
 * Errors: C10C_STATUS_NULL_POINTER, C10C_STATUS_OUT_OF_MEMORY. */
C10C_API c10c_status c10c_cuda_event_new(c10c_cuda_event **out, bool enable_timing);

/* Destroys the event (and its driver object; in a forked child only the event: the driver is
 * not called there). NULL is ignored. */
C10C_API void c10c_cuda_event_free(c10c_cuda_event *event);

/* Records the work queued on stream so far. An event belongs to the device it was first
 * recorded on: C10C_STATUS_ERROR "Event device 0 does not match recording stream's device 1."
 * for another (c10's CUDAEvent::record, a RuntimeError in torch). Errors: that, the stream's,
 * C10C_STATUS_NULL_POINTER. */
C10C_API c10c_status c10c_cuda_event_record(c10c_cuda_event *event, c10c_stream stream);

/* Whether the recorded work has completed (true for a never recorded event, as c10).
 * Errors: C10C_STATUS_NULL_POINTER, C10C_STATUS_UNAVAILABLE (a forked child), driver errors. */
C10C_API c10c_status c10c_cuda_event_query(bool *done, c10c_cuda_event *event);

/* Waits for the recorded work (no-op for a never recorded event). Errors: C10C_STATUS_NULL_POINTER,
 * C10C_STATUS_UNAVAILABLE (a forked child), driver errors. */
C10C_API c10c_status c10c_cuda_event_synchronize(c10c_cuda_event *event);

/* Makes stream wait for the recorded work before its later work (cuStreamWaitEvent; c10's
 * block; no-op for a never recorded event, whose stream is still checked). Errors:
 * C10C_STATUS_NULL_POINTER, the stream's, driver errors. */
C10C_API c10c_status c10c_cuda_event_wait(c10c_cuda_event *event, c10c_stream stream);

/* Milliseconds between two completed events. Errors: C10C_STATUS_NULL_POINTER;
 * C10C_STATUS_INVALID_ARGUMENT "Both events must be created with argument
 * 'enable_timing=True'.", "Both events must be recorded before calculating elapsed time.";
 * C10C_STATUS_ERROR "Both events must be completed before calculating elapsed time." (c10's
 * checks, statuses and messages); C10C_STATUS_UNAVAILABLE (a forked child); driver errors. */
C10C_API c10c_status c10c_cuda_event_elapsed_time(float *ms, c10c_cuda_event *start,
                                                  c10c_cuda_event *end);

C10C_END_DECLS

#endif /* C10C_CUDA_H */
