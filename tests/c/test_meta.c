/* The meta device (c10's DeviceType::Meta): storages and tensors with sizes, strides and dtypes
 * but no data. Any size costs only a shell, every view works, writes into a meta tensor check
 * what torch's meta kernels check and write nothing, reads of its data are refused with torch's
 * words. tests/python/test_meta.py compares the same operations with torch. */
#include "harness.h"

static const c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
static const c10c_device meta = {C10C_DEVICE_TYPE_META, -1};

static c10c_tensor *empty_on(c10c_device device, size_t ndim, const int64_t *sizes,
                             c10c_dtype dtype) {
  c10c_tensor *t = NULL;
  ASSERT_OK(c10c_tensor_empty(&t, sizes, ndim, dtype, device, C10C_MEMORY_FORMAT_CONTIGUOUS));
  return t;
}

static int64_t version(const c10c_tensor *t) {
  int64_t v = -1;
  ASSERT_OK(c10c_tensor_version(&v, t));
  return v;
}

static int64_t cpu_allocated_bytes(void) {
  c10c_memory_stats stats = {.struct_size = sizeof stats};
  ASSERT_OK(c10c_allocator_get_stats(&stats, c10c_cpu_caching_allocator()));
  return stats.allocated_bytes[C10C_STAT_ALL].current;
}

TEST(the_registry_serves_the_builtin_meta_allocator) {
  c10c_allocator *a = NULL;
  ASSERT_OK(c10c_allocator_get(&a, C10C_DEVICE_TYPE_META));
  ASSERT_STR_EQ(c10c_allocator_name(a), "meta");
  ASSERT_EQ(c10c_allocator_device_type(a), C10C_DEVICE_TYPE_META);
  c10c_data_ptr p;
  ASSERT_OK(
      c10c_allocator_allocate(&p, a, (size_t)PTRDIFF_MAX)); /* 2^63 - 1 (2^31 - 1 on 32-bit) */
  ASSERT_TRUE(p.data == NULL);
  ASSERT_TRUE(p.ctx == NULL);
  ASSERT_EQ(p.device.type, C10C_DEVICE_TYPE_META);
  c10c_data_ptr_free(&p);
  c10c_allocator_release(a);
}

/* 2^40 and 2^50 bytes; on a 32-bit target storages stop at PTRDIFF_MAX, meta ones too
 * (tests/c/test_address_space.c), so 2^30 and PTRDIFF_MAX there. */
#if PTRDIFF_MAX > INT32_MAX
#define META_BIG    (INT64_C(1) << 40)
#define META_BIGGER (INT64_C(1) << 50)
#else
#define META_BIG    (INT64_C(1) << 30)
#define META_BIGGER ((int64_t)PTRDIFF_MAX)
#endif

TEST(a_meta_storage_of_two_to_the_40_bytes_costs_nothing) {
  int64_t before = cpu_allocated_bytes();
  c10c_storage *s = NULL;
  ASSERT_OK(c10c_storage_new(&s, META_BIG, NULL, C10C_DEVICE_TYPE_META, true));
  ASSERT_EQ(c10c_storage_nbytes(s), META_BIG);
  ASSERT_TRUE(c10c_storage_data(s) == NULL);
  ASSERT_EQ(c10c_storage_device(s).type, C10C_DEVICE_TYPE_META);
  ASSERT_STR_EQ(c10c_allocator_name(c10c_storage_allocator(s)), "meta");
  /* resizes change the size, still without bytes (torch: resize_ of a meta storage) */
  ASSERT_OK(c10c_storage_resize(s, META_BIGGER));
  ASSERT_EQ(c10c_storage_nbytes(s), META_BIGGER);
  ASSERT_OK(c10c_storage_resize(s, 3));
  ASSERT_EQ(c10c_storage_nbytes(s), 3);
  ASSERT_TRUE(c10c_storage_data(s) == NULL);
  ASSERT_EQ(cpu_allocated_bytes(), before);
  /* sizes are checked as on CPU */
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_resize(s, -1));
  ASSERT_ERROR_MESSAGE(
      "alloc_cpu() seems to have been called with negative number: 18446744073709551615");
  c10c_storage_release(s);
  c10c_storage *neg = NULL;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new(&neg, -1, NULL, C10C_DEVICE_TYPE_META, true));
  ASSERT_TRUE(neg == NULL);
}

/* a side of a square uint8 meta tensor: 2^40 bytes in all, 2^30 on a 32-bit target */
#if PTRDIFF_MAX > INT32_MAX
#define META_SIDE 20
#else
#define META_SIDE 15
#endif

TEST(a_meta_tensor_has_geometry_and_no_data) {
  int64_t before = cpu_allocated_bytes();
  int64_t sizes[2] = {INT64_C(1) << META_SIDE, INT64_C(1) << META_SIDE};
  c10c_tensor *t = empty_on(meta, 2, sizes, C10C_DTYPE_UINT8);
  ASSERT_EQ(c10c_tensor_device(t).type, C10C_DEVICE_TYPE_META);
  ASSERT_EQ(c10c_tensor_nbytes(t), INT64_C(1) << (2 * META_SIDE));
  ASSERT_EQ(c10c_storage_nbytes(c10c_tensor_storage(t)), INT64_C(1) << (2 * META_SIDE));
  ASSERT_EQ(c10c_tensor_strides(t)[0], INT64_C(1) << META_SIDE);
  ASSERT_TRUE(c10c_tensor_data(t) == NULL);
  ASSERT_EQ(cpu_allocated_bytes(), before);
  /* the Meta dispatch key, as c10's computeDispatchKey */
  bool has_meta = false;
  ASSERT_OK(c10c_dispatch_key_set_has(&has_meta, c10c_tensor_keys(t), C10C_DISPATCH_KEY_META));
  ASSERT_TRUE(has_meta);
  c10c_tensor_release(t);

  int64_t strided_sizes[2] = {2, 3}, strides[2] = {1, 2};
  ASSERT_OK(c10c_tensor_empty_strided(&t, strided_sizes, strides, 2, C10C_DTYPE_FLOAT32, meta));
  ASSERT_EQ(c10c_tensor_strides(t)[1], 2);
  ASSERT_EQ(c10c_storage_nbytes(c10c_tensor_storage(t)), 24);
  c10c_tensor_release(t);

  /* no device index, as CPU tensors: torch.empty(2, device="meta:1").device is meta */
  c10c_device meta1 = {C10C_DEVICE_TYPE_META, 1};
  t = empty_on(meta1, 2, strided_sizes, C10C_DTYPE_FLOAT32);
  ASSERT_EQ(c10c_tensor_device(t).type, C10C_DEVICE_TYPE_META);
  ASSERT_EQ(c10c_tensor_device(t).index, -1);
  c10c_tensor_release(t);
}

TEST(every_view_of_a_meta_tensor_works) {
  int64_t sizes[3] = {2, 3, 4};
  c10c_tensor *t = empty_on(meta, 3, sizes, C10C_DTYPE_FLOAT32), *v = NULL, *w = NULL;
  int64_t shape[2] = {6, 4};
  ASSERT_OK(c10c_tensor_view(&v, t, shape, 2));
  ASSERT_EQ(c10c_tensor_sizes(v)[0], 6);
  ASSERT_EQ(c10c_tensor_device(v).type, C10C_DEVICE_TYPE_META);
  c10c_tensor_release(v);
  ASSERT_OK(c10c_tensor_transpose(&v, t, 0, 2));
  ASSERT_EQ(c10c_tensor_strides(v)[0], 1);
  /* reshape of a transposed view copies: a meta copy, of the same geometry as on CPU */
  ASSERT_OK(c10c_tensor_reshape(&w, v, shape, 2));
  ASSERT_EQ(c10c_tensor_device(w).type, C10C_DEVICE_TYPE_META);
  ASSERT_EQ(c10c_tensor_strides(w)[0], 4);
  ASSERT_TRUE(c10c_tensor_storage(w) != c10c_tensor_storage(t));
  c10c_tensor_release(w);
  c10c_tensor_release(v);
  ASSERT_OK(c10c_tensor_slice(&v, t, 2, 1, INT64_MAX, 2));
  ASSERT_EQ(c10c_tensor_storage_offset(v), 1);
  ASSERT_EQ(c10c_tensor_strides(v)[2], 2);
  ASSERT_TRUE(c10c_tensor_data(v) == NULL);
  c10c_tensor_release(v);
  ASSERT_OK(c10c_tensor_select(&v, t, 1, -1));
  ASSERT_EQ(c10c_tensor_storage_offset(v), 8);
  c10c_tensor_release(v);
  int64_t big[4] = {5, 2, 3, 4};
  ASSERT_OK(c10c_tensor_expand(&v, t, big, 4));
  ASSERT_EQ(c10c_tensor_strides(v)[0], 0);
  c10c_tensor_release(v);
  int64_t as_sizes[2] = {2, 2}, as_strides[2] = {1, 1}, offset = 3;
  ASSERT_OK(c10c_tensor_as_strided(&v, t, as_sizes, 2, as_strides, 2, &offset));
  ASSERT_EQ(c10c_tensor_storage_offset(v), 3);
  c10c_tensor_release(v);
  /* a meta storage bounds nothing (torch's meta as_strided does not check) */
  int64_t far = 100;
  ASSERT_OK(c10c_tensor_as_strided(&v, t, as_sizes, 2, as_strides, 2, &far));
  ASSERT_EQ(c10c_tensor_storage_offset(v), 100);
  c10c_tensor_release(v);
  ASSERT_OK(c10c_tensor_view_dtype(&v, t, C10C_DTYPE_INT16));
  ASSERT_EQ(c10c_tensor_sizes(v)[2], 8);
  c10c_tensor_release(v);
  c10c_tensor_release(t);
}

TEST(reading_a_meta_tensor_is_refused_with_torchs_message) {
  int64_t sizes[2] = {2, 3};
  c10c_tensor *m = empty_on(meta, 2, sizes, C10C_DTYPE_FLOAT32);
  c10c_tensor *c = empty_on(cpu, 2, sizes, C10C_DTYPE_FLOAT32);
  ASSERT_STATUS(C10C_STATUS_NOT_IMPLEMENTED, c10c_tensor_copy_(c, m));
  ASSERT_ERROR_MESSAGE("Cannot copy out of meta tensor; no data!");
  ASSERT_EQ(version(c), 0);
  /* before the shape check, as torch */
  int64_t other[1] = {5};
  c10c_tensor *wrong = empty_on(cpu, 1, other, C10C_DTYPE_FLOAT32);
  ASSERT_STATUS(C10C_STATUS_NOT_IMPLEMENTED, c10c_tensor_copy_(wrong, m));
  ASSERT_ERROR_MESSAGE("Cannot copy out of meta tensor; no data!");
  DLManagedTensorVersioned *dl = NULL;
  ASSERT_STATUS(C10C_STATUS_UNSUPPORTED, c10c_tensor_to_dlpack_versioned(&dl, m));
  ASSERT_ERROR_MESSAGE("Cannot pack tensors on meta");
  ASSERT_TRUE(dl == NULL);
  /* the device is what DLPack refuses, even when the storage shrank under the tensor */
  ASSERT_OK(c10c_storage_resize(c10c_tensor_storage(m), 0));
  ASSERT_STATUS(C10C_STATUS_UNSUPPORTED, c10c_tensor_to_dlpack_versioned(&dl, m));
  ASSERT_ERROR_MESSAGE("Cannot pack tensors on meta");
  c10c_tensor_release(wrong);
  c10c_tensor_release(m);
  c10c_tensor_release(c);
}

TEST(writes_into_a_meta_tensor_check_shapes_and_write_nothing) {
  int64_t sizes[2] = {2, 3}, row[1] = {3}, bad[1] = {4};
  c10c_tensor *m = empty_on(meta, 2, sizes, C10C_DTYPE_FLOAT32);
  c10c_tensor *c = empty_on(cpu, 1, row, C10C_DTYPE_COMPLEX64);
  c10c_tensor *w = empty_on(cpu, 1, bad, C10C_DTYPE_FLOAT32);
  /* any dtype, broadcast: torch's meta copy_ checks only the shapes; the write counts */
  ASSERT_OK(c10c_tensor_copy_(m, c));
  ASSERT_EQ(version(m), 1);
  ASSERT_OK(c10c_tensor_copy_(m, m));
  ASSERT_EQ(version(m), 2);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_copy_(m, w));
  ASSERT_ERROR_MESSAGE(
      "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1");
  ASSERT_EQ(version(m), 2);
  /* no overlap checks: there are no bytes (torch copies into an expanded meta tensor) */
  c10c_tensor *e = NULL;
  int64_t expanded[3] = {4, 2, 3};
  ASSERT_OK(c10c_tensor_expand(&e, m, expanded, 3));
  ASSERT_OK(c10c_tensor_copy_(e, m));
  float one = 1.0f;
  ASSERT_OK(c10c_tensor_fill_(e, &one));
  ASSERT_OK(c10c_tensor_zero_(m));
  ASSERT_EQ(version(m), 5);
  /* nor storage checks: a meta storage that shrank has no bytes to protect either */
  ASSERT_OK(c10c_storage_resize(c10c_tensor_storage(m), 0));
  ASSERT_OK(c10c_tensor_fill_(m, &one));
  ASSERT_OK(c10c_tensor_copy_(m, c));
  c10c_tensor *clone = NULL;
  ASSERT_OK(c10c_tensor_clone(&clone, m, C10C_MEMORY_FORMAT_PRESERVE));
  ASSERT_EQ(c10c_tensor_device(clone).type, C10C_DEVICE_TYPE_META);
  ASSERT_EQ(c10c_storage_nbytes(c10c_tensor_storage(clone)), 24);
  c10c_tensor_release(clone);
  /* the in-place refusals hold (torch refuses an inference meta tensor outside the mode) */
  ASSERT_OK(c10c_storage_set_read_only(c10c_tensor_storage(m)));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_fill_(m, &one));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_tensor_copy_(m, c));
  c10c_tensor_release(e);
  c10c_tensor_release(w);
  c10c_tensor_release(c);
  c10c_tensor_release(m);
}

TEST(meta_factories_clone_and_contiguous_make_meta_tensors) {
  int64_t sizes[2] = {3, 4};
  float value = 2.0f;
  c10c_tensor *f = NULL, *fl = NULL, *clone = NULL, *t = NULL, *contiguous = NULL;
  ASSERT_OK(c10c_tensor_full(&f, sizes, 2, C10C_DTYPE_FLOAT32, meta, C10C_MEMORY_FORMAT_CONTIGUOUS,
                             &value));
  ASSERT_EQ(c10c_tensor_device(f).type, C10C_DEVICE_TYPE_META);
  ASSERT_EQ(version(f), 0);
  c10c_tensor *c = empty_on(cpu, 2, sizes, C10C_DTYPE_FLOAT32);
  ASSERT_OK(
      c10c_tensor_full_like(&fl, c, C10C_DTYPE_INT64, meta, C10C_MEMORY_FORMAT_PRESERVE, NULL));
  ASSERT_EQ(c10c_tensor_device(fl).type, C10C_DEVICE_TYPE_META);
  ASSERT_EQ(c10c_tensor_dtype(fl), C10C_DTYPE_INT64);
  ASSERT_OK(c10c_tensor_transpose(&t, f, 0, 1));
  ASSERT_OK(c10c_tensor_clone(&clone, t, C10C_MEMORY_FORMAT_PRESERVE));
  ASSERT_EQ(c10c_tensor_strides(clone)[0], 1); /* preserve keeps the transposed layout */
  ASSERT_OK(c10c_tensor_contiguous(&contiguous, t, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_EQ(c10c_tensor_device(contiguous).type, C10C_DEVICE_TYPE_META);
  ASSERT_EQ(c10c_tensor_strides(contiguous)[0], 3);
  ASSERT_TRUE(c10c_tensor_data(contiguous) == NULL);
  c10c_tensor_release(contiguous);
  c10c_tensor_release(clone);
  c10c_tensor_release(t);
  c10c_tensor_release(fl);
  c10c_tensor_release(c);
  c10c_tensor_release(f);
}

TEST(a_tensor_over_a_meta_storage_is_a_meta_tensor) {
  c10c_storage *s = NULL;
  ASSERT_OK(c10c_storage_new(&s, 24, NULL, C10C_DEVICE_TYPE_META, true));
  int64_t sizes[2] = {2, 3}, strides[2] = {3, 1};
  c10c_tensor *t = NULL;
  ASSERT_OK(c10c_tensor_new_from_storage(&t, s, sizes, strides, 2, 0, C10C_DTYPE_FLOAT32));
  ASSERT_EQ(c10c_tensor_device(t).type, C10C_DEVICE_TYPE_META);
  ASSERT_TRUE(c10c_tensor_data(t) == NULL);
  /* past the storage's size too: it has no bytes (torch's set_ over a meta storage) */
  c10c_tensor *far = NULL;
  ASSERT_OK(c10c_tensor_new_from_storage(&far, s, sizes, strides, 2, 1, C10C_DTYPE_FLOAT32));
  ASSERT_EQ(c10c_tensor_storage_offset(far), 1);
  c10c_tensor_release(far);
  /* its negative offsets and strides are refused as anywhere */
  int64_t negative[2] = {3, -1};
  ASSERT_STATUS(C10C_STATUS_OVERFLOW,
                c10c_tensor_new_from_storage(&far, s, sizes, negative, 2, 0, C10C_DTYPE_FLOAT32));
  ASSERT_STATUS(C10C_STATUS_ERROR,
                c10c_tensor_new_from_storage(&far, s, sizes, strides, 2, -1, C10C_DTYPE_FLOAT32));
  c10c_tensor_release(t);
  c10c_storage_release(s);
}

RUN_TESTS(T(the_registry_serves_the_builtin_meta_allocator),
          T(a_meta_storage_of_two_to_the_40_bytes_costs_nothing),
          T(a_meta_tensor_has_geometry_and_no_data), T(every_view_of_a_meta_tensor_works),
          T(reading_a_meta_tensor_is_refused_with_torchs_message),
          T(writes_into_a_meta_tensor_check_shapes_and_write_nothing),
          T(meta_factories_clone_and_contiguous_make_meta_tensors),
          T(a_tensor_over_a_meta_storage_is_a_meta_tensor))
