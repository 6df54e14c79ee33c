/* Allocator handles over host vtables, the per-device registry with c10's priority rule, the
 * plain CPU allocator (c10's DefaultCPUAllocator: posix_memalign, 64-byte aligned, no caching),
 * and the statistics helpers and text summary every allocator shares.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "allocator_internal.h"
#include "os.h"
#include "sysmem.h"

enum { CPU_ALIGNMENT = 64 };

/* ---- handles ---- */

static void immortal_destroy(c10c__object *obj) { (void)obj; }
const c10c__object_type c10c__immortal_type = {NULL, immortal_destroy};

static void handle_destroy(c10c__object *obj) {
  c10c_allocator *a = (c10c_allocator *)obj;
  if (a->vt.destroy != NULL) a->vt.destroy(a->self);
  c10c__free(a);
}

static const c10c__object_type handle_type = {NULL, handle_destroy};

/* The size of the first published version of the vtable (up to and including `allocate`). */
#define VTABLE_MIN_SIZE (offsetof(c10c_allocator_vtable, allocate) + sizeof(void *))
#define STATS_MIN_SIZE  (offsetof(c10c_memory_stats, max_split_size) + sizeof(int64_t))

c10c_status c10c_allocator_new(c10c_allocator **out, const c10c_allocator_vtable *vtable,
                               void *self, c10c_device_type device_type) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  C10C__CHECK_NOT_NULL(vtable);
  c10c_status checked = c10c__check_struct_size(vtable->struct_size, VTABLE_MIN_SIZE,
                                                "c10c_allocator_vtable", " of the vtable");
  if (checked != C10C_STATUS_OK) return checked;
  if (vtable->allocate == NULL) return c10c__null_argument(__func__, "vtable->allocate");
  if (!c10c_device_type_is_valid(device_type))
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "Unknown device type %d", (int)device_type);
  /* the fields the host's version has, whole (every field after the header is a pointer, 8
   * bytes or 4 on a 32-bit target: a struct_size ending inside one leaves it out, never half a
   * pointer; a newer host's fields beyond ours are ignored), then the name, copied into the
   * handle's own block: the host may free its string once this returns */
  c10c_allocator_vtable vt = {0};
  _Static_assert(sizeof vt % sizeof(void *) == 0 && offsetof(c10c_allocator_vtable, allocate) == 8,
                 "the vtable's fields are pointers after an 8-byte header");
  size_t known = vtable->struct_size < sizeof vt ? vtable->struct_size : sizeof vt;
  memcpy(&vt, vtable, known & ~(sizeof(void *) - 1));
  vt.struct_size = sizeof vt;
  size_t name_size = vt.name != NULL ? strlen(vt.name) + 1 : 0;
  c10c_allocator *a = c10c__calloc(1, sizeof *a + name_size);
  if (a == NULL)
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory creating an allocator handle");
  a->vt = vt;
  if (vt.name != NULL) a->vt.name = memcpy((char *)(a + 1), vt.name, name_size);
  a->self = self;
  a->device_type = device_type;
  c10c__object_init(&a->obj, &handle_type);
  *out = a;
  return C10C_STATUS_OK;
}

/* The built-in allocators are immortal: counting their references would only make every storage
 * of every thread write to the same cache line twice (c10 holds raw allocator pointers). */
c10c_allocator *c10c_allocator_retain(c10c_allocator *allocator) {
  if (allocator != NULL && !allocator->builtin) c10c__incref(&allocator->obj);
  return allocator;
}

void c10c_allocator_release(c10c_allocator *allocator) {
  if (allocator != NULL && !allocator->builtin) c10c__decref(&allocator->obj);
}

const char *c10c_allocator_name(const c10c_allocator *allocator) {
  if (allocator == NULL) return "";
  return allocator->vt.name != NULL ? allocator->vt.name : "custom";
}

c10c_device_type c10c_allocator_device_type(const c10c_allocator *allocator) {
  return allocator != NULL ? allocator->device_type : C10C_DEVICE_TYPE_CPU;
}

/* Reports a host function's failure, naming the allocator and what it failed to do (the host
 * can set no message). A host may return any number: what is not one of this library's failure
 * codes (a positive number, or one below the codes this version knows) becomes
 * C10C_STATUS_ERROR, so that every public function fails with a code c10c_status_name knows. */
static c10c_status host_error(const c10c_allocator *allocator, c10c_status st, const char *what) {
  if (st < 0 && st >= C10C_STATUS_MIN)
    return c10c__fail(st, "allocator '%s' failed to %s (%s)", c10c_allocator_name(allocator), what,
                      c10c_status_string(st));
  return c10c__fail(C10C_STATUS_ERROR,
                    "allocator '%s' failed to %s (status %d, which is not a c10c_status failure "
                    "code)",
                    c10c_allocator_name(allocator), what, (int)st);
}

c10c_status c10c_allocator_allocate(c10c_data_ptr *out, c10c_allocator *allocator, size_t nbytes) {
  C10C__CHECK_NOT_NULL(out);
  out->data = out->ctx = NULL;
  out->deleter = NULL;
  C10C__CHECK_NOT_NULL(allocator);
  if (nbytes > (size_t)PTRDIFF_MAX)
    return c10c__fail(C10C_STATUS_ERROR,
                      "alloc_cpu() seems to have been called with negative number: %zu", nbytes);
  out->device.type = allocator->device_type;
  out->device.index = -1;
  c10c_status st = allocator->vt.allocate(out, allocator->self, nbytes, CPU_ALIGNMENT);
  if (st == C10C_STATUS_OK && nbytes > 0 && out->data == NULL &&
      allocator->device_type != C10C_DEVICE_TYPE_META) {
    /* a host allocator that broke its contract: no storage may claim bytes it does not have
     * (meta storages have sizes and no bytes: no data is their allocator's contract) */
    if (out->deleter != NULL && out->ctx != NULL) out->deleter(out->ctx);
    memset(out, 0, sizeof *out);
    return c10c__fail(C10C_STATUS_ERROR, "allocator '%s' returned no memory for %zu bytes",
                      c10c_allocator_name(allocator), nbytes);
  }
  if (st != C10C_STATUS_OK) {
    memset(out, 0, sizeof *out);
    if (allocator->builtin) return st; /* with its own message */
    char what[64];
    snprintf(what, sizeof what, "allocate %zu bytes", nbytes);
    return host_error(allocator, st, what);
  }
  return C10C_STATUS_OK;
}

c10c_status c10c_allocator_copy(c10c_allocator *allocator, void *dst, const void *src,
                                size_t nbytes) {
  C10C__CHECK_NOT_NULL(allocator);
  if (nbytes == 0) return C10C_STATUS_OK;
  C10C__CHECK_NOT_NULL(dst);
  C10C__CHECK_NOT_NULL(src);
  if (allocator->vt.copy != NULL)
    allocator->vt.copy(allocator->self, dst, src, nbytes);
  else
    memcpy(dst, src, nbytes);
  return C10C_STATUS_OK;
}

c10c_status c10c_allocator_get_stats(c10c_memory_stats *out, c10c_allocator *allocator) {
  C10C__CHECK_NOT_NULL(out);
  C10C__CHECK_NOT_NULL(allocator);
  c10c_status checked =
      c10c__check_struct_size(out->struct_size, STATS_MIN_SIZE, "c10c_memory_stats", "");
  if (checked != C10C_STATUS_OK) return checked;
  uint32_t size = out->struct_size;
  memset(out, 0, size < sizeof *out ? size : sizeof *out);
  out->struct_size = size;
  if (allocator->vt.get_stats == NULL) return C10C_STATUS_OK;
  c10c_status st = allocator->vt.get_stats(out, allocator->self);
  if (st == C10C_STATUS_OK || allocator->builtin) return st;
  return host_error(allocator, st, "report its statistics");
}

c10c_status c10c_allocator_empty_cache(c10c_allocator *allocator) {
  C10C__CHECK_NOT_NULL(allocator);
  if (allocator->vt.empty_cache != NULL) allocator->vt.empty_cache(allocator->self);
  return C10C_STATUS_OK;
}

c10c_status c10c_allocator_reset_peak_stats(c10c_allocator *allocator) {
  C10C__CHECK_NOT_NULL(allocator);
  if (allocator->vt.reset_peak_stats != NULL) allocator->vt.reset_peak_stats(allocator->self);
  return C10C_STATUS_OK;
}

void c10c_data_ptr_free(c10c_data_ptr *data_ptr) {
  if (data_ptr == NULL) return;
  if (data_ptr->deleter != NULL && data_ptr->ctx != NULL) data_ptr->deleter(data_ptr->ctx);
  data_ptr->data = data_ptr->ctx = NULL;
  data_ptr->deleter = NULL;
}

/* ---- statistics helpers ---- */

static void reset_array(c10c_stat *s, const c10c_stat *now, size_t n) {
  for (size_t i = 0; i < n; i++) s[i].peak = now[i].current;
}

void c10c__stats_reset_peaks(c10c_memory_stats *s, const c10c_memory_stats *now) {
  reset_array(s->allocation, now->allocation, 3);
  reset_array(s->segment, now->segment, 3);
  reset_array(s->active, now->active, 3);
  reset_array(s->inactive_split, now->inactive_split, 3);
  reset_array(s->allocated_bytes, now->allocated_bytes, 3);
  reset_array(s->reserved_bytes, now->reserved_bytes, 3);
  reset_array(s->active_bytes, now->active_bytes, 3);
  reset_array(s->inactive_split_bytes, now->inactive_split_bytes, 3);
  reset_array(s->requested_bytes, now->requested_bytes, 3);
  reset_array(&s->oversize_allocations, &now->oversize_allocations, 1);
  reset_array(&s->oversize_segments, &now->oversize_segments, 1);
}

/* ---- the plain CPU allocator ---- */

static void plain_free(void *ctx) { c10c__os_free(ctx); }

static c10c_status plain_allocate(c10c_data_ptr *out, void *self, size_t nbytes, size_t alignment) {
  (void)self;
  if (nbytes == 0) return C10C_STATUS_OK; /* c10: NULL data and ctx */
  void *p = NULL;
  int err = c10c__os_alloc(&p, nbytes, alignment < CPU_ALIGNMENT ? CPU_ALIGNMENT : alignment);
  if (err != 0)
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY,
                      "DefaultCPUAllocator: can't allocate memory: you tried to allocate %zu "
                      "bytes. Error code %d (%s)",
                      nbytes, err, strerror(err));
  out->data = out->ctx = p;
  out->deleter = plain_free;
  return C10C_STATUS_OK;
}

static c10c_allocator default_allocator = {
    .obj = {.refcount = C10C__IMMORTAL_REF, .type = &c10c__immortal_type},
    .vt = {.struct_size = sizeof(c10c_allocator_vtable),
           .allocate = plain_allocate,
           .name = "cpu_default"},
    .device_type = C10C_DEVICE_TYPE_CPU,
    .builtin = true,
};

c10c_allocator *c10c_cpu_default_allocator(void) { return &default_allocator; }

/* ---- the registry (c10's SetAllocator / GetAllocator) ---- */

static c10c__mutex registry_lock = C10C__MUTEX_INIT;
/* What c10c_allocator_set installed (a reference each), NULL while the built-in one serves. */
static _Atomic(c10c_allocator *) registry[C10C_DEVICE_TYPE_COUNT];
static int32_t priorities[C10C_DEVICE_TYPE_COUNT];
/* The built-in allocators, filled by their modules when the library loads. */
static _Atomic(c10c_allocator *) builtin[C10C_DEVICE_TYPE_COUNT];

void c10c__allocator_register_builtin(c10c_allocator *allocator) {
  atomic_store_explicit(&builtin[allocator->device_type], allocator, memory_order_release);
}

/* c10's SetAllocator: `if (priority >= allocator_priority[t])` the new one replaces the old. The
 * registry's reference to the replaced allocator is dropped, so its destroy runs once its last
 * other user (a storage, a host's reference, a c10c_allocator_get result) lets go. */
c10c_status c10c_allocator_set(bool *out_installed, c10c_allocator *allocator, int32_t priority) {
  C10C__CHECK_NOT_NULL(out_installed);
  *out_installed = false;
  C10C__CHECK_NOT_NULL(allocator);
  c10c_device_type t = allocator->device_type;
  c10c__mutex_lock(&registry_lock);
  if (priority < priorities[t]) {
    c10c__mutex_unlock(&registry_lock);
    return C10C_STATUS_OK; /* c10 keeps the allocator of higher priority */
  }
  priorities[t] = priority;
  c10c_allocator *old = atomic_exchange_explicit(&registry[t], c10c_allocator_retain(allocator),
                                                 memory_order_acq_rel);
  c10c__mutex_unlock(&registry_lock);
  c10c_allocator_release(old); /* NULL-safe; built-ins are not counted */
  *out_installed = true;
  return C10C_STATUS_OK;
}

c10c_status c10c_allocator_get(c10c_allocator **out, c10c_device_type device_type) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  if (!c10c_device_type_is_valid(device_type))
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "Unknown device type %d", (int)device_type);
  c10c_allocator *a = atomic_load_explicit(&registry[device_type], memory_order_acquire);
  if (a != NULL) {
    /* something was set: take the reference under the lock, so that a c10c_allocator_set
     * replacing it on another thread cannot drop the registry's (possibly last) one in between
     * (nothing of a may be read before: it may be freed by then). While nothing was set, the
     * built-in allocator serves, which is immortal: no lock on that path. */
    c10c__mutex_lock(&registry_lock);
    a = c10c_allocator_retain(atomic_load_explicit(&registry[device_type], memory_order_relaxed));
    c10c__mutex_unlock(&registry_lock);
  }
  if (a == NULL) a = atomic_load_explicit(&builtin[device_type], memory_order_acquire);
  if (a == NULL)
    return c10c__fail(C10C_STATUS_UNAVAILABLE, "Allocator for %s is not set.",
                      c10c__device_type_name(device_type, false));
  *out = a;
  return C10C_STATUS_OK;
}
