/* Host overhead of the CUDA caching engine (lib/memory/caching_engine.c): nanoseconds per cached
 * malloc+free pair (the block comes from the pool, no backend call), over a fake backend of
 * fabricated addresses, with a few live blocks per pool as a real program has; median of rounds,
 * against the project's target of 150 ns. Then one step of requests (malloc+free pairs of mixed
 * sizes, a few live at once) replayed with a step marker after each, by the caching engine and
 * in planned mode (planning:True: served from the plan's arena from the second step on), ns per
 * pair side by side. White-box: links the static library.
 *
 *   build/tests/bench/bench_engine [rounds]
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>

#include "bench_clock.h"

#include "caching_engine.h"
#include "plan_engine.h"

static uintptr_t next_address = 0x10000000;

static c10c_status fake_malloc(void *self, int device, size_t size, void **out) {
  (void)self, (void)device;
  *out = (void *)next_address;
  next_address += size + 4096;
  return C10C_STATUS_OK;
}

static void fake_free(void *self, int device, void *ptr, size_t size) {
  (void)self, (void)device, (void)ptr, (void)size;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One step: 4 blocks live at once, 16 malloc+free pairs of sizes from 4 KiB to 12 MiB. */
static int one_step(c10c__engine *e) {
  static const size_t sizes[16] = {4096,    1 << 20, 8 << 20, 512,    12 << 20, 65536,
                                   2 << 20, 4096,    3 << 20, 200000, 8 << 20,  4096,
                                   16384,   1 << 20, 6 << 20, 1000};
  void *live[4] = {NULL, NULL, NULL, NULL};
  for (int i = 0; i < 16; i++) {
    if (live[i % 4] != NULL) c10c__engine_free(e, live[i % 4]);
    if (c10c__engine_malloc(e, 0, sizes[i], 0, &live[i % 4])) return 1;
  }
  for (int i = 0; i < 4; i++) c10c__engine_free(e, live[i]);
  return c10c__engine_step(e, 0) != C10C_STATUS_OK;
}

/* Median ns per malloc+free pair of one_step replayed, with planning on or off. */
static double steps(bool planning, int rounds) {
  c10c__engine *e = NULL;
  c10c__segment_backend backend = {.malloc = fake_malloc, .free = fake_free};
  if (c10c__engine_new(&e, backend, 1, &c10c__plan_engine_hooks)) return -1;
  c10c__device_alloc_config config = c10c__device_alloc_config_default();
  config.planning = planning;
  if (c10c__engine_configure(e, &config) || one_step(e) || one_step(e)) return -1;
  enum { STEPS = 20000 };
  double results[1000];
  for (int r = 0; r < rounds; r++) {
    double t0 = now_ns();
    for (int i = 0; i < STEPS; i++)
      if (one_step(e)) return -1;
    results[r] = (now_ns() - t0) / (STEPS * 16.0);
  }
  c10c_memory_stats s = {.struct_size = sizeof s};
  c10c__engine_stats(e, 0, &s);
  if (planning && s.plan_fallbacks != 0) return -1; /* every request served from the plan */
  c10c__engine_destroy(e);
  qsort(results, (size_t)rounds, sizeof(double), by_value);
  return results[rounds / 2];
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 21;
  if (rounds < 1 || rounds > 1000) rounds = 21;
  c10c__engine *e = NULL;
  c10c__segment_backend backend = {.malloc = fake_malloc, .free = fake_free};
  if (c10c__engine_new(&e, backend, 1, &c10c__plan_engine_hooks)) return 1;
  const size_t sizes[2] = {4096, 8 << 20}; /* a small and a large block */
  enum { LIVE = 16, CALLS = 200000 };
  double results[2][1000];
  for (int k = 0; k < 2; k++) {
    void *live[LIVE];
    for (int i = 0; i < LIVE; i++) /* neighbours in the pools */
      if (c10c__engine_malloc(e, 0, sizes[k] + (size_t)i * 512, 0, &live[i])) return 1;
    for (int i = 0; i < LIVE; i += 2) c10c__engine_free(e, live[i]);
    for (int r = 0; r < rounds; r++) {
      double t0 = now_ns();
      for (int i = 0; i < CALLS; i++) {
        void *p;
        if (c10c__engine_malloc(e, 0, sizes[k], 0, &p)) return 1;
        c10c__engine_free(e, p);
      }
      results[k][r] = (now_ns() - t0) / CALLS;
    }
    qsort(results[k], (size_t)rounds, sizeof(double), by_value);
    for (int i = 1; i < LIVE; i += 2) c10c__engine_free(e, live[i]);
  }
  const char *names[2] = {"4 KiB (small pool)", "8 MiB (large pool)"};
  for (int k = 0; k < 2; k++) {
    double median = results[k][rounds / 2];
    printf("cached malloc+free %-20s median %6.1f ns   target <= 150 ns  %s\n", names[k], median,
           median <= 150 ? "ok" : "MISSED");
  }
  c10c__engine_destroy(e);
  double engine = steps(false, rounds), planned = steps(true, rounds);
  if (engine < 0 || planned < 0) return 1;
  printf(
      "replayed step, per malloc+free pair: engine %6.1f ns   planned %6.1f ns   "
      "planned/engine %.2f  %s\n",
      engine, planned, planned / engine, planned <= engine ? "ok" : "SLOWER");
  return 0;
}
