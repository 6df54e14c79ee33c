/* Device types and devices: names, validation, formatting, and parsing of device strings with
 * c10's grammar and messages (c10/core/Device.cpp), except that indices above 127 are refused
 * instead of being truncated to 8 bits.
 */
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sysmem.h"

static const char *const lower_names[C10C_DEVICE_TYPE_COUNT] = {
    "cpu",  "cuda", "mkldnn", "opengl", "opencl", "ideep", "hip",
    "fpga", "maia", "xla",    "vulkan", "metal",  "xpu",   "mps",
    "meta", "hpu",  "ve",     "lazy",   "ipu",    "mtia",  "privateuseone"};

static const char *const upper_names[C10C_DEVICE_TYPE_COUNT] = {
    "CPU",  "CUDA", "MKLDNN", "OPENGL", "OPENCL", "IDEEP", "HIP",
    "FPGA", "MAIA", "XLA",    "VULKAN", "METAL",  "XPU",   "MPS",
    "META", "HPU",  "VE",     "LAZY",   "IPU",    "MTIA",  "PRIVATEUSEONE"};

/* The names a device string may start with, in the order c10's parse_type tries them (and lists
 * them in its error message). "metal" is missing on purpose, as in c10. */
static const c10c_device_type parse_order[] = {
    C10C_DEVICE_TYPE_CPU,    C10C_DEVICE_TYPE_CUDA,       C10C_DEVICE_TYPE_IPU,
    C10C_DEVICE_TYPE_XPU,    C10C_DEVICE_TYPE_MKLDNN,     C10C_DEVICE_TYPE_OPENGL,
    C10C_DEVICE_TYPE_OPENCL, C10C_DEVICE_TYPE_IDEEP,      C10C_DEVICE_TYPE_HIP,
    C10C_DEVICE_TYPE_VE,     C10C_DEVICE_TYPE_FPGA,       C10C_DEVICE_TYPE_MAIA,
    C10C_DEVICE_TYPE_XLA,    C10C_DEVICE_TYPE_LAZY,       C10C_DEVICE_TYPE_VULKAN,
    C10C_DEVICE_TYPE_MPS,    C10C_DEVICE_TYPE_META,       C10C_DEVICE_TYPE_HPU,
    C10C_DEVICE_TYPE_MTIA,   C10C_DEVICE_TYPE_PRIVATEUSE1};

static const char expected_types_message[] =
    "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, "
    "xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device "
    "string: ";

/* The registered PrivateUse1 name, lower and upper case in one allocation ("foo\0FOO\0"), or
 * NULL. Written once by a compare-and-swap, then never changed or freed (as c10's static
 * string): readers need no lock. */
static _Atomic(char *) privateuse1_names;

enum { PRIVATEUSE1_NAME_MAX = C10C_DEVICE_STRING_MAX - 6 }; /* room for ":127" and the NUL */

static const char *registered_privateuse1(bool lower_case) {
  const char *names = atomic_load_explicit(&privateuse1_names, memory_order_acquire);
  if (names == NULL) return NULL;
  return lower_case ? names : names + strlen(names) + 1;
}

const char *c10c_privateuse1_backend_name(bool lower_case) {
  const char *name = registered_privateuse1(lower_case);
  if (name != NULL) return name;
  return lower_case ? "privateuseone" : "PRIVATEUSEONE";
}

c10c_status c10c_privateuse1_backend_register(const char *name) {
  C10C__CHECK_NOT_NULL(name);
  size_t len = strlen(name);
  bool well_formed = len >= 1 && len <= PRIVATEUSE1_NAME_MAX;
  for (size_t i = 0; well_formed && i < len; i++)
    well_formed =
        (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') || name[i] == '_';
  if (!well_formed)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "privateuse1 backend name must be 1 to %d characters of [a-zA-Z_], got "
                      "'%.64s'",
                      PRIVATEUSE1_NAME_MAX, name);
  const char *current = registered_privateuse1(true);
  if (current != NULL && strcmp(current, name) != 0)
    return c10c__fail(C10C_STATUS_ERROR,
                      "torch.register_privateuse1_backend() has already been set! Current "
                      "backend: %s",
                      current);
  /* c10 refuses cpu, cuda, hip, mps, xpu and mtia; every other name a device string may start
   * with is refused too, or its devices would print as another type's ("xla:0" for a
   * PrivateUse1 device named xla, parsed back as XLA). privateuseone names PrivateUse1 itself. */
  for (size_t i = 0; i < sizeof parse_order / sizeof parse_order[0]; i++)
    if (parse_order[i] != C10C_DEVICE_TYPE_PRIVATEUSE1 &&
        strcmp(lower_names[parse_order[i]], name) == 0)
      return c10c__fail(C10C_STATUS_ERROR,
                        "Cannot register privateuse1 backend with in-tree device name: %s", name);
  if (current != NULL) return C10C_STATUS_OK; /* the same name again */
  char *names = c10c__malloc(2 * (len + 1));
  if (names == NULL)
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY,
                      "out of memory registering the privateuse1 backend name");
  for (size_t i = 0; i <= len; i++) {
    names[i] = name[i];
    names[len + 1 + i] = (name[i] >= 'a' && name[i] <= 'z') ? (char)(name[i] - 'a' + 'A') : name[i];
  }
  char *expected = NULL;
  if (!atomic_compare_exchange_strong_explicit(&privateuse1_names, &expected, names,
                                               memory_order_acq_rel, memory_order_acquire)) {
    c10c__free(names); /* another thread registered first */
    if (strcmp(expected, name) != 0)
      return c10c__fail(C10C_STATUS_ERROR,
                        "torch.register_privateuse1_backend() has already been set! Current "
                        "backend: %s",
                        expected);
  }
  return C10C_STATUS_OK;
}

bool c10c_device_type_is_valid(c10c_device_type t) { return t >= 0 && t < C10C_DEVICE_TYPE_COUNT; }

const char *c10c__device_type_name(c10c_device_type t, bool lower_case) {
  if (!c10c_device_type_is_valid(t)) return NULL;
  if (t == C10C_DEVICE_TYPE_PRIVATEUSE1) return c10c_privateuse1_backend_name(lower_case);
  return lower_case ? lower_names[t] : upper_names[t];
}

const char *c10c_device_type_name(c10c_device_type t, bool lower_case) {
  const char *name = c10c__device_type_name(t, lower_case);
  if (name == NULL)
    c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
               "Unknown device: %d. If you have recently updated the caffe2.proto file to add a "
               "new device type, did you forget to update the DeviceTypeName() function to "
               "reflect such recent changes?",
               (int)t);
  return name;
}

c10c_status c10c__check_device(c10c_device device) {
  if (!c10c_device_type_is_valid(device.type))
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "Unknown device type %d", (int)device.type);
  if (device.index < C10C_DEVICE_INDEX_NONE)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "Device index must be -1 or non-negative, got %d", (int)device.index);
  return C10C_STATUS_OK;
}

static c10c_status index_out_of_range(long long index) {
  return c10c__fail(C10C_STATUS_ERROR, "Device index %lld is out of range (the largest is %d)",
                    index, C10C_DEVICE_INDEX_MAX);
}

c10c_status c10c_device_init(c10c_device *out, c10c_device_type type, int64_t index) {
  C10C__CHECK_NOT_NULL(out);
  if (!c10c_device_type_is_valid(type))
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "Unknown device type %d", (int)type);
  /* torch.device(type, index) refuses negative indices with this message; -1 means "none". */
  if (index < C10C_DEVICE_INDEX_NONE)
    return c10c__fail(C10C_STATUS_ERROR, "Device index must not be negative");
  if (index > C10C_DEVICE_INDEX_MAX) return index_out_of_range((long long)index);
  out->type = type;
  out->index = (c10c_device_index)index;
  return C10C_STATUS_OK;
}

static c10c_status index_out_of_range_in(const char *str, int shown, long long index) {
  return c10c__fail(C10C_STATUS_ERROR,
                    "Device index %lld is out of range (the largest is %d) in device string "
                    "'%.*s'",
                    index, C10C_DEVICE_INDEX_MAX, shown, str);
}

static bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* Splits s into name and index digits with c10's scanner, matching
 * `([a-zA-Z_]+)(?::([1-9]\d*|0))?`. Returns false on a syntax error. */
static bool scan_device_string(const char *s, size_t len, size_t *name_len, size_t *digits_at,
                               size_t *digits_len) {
  size_t i = 0;
  while (i < len && is_name_char(s[i])) i++;
  *name_len = i;
  *digits_at = i;
  *digits_len = 0;
  if (i == len) return i > 0;
  if (s[i] != ':' || i == 0) return false;
  size_t start = ++i;
  if (i == len || !is_digit(s[i])) return false;
  if (s[i] == '0') {
    i++;
  } else {
    while (i < len && is_digit(s[i])) i++;
  }
  if (i != len) return false;
  *digits_at = start;
  *digits_len = i - start;
  return true;
}

c10c_status c10c_device_from_chars(c10c_device *out, const char *str, size_t len) {
  C10C__CHECK_NOT_NULL(out);
  if (str == NULL && len > 0) return c10c__null_argument(__func__, "str");
  if (len == 0) return c10c__fail(C10C_STATUS_ERROR, "Device string must not be empty");
  int shown = len > INT_MAX ? INT_MAX : (int)len;
  size_t name_len, digits_at, digits_len;
  if (!scan_device_string(str, len, &name_len, &digits_at, &digits_len))
    return c10c__fail(C10C_STATUS_ERROR, "Invalid device string: '%.*s'", shown, str);

  long long index = C10C_DEVICE_INDEX_NONE;
  if (digits_len > 0) {
    /* c10 converts with std::stoi: more than an int holds fails with this message. */
    index = 0;
    for (size_t i = 0; i < digits_len; i++) {
      index = index * 10 + (str[digits_at + i] - '0');
      if (index > INT_MAX)
        return c10c__fail(C10C_STATUS_ERROR,
                          "Could not parse device index '%.*s' in device string '%.*s'",
                          (int)digits_len, str + digits_at, shown, str);
    }
  }

  for (size_t i = 0; i < sizeof parse_order / sizeof parse_order[0]; i++) {
    const char *candidate = lower_names[parse_order[i]];
    if (strlen(candidate) != name_len || memcmp(candidate, str, name_len) != 0) continue;
    /* Where c10 truncates to int8 (cuda:128 -> -128), refuse instead. Checked after the type
     * lookup so that every string c10 rejects gets c10's message. */
    if (index > C10C_DEVICE_INDEX_MAX) return index_out_of_range_in(str, shown, index);
    out->type = parse_order[i];
    out->index = (c10c_device_index)index;
    return C10C_STATUS_OK;
  }
  const char *registered = registered_privateuse1(true);
  if (registered != NULL && strlen(registered) == name_len &&
      memcmp(registered, str, name_len) == 0) {
    if (index > C10C_DEVICE_INDEX_MAX) return index_out_of_range_in(str, shown, index);
    out->type = C10C_DEVICE_TYPE_PRIVATEUSE1;
    out->index = (c10c_device_index)index;
    return C10C_STATUS_OK;
  }
  return c10c__fail(C10C_STATUS_ERROR, "%s%.*s", expected_types_message, (int)name_len, str);
}

c10c_status c10c_device_from_string(c10c_device *out, const char *str) {
  C10C__CHECK_NOT_NULL(str);
  return c10c_device_from_chars(out, str, strlen(str));
}

c10c_status c10c_device_to_string(char *out, size_t out_size, c10c_device device) {
  C10C__CHECK_NOT_NULL(out);
  c10c_status st = c10c__check_device(device);
  if (st != C10C_STATUS_OK) return st;
  const char *name = c10c__device_type_name(device.type, true);
  int n = device.index == C10C_DEVICE_INDEX_NONE
              ? snprintf(out, out_size, "%s", name)
              : snprintf(out, out_size, "%s:%d", name, (int)device.index);
  if (n < 0 || (size_t)n >= out_size)
    return c10c__fail(C10C_STATUS_BUFFER_TOO_SMALL,
                      "c10c_device_to_string: %zu bytes needed, the buffer has %zu",
                      (size_t)(n < 0 ? 0 : n) + 1, out_size);
  return C10C_STATUS_OK;
}

bool c10c_device_equal(c10c_device a, c10c_device b) {
  return a.type == b.type && a.index == b.index;
}

uint64_t c10c_device_hash(c10c_device device) {
  return (uint64_t)(uint32_t)(((uint32_t)(uint8_t)device.type << 16) |
                              (uint32_t)(uint8_t)device.index);
}

bool c10c_device_supports_as_strided(c10c_device device) {
  return device.type != C10C_DEVICE_TYPE_IPU && device.type != C10C_DEVICE_TYPE_XLA &&
         device.type != C10C_DEVICE_TYPE_LAZY;
}
