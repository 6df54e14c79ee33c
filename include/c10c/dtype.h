/* libc10c: dtypes (c10's ScalarType): numeric values, item sizes, names, predicates, promotion.
 *
 * A dtype is an 8-bit integer whose value equals torch 2.13's c10::ScalarType, frozen for every
 * 1.x (a later PyTorch that renumbers is met by name: c10c_dtype_from_name), so it can be
 * exchanged with PyTorch 2.13 as a number. Names are torch's ("float32", legacy "float"); c10's
 * own names ("Float") appear in error messages, as in PyTorch.
 */
#ifndef C10C_DTYPE_H
#define C10C_DTYPE_H

#include "common.h"

C10C_BEGIN_DECLS

typedef int8_t c10c_dtype;
/* Values: c10 ScalarType name, torch name (legacy torch alias). */
enum c10c_dtype_value {
  C10C_DTYPE_UINT8 = 0,             /* Byte, torch.uint8, 1 byte */
  C10C_DTYPE_INT8 = 1,              /* Char, torch.int8, 1 byte */
  C10C_DTYPE_INT16 = 2,             /* Short, torch.int16 (torch.short), 2 bytes */
  C10C_DTYPE_INT32 = 3,             /* Int, torch.int32 (torch.int), 4 bytes */
  C10C_DTYPE_INT64 = 4,             /* Long, torch.int64 (torch.long), 8 bytes */
  C10C_DTYPE_FLOAT16 = 5,           /* Half, torch.float16 (torch.half), 2 bytes */
  C10C_DTYPE_FLOAT32 = 6,           /* Float, torch.float32 (torch.float), 4 bytes */
  C10C_DTYPE_FLOAT64 = 7,           /* Double, torch.float64 (torch.double), 8 bytes */
  C10C_DTYPE_COMPLEX32 = 8,         /* ComplexHalf, torch.complex32 (torch.chalf), 4 bytes */
  C10C_DTYPE_COMPLEX64 = 9,         /* ComplexFloat, torch.complex64 (torch.cfloat), 8 bytes */
  C10C_DTYPE_COMPLEX128 = 10,       /* ComplexDouble, torch.complex128 (torch.cdouble), 16 bytes */
  C10C_DTYPE_BOOL = 11,             /* Bool, torch.bool, 1 byte */
  C10C_DTYPE_QINT8 = 12,            /* QInt8, torch.qint8, 1 byte */
  C10C_DTYPE_QUINT8 = 13,           /* QUInt8, torch.quint8, 1 byte */
  C10C_DTYPE_QINT32 = 14,           /* QInt32, torch.qint32, 4 bytes */
  C10C_DTYPE_BFLOAT16 = 15,         /* BFloat16, torch.bfloat16, 2 bytes */
  C10C_DTYPE_QUINT4X2 = 16,         /* QUInt4x2, torch.quint4x2, 1 byte */
  C10C_DTYPE_QUINT2X4 = 17,         /* QUInt2x4, torch.quint2x4, 1 byte */
  C10C_DTYPE_BITS1X8 = 18,          /* Bits1x8, torch.bits1x8, 1 byte */
  C10C_DTYPE_BITS2X4 = 19,          /* Bits2x4, torch.bits2x4, 1 byte */
  C10C_DTYPE_BITS4X2 = 20,          /* Bits4x2, torch.bits4x2, 1 byte */
  C10C_DTYPE_BITS8 = 21,            /* Bits8, torch.bits8, 1 byte */
  C10C_DTYPE_BITS16 = 22,           /* Bits16, torch.bits16, 2 bytes */
  C10C_DTYPE_FLOAT8_E5M2 = 23,      /* Float8_e5m2, torch.float8_e5m2, 1 byte */
  C10C_DTYPE_FLOAT8_E4M3FN = 24,    /* Float8_e4m3fn, torch.float8_e4m3fn, 1 byte */
  C10C_DTYPE_FLOAT8_E5M2FNUZ = 25,  /* Float8_e5m2fnuz, torch.float8_e5m2fnuz, 1 byte */
  C10C_DTYPE_FLOAT8_E4M3FNUZ = 26,  /* Float8_e4m3fnuz, torch.float8_e4m3fnuz, 1 byte */
  C10C_DTYPE_UINT16 = 27,           /* UInt16, torch.uint16, 2 bytes */
  C10C_DTYPE_UINT32 = 28,           /* UInt32, torch.uint32, 4 bytes */
  C10C_DTYPE_UINT64 = 29,           /* UInt64, torch.uint64, 8 bytes */
  C10C_DTYPE_UINT1 = 30,            /* UInt1, torch.uint1 (torch.bit), 1 byte */
  C10C_DTYPE_UINT2 = 31,            /* UInt2, torch.uint2, 1 byte */
  C10C_DTYPE_UINT3 = 32,            /* UInt3, torch.uint3, 1 byte */
  C10C_DTYPE_UINT4 = 33,            /* UInt4, torch.uint4, 1 byte */
  C10C_DTYPE_UINT5 = 34,            /* UInt5, torch.uint5, 1 byte */
  C10C_DTYPE_UINT6 = 35,            /* UInt6, torch.uint6, 1 byte */
  C10C_DTYPE_UINT7 = 36,            /* UInt7, torch.uint7, 1 byte */
  C10C_DTYPE_INT1 = 37,             /* Int1, torch.int1, 1 byte */
  C10C_DTYPE_INT2 = 38,             /* Int2, torch.int2, 1 byte */
  C10C_DTYPE_INT3 = 39,             /* Int3, torch.int3, 1 byte */
  C10C_DTYPE_INT4 = 40,             /* Int4, torch.int4, 1 byte */
  C10C_DTYPE_INT5 = 41,             /* Int5, torch.int5, 1 byte */
  C10C_DTYPE_INT6 = 42,             /* Int6, torch.int6, 1 byte */
  C10C_DTYPE_INT7 = 43,             /* Int7, torch.int7, 1 byte */
  C10C_DTYPE_FLOAT8_E8M0FNU = 44,   /* Float8_e8m0fnu, torch.float8_e8m0fnu, 1 byte */
  C10C_DTYPE_FLOAT4_E2M1FN_X2 = 45, /* Float4_e2m1fn_x2, torch.float4_e2m1fn_x2, 1 byte */
  C10C_DTYPE_UNDEFINED = 46,        /* Undefined: "no dtype"; item size 0 */
  C10C_DTYPE_COUNT = 47             /* c10's NumOptions */
};

/* Whether t is 0..46 (Undefined included). Errors: none. */
C10C_API bool c10c_dtype_is_valid(c10c_dtype t);

/* Bytes per element (c10's TypeMeta::itemsize): 0 for Undefined and for invalid values.
 * Sub-byte types (uint1..7, int1..7) and float4_e2m1fn_x2 occupy 1 byte, as in c10.
 * Errors: none. */
C10C_API size_t c10c_dtype_itemsize(c10c_dtype t);

/* torch's name without the "torch." prefix: "float32", "int64", "float8_e4m3fn".
 * Ownership: static string. Errors: NULL and C10C_STATUS_INVALID_ARGUMENT for Undefined or an
 * invalid value. */
C10C_API const char *c10c_dtype_name(c10c_dtype t);

/* torch's legacy alias ("float" for float32, "long" for int64, "bit" for uint1), or "" when the
 * dtype has none. Ownership: static string. Errors: NULL and C10C_STATUS_INVALID_ARGUMENT as
 * c10c_dtype_name. */
C10C_API const char *c10c_dtype_legacy_name(c10c_dtype t);

/* c10's toString(ScalarType): "Float", "ComplexHalf", "Undefined"; "UNKNOWN_SCALAR" for an
 * invalid value. Ownership: static string. Errors: none. */
C10C_API const char *c10c_dtype_c10_name(c10c_dtype t);

/* Looks a dtype up by torch name or legacy alias ("float32" or "float"), as c10's
 * getStringToDtypeMap. Errors: C10C_STATUS_NULL_POINTER, C10C_STATUS_INVALID_ARGUMENT
 * "Unknown dtype name: <name>". */
C10C_API c10c_status c10c_dtype_from_name(c10c_dtype *out, const char *name);

/* Predicates with c10's exact sets; all false for invalid values. Errors: none.
 * floating_point: float16/32/64, bfloat16, all float8, float4_e2m1fn_x2 (isFloatingType).
 * complex: complex32/64/128. quantized: qint8, quint8, qint32, quint4x2, quint2x4 (isQIntType).
 * reduced_floating_point: float16, bfloat16, float8, float4 (isReducedFloatingType).
 * integral: uint8, int8/16/32/64, uint16/32/64, plus bool when include_bool (isIntegralType;
 * uint1..7 and int1..7 are not integral in c10). bits: bits1x8 ... bits16.
 * barebones_unsigned: uint1..7, uint16/32/64 (isBarebonesUnsignedType). */
C10C_API bool c10c_dtype_is_floating_point(c10c_dtype t);
C10C_API bool c10c_dtype_is_complex(c10c_dtype t);
C10C_API bool c10c_dtype_is_quantized(c10c_dtype t);
C10C_API bool c10c_dtype_is_reduced_floating_point(c10c_dtype t);
C10C_API bool c10c_dtype_is_float8(c10c_dtype t);
C10C_API bool c10c_dtype_is_integral(c10c_dtype t, bool include_bool);
C10C_API bool c10c_dtype_is_bits(c10c_dtype t);
C10C_API bool c10c_dtype_is_barebones_unsigned(c10c_dtype t);

/* c10's isSignedType (torch.dtype.is_signed).
 * Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_ERROR "isSignedType not supported for quantized
 * types", "Bits types are undefined", "Unknown ScalarType UNKNOWN_SCALAR" (Undefined);
 * C10C_STATUS_INVALID_ARGUMENT for an invalid value. */
C10C_API c10c_status c10c_dtype_is_signed(bool *out, c10c_dtype t);

/* torch.promote_types(a, b), with c10's rules in c10's order (equal types first, then quantized,
 * bits, float8 and unsigned errors, then the 13x13 table).
 * Errors (C10C_STATUS_ERROR, torch's messages): "promoteTypes with quantized numbers is not
 * handled yet; ...", "Promotion from Bits8 and Float is unsupported." (c10 returns Undefined
 * here and torch's Python layer raises this), "Promotion for Float8 Types is not supported, ...",
 * "Promotion for uint16, uint32, uint64 types is not supported, ...", and "Promotion for <a> and
 * <b> is not supported: no promotion rule exists" for int1..7 / float4_e2m1fn_x2 with another
 * type (where torch fails an internal assert). Undefined with anything gives Undefined.
 * C10C_STATUS_NULL_POINTER, C10C_STATUS_INVALID_ARGUMENT for invalid values. */
C10C_API c10c_status c10c_promote_types(c10c_dtype *out, c10c_dtype a, c10c_dtype b);

/* c10's canCast(from, to) (torch.can_cast): complex to non-complex, floating to integral, and
 * non-bool to bool are refused. False for invalid values. Errors: none. */
C10C_API bool c10c_dtype_can_cast(c10c_dtype from, c10c_dtype to);

/* torch.dtype.to_real(): complex32/64/128 to float16/32/64, anything else to itself.
 * Errors: C10C_STATUS_NULL_POINTER, C10C_STATUS_INVALID_ARGUMENT. */
C10C_API c10c_status c10c_dtype_to_real(c10c_dtype *out, c10c_dtype t);

/* torch.dtype.to_complex(): float16 -> complex32, bfloat16 and float32 -> complex64, float64 ->
 * complex128, complex types to themselves.
 * Errors: C10C_STATUS_ERROR "Unknown Complex ScalarType for <T>", C10C_STATUS_NULL_POINTER,
 * C10C_STATUS_INVALID_ARGUMENT. */
C10C_API c10c_status c10c_dtype_to_complex(c10c_dtype *out, c10c_dtype t);

/* c10's toUnderlying: quint8/quint4x2/quint2x4 -> uint8, qint8 -> int8, qint32 -> int32, others
 * unchanged. Errors: C10C_STATUS_NULL_POINTER, C10C_STATUS_INVALID_ARGUMENT. */
C10C_API c10c_status c10c_dtype_to_underlying(c10c_dtype *out, c10c_dtype t);

C10C_END_DECLS

#endif /* C10C_DTYPE_H */
