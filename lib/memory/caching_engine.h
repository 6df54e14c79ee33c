/* The device-agnostic caching engine of PyTorch's CUDACachingAllocator:
 * host bookkeeping over (address, size) ranges that a backend allocates in segments. Per device:
 * two pools (blocks <= 1 MiB packed in 2 MiB segments; larger ones in 20 MiB segments or their own
 * 2 MiB-rounded segment), best fit per stream, splitting and coalescing inside a segment, and on a
 * failed segment allocation the cached free segments are released and the allocation retried.
 * Statistics are PyTorch's DeviceStats (c10c_memory_stats). Thread-safe (one lock per engine).
 *
 * record_stream as PyTorch's: a block used on other streams returns to its pool only once
 * events recorded on those streams at free time have completed (queried at every malloc,
 * waited for before the cache is released). A block for which an event could not be recorded
 * is held until the cache is released over a backend that can synchronize the device (which it
 * then does), or until the engine is destroyed.
 *
 * max_split_size (with the release of oversize cached blocks before the full release on a
 * failed segment allocation), roundup_power2_divisions (per interval), garbage_collection_threshold
 * with a per-device limit on reserved bytes (set_per_process_memory_fraction), and expandable
 * segments (one address range per stream and pool, pages mapped as it grows and unmapped when
 * released) as PyTorch's (c10c__engine_configure). Beyond PyTorch: stream-ordered reuse (a free
 * block of another stream, or one waiting for record_stream events, is handed to the allocating
 * stream after making it wait for every stream that may still use it, instead of mallocing a
 * segment; the block stays the memory of its segment's stream, as every block of a segment
 * does, and the allocating stream is noted as a use, as record_stream would).
 *
 * Planned mode (planning:True, plan_file:PATH; plan_engine.h): steps marked by
 * c10c__engine_step are recorded and served from an offset plan in one arena, a segment of its
 * own ("segment_type": "plan" in snapshots), where that reserves no more than the engine alone;
 * what the plan does not match stays the engine's.
 * Stitching (stitching:True, with expandable segments; GMLake's): a large request that no free
 * block fits, which would map new pages, is served instead from free whole pages of its stream's
 * expandable segments, mapped (map_existing) in address order into a new address range of the
 * request's size rounded up to pages (a stitched range: one block, never split). The source pages
 * are lent: taken out of the pool, as blocks of their segment that nothing else may use, until
 * the range is dissolved. A freed stitched range is cached, and reused by a request of its stream
 * needing as many pages (the smallest that fits); it is dissolved (alias unmapped, pages given
 * back to their free blocks and coalesced) when its pages are needed: before new pages are mapped
 * for a request of its stream, when stitching needs more pages than the free blocks have, when
 * the cache is released (empty_cache, the retry after a failed allocation) and at destroy.
 * Stitching maps no new memory: reserved_bytes counts the source pages in their segments and
 * nothing for the range (whose address space is stitched_bytes; num_stitches counts the ranges
 * made); the segment statistics do not count stitched ranges. Partial pages are never lent.
 *
 * A snapshot of segments and blocks (torch.cuda.memory_snapshot()) as JSON, with a bounded
 * trace of allocator events per device (torch.cuda.memory._record_memory_history). */
#ifndef C10C_CACHING_ENGINE_H
#define C10C_CACHING_ENGINE_H

#include "c10c/allocator.h"
#include "alloc_config.h"
#include "c10c/stream.h"
#include "internal.h"

/* Where segments come from. malloc returns C10C_STATUS_OUT_OF_MEMORY when the device is full
 * (the engine then frees its cache and retries once); free cannot fail. */
typedef struct c10c__segment_backend {
  c10c_status (*malloc)(void *self, int device, size_t size, void **out);
  void (*free)(void *self, int device, void *ptr, size_t size);
  /* Optional: the device's free and total bytes, for the out-of-memory message. */
  c10c_status (*mem_info)(void *self, int device, size_t *free_bytes, size_t *total_bytes);
  /* For record_stream (all four, or none): an event recorded on a stream of the device now,
   * whether it completed, waiting for it, and destroying it. */
  c10c_status (*event_record)(void *self, int device, c10c_stream_id stream, void **event);
  c10c_status (*event_query)(void *self, void *event, bool *done);
  void (*event_synchronize)(void *self, void *event);
  void (*event_destroy)(void *self, void *event);
  void *self;
  /* For expandable segments (all four, or none): reserving address space (no memory), mapping
   * size bytes of new physical memory at ptr inside a reservation (returns a handle;
   * C10C_STATUS_OUT_OF_MEMORY when the device is full), unmapping and freeing them (the engine
   * has waited for the device's work first), releasing the reservation. */
  c10c_status (*reserve)(void *self, int device, size_t size, void **base);
  c10c_status (*map)(void *self, int device, void *ptr, size_t size, void **handle);
  void (*unmap)(void *self, int device, void *ptr, size_t size, void *handle);
  void (*unreserve)(void *self, int device, void *base, size_t size);
  /* For stream-ordered reuse (with the event entries): makes stream wait for event. */
  c10c_status (*stream_wait)(void *self, int device, c10c_stream_id stream, void *event);
  /* Optional: waits for all work on the device (before pages are unmapped). */
  void (*synchronize)(void *self, int device);
  /* Optional, with the expandable entries: the mapping granularity of the device's memory;
   * expandable pages (PyTorch's 2 MiB / 20 MiB) are rounded up to a multiple of it. */
  c10c_status (*granularity)(void *self, int device, size_t *out);
  /* For stitching (both, or none; with the expandable entries): mapping size bytes of the
   * physical memory behind handle (a page mapped by map, still mapped where map put it) at ptr
   * inside another reservation, accessible as map makes its pages; and unmapping such an
   * alias without freeing the memory (the engine has waited for the device's work first). */
  c10c_status (*map_existing)(void *self, int device, void *ptr, size_t size, void *handle);
  void (*unmap_existing)(void *self, int device, void *ptr, size_t size);
} c10c__segment_backend;

typedef struct c10c__engine c10c__engine;

/* PyTorch's constants (c10/cuda/CUDACachingAllocator.cpp). */
enum {
  C10C__MIN_BLOCK = 512,
  C10C__SMALL_SIZE = 1 << 20,
  C10C__SMALL_BUFFER = 2 << 20,
  C10C__MIN_LARGE_ALLOC = 10 << 20,
  C10C__LARGE_BUFFER = 20 << 20,
  C10C__ROUND_LARGE = 2 << 20
};

c10c_status c10c__engine_new(c10c__engine **out, c10c__segment_backend backend, int devices);
/* Releases every segment, mapping and reservation and destroys every event (allocated blocks
 * and blocks waiting for events included: the caller promises no more work on them). */
void c10c__engine_destroy(c10c__engine *engine);

/* A block of at least size bytes on device for work on stream. size 0 gives NULL. On failure
 * C10C_STATUS_OUT_OF_MEMORY with PyTorch's first sentence ("Tried to allocate ...") and the
 * engine's figures. */
c10c_status c10c__engine_malloc(c10c__engine *engine, int device, size_t size,
                                c10c_stream_id stream, void **out);

/* Returns a block to its pool (coalescing with free neighbours). Unknown pointers are an error. */
c10c_status c10c__engine_free(c10c__engine *engine, void *ptr);

/* Marks the allocated block at ptr as used on stream too (torch's Tensor.record_stream). Errors:
 * C10C_STATUS_INVALID_ARGUMENT for a pointer the engine did not allocate. */
c10c_status c10c__engine_record_stream(c10c__engine *engine, void *ptr, c10c_stream_id stream);

/* Where an allocated block lies, for sharing it with another process (c10's shareIpcHandle):
 * a block of a fixed segment lies at offset in the segment [base, base + size); a block of an
 * expandable segment at offset in the whole pages that cover it, [base, base + size), each page
 * `page` bytes, whose backend handles visit is given in address order (under the engine's lock:
 * visit must not call the engine; a non-OK status stops and is returned). */
typedef struct c10c__block_share {
  char *base;
  size_t size, offset, block_size, page;
  int device;
  bool expandable;
} c10c__block_share;

/* Errors: C10C_STATUS_INVALID_ARGUMENT for a pointer that is not an allocated block's start; a
 * visit's status. */
c10c_status c10c__engine_share(c10c__engine *engine, const void *ptr, c10c__block_share *out,
                               c10c_status (*visit)(void *ctx, void *handle), void *ctx);

/* Releases every cached segment that holds no allocated block. */
void c10c__engine_empty_cache(c10c__engine *engine);

/* Applies the settings from now on (segments already made keep their kind); a plan_file is read
 * and checked here. Errors: C10C_STATUS_NOT_IMPLEMENTED for expandable segments, stream-ordered
 * reuse or stitching over a backend without the entry points they need, and for stitching
 * without expandable segments; a plan file's errors (c10c__plan_read's, and
 * C10C_STATUS_INVALID_ARGUMENT for a plan of a device the engine does not have);
 * C10C_STATUS_OUT_OF_MEMORY (host); nothing changes then. */
c10c_status c10c__engine_configure(c10c__engine *engine, const c10c__device_alloc_config *config);

/* Marks a step boundary on device (-1: every device) for the planned mode (plan_engine.h);
 * without planning it does nothing. Errors: C10C_STATUS_ERROR for a device the engine does not
 * have; C10C_STATUS_OUT_OF_MEMORY (host) when a plan could not be made (the engine serves on). */
c10c_status c10c__engine_step(c10c__engine *engine, int device);

/* Keeps the last max_entries allocator events per device for snapshots (0: stop and drop them). */
c10c_status c10c__engine_record_history(c10c__engine *engine, size_t max_entries);

/* torch.cuda.memory_snapshot() as JSON: {"segments": [...], "device_traces": [[...], ...],
 * "allocator_settings": {...}}. *out is from c10c__malloc (c10c__free it); *len its length.
 * An expandable segment appears as one entry per run of its mapped blocks; pages lent to a
 * stitched range are not in their segment's entries (they cut the run, as unmapped ranges do)
 * but in the stitched range's own entry: "segment_type": "stitched", "is_expandable": true, its
 * block, and "stitched_pages": [[address, size], ...], the source ranges in the order they are
 * mapped. So every mapped byte is in exactly one entry: the entries' total_size add up to
 * reserved_bytes. */
c10c_status c10c__engine_snapshot(c10c__engine *engine, char **out, size_t *len);

/* fraction × total bytes as a size, the product rounded to a double first: x87 (i686) keeps 80
 * bits and would truncate to another size, and limits must be the same on every target. */
static inline size_t c10c__fraction_of(double fraction, uint64_t total) {
  return (size_t)(double)(fraction * (double)total);
}

/* Caps the bytes the device's segments may reserve (set_per_process_memory_fraction): a
 * segment past it is treated as the device being full (cache released, retried, then OOM). */
void c10c__engine_set_limit(c10c__engine *engine, int device, size_t bytes);

/* Sets every statistic's peak to its current value (torch.cuda.reset_peak_memory_stats). */
void c10c__engine_reset_peaks(c10c__engine *engine, int device);

/* The device's statistics (struct_size set by the caller). */
c10c_status c10c__engine_stats(c10c__engine *engine, int device, c10c_memory_stats *out);

/* Checks the engine's invariants (for tests): every segment covered by its blocks in address
 * order without gaps; no two neighbouring free mapped blocks (coalescing); free mapped blocks
 * exactly the pool's members and in their bins, unmapped ranges only in expandable segments
 * and page aligned; allocated blocks in the address table; reserved, allocated, active,
 * segment and inactive_split statistics equal to what the blocks add up to; stitched ranges:
 * each one block over whole pages, cached exactly when free, its pages lent by blocks of their
 * source segments (not in the pool, lent to that range only, whose page handles are the range's
 * in order), as many bytes lent as stitched, and stitched_bytes equal to them. Returns false with
 * a description. */
bool c10c__engine_validate(c10c__engine *engine, char *msg, size_t msg_size);

/* torch's format_size ("20.00 MiB"), for messages. */
void c10c__format_size(char *out, size_t size, double bytes);

/* PyTorch's round_size and get_allocation_size, for tests. */
size_t c10c__engine_round_size(size_t size);
size_t c10c__engine_round_size_with(size_t size, size_t roundup_power2_divisions);
/* The divisions PyTorch's roundup_power2_divisions(size) picks from a per-interval table. */
size_t c10c__engine_divisions_for(const size_t *divisions, size_t size);
size_t c10c__engine_segment_size(size_t rounded);

/* For white-box tests: the engine of a simulated device (lib/memory/sim_device.c) and the CUDA
 * caching allocator's (lib/cuda/cuda_allocator.c; made on first use, as an allocation would). */
struct c10c_sim_device;
c10c__engine *c10c__sim_device_engine(struct c10c_sim_device *device);
c10c_status c10c__cuda_caching_engine(c10c__engine **out);

#endif /* C10C_CACHING_ENGINE_H */
