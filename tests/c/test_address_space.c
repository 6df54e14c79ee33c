/* Sizes beyond the process's address space: on a 32-bit platform (i686, armhf) a storage of
 * 2 GiB or more cannot exist, and a 64-bit byte count must never be truncated into size_t (a
 * 5 GiB request silently becoming 1 GiB). Each such request is a clear error: ATen's
 * "Storage size calculation overflowed" past storage_max() (4 GiB there, as in torch), out of
 * memory past PTRDIFF_MAX, and no file grown or memory reserved first. On a 64-bit platform the
 * same requests are checked where they are cheap (meta tensors, which have no bytes).
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define GIB ((int64_t)1 << 30)

#define META ((c10c_device){C10C_DEVICE_TYPE_META, -1})
#define CPU  ((c10c_device){C10C_DEVICE_TYPE_CPU, -1})

TEST(a_tensor_past_storage_max_overflows_like_aten) {
  /* 5 GiB of float32: more than a 32-bit size_t holds (torch's storage_max() there) */
  int64_t sizes[] = {5, GIB / 4}, strides[] = {GIB / 4, 1};
  c10c_tensor *t = NULL;
#if SIZE_MAX < UINT64_MAX
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_empty(&t, sizes, 2, C10C_DTYPE_FLOAT32, META, 0));
  ASSERT_ERROR_MESSAGE("Storage size calculation overflowed with sizes=[5, 268435456]");
  ASSERT_TRUE(t == NULL);
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_tensor_empty(&t, sizes, 2, C10C_DTYPE_FLOAT32, CPU, 0));
  ASSERT_ERROR_MESSAGE("Storage size calculation overflowed with sizes=[5, 268435456]");
  ASSERT_STATUS(C10C_STATUS_OVERFLOW,
                c10c_tensor_empty_strided(&t, sizes, strides, 2, C10C_DTYPE_FLOAT32, META));
  ASSERT_ERROR_MESSAGE(
      "Storage size calculation overflowed with sizes=[5, 268435456] and strides=[268435456, 1]");
  ASSERT_TRUE(t == NULL);
#else
  /* a meta tensor has a size and no bytes: 5 GiB is fine where size_t holds it */
  ASSERT_OK(c10c_tensor_empty(&t, sizes, 2, C10C_DTYPE_FLOAT32, META, 0));
  ASSERT_EQ(c10c_tensor_numel(t), 5 * (GIB / 4));
  c10c_tensor_release(t);
  ASSERT_OK(c10c_tensor_empty_strided(&t, sizes, strides, 2, C10C_DTYPE_FLOAT32, META));
  c10c_tensor_release(t);
#endif
}

TEST(a_storage_past_one_allocation_is_out_of_memory_never_truncated) {
  c10c_storage *s = NULL;
#if PTRDIFF_MAX < INT64_MAX
  /* 5 GiB (truncated: 1 GiB), 4 GiB (truncated: 0) and 3 GiB (past PTRDIFF_MAX) */
  static const int64_t sizes[] = {5 * GIB, 4 * GIB, 3 * GIB};
  char want[200];
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    snprintf(want, sizeof want,
             "can't allocate memory: you tried to allocate %lld bytes, more than one allocation "
             "can span in this 32-bit process (at most 2147483647 bytes)",
             (long long)sizes[i]);
    ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY,
                  c10c_storage_new(&s, sizes[i], NULL, C10C_DEVICE_TYPE_CPU, true));
    ASSERT_ERROR_MESSAGE(want);
    ASSERT_TRUE(s == NULL);
    ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY,
                  c10c_storage_new(&s, sizes[i], NULL, C10C_DEVICE_TYPE_META, true));
    ASSERT_ERROR_MESSAGE(want);
    /* resizing to it leaves the storage as it was */
    ASSERT_OK(c10c_storage_new(&s, 16, NULL, C10C_DEVICE_TYPE_CPU, true));
    ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c_storage_resize(s, sizes[i]));
    ASSERT_ERROR_MESSAGE(want);
    ASSERT_EQ(c10c_storage_nbytes(s), 16);
    c10c_storage_release(s);
    s = NULL;
    /* a 3 GiB float32 tensor passes storage_max() and fails here */
    int64_t n = sizes[i] / 4;
    c10c_tensor *t = NULL;
    c10c_status st = c10c_tensor_empty(&t, &n, 1, C10C_DTYPE_FLOAT32, CPU, 0);
    ASSERT_TRUE(st == (sizes[i] < 4 * GIB ? C10C_STATUS_OUT_OF_MEMORY : C10C_STATUS_OVERFLOW));
    ASSERT_TRUE(t == NULL);
  }
  /* external memory of that size cannot exist here either */
  static char byte;
  ASSERT_STATUS(C10C_STATUS_INVALID_ARGUMENT,
                c10c_storage_new_external(&s, &byte, 3 * GIB, CPU, NULL, NULL));
  ASSERT_ERROR_MESSAGE(
      "external memory of 3221225472 bytes cannot exist in this 32-bit process (at most "
      "2147483647 bytes)");
  ASSERT_TRUE(s == NULL);
#else
  /* the same family on a 64-bit platform: more than the caching allocator serves */
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY,
                c10c_storage_new(&s, (int64_t)1 << 62, NULL, C10C_DEVICE_TYPE_CPU, true));
  ASSERT_TRUE(s == NULL);
#endif
}

TEST(shared_memory_past_one_mapping_fails_before_reserving_anything) {
#if PTRDIFF_MAX < INT64_MAX
  c10c_storage *s = NULL;
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c_storage_new_using_fd(&s, 5 * GIB));
  ASSERT_ERROR_MESSAGE(
      "unable to mmap 5368709120 bytes from a shared memory file: Cannot allocate memory (12)");
  ASSERT_TRUE(s == NULL);
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c_storage_new_using_filename(&s, 3 * GIB));
  ASSERT_ERROR_MESSAGE(
      "unable to mmap 3221225536 bytes from a shared memory object: Cannot allocate memory (12)");
  ASSERT_TRUE(s == NULL);
  /* a file mapped shared is not grown to a size no mapping can take */
  char file[64];
  snprintf(file, sizeof file, "/tmp/c10c_address_space_%d", (int)getpid());
  int fd = open(file, O_CREAT | O_TRUNC | O_WRONLY, 0600);
  ASSERT_TRUE(fd >= 0);
  if (fd >= 0) close(fd);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_from_file(&s, file, true, 5 * GIB));
  char want[200];
  snprintf(want, sizeof want,
           "unable to mmap 5368709120 bytes from file <%s>: Cannot allocate memory (12)", file);
  ASSERT_ERROR_MESSAGE(want);
  struct stat st;
  ASSERT_TRUE(stat(file, &st) == 0 && st.st_size == 0);
  unlink(file);
  /* a descriptor whose file is larger than one mapping (another process's 5 GiB storage) */
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c_storage_new_shared_fd(&s, 0, 5 * GIB));
  ASSERT_ERROR_MESSAGE(
      "unable to mmap 5368709120 bytes from a shared memory file descriptor: Cannot allocate "
      "memory (12)");
#else
  printf("  (64-bit: no size of a storage is beyond one mapping)\n");
#endif
}

RUN_TESTS(T(a_tensor_past_storage_max_overflows_like_aten),
          T(a_storage_past_one_allocation_is_out_of_memory_never_truncated),
          T(shared_memory_past_one_mapping_fails_before_reserving_anything))
