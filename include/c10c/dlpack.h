/* libc10c: DLPack 1.x, the C exchange format of numpy, torch, JAX, CuPy and others.
 *
 * The DLPack types below are the specification's (dmlc/dlpack include/dlpack/dlpack.h, v1.3),
 * declared here so that libc10c needs no other header. A program that includes the real dlpack.h
 * first (version 1.0 or later) gets that header's declarations, which have the same layout; one
 * that includes it after this header gets nothing more from it (its include guard is defined
 * here). libc10c checks the layouts at build time (sizes and offsets of the x86-64/LP64 ABI).
 *
 * Ownership follows DLPack: an export holds a reference to the tensor until the consumer calls
 * the struct's deleter (from any thread, with or without a Python GIL); an import takes the
 * producer's struct and calls its deleter exactly once, when the last reference to the memory
 * (tensor, view or storage) goes, on the thread that drops it.
 */
#ifndef C10C_DLPACK_H
#define C10C_DLPACK_H

#include "common.h"
#include "tensor.h"

#if defined(DLPACK_VERSION) && !defined(DLPACK_MAJOR_VERSION)
#error "libc10c needs DLPack 1.0 or later (DLManagedTensorVersioned); this dlpack.h is older"
#endif

#ifndef DLPACK_MAJOR_VERSION
#define DLPACK_DLPACK_H_ /* the real header's guard: including it later adds nothing */
#ifndef C10C_CDEF
#define DLPACK_MAJOR_VERSION                       1
#define DLPACK_MINOR_VERSION                       3
#define DLPACK_FLAG_BITMASK_READ_ONLY              (UINT64_C(1) << 0)
#define DLPACK_FLAG_BITMASK_IS_COPIED              (UINT64_C(1) << 1)
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (UINT64_C(1) << 2)
#endif

C10C_BEGIN_DECLS

typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

typedef enum {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
  kDLMAIA = 17,
  kDLTrn = 18
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

typedef enum {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLOpaqueHandle = 3,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6,
  kDLFloat8_e3m4 = 7,
  kDLFloat8_e4m3 = 8,
  kDLFloat8_e4m3b11fnuz = 9,
  kDLFloat8_e4m3fn = 10,
  kDLFloat8_e4m3fnuz = 11,
  kDLFloat8_e5m2 = 12,
  kDLFloat8_e5m2fnuz = 13,
  kDLFloat8_e8m0fnu = 14,
  kDLFloat6_e2m3fn = 15,
  kDLFloat6_e3m2fn = 16,
  kDLFloat4_e2m1fn = 17
} DLDataTypeCode;

typedef struct {
  uint8_t code; /* a DLDataTypeCode */
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides; /* in elements; NULL (before 1.2 only) means compact row-major */
  uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned *self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

C10C_END_DECLS

#endif /* DLPACK_MAJOR_VERSION */

C10C_BEGIN_DECLS

/* The DLPack version libc10c exports, and the newest 1.x minor it reads without question. */
enum { C10C_DLPACK_MAJOR = 1, C10C_DLPACK_MINOR = 3 };

/* DLManagedTensorVersioned.flags bits, equal to DLPack's DLPACK_FLAG_BITMASK_* macros, as enum
 * constants: macros vanish from the -DC10C_CDEF preprocessed header that FFI parsers read (cffi,
 * and bindings generated from it), enum constants stay. */
enum {
  C10C_DLPACK_FLAG_BITMASK_READ_ONLY = 1 << 0,              /* DLPACK_FLAG_BITMASK_READ_ONLY */
  C10C_DLPACK_FLAG_BITMASK_IS_COPIED = 1 << 1,              /* DLPACK_FLAG_BITMASK_IS_COPIED */
  C10C_DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED = 1 << 2, /* ..._IS_SUBBYTE_TYPE_PADDED */
};

/* The DLPack device of a c10 device, as ATen maps it (torch's __dlpack_device__): CPU (1, 0), CUDA
 * (2, index), HIP (kDLROCM, index), OpenCL (4, 0), XPU (kDLOneAPI, index), MAIA (17, index),
 * PrivateUse1 (kDLExtDev, index); an index of -1 (none) gives 0. ATen gives 0 for HIP and MAIA
 * whatever the index, which would send a consumer of memory on device 1 to device 0; the index
 * is kept here (torch's ROCm builds keep it for kDLROCM). No tensor lives on OpenCL (see the
 * import below); the mapping is ATen's all the same.
 * Errors: C10C_STATUS_NULL_POINTER (out); C10C_STATUS_UNSUPPORTED "Cannot pack tensors on meta"
 * (and on every other device type, named as c10 prints it: "mps:0"). */
C10C_API c10c_status c10c_device_to_dlpack(DLDevice *out, c10c_device device);

/* Exports a tensor as a DLPack 1.3 DLManagedTensorVersioned sharing its memory: data is the
 * tensor's first element (byte_offset 0, as torch and numpy export), shape and strides are in
 * elements (strides of size-0/1 dims normalised to 1, as torch does; both NULL for a 0-dim
 * tensor), data is NULL for a tensor without elements, flags has READ_ONLY for a read-only
 * tensor. The struct holds a reference to the tensor until (*out)->deleter(*out) is called. The
 * caller may lower version.minor to what its consumer asked for (every 1.x has this layout) and
 * may set IS_COPIED when it exported a copy it made, before handing the struct out.
 * dtypes as torch exports them: integer, unsigned, float, bfloat16, complex (bits = total size),
 * bool (kDLBool, 8 bits), float8 (kDLFloat8_e5m2, _e4m3fn, _e5m2fnuz, _e4m3fnuz, _e8m0fnu),
 * float4_e2m1fn_x2 (kDLFloat4_e2m1fn, 4 bits, 2 lanes), uint1..7 and int1..7 (8-bit containers);
 * devices as c10c_device_to_dlpack maps them.
 * Ownership: *out is the caller's until it calls its deleter (NULL on failure).
 * Errors: C10C_STATUS_NULL_POINTER (out, tensor); C10C_STATUS_UNSUPPORTED "QUInt/QInt types are
 * not supported by dlpack", "Bit types are not supported by dlpack", "Cannot pack tensors on
 * meta" (c10c_device_to_dlpack); C10C_STATUS_ERROR "to_dlpack: the tensor's elements ..." when
 * its storage no longer holds them (tensor.h); C10C_STATUS_OUT_OF_MEMORY. */
C10C_API c10c_status c10c_tensor_to_dlpack_versioned(struct DLManagedTensorVersioned **out,
                                                     const c10c_tensor *tensor);

/* The same as a legacy (pre-1.0) DLManagedTensor, which has no flags.
 * Errors: as c10c_tensor_to_dlpack_versioned, and C10C_STATUS_UNSUPPORTED "Cannot export a
 * read-only tensor as a legacy DLManagedTensor, ..." for a read-only tensor (which the legacy
 * struct cannot mark; numpy refuses it too). Ownership: *out is the caller's until it calls its
 * deleter (NULL on failure). */
C10C_API c10c_status c10c_tensor_to_dlpack(DLManagedTensor **out, const c10c_tensor *tensor);

/* A tensor over a DLPack producer's memory, taking ownership of src on success: src->deleter(src)
 * (if not NULL) is called exactly once, when the last reference to the memory (tensor, view,
 * storage, export of them) goes. On failure src is untouched and still the caller's (call its
 * deleter). The tensor has src's shape and strides (NULL strides: compact row-major) at offset
 * 0 of a storage of exactly the bytes its elements reach from data + byte_offset (no bytes, and
 * data ignored, without elements); a READ_ONLY flag makes it (and its views) refuse in-place
 * writes; any 1.x minor version is read (later minors keep this layout).
 * The stride of a dim that never moves (size 0 or 1, or any dim of a tensor without elements)
 * addresses nothing: a negative one there (numpy exports a[::-1] of one element with stride -1)
 * becomes the stride a contiguous layout gives that dim (1 past int64), as torch 2.13 makes it.
 * dtypes: every (code, bits, lanes 1) with a c10 equivalent (torch's toScalarType, plus the five
 * float8 codes c10 has), and float4_e2m1fn_x2 as (kDLFloat4_e2m1fn, 4, 2) (what the export gives
 * and torch 2.13 exports and imports: shape and strides count bytes, each two 4-bit lanes);
 * devices: CPU (also kDLCUDAHost and kDLROCMHost, host memory), CUDA,
 * kDLROCM (HIP), kDLOneAPI (XPU), MAIA, kDLExtDev (PrivateUse1), with device_id 0 to 127 (ignored
 * for host memory). kDLOpenCL is refused: c10's OpenCL is a grandfathered Caffe2 device type
 * without tensors (torch takes the struct and then fails with an internal assert).
 * Ownership: *out is a new reference (NULL on failure).
 * Errors: C10C_STATUS_NULL_POINTER (out, src, dl_tensor.shape with ndim > 0, dl_tensor.data with
 * elements); C10C_STATUS_UNSUPPORTED for a major version other than 1 ("DLPack version 2.0 is not
 * supported: ..."), lanes != 1 ("ATen does not support lanes != 1 for dtype code2"; for
 * kDLFloat4_e2m1fn bits other than 4 and lanes other than 2: "Unsupported kDLFloat4_e2m1fn lanes
 * 1"), dtypes without a c10 equivalent ("Unsupported kFloat bits 8", "Unsupported code 7"), other
 * devices ("Unsupported device_type: 5", "Unsupported device_type: 4 (kDLOpenCL: ...)"), and
 * negative strides on dims that move ("DLPack tensor with negative strides [3, -1]: ...": c10 has
 * none; torch aborts the process); C10C_STATUS_ERROR for a negative ndim ("DLPack tensor with
 * negative ndim -1"), a negative size ("Trying to create tensor with negative dimension -2: [-2,
 * 3]") or a device_id outside 0..127 ("DLPack device_id 128 is outside the device indices c10 has
 * (0 to 127)"); C10C_STATUS_OVERFLOW when sizes and strides overflow int64 ("Storage size
 * calculation overflowed with sizes=[...] and strides=[...]", "numel: integer multiplication
 * overflow", and for NULL strides "Stride calculation overflowed") or data + byte_offset + the
 * bytes reached overflow the address space ("DLPack byte_offset 18446744073709551615 overflows the
 * address space"); C10C_STATUS_OUT_OF_MEMORY. */
C10C_API c10c_status c10c_tensor_from_dlpack_versioned(c10c_tensor **out,
                                                       struct DLManagedTensorVersioned *src);

/* The same for a legacy DLManagedTensor (never read-only), with the same errors but the
 * version's. Ownership: *out is a new reference (NULL on failure); on success src's deleter is
 * the library's to call. */
C10C_API c10c_status c10c_tensor_from_dlpack(c10c_tensor **out, DLManagedTensor *src);

C10C_END_DECLS

#endif /* C10C_DLPACK_H */
