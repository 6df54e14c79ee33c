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

/* One "key:value" item of a configuration string, spaces trimmed. */
typedef struct item {
  const char *key, *value;
  size_t key_len, value_len;
} item;

/* The next item at *cursor (advanced past it); 0 at the end, 1 for an item, -1 (message written)
 * for an item without a colon. */
static int next_item(const char **cursor, item *out, const char *what, char *msg, size_t msg_size) {
  const char *p = *cursor;
  while (*p == ',') p++;
  if (*p == '\0') return 0;
  const char *end = strchr(p, ',');
  size_t len = end ? (size_t)(end - p) : strlen(p);
  *cursor = p + len;
  const char *colon = memchr(p, ':', len);
  if (colon == NULL) {
    snprintf(msg, msg_size, "Expected key:value in %s config, got '%.*s'", what, (int)len, p);
    return -1;
  }
  size_t key_len = (size_t)(colon - p), value_len = len - key_len - 1;
  const char *value = colon + 1;
  /* Spaces around keys and values are ignored ("a:1, b:2"). */
  while (key_len > 0 && *p == ' ') p++, key_len--;
  while (key_len > 0 && p[key_len - 1] == ' ') key_len--;
  while (value_len > 0 && *value == ' ') value++, value_len--;
  while (value_len > 0 && value[value_len - 1] == ' ') value_len--;
  *out = (item){p, value, key_len, value_len};
  return 1;
}

static bool key_is(const item *it, const char *name) {
  return it->key_len == strlen(name) && memcmp(it->key, name, it->key_len) == 0;
}

static bool value_is(const item *it, const char *text) {
  return it->value_len == strlen(text) && memcmp(it->value, text, it->value_len) == 0;
}

static c10c_status bad_number(const item *it, char *msg, size_t msg_size) {
  snprintf(msg, msg_size,
           "Expected a non-negative integer (and not too large) for %.*s, got '%.*s'",
           (int)it->key_len, it->key, (int)it->value_len, it->value);
  return C10C_STATUS_INVALID_ARGUMENT;
}

/* True or False, as PyTorch spells them. */
static c10c_status parse_bool(const item *it, bool *out, char *msg, size_t msg_size) {
  if (value_is(it, "True") || value_is(it, "False")) {
    *out = value_is(it, "True");
    return C10C_STATUS_OK;
  }
  snprintf(msg, msg_size, "Expected True or False for %.*s, got '%.*s'", (int)it->key_len, it->key,
           (int)it->value_len, it->value);
  return C10C_STATUS_INVALID_ARGUMENT;
}

c10c_status c10c__parse_cpu_alloc_config(const char *text, c10c__cpu_alloc_config *into, char *msg,
                                         size_t msg_size) {
  c10c__cpu_alloc_config next = *into;
  item it;
  int found;
  while ((found = next_item(&text, &it, "CPU allocator", msg, msg_size)) == 1) {
    size_t number = 0;
    c10c_status st = C10C_STATUS_OK;
    if (key_is(&it, "max_cached_mb")) {
      if (!parse_size(it.value, it.value_len, &number) || number > ((size_t)1 << 30))
        return bad_number(&it, msg, msg_size);
      next.max_cached_bytes = number << 20;
    } else if (key_is(&it, "thread_cache_kb")) {
      if (!parse_size(it.value, it.value_len, &number) || number > ((size_t)1 << 20))
        return bad_number(&it, msg, msg_size);
      next.thread_cache_bytes = number << 10;
    } else if (key_is(&it, "fill")) {
      if (value_is(&it, "none")) {
        next.fill = C10C__FILL_NONE;
      } else if (value_is(&it, "zero")) {
        next.fill = C10C__FILL_ZERO;
      } else if (value_is(&it, "junk")) {
        next.fill = C10C__FILL_JUNK;
      } else {
        snprintf(msg, msg_size, "Expected none, zero or junk for fill, got '%.*s'",
                 (int)it.value_len, it.value);
        return C10C_STATUS_INVALID_ARGUMENT;
      }
    } else if (key_is(&it, "huge_pages")) {
      st = parse_bool(&it, &next.huge_pages, msg, msg_size);
    } else {
      snprintf(msg, msg_size, "Unrecognized key '%.*s' in CPU allocator config.", (int)it.key_len,
               it.key);
      return C10C_STATUS_INVALID_ARGUMENT;
    }
    if (st != C10C_STATUS_OK) return st;
  }
  if (found < 0) return C10C_STATUS_INVALID_ARGUMENT;
  *into = next;
  return C10C_STATUS_OK;
}

c10c_status c10c__parse_device_alloc_config(const char *text, c10c__device_alloc_config *into,
                                            char *msg, size_t msg_size) {
  c10c__device_alloc_config next = *into;
  item it;
  int found;
  while ((found = next_item(&text, &it, "CUDA allocator", msg, msg_size)) == 1) {
    size_t number = 0;
    bool flag = false;
    c10c_status st = C10C_STATUS_OK;
    if (key_is(&it, "max_split_size_mb")) {
      if (!parse_size(it.value, it.value_len, &number) || number > ((size_t)1 << 30))
        return bad_number(&it, msg, msg_size);
      if (number <= 20) { /* PyTorch's check: the large buffer is 20 MiB */
        snprintf(msg, msg_size,
                 "CachingAllocator option max_split_size_mb too small, must be > 20");
        return C10C_STATUS_INVALID_ARGUMENT;
      }
      next.max_split_size = number << 20;
    } else if (key_is(&it, "roundup_power2_divisions")) {
      if (!parse_size(it.value, it.value_len, &number) || number > 64)
        return bad_number(&it, msg, msg_size);
      if (number != 0 && (number & (number - 1)) != 0) {
        snprintf(msg, msg_size, "For roundups, the divisons has to be power of 2 ");
        return C10C_STATUS_INVALID_ARGUMENT;
      }
      next.roundup_power2_divisions = number;
    } else if (key_is(&it, "expandable_segments")) {
      st = parse_bool(&it, &flag, msg, msg_size);
      if (st == C10C_STATUS_OK && flag) {
        snprintf(msg, msg_size, "expandable_segments:True is not supported yet");
        return C10C_STATUS_NOT_IMPLEMENTED;
      }
    } else if (key_is(&it, "backend")) {
      if (!value_is(&it, "native")) {
        snprintf(msg, msg_size, "Unknown allocator backend '%.*s' (only native is supported yet)",
                 (int)it.value_len, it.value);
        return C10C_STATUS_INVALID_ARGUMENT;
      }
    } else if (key_is(&it, "garbage_collection_threshold") ||
               key_is(&it, "release_lock_on_cudamalloc") ||
               key_is(&it, "pinned_use_cuda_host_register") ||
               key_is(&it, "pinned_num_register_threads")) {
      snprintf(msg, msg_size, "CUDA allocator option '%.*s' is not supported yet", (int)it.key_len,
               it.key);
      return C10C_STATUS_NOT_IMPLEMENTED;
    } else {
      snprintf(msg, msg_size, "Unrecognized key '%.*s' in CUDA allocator config.", (int)it.key_len,
               it.key);
      return C10C_STATUS_INVALID_ARGUMENT;
    }
    if (st != C10C_STATUS_OK) return st;
  }
  if (found < 0) return C10C_STATUS_INVALID_ARGUMENT;
  *into = next;
  return C10C_STATUS_OK;
}
