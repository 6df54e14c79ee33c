/* The offline memory planner and plan files (see planner.h).
 *
 * Time: request j is alive over [alloc, end) where end is its free time, alloc + 1 for a request
 * freed when it is allocated (it still needs its bytes for that instant), and C10C__PLAN_NEVER
 * (alive to the end) when never freed. Two requests overlap in time when their intervals meet;
 * a free and an allocation at the same time do not overlap (the free comes first). An allocation
 * time of C10C__PLAN_NEVER is refused, so every interval is non-empty.
 *
 * Placement: several orders of the requests (by size, by the breadth of the time they live in,
 * by lifetime, by size class then allocation), each placed greedily at the best-fitting (or the
 * lowest) gap among the already placed requests that overlap it in time; the smallest arena is
 * kept.
 *
 * Checks and derived fields (c10c__plan_prepare): one sweep over the allocations in time order
 * with a segment tree over the compressed addresses whose updates and queries are max / or over
 * a range (no propagation needed), and one sweep backwards for `cross`. */
#include "planner.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c10c/replay.h"
#include "sysmem.h"

/* realloc through the library's bookkeeping allocator (which failure injection sweeps). */
static void *grow(void *old, size_t old_bytes, size_t new_bytes) {
  void *p = c10c__malloc(new_bytes);
  if (p == NULL) return NULL;
  if (old != NULL) memcpy(p, old, old_bytes < new_bytes ? old_bytes : new_bytes);
  c10c__free(old);
  return p;
}

enum { PLAN_VERSION = 1, HEADER_BYTES = 36, RECORD_BYTES = 37, CHECKSUM_BYTES = 8 };
static const char plan_magic[8] = {'C', '1', '0', 'C', 'P', 'L', 'A', 'N'};
/* The most requests a plan may hold (free ranks and request indices fit in uint32_t). */
#define MAX_REQUESTS ((uint64_t)1 << 31)

static uint64_t life_end(const c10c__plan_request *r) {
  if (r->free == C10C__PLAN_NEVER) return C10C__PLAN_NEVER;
  return r->free == r->alloc ? r->alloc + 1 : r->free;
}

static bool is_planned(const c10c__plan_request *r) {
  return !r->skip && r->size != 0 && r->stream < C10C__PLAN_MAX_STREAMS;
}

/* ---- sorting helpers (qsort over index arrays with a file-local key) ---- */

typedef struct key_index {
  uint64_t k1, k2, k3;
  uint32_t index;
} key_index;

static int cmp_key_index(const void *pa, const void *pb) {
  const key_index *a = pa, *b = pb;
  if (a->k1 != b->k1) return a->k1 < b->k1 ? -1 : 1;
  if (a->k2 != b->k2) return a->k2 < b->k2 ? -1 : 1;
  if (a->k3 != b->k3) return a->k3 < b->k3 ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

/* ---- the segment tree: max / or updates over a range, max / or queries over a range ---- */

typedef struct seg_tree {
  size_t leaves;
  /* tag: applied to a node's whole range; agg: over the node's subtree (tags included) */
  uint64_t *tag_end, *agg_end;
  uint32_t *tag_rank, *agg_rank; /* ranks + 1; 0 none */
  uint64_t *tag_mask, *agg_mask;
} seg_tree;

typedef struct seg_value {
  uint64_t end;
  uint32_t rank;
  uint64_t mask;
} seg_value;

static void seg_free(seg_tree *t) {
  c10c__free(t->tag_end), c10c__free(t->agg_end), c10c__free(t->tag_rank), c10c__free(t->agg_rank),
      c10c__free(t->tag_mask), c10c__free(t->agg_mask);
  memset(t, 0, sizeof *t);
}

static bool seg_init(seg_tree *t, size_t leaves) {
  memset(t, 0, sizeof *t);
  t->leaves = leaves ? leaves : 1;
  size_t nodes = 4 * t->leaves;
  t->tag_end = c10c__calloc(nodes, sizeof(uint64_t));
  t->agg_end = c10c__calloc(nodes, sizeof(uint64_t));
  t->tag_rank = c10c__calloc(nodes, sizeof(uint32_t));
  t->agg_rank = c10c__calloc(nodes, sizeof(uint32_t));
  t->tag_mask = c10c__calloc(nodes, sizeof(uint64_t));
  t->agg_mask = c10c__calloc(nodes, sizeof(uint64_t));
  if (!t->tag_end || !t->agg_end || !t->tag_rank || !t->agg_rank || !t->tag_mask || !t->agg_mask) {
    seg_free(t);
    return false;
  }
  return true;
}

static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static uint32_t max32(uint32_t a, uint32_t b) { return a > b ? a : b; }

/* Applies v to leaves [lo, hi) under node covering [nlo, nhi). */
static void seg_update(seg_tree *t, size_t node, size_t nlo, size_t nhi, size_t lo, size_t hi,
                       seg_value v) {
  if (hi <= nlo || nhi <= lo) return;
  if (lo <= nlo && nhi <= hi) {
    t->tag_end[node] = max64(t->tag_end[node], v.end);
    t->tag_rank[node] = max32(t->tag_rank[node], v.rank);
    t->tag_mask[node] |= v.mask;
  } else {
    size_t mid = nlo + (nhi - nlo) / 2;
    seg_update(t, 2 * node, nlo, mid, lo, hi, v);
    seg_update(t, 2 * node + 1, mid, nhi, lo, hi, v);
  }
  uint64_t e = t->tag_end[node];
  uint32_t r = t->tag_rank[node];
  uint64_t m = t->tag_mask[node];
  if (nhi - nlo > 1) {
    e = max64(e, max64(t->agg_end[2 * node], t->agg_end[2 * node + 1]));
    r = max32(r, max32(t->agg_rank[2 * node], t->agg_rank[2 * node + 1]));
    m |= t->agg_mask[2 * node] | t->agg_mask[2 * node + 1];
  }
  t->agg_end[node] = e, t->agg_rank[node] = r, t->agg_mask[node] = m;
}

static void seg_query(const seg_tree *t, size_t node, size_t nlo, size_t nhi, size_t lo, size_t hi,
                      seg_value *out) {
  if (hi <= nlo || nhi <= lo) return;
  if (lo <= nlo && nhi <= hi) {
    out->end = max64(out->end, t->agg_end[node]);
    out->rank = max32(out->rank, t->agg_rank[node]);
    out->mask |= t->agg_mask[node];
    return;
  }
  out->end = max64(out->end, t->tag_end[node]);
  out->rank = max32(out->rank, t->tag_rank[node]);
  out->mask |= t->tag_mask[node];
  size_t mid = nlo + (nhi - nlo) / 2;
  seg_query(t, 2 * node, nlo, mid, lo, hi, out);
  seg_query(t, 2 * node + 1, mid, nhi, lo, hi, out);
}

static int cmp_u64(const void *pa, const void *pb) {
  uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
  return a < b ? -1 : a > b;
}

static size_t lower_index(const uint64_t *xs, size_t n, uint64_t x) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (xs[mid] < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* ---- prepare ---- */

static void free_derived(c10c__plan *p) {
  c10c__free(p->block), c10c__free(p->free_rank), c10c__free(p->need), c10c__free(p->waits),
      c10c__free(p->cross), c10c__free(p->by_free);
  p->block = NULL, p->free_rank = NULL, p->need = NULL, p->waits = NULL, p->cross = NULL,
  p->by_free = NULL;
  p->planned = 0;
}

static c10c_status oom(const char *what) {
  return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "%s: out of host memory", what);
}

/* The checks of c10c__plan_prepare; messages start with what ("plan", "plan file X"). */
static c10c_status prepare(c10c__plan *p, const char *what) {
  free_derived(p);
  size_t n = p->count;
  if (n > 0 && (p->requests == NULL || p->offsets == NULL))
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "%s: %zu requests but no arrays", what, n);
  if ((uint64_t)n > MAX_REQUESTS)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "%s: %zu requests, more than 2^31", what, n);
  if (p->device < 0)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "%s: device %d is not a device index", what,
                      (int)p->device);
  if (p->nstreams > C10C__PLAN_MAX_STREAMS)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "%s: %u streams, more than %d", what,
                      (unsigned)p->nstreams, C10C__PLAN_MAX_STREAMS);
  if (p->arena % C10C__PLAN_ARENA_ALIGN != 0)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "%s: the arena (%llu bytes) is not a multiple of 2 MiB", what,
                      (unsigned long long)p->arena);
  size_t planned = 0, freed = 0;
  for (size_t i = 0; i < n; i++) {
    const c10c__plan_request *r = &p->requests[i];
    if (r->alloc == C10C__PLAN_NEVER)
      return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                        "%s: request %zu is allocated at time 2^64 - 1, which is reserved", what,
                        i);
    if (r->free < r->alloc)
      return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                        "%s: request %zu is freed at %llu before its allocation at %llu", what, i,
                        (unsigned long long)r->free, (unsigned long long)r->alloc);
    if (i > 0 && r->alloc < p->requests[i - 1].alloc)
      return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                        "%s: request %zu is allocated at %llu, before request %zu (%llu); "
                        "requests must be in allocation order",
                        what, i, (unsigned long long)r->alloc, i - 1,
                        (unsigned long long)p->requests[i - 1].alloc);
    uint64_t off = p->offsets[i];
    if (!is_planned(r)) {
      if (off != C10C__PLAN_UNPLANNED)
        return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                          "%s: request %zu is left to the engine (skipped, size 0 or stream %u) "
                          "but has offset %llu",
                          what, i, (unsigned)r->stream, (unsigned long long)off);
      continue;
    }
    if (off == C10C__PLAN_UNPLANNED) continue; /* the plan leaves it to the engine */
    if (r->stream >= p->nstreams)
      return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                        "%s: request %zu is on stream %u, but the plan has %u streams", what, i,
                        (unsigned)r->stream, (unsigned)p->nstreams);
    if (r->size > UINT64_MAX - (C10C__PLAN_ALIGN - 1))
      return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "%s: request %zu has size %llu, too large",
                        what, i, (unsigned long long)r->size);
    uint64_t b = c10c__plan_block(r->size);
    if (off % C10C__PLAN_ALIGN != 0)
      return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                        "%s: request %zu's offset %llu is not a multiple of %d", what, i,
                        (unsigned long long)off, C10C__PLAN_ALIGN);
    if (b > p->arena || off > p->arena - b)
      return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                        "%s: request %zu (%llu bytes at offset %llu) lies outside the arena of "
                        "%llu bytes",
                        what, i, (unsigned long long)b, (unsigned long long)off,
                        (unsigned long long)p->arena);
    planned++;
    if (r->free != C10C__PLAN_NEVER) freed++;
  }
  size_t cn = n ? n : 1;
  p->block = c10c__calloc(cn, sizeof *p->block);
  p->free_rank = c10c__malloc(cn * sizeof *p->free_rank);
  p->need = c10c__calloc(cn, sizeof *p->need);
  p->waits = c10c__calloc(cn, sizeof *p->waits);
  p->cross = c10c__calloc(cn, sizeof *p->cross);
  p->by_free = c10c__malloc((freed ? freed : 1) * sizeof *p->by_free);
  key_index *keys = c10c__malloc(cn * sizeof *keys);
  uint64_t *coords = c10c__malloc(2 * cn * sizeof *coords);
  seg_tree tree = {0};
  if (!p->block || !p->free_rank || !p->need || !p->waits || !p->cross || !p->by_free || !keys ||
      !coords) {
    c10c__free(keys), c10c__free(coords);
    free_derived(p);
    return oom(what);
  }
  /* blocks, free ranks (planned frees in time order, ties by index) */
  size_t nk = 0, nc = 0;
  for (size_t i = 0; i < n; i++) {
    p->free_rank[i] = UINT32_MAX;
    const c10c__plan_request *r = &p->requests[i];
    p->block[i] =
        c10c__plan_block(r->size); /* every request's: the engine matches skipped ones too */
    if (!is_planned(r) || p->offsets[i] == C10C__PLAN_UNPLANNED) continue;
    coords[nc++] = p->offsets[i];
    coords[nc++] = p->offsets[i] + p->block[i];
    if (r->free != C10C__PLAN_NEVER) keys[nk++] = (key_index){r->free, 0, 0, (uint32_t)i};
  }
  qsort(keys, nk, sizeof *keys, cmp_key_index);
  for (size_t k = 0; k < nk; k++) {
    p->free_rank[keys[k].index] = (uint32_t)k;
    p->by_free[k] = keys[k].index;
  }
  qsort(coords, nc, sizeof *coords, cmp_u64);
  size_t nu = 0;
  for (size_t k = 0; k < nc; k++)
    if (nu == 0 || coords[nu - 1] != coords[k]) coords[nu++] = coords[k];
  size_t leaves = nu > 1 ? nu - 1 : 1;
  if (!seg_init(&tree, leaves)) {
    c10c__free(keys), c10c__free(coords);
    free_derived(p);
    return oom(what);
  }
  /* Forward sweep: allocations in time order (the requests' order); an occupant's end in the
   * tree lets an allocation see a live occupant of its bytes. */
  c10c_status st = C10C_STATUS_OK;
  for (size_t j = 0; j < n; j++) {
    const c10c__plan_request *r = &p->requests[j];
    if (!is_planned(r) || p->offsets[j] == C10C__PLAN_UNPLANNED) continue;
    size_t lo = lower_index(coords, nu, p->offsets[j]);
    size_t hi = lower_index(coords, nu, p->offsets[j] + p->block[j]);
    seg_value q = {0, 0, 0};
    seg_query(&tree, 1, 0, tree.leaves, lo, hi, &q);
    if (q.end > r->alloc) {
      /* find the culprit for the message (rare path: linear) */
      size_t other = j;
      for (size_t i = 0; i < j; i++) {
        if (!is_planned(&p->requests[i]) || p->offsets[i] == C10C__PLAN_UNPLANNED) continue;
        if (life_end(&p->requests[i]) > r->alloc && p->offsets[i] < p->offsets[j] + p->block[j] &&
            p->offsets[j] < p->offsets[i] + p->block[i]) {
          other = i;
          break;
        }
      }
      st = c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "%s: requests %zu and %zu are alive at the same time and overlap in the "
                      "arena",
                      what, other, j);
      break;
    }
    p->need[j] = q.rank;
    p->waits[j] = q.mask & ~((uint64_t)1 << r->stream);
    uint32_t rank1 = p->free_rank[j] == UINT32_MAX ? 0 : p->free_rank[j] + 1;
    seg_update(&tree, 1, 0, tree.leaves, lo, hi,
               (seg_value){life_end(r), rank1, (uint64_t)1 << r->stream});
  }
  if (st == C10C_STATUS_OK) {
    /* Backward sweep for cross: request i's end against the allocations at or after it. */
    seg_free(&tree);
    if (!seg_init(&tree, leaves)) {
      st = oom(what);
    } else {
      nk = 0;
      for (size_t i = 0; i < n; i++) {
        const c10c__plan_request *r = &p->requests[i];
        if (!is_planned(r) || p->offsets[i] == C10C__PLAN_UNPLANNED) continue;
        /* k1: time; k2: 1 for an allocation (inserted before the queries at its time when
         * walking backwards), 0 for an end */
        keys[nk++] = (key_index){r->alloc, 1, 0, (uint32_t)i};
      }
      size_t na = nk;
      key_index *ends = c10c__malloc((na ? na : 1) * sizeof *ends);
      if (!ends) {
        st = oom(what);
      } else {
        size_t ne = 0;
        for (size_t k = 0; k < na; k++) {
          const c10c__plan_request *r = &p->requests[keys[k].index];
          if (r->free != C10C__PLAN_NEVER)
            ends[ne++] = (key_index){life_end(r), 0, 0, keys[k].index};
        }
        qsort(ends, ne, sizeof *ends, cmp_key_index);
        /* keys are in allocation order already (request order) */
        size_t a = na, e = ne;
        while (e > 0) {
          if (a > 0 && keys[a - 1].k1 >= ends[e - 1].k1) {
            size_t i = keys[--a].index;
            size_t lo = lower_index(coords, nu, p->offsets[i]);
            size_t hi = lower_index(coords, nu, p->offsets[i] + p->block[i]);
            seg_update(&tree, 1, 0, tree.leaves, lo, hi,
                       (seg_value){0, 0, (uint64_t)1 << p->requests[i].stream});
          } else {
            size_t i = ends[--e].index;
            size_t lo = lower_index(coords, nu, p->offsets[i]);
            size_t hi = lower_index(coords, nu, p->offsets[i] + p->block[i]);
            seg_value q = {0, 0, 0};
            seg_query(&tree, 1, 0, tree.leaves, lo, hi, &q);
            p->cross[i] = (q.mask & ~((uint64_t)1 << p->requests[i].stream)) != 0;
          }
        }
        c10c__free(ends);
      }
    }
  }
  seg_free(&tree);
  c10c__free(keys), c10c__free(coords);
  if (st != C10C_STATUS_OK) {
    free_derived(p);
    return st;
  }
  p->planned = planned;
  return C10C_STATUS_OK;
}

c10c_status c10c__plan_prepare(c10c__plan *plan) {
  if (plan == NULL) return c10c__null_argument(__func__, "plan");
  return prepare(plan, "plan");
}

void c10c__plan_destroy(c10c__plan *plan) {
  if (plan == NULL) return;
  free_derived(plan);
  c10c__free(plan->requests), c10c__free(plan->offsets);
  c10c__free(plan);
}

static uint64_t lower_bound_of(const c10c__plan_request *req, const uint64_t *offsets, size_t n) {
  key_index *ev = c10c__malloc((n ? 2 * n : 1) * sizeof *ev);
  if (!ev) return 0;
  size_t ne = 0;
  for (size_t i = 0; i < n; i++) {
    if (!is_planned(&req[i]) || (offsets && offsets[i] == C10C__PLAN_UNPLANNED)) continue;
    /* at one time, ends (k2 = 0) before allocations (k2 = 1) */
    ev[ne++] = (key_index){req[i].alloc, 1, 0, (uint32_t)i};
    if (req[i].free != C10C__PLAN_NEVER)
      ev[ne++] = (key_index){life_end(&req[i]), 0, 0, (uint32_t)i};
  }
  qsort(ev, ne, sizeof *ev, cmp_key_index);
  uint64_t live = 0, peak = 0;
  for (size_t k = 0; k < ne; k++) {
    uint64_t b = c10c__plan_block(req[ev[k].index].size);
    if (ev[k].k2) {
      live += b;
      if (live > peak) peak = live;
    } else {
      live -= b;
    }
  }
  c10c__free(ev);
  return peak;
}

uint64_t c10c__plan_lower_bound(const c10c__plan *plan) {
  if (plan == NULL) return 0;
  return lower_bound_of(plan->requests, plan->offsets, plan->count);
}

/* ---- compute ---- */

/* The placed requests in offset order: one list for all, and at a few levels of time buckets
 * one list per window of two neighbouring buckets, holding every placed request whose lifetime
 * touches the window. A request looks for its gap in the window of the finest level that holds
 * its whole lifetime (else in the list of all): it sees every placed request alive with it, and
 * few others. */
/* A list in offset order as a row of chunks (an insertion moves at most one chunk's entries). */
enum { CHUNK = 64 };

typedef struct chunk {
  uint32_t n;
  uint64_t off[CHUNK], top[CHUNK], alloc[CHUNK], end[CHUNK];
} chunk;

typedef struct olist {
  size_t n, cap; /* chunks */
  chunk **c;
} olist;

static void olist_clear(olist *o) {
  for (size_t k = 0; k < o->n; k++) c10c__free(o->c[k]);
  o->n = 0;
}

enum { MAX_LEVELS = 4 };

typedef struct placer {
  int levels;                   /* level 0: one bucket */
  size_t buckets[MAX_LEVELS];   /* buckets per level */
  uint64_t *bounds[MAX_LEVELS]; /* [buckets - 1] the first time of each bucket after the first */
  olist *lists[MAX_LEVELS];     /* [buckets] */
} placer;

static void placer_free(placer *pl) {
  for (int l = 0; l < pl->levels; l++) {
    if (pl->lists[l])
      for (size_t b = 0; b < pl->buckets[l]; b++) {
        olist_clear(&pl->lists[l][b]);
        c10c__free(pl->lists[l][b].c);
      }
    c10c__free(pl->lists[l]), c10c__free(pl->bounds[l]);
  }
  memset(pl, 0, sizeof *pl);
}

static size_t bucket_of(const placer *pl, int l, uint64_t t) {
  /* the number of bounds <= t */
  const uint64_t *b = pl->bounds[l];
  size_t lo = 0, hi = pl->buckets[l] - 1;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (b[mid] <= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Chooses the levels for m items (allocation times sorted_alloc, lifetimes [alloc, end)) so
 * that the lists hold at most a few times m entries. */
static bool placer_init(placer *pl, size_t m, const uint64_t *sorted_alloc, const uint64_t *alloc,
                        const uint64_t *end) {
  memset(pl, 0, sizeof *pl);
  size_t want[MAX_LEVELS] = {1, 8, 64, 512};
  size_t budget = 24 * (m + 1), used = m;
  for (int l = 0; l < MAX_LEVELS; l++) {
    size_t k = want[l];
    if (l > 0 && (k * 32 > m || used > budget)) break;
    pl->buckets[l] = k;
    pl->bounds[l] = c10c__malloc((k > 1 ? k - 1 : 1) * sizeof(uint64_t));
    pl->lists[l] = c10c__calloc(k, sizeof(olist));
    pl->levels = l + 1;
    if (!pl->bounds[l] || !pl->lists[l]) return false;
    for (size_t i = 1; i < k; i++) pl->bounds[l][i - 1] = sorted_alloc[i * m / k];
    if (l > 0) {
      size_t entries = 0;
      for (size_t i = 0; i < m; i++)
        entries += bucket_of(pl, l, end[i] - 1) - bucket_of(pl, l, alloc[i]) + 2;
      if (used + entries > budget) { /* too many long lifetimes for this level */
        c10c__free(pl->bounds[l]), c10c__free(pl->lists[l]);
        pl->bounds[l] = NULL, pl->lists[l] = NULL;
        pl->levels = l;
        break;
      }
      used += entries;
    }
  }
  return true;
}

static bool olist_insert(olist *o, uint64_t off, uint64_t top, uint64_t a, uint64_t e) {
  if (o->n == o->cap || o->n == 0) {
    if (o->n == o->cap) {
      size_t cap = o->cap ? 2 * o->cap : 4;
      chunk **c = grow(o->c, o->cap * sizeof *c, cap * sizeof *c);
      if (!c) return false;
      o->c = c, o->cap = cap;
    }
    if (o->n == 0) {
      o->c[0] = c10c__malloc(sizeof(chunk));
      if (!o->c[0]) return false;
      o->c[0]->n = 0;
      o->n = 1;
    }
  }
  /* the last chunk whose first offset is <= off (or the first) */
  size_t lo = 0, hi = o->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (o->c[mid]->n > 0 && o->c[mid]->off[0] <= off)
      lo = mid + 1;
    else
      hi = mid;
  }
  size_t k = lo ? lo - 1 : 0;
  chunk *ch = o->c[k];
  if (ch->n == CHUNK) { /* split (o->n < o->cap here) */
    chunk *nc = c10c__malloc(sizeof(chunk));
    if (!nc) return false;
    uint32_t half = CHUNK / 2;
    nc->n = CHUNK - half;
    memcpy(nc->off, ch->off + half, nc->n * 8);
    memcpy(nc->top, ch->top + half, nc->n * 8);
    memcpy(nc->alloc, ch->alloc + half, nc->n * 8);
    memcpy(nc->end, ch->end + half, nc->n * 8);
    ch->n = half;
    memmove(o->c + k + 2, o->c + k + 1, (o->n - k - 1) * sizeof *o->c);
    o->c[k + 1] = nc;
    o->n++;
    if (off >= nc->off[0]) ch = nc;
  }
  lo = 0, hi = ch->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (ch->off[mid] <= off)
      lo = mid + 1;
    else
      hi = mid;
  }
  size_t tail = ch->n - lo;
  memmove(ch->off + lo + 1, ch->off + lo, tail * 8);
  memmove(ch->top + lo + 1, ch->top + lo, tail * 8);
  memmove(ch->alloc + lo + 1, ch->alloc + lo, tail * 8);
  memmove(ch->end + lo + 1, ch->end + lo, tail * 8);
  ch->off[lo] = off, ch->top[lo] = top, ch->alloc[lo] = a, ch->end[lo] = e;
  ch->n++;
  return true;
}

/* The gap search: the smallest gap of at least b bytes among the requests of o alive during
 * [a, e) (best_fit), or the lowest; else the top of them. */
static uint64_t find_gap(const olist *o, uint64_t a, uint64_t e, uint64_t b, bool best_fit,
                         bool *overflow) {
  uint64_t prev = 0, best = 0, best_gap = UINT64_MAX;
  bool found = false;
  for (size_t k = 0; k < o->n; k++) {
    const chunk *ch = o->c[k];
    for (uint32_t m = 0; m < ch->n; m++) {
      /* whether it is alive with the request, without a branch (half of them are not) */
      bool alive = (ch->alloc[m] < e) & (a < ch->end[m]);
      uint64_t off = ch->off[m];
      if (alive & (off > prev) && off - prev >= b) {
        uint64_t gap = off - prev;
        if (!found || gap < best_gap) {
          found = true, best = prev, best_gap = gap;
          if (!best_fit || gap == b) return best;
        }
      }
      uint64_t top = alive ? ch->top[m] : 0;
      prev = top > prev ? top : prev;
    }
  }
  if (found) return best;
  if (prev > UINT64_MAX - b) *overflow = true;
  return prev;
}

/* Places the items in order and writes their offsets; returns the highest byte used, or
 * UINT64_MAX when the arena would pass 2^64 (or host memory ran out: *oom). */
static uint64_t place(placer *pl, const uint32_t *order, size_t n, const uint64_t *block,
                      const uint64_t *alloc, const uint64_t *end, uint64_t *out, bool best_fit,
                      bool *oom_out) {
  for (int l = 0; l < pl->levels; l++)
    for (size_t b = 0; b < pl->buckets[l]; b++) olist_clear(&pl->lists[l][b]);
  uint64_t high = 0;
  for (size_t k = 0; k < n; k++) {
    uint32_t i = order[k];
    uint64_t a = alloc[i], e = end[i], b = block[i];
    size_t lo = 0, hi = 0;
    int l = pl->levels - 1;
    for (; l > 0; l--) {
      lo = bucket_of(pl, l, a), hi = bucket_of(pl, l, e - 1);
      if (hi - lo <= 1) break;
    }
    if (l == 0) lo = hi = 0;
    bool overflow = false;
    uint64_t off = find_gap(&pl->lists[l][lo], a, e, b, best_fit, &overflow);
    if (overflow) return UINT64_MAX;
    out[i] = off;
    if (off + b > high) high = off + b;
    for (int v = 0; v < pl->levels; v++) {
      /* the windows of buckets (w, w + 1) that its lifetime touches */
      size_t blo = v ? bucket_of(pl, v, a) : 0, bhi = v ? bucket_of(pl, v, e - 1) : 0;
      if (blo > 0) blo--;
      for (size_t q = blo; q <= bhi; q++)
        if (!olist_insert(&pl->lists[v][q], off, off + b, a, e)) {
          *oom_out = true;
          return UINT64_MAX;
        }
    }
  }
  return high;
}

/* Bytes in whole C10C__PLAN_ARENA_ALIGN, rounded up. */
static uint64_t arena_units(uint64_t bytes) {
  return bytes / C10C__PLAN_ARENA_ALIGN + (bytes % C10C__PLAN_ARENA_ALIGN != 0);
}

/* How hard compute looks for a smaller arena. */
typedef enum effort {
  EFFORT_ONLINE, /* the orders that won on real steps: at every step boundary of a program */
  EFFORT_OFFLINE /* more orders, then perturbed ones, for a plan made once ahead of a run */
} effort;

enum {
  PERTURBED_ROUNDS = 48,         /* perturbed orders tried offline ... */
  PERTURBED_MAX_ITEMS = 1 << 15, /* ... for up to this many requests (each is a placement) */
};

/* The fixed orders compute tries (each the smallest arena on some real trace, snapshot or the
 * synthetic step, bench/bench_planner.c): by size (ties: longer lifetime first), by breadth
 * (ties: larger first), by lifetime (longest first: one published snapshot's forward pass
 * reaches its lower bound only so), by size class in allocation order (size_classes; the
 * class's reach 1 + 1/inv); each placed best fit or first fit. Online, the first four. */
typedef enum order_key { BY_SIZE, BY_BREADTH, BY_LIFETIME, BY_CLASS } order_key;
static const struct {
  order_key key;
  bool best_fit;
  uint64_t inv; /* BY_CLASS */
} ORDERS[] = {{BY_SIZE, true, 0},     {BY_BREADTH, true, 0},  {BY_SIZE, false, 0},
              {BY_BREADTH, false, 0}, {BY_LIFETIME, true, 0}, {BY_LIFETIME, false, 0},
              {BY_CLASS, true, 4},    {BY_CLASS, false, 2}};
enum { ONLINE_ORDERS = 4, OFFLINE_ORDERS = sizeof ORDERS / sizeof ORDERS[0] };

/* xorshift64*: the perturbations are the same on every run and target, so a recording's plan is
 * the same whoever makes it. */
static uint64_t next_random(uint64_t *state) {
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return *state * UINT64_C(0x2545F4914F6CDD1D);
}

/* Size classes for a placement of the classes' sizes: the distinct block sizes from the largest
 * down, each in the class of the last one that began a class when that is at most
 * (1 + 1/inv) times it, else beginning its own; klass[k] is item k's class size (its block
 * rounded up). With the blocks of a chain of two sizes rounded to one, a placement in
 * allocation order colours them as the intervals they are: on a published snapshot's chains
 * of 1.13 and 1.39 GiB blocks, each allocated before the one before it is freed, the arena
 * comes to 5.61 GiB where every order of the true sizes gave 6.48 (an exact solver's optimum
 * of the large blocks alone: 5.56). `sorted` is scratch for m sizes. */
static void size_classes(uint64_t *klass, uint64_t *sorted, const uint64_t *block, size_t m,
                         uint64_t inv) {
  memcpy(sorted, block, m * sizeof *sorted);
  qsort(sorted, m, sizeof *sorted, cmp_u64);
  size_t d = 0; /* distinct, ascending */
  for (size_t k = 0; k < m; k++)
    if (d == 0 || sorted[d - 1] != sorted[k]) sorted[d++] = sorted[k];
  /* the classes in place, from the largest down: sorted[j] becomes its class's size */
  uint64_t cur = 0;
  for (size_t j = d; j-- > 0;) {
    uint64_t s = sorted[j], reach = s > UINT64_MAX - s / inv ? UINT64_MAX : s + s / inv;
    if (cur == 0 || cur > reach) cur = s;
    sorted[j] = cur;
  }
  /* class sizes are non-decreasing; the first at least a block's size is its class's (every
   * class size at least a block's and below its own is that of a class it lies in) */
  for (size_t k = 0; k < m; k++) klass[k] = sorted[lower_index(sorted, d, block[k])];
}

/* c10c__plan_compute; perm_out (count, or NULL): the input index of each planned request; what
 * names the caller in messages. */
static c10c_status compute(c10c__plan **out, const c10c__plan_request *requests, size_t count,
                           int32_t device, uint32_t *perm_out, const char *what, effort how) {
  *out = NULL;
  if (count > 0 && requests == NULL) return c10c__null_argument(what, "requests");
  if ((uint64_t)count > MAX_REQUESTS)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "%s: %zu requests, more than 2^31", what,
                      count);
  if (device < 0)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "%s: device %d is not a device index", what,
                      (int)device);
  for (size_t i = 0; i < count; i++) {
    if (requests[i].alloc == C10C__PLAN_NEVER)
      return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                        "%s: request %zu is allocated at time 2^64 - 1, which is reserved", what,
                        i);
    if (requests[i].free < requests[i].alloc)
      return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                        "%s: request %zu is freed at %llu before its allocation at %llu", what, i,
                        (unsigned long long)requests[i].free,
                        (unsigned long long)requests[i].alloc);
    if (is_planned(&requests[i]) && requests[i].size > UINT64_MAX - (C10C__PLAN_ALIGN - 1))
      return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "%s: request %zu has size %llu, too large",
                        what, i, (unsigned long long)requests[i].size);
  }
  size_t cn = count ? count : 1;
  c10c__plan *p = c10c__calloc(1, sizeof *p);
  key_index *keys = c10c__malloc(cn * sizeof *keys);
  uint32_t *order = c10c__malloc(cn * sizeof *order);
  uint64_t *block = c10c__malloc(cn * sizeof *block), *alloc = c10c__malloc(cn * sizeof *alloc),
           *end = c10c__malloc(cn * sizeof *end), *cand = c10c__malloc(cn * sizeof *cand),
           *breadth = c10c__calloc(cn, sizeof *breadth);
  placer pl = {0};
  c10c_status st = C10C_STATUS_OK;
  if (!p || !keys || !order || !block || !alloc || !end || !cand || !breadth) {
    st = oom(what);
    goto done;
  }
  p->device = device;
  p->count = count;
  p->requests = c10c__malloc(cn * sizeof *p->requests);
  p->offsets = c10c__malloc(cn * sizeof *p->offsets);
  if (!p->requests || !p->offsets) {
    st = oom(what);
    goto done;
  }
  /* allocation order, stable */
  for (size_t i = 0; i < count; i++) keys[i] = (key_index){requests[i].alloc, 0, 0, (uint32_t)i};
  qsort(keys, count, sizeof *keys, cmp_key_index);
  uint32_t nstreams = 0;
  for (size_t i = 0; i < count; i++) {
    p->requests[i] = requests[keys[i].index];
    if (perm_out) perm_out[i] = keys[i].index;
    p->offsets[i] = C10C__PLAN_UNPLANNED;
    if (is_planned(&p->requests[i]) && p->requests[i].stream + 1 > nstreams)
      nstreams = p->requests[i].stream + 1;
  }
  p->nstreams = nstreams;
  /* the planned requests, compacted */
  size_t m = 0;
  for (size_t i = 0; i < count; i++) {
    const c10c__plan_request *r = &p->requests[i];
    if (!is_planned(r)) continue;
    block[m] = c10c__plan_block(r->size), alloc[m] = r->alloc, end[m] = life_end(r);
    order[m] = (uint32_t)i; /* request index of compact item m, kept in keys[].index below */
    m++;
  }
  uint32_t *item_request = c10c__malloc((m ? m : 1) * sizeof *item_request);
  uint64_t *best = c10c__malloc((m ? m : 1) * sizeof *best);
  if (!item_request || !best) {
    c10c__free(item_request), c10c__free(best);
    st = oom(what);
    goto done;
  }
  memcpy(item_request, order, m * sizeof *order);
  uint64_t lower; /* the peak of live bytes: no arena is smaller */
  /* breadth: the peak of live bytes over each item's lifetime (TensorFlow Lite's greedy by
   * breadth places the requests of the fullest times first): the live bytes after each event
   * in time order, and a range maximum over the events of its lifetime. */
  {
    size_t ne = 0; /* events: ends (k2 = 0) before allocations (1) at one time */
    key_index *ev = c10c__malloc((m ? 2 * m : 1) * sizeof *ev);
    size_t *apos = c10c__malloc((m ? m : 1) * sizeof *apos),
           *epos = c10c__malloc((m ? m : 1) * sizeof *epos);
    uint64_t *tree = c10c__malloc((m ? 4 * m : 1) * sizeof *tree); /* bottom-up range-max tree */
    if (!ev || !apos || !epos || !tree) {
      c10c__free(ev), c10c__free(apos), c10c__free(epos), c10c__free(tree),
          c10c__free(item_request), c10c__free(best);
      st = oom(what);
      goto done;
    }
    for (size_t k = 0; k < m; k++) {
      ev[ne++] = (key_index){alloc[k], 1, 0, (uint32_t)k};
      if (end[k] != C10C__PLAN_NEVER) ev[ne++] = (key_index){end[k], 0, 0, (uint32_t)k};
    }
    qsort(ev, ne, sizeof *ev, cmp_key_index);
    uint64_t live = 0;
    lower = 0;
    for (size_t k = 0; k < m; k++) epos[k] = ne;
    for (size_t k = 0; k < ne; k++) {
      uint32_t i = ev[k].index;
      live = ev[k].k2 ? live + block[i] : live - block[i];
      if (live > lower) lower = live;
      tree[ne + k] = live;
      if (ev[k].k2)
        apos[i] = k;
      else
        epos[i] = k;
    }
    for (size_t k = ne; k-- > 1;) tree[k] = max64(tree[2 * k], tree[2 * k + 1]);
    for (size_t k = 0; k < m; k++) {
      uint64_t peak = 0;
      for (size_t lo = apos[k] + ne, hi = epos[k] + ne; lo < hi; lo /= 2, hi /= 2) {
        if (lo & 1) peak = max64(peak, tree[lo++]);
        if (hi & 1) peak = max64(peak, tree[--hi]);
      }
      breadth[k] = peak;
    }
    c10c__free(ev), c10c__free(apos), c10c__free(epos), c10c__free(tree);
  }
  /* the placed requests' lists (alloc[] is sorted: the requests are in allocation order) */
  if (!placer_init(&pl, m, alloc, alloc, end)) {
    c10c__free(item_request), c10c__free(best);
    st = oom(what);
    goto done;
  }
  /* The orders tried (ORDERS) and, offline, while the arena is above the lower bound, perturbed
   * size orders (each size scaled by a random factor in [1, 1 + eps]: chains of large blocks
   * each allocated before the one before it is freed, which no fixed order interleaves well),
   * best fit and first fit in turn. Allocation order and size times lifetime never did better,
   * and are not tried. */
  uint64_t best_high = UINT64_MAX;
  bool out_of_memory = false;
  int orders = how == EFFORT_OFFLINE ? OFFLINE_ORDERS : ONLINE_ORDERS;
  uint64_t *klass = NULL, *scratch = NULL; /* size classes, offline */
  if (how == EFFORT_OFFLINE && m > 0) {
    klass = c10c__malloc(m * sizeof *klass), scratch = c10c__malloc(m * sizeof *scratch);
    if (!klass || !scratch) {
      c10c__free(klass), c10c__free(scratch), c10c__free(item_request), c10c__free(best);
      st = oom(what);
      goto done;
    }
  }
  int rounds = how == EFFORT_OFFLINE && m <= PERTURBED_MAX_ITEMS ? PERTURBED_ROUNDS : 0;
  uint64_t seed = UINT64_C(0x9E3779B97F4A7C15);
  for (int o = 0; o < orders + rounds; o++) {
    /* an arena at the lower bound (in whole 2 MiB) cannot be beaten */
    if (best_high != UINT64_MAX && arena_units(best_high) <= arena_units(lower)) break;
    bool perturbed = o >= orders;
    order_key by = perturbed ? BY_SIZE : ORDERS[o].key;
    bool best_fit = perturbed ? o % 2 == 0 : ORDERS[o].best_fit;
    static const uint64_t eps_per_mille[4] = {50, 200, 500, 1000};
    uint64_t eps = perturbed ? eps_per_mille[(o - orders) % 4] : 0;
    bool classes = by == BY_CLASS && klass != NULL;
    if (classes) size_classes(klass, scratch, block, m, ORDERS[o].inv);
    for (size_t k = 0; k < m; k++) {
      uint64_t life = end[k] - alloc[k], size = block[k];
      if (perturbed) { /* size scaled by 1 + eps * u, u uniform in [0, 1), in integers */
        uint64_t f = eps * (next_random(&seed) >> 54) / 1000; /* eps * u * 1024, <= 1023 */
        uint64_t extra = (block[k] >> 16) * f / 16;           /* block * f / 1024, < 2^59 */
        size = block[k] > UINT64_MAX - extra ? UINT64_MAX : block[k] + extra;
      }
      switch (by) {
        case BY_SIZE:
          keys[k] = (key_index){UINT64_MAX - size, UINT64_MAX - life, alloc[k], (uint32_t)k};
          break;
        case BY_BREADTH:
          keys[k] =
              (key_index){UINT64_MAX - breadth[k], UINT64_MAX - block[k], alloc[k], (uint32_t)k};
          break;
        case BY_LIFETIME:
          keys[k] = (key_index){UINT64_MAX - life, UINT64_MAX - block[k], alloc[k], (uint32_t)k};
          break;
        case BY_CLASS: /* without klass (no items) the loop does not run */
          keys[k] =
              (key_index){UINT64_MAX - klass[k], alloc[k], UINT64_MAX - block[k], (uint32_t)k};
          break;
      }
    }
    qsort(keys, m, sizeof *keys, cmp_key_index);
    for (size_t k = 0; k < m; k++) order[k] = keys[k].index;
    uint64_t high =
        place(&pl, order, m, classes ? klass : block, alloc, end, cand, best_fit, &out_of_memory);
    if (classes && high != UINT64_MAX) { /* the top of the true sizes */
      high = 0;
      for (size_t k = 0; k < m; k++) high = max64(high, cand[k] + block[k]);
    }
    if (out_of_memory) {
      c10c__free(klass), c10c__free(scratch);
      c10c__free(item_request), c10c__free(best);
      st = oom(what);
      goto done;
    }
    if (high < best_high) {
      best_high = high;
      memcpy(best, cand, m * sizeof *best);
    }
  }
  c10c__free(klass), c10c__free(scratch);
  if (m > 0 && best_high == UINT64_MAX) {
    c10c__free(item_request), c10c__free(best);
    st = c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "%s: the arena would exceed 2^64 bytes", what);
    goto done;
  }
  if (m == 0) best_high = 0;
  if (best_high > UINT64_MAX - (C10C__PLAN_ARENA_ALIGN - 1)) {
    c10c__free(item_request), c10c__free(best);
    st = c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "%s: the arena would exceed 2^64 bytes", what);
    goto done;
  }
  p->arena = (best_high + C10C__PLAN_ARENA_ALIGN - 1) & ~(uint64_t)(C10C__PLAN_ARENA_ALIGN - 1);
  for (size_t k = 0; k < m; k++) p->offsets[item_request[k]] = best[k];
  c10c__free(item_request), c10c__free(best);
  st = prepare(p, what);
done:
  c10c__free(keys), c10c__free(order), c10c__free(block), c10c__free(alloc), c10c__free(end),
      c10c__free(cand), c10c__free(breadth);
  placer_free(&pl);
  if (st != C10C_STATUS_OK) {
    c10c__plan_destroy(p);
    return st;
  }
  *out = p;
  return C10C_STATUS_OK;
}

c10c_status c10c__plan_compute(c10c__plan **out, const c10c__plan_request *requests, size_t count,
                               int32_t device) {
  if (out == NULL) return c10c__null_argument(__func__, "out");
  return compute(out, requests, count, device, NULL, __func__, EFFORT_ONLINE);
}

/* ---- the plan file ---- */

static uint64_t fnv1a(const uint8_t *d, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ d[i]) * 0x100000001b3ull;
  return h;
}

c10c_status c10c__plan_write(const c10c__plan *plan, const char *path) {
  if (plan == NULL) return c10c__null_argument(__func__, "plan");
  if (path == NULL) return c10c__null_argument(__func__, "path");
  size_t n = plan->count;
  if ((uint64_t)n > MAX_REQUESTS)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "plan file %s: %zu requests, more than 2^31",
                      path, n);
  size_t bytes = HEADER_BYTES + RECORD_BYTES * n + CHECKSUM_BYTES;
  uint8_t *d = c10c__malloc(bytes);
  if (!d) return oom("c10c__plan_write");
  memcpy(d, plan_magic, 8);
  c10c__put_le(d + 8, PLAN_VERSION, 4);
  c10c__put_le(d + 12, (uint32_t)plan->device, 4);
  c10c__put_le(d + 16, plan->nstreams, 4);
  c10c__put_le(d + 20, n, 8);
  c10c__put_le(d + 28, plan->arena, 8);
  uint8_t *q = d + HEADER_BYTES;
  for (size_t i = 0; i < n; i++, q += RECORD_BYTES) {
    const c10c__plan_request *r = &plan->requests[i];
    c10c__put_le(q, r->size, 8);
    c10c__put_le(q + 8, r->alloc, 8);
    c10c__put_le(q + 16, r->free, 8);
    c10c__put_le(q + 24, r->stream, 4);
    q[28] = r->skip ? 1 : 0;
    c10c__put_le(q + 29, plan->offsets[i], 8);
  }
  c10c__put_le(q, fnv1a(d, bytes - CHECKSUM_BYTES), 8);
  FILE *f = fopen(path, "wb");
  if (!f) {
    int err = errno;
    c10c__free(d);
    return c10c__fail(C10C_STATUS_ERROR, "plan file %s cannot be written: %s", path, strerror(err));
  }
  size_t w = fwrite(d, 1, bytes, f);
  int err = errno;
  c10c__free(d);
  if (w != bytes) {
    fclose(f);
    return c10c__fail(C10C_STATUS_ERROR, "plan file %s cannot be written: %s", path, strerror(err));
  }
  if (fclose(f) != 0) {
    err = errno;
    return c10c__fail(C10C_STATUS_ERROR, "plan file %s cannot be written: %s", path, strerror(err));
  }
  return C10C_STATUS_OK;
}

/* Parses a plan file's bytes (exactly n); what names the file in messages. */
static c10c_status parse(c10c__plan **out, const uint8_t *d, size_t n, const char *what) {
  if (n < 8 || memcmp(d, plan_magic, 8) != 0) {
    if (n < 8 && memcmp(d, plan_magic, n) == 0)
      return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "%s: truncated (%zu bytes)", what, n);
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "%s: not a plan file (bad magic)", what);
  }
  if (n < 12) return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "%s: truncated (%zu bytes)", what, n);
  uint32_t version = (uint32_t)c10c__get_le(d + 8, 4);
  if (version != PLAN_VERSION)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "%s is version %u; this library reads version %d", what, (unsigned)version,
                      PLAN_VERSION);
  if (n < HEADER_BYTES)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "%s: truncated (%zu bytes)", what, n);
  uint64_t count = c10c__get_le(d + 20, 8);
  if (count > MAX_REQUESTS || count > (SIZE_MAX - HEADER_BYTES - CHECKSUM_BYTES) / RECORD_BYTES ||
      count > SIZE_MAX / sizeof(c10c__plan_request))
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "%s: %llu requests, more than this library reads (2^31)", what,
                      (unsigned long long)count);
  size_t want = HEADER_BYTES + RECORD_BYTES * (size_t)count + CHECKSUM_BYTES;
  if (n < want)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "%s: truncated (%zu bytes of %zu)", what, n,
                      want);
  if (n > want)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "%s: %zu trailing bytes after the plan", what,
                      n - want);
  if (c10c__get_le(d + want - CHECKSUM_BYTES, 8) != fnv1a(d, want - CHECKSUM_BYTES))
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "%s: bad checksum (the file is damaged)", what);
  c10c__plan *p = c10c__calloc(1, sizeof *p);
  size_t cn = count ? (size_t)count : 1;
  if (p) {
    p->requests = c10c__malloc(cn * sizeof *p->requests);
    p->offsets = c10c__malloc(cn * sizeof *p->offsets);
  }
  if (!p || !p->requests || !p->offsets) {
    c10c__plan_destroy(p);
    return oom(what);
  }
  p->device = (int32_t)(uint32_t)c10c__get_le(d + 12, 4);
  p->nstreams = (uint32_t)c10c__get_le(d + 16, 4);
  p->count = (size_t)count;
  p->arena = c10c__get_le(d + 28, 8);
  const uint8_t *q = d + HEADER_BYTES;
  for (size_t i = 0; i < p->count; i++, q += RECORD_BYTES) {
    c10c__plan_request *r = &p->requests[i];
    r->size = c10c__get_le(q, 8);
    r->alloc = c10c__get_le(q + 8, 8);
    r->free = c10c__get_le(q + 16, 8);
    r->stream = (uint32_t)c10c__get_le(q + 24, 4);
    if (q[28] > 1) {
      c10c__plan_destroy(p);
      return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "%s: request %zu's skip flag is %u", what, i,
                        (unsigned)q[28]);
    }
    r->skip = q[28] == 1;
    p->offsets[i] = c10c__get_le(q + 29, 8);
  }
  c10c_status st = prepare(p, what);
  if (st != C10C_STATUS_OK) {
    c10c__plan_destroy(p);
    return st;
  }
  *out = p;
  return C10C_STATUS_OK;
}

c10c_status c10c__plan_parse(c10c__plan **out, const void *data, size_t size, const char *name) {
  if (out == NULL) return c10c__null_argument(__func__, "out");
  *out = NULL;
  if (data == NULL && size > 0) return c10c__null_argument(__func__, "data");
  if (name == NULL) return c10c__null_argument(__func__, "name");
  size_t wlen = strlen(name) + 16;
  char *what = c10c__malloc(wlen);
  if (!what) return oom("c10c__plan_parse");
  snprintf(what, wlen, "plan file %s", name);
  c10c_status st = parse(out, size ? data : (const uint8_t *)"", size, what);
  c10c__free(what);
  return st;
}

c10c_status c10c__plan_read(c10c__plan **out, const char *path) {
  if (out == NULL) return c10c__null_argument(__func__, "out");
  *out = NULL;
  if (path == NULL) return c10c__null_argument(__func__, "path");
  size_t wlen = strlen(path) + 16;
  char *what = c10c__malloc(wlen);
  if (!what) return oom("c10c__plan_read");
  snprintf(what, wlen, "plan file %s", path);
  FILE *f = fopen(path, "rb");
  if (!f) {
    int err = errno;
    c10c_status st = c10c__fail(C10C_STATUS_ERROR, "%s cannot be opened: %s", what, strerror(err));
    c10c__free(what);
    return st;
  }
  /* Read the header, then grow the buffer only as bytes arrive, up to what the header says
   * (plus one byte to see trailing bytes). */
  size_t cap = HEADER_BYTES, len = 0, want = SIZE_MAX;
  uint8_t *d = c10c__malloc(cap);
  c10c_status st = C10C_STATUS_OK;
  if (!d) st = oom(what);
  while (st == C10C_STATUS_OK) {
    if (len == cap) {
      if (len >= want) break;
      size_t next = cap * 2;
      if (next > want || next < cap) next = want;
      uint8_t *nd = grow(d, cap, next);
      if (!nd) {
        st = oom(what);
        break;
      }
      d = nd, cap = next;
    }
    size_t got = fread(d + len, 1, cap - len, f);
    len += got;
    if (got == 0) {
      if (ferror(f)) {
        int err = errno;
        st = c10c__fail(C10C_STATUS_ERROR, "%s cannot be read: %s", what, strerror(err));
      }
      break;
    }
    if (want == SIZE_MAX && len >= HEADER_BYTES && memcmp(d, plan_magic, 8) == 0) {
      uint64_t count = c10c__get_le(d + 20, 8);
      if (count <= MAX_REQUESTS &&
          count <= (SIZE_MAX - HEADER_BYTES - CHECKSUM_BYTES - 1) / RECORD_BYTES)
        want = HEADER_BYTES + RECORD_BYTES * (size_t)count + CHECKSUM_BYTES + 1;
      else
        break; /* parse refuses the count */
    }
    if (want == SIZE_MAX && len >= HEADER_BYTES) break; /* not a plan: parse says so */
  }
  fclose(f);
  if (st == C10C_STATUS_OK) st = parse(out, d, len, what);
  c10c__free(d);
  c10c__free(what);
  return st;
}

/* ---- the public entry point ---- */

c10c_status c10c_plan_make(uint64_t *out_arena_bytes, uint64_t *out_offsets, const char *path,
                           int32_t device, size_t count, const uint64_t *sizes,
                           const int64_t *streams, const uint64_t *begins, const uint64_t *ends) {
  C10C__CHECK_NOT_NULL(out_arena_bytes);
  if (count > 0) {
    C10C__CHECK_NOT_NULL(sizes);
    C10C__CHECK_NOT_NULL(streams);
    C10C__CHECK_NOT_NULL(begins);
    C10C__CHECK_NOT_NULL(ends);
  }
  if (device < 0)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "c10c_plan_make: device %d is not a device index", (int)device);
  if ((uint64_t)count > MAX_REQUESTS)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "c10c_plan_make: %zu requests, more than 2^31",
                      count);
  for (size_t i = 0; i < count; i++) {
    if (ends[i] < begins[i])
      return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                        "c10c_plan_make: request %zu ends at %llu, before it begins at %llu", i,
                        (unsigned long long)ends[i], (unsigned long long)begins[i]);
    if (begins[i] == UINT64_MAX)
      return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                        "c10c_plan_make: request %zu begins at UINT64_MAX, which means never", i);
  }
  size_t cn = count ? count : 1;
  c10c__plan_request *req = c10c__malloc(cn * sizeof *req);
  key_index *keys = c10c__malloc(cn * sizeof *keys);
  uint32_t *perm = c10c__malloc(cn * sizeof *perm);
  c10c__plan *plan = NULL;
  c10c_status st = C10C_STATUS_OK;
  if (!req || !keys || !perm) {
    st = oom("c10c_plan_make");
    goto done;
  }
  /* plan streams by first use in allocation order */
  for (size_t i = 0; i < count; i++) keys[i] = (key_index){begins[i], 0, 0, (uint32_t)i};
  qsort(keys, count, sizeof *keys, cmp_key_index);
  int64_t ids[C10C__PLAN_MAX_STREAMS];
  uint32_t nids = 0;
  for (size_t k = 0; k < count; k++) {
    size_t i = keys[k].index;
    uint32_t s = 0;
    while (s < nids && ids[s] != streams[i]) s++;
    if (s == nids && nids < C10C__PLAN_MAX_STREAMS) ids[nids++] = streams[i];
    req[i] = (c10c__plan_request){sizes[i], begins[i], ends[i], s, false};
  }
  st = compute(&plan, req, count, device, perm, "c10c_plan_make", EFFORT_OFFLINE);
  if (st != C10C_STATUS_OK) goto done;
  if (path) {
    st = c10c__plan_write(plan, path);
    if (st != C10C_STATUS_OK) goto done;
  }
  *out_arena_bytes = plan->arena;
  if (out_offsets)
    for (size_t k = 0; k < count; k++) out_offsets[perm[k]] = plan->offsets[k];
done:
  c10c__plan_destroy(plan);
  c10c__free(req), c10c__free(keys), c10c__free(perm);
  return st;
}
