/* Finding steps in a stream of allocation requests (see step_detect.h). */
#include "step_detect.h"

#include <string.h>

#include "sysmem.h"

/* The history ring holds at least a period and a window; the K-gram table, at most half full,
 * holds at most one K-gram per request in the ring (the others are dropped when it grows), so at
 * 4 x RING_MAX slots a rebuild drops at least half of them. */
enum { RING_MIN = 1 << 10, RING_MAX = 2 * C10C__STEP_MAX_PERIOD };

typedef enum { SEARCH, CONFIRM, DETECTED, GAVE_UP } detect_state;

struct c10c__step_detector {
  uint64_t *ring; /* signature of request i at ring[i & (cap - 1)] */
  size_t cap;
  uint64_t n;      /* requests fed */
  uint64_t *keys;  /* K-gram hashes (0: an empty slot) */
  uint64_t *first; /* the position of the K-gram's last request when it was last seen */
  size_t slots, used;
  detect_state state;
  uint64_t period;
  uint64_t start;            /* CONFIRM: the first request compared with the one a period before */
  uint64_t start_live;       /* CONFIRM: blocks alive before it */
  uint64_t min_live, min_at; /* CONFIRM: the fewest blocks alive before a request, and where */
  uint64_t phase;            /* DETECTED: a request that begins a step */
};

uint64_t c10c__step_signature(size_t rounded_size, int64_t stream) {
  uint64_t h = (uint64_t)rounded_size * 0x9E3779B97F4A7C15ull;
  h ^= (uint64_t)stream + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
  return h;
}

c10c_status c10c__step_detector_new(c10c__step_detector **out) {
  c10c__step_detector *d = c10c__calloc(1, sizeof *d);
  if (d == NULL) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of host memory");
  *out = d;
  return C10C_STATUS_OK;
}

void c10c__step_detector_destroy(c10c__step_detector *d) {
  if (d == NULL) return;
  c10c__free(d->ring);
  c10c__free(d->keys);
  c10c__free(d->first);
  c10c__free(d);
}

void c10c__step_detector_reset(c10c__step_detector *d) {
  c10c__free(d->ring);
  c10c__free(d->keys);
  c10c__free(d->first);
  memset(d, 0, sizeof *d);
}

size_t c10c__step_detector_period(const c10c__step_detector *d) {
  return d->state == DETECTED ? (size_t)d->period : 0;
}

static uint64_t at(const c10c__step_detector *d, uint64_t i) { return d->ring[i & (d->cap - 1)]; }

/* Whether request i is still in the ring. */
static bool held(const c10c__step_detector *d, uint64_t i) { return d->n - i <= d->cap; }

static void give_up(c10c__step_detector *d) {
  c10c__step_detector_reset(d);
  d->state = GAVE_UP;
}

/* Room for request n in the ring: doubled (up to RING_MAX) while it fills; then it wraps. */
static bool ring_room(c10c__step_detector *d) {
  if (d->n < d->cap || d->cap == RING_MAX) return true;
  size_t cap = d->cap == 0 ? RING_MIN : d->cap * 2;
  uint64_t *ring = c10c__malloc(cap * sizeof *ring);
  if (ring == NULL) return false;
  for (uint64_t i = d->n - (d->n < d->cap ? d->n : d->cap); i < d->n; i++)
    ring[i & (cap - 1)] = at(d, i);
  c10c__free(d->ring);
  d->ring = ring;
  d->cap = cap;
  return true;
}

/* The hash of the K-gram that ends with request i (never 0). */
static uint64_t kgram(const c10c__step_detector *d, uint64_t i) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint64_t j = i + 1 - C10C__STEP_WINDOW; j <= i; j++) h = (h ^ at(d, j)) * 0x100000001B3ull;
  return h == 0 ? 1 : h;
}

/* The table rebuilt with room for twice as many K-grams, dropping those no longer in the ring. */
static bool table_grow(c10c__step_detector *d) {
  size_t slots = d->slots == 0 ? 2 * RING_MIN : d->slots;
  if (2 * (d->used + 1) > slots && slots < 4 * RING_MAX) slots *= 2;
  uint64_t *keys = c10c__calloc(slots, sizeof *keys), *first = c10c__malloc(slots * sizeof *first);
  if (keys == NULL || first == NULL) {
    c10c__free(keys);
    c10c__free(first);
    return false;
  }
  size_t used = 0;
  for (size_t s = 0; s < d->slots; s++) {
    if (d->keys[s] == 0 || !held(d, d->first[s] + 1 - C10C__STEP_WINDOW)) continue;
    size_t k = (size_t)d->keys[s] & (slots - 1);
    while (keys[k] != 0) k = (k + 1) & (slots - 1);
    keys[k] = d->keys[s], first[k] = d->first[s], used++;
  }
  c10c__free(d->keys);
  c10c__free(d->first);
  d->keys = keys, d->first = first, d->slots = slots, d->used = used;
  return true;
}

/* The last sighting before i of the K-gram that ends with request i (UINT64_MAX: none still
 * in the ring); i becomes its last sighting. False when host memory ran out. */
static bool sighting(c10c__step_detector *d, uint64_t i, uint64_t *out) {
  *out = UINT64_MAX;
  if (2 * (d->used + 1) > d->slots && !table_grow(d)) return false;
  uint64_t h = kgram(d, i);
  size_t k = (size_t)h & (d->slots - 1);
  while (d->keys[k] != 0 && d->keys[k] != h) k = (k + 1) & (d->slots - 1);
  if (d->keys[k] == h && held(d, d->first[k] + 1 - C10C__STEP_WINDOW)) *out = d->first[k];
  if (d->keys[k] == 0) d->used++;
  d->keys[k] = h, d->first[k] = i;
  return true;
}

/* Whether the K-grams ending with requests a and b are equal, signature by signature. */
static bool same_kgram(const c10c__step_detector *d, uint64_t a, uint64_t b) {
  for (uint64_t j = 0; j < C10C__STEP_WINDOW; j++)
    if (at(d, a - j) != at(d, b - j)) return false;
  return true;
}

/* Notes the K-gram that ends with request i. A K-gram seen before proposes its distance as the
 * period, in SEARCH, and while a shorter one is being confirmed (a layer repeats inside a step;
 * a K-gram seen once per step, such as the step's first, proposes the step). */
static void observe(c10c__step_detector *d, uint64_t i) {
  if (i + 1 < C10C__STEP_WINDOW) return;
  uint64_t f = 0;
  if (!sighting(d, i, &f)) {
    give_up(d);
    return;
  }
  if (d->state == DETECTED || f == UINT64_MAX) return;
  uint64_t p = i - f;
  if (p < C10C__STEP_WINDOW || p > C10C__STEP_MAX_PERIOD || !same_kgram(d, i, f)) return;
  if (d->state == CONFIRM && p <= d->period) return; /* a longer repetition wins */
  d->state = CONFIRM;
  d->period = p;
  d->start = i + 1;
  d->start_live = d->min_live = UINT64_MAX;
}

bool c10c__step_detector_feed(c10c__step_detector *d, uint64_t signature, uint64_t live) {
  if (d->state == GAVE_UP) return false;
  if (!ring_room(d)) {
    give_up(d);
    return false;
  }
  uint64_t i = d->n++;
  d->ring[i & (d->cap - 1)] = signature;
  bool repeats = d->state != SEARCH && i >= d->period && held(d, i - d->period) &&
                 at(d, i - d->period) == signature;
  bool begins = false;
  if (d->state == DETECTED) {
    if (repeats)
      begins = (i - d->phase) % d->period == 0;
    else
      d->state = SEARCH;
  } else if (d->state == CONFIRM) {
    if (!repeats) {
      d->state = SEARCH;
    } else if (i < d->start + d->period) {
      if (i == d->start) d->start_live = live;
      if (live < d->min_live) d->min_live = live, d->min_at = i;
    } else if (live == d->start_live) { /* a whole period repeated, back where it began */
      d->state = DETECTED;
      d->phase = d->min_at;
      begins = (i - d->phase) % d->period == 0;
    } else { /* blocks piled up over it: no step (layers of one forward pass) */
      d->state = SEARCH;
    }
  }
  observe(d, i);
  return begins && d->state == DETECTED;
}
