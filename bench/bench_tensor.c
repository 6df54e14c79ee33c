/* Nanoseconds to create and destroy a contiguous 2x3 float32 CPU tensor through libc10c (best of
 * several rounds), and to create+destroy its storage alone, for comparison.
 *
 *   build/tests/bench/bench_tensor [rounds]
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "c10c/c10c.h"

enum { CALLS = 2000000 };

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 5;
  const int64_t sizes[2] = {2, 3};
  const c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
  double best_tensor = 1e300, best_storage = 1e300;
  for (int r = 0; r < rounds; r++) {
    double t0 = now_ns();
    for (int i = 0; i < CALLS; i++) {
      c10c_tensor *t;
      if (c10c_tensor_empty(&t, sizes, 2, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS))
        return 1;
      c10c_tensor_release(t);
    }
    double dt = (now_ns() - t0) / CALLS;
    if (dt < best_tensor) best_tensor = dt;
    t0 = now_ns();
    for (int i = 0; i < CALLS; i++) {
      c10c_storage *s;
      if (c10c_storage_new(&s, 24, NULL, C10C_DEVICE_TYPE_CPU, true)) return 1;
      c10c_storage_release(s);
    }
    dt = (now_ns() - t0) / CALLS;
    if (dt < best_storage) best_storage = dt;
  }
  printf("tensor_empty(2x3 float32) + release: %.1f ns\n", best_tensor);
  printf("storage_new(24 bytes) + release:     %.1f ns\n", best_storage);
  return 0;
}
