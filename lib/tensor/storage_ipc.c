/* CUDA storages shared with other processes (include/c10c/cuda_ipc.h): the storage-level half of
 * torch's CUDA IPC (torch/csrc/CudaIPCTypes.cpp and StorageSharing.cpp). The producer's storage
 * is put behind "sent data" (CudaIPCSentData): a counter in a named shared-memory file that each
 * consumer decrements when done, and an interprocess event the consumer waits for; a storage
 * freed while its counter is above 0 waits in the limbo (CudaIPCSentDataLimbo) until a collect
 * finds it at 0. The driver-level half (handles, mappings, events) is lib/cuda/cuda_ipc.c's. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "c10c/cuda_ipc.h"
#include "cuda_internal.h"
#include "internal.h"
#include "os.h"
#include "shm.h"
#include "storage_internal.h"
#include "sysmem.h"

/* ---- counter files ----
 * torch's CudaIPCRefCountersFile over a RefcountedMapAllocator file: a named POSIX shared-memory
 * object of exactly FILE_BYTES, a 64-byte header whose int32 at 0 counts the processes that map
 * it (the last one to unmap it unlinks the name), then C10C_CUDA_IPC_REF_COUNTER_FILE_SIZE int64
 * counters. torch's header holds nothing else (its bytes 4 to 63 stay 0); ours also hold MAGIC
 * at byte 8 and VERSION at byte 16 (little-endian uint32), which torch neither reads nor writes,
 * so torch processes use our files as their own. Only these functions touch the file.
 *
 * A handle names a file by name only, and a named shared storage (storage_shared.c's, or
 * torch's) has the same layout: one of 80000 bytes is byte for byte the size of a counter file,
 * and decrementing "a counter" in it would change 8 bytes of someone's data. So a counter file
 * is recognised by what it is, and anything else is refused:
 * - libc10c's: MAGIC and a VERSION this library knows in the header. No storage has them: a
 *   storage's header is written only at its count (its bytes start at 64), so MAGIC can get
 *   there only by writing the object's raw bytes, which a process able to do could as well
 *   write the data itself.
 * - torch's (CudaIPCCreateRefCounter): named by at::NewProcessWideShmHandle,
 *   "/torch_<pid>_<random>_<serial>" ("/torch_<pid>_<random>" in torch before 1.2), exactly
 *   FILE_BYTES, header bytes 4 to 63 all 0. No storage of libc10c's is named so ("/c10c_...").
 * What remains ambiguous: torch names its own shared storages (file_system strategy,
 * _share_filename_cpu_) with the same NewProcessWideShmHandle, so a torch storage of exactly
 * 80000 bytes is indistinguishable from a torch counter file, and a handle naming one is
 * honoured. Nothing in torch's files tells them apart; only torch itself could (by a magic of
 * its own). */

enum {
  HEADER = 64,
  FILE_BYTES = HEADER + 8 * C10C_CUDA_IPC_REF_COUNTER_FILE_SIZE,
  MAGIC_AT = 8,
  VERSION_AT = 16,
  VERSION = 1, /* the layout above; a later one takes the next number */
};
static const uint8_t MAGIC[8] = {'c', '1', '0', 'c', '-', 'r', 'c', 'f'};

/* Errors of counter_map_open beyond the system's (errno values are positive). */
enum { NOT_COUNTER_FILE = -1, NEWER_VERSION = -2, COUNT_FULL = -3 };

static int64_t *counter_at(void *map, int64_t index) {
  return (int64_t *)(void *)((char *)map + HEADER) + index;
}

/* Whether name is at::NewProcessWideShmHandle's: "/torch_" then two or three decimal numbers
 * joined by '_'. */
static bool torch_name(const char *name) {
  static const char prefix[] = "/torch_";
  if (strncmp(name, prefix, sizeof prefix - 1) != 0) return false;
  int numbers = 0;
  for (const char *p = name + sizeof prefix - 1;; p++) {
    size_t digits = 0;
    while (p[digits] >= '0' && p[digits] <= '9') digits++;
    if (digits == 0 || digits > 20) return false;
    numbers++;
    p += digits;
    if (*p == '\0') return numbers == 2 || numbers == 3;
    if (*p != '_') return false;
  }
}

/* 0 when the header at map (of a file of FILE_BYTES named name) is a counter file's,
 * NOT_COUNTER_FILE or NEWER_VERSION else. */
static int check_header(const uint8_t *map, const char *name) {
  if (memcmp(map + MAGIC_AT, MAGIC, sizeof MAGIC) == 0)
    return c10c__get_le(map + VERSION_AT, 4) == VERSION ? 0 : NEWER_VERSION;
  if (!torch_name(name)) return NOT_COUNTER_FILE;
  for (int i = 4; i < HEADER; i++)
    if (map[i] != 0) return NOT_COUNTER_FILE;
  return 0;
}

/* Maps the file name names if it is a counter file, counting this process in its header when
 * count: 0, or ENOENT when it is gone (or stale: its count is 0, every user released it), EPERM
 * when another user owns it (as for the named storages of storage_shared.c, a handle of another
 * user is refused), NOT_COUNTER_FILE, NEWER_VERSION, COUNT_FULL (its count is INT32_MAX: never
 * wrapped), another errno value else. */
static int counter_map_open(void **out, const char *name, bool count) {
  *out = NULL;
  int fd;
  int err = c10c__shm_open(&fd, name, false);
  if (err != 0) return err;
  c10c__fd_info info;
  err = c10c__fd_stat(&info, fd);
  if (err == 0 && info.uid != c10c__effective_uid())
    err = EPERM;
  else if (err == 0 && (!info.regular || info.size != FILE_BYTES))
    err = NOT_COUNTER_FILE;
  void *map = NULL;
  if (err == 0) err = c10c__fd_map(&map, fd, FILE_BYTES, true, false);
  c10c__fd_close(fd);
  if (err == 0) err = check_header(map, name);
  if (err == 0 && count) {
    int32_t seen = c10c__shm_count_acquire(map);
    err = seen <= 0 ? ENOENT : seen == INT32_MAX ? COUNT_FULL : 0;
  }
  if (err != 0) {
    if (map != NULL) c10c__os_unmap(map, FILE_BYTES);
    return err;
  }
  *out = map;
  return 0;
}

/* Why counter_map_open refused the file name (err not ENOENT), in a sentence. */
static const char *refusal(char *buf, size_t size, int err, const char *name) {
  char text[128];
  if (err == EPERM)
    snprintf(buf, size, "its reference counter file <%s> belongs to another user", name);
  else if (err == NOT_COUNTER_FILE) /* release 1.1's words first (EINVAL), then why */
    snprintf(buf, size,
             "its reference counter file <%s>: %s (%d): it is not a CUDA IPC reference counter "
             "file (neither libc10c's, which carries its magic, nor torch's: a "
             "/torch_<pid>_<n>_<n> file of %d bytes): a shared storage, perhaps, whose bytes are "
             "left alone",
             name, c10c__errno_text(EINVAL, text, sizeof text), EINVAL, (int)FILE_BYTES);
  else if (err == NEWER_VERSION)
    snprintf(buf, size,
             "its reference counter file <%s> has a layout this libc10c does not know (made by "
             "a newer one)",
             name);
  else if (err == COUNT_FULL)
    snprintf(buf, size,
             "its reference counter file <%s> is mapped by INT32_MAX processes, the most its "
             "header counts",
             name);
  else
    snprintf(buf, size, "its reference counter file <%s>: %s (%d)", name,
             c10c__errno_text(err, text, sizeof text), err);
  return buf;
}

/* Makes a new file (its header counting this process) under a fresh name, its pages reserved
 * (a full /dev/shm fails here, not with SIGBUS at a counter's first write): 0 or an errno value. */
static int counter_map_create(void **out, char name[C10C_CUDA_IPC_NAME_SIZE]) {
  static _Atomic unsigned serial;
  *out = NULL;
  int err = EEXIST;
  for (int attempt = 0; attempt < 16 && err == EEXIST; attempt++) {
    snprintf(name, C10C_CUDA_IPC_NAME_SIZE, "/c10c_%lld_%u_%u", (long long)c10c__process_id(),
             (unsigned)c10c__random64(), atomic_fetch_add(&serial, 1));
    int fd;
    err = c10c__shm_open(&fd, name, true);
    if (err != 0) continue;
    void *map = NULL;
    err = c10c__fd_reserve(fd, FILE_BYTES);
    if (err == 0) err = c10c__fd_map(&map, fd, FILE_BYTES, true, false);
    c10c__fd_close(fd);
    if (err != 0) {
      c10c__shm_unlink(name);
      return err;
    }
    memcpy((uint8_t *)map + MAGIC_AT, MAGIC, sizeof MAGIC); /* before anyone knows the name */
    c10c__put_le((uint8_t *)map + VERSION_AT, VERSION, 4);
    atomic_store_explicit((_Atomic int32_t *)map, 1, memory_order_release);
    *out = map;
    return 0;
  }
  return err;
}

/* Stops counting this process in the file's header; the last process to do so unlinks its name. */
static void counter_map_release(void *map, const char *name) {
  if (c10c__shm_count_release(map) <= 1) c10c__shm_unlink(name);
}

/* Releases and unmaps the file. */
static void counter_map_drop(void *map, const char *name) {
  counter_map_release(map, name);
  c10c__os_unmap(map, FILE_BYTES);
}

/* Adds delta to a counter of a file by name: 0, or counter_map_open's error (ENOENT when the
 * file is gone; nothing is written to a file that is not a counter file). */
static int counter_add(const char *name, int64_t index, int64_t delta) {
  void *map;
  int err = counter_map_open(&map, name, true);
  if (err != 0) return err;
  atomic_fetch_add_explicit((_Atomic int64_t *)counter_at(map, index), delta, memory_order_acq_rel);
  counter_map_drop(map, name);
  return 0;
}

/* ---- the producer: sent data, files, limbo ---- */

typedef struct counter_file {
  char name[C10C_CUDA_IPC_NAME_SIZE];
  void *map;
  int64_t next;  /* the next unused counter */
  int64_t used;  /* sent data alive with a counter here */
  int64_t owner; /* the process counted in the header (not a forked child's copy); -1 released */
  struct counter_file *older, *newer; /* the files this process maps */
} counter_file;

typedef struct sent_data {
  c10c_data_ptr original; /* the memory, freed when no consumer holds it */
  counter_file *file;
  int64_t index;
  void *event; /* NULL when the stream was synchronized instead */
  uint8_t event_handle[C10C_CUDA_IPC_HANDLE_SIZE];
  struct sent_data *next; /* the limbo */
} sent_data;

/* torch's CUDA_IPC_MAXIMUM_EVENTS_TO_USE: beyond it the producer synchronizes its stream. */
enum { MAXIMUM_EVENTS = 1000 };

static c10c__mutex lock = C10C__MUTEX_INIT;
static counter_file *current_file;
static counter_file *files;         /* newest first */
static _Atomic int64_t files_maker; /* the process that made a file last; 0: none made */
static sent_data *limbo;
static int64_t limbo_count;
static int events_in_use;

static void file_drop(counter_file *f) {
  if (f->owner == c10c__process_id()) counter_map_release(f->map, f->name);
  c10c__os_unmap(f->map, FILE_BYTES);
  if (f->newer != NULL)
    f->newer->older = f->older;
  else
    files = f->older;
  if (f->older != NULL) f->older->newer = f->newer;
  c10c__free(f);
}

/* ~CudaIPCGlobalEntities: at exit (or when a host unloads the library) an unused current file
 * goes, and this process stops counting in the others, so that a name outlives it only while a
 * consumer maps it (before, every producer left its last file in /dev/shm). Files in use stay
 * mapped for frees that come later; their consumers' decrements then find no name, as when
 * the producer is killed. A forked child never counted itself in its parent's files, and returns
 * before the lock, which another thread of its parent may have held at the fork. */
void c10c_cuda_ipc_release_files(void) {
  int64_t maker = atomic_load_explicit(&files_maker, memory_order_acquire);
  if (maker == 0 || maker != c10c__process_id()) return;
  c10c__mutex_lock(&lock);
  if (current_file != NULL && current_file->used == 0) file_drop(current_file);
  current_file = NULL; /* a later share makes a new file */
  for (counter_file *f = files; f != NULL; f = f->older) {
    if (f->owner == maker) counter_map_release(f->map, f->name);
    f->owner = -1;
  }
  c10c__mutex_unlock(&lock);
}

/* A process that ends without exit handlers (_exit) calls c10c_cuda_ipc_release_files itself. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((destructor)) static void release_files_at_exit(void) {
  c10c_cuda_ipc_release_files();
}
#endif

/* A fresh counter set to 1 (the consumer's reference) in the current file (lock held). */
static c10c_status take_counter(sent_data *sd) {
  if (current_file == NULL || current_file->next == C10C_CUDA_IPC_REF_COUNTER_FILE_SIZE) {
    counter_file *f = c10c__calloc(1, sizeof *f);
    if (f == NULL) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory sharing a storage");
    int err = counter_map_create(&f->map, f->name);
    if (err != 0) {
      c10c__free(f);
      char text[128];
      return c10c__fail(C10C_STATUS_ERROR,
                        "could not make the shared-memory file of CUDA IPC reference counters: "
                        "%s (%d)",
                        c10c__errno_text(err, text, sizeof text), err);
    }
    f->owner = c10c__process_id();
    atomic_store_explicit(&files_maker, f->owner, memory_order_release);
    f->older = files;
    if (files != NULL) files->newer = f;
    files = f;
    if (current_file != NULL && current_file->used == 0) file_drop(current_file);
    current_file = f;
  }
  sd->file = current_file;
  sd->index = current_file->next++;
  current_file->used++;
  atomic_store_explicit((_Atomic int64_t *)counter_at(sd->file->map, sd->index), 1,
                        memory_order_release);
  return C10C_STATUS_OK;
}

static int64_t counter_value(const sent_data *sd) {
  return atomic_load_explicit((_Atomic int64_t *)counter_at(sd->file->map, sd->index),
                              memory_order_acquire);
}

/* Frees the memory and returns the counter (CudaIPCSentData's destructor). */
static void sent_destroy(sent_data *sd) {
  if (sd->original.deleter != NULL) sd->original.deleter(sd->original.ctx);
  c10c__cuda_ipc_event_destroy(sd->event);
  c10c__mutex_lock(&lock);
  if (sd->event != NULL) events_in_use--;
  if (--sd->file->used == 0 && sd->file != current_file) file_drop(sd->file);
  c10c__mutex_unlock(&lock);
  c10c__free(sd);
}

/* The deleter of a shared storage's memory (CudaIPCSentDataDelete): to the limbo while a
 * consumer holds it. */
static void sent_free(void *ctx) {
  sent_data *sd = ctx;
  c10c__mutex_lock(&lock);
  bool held = counter_value(sd) > 0;
  if (held) {
    sd->next = limbo;
    limbo = sd;
    limbo_count++;
  }
  c10c__mutex_unlock(&lock);
  if (!held) sent_destroy(sd);
}

c10c_status c10c_cuda_ipc_collect(bool *freed) {
  c10c__mutex_lock(&lock);
  sent_data *done = NULL;
  for (sent_data **link = &limbo; *link != NULL;) {
    sent_data *sd = *link;
    if (counter_value(sd) <= 0) {
      *link = sd->next;
      sd->next = done;
      done = sd;
      limbo_count--;
    } else {
      link = &sd->next;
    }
  }
  /* CudaIPCCollect's safe_clean_current_file: an empty limbo lets an unused file go */
  if (limbo == NULL && current_file != NULL && current_file->used == 0 && done == NULL) {
    file_drop(current_file);
    current_file = NULL;
  }
  c10c__mutex_unlock(&lock);
  if (freed != NULL) *freed = done != NULL;
  while (done != NULL) {
    sent_data *next = done->next;
    sent_destroy(done);
    done = next;
  }
  return C10C_STATUS_OK;
}

int64_t c10c_cuda_ipc_limbo_count(void) {
  c10c__mutex_lock(&lock);
  int64_t n = limbo_count;
  c10c__mutex_unlock(&lock);
  return n;
}

static bool collect_on_out_of_memory(void) {
  bool freed = false;
  c10c_cuda_ipc_collect(&freed);
  return freed;
}

/* ---- the consumer: received memory ---- */

typedef struct received_data {
  void *token; /* the mapping (lib/cuda/cuda_ipc.c) */
  c10c_device_index device;
  char counter[C10C_CUDA_IPC_NAME_SIZE];
  int64_t index;
  int64_t offset; /* of the storage in the handle's memory */
  size_t handle_len;
  uint8_t handle[]; /* the handle, to share the storage again */
} received_data;

static void received_free(void *ctx) {
  received_data *rd = ctx;
  /* a child forked from the consumer frees only its copy: the reference is its parent's */
  bool usable = c10c__cuda_usable();
  /* torch's deleter: the consumer's work on the memory is done before the producer may reuse it */
  if (usable) c10c__cuda_sync_current_stream(rd->device);
  c10c__cuda_ipc_close(rd->token);
  if (usable && rd->counter[0] != '\0') counter_add(rd->counter, rd->index, -1); /* best effort */
  c10c__free(rd);
}

bool c10c_storage_is_received_cuda(const c10c_storage *storage) {
  c10c_data_ptr dp;
  return storage != NULL && c10c_storage_data_ptr(&dp, storage) == C10C_STATUS_OK &&
         dp.deleter == received_free;
}

/* ---- the public calls ---- */

/* The first published c10c_cuda_ipc_info ends after handle_len. */
#define INFO_MIN_SIZE (offsetof(c10c_cuda_ipc_info, handle_len) + sizeof(uint64_t))

static c10c_status check_info(const c10c_cuda_ipc_info *info) {
  return c10c__check_struct_size(info->struct_size, INFO_MIN_SIZE, "c10c_cuda_ipc_info",
                                 " of the IPC description");
}

/* Passes on the handle a storage was received with (beyond torch, which refuses): the original
 * producer's counter is raised for the new consumer, and this process's stream is synchronized
 * instead of an event. */
static c10c_status share_received(c10c_cuda_ipc_info *out, uint8_t *handle, size_t handle_size,
                                  const received_data *rd, const c10c_data_ptr *dp) {
  out->handle_len = rd->handle_len;
  if (handle_size < rd->handle_len)
    return c10c__fail(C10C_STATUS_BUFFER_TOO_SMALL,
                      "a CUDA IPC handle needs %zu bytes, the buffer has %zu", rd->handle_len,
                      handle_size);
  int err = rd->counter[0] != '\0' ? counter_add(rd->counter, rd->index, 1) : 0;
  if (err == ENOENT)
    return c10c__fail(C10C_STATUS_ERROR,
                      "cannot share this CUDA storage again: the process it was received from "
                      "has exited");
  if (err != 0) {
    char why[512];
    return c10c__fail(C10C_STATUS_ERROR, "cannot share this CUDA storage again: %s",
                      refusal(why, sizeof why, err, rd->counter));
  }
  c10c_status st = c10c__cuda_sync_current_stream(dp->device.index);
  if (st != C10C_STATUS_OK) {
    if (rd->counter[0] != '\0') counter_add(rd->counter, rd->index, -1);
    return st;
  }
  memcpy(handle, rd->handle, rd->handle_len);
  out->storage_offset_bytes = rd->offset;
  snprintf(out->ref_counter_handle, sizeof out->ref_counter_handle, "%s", rd->counter);
  out->ref_counter_offset = rd->index;
  return C10C_STATUS_OK;
}

c10c_status c10c_storage_share_cuda(c10c_cuda_ipc_info *out, uint8_t *handle, size_t handle_size,
                                    c10c_storage *storage) {
  C10C__CHECK_NOT_NULL(out);
  C10C__CHECK_NOT_NULL(storage);
  if (handle_size > 0) C10C__CHECK_NOT_NULL(handle);
  c10c_status st = check_info(out);
  if (st != C10C_STATUS_OK) return st;
  c10c_device device = c10c_storage_device(storage);
  if (device.type != C10C_DEVICE_TYPE_CUDA)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "_share_cuda_: only available on CUDA");
  c10c_data_ptr dp;
  st = c10c_storage_data_ptr(&dp, storage);
  if (st != C10C_STATUS_OK) return st;
  uint32_t size = out->struct_size;
  memset(out, 0, size < sizeof *out ? size : sizeof *out);
  out->struct_size = size;
  out->device = device.index;
  out->storage_size_bytes = c10c_storage_nbytes(storage);
  if (dp.data == NULL) return C10C_STATUS_OK; /* torch: no handle, counter or event */
  if (dp.deleter == received_free) return share_received(out, handle, handle_size, dp.ctx, &dp);
  c10c_data_ptr memory = dp; /* shared before: the memory is the innermost sent data's */
  while (memory.deleter == sent_free) memory = ((sent_data *)memory.ctx)->original;
  memory.data = dp.data;
  size_t len = 0, offset = 0;
  st = c10c__cuda_ipc_share(handle, handle_size, &len, &offset, &memory);
  out->handle_len = len;
  if (st != C10C_STATUS_OK) return st;
  sent_data *sd = c10c__calloc(1, sizeof *sd);
  if (sd == NULL) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory sharing a storage");
  c10c__mutex_lock(&lock);
  st = take_counter(sd);
  bool use_event = events_in_use < MAXIMUM_EVENTS;
  if (st == C10C_STATUS_OK && use_event) events_in_use++;
  c10c__mutex_unlock(&lock);
  if (st == C10C_STATUS_OK && use_event) {
    st = c10c__cuda_ipc_event_record(&sd->event, sd->event_handle, device.index);
    if (st != C10C_STATUS_OK) {
      c10c__mutex_lock(&lock);
      events_in_use--;
      c10c__mutex_unlock(&lock);
    }
  } else if (st == C10C_STATUS_OK) {
    st = c10c__cuda_sync_current_stream(device.index);
  }
  if (st != C10C_STATUS_OK) {
    if (sd->file != NULL)
      sent_destroy(sd); /* original is empty: nothing freed */
    else
      c10c__free(sd);
    return st;
  }
  c10c__cuda_set_free_memory_callback(collect_on_out_of_memory);
  sd->original =
      c10c__storage_swap_data_ptr(storage, (c10c_data_ptr){dp.data, sd, sent_free, device});
  out->storage_offset_bytes = (int64_t)offset;
  snprintf(out->ref_counter_handle, sizeof out->ref_counter_handle, "%s", sd->file->name);
  out->ref_counter_offset = sd->index;
  out->event_sync_required = sd->event != NULL;
  if (sd->event != NULL) memcpy(out->event_handle, sd->event_handle, sizeof out->event_handle);
  return C10C_STATUS_OK;
}

c10c_status c10c_storage_new_shared_cuda(c10c_storage **out, const c10c_cuda_ipc_info *info,
                                         const uint8_t *handle, size_t handle_len) {
  C10C__CHECK_NOT_NULL(out);
  *out = NULL;
  C10C__CHECK_NOT_NULL(info);
  C10C__CHECK_NOT_NULL(handle);
  c10c_status st = check_info(info);
  if (st != C10C_STATUS_OK) return st;
  if (info->storage_size_bytes < 0 || info->storage_offset_bytes < 0 ||
      info->ref_counter_offset < 0 ||
      info->ref_counter_offset >= C10C_CUDA_IPC_REF_COUNTER_FILE_SIZE)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "_new_shared_cuda: negative size or offset, or a counter offset outside "
                      "the counter file");
  if (memchr(info->ref_counter_handle, '\0', sizeof info->ref_counter_handle) == NULL)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "_new_shared_cuda: the reference counter's name is not terminated");
  c10c_device_index device = (c10c_device_index)info->device;
  if (info->device < -1 || info->device > INT16_MAX)
    return c10c__fail(C10C_STATUS_ERROR, "CUDA error: invalid device ordinal");
  st = c10c__cuda_resolve(&device);
  if (st != C10C_STATUS_OK) return st;
  /* the counter this storage will decrement when it goes must be one: not a shared storage's
   * bytes. A file already gone (its producer exited) is torch's best effort, not an error. */
  if (info->ref_counter_handle[0] != '\0') {
    void *map = NULL;
    int err = counter_map_open(&map, info->ref_counter_handle, false);
    if (map != NULL) c10c__os_unmap(map, FILE_BYTES);
    if (err != 0 && err != ENOENT) {
      char why[512];
      return c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "_new_shared_cuda: %s",
                        refusal(why, sizeof why, err, info->ref_counter_handle));
    }
  }
  if (info->event_sync_required)
    st = c10c__cuda_ipc_event_wait(info->event_handle, device); /* the producer's writes first */
  if (st != C10C_STATUS_OK) return st;
  received_data *rd = c10c__calloc(1, sizeof *rd + handle_len);
  if (rd == NULL)
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory opening a CUDA IPC handle");
  void *base = NULL;
  size_t mapped = 0;
  st = c10c__cuda_ipc_open(&base, &mapped, &rd->token, handle, handle_len, device);
  uint64_t end = (uint64_t)info->storage_offset_bytes + (uint64_t)info->storage_size_bytes;
  if (st == C10C_STATUS_OK && end > mapped)
    st = c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                    "_new_shared_cuda: %lld bytes at offset %lld lie outside the %zu bytes the "
                    "handle maps",
                    (long long)info->storage_size_bytes, (long long)info->storage_offset_bytes,
                    mapped);
  if (st != C10C_STATUS_OK) {
    c10c__cuda_ipc_close(rd->token);
    c10c__free(rd);
    return st;
  }
  rd->device = device;
  snprintf(rd->counter, sizeof rd->counter, "%s", info->ref_counter_handle);
  rd->index = info->ref_counter_offset;
  rd->offset = info->storage_offset_bytes;
  rd->handle_len = handle_len;
  memcpy(rd->handle, handle, handle_len);
  st = c10c_storage_new_external(out, (char *)base + info->storage_offset_bytes,
                                 info->storage_size_bytes,
                                 (c10c_device){C10C_DEVICE_TYPE_CUDA, device}, received_free, rd);
  if (st != C10C_STATUS_OK) { /* the counter stays the caller's to release */
    c10c__cuda_ipc_close(rd->token);
    c10c__free(rd);
  }
  return st;
}

c10c_status c10c_cuda_ipc_release_counter(const char *ref_counter_handle,
                                          int64_t ref_counter_offset) {
  C10C__CHECK_NOT_NULL(ref_counter_handle);
  if (ref_counter_offset < 0 || ref_counter_offset >= C10C_CUDA_IPC_REF_COUNTER_FILE_SIZE)
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "_release_ipc_counter: offset %lld lies outside the counter file",
                      (long long)ref_counter_offset);
  int err = counter_add(ref_counter_handle, ref_counter_offset, -1);
  if (err == 0 || err == ENOENT) return C10C_STATUS_OK; /* gone: best effort, as torch */
  char why[512];
  return c10c__fail(
      err == EPERM || err == NOT_COUNTER_FILE ? C10C_STATUS_INVALID_ARGUMENT : C10C_STATUS_ERROR,
      "_release_ipc_counter: %s", refusal(why, sizeof why, err, ref_counter_handle));
}
