/* CUDA memory and events shared with other processes, as c10's CUDACachingAllocator shares them
 * (shareIpcHandle / getIpcDevPtr in c10/cuda/CUDACachingAllocator.cpp): a block is exported as
 * its segment's cudaIpcMemHandle_t plus its offset in the segment, in torch's handle bytes
 * (version 2, type 'c'), and a process maps each handle once, counted, closing the mapping when
 * its last user goes (c10's ipcMemHandle_to_devptr). The storage-level pieces (the producer's
 * reference counts, blocks kept for consumers) are lib/tensor/storage_ipc.c's. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "caching_engine.h"
#include "cuda_internal.h"
#include "internal.h"
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

c10c_status c10c__cuda_ipc_share(uint8_t *out, size_t out_size, size_t *out_len, size_t *offset,
                                 const c10c_data_ptr *data) {
  c10c_status st = c10c__cuda_ensure();
  if (st != C10C_STATUS_OK) return st;
  if (c10c__cuda_ipc.cuIpcGetMemHandle == NULL) return no_ipc();
  c10c__block_share where;
  st = c10c__cuda_block_share(&where, data);
  if (st != C10C_STATUS_OK) return st;
  if (where.expandable)
    return c10c__fail(C10C_STATUS_NOT_IMPLEMENTED,
                      "sharing memory of an expandable segment with another process is not "
                      "supported yet; set expandable_segments:False for memory to be shared");
  *out_len = 2 + CU_IPC_HANDLE_SIZE;
  if (out_size < *out_len)
    return c10c__fail(C10C_STATUS_BUFFER_TOO_SMALL,
                      "a CUDA IPC handle needs %zu bytes, the buffer has %zu", *out_len, out_size);
  CUipcMemHandle handle;
  st = c10c__cuda_activate((c10c_device_index)where.device);
  if (st == C10C_STATUS_OK)
    st = c10c__cuda_check(
        c10c__cuda_ipc.cuIpcGetMemHandle(&handle, (CUdeviceptr)(uintptr_t)where.base),
        "cuIpcGetMemHandle");
  st = c10c__cuda_restore(st);
  if (st != C10C_STATUS_OK) return st;
  out[0] = HANDLE_VERSION;
  out[1] = HANDLE_CUDA_MALLOC;
  memcpy(out + 2, handle.reserved, CU_IPC_HANDLE_SIZE);
  *offset = where.offset + (size_t)((const char *)data->data - (const char *)data->ctx);
  return C10C_STATUS_OK;
}

/* ---- import: one mapping per handle per process ---- */

typedef struct mapping {
  uint8_t key[2 + CU_IPC_HANDLE_SIZE]; /* the handle's bytes, normalized to version 2 */
  CUdeviceptr ptr;
  size_t size; /* the allocation's bytes (cuMemGetAddressRange_v2) */
  c10c_device_index device;
  long users;
  struct mapping *next;
} mapping;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static mapping *mappings;

/* The cudaIpcMemHandle_t of torch's handle bytes: a 64-byte handle of an old torch, or version
 * <= 2 with type 'c' (the messages are c10's). */
static c10c_status parse(CUipcMemHandle *out, const uint8_t *handle, size_t len) {
  if (len == CU_IPC_HANDLE_SIZE) { /* an older torch: the raw cudaIpcMemHandle_t */
    memcpy(out->reserved, handle, CU_IPC_HANDLE_SIZE);
    return C10C_STATUS_OK;
  }
  if (len < 2)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "unexpected or illformed shareable handle type");
  if (handle[0] > HANDLE_VERSION)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "received sharable handle from a future version of torch that this version "
                      "does not know how to handle");
  if (handle[1] == HANDLE_EXPANDABLE)
    return c10c__fail(C10C_STATUS_NOT_IMPLEMENTED,
                      "opening memory of an expandable segment shared by another process is not "
                      "supported yet");
  if (handle[1] != HANDLE_CUDA_MALLOC || len != 2 + CU_IPC_HANDLE_SIZE)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "unexpected or illformed shareable handle type");
  memcpy(out->reserved, handle + 2, CU_IPC_HANDLE_SIZE);
  return C10C_STATUS_OK;
}

c10c_status c10c__cuda_ipc_open(void **base, size_t *size, void **token, const uint8_t *handle,
                                size_t len, c10c_device_index device) {
  c10c_status st = c10c__cuda_resolve(&device);
  if (st != C10C_STATUS_OK) return st;
  if (c10c__cuda_ipc.cuIpcOpenMemHandle == NULL) return no_ipc();
  CUipcMemHandle h;
  st = parse(&h, handle, len);
  if (st != C10C_STATUS_OK) return st;
  uint8_t key[2 + CU_IPC_HANDLE_SIZE] = {HANDLE_VERSION, HANDLE_CUDA_MALLOC};
  memcpy(key + 2, h.reserved, CU_IPC_HANDLE_SIZE);
  pthread_mutex_lock(&lock);
  mapping *m = mappings;
  while (m != NULL && (m->device != device || memcmp(m->key, key, sizeof key) != 0)) m = m->next;
  if (m == NULL) {
    m = c10c__calloc(1, sizeof *m);
    st = m == NULL
             ? c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory opening a CUDA IPC handle")
             : c10c__cuda_activate(device);
    if (st == C10C_STATUS_OK)
      st = c10c__cuda_check(
          c10c__cuda_ipc.cuIpcOpenMemHandle(&m->ptr, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
          "cuIpcOpenMemHandle_v2");
    CUdeviceptr start = 0;
    if (st == C10C_STATUS_OK) { /* how far the storage may reach */
      st = c10c__cuda_check(c10c__cuda_ipc.cuMemGetAddressRange(&start, &m->size, m->ptr),
                            "cuMemGetAddressRange_v2");
      if (st != C10C_STATUS_OK) c10c__cuda_ipc.cuIpcCloseMemHandle(m->ptr);
    }
    if (m != NULL) st = c10c__cuda_restore(st);
    if (st != C10C_STATUS_OK) {
      c10c__free(m);
      pthread_mutex_unlock(&lock);
      return st;
    }
    memcpy(m->key, key, sizeof key);
    m->device = device;
    m->next = mappings;
    mappings = m;
  }
  m->users++;
  pthread_mutex_unlock(&lock);
  *base = (void *)(uintptr_t)m->ptr;
  *size = m->size;
  *token = m;
  return C10C_STATUS_OK;
}

void c10c__cuda_ipc_close(void *token) {
  if (token == NULL) return;
  pthread_mutex_lock(&lock);
  mapping *m = token, **link = &mappings;
  while (*link != NULL && *link != m) link = &(*link)->next;
  bool last = *link != NULL && --m->users == 0;
  if (last) *link = m->next;
  pthread_mutex_unlock(&lock);
  if (!last) return;
  /* a forked child forgets the mapping without reaching the driver */
  if (c10c__cuda_usable() && c10c__cuda_activate(m->device) == C10C_STATUS_OK) {
    c10c__cuda_ipc.cuIpcCloseMemHandle(m->ptr);
    c10c__cuda_restore(C10C_STATUS_OK);
  }
  c10c__free(m);
}

/* ---- events ---- */

c10c_status c10c__cuda_ipc_event_record(void **event, uint8_t handle[CU_IPC_HANDLE_SIZE],
                                        c10c_device_index device) {
  if (c10c__cuda_ipc.cuIpcGetEventHandle == NULL) return no_ipc();
  c10c_stream stream;
  void *stream_handle = NULL;
  c10c_status st = c10c_cuda_current_stream(&stream, device);
  if (st == C10C_STATUS_OK) st = c10c_cuda_stream_handle(&stream_handle, stream);
  if (st == C10C_STATUS_OK) st = c10c__cuda_activate(device);
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
  c10c_stream stream;
  void *stream_handle = NULL;
  c10c_status st = c10c_cuda_current_stream(&stream, device);
  if (st == C10C_STATUS_OK) st = c10c_cuda_stream_handle(&stream_handle, stream);
  if (st == C10C_STATUS_OK) st = c10c__cuda_activate(device);
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
