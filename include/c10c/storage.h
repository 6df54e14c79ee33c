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
 * C10C_STATUS_OUT_OF_MEMORY (also, on a 32-bit platform, for nbytes beyond PTRDIFF_MAX: "can't
 * allocate memory: you tried to allocate <n> bytes, more than one allocation can span in this
 * 32-bit process (at most 2147483647 bytes)"); and the allocator's other failures
 * (c10c_allocator_allocate). */
C10C_API c10c_status c10c_storage_new(c10c_storage **out, int64_t nbytes, c10c_allocator *allocator,
                                      c10c_device_type device_type, bool resizable);

/* A storage over external memory: nbytes at data on device. deleter(ctx) is called exactly once
 * when the last reference goes (if deleter and ctx are both non-NULL), on that thread; on failure
 * it is not called and the caller keeps the memory. The storage is not resizable.
 * Ownership: *out is a new reference (NULL on failure).
 * Errors: C10C_STATUS_NULL_POINTER (out, or data NULL with nbytes > 0); C10C_STATUS_ERROR for a
 * negative nbytes ("alloc_cpu() seems to have been called with negative number: <n>", as
 * c10c_storage_new); C10C_STATUS_INVALID_ARGUMENT for an invalid device ("Unknown device type 40",
 * "Device index must be -1 or non-negative, got -7", and on a 32-bit platform for nbytes beyond
 * PTRDIFF_MAX: "external memory of <n> bytes cannot exist in this 32-bit process (at most
 * 2147483647 bytes)"); C10C_STATUS_OUT_OF_MEMORY. */
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
 * 18446744073709551615" for -1 (as torch's resize_); C10C_STATUS_OUT_OF_MEMORY (also beyond
 * PTRDIFF_MAX bytes on a 32-bit platform, as c10c_storage_new) and the allocator's other failures
 * (the storage is then unchanged). */
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

/* torch's share_memory_(): c10c_storage_share_fd for a CPU storage; a CUDA storage (shared
 * through CUDA IPC) is left as it is. Since ABI 1.1 the memory is a memory file any process can
 * map from its descriptor (before: an anonymous mapping only forked children saw). On Windows,
 * which has no memory files to pass, c10c_storage_share_filename (torch's file_system strategy,
 * its only one there), and sharing by descriptor fails with C10C_STATUS_ERROR "... not available
 * on Windows ...".
 * Errors: as c10c_storage_share_fd (C10C_STATUS_ERROR "_share_fd_: only available on CPU" for
 * other devices). */
C10C_API c10c_status c10c_storage_share_memory(c10c_storage *storage);

/* Whether the storage's bytes are in memory other processes can open: shared by descriptor or
 * by name, received from another process, or a file mapped with shared=true (false for NULL,
 * and for a file mapped privately, where torch says true). Errors: none. */
C10C_API bool c10c_storage_is_shared(const c10c_storage *storage);

/* ---- Sharing with other processes (ABI 1.1) --------------------------------------------------
 * torch's MapAllocator and RefcountedMapAllocator (aten/src/ATen/MapAllocator.cpp) and its
 * StorageSharing.cpp methods. Sharing moves a CPU storage's bytes, in place, into memory any
 * process can map: every tensor over the storage sees the new memory, the storage is no longer
 * resizable, and its space is reserved at once (posix_fallocate), so running out shows here as
 * an error and never later as SIGBUS. The old bytes are freed at once, unless their address
 * was handed out (c10c_storage_data, c10c_storage_data_ptr, c10c_tensor_data, a DLPack export,
 * and always for external memory, whose deleter runs at the last release): then they stay until
 * the storage goes, so that pointer never dangles. No storage costs an open
 * descriptor except one shared by descriptor. Not thread-safe against another thread reading
 * the storage's data pointer meanwhile (as c10's set_data_ptr). */

/* Moves the bytes into a memory file (memfd_create), one copy: torch's _share_fd_cpu_. A storage
 * shared already (by descriptor, by name, or a file mapped shared) stays as it is; a privately
 * mapped file is copied. On failure the storage is unchanged.
 * Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_ERROR "_share_fd_: only available on CPU"
 * (CUDA, meta and other devices), "cannot reserve N bytes of shared memory: No space left on
 * device (28); M bytes free on its file system", "unable to create a shared memory file: ...";
 * C10C_STATUS_OUT_OF_MEMORY. */
C10C_API c10c_status c10c_storage_share_fd(c10c_storage *storage);

/* The memory file descriptor of a storage shared by descriptor (c10c_storage_share_fd,
 * c10c_storage_new_using_fd, c10c_storage_new_shared_fd) and its size in bytes: what another
 * process needs (with the descriptor passed over a Unix socket, SCM_RIGHTS) to open it with
 * c10c_storage_new_shared_fd. Ownership: *out_fd is borrowed: valid while the storage lives;
 * dup it to keep it. Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_ERROR when the storage is
 * not shared by descriptor ("storage is not shared by file descriptor; call share_fd first",
 * "storage is shared by name (/c10c_...), not by file descriptor", "storage maps the file <f>,
 * not a shared memory file descriptor"), and for a storage received when half the descriptor
 * limit was in use ("... its descriptor was closed after mapping; it cannot be shared by file
 * descriptor again (clone it)"). */
C10C_API c10c_status c10c_storage_shared_fd(int *out_fd, int64_t *out_nbytes,
                                            const c10c_storage *storage);

/* A storage over nbytes of the memory file fd that another process shared: torch's
 * _new_shared_fd_cpu. The file must be sealed against shrinking (F_SEAL_SHRINK, as
 * c10c_storage_share_fd seals it): a sender that could shrink it under the mapping would end
 * this process with SIGBUS, so an unsealed file is refused (torch maps any; its own
 * _share_fd_cpu_ files are POSIX shm objects, which take no seals, and are refused too). Where
 * there are no seals (macOS, Windows) every descriptor is refused. The caller keeps fd (close it
 * when done). The storage keeps a duplicate of
 * it, so it can be shared on, only while that duplicate's number is below half the soft
 * RLIMIT_NOFILE; past that it maps and closes it, so any number of received storages never
 * exhausts the descriptors (c10c_storage_shared_fd then says so). Not resizable.
 * Ownership: *out is a new reference (NULL on failure).
 * Errors: C10C_STATUS_NULL_POINTER (out); C10C_STATUS_ERROR for a negative nbytes ("unable to
 * mmap -1 bytes from a shared memory file descriptor: negative size"), a descriptor that is not
 * open ("could not use shared memory file descriptor 7: Bad file descriptor (9)"), one that is
 * not a regular file or memory file (a pipe, a socket: "file descriptor 7 is not a shared memory
 * file (not a regular file)"), one not sealed against shrinking ("file descriptor 7 is not
 * sealed against shrinking (F_SEAL_SHRINK): its sender could shrink it under this process's
 * mapping (SIGBUS); ..."), "cannot check that file descriptor 7 is sealed against shrinking: ..."
 * where seals cannot be read, nbytes beyond its size ("storage size 100 is larger than the
 * mapping behind file descriptor 7 (64 bytes)"), mmap's failures; C10C_STATUS_OUT_OF_MEMORY. */
C10C_API c10c_status c10c_storage_new_shared_fd(c10c_storage **out, int fd, int64_t nbytes);

/* A new storage of nbytes zero bytes in a memory file, shared by descriptor: torch's
 * _new_using_fd_cpu. Ownership: *out is a new reference (NULL on failure).
 * Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_ERROR for a negative nbytes and as
 * c10c_storage_share_fd; C10C_STATUS_OUT_OF_MEMORY. */
C10C_API c10c_status c10c_storage_new_using_fd(c10c_storage **out, int64_t nbytes);

/* Moves the bytes into a new named POSIX shared memory object "/c10c_<pid>_<random>" (created
 * O_EXCL, mode 0600), one copy: torch's _share_filename_cpu_. The object has torch's
 * RefcountedMapAllocator layout, so torch processes open our names and we open theirs: nbytes +
 * 64 bytes, an atomic int32 reference count at offset 0 (1 for the creator, +1 for each opener,
 * and whoever drops it to 0 unlinks the name), the bytes at offset 64. No descriptor stays open.
 * A storage shared by name stays as it is; any other (shared by descriptor or a mapped file
 * included) is copied, as torch. On failure the storage is unchanged and no name is left.
 * Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_ERROR "_share_filename_: only available on CPU",
 * "cannot reserve N bytes of shared memory: ... M bytes free on its file system" (N counts the
 * 64-byte header), "unable to create shared memory object </c10c_...>: ...";
 * C10C_STATUS_OUT_OF_MEMORY. */
C10C_API c10c_status c10c_storage_share_filename(c10c_storage *storage);

/* The name of a storage shared by name (c10c_storage_share_filename, new_using_filename,
 * new_shared_filename), for c10c_storage_new_shared_filename in another process.
 * Ownership: *out is borrowed, valid while the storage lives.
 * Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_ERROR "storage is not shared by name; call
 * share_filename first". */
C10C_API c10c_status c10c_storage_shared_name(const char **out, const c10c_storage *storage);

/* Adds delta to the reference count in the header of a storage shared by name and writes the
 * count it had before (torch's RefcountedMapAllocator incref/decref, behind its storages'
 * _shared_incref and _shared_decref): a process that sends a name on holds a reference for the
 * message in flight. The name is not unlinked here when the count reaches 0; the caller decides.
 * The count never leaves 0 to INT32_MAX (torch's int wraps): a delta that would take it out is
 * refused and the count left as it was.
 * Ownership: none. Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_ERROR "storage is not shared by
 * name; call share_filename first"; C10C_STATUS_OVERFLOW "shared memory object </x>: cannot add
 * -3 to the reference count 2: it would be -1, outside 0 to INT32_MAX (2147483647); the count is
 * unchanged" (*out_before is the count). */
C10C_API c10c_status c10c_storage_shared_refcount_add(int32_t *out_before, c10c_storage *storage,
                                                      int32_t delta);

/* A storage over the named shared memory object name, nbytes long (torch's
 * _new_shared_filename_cpu): maps it, adds 1 to its reference count and closes the descriptor.
 * Names made by torch ("/torch_<pid>_<n>") open as ours do. Not resizable.
 * Ownership: *out is a new reference (NULL on failure); name is copied.
 * Errors: C10C_STATUS_NULL_POINTER (out, name); C10C_STATUS_ERROR for a name other than '/' and
 * 1 to 254 of [A-Za-z0-9_.-] ("invalid shared memory name <...>"), a negative nbytes, a name that
 * does not exist ("unable to open shared memory object
 * </c10c_1_2> in read-write mode: No such file or directory (2)", torch's words), an object of
 * another user ("shared memory object </x> belongs to user 65534, not to this process's user
 * 0: a handle from another user is refused"), one that is not a regular file, one shorter than
 * nbytes + 64 ("shared memory object </x> holds 64 bytes, fewer than the 164 a storage of 100
 * bytes needs with its 64-byte reference count header"), and a stale one whose count is 0 or
 * less ("shared memory object </x> is stale: its reference count is 0 (every user released
 * it)"); C10C_STATUS_OVERFLOW for one whose count is INT32_MAX already ("shared memory object
 * </x> cannot be opened: its reference count is already 2147483647 (INT32_MAX), ..."; torch's
 * count wraps there), the count unchanged; C10C_STATUS_OUT_OF_MEMORY. */
C10C_API c10c_status c10c_storage_new_shared_filename(c10c_storage **out, const char *name,
                                                      int64_t nbytes);

/* A new storage of nbytes zero bytes in a new named object, shared by name (torch's
 * _new_using_filename_cpu). Ownership: *out is a new reference (NULL on failure).
 * Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_ERROR for a negative nbytes and as
 * c10c_storage_share_filename; C10C_STATUS_OUT_OF_MEMORY. */
C10C_API c10c_status c10c_storage_new_using_filename(c10c_storage **out, int64_t nbytes);

/* The bytes of a file, mapped: torch's UntypedStorage.from_file(filename, shared, nbytes), with
 * its messages. shared=true opens the file read-write (creating it, mode 0600), grows it to
 * nbytes if shorter and maps it MAP_SHARED (writes reach the file); shared=false maps it
 * copy-on-write (writes stay in this process) and refuses a shorter file. nbytes=0 maps nothing
 * and opens nothing (an empty storage, as torch). Growing reserves the space (torch instead
 * ftruncates and writes a zero over the file's first byte). Not resizable.
 * Ownership: *out is a new reference (NULL on failure); filename is copied.
 * Errors: C10C_STATUS_NULL_POINTER (out, filename); C10C_STATUS_ERROR "unable to open file <f>
 * in read-write mode: No such file or directory (2)" (read-only mode for shared=false), "unable
 * to mmap -1 bytes from file <f>: Cannot allocate memory (12)" for a negative nbytes, "file <f>
 * size <3> is smaller than the required mapping size <10>" (shared=false), "cannot reserve N
 * bytes of file space: ... M bytes free on its file system" (shared=true), "file <f> is not a
 * regular file"; C10C_STATUS_OUT_OF_MEMORY. */
C10C_API c10c_status c10c_storage_new_from_file(c10c_storage **out, const char *filename,
                                                bool shared, int64_t nbytes);

/* The file a storage maps with shared=true (c10c_storage_new_from_file), else NULL: torch's
 * UntypedStorage.filename. Ownership: *out is borrowed, valid while the storage lives.
 * Errors: C10C_STATUS_NULL_POINTER (out, storage). */
C10C_API c10c_status c10c_storage_filename(const char **out, const c10c_storage *storage);

C10C_END_DECLS

#endif /* C10C_STORAGE_H */
