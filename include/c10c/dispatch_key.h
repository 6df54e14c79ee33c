/* libc10c: dispatch keys and dispatch key sets, with c10's exact numbering, bit layout and rules.
 *
 * A dispatch key set is one 64-bit word: bits 0..15 are backend components (CPU = bit 0 ...
 * Meta = bit 15), and functionality key v (1..46) is bit 15 + v. A per-backend runtime key such as
 * AutogradCUDA sets its functionality bit (AutogradFunctionality) and its backend bit (CUDA), so
 * sets are cross products: {CPU, AutogradCUDA} also has CUDA and AutogradCPU, as in c10.
 * Higher bits have higher priority. All values equal c10's (c10/core/DispatchKey.h,
 * DispatchKeySet.h in PyTorch 2.13), including Fake = 12, and are frozen for every 1.x: PyTorch
 * renumbers keys and bits between releases, libc10c does not; a host that meets another torch
 * version converts by name (c10c_dispatch_key_parse, c10c_dispatch_key_name).
 */
#ifndef C10C_DISPATCH_KEY_H
#define C10C_DISPATCH_KEY_H

#include "common.h"
#include "device.h"
#include "dtype.h"
#include "layout.h"

C10C_BEGIN_DECLS

/* c10::BackendComponent: bit b - 1 of a key set for b = 1..16. */
typedef uint8_t c10c_backend_component;
enum c10c_backend_component_value {
  C10C_BACKEND_COMPONENT_INVALID = 0,
  C10C_BACKEND_COMPONENT_CPU = 1,
  C10C_BACKEND_COMPONENT_CUDA = 2,
  C10C_BACKEND_COMPONENT_HIP = 3,
  C10C_BACKEND_COMPONENT_XLA = 4,
  C10C_BACKEND_COMPONENT_MPS = 5,
  C10C_BACKEND_COMPONENT_IPU = 6,
  C10C_BACKEND_COMPONENT_XPU = 7,
  C10C_BACKEND_COMPONENT_HPU = 8,
  C10C_BACKEND_COMPONENT_VE = 9,
  C10C_BACKEND_COMPONENT_LAZY = 10,
  C10C_BACKEND_COMPONENT_MTIA = 11,
  C10C_BACKEND_COMPONENT_MAIA = 12,
  C10C_BACKEND_COMPONENT_PRIVATE_USE1 = 13,
  C10C_BACKEND_COMPONENT_PRIVATE_USE2 = 14,
  C10C_BACKEND_COMPONENT_PRIVATE_USE3 = 15,
  C10C_BACKEND_COMPONENT_META = 16,
  C10C_BACKEND_COMPONENT_COUNT = 16 /* backends (num_backends); Meta is the last */
};

/* c10::DispatchKey, a 16-bit integer:
 *   0 Undefined; 1..46 functionality keys; 47 EndOfFunctionalityKeys (a sentinel);
 *   48..149 per-backend runtime keys in 6 blocks of 17 (a placeholder, then one key per backend
 *   in backend-component order) for Dense, Quantized, Sparse, SparseCsr, NestedTensor and
 *   AutogradFunctionality; 150..155 alias keys, which name sets of runtime keys. */
typedef uint16_t c10c_dispatch_key;
enum c10c_dispatch_key_value {
  C10C_DISPATCH_KEY_UNDEFINED = 0,                            /* Undefined */
  C10C_DISPATCH_KEY_DENSE = 1,                                /* Dense */
  C10C_DISPATCH_KEY_FPGA = 2,                                 /* FPGA */
  C10C_DISPATCH_KEY_VULKAN = 3,                               /* Vulkan */
  C10C_DISPATCH_KEY_METAL = 4,                                /* Metal */
  C10C_DISPATCH_KEY_QUANTIZED = 5,                            /* Quantized */
  C10C_DISPATCH_KEY_CUSTOM_RNG_KEY_ID = 6,                    /* CustomRNGKeyId */
  C10C_DISPATCH_KEY_MKLDNN_CPU = 7,                           /* MkldnnCPU */
  C10C_DISPATCH_KEY_SPARSE = 8,                               /* Sparse */
  C10C_DISPATCH_KEY_SPARSE_CSR = 9,                           /* SparseCsr */
  C10C_DISPATCH_KEY_NESTED_TENSOR = 10,                       /* NestedTensor */
  C10C_DISPATCH_KEY_BACKEND_SELECT = 11,                      /* BackendSelect */
  C10C_DISPATCH_KEY_FAKE = 12,                                /* Fake */
  C10C_DISPATCH_KEY_PYTHON = 13,                              /* Python */
  C10C_DISPATCH_KEY_FUNC_TORCH_DYNAMIC_LAYER_BACK_MODE = 14,  /* FuncTorchDynamicLayerBackMode */
  C10C_DISPATCH_KEY_FUNCTIONALIZE = 15,                       /* Functionalize */
  C10C_DISPATCH_KEY_CONJUGATE = 16,                           /* Conjugate */
  C10C_DISPATCH_KEY_NEGATIVE = 17,                            /* Negative */
  C10C_DISPATCH_KEY_ZERO_TENSOR = 18,                         /* ZeroTensor */
  C10C_DISPATCH_KEY_AD_INPLACE_OR_VIEW = 19,                  /* ADInplaceOrView */
  C10C_DISPATCH_KEY_AUTOGRAD_OTHER = 20,                      /* AutogradOther */
  C10C_DISPATCH_KEY_AUTOGRAD_FUNCTIONALITY = 21,              /* AutogradFunctionality */
  C10C_DISPATCH_KEY_AUTOGRAD_NESTED_TENSOR = 22,              /* AutogradNestedTensor */
  C10C_DISPATCH_KEY_TRACER = 23,                              /* Tracer */
  C10C_DISPATCH_KEY_AUTOCAST_CPU = 24,                        /* AutocastCPU */
  C10C_DISPATCH_KEY_AUTOCAST_MTIA = 25,                       /* AutocastMTIA */
  C10C_DISPATCH_KEY_AUTOCAST_MAIA = 26,                       /* AutocastMAIA */
  C10C_DISPATCH_KEY_AUTOCAST_XPU = 27,                        /* AutocastXPU */
  C10C_DISPATCH_KEY_AUTOCAST_IPU = 28,                        /* AutocastIPU */
  C10C_DISPATCH_KEY_AUTOCAST_HPU = 29,                        /* AutocastHPU */
  C10C_DISPATCH_KEY_AUTOCAST_XLA = 30,                        /* AutocastXLA */
  C10C_DISPATCH_KEY_AUTOCAST_MPS = 31,                        /* AutocastMPS */
  C10C_DISPATCH_KEY_AUTOCAST_CUDA = 32,                       /* AutocastCUDA */
  C10C_DISPATCH_KEY_AUTOCAST_PRIVATE_USE1 = 33,               /* AutocastPrivateUse1 */
  C10C_DISPATCH_KEY_FUNC_TORCH_BATCHED = 34,                  /* FuncTorchBatched */
  C10C_DISPATCH_KEY_BATCHED_NESTED_TENSOR = 35,               /* BatchedNestedTensor */
  C10C_DISPATCH_KEY_FUNC_TORCH_VMAP_MODE = 36,                /* FuncTorchVmapMode */
  C10C_DISPATCH_KEY_BATCHED = 37,                             /* Batched */
  C10C_DISPATCH_KEY_VMAP_MODE = 38,                           /* VmapMode */
  C10C_DISPATCH_KEY_FUNC_TORCH_GRAD_WRAPPER = 39,             /* FuncTorchGradWrapper */
  C10C_DISPATCH_KEY_DEFERRED_INIT = 40,                       /* DeferredInit */
  C10C_DISPATCH_KEY_PYTHON_TLS_SNAPSHOT = 41,                 /* PythonTLSSnapshot */
  C10C_DISPATCH_KEY_FUNC_TORCH_DYNAMIC_LAYER_FRONT_MODE = 42, /* FuncTorchDynamicLayerFrontMode */
  C10C_DISPATCH_KEY_TESTING_ONLY_GENERIC_WRAPPER = 43,        /* TESTING_ONLY_GenericWrapper */
  C10C_DISPATCH_KEY_TESTING_ONLY_GENERIC_MODE = 44,           /* TESTING_ONLY_GenericMode */
  C10C_DISPATCH_KEY_PRE_DISPATCH = 45,                        /* PreDispatch */
  C10C_DISPATCH_KEY_PYTHON_DISPATCHER = 46,                   /* PythonDispatcher */
  C10C_DISPATCH_KEY_END_OF_FUNCTIONALITY_KEYS = 47,           /* EndOfFunctionalityKeys */
  C10C_DISPATCH_KEY_START_OF_DENSE_BACKENDS = 48,             /* StartOfDenseBackends */
  C10C_DISPATCH_KEY_CPU = 49,                                 /* CPU */
  C10C_DISPATCH_KEY_CUDA = 50,                                /* CUDA */
  C10C_DISPATCH_KEY_HIP = 51,                                 /* HIP */
  C10C_DISPATCH_KEY_XLA = 52,                                 /* XLA */
  C10C_DISPATCH_KEY_MPS = 53,                                 /* MPS */
  C10C_DISPATCH_KEY_IPU = 54,                                 /* IPU */
  C10C_DISPATCH_KEY_XPU = 55,                                 /* XPU */
  C10C_DISPATCH_KEY_HPU = 56,                                 /* HPU */
  C10C_DISPATCH_KEY_VE = 57,                                  /* VE */
  C10C_DISPATCH_KEY_LAZY = 58,                                /* Lazy */
  C10C_DISPATCH_KEY_MTIA = 59,                                /* MTIA */
  C10C_DISPATCH_KEY_MAIA = 60,                                /* MAIA */
  C10C_DISPATCH_KEY_PRIVATE_USE1 = 61,                        /* PrivateUse1 */
  C10C_DISPATCH_KEY_PRIVATE_USE2 = 62,                        /* PrivateUse2 */
  C10C_DISPATCH_KEY_PRIVATE_USE3 = 63,                        /* PrivateUse3 */
  C10C_DISPATCH_KEY_META = 64,                                /* Meta */
  C10C_DISPATCH_KEY_START_OF_QUANTIZED_BACKENDS = 65,         /* StartOfQuantizedBackends */
  C10C_DISPATCH_KEY_QUANTIZED_CPU = 66,                       /* QuantizedCPU */
  C10C_DISPATCH_KEY_QUANTIZED_CUDA = 67,                      /* QuantizedCUDA */
  C10C_DISPATCH_KEY_QUANTIZED_HIP = 68,                       /* QuantizedHIP */
  C10C_DISPATCH_KEY_QUANTIZED_XLA = 69,                       /* QuantizedXLA */
  C10C_DISPATCH_KEY_QUANTIZED_MPS = 70,                       /* QuantizedMPS */
  C10C_DISPATCH_KEY_QUANTIZED_IPU = 71,                       /* QuantizedIPU */
  C10C_DISPATCH_KEY_QUANTIZED_XPU = 72,                       /* QuantizedXPU */
  C10C_DISPATCH_KEY_QUANTIZED_HPU = 73,                       /* QuantizedHPU */
  C10C_DISPATCH_KEY_QUANTIZED_VE = 74,                        /* QuantizedVE */
  C10C_DISPATCH_KEY_QUANTIZED_LAZY = 75,                      /* QuantizedLazy */
  C10C_DISPATCH_KEY_QUANTIZED_MTIA = 76,                      /* QuantizedMTIA */
  C10C_DISPATCH_KEY_QUANTIZED_MAIA = 77,                      /* QuantizedMAIA */
  C10C_DISPATCH_KEY_QUANTIZED_PRIVATE_USE1 = 78,              /* QuantizedPrivateUse1 */
  C10C_DISPATCH_KEY_QUANTIZED_PRIVATE_USE2 = 79,              /* QuantizedPrivateUse2 */
  C10C_DISPATCH_KEY_QUANTIZED_PRIVATE_USE3 = 80,              /* QuantizedPrivateUse3 */
  C10C_DISPATCH_KEY_QUANTIZED_META = 81,                      /* QuantizedMeta */
  C10C_DISPATCH_KEY_START_OF_SPARSE_BACKENDS = 82,            /* StartOfSparseBackends */
  C10C_DISPATCH_KEY_SPARSE_CPU = 83,                          /* SparseCPU */
  C10C_DISPATCH_KEY_SPARSE_CUDA = 84,                         /* SparseCUDA */
  C10C_DISPATCH_KEY_SPARSE_HIP = 85,                          /* SparseHIP */
  C10C_DISPATCH_KEY_SPARSE_XLA = 86,                          /* SparseXLA */
  C10C_DISPATCH_KEY_SPARSE_MPS = 87,                          /* SparseMPS */
  C10C_DISPATCH_KEY_SPARSE_IPU = 88,                          /* SparseIPU */
  C10C_DISPATCH_KEY_SPARSE_XPU = 89,                          /* SparseXPU */
  C10C_DISPATCH_KEY_SPARSE_HPU = 90,                          /* SparseHPU */
  C10C_DISPATCH_KEY_SPARSE_VE = 91,                           /* SparseVE */
  C10C_DISPATCH_KEY_SPARSE_LAZY = 92,                         /* SparseLazy */
  C10C_DISPATCH_KEY_SPARSE_MTIA = 93,                         /* SparseMTIA */
  C10C_DISPATCH_KEY_SPARSE_MAIA = 94,                         /* SparseMAIA */
  C10C_DISPATCH_KEY_SPARSE_PRIVATE_USE1 = 95,                 /* SparsePrivateUse1 */
  C10C_DISPATCH_KEY_SPARSE_PRIVATE_USE2 = 96,                 /* SparsePrivateUse2 */
  C10C_DISPATCH_KEY_SPARSE_PRIVATE_USE3 = 97,                 /* SparsePrivateUse3 */
  C10C_DISPATCH_KEY_SPARSE_META = 98,                         /* SparseMeta */
  C10C_DISPATCH_KEY_START_OF_SPARSE_CSR_BACKENDS = 99,        /* StartOfSparseCsrBackends */
  C10C_DISPATCH_KEY_SPARSE_CSR_CPU = 100,                     /* SparseCsrCPU */
  C10C_DISPATCH_KEY_SPARSE_CSR_CUDA = 101,                    /* SparseCsrCUDA */
  C10C_DISPATCH_KEY_SPARSE_CSR_HIP = 102,                     /* SparseCsrHIP */
  C10C_DISPATCH_KEY_SPARSE_CSR_XLA = 103,                     /* SparseCsrXLA */
  C10C_DISPATCH_KEY_SPARSE_CSR_MPS = 104,                     /* SparseCsrMPS */
  C10C_DISPATCH_KEY_SPARSE_CSR_IPU = 105,                     /* SparseCsrIPU */
  C10C_DISPATCH_KEY_SPARSE_CSR_XPU = 106,                     /* SparseCsrXPU */
  C10C_DISPATCH_KEY_SPARSE_CSR_HPU = 107,                     /* SparseCsrHPU */
  C10C_DISPATCH_KEY_SPARSE_CSR_VE = 108,                      /* SparseCsrVE */
  C10C_DISPATCH_KEY_SPARSE_CSR_LAZY = 109,                    /* SparseCsrLazy */
  C10C_DISPATCH_KEY_SPARSE_CSR_MTIA = 110,                    /* SparseCsrMTIA */
  C10C_DISPATCH_KEY_SPARSE_CSR_MAIA = 111,                    /* SparseCsrMAIA */
  C10C_DISPATCH_KEY_SPARSE_CSR_PRIVATE_USE1 = 112,            /* SparseCsrPrivateUse1 */
  C10C_DISPATCH_KEY_SPARSE_CSR_PRIVATE_USE2 = 113,            /* SparseCsrPrivateUse2 */
  C10C_DISPATCH_KEY_SPARSE_CSR_PRIVATE_USE3 = 114,            /* SparseCsrPrivateUse3 */
  C10C_DISPATCH_KEY_SPARSE_CSR_META = 115,                    /* SparseCsrMeta */
  C10C_DISPATCH_KEY_START_OF_NESTED_TENSOR_BACKENDS = 116,    /* StartOfNestedTensorBackends */
  C10C_DISPATCH_KEY_NESTED_TENSOR_CPU = 117,                  /* NestedTensorCPU */
  C10C_DISPATCH_KEY_NESTED_TENSOR_CUDA = 118,                 /* NestedTensorCUDA */
  C10C_DISPATCH_KEY_NESTED_TENSOR_HIP = 119,                  /* NestedTensorHIP */
  C10C_DISPATCH_KEY_NESTED_TENSOR_XLA = 120,                  /* NestedTensorXLA */
  C10C_DISPATCH_KEY_NESTED_TENSOR_MPS = 121,                  /* NestedTensorMPS */
  C10C_DISPATCH_KEY_NESTED_TENSOR_IPU = 122,                  /* NestedTensorIPU */
  C10C_DISPATCH_KEY_NESTED_TENSOR_XPU = 123,                  /* NestedTensorXPU */
  C10C_DISPATCH_KEY_NESTED_TENSOR_HPU = 124,                  /* NestedTensorHPU */
  C10C_DISPATCH_KEY_NESTED_TENSOR_VE = 125,                   /* NestedTensorVE */
  C10C_DISPATCH_KEY_NESTED_TENSOR_LAZY = 126,                 /* NestedTensorLazy */
  C10C_DISPATCH_KEY_NESTED_TENSOR_MTIA = 127,                 /* NestedTensorMTIA */
  C10C_DISPATCH_KEY_NESTED_TENSOR_MAIA = 128,                 /* NestedTensorMAIA */
  C10C_DISPATCH_KEY_NESTED_TENSOR_PRIVATE_USE1 = 129,         /* NestedTensorPrivateUse1 */
  C10C_DISPATCH_KEY_NESTED_TENSOR_PRIVATE_USE2 = 130,         /* NestedTensorPrivateUse2 */
  C10C_DISPATCH_KEY_NESTED_TENSOR_PRIVATE_USE3 = 131,         /* NestedTensorPrivateUse3 */
  C10C_DISPATCH_KEY_NESTED_TENSOR_META = 132,                 /* NestedTensorMeta */
  C10C_DISPATCH_KEY_START_OF_AUTOGRAD_FUNCTIONALITY_BACKENDS =
      133,                                             /* StartOfAutogradFunctionalityBackends */
  C10C_DISPATCH_KEY_AUTOGRAD_CPU = 134,                /* AutogradCPU */
  C10C_DISPATCH_KEY_AUTOGRAD_CUDA = 135,               /* AutogradCUDA */
  C10C_DISPATCH_KEY_AUTOGRAD_HIP = 136,                /* AutogradHIP */
  C10C_DISPATCH_KEY_AUTOGRAD_XLA = 137,                /* AutogradXLA */
  C10C_DISPATCH_KEY_AUTOGRAD_MPS = 138,                /* AutogradMPS */
  C10C_DISPATCH_KEY_AUTOGRAD_IPU = 139,                /* AutogradIPU */
  C10C_DISPATCH_KEY_AUTOGRAD_XPU = 140,                /* AutogradXPU */
  C10C_DISPATCH_KEY_AUTOGRAD_HPU = 141,                /* AutogradHPU */
  C10C_DISPATCH_KEY_AUTOGRAD_VE = 142,                 /* AutogradVE */
  C10C_DISPATCH_KEY_AUTOGRAD_LAZY = 143,               /* AutogradLazy */
  C10C_DISPATCH_KEY_AUTOGRAD_MTIA = 144,               /* AutogradMTIA */
  C10C_DISPATCH_KEY_AUTOGRAD_MAIA = 145,               /* AutogradMAIA */
  C10C_DISPATCH_KEY_AUTOGRAD_PRIVATE_USE1 = 146,       /* AutogradPrivateUse1 */
  C10C_DISPATCH_KEY_AUTOGRAD_PRIVATE_USE2 = 147,       /* AutogradPrivateUse2 */
  C10C_DISPATCH_KEY_AUTOGRAD_PRIVATE_USE3 = 148,       /* AutogradPrivateUse3 */
  C10C_DISPATCH_KEY_AUTOGRAD_META = 149,               /* AutogradMeta */
  C10C_DISPATCH_KEY_AUTOGRAD = 150,                    /* Autograd */
  C10C_DISPATCH_KEY_COMPOSITE_IMPLICIT_AUTOGRAD = 151, /* CompositeImplicitAutograd */
  C10C_DISPATCH_KEY_FUNC_TORCH_BATCHED_DECOMPOSITION = 152, /* FuncTorchBatchedDecomposition */
  C10C_DISPATCH_KEY_COMPOSITE_IMPLICIT_AUTOGRAD_NESTED_TENSOR =
      153,                                             /* CompositeImplicitAutogradNestedTensor */
  C10C_DISPATCH_KEY_COMPOSITE_EXPLICIT_AUTOGRAD = 154, /* CompositeExplicitAutograd */
  C10C_DISPATCH_KEY_COMPOSITE_EXPLICIT_AUTOGRAD_NON_FUNCTIONAL =
      155,                      /* CompositeExplicitAutogradNonFunctional */
  C10C_DISPATCH_KEY_COUNT = 156 /* keys 0..155 */
};

/* A set of dispatch keys: the 64-bit word described above, passed by value. */
typedef struct c10c_dispatch_key_set {
  uint64_t repr; /* bits 0..15 backends, bit 15 + v functionality key v */
} c10c_dispatch_key_set;

/* Most keys a set can iterate over (every runtime key but Undefined). Also the longest string
 * c10c_dispatch_key_set_to_string needs is below C10C_DISPATCH_KEY_SET_STRING_MAX. */
enum c10c_dispatch_key_set_limit {
  C10C_DISPATCH_KEY_SET_MAX_KEYS = 136,
  C10C_DISPATCH_KEY_SET_STRING_MAX = 4096
};

/* ---- keys ---- */

/* Whether k is 0..155. Errors: none. */
C10C_API bool c10c_dispatch_key_is_valid(c10c_dispatch_key k);

/* c10's toString(DispatchKey): "CPU", "AutogradCUDA", "CompositeImplicitAutograd"; placeholders
 * print "Undefined", "QuantizedUndefined", ..., "AutogradUndefined"; 47 and values above 155
 * print "UnknownUnknown". Ownership: static string. Errors: none. */
C10C_API const char *c10c_dispatch_key_name(c10c_dispatch_key k);

/* c10's parseDispatchKey: exactly the names c10 accepts (every functionality key, every Dense
 * backend key, the per-backend keys c10 lists, the alias keys, and "Undefined").
 * Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_ERROR "could not parse dispatch key: <name>". */
C10C_API c10c_status c10c_dispatch_key_parse(c10c_dispatch_key *out, const char *name);

/* Whether k is an alias key (150..155). Errors: none. */
C10C_API bool c10c_dispatch_key_is_alias(c10c_dispatch_key k);

/* Whether k is one of the six functionalities that have one runtime key per backend (Dense,
 * Quantized, Sparse, SparseCsr, NestedTensor, AutogradFunctionality). Errors: none. */
C10C_API bool c10c_dispatch_key_is_per_backend_functionality(c10c_dispatch_key k);

/* c10's isBackendDispatchKey. Errors: none. */
C10C_API bool c10c_dispatch_key_is_backend(c10c_dispatch_key k);

/* c10's toFunctionalityKey: the functionality of a key (AutogradCUDA -> AutogradFunctionality);
 * functionality keys map to themselves; aliases and invalid values to Undefined. Errors: none. */
C10C_API c10c_dispatch_key c10c_dispatch_key_to_functionality(c10c_dispatch_key k);

/* c10's toBackendComponent(DispatchKey): the backend of a per-backend runtime key, else
 * C10C_BACKEND_COMPONENT_INVALID. Errors: none. */
C10C_API c10c_backend_component c10c_dispatch_key_to_backend(c10c_dispatch_key k);

/* c10's toRuntimePerBackendFunctionalityKey: the runtime key of a per-backend functionality on a
 * backend (Sparse + CUDA -> SparseCUDA); with C10C_BACKEND_COMPONENT_INVALID the block's
 * placeholder (StartOfSparseBackends), as c10; Undefined when functionality is not per-backend
 * or backend is above 16. Errors: none. */
C10C_API c10c_dispatch_key c10c_dispatch_key_for_backend(c10c_dispatch_key functionality,
                                                         c10c_backend_component backend);

/* c10's toString(BackendComponent): "CPUBit", ..., "MTIA", "MAIA", "MetaBit"; "InvalidBit" for 0
 * and "UNKNOWN_BACKEND_BIT" above 16. Ownership: static string. Errors: none. */
C10C_API const char *c10c_backend_component_name(c10c_backend_component b);

/* c10's toBackendComponent(DeviceType): CPU, CUDA, HIP, XLA, MPS, IPU, XPU, HPU, VE, Lazy, Meta,
 * MTIA and PrivateUse1 have a backend component; every other device type gives INVALID.
 * Errors: none. */
C10C_API c10c_backend_component c10c_backend_component_from_device_type(c10c_device_type t);

/* c10's getAutogradKeyFromBackend: AutogradCPU for CPU ...; HIP, VE and INVALID give
 * AutogradOther. Errors: none. */
C10C_API c10c_dispatch_key c10c_dispatch_key_autograd_from_backend(c10c_backend_component b);

/* c10's computeDispatchKey(dtype, layout, device): the backend key of a tensor with these
 * properties (CPU, QuantizedCPU for quantized dtypes, SparseCUDA, SparseCsrMeta, MkldnnCPU ...).
 * Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_INVALID_ARGUMENT for invalid enum values;
 * C10C_STATUS_NOT_IMPLEMENTED "Unsupported device type for sparse layout: <TYPE>" and the like;
 * C10C_STATUS_ERROR for the Caffe2 device types (MKLDNN, OPENGL, OPENCL, IDEEP) that c10
 * refuses with an internal assert. */
C10C_API c10c_status c10c_dispatch_key_compute(c10c_dispatch_key *out, c10c_dtype dtype,
                                               c10c_layout layout, c10c_device_type device_type);

/* ---- sets: construction ---- */

/* The set with exactly these raw bits (c10's from_raw_repr; any word is accepted).
 * Errors: none. */
C10C_API c10c_dispatch_key_set c10c_dispatch_key_set_from_raw(uint64_t repr);

/* c10's DispatchKeySet(DispatchKey): a functionality key sets its bit; a per-backend runtime key
 * sets its functionality bit and its backend bit; Undefined and alias keys give the empty set.
 * Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_INVALID_ARGUMENT "invalid dispatch key <n>"
 * for values above 155 and for 47. */
C10C_API c10c_status c10c_dispatch_key_set_from_key(c10c_dispatch_key_set *out,
                                                    c10c_dispatch_key k);

/* The union of c10c_dispatch_key_set_from_key over n keys (keys may be NULL when n is 0).
 * Errors: as c10c_dispatch_key_set_from_key. */
C10C_API c10c_status c10c_dispatch_key_set_from_keys(c10c_dispatch_key_set *out,
                                                     const c10c_dispatch_key *keys, size_t n);

/* The set of one backend bit (c10's DispatchKeySet(BackendComponent)); INVALID gives {}.
 * Errors: C10C_STATUS_NULL_POINTER, C10C_STATUS_INVALID_ARGUMENT for b > 16. */
C10C_API c10c_status c10c_dispatch_key_set_from_backend(c10c_dispatch_key_set *out,
                                                        c10c_backend_component b);

/* c10's DispatchKeySet(FULL): every backend bit and every functionality key. Errors: none. */
C10C_API c10c_dispatch_key_set c10c_dispatch_key_set_full(void);

/* c10's DispatchKeySet(FULL_AFTER, k): every bit below k's functionality bit, plus
 * PythonDispatcher (torch._C._dispatch_keyset_full_after).
 * Errors: C10C_STATUS_NULL_POINTER, C10C_STATUS_INVALID_ARGUMENT "invalid dispatch key <n>"
 * for values above 155 (47 is accepted: c10 computes the full set from it). */
C10C_API c10c_status c10c_dispatch_key_set_full_after(c10c_dispatch_key_set *out,
                                                      c10c_dispatch_key k);

/* ---- sets: algebra (all O(1)) ---- */

/* ks | DispatchKeySet(k). Errors: as c10c_dispatch_key_set_from_key. */
C10C_API c10c_status c10c_dispatch_key_set_add(c10c_dispatch_key_set *out, c10c_dispatch_key_set ks,
                                               c10c_dispatch_key k);

/* c10's remove(k): clears only the functionality bit of k; backend bits stay, so removing CPU
 * from {CPU, AutogradCPU} leaves {AutogradCPU}. Errors: as c10c_dispatch_key_set_from_key. */
C10C_API c10c_status c10c_dispatch_key_set_remove(c10c_dispatch_key_set *out,
                                                  c10c_dispatch_key_set ks, c10c_dispatch_key k);

/* c10's remove_backend(b): clears one backend bit. Errors: as ..._from_backend. */
C10C_API c10c_status c10c_dispatch_key_set_remove_backend(c10c_dispatch_key_set *out,
                                                          c10c_dispatch_key_set ks,
                                                          c10c_backend_component b);

/* c10's has(k) = has_all(DispatchKeySet(k)). As in c10 release builds, Undefined and alias keys
 * map to the empty set and so are "in" every set (torch's DispatchKeySet.has agrees).
 * Errors: as c10c_dispatch_key_set_from_key. */
C10C_API c10c_status c10c_dispatch_key_set_has(bool *out, c10c_dispatch_key_set ks,
                                               c10c_dispatch_key k);

/* Whether backend bit b is set (c10's has_backend); false for INVALID or b > 16.
 * Errors: none. */
C10C_API bool c10c_dispatch_key_set_has_backend(c10c_dispatch_key_set ks, c10c_backend_component b);

/* (ks & other) == other. Errors: none. */
C10C_API bool c10c_dispatch_key_set_has_all(c10c_dispatch_key_set ks, c10c_dispatch_key_set other);

/* (ks & other) != 0. Errors: none. */
C10C_API bool c10c_dispatch_key_set_has_any(c10c_dispatch_key_set ks, c10c_dispatch_key_set other);

/* Whether no bit is set. Errors: none. */
C10C_API bool c10c_dispatch_key_set_is_empty(c10c_dispatch_key_set ks);

/* Whether the two words are equal. Errors: none. */
C10C_API bool c10c_dispatch_key_set_equal(c10c_dispatch_key_set a, c10c_dispatch_key_set b);

/* a | b. Errors: none. */
C10C_API c10c_dispatch_key_set c10c_dispatch_key_set_union(c10c_dispatch_key_set a,
                                                           c10c_dispatch_key_set b);

/* a & b. Errors: none. */
C10C_API c10c_dispatch_key_set c10c_dispatch_key_set_intersection(c10c_dispatch_key_set a,
                                                                  c10c_dispatch_key_set b);

/* c10's a - b: removes b's functionality bits only, keeping every backend bit of a.
 * Errors: none. */
C10C_API c10c_dispatch_key_set c10c_dispatch_key_set_difference(c10c_dispatch_key_set a,
                                                                c10c_dispatch_key_set b);

/* ---- sets: priority ----
 * Bits 62 and 63 of a raw word (c10c_dispatch_key_set_from_raw) belong to no key: these
 * queries, iteration and printing ignore them. */

/* c10's highestPriorityTypeId: the highest functionality, made per-backend with the highest
 * backend when it is a per-backend functionality. {CPU, ADInplaceOrView, AutogradCPU,
 * AutocastCPU} gives AutocastCPU; {} gives Undefined. Errors: none. */
C10C_API c10c_dispatch_key c10c_dispatch_key_set_highest_priority_key(c10c_dispatch_key_set ks);

/* c10's highestFunctionalityKey (a functionality key or Undefined). Errors: none. */
C10C_API c10c_dispatch_key c10c_dispatch_key_set_highest_functionality(c10c_dispatch_key_set ks);

/* c10's highestBackendKey (INVALID when no backend bit is set). Errors: none. */
C10C_API c10c_backend_component c10c_dispatch_key_set_highest_backend(c10c_dispatch_key_set ks);

/* c10's highestPriorityBackendTypeId: the highest key among Dense, Quantized, Sparse and
 * SparseCsr runtime keys ({CUDA, QuantizedCUDA} gives QuantizedCUDA). Errors: none. */
C10C_API c10c_dispatch_key
c10c_dispatch_key_set_highest_priority_backend_key(c10c_dispatch_key_set ks);

/* c10's getDispatchTableIndexForDispatchKeySet: the operator-table slot 0..136 of the highest
 * priority key (CPU 1, Meta 16, FPGA 17, QuantizedCPU 20, AutogradCPU 96 ...). Errors: none. */
C10C_API int32_t c10c_dispatch_key_set_dispatch_table_index(c10c_dispatch_key_set ks);

/* ---- sets: iteration and printing ---- */

/* The key that follows prev when iterating ks in c10's order: functionality bits from lowest to
 * highest priority; a per-backend functionality yields one runtime key per backend bit, in
 * backend order, and nothing without backend bits; backend bits alone yield nothing.
 * Start with prev = Undefined; Undefined is returned after the last key.
 *   for (k = next(ks, 0); k != C10C_DISPATCH_KEY_UNDEFINED; k = next(ks, k)) ...
 * A prev that is not a runtime key of ks continues from where that key would stand.
 * Errors: none (an alias or invalid prev returns Undefined). */
C10C_API c10c_dispatch_key c10c_dispatch_key_set_next(c10c_dispatch_key_set ks,
                                                      c10c_dispatch_key prev);

/* Number of keys iteration yields (at most C10C_DISPATCH_KEY_SET_MAX_KEYS). Errors: none. */
C10C_API size_t c10c_dispatch_key_set_size(c10c_dispatch_key_set ks);

/* Writes up to capacity keys in iteration order to out and returns how many the set has
 * (which may exceed capacity; out may be NULL when capacity is 0). Errors: none. */
C10C_API size_t c10c_dispatch_key_set_to_array(c10c_dispatch_key *out, size_t capacity,
                                               c10c_dispatch_key_set ks);

/* c10's toString(DispatchKeySet): "DispatchKeySet()" or "DispatchKeySet(CPU, ADInplaceOrView,
 * AutogradCPU, AutocastCPU)". Writes at most out_size bytes including the NUL; *out_len (when
 * not NULL) receives the full length without the NUL.
 * Errors: C10C_STATUS_NULL_POINTER (out with out_size > 0), C10C_STATUS_BUFFER_TOO_SMALL
 * (out then holds the truncated string). */
C10C_API c10c_status c10c_dispatch_key_set_to_string(char *out, size_t out_size, size_t *out_len,
                                                     c10c_dispatch_key_set ks);

/* ---- alias keys and derived sets ---- */

/* c10's getRuntimeDispatchKeySet: the runtime keys an alias key stands for (Autograd,
 * CompositeImplicitAutograd, ... as in PyTorch 2.13); a non-alias key gives its own set.
 * Errors: as c10c_dispatch_key_set_from_key (values above 155 and 47 are invalid). */
C10C_API c10c_status c10c_dispatch_key_set_from_alias(c10c_dispatch_key_set *out,
                                                      c10c_dispatch_key k);

/* c10's runtimeDispatchKeySetHas(alias, k) (isIncludedInAlias): whether runtime key k is among
 * the keys the alias stands for.
 * Errors: as c10c_dispatch_key_set_from_alias, for either key; C10C_STATUS_INVALID_ARGUMENT
 * "runtimeDispatchKeySetHas: the alias key must not be Undefined" (c10 asserts it). */
C10C_API c10c_status c10c_dispatch_key_alias_has(bool *out, c10c_dispatch_key alias,
                                                 c10c_dispatch_key k);

/* c10's getBackendKeySetFromAutograd (torch._C._dispatch_get_backend_keyset_from_autograd).
 * Errors: as c10c_dispatch_key_set_from_alias. */
C10C_API c10c_status c10c_dispatch_key_set_backend_from_autograd(c10c_dispatch_key_set *out,
                                                                 c10c_dispatch_key k);

/* c10's getAutogradRelatedKeySetFromBackend: {ADInplaceOrView, Autograd<b>}, or
 * {ADInplaceOrView, AutogradOther} for backends without their own autograd key. Errors: none. */
C10C_API c10c_dispatch_key_set c10c_dispatch_key_set_autograd_related(c10c_backend_component b);

/* c10's getAutocastRelatedKeySetFromBackend: {Autocast<b>} for backends that have one, else {}.
 * Errors: none. */
C10C_API c10c_dispatch_key_set c10c_dispatch_key_set_autocast_related(c10c_backend_component b);

/* The key set c10's TensorImpl constructor gives a new tensor of this dtype, layout and device
 * type: the computed backend key, then (outside inference mode) ADInplaceOrView and the backend's
 * autograd key, then the backend's autocast key. A CPU float tensor gets {CPU, ADInplaceOrView,
 * AutogradCPU, AutocastCPU}; in inference mode {CPU, AutocastCPU}.
 * Errors: as c10c_dispatch_key_compute. */
C10C_API c10c_status c10c_dispatch_key_set_for_tensor(c10c_dispatch_key_set *out, c10c_dtype dtype,
                                                      c10c_layout layout,
                                                      c10c_device_type device_type,
                                                      bool inference_mode);

C10C_END_DECLS

#endif /* C10C_DISPATCH_KEY_H */
