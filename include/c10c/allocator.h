/* libc10c: data pointers, the allocator ABI, the per-device allocator registry, the CPU
 * allocators and their statistics.
 *
 * As in c10, every allocation is a data pointer {data, ctx, deleter, device}: ctx owns the memory
 * and deleter(ctx) frees it, so memory from any allocator (or from outside, like a numpy array)
 * is freed the same way. A host application supplies its own allocator as a vtable.
 */
#ifndef C10C_ALLOCATOR_H
#define C10C_ALLOCATOR_H

#include "common.h"
#include "device.h"

C10C_BEGIN_DECLS

/* Frees what ctx owns. Called exactly once per owning data pointer, never with a NULL ctx, from
 * whichever thread drops the last reference. */
typedef void (*c10c_deleter)(void *ctx);

/* c10's DataPtr: data is what callers read and write; ctx owns the memory (often ctx == data);
 * deleter(ctx) frees it when ctx is not NULL. 32 bytes. */
typedef struct c10c_data_ptr {
  void *data;           /* start of the bytes, NULL for 0-byte allocations */
  void *ctx;            /* what deleter frees; NULL means nothing to free */
  c10c_deleter deleter; /* NULL when there is nothing to free */
  c10c_device device;   /* where data lives */
} c10c_data_ptr;

/* ---- statistics: the shape of torch.cuda.memory_stats() ---- */

/* One statistic: its current value, the peak since the last reset, and the cumulative amounts
 * added and removed (PyTorch's Stat). */
typedef struct c10c_stat {
  int64_t current;
  int64_t peak;
  int64_t allocated;
  int64_t freed;
} c10c_stat;

/* Indices of the [3] arrays below: all blocks, the small pool and the large pool. */
enum c10c_stat_type { C10C_STAT_ALL = 0, C10C_STAT_SMALL_POOL = 1, C10C_STAT_LARGE_POOL = 2 };

/* PyTorch's DeviceStats, keys as in torch.cuda.memory_stats(): "allocation.all.current" is
 * allocation[C10C_STAT_ALL].current. For the CPU allocator the small pool holds blocks below
 * 256 KiB, "segment"/"reserved_bytes" count memory obtained from the system (allocated plus
 * cached), "active" equals "allocation" (there are no streams), and num_device_alloc/free count
 * calls to the system allocator. Small blocks are counted by the thread that allocates or frees
 * them, without atomic operations; their current and cumulative values are exact whenever read,
 * and their peaks advance in steps of 64 KiB per thread. Small blocks keep no header, so their
 * requested bytes are their size-class bytes. Fields are only ever appended; struct_size says
 * how many the caller's struct holds. */
typedef struct c10c_memory_stats {
  uint32_t struct_size; /* set by the caller to sizeof(c10c_memory_stats) */
  uint32_t reserved0;
  c10c_stat allocation[3];
  c10c_stat segment[3];
  c10c_stat active[3];
  c10c_stat inactive_split[3];
  c10c_stat allocated_bytes[3];
  c10c_stat reserved_bytes[3];
  c10c_stat active_bytes[3];
  c10c_stat inactive_split_bytes[3];
  c10c_stat requested_bytes[3];
  c10c_stat oversize_allocations;
  c10c_stat oversize_segments;
  int64_t num_alloc_retries;
  int64_t num_ooms;
  int64_t num_sync_all_streams;
  int64_t num_device_alloc;
  int64_t num_device_free;
  int64_t max_split_size;
  /* ABI 1.1 (the CUDA caching allocator's planning and stitching; 0 elsewhere). */
  int64_t plan_arena_bytes; /* bytes reserved for the current plan's arena (in reserved_bytes) */
  int64_t plan_served;      /* allocations served from a plan */
  int64_t plan_fallbacks;   /* allocations under a plan served by the caching engine instead */
  int64_t plan_rebuilds;    /* plans made or loaded (the first one counts) */
  int64_t plan_drops;       /* plans dropped (missing too often, or their arena not allocatable) */
  int64_t num_stitches;     /* allocations served by mapping free pages into a new range */
  c10c_stat stitched_bytes; /* bytes of stitched ranges (current: mapped now) */
  int64_t plan_declines;    /* online plans not served because they would reserve more than the
                             * caching engine keeps (the engine serves those steps instead) */
} c10c_memory_stats;

/* ---- the allocator ABI ---- */

/* What a host implements to provide an allocator. Fill struct_size with
 * sizeof(c10c_allocator_vtable); later versions only append fields. Functions receive the self
 * pointer given to c10c_allocator_new and may be called from any thread at once. */
typedef struct c10c_allocator_vtable {
  uint32_t struct_size;
  uint32_t reserved0;
  /* Required. Allocates nbytes aligned to alignment (a power of two, at least 64 for CPU) and fills
   * *out; nbytes 0 must give data = ctx = NULL. The deleter in *out frees the block. On failure
   * returns a negative status (C10C_STATUS_OUT_OF_MEMORY) and may set a message through nothing
   * else: libc10c reports the failure with the allocator's name (a number that is not a failure
   * code of c10c_status becomes C10C_STATUS_ERROR). */
  c10c_status (*allocate)(c10c_data_ptr *out, void *self, size_t nbytes, size_t alignment);
  /* Optional (NULL: memcpy). Copies nbytes between two blocks of this allocator. */
  void (*copy)(void *self, void *dst, const void *src, size_t nbytes);
  /* Optional. Fills *out (whose struct_size the caller set); NULL: no statistics. Failures are
   * reported as allocate's. */
  c10c_status (*get_stats)(c10c_memory_stats *out, void *self);
  /* Optional. Returns cached memory to the system. */
  void (*empty_cache)(void *self);
  /* Optional. Sets every statistic's peak to its current value. */
  void (*reset_peak_stats)(void *self);
  /* Optional. Called exactly once, when the last reference to the allocator handle goes: the
   * host's own, the registry's (dropped when c10c_allocator_set replaces it) and one per
   * storage made from it, so no storage of it is alive then. A data pointer from
   * c10c_allocator_allocate holds no reference: a host whose deleter needs self keeps a
   * reference until it has freed such data pointers. */
  void (*destroy)(void *self);
  /* Optional. A short name for messages ("my_pool"); NULL: "custom". Copied by
   * c10c_allocator_new: the string need not outlive the call. */
  const char *name;
} c10c_allocator_vtable;

/* A refcounted allocator handle: a vtable, its self pointer and the device type it serves. */
typedef struct c10c_allocator c10c_allocator;

/* Makes an allocator handle from a host vtable (copied; self is passed to every call).
 * Ownership: *out is a new reference (NULL on failure). Errors: C10C_STATUS_NULL_POINTER (out,
 * vtable or vtable->allocate); C10C_STATUS_INVALID_ARGUMENT for a struct_size smaller than the
 * first version's ("c10c_allocator_vtable.struct_size is 4, smaller than any version of the
 * vtable (16); set it to sizeof(c10c_allocator_vtable)") or an invalid device type ("Unknown
 * device type 21"); C10C_STATUS_OUT_OF_MEMORY. */
C10C_API c10c_status c10c_allocator_new(c10c_allocator **out, const c10c_allocator_vtable *vtable,
                                        void *self, c10c_device_type device_type);

/* Adds a reference (NULL-safe; the built-in allocators are not counted). Ownership: returns
 * allocator, now owned once more. Errors: none. */
C10C_API c10c_allocator *c10c_allocator_retain(c10c_allocator *allocator);

/* Drops a reference (NULL-safe); the last one calls vtable->destroy and frees the handle (its
 * copied name with it). Errors: none. */
C10C_API void c10c_allocator_release(c10c_allocator *allocator);

/* Allocates nbytes (alignment 64 on CPU) into *out; free it with c10c_data_ptr_free. On failure
 * *out holds nothing to free (data, ctx and deleter NULL). Ownership: *out owns the block; it
 * holds no reference to the allocator (see the vtable's destroy).
 * Errors: C10C_STATUS_NULL_POINTER (out, allocator); C10C_STATUS_ERROR for nbytes above
 * PTRDIFF_MAX ("alloc_cpu() seems to have been called with negative number:
 * 18446744073709551615" for SIZE_MAX, as c10), and for a host allocator that reports success
 * without memory for nbytes > 0 ("allocator 'my_pool' returned no memory for 16 bytes");
 * C10C_STATUS_OUT_OF_MEMORY with the sizes involved (the built-in CPU allocators: c10's
 * "DefaultCPUAllocator: can't allocate memory: you tried to allocate 1125899906842624 bytes. ...");
 * a host allocator's failure as its status with "allocator 'my_pool' failed to allocate 16 bytes
 * (out of memory)", a status that is not a c10c_status failure code as C10C_STATUS_ERROR
 * ("... (status 5, which is not a c10c_status failure code)"); the caching CPU allocator's
 * C10C_STATUS_INVALID_ARGUMENT "C10C_CPU_ALLOC_CONF: ..." while the environment's configuration is
 * malformed (c10c_cpu_caching_allocator_configure); the CUDA allocator's (cuda.h). */
C10C_API c10c_status c10c_allocator_allocate(c10c_data_ptr *out, c10c_allocator *allocator,
                                             size_t nbytes);

/* Copies nbytes with the allocator's copy function (memcpy by default).
 * Errors: C10C_STATUS_NULL_POINTER (allocator; dst and src when nbytes > 0). */
C10C_API c10c_status c10c_allocator_copy(c10c_allocator *allocator, void *dst, const void *src,
                                         size_t nbytes);

/* The allocator's statistics (all zero when it keeps none). out->struct_size must be set.
 * Errors: C10C_STATUS_NULL_POINTER (allocator, out); C10C_STATUS_INVALID_ARGUMENT for a
 * struct_size below the first version's ("c10c_memory_stats.struct_size is 8, smaller than any
 * version (...); set it to sizeof(c10c_memory_stats)"); a host get_stats's failure as its status
 * with "allocator 'my_pool' failed to report its statistics (invalid argument)" (as allocate's). */
C10C_API c10c_status c10c_allocator_get_stats(c10c_memory_stats *out, c10c_allocator *allocator);

/* Returns the allocator's cached memory to the system (no-op when it caches nothing). For the
 * caching CPU allocator: the shared caches and the calling thread's cache; other threads' small
 * block caches (at most thread_cache_kb per size class each) are kept until those threads exit.
 * Errors: C10C_STATUS_NULL_POINTER. */
C10C_API c10c_status c10c_allocator_empty_cache(c10c_allocator *allocator);

/* The allocator's name ("cpu_caching", "cpu_default", the host's or "custom"; "" for NULL).
 * Ownership: borrowed, lives as long as the allocator. Errors: none. */
C10C_API const char *c10c_allocator_name(const c10c_allocator *allocator);

/* The device type the allocator serves (CPU for NULL). Errors: none. */
C10C_API c10c_device_type c10c_allocator_device_type(const c10c_allocator *allocator);

/* Frees what a data pointer owns (calls deleter(ctx) if both are set) and clears it.
 * NULL-safe. Errors: none. */
C10C_API void c10c_data_ptr_free(c10c_data_ptr *data_ptr);

/* ---- the registry: one allocator per device type (c10's SetAllocator / GetAllocator) ---- */

/* Installs allocator for its device type if priority >= the installed one's (c10's SetAllocator
 * rule; the built-in allocators count as installed at priority 0), and says in *out_installed
 * whether it did: a lower priority installs nothing, which is not an error (c10 ignores it
 * silently; here the caller learns of it) and returns C10C_STATUS_OK with *out_installed false.
 * The registry keeps a reference to what it installs and drops its reference to the allocator
 * replaced, whose vtable destroy then runs when its last other reference goes (storages made
 * from it, references the host kept, c10c_allocator_get results).
 * Errors: C10C_STATUS_NULL_POINTER (out_installed, allocator). */
C10C_API c10c_status c10c_allocator_set(bool *out_installed, c10c_allocator *allocator,
                                        int32_t priority);

/* The installed allocator of a device type: by default the CPU caching allocator for CPU and,
 * for CUDA, the built-in caching allocator (PyTorch's algorithm over driver segments; its
 * allocations fail with C10C_STATUS_UNAVAILABLE when CUDA is unavailable). Ownership: *out is a
 * new reference (release it with c10c_allocator_release; a no-op for the built-in allocators), so
 * it stays valid whatever c10c_allocator_set does on other threads. Errors:
 * C10C_STATUS_NULL_POINTER; C10C_STATUS_INVALID_ARGUMENT "Unknown device type 30";
 * C10C_STATUS_UNAVAILABLE "Allocator for XLA is not set." when none is installed. */
C10C_API c10c_status c10c_allocator_get(c10c_allocator **out, c10c_device_type device_type);

/* ---- CPU allocators ---- */

/* The plain CPU allocator: posix_memalign with 64-byte alignment, no caching (c10's default).
 * Ownership: borrowed, lives for the whole process. Errors: none. */
C10C_API c10c_allocator *c10c_cpu_default_allocator(void);

/* The caching CPU allocator, installed for CPU by default. Ownership: borrowed, process-long.
 * Errors: none. */
C10C_API c10c_allocator *c10c_cpu_caching_allocator(void);

/* Configures the caching CPU allocator with a "key:value,key:value" string (the environment
 * variable C10C_CPU_ALLOC_CONF is read the same way on first use). Keys:
 *   max_cached_mb:N   cap on cached (free, kept) bytes, in MiB (default 1024); 0 caches nothing;
 *                     a lower cap gives what the shared caches hold beyond it back at once
 *   huge_pages:True|False   transparent huge pages for blocks of 2 MiB and more (default True)
 *   thread_cache_kb:N  per-thread cache of small blocks, per size class, in KiB (default 256)
 *   fill:none|zero|junk  what new blocks hold: whatever was there (default), zeros, or c10's junk
 *                      pattern 0x7fedbeef (NaN as float32) to expose reads of uninitialized memory
 * A malformed C10C_CPU_ALLOC_CONF makes every allocation of the caching allocator fail with
 * C10C_STATUS_INVALID_ARGUMENT "C10C_CPU_ALLOC_CONF: <why>" until a call here succeeds.
 * Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_INVALID_ARGUMENT naming an unknown key
 * ("Unrecognized key 'foo' in CPU allocator config.") or a bad value; nothing changes then. */
C10C_API c10c_status c10c_cpu_caching_allocator_configure(const char *config);

/* Resets the peak of every statistic to its current value (torch's reset_peak_memory_stats).
 * Errors: C10C_STATUS_NULL_POINTER. */
C10C_API c10c_status c10c_allocator_reset_peak_stats(c10c_allocator *allocator);

/* A text table of the statistics, like torch.cuda.memory_summary(). Writes at most out_size bytes
 * including the NUL (a truncated table when it does not fit); *out_len (if not NULL) receives the
 * full length without the NUL. out may be NULL when out_size is 0, to ask for the length.
 * Errors: C10C_STATUS_NULL_POINTER (allocator; out when out_size > 0);
 * C10C_STATUS_BUFFER_TOO_SMALL "c10c_allocator_summary: 3667 bytes needed, the buffer has 0"
 * when the table and its NUL do not fit; c10c_allocator_get_stats's failures. */
C10C_API c10c_status c10c_allocator_summary(char *out, size_t out_size, size_t *out_len,
                                            c10c_allocator *allocator);

/* ---- malloc-style access to the caching CPU allocator (ABI 1.1) ----
 *
 * For hosts that hand out raw pointers and free by address (numpy's NEP 49 data allocator,
 * C code replacing malloc): blocks of the caching CPU allocator, 64-byte aligned, counted in its
 * statistics, subject to its cache cap and released by c10c_allocator_empty_cache. Blocks up to
 * 256 KiB carry a 64-byte header; larger ones carry none (they are looked up by address). Any
 * thread may free or reallocate a block any thread allocated. */

/* Allocates nbytes (0 is taken as 1, so every success is a unique address) into *out.
 * Ownership: free *out with c10c_cpu_free. Errors: C10C_STATUS_NULL_POINTER (out);
 * C10C_STATUS_OUT_OF_MEMORY with c10's "DefaultCPUAllocator: can't allocate memory: you tried to
 * allocate N bytes. ..."; the caching allocator's configuration error (c10c_allocator_allocate).
 * *out is NULL on failure. */
C10C_API c10c_status c10c_cpu_malloc(void **out, size_t nbytes);

/* As c10c_cpu_malloc for count * size bytes, all zero. Memory fresh from the system is not
 * touched (it is zero already); cached memory is cleared. Ownership: free *out with
 * c10c_cpu_free. Errors: c10c_cpu_malloc's;
 * C10C_STATUS_OUT_OF_MEMORY when count * size overflows ("c10c_cpu_calloc: 3 elements of
 * 6148914691236517206 bytes overflow the address space"). */
C10C_API c10c_status c10c_cpu_calloc(void **out, size_t count, size_t size);

/* Resizes the block at ptr to nbytes, keeping its first min(old, nbytes) bytes; *out may differ
 * from ptr (which is then freed). ptr NULL: c10c_cpu_malloc. On failure *out is NULL and ptr
 * still owns its block, unchanged (C's realloc rule). Ownership: *out replaces ptr; free *out
 * with c10c_cpu_free.
 * Errors: c10c_cpu_malloc's; C10C_STATUS_INVALID_ARGUMENT for a block c10c_cpu_free would
 * refuse. */
C10C_API c10c_status c10c_cpu_realloc(void **out, void *ptr, size_t nbytes);

/* Frees a block of c10c_cpu_malloc, c10c_cpu_calloc or c10c_cpu_realloc (NULL-safe). A second
 * free of a small block, or an address with no header of this layer, is refused (nothing is
 * freed; the message says why: "c10c_cpu_free: 0x7f3a... was not allocated by c10c_cpu_malloc, or
 * was freed already"); other foreign addresses are undefined behaviour, as for free(). */
C10C_API void c10c_cpu_free(void *ptr);

/* The bytes asked for when the block at ptr was allocated (0 for NULL, and for an address
 * c10c_cpu_free would refuse, with its message). Errors: none. */
C10C_API size_t c10c_cpu_allocation_size(const void *ptr);

C10C_END_DECLS

#endif /* C10C_ALLOCATOR_H */
