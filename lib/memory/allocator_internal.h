/* Allocator handles as the library sees them, and the helpers the allocator files share. */
#ifndef C10C_ALLOCATOR_INTERNAL_H
#define C10C_ALLOCATOR_INTERNAL_H

#include "checked.h"
#include "refcount.h"

struct c10c_allocator {
  c10c__object obj;
  c10c_allocator_vtable vt; /* the host's vtable, fields it did not know zeroed */
  void *self;
  c10c_device_type device_type;
  bool builtin; /* sets its own error messages */
};

/* a + b, held at INT64_MAX / INT64_MIN where it would not fit. */
static inline int64_t c10c__stat_add(int64_t a, int64_t b) {
  int64_t r;
  if (c10c__add_overflows(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
  return r;
}

/* Adds delta to a stat's current value, tracking peak and the cumulative totals. The cumulative
 * totals of byte stats can pass 2^63 on a long run (c10's int64 counters overflow there, which is
 * undefined behaviour): every field saturates instead. */
static inline void c10c__stat_update(c10c_stat *s, int64_t delta) {
  s->current = c10c__stat_add(s->current, delta);
  if (delta > 0) s->allocated = c10c__stat_add(s->allocated, delta);
  if (delta < 0) s->freed = c10c__stat_add(s->freed, delta == INT64_MIN ? INT64_MAX : -delta);
  if (s->current > s->peak) s->peak = s->current;
}

/* Adds delta to an [all, small pool, large pool] stat triple (c10c_stat_type) for a block of
 * the small or the large pool. */
static inline void c10c__stat_pool_update(c10c_stat *s, bool small, int64_t delta) {
  c10c__stat_update(&s[C10C_STAT_ALL], delta);
  c10c__stat_update(&s[small ? C10C_STAT_SMALL_POOL : C10C_STAT_LARGE_POOL], delta);
}

/* Sets the peak of every stat in s to the current value in now. */
void c10c__stats_reset_peaks(c10c_memory_stats *s, const c10c_memory_stats *now);

/* Objects that are never freed (the built-in allocators). */
extern const c10c__object_type c10c__immortal_type;

/* Built-in allocators register themselves here when the library is loaded (a constructor in the
 * file of each, as c10's REGISTER_ALLOCATOR static initializers call SetAllocator), so that the
 * registry never calls up into the modules that implement them: the CPU caching allocator
 * (memory/cpu_caching.c), the meta allocator (memory/meta_allocator.c) and the CUDA caching
 * allocator (cuda/cuda_allocator.c).
 * c10c_allocator_get gives a device type's built-in allocator while nothing was set for it with
 * c10c_allocator_set, whose priorities start at 0 as c10's. Only stores a pointer: safe before
 * anything else of the library runs. */
void c10c__allocator_register_builtin(c10c_allocator *allocator);

/* A function run when the library is loaded (C10C__AT_LOAD(name) { ... }). */
#define C10C__AT_LOAD(name)                            \
  static void name(void) __attribute__((constructor)); \
  static void name(void)

/* The statistics of the built-in CPU caching allocator. */
c10c_status c10c__cpu_caching_stats(c10c_memory_stats *out);

/* A block of the caching CPU allocator (its vtable's allocate, without c10c_allocator_allocate's
 * checks: nbytes <= PTRDIFF_MAX is the caller's; out->device is not set). */
c10c_status c10c__cpu_caching_allocate(c10c_data_ptr *out, size_t nbytes);

/* A block of the caching CPU allocator holding nbytes zeros (calloc): cached memory is cleared,
 * memory fresh from the kernel is not touched. out->device is set. */
c10c_status c10c__cpu_caching_allocate_zeroed(c10c_data_ptr *out, size_t nbytes);

#endif /* C10C_ALLOCATOR_INTERNAL_H */
