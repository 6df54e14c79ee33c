/* A text table of an allocator's statistics laid out as torch.cuda.memory_summary(). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "allocator_internal.h"

enum { WIDTH = 75 };

typedef struct text {
  char *out;
  size_t size, len;
} text;

static void put(text *t, const char *s) {
  size_t n = strlen(s);
  if (t->len < t->size) {
    size_t room = t->size - 1 - t->len;
    memcpy(t->out + t->len, s, n < room ? n : room);
  }
  t->len += n;
}

/* One row: "|" + content padded to WIDTH + "|". */
static void row(text *t, const char *content) {
  char line[WIDTH + 4];
  snprintf(line, sizeof line, "|%-*.*s|\n", WIDTH, WIDTH, content);
  put(t, line);
}

static void rule(text *t, char c) {
  char line[WIDTH + 1];
  memset(line, c, WIDTH);
  line[WIDTH] = '\0';
  row(t, line);
}

/* torch's _format_size and _format_count: the unit is chosen by the row's first value (pref),
 * stepping by `base` while pref is at least `threshold`. */
static void format_scaled(char *buf, size_t size, int64_t value, int64_t pref, bool bytes) {
  static const char *const byte_units[] = {"B  ", "KiB", "MiB", "GiB", "TiB", "PiB"};
  static const char *const count_units[] = {" ", "K", "M"};
  const char *const *units = bytes ? byte_units : count_units;
  size_t n_units = bytes ? 6 : 3;
  double base = bytes ? 1024.0 : 1000.0, threshold = bytes ? 768.0 * 1024 : 750.0 * 1000;
  double p = (double)pref;
  size_t u = 0;
  while (u + 1 < n_units && p >= threshold) {
    value /= (int64_t)base;
    p /= base;
    u++;
  }
  if (bytes)
    snprintf(buf, size, "%6" PRId64 " %s", value, units[u]);
  else
    snprintf(buf, size, "%7" PRId64 " %s ", value, units[u]);
}

static void metric(text *t, const char *name, const c10c_stat stats[3], bool bytes) {
  static const char *const sub_names[3] = {NULL, "      from large pool", "      from small pool"};
  static const int order[3] = {C10C_STAT_ALL, C10C_STAT_LARGE_POOL, C10C_STAT_SMALL_POOL};
  const c10c_stat *first = &stats[C10C_STAT_ALL];
  rule(t, '-');
  for (int i = 0; i < 3; i++) {
    const c10c_stat *s = &stats[order[i]];
    char v[4][32], line[160];
    int64_t values[4] = {s->current, s->peak, s->allocated, s->freed};
    int64_t prefs[4] = {first->current, first->peak, first->allocated, first->freed};
    for (int k = 0; k < 4; k++) format_scaled(v[k], sizeof v[k], values[k], prefs[k], bytes);
    snprintf(line, sizeof line, " %-21s | %s | %s | %s | %s ", i == 0 ? name : sub_names[i], v[0],
             v[1], v[2], v[3]);
    row(t, line);
  }
}

static void single_metric(text *t, const char *name, const c10c_stat *s) {
  char v[4][32], line[160];
  int64_t values[4] = {s->current, s->peak, s->allocated, s->freed};
  for (int k = 0; k < 4; k++) format_scaled(v[k], sizeof v[k], values[k], values[0], false);
  rule(t, '-');
  snprintf(line, sizeof line, " %-21s | %s | %s | %s | %s ", name, v[0], v[1], v[2], v[3]);
  row(t, line);
}

c10c_status c10c_allocator_summary(char *out, size_t out_size, size_t *out_len,
                                   c10c_allocator *allocator) {
  C10C__CHECK_NOT_NULL(allocator);
  if (out_size > 0) C10C__CHECK_NOT_NULL(out);
  c10c_memory_stats s;
  s.struct_size = sizeof s;
  c10c_status st = c10c_allocator_get_stats(&s, allocator);
  if (st != C10C_STATUS_OK) return st;
  text t = {out, out_size, 0};
  char line[160];
  rule(&t, '=');
  snprintf(line, sizeof line, "libc10c memory summary, allocator %s (%s)",
           c10c_allocator_name(allocator),
           c10c__device_type_name(c10c_allocator_device_type(allocator), false));
  char centered[2 * WIDTH + 160];
  int pad = (WIDTH - (int)strlen(line)) / 2;
  snprintf(centered, sizeof centered, "%*s%s", pad > 0 ? pad : 0, "", line);
  row(&t, centered);
  rule(&t, '-');
  snprintf(line, sizeof line,
           "            OOMs: %-18" PRId64 "|        allocation retries: %-10" PRId64, s.num_ooms,
           s.num_alloc_retries);
  row(&t, line);
  rule(&t, '=');
  row(&t, "        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ");
  metric(&t, "Allocated memory", s.allocated_bytes, true);
  metric(&t, "Active memory", s.active_bytes, true);
  metric(&t, "Requested memory", s.requested_bytes, true);
  metric(&t, "Reserved memory", s.reserved_bytes, true);
  metric(&t, "Non-releasable memory", s.inactive_split_bytes, true);
  metric(&t, "Allocations", s.allocation, false);
  metric(&t, "Active allocs", s.active, false);
  metric(&t, "Reserved segments", s.segment, false);
  metric(&t, "Non-releasable allocs", s.inactive_split, false);
  single_metric(&t, "Oversize allocations", &s.oversize_allocations);
  single_metric(&t, "Oversize segments", &s.oversize_segments);
  rule(&t, '=');
  if (out_size > 0) out[t.len < out_size ? t.len : out_size - 1] = '\0';
  if (out_len != NULL) *out_len = t.len;
  if (t.len >= out_size)
    return c10c__fail(C10C_STATUS_BUFFER_TOO_SMALL,
                      "c10c_allocator_summary: %zu bytes needed, the buffer has %zu", t.len + 1,
                      out_size);
  return C10C_STATUS_OK;
}
