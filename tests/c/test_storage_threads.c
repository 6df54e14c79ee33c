/* Many threads allocate storages, hand them to each other through shared slots, retain and
 * release them, and race weak locks against last releases. Every block is freed exactly once
 * (ASan, valgrind) and no data race occurs (TSan). Bounded: a few seconds at most. */
#include <pthread.h>
#include <stdatomic.h>

#include "harness.h"

enum { THREADS = 6, ROUNDS = 4000, SLOTS = 64 };

static _Atomic(c10c_storage *) slots[SLOTS];
static _Atomic(c10c_weak_storage *) weak_slots[SLOTS];
static _Atomic int external_deletes, external_made;

static void external_delete(void *ctx) {
  (void)ctx;
  atomic_fetch_add(&external_deletes, 1);
}

static uint32_t next_random(uint32_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 17;
  *state ^= *state << 5;
  return *state;
}

static void *worker(void *arg) {
  uint32_t rng = (uint32_t)(uintptr_t)arg * 2654435761u + 1;
  static char external_bytes[64];
  long failures = 0;
  for (int i = 0; i < ROUNDS; i++) {
    uint32_t r = next_random(&rng);
    c10c_storage *s = NULL;
    if (r % 7 == 0) {
      c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
      if (c10c_storage_new_external(&s, external_bytes, 64, cpu, external_delete, external_bytes) !=
          C10C_STATUS_OK)
        failures++;
      atomic_fetch_add(&external_made, 1);
    } else {
      int64_t size = (int64_t)((r >> 8) % 5 == 0 ? (r >> 4) % (3 << 20) : (r >> 4) % 4096);
      if (c10c_storage_new(&s, size, NULL, C10C_DEVICE_TYPE_CPU, true) != C10C_STATUS_OK)
        failures++;
      if (size > 0) ((unsigned char *)c10c_storage_data(s))[size - 1] = (unsigned char)r;
    }
    size_t slot = (r >> 3) % SLOTS;
    /* publish a weak reference, then swap the storage into a shared slot */
    c10c_weak_storage *w = NULL;
    c10c_storage_weak_ref(&w, s);
    c10c_weak_storage *old_w = atomic_exchange(&weak_slots[slot], w);
    c10c_storage *old = atomic_exchange(&slots[slot], s);
    /* race a lock of someone else's weak reference against its last release */
    if (old_w != NULL) {
      c10c_storage *locked = NULL;
      c10c_weak_storage_lock(&locked, old_w);
      if (locked != NULL) {
        if (c10c_storage_use_count(locked) == 0) failures++;
        c10c_storage_release(locked);
      }
      c10c_weak_storage_release(old_w);
    }
    if (old != NULL) {
      c10c_storage *copy = c10c_storage_retain(old);
      c10c_storage_release(old);
      c10c_storage_release(copy);
    }
  }
  return (void *)(intptr_t)failures;
}

TEST(storages_shared_across_threads_are_freed_once) {
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++)
    ASSERT_EQ(pthread_create(&th[i], NULL, worker, (void *)(intptr_t)(i + 1)), 0);
  for (int i = 0; i < THREADS; i++) {
    void *failures = NULL;
    ASSERT_EQ(pthread_join(th[i], &failures), 0);
    ASSERT_EQ((intptr_t)failures, 0);
  }
  for (int i = 0; i < SLOTS; i++) {
    c10c_storage_release(atomic_exchange(&slots[i], NULL));
    c10c_weak_storage_release(atomic_exchange(&weak_slots[i], NULL));
  }
  ASSERT_EQ(atomic_load(&external_deletes), atomic_load(&external_made));
  c10c_memory_stats s;
  s.struct_size = sizeof s;
  ASSERT_OK(c10c_allocator_get_stats(&s, c10c_cpu_caching_allocator()));
  ASSERT_EQ(s.allocation[C10C_STAT_ALL].current, 0);
  ASSERT_EQ(s.allocated_bytes[C10C_STAT_ALL].current, 0);
  ASSERT_EQ(s.allocation[C10C_STAT_ALL].allocated, s.allocation[C10C_STAT_ALL].freed);
}

/* Host allocators installed and replaced on one thread while others make storages from the
 * registry: every replaced allocator is destroyed exactly once, after its last storage, and no
 * thread uses one after that (ASan, TSan). */
enum { INSTALLS = 300, USERS = 3 };
static _Atomic int destroyed, installing = 1;

static c10c_status counted_allocate(c10c_data_ptr *out, void *self, size_t nbytes, size_t align) {
  (void)self, (void)align;
  if (nbytes == 0) return C10C_STATUS_OK;
  out->data = out->ctx = malloc(nbytes);
  out->deleter = free;
  return out->data != NULL ? C10C_STATUS_OK : C10C_STATUS_OUT_OF_MEMORY;
}
static void counted_destroy(void *self) {
  (void)self;
  atomic_fetch_add(&destroyed, 1);
}

static void *registry_user(void *arg) {
  (void)arg;
  while (atomic_load(&installing)) {
    c10c_storage *s = NULL;
    if (c10c_storage_new(&s, 32, NULL, C10C_DEVICE_TYPE_IPU, false) == C10C_STATUS_OK)
      c10c_storage_release(s);
    c10c_allocator *a = NULL;
    if (c10c_allocator_get(&a, C10C_DEVICE_TYPE_IPU) == C10C_STATUS_OK) {
      if (strcmp(c10c_allocator_name(a), "counted") != 0) abort();
      c10c_allocator_release(a);
    }
  }
  return NULL;
}

TEST(replaced_allocators_are_destroyed_once_while_other_threads_use_the_registry) {
  c10c_allocator_vtable vt;
  memset(&vt, 0, sizeof vt);
  vt.struct_size = sizeof vt;
  vt.allocate = counted_allocate;
  vt.destroy = counted_destroy;
  vt.name = "counted";
  pthread_t th[USERS];
  c10c_allocator *first = NULL;
  bool installed = false;
  ASSERT_OK(c10c_allocator_new(&first, &vt, NULL, C10C_DEVICE_TYPE_IPU));
  ASSERT_OK(c10c_allocator_set(&installed, first, 0));
  c10c_allocator_release(first);
  for (int i = 0; i < USERS; i++) ASSERT_EQ(pthread_create(&th[i], NULL, registry_user, NULL), 0);
  for (int i = 0; i < INSTALLS; i++) {
    c10c_allocator *a = NULL;
    ASSERT_OK(c10c_allocator_new(&a, &vt, NULL, C10C_DEVICE_TYPE_IPU));
    ASSERT_OK(c10c_allocator_set(&installed, a, 0));
    ASSERT_TRUE(installed);
    c10c_allocator_release(a); /* the registry's reference is the last one */
  }
  atomic_store(&installing, 0);
  for (int i = 0; i < USERS; i++) ASSERT_EQ(pthread_join(th[i], NULL), 0);
  ASSERT_EQ(atomic_load(&destroyed), INSTALLS); /* all but the one installed now */
}

static void *read_only_reader(void *arg) {
  c10c_storage *s = arg;
  while (!c10c_storage_is_read_only(s)) {
  }
  return NULL;
}

/* One thread marks a storage read-only while others check it (TSan sees no race). */
TEST(marking_a_storage_read_only_races_with_no_reader) {
  c10c_storage *s = NULL;
  ASSERT_OK(c10c_storage_new(&s, 64, NULL, C10C_DEVICE_TYPE_CPU, false));
  pthread_t th[4];
  for (int i = 0; i < 4; i++) ASSERT_EQ(pthread_create(&th[i], NULL, read_only_reader, s), 0);
  ASSERT_OK(c10c_storage_set_read_only(s));
  for (int i = 0; i < 4; i++) ASSERT_EQ(pthread_join(th[i], NULL), 0);
  ASSERT_TRUE(c10c_storage_is_read_only(s));
  c10c_storage_release(s);
}

RUN_TESTS(T(storages_shared_across_threads_are_freed_once),
          T(replaced_allocators_are_destroyed_once_while_other_threads_use_the_registry),
          T(marking_a_storage_read_only_races_with_no_reader))
