/* The slow paths of c10's intrusive_ptr release and weak lock (see refcount.h). */
#include "refcount.h"

void c10c__weak_decref(c10c__object *obj) {
  uint64_t after = atomic_fetch_sub_explicit(&obj->refcount, C10C__WEAK_ONE, memory_order_acq_rel) -
                   C10C__WEAK_ONE;
  if ((after & C10C__WEAK_MASK) == 0) obj->type->destroy(obj);
}

void c10c__decref(c10c__object *obj) {
  uint64_t current = atomic_load_explicit(&obj->refcount, memory_order_acquire);
  /* The unique owner (strong 1, no weak references) needs no read-modify-write. */
  if (current == C10C__UNIQUE_REF) {
    atomic_store_explicit(&obj->refcount, 0, memory_order_relaxed);
    obj->type->destroy(obj);
    return;
  }
#ifndef NDEBUG
  /* A release with no strong reference left: a double release. Detectable (without touching
   * freed memory) only while weak references keep the shell; report it instead of corrupting
   * the counts. Debug builds only (the default buildtype, debugoptimized, is one). */
  if ((current & C10C__STRONG_MASK) == 0) {
    c10c__fail(C10C_STATUS_ERROR,
               "double release detected: the object has no strong reference left to release");
    return;
  }
#endif
  uint64_t after =
      atomic_fetch_sub_explicit(&obj->refcount, C10C__STRONG_ONE, memory_order_acq_rel) -
      C10C__STRONG_ONE;
  if ((after & C10C__STRONG_MASK) != 0) return;
  if ((after & C10C__WEAK_MASK) == C10C__WEAK_ONE) {
    /* No weak references: destroy without release_resources, as c10. */
    obj->type->destroy(obj);
    return;
  }
  if (obj->type->release_resources != NULL) obj->type->release_resources(obj);
  c10c__weak_decref(obj); /* the +1 the strong references held */
}

bool c10c__weak_lock(c10c__object *obj) {
  uint64_t current = atomic_load_explicit(&obj->refcount, memory_order_relaxed);
  do {
    if ((current & C10C__STRONG_MASK) == 0) return false;
  } while (!atomic_compare_exchange_weak_explicit(&obj->refcount, &current,
                                                  current + C10C__STRONG_ONE, memory_order_acquire,
                                                  memory_order_relaxed));
  return true;
}
