/* The benchmarks' clock: monotonic nanoseconds. Define _POSIX_C_SOURCE (199309L or later) or
 * _GNU_SOURCE before any include, as clock_gettime needs. */
#ifndef C10C_BENCH_CLOCK_H
#define C10C_BENCH_CLOCK_H

#include <time.h>

static inline double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#endif /* C10C_BENCH_CLOCK_H */
