/* Parsing of allocator configuration strings, "key:value,key:value" as PyTorch's
 * PYTORCH_CUDA_ALLOC_CONF: keys are matched exactly, spaces around keys and values are ignored,
 * and an unknown key or a malformed value is an error that changes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_config.h"

/* A decimal number of any length that fits 64 bits (PyTorch's stoull), on every target. */
static bool parse_u64(const char *text, size_t len, uint64_t *out) {
  if (len == 0) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < len; i++) {
    if (text[i] < '0' || text[i] > '9') return false;
    uint64_t digit = (uint64_t)(text[i] - '0');
    if (v > (UINT64_MAX - digit) / 10) return false;
    v = v * 10 + digit;
  }
  *out = v;
  return true;
}

/* One that also fits a size_t. */
static bool parse_size(const char *text, size_t len, size_t *out) {
  uint64_t v = 0;
  if (!parse_u64(text, len, &v) || v > SIZE_MAX) return false;
  *out = (size_t)v;
  return true;
}

/* One "key:value" item of a configuration string, spaces trimmed. */
typedef struct item {
  const char *key, *value;
  size_t key_len, value_len;
} item;

/* "key:value" in the len bytes at p, spaces around key and value ignored ("a:1, b:2"); false
 * without a colon. */
static bool split_item(const char *p, size_t len, item *out) {
  const char *colon = memchr(p, ':', len);
  if (colon == NULL) return false;
  size_t key_len = (size_t)(colon - p), value_len = len - key_len - 1;
  const char *value = colon + 1;
  while (key_len > 0 && *p == ' ') p++, key_len--;
  while (key_len > 0 && p[key_len - 1] == ' ') key_len--;
  while (value_len > 0 && *value == ' ') value++, value_len--;
  while (value_len > 0 && value[value_len - 1] == ' ') value_len--;
  *out = (item){p, value, key_len, value_len};
  return true;
}

/* The next item at *cursor (advanced past it); 0 at the end, 1 for an item, -1 (message written)
 * for an item without a colon. */
static int next_item(const char **cursor, item *out, const char *what, char *msg, size_t msg_size) {
  const char *p = *cursor;
  while (*p == ',') p++;
  if (*p == '\0') return 0;
  const char *end = p;
  int depth = 0; /* commas inside [...] belong to the value (roundup_power2_divisions lists) */
  for (; *end != '\0' && (*end != ',' || depth > 0); end++)
    depth += *end == '[' ? 1 : *end == ']' && depth > 0 ? -1 : 0;
  size_t len = (size_t)(end - p);
  *cursor = p + len;
  if (!split_item(p, len, out)) {
    snprintf(msg, msg_size, "Expected key:value in %s config, got '%.*s'", what, (int)len, p);
    return -1;
  }
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
      /* beyond a 32-bit address space: as large as any cache there can be (clamped, not
       * truncated) */
      next.max_cached_bytes = number > SIZE_MAX >> 20 ? SIZE_MAX : number << 20;
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

c10c__device_alloc_config c10c__device_alloc_config_default(void) {
  return (c10c__device_alloc_config){.max_split_size = SIZE_MAX};
}

static bool power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

static int log2_floor(uint64_t v) { return 63 - __builtin_clzll((unsigned long long)v); }

/* roundup_power2_divisions: one number for every interval, or PyTorch's list
 * "[256:1,512:2,>:4]" (interval upper bounds in MiB, powers of two; ">" for the rest), applied
 * as PyTorch's parser applies it (the first entry also covers the intervals below it; ">" fills
 * from the last named interval on). */
static c10c_status parse_roundup(const item *it, size_t *divisions, char *msg, size_t msg_size) {
  size_t number = 0;
  if (it->value_len == 0 || it->value[0] != '[') {
    if (!parse_size(it->value, it->value_len, &number)) return bad_number(it, msg, msg_size);
    if (!power_of_two(number)) { /* 0 too, unlike the list's entries */
      snprintf(msg, msg_size, "For roundups, the divisions has to be power of 2 ");
      return C10C_STATUS_INVALID_ARGUMENT;
    }
    for (int i = 0; i < C10C__ROUNDUP_INTERVALS; i++) divisions[i] = number;
    return C10C_STATUS_OK;
  }
  if (it->value[it->value_len - 1] != ']') {
    snprintf(msg, msg_size, "Expected ']' closing roundup_power2_divisions, got '%.*s'",
             (int)it->value_len, it->value);
    return C10C_STATUS_INVALID_ARGUMENT;
  }
  const char *p = it->value + 1, *end = it->value + it->value_len - 1;
  size_t last = 0;
  while (p < end) {
    const char *comma = memchr(p, ',', (size_t)(end - p));
    const char *stop = comma ? comma : end;
    item entry;
    if (!split_item(p, (size_t)(stop - p), &entry)) {
      snprintf(msg, msg_size, "Expected interval:divisions in roundup_power2_divisions, got '%.*s'",
               (int)(stop - p), p);
      return C10C_STATUS_INVALID_ARGUMENT;
    }
    size_t value = 0;
    uint64_t bound = 0; /* only its power of two counts: the same on every target */
    if (!parse_size(entry.value, entry.value_len, &value)) return bad_number(it, msg, msg_size);
    if (value != 0 && !power_of_two(value)) {
      snprintf(msg, msg_size,
               "For roundups, the divisions has to be power of 2 or 0 to disable roundup ");
      return C10C_STATUS_INVALID_ARGUMENT;
    }
    if (entry.key_len == 1 && entry.key[0] == '>') {
      for (size_t i = last; i < C10C__ROUNDUP_INTERVALS; i++) divisions[i] = value;
    } else {
      if (!parse_u64(entry.key, entry.key_len, &bound)) return bad_number(it, msg, msg_size);
      if (!power_of_two(bound)) {
        snprintf(msg, msg_size, "For roundups, the intervals have to be power of 2 ");
        return C10C_STATUS_INVALID_ARGUMENT;
      }
      size_t index = (size_t)log2_floor(bound);
      if (index > C10C__ROUNDUP_INTERVALS - 1) index = C10C__ROUNDUP_INTERVALS - 1;
      if (last == 0)
        for (size_t i = 0; i < index; i++) divisions[i] = value;
      divisions[index] = value;
      last = index;
    }
    p = comma ? comma + 1 : end;
  }
  return C10C_STATUS_OK;
}

/* garbage_collection_threshold: a number strictly between 0 and 1 (torch 2.13's message). */
static c10c_status parse_threshold(const item *it, double *out, char *msg, size_t msg_size) {
  char text[32];
  char *stop = NULL;
  if (it->value_len == 0 || it->value_len >= sizeof text) return bad_number(it, msg, msg_size);
  memcpy(text, it->value, it->value_len);
  text[it->value_len] = '\0';
  double v = strtod(text, &stop);
  if (stop != text + it->value_len || v != v) {
    snprintf(msg, msg_size, "Expected a number for garbage_collection_threshold, got '%s'", text);
    return C10C_STATUS_INVALID_ARGUMENT;
  }
  if (!(v > 0) || !(v < 1.0)) {
    snprintf(msg, msg_size, "garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
    return C10C_STATUS_INVALID_ARGUMENT;
  }
  *out = v;
  return C10C_STATUS_OK;
}

/* backend: native; PyTorch's other one is not implemented here, anything else unknown (as
 * PyTorch says it). */
static c10c_status parse_backend(const item *it, char *msg, size_t msg_size) {
  if (value_is(it, "native")) return C10C_STATUS_OK;
  if (value_is(it, "cudaMallocAsync")) {
    snprintf(msg, msg_size, "CUDA allocator backend 'cudaMallocAsync' is not supported yet");
    return C10C_STATUS_NOT_IMPLEMENTED;
  }
  snprintf(msg, msg_size, "Unknown allocator backend, options are native and cudaMallocAsync");
  return C10C_STATUS_INVALID_ARGUMENT;
}

/* plan_file: a path of 1 to C10C__PLAN_PATH_MAX bytes without a NUL (a comma ends the item). */
static c10c_status parse_path(const item *it, char *out, char *msg, size_t msg_size) {
  if (it->value_len == 0 || it->value_len > C10C__PLAN_PATH_MAX) {
    snprintf(msg, msg_size, "Expected a path of 1 to %d bytes for plan_file, got %zu bytes",
             C10C__PLAN_PATH_MAX, it->value_len);
    return C10C_STATUS_INVALID_ARGUMENT;
  }
  memcpy(out, it->value, it->value_len);
  out[it->value_len] = '\0';
  return C10C_STATUS_OK;
}

/* PyTorch 2.13's keys that this allocator does not implement. */
static bool not_implemented(const item *it) {
  static const char *const keys[] = {
      "max_non_split_rounding_mb",      "large_segment_size_mb",
      "release_lock_on_cudamalloc",     "pinned_use_cuda_host_register",
      "pinned_num_register_threads",    "pinned_use_background_threads",
      "pinned_reserve_segment_size_mb", "graph_capture_record_stream_reuse"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (key_is(it, keys[i])) return true;
  return false;
}

c10c_status c10c__parse_device_alloc_config(const char *text, c10c__device_alloc_config *into,
                                            char *msg, size_t msg_size) {
  c10c__device_alloc_config next = *into;
  item it;
  int found;
  while ((found = next_item(&text, &it, "CUDA allocator", msg, msg_size)) == 1) {
    c10c_status st = C10C_STATUS_OK;
    if (key_is(&it, "max_split_size_mb")) {
      uint64_t mb = 0;
      if (!parse_u64(it.value, it.value_len, &mb)) return bad_number(&it, msg, msg_size);
      if (mb < 20) { /* PyTorch 2.13's check: at least the large buffer, 20 MiB */
        snprintf(msg, msg_size,
                 "CachingAllocator option max_split_size_mb too small, must be >= 20");
        return C10C_STATUS_INVALID_ARGUMENT;
      }
      /* larger than any size: clamped, as PyTorch does (a 32-bit target clamps the same
       * 64-bit numbers to its own largest size) */
      next.max_split_size = (mb < SIZE_MAX >> 20 ? (size_t)mb : SIZE_MAX >> 20) << 20;
    } else if (key_is(&it, "roundup_power2_divisions")) {
      st = parse_roundup(&it, next.roundup_power2_divisions, msg, msg_size);
    } else if (key_is(&it, "garbage_collection_threshold")) {
      st = parse_threshold(&it, &next.garbage_collection_threshold, msg, msg_size);
    } else if (key_is(&it, "expandable_segments")) {
      st = parse_bool(&it, &next.expandable_segments, msg, msg_size);
    } else if (key_is(&it, "stream_ordered_reuse")) {
      st = parse_bool(&it, &next.stream_ordered_reuse, msg, msg_size);
    } else if (key_is(&it, "planning")) {
      st = parse_bool(&it, &next.planning, msg, msg_size);
    } else if (key_is(&it, "stitching")) {
      st = parse_bool(&it, &next.stitching, msg, msg_size);
    } else if (key_is(&it, "plan_file")) {
      st = parse_path(&it, next.plan_file, msg, msg_size);
    } else if (key_is(&it, "backend")) {
      st = parse_backend(&it, msg, msg_size);
    } else if (not_implemented(&it)) {
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
