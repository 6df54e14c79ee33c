/* Per-thread free lists of object shells (tensors and storages), so that creating and destroying
 * a tensor, the hottest path of a tensor runtime, reaches malloc only when a thread's list is
 * empty (see shell_cache.c). */
#ifndef C10C_SHELL_CACHE_H
#define C10C_SHELL_CACHE_H

#include "internal.h"

typedef enum c10c__shell_kind {
  C10C__SHELL_TENSOR,
  C10C__SHELL_STORAGE,
  C10C__SHELL_KINDS
} c10c__shell_kind;

/* An uninitialized shell of `size` bytes (always the same size for a kind); NULL when out of
 * memory. */
void *c10c__shell_alloc(c10c__shell_kind kind, size_t size);

/* Gives a shell of `size` bytes from c10c__shell_alloc back (NULL is ignored). */
void c10c__shell_free(c10c__shell_kind kind, void *shell, size_t size);

#endif /* C10C_SHELL_CACHE_H */
