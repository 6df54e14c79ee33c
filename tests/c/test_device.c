/* Device types and devices: c10's numbering, names, string grammar and messages (ported from
 * c10/test/core/Device_test.cpp plus cases verified against torch). */
#include "harness.h"

static c10c_device parse_ok(const char *s) {
  c10c_device d = {-1, -1};
  ASSERT_OK(c10c_device_from_string(&d, s));
  return d;
}

static void expect_error(const char *s, const char *message) {
  c10c_device d;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_device_from_string(&d, s));
  ASSERT_ERROR_MESSAGE(message);
}

TEST(device_type_values_and_names_match_c10) {
  ASSERT_EQ(C10C_DEVICE_TYPE_COUNT, 21);
  ASSERT_EQ(C10C_DEVICE_TYPE_META, 14);
  ASSERT_EQ(C10C_DEVICE_TYPE_PRIVATEUSE1, 20);
  ASSERT_STR_EQ(c10c_device_type_name(C10C_DEVICE_TYPE_CUDA, true), "cuda");
  ASSERT_STR_EQ(c10c_device_type_name(C10C_DEVICE_TYPE_VULKAN, false), "VULKAN");
  ASSERT_STR_EQ(c10c_device_type_name(C10C_DEVICE_TYPE_PRIVATEUSE1, true), "privateuseone");
  ASSERT_STR_EQ(c10c_device_type_name(C10C_DEVICE_TYPE_PRIVATEUSE1, false), "PRIVATEUSEONE");
  ASSERT_TRUE(c10c_device_type_is_valid(0));
  ASSERT_TRUE(c10c_device_type_is_valid(20));
  ASSERT_FALSE(c10c_device_type_is_valid(21));
  ASSERT_FALSE(c10c_device_type_is_valid(-1));
}

TEST(unknown_device_type_name_is_an_error) {
  ASSERT_TRUE(c10c_device_type_name(21, true) == NULL);
  ASSERT_EQ(c10c_last_error_status(), C10C_STATUS_INVALID_ARGUMENT);
  ASSERT_ERROR_MESSAGE(
      "Unknown device: 21. If you have recently updated the caffe2.proto file to add a new "
      "device type, did you forget to update the DeviceTypeName() function to reflect such "
      "recent changes?");
  ASSERT_TRUE(c10c_device_type_name(-3, false) == NULL);
}

TEST(valid_device_strings_parse) {
  c10c_device d = parse_ok("cpu");
  ASSERT_EQ(d.type, C10C_DEVICE_TYPE_CPU);
  ASSERT_EQ(d.index, -1);
  d = parse_ok("cuda:0");
  ASSERT_EQ(d.type, C10C_DEVICE_TYPE_CUDA);
  ASSERT_EQ(d.index, 0);
  d = parse_ok("cuda:12");
  ASSERT_EQ(d.index, 12);
  d = parse_ok("cuda:127");
  ASSERT_EQ(d.index, 127);
  d = parse_ok("privateuseone:1");
  ASSERT_EQ(d.type, C10C_DEVICE_TYPE_PRIVATEUSE1);
  d = parse_ok("cpu:1"); /* accepted by c10 release builds */
  ASSERT_EQ(d.index, 1);
  ASSERT_EQ(parse_ok("meta:0").type, C10C_DEVICE_TYPE_META);
  ASSERT_EQ(parse_ok("mkldnn").type, C10C_DEVICE_TYPE_MKLDNN);
}

TEST(malformed_device_strings_are_invalid) {
  static const char *const bad[] = {
      "cuda:01", "cuda:00", "cuda:-1", "cuda:",   "cuda:a",  "cuda:0:1", ":0",    "cuda 0",
      "cu da",   "cuda_0",  "cuda_0:", "cuda:1x", "cuda:+1", "cuda: 1",  " cuda", "cuda:0 ",
      "cpu:-1",  "cpu:x",   "::",      ":",       "cpu:0:",  "cuda:cuda"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char expected[64];
    snprintf(expected, sizeof expected, "Invalid device string: '%s'", bad[i]);
    expect_error(bad[i], expected);
  }
}

TEST(empty_string_has_its_own_message) { expect_error("", "Device string must not be empty"); }

TEST(unknown_type_lists_the_known_ones) {
  static const char expected[] =
      "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, "
      "xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device "
      "string: ";
  char msg[512];
  snprintf(msg, sizeof msg, "%s%s", expected, "metal");
  expect_error("metal", msg); /* printed by c10, never parsed */
  snprintf(msg, sizeof msg, "%s%s", expected, "CPU");
  expect_error("CPU", msg);
  snprintf(msg, sizeof msg, "%s%s", expected, "foo");
  expect_error("foo:1", msg);
  snprintf(msg, sizeof msg, "%s%s", expected, "cuda_");
  expect_error("cuda_:0", msg);
}

TEST(index_beyond_int_cannot_be_parsed) {
  expect_error("cuda:99999999999",
               "Could not parse device index '99999999999' in device string 'cuda:99999999999'");
  expect_error("cuda:2147483648",
               "Could not parse device index '2147483648' in device string 'cuda:2147483648'");
}

TEST(index_above_127_is_refused_not_truncated) {
  expect_error("cuda:128",
               "Device index 128 is out of range (the largest is 127) in device string "
               "'cuda:128'");
  expect_error("cuda:255",
               "Device index 255 is out of range (the largest is 127) in device string "
               "'cuda:255'");
  expect_error("meta:2147483647",
               "Device index 2147483647 is out of range (the largest is 127) in device string "
               "'meta:2147483647'");
}

TEST(from_chars_treats_nul_as_an_invalid_character) {
  c10c_device d;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_device_from_chars(&d, "cu\0da", 5));
  ASSERT_OK(c10c_device_from_chars(&d, "cuda:3junk", 6));
  ASSERT_EQ(d.index, 3);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_device_from_chars(&d, NULL, 0));
  ASSERT_ERROR_MESSAGE("Device string must not be empty");
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_device_from_chars(&d, NULL, 3));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_device_from_string(&d, NULL));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_device_from_string(NULL, "cpu"));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_device_from_chars(NULL, "cpu", 3));
}

TEST(device_init_checks_type_and_index) {
  c10c_device d;
  ASSERT_OK(c10c_device_init(&d, C10C_DEVICE_TYPE_CUDA, 3));
  ASSERT_EQ(d.index, 3);
  ASSERT_OK(c10c_device_init(&d, C10C_DEVICE_TYPE_CUDA, -1));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_device_init(&d, C10C_DEVICE_TYPE_CUDA, -2));
  ASSERT_ERROR_MESSAGE("Device index must not be negative");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_device_init(&d, C10C_DEVICE_TYPE_CUDA, 128));
  ASSERT_ERROR_MESSAGE("Device index 128 is out of range (the largest is 127)");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_device_init(&d, C10C_DEVICE_TYPE_CUDA, INT64_MAX));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_device_init(&d, 21, 0));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_device_init(&d, -1, 0));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_device_init(NULL, 0, 0));
}

TEST(devices_format_as_c10) {
  char buf[C10C_DEVICE_STRING_MAX];
  c10c_device d = {C10C_DEVICE_TYPE_CUDA, 1};
  ASSERT_OK(c10c_device_to_string(buf, sizeof buf, d));
  ASSERT_STR_EQ(buf, "cuda:1");
  d.index = -1;
  ASSERT_OK(c10c_device_to_string(buf, sizeof buf, d));
  ASSERT_STR_EQ(buf, "cuda");
  c10c_device metal = {C10C_DEVICE_TYPE_METAL, -1};
  ASSERT_OK(c10c_device_to_string(buf, sizeof buf, metal));
  ASSERT_STR_EQ(buf, "metal");
  c10c_device longest = {C10C_DEVICE_TYPE_PRIVATEUSE1, 127};
  ASSERT_OK(c10c_device_to_string(buf, sizeof buf, longest));
  ASSERT_STR_EQ(buf, "privateuseone:127");
}

TEST(device_to_string_errors) {
  char buf[4];
  c10c_device d = {C10C_DEVICE_TYPE_CUDA, 1};
  ASSERT_STATUS(C10C_STATUS_BUFFER_TOO_SMALL, c10c_device_to_string(buf, sizeof buf, d));
  ASSERT_STR_EQ(buf, "cud");
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_device_to_string(NULL, 8, d));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_device_to_string(NULL, 0, d));
  buf[0] = 'x';
  ASSERT_STATUS(C10C_STATUS_BUFFER_TOO_SMALL, c10c_device_to_string(buf, 0, d));
  ASSERT_EQ(buf[0], 'x'); /* nothing written into 0 bytes */
  c10c_device bad_type = {30, 0};
  char big[32];
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_device_to_string(big, sizeof big, bad_type));
  c10c_device bad_index = {C10C_DEVICE_TYPE_CUDA, -5};
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_device_to_string(big, sizeof big, bad_index));
}

TEST(equality_hash_and_as_strided_support) {
  c10c_device a = {C10C_DEVICE_TYPE_CUDA, 1}, b = {C10C_DEVICE_TYPE_CUDA, 1};
  c10c_device c = {C10C_DEVICE_TYPE_CUDA, -1};
  ASSERT_TRUE(c10c_device_equal(a, b));
  ASSERT_FALSE(c10c_device_equal(a, c));
  ASSERT_EQ_U64(c10c_device_hash(a), (1u << 16) | 1u);
  ASSERT_EQ_U64(c10c_device_hash(c), (1u << 16) | 0xFFu);
  ASSERT_TRUE(c10c_device_supports_as_strided(a));
  c10c_device xla = {C10C_DEVICE_TYPE_XLA, 0}, lazy = {C10C_DEVICE_TYPE_LAZY, 0},
              ipu = {C10C_DEVICE_TYPE_IPU, 0};
  ASSERT_FALSE(c10c_device_supports_as_strided(xla));
  ASSERT_FALSE(c10c_device_supports_as_strided(lazy));
  ASSERT_FALSE(c10c_device_supports_as_strided(ipu));
}

RUN_TESTS(T(device_type_values_and_names_match_c10), T(unknown_device_type_name_is_an_error),
          T(valid_device_strings_parse), T(malformed_device_strings_are_invalid),
          T(empty_string_has_its_own_message), T(unknown_type_lists_the_known_ones),
          T(index_beyond_int_cannot_be_parsed), T(index_above_127_is_refused_not_truncated),
          T(from_chars_treats_nul_as_an_invalid_character), T(device_init_checks_type_and_index),
          T(devices_format_as_c10), T(device_to_string_errors),
          T(equality_hash_and_as_strided_support))
