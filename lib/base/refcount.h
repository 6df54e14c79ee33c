/* c10's intrusive_ptr counts in C: one 64-bit atomic word per object with the strong count in
 * bits 0..31 and the weak count in bits 32..62, where the weak count includes one extra reference
 * while any strong reference exists (c10/util/intrusive_ptr.h, PyTorch 2.13). Memory orders are
 * c10's: increments relaxed, decrements acq_rel, the unique-owner release an acquire load, and
 * weak lock a compare-exchange loop (acquire on success).
 *
 * When the last strong reference goes: with no weak references the object is destroyed at once
 * (release_resources is not called); otherwise release_resources runs (a storage frees its bytes)
 * and the object shell lives on until the last weak reference goes.
 */
#ifndef C10C_REFCOUNT_H
#define C10C_REFCOUNT_H

#include <stdatomic.h>
#include <stdint.h>

#include "internal.h"

#define C10C__STRONG_ONE   UINT64_C(1)
#define C10C__WEAK_ONE     (UINT64_C(1) << 32)
#define C10C__UNIQUE_REF   (C10C__STRONG_ONE | C10C__WEAK_ONE)
#define C10C__STRONG_MASK  UINT64_C(0xFFFFFFFF)
#define C10C__WEAK_MASK    UINT64_C(0x7FFFFFFF00000000)
/* Counts of objects that are never freed (static built-in allocators), as c10's
 * unsafe_adapt_non_heap_allocated: high enough never to reach zero. */
#define C10C__IMMORTAL_REF ((UINT64_C(0x0FFFFFFF) << 32) | UINT64_C(0x0FFFFFFF))

typedef struct c10c__object c10c__object;

typedef struct c10c__object_type {
  /* Frees what the object owns besides its shell (may be NULL). Runs once, when the last strong
   * reference goes while weak references remain. */
  void (*release_resources)(c10c__object *obj);
  /* Releases everything, then frees the object's memory. */
  void (*destroy)(c10c__object *obj);
} c10c__object_type;

struct c10c__object {
  _Atomic uint64_t refcount;
  const c10c__object_type *type;
};

/* A new object: strong 1, weak 1 (c10's make_intrusive stores kUniqueRef). */
static inline void c10c__object_init(c10c__object *obj, const c10c__object_type *type) {
  obj->type = type;
  atomic_store_explicit(&obj->refcount, C10C__UNIQUE_REF, memory_order_relaxed);
}

/* A relaxed read of the word. C11's atomic_load takes a non-const pointer; reading does not
 * modify the object, so casting const away is sound. */
static inline uint64_t c10c__refcount_word(const c10c__object *obj) {
  c10c__object *mutable_obj = (c10c__object *)(uintptr_t)obj;
  return atomic_load_explicit(&mutable_obj->refcount, memory_order_relaxed);
}

static inline uint32_t c10c__strong_count(const c10c__object *obj) {
  return (uint32_t)(c10c__refcount_word(obj) & C10C__STRONG_MASK);
}

static inline uint32_t c10c__weak_count(const c10c__object *obj) {
  return (uint32_t)((c10c__refcount_word(obj) & C10C__WEAK_MASK) >> 32);
}

static inline void c10c__incref(c10c__object *obj) {
  atomic_fetch_add_explicit(&obj->refcount, C10C__STRONG_ONE, memory_order_relaxed);
}

static inline void c10c__weak_incref(c10c__object *obj) {
  atomic_fetch_add_explicit(&obj->refcount, C10C__WEAK_ONE, memory_order_relaxed);
}

void c10c__weak_decref(c10c__object *obj);
void c10c__decref(c10c__object *obj);
/* c10's weak lock: adds a strong reference unless the strong count already reached 0. */
bool c10c__weak_lock(c10c__object *obj);

#endif /* C10C_REFCOUNT_H */
