/* Storages (c10's StorageImpl): a data pointer, its size, the allocator that made it and whether
 * it may be resized, behind c10's strong/weak reference counts (refcount.h). */
#include <string.h>

#include "allocator_internal.h"
#include "storage_internal.h"
#include "shell_cache.h"
#include "sysmem.h"

struct c10c_storage {
  c10c__object obj;
  c10c_data_ptr data_ptr;
  int64_t nbytes;
  int64_t capacity;          /* the bytes data_ptr holds: set_nbytes may record less, never more */
  c10c_allocator *allocator; /* a reference, or NULL for external memory */
  bool resizable;
  /* One way (false to true) and read by writers on any thread: atomic, relaxed (it orders
   * nothing else), so that marking a storage read-only while another thread checks it is no
   * data race. */
  _Atomic bool read_only;
  bool shared; /* in memory other processes can open (storage_shared.c) */
  /* Whether data_ptr's address was handed out (c10c_storage_data, c10c_tensor_data, a DLPack
   * export): sharing then keeps the old bytes until the storage goes, so that pointer never
   * dangles; otherwise they are freed at once. */
  _Atomic bool exposed;
  /* The bytes data_ptr held before sharing moved them, kept because they were exposed. */
  struct retired_bytes *retired;
  /* The version counter of the tensors over this storage (c10 keeps one per view family; views
   * share their base's storage, so keeping it here shares it the same way without an object). */
  _Atomic int64_t version;
};

int64_t c10c__storage_version(const c10c_storage *storage) {
  c10c_storage *mutable_storage = (c10c_storage *)(uintptr_t)storage;
  return atomic_load_explicit(&mutable_storage->version, memory_order_relaxed);
}

void c10c__storage_bump_version(c10c_storage *storage) {
  atomic_fetch_add_explicit(&storage->version, 1, memory_order_relaxed);
}

struct retired_bytes {
  c10c_data_ptr data_ptr;
  struct retired_bytes *next;
};

/* A weak storage is the same object seen through its weak count. */
static c10c_storage *from_weak(c10c_weak_storage *w) { return (c10c_storage *)(void *)w; }

static const c10c_storage *from_weak_const(const c10c_weak_storage *w) {
  return (const c10c_storage *)(const void *)w;
}

static void storage_release_resources(c10c__object *obj) {
  c10c_storage *s = (c10c_storage *)obj;
  c10c_data_ptr_free(&s->data_ptr);
  while (s->retired != NULL) {
    struct retired_bytes *r = s->retired;
    s->retired = r->next;
    c10c_data_ptr_free(&r->data_ptr);
    c10c__free(r);
  }
  c10c_allocator_release(s->allocator);
  s->allocator = NULL;
  s->nbytes = s->capacity = 0;
}

static void storage_destroy(c10c__object *obj) {
  storage_release_resources(obj);
  c10c__shell_free(C10C__SHELL_STORAGE, obj, sizeof(c10c_storage));
}

static const c10c__object_type storage_type = {storage_release_resources, storage_destroy};

static c10c_status negative_size(int64_t nbytes) {
  /* c10 casts to size_t and reports the unsigned value. */
  return c10c__fail(C10C_STATUS_ERROR,
                    "alloc_cpu() seems to have been called with negative number: %llu",
                    (unsigned long long)(uint64_t)nbytes);
}

/* nbytes >= 0 that this process's address space can hold: beyond PTRDIFF_MAX (2 GiB on a 32-bit
 * platform; never on a 64-bit one) no allocation can succeed, and the allocator's size_t would
 * truncate the request, so it is out of memory before any allocator sees it. */
static c10c_status check_nbytes(int64_t nbytes) {
  if (nbytes < 0) return negative_size(nbytes);
#if PTRDIFF_MAX < INT64_MAX /* 64-bit: every non-negative int64 is below it, nothing to check */
  if ((uint64_t)nbytes > (uint64_t)PTRDIFF_MAX)
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY,
                      "can't allocate memory: you tried to allocate %lld bytes, more than one "
                      "allocation can span in this %d-bit process (at most %lld bytes)",
                      (long long)nbytes, (int)(8 * sizeof(void *)), (long long)PTRDIFF_MAX);
#endif
  return C10C_STATUS_OK;
}

/* A shell for nbytes; the constructor fills in data_ptr. */
static c10c_storage *new_shell(int64_t nbytes, bool resizable) {
  c10c_storage *s = c10c__shell_alloc(C10C__SHELL_STORAGE, sizeof *s);
  if (s == NULL) return NULL;
  s->nbytes = s->capacity = nbytes;
  s->allocator = NULL;
  s->resizable = resizable;
  atomic_init(&s->read_only, false);
  s->shared = false;
  s->retired = NULL;
  atomic_init(&s->exposed, false);
  atomic_init(&s->version, 0);
  c10c__object_init(&s->obj, &storage_type);
  return s;
}

c10c_status c10c_storage_new(c10c_storage **out, int64_t nbytes, c10c_allocator *allocator,
                             c10c_device_type device_type, bool resizable) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  /* one test on the hot path (the second half is false at compile time on 64-bit targets) */
  if (nbytes < 0 || (uint64_t)nbytes > (uint64_t)PTRDIFF_MAX) return check_nbytes(nbytes);
  if (allocator == NULL) {
    /* a reference of our own (a concurrent c10c_allocator_set may drop the registry's) */
    c10c_status st = c10c_allocator_get(&allocator, device_type);
    if (st != C10C_STATUS_OK) return st;
  } else if (c10c_allocator_device_type(allocator) != device_type) {
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "allocator '%s' serves %s memory, not %s",
                      c10c_allocator_name(allocator),
                      c10c__device_type_name(c10c_allocator_device_type(allocator), false),
                      c10c_device_type_is_valid(device_type)
                          ? c10c__device_type_name(device_type, false)
                          : "an unknown device type");
  } else {
    c10c_allocator_retain(allocator);
  }
  c10c_storage *s = new_shell(nbytes, resizable);
  if (s == NULL) {
    c10c_allocator_release(allocator);
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory creating a storage shell");
  }
  c10c_status st = c10c_allocator_allocate(&s->data_ptr, allocator, (size_t)nbytes);
  if (st != C10C_STATUS_OK) {
    c10c__shell_free(C10C__SHELL_STORAGE, s, sizeof *s);
    c10c_allocator_release(allocator);
    return st;
  }
  s->allocator = allocator; /* the reference taken above */
  *out = s;
  return C10C_STATUS_OK;
}

c10c_status c10c_storage_new_external(c10c_storage **out, void *data, int64_t nbytes,
                                      c10c_device device, c10c_deleter deleter, void *ctx) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  if (nbytes < 0) return negative_size(nbytes);
  if (data == NULL && nbytes > 0) return c10c__null_argument(__func__, "data");
  if ((uint64_t)nbytes > (uint64_t)PTRDIFF_MAX) /* 32-bit: no memory of that size exists */
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "external memory of %lld bytes cannot exist in this %d-bit process (at most "
                      "%lld bytes)",
                      (long long)nbytes, (int)(8 * sizeof(void *)), (long long)PTRDIFF_MAX);
  c10c_status st = c10c__check_device(device);
  if (st != C10C_STATUS_OK) return st;
  c10c_storage *s = new_shell(nbytes, false);
  if (s == NULL)
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory creating a storage shell");
  s->data_ptr = (c10c_data_ptr){data, ctx, deleter, device};
  /* the caller knows the address (and its deleter runs at the last release, as documented) */
  atomic_store_explicit(&s->exposed, true, memory_order_relaxed);
  *out = s;
  return C10C_STATUS_OK;
}

c10c_storage *c10c_storage_retain(c10c_storage *storage) {
  if (storage != NULL) c10c__incref(&storage->obj);
  return storage;
}

void c10c_storage_release(c10c_storage *storage) {
  if (storage != NULL) c10c__decref(&storage->obj);
}

int64_t c10c_storage_nbytes(const c10c_storage *storage) {
  return storage != NULL ? storage->nbytes : 0;
}

void c10c__storage_mark_exposed(const c10c_storage *storage) {
  c10c_storage *mutable_storage = (c10c_storage *)(uintptr_t)storage;
  if (!atomic_load_explicit(&mutable_storage->exposed, memory_order_relaxed))
    atomic_store_explicit(&mutable_storage->exposed, true, memory_order_relaxed);
}

void *c10c__storage_data(const c10c_storage *storage) { return storage->data_ptr.data; }

const c10c_data_ptr *c10c__storage_data_ptr_ref(const c10c_storage *storage) {
  return &storage->data_ptr;
}

void *c10c_storage_data(const c10c_storage *storage) {
  if (storage == NULL) return NULL;
  c10c__storage_mark_exposed(storage);
  return storage->data_ptr.data;
}

c10c_status c10c_storage_data_ptr(c10c_data_ptr *out, const c10c_storage *storage) {
  C10C__CHECK_NOT_NULL(out);
  C10C__CHECK_NOT_NULL(storage);
  c10c__storage_mark_exposed(storage);
  *out = storage->data_ptr;
  return C10C_STATUS_OK;
}

c10c_device c10c_storage_device(const c10c_storage *storage) {
  if (storage == NULL) return (c10c_device){C10C_DEVICE_TYPE_CPU, -1};
  return storage->data_ptr.device;
}

bool c10c_storage_resizable(const c10c_storage *storage) {
  return storage != NULL && storage->resizable;
}

c10c_allocator *c10c_storage_allocator(const c10c_storage *storage) {
  return storage != NULL ? storage->allocator : NULL;
}

c10c_status c10c_storage_resize(c10c_storage *storage, int64_t nbytes) {
  C10C__CHECK_NOT_NULL(storage);
  if (!storage->resizable || storage->allocator == NULL)
    return c10c__fail(C10C_STATUS_ERROR, "Trying to resize storage that is not resizable");
  c10c_status st = check_nbytes(nbytes);
  if (st != C10C_STATUS_OK) return st;
  c10c_data_ptr fresh = {0};
  st = c10c_allocator_allocate(&fresh, storage->allocator, (size_t)nbytes);
  if (st != C10C_STATUS_OK) return st;
  int64_t common = nbytes < storage->nbytes ? nbytes : storage->nbytes;
  /* no bytes on either side for a meta storage (its allocator gives none) */
  if (common > 0 && storage->data_ptr.data != NULL && fresh.data != NULL)
    c10c_allocator_copy(storage->allocator, fresh.data, storage->data_ptr.data, (size_t)common);
  c10c_data_ptr old = storage->data_ptr;
  storage->data_ptr = fresh;
  storage->nbytes = storage->capacity = nbytes;
  c10c_data_ptr_free(&old);
  return C10C_STATUS_OK;
}

c10c_status c10c_storage_set_nbytes(c10c_storage *storage, int64_t nbytes) {
  C10C__CHECK_NOT_NULL(storage);
  if (nbytes < 0)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "storage size must be non-negative, got %lld",
                      (long long)nbytes);
  /* c10 records any size; past what the data pointer holds, tensors would read beyond it */
  if (nbytes > storage->capacity)
    return c10c__fail(
        C10C_STATUS_INVALID_ARGUMENT,
        "set_nbytes: %lld bytes is more than the storage's memory holds (%lld bytes); "
        "resize it to grow it",
        (long long)nbytes, (long long)storage->capacity);
  storage->nbytes = nbytes;
  return C10C_STATUS_OK;
}

uint32_t c10c_storage_use_count(const c10c_storage *storage) {
  return storage != NULL ? c10c__strong_count(&storage->obj) : 0;
}

uint32_t c10c_storage_weak_use_count(const c10c_storage *storage) {
  return storage != NULL ? c10c__weak_count(&storage->obj) : 0;
}

c10c_status c10c_storage_weak_ref(c10c_weak_storage **out, c10c_storage *storage) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  C10C__CHECK_NOT_NULL(storage);
  c10c__weak_incref(&storage->obj);
  *out = (c10c_weak_storage *)storage;
  return C10C_STATUS_OK;
}

c10c_status c10c_weak_storage_lock(c10c_storage **out, c10c_weak_storage *weak) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  C10C__CHECK_NOT_NULL(weak);
  c10c_storage *s = from_weak(weak);
  if (c10c__weak_lock(&s->obj)) *out = s;
  return C10C_STATUS_OK;
}

c10c_weak_storage *c10c_weak_storage_retain(c10c_weak_storage *weak) {
  if (weak != NULL) c10c__weak_incref(&from_weak(weak)->obj);
  return weak;
}

void c10c_weak_storage_release(c10c_weak_storage *weak) {
  if (weak != NULL) c10c__weak_decref(&from_weak(weak)->obj);
}

uint32_t c10c_weak_storage_use_count(const c10c_weak_storage *weak) {
  return weak != NULL ? c10c__strong_count(&from_weak_const(weak)->obj) : 0;
}

bool c10c_weak_storage_expired(const c10c_weak_storage *weak) {
  return c10c_weak_storage_use_count(weak) == 0;
}

c10c_status c10c_storage_set_read_only(c10c_storage *storage) {
  C10C__CHECK_NOT_NULL(storage);
  atomic_store_explicit(&storage->read_only, true, memory_order_relaxed);
  return C10C_STATUS_OK;
}

bool c10c_storage_is_read_only(const c10c_storage *storage) {
  return storage != NULL && atomic_load_explicit(&((c10c_storage *)(uintptr_t)storage)->read_only,
                                                 memory_order_relaxed);
}

c10c_data_ptr c10c__storage_swap_data_ptr(c10c_storage *storage, c10c_data_ptr replacement) {
  c10c_data_ptr old = storage->data_ptr;
  storage->data_ptr = replacement;
  return old;
}

void c10c__storage_forget_deleter(c10c_storage *storage) {
  storage->data_ptr.deleter = NULL;
  storage->data_ptr.ctx = NULL;
}

/* ---- shared memory (the mappings themselves: storage_shared.c) ---- */

c10c_status c10c__storage_install_shared(c10c_storage *storage, c10c_data_ptr fresh) {
  struct retired_bytes *r = NULL;
  bool keep = atomic_load_explicit(&storage->exposed, memory_order_relaxed) &&
              storage->data_ptr.data != NULL;
  if (keep) {
    r = c10c__malloc(sizeof *r);
    if (r == NULL) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory sharing a storage");
  }
  c10c_data_ptr old = storage->data_ptr;
  storage->data_ptr = fresh;
  storage->capacity = storage->nbytes;
  c10c_allocator_release(storage->allocator);
  storage->allocator = NULL;
  storage->resizable = false; /* as torch's shared storages */
  storage->shared = true;
  if (keep) {
    *r = (struct retired_bytes){old, storage->retired};
    storage->retired = r;
  } else {
    c10c_data_ptr_free(&old); /* nothing outside the library saw its address */
  }
  atomic_store_explicit(&storage->exposed, false, memory_order_relaxed);
  return C10C_STATUS_OK;
}

void c10c__storage_set_shared(c10c_storage *storage, bool shared) { storage->shared = shared; }

bool c10c_storage_is_shared(const c10c_storage *storage) {
  return storage != NULL && storage->shared;
}
