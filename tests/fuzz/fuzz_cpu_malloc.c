/* c10c_cpu_malloc, calloc, realloc and free (lib/memory/cpu_malloc.c) driven by the input as
 * numpy's data allocator drives them, checked against a model: 16 slots, each a block with the
 * size the model asked for and bytes the model wrote (a pattern of the slot and a generation).
 * Every operation checks the block's bytes the model expects (realloc keeps min(old, new) of
 * them, calloc gives zeros), its 64-byte alignment, c10c_cpu_allocation_size, and the
 * allocator's count of live blocks; a second free and a free of an address inside a block must
 * be refused without freeing anything. Sizes cover the header blocks (up to 256 KiB) and the
 * headerless ones, with the class edges (powers of two and their neighbours) likely.
 */
#include "fuzz.h"

#include "c10c/c10c.h"

enum { SLOTS = 16 };

typedef struct slot {
  unsigned char *p;
  size_t size;
  uint8_t gen;
} slot;

static unsigned char pattern(size_t slot_index, uint8_t gen, size_t i) {
  return (unsigned char)(slot_index * 31u + gen * 7u + i * 13u + (i >> 8));
}

static size_t read_size(fuzz_input *in) {
  switch (fuzz_u8(in) % 4) {
    case 0: return (size_t)fuzz_range(in, 0, 300);
    case 1: { /* around a power of two: the size classes' edges */
      size_t p = (size_t)1 << fuzz_range(in, 6, 22);
      return p + (size_t)fuzz_range(in, 0, 128) - 64;
    }
    case 2: return (size_t)fuzz_range(in, 0, 300 << 10); /* header blocks and the first large */
    default: return (size_t)fuzz_range(in, 0, 6 << 20);
  }
}

static void fill(slot *s, size_t index, size_t from) {
  for (size_t i = from; i < s->size; i++) s->p[i] = pattern(index, s->gen, i);
}

static void check_bytes(const slot *s, size_t index, size_t n) {
  for (size_t i = 0; i < n; i++)
    FUZZ_CHECK(s->p[i] == pattern(index, s->gen, i), "slot %zu byte %zu of %zu changed", index, i,
               s->size);
}

static int64_t live_blocks(void) {
  c10c_memory_stats st = {.struct_size = sizeof st};
  c10c_allocator_get_stats(&st, c10c_cpu_caching_allocator());
  return st.allocation[C10C_STAT_ALL].current;
}

static void check_block(const slot *s, size_t index) {
  FUZZ_CHECK(((uintptr_t)s->p & 63) == 0, "slot %zu: %p is not 64-byte aligned", index,
             (void *)s->p);
  FUZZ_CHECK(c10c_cpu_allocation_size(s->p) == (s->size ? s->size : 1),
             "slot %zu: size %zu, the allocator says %zu", index, s->size,
             c10c_cpu_allocation_size(s->p));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_input in = {data, size};
  slot slots[SLOTS] = {{0}};
  int64_t base = live_blocks();
  int64_t live = 0;
  for (int step = 0; step < 64 && !fuzz_done(&in); step++) {
    size_t k = fuzz_u8(&in) % SLOTS;
    slot *s = &slots[k];
    uint8_t op = fuzz_u8(&in) % 6;
    if (s->p == NULL && op != 5) op = op % 2; /* an empty slot: malloc or calloc */
    switch (op) {
      case 0:   /* malloc */
      case 1: { /* calloc, count x size */
        size_t n = read_size(&in);
        unsigned char *p = NULL;
        if (op == 0) {
          FUZZ_CHECK(c10c_cpu_malloc((void **)&p, n) == C10C_STATUS_OK, "malloc %zu: %s", n,
                     c10c_last_error_message());
        } else {
          size_t count = (size_t)fuzz_range(&in, 1, 8);
          n /= count;
          FUZZ_CHECK(c10c_cpu_calloc((void **)&p, count, n) == C10C_STATUS_OK, "calloc: %s",
                     c10c_last_error_message());
          n *= count;
          for (size_t i = 0; i < n; i++) FUZZ_CHECK(p[i] == 0, "calloc byte %zu of %zu", i, n);
        }
        if (s->p != NULL) { /* the old block goes first, checked */
          check_bytes(s, k, s->size);
          c10c_cpu_free(s->p);
          live--;
        }
        *s = (slot){p, n, (uint8_t)(s->gen + 1)};
        live++;
        fill(s, k, 0);
        check_block(s, k);
        break;
      }
      case 2: { /* realloc keeps min(old, new) bytes */
        size_t n = read_size(&in);
        unsigned char *q = NULL;
        FUZZ_CHECK(c10c_cpu_realloc((void **)&q, s->p, n) == C10C_STATUS_OK, "realloc: %s",
                   c10c_last_error_message());
        size_t keep = s->size < n ? s->size : n, old = s->size;
        s->p = q;
        s->size = n;
        check_bytes(s, k, keep);
        if (n > old) fill(s, k, old);
        check_block(s, k);
        break;
      }
      case 3: /* free */
        check_bytes(s, k, s->size);
        c10c_cpu_free(s->p);
        live--;
        s->p = NULL;
        break;
      case 4: /* an address inside the block is refused, the block untouched */
        if (s->size > 64) {
          size_t at = (size_t)fuzz_range(&in, 1, (int64_t)s->size - 1) & ~(size_t)63;
          if (at == 0) break;
          c10c_cpu_free(s->p + at);
          FUZZ_CHECK(c10c_cpu_allocation_size(s->p + at) == 0, "inside address has a size");
          check_bytes(s, k, s->size);
          check_block(s, k);
        }
        break;
      default: /* check everything */
        for (size_t i = 0; i < SLOTS; i++)
          if (slots[i].p != NULL) check_bytes(&slots[i], i, slots[i].size);
        break;
    }
    FUZZ_CHECK(live_blocks() - base == live, "the allocator counts %lld live blocks, not %lld",
               (long long)(live_blocks() - base), (long long)live);
  }
  for (size_t i = 0; i < SLOTS; i++) {
    if (slots[i].p == NULL) continue;
    check_bytes(&slots[i], i, slots[i].size);
    unsigned char *p = slots[i].p;
    c10c_cpu_free(p);
    if (slots[i].size <= (200 << 10)) c10c_cpu_free(p); /* a second free: refused */
  }
  FUZZ_CHECK(live_blocks() == base, "blocks left: %lld", (long long)(live_blocks() - base));
  return 0;
}
