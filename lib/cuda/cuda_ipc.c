/* CUDA memory and events shared with other processes, as c10's CUDACachingAllocator shares them
 * (shareIpcHandle / getIpcDevPtr in c10/cuda/CUDACachingAllocator.cpp): a block is exported as
 * its segment's cudaIpcMemHandle_t plus its offset in the segment, in torch's handle bytes
 * (version 2, type 'c'); a block of an expandable segment as the pages that cover it, each a
 * file descriptor of this process (cuMemExportToShareableHandle) that the consumer takes with
 * pidfd_getfd (type 'e', c10's ExpandableSegment::share / fromShared); and a process maps each
 * handle once, counted, closing the mapping when its last user goes (c10's ipcMemHandle_to_devptr).
 * The storage-level pieces (the producer's reference counts, blocks kept for consumers) are
 * lib/tensor/storage_ipc.c's.
 *
 * Byte order: an 'e' handle's header (pid, padding, page size, page count) and its descriptors
 * are little-endian on every target, whatever the CPU's order: the bytes torch writes on the
 * little-endian machines CUDA runs on (x86-64, aarch64, ppc64le), and one layout a big-endian
 * build reads and writes too. A 'c' handle's 64 bytes are the driver's, copied as they are. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "caching_engine.h"
#include "cuda_internal.h"
#include "internal.h"
#include "os.h"
#include "shm.h"
#include "sysmem.h"

/* c10's SHAREABLE_HANDLE_VERSION and ShareableHandleType. */
enum { HANDLE_VERSION = 2, HANDLE_CUDA_MALLOC = 'c', HANDLE_EXPANDABLE = 'e' };

static c10c_status no_ipc(void) {
  return c10c__fail(C10C_STATUS_NOT_IMPLEMENTED,
                    "the CUDA driver has no interprocess memory handles (cuIpcGetMemHandle, "
                    "cuIpcOpenMemHandle_v2, cuIpcCloseMemHandle, cuIpcGetEventHandle, "
                    "cuIpcOpenEventHandle)");
}

/* ---- export ---- */

/* ExpandableSegment::share's header (pid_t, then two size_t: 4 bytes of padding after the pid,
 * zeroed so that one block shared twice gives the same bytes and one mapping in the consumer). */
typedef struct share_header {
  int32_t pid;
  uint32_t padding;
  uint64_t segment_size;
  uint64_t num_handles;
} share_header;
_Static_assert(sizeof(share_header) == 24, "c10's ShareHeader on LP64");

/* The header as handle bytes (little-endian) and back. */
static void header_put(uint8_t *d, const share_header *h) {
  c10c__put_le(d, (uint32_t)h->pid, 4);
  c10c__put_le(d + 4, h->padding, 4);
  c10c__put_le(d + 8, h->segment_size, 8);
  c10c__put_le(d + 16, h->num_handles, 8);
}

static share_header header_get(const uint8_t *d) {
  return (share_header){(int32_t)(uint32_t)c10c__get_le(d, 4), (uint32_t)c10c__get_le(d + 4, 4),
                        c10c__get_le(d + 8, 8), c10c__get_le(d + 16, 8)};
}

typedef struct page_writer {
  uint8_t *at;
} page_writer;

/* Writes a page's file descriptor (exported once per page by the allocator, under the engine's
 * lock: c10c__cuda_page_fd). */
static c10c_status export_page(void *ctx, void *handle) {
  page_writer *w = ctx;
  int fd = -1;
  c10c_status st = c10c__cuda_page_fd(&fd, handle);
  if (st == C10C_STATUS_OK) {
    c10c__put_le(w->at, (uint32_t)fd, 4);
    w->at += sizeof(int32_t);
  }
  return st;
}

c10c_status c10c__cuda_ipc_share(uint8_t *out, size_t out_size, size_t *out_len, size_t *offset,
                                 const c10c_data_ptr *data) {
  c10c_status st = c10c__cuda_ensure();
  if (st != C10C_STATUS_OK) return st;
  if (c10c__cuda_ipc.cuIpcGetMemHandle == NULL) return no_ipc();
  c10c__block_share where;
  st = c10c__cuda_block_share(&where, data, NULL, NULL);
  if (st != C10C_STATUS_OK) return st;
  size_t pages = where.expandable ? where.size / where.page : 0;
  *out_len = where.expandable ? 2 + sizeof(share_header) + pages * sizeof(int32_t)
                              : 2 + CU_IPC_HANDLE_SIZE;
  if (where.expandable && c10c__cuda_ipc.cuMemExportToShareableHandle == NULL)
    return c10c__fail(C10C_STATUS_NOT_IMPLEMENTED,
                      "the CUDA driver cannot export memory of an expandable segment "
                      "(cuMemExportToShareableHandle); set expandable_segments:False for memory "
                      "to be shared");
  if (out_size < *out_len)
    return c10c__fail(C10C_STATUS_BUFFER_TOO_SMALL,
                      "a CUDA IPC handle needs %zu bytes, the buffer has %zu", *out_len, out_size);
  st = c10c__cuda_activate((c10c_device_index)where.device);
  if (st == C10C_STATUS_OK && where.expandable) { /* c10's ExpandableSegment::share */
    share_header header = {(int32_t)c10c__process_id(), 0, where.page, pages};
    header_put(out + 2, &header);
    page_writer w = {out + 2 + sizeof header};
    st = c10c__cuda_block_share(&where, data, export_page, &w);
  } else if (st == C10C_STATUS_OK) {
    CUipcMemHandle handle;
    st = c10c__cuda_check(
        c10c__cuda_ipc.cuIpcGetMemHandle(&handle, (CUdeviceptr)(uintptr_t)where.base),
        "cuIpcGetMemHandle");
    if (st == C10C_STATUS_OK) memcpy(out + 2, handle.reserved, CU_IPC_HANDLE_SIZE);
  }
  st = c10c__cuda_restore(st);
  if (st != C10C_STATUS_OK) return st;
  out[0] = HANDLE_VERSION;
  out[1] = where.expandable ? HANDLE_EXPANDABLE : HANDLE_CUDA_MALLOC;
  *offset = where.offset + (size_t)((const char *)data->data - (const char *)data->ctx);
  return C10C_STATUS_OK;
}

/* ---- import: one mapping per handle per process ---- */

typedef struct mapping {
  uint8_t *key; /* the handle's bytes (a cudaIpcMemHandle_t of an old torch: version 2 'c') */
  size_t key_len;
  CUdeviceptr ptr;
  size_t size; /* the bytes mapped (cuMemGetAddressRange_v2 for a cudaIpcMemHandle_t) */
  c10c_device_index device;
  long users;
  /* an expandable segment's pages: imported handles mapped in a reservation of size bytes */
  CUmemGenericAllocationHandle *pages;
  size_t npages;
  struct mapping *next;
} mapping;

static c10c__mutex lock = C10C__MUTEX_INIT;
static mapping *mappings;

static c10c_status illformed(void) {
  return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "unexpected or illformed shareable handle type");
}

/* The normalized key of torch's handle bytes: a 64-byte handle of an old torch becomes version
 * 2 'c'; version <= 2 with type 'c' (66 bytes) or 'e' (a header and its descriptors). The
 * messages are c10's. */
static c10c_status parse(uint8_t **key, size_t *key_len, const uint8_t *handle, size_t len) {
  bool raw = len == CU_IPC_HANDLE_SIZE; /* an older torch: the raw cudaIpcMemHandle_t */
  if (!raw) {
    if (len < 2) return illformed();
    /* version 3 (which later torch builds are reported to write) keeps the 'c' payload; its 'e'
     * header is not the one read here, so only 'c' handles of it are read */
    bool known = handle[0] <= HANDLE_VERSION ||
                 (handle[0] == HANDLE_VERSION + 1 && handle[1] == HANDLE_CUDA_MALLOC);
    if (!known)
      return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                        "received sharable handle from a future version of torch that this "
                        "version does not know how to handle");
    if (handle[1] == HANDLE_CUDA_MALLOC && len != 2 + CU_IPC_HANDLE_SIZE) return illformed();
    if (handle[1] == HANDLE_EXPANDABLE) {
      if (len < 2 + sizeof(share_header)) return illformed();
      share_header h = header_get(handle + 2);
      if (h.pid <= 0 || h.segment_size == 0 || h.num_handles == 0 ||
          h.num_handles > (len - 2 - sizeof h) / sizeof(int32_t) ||
          len != 2 + sizeof h + h.num_handles * sizeof(int32_t) ||
          h.segment_size > SIZE_MAX / h.num_handles)
        return illformed();
    } else if (handle[1] != HANDLE_CUDA_MALLOC) {
      return illformed();
    }
  }
  *key_len = raw ? 2 + CU_IPC_HANDLE_SIZE : len;
  *key = c10c__malloc(*key_len);
  if (*key == NULL)
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory opening a CUDA IPC handle");
  if (raw) {
    (*key)[0] = HANDLE_VERSION, (*key)[1] = HANDLE_CUDA_MALLOC;
    memcpy(*key + 2, handle, CU_IPC_HANDLE_SIZE);
  } else {
    memcpy(*key, handle, len);
  }
  return C10C_STATUS_OK;
}

/* Undoes what open_expandable did (in the device's context). */
static void close_expandable(mapping *m, size_t imported, size_t mapped) {
  if (mapped > 0) {
    c10c__cuda.cuCtxSynchronize(); /* unmapping does not wait for the device's work */
    c10c__cuda.cuMemUnmap(m->ptr, mapped * (m->size / m->npages));
  }
  for (size_t i = 0; i < imported; i++) c10c__cuda.cuMemRelease(m->pages[i]);
  if (m->ptr != 0) c10c__cuda.cuMemAddressFree(m->ptr, m->size);
  c10c__free(m->pages);
  m->pages = NULL, m->ptr = 0;
}

/* c10's ExpandableSegment::fromShared: each page's descriptor taken from the producer
 * (pidfd_getfd), imported, mapped in a new reservation and made accessible to the device and
 * the devices that can access its memory. */
static c10c_status open_expandable(mapping *m) {
  share_header h = header_get(m->key + 2);
#define UNSUPPORTED(call)                                                                       \
  "The kernel on this machine does not support the " call                                       \
  " syscall needed to use IPC for CUDA "                                                        \
  "tensors when expandable_segments:True is set. Consider using expandable_segments:False via " \
  "torch.cuda.memory._set_allocator_settings('expandable_segments:False') for this allocation."
  if (c10c__cuda_ipc.cuMemImportFromShareableHandle == NULL)
    return c10c__fail(C10C_STATUS_NOT_IMPLEMENTED,
                      "the CUDA driver cannot import memory of an expandable segment "
                      "(cuMemImportFromShareableHandle)");
  m->npages = (size_t)h.num_handles;
  m->size = (size_t)h.segment_size * m->npages;
  m->pages = c10c__calloc(m->npages, sizeof *m->pages);
  if (m->pages == NULL)
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory opening a CUDA IPC handle");
  char text[128];
  int pidfd;
  int err = c10c__pidfd_open(&pidfd, h.pid);
  if (err != 0) {
    close_expandable(m, 0, 0);
    return err == ENOSYS ? c10c__fail(C10C_STATUS_NOT_IMPLEMENTED, UNSUPPORTED("pidfd_open"))
                         : c10c__fail(C10C_STATUS_ERROR, "pidfd_open:%s",
                                      c10c__errno_text(err, text, sizeof text));
  }
  c10c_status st = c10c__cuda_check(c10c__cuda.cuMemAddressReserve(&m->ptr, m->size, 0, 0, 0),
                                    "cuMemAddressReserve");
  size_t imported = 0, mapped = 0;
  for (; st == C10C_STATUS_OK && imported < m->npages; imported++) {
    int32_t fd =
        (int32_t)(uint32_t)c10c__get_le(m->key + 2 + sizeof h + imported * sizeof(int32_t), 4);
    int mine;
    err = c10c__pidfd_getfd(&mine, pidfd, fd);
    if (err != 0) {
      st = err == ENOSYS ? c10c__fail(C10C_STATUS_NOT_IMPLEMENTED, UNSUPPORTED("pidfd_getfd"))
                         : c10c__fail(C10C_STATUS_ERROR, "pidfd_getfd: %s",
                                      c10c__errno_text(err, text, sizeof text));
      break;
    }
    st = c10c__cuda_check(
        c10c__cuda_ipc.cuMemImportFromShareableHandle(&m->pages[imported], (void *)(uintptr_t)mine,
                                                      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
        "cuMemImportFromShareableHandle");
    c10c__fd_close(mine);
    if (st != C10C_STATUS_OK) break;
  }
  c10c__fd_close(pidfd);
  for (; st == C10C_STATUS_OK && mapped < m->npages; mapped++)
    st = c10c__cuda_check(c10c__cuda.cuMemMap(m->ptr + mapped * h.segment_size, h.segment_size, 0,
                                              m->pages[mapped], 0),
                          "cuMemMap");
  uint64_t peers = 0;
  if (st == C10C_STATUS_OK) st = c10c__cuda_peers(&peers, m->device);
  if (st == C10C_STATUS_OK) {
    CUmemAccessDesc access[C10C_CUDA_MAX_DEVICES];
    size_t n = 0;
    access[n++] = (CUmemAccessDesc){{CU_MEM_LOCATION_TYPE_DEVICE, m->device},
                                    CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    for (int p = 0; p < C10C_CUDA_MAX_DEVICES && n < C10C_CUDA_MAX_DEVICES; p++)
      if (peers >> p & 1)
        access[n++] =
            (CUmemAccessDesc){{CU_MEM_LOCATION_TYPE_DEVICE, p}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    st = c10c__cuda_check(c10c__cuda.cuMemSetAccess(m->ptr, m->size, access, n), "cuMemSetAccess");
  }
  if (st != C10C_STATUS_OK) close_expandable(m, imported, mapped);
  return st;
#undef UNSUPPORTED
}

/* Opens a cudaIpcMemHandle_t and asks how many bytes it maps. */
static c10c_status open_cuda_malloc(mapping *m) {
  CUipcMemHandle h;
  memcpy(h.reserved, m->key + 2, CU_IPC_HANDLE_SIZE);
  c10c_status st = c10c__cuda_check(
      c10c__cuda_ipc.cuIpcOpenMemHandle(&m->ptr, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
      "cuIpcOpenMemHandle_v2");
  CUdeviceptr start = 0;
  if (st == C10C_STATUS_OK) { /* how far a storage may reach */
    st = c10c__cuda_check(c10c__cuda_ipc.cuMemGetAddressRange(&start, &m->size, m->ptr),
                          "cuMemGetAddressRange_v2");
    if (st != C10C_STATUS_OK) c10c__cuda_ipc.cuIpcCloseMemHandle(m->ptr);
  }
  return st;
}

c10c_status c10c__cuda_ipc_open(void **base, size_t *size, void **token, const uint8_t *handle,
                                size_t len, c10c_device_index device) {
  c10c_status st = c10c__cuda_resolve(&device);
  if (st != C10C_STATUS_OK) return st;
  if (c10c__cuda_ipc.cuIpcOpenMemHandle == NULL) return no_ipc();
  uint8_t *key = NULL;
  size_t key_len = 0;
  st = parse(&key, &key_len, handle, len);
  if (st != C10C_STATUS_OK) return st;
  c10c__mutex_lock(&lock);
  mapping *m = mappings;
  while (m != NULL &&
         (m->device != device || m->key_len != key_len || memcmp(m->key, key, key_len) != 0))
    m = m->next;
  if (m != NULL) {
    c10c__free(key);
  } else {
    m = c10c__calloc(1, sizeof *m);
    st = m == NULL
             ? c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory opening a CUDA IPC handle")
             : c10c__cuda_activate(device);
    if (st == C10C_STATUS_OK) {
      m->key = key, m->key_len = key_len, m->device = device;
      st = c10c__cuda_restore(key[1] == HANDLE_EXPANDABLE ? open_expandable(m)
                                                          : open_cuda_malloc(m));
    }
    if (st != C10C_STATUS_OK) {
      c10c__free(key);
      c10c__free(m);
      c10c__mutex_unlock(&lock);
      return st;
    }
    m->next = mappings;
    mappings = m;
  }
  m->users++;
  c10c__mutex_unlock(&lock);
  *base = (void *)(uintptr_t)m->ptr;
  *size = m->size;
  *token = m;
  return C10C_STATUS_OK;
}

void c10c__cuda_ipc_close(void *token) {
  if (token == NULL) return;
  c10c__mutex_lock(&lock);
  mapping *m = token, **link = &mappings;
  while (*link != NULL && *link != m) link = &(*link)->next;
  bool last = *link != NULL && --m->users == 0;
  if (last) *link = m->next;
  c10c__mutex_unlock(&lock);
  if (!last) return;
  /* a forked child forgets the mapping without reaching the driver */
  if (c10c__cuda_usable() && c10c__cuda_activate(m->device) == C10C_STATUS_OK) {
    if (m->pages != NULL)
      close_expandable(m, m->npages, m->npages);
    else
      c10c__cuda_ipc.cuIpcCloseMemHandle(m->ptr);
    c10c__cuda_restore(C10C_STATUS_OK);
  }
  c10c__free(m->pages);
  c10c__free(m->key);
  c10c__free(m);
}

/* ---- events ---- */

/* The device's current stream's driver handle, with the device's context made current (undone
 * by c10c__cuda_restore). */
static c10c_status enter_current_stream(void **stream_handle, c10c_device_index device) {
  c10c_stream stream;
  c10c_status st = c10c_cuda_current_stream(&stream, device);
  if (st == C10C_STATUS_OK) st = c10c_cuda_stream_handle(stream_handle, stream);
  if (st == C10C_STATUS_OK) st = c10c__cuda_activate(device);
  return st;
}

c10c_status c10c__cuda_ipc_event_record(void **event, uint8_t handle[CU_IPC_HANDLE_SIZE],
                                        c10c_device_index device) {
  if (c10c__cuda_ipc.cuIpcGetEventHandle == NULL) return no_ipc();
  void *stream_handle = NULL;
  c10c_status st = enter_current_stream(&stream_handle, device);
  if (st != C10C_STATUS_OK) return st;
  CUevent e = NULL;
  CUipcEventHandle h;
  st = c10c__cuda_check(
      c10c__cuda.cuEventCreate(
          &e, CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS | CU_EVENT_BLOCKING_SYNC),
      "cuEventCreate");
  if (st == C10C_STATUS_OK)
    st = c10c__cuda_check(c10c__cuda.cuEventRecord(e, (CUstream)stream_handle), "cuEventRecord");
  if (st == C10C_STATUS_OK)
    st = c10c__cuda_check(c10c__cuda_ipc.cuIpcGetEventHandle(&h, e), "cuIpcGetEventHandle");
  if (st != C10C_STATUS_OK && e != NULL) c10c__cuda.cuEventDestroy(e);
  if (st == C10C_STATUS_OK) {
    *event = e;
    memcpy(handle, h.reserved, CU_IPC_HANDLE_SIZE);
  }
  return c10c__cuda_restore(st);
}

void c10c__cuda_ipc_event_destroy(void *event) {
  if (event != NULL && c10c__cuda_usable()) c10c__cuda.cuEventDestroy((CUevent)event);
}

c10c_status c10c__cuda_ipc_event_wait(const uint8_t handle[CU_IPC_HANDLE_SIZE],
                                      c10c_device_index device) {
  if (c10c__cuda_ipc.cuIpcOpenEventHandle == NULL) return no_ipc();
  void *stream_handle = NULL;
  c10c_status st = enter_current_stream(&stream_handle, device);
  if (st != C10C_STATUS_OK) return st;
  CUipcEventHandle h;
  memcpy(h.reserved, handle, CU_IPC_HANDLE_SIZE);
  CUevent e = NULL;
  st = c10c__cuda_check(c10c__cuda_ipc.cuIpcOpenEventHandle(&e, h), "cuIpcOpenEventHandle");
  if (st == C10C_STATUS_OK) {
    st = c10c__cuda_check(c10c__cuda.cuStreamWaitEvent((CUstream)stream_handle, e, 0),
                          "cuStreamWaitEvent");
    c10c__cuda.cuEventDestroy(e);
  }
  return c10c__cuda_restore(st);
}

c10c_status c10c__cuda_sync_current_stream(c10c_device_index device) {
  c10c_stream stream;
  c10c_status st = c10c_cuda_current_stream(&stream, device);
  return st == C10C_STATUS_OK ? c10c_cuda_stream_synchronize(stream) : st;
}
