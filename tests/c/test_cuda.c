/* The CUDA driver loader and devices, through the stand-in driver (tests/cuda_stub/): meson runs
 * this program once per scenario (argv[1]), each with its own environment, because the driver
 * is loaded once per process.
 *   available    C10C_CUDA_DRIVER = the stand-in (2 devices of 1 GiB)
 *   absent       C10C_CUDA_DRIVER = a path that does not exist
 *   partial      the stand-in built without cuMemFree_v2
 *   no_device    the stand-in with C10C_STUB_DEVICES=0
 *   init_error   the stand-in with cuInit failing (C10C_STUB_INIT_ERROR=999)
 *   config       C10C_ALLOC_CONF=max_split_size_mb:30; bad_config: an unknown key
 */
#define _POSIX_C_SOURCE 200809L
#ifndef _WIN32
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>
#endif
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "c10c/testing.h"
#include "harness.h"
#include "os_compat.h"

static const char *scenario;

/* More than any device holds: 1 PiB, or 1.5 GiB on a 32-bit host (whose engine refuses past
 * 1 GiB, where its rounding could overflow). */
#if SIZE_MAX > UINT32_MAX
#define ABSURD_BYTES ((size_t)1 << 50)
#else
#define ABSURD_BYTES ((size_t)3 << 29)
#endif

/* The stand-in's control functions, from the same (already loaded) library. */
static void *stub(const char *symbol) {
  void *handle = dlopen(getenv("C10C_CUDA_DRIVER"), RTLD_NOW | RTLD_NOLOAD);
  void *address = handle ? dlsym(handle, symbol) : NULL;
  if (handle) dlclose(handle);
  return address;
}

static long stub_calls(const char *entry) {
  long (*calls)(const char *) = NULL;
  void *address = stub("c10c_stub_calls");
  memcpy(&calls, &address, sizeof address);
  return calls ? calls(entry) : -1;
}

static void stub_fail(const char *entry, long k, int error) {
  void (*fail)(const char *, long, int) = NULL;
  void *address = stub("c10c_stub_fail");
  memcpy(&fail, &address, sizeof address);
  if (fail) fail(entry, k, error);
}

static void expect_unavailable(const char *reason_start) {
  ASSERT_FALSE(c10c_cuda_is_available());
  ASSERT_EQ(c10c_cuda_device_count(), 0);
  const char *reason = c10c_cuda_unavailable_reason();
  if (strncmp(reason, reason_start, strlen(reason_start)) != 0)
    FAIL_AT("reason \"%s\" does not start with \"%s\"", reason, reason_start);
  /* every call says so, with the same reason */
  ASSERT_STATUS(C10C_STATUS_UNAVAILABLE, c10c_cuda_init());
  ASSERT_STR_EQ(c10c_last_error_message(), reason);
  c10c_device_index d;
  ASSERT_STATUS(C10C_STATUS_UNAVAILABLE, c10c_cuda_current_device(&d));
  ASSERT_STATUS(C10C_STATUS_UNAVAILABLE, c10c_cuda_set_device(0));
  int64_t free_bytes, total;
  ASSERT_STATUS(C10C_STATUS_UNAVAILABLE, c10c_cuda_mem_get_info(&free_bytes, &total, 0));
  ASSERT_STATUS(C10C_STATUS_UNAVAILABLE, c10c_cuda_synchronize(0));
  c10c_cuda_device_guard g = C10C_CUDA_DEVICE_GUARD_INIT;
  ASSERT_STATUS(C10C_STATUS_UNAVAILABLE, c10c_cuda_device_guard_enter(&g, 1));
  ASSERT_OK(c10c_cuda_device_guard_exit(&g)); /* inactive: nothing to undo */
}

TEST(unavailable_paths_say_why) {
  if (strcmp(scenario, "absent") == 0) expect_unavailable("CUDA driver not found: ");
  /* a fully static program (tests/meson.build's static_executables): the stand-in is there,
   * but no dynamic loader can load it, and the reason says what the loader said */
  if (strcmp(scenario, "static") == 0) {
    expect_unavailable("CUDA driver not found: ");
    printf("  (%s)\n", c10c_cuda_unavailable_reason());
  }
  if (strcmp(scenario, "partial") == 0) {
    expect_unavailable("CUDA driver ");
    ASSERT_TRUE(strstr(c10c_cuda_unavailable_reason(), " has no cuMemFree_v2") != NULL);
  }
  if (strcmp(scenario, "no_device") == 0)
    expect_unavailable("cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)");
  if (strcmp(scenario, "init_error") == 0)
    expect_unavailable("cuInit failed: CUDA_ERROR_UNKNOWN (unknown error)");
}

/* ---- with the stand-in ---- */

static void *count_devices(void *arg) {
  (void)arg;
  return (void *)(intptr_t)c10c_cuda_device_count();
}

TEST(first_use_from_many_threads_loads_once) {
  pthread_t threads[8];
  for (int i = 0; i < 8; i++) pthread_create(&threads[i], NULL, count_devices, NULL);
  for (int i = 0; i < 8; i++) {
    void *n;
    pthread_join(threads[i], &n);
    ASSERT_EQ((int)(intptr_t)n, 2);
  }
  ASSERT_EQ(stub_calls("cuInit"), 1);
  ASSERT_TRUE(c10c_cuda_is_available());
  ASSERT_STR_EQ(c10c_cuda_unavailable_reason(), "");
  int version = 0;
  ASSERT_OK(c10c_cuda_driver_version(&version));
  ASSERT_EQ(version, 12080);
}

static void *device_of_new_thread(void *arg) {
  (void)arg;
  c10c_device_index d = -1;
  c10c_cuda_current_device(&d);
  return (void *)(intptr_t)d;
}

TEST(current_device_is_per_thread_and_checked) {
  c10c_device_index d = -1;
  ASSERT_OK(c10c_cuda_current_device(&d));
  ASSERT_EQ(d, 0);
  ASSERT_OK(c10c_cuda_set_device(1));
  ASSERT_OK(c10c_cuda_current_device(&d));
  ASSERT_EQ(d, 1);
  pthread_t t;
  void *other;
  pthread_create(&t, NULL, device_of_new_thread, NULL);
  pthread_join(t, &other);
  ASSERT_EQ((int)(intptr_t)other, 0); /* another thread starts at device 0 */
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_cuda_set_device(2));
  ASSERT_ERROR_MESSAGE("CUDA error: invalid device ordinal");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_cuda_set_device(-1));
  ASSERT_OK(c10c_cuda_current_device(&d));
  ASSERT_EQ(d, 1); /* unchanged by the failures */
  ASSERT_OK(c10c_cuda_set_device(0));
  ASSERT_EQ(stub_calls("cuDevicePrimaryCtxRetain"), 2); /* once per device */
}

TEST(device_guard_restores_the_device) {
  ASSERT_OK(c10c_cuda_set_device(0));
  c10c_cuda_device_guard outer = C10C_CUDA_DEVICE_GUARD_INIT, inner = C10C_CUDA_DEVICE_GUARD_INIT,
                         none = C10C_CUDA_DEVICE_GUARD_INIT;
  ASSERT_OK(c10c_cuda_device_guard_enter(&outer, 1));
  ASSERT_OK(c10c_cuda_device_guard_enter(&none, -1)); /* no device: changes nothing */
  ASSERT_OK(c10c_cuda_device_guard_enter(&inner, 0));
  c10c_device_index d;
  ASSERT_OK(c10c_cuda_current_device(&d));
  ASSERT_EQ(d, 0);
  ASSERT_OK(c10c_cuda_device_guard_exit(&inner));
  ASSERT_OK(c10c_cuda_device_guard_exit(&none));
  ASSERT_OK(c10c_cuda_current_device(&d));
  ASSERT_EQ(d, 1);
  ASSERT_OK(c10c_cuda_device_guard_exit(&outer));
  ASSERT_OK(c10c_cuda_device_guard_exit(&outer)); /* a second exit does nothing */
  ASSERT_OK(c10c_cuda_current_device(&d));
  ASSERT_EQ(d, 0);
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_device_guard_enter(NULL, 0));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_device_guard_exit(NULL));
  c10c_cuda_device_guard bad = C10C_CUDA_DEVICE_GUARD_INIT;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_cuda_device_guard_enter(&bad, 9));
  ASSERT_OK(c10c_cuda_device_guard_exit(&bad));
  ASSERT_OK(c10c_cuda_current_device(&d));
  ASSERT_EQ(d, 0);
  /* struct_size: unset (0) or too small is refused, the device untouched; larger (a newer
   * host's guard) is served */
  c10c_cuda_device_guard unsized = {0, 5, 5};
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_device_guard_enter(&unsized, 1));
  ASSERT_ERROR_MESSAGE(
      "c10c_cuda_device_guard.struct_size is 0, smaller than any version of the "
      "guard (6); set it to sizeof(c10c_cuda_device_guard)");
  ASSERT_EQ(unsized.original, 5);
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_device_guard_exit(&unsized));
  unsized.struct_size = 5;
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_device_guard_enter(&unsized, 1));
  ASSERT_OK(c10c_cuda_current_device(&d));
  ASSERT_EQ(d, 0);
  struct {
    c10c_cuda_device_guard guard;
    int64_t future_field;
  } newer = {C10C_CUDA_DEVICE_GUARD_INIT, 0};
  newer.guard.struct_size = sizeof newer;
  ASSERT_OK(c10c_cuda_device_guard_enter(&newer.guard, 1));
  ASSERT_OK(c10c_cuda_current_device(&d));
  ASSERT_EQ(d, 1);
  ASSERT_EQ(newer.guard.original, 0);
  ASSERT_OK(c10c_cuda_device_guard_exit(&newer.guard));
  ASSERT_OK(c10c_cuda_current_device(&d));
  ASSERT_EQ(d, 0);
}

TEST(device_queries_and_driver_errors) {
  char name[64];
  ASSERT_OK(c10c_cuda_device_name(name, sizeof name, 1));
  ASSERT_STR_EQ(name, "libc10c stand-in GPU 1");
  char small[8];
  ASSERT_OK(c10c_cuda_device_name(small, sizeof small, 0)); /* truncated, terminated */
  ASSERT_STR_EQ(small, "libc10c");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_cuda_device_name(name, sizeof name, 5));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_device_name(NULL, 4, 0));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_device_name(NULL, 0, 0));
  ASSERT_STATUS(C10C_STATUS_BUFFER_TOO_SMALL, c10c_cuda_device_name(name, 0, 0));
  ASSERT_OK(c10c_cuda_device_name(name, sizeof name, -1)); /* the current device, 0 */
  ASSERT_STR_EQ(name, "libc10c stand-in GPU 0");
  int64_t free_bytes = 0, total = 0;
  ASSERT_OK(c10c_cuda_mem_get_info(&free_bytes, &total, 1));
  ASSERT_EQ(total, INT64_C(1) << 30);
  ASSERT_EQ(free_bytes, total);
  ASSERT_OK(c10c_cuda_synchronize(1));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_cuda_mem_get_info(&free_bytes, &total, -1));
  ASSERT_ERROR_MESSAGE("CUDA error: invalid device ordinal");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_cuda_synchronize(-1));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_mem_get_info(NULL, &total, 0));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_mem_get_info(&free_bytes, NULL, 0));
  int version = 0;
  ASSERT_OK(c10c_cuda_driver_version(&version));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_driver_version(NULL));
  c10c_device_index d;
  ASSERT_OK(c10c_cuda_current_device(&d));
  ASSERT_EQ(d, 0); /* the queries on device 1 left the thread on device 0 */
  /* a failing driver call: its name and text in the message */
  stub_fail("cuCtxSynchronize", 1, 999);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_cuda_synchronize(0));
  ASSERT_ERROR_MESSAGE("CUDA driver error: CUDA_ERROR_UNKNOWN (unknown error) in cuCtxSynchronize");
  stub_fail("cuMemGetInfo_v2", 1, 2);
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c_cuda_mem_get_info(&free_bytes, &total, 0));
  ASSERT_OK(c10c_cuda_synchronize(0)); /* one failure each */
}

static void stub_enqueue(c10c_stream s, uint64_t ticks) {
  void (*enqueue)(void *, uint64_t) = NULL;
  void *address = stub("c10c_stub_enqueue"), *handle = NULL;
  memcpy(&enqueue, &address, sizeof address);
  ASSERT_OK(c10c_cuda_set_device(s.device.index)); /* the default stream is the current device's */
  ASSERT_OK(c10c_cuda_stream_handle(&handle, s));
  if (enqueue) enqueue(handle, ticks);
}

static void stub_advance(uint64_t ticks) {
  void (*advance)(uint64_t) = NULL;
  void *address = stub("c10c_stub_advance");
  memcpy(&advance, &address, sizeof address);
  if (advance) advance(ticks);
}

TEST(streams_follow_c10s_pools_and_ids) {
  ASSERT_OK(c10c_cuda_set_device(0));
  c10c_stream s, d, cur;
  ASSERT_OK(c10c_cuda_default_stream(&d, -1));
  ASSERT_EQ(d.id, 0);
  ASSERT_EQ(d.device.type, C10C_DEVICE_TYPE_CUDA);
  ASSERT_EQ(d.device.index, 0);
  ASSERT_OK(c10c_cuda_current_stream(&cur, 1));
  ASSERT_TRUE(cur.id == 0 && cur.device.index == 1);
  /* pools: ids (index << 5) | (type << 1) | 1, round robin over 32 */
  ASSERT_OK(c10c_cuda_stream_from_pool(&s, 0, 1));
  ASSERT_EQ(s.id, 3);
  ASSERT_EQ(s.device.index, 1);
  ASSERT_OK(c10c_cuda_stream_from_pool(&s, 0, 1));
  ASSERT_EQ(s.id, (1 << 5) | 3);
  ASSERT_OK(c10c_cuda_stream_from_pool(&s, -1, 1));
  ASSERT_EQ(s.id, 5);
  int priority = 7;
  ASSERT_OK(c10c_cuda_stream_priority(&priority, s));
  ASSERT_EQ(priority, -1);
  for (int i = 0; i < 32; i++) ASSERT_OK(c10c_cuda_stream_from_pool(&s, -1, 1));
  ASSERT_EQ(s.id, 5);                                      /* wrapped around */
  ASSERT_EQ(stub_calls("cuStreamCreateWithPriority"), 64); /* both pools of device 1, once */
  /* current stream per thread and device; the device does not change */
  ASSERT_OK(c10c_cuda_set_current_stream(s));
  ASSERT_OK(c10c_cuda_current_stream(&cur, 1));
  ASSERT_TRUE(c10c_stream_equal(cur, s));
  ASSERT_OK(c10c_cuda_current_stream(&cur, -1));
  ASSERT_EQ(cur.device.index, 0);
  ASSERT_EQ(cur.id, 0);
  c10c_stream back;
  ASSERT_OK(c10c_cuda_default_stream(&back, 1));
  ASSERT_OK(c10c_cuda_set_current_stream(back));
  /* values that name no stream */
  c10c_stream bad = s;
  bad.id = 7 << 5 | (3 << 1) | 1;
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_set_current_stream(bad));
  bad.id = 0x7f0000; /* even: an external cudaStream_t */
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_stream_synchronize(bad));
  bad = (c10c_stream){{C10C_DEVICE_TYPE_CPU, -1}, 0};
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_stream_synchronize(bad));
  ASSERT_ERROR_MESSAGE("Expected a CUDA stream, got stream 0 on device cpu");
  /* a device type that is none: its fields, not an unwritten buffer (read uninitialised before) */
  bad = (c10c_stream){{99, 0}, 5};
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_set_current_stream(bad));
  ASSERT_ERROR_MESSAGE("Expected a CUDA stream, got stream 5 on device type 99, index 0");
  c10c_stream *no_stream = NULL;
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_default_stream(no_stream, 0));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_current_stream(no_stream, 0));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_stream_from_pool(no_stream, 0, 0));
  bad = (c10c_stream){{C10C_DEVICE_TYPE_CUDA, 4}, 0};
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_cuda_stream_synchronize(bad));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_cuda_stream_from_pool(&s, 0, 2));
}

TEST(stream_work_and_events_on_the_stand_ins_clock) {
  c10c_stream a, b;
  ASSERT_OK(c10c_cuda_stream_from_pool(&a, 0, 0));
  ASSERT_OK(c10c_cuda_stream_from_pool(&b, 0, 0));
  bool done = false;
  stub_enqueue(a, 5); /* 5 ms of work on a */
  ASSERT_OK(c10c_cuda_stream_query(&done, a));
  ASSERT_FALSE(done);
  c10c_cuda_event *start = NULL, *end = NULL, *untimed = NULL;
  ASSERT_OK(c10c_cuda_event_new(&start, true));
  ASSERT_OK(c10c_cuda_event_new(&end, true));
  ASSERT_OK(c10c_cuda_event_new(&untimed, false));
  ASSERT_OK(c10c_cuda_event_query(&done, end));
  ASSERT_TRUE(done); /* never recorded */
  ASSERT_OK(c10c_cuda_event_synchronize(end));
  ASSERT_OK(c10c_cuda_event_wait(end, b)); /* never recorded: nothing to wait for */
  float ms = 0;
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_event_elapsed_time(&ms, start, end));
  ASSERT_ERROR_MESSAGE("Both events must be recorded before calculating elapsed time.");
  ASSERT_OK(c10c_cuda_event_record(start, b)); /* b idle: done at once */
  ASSERT_OK(c10c_cuda_event_record(end, a));   /* after a's 5 ms */
  ASSERT_OK(c10c_cuda_event_query(&done, end));
  ASSERT_FALSE(done);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_cuda_event_elapsed_time(&ms, start, end));
  ASSERT_ERROR_MESSAGE("Both events must be completed before calculating elapsed time.");
  /* b waits for a's work: b's later work cannot finish before it */
  ASSERT_OK(c10c_cuda_event_wait(end, b));
  ASSERT_OK(c10c_cuda_stream_query(&done, b));
  ASSERT_FALSE(done);
  stub_advance(5);
  ASSERT_OK(c10c_cuda_stream_query(&done, b));
  ASSERT_TRUE(done);
  ASSERT_OK(c10c_cuda_event_elapsed_time(&ms, start, end));
  ASSERT_TRUE(ms == 5.0f);
  ASSERT_OK(c10c_cuda_event_record(untimed, a));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_event_elapsed_time(&ms, start, untimed));
  ASSERT_ERROR_MESSAGE("Both events must be created with argument 'enable_timing=True'.");
  /* synchronize: the host waits for the work */
  stub_enqueue(a, 3);
  ASSERT_OK(c10c_cuda_stream_synchronize(a));
  ASSERT_OK(c10c_cuda_stream_query(&done, a));
  ASSERT_TRUE(done);
  /* an event stays on its first device */
  c10c_stream other;
  ASSERT_OK(c10c_cuda_default_stream(&other, 1));
  /* c10's TORCH_CHECK: a RuntimeError in torch */
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_cuda_event_record(start, other));
  ASSERT_ERROR_MESSAGE("Event device 0 does not match recording stream's device 1.");
  /* the default stream of a device works too */
  c10c_stream d0;
  ASSERT_OK(c10c_cuda_default_stream(&d0, 0));
  stub_enqueue(d0, 2);
  ASSERT_OK(c10c_cuda_event_record(untimed, d0));
  ASSERT_OK(c10c_cuda_event_synchronize(untimed));
  ASSERT_OK(c10c_cuda_event_query(&done, untimed));
  ASSERT_TRUE(done);
  c10c_cuda_event_free(start);
  c10c_cuda_event_free(end);
  c10c_cuda_event_free(untimed);
  c10c_cuda_event_free(NULL);
  ASSERT_EQ(stub_calls("cuEventDestroy_v2"), 3);
}

static long stub_long(const char *symbol, int arg) {
  long (*fn)(int) = NULL;
  void *address = stub(symbol);
  memcpy(&fn, &address, sizeof address);
  return fn ? fn(arg) : -1;
}

TEST(cuda_tensors_allocate_on_their_device_and_copy_through_the_driver) {
  const c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1}, cuda1 = {C10C_DEVICE_TYPE_CUDA, 1};
  ASSERT_OK(c10c_cuda_set_device(0));
  int64_t sizes[2] = {3, 4};
  c10c_tensor *host = NULL, *dev = NULL, *back = NULL, *t = NULL, *clone = NULL, *cur = NULL;
  ASSERT_OK(c10c_tensor_empty(&host, sizes, 2, C10C_DTYPE_FLOAT32, cpu, 0));
  float *h = c10c_tensor_data(host);
  for (int i = 0; i < 12; i++) h[i] = (float)i;
  ASSERT_OK(c10c_tensor_empty(&dev, sizes, 2, C10C_DTYPE_FLOAT32, cuda1, 0));
  c10c_device d = c10c_tensor_device(dev);
  ASSERT_TRUE(d.type == C10C_DEVICE_TYPE_CUDA && d.index == 1);
  /* the caching allocator took one 2 MiB small-pool segment, on device 1 though 0 is current */
  ASSERT_EQ(stub_long("c10c_stub_used", 1), 2 << 20);
  ASSERT_EQ(stub_long("c10c_stub_used", 0), 0);
  c10c_device_index now;
  ASSERT_OK(c10c_cuda_current_device(&now));
  ASSERT_EQ(now, 0);
  ASSERT_OK(c10c_tensor_copy_(dev, host)); /* host to device: one driver copy */
  ASSERT_OK(c10c_tensor_empty(&back, sizes, 2, C10C_DTYPE_FLOAT32, cpu, 0));
  ASSERT_OK(c10c_tensor_transpose(&t, back, 0, 0));
  ASSERT_OK(c10c_tensor_copy_(back, dev)); /* and back */
  ASSERT_TRUE(memcmp(c10c_tensor_data(back), h, 48) == 0);
  /* a transposed host source is arranged on the host first */
  c10c_tensor *ht = NULL, *dt = NULL;
  ASSERT_OK(c10c_tensor_transpose(&ht, host, 0, 1));
  int64_t tsizes[2] = {4, 3};
  ASSERT_OK(c10c_tensor_empty(&dt, tsizes, 2, C10C_DTYPE_FLOAT32, cuda1, 0));
  ASSERT_OK(c10c_tensor_copy_(dt, ht));
  c10c_tensor *hb = NULL;
  ASSERT_OK(c10c_tensor_empty(&hb, tsizes, 2, C10C_DTYPE_FLOAT32, cpu, 0));
  ASSERT_OK(c10c_tensor_copy_(hb, dt));
  ASSERT_TRUE(((float *)c10c_tensor_data(hb))[1] == 4.0f); /* hb[0][1] = host[1][0] */
  /* a CUDA clone is a device-to-device copy; zero_ and fill_ work on dense CUDA tensors */
  ASSERT_OK(c10c_tensor_clone(&clone, dev, C10C_MEMORY_FORMAT_PRESERVE));
  ASSERT_OK(c10c_tensor_zero_(dev));
  ASSERT_OK(c10c_tensor_copy_(back, dev));
  ASSERT_TRUE(((float *)c10c_tensor_data(back))[11] == 0.0f);
  ASSERT_OK(c10c_tensor_copy_(back, clone));
  ASSERT_TRUE(((float *)c10c_tensor_data(back))[11] == 11.0f);
  float two = 2.0f;
  ASSERT_OK(c10c_tensor_fill_(clone, &two));
  ASSERT_OK(c10c_tensor_copy_(back, clone));
  ASSERT_TRUE(((float *)c10c_tensor_data(back))[5] == 2.0f);
  /* strided CUDA views (dev[:, ::2]) go through their span on the host: the elements between
   * theirs keep their values */
  c10c_tensor *strided = NULL, *host_strided = NULL, *dt2 = NULL, *devt = NULL;
  ASSERT_OK(c10c_tensor_zero_(dev));
  ASSERT_OK(c10c_tensor_slice(&strided, dev, 1, 0, 4, 2));
  ASSERT_OK(c10c_tensor_slice(&host_strided, host, 1, 0, 4, 2));
  ASSERT_OK(c10c_tensor_copy_(strided, host_strided));
  ASSERT_OK(c10c_tensor_copy_(back, dev));
  const float *b = c10c_tensor_data(back);
  const float after_copy[12] = {0, 0, 2, 0, 4, 0, 6, 0, 8, 0, 10, 0};
  ASSERT_TRUE(memcmp(b, after_copy, sizeof after_copy) == 0);
  ASSERT_OK(c10c_tensor_fill_(strided, &two));
  ASSERT_OK(c10c_tensor_copy_(back, dev));
  const float after_fill[12] = {2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0};
  ASSERT_TRUE(memcmp(b, after_fill, sizeof after_fill) == 0);
  ASSERT_OK(c10c_tensor_copy_(dev, host));
  ASSERT_OK(c10c_tensor_zero_(back));
  c10c_tensor *back_strided = NULL;
  ASSERT_OK(c10c_tensor_slice(&back_strided, back, 1, 1, 4, 2)); /* back[:, 1::2] = dev[:, ::2] */
  ASSERT_OK(c10c_tensor_copy_(back_strided, strided));
  const float gathered[12] = {0, 0, 0, 2, 0, 4, 0, 6, 0, 8, 0, 10};
  ASSERT_TRUE(memcmp(b, gathered, sizeof gathered) == 0);
  /* between CUDA tensors of different layouts and devices: dt2 (cuda:0) = dev (cuda:1)^T */
  ASSERT_OK(c10c_tensor_transpose(&devt, dev, 0, 1));
  ASSERT_OK(c10c_tensor_empty(&dt2, tsizes, 2, C10C_DTYPE_FLOAT32,
                              (c10c_device){C10C_DEVICE_TYPE_CUDA, 0}, 0));
  ASSERT_OK(c10c_tensor_copy_(dt2, devt));
  ASSERT_OK(c10c_tensor_copy_(hb, dt2));
  ASSERT_TRUE(((float *)c10c_tensor_data(hb))[1] == 4.0f &&
              ((float *)c10c_tensor_data(hb))[11] == 11.0f);
  c10c_tensor_release(back_strided);
  c10c_tensor_release(host_strided);
  c10c_tensor_release(devt);
  c10c_tensor_release(dt2);
  /* "cuda" alone is the current device */
  ASSERT_OK(c10c_tensor_empty(&cur, sizes, 2, C10C_DTYPE_FLOAT32,
                              (c10c_device){C10C_DEVICE_TYPE_CUDA, -1}, 0));
  ASSERT_EQ(c10c_tensor_device(cur).index, 0);
  /* out of memory: the cache is released, the request retried, then PyTorch's message */
  void (*set_capacity)(size_t) = NULL;
  void *address = stub("c10c_stub_set_capacity");
  memcpy(&set_capacity, &address, sizeof address);
  set_capacity(8 << 20);
  int64_t big[1] = {(30 << 20) / 4};
  c10c_tensor *huge = NULL;
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY,
                c10c_tensor_empty(&huge, big, 1, C10C_DTYPE_FLOAT32, cuda1, 0));
  const char *prefix =
      "CUDA out of memory. Tried to allocate 30.00 MiB. GPU 1 has a total "
      "capacity of 8.00 MiB of which 6.00 MiB is free. Of the allocated memory on "
      "device 1 ";
  if (strncmp(c10c_last_error_message(), prefix, strlen(prefix)) != 0)
    FAIL_AT("unexpected message: %s", c10c_last_error_message());
  ASSERT_TRUE(huge == NULL);
  c10c_allocator *cuda_alloc = NULL;
  ASSERT_OK(c10c_allocator_get(&cuda_alloc, C10C_DEVICE_TYPE_CUDA));
  ASSERT_OK(c10c_cuda_set_device(1));
  c10c_memory_stats stats;
  stats.struct_size = sizeof stats;
  ASSERT_OK(c10c_allocator_get_stats(&stats, cuda_alloc));
  ASSERT_EQ(stats.num_ooms, 1);
  ASSERT_EQ(stats.num_alloc_retries, 1);
  ASSERT_EQ(stats.segment[C10C_STAT_ALL].current, 1);
  ASSERT_OK(c10c_cuda_set_device(0));
  set_capacity((size_t)1 << 30);
  c10c_tensor *all[] = {host, dev, back, t, ht, dt, hb, clone, strided, cur};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) c10c_tensor_release(all[i]);
  ASSERT_EQ(stub_long("c10c_stub_used", 1), 2 << 20); /* cached */
  long mallocs = stub_calls("cuMemAlloc_v2");
  c10c_tensor *reuse = NULL;
  ASSERT_OK(c10c_tensor_empty(&reuse, sizes, 2, C10C_DTYPE_FLOAT32, cuda1, 0));
  ASSERT_EQ(stub_calls("cuMemAlloc_v2"), mallocs); /* from the cache: no driver call */
  c10c_tensor_release(reuse);
  c10c_allocator_empty_cache(cuda_alloc);
  ASSERT_EQ(stub_long("c10c_stub_used", 0), 0);
  ASSERT_EQ(stub_long("c10c_stub_used", 1), 0);
  ASSERT_EQ(stub_long("c10c_stub_violations", 0), 0);
}

/* record_stream through the CUDA caching allocator and the stand-in's clock. */
TEST(record_stream_keeps_memory_until_the_other_stream_is_done) {
  ASSERT_OK(c10c_cuda_set_device(0));
  c10c_stream a, b;
  ASSERT_OK(c10c_cuda_stream_from_pool(&a, 0, 0));
  ASSERT_OK(c10c_cuda_stream_from_pool(&b, 0, 0));
  ASSERT_OK(c10c_cuda_set_current_stream(a)); /* allocations are for stream a */
  const c10c_device cuda0 = {C10C_DEVICE_TYPE_CUDA, 0};
  int64_t n[1] = {1000};
  c10c_tensor *t = NULL, *u = NULL;
  ASSERT_OK(c10c_tensor_empty(&t, n, 1, C10C_DTYPE_FLOAT32, cuda0, 0));
  void *first = c10c_tensor_data(t);
  ASSERT_OK(c10c_tensor_record_stream(t, b));
  stub_enqueue(b, 4); /* b works on t's memory for 4 ms */
  c10c_tensor_release(t);
  ASSERT_OK(c10c_tensor_empty(&u, n, 1, C10C_DTYPE_FLOAT32, cuda0, 0));
  ASSERT_TRUE(c10c_tensor_data(u) != first); /* b may still be using it */
  c10c_tensor_release(u);
  stub_advance(4);
  ASSERT_OK(c10c_tensor_empty(&u, n, 1, C10C_DTYPE_FLOAT32, cuda0, 0));
  ASSERT_TRUE(c10c_tensor_data(u) == first); /* b is done with it */
  /* a stream of another device is refused */
  c10c_stream other;
  ASSERT_OK(c10c_cuda_default_stream(&other, 1));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_tensor_record_stream(u, other));
  ASSERT_ERROR_MESSAGE("record_stream: the tensor is on CUDA device 0, the stream on cuda:1");
  /* the tensor form passes its storage's data pointer: the same as c10c_cuda_record_stream */
  c10c_data_ptr data;
  ASSERT_OK(c10c_storage_data_ptr(&data, c10c_tensor_storage(u)));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_record_stream(&data, other));
  ASSERT_ERROR_MESSAGE("record_stream: the memory is on cuda:0, the stream on cuda:1");
  ASSERT_OK(c10c_cuda_record_stream(&data, b));
  c10c_tensor *host = NULL;
  ASSERT_OK(c10c_tensor_empty(&host, n, 1, C10C_DTYPE_FLOAT32,
                              (c10c_device){C10C_DEVICE_TYPE_CPU, -1}, 0));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_tensor_record_stream(host, b));
  ASSERT_ERROR_MESSAGE("record_stream: the tensor is on CPU device -1, the stream on cuda:0");
  c10c_tensor_release(host);
  c10c_tensor_release(u);
  c10c_stream d0;
  ASSERT_OK(c10c_cuda_default_stream(&d0, 0));
  ASSERT_OK(c10c_cuda_set_current_stream(d0));
  ASSERT_EQ(stub_long("c10c_stub_violations", 0), 0);
  /* allocator settings with PyTorch's keys and checks */
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_cuda_set_allocator_settings("max_split_size_mb:8"));
  ASSERT_ERROR_MESSAGE("CachingAllocator option max_split_size_mb too small, must be >= 20");
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_cuda_set_allocator_settings("garbage_collection_threshold:1.5"));
  ASSERT_ERROR_MESSAGE("garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
  ASSERT_STATUS(C10C_STATUS_NOT_IMPLEMENTED,
                c10c_cuda_set_allocator_settings("pinned_num_register_threads:4"));
  ASSERT_OK(c10c_cuda_set_allocator_settings("max_split_size_mb:64"));
  c10c_allocator *alloc = NULL;
  ASSERT_OK(c10c_allocator_get(&alloc, C10C_DEVICE_TYPE_CUDA));
  c10c_memory_stats stats;
  stats.struct_size = sizeof stats;
  ASSERT_OK(c10c_allocator_get_stats(&stats, alloc));
  ASSERT_EQ(stats.max_split_size, INT64_C(64) << 20);
  ASSERT_OK(c10c_cuda_set_allocator_settings("")); /* back to the defaults */
  /* a memory fraction: at most a quarter of device 1's 1 GiB */
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_set_memory_fraction(1.5, 1));
  ASSERT_ERROR_MESSAGE("Invalid fraction value: 1.5. Allowed range: 0~1");
  /* the value as torch's f-string prints it (Python's repr of a float) */
  static const struct {
    double value;
    const char *shown;
  } fractions[] = {{2.0, "2.0"},
                   {-0.5, "-0.5"},
                   {1e16, "1e+16"},
                   {1e15, "1000000000000000.0"},
                   {1.0000001, "1.0000001"},
                   {-1e-05, "-1e-05"},
                   {-0.0001, "-0.0001"},
                   {123456789.125, "123456789.125"}};
  for (size_t i = 0; i < sizeof fractions / sizeof fractions[0]; i++) {
    char expected[96];
    snprintf(expected, sizeof expected, "Invalid fraction value: %s. Allowed range: 0~1",
             fractions[i].shown);
    ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                  c10c_cuda_set_memory_fraction(fractions[i].value, 1));
    ASSERT_ERROR_MESSAGE(expected);
  }
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_cuda_set_memory_fraction(0.5, 7));
  ASSERT_OK(c10c_cuda_set_memory_fraction(0.25, 1));
  int64_t quarter[1] = {(300 << 20) / 4}, fifth[1] = {(200 << 20) / 4};
  c10c_tensor *too_big = NULL, *fits = NULL;
  const c10c_device cuda1 = {C10C_DEVICE_TYPE_CUDA, 1};
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY,
                c10c_tensor_empty(&too_big, quarter, 1, C10C_DTYPE_FLOAT32, cuda1, 0));
  ASSERT_OK(c10c_tensor_empty(&fits, fifth, 1, C10C_DTYPE_FLOAT32, cuda1, 0));
  c10c_tensor_release(fits);
  ASSERT_OK(c10c_cuda_set_memory_fraction(1.0, 1));
  ASSERT_OK(c10c_tensor_empty(&too_big, quarter, 1, C10C_DTYPE_FLOAT32, cuda1, 0));
  c10c_tensor_release(too_big);
  ASSERT_OK(c10c_allocator_get_stats(&stats, alloc));
  ASSERT_EQ(stats.max_split_size, -1);
}

TEST(a_child_forked_after_init_is_refused) {
  ASSERT_TRUE(c10c_cuda_is_available());
#ifdef _WIN32
  SKIP_ON_WINDOWS("fork");
#else
  pid_t pid = fork();
  if (pid == 0) {
    c10c_status st = c10c_cuda_set_device(0);
    bool ok = st == C10C_STATUS_UNAVAILABLE &&
              strcmp(c10c_last_error_message(),
                     "Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
                     "multiprocessing, you must use the 'spawn' start method") == 0;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_OK(c10c_cuda_set_device(0));             /* the parent goes on */
#endif
}

/* C10C_ALLOC_CONF, read when the CUDA allocator is first used. */
TEST(the_allocator_reads_its_environment) {
  c10c_allocator *alloc = NULL;
  ASSERT_OK(c10c_allocator_get(&alloc, C10C_DEVICE_TYPE_CUDA));
  c10c_memory_stats stats;
  stats.struct_size = sizeof stats;
  int64_t n[1] = {4};
  c10c_tensor *t = NULL;
  c10c_status st =
      c10c_tensor_empty(&t, n, 1, C10C_DTYPE_FLOAT32, (c10c_device){C10C_DEVICE_TYPE_CUDA, 0}, 0);
  if (strcmp(scenario, "config") == 0) {
    ASSERT_OK(st);
    ASSERT_OK(c10c_allocator_get_stats(&stats, alloc));
    ASSERT_EQ(stats.max_split_size, INT64_C(30) << 20);
    c10c_tensor_release(t);
  } else {
    ASSERT_EQ(st, C10C_STATUS_INVALID_ARGUMENT);
    ASSERT_ERROR_MESSAGE(
        "the CUDA caching allocator could not be made: Unrecognized key 'foo' "
        "in CUDA allocator config.");
    ASSERT_TRUE(t == NULL);
  }
}

/* Every documented NULL-pointer and out-of-memory error of the stream, event and allocator
 * calls (the status audit of cuda.h). */
static void *set_stream_without_memory(void *arg) {
  c10c_stream s = *(c10c_stream *)arg;
  c10c_testing_fail_allocation(1); /* this thread's table of current streams */
  c10c_status st = c10c_cuda_set_current_stream(s);
  c10c_testing_fail_allocation(0);
  return (void *)(intptr_t)st;
}

TEST(null_arguments_and_out_of_memory_are_refused) {
  c10c_stream s;
  ASSERT_OK(c10c_cuda_stream_from_pool(&s, 0, 0));
  bool done;
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_stream_query(NULL, s));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_stream_handle(NULL, s));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_stream_priority(NULL, s));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_current_device(NULL));
  c10c_cuda_event *event = NULL;
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_event_new(NULL, false));
  c10c_testing_fail_allocation(1);
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c_cuda_event_new(&event, false));
  c10c_testing_fail_allocation(0);
  ASSERT_OK(c10c_cuda_event_new(&event, true));
  float ms;
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_event_record(NULL, s));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_event_query(NULL, event));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_event_query(&done, NULL));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_event_synchronize(NULL));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_event_wait(NULL, s));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_event_elapsed_time(NULL, event, event));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_event_elapsed_time(&ms, NULL, event));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_event_elapsed_time(&ms, event, NULL));
  c10c_stream cpu = {{C10C_DEVICE_TYPE_CPU, -1}, 0};
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_event_wait(event, cpu)); /* unrecorded */
  c10c_cuda_event_free(event);
  pthread_t t;
  void *st = NULL;
  ASSERT_EQ(pthread_create(&t, NULL, set_stream_without_memory, &s), 0);
  ASSERT_EQ(pthread_join(t, &st), 0);
  ASSERT_EQ((intptr_t)st, C10C_STATUS_OUT_OF_MEMORY);
  /* allocator calls */
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_set_allocator_settings(NULL));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_cuda_record_memory_history(((size_t)1 << 24) + 1));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_tensor_record_stream(NULL, s));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_record_stream(NULL, s));
  c10c_data_ptr other = {
      .data = (void *)0x1000, .ctx = (void *)0x1000, .device = {C10C_DEVICE_TYPE_CUDA, 1}};
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_record_stream(&other, s));
  ASSERT_ERROR_MESSAGE("record_stream: the memory is on cuda:1, the stream on cuda:0");
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_record_stream(&other, cpu));
}

/* The snapshot through the public call: asked for its size first. */
static char *snapshot(void) {
  size_t len = 0;
  ASSERT_STATUS(C10C_STATUS_BUFFER_TOO_SMALL, c10c_cuda_memory_snapshot(NULL, 0, &len));
  ASSERT_TRUE(len > 0);
  char *json = malloc(len + 1);
  ASSERT_OK(c10c_cuda_memory_snapshot(json, len + 1, NULL));
  ASSERT_EQ(strlen(json), len);
  return json;
}

/* expandable_segments:True over the stand-in's emulation of the driver's virtual memory API
 * (memfd pages mapped into a reserved range): data survives, growth stays in place, the pages
 * go back on empty_cache, a failing driver call leaves nothing behind. */
TEST(expandable_segments_over_the_drivers_virtual_memory) {
  c10c_allocator *alloc = NULL;
  ASSERT_OK(c10c_allocator_get(&alloc, C10C_DEVICE_TYPE_CUDA));
  ASSERT_OK(c10c_allocator_empty_cache(alloc));
  ASSERT_OK(c10c_cuda_set_allocator_settings("expandable_segments:True"));
  ASSERT_OK(c10c_cuda_record_memory_history(64));
  long reserves = stub_calls("cuMemAddressReserve"), creates = stub_calls("cuMemCreate");
  const c10c_device cuda0 = {C10C_DEVICE_TYPE_CUDA, 0};
  int64_t n1[1] = {(30 << 20) / 4}, n2[1] = {(31 << 20) / 4};
  c10c_tensor *a = NULL, *b = NULL, *host = NULL, *back = NULL;
  ASSERT_OK(c10c_tensor_empty(&a, n1, 1, C10C_DTYPE_FLOAT32, cuda0, 0));
  ASSERT_OK(c10c_tensor_empty(&b, n2, 1, C10C_DTYPE_FLOAT32, cuda0, 0));
  ASSERT_TRUE((char *)c10c_tensor_data(b) == (char *)c10c_tensor_data(a) + (30 << 20));
  ASSERT_EQ(stub_calls("cuMemAddressReserve") - reserves, 1);
  ASSERT_EQ(stub_calls("cuMemCreate") - creates, 4); /* 80 MiB in 20 MiB pages */
  /* data goes through the mapped pages and back */
  float value = 2.5f;
  ASSERT_OK(c10c_tensor_full(&host, n2, 1, C10C_DTYPE_FLOAT32,
                             (c10c_device){C10C_DEVICE_TYPE_CPU, -1}, 0, &value));
  ASSERT_OK(c10c_tensor_copy_(b, host));
  ASSERT_OK(c10c_tensor_empty(&back, n2, 1, C10C_DTYPE_FLOAT32,
                              (c10c_device){C10C_DEVICE_TYPE_CPU, -1}, 0));
  ASSERT_OK(c10c_tensor_copy_(back, b));
  ASSERT_TRUE(((float *)c10c_tensor_data(back))[n2[0] - 1] == 2.5f);
  char *json = snapshot();
  ASSERT_TRUE(strstr(json, "\"is_expandable\": true") != NULL);
  ASSERT_TRUE(strstr(json, "\"action\": \"segment_map\"") != NULL);
  ASSERT_TRUE(strstr(json, "\"state\": \"active_allocated\"") != NULL);
  free(json);
  /* each virtual-memory call failing in turn: an error naming it, nothing left mapped or
   * allocated by the attempt (a new reservation is needed for the first two: on device 1) */
  static const char *const calls[] = {"cuMemAddressReserve", "cuMemCreate", "cuMemMap",
                                      "cuMemSetAccess"};
  for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
    const c10c_device where = {C10C_DEVICE_TYPE_CUDA, i == 0 ? 1 : 0};
    long used_before = stub_long("c10c_stub_used", where.index);
    long mapped_before = stub_long("c10c_stub_mapped_bytes", 0);
    stub_fail(calls[i], 1, 1);
    c10c_tensor *c = NULL;
    int64_t n3[1] = {(60 << 20) / 4};
    ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_empty(&c, n3, 1, C10C_DTYPE_FLOAT32, where, 0));
    ASSERT_TRUE(strstr(c10c_last_error_message(), calls[i]) != NULL);
    ASSERT_TRUE(c == NULL);
    ASSERT_EQ(stub_long("c10c_stub_used", where.index), used_before);
    ASSERT_EQ(stub_long("c10c_stub_mapped_bytes", 0), mapped_before);
  }
  /* no bytes, and more bytes than any device has */
  c10c_data_ptr none, absurd;
  ASSERT_OK(c10c_allocator_allocate(&none, alloc, 0));
  ASSERT_TRUE(none.data == NULL);
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c_allocator_allocate(&absurd, alloc, ABSURD_BYTES));
  ASSERT_TRUE(strstr(c10c_last_error_message(), "CUDA out of memory. Tried to allocate") != NULL);
  c10c_tensor_release(a);
  c10c_tensor_release(b);
  c10c_tensor_release(host);
  c10c_tensor_release(back);
  ASSERT_OK(c10c_allocator_empty_cache(alloc));
  ASSERT_EQ(stub_long("c10c_stub_used", 0), 0);
  ASSERT_EQ(stub_calls("cuMemAddressFree") >= 1, 1);
  json = snapshot();
  ASSERT_TRUE(strstr(json, "\"segments\": []") != NULL);
  ASSERT_TRUE(strstr(json, "\"action\": \"segment_unmap\"") != NULL);
  free(json);
  ASSERT_EQ(stub_long("c10c_stub_violations", 0), 0);
  ASSERT_OK(c10c_cuda_record_memory_history(0));
  ASSERT_OK(c10c_cuda_set_allocator_settings(""));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_memory_snapshot(NULL, 5, NULL));
}

/* A driver without the virtual memory API (before CUDA 10.2), or a device without support for
 * it: CUDA works, expandable segments are refused with a reason. */
TEST(a_driver_without_virtual_memory_refuses_expandable_segments) {
  ASSERT_TRUE(c10c_cuda_is_available());
  ASSERT_STATUS(C10C_STATUS_NOT_IMPLEMENTED,
                c10c_cuda_set_allocator_settings("expandable_segments:True"));
  if (strcmp(scenario, "no_vmm") == 0)
    ASSERT_ERROR_MESSAGE("expandable_segments:True needs the driver's virtual memory management");
  else
    ASSERT_ERROR_MESSAGE(
        "expandable_segments:True needs virtual memory management, which CUDA "
        "device 0 does not support");
  int64_t n[1] = {1000};
  c10c_tensor *t = NULL;
  ASSERT_OK(
      c10c_tensor_empty(&t, n, 1, C10C_DTYPE_FLOAT32, (c10c_device){C10C_DEVICE_TYPE_CUDA, 0}, 0));
  c10c_tensor_release(t);
}

/* Fake addresses (the replay benchmark's mode): a 64 GiB device without the memory (1.5 GiB
 * where pointers have 32 bits, tests/meson.build), reserved and mapped in expandable segments;
 * touching the data is refused by the driver, not a crash. */
TEST(fake_addresses_model_a_large_device) {
  const c10c_device cuda0 = {C10C_DEVICE_TYPE_CUDA, 0};
#if SIZE_MAX < UINT64_MAX
  int64_t big[1] = {INT64_C(640) << 20};        /* 640 MiB of bytes */
  const c10c_dtype too_much = C10C_DTYPE_UINT8; /* a third one */
  /* a tensor beyond the address space is refused, not truncated */
  int64_t huge[1] = {INT64_C(20) << 30};
  c10c_tensor *none = NULL;
  ASSERT_STATUS(C10C_STATUS_OVERFLOW,
                c10c_tensor_empty(&none, huge, 1, C10C_DTYPE_UINT8, cuda0, 0));
  ASSERT_ERROR_MESSAGE("Storage size calculation overflowed with sizes=[21474836480]");
#else
  int64_t big[1] = {INT64_C(20) << 30};           /* 20 GiB of bytes */
  const c10c_dtype too_much = C10C_DTYPE_FLOAT32; /* 80 GiB */
#endif
  c10c_tensor *t = NULL, *u = NULL, *host = NULL;
  ASSERT_OK(c10c_tensor_empty(&t, big, 1, C10C_DTYPE_UINT8, cuda0, 0));
  ASSERT_OK(c10c_tensor_empty(&u, big, 1, C10C_DTYPE_UINT8, cuda0, 0));
  ASSERT_EQ(stub_long("c10c_stub_used", 0), 2 * big[0]);
  c10c_tensor *w = NULL;
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c_tensor_empty(&w, big, 1, too_much, cuda0, 0));
  int64_t small[1] = {16};
  ASSERT_OK(c10c_tensor_empty(&host, small, 1, C10C_DTYPE_UINT8,
                              (c10c_device){C10C_DEVICE_TYPE_CPU, -1}, 0));
  c10c_tensor *view = NULL;
  ASSERT_OK(c10c_tensor_narrow(&view, t, 0, 0, 16));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_copy_(host, view));
  c10c_tensor_release(view);
  c10c_tensor_release(host);
  c10c_tensor_release(t);
  c10c_tensor_release(u);
  c10c_allocator *alloc = NULL;
  ASSERT_OK(c10c_allocator_get(&alloc, C10C_DEVICE_TYPE_CUDA));
  ASSERT_OK(c10c_allocator_empty_cache(alloc));
  ASSERT_EQ(stub_long("c10c_stub_used", 0), 0);
}

/* stream_ordered_reuse:True through the driver: a block freed by stream a, whose work on it is
 * still queued, is handed to stream b after cuStreamWaitEvent, so b's later work runs after a's
 * (the stand-in's clock shows it); without the option b gets a new block. */
TEST(stream_ordered_reuse_makes_the_new_stream_wait) {
  ASSERT_OK(c10c_cuda_set_device(0));
  c10c_allocator *alloc = NULL;
  ASSERT_OK(c10c_allocator_get(&alloc, C10C_DEVICE_TYPE_CUDA));
  ASSERT_OK(c10c_allocator_empty_cache(alloc));
  uint64_t (*busy)(void *) = NULL;
  void *address = stub("c10c_stub_stream_busy");
  memcpy(&busy, &address, sizeof address);
  ASSERT_TRUE(busy != NULL);
  for (int on = 0; on < 2; on++) {
    ASSERT_OK(c10c_cuda_set_allocator_settings(on ? "stream_ordered_reuse:True" : ""));
    c10c_stream a, b, d0;
    void *ha = NULL, *hb = NULL;
    ASSERT_OK(c10c_cuda_stream_from_pool(&a, 0, 0));
    ASSERT_OK(c10c_cuda_stream_from_pool(&b, 0, 0));
    ASSERT_OK(c10c_cuda_stream_handle(&ha, a));
    ASSERT_OK(c10c_cuda_stream_handle(&hb, b));
    ASSERT_OK(c10c_cuda_default_stream(&d0, 0));
    c10c_data_ptr first, second;
    ASSERT_OK(c10c_cuda_set_current_stream(a));
    ASSERT_OK(c10c_allocator_allocate(&first, alloc, 12 << 20));
    void *where = first.data;
    stub_enqueue(a, 40); /* a still works on it when it is freed */
    c10c_data_ptr_free(&first);
    long waits = stub_calls("cuStreamWaitEvent");
    ASSERT_OK(c10c_cuda_set_current_stream(b));
    ASSERT_OK(c10c_allocator_allocate(&second, alloc, 12 << 20));
    ASSERT_EQ(second.data == where, on);
    ASSERT_EQ(stub_calls("cuStreamWaitEvent") - waits, on);
    if (on) ASSERT_TRUE(busy(hb) >= busy(ha)); /* b is ordered after a's work */
    c10c_data_ptr_free(&second);
    ASSERT_OK(c10c_cuda_set_current_stream(d0));
    ASSERT_OK(c10c_cuda_synchronize(0));
    ASSERT_OK(c10c_allocator_empty_cache(alloc));
  }
  ASSERT_OK(c10c_cuda_set_allocator_settings(""));
  ASSERT_EQ(stub_long("c10c_stub_violations", 0), 0);
}

int main(int argc, char **argv) {
  scenario = argc > 1 ? argv[1] : "available";
  static const test_case available[] = {
      T(first_use_from_many_threads_loads_once),
      T(current_device_is_per_thread_and_checked),
      T(device_guard_restores_the_device),
      T(device_queries_and_driver_errors),
      T(streams_follow_c10s_pools_and_ids),
      T(stream_work_and_events_on_the_stand_ins_clock),
      T(cuda_tensors_allocate_on_their_device_and_copy_through_the_driver),
      T(record_stream_keeps_memory_until_the_other_stream_is_done),
      T(a_child_forked_after_init_is_refused),
      T(null_arguments_and_out_of_memory_are_refused),
      T(expandable_segments_over_the_drivers_virtual_memory),
      T(stream_ordered_reuse_makes_the_new_stream_wait)};
  static const test_case no_vmm[] = {
      T(a_driver_without_virtual_memory_refuses_expandable_segments)};
  static const test_case fake[] = {T(fake_addresses_model_a_large_device)};
  static const test_case unavailable[] = {T(unavailable_paths_say_why)};
  static const test_case configured[] = {T(the_allocator_reads_its_environment)};
  bool on = strcmp(scenario, "available") == 0;
  bool config = strcmp(scenario, "config") == 0 || strcmp(scenario, "bad_config") == 0;
  const test_case *tests = on                                    ? available
                           : config                              ? configured
                           : strncmp(scenario, "no_vmm", 6) == 0 ? no_vmm
                           : strcmp(scenario, "fake") == 0       ? fake
                                                                 : unavailable;
  int count = on ? (int)(sizeof available / sizeof available[0]) : 1;
  for (int i = 0; i < count; i++) {
    test_current_failed = 0;
    tests[i].fn();
    printf("%s %s (%s)\n", test_current_failed ? "FAIL" : "ok  ", tests[i].name, scenario);
    test_failures += test_current_failed;
  }
  printf("%d passed, %d failed\n", count - test_failures, test_failures);
  return test_failures ? 1 : 0;
}
