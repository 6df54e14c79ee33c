/* Status codes (names and descriptions from the one list in status.h) and the thread-local last
 * error: each thread keeps the status and message of its own latest failure.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "os.h"

/* Long enough for every message libc10c writes, including an echoed device string of a few
 * hundred characters; longer messages are cut, never overflowed. */
enum { MESSAGE_CAPACITY = 1024, FALLBACK_CAPACITY = 128 };

/* The message is kept in a buffer of the heap that a thread gets at its first failure and that
 * its exit frees (a thread-local key's destructor), not in a 1 KiB thread-local array: glibc puts
 * a library's whole thread-local block in its small static TLS reserve (512 bytes by default,
 * shared by every library loaded later) as soon as one of its thread-locals is initial-exec
 * (C10C__TLS_FAST), and with 1 KiB of message the block did not fit once torch had taken its
 * part: "libc10c.so.1: cannot allocate memory in static TLS block" on aarch64. When the heap has
 * no buffer to give, the message is cut to the small fallback. */
static _Thread_local char *heap_message;               /* MESSAGE_CAPACITY bytes, or NULL */
static _Thread_local char fallback[FALLBACK_CAPACITY]; /* when there is none */
static _Thread_local char *last_message;               /* one of the two; NULL before any failure */
static _Thread_local c10c_status last_status = C10C_STATUS_OK;

static c10c__tls_key message_key;
static bool message_key_ok;
static c10c__once message_once = C10C__ONCE_INIT;

static void free_message(void *buffer) {
  free(buffer);
  /* a failure in another key's destructor, later in this thread's exit, starts again */
  heap_message = NULL;
  last_message = NULL;
}

static void make_message_key(void) {
  message_key_ok = c10c__tls_key_create(&message_key, free_message);
}

/* A host that unloads libc10c must not have threads run free_message afterwards (as the other
 * keys of the library); later failures use the fallback. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((destructor)) static void forget_message_key(void) {
  if (message_key_ok) c10c__tls_key_delete(message_key);
  message_key_ok = false;
}
#endif

/* The buffer the next message goes to, and its size. */
static char *message_buffer(size_t *capacity) {
  if (heap_message == NULL) {
    c10c__once_call(&message_once, make_message_key);
    char *buffer = message_key_ok ? malloc(MESSAGE_CAPACITY) : NULL;
    if (buffer != NULL && c10c__tls_set(message_key, buffer))
      heap_message = buffer;
    else
      free(buffer);
  }
  *capacity = heap_message != NULL ? MESSAGE_CAPACITY : FALLBACK_CAPACITY;
  return heap_message != NULL ? heap_message : fallback;
}

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

const char *c10c_last_error_message(void) { return last_message != NULL ? last_message : ""; }

c10c_status c10c_last_error_status(void) { return last_status; }

void c10c_clear_last_error(void) {
  if (last_message != NULL) last_message[0] = '\0';
  last_status = C10C_STATUS_OK;
}

c10c_status c10c__fail(c10c_status status, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  size_t capacity;
  char *buffer = message_buffer(&capacity);
  int n = vsnprintf(buffer, capacity, fmt, args);
  va_end(args);
  if (n < 0) buffer[0] = '\0';
  last_message = buffer;
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
