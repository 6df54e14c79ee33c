/* Copies and fills: copy_ with broadcasting, strided layouts of any rank, ATen's overlap and
 * shape errors, fill_/zero_, full, empty_like/clone's preserve rule, contiguous, version counts.
 * tests/python/test_data.py compares the same operations with torch on random views. */
#include <stdlib.h>

#include "harness.h"

static const c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};

static c10c_tensor *arange(int64_t n) {
  c10c_tensor *t = NULL;
  ASSERT_OK(c10c_tensor_empty(&t, &n, 1, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  float *p = c10c_tensor_data(t);
  for (int64_t i = 0; i < n; i++) p[i] = (float)i;
  return t;
}

static c10c_tensor *view(c10c_tensor *base, size_t n, const int64_t *sizes, const int64_t *strides,
                         int64_t offset) {
  c10c_tensor *v = NULL;
  ASSERT_OK(c10c_tensor_as_strided(&v, base, sizes, n, strides, n, &offset));
  return v;
}

/* The element at a multi-index of a CPU float tensor. */
static float at(const c10c_tensor *t, const int64_t *index) {
  const float *p = c10c_tensor_data(t);
  int64_t off = 0;
  for (size_t d = 0; d < c10c_tensor_dim(t); d++) off += index[d] * c10c_tensor_strides(t)[d];
  return p[off];
}

static int64_t version(const c10c_tensor *t) {
  int64_t v = -1;
  ASSERT_OK(c10c_tensor_version(&v, t));
  return v;
}

TEST(copy_of_a_transposed_view_matches_elementwise) {
  c10c_tensor *src_base = arange(24), *dst = NULL;
  int64_t sizes[3] = {4, 3, 2}, strides[3] = {1, 4, 12}; /* (2,3,4) transposed */
  c10c_tensor *src = view(src_base, 3, sizes, strides, 0);
  ASSERT_OK(
      c10c_tensor_empty(&dst, sizes, 3, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_EQ(version(dst), 0);
  ASSERT_OK(c10c_tensor_copy_(dst, src));
  ASSERT_EQ(version(dst), 1);
  int64_t i[3];
  for (i[0] = 0; i[0] < 4; i[0]++)
    for (i[1] = 0; i[1] < 3; i[1]++)
      for (i[2] = 0; i[2] < 2; i[2]++)
        if (at(dst, i) != at(src, i)) FAIL_AT("mismatch at %lld", (long long)i[0]);
  c10c_tensor_release(src);
  c10c_tensor_release(src_base);
  c10c_tensor_release(dst);
}

TEST(copy_broadcasts_a_row_and_a_scalar) {
  c10c_tensor *row = arange(3), *dst = NULL;
  int64_t sizes[2] = {2, 3};
  ASSERT_OK(
      c10c_tensor_empty(&dst, sizes, 2, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_OK(c10c_tensor_copy_(dst, row));
  const float *p = c10c_tensor_data(dst);
  for (int k = 0; k < 6; k++) ASSERT_EQ(p[k], k % 3);
  c10c_tensor *scalar = NULL;
  ASSERT_OK(c10c_tensor_select(&scalar, row, 0, 2));
  ASSERT_OK(c10c_tensor_copy_(dst, scalar));
  for (int k = 0; k < 6; k++) ASSERT_EQ(p[k], 2);
  int64_t wrong[1] = {4};
  c10c_tensor *bad = NULL;
  ASSERT_OK(
      c10c_tensor_empty(&bad, wrong, 1, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_copy_(dst, bad));
  ASSERT_ERROR_MESSAGE(
      "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_copy_(row, dst));
  ASSERT_ERROR_MESSAGE("output with shape [3] doesn't match the broadcast shape [2, 3]");
  ASSERT_EQ(version(dst), 2); /* failed copies do not count */
  c10c_tensor *ints = NULL;
  ASSERT_OK(
      c10c_tensor_empty(&ints, sizes, 2, C10C_DTYPE_INT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  int32_t *iv = c10c_tensor_data(ints);
  for (int i = 0; i < 6; i++) iv[i] = -3 + 2 * i;
  ASSERT_OK(c10c_tensor_copy_(dst, ints)); /* int32 to float32, converted */
  const float *fv = c10c_tensor_data(dst);
  ASSERT_TRUE(fv[0] == -3.0f && fv[5] == 7.0f);
  c10c_tensor *q = NULL, *q2 = NULL; /* quantized dtypes are not converted: torch's refusals */
  ASSERT_OK(c10c_tensor_empty(&q, sizes, 2, C10C_DTYPE_QINT8, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_OK(
      c10c_tensor_empty(&q2, sizes, 2, C10C_DTYPE_QUINT8, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_copy_(dst, q));
  ASSERT_ERROR_MESSAGE(
      "Copying from quantized Tensor to non-quantized Tensor is not allowed, please use dequantize "
      "to get a float Tensor from a quantized Tensor");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_copy_(q2, q));
  ASSERT_ERROR_MESSAGE(
      "Expected self.scalar_type() == src.scalar_type() to be true, but got false.  (Could this "
      "error message be improved?  If so, please report an enhancement request to PyTorch.)");
  ASSERT_STATUS(C10C_STATUS_NOT_IMPLEMENTED, c10c_tensor_copy_(q, dst)); /* needs a quantizer */
  ASSERT_ERROR_MESSAGE("copy_ from Float to QInt8: conversions of QInt8 are not implemented");
  ASSERT_OK(c10c_tensor_copy_(q, q)); /* the same dtype: bytes */
  c10c_tensor_release(q);
  c10c_tensor_release(q2);
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_copy_(dst, NULL));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_copy_(NULL, dst));
  c10c_tensor_release(ints);
  c10c_tensor_release(bad);
  c10c_tensor_release(scalar);
  c10c_tensor_release(row);
  c10c_tensor_release(dst);
}

TEST(copy_refuses_overlapping_writes_as_tensor_iterator) {
  c10c_tensor *base = arange(8);
  int64_t four[1] = {4}, one[1] = {1}, zero[1] = {0};
  c10c_tensor *a = view(base, 1, four, one, 0), *b = view(base, 1, four, one, 2);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_copy_(b, a));
  ASSERT_ERROR_MESSAGE(
      "unsupported operation: some elements of the input tensor and the written-to tensor refer "
      "to a single memory location. Please clone() the tensor before performing the operation.");
  c10c_tensor *expanded = view(base, 1, four, zero, 0);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_copy_(expanded, a));
  ASSERT_ERROR_MESSAGE(
      "unsupported operation: more than one element of the written-to tensor refers to a single "
      "memory location. Please clone() the tensor before performing the operation.");
  ASSERT_OK(c10c_tensor_fill_(expanded, &(float){5.0f})); /* fill_ allows it, as ATen */
  ASSERT_EQ(((float *)c10c_tensor_data(base))[0], 5);
  c10c_tensor *same = view(base, 1, four, one, 0);
  ASSERT_OK(c10c_tensor_copy_(a, same)); /* the same view: a no-op that still counts */
  c10c_tensor *c = view(base, 1, four, one, 4);
  ASSERT_OK(c10c_tensor_copy_(c, a)); /* disjoint halves of one storage */
  ASSERT_EQ(((float *)c10c_tensor_data(base))[4], 5);
  ASSERT_EQ(((float *)c10c_tensor_data(base))[7], 3);
  c10c_tensor_release(c);
  c10c_tensor_release(same);
  c10c_tensor_release(expanded);
  c10c_tensor_release(b);
  c10c_tensor_release(a);
  c10c_tensor_release(base);
}

TEST(copy_handles_high_rank_and_coalesces) {
  /* 20 dims of size 2, src in reversed dim order: nothing coalesces on the src side. */
  enum { N = 20 };
  int64_t sizes[N], src_strides[N];
  for (int d = 0; d < N; d++) {
    sizes[d] = 2;
    src_strides[d] = (int64_t)1 << d;
  }
  c10c_tensor *base = arange((int64_t)1 << N), *dst = NULL;
  c10c_tensor *src = view(base, N, sizes, src_strides, 0);
  ASSERT_OK(
      c10c_tensor_empty(&dst, sizes, N, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_OK(c10c_tensor_copy_(dst, src));
  const float *p = c10c_tensor_data(dst);
  /* dst element with bits b(N-1..0) in row-major order came from src offset bit-reversed. */
  for (int64_t k = 0; k < ((int64_t)1 << N); k += 4099) {
    int64_t rev = 0;
    for (int d = 0; d < N; d++)
      if (k & ((int64_t)1 << d)) rev |= (int64_t)1 << (N - 1 - d);
    if (p[k] != (float)rev) FAIL_AT("element %lld: %f != %lld", (long long)k, p[k], (long long)rev);
  }
  c10c_tensor *cloned = NULL;
  ASSERT_OK(c10c_tensor_clone(&cloned, src, C10C_MEMORY_FORMAT_PRESERVE));
  for (int d = 0; d < N; d++) ASSERT_EQ(c10c_tensor_strides(cloned)[d], src_strides[d]);
  c10c_tensor_release(cloned);
  c10c_tensor_release(src);
  c10c_tensor_release(base);
  c10c_tensor_release(dst);
}

TEST(fill_zero_and_full_write_every_element) {
  int64_t sizes[2] = {3, 5};
  c10c_tensor *t = NULL;
  double seven = 7.0;
  ASSERT_OK(c10c_tensor_full(&t, sizes, 2, C10C_DTYPE_FLOAT64, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS,
                             &seven));
  ASSERT_EQ(version(t), 0); /* factories do not count as writes */
  const double *p = c10c_tensor_data(t);
  for (int k = 0; k < 15; k++) ASSERT_EQ(p[k], 7);
  c10c_tensor *col = NULL;
  ASSERT_OK(c10c_tensor_select(&col, t, 1, 2));
  ASSERT_OK(c10c_tensor_zero_(col));
  for (int k = 0; k < 15; k++) ASSERT_EQ(p[k], k % 5 == 2 ? 0 : 7);
  ASSERT_EQ(version(t), 1);
  uint16_t bits = 0x3f80; /* bfloat16 1.0 */
  c10c_tensor *bf = NULL;
  ASSERT_OK(c10c_tensor_full(&bf, sizes, 2, C10C_DTYPE_BFLOAT16, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS,
                             &bits));
  ASSERT_EQ(((uint16_t *)c10c_tensor_data(bf))[14], 0x3f80);
  c10c_tensor *zeros = NULL;
  ASSERT_OK(c10c_tensor_full(&zeros, sizes, 2, C10C_DTYPE_COMPLEX128, cpu,
                             C10C_MEMORY_FORMAT_CONTIGUOUS, NULL));
  const double *z = c10c_tensor_data(zeros);
  for (int k = 0; k < 30; k++) ASSERT_EQ(z[k], 0);
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_fill_(t, NULL));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_zero_(NULL));
  int64_t neg[1] = {-1};
  c10c_tensor *none = NULL;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_full(&none, neg, 1, C10C_DTYPE_FLOAT64, cpu,
                                                    C10C_MEMORY_FORMAT_CONTIGUOUS, &seven));
  ASSERT_TRUE(none == NULL);
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_full(NULL, sizes, 2, C10C_DTYPE_FLOAT64, cpu,
                                                           C10C_MEMORY_FORMAT_CONTIGUOUS, &seven));
  c10c_tensor_release(zeros);
  c10c_tensor_release(bf);
  c10c_tensor_release(col);
  c10c_tensor_release(t);
}

TEST(empty_like_preserve_keeps_the_stride_order) {
  c10c_tensor *base = arange(200), *like = NULL;
  /* dense: same strides */
  int64_t sizes[3] = {2, 3, 4}, permuted[3] = {1, 8, 2};
  c10c_tensor *dense = view(base, 3, sizes, permuted, 0);
  ASSERT_OK(
      c10c_tensor_empty_like(&like, dense, C10C_DTYPE_INT8, cpu, C10C_MEMORY_FORMAT_PRESERVE));
  ASSERT_EQ(c10c_tensor_strides(like)[1], 8);
  ASSERT_EQ(c10c_tensor_dtype(like), C10C_DTYPE_INT8);
  c10c_tensor_release(like);
  /* gappy: dense strides in the same order, as torch.empty_like: (2,3,4)/(1,16,4) -> (1,8,2) */
  int64_t gappy[3] = {1, 16, 4};
  c10c_tensor *sparse = view(base, 3, sizes, gappy, 0);
  ASSERT_OK(
      c10c_tensor_empty_like(&like, sparse, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_PRESERVE));
  ASSERT_EQ(c10c_tensor_strides(like)[0], 1);
  ASSERT_EQ(c10c_tensor_strides(like)[1], 8);
  ASSERT_EQ(c10c_tensor_strides(like)[2], 2);
  c10c_tensor_release(like);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_empty_like(&like, sparse, C10C_DTYPE_FLOAT32, cpu,
                                                          C10C_MEMORY_FORMAT_CHANNELS_LAST));
  ASSERT_ERROR_MESSAGE("required rank 4 tensor to use channels_last format");
  c10c_tensor_release(sparse);
  c10c_tensor_release(dense);
  c10c_tensor_release(base);
}

TEST(contiguous_returns_the_tensor_itself_when_it_can) {
  c10c_tensor *base = arange(24), *out = NULL;
  ASSERT_OK(c10c_tensor_contiguous(&out, base, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_TRUE(out == base);
  c10c_tensor_release(out);
  int64_t sizes[2] = {4, 6}, strides[2] = {1, 4};
  c10c_tensor *t = view(base, 2, sizes, strides, 0);
  ASSERT_OK(c10c_tensor_contiguous(&out, t, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_TRUE(out != t);
  ASSERT_EQ(c10c_tensor_strides(out)[0], 6);
  ASSERT_EQ(((float *)c10c_tensor_data(out))[1], 4); /* t[0][1] */
  ASSERT_EQ(version(out), 0);
  c10c_tensor_release(out);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_contiguous(&out, t, C10C_MEMORY_FORMAT_PRESERVE));
  ASSERT_ERROR_MESSAGE("preserve memory format is unsupported by the contiguous operator");
  ASSERT_TRUE(out == NULL);
  c10c_tensor_release(t);
  c10c_tensor_release(base);
}

TEST(inference_tensors_refuse_writes_outside_inference_mode) {
  bool before = c10c_inference_mode_set(true);
  c10c_tensor *t = arange(4);
  ASSERT_OK(c10c_tensor_zero_(t));
  c10c_inference_mode_set(before);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_fill_(t, &(float){1.0f}));
  ASSERT_EQ(((float *)c10c_tensor_data(t))[3], 0); /* nothing written */
  c10c_tensor *copy = NULL;
  ASSERT_OK(c10c_tensor_clone(&copy, t, C10C_MEMORY_FORMAT_PRESERVE)); /* reading is fine */
  ASSERT_FALSE(c10c_tensor_is_inference(copy));
  c10c_tensor_release(copy);
  c10c_tensor_release(t);
}

TEST(float_to_half_keeps_nan_payloads_in_every_layout_as_torch) {
  /* fuzz_geometry found that a contiguous run (F16C) and single elements gave different bits for
   * NaNs; torch 2.13 keeps the payload whatever the layout: these are its results */
  static const uint32_t in[8] = {0x7fbfffff, 0x7fa00000, 0xffc12345, 0x7f812345,
                                 0x7f800001, 0x7fc00001, 0x3f800000, 0x7f800000};
  static const uint16_t torch_gives[8] = {0x7fff, 0x7f00, 0xfe09, 0x7e09,
                                          0x7e00, 0x7e00, 0x3c00, 0x7c00};
  int64_t n = 16;
  c10c_tensor *src = NULL, *dst = NULL, *every_other = NULL;
  ASSERT_OK(c10c_tensor_empty(&src, &n, 1, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_OK(c10c_tensor_empty(&dst, &n, 1, C10C_DTYPE_FLOAT16, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  uint32_t *p = c10c_tensor_data(src);
  for (int i = 0; i < 16; i++) p[i] = in[i % 8];
  ASSERT_OK(c10c_tensor_copy_(dst, src)); /* contiguous: the vector loop */
  const uint16_t *q = c10c_tensor_data(dst);
  for (int i = 0; i < 16; i++) ASSERT_EQ(q[i], torch_gives[i % 8]);
  ASSERT_OK(c10c_tensor_zero_(dst));
  int64_t half = 8, two = 2;
  ASSERT_OK(c10c_tensor_as_strided(&every_other, src, &half, 1, &two, 1, NULL));
  c10c_tensor *out = NULL;
  ASSERT_OK(c10c_tensor_as_strided(&out, dst, &half, 1, &two, 1, NULL));
  ASSERT_OK(c10c_tensor_copy_(out, every_other)); /* strided: element by element */
  for (int i = 0; i < 16; i += 2) ASSERT_EQ(q[i], torch_gives[i % 8]);
  c10c_tensor *all[] = {src, dst, every_other, out};
  for (int i = 0; i < 4; i++) c10c_tensor_release(all[i]);
}

/* n elements of src_type from the 16-bit patterns in bits (repeated), converted to float32 both
 * contiguously and every other element: each result must be want[i % 4]. */
static void expect_float_bits(c10c_dtype src_type, const uint16_t *bits, const uint32_t *want) {
  int64_t n = 36, half = 18, two = 2; /* past the vector loops' blocks, into their tails */
  c10c_tensor *src = NULL, *dst = NULL, *s2 = NULL, *d2 = NULL;
  ASSERT_OK(c10c_tensor_empty(&src, &n, 1, src_type, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_OK(c10c_tensor_empty(&dst, &n, 1, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  uint16_t *p = c10c_tensor_data(src);
  for (int i = 0; i < n; i++) p[i] = bits[i % 4];
  ASSERT_OK(c10c_tensor_copy_(dst, src));
  const uint32_t *q = c10c_tensor_data(dst);
  for (int i = 0; i < n; i++) ASSERT_EQ_U64(q[i], want[i % 4]);
  ASSERT_OK(c10c_tensor_zero_(dst));
  ASSERT_OK(c10c_tensor_as_strided(&s2, src, &half, 1, &two, 1, NULL));
  ASSERT_OK(c10c_tensor_as_strided(&d2, dst, &half, 1, &two, 1, NULL));
  ASSERT_OK(c10c_tensor_copy_(d2, s2));
  for (int i = 0; i < n; i += 2) ASSERT_EQ_U64(q[i], want[i % 4]);
  c10c_tensor *all[] = {src, dst, s2, d2};
  for (int i = 0; i < 4; i++) c10c_tensor_release(all[i]);
}

TEST(half_and_bfloat16_nans_become_floats_as_torch_in_every_layout) {
  /* torch 2.13, contiguous and strided alike: half NaNs come out quiet (F16C), bfloat16 is a bit
   * copy (a signalling NaN stays one). fuzz_geometry found the vector loop's tail and the strided
   * path disagreeing. */
  static const uint16_t half_bits[4] = {0x7c01, 0xfc01, 0x7dff, 0x7c00};
  static const uint32_t half_want[4] = {0x7fc02000, 0xffc02000, 0x7fffe000, 0x7f800000};
  expect_float_bits(C10C_DTYPE_FLOAT16, half_bits, half_want);
  static const uint16_t bf16_bits[4] = {0x7f81, 0xff81, 0x7fc1, 0x7f80};
  static const uint32_t bf16_want[4] = {0x7f810000, 0xff810000, 0x7fc10000, 0x7f800000};
  expect_float_bits(C10C_DTYPE_BFLOAT16, bf16_bits, bf16_want);
}

TEST(contiguous_preserve_returns_a_contiguous_tensor_itself_as_torch) {
  /* torch 2.13: x.contiguous(memory_format=torch.preserve_format) is x when x is row-major
   * contiguous; otherwise (a channels-last tensor included) it refuses */
  c10c_tensor *base = arange(24), *out = NULL, *cl = NULL;
  ASSERT_OK(c10c_tensor_contiguous(&out, base, C10C_MEMORY_FORMAT_PRESERVE));
  ASSERT_TRUE(out == base);
  c10c_tensor_release(out);
  int64_t sizes[4] = {1, 2, 3, 4};
  ASSERT_OK(
      c10c_tensor_empty(&cl, sizes, 4, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CHANNELS_LAST));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_contiguous(&out, cl, C10C_MEMORY_FORMAT_PRESERVE));
  ASSERT_ERROR_MESSAGE("preserve memory format is unsupported by the contiguous operator");
  ASSERT_OK(c10c_tensor_contiguous(&out, cl, C10C_MEMORY_FORMAT_CHANNELS_LAST));
  ASSERT_TRUE(out == cl);
  c10c_tensor_release(out);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_tensor_contiguous(&out, base, 9));
  ASSERT_ERROR_MESSAGE("Unknown memory format 9");
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER,
                c10c_tensor_contiguous(NULL, base, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER,
                c10c_tensor_contiguous(&out, NULL, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_TRUE(out == NULL);
  c10c_tensor_release(cl);
  c10c_tensor_release(base);
}

TEST(factories_refuse_null_and_invalid_arguments) {
  c10c_tensor *t = arange(6), *out = NULL;
  int64_t sizes[1] = {6};
  c10c_device unknown = {40, 0};
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_empty_like(NULL, t, C10C_DTYPE_FLOAT32, cpu,
                                                                 C10C_MEMORY_FORMAT_PRESERVE));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_empty_like(&out, NULL, C10C_DTYPE_FLOAT32,
                                                                 cpu, C10C_MEMORY_FORMAT_PRESERVE));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_tensor_empty_like(&out, t, 99, cpu, C10C_MEMORY_FORMAT_PRESERVE));
  ASSERT_ERROR_MESSAGE("invalid dtype 99");
  ASSERT_STATUS(
      C10C_STATUS_INVALID_ARGUMENT,
      c10c_tensor_empty_like(&out, t, C10C_DTYPE_FLOAT32, unknown, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_ERROR_MESSAGE("Unknown device type 40");
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_tensor_empty_like(&out, t, C10C_DTYPE_FLOAT32, cpu, 9));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_full_like(NULL, t, C10C_DTYPE_FLOAT32, cpu,
                                                                C10C_MEMORY_FORMAT_PRESERVE, NULL));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_full_like(&out, NULL, C10C_DTYPE_FLOAT32, cpu,
                                                                C10C_MEMORY_FORMAT_PRESERVE, NULL));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_clone(NULL, t, C10C_MEMORY_FORMAT_PRESERVE));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER,
                c10c_tensor_clone(&out, NULL, C10C_MEMORY_FORMAT_PRESERVE));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_tensor_clone(&out, t, 9));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_tensor_full(&out, sizes, 1, 99, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS, NULL));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_full(&out, NULL, 1, C10C_DTYPE_FLOAT32, cpu,
                                                           C10C_MEMORY_FORMAT_CONTIGUOUS, NULL));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_fill_(NULL, &(float){1.0f}));
  ASSERT_TRUE(out == NULL);
  c10c_tensor_release(t);
}

TEST(copies_and_fills_off_cpu_and_cuda_are_not_implemented) {
  /* an HPU allocator from the host: HPU tensors can be made, not written or read */
  install_malloc_allocator(C10C_DEVICE_TYPE_HPU);
  c10c_device hpu = {C10C_DEVICE_TYPE_HPU, 0};
  int64_t sizes[1] = {4};
  float one = 1.0f;
  c10c_tensor *h = NULL, *c = arange(4), *out = NULL;
  ASSERT_OK(
      c10c_tensor_empty(&h, sizes, 1, C10C_DTYPE_FLOAT32, hpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  const char *message = "copies and fills of HPU tensors are not implemented yet";
  ASSERT_STATUS(C10C_STATUS_NOT_IMPLEMENTED, c10c_tensor_fill_(h, &one));
  ASSERT_ERROR_MESSAGE(message);
  ASSERT_STATUS(C10C_STATUS_NOT_IMPLEMENTED, c10c_tensor_zero_(h));
  ASSERT_ERROR_MESSAGE(message);
  ASSERT_STATUS(C10C_STATUS_NOT_IMPLEMENTED, c10c_tensor_copy_(h, c));
  ASSERT_ERROR_MESSAGE(message);
  ASSERT_STATUS(C10C_STATUS_NOT_IMPLEMENTED, c10c_tensor_copy_(c, h));
  ASSERT_ERROR_MESSAGE(message);
  ASSERT_STATUS(C10C_STATUS_NOT_IMPLEMENTED,
                c10c_tensor_clone(&out, h, C10C_MEMORY_FORMAT_PRESERVE));
  ASSERT_STATUS(C10C_STATUS_NOT_IMPLEMENTED,
                c10c_tensor_full(&out, sizes, 1, C10C_DTYPE_FLOAT32, hpu,
                                 C10C_MEMORY_FORMAT_CONTIGUOUS, &one));
  ASSERT_ERROR_MESSAGE(message);
  ASSERT_STATUS(
      C10C_STATUS_NOT_IMPLEMENTED,
      c10c_tensor_full_like(&out, c, C10C_DTYPE_FLOAT32, hpu, C10C_MEMORY_FORMAT_PRESERVE, NULL));
  ASSERT_TRUE(out == NULL);
  ASSERT_EQ(version(c), 0);
  c10c_tensor_release(h);
  c10c_tensor_release(c);
}

TEST(cuda_tensors_without_cuda_report_the_driver_unavailable) {
  if (c10c_cuda_is_available()) return; /* the driver's own errors are test_cuda's */
  static float device_memory[4];        /* a CUDA storage the driver never sees */
  c10c_storage *s = NULL;
  c10c_tensor *t = NULL, *c = arange(4), *out = NULL;
  ASSERT_OK(c10c_storage_new_external(&s, device_memory, sizeof device_memory,
                                      (c10c_device){C10C_DEVICE_TYPE_CUDA, 0}, NULL, NULL));
  int64_t n = 4, one = 1;
  ASSERT_OK(c10c_tensor_new_from_storage(&t, s, &n, &one, 1, 0, C10C_DTYPE_FLOAT32));
  ASSERT_STATUS(C10C_STATUS_UNAVAILABLE, c10c_tensor_fill_(t, &(float){1.0f}));
  ASSERT_STATUS(C10C_STATUS_UNAVAILABLE, c10c_tensor_zero_(t));
  ASSERT_STATUS(C10C_STATUS_UNAVAILABLE, c10c_tensor_copy_(t, c));
  ASSERT_STATUS(C10C_STATUS_UNAVAILABLE, c10c_tensor_copy_(c, t));
  ASSERT_STATUS(C10C_STATUS_UNAVAILABLE, c10c_tensor_clone(&out, t, C10C_MEMORY_FORMAT_PRESERVE));
  ASSERT_TRUE(out == NULL);
  ASSERT_EQ(version(t), 0);
  c10c_tensor_release(t);
  c10c_tensor_release(c);
  c10c_storage_release(s);
}

TEST(copies_between_dtypes_without_conversions_are_not_implemented) {
  /* torch 2.13 raises NotImplementedError too ('"copy_" not implemented for 'Bits8''); a copy
   * within one such dtype moves bytes */
  int64_t sizes[1] = {4};
  c10c_tensor *b8 = NULL, *b16 = NULL, *other = NULL;
  ASSERT_OK(c10c_tensor_empty(&b8, sizes, 1, C10C_DTYPE_BITS8, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_OK(
      c10c_tensor_empty(&b16, sizes, 1, C10C_DTYPE_BITS16, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_STATUS(C10C_STATUS_NOT_IMPLEMENTED, c10c_tensor_copy_(b16, b8));
  ASSERT_ERROR_MESSAGE("copy_ from Bits8 to Bits16: conversions of Bits8 are not implemented");
  c10c_tensor *f = arange(4);
  ASSERT_STATUS(C10C_STATUS_NOT_IMPLEMENTED, c10c_tensor_copy_(b8, f));
  ASSERT_ERROR_MESSAGE("copy_ from Float to Bits8: conversions of Bits8 are not implemented");
  ASSERT_OK(c10c_tensor_full_like(&other, b8, C10C_DTYPE_BITS8, cpu, C10C_MEMORY_FORMAT_PRESERVE,
                                  &(uint8_t){0xa5}));
  ASSERT_OK(c10c_tensor_copy_(b8, other));
  ASSERT_EQ(((uint8_t *)c10c_tensor_data(b8))[3], 0xa5);
  c10c_tensor *all[] = {b8, b16, other, f};
  for (int i = 0; i < 4; i++) c10c_tensor_release(all[i]);
}

TEST(read_only_storages_refuse_every_in_place_write) {
  c10c_tensor *t = arange(4), *src = arange(4), *out = NULL;
  ASSERT_OK(c10c_storage_set_read_only(c10c_tensor_storage(t)));
  const char *message =
      "cannot write to a read-only tensor: its memory was shared read-only (a read-only numpy "
      "array or DLPack export); clone() it to get a writable copy";
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_fill_(t, &(float){9.0f}));
  ASSERT_ERROR_MESSAGE(message);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_zero_(t));
  ASSERT_ERROR_MESSAGE(message);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_copy_(t, src));
  ASSERT_ERROR_MESSAGE(message);
  ASSERT_EQ(((float *)c10c_tensor_data(t))[3], 3); /* nothing written */
  ASSERT_EQ(version(t), 0);
  ASSERT_OK(c10c_tensor_copy_(src, t)); /* reading is fine */
  ASSERT_OK(c10c_tensor_clone(&out, t, C10C_MEMORY_FORMAT_PRESERVE));
  ASSERT_FALSE(c10c_tensor_is_read_only(out));
  c10c_tensor_release(out);
  c10c_tensor_release(src);
  c10c_tensor_release(t);
}

RUN_TESTS(T(copy_of_a_transposed_view_matches_elementwise), T(copy_broadcasts_a_row_and_a_scalar),
          T(copy_refuses_overlapping_writes_as_tensor_iterator),
          T(copy_handles_high_rank_and_coalesces), T(fill_zero_and_full_write_every_element),
          T(empty_like_preserve_keeps_the_stride_order),
          T(contiguous_returns_the_tensor_itself_when_it_can),
          T(inference_tensors_refuse_writes_outside_inference_mode),
          T(float_to_half_keeps_nan_payloads_in_every_layout_as_torch),
          T(half_and_bfloat16_nans_become_floats_as_torch_in_every_layout),
          T(contiguous_preserve_returns_a_contiguous_tensor_itself_as_torch),
          T(factories_refuse_null_and_invalid_arguments),
          T(copies_and_fills_off_cpu_and_cuda_are_not_implemented),
          T(cuda_tensors_without_cuda_report_the_driver_unavailable),
          T(copies_between_dtypes_without_conversions_are_not_implemented),
          T(read_only_storages_refuse_every_in_place_write))
