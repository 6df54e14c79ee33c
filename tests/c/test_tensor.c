/* Tensors: creation, geometry, c10's contiguity flags (the verified table of reference section
 * 4.5), dimension wrapping, storage bounds, inference mode and the version counter. The same
 * behaviours are compared with torch itself in tests/python/test_tensor.py. */
#include "harness.h"

static const c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};

static bool contiguous(const c10c_tensor *t, c10c_memory_format f) {
  bool out = false;
  ASSERT_OK(c10c_tensor_is_contiguous(&out, t, f));
  return out;
}

TEST(contiguity_flags_follow_c10) {
  static const struct {
    size_t n;
    int64_t sizes[5], strides[5];
    bool c, clc, cl3c, cl, cl3, nod;
  } cases[] = {
      {4, {0, 3, 4, 5}, {60, 20, 5, 1}, 1, 0, 0, 0, 0, 1},
      {4, {2, 3, 4, 5}, {60, 1, 15, 3}, 0, 1, 0, 1, 0, 1},
      {4, {4, 1, 1, 1}, {1, 1, 1, 1}, 1, 1, 0, 0, 0, 1},
      {4, {2, 1, 4, 1}, {4, 4, 1, 1}, 1, 1, 0, 0, 0, 1},
      {4, {2, 1, 4, 1}, {4, 1, 1, 1}, 1, 1, 0, 1, 0, 1},
      {4, {1, 3, 1, 1}, {3, 1, 3, 3}, 1, 1, 0, 1, 0, 1},
      {4, {2, 3, 1, 1}, {3, 1, 1, 1}, 1, 1, 0, 0, 0, 1},
      {4, {2, 3, 4, 5}, {60, 0, 15, 3}, 0, 0, 0, 0, 0, 0},
      {4, {2, 3, 4, 5}, {120, 1, 30, 6}, 0, 0, 0, 1, 0, 0},
      {5, {2, 3, 4, 5, 6}, {360, 1, 90, 18, 3}, 0, 0, 1, 0, 1, 1},
      {2, {3, 4}, {1, 0}, 0, 0, 0, 0, 0, 0},
      {2, {4, 3}, {1, 4}, 0, 0, 0, 0, 0, 1},
      {2, {3, 2}, {4, 2}, 0, 0, 0, 0, 0, 0},
      {0, {0}, {0}, 1, 0, 0, 0, 0, 1},
      {2, {1, 3}, {99, 1}, 1, 0, 0, 0, 0, 1},
      {1, {3}, {2}, 0, 0, 0, 0, 0, 0},
      {2, {2, 2}, {2, 2}, 0, 0, 0, 0, 0, 0},
      {3, {2, 0, 3}, {0, 0, 0}, 1, 0, 0, 0, 0, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    c10c_tensor *t = NULL;
    ASSERT_OK(c10c_tensor_empty_strided(&t, cases[i].sizes, cases[i].strides, cases[i].n,
                                        C10C_DTYPE_FLOAT32, cpu));
    if (t == NULL) continue;
    bool got[6] = {contiguous(t, C10C_MEMORY_FORMAT_CONTIGUOUS),
                   contiguous(t, C10C_MEMORY_FORMAT_CHANNELS_LAST),
                   contiguous(t, C10C_MEMORY_FORMAT_CHANNELS_LAST_3D),
                   c10c_tensor_is_strides_like(t, C10C_MEMORY_FORMAT_CHANNELS_LAST),
                   c10c_tensor_is_strides_like(t, C10C_MEMORY_FORMAT_CHANNELS_LAST_3D),
                   c10c_tensor_is_non_overlapping_and_dense(t)};
    bool want[6] = {cases[i].c,  cases[i].clc, cases[i].cl3c,
                    cases[i].cl, cases[i].cl3, cases[i].nod};
    for (int k = 0; k < 6; k++)
      if (got[k] != want[k]) FAIL_AT("case %zu flag %d: got %d", i, k, (int)got[k]);
    c10c_tensor_release(t);
  }
}

TEST(empty_lays_out_memory_formats_as_aten) {
  int64_t sizes[5] = {2, 3, 4, 5, 6};
  c10c_tensor *t;
  ASSERT_OK(
      c10c_tensor_empty(&t, sizes, 4, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CHANNELS_LAST));
  const int64_t *st = c10c_tensor_strides(t);
  ASSERT_EQ(st[0], 60);
  ASSERT_EQ(st[1], 1);
  ASSERT_EQ(st[2], 15);
  ASSERT_EQ(st[3], 3);
  ASSERT_TRUE(contiguous(t, C10C_MEMORY_FORMAT_CHANNELS_LAST));
  ASSERT_FALSE(contiguous(t, C10C_MEMORY_FORMAT_CONTIGUOUS));
  c10c_tensor_release(t);
  ASSERT_OK(c10c_tensor_empty(&t, sizes, 5, C10C_DTYPE_FLOAT64, cpu,
                              C10C_MEMORY_FORMAT_CHANNELS_LAST_3D));
  st = c10c_tensor_strides(t);
  ASSERT_EQ(st[0], 360);
  ASSERT_EQ(st[1], 1);
  ASSERT_EQ(st[4], 3);
  ASSERT_EQ(c10c_tensor_nbytes(t), 720 * 8);
  ASSERT_EQ(c10c_storage_nbytes(c10c_tensor_storage(t)), 720 * 8);
  c10c_tensor_release(t);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_empty(&t, sizes, 3, C10C_DTYPE_FLOAT32, cpu,
                                                     C10C_MEMORY_FORMAT_CHANNELS_LAST));
  ASSERT_ERROR_MESSAGE("required rank 4 tensor to use channels_last format");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_empty(&t, sizes, 4, C10C_DTYPE_FLOAT32, cpu,
                                                     C10C_MEMORY_FORMAT_CHANNELS_LAST_3D));
  ASSERT_ERROR_MESSAGE("required rank 5 tensor to use channels_last_3d format");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_empty(&t, sizes, 2, C10C_DTYPE_FLOAT32, cpu,
                                                     C10C_MEMORY_FORMAT_PRESERVE));
  ASSERT_ERROR_MESSAGE("unsupported memory format Preserve");
}

TEST(fresh_tensor_metadata) {
  int64_t sizes[2] = {2, 3};
  c10c_tensor *t;
  ASSERT_OK(
      c10c_tensor_empty(&t, sizes, 2, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_EQ(c10c_tensor_dim(t), 2);
  ASSERT_EQ(c10c_tensor_numel(t), 6);
  ASSERT_EQ(c10c_tensor_strides(t)[0], 3);
  ASSERT_EQ(c10c_tensor_strides(t)[1], 1);
  ASSERT_EQ(c10c_tensor_itemsize(t), 4);
  ASSERT_EQ(c10c_tensor_nbytes(t), 24);
  ASSERT_EQ(c10c_tensor_storage_offset(t), 0);
  ASSERT_EQ(c10c_tensor_dtype(t), C10C_DTYPE_FLOAT32);
  ASSERT_EQ(c10c_tensor_device(t).type, C10C_DEVICE_TYPE_CPU);
  ASSERT_EQ_U64(c10c_tensor_keys(t).repr, UINT64_C(0x9400010001));
  ASSERT_TRUE(c10c_tensor_data(t) == c10c_storage_data(c10c_tensor_storage(t)));
  ASSERT_FALSE(c10c_tensor_is_inference(t));
  int64_t v = -1;
  ASSERT_OK(c10c_tensor_version(&v, t));
  ASSERT_EQ(v, 0);
  int64_t x;
  ASSERT_OK(c10c_tensor_size(&x, t, -1));
  ASSERT_EQ(x, 3);
  ASSERT_OK(c10c_tensor_stride(&x, t, -2));
  ASSERT_EQ(x, 3);
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE, c10c_tensor_size(&x, t, 2));
  ASSERT_ERROR_MESSAGE("Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE, c10c_tensor_stride(&x, t, -3));
  ASSERT_TRUE(c10c_tensor_retain(t) == t);
  c10c_tensor_release(t);
  c10c_tensor_release(t);
}

TEST(zero_dim_tensor_has_one_element_and_no_dimensions) {
  c10c_tensor *t;
  ASSERT_OK(c10c_tensor_empty(&t, NULL, 0, C10C_DTYPE_INT64, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_EQ(c10c_tensor_numel(t), 1);
  ASSERT_EQ(c10c_tensor_nbytes(t), 8);
  int64_t x;
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE, c10c_tensor_size(&x, t, 0));
  ASSERT_ERROR_MESSAGE("Dimension specified as 0 but tensor has no dimensions");
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE, c10c_tensor_stride(&x, t, -1));
  ASSERT_TRUE(contiguous(t, C10C_MEMORY_FORMAT_CONTIGUOUS));
  c10c_tensor_release(t);
}

TEST(every_rank_up_to_64_dims) {
  int64_t sizes[64], strides[64];
  for (size_t n = 0; n <= 64; n++) {
    for (size_t i = 0; i < n; i++) sizes[i] = (i % 3 == 0) ? 2 : 1;
    c10c_tensor *t;
    ASSERT_OK(
        c10c_tensor_empty(&t, sizes, n, C10C_DTYPE_UINT8, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
    ASSERT_EQ(c10c_tensor_dim(t), n);
    int64_t numel = 1, expected_stride = 1;
    for (size_t i = n; i-- > 0;) {
      ASSERT_EQ(c10c_tensor_sizes(t)[i], sizes[i]);
      ASSERT_EQ(c10c_tensor_strides(t)[i], expected_stride);
      expected_stride *= sizes[i];
      numel *= sizes[i];
    }
    ASSERT_EQ(c10c_tensor_numel(t), numel);
    ASSERT_TRUE(contiguous(t, C10C_MEMORY_FORMAT_CONTIGUOUS));
    ASSERT_TRUE(c10c_tensor_is_non_overlapping_and_dense(t));
    /* a transposed-like layout of the same rank through empty_strided */
    for (size_t i = 0; i < n; i++) strides[i] = c10c_tensor_strides(t)[n - 1 - i];
    c10c_tensor *u;
    ASSERT_OK(c10c_tensor_empty_strided(&u, sizes, strides, n, C10C_DTYPE_UINT8, cpu));
    if (n > 0) ASSERT_EQ(c10c_tensor_strides(u)[0], strides[0]);
    c10c_tensor_release(u);
    c10c_tensor_release(t);
  }
}

TEST(bad_sizes_strides_and_overflow_are_atens_errors) {
  c10c_tensor *t = NULL;
  int64_t neg[2] = {2, -3};
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_empty(&t, neg, 2, C10C_DTYPE_FLOAT32, cpu,
                                                     C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_ERROR_MESSAGE("Trying to create tensor with negative dimension -3: [2, -3]");
  int64_t huge[2] = {INT64_C(1) << 40, INT64_C(1) << 40};
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_empty(&t, huge, 2, C10C_DTYPE_FLOAT32, cpu,
                                                        C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_ERROR_MESSAGE(
      "Storage size calculation overflowed with sizes=[1099511627776, 1099511627776]");
  int64_t sizes[2] = {2, 3}, bad_strides[2] = {1, -1};
  ASSERT_STATUS(C10C_STATUS_OVERFLOW,
                c10c_tensor_empty_strided(&t, sizes, bad_strides, 2, C10C_DTYPE_FLOAT32, cpu));
  ASSERT_ERROR_MESSAGE("Storage size calculation overflowed with sizes=[2, 3] and strides=[1, -1]");
  ASSERT_STATUS(
      C10C_STATUS_INVALID_ARGUMENT,
      c10c_tensor_empty(&t, sizes, 2, C10C_DTYPE_UNDEFINED, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  c10c_device bad = {40, 0};
  ASSERT_STATUS(
      C10C_STATUS_INVALID_ARGUMENT,
      c10c_tensor_empty(&t, sizes, 2, C10C_DTYPE_FLOAT32, bad, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_tensor_empty(&t, sizes, 2, C10C_DTYPE_FLOAT32, cpu, 9));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_empty(NULL, sizes, 2, C10C_DTYPE_FLOAT32, cpu,
                                                            C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_empty(&t, NULL, 2, C10C_DTYPE_FLOAT32, cpu,
                                                            C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER,
                c10c_tensor_empty_strided(&t, sizes, NULL, 2, C10C_DTYPE_FLOAT32, cpu));
  ASSERT_TRUE(t == NULL);
  /* NULL-safe getters */
  ASSERT_EQ(c10c_tensor_dim(NULL), 0);
  ASSERT_EQ(c10c_tensor_numel(NULL), 0);
  ASSERT_TRUE(c10c_tensor_sizes(NULL) == NULL);
  ASSERT_TRUE(c10c_tensor_data(NULL) == NULL);
  ASSERT_FALSE(c10c_tensor_is_non_overlapping_and_dense(NULL));
  c10c_tensor_release(NULL);
}

TEST(tensors_over_a_storage_are_bounds_checked_as_aten) {
  c10c_storage *s;
  ASSERT_OK(c10c_storage_new(&s, 96, NULL, C10C_DEVICE_TYPE_CPU, false));
  int64_t sizes[2] = {2, 2}, strides[2] = {1, 2};
  c10c_tensor *t = NULL;
  ASSERT_STATUS(C10C_STATUS_ERROR,
                c10c_tensor_new_from_storage(&t, s, sizes, strides, 2, 23, C10C_DTYPE_FLOAT32));
  ASSERT_ERROR_MESSAGE(
      "setStorage: sizes [2, 2], strides [1, 2], storage offset 23, and itemsize 4 requiring a "
      "storage size of 108 are out of bounds for storage of size 96");
  ASSERT_STATUS(C10C_STATUS_ERROR,
                c10c_tensor_new_from_storage(&t, s, sizes, strides, 2, -1, C10C_DTYPE_FLOAT32));
  ASSERT_ERROR_MESSAGE("Tensor: invalid storage offset -1");
  ASSERT_OK(c10c_tensor_new_from_storage(&t, s, sizes, strides, 2, 20, C10C_DTYPE_FLOAT32));
  ASSERT_TRUE((char *)c10c_tensor_data(t) == (char *)c10c_storage_data(s) + 80);
  ASSERT_EQ(c10c_storage_use_count(s), 2);
  c10c_tensor_release(t);
  int64_t empty_sizes[2] = {0, 2};
  ASSERT_OK(c10c_tensor_new_from_storage(&t, s, empty_sizes, strides, 2, 100, C10C_DTYPE_FLOAT32));
  c10c_tensor_release(t);
  ASSERT_EQ(c10c_storage_use_count(s), 1);
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER,
                c10c_tensor_new_from_storage(&t, NULL, sizes, strides, 2, 0, C10C_DTYPE_FLOAT32));
  c10c_storage_release(s);
}

TEST(inference_tensors_have_no_autograd_keys_or_version) {
  bool before = c10c_inference_mode_set(true);
  ASSERT_FALSE(before);
  ASSERT_TRUE(c10c_inference_mode_enabled());
  int64_t sizes[1] = {4};
  c10c_tensor *t;
  ASSERT_OK(
      c10c_tensor_empty(&t, sizes, 1, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  c10c_inference_mode_set(before);
  ASSERT_TRUE(c10c_tensor_is_inference(t));
  c10c_dispatch_key_set ks = c10c_tensor_keys(t);
  char text[128];
  ASSERT_OK(c10c_dispatch_key_set_to_string(text, sizeof text, NULL, ks));
  ASSERT_STR_EQ(text, "DispatchKeySet(CPU, AutocastCPU)");
  int64_t v;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_version(&v, t));
  ASSERT_ERROR_MESSAGE("Inference tensors do not track version counter.");
  c10c_tensor_release(t);
}

RUN_TESTS(T(contiguity_flags_follow_c10), T(empty_lays_out_memory_formats_as_aten),
          T(fresh_tensor_metadata), T(zero_dim_tensor_has_one_element_and_no_dimensions),
          T(every_rank_up_to_64_dims), T(bad_sizes_strides_and_overflow_are_atens_errors),
          T(tensors_over_a_storage_are_bounds_checked_as_aten),
          T(inference_tensors_have_no_autograd_keys_or_version))
