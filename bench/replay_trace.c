/* Replays an allocation trace through libc10c's CUDA caching allocator over the stand-in driver
 * (tests/cuda_stub, in fake-address mode: no memory behind the addresses, so traces of tens of
 * GiB replay anywhere) and prints the metrics of allocators.md section 5.4 as one JSON object.
 *
 *   C10C_CUDA_DRIVER=<libc10c_cuda_stub.so> C10C_STUB_FAKE=1 \
 *     replay_trace TRACE.csv [--config "expandable_segments:True"] [--capacity BYTES]
 *                            [--no-search] [--repeat N] [--snapshot FILE]
 *                            [--skip-record-stream]
 *
 * --skip-record-stream replays without telling the allocator about other streams' uses: the
 * unsafe-reuse check must then find some (the negative control of that metric).
 *
 * The trace is CSV with a header naming its columns: RMM's replay log
 * (Thread,Time,Action,Pointer,Size,Stream) with optional Step,Tag,Phase columns. Actions:
 * allocate, free, record_stream (Pointer used on Stream), enqueue (Size ticks of work on
 * Stream), empty_cache, step_begin (Step). Time is the logical clock in ticks when it is an
 * integer (the stand-in's streams complete work by it); RMM's wall-clock times are ignored.
 * Stream values are names: the first one seen is the default stream, others pool streams.
 * bench/trace_csv.h says exactly what the reader accepts.
 *
 * Metrics: device mallocs and frees per steady step (steps >= 2; maps and unmaps count for
 * expandable segments), cache hit rate over steady steps, peak reserved / peak allocated,
 * peak live requested bytes, the smallest device capacity that completes the trace (binary
 * search, 2 MiB resolution) over peak live requested, address stability (steady-step
 * allocations at the address of the same allocation one step before), unsafe cross-stream
 * reuses (memory handed out while a stream that used it, by record_stream, may still be at work
 * and the allocating stream was not made to wait), retries and OOMs, and host ns per
 * malloc+free pair (median and mean over steady steps).
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- the replay ---- */

static const char *snapshot_path; /* --snapshot: the allocator's state at peak reserved */
static bool skip_record_stream;   /* --skip-record-stream: the negative control of the check */
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

typedef struct live_block {
  uint64_t id; /* 0: empty, UINT64_MAX: tombstone */
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

typedef struct metrics {
  int64_t steady_mallocs, steady_frees, steady_requests, steady_misses;
  int64_t peak_reserved, peak_allocated, retries, ooms, unsafe;
  int64_t stable, compared;
  double host_ns_total;
  int64_t pairs;
  double *pair_ns;
  size_t npair;
  bool failed;
  bool timing; /* a timing run: no statistics read between calls (they would cool the caches) */
} metrics;

typedef struct replayer {
  trace *t;
  uint64_t peak_live; /* requested bytes, found by the measured replay */
  c10c_allocator *alloc;
  c10c_stream streams[64];
  void *handles[64];
  live_block *table;
  size_t table_cap;
  busy_range *busy;
  size_t nbusy, busy_cap;
  uintptr_t *addresses[2]; /* per allocation index within a step: this and the previous step */
  size_t naddr[2], addr_cap;
} replayer;

static live_block *slot_of(replayer *r, uint64_t id, bool insert) {
  size_t i = (size_t)(id * 0x9E3779B97F4A7C15ull >> 40) & (r->table_cap - 1);
  for (;; i = (i + 1) & (r->table_cap - 1)) {
    live_block *b = &r->table[i];
    if (b->id == id) return b;
    if (b->id == 0) return insert ? b : NULL;
    if (b->id == UINT64_MAX && insert) {
      /* reuse the tombstone only if id is not further on */
      live_block *later = slot_of(r, id, false);
      return later ? later : b;
    }
  }
}

static void stats(replayer *r, c10c_memory_stats *s) {
  memset(s, 0, sizeof *s);
  s->struct_size = sizeof *s;
  c10c_allocator_get_stats(r->alloc, s);
}

static void free_all(replayer *r) {
  for (size_t i = 0; i < r->table_cap; i++) {
    if (r->table[i].id != 0 && r->table[i].id != UINT64_MAX) c10c_data_ptr_free(&r->table[i].data);
    r->table[i].id = 0;
  }
  r->nbusy = 0;
  c10c_allocator_empty_cache(r->alloc);
  c10c_allocator_reset_peak_stats(r->alloc);
}

/* Runs the trace once; with m, measures. Returns false on an out-of-memory failure. */
static bool run(replayer *r, metrics *m) {
  trace *t = r->t;
  c10c_memory_stats s;
  int step = 0;
  int64_t step_start_mallocs = 0, step_start_frees = 0;
  uint64_t live = 0; /* requested bytes */
  r->nbusy = 0;
  r->naddr[0] = r->naddr[1] = 0;
  /* each run starts its trace's clock after everything queued by the one before */
  uint64_t base = stub_now();
  for (int i = 0; i < t->streams; i++) {
    uint64_t busy = stub_stream_busy(r->handles[i]);
    if (busy > base) base = busy;
  }
  int cur = 0;
  for (size_t k = 0; k < t->count; k++) {
    const trace_event *e = &t->events[k];
    if (e->time >= 0) {
      uint64_t now = stub_now(), at = base + (uint64_t)e->time;
      if (at > now) stub_advance(at - now);
    }
    bool steady = step >= 2;
    switch (e->act) {
      case TRACE_STEP_BEGIN: {
        if (m != NULL) {
          stats(r, &s);
          if (steady) {
            m->steady_mallocs += s.num_device_alloc - step_start_mallocs;
            m->steady_frees += s.num_device_free - step_start_frees;
          }
          step_start_mallocs = s.num_device_alloc;
          step_start_frees = s.num_device_free;
        }
        step = e->step;
        cur ^= 1;
        r->naddr[cur] = 0;
        break;
      }
      case TRACE_ALLOCATE: {
        c10c_cuda_set_current_stream(r->streams[e->stream]);
        live_block *b = slot_of(r, e->id, true);
        int64_t before = 0;
        if (m != NULL && steady && !m->timing) {
          stats(r, &s);
          before = s.num_device_alloc;
        }
        double t0 = m ? now_ns() : 0;
        c10c_data_ptr d;
        c10c_status st = c10c_allocator_allocate(r->alloc, e->size, &d);
        double t1 = m ? now_ns() : 0;
        if (st != C10C_STATUS_OK) {
          if (m != NULL) {
            fprintf(stderr, "allocation %zu of %" PRIu64 " bytes failed: %s\n", k, e->size,
                    c10c_last_error_message());
            m->failed = true;
          }
          return false;
        }
        *b = (live_block){e->id, d, e->size, (uint64_t)1 << e->stream, SIZE_MAX};
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
        if (steady && !m->timing) {
          stats(r, &s);
          m->steady_requests++;
          m->steady_misses += s.num_device_alloc != before;
        }
        if (steady && m->timing) {
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
        if (b == NULL) break;
        uintptr_t start = (uintptr_t)b->data.data; /* the free clears the data pointer */
        double t0 = m ? now_ns() : 0;
        c10c_data_ptr_free(&b->data);
        double t1 = m ? now_ns() : 0;
        b->id = UINT64_MAX;
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
          if (r->nbusy == r->busy_cap)
            r->busy = realloc(r->busy, (r->busy_cap = r->busy_cap * 2 + 16) * sizeof *r->busy);
          r->busy[r->nbusy++] = (busy_range){start, start + b->size, done, i};
        }
        break;
      }
      case TRACE_RECORD_STREAM: {
        live_block *b = slot_of(r, e->id, false);
        if (b == NULL) break;
        if (!skip_record_stream) c10c_cuda_record_stream_data(&b->data, r->streams[e->stream]);
        b->streams |= (uint64_t)1 << e->stream;
        break;
      }
      case TRACE_ENQUEUE: stub_enqueue(r->handles[e->stream], e->size); break;
      case TRACE_EMPTY_CACHE: c10c_allocator_empty_cache(r->alloc); break;
    }
  }
  if (m != NULL) {
    stats(r, &s);
    if (step >= 2) {
      m->steady_mallocs += s.num_device_alloc - step_start_mallocs;
      m->steady_frees += s.num_device_free - step_start_frees;
    }
    m->peak_reserved = s.reserved_bytes[C10C_STAT_ALL].peak;
    m->peak_allocated = s.allocated_bytes[C10C_STAT_ALL].peak;
    m->retries = s.num_alloc_retries;
    m->ooms = s.num_ooms;
  }
  return true;
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

int main(int argc, char **argv) {
  const char *path = NULL, *config = "";
  size_t capacity = (size_t)80 << 30;
  bool search = true;
  int repeat = 3;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
      config = argv[++i];
    else if (strcmp(argv[i], "--capacity") == 0 && i + 1 < argc)
      capacity = (size_t)strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--no-search") == 0)
      search = false;
    else if (strcmp(argv[i], "--skip-record-stream") == 0)
      skip_record_stream = true;
    else if (strcmp(argv[i], "--snapshot") == 0 && i + 1 < argc)
      snapshot_path = argv[++i];
    else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
      repeat = atoi(argv[++i]);
    else
      path = argv[i];
  }
  if (path == NULL) {
    fprintf(stderr, "usage: replay_trace TRACE.csv [--config S] [--capacity B] [--no-search]\n");
    return 2;
  }
  trace t;
  char err[256];
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    fprintf(stderr, "cannot open %s\n", path);
    return 1;
  }
  int loaded = trace_csv_read(&t, f, err, sizeof err);
  fclose(f);
  if (loaded != 0) {
    fprintf(stderr, "%s: %s\n", path, err);
    return 1;
  }
  if (c10c_cuda_init() != C10C_STATUS_OK || bind_stub() != 0) {
    fprintf(stderr, "needs the stand-in driver (C10C_CUDA_DRIVER, C10C_STUB_FAKE=1): %s\n",
            c10c_last_error_message());
    return 1;
  }
  replayer r = {.t = &t, .table_cap = 1 << 20, .addr_cap = 1 << 20};
  r.table = calloc(r.table_cap, sizeof *r.table);
  r.addresses[0] = malloc(r.addr_cap * sizeof(uintptr_t));
  r.addresses[1] = malloc(r.addr_cap * sizeof(uintptr_t));
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
  metrics m = {0};
  m.pair_ns = malloc(((size_t)1 << 22) * sizeof *m.pair_ns);
  stub_set_capacity(capacity);
  bool ok = run(&r, &m);
  free_all(&r);
  /* host time per malloc+free pair: three more runs timing the calls only */
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
  printf(
      "{\"trace\": \"%s\", \"config\": \"%s\", \"ok\": %s, \"events\": %zu, \"steps\": %d, "
      "\"streams\": %d, \"device_mallocs_per_step\": %.3f, \"device_frees_per_step\": %.3f, "
      "\"hit_rate\": %.6f, \"peak_reserved\": %" PRId64 ", \"peak_allocated\": %" PRId64
      ", \"peak_live_requested\": %" PRIu64
      ", \"reserved_over_allocated\": %.4f, "
      "\"min_capacity\": %zu, \"min_capacity_over_peak_live\": %.4f, "
      "\"address_stability\": %.6f, \"unsafe_reuses\": %" PRId64 ", \"retries\": %" PRId64
      ", \"ooms\": %" PRId64
      ", \"host_ns_p50\": %.1f, \"host_ns_mean\": %.1f, "
      "\"clock_ns\": %.1f}\n",
      path, config, ok ? "true" : "false", t.count, t.steps, t.streams,
      t.steps > 2 ? (double)m.steady_mallocs / (t.steps - 2) : 0.0,
      t.steps > 2 ? (double)m.steady_frees / (t.steps - 2) : 0.0,
      m.steady_requests ? 1.0 - (double)m.steady_misses / (double)m.steady_requests : 1.0,
      m.peak_reserved, m.peak_allocated, r.peak_live,
      m.peak_allocated ? (double)m.peak_reserved / (double)m.peak_allocated : 0.0, cmin,
      r.peak_live ? (double)cmin / (double)r.peak_live : 0.0,
      m.compared ? (double)m.stable / (double)m.compared : 1.0, m.unsafe, m.retries, m.ooms, p50,
      mean, overhead);
  free(m.pair_ns);
  free(r.table);
  free(r.addresses[0]);
  free(r.addresses[1]);
  free(r.busy);
  trace_free(&t);
  return ok && m.unsafe == 0 ? 0 : 1;
}
