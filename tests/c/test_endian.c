/* Byte order: the library on the running target against values computed on little-endian
 * x86-64 (tests/c/endian_golden.h, written by tests/c/gen_endian_golden.py from torch 2.13 and
 * an independent reading of the plan file format). Conversions run through copy_ on contiguous
 * and strided tensors (the direct loops and the chunked path); tensors hold their elements in the
 * target's order, files and numbers written here are compared as numbers or little-endian bytes.
 * White-box (the static library) for the plan file reader. */
#include <math.h>
#include <stdlib.h>

#include "endian_golden.h"
#include "harness.h"
#include "planner.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};

/* n elements of st at src (every stride-th slot) copied into dt at dst (every stride-th slot). */
static void convert(void *dst, c10c_dtype dt, const void *src, c10c_dtype st, int64_t n,
                    int64_t stride) {
  size_t di = c10c_dtype_itemsize(dt), si = c10c_dtype_itemsize(st);
  int64_t span = n == 0 ? 0 : (n - 1) * stride + 1;
  c10c_storage *ds = NULL, *ss = NULL;
  c10c_tensor *d = NULL, *s = NULL;
  ASSERT_OK(c10c_storage_new_external(&ds, dst, span * (int64_t)di, cpu, NULL, NULL));
  ASSERT_OK(
      c10c_storage_new_external(&ss, (void *)(uintptr_t)src, span * (int64_t)si, cpu, NULL, NULL));
  ASSERT_OK(c10c_tensor_new_from_storage(&d, ds, &n, &stride, 1, 0, dt));
  ASSERT_OK(c10c_tensor_new_from_storage(&s, ss, &n, &stride, 1, 0, st));
  ASSERT_OK(c10c_tensor_copy_(d, s));
  c10c_tensor_release(d);
  c10c_tensor_release(s);
  c10c_storage_release(ds);
  c10c_storage_release(ss);
}

/* An element of an itemsize-byte type at p as a number (the target's order, as a tensor). */
static uint64_t load(const void *p, size_t size) {
  switch (size) {
    case 1: return *(const uint8_t *)p;
    case 2: {
      uint16_t v;
      memcpy(&v, p, 2);
      return v;
    }
    case 4: {
      uint32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    default: {
      uint64_t v;
      memcpy(&v, p, 8);
      return v;
    }
  }
}

static void store(void *p, size_t size, uint64_t v) {
  uint8_t b1 = (uint8_t)v;
  uint16_t b2 = (uint16_t)v;
  uint32_t b4 = (uint32_t)v;
  memcpy(p, size == 1 ? (void *)&b1 : size == 2 ? (void *)&b2 : size == 4 ? (void *)&b4 : &v, size);
}

static uint64_t fnv_step(uint64_t h, uint32_t v) { /* v's four bytes, little-endian */
  for (int i = 0; i < 4; i++) h = (h ^ ((v >> (8 * i)) & 0xFF)) * UINT64_C(0x100000001b3);
  return h;
}

static const int64_t strides[] = {1, 3};

TEST(every_pattern_of_each_small_float_widens_to_torchs_float32) {
  for (size_t k = 0; k < COUNT(golden_all_patterns); k++) {
    c10c_dtype t = golden_all_patterns[k].type;
    size_t size = c10c_dtype_itemsize(t);
    int64_t n = (int64_t)1 << (8 * size);
    for (size_t s = 0; s < COUNT(strides); s++) {
      int64_t st = strides[s];
      char *src = calloc((size_t)(n * st), size);
      uint32_t *dst = calloc((size_t)(n * st), 4);
      if (!src || !dst) abort();
      for (int64_t p = 0; p < n; p++) store(src + p * st * (int64_t)size, size, (uint64_t)p);
      convert(dst, C10C_DTYPE_FLOAT32, src, t, n, st);
      uint64_t h = UINT64_C(0xcbf29ce484222325);
      for (int64_t p = 0; p < n; p++) h = fnv_step(h, dst[p * st]);
      if (h != golden_all_patterns[k].fnv)
        FAIL_AT("dtype %d stride %lld: FNV-1a of the float32 results 0x%016" PRIx64
                ", x86-64 torch 0x%016" PRIx64,
                (int)t, (long long)st, h, golden_all_patterns[k].fnv);
      for (size_t j = 0; j < COUNT(golden_patterns); j++)
        if (golden_patterns[j].type == t &&
            dst[golden_patterns[j].pattern * st] != golden_patterns[j].f32)
          FAIL_AT("dtype %d pattern 0x%x: float32 0x%08x, torch 0x%08x", (int)t,
                  (unsigned)golden_patterns[j].pattern,
                  (unsigned)dst[golden_patterns[j].pattern * st], (unsigned)golden_patterns[j].f32);
      free(src);
      free(dst);
    }
  }
}

/* Whether a pattern of the small format (index into golden_from_float's columns) is a NaN. */
static bool is_nan(int column, uint32_t v) {
  switch (column) {
    case 0: return (v & 0x7C00) == 0x7C00 && (v & 0x3FF) != 0;
    case 1: return (v & 0x7F80) == 0x7F80 && (v & 0x7F) != 0;
    case 2: return (v & 0x7F) == 0x7F;
    case 3: return (v & 0x7C) == 0x7C && (v & 3) != 0;
    case 4:
    case 5: return v == 0x80;
    default: return v == 0xFF;
  }
}

TEST(float32_narrows_to_each_small_float_as_torch_rounds) {
  static const c10c_dtype to[7] = {C10C_DTYPE_FLOAT16,         C10C_DTYPE_BFLOAT16,
                                   C10C_DTYPE_FLOAT8_E4M3FN,   C10C_DTYPE_FLOAT8_E5M2,
                                   C10C_DTYPE_FLOAT8_E4M3FNUZ, C10C_DTYPE_FLOAT8_E5M2FNUZ,
                                   C10C_DTYPE_FLOAT8_E8M0FNU};
  enum { N = COUNT(golden_from_float) };
  for (size_t s = 0; s < COUNT(strides); s++) {
    int64_t st = strides[s];
    uint32_t src[N * 3];
    for (size_t i = 0; i < N; i++) src[i * (size_t)st] = golden_from_float[i].in;
    for (int c = 0; c < 7; c++) {
      size_t size = c10c_dtype_itemsize(to[c]);
      char dst[N * 3 * 2];
      convert(dst, to[c], src, C10C_DTYPE_FLOAT32, N, st);
      for (size_t i = 0; i < N; i++) {
        uint32_t got = (uint32_t)load(dst + i * (size_t)st * size, size);
        uint32_t want = golden_from_float[i].out[c];
        bool nan = (golden_from_float[i].nan >> c) & 1;
        if (nan ? !is_nan(c, got) : got != want)
          FAIL_AT("float32 0x%08x -> dtype %d (stride %lld): 0x%x, torch 0x%x",
                  (unsigned)golden_from_float[i].in, (int)to[c], (long long)st, (unsigned)got,
                  (unsigned)want);
      }
    }
  }
}

TEST(float64_narrows_through_float32_as_c10) {
  static const c10c_dtype to[6] = {C10C_DTYPE_FLOAT16, C10C_DTYPE_BFLOAT16, C10C_DTYPE_INT32,
                                   C10C_DTYPE_INT16,   C10C_DTYPE_UINT8,    C10C_DTYPE_INT8};
  enum { N = COUNT(golden_from_double) };
  uint64_t src[N];
  for (size_t i = 0; i < N; i++) src[i] = golden_from_double[i].in;
  for (int c = 0; c < 6; c++) {
    size_t size = c10c_dtype_itemsize(to[c]);
    char dst[N * 8];
    convert(dst, to[c], src, C10C_DTYPE_FLOAT64, N, 1);
    for (size_t i = 0; i < N; i++)
      if (load(dst + i * size, size) != golden_from_double[i].out[c])
        FAIL_AT("float64 0x%016" PRIx64 " -> dtype %d: 0x%" PRIx64 ", torch 0x%x", src[i],
                (int)to[c], load(dst + i * size, size), (unsigned)golden_from_double[i].out[c]);
  }
}

TEST(integers_convert_between_widths_and_to_floats_as_torch) {
  static const c10c_dtype to[8] = {C10C_DTYPE_INT8,     C10C_DTYPE_UINT8,   C10C_DTYPE_INT16,
                                   C10C_DTYPE_INT32,    C10C_DTYPE_FLOAT32, C10C_DTYPE_FLOAT16,
                                   C10C_DTYPE_BFLOAT16, C10C_DTYPE_FLOAT64};
  enum { N = COUNT(golden_from_int64), M = COUNT(golden_from_int16) };
  for (size_t s = 0; s < COUNT(strides); s++) {
    int64_t st = strides[s];
    int64_t src[N * 3];
    for (size_t i = 0; i < N; i++) src[i * (size_t)st] = golden_from_int64[i].in;
    for (int c = 0; c < 8; c++) {
      size_t size = c10c_dtype_itemsize(to[c]);
      char dst[N * 3 * 8];
      convert(dst, to[c], src, C10C_DTYPE_INT64, N, st);
      for (size_t i = 0; i < N; i++) {
        uint64_t got = load(dst + i * (size_t)st * size, size);
        if (got != golden_from_int64[i].out[c])
          FAIL_AT("int64 %lld -> dtype %d (stride %lld): 0x%" PRIx64 ", torch 0x%" PRIx64,
                  (long long)golden_from_int64[i].in, (int)to[c], (long long)st, got,
                  golden_from_int64[i].out[c]);
      }
    }
  }
  static const c10c_dtype to16[3] = {C10C_DTYPE_INT64, C10C_DTYPE_FLOAT32, C10C_DTYPE_UINT8};
  int16_t src16[M];
  for (size_t i = 0; i < M; i++) src16[i] = golden_from_int16[i].in;
  for (int c = 0; c < 3; c++) {
    size_t size = c10c_dtype_itemsize(to16[c]);
    char dst[M * 8];
    convert(dst, to16[c], src16, C10C_DTYPE_INT16, M, 1);
    for (size_t i = 0; i < M; i++)
      if (load(dst + i * size, size) != golden_from_int16[i].out[c])
        FAIL_AT("int16 %d -> dtype %d: 0x%" PRIx64 ", torch 0x%" PRIx64, src16[i], (int)to16[c],
                load(dst + i * size, size), golden_from_int16[i].out[c]);
  }
}

TEST(float32_truncates_to_integers_and_tests_to_bool_as_torch) {
  static const c10c_dtype to[6] = {C10C_DTYPE_INT8,  C10C_DTYPE_UINT8, C10C_DTYPE_INT16,
                                   C10C_DTYPE_INT32, C10C_DTYPE_INT64, C10C_DTYPE_BOOL};
  enum { N = COUNT(golden_float_to_int) };
  for (size_t s = 0; s < COUNT(strides); s++) {
    int64_t st = strides[s];
    uint32_t src[N * 3];
    for (size_t i = 0; i < N; i++) src[i * (size_t)st] = golden_float_to_int[i].in;
    for (int c = 0; c < 6; c++) {
      size_t size = c10c_dtype_itemsize(to[c]);
      char dst[N * 3 * 8];
      convert(dst, to[c], src, C10C_DTYPE_FLOAT32, N, st);
      for (size_t i = 0; i < N; i++) {
        uint64_t got = load(dst + i * (size_t)st * size, size);
        if (got != golden_float_to_int[i].out[c])
          FAIL_AT("float32 0x%08x -> dtype %d (stride %lld): 0x%" PRIx64 ", torch 0x%" PRIx64,
                  (unsigned)golden_float_to_int[i].in, (int)to[c], (long long)st, got,
                  golden_float_to_int[i].out[c]);
      }
    }
  }
}

TEST(complex_parts_keep_their_order_and_width) {
  enum { N = COUNT(golden_complex) };
  uint32_t src[N][2];
  for (size_t i = 0; i < N; i++) memcpy(src[i], golden_complex[i].in, sizeof src[i]);
  uint16_t c32[N][2];
  uint64_t c128[N][2];
  uint8_t b[N];
  uint16_t h[N];
  convert(c32, C10C_DTYPE_COMPLEX32, src, C10C_DTYPE_COMPLEX64, N, 1);
  convert(c128, C10C_DTYPE_COMPLEX128, src, C10C_DTYPE_COMPLEX64, N, 1);
  convert(b, C10C_DTYPE_BOOL, src, C10C_DTYPE_COMPLEX64, N, 1);
  convert(h, C10C_DTYPE_FLOAT16, src, C10C_DTYPE_COMPLEX64, N, 1);
  for (size_t i = 0; i < N; i++) {
    for (int p = 0; p < 2; p++) {
      ASSERT_EQ_U64(c32[i][p], golden_complex[i].c32[p]);
      ASSERT_EQ_U64(c128[i][p], golden_complex[i].c128[p]);
    }
    ASSERT_EQ(b[i], golden_complex[i].b);
    ASSERT_EQ_U64(h[i], golden_complex[i].h);
  }
  /* and back: complex32 -> complex64 widens each half, real part first */
  uint32_t back[N][2];
  convert(back, C10C_DTYPE_COMPLEX64, c32, C10C_DTYPE_COMPLEX32, N, 1);
  for (size_t i = 0; i < N; i++) {
    ASSERT_EQ_U64(back[i][0], golden_complex[i].back[0]);
    ASSERT_EQ_U64(back[i][1], golden_complex[i].back[1]);
  }
}

TEST(dlpack_dtypes_and_a_views_offset_are_torchs) {
  for (size_t k = 0; k < COUNT(golden_dlpack); k++) {
    int64_t n = 4;
    c10c_tensor *t = NULL;
    ASSERT_OK(
        c10c_tensor_empty(&t, &n, 1, golden_dlpack[k].type, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
    DLManagedTensor *dl = NULL;
    ASSERT_OK(c10c_tensor_to_dlpack(&dl, t));
    if (dl == NULL) continue;
    DLDataType dt = dl->dl_tensor.dtype;
    if (dt.code != golden_dlpack[k].code || dt.bits != golden_dlpack[k].bits ||
        dt.lanes != golden_dlpack[k].lanes)
      FAIL_AT("dtype %d exports (%u, %u, %u), torch (%u, %u, %u)", (int)golden_dlpack[k].type,
              dt.code, dt.bits, dt.lanes, golden_dlpack[k].code, golden_dlpack[k].bits,
              golden_dlpack[k].lanes);
    /* imported back, the same dtype */
    c10c_tensor *back = NULL;
    ASSERT_OK(c10c_tensor_from_dlpack(&back, dl));
    ASSERT_EQ(c10c_tensor_dtype(back), golden_dlpack[k].type);
    c10c_tensor_release(back);
    c10c_tensor_release(t);
  }
  /* a (4, 6) float32 tensor's [1:, 2::2]: its first element is at the data pointer plus
   * byte_offset, which is torch's (it exports the element's address and offset 0) */
  int64_t sizes[2] = {4, 6}, vs[2] = {3, 2}, vst[2] = {6, 2}, off = 8;
  c10c_tensor *base = NULL, *view = NULL;
  ASSERT_OK(
      c10c_tensor_empty(&base, sizes, 2, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_OK(c10c_tensor_as_strided(&view, base, vs, 2, vst, 2, &off));
  DLManagedTensor *dl = NULL;
  ASSERT_OK(c10c_tensor_to_dlpack(&dl, view));
  if (dl != NULL) {
    ASSERT_EQ_U64(dl->dl_tensor.byte_offset, golden_dlpack_view[0]);
    ASSERT_EQ_U64((uint64_t)((char *)dl->dl_tensor.data - (char *)c10c_tensor_data(base)) +
                      dl->dl_tensor.byte_offset,
                  golden_dlpack_view[1]);
    ASSERT_EQ(dl->dl_tensor.dtype.lanes, 1);
    dl->deleter(dl);
  }
  /* an import's byte_offset moves the data by bytes: three floats in, the fourth element */
  float buf[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  int64_t shape = 4;
  DLManagedTensor in = {{buf, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, &shape, NULL, 12}, NULL, NULL};
  c10c_tensor *t = NULL;
  ASSERT_OK(c10c_tensor_from_dlpack(&t, &in));
  if (t != NULL) {
    const float *p = c10c_tensor_data(t);
    ASSERT_TRUE(p[0] == 3.0f && p[3] == 6.0f);
    c10c_tensor_release(t);
  }
  c10c_tensor_release(view);
  c10c_tensor_release(base);
}

static const uint64_t plan_sizes[5] = {1 << 20, 3 << 19, 4096, 1 << 21, 512};
static const int64_t plan_streams[5] = {0, 0, 7, 0, 7};
static const uint64_t plan_begins[5] = {0, 1, 2, 3, 4}, plan_ends[5] = {2, 5, 6, 7, 8};

TEST(plan_files_are_the_same_bytes_on_every_target) {
  const char *path = "test_endian_golden.plan";
  uint64_t arena = 0, offsets[5];
  ASSERT_OK(c10c_plan_make(&arena, offsets, path, 1, 5, plan_sizes, plan_streams, plan_begins,
                           plan_ends));
  ASSERT_EQ_U64(arena, golden_plan_arena);
  for (int i = 0; i < 5; i++) ASSERT_EQ_U64(offsets[i], golden_plan_offsets[i]);
  unsigned char bytes[sizeof golden_plan_file + 1];
  FILE *f = fopen(path, "rb");
  ASSERT_TRUE(f != NULL);
  size_t n = f ? fread(bytes, 1, sizeof bytes, f) : 0;
  if (f) fclose(f);
  remove(path);
  ASSERT_EQ(n, sizeof golden_plan_file);
  for (size_t i = 0; i < n && i < sizeof golden_plan_file; i++)
    if (bytes[i] != golden_plan_file[i]) {
      FAIL_AT("plan file byte %zu is 0x%02x, x86-64 wrote 0x%02x", i, bytes[i],
              golden_plan_file[i]);
      break;
    }
  /* its checksum, FNV-1a 64 of the bytes before it, as a little-endian u64 */
  uint64_t h = UINT64_C(0xcbf29ce484222325), stored = 0;
  for (size_t i = 0; i + 8 < sizeof golden_plan_file + 0; i++)
    h = (h ^ golden_plan_file[i]) * UINT64_C(0x100000001b3);
  for (int i = 0; i < 8; i++)
    stored |= (uint64_t)golden_plan_file[sizeof golden_plan_file - 8 + (size_t)i] << (8 * i);
  ASSERT_EQ_U64(h, golden_plan_fnv);
  ASSERT_EQ_U64(stored, golden_plan_fnv);
}

TEST(a_plan_file_written_on_x86_64_reads_here) {
  c10c__plan *p = NULL;
  ASSERT_OK(c10c__plan_parse(&p, golden_plan_file, sizeof golden_plan_file, "golden"));
  if (p == NULL) return;
  ASSERT_EQ(p->device, 1);
  ASSERT_EQ(p->count, 5);
  ASSERT_EQ_U64(p->arena, golden_plan_arena);
  for (size_t i = 0; i < 5; i++) {
    ASSERT_EQ_U64(p->requests[i].size, plan_sizes[i]);
    ASSERT_EQ_U64(p->requests[i].alloc, plan_begins[i]);
    ASSERT_EQ_U64(p->requests[i].free, plan_ends[i]);
    ASSERT_EQ_U64(p->offsets[i], golden_plan_offsets[i]);
  }
  c10c__plan_destroy(p);
  /* one byte of the count flipped: the checksum refuses it */
  unsigned char bad[sizeof golden_plan_file];
  memcpy(bad, golden_plan_file, sizeof bad);
  bad[sizeof bad - 9] ^= 1;
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c__plan_parse(&p, bad, sizeof bad, "bad"));
}

RUN_TESTS(T(every_pattern_of_each_small_float_widens_to_torchs_float32),
          T(float32_narrows_to_each_small_float_as_torch_rounds),
          T(float64_narrows_through_float32_as_c10),
          T(integers_convert_between_widths_and_to_floats_as_torch),
          T(float32_truncates_to_integers_and_tests_to_bool_as_torch),
          T(complex_parts_keep_their_order_and_width),
          T(dlpack_dtypes_and_a_views_offset_are_torchs),
          T(plan_files_are_the_same_bytes_on_every_target),
          T(a_plan_file_written_on_x86_64_reads_here))
