/* Status codes (names and descriptions from the one list in status.h) and the thread-local last
 * error: each thread keeps the status and message of its own latest failure.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Long enough for every message libc10c writes, including an echoed device string of a few
 * hundred characters; longer messages are cut, never overflowed. */
enum { MESSAGE_CAPACITY = 1024 };

static _Thread_local char last_message[MESSAGE_CAPACITY];
static _Thread_local c10c_status last_status = C10C_STATUS_OK;

const char *c10c_status_name(c10c_status status) {
  switch (status) {
#define NAME_CASE(name, value, text) \
  case value: return #name;
    C10C_STATUS_LIST(NAME_CASE)
#undef NAME_CASE
    default: return "UNKNOWN";
  }
}

const char *c10c_status_string(c10c_status status) {
  switch (status) {
#define TEXT_CASE(name, value, text) \
  case value: return text;
    C10C_STATUS_LIST(TEXT_CASE)
#undef TEXT_CASE
    default: return "unknown status";
  }
}

const char *c10c_last_error_message(void) { return last_message; }

c10c_status c10c_last_error_status(void) { return last_status; }

void c10c_clear_last_error(void) {
  last_message[0] = '\0';
  last_status = C10C_STATUS_OK;
}

c10c_status c10c__fail(c10c_status status, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  int n = vsnprintf(last_message, sizeof last_message, fmt, args);
  va_end(args);
  if (n < 0) last_message[0] = '\0';
  last_status = status;
  return status;
}

c10c_status c10c__check_struct_size(uint32_t struct_size, size_t min_size, const char *type,
                                    const char *of_what) {
  if (struct_size >= min_size) return C10C_STATUS_OK;
  return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                    "%s.struct_size is %u, smaller than any version%s (%zu); set it to sizeof(%s)",
                    type, (unsigned)struct_size, of_what, min_size, type);
}

void c10c__copy_versioned(void *out, const void *all, size_t all_size) {
  uint32_t size;
  memcpy(&size, out, sizeof size); /* the caller's struct_size: its version's fields */
  if (size > all_size) size = (uint32_t)all_size; /* a newer caller: the fields we have */
  memcpy(out, all, size);
  memcpy(out, &size, sizeof size);
}

c10c_status c10c__null_argument(const char *function, const char *parameter) {
  return c10c__fail(C10C_STATUS_NULL_POINTER, "%s: argument '%s' must not be NULL", function,
                    parameter);
}
