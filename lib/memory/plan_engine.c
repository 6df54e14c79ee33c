/* The caching engine's planned mode (see plan_engine.h): per device a recording of the current
 * step, the plan being served with its arena, the serving cursor, the live planned blocks (found
 * from a pointer through a hash of the plan's offsets, built when the plan is installed) and
 * the events that keep streams ordered where the plan reuses bytes across them. */
#include "plan_engine.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator_internal.h"
#include "step_detect.h"
#include "sysmem.h"

static c10c_status plan_step(c10c__plan_state *ps);

enum {
  RECORD_MAX = 1 << 22,   /* requests recorded per step; past it recording stops */
  MISS_PERCENT = 10,      /* a served step missing more than this rebuilds the plan */
  MISS_MIN = 8,           /* (and at least this many) gives an idle arena back at once */
  MAX_REBUILD_STREAK = 4, /* rebuilds at this many boundaries in a row drop planning */
  LOOKAHEAD = 16,         /* plan entries a request that misses its place is looked for in */
  SCAN_MAX = 256          /* frees past the done prefix checked for overlap before falling back */
};

#define NONE UINT32_MAX

/* A live planned block, one per distinct offset of the plan (two blocks alive at once never
 * share an offset). */
typedef struct live_block {
  uint32_t entry; /* the plan's request; NONE: nothing lives here */
  c10c_stream_id stream;
  size_t requested;
  uint64_t tag;         /* its request in the recording */
  c10c_stream_id *uses; /* record_stream's other streams */
  size_t nuses;
} live_block;

/* A free, in the recorded step, of a block allocated before the step. */
typedef struct earlier_free {
  uint64_t time, bytes;
  c10c_stream_id stream;
} earlier_free;

/* A planned free waiting for events of the streams its block was used on. */
typedef struct pending_free {
  uint32_t rank;
  uint64_t tag; /* its request in the recording, whose free is noted when the events complete */
  uint64_t bytes;
  c10c_stream_id stream;
  size_t nevents;
  void **events;
  struct pending_free *next;
} pending_free;

struct c10c__plan_state {
  c10c__engine *engine;
  const c10c__segment_backend *backend;
  int device;
  bool planning; /* record steps, plan online */
  /* steps found from the requests (step_detect.h) until the host marks one itself */
  bool host_marks;
  c10c__step_detector *detector; /* NULL until planning is on, or when host memory ran out */
  bool stopped; /* online planning gave up (its arena could not be had, or rebuild streak) */
  bool events;  /* the backend records events and makes streams wait */
  bool hold;    /* the backend records and queries events (record_stream's uses are held) */
  /* without events: the one runtime stream the arena serves (no order can be made between
   * two), fixed by its first planned block */
  bool has_arena_stream;
  c10c_stream_id arena_stream;
  /* the recording of the current step */
  c10c__plan_request *rec;
  size_t nrec, caprec;
  bool overflow;
  uint64_t clock;
  uint32_t generation;
  uint32_t rec_nstreams;
  c10c_stream_id rec_streams[C10C__PLAN_MAX_STREAMS];
  /* the plan served, and one waiting for the arena to empty */
  c10c__plan *plan, *next;
  bool from_file, next_from_file;
  char *arena;
  size_t arena_size;
  /* serving */
  size_t cursor;
  uint8_t *done; /* [nfrees] per free rank */
  uint32_t nfrees;
  uint32_t prefix; /* free ranks 0 .. prefix-1 all done */
  uint32_t *slot;  /* [count] the live_block of each request's offset; NONE: unplanned */
  uint64_t *keys;  /* open addressing: offset + 1 (0 empty) -> vals */
  uint32_t *vals;
  size_t hmask;
  live_block *live;
  size_t nslots, nlive;
  pending_free *pending;
  bool blocked;  /* this step is the engine's: the arena was not empty at the boundary */
  bool retiring; /* the plan is no longer served: it goes once its blocks are freed */
  uint64_t bound;
  c10c_stream_id bind[C10C__PLAN_MAX_STREAMS];
  void *latest[C10C__PLAN_MAX_STREAMS]; /* the last event recorded at a cross free per stream */
  /* events recorded at the last boundary on the streams of the step that ended */
  size_t nboundary;
  void *boundary[C10C__PLAN_MAX_STREAMS];
  c10c_stream_id boundary_stream[C10C__PLAN_MAX_STREAMS];
  uint64_t boundary_waited; /* plan streams that waited for them this step */
  /* the runtime streams planned blocks were served on since the last boundary events */
  size_t nused;
  c10c_stream_id used[C10C__PLAN_MAX_STREAMS];
  uint64_t used_mask; /* plan streams of this step noted in used */
  /* frees in the current step of blocks allocated before it (a step's gradients freed at the
   * next one's zero_grad): where the engine will find room for the blocks the step leaves
   * alive (the requests a plan leaves to it), for the estimate of what a plan reserves */
  earlier_free *earlier;
  size_t nearlier, capearlier;
  /* online plans: the bytes reserved when planning began to serve (what the caching engine
   * alone would keep at least), which a plan never exceeds; and after a plan was declined, the
   * bytes reserved then (the next one is made once that changed, or 16 boundaries later) */
  int64_t reference;
  int64_t step_peak; /* the most bytes reserved seen in the current step (at its requests) */
  /* the engine's count of blocks handed out when the current step began, and when the step of
   * the plan waiting to be installed began: its install releases only the cache of segments
   * used since (what the plan replaces), not what other phases of the program cached */
  uint64_t step_since, next_since;
  /* steps found in the requests (no host marks): the recording of the step before, hashed; a
   * plan is made only from a step that repeats it exactly (a program's phases, such as the
   * evaluation between training steps, repeat stretches that are not its steps) */
  uint64_t prev_hash;
  int64_t declined_at;
  size_t declined_requests;
  int since_decline, decline_wait;
  /* this step */
  uint64_t requests, misses;
  int streak;
};

static c10c_memory_stats *stats_of(c10c__plan_state *ps) {
  return c10c__engine_device_stats(ps->engine, ps->device);
}

static c10c_status plan_state_new(c10c__plan_state **out, c10c__engine *engine, int device) {
  c10c__plan_state *ps = c10c__calloc(1, sizeof *ps);
  if (ps == NULL) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory for planning");
  ps->engine = engine;
  ps->backend = c10c__engine_backend(engine);
  ps->device = device;
  ps->hold = ps->backend->event_record != NULL && ps->backend->event_query != NULL &&
             ps->backend->event_destroy != NULL;
  ps->events = ps->hold && ps->backend->stream_wait != NULL;
  ps->generation = 1;
  *out = ps;
  return C10C_STATUS_OK;
}

/* ---- events ---- */

static void event_drop(c10c__plan_state *ps, void **event) {
  if (*event != NULL) ps->backend->event_destroy(ps->backend->self, *event);
  *event = NULL;
}

static void drop_boundary(c10c__plan_state *ps) {
  for (size_t i = 0; i < ps->nboundary; i++) event_drop(ps, &ps->boundary[i]);
  ps->nboundary = 0;
  ps->boundary_waited = 0;
}

static void drop_latest(c10c__plan_state *ps) {
  for (int s = 0; s < C10C__PLAN_MAX_STREAMS && ps->events; s++) event_drop(ps, &ps->latest[s]);
}

/* ---- the served plan's tables ---- */

static size_t hash_of(uint64_t key, size_t mask) {
  return (size_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> 17) & mask;
}

static uint32_t hash_find(const c10c__plan_state *ps, uint64_t offset) {
  if (ps->keys == NULL) return NONE;
  for (size_t i = hash_of(offset + 1, ps->hmask);; i = (i + 1) & ps->hmask) {
    if (ps->keys[i] == offset + 1) return ps->vals[i];
    if (ps->keys[i] == 0) return NONE;
  }
}

/* Frees the served plan's tables and the plan (no block may be live). */
static void retire_plan(c10c__plan_state *ps) {
  c10c__plan_destroy(ps->plan);
  ps->plan = NULL;
  c10c__free(ps->done);
  c10c__free(ps->slot);
  c10c__free(ps->keys);
  c10c__free(ps->vals);
  c10c__free(ps->live);
  ps->done = NULL, ps->slot = NULL, ps->keys = NULL, ps->vals = NULL, ps->live = NULL;
  ps->nslots = 0;
  ps->nfrees = 0;
  drop_latest(ps);
}

/* No arena any more (given back, or handed to the engine). */
static void forget_arena(c10c__plan_state *ps) {
  ps->arena = NULL;
  ps->arena_size = 0;
  stats_of(ps)->plan_arena_bytes = 0;
  drop_boundary(ps);
  ps->nused = 0;
  ps->has_arena_stream = false;
}

static void release_arena(c10c__plan_state *ps) {
  if (ps->arena == NULL) return;
  c10c__engine_arena_free(ps->engine, ps->device, ps->arena, ps->arena_size);
  forget_arena(ps);
}

static bool arena_idle(const c10c__plan_state *ps) { return ps->nlive == 0 && ps->pending == NULL; }

static bool sorted_live(const c10c__plan_state *ps, uint64_t **out, size_t *n);

/* The program left the step the plan was made for: an idle arena goes back (its bytes are
 * the engine's to map again, in the pool each request needs). False when blocks live in it. */
static bool leave_plan(c10c__plan_state *ps) {
  if (ps->arena == NULL || !arena_idle(ps)) return false;
  if (ps->plan != NULL) stats_of(ps)->plan_drops++;
  retire_plan(ps);
  release_arena(ps);
  ps->retiring = ps->blocked = false;
  return true;
}

/* The program left the step the plan was made for (its requests miss it, or a planned block
 * outlives the step): the arena, with the planned blocks still in it, becomes a segment of the
 * caching engine (c10c__engine_adopt), whose free bytes then serve what the program does
 * instead, as its own cache would (a plan never leaves bytes the engine cannot use). The plan
 * is gone; the next boundary plans again where that pays. False (nothing changes) when it
 * cannot be done: live blocks on several streams (a segment is one stream's), frees waiting
 * for events, a backend that cannot wait for the device's work, or no host memory. */
static bool hand_over(c10c__plan_state *ps) {
  if (ps->arena == NULL || ps->pending != NULL || ps->plan == NULL) return false;
  /* the arena's free bytes may still be in use by work on the streams that freed them, which
   * the plan would have made a later occupant's stream wait for and the engine's pool does not
   * know of: the device finishes its work first (a backend that cannot wait keeps the plan) */
  if (ps->events && ps->backend->synchronize == NULL) return false;
  uint64_t *order = NULL;
  size_t n = 0;
  if (!sorted_live(ps, &order, &n)) return false;
  c10c__adopted *blocks = c10c__malloc((n ? n : 1) * sizeof *blocks);
  bool ok = blocks != NULL;
  c10c_stream_id stream = ps->has_arena_stream ? ps->arena_stream : 0;
  for (size_t k = 0; ok && k < n; k++) {
    const live_block *l = &ps->live[order[2 * k + 1]];
    uint64_t block = ps->plan->block[l->entry];
    if (k == 0) stream = l->stream;
    ok = l->stream == stream;
    blocks[k] = (c10c__adopted){
        (size_t)order[2 * k],     (size_t)block, l->requested, l->uses, l->nuses, l->tag,
        block <= C10C__SMALL_SIZE};
  }
  if (ok && ps->events) ps->backend->synchronize(ps->backend->self, ps->device);
  ok = ok && c10c__engine_adopt(ps->engine, ps->device, ps->arena, ps->arena_size, stream, blocks,
                                n) == C10C_STATUS_OK;
  if (ok) {
    stats_of(ps)->plan_drops++;
    for (size_t i = 0; i < ps->nslots; i++) { /* theirs now, record_stream's streams too */
      ps->live[i].entry = NONE;
      ps->live[i].uses = NULL;
      ps->live[i].nuses = 0;
    }
    ps->nlive = 0;
    retire_plan(ps);
    forget_arena(ps);
    ps->retiring = ps->blocked = false;
  }
  c10c__free(blocks);
  c10c__free(order);
  return ok;
}

/* Resets the serving state for a new pass over the plan. */
static void restart(c10c__plan_state *ps) {
  ps->cursor = 0;
  ps->prefix = 0;
  if (ps->nfrees > 0) memset(ps->done, 0, ps->nfrees);
  ps->bound = 0;
  ps->used_mask = 0;
  ps->boundary_waited = 0;
}

/* Tables for plan: a slot per distinct offset and the hash from offsets to slots. False
 * without host memory. */
static bool build_tables(c10c__plan_state *ps, const c10c__plan *plan) {
  size_t frees = 0;
  for (size_t j = 0; j < plan->count; j++) frees += plan->free_rank[j] != NONE;
  size_t cap = 16;
  while (cap < 2 * plan->planned + 2) cap *= 2;
  ps->done = c10c__calloc(frees ? frees : 1, 1);
  ps->slot = c10c__malloc((plan->count ? plan->count : 1) * sizeof *ps->slot);
  ps->keys = c10c__calloc(cap, sizeof *ps->keys);
  ps->vals = c10c__malloc(cap * sizeof *ps->vals);
  if (ps->done == NULL || ps->slot == NULL || ps->keys == NULL || ps->vals == NULL) return false;
  ps->hmask = cap - 1;
  ps->nfrees = (uint32_t)frees;
  size_t slots = 0;
  for (size_t j = 0; j < plan->count; j++) {
    ps->slot[j] = NONE;
    if (plan->offsets[j] == C10C__PLAN_UNPLANNED) continue;
    uint64_t key = plan->offsets[j] + 1;
    size_t i = hash_of(key, ps->hmask);
    while (ps->keys[i] != 0 && ps->keys[i] != key) i = (i + 1) & ps->hmask;
    if (ps->keys[i] == 0) ps->keys[i] = key, ps->vals[i] = (uint32_t)slots++;
    ps->slot[j] = ps->vals[i];
  }
  ps->live = c10c__calloc(slots ? slots : 1, sizeof *ps->live);
  if (ps->live == NULL) return false;
  for (size_t i = 0; i < slots; i++) ps->live[i].entry = NONE;
  ps->nslots = slots;
  return true;
}

/* Serves plan from now on: its tables, and an arena large enough (the engine's cache released
 * first). The arena must be idle. False (the plan dropped, plan_drops counted) without host or
 * device memory for it. */
static bool install(c10c__plan_state *ps, c10c__plan *plan, bool from_file) {
  c10c_memory_stats *s = stats_of(ps);
  retire_plan(ps);
  /* what the recorded step cached goes back (a file's plan: all of the cache; a step found in
   * the requests keeps it: plan_pays) */
  if (from_file || ps->host_marks)
    c10c__engine_release_cache(ps->engine, ps->device, from_file ? 0 : ps->next_since);
  bool ok = build_tables(ps, plan);
  /* the arena the plan needs, no more (a plan rebuilt from a smaller step gives bytes back) */
  if (ok && plan->arena > 0 && (ps->arena == NULL || ps->arena_size != plan->arena)) {
    release_arena(ps);
    void *arena = NULL;
    ok = plan->arena <= SIZE_MAX &&
         c10c__engine_arena_malloc(ps->engine, ps->device, (size_t)plan->arena, &arena) ==
             C10C_STATUS_OK;
    if (ok) ps->arena = arena, ps->arena_size = (size_t)plan->arena;
  }
  ps->plan = plan;
  if (!ok) {
    retire_plan(ps);
    release_arena(ps);
    s->plan_drops++;
    return false;
  }
  s->plan_arena_bytes = (int64_t)ps->arena_size;
  s->plan_rebuilds++;
  ps->from_file = from_file;
  ps->blocked = ps->retiring = false;
  restart(ps);
  return true;
}

static bool record_boundary(c10c__plan_state *ps);

/* Whether the arena may be handed to the next step or plan: idle, and the streams that used it
 * since the last boundary have events recorded for the next ones to wait for. */
static bool arena_ready(c10c__plan_state *ps) {
  if (!arena_idle(ps)) return false;
  return !ps->events || ps->nused == 0 || record_boundary(ps);
}

/* Stops serving the plan: it goes (and its arena, unless keep_arena or a plan waits) now if no
 * block lives in the arena, else once the last one is freed. */
static void retire_when_idle(c10c__plan_state *ps, bool keep_arena) {
  if (ps->plan == NULL) return;
  if (!arena_idle(ps)) {
    ps->retiring = ps->blocked = true;
    return;
  }
  retire_plan(ps);
  ps->retiring = false;
  if (ps->next == NULL && !keep_arena) release_arena(ps);
}

/* Installs the waiting plan once the arena is ready. */
static void install_next(c10c__plan_state *ps) {
  if (ps->next == NULL || !arena_ready(ps)) return;
  c10c__plan *plan = ps->next;
  bool from_file = ps->next_from_file;
  ps->next = NULL;
  install(ps, plan, from_file);
}

static void plan_configure(c10c__plan_state *ps, bool planning, c10c__plan *file) {
  bool was = ps->planning;
  ps->planning = planning;
  if (planning && !was) ps->stopped = false;
  if (planning && !ps->host_marks && ps->detector == NULL &&
      c10c__step_detector_new(&ps->detector) != C10C_STATUS_OK)
    ps->detector = NULL; /* steps then come from the host only */
  if (!planning && ps->detector != NULL) c10c__step_detector_reset(ps->detector);
  if (!planning) { /* the recording stops; an online plan stops being served */
    c10c__free(ps->rec);
    ps->rec = NULL;
    ps->nrec = ps->caprec = 0;
    c10c__free(ps->earlier);
    ps->earlier = NULL;
    ps->nearlier = ps->capearlier = 0;
    /* blocks recorded so far must not mark a later recording's requests */
    ps->generation = ps->generation == UINT32_MAX ? 1 : ps->generation + 1;
    if (ps->next != NULL && !ps->next_from_file) {
      c10c__plan_destroy(ps->next);
      ps->next = NULL;
    }
  }
  if (file != NULL) {
    c10c__plan_destroy(ps->next);
    ps->next = file;
    ps->next_from_file = true;
  }
  /* a plan goes on only while planning stays on (settings replace earlier ones) */
  if (!(planning && file == NULL)) retire_when_idle(ps, false);
  install_next(ps);
}

static void plan_state_destroy(c10c__plan_state *ps) {
  if (ps == NULL) return;
  c10c__step_detector_destroy(ps->detector);
  while (ps->pending != NULL) {
    pending_free *p = ps->pending;
    ps->pending = p->next;
    for (size_t i = 0; i < p->nevents; i++) event_drop(ps, &p->events[i]);
    c10c__free(p->events);
    c10c__free(p);
  }
  for (size_t i = 0; i < ps->nslots; i++) c10c__free(ps->live[i].uses);
  c10c_memory_stats *s = stats_of(ps);
  if (ps->plan != NULL) /* live planned blocks go with the arena */
    for (size_t i = 0; i < ps->nslots; i++) {
      live_block *l = &ps->live[i];
      if (l->entry == NONE) continue;
      uint64_t block = ps->plan->block[l->entry];
      bool small = block <= C10C__SMALL_SIZE;
      c10c__stat_pool_update(s->allocation, small, -1);
      c10c__stat_pool_update(s->active, small, -1);
      c10c__stat_pool_update(s->allocated_bytes, small, -(int64_t)block);
      c10c__stat_pool_update(s->active_bytes, small, -(int64_t)block);
      c10c__stat_pool_update(s->requested_bytes, small, -(int64_t)l->requested);
    }
  retire_plan(ps);
  release_arena(ps);
  c10c__plan_destroy(ps->next);
  c10c__free(ps->rec);
  c10c__free(ps->earlier);
  c10c__free(ps);
}

/* ---- recording ---- */

static uint32_t record_stream_of(c10c__plan_state *ps, c10c_stream_id stream) {
  for (uint32_t i = 0; i < ps->rec_nstreams; i++)
    if (ps->rec_streams[i] == stream) return i;
  if (ps->rec_nstreams == C10C__PLAN_MAX_STREAMS) return NONE;
  ps->rec_streams[ps->rec_nstreams] = stream;
  return ps->rec_nstreams++;
}

static uint64_t record_alloc(c10c__plan_state *ps, size_t size, c10c_stream_id stream) {
  if (ps->overflow) return 0;
  if (ps->nrec == ps->caprec) {
    c10c__plan_request *grown =
        ps->nrec < RECORD_MAX ? c10c__grow(ps->rec, &ps->caprec, ps->nrec, sizeof *grown, 1024)
                              : NULL;
    if (grown == NULL) { /* the step goes unrecorded from here on */
      ps->overflow = true;
      return 0;
    }
    ps->rec = grown;
  }
  uint32_t s = record_stream_of(ps, stream);
  ps->rec[ps->nrec] = (c10c__plan_request){.size = size,
                                           .alloc = ps->clock++,
                                           .free = C10C__PLAN_NEVER,
                                           .stream = s == NONE ? C10C__PLAN_MAX_STREAMS : s,
                                           .skip = s == NONE};
  return ((uint64_t)ps->generation << 32) | (uint64_t)++ps->nrec;
}

static void plan_unrecord(c10c__plan_state *ps, uint64_t tag) {
  if (tag != 0 && (uint32_t)(tag >> 32) == ps->generation && (tag & 0xffffffffu) == ps->nrec)
    ps->nrec--;
}

static void plan_note_reserved(c10c__plan_state *ps) {
  int64_t reserved = stats_of(ps)->reserved_bytes[C10C_STAT_ALL].current;
  if (reserved > ps->step_peak) ps->step_peak = reserved;
}

static void plan_record_free(c10c__plan_state *ps, uint64_t tag, uint64_t requested,
                             c10c_stream_id stream) {
  plan_note_reserved(ps); /* what the request before reserved */
  if (tag != 0 && (uint32_t)(tag >> 32) == ps->generation) {
    size_t i = (size_t)(tag & 0xffffffffu) - 1;
    if (i < ps->nrec) ps->rec[i].free = ps->clock++;
    return;
  }
  /* an earlier step's block (or one from before the recording): its room, for the estimate */
  if (!ps->planning || ps->overflow) return;
  if (ps->nearlier == ps->capearlier) {
    earlier_free *grown = ps->nearlier < RECORD_MAX ? c10c__grow(ps->earlier, &ps->capearlier,
                                                                 ps->nearlier, sizeof *grown, 256)
                                                    : NULL;
    if (grown == NULL) { /* the step goes unrecorded from here on */
      ps->overflow = true;
      return;
    }
    ps->earlier = grown;
  }
  ps->earlier[ps->nearlier++] = (earlier_free){ps->clock++, c10c__plan_block(requested), stream};
}

/* ---- serving ---- */

/* Whether the runtime stream is (or now becomes) plan stream s. */
/* Whether plan stream s is the runtime stream, or is bound to none yet while the runtime stream
 * is bound to no other plan stream. */
static bool stream_fits(const c10c__plan_state *ps, uint32_t s, c10c_stream_id stream) {
  if (ps->bound >> s & 1) return ps->bind[s] == stream;
  for (uint64_t b = ps->bound; b != 0; b &= b - 1)
    if (ps->bind[__builtin_ctzll(b)] == stream) return false;
  return true;
}

static bool bind_stream(c10c__plan_state *ps, uint32_t s, c10c_stream_id stream) {
  if (!stream_fits(ps, s, stream)) return false;
  ps->bind[s] = stream;
  ps->bound |= (uint64_t)1 << s;
  return true;
}

/* Whether a request of size bytes on stream matches plan entry j: the same block, and the
 * entry's plan stream bound to stream or to none yet while stream is bound to no other. */
static bool matches(const c10c__plan_state *ps, const c10c__plan *plan, size_t j, size_t size,
                    c10c_stream_id stream) {
  if (c10c__plan_block(size) != plan->block[j]) return false;
  uint32_t s = plan->requests[j].stream;
  return s >= C10C__PLAN_MAX_STREAMS || stream_fits(ps, s, stream);
}

static void mark_done(c10c__plan_state *ps, uint32_t rank) {
  if (rank == NONE) return;
  ps->done[rank] = 1;
  while (ps->prefix < ps->nfrees && ps->done[ps->prefix]) ps->prefix++;
}

/* Planned frees whose record_stream events have all completed are done. */
static void poll_pending(c10c__plan_state *ps) {
  for (pending_free **link = &ps->pending; *link != NULL;) {
    pending_free *p = *link;
    bool all = true;
    for (size_t i = 0; i < p->nevents && all; i++) {
      bool done = false;
      if (ps->backend->event_query(ps->backend->self, p->events[i], &done) != C10C_STATUS_OK)
        done = false;
      all = done;
    }
    if (!all) {
      link = &p->next;
      continue;
    }
    *link = p->next;
    for (size_t i = 0; i < p->nevents; i++) event_drop(ps, &p->events[i]);
    if (ps->plan != NULL && !ps->blocked) mark_done(ps, p->rank);
    plan_record_free(ps, p->tag, p->bytes, p->stream); /* its bytes are free from now */
    c10c__free(p->events);
    c10c__free(p);
  }
}

/* Makes stream wait for what the plan says may still use request j's bytes: the last cross
 * free on each stream of waits[j], and the streams of the previous step. False when a wait
 * could not be made. */
/* Whether every earlier occupant of entry j's bytes has been freed (and its other streams are
 * done with it): all planned frees of rank < need[j] done, or, when a few are not (a block held
 * for record_stream's events, one freed later than planned), none of those few overlaps j. */
static bool bytes_free(c10c__plan_state *ps, size_t j) {
  const c10c__plan *plan = ps->plan;
  uint32_t need = plan->need[j];
  if (need <= ps->prefix) return true;
  if (ps->pending != NULL) poll_pending(ps);
  if (need <= ps->prefix) return true;
  if (need - ps->prefix > SCAN_MAX) return false;
  uint64_t lo = plan->offsets[j], hi = lo + plan->block[j];
  for (uint32_t r = ps->prefix; r < need; r++) {
    if (ps->done[r]) continue;
    uint32_t i = plan->by_free[r];
    if (plan->offsets[i] < hi && lo < plan->offsets[i] + plan->block[i]) return false;
  }
  return true;
}

static bool order_streams(c10c__plan_state *ps, size_t j, uint32_t s, c10c_stream_id stream) {
  const c10c__segment_backend *b = ps->backend;
  for (uint64_t w = ps->plan->waits[j]; w != 0; w &= w - 1) {
    int t = __builtin_ctzll(w);
    if (ps->latest[t] != NULL &&
        b->stream_wait(b->self, ps->device, stream, ps->latest[t]) != C10C_STATUS_OK)
      return false;
  }
  if (ps->nboundary > 0 && !(ps->boundary_waited >> s & 1)) {
    for (size_t i = 0; i < ps->nboundary; i++)
      if (ps->boundary_stream[i] != stream &&
          b->stream_wait(b->self, ps->device, stream, ps->boundary[i]) != C10C_STATUS_OK)
        return false;
    ps->boundary_waited |= (uint64_t)1 << s;
  }
  return true;
}

static bool plan_malloc(c10c__plan_state *ps, size_t size, c10c_stream_id stream, void **out,
                        uint64_t *tag) {
  if (ps->detector != NULL && ps->planning &&
      c10c__step_detector_feed(ps->detector, c10c__step_signature(c10c__plan_block(size), stream),
                               (uint64_t)stats_of(ps)->allocation[C10C_STAT_ALL].current))
    (void)plan_step(ps); /* a step begins with this request (a failure: the next tries) */
  if (ps->pending != NULL) poll_pending(ps); /* frees held for other streams' work */
  plan_note_reserved(ps);                    /* what the request before reserved */
  *tag = ps->planning ? record_alloc(ps, size, stream) : 0;
  if (ps->next != NULL && ps->next_from_file) install_next(ps); /* a file: from the next request */
  c10c__plan *plan = ps->plan;
  if (plan == NULL) return false;
  c10c_memory_stats *s = stats_of(ps);
  ps->requests++;
  if (ps->blocked || ps->cursor >= plan->count) {
    ps->misses += !ps->blocked;
    s->plan_fallbacks++;
    return false;
  }
  size_t j = ps->cursor;
  if (!matches(ps, plan, j, size, stream)) {
    /* a request the plan does not have here: one the program skipped, or an extra one. The
     * entries up to a match a few places on were skipped (their bytes are never taken); with
     * none, the request is an extra one and the cursor stays. */
    size_t k = j + 1, end = plan->count - j > LOOKAHEAD ? j + LOOKAHEAD + 1 : plan->count;
    while (k < end && !matches(ps, plan, k, size, stream)) k++;
    ps->misses++;
    if (k == end) {
      s->plan_fallbacks++;
      /* the program left the step it was planned for (another phase of it): the arena goes
       * back now (or, holding planned blocks still, to the engine), so that serving that
       * phase has its bytes, and the next boundary plans again (or not) */
      if (!ps->from_file && ps->misses >= MISS_MIN &&
          ps->misses * 100 > ps->requests * MISS_PERCENT && !leave_plan(ps))
        (void)hand_over(ps);
      return false;
    }
    for (; j < k; j++)
      if (plan->offsets[j] != C10C__PLAN_UNPLANNED) mark_done(ps, plan->free_rank[j]);
    ps->cursor = j;
  }
  uint32_t ps_stream = plan->requests[j].stream;
  /* (a request on a stream past the plan's streams is the engine's: its size says enough) */
  if (ps_stream < C10C__PLAN_MAX_STREAMS) (void)bind_stream(ps, ps_stream, stream);
  ps->cursor++;
  if (plan->offsets[j] == C10C__PLAN_UNPLANNED) { /* the engine's by plan: not a miss */
    s->plan_fallbacks++;
    return false;
  }
  if (!bytes_free(ps, j) || (ps->events && !order_streams(ps, j, ps_stream, stream)) ||
      (!ps->events && ps->has_arena_stream && ps->arena_stream != stream)) {
    mark_done(ps, plan->free_rank[j]); /* it never occupies its bytes */
    ps->misses++;
    s->plan_fallbacks++;
    return false;
  }
  live_block *l = &ps->live[ps->slot[j]];
  *l = (live_block){.entry = (uint32_t)j, .stream = stream, .requested = size, .tag = *tag};
  *tag = 0;
  ps->nlive++;
  ps->has_arena_stream = true;
  ps->arena_stream = stream;
  uint64_t block = plan->block[j];
  bool small = block <= C10C__SMALL_SIZE;
  c10c__stat_pool_update(s->allocation, small, 1);
  c10c__stat_pool_update(s->active, small, 1);
  c10c__stat_pool_update(s->allocated_bytes, small, (int64_t)block);
  c10c__stat_pool_update(s->active_bytes, small, (int64_t)block);
  c10c__stat_pool_update(s->requested_bytes, small, (int64_t)size);
  s->plan_served++;
  if (!(ps->used_mask >> ps_stream & 1)) { /* for the boundary's events */
    ps->used_mask |= (uint64_t)1 << ps_stream;
    bool known = false;
    for (size_t i = 0; i < ps->nused && !known; i++) known = ps->used[i] == stream;
    if (!known && ps->nused < C10C__PLAN_MAX_STREAMS) ps->used[ps->nused++] = stream;
  }
  *out = ps->arena + plan->offsets[j];
  c10c__engine_trace_block(ps->engine, ps->device, true, *out, size, stream);
  return true;
}

static bool plan_make_room(c10c__plan_state *ps, size_t bytes) {
  if (ps->plan == NULL || ps->from_file || !ps->planning || ps->retiring || ps->reference <= 0 ||
      ps->arena == NULL)
    return false;
  int64_t reserved = stats_of(ps)->reserved_bytes[C10C_STAT_ALL].current;
  if ((uint64_t)reserved + bytes <= (uint64_t)ps->reference) return false;
  /* the engine would take the device past what it reserves without a plan: the plan goes, and
   * its arena with it (back to the device, or to the engine when blocks live in it) */
  if (leave_plan(ps)) return false;
  return hand_over(ps);
}

static bool plan_holds(const c10c__plan_state *ps, const void *ptr) {
  return ps->arena != NULL && (const char *)ptr >= ps->arena &&
         (const char *)ptr < ps->arena + ps->arena_size;
}

static live_block *live_at(const c10c__plan_state *ps, const void *ptr) {
  if (ps->plan == NULL || !plan_holds(ps, ptr)) return NULL;
  uint32_t id = hash_find(ps, (uint64_t)((const char *)ptr - ps->arena));
  return id == NONE || ps->live[id].entry == NONE ? NULL : &ps->live[id];
}

/* Records events on the streams the block was used on: its free rank is done once they
 * complete. False when one cannot be recorded (the device is synchronized instead, or the
 * bytes stay taken for the rest of the plan). */
static void hold_for_uses(c10c__plan_state *ps, live_block *l, uint32_t rank) {
  const c10c__segment_backend *b = ps->backend;
  pending_free *p = c10c__calloc(1, sizeof *p);
  void **events = p ? c10c__calloc(l->nuses, sizeof *events) : NULL;
  bool ok = events != NULL;
  for (size_t i = 0; ok && i < l->nuses; i++)
    ok = b->event_record(b->self, ps->device, l->uses[i], &events[i]) == C10C_STATUS_OK;
  if (ok) {
    *p = (pending_free){rank,   l->tag,     ps->plan->block[l->entry], l->stream, l->nuses,
                        events, ps->pending};
    ps->pending = p;
    return;
  }
  for (size_t i = 0; events != NULL && i < l->nuses; i++)
    if (events[i] != NULL) event_drop(ps, &events[i]);
  c10c__free(events);
  c10c__free(p);
  if (b->synchronize != NULL) { /* the safe side: every use is over */
    b->synchronize(b->self, ps->device);
    mark_done(ps, rank);
  }
  plan_record_free(ps, l->tag, ps->plan->block[l->entry], l->stream);
}

static c10c_status plan_free(c10c__plan_state *ps, void *ptr) {
  live_block *l = live_at(ps, ptr);
  if (l == NULL)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "free of %p, which the caching allocator did not allocate (or already "
                      "freed)",
                      ptr);
  const c10c__plan *plan = ps->plan;
  size_t j = l->entry;
  uint64_t block = plan->block[j];
  bool small = block <= C10C__SMALL_SIZE;
  c10c_memory_stats *s = stats_of(ps);
  c10c__stat_pool_update(s->allocation, small, -1);
  c10c__stat_pool_update(s->active, small, -1);
  c10c__stat_pool_update(s->allocated_bytes, small, -(int64_t)block);
  c10c__stat_pool_update(s->active_bytes, small, -(int64_t)block);
  c10c__stat_pool_update(s->requested_bytes, small, -(int64_t)l->requested);
  c10c__engine_trace_block(ps->engine, ps->device, false, ptr, l->requested, l->stream);
  uint32_t rank = plan->free_rank[j];
  if (ps->events && plan->cross[j]) { /* a later occupant on another stream waits for it */
    uint32_t t = plan->requests[j].stream;
    void *event = NULL;
    if (ps->backend->event_record(ps->backend->self, ps->device, l->stream, &event) ==
        C10C_STATUS_OK) {
      event_drop(ps, &ps->latest[t]);
      ps->latest[t] = event;
    } else {
      rank = NONE; /* no safe way to hand its bytes on in this pass */
    }
  }
  if (l->nuses > 0 && ps->hold && rank != NONE) {
    hold_for_uses(ps, l, rank); /* notes the recording's free when its uses are over */
  } else {
    /* a block used on other streams (record_stream) whose free has no rank in this pass, or
     * with no events to hold it by: a later pass may hand its bytes on knowing nothing of
     * those streams, so the device finishes their work first (the fuzzer found the bytes given
     * to stream 0 while stream 3 still used them, after a plan file was loaded again) */
    if (l->nuses > 0 && ps->backend->synchronize != NULL)
      ps->backend->synchronize(ps->backend->self, ps->device);
    plan_record_free(ps, l->tag, block, l->stream);
    if (!ps->blocked) mark_done(ps, rank);
  }
  c10c__free(l->uses);
  l->uses = NULL;
  l->nuses = 0;
  l->entry = NONE;
  ps->nlive--;
  if (ps->retiring && arena_idle(ps)) retire_when_idle(ps, false);
  return C10C_STATUS_OK;
}

static bool plan_release_idle(c10c__plan_state *ps) {
  if (ps->arena == NULL || !arena_idle(ps)) return false;
  if (ps->plan != NULL) stats_of(ps)->plan_drops++;
  retire_plan(ps);
  ps->retiring = false;
  release_arena(ps);
  return true;
}

static c10c_status plan_record_stream(c10c__plan_state *ps, void *ptr, c10c_stream_id stream) {
  live_block *l = live_at(ps, ptr);
  if (l == NULL)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "record_stream of %p, which the caching allocator did not allocate", ptr);
  if (stream == l->stream) return C10C_STATUS_OK;
  for (size_t i = 0; i < l->nuses; i++)
    if (l->uses[i] == stream) return C10C_STATUS_OK;
  c10c_stream_id *grown = c10c__malloc((l->nuses + 1) * sizeof *grown);
  if (grown == NULL)
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory recording a stream use");
  if (l->nuses) memcpy(grown, l->uses, l->nuses * sizeof *grown);
  grown[l->nuses++] = stream;
  c10c__free(l->uses);
  l->uses = grown;
  return C10C_STATUS_OK;
}

static c10c_status plan_share(c10c__plan_state *ps, const void *ptr, c10c__block_share *out) {
  live_block *l = live_at(ps, ptr);
  if (l == NULL)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "%p is not memory the CUDA caching allocator allocated", ptr);
  *out = (c10c__block_share){.base = ps->arena,
                             .size = ps->arena_size,
                             .offset = (size_t)((const char *)ptr - ps->arena),
                             .block_size = (size_t)ps->plan->block[l->entry],
                             .device = ps->device,
                             .expandable = false};
  return C10C_STATUS_OK;
}

/* ---- step boundaries ---- */

/* Events on the streams of the step that ended, for the next step's streams to wait for
 * before they reuse the arena. False when one cannot be recorded. */
static bool record_boundary(c10c__plan_state *ps) {
  drop_boundary(ps);
  drop_latest(ps); /* the boundary events come after them in their streams */
  for (size_t i = 0; i < ps->nused; i++) {
    c10c_stream_id stream = ps->used[i];
    void *event = NULL;
    if (ps->backend->event_record(ps->backend->self, ps->device, stream, &event) != C10C_STATUS_OK)
      return false;
    ps->boundary[ps->nboundary] = event;
    ps->boundary_stream[ps->nboundary++] = stream;
  }
  ps->nused = 0;
  return true;
}

/* Free ranges of the engine in a step a plan serves, ordered by (pool, stream, size): what the
 * requests the plan leaves to the engine may be placed in (a small model of its best fit). */
typedef struct hole {
  uint64_t size;
  c10c_stream_id stream;
  bool small;
} hole;

typedef struct holes {
  hole *h;
  size_t n, cap;
  bool failed; /* without host memory */
} holes;

static int hole_cmp(const hole *a, const hole *b) {
  if (a->small != b->small) return a->small ? -1 : 1;
  if (a->stream != b->stream) return a->stream < b->stream ? -1 : 1;
  return a->size < b->size ? -1 : a->size > b->size;
}

/* The first hole at or after key in order. */
static size_t hole_lower(const holes *hs, const hole *key) {
  size_t lo = 0, hi = hs->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (hole_cmp(&hs->h[mid], key) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static void hole_add(holes *hs, hole x) {
  if (hs->failed || x.size < C10C__MIN_BLOCK) return;
  if (hs->n == hs->cap) {
    hole *grown = c10c__grow(hs->h, &hs->cap, hs->n, sizeof *grown, 256);
    if (grown == NULL) {
      hs->failed = true;
      return;
    }
    hs->h = grown;
  }
  size_t at = hole_lower(hs, &x);
  memmove(hs->h + at + 1, hs->h + at, (hs->n - at) * sizeof *hs->h);
  hs->h[at] = x;
  hs->n++;
}

static void visit_hole(void *ctx, size_t size, c10c_stream_id stream, bool small) {
  hole_add(ctx, (hole){size, stream, small});
}

/* What the caching engine may add, in a step served from a plan of the recorded one, for the
 * requests the plan leaves to it (the blocks the step leaves alive: gradients freed at the next
 * zero_grad, an optimizer's new state), modelled on its best fit: in time order, each takes the
 * smallest fitting free range of its stream and pool among those the engine keeps once its
 * cache is released (c10c__engine_holes) and the blocks of earlier steps freed in the step
 * before it, its rest staying free where PyTorch splits; else it costs a new segment (PyTorch's
 * segment sizes) or, with expandable segments, the pages it needs. An estimate, which the next
 * boundary checks (c10c__plan_step). UINT64_MAX without host memory. */
static uint64_t engine_growth(const c10c__plan_state *ps) {
  holes hs = {0};
  c10c__engine_holes(ps->engine, ps->device, visit_hole, &hs);
  bool expandable = c10c__engine_expandable(ps->engine);
  uint64_t growth = 0;
  size_t k = 0; /* the earlier frees (in time order) before the current request */
  for (size_t i = 0; i < ps->nrec && !hs.failed; i++) {
    const c10c__plan_request *r = &ps->rec[i];
    for (; k < ps->nearlier && ps->earlier[k].time < r->alloc; k++) {
      const earlier_free *f = &ps->earlier[k];
      hole_add(&hs, (hole){f->bytes, f->stream, f->bytes <= C10C__SMALL_SIZE});
    }
    if (r->free != C10C__PLAN_NEVER || r->size == 0) continue; /* the plan's */
    uint64_t bytes = c10c__plan_block(r->size);
    bool small = bytes <= C10C__SMALL_SIZE;
    c10c_stream_id stream = r->stream < C10C__PLAN_MAX_STREAMS ? ps->rec_streams[r->stream] : 0;
    hole key = {bytes, stream, small};
    size_t at = hole_lower(&hs, &key);
    uint64_t room = 0;
    if (at < hs.n && hs.h[at].small == small && hs.h[at].stream == stream) { /* best fit */
      room = hs.h[at].size;
      memmove(hs.h + at, hs.h + at + 1, (hs.n - at - 1) * sizeof *hs.h);
      hs.n--;
    } else { /* a new segment, or pages */
      uint64_t unit = small ? C10C__SMALL_BUFFER : C10C__LARGE_BUFFER;
      room = expandable || small ? (bytes + unit - 1) / unit * unit
                                 : (uint64_t)c10c__engine_segment_size((size_t)bytes);
      growth = growth > UINT64_MAX - room ? UINT64_MAX : growth + room;
    }
    /* the rest stays free where PyTorch splits (small blocks and expandable segments: any 512
     * bytes; large ones: more than 1 MiB) */
    uint64_t rest = room - bytes;
    if (small || expandable ? rest >= C10C__MIN_BLOCK : rest > C10C__SMALL_SIZE)
      hole_add(&hs, (hole){rest, stream, small});
  }
  c10c__free(hs.h);
  return hs.failed ? UINT64_MAX : growth;
}

/* Whether serving plan (made from the recorded step) keeps the bytes reserved at or below the
 * reference: what stays reserved once the cache the recorded step used (and an idle arena) is
 * released, plus the plan's arena, plus what the engine may add (engine_growth). The reference,
 * before any plan is served, is the most the recorded step reserved (the caching engine
 * reserves as much again in a step that repeats it, since it gives bytes back only at
 * empty_cache); after, that of the step recorded when planning began to serve. The install
 * gives that cache back with host marks (a step the host marks is the program's: what it
 * cached is what the plan replaces); for a step found in the requests it keeps it, and the
 * plan must fit beside it: such a program's other phases (evaluation, a last partial step) use
 * that cache again, and an engine that has to grow it anew ends above the one that kept it
 * (measured on published snapshots, bench/check_snapshots.py). */
static bool plan_pays(c10c__plan_state *ps, const c10c__plan *plan) {
  int64_t reserved = stats_of(ps)->reserved_bytes[C10C_STAT_ALL].current;
  int64_t peak = ps->step_peak > reserved ? ps->step_peak : reserved;
  uint64_t arena = ps->arena != NULL && arena_idle(ps) ? ps->arena_size : 0;
  uint64_t growth = engine_growth(ps);
  int64_t reference = ps->reference > 0 ? ps->reference : peak;
  uint64_t held = reserved > 0 && (uint64_t)reserved > arena ? (uint64_t)reserved - arena : 0;
  if (growth == UINT64_MAX || plan->arena > UINT64_MAX - held - growth || reference <= 0)
    return false;
  /* with all of that cache still held, and a margin for the estimate of growth: a plan that
   * gains less is not worth the risk of the engine growing past the reference (1/512 of it for
   * the host's steps, none where the engine adds nothing; 1/64 for steps found in the requests,
   * where a miss costs more). A plan that reserves as much as the engine is served: it serves
   * each request in fewer instructions (bench/bench_engine). */
  uint64_t margin = !ps->host_marks ? (uint64_t)reference / 64
                    : growth > 0    ? (uint64_t)reference / 512
                                    : 0;
  if (ps->arena != NULL) margin = 0; /* a plan replacing a plan: no worse than the one before */
  uint64_t predicted = held + plan->arena + growth + margin;
  uint64_t need = predicted > (uint64_t)reference ? predicted - (uint64_t)reference : 0;
  return ps->host_marks ? need <= c10c__engine_releasable(ps->engine, ps->device, ps->step_since)
                        : need == 0;
}

/* A plan of the recorded step's requests allocated and freed within it; NULL when it has none
 * (or on an error, in *st). */
static c10c__plan *plan_recording(c10c__plan_state *ps, c10c_status *st) {
  *st = C10C_STATUS_OK;
  if (ps->overflow || ps->nrec == 0) return NULL;
  size_t plannable = 0;
  for (size_t i = 0; i < ps->nrec; i++) {
    if (ps->rec[i].free == C10C__PLAN_NEVER) ps->rec[i].skip = true;
    plannable += !ps->rec[i].skip;
  }
  if (plannable == 0) return NULL;
  c10c__plan *plan = NULL;
  *st = c10c__plan_compute(&plan, ps->rec, ps->nrec, ps->device);
  if (*st == C10C_STATUS_OK && plan->planned == 0) {
    c10c__plan_destroy(plan);
    plan = NULL;
  }
  return *st == C10C_STATUS_OK ? plan : NULL;
}

/* The recording hashed (FNV-1a over each request's block, stream and times). */
static uint64_t recording_hash(const c10c__plan_state *ps) {
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (size_t i = 0; i < ps->nrec; i++) {
    const c10c__plan_request *r = &ps->rec[i];
    uint64_t words[4] = {c10c__plan_block(r->size), r->stream, r->alloc, r->free};
    for (int w = 0; w < 4; w++) h = (h ^ words[w]) * UINT64_C(0x100000001b3);
  }
  return ps->overflow ? 0 : h ^ ps->nrec;
}

/* Starts the next step's recording. */
static void next_recording(c10c__plan_state *ps) {
  ps->step_peak = stats_of(ps)->reserved_bytes[C10C_STAT_ALL].current;
  ps->step_since = c10c__engine_handed(ps->engine, ps->device);
  ps->nrec = 0;
  ps->nearlier = 0;
  ps->clock = 0;
  ps->overflow = false;
  ps->rec_nstreams = 0;
  ps->generation = ps->generation == UINT32_MAX ? 1 : ps->generation + 1;
}

static c10c_status plan_host_step(c10c__plan_state *ps) {
  if (!ps->host_marks) { /* the host's marks replace the ones found */
    ps->host_marks = true;
    ps->declined_at = 0; /* the host's steps may be planned where the ones found were not */
    c10c__step_detector_destroy(ps->detector);
    ps->detector = NULL;
  }
  return plan_step(ps);
}

static c10c_status plan_step(c10c__plan_state *ps) {
  c10c_status st = C10C_STATUS_OK;
  char failure[256] = "";
  bool served_step = ps->plan != NULL && !ps->blocked;
  bool missed = served_step && ps->misses * 100 > ps->requests * MISS_PERCENT;
  if (ps->pending != NULL) poll_pending(ps);
  if (ps->retiring) {
    retire_when_idle(ps, false);
    served_step = missed = false;
  }
  if (ps->plan != NULL && ps->from_file && !ps->retiring) {
    /* a file's plan is one sequence: it goes on across boundaries until it runs out */
    if (ps->cursor >= ps->plan->count) {
      retire_when_idle(ps, ps->planning);
    } else {
      missed = false;
      served_step = false;
    }
  }
  plan_note_reserved(ps);
  /* a planned block outlives the step: the program did not do what the plan was made for (a
   * block the step left alive is left to the engine by the plan), and the arena goes to the
   * engine with it rather than sit half used while the engine serves the next step */
  if (ps->plan != NULL && !ps->from_file && !ps->retiring && !arena_idle(ps) && hand_over(ps))
    served_step = missed = false;
  bool online = ps->plan != NULL && !ps->from_file && ps->planning && !ps->retiring;
  /* a step served as planned that reserved more than the caching engine would have: planning
   * stops (the estimate of plan_pays was wrong for this program; a step that missed its plan
   * is rebuilt instead, or drops planning after a few; a step the engine served because a
   * planned block outlived the boundary counts as neither) */
  bool over =
      online && served_step && !missed && ps->reference > 0 && ps->step_peak > ps->reference;
  /* after a plan was declined, the next is made once a step's peak or number of requests
   * differs (or a while later): the same step gives the same answer */
  bool retry = ps->declined_at == 0 || ps->step_peak != ps->declined_at ||
               ps->nrec != ps->declined_requests || ++ps->since_decline >= ps->decline_wait;
  if (!ps->host_marks) { /* a step found in the requests: planned once it repeats exactly */
    uint64_t hash = recording_hash(ps);
    retry = retry && hash == ps->prev_hash && hash != 0;
    ps->prev_hash = hash;
  }
  c10c__plan *made = NULL;
  if (ps->planning && !ps->stopped && !over && ps->next == NULL && retry &&
      (ps->plan == NULL || (missed && !ps->from_file))) {
    made = plan_recording(ps, &st);
    if (st != C10C_STATUS_OK) /* kept: what follows may note (and handle) failures of its own */
      snprintf(failure, sizeof failure, "%s", c10c_last_error_message());
    if (made != NULL && !plan_pays(ps, made)) { /* it would reserve more */
      c10c__plan_destroy(made);
      made = NULL;
      /* the same step declined again: the next try waits twice as long (16 steps, then 32, ...,
       * up to 1024), so that a program whose steps never pay spends next to nothing on plans */
      bool same = ps->declined_at == ps->step_peak && ps->declined_requests == ps->nrec;
      ps->decline_wait = same && ps->decline_wait < 1024 ? ps->decline_wait * 2 : same ? 1024 : 16;
      ps->declined_at = ps->step_peak;
      ps->declined_requests = ps->nrec;
      ps->since_decline = 0;
      stats_of(ps)->plan_declines++;
    }
    if (made != NULL) {
      if (ps->reference == 0) ps->reference = ps->step_peak;
      ps->declined_at = 0;
      ps->next_since = ps->step_since;
      ps->next = made;
      ps->next_from_file = false;
    }
  }
  if (online) {
    ps->streak = missed ? ps->streak + 1 : 0;
    if (over || ps->streak >= MAX_REBUILD_STREAK) { /* the steps differ too much to plan */
      c10c__plan_destroy(ps->next);
      ps->next = NULL;
      ps->stopped = true;
      ps->streak = 0;
      stats_of(ps)->plan_drops++;
      retire_when_idle(ps, false);
    }
  }
  /* the next step's streams wait for this one's before they reuse the arena (a file's plan
   * orders its own steps) */
  bool idle = ps->plan != NULL && ps->from_file ? arena_idle(ps) : arena_ready(ps);
  if (ps->next != NULL && idle) {
    install_next(ps);
  } else if (ps->plan != NULL && !ps->from_file && !ps->retiring) {
    ps->blocked = !idle;
    restart(ps);
  }
  if (ps->plan == NULL && ps->next == NULL && idle) release_arena(ps); /* no plan needs it */
  if (ps->plan == NULL && ps->next == NULL && ps->arena == NULL) ps->reference = 0;
  ps->requests = ps->misses = 0;
  next_recording(ps);
  return st == C10C_STATUS_OK ? st : c10c__fail(st, "%s", failure);
}

/* ---- snapshots and checks ---- */

static int by_offset(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The live blocks as (offset, slot) pairs sorted by offset, in *out (n of them). */
static bool sorted_live(const c10c__plan_state *ps, uint64_t **out, size_t *n) {
  *n = 0;
  *out = c10c__malloc((ps->nlive ? ps->nlive : 1) * 2 * sizeof **out);
  if (*out == NULL) return false;
  for (size_t i = 0; i < ps->nslots; i++)
    if (ps->live[i].entry != NONE) {
      (*out)[2 * *n] = ps->plan->offsets[ps->live[i].entry];
      (*out)[2 * *n + 1] = i;
      ++*n;
    }
  qsort(*out, *n, 2 * sizeof **out, by_offset);
  return true;
}

static c10c_status plan_snapshot(const c10c__plan_state *ps, char **out) {
  *out = NULL;
  uint64_t *order = NULL;
  size_t n = 0;
  if (ps->arena != NULL && ps->plan != NULL && !sorted_live(ps, &order, &n))
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory for a snapshot");
  size_t cap = 512 + (2 * n + 1) * 160, len = 0;
  char *text = c10c__malloc(cap);
  if (text == NULL) {
    c10c__free(order);
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory for a snapshot");
  }
  text[0] = '\0';
  if (ps->arena != NULL) {
    size_t allocated = 0, requested = 0;
    for (size_t k = 0; k < n; k++) {
      const live_block *l = &ps->live[order[2 * k + 1]];
      allocated += (size_t)ps->plan->block[l->entry];
      requested += l->requested;
    }
    len += (size_t)snprintf(
        text + len, cap - len,
        "{\"device\": %d, \"address\": %" PRIuPTR
        ", \"total_size\": %zu, \"allocated_size\": %zu, \"active_size\": %zu, "
        "\"requested_size\": %zu, \"stream\": 0, \"segment_type\": \"plan\", "
        "\"segment_pool_id\": [0, 0], \"is_expandable\": false, \"frames\": [], \"blocks\": [",
        ps->device, (uintptr_t)ps->arena, ps->arena_size, allocated, allocated, requested);
    size_t at = 0;
    const char *sep = "";
    for (size_t k = 0; k <= n; k++) {
      size_t offset = k < n ? (size_t)order[2 * k] : ps->arena_size;
      if (offset > at) { /* the free bytes before it */
        len += (size_t)snprintf(text + len, cap - len,
                                "%s{\"address\": %" PRIuPTR
                                ", \"size\": %zu, \"requested_size\": 0, \"state\": "
                                "\"inactive\", \"frames\": []}",
                                sep, (uintptr_t)(ps->arena + at), offset - at);
        sep = ", ";
      }
      if (k == n) break;
      const live_block *l = &ps->live[order[2 * k + 1]];
      size_t block = (size_t)ps->plan->block[l->entry];
      len += (size_t)snprintf(text + len, cap - len,
                              "%s{\"address\": %" PRIuPTR
                              ", \"size\": %zu, \"requested_size\": %zu, \"state\": "
                              "\"active_allocated\", \"frames\": []}",
                              sep, (uintptr_t)(ps->arena + offset), block, l->requested);
      sep = ", ";
      at = offset + block;
    }
    snprintf(text + len, cap - len, "]}");
  }
  c10c__free(order);
  *out = text;
  return C10C_STATUS_OK;
}

static bool plan_validate(const c10c__plan_state *ps, int64_t reserved[2], int64_t allocated[2],
                          int64_t active[2], int64_t segments[2], char *msg, size_t msg_size) {
  const c10c_memory_stats *s = c10c__engine_device_stats(ps->engine, ps->device);
  if (s->plan_arena_bytes != (int64_t)ps->arena_size) {
    snprintf(msg, msg_size, "device %d: plan_arena_bytes %lld, the arena %zu bytes", ps->device,
             (long long)s->plan_arena_bytes, ps->arena_size);
    return false;
  }
  if (ps->arena == NULL) {
    if (ps->nlive == 0) return true;
    snprintf(msg, msg_size, "device %d: %zu planned blocks without an arena", ps->device,
             ps->nlive);
    return false;
  }
  reserved[1] += (int64_t)ps->arena_size;
  segments[1]++;
  if (ps->plan == NULL) return true;
  size_t counted = 0;
  for (size_t i = 0; i < ps->nslots; i++) {
    if (ps->live[i].entry == NONE) continue;
    uint64_t block = ps->plan->block[ps->live[i].entry];
    bool small = block <= C10C__SMALL_SIZE;
    allocated[small ? 0 : 1] += (int64_t)block;
    active[small ? 0 : 1] += (int64_t)block;
    counted++;
  }
  if (counted != ps->nlive) {
    snprintf(msg, msg_size, "device %d: %zu live planned blocks, %zu counted", ps->device, counted,
             ps->nlive);
    return false;
  }
  uint64_t *order = NULL;
  size_t n = 0;
  if (!sorted_live(ps, &order, &n)) return true; /* no memory to check the places with */
  bool ok = true;
  uint64_t end = 0;
  for (size_t k = 0; k < n && ok; k++) {
    uint64_t block = ps->plan->block[ps->live[order[2 * k + 1]].entry], offset = order[2 * k];
    if (offset < end || offset + block > ps->arena_size) {
      snprintf(msg, msg_size,
               "device %d: planned block at offset %" PRIu64 " (%" PRIu64
               " bytes) overlaps another or leaves the arena of %zu bytes",
               ps->device, offset, block, ps->arena_size);
      ok = false;
    }
    end = offset + block;
  }
  c10c__free(order);
  return ok;
}

const c10c__plan_hooks c10c__plan_engine_hooks = {
    .state_new = plan_state_new,
    .state_destroy = plan_state_destroy,
    .configure = plan_configure,
    .malloc = plan_malloc,
    .unrecord = plan_unrecord,
    .record_free = plan_record_free,
    .note_reserved = plan_note_reserved,
    .make_room = plan_make_room,
    .holds = plan_holds,
    .free = plan_free,
    .record_stream = plan_record_stream,
    .share = plan_share,
    .release_idle = plan_release_idle,
    .host_step = plan_host_step,
    .snapshot = plan_snapshot,
    .validate = plan_validate,
};
