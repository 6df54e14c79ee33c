/* Copies, fills and zeros of CUDA tensors ordered on the current stream, as ATen's copy_ and
 * fill_ (aten/src/ATen/native/cuda/Copy.cu copy_kernel_cuda: the copy is queued on the current
 * stream, memcpy_and_sync waits for it when one side is host memory; copy_device_to_device orders
 * a copy between devices after the destination's current stream and before its later work).
 * Checked through the stand-in driver's stream model (tests/cuda_stub/): copies take
 * C10C_STUB copy ticks on the logical clock, and every access of device memory by a stream that
 * overlaps unfinished work of another stream it does not wait for counts as a race
 * (c10c_stub_races); c10c_stub_touch is a "kernel" reading or writing memory on a stream.
 * Scenario "streams": the stand-in with 2 devices.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "stub_client.h"

typedef void *stub_stream; /* CUstream */

static long races(void) {
  typedef long (*fn_type1)(void);
  STUB_FN(fn_type1, fn, "c10c_stub_races");
  return fn ? fn() : -1;
}

static uint64_t now(void) {
  typedef uint64_t (*fn_type2)(void);
  STUB_FN(fn_type2, fn, "c10c_stub_now");
  return fn ? fn() : 0;
}

static void set_copy_ticks(uint64_t ticks) {
  typedef void (*fn_type3)(uint64_t);
  STUB_FN(fn_type3, fn, "c10c_stub_set_copy_ticks");
  if (fn) fn(ticks);
}

static void enqueue(stub_stream s, uint64_t ticks) {
  typedef void (*fn_type4)(stub_stream, uint64_t);
  STUB_FN(fn_type4, fn, "c10c_stub_enqueue");
  if (fn) fn(s, ticks);
}

static uint64_t stream_busy(stub_stream s) {
  typedef uint64_t (*fn_type5)(stub_stream);
  STUB_FN(fn_type5, fn, "c10c_stub_stream_busy");
  return fn ? fn(s) : 0;
}

/* A kernel on stream s reading (write 0) or writing the bytes of tensor t; 0 when the stand-in
 * accepted it. Runs in the current driver context (device device's, made current first). */
static int touch(const c10c_tensor *t, stub_stream s, int write, c10c_device_index device) {
  typedef int (*fn_type6)(uint64_t, size_t, stub_stream, int);
  STUB_FN(fn_type6, fn, "c10c_stub_touch");
  c10c_cuda_device_guard g = C10C_CUDA_DEVICE_GUARD_INIT;
  if (c10c_cuda_device_guard_enter(&g, device) != C10C_STATUS_OK) return -1;
  int64_t free_bytes = 0, total = 0; /* makes the device's context current, waiting for nothing */
  if (c10c_cuda_mem_get_info(&free_bytes, &total, device) != C10C_STATUS_OK) return -1;
  int r = fn ? fn((uint64_t)(uintptr_t)c10c_tensor_data(t), c10c_tensor_nbytes(t), s, write) : -1;
  c10c_cuda_device_guard_exit(&g);
  return r;
}

static const c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
static const int64_t sizes[1] = {256};

/* A pool stream of the device made current, and its driver handle. */
static stub_stream use_pool_stream(c10c_device_index device) {
  c10c_stream s;
  void *handle = NULL;
  if (c10c_cuda_stream_from_pool(&s, 0, device) != C10C_STATUS_OK ||
      c10c_cuda_set_current_stream(s) != C10C_STATUS_OK ||
      c10c_cuda_stream_handle(&handle, s) != C10C_STATUS_OK)
    return NULL;
  return handle;
}

static void use_default_stream(c10c_device_index device) {
  c10c_stream s;
  if (c10c_cuda_default_stream(&s, device) == C10C_STATUS_OK) c10c_cuda_set_current_stream(s);
}

TEST(zero_then_a_kernel_on_the_current_stream_is_ordered) {
  stub_stream s = use_pool_stream(0);
  ASSERT_TRUE(s != NULL);
  set_copy_ticks(5);
  long before = races();
  c10c_tensor *dev = NULL, *host = NULL;
  ASSERT_OK(c10c_tensor_empty(&dev, sizes, 1, C10C_DTYPE_FLOAT32,
                              (c10c_device){C10C_DEVICE_TYPE_CUDA, 0}, 0));
  ASSERT_OK(c10c_tensor_zero_(dev));
  ASSERT_TRUE(stream_busy(s) > now()); /* queued, not waited for */
  ASSERT_EQ(touch(dev, s, 0, 0), 0);   /* a kernel reading it on the same stream */
  ASSERT_EQ(races() - before, 0);
  ASSERT_OK(c10c_tensor_empty(&host, sizes, 1, C10C_DTYPE_FLOAT32, cpu, 0));
  ASSERT_OK(c10c_tensor_copy_(host, dev));
  ASSERT_EQ(races() - before, 0);
  const float *h = c10c_tensor_data(host);
  ASSERT_TRUE(h[0] == 0.0f && h[255] == 0.0f);
  c10c_tensor_release(host);
  c10c_tensor_release(dev);
  set_copy_ticks(0);
  use_default_stream(0);
}

TEST(a_copy_to_host_waits_for_the_work_queued_on_the_current_stream) {
  stub_stream s = use_pool_stream(0);
  ASSERT_TRUE(s != NULL);
  long before = races();
  c10c_tensor *dev = NULL, *host = NULL;
  ASSERT_OK(c10c_tensor_empty(&dev, sizes, 1, C10C_DTYPE_FLOAT32,
                              (c10c_device){C10C_DEVICE_TYPE_CUDA, 0}, 0));
  ASSERT_OK(c10c_tensor_empty(&host, sizes, 1, C10C_DTYPE_FLOAT32, cpu, 0));
  set_copy_ticks(10);
  ASSERT_EQ(touch(dev, s, 1, 0), 0); /* a kernel writing it, 10 ticks */
  set_copy_ticks(0);
  enqueue(s, 7); /* and more work */
  uint64_t queued = stream_busy(s);
  ASSERT_TRUE(queued > now());
  ASSERT_OK(c10c_tensor_copy_(host, dev));
  ASSERT_TRUE(now() >= queued); /* copy_ returned only when the stream got past it */
  ASSERT_EQ(races() - before, 0);
  enqueue(s, 9); /* the other way too */
  queued = stream_busy(s);
  ASSERT_OK(c10c_tensor_copy_(dev, host));
  ASSERT_TRUE(now() >= queued);
  ASSERT_EQ(races() - before, 0);
  c10c_tensor_release(host);
  c10c_tensor_release(dev);
  use_default_stream(0);
}

TEST(a_fill_on_a_pool_stream_then_a_kernel_there_is_ordered) {
  stub_stream s = use_pool_stream(0);
  ASSERT_TRUE(s != NULL);
  set_copy_ticks(3);
  long before = races();
  c10c_tensor *dev = NULL, *copy = NULL;
  ASSERT_OK(c10c_tensor_empty(&dev, sizes, 1, C10C_DTYPE_FLOAT32,
                              (c10c_device){C10C_DEVICE_TYPE_CUDA, 0}, 0));
  float v = 2.5f;
  ASSERT_OK(c10c_tensor_fill_(dev, &v));
  ASSERT_EQ(touch(dev, s, 0, 0), 0);
  ASSERT_OK(c10c_tensor_clone(&copy, dev, C10C_MEMORY_FORMAT_PRESERVE)); /* device to device */
  ASSERT_TRUE(stream_busy(s) > now()); /* the clone is queued, not waited for */
  ASSERT_EQ(touch(copy, s, 1, 0), 0);
  ASSERT_EQ(races() - before, 0);
  c10c_tensor_release(copy);
  c10c_tensor_release(dev);
  set_copy_ticks(0);
  use_default_stream(0);
}

TEST(on_the_default_stream_copies_are_ordered_with_the_legacy_stream) {
  use_default_stream(0);
  set_copy_ticks(4);
  long before = races();
  c10c_tensor *dev = NULL, *host = NULL;
  ASSERT_OK(c10c_tensor_empty(&dev, sizes, 1, C10C_DTYPE_FLOAT32,
                              (c10c_device){C10C_DEVICE_TYPE_CUDA, 0}, 0));
  ASSERT_OK(c10c_tensor_zero_(dev));
  ASSERT_EQ(touch(dev, NULL, 1, 0), 0);
  ASSERT_OK(c10c_tensor_empty(&host, sizes, 1, C10C_DTYPE_FLOAT32, cpu, 0));
  uint64_t queued = stream_busy(NULL);
  ASSERT_OK(c10c_tensor_copy_(host, dev));
  ASSERT_TRUE(now() >= queued);
  ASSERT_EQ(races() - before, 0);
  c10c_tensor_release(host);
  c10c_tensor_release(dev);
  set_copy_ticks(0);
}

/* Copy.cu copy_device_to_device: the copy waits for the destination's current stream and the
 * destination's later work waits for the copy. */
TEST(a_copy_between_devices_is_ordered_with_both_current_streams) {
  stub_stream s0 = use_pool_stream(0), s1 = use_pool_stream(1);
  ASSERT_TRUE(s0 != NULL && s1 != NULL);
  long before = races();
  c10c_tensor *src = NULL, *dst = NULL, *host = NULL;
  ASSERT_OK(c10c_tensor_empty(&src, sizes, 1, C10C_DTYPE_FLOAT32,
                              (c10c_device){C10C_DEVICE_TYPE_CUDA, 0}, 0));
  ASSERT_OK(c10c_tensor_empty(&dst, sizes, 1, C10C_DTYPE_FLOAT32,
                              (c10c_device){C10C_DEVICE_TYPE_CUDA, 1}, 0));
  set_copy_ticks(6);
  float v = 1.5f;
  ASSERT_OK(c10c_tensor_fill_(src, &v));
  ASSERT_EQ(touch(src, s0, 1, 0), 0); /* a producer of src on device 0's stream */
  ASSERT_EQ(touch(dst, s1, 0, 1), 0); /* a reader of dst's old value on device 1's stream */
  ASSERT_OK(c10c_tensor_copy_(dst, src));
  ASSERT_EQ(touch(dst, s1, 0, 1), 0); /* a consumer of the copy on device 1's stream */
  ASSERT_EQ(races() - before, 0);
  ASSERT_OK(c10c_tensor_empty(&host, sizes, 1, C10C_DTYPE_FLOAT32, cpu, 0));
  ASSERT_OK(c10c_tensor_copy_(host, dst));
  ASSERT_TRUE(((const float *)c10c_tensor_data(host))[7] == 1.5f);
  ASSERT_EQ(races() - before, 0);
  c10c_tensor_release(host);
  c10c_tensor_release(dst);
  c10c_tensor_release(src);
  set_copy_ticks(0);
  use_default_stream(0);
  use_default_stream(1);
}

/* The next call of entry fails with CUDA_ERROR_UNKNOWN (k 1), or none does (k 0). */
static void fail_next(const char *entry, long k) {
  typedef void (*fn_fail)(const char *, long, int);
  STUB_FN(fn_fail, fn, "c10c_stub_fail");
  if (fn) fn(entry, k, 999);
}

static long live_events(void) {
  typedef long (*fn_events)(void);
  STUB_FN(fn_events, fn, "c10c_stub_live_events");
  return fn ? fn() : -1;
}

/* A failing driver call fails the copy naming it, with no event left behind. */
TEST(a_failing_stream_copy_names_the_driver_call) {
  static const char *const entries[] = {
      "cuMemcpyDtoHAsync_v2", "cuStreamSynchronize", "cuMemsetD8Async",  "cuMemcpyDtoDAsync_v2",
      "cuMemcpyPeerAsync",    "cuEventRecord",       "cuStreamWaitEvent"};
  c10c_tensor *dev0 = NULL, *dev0b = NULL, *dev1 = NULL, *host = NULL;
  ASSERT_OK(c10c_tensor_empty(&dev0, sizes, 1, C10C_DTYPE_FLOAT32,
                              (c10c_device){C10C_DEVICE_TYPE_CUDA, 0}, 0));
  ASSERT_OK(c10c_tensor_empty(&dev0b, sizes, 1, C10C_DTYPE_FLOAT32,
                              (c10c_device){C10C_DEVICE_TYPE_CUDA, 0}, 0));
  ASSERT_OK(c10c_tensor_empty(&dev1, sizes, 1, C10C_DTYPE_FLOAT32,
                              (c10c_device){C10C_DEVICE_TYPE_CUDA, 1}, 0));
  ASSERT_OK(c10c_tensor_empty(&host, sizes, 1, C10C_DTYPE_FLOAT32, cpu, 0));
  long events = live_events();
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
    fail_next(entries[i], 1);
    c10c_status st = i < 2   ? c10c_tensor_copy_(host, dev0)
                     : i < 3 ? c10c_tensor_zero_(dev0)
                     : i < 4 ? c10c_tensor_copy_(dev0b, dev0) /* within a device */
                             : c10c_tensor_copy_(dev1, dev0);
    ASSERT_EQ(st, C10C_STATUS_ERROR);
    ASSERT_TRUE(strstr(c10c_last_error_message(), entries[i]) != NULL);
    ASSERT_EQ(live_events(), events);
    fail_next(entries[i], 0); /* not left armed for a later test */
  }
  ASSERT_OK(c10c_tensor_copy_(host, dev0)); /* and the next one works */
  c10c_device_index device = -1;
  ASSERT_OK(c10c_cuda_current_device(&device));
  ASSERT_EQ(device, 0);
  c10c_tensor_release(host);
  c10c_tensor_release(dev1);
  c10c_tensor_release(dev0b);
  c10c_tensor_release(dev0);
}

/* The stand-in itself: the legacy default stream orders with blocking streams, not with
 * non-blocking ones; an event wait orders any two. */
TEST(the_stand_in_orders_the_legacy_stream_with_blocking_streams_only) {
  typedef int (*fn_type7)(stub_stream *, unsigned, int);
  STUB_FN(fn_type7, create, "cuStreamCreateWithPriority");
  typedef int (*fn_type8)(stub_stream);
  STUB_FN(fn_type8, destroy, "cuStreamDestroy_v2");
  typedef int (*fn_type9)(void **, unsigned);
  STUB_FN(fn_type9, event_create, "cuEventCreate");
  typedef int (*fn_type10)(void *);
  STUB_FN(fn_type10, event_destroy, "cuEventDestroy_v2");
  typedef int (*fn_type11)(void *, stub_stream);
  STUB_FN(fn_type11, record, "cuEventRecord");
  typedef int (*fn_type12)(stub_stream, void *, unsigned);
  STUB_FN(fn_type12, wait, "cuStreamWaitEvent");
  typedef int (*fn_type13)(void);
  STUB_FN(fn_type13, ctx_sync, "cuCtxSynchronize");
  ASSERT_TRUE(create && destroy && event_create && event_destroy && record && wait && ctx_sync);
  if (!create || !destroy || !event_create || !event_destroy || !record || !wait || !ctx_sync)
    return;
  use_default_stream(0);
  c10c_tensor *dev = NULL;
  ASSERT_OK(c10c_tensor_empty(&dev, sizes, 1, C10C_DTYPE_FLOAT32,
                              (c10c_device){C10C_DEVICE_TYPE_CUDA, 0}, 0));
  int64_t free_bytes = 0, total = 0;
  ASSERT_OK(c10c_cuda_mem_get_info(&free_bytes, &total, 0)); /* device 0's context current */
  stub_stream blocking = NULL, non_blocking = NULL;
  void *event = NULL;
  ASSERT_EQ(create(&blocking, 0, 0), 0);
  ASSERT_EQ(create(&non_blocking, 1, 0), 0);
  ASSERT_EQ(event_create(&event, 2), 0);
  set_copy_ticks(5);
  long before = races();
  ASSERT_EQ(touch(dev, NULL, 1, 0), 0);     /* legacy stream writes */
  ASSERT_EQ(touch(dev, blocking, 0, 0), 0); /* a blocking stream waits for it */
  ASSERT_EQ(races() - before, 0);
  ASSERT_EQ(touch(dev, (stub_stream)(uintptr_t)2, 0, 0), 0); /* per-thread default: blocking */
  ASSERT_EQ(races() - before, 0);
  set_copy_ticks(20); /* a long read, still running when the blocking ones are done */
  ASSERT_EQ(touch(dev, non_blocking, 0, 0), 0); /* a non-blocking one does not wait */
  set_copy_ticks(5);
  ASSERT_EQ(races() - before, 1);
  ASSERT_EQ(touch(dev, NULL, 1, 0), 0); /* the legacy stream waits for blocking streams only */
  ASSERT_EQ(races() - before, 2);
  ASSERT_EQ(record(event, NULL), 0);
  ASSERT_EQ(wait(non_blocking, event, 0), 0);
  ASSERT_EQ(touch(dev, non_blocking, 1, 0), 0); /* ordered by the event */
  ASSERT_EQ(races() - before, 2);
  ASSERT_EQ(ctx_sync(), 0); /* the host waited for everything */
  ASSERT_EQ(stream_busy(non_blocking) <= now(), 1);
  ASSERT_EQ(touch(dev, blocking, 1, 0), 0);
  ASSERT_EQ(races() - before, 2);
  set_copy_ticks(0);
  event_destroy(event);
  destroy(blocking);
  destroy(non_blocking);
  c10c_tensor_release(dev);
}

int main(void) {
  static const test_case tests[] = {
      T(zero_then_a_kernel_on_the_current_stream_is_ordered),
      T(a_copy_to_host_waits_for_the_work_queued_on_the_current_stream),
      T(a_fill_on_a_pool_stream_then_a_kernel_there_is_ordered),
      T(on_the_default_stream_copies_are_ordered_with_the_legacy_stream),
      T(a_copy_between_devices_is_ordered_with_both_current_streams),
      T(a_failing_stream_copy_names_the_driver_call),
      T(the_stand_in_orders_the_legacy_stream_with_blocking_streams_only)};
  int count = (int)(sizeof tests / sizeof tests[0]);
  for (int i = 0; i < count; i++) {
    test_current_failed = 0;
    tests[i].fn();
    printf("%s %s\n", test_current_failed ? "FAIL" : "ok  ", tests[i].name);
    test_failures += test_current_failed;
  }
  printf("%d passed, %d failed\n", count - test_failures, test_failures);
  return test_failures ? 1 : 0;
}
