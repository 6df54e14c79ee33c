/* Allocator configuration strings (see alloc_config.c). */
#ifndef C10C_ALLOC_CONFIG_H
#define C10C_ALLOC_CONFIG_H

#include "internal.h"

/* The caching CPU allocator's settings. */
typedef struct c10c__cpu_alloc_config {
  size_t max_cached_bytes;
  bool huge_pages;
  size_t thread_cache_bytes; /* per size class */
} c10c__cpu_alloc_config;

/* Parses "key:value,..." (keys max_cached_mb, huge_pages, thread_cache_kb) over *into. On error
 * writes a message to msg, leaves *into unchanged and returns C10C_STATUS_INVALID_ARGUMENT. */
c10c_status c10c__parse_cpu_alloc_config(const char *text, c10c__cpu_alloc_config *into, char *msg,
                                         size_t msg_size);

#endif /* C10C_ALLOC_CONFIG_H */
