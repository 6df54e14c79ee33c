/* A tiny test harness: TEST(name) defines a test, the ASSERT_* macros print both sides on
 * failure, and RUN_TESTS() runs them in order. One executable per module, run by meson test.
 */
#ifndef C10C_TEST_HARNESS_H
#define C10C_TEST_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c10c/c10c.h"

typedef void (*test_fn)(void);
typedef struct test_case {
  const char *name;
  test_fn fn;
} test_case;

static int test_failures;
static int test_current_failed;

#define TEST(name) static void name(void)

#define FAIL_AT(...)                                  \
  do {                                                \
    fprintf(stderr, "  %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__);                     \
    fprintf(stderr, "\n");                            \
    test_current_failed = 1;                          \
  } while (0)

#define ASSERT_TRUE(cond)                             \
  do {                                                \
    if (!(cond)) FAIL_AT("expected true: %s", #cond); \
  } while (0)

#define ASSERT_FALSE(cond)                          \
  do {                                              \
    if (cond) FAIL_AT("expected false: %s", #cond); \
  } while (0)

#define ASSERT_EQ(a, b)                                              \
  do {                                                               \
    long long a_ = (long long)(a), b_ = (long long)(b);              \
    if (a_ != b_) FAIL_AT("%s == %s: %lld != %lld", #a, #b, a_, b_); \
  } while (0)

#define ASSERT_EQ_U64(a, b)                                                         \
  do {                                                                              \
    uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                \
    if (a_ != b_) FAIL_AT("%s == %s: 0x%" PRIx64 " != 0x%" PRIx64, #a, #b, a_, b_); \
  } while (0)

#define ASSERT_STR_EQ(a, b)                                                                  \
  do {                                                                                       \
    const char *a_ = (a), *b_ = (b);                                                         \
    if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0)                                     \
      FAIL_AT("%s == %s: \"%s\" != \"%s\"", #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
  } while (0)

/* Asserts that call returns code; on a mismatch prints both names and the error message. */
#define ASSERT_STATUS(code, call)                                                         \
  do {                                                                                    \
    c10c_status got_ = (call);                                                            \
    if (got_ != (code))                                                                   \
      FAIL_AT("%s returned %s, expected %s (message: %s)", #call, c10c_status_name(got_), \
              c10c_status_name(code), c10c_last_error_message());                         \
  } while (0)

#define ASSERT_OK(call) ASSERT_STATUS(C10C_STATUS_OK, call)

/* Asserts the calling thread's last error message equals text. */
#define ASSERT_ERROR_MESSAGE(text) ASSERT_STR_EQ(c10c_last_error_message(), text)

/* A host allocator over malloc, installed (priority 0) for a device type that has none of its own,
 * so that tests can make tensors there. */
static inline c10c_status harness_malloc_allocate(c10c_data_ptr *out, void *self, size_t nbytes,
                                                  size_t alignment) {
  (void)self, (void)alignment;
  if (nbytes == 0) return C10C_STATUS_OK;
  out->data = out->ctx = malloc(nbytes);
  out->deleter = free;
  return out->data != NULL ? C10C_STATUS_OK : C10C_STATUS_OUT_OF_MEMORY;
}

static inline void install_malloc_allocator(c10c_device_type type) {
  c10c_allocator_vtable vt;
  memset(&vt, 0, sizeof vt);
  vt.struct_size = sizeof vt;
  vt.allocate = harness_malloc_allocate;
  c10c_allocator *a = NULL;
  ASSERT_OK(c10c_allocator_new(&a, &vt, NULL, type));
  bool installed = false;
  ASSERT_OK(c10c_allocator_set(&installed, a, 0));
  ASSERT_TRUE(installed);
  c10c_allocator_release(a);
}

#define RUN_TESTS(...)                                                           \
  int main(void) {                                                               \
    static const test_case tests_[] = {__VA_ARGS__};                             \
    int count_ = (int)(sizeof tests_ / sizeof tests_[0]);                        \
    for (int i_ = 0; i_ < count_; i_++) {                                        \
      test_current_failed = 0;                                                   \
      tests_[i_].fn();                                                           \
      printf("%s %s\n", test_current_failed ? "FAIL" : "ok  ", tests_[i_].name); \
      test_failures += test_current_failed;                                      \
    }                                                                            \
    printf("%d passed, %d failed\n", count_ - test_failures, test_failures);     \
    return test_failures ? 1 : 0;                                                \
  }

#define T(name) \
  { #name, name }

#endif /* C10C_TEST_HARNESS_H */
