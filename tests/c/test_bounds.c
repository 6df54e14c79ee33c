/* No bad input reaches memory the library does not own (each finding pinned here):
 * a tensor whose storage shrank under it refuses every data access; size, stride and offset
 * arithmetic never wraps; negative sizes are refused even beside a 0; copies between
 * overlapping views read the source whole first; set_nbytes cannot claim bytes the storage does
 * not hold. Where torch 2.13 has the same hole the comment says what torch does. */
#include "harness.h"

static const c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
static const int64_t BIG = INT64_C(1) << 62;

static c10c_tensor *floats(int64_t n) {
  c10c_tensor *t = NULL;
  ASSERT_OK(c10c_tensor_empty(&t, &n, 1, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  float *p = c10c_tensor_data(t);
  for (int64_t i = 0; p != NULL && i < n; i++) p[i] = (float)i;
  return t;
}

/* A tensor of any geometry over a 0-byte storage: with a size 0 its sizes and strides may be
 * anything, which is where view arithmetic can overflow. */
static c10c_tensor *empty_geometry(const int64_t *sizes, const int64_t *strides, size_t n) {
  c10c_tensor *base = floats(0), *v = NULL;
  ASSERT_OK(c10c_tensor_as_strided(&v, base, sizes, n, strides, n, NULL));
  c10c_tensor_release(base);
  return v;
}

/* Every data access of t fails with the storage-shrank message, and nothing is written. */
static void expect_refused(c10c_tensor *t, const char *op_prefix, int line) {
  float one = 1.0f;
  c10c_tensor *other = floats(c10c_tensor_numel(t)), *out = NULL;
  c10c_status statuses[6];
  statuses[0] = c10c_tensor_fill_(t, &one);
  statuses[1] = c10c_tensor_zero_(t);
  statuses[2] = c10c_tensor_copy_(t, other);
  statuses[3] = c10c_tensor_copy_(other, t);
  statuses[4] = c10c_tensor_clone(&out, t, C10C_MEMORY_FORMAT_PRESERVE);
  DLManagedTensorVersioned *dl = NULL;
  statuses[5] = c10c_tensor_to_dlpack_versioned(&dl, t);
  for (int i = 0; i < 6; i++)
    if (statuses[i] != C10C_STATUS_ERROR) {
      fprintf(stderr, "  line %d: access %d returned %s\n", line, i, c10c_status_name(statuses[i]));
      test_current_failed = 1;
    }
  if (c10c_tensor_data(t) != NULL || out != NULL || dl != NULL) {
    fprintf(stderr, "  line %d: a pointer or a result came back\n", line);
    test_current_failed = 1;
  }
  if (strncmp(c10c_last_error_message(), op_prefix, strlen(op_prefix)) != 0) {
    fprintf(stderr, "  line %d: message '%s'\n", line, c10c_last_error_message());
    test_current_failed = 1;
  }
  c10c_tensor_release(other);
}

TEST(a_storage_resized_under_a_tensor_refuses_every_access) {
  /* torch 2.13: fill_ after untyped_storage().resize_(0) segfaults the interpreter */
  c10c_tensor *t = floats(100), *v = NULL;
  c10c_storage *s = c10c_tensor_storage(t);
  ASSERT_OK(c10c_storage_resize(s, 0));
  float one = 1.0f;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_fill_(t, &one));
  ASSERT_ERROR_MESSAGE(
      "fill_: the tensor's elements (sizes [100], strides [1], storage offset 0, itemsize 4) "
      "reach 400 bytes of its storage, which holds 0 bytes now (resized or set_nbytes after the "
      "tensor was made)");
  expect_refused(t, "", __LINE__);
  ASSERT_OK(c10c_storage_resize(s, 100));
  expect_refused(t, "", __LINE__);
  /* clone says so before it makes its copy (whose size would fail first for a big expansion) */
  int64_t huge = INT64_C(1) << 40;
  c10c_tensor *wide = NULL, *copy = NULL, *last = NULL;
  ASSERT_OK(c10c_tensor_narrow(&last, t, 0, 99, 1)); /* element 99: bytes 396..400, past 100 */
  ASSERT_OK(c10c_tensor_expand(&wide, last, &huge, 1));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_clone(&copy, wide, C10C_MEMORY_FORMAT_PRESERVE));
  ASSERT_TRUE(strncmp(c10c_last_error_message(), "clone: the tensor's elements", 28) == 0);
  c10c_tensor_release(wide);
  c10c_tensor_release(last);
  /* views are metadata: made as before, refused as their base when they reach past the end */
  int64_t shape[2] = {10, 10};
  ASSERT_OK(c10c_tensor_view(&v, t, shape, 2));
  expect_refused(v, "", __LINE__);
  c10c_tensor *row = NULL, *tail = NULL;
  ASSERT_OK(c10c_tensor_select(&row, v, 0, 2)); /* elements 20..29: bytes 80..120 */
  expect_refused(row, "", __LINE__);
  ASSERT_OK(c10c_tensor_select(&tail, v, 0, 1)); /* elements 10..19: bytes 40..80, inside */
  ASSERT_OK(c10c_tensor_fill_(tail, &one));
  ASSERT_TRUE(c10c_tensor_data(tail) != NULL);
  /* grown back, everything works again */
  ASSERT_OK(c10c_storage_resize(s, 400));
  ASSERT_OK(c10c_tensor_fill_(t, &one));
  ASSERT_OK(c10c_tensor_zero_(row));
  c10c_tensor_release(tail);
  c10c_tensor_release(row);
  c10c_tensor_release(v);
  c10c_tensor_release(t);
}

TEST(set_nbytes_shrinks_only_and_shrunk_tensors_are_refused) {
  c10c_tensor *t = floats(100);
  c10c_storage *s = c10c_tensor_storage(t);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_storage_set_nbytes(s, 401));
  ASSERT_ERROR_MESSAGE(
      "set_nbytes: 401 bytes is more than the storage's memory holds (400 bytes); resize it to "
      "grow it");
  ASSERT_OK(c10c_storage_set_nbytes(s, 396));
  expect_refused(t, "", __LINE__);
  ASSERT_OK(c10c_storage_set_nbytes(s, 400));
  float two = 2.0f;
  ASSERT_OK(c10c_tensor_fill_(t, &two));
  ASSERT_EQ(((float *)c10c_tensor_data(t))[99], 2);
  /* a storage over external memory holds what it was given, no more */
  c10c_storage *ext = NULL;
  static char buffer[16];
  ASSERT_OK(c10c_storage_new_external(&ext, buffer, 16, cpu, NULL, NULL));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_storage_set_nbytes(ext, 17));
  ASSERT_OK(c10c_storage_set_nbytes(ext, 0));
  ASSERT_OK(c10c_storage_set_nbytes(ext, 16));
  c10c_storage_release(ext);
  c10c_tensor_release(t);
}

TEST(a_view_whose_last_element_sits_at_2_64_is_refused) {
  /* fuzz_dlpack's finding: (2^62 - 2) * 4 + 7 = 2^64 - 1 fits, its + 1 wrapped to an extent of 0,
   * every bounds check passed, and fill_ wrote far past the storage (torch refuses the view with
   * this message) */
  int64_t four = 4, sizes[2] = {(INT64_C(1) << 62) - 1, 2}, strides[2] = {4, 7};
  c10c_tensor *t = NULL, *v = NULL;
  ASSERT_OK(c10c_tensor_empty(&t, &four, 1, C10C_DTYPE_INT64, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_as_strided(&v, t, sizes, 2, strides, 2, NULL));
  ASSERT_ERROR_MESSAGE(
      "Storage size calculation overflowed with sizes=[4611686018427387903, 2] and strides=[4, 7]");
  ASSERT_TRUE(v == NULL);
  c10c_tensor_release(t);
}

TEST(tensor_data_never_points_outside_the_storage) {
  c10c_tensor *t = floats(10), *v = NULL;
  /* no elements, at an offset past the storage's end (ATen allows it): no pointer to give */
  int64_t zero = 0, one = 1, far = 100, huge = BIG;
  ASSERT_OK(c10c_tensor_as_strided(&v, t, &zero, 1, &one, 1, &far));
  ASSERT_TRUE(c10c_tensor_data(v) == NULL);
  c10c_tensor_release(v);
  ASSERT_OK(c10c_tensor_as_strided(&v, t, &zero, 1, &one, 1, &huge)); /* offset*4 overflows */
  ASSERT_TRUE(c10c_tensor_data(v) == NULL);
  c10c_tensor_release(v);
  int64_t ten = 10; /* no elements, at the end: the end */
  ASSERT_OK(c10c_tensor_as_strided(&v, t, &zero, 1, &one, 1, &ten));
  ASSERT_TRUE(c10c_tensor_data(v) == (char *)c10c_tensor_data(t) + 40);
  c10c_tensor_release(v);
  c10c_tensor_release(t);
}

TEST(nbytes_saturates_instead_of_wrapping) {
  /* torch: empty(1, dtype=float64).expand(2**61 + 1).nbytes is 8 */
  c10c_tensor *t = floats(1), *v = NULL;
  int64_t n = (INT64_C(1) << 61) + 1;
  ASSERT_OK(c10c_tensor_expand(&v, t, &n, 1));
  ASSERT_EQ(c10c_tensor_numel(v), n);
  ASSERT_EQ(c10c_tensor_nbytes(v), INT64_MAX);
  c10c_tensor_release(v);
  c10c_tensor_release(t);
}

TEST(view_arithmetic_that_would_wrap_is_refused) {
  c10c_tensor *v = NULL;
  /* unsqueeze: the new dim's stride is size * stride (torch: wraps to 0) */
  int64_t s1[2] = {0, BIG}, st1[2] = {1, BIG};
  c10c_tensor *t = empty_geometry(s1, st1, 2);
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_unsqueeze(&v, t, 1));
  ASSERT_ERROR_MESSAGE(
      "unsqueeze: the new dim's stride, size * stride (4611686018427387904 and "
      "4611686018427387904) overflows int64");
  ASSERT_OK(c10c_tensor_unsqueeze(&v, t, 2)); /* the new last dim: stride 1 */
  c10c_tensor_release(v);
  /* select: offset + index * stride (torch: "Tensor: invalid storage offset -4611686018427387904")
   */
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_select(&v, t, 1, BIG - 1));
  /* slice: offset + start * stride, and stride * step wrapping positive (torch: stride 0) */
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_slice(&v, t, 1, 3, INT64_MAX, 1));
  int64_t s2[2] = {0, INT64_C(1) << 30}, st2[2] = {1, INT64_C(1) << 40};
  c10c_tensor *u = empty_geometry(s2, st2, 2);
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_slice(&v, u, 1, 0, 1 << 30, 1 << 28));
  ASSERT_ERROR_MESSAGE("slice: stride * step (1099511627776 and 268435456) overflows int64");
  ASSERT_TRUE(v == NULL);
  /* one element left: its stride never moves, and the wrapped one is kept, as torch */
  ASSERT_OK(c10c_tensor_slice(&v, u, 1, 0, INT64_MAX, INT64_C(1) << 31));
  ASSERT_EQ(c10c_tensor_sizes(v)[1], 1);
  ASSERT_EQ(c10c_tensor_strides(v)[1], 0); /* 2^40 * 2^31 mod 2^64 */
  c10c_tensor_release(v);
  /* narrow goes through slice */
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_narrow(&v, t, 1, 2, 1));
  /* flatten: the product of sizes (torch: wraps to 0) */
  int64_t s3[3] = {0, INT64_C(1) << 40, INT64_C(1) << 40}, st3[3] = {1, 1, 1};
  c10c_tensor *w = empty_geometry(s3, st3, 3);
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_flatten(&v, w, 1, 2));
  /* view/reshape: the strides of the new shape (torch: a stride that wraps to 0) */
  c10c_tensor *e = floats(0);
  int64_t shape[4] = {0, INT64_C(1) << 40, INT64_C(1) << 40, 2};
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_view(&v, e, shape, 4));
  ASSERT_ERROR_MESSAGE("Stride calculation overflowed");
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_reshape(&v, e, shape, 4));
  /* expand: a new leading dim of size 1 takes the next dim's size * stride */
  int64_t s5[2] = {BIG, 0}, st5[2] = {BIG, 1};
  c10c_tensor *x = empty_geometry(s5, st5, 2);
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_expand(&v, x, (int64_t[]){1, BIG, 0}, 3));
  ASSERT_OK(c10c_tensor_expand(&v, x, (int64_t[]){2, BIG, 0}, 3)); /* broadcast: stride 0 */
  c10c_tensor_release(v);
  /* diagonal: offset * stride and the strides' sum (torch: an internal SymInt error) */
  int64_t s4[3] = {0, 8, 8}, st4[3] = {1, INT64_C(1) << 61, INT64_C(1) << 61};
  c10c_tensor *y = empty_geometry(s4, st4, 3);
  ASSERT_OK(c10c_tensor_diagonal(&v, y, 0, 1, 2)); /* stride 2^62 */
  c10c_tensor_release(v);
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_diagonal(&v, y, 5, 1, 2));
  ASSERT_ERROR_MESSAGE(
      "diagonal: storage offset + offset * stride (5 and 2305843009213693952) overflows int64");
  ASSERT_OK(c10c_tensor_diagonal(&v, y, 9, 1, 2)); /* an empty diagonal: no offset to move */
  c10c_tensor_release(v);
  st4[1] = st4[2] = BIG;
  c10c_tensor *y2 = empty_geometry(s4, st4, 3);
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_diagonal(&v, y2, 0, 1, 2));
  ASSERT_ERROR_MESSAGE(
      "diagonal: the sum of the strides (4611686018427387904 and 4611686018427387904) overflows "
      "int64");
  c10c_tensor_release(y2);
  /* unfold: stride * step */
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_unfold(&v, t, 1, 1, 4));
  ASSERT_TRUE(v == NULL);
  /* one window left: its stride never moves, kept as torch gives it (torch: arange(10.)
   * .unfold(0, 2, 2**62) has stride (2**62, 1); a stride 8 times 2**61 wraps to 0) */
  c10c_tensor *ten = floats(10), *spread = NULL;
  ASSERT_OK(c10c_tensor_unfold(&v, ten, 0, 2, INT64_C(1) << 62));
  ASSERT_EQ(c10c_tensor_sizes(v)[0], 1);
  ASSERT_EQ(c10c_tensor_strides(v)[0], INT64_C(1) << 62);
  c10c_tensor_release(v);
  ASSERT_OK(c10c_tensor_as_strided(&spread, ten, (int64_t[]){2}, 1, (int64_t[]){8}, 1, NULL));
  ASSERT_OK(c10c_tensor_unfold(&v, spread, 0, 1, INT64_C(1) << 61));
  ASSERT_EQ(c10c_tensor_strides(v)[0], 0);
  c10c_tensor_release(v);
  /* wrapped negative: torch's as_strided message, word for word */
  int64_t step = (INT64_C(1) << 60) + (INT64_C(1) << 59);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_unfold(&v, spread, 0, 1, step));
  ASSERT_ERROR_MESSAGE(
      "as_strided: Negative strides are not supported at the moment, got strides: "
      "[-4611686018427387904, 8]");
  c10c_tensor_release(spread);
  c10c_tensor_release(ten);
  c10c_tensor *all[] = {t, u, w, e, x, y};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) c10c_tensor_release(all[i]);
}

/* v has these sizes and strides ({{sizes}, {strides}}), each compared with ASSERT_EQ. */
#define EXPECT_GEOMETRY(v, n, ...)                        \
  do {                                                    \
    const int64_t geo_[2][n] = __VA_ARGS__;               \
    ASSERT_EQ(c10c_tensor_dim(v), (size_t)(n));           \
    for (size_t d_ = 0; d_ < (n); d_++) {                 \
      ASSERT_EQ(c10c_tensor_sizes(v)[d_], geo_[0][d_]);   \
      ASSERT_EQ(c10c_tensor_strides(v)[d_], geo_[1][d_]); \
    }                                                     \
  } while (0)

TEST(unfold_of_a_dim_of_int64_max_into_windows_of_size_0_is_an_overflow) {
  /* INT64_MAX + 1 windows (the fuzz campaign's finding: UBSan, signed overflow in views.c).
   * torch 2.13's count wraps: empty(0).as_strided([2**63 - 1, 0], [1, 1]).unfold(0, 0, 1) fails
   * with "IntArrayRef contains an int that cannot be represented as a SymInt" */
  int64_t sizes[2] = {INT64_MAX, 0}, strides[2] = {1, 1};
  c10c_tensor *t = empty_geometry(sizes, strides, 2), *v = NULL;
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_unfold(&v, t, 0, 0, 1));
  ASSERT_ERROR_MESSAGE(
      "unfold: the number of windows, (size of dim - size) / step + 1 (9223372036854775807 and 0) "
      "overflows int64");
  ASSERT_TRUE(v == NULL);
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_unfold(&v, t, -2, 0, 1));
  /* one window fewer fits: torch gives each of these the same sizes and strides */
  ASSERT_OK(c10c_tensor_unfold(&v, t, 0, 1, 1)); /* [2**63 - 1, 0, 1], strides [1, 1, 1] */
  EXPECT_GEOMETRY(v, 3, {{INT64_MAX, 0, 1}, {1, 1, 1}});
  c10c_tensor_release(v);
  ASSERT_OK(c10c_tensor_unfold(&v, t, 0, 0, 2)); /* [2**62, 0, 0], strides [2, 1, 1] */
  EXPECT_GEOMETRY(v, 3, {{INT64_C(1) << 62, 0, 0}, {2, 1, 1}});
  c10c_tensor_release(v);
  ASSERT_OK(c10c_tensor_unfold(&v, t, 0, 0, INT64_MAX)); /* [2, 0, 0], [2**63 - 1, 1, 1] */
  EXPECT_GEOMETRY(v, 3, {{2, 0, 0}, {INT64_MAX, 1, 1}});
  c10c_tensor_release(v);
  ASSERT_OK(c10c_tensor_unfold(&v, t, 0, INT64_MAX, 1)); /* [1, 0, 2**63 - 1], [1, 1, 1] */
  EXPECT_GEOMETRY(v, 3, {{1, 0, INT64_MAX}, {1, 1, 1}});
  c10c_tensor_release(v);
  ASSERT_OK(c10c_tensor_unfold(&v, t, 1, 0, 1)); /* the dim of size 0: [2**63 - 1, 1, 0] */
  EXPECT_GEOMETRY(v, 3, {{INT64_MAX, 1, 0}, {1, 1, 1}});
  c10c_tensor_release(v);
  c10c_tensor_release(t);
}

TEST(a_refused_unsqueeze_of_many_dims_reads_nothing_freed) {
  /* fuzz_dlpack's finding: with 16 dims and more the scratch geometry is on the heap, and the
   * overflow message read it after freeing it (ASan: heap-use-after-free) */
  int64_t sizes[17], strides[17];
  for (int d = 0; d < 17; d++) sizes[d] = 1, strides[d] = 1;
  sizes[0] = 2, sizes[1] = 0, strides[0] = BIG;
  c10c_tensor *t = empty_geometry(sizes, strides, 17), *v = NULL;
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_unsqueeze(&v, t, 0));
  ASSERT_ERROR_MESSAGE(
      "unsqueeze: the new dim's stride, size * stride (2 and 4611686018427387904) overflows int64");
  ASSERT_TRUE(v == NULL);
  c10c_tensor_release(t);
}

TEST(negative_sizes_are_refused_even_beside_a_zero) {
  c10c_tensor *v = NULL, *scalar = NULL, *one = floats(1), *zero = floats(0);
  ASSERT_OK(
      c10c_tensor_empty(&scalar, NULL, 0, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  /* torch accepts these three and makes tensors of size -1 and -5 */
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_expand(&v, scalar, (int64_t[]){-1, 0}, 2));
  ASSERT_ERROR_MESSAGE("numel: integer multiplication overflow");
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_expand(&v, one, (int64_t[]){-5, 0}, 2));
  /* as_strided checks in ATen's order, with the messages torch gives the sizes without the 0:
   * as_strided([-5], [0]) of empty(0) is out of bounds, of empty(10) a numel overflow */
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_as_strided(&v, zero, (int64_t[]){-5, 0}, 2,
                                                          (int64_t[]){0, 0}, 2, NULL));
  ASSERT_ERROR_MESSAGE(
      "setStorage: sizes [-5, 0], strides [0, 0], storage offset 0, and itemsize 4 requiring a "
      "storage size of 4 are out of bounds for storage of size 0");
  c10c_tensor *ten = floats(10);
  ASSERT_STATUS(C10C_STATUS_OVERFLOW,
                c10c_tensor_as_strided(&v, ten, (int64_t[]){-5, 0}, 2, (int64_t[]){0, 0}, 2, NULL));
  ASSERT_ERROR_MESSAGE("numel: integer multiplication overflow");
  ASSERT_STATUS(C10C_STATUS_OVERFLOW,
                c10c_tensor_as_strided(&v, ten, (int64_t[]){-5}, 1, (int64_t[]){0}, 1, NULL));
  ASSERT_ERROR_MESSAGE("numel: integer multiplication overflow");
  ASSERT_STATUS(C10C_STATUS_OVERFLOW,
                c10c_tensor_as_strided(&v, ten, (int64_t[]){0, -1}, 2, (int64_t[]){1, 1}, 2, NULL));
  ASSERT_ERROR_MESSAGE("Storage size calculation overflowed with sizes=[0, -1] and strides=[1, 1]");
  c10c_tensor_release(ten);
  /* as torch, where torch refuses too */
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_expand(&v, one, (int64_t[]){-3}, 1));
  ASSERT_ERROR_MESSAGE("numel: integer multiplication overflow");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_expand(&v, one, (int64_t[]){-1, 3}, 2));
  ASSERT_ERROR_MESSAGE(
      "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0");
  int64_t s[2] = {3, 1};
  c10c_tensor *col = NULL;
  ASSERT_OK(c10c_tensor_empty(&col, s, 2, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  /* a mismatch further left is reported first, as ATen meets the negative size only at the end */
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_expand(&v, col, (int64_t[]){4, -5}, 2));
  ASSERT_ERROR_MESSAGE(
      "The expanded size of the tensor (4) must match the existing size (3) at non-singleton "
      "dimension 0.  Target sizes: [4, -5].  Tensor sizes: [3, 1]");
  ASSERT_STATUS(C10C_STATUS_OVERFLOW,
                c10c_tensor_as_strided(&v, one, (int64_t[]){-1}, 1, (int64_t[]){1}, 1, NULL));
  ASSERT_ERROR_MESSAGE("Storage size calculation overflowed with sizes=[-1] and strides=[1]");
  ASSERT_TRUE(v == NULL);
  c10c_tensor *all[] = {scalar, one, zero, col};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) c10c_tensor_release(all[i]);
}

TEST(empty_refuses_a_size_product_that_overflows_before_a_zero) {
  /* torch: "Storage size calculation overflowed with sizes=[...]", though a size is 0 */
  c10c_tensor *t = NULL;
  int64_t s[3] = {BIG, BIG, 0};
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_empty(&t, s, 3, C10C_DTYPE_FLOAT32, cpu,
                                                        C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_ERROR_MESSAGE(
      "Storage size calculation overflowed with sizes=[4611686018427387904, 4611686018427387904, "
      "0]");
  /* empty_strided lays out strides itself: its numel check fails instead, as torch */
  int64_t st[3] = {1, 1, 1};
  ASSERT_STATUS(C10C_STATUS_OVERFLOW,
                c10c_tensor_empty_strided(&t, s, st, 3, C10C_DTYPE_FLOAT32, cpu));
  ASSERT_ERROR_MESSAGE("numel: integer multiplication overflow");
  ASSERT_TRUE(t == NULL);
}

/* A 4x4 float tensor 0..15, and its view sizes/strides/offset. */
static c10c_tensor *sub(c10c_tensor *base, int64_t rows, int64_t cols, int64_t offset) {
  c10c_tensor *v = NULL;
  ASSERT_OK(
      c10c_tensor_as_strided(&v, base, (int64_t[]){rows, cols}, 2, (int64_t[]){4, 1}, 2, &offset));
  return v;
}

TEST(overlapping_copies_read_the_source_whole_first_as_numpy) {
  /* t[:, 1:] = t[:, :3]: numpy gives each row shifted right by one; torch smears rows of 3
   * ([[0, 0, 0, 0], ...]) and half-shifts rows of 31 (its result depends on the vector width) */
  c10c_tensor *t = floats(16), *dst = sub(t, 4, 3, 1), *src = sub(t, 4, 3, 0);
  ASSERT_OK(c10c_tensor_copy_(dst, src));
  const float *p = c10c_tensor_data(t);
  static const float expected[16] = {0, 0, 1, 2, 4, 4, 5, 6, 8, 8, 9, 10, 12, 12, 13, 14};
  for (int i = 0; i < 16; i++) ASSERT_EQ(p[i], expected[i]);
  c10c_tensor_release(dst);
  c10c_tensor_release(src);
  /* the other direction, and between dtypes over the same bytes */
  float *w = c10c_tensor_data(t);
  for (int i = 0; i < 16; i++) w[i] = (float)i;
  dst = sub(t, 4, 3, 0), src = sub(t, 4, 3, 1);
  ASSERT_OK(c10c_tensor_copy_(dst, src));
  static const float shifted_left[16] = {1, 2, 3, 3, 5, 6, 7, 7, 9, 10, 11, 11, 13, 14, 15, 15};
  for (int i = 0; i < 16; i++) ASSERT_EQ(p[i], shifted_left[i]);
  c10c_tensor_release(dst);
  c10c_tensor_release(src);
  /* dense views of one storage that partly overlap: refused, as TensorIterator */
  c10c_tensor *a = NULL, *b = NULL;
  int64_t n = 15, unit = 1, zero = 0, one = 1;
  ASSERT_OK(c10c_tensor_as_strided(&a, t, &n, 1, &unit, 1, &one));
  ASSERT_OK(c10c_tensor_as_strided(&b, t, &n, 1, &unit, 1, &zero));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_copy_(a, b));
  c10c_tensor_release(a);
  c10c_tensor_release(b);
  c10c_tensor_release(t);
}

TEST(copies_between_storages_over_the_same_memory_read_the_source_first) {
  /* two storages over one buffer (two from_numpy of one array): not aliases to ATen */
  static float buffer[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  c10c_storage *s1 = NULL, *s2 = NULL;
  ASSERT_OK(c10c_storage_new_external(&s1, buffer, sizeof buffer, cpu, NULL, NULL));
  ASSERT_OK(c10c_storage_new_external(&s2, buffer, sizeof buffer, cpu, NULL, NULL));
  c10c_tensor *dst = NULL, *src = NULL;
  int64_t n = 7;
  ASSERT_OK(c10c_tensor_new_from_storage(&dst, s1, &n, (int64_t[]){1}, 1, 1, C10C_DTYPE_FLOAT32));
  ASSERT_OK(c10c_tensor_new_from_storage(&src, s2, &n, (int64_t[]){1}, 1, 0, C10C_DTYPE_FLOAT32));
  ASSERT_OK(c10c_tensor_copy_(dst, src));
  for (int i = 1; i < 8; i++) ASSERT_EQ(buffer[i], i - 1);
  c10c_tensor_release(dst);
  c10c_tensor_release(src);
  c10c_storage_release(s1);
  c10c_storage_release(s2);
}

TEST(fill_reads_a_value_that_lies_in_the_tensor_before_writing) {
  c10c_tensor *t = floats(8);
  float *p = c10c_tensor_data(t);
  ASSERT_OK(c10c_tensor_fill_(t, p + 5));
  for (int i = 0; i < 8; i++) ASSERT_EQ(p[i], 5);
  c10c_tensor_release(t);
}

TEST(copy_between_dtypes_over_the_same_bytes_converts_or_refuses_as_torch) {
  /* fuzz_geometry's second finding: the same-view early exit ignored the dtype, so these copies
   * did nothing. torch 2.13: f.copy_(f.view(torch.int32)) converts element by element (0.0,
   * 1065353216.0, ...); a 1-byte and an 8-byte 0-dim tensor at one address partly overlap. */
  c10c_tensor *f = floats(4), *i = NULL;
  ASSERT_OK(c10c_tensor_view_dtype(&i, f, C10C_DTYPE_INT32));
  ASSERT_OK(c10c_tensor_copy_(f, i));
  const float *p = c10c_tensor_data(f);
  ASSERT_EQ(p[0], 0);
  ASSERT_EQ(p[1], 1065353216); /* the bits of 1.0f, as a number */
  ASSERT_EQ(p[3], 1077936128);
  c10c_tensor *b = NULL, *l = NULL;
  c10c_storage *s = c10c_tensor_storage(f);
  ASSERT_OK(c10c_tensor_new_from_storage(&b, s, NULL, NULL, 0, 0, C10C_DTYPE_UINT8));
  ASSERT_OK(c10c_tensor_new_from_storage(&l, s, NULL, NULL, 0, 0, C10C_DTYPE_INT64));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_copy_(l, b));
  ASSERT_ERROR_MESSAGE(
      "unsupported operation: some elements of the input tensor and the written-to tensor refer to "
      "a single memory location. Please clone() the tensor before performing the operation.");
  c10c_tensor *all[] = {f, i, b, l};
  for (size_t k = 0; k < 4; k++) c10c_tensor_release(all[k]);
}

static int deletes;
static void count_delete(void *ctx) {
  (void)ctx;
  deletes++;
}

TEST(a_tensor_refused_over_a_storage_leaves_the_storage_to_its_owner) {
  /* fuzz_geometry's first finding: a numel overflow after the bounds check (a size 0 makes the
   * extent 0) leaked the reference the tensor had taken, so the memory was never given back */
  static char buffer[64];
  c10c_storage *s = NULL;
  c10c_tensor *t = NULL;
  ASSERT_OK(c10c_storage_new_external(&s, buffer, sizeof buffer, cpu, count_delete, buffer));
  int64_t sizes[3] = {BIG, BIG, 0}, strides[3] = {1, 1, 1};
  ASSERT_STATUS(C10C_STATUS_OVERFLOW,
                c10c_tensor_new_from_storage(&t, s, sizes, strides, 3, 0, C10C_DTYPE_FLOAT32));
  ASSERT_ERROR_MESSAGE("numel: integer multiplication overflow");
  ASSERT_TRUE(t == NULL);
  ASSERT_EQ(c10c_storage_use_count(s), 1);
  c10c_storage_release(s);
  ASSERT_EQ(deletes, 1);
}

#define T(name) \
  { #name, name }
RUN_TESTS(T(a_storage_resized_under_a_tensor_refuses_every_access),
          T(set_nbytes_shrinks_only_and_shrunk_tensors_are_refused),
          T(tensor_data_never_points_outside_the_storage), T(nbytes_saturates_instead_of_wrapping),
          T(a_view_whose_last_element_sits_at_2_64_is_refused),
          T(view_arithmetic_that_would_wrap_is_refused),
          T(negative_sizes_are_refused_even_beside_a_zero),
          T(unfold_of_a_dim_of_int64_max_into_windows_of_size_0_is_an_overflow),
          T(a_refused_unsqueeze_of_many_dims_reads_nothing_freed),
          T(empty_refuses_a_size_product_that_overflows_before_a_zero),
          T(overlapping_copies_read_the_source_whole_first_as_numpy),
          T(copies_between_storages_over_the_same_memory_read_the_source_first),
          T(fill_reads_a_value_that_lies_in_the_tensor_before_writing),
          T(a_tensor_refused_over_a_storage_leaves_the_storage_to_its_owner),
          T(copy_between_dtypes_over_the_same_bytes_converts_or_refuses_as_torch))
