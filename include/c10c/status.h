/* libc10c: status codes and the thread-local last error.
 *
 * Every fallible function returns a c10c_status. On failure it also stores a message on the
 * calling thread, worded as PyTorch words the same condition; c10c_last_error_message() reads
 * it. Successful calls leave the stored message alone (as errno), so read it right after the
 * failing call.
 */
#ifndef C10C_STATUS_H
#define C10C_STATUS_H

#include "common.h"

C10C_BEGIN_DECLS

/* The one list of status codes: X(NAME, value, description). Values are pinned: a published
 * number never changes meaning, new codes take new numbers. The comment after each names the
 * Python exception pyc10 raises for it, the one torch raises for the same condition. */
#define C10C_STATUS_LIST(X)                                                                 \
  X(OK, 0, "success")                                                                       \
  X(ERROR, -1, "runtime error")                        /* RuntimeError (TORCH_CHECK) */     \
  X(INVALID_ARGUMENT, -2, "invalid argument")          /* ValueError (TORCH_CHECK_VALUE) */ \
  X(INDEX_OUT_OF_RANGE, -3, "index out of range")      /* IndexError (TORCH_CHECK_INDEX) */ \
  X(TYPE_ERROR, -4, "wrong type")                      /* TypeError */                      \
  X(NOT_IMPLEMENTED, -5, "not implemented")            /* NotImplementedError */            \
  X(OUT_OF_MEMORY, -6, "out of memory")                /* MemoryError */                    \
  X(OVERFLOW, -7, "integer overflow")                  /* RuntimeError */                   \
  X(NULL_POINTER, -8, "NULL pointer argument")         /* ValueError */                     \
  X(BUFFER_TOO_SMALL, -9, "output buffer too small")   /* ValueError */                     \
  X(UNAVAILABLE, -10, "device or backend unavailable") /* RuntimeError */                   \
  X(ABI_MISMATCH, -11, "ABI mismatch")                 /* ImportError at pyc10 import */    \
  X(INTERNAL, -12, "internal error")                   /* RuntimeError; a bug in libc10c */ \
  X(UNSUPPORTED, -13, "not representable in the exchange format") /* BufferError (DLPack) */

/* Named constants for the codes above: C10C_STATUS_OK, C10C_STATUS_ERROR, ... */
enum c10c_status_code {
#define C10C__STATUS_ENUM(name, value, text) C10C_STATUS_##name = value,
  C10C_STATUS_LIST(C10C__STATUS_ENUM)
#undef C10C__STATUS_ENUM
      C10C_STATUS_MIN = -13 /* the most negative code in this version */
};

/* The code's name without prefix ("OK", "INVALID_ARGUMENT"), or "UNKNOWN" for a number that is
 * not a code.
 * Ownership: returns a static string. Errors: none. */
C10C_API const char *c10c_status_name(c10c_status status);

/* A short fixed description of the code ("invalid argument"), or "unknown status".
 * Ownership: returns a static string. Errors: none. */
C10C_API const char *c10c_status_string(c10c_status status);

/* The message of the last failure on this thread: "" if none happened yet.
 * Ownership: borrowed; valid until the next failing call on this thread.
 * Errors: none. Thread-safety: each thread has its own message. */
C10C_API const char *c10c_last_error_message(void);

/* The status of the last failure on this thread, C10C_STATUS_OK if none (or after clear).
 * Errors: none. */
C10C_API c10c_status c10c_last_error_status(void);

/* Forget this thread's last failure: the message becomes "" and the status OK.
 * Errors: none. */
C10C_API void c10c_clear_last_error(void);

C10C_END_DECLS

#endif /* C10C_STATUS_H */
