/* Nanoseconds to create and destroy a contiguous 2x3 float32 CPU tensor through libc10c (best of
 * several rounds), its storage alone for comparison, and a view (view, transpose, narrow) of it
 * created and released; then copy_ throughput for 4 MiB contiguous and transposed, against
 * memcpy of the same bytes.
 *
 *   build/tests/bench/bench_tensor [rounds]
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

  c10c_tensor *base;
  if (c10c_tensor_empty(&base, sizes, 2, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS))
    return 1;
  const int64_t shape[2] = {3, 2};
  const char *names[3] = {"view(3, 2)", "transpose(0, 1)", "narrow(1, 1, 2)"};
  for (int op = 0; op < 3; op++) {
    double best = 1e300;
    for (int r = 0; r < rounds; r++) {
      double t0 = now_ns();
      for (int i = 0; i < CALLS; i++) {
        c10c_tensor *v;
        c10c_status st = op == 0   ? c10c_tensor_view(&v, base, shape, 2)
                         : op == 1 ? c10c_tensor_transpose(&v, base, 0, 1)
                                   : c10c_tensor_narrow(&v, base, 1, 1, 2);
        if (st) return 1;
        c10c_tensor_release(v);
      }
      double dt = (now_ns() - t0) / CALLS;
      if (dt < best) best = dt;
    }
    printf("%-16s + release:            %.1f ns\n", names[op], best);
  }
  c10c_tensor_release(base);

  /* copy_ of 1M float32 (4 MiB): contiguous -> one memcpy; transposed -> the strided loop */
  const int64_t big[2] = {1024, 1024};
  c10c_tensor *src, *dst, *srct;
  if (c10c_tensor_empty(&src, big, 2, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS) ||
      c10c_tensor_empty(&dst, big, 2, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS) ||
      c10c_tensor_transpose(&srct, src, 0, 1))
    return 1;
  float *p = c10c_tensor_data(src);
  for (int64_t i = 0; i < 1024 * 1024; i++) p[i] = (float)i;
  double best_memcpy = 1e300, best_copy = 1e300, best_copy_t = 1e300;
  for (int r = 0; r < rounds * 4; r++) {
    double t0 = now_ns();
    memcpy(c10c_tensor_data(dst), p, 4u << 20);
    double dt = now_ns() - t0;
    if (dt < best_memcpy) best_memcpy = dt;
    t0 = now_ns();
    if (c10c_tensor_copy_(dst, src)) return 1;
    dt = now_ns() - t0;
    if (dt < best_copy) best_copy = dt;
    t0 = now_ns();
    if (c10c_tensor_copy_(dst, srct)) return 1;
    dt = now_ns() - t0;
    if (dt < best_copy_t) best_copy_t = dt;
  }
  printf("copy_ 1024x1024 float32 contiguous:  %.0f us (memcpy %.0f us, ratio %.2f)\n",
         best_copy / 1e3, best_memcpy / 1e3, best_copy / best_memcpy);
  printf("copy_ 1024x1024 float32 transposed:  %.0f us (%.2fx memcpy)\n", best_copy_t / 1e3,
         best_copy_t / best_memcpy);
  c10c_tensor_release(srct);
  c10c_tensor_release(src);
  c10c_tensor_release(dst);
  return 0;
}
