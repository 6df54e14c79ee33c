/* Pinned host memory (include/c10c/cuda_host.h): PyTorch's CachingHostAllocator
 * (aten/src/ATen/core/CachingHostAllocator.h, aten/src/ATen/cuda/CachingHostAllocator.cpp) over
 * the driver's cuMemHostAlloc / cuMemFreeHost. Sizes round up to the next power of two
 * (c10::llvm::PowerOf2Ceil); freed blocks wait in per-size free lists; a block recorded on streams
 * gets one event per stream at free time and returns to its free list when all have completed
 * (process_events, run at each allocation and by empty_cache). One mutex guards everything: the
 * pinned path is a host-side, per-transfer one. */
#define _GNU_SOURCE
#include "c10c/cuda_host.h"

#include <stdlib.h>
#include <string.h>

#include "allocator_internal.h"
#include "cuda_internal.h"
#include "internal.h"
#include "os.h"

enum { MAX_STREAMS_PER_BLOCK = 8, BUCKETS = 64 };

typedef struct host_use {
  c10c_device_index device;
  CUstream handle;
} host_use;

typedef struct host_block {
  void *ptr;
  size_t size;
  bool allocated;  /* handed out and not freed */
  int event_count; /* events still pending since its free */
  size_t nuses;    /* streams it was used on */
  host_use uses[MAX_STREAMS_PER_BLOCK];
  struct host_block *next_free;
} host_block;

typedef struct host_event {
  CUevent event;
  c10c_device_index device;
  host_block *block;
} host_event;

static c10c__mutex lock = C10C__MUTEX_INIT;
static host_block **blocks; /* every block the allocator owns */
static size_t nblocks, blocks_cap;
static host_block *free_lists[BUCKETS];
static host_event *events;
static size_t nevents, events_cap;
static c10c_cuda_host_stats stats;

static int bucket_of(size_t size) {
  int b = 0;
  while (b < BUCKETS - 1 && ((size_t)1 << b) < size) b++;
  return b;
}

static size_t round_pow2(size_t size) {
  size_t r = 1;
  while (r < size) r <<= 1;
  return r;
}

static void duration_add(c10c_duration_stat *d, int64_t us) {
  d->total += us;
  d->count++;
  if (us > d->max) d->max = us;
  if (d->count == 1 || us < d->min) d->min = us;
}

static int64_t now_us(void) { return c10c__monotonic_us(); }

/* The live block holding ptr (lock held). */
static host_block *find_block(const void *ptr, bool live_only) {
  uintptr_t p = (uintptr_t)ptr;
  for (size_t i = 0; i < nblocks; i++) {
    uintptr_t b = (uintptr_t)blocks[i]->ptr;
    if (p >= b && p < b + blocks[i]->size && (!live_only || blocks[i]->allocated)) return blocks[i];
  }
  return NULL;
}

/* The block is reusable: back to its free list (lock held). */
static void make_free(host_block *block) {
  block->nuses = 0;
  c10c__stat_update(&stats.active_requests, -1);
  c10c__stat_update(&stats.active_bytes, -(int64_t)block->size);
  int b = bucket_of(block->size);
  block->next_free = free_lists[b];
  free_lists[b] = block;
}

/* PyTorch's process_events: completed events release their blocks (lock held). */
static void process_events(void) {
  size_t kept = 0;
  for (size_t i = 0; i < nevents; i++) {
    host_event e = events[i];
    CUresult r = c10c__cuda.cuEventQuery(e.event);
    if (r == CUDA_ERROR_NOT_READY) {
      events[kept++] = e;
      continue;
    }
    /* completed, or failed: an error leaves nothing to wait for either */
    (void)c10c__cuda.cuEventDestroy(e.event);
    if (--e.block->event_count == 0) make_free(e.block);
  }
  nevents = kept;
}

static c10c_status host_alloc_locked(void **out, size_t nbytes) {
  process_events();
  size_t size = round_pow2(nbytes);
  int b = bucket_of(size);
  if (free_lists[b] != NULL) {
    host_block *block = free_lists[b];
    free_lists[b] = block->next_free;
    block->allocated = true;
    c10c__stat_update(&stats.active_requests, 1);
    c10c__stat_update(&stats.active_bytes, (int64_t)size);
    *out = block->ptr;
    return C10C_STATUS_OK;
  }
  if (nblocks == blocks_cap) {
    size_t cap = blocks_cap ? blocks_cap * 2 : 16;
    host_block **grown = realloc(blocks, cap * sizeof *grown);
    if (grown == NULL) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory");
    blocks = grown;
    blocks_cap = cap;
  }
  host_block *block = calloc(1, sizeof *block);
  if (block == NULL) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory");
  /* CUDAHostAllocator's allocate_host_memory: on a device whose primary context exists, so that
   * pinning makes no new context (the current device when none exists yet) */
  c10c_device_index device = c10c__cuda_device_with_primary_context();
  c10c_status st = c10c__cuda_activate(device >= 0 ? device : c10c__cuda_current());
  if (st != C10C_STATUS_OK) {
    free(block);
    return c10c__cuda_restore(st);
  }
  if (c10c__cuda_host.cuMemHostAlloc == NULL || c10c__cuda_host.cuMemFreeHost == NULL) {
    free(block);
    return c10c__fail(C10C_STATUS_UNAVAILABLE, "the CUDA driver has no cuMemHostAlloc");
  }
  void *ptr = NULL;
  int64_t t0 = now_us();
  CUresult r = c10c__cuda_host.cuMemHostAlloc(&ptr, size, C10C_CU_MEMHOSTALLOC_PORTABLE);
  duration_add(&stats.host_alloc_time, now_us() - t0);
  if (r != 0) {
    free(block);
    st = c10c__cuda_check(r, "cuMemHostAlloc");
    if (st == C10C_STATUS_OUT_OF_MEMORY)
      st = c10c__fail(C10C_STATUS_OUT_OF_MEMORY,
                      "CUDA out of memory while pinning %zu bytes of host memory (a block of %zu "
                      "bytes): cuMemHostAlloc refused page-locked memory",
                      nbytes, size);
    return c10c__cuda_restore(st);
  }
  st = c10c__cuda_restore(C10C_STATUS_OK);
  if (st != C10C_STATUS_OK) { /* the block is good; only the thread's context was not restored */
    (void)c10c__cuda_host.cuMemFreeHost(ptr);
    free(block);
    return st;
  }
  block->ptr = ptr;
  block->size = size;
  block->allocated = true;
  blocks[nblocks++] = block;
  stats.num_host_alloc++;
  c10c__stat_update(&stats.allocations, 1);
  c10c__stat_update(&stats.allocated_bytes, (int64_t)size);
  c10c__stat_update(&stats.active_requests, 1);
  c10c__stat_update(&stats.active_bytes, (int64_t)size);
  *out = ptr;
  return C10C_STATUS_OK;
}

c10c_status c10c_cuda_host_alloc(void **out, size_t nbytes) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  c10c_status st = c10c__cuda_ensure();
  if (st != C10C_STATUS_OK || nbytes == 0) return st;
  c10c__mutex_lock(&lock);
  st = host_alloc_locked(out, nbytes);
  c10c__mutex_unlock(&lock);
  return st;
}

static c10c_status host_free_locked(void *ptr) {
  host_block *block = find_block(ptr, true);
  if (block == NULL || block->ptr != ptr)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "c10c_cuda_host_free: %p is not a block of the pinned host allocator", ptr);
  block->allocated = false;
  if (block->nuses == 0 || !c10c__cuda_usable()) { /* a forked child reaches no stream */
    make_free(block);
    return C10C_STATUS_OK;
  }
  /* one event per stream the block was used on (PyTorch's free: record_event per use) */
  c10c_status st = C10C_STATUS_OK;
  for (size_t i = 0; i < block->nuses && st == C10C_STATUS_OK; i++) {
    if (nevents == events_cap) {
      size_t cap = events_cap ? events_cap * 2 : 16;
      host_event *grown = realloc(events, cap * sizeof *grown);
      if (grown == NULL) {
        st = c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory");
        break;
      }
      events = grown;
      events_cap = cap;
    }
    st = c10c__cuda_activate(block->uses[i].device);
    CUevent event = NULL;
    if (st == C10C_STATUS_OK)
      st = c10c__cuda_check(c10c__cuda.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
                            "cuEventCreate");
    if (st == C10C_STATUS_OK) {
      st =
          c10c__cuda_check(c10c__cuda.cuEventRecord(event, block->uses[i].handle), "cuEventRecord");
      if (st != C10C_STATUS_OK) (void)c10c__cuda.cuEventDestroy(event);
    }
    if (st == C10C_STATUS_OK) {
      events[nevents++] = (host_event){event, block->uses[i].device, block};
      block->event_count++;
    }
  }
  if (st != C10C_STATUS_OK && block->event_count == 0) {
    /* no event could be recorded: wait for the streams instead of reusing it unsafely */
    for (size_t i = 0; i < block->nuses; i++)
      if (c10c__cuda_activate(block->uses[i].device) == C10C_STATUS_OK)
        (void)c10c__cuda.cuStreamSynchronize(block->uses[i].handle);
    make_free(block);
  }
  return c10c__cuda_restore(st);
}

c10c_status c10c_cuda_host_free(void *ptr) {
  if (ptr == NULL) return C10C_STATUS_OK;
  c10c__mutex_lock(&lock);
  c10c_status st = host_free_locked(ptr);
  c10c__mutex_unlock(&lock);
  return st;
}

bool c10c_cuda_host_is_pinned(const void *ptr) {
  if (ptr == NULL) return false;
  c10c__mutex_lock(&lock);
  bool pinned = find_block(ptr, true) != NULL;
  c10c__mutex_unlock(&lock);
  return pinned;
}

c10c_status c10c_cuda_host_record_stream(const void *ptr, c10c_stream stream) {
  if (stream.device.type != C10C_DEVICE_TYPE_CUDA)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "c10c_cuda_host_record_stream: the stream is not a CUDA stream");
  void *handle = NULL;
  c10c_status st = c10c_cuda_stream_handle(&handle, stream);
  if (st != C10C_STATUS_OK) return st;
  c10c__mutex_lock(&lock);
  host_block *block = find_block(ptr, true);
  if (block == NULL) {
    st = c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                    "c10c_cuda_host_record_stream: %p is not in a block of the pinned host "
                    "allocator",
                    ptr);
  } else {
    size_t i = 0;
    while (i < block->nuses && (block->uses[i].handle != (CUstream)handle ||
                                block->uses[i].device != stream.device.index))
      i++;
    if (i == block->nuses && i < MAX_STREAMS_PER_BLOCK) {
      block->uses[i] = (host_use){stream.device.index, (CUstream)handle};
      block->nuses++;
    } else if (i == block->nuses) {
      st = c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "c10c_cuda_host_record_stream: a pinned block used on more than %d streams",
                      (int)MAX_STREAMS_PER_BLOCK);
    }
  }
  c10c__mutex_unlock(&lock);
  return st;
}

c10c_status c10c_cuda_host_empty_cache(void) {
  c10c_status st = c10c__cuda_ensure();
  if (st != C10C_STATUS_OK) return st;
  c10c__mutex_lock(&lock);
  process_events();
  for (int b = 0; b < BUCKETS; b++) {
    while (free_lists[b] != NULL) {
      host_block *block = free_lists[b];
      free_lists[b] = block->next_free;
      int64_t t0 = now_us();
      CUresult r = c10c__cuda_host.cuMemFreeHost(block->ptr);
      duration_add(&stats.host_free_time, now_us() - t0);
      if (r != 0 && st == C10C_STATUS_OK) st = c10c__cuda_check(r, "cuMemFreeHost");
      stats.num_host_free++;
      c10c__stat_update(&stats.allocations, -1);
      c10c__stat_update(&stats.allocated_bytes, -(int64_t)block->size);
      for (size_t i = 0; i < nblocks; i++)
        if (blocks[i] == block) {
          blocks[i] = blocks[--nblocks];
          break;
        }
      free(block);
    }
  }
  c10c__mutex_unlock(&lock);
  return st;
}

/* The size of the first published version of the figures (up to and including host_free_time). */
#define HOST_STATS_MIN_SIZE \
  (offsetof(c10c_cuda_host_stats, host_free_time) + sizeof(c10c_duration_stat))

c10c_status c10c_cuda_host_get_stats(c10c_cuda_host_stats *out) {
  C10C__CHECK_NOT_NULL(out);
  c10c_status checked =
      c10c__check_struct_size(out->struct_size, HOST_STATS_MIN_SIZE, "c10c_cuda_host_stats", "");
  if (checked != C10C_STATUS_OK) return checked;
  c10c__mutex_lock(&lock);
  c10c__copy_versioned(out, &stats, sizeof stats);
  c10c__mutex_unlock(&lock);
  return C10C_STATUS_OK;
}

c10c_status c10c_cuda_host_reset_peak_stats(void) {
  c10c__mutex_lock(&lock);
  c10c_stat *all[] = {&stats.allocations, &stats.allocated_bytes, &stats.active_requests,
                      &stats.active_bytes};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) all[i]->peak = all[i]->current;
  c10c__mutex_unlock(&lock);
  return C10C_STATUS_OK;
}

c10c_status c10c_cuda_host_reset_accumulated_stats(void) {
  c10c__mutex_lock(&lock);
  c10c_stat *all[] = {&stats.allocations, &stats.allocated_bytes, &stats.active_requests,
                      &stats.active_bytes};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) all[i]->allocated = all[i]->freed = 0;
  stats.num_host_alloc = stats.num_host_free = 0;
  memset(&stats.host_alloc_time, 0, sizeof stats.host_alloc_time);
  memset(&stats.host_free_time, 0, sizeof stats.host_free_time);
  c10c__mutex_unlock(&lock);
  return C10C_STATUS_OK;
}

/* ---- the allocator handle for pinned CPU storages ---- */

static void host_deleter(void *ctx) { (void)c10c_cuda_host_free(ctx); }

static c10c_status vt_allocate(c10c_data_ptr *out, void *self, size_t nbytes, size_t alignment) {
  (void)self;
  (void)alignment; /* pinned blocks are page-aligned */
  void *ptr = NULL;
  c10c_status st = c10c_cuda_host_alloc(&ptr, nbytes);
  if (st != C10C_STATUS_OK) return st;
  out->data = ptr;
  out->ctx = ptr;
  out->deleter = ptr != NULL ? host_deleter : NULL;
  out->device = (c10c_device){C10C_DEVICE_TYPE_CPU, -1};
  return C10C_STATUS_OK;
}

static void vt_empty_cache(void *self) {
  (void)self;
  (void)c10c_cuda_host_empty_cache();
}

static void vt_reset_peak(void *self) {
  (void)self;
  (void)c10c_cuda_host_reset_peak_stats();
}

/* A built-in allocator as the CPU and CUDA caching ones: immortal (never counted, never NULL,
 * whatever c10c_allocator_set does with it), and its failures keep their own messages (the
 * driver's reason) instead of the wrapping a host allocator's get. */
static c10c_allocator host_handle = {
    .obj = {.refcount = C10C__IMMORTAL_REF, .type = &c10c__immortal_type},
    .vt = {.struct_size = sizeof(c10c_allocator_vtable),
           .allocate = vt_allocate,
           .empty_cache = vt_empty_cache,
           .reset_peak_stats = vt_reset_peak,
           .name = "cuda_host_caching"},
    .device_type = C10C_DEVICE_TYPE_CPU,
    .builtin = true,
};

c10c_allocator *c10c_cuda_host_allocator(void) { return &host_handle; }

/* ---- non-blocking copies ---- */

_Thread_local bool c10c__copy_non_blocking;

c10c_status c10c__cuda_memcpy_maybe_async(void *dst, c10c_device_index dst_device, const void *src,
                                          c10c_device_index src_device, size_t bytes) {
  bool h2d = src_device < 0 && dst_device >= 0, d2h = dst_device < 0 && src_device >= 0;
  const void *host = h2d ? src : dst;
  if (!c10c__copy_non_blocking || bytes == 0 || !(h2d || d2h) || !c10c_cuda_host_is_pinned(host))
    return c10c__cuda_memcpy(dst, dst_device, src, src_device, bytes);
  c10c_device_index device = h2d ? dst_device : src_device;
  c10c_stream stream;
  c10c_status st = c10c_cuda_current_stream(&stream, device);
  if (st == C10C_STATUS_OK)
    st = c10c__cuda_memcpy_async(dst, dst_device, src, src_device, bytes, false);
  /* Copy.cu: CachingHostAllocator_recordEvent(host ptr, ctx, stream) */
  if (st == C10C_STATUS_OK) st = c10c_cuda_host_record_stream(host, stream);
  return st;
}
