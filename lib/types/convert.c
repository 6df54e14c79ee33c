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
 * Float8 formats: e4m3fn (saturating, as torch 2.13's copies), e5m2, e4m3fnuz, e5m2fnuz, e8m0fnu.
 * Other dtypes (quantized, bits, sub-byte, Float4) are not converted. */
#include "convert.h"

#include <math.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define HAVE_F16C_PATH 1
#endif

/* Elements are converted a chunk at a time: loaded into 64-bit integers (signed or not) or
 * doubles (complex: two), then stored from there; each pass is one tight loop per dtype, which
 * compilers vectorize where the formats allow. */
typedef enum { K_INT, K_UINT, K_REAL, K_COMPLEX } kind;

enum { CHUNK = 256 };

typedef struct chunk {
  kind k;
  bool nan_to_zero;     /* torch turns the NaN of fnuz and e8m0 Float8 into integer 0 */
  uint64_t bits[CHUNK]; /* K_INT (two's complement) and K_UINT */
  double re[CHUNK], im[CHUNK];
} chunk;

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
  /* NaN: quiet, with the payload's top 10 bits, as x86's vcvtps2ph (F16C, used for contiguous
   * runs) and torch 2.13 give them (0x7FA00000 -> 0x7F00); c10's portable path gives 0x7E00 */
  const uint32_t nan = UINT32_C(0x7E00) | ((w >> 13) & UINT32_C(0x3FF));
  return (uint16_t)((sign >> 16) | (shl1_w > UINT32_C(0xFF000000) ? nan : nonsign));
}

static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  /* inf, and NaN made quiet as F16C's vcvtph2ps and torch do (0x7C01 -> 0x7FC02000): set here,
   * not left to whether the compiler's float moves happen to quiet it */
  if (exp == 0x1F)
    return f32_from(sign | UINT32_C(0x7F800000) | (mant << 13) | (mant ? UINT32_C(0x400000) : 0));
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

/* NaN (0x7F, 0xFF) widens to c10's fp8e4m3fn_to_fp32_value bits, 0x7FF00000 with the sign (a
 * quiet NaN, so it survives the widening to double on the chunked path). */
static float e4m3fn_to_float(uint8_t v) {
  uint32_t exp = (v >> 3) & 0xF, mant = v & 7;
  float magnitude;
  if (exp == 0xF && mant == 7)
    magnitude = f32_from(UINT32_C(0x7FF00000));
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

/* The "fnuz" formats (c10's Float8_e4m3fnuz, Float8_e5m2fnuz): bias 8 / 16, no infinities, no
 * negative zero, one NaN (0x80); rounded to nearest even as the IEEE-like ones, overflow (from
 * half an ulp above the largest value, 240 / 57344) and NaN to NaN. */
static uint8_t fnuz_from_float(float f, int mbits, int bias, float limit) {
  if (!(fabsf(f) < limit)) return 0x80; /* NaN, infinities, overflow */
  uint32_t bits = f32_bits(f);
  const uint32_t sign = bits & UINT32_C(0x80000000);
  bits ^= sign;
  uint8_t result =
      fp8_round(bits, mbits, bias, (uint32_t)(128 - bias), (uint32_t)(151 - bias - mbits));
  return result == 0 ? 0 : (uint8_t)(result | (sign >> 24));
}

/* The float32 bits of an fnuz value; its NaN is c10's, the signalling 0x7F800001, which only
 * a path that never holds it in a float register keeps (x87 and conversions quiet it): the
 * float32 targets take these bits directly (direct() below). */
static uint32_t fnuz_to_bits(uint8_t v, int mbits, int bias) {
  if (v == 0x80) return UINT32_C(0x7F800001);
  uint32_t exp = (v & 0x7F) >> mbits, mant = v & ((1u << mbits) - 1);
  uint32_t magnitude = exp == 0
                           ? f32_bits((float)mant * f32_from((uint32_t)(128 - bias - mbits) << 23))
                           : ((exp + 127 - (uint32_t)bias) << 23) | (mant << (23 - mbits));
  return magnitude | ((uint32_t)(v & 0x80) << 24);
}

static float fnuz_to_float(uint8_t v, int mbits, int bias) {
  return f32_from(fnuz_to_bits(v, mbits, bias));
}

/* c10's fp8e8m0fnu_from_fp32_value: the exponent alone (no sign), rounded to nearest even by
 * the guard, round and sticky bits; NaN and infinities to NaN (0xFF). */
static uint8_t e8m0_from_float(float f) {
  uint32_t bits = f32_bits(f), exponent = (bits >> 23) & 0xFF;
  if (exponent == 0xFF) return 0xFF;
  bool g = bits & 0x400000, r = bits & 0x200000, s = bits & 0x1FFFFF, lsb = exponent > 0;
  if (g && (r || s || lsb)) exponent++;
  return (uint8_t)exponent;
}

/* c10's Float8_e8m0fnu to float: 0 is 2^-127, 0xFF NaN (c10's signalling 0x7F800001, kept
 * for float32 targets as fnuz_to_bits's). */
static uint32_t e8m0_to_bits(uint8_t v) {
  if (v == 0) return UINT32_C(0x00400000);
  if (v == 0xFF) return UINT32_C(0x7F800001);
  return (uint32_t)v << 23;
}

static float e8m0_to_float(uint8_t v) { return f32_from(e8m0_to_bits(v)); }

/* ---- loading ---- */

/* (the contiguous case is its own loop, with a constant stride compilers can vectorize) */
#define LOAD(ctype, assign)                                   \
  if (ss == (int64_t)sizeof(ctype)) {                         \
    for (int64_t i = 0; i < n; i++) {                         \
      ctype x;                                                \
      memcpy(&x, src + i * (int64_t)sizeof(ctype), sizeof x); \
      assign;                                                 \
    }                                                         \
  } else {                                                    \
    for (int64_t i = 0; i < n; i++) {                         \
      ctype x;                                                \
      memcpy(&x, src + i * ss, sizeof x);                     \
      assign;                                                 \
    }                                                         \
  }                                                           \
  break

/* A complex element: two parts of ptype, real first, each widened by to_double. */
#define LOAD_PAIR(ptype, to_double)    \
  for (int64_t i = 0; i < n; i++) {    \
    ptype x[2];                        \
    memcpy(x, src + i * ss, sizeof x); \
    c->re[i] = to_double(x[0]);        \
    c->im[i] = to_double(x[1]);        \
  }                                    \
  break

static void load_chunk(chunk *c, const char *src, int64_t ss, c10c_dtype t, int64_t n) {
  c->k = K_REAL;
  c->nan_to_zero = t == C10C_DTYPE_FLOAT8_E4M3FNUZ || t == C10C_DTYPE_FLOAT8_E5M2FNUZ ||
                   t == C10C_DTYPE_FLOAT8_E8M0FNU;
  switch (t) {
    case C10C_DTYPE_INT8: c->k = K_INT; LOAD(int8_t, c->bits[i] = (uint64_t)(int64_t)x);
    case C10C_DTYPE_INT16: c->k = K_INT; LOAD(int16_t, c->bits[i] = (uint64_t)(int64_t)x);
    case C10C_DTYPE_INT32: c->k = K_INT; LOAD(int32_t, c->bits[i] = (uint64_t)(int64_t)x);
    case C10C_DTYPE_INT64: c->k = K_INT; LOAD(int64_t, c->bits[i] = (uint64_t)x);
    case C10C_DTYPE_UINT8: c->k = K_UINT; LOAD(uint8_t, c->bits[i] = x);
    case C10C_DTYPE_UINT16: c->k = K_UINT; LOAD(uint16_t, c->bits[i] = x);
    case C10C_DTYPE_UINT32: c->k = K_UINT; LOAD(uint32_t, c->bits[i] = x);
    case C10C_DTYPE_UINT64: c->k = K_UINT; LOAD(uint64_t, c->bits[i] = x);
    case C10C_DTYPE_BOOL: c->k = K_UINT; LOAD(unsigned char, c->bits[i] = x != 0);
    case C10C_DTYPE_FLOAT16: LOAD(uint16_t, c->re[i] = half_to_float(x));
    case C10C_DTYPE_BFLOAT16: LOAD(uint16_t, c->re[i] = bf16_to_float(x));
    case C10C_DTYPE_FLOAT8_E4M3FN: LOAD(uint8_t, c->re[i] = e4m3fn_to_float(x));
    case C10C_DTYPE_FLOAT8_E5M2: LOAD(uint8_t, c->re[i] = e5m2_to_float(x));
    case C10C_DTYPE_FLOAT8_E4M3FNUZ: LOAD(uint8_t, c->re[i] = fnuz_to_float(x, 3, 8));
    case C10C_DTYPE_FLOAT8_E5M2FNUZ: LOAD(uint8_t, c->re[i] = fnuz_to_float(x, 2, 16));
    case C10C_DTYPE_FLOAT8_E8M0FNU: LOAD(uint8_t, c->re[i] = e8m0_to_float(x));
    case C10C_DTYPE_FLOAT32: LOAD(float, c->re[i] = x);
    case C10C_DTYPE_FLOAT64: LOAD(double, c->re[i] = x);
    case C10C_DTYPE_COMPLEX32: c->k = K_COMPLEX; LOAD_PAIR(uint16_t, half_to_float);
    case C10C_DTYPE_COMPLEX64: c->k = K_COMPLEX; LOAD_PAIR(float, (double));
    case C10C_DTYPE_COMPLEX128: c->k = K_COMPLEX; LOAD_PAIR(double, (double));
    default: break; /* refused by c10c__convertible */
  }
}

#undef LOAD
#undef LOAD_PAIR

/* ---- storing ---- */

/* x86's cvttsd2si: truncation, the most negative value for NaN and out-of-range values. */
static inline int64_t to_int64(double d) {
  return d >= -0x1p63 && d < 0x1p63 ? (int64_t)d : INT64_MIN;
}

static inline int32_t to_int32(double d) {
  return d > -0x1p31 - 1.0 && d < 0x1p31 ? (int32_t)d : INT32_MIN;
}

/* uint64: values above int64's range directly, the rest through int64 (as compilers do). */
static inline uint64_t to_uint64(double d) {
  return d >= 0x1p63 && d < 0x1p64 ? (uint64_t)d : (uint64_t)to_int64(d);
}

/* One loop per kind of chunk: v is the element (int64_t, uint64_t or double), x what is stored. */
#define STORE_LOOP(ctype, vtype, source, expr)                \
  if (ds == (int64_t)sizeof(ctype)) {                         \
    for (int64_t i = 0; i < n; i++) {                         \
      vtype v = (vtype)(source)[i];                           \
      ctype x = expr;                                         \
      memcpy(dst + i * (int64_t)sizeof(ctype), &x, sizeof x); \
    }                                                         \
  } else {                                                    \
    for (int64_t i = 0; i < n; i++) {                         \
      vtype v = (vtype)(source)[i];                           \
      ctype x = expr;                                         \
      memcpy(dst + i * ds, &x, sizeof x);                     \
    }                                                         \
  }

#define STORE(ctype, from_int, from_uint, from_real)                    \
  switch (c->k) {                                                       \
    case K_INT: STORE_LOOP(ctype, int64_t, c->bits, from_int) break;    \
    case K_UINT: STORE_LOOP(ctype, uint64_t, c->bits, from_uint) break; \
    default: STORE_LOOP(ctype, double, c->re, from_real) break;         \
  }                                                                     \
  break

/* The same for a target of the same expression in all three kinds (v converts implicitly). */
#define STORE_ANY(ctype, expr) STORE(ctype, expr, expr, expr)

/* Complex targets: the real part as above, the imaginary part from a complex chunk or 0. */
#define STORE_COMPLEX(part, convert)                          \
  for (int64_t i = 0; i < n; i++) {                           \
    double r = c->k == K_INT    ? (double)(int64_t)c->bits[i] \
               : c->k == K_UINT ? (double)c->bits[i]          \
                                : c->re[i];                   \
    float rf = c->k == K_INT    ? (float)(int64_t)c->bits[i]  \
               : c->k == K_UINT ? (float)c->bits[i]           \
                                : (float)c->re[i];            \
    double im = c->k == K_COMPLEX ? c->im[i] : 0.0;           \
    part x[2] = {convert(r, rf), convert(im, (float)im)};     \
    memcpy(dst + i * ds, x, sizeof x);                        \
  }                                                           \
  break

/* A complex part from its double and its float rounding (c10: double -> float -> Half). */
#define AS_HALF(d, f)   ((void)(d), half_from_float(f))
#define AS_FLOAT(d, f)  ((void)(d), (f))
#define AS_DOUBLE(d, f) ((void)(f), (d))

/* An integer from a real element: x86's rule, except torch's NaN -> 0 for some Float8 sources. */
#define INT_OF(expr) (c->nan_to_zero && v != v ? 0 : (expr))

static void store_chunk(char *dst, int64_t ds, c10c_dtype t, const chunk *c, int64_t n) {
  switch (t) {
    case C10C_DTYPE_BOOL:
      if (c->k == K_COMPLEX) {
        for (int64_t i = 0; i < n; i++) dst[i * ds] = (char)(c->re[i] != 0 || c->im[i] != 0);
        break;
      }
      STORE(unsigned char, v != 0, v != 0, v != 0);
    /* integers: two's complement truncation, stored through the unsigned type of the width */
    case C10C_DTYPE_INT8:
      STORE(uint8_t, (uint8_t)v, (uint8_t)v, (uint8_t)(uint32_t)INT_OF(to_int32(v)));
    case C10C_DTYPE_UINT8:
      STORE(uint8_t, (uint8_t)v, (uint8_t)v, (uint8_t)(uint64_t)INT_OF(to_int64(v)));
    case C10C_DTYPE_INT16:
    case C10C_DTYPE_UINT16:
      STORE(uint16_t, (uint16_t)v, (uint16_t)v, (uint16_t)(uint32_t)INT_OF(to_int32(v)));
    case C10C_DTYPE_INT32: STORE(uint32_t, (uint32_t)v, (uint32_t)v, (uint32_t)INT_OF(to_int32(v)));
    case C10C_DTYPE_UINT32:
      STORE(uint32_t, (uint32_t)v, (uint32_t)v, (uint32_t)(uint64_t)INT_OF(to_int64(v)));
    case C10C_DTYPE_INT64: STORE(uint64_t, (uint64_t)v, v, (uint64_t)INT_OF(to_int64(v)));
    case C10C_DTYPE_UINT64: STORE(uint64_t, (uint64_t)v, v, INT_OF(to_uint64(v)));
    /* reduced floats through float, as c10's constructors */
    case C10C_DTYPE_FLOAT16: STORE_ANY(uint16_t, half_from_float((float)v));
    case C10C_DTYPE_BFLOAT16: STORE_ANY(uint16_t, bf16_from_float((float)v));
    case C10C_DTYPE_FLOAT8_E4M3FN: STORE_ANY(uint8_t, e4m3fn_from_float((float)v));
    case C10C_DTYPE_FLOAT8_E5M2: STORE_ANY(uint8_t, e5m2_from_float((float)v));
    case C10C_DTYPE_FLOAT8_E4M3FNUZ: STORE_ANY(uint8_t, fnuz_from_float((float)v, 3, 8, 248.0f));
    case C10C_DTYPE_FLOAT8_E5M2FNUZ: STORE_ANY(uint8_t, fnuz_from_float((float)v, 2, 16, 61440.0f));
    case C10C_DTYPE_FLOAT8_E8M0FNU: STORE_ANY(uint8_t, e8m0_from_float((float)v));
    case C10C_DTYPE_FLOAT32: STORE_ANY(float, (float)v);
    case C10C_DTYPE_FLOAT64: STORE_ANY(double, (double)v);
    case C10C_DTYPE_COMPLEX32: STORE_COMPLEX(uint16_t, AS_HALF);
    case C10C_DTYPE_COMPLEX64: STORE_COMPLEX(float, AS_FLOAT);
    case C10C_DTYPE_COMPLEX128: STORE_COMPLEX(double, AS_DOUBLE);
    default: break; /* refused by c10c__convertible */
  }
}
#undef STORE
#undef INT_OF
#undef STORE_LOOP
#undef STORE_ANY
#undef STORE_COMPLEX

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
    case C10C_DTYPE_FLOAT8_E4M3FNUZ:
    case C10C_DTYPE_FLOAT8_E5M2FNUZ:
    case C10C_DTYPE_FLOAT8_E8M0FNU:
    case C10C_DTYPE_FLOAT32:
    case C10C_DTYPE_FLOAT64:
    case C10C_DTYPE_COMPLEX32:
    case C10C_DTYPE_COMPLEX64:
    case C10C_DTYPE_COMPLEX128: return true;
    default: return false;
  }
}

#ifdef HAVE_F16C_PATH
/* float <-> Half with the CPU's F16C conversions (round to nearest even, as the software ones;
 * NaN payloads may differ), for contiguous runs; chosen at run time. */
__attribute__((target("avx,f16c"))) static void floats_to_halves(uint16_t *out, const float *in,
                                                                 int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i *)(void *)(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; i++) out[i] = half_from_float(in[i]);
}

__attribute__((target("avx,f16c"))) static void halves_to_floats(float *out, const uint16_t *in,
                                                                 int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i,
                     _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(in + i))));
  for (; i < n; i++) out[i] = half_to_float(in[i]);
}

/* CPUID.1:ECX: F16C (bit 29), AVX (28), OSXSAVE (27); and the OS saves the AVX state (XCR0). */
static bool have_f16c(void) {
  static int known = -1; /* a benign race: every thread computes the same answer */
  int k = __atomic_load_n(&known, __ATOMIC_RELAXED);
  if (k < 0) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    k = 0;
    if (__get_cpuid(1, &a, &b, &c, &d) && (c >> 27 & 7) == 7) {
      unsigned lo = 0, hi = 0;
      __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
      k = (lo & 6) == 6;
    }
    __atomic_store_n(&known, k, __ATOMIC_RELAXED);
  }
  return k != 0;
}
#endif

/* Contiguous runs of the most common pairs in one loop each, without the chunk (the same
 * results: each expression is what load_chunk and store_chunk do for the pair). */
#define PAIR_LOOP(stype, dtype, expr, sstep, dstep) \
  for (int64_t i = 0; i < n; i++) {                 \
    stype v;                                        \
    memcpy(&v, src + i * (sstep), sizeof v);        \
    dtype x = expr;                                 \
    memcpy(dst + i * (dstep), &x, sizeof x);        \
  }

/* A pair converted by its own loop, for every layout (a contiguous run with constant steps the
 * compiler vectorizes): the result of a pair never depends on the layout, which it would if only
 * contiguous runs took this loop and the others the generic path through double (bfloat16 ->
 * float is a bit copy, signalling NaNs included, as torch; through double it quiets them). */
#define PAIR(S, D, stype, dtype, expr)                                                \
  if (src_type == S && dst_type == D) {                                               \
    if (src_stride == (int64_t)sizeof(stype) && dst_stride == (int64_t)sizeof(dtype)) \
      PAIR_LOOP(stype, dtype, expr, (int64_t)sizeof(stype), (int64_t)sizeof(dtype))   \
    else                                                                              \
      PAIR_LOOP(stype, dtype, expr, src_stride, dst_stride)                           \
    return true;                                                                      \
  }

#ifdef HAVE_F16C_PATH
/* SSE2 (every x86-64): cvttps2dq is x86's truncation, INT32_MIN for NaN and out of range, as
 * to_int32; bfloat16 rounding on four lanes, NaN to 0x7FC0, as bf16_from_float. */
static int64_t floats_to_int32s(uint32_t *out, const float *in, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    _mm_storeu_si128((__m128i *)(void *)(out + i), _mm_cvttps_epi32(_mm_loadu_ps(in + i)));
  return i;
}

/* Four lanes of bf16_from_float (the 16-bit results in the 32-bit lanes). */
static __m128i bf16_lanes(__m128 f) {
  const __m128i bias = _mm_set1_epi32(0x7FFF), one = _mm_set1_epi32(1);
  __m128i u = _mm_castps_si128(f);
  __m128i odd = _mm_and_si128(_mm_srli_epi32(u, 16), one);
  __m128i rounded = _mm_srli_epi32(_mm_add_epi32(u, _mm_add_epi32(bias, odd)), 16);
  __m128i nan = _mm_castps_si128(_mm_cmpunord_ps(f, f));
  return _mm_or_si128(_mm_and_si128(nan, _mm_set1_epi32(0x7FC0)), _mm_andnot_si128(nan, rounded));
}

static int64_t floats_to_bf16s(uint16_t *out, const float *in, int64_t n) {
  int64_t i = 0;
  const __m128i half_range = _mm_set1_epi32(0x8000), flip = _mm_set1_epi16((short)0x8000);
  for (; i + 8 <= n; i += 8) {
    /* packs_epi32 saturates signed: shift 0..0xFFFF into the signed range and back */
    __m128i lo = _mm_sub_epi32(bf16_lanes(_mm_loadu_ps(in + i)), half_range);
    __m128i hi = _mm_sub_epi32(bf16_lanes(_mm_loadu_ps(in + i + 4)), half_range);
    _mm_storeu_si128((__m128i *)(void *)(out + i), _mm_xor_si128(_mm_packs_epi32(lo, hi), flip));
  }
  return i;
}
#endif

static bool direct(char *dst, int64_t dst_stride, c10c_dtype dst_type, const char *src,
                   int64_t src_stride, c10c_dtype src_type, int64_t n) {
#ifdef HAVE_F16C_PATH
  if (src_type == C10C_DTYPE_FLOAT32 && src_stride == 4 && (uintptr_t)src % 4 == 0) {
    int64_t done = -1;
    if (dst_type == C10C_DTYPE_INT32 && dst_stride == 4 && (uintptr_t)dst % 4 == 0)
      done = floats_to_int32s((uint32_t *)(void *)dst, (const float *)(const void *)src, n);
    else if (dst_type == C10C_DTYPE_BFLOAT16 && dst_stride == 2 && (uintptr_t)dst % 2 == 0)
      done = floats_to_bf16s((uint16_t *)(void *)dst, (const float *)(const void *)src, n);
    if (done >= 0) { /* the last few in the loops below */
      src += done * 4, dst += done * dst_stride, n -= done;
    }
  }
#endif
  PAIR(C10C_DTYPE_FLOAT32, C10C_DTYPE_FLOAT64, float, double, (double)v)
  PAIR(C10C_DTYPE_FLOAT64, C10C_DTYPE_FLOAT32, double, float, (float)v)
  PAIR(C10C_DTYPE_FLOAT32, C10C_DTYPE_INT32, float, uint32_t, (uint32_t)to_int32(v))
  PAIR(C10C_DTYPE_FLOAT32, C10C_DTYPE_INT64, float, uint64_t, (uint64_t)to_int64(v))
  PAIR(C10C_DTYPE_FLOAT64, C10C_DTYPE_INT64, double, uint64_t, (uint64_t)to_int64(v))
  PAIR(C10C_DTYPE_INT32, C10C_DTYPE_FLOAT32, int32_t, float, (float)v)
  PAIR(C10C_DTYPE_INT64, C10C_DTYPE_FLOAT32, int64_t, float, (float)v)
  PAIR(C10C_DTYPE_INT64, C10C_DTYPE_FLOAT64, int64_t, double, (double)v)
  PAIR(C10C_DTYPE_INT32, C10C_DTYPE_INT64, int32_t, int64_t, (int64_t)v)
  PAIR(C10C_DTYPE_INT64, C10C_DTYPE_INT32, int64_t, uint32_t, (uint32_t)(uint64_t)v)
  PAIR(C10C_DTYPE_UINT8, C10C_DTYPE_FLOAT32, uint8_t, float, (float)v)
  PAIR(C10C_DTYPE_BOOL, C10C_DTYPE_FLOAT32, unsigned char, float, (float)(v != 0))
  PAIR(C10C_DTYPE_FLOAT32, C10C_DTYPE_BFLOAT16, float, uint16_t, bf16_from_float(v))
  PAIR(C10C_DTYPE_BFLOAT16, C10C_DTYPE_FLOAT32, uint16_t, float, bf16_to_float(v))
  /* float8 to float32 as bits: their NaNs as c10 widens them, signalling ones included */
  PAIR(C10C_DTYPE_FLOAT8_E4M3FNUZ, C10C_DTYPE_FLOAT32, uint8_t, uint32_t, fnuz_to_bits(v, 3, 8))
  PAIR(C10C_DTYPE_FLOAT8_E5M2FNUZ, C10C_DTYPE_FLOAT32, uint8_t, uint32_t, fnuz_to_bits(v, 2, 16))
  PAIR(C10C_DTYPE_FLOAT8_E8M0FNU, C10C_DTYPE_FLOAT32, uint8_t, uint32_t, e8m0_to_bits(v))
  return false;
}
#undef PAIR
#undef PAIR_LOOP

void c10c__convert_run(char *dst, int64_t dst_stride, c10c_dtype dst_type, const char *src,
                       int64_t src_stride, c10c_dtype src_type, int64_t n) {
#ifdef HAVE_F16C_PATH
  bool pair_f2h = src_type == C10C_DTYPE_FLOAT32 && dst_type == C10C_DTYPE_FLOAT16;
  bool pair_h2f = src_type == C10C_DTYPE_FLOAT16 && dst_type == C10C_DTYPE_FLOAT32;
  if ((pair_f2h && src_stride == 4 && dst_stride == 2) ||
      (pair_h2f && src_stride == 2 && dst_stride == 4)) {
    if (have_f16c() && ((uintptr_t)src % (pair_f2h ? 4 : 2)) == 0 &&
        ((uintptr_t)dst % (pair_f2h ? 2 : 4)) == 0) {
      if (pair_f2h)
        floats_to_halves((uint16_t *)(void *)dst, (const float *)(const void *)src, n);
      else
        halves_to_floats((float *)(void *)dst, (const uint16_t *)(const void *)src, n);
      return;
    }
  }
#endif
  if (direct(dst, dst_stride, dst_type, src, src_stride, src_type, n)) return;
  chunk c;
  for (int64_t done = 0; done < n; done += CHUNK) {
    int64_t m = n - done < CHUNK ? n - done : CHUNK;
    load_chunk(&c, src + done * src_stride, src_stride, src_type, m);
    store_chunk(dst + done * dst_stride, dst_stride, dst_type, &c, m);
  }
}
