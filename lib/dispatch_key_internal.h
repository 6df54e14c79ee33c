/* Bit-level helpers shared by dispatch_key.c and dispatch_key_set.c: where a key's bits sit in
 * the 64-bit set word (c10/core/DispatchKeySet.h).
 */
#ifndef C10C_DISPATCH_KEY_INTERNAL_H
#define C10C_DISPATCH_KEY_INTERNAL_H

#include "internal.h"

enum {
  NUM_BACKENDS = 16,
  NUM_FUNCTIONALITY_KEYS = 47, /* Undefined included, as c10's num_functionality_keys */
};

#define FULL_BACKEND_MASK UINT64_C(0xFFFF)

/* The bit of functionality key f (1..46): bit 15 + f. */
static inline uint64_t functionality_bit(c10c_dispatch_key f) {
  return UINT64_C(1) << (NUM_BACKENDS + f - 1);
}

/* The bit of backend component b (1..16): bit b - 1. */
static inline uint64_t backend_bit(c10c_backend_component b) {
  return b == C10C_BACKEND_COMPONENT_INVALID ? 0 : UINT64_C(1) << (b - 1);
}

/* 1-based position of the highest set bit, 0 for 0 (c10's llvm::findLastSet + 1). */
static inline int highest_bit_index(uint64_t x) { return x == 0 ? 0 : 64 - __builtin_clzll(x); }

#endif /* C10C_DISPATCH_KEY_INTERNAL_H */
