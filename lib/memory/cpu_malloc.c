/* malloc-style access to the caching CPU allocator (c10c_cpu_malloc and friends): raw pointers
 * for hosts that free by address alone, such as numpy's data allocator (NEP 49), whose free's
 * size argument is not always what was allocated.
 *
 * A block of at most SMALL_LIMIT bytes carries a 64-byte header (so the data stays 64-aligned)
 * with the data pointer's ctx and deleter and the requested size, and its data never starts a
 * page. Larger blocks are whole pages mapped by the caching allocator and carry no header (a
 * header would push a power-of-two array into the next size class): a table keyed by address
 * holds their ctx and deleter. So a free of a page-aligned address looks in the table (under a
 * lock) and any other address has a header (no lock).
 */
#include <stdint.h>
#include <string.h>

#include "allocator_internal.h"
#include "os.h"
#include "sysmem.h"

enum { HEADER = 64, PAGE = 4096 };
#define SMALL_LIMIT ((size_t)256 << 10) /* the caching allocator's small blocks */
#define MAGIC       UINT64_C(0xc10c0a110c0a110c)

/* The first bytes of the HEADER bytes before a small block's data. */
typedef struct header {
  void *ctx; /* the data pointer's ctx (the block's first word: a free list's link) */
  c10c_deleter deleter;
  size_t size;    /* bytes asked for */
  uint64_t magic; /* MAGIC while allocated, 0 once freed */
} header;
_Static_assert(sizeof(header) <= HEADER, "the header fits before the 64-byte aligned data");

/* ---- the table of headerless blocks: open addressing, linear probing, no tombstones ---- */

typedef struct entry {
  uintptr_t key; /* the data pointer; 0 = empty */
  void *ctx;
  c10c_deleter deleter;
  size_t size;
} entry;

static c10c__mutex lock = C10C__MUTEX_INIT;
static entry *slots;
static size_t capacity, used; /* capacity a power of two (0 before the first insert) */

static size_t slot_of(uintptr_t key, size_t cap) {
  return (size_t)(((uint64_t)(key / PAGE) * UINT64_C(0x9e3779b97f4a7c15)) >> 20) & (cap - 1);
}

/* Grows the table to twice its size (lock held). false: no memory. */
static bool grow_locked(void) {
  size_t cap = capacity ? capacity * 2 : 64;
  entry *fresh = c10c__calloc(cap, sizeof *fresh);
  if (fresh == NULL) return false;
  for (size_t i = 0; i < capacity; i++) {
    if (slots[i].key == 0) continue;
    size_t j = slot_of(slots[i].key, cap);
    while (fresh[j].key != 0) j = (j + 1) & (cap - 1);
    fresh[j] = slots[i];
  }
  c10c__free(slots);
  slots = fresh;
  capacity = cap;
  return true;
}

static bool insert(const entry *e) {
  c10c__mutex_lock(&lock);
  bool ok = (used + 1) * 2 <= capacity || grow_locked();
  if (ok) {
    size_t j = slot_of(e->key, capacity);
    while (slots[j].key != 0) j = (j + 1) & (capacity - 1);
    slots[j] = *e;
    used++;
  }
  c10c__mutex_unlock(&lock);
  return ok;
}

/* Finds key; with remove, takes it out (shifting later entries of its run back); with a
 * resize other than 0, records that size for it. */
static bool find(uintptr_t key, entry *out, bool remove, size_t resize) {
  c10c__mutex_lock(&lock);
  bool found = false;
  if (capacity > 0) {
    size_t j = slot_of(key, capacity);
    while (slots[j].key != 0 && slots[j].key != key) j = (j + 1) & (capacity - 1);
    found = slots[j].key == key;
    if (found) {
      if (resize != 0) slots[j].size = resize;
      *out = slots[j];
      if (remove) {
        size_t hole = j;
        for (size_t k = (j + 1) & (capacity - 1); slots[k].key != 0; k = (k + 1) & (capacity - 1)) {
          size_t home = slot_of(slots[k].key, capacity);
          /* slots[k] may move into the hole unless its home lies cyclically in (hole, k] */
          bool stays = hole <= k ? (home > hole && home <= k) : (home > hole || home <= k);
          if (!stays) {
            slots[hole] = slots[k];
            hole = k;
          }
        }
        slots[hole].key = 0;
        used--;
      }
    }
  }
  c10c__mutex_unlock(&lock);
  return found;
}

/* ---- allocation ---- */

static c10c_status out_of_memory(size_t nbytes) {
  return c10c__fail(C10C_STATUS_OUT_OF_MEMORY,
                    "DefaultCPUAllocator: can't allocate memory: you tried to allocate %zu bytes.",
                    nbytes);
}

/* Writes the header before the data of a small block; returns the data. */
static inline void *small_data(const c10c_data_ptr *dp, size_t nbytes) {
  /* Room for the data one header further on, so that it never starts a page: page-aligned
   * addresses are the table's, and a free of any other address needs no lock. */
  char *data = (char *)dp->data + HEADER;
  if (((uintptr_t)data & (PAGE - 1)) == 0) data += HEADER;
  header *h = (header *)(data - HEADER);
  h->ctx = dp->ctx;
  h->deleter = dp->deleter;
  h->size = nbytes;
  h->magic = MAGIC;
  return data;
}

static c10c_status allocate(void **out, size_t nbytes, bool zeroed) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  if (nbytes == 0) nbytes = 1; /* a unique address, as malloc(0) gives */
  if (nbytes > (size_t)PTRDIFF_MAX - HEADER) return out_of_memory(nbytes);
  c10c_data_ptr dp; /* filled by the allocation */
  c10c_status st;
  if (nbytes > SMALL_LIMIT) {
    st = zeroed ? c10c__cpu_caching_allocate_zeroed(&dp, nbytes)
                : c10c__cpu_caching_allocate(&dp, nbytes);
    if (st != C10C_STATUS_OK) return st;
    if (((uintptr_t)dp.data & (PAGE - 1)) == 0) {
      entry e = {(uintptr_t)dp.data, dp.ctx, dp.deleter, nbytes};
      if (!insert(&e)) {
        c10c_data_ptr_free(&dp);
        return out_of_memory(nbytes);
      }
      *out = dp.data;
      return C10C_STATUS_OK;
    }
    c10c_data_ptr_free(&dp); /* not page-aligned (cannot happen today): use a header */
  }
  st = zeroed ? c10c__cpu_caching_allocate_zeroed(&dp, nbytes + 2 * HEADER)
              : c10c__cpu_caching_allocate(&dp, nbytes + 2 * HEADER);
  if (st != C10C_STATUS_OK) return st;
  *out = small_data(&dp, nbytes);
  return C10C_STATUS_OK;
}

c10c_status c10c_cpu_malloc(void **out, size_t nbytes) {
  if (out != NULL && nbytes - 1 < SMALL_LIMIT - 2 * HEADER) { /* numpy's small arrays: short */
    c10c_data_ptr dp;
    c10c_status st = c10c__cpu_caching_allocate(&dp, nbytes + 2 * HEADER);
    *out = st == C10C_STATUS_OK ? small_data(&dp, nbytes) : NULL;
    return st;
  }
  return allocate(out, nbytes, false);
}

c10c_status c10c_cpu_calloc(void **out, size_t count, size_t size) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  if (size != 0 && count > SIZE_MAX / size)
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY,
                      "c10c_cpu_calloc: %zu elements of %zu bytes overflow the address space",
                      count, size);
  return allocate(out, count * size, true);
}

/* What ptr is: a table entry (the entry) or a header (the header); false for an address this
 * layer does not hold (a foreign or freed pointer), with the error set. */
static bool lookup(uintptr_t addr, entry *e, header **h, bool remove) {
  *h = NULL;
  bool paged = (addr & (PAGE - 1)) == 0;
  if (paged && find(addr, e, remove, 0)) return true;
  header *candidate = (header *)(addr - HEADER);
  if (paged || (addr & (HEADER - 1)) != 0 || candidate->magic != MAGIC) {
    c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
               "c10c_cpu_free: %p was not allocated by c10c_cpu_malloc, or was freed already",
               (void *)addr);
    return false;
  }
  *h = candidate;
  return true;
}

/* Hands a looked-up block back to its allocator. */
static void release(const entry *e, header *h) {
  if (h == NULL) {
    e->deleter(e->ctx);
    return;
  }
  h->magic = 0; /* a second free is refused, not run */
  h->deleter(h->ctx);
}

void c10c_cpu_free(void *ptr) {
  if (ptr == NULL) return;
  entry e;
  header *h;
  if (lookup((uintptr_t)ptr, &e, &h, true)) release(&e, h);
}

size_t c10c_cpu_allocation_size(const void *ptr) {
  if (ptr == NULL) return 0;
  entry e;
  header *h;
  if (!lookup((uintptr_t)ptr, &e, &h, false)) return 0;
  return h ? h->size : e.size;
}

c10c_status c10c_cpu_realloc(void **out, void *ptr, size_t nbytes) {
  C10C__CHECK_NOT_NULL(out);
  if (ptr == NULL) return c10c_cpu_malloc(out, nbytes);
  entry e;
  header *h;
  if (!lookup((uintptr_t)ptr, &e, &h, false)) {
    *out = NULL;
    return C10C_STATUS_INVALID_ARGUMENT; /* lookup set the message */
  }
  size_t old = h ? h->size : e.size;
  /* A shrink to no less than half stays where it is (as glibc's realloc keeps a block that
   * would leave a small remainder), recording the new size. */
  if (nbytes <= old && nbytes >= old / 2 && nbytes != 0) {
    if (h)
      h->size = nbytes;
    else
      find((uintptr_t)ptr, &e, false, nbytes);
    *out = ptr;
    return C10C_STATUS_OK;
  }
  void *fresh = NULL;
  c10c_status st = c10c_cpu_malloc(&fresh, nbytes);
  if (st != C10C_STATUS_OK) {
    *out = NULL;
    return st; /* ptr is untouched, as realloc leaves it */
  }
  memcpy(fresh, ptr, old < nbytes ? old : nbytes);
  if (h)
    release(&e, h); /* the header's block: no second look */
  else
    c10c_cpu_free(ptr); /* takes it out of the table */
  *out = fresh;
  return C10C_STATUS_OK;
}
