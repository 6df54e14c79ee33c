/* The offline memory planner (lib/memory/planner.c): plans checked against a brute-force O(n^2)
 * model (no two planned requests alive at once share a byte; the derived fields free_rank,
 * by_free, need, waits and cross as planner.h defines them), arenas at the lower bound where a
 * plan can reach it, hostile plans and plan files refused, and c10c_plan_make's arguments.
 * White-box: links the static library and sees lib/. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "c10c/replay.h"
#include "harness.h"
#include "os_compat.h"
#include "planner.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return rng_state;
}

static uint64_t life_end(const c10c__plan_request *r) {
  if (r->free == C10C__PLAN_NEVER) return C10C__PLAN_NEVER;
  return r->free == r->alloc ? r->alloc + 1 : r->free;
}

static bool has_offset(const c10c__plan *p, size_t i) {
  return p->offsets[i] != C10C__PLAN_UNPLANNED;
}

static uint64_t block_of(uint64_t size) { return (size + 511) & ~(uint64_t)511; }

/* The model: whether the plan's placement is safe (every planned request inside the arena, no
 * two alive at once sharing a byte), and, when it is, whether the derived fields are the
 * model's. Prints the first difference. */
static bool model_matches(const c10c__plan *p) {
  size_t n = p->count, planned = 0, freed = 0;
  uint32_t *rank = malloc((n + 1) * sizeof *rank);
  if (!rank) return false;
  for (size_t i = 0; i < n; i++) {
    rank[i] = UINT32_MAX;
    if (!has_offset(p, i)) continue;
    planned++;
    if (p->block[i] != block_of(p->requests[i].size)) {
      fprintf(stderr, "  block[%zu]\n", i);
      free(rank);
      return false;
    }
    if (p->offsets[i] % 512 != 0 || p->offsets[i] + p->block[i] > p->arena) {
      fprintf(stderr, "  request %zu outside the arena\n", i);
      free(rank);
      return false;
    }
    if (p->requests[i].free == C10C__PLAN_NEVER) continue;
    /* rank: frees before it in (time, index) order */
    uint32_t r = 0;
    for (size_t k = 0; k < n; k++)
      if (has_offset(p, k) && p->requests[k].free != C10C__PLAN_NEVER &&
          (p->requests[k].free < p->requests[i].free ||
           (p->requests[k].free == p->requests[i].free && k < i)))
        r++;
    rank[i] = r;
    freed++;
  }
  bool ok = p->planned == planned;
  if (!ok) fprintf(stderr, "  planned %zu, model %zu\n", p->planned, planned);
  for (size_t i = 0; ok && i < n; i++) {
    if (p->free_rank[i] != rank[i]) {
      fprintf(stderr, "  free_rank[%zu] %u, model %u\n", i, p->free_rank[i], rank[i]);
      ok = false;
    } else if (rank[i] != UINT32_MAX && p->by_free[rank[i]] != i) {
      fprintf(stderr, "  by_free[%u]\n", rank[i]);
      ok = false;
    }
  }
  for (size_t j = 0; ok && j < n; j++) {
    if (!has_offset(p, j)) continue;
    const c10c__plan_request *rj = &p->requests[j];
    uint32_t need = 0;
    uint64_t waits = 0;
    bool cross = false;
    for (size_t i = 0; i < n; i++) {
      if (i == j || !has_offset(p, i)) continue;
      const c10c__plan_request *ri = &p->requests[i];
      bool bytes = p->offsets[i] < p->offsets[j] + p->block[j] &&
                   p->offsets[j] < p->offsets[i] + p->block[i];
      if (!bytes) continue;
      if (ri->alloc < life_end(rj) && rj->alloc < life_end(ri)) {
        fprintf(stderr, "  requests %zu and %zu overlap\n", i, j);
        ok = false;
        break;
      }
      if (life_end(ri) <= rj->alloc) { /* i is an earlier occupant of j's bytes */
        if (rank[i] + 1 > need) need = rank[i] + 1;
        if (ri->stream != rj->stream) waits |= (uint64_t)1 << ri->stream;
      } else if (ri->stream != rj->stream) {
        cross = true;
      }
    }
    if (ok && (p->need[j] != need || p->waits[j] != waits || p->cross[j] != cross)) {
      fprintf(stderr, "  request %zu: need %u/%u waits %llx/%llx cross %d/%d\n", j, p->need[j],
              need, (unsigned long long)p->waits[j], (unsigned long long)waits, p->cross[j], cross);
      ok = false;
    }
  }
  (void)freed;
  free(rank);
  return ok;
}

/* Whether any two planned requests alive at once share a byte (the model, no derived fields). */
static bool model_overlaps(const c10c__plan *p) {
  for (size_t j = 0; j < p->count; j++)
    for (size_t i = 0; i < j; i++) {
      if (!has_offset(p, i) || !has_offset(p, j)) continue;
      const c10c__plan_request *ri = &p->requests[i], *rj = &p->requests[j];
      if (ri->skip || rj->skip || ri->size == 0 || rj->size == 0) continue;
      uint64_t bi = block_of(ri->size), bj = block_of(rj->size);
      if (p->offsets[i] < p->offsets[j] + bj && p->offsets[j] < p->offsets[i] + bi &&
          ri->alloc < life_end(rj) && rj->alloc < life_end(ri))
        return true;
    }
  return false;
}

static c10c__plan_request random_request(uint64_t t, int shape) {
  c10c__plan_request r = {0};
  r.size = rng() % 4 == 0 ? rng() % 2048 : (rng() % 64 + 1) << (rng() % 12 + 9);
  if (rng() % 40 == 0) r.size = 0;
  r.alloc = t;
  uint64_t life = shape == 0 ? rng() % 50 : rng() % 4 == 0 ? rng() % 400 : rng() % 8;
  r.free = rng() % 30 == 0 ? C10C__PLAN_NEVER : t + life;
  r.stream = (uint32_t)(rng() % (shape == 2 ? 70 : 3));
  r.skip = rng() % 25 == 0;
  return r;
}

TEST(computed_plans_are_safe_and_their_derived_fields_are_the_models) {
  for (int round = 0; round < 300 && !test_current_failed; round++) {
    size_t n = (size_t)(rng() % 200);
    c10c__plan_request req[200];
    uint64_t t = rng() % 5;
    for (size_t i = 0; i < n; i++) {
      req[i] = random_request(t, round % 3);
      t += rng() % 3; /* equal times too */
    }
    /* any order in */
    for (size_t i = n; i > 1; i--) {
      size_t k = (size_t)(rng() % i);
      c10c__plan_request tmp = req[i - 1];
      req[i - 1] = req[k], req[k] = tmp;
    }
    c10c__plan *p = NULL;
    ASSERT_OK(c10c__plan_compute(&p, req, n, 1));
    if (!p) return;
    ASSERT_EQ(p->count, n);
    ASSERT_EQ(p->device, 1);
    ASSERT_EQ(p->arena % (2 << 20), 0);
    ASSERT_TRUE(p->arena >= c10c__plan_lower_bound(p));
    for (size_t i = 0; i < n; i++) {
      const c10c__plan_request *r = &p->requests[i];
      if (i > 0) ASSERT_TRUE(r->alloc >= p->requests[i - 1].alloc);
      bool planned = !r->skip && r->size != 0 && r->stream < 64;
      ASSERT_EQ(has_offset(p, i), planned);
      if (planned) ASSERT_TRUE(r->stream < p->nstreams);
    }
    ASSERT_TRUE(model_matches(p));
    c10c__plan_destroy(p);
  }
}

/* Random hand-made plans in a small arena: prepare accepts exactly the safe ones, and fills
 * the model's fields. */
TEST(prepare_accepts_exactly_the_safe_plans) {
  int accepted = 0, refused = 0;
  for (int round = 0; round < 3000 && !test_current_failed; round++) {
    size_t n = (size_t)(rng() % 12);
    c10c__plan_request req[12];
    uint64_t off[12];
    uint64_t t = 0;
    for (size_t i = 0; i < n; i++) {
      req[i] = (c10c__plan_request){(rng() % 6 + 1) * 512 - rng() % 2, t, t + rng() % 10,
                                    (uint32_t)(rng() % 4), false};
      if (rng() % 10 == 0) req[i].free = C10C__PLAN_NEVER;
      off[i] = (rng() % 8) * 512;
      if (rng() % 20 == 0) off[i] = C10C__PLAN_UNPLANNED;
      t += rng() % 4;
    }
    c10c__plan p = {0, 4, n, 2 << 20, req, off, 0, NULL, NULL, NULL, NULL, NULL, NULL};
    bool unsafe = model_overlaps(&p);
    c10c_status st = c10c__plan_prepare(&p);
    if (unsafe) {
      ASSERT_EQ(st, C10C_STATUS_INVALID_ARGUMENT);
      ASSERT_TRUE(strstr(c10c_last_error_message(), "overlap") != NULL);
      ASSERT_TRUE(p.block == NULL);
      refused++;
    } else {
      ASSERT_OK(st);
      if (st == C10C_STATUS_OK) ASSERT_TRUE(model_matches(&p));
      accepted++;
    }
    free(p.block), free(p.free_rank), free(p.need), free(p.waits), free(p.cross), free(p.by_free);
  }
  ASSERT_TRUE(accepted > 100);
  ASSERT_TRUE(refused > 100);
}

static uint64_t arena_for(uint64_t bytes) {
  return (bytes + (2 << 20) - 1) & ~(uint64_t)((2 << 20) - 1);
}

TEST(stack_like_lifetimes_plan_at_the_lower_bound) {
  for (int round = 0; round < 50; round++) {
    /* nested lifetimes: request i lives [i, 2n - i) */
    enum { N = 100 };
    c10c__plan_request req[N];
    for (size_t i = 0; i < N; i++)
      req[i] = (c10c__plan_request){(rng() % 1000 + 1) * 4096, i, 2 * N - i, 0, false};
    c10c__plan *p = NULL;
    ASSERT_OK(c10c__plan_compute(&p, req, N, 0));
    if (!p) return;
    uint64_t sum = 0;
    for (size_t i = 0; i < N; i++) sum += block_of(req[i].size);
    ASSERT_EQ_U64(c10c__plan_lower_bound(p), sum);
    ASSERT_EQ_U64(p->arena, arena_for(sum));
    c10c__plan_destroy(p);
  }
  /* one after another (a free at the time of the next allocation comes first): the largest */
  c10c__plan_request seq[10];
  uint64_t biggest = 0;
  for (size_t i = 0; i < 10; i++) {
    seq[i] = (c10c__plan_request){(rng() % 100 + 1) << 20, i, i + 1, (uint32_t)(i % 2), false};
    if (seq[i].size > biggest) biggest = seq[i].size;
  }
  c10c__plan *p = NULL;
  ASSERT_OK(c10c__plan_compute(&p, seq, 10, 0));
  if (!p) return;
  ASSERT_EQ_U64(p->arena, arena_for(biggest));
  ASSERT_EQ(p->nstreams, 2);
  /* every request reuses the previous one's bytes, on the other stream */
  for (size_t i = 1; i < 10; i++) {
    ASSERT_EQ(p->need[i], i);
    ASSERT_EQ_U64(p->waits[i], (uint64_t)1 << ((i - 1) % 2));
    ASSERT_TRUE(p->cross[i - 1]);
  }
  ASSERT_FALSE(p->cross[9]);
  ASSERT_TRUE(model_matches(p));
  c10c__plan_destroy(p);
  /* a request freed when it is allocated still gets its own bytes for that instant */
  c10c__plan_request zero[2] = {{1024, 5, 5, 0, false}, {1024, 5, 9, 0, false}};
  ASSERT_OK(c10c__plan_compute(&p, zero, 2, 0));
  if (!p) return;
  ASSERT_TRUE(p->offsets[0] != p->offsets[1]);
  ASSERT_TRUE(model_matches(p));
  c10c__plan_destroy(p);
  /* nothing to plan */
  ASSERT_OK(c10c__plan_compute(&p, NULL, 0, 0));
  if (!p) return;
  ASSERT_EQ_U64(p->arena, 0);
  ASSERT_EQ(p->planned, 0);
  c10c__plan_destroy(p);
}

TEST(chains_of_two_near_sizes_share_slots_of_the_larger) {
  /* A published snapshot's octree NCA step (HugePandaCoder/octree-nca, blocks of 1.391 and
   * 1.130 GiB): one block alive throughout, and two chains, each block allocated before the one
   * before it in its chain is freed (its sizes and times). Live bytes peak at 3 big + 1 small, but
   * no placement of the true sizes shares their slots (every order gave 2 big + 2 small above the
   * long one); as the larger size, the chains are intervals three deep and need exactly three
   * slots. An exact solver (CBC) puts the optimum of the real blocks at 4 big. The offline
   * planner's (c10c_plan_make) size-class orders find it. */
  enum { N = 21 };
  const uint64_t BIG = UINT64_C(1493049856), SMALL = UINT64_C(1213103104);
  const uint64_t life[N][3] = {{BIG, 0, 61},  {SMALL, 3, 8},   {BIG, 4, 10},  {SMALL, 7, 14},
                               {BIG, 9, 16},  {SMALL, 13, 20}, {BIG, 15, 22}, {SMALL, 19, 26},
                               {BIG, 21, 28}, {SMALL, 25, 32}, {BIG, 27, 34}, {SMALL, 31, 38},
                               {BIG, 33, 40}, {SMALL, 37, 44}, {BIG, 39, 46}, {SMALL, 43, 50},
                               {BIG, 45, 52}, {SMALL, 49, 56}, {BIG, 51, 58}, {SMALL, 55, 60},
                               {BIG, 57, 62}};
  uint64_t sizes[N], begins[N], ends[N], offsets[N], arena = 0;
  int64_t streams[N] = {0};
  for (size_t i = 0; i < N; i++)
    sizes[i] = life[i][0], begins[i] = life[i][1], ends[i] = life[i][2];
  ASSERT_OK(c10c_plan_make(&arena, offsets, NULL, 0, N, sizes, streams, begins, ends));
  ASSERT_EQ_U64(arena, arena_for(4 * BIG)); /* the live peak: 3 * BIG + SMALL */
  for (size_t i = 0; i < N; i++) {
    ASSERT_TRUE(offsets[i] + sizes[i] <= arena);
    for (size_t j = 0; j < i; j++) /* alive together: apart */
      if (begins[i] < ends[j] && begins[j] < ends[i])
        ASSERT_TRUE(offsets[i] >= offsets[j] + sizes[j] || offsets[j] >= offsets[i] + sizes[i]);
  }
}

TEST(compute_refuses_bad_requests) {
  c10c__plan *p = NULL;
  c10c__plan_request r[2] = {{512, 3, 2, 0, false}, {512, 0, 1, 0, false}};
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c__plan_compute(&p, r, 2, 0));
  ASSERT_ERROR_MESSAGE("c10c__plan_compute: request 0 is freed at 2 before its allocation at 3");
  ASSERT_TRUE(p == NULL);
  r[0].free = 4;
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c__plan_compute(&p, r, 2, -1));
  r[0].size = UINT64_MAX;
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c__plan_compute(&p, r, 2, 0));
  r[0].size = UINT64_MAX / 2, r[1] = r[0], r[1].alloc = 3; /* two halves of 2^64 alive at once */
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c__plan_compute(&p, r, 2, 0));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c__plan_compute(NULL, r, 2, 0));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c__plan_compute(&p, NULL, 2, 0));
}

/* A valid plan of two requests on two streams reusing one block, to break in one way each. */
typedef struct small_plan {
  c10c__plan_request req[3];
  uint64_t off[3];
  c10c__plan plan;
} small_plan;

static void small_plan_init(small_plan *s) {
  s->req[0] = (c10c__plan_request){1000, 0, 5, 0, false};
  s->req[1] = (c10c__plan_request){1024, 5, 9, 1, false};
  s->req[2] = (c10c__plan_request){4096, 6, C10C__PLAN_NEVER, 1, true};
  s->off[0] = 512, s->off[1] = 0, s->off[2] = C10C__PLAN_UNPLANNED;
  s->plan = (c10c__plan){0, 2, 3, 2 << 20, s->req, s->off, 0, NULL, NULL, NULL, NULL, NULL, NULL};
}

static void small_plan_free(small_plan *s) {
  c10c__plan *p = &s->plan;
  free(p->block), free(p->free_rank), free(p->need), free(p->waits), free(p->cross),
      free(p->by_free);
}

#define EXPECT_REFUSED(edit, text)                                            \
  do {                                                                        \
    small_plan s;                                                             \
    small_plan_init(&s);                                                      \
    edit;                                                                     \
    ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c__plan_prepare(&s.plan)); \
    ASSERT_ERROR_MESSAGE(text);                                               \
    ASSERT_TRUE(s.plan.block == NULL);                                        \
    small_plan_free(&s);                                                      \
  } while (0)

TEST(prepare_refuses_hostile_plans) {
  small_plan good;
  small_plan_init(&good);
  ASSERT_OK(c10c__plan_prepare(&good.plan));
  ASSERT_EQ(good.plan.planned, 2);
  ASSERT_EQ(good.plan.need[1], 1);
  ASSERT_EQ_U64(good.plan.waits[1], 1);
  ASSERT_TRUE(good.plan.cross[0]);
  ASSERT_TRUE(model_matches(&good.plan));
  ASSERT_OK(c10c__plan_prepare(&good.plan)); /* again: the derived fields are replaced */
  small_plan_free(&good);

  EXPECT_REFUSED(s.req[1].alloc = 4,
                 "plan: requests 0 and 1 are alive at the same time and "
                 "overlap in the arena");
  EXPECT_REFUSED(s.req[0].free = C10C__PLAN_NEVER,
                 "plan: requests 0 and 1 are alive at the same time and overlap in the arena");
  EXPECT_REFUSED((s.req[0].alloc = 6, s.req[0].free = 7),
                 "plan: request 1 is allocated at 5, before request 0 (6); requests must be in "
                 "allocation order");
  EXPECT_REFUSED(s.req[1].free = 4, "plan: request 1 is freed at 4 before its allocation at 5");
  EXPECT_REFUSED(s.req[1].stream = 2, "plan: request 1 is on stream 2, but the plan has 2 streams");
  EXPECT_REFUSED(s.plan.nstreams = 65, "plan: 65 streams, more than 64");
  EXPECT_REFUSED(s.off[0] = 100, "plan: request 0's offset 100 is not a multiple of 512");
  EXPECT_REFUSED(s.off[0] = (2 << 20) - 512,
                 "plan: request 0 (1024 bytes at offset 2096640) lies outside the arena of "
                 "2097152 bytes");
  EXPECT_REFUSED(s.off[0] = UINT64_MAX - 511,
                 "plan: request 0 (1024 bytes at offset 18446744073709551104) lies outside the "
                 "arena of 2097152 bytes");
  EXPECT_REFUSED((s.req[0].size = UINT64_MAX - 10),
                 "plan: request 0 has size 18446744073709551605, too large");
  EXPECT_REFUSED(s.plan.arena = 1 << 20,
                 "plan: the arena (1048576 bytes) is not a multiple of 2 MiB");
  EXPECT_REFUSED(s.off[2] = 0,
                 "plan: request 2 is left to the engine (skipped, size 0 or stream "
                 "1) but has offset 0");
  EXPECT_REFUSED(s.plan.device = -1, "plan: device -1 is not a device index");
  EXPECT_REFUSED((s.req[0].alloc = UINT64_MAX, s.req[0].free = UINT64_MAX),
                 "plan: request 0 is allocated at time 2^64 - 1, which is reserved");
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c__plan_prepare(NULL));
}

static char tmp_dir[64];

static void path_in_tmp(char *out, size_t size, const char *name) {
  if (!tmp_dir[0]) {
    strcpy(tmp_dir, "/tmp/c10c_planner_XXXXXX");
    if (!mkdtemp(tmp_dir)) abort();
  }
  snprintf(out, size, "%s/%s", tmp_dir, name);
}

static void write_bytes(const char *path, const uint8_t *d, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  if (n && fwrite(d, 1, n, f) != n) abort();
  fclose(f);
}

static uint8_t *read_bytes(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) abort();
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *d = malloc((size_t)len + 1);
  if (!d || fread(d, 1, (size_t)len, f) != (size_t)len) abort();
  fclose(f);
  *n = (size_t)len;
  return d;
}

static uint64_t fnv1a(const uint8_t *d, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ d[i]) * 0x100000001b3ull;
  return h;
}

static void fix_checksum(uint8_t *d, size_t n) {
  uint64_t h = fnv1a(d, n - 8);
  for (int i = 0; i < 8; i++) d[n - 8 + i] = (uint8_t)(h >> (8 * i));
}

static bool plans_equal(const c10c__plan *a, const c10c__plan *b) {
  if (a->device != b->device || a->nstreams != b->nstreams || a->count != b->count ||
      a->arena != b->arena)
    return false;
  for (size_t i = 0; i < a->count; i++) {
    const c10c__plan_request *x = &a->requests[i], *y = &b->requests[i];
    if (x->size != y->size || x->alloc != y->alloc || x->free != y->free ||
        x->stream != y->stream || x->skip != y->skip || a->offsets[i] != b->offsets[i])
      return false;
  }
  return true;
}

TEST(plan_files_round_trip_in_a_fixed_little_endian_layout) {
  small_plan s;
  small_plan_init(&s);
  s.plan.device = 3;
  char path[128];
  path_in_tmp(path, sizeof path, "small.plan");
  ASSERT_OK(c10c__plan_write(&s.plan, path));
  size_t n;
  uint8_t *d = read_bytes(path, &n);
  ASSERT_EQ(n, 36 + 3 * 37 + 8);
  ASSERT_TRUE(memcmp(d, "C10CPLAN\x01\x00\x00\x00\x03\x00\x00\x00\x02\x00\x00\x00\x03", 17) == 0);
  /* request 0's size, 1000, little-endian; its offset 512 */
  ASSERT_EQ(d[36], 0xe8);
  ASSERT_EQ(d[37], 0x03);
  ASSERT_EQ(d[36 + 29], 0x00);
  ASSERT_EQ(d[36 + 30], 0x02);
  ASSERT_EQ(d[36 + 2 * 37 + 28], 1); /* request 2 skipped */
  free(d);
  c10c__plan *back = NULL;
  ASSERT_OK(c10c__plan_read(&back, path));
  if (!back) return;
  ASSERT_TRUE(plans_equal(&s.plan, back));
  ASSERT_TRUE(model_matches(back));
  c10c__plan_destroy(back);
  small_plan_free(&s);
  /* a computed plan of many requests */
  c10c__plan_request req[300];
  for (size_t i = 0; i < 300; i++) req[i] = random_request(i, 1);
  c10c__plan *p = NULL;
  ASSERT_OK(c10c__plan_compute(&p, req, 300, 0));
  if (!p) return;
  ASSERT_OK(c10c__plan_write(p, path));
  ASSERT_OK(c10c__plan_read(&back, path));
  if (back) ASSERT_TRUE(plans_equal(p, back));
  c10c__plan_destroy(back);
  c10c__plan_destroy(p);
}

TEST(damaged_plan_files_are_refused) {
  small_plan s;
  small_plan_init(&s);
  char path[128], bad[128];
  path_in_tmp(path, sizeof path, "good.plan");
  path_in_tmp(bad, sizeof bad, "bad.plan");
  ASSERT_OK(c10c__plan_write(&s.plan, path));
  small_plan_free(&s);
  size_t n;
  uint8_t *d = read_bytes(path, &n);
  uint8_t *e = malloc(n + 8);
  c10c__plan *p = NULL;
  char msg[256];
  /* every truncation */
  for (size_t len = 0; len < n; len++) {
    write_bytes(bad, d, len);
    ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c__plan_read(&p, bad));
    ASSERT_TRUE(p == NULL);
  }
  snprintf(msg, sizeof msg, "plan file %s: truncated (44 bytes of 155)", bad);
  write_bytes(bad, d, 44);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c__plan_read(&p, bad));
  ASSERT_ERROR_MESSAGE(msg);
  /* trailing bytes */
  memcpy(e, d, n);
  e[n] = 0;
  write_bytes(bad, e, n + 1);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c__plan_read(&p, bad));
  snprintf(msg, sizeof msg, "plan file %s: 1 trailing bytes after the plan", bad);
  ASSERT_ERROR_MESSAGE(msg);
  /* every flipped byte: the checksum catches it; with the checksum made right, the checks do
   * or the plan is still safe */
  for (size_t i = 0; i < n; i++) {
    for (int bit = 0; bit < 8; bit += 3) {
      memcpy(e, d, n);
      e[i] ^= (uint8_t)(1u << bit);
      write_bytes(bad, e, n);
      ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c__plan_read(&p, bad));
      if (i >= n - 8) continue;
      fix_checksum(e, n);
      write_bytes(bad, e, n);
      c10c_status st = c10c__plan_read(&p, bad);
      if (st == C10C_STATUS_OK) {
        ASSERT_TRUE(model_matches(p));
        c10c__plan_destroy(p);
        p = NULL;
      } else {
        ASSERT_EQ(st, C10C_STATUS_INVALID_ARGUMENT);
        ASSERT_TRUE(strncmp(c10c_last_error_message(), "plan file ", 10) == 0);
      }
    }
  }
  /* the named refusals */
  memcpy(e, d, n);
  e[0] = 'X';
  write_bytes(bad, e, n);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c__plan_read(&p, bad));
  snprintf(msg, sizeof msg, "plan file %s: not a plan file (bad magic)", bad);
  ASSERT_ERROR_MESSAGE(msg);
  memcpy(e, d, n);
  e[8] = 2;
  fix_checksum(e, n);
  write_bytes(bad, e, n);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c__plan_read(&p, bad));
  snprintf(msg, sizeof msg, "plan file %s is version 2; this library reads version 1", bad);
  ASSERT_ERROR_MESSAGE(msg);
  memcpy(e, d, n);
  e[12] = e[13] = e[14] = e[15] = 0xff; /* device -1 */
  fix_checksum(e, n);
  write_bytes(bad, e, n);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c__plan_read(&p, bad));
  snprintf(msg, sizeof msg, "plan file %s: device -1 is not a device index", bad);
  ASSERT_ERROR_MESSAGE(msg);
  memcpy(e, d, n);
  e[n - 1] ^= 1;
  write_bytes(bad, e, n);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c__plan_read(&p, bad));
  snprintf(msg, sizeof msg, "plan file %s: bad checksum (the file is damaged)", bad);
  ASSERT_ERROR_MESSAGE(msg);
  /* a count that would not fit memory, and one larger than the file */
  memcpy(e, d, n);
  for (int i = 20; i < 28; i++) e[i] = 0xff;
  write_bytes(bad, e, n);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c__plan_read(&p, bad));
  snprintf(msg, sizeof msg,
           "plan file %s: 18446744073709551615 requests, more than this library reads (2^31)", bad);
  ASSERT_ERROR_MESSAGE(msg);
  memcpy(e, d, n);
  e[20] = 0, e[21] = 0, e[22] = 0, e[23] = 0x80; /* 2^31 requests in a 155-byte file */
  write_bytes(bad, e, n);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c__plan_read(&p, bad));
#if SIZE_MAX > UINT32_MAX
  snprintf(msg, sizeof msg, "plan file %s: truncated (155 bytes of 79456895020)", bad);
#else /* 32-bit: 2^31 requests' records do not fit a size_t, so the count is refused first */
  snprintf(msg, sizeof msg,
           "plan file %s: 2147483648 requests, more than this library reads (2^31)", bad);
#endif
  ASSERT_ERROR_MESSAGE(msg);
  /* overlapping requests with a right checksum: request 1 moved onto request 0 while alive */
  memcpy(e, d, n);
  e[36 + 37 + 8] = 4; /* request 1 allocated at 4, while request 0 lives */
  fix_checksum(e, n);
  write_bytes(bad, e, n);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c__plan_read(&p, bad));
  snprintf(msg, sizeof msg,
           "plan file %s: requests 0 and 1 are alive at the same time and overlap in the arena",
           bad);
  ASSERT_ERROR_MESSAGE(msg);
  /* a file that is not there, and one that cannot be written */
  path_in_tmp(bad, sizeof bad, "missing/none.plan");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c__plan_read(&p, bad));
  snprintf(msg, sizeof msg, "plan file %s cannot be opened: No such file or directory", bad);
  ASSERT_ERROR_MESSAGE(msg);
  small_plan_init(&s);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c__plan_write(&s.plan, bad));
  snprintf(msg, sizeof msg, "plan file %s cannot be written: No such file or directory", bad);
  ASSERT_ERROR_MESSAGE(msg);
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c__plan_read(NULL, path));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c__plan_read(&p, NULL));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c__plan_write(NULL, path));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c__plan_write(&s.plan, NULL));
  free(d), free(e);
}

TEST(plan_make_maps_streams_by_first_use_and_writes_the_file) {
  enum { N = 6 };
  /* given out of allocation order; stream ids 7 (first used), -3, 7 */
  uint64_t sizes[N] = {4096, 1 << 20, 0, 3000, 1 << 20, 512};
  int64_t streams[N] = {-3, 7, 7, -3, 7, 99};
  uint64_t begins[N] = {2, 0, 1, 4, 5, 6};
  uint64_t ends[N] = {5, 5, 3, UINT64_MAX, 9, 6};
  uint64_t offsets[N], arena = 0;
  char path[128];
  path_in_tmp(path, sizeof path, "made.plan");
  ASSERT_OK(c10c_plan_make(&arena, offsets, path, 2, N, sizes, streams, begins, ends));
  ASSERT_EQ_U64(arena, 2 << 20);
  ASSERT_EQ_U64(offsets[2], UINT64_MAX); /* size 0 */
  for (size_t i = 0; i < N; i++)
    if (i != 2) ASSERT_TRUE(offsets[i] < arena && offsets[i] % 512 == 0);
  c10c__plan *p = NULL;
  ASSERT_OK(c10c__plan_read(&p, path));
  if (!p) return;
  ASSERT_EQ(p->device, 2);
  ASSERT_EQ(p->nstreams, 3);
  /* in allocation order: 1 (7 -> 0), 2 (7), 0 (-3 -> 1), 3 (-3), 4 (7), 5 (99 -> 2) */
  static const size_t order[N] = {1, 2, 0, 3, 4, 5};
  static const uint32_t plan_stream[N] = {0, 0, 1, 1, 0, 2};
  for (size_t k = 0; k < N; k++) {
    ASSERT_EQ(p->requests[k].stream, plan_stream[k]);
    ASSERT_EQ_U64(p->requests[k].size, sizes[order[k]]);
    ASSERT_EQ_U64(p->offsets[k], offsets[order[k]]);
  }
  ASSERT_TRUE(model_matches(p));
  c10c__plan_destroy(p);
  /* without offsets or a file */
  uint64_t arena2 = 0;
  ASSERT_OK(c10c_plan_make(&arena2, NULL, NULL, 0, N, sizes, streams, begins, ends));
  ASSERT_EQ_U64(arena2, arena);
  ASSERT_OK(c10c_plan_make(&arena2, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL));
  ASSERT_EQ_U64(arena2, 0);
}

TEST(plan_make_beyond_64_streams_leaves_the_later_ones_to_the_engine) {
  enum { N = 70 };
  uint64_t sizes[N], begins[N], ends[N], offsets[N], arena;
  int64_t streams[N];
  for (size_t i = 0; i < N; i++)
    sizes[i] = 1024, streams[i] = (int64_t)i * 10, begins[i] = i, ends[i] = i + 1;
  ASSERT_OK(c10c_plan_make(&arena, offsets, NULL, 0, N, sizes, streams, begins, ends));
  for (size_t i = 0; i < N; i++)
    if (i < 64)
      ASSERT_EQ_U64(offsets[i], 0);
    else
      ASSERT_EQ_U64(offsets[i], UINT64_MAX);
}

TEST(plan_make_checks_its_arguments) {
  uint64_t sizes[2] = {512, 512}, begins[2] = {0, 3}, ends[2] = {4, 2}, arena, off[2];
  int64_t streams[2] = {0, 0};
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER,
                c10c_plan_make(NULL, off, NULL, 0, 2, sizes, streams, begins, ends));
  ASSERT_ERROR_MESSAGE("c10c_plan_make: argument 'out_arena_bytes' must not be NULL");
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER,
                c10c_plan_make(&arena, off, NULL, 0, 2, NULL, streams, begins, ends));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER,
                c10c_plan_make(&arena, off, NULL, 0, 2, sizes, NULL, begins, ends));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER,
                c10c_plan_make(&arena, off, NULL, 0, 2, sizes, streams, NULL, ends));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER,
                c10c_plan_make(&arena, off, NULL, 0, 2, sizes, streams, begins, NULL));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_plan_make(&arena, off, NULL, 0, 2, sizes, streams, begins, ends));
  ASSERT_ERROR_MESSAGE("c10c_plan_make: request 1 ends at 2, before it begins at 3");
  ends[1] = 5;
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_plan_make(&arena, off, NULL, -1, 2, sizes, streams, begins, ends));
  ASSERT_ERROR_MESSAGE("c10c_plan_make: device -1 is not a device index");
#if SIZE_MAX > UINT32_MAX /* 32-bit: no size_t count is past 2^32 */
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_plan_make(&arena, off, NULL, 0, (size_t)1 << 32,
                                                             sizes, streams, begins, ends));
  ASSERT_ERROR_MESSAGE("c10c_plan_make: 4294967296 requests, more than 2^31");
#endif
  char path[128];
  path_in_tmp(path, sizeof path, "missing/made.plan");
  ASSERT_STATUS(C10C_STATUS_ERROR,
                c10c_plan_make(&arena, off, path, 0, 2, sizes, streams, begins, ends));
  char msg[256];
  snprintf(msg, sizeof msg, "plan file %s cannot be written: No such file or directory", path);
  ASSERT_ERROR_MESSAGE(msg);
}

TEST(cleanup_temporary_files) {
  if (!tmp_dir[0]) return;
  static const char *names[] = {"small.plan", "good.plan", "bad.plan", "made.plan"};
  char path[128];
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    path_in_tmp(path, sizeof path, names[i]);
    unlink(path);
  }
  rmdir(tmp_dir);
}

RUN_TESTS(T(computed_plans_are_safe_and_their_derived_fields_are_the_models),
          T(prepare_accepts_exactly_the_safe_plans),
          T(stack_like_lifetimes_plan_at_the_lower_bound),
          T(chains_of_two_near_sizes_share_slots_of_the_larger), T(compute_refuses_bad_requests),
          T(prepare_refuses_hostile_plans),
          T(plan_files_round_trip_in_a_fixed_little_endian_layout),
          T(damaged_plan_files_are_refused),
          T(plan_make_maps_streams_by_first_use_and_writes_the_file),
          T(plan_make_beyond_64_streams_leaves_the_later_ones_to_the_engine),
          T(plan_make_checks_its_arguments), T(cleanup_temporary_files))
