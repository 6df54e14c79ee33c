/* Plan files (lib/memory/planner.c's reader, c10c__plan_parse): arbitrary bytes as a file. The
 * first byte chooses how the rest is used: 0, the bytes as they are; 1, the bytes with their
 * last 8 made the right checksum (so the checks behind the checksum are reached); 2, a
 * well-formed header (magic, version 1, device, streams and arena from the next bytes, the
 * count that the rest holds) over the rest as records, with the right checksum (so prepare's
 * checks see many plans).
 * Checked: every refusal is INVALID_ARGUMENT with a message naming the file and no plan; every
 * plan accepted is safe by a brute-force model (every planned request inside the arena, on a
 * stream below nstreams, 512-aligned, and no two planned requests alive at the same time sharing
 * a byte), and its derived fields are the model's (block, free_rank, by_free, need, waits,
 * cross). */
#include "fuzz.h"

#include "planner.h"

enum { HEADER = 36, RECORD = 37, MAX_MODEL = 400 };

static uint64_t fnv1a(const uint8_t *d, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ d[i]) * 0x100000001b3ull;
  return h;
}

static void put_le(uint8_t *d, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) d[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t life_end(const c10c__plan_request *r) {
  if (r->free == C10C__PLAN_NEVER) return C10C__PLAN_NEVER;
  return r->free == r->alloc ? r->alloc + 1 : r->free;
}

static void check_plan(const c10c__plan *p) {
  size_t n = p->count;
  FUZZ_CHECK(p->arena % C10C__PLAN_ARENA_ALIGN == 0, "arena %llu", (unsigned long long)p->arena);
  FUZZ_CHECK(p->nstreams <= 64, "nstreams %u", (unsigned)p->nstreams);
  size_t planned = 0;
  for (size_t i = 0; i < n; i++) {
    const c10c__plan_request *r = &p->requests[i];
    if (i > 0) FUZZ_CHECK(r->alloc >= p->requests[i - 1].alloc, "order at %zu", i);
    FUZZ_CHECK(r->free >= r->alloc, "request %zu freed before allocated", i);
    if (p->offsets[i] == C10C__PLAN_UNPLANNED) continue;
    planned++;
    FUZZ_CHECK(!r->skip && r->size > 0 && r->stream < p->nstreams, "request %zu planned", i);
    /* the size rounded up to 512 bytes, exactly (it may pass 64 bits: the 65th is "wide") */
    uint64_t blocks = r->size / 512 + (r->size % 512 != 0), block = blocks * 512;
    bool wide = blocks > UINT64_MAX / 512;
    FUZZ_CHECK(p->block[i] == block, "block %zu", i);
    FUZZ_CHECK(p->offsets[i] % 512 == 0, "offset %zu aligned", i);
    FUZZ_CHECK(!wide && p->offsets[i] <= p->arena && block <= p->arena - p->offsets[i],
               "request %zu in arena", i);
  }
  FUZZ_CHECK(p->planned == planned, "planned %zu, model %zu", p->planned, planned);
  if (n > MAX_MODEL) return;
  for (size_t j = 0; j < n; j++) {
    if (p->offsets[j] == C10C__PLAN_UNPLANNED) continue;
    const c10c__plan_request *rj = &p->requests[j];
    /* rank: planned frees before it in (time, index) order */
    uint32_t rank = UINT32_MAX;
    if (rj->free != C10C__PLAN_NEVER) {
      rank = 0;
      for (size_t k = 0; k < n; k++)
        if (p->offsets[k] != C10C__PLAN_UNPLANNED && p->requests[k].free != C10C__PLAN_NEVER &&
            (p->requests[k].free < rj->free || (p->requests[k].free == rj->free && k < j)))
          rank++;
      FUZZ_CHECK(p->by_free[rank] == j, "by_free[%u]", rank);
    }
    FUZZ_CHECK(p->free_rank[j] == rank, "free_rank[%zu] %u, model %u", j, p->free_rank[j], rank);
    uint32_t need = 0;
    uint64_t waits = 0;
    bool cross = false;
    for (size_t i = 0; i < n; i++) {
      if (i == j || p->offsets[i] == C10C__PLAN_UNPLANNED) continue;
      const c10c__plan_request *ri = &p->requests[i];
      bool bytes = p->offsets[i] < p->offsets[j] + p->block[j] &&
                   p->offsets[j] < p->offsets[i] + p->block[i];
      if (!bytes) continue;
      FUZZ_CHECK(!(ri->alloc < life_end(rj) && rj->alloc < life_end(ri)),
                 "requests %zu and %zu are alive at once and share bytes", i, j);
      if (life_end(ri) <= rj->alloc) {
        if (p->free_rank[i] + 1 > need) need = p->free_rank[i] + 1;
        if (ri->stream != rj->stream) waits |= (uint64_t)1 << ri->stream;
      } else if (ri->stream != rj->stream) {
        cross = true;
      }
    }
    FUZZ_CHECK(p->need[j] == need, "need[%zu] %u, model %u", j, p->need[j], need);
    FUZZ_CHECK(p->waits[j] == waits, "waits[%zu]", j);
    FUZZ_CHECK(p->cross[j] == cross, "cross[%zu]", j);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  int mode = data[0] % 3;
  data++, size--;
  size_t n = size;
  uint8_t *file;
  if (mode == 2) {
    /* header fields from the first 9 bytes: device, nstreams, arena in MiB */
    uint8_t h[9] = {0};
    memcpy(h, data, size < 9 ? size : 9);
    const uint8_t *rest = data + (size < 9 ? size : 9);
    size_t count = (size - (size < 9 ? size : 9)) / RECORD;
    n = HEADER + count * RECORD + 8;
    file = malloc(n);
    if (!file) return 0;
    memcpy(file, "C10CPLAN", 8);
    put_le(file + 8, 1, 4);
    put_le(file + 12, h[0] % 4, 4);
    put_le(file + 16, h[1] % 66, 4);
    put_le(file + 20, count, 8);
    put_le(file + 28, (uint64_t)(h[2] | (h[3] << 8)) << 20, 8);
    memcpy(file + HEADER, rest, count * RECORD);
    put_le(file + n - 8, fnv1a(file, n - 8), 8);
  } else {
    file = malloc(n ? n : 1);
    if (!file) return 0;
    memcpy(file, data, n);
    if (mode == 1 && n >= 8) put_le(file + n - 8, fnv1a(file, n - 8), 8);
  }
  c10c__plan *plan = (c10c__plan *)1;
  c10c_status st = c10c__plan_parse(&plan, file, n, "fuzz");
  if (st == C10C_STATUS_OK) {
    check_plan(plan);
    c10c__plan_destroy(plan);
  } else {
    FUZZ_CHECK(plan == NULL, "a plan despite status %d", (int)st);
    FUZZ_CHECK(st == C10C_STATUS_INVALID_ARGUMENT || st == C10C_STATUS_OUT_OF_MEMORY, "status %d",
               (int)st);
    const char *msg = c10c_last_error_message();
    FUZZ_CHECK(strncmp(msg, "plan file fuzz", 14) == 0, "message %s", msg);
  }
  free(file);
  return 0;
}
