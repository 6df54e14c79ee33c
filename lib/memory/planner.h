/* The offline memory planner (STAlloc's spatio-temporal plan; TensorFlow Lite's and XLA's
 * greedy offset assignment): requests with known sizes and lifetimes get offsets in one arena
 * so that no two requests alive at the same time share a byte, with the arena close to the peak
 * of live bytes. Also the plan file (plan_file:PATH) and what the engine needs to serve a plan
 * safely at run time (c10c__plan_prepare). No locks, no global state. */
#ifndef C10C_PLANNER_H
#define C10C_PLANNER_H

#include "internal.h"

/* A free time of a request never freed, and the offset of a request the plan leaves to the
 * caching engine. */
#define C10C__PLAN_NEVER     UINT64_MAX
#define C10C__PLAN_UNPLANNED UINT64_MAX

enum {
  C10C__PLAN_ALIGN = 512, /* each request's bytes round up to it (PyTorch's kMinBlockSize) */
  C10C__PLAN_ARENA_ALIGN = 2 << 20, /* the arena's bytes round up to it */
  C10C__PLAN_MAX_STREAMS = 64       /* requests on later streams are left to the engine */
};

/* A request's bytes in the arena: size rounded up to C10C__PLAN_ALIGN (wraps past 2^64 - 512,
 * which callers refuse or never pass). */
static inline uint64_t c10c__plan_block(uint64_t size) {
  return (size + (C10C__PLAN_ALIGN - 1)) & ~(uint64_t)(C10C__PLAN_ALIGN - 1);
}

/* One request of a recorded sequence: size bytes on plan stream `stream` (streams are numbered
 * by first use, 0, 1, ...), allocated at time alloc and freed at time free (C10C__PLAN_NEVER:
 * never), on one clock shared by allocations and frees; a free and an allocation at the same
 * time: the free comes first. A request freed at the time of its allocation still holds its
 * bytes for that instant: it is alive over [alloc, alloc + 1), otherwise over [alloc, free).
 * An allocation time of C10C__PLAN_NEVER is refused. skip: leave it to the caching engine
 * (still matched by position, so the requests after it keep their places). */
typedef struct c10c__plan_request {
  uint64_t size;
  uint64_t alloc, free;
  uint32_t stream;
  bool skip;
} c10c__plan_request;

/* A plan: the requests in allocation order, each with its offset in the arena, plus what the
 * engine needs at run time (derived by c10c__plan_prepare, never read from a file). */
typedef struct c10c__plan {
  int32_t device;
  uint32_t nstreams;
  size_t count;
  uint64_t arena;               /* bytes, a multiple of C10C__PLAN_ARENA_ALIGN */
  c10c__plan_request *requests; /* [count], sorted by alloc */
  uint64_t *offsets;            /* [count]; C10C__PLAN_UNPLANNED for skipped requests */
  /* Derived: */
  size_t planned;      /* requests with an offset */
  uint64_t *block;     /* [count] each request's bytes rounded up to C10C__PLAN_ALIGN */
  uint32_t *free_rank; /* [count] position of its free among the planned frees in time
                        * order (0, 1, ...; equal times by request index); UINT32_MAX:
                        * never freed or not planned */
  uint32_t *need;      /* [count] it may be served once the planned frees of rank
                        * < need[j] have all happened (every earlier occupant of its
                        * bytes is then gone) */
  uint64_t *waits;     /* [count] bit s: an earlier occupant of its bytes was on plan
                        * stream s != its own; the engine makes its stream wait for
                        * the last event recorded at such a free on s */
  bool *cross;         /* [count] a later occupant of its bytes is on another stream:
                        * freeing it records an event on its stream */
  uint32_t *by_free;   /* [planned frees] request index of each free rank */
} c10c__plan;

/* Computes a plan of count requests (any order; copied) for device: several greedy placements
 * (by size, by lifetime, ...), the smallest arena kept. Requests of size 0 or on streams
 * >= C10C__PLAN_MAX_STREAMS are left to the engine. The result is prepared, its requests in
 * allocation order (stable), nstreams one more than the highest planned stream. Errors:
 * C10C_STATUS_NULL_POINTER; C10C_STATUS_INVALID_ARGUMENT (free < alloc, an allocation at
 * C10C__PLAN_NEVER, a device below 0, more than 2^31 requests, a size that cannot be rounded
 * up, an arena past 2^64 bytes); C10C_STATUS_OUT_OF_MEMORY. */
c10c_status c10c__plan_compute(c10c__plan **out, const c10c__plan_request *requests, size_t count,
                               int32_t device);

/* Checks a plan (every planned request inside the arena, aligned, and no two planned requests
 * alive at once sharing a byte; requests sorted by alloc; streams below nstreams) and fills the
 * derived fields, in O(n log n). Errors: C10C_STATUS_INVALID_ARGUMENT with what is wrong;
 * C10C_STATUS_OUT_OF_MEMORY. */
c10c_status c10c__plan_prepare(c10c__plan *plan);

/* Writes the plan file (a fixed little-endian layout with a magic, a version, the device and a
 * checksum). Version 1, every integer little-endian: "C10CPLAN", u32 version, i32 device,
 * u32 nstreams, u64 count, u64 arena; per request u64 size, u64 alloc, u64 free, u32 stream,
 * u8 skip (0 or 1), u64 offset; then u64 FNV-1a 64 of every byte before it. Errors:
 * C10C_STATUS_ERROR with the system's message; C10C_STATUS_INVALID_ARGUMENT (more than 2^31
 * requests); C10C_STATUS_OUT_OF_MEMORY. */
c10c_status c10c__plan_write(const c10c__plan *plan, const char *path);

/* Reads and prepares a plan file. Errors: C10C_STATUS_INVALID_ARGUMENT for a file that is not a
 * plan, is truncated, is of another version, fails its checksum or its checks ("plan file X: ...");
 * C10C_STATUS_ERROR when it cannot be opened (the system's message); C10C_STATUS_OUT_OF_MEMORY. */
c10c_status c10c__plan_read(c10c__plan **out, const char *path);

/* Parses the size bytes of a plan file at data, as c10c__plan_read does a file's (for the fuzz
 * harness; name names the file in messages: "plan file NAME: ..."). Never reads past size. */
c10c_status c10c__plan_parse(c10c__plan **out, const void *data, size_t size, const char *name);

/* Frees a plan; NULL does nothing. */
void c10c__plan_destroy(c10c__plan *plan);

/* The peak over time of the live planned requests' bytes (each rounded to C10C__PLAN_ALIGN): a
 * lower bound on any arena (for tests and reports). */
uint64_t c10c__plan_lower_bound(const c10c__plan *plan);

#endif /* C10C_PLANNER_H */
