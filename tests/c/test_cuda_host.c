/* Pinned host memory and non-blocking copies (include/c10c/cuda_host.h) through the stand-in
 * driver. Scenarios (argv[1], one process each: the driver loads once):
 *   available  the stand-in, 2 devices, C10C_STUB_PINNED_LIMIT=1 MiB of page-locked memory
 *   absent     no driver
 *   contexts   the stand-in: pinning from a thread that used only cuda:1
 * Figures follow PyTorch's CachingHostAllocator (aten/src/ATen/core/CachingHostAllocator.h):
 * sizes rounded to the next power of two, a freed block reusable once the events recorded on
 * the streams that used it have completed, stats as torch.cuda.host_memory_stats(). */
#define _POSIX_C_SOURCE 200809L
#ifndef _WIN32
#include <dlfcn.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "os_compat.h"

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

static long retains(int device) {
  long (*fn)(int) = NULL;
  void *address = stub("c10c_stub_retains");
  memcpy(&fn, &address, sizeof address);
  return fn ? fn(device) : -1;
}

static long pinned_bytes(void) {
  size_t (*fn)(void) = NULL;
  void *address = stub("c10c_stub_pinned_bytes");
  memcpy(&fn, &address, sizeof address);
  return fn ? (long)fn() : -1;
}

static void stub_advance(uint64_t ticks) {
  void (*advance)(uint64_t) = NULL;
  void *address = stub("c10c_stub_advance");
  memcpy(&advance, &address, sizeof address);
  if (advance) advance(ticks);
}

static c10c_cuda_host_stats host_stats(void) {
  c10c_cuda_host_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  if (c10c_cuda_host_get_stats(&s) != C10C_STATUS_OK) FAIL_AT("get_stats failed");
  return s;
}

TEST(blocks_round_to_powers_of_two_and_are_cached) {
  ASSERT_OK(c10c_cuda_host_empty_cache());
  ASSERT_OK(c10c_cuda_host_reset_accumulated_stats());
  void *a = NULL, *b = NULL, *c = NULL, *zero = (void *)1;
  ASSERT_OK(c10c_cuda_host_alloc(&zero, 0));
  ASSERT_TRUE(zero == NULL);
  ASSERT_OK(c10c_cuda_host_alloc(&a, 1000)); /* a block of 1024 */
  ASSERT_OK(c10c_cuda_host_alloc(&b, 3000)); /* 4096 */
  ASSERT_TRUE(c10c_cuda_host_is_pinned(a) && c10c_cuda_host_is_pinned((char *)b + 4095));
  ASSERT_FALSE(c10c_cuda_host_is_pinned((char *)b + 4096) && (char *)b + 4096 != (char *)a);
  memset(a, 1, 1024); /* the whole rounded block is the caller's (the stand-in checks) */
  ASSERT_EQ(pinned_bytes(), 1024 + 4096);
  c10c_cuda_host_stats s = host_stats();
  ASSERT_EQ(s.allocations.current, 2);
  ASSERT_EQ(s.allocated_bytes.current, 5120);
  ASSERT_EQ(s.active_requests.current, 2);
  ASSERT_EQ(s.active_bytes.current, 5120);
  ASSERT_EQ(s.num_host_alloc, 2);
  ASSERT_EQ(s.host_alloc_time.count, 2);
  ASSERT_OK(c10c_cuda_host_free(a));
  ASSERT_FALSE(c10c_cuda_host_is_pinned(a));
  s = host_stats();
  ASSERT_EQ(s.allocations.current, 2); /* cached, still owned */
  ASSERT_EQ(s.active_requests.current, 1);
  ASSERT_EQ(s.active_bytes.current, 4096);
  ASSERT_EQ(s.active_bytes.peak, 5120);
  ASSERT_EQ(s.active_bytes.freed, 1024);
  ASSERT_OK(c10c_cuda_host_alloc(&c, 513)); /* rounds to 1024: the cached block */
  ASSERT_TRUE(c == a);
  ASSERT_EQ(stub_calls("cuMemHostAlloc"), 2);
  ASSERT_OK(c10c_cuda_host_reset_peak_stats());
  ASSERT_EQ(host_stats().active_bytes.peak, 5120); /* current again */
  ASSERT_OK(c10c_cuda_host_free(c));
  ASSERT_OK(c10c_cuda_host_free(b));
  ASSERT_OK(c10c_cuda_host_reset_peak_stats());
  ASSERT_EQ(host_stats().active_bytes.peak, 0);
  ASSERT_OK(c10c_cuda_host_empty_cache());
  s = host_stats();
  ASSERT_EQ(s.allocations.current, 0);
  ASSERT_EQ(s.allocated_bytes.current, 0);
  ASSERT_EQ(s.allocations.peak, 2);
  ASSERT_EQ(s.num_host_free, 2);
  ASSERT_EQ(s.host_free_time.count, 2);
  ASSERT_EQ(pinned_bytes(), 0);
}

static c10c_tensor *pinned_floats(int64_t n) {
  c10c_storage *storage = NULL;
  c10c_tensor *t = NULL;
  ASSERT_OK(
      c10c_storage_new(&storage, n * 4, c10c_cuda_host_allocator(), C10C_DEVICE_TYPE_CPU, false));
  int64_t stride = 1;
  ASSERT_OK(c10c_tensor_new_from_storage(&t, storage, &n, &stride, 1, 0, C10C_DTYPE_FLOAT32));
  c10c_storage_release(storage);
  return t;
}

TEST(a_pinned_block_is_not_reused_while_its_copy_is_in_flight) {
  ASSERT_OK(c10c_cuda_host_empty_cache());
  ASSERT_OK(c10c_cuda_host_reset_accumulated_stats());
  const c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1}, cuda1 = {C10C_DEVICE_TYPE_CUDA, 1};
  int64_t n = 256;
  c10c_tensor *host = pinned_floats(n), *dev = NULL, *pageable = NULL;
  ASSERT_TRUE(c10c_cuda_host_is_pinned(c10c_tensor_data(host)));
  float *h = c10c_tensor_data(host);
  for (int i = 0; i < n; i++) h[i] = (float)i;
  ASSERT_OK(c10c_tensor_empty(&dev, &n, 1, C10C_DTYPE_FLOAT32, cuda1, 0));
  /* every copy is queued on the current stream (cuMemcpy*Async_v2); a synchronous one then waits
   * for the stream (cuStreamSynchronize), a non-blocking one from pinned memory does not */
  long waits = stub_calls("cuStreamSynchronize");
  ASSERT_OK(c10c_tensor_copy_nonblocking_(dev, host, true));
  ASSERT_EQ(stub_calls("cuMemcpyHtoDAsync_v2"), 1);
  ASSERT_EQ(stub_calls("cuStreamSynchronize"), waits);
  void *first = c10c_tensor_data(host);
  c10c_tensor_release(host); /* freed while the copy is queued: an event on cuda:1's stream */
  c10c_tensor *again = pinned_floats(n);
  ASSERT_TRUE(c10c_tensor_data(again) != first); /* not reused: a new block */
  ASSERT_EQ(host_stats().num_host_alloc, 1 + 1);
  ASSERT_EQ(host_stats().active_requests.current, 2); /* the first awaits its event */
  stub_advance(1);                                    /* the copy completes */
  c10c_tensor *third = pinned_floats(n);
  ASSERT_TRUE(c10c_tensor_data(third) == first); /* now it is */
  ASSERT_EQ(host_stats().num_host_alloc, 2);
  /* back to the host, non-blocking, into the pinned tensor */
  ASSERT_OK(c10c_tensor_copy_nonblocking_(third, dev, true));
  ASSERT_EQ(stub_calls("cuMemcpyDtoHAsync_v2"), 1);
  ASSERT_EQ(stub_calls("cuStreamSynchronize"), waits);
  ASSERT_EQ(((float *)c10c_tensor_data(third))[255], 255.0f);
  /* pageable memory: synchronous whatever non_blocking says (as torch) */
  ASSERT_OK(c10c_tensor_empty(&pageable, &n, 1, C10C_DTYPE_FLOAT32, cpu, 0));
  ASSERT_OK(c10c_tensor_copy_nonblocking_(dev, pageable, true));
  ASSERT_EQ(stub_calls("cuMemcpyHtoDAsync_v2"), 2);
  ASSERT_EQ(stub_calls("cuStreamSynchronize"), waits + 1);
  /* non_blocking false from pinned memory: synchronous too */
  ASSERT_OK(c10c_tensor_copy_nonblocking_(dev, again, false));
  ASSERT_EQ(stub_calls("cuMemcpyHtoDAsync_v2"), 3);
  ASSERT_EQ(stub_calls("cuStreamSynchronize"), waits + 2);
  ASSERT_EQ(stub_calls("cuMemcpyHtoD_v2"), 0); /* never the legacy stream's synchronous call */
  c10c_tensor_release(again);
  c10c_tensor_release(third);
  c10c_tensor_release(dev);
  c10c_tensor_release(pageable);
  stub_advance(1);
  ASSERT_OK(c10c_cuda_host_empty_cache());
  ASSERT_EQ(host_stats().allocations.current, 0);
  ASSERT_EQ(pinned_bytes(), 0);
}

TEST(bad_input_is_refused) {
  void *p = NULL;
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c_cuda_host_alloc(&p, (1 << 20) + 1));
  ASSERT_TRUE(strstr(c10c_last_error_message(), "CUDA out of memory while pinning 1048577 bytes") !=
              NULL);
  ASSERT_TRUE(p == NULL);
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_host_alloc(NULL, 8));
  int local = 0;
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_host_free(&local));
  ASSERT_FALSE(c10c_cuda_host_is_pinned(&local));
  c10c_stream s;
  ASSERT_OK(c10c_cuda_current_stream(&s, 0));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_host_record_stream(&local, s));
  c10c_stream cpu_stream;
  ASSERT_OK(c10c_stream_default(&cpu_stream, (c10c_device){C10C_DEVICE_TYPE_CPU, -1}));
  ASSERT_OK(c10c_cuda_host_alloc(&p, 8));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_host_record_stream(p, cpu_stream));
  ASSERT_OK(c10c_cuda_host_free(p));
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_host_free(p)); /* twice */
  c10c_cuda_host_stats small = {.struct_size = 8};
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT, c10c_cuda_host_get_stats(&small));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_host_get_stats(NULL));
  ASSERT_OK(c10c_cuda_host_empty_cache());
}

TEST(without_a_driver_pinning_is_unavailable) {
  void *p = NULL;
  ASSERT_STATUS(C10C_STATUS_UNAVAILABLE, c10c_cuda_host_alloc(&p, 8));
  ASSERT_STATUS(C10C_STATUS_UNAVAILABLE, c10c_cuda_host_empty_cache());
  c10c_storage *storage = NULL;
  ASSERT_STATUS(C10C_STATUS_UNAVAILABLE, c10c_storage_new(&storage, 8, c10c_cuda_host_allocator(),
                                                          C10C_DEVICE_TYPE_CPU, false));
  ASSERT_FALSE(c10c_cuda_host_is_pinned(&p));
  c10c_cuda_host_stats s = host_stats();
  ASSERT_EQ(s.allocations.current, 0);
}

/* A thread that used only cuda:1 pins on cuda:1's context: no context on device 0 (c10's
 * getDeviceIndexWithPrimaryContext, as CUDAHostAllocator's allocate_host_memory). */
TEST(pinning_makes_no_context_on_an_unused_device) {
  const c10c_device cuda1 = {C10C_DEVICE_TYPE_CUDA, 1};
  int64_t n = 4;
  c10c_tensor *dev = NULL;
  ASSERT_OK(c10c_tensor_empty(&dev, &n, 1, C10C_DTYPE_FLOAT32, cuda1, 0));
  ASSERT_EQ(retains(0), 0);
  ASSERT_EQ(retains(1), 1);
  void *p = NULL;
  ASSERT_OK(c10c_cuda_host_alloc(&p, 64));
  ASSERT_EQ(retains(0), 0);
  ASSERT_EQ(retains(1), 1);
  c10c_tensor *host = pinned_floats(n);
  ASSERT_OK(c10c_tensor_copy_nonblocking_(dev, host, true));
  c10c_tensor_release(host); /* its event is recorded on cuda:1's stream */
  ASSERT_OK(c10c_cuda_host_free(p));
  ASSERT_OK(c10c_cuda_host_empty_cache());
  ASSERT_EQ(retains(0), 0);
  c10c_tensor_release(dev);
}

int main(int argc, char **argv) {
  const char *scenario = argc > 1 ? argv[1] : "available";
  static const test_case available[] = {T(blocks_round_to_powers_of_two_and_are_cached),
                                        T(a_pinned_block_is_not_reused_while_its_copy_is_in_flight),
                                        T(bad_input_is_refused)};
  static const test_case absent[] = {T(without_a_driver_pinning_is_unavailable)};
  static const test_case contexts[] = {T(pinning_makes_no_context_on_an_unused_device)};
  bool on = strcmp(scenario, "available") == 0, ctx = strcmp(scenario, "contexts") == 0;
  const test_case *tests = on ? available : ctx ? contexts : absent;
  int count = on ? (int)(sizeof available / sizeof available[0]) : 1;
  for (int i = 0; i < count; i++) {
    test_current_failed = 0;
    tests[i].fn();
    printf("%s %s\n", test_current_failed ? "FAIL" : "ok  ", tests[i].name);
    test_failures += test_current_failed;
  }
  return test_failures ? 1 : 0;
}
