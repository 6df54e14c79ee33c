/* libc10c: storages, c10's StorageImpl: refcounted, untyped bytes on a device.
 *
 * A storage owns one data pointer and records its size in bytes, the allocator that made it (if
 * any) and whether it may be resized. Storages made by an allocator are resizable; storages over
 * external memory (a numpy array, a DLPack tensor, a host buffer) are not, and their deleter is
 * called exactly once, when the last reference goes. Reference counting is c10's intrusive_ptr:
 * strong references keep the bytes, weak references keep only the storage shell.
 *
 * Thread-safety: retain/release and weak references from any thread. Resizing or reading the
 * data pointer of one storage while another thread resizes it is the caller's race, as in c10.
 */
#ifndef C10C_STORAGE_H
#define C10C_STORAGE_H

#include "allocator.h"
#include "common.h"
#include "device.h"

C10C_BEGIN_DECLS

typedef struct c10c_storage c10c_storage;
/* A weak reference to a storage: does not keep its bytes, can be locked into a strong one while
 * the storage lives. */
typedef struct c10c_weak_storage c10c_weak_storage;

/* A storage of nbytes from allocator (NULL: the installed allocator of device_type, the CPU
 * caching allocator by default). Its bytes are uninitialized; 0 bytes give a NULL data pointer,
 * and so does every size on the meta device (C10C_DEVICE_TYPE_META, whose built-in allocator
 * gives no bytes: a meta storage has a size and no data, resizes included).
 * Ownership: *out is a new reference (NULL on failure); the storage retains allocator.
 * Errors: C10C_STATUS_NULL_POINTER (out); C10C_STATUS_ERROR for a negative nbytes (c10's
 * "alloc_cpu() seems to have been called with negative number: 18446744073709551615" for -1, a
 * RuntimeError in torch); C10C_STATUS_INVALID_ARGUMENT "Unknown device type 40", and "allocator
 * 'cpu_default' serves CPU memory, not CUDA" for an allocator of another device type;
 * C10C_STATUS_UNAVAILABLE "Allocator for MAIA is not set." when no allocator serves device_type;
 * C10C_STATUS_OUT_OF_MEMORY; and the allocator's other failures (c10c_allocator_allocate). */
C10C_API c10c_status c10c_storage_new(c10c_storage **out, int64_t nbytes, c10c_allocator *allocator,
                                      c10c_device_type device_type, bool resizable);

/* A storage over external memory: nbytes at data on device. deleter(ctx) is called exactly once
 * when the last reference goes (if deleter and ctx are both non-NULL), on that thread; on failure
 * it is not called and the caller keeps the memory. The storage is not resizable.
 * Ownership: *out is a new reference (NULL on failure).
 * Errors: C10C_STATUS_NULL_POINTER (out, or data NULL with nbytes > 0); C10C_STATUS_ERROR for a
 * negative nbytes ("alloc_cpu() seems to have been called with negative number: <n>", as
 * c10c_storage_new); C10C_STATUS_INVALID_ARGUMENT for an invalid device ("Unknown device type 40",
 * "Device index must be -1 or non-negative, got -7"); C10C_STATUS_OUT_OF_MEMORY. */
C10C_API c10c_status c10c_storage_new_external(c10c_storage **out, void *data, int64_t nbytes,
                                               c10c_device device, c10c_deleter deleter, void *ctx);

/* Adds a strong reference (NULL-safe). Ownership: returns storage, owned once more.
 * Errors: none. */
C10C_API c10c_storage *c10c_storage_retain(c10c_storage *storage);

/* Drops a strong reference (NULL-safe); the last one frees the bytes. In debug builds a release
 * of a storage that has no strong reference left but is kept by a weak reference is detected:
 * the counts are left alone and the thread's last error says "double release detected"
 * (C10C_STATUS_ERROR). Errors: none returned. */
C10C_API void c10c_storage_release(c10c_storage *storage);

/* Size in bytes. 0 for NULL. Errors: none. */
C10C_API int64_t c10c_storage_nbytes(const c10c_storage *storage);

/* The data pointer's data (NULL for 0 bytes, for NULL, and after release_resources).
 * Ownership: borrowed, valid until the storage is resized or freed. Errors: none. */
C10C_API void *c10c_storage_data(const c10c_storage *storage);

/* The whole data pointer. Ownership: borrowed (do not free it).
 * Errors: C10C_STATUS_NULL_POINTER (out, storage). */
C10C_API c10c_status c10c_storage_data_ptr(c10c_data_ptr *out, const c10c_storage *storage);

/* The device of the bytes. {CPU, -1} for NULL. Errors: none. */
C10C_API c10c_device c10c_storage_device(const c10c_storage *storage);

/* Whether the storage can be resized. false for NULL. Errors: none. */
C10C_API bool c10c_storage_resizable(const c10c_storage *storage);

/* The allocator that made the bytes (NULL for external memory and for NULL).
 * Ownership: borrowed. Errors: none. */
C10C_API c10c_allocator *c10c_storage_allocator(const c10c_storage *storage);

/* Resizes to nbytes as ATen's resize_bytes_cpu: new bytes from the storage's allocator, the
 * common prefix copied, the old bytes freed; 0 frees the bytes. New bytes are uninitialized.
 * Tensors over the storage that reach past a smaller size keep their geometry and refuse every
 * access to their data until it grows back (tensor.h).
 * Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_ERROR "Trying to resize storage that is not
 * resizable" (also every storage over external memory; checked first, as c10);
 * C10C_STATUS_ERROR "alloc_cpu() seems to have been called with negative number:
 * 18446744073709551615" for -1 (as torch's resize_); C10C_STATUS_OUT_OF_MEMORY and the
 * allocator's other failures (the storage is then unchanged). */
C10C_API c10c_status c10c_storage_resize(c10c_storage *storage, int64_t nbytes);

/* Records a new size without touching the bytes (c10's set_nbytes), at most what the storage's
 * memory holds (its size when made or last resized; c10 records any size, and its tensors then
 * read past the memory). Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_INVALID_ARGUMENT for a
 * negative size ("storage size must be non-negative, got -2") or one above the memory's
 * ("set_nbytes: 401 bytes is more than the storage's memory holds (400 bytes); resize it to grow
 * it"). */
C10C_API c10c_status c10c_storage_set_nbytes(c10c_storage *storage, int64_t nbytes);

/* Number of strong references (0 for NULL). Errors: none. */
C10C_API uint32_t c10c_storage_use_count(const c10c_storage *storage);

/* Number of weak references plus one while strong references exist (c10's weak_use_count).
 * 0 for NULL. Errors: none. */
C10C_API uint32_t c10c_storage_weak_use_count(const c10c_storage *storage);

/* A weak reference to storage. Ownership: *out is a new weak reference (NULL on failure).
 * Errors: C10C_STATUS_NULL_POINTER (out, storage). */
C10C_API c10c_status c10c_storage_weak_ref(c10c_weak_storage **out, c10c_storage *storage);

/* A strong reference from a weak one, or *out = NULL (and C10C_STATUS_OK) once the storage's
 * strong count reached 0 (c10's weak_intrusive_ptr::lock). Ownership: *out is a new reference.
 * Errors: C10C_STATUS_NULL_POINTER (out, weak). */
C10C_API c10c_status c10c_weak_storage_lock(c10c_storage **out, c10c_weak_storage *weak);

/* Adds a weak reference (NULL-safe). Ownership: returns weak, owned once more. Errors: none. */
C10C_API c10c_weak_storage *c10c_weak_storage_retain(c10c_weak_storage *weak);

/* Drops a weak reference (NULL-safe); the last reference of any kind frees the shell.
 * Errors: none. */
C10C_API void c10c_weak_storage_release(c10c_weak_storage *weak);

/* The storage's strong count as seen through a weak reference (0 once expired, or for NULL).
 * Errors: none. */
C10C_API uint32_t c10c_weak_storage_use_count(const c10c_weak_storage *weak);

/* Whether the storage's strong count reached 0 (true for NULL). Errors: none. */
C10C_API bool c10c_weak_storage_expired(const c10c_weak_storage *weak);

/* Marks the storage read-only, for memory its owner exported as such (a read-only numpy array, a
 * DLPack export with the READ_ONLY flag): from then on in-place writes to any tensor over it
 * (copy_, fill_, zero_, bump_version) fail with C10C_STATUS_ERROR "cannot write to a read-only
 * tensor: ..." (tensor.h). There is no way back. Errors: C10C_STATUS_NULL_POINTER. */
C10C_API c10c_status c10c_storage_set_read_only(c10c_storage *storage);

/* Whether the storage is read-only (false for NULL). Errors: none. */
C10C_API bool c10c_storage_is_read_only(const c10c_storage *storage);

/* torch's share_memory_(): moves a CPU storage's bytes into memory shared with the processes
 * this one forks from then on (an anonymous MAP_SHARED mapping), in place: every tensor over
 * the storage sees the new memory, and writes after a fork reach both processes. The storage
 * becomes non-resizable (as torch's shared storages). The old bytes are kept until the storage
 * is freed, so pointers read before the move (a numpy array, a DLPack export) stay valid (torch
 * frees them). A shared storage or a CUDA storage (shared through CUDA IPC) is left as it is.
 * Not thread-safe against other threads reading the storage's data pointer meanwhile (as c10's
 * set_data_ptr). Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_OUT_OF_MEMORY "share_memory_:
 * cannot map N bytes of shared memory (errno E)"; C10C_STATUS_ERROR for other devices. */
C10C_API c10c_status c10c_storage_share_memory(c10c_storage *storage);

/* Whether c10c_storage_share_memory moved the storage into shared memory (false for NULL).
 * Errors: none. */
C10C_API bool c10c_storage_is_shared(const c10c_storage *storage);

C10C_END_DECLS

#endif /* C10C_STORAGE_H */
