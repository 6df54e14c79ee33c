/* Nanoseconds per call of libc10c's value-type operations from C: dispatch key set algebra,
 * iteration and printing, type promotion and device parsing. Each figure is the best of several
 * timed rounds of many calls through the shared library (as a host application calls them).
 *
 *   build/tests/bench/bench_dispatch_key_set [rounds]
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>

#include "bench_clock.h"

#include "c10c/c10c.h"

enum { CALLS = 1000000 };

/* Keeps results alive so the loops are not optimised away. */
static volatile uint64_t sink;

typedef void (*bench_fn)(int n);

static c10c_dispatch_key_set cpu_tensor;
static const c10c_dispatch_key four_keys[] = {
    C10C_DISPATCH_KEY_CPU, C10C_DISPATCH_KEY_AD_INPLACE_OR_VIEW, C10C_DISPATCH_KEY_AUTOGRAD_CPU,
    C10C_DISPATCH_KEY_AUTOCAST_CPU};

static void b_from_keys(int n) {
  c10c_dispatch_key_set ks;
  for (int i = 0; i < n; i++) {
    c10c_dispatch_key_set_from_keys(&ks, four_keys, 4);
    sink += ks.repr;
  }
}

static void b_has(int n) {
  bool b;
  for (int i = 0; i < n; i++) {
    c10c_dispatch_key_set_has(&b, cpu_tensor, (c10c_dispatch_key)(49 + (i & 15)));
    sink += b;
  }
}

static void b_add(int n) {
  c10c_dispatch_key_set ks;
  for (int i = 0; i < n; i++) {
    c10c_dispatch_key_set_add(&ks, cpu_tensor, C10C_DISPATCH_KEY_CONJUGATE);
    sink += ks.repr;
  }
}

static void b_remove(int n) {
  c10c_dispatch_key_set ks;
  for (int i = 0; i < n; i++) {
    c10c_dispatch_key_set_remove(&ks, cpu_tensor, C10C_DISPATCH_KEY_AUTOGRAD_CPU);
    sink += ks.repr;
  }
}

static void b_union(int n) {
  c10c_dispatch_key_set other = {(uint64_t)1 << 31};
  for (int i = 0; i < n; i++) sink += c10c_dispatch_key_set_union(cpu_tensor, other).repr;
}

static void b_difference(int n) {
  c10c_dispatch_key_set other = {UINT64_C(0x1000000001)};
  for (int i = 0; i < n; i++) sink += c10c_dispatch_key_set_difference(cpu_tensor, other).repr;
}

static void b_highest(int n) {
  for (int i = 0; i < n; i++) sink += c10c_dispatch_key_set_highest_priority_key(cpu_tensor);
}

static void b_table_index(int n) {
  for (int i = 0; i < n; i++)
    sink += (uint64_t)c10c_dispatch_key_set_dispatch_table_index(cpu_tensor);
}

static void b_iterate(int n) {
  for (int i = 0; i < n; i++)
    for (c10c_dispatch_key k = c10c_dispatch_key_set_next(cpu_tensor, 0); k != 0;
         k = c10c_dispatch_key_set_next(cpu_tensor, k))
      sink += k;
}

static void b_for_tensor(int n) {
  c10c_dispatch_key_set ks;
  for (int i = 0; i < n; i++) {
    c10c_dispatch_key_set_for_tensor(&ks, C10C_DTYPE_FLOAT32, C10C_LAYOUT_STRIDED,
                                     C10C_DEVICE_TYPE_CPU, false);
    sink += ks.repr;
  }
}

static void b_to_string(int n) {
  char buf[C10C_DISPATCH_KEY_SET_STRING_MAX];
  for (int i = 0; i < n; i++) {
    c10c_dispatch_key_set_to_string(buf, sizeof buf, NULL, cpu_tensor);
    sink += (uint64_t)buf[20];
  }
}

static void b_promote(int n) {
  c10c_dtype t;
  for (int i = 0; i < n; i++) {
    c10c_promote_types(&t, (c10c_dtype)(i & 7), C10C_DTYPE_FLOAT16);
    sink += (uint64_t)t;
  }
}

static void b_device(int n) {
  c10c_device d;
  for (int i = 0; i < n; i++) {
    c10c_device_from_string(&d, "cuda:0");
    sink += (uint64_t)d.index;
  }
}

typedef struct bench {
  const char *name;
  bench_fn fn;
  int calls_per_iteration;
} bench;

static const bench benches[] = {
    {"dispatch_key_set_from_keys (4 keys)", b_from_keys, 1},
    {"dispatch_key_set_has", b_has, 1},
    {"dispatch_key_set_add", b_add, 1},
    {"dispatch_key_set_remove", b_remove, 1},
    {"dispatch_key_set_union", b_union, 1},
    {"dispatch_key_set_difference", b_difference, 1},
    {"dispatch_key_set_highest_priority_key", b_highest, 1},
    {"dispatch_key_set_dispatch_table_index", b_table_index, 1},
    {"dispatch_key_set_next (per key, 4-key set)", b_iterate, 5},
    {"dispatch_key_set_for_tensor (CPU float)", b_for_tensor, 1},
    {"dispatch_key_set_to_string (4 keys)", b_to_string, 1},
    {"promote_types", b_promote, 1},
    {"device_from_string(\"cuda:0\")", b_device, 1},
};

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 5;
  if (rounds < 1) rounds = 1;
  c10c_dispatch_key_set_from_keys(&cpu_tensor, four_keys, 4);
  printf("%-45s %10s\n", "operation (libc10c, C)", "ns/call");
  for (size_t b = 0; b < sizeof benches / sizeof benches[0]; b++) {
    double best = 1e300;
    for (int r = 0; r < rounds; r++) {
      double t0 = now_ns();
      benches[b].fn(CALLS);
      double dt = (now_ns() - t0) / CALLS / benches[b].calls_per_iteration;
      if (dt < best) best = dt;
    }
    printf("%-45s %10.2f\n", benches[b].name, best);
  }
  return 0;
}
