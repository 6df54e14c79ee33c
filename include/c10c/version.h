/* libc10c: release and ABI versions, at compile time and at run time, and the ABI check.
 *
 * The release version (MAJOR.MINOR.PATCH) names a build. The ABI version says what a program
 * compiled against these headers can rely on: a library of the same ABI major and an ABI minor
 * at least as high runs it unchanged. The SONAME (libc10c.so.<ABI major>) carries the ABI major.
 */
#ifndef C10C_VERSION_H
#define C10C_VERSION_H

#include "allocator.h"
#include "common.h"
#include "device.h"
#include "dispatch_key.h"
#include "stream.h"

C10C_BEGIN_DECLS

#define C10C_VERSION_MAJOR 1
#define C10C_VERSION_MINOR 1
#define C10C_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH, as zstd's ZSTD_VERSION_NUMBER. */
#define C10C_VERSION_NUMBER \
  (C10C_VERSION_MAJOR * 10000 + C10C_VERSION_MINOR * 100 + C10C_VERSION_PATCH)

#define C10C_ABI_VERSION_MAJOR 1
#define C10C_ABI_VERSION_MINOR 2
/* MAJOR << 16 | MINOR. */
#define C10C_ABI_VERSION       ((C10C_ABI_VERSION_MAJOR << 16) | C10C_ABI_VERSION_MINOR)

/* The macros above as enum constants, which survive preprocessing: the -DC10C_CDEF header that
 * FFI parsers read (cffi in either mode, and bindings generated from it) keeps no macro. A
 * binding takes the version it was written against from here, never from the library (that
 * would check the library against itself). The macros stay for C (#if needs them). */
enum {
  C10C_VERSION_MAJOR_VALUE = C10C_VERSION_MAJOR,
  C10C_VERSION_MINOR_VALUE = C10C_VERSION_MINOR,
  C10C_VERSION_PATCH_VALUE = C10C_VERSION_PATCH,
  C10C_VERSION_NUMBER_VALUE = C10C_VERSION_NUMBER,
  C10C_ABI_VERSION_MAJOR_VALUE = C10C_ABI_VERSION_MAJOR,
  C10C_ABI_VERSION_MINOR_VALUE = C10C_ABI_VERSION_MINOR,
  C10C_ABI_VERSION_VALUE = C10C_ABI_VERSION,
};

/* The release version of the loaded library, as C10C_VERSION_NUMBER. Errors: none. */
C10C_API uint32_t c10c_version_number(void);

/* The release version of the loaded library as "MAJOR.MINOR.PATCH".
 * Ownership: static string. Errors: none. */
C10C_API const char *c10c_version_string(void);

/* The ABI version of the loaded library, as C10C_ABI_VERSION. Errors: none. */
C10C_API uint32_t c10c_abi_version(void);

/* What a caller was compiled with; fill it with C10C_ABI_INFO_INIT. Fields are only ever
 * appended; struct_size tells the library which ones the caller knows.
 * From an FFI without the macro, fill it from the binding's own declarations: struct_size =
 * the binding's size of c10c_abi_info, abi_version = C10C_ABI_VERSION_VALUE (the enum constant
 * of the header the binding was made from), and each sizeof_X = the binding's size of c10c_X
 * (sizeof_stream_data3: of c10c_stream_data3). In cffi:
 *   info = ffi.new("c10c_abi_info *", {"struct_size": ffi.sizeof("c10c_abi_info"),
 *       "abi_version": lib.C10C_ABI_VERSION_VALUE, "sizeof_device": ffi.sizeof("c10c_device"),
 *       ...}); lib.c10c_abi_check(info)
 * A library function cannot fill it: it would report the library's own version and sizes. */
typedef struct c10c_abi_info {
  uint32_t struct_size;             /* sizeof(c10c_abi_info) in the caller */
  uint32_t abi_version;             /* C10C_ABI_VERSION in the caller */
  uint32_t sizeof_device;           /* sizeof(c10c_device) */
  uint32_t sizeof_stream;           /* sizeof(c10c_stream) */
  uint32_t sizeof_stream_data3;     /* sizeof(c10c_stream_data3) */
  uint32_t sizeof_dispatch_key_set; /* sizeof(c10c_dispatch_key_set) */
  uint32_t sizeof_data_ptr;         /* sizeof(c10c_data_ptr) */
} c10c_abi_info;

#define C10C_ABI_INFO_INIT                                                                      \
  {                                                                                             \
    (uint32_t)sizeof(c10c_abi_info), (uint32_t)C10C_ABI_VERSION, (uint32_t)sizeof(c10c_device), \
        (uint32_t)sizeof(c10c_stream), (uint32_t)sizeof(c10c_stream_data3),                     \
        (uint32_t)sizeof(c10c_dispatch_key_set), (uint32_t)sizeof(c10c_data_ptr)                \
  }

/* Checks that the loaded library can serve a caller compiled with *caller (as Lua's
 * luaL_checkversion): same ABI major, library ABI minor >= the caller's, and equal sizes of
 * every public struct both know. Call it once at start-up:
 *   c10c_abi_info info = C10C_ABI_INFO_INIT;
 *   if (c10c_abi_check(&info) != C10C_STATUS_OK) { ... c10c_last_error_message() ... }
 * Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_ABI_MISMATCH with a message naming what
 * differs. */
C10C_API c10c_status c10c_abi_check(const c10c_abi_info *caller);

C10C_END_DECLS

#endif /* C10C_VERSION_H */
