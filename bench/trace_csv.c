/* Reading replay traces (see trace_csv.h): lines are split into fields as (pointer, length)
 * spans, never copied or NUL-terminated, so a file and an in-memory buffer go through the same
 * code, and no byte past a line's end is ever read.
 */
#define _POSIX_C_SOURCE 200809L
#include "trace_csv.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Columns beyond the 32nd are ignored (the header's and every row's). */
enum { MAX_FIELDS = 32 };

typedef struct span {
  const char *p;
  size_t n;
} span;

typedef struct loader {
  trace *t;
  size_t line; /* 1-based number of the line being read */
  bool have_header;
  int c_time, c_action, c_ptr, c_size, c_stream, c_step;
  int step; /* the step of the rows read so far */
  char *err;
  size_t err_size;
} loader;

static int fail(loader *l, const char *format, ...) __attribute__((format(printf, 2, 3)));

static int fail(loader *l, const char *format, ...) {
  if (l->err_size == 0) return -1;
  int n = snprintf(l->err, l->err_size, "line %zu: ", l->line);
  size_t used = n < 0 ? 0 : (size_t)n;
  if (used < l->err_size) {
    va_list args;
    va_start(args, format);
    vsnprintf(l->err + used, l->err_size - used, format, args);
    va_end(args);
  }
  return -1;
}

static bool is_blank(char c) { return c == ' ' || c == '\t'; }

/* The fields of the n bytes at p, split at commas (no quoting in these traces), spaces and tabs
 * around each field dropped. Returns how many (at most MAX_FIELDS). */
static int split(const char *p, size_t n, span *fields) {
  int count = 0;
  size_t start = 0;
  for (size_t i = 0; i <= n && count < MAX_FIELDS; i++) {
    if (i < n && p[i] != ',') continue;
    span f = {p + start, i - start};
    while (f.n > 0 && is_blank(f.p[0])) f.p++, f.n--;
    while (f.n > 0 && is_blank(f.p[f.n - 1])) f.n--;
    fields[count++] = f;
    start = i + 1;
  }
  return count;
}

/* How much of a field a message echoes (fields are not NUL-terminated: always a bound). */
static int shown(span s) { return s.n > 64 ? 64 : (int)s.n; }

static bool span_is(span s, const char *text) {
  return s.n == strlen(text) && memcmp(s.p, text, s.n) == 0;
}

static int column(const span *header, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (span_is(header[i], name)) return i;
  return -1;
}

static int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 99;
}

/* An unsigned number filling all of s: base 16 (an optional 0x), 10, or 0 (C's prefixes: 0x
 * hexadecimal, a leading 0 octal). False when empty, malformed or above UINT64_MAX. */
static bool parse_u64(span s, int base, uint64_t *out) {
  size_t i = 0;
  bool prefixed = s.n > 2 && s.p[0] == '0' && (s.p[1] == 'x' || s.p[1] == 'X');
  if ((base == 16 || base == 0) && prefixed) {
    i = 2;
    base = 16;
  } else if (base == 0) {
    base = s.n > 1 && s.p[0] == '0' ? 8 : 10;
  }
  if (i == s.n) return false;
  uint64_t v = 0;
  for (; i < s.n; i++) {
    int d = digit_value(s.p[i]);
    if (d >= base) return false;
    if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) return false;
    v = v * (uint64_t)base + (uint64_t)d;
  }
  *out = v;
  return true;
}

/* The index of a Stream value, naming a new stream on first sight. -1 past TRACE_MAX_STREAMS. */
static int stream_index(trace *t, uint64_t name) {
  for (int i = 0; i < t->streams; i++)
    if (t->stream_names[i] == name) return i;
  if (t->streams == TRACE_MAX_STREAMS) return -1;
  t->stream_names[t->streams] = name;
  return t->streams++;
}

static bool action_of(span s, trace_action *out) {
  static const struct {
    const char *name;
    trace_action act;
  } actions[] = {{"allocate", TRACE_ALLOCATE},           {"free", TRACE_FREE},
                 {"record_stream", TRACE_RECORD_STREAM}, {"enqueue", TRACE_ENQUEUE},
                 {"empty_cache", TRACE_EMPTY_CACHE},     {"step_begin", TRACE_STEP_BEGIN}};
  for (size_t i = 0; i < sizeof actions / sizeof actions[0]; i++)
    if (span_is(s, actions[i].name)) {
      *out = actions[i].act;
      return true;
    }
  return false;
}

static int read_header(loader *l, const span *h, int n) {
  l->c_time = column(h, n, "Time");
  l->c_action = column(h, n, "Action");
  l->c_ptr = column(h, n, "Pointer");
  l->c_size = column(h, n, "Size");
  l->c_stream = column(h, n, "Stream");
  l->c_step = column(h, n, "Step");
  if (l->c_action < 0 || l->c_ptr < 0 || l->c_size < 0)
    return fail(l, "the header needs Action, Pointer and Size columns");
  l->have_header = true;
  return 0;
}

/* The field of column c, or an empty one when the row has no such field. */
static span field(const span *v, int n, int c) {
  span none = {"", 0};
  return c >= 0 && c < n ? v[c] : none;
}

static int append(loader *l, const trace_event *e) {
  trace *t = l->t;
  if (t->count == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 1024;
    trace_event *grown =
        cap > SIZE_MAX / sizeof *grown ? NULL : realloc(t->events, cap * sizeof *grown);
    if (grown == NULL) return fail(l, "out of memory for %zu events", cap);
    t->events = grown;
    t->cap = cap;
  }
  t->events[t->count++] = *e;
  return 0;
}

/* The step a step_begin row starts: its Step value, or one past the current step. */
static int next_step(loader *l, const span *v, int n, int *out) {
  span s = field(v, n, l->c_step);
  uint64_t step = (uint64_t)l->step + 1;
  if (s.n > 0 && !parse_u64(s, 10, &step))
    return fail(l, "Step '%.*s' is not a non-negative integer", shown(s), s.p);
  if (step > TRACE_MAX_STEP)
    return fail(l, "Step %llu is above %d", (unsigned long long)step, TRACE_MAX_STEP);
  *out = (int)step;
  return 0;
}

static int read_row(loader *l, const span *v, int n) {
  trace *t = l->t;
  trace_event e = {.time = -1, .line = l->line, .step = l->step};
  if (!action_of(field(v, n, l->c_action), &e.act)) return 0; /* "allocate failure", ... */
  span ptr = field(v, n, l->c_ptr), size = field(v, n, l->c_size);
  if (!parse_u64(ptr, 16, &e.id))
    return fail(l, "Pointer '%.*s' is not a hexadecimal number", shown(ptr), ptr.p);
  if (!parse_u64(size, 10, &e.size))
    return fail(l, "Size '%.*s' is not a non-negative integer", shown(size), size.p);
  uint64_t name = 0;
  span stream = field(v, n, l->c_stream);
  if (stream.n > 0 && !parse_u64(stream, 0, &name))
    return fail(l, "Stream '%.*s' is not a number", shown(stream), stream.p);
  if ((e.stream = stream_index(t, name)) < 0)
    return fail(l, "more than %d distinct streams", TRACE_MAX_STREAMS);
  uint64_t time = 0;
  if (parse_u64(field(v, n, l->c_time), 10, &time) && time <= INT64_MAX) e.time = (int64_t)time;
  if (e.act == TRACE_STEP_BEGIN) {
    if (next_step(l, v, n, &l->step) != 0) return -1;
    e.step = l->step;
    if (l->step >= t->steps) t->steps = l->step + 1;
  }
  return append(l, &e);
}

/* One line (without its newline; a trailing carriage return is dropped). */
static int read_line(loader *l, const char *p, size_t len) {
  l->line++;
  if (len > 0 && p[len - 1] == '\r') len--;
  span v[MAX_FIELDS];
  int n = split(p, len, v);
  if (!l->have_header) return read_header(l, v, n);
  if (n == 1 && v[0].n == 0) return 0; /* a blank line */
  return read_row(l, v, n);
}

static void start(loader *l, trace *t, char *err, size_t err_size) {
  memset(t, 0, sizeof *t);
  *l = (loader){.t = t, .err = err, .err_size = err_size};
  if (err_size > 0) err[0] = '\0';
}

static int finish(loader *l, int status) {
  trace *t = l->t;
  if (status == 0 && !l->have_header) status = fail(l, "no header line");
  if (status != 0) {
    trace_free(t);
    return -1;
  }
  if (t->streams == 0) t->streams = 1; /* stream_names[0] == 0: the default stream */
  if (t->steps == 0) t->steps = 1;
  return 0;
}

int trace_csv_parse(trace *t, const char *data, size_t len, char *err, size_t err_size) {
  loader l;
  start(&l, t, err, err_size);
  int status = 0;
  size_t at = 0;
  while (status == 0 && at < len) {
    const char *newline = memchr(data + at, '\n', len - at);
    size_t end = newline ? (size_t)(newline - data) : len;
    status = read_line(&l, data + at, end - at);
    at = end + 1;
  }
  return finish(&l, status);
}

int trace_csv_read(trace *t, FILE *f, char *err, size_t err_size) {
  loader l;
  start(&l, t, err, err_size);
  char *line = NULL;
  size_t cap = 0;
  ssize_t got;
  int status = 0;
  while (status == 0 && (got = getline(&line, &cap, f)) >= 0) {
    size_t len = (size_t)got;
    if (len > 0 && line[len - 1] == '\n') len--;
    status = read_line(&l, line, len);
  }
  if (status == 0 && ferror(f)) status = fail(&l, "read error");
  free(line);
  return finish(&l, status);
}

void trace_free(trace *t) {
  free(t->events);
  memset(t, 0, sizeof *t);
}
