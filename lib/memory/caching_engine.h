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
typedef struct c10c__plan_hooks c10c__plan_hooks; /* below */

/* PyTorch's constants (c10/cuda/CUDACachingAllocator.cpp). */
enum {
  C10C__MIN_BLOCK = 512,
  C10C__SMALL_SIZE = 1 << 20,
  C10C__SMALL_BUFFER = 2 << 20,
  C10C__MIN_LARGE_ALLOC = 10 << 20,
  C10C__LARGE_BUFFER = 20 << 20,
  C10C__ROUND_LARGE = 2 << 20
};

/* An engine over backend for devices devices. plan: the planned mode's hooks (plan_engine.h's
 * c10c__plan_engine_hooks), NULL for an engine without one (planning and plan_file settings
 * are refused then). Errors: C10C_STATUS_OUT_OF_MEMORY. */
c10c_status c10c__engine_new(c10c__engine **out, c10c__segment_backend backend, int devices,
                             const c10c__plan_hooks *plan);
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

/* ---- the planned mode's hooks (plan_engine.h; the engine's maker hands them over) ---- */

typedef struct c10c__plan_state c10c__plan_state;
struct c10c__plan;

/* Every hook runs under the engine's lock. */
struct c10c__plan_hooks {
  /* A device's state (host memory only; nothing planned yet). Errors:
   * C10C_STATUS_OUT_OF_MEMORY. */
  c10c_status (*state_new)(c10c__plan_state **out, c10c__engine *engine, int device);
  /* Destroys events and the arena (live planned blocks with it). NULL does nothing. */
  void (*state_destroy)(c10c__plan_state *ps);
  /* Applies the settings: planning on or off, and file (owned from now on; NULL: none) to
   * serve from the next request (once the arena is free of earlier blocks). Cannot fail: what
   * needs host or device memory and cannot get it is dropped (plan_drops). */
  void (*configure)(c10c__plan_state *ps, bool planning, struct c10c__plan *file);
  /* A request of size (> 0) bytes on stream: true with *out when served from the plan; else
   * false and *tag (0: none) is what the engine keeps with its block for record_free, or hands
   * back to unrecord if it cannot serve the request either. */
  bool (*malloc)(c10c__plan_state *ps, size_t size, c10c_stream_id stream, void **out,
                 uint64_t *tag);
  void (*unrecord)(c10c__plan_state *ps, uint64_t tag);
  /* The engine's block recorded under tag (0: none), of a request of `requested` bytes on
   * stream, was freed: the end of its request, or, for a block of an earlier step, room the
   * next step's engine requests may take. */
  void (*record_free)(c10c__plan_state *ps, uint64_t tag, uint64_t requested,
                      c10c_stream_id stream);
  /* The engine is about to give bytes back (empty_cache, a retry): the bytes reserved now
   * count toward the step's peak. */
  void (*note_reserved)(c10c__plan_state *ps);
  /* The engine is about to grow by about bytes for a request no free block fits. Where that
   * would take the device past the reference an online plan keeps to (what the caching engine
   * reserves without it), the plan goes: its idle arena back to the backend (false), or, with
   * blocks alive in it, to the engine as a segment of free blocks between them (true: look for
   * a fitting free block again). */
  bool (*make_room)(c10c__plan_state *ps, size_t bytes);
  /* Whether ptr lies in the device's arena (then free, record_stream and share answer for
   * it). */
  bool (*holds)(const c10c__plan_state *ps, const void *ptr);
  /* Errors: C10C_STATUS_INVALID_ARGUMENT for a pointer that is not a live planned block's
   * start. */
  c10c_status (*free)(c10c__plan_state *ps, void *ptr);
  c10c_status (*record_stream)(c10c__plan_state *ps, void *ptr, c10c_stream_id stream);
  c10c_status (*share)(c10c__plan_state *ps, const void *ptr, c10c__block_share *out);
  /* The device is full: an arena without live blocks goes back to the backend (its plan
   * dropped, plan_drops; a new one is made at a later boundary). Returns whether one went. */
  bool (*release_idle)(c10c__plan_state *ps);
  /* A step boundary marked by the host (c10c__engine_step): from then on only the host's marks
   * count. Errors: C10C_STATUS_OUT_OF_MEMORY (host) when a plan could not be made (the state
   * stays consistent: the engine serves, and the next boundary tries again). */
  c10c_status (*host_step)(c10c__plan_state *ps);
  /* The arena as a snapshot segment (a JSON object, "segment_type": "plan", its live blocks
   * and the gaps between them), or "" without an arena; *out from c10c__malloc. Errors:
   * C10C_STATUS_OUT_OF_MEMORY. */
  c10c_status (*snapshot)(const c10c__plan_state *ps, char **out);
  /* Checks the arena (live blocks inside it, none overlapping, statistics) and adds what it
   * holds to the engine's sums, per pool ([0] small, [1] large). False with a description. */
  bool (*validate)(const c10c__plan_state *ps, int64_t reserved[2], int64_t allocated[2],
                   int64_t active[2], int64_t segments[2], char *msg, size_t msg_size);
};

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

/* ---- what the engine lends the planned mode (plan_engine.c; lock held) ---- */

c10c_memory_stats *c10c__engine_device_stats(c10c__engine *engine, int device);
const c10c__segment_backend *c10c__engine_backend(const c10c__engine *engine);
/* Blocks the device has handed out so far: a clock for "since" below. */
uint64_t c10c__engine_handed(const c10c__engine *engine, int device);
/* Releases the device's cached free segments (and free pages) of the segments that handed out
 * a block after the count since (0: all): what a recorded step cached, not what other phases
 * of the program cached and will use again. */
void c10c__engine_release_cache(c10c__engine *engine, int device, uint64_t since);
/* The bytes c10c__engine_release_cache(since) would give back now (at least), without
 * releasing. */
size_t c10c__engine_releasable(const c10c__engine *engine, int device, uint64_t since);
/* The free ranges c10c__engine_release_cache would keep, each visited (size, stream, pool). */
void c10c__engine_holes(const c10c__engine *engine, int device,
                        void (*visit)(void *ctx, size_t size, c10c_stream_id stream, bool small),
                        void *ctx);
/* Whether new blocks come from expandable segments (pages mapped as they grow). */
bool c10c__engine_expandable(const c10c__engine *engine);
/* A segment for an arena from the backend, counted as a large-pool segment (reserved_bytes,
 * segment, num_device_alloc, the memory fraction's limit, the trace); C10C_STATUS_OUT_OF_MEMORY
 * when the device cannot give it. */
c10c_status c10c__engine_arena_malloc(c10c__engine *engine, int device, size_t size, void **out);
void c10c__engine_arena_free(c10c__engine *engine, int device, void *ptr, size_t size);
/* A live planned block handed to the engine with its arena (c10c__engine_adopt). */
typedef struct c10c__adopted {
  size_t offset, size, requested;
  c10c_stream_id *uses; /* record_stream's other streams (owned by the engine from then on) */
  size_t nuses;
  uint64_t tag; /* its request in the recording */
  bool small;   /* counted in the small pool's statistics (by its size) */
} c10c__adopted;

/* Takes an arena [base, base + size) over as a fixed segment of stream (the engine's large
 * pool): blocks (n of them, by offset, none overlapping) become its allocated blocks, the gaps
 * free ones, so that what the engine serves from then on can use the arena's bytes (the
 * arena's reserved bytes and segment are counted already). Errors: C10C_STATUS_OUT_OF_MEMORY
 * (host; nothing changes). */
c10c_status c10c__engine_adopt(c10c__engine *engine, int device, char *base, size_t size,
                               c10c_stream_id stream, const c10c__adopted *blocks, size_t n);
/* A block event for the trace: alloc, or free_requested and free_completed, with the requested
 * size (torch's). */
void c10c__engine_trace_block(c10c__engine *engine, int device, bool alloc, const void *ptr,
                              size_t size, c10c_stream_id stream);

/* For white-box tests: the engine of a simulated device (lib/memory/sim_device.c) and the CUDA
 * caching allocator's (lib/cuda/cuda_allocator.c; made on first use, as an allocation would). */
struct c10c_sim_device;
c10c__engine *c10c__sim_device_engine(struct c10c_sim_device *device);
c10c_status c10c__cuda_caching_engine(c10c__engine **out);

#endif /* C10C_CACHING_ENGINE_H */
