/* Devices through the stand-in driver (tests/cuda_stub/): contexts only on the devices a thread
 * uses (c10's MaybeSetDevice / ExchangeDevice rules, counted as the stand-in's primary-context
 * retains per device), the fork guard on every entry point that reaches the driver, peer access
 * for expandable segments, the driver's allocation granularity, and the driver version without
 * cuInit. Meson runs it once per scenario (argv[1]), each with its own environment:
 *   contexts     the stand-in (2 devices)
 *   fork         the stand-in; a child forked after the driver was initialized
 *   peers        3 devices, device 1 can access device 0's memory (C10C_STUB_PEERS=1:0),
 *                expandable segments
 *   granularity  an 8 MiB allocation granularity (C10C_STUB_GRANULARITY), expandable segments
 *   init_error   cuInit failing (C10C_STUB_INIT_ERROR=999)
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static const char *scenario;

/* The stand-in's control functions, from the same (already loaded) library. */
static void *stub(const char *symbol) {
  void *handle = dlopen(getenv("C10C_CUDA_DRIVER"), RTLD_NOW | RTLD_NOLOAD);
  void *address = handle ? dlsym(handle, symbol) : NULL;
  if (handle) dlclose(handle);
  return address;
}

static long retains(int device) {
  long (*fn)(int) = NULL;
  void *address = stub("c10c_stub_retains");
  memcpy(&fn, &address, sizeof address);
  return fn ? fn(device) : -1;
}

/* The device of the calling thread's current driver context (-1: none). */
static int driver_current(void) {
  int (*fn)(void) = NULL;
  void *address = stub("c10c_stub_current_device");
  memcpy(&fn, &address, sizeof address);
  return fn ? fn() : -2;
}

static long long access_of(const void *ptr) {
  long long (*fn)(uint64_t) = NULL;
  void *address = stub("c10c_stub_access");
  memcpy(&fn, &address, sizeof address);
  return fn ? fn((uint64_t)(uintptr_t)ptr) : -2;
}

static long stub_long(const char *symbol, int arg) {
  long (*fn)(int) = NULL;
  void *address = stub(symbol);
  memcpy(&fn, &address, sizeof address);
  return fn ? fn(arg) : -1;
}

static void stub_advance(uint64_t ticks) {
  void (*fn)(uint64_t) = NULL;
  void *address = stub("c10c_stub_advance");
  memcpy(&fn, &address, sizeof address);
  if (fn) fn(ticks);
}

static const c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};

/* ---- contexts ---- */

/* What a fresh thread sees (as torch: current_device() 0 with no context anywhere; set_device(0)
 * and a guard on device 0 skip cudaSetDevice because cudaGetDevice already answers 0). */
static void *fresh_thread_queries(void *arg) {
  (void)arg;
  int failures = 0;
  c10c_device_index d = -1;
  failures += c10c_cuda_current_device(&d) != C10C_STATUS_OK || d != 0;
  c10c_cuda_device_guard g = C10C_CUDA_DEVICE_GUARD_INIT;
  failures += c10c_cuda_device_guard_enter(&g, 0) != C10C_STATUS_OK;
  failures += c10c_cuda_device_guard_exit(&g) != C10C_STATUS_OK;
  failures += c10c_cuda_set_device(0) != C10C_STATUS_OK;
  char name[64];
  failures += c10c_cuda_device_name(name, sizeof name, -1) != C10C_STATUS_OK;
  int version = 0;
  failures += c10c_cuda_driver_version(&version) != C10C_STATUS_OK;
  failures += driver_current() != -1;
  return (void *)(intptr_t)failures;
}

TEST(a_fresh_thread_asking_its_device_makes_no_context) {
  pthread_t t;
  void *failures = NULL;
  pthread_create(&t, NULL, fresh_thread_queries, NULL);
  pthread_join(t, &failures);
  ASSERT_EQ((int)(intptr_t)failures, 0);
  ASSERT_EQ(retains(0), 0);
  ASSERT_EQ(retains(1), 0);
}

/* Everything a worker can do on cuda:1 without naming device 0: its work, then its current
 * device (still 0, as torch's) and the context left current (device 1's: c10's MaybeSetDevice
 * leaves it when device 0 has none). */
static void *work_on_cuda1(void *arg) {
  int *failures = arg;
#define CHECK(call)                                                                               \
  do {                                                                                            \
    c10c_status st_ = (call);                                                                     \
    if (st_ != C10C_STATUS_OK) {                                                                  \
      fprintf(stderr, "  %s: %s: %s\n", #call, c10c_status_name(st_), c10c_last_error_message()); \
      ++*failures;                                                                                \
    }                                                                                             \
  } while (0)
  const c10c_device cuda1 = {C10C_DEVICE_TYPE_CUDA, 1};
  int64_t free_bytes = 0, total = 0;
  CHECK(c10c_cuda_mem_get_info(&free_bytes, &total, 1));
  CHECK(c10c_cuda_synchronize(1));
  int64_t n[1] = {1024};
  c10c_tensor *host = NULL, *dev = NULL, *clone = NULL;
  float one = 1.0f;
  CHECK(c10c_tensor_full(&host, n, 1, C10C_DTYPE_FLOAT32, cpu, 0, &one));
  CHECK(c10c_tensor_empty(&dev, n, 1, C10C_DTYPE_FLOAT32, cuda1, 0));
  CHECK(c10c_tensor_copy_(dev, host));
  CHECK(c10c_tensor_clone(&clone, dev, C10C_MEMORY_FORMAT_PRESERVE));
  CHECK(c10c_tensor_zero_(clone));
  CHECK(c10c_tensor_copy_(host, clone));
  c10c_stream s = {0}, def = {0};
  CHECK(c10c_cuda_stream_from_pool(&s, 0, 1));
  CHECK(c10c_cuda_default_stream(&def, 1));
  bool done = false;
  CHECK(c10c_cuda_stream_query(&done, s));
  CHECK(c10c_cuda_stream_synchronize(s));
  CHECK(c10c_tensor_record_stream(dev, s));
  c10c_cuda_event *a = NULL, *b = NULL;
  CHECK(c10c_cuda_event_new(&a, true));
  CHECK(c10c_cuda_event_new(&b, true));
  CHECK(c10c_cuda_event_record(a, s));
  CHECK(c10c_cuda_event_record(b, s));
  CHECK(c10c_cuda_event_wait(a, def));
  CHECK(c10c_cuda_event_query(&done, b));
  CHECK(c10c_cuda_event_synchronize(b));
  float ms = -1;
  CHECK(c10c_cuda_event_elapsed_time(&ms, a, b));
  c10c_cuda_event_free(a);
  c10c_cuda_event_free(b);
  c10c_cuda_device_guard g = C10C_CUDA_DEVICE_GUARD_INIT;
  CHECK(c10c_cuda_device_guard_enter(&g, 1));
  c10c_device_index d = -1;
  CHECK(c10c_cuda_current_device(&d));
  *failures += d != 1;
  CHECK(c10c_cuda_synchronize(-1 + 2));
  CHECK(c10c_cuda_device_guard_exit(&g));
  c10c_tensor_release(host);
  c10c_tensor_release(dev);
  c10c_tensor_release(clone);
  c10c_allocator *alloc = NULL;
  CHECK(c10c_allocator_get(&alloc, C10C_DEVICE_TYPE_CUDA));
  CHECK(c10c_allocator_empty_cache(alloc));
  CHECK(c10c_cuda_current_device(&d));
  if (d != 0) fprintf(stderr, "  current device %d, expected 0\n", (int)d);
  *failures += d != 0;
  if (driver_current() != 1) fprintf(stderr, "  driver context on %d\n", driver_current());
  *failures += driver_current() != 1;
#undef CHECK
  return NULL;
}

TEST(a_thread_that_only_uses_cuda1_retains_only_device_1) {
  int failures = 0;
  pthread_t t;
  pthread_create(&t, NULL, work_on_cuda1, &failures);
  pthread_join(t, NULL);
  ASSERT_EQ(failures, 0);
  ASSERT_EQ(retains(0), 0); /* 1 before: the restore to device 0 after every call made it */
  ASSERT_EQ(retains(1), 1);
  ASSERT_EQ(stub_long("c10c_stub_violations", 0), 0);
}

/* Once device 0 has a context (the main thread asked for it), a worker's calls on cuda:1 give
 * the thread back to device 0 (c10's MaybeSetDevice: hasPrimaryContext), creating nothing. */
static void *work_then_report_context(void *arg) {
  (void)arg;
  int64_t f = 0, t = 0;
  if (c10c_cuda_mem_get_info(&f, &t, 1) != C10C_STATUS_OK) return (void *)(intptr_t)-3;
  return (void *)(intptr_t)driver_current();
}

TEST(work_on_another_device_returns_to_an_existing_context) {
  ASSERT_OK(c10c_cuda_set_device(1)); /* asked for: made current (exists already) */
  ASSERT_EQ(driver_current(), 1);
  ASSERT_OK(c10c_cuda_set_device(0)); /* asked for: made */
  ASSERT_EQ(retains(0), 1);
  ASSERT_EQ(driver_current(), 0);
  int64_t f = 0, t = 0;
  ASSERT_OK(c10c_cuda_mem_get_info(&f, &t, 1));
  ASSERT_EQ(driver_current(), 0);
  pthread_t th;
  void *ctx = NULL;
  pthread_create(&th, NULL, work_then_report_context, NULL);
  pthread_join(th, &ctx);
  ASSERT_EQ((int)(intptr_t)ctx, 0);
  /* a guard on device 1 restores device 0's context on exit */
  c10c_cuda_device_guard g = C10C_CUDA_DEVICE_GUARD_INIT;
  ASSERT_OK(c10c_cuda_device_guard_enter(&g, 1));
  ASSERT_EQ(driver_current(), 1);
  ASSERT_OK(c10c_cuda_device_guard_exit(&g));
  ASSERT_EQ(driver_current(), 0);
  ASSERT_EQ(retains(0), 1);
  ASSERT_EQ(retains(1), 1);
}

/* A guard entered on a fresh thread for device 1 and left: device 0 (the original) has no
 * context in a process where only device 1 was used, so none is made on exit. */
static void *guard_on_cuda1(void *arg) {
  (void)arg;
  c10c_cuda_device_guard g = C10C_CUDA_DEVICE_GUARD_INIT;
  int failures = c10c_cuda_device_guard_enter(&g, 1) != C10C_STATUS_OK;
  failures += c10c_cuda_device_guard_exit(&g) != C10C_STATUS_OK;
  c10c_device_index d = -1;
  failures += c10c_cuda_current_device(&d) != C10C_STATUS_OK || d != 0;
  failures += driver_current() != 1;
  return (void *)(intptr_t)failures;
}

TEST(a_guard_exit_does_not_make_the_original_devices_context) {
  pthread_t t;
  void *failures = NULL;
  pthread_create(&t, NULL, guard_on_cuda1, NULL);
  pthread_join(t, &failures);
  ASSERT_EQ((int)(intptr_t)failures, 0);
  ASSERT_EQ(retains(0), 0);
  ASSERT_EQ(retains(1), 1);
}

/* ---- the fork guard ---- */

static const char fork_message[] =
    "Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must "
    "use the 'spawn' start method";

/* In the child: every entry point that would reach the driver refuses with torch's message. */
static int child_calls(c10c_cuda_event *recorded, c10c_cuda_event *timed, c10c_stream s,
                       c10c_tensor *dev) {
  int failures = 0;
#define REFUSED(call)                                                                        \
  do {                                                                                       \
    c10c_status st_ = (call);                                                                \
    if (st_ != C10C_STATUS_UNAVAILABLE || strcmp(c10c_last_error_message(), fork_message)) { \
      fprintf(stderr, "  child: %s gave %s: %s\n", #call, c10c_status_name(st_),             \
              c10c_last_error_message());                                                    \
      failures++;                                                                            \
    }                                                                                        \
  } while (0)
  c10c_device_index d;
  c10c_cuda_device_guard g = C10C_CUDA_DEVICE_GUARD_INIT;
  int64_t f, t;
  char name[64];
  bool done;
  float ms;
  void *handle;
  int priority;
  c10c_stream out;
  REFUSED(c10c_cuda_init());
  REFUSED(c10c_cuda_current_device(&d));
  REFUSED(c10c_cuda_set_device(0));
  REFUSED(c10c_cuda_device_guard_enter(&g, 1));
  REFUSED(c10c_cuda_device_name(name, sizeof name, 0));
  REFUSED(c10c_cuda_mem_get_info(&f, &t, 0));
  REFUSED(c10c_cuda_synchronize(0));
  REFUSED(c10c_cuda_default_stream(&out, 0));
  REFUSED(c10c_cuda_stream_from_pool(&out, 0, 0));
  REFUSED(c10c_cuda_current_stream(&out, 0));
  REFUSED(c10c_cuda_set_current_stream(s));
  REFUSED(c10c_cuda_stream_query(&done, s));
  REFUSED(c10c_cuda_stream_synchronize(s));
  REFUSED(c10c_cuda_stream_handle(&handle, s));
  REFUSED(c10c_cuda_stream_priority(&priority, s));
  REFUSED(c10c_cuda_wait_current_stream(NULL, 0));
  REFUSED(c10c_cuda_set_memory_fraction(0.5, 0));
  REFUSED(c10c_tensor_record_stream(dev, s));
  REFUSED(c10c_cuda_event_record(recorded, s));
  REFUSED(c10c_cuda_event_query(&done, recorded));
  REFUSED(c10c_cuda_event_synchronize(recorded));
  REFUSED(c10c_cuda_event_wait(recorded, s));
  REFUSED(c10c_cuda_event_elapsed_time(&ms, timed, timed));
  int64_t n[1] = {4};
  c10c_tensor *x = NULL, *host = NULL;
  REFUSED(
      c10c_tensor_empty(&x, n, 1, C10C_DTYPE_FLOAT32, (c10c_device){C10C_DEVICE_TYPE_CUDA, 0}, 0));
  c10c_tensor_empty(&host, n, 1, C10C_DTYPE_FLOAT32, cpu, 0);
  REFUSED(c10c_tensor_copy_(host, dev));
  REFUSED(c10c_tensor_zero_(dev));
  c10c_tensor_release(host);
  c10c_allocator *alloc = NULL;
  c10c_data_ptr p;
  if (c10c_allocator_get(&alloc, C10C_DEVICE_TYPE_CUDA) == C10C_STATUS_OK) {
    REFUSED(c10c_allocator_allocate(&p, alloc, 16));
    /* torch.cuda.empty_cache() does nothing in a forked child (not is_initialized()): no
     * error, and nothing reaches the driver (counted below) */
    failures += c10c_allocator_empty_cache(alloc) != C10C_STATUS_OK;
  }
  c10c_data_ptr none = {0};
  none.device = (c10c_device){C10C_DEVICE_TYPE_CUDA, 0};
  REFUSED(c10c_cuda_record_stream(&none, s));
  /* nothing reaches the driver: a destroyed event is forgotten, not destroyed there */
  c10c_cuda_event_free(recorded);
  c10c_cuda_event_free(timed);
  c10c_tensor_release(dev); /* its memory goes back to the cache, not to the driver */
  /* the driver version was asked at load: answered without the driver, as torch's */
  int version = 0;
  failures += c10c_cuda_driver_version(&version) != C10C_STATUS_OK || version != 12080;
#undef REFUSED
  return failures;
}

static long calls_of(const char *entry) {
  long (*calls)(const char *) = NULL;
  void *address = stub("c10c_stub_calls");
  memcpy(&calls, &address, sizeof address);
  return calls ? calls(entry) : -1;
}

TEST(a_forked_child_is_refused_at_every_entry_point) {
  c10c_stream s;
  ASSERT_OK(c10c_cuda_stream_from_pool(&s, 0, 0));
  c10c_cuda_event *recorded = NULL, *timed = NULL;
  ASSERT_OK(c10c_cuda_event_new(&recorded, false));
  ASSERT_OK(c10c_cuda_event_new(&timed, true));
  ASSERT_OK(c10c_cuda_event_record(recorded, s));
  ASSERT_OK(c10c_cuda_event_record(timed, s));
  int64_t n[1] = {4};
  c10c_tensor *dev = NULL;
  ASSERT_OK(c10c_tensor_empty(&dev, n, 1, C10C_DTYPE_FLOAT32,
                              (c10c_device){C10C_DEVICE_TYPE_CUDA, 0}, 0));
  fflush(NULL);
  int result[2];
  ASSERT_EQ(pipe(result), 0);
  pid_t pid = fork();
  if (pid == 0) {
    static const char *const entries[] = {
        "cuEventQuery",  "cuEventSynchronize", "cuEventElapsedTime", "cuEventDestroy_v2",
        "cuStreamQuery", "cuCtxSetCurrent",    "cuMemAlloc_v2",      "cuCtxSynchronize",
        "cuMemFree_v2",  "cuStreamWaitEvent",  "cuEventRecord",      "cuMemGetInfo_v2"};
    enum { N = sizeof entries / sizeof entries[0] };
    long counts[N];
    for (int i = 0; i < N; i++) counts[i] = calls_of(entries[i]);
    int failures = child_calls(recorded, timed, s, dev);
    for (int i = 0; i < N; i++)
      if (calls_of(entries[i]) != counts[i]) {
        fprintf(stderr, "  child: %s reached the driver\n", entries[i]);
        failures++;
      }
    /* the verdict through the pipe, then gone without exit-time checks: the parent's driver
     * objects the child forgot on purpose (c10c_cuda_event_free) would read as leaks there */
    unsigned char verdict = failures == 0 ? 0 : 1;
    if (write(result[1], &verdict, 1) != 1) _exit(2);
    kill(getpid(), SIGKILL);
    _exit(3);
  }
  close(result[1]);
  unsigned char verdict = 9;
  ASSERT_EQ(read(result[0], &verdict, 1), 1);
  close(result[0]);
  ASSERT_EQ(verdict, 0);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  /* the parent goes on */
  bool done = false;
  stub_advance(1);
  ASSERT_OK(c10c_cuda_event_query(&done, recorded));
  ASSERT_TRUE(done);
  c10c_cuda_event_free(recorded);
  c10c_cuda_event_free(timed);
  c10c_tensor_release(dev);
}

/* ---- peers and granularity (expandable segments) ---- */

static void stub_fail(const char *entry, long k, int error) {
  void (*fail)(const char *, long, int) = NULL;
  void *address = stub("c10c_stub_fail");
  memcpy(&fail, &address, sizeof address);
  if (fail) fail(entry, k, error);
}

TEST(expandable_pages_are_accessible_to_the_devices_that_can_access_them) {
  int64_t n[1] = {(4 << 20) / 4};
  c10c_tensor *t[3] = {NULL, NULL, NULL};
  /* the driver failing to answer: the allocation fails naming the call, nothing stays mapped,
   * and the question is asked again (not remembered as "no peers") */
  ASSERT_OK(c10c_cuda_init());
  stub_fail("cuDeviceCanAccessPeer", 1, 1);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_empty(&t[0], n, 1, C10C_DTYPE_FLOAT32,
                                                     (c10c_device){C10C_DEVICE_TYPE_CUDA, 0}, 0));
  ASSERT_TRUE(strstr(c10c_last_error_message(), "in cuDeviceCanAccessPeer") != NULL);
  ASSERT_EQ(stub_long("c10c_stub_mapped_bytes", 0), 0);
  ASSERT_EQ(stub_long("c10c_stub_used", 0), 0);
  for (int d = 0; d < 3; d++)
    ASSERT_OK(c10c_tensor_empty(&t[d], n, 1, C10C_DTYPE_FLOAT32,
                                (c10c_device){C10C_DEVICE_TYPE_CUDA, (c10c_device_index)d}, 0));
  ASSERT_EQ(access_of(c10c_tensor_data(t[0])), 0x3); /* device 0's own and device 1 (a peer) */
  ASSERT_EQ(access_of(c10c_tensor_data(t[1])), 0x2); /* device 0 cannot access device 1 */
  ASSERT_EQ(access_of(c10c_tensor_data(t[2])), 0x4);
  /* data still goes through */
  c10c_tensor *host = NULL;
  float v = 3.0f;
  ASSERT_OK(c10c_tensor_full(&host, n, 1, C10C_DTYPE_FLOAT32, cpu, 0, &v));
  ASSERT_OK(c10c_tensor_copy_(t[0], host));
  ASSERT_OK(c10c_tensor_zero_(host));
  ASSERT_OK(c10c_tensor_copy_(host, t[0]));
  ASSERT_TRUE(((float *)c10c_tensor_data(host))[n[0] - 1] == 3.0f);
  for (int d = 0; d < 3; d++) c10c_tensor_release(t[d]);
  c10c_tensor_release(host);
  ASSERT_EQ(stub_long("c10c_stub_violations", 0), 0);
  ASSERT_EQ(calls_of("cuDeviceCanAccessPeer"), 1 + 6); /* the failed one, then once per pair */
}

TEST(expandable_pages_follow_the_drivers_granularity) {
  /* the granularity asked failing: the allocation fails naming it, nothing reserved or mapped,
   * and the next one asks again */
  const c10c_device cuda1 = {C10C_DEVICE_TYPE_CUDA, 1};
  int64_t one[1] = {1};
  c10c_tensor *x = NULL;
  ASSERT_OK(c10c_cuda_init()); /* the stand-in is loaded: its failure injection works */
  long reserves = calls_of("cuMemAddressReserve");
  stub_fail("cuMemGetAllocationGranularity", 1, 1);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_empty(&x, one, 1, C10C_DTYPE_FLOAT32, cuda1, 0));
  ASSERT_TRUE(strstr(c10c_last_error_message(), "in cuMemGetAllocationGranularity") != NULL);
  ASSERT_EQ(calls_of("cuMemAddressReserve"), reserves);
  ASSERT_OK(c10c_tensor_empty(&x, one, 1, C10C_DTYPE_FLOAT32, cuda1, 0));
  ASSERT_EQ(stub_long("c10c_stub_used", 1), 8 << 20);
  c10c_tensor_release(x);
  c10c_allocator *cache = NULL;
  ASSERT_OK(c10c_allocator_get(&cache, C10C_DEVICE_TYPE_CUDA));
  ASSERT_OK(c10c_allocator_empty_cache(cache));

  int64_t small[1] = {256}, large[1] = {(30 << 20) / 4};
  c10c_tensor *a = NULL, *b = NULL;
  const c10c_device cuda0 = {C10C_DEVICE_TYPE_CUDA, 0};
  ASSERT_OK(c10c_tensor_empty(&a, small, 1, C10C_DTYPE_FLOAT32, cuda0, 0));
  /* the small pool's page: PyTorch's 2 MiB rounded up to the driver's 8 MiB */
  ASSERT_EQ(stub_long("c10c_stub_mapped_bytes", 0), 8 << 20);
  ASSERT_OK(c10c_tensor_empty(&b, large, 1, C10C_DTYPE_FLOAT32, cuda0, 0));
  /* the large pool's: 20 MiB rounded up to 24 MiB, two of them for 30 MiB */
  ASSERT_EQ(stub_long("c10c_stub_mapped_bytes", 0), (8 + 48) << 20);
  ASSERT_EQ(stub_long("c10c_stub_used", 0), (8 + 48) << 20);
  c10c_tensor_release(a);
  c10c_tensor_release(b);
  c10c_allocator *alloc = NULL;
  ASSERT_OK(c10c_allocator_get(&alloc, C10C_DEVICE_TYPE_CUDA));
  ASSERT_OK(c10c_allocator_empty_cache(alloc));
  ASSERT_EQ(stub_long("c10c_stub_mapped_bytes", 0), 0);
  ASSERT_EQ(stub_long("c10c_stub_violations", 0), 0);
}

/* ---- the driver version without cuInit ---- */

TEST(the_driver_version_is_reported_when_cuinit_fails) {
  ASSERT_FALSE(c10c_cuda_is_available());
  int version = 0;
  ASSERT_OK(c10c_cuda_driver_version(&version));
  ASSERT_EQ(version, 12080);
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_cuda_driver_version(NULL));
  c10c_device_index d;
  ASSERT_STATUS(C10C_STATUS_UNAVAILABLE, c10c_cuda_current_device(&d));
}

int main(int argc, char **argv) {
  scenario = argc > 1 ? argv[1] : "contexts";
  static const test_case contexts[] = {T(a_fresh_thread_asking_its_device_makes_no_context),
                                       T(a_thread_that_only_uses_cuda1_retains_only_device_1),
                                       T(a_guard_exit_does_not_make_the_original_devices_context),
                                       T(work_on_another_device_returns_to_an_existing_context)};
  static const test_case forked[] = {T(a_forked_child_is_refused_at_every_entry_point)};
  static const test_case peers[] = {
      T(expandable_pages_are_accessible_to_the_devices_that_can_access_them)};
  static const test_case granularity[] = {T(expandable_pages_follow_the_drivers_granularity)};
  static const test_case init_error[] = {T(the_driver_version_is_reported_when_cuinit_fails)};
  const test_case *tests = NULL;
  int count = 0;
#define PICK(name, table)                          \
  if (strcmp(scenario, name) == 0) {               \
    tests = table;                                 \
    count = (int)(sizeof table / sizeof table[0]); \
  }
  PICK("contexts", contexts)
  PICK("fork", forked)
  PICK("peers", peers)
  PICK("granularity", granularity)
  PICK("init_error", init_error)
  if (tests == NULL) {
    fprintf(stderr, "unknown scenario %s\n", scenario);
    return 2;
  }
  for (int i = 0; i < count; i++) {
    test_current_failed = 0;
    tests[i].fn();
    printf("%s %s (%s)\n", test_current_failed ? "FAIL" : "ok  ", tests[i].name, scenario);
    test_failures += test_current_failed;
  }
  printf("%d passed, %d failed\n", count - test_failures, test_failures);
  return test_failures ? 1 : 0;
}
