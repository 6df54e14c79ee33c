/* Stream values: construction, pack3/unpack3, the hash without c10's sign-extension bug. */
#include "harness.h"

TEST(init_default_and_equality) {
  c10c_device cuda3 = {C10C_DEVICE_TYPE_CUDA, 3};
  c10c_stream s, t;
  ASSERT_OK(c10c_stream_init(&s, cuda3, 17));
  ASSERT_EQ(s.id, 17);
  ASSERT_OK(c10c_stream_default(&t, cuda3));
  ASSERT_EQ(t.id, 0);
  ASSERT_FALSE(c10c_stream_equal(s, t));
  t.id = 17;
  ASSERT_TRUE(c10c_stream_equal(s, t));
  c10c_device bad = {21, 0};
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_stream_init(&s, bad, 0));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_stream_default(&s, bad));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_stream_init(NULL, cuda3, 0));
}

TEST(pack3_unpack3_round_trip) {
  c10c_device cuda3 = {C10C_DEVICE_TYPE_CUDA, 3};
  c10c_stream s, back;
  ASSERT_OK(c10c_stream_init(&s, cuda3, -42));
  c10c_stream_data3 d = c10c_stream_pack3(s);
  ASSERT_EQ(d.stream_id, -42);
  ASSERT_EQ(d.device_index, 3);
  ASSERT_EQ(d.device_type, C10C_DEVICE_TYPE_CUDA);
  ASSERT_OK(c10c_stream_unpack3(&back, d.stream_id, d.device_index, d.device_type));
  ASSERT_TRUE(c10c_stream_equal(s, back));
  /* c10's check of the device type, its status (RuntimeError) and message (torch.Stream) */
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_stream_unpack3(&back, 0, 0, 21));
  ASSERT_ERROR_MESSAGE(
      "Expected isValidDeviceType(device_type) to be true, but got false.  (Could this error "
      "message be improved?  If so, please report an enhancement request to PyTorch.)");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_stream_unpack3(&back, 0, 0, -1));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_stream_unpack3(&back, 0, -2, 1));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_stream_unpack3(NULL, 0, 0, 0));
}

TEST(hash_equals_c10_for_indexed_devices) {
  c10c_device cuda3 = {C10C_DEVICE_TYPE_CUDA, 3};
  c10c_stream s;
  ASSERT_OK(c10c_stream_init(&s, cuda3, 17));
  ASSERT_EQ_U64(c10c_stream_hash(s), UINT64_C(72902018968059921)); /* c10's value */
}

TEST(hash_keeps_device_type_when_index_is_minus_one) {
  /* c10 hashes CPU/-1 id -5 to 0xFFFFFFFFFFFFFFFB and CUDA/-1 id -5 to the same value. */
  c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1}, cuda = {C10C_DEVICE_TYPE_CUDA, -1};
  c10c_stream a, b;
  ASSERT_OK(c10c_stream_init(&a, cpu, -5));
  ASSERT_OK(c10c_stream_init(&b, cuda, -5));
  ASSERT_EQ_U64(c10c_stream_hash(a), UINT64_C(0x00FFFFFFFFFFFFFB));
  ASSERT_EQ_U64(c10c_stream_hash(b), UINT64_C(0x01FFFFFFFFFFFFFB));
  ASSERT_TRUE(c10c_stream_hash(a) != c10c_stream_hash(b));
}

TEST(to_string_as_c10) {
  char buf[C10C_STREAM_STRING_MAX];
  c10c_device cuda0 = {C10C_DEVICE_TYPE_CUDA, 0};
  c10c_stream s;
  ASSERT_OK(c10c_stream_default(&s, cuda0));
  ASSERT_OK(c10c_stream_to_string(buf, sizeof buf, s));
  ASSERT_STR_EQ(buf, "stream 0 on device cuda:0");
  s.id = INT64_MIN;
  s.device.type = C10C_DEVICE_TYPE_PRIVATEUSE1;
  s.device.index = 127;
  ASSERT_OK(c10c_stream_to_string(buf, sizeof buf, s));
  ASSERT_STR_EQ(buf, "stream -9223372036854775808 on device privateuseone:127");
  char small[8];
  ASSERT_STATUS(C10C_STATUS_BUFFER_TOO_SMALL, c10c_stream_to_string(small, sizeof small, s));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_stream_to_string(NULL, 8, s));
  s.device.type = 40;
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_stream_to_string(buf, sizeof buf, s));
}

RUN_TESTS(T(init_default_and_equality), T(pack3_unpack3_round_trip),
          T(hash_equals_c10_for_indexed_devices), T(hash_keeps_device_type_when_index_is_minus_one),
          T(to_string_as_c10))
