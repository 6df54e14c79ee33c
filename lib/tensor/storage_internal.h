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
/* The data pointer without marking it handed out (for the library's own copies and fills). */
void *c10c__storage_data(const c10c_storage *storage);
const c10c_data_ptr *c10c__storage_data_ptr_ref(const c10c_storage *storage);
/* Records that the storage's address left the library (c10c_tensor_data, DLPack): sharing then
 * keeps the old bytes until the storage goes. */
void c10c__storage_mark_exposed(const c10c_storage *storage);

/* Replaces a CPU storage's bytes by fresh (a mapping holding a copy of them, nbytes long): the
 * storage is shared and not resizable from then on, and its old bytes are freed unless their
 * address was handed out (then kept until the storage goes). On failure (out of memory) nothing
 * changes and the caller still owns fresh. */
c10c_status c10c__storage_install_shared(c10c_storage *storage, c10c_data_ptr fresh);
void c10c__storage_set_shared(c10c_storage *storage, bool shared);

#endif /* C10C_STORAGE_INTERNAL_H */
