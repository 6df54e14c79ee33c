/* Parsing of allocator configuration strings, "key:value,key:value" as PyTorch's
 * PYTORCH_CUDA_ALLOC_CONF: keys are matched exactly, spaces around keys and values are ignored,
 * and an unknown key or a malformed value is an error that changes nothing.
 */
#include <stdio.h>
#include <string.h>

#include "alloc_config.h"

static bool parse_size(const char *text, size_t len, size_t *out) {
  if (len == 0 || len > 12) return false;
  size_t v = 0;
  for (size_t i = 0; i < len; i++) {
    if (text[i] < '0' || text[i] > '9') return false;
    v = v * 10 + (size_t)(text[i] - '0');
  }
  *out = v;
  return true;
}

c10c_status c10c__parse_cpu_alloc_config(const char *text, c10c__cpu_alloc_config *into, char *msg,
                                         size_t msg_size) {
  c10c__cpu_alloc_config next = *into;
  const char *p = text;
  while (*p != '\0') {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    const char *colon = memchr(p, ':', len);
    if (len == 0) {
      p += end ? 1 : 0;
      if (!end) break;
      continue;
    }
    if (colon == NULL) {
      snprintf(msg, msg_size, "Expected key:value in CPU allocator config, got '%.*s'", (int)len,
               p);
      return C10C_STATUS_INVALID_ARGUMENT;
    }
    size_t key_len = (size_t)(colon - p), value_len = len - key_len - 1;
    const char *value = colon + 1;
    /* Spaces around keys and values are ignored ("a:1, b:2"). */
    while (key_len > 0 && *p == ' ') p++, key_len--, len--;
    while (key_len > 0 && p[key_len - 1] == ' ') key_len--;
    while (value_len > 0 && *value == ' ') value++, value_len--;
    while (value_len > 0 && value[value_len - 1] == ' ') value_len--;
    size_t number = 0;
#define KEY_IS(name) (key_len == strlen(name) && memcmp(p, name, key_len) == 0)
    if (KEY_IS("max_cached_mb")) {
      if (!parse_size(value, value_len, &number) || number > ((size_t)1 << 30)) goto bad_number;
      next.max_cached_bytes = number << 20;
    } else if (KEY_IS("thread_cache_kb")) {
      if (!parse_size(value, value_len, &number) || number > ((size_t)1 << 20)) goto bad_number;
      next.thread_cache_bytes = number << 10;
    } else if (KEY_IS("fill")) {
      if (value_len == 4 && memcmp(value, "none", 4) == 0) {
        next.fill = C10C__FILL_NONE;
      } else if (value_len == 4 && memcmp(value, "zero", 4) == 0) {
        next.fill = C10C__FILL_ZERO;
      } else if (value_len == 4 && memcmp(value, "junk", 4) == 0) {
        next.fill = C10C__FILL_JUNK;
      } else {
        snprintf(msg, msg_size, "Expected none, zero or junk for fill, got '%.*s'", (int)value_len,
                 value);
        return C10C_STATUS_INVALID_ARGUMENT;
      }
    } else if (KEY_IS("huge_pages")) {
      if (value_len == 4 && memcmp(value, "True", 4) == 0) {
        next.huge_pages = true;
      } else if (value_len == 5 && memcmp(value, "False", 5) == 0) {
        next.huge_pages = false;
      } else {
        snprintf(msg, msg_size, "Expected True or False for huge_pages, got '%.*s'", (int)value_len,
                 value);
        return C10C_STATUS_INVALID_ARGUMENT;
      }
    } else {
      snprintf(msg, msg_size, "Unrecognized key '%.*s' in CPU allocator config.", (int)key_len, p);
      return C10C_STATUS_INVALID_ARGUMENT;
    }
#undef KEY_IS
    p += len + (end ? 1 : 0);
    continue;
  bad_number:
    snprintf(msg, msg_size,
             "Expected a non-negative integer (and not too large) for %.*s, got '%.*s'",
             (int)key_len, p, (int)value_len, value);
    return C10C_STATUS_INVALID_ARGUMENT;
  }
  *into = next;
  return C10C_STATUS_OK;
}
