/* One allocator, one case, one process (peak RSS is per process): prints
 *   <ns per op> <peak RSS KiB> <peak live KiB>
 * bench/run_alloc.py runs every combination and prints ratios against glibc and c10.
 *
 *   bench_alloc ALLOCATOR CASE [SIZE] [SHIM]
 *   ALLOCATOR: c10c_caching | c10c_default | glibc_malloc | glibc_memalign | c10 | mimalloc |
 * jemalloc CASE: pair (allocate+free SIZE bytes, warm), pair_touch (the same, writing every page),
 *         trace (replay of a CPU inference-like trace), retain (storage retain+release; SIZE
 *         ignored) or atomic (a bare atomic add+sub pair, the reference for retain)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"

#include "c10c/c10c.h"

typedef struct block {
  void *data, *ctx;
  c10c_deleter deleter;
} block;

typedef block (*alloc_fn)(size_t n);
typedef void (*free_fn)(block b);

static c10c_allocator *lib_allocator;

static void *(*shim_alloc)(size_t n, void **ctx, void (**deleter)(void *));
static void (*shim_free)(void *ctx, void (*deleter)(void *));

static block a_c10c(size_t n) {
  c10c_data_ptr p;
  if (c10c_allocator_allocate(&p, lib_allocator, n) != C10C_STATUS_OK) abort();
  return (block){p.data, p.ctx, p.deleter};
}
static void f_c10c(block b) {
  if (b.deleter && b.ctx) b.deleter(b.ctx);
}
static block a_malloc(size_t n) { return (block){malloc(n), NULL, NULL}; }
static void f_malloc(block b) { free(b.data); }
static block a_memalign(size_t n) {
  void *p = NULL;
  if (posix_memalign(&p, 64, n) != 0) abort();
  return (block){p, NULL, NULL};
}

static block a_shim(size_t n) {
  block b;
  void (*d)(void *) = NULL;
  b.data = shim_alloc(n, &b.ctx, &d);
  b.deleter = d;
  return b;
}
static void f_shim(block b) { shim_free(b.ctx, b.deleter); }

/* dlsym returns an object pointer; POSIX guarantees it converts to a function pointer, which
 * ISO C does not, so the bits are copied. */
#define LOAD(fn, handle, symbol)        \
  do {                                  \
    void *sym_ = dlsym(handle, symbol); \
    memcpy(&(fn), &sym_, sizeof(fn));   \
  } while (0)

/* VmHWM, the peak RSS of this process image. (getrusage's ru_maxrss also counts the parent's
 * RSS at fork time, which a Python runner that imported torch inflates by 200 MB.) */
static long peak_rss_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  while (f != NULL && fgets(line, sizeof line, f) != NULL)
    if (strncmp(line, "VmHWM:", 6) == 0) kib = strtol(line + 6, NULL, 10);
  if (f != NULL) fclose(f);
  return kib;
}

static volatile unsigned char sink;

static void touch(void *p, size_t n) {
  unsigned char *c = p;
  for (size_t i = 0; i < n; i += 4096) c[i] = (unsigned char)i;
  if (n) c[n - 1] = 1;
}

static double run_pair(alloc_fn af, free_fn ff, size_t n, bool touching) {
  long iters = n <= 4096 ? 2000000 : n <= (1 << 20) ? 20000 : touching ? 20 : 300;
  for (int w = 0; w < 10; w++) ff(af(n)); /* warm */
  double best = 1e300;
  for (int round = 0; round < 5; round++) {
    double t0 = now_ns();
    for (long i = 0; i < iters; i++) {
      block b = af(n);
      if (touching)
        touch(b.data, n);
      else
        sink = *(volatile unsigned char *)b.data;
      ff(b);
    }
    double dt = (now_ns() - t0) / (double)iters;
    if (dt < best) best = dt;
  }
  return best;
}

/* ---- the trace: a CPU inference-like workload ----
 * Requests of varying sequence length run through a 12-layer transformer block: per layer
 * q/k/v/attention/MLP activations are allocated, touched and freed a few ops later, a KV cache
 * grows per request and is dropped at its end, and small tensors (norm statistics, scalars)
 * churn throughout. Deterministic (fixed seed). */
enum { MAX_LIVE = 4096 };
typedef struct op {
  int alloc; /* 1 alloc, 0 free */
  int slot;
  size_t size;
} op;

static op *trace;
static size_t trace_len, trace_cap;
static size_t live_sizes[MAX_LIVE];
static size_t live_now, live_peak;
static int free_slots[MAX_LIVE], n_free_slots;

static void emit(int alloc, int slot, size_t size) {
  if (trace_len == trace_cap) {
    trace_cap = trace_cap ? trace_cap * 2 : 1 << 16;
    trace = realloc(trace, trace_cap * sizeof *trace);
    if (!trace) abort();
  }
  trace[trace_len++] = (op){alloc, slot, size};
}

static int t_alloc(size_t size) {
  int slot = free_slots[--n_free_slots];
  emit(1, slot, size);
  live_sizes[slot] = size;
  live_now += size;
  if (live_now > live_peak) live_peak = live_now;
  return slot;
}

static void t_free(int slot) {
  emit(0, slot, 0);
  live_now -= live_sizes[slot];
  free_slots[n_free_slots++] = slot;
}

static uint32_t rng = 12345;
static uint32_t next_u32(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}

static void build_trace(void) {
  for (int i = 0; i < MAX_LIVE; i++) free_slots[n_free_slots++] = MAX_LIVE - 1 - i;
  const size_t h = 768, layers = 12, heads = 12;
  for (int request = 0; request < 40; request++) {
    size_t s = 64 * (1 + next_u32() % 8); /* 64..512 tokens */
    size_t b = 1 + next_u32() % 2;
    int kv[24];
    int x = t_alloc(b * s * h * 4);
    for (size_t l = 0; l < layers; l++) {
      int stat1 = t_alloc(b * s * 4), stat2 = t_alloc(b * s * 4);
      int ln = t_alloc(b * s * h * 4);
      int q = t_alloc(b * s * h * 4);
      kv[2 * l] = t_alloc(b * s * h * 4);
      kv[2 * l + 1] = t_alloc(b * s * h * 4);
      t_free(ln);
      int scores = t_alloc(b * heads * s * s * 4);
      int probs = t_alloc(b * heads * s * s * 4);
      t_free(scores);
      int attn = t_alloc(b * s * h * 4);
      t_free(probs);
      t_free(q);
      int proj = t_alloc(b * s * h * 4);
      t_free(attn);
      int res = t_alloc(b * s * h * 4);
      t_free(proj);
      t_free(x);
      int fc = t_alloc(b * s * 4 * h * 4);
      int act = t_alloc(b * s * 4 * h * 4);
      t_free(fc);
      int out = t_alloc(b * s * h * 4);
      t_free(act);
      x = t_alloc(b * s * h * 4);
      t_free(out);
      t_free(res);
      t_free(stat1);
      t_free(stat2);
      for (int k = 0; k < 8; k++) t_free(t_alloc(8 + next_u32() % 512)); /* scalars, shapes */
    }
    int logits = t_alloc(b * 50257 * 4);
    t_free(logits);
    t_free(x);
    for (size_t l = 0; l < 2 * layers; l++) t_free(kv[l]);
  }
}

static double run_trace(alloc_fn af, free_fn ff) {
  static block blocks[MAX_LIVE];
  double best = 1e300;
  for (int round = 0; round < 3; round++) {
    double t0 = now_ns();
    for (size_t i = 0; i < trace_len; i++) {
      const op *o = &trace[i];
      if (o->alloc) {
        blocks[o->slot] = af(o->size);
        touch(blocks[o->slot].data, o->size);
      } else {
        ff(blocks[o->slot]);
      }
    }
    double dt = (now_ns() - t0) / (double)trace_len;
    if (dt < best) best = dt;
  }
  return best;
}

static double run_retain(void) {
  c10c_storage *s;
  if (c10c_storage_new(&s, 64, NULL, C10C_DEVICE_TYPE_CPU, true) != C10C_STATUS_OK) abort();
  c10c_storage *extra = c10c_storage_retain(s); /* shared, as a tensor's storage usually is */
  long iters = 20000000;
  double best = 1e300;
  for (int round = 0; round < 5; round++) {
    double t0 = now_ns();
    for (long i = 0; i < iters; i++) c10c_storage_release(c10c_storage_retain(s));
    double dt = (now_ns() - t0) / (double)iters;
    if (dt < best) best = dt;
  }
  c10c_storage_release(extra);
  c10c_storage_release(s);
  return best;
}

static _Atomic uint64_t counter = 2;
static double run_atomic(void) {
  long iters = 20000000;
  double best = 1e300;
  for (int round = 0; round < 5; round++) {
    double t0 = now_ns();
    for (long i = 0; i < iters; i++) {
      atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
      atomic_fetch_sub_explicit(&counter, 1, memory_order_acq_rel);
    }
    double dt = (now_ns() - t0) / (double)iters;
    if (dt < best) best = dt;
  }
  return best;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bench_alloc ALLOCATOR CASE [SIZE] [SHIM]\n");
    return 2;
  }
  const char *name = argv[1], *which = argv[2];
  size_t size = argc > 3 ? strtoull(argv[3], NULL, 10) : 0;
  alloc_fn af = NULL;
  free_fn ff = NULL;
  if (strcmp(name, "c10c_caching") == 0 || strcmp(name, "c10c_default") == 0) {
    lib_allocator = name[5] == 'c' ? c10c_cpu_caching_allocator() : c10c_cpu_default_allocator();
    af = a_c10c, ff = f_c10c;
  } else if (strcmp(name, "glibc_malloc") == 0) {
    af = a_malloc, ff = f_malloc;
  } else if (strcmp(name, "glibc_memalign") == 0) {
    af = a_memalign, ff = f_malloc;
  } else if (strcmp(name, "c10") == 0) {
    void *h = argc > 4 ? dlopen(argv[4], RTLD_NOW | RTLD_LOCAL) : NULL;
    if (h == NULL) {
      printf("unavailable\n");
      return 0;
    }
    LOAD(shim_alloc, h, "c10_shim_alloc");
    LOAD(shim_free, h, "c10_shim_free");
    if (shim_alloc == NULL || shim_free == NULL) {
      printf("unavailable\n");
      return 0;
    }
    af = a_shim, ff = f_shim;
  } else {
    fprintf(stderr, "unknown allocator %s\n", name);
    return 2;
  }
  double ns;
  size_t peak_live = 0;
  if (strcmp(which, "pair") == 0)
    ns = run_pair(af, ff, size, false);
  else if (strcmp(which, "pair_touch") == 0)
    ns = run_pair(af, ff, size, true);
  else if (strcmp(which, "trace") == 0) {
    build_trace();
    peak_live = live_peak;
    ns = run_trace(af, ff);
  } else if (strcmp(which, "retain") == 0)
    ns = run_retain();
  else if (strcmp(which, "atomic") == 0)
    ns = run_atomic();
  else {
    fprintf(stderr, "unknown case %s\n", which);
    return 2;
  }
  printf("%.2f %ld %zu\n", ns, peak_rss_kib(), peak_live / 1024);
  return 0;
}
