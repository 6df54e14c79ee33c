/* Dispatch keys: c10's names and parser, the per-backend key arithmetic (toFunctionalityKey,
 * toBackendComponent, toRuntimePerBackendFunctionalityKey), backend components, and
 * computeDispatchKey (c10/core/DispatchKey.h/.cpp, TensorOptions.h, PyTorch 2.13).
 */
#include <string.h>

#include "dispatch_key_internal.h"

typedef struct key_info {
  const char *name; /* c10's toString */
  bool parseable;   /* whether c10's parseDispatchKey accepts the name */
} key_info;

static const key_info keys[C10C_DISPATCH_KEY_COUNT] = {
    {"Undefined", 1},                              /* 0 */
    {"Dense", 1},                                  /* 1 */
    {"FPGA", 1},                                   /* 2 */
    {"Vulkan", 1},                                 /* 3 */
    {"Metal", 1},                                  /* 4 */
    {"Quantized", 1},                              /* 5 */
    {"CustomRNGKeyId", 1},                         /* 6 */
    {"MkldnnCPU", 1},                              /* 7 */
    {"Sparse", 1},                                 /* 8 */
    {"SparseCsr", 1},                              /* 9 */
    {"NestedTensor", 1},                           /* 10 */
    {"BackendSelect", 1},                          /* 11 */
    {"Fake", 1},                                   /* 12 */
    {"Python", 1},                                 /* 13 */
    {"FuncTorchDynamicLayerBackMode", 1},          /* 14 */
    {"Functionalize", 1},                          /* 15 */
    {"Conjugate", 1},                              /* 16 */
    {"Negative", 1},                               /* 17 */
    {"ZeroTensor", 1},                             /* 18 */
    {"ADInplaceOrView", 1},                        /* 19 */
    {"AutogradOther", 1},                          /* 20 */
    {"AutogradFunctionality", 1},                  /* 21 */
    {"AutogradNestedTensor", 1},                   /* 22 */
    {"Tracer", 1},                                 /* 23 */
    {"AutocastCPU", 1},                            /* 24 */
    {"AutocastMTIA", 1},                           /* 25 */
    {"AutocastMAIA", 1},                           /* 26 */
    {"AutocastXPU", 1},                            /* 27 */
    {"AutocastIPU", 1},                            /* 28 */
    {"AutocastHPU", 1},                            /* 29 */
    {"AutocastXLA", 1},                            /* 30 */
    {"AutocastMPS", 1},                            /* 31 */
    {"AutocastCUDA", 1},                           /* 32 */
    {"AutocastPrivateUse1", 1},                    /* 33 */
    {"FuncTorchBatched", 1},                       /* 34 */
    {"BatchedNestedTensor", 1},                    /* 35 */
    {"FuncTorchVmapMode", 1},                      /* 36 */
    {"Batched", 1},                                /* 37 */
    {"VmapMode", 1},                               /* 38 */
    {"FuncTorchGradWrapper", 1},                   /* 39 */
    {"DeferredInit", 1},                           /* 40 */
    {"PythonTLSSnapshot", 1},                      /* 41 */
    {"FuncTorchDynamicLayerFrontMode", 1},         /* 42 */
    {"TESTING_ONLY_GenericWrapper", 1},            /* 43 */
    {"TESTING_ONLY_GenericMode", 1},               /* 44 */
    {"PreDispatch", 1},                            /* 45 */
    {"PythonDispatcher", 1},                       /* 46 */
    {"UnknownUnknown", 0},                         /* 47 */
    {"Undefined", 0},                              /* 48 */
    {"CPU", 1},                                    /* 49 */
    {"CUDA", 1},                                   /* 50 */
    {"HIP", 1},                                    /* 51 */
    {"XLA", 1},                                    /* 52 */
    {"MPS", 1},                                    /* 53 */
    {"IPU", 1},                                    /* 54 */
    {"XPU", 1},                                    /* 55 */
    {"HPU", 1},                                    /* 56 */
    {"VE", 1},                                     /* 57 */
    {"Lazy", 1},                                   /* 58 */
    {"MTIA", 1},                                   /* 59 */
    {"MAIA", 1},                                   /* 60 */
    {"PrivateUse1", 1},                            /* 61 */
    {"PrivateUse2", 1},                            /* 62 */
    {"PrivateUse3", 1},                            /* 63 */
    {"Meta", 1},                                   /* 64 */
    {"QuantizedUndefined", 0},                     /* 65 */
    {"QuantizedCPU", 1},                           /* 66 */
    {"QuantizedCUDA", 1},                          /* 67 */
    {"QuantizedHIP", 0},                           /* 68 */
    {"QuantizedXLA", 0},                           /* 69 */
    {"QuantizedMPS", 0},                           /* 70 */
    {"QuantizedIPU", 0},                           /* 71 */
    {"QuantizedXPU", 1},                           /* 72 */
    {"QuantizedHPU", 0},                           /* 73 */
    {"QuantizedVE", 0},                            /* 74 */
    {"QuantizedLazy", 0},                          /* 75 */
    {"QuantizedMTIA", 0},                          /* 76 */
    {"QuantizedMAIA", 0},                          /* 77 */
    {"QuantizedPrivateUse1", 1},                   /* 78 */
    {"QuantizedPrivateUse2", 0},                   /* 79 */
    {"QuantizedPrivateUse3", 0},                   /* 80 */
    {"QuantizedMeta", 0},                          /* 81 */
    {"SparseUndefined", 0},                        /* 82 */
    {"SparseCPU", 1},                              /* 83 */
    {"SparseCUDA", 1},                             /* 84 */
    {"SparseHIP", 1},                              /* 85 */
    {"SparseXLA", 0},                              /* 86 */
    {"SparseMPS", 1},                              /* 87 */
    {"SparseIPU", 0},                              /* 88 */
    {"SparseXPU", 1},                              /* 89 */
    {"SparseHPU", 0},                              /* 90 */
    {"SparseVE", 1},                               /* 91 */
    {"SparseLazy", 0},                             /* 92 */
    {"SparseMTIA", 0},                             /* 93 */
    {"SparseMAIA", 0},                             /* 94 */
    {"SparsePrivateUse1", 1},                      /* 95 */
    {"SparsePrivateUse2", 0},                      /* 96 */
    {"SparsePrivateUse3", 0},                      /* 97 */
    {"SparseMeta", 1},                             /* 98 */
    {"SparseCsrUndefined", 0},                     /* 99 */
    {"SparseCsrCPU", 1},                           /* 100 */
    {"SparseCsrCUDA", 1},                          /* 101 */
    {"SparseCsrHIP", 1},                           /* 102 */
    {"SparseCsrXLA", 0},                           /* 103 */
    {"SparseCsrMPS", 1},                           /* 104 */
    {"SparseCsrIPU", 0},                           /* 105 */
    {"SparseCsrXPU", 1},                           /* 106 */
    {"SparseCsrHPU", 0},                           /* 107 */
    {"SparseCsrVE", 1},                            /* 108 */
    {"SparseCsrLazy", 0},                          /* 109 */
    {"SparseCsrMTIA", 0},                          /* 110 */
    {"SparseCsrMAIA", 0},                          /* 111 */
    {"SparseCsrPrivateUse1", 1},                   /* 112 */
    {"SparseCsrPrivateUse2", 0},                   /* 113 */
    {"SparseCsrPrivateUse3", 0},                   /* 114 */
    {"SparseCsrMeta", 1},                          /* 115 */
    {"NestedTensorUndefined", 0},                  /* 116 */
    {"NestedTensorCPU", 1},                        /* 117 */
    {"NestedTensorCUDA", 1},                       /* 118 */
    {"NestedTensorHIP", 0},                        /* 119 */
    {"NestedTensorXLA", 0},                        /* 120 */
    {"NestedTensorMPS", 0},                        /* 121 */
    {"NestedTensorIPU", 0},                        /* 122 */
    {"NestedTensorXPU", 1},                        /* 123 */
    {"NestedTensorHPU", 1},                        /* 124 */
    {"NestedTensorVE", 0},                         /* 125 */
    {"NestedTensorLazy", 0},                       /* 126 */
    {"NestedTensorMTIA", 0},                       /* 127 */
    {"NestedTensorMAIA", 0},                       /* 128 */
    {"NestedTensorPrivateUse1", 1},                /* 129 */
    {"NestedTensorPrivateUse2", 0},                /* 130 */
    {"NestedTensorPrivateUse3", 0},                /* 131 */
    {"NestedTensorMeta", 1},                       /* 132 */
    {"AutogradUndefined", 0},                      /* 133 */
    {"AutogradCPU", 1},                            /* 134 */
    {"AutogradCUDA", 1},                           /* 135 */
    {"AutogradHIP", 0},                            /* 136 */
    {"AutogradXLA", 1},                            /* 137 */
    {"AutogradMPS", 1},                            /* 138 */
    {"AutogradIPU", 1},                            /* 139 */
    {"AutogradXPU", 1},                            /* 140 */
    {"AutogradHPU", 1},                            /* 141 */
    {"AutogradVE", 0},                             /* 142 */
    {"AutogradLazy", 1},                           /* 143 */
    {"AutogradMTIA", 0},                           /* 144 */
    {"AutogradMAIA", 0},                           /* 145 */
    {"AutogradPrivateUse1", 1},                    /* 146 */
    {"AutogradPrivateUse2", 1},                    /* 147 */
    {"AutogradPrivateUse3", 1},                    /* 148 */
    {"AutogradMeta", 1},                           /* 149 */
    {"Autograd", 1},                               /* 150 */
    {"CompositeImplicitAutograd", 1},              /* 151 */
    {"FuncTorchBatchedDecomposition", 1},          /* 152 */
    {"CompositeImplicitAutogradNestedTensor", 1},  /* 153 */
    {"CompositeExplicitAutograd", 1},              /* 154 */
    {"CompositeExplicitAutogradNonFunctional", 1}, /* 155 */
};

static const char *const backend_names[C10C_BACKEND_COMPONENT_COUNT + 1] = {
    "InvalidBit", "CPUBit",         "CUDABit",        "HIPBit",         "XLABit",  "MPSBit",
    "IPUBit",     "XPUBit",         "HPUBit",         "VEBit",          "LazyBit", "MTIA",
    "MAIA",       "PrivateUse1Bit", "PrivateUse2Bit", "PrivateUse3Bit", "MetaBit"};

bool c10c_dispatch_key_is_valid(c10c_dispatch_key k) { return k < C10C_DISPATCH_KEY_COUNT; }

const char *c10c_dispatch_key_name(c10c_dispatch_key k) {
  return k < C10C_DISPATCH_KEY_COUNT ? keys[k].name : "UnknownUnknown";
}

c10c_status c10c_dispatch_key_parse(c10c_dispatch_key *out, const char *name) {
  C10C__CHECK_NOT_NULL(out);
  C10C__CHECK_NOT_NULL(name);
  for (c10c_dispatch_key k = 0; k < C10C_DISPATCH_KEY_COUNT; k++) {
    if (keys[k].parseable && strcmp(keys[k].name, name) == 0) {
      *out = k;
      return C10C_STATUS_OK;
    }
  }
  return c10c__fail(C10C_STATUS_ERROR, "could not parse dispatch key: %s", name);
}

bool c10c_dispatch_key_is_alias(c10c_dispatch_key k) { return key_is_alias(k); }

bool c10c_dispatch_key_is_per_backend_functionality(c10c_dispatch_key k) {
  return key_is_per_backend_functionality(k);
}

c10c_dispatch_key c10c_dispatch_key_to_functionality(c10c_dispatch_key k) {
  return key_functionality(k);
}

c10c_backend_component c10c_dispatch_key_to_backend(c10c_dispatch_key k) { return key_backend(k); }

c10c_dispatch_key c10c_dispatch_key_for_backend(c10c_dispatch_key functionality,
                                                c10c_backend_component backend) {
  return key_for_backend(functionality, backend);
}

const char *c10c_backend_component_name(c10c_backend_component b) {
  return b <= C10C_BACKEND_COMPONENT_META ? backend_names[b] : "UNKNOWN_BACKEND_BIT";
}

c10c_backend_component c10c_backend_component_from_device_type(c10c_device_type t) {
  switch (t) {
    case C10C_DEVICE_TYPE_CPU: return C10C_BACKEND_COMPONENT_CPU;
    case C10C_DEVICE_TYPE_CUDA: return C10C_BACKEND_COMPONENT_CUDA;
    case C10C_DEVICE_TYPE_HIP: return C10C_BACKEND_COMPONENT_HIP;
    case C10C_DEVICE_TYPE_XLA: return C10C_BACKEND_COMPONENT_XLA;
    case C10C_DEVICE_TYPE_MPS: return C10C_BACKEND_COMPONENT_MPS;
    case C10C_DEVICE_TYPE_IPU: return C10C_BACKEND_COMPONENT_IPU;
    case C10C_DEVICE_TYPE_XPU: return C10C_BACKEND_COMPONENT_XPU;
    case C10C_DEVICE_TYPE_HPU: return C10C_BACKEND_COMPONENT_HPU;
    case C10C_DEVICE_TYPE_VE: return C10C_BACKEND_COMPONENT_VE;
    case C10C_DEVICE_TYPE_LAZY: return C10C_BACKEND_COMPONENT_LAZY;
    case C10C_DEVICE_TYPE_META: return C10C_BACKEND_COMPONENT_META;
    case C10C_DEVICE_TYPE_MTIA: return C10C_BACKEND_COMPONENT_MTIA;
    case C10C_DEVICE_TYPE_PRIVATEUSE1: return C10C_BACKEND_COMPONENT_PRIVATE_USE1;
    /* MAIA has a backend bit but c10 does not map the device type to it. */
    default: return C10C_BACKEND_COMPONENT_INVALID;
  }
}

c10c_dispatch_key c10c_dispatch_key_autograd_from_backend(c10c_backend_component b) {
  /* HIP and VE have keys AutogradHIP / AutogradVE in the enum, but c10 routes them through
   * AutogradOther. */
  if (b == C10C_BACKEND_COMPONENT_INVALID || b > C10C_BACKEND_COMPONENT_META ||
      b == C10C_BACKEND_COMPONENT_HIP || b == C10C_BACKEND_COMPONENT_VE)
    return C10C_DISPATCH_KEY_AUTOGRAD_OTHER;
  return key_for_backend(C10C_DISPATCH_KEY_AUTOGRAD_FUNCTIONALITY, b);
}

c10c_status c10c_dispatch_key_compute(c10c_dispatch_key *out, c10c_dtype dtype, c10c_layout layout,
                                      c10c_device_type device_type) {
  C10C__CHECK_NOT_NULL(out);
  if (!c10c_dtype_is_valid(dtype))
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "invalid dtype %d", (int)dtype);
  if (!c10c_layout_is_valid(layout))
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "Unknown layout %d", (int)layout);
  if (!c10c_device_type_is_valid(device_type))
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "Unknown device type %d", (int)device_type);
  const char *type_name = c10c__device_type_name(device_type, false);
  /* The device types with a backend component are exactly c10's
   * C10_FORALL_BACKEND_DEVICE_TYPES, the ones computeDispatchKey maps per backend. */
  c10c_backend_component backend = c10c_backend_component_from_device_type(device_type);
  switch (layout) {
    case C10C_LAYOUT_JAGGED:
    case C10C_LAYOUT_STRIDED:
      if (backend != C10C_BACKEND_COMPONENT_INVALID) {
        *out = key_for_backend(
            c10c_dtype_is_quantized(dtype) ? C10C_DISPATCH_KEY_QUANTIZED : C10C_DISPATCH_KEY_DENSE,
            backend);
        return C10C_STATUS_OK;
      }
      switch (device_type) {
        case C10C_DEVICE_TYPE_FPGA: *out = C10C_DISPATCH_KEY_FPGA; return C10C_STATUS_OK;
        case C10C_DEVICE_TYPE_MAIA: *out = C10C_DISPATCH_KEY_MAIA; return C10C_STATUS_OK;
        case C10C_DEVICE_TYPE_VULKAN: *out = C10C_DISPATCH_KEY_VULKAN; return C10C_STATUS_OK;
        case C10C_DEVICE_TYPE_METAL: *out = C10C_DISPATCH_KEY_METAL; return C10C_STATUS_OK;
        case C10C_DEVICE_TYPE_MKLDNN:
        case C10C_DEVICE_TYPE_OPENGL:
        case C10C_DEVICE_TYPE_OPENCL:
        case C10C_DEVICE_TYPE_IDEEP:
          return c10c__fail(C10C_STATUS_ERROR,
                            "This is a grandfathered Caffe2 device type %s, it shouldn't ever "
                            "convert to a DispatchKey.  File a bug describing what you were "
                            "doing if you think this is in error.",
                            type_name);
        default:
          return c10c__fail(C10C_STATUS_NOT_IMPLEMENTED,
                            "Unsupported device type for dense layout: %s", type_name);
      }
    case C10C_LAYOUT_SPARSE:
      if (backend == C10C_BACKEND_COMPONENT_INVALID)
        return c10c__fail(C10C_STATUS_NOT_IMPLEMENTED,
                          "Unsupported device type for sparse layout: %s", type_name);
      *out = key_for_backend(C10C_DISPATCH_KEY_SPARSE, backend);
      return C10C_STATUS_OK;
    case C10C_LAYOUT_MKLDNN:
      if (device_type != C10C_DEVICE_TYPE_CPU)
        return c10c__fail(C10C_STATUS_NOT_IMPLEMENTED,
                          "Unsupported device type for mkldnn layout: %s", type_name);
      *out = C10C_DISPATCH_KEY_MKLDNN_CPU;
      return C10C_STATUS_OK;
    default: /* SparseCsr, SparseCsc, SparseBsr, SparseBsc */
      if (backend == C10C_BACKEND_COMPONENT_INVALID)
        return c10c__fail(C10C_STATUS_NOT_IMPLEMENTED, "Unsupported device type for %s layout: %s",
                          c10c_layout_name(layout), type_name);
      *out = key_for_backend(C10C_DISPATCH_KEY_SPARSE_CSR, backend);
      return C10C_STATUS_OK;
  }
}
