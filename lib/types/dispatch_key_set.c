/* Dispatch key sets: construction from keys, c10's set algebra (remove and difference touch
 * functionality bits only), priority queries, iteration in c10's order, printing, alias-key
 * expansion and the key set of a new tensor (c10/core/DispatchKeySet.h/.cpp, TensorImpl.cpp).
 */
#include <string.h>

#include "dispatch_key_internal.h"

#define DK(name)   C10C_DISPATCH_KEY_##name
#define FBIT(name) functionality_bit(C10C_DISPATCH_KEY_##name)

static c10c_dispatch_key_set make(uint64_t repr) {
  c10c_dispatch_key_set ks = {repr};
  return ks;
}

static c10c_status invalid_key(c10c_dispatch_key k) {
  return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "invalid dispatch key %u", (unsigned)k);
}

/* c10's DispatchKeySet(DispatchKey) on a valid key other than EndOfFunctionalityKeys. */
static uint64_t key_bits(c10c_dispatch_key k) {
  if (k == DK(UNDEFINED) || key_is_alias(k)) return 0;
  if (k < DK(END_OF_FUNCTIONALITY_KEYS)) return functionality_bit(k);
  return functionality_bit(key_functionality(k)) | backend_bit(key_backend(k));
}

static bool settable(c10c_dispatch_key k) {
  return c10c_dispatch_key_is_valid(k) && k != DK(END_OF_FUNCTIONALITY_KEYS);
}

c10c_dispatch_key_set c10c_dispatch_key_set_from_raw(uint64_t repr) { return make(repr); }

c10c_status c10c_dispatch_key_set_from_key(c10c_dispatch_key_set *out, c10c_dispatch_key k) {
  C10C__CHECK_NOT_NULL(out);
  if (!settable(k)) return invalid_key(k);
  *out = make(key_bits(k));
  return C10C_STATUS_OK;
}

c10c_status c10c_dispatch_key_set_from_keys(c10c_dispatch_key_set *out,
                                            const c10c_dispatch_key *keys, size_t n) {
  C10C__CHECK_NOT_NULL(out);
  if (n > 0) C10C__CHECK_NOT_NULL(keys);
  uint64_t repr = 0;
  for (size_t i = 0; i < n; i++) {
    if (!settable(keys[i])) return invalid_key(keys[i]);
    repr |= key_bits(keys[i]);
  }
  *out = make(repr);
  return C10C_STATUS_OK;
}

c10c_status c10c_dispatch_key_set_from_backend(c10c_dispatch_key_set *out,
                                               c10c_backend_component b) {
  C10C__CHECK_NOT_NULL(out);
  if (b > C10C_BACKEND_COMPONENT_META)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "invalid backend component %u", (unsigned)b);
  *out = make(backend_bit(b));
  return C10C_STATUS_OK;
}

c10c_dispatch_key_set c10c_dispatch_key_set_full(void) {
  return make((UINT64_C(1) << (NUM_BACKENDS + NUM_FUNCTIONALITY_KEYS - 1)) - 1);
}

c10c_status c10c_dispatch_key_set_full_after(c10c_dispatch_key_set *out, c10c_dispatch_key k) {
  C10C__CHECK_NOT_NULL(out);
  if (!c10c_dispatch_key_is_valid(k)) return invalid_key(k);
  c10c_dispatch_key f = key_functionality(k);
  uint64_t below = (UINT64_C(1) << (NUM_BACKENDS + f - 1)) - 1;
  *out = make(below | FBIT(PYTHON_DISPATCHER));
  return C10C_STATUS_OK;
}

c10c_status c10c_dispatch_key_set_add(c10c_dispatch_key_set *out, c10c_dispatch_key_set ks,
                                      c10c_dispatch_key k) {
  C10C__CHECK_NOT_NULL(out);
  if (!settable(k)) return invalid_key(k);
  *out = make(ks.repr | key_bits(k));
  return C10C_STATUS_OK;
}

c10c_status c10c_dispatch_key_set_remove(c10c_dispatch_key_set *out, c10c_dispatch_key_set ks,
                                         c10c_dispatch_key k) {
  C10C__CHECK_NOT_NULL(out);
  if (!settable(k)) return invalid_key(k);
  *out = c10c_dispatch_key_set_difference(ks, make(key_bits(k)));
  return C10C_STATUS_OK;
}

c10c_status c10c_dispatch_key_set_remove_backend(c10c_dispatch_key_set *out,
                                                 c10c_dispatch_key_set ks,
                                                 c10c_backend_component b) {
  C10C__CHECK_NOT_NULL(out);
  if (b > C10C_BACKEND_COMPONENT_META)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "invalid backend component %u", (unsigned)b);
  *out = make(ks.repr & ~backend_bit(b));
  return C10C_STATUS_OK;
}

c10c_status c10c_dispatch_key_set_has(bool *out, c10c_dispatch_key_set ks, c10c_dispatch_key k) {
  C10C__CHECK_NOT_NULL(out);
  if (!settable(k)) return invalid_key(k);
  uint64_t bits = key_bits(k);
  *out = (ks.repr & bits) == bits;
  return C10C_STATUS_OK;
}

bool c10c_dispatch_key_set_has_backend(c10c_dispatch_key_set ks, c10c_backend_component b) {
  if (b == C10C_BACKEND_COMPONENT_INVALID || b > C10C_BACKEND_COMPONENT_META) return false;
  return (ks.repr & backend_bit(b)) != 0;
}

bool c10c_dispatch_key_set_has_all(c10c_dispatch_key_set ks, c10c_dispatch_key_set other) {
  return (ks.repr & other.repr) == other.repr;
}

bool c10c_dispatch_key_set_has_any(c10c_dispatch_key_set ks, c10c_dispatch_key_set other) {
  return (ks.repr & other.repr) != 0;
}

bool c10c_dispatch_key_set_is_empty(c10c_dispatch_key_set ks) { return ks.repr == 0; }

bool c10c_dispatch_key_set_equal(c10c_dispatch_key_set a, c10c_dispatch_key_set b) {
  return a.repr == b.repr;
}

c10c_dispatch_key_set c10c_dispatch_key_set_union(c10c_dispatch_key_set a,
                                                  c10c_dispatch_key_set b) {
  return make(a.repr | b.repr);
}

c10c_dispatch_key_set c10c_dispatch_key_set_intersection(c10c_dispatch_key_set a,
                                                         c10c_dispatch_key_set b) {
  return make(a.repr & b.repr);
}

c10c_dispatch_key_set c10c_dispatch_key_set_difference(c10c_dispatch_key_set a,
                                                       c10c_dispatch_key_set b) {
  return make(a.repr & (FULL_BACKEND_MASK | ~b.repr));
}

/* ---- priority ---- */

/* The bits of real keys: every backend and functionality bit below 62. Bits 62 (c10's
 * EndOfFunctionalityKeys sentinel) and 63 name no key; a raw word may still set them
 * (from_raw), and the queries below leave them out, as iteration does, instead of deriving a
 * key beyond the functionality keys and a slot beyond c10's operator table (137, 138) from
 * them. */
static uint64_t key_bits_of(c10c_dispatch_key_set ks) {
  return ks.repr & c10c_dispatch_key_set_full().repr;
}

c10c_dispatch_key c10c_dispatch_key_set_highest_functionality(c10c_dispatch_key_set ks) {
  int i = highest_bit_index(key_bits_of(ks));
  return i <= NUM_BACKENDS ? DK(UNDEFINED) : (c10c_dispatch_key)(i - NUM_BACKENDS);
}

c10c_backend_component c10c_dispatch_key_set_highest_backend(c10c_dispatch_key_set ks) {
  return (c10c_backend_component)highest_bit_index(ks.repr & FULL_BACKEND_MASK);
}

c10c_dispatch_key c10c_dispatch_key_set_highest_priority_key(c10c_dispatch_key_set ks) {
  c10c_dispatch_key f = c10c_dispatch_key_set_highest_functionality(ks);
  if (!key_is_per_backend_functionality(f)) return f;
  return key_for_backend(f, c10c_dispatch_key_set_highest_backend(ks));
}

c10c_dispatch_key c10c_dispatch_key_set_highest_priority_backend_key(c10c_dispatch_key_set ks) {
  uint64_t backend_functionality =
      FBIT(DENSE) | FBIT(QUANTIZED) | FBIT(SPARSE) | FBIT(SPARSE_CSR) | FULL_BACKEND_MASK;
  return c10c_dispatch_key_set_highest_priority_key(make(ks.repr & backend_functionality));
}

/* Operator-table slot of functionality f: one slot per functionality, 16 per per-backend
 * functionality; the per-backend ones before f are Dense(1), Quantized(5), Sparse(8),
 * SparseCsr(9), NestedTensor(10) and AutogradFunctionality(21). */
static int table_offset(c10c_dispatch_key f) {
  static const c10c_dispatch_key per_backend[] = {DK(DENSE),         DK(QUANTIZED),
                                                  DK(SPARSE),        DK(SPARSE_CSR),
                                                  DK(NESTED_TENSOR), DK(AUTOGRAD_FUNCTIONALITY)};
  int offset = f;
  for (size_t i = 0; i < sizeof per_backend / sizeof per_backend[0]; i++)
    if (per_backend[i] < f) offset += NUM_BACKENDS - 1;
  return offset;
}

int32_t c10c_dispatch_key_set_dispatch_table_index(c10c_dispatch_key_set ks) {
  c10c_dispatch_key f = (c10c_dispatch_key)highest_bit_index(key_bits_of(ks) >> NUM_BACKENDS);
  if (f == DK(UNDEFINED)) return 0;
  int backend = 0;
  if (key_is_per_backend_functionality(f))
    backend = highest_bit_index((ks.repr & FULL_BACKEND_MASK) >> 1);
  return table_offset(f) + backend;
}

/* ---- iteration ---- */

/* The first key at or after (functionality f, backend b) in iteration order. */
static c10c_dispatch_key next_from(uint64_t repr, c10c_dispatch_key f, int b) {
  uint64_t backends = repr & FULL_BACKEND_MASK;
  for (; f < DK(END_OF_FUNCTIONALITY_KEYS); f++, b = 1) {
    if (!(repr & functionality_bit(f))) continue;
    if (!key_is_per_backend_functionality(f)) return f;
    uint64_t rest = b > NUM_BACKENDS ? 0 : backends >> (b - 1);
    if (rest != 0) {
      int next_backend = b + __builtin_ctzll(rest);
      return key_for_backend(f, (c10c_backend_component)next_backend);
    }
  }
  return DK(UNDEFINED);
}

c10c_dispatch_key c10c_dispatch_key_set_next(c10c_dispatch_key_set ks, c10c_dispatch_key prev) {
  if (prev == DK(UNDEFINED)) return next_from(ks.repr, 1, 1);
  if (!settable(prev) || key_is_alias(prev)) return DK(UNDEFINED);
  c10c_dispatch_key f = key_functionality(prev);
  if (!key_is_per_backend_functionality(f))
    return next_from(ks.repr, (c10c_dispatch_key)(f + 1), 1);
  /* A runtime key continues with the next backend; a bare building block (Dense) or a block
   * placeholder starts at the first backend of its functionality. */
  c10c_backend_component b = key_backend(prev);
  return next_from(ks.repr, f, b + 1);
}

size_t c10c_dispatch_key_set_to_array(c10c_dispatch_key *out, size_t capacity,
                                      c10c_dispatch_key_set ks) {
  size_t n = 0;
  for (c10c_dispatch_key k = c10c_dispatch_key_set_next(ks, DK(UNDEFINED)); k != DK(UNDEFINED);
       k = c10c_dispatch_key_set_next(ks, k)) {
    if (n < capacity && out != NULL) out[n] = k;
    n++;
  }
  return n;
}

size_t c10c_dispatch_key_set_size(c10c_dispatch_key_set ks) {
  return c10c_dispatch_key_set_to_array(NULL, 0, ks);
}

/* Appends text to buf (of capacity cap) at *len; text beyond cap is counted, not written. */
static void append(char *buf, size_t cap, size_t *len, const char *text) {
  size_t n = strlen(text);
  if (*len < cap) memcpy(buf + *len, text, *len + n <= cap ? n : cap - *len);
  *len += n;
}

c10c_status c10c_dispatch_key_set_to_string(char *out, size_t out_size, size_t *out_len,
                                            c10c_dispatch_key_set ks) {
  if (out_size > 0) C10C__CHECK_NOT_NULL(out);
  size_t len = 0, cap = out_size > 0 ? out_size - 1 : 0;
  append(out, cap, &len, "DispatchKeySet(");
  const char *sep = "";
  for (c10c_dispatch_key k = c10c_dispatch_key_set_next(ks, DK(UNDEFINED)); k != DK(UNDEFINED);
       k = c10c_dispatch_key_set_next(ks, k)) {
    append(out, cap, &len, sep);
    append(out, cap, &len, c10c_dispatch_key_name(k));
    sep = ", ";
  }
  append(out, cap, &len, ")");
  if (out_size > 0) out[len < cap ? len : cap] = '\0';
  if (out_len != NULL) *out_len = len;
  if (len >= out_size)
    return c10c__fail(C10C_STATUS_BUFFER_TOO_SMALL,
                      "c10c_dispatch_key_set_to_string: %zu bytes needed, the buffer has %zu",
                      len + 1, out_size);
  return C10C_STATUS_OK;
}

/* ---- alias keys and derived sets (c10/core/DispatchKeySet.cpp, PyTorch 2.13) ---- */

#define AUTOGRAD_KEYSET \
  (FBIT(AUTOGRAD_FUNCTIONALITY) | FBIT(AUTOGRAD_OTHER) | FBIT(AUTOGRAD_NESTED_TENSOR))
#define AUTOGRADOTHER_BACKENDS                                                            \
  (FBIT(FPGA) | FBIT(VULKAN) | FBIT(METAL) | FBIT(CUSTOM_RNG_KEY_ID) | FBIT(MKLDNN_CPU) | \
   FBIT(SPARSE) | FBIT(SPARSE_CSR) | FBIT(QUANTIZED) | FULL_BACKEND_MASK)
#define BACKEND_KEYSET (AUTOGRADOTHER_BACKENDS | FBIT(DENSE))
/* CompositeImplicitAutograd; PyTorch 2.13 does not include Functionalize (later versions do). */
#define MATH_KEYSET    (BACKEND_KEYSET | AUTOGRAD_KEYSET | FBIT(NESTED_TENSOR))
#define NESTED_KEYSET  (FBIT(NESTED_TENSOR) | FBIT(AUTOGRAD_NESTED_TENSOR) | FULL_BACKEND_MASK)
#define NON_FUNCTIONAL_BACKEND_KEYSET                                            \
  ((BACKEND_KEYSET & ~FBIT(SPARSE)) & ~backend_bit(C10C_BACKEND_COMPONENT_XLA) & \
   ~backend_bit(C10C_BACKEND_COMPONENT_LAZY))

c10c_status c10c_dispatch_key_set_from_alias(c10c_dispatch_key_set *out, c10c_dispatch_key k) {
  C10C__CHECK_NOT_NULL(out);
  if (!settable(k)) return invalid_key(k);
  switch (k) {
    case DK(AUTOGRAD): *out = make(AUTOGRAD_KEYSET | FULL_BACKEND_MASK); break;
    case DK(COMPOSITE_IMPLICIT_AUTOGRAD): *out = make(MATH_KEYSET); break;
    case DK(COMPOSITE_IMPLICIT_AUTOGRAD_NESTED_TENSOR): *out = make(NESTED_KEYSET); break;
    case DK(COMPOSITE_EXPLICIT_AUTOGRAD): *out = make(BACKEND_KEYSET); break;
    case DK(COMPOSITE_EXPLICIT_AUTOGRAD_NON_FUNCTIONAL):
      *out = make(NON_FUNCTIONAL_BACKEND_KEYSET);
      break;
    case DK(FUNC_TORCH_BATCHED_DECOMPOSITION): *out = make(FBIT(FUNC_TORCH_BATCHED)); break;
    default: *out = make(key_bits(k)); break;
  }
  return C10C_STATUS_OK;
}

static bool bits_has(uint64_t set, c10c_dispatch_key k) {
  uint64_t bits = key_bits(k);
  return (set & bits) == bits;
}

c10c_status c10c_dispatch_key_alias_has(bool *out, c10c_dispatch_key alias, c10c_dispatch_key k) {
  C10C__CHECK_NOT_NULL(out);
  if (!settable(alias)) return invalid_key(alias);
  if (!settable(k)) return invalid_key(k);
  if (alias == DK(UNDEFINED))
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "runtimeDispatchKeySetHas: the alias key must not be Undefined");
  switch (alias) {
    case DK(AUTOGRAD): *out = bits_has(AUTOGRAD_KEYSET, key_functionality(k)); break;
    case DK(COMPOSITE_IMPLICIT_AUTOGRAD): *out = bits_has(MATH_KEYSET, k); break;
    case DK(COMPOSITE_IMPLICIT_AUTOGRAD_NESTED_TENSOR): *out = bits_has(NESTED_KEYSET, k); break;
    case DK(COMPOSITE_EXPLICIT_AUTOGRAD):
      *out = k != DK(NESTED_TENSOR) && bits_has(BACKEND_KEYSET, k);
      break;
    case DK(COMPOSITE_EXPLICIT_AUTOGRAD_NON_FUNCTIONAL):
      *out = k != DK(NESTED_TENSOR) && bits_has(NON_FUNCTIONAL_BACKEND_KEYSET, k);
      break;
    case DK(FUNC_TORCH_BATCHED_DECOMPOSITION): *out = bits_has(FBIT(FUNC_TORCH_BATCHED), k); break;
    default: *out = alias == k; break;
  }
  return C10C_STATUS_OK;
}

c10c_status c10c_dispatch_key_set_backend_from_autograd(c10c_dispatch_key_set *out,
                                                        c10c_dispatch_key k) {
  C10C__CHECK_NOT_NULL(out);
  if (!settable(k)) return invalid_key(k);
  if (k == DK(AUTOGRAD_NESTED_TENSOR)) {
    *out = make(FBIT(NESTED_TENSOR) | FULL_BACKEND_MASK);
  } else if (k == DK(AUTOGRAD_OTHER)) {
    *out = make(AUTOGRADOTHER_BACKENDS);
  } else if (key_functionality(k) == DK(AUTOGRAD_FUNCTIONALITY)) {
    /* c10 lists the autograd keys it maps; HIP, VE and MTIA are missing from that list. */
    c10c_backend_component b = key_backend(k);
    bool listed = b != C10C_BACKEND_COMPONENT_INVALID && b != C10C_BACKEND_COMPONENT_HIP &&
                  b != C10C_BACKEND_COMPONENT_VE && b != C10C_BACKEND_COMPONENT_MTIA;
    *out = make(listed ? FBIT(DENSE) | backend_bit(b) : 0);
  } else {
    *out = make(0);
  }
  return C10C_STATUS_OK;
}

c10c_dispatch_key_set c10c_dispatch_key_set_autograd_related(c10c_backend_component b) {
  return make(FBIT(AD_INPLACE_OR_VIEW) | key_bits(c10c_dispatch_key_autograd_from_backend(b)));
}

c10c_dispatch_key_set c10c_dispatch_key_set_autocast_related(c10c_backend_component b) {
  switch (b) {
    case C10C_BACKEND_COMPONENT_CPU: return make(FBIT(AUTOCAST_CPU));
    case C10C_BACKEND_COMPONENT_MTIA: return make(FBIT(AUTOCAST_MTIA));
    case C10C_BACKEND_COMPONENT_MAIA: return make(FBIT(AUTOCAST_MAIA));
    case C10C_BACKEND_COMPONENT_XPU: return make(FBIT(AUTOCAST_XPU));
    case C10C_BACKEND_COMPONENT_IPU: return make(FBIT(AUTOCAST_IPU));
    case C10C_BACKEND_COMPONENT_HPU: return make(FBIT(AUTOCAST_HPU));
    case C10C_BACKEND_COMPONENT_CUDA: return make(FBIT(AUTOCAST_CUDA));
    case C10C_BACKEND_COMPONENT_XLA: return make(FBIT(AUTOCAST_XLA));
    case C10C_BACKEND_COMPONENT_PRIVATE_USE1: return make(FBIT(AUTOCAST_PRIVATE_USE1));
    case C10C_BACKEND_COMPONENT_MPS: return make(FBIT(AUTOCAST_MPS));
    default: return make(0);
  }
}

c10c_status c10c_dispatch_key_set_for_tensor(c10c_dispatch_key_set *out, c10c_dtype dtype,
                                             c10c_layout layout, c10c_device_type device_type,
                                             bool inference_mode) {
  C10C__CHECK_NOT_NULL(out);
  c10c_dispatch_key key;
  c10c_status st = c10c_dispatch_key_compute(&key, dtype, layout, device_type);
  if (st != C10C_STATUS_OK) return st;
  c10c_dispatch_key_set ks = make(key_bits(key));
  c10c_backend_component b = c10c_dispatch_key_set_highest_backend(ks);
  /* TensorImpl: inference tensors get no autograd keys; others get ADInplaceOrView and the
   * backend's autograd key whether or not they require grad; all get the autocast key. */
  if (!inference_mode)
    ks = c10c_dispatch_key_set_union(ks, c10c_dispatch_key_set_autograd_related(b));
  *out = c10c_dispatch_key_set_union(ks, c10c_dispatch_key_set_autocast_related(b));
  return C10C_STATUS_OK;
}

bool c10c_dispatch_key_is_backend(c10c_dispatch_key k) {
  /* c10's isBackendDispatchKey: NestedTensor is excluded by hand (see c10's Note "NestedTensor
   * Not Included in Backend Keys"). */
  if (!settable(k) || k == DK(UNDEFINED) || key_is_alias(k) || k == DK(NESTED_TENSOR)) return false;
  return bits_has(BACKEND_KEYSET, k);
}
