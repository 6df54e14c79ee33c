/* Status codes, names and the thread-local last error. */
#include <pthread.h>

#include "harness.h"

TEST(status_codes_are_pinned) {
  ASSERT_EQ(C10C_STATUS_OK, 0);
  ASSERT_EQ(C10C_STATUS_ERROR, -1);
  ASSERT_EQ(C10C_STATUS_INVALID_ARGUMENT, -2);
  ASSERT_EQ(C10C_STATUS_INDEX_OUT_OF_RANGE, -3);
  ASSERT_EQ(C10C_STATUS_TYPE_ERROR, -4);
  ASSERT_EQ(C10C_STATUS_NOT_IMPLEMENTED, -5);
  ASSERT_EQ(C10C_STATUS_OUT_OF_MEMORY, -6);
  ASSERT_EQ(C10C_STATUS_OVERFLOW, -7);
  ASSERT_EQ(C10C_STATUS_NULL_POINTER, -8);
  ASSERT_EQ(C10C_STATUS_BUFFER_TOO_SMALL, -9);
  ASSERT_EQ(C10C_STATUS_UNAVAILABLE, -10);
  ASSERT_EQ(C10C_STATUS_ABI_MISMATCH, -11);
  ASSERT_EQ(C10C_STATUS_INTERNAL, -12);
  ASSERT_EQ(C10C_STATUS_MIN, C10C_STATUS_UNSUPPORTED);
  ASSERT_EQ(sizeof(c10c_status), 4);
}

TEST(every_code_has_a_distinct_name_and_text) {
  for (int s = C10C_STATUS_MIN; s <= 0; s++) {
    ASSERT_TRUE(strcmp(c10c_status_name(s), "UNKNOWN") != 0);
    ASSERT_TRUE(strcmp(c10c_status_string(s), "unknown status") != 0);
    for (int t = C10C_STATUS_MIN; t < s; t++)
      ASSERT_TRUE(strcmp(c10c_status_name(s), c10c_status_name(t)) != 0);
  }
  ASSERT_STR_EQ(c10c_status_name(C10C_STATUS_OK), "OK");
  ASSERT_STR_EQ(c10c_status_name(C10C_STATUS_INVALID_ARGUMENT), "INVALID_ARGUMENT");
  ASSERT_STR_EQ(c10c_status_string(C10C_STATUS_OUT_OF_MEMORY), "out of memory");
}

TEST(unknown_codes_have_fallback_names) {
  ASSERT_STR_EQ(c10c_status_name(1), "UNKNOWN");
  ASSERT_STR_EQ(c10c_status_name(C10C_STATUS_MIN - 1), "UNKNOWN");
  ASSERT_STR_EQ(c10c_status_string(12345), "unknown status");
}

TEST(last_error_records_failure_and_survives_success) {
  c10c_clear_last_error();
  ASSERT_STR_EQ(c10c_last_error_message(), "");
  ASSERT_EQ(c10c_last_error_status(), C10C_STATUS_OK);
  c10c_device d;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_device_from_string(&d, ""));
  ASSERT_ERROR_MESSAGE("Device string must not be empty");
  ASSERT_EQ(c10c_last_error_status(), C10C_STATUS_ERROR);
  ASSERT_OK(c10c_device_from_string(&d, "cpu"));
  ASSERT_ERROR_MESSAGE("Device string must not be empty");
  c10c_clear_last_error();
  ASSERT_STR_EQ(c10c_last_error_message(), "");
}

TEST(null_out_parameter_names_the_argument) {
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_device_from_string(NULL, "cpu"));
  ASSERT_ERROR_MESSAGE("c10c_device_from_chars: argument 'out' must not be NULL");
}

TEST(long_messages_are_truncated_not_overflowed) {
  char big[4000];
  memset(big, 'x', sizeof big - 2);
  big[0] = '!';
  big[sizeof big - 2] = 'y';
  big[sizeof big - 1] = '\0';
  c10c_device d;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_device_from_string(&d, big));
  size_t n = strlen(c10c_last_error_message());
  ASSERT_TRUE(n > 100 && n < 1024);
}

static void *fail_in_thread(void *arg) {
  (void)arg;
  c10c_device d;
  c10c_status st = c10c_device_from_string(&d, "gpu");
  static char copy[1024];
  snprintf(copy, sizeof copy, "%d|%s", (int)st, c10c_last_error_message());
  return copy;
}

TEST(last_error_is_per_thread) {
  c10c_device d;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_device_from_string(&d, "cuda:"));
  pthread_t th;
  void *result = NULL;
  ASSERT_EQ(pthread_create(&th, NULL, fail_in_thread, NULL), 0);
  ASSERT_EQ(pthread_join(th, &result), 0);
  ASSERT_TRUE(strstr((const char *)result, "start of device string: gpu") != NULL);
  ASSERT_ERROR_MESSAGE("Invalid device string: 'cuda:'");
}

RUN_TESTS(T(status_codes_are_pinned), T(every_code_has_a_distinct_name_and_text),
          T(unknown_codes_have_fallback_names), T(last_error_records_failure_and_survives_success),
          T(null_out_parameter_names_the_argument), T(long_messages_are_truncated_not_overflowed),
          T(last_error_is_per_thread))
