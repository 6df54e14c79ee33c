/* The caching engine's planned mode (planning:True, plan_file:PATH), per device: the requests of
 * each step (between two c10c__engine_step marks) are recorded; at a boundary the step's
 * requests allocated and freed within it (steps found from the repeating requests until the
 * host marks one) get an offset plan (planner.h) in one arena, a backend segment of its own,
 * and the following steps' matching requests are served at their offsets. Everything else stays
 * the caching engine's. Every function here runs under the engine's lock.
 *
 * Never more than the engine alone: an online plan is installed only where what stays reserved
 * (the engine's cache that the recorded step used released, with host marks; none released
 * for a step found in the requests), plus the arena, plus an estimate of what the engine adds
 * for the requests the plan leaves to it, plus a margin, is at most the most the recorded step
 * reserved (the reference: the engine reserves as much again in a step that repeats it); else
 * it is declined (plan_declines). A step served as planned that reserves more stops planning;
 * before the engine grows past the reference the plan goes; a program that leaves the step
 * (misses) gives an idle arena back, or one holding blocks to the engine as a segment
 * (c10c__engine_adopt). A found step is planned only once it repeats exactly.
 *
 * Matching: a per-step cursor walks the plan's requests; a request matches the entry under it
 * when its size rounds to the entry's block and its stream is the entry's plan stream (plan
 * streams bind to runtime stream ids by order of first use in the step). A matching planned
 * entry is served only once every earlier occupant of its bytes has been freed (the planner's
 * need/free ranks); other streams are made to wait where the plan reuses their bytes (events at
 * the frees, stream waits at the mallocs), and at a step boundary every stream used in the step
 * is waited for by the others before they reuse the arena. A step whose requests miss the plan
 * too often (more than 10% of them) rebuilds the plan from that step; rebuilds at four
 * boundaries in a row drop planning on the device (plan_drops) until the settings are applied
 * again, as does an arena the backend cannot give. A plan file is served as one sequence across
 * boundaries until its entries run out. */
#ifndef C10C_PLAN_ENGINE_H
#define C10C_PLAN_ENGINE_H

#include "caching_engine.h"
#include "planner.h"

typedef struct c10c__plan_state c10c__plan_state;

/* ---- what the caching engine lends the planned mode (caching_engine.c; lock held) ---- */

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

/* ---- the planned mode ---- */

/* A device's state (host memory only; nothing planned yet). Errors: C10C_STATUS_OUT_OF_MEMORY. */
c10c_status c10c__plan_state_new(c10c__plan_state **out, c10c__engine *engine, int device);
/* Destroys events and the arena (live planned blocks with it). NULL does nothing. */
void c10c__plan_state_destroy(c10c__plan_state *ps);

/* Applies the settings: planning on or off, and file (owned from now on; NULL: none) to serve
 * from the next request (once the arena is free of earlier blocks). Cannot fail: what needs
 * host or device memory and cannot get it is dropped (plan_drops). */
void c10c__plan_configure(c10c__plan_state *ps, bool planning, c10c__plan *file);

/* A request of size (> 0) bytes on stream: true with *out when served from the plan; else false
 * and *tag (0: none) is what the engine keeps with its block for c10c__plan_record_free, or
 * hands back to c10c__plan_unrecord if it cannot serve the request either. */
bool c10c__plan_malloc(c10c__plan_state *ps, size_t size, c10c_stream_id stream, void **out,
                       uint64_t *tag);
void c10c__plan_unrecord(c10c__plan_state *ps, uint64_t tag);
/* The engine's block recorded under tag (0: none), of a request of `requested` bytes on stream,
 * was freed: the end of its request, or, for a block of an earlier step, room the next step's
 * engine requests may take. */
void c10c__plan_record_free(c10c__plan_state *ps, uint64_t tag, uint64_t requested,
                            c10c_stream_id stream);
/* The engine is about to give bytes back (empty_cache, a retry): the bytes reserved now count
 * toward the step's peak. */
void c10c__plan_note_reserved(c10c__plan_state *ps);

/* The engine is about to grow by about bytes for a request no free block fits. Where that
 * would take the device past the reference an online plan keeps to (plan_engine.c: what the
 * caching engine reserves without it), the plan goes: its idle arena back to the backend
 * (false), or, with blocks alive in it, to the engine as a segment of free blocks between them
 * (true: look for a fitting free block again). */
bool c10c__plan_make_room(c10c__plan_state *ps, size_t bytes);

/* Whether ptr lies in the device's arena (then the next three answer for it). */
bool c10c__plan_holds(const c10c__plan_state *ps, const void *ptr);
/* Errors: C10C_STATUS_INVALID_ARGUMENT for a pointer that is not a live planned block's start. */
c10c_status c10c__plan_free(c10c__plan_state *ps, void *ptr);
c10c_status c10c__plan_record_stream(c10c__plan_state *ps, void *ptr, c10c_stream_id stream);
c10c_status c10c__plan_share(c10c__plan_state *ps, const void *ptr, c10c__block_share *out);

/* The device is full: an arena without live blocks goes back to the backend (its plan dropped,
 * plan_drops; a new one is made at a later boundary). Returns whether one went. */
bool c10c__plan_release_idle(c10c__plan_state *ps);

/* A step boundary marked by the host (c10c__engine_step): from then on only the host's marks
 * count, and steps are no longer looked for in the requests (step_detect.h; with planning on and
 * no host marks, a request the detector finds to begin a step is a boundary). Errors: as
 * c10c__plan_step's. */
c10c_status c10c__plan_host_step(c10c__plan_state *ps);

/* A step boundary. Errors: C10C_STATUS_OUT_OF_MEMORY (host) when a plan could not be made (the
 * state stays consistent: the engine serves, and the next boundary tries again). */
c10c_status c10c__plan_step(c10c__plan_state *ps);

/* The arena as a snapshot segment (a JSON object, "segment_type": "plan", its live blocks and
 * the gaps between them), or "" without an arena; *out from c10c__malloc. Errors:
 * C10C_STATUS_OUT_OF_MEMORY. */
c10c_status c10c__plan_snapshot(const c10c__plan_state *ps, char **out);

/* Checks the arena (live blocks inside it, none overlapping, statistics) and adds what it holds
 * to the engine's sums, per pool ([0] small, [1] large). False with a description. */
bool c10c__plan_validate(const c10c__plan_state *ps, int64_t reserved[2], int64_t allocated[2],
                         int64_t active[2], int64_t segments[2], char *msg, size_t msg_size);

#endif /* C10C_PLAN_ENGINE_H */
