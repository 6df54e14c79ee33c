/* Views: every view shares its base's storage, moves only sizes, strides and the storage offset,
 * and rejects bad arguments with ATen's messages. The expected geometries below are what
 * torch 2.13 returns for the same calls; tests/python/test_views.py checks thousands of random
 * view chains against torch itself. */
#include "harness.h"

static const c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};

static c10c_tensor *make(const int64_t *sizes, size_t n) {
  c10c_tensor *t = NULL;
  ASSERT_OK(
      c10c_tensor_empty(&t, sizes, n, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  return t;
}

/* Checks geometry and that v views t's storage; releases v. */
static void expect_view(c10c_tensor *v, const c10c_tensor *t, size_t n, const int64_t *sizes,
                        const int64_t *strides, int64_t offset, int line) {
  if (v == NULL) {
    fprintf(stderr, "  line %d: no view\n", line);
    test_current_failed = 1;
    return;
  }
  bool ok = c10c_tensor_dim(v) == n && c10c_tensor_storage_offset(v) == offset &&
            c10c_tensor_storage(v) == c10c_tensor_storage(t);
  for (size_t d = 0; ok && d < n; d++)
    ok = c10c_tensor_sizes(v)[d] == sizes[d] && c10c_tensor_strides(v)[d] == strides[d];
  if (!ok) {
    fprintf(stderr, "  line %d: unexpected view geometry\n", line);
    test_current_failed = 1;
  }
  c10c_tensor_release(v);
}

#define EXPECT_VIEW(v, t, n, offset, ...)                     \
  do {                                                        \
    const int64_t geo_[2][(n) > 0 ? (n) : 1] = __VA_ARGS__;   \
    expect_view(v, t, n, geo_[0], geo_[1], offset, __LINE__); \
  } while (0)

TEST(transpose_permute_and_t) {
  int64_t s[3] = {2, 3, 4};
  c10c_tensor *t = make(s, 3), *v = NULL;
  ASSERT_OK(c10c_tensor_transpose(&v, t, 0, -1));
  EXPECT_VIEW(v, t, 3, 0, {{4, 3, 2}, {1, 4, 12}});
  int64_t perm[3] = {1, -1, 0};
  ASSERT_OK(c10c_tensor_permute(&v, t, perm, 3));
  EXPECT_VIEW(v, t, 3, 0, {{3, 4, 2}, {4, 1, 12}});
  int64_t dup[3] = {0, 0, 1};
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_permute(&v, t, dup, 3));
  ASSERT_ERROR_MESSAGE("permute(): duplicate dims are not allowed.");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_permute(&v, t, perm, 2));
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE, c10c_tensor_transpose(&v, t, 0, 3));
  ASSERT_ERROR_MESSAGE("Dimension out of range (expected to be in range of [-3, 2], but got 3)");
  ASSERT_TRUE(v == NULL);
  c10c_tensor_release(t);
}

TEST(slice_narrow_select_follow_aten) {
  int64_t s[2] = {5, 4};
  c10c_tensor *t = make(s, 2), *v = NULL;
  ASSERT_OK(c10c_tensor_slice(&v, t, 0, 1, INT64_MAX, 2));
  EXPECT_VIEW(v, t, 2, 4, {{2, 4}, {8, 1}});
  ASSERT_OK(c10c_tensor_slice(&v, t, 1, -3, -1, 1));
  EXPECT_VIEW(v, t, 2, 1, {{5, 2}, {4, 1}});
  ASSERT_OK(c10c_tensor_slice(&v, t, 1, 3, 1, 1)); /* end before start: empty, at start */
  EXPECT_VIEW(v, t, 2, 3, {{5, 0}, {4, 1}});
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_slice(&v, t, 0, 0, 5, 0));
  ASSERT_ERROR_MESSAGE("slice step must be positive");
  /* a huge step: one element, no overflow in the size (UBSan checks), and a stride that wraps
   * negative is refused as ATen's as_strided does (torch: t[::2**61] on a 5x4 tensor) */
  ASSERT_OK(c10c_tensor_slice(&v, t, 1, 0, INT64_MAX, INT64_MAX));
  EXPECT_VIEW(v, t, 2, 0, {{5, 1}, {4, INT64_MAX}});
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_slice(&v, t, 0, 0, INT64_MAX, INT64_C(1) << 61));
  ASSERT_ERROR_MESSAGE(
      "as_strided: Negative strides are not supported at the moment, got "
      "strides: [-9223372036854775808, 1]");
  ASSERT_TRUE(v == NULL);
  ASSERT_OK(c10c_tensor_narrow(&v, t, -1, 1, 2));
  EXPECT_VIEW(v, t, 2, 1, {{5, 2}, {4, 1}});
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_narrow(&v, t, 1, 3, 2));
  ASSERT_ERROR_MESSAGE("start (3) + length (2) exceeds dimension size (4).");
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE, c10c_tensor_narrow(&v, t, 1, 5, 0));
  ASSERT_ERROR_MESSAGE("start out of range (expected to be in range of [-4, 4], but got 5)");
  ASSERT_OK(c10c_tensor_select(&v, t, 0, -1));
  EXPECT_VIEW(v, t, 1, 16, {{4}, {1}});
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE, c10c_tensor_select(&v, t, 1, 4));
  ASSERT_ERROR_MESSAGE("select(): index 4 out of range for tensor of size [5, 4] at dimension 1");
  c10c_tensor *scalar = make(s, 0);
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE, c10c_tensor_select(&v, scalar, 0, 0));
  ASSERT_ERROR_MESSAGE("select() cannot be applied to a 0-dim tensor.");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_narrow(&v, scalar, 0, 0, 1));
  ASSERT_ERROR_MESSAGE("narrow() cannot be applied to a 0-dim tensor.");
  ASSERT_TRUE(v == NULL);
  c10c_tensor_release(scalar);
  c10c_tensor_release(t);
}

TEST(unsqueeze_squeeze_and_expand) {
  int64_t s[3] = {3, 1, 2};
  c10c_tensor *t = make(s, 3), *v = NULL;
  ASSERT_OK(c10c_tensor_unsqueeze(&v, t, 3));
  EXPECT_VIEW(v, t, 4, 0, {{3, 1, 2, 1}, {2, 2, 1, 1}});
  ASSERT_OK(c10c_tensor_unsqueeze(&v, t, 0));
  EXPECT_VIEW(v, t, 4, 0, {{1, 3, 1, 2}, {6, 2, 2, 1}});
  ASSERT_OK(c10c_tensor_squeeze(&v, t));
  EXPECT_VIEW(v, t, 2, 0, {{3, 2}, {2, 1}});
  int64_t dims[2] = {0, -2};
  ASSERT_OK(c10c_tensor_squeeze_dims(&v, t, dims, 2)); /* dim 0 has size 3: kept */
  EXPECT_VIEW(v, t, 2, 0, {{3, 2}, {2, 1}});
  int64_t twice[2] = {1, -2};
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_squeeze_dims(&v, t, twice, 2));
  ASSERT_ERROR_MESSAGE("dim 1 appears multiple times in the list of dims");
  int64_t to[4] = {4, -1, 5, 2};
  ASSERT_OK(c10c_tensor_expand(&v, t, to, 4));
  EXPECT_VIEW(v, t, 4, 0, {{4, 3, 5, 2}, {0, 2, 0, 1}});
  int64_t bad[3] = {3, 1, 4};
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_expand(&v, t, bad, 3));
  ASSERT_ERROR_MESSAGE(
      "The expanded size of the tensor (4) must match the existing size (2) at non-singleton "
      "dimension 2.  Target sizes: [3, 1, 4].  Tensor sizes: [3, 1, 2]");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_expand(&v, t, bad, 2));
  ASSERT_ERROR_MESSAGE(
      "expand(torch.FloatTensor{[3, 1, 2]}, size=[3, 1]): the number of sizes provided (2) must "
      "be greater or equal to the number of dimensions in the tensor (3)");
  int64_t lead[4] = {-1, 3, 1, 2};
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_expand(&v, t, lead, 4));
  ASSERT_ERROR_MESSAGE(
      "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0");
  ASSERT_TRUE(v == NULL);
  c10c_tensor_release(t);
}

TEST(view_infers_sizes_and_needs_compatible_strides) {
  int64_t s[3] = {2, 3, 4};
  c10c_tensor *t = make(s, 3), *v = NULL;
  int64_t shape[2] = {-1, 4};
  ASSERT_OK(c10c_tensor_view(&v, t, shape, 2));
  EXPECT_VIEW(v, t, 2, 0, {{6, 4}, {4, 1}});
  int64_t two_inferred[2] = {-1, -1};
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_view(&v, t, two_inferred, 2));
  ASSERT_ERROR_MESSAGE("only one dimension can be inferred");
  int64_t wrong[2] = {5, 5};
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_view(&v, t, wrong, 2));
  ASSERT_ERROR_MESSAGE("shape '[5, 5]' is invalid for input of size 24");
  c10c_tensor *tt = NULL;
  ASSERT_OK(c10c_tensor_transpose(&tt, t, 0, 2));
  int64_t flat[1] = {24};
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_view(&v, tt, flat, 1));
  ASSERT_ERROR_MESSAGE(
      "view size is not compatible with input tensor's size and stride (at least one dimension "
      "spans across two contiguous subspaces). Use .reshape(...) instead.");
  /* Splitting a transposed dim is fine: the strides follow. */
  int64_t split[4] = {2, 2, 3, 2};
  ASSERT_OK(c10c_tensor_view(&v, tt, split, 4));
  EXPECT_VIEW(v, t, 4, 0, {{2, 2, 3, 2}, {2, 1, 4, 12}});
  /* A zero-sized tensor cannot infer -1. */
  int64_t zs[2] = {0, 3};
  c10c_tensor *z = make(zs, 2);
  int64_t infer0[2] = {-1, 0};
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_view(&v, z, infer0, 2));
  ASSERT_ERROR_MESSAGE(
      "cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified dimension "
      "size -1 can be any value and is ambiguous");
  ASSERT_TRUE(v == NULL);
  c10c_tensor_release(z);
  c10c_tensor_release(tt);
  c10c_tensor_release(t);
}

TEST(as_strided_is_bounds_checked) {
  int64_t s[1] = {12};
  c10c_tensor *t = make(s, 1), *v = NULL;
  int64_t sizes[2] = {3, 3}, strides[2] = {3, 1}, offset = 3;
  ASSERT_OK(c10c_tensor_as_strided(&v, t, sizes, 2, strides, 2, &offset));
  EXPECT_VIEW(v, t, 2, 3, {{3, 3}, {3, 1}});
  offset = 4;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_as_strided(&v, t, sizes, 2, strides, 2, &offset));
  ASSERT_ERROR_MESSAGE(
      "setStorage: sizes [3, 3], strides [3, 1], storage offset 4, and itemsize 4 requiring a "
      "storage size of 52 are out of bounds for storage of size 48");
  int64_t neg[2] = {3, -1};
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_as_strided(&v, t, sizes, 2, neg, 2, NULL));
  ASSERT_ERROR_MESSAGE(
      "as_strided: Negative strides are not supported at the moment, got strides: [3, -1]");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_as_strided(&v, t, sizes, 2, strides, 1, NULL));
  ASSERT_ERROR_MESSAGE("mismatch in length of strides and shape");
  offset = -1;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_as_strided(&v, t, sizes, 2, strides, 2, &offset));
  ASSERT_ERROR_MESSAGE("Tensor: invalid storage offset -1");
  ASSERT_TRUE(v == NULL);
  c10c_tensor_release(t);
}

TEST(views_share_storage_data_and_version) {
  int64_t s[2] = {2, 3};
  c10c_tensor *t = make(s, 2), *v = NULL;
  ASSERT_OK(c10c_tensor_select(&v, t, 0, 1));
  ASSERT_TRUE((char *)c10c_tensor_data(v) == (char *)c10c_tensor_data(t) + 12);
  ASSERT_EQ(c10c_storage_use_count(c10c_tensor_storage(t)), 2);
  int64_t before = -1, after = -1;
  ASSERT_OK(c10c_tensor_version(&before, t));
  ASSERT_OK(c10c_tensor_bump_version(v));
  ASSERT_OK(c10c_tensor_version(&after, t));
  ASSERT_EQ(after, before + 1);
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_bump_version(NULL));
  c10c_tensor_release(t); /* the view keeps the storage alive */
  ((float *)c10c_tensor_data(v))[2] = 1.5f;
  ASSERT_EQ(c10c_storage_use_count(c10c_tensor_storage(v)), 1);
  c10c_tensor_release(v);
}

TEST(null_arguments_are_errors) {
  int64_t s[2] = {2, 3}, dims[1] = {0};
  c10c_tensor *t = make(s, 2), *v = NULL;
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_transpose(NULL, t, 0, 1));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_transpose(&v, NULL, 0, 1));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_permute(&v, t, NULL, 2));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_view(&v, t, NULL, 1));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_expand(&v, t, NULL, 2));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_squeeze_dims(&v, t, NULL, 1));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_as_strided(&v, t, s, 2, NULL, 2, NULL));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_squeeze(&v, NULL));
  ASSERT_OK(c10c_tensor_squeeze_dims(&v, t, dims, 0)); /* empty list: a plain alias */
  EXPECT_VIEW(v, t, 2, 0, {{2, 3}, {3, 1}});
  c10c_tensor_release(t);
}

TEST(inference_tensors_cannot_be_bumped_outside_inference_mode) {
  int64_t s[1] = {3};
  bool before = c10c_inference_mode_set(true);
  c10c_tensor *t = make(s, 1), *v = NULL;
  ASSERT_OK(c10c_tensor_bump_version(t));
  c10c_inference_mode_set(before);
  ASSERT_OK(c10c_tensor_unsqueeze(&v, t, 0));
  ASSERT_TRUE(c10c_tensor_is_inference(v)); /* a view of an inference tensor is one too */
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_bump_version(v));
  ASSERT_ERROR_MESSAGE(
      "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
      "clone to get a normal tensor before doing inplace update.See "
      "https://github.com/pytorch/rfcs/pull/17 for more details.");
  c10c_tensor_release(v);
  c10c_tensor_release(t);
}

TEST(reference_geometries_of_the_other_views) {
  /* verified against torch: (2,3,4)/(12,4,1) */
  int64_t s[3] = {2, 3, 4};
  c10c_tensor *t = make(s, 3), *v = NULL;
  int64_t src[1] = {0}, dst[1] = {2};
  ASSERT_OK(c10c_tensor_movedim(&v, t, src, 1, dst, 1));
  EXPECT_VIEW(v, t, 3, 0, {{3, 4, 2}, {4, 1, 12}});
  ASSERT_OK(c10c_tensor_diagonal(&v, t, 0, 0, 1));
  EXPECT_VIEW(v, t, 2, 0, {{4, 2}, {1, 16}});
  ASSERT_OK(c10c_tensor_diagonal(&v, t, 1, -1, 1)); /* offset along dim2 = 1 (stride 4) */
  EXPECT_VIEW(v, t, 2, 4, {{2, 2}, {12, 5}});
  ASSERT_OK(c10c_tensor_unfold(&v, t, 2, 2, 1));
  EXPECT_VIEW(v, t, 4, 0, {{2, 3, 3, 2}, {12, 4, 1, 1}});
  ASSERT_OK(c10c_tensor_flatten(&v, t, 1, 2));
  EXPECT_VIEW(v, t, 2, 0, {{2, 12}, {12, 1}});
  int64_t parts[2] = {2, -1};
  ASSERT_OK(c10c_tensor_unflatten(&v, t, -1, parts, 2));
  EXPECT_VIEW(v, t, 4, 0, {{2, 3, 2, 2}, {12, 4, 2, 1}});
  ASSERT_OK(c10c_tensor_view_dtype(&v, t, C10C_DTYPE_INT16));
  ASSERT_EQ(c10c_tensor_dtype(v), C10C_DTYPE_INT16);
  EXPECT_VIEW(v, t, 3, 0, {{2, 3, 8}, {24, 8, 1}});
  ASSERT_OK(c10c_tensor_view_dtype(&v, t, C10C_DTYPE_COMPLEX64));
  EXPECT_VIEW(v, t, 3, 0, {{2, 3, 2}, {6, 2, 1}});
  /* errors */
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_flatten(&v, t, 2, 0));
  ASSERT_ERROR_MESSAGE("flatten() has invalid args: start_dim cannot come after end_dim");
  int64_t bad[2] = {3, 2};
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_unflatten(&v, t, 2, bad, 2));
  ASSERT_ERROR_MESSAGE(
      "unflatten: Provided sizes [3, 2] don't multiply up to the size of dim 2 (4) in the input "
      "tensor");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_unflatten(&v, t, 2, bad, 0));
  ASSERT_ERROR_MESSAGE("unflatten: sizes must be non-empty");
  int64_t twice[2] = {0, 0}, to[2] = {1, 2};
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_movedim(&v, t, twice, 2, to, 2));
  ASSERT_ERROR_MESSAGE("movedim: repeated dim in `source` ([0, 0])");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_movedim(&v, t, to, 2, dst, 1));
  ASSERT_ERROR_MESSAGE(
      "movedim: Invalid source or destination dims: source ([1, 2] dims) should contain the same "
      "number of dims as destination ([2] dims)");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_diagonal(&v, t, 0, 1, -2));
  ASSERT_ERROR_MESSAGE("diagonal dimensions cannot be identical 1, -2");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_unfold(&v, t, 2, 5, 1));
  ASSERT_ERROR_MESSAGE("maximum size for tensor at dimension 2 is 4 but size is 5");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_unfold(&v, t, 2, 2, 0));
  ASSERT_ERROR_MESSAGE("step is 0 but must be > 0");
  c10c_tensor *tt = NULL;
  ASSERT_OK(c10c_tensor_transpose(&tt, t, 1, 2));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_view_dtype(&v, tt, C10C_DTYPE_INT16));
  ASSERT_ERROR_MESSAGE(
      "self.stride(-1) must be 1 to view Float as Short (different element sizes), but got 4");
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_tensor_view_dtype(&v, t, (c10c_dtype)99));
  ASSERT_TRUE(v == NULL);
  c10c_tensor_release(tt);
  c10c_tensor_release(t);
}

TEST(reshape_views_when_it_can_and_copies_when_it_must) {
  int64_t s[3] = {2, 3, 4};
  c10c_tensor *t = make(s, 3), *v = NULL, *tt = NULL;
  float *p = c10c_tensor_data(t);
  for (int k = 0; k < 24; k++) p[k] = (float)k;
  int64_t flat[1] = {-1};
  ASSERT_OK(c10c_tensor_reshape(&v, t, flat, 1));
  ASSERT_TRUE(c10c_tensor_storage(v) == c10c_tensor_storage(t)); /* a view */
  c10c_tensor_release(v);
  ASSERT_OK(c10c_tensor_transpose(&tt, t, 0, 2));
  ASSERT_OK(c10c_tensor_reshape(&v, tt, flat, 1));
  ASSERT_TRUE(c10c_tensor_storage(v) != c10c_tensor_storage(t)); /* a contiguous copy */
  ASSERT_EQ(c10c_tensor_strides(v)[0], 1);
  const float *q = c10c_tensor_data(v);
  ASSERT_EQ(q[1], 12); /* tt[0][0][1] == t[1][0][0] */
  ASSERT_EQ(q[2], 4);  /* tt[0][1][0] == t[0][1][0] */
  c10c_tensor_release(v);
  ASSERT_OK(c10c_tensor_flatten(&v, tt, 0, -1)); /* flatten follows reshape */
  ASSERT_TRUE(c10c_tensor_storage(v) != c10c_tensor_storage(t));
  c10c_tensor_release(v);
  int64_t wrong[2] = {5, 5};
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_reshape(&v, tt, wrong, 2));
  ASSERT_ERROR_MESSAGE("shape '[5, 5]' is invalid for input of size 24");
  c10c_tensor *scalar = make(s, 0);
  ASSERT_OK(c10c_tensor_flatten(&v, scalar, 0, -1));
  ASSERT_EQ(c10c_tensor_dim(v), 1);
  ASSERT_EQ(c10c_tensor_sizes(v)[0], 1);
  c10c_tensor_release(v);
  c10c_tensor_release(scalar);
  c10c_tensor_release(tt);
  c10c_tensor_release(t);
}

/* A 3x1 tensor of dtype over a buffer on device (no allocator or driver needed). */
static c10c_tensor *over(c10c_storage **s, c10c_device device, c10c_dtype dtype) {
  static char buffer[64];
  c10c_tensor *t = NULL;
  ASSERT_OK(c10c_storage_new_external(s, buffer, sizeof buffer, device, NULL, NULL));
  ASSERT_OK(
      c10c_tensor_new_from_storage(&t, *s, (int64_t[]){3, 1}, (int64_t[]){1, 1}, 2, 0, dtype));
  return t;
}

/* expand's message for a 3x1 tensor of dtype on device, expanded to [4]. */
static void expect_expand_name(c10c_device device, c10c_dtype dtype, const char *name, int line) {
  c10c_storage *s = NULL;
  c10c_tensor *t = over(&s, device, dtype), *v = NULL;
  char want[400];
  snprintf(want, sizeof want,
           "expand(%s{[3, 1]}, size=[4]): the number of sizes provided (1) must be greater or "
           "equal to the number of dimensions in the tensor (2)",
           name);
  c10c_status st = c10c_tensor_expand(&v, t, (int64_t[]){4}, 1);
  if (st != C10C_STATUS_ERROR || strcmp(c10c_last_error_message(), want) != 0) {
    fprintf(stderr, "  line %d: %s: %s\n", line, c10c_status_name(st), c10c_last_error_message());
    test_current_failed = 1;
  }
  c10c_tensor_release(t);
  c10c_storage_release(s);
}

TEST(expand_names_the_tensor_type_as_torch) {
  /* torch 2.13's Python messages: the legacy names exist for eight dtypes on CPU and CUDA only */
  c10c_device cuda = {C10C_DEVICE_TYPE_CUDA, 0}, meta = {C10C_DEVICE_TYPE_META, -1};
  c10c_device xla = {C10C_DEVICE_TYPE_XLA, 0}, pu1 = {C10C_DEVICE_TYPE_PRIVATEUSE1, 0};
  expect_expand_name(cpu, C10C_DTYPE_FLOAT32, "torch.FloatTensor", __LINE__);
  expect_expand_name(cpu, C10C_DTYPE_FLOAT64, "torch.DoubleTensor", __LINE__);
  expect_expand_name(cpu, C10C_DTYPE_UINT8, "torch.ByteTensor", __LINE__);
  expect_expand_name(cpu, C10C_DTYPE_INT8, "torch.CharTensor", __LINE__);
  expect_expand_name(cpu, C10C_DTYPE_FLOAT16, "torch.HalfTensor", __LINE__);
  expect_expand_name(cpu, C10C_DTYPE_BOOL, "CPUBoolType", __LINE__);
  expect_expand_name(cpu, C10C_DTYPE_BFLOAT16, "CPUBFloat16Type", __LINE__);
  expect_expand_name(cpu, C10C_DTYPE_COMPLEX64, "CPUComplexFloatType", __LINE__);
  expect_expand_name(cpu, C10C_DTYPE_UINT16, "CPUUInt16Type", __LINE__);
  expect_expand_name(cpu, C10C_DTYPE_FLOAT8_E4M3FN, "CPUFloat8_e4m3fnType", __LINE__);
  expect_expand_name(cpu, C10C_DTYPE_QINT8, "QuantizedCPUQInt8Type", __LINE__);
  expect_expand_name(meta, C10C_DTYPE_FLOAT32, "MetaFloatType", __LINE__);
  expect_expand_name(meta, C10C_DTYPE_BOOL, "MetaBoolType", __LINE__);
  expect_expand_name(cuda, C10C_DTYPE_INT64, "torch.cuda.LongTensor", __LINE__);
  expect_expand_name(cuda, C10C_DTYPE_BOOL, "CUDABoolType", __LINE__);
  expect_expand_name(xla, C10C_DTYPE_FLOAT32, "XLAFloatType", __LINE__);
  char name[64]; /* c10's get_privateuse1_backend() */
  snprintf(name, sizeof name, "%sFloatType", c10c_privateuse1_backend_name(true));
  expect_expand_name(pu1, C10C_DTYPE_FLOAT32, name, __LINE__);
}

TEST(every_view_wraps_dims_with_index_errors) {
  int64_t s[3] = {2, 3, 4};
  c10c_tensor *t = make(s, 3), *v = NULL;
  const char *message = "Dimension out of range (expected to be in range of [-3, 2], but got 3)";
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE,
                c10c_tensor_permute(&v, t, (int64_t[]){0, 1, 3}, 3));
  ASSERT_ERROR_MESSAGE(message);
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE, c10c_tensor_slice(&v, t, 3, 0, 1, 1));
  ASSERT_ERROR_MESSAGE(message);
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE, c10c_tensor_narrow(&v, t, 3, 0, 1));
  ASSERT_ERROR_MESSAGE(message);
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE, c10c_tensor_select(&v, t, 3, 0));
  ASSERT_ERROR_MESSAGE(message);
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE, c10c_tensor_squeeze_dims(&v, t, (int64_t[]){3}, 1));
  ASSERT_ERROR_MESSAGE(message);
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE,
                c10c_tensor_movedim(&v, t, (int64_t[]){3}, 1, (int64_t[]){0}, 1));
  ASSERT_ERROR_MESSAGE(message);
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE,
                c10c_tensor_movedim(&v, t, (int64_t[]){0}, 1, (int64_t[]){3}, 1));
  ASSERT_ERROR_MESSAGE(message);
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE,
                c10c_tensor_unflatten(&v, t, 3, (int64_t[]){2, 2}, 2));
  ASSERT_ERROR_MESSAGE(message);
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE, c10c_tensor_flatten(&v, t, 0, 3));
  ASSERT_ERROR_MESSAGE(message);
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE, c10c_tensor_diagonal(&v, t, 0, 0, 3));
  ASSERT_ERROR_MESSAGE(message);
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE, c10c_tensor_unfold(&v, t, 3, 2, 1));
  ASSERT_ERROR_MESSAGE(message);
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE, c10c_tensor_unsqueeze(&v, t, 4));
  ASSERT_ERROR_MESSAGE("Dimension out of range (expected to be in range of [-4, 3], but got 4)");
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE, c10c_tensor_unsqueeze(&v, t, -5));
  ASSERT_ERROR_MESSAGE("Dimension out of range (expected to be in range of [-4, 3], but got -5)");
  /* a 0-dim tensor takes 0 and -1 */
  c10c_tensor *scalar = make(s, 0);
  ASSERT_OK(c10c_tensor_transpose(&v, scalar, 0, -1));
  c10c_tensor_release(v);
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE, c10c_tensor_transpose(&v, scalar, 0, 1));
  ASSERT_ERROR_MESSAGE("Dimension out of range (expected to be in range of [-1, 0], but got 1)");
  ASSERT_TRUE(v == NULL);
  c10c_tensor_release(scalar);
  c10c_tensor_release(t);
}

TEST(view_errors_have_atens_words_and_class) {
  /* each message and class as torch 2.13 raises it for the same call */
  int64_t s[3] = {2, 3, 4};
  c10c_tensor *t = make(s, 3), *scalar = make(s, 0), *v = NULL;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_permute(&v, t, (int64_t[]){0, 1}, 2));
  ASSERT_ERROR_MESSAGE(
      "permute(sparse_coo): number of dimensions in the tensor input does not match the length of "
      "the desired ordering of dimensions i.e. input.dim() = 3 is not equal to len(dims) = 2");
  ASSERT_STATUS(C10C_STATUS_INDEX_OUT_OF_RANGE, c10c_tensor_slice(&v, scalar, 0, 0, 1, 1));
  ASSERT_ERROR_MESSAGE("slice() cannot be applied to a 0-dim tensor.");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_slice(&v, t, 0, 0, 1, -1));
  ASSERT_ERROR_MESSAGE("slice step must be positive");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_narrow(&v, t, 1, 0, -1));
  ASSERT_ERROR_MESSAGE("narrow(): length must be non-negative.");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_squeeze_dims(&v, scalar, (int64_t[]){0, -1}, 2));
  ASSERT_ERROR_MESSAGE("dim 0 appears multiple times in the list of dims");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_view(&v, t, (int64_t[]){-2, 12}, 2));
  ASSERT_ERROR_MESSAGE("invalid shape dimension -2 at index 0 of shape [-2, 12]");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_reshape(&v, t, (int64_t[]){-1, -1}, 2));
  ASSERT_ERROR_MESSAGE("only one dimension can be inferred");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_unflatten(&v, t, 2, (int64_t[]){-1, -1}, 2));
  ASSERT_ERROR_MESSAGE("unflatten got an unexpected error:\nonly one dimension can be inferred");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_unflatten(&v, scalar, 0, (int64_t[]){1}, 1));
  ASSERT_ERROR_MESSAGE(
      "unflatten got an unexpected error:\nDimension specified as 0 but tensor has no dimensions");
  ASSERT_STATUS(C10C_STATUS_ERROR,
                c10c_tensor_movedim(&v, t, (int64_t[]){0, 1}, 2, (int64_t[]){2, 2}, 2));
  ASSERT_ERROR_MESSAGE("movedim: repeated dim in `destination` ([2, 2])");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_unfold(&v, t, 2, -1, 1));
  ASSERT_ERROR_MESSAGE("size is -1 but must be >= 0");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_unfold(&v, scalar, 0, 2, 1));
  ASSERT_ERROR_MESSAGE("maximum size for tensor at dimension 0 is 1 but size is 2");
  /* view(dtype) */
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_view_dtype(&v, scalar, C10C_DTYPE_FLOAT64));
  ASSERT_ERROR_MESSAGE("self.dim() cannot be 0 to view Float as Double (different element sizes)");
  c10c_tensor *bytes = NULL, *part = NULL, *gappy = NULL;
  ASSERT_OK(c10c_tensor_empty(&bytes, (int64_t[]){2, 4}, 2, C10C_DTYPE_UINT8, cpu,
                              C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_OK(c10c_tensor_narrow(&part, bytes, 1, 0, 3));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_view_dtype(&v, part, C10C_DTYPE_INT16));
  ASSERT_ERROR_MESSAGE(
      "self.size(-1) must be divisible by 2 to view Byte as Short (different element sizes), but "
      "got 3");
  c10c_tensor_release(part);
  ASSERT_OK(c10c_tensor_narrow(&part, bytes, 1, 1, 2));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_view_dtype(&v, part, C10C_DTYPE_INT16));
  ASSERT_ERROR_MESSAGE(
      "self.storage_offset() must be divisible by 2 to view Byte as Short (different element "
      "sizes), but got 1");
  ASSERT_OK(
      c10c_tensor_as_strided(&gappy, bytes, (int64_t[]){2, 2}, 2, (int64_t[]){3, 1}, 2, NULL));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_view_dtype(&v, gappy, C10C_DTYPE_INT16));
  ASSERT_ERROR_MESSAGE(
      "self.stride(0) must be divisible by 2 to view Byte as Short (different element sizes), but "
      "got 3");
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_tensor_view_dtype(&v, t, C10C_DTYPE_UNDEFINED));
  ASSERT_ERROR_MESSAGE("view: invalid dtype 46");
  ASSERT_TRUE(v == NULL);
  c10c_tensor *all[] = {t, scalar, bytes, part, gappy};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) c10c_tensor_release(all[i]);
}

TEST(every_view_refuses_null_arguments) {
  int64_t s[2] = {2, 3}, dims[2] = {0, 1};
  c10c_tensor *t = make(s, 2), *v = NULL;
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_slice(NULL, t, 0, 0, 1, 1));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_slice(&v, NULL, 0, 0, 1, 1));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_narrow(&v, NULL, 0, 0, 1));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_select(&v, NULL, 0, 0));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_unsqueeze(&v, NULL, 0));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_squeeze(NULL, t));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_view_dtype(&v, NULL, C10C_DTYPE_INT32));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_reshape(&v, t, NULL, 1));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_reshape(NULL, t, s, 2));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_as_strided(&v, t, NULL, 2, s, 2, NULL));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_flatten(&v, NULL, 0, 1));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_unflatten(&v, t, 0, NULL, 2));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_movedim(&v, t, NULL, 1, dims, 1));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_movedim(&v, t, dims, 1, NULL, 1));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_diagonal(&v, NULL, 0, 0, 1));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_unfold(&v, NULL, 0, 1, 1));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_expand(&v, NULL, s, 2));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_permute(NULL, t, dims, 2));
  ASSERT_TRUE(v == NULL);
  c10c_tensor_release(t);
}

RUN_TESTS(T(transpose_permute_and_t), T(slice_narrow_select_follow_aten),
          T(unsqueeze_squeeze_and_expand), T(view_infers_sizes_and_needs_compatible_strides),
          T(as_strided_is_bounds_checked), T(views_share_storage_data_and_version),
          T(null_arguments_are_errors),
          T(inference_tensors_cannot_be_bumped_outside_inference_mode),
          T(reference_geometries_of_the_other_views),
          T(reshape_views_when_it_can_and_copies_when_it_must),
          T(expand_names_the_tensor_type_as_torch), T(every_view_wraps_dims_with_index_errors),
          T(view_errors_have_atens_words_and_class), T(every_view_refuses_null_arguments))
