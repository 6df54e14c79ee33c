/* Replays an allocation trace through libc10c's CUDA caching allocator over the stand-in driver
 * (tests/cuda_stub, in fake-address mode: no memory behind the addresses, so traces of tens of
 * GiB replay anywhere) and prints PyTorch users' allocator metrics as one JSON object.
 *
 *   C10C_CUDA_DRIVER=<libc10c_cuda_stub.so> C10C_STUB_FAKE=1 \
 *     replay_trace TRACE.csv [--config "expandable_segments:True"] [--capacity BYTES]
 *                            [--no-search] [--repeat N] [--snapshot FILE]
 *                            [--skip-record-stream] [--keep-going] [--plan-from TRACE2]
 *
 * --plan-from TRACE2 makes an offline plan (c10c_plan_make) from TRACE2's requests (each allocate
 * row one request of its Size on its Stream, from its row's position to that of the row freeing
 * its Pointer, never freed when none does; an allocation that fails under --keep-going is still a
 * request) into a temporary plan file (removed at exit) and replays TRACE with
 * ",plan_file:PATH" added to --config. TRACE2 may be TRACE itself (the plan of a run known in
 * advance). Every step_begin row calls c10c_cuda_allocator_step(-1), which drives online
 * planning ("planning:True") and does nothing without it.
 * --skip-record-stream replays without telling the allocator about other streams' uses: the
 * unsafe-reuse check must then find some (the negative control of that metric).
 * --keep-going goes on past an allocation that fails (as a program that catches PyTorch's
 * OutOfMemoryError does): the figures then cover the whole trace, the failure is the first one,
 * and later frees of a Pointer whose allocation failed are skipped.
 * C10C_STUB_ADDRESS_ORDER=descending makes the stand-in hand out addresses downwards (some
 * real runs had that order, and PyTorch's best fit breaks size ties by address).
 *
 * The trace is CSV with a header naming its columns: RMM's replay log
 * (Thread,Time,Action,Pointer,Size,Stream) with optional Step,Tag,Phase columns. Actions:
 * allocate, free, record_stream (Pointer used on Stream), enqueue (Size ticks of work on
 * Stream), empty_cache, step_begin (Step). Time is the logical clock in ticks when it is an
 * integer (the stand-in's streams complete work by it); RMM's wall-clock times are ignored.
 * Stream values are names: the first one seen is the default stream, others pool streams.
 * bench/trace_csv.h says exactly what the reader accepts. A Pointer allocated again while it
 * is live (no free between) is refused, as is one freed twice; a free of a Pointer the log never
 * allocated (allocated before the log began) is skipped and counted (unknown_frees).
 *
 * Figures, always (over the whole replay, or up to the failure of one that runs out of memory):
 * device mallocs and frees (maps and unmaps for expandable segments), allocations and cache
 * hit rate (allocations that made no device allocation), peak reserved / peak allocated, peak
 * live requested bytes, retries and OOMs, unknown frees, and host ns per malloc+free pair
 * (median and mean; over the steady steps when steps are marked). When the trace marks steps
 * (step_begin rows): per_step, each marked step's figures, and over the steady steps (>= 2) the
 * mean device mallocs and frees per step, their hit rate and address stability (steady-step
 * allocations at the address of the same allocation one step before; from step 3); null
 * without steady steps. On success: the smallest device capacity that completes the trace
 * (binary search, 2 MiB resolution) over peak live requested, and unsafe cross-stream reuses
 * (memory handed out while a stream that used it, by record_stream, may still be at work and the
 * allocating stream was not made to wait). On an out-of-memory failure, "failure": the
 * allocation's number (1-based over the trace's allocations, and within its step), its line,
 * size and step, the device's free bytes then, and the allocator's message.
 * With planning (planning:True or a plan file): "plan", the allocator's plan figures (arena bytes,
 * requests served from a plan, fallbacks to the caching engine, plans made or loaded, plans
 * dropped) and, from the last change of plan (made or loaded, rebuilt, or planning dropped: at a
 * step boundary for online planning, at the first request for a plan file) to the end, the
 * step it happened in, peak reserved, peak live requested and utilization (the one over the
 * other): for online planning, the steps after the recording of the plan in use at the end;
 * null for all four when no plan was ever made. With
 * stitching:True: "stitching", the allocations served by stitching and the peak stitched bytes.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_clock.h"
#include "trace_csv.h"
#include "c10c/c10c.h"

/* ---- the stand-in's controls ---- */

static void *stub;
static void (*stub_advance)(uint64_t);
static uint64_t (*stub_now)(void);
static void (*stub_enqueue)(void *, uint64_t);
static uint64_t (*stub_stream_busy)(void *);
static void (*stub_set_capacity)(size_t);

static int bind_stub(void) {
  stub = dlopen(getenv("C10C_CUDA_DRIVER"), RTLD_NOW | RTLD_NOLOAD);
  if (stub == NULL) return -1;
#define BIND(var, name)                 \
  {                                     \
    void *address = dlsym(stub, name);  \
    if (address == NULL) return -1;     \
    memcpy(&var, &address, sizeof var); \
  }
  BIND(stub_advance, "c10c_stub_advance")
  BIND(stub_now, "c10c_stub_now")
  BIND(stub_enqueue, "c10c_stub_enqueue")
  BIND(stub_stream_busy, "c10c_stub_stream_busy")
  BIND(stub_set_capacity, "c10c_stub_set_capacity")
#undef BIND
  return 0;
}

static void *checked(void *p) {
  if (p == NULL) {
    fprintf(stderr, "replay_trace: out of host memory\n");
    exit(1);
  }
  return p;
}

/* ---- the trace's pointers: a check before the replay ---- */

/* Every Pointer the trace names, with whether it is live and the line that made it so. */
typedef struct seen_id {
  uint64_t id;
  size_t line; /* 0: an empty slot */
  bool live;
} seen_id;

typedef struct seen_table {
  seen_id *slots;
  size_t cap, count; /* cap: a power of two */
} seen_table;

static size_t hash_id(uint64_t id, size_t cap) {
  return (size_t)(id * 0x9E3779B97F4A7C15ull >> 32) & (cap - 1);
}

static seen_id *seen_slot(seen_table *s, uint64_t id) {
  if (2 * (s->count + 1) > s->cap) { /* at most half full */
    seen_table grown = {checked(calloc(s->cap * 2, sizeof *s->slots)), s->cap * 2, 0};
    for (size_t i = 0; i < s->cap; i++)
      if (s->slots[i].line != 0) *seen_slot(&grown, s->slots[i].id) = s->slots[i], grown.count++;
    free(s->slots);
    *s = grown;
  }
  size_t i = hash_id(id, s->cap);
  while (s->slots[i].line != 0 && s->slots[i].id != id) i = (i + 1) & (s->cap - 1);
  return &s->slots[i];
}

/* Refuses a Pointer allocated while live or freed twice (the replay would otherwise lose one
 * of the blocks or free one twice), naming both lines. Counts frees of Pointers the log never
 * allocated. Returns 0, or -1 with a message in err. */
static int check_pointers(const trace *t, int64_t *unknown_frees, char *err, size_t err_size) {
  seen_table s = {checked(calloc(1024, sizeof(seen_id))), 1024, 0};
  int status = 0;
  *unknown_frees = 0;
  for (size_t k = 0; k < t->count && status == 0; k++) {
    const trace_event *e = &t->events[k];
    if (e->act != TRACE_ALLOCATE && e->act != TRACE_FREE) continue;
    seen_id *x = seen_slot(&s, e->id);
    bool known = x->line != 0;
    if (e->act == TRACE_ALLOCATE && known && x->live) {
      snprintf(err, err_size,
               "line %zu: Pointer 0x%" PRIx64
               " is allocated again while live (allocated at "
               "line %zu, not freed since)",
               e->line, e->id, x->line);
      status = -1;
    } else if (e->act == TRACE_FREE && known && !x->live) {
      snprintf(err, err_size,
               "line %zu: Pointer 0x%" PRIx64
               " is freed again (freed at line %zu, not "
               "allocated since)",
               e->line, e->id, x->line);
      status = -1;
    } else {
      if (!known) s.count++;
      if (e->act == TRACE_FREE && !known) ++*unknown_frees;
      *x = (seen_id){e->id, e->line, e->act == TRACE_ALLOCATE};
    }
  }
  free(s.slots);
  return status;
}

/* ---- the replay ---- */

static const char *snapshot_path; /* --snapshot: the allocator's state at peak reserved */
static bool skip_record_stream;   /* --skip-record-stream: the negative control of the check */
static bool keep_going;           /* --keep-going: on past an allocation that failed */
static int64_t snapshot_reserved;

static void write_snapshot(void) {
  size_t len = 0;
  c10c_cuda_memory_snapshot(NULL, 0, &len);
  char *json = malloc(len + 1);
  FILE *f = fopen(snapshot_path, "w");
  if (json != NULL && f != NULL && c10c_cuda_memory_snapshot(json, len + 1, NULL) == 0)
    fputs(json, f);
  if (f != NULL) fclose(f);
  free(json);
}

enum { EMPTY, LIVE, GONE };

typedef struct live_block {
  uint64_t id;
  int state; /* EMPTY, LIVE, or GONE (a tombstone) */
  c10c_data_ptr data;
  uint64_t size;
  uint64_t streams; /* bit i: used on trace stream i (allocated there, or record_stream) */
  size_t pair;      /* its entry in metrics.pair_ns, or SIZE_MAX */
} live_block;

/* Memory freed while a stream that used it may still be at work: [start, end) until done_at
 * on stream `user`. */
typedef struct busy_range {
  uintptr_t start, end;
  uint64_t done_at;
  int user;
} busy_range;

/* One marked step (from its step_begin row to the next). */
typedef struct step_figures {
  int step;
  int64_t mallocs_before, frees_before; /* the device counts when it began */
  int64_t device_mallocs, device_frees, allocations, hits;
  int64_t reserved_at_begin, peak_reserved; /* bytes reserved when it began, and at most in it */
  uint64_t peak_live;                       /* requested bytes live at most in it */
} step_figures;

/* The allocation that ran out of memory. */
typedef struct failure {
  size_t allocation, allocation_in_step; /* 1-based */
  size_t line;
  uint64_t size;
  int step;
  int64_t device_free; /* bytes, -1 if the driver did not say */
  char message[1024];
} failure;

typedef struct metrics {
  int64_t device_mallocs, device_frees, allocations, hits, unknown_frees;
  int64_t failures; /* allocations that failed (more than one only with --keep-going) */
  int64_t peak_reserved, peak_allocated, retries, ooms, unsafe;
  int64_t stable, compared;
  step_figures *steps; /* the marked steps, in order */
  size_t nsteps, steps_cap;
  double host_ns_total;
  int64_t pairs;
  double *pair_ns;
  size_t npair;
  bool failed;
  failure fail;
  bool timing;  /* a timing run: no statistics read between calls (they would cool the caches) */
  bool planned; /* a plan has been made or loaded */
  int64_t plan_version;       /* plan_rebuilds + plan_drops when the figures below restarted */
  int plan_since_step;        /* the step they restarted in */
  int64_t plan_peak_reserved; /* since then */
  uint64_t plan_peak_live;
  c10c_memory_stats last; /* the allocator's figures at the end */
} metrics;

typedef struct replayer {
  trace *t;
  bool marked;        /* the trace has step_begin rows */
  uint64_t peak_live; /* requested bytes, found by the measured replay */
  c10c_allocator *alloc;
  c10c_stream streams[64];
  void *handles[64];
  live_block *table;
  size_t table_cap, table_used; /* used: live blocks and tombstones */
  busy_range *busy;
  size_t nbusy, busy_cap;
  uintptr_t *addresses[2]; /* per allocation index within a step: this and the previous step */
  size_t naddr[2], addr_cap;
} replayer;

static live_block *find_slot(live_block *table, size_t cap, uint64_t id, bool insert) {
  live_block *tombstone = NULL;
  for (size_t i = hash_id(id, cap);; i = (i + 1) & (cap - 1)) {
    live_block *b = &table[i];
    if (b->state == LIVE && b->id == id) return b;
    if (b->state == GONE && tombstone == NULL) tombstone = b;
    if (b->state == EMPTY) return !insert ? NULL : tombstone ? tombstone : b;
  }
}

/* The live block of id, or (insert) a free slot for it. The table is kept at most half full of
 * live blocks and tombstones (rebuilt, twice as large if live blocks fill a quarter of it):
 * a search always ends at an empty slot. */
static live_block *slot_of(replayer *r, uint64_t id, bool insert) {
  if (insert && 2 * (r->table_used + 1) > r->table_cap) {
    size_t live = 0;
    for (size_t i = 0; i < r->table_cap; i++) live += r->table[i].state == LIVE;
    size_t cap = 4 * (live + 1) > r->table_cap ? 2 * r->table_cap : r->table_cap;
    live_block *table = checked(calloc(cap, sizeof *table));
    for (size_t i = 0; i < r->table_cap; i++)
      if (r->table[i].state == LIVE) *find_slot(table, cap, r->table[i].id, true) = r->table[i];
    free(r->table);
    r->table = table;
    r->table_cap = cap;
    r->table_used = live;
  }
  live_block *b = find_slot(r->table, r->table_cap, id, insert);
  if (insert && b->state == EMPTY) r->table_used++;
  return b;
}

static void stats(replayer *r, c10c_memory_stats *s) {
  memset(s, 0, sizeof *s);
  s->struct_size = sizeof *s;
  c10c_allocator_get_stats(s, r->alloc);
}

static void free_all(replayer *r) {
  for (size_t i = 0; i < r->table_cap; i++) {
    if (r->table[i].state == LIVE) c10c_data_ptr_free(&r->table[i].data);
    r->table[i].state = EMPTY;
  }
  r->table_used = 0;
  r->nbusy = 0;
  c10c_allocator_empty_cache(r->alloc);
  c10c_allocator_reset_peak_stats(r->alloc);
}

/* Closes the figures of the step being replayed (if any) with the device counts now. */
static void end_step(metrics *m, const c10c_memory_stats *s) {
  if (m->nsteps == 0) return;
  step_figures *f = &m->steps[m->nsteps - 1];
  f->device_mallocs = s->num_device_alloc - f->mallocs_before;
  f->device_frees = s->num_device_free - f->frees_before;
}

static void begin_step(metrics *m, int step, const c10c_memory_stats *s, uint64_t live) {
  end_step(m, s);
  if (m->nsteps == m->steps_cap) {
    m->steps_cap = m->steps_cap * 2 + 16;
    m->steps = checked(realloc(m->steps, m->steps_cap * sizeof *m->steps));
  }
  int64_t reserved = s->reserved_bytes[C10C_STAT_ALL].current;
  m->steps[m->nsteps++] = (step_figures){.step = step,
                                         .mallocs_before = s->num_device_alloc,
                                         .frees_before = s->num_device_free,
                                         .reserved_at_begin = reserved,
                                         .peak_reserved = reserved,
                                         .peak_live = live};
}

/* The figures of an allocation that failed: its numbers, and the device's free memory. */
static void note_failure(metrics *m, const trace_event *e, size_t allocation, size_t in_step) {
  if (m->failures++ > 0) return; /* the first one's */
  int64_t free_bytes = -1, total = 0;
  if (c10c_cuda_mem_get_info(&free_bytes, &total, 0) != C10C_STATUS_OK) free_bytes = -1;
  m->failed = true;
  m->fail = (failure){.allocation = allocation,
                      .allocation_in_step = in_step,
                      .line = e->line,
                      .size = e->size,
                      .step = e->step,
                      .device_free = free_bytes};
  snprintf(m->fail.message, sizeof m->fail.message, "%s", c10c_last_error_message());
  fprintf(stderr, "line %zu: allocation %zu (%zu of step %d) of %" PRIu64 " bytes failed: %s\n",
          e->line, allocation, in_step, e->step, e->size, m->fail.message);
}

/* Follows the figures from the last change of plan on (a plan made at a step boundary or loaded
 * from a file, a rebuild, planning dropped): the steps after the recording of the plan in use at
 * the end, which is what planning gives once it has settled. */
static void note_plan(metrics *m, const c10c_memory_stats *s, uint64_t live, int step) {
  int64_t reserved = s->reserved_bytes[C10C_STAT_ALL].current;
  int64_t version = s->plan_rebuilds + s->plan_drops;
  if (version > 0 && version != m->plan_version) {
    m->planned = true;
    m->plan_version = version;
    m->plan_since_step = step;
    m->plan_peak_reserved = reserved;
    m->plan_peak_live = live;
  }
  if (!m->planned) return;
  if (reserved > m->plan_peak_reserved) m->plan_peak_reserved = reserved;
  if (live > m->plan_peak_live) m->plan_peak_live = live;
}

/* Runs the trace once; with m, measures. Returns false on an out-of-memory failure. */
static bool run(replayer *r, metrics *m) {
  trace *t = r->t;
  c10c_memory_stats s;
  int step = 0;
  uint64_t live = 0; /* requested bytes */
  size_t allocation = 0, in_step = 0;
  bool ok = true;
  r->nbusy = 0;
  r->naddr[0] = r->naddr[1] = 0;
  /* each run starts its trace's clock after everything queued by the one before */
  uint64_t base = stub_now();
  for (int i = 0; i < t->streams; i++) {
    uint64_t busy = stub_stream_busy(r->handles[i]);
    if (busy > base) base = busy;
  }
  int64_t mallocs_before = 0, frees_before = 0; /* the device counts are the process's */
  if (m != NULL && !m->timing) {
    stats(r, &s);
    mallocs_before = s.num_device_alloc;
    frees_before = s.num_device_free;
  }
  int cur = 0;
  for (size_t k = 0; k < t->count && (ok || keep_going); k++) {
    const trace_event *e = &t->events[k];
    if (e->time >= 0) {
      uint64_t now = stub_now(), at = base + (uint64_t)e->time;
      if (at > now) stub_advance(at - now);
    }
    /* steady: a marked step from 2 on; host times over those, or all without marks */
    bool steady = step >= 2, timed = r->marked ? steady : true;
    switch (e->act) {
      case TRACE_STEP_BEGIN: {
        /* a step boundary: drives online planning (nothing without it) */
        c10c_status step_status = c10c_cuda_allocator_step(-1);
        if (step_status != C10C_STATUS_OK)
          fprintf(stderr, "line %zu: c10c_cuda_allocator_step: %s\n", e->line,
                  c10c_last_error_message());
        if (m != NULL && !m->timing) {
          stats(r, &s);
          note_plan(m, &s, live, e->step);
          begin_step(m, e->step, &s, live);
        }
        step = e->step;
        in_step = 0;
        cur ^= 1;
        r->naddr[cur] = 0;
        break;
      }
      case TRACE_ALLOCATE: {
        c10c_cuda_set_current_stream(r->streams[e->stream]);
        live_block *b = slot_of(r, e->id, true);
        allocation++, in_step++;
        int64_t before = 0;
        if (m != NULL && !m->timing) {
          stats(r, &s);
          before = s.num_device_alloc;
        }
        double t0 = m ? now_ns() : 0;
        c10c_data_ptr d;
        c10c_status st = c10c_allocator_allocate(&d, r->alloc, e->size);
        double t1 = m ? now_ns() : 0;
        if (st != C10C_STATUS_OK) {
          if (m != NULL && !m->timing) note_failure(m, e, allocation, in_step);
          ok = false;
          break;
        }
        *b = (live_block){e->id, LIVE, d, e->size, (uint64_t)1 << e->stream, SIZE_MAX};
        live += e->size;
        if (m != NULL && !m->timing && live > r->peak_live) r->peak_live = live;
        if (m == NULL) break;
        if (snapshot_path != NULL && !m->timing) { /* the allocator's state at its peak */
          stats(r, &s);
          if (s.reserved_bytes[C10C_STAT_ALL].current > snapshot_reserved) {
            snapshot_reserved = s.reserved_bytes[C10C_STAT_ALL].current;
            write_snapshot();
          }
        }
        if (!m->timing) {
          stats(r, &s);
          note_plan(m, &s, live, step);
          bool hit = s.num_device_alloc == before;
          m->allocations++;
          m->hits += hit;
          if (m->nsteps > 0) { /* reserved memory grows only when an allocation asks for it */
            step_figures *f = &m->steps[m->nsteps - 1];
            int64_t reserved = s.reserved_bytes[C10C_STAT_ALL].current;
            f->allocations++;
            f->hits += hit;
            if (reserved > f->peak_reserved) f->peak_reserved = reserved;
            if (live > f->peak_live) f->peak_live = live;
          }
        }
        if (timed && m->timing) {
          m->host_ns_total += (double)(t1 - t0);
          if (m->npair < (size_t)1 << 22) {
            b->pair = m->npair;
            m->pair_ns[m->npair++] = (double)(t1 - t0);
          }
        }
        /* unsafe reuse: memory still in use by another stream, and this stream not ordered
         * after it */
        uintptr_t start = (uintptr_t)d.data, end = start + e->size;
        uint64_t now = stub_now(), mine = stub_stream_busy(r->handles[e->stream]);
        for (size_t i = 0; i < r->nbusy; i++) {
          busy_range *x = &r->busy[i];
          if (x->done_at <= now) continue;
          if (start < x->end && x->start < end && x->user != e->stream && mine < x->done_at)
            m->unsafe++;
        }
        /* address stability by allocation index within the step */
        size_t idx = r->naddr[cur];
        if (idx < r->addr_cap) {
          r->addresses[cur][idx] = start;
          r->naddr[cur]++;
          if (steady && step >= 3 && idx < r->naddr[cur ^ 1]) {
            m->compared++;
            m->stable += r->addresses[cur ^ 1][idx] == start;
          }
        }
        break;
      }
      case TRACE_FREE: {
        live_block *b = slot_of(r, e->id, false);
        if (b == NULL) { /* allocated before the log began: counted by check_pointers */
          break;
        }
        uintptr_t start = (uintptr_t)b->data.data; /* the free clears the data pointer */
        double t0 = m ? now_ns() : 0;
        c10c_data_ptr_free(&b->data);
        double t1 = m ? now_ns() : 0;
        b->state = GONE;
        live -= b->size;
        if (m == NULL) break;
        if (b->pair != SIZE_MAX && m->timing) {
          m->host_ns_total += (double)(t1 - t0);
          m->pairs++;
          m->pair_ns[b->pair] += (double)(t1 - t0);
        }
        /* the streams that used it may still be at work on it */
        uint64_t now = stub_now();
        size_t kept = 0;
        for (size_t i = 0; i < r->nbusy; i++)
          if (r->busy[i].done_at > now) r->busy[kept++] = r->busy[i];
        r->nbusy = kept;
        for (int i = 0; i < t->streams; i++) {
          uint64_t done = (b->streams >> i) & 1 ? stub_stream_busy(r->handles[i]) : 0;
          if (done <= now) continue;
          if (r->nbusy == r->busy_cap) {
            r->busy_cap = r->busy_cap * 2 + 16;
            r->busy = checked(realloc(r->busy, r->busy_cap * sizeof *r->busy));
          }
          r->busy[r->nbusy++] = (busy_range){start, start + b->size, done, i};
        }
        break;
      }
      case TRACE_RECORD_STREAM: {
        live_block *b = slot_of(r, e->id, false);
        if (b == NULL) break;
        if (!skip_record_stream) c10c_cuda_record_stream(&b->data, r->streams[e->stream]);
        b->streams |= (uint64_t)1 << e->stream;
        break;
      }
      case TRACE_ENQUEUE: stub_enqueue(r->handles[e->stream], e->size); break;
      case TRACE_EMPTY_CACHE: c10c_allocator_empty_cache(r->alloc); break;
    }
  }
  if (m != NULL && !m->timing) { /* the figures up to the end, or to the failure */
    stats(r, &s);
    end_step(m, &s);
    m->device_mallocs = s.num_device_alloc - mallocs_before;
    m->device_frees = s.num_device_free - frees_before;
    m->peak_reserved = s.reserved_bytes[C10C_STAT_ALL].peak;
    m->peak_allocated = s.allocated_bytes[C10C_STAT_ALL].peak;
    m->retries = s.num_alloc_retries;
    m->ooms = s.num_ooms;
    m->last = s;
  }
  return ok;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* What one timed call adds by itself (two clock reads around nothing), median of many: taken
 * off every timed allocate and free. */
static double clock_overhead(void) {
  enum { N = 20001 };
  static double d[N];
  for (int i = 0; i < N; i++) {
    double t0 = now_ns();
    d[i] = now_ns() - t0;
  }
  qsort(d, N, sizeof d[0], compare_double);
  return d[N / 2];
}

/* ---- the report ---- */

/* s as a JSON string. */
static void put_string(const char *s) {
  putchar('"');
  for (; *s != '\0'; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c < 0x20)
      printf("\\u%04x", c);
    else
      putchar(c);
  }
  putchar('"');
}

/* a ratio, or null when there is nothing to divide by */
static void put_ratio(const char *key, double num, double den, int digits) {
  if (den > 0)
    printf(", \"%s\": %.*f", key, digits, num / den);
  else
    printf(", \"%s\": null", key);
}

/* Whether the settings turn key ("planning", "stitching") on, or name it at all (value NULL:
 * "plan_file"). The last setting of a key wins, as the parser's. */
static bool setting_on(const char *config, const char *key, const char *value) {
  bool on = false;
  size_t n = strlen(key);
  for (const char *p = config; *p != '\0';) {
    while (*p == ' ' || *p == ',') p++;
    if (strncmp(p, key, n) == 0 && p[n] == ':') {
      const char *v = p + n + 1;
      if (value == NULL) {
        on = true;
      } else {
        size_t len = strcspn(v, ",");
        on = len == strlen(value) && strncmp(v, value, len) == 0;
      }
    }
    p += strcspn(p, ",");
  }
  return on;
}

static void report(const char *path, const char *config, const trace *t, const replayer *r,
                   const metrics *m, bool ok, size_t cmin, double p50, double mean,
                   double overhead) {
  size_t allocations = 0, steps = 0;
  for (size_t k = 0; k < t->count; k++) {
    allocations += t->events[k].act == TRACE_ALLOCATE;
    steps += t->events[k].act == TRACE_STEP_BEGIN;
  }
  printf("{\"trace\": ");
  put_string(path);
  printf(", \"config\": ");
  put_string(config);
  printf(", \"ok\": %s, \"events\": %zu, \"allocations\": %zu, \"steps\": %zu, \"streams\": %d",
         ok ? "true" : "false", t->count, allocations, steps, t->streams);
  /* totals */
  printf(", \"device_mallocs\": %" PRId64 ", \"device_frees\": %" PRId64
         ", \"allocations_replayed\": %" PRId64,
         m->device_mallocs, m->device_frees, m->allocations);
  put_ratio("hit_rate", (double)m->hits, (double)m->allocations, 6);
  printf(", \"peak_reserved\": %" PRId64 ", \"peak_allocated\": %" PRId64
         ", \"peak_live_requested\": %" PRIu64,
         m->peak_reserved, m->peak_allocated, r->peak_live);
  put_ratio("reserved_over_allocated", (double)m->peak_reserved, (double)m->peak_allocated, 4);
  printf(", \"unknown_frees\": %" PRId64 ", \"retries\": %" PRId64 ", \"ooms\": %" PRId64,
         m->unknown_frees, m->retries, m->ooms);
  /* per step, when the trace marks steps; the steady ones (>= 2) averaged */
  int64_t steady = 0, mallocs = 0, frees = 0, requests = 0, hits = 0;
  for (size_t i = 0; i < m->nsteps; i++) {
    const step_figures *f = &m->steps[i];
    if (f->step < 2) continue;
    steady++, mallocs += f->device_mallocs, frees += f->device_frees;
    requests += f->allocations, hits += f->hits;
  }
  printf(", \"steady_steps\": %" PRId64, steady);
  put_ratio("device_mallocs_per_step", (double)mallocs, (double)steady, 3);
  put_ratio("device_frees_per_step", (double)frees, (double)steady, 3);
  put_ratio("steady_hit_rate", (double)hits, (double)requests, 6);
  put_ratio("address_stability", (double)m->stable, (double)m->compared, 6);
  if (r->marked) {
    printf(", \"per_step\": [");
    for (size_t i = 0; i < m->nsteps; i++) {
      const step_figures *f = &m->steps[i];
      printf("%s{\"step\": %d, \"device_mallocs\": %" PRId64 ", \"device_frees\": %" PRId64
             ", \"allocations\": %" PRId64 ", \"hits\": %" PRId64
             ", \"reserved_at_begin\": %" PRId64 ", \"peak_reserved\": %" PRId64
             ", \"peak_live_requested\": %" PRIu64 "}",
             i ? ", " : "", f->step, f->device_mallocs, f->device_frees, f->allocations, f->hits,
             f->reserved_at_begin, f->peak_reserved, f->peak_live);
    }
    printf("]");
  } else {
    printf(", \"per_step\": null");
  }
  /* only for a replay that completed */
  if (ok) {
    printf(", \"min_capacity\": %zu", cmin);
    put_ratio("min_capacity_over_peak_live", (double)cmin, (double)r->peak_live, 4);
    printf(", \"unsafe_reuses\": %" PRId64 ", \"host_ns_p50\": %.1f, \"host_ns_mean\": %.1f",
           m->unsafe, p50, mean);
  } else {
    printf(
        ", \"min_capacity\": null, \"min_capacity_over_peak_live\": null, "
        "\"unsafe_reuses\": %" PRId64 ", \"host_ns_p50\": null, \"host_ns_mean\": null",
        m->unsafe);
  }
  const c10c_memory_stats *last = &m->last;
  if (setting_on(config, "planning", "True") || setting_on(config, "plan_file", NULL)) {
    printf(", \"plan\": {\"arena_bytes\": %" PRId64 ", \"served\": %" PRId64
           ", \"fallbacks\": %" PRId64 ", \"rebuilds\": %" PRId64 ", \"drops\": %" PRId64
           ", \"declines\": %" PRId64,
           last->plan_arena_bytes, last->plan_served, last->plan_fallbacks, last->plan_rebuilds,
           last->plan_drops, last->plan_declines);
    if (m->planned) {
      printf(", \"after_plan_from_step\": %d, \"peak_reserved_after_plan\": %" PRId64
             ", \"peak_live_requested_after_plan\": %" PRIu64,
             m->plan_since_step, m->plan_peak_reserved, m->plan_peak_live);
      put_ratio("utilization_after_plan", (double)m->plan_peak_live, (double)m->plan_peak_reserved,
                6);
    } else {
      printf(
          ", \"after_plan_from_step\": null, \"peak_reserved_after_plan\": null"
          ", \"peak_live_requested_after_plan\": null"
          ", \"utilization_after_plan\": null");
    }
    printf("}");
  }
  if (setting_on(config, "stitching", "True")) {
    printf(", \"stitching\": {\"num_stitches\": %" PRId64 ", \"peak_stitched_bytes\": %" PRId64 "}",
           last->num_stitches, last->stitched_bytes.peak);
  }
  printf(", \"clock_ns\": %.1f, \"failure\": ", overhead);
  if (m->failed) {
    const failure *f = &m->fail;
    printf("{\"failures\": %" PRId64
           ", \"allocation\": %zu, \"step\": %d, \"allocation_in_step\": %zu, \"line\": %zu, "
           "\"size\": %" PRIu64 ", \"device_free\": %" PRId64 ", \"message\": ",
           m->failures, f->allocation, f->step, f->allocation_in_step, f->line, f->size,
           f->device_free);
    put_string(f->message);
    printf("}");
  } else {
    printf("null");
  }
  printf("}\n");
}

/* ---- --plan-from: an offline plan of a trace's requests ---- */

static char plan_path[4096]; /* the temporary plan file, removed at exit */

static void remove_plan(void) {
  if (plan_path[0] != '\0') remove(plan_path);
}

/* Reads the trace at from and plans its requests into a temporary file, named in plan_path.
 * Returns 0, or -1 after a message on stderr. */
static int make_plan(const char *from) {
  trace t;
  char err[512];
  FILE *f = fopen(from, "r");
  if (f == NULL) {
    fprintf(stderr, "cannot open %s\n", from);
    return -1;
  }
  int loaded = trace_csv_read(&t, f, err, sizeof err);
  fclose(f);
  int64_t unknown = 0;
  if (loaded == 0 && check_pointers(&t, &unknown, err, sizeof err) != 0) {
    trace_free(&t);
    loaded = -1;
  }
  if (loaded != 0) {
    fprintf(stderr, "%s: %s\n", from, err);
    return -1;
  }
  size_t n = 0;
  for (size_t k = 0; k < t.count; k++) n += t.events[k].act == TRACE_ALLOCATE;
  uint64_t *sizes = checked(malloc((n + 1) * sizeof *sizes));
  int64_t *streams = checked(malloc((n + 1) * sizeof *streams));
  uint64_t *begins = checked(malloc((n + 1) * sizeof *begins));
  uint64_t *ends = checked(malloc((n + 1) * sizeof *ends));
  /* each live Pointer's request, found again at its free */
  size_t cap = 1024;
  while (cap < 2 * (n + 1)) cap *= 2;
  live_block *table = checked(calloc(cap, sizeof *table));
  /* A block used on other streams (record_stream) keeps its bytes after its free until the
   * work queued on those streams by then is done, as the allocator holds it: its end is the
   * first event at or past that time on the trace's logical clock (when the trace has one). */
  uint64_t busy[TRACE_MAX_STREAMS] = {0}; /* when each stream's queued work completes */
  uint64_t *release = checked(calloc(n + 1, sizeof *release));
  size_t i = 0;
  for (size_t k = 0; k < t.count; k++) {
    const trace_event *e = &t.events[k];
    uint64_t now = e->time >= 0 ? (uint64_t)e->time : 0;
    if (e->act == TRACE_ALLOCATE) {
      sizes[i] = e->size;
      streams[i] = e->stream;
      begins[i] = k;
      ends[i] = UINT64_MAX;
      live_block *b = find_slot(table, cap, e->id, true);
      *b = (live_block){.id = e->id, .state = LIVE, .pair = i++};
    } else if (e->act == TRACE_ENQUEUE) {
      busy[e->stream] = (busy[e->stream] > now ? busy[e->stream] : now) + e->size;
    } else if (e->act == TRACE_RECORD_STREAM) {
      live_block *b = find_slot(table, cap, e->id, false);
      if (b != NULL) b->streams |= (uint64_t)1 << e->stream;
    } else if (e->act == TRACE_FREE) {
      live_block *b = find_slot(table, cap, e->id, false);
      if (b == NULL) continue; /* allocated before the log began */
      ends[b->pair] = k;
      for (int u = 0; u < TRACE_MAX_STREAMS; u++)
        if ((b->streams >> u & 1) && busy[u] > now && e->time >= 0 && busy[u] > release[b->pair])
          release[b->pair] = busy[u];
      b->state = GONE;
    }
  }
  for (size_t r = 0; r < n; r++) /* the first event at or past the release time */
    for (size_t k = (size_t)ends[r]; release[r] != 0 && ends[r] != UINT64_MAX && k < t.count; k++)
      if (t.events[k].time >= 0 && (uint64_t)t.events[k].time >= release[r]) {
        ends[r] = k;
        break;
      } else if (k + 1 == t.count) {
        ends[r] = UINT64_MAX;
      }
  free(release);
  free(table);
  trace_free(&t);
  const char *dir = getenv("TMPDIR");
  snprintf(plan_path, sizeof plan_path, "%s/replay_trace_plan_XXXXXX",
           dir != NULL && dir[0] != '\0' ? dir : "/tmp");
  int fd = mkstemp(plan_path);
  if (fd < 0) {
    fprintf(stderr, "cannot make a temporary plan file %s: %s\n", plan_path, strerror(errno));
    plan_path[0] = '\0';
  } else {
    close(fd);
    atexit(remove_plan);
  }
  uint64_t arena = 0;
  c10c_status st = plan_path[0] == '\0' ? C10C_STATUS_ERROR
                                        : c10c_plan_make(&arena, NULL, plan_path, 0, n, sizes,
                                                         streams, begins, ends);
  if (plan_path[0] != '\0' && st != C10C_STATUS_OK)
    fprintf(stderr, "%s: c10c_plan_make: %s\n", from, c10c_last_error_message());
  free(sizes);
  free(streams);
  free(begins);
  free(ends);
  return st == C10C_STATUS_OK ? 0 : -1;
}

static const char usage[] =
    "usage: replay_trace TRACE.csv [--config S] [--capacity BYTES] [--no-search] [--repeat N] "
    "[--snapshot FILE] [--skip-record-stream] [--keep-going] [--plan-from TRACE2]\n";

/* A refused command line: one line naming the problem, then the usage line; exit status 2. */
static int refuse(const char *what, const char *arg) {
  fprintf(stderr, "replay_trace: %s %s; %s", what, arg, usage);
  return 2;
}

/* A whole decimal number (no sign, no trailing text) within max. */
static bool parse_count(const char *s, unsigned long long max, unsigned long long *out) {
  if (*s < '0' || *s > '9') return false;
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0' || v > max) return false;
  *out = v;
  return true;
}

int main(int argc, char **argv) {
  const char *path = NULL, *config = "", *plan_from = NULL;
#if SIZE_MAX < UINT64_MAX
  size_t capacity = (size_t)3 << 29; /* 1.5 GiB: what a 32-bit address space models */
#else
  size_t capacity = (size_t)80 << 30;
#endif
  bool search = true;
  int repeat = 3;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool takes_value = strcmp(a, "--config") == 0 || strcmp(a, "--capacity") == 0 ||
                       strcmp(a, "--snapshot") == 0 || strcmp(a, "--repeat") == 0 ||
                       strcmp(a, "--plan-from") == 0;
    if (takes_value && i + 1 == argc) return refuse("option needs a value:", a);
    unsigned long long n = 0;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage, stdout);
      return 0;
    } else if (strcmp(a, "--config") == 0) {
      config = argv[++i];
    } else if (strcmp(a, "--capacity") == 0) {
      if (!parse_count(argv[++i], SIZE_MAX / 2, &n) || n == 0)
        return refuse("--capacity takes a number of bytes, not", argv[i]);
      capacity = (size_t)n;
    } else if (strcmp(a, "--no-search") == 0) {
      search = false;
    } else if (strcmp(a, "--keep-going") == 0) {
      keep_going = true;
    } else if (strcmp(a, "--skip-record-stream") == 0) {
      skip_record_stream = true;
    } else if (strcmp(a, "--snapshot") == 0) {
      snapshot_path = argv[++i];
    } else if (strcmp(a, "--plan-from") == 0) {
      plan_from = argv[++i];
    } else if (strcmp(a, "--repeat") == 0) {
      if (!parse_count(argv[++i], 1000000, &n))
        return refuse("--repeat takes a count, not", argv[i]);
      repeat = (int)n;
    } else if (a[0] == '-' && a[1] != '\0') {
      return refuse("unknown option", a);
    } else if (path != NULL) {
      return refuse("one trace at a time; also given", a);
    } else {
      path = a;
    }
  }
  if (path == NULL) {
    fputs(usage, stderr);
    return 2;
  }
  trace t;
  char err[512];
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    fprintf(stderr, "cannot open %s\n", path);
    return 1;
  }
  int loaded = trace_csv_read(&t, f, err, sizeof err);
  fclose(f);
  metrics m = {0};
  if (loaded == 0 && check_pointers(&t, &m.unknown_frees, err, sizeof err) != 0) {
    trace_free(&t);
    loaded = -1;
  }
  if (loaded != 0) {
    fprintf(stderr, "%s: %s\n", path, err);
    return 1;
  }
  /* a 32-bit build's allocator takes sizes up to SIZE_MAX / 2: a larger one is refused here,
   * not truncated */
  for (size_t k = 0; k < t.count; k++) {
    const trace_event *e = &t.events[k];
    if (e->act == TRACE_ALLOCATE && e->size > SIZE_MAX / 2) {
      fprintf(stderr,
              "%s: line %zu: an allocation of %" PRIu64
              " bytes is beyond this build's address space (at most %zu bytes)\n",
              path, e->line, e->size, (size_t)SIZE_MAX / 2);
      trace_free(&t);
      return 1;
    }
  }
  if (m.unknown_frees > 0)
    fprintf(stderr,
            "%s: %" PRId64
            " frees of pointers the log never allocated (allocated before it "
            "began) skipped\n",
            path, m.unknown_frees);
  if (c10c_cuda_init() != C10C_STATUS_OK || bind_stub() != 0) {
    fprintf(stderr, "needs the stand-in driver (C10C_CUDA_DRIVER, C10C_STUB_FAKE=1): %s\n",
            c10c_last_error_message());
    trace_free(&t);
    return 1;
  }
  char *planned_config = NULL;
  if (plan_from != NULL) {
    if (make_plan(plan_from) != 0) {
      trace_free(&t);
      return 1;
    }
    size_t len = strlen(config) + strlen(plan_path) + 16;
    planned_config = checked(malloc(len));
    snprintf(planned_config, len, "%s%splan_file:%s", config, config[0] != '\0' ? "," : "",
             plan_path);
    config = planned_config;
  }
  replayer r = {.t = &t, .table_cap = 1024, .addr_cap = 1 << 20};
  for (size_t k = 0; k < t.count && !r.marked; k++) r.marked = t.events[k].act == TRACE_STEP_BEGIN;
  r.table = checked(calloc(r.table_cap, sizeof *r.table));
  r.addresses[0] = checked(malloc(r.addr_cap * sizeof(uintptr_t)));
  r.addresses[1] = checked(malloc(r.addr_cap * sizeof(uintptr_t)));
  stub_set_capacity(capacity); /* before the settings: a plan file's arena may be made then */
  if (c10c_allocator_get(&r.alloc, C10C_DEVICE_TYPE_CUDA) != C10C_STATUS_OK ||
      c10c_cuda_set_allocator_settings(config) != C10C_STATUS_OK) {
    fprintf(stderr, "%s\n", c10c_last_error_message());
    return 1;
  }
  for (int i = 0; i < t.streams; i++) {
    if (i == 0)
      c10c_cuda_default_stream(&r.streams[i], 0);
    else
      c10c_cuda_stream_from_pool(&r.streams[i], 0, 0);
    c10c_cuda_stream_handle(&r.handles[i], r.streams[i]);
  }
  m.pair_ns = checked(malloc(((size_t)1 << 22) * sizeof *m.pair_ns));
  bool ok = run(&r, &m);
  free_all(&r);
  /* host time per malloc+free pair: more runs timing the calls only */
  metrics timing = {.pair_ns = m.pair_ns, .timing = true};
  for (int i = 0; ok && i < repeat; i++) {
    ok = run(&r, &timing);
    free_all(&r);
  }
  m.npair = timing.npair;
  m.pairs = timing.pairs;
  m.host_ns_total = timing.host_ns_total;
  /* the smallest capacity that completes, to 2 MiB */
  size_t cmin = 0;
  if (ok && search) {
    size_t lo = (size_t)r.peak_live, hi = (size_t)m.peak_reserved + ((size_t)64 << 20);
    stub_set_capacity(hi);
    bool fits = run(&r, NULL);
    free_all(&r);
    if (fits) {
      while (hi - lo > ((size_t)2 << 20)) {
        size_t mid = lo + (hi - lo) / 2;
        stub_set_capacity(mid);
        bool done = run(&r, NULL);
        free_all(&r);
        if (done)
          hi = mid;
        else
          lo = mid;
      }
      cmin = hi;
    }
  }
  double overhead = clock_overhead();
  qsort(m.pair_ns, m.npair, sizeof *m.pair_ns, compare_double);
  double p50 = m.npair ? m.pair_ns[m.npair / 2] - 2 * overhead : 0;
  double mean = m.pairs ? m.host_ns_total / (double)m.pairs - 2 * overhead : 0;
  report(path, config, &t, &r, &m, ok, cmin, p50, mean, overhead);
  free(m.pair_ns);
  free(m.steps);
  free(r.table);
  free(r.addresses[0]);
  free(r.addresses[1]);
  free(r.busy);
  free(planned_config);
  trace_free(&t);
  return ok && m.unsafe == 0 ? 0 : 1;
}
