/* Dtypes: c10's numbering, sizes, names, predicates, conversions and promotion errors. The full
 * promotion matrix is compared with torch.promote_types in tests/python/test_dtype.py. */
#include "harness.h"

TEST(values_sizes_and_names) {
  ASSERT_EQ(C10C_DTYPE_FLOAT32, 6);
  ASSERT_EQ(C10C_DTYPE_BFLOAT16, 15);
  ASSERT_EQ(C10C_DTYPE_FLOAT4_E2M1FN_X2, 45);
  ASSERT_EQ(C10C_DTYPE_UNDEFINED, 46);
  ASSERT_EQ(c10c_dtype_itemsize(C10C_DTYPE_COMPLEX128), 16);
  ASSERT_EQ(c10c_dtype_itemsize(C10C_DTYPE_COMPLEX32), 4);
  ASSERT_EQ(c10c_dtype_itemsize(C10C_DTYPE_UINT3), 1);
  ASSERT_EQ(c10c_dtype_itemsize(C10C_DTYPE_UNDEFINED), 0);
  ASSERT_EQ(c10c_dtype_itemsize(47), 0);
  ASSERT_EQ(c10c_dtype_itemsize(-1), 0);
  ASSERT_STR_EQ(c10c_dtype_name(C10C_DTYPE_FLOAT8_E4M3FN), "float8_e4m3fn");
  ASSERT_STR_EQ(c10c_dtype_legacy_name(C10C_DTYPE_INT64), "long");
  ASSERT_STR_EQ(c10c_dtype_legacy_name(C10C_DTYPE_UINT1), "bit");
  ASSERT_STR_EQ(c10c_dtype_legacy_name(C10C_DTYPE_BFLOAT16), "");
  ASSERT_STR_EQ(c10c_dtype_c10_name(C10C_DTYPE_COMPLEX32), "ComplexHalf");
  ASSERT_STR_EQ(c10c_dtype_c10_name(C10C_DTYPE_UNDEFINED), "Undefined");
  ASSERT_STR_EQ(c10c_dtype_c10_name(60), "UNKNOWN_SCALAR");
  ASSERT_TRUE(c10c_dtype_is_valid(C10C_DTYPE_UNDEFINED));
  ASSERT_FALSE(c10c_dtype_is_valid(C10C_DTYPE_COUNT));
}

TEST(names_of_invalid_dtypes_are_errors) {
  ASSERT_TRUE(c10c_dtype_name(C10C_DTYPE_UNDEFINED) == NULL);
  ASSERT_EQ(c10c_last_error_status(), C10C_STATUS_INVALID_ARGUMENT);
  ASSERT_TRUE(c10c_dtype_name(-2) == NULL);
  ASSERT_TRUE(c10c_dtype_legacy_name(100) == NULL);
  ASSERT_ERROR_MESSAGE("invalid dtype 100");
}

TEST(from_name_accepts_both_names) {
  c10c_dtype t;
  ASSERT_OK(c10c_dtype_from_name(&t, "float"));
  ASSERT_EQ(t, C10C_DTYPE_FLOAT32);
  ASSERT_OK(c10c_dtype_from_name(&t, "float32"));
  ASSERT_EQ(t, C10C_DTYPE_FLOAT32);
  ASSERT_OK(c10c_dtype_from_name(&t, "cdouble"));
  ASSERT_EQ(t, C10C_DTYPE_COMPLEX128);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_dtype_from_name(&t, "Float"));
  ASSERT_ERROR_MESSAGE("Unknown dtype name: Float");
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_dtype_from_name(&t, ""));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_dtype_from_name(NULL, "float"));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_dtype_from_name(&t, NULL));
}

TEST(predicates_follow_c10_sets) {
  ASSERT_TRUE(c10c_dtype_is_floating_point(C10C_DTYPE_FLOAT8_E8M0FNU));
  ASSERT_TRUE(c10c_dtype_is_floating_point(C10C_DTYPE_FLOAT4_E2M1FN_X2));
  ASSERT_FALSE(c10c_dtype_is_floating_point(C10C_DTYPE_COMPLEX64));
  ASSERT_TRUE(c10c_dtype_is_complex(C10C_DTYPE_COMPLEX32));
  ASSERT_TRUE(c10c_dtype_is_quantized(C10C_DTYPE_QUINT2X4));
  ASSERT_TRUE(c10c_dtype_is_reduced_floating_point(C10C_DTYPE_BFLOAT16));
  ASSERT_FALSE(c10c_dtype_is_reduced_floating_point(C10C_DTYPE_FLOAT32));
  ASSERT_TRUE(c10c_dtype_is_float8(C10C_DTYPE_FLOAT8_E5M2FNUZ));
  ASSERT_FALSE(c10c_dtype_is_integral(C10C_DTYPE_BOOL, false));
  ASSERT_TRUE(c10c_dtype_is_integral(C10C_DTYPE_BOOL, true));
  ASSERT_TRUE(c10c_dtype_is_integral(C10C_DTYPE_UINT64, false));
  ASSERT_FALSE(c10c_dtype_is_integral(C10C_DTYPE_UINT4, true));
  ASSERT_FALSE(c10c_dtype_is_integral(C10C_DTYPE_INT4, true));
  ASSERT_TRUE(c10c_dtype_is_bits(C10C_DTYPE_BITS16));
  ASSERT_TRUE(c10c_dtype_is_barebones_unsigned(C10C_DTYPE_UINT7));
  ASSERT_FALSE(c10c_dtype_is_barebones_unsigned(C10C_DTYPE_UINT8));
  ASSERT_FALSE(c10c_dtype_is_floating_point(99));
  ASSERT_FALSE(c10c_dtype_is_integral(-7, true));
}

TEST(is_signed_and_its_errors) {
  bool s = false;
  ASSERT_OK(c10c_dtype_is_signed(&s, C10C_DTYPE_INT4));
  ASSERT_TRUE(s);
  ASSERT_OK(c10c_dtype_is_signed(&s, C10C_DTYPE_UINT16));
  ASSERT_FALSE(s);
  ASSERT_OK(c10c_dtype_is_signed(&s, C10C_DTYPE_FLOAT8_E8M0FNU));
  ASSERT_FALSE(s);
  ASSERT_OK(c10c_dtype_is_signed(&s, C10C_DTYPE_BOOL));
  ASSERT_FALSE(s);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_dtype_is_signed(&s, C10C_DTYPE_QINT8));
  ASSERT_ERROR_MESSAGE("isSignedType not supported for quantized types");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_dtype_is_signed(&s, C10C_DTYPE_BITS8));
  ASSERT_ERROR_MESSAGE("Bits types are undefined");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_dtype_is_signed(&s, C10C_DTYPE_UNDEFINED));
  ASSERT_ERROR_MESSAGE("Unknown ScalarType UNKNOWN_SCALAR");
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_dtype_is_signed(&s, 47));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_dtype_is_signed(NULL, C10C_DTYPE_INT8));
}

TEST(promotion_examples_and_errors) {
  c10c_dtype r;
  ASSERT_OK(c10c_promote_types(&r, C10C_DTYPE_UINT8, C10C_DTYPE_INT8));
  ASSERT_EQ(r, C10C_DTYPE_INT16);
  ASSERT_OK(c10c_promote_types(&r, C10C_DTYPE_INT64, C10C_DTYPE_FLOAT16));
  ASSERT_EQ(r, C10C_DTYPE_FLOAT16);
  ASSERT_OK(c10c_promote_types(&r, C10C_DTYPE_QINT8, C10C_DTYPE_QINT8));
  ASSERT_EQ(r, C10C_DTYPE_QINT8);
  ASSERT_OK(c10c_promote_types(&r, C10C_DTYPE_UINT16, C10C_DTYPE_FLOAT64));
  ASSERT_EQ(r, C10C_DTYPE_FLOAT64);
  ASSERT_OK(c10c_promote_types(&r, C10C_DTYPE_UNDEFINED, C10C_DTYPE_QINT8));
  ASSERT_EQ(r, C10C_DTYPE_UNDEFINED);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_promote_types(&r, C10C_DTYPE_QINT8, C10C_DTYPE_BITS8));
  ASSERT_ERROR_MESSAGE(
      "promoteTypes with quantized numbers is not handled yet; figure out what the correct "
      "rules should be, offending types: QInt8 Bits8");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_promote_types(&r, C10C_DTYPE_BITS8, C10C_DTYPE_FLOAT32));
  ASSERT_ERROR_MESSAGE("Promotion from Bits8 and Float is unsupported.");
  ASSERT_STATUS(C10C_STATUS_ERROR,
                c10c_promote_types(&r, C10C_DTYPE_FLOAT8_E4M3FN, C10C_DTYPE_UINT16));
  ASSERT_ERROR_MESSAGE(
      "Promotion for Float8 Types is not supported, attempted to promote Float8_e4m3fn and "
      "UInt16");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_promote_types(&r, C10C_DTYPE_UINT16, C10C_DTYPE_INT32));
  ASSERT_ERROR_MESSAGE(
      "Promotion for uint16, uint32, uint64 types is not supported, attempted to promote UInt16 "
      "and Int");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_promote_types(&r, C10C_DTYPE_INT3, C10C_DTYPE_INT8));
  ASSERT_ERROR_MESSAGE("Promotion for Int3 and Char is not supported: no promotion rule exists");
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_promote_types(&r, 47, C10C_DTYPE_INT8));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_promote_types(&r, C10C_DTYPE_INT8, -1));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_promote_types(NULL, 0, 0));
}

TEST(promotion_table_is_symmetric) {
  for (c10c_dtype a = 0; a < C10C_DTYPE_COUNT; a++) {
    for (c10c_dtype b = 0; b < C10C_DTYPE_COUNT; b++) {
      c10c_dtype ab = -1, ba = -1;
      c10c_status s1 = c10c_promote_types(&ab, a, b), s2 = c10c_promote_types(&ba, b, a);
      ASSERT_EQ(s1, s2);
      if (s1 == C10C_STATUS_OK) ASSERT_EQ(ab, ba);
    }
  }
}

TEST(can_cast_rules) {
  ASSERT_FALSE(c10c_dtype_can_cast(C10C_DTYPE_COMPLEX64, C10C_DTYPE_FLOAT64));
  ASSERT_FALSE(c10c_dtype_can_cast(C10C_DTYPE_FLOAT32, C10C_DTYPE_INT64));
  ASSERT_FALSE(c10c_dtype_can_cast(C10C_DTYPE_INT8, C10C_DTYPE_BOOL));
  ASSERT_TRUE(c10c_dtype_can_cast(C10C_DTYPE_INT64, C10C_DTYPE_FLOAT16));
  ASSERT_TRUE(c10c_dtype_can_cast(C10C_DTYPE_BOOL, C10C_DTYPE_BOOL));
  ASSERT_FALSE(c10c_dtype_can_cast(50, C10C_DTYPE_BOOL));
}

TEST(real_complex_and_underlying_conversions) {
  c10c_dtype r;
  ASSERT_OK(c10c_dtype_to_real(&r, C10C_DTYPE_COMPLEX32));
  ASSERT_EQ(r, C10C_DTYPE_FLOAT16);
  ASSERT_OK(c10c_dtype_to_real(&r, C10C_DTYPE_QINT8));
  ASSERT_EQ(r, C10C_DTYPE_QINT8);
  ASSERT_OK(c10c_dtype_to_complex(&r, C10C_DTYPE_BFLOAT16));
  ASSERT_EQ(r, C10C_DTYPE_COMPLEX64);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_dtype_to_complex(&r, C10C_DTYPE_INT32));
  ASSERT_ERROR_MESSAGE("Unknown Complex ScalarType for Int");
  ASSERT_OK(c10c_dtype_to_underlying(&r, C10C_DTYPE_QUINT4X2));
  ASSERT_EQ(r, C10C_DTYPE_UINT8);
  ASSERT_OK(c10c_dtype_to_underlying(&r, C10C_DTYPE_QINT32));
  ASSERT_EQ(r, C10C_DTYPE_INT32);
  ASSERT_OK(c10c_dtype_to_underlying(&r, C10C_DTYPE_FLOAT32));
  ASSERT_EQ(r, C10C_DTYPE_FLOAT32);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_dtype_to_real(&r, 47));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_dtype_to_complex(&r, 47));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_dtype_to_underlying(&r, 47));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_dtype_to_real(NULL, 0));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_dtype_to_complex(NULL, 0));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_dtype_to_underlying(NULL, 0));
}

RUN_TESTS(T(values_sizes_and_names), T(names_of_invalid_dtypes_are_errors),
          T(from_name_accepts_both_names), T(predicates_follow_c10_sets),
          T(is_signed_and_its_errors), T(promotion_examples_and_errors),
          T(promotion_table_is_symmetric), T(can_cast_rules),
          T(real_complex_and_underlying_conversions))
