/* libc10c: device types and devices, as c10's DeviceType and Device.
 *
 * A device is a 2-byte value {type, index} passed by value. Numeric values of the device types
 * equal torch 2.13's c10 (c10/core/DeviceType.h), frozen for every 1.x (other torch versions are
 * met by name), so they can be exchanged with PyTorch 2.13 as numbers.
 */
#ifndef C10C_DEVICE_H
#define C10C_DEVICE_H

#include "common.h"

C10C_BEGIN_DECLS

/* c10::DeviceType, an 8-bit integer. Values 0..20 are valid; the names in comments are the
 * lower-case names used in device strings. */
typedef int8_t c10c_device_type;
enum c10c_device_type_value {
  C10C_DEVICE_TYPE_CPU = 0,          /* "cpu" */
  C10C_DEVICE_TYPE_CUDA = 1,         /* "cuda" */
  C10C_DEVICE_TYPE_MKLDNN = 2,       /* "mkldnn" (reserved by c10, no tensors use it) */
  C10C_DEVICE_TYPE_OPENGL = 3,       /* "opengl" */
  C10C_DEVICE_TYPE_OPENCL = 4,       /* "opencl" */
  C10C_DEVICE_TYPE_IDEEP = 5,        /* "ideep" */
  C10C_DEVICE_TYPE_HIP = 6,          /* "hip" */
  C10C_DEVICE_TYPE_FPGA = 7,         /* "fpga" */
  C10C_DEVICE_TYPE_MAIA = 8,         /* "maia" */
  C10C_DEVICE_TYPE_XLA = 9,          /* "xla" */
  C10C_DEVICE_TYPE_VULKAN = 10,      /* "vulkan" */
  C10C_DEVICE_TYPE_METAL = 11,       /* "metal" (printed, but not parsed, as in c10) */
  C10C_DEVICE_TYPE_XPU = 12,         /* "xpu" */
  C10C_DEVICE_TYPE_MPS = 13,         /* "mps" */
  C10C_DEVICE_TYPE_META = 14,        /* "meta" */
  C10C_DEVICE_TYPE_HPU = 15,         /* "hpu" */
  C10C_DEVICE_TYPE_VE = 16,          /* "ve" */
  C10C_DEVICE_TYPE_LAZY = 17,        /* "lazy" */
  C10C_DEVICE_TYPE_IPU = 18,         /* "ipu" */
  C10C_DEVICE_TYPE_MTIA = 19,        /* "mtia" */
  C10C_DEVICE_TYPE_PRIVATEUSE1 = 20, /* "privateuseone" */
  C10C_DEVICE_TYPE_COUNT = 21        /* number of device types (COMPILE_TIME_MAX_DEVICE_TYPES) */
};

/* c10::DeviceIndex: -1 means "no index" (the current device of that type), else 0..127. */
typedef int8_t c10c_device_index;
enum c10c_device_index_limit {
  C10C_DEVICE_INDEX_NONE = -1,
  C10C_DEVICE_INDEX_MAX = 127,
  /* Buffer size that always holds a formatted device, e.g. "privateuseone:127" and its NUL. */
  C10C_DEVICE_STRING_MAX = 32
};

/* A device: type and index, 2 bytes, as c10::Device. */
typedef struct c10c_device {
  c10c_device_type type;   /* a C10C_DEVICE_TYPE_* value */
  c10c_device_index index; /* -1 (no index) or 0..127 */
} c10c_device;

/* Whether t is one of the 21 device types.
 * Errors: none. */
C10C_API bool c10c_device_type_is_valid(c10c_device_type t);

/* c10's DeviceTypeName: lower-case ("cuda", "privateuseone") or upper-case ("CUDA",
 * "PRIVATEUSEONE", "VULKAN", "META") name of a device type; PrivateUse1 has its registered name
 * once one is registered (c10c_privateuse1_backend_register).
 * Ownership: static string. Errors: NULL and C10C_STATUS_INVALID_ARGUMENT for an unknown type,
 * with c10's message "Unknown device: 21. If you have recently updated ...". */
C10C_API const char *c10c_device_type_name(c10c_device_type t, bool lower_case);

/* Makes a device from a type and an index (-1 for none).
 * Unlike c10, which truncates an index to 8 bits silently, an index outside -1..127 is an error.
 * Like c10 release builds, a CPU device may carry an index ("cpu:1" is a valid device).
 * Errors: C10C_STATUS_NULL_POINTER (out), C10C_STATUS_INVALID_ARGUMENT (unknown type),
 * C10C_STATUS_ERROR "Device index must not be negative" (index < -1) and
 * C10C_STATUS_ERROR "Device index 128 is out of range ..." (index > 127). */
C10C_API c10c_status c10c_device_init(c10c_device *out, c10c_device_type type, int64_t index);

/* Parses a device string exactly as torch.device(str): "cpu", "cuda", "cuda:1", "meta",
 * "privateuseone:0", ... (grammar `[a-zA-Z_]+(:(0|[1-9][0-9]*))?`, case-sensitive names), and
 * the registered PrivateUse1 name.
 * Errors (C10C_STATUS_ERROR, messages as c10): "Device string must not be empty",
 * "Invalid device string: '<s>'", "Could not parse device index '<digits>' in device string
 * '<s>'" (beyond int), "Expected one of cpu, cuda, ... device type at start of device string:
 * <name>". Deliberate difference from c10: an index above 127 is the error "Device index <n> is
 * out of range (the largest is 127) in device string '<s>'" instead of being truncated to
 * 8 bits. C10C_STATUS_NULL_POINTER for a NULL out or str. */
C10C_API c10c_status c10c_device_from_string(c10c_device *out, const char *str);

/* As c10c_device_from_string for the len bytes at str (which need not be NUL-terminated and may
 * contain NUL bytes, which are then invalid characters). str may be NULL when len is 0 (the
 * empty string's error).
 * Errors: as c10c_device_from_string; C10C_STATUS_NULL_POINTER for a NULL out, or a NULL str
 * with len > 0. */
C10C_API c10c_status c10c_device_from_chars(c10c_device *out, const char *str, size_t len);

/* Formats a device as c10's Device::str(): "cuda:1", or "cuda" when the index is -1 (PrivateUse1
 * devices under their registered name).
 * out receives at most out_size bytes including the NUL; C10C_DEVICE_STRING_MAX always fits.
 * Errors: C10C_STATUS_NULL_POINTER (out, even with out_size 0), C10C_STATUS_INVALID_ARGUMENT
 * (unknown type or index outside -1..127), C10C_STATUS_BUFFER_TOO_SMALL (out then holds a
 * truncated string when out_size > 0). */
C10C_API c10c_status c10c_device_to_string(char *out, size_t out_size, c10c_device device);

/* Renames the PrivateUse1 device type, as c10's register_privateuse1_backend (torch's
 * torch.utils.rename_privateuse1_backend): afterwards "<name>:1" parses as a PrivateUse1 device
 * ("privateuseone:1" still does) and PrivateUse1 devices print as "<name>:1". Once per process:
 * registering the same name again succeeds, another name fails. name is copied (the caller may
 * free it when this returns). Unlike c10, the name must be 1
 * to 26 characters of [a-zA-Z_], and none of the names a device string already starts with
 * ("meta", "xla", ...: c10 refuses only cpu, cuda, hip, mps, xpu and mtia), so that every
 * device prints to a string that parses back to it.
 * Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_INVALID_ARGUMENT for a malformed name;
 * C10C_STATUS_ERROR "Cannot register privateuse1 backend with in-tree device name: <name>" (the
 * device type names but privateuseone) and "torch.register_privateuse1_backend() has already
 * been set! Current backend: <name>"; C10C_STATUS_OUT_OF_MEMORY. Thread-safety: any thread;
 * exactly one of several racing names wins. */
C10C_API c10c_status c10c_privateuse1_backend_register(const char *name);

/* The PrivateUse1 device type's name: the registered name, else "privateuseone"; upper-cased
 * when lower_case is false (c10's get_privateuse1_backend).
 * Ownership: a string that stays valid for the life of the process. Errors: none. */
C10C_API const char *c10c_privateuse1_backend_name(bool lower_case);

/* Whether two devices have the same type and index (c10's operator==).
 * Errors: none. */
C10C_API bool c10c_device_equal(c10c_device a, c10c_device b);

/* c10's std::hash<Device>: (uint8 type) << 16 | (uint8 index), widened to 64 bits.
 * Errors: none. */
C10C_API uint64_t c10c_device_hash(c10c_device device);

/* c10's Device::supports_as_strided(): false for IPU, XLA and Lazy devices.
 * Errors: none. */
C10C_API bool c10c_device_supports_as_strided(c10c_device device);

C10C_END_DECLS

#endif /* C10C_DEVICE_H */
