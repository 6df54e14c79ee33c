/* The static library (libc10c.a) as a host links it: the built-in allocators register themselves
 * with the registry when loaded (the registry does not call up into them), so a static link must
 * carry them even though nothing names them; the archive holds one prelinked object for that. */
#include "harness.h"

TEST(registry_gives_the_builtin_allocators_in_a_static_link) {
  c10c_allocator *cpu = NULL, *cuda = NULL;
  ASSERT_OK(c10c_allocator_get(&cpu, C10C_DEVICE_TYPE_CPU));
  ASSERT_STR_EQ(c10c_allocator_name(cpu), "cpu_caching");
  ASSERT_OK(c10c_allocator_get(&cuda, C10C_DEVICE_TYPE_CUDA)); /* no driver is loaded for this */
  ASSERT_STR_EQ(c10c_allocator_name(cuda), "cuda_caching");
  c10c_allocator *meta = NULL;
  ASSERT_OK(c10c_allocator_get(&meta, C10C_DEVICE_TYPE_META));
  ASSERT_STR_EQ(c10c_allocator_name(meta), "meta");
  c10c_allocator *none = NULL;
  ASSERT_STATUS(C10C_STATUS_UNAVAILABLE, c10c_allocator_get(&none, C10C_DEVICE_TYPE_XLA));
}

RUN_TESTS(T(registry_gives_the_builtin_allocators_in_a_static_link))
