/* c10's intrusive_ptr semantics, white-box, on the library's refcount core (the behaviours of
 * c10/test/util/intrusive_ptr_test.cpp that a C API has: counts, destruction timing, weak
 * references, locking, release_resources). Links the static library for the internal header. */
#include "harness.h"
#include "refcount.h"

typedef struct mock {
  c10c__object obj;
  bool *resources_released;
  bool *destructed;
  int *destroy_calls;
} mock;

static void mock_release_resources(c10c__object *obj) { *((mock *)obj)->resources_released = true; }

static void mock_destroy(c10c__object *obj) {
  mock *m = (mock *)obj;
  *m->resources_released = true; /* as c10's DestructableMock: the destructor sets both */
  *m->destructed = true;
  (*m->destroy_calls)++;
}

static const c10c__object_type mock_type = {mock_release_resources, mock_destroy};

typedef struct fixture {
  mock m;
  bool released, destructed;
  int destroys;
} fixture;

static void make(fixture *f) {
  f->released = f->destructed = false;
  f->destroys = 0;
  f->m.resources_released = &f->released;
  f->m.destructed = &f->destructed;
  f->m.destroy_calls = &f->destroys;
  c10c__object_init(&f->m.obj, &mock_type);
}

TEST(new_object_has_use_count_1_and_weak_count_1) {
  fixture f;
  make(&f);
  ASSERT_EQ(c10c__strong_count(&f.m.obj), 1);
  ASSERT_EQ(c10c__weak_count(&f.m.obj), 1);
  ASSERT_EQ_U64(atomic_load(&f.m.obj.refcount), (UINT64_C(1) << 32) + 1);
  c10c__decref(&f.m.obj);
  ASSERT_TRUE(f.destructed);
  ASSERT_EQ(f.destroys, 1);
}

TEST(copy_then_release_destructs_after_last_strong_reference) {
  fixture f;
  make(&f);
  c10c__incref(&f.m.obj);
  ASSERT_EQ(c10c__strong_count(&f.m.obj), 2);
  c10c__decref(&f.m.obj);
  ASSERT_FALSE(f.destructed);
  ASSERT_FALSE(f.released);
  ASSERT_EQ(c10c__strong_count(&f.m.obj), 1);
  c10c__decref(&f.m.obj);
  ASSERT_TRUE(f.destructed);
  ASSERT_EQ(f.destroys, 1);
}

TEST(without_weak_references_release_resources_is_not_called_separately) {
  /* c10: with no weak references the destructor runs and release_resources does not; the mock's
   * destructor sets both flags, so only the destroy count tells them apart. */
  fixture f;
  make(&f);
  c10c__incref(&f.m.obj);
  c10c__decref(&f.m.obj);
  c10c__decref(&f.m.obj);
  ASSERT_EQ(f.destroys, 1);
}

TEST(weak_only_object_has_resources_released_but_is_not_destructed) {
  fixture f;
  make(&f);
  c10c__weak_incref(&f.m.obj);
  ASSERT_EQ(c10c__weak_count(&f.m.obj), 2);
  c10c__decref(&f.m.obj); /* last strong reference, one weak remains */
  ASSERT_TRUE(f.released);
  ASSERT_FALSE(f.destructed);
  ASSERT_EQ(c10c__strong_count(&f.m.obj), 0);
  ASSERT_EQ(c10c__weak_count(&f.m.obj), 1);
  ASSERT_FALSE(c10c__weak_lock(&f.m.obj)); /* expired: lock gives nothing */
  c10c__weak_decref(&f.m.obj);
  ASSERT_TRUE(f.destructed);
  ASSERT_EQ(f.destroys, 1);
}

TEST(weak_lock_adds_a_strong_reference_while_alive) {
  fixture f;
  make(&f);
  c10c__incref(&f.m.obj);      /* q = p */
  c10c__weak_incref(&f.m.obj); /* w = weak(p) */
  ASSERT_EQ(c10c__strong_count(&f.m.obj), 2);
  ASSERT_EQ(c10c__weak_count(&f.m.obj), 2);
  ASSERT_TRUE(c10c__weak_lock(&f.m.obj));
  ASSERT_EQ(c10c__strong_count(&f.m.obj), 3);
  c10c__decref(&f.m.obj);
  c10c__decref(&f.m.obj);
  c10c__decref(&f.m.obj);
  ASSERT_EQ(c10c__strong_count(&f.m.obj), 0);
  ASSERT_EQ(c10c__weak_count(&f.m.obj), 1);
  ASSERT_TRUE(f.released);
  ASSERT_FALSE(f.destructed);
  c10c__weak_decref(&f.m.obj);
  ASSERT_TRUE(f.destructed);
}

TEST(weak_copies_keep_the_shell_until_the_last) {
  fixture f;
  make(&f);
  c10c__weak_incref(&f.m.obj);
  c10c__weak_incref(&f.m.obj);
  c10c__decref(&f.m.obj);
  c10c__weak_decref(&f.m.obj);
  ASSERT_FALSE(f.destructed);
  c10c__weak_decref(&f.m.obj);
  ASSERT_TRUE(f.destructed);
  ASSERT_EQ(f.destroys, 1);
}

RUN_TESTS(T(new_object_has_use_count_1_and_weak_count_1),
          T(copy_then_release_destructs_after_last_strong_reference),
          T(without_weak_references_release_resources_is_not_called_separately),
          T(weak_only_object_has_resources_released_but_is_not_destructed),
          T(weak_lock_adds_a_strong_reference_while_alive),
          T(weak_copies_keep_the_shell_until_the_last))
