/* Renaming the PrivateUse1 device type: process-wide, once, racing threads agree on one name.
 * Its own executable, since the registration cannot be undone. */
#include <pthread.h>

#include "c10c/testing.h"
#include "harness.h"

TEST(default_name_is_privateuseone) {
  ASSERT_STR_EQ(c10c_privateuse1_backend_name(true), "privateuseone");
  ASSERT_STR_EQ(c10c_privateuse1_backend_name(false), "PRIVATEUSEONE");
  c10c_device d;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_device_from_string(&d, "foo:1"));
}

TEST(bad_names_are_refused) {
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_privateuse1_backend_register(NULL));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_privateuse1_backend_register(""));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_privateuse1_backend_register("foo:1"));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_privateuse1_backend_register("npu2"));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_privateuse1_backend_register("abcdefghijklmnopqrstuvwxyz_"));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_privateuse1_backend_register("cuda"));
  ASSERT_ERROR_MESSAGE("Cannot register privateuse1 backend with in-tree device name: cuda");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_privateuse1_backend_register("mtia"));
  /* beyond c10's six: every name a device string may start with (a PrivateUse1 device named
   * "xla" would print as "xla:0" and parse back as an XLA device) */
  static const char *const parseable[] = {"meta", "xla", "lazy", "mkldnn", "ve", "hpu", "ipu"};
  for (size_t i = 0; i < sizeof parseable / sizeof parseable[0]; i++) {
    ASSERT_STATUS(C10C_STATUS_ERROR, c10c_privateuse1_backend_register(parseable[i]));
    char expected[96];
    snprintf(expected, sizeof expected,
             "Cannot register privateuse1 backend with in-tree device name: %s", parseable[i]);
    ASSERT_ERROR_MESSAGE(expected);
  }
  c10c_testing_fail_allocation(1);
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c_privateuse1_backend_register("zeta"));
  c10c_testing_fail_allocation(0);
  ASSERT_STR_EQ(c10c_privateuse1_backend_name(true), "privateuseone");
}

static const char *const racers[] = {"alpha", "beta", "gamma", "delta"};

static void *race(void *arg) {
  c10c_status st = c10c_privateuse1_backend_register(racers[(intptr_t)arg]);
  return (void *)(intptr_t)st;
}

TEST(racing_registrations_agree_on_one_name) {
  pthread_t threads[4];
  for (int i = 0; i < 4; i++)
    ASSERT_EQ(pthread_create(&threads[i], NULL, race, (void *)(intptr_t)i), 0);
  int winners = 0;
  for (int i = 0; i < 4; i++) {
    void *st = NULL;
    ASSERT_EQ(pthread_join(threads[i], &st), 0);
    if ((intptr_t)st == C10C_STATUS_OK) {
      winners++;
      ASSERT_STR_EQ(racers[i], c10c_privateuse1_backend_name(true));
    }
  }
  ASSERT_EQ(winners, 1);
  const char *winner = c10c_privateuse1_backend_name(true);
  ASSERT_OK(c10c_privateuse1_backend_register(winner)); /* the same name again is fine */
  const char *other = strcmp(winner, "alpha") == 0 ? "beta" : "alpha";
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_privateuse1_backend_register(other));
  char expected[128];
  snprintf(expected, sizeof expected,
           "torch.register_privateuse1_backend() has already been set! Current backend: %s",
           winner);
  ASSERT_ERROR_MESSAGE(expected);
}

TEST(registered_name_parses_and_prints) {
  const char *name = c10c_privateuse1_backend_name(true);
  char upper[32];
  snprintf(upper, sizeof upper, "%s", name);
  for (char *p = upper; *p; p++)
    if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
  ASSERT_STR_EQ(c10c_privateuse1_backend_name(false), upper);
  ASSERT_STR_EQ(c10c_device_type_name(C10C_DEVICE_TYPE_PRIVATEUSE1, false), upper);
  char text[64], buf[C10C_DEVICE_STRING_MAX];
  snprintf(text, sizeof text, "%s:7", name);
  c10c_device d;
  ASSERT_OK(c10c_device_from_string(&d, text));
  ASSERT_EQ(d.type, C10C_DEVICE_TYPE_PRIVATEUSE1);
  ASSERT_EQ(d.index, 7);
  ASSERT_OK(c10c_device_to_string(buf, sizeof buf, d));
  ASSERT_STR_EQ(buf, text);
  ASSERT_OK(c10c_device_from_string(&d, "privateuseone:2")); /* the old name still parses */
  ASSERT_OK(c10c_device_to_string(buf, sizeof buf, d));
  snprintf(text, sizeof text, "%s:2", name);
  ASSERT_STR_EQ(buf, text);
  snprintf(text, sizeof text, "%s:128", name);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_device_from_string(&d, text));
  c10c_device longest = {C10C_DEVICE_TYPE_PRIVATEUSE1, 127};
  ASSERT_OK(c10c_device_to_string(buf, sizeof buf, longest));
}

RUN_TESTS(T(default_name_is_privateuseone), T(bad_names_are_refused),
          T(racing_registrations_agree_on_one_name), T(registered_name_parses_and_prints))
