/* Shared storages on Windows, where test_shared.c (memfd, POSIX shared memory, descriptors over
 * Unix sockets, fork) cannot build: sharing by name (named file mappings) between this process
 * and a child it starts (this program, argument "child NAME"), sharing by descriptor refused
 * with a message that says it is not available on Windows, and mapped files (torch.from_file)
 * with the same messages as on Linux. */
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

TEST(sharing_by_descriptor_says_it_is_not_available_on_windows) {
  c10c_storage *s = filled(16, 7);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_share_fd(s));
  ASSERT_MESSAGE_HAS("unable to create a shared memory file: not available on Windows");
  ASSERT_FALSE(c10c_storage_is_shared(s));
  ASSERT_EQ(((unsigned char *)c10c_storage_data(s))[15], 7); /* unchanged */
  c10c_storage_release(s);
  c10c_storage *t = NULL;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_using_fd(&t, 8));
  ASSERT_MESSAGE_HAS("not available on Windows");
  ASSERT_TRUE(t == NULL);
  /* a received descriptor must be sealed against shrinking, which no file here can be */
  char file[MAX_PATH];
  snprintf(file, sizeof file, "%s\\c10c_unsealed_%d", compat_tmpdir(), (int)_getpid());
  FILE *f = fopen(file, "wb+");
  ASSERT_TRUE(f != NULL);
  if (f == NULL) return;
  fwrite("abcdefgh", 1, 8, f);
  fflush(f);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_fd(&t, _fileno(f), 8));
  ASSERT_MESSAGE_HAS("is sealed against shrinking: not available on Windows");
  ASSERT_TRUE(t == NULL);
  fclose(f);
  remove(file);
}

static const char *program;

/* The child: opens the name, checks the bytes, writes 42 at byte 1 and releases. */
static int child(const char *name) {
  c10c_storage *s = NULL;
  if (c10c_storage_new_shared_filename(&s, name, 1000) != C10C_STATUS_OK) {
    fprintf(stderr, "child: %s\n", c10c_last_error_message());
    return 1;
  }
  unsigned char *p = c10c_storage_data(s);
  int bad = p[0] != 7 || p[999] != 7;
  p[1] = 42;
  c10c_storage_release(s);
  return bad;
}

TEST(share_filename_moves_the_bytes_where_a_child_process_writes_them) {
  c10c_storage *s = filled(1000, 7);
  ASSERT_OK(c10c_storage_share_filename(s));
  ASSERT_TRUE(c10c_storage_is_shared(s));
  const char *name = NULL;
  ASSERT_OK(c10c_storage_shared_name(&name, s));
  ASSERT_TRUE(name != NULL && name[0] == '/');
  if (name == NULL) return;
  char kept[256];
  snprintf(kept, sizeof kept, "%s", name);
  unsigned char *p = c10c_storage_data(s);
  ASSERT_EQ(p[999], 7);
  fflush(stdout);
  intptr_t rc = _spawnl(_P_WAIT, program, program, "child", kept, NULL);
  ASSERT_EQ(rc, 0);
  ASSERT_EQ(p[1], 42);
  /* a second user in this process, counted in the header */
  c10c_storage *t = NULL;
  ASSERT_OK(c10c_storage_new_shared_filename(&t, kept, 1000));
  ASSERT_EQ(((unsigned char *)c10c_storage_data(t))[1], 42);
  int32_t before = 0;
  ASSERT_OK(c10c_storage_shared_refcount_add(&before, t, 0));
  ASSERT_EQ(before, 2);
  c10c_storage *u = NULL;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_filename(&u, kept, 1 << 20));
  ASSERT_MESSAGE_HAS("fewer than the");
  c10c_storage_release(t);
  c10c_storage_release(s);
  /* the last user gone, so is the object: its name opens nothing */
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_filename(&t, kept, 1000));
  char msg[512];
  snprintf(msg, sizeof msg,
           "unable to open shared memory object <%s> in read-write mode: No such file or "
           "directory (2)",
           kept);
  ASSERT_ERROR_MESSAGE(msg);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_filename(&t, "c10c_x", 8));
  ASSERT_MESSAGE_HAS("invalid shared memory name <c10c_x>");
  ASSERT_TRUE(t == NULL);
}

TEST(new_using_filename_makes_fresh_named_memory) {
  c10c_storage *s = NULL;
  ASSERT_OK(c10c_storage_new_using_filename(&s, 1 << 20));
  ASSERT_TRUE(c10c_storage_is_shared(s));
  unsigned char *p = c10c_storage_data(s);
  p[0] = 1, p[(1 << 20) - 1] = 2;
  const char *name = NULL;
  ASSERT_OK(c10c_storage_shared_name(&name, s));
  c10c_storage *t = NULL;
  ASSERT_OK(c10c_storage_new_shared_filename(&t, name, 1 << 20));
  ASSERT_EQ(((unsigned char *)c10c_storage_data(t))[(1 << 20) - 1], 2);
  c10c_storage_release(t);
  c10c_storage_release(s);
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

static const test_case tests[] = {
    T(sharing_by_descriptor_says_it_is_not_available_on_windows),
    T(share_filename_moves_the_bytes_where_a_child_process_writes_them),
    T(new_using_filename_makes_fresh_named_memory),
    T(from_file_maps_shared_or_private_with_torchs_messages)};

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "child") == 0) return child(argv[2]);
  program = argv[0];
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
