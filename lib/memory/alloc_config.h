/* Allocator configuration strings (see alloc_config.c). */
#ifndef C10C_ALLOC_CONFIG_H
#define C10C_ALLOC_CONFIG_H

#include "internal.h"

/* The caching CPU allocator's settings. */
typedef struct c10c__cpu_alloc_config {
  size_t max_cached_bytes;
  bool huge_pages;
  size_t thread_cache_bytes; /* per size class */
  int fill;                  /* C10C__FILL_*: what new blocks are filled with */
} c10c__cpu_alloc_config;

/* c10's caffe2_cpu_allocator_do_zero_fill / do_junk_fill: new blocks hold zeros, or the junk
 * pattern 0x7fedbeef (a NaN as float32) that makes reads of uninitialized memory stand out. */
enum { C10C__FILL_NONE = 0, C10C__FILL_ZERO = 1, C10C__FILL_JUNK = 2 };

/* Parses "key:value,..." (keys max_cached_mb, huge_pages, thread_cache_kb, fill) over *into. On
 * error writes a message to msg (msg_size bytes, NUL-terminated when msg_size > 0), leaves *into
 * unchanged and returns C10C_STATUS_INVALID_ARGUMENT. */
c10c_status c10c__parse_cpu_alloc_config(const char *text, c10c__cpu_alloc_config *into, char *msg,
                                         size_t msg_size);

/* PyTorch's kRoundUpPowerOfTwoIntervals: roundup_power2_divisions per power-of-two interval of
 * sizes from 1 MiB (index 0: below 2 MiB) to 32 GiB and above (index 15). */
enum { C10C__ROUNDUP_INTERVALS = 16 };

/* The longest plan_file path accepted (bytes, without the terminating NUL). */
enum { C10C__PLAN_PATH_MAX = 1024 };

/* The CUDA caching allocator's settings, PyTorch's key names (C10C_ALLOC_CONF). */
typedef struct c10c__device_alloc_config {
  size_t max_split_size; /* blocks at least this large are never split; SIZE_MAX: off */
  /* 0 or 1: plain 512-byte rounding, per interval (see above) */
  size_t roundup_power2_divisions[C10C__ROUNDUP_INTERVALS];
  double garbage_collection_threshold; /* 0: off; else in (0, 1), active with a memory fraction */
  bool expandable_segments;            /* segments that grow by mapping pages (driver VMM) */
  /* Ours, not PyTorch's: a free block of another stream (or one waiting for its record_stream
   * events) is reused by making the allocating stream wait for an event instead of mallocing a
   * new segment (RMM's stream-ordered reuse). */
  bool stream_ordered_reuse;
  /* Ours: planning:True. Requests of a recorded step are served from an offset plan in one arena
   * from the next step on (lib/memory/planner.h); steps are marked by c10c__engine_step. */
  bool planning;
  /* Ours: stitching:True (with expandable segments). A large request that no contiguous free
   * range fits, where enough free whole pages are mapped, gets those physical pages mapped into
   * a new contiguous address range instead of new pages (GMLake's stitching). */
  bool stitching;
  /* Ours: plan_file:PATH, a plan written by c10c_plan_make (or python -m pyc10.replay
   * --write-plan), read and checked when the setting is applied and served on its device from
   * the next request, across step markers, until its requests run out; then online planning
   * takes over at the next step boundary if planning is on too, else the engine serves alone.
   * "" for none. */
  char plan_file[C10C__PLAN_PATH_MAX + 1];
} c10c__device_alloc_config;

/* The defaults: no split limit, plain rounding, no garbage collection, fixed segments. */
c10c__device_alloc_config c10c__device_alloc_config_default(void);

/* Parses "max_split_size_mb:N,roundup_power2_divisions:N|[MB:N,...,>:N],
 * garbage_collection_threshold:F,expandable_segments:True|False,..." with PyTorch 2.13's checks
 * and messages (max_split_size_mb at least 20, clamped above SIZE_MAX MiB; divisions a power of
 * two, or 0 in a list); ours: stream_ordered_reuse, planning, stitching (True|False) and
 * plan_file:PATH (the rest of the item, up to the next comma; not empty; at most
 * C10C__PLAN_PATH_MAX bytes; "plan_file:" alone is refused); PyTorch 2.13's options that the engine
 * does not implement (max_non_split_rounding_mb, large_segment_size_mb, release_lock_on_cudamalloc,
 * pinned_*, graph_capture_record_stream_reuse, backend:cudaMallocAsync) give
 * C10C_STATUS_NOT_IMPLEMENTED, unknown keys and backends and bad values
 * C10C_STATUS_INVALID_ARGUMENT; on an error *into is unchanged and msg (msg_size bytes) holds the
 * message, NUL-terminated when msg_size > 0. */
c10c_status c10c__parse_device_alloc_config(const char *text, c10c__device_alloc_config *into,
                                            char *msg, size_t msg_size);

#endif /* C10C_ALLOC_CONFIG_H */
