/* Release and ABI versions of the loaded library, and the check a caller runs at start-up to
 * find out whether the library it loaded matches the headers it was compiled with.
 */
#include <string.h>

#include "internal.h"

#define STRINGIFY_(x) #x
#define STRINGIFY(x)  STRINGIFY_(x)

/* Layout facts of the public value types, frozen with ABI 1.0 (c10's sizes where c10 has the
 * type). abidiff in CI catches a change too; these stop it at compile time. They are the C
 * rules of each target, which an FFI follows from the header too: a 64-bit member is aligned
 * to 8 bytes inside a struct except on i386 (4: c10::Stream is 12 bytes there), and pointers
 * are 4 bytes on 32-bit targets. */
struct i64_in_struct {
  char c;
  int64_t x;
};
#define I64_ALIGN offsetof(struct i64_in_struct, x)
_Static_assert(sizeof(c10c_device) == 2 && offsetof(c10c_device, index) == 1, "c10c_device");
_Static_assert(sizeof(c10c_stream) == I64_ALIGN + 8 && offsetof(c10c_stream, id) == I64_ALIGN,
               "c10c_stream");
_Static_assert(sizeof(c10c_stream_data3) == (10 + I64_ALIGN - 1) / I64_ALIGN * I64_ALIGN &&
                   offsetof(c10c_stream_data3, device_index) == 8 &&
                   offsetof(c10c_stream_data3, device_type) == 9,
               "c10c_stream_data3");
_Static_assert(sizeof(c10c_dispatch_key_set) == 8, "c10c_dispatch_key_set");
_Static_assert(sizeof(c10c_abi_info) == 28, "c10c_abi_info");
_Static_assert(sizeof(c10c_data_ptr) == 4 * sizeof(void *) &&
                   offsetof(c10c_data_ptr, device) == 3 * sizeof(void *),
               "c10c_data_ptr");
_Static_assert(sizeof(c10c_stat) == 32, "c10c_stat");
_Static_assert(sizeof(c10c_status) == 4 && sizeof(c10c_dtype) == 1 && sizeof(c10c_layout) == 1 &&
                   sizeof(c10c_memory_format) == 1 && sizeof(c10c_device_type) == 1 &&
                   sizeof(c10c_dispatch_key) == 2 && sizeof(c10c_backend_component) == 1,
               "enum widths");

uint32_t c10c_version_number(void) { return C10C_VERSION_NUMBER; }

const char *c10c_version_string(void) {
  return STRINGIFY(C10C_VERSION_MAJOR) "." STRINGIFY(C10C_VERSION_MINOR) "." STRINGIFY(
      C10C_VERSION_PATCH);
}

uint32_t c10c_abi_version(void) { return C10C_ABI_VERSION; }

/* One row per size field of c10c_abi_info: where it sits, the library's value, and a name. */
typedef struct size_field {
  size_t offset;
  uint32_t library_size;
  const char *type_name;
} size_field;

static const size_field size_fields[] = {
    {offsetof(c10c_abi_info, sizeof_device), sizeof(c10c_device), "c10c_device"},
    {offsetof(c10c_abi_info, sizeof_stream), sizeof(c10c_stream), "c10c_stream"},
    {offsetof(c10c_abi_info, sizeof_stream_data3), sizeof(c10c_stream_data3), "c10c_stream_data3"},
    {offsetof(c10c_abi_info, sizeof_dispatch_key_set), sizeof(c10c_dispatch_key_set),
     "c10c_dispatch_key_set"},
    {offsetof(c10c_abi_info, sizeof_data_ptr), sizeof(c10c_data_ptr), "c10c_data_ptr"},
};

c10c_status c10c_abi_check(const c10c_abi_info *caller) {
  C10C__CHECK_NOT_NULL(caller);
  uint32_t size = caller->struct_size;
  if (size < offsetof(c10c_abi_info, sizeof_device))
    return c10c__fail(C10C_STATUS_ABI_MISMATCH,
                      "libc10c ABI check: c10c_abi_info.struct_size is %u, too small to be "
                      "filled by C10C_ABI_INFO_INIT",
                      (unsigned)size);
  uint32_t caller_major = caller->abi_version >> 16, caller_minor = caller->abi_version & 0xFFFF;
  if (caller_major == C10C_ABI_VERSION_MAJOR && caller_minor > C10C_ABI_VERSION_MINOR)
    return c10c__fail(C10C_STATUS_ABI_MISMATCH,
                      "libc10c ABI %u.%u (release %s) is older than the ABI %u.%u this program "
                      "was built for; install a libc10c with ABI >= %u.%u",
                      (unsigned)C10C_ABI_VERSION_MAJOR, (unsigned)C10C_ABI_VERSION_MINOR,
                      c10c_version_string(), (unsigned)caller_major, (unsigned)caller_minor,
                      (unsigned)caller_major, (unsigned)caller_minor);
  if (caller_major != C10C_ABI_VERSION_MAJOR)
    return c10c__fail(C10C_STATUS_ABI_MISMATCH,
                      "libc10c ABI mismatch: the caller was compiled against ABI %u.%u, the "
                      "loaded library (release %s) provides ABI %u.%u",
                      (unsigned)caller_major, (unsigned)caller_minor, c10c_version_string(),
                      (unsigned)C10C_ABI_VERSION_MAJOR, (unsigned)C10C_ABI_VERSION_MINOR);
  const unsigned char *base = (const unsigned char *)caller;
  for (size_t i = 0; i < sizeof size_fields / sizeof size_fields[0]; i++) {
    const size_field *f = &size_fields[i];
    if (f->offset + sizeof(uint32_t) > size) break; /* an older caller does not know this one */
    uint32_t caller_size;
    memcpy(&caller_size, base + f->offset, sizeof caller_size);
    if (caller_size != f->library_size)
      return c10c__fail(C10C_STATUS_ABI_MISMATCH,
                        "libc10c ABI mismatch: sizeof(%s) is %u in the caller but %u in the "
                        "loaded library",
                        f->type_name, (unsigned)caller_size, (unsigned)f->library_size);
  }
  return C10C_STATUS_OK;
}
