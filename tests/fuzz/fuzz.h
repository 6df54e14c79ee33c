/* What every fuzz harness shares: the libFuzzer entry point's prototype, a reader that turns the
 * fuzzer's bytes into the values a harness needs (exhausted input reads as zeros, so every byte
 * string is a valid program), and FUZZ_CHECK for the harness's own invariants.
 *
 * A harness is tests/fuzz/fuzz_<name>.c defining LLVMFuzzerTestOneInput. It is built twice: as a
 * libFuzzer binary (meson -Dfuzz=true, clang; tests/fuzz/run.sh) and, in every build, with
 * replay.c's main, which feeds it the kept corpus tests/fuzz/corpus/<name>/ as a meson test. A
 * failed FUZZ_CHECK (or a sanitizer report) is a finding: the input goes into that corpus once
 * the bug is fixed, so that every later build replays it.
 */
#ifndef C10C_FUZZ_H
#define C10C_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Exact arithmetic for a harness's reference model, whatever sizes and strides it meets: signed
 * 128-bit integers, gcc's and clang's where the target has them (__extension__ keeps -Wpedantic
 * quiet about them), else two 64-bit halves in two's complement (32-bit targets), through the
 * same few functions. */
#ifdef __SIZEOF_INT128__
__extension__ typedef __int128 fuzz_wide;
static inline fuzz_wide fuzz_wide_of(int64_t v) { return v; }
static inline fuzz_wide fuzz_wide_pow2(int n) { return (fuzz_wide)1 << n; } /* 0 <= n < 127 */
static inline fuzz_wide fuzz_wide_add(fuzz_wide a, fuzz_wide b) { return a + b; }
static inline fuzz_wide fuzz_wide_mul(fuzz_wide a, fuzz_wide b) { return a * b; }
static inline int fuzz_wide_cmp(fuzz_wide a, fuzz_wide b) { return (a > b) - (a < b); }
static inline int64_t fuzz_wide_low(fuzz_wide a) { return (int64_t)a; } /* the low 64 bits */
#else
typedef struct fuzz_wide {
  uint64_t lo, hi;
} fuzz_wide;
static inline fuzz_wide fuzz_wide_of(int64_t v) {
  return (fuzz_wide){(uint64_t)v, v < 0 ? UINT64_MAX : 0};
}
static inline fuzz_wide fuzz_wide_pow2(int n) {
  return n < 64 ? (fuzz_wide){(uint64_t)1 << n, 0} : (fuzz_wide){0, (uint64_t)1 << (n - 64)};
}
static inline fuzz_wide fuzz_wide_add(fuzz_wide a, fuzz_wide b) {
  uint64_t lo = a.lo + b.lo;
  return (fuzz_wide){lo, a.hi + b.hi + (lo < a.lo)};
}
/* The product modulo 2^128, which is the signed one's two's complement. */
static inline fuzz_wide fuzz_wide_mul(fuzz_wide a, fuzz_wide b) {
  uint64_t a0 = a.lo & 0xFFFFFFFFu, a1 = a.lo >> 32, b0 = b.lo & 0xFFFFFFFFu, b1 = b.lo >> 32;
  uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  uint64_t mid = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
  uint64_t lo = (p00 & 0xFFFFFFFFu) | (mid << 32);
  uint64_t hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
  return (fuzz_wide){lo, hi + a.hi * b.lo + a.lo * b.hi};
}
static inline int fuzz_wide_cmp(fuzz_wide a, fuzz_wide b) {
  int64_t ah = (int64_t)a.hi, bh = (int64_t)b.hi;
  if (ah != bh) return ah < bh ? -1 : 1;
  return (a.lo > b.lo) - (a.lo < b.lo);
}
static inline int64_t fuzz_wide_low(fuzz_wide a) { return (int64_t)a.lo; }
#endif

/* A harness invariant that does not hold: print it and abort, which libFuzzer reports as a crash
 * (with the input saved) and which fails the replay test. */
#define FUZZ_CHECK(cond, ...)                                                    \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: check failed: %s\n  ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                              \
      fprintf(stderr, "\n");                                                     \
      abort();                                                                   \
    }                                                                            \
  } while (0)

/* With FUZZ_TRACE set in the environment, a harness says what it does, step by step (to read what
 * an input that failed did: FUZZ_TRACE=1 build/tests/tests/fuzz/replay_<name> INPUT). */
static inline bool fuzz_tracing(void) {
  static int on = -1;
  if (on < 0) on = getenv("FUZZ_TRACE") != NULL;
  return on;
}
#define FUZZ_TRACE(...)             \
  do {                              \
    if (fuzz_tracing()) {           \
      fprintf(stderr, __VA_ARGS__); \
      fprintf(stderr, "\n");        \
    }                               \
  } while (0)

/* The unread rest of the input. */
typedef struct fuzz_input {
  const uint8_t *data;
  size_t size;
} fuzz_input;

static inline bool fuzz_done(const fuzz_input *in) { return in->size == 0; }

/* n bytes (n <= 8) as a little-endian number; missing bytes read as 0. */
static inline uint64_t fuzz_bytes(fuzz_input *in, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n && in->size > 0; i++, in->data++, in->size--)
    v |= (uint64_t)in->data[0] << (8 * i);
  return v;
}

static inline uint8_t fuzz_u8(fuzz_input *in) { return (uint8_t)fuzz_bytes(in, 1); }
static inline bool fuzz_bool(fuzz_input *in) { return fuzz_u8(in) & 1; }
static inline uint64_t fuzz_u64(fuzz_input *in) { return fuzz_bytes(in, 8); }

/* A value in [lo, hi] (hi >= lo), reading as few bytes as the range needs. */
static inline int64_t fuzz_range(fuzz_input *in, int64_t lo, int64_t hi) {
  uint64_t span = (uint64_t)hi - (uint64_t)lo;
  size_t n = 0;
  for (uint64_t s = span; s != 0; s >>= 8) n++;
  uint64_t v = fuzz_bytes(in, n);
  if (span != UINT64_MAX) v %= span + 1;
  return (int64_t)((uint64_t)lo + v);
}

/* An int64 biased toward what breaks size arithmetic: small values (most of the time), powers of
 * two near the overflow thresholds and their neighbours, the extremes, or 8 raw bytes. */
static inline int64_t fuzz_int64(fuzz_input *in) {
  uint8_t kind = fuzz_u8(in);
  switch (kind % 8) {
    case 0:
    case 1:
    case 2:
    case 3: return (int64_t)(kind >> 3) - 4; /* -4 .. 27 */
    case 4: {                                /* +-2^k + d, k in [0, 63] */
      uint8_t b = fuzz_u8(in);
      uint64_t p = UINT64_C(1) << (b & 63);
      int64_t d = (int64_t)(fuzz_u8(in) % 5) - 2;
      uint64_t v = p + (uint64_t)d;
      return (b & 64) ? (int64_t)(0 - v) : (int64_t)v;
    }
    case 5: {
      static const int64_t extremes[] = {
          INT64_MIN,      INT64_MIN + 1, INT64_MAX,     INT64_MAX - 1,
          INT32_MAX,      INT32_MIN,     UINT32_MAX,    -1,
          INT64_MAX / 2,  INT64_MAX / 3, INT64_MAX / 4, INT64_MAX / 8,
          INT64_MAX / 16, 1 << 20,       1 << 30,       INT64_C(1) << 40};
      return extremes[fuzz_u8(in) % (sizeof extremes / sizeof extremes[0])];
    }
    case 6: return (int64_t)fuzz_u8(in) + 28; /* 28 .. 283 */
    default: return (int64_t)fuzz_u64(in);
  }
}

/* A NUL-terminated copy of up to max bytes of the input (the caller frees it). */
static inline char *fuzz_string(fuzz_input *in, size_t max) {
  size_t n = (size_t)fuzz_range(in, 0, (int64_t)max);
  if (n > in->size) n = in->size;
  char *s = malloc(n + 1);
  if (s == NULL) abort();
  memcpy(s, in->data, n);
  s[n] = '\0';
  in->data += n;
  in->size -= n;
  return s;
}

#endif /* C10C_FUZZ_H */
