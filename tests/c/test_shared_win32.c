/* Shared storages on Windows, where test_shared.c (memfd, POSIX shared memory, descriptors over
 * Unix sockets, fork) cannot build: sharing by descriptor or by name is refused with a message
 * that says it is not available on Windows, and mapped files (torch.from_file) work with the
 * same messages as on Linux. */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "os_compat.h"

#define ASSERT_MESSAGE_HAS(part)                                               \
  do {                                                                         \
    if (strstr(c10c_last_error_message(), part) == NULL)                       \
      FAIL_AT("message \"%s\" lacks \"%s\"", c10c_last_error_message(), part); \
  } while (0)

static c10c_storage *filled(int64_t n, unsigned char value) {
  c10c_storage *s = NULL;
  if (c10c_storage_new(&s, n, NULL, C10C_DEVICE_TYPE_CPU, true) != C10C_STATUS_OK) return NULL;
  memset(c10c_storage_data(s), value, (size_t)n);
  return s;
}

TEST(sharing_by_descriptor_or_name_says_it_is_not_available_on_windows) {
  c10c_storage *s = filled(16, 7);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_share_fd(s));
  ASSERT_MESSAGE_HAS("unable to create a shared memory file: not available on Windows");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_share_filename(s));
  ASSERT_MESSAGE_HAS("unable to create shared memory object <");
  ASSERT_MESSAGE_HAS("not available on Windows");
  ASSERT_FALSE(c10c_storage_is_shared(s));
  ASSERT_EQ(((unsigned char *)c10c_storage_data(s))[15], 7); /* unchanged */
  c10c_storage_release(s);
  c10c_storage *t = NULL;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_using_fd(&t, 8));
  ASSERT_MESSAGE_HAS("not available on Windows");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_filename(&t, "/c10c_x", 8));
  ASSERT_MESSAGE_HAS("not available on Windows");
  ASSERT_TRUE(t == NULL);
}

TEST(from_file_maps_shared_or_private_with_torchs_messages) {
  char file[MAX_PATH];
  snprintf(file, sizeof file, "%s\\c10c_from_file_%d", compat_tmpdir(), (int)_getpid());
  FILE *f = fopen(file, "wb");
  ASSERT_TRUE(f != NULL);
  if (f == NULL) return;
  fwrite("abc", 1, 3, f);
  fclose(f);
  c10c_storage *s = NULL;
  char msg[512];
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_from_file(&s, file, false, 10));
  snprintf(msg, sizeof msg, "file <%s> size <3> is smaller than the required mapping size <10>",
           file);
  ASSERT_ERROR_MESSAGE(msg);
  ASSERT_STATUS(C10C_STATUS_ERROR,
                c10c_storage_new_from_file(&s, "C:\\nonexistent\\dir\\f", false, 2));
  ASSERT_ERROR_MESSAGE(
      "unable to open file <C:\\nonexistent\\dir\\f> in read-only mode: No such file "
      "or directory (2)");
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_storage_new_from_file(&s, NULL, false, 2));

  /* private: writes stay here */
  ASSERT_OK(c10c_storage_new_from_file(&s, file, false, 2));
  unsigned char *p = c10c_storage_data(s);
  ASSERT_EQ(p[0], 'a');
  p[0] = 'z';
  c10c_storage_release(s);

  /* shared: grows the file (keeping its bytes) and writes reach it */
  ASSERT_OK(c10c_storage_new_from_file(&s, file, true, 6));
  const char *fname = NULL;
  ASSERT_OK(c10c_storage_filename(&fname, s));
  ASSERT_STR_EQ(fname, file);
  ASSERT_TRUE(c10c_storage_is_shared(s));
  p = c10c_storage_data(s);
  ASSERT_TRUE(memcmp(p, "abc\0\0\0", 6) == 0);
  p[5] = 'q';
  c10c_storage_release(s);
  char back[8] = {0};
  f = fopen(file, "rb");
  ASSERT_TRUE(f != NULL);
  if (f != NULL) {
    ASSERT_EQ(fread(back, 1, 8, f), 6);
    fclose(f);
  }
  ASSERT_TRUE(memcmp(back, "abc\0\0q", 6) == 0);
  ASSERT_EQ(_unlink(file), 0);
}

RUN_TESTS(T(sharing_by_descriptor_or_name_says_it_is_not_available_on_windows),
          T(from_file_maps_shared_or_private_with_torchs_messages))
