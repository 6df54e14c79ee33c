/* Tensors: creation, geometry, c10's contiguity flags (a table verified against torch),
 * dimension wrapping, storage bounds, inference mode and the version counter. The same
 * behaviours are compared with torch itself in tests/python/test_tensor.py. */
#include <stdlib.h>

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

TEST(creation_refuses_invalid_enums_with_invalid_argument) {
  c10c_tensor *t = NULL;
  int64_t sizes[2] = {2, 3}, strides[2] = {3, 1};
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_tensor_empty(&t, sizes, 2, 99, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_ERROR_MESSAGE("invalid dtype 99");
  ASSERT_STATUS(
      C10C_STATUS_INVALID_ARGUMENT,
      c10c_tensor_empty(&t, sizes, 2, C10C_DTYPE_UNDEFINED, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_ERROR_MESSAGE("invalid dtype 46");
  c10c_device unknown = {40, 0}, negative = {C10C_DEVICE_TYPE_CPU, -2};
  ASSERT_STATUS(
      C10C_STATUS_INVALID_ARGUMENT,
      c10c_tensor_empty(&t, sizes, 2, C10C_DTYPE_FLOAT32, unknown, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_ERROR_MESSAGE("Unknown device type 40");
  ASSERT_STATUS(
      C10C_STATUS_INVALID_ARGUMENT,
      c10c_tensor_empty(&t, sizes, 2, C10C_DTYPE_FLOAT32, negative, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_ERROR_MESSAGE("Device index must be -1 or non-negative, got -2");
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_tensor_empty(&t, sizes, 2, C10C_DTYPE_FLOAT32, cpu, 9));
  ASSERT_ERROR_MESSAGE("Unknown memory format 9");
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_tensor_empty(&t, sizes, 2, C10C_DTYPE_FLOAT32, cpu, -1));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_tensor_empty_strided(&t, sizes, strides, 2, 99, cpu));
  ASSERT_ERROR_MESSAGE("invalid dtype 99");
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_tensor_empty_strided(&t, sizes, strides, 2, C10C_DTYPE_FLOAT32, unknown));
  ASSERT_ERROR_MESSAGE("Unknown device type 40");
  ASSERT_TRUE(t == NULL);
}

TEST(creation_refuses_what_torch_refuses_with_its_words) {
  c10c_tensor *t = NULL;
  /* torch: torch.empty(0, 2**40, 2**40) fails the same way (the bytes are 0, the strides are not
   * representable) */
  int64_t wide[3] = {0, INT64_C(1) << 40, INT64_C(1) << 40};
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_empty(&t, wide, 3, C10C_DTYPE_FLOAT32, cpu,
                                                        C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_ERROR_MESSAGE("Stride calculation overflowed");
  int64_t wide4[4] = {0, INT64_C(1) << 40, INT64_C(1) << 40, INT64_C(1) << 40};
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_empty(&t, wide4, 4, C10C_DTYPE_FLOAT32, cpu,
                                                        C10C_MEMORY_FORMAT_CHANNELS_LAST));
  ASSERT_ERROR_MESSAGE("Stride calculation overflowed");
  /* torch.empty_strided((-5, 0), (0, 0)) */
  int64_t neg[2] = {-5, 0}, zeros[2] = {0, 0};
  ASSERT_STATUS(C10C_STATUS_ERROR,
                c10c_tensor_empty_strided(&t, neg, zeros, 2, C10C_DTYPE_FLOAT32, cpu));
  ASSERT_ERROR_MESSAGE("Trying to create tensor with negative dimension -5: [-5, 0]");
  int64_t sizes[2] = {2, 3};
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER,
                c10c_tensor_empty_strided(NULL, sizes, sizes, 2, C10C_DTYPE_FLOAT32, cpu));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER,
                c10c_tensor_empty_strided(&t, NULL, sizes, 2, C10C_DTYPE_FLOAT32, cpu));
  ASSERT_OK(c10c_tensor_empty_strided(&t, NULL, NULL, 0, C10C_DTYPE_FLOAT32, cpu)); /* 0-dim */
  c10c_tensor_release(t);
  t = NULL;
  /* a device type without an allocator, and CUDA without a driver or past its devices */
  c10c_device xla = {C10C_DEVICE_TYPE_XLA, 0};
  ASSERT_STATUS(C10C_STATUS_UNAVAILABLE, c10c_tensor_empty(&t, sizes, 2, C10C_DTYPE_FLOAT32, xla,
                                                           C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_ERROR_MESSAGE("Allocator for XLA is not set.");
  c10c_device cuda = {C10C_DEVICE_TYPE_CUDA, C10C_DEVICE_INDEX_MAX};
  c10c_status st =
      c10c_tensor_empty(&t, sizes, 2, C10C_DTYPE_FLOAT32, cuda, C10C_MEMORY_FORMAT_CONTIGUOUS);
  if (c10c_cuda_is_available()) {
    ASSERT_EQ(st, C10C_STATUS_ERROR);
    ASSERT_ERROR_MESSAGE("CUDA error: invalid device ordinal");
  } else {
    ASSERT_EQ(st, C10C_STATUS_UNAVAILABLE);
  }
  ASSERT_TRUE(t == NULL);
}

TEST(tensors_over_a_storage_refuse_bad_geometry_and_enums) {
  c10c_storage *s;
  ASSERT_OK(c10c_storage_new(&s, 96, NULL, C10C_DEVICE_TYPE_CPU, false));
  int64_t sizes[2] = {2, 2}, strides[2] = {1, 2};
  c10c_tensor *t = NULL;
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER,
                c10c_tensor_new_from_storage(NULL, s, sizes, strides, 2, 0, C10C_DTYPE_FLOAT32));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER,
                c10c_tensor_new_from_storage(&t, s, NULL, strides, 2, 0, C10C_DTYPE_FLOAT32));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER,
                c10c_tensor_new_from_storage(&t, s, sizes, NULL, 2, 0, C10C_DTYPE_FLOAT32));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_tensor_new_from_storage(&t, s, sizes, strides, 2, 0, C10C_DTYPE_UNDEFINED));
  ASSERT_ERROR_MESSAGE("invalid dtype 46");
  int64_t neg_size[2] = {2, -1};
  ASSERT_STATUS(C10C_STATUS_ERROR,
                c10c_tensor_new_from_storage(&t, s, neg_size, strides, 2, 0, C10C_DTYPE_FLOAT32));
  ASSERT_ERROR_MESSAGE("Trying to create tensor with negative dimension -1: [2, -1]");
  /* torch: torch.empty(0).set_(s, 0, (2, 2), (1, -2)) */
  int64_t neg_stride[2] = {1, -2};
  ASSERT_STATUS(C10C_STATUS_OVERFLOW,
                c10c_tensor_new_from_storage(&t, s, sizes, neg_stride, 2, 0, C10C_DTYPE_FLOAT32));
  ASSERT_ERROR_MESSAGE("Storage size calculation overflowed with sizes=[2, 2] and strides=[1, -2]");
  ASSERT_TRUE(t == NULL);
  ASSERT_EQ(c10c_storage_use_count(s), 1);
  c10c_storage_release(s);
  /* c10 gives the Caffe2 device types no dispatch key, hence no tensor */
  static char buffer[16];
  c10c_device mkldnn = {C10C_DEVICE_TYPE_MKLDNN, 0};
  ASSERT_OK(c10c_storage_new_external(&s, buffer, sizeof buffer, mkldnn, NULL, NULL));
  int64_t four = 4, one = 1;
  ASSERT_STATUS(C10C_STATUS_ERROR,
                c10c_tensor_new_from_storage(&t, s, &four, &one, 1, 0, C10C_DTYPE_FLOAT32));
  ASSERT_TRUE(strstr(c10c_last_error_message(), "grandfathered Caffe2 device type MKLDNN") != NULL);
  ASSERT_TRUE(t == NULL);
  ASSERT_EQ(c10c_storage_use_count(s), 1);
  c10c_storage_release(s);
}

TEST(empty_refuses_a_caffe2_device_type_even_with_an_allocator) {
  install_malloc_allocator(C10C_DEVICE_TYPE_IDEEP);
  c10c_tensor *t = NULL;
  int64_t sizes[1] = {4};
  c10c_device ideep = {C10C_DEVICE_TYPE_IDEEP, 0};
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_empty(&t, sizes, 1, C10C_DTYPE_FLOAT32, ideep,
                                                     C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_TRUE(strstr(c10c_last_error_message(), "grandfathered Caffe2 device type IDEEP") != NULL);
  ASSERT_TRUE(t == NULL); /* and the storage it made is gone (the sanitizer runs check) */
}

TEST(getters_answer_null_as_documented) {
  ASSERT_EQ(c10c_tensor_storage_offset(NULL), 0);
  ASSERT_EQ(c10c_tensor_dtype(NULL), C10C_DTYPE_UNDEFINED);
  ASSERT_EQ(c10c_tensor_device(NULL).type, C10C_DEVICE_TYPE_CPU);
  ASSERT_EQ(c10c_tensor_device(NULL).index, -1);
  ASSERT_EQ(c10c_tensor_itemsize(NULL), 0);
  ASSERT_EQ(c10c_tensor_nbytes(NULL), 0);
  ASSERT_TRUE(c10c_tensor_strides(NULL) == NULL);
  ASSERT_TRUE(c10c_tensor_storage(NULL) == NULL);
  ASSERT_TRUE(c10c_dispatch_key_set_is_empty(c10c_tensor_keys(NULL)));
  ASSERT_FALSE(c10c_tensor_is_strides_like(NULL, C10C_MEMORY_FORMAT_CHANNELS_LAST));
  ASSERT_FALSE(c10c_tensor_is_inference(NULL));
  ASSERT_FALSE(c10c_tensor_is_read_only(NULL));
  ASSERT_TRUE(c10c_tensor_retain(NULL) == NULL);
  int64_t x = 7, sizes[4] = {2, 3, 4, 5};
  bool b = false;
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_size(&x, NULL, 0));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_stride(&x, NULL, 0));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_version(&x, NULL));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER,
                c10c_tensor_is_contiguous(&b, NULL, C10C_MEMORY_FORMAT_CONTIGUOUS));
  c10c_tensor *t = NULL;
  ASSERT_OK(
      c10c_tensor_empty(&t, sizes, 4, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CHANNELS_LAST));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_size(NULL, t, 0));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_stride(NULL, t, 0));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_version(NULL, t));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER,
                c10c_tensor_is_contiguous(NULL, t, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_tensor_is_contiguous(&b, t, 9));
  ASSERT_ERROR_MESSAGE("Unknown memory format 9");
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_tensor_is_contiguous(&b, t, -1));
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE, c10c_tensor_size(&x, t, -5));
  ASSERT_ERROR_MESSAGE("Dimension out of range (expected to be in range of [-4, 3], but got -5)");
  ASSERT_EQ(x, 7); /* left alone */
  ASSERT_TRUE(c10c_tensor_is_strides_like(t, C10C_MEMORY_FORMAT_CHANNELS_LAST));
  ASSERT_FALSE(c10c_tensor_is_strides_like(t, 9)); /* an invalid format is no format */
  ASSERT_OK(c10c_tensor_is_contiguous(&b, t, C10C_MEMORY_FORMAT_PRESERVE));
  ASSERT_FALSE(b); /* PRESERVE asks for row-major contiguity */
  c10c_tensor_release(t);
}

TEST(writes_to_a_read_only_storage_are_refused_before_the_inference_check) {
  int64_t sizes[1] = {4};
  bool before = c10c_inference_mode_set(true);
  c10c_tensor *t = NULL;
  ASSERT_OK(
      c10c_tensor_empty(&t, sizes, 1, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  c10c_inference_mode_set(before);
  ASSERT_OK(c10c_storage_set_read_only(c10c_tensor_storage(t)));
  ASSERT_TRUE(c10c_tensor_is_read_only(t));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_bump_version(t));
  ASSERT_ERROR_MESSAGE(
      "cannot write to a read-only tensor: its memory was shared read-only (a read-only numpy "
      "array or DLPack export); clone() it to get a writable copy");
  c10c_tensor_release(t);
}

RUN_TESTS(T(contiguity_flags_follow_c10), T(empty_lays_out_memory_formats_as_aten),
          T(fresh_tensor_metadata), T(zero_dim_tensor_has_one_element_and_no_dimensions),
          T(every_rank_up_to_64_dims), T(bad_sizes_strides_and_overflow_are_atens_errors),
          T(tensors_over_a_storage_are_bounds_checked_as_aten),
          T(inference_tensors_have_no_autograd_keys_or_version),
          T(creation_refuses_invalid_enums_with_invalid_argument),
          T(creation_refuses_what_torch_refuses_with_its_words),
          T(tensors_over_a_storage_refuse_bad_geometry_and_enums),
          T(empty_refuses_a_caffe2_device_type_even_with_an_allocator),
          T(getters_answer_null_as_documented),
          T(writes_to_a_read_only_storage_are_refused_before_the_inference_check))
