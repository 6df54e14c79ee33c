/* Failure injection: every operation that allocates is run with its 1st, 2nd, ... memory request
 * failing until it succeeds. Each failure must be a clean status with nothing half-made (the
 * sanitizer and valgrind runs of this test check for leaks), and success must follow. */
#include <unistd.h>

#include "harness.h"
#include "os_compat.h"

typedef c10c_status (*operation)(void);

static c10c_storage *kept; /* what an operation made, released after success */

static c10c_status op_storage_small(void) {
  return c10c_storage_new(&kept, 200, NULL, C10C_DEVICE_TYPE_CPU, true);
}

static c10c_status op_storage_large(void) {
  return c10c_storage_new(&kept, 3 << 20, NULL, C10C_DEVICE_TYPE_CPU, true);
}

static c10c_status op_storage_default_allocator(void) {
  return c10c_storage_new(&kept, 1000, c10c_cpu_default_allocator(), C10C_DEVICE_TYPE_CPU, true);
}

static int external_deletes;
static void count_delete(void *ctx) {
  (void)ctx;
  external_deletes++;
}

static c10c_status op_storage_external(void) {
  static char buffer[16];
  c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
  return c10c_storage_new_external(&kept, buffer, 16, cpu, count_delete, buffer);
}

static c10c_storage *to_resize;
static c10c_status op_resize_grow(void) { return c10c_storage_resize(to_resize, 1 << 20); }
static c10c_status op_resize_small(void) { return c10c_storage_resize(to_resize, 777); }

static c10c_status noop_allocate(c10c_data_ptr *out, void *self, size_t n, size_t a) {
  (void)self, (void)n, (void)a, (void)out;
  return C10C_STATUS_OK;
}

static c10c_allocator *made_allocator;
static c10c_status op_allocator_new(void) {
  c10c_allocator_vtable vt;
  memset(&vt, 0, sizeof vt);
  vt.struct_size = sizeof vt;
  vt.allocate = noop_allocate;
  return c10c_allocator_new(&made_allocator, &vt, NULL, C10C_DEVICE_TYPE_HPU);
}

static c10c_status op_allocator_set(void) {
  bool installed = false;
  return c10c_allocator_set(&installed, made_allocator, 0);
}

static c10c_tensor *made_tensor;
static const c10c_device cpu_device = {C10C_DEVICE_TYPE_CPU, -1};

static c10c_status op_tensor_empty(void) {
  int64_t sizes[2] = {2, 3};
  return c10c_tensor_empty(&made_tensor, sizes, 2, C10C_DTYPE_FLOAT32, cpu_device,
                           C10C_MEMORY_FORMAT_CONTIGUOUS);
}

static c10c_status op_tensor_empty_7d(void) { /* sizes and strides on the heap */
  int64_t sizes[7] = {2, 1, 2, 1, 2, 1, 2};
  return c10c_tensor_empty(&made_tensor, sizes, 7, C10C_DTYPE_FLOAT64, cpu_device,
                           C10C_MEMORY_FORMAT_CONTIGUOUS);
}

static c10c_status op_tensor_empty_strided(void) {
  int64_t sizes[3] = {4, 3, 2}, strides[3] = {1, 8, 24};
  return c10c_tensor_empty_strided(&made_tensor, sizes, strides, 3, C10C_DTYPE_INT16, cpu_device);
}

static c10c_storage *base_storage;
static c10c_status op_tensor_from_storage(void) {
  int64_t sizes[6] = {2, 1, 1, 1, 1, 2}, strides[6] = {2, 1, 1, 1, 1, 1};
  return c10c_tensor_new_from_storage(&made_tensor, base_storage, sizes, strides, 6, 1,
                                      C10C_DTYPE_FLOAT32);
}

static c10c_tensor *view_base; /* 7 dims: a view's sizes and strides live on the heap */
static c10c_status op_view_permute(void) {
  int64_t dims[7] = {6, 5, 4, 3, 2, 1, 0};
  return c10c_tensor_permute(&made_tensor, view_base, dims, 7);
}
static c10c_status op_view_view(void) {
  int64_t shape[8] = {2, 2, 2, 2, 1, 1, 1, -1};
  return c10c_tensor_view(&made_tensor, view_base, shape, 8);
}
static c10c_status op_view_squeeze(void) { return c10c_tensor_squeeze(&made_tensor, view_base); }
static c10c_status op_view_expand(void) {
  int64_t sizes[7] = {2, 3, 2, 3, 2, 3, 2};
  return c10c_tensor_expand(&made_tensor, view_base, sizes, 7);
}
static c10c_status op_view_select(void) {
  return c10c_tensor_select(&made_tensor, view_base, 6, 1);
}

static c10c_status op_clone_preserve(void) { /* 7-dim transposed view: inferred strides */
  c10c_tensor *v = NULL;
  c10c_status st = c10c_tensor_transpose(&v, view_base, 0, 6);
  if (st == C10C_STATUS_OK) st = c10c_tensor_clone(&made_tensor, v, C10C_MEMORY_FORMAT_PRESERVE);
  c10c_tensor_release(v);
  return st;
}
static c10c_status op_contiguous(void) {
  c10c_tensor *v = NULL;
  c10c_status st = c10c_tensor_transpose(&v, view_base, 0, 2);
  if (st == C10C_STATUS_OK)
    st = c10c_tensor_contiguous(&made_tensor, v, C10C_MEMORY_FORMAT_CONTIGUOUS);
  c10c_tensor_release(v);
  return st;
}
static c10c_status op_full(void) {
  int64_t sizes[17] = {2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2};
  int32_t value = 3;
  return c10c_tensor_full(&made_tensor, sizes, 17, C10C_DTYPE_INT32, cpu_device,
                          C10C_MEMORY_FORMAT_CONTIGUOUS, &value);
}
static c10c_status op_copy_high_rank(void) { /* 17 dims: the copy loop's scratch is on the heap */
  int64_t sizes[17] = {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, strides[17];
  for (int d = 0; d < 17; d++) strides[d] = (int64_t)1 << d;
  c10c_tensor *src = NULL;
  int64_t offset = 0;
  c10c_status st = c10c_tensor_full(&made_tensor, sizes, 17, C10C_DTYPE_INT8, cpu_device,
                                    C10C_MEMORY_FORMAT_CONTIGUOUS, NULL);
  if (st == C10C_STATUS_OK)
    st = c10c_tensor_as_strided(&src, made_tensor, sizes, 17, strides, 17, &offset);
  c10c_tensor *dst = NULL;
  if (st == C10C_STATUS_OK)
    st = c10c_tensor_empty_like(&dst, src, C10C_DTYPE_INT8, cpu_device,
                                C10C_MEMORY_FORMAT_CONTIGUOUS);
  if (st == C10C_STATUS_OK) st = c10c_tensor_copy_(dst, src);
  c10c_tensor_release(dst);
  c10c_tensor_release(src);
  if (st != C10C_STATUS_OK) {
    c10c_tensor_release(made_tensor);
    made_tensor = NULL;
  }
  return st;
}

static c10c_status op_reshape_copy(void) { /* transposed: reshape must copy */
  c10c_tensor *v = NULL;
  int64_t flat[1] = {-1};
  c10c_status st = c10c_tensor_transpose(&v, view_base, 0, 6);
  if (st == C10C_STATUS_OK) st = c10c_tensor_reshape(&made_tensor, v, flat, 1);
  c10c_tensor_release(v);
  return st;
}
static c10c_status op_movedim(void) {
  int64_t src[2] = {0, 1}, dst[2] = {6, 5};
  return c10c_tensor_movedim(&made_tensor, view_base, src, 2, dst, 2);
}
static c10c_status op_unflatten(void) {
  int64_t sizes[2] = {1, -1};
  return c10c_tensor_unflatten(&made_tensor, view_base, 6, sizes, 2);
}

static c10c_status op_view_transpose(void) {
  return c10c_tensor_transpose(&made_tensor, view_base, 0, 6);
}
static c10c_status op_view_slice(void) {
  return c10c_tensor_slice(&made_tensor, view_base, 6, 0, 1, 1);
}
static c10c_status op_view_narrow(void) {
  return c10c_tensor_narrow(&made_tensor, view_base, 0, 1, 1);
}
static c10c_status op_view_unsqueeze(void) {
  return c10c_tensor_unsqueeze(&made_tensor, view_base, 3);
}
static c10c_status op_view_squeeze_dims(void) {
  int64_t dims[2] = {1, 3};
  return c10c_tensor_squeeze_dims(&made_tensor, view_base, dims, 2);
}
static c10c_status op_view_as_strided(void) {
  int64_t sizes[7] = {2, 1, 2, 1, 2, 1, 2}, strides[7] = {1, 1, 2, 1, 4, 1, 8};
  return c10c_tensor_as_strided(&made_tensor, view_base, sizes, 7, strides, 7, NULL);
}
static c10c_status op_view_dtype(void) {
  return c10c_tensor_view_dtype(&made_tensor, view_base, C10C_DTYPE_INT16);
}
static c10c_status op_view_flatten(void) {
  return c10c_tensor_flatten(&made_tensor, view_base, 1, 2);
}
static c10c_status op_view_diagonal(void) {
  return c10c_tensor_diagonal(&made_tensor, view_base, 0, 0, 2);
}
static c10c_status op_view_unfold(void) {
  return c10c_tensor_unfold(&made_tensor, view_base, 6, 1, 1);
}
static c10c_status op_empty_like(void) {
  return c10c_tensor_empty_like(&made_tensor, view_base, C10C_DTYPE_FLOAT64, cpu_device,
                                C10C_MEMORY_FORMAT_PRESERVE);
}
static c10c_status op_full_like(void) {
  double value = 2.5;
  return c10c_tensor_full_like(&made_tensor, view_base, C10C_DTYPE_FLOAT64, cpu_device,
                               C10C_MEMORY_FORMAT_CONTIGUOUS, &value);
}

/* Runs op with the k-th request failing for k = 1, 2, ... until it succeeds; returns how many
 * failures it survived. */
static int sweep(const char *name, operation op) {
  for (int k = 1; k < 1000; k++) {
    kept = NULL;
    c10c_testing_fail_allocation(k);
    c10c_status st = op();
    c10c_testing_fail_allocation(0);
    if (st == C10C_STATUS_OK) return k - 1;
    if (st != C10C_STATUS_OUT_OF_MEMORY)
      FAIL_AT("%s with request %d failing returned %s: %s", name, k, c10c_status_name(st),
              c10c_last_error_message());
    if (kept != NULL) FAIL_AT("%s failed but produced an object", name);
  }
  FAIL_AT("%s never succeeded", name);
  return -1;
}

TEST(every_storage_constructor_survives_each_failure) {
  c10c_allocator_empty_cache(c10c_cpu_caching_allocator()); /* make the system requests real */
  operation ops[] = {op_storage_small, op_storage_large, op_storage_default_allocator,
                     op_storage_external};
  const char *names[] = {"storage_new(200)", "storage_new(3 MiB)", "storage_new(default)",
                         "storage_new_external"};
  for (int i = 0; i < 4; i++) {
    c10c_allocator_empty_cache(c10c_cpu_caching_allocator());
    int failures = sweep(names[i], ops[i]);
    ASSERT_TRUE(failures >= 1); /* at least the shell allocation could fail */
    c10c_storage_release(kept);
  }
  ASSERT_EQ(external_deletes, 1); /* only the successful one took ownership */
}

/* Shared storages: constructors, and the moves (which leave the storage as it was). */
static int shared_fd = -1;
static const char *shared_name;
static char shared_file[64];
static c10c_storage *to_share;
static c10c_status op_new_using_fd(void) { return c10c_storage_new_using_fd(&kept, 1000); }
static c10c_status op_new_using_filename(void) {
  return c10c_storage_new_using_filename(&kept, 1000);
}
static c10c_status op_new_shared_fd(void) {
  return c10c_storage_new_shared_fd(&kept, shared_fd, 1000);
}
static c10c_status op_new_shared_filename(void) {
  return c10c_storage_new_shared_filename(&kept, shared_name, 1000);
}
static c10c_status op_new_from_file(void) {
  return c10c_storage_new_from_file(&kept, shared_file, true, 1000);
}
static c10c_status op_share_fd(void) { return c10c_storage_share_fd(to_share); }
static c10c_status op_share_filename(void) { return c10c_storage_share_filename(to_share); }

TEST(shared_storage_constructors_and_moves_survive_each_failure) {
#ifdef _WIN32
  /* by name and mapped files: sharing by descriptor is not available there */
  c10c_storage *by_name;
  ASSERT_OK(c10c_storage_new_using_filename(&by_name, 1000));
  ASSERT_OK(c10c_storage_shared_name(&shared_name, by_name));
  snprintf(shared_file, sizeof shared_file, "c10c_sweep_%d", (int)getpid());
  operation ops[] = {op_new_using_filename, op_new_shared_filename, op_new_from_file};
  const char *names[] = {"new_using_filename", "new_shared_filename", "new_from_file"};
  for (int i = 0; i < 3; i++) {
    ASSERT_TRUE(sweep(names[i], ops[i]) >= 1);
    c10c_storage_release(kept);
  }
  unlink(shared_file);
  ASSERT_OK(c10c_storage_new(&to_share, 100, NULL, C10C_DEVICE_TYPE_CPU, true));
  memcpy(c10c_storage_data(to_share), "keep", 4);
  ASSERT_TRUE(sweep("share_filename", op_share_filename) >= 1);
  ASSERT_TRUE(c10c_storage_is_shared(to_share));
  ASSERT_TRUE(memcmp(c10c_storage_data(to_share), "keep", 4) == 0);
  c10c_storage_release(to_share);
  c10c_storage_release(by_name);
  (void)op_new_using_fd, (void)op_new_shared_fd, (void)op_share_fd;
  SKIP_ON_WINDOWS("sharing by descriptor");
#else
  c10c_storage *by_fd, *by_name;
  int64_t n;
  ASSERT_OK(c10c_storage_new_using_fd(&by_fd, 1000));
  ASSERT_OK(c10c_storage_shared_fd(&shared_fd, &n, by_fd));
  ASSERT_OK(c10c_storage_new_using_filename(&by_name, 1000));
  ASSERT_OK(c10c_storage_shared_name(&shared_name, by_name));
  snprintf(shared_file, sizeof shared_file, "/tmp/c10c_sweep_%d", (int)getpid());
  operation ops[] = {op_new_using_fd, op_new_using_filename, op_new_shared_fd,
                     op_new_shared_filename, op_new_from_file};
  const char *names[] = {"new_using_fd", "new_using_filename", "new_shared_fd",
                         "new_shared_filename", "new_from_file"};
  for (int i = 0; i < 5; i++) {
    ASSERT_TRUE(sweep(names[i], ops[i]) >= 1);
    c10c_storage_release(kept);
  }
  unlink(shared_file);
  operation moves[] = {op_share_fd, op_share_filename};
  for (int i = 0; i < 2; i++) {
    ASSERT_OK(c10c_storage_new(&to_share, 100, NULL, C10C_DEVICE_TYPE_CPU, true));
    memcpy(c10c_storage_data(to_share), "keep", 4);
    ASSERT_TRUE(sweep(i == 0 ? "share_fd" : "share_filename", moves[i]) >= 1);
    ASSERT_TRUE(c10c_storage_is_shared(to_share));
    ASSERT_TRUE(memcmp(c10c_storage_data(to_share), "keep", 4) == 0);
    c10c_storage_release(to_share);
  }
  c10c_storage_release(by_fd);
  c10c_storage_release(by_name);
#endif
}

TEST(resize_survives_each_failure_and_keeps_the_old_bytes) {
  operation ops[] = {op_resize_grow, op_resize_small};
  for (int i = 0; i < 2; i++) {
    c10c_allocator_empty_cache(c10c_cpu_caching_allocator());
    ASSERT_OK(c10c_storage_new(&to_resize, 100, NULL, C10C_DEVICE_TYPE_CPU, true));
    memcpy(c10c_storage_data(to_resize), "keep", 4);
    c10c_allocator_empty_cache(c10c_cpu_caching_allocator());
    /* while it fails, the storage is unchanged */
    c10c_testing_fail_allocation(1);
    c10c_status st = ops[i]();
    c10c_testing_fail_allocation(0);
    if (st != C10C_STATUS_OK) {
      ASSERT_EQ(c10c_storage_nbytes(to_resize), 100);
      ASSERT_TRUE(memcmp(c10c_storage_data(to_resize), "keep", 4) == 0);
    }
    c10c_storage_release(to_resize);
    ASSERT_OK(c10c_storage_new(&to_resize, 100, NULL, C10C_DEVICE_TYPE_CPU, true));
    memcpy(c10c_storage_data(to_resize), "keep", 4);
    c10c_allocator_empty_cache(c10c_cpu_caching_allocator());
    sweep(i == 0 ? "resize(1 MiB)" : "resize(777)", ops[i]);
    ASSERT_TRUE(memcmp(c10c_storage_data(to_resize), "keep", 4) == 0);
    c10c_storage_release(to_resize);
  }
}

TEST(large_miss_that_reuses_a_cached_block_survives_each_failure) {
  /* A cached 1 MiB block is resized (mremap) to serve a 5 MiB request: fail each step. */
  for (int k = 1; k < 50; k++) {
    c10c_allocator_empty_cache(c10c_cpu_caching_allocator());
    c10c_storage *cached;
    ASSERT_OK(c10c_storage_new(&cached, 1 << 20, NULL, C10C_DEVICE_TYPE_CPU, true));
    c10c_storage_release(cached); /* now in the cache */
    c10c_storage *s = NULL;
    c10c_testing_fail_allocation(k);
    c10c_status st = c10c_storage_new(&s, 5 << 20, NULL, C10C_DEVICE_TYPE_CPU, true);
    c10c_testing_fail_allocation(0);
    if (st == C10C_STATUS_OK) {
      memset(c10c_storage_data(s), 1, 5 << 20);
      c10c_storage_release(s);
      break;
    }
    ASSERT_EQ(st, C10C_STATUS_OUT_OF_MEMORY);
    ASSERT_TRUE(s == NULL);
  }
  c10c_memory_stats stats;
  stats.struct_size = sizeof stats;
  c10c_allocator_empty_cache(c10c_cpu_caching_allocator());
  ASSERT_OK(c10c_allocator_get_stats(&stats, c10c_cpu_caching_allocator()));
  ASSERT_EQ(stats.reserved_bytes[C10C_STAT_LARGE_POOL].current, 0);
  ASSERT_EQ(stats.segment[C10C_STAT_LARGE_POOL].current, 0);
}

TEST(allocator_handles_and_registry_survive_each_failure) {
  ASSERT_TRUE(sweep("allocator_new", op_allocator_new) >= 1);
  ASSERT_EQ(sweep("allocator_set", op_allocator_set), 0); /* allocates nothing, cannot fail */
  c10c_allocator_release(made_allocator);
}

/* Runs a tensor constructor through each failure (kept is unused by these). */
static int sweep_tensor(const char *name, operation op) {
  for (int k = 1; k < 100; k++) {
    made_tensor = NULL;
    c10c_allocator_empty_cache(c10c_cpu_caching_allocator());
    c10c_testing_fail_allocation(k);
    c10c_status st = op();
    c10c_testing_fail_allocation(0);
    if (st == C10C_STATUS_OK) {
      c10c_tensor_release(made_tensor);
      return k - 1;
    }
    if (st != C10C_STATUS_OUT_OF_MEMORY)
      FAIL_AT("%s with request %d failing returned %s: %s", name, k, c10c_status_name(st),
              c10c_last_error_message());
    if (made_tensor != NULL) FAIL_AT("%s failed but produced a tensor", name);
  }
  FAIL_AT("%s never succeeded", name);
  return -1;
}

TEST(every_tensor_constructor_survives_each_failure) {
  ASSERT_TRUE(sweep_tensor("tensor_empty", op_tensor_empty) >= 2);
  ASSERT_TRUE(sweep_tensor("tensor_empty(7 dims)", op_tensor_empty_7d) >= 3);
  ASSERT_TRUE(sweep_tensor("tensor_empty_strided", op_tensor_empty_strided) >= 2);
  ASSERT_OK(c10c_storage_new(&base_storage, 64, NULL, C10C_DEVICE_TYPE_CPU, true));
  ASSERT_TRUE(sweep_tensor("tensor_new_from_storage(6 dims)", op_tensor_from_storage) >= 2);
  ASSERT_EQ(c10c_storage_use_count(base_storage), 1);
  c10c_storage_release(base_storage);
}

TEST(every_view_survives_each_failure) {
  int64_t sizes[7] = {2, 1, 2, 1, 2, 1, 2};
  ASSERT_OK(c10c_tensor_empty(&view_base, sizes, 7, C10C_DTYPE_FLOAT32, cpu_device,
                              C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_TRUE(sweep_tensor("permute(7 dims)", op_view_permute) >= 1);
  ASSERT_TRUE(sweep_tensor("view(8 dims)", op_view_view) >= 1);
  ASSERT_TRUE(sweep_tensor("squeeze", op_view_squeeze) >= 1);
  ASSERT_TRUE(sweep_tensor("expand", op_view_expand) >= 1);
  ASSERT_TRUE(sweep_tensor("select", op_view_select) >= 1);
  ASSERT_TRUE(sweep_tensor("clone(preserve, 7 dims)", op_clone_preserve) >= 3);
  ASSERT_TRUE(sweep_tensor("contiguous", op_contiguous) >= 3);
  ASSERT_TRUE(sweep_tensor("full(17 dims)", op_full) >= 3);
  ASSERT_TRUE(sweep_tensor("copy_(17 dims)", op_copy_high_rank) >= 3);
  ASSERT_TRUE(sweep_tensor("reshape(copy)", op_reshape_copy) >= 3);
  ASSERT_TRUE(sweep_tensor("movedim", op_movedim) >= 1);
  ASSERT_TRUE(sweep_tensor("unflatten", op_unflatten) >= 1);
  ASSERT_TRUE(sweep_tensor("transpose", op_view_transpose) >= 1);
  ASSERT_TRUE(sweep_tensor("slice", op_view_slice) >= 1);
  ASSERT_TRUE(sweep_tensor("narrow", op_view_narrow) >= 1);
  ASSERT_TRUE(sweep_tensor("unsqueeze", op_view_unsqueeze) >= 1);
  ASSERT_TRUE(sweep_tensor("squeeze_dims", op_view_squeeze_dims) >= 1);
  ASSERT_TRUE(sweep_tensor("as_strided", op_view_as_strided) >= 1);
  ASSERT_TRUE(sweep_tensor("view(dtype)", op_view_dtype) >= 1);
  ASSERT_TRUE(sweep_tensor("flatten", op_view_flatten) >= 1);
  ASSERT_TRUE(sweep_tensor("diagonal", op_view_diagonal) >= 1);
  ASSERT_TRUE(sweep_tensor("unfold", op_view_unfold) >= 1);
  ASSERT_TRUE(sweep_tensor("empty_like(preserve)", op_empty_like) >= 2);
  ASSERT_TRUE(sweep_tensor("full_like", op_full_like) >= 2);
  ASSERT_EQ(c10c_storage_use_count(c10c_tensor_storage(view_base)), 1);
  c10c_tensor_release(view_base);
}

TEST(privateuse1_registration_survives_failure) {
  c10c_testing_fail_allocation(1);
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c_privateuse1_backend_register("sweep"));
  c10c_testing_fail_allocation(0);
  ASSERT_STR_EQ(c10c_privateuse1_backend_name(true), "privateuseone");
  ASSERT_OK(c10c_privateuse1_backend_register("sweep"));
}

/* DLPack: an export is one block; an import makes a storage (its deleter) and a tensor, and on
 * every failure leaves the producer's struct to the caller, deleter not called. */
static DLManagedTensorVersioned *made_export;
static int dl_deletes;
static int64_t dl_shape[7] = {1, 2, 1, 2, 1, 2, 1};
static float dl_data[8];
static void dl_count_delete(DLManagedTensorVersioned *self) {
  (void)self;
  dl_deletes++;
}
static DLManagedTensorVersioned dl_producer = {
    {1, 3},
    NULL,
    dl_count_delete,
    0,
    {dl_data, {kDLCPU, 0}, 7, {kDLFloat, 32, 1}, dl_shape, NULL, 0}};

static c10c_status op_to_dlpack(void) {
  c10c_status st = c10c_tensor_to_dlpack_versioned(&made_export, view_base);
  if (st == C10C_STATUS_OK) made_export->deleter(made_export);
  return st;
}

static c10c_status op_from_dlpack(void) {
  return c10c_tensor_from_dlpack_versioned(&made_tensor, &dl_producer);
}

TEST(dlpack_export_and_import_survive_each_failure) {
  int64_t sizes[7] = {2, 1, 2, 1, 2, 1, 2};
  ASSERT_OK(c10c_tensor_empty(&view_base, sizes, 7, C10C_DTYPE_FLOAT32, cpu_device,
                              C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_TRUE(sweep_tensor("to_dlpack_versioned(7 dims)", op_to_dlpack) >= 1);
  ASSERT_EQ(c10c_storage_use_count(c10c_tensor_storage(view_base)), 1);
  c10c_tensor_release(view_base);
  /* sweep_tensor releases the tensor made on success: that runs the producer's deleter once */
  ASSERT_TRUE(sweep_tensor("from_dlpack_versioned(7 dims)", op_from_dlpack) >= 2);
  ASSERT_EQ(dl_deletes, 1);
}

RUN_TESTS(T(shared_storage_constructors_and_moves_survive_each_failure),
          T(every_storage_constructor_survives_each_failure),
          T(resize_survives_each_failure_and_keeps_the_old_bytes),
          T(large_miss_that_reuses_a_cached_block_survives_each_failure),
          T(allocator_handles_and_registry_survive_each_failure),
          T(every_tensor_constructor_survives_each_failure), T(every_view_survives_each_failure),
          T(privateuse1_registration_survives_failure),
          T(dlpack_export_and_import_survive_each_failure))
