/* DLPack export and import: the fields a consumer reads (checked against what torch 2.13 exports
 * for the same tensors: version 1.3, byte_offset 0, strides of size-1 dims normalised to 1, NULL
 * shape/strides for 0-dim), ownership (the producer's deleter runs exactly once, when the last
 * reference to the memory goes, from whichever thread drops it), read-only memory, and every
 * malformed input refused with src left to its owner. tests/python/test_dlpack.py exchanges with
 * numpy and torch themselves. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};

static c10c_tensor *make(const int64_t *sizes, size_t n, c10c_dtype dtype) {
  c10c_tensor *t = NULL;
  ASSERT_OK(c10c_tensor_empty(&t, sizes, n, dtype, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  return t;
}

/* ---- a foreign producer: memory it owns, a deleter that counts ---- */

static atomic_int deletes;

typedef struct producer {
  DLManagedTensorVersioned managed; /* first: the deleter gets this address */
  DLManagedTensor legacy;
  int64_t shape[4], strides[4];
  float data[64];
} producer;

static void count_versioned(DLManagedTensorVersioned *self) {
  atomic_fetch_add(&deletes, 1);
  free(self->manager_ctx);
}

static void count_legacy(DLManagedTensor *self) {
  atomic_fetch_add(&deletes, 1);
  free(self->manager_ctx);
}

/* A float32 2x3 row-major tensor over 0, 1, 2, ... (strides given, or NULL). */
static producer *new_producer(bool with_strides) {
  producer *p = calloc(1, sizeof *p);
  for (int i = 0; i < 64; i++) p->data[i] = (float)i;
  p->shape[0] = 2, p->shape[1] = 3;
  p->strides[0] = 3, p->strides[1] = 1;
  DLTensor dl = {
      p->data, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, p->shape, with_strides ? p->strides : NULL, 0};
  p->managed = (DLManagedTensorVersioned){{1, 0}, p, count_versioned, 0, dl};
  p->legacy = (DLManagedTensor){dl, p, count_legacy};
  return p;
}

TEST(export_fills_what_torch_fills) {
  int64_t s[3] = {4, 1, 5};
  c10c_tensor *t = make(s, 3, C10C_DTYPE_FLOAT32), *v = NULL;
  ASSERT_OK(c10c_tensor_slice(&v, t, 2, 1, 5, 2)); /* sizes [4, 1, 2], strides [5, 5, 2], off 1 */
  DLManagedTensorVersioned *m = NULL;
  ASSERT_OK(c10c_tensor_to_dlpack_versioned(&m, v));
  ASSERT_EQ(m->version.major, 1);
  ASSERT_EQ(m->version.minor, 3);
  ASSERT_EQ_U64(m->flags, 0);
  DLTensor *dl = &m->dl_tensor;
  ASSERT_TRUE(dl->data == (char *)c10c_tensor_data(t) + 4);
  ASSERT_EQ_U64(dl->byte_offset, 0);
  ASSERT_EQ(dl->device.device_type, kDLCPU);
  ASSERT_EQ(dl->device.device_id, 0);
  ASSERT_EQ(dl->ndim, 3);
  ASSERT_EQ(dl->dtype.code, kDLFloat);
  ASSERT_EQ(dl->dtype.bits, 32);
  ASSERT_EQ(dl->dtype.lanes, 1);
  ASSERT_EQ(dl->shape[0], 4);
  ASSERT_EQ(dl->shape[1], 1);
  ASSERT_EQ(dl->shape[2], 2);
  ASSERT_EQ(dl->strides[0], 5);
  ASSERT_EQ(dl->strides[1], 1);
  ASSERT_EQ(dl->strides[2], 2);
  /* the export holds the tensor: dropping ours keeps the storage alive */
  c10c_storage *storage = c10c_tensor_storage(t);
  uint32_t uses = c10c_storage_use_count(storage);
  c10c_tensor_release(v);
  ASSERT_EQ(c10c_storage_use_count(storage), uses);
  m->deleter(m);
  ASSERT_EQ(c10c_storage_use_count(storage), 1);

  DLManagedTensor *legacy = NULL;
  ASSERT_OK(c10c_tensor_to_dlpack(&legacy, t));
  ASSERT_TRUE(legacy->dl_tensor.data == c10c_tensor_data(t));
  legacy->deleter(legacy);

  c10c_tensor *scalar = make(NULL, 0, C10C_DTYPE_FLOAT64), *none = NULL;
  ASSERT_OK(c10c_tensor_to_dlpack_versioned(&m, scalar));
  ASSERT_TRUE(m->dl_tensor.shape == NULL && m->dl_tensor.strides == NULL);
  ASSERT_EQ(m->dl_tensor.ndim, 0);
  m->deleter(m);
  int64_t zero[2] = {0, 3};
  none = make(zero, 2, C10C_DTYPE_INT32);
  ASSERT_OK(c10c_tensor_to_dlpack_versioned(&m, none));
  ASSERT_TRUE(m->dl_tensor.data == NULL); /* no elements */
  m->deleter(m);
  c10c_tensor_release(none);
  c10c_tensor_release(scalar);
  c10c_tensor_release(t);
}

TEST(dtypes_export_as_torch_and_come_back) {
  const struct {
    c10c_dtype dtype;
    uint8_t code, bits;
    uint16_t lanes;
    c10c_dtype back; /* what an import makes of it; UNDEFINED: refused */
  } cases[] = {
      {C10C_DTYPE_BOOL, kDLBool, 8, 1, C10C_DTYPE_BOOL},
      {C10C_DTYPE_UINT8, kDLUInt, 8, 1, C10C_DTYPE_UINT8},
      {C10C_DTYPE_INT8, kDLInt, 8, 1, C10C_DTYPE_INT8},
      {C10C_DTYPE_INT16, kDLInt, 16, 1, C10C_DTYPE_INT16},
      {C10C_DTYPE_INT32, kDLInt, 32, 1, C10C_DTYPE_INT32},
      {C10C_DTYPE_INT64, kDLInt, 64, 1, C10C_DTYPE_INT64},
      {C10C_DTYPE_UINT16, kDLUInt, 16, 1, C10C_DTYPE_UINT16},
      {C10C_DTYPE_UINT32, kDLUInt, 32, 1, C10C_DTYPE_UINT32},
      {C10C_DTYPE_UINT64, kDLUInt, 64, 1, C10C_DTYPE_UINT64},
      {C10C_DTYPE_FLOAT16, kDLFloat, 16, 1, C10C_DTYPE_FLOAT16},
      {C10C_DTYPE_FLOAT32, kDLFloat, 32, 1, C10C_DTYPE_FLOAT32},
      {C10C_DTYPE_FLOAT64, kDLFloat, 64, 1, C10C_DTYPE_FLOAT64},
      {C10C_DTYPE_BFLOAT16, kDLBfloat, 16, 1, C10C_DTYPE_BFLOAT16},
      {C10C_DTYPE_COMPLEX32, kDLComplex, 32, 1, C10C_DTYPE_COMPLEX32},
      {C10C_DTYPE_COMPLEX64, kDLComplex, 64, 1, C10C_DTYPE_COMPLEX64},
      {C10C_DTYPE_COMPLEX128, kDLComplex, 128, 1, C10C_DTYPE_COMPLEX128},
      {C10C_DTYPE_FLOAT8_E5M2, kDLFloat8_e5m2, 8, 1, C10C_DTYPE_FLOAT8_E5M2},
      {C10C_DTYPE_FLOAT8_E4M3FN, kDLFloat8_e4m3fn, 8, 1, C10C_DTYPE_FLOAT8_E4M3FN},
      {C10C_DTYPE_FLOAT8_E5M2FNUZ, kDLFloat8_e5m2fnuz, 8, 1, C10C_DTYPE_FLOAT8_E5M2FNUZ},
      {C10C_DTYPE_FLOAT8_E4M3FNUZ, kDLFloat8_e4m3fnuz, 8, 1, C10C_DTYPE_FLOAT8_E4M3FNUZ},
      {C10C_DTYPE_FLOAT8_E8M0FNU, kDLFloat8_e8m0fnu, 8, 1, C10C_DTYPE_FLOAT8_E8M0FNU},
      /* as torch 2.13 exports and imports it: one element (a byte) of two 4-bit lanes */
      {C10C_DTYPE_FLOAT4_E2M1FN_X2, kDLFloat4_e2m1fn, 4, 2, C10C_DTYPE_FLOAT4_E2M1FN_X2},
      /* as torch 2.13 exports them; the sub-byte containers do not come back as themselves */
      {C10C_DTYPE_UINT3, kDLUInt, 8, 1, C10C_DTYPE_UINT8},
      {C10C_DTYPE_INT5, kDLInt, 8, 1, C10C_DTYPE_INT8},
  };
  int64_t s[1] = {3};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    c10c_tensor *t = make(s, 1, cases[i].dtype), *back = NULL;
    DLManagedTensorVersioned *m = NULL;
    ASSERT_OK(c10c_tensor_to_dlpack_versioned(&m, t));
    ASSERT_EQ(m->dl_tensor.dtype.code, cases[i].code);
    ASSERT_EQ(m->dl_tensor.dtype.bits, cases[i].bits);
    ASSERT_EQ(m->dl_tensor.dtype.lanes, cases[i].lanes);
    if (cases[i].back == C10C_DTYPE_UNDEFINED) {
      ASSERT_STATUS(C10C_STATUS_UNSUPPORTED, c10c_tensor_from_dlpack_versioned(&back, m));
      m->deleter(m); /* refused: still ours */
    } else {
      ASSERT_OK(c10c_tensor_from_dlpack_versioned(&back, m));
      ASSERT_EQ(c10c_tensor_dtype(back), cases[i].back);
      ASSERT_TRUE(c10c_tensor_data(back) == c10c_tensor_data(t));
      c10c_tensor_release(back); /* runs the export's deleter */
    }
    ASSERT_EQ(c10c_storage_use_count(c10c_tensor_storage(t)), 1);
    c10c_tensor_release(t);
  }
  const c10c_dtype refused[] = {C10C_DTYPE_QINT8, C10C_DTYPE_QUINT4X2, C10C_DTYPE_BITS8,
                                C10C_DTYPE_BITS1X8};
  const char *messages[] = {"QUInt/QInt types are not supported by dlpack",
                            "QUInt/QInt types are not supported by dlpack",
                            "Bit types are not supported by dlpack",
                            "Bit types are not supported by dlpack"};
  for (size_t i = 0; i < 4; i++) {
    c10c_tensor *t = make(s, 1, refused[i]);
    DLManagedTensorVersioned *m = NULL;
    ASSERT_STATUS(C10C_STATUS_UNSUPPORTED, c10c_tensor_to_dlpack_versioned(&m, t));
    ASSERT_ERROR_MESSAGE(messages[i]);
    ASSERT_TRUE(m == NULL);
    c10c_tensor_release(t);
  }
}

TEST(devices_map_as_aten) {
  int64_t s[1] = {2};
  c10c_tensor *meta = NULL;
  c10c_storage *nothing = NULL;
  ASSERT_OK(c10c_storage_new_external(&nothing, NULL, 0, (c10c_device){C10C_DEVICE_TYPE_META, -1},
                                      NULL, NULL));
  s[0] = 0;
  int64_t one[1] = {1};
  ASSERT_OK(c10c_tensor_new_from_storage(&meta, nothing, s, one, 1, 0, C10C_DTYPE_FLOAT32));
  c10c_storage_release(nothing);
  DLManagedTensorVersioned *m = NULL;
  ASSERT_STATUS(C10C_STATUS_UNSUPPORTED, c10c_tensor_to_dlpack_versioned(&m, meta));
  ASSERT_ERROR_MESSAGE("Cannot pack tensors on meta");
  c10c_tensor_release(meta);

  /* imports: host memory types are CPU; accelerators keep their index */
  const struct {
    int32_t type, id;
    c10c_device device;
  } ok[] = {
      {kDLCPU, 0, {C10C_DEVICE_TYPE_CPU, -1}},
      {kDLCUDAHost, 0, {C10C_DEVICE_TYPE_CPU, -1}},
      {kDLROCMHost, 0, {C10C_DEVICE_TYPE_CPU, -1}},
      {kDLCUDA, 3, {C10C_DEVICE_TYPE_CUDA, 3}},
      {kDLROCM, 1, {C10C_DEVICE_TYPE_HIP, 1}},
      {kDLOneAPI, 0, {C10C_DEVICE_TYPE_XPU, 0}},
      {kDLMAIA, 2, {C10C_DEVICE_TYPE_MAIA, 2}},
      {kDLExtDev, 5, {C10C_DEVICE_TYPE_PRIVATEUSE1, 5}},
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    producer *p = new_producer(true);
    p->managed.dl_tensor.device = (DLDevice){(DLDeviceType)ok[i].type, ok[i].id};
    c10c_tensor *t = NULL;
    int before = atomic_load(&deletes);
    ASSERT_OK(c10c_tensor_from_dlpack_versioned(&t, &p->managed));
    c10c_device d = c10c_tensor_device(t);
    ASSERT_EQ(d.type, ok[i].device.type);
    ASSERT_EQ(d.index, ok[i].device.index);
    /* and back out as the same DLPack device (host memory types come back as kDLCPU) */
    if (d.type != C10C_DEVICE_TYPE_CPU) {
      ASSERT_OK(c10c_tensor_to_dlpack_versioned(&m, t));
      ASSERT_EQ(m->dl_tensor.device.device_type, ok[i].type);
      /* the index too: ATen exports HIP and MAIA tensors as device 0 (fuzz_dlpack's round trip
       * of (kDLROCM, 1) came back as (kDLROCM, 0)) */
      ASSERT_EQ(m->dl_tensor.device.device_id, ok[i].id);
      DLDevice named;
      ASSERT_OK(c10c_device_to_dlpack(&named, d));
      ASSERT_EQ(named.device_type, ok[i].type);
      ASSERT_EQ(named.device_id, ok[i].id);
      m->deleter(m);
    }
    c10c_tensor_release(t);
    ASSERT_EQ(atomic_load(&deletes), before + 1);
  }
  const int32_t unknown[] = {5,         6,          kDLVulkan, kDLMetal, kDLVPI, kDLCUDAManaged,
                             kDLWebGPU, kDLHexagon, kDLTrn,    99,       -1};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    producer *p = new_producer(true);
    p->managed.dl_tensor.device.device_type = (DLDeviceType)unknown[i];
    c10c_tensor *t = NULL;
    ASSERT_STATUS(C10C_STATUS_UNSUPPORTED, c10c_tensor_from_dlpack_versioned(&t, &p->managed));
    ASSERT_TRUE(t == NULL);
    free(p);
  }
  /* device indices c10 cannot hold */
  const int32_t bad_ids[] = {128, -1, INT32_MIN};
  const char *bad_id_messages[] = {
      "DLPack device_id 128 is outside the device indices c10 has (0 to 127)",
      "DLPack device_id -1 is outside the device indices c10 has (0 to 127)",
      "DLPack device_id -2147483648 is outside the device indices c10 has (0 to 127)"};
  for (size_t i = 0; i < 3; i++) {
    producer *p = new_producer(true);
    p->managed.dl_tensor.device = (DLDevice){kDLCUDA, bad_ids[i]};
    c10c_tensor *t = NULL;
    int before = atomic_load(&deletes);
    ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_from_dlpack_versioned(&t, &p->managed));
    ASSERT_ERROR_MESSAGE(bad_id_messages[i]);
    ASSERT_TRUE(t == NULL);
    ASSERT_EQ(atomic_load(&deletes), before);
    p->managed.deleter(&p->managed);
  }
  /* the device of a tensor that cannot be exported; NULL */
  DLDevice named;
  ASSERT_STATUS(C10C_STATUS_UNSUPPORTED,
                c10c_device_to_dlpack(&named, (c10c_device){C10C_DEVICE_TYPE_META, -1}));
  ASSERT_ERROR_MESSAGE("Cannot pack tensors on meta");
  ASSERT_STATUS(C10C_STATUS_UNSUPPORTED,
                c10c_device_to_dlpack(&named, (c10c_device){C10C_DEVICE_TYPE_MPS, 0}));
  ASSERT_ERROR_MESSAGE("Cannot pack tensors on mps:0");
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_device_to_dlpack(NULL, cpu));
}

/* kDLOpenCL is c10's OPENCL, a grandfathered Caffe2 device type on which c10 makes no tensor
 * (torch 2.13's from_dlpack takes the struct and then fails inside from_blob with an internal
 * assert). It is refused as the device types without a c10 equivalent are, before the struct
 * changes hands: fuzz_dlpack found it failing late, with a dispatch-key message. */
TEST(opencl_is_refused_before_the_struct_changes_hands) {
  for (int legacy = 0; legacy < 2; legacy++) {
    producer *p = new_producer(true);
    p->managed.dl_tensor.device = (DLDevice){kDLOpenCL, 0};
    p->legacy.dl_tensor.device = (DLDevice){kDLOpenCL, 0};
    c10c_tensor *t = NULL;
    int before = atomic_load(&deletes);
    ASSERT_STATUS(C10C_STATUS_UNSUPPORTED,
                  legacy ? c10c_tensor_from_dlpack(&t, &p->legacy)
                         : c10c_tensor_from_dlpack_versioned(&t, &p->managed));
    ASSERT_ERROR_MESSAGE(
        "Unsupported device_type: 4 (kDLOpenCL: c10's OpenCL is a grandfathered Caffe2 device "
        "type without tensors)");
    ASSERT_TRUE(t == NULL);
    ASSERT_EQ(atomic_load(&deletes), before);
    p->managed.deleter(&p->managed); /* still ours */
    ASSERT_EQ(atomic_load(&deletes), before + 1);
  }
  /* c10's device maps to kDLOpenCL all the same (ATen's torchDeviceToDLDevice) */
  DLDevice named;
  ASSERT_OK(c10c_device_to_dlpack(&named, (c10c_device){C10C_DEVICE_TYPE_OPENCL, -1}));
  ASSERT_EQ(named.device_type, kDLOpenCL);
  ASSERT_EQ(named.device_id, 0);
}

/* A stride of a dim that never moves (size 0 or 1, or any dim of a tensor without elements)
 * addresses nothing; numpy exports a[::-1] of one element with stride -1. torch 2.13 imports
 * these, giving such a dim the stride a contiguous layout gives it; the strides below are what
 * torch.from_dlpack made of the same structs (tests/python/test_dlpack.py compares with torch
 * itself). fuzz_dlpack found them refused as negative strides. */
TEST(negative_strides_of_dims_that_never_move_are_normalised_as_torch) {
  const struct {
    int32_t ndim;
    int64_t shape[3], strides[3], expected[3];
  } cases[] = {
    {1, {1}, {-1}, {1}},
    {2, {1, 3}, {-5, 2}, {6, 2}},
    {2, {2, 1}, {1, -7}, {1, 1}},
    {3, {2, 1, 4}, {8, -1, 2}, {8, 8, 2}},
    {3, {2, 1, 4}, {4, -100, 1}, {4, 4, 1}},
    {2, {0, 3}, {5, -1}, {5, 1}},
    {3, {2, 0, 4}, {-4, 1, -1}, {1, 1, 1}},
#if SIZE_MAX > UINT32_MAX /* 2^63 bytes: past a 32-bit size_t's storage_max(), as in torch */
    {2, {1, INT64_C(1) << 62}, {-1, 2}, {1, 2}}, /* 2 * 2^62 is past int64: 1 */
#endif
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    producer *p = new_producer(true);
    DLTensor *dl = &p->managed.dl_tensor;
    dl->ndim = cases[i].ndim;
    memcpy(p->shape, cases[i].shape, sizeof cases[i].shape);
    memcpy(p->strides, cases[i].strides, sizeof cases[i].strides);
    if (cases[i].shape[1] == INT64_C(1) << 62) dl->dtype = (DLDataType){kDLInt, 8, 1};
    c10c_tensor *t = NULL;
    int before = atomic_load(&deletes);
    ASSERT_OK(c10c_tensor_from_dlpack_versioned(&t, &p->managed));
    for (int32_t d = 0; t != NULL && d < cases[i].ndim; d++) {
      ASSERT_EQ(c10c_tensor_sizes(t)[d], cases[i].shape[d]);
      ASSERT_EQ(c10c_tensor_strides(t)[d], cases[i].expected[d]);
    }
    c10c_tensor_release(t);
    ASSERT_EQ(atomic_load(&deletes), before + 1);
  }
  /* on a dim that moves they are still refused, with the strides as given */
  producer *p = new_producer(true);
  p->strides[1] = -1;
  c10c_tensor *t = NULL;
  ASSERT_STATUS(C10C_STATUS_UNSUPPORTED, c10c_tensor_from_dlpack_versioned(&t, &p->managed));
  ASSERT_ERROR_MESSAGE(
      "DLPack tensor with negative strides [3, -1]: libc10c tensors (as c10's) cannot have them; "
      "copy the data first");
  p->managed.deleter(&p->managed);
}

TEST(imports_share_memory_and_call_the_deleter_once_when_the_last_user_goes) {
  for (int order = 0; order < 3; order++) {
    producer *p = new_producer(order != 1);
    c10c_tensor *t = NULL, *view = NULL;
    int before = atomic_load(&deletes);
    ASSERT_OK(c10c_tensor_from_dlpack_versioned(&t, &p->managed));
    ASSERT_TRUE(c10c_tensor_data(t) == p->data);
    ASSERT_EQ(c10c_tensor_strides(t)[0], 3); /* also when strides were NULL */
    ASSERT_EQ(c10c_tensor_strides(t)[1], 1);
    ASSERT_OK(c10c_tensor_transpose(&view, t, 0, 1));
    c10c_storage *storage = c10c_storage_retain(c10c_tensor_storage(t));
    float *data = c10c_tensor_data(view);
    ASSERT_TRUE(data[1] == 1.0f);
    data[1] = 42.0f; /* writes land in the producer's memory */
    ASSERT_TRUE(p->data[1] == 42.0f);
    if (order == 0) c10c_tensor_release(t), c10c_tensor_release(view);
    if (order == 1) c10c_tensor_release(view), c10c_tensor_release(t);
    if (order == 2) c10c_tensor_release(t), c10c_tensor_release(view);
    ASSERT_EQ(atomic_load(&deletes), before); /* the storage reference still holds it */
    c10c_storage_release(storage);
    ASSERT_EQ(atomic_load(&deletes), before + 1);
  }
  /* legacy, with a byte offset */
  producer *p = new_producer(true);
  p->legacy.dl_tensor.byte_offset = 2 * sizeof(float);
  c10c_tensor *t = NULL;
  int before = atomic_load(&deletes);
  ASSERT_OK(c10c_tensor_from_dlpack(&t, &p->legacy));
  ASSERT_TRUE(((float *)c10c_tensor_data(t))[0] == 2.0f);
  ASSERT_FALSE(c10c_tensor_is_read_only(t));
  c10c_tensor_release(t);
  ASSERT_EQ(atomic_load(&deletes), before + 1);
}

TEST(read_only_memory_refuses_in_place_writes) {
  producer *p = new_producer(true);
  p->managed.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  c10c_tensor *t = NULL, *row = NULL, *src = NULL;
  ASSERT_OK(c10c_tensor_from_dlpack_versioned(&t, &p->managed));
  ASSERT_TRUE(c10c_tensor_is_read_only(t));
  ASSERT_OK(c10c_tensor_select(&row, t, 0, 1));
  ASSERT_TRUE(c10c_tensor_is_read_only(row)); /* views too */
  const char *message =
      "cannot write to a read-only tensor: its memory was shared read-only (a "
      "read-only numpy array or DLPack export); clone() it to get a writable "
      "copy";
  float one = 1.0f;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_fill_(row, &one));
  ASSERT_ERROR_MESSAGE(message);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_zero_(t));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_bump_version(t));
  int64_t s[1] = {3};
  src = make(s, 1, C10C_DTYPE_FLOAT32);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_copy_(row, src));
  ASSERT_TRUE(p->data[3] == 3.0f); /* nothing was written */
  /* a copy is writable; re-exporting keeps the flag, and legacy export refuses */
  c10c_tensor *copy = NULL;
  ASSERT_OK(c10c_tensor_clone(&copy, row, C10C_MEMORY_FORMAT_PRESERVE));
  ASSERT_OK(c10c_tensor_fill_(copy, &one));
  DLManagedTensorVersioned *m = NULL;
  ASSERT_OK(c10c_tensor_to_dlpack_versioned(&m, row));
  ASSERT_EQ_U64(m->flags, DLPACK_FLAG_BITMASK_READ_ONLY);
  m->deleter(m);
  DLManagedTensor *legacy = NULL;
  ASSERT_STATUS(C10C_STATUS_UNSUPPORTED, c10c_tensor_to_dlpack(&legacy, row));
  c10c_tensor_release(copy);
  c10c_tensor_release(src);
  c10c_tensor_release(row);
  c10c_tensor_release(t);
}

/* Each bad input: a clean status, no tensor, and the producer's struct left to its owner. */
TEST(malformed_inputs_are_refused_and_left_to_their_owner) {
  int before = atomic_load(&deletes);
  c10c_tensor *t = NULL;
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_from_dlpack_versioned(&t, NULL));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_from_dlpack(&t, NULL));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_to_dlpack_versioned(NULL, NULL));
  DLManagedTensorVersioned *none = (DLManagedTensorVersioned *)&t; /* a non-NULL garbage value */
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_to_dlpack_versioned(&none, NULL));
  ASSERT_TRUE(none == NULL);
  DLManagedTensor *legacy_none = NULL;
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_to_dlpack(&legacy_none, NULL));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_to_dlpack(NULL, NULL));
  {
    producer *p = new_producer(true);
    ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_from_dlpack_versioned(NULL, &p->managed));
    ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_from_dlpack(NULL, &p->legacy));
    ASSERT_EQ(atomic_load(&deletes), before);
    p->managed.deleter(&p->managed);
    before++;
  }
  enum { CASES = 22 };
  const char *expected[CASES] = {
      "DLPack version 2.0 is not supported: libc10c reads major version 1",
      "ATen does not support lanes != 1 for dtype code2",
      "Unsupported kInt bits 4",
      "Unsupported kFloat bits 8",
      "Unsupported code 7",
      "Unsupported code 3",
      "Unsupported kDLBool bits 1",
      "Trying to create tensor with negative dimension -2: [-2, 3]",
      "DLPack tensor with negative strides [-3, 1]: libc10c tensors (as c10's) cannot have "
      "them; copy the data first",
      NULL, /* shape NULL: a null-argument message */
      NULL, /* data NULL with elements */
      "DLPack tensor with negative ndim -1",
      "Storage size calculation overflowed with sizes=[2, 3] and strides=[4611686018427387904, "
      "4611686018427387904]",
      "DLPack byte_offset 18446744073709551615 overflows the address space",
      "numel: integer multiplication overflow",
      "Stride calculation overflowed",
      "Unsupported device_type: 5",
      "DLPack device_id -1 is outside the device indices c10 has (0 to 127)",
      "Unsupported kDLBool bits 16",
      /* float4_e2m1fn_x2 only as torch 2.13 takes it, (17, 4, 2), with its messages */
      "Unsupported kDLFloat4_e2m1fn lanes 1",
      "Unsupported kDLFloat4_e2m1fn bits 8",
      "ATen does not support lanes != 1 for dtype code15",
  };
  const c10c_status statuses[CASES] = {
      C10C_STATUS_UNSUPPORTED,  C10C_STATUS_UNSUPPORTED,  C10C_STATUS_UNSUPPORTED,
      C10C_STATUS_UNSUPPORTED,  C10C_STATUS_UNSUPPORTED,  C10C_STATUS_UNSUPPORTED,
      C10C_STATUS_UNSUPPORTED,  C10C_STATUS_ERROR,        C10C_STATUS_UNSUPPORTED,
      C10C_STATUS_NULL_POINTER, C10C_STATUS_NULL_POINTER, C10C_STATUS_ERROR,
      C10C_STATUS_OVERFLOW,     C10C_STATUS_OVERFLOW,     C10C_STATUS_OVERFLOW,
      C10C_STATUS_OVERFLOW,     C10C_STATUS_UNSUPPORTED,  C10C_STATUS_ERROR,
      C10C_STATUS_UNSUPPORTED,  C10C_STATUS_UNSUPPORTED,  C10C_STATUS_UNSUPPORTED,
      C10C_STATUS_UNSUPPORTED,
  };
  for (int i = 0; i < CASES; i++) {
    producer *p = new_producer(true);
    DLManagedTensorVersioned *m = &p->managed;
    DLTensor *dl = &m->dl_tensor;
    switch (i) {
      case 0: m->version.major = 2; break;
      case 1: dl->dtype.lanes = 2; break;
      case 2: dl->dtype = (DLDataType){kDLInt, 4, 1}; break;
      case 3: dl->dtype.bits = 8; break;
      case 4: dl->dtype = (DLDataType){kDLFloat8_e3m4, 8, 1}; break;
      case 5: dl->dtype = (DLDataType){kDLOpaqueHandle, 64, 1}; break;
      case 6: dl->dtype = (DLDataType){kDLBool, 1, 1}; break;
      case 7: p->shape[0] = -2; break;
      case 8: p->strides[0] = -3; break;
      case 9: dl->shape = NULL; break;
      case 10: dl->data = NULL; break;
      case 11: dl->ndim = -1; break;
      case 12: p->strides[0] = p->strides[1] = INT64_C(1) << 62; break;
      case 13: dl->byte_offset = UINT64_MAX; break;
      case 14: /* 2^32 x 2^32 elements over one (stride 0) */
        p->shape[0] = p->shape[1] = INT64_C(1) << 32;
        p->strides[0] = p->strides[1] = 0;
        break;
      case 15: /* contiguous strides of [0, 2^40, 2^40, 2] are past int64, with no element */
        dl->ndim = 4;
        p->shape[0] = 0;
        p->shape[1] = p->shape[2] = INT64_C(1) << 40;
        p->shape[3] = 2;
        dl->strides = NULL;
        break;
      case 16: dl->device.device_type = (DLDeviceType)5; break;
      case 17: dl->device = (DLDevice){kDLExtDev, -1}; break;
      case 18: dl->dtype = (DLDataType){kDLBool, 16, 1}; break;
      case 19: dl->dtype = (DLDataType){kDLFloat4_e2m1fn, 4, 1}; break;
      case 20: dl->dtype = (DLDataType){kDLFloat4_e2m1fn, 8, 2}; break;
      case 21: dl->dtype = (DLDataType){kDLFloat6_e2m3fn, 6, 2}; break;
    }
    /* the versioned struct, and the same fields as a legacy struct */
    ASSERT_STATUS(statuses[i], c10c_tensor_from_dlpack_versioned(&t, m));
    if (expected[i] != NULL) ASSERT_ERROR_MESSAGE(expected[i]);
    ASSERT_TRUE(t == NULL);
    if (i > 0) { /* (0: the version, which the legacy struct has not) */
      p->legacy.dl_tensor = *dl;
      ASSERT_STATUS(statuses[i], c10c_tensor_from_dlpack(&t, &p->legacy));
      if (expected[i] != NULL) ASSERT_ERROR_MESSAGE(expected[i]);
      ASSERT_TRUE(t == NULL);
    }
    m->deleter(m); /* still the caller's */
  }
  ASSERT_EQ(atomic_load(&deletes), before + CASES);
  /* a tensor without elements may have any data pointer, NULL included */
  producer *p = new_producer(false);
  p->shape[0] = 0;
  p->managed.dl_tensor.data = NULL;
  ASSERT_OK(c10c_tensor_from_dlpack_versioned(&t, &p->managed));
  ASSERT_EQ(c10c_tensor_numel(t), 0);
  c10c_tensor_release(t);
  ASSERT_EQ(atomic_load(&deletes), before + CASES + 1);
}

/* An export reads nothing, but hands out a pointer to elements: refused when the storage no
 * longer holds them (set_nbytes or a resize shrank it), as every data access is (tensor.h). */
TEST(exports_refuse_a_tensor_whose_storage_shrank) {
  int64_t s[2] = {4, 4};
  c10c_tensor *t = make(s, 2, C10C_DTYPE_FLOAT32), *row = NULL;
  ASSERT_OK(c10c_tensor_select(&row, t, 0, 1)); /* bytes 16..31 */
  c10c_storage *storage = c10c_tensor_storage(t);
  ASSERT_OK(c10c_storage_set_nbytes(storage, 24));
  DLManagedTensorVersioned *m = NULL;
  DLManagedTensor *legacy = NULL;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_to_dlpack_versioned(&m, row));
  ASSERT_ERROR_MESSAGE(
      "to_dlpack: the tensor's elements (sizes [4], strides [1], storage offset 4, itemsize 4) "
      "reach 32 bytes of its storage, which holds 24 bytes now (resized or set_nbytes after the "
      "tensor was made)");
  ASSERT_TRUE(m == NULL);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_to_dlpack(&legacy, t));
  ASSERT_TRUE(legacy == NULL);
  ASSERT_OK(c10c_storage_resize(storage, 0));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_to_dlpack_versioned(&m, t));
  /* an empty view still exports (NULL data), and everything does once the bytes are back */
  c10c_tensor *none = NULL;
  ASSERT_OK(c10c_tensor_narrow(&none, t, 0, 1, 0));
  ASSERT_OK(c10c_tensor_to_dlpack_versioned(&m, none));
  ASSERT_TRUE(m->dl_tensor.data == NULL);
  m->deleter(m);
  ASSERT_OK(c10c_storage_resize(storage, 64));
  ASSERT_OK(c10c_tensor_to_dlpack_versioned(&m, row));
  ASSERT_TRUE(m->dl_tensor.data == (char *)c10c_storage_data(storage) + 16);
  m->deleter(m);
  c10c_tensor_release(none);
  c10c_tensor_release(row);
  c10c_tensor_release(t);
}

/* Exports made on one thread, consumed (deleted) on another; imports made on one thread,
 * dropped on another: every deleter exactly once (TSan checks the hand-over). */
enum { ITEMS = 2000 };
static DLManagedTensorVersioned *exported[ITEMS];
static c10c_tensor *imported[ITEMS];

static void *delete_exports(void *arg) {
  (void)arg;
  for (int i = 0; i < ITEMS; i++) exported[i]->deleter(exported[i]);
  return NULL;
}

static void *drop_imports(void *arg) {
  (void)arg;
  for (int i = 0; i < ITEMS; i++) c10c_tensor_release(imported[i]);
  return NULL;
}

TEST(exports_and_imports_cross_threads) {
  int64_t s[2] = {4, 4};
  c10c_tensor *t = make(s, 2, C10C_DTYPE_FLOAT32);
  for (int i = 0; i < ITEMS; i++) ASSERT_OK(c10c_tensor_to_dlpack_versioned(&exported[i], t));
  ASSERT_EQ(c10c_storage_use_count(c10c_tensor_storage(t)), 1);
  int before = atomic_load(&deletes);
  for (int i = 0; i < ITEMS; i++) {
    producer *p = new_producer(i % 2 == 0);
    ASSERT_OK(c10c_tensor_from_dlpack_versioned(&imported[i], &p->managed));
  }
  pthread_t a, b;
  ASSERT_EQ(pthread_create(&a, NULL, delete_exports, NULL), 0);
  ASSERT_EQ(pthread_create(&b, NULL, drop_imports, NULL), 0);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  ASSERT_EQ(atomic_load(&deletes), before + ITEMS);
  ASSERT_EQ(c10c_storage_use_count(c10c_tensor_storage(t)), 1);
  c10c_tensor_release(t);
}

RUN_TESTS(T(export_fills_what_torch_fills), T(dtypes_export_as_torch_and_come_back),
          T(devices_map_as_aten), T(opencl_is_refused_before_the_struct_changes_hands),
          T(negative_strides_of_dims_that_never_move_are_normalised_as_torch),
          T(imports_share_memory_and_call_the_deleter_once_when_the_last_user_goes),
          T(read_only_memory_refuses_in_place_writes),
          T(malformed_inputs_are_refused_and_left_to_their_owner),
          T(exports_refuse_a_tensor_whose_storage_shrank), T(exports_and_imports_cross_threads))
