/* libc10c: pinned (page-locked) host memory for CUDA, PyTorch's CachingHostAllocator.
 *
 * Blocks come from the driver's cuMemHostAlloc (CU_MEMHOSTALLOC_PORTABLE: usable from every
 * device's context), their size rounded up to the next power of two, and are cached by size when
 * freed. A block used by CUDA work on a stream (c10c_cuda_host_record_stream, done by the
 * non-blocking copies below) gets, when it is freed, one event per such stream; it is handed out
 * again only once those events have completed (checked at each allocation, as PyTorch's
 * process_events). c10c_cuda_host_empty_cache returns the cached blocks whose events completed to
 * the driver. Statistics have the shape of torch.cuda.host_memory_stats().
 *
 * Every call needs a usable driver (C10C_STATUS_UNAVAILABLE with the reason otherwise, as the
 * rest of include/c10c/cuda.h), except c10c_cuda_host_is_pinned, which is false then. */
#ifndef C10C_CUDA_HOST_H
#define C10C_CUDA_HOST_H

#include "allocator.h"
#include "common.h"
#include "stream.h"
#include "tensor.h"

C10C_BEGIN_DECLS

/* PyTorch's DurationStat: microseconds spent in driver calls. avg is total / count (0 when
 * count is 0); min is 0 until the first call. */
typedef struct c10c_duration_stat {
  int64_t total;
  int64_t max;
  int64_t min;
  int64_t count;
} c10c_duration_stat;

/* PyTorch's HostStats, keys as in torch.cuda.host_memory_stats(): allocations and
 * allocated_bytes count the blocks owned by the allocator (handed out or cached, rounded sizes);
 * active_requests and active_bytes the blocks handed out and not yet reusable (a freed block
 * stays active until its streams' events complete); num_host_alloc / num_host_free count
 * cuMemHostAlloc / cuMemFreeHost calls. Fields are only ever appended; struct_size says how
 * many the caller's struct holds. */
typedef struct c10c_cuda_host_stats {
  uint32_t struct_size; /* set by the caller to sizeof(c10c_cuda_host_stats) */
  uint32_t reserved0;
  c10c_stat allocations;
  c10c_stat allocated_bytes;
  c10c_stat active_requests;
  c10c_stat active_bytes;
  int64_t num_host_alloc;
  int64_t num_host_free;
  c10c_duration_stat host_alloc_time;
  c10c_duration_stat host_free_time;
} c10c_cuda_host_stats;

/* The pinned host allocator as an allocator handle for CPU storages ("cuda_host_caching"):
 * storages made with it are pinned. Ownership: borrowed, lives for the whole process (a built-in
 * allocator: retain and release do nothing to it); NULL never. Errors: none here; its allocate
 * fails with C10C_STATUS_UNAVAILABLE without a driver. */
C10C_API c10c_allocator *c10c_cuda_host_allocator(void);

/* Allocates nbytes of pinned memory (0: *out NULL). Ownership: free *out with
 * c10c_cuda_host_free. Errors: C10C_STATUS_NULL_POINTER (out);
 * C10C_STATUS_OUT_OF_MEMORY when the driver refuses page-locked memory ("CUDA out of memory
 * while pinning N bytes of host memory (a block of M bytes): ..." with the driver's error). */
C10C_API c10c_status c10c_cuda_host_alloc(void **out, size_t nbytes);

/* Frees a block of c10c_cuda_host_alloc (NULL: nothing). Errors: C10C_STATUS_INVALID_ARGUMENT
 * "not a block of the pinned host allocator" (nothing is freed); driver errors recording the
 * events (the block is then kept, never reused). */
C10C_API c10c_status c10c_cuda_host_free(void *ptr);

/* Whether ptr points into a live (handed out) block of the pinned host allocator. */
C10C_API bool c10c_cuda_host_is_pinned(const void *ptr);

/* Marks the block holding ptr as used by work queued on stream (PyTorch's
 * CachingHostAllocator_recordEvent): when freed it is not reused before that work completes.
 * Errors: C10C_STATUS_INVALID_ARGUMENT (ptr not in a live block; a stream that is not CUDA);
 * the stream's own errors. */
C10C_API c10c_status c10c_cuda_host_record_stream(const void *ptr, c10c_stream stream);

/* Returns the cached blocks whose events have completed to the driver (cuMemFreeHost). */
C10C_API c10c_status c10c_cuda_host_empty_cache(void);

/* Fills *out. Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_INVALID_ARGUMENT for a struct_size
 * smaller than the first version's. */
C10C_API c10c_status c10c_cuda_host_get_stats(c10c_cuda_host_stats *out);

/* Sets every peak to its current value (torch.cuda.reset_peak_host_memory_stats). */
C10C_API c10c_status c10c_cuda_host_reset_peak_stats(void);

/* Zeroes the cumulative amounts, the counters and the durations
 * (torch.cuda.reset_accumulated_host_memory_stats). */
C10C_API c10c_status c10c_cuda_host_reset_accumulated_stats(void);

/* copy_(src, non_blocking): as c10c_tensor_copy_, but with non_blocking true a copy of dense
 * bytes between a CUDA tensor and a pinned CPU tensor is queued on the CUDA device's current
 * stream and returns at once (the host block is recorded on that stream so it is not reused
 * before the copy completes, as torch's copy_). With pageable host memory, or non_blocking
 * false, the copy is synchronous (torch does the same). Errors: c10c_tensor_copy_'s. */
C10C_API c10c_status c10c_tensor_copy_nonblocking_(c10c_tensor *dst, const c10c_tensor *src,
                                                   bool non_blocking);

C10C_END_DECLS

#endif /* C10C_CUDA_HOST_H */
