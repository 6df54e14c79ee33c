/* libc10c internals shared by the library's .c files (never installed).
 *
 * Error reporting helpers (c10c__fail stores the thread's message and returns the status) and
 * small checks every entry point uses. Names carry the c10c__ prefix; none are exported.
 */
#ifndef C10C_INTERNAL_H
#define C10C_INTERNAL_H

#include "c10c/c10c.h"

#if defined(__MINGW32__)
/* mingw-w64 builds use its C99 printf (__USE_MINGW_ANSI_STDIO, meson.build), not msvcrt's */
#define C10C__PRINTF(fmt_index, first_arg) __attribute__((format(gnu_printf, fmt_index, first_arg)))
#elif defined(__GNUC__) || defined(__clang__)
#define C10C__PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define C10C__PRINTF(fmt_index, first_arg)
#endif

/* Initial-exec thread-locals for the hot paths: one load, no __tls_get_addr call. glibc keeps a
 * static TLS reserve for libraries loaded later, so libc10c may use them even when dlopen'ed
 * (pyc10 loads it so); musl has no such reserve and refuses to dlopen a library that uses them
 * ("initial-exec TLS resolves to dynamic definition"), so with any other C library they are
 * ordinary thread-locals. */
#if defined(__GLIBC__) && (defined(__GNUC__) || defined(__clang__))
#define C10C__TLS_FAST __attribute__((tls_model("initial-exec")))
#else
#define C10C__TLS_FAST
#endif

/* Stores a printf-style message as this thread's last error and returns status. */
c10c_status c10c__fail(c10c_status status, const char *fmt, ...) C10C__PRINTF(2, 3);

/* The error for a NULL pointer argument, naming the parameter. */
c10c_status c10c__null_argument(const char *function, const char *parameter);

/* Structs a caller allocates or fills are versioned by size: their first
 * field is uint32_t struct_size, set by the caller to its sizeof, and later versions only append
 * fields. c10c__check_struct_size refuses a struct_size below min_size, the first version's size
 * ("<type>.struct_size is N, smaller than any version<of_what> (M); set it to sizeof(<type>)");
 * c10c__copy_versioned copies the fields of `all` (all_size bytes, ours) that the caller's
 * version has into out, and sets out's struct_size to the bytes written. */
c10c_status c10c__check_struct_size(uint32_t struct_size, size_t min_size, const char *type,
                                    const char *of_what);
void c10c__copy_versioned(void *out, const void *all, size_t all_size);

#define C10C__CHECK_NOT_NULL(ptr)                                  \
  do {                                                             \
    if ((ptr) == NULL) return c10c__null_argument(__func__, #ptr); \
  } while (0)

/* c10's device type name (upper or lower case) without error reporting; NULL when invalid. */
const char *c10c__device_type_name(c10c_device_type t, bool lower_case);

/* Checks a device type and index as every function taking a c10c_device does. */
c10c_status c10c__check_device(c10c_device device);

/* The low `bytes` bytes of v at d, least significant first, and back: the one byte order of
 * everything libc10c writes for another process or machine to read (plan files, CUDA IPC
 * handles), whatever the CPU's. */
static inline void c10c__put_le(uint8_t *d, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) d[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t c10c__get_le(const uint8_t *d, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) v |= (uint64_t)d[i] << (8 * i);
  return v;
}

#endif /* C10C_INTERNAL_H */
