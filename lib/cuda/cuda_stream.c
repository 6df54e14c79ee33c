/* CUDA streams and events (see include/c10c/cuda.h): c10's CUDAStream pools and ids, and
 * CUDAEvent's lazily created driver events, over the driver table of lib/cuda/cuda.c. */
#include <stdio.h>
#include <string.h>

#include "c10c/cuda_ipc.h"
#include "cuda_internal.h"
#include "internal.h"
#include "os.h"
#include "sysmem.h"

enum { STREAMS_PER_POOL_BITS = 5, STREAMS_PER_POOL = 1 << STREAMS_PER_POOL_BITS, POOLS = 2 };
enum { TYPE_BITS = 4, TYPE_NORMAL = 1, TYPE_HIGH = 2 };

/* Per device: the pools (created together on first use), round-robin counters. */
typedef struct device_streams {
  bool created;
  CUstream pool[POOLS][STREAMS_PER_POOL];
  unsigned next[POOLS];
} device_streams;

static device_streams devices[C10C_CUDA_MAX_DEVICES];
static c10c__mutex streams_lock = C10C__MUTEX_INIT;

/* Each thread's current stream ids, one per device, allocated on the first set (NULL: every
 * device on its default stream). Not a _Thread_local array: libc10c's thread-locals live in the
 * small static TLS reserve glibc keeps for libraries loaded with dlopen (as pyc10 loads it),
 * and 512 more bytes did not fit. */
static c10c__tls_key ids_key;
static c10c__once ids_once = C10C__ONCE_INIT;
static bool ids_key_ok;

static void free_ids(void *ids) { c10c__free(ids); }

static void make_ids_key(void) { ids_key_ok = c10c__tls_key_create(&ids_key, free_ids); }

/* A host that unloads libc10c must not have threads call free_ids afterwards. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((destructor)) static void forget_ids_key(void) {
  if (ids_key_ok) c10c__tls_key_delete(ids_key);
}
#endif

static c10c_stream_id current_id(c10c_device_index index) {
  c10c__once_call(&ids_once, make_ids_key);
  c10c_stream_id *ids = ids_key_ok ? c10c__tls_get(ids_key) : NULL;
  return ids != NULL ? ids[index] : 0;
}

static c10c_status set_current_id(c10c_device_index index, c10c_stream_id id) {
  c10c__once_call(&ids_once, make_ids_key);
  c10c_stream_id *ids = ids_key_ok ? c10c__tls_get(ids_key) : NULL;
  if (ids == NULL) {
    if (id == 0) return C10C_STATUS_OK; /* already the default */
    ids = ids_key_ok ? c10c__calloc(C10C_CUDA_MAX_DEVICES, sizeof *ids) : NULL;
    if (ids == NULL || !c10c__tls_set(ids_key, ids)) {
      c10c__free(ids);
      return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory keeping the current stream");
    }
  }
  ids[index] = id;
  return C10C_STATUS_OK;
}

static c10c_stream_id make_id(int type, unsigned index) {
  return ((c10c_stream_id)index << (TYPE_BITS + 1)) | ((c10c_stream_id)type << 1) | 1;
}

static c10c_status create_pools(c10c_device_index index) {
  device_streams *d = &devices[index];
  if (d->created) return C10C_STATUS_OK;
  c10c_status st = c10c__cuda_activate(index);
  for (int p = 0; p < POOLS && st == C10C_STATUS_OK; p++)
    for (int i = 0; i < STREAMS_PER_POOL && st == C10C_STATUS_OK; i++)
      st = c10c__cuda_check(c10c__cuda.cuStreamCreateWithPriority(
                                &d->pool[p][i], CU_STREAM_NON_BLOCKING, p == 0 ? 0 : -1),
                            "cuStreamCreateWithPriority");
  if (st != C10C_STATUS_OK) { /* all or nothing: destroy what was made */
    for (int p = 0; p < POOLS; p++)
      for (int i = 0; i < STREAMS_PER_POOL; i++)
        if (d->pool[p][i] != NULL) c10c__cuda.cuStreamDestroy(d->pool[p][i]);
    memset(d->pool, 0, sizeof d->pool);
  } else {
    d->created = true;
  }
  return c10c__cuda_restore(st);
}

/* A stream as c10 prints it ("stream 0 on device cpu"), or its raw fields when its device is
 * not one (c10c_stream_to_string then writes nothing). */
static void describe_stream(char *out, size_t size, c10c_stream s) {
  if (c10c_stream_to_string(out, size, s) != C10C_STATUS_OK)
    snprintf(out, size, "stream %lld on device type %d, index %d", (long long)s.id,
             (int)s.device.type, (int)s.device.index);
}

/* The driver handle of a stream this library made; checks everything about the value. */
static c10c_status stream_handle(CUstream *out, int *priority, c10c_stream s) {
  c10c_status st = c10c__cuda_ensure();
  if (st != C10C_STATUS_OK) return st;
  if (s.device.type != C10C_DEVICE_TYPE_CUDA) {
    char text[C10C_STREAM_STRING_MAX];
    describe_stream(text, sizeof text, s);
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "Expected a CUDA stream, got %s", text);
  }
  c10c_device_index index = s.device.index;
  st = c10c__cuda_resolve(&index);
  if (st != C10C_STATUS_OK) return st;
  if (s.id == 0) {
    *out = NULL;
    if (priority) *priority = 0;
    return C10C_STATUS_OK;
  }
  int type = (int)((s.id >> 1) & ((1 << TYPE_BITS) - 1));
  uint64_t slot = (uint64_t)s.id >> (TYPE_BITS + 1);
  c10c__mutex_lock(&streams_lock);
  bool known = (s.id & 1) && (type == TYPE_NORMAL || type == TYPE_HIGH) &&
               slot < STREAMS_PER_POOL && devices[index].created;
  if (known) {
    *out = devices[index].pool[type - 1][slot];
    if (priority) *priority = type == TYPE_NORMAL ? 0 : -1;
  }
  c10c__mutex_unlock(&streams_lock);
  if (!known) {
    char text[C10C_STREAM_STRING_MAX];
    describe_stream(text, sizeof text, s);
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "Unrecognized stream %s: not a stream this library made (external streams "
                      "are not supported yet)",
                      text);
  }
  return C10C_STATUS_OK;
}

static c10c_stream cuda_stream(c10c_device_index index, c10c_stream_id id) {
  return (c10c_stream){{C10C_DEVICE_TYPE_CUDA, index}, id};
}

c10c_status c10c_cuda_default_stream(c10c_stream *out, c10c_device_index index) {
  C10C__CHECK_NOT_NULL(out);
  c10c_status st = c10c__cuda_resolve(&index);
  if (st == C10C_STATUS_OK) *out = cuda_stream(index, 0);
  return st;
}

c10c_status c10c_cuda_stream_from_pool(c10c_stream *out, int priority, c10c_device_index index) {
  C10C__CHECK_NOT_NULL(out);
  c10c_status st = c10c__cuda_resolve(&index);
  if (st != C10C_STATUS_OK) return st;
  c10c__mutex_lock(&streams_lock);
  st = create_pools(index);
  if (st == C10C_STATUS_OK) {
    int pool = priority < 0 ? 1 : 0;
    unsigned slot = devices[index].next[pool]++ % STREAMS_PER_POOL;
    *out = cuda_stream(index, make_id(pool == 0 ? TYPE_NORMAL : TYPE_HIGH, slot));
  }
  c10c__mutex_unlock(&streams_lock);
  return st;
}

c10c_status c10c_cuda_current_stream(c10c_stream *out, c10c_device_index index) {
  C10C__CHECK_NOT_NULL(out);
  c10c_status st = c10c__cuda_resolve(&index);
  if (st == C10C_STATUS_OK) *out = cuda_stream(index, current_id(index));
  return st;
}

c10c_status c10c_cuda_set_current_stream(c10c_stream stream) {
  CUstream handle = NULL;
  c10c_status st = stream_handle(&handle, NULL, stream);
  if (st == C10C_STATUS_OK) st = set_current_id(stream.device.index, stream.id);
  return st;
}

c10c_status c10c_cuda_stream_query(bool *done, c10c_stream stream) {
  C10C__CHECK_NOT_NULL(done);
  CUstream handle = NULL;
  c10c_status st = stream_handle(&handle, NULL, stream);
  if (st == C10C_STATUS_OK) st = c10c__cuda_activate(stream.device.index);
  if (st != C10C_STATUS_OK) return st;
  CUresult r = c10c__cuda.cuStreamQuery(handle);
  *done = r == 0;
  return c10c__cuda_restore(r == CUDA_ERROR_NOT_READY ? C10C_STATUS_OK
                                                      : c10c__cuda_check(r, "cuStreamQuery"));
}

c10c_status c10c_cuda_stream_synchronize(c10c_stream stream) {
  CUstream handle = NULL;
  c10c_status st = stream_handle(&handle, NULL, stream);
  if (st == C10C_STATUS_OK) st = c10c__cuda_activate(stream.device.index);
  if (st != C10C_STATUS_OK) return st;
  return c10c__cuda_restore(
      c10c__cuda_check(c10c__cuda.cuStreamSynchronize(handle), "cuStreamSynchronize"));
}

c10c_status c10c_cuda_stream_handle(void **out, c10c_stream stream) {
  C10C__CHECK_NOT_NULL(out);
  CUstream handle = NULL;
  c10c_status st = stream_handle(&handle, NULL, stream);
  if (st == C10C_STATUS_OK) *out = handle;
  return st;
}

c10c_status c10c_cuda_wait_current_stream(void *consumer, c10c_device_index index) {
  c10c_status st = c10c__cuda_resolve(&index);
  if (st != C10C_STATUS_OK) return st;
  c10c_stream current;
  CUstream producer = NULL;
  st = c10c_cuda_current_stream(&current, index);
  if (st == C10C_STATUS_OK) st = stream_handle(&producer, NULL, current);
  if (st != C10C_STATUS_OK) return st;
  if ((CUstream)consumer == producer) return C10C_STATUS_OK; /* stream order already */
  st = c10c__cuda_activate(index);
  if (st != C10C_STATUS_OK) return st;
  CUevent event = NULL;
  st = c10c__cuda_check(c10c__cuda.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  if (st == C10C_STATUS_OK)
    st = c10c__cuda_check(c10c__cuda.cuEventRecord(event, producer), "cuEventRecord");
  if (st == C10C_STATUS_OK)
    st = c10c__cuda_check(c10c__cuda.cuStreamWaitEvent((CUstream)consumer, event, 0),
                          "cuStreamWaitEvent");
  if (event != NULL) c10c__cuda.cuEventDestroy(event); /* the wait keeps what it needs */
  return c10c__cuda_restore(st);
}

c10c_status c10c_cuda_stream_priority(int *out, c10c_stream stream) {
  C10C__CHECK_NOT_NULL(out);
  CUstream handle = NULL;
  return stream_handle(&handle, out, stream);
}

/* ---- events ---- */

struct c10c_cuda_event {
  CUevent handle; /* NULL until the first record */
  c10c_device_index device;
  bool timing;
  bool recorded;
  bool blocking, interprocess; /* torch.cuda.Event's flags */
};

/* The driver flags of torch's CUDAEvent. */
static unsigned event_flags(const c10c_cuda_event *e) {
  return (e->timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING) |
         (e->blocking ? CU_EVENT_BLOCKING_SYNC : 0) | (e->interprocess ? CU_EVENT_INTERPROCESS : 0);
}

c10c_status c10c_cuda_event_new(c10c_cuda_event **out, bool enable_timing) {
  C10C__CHECK_NOT_NULL(out);
  *out = c10c__calloc(1, sizeof **out);
  if (*out == NULL) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory making an event");
  (*out)->device = -1;
  (*out)->timing = enable_timing;
  return C10C_STATUS_OK;
}

void c10c_cuda_event_free(c10c_cuda_event *event) {
  if (event == NULL) return;
  /* a failure here has no one to report to; a forked child must not reach the driver, so its
   * copy of the parent's event is only forgotten */
  if (event->handle != NULL && c10c__cuda_usable()) c10c__cuda.cuEventDestroy(event->handle);
  c10c__free(event);
}

c10c_status c10c_cuda_event_record(c10c_cuda_event *event, c10c_stream stream) {
  C10C__CHECK_NOT_NULL(event);
  CUstream handle = NULL;
  c10c_status st = stream_handle(&handle, NULL, stream);
  if (st != C10C_STATUS_OK) return st;
  if (event->device >= 0 && event->device != stream.device.index)
    return c10c__fail(C10C_STATUS_ERROR,
                      "Event device %d does not match recording stream's device %d.",
                      (int)event->device, (int)stream.device.index);
  st = c10c__cuda_activate(stream.device.index);
  if (st != C10C_STATUS_OK) return st;
  if (event->handle == NULL) {
    st = c10c__cuda_check(c10c__cuda.cuEventCreate(&event->handle, event_flags(event)),
                          "cuEventCreate");
    if (st == C10C_STATUS_OK) event->device = stream.device.index;
  }
  if (st == C10C_STATUS_OK)
    st = c10c__cuda_check(c10c__cuda.cuEventRecord(event->handle, handle), "cuEventRecord");
  if (st == C10C_STATUS_OK) event->recorded = true;
  return c10c__cuda_restore(st);
}

c10c_status c10c_cuda_event_query(bool *done, c10c_cuda_event *event) {
  C10C__CHECK_NOT_NULL(done);
  C10C__CHECK_NOT_NULL(event);
  *done = true;
  c10c_status st = c10c__cuda_ensure(); /* the fork guard, as every entry point */
  if (st != C10C_STATUS_OK || !event->recorded) return st;
  CUresult r = c10c__cuda.cuEventQuery(event->handle);
  *done = r == 0;
  return r == CUDA_ERROR_NOT_READY ? C10C_STATUS_OK : c10c__cuda_check(r, "cuEventQuery");
}

c10c_status c10c_cuda_event_synchronize(c10c_cuda_event *event) {
  C10C__CHECK_NOT_NULL(event);
  c10c_status st = c10c__cuda_ensure();
  if (st != C10C_STATUS_OK || !event->recorded) return st;
  return c10c__cuda_check(c10c__cuda.cuEventSynchronize(event->handle), "cuEventSynchronize");
}

c10c_status c10c_cuda_event_wait(c10c_cuda_event *event, c10c_stream stream) {
  C10C__CHECK_NOT_NULL(event);
  CUstream handle = NULL;
  c10c_status st = stream_handle(&handle, NULL, stream);
  if (st != C10C_STATUS_OK || !event->recorded) return st;
  st = c10c__cuda_activate(stream.device.index);
  if (st != C10C_STATUS_OK) return st;
  return c10c__cuda_restore(c10c__cuda_check(c10c__cuda.cuStreamWaitEvent(handle, event->handle, 0),
                                             "cuStreamWaitEvent"));
}

c10c_status c10c_cuda_event_elapsed_time(float *ms, c10c_cuda_event *start, c10c_cuda_event *end) {
  C10C__CHECK_NOT_NULL(ms);
  C10C__CHECK_NOT_NULL(start);
  C10C__CHECK_NOT_NULL(end);
  c10c_status st = c10c__cuda_ensure();
  if (st != C10C_STATUS_OK) return st;
  if (!start->timing || !end->timing)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "Both events must be created with argument 'enable_timing=True'.");
  if (!start->recorded || !end->recorded)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "Both events must be recorded before calculating elapsed time.");
  bool a = false, b = false;
  st = c10c_cuda_event_query(&a, start);
  if (st == C10C_STATUS_OK) st = c10c_cuda_event_query(&b, end);
  if (st != C10C_STATUS_OK) return st;
  if (!a || !b)
    return c10c__fail(C10C_STATUS_ERROR,
                      "Both events must be completed before calculating elapsed time.");
  return c10c__cuda_check(c10c__cuda.cuEventElapsedTime(ms, start->handle, end->handle),
                          "cuEventElapsedTime");
}

/* ---- interprocess events (include/c10c/cuda_ipc.h) ---- */

c10c_status c10c_cuda_event_new_with_flags(c10c_cuda_event **out, bool enable_timing, bool blocking,
                                           bool interprocess) {
  c10c_status st = c10c_cuda_event_new(out, enable_timing);
  if (st == C10C_STATUS_OK) (*out)->blocking = blocking, (*out)->interprocess = interprocess;
  return st;
}

/* torch's CUDAEvent::ipc_handle: an event not yet made is made on the current device. */
c10c_status c10c_cuda_event_ipc_handle(uint8_t *out, c10c_cuda_event *event) {
  C10C__CHECK_NOT_NULL(out);
  C10C__CHECK_NOT_NULL(event);
  c10c_status st = c10c__cuda_ensure();
  if (st != C10C_STATUS_OK) return st;
  if (c10c__cuda_ipc.cuIpcGetEventHandle == NULL)
    return c10c__fail(C10C_STATUS_NOT_IMPLEMENTED,
                      "the CUDA driver has no interprocess event handles (cuIpcGetEventHandle)");
  if (event->handle == NULL) {
    c10c_device_index device = c10c__cuda_current();
    st = c10c__cuda_activate(device);
    if (st == C10C_STATUS_OK)
      st = c10c__cuda_restore(c10c__cuda_check(
          c10c__cuda.cuEventCreate(&event->handle, event_flags(event)), "cuEventCreate"));
    if (st != C10C_STATUS_OK) return st;
    event->device = device;
  }
  CUipcEventHandle h;
  st = c10c__cuda_check(c10c__cuda_ipc.cuIpcGetEventHandle(&h, event->handle),
                        "cuIpcGetEventHandle");
  if (st == C10C_STATUS_OK) memcpy(out, h.reserved, CU_IPC_HANDLE_SIZE);
  return st;
}

/* torch's CUDAEvent(device_index, handle): opened in the device's context, counted as recorded
 * so that queries and waits reach the shared event. */
c10c_status c10c_cuda_event_from_ipc_handle(c10c_cuda_event **out, c10c_device_index device,
                                            const uint8_t *handle) {
  C10C__CHECK_NOT_NULL(out);
  C10C__CHECK_NOT_NULL(handle);
  c10c_status st = c10c__cuda_resolve(&device);
  if (st != C10C_STATUS_OK) return st;
  if (c10c__cuda_ipc.cuIpcOpenEventHandle == NULL)
    return c10c__fail(C10C_STATUS_NOT_IMPLEMENTED,
                      "the CUDA driver has no interprocess event handles (cuIpcOpenEventHandle)");
  CUipcEventHandle h;
  memcpy(h.reserved, handle, CU_IPC_HANDLE_SIZE);
  CUevent e = NULL;
  st = c10c__cuda_activate(device);
  if (st == C10C_STATUS_OK)
    st = c10c__cuda_restore(
        c10c__cuda_check(c10c__cuda_ipc.cuIpcOpenEventHandle(&e, h), "cuIpcOpenEventHandle"));
  if (st != C10C_STATUS_OK) return st;
  st = c10c_cuda_event_new_with_flags(out, false, false, true);
  if (st != C10C_STATUS_OK) {
    c10c__cuda.cuEventDestroy(e);
    return st;
  }
  (*out)->handle = e;
  (*out)->device = device;
  (*out)->recorded = true;
  return C10C_STATUS_OK;
}
