/* DLPack export and import (see include/c10c/dlpack.h). Mappings of dtypes and devices follow
 * ATen's DLConvertor.cpp (torch 2.13), with c10's float8 types both ways and host-memory device
 * types (kDLCUDAHost, kDLROCMHost) read as CPU, as numpy reads them. */
#include <stddef.h>
#include <string.h>

#include "c10c/dlpack.h"
#include "checked.h"
#include "geometry.h"
#include "storage_internal.h"
#include "sysmem.h"
#include "tensor_internal.h"

/* The layouts the specification implies on LP64 (abi_interop.md 1.2): a mismatch here would
 * corrupt every exchange, so the build fails instead. */
_Static_assert(sizeof(DLPackVersion) == 8, "DLPackVersion");
_Static_assert(sizeof(DLDevice) == 8 && offsetof(DLDevice, device_id) == 4, "DLDevice");
_Static_assert(sizeof(DLDataType) == 4 && offsetof(DLDataType, lanes) == 2, "DLDataType");
_Static_assert(sizeof(void *) != 8 ||
                   (sizeof(DLTensor) == 48 && offsetof(DLTensor, device) == 8 &&
                    offsetof(DLTensor, ndim) == 16 && offsetof(DLTensor, dtype) == 20 &&
                    offsetof(DLTensor, shape) == 24 && offsetof(DLTensor, strides) == 32 &&
                    offsetof(DLTensor, byte_offset) == 40),
               "DLTensor");
_Static_assert(sizeof(void *) != 8 ||
                   (sizeof(DLManagedTensor) == 64 && offsetof(DLManagedTensor, manager_ctx) == 48 &&
                    offsetof(DLManagedTensor, deleter) == 56),
               "DLManagedTensor");
_Static_assert(sizeof(void *) != 8 || (sizeof(DLManagedTensorVersioned) == 80 &&
                                       offsetof(DLManagedTensorVersioned, manager_ctx) == 8 &&
                                       offsetof(DLManagedTensorVersioned, deleter) == 16 &&
                                       offsetof(DLManagedTensorVersioned, flags) == 24 &&
                                       offsetof(DLManagedTensorVersioned, dl_tensor) == 32),
               "DLManagedTensorVersioned");
_Static_assert(C10C_DLPACK_FLAG_BITMASK_READ_ONLY == DLPACK_FLAG_BITMASK_READ_ONLY &&
                   C10C_DLPACK_FLAG_BITMASK_IS_COPIED == DLPACK_FLAG_BITMASK_IS_COPIED &&
                   C10C_DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED ==
                       DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED,
               "the flags' enum constants are DLPack's");
_Static_assert(sizeof(DLDeviceType) == 4, "DLDeviceType is int-sized (no -fshort-enums)");
_Static_assert(sizeof(DLManagedTensor) % _Alignof(int64_t) == 0 &&
                   sizeof(DLManagedTensorVersioned) % _Alignof(int64_t) == 0,
               "an export's shape and strides follow its struct, aligned");

/* ---- dtypes ---- */

static c10c_status dl_dtype_of(DLDataType *out, c10c_dtype dtype) {
  out->lanes = 1;
  out->bits = (uint8_t)(c10c_dtype_itemsize(dtype) * 8);
  switch (dtype) {
    case C10C_DTYPE_UINT8:
    case C10C_DTYPE_UINT16:
    case C10C_DTYPE_UINT32:
    case C10C_DTYPE_UINT64:
    case C10C_DTYPE_UINT1:
    case C10C_DTYPE_UINT2:
    case C10C_DTYPE_UINT3:
    case C10C_DTYPE_UINT4:
    case C10C_DTYPE_UINT5:
    case C10C_DTYPE_UINT6:
    case C10C_DTYPE_UINT7: out->code = kDLUInt; return C10C_STATUS_OK;
    case C10C_DTYPE_INT8:
    case C10C_DTYPE_INT16:
    case C10C_DTYPE_INT32:
    case C10C_DTYPE_INT64:
    case C10C_DTYPE_INT1:
    case C10C_DTYPE_INT2:
    case C10C_DTYPE_INT3:
    case C10C_DTYPE_INT4:
    case C10C_DTYPE_INT5:
    case C10C_DTYPE_INT6:
    case C10C_DTYPE_INT7: out->code = kDLInt; return C10C_STATUS_OK;
    case C10C_DTYPE_FLOAT16:
    case C10C_DTYPE_FLOAT32:
    case C10C_DTYPE_FLOAT64: out->code = kDLFloat; return C10C_STATUS_OK;
    case C10C_DTYPE_BFLOAT16: out->code = kDLBfloat; return C10C_STATUS_OK;
    case C10C_DTYPE_COMPLEX32:
    case C10C_DTYPE_COMPLEX64:
    case C10C_DTYPE_COMPLEX128: out->code = kDLComplex; return C10C_STATUS_OK;
    case C10C_DTYPE_BOOL: out->code = kDLBool; return C10C_STATUS_OK;
    case C10C_DTYPE_FLOAT8_E5M2: out->code = kDLFloat8_e5m2; return C10C_STATUS_OK;
    case C10C_DTYPE_FLOAT8_E4M3FN: out->code = kDLFloat8_e4m3fn; return C10C_STATUS_OK;
    case C10C_DTYPE_FLOAT8_E5M2FNUZ: out->code = kDLFloat8_e5m2fnuz; return C10C_STATUS_OK;
    case C10C_DTYPE_FLOAT8_E4M3FNUZ: out->code = kDLFloat8_e4m3fnuz; return C10C_STATUS_OK;
    case C10C_DTYPE_FLOAT8_E8M0FNU: out->code = kDLFloat8_e8m0fnu; return C10C_STATUS_OK;
    case C10C_DTYPE_FLOAT4_E2M1FN_X2: /* two 4-bit values per byte, as torch exports it */
      out->code = kDLFloat4_e2m1fn;
      out->bits = 4;
      out->lanes = 2;
      return C10C_STATUS_OK;
    case C10C_DTYPE_QINT8:
    case C10C_DTYPE_QUINT8:
    case C10C_DTYPE_QINT32:
    case C10C_DTYPE_QUINT4X2:
    case C10C_DTYPE_QUINT2X4:
      return c10c__fail(C10C_STATUS_UNSUPPORTED, "QUInt/QInt types are not supported by dlpack");
    case C10C_DTYPE_BITS1X8:
    case C10C_DTYPE_BITS2X4:
    case C10C_DTYPE_BITS4X2:
    case C10C_DTYPE_BITS8:
    case C10C_DTYPE_BITS16:
      return c10c__fail(C10C_STATUS_UNSUPPORTED, "Bit types are not supported by dlpack");
    default: break;
  }
  return c10c__fail(C10C_STATUS_UNSUPPORTED, "%s is not a valid ScalarType",
                    dtype == C10C_DTYPE_UNDEFINED ? "Undefined" : "this");
}

static c10c_status unsupported_bits(const char *kind, DLDataType dt) {
  return c10c__fail(C10C_STATUS_UNSUPPORTED, "Unsupported %s bits %u", kind, (unsigned)dt.bits);
}

/* ATen's toScalarType (torch 2.13), with its messages, plus c10's float8 types. */
static c10c_status dtype_of_dl(c10c_dtype *out, DLDataType dt) {
  /* float4_e2m1fn_x2 is the one type that comes with 2 lanes: one element is a byte holding two
   * 4-bit values, so (kDLFloat4_e2m1fn, 4, 2) is what torch exports and the only form it
   * imports; its bits are checked before its lanes, as torch does */
  if (dt.code == kDLFloat4_e2m1fn) {
    if (dt.bits != 4) return unsupported_bits("kDLFloat4_e2m1fn", dt);
    if (dt.lanes != 2)
      return c10c__fail(C10C_STATUS_UNSUPPORTED, "Unsupported kDLFloat4_e2m1fn lanes %u",
                        (unsigned)dt.lanes);
    *out = C10C_DTYPE_FLOAT4_E2M1FN_X2;
    return C10C_STATUS_OK;
  }
  if (dt.lanes != 1)
    return c10c__fail(C10C_STATUS_UNSUPPORTED, "ATen does not support lanes != 1 for dtype code%u",
                      (unsigned)dt.code);
  switch (dt.code) {
    case kDLUInt:
      switch (dt.bits) {
        case 8: *out = C10C_DTYPE_UINT8; return C10C_STATUS_OK;
        case 16: *out = C10C_DTYPE_UINT16; return C10C_STATUS_OK;
        case 32: *out = C10C_DTYPE_UINT32; return C10C_STATUS_OK;
        case 64: *out = C10C_DTYPE_UINT64; return C10C_STATUS_OK;
        default: return unsupported_bits("kUInt", dt);
      }
    case kDLInt:
      switch (dt.bits) {
        case 8: *out = C10C_DTYPE_INT8; return C10C_STATUS_OK;
        case 16: *out = C10C_DTYPE_INT16; return C10C_STATUS_OK;
        case 32: *out = C10C_DTYPE_INT32; return C10C_STATUS_OK;
        case 64: *out = C10C_DTYPE_INT64; return C10C_STATUS_OK;
        default: return unsupported_bits("kInt", dt);
      }
    case kDLFloat:
      switch (dt.bits) {
        case 16: *out = C10C_DTYPE_FLOAT16; return C10C_STATUS_OK;
        case 32: *out = C10C_DTYPE_FLOAT32; return C10C_STATUS_OK;
        case 64: *out = C10C_DTYPE_FLOAT64; return C10C_STATUS_OK;
        default: return unsupported_bits("kFloat", dt);
      }
    case kDLBfloat:
      if (dt.bits != 16) return unsupported_bits("kFloat", dt); /* sic, ATen's word */
      *out = C10C_DTYPE_BFLOAT16;
      return C10C_STATUS_OK;
    case kDLComplex:
      switch (dt.bits) {
        case 32: *out = C10C_DTYPE_COMPLEX32; return C10C_STATUS_OK;
        case 64: *out = C10C_DTYPE_COMPLEX64; return C10C_STATUS_OK;
        case 128: *out = C10C_DTYPE_COMPLEX128; return C10C_STATUS_OK;
        default: return unsupported_bits("kFloat", dt);
      }
    case kDLBool:
      if (dt.bits != 8) return unsupported_bits("kDLBool", dt);
      *out = C10C_DTYPE_BOOL;
      return C10C_STATUS_OK;
    case kDLFloat8_e5m2:
    case kDLFloat8_e4m3fn:
    case kDLFloat8_e5m2fnuz:
    case kDLFloat8_e4m3fnuz:
    case kDLFloat8_e8m0fnu: {
      if (dt.bits != 8) return unsupported_bits("float8", dt);
      static const c10c_dtype float8[] = {
          [kDLFloat8_e5m2] = C10C_DTYPE_FLOAT8_E5M2,
          [kDLFloat8_e4m3fn] = C10C_DTYPE_FLOAT8_E4M3FN,
          [kDLFloat8_e5m2fnuz] = C10C_DTYPE_FLOAT8_E5M2FNUZ,
          [kDLFloat8_e4m3fnuz] = C10C_DTYPE_FLOAT8_E4M3FNUZ,
          [kDLFloat8_e8m0fnu] = C10C_DTYPE_FLOAT8_E8M0FNU,
      };
      *out = float8[dt.code];
      return C10C_STATUS_OK;
    }
    default: return c10c__fail(C10C_STATUS_UNSUPPORTED, "Unsupported code %u", (unsigned)dt.code);
  }
}

/* ---- devices ---- */

static c10c_status dl_device_of(DLDevice *out, c10c_device device) {
  /* ATen names the index for CUDA and PrivateUse1 (and XPU) and 0 for HIP and MAIA, which would
   * send a consumer of an export from HIP or MAIA device 1 to device 0; the index is kept for
   * every device that has one here (as torch's ROCm builds keep it for kDLROCM), so that an
   * import from (kDLROCM, 1) exports as (kDLROCM, 1) again. */
  int32_t index = device.index < 0 ? 0 : device.index;
  switch (device.type) {
    case C10C_DEVICE_TYPE_CPU: *out = (DLDevice){kDLCPU, 0}; return C10C_STATUS_OK;
    case C10C_DEVICE_TYPE_CUDA: *out = (DLDevice){kDLCUDA, index}; return C10C_STATUS_OK;
    case C10C_DEVICE_TYPE_PRIVATEUSE1: *out = (DLDevice){kDLExtDev, index}; return C10C_STATUS_OK;
    case C10C_DEVICE_TYPE_OPENCL: *out = (DLDevice){kDLOpenCL, 0}; return C10C_STATUS_OK;
    case C10C_DEVICE_TYPE_HIP: *out = (DLDevice){kDLROCM, index}; return C10C_STATUS_OK;
    case C10C_DEVICE_TYPE_XPU: *out = (DLDevice){kDLOneAPI, index}; return C10C_STATUS_OK;
    case C10C_DEVICE_TYPE_MAIA: *out = (DLDevice){kDLMAIA, index}; return C10C_STATUS_OK;
    default: break;
  }
  char name[64];
  c10c_device_to_string(name, sizeof name, device);
  return c10c__fail(C10C_STATUS_UNSUPPORTED, "Cannot pack tensors on %s", name);
}

/* ATen's getATenDevice, but for OpenCL: ATen maps it to c10's OPENCL and then fails inside
 * from_blob with an internal assert (a grandfathered Caffe2 device type has no dispatch key, so no
 * tensor lives there); here it is refused up front, as the device types without a c10 equivalent
 * are, before the struct changes hands. */
static c10c_status device_of_dl(c10c_device *out, DLDevice dl) {
  c10c_device_type type;
  switch ((int)dl.device_type) {
    case kDLCPU:
    case kDLCUDAHost:
    case kDLROCMHost: *out = (c10c_device){C10C_DEVICE_TYPE_CPU, -1}; return C10C_STATUS_OK;
    case kDLCUDA: type = C10C_DEVICE_TYPE_CUDA; break;
    case kDLROCM: type = C10C_DEVICE_TYPE_HIP; break;
    case kDLOneAPI: type = C10C_DEVICE_TYPE_XPU; break;
    case kDLMAIA: type = C10C_DEVICE_TYPE_MAIA; break;
    case kDLExtDev: type = C10C_DEVICE_TYPE_PRIVATEUSE1; break;
    case kDLOpenCL:
      return c10c__fail(C10C_STATUS_UNSUPPORTED,
                        "Unsupported device_type: %d (kDLOpenCL: c10's OpenCL is a grandfathered "
                        "Caffe2 device type without tensors)",
                        (int)dl.device_type);
    default:
      return c10c__fail(C10C_STATUS_UNSUPPORTED, "Unsupported device_type: %d",
                        (int)dl.device_type);
  }
  if (dl.device_id < 0 || dl.device_id > 127)
    return c10c__fail(C10C_STATUS_ERROR,
                      "DLPack device_id %d is outside the device indices c10 has (0 to 127)",
                      (int)dl.device_id);
  *out = (c10c_device){type, (int8_t)dl.device_id};
  return C10C_STATUS_OK;
}

c10c_status c10c_device_to_dlpack(DLDevice *out, c10c_device device) {
  C10C__CHECK_NOT_NULL(out);
  return dl_device_of(out, device);
}

/* ---- export ---- */

static void delete_versioned(DLManagedTensorVersioned *self) {
  if (self == NULL) return;
  c10c_tensor_release(self->manager_ctx);
  c10c__free(self);
}

static void delete_legacy(DLManagedTensor *self) {
  if (self == NULL) return;
  c10c_tensor_release(self->manager_ctx);
  c10c__free(self);
}

/* An export is one block: the managed struct (size bytes, its DLTensor at dl_offset), then
 * shape[ndim] and strides[ndim]. The DLTensor is filled from tensor; the caller fills the rest,
 * manager_ctx being a reference to the tensor (its geometry never changes, so it backs
 * shape/strides, and its storage keeps the data). NULL with *st set on failure. */
static void *export_block(c10c_status *st, const c10c_tensor *tensor, size_t size,
                          size_t dl_offset) {
  size_t ndim = c10c_tensor_dim(tensor);
  /* a meta tensor has no bytes to be out of: its device is what DLPack refuses ("Cannot pack
   * tensors on meta", as torch), whatever its storage's size */
  bool meta = c10c_tensor_device(tensor).type == C10C_DEVICE_TYPE_META;
  *st = meta ? C10C_STATUS_OK : c10c__tensor_check_extent(tensor, "to_dlpack");
  if (*st != C10C_STATUS_OK) return NULL;
  if (ndim > (size_t)INT32_MAX) {
    *st = c10c__fail(C10C_STATUS_UNSUPPORTED, "DLPack holds at most %d dims", INT32_MAX);
    return NULL;
  }
  char *block = c10c__malloc(size + 2 * ndim * sizeof(int64_t));
  if (block == NULL) {
    *st = c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory exporting a tensor");
    return NULL;
  }
  DLTensor *dl = (DLTensor *)(void *)(block + dl_offset);
  int64_t *dims = (int64_t *)(void *)(block + size);
  *st = dl_dtype_of(&dl->dtype, c10c_tensor_dtype(tensor));
  if (*st == C10C_STATUS_OK) *st = dl_device_of(&dl->device, c10c_tensor_device(tensor));
  if (*st != C10C_STATUS_OK) {
    c10c__free(block);
    return NULL;
  }
  const int64_t *sizes = c10c_tensor_sizes(tensor), *strides = c10c_tensor_strides(tensor);
  dl->ndim = (int32_t)ndim;
  dl->shape = ndim > 0 ? dims : NULL;
  dl->strides = ndim > 0 ? dims + ndim : NULL;
  for (size_t i = 0; i < ndim; i++) {
    dims[i] = sizes[i];
    dims[ndim + i] = sizes[i] < 2 ? 1 : strides[i]; /* torch normalises these (gh-83069) */
  }
  dl->data = c10c_tensor_numel(tensor) > 0 ? c10c_tensor_data(tensor) : NULL;
  dl->byte_offset = 0;
  return block;
}

c10c_status c10c_tensor_to_dlpack_versioned(DLManagedTensorVersioned **out,
                                            const c10c_tensor *tensor) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  C10C__CHECK_NOT_NULL(tensor);
  c10c_status st;
  DLManagedTensorVersioned *m =
      export_block(&st, tensor, sizeof *m, offsetof(DLManagedTensorVersioned, dl_tensor));
  if (m == NULL) return st;
  m->version = (DLPackVersion){C10C_DLPACK_MAJOR, C10C_DLPACK_MINOR};
  m->flags = c10c_tensor_is_read_only(tensor) ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  m->manager_ctx = c10c_tensor_retain((c10c_tensor *)(uintptr_t)tensor);
  m->deleter = delete_versioned;
  *out = m;
  return C10C_STATUS_OK;
}

c10c_status c10c_tensor_to_dlpack(DLManagedTensor **out, const c10c_tensor *tensor) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  C10C__CHECK_NOT_NULL(tensor);
  if (c10c_tensor_is_read_only(tensor))
    return c10c__fail(C10C_STATUS_UNSUPPORTED,
                      "Cannot export a read-only tensor as a legacy DLManagedTensor, which "
                      "cannot say it is read-only; ask for DLPack 1.0 or later (max_version)");
  c10c_status st;
  DLManagedTensor *m = export_block(&st, tensor, sizeof *m, offsetof(DLManagedTensor, dl_tensor));
  if (m == NULL) return st;
  m->manager_ctx = c10c_tensor_retain((c10c_tensor *)(uintptr_t)tensor);
  m->deleter = delete_legacy;
  *out = m;
  return C10C_STATUS_OK;
}

/* ---- import ---- */

static void call_versioned_deleter(void *ctx) {
  DLManagedTensorVersioned *m = ctx;
  if (m->deleter != NULL) m->deleter(m);
}

static void call_legacy_deleter(void *ctx) {
  DLManagedTensor *m = ctx;
  if (m->deleter != NULL) m->deleter(m);
}

/* The strides of an import. The stride of a dim that never moves (of size 0 or 1, or any dim of
 * a tensor without elements) addresses nothing: a negative one there (numpy exports a[::-1] of
 * one element with stride -1) becomes the stride a contiguous layout gives that dim (1 past
 * int64), as torch 2.13's from_dlpack makes it. Elsewhere c10 has no negative strides (torch
 * aborts the process on them): refused. */
static c10c_status import_strides(int64_t *strides, const DLTensor *dl, size_t ndim, bool empty) {
  for (size_t i = ndim; i-- > 0;) {
    int64_t stride = dl->strides[i];
    if (stride < 0 && (empty || dl->shape[i] < 2)) {
      int64_t below = i + 1 < ndim ? dl->shape[i + 1] : 1;
      if (i + 1 == ndim || c10c__mul_overflows(strides[i + 1], below > 1 ? below : 1, &stride))
        stride = 1;
    }
    if (stride < 0) {
      char list[256];
      c10c__format_int_list(list, sizeof list, dl->strides, ndim);
      return c10c__fail(C10C_STATUS_UNSUPPORTED,
                        "DLPack tensor with negative strides %s: libc10c tensors (as c10's) "
                        "cannot have them; copy the data first",
                        list);
    }
    strides[i] = stride;
  }
  return C10C_STATUS_OK;
}

/* Everything is checked before the storage takes the producer's deleter, so that a failure
 * leaves src with the caller; only running out of memory can fail after that, and then the
 * storage forgets the deleter before it goes. */
static c10c_status import(c10c_tensor **out, const DLTensor *dl, c10c_deleter deleter, void *ctx,
                          bool read_only) {
  c10c_dtype dtype = C10C_DTYPE_UNDEFINED;
  c10c_device device = {C10C_DEVICE_TYPE_CPU, -1};
  c10c_status st = dtype_of_dl(&dtype, dl->dtype);
  if (st == C10C_STATUS_OK) st = device_of_dl(&device, dl->device);
  if (st != C10C_STATUS_OK) return st;
  if (dl->ndim < 0)
    return c10c__fail(C10C_STATUS_ERROR, "DLPack tensor with negative ndim %d", (int)dl->ndim);
  size_t ndim = (size_t)dl->ndim;
  if (ndim > 0 && dl->shape == NULL) return c10c__null_argument(__func__, "dl_tensor.shape");
  int64_t stack[16], *strides = stack;
  if (ndim > 16) {
    strides = c10c__malloc(ndim * sizeof(int64_t));
    if (strides == NULL)
      return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory importing a tensor");
  }
  bool empty = false;
  for (size_t i = 0; i < ndim && st == C10C_STATUS_OK; i++) {
    empty |= dl->shape[i] == 0;
    if (dl->shape[i] < 0) {
      char list[256];
      c10c__format_int_list(list, sizeof list, dl->shape, ndim);
      st = c10c__fail(C10C_STATUS_ERROR, "Trying to create tensor with negative dimension %lld: %s",
                      (long long)dl->shape[i], list);
    }
  }
  if (st == C10C_STATUS_OK && dl->strides == NULL) {
    st = c10c__default_strides(strides, dl->shape, ndim, C10C_MEMORY_FORMAT_CONTIGUOUS);
  } else if (st == C10C_STATUS_OK) {
    st = import_strides(strides, dl, ndim, empty);
  }
  int64_t nbytes = 0, numel = 0;
  if (st == C10C_STATUS_OK)
    st = c10c__storage_nbytes(&nbytes, dl->shape, strides, ndim, 0, c10c_dtype_itemsize(dtype));
  if (st == C10C_STATUS_OK && !c10c__compute_numel(&numel, dl->shape, ndim))
    st = c10c__fail(C10C_STATUS_OVERFLOW, "numel: integer multiplication overflow");
  char *data = dl->data;
  if (st == C10C_STATUS_OK && numel > 0) {
    if (data == NULL) {
      st = c10c__null_argument(__func__, "dl_tensor.data");
    } else if ((uintptr_t)data + dl->byte_offset < (uintptr_t)data ||
               (uintptr_t)data + dl->byte_offset > UINTPTR_MAX - (uint64_t)nbytes) {
      st = c10c__fail(C10C_STATUS_OVERFLOW, "DLPack byte_offset %llu overflows the address space",
                      (unsigned long long)dl->byte_offset);
    } else {
      data += dl->byte_offset;
    }
  }
  if (numel == 0) nbytes = 0; /* no element is ever read: data may be anything, even NULL */
  c10c_storage *storage = NULL;
  if (st == C10C_STATUS_OK)
    st =
        c10c_storage_new_external(&storage, nbytes > 0 ? data : NULL, nbytes, device, deleter, ctx);
  if (st == C10C_STATUS_OK) {
    if (read_only) c10c_storage_set_read_only(storage);
    st = c10c_tensor_new_from_storage(out, storage, dl->shape, strides, ndim, 0, dtype);
    if (st != C10C_STATUS_OK) c10c__storage_forget_deleter(storage);
    c10c_storage_release(storage);
  }
  if (strides != stack) c10c__free(strides);
  return st;
}

c10c_status c10c_tensor_from_dlpack_versioned(c10c_tensor **out, DLManagedTensorVersioned *src) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  C10C__CHECK_NOT_NULL(src);
  if (src->version.major != C10C_DLPACK_MAJOR)
    return c10c__fail(C10C_STATUS_UNSUPPORTED,
                      "DLPack version %u.%u is not supported: libc10c reads major version %d",
                      (unsigned)src->version.major, (unsigned)src->version.minor,
                      C10C_DLPACK_MAJOR);
  return import(out, &src->dl_tensor, call_versioned_deleter, src,
                (src->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
}

c10c_status c10c_tensor_from_dlpack(c10c_tensor **out, DLManagedTensor *src) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  C10C__CHECK_NOT_NULL(src);
  return import(out, &src->dl_tensor, call_legacy_deleter, src, false);
}
