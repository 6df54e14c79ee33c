/* libc10c: what every public header shares.
 *
 * The standard headers this library's API uses (fixed-width integers, size_t, bool), the export
 * macro, and the status type. Public headers include nothing else, so they stay self-contained
 * C11 and can be included from C++ (declarations are extern "C").
 *
 * When C10C_CDEF is defined the headers are being preprocessed into a cffi declaration list
 * (pyc10/_build_ffi.py): system headers and attributes are left out then, because cffi knows
 * the fixed-width types itself and cannot parse attributes.
 */
#ifndef C10C_COMMON_H
#define C10C_COMMON_H

#ifndef C10C_CDEF
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#endif

#if defined(C10C_CDEF)
#define C10C_API
#elif defined(_WIN32)
/* A DLL exports what it marks; a host of the DLL imports it. A host linking the static library
 * (and the static library itself) defines C10C_STATIC: plain declarations. */
#if defined(C10C_STATIC)
#define C10C_API
#elif defined(C10C_BUILDING_LIBRARY)
#define C10C_API __declspec(dllexport)
#else
#define C10C_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define C10C_API __attribute__((visibility("default")))
#else
#define C10C_API
#endif

#ifdef __cplusplus
#define C10C_BEGIN_DECLS extern "C" {
#define C10C_END_DECLS   }
#else
#define C10C_BEGIN_DECLS
#define C10C_END_DECLS
#endif

C10C_BEGIN_DECLS

/* Result of every fallible function: 0 (C10C_STATUS_OK) on success, a negative C10C_STATUS_*
 * code on failure (see status.h). A fixed-width integer, never an enum, so its size is part of
 * the ABI on every compiler. */
typedef int32_t c10c_status;

C10C_END_DECLS

#endif /* C10C_COMMON_H */
