/* Nanoseconds to create and destroy a contiguous 2x3 float32 CPU tensor through libc10c (best of
 * several rounds), its storage alone for comparison, and a view (view, transpose, narrow) of it
 * created and released; then copy_ throughput for 4 MiB contiguous and transposed, against
 * memcpy of the same bytes.
 *
 *   build/tests/bench/bench_tensor [rounds]
 */
#define _POSIX_C_SOURCE 199309L
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"

#include "c10c/c10c.h"

enum { CALLS = 1000000 };

/* Best time per call of op over `rounds` rounds of CALLS calls. */
typedef int (*bench_op)(void);

static double best_ns(bench_op op, int rounds) {
  double best = 1e300;
  for (int r = 0; r < rounds; r++) {
    double t0 = now_ns();
    for (int i = 0; i < CALLS; i++)
      if (op()) return -1;
    double dt = (now_ns() - t0) / CALLS;
    if (dt < best) best = dt;
  }
  return best;
}

static const int64_t sizes23[2] = {2, 3}, sizes32[2] = {3, 2};
static const c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
static c10c_tensor *base;
static _Atomic int64_t bare_counter;

static int op_empty(void) {
  c10c_tensor *t;
  if (c10c_tensor_empty(&t, sizes23, 2, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS))
    return 1;
  c10c_tensor_release(t);
  return 0;
}

static int op_storage(void) {
  c10c_storage *s;
  if (c10c_storage_new(&s, 24, NULL, C10C_DEVICE_TYPE_CPU, true)) return 1;
  c10c_storage_release(s);
  return 0;
}

static int op_view(void) {
  c10c_tensor *v;
  if (c10c_tensor_view(&v, base, sizes32, 2)) return 1;
  c10c_tensor_release(v);
  return 0;
}

static int op_transpose(void) {
  c10c_tensor *v;
  if (c10c_tensor_transpose(&v, base, 0, 1)) return 1;
  c10c_tensor_release(v);
  return 0;
}

static int op_narrow(void) {
  c10c_tensor *v;
  if (c10c_tensor_narrow(&v, base, 1, 1, 2)) return 1;
  c10c_tensor_release(v);
  return 0;
}

/* base has one reference of its own, so the release is a real decrement, as c10's would be */
static int op_retain_release(void) {
  c10c_tensor_release(c10c_tensor_retain(base));
  return 0;
}

/* what c10's intrusive_ptr copy + destroy does: a relaxed increment, an acq_rel decrement */
static int op_bare_atomics(void) {
  atomic_fetch_add_explicit(&bare_counter, 1, memory_order_relaxed);
  return atomic_fetch_sub_explicit(&bare_counter, 1, memory_order_acq_rel) == 0;
}

static void row(const char *name, double ns, double target) {
  printf("%-34s %8.1f ns   target <= %4.0f ns  %s\n", name, ns, target,
         ns <= target ? "ok" : "MISSED");
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 5;
  atomic_init(&bare_counter, 1);
  if (c10c_tensor_empty(&base, sizes23, 2, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS))
    return 1;
  double empty = best_ns(op_empty, rounds), storage = best_ns(op_storage, rounds);
  double view = best_ns(op_view, rounds), transpose = best_ns(op_transpose, rounds);
  double narrow = best_ns(op_narrow, rounds);
  double rr = best_ns(op_retain_release, rounds), bare = best_ns(op_bare_atomics, rounds);
  if (empty < 0 || storage < 0 || view < 0 || transpose < 0 || narrow < 0) return 1;
  row("tensor_empty(2x3 float32)+release", empty, 30);
  printf("%-34s %8.1f ns   (its storage alone)\n", "storage_new(24 bytes)+release", storage);
  row("view(3, 2)+release", view, 30);
  row("transpose(0, 1)+release", transpose, 30);
  row("narrow(1, 1, 2)+release", narrow, 30);
  printf("%-34s %8.1f ns   bare atomic pair %.1f ns: ratio %.2f, target <= 1.20  %s\n",
         "retain+release", rr, bare, rr / bare, rr <= 1.2 * bare ? "ok" : "MISSED");
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
