/* Release and ABI versions, and c10c_abi_check against matching and mismatching callers. */
#include "harness.h"

/* This test also runs, built at a release, against every later library (abi/old_hosts.sh):
 * what it asserts about versions holds for a newer library too. */
TEST(run_time_versions_are_at_least_the_headers) {
  uint32_t abi = c10c_abi_version(), release = c10c_version_number();
  ASSERT_EQ(abi >> 16, C10C_ABI_VERSION_MAJOR);
  ASSERT_TRUE((int)(abi & 0xFFFF) >= C10C_ABI_VERSION_MINOR);
  ASSERT_TRUE(release >= C10C_VERSION_NUMBER);
  char expected[32];
  snprintf(expected, sizeof expected, "%u.%u.%u", (unsigned)(release / 10000),
           (unsigned)(release / 100 % 100), (unsigned)(release % 100));
  ASSERT_STR_EQ(c10c_version_string(), expected);
  ASSERT_EQ(C10C_ABI_VERSION >> 16, 1);
}

TEST(abi_check_accepts_this_build) {
  c10c_abi_info info = C10C_ABI_INFO_INIT;
  ASSERT_OK(c10c_abi_check(&info));
}

TEST(abi_check_rejects_null) { ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_abi_check(NULL)); }

TEST(abi_check_rejects_other_major_and_newer_minor) {
  c10c_abi_info info = C10C_ABI_INFO_INIT;
  info.abi_version = (2u << 16);
  ASSERT_STATUS(C10C_STATUS_ABI_MISMATCH, c10c_abi_check(&info));
  ASSERT_TRUE(strstr(c10c_last_error_message(), "compiled against ABI 2.0") != NULL);
  /* a caller one minor newer than the loaded library (which may be newer than these headers) */
  uint32_t major = c10c_abi_version() >> 16, minor = c10c_abi_version() & 0xFFFF;
  info.abi_version = c10c_abi_version() + 1;
  ASSERT_STATUS(C10C_STATUS_ABI_MISMATCH, c10c_abi_check(&info));
  /* the message names the minor the caller needs */
  char expected[200];
  snprintf(expected, sizeof expected,
           "libc10c ABI %u.%u (release %s) is older than the ABI %u.%u this program was built "
           "for; install a libc10c with ABI >= %u.%u",
           (unsigned)major, (unsigned)minor, c10c_version_string(), (unsigned)major,
           (unsigned)minor + 1, (unsigned)major, (unsigned)minor + 1);
  ASSERT_ERROR_MESSAGE(expected);
  info.abi_version = C10C_ABI_VERSION;
  ASSERT_OK(c10c_abi_check(&info));
}

TEST(abi_check_rejects_a_struct_size_difference) {
  c10c_abi_info info = C10C_ABI_INFO_INIT;
  info.sizeof_stream = 24;
  ASSERT_STATUS(C10C_STATUS_ABI_MISMATCH, c10c_abi_check(&info));
  char want[120];
  snprintf(want, sizeof want,
           "libc10c ABI mismatch: sizeof(c10c_stream) is 24 in the caller but %zu in the loaded "
           "library",
           sizeof(c10c_stream));
  ASSERT_ERROR_MESSAGE(want);
}

TEST(abi_check_ignores_fields_an_older_caller_does_not_know) {
  c10c_abi_info info = C10C_ABI_INFO_INIT;
  info.sizeof_dispatch_key_set = 99;
  info.struct_size = (uint32_t)offsetof(c10c_abi_info, sizeof_dispatch_key_set);
  ASSERT_OK(c10c_abi_check(&info));
  info.struct_size = 4;
  ASSERT_STATUS(C10C_STATUS_ABI_MISMATCH, c10c_abi_check(&info));
}

/* Frozen per target, by that target's C rules: i386 aligns 64-bit members to 4 bytes (c10::Stream
 * is 12 bytes there too), and 32-bit targets have 4-byte pointers. */
#if defined(__i386__)
enum { I64_ALIGN = 4 };
#else
enum { I64_ALIGN = 8 };
#endif

TEST(public_struct_layouts_are_frozen) {
  ASSERT_EQ(sizeof(c10c_device), 2);
  ASSERT_EQ(offsetof(c10c_device, index), 1);
  ASSERT_EQ(sizeof(c10c_stream), 8 + I64_ALIGN);
  ASSERT_EQ(offsetof(c10c_stream, id), I64_ALIGN);
  ASSERT_EQ(sizeof(c10c_stream_data3), 8 + I64_ALIGN);
  ASSERT_EQ(sizeof(c10c_dispatch_key_set), 8);
  ASSERT_EQ(sizeof(c10c_abi_info), 28);
  ASSERT_EQ(sizeof(c10c_data_ptr), 4 * sizeof(void *));
  ASSERT_EQ(sizeof(c10c_dtype), 1);
  ASSERT_EQ(sizeof(c10c_dispatch_key), 2);
}

RUN_TESTS(T(run_time_versions_are_at_least_the_headers), T(abi_check_accepts_this_build),
          T(abi_check_rejects_null), T(abi_check_rejects_other_major_and_newer_minor),
          T(abi_check_rejects_a_struct_size_difference),
          T(abi_check_ignores_fields_an_older_caller_does_not_know),
          T(public_struct_layouts_are_frozen))
