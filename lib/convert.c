/* Element conversions between dtypes, as c10's static_cast_with_inter_type (c10/util/TypeCast.h)
 * and its Half, BFloat16 and Float8 types convert:
 * - to bool: non-zero (NaN is non-zero; a complex value when either part is);
 * - between integers: two's complement truncation;
 * - integers to floating types: rounded to nearest even, once (Half and BFloat16 through float,
 *   as c10's constructors take a float, so twice for them);
 * - floating to floating: rounded to nearest even (double to Half through float, as c10);
 * - floating to integers: truncation toward zero. C++ leaves NaN and out-of-range values
 *   undefined and torch's results depend on the CPU's vector unit; here they are what x86's
 *   scalar conversions give: int8, int16, uint8 and uint16 through int32, uint32 through int64,
 *   the int32/int64 of NaN or an out-of-range value being the most negative one (uint8 through
 *   int64 as c10's specialization says, which gives the same result in range);
 * - complex to real: the real part (torch also warns); real to complex: imaginary part 0.
 * Float8 formats: e4m3fn (saturating, as torch 2.13's copies) and e5m2 (c10's conversions).
 * Other dtypes (quantized, bits, sub-byte, fnuz and e8m0 Float8, Float4) are not converted. */
#include "convert.h"

#include <math.h>
#include <string.h>

/* A loaded element: an integer (signed or not), or a real or complex double. */
typedef enum { K_INT, K_UINT, K_REAL, K_COMPLEX } kind;

typedef struct value {
  kind k;
  int64_t i;
  uint64_t u;
  double re, im;
} value;

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float f32_from(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* ---- IEEE half (c10's fp16_ieee_from_fp32_value / fp16_ieee_to_fp32_value) ---- */

static uint16_t half_from_float(float f) {
  const float scale_to_inf = f32_from(UINT32_C(239) << 23);
  const float scale_to_zero = f32_from(UINT32_C(17) << 23);
  float base = fabsf(f) * scale_to_inf;
  base = base * scale_to_zero;
  const uint32_t w = f32_bits(f);
  const uint32_t shl1_w = w + w;
  const uint32_t sign = w & UINT32_C(0x80000000);
  uint32_t bias = shl1_w & UINT32_C(0xFF000000);
  if (bias < UINT32_C(0x71000000)) bias = UINT32_C(0x71000000);
  base = f32_from((bias >> 1) + UINT32_C(0x07800000)) + base;
  const uint32_t bits = f32_bits(base);
  const uint32_t exp_bits = (bits >> 13) & UINT32_C(0x00007C00);
  const uint32_t mantissa_bits = bits & UINT32_C(0x00000FFF);
  const uint32_t nonsign = exp_bits + mantissa_bits;
  return (uint16_t)((sign >> 16) | (shl1_w > UINT32_C(0xFF000000) ? UINT32_C(0x7E00) : nonsign));
}

static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  if (exp == 0x1F) return f32_from(sign | UINT32_C(0x7F800000) | (mant << 13)); /* inf, NaN */
  if (exp != 0) return f32_from(sign | ((exp + 112) << 23) | (mant << 13));
  float magnitude = (float)mant * 0x1p-24f; /* subnormal (or zero): exact */
  return sign ? -magnitude : magnitude;
}

/* ---- bfloat16 (c10's round_to_nearest_even) ---- */

static uint16_t bf16_from_float(float f) {
  if (isnan(f)) return UINT16_C(0x7FC0);
  uint32_t u = f32_bits(f);
  return (uint16_t)((u + ((u >> 16) & 1) + UINT32_C(0x7FFF)) >> 16);
}

static float bf16_to_float(uint16_t b) { return f32_from((uint32_t)b << 16); }

/* ---- Float8 ---- */

/* c10's rounding of a finite, sign-less fp32 pattern to an fp8 format with mbits mantissa bits,
 * exponent bias `bias`, smallest normal exponent field min_normal (in fp32's bias) and the
 * denormal magic number's exponent field denorm: subnormals rounded by the FPU's addition,
 * normals to nearest even by integer arithmetic. */
static uint8_t fp8_round(uint32_t bits, int mbits, int bias, uint32_t min_normal, uint32_t denorm) {
  const int shift = 23 - mbits;
  if (bits < (min_normal << 23)) {
    const uint32_t denorm_mask = denorm << 23;
    return (uint8_t)(f32_bits(f32_from(bits) + f32_from(denorm_mask)) - denorm_mask);
  }
  uint32_t mant_odd = (bits >> shift) & 1;
  bits += ((uint32_t)(bias - 127) << 23) + ((UINT32_C(1) << (shift - 1)) - 1) + mant_odd;
  return (uint8_t)(bits >> shift);
}

/* c10's fp8e4m3fn_from_fp32_value, saturated as torch 2.13's copies are: the format has no
 * infinities, and what would round to its NaN pattern (0x7F: 464 and above, infinities) becomes
 * the largest finite value, 448, with its sign; NaN stays NaN. */
static uint8_t e4m3fn_from_float(float f) {
  uint32_t bits = f32_bits(f);
  const uint32_t sign = bits & UINT32_C(0x80000000);
  bits ^= sign;
  uint8_t result = bits >= (UINT32_C(1087) << 20) ? 0x7F : fp8_round(bits, 3, 7, 121, 141);
  if (result == 0x7F && !isnan(f)) result = 0x7E; /* saturate */
  return (uint8_t)(result | (sign >> 24));
}

static float e4m3fn_to_float(uint8_t v) {
  uint32_t exp = (v >> 3) & 0xF, mant = v & 7;
  float magnitude;
  if (exp == 0xF && mant == 7)
    magnitude = NAN;
  else if (exp == 0)
    magnitude = (float)mant * 0x1p-9f;
  else
    magnitude = f32_from(((exp + 120) << 23) | (mant << 20));
  return (v & 0x80) ? -magnitude : magnitude;
}

/* c10's fp8e5m2_from_fp32_value: as Half's top byte, rounded to nearest even; overflow to
 * infinity. */
static uint8_t e5m2_from_float(float f) {
  uint32_t bits = f32_bits(f);
  const uint32_t sign = bits & UINT32_C(0x80000000);
  bits ^= sign;
  uint8_t result;
  if (bits >= (UINT32_C(143) << 23))
    result = bits > (UINT32_C(255) << 23) ? UINT8_C(0x7F) : UINT8_C(0x7C);
  else
    result = fp8_round(bits, 2, 15, 113, 134);
  return (uint8_t)(result | (sign >> 24));
}

static float e5m2_to_float(uint8_t v) { return half_to_float((uint16_t)(v << 8)); }

/* ---- loading ---- */

static value load(const void *p, c10c_dtype t) {
  value v = {K_INT, 0, 0, 0, 0};
  switch (t) {
#define INT_CASE(T, ctype)   \
  case T: {                  \
    ctype x;                 \
    memcpy(&x, p, sizeof x); \
    v.i = x;                 \
    break;                   \
  }
#define UINT_CASE(T, ctype)  \
  case T: {                  \
    ctype x;                 \
    memcpy(&x, p, sizeof x); \
    v.k = K_UINT, v.u = x;   \
    break;                   \
  }
    INT_CASE(C10C_DTYPE_INT8, int8_t)
    INT_CASE(C10C_DTYPE_INT16, int16_t)
    INT_CASE(C10C_DTYPE_INT32, int32_t)
    INT_CASE(C10C_DTYPE_INT64, int64_t)
    UINT_CASE(C10C_DTYPE_UINT8, uint8_t)
    UINT_CASE(C10C_DTYPE_UINT16, uint16_t)
    UINT_CASE(C10C_DTYPE_UINT32, uint32_t)
    UINT_CASE(C10C_DTYPE_UINT64, uint64_t)
#undef INT_CASE
#undef UINT_CASE
    case C10C_DTYPE_BOOL: v.k = K_UINT, v.u = *(const unsigned char *)p != 0; break;
    case C10C_DTYPE_FLOAT16: {
      uint16_t h;
      memcpy(&h, p, 2);
      v.k = K_REAL, v.re = half_to_float(h);
      break;
    }
    case C10C_DTYPE_BFLOAT16: {
      uint16_t b;
      memcpy(&b, p, 2);
      v.k = K_REAL, v.re = bf16_to_float(b);
      break;
    }
    case C10C_DTYPE_FLOAT8_E4M3FN: v.k = K_REAL, v.re = e4m3fn_to_float(*(const uint8_t *)p); break;
    case C10C_DTYPE_FLOAT8_E5M2: v.k = K_REAL, v.re = e5m2_to_float(*(const uint8_t *)p); break;
    case C10C_DTYPE_FLOAT32: {
      float f;
      memcpy(&f, p, 4);
      v.k = K_REAL, v.re = f;
      break;
    }
    case C10C_DTYPE_FLOAT64:
      memcpy(&v.re, p, 8);
      v.k = K_REAL;
      break;
    case C10C_DTYPE_COMPLEX32: {
      uint16_t h[2];
      memcpy(h, p, 4);
      v.k = K_COMPLEX, v.re = half_to_float(h[0]), v.im = half_to_float(h[1]);
      break;
    }
    case C10C_DTYPE_COMPLEX64: {
      float f[2];
      memcpy(f, p, 8);
      v.k = K_COMPLEX, v.re = f[0], v.im = f[1];
      break;
    }
    case C10C_DTYPE_COMPLEX128: {
      double d[2];
      memcpy(d, p, 16);
      v.k = K_COMPLEX, v.re = d[0], v.im = d[1];
      break;
    }
    default: break; /* refused by c10c__convertible */
  }
  return v;
}

/* ---- storing ---- */

/* x86's cvttsd2si: truncation, the most negative value for NaN and out-of-range values. */
static int64_t to_int64(double d) {
  if (!(d >= -0x1p63 && d < 0x1p63)) return INT64_MIN;
  return (int64_t)d;
}

static int32_t to_int32(double d) {
  if (!(d > -0x1p31 - 1.0 && d < 0x1p31)) return INT32_MIN;
  return (int32_t)d;
}

/* The integer bits of v for an integer dtype of the given width (two's complement). */
static uint64_t integer_bits(const value *v, c10c_dtype t) {
  if (v->k == K_INT) return (uint64_t)v->i;
  if (v->k == K_UINT) return v->u;
  double d = v->re;
  switch (t) {
    case C10C_DTYPE_INT8:
    case C10C_DTYPE_INT16:
    case C10C_DTYPE_UINT16:
    case C10C_DTYPE_INT32: return (uint64_t)(int64_t)to_int32(d);
    case C10C_DTYPE_UINT64:
      if (d >= 0x1p63 && d < 0x1p64) return (uint64_t)d; /* in range above int64's */
      return (uint64_t)to_int64(d);
    default: /* INT64, UINT8 (through int64, as c10), UINT32 */ return (uint64_t)to_int64(d);
  }
}

static float as_float(const value *v) {
  if (v->k == K_INT) return (float)v->i;
  if (v->k == K_UINT) return (float)v->u;
  return (float)v->re;
}

static double as_double(const value *v) {
  if (v->k == K_INT) return (double)v->i;
  if (v->k == K_UINT) return (double)v->u;
  return v->re;
}

static void store(void *p, c10c_dtype t, const value *v) {
  switch (t) {
    case C10C_DTYPE_BOOL: {
      bool b = v->k == K_INT    ? v->i != 0
               : v->k == K_UINT ? v->u != 0
                                : (v->re != 0 || (v->k == K_COMPLEX && v->im != 0));
      *(unsigned char *)p = b;
      break;
    }
    case C10C_DTYPE_INT8:
    case C10C_DTYPE_UINT8:
    case C10C_DTYPE_INT16:
    case C10C_DTYPE_UINT16:
    case C10C_DTYPE_INT32:
    case C10C_DTYPE_UINT32:
    case C10C_DTYPE_INT64:
    case C10C_DTYPE_UINT64: {
      uint64_t bits = integer_bits(v, t); /* two's complement: truncation is the low bits */
      uint8_t b8 = (uint8_t)bits;
      uint16_t b16 = (uint16_t)bits;
      uint32_t b32 = (uint32_t)bits;
      size_t width = c10c_dtype_itemsize(t);
      memcpy(p,
             width == 1   ? (void *)&b8
             : width == 2 ? (void *)&b16
             : width == 4 ? (void *)&b32
                          : (void *)&bits,
             width);
      break;
    }
    case C10C_DTYPE_FLOAT16: {
      uint16_t h = half_from_float(as_float(v));
      memcpy(p, &h, 2);
      break;
    }
    case C10C_DTYPE_BFLOAT16: {
      uint16_t b = bf16_from_float(as_float(v));
      memcpy(p, &b, 2);
      break;
    }
    case C10C_DTYPE_FLOAT8_E4M3FN: *(uint8_t *)p = e4m3fn_from_float(as_float(v)); break;
    case C10C_DTYPE_FLOAT8_E5M2: *(uint8_t *)p = e5m2_from_float(as_float(v)); break;
    case C10C_DTYPE_FLOAT32: {
      float f = as_float(v);
      memcpy(p, &f, 4);
      break;
    }
    case C10C_DTYPE_FLOAT64: {
      double d = as_double(v);
      memcpy(p, &d, 8);
      break;
    }
    case C10C_DTYPE_COMPLEX32: {
      uint16_t h[2] = {half_from_float(as_float(v)),
                       half_from_float(v->k == K_COMPLEX ? (float)v->im : 0.0f)};
      memcpy(p, h, 4);
      break;
    }
    case C10C_DTYPE_COMPLEX64: {
      float f[2] = {as_float(v), v->k == K_COMPLEX ? (float)v->im : 0.0f};
      memcpy(p, f, 8);
      break;
    }
    case C10C_DTYPE_COMPLEX128: {
      double d[2] = {as_double(v), v->k == K_COMPLEX ? v->im : 0.0};
      memcpy(p, d, 16);
      break;
    }
    default: break; /* refused by c10c__convertible */
  }
}

bool c10c__convertible(c10c_dtype t) {
  switch (t) {
    case C10C_DTYPE_BOOL:
    case C10C_DTYPE_INT8:
    case C10C_DTYPE_UINT8:
    case C10C_DTYPE_INT16:
    case C10C_DTYPE_UINT16:
    case C10C_DTYPE_INT32:
    case C10C_DTYPE_UINT32:
    case C10C_DTYPE_INT64:
    case C10C_DTYPE_UINT64:
    case C10C_DTYPE_FLOAT16:
    case C10C_DTYPE_BFLOAT16:
    case C10C_DTYPE_FLOAT8_E4M3FN:
    case C10C_DTYPE_FLOAT8_E5M2:
    case C10C_DTYPE_FLOAT32:
    case C10C_DTYPE_FLOAT64:
    case C10C_DTYPE_COMPLEX32:
    case C10C_DTYPE_COMPLEX64:
    case C10C_DTYPE_COMPLEX128: return true;
    default: return false;
  }
}

void c10c__convert_run(char *dst, int64_t dst_stride, c10c_dtype dst_type, const char *src,
                       int64_t src_stride, c10c_dtype src_type, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    value v = load(src + i * src_stride, src_type);
    store(dst + i * dst_stride, dst_type, &v);
  }
}
