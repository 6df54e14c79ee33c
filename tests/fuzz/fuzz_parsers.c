/* Every text parser and printer of the library, one harness; the first byte picks which:
 * device strings (c10c_device_from_string, and c10c_device_from_chars over an exact-size buffer
 * without a NUL, so that ASan sees any read past len), device and stream printing, dispatch key
 * names, key-set printing and iteration, dtype names, the CPU and CUDA allocator configuration
 * strings, the replay trace's CSV reader (bench/trace_csv.c), and the names of every enum; and,
 * for the line coverage of the files those live in, dtype promotion and conversions, key-set
 * algebra and the keys of new tensors, and renaming PrivateUse1 once it is named.
 *
 * Beyond "no crash", each checks properties: what parses prints back to text that parses to
 * the same value; from_chars agrees with from_string; printers write exactly out_size bytes at
 * most, NUL-terminated, with the BUFFER_TOO_SMALL and *out_len contracts of their headers; a
 * configuration that parses gives the same settings when parsed again and its values are in
 * range, and one that does not leaves the settings untouched with a NUL-terminated message even
 * in a tiny buffer; a loaded trace's events name only its streams and steps, and reading it from
 * a FILE gives the same trace.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>

#include "fuzz.h"

#include "alloc_config.h"
#include "c10c/c10c.h"
#include "caching_engine.h"
#include "../../bench/trace_csv.h"

/* The registered PrivateUse1 name, so that the registered-name paths run too (registration is
 * once per process, so every input sees the same state). */
static const char privateuse1_name[] = "fuzzdev";

/* A heap copy of exactly n bytes (ASan reports a read past them). */
static char *exact_copy(const void *data, size_t n) {
  char *p = malloc(n ? n : 1);
  if (p == NULL) abort();
  if (n) memcpy(p, data, n);
  return p;
}

/* A heap buffer of exactly n bytes (at least one), each byte 0x7f (which no text here has). */
static char *buffer(size_t n) {
  char *p = malloc(n ? n : 1);
  if (p == NULL) abort();
  memset(p, 0x7f, n ? n : 1);
  return p;
}

/* The rest of the input, taken whole. */
static const uint8_t *take_rest(fuzz_input *in, size_t *n) {
  const uint8_t *p = in->data;
  *n = in->size;
  in->data += in->size;
  in->size = 0;
  return p;
}

/* A printer with snprintf's contract: writes at most out_size bytes into out. */
typedef c10c_status (*printer)(char *out, size_t out_size, size_t *out_len, const void *arg);

/* Prints into a roomy buffer (into full, which must hold it) and into an exact heap buffer of
 * out_size bytes (with *out_len reported when the printer has one), and checks the contract:
 * OK exactly when the text fits; else BUFFER_TOO_SMALL with the truncated text (out_size - 1
 * bytes and a NUL); nothing written for out_size 0; *out_len the full length either way.
 * Returns the status of the roomy print. */
static c10c_status check_printer(printer print, const void *arg, size_t out_size, bool has_len,
                                 char *full, size_t full_size) {
  size_t full_len = (size_t)-1;
  c10c_status st = print(full, full_size, has_len ? &full_len : NULL, arg);
  if (st != C10C_STATUS_OK) return st;
  size_t len = strlen(full);
  FUZZ_CHECK(len < full_size, "a roomy print is not NUL-terminated");
  if (has_len) FUZZ_CHECK(full_len == len, "*out_len %zu for a text of %zu bytes", full_len, len);
  char *out = buffer(out_size);
  size_t out_len = (size_t)-1;
  c10c_status got = print(out, out_size, has_len ? &out_len : NULL, arg);
  if (len < out_size) {
    FUZZ_CHECK(got == C10C_STATUS_OK, "%s for %zu bytes in %zu", c10c_status_name(got), len,
               out_size);
    FUZZ_CHECK(strcmp(out, full) == 0, "'%s' printed as '%s'", full, out);
  } else {
    FUZZ_CHECK(got == C10C_STATUS_BUFFER_TOO_SMALL, "%s for %zu bytes in %zu",
               c10c_status_name(got), len, out_size);
    if (out_size > 0)
      FUZZ_CHECK(memcmp(out, full, out_size - 1) == 0 && out[out_size - 1] == '\0',
                 "a truncated print is not the text's prefix");
    else
      FUZZ_CHECK(out[0] == 0x7f, "a print into 0 bytes wrote one");
  }
  if (has_len) FUZZ_CHECK(out_len == len, "*out_len %zu, the text has %zu", out_len, len);
  free(out);
  return st;
}

/* ---- devices and streams ---- */

static c10c_status print_device(char *out, size_t out_size, size_t *out_len, const void *arg) {
  (void)out_len;
  return c10c_device_to_string(out, out_size, *(const c10c_device *)arg);
}

static c10c_status print_stream(char *out, size_t out_size, size_t *out_len, const void *arg) {
  (void)out_len;
  return c10c_stream_to_string(out, out_size, *(const c10c_stream *)arg);
}

/* A device that parsed prints back (in any buffer size) to text that parses to it again
 * (except Metal's "metal", which c10 prints but does not parse). */
static void check_device_round_trip(c10c_device d, size_t out_size) {
  FUZZ_CHECK(c10c_device_type_is_valid(d.type) && d.index >= -1, "parsed device {%d, %d}", d.type,
             d.index);
  char text[C10C_DEVICE_STRING_MAX];
  c10c_status st = check_printer(print_device, &d, out_size, false, text, sizeof text);
  FUZZ_CHECK(st == C10C_STATUS_OK, "a parsed device does not print: %s", c10c_last_error_message());
  if (d.type == C10C_DEVICE_TYPE_METAL) return;
  c10c_device again = {-1, -2};
  st = c10c_device_from_string(&again, text);
  FUZZ_CHECK(st == C10C_STATUS_OK && c10c_device_equal(again, d),
             "'%s' ({%d, %d}) parses to {%d, %d}: %s", text, d.type, d.index, again.type,
             again.index, c10c_last_error_message());
}

static void fuzz_device_string(fuzz_input *in) {
  size_t out_size = (size_t)fuzz_range(in, 0, 40);
  size_t n;
  const uint8_t *bytes = take_rest(in, &n);
  char *chars = exact_copy(bytes, n); /* no NUL */
  char *str = buffer(n + 1);
  memcpy(str, bytes, n);
  str[n] = '\0';
  c10c_device a = {-1, -2}, b = {-1, -2};
  c10c_status sa = c10c_device_from_chars(&a, chars, n);
  char message[1024];
  snprintf(message, sizeof message, "%s", c10c_last_error_message());
  c10c_status sb = c10c_device_from_string(&b, str);
  if (memchr(bytes, '\0', n) == NULL) {
    FUZZ_CHECK(sa == sb, "from_chars %s, from_string %s", c10c_status_name(sa),
               c10c_status_name(sb));
    if (sa == C10C_STATUS_OK)
      FUZZ_CHECK(c10c_device_equal(a, b), "from_chars and from_string disagree");
    else
      FUZZ_CHECK(strcmp(message, c10c_last_error_message()) == 0, "messages '%s' and '%s'", message,
                 c10c_last_error_message());
  } else {
    FUZZ_CHECK(sa == C10C_STATUS_ERROR, "a NUL byte parsed (%s)", c10c_status_name(sa));
  }
  FUZZ_CHECK(sa == C10C_STATUS_OK || sa == C10C_STATUS_ERROR, "from_chars gave %s",
             c10c_status_name(sa));
  if (sa == C10C_STATUS_OK) check_device_round_trip(a, out_size);
  if (sb == C10C_STATUS_OK) check_device_round_trip(b, out_size);
  free(chars);
  free(str);
}

/* Any device value and stream: init, printing into any buffer, and parsing back. */
static void fuzz_device_values(fuzz_input *in) {
  c10c_device d = {(c10c_device_type)fuzz_u8(in), (c10c_device_index)fuzz_u8(in)};
  if (fuzz_bool(in)) d.type = (c10c_device_type)(d.type % (C10C_DEVICE_TYPE_COUNT + 1));
  size_t out_size = (size_t)fuzz_range(in, 0, 40);
  int64_t index = fuzz_int64(in);
  c10c_device made = {-1, -2};
  c10c_status st = c10c_device_init(&made, d.type, index);
  bool valid_index = index >= -1 && index <= C10C_DEVICE_INDEX_MAX;
  if (!c10c_device_type_is_valid(d.type))
    FUZZ_CHECK(st == C10C_STATUS_INVALID_ARGUMENT, "init of type %d gave %s", d.type,
               c10c_status_name(st));
  else if (!valid_index)
    FUZZ_CHECK(st == C10C_STATUS_ERROR, "init with index %lld gave %s", (long long)index,
               c10c_status_name(st));
  else
    FUZZ_CHECK(st == C10C_STATUS_OK && made.type == d.type && made.index == index,
               "init {%d, %lld} gave %s", d.type, (long long)index, c10c_status_name(st));
  if (st == C10C_STATUS_OK) check_device_round_trip(made, out_size);

  char text[C10C_DEVICE_STRING_MAX];
  st = check_printer(print_device, &d, out_size, false, text, sizeof text);
  bool valid = c10c_device_type_is_valid(d.type) && d.index >= -1;
  FUZZ_CHECK(valid ? st == C10C_STATUS_OK : st == C10C_STATUS_INVALID_ARGUMENT,
             "to_string of {%d, %d} gave %s", d.type, d.index, c10c_status_name(st));
  if (valid) check_device_round_trip(d, out_size);

  FUZZ_CHECK(c10c_device_hash(d) == ((uint64_t)(uint8_t)d.type << 16 | (uint8_t)d.index), "hash");
  (void)c10c_device_supports_as_strided(d);
  c10c_stream s = {d, (c10c_stream_id)fuzz_int64(in)};
  c10c_stream def;
  st = c10c_stream_default(&def, d);
  FUZZ_CHECK(valid ? st == C10C_STATUS_OK && def.id == 0 : st == C10C_STATUS_INVALID_ARGUMENT,
             "stream_default gave %s", c10c_status_name(st));
  uint64_t hash = c10c_stream_hash(s);
  FUZZ_CHECK(hash >> 56 == (uint8_t)d.type && (hash >> 48 & 0xFF) == (uint8_t)d.index, "hash");
  char stream_text[C10C_STREAM_STRING_MAX];
  st = check_printer(print_stream, &s, out_size * 2, false, stream_text, sizeof stream_text);
  FUZZ_CHECK(valid ? st == C10C_STATUS_OK : st == C10C_STATUS_INVALID_ARGUMENT,
             "stream to_string gave %s", c10c_status_name(st));
  c10c_stream unpacked;
  st = c10c_stream_unpack3(&unpacked, s.id, d.index, d.type);
  FUZZ_CHECK(valid                                ? st == C10C_STATUS_OK
             : !c10c_device_type_is_valid(d.type) ? st == C10C_STATUS_ERROR /* c10's check */
                                                  : st == C10C_STATUS_INVALID_ARGUMENT,
             "unpack3 gave %s", c10c_status_name(st));
  if (st == C10C_STATUS_OK) {
    c10c_stream_data3 packed = c10c_stream_pack3(unpacked);
    FUZZ_CHECK(c10c_stream_equal(unpacked, s) && packed.stream_id == s.id &&
                   packed.device_index == d.index && packed.device_type == d.type,
               "pack3/unpack3 do not round-trip");
  }
}

/* ---- dispatch keys and key sets ---- */

static void fuzz_dispatch_key_name(fuzz_input *in) {
  c10c_dispatch_key k = (c10c_dispatch_key)fuzz_u8(in);
  /* any key's name parses, if at all, to a key of that name */
  const char *name = c10c_dispatch_key_name(k);
  FUZZ_CHECK(name != NULL && name[0] != '\0', "key %u has no name", k);
  c10c_dispatch_key parsed = 0xFFFF;
  if (c10c_dispatch_key_parse(&parsed, name) == C10C_STATUS_OK)
    FUZZ_CHECK(strcmp(c10c_dispatch_key_name(parsed), name) == 0, "'%s' parses to %u (%s)", name,
               parsed, c10c_dispatch_key_name(parsed));
  char *text = fuzz_string(in, 64);
  c10c_status st = c10c_dispatch_key_parse(&parsed, text);
  if (st == C10C_STATUS_OK) {
    FUZZ_CHECK(c10c_dispatch_key_is_valid(parsed), "'%s' parses to invalid key %u", text, parsed);
    FUZZ_CHECK(strcmp(c10c_dispatch_key_name(parsed), text) == 0, "'%s' parses to %u (%s)", text,
               parsed, c10c_dispatch_key_name(parsed));
  } else {
    FUZZ_CHECK(st == C10C_STATUS_ERROR, "parse gave %s", c10c_status_name(st));
    char expected[1024];
    snprintf(expected, sizeof expected, "could not parse dispatch key: %s", text);
    FUZZ_CHECK(strcmp(expected, c10c_last_error_message()) == 0, "message '%s'",
               c10c_last_error_message());
  }
  free(text);
}

static c10c_status print_key_set(char *out, size_t out_size, size_t *out_len, const void *arg) {
  return c10c_dispatch_key_set_to_string(out, out_size, out_len,
                                         *(const c10c_dispatch_key_set *)arg);
}

/* Iteration of any 64-bit word: valid runtime keys the set has, each once, in c10's order
 * (functionality, then backend, ascending), as many as size() says; printing lists them. */
static void fuzz_key_set(fuzz_input *in) {
  c10c_dispatch_key_set ks = c10c_dispatch_key_set_from_raw(fuzz_u64(in));
  if (fuzz_bool(in)) ks.repr &= c10c_dispatch_key_set_full().repr; /* real keys only */
  size_t out_size = (size_t)fuzz_range(in, 0, 300);
  c10c_dispatch_key keys[C10C_DISPATCH_KEY_SET_MAX_KEYS + 1];
  size_t n = c10c_dispatch_key_set_to_array(keys, sizeof keys / sizeof keys[0], ks);
  FUZZ_CHECK(n <= C10C_DISPATCH_KEY_SET_MAX_KEYS, "%zu keys", n);
  FUZZ_CHECK(n == c10c_dispatch_key_set_size(ks), "size() disagrees with to_array");
  char expected[2 * C10C_DISPATCH_KEY_SET_STRING_MAX] = "DispatchKeySet(";
  for (size_t i = 0; i < n; i++) {
    c10c_dispatch_key k = keys[i];
    FUZZ_CHECK(c10c_dispatch_key_is_valid(k) && !c10c_dispatch_key_is_alias(k) &&
                   k != C10C_DISPATCH_KEY_UNDEFINED,
               "iteration yields key %u", k);
    bool has = false;
    FUZZ_CHECK(c10c_dispatch_key_set_has(&has, ks, k) == C10C_STATUS_OK && has,
               "iteration yields %s, which the set does not have", c10c_dispatch_key_name(k));
    if (i > 0) {
      c10c_dispatch_key p = keys[i - 1];
      int fp = c10c_dispatch_key_to_functionality(p), fk = c10c_dispatch_key_to_functionality(k);
      FUZZ_CHECK(fp < fk || (fp == fk &&
                             c10c_dispatch_key_to_backend(p) < c10c_dispatch_key_to_backend(k)),
                 "%s before %s", c10c_dispatch_key_name(p), c10c_dispatch_key_name(k));
    }
    FUZZ_CHECK(c10c_dispatch_key_set_next(ks, k) == (i + 1 < n ? keys[i + 1] : 0),
               "next(%s) is not the following key", c10c_dispatch_key_name(k));
    strcat(expected, i ? ", " : "");
    strcat(expected, c10c_dispatch_key_name(k));
  }
  strcat(expected, ")");
  char text[2 * C10C_DISPATCH_KEY_SET_STRING_MAX];
  c10c_status st = check_printer(print_key_set, &ks, out_size, true, text, sizeof text);
  FUZZ_CHECK(st == C10C_STATUS_OK && strcmp(text, expected) == 0, "printed '%s', expected '%s'",
             text, expected);
  FUZZ_CHECK(strlen(text) < C10C_DISPATCH_KEY_SET_STRING_MAX, "%zu bytes printed", strlen(text));
  /* priority queries stay within c10's ranges */
  int32_t slot = c10c_dispatch_key_set_dispatch_table_index(ks);
  FUZZ_CHECK(slot >= 0 && slot <= 136, "dispatch table slot %d", slot);
  c10c_dispatch_key f = c10c_dispatch_key_set_highest_functionality(ks);
  FUZZ_CHECK(f < C10C_DISPATCH_KEY_END_OF_FUNCTIONALITY_KEYS, "highest functionality %u", f);
  c10c_dispatch_key top = c10c_dispatch_key_set_highest_priority_key(ks);
  FUZZ_CHECK(c10c_dispatch_key_is_valid(top) && !c10c_dispatch_key_is_alias(top),
             "highest priority key %u", top);
  /* c10's highestPriorityTypeId: the last key iterated, except that a per-backend
   * functionality without any backend bit (iteration skips it) gives its block's placeholder */
  bool no_backend = (ks.repr & 0xFFFF) == 0;
  if (no_backend && c10c_dispatch_key_is_per_backend_functionality(f))
    FUZZ_CHECK(top == c10c_dispatch_key_for_backend(f, C10C_BACKEND_COMPONENT_INVALID),
               "highest priority key %s", c10c_dispatch_key_name(top));
  else if (n > 0)
    FUZZ_CHECK(top == keys[n - 1], "highest priority key is not the last one iterated");
  FUZZ_CHECK(c10c_dispatch_key_set_highest_backend(ks) <= C10C_BACKEND_COMPONENT_META,
             "highest backend");
  /* the keys rebuild the set's functionality bits (backend bits alone yield no key) */
  c10c_dispatch_key_set rebuilt;
  FUZZ_CHECK(c10c_dispatch_key_set_from_keys(&rebuilt, keys, n) == C10C_STATUS_OK, "from_keys");
  FUZZ_CHECK(c10c_dispatch_key_set_has_all(ks, rebuilt), "the iterated keys are not in the set");
}

/* ---- dtypes ---- */

static void fuzz_dtype_name(fuzz_input *in) {
  c10c_dtype t = (c10c_dtype)fuzz_u8(in);
  const char *name = c10c_dtype_name(t), *legacy = c10c_dtype_legacy_name(t);
  bool named = t >= 0 && t < C10C_DTYPE_UNDEFINED;
  FUZZ_CHECK((name != NULL) == named && (legacy != NULL) == named, "names of dtype %d", t);
  if (!named) FUZZ_CHECK(c10c_last_error_status() == C10C_STATUS_INVALID_ARGUMENT, "status");
  c10c_dtype back = -1;
  if (named) {
    FUZZ_CHECK(c10c_dtype_from_name(&back, name) == C10C_STATUS_OK && back == t,
               "'%s' parses to %d, not %d", name, back, t);
    if (legacy[0] != '\0')
      FUZZ_CHECK(c10c_dtype_from_name(&back, legacy) == C10C_STATUS_OK && back == t,
                 "'%s' parses to %d, not %d", legacy, back, t);
  }
  FUZZ_CHECK(c10c_dtype_c10_name(t) != NULL, "c10 name");
  char *text = fuzz_string(in, 40);
  c10c_status st = c10c_dtype_from_name(&back, text);
  if (st == C10C_STATUS_OK) {
    FUZZ_CHECK(back >= 0 && back < C10C_DTYPE_UNDEFINED, "'%s' parses to %d", text, back);
    FUZZ_CHECK(
        strcmp(c10c_dtype_name(back), text) == 0 || strcmp(c10c_dtype_legacy_name(back), text) == 0,
        "'%s' parses to %s", text, c10c_dtype_name(back));
    c10c_dtype again = -1;
    FUZZ_CHECK(
        c10c_dtype_from_name(&again, c10c_dtype_name(back)) == C10C_STATUS_OK && again == back,
        "dtype_from_name(dtype_name(%d)) is %d", back, again);
  } else {
    FUZZ_CHECK(st == C10C_STATUS_INVALID_ARGUMENT, "from_name gave %s", c10c_status_name(st));
  }
  free(text);
}

/* The names of every enum, for any value: a static string or NULL with INVALID_ARGUMENT. */
static void fuzz_enum_names(fuzz_input *in) {
  int8_t v = (int8_t)fuzz_u8(in);
  uint8_t u = fuzz_u8(in);
  const char *s = c10c_layout_name(v);
  FUZZ_CHECK((s != NULL) == c10c_layout_is_valid(v), "layout %d", v);
  s = c10c_layout_python_name(v);
  FUZZ_CHECK((s != NULL) == c10c_layout_is_valid(v), "layout %d", v);
  s = c10c_memory_format_name(v);
  FUZZ_CHECK((s != NULL) == c10c_memory_format_is_valid(v), "memory format %d", v);
  s = c10c_memory_format_python_name(v);
  FUZZ_CHECK((s != NULL) == c10c_memory_format_is_valid(v), "memory format %d", v);
  s = c10c_device_type_name(v, u & 1);
  FUZZ_CHECK((s != NULL) == c10c_device_type_is_valid(v), "device type %d", v);
  if (s == NULL) FUZZ_CHECK(c10c_last_error_status() == C10C_STATUS_INVALID_ARGUMENT, "status");
  FUZZ_CHECK(c10c_backend_component_name(u) != NULL, "backend %u", u);
  FUZZ_CHECK(c10c_status_name((c10c_status)fuzz_range(in, INT32_MIN, INT32_MAX)) != NULL,
             "status name");
  FUZZ_CHECK(c10c_status_string((c10c_status)(int8_t)u) != NULL, "status text");
  c10c_dispatch_key k = (c10c_dispatch_key)(u | (unsigned)fuzz_u8(in) << 8);
  FUZZ_CHECK(c10c_dispatch_key_name(k) != NULL, "key %u", k);
  c10c_dispatch_key_set ks;
  c10c_status st = c10c_dispatch_key_set_from_key(&ks, k);
  bool settable = c10c_dispatch_key_is_valid(k) && k != C10C_DISPATCH_KEY_END_OF_FUNCTIONALITY_KEYS;
  FUZZ_CHECK(settable ? st == C10C_STATUS_OK : st == C10C_STATUS_INVALID_ARGUMENT,
             "from_key(%u) gave %s", k, c10c_status_name(st));
}

/* Promotion, predicates and conversions of any two values (valid or not): the statuses the
 * header documents, symmetry, and c10's set relations. */
static void fuzz_dtype_algebra(fuzz_input *in) {
  c10c_dtype a = (c10c_dtype)fuzz_u8(in), b = (c10c_dtype)fuzz_u8(in);
  if (fuzz_bool(in)) a = (c10c_dtype)(a % (C10C_DTYPE_COUNT + 1));
  if (fuzz_bool(in)) b = (c10c_dtype)(b % (C10C_DTYPE_COUNT + 1));
  bool valid = c10c_dtype_is_valid(a) && c10c_dtype_is_valid(b);
  c10c_dtype ab = -1, ba = -1;
  c10c_status st = c10c_promote_types(&ab, a, b);
  FUZZ_CHECK(st == c10c_promote_types(&ba, b, a) && (st != C10C_STATUS_OK || ab == ba),
             "promote(%d, %d) is not symmetric", a, b);
  if (!valid) FUZZ_CHECK(st == C10C_STATUS_INVALID_ARGUMENT, "promote of invalid %d, %d", a, b);
  if (valid && (a == b || a == C10C_DTYPE_UNDEFINED || b == C10C_DTYPE_UNDEFINED))
    FUZZ_CHECK(st == C10C_STATUS_OK && ab == (a == b ? a : C10C_DTYPE_UNDEFINED),
               "promote(%d, %d) gave %d", a, b, ab);
  if (st == C10C_STATUS_OK && ab != C10C_DTYPE_UNDEFINED)
    FUZZ_CHECK(c10c_dtype_can_cast(a, ab) && c10c_dtype_can_cast(b, ab),
               "promote(%s, %s) = %s, which one of them cannot be cast to", c10c_dtype_c10_name(a),
               c10c_dtype_c10_name(b), c10c_dtype_c10_name(ab));
  if (valid && st != C10C_STATUS_OK) FUZZ_CHECK(st == C10C_STATUS_ERROR, "promote status");
  FUZZ_CHECK(c10c_promote_types(NULL, a, b) == C10C_STATUS_NULL_POINTER, "NULL out");

  size_t size = c10c_dtype_itemsize(a);
  bool named = a >= 0 && a < C10C_DTYPE_UNDEFINED;
  FUZZ_CHECK(named ? (size == 1 || size == 2 || size == 4 || size == 8 || size == 16) : size == 0,
             "itemsize of %d is %zu", a, size);
  bool floating = c10c_dtype_is_floating_point(a), complex = c10c_dtype_is_complex(a);
  bool integral = c10c_dtype_is_integral(a, fuzz_bool(in));
  FUZZ_CHECK(
      floating + complex + integral + c10c_dtype_is_quantized(a) + c10c_dtype_is_bits(a) <= 1,
      "dtype %d is in two categories", a);
  FUZZ_CHECK(!c10c_dtype_is_float8(a) || c10c_dtype_is_reduced_floating_point(a), "float8");
  FUZZ_CHECK(!c10c_dtype_is_reduced_floating_point(a) || floating, "reduced floating");
  FUZZ_CHECK(!c10c_dtype_is_barebones_unsigned(a) || !floating, "barebones unsigned");
  FUZZ_CHECK(c10c_dtype_is_valid(a) || !c10c_dtype_can_cast(a, b), "can_cast of invalid");

  bool is_signed = false;
  st = c10c_dtype_is_signed(&is_signed, a);
  if (!c10c_dtype_is_valid(a))
    FUZZ_CHECK(st == C10C_STATUS_INVALID_ARGUMENT, "is_signed of %d", a);
  else if (c10c_dtype_is_quantized(a) || c10c_dtype_is_bits(a) || a == C10C_DTYPE_UNDEFINED)
    FUZZ_CHECK(st == C10C_STATUS_ERROR, "is_signed of %d gave %s", a, c10c_status_name(st));
  else
    FUZZ_CHECK(st == C10C_STATUS_OK && (!floating || is_signed || a == 44) &&
                   (!c10c_dtype_is_barebones_unsigned(a) || !is_signed),
               "is_signed of %d", a);
  FUZZ_CHECK(c10c_dtype_is_signed(NULL, a) == C10C_STATUS_NULL_POINTER, "NULL out");

  c10c_dtype out = -1;
  st = c10c_dtype_to_real(&out, a);
  FUZZ_CHECK(c10c_dtype_is_valid(a) ? st == C10C_STATUS_OK && !c10c_dtype_is_complex(out)
                                    : st == C10C_STATUS_INVALID_ARGUMENT,
             "to_real of %d", a);
  if (complex) FUZZ_CHECK(2 * c10c_dtype_itemsize(out) == size, "to_real of %d is %d", a, out);
  st = c10c_dtype_to_complex(&out, a);
  if (!c10c_dtype_is_valid(a))
    FUZZ_CHECK(st == C10C_STATUS_INVALID_ARGUMENT, "to_complex of %d", a);
  else if (complex || a == C10C_DTYPE_FLOAT16 || a == C10C_DTYPE_BFLOAT16 ||
           a == C10C_DTYPE_FLOAT32 || a == C10C_DTYPE_FLOAT64)
    FUZZ_CHECK(st == C10C_STATUS_OK && c10c_dtype_is_complex(out), "to_complex of %d", a);
  else
    FUZZ_CHECK(st == C10C_STATUS_ERROR, "to_complex of %d gave %s", a, c10c_status_name(st));
  st = c10c_dtype_to_underlying(&out, a);
  FUZZ_CHECK(c10c_dtype_is_valid(a) ? st == C10C_STATUS_OK && !c10c_dtype_is_quantized(out) &&
                                          c10c_dtype_itemsize(out) == size
                                    : st == C10C_STATUS_INVALID_ARGUMENT,
             "to_underlying of %d", a);
  FUZZ_CHECK(c10c_dtype_to_real(NULL, a) == C10C_STATUS_NULL_POINTER &&
                 c10c_dtype_to_complex(NULL, a) == C10C_STATUS_NULL_POINTER &&
                 c10c_dtype_to_underlying(NULL, a) == C10C_STATUS_NULL_POINTER &&
                 c10c_dtype_from_name(NULL, "float") == C10C_STATUS_NULL_POINTER &&
                 c10c_dtype_from_name(&out, NULL) == C10C_STATUS_NULL_POINTER,
             "NULL arguments");
}

/* Set algebra, alias keys and the keys of new tensors, for any keys and sets: the documented
 * statuses and c10's relations between the operations. */
static void fuzz_key_algebra(fuzz_input *in) {
  c10c_dispatch_key k = (c10c_dispatch_key)fuzz_range(in, 0, 160);
  c10c_dispatch_key j = (c10c_dispatch_key)fuzz_range(in, 0, 160);
  c10c_backend_component b = (c10c_backend_component)fuzz_range(in, 0, 18);
  c10c_dispatch_key_set ks = c10c_dispatch_key_set_from_raw(fuzz_u64(in));
  ks.repr &= c10c_dispatch_key_set_full().repr;
  bool settable = c10c_dispatch_key_is_valid(k) && k != C10C_DISPATCH_KEY_END_OF_FUNCTIONALITY_KEYS;
  c10c_status want = settable ? C10C_STATUS_OK : C10C_STATUS_INVALID_ARGUMENT;
  c10c_dispatch_key_set one, added, removed, alias;
  bool has = false;
  FUZZ_CHECK(c10c_dispatch_key_set_from_key(&one, k) == want, "from_key(%u)", k);
  FUZZ_CHECK(c10c_dispatch_key_set_add(&added, ks, k) == want, "add(%u)", k);
  FUZZ_CHECK(c10c_dispatch_key_set_remove(&removed, ks, k) == want, "remove(%u)", k);
  FUZZ_CHECK(c10c_dispatch_key_set_has(&has, ks, k) == want, "has(%u)", k);
  FUZZ_CHECK(c10c_dispatch_key_set_from_alias(&alias, k) == want, "from_alias(%u)", k);
  if (settable) {
    uint64_t backends = UINT64_C(0xFFFF);
    FUZZ_CHECK(has == c10c_dispatch_key_set_has_all(ks, one), "has disagrees with has_all");
    FUZZ_CHECK(c10c_dispatch_key_set_equal(added, c10c_dispatch_key_set_union(ks, one)), "add");
    FUZZ_CHECK(removed.repr == (ks.repr & (backends | ~one.repr)), "remove touched a backend bit");
    bool found = false;
    FUZZ_CHECK(c10c_dispatch_key_set_has(&found, added, k) == C10C_STATUS_OK && found, "added key");
    if (!c10c_dispatch_key_is_alias(k))
      FUZZ_CHECK(c10c_dispatch_key_set_equal(alias, one), "from_alias of a runtime key");
    bool alias_has = false;
    c10c_status st = c10c_dispatch_key_alias_has(&alias_has, k, j);
    bool j_settable =
        c10c_dispatch_key_is_valid(j) && j != C10C_DISPATCH_KEY_END_OF_FUNCTIONALITY_KEYS;
    FUZZ_CHECK(j_settable && k != C10C_DISPATCH_KEY_UNDEFINED ? st == C10C_STATUS_OK
                                                              : st == C10C_STATUS_INVALID_ARGUMENT,
               "alias_has(%u, %u) gave %s", k, j, c10c_status_name(st));
    if (st == C10C_STATUS_OK && alias_has)
      FUZZ_CHECK(c10c_dispatch_key_set_has(&found, alias, j) == C10C_STATUS_OK && found,
                 "%s includes %s, its set does not", c10c_dispatch_key_name(k),
                 c10c_dispatch_key_name(j));
    if (st == C10C_STATUS_OK && !c10c_dispatch_key_is_alias(k))
      FUZZ_CHECK(alias_has == (k == j), "alias_has of a runtime key");
    c10c_dispatch_key_set after;
    FUZZ_CHECK(
        c10c_dispatch_key_set_full_after(&after, k) == C10C_STATUS_OK &&
            c10c_dispatch_key_set_has_all(after, c10c_dispatch_key_set_from_raw(UINT64_C(1) << 61)),
        "full_after(%u)", k);
    FUZZ_CHECK(c10c_dispatch_key_set_backend_from_autograd(&after, k) == C10C_STATUS_OK,
               "backend_from_autograd(%u)", k);
  }
  c10c_dispatch_key f = c10c_dispatch_key_to_functionality(k);
  c10c_backend_component kb = c10c_dispatch_key_to_backend(k);
  if (kb != C10C_BACKEND_COMPONENT_INVALID)
    FUZZ_CHECK(c10c_dispatch_key_for_backend(f, kb) == k, "for_backend of %u's parts", k);
  FUZZ_CHECK(f < C10C_DISPATCH_KEY_START_OF_DENSE_BACKENDS, "functionality of %u is %u", k, f);
  if (c10c_dispatch_key_is_backend(k))
    FUZZ_CHECK(settable && !c10c_dispatch_key_is_alias(k), "backend key %u", k);
  (void)c10c_dispatch_key_is_per_backend_functionality(k);
  c10c_dispatch_key fb = c10c_dispatch_key_for_backend(k, b);
  FUZZ_CHECK(fb == C10C_DISPATCH_KEY_UNDEFINED || c10c_dispatch_key_to_backend(fb) == b,
             "for_backend(%u, %u) = %u", k, b, fb);

  bool valid_b = b <= C10C_BACKEND_COMPONENT_META;
  c10c_dispatch_key_set bs;
  want = valid_b ? C10C_STATUS_OK : C10C_STATUS_INVALID_ARGUMENT;
  FUZZ_CHECK(c10c_dispatch_key_set_from_backend(&bs, b) == want, "from_backend(%u)", b);
  FUZZ_CHECK(c10c_dispatch_key_set_remove_backend(&removed, ks, b) == want, "remove_backend");
  if (valid_b) {
    FUZZ_CHECK(c10c_dispatch_key_set_has_backend(bs, b) == (b != 0), "has_backend");
    FUZZ_CHECK(!c10c_dispatch_key_set_has_backend(removed, b), "remove_backend kept it");
  }
  c10c_dispatch_key ag = c10c_dispatch_key_autograd_from_backend(b);
  FUZZ_CHECK(ag == C10C_DISPATCH_KEY_AUTOGRAD_OTHER ||
                 c10c_dispatch_key_to_functionality(ag) == C10C_DISPATCH_KEY_AUTOGRAD_FUNCTIONALITY,
             "autograd key %u", ag);
  (void)c10c_dispatch_key_set_autograd_related(b);
  (void)c10c_dispatch_key_set_autocast_related(b);
  (void)c10c_dispatch_key_set_has_any(ks, bs);
  (void)c10c_dispatch_key_set_is_empty(ks);
  (void)c10c_dispatch_key_set_intersection(ks, bs);
  (void)c10c_dispatch_key_set_highest_priority_backend_key(ks);
  c10c_dispatch_key next = c10c_dispatch_key_set_next(ks, k);
  if (next != C10C_DISPATCH_KEY_UNDEFINED)
    FUZZ_CHECK(c10c_dispatch_key_set_has(&has, ks, next) == C10C_STATUS_OK && has, "next");

  c10c_dtype dtype = (c10c_dtype)fuzz_range(in, -1, C10C_DTYPE_COUNT);
  c10c_layout layout = (c10c_layout)fuzz_range(in, -1, C10C_LAYOUT_COUNT);
  c10c_device_type type = (c10c_device_type)fuzz_range(in, -1, C10C_DEVICE_TYPE_COUNT);
  c10c_dispatch_key key = 0;
  c10c_dispatch_key_set tensor, inference;
  c10c_status st = c10c_dispatch_key_compute(&key, dtype, layout, type);
  bool valid =
      c10c_dtype_is_valid(dtype) && c10c_layout_is_valid(layout) && c10c_device_type_is_valid(type);
  if (!valid) FUZZ_CHECK(st == C10C_STATUS_INVALID_ARGUMENT, "compute of invalid values");
  FUZZ_CHECK(st == C10C_STATUS_OK || st == C10C_STATUS_INVALID_ARGUMENT ||
                 st == C10C_STATUS_NOT_IMPLEMENTED || st == C10C_STATUS_ERROR,
             "compute gave %s", c10c_status_name(st));
  FUZZ_CHECK(c10c_dispatch_key_set_for_tensor(&tensor, dtype, layout, type, false) == st &&
                 c10c_dispatch_key_set_for_tensor(&inference, dtype, layout, type, true) == st,
             "for_tensor and compute disagree");
  if (st == C10C_STATUS_OK) {
    FUZZ_CHECK(c10c_dispatch_key_is_valid(key) && !c10c_dispatch_key_is_alias(key), "key %u", key);
    FUZZ_CHECK(c10c_dispatch_key_set_has(&has, inference, key) == C10C_STATUS_OK && has,
               "a tensor's set misses its key");
    FUZZ_CHECK(c10c_dispatch_key_set_has_all(tensor, inference), "inference keys not a subset");
  }
}

/* Renaming PrivateUse1 after it was named: only the same name succeeds, nothing changes. */
static void fuzz_privateuse1(fuzz_input *in) {
  char *name = fuzz_string(in, 40);
  c10c_status st = c10c_privateuse1_backend_register(name);
  FUZZ_CHECK(strcmp(name, privateuse1_name) == 0
                 ? st == C10C_STATUS_OK
                 : st == C10C_STATUS_ERROR || st == C10C_STATUS_INVALID_ARGUMENT,
             "register('%s') gave %s", name, c10c_status_name(st));
  FUZZ_CHECK(strcmp(c10c_privateuse1_backend_name(true), privateuse1_name) == 0 &&
                 strcmp(c10c_privateuse1_backend_name(false), "FUZZDEV") == 0,
             "the name changed");
  c10c_clear_last_error();
  FUZZ_CHECK(c10c_last_error_status() == C10C_STATUS_OK && c10c_last_error_message()[0] == '\0',
             "clear");
  free(name);
}

/* ---- allocator configuration strings ---- */

/* A message buffer of msg_size bytes (NULL for 0), filled with a byte a message never has. */
static char *message_buffer(size_t msg_size) { return msg_size == 0 ? NULL : buffer(msg_size); }

static void check_message(const char *msg, size_t msg_size) {
  if (msg_size > 0)
    FUZZ_CHECK(memchr(msg, '\0', msg_size) != NULL, "an error message without a NUL");
}

static bool cpu_config_equal(const c10c__cpu_alloc_config *a, const c10c__cpu_alloc_config *b) {
  return a->max_cached_bytes == b->max_cached_bytes && a->huge_pages == b->huge_pages &&
         a->thread_cache_bytes == b->thread_cache_bytes && a->fill == b->fill;
}

static void fuzz_cpu_config(fuzz_input *in) {
  size_t msg_size = (size_t)fuzz_range(in, 0, 80);
  c10c__cpu_alloc_config start = {(size_t)fuzz_u64(in), fuzz_bool(in), (size_t)fuzz_u64(in),
                                  fuzz_u8(in) % 3};
  char *text = fuzz_string(in, 200);
  char *msg = message_buffer(msg_size);
  c10c__cpu_alloc_config cfg = start;
  c10c_status st = c10c__parse_cpu_alloc_config(text, &cfg, msg, msg_size);
  if (st == C10C_STATUS_OK) {
    FUZZ_CHECK(cfg.max_cached_bytes == start.max_cached_bytes ||
                   (uint64_t)cfg.max_cached_bytes <= ((uint64_t)1 << 50),
               "max_cached_bytes %zu", cfg.max_cached_bytes);
    FUZZ_CHECK(cfg.fill >= C10C__FILL_NONE && cfg.fill <= C10C__FILL_JUNK, "fill %d", cfg.fill);
    c10c__cpu_alloc_config again = cfg;
    FUZZ_CHECK(c10c__parse_cpu_alloc_config(text, &again, msg, msg_size) == C10C_STATUS_OK &&
                   cpu_config_equal(&again, &cfg),
               "'%s' parsed twice gives other settings", text);
  } else {
    FUZZ_CHECK(st == C10C_STATUS_INVALID_ARGUMENT, "'%s' gave %s", text, c10c_status_name(st));
    FUZZ_CHECK(cpu_config_equal(&cfg, &start), "'%s' failed and changed the settings", text);
    check_message(msg, msg_size);
  }
  free(msg);
  free(text);
}

static bool device_config_equal(const c10c__device_alloc_config *a,
                                const c10c__device_alloc_config *b) {
  return a->max_split_size == b->max_split_size &&
         memcmp(a->roundup_power2_divisions, b->roundup_power2_divisions,
                sizeof a->roundup_power2_divisions) == 0 &&
         a->garbage_collection_threshold == b->garbage_collection_threshold &&
         a->expandable_segments == b->expandable_segments &&
         a->stream_ordered_reuse == b->stream_ordered_reuse;
}

static void check_device_config_values(const c10c__device_alloc_config *c, size_t size) {
  FUZZ_CHECK(c->max_split_size == SIZE_MAX ||
                 (c->max_split_size >= C10C__LARGE_BUFFER && c->max_split_size % (1 << 20) == 0),
             "max_split_size %zu", c->max_split_size);
  for (int i = 0; i < C10C__ROUNDUP_INTERVALS; i++) {
    size_t d = c->roundup_power2_divisions[i];
    FUZZ_CHECK((d & (d - 1)) == 0, "divisions %zu", d);
  }
  double t = c->garbage_collection_threshold;
  FUZZ_CHECK(t == 0 || (t > 0 && t < 1), "garbage_collection_threshold %g", t);
  /* the engine's rounding with these settings never rounds down or wraps */
  size_t divisions = c10c__engine_divisions_for(c->roundup_power2_divisions, size);
  size_t rounded = c10c__engine_round_size_with(size, divisions);
  FUZZ_CHECK(rounded >= size && rounded % 512 == 0, "%zu rounds to %zu with %zu divisions", size,
             rounded, divisions);
}

static void fuzz_device_config(fuzz_input *in) {
  size_t msg_size = (size_t)fuzz_range(in, 0, 80);
  size_t size = (size_t)fuzz_range(in, 0, (int64_t)1 << 62);
  c10c__device_alloc_config start = c10c__device_alloc_config_default();
  if (fuzz_bool(in)) {
    start.max_split_size = (size_t)fuzz_range(in, 21, 1 << 20) << 20;
    for (int i = 0; i < C10C__ROUNDUP_INTERVALS; i++)
      start.roundup_power2_divisions[i] = (size_t)1 << fuzz_range(in, 0, 10);
    start.garbage_collection_threshold = 0.25;
    start.expandable_segments = fuzz_bool(in);
  }
  char *text = fuzz_string(in, 300);
  char *msg = message_buffer(msg_size);
  c10c__device_alloc_config cfg = start;
  c10c_status st = c10c__parse_device_alloc_config(text, &cfg, msg, msg_size);
  if (st == C10C_STATUS_OK) {
    check_device_config_values(&cfg, size);
    c10c__device_alloc_config again = cfg;
    FUZZ_CHECK(c10c__parse_device_alloc_config(text, &again, msg, msg_size) == C10C_STATUS_OK &&
                   device_config_equal(&again, &cfg),
               "'%s' parsed twice gives other settings", text);
  } else {
    FUZZ_CHECK(st == C10C_STATUS_INVALID_ARGUMENT || st == C10C_STATUS_NOT_IMPLEMENTED,
               "'%s' gave %s", text, c10c_status_name(st));
    FUZZ_CHECK(device_config_equal(&cfg, &start), "'%s' failed and changed the settings", text);
    check_message(msg, msg_size);
  }
  free(msg);
  free(text);
}

/* ---- replay traces ---- */

static bool same_events(const trace_event *a, const trace_event *b) {
  return a->act == b->act && a->id == b->id && a->size == b->size && a->stream == b->stream &&
         a->time == b->time && a->step == b->step;
}

static bool same_traces(const trace *a, const trace *b) {
  bool same = a->count == b->count && a->streams == b->streams && a->steps == b->steps &&
              memcmp(a->stream_names, b->stream_names, sizeof a->stream_names) == 0;
  for (size_t i = 0; same && i < a->count; i++) same = same_events(&a->events[i], &b->events[i]);
  return same;
}

static void fuzz_trace(fuzz_input *in) {
  size_t err_size = (size_t)fuzz_range(in, 0, 64);
  size_t n;
  const uint8_t *bytes = take_rest(in, &n);
  char *data = exact_copy(bytes, n);
  char *err = message_buffer(err_size);
  trace t;
  memset(&t, 0xAB, sizeof t);
  int st = trace_csv_parse(&t, data, n, err, err_size);
  if (st == 0) {
    FUZZ_CHECK(t.streams >= 1 && t.streams <= TRACE_MAX_STREAMS, "%d streams", t.streams);
    FUZZ_CHECK(t.steps >= 1 && t.steps <= TRACE_MAX_STEP + 1, "%d steps", t.steps);
    for (int i = 0; i < t.streams; i++)
      for (int j = 0; j < i; j++)
        FUZZ_CHECK(t.stream_names[i] != t.stream_names[j], "streams %d and %d share a name", i, j);
    for (size_t i = 0; i < t.count; i++) {
      const trace_event *e = &t.events[i];
      FUZZ_CHECK(e->act >= TRACE_ALLOCATE && e->act <= TRACE_STEP_BEGIN, "action %d", e->act);
      FUZZ_CHECK(e->stream >= 0 && e->stream < t.streams, "event %zu on stream %d of %d", i,
                 e->stream, t.streams);
      FUZZ_CHECK(e->step >= 0 && e->step < t.steps, "event %zu in step %d of %d", i, e->step,
                 t.steps);
      FUZZ_CHECK(e->time >= -1, "event %zu at time %lld", i, (long long)e->time);
    }
  } else {
    FUZZ_CHECK(st == -1 && t.events == NULL && t.count == 0, "a failed load keeps events");
    check_message(err, err_size);
  }
  /* the same bytes through a FILE give the same trace */
  static char nothing[1];
  FILE *f = fmemopen(n ? data : nothing, n, "r");
  if (f != NULL) {
    trace u;
    char err2[128];
    int su = trace_csv_read(&u, f, err2, sizeof err2);
    fclose(f);
    FUZZ_CHECK(su == st, "trace_csv_read %d, trace_csv_parse %d (%s)", su, st, err2);
    if (st == 0) FUZZ_CHECK(same_traces(&t, &u), "read and parse give different traces");
    trace_free(&u);
  }
  trace_free(&t);
  free(err);
  free(data);
}

enum {
  PARSE_DEVICE_STRING,
  PRINT_DEVICE_VALUES,
  PARSE_DISPATCH_KEY,
  PRINT_KEY_SET,
  PARSE_DTYPE,
  PRINT_ENUM_NAMES,
  PARSE_CPU_CONFIG,
  PARSE_DEVICE_CONFIG,
  PARSE_TRACE,
  DTYPE_ALGEBRA,
  KEY_ALGEBRA,
  PRIVATEUSE1,
  TARGETS
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static bool registered;
  if (!registered) {
    FUZZ_CHECK(c10c_privateuse1_backend_register(privateuse1_name) == C10C_STATUS_OK,
               "register: %s", c10c_last_error_message());
    registered = true;
  }
  fuzz_input in = {data, size};
  switch (fuzz_u8(&in) % TARGETS) {
    case PARSE_DEVICE_STRING: fuzz_device_string(&in); break;
    case PRINT_DEVICE_VALUES: fuzz_device_values(&in); break;
    case PARSE_DISPATCH_KEY: fuzz_dispatch_key_name(&in); break;
    case PRINT_KEY_SET: fuzz_key_set(&in); break;
    case PARSE_DTYPE: fuzz_dtype_name(&in); break;
    case PRINT_ENUM_NAMES: fuzz_enum_names(&in); break;
    case PARSE_CPU_CONFIG: fuzz_cpu_config(&in); break;
    case PARSE_DEVICE_CONFIG: fuzz_device_config(&in); break;
    case PARSE_TRACE: fuzz_trace(&in); break;
    case DTYPE_ALGEBRA: fuzz_dtype_algebra(&in); break;
    case KEY_ALGEBRA: fuzz_key_algebra(&in); break;
    default: fuzz_privateuse1(&in); break;
  }
  return 0;
}
