/* Checked 64-bit arithmetic: true when the exact result does not fit (c10 uses the same
 * compiler builtins in safe_compute_numel and the stride computations). */
#ifndef C10C_CHECKED_H
#define C10C_CHECKED_H

#include <stdbool.h>
#include <stdint.h>

static inline bool c10c__mul_overflows(int64_t a, int64_t b, int64_t *out) {
  return __builtin_mul_overflow(a, b, out);
}

static inline bool c10c__add_overflows(int64_t a, int64_t b, int64_t *out) {
  return __builtin_add_overflow(a, b, out);
}

static inline bool c10c__umul_overflows(uint64_t a, uint64_t b, uint64_t *out) {
  return __builtin_mul_overflow(a, b, out);
}

static inline bool c10c__uadd_overflows(uint64_t a, uint64_t b, uint64_t *out) {
  return __builtin_add_overflow(a, b, out);
}

#endif /* C10C_CHECKED_H */
