/* libc10c: CUDA storages and events shared with other processes, in PyTorch's wire format.
 *
 * A CUDA storage is shared as torch's UntypedStorage._share_cuda_() shares it: the handle bytes
 * of c10's CUDACachingAllocator::shareIpcHandle (version 2, type 'c' and the segment's 64-byte
 * cudaIpcMemHandle_t; or, for memory of an expandable segment, type 'e', c10's 24-byte
 * ShareHeader {pid, zeroed padding, page size, page count} and one int32 file descriptor per page
 * that covers the block, which the consumer takes from the producer with pidfd_getfd; these
 * integers are little-endian on every target, the bytes torch writes on the little-endian
 * machines CUDA runs on) and the storage's offset in that memory; a reference counter in a named
 * CPU shared-memory file (torch's CudaIPCRefCountersFile: 10000 int64 counters after a 64-byte
 * header whose int32 at 0 counts the processes that map it; libc10c's files also carry a magic
 * and a version in that header, which torch ignores), which the consumer decrements when
 * it lets the memory go; and an interprocess event recorded on the producer's current stream,
 * which the consumer's current stream waits for before it uses the memory. A storage the
 * producer frees while a consumer's counter is above 0 is kept ("limbo") until
 * c10c_cuda_ipc_collect finds the counter at 0; an allocation that runs out of memory collects
 * first. A consumer maps each handle once per process and device, counted, and unmaps it when
 * the last storage over it goes (c10's ipcMemHandle_to_devptr). When the producer exits (or
 * unloads libc10c), its unused counter file is removed and it stops counting itself in the
 * others, so that no name outlives the last process that maps it (torch's
 * ~CudaIPCGlobalEntities); a producer killed leaves its file behind, as torch's does.
 *
 * Beyond torch: a storage received from another process can be shared again (the original
 * handle is passed on and the original producer's counter raised for the new consumer).
 *
 * Every call needs a usable driver with its IPC entry points (C10C_STATUS_UNAVAILABLE /
 * C10C_STATUS_NOT_IMPLEMENTED with the reason otherwise). Added in ABI 1.1. */
#ifndef C10C_CUDA_IPC_H
#define C10C_CUDA_IPC_H

#include "common.h"
#include "cuda.h"
#include "storage.h"

C10C_BEGIN_DECLS

enum {
  /* Bytes of a cudaIpcMemHandle_t / cudaIpcEventHandle_t (CUDA's CU_IPC_HANDLE_SIZE). */
  C10C_CUDA_IPC_HANDLE_SIZE = 64,
  /* Bytes of ref_counter_handle, with its NUL. */
  C10C_CUDA_IPC_NAME_SIZE = 64,
  /* Counters in a reference counter file (torch's CUDA_IPC_REF_COUNTER_FILE_SIZE). */
  C10C_CUDA_IPC_REF_COUNTER_FILE_SIZE = 10000
};

/* The fields of torch's _share_cuda_() 8-tuple except the handle bytes: (device, handle,
 * storage_size_bytes, storage_offset_bytes, ref_counter_handle, ref_counter_offset,
 * event_handle, event_sync_required). Fields are only ever appended; struct_size says how many
 * the caller's struct holds. */
typedef struct c10c_cuda_ipc_info {
  uint32_t struct_size; /* set by the caller to sizeof(c10c_cuda_ipc_info) */
  int32_t device;
  int64_t storage_size_bytes;
  int64_t storage_offset_bytes; /* of the storage in the memory the handle names */
  char ref_counter_handle[C10C_CUDA_IPC_NAME_SIZE]; /* the counter file's name; "" for none */
  int64_t ref_counter_offset;                       /* the counter's index in it */
  uint8_t event_handle[C10C_CUDA_IPC_HANDLE_SIZE];  /* all 0 unless event_sync_required */
  bool event_sync_required;
  uint64_t handle_len; /* bytes of the memory handle (c10c_storage_share_cuda writes them) */
} c10c_cuda_ipc_info;

/* Shares a CUDA storage with other processes: torch's UntypedStorage._share_cuda_(). Writes the
 * tuple's fields to *out and the memory handle's bytes (out->handle_len of them) to handle
 * (handle_size bytes); a storage of 0 bytes has no handle (handle_len 0, no counter, no event).
 * The storage's memory is from then on freed only when no consumer holds it (the limbo above).
 * Ownership: storage is borrowed; nothing is kept from the caller's buffers.
 * Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_INVALID_ARGUMENT "_share_cuda_: only available on
 * CUDA" for another device, and for memory the CUDA caching allocator did not allocate (external
 * memory); C10C_STATUS_INVALID_ARGUMENT for struct_size below the first version;
 * C10C_STATUS_BUFFER_TOO_SMALL with out->handle_len set when handle_size is less (nothing is
 * shared then); C10C_STATUS_NOT_IMPLEMENTED when the driver cannot export the memory (no
 * cuIpc* entry points, or no cuMemExportToShareableHandle for an expandable segment); the
 * driver's. */
C10C_API c10c_status c10c_storage_share_cuda(c10c_cuda_ipc_info *out, uint8_t *handle,
                                             size_t handle_size, c10c_storage *storage);

/* A storage over memory another process shared: torch's UntypedStorage._new_shared_cuda(...).
 * Waits (on device's current stream) for the producer's event when event_sync_required, maps the
 * handle (once per process and device) and makes a non-resizable storage of storage_size_bytes
 * at storage_offset_bytes in it; when the storage goes, device's current stream is synchronized,
 * the mapping's count dropped and the producer's counter decremented.
 * Ownership: *out is a new reference; info and handle are read, not kept.
 * Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_INVALID_ARGUMENT for a negative size or offset,
 * handle bytes that are not a handle ("unexpected or illformed shareable handle type", "received
 * sharable handle from a future version of torch that this version does not know how to
 * handle"), struct_size below the first version; "CUDA error: invalid device ordinal"; the
 * driver's (a handle of memory that is gone, opened in the process that exported it);
 * C10C_STATUS_ERROR "pidfd_open:...", "pidfd_getfd: ..." (c10's) for an expandable segment's pages
 * whose process or descriptors are gone; C10C_STATUS_INVALID_ARGUMENT for a size and offset
 * beyond the memory the handle maps, and for a ref_counter_handle that names something other
 * than a counter file ("_new_shared_cuda: </c10c_1_abc> is not a CUDA IPC reference counter
 * file ...": a shared storage, say, whose bytes a release would have changed) or one of another
 * user. A counter file is libc10c's (its magic and a version this library knows) or torch's (a
 * "/torch_<pid>_<n>_<n>" file of exactly 80064 bytes whose header holds only the count); one
 * that is gone already is not an error (torch's best effort). */
C10C_API c10c_status c10c_storage_new_shared_cuda(c10c_storage **out,
                                                  const c10c_cuda_ipc_info *info,
                                                  const uint8_t *handle, size_t handle_len);

/* Whether the storage is memory received from another process (torch's received_cuda). */
C10C_API bool c10c_storage_is_received_cuda(const c10c_storage *storage);

/* Decrements a producer's reference counter: torch's _release_ipc_counter_cuda. A counter file
 * that is gone (its producer exited, or every user released it) is not an error (torch's best
 * effort); a name that is not a counter file (as c10c_storage_new_shared_cuda says) is refused
 * and nothing is written to it.
 * Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_INVALID_ARGUMENT for an offset outside the file,
 * a name that is not a counter file ("_release_ipc_counter: its reference counter file </x>:
 * Invalid argument (22): it is not a CUDA IPC reference counter file ...") or one of another
 * user; C10C_STATUS_ERROR for a counter file of a newer
 * layout, one whose header count is INT32_MAX, and the system's errors opening it. */
C10C_API c10c_status c10c_cuda_ipc_release_counter(const char *ref_counter_handle,
                                                   int64_t ref_counter_offset);

/* Frees the shared storages' memory kept for consumers whose counters reached 0 (torch's
 * torch.cuda.ipc_collect / CudaIPCCollect). *freed (may be NULL) says whether any was freed. */
C10C_API c10c_status c10c_cuda_ipc_collect(bool *freed);

/* Storages freed by this process that consumers still hold (torch's limbo size). */
C10C_API int64_t c10c_cuda_ipc_limbo_count(void);

/* Does now what the library does as the process exits: the reference-counter file of this
 * process's next shares goes if no consumer holds a counter in it, and this process stops
 * counting itself in its other files, so that each goes with the last consumer's release. For a
 * process that ends without running exit handlers: a forked child that ends with _exit (Python's
 * multiprocessing ends its fork and Pool children so) otherwise leaves its files in /dev/shm.
 * Call it as the process ends: memory shared before it that a consumer still holds is then
 * freed only with the process (the consumer's release no longer reaches it); later shares use
 * new files. Cannot fail; any thread; a second call does nothing. (ABI 1.2) */
C10C_API void c10c_cuda_ipc_release_files(void);

/* A new event with torch.cuda.Event's flags (enable_timing, blocking, interprocess): an
 * interprocess event must have timing disabled (else the driver's CUDA_ERROR_INVALID_VALUE
 * when it is created, as torch).
 * Ownership: *out is owned (c10c_cuda_event_free). Errors: C10C_STATUS_NULL_POINTER. */
C10C_API c10c_status c10c_cuda_event_new_with_flags(c10c_cuda_event **out, bool enable_timing,
                                                    bool blocking, bool interprocess);

/* The event's interprocess handle: torch's Event.ipc_handle() (an event not yet recorded is
 * created on the current device first). out receives C10C_CUDA_IPC_HANDLE_SIZE bytes.
 * Errors: C10C_STATUS_NULL_POINTER; the driver's CUDA_ERROR_INVALID_VALUE for an event made
 * without interprocess. */
C10C_API c10c_status c10c_cuda_event_ipc_handle(uint8_t *out, c10c_cuda_event *event);

/* An event of another process: torch's Event.from_ipc_handle(device, handle); handle is
 * C10C_CUDA_IPC_HANDLE_SIZE bytes. Queries, waits and records reach the shared event.
 * Ownership: *out is owned (c10c_cuda_event_free). Errors: C10C_STATUS_NULL_POINTER; "CUDA error:
 * invalid device ordinal"; the driver's (bytes that are no handle, an event that is gone). */
C10C_API c10c_status c10c_cuda_event_from_ipc_handle(c10c_cuda_event **out,
                                                     c10c_device_index device,
                                                     const uint8_t *handle);

C10C_END_DECLS

#endif /* C10C_CUDA_IPC_H */
