/* The offline planner (lib/memory/planner.c) on whole traces and on a synthetic step.
 *
 *   bench_planner [TRACE.csv ...]
 *
 * For each trace (bench/replay_trace's CSV), every allocate row is one request from its row to
 * its free row (never freed: to the end), on the trace's Stream; prints the requests, the live
 * peak (requested bytes), the lower bound (peak of live bytes rounded up to 512), the planned
 * arena, arena / lower bound, utilization (live peak / arena) and the time to plan. Then plans a
 * synthetic step of 20,000 requests (random sizes and lifetimes, fixed seed). Exits 1 when
 * that took over one second of CPU time (the machine may be shared; wall time is printed too),
 * when a trace's arena is over its target (the table below) or its utilization below 0.97,
 * or when the median utilization over the traces is below 0.99. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "planner.h"
#include "trace_csv.h"

/* CPU time of this thread: the machine the benchmark runs on may be shared. */
static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The peak of live requested (unrounded) bytes of the planned requests. */
static uint64_t live_peak(const c10c__plan *p) {
  /* a brute sweep over the plan's times: allocations in order, frees by free_rank */
  uint64_t live = 0, peak = 0;
  size_t f = 0, nfree = 0;
  for (size_t i = 0; i < p->count; i++)
    if (p->free_rank[i] != UINT32_MAX) nfree++;
  for (size_t i = 0; i < p->count; i++) {
    if (p->offsets[i] == C10C__PLAN_UNPLANNED) continue;
    while (f < nfree) {
      const c10c__plan_request *r = &p->requests[p->by_free[f]];
      uint64_t end = r->free == r->alloc ? r->alloc + 1 : r->free;
      if (end > p->requests[i].alloc) break;
      live -= r->size, f++;
    }
    live += p->requests[i].size;
    if (live > peak) peak = live;
  }
  return peak;
}

/* The hard targets on the real traces (bench/replay_trace's peak reserved with expandable
 * segments on the same traces): a plan's arena must not be larger. */
static const struct {
  const char *name;
  uint64_t arena;
} targets[] = {
    {"codelocation_train_expandable", 8541700096ull},
    {"cs336_hanmin_fullstep", 22850568192ull},
    {"cs336_kk_2.7b_ctx128_fullstep", 55511613440ull},
    {"decomfl", 1809842176ull},
    {"ftcourse_notebook", 5916065792ull},
    {"nesta_dit_oom", 23800578048ull},
    {"selectn_llama_10streams", 22150119424ull},
    {"sqattn_compress", 4785700864ull},
};

/* Plans the requests and prints a row; -1 when planning fails, 1 when the arena misses its
 * target or the utilization is below 0.97. *util: live peak / arena. */
static int plan_and_report(const char *name, const c10c__plan_request *req, size_t n,
                           double *seconds, double *util) {
  c10c__plan *plan = NULL;
  double w0 = now(), t0 = cpu_now();
  c10c_status st = c10c__plan_compute(&plan, req, n, 0);
  double t1 = cpu_now(), w1 = now();
  *seconds = t1 - t0;
  if (st != C10C_STATUS_OK) {
    fprintf(stderr, "%s: %s\n", name, c10c_last_error_message());
    return -1;
  }
  uint64_t lb = c10c__plan_lower_bound(plan), peak = live_peak(plan);
  *util = plan->arena ? (double)peak / (double)plan->arena : 1.0;
  const char *verdict = *util >= 0.97 ? "" : " utilization below 0.97";
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
    if (strcmp(name, targets[i].name) == 0 && plan->arena > targets[i].arena)
      verdict = " over its target";
  printf("%-32s %8zu %12llu %12llu %12llu %8.5f %8.5f %6.3f %6.3f%s\n", name, n,
         (unsigned long long)peak, (unsigned long long)lb, (unsigned long long)plan->arena,
         lb ? (double)plan->arena / (double)lb : 1.0, *util, *seconds, w1 - w0, verdict);
  c10c__plan_destroy(plan);
  return verdict[0] ? 1 : 0;
}

static int cmp_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return a < b ? -1 : a > b;
}

/* id -> request index, open addressing */
typedef struct id_map {
  uint64_t *ids;
  size_t *vals;
  size_t cap;
} id_map;

static size_t *map_slot(id_map *m, uint64_t id, bool insert) {
  size_t h = (size_t)((id * 0x9E3779B97F4A7C15ull) >> 20) & (m->cap - 1);
  while (m->vals[h] != SIZE_MAX) {
    if (m->ids[h] == id) return &m->vals[h];
    h = (h + 1) & (m->cap - 1);
  }
  if (!insert) return NULL;
  m->ids[h] = id;
  return &m->vals[h];
}

static int bench_trace(const char *path, double *util) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return -1;
  }
  trace t;
  char err[512];
  int rc = trace_csv_read(&t, f, err, sizeof err);
  fclose(f);
  if (rc != 0) {
    fprintf(stderr, "%s: %s\n", path, err);
    return -1;
  }
  c10c__plan_request *req = malloc((t.count + 1) * sizeof *req);
  id_map m = {0};
  m.cap = 16;
  while (m.cap < 2 * t.count + 2) m.cap *= 2;
  m.ids = malloc(m.cap * sizeof *m.ids);
  m.vals = malloc(m.cap * sizeof *m.vals);
  if (!req || !m.ids || !m.vals) {
    fprintf(stderr, "out of memory\n");
    return -1;
  }
  for (size_t k = 0; k < m.cap; k++) m.vals[k] = SIZE_MAX;
  size_t n = 0;
  for (size_t k = 0; k < t.count; k++) {
    const trace_event *e = &t.events[k];
    if (e->act == TRACE_ALLOCATE) {
      req[n] = (c10c__plan_request){e->size, k, C10C__PLAN_NEVER, (uint32_t)e->stream, false};
      *map_slot(&m, e->id, true) = n++;
    } else if (e->act == TRACE_FREE) {
      size_t *v = map_slot(&m, e->id, false);
      if (v && *v != SIZE_MAX && req[*v].free == C10C__PLAN_NEVER) req[*v].free = k;
    }
  }
  const char *base = strrchr(path, '/');
  char name[256];
  snprintf(name, sizeof name, "%s", base ? base + 1 : path);
  char *dot = strstr(name, ".packed");
  if (!dot) dot = strstr(name, ".csv");
  if (dot) *dot = '\0';
  double s;
  rc = plan_and_report(name, req, n, &s, util);
  free(req), free(m.ids), free(m.vals);
  trace_free(&t);
  return rc;
}

static uint64_t rng_state = 0x243F6A8885A308D3ull;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return rng_state;
}

int main(int argc, char **argv) {
  printf("%-32s %8s %12s %12s %12s %8s %8s %6s %6s\n", "trace", "requests", "live_peak",
         "lower_bound", "arena", "arena/lb", "util", "cpu_s", "wall_s");
  int failed = 0;
  double *utils = malloc((size_t)(argc > 1 ? argc : 1) * sizeof *utils);
  if (!utils) return 2;
  for (int a = 1; a < argc; a++)
    if (bench_trace(argv[a], &utils[a - 1]) != 0) failed = 1;
  if (argc > 1) {
    /* the median utilization over the traces must be at least 0.99 */
    qsort(utils, (size_t)argc - 1, sizeof *utils, cmp_double);
    size_t k = (size_t)argc - 1;
    double median = k % 2 ? utils[k / 2] : (utils[k / 2 - 1] + utils[k / 2]) / 2;
    printf("median utilization over %zu traces: %.5f\n", k, median);
    if (median < 0.99) {
      fprintf(stderr, "median utilization %.5f is below 0.99\n", median);
      failed = 1;
    }
  }
  free(utils);
  /* a synthetic step: 20,000 requests, sizes 512 B .. 64 MiB (log-uniform), lifetimes mostly
   * short with some long ones, on 2 streams */
  enum { N = 20000 };
  c10c__plan_request *req = malloc(N * sizeof *req);
  if (!req) return 2;
  for (size_t i = 0; i < N; i++) {
    uint64_t size = (uint64_t)1 << (9 + rng() % 17);
    size += rng() % size;
    uint64_t alloc = 2 * i, life = rng() % 8 == 0 ? rng() % (2 * N) : rng() % 200;
    req[i] = (c10c__plan_request){size, alloc, alloc + 1 + life, (uint32_t)(rng() % 2), false};
  }
  double s = 0, util;
  if (plan_and_report("synthetic-20000", req, N, &s, &util) < 0) failed = 1;
  free(req);
  if (s > 1.0) {
    fprintf(stderr, "planning 20,000 requests took %.3f s of CPU time, over one second\n", s);
    failed = 1;
  }
  return failed;
}
