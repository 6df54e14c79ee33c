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

/* The per-backend blocks: six blocks of 17 keys from StartOfDenseBackends (48), each a
 * placeholder followed by one key per backend component. */
enum { BLOCK_START = C10C_DISPATCH_KEY_START_OF_DENSE_BACKENDS, BLOCK_SIZE = 17 };

/* The functionality of each block, in block order. */
static const c10c_dispatch_key block_functionality[6] = {
    C10C_DISPATCH_KEY_DENSE,         C10C_DISPATCH_KEY_QUANTIZED,
    C10C_DISPATCH_KEY_SPARSE,        C10C_DISPATCH_KEY_SPARSE_CSR,
    C10C_DISPATCH_KEY_NESTED_TENSOR, C10C_DISPATCH_KEY_AUTOGRAD_FUNCTIONALITY};

static inline bool key_in_backend_blocks(c10c_dispatch_key k) {
  return k >= BLOCK_START && k <= C10C_DISPATCH_KEY_AUTOGRAD_META;
}

static inline bool key_is_alias(c10c_dispatch_key k) {
  return k >= C10C_DISPATCH_KEY_AUTOGRAD &&
         k <= C10C_DISPATCH_KEY_COMPOSITE_EXPLICIT_AUTOGRAD_NON_FUNCTIONAL;
}

/* c10's toFunctionalityKey. */
static inline c10c_dispatch_key key_functionality(c10c_dispatch_key k) {
  if (k <= C10C_DISPATCH_KEY_END_OF_FUNCTIONALITY_KEYS) return k;
  if (key_in_backend_blocks(k)) return block_functionality[(k - BLOCK_START) / BLOCK_SIZE];
  return C10C_DISPATCH_KEY_UNDEFINED;
}

/* c10's toBackendComponent(DispatchKey); the placeholders give INVALID (0). */
static inline c10c_backend_component key_backend(c10c_dispatch_key k) {
  if (!key_in_backend_blocks(k)) return C10C_BACKEND_COMPONENT_INVALID;
  return (c10c_backend_component)((k - BLOCK_START) % BLOCK_SIZE);
}

static inline bool key_is_per_backend_functionality(c10c_dispatch_key k) {
  return k == C10C_DISPATCH_KEY_DENSE || k == C10C_DISPATCH_KEY_QUANTIZED ||
         k == C10C_DISPATCH_KEY_SPARSE || k == C10C_DISPATCH_KEY_SPARSE_CSR ||
         k == C10C_DISPATCH_KEY_NESTED_TENSOR || k == C10C_DISPATCH_KEY_AUTOGRAD_FUNCTIONALITY;
}

/* c10's toRuntimePerBackendFunctionalityKey; backend 0 gives the block's placeholder. */
static inline c10c_dispatch_key key_for_backend(c10c_dispatch_key functionality,
                                                c10c_backend_component backend) {
  if (backend > C10C_BACKEND_COMPONENT_META) return C10C_DISPATCH_KEY_UNDEFINED;
  for (int block = 0; block < 6; block++)
    if (block_functionality[block] == functionality)
      return (c10c_dispatch_key)(BLOCK_START + BLOCK_SIZE * block + backend);
  return C10C_DISPATCH_KEY_UNDEFINED;
}

#endif /* C10C_DISPATCH_KEY_INTERNAL_H */
