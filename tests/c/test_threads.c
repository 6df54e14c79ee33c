/* Many threads at once: every call is safe from any thread and each thread sees only its own
 * last error. Run under ThreadSanitizer in CI. */
#include <pthread.h>

#include "harness.h"

enum { THREADS = 8, ROUNDS = 2000 };

static void *worker(void *arg) {
  int id = (int)(intptr_t)arg;
  char bad[32], expected[96], text[C10C_DISPATCH_KEY_SET_STRING_MAX];
  snprintf(bad, sizeof bad, "bad%d:x", id);
  snprintf(expected, sizeof expected, "Invalid device string: '%s'", bad);
  long failures = 0;
  for (int i = 0; i < ROUNDS; i++) {
    c10c_device d;
    if (c10c_device_from_string(&d, bad) != C10C_STATUS_ERROR) failures++;
    if (strcmp(c10c_last_error_message(), expected) != 0) failures++;
    if (c10c_device_from_string(&d, "cuda:3") != C10C_STATUS_OK || d.index != 3) failures++;
    c10c_dtype t;
    if (c10c_promote_types(&t, C10C_DTYPE_INT8, C10C_DTYPE_UINT8) != C10C_STATUS_OK ||
        t != C10C_DTYPE_INT16)
      failures++;
    c10c_dispatch_key_set ks;
    if (c10c_dispatch_key_set_for_tensor(&ks, C10C_DTYPE_FLOAT32, C10C_LAYOUT_STRIDED,
                                         (c10c_device_type)(id % 2), false) != C10C_STATUS_OK)
      failures++;
    if (c10c_dispatch_key_set_to_string(text, sizeof text, NULL, ks) != C10C_STATUS_OK) failures++;
    if (strcmp(c10c_last_error_message(), expected) != 0) failures++;
  }
  return (void *)(intptr_t)failures;
}

TEST(concurrent_calls_keep_per_thread_errors) {
  pthread_t threads[THREADS];
  for (int i = 0; i < THREADS; i++)
    ASSERT_EQ(pthread_create(&threads[i], NULL, worker, (void *)(intptr_t)i), 0);
  for (int i = 0; i < THREADS; i++) {
    void *failures = NULL;
    ASSERT_EQ(pthread_join(threads[i], &failures), 0);
    ASSERT_EQ((intptr_t)failures, 0);
  }
}

RUN_TESTS(T(concurrent_calls_keep_per_thread_errors))
