/* What tensors need from storages beyond the public API. */
#ifndef C10C_STORAGE_INTERNAL_H
#define C10C_STORAGE_INTERNAL_H

#include "internal.h"

/* The version counter shared by the tensors over a storage; in-place writes bump it. */
int64_t c10c__storage_version(const c10c_storage *storage);
void c10c__storage_bump_version(c10c_storage *storage);

/* Drops the external deleter without calling it: for a constructor that fails after making the
 * storage and must leave the memory with its caller. */
void c10c__storage_forget_deleter(c10c_storage *storage);

/* Replaces the storage's data pointer (the same bytes, held through another deleter) and
 * returns the one it had: torch's StorageImpl::set_data_ptr, for sharing CUDA memory. */
c10c_data_ptr c10c__storage_swap_data_ptr(c10c_storage *storage, c10c_data_ptr replacement);

#endif /* C10C_STORAGE_INTERNAL_H */
