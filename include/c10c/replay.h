/* libc10c: a simulated device for replaying allocation traces.
 *
 * The CUDA caching allocator's engine (PyTorch's pools, rounding, segment sizes, best fit per
 * stream, splitting, coalescing, release-and-retry, expandable segments) over a device that
 * exists only as bookkeeping: addresses are fabricated, no memory is touched and no driver is
 * loaded, so traces of tens of GiB replay on any machine (python -m pyc10.replay). Segments (and
 * expandable reservations) get 2 MiB aligned address ranges with a 2 MiB gap after each, above
 * the last one (or below it with C10C_SIM_DESCENDING), as the stand-in driver's fake-address
 * mode hands them out, from an address space of exbibytes on a 64-bit host (reservations given
 * back are reused once it runs out), so that only the capacity, which is enforced, can make an
 * allocation fail. One stream id names one stream; there is no work on streams, so a freed
 * block is reusable at once, and events complete when they are recorded (stream-ordered reuse
 * and plans over several streams work as over a driver). Not thread-safe per device object.
 */
#ifndef C10C_REPLAY_H
#define C10C_REPLAY_H

#include "common.h"
#include "status.h"

C10C_BEGIN_DECLS

typedef struct c10c_sim_device c10c_sim_device;

/* Flags of c10c_sim_device_new. */
enum { C10C_SIM_DESCENDING = 1 /* each new address range below the last */ };

/* A simulated device's figures. struct_size set by the caller to sizeof(c10c_sim_device_stats);
 * fields are only ever appended. */
typedef struct c10c_sim_device_stats {
  uint32_t struct_size;
  uint32_t reserved0;
  int64_t device_mallocs; /* fixed segments allocated (cudaMalloc) */
  int64_t device_frees;   /* fixed segments freed (cudaFree) */
  int64_t maps;           /* expandable-segment maps: runs of pages mapped at once (PyTorch's
                           * segment_map events) */
  int64_t unmaps;         /* runs of pages unmapped at once (segment_unmap events) */
  int64_t reserved;       /* bytes in segments and mapped pages now */
  int64_t peak_reserved;  /* since creation or c10c_sim_device_reset_peaks */
  int64_t allocated;      /* bytes of allocated blocks now */
  int64_t peak_allocated; /* since creation or c10c_sim_device_reset_peaks */
  int64_t num_ooms;       /* allocations that failed for want of memory */
  uint64_t capacity;      /* the device's bytes */
  /* ABI 1.1: planning and stitching (c10c_memory_stats' fields of the same names). */
  int64_t plan_arena_bytes;
  int64_t plan_served;
  int64_t plan_fallbacks;
  int64_t plan_rebuilds;
  int64_t plan_drops;
  int64_t num_stitches;
  int64_t stitched_bytes; /* mapped into stitched ranges now */
  int64_t peak_stitched_bytes;
  int64_t plan_declines; /* c10c_memory_stats' field of that name */
} c10c_sim_device_stats;

/* A simulated device of capacity bytes with the caching allocator configured by settings (the
 * syntax and checks of PYTORCH_CUDA_ALLOC_CONF / c10c_cuda_set_allocator_settings; NULL or ""
 * for the defaults; read during the call only, not kept) and flags (0 or C10C_SIM_DESCENDING).
 * Ownership: *out is the caller's, freed with c10c_sim_device_destroy. Errors:
 * C10C_STATUS_NULL_POINTER (out); C10C_STATUS_INVALID_ARGUMENT for capacity 0, unknown flags, and
 * settings that do not parse (PyTorch's messages, e.g. "Unrecognized key 'foo' in CUDA allocator
 * config."); C10C_STATUS_NOT_IMPLEMENTED for PyTorch's options the engine does not implement;
 * C10C_STATUS_OUT_OF_MEMORY (host). */
C10C_API c10c_status c10c_sim_device_new(c10c_sim_device **out, uint64_t capacity,
                                         const char *settings, uint32_t flags);

/* Destroys the device (every block, allocated or cached, with it). NULL does nothing. */
C10C_API void c10c_sim_device_destroy(c10c_sim_device *device);

/* A block of at least size bytes for work on stream; *out_address its fabricated address (0 for
 * size 0). Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_OUT_OF_MEMORY with PyTorch's message
 * ("Tried to allocate 2.00 GiB. GPU 0 has a total capacity of ...") when the device is full
 * after releasing the cache. */
C10C_API c10c_status c10c_sim_device_malloc(uint64_t *out_address, c10c_sim_device *device,
                                            size_t size, int64_t stream);

/* Frees the block at address. 0 does nothing. Errors: C10C_STATUS_NULL_POINTER;
 * C10C_STATUS_INVALID_ARGUMENT for an address the device did not hand out or already freed. */
C10C_API c10c_status c10c_sim_device_free(c10c_sim_device *device, uint64_t address);

/* Releases every cached segment that holds no allocated block (torch.cuda.empty_cache). Errors:
 * C10C_STATUS_NULL_POINTER. */
C10C_API c10c_status c10c_sim_device_empty_cache(c10c_sim_device *device);

/* Applies settings (as c10c_sim_device_new's) from now on; segments already made keep their kind
 * (c10c_cuda_set_allocator_settings). A replay rebuilds the recorded state under the recorded
 * settings, then applies the ones to try. Errors: those of c10c_sim_device_new's settings; on an
 * error nothing changes. */
C10C_API c10c_status c10c_sim_device_configure(c10c_sim_device *device, const char *settings);

/* torch.cuda.set_per_process_memory_fraction(fraction): the segments may reserve at most
 * fraction x capacity bytes (past it the device counts as full: cache released, retried, then
 * out of memory), which also makes garbage_collection_threshold act, as PyTorch's. Errors:
 * C10C_STATUS_NULL_POINTER; C10C_STATUS_INVALID_ARGUMENT outside [0, 1] (PyTorch's "Invalid
 * fraction value: 1.5. Allowed range: 0~1"). */
C10C_API c10c_status c10c_sim_device_set_memory_fraction(c10c_sim_device *device, double fraction);

/* Sets the peaks to the current values. Errors: C10C_STATUS_NULL_POINTER. */
C10C_API c10c_status c10c_sim_device_reset_peaks(c10c_sim_device *device);

/* The device's figures. Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_INVALID_ARGUMENT for a
 * struct_size smaller than the first version's. */
C10C_API c10c_status c10c_sim_device_get_stats(c10c_sim_device_stats *out, c10c_sim_device *device);

/* ABI 1.1. Marks a step boundary (c10c_cuda_allocator_step on the simulated device): with
 * planning:True the device records each step's requests, makes an offset plan from a recorded
 * step at the next boundary and serves the following steps from it. Without planning it does
 * nothing. Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_OUT_OF_MEMORY (host). */
C10C_API c10c_status c10c_sim_device_step(c10c_sim_device *device);

/* ABI 1.1. An offline memory plan: count requests, request i of sizes[i] bytes on stream
 * streams[i] (any ids: a plan names streams by order of first use), allocated at time begins[i]
 * and freed at time ends[i] (UINT64_MAX: never), times on one clock of any increasing numbers
 * (a trace's event indices; a free at the time of an allocation happens before it). Each request
 * gets an offset in one arena so that no two requests whose lifetimes overlap overlap in bytes,
 * with the arena as small as the planner finds (at least the peak of live bytes, each rounded up
 * to 512). Writes *out_arena_bytes (a multiple of 2 MiB), out_offsets[i] when out_offsets is not
 * NULL (UINT64_MAX for a request the plan leaves to the caching allocator: size 0, or one of
 * more than 64 streams), and, when path is not NULL, the plan file that plan_file:PATH reads
 * (for device). Sizes, streams and times are copied; nothing is kept. Errors:
 * C10C_STATUS_NULL_POINTER (out_arena_bytes; an array with count > 0); C10C_STATUS_INVALID_ARGUMENT
 * for ends[i] < begins[i], begins[i] == UINT64_MAX, a device below 0, or more than 2^31
 * requests;
 * C10C_STATUS_OUT_OF_MEMORY (host); C10C_STATUS_ERROR when the file cannot be written (the
 * system's message). */
C10C_API c10c_status c10c_plan_make(uint64_t *out_arena_bytes, uint64_t *out_offsets,
                                    const char *path, int32_t device, size_t count,
                                    const uint64_t *sizes, const int64_t *streams,
                                    const uint64_t *begins, const uint64_t *ends);

C10C_END_DECLS

#endif /* C10C_REPLAY_H */
