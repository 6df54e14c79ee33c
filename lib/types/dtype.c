/* Dtypes (c10's ScalarType): the table of names and sizes, c10's predicates, conversions, and
 * type promotion with c10's rules and order (c10/core/ScalarType.h, ScalarType.cpp).
 */
#include <string.h>

#include "internal.h"

typedef struct dtype_info {
  const char *name;        /* torch name */
  const char *legacy_name; /* torch alias or "" */
  const char *c10_name;    /* c10's toString */
  uint8_t itemsize;
} dtype_info;

/* Indexed by c10c_dtype value; Undefined (46) is handled apart since torch has no dtype for it. */
static const dtype_info infos[C10C_DTYPE_UNDEFINED] = {
    {"uint8", "", "Byte", 1},
    {"int8", "", "Char", 1},
    {"int16", "short", "Short", 2},
    {"int32", "int", "Int", 4},
    {"int64", "long", "Long", 8},
    {"float16", "half", "Half", 2},
    {"float32", "float", "Float", 4},
    {"float64", "double", "Double", 8},
    {"complex32", "chalf", "ComplexHalf", 4},
    {"complex64", "cfloat", "ComplexFloat", 8},
    {"complex128", "cdouble", "ComplexDouble", 16},
    {"bool", "", "Bool", 1},
    {"qint8", "", "QInt8", 1},
    {"quint8", "", "QUInt8", 1},
    {"qint32", "", "QInt32", 4},
    {"bfloat16", "", "BFloat16", 2},
    {"quint4x2", "", "QUInt4x2", 1},
    {"quint2x4", "", "QUInt2x4", 1},
    {"bits1x8", "", "Bits1x8", 1},
    {"bits2x4", "", "Bits2x4", 1},
    {"bits4x2", "", "Bits4x2", 1},
    {"bits8", "", "Bits8", 1},
    {"bits16", "", "Bits16", 2},
    {"float8_e5m2", "", "Float8_e5m2", 1},
    {"float8_e4m3fn", "", "Float8_e4m3fn", 1},
    {"float8_e5m2fnuz", "", "Float8_e5m2fnuz", 1},
    {"float8_e4m3fnuz", "", "Float8_e4m3fnuz", 1},
    {"uint16", "", "UInt16", 2},
    {"uint32", "", "UInt32", 4},
    {"uint64", "", "UInt64", 8},
    {"uint1", "bit", "UInt1", 1},
    {"uint2", "", "UInt2", 1},
    {"uint3", "", "UInt3", 1},
    {"uint4", "", "UInt4", 1},
    {"uint5", "", "UInt5", 1},
    {"uint6", "", "UInt6", 1},
    {"uint7", "", "UInt7", 1},
    {"int1", "", "Int1", 1},
    {"int2", "", "Int2", 1},
    {"int3", "", "Int3", 1},
    {"int4", "", "Int4", 1},
    {"int5", "", "Int5", 1},
    {"int6", "", "Int6", 1},
    {"int7", "", "Int7", 1},
    {"float8_e8m0fnu", "", "Float8_e8m0fnu", 1},
    {"float4_e2m1fn_x2", "", "Float4_e2m1fn_x2", 1},
};

_Static_assert(sizeof infos / sizeof infos[0] == C10C_DTYPE_UNDEFINED, "one row per dtype");

bool c10c_dtype_is_valid(c10c_dtype t) { return t >= 0 && t < C10C_DTYPE_COUNT; }

static bool is_named(c10c_dtype t) { return t >= 0 && t < C10C_DTYPE_UNDEFINED; }

static c10c_status invalid_dtype(c10c_dtype t) {
  return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "invalid dtype %d", (int)t);
}

size_t c10c_dtype_itemsize(c10c_dtype t) { return is_named(t) ? infos[t].itemsize : 0; }

const char *c10c_dtype_name(c10c_dtype t) {
  if (!is_named(t)) {
    invalid_dtype(t);
    return NULL;
  }
  return infos[t].name;
}

const char *c10c_dtype_legacy_name(c10c_dtype t) {
  if (!is_named(t)) {
    invalid_dtype(t);
    return NULL;
  }
  return infos[t].legacy_name;
}

const char *c10c_dtype_c10_name(c10c_dtype t) {
  if (t == C10C_DTYPE_UNDEFINED) return "Undefined";
  return is_named(t) ? infos[t].c10_name : "UNKNOWN_SCALAR";
}

c10c_status c10c_dtype_from_name(c10c_dtype *out, const char *name) {
  C10C__CHECK_NOT_NULL(out);
  C10C__CHECK_NOT_NULL(name);
  for (c10c_dtype t = 0; t < C10C_DTYPE_UNDEFINED; t++) {
    if (strcmp(infos[t].name, name) == 0 ||
        (infos[t].legacy_name[0] != '\0' && strcmp(infos[t].legacy_name, name) == 0)) {
      *out = t;
      return C10C_STATUS_OK;
    }
  }
  return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "Unknown dtype name: %s", name);
}

bool c10c_dtype_is_float8(c10c_dtype t) {
  return t == C10C_DTYPE_FLOAT8_E5M2 || t == C10C_DTYPE_FLOAT8_E4M3FN ||
         t == C10C_DTYPE_FLOAT8_E5M2FNUZ || t == C10C_DTYPE_FLOAT8_E4M3FNUZ ||
         t == C10C_DTYPE_FLOAT8_E8M0FNU;
}

bool c10c_dtype_is_reduced_floating_point(c10c_dtype t) {
  return t == C10C_DTYPE_FLOAT16 || t == C10C_DTYPE_BFLOAT16 || c10c_dtype_is_float8(t) ||
         t == C10C_DTYPE_FLOAT4_E2M1FN_X2;
}

bool c10c_dtype_is_floating_point(c10c_dtype t) {
  return t == C10C_DTYPE_FLOAT32 || t == C10C_DTYPE_FLOAT64 ||
         c10c_dtype_is_reduced_floating_point(t);
}

bool c10c_dtype_is_complex(c10c_dtype t) {
  return t == C10C_DTYPE_COMPLEX32 || t == C10C_DTYPE_COMPLEX64 || t == C10C_DTYPE_COMPLEX128;
}

bool c10c_dtype_is_quantized(c10c_dtype t) {
  return t == C10C_DTYPE_QINT8 || t == C10C_DTYPE_QUINT8 || t == C10C_DTYPE_QINT32 ||
         t == C10C_DTYPE_QUINT4X2 || t == C10C_DTYPE_QUINT2X4;
}

bool c10c_dtype_is_integral(c10c_dtype t, bool include_bool) {
  switch (t) {
    case C10C_DTYPE_UINT8:
    case C10C_DTYPE_INT8:
    case C10C_DTYPE_INT16:
    case C10C_DTYPE_INT32:
    case C10C_DTYPE_INT64:
    case C10C_DTYPE_UINT16:
    case C10C_DTYPE_UINT32:
    case C10C_DTYPE_UINT64: return true;
    case C10C_DTYPE_BOOL: return include_bool;
    default: return false;
  }
}

bool c10c_dtype_is_bits(c10c_dtype t) { return t >= C10C_DTYPE_BITS1X8 && t <= C10C_DTYPE_BITS16; }

bool c10c_dtype_is_barebones_unsigned(c10c_dtype t) {
  return (t >= C10C_DTYPE_UINT1 && t <= C10C_DTYPE_UINT7) || t == C10C_DTYPE_UINT16 ||
         t == C10C_DTYPE_UINT32 || t == C10C_DTYPE_UINT64;
}

c10c_status c10c_dtype_is_signed(bool *out, c10c_dtype t) {
  C10C__CHECK_NOT_NULL(out);
  if (!c10c_dtype_is_valid(t)) return invalid_dtype(t);
  if (c10c_dtype_is_quantized(t))
    return c10c__fail(C10C_STATUS_ERROR, "isSignedType not supported for quantized types");
  if (c10c_dtype_is_bits(t)) return c10c__fail(C10C_STATUS_ERROR, "Bits types are undefined");
  if (t == C10C_DTYPE_UNDEFINED)
    return c10c__fail(C10C_STATUS_ERROR, "Unknown ScalarType UNKNOWN_SCALAR");
  /* c10 answers with std::numeric_limits of the element type: unsigned integers, bool and the
   * exponent-only float8_e8m0fnu are unsigned. */
  *out = !(t == C10C_DTYPE_UINT8 || t == C10C_DTYPE_BOOL || t == C10C_DTYPE_FLOAT8_E8M0FNU ||
           c10c_dtype_is_barebones_unsigned(t));
  return C10C_STATUS_OK;
}

/* The 13 types of c10's promotion table, in its order, and the table itself (symmetric). */
enum {
  u1 = C10C_DTYPE_UINT8,
  i1 = C10C_DTYPE_INT8,
  i2 = C10C_DTYPE_INT16,
  i4 = C10C_DTYPE_INT32,
  i8 = C10C_DTYPE_INT64,
  f2 = C10C_DTYPE_FLOAT16,
  f4 = C10C_DTYPE_FLOAT32,
  f8 = C10C_DTYPE_FLOAT64,
  c2 = C10C_DTYPE_COMPLEX32,
  c4 = C10C_DTYPE_COMPLEX64,
  c8 = C10C_DTYPE_COMPLEX128,
  b1 = C10C_DTYPE_BOOL,
  bf = C10C_DTYPE_BFLOAT16
};

static int promotion_index(c10c_dtype t) {
  switch (t) {
    case C10C_DTYPE_UINT8: return 0;
    case C10C_DTYPE_INT8: return 1;
    case C10C_DTYPE_INT16: return 2;
    case C10C_DTYPE_INT32: return 3;
    case C10C_DTYPE_INT64: return 4;
    case C10C_DTYPE_FLOAT16: return 5;
    case C10C_DTYPE_FLOAT32: return 6;
    case C10C_DTYPE_FLOAT64: return 7;
    case C10C_DTYPE_COMPLEX32: return 8;
    case C10C_DTYPE_COMPLEX64: return 9;
    case C10C_DTYPE_COMPLEX128: return 10;
    case C10C_DTYPE_BOOL: return 11;
    case C10C_DTYPE_BFLOAT16: return 12;
    default: return -1;
  }
}

static const int8_t promotion_table[13][13] = {
    /*        u1  i1  i2  i4  i8  f2  f4  f8  c2  c4  c8  b1  bf */
    /* u1 */ {u1, i2, i2, i4, i8, f2, f4, f8, c2, c4, c8, u1, bf},
    /* i1 */ {i2, i1, i2, i4, i8, f2, f4, f8, c2, c4, c8, i1, bf},
    /* i2 */ {i2, i2, i2, i4, i8, f2, f4, f8, c2, c4, c8, i2, bf},
    /* i4 */ {i4, i4, i4, i4, i8, f2, f4, f8, c2, c4, c8, i4, bf},
    /* i8 */ {i8, i8, i8, i8, i8, f2, f4, f8, c2, c4, c8, i8, bf},
    /* f2 */ {f2, f2, f2, f2, f2, f2, f4, f8, c2, c4, c8, f2, f4},
    /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f8, c4, c4, c8, f4, f4},
    /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, c8, c8, c8, f8, f8},
    /* c2 */ {c2, c2, c2, c2, c2, c2, c4, c8, c2, c4, c8, c2, c4},
    /* c4 */ {c4, c4, c4, c4, c4, c4, c4, c8, c4, c4, c8, c4, c4},
    /* c8 */ {c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8},
    /* b1 */ {u1, i1, i2, i4, i8, f2, f4, f8, c2, c4, c8, b1, bf},
    /* bf */ {bf, bf, bf, bf, bf, f4, f4, f8, c4, c4, c8, bf, bf},
};

/* The error for a pair c10 refuses to promote; names are looked up only on this path. */
static c10c_status promotion_error(c10c_dtype a, c10c_dtype b) {
  const char *na = c10c_dtype_c10_name(a), *nb = c10c_dtype_c10_name(b);
  if (c10c_dtype_is_quantized(a) || c10c_dtype_is_quantized(b))
    return c10c__fail(C10C_STATUS_ERROR,
                      "promoteTypes with quantized numbers is not handled yet; figure out what "
                      "the correct rules should be, offending types: %s %s",
                      na, nb);
  /* c10 returns Undefined here; torch's Python layer turns that into this error. */
  if (c10c_dtype_is_bits(a) || c10c_dtype_is_bits(b))
    return c10c__fail(C10C_STATUS_ERROR, "Promotion from %s and %s is unsupported.", na, nb);
  if (c10c_dtype_is_float8(a) || c10c_dtype_is_float8(b))
    return c10c__fail(C10C_STATUS_ERROR,
                      "Promotion for Float8 Types is not supported, attempted to promote %s and "
                      "%s",
                      na, nb);
  if (c10c_dtype_is_barebones_unsigned(a) || c10c_dtype_is_barebones_unsigned(b))
    return c10c__fail(C10C_STATUS_ERROR,
                      "Promotion for uint16, uint32, uint64 types is not supported, attempted "
                      "to promote %s and %s",
                      na, nb);
  /* int1..7 and float4_e2m1fn_x2: c10 fails an internal assert (ix_a != -1). */
  return c10c__fail(C10C_STATUS_ERROR,
                    "Promotion for %s and %s is not supported: no promotion rule exists", na, nb);
}

c10c_status c10c_promote_types(c10c_dtype *out, c10c_dtype a, c10c_dtype b) {
  C10C__CHECK_NOT_NULL(out);
  if (!c10c_dtype_is_valid(a)) return invalid_dtype(a);
  if (!c10c_dtype_is_valid(b)) return invalid_dtype(b);
  if (a == C10C_DTYPE_UNDEFINED || b == C10C_DTYPE_UNDEFINED) {
    *out = C10C_DTYPE_UNDEFINED;
    return C10C_STATUS_OK;
  }
  if (a == b) {
    *out = a;
    return C10C_STATUS_OK;
  }
  /* c10's order: quantized, bits and float8 pairs fail; an unsigned type promotes only with a
   * floating type; the rest use the table. */
  int ia = promotion_index(a), ib = promotion_index(b);
  if (ia < 0 || ib < 0) {
    bool special = c10c_dtype_is_quantized(a) || c10c_dtype_is_quantized(b) ||
                   c10c_dtype_is_bits(a) || c10c_dtype_is_bits(b) || c10c_dtype_is_float8(a) ||
                   c10c_dtype_is_float8(b);
    if (!special && (c10c_dtype_is_barebones_unsigned(a) || c10c_dtype_is_barebones_unsigned(b))) {
      if (c10c_dtype_is_floating_point(a)) {
        *out = a;
        return C10C_STATUS_OK;
      }
      if (c10c_dtype_is_floating_point(b)) {
        *out = b;
        return C10C_STATUS_OK;
      }
    }
    return promotion_error(a, b);
  }
  *out = promotion_table[ia][ib];
  return C10C_STATUS_OK;
}

bool c10c_dtype_can_cast(c10c_dtype from, c10c_dtype to) {
  if (!c10c_dtype_is_valid(from) || !c10c_dtype_is_valid(to)) return false;
  if (c10c_dtype_is_complex(from) && !c10c_dtype_is_complex(to)) return false;
  if (c10c_dtype_is_floating_point(from) && c10c_dtype_is_integral(to, false)) return false;
  if (from != C10C_DTYPE_BOOL && to == C10C_DTYPE_BOOL) return false;
  return true;
}

c10c_status c10c_dtype_to_real(c10c_dtype *out, c10c_dtype t) {
  C10C__CHECK_NOT_NULL(out);
  if (!c10c_dtype_is_valid(t)) return invalid_dtype(t);
  switch (t) {
    case C10C_DTYPE_COMPLEX32: *out = C10C_DTYPE_FLOAT16; break;
    case C10C_DTYPE_COMPLEX64: *out = C10C_DTYPE_FLOAT32; break;
    case C10C_DTYPE_COMPLEX128: *out = C10C_DTYPE_FLOAT64; break;
    default: *out = t; break;
  }
  return C10C_STATUS_OK;
}

c10c_status c10c_dtype_to_complex(c10c_dtype *out, c10c_dtype t) {
  C10C__CHECK_NOT_NULL(out);
  if (!c10c_dtype_is_valid(t)) return invalid_dtype(t);
  switch (t) {
    case C10C_DTYPE_FLOAT16:
    case C10C_DTYPE_COMPLEX32: *out = C10C_DTYPE_COMPLEX32; break;
    case C10C_DTYPE_BFLOAT16:
    case C10C_DTYPE_FLOAT32:
    case C10C_DTYPE_COMPLEX64: *out = C10C_DTYPE_COMPLEX64; break;
    case C10C_DTYPE_FLOAT64:
    case C10C_DTYPE_COMPLEX128: *out = C10C_DTYPE_COMPLEX128; break;
    default:
      return c10c__fail(C10C_STATUS_ERROR, "Unknown Complex ScalarType for %s",
                        c10c_dtype_c10_name(t));
  }
  return C10C_STATUS_OK;
}

c10c_status c10c_dtype_to_underlying(c10c_dtype *out, c10c_dtype t) {
  C10C__CHECK_NOT_NULL(out);
  if (!c10c_dtype_is_valid(t)) return invalid_dtype(t);
  switch (t) {
    case C10C_DTYPE_QUINT8:
    case C10C_DTYPE_QUINT4X2:
    case C10C_DTYPE_QUINT2X4: *out = C10C_DTYPE_UINT8; break;
    case C10C_DTYPE_QINT8: *out = C10C_DTYPE_INT8; break;
    case C10C_DTYPE_QINT32: *out = C10C_DTYPE_INT32; break;
    default: *out = t; break;
  }
  return C10C_STATUS_OK;
}
