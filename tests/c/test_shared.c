/* Storages shared with other processes: by descriptor (memfd, passed by inheritance and over a
 * Unix socket), by name (torch's refcounted layout), mapped files; forged, stale, foreign and
 * short handles; reservation failures; descriptors spared at a low RLIMIT_NOFILE. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static const c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};

static bool message_has(const char *part) {
  return strstr(c10c_last_error_message(), part) != NULL;
}

#define ASSERT_MESSAGE_HAS(part)                                               \
  do {                                                                         \
    if (!message_has(part))                                                    \
      FAIL_AT("message \"%s\" lacks \"%s\"", c10c_last_error_message(), part); \
  } while (0)

static bool shm_exists(const char *name) {
  char path[320];
  snprintf(path, sizeof path, "/dev/shm%s", name);
  return access(path, F_OK) == 0;
}

/* Runs fn in a forked child; true when it exited with 0. */
static bool in_child(int (*fn)(void *), void *arg) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) _exit(fn(arg));
  int status = 0;
  bool ok =
      pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!ok) fprintf(stderr, "  child: wait status 0x%x\n", (unsigned)status);
  return ok;
}

static c10c_storage *filled(int64_t n, unsigned char value) {
  c10c_storage *s = NULL;
  if (c10c_storage_new(&s, n, NULL, C10C_DEVICE_TYPE_CPU, true) != C10C_STATUS_OK) return NULL;
  memset(c10c_storage_data(s), value, (size_t)n);
  return s;
}

/* ---- by descriptor ---- */

static int send_fd(int sock, int fd) {
  char byte = 'x';
  struct iovec iov = {&byte, 1};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  memset(&u, 0, sizeof u);
  struct msghdr msg = {0};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = u.buf;
  msg.msg_controllen = sizeof u.buf;
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof fd);
  return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock) {
  char byte;
  struct iovec iov = {&byte, 1};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  struct msghdr msg = {0};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = u.buf;
  msg.msg_controllen = sizeof u.buf;
  if (recvmsg(sock, &msg, 0) != 1) return -1;
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  if (c == NULL || c->cmsg_type != SCM_RIGHTS) return -1;
  int fd;
  memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return fd;
}

static int child_socket;
/* Receives a descriptor over the socket, maps it and writes 42 at byte 1. */
static int child_receives_fd(void *arg) {
  (void)arg;
  int fd = recv_fd(child_socket);
  if (fd < 0) return 1;
  c10c_storage *r = NULL;
  if (c10c_storage_new_shared_fd(&r, fd, 4096) != C10C_STATUS_OK) return 2;
  close(fd);
  unsigned char *p = c10c_storage_data(r);
  if (p[0] != 7) return 3;
  p[1] = 42;
  c10c_storage_release(r);
  return 0;
}

static int inherited_fd;
static int child_inherits_fd(void *arg) {
  (void)arg;
  c10c_storage *r = NULL;
  if (c10c_storage_new_shared_fd(&r, inherited_fd, 4096) != C10C_STATUS_OK) return 2;
  ((unsigned char *)c10c_storage_data(r))[2] = 43;
  c10c_storage_release(r);
  return 0;
}

TEST(share_fd_moves_the_bytes_into_a_memfd_other_processes_map) {
  c10c_storage *s = filled(4096, 7);
  ASSERT_FALSE(c10c_storage_is_shared(s));
  ASSERT_OK(c10c_storage_share_fd(s));
  ASSERT_TRUE(c10c_storage_is_shared(s));
  ASSERT_FALSE(c10c_storage_resizable(s));
  int fd;
  int64_t n;
  ASSERT_OK(c10c_storage_shared_fd(&fd, &n, s));
  ASSERT_EQ(n, 4096);
  ASSERT_OK(c10c_storage_share_fd(s)); /* idempotent: the same descriptor */
  int fd2;
  ASSERT_OK(c10c_storage_shared_fd(&fd2, &n, s));
  ASSERT_EQ(fd2, fd);
  char link[64], target[256] = {0};
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ASSERT_TRUE(readlink(link, target, sizeof target - 1) > 0);
  ASSERT_TRUE(strncmp(target, "/memfd:", 7) == 0);
  ASSERT_TRUE(ftruncate(fd, 100) != 0 && errno == EPERM); /* sealed against shrinking */

  int sv[2];
  ASSERT_TRUE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  child_socket = sv[1];
  ASSERT_EQ(send_fd(sv[0], fd), 0);
  ASSERT_TRUE(in_child(child_receives_fd, NULL));
  close(sv[0]);
  close(sv[1]);
  inherited_fd = fd;
  ASSERT_TRUE(in_child(child_inherits_fd, NULL));
  unsigned char *p = c10c_storage_data(s);
  ASSERT_EQ(p[1], 42);
  ASSERT_EQ(p[2], 43);
  ASSERT_EQ(p[3], 7);

  /* the 1.0 name means the same now */
  c10c_storage *t = filled(16, 1);
  ASSERT_OK(c10c_storage_share_memory(t));
  ASSERT_OK(c10c_storage_shared_fd(&fd, &n, t));
  ASSERT_EQ(n, 16);
  c10c_storage_release(t);
  c10c_storage_release(s);

  ASSERT_OK(c10c_storage_new_using_fd(&s, 100));
  ASSERT_TRUE(c10c_storage_is_shared(s));
  ASSERT_EQ(((unsigned char *)c10c_storage_data(s))[99], 0);
  ASSERT_OK(c10c_storage_shared_fd(&fd, &n, s));
  c10c_storage *r;
  ASSERT_OK(c10c_storage_new_shared_fd(&r, fd, 0)); /* 0 bytes of it */
  ASSERT_EQ(c10c_storage_nbytes(r), 0);
  c10c_storage_release(r);
  c10c_storage_release(s);
  ASSERT_OK(c10c_storage_new_using_fd(&s, 0));
  ASSERT_OK(c10c_storage_shared_fd(&fd, &n, s));
  ASSERT_EQ(n, 0);
  c10c_storage_release(s);
}

TEST(new_shared_fd_refuses_what_it_cannot_map_in_bounds) {
  c10c_storage *s, *r = NULL;
  ASSERT_OK(c10c_storage_new_using_fd(&s, 64));
  int fd;
  int64_t n;
  ASSERT_OK(c10c_storage_shared_fd(&fd, &n, s));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_fd(&r, fd, 100));
  ASSERT_MESSAGE_HAS("storage size 100 is larger than the mapping");
  ASSERT_MESSAGE_HAS("(64 bytes)");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_fd(&r, fd, -1));
  ASSERT_MESSAGE_HAS("negative size");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_fd(&r, -1, 8));
  ASSERT_MESSAGE_HAS("Bad file descriptor");
  int p[2];
  ASSERT_TRUE(pipe(p) == 0);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_fd(&r, p[0], 8));
  ASSERT_MESSAGE_HAS("is not a shared memory file (not a regular file)");
  close(p[0]);
  close(p[1]);
  ASSERT_TRUE(r == NULL);
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_storage_new_shared_fd(NULL, fd, 8));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_storage_share_fd(NULL));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_storage_shared_fd(&fd, &n, NULL));
  c10c_storage_release(s);
  s = filled(8, 0);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_shared_fd(&fd, &n, s));
  ASSERT_ERROR_MESSAGE("storage is not shared by file descriptor; call share_fd first");
  c10c_storage_release(s);
}

#if defined(__linux__) /* memfd_create and file seals */
/* A memory file of 4096 bytes of 7s; sealed against shrinking or not, sealable or not. */
static int memfd_of(bool sealable, bool sealed) {
  int fd = memfd_create("test", MFD_CLOEXEC | (sealable ? MFD_ALLOW_SEALING : 0u));
  if (fd < 0 || ftruncate(fd, 4096) != 0) return -1;
  unsigned char bytes[4096];
  memset(bytes, 7, sizeof bytes);
  if (pwrite(fd, bytes, sizeof bytes, 0) != (ssize_t)sizeof bytes) return -1;
  if (sealed && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0) return -1;
  return fd;
}

/* What a hostile sender does: maps nothing itself, and shrinks the file after the receiver
 * mapped it. The receiver (this child) must refuse the file, or it dies by SIGBUS at the next
 * touch (wait status 0x7: it did before the fix). */
static int unsealed_fd;
static int child_receives_unsealed_then_it_shrinks(void *arg) {
  (void)arg;
  c10c_storage *r = NULL;
  c10c_status st = c10c_storage_new_shared_fd(&r, unsealed_fd, 4096);
  if (st == C10C_STATUS_ERROR && message_has("is not sealed against shrinking")) return 0;
  if (st != C10C_STATUS_OK) return 2;
  if (ftruncate(unsealed_fd, 0) != 0) return 3;
  volatile unsigned char *p = c10c_storage_data(r);
  return p[100] == 7 ? 4 : 5; /* SIGBUS here */
}

TEST(a_received_memory_file_must_be_sealed_against_shrinking) {
  c10c_storage *r = NULL;
  int unsealed = memfd_of(true, false), unsealable = memfd_of(false, false);
  int sealed = memfd_of(true, true);
  ASSERT_TRUE(unsealed >= 0 && unsealable >= 0 && sealed >= 0);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_fd(&r, unsealed, 4096));
  ASSERT_MESSAGE_HAS("is not sealed against shrinking (F_SEAL_SHRINK)");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_fd(&r, unsealable, 16));
  ASSERT_MESSAGE_HAS("is not sealed against shrinking");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_fd(&r, unsealed, 0));
  ASSERT_MESSAGE_HAS("is not sealed against shrinking");
  /* torch's _share_fd_cpu_ file: a POSIX shm object, unlinked, which takes no seals */
  char name[64];
  snprintf(name, sizeof name, "/c10c_test_unsealed_%d", (int)getpid());
  int object = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
  shm_unlink(name);
  ASSERT_TRUE(object >= 0 && ftruncate(object, 64) == 0);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_fd(&r, object, 64));
  ASSERT_MESSAGE_HAS("torch's _share_fd_cpu_ does not");
  close(object);
  ASSERT_TRUE(r == NULL);
  unsealed_fd = unsealed;
  ASSERT_TRUE(in_child(child_receives_unsealed_then_it_shrinks, NULL));
  /* sealed: mapped, and the sender's shrink is refused by the kernel */
  ASSERT_OK(c10c_storage_new_shared_fd(&r, sealed, 4096));
  ASSERT_EQ(((unsigned char *)c10c_storage_data(r))[4095], 7);
  ASSERT_TRUE(ftruncate(sealed, 0) != 0 && errno == EPERM);
  c10c_storage_release(r);
  close(sealed);
  close(unsealable);
  close(unsealed);
}
#else
TEST(a_received_memory_file_must_be_sealed_against_shrinking) {
  printf("  (no memory files or seals here: every received descriptor is refused)\n");
}
#endif

static int many_received(void *arg) {
  (void)arg;
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 10;
  /* 1024, or less where valgrind keeps the top descriptors for itself */
  rl.rlim_cur = rl.rlim_max < 1024 ? rl.rlim_max : 1024;
  if (setrlimit(RLIMIT_NOFILE, &rl) != 0) return 10;
  char limit_text[64];
  snprintf(limit_text, sizeof limit_text, "RLIMIT_NOFILE %d", (int)rl.rlim_cur);
  c10c_storage *src;
  if (c10c_storage_new_using_fd(&src, 4096) != C10C_STATUS_OK) return 11;
  int fd;
  int64_t n;
  if (c10c_storage_shared_fd(&fd, &n, src) != C10C_STATUS_OK) return 12;
  enum { N = 10000 };
  static c10c_storage *got[N];
  int with_fd = 0;
  for (int i = 0; i < N; i++) {
    if (c10c_storage_new_shared_fd(&got[i], fd, 4096) != C10C_STATUS_OK) {
      fprintf(stderr, "receiving %d: %s\n", i, c10c_last_error_message());
      return 13;
    }
    int f;
    if (c10c_storage_shared_fd(&f, &n, got[i]) == C10C_STATUS_OK)
      with_fd++;
    else if (!message_has(limit_text))
      return 14;
  }
  ((unsigned char *)c10c_storage_data(got[N - 1]))[0] = 9;
  if (((unsigned char *)c10c_storage_data(src))[0] != 9) return 15;
  if (with_fd < 100 || with_fd > 512) return 16;
  int probe = dup(0); /* descriptors remain */
  if (probe < 0) return 17;
  close(probe);
  for (int i = 0; i < N; i++) c10c_storage_release(got[i]);
  c10c_storage_release(src);
  return 0;
}

TEST(ten_thousand_received_storages_fit_in_1024_descriptors) {
  ASSERT_TRUE(in_child(many_received, NULL));
}

/* ---- by name ---- */

static int32_t refcount_of(c10c_storage *s) {
  return atomic_load((_Atomic int32_t *)((char *)c10c_storage_data(s) - 64));
}

static const char *child_name;
static int child_opens_name(void *arg) {
  (void)arg;
  c10c_storage *r = NULL;
  if (c10c_storage_new_shared_filename(&r, child_name, 4096) != C10C_STATUS_OK) return 2;
  unsigned char *p = c10c_storage_data(r);
  if (p[0] != 5) return 3;
  p[1] = 44;
  c10c_storage_release(r);
  return 0;
}

TEST(share_filename_uses_torchs_refcounted_layout_and_the_last_user_unlinks) {
  c10c_storage *s = filled(4096, 5);
  ASSERT_OK(c10c_storage_share_filename(s));
  ASSERT_TRUE(c10c_storage_is_shared(s));
  const char *name;
  ASSERT_OK(c10c_storage_shared_name(&name, s));
  char expect[32];
  snprintf(expect, sizeof expect, "/c10c_%d_", (int)getpid());
  ASSERT_TRUE(strncmp(name, expect, strlen(expect)) == 0);
  ASSERT_TRUE(shm_exists(name));
  char path[320];
  snprintf(path, sizeof path, "/dev/shm%s", name);
  struct stat st;
  ASSERT_TRUE(stat(path, &st) == 0);
  ASSERT_EQ(st.st_size, 4096 + 64);
  ASSERT_EQ(st.st_mode & 0777, 0600);
  ASSERT_TRUE(st.st_blocks * 512 >= 4096 + 64); /* reserved */
  ASSERT_EQ(refcount_of(s), 1);
  ASSERT_OK(c10c_storage_share_filename(s)); /* stays */
  const char *again;
  ASSERT_OK(c10c_storage_shared_name(&again, s));
  ASSERT_TRUE(again == name);
  ASSERT_OK(c10c_storage_share_fd(s)); /* shared by name already: stays */
  int fd;
  int64_t n;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_shared_fd(&fd, &n, s));
  ASSERT_MESSAGE_HAS("is shared by name (/c10c_");

  child_name = name;
  ASSERT_TRUE(in_child(child_opens_name, NULL));
  ASSERT_EQ(((unsigned char *)c10c_storage_data(s))[1], 44);
  ASSERT_EQ(refcount_of(s), 1); /* the child's +1 went with it */
  c10c_storage *r1, *r2;
  ASSERT_OK(c10c_storage_new_shared_filename(&r1, name, 4096));
  ASSERT_EQ(refcount_of(s), 2);
  ASSERT_EQ(((unsigned char *)c10c_storage_data(r1))[0], 5);
  ASSERT_OK(c10c_storage_new_shared_filename(&r2, name, 100)); /* a prefix of it */
  ASSERT_EQ(refcount_of(s), 3);
  c10c_storage_release(r2);
  ASSERT_EQ(refcount_of(s), 2);
  char kept[64];
  snprintf(kept, sizeof kept, "%.60s", name);
  c10c_storage_release(s); /* the creator goes first: the opener keeps it */
  ASSERT_TRUE(shm_exists(kept));
  ASSERT_EQ(refcount_of(r1), 1);
  c10c_storage_release(r1);
  ASSERT_FALSE(shm_exists(kept));
}

TEST(a_named_storages_header_count_moves_by_refcount_add) {
  c10c_storage *s = filled(64, 1);
  int32_t before = -1;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_shared_refcount_add(&before, s, 1));
  ASSERT_MESSAGE_HAS("not shared by name");
  ASSERT_EQ(before, 0);
  ASSERT_OK(c10c_storage_share_filename(s));
  const char *name;
  ASSERT_OK(c10c_storage_shared_name(&name, s));
  ASSERT_OK(c10c_storage_shared_refcount_add(&before, s, 1)); /* a message in flight */
  ASSERT_EQ(before, 1);
  ASSERT_OK(c10c_storage_shared_refcount_add(&before, s, -1));
  ASSERT_EQ(before, 2);
  ASSERT_TRUE(shm_exists(name)); /* the count is the caller's business: nothing unlinked */
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_storage_shared_refcount_add(NULL, s, 1));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_storage_shared_refcount_add(&before, NULL, 1));
  c10c_storage_release(s);
}

TEST(the_last_release_unlinks_the_name) {
  c10c_storage *s, *r;
  ASSERT_OK(c10c_storage_new_using_filename(&s, 10));
  ASSERT_EQ(((unsigned char *)c10c_storage_data(s))[9], 0);
  const char *name;
  ASSERT_OK(c10c_storage_shared_name(&name, s));
  char kept[64];
  snprintf(kept, sizeof kept, "%.60s", name);
  ASSERT_OK(c10c_storage_new_shared_filename(&r, kept, 10));
  c10c_storage_release(s);
  ASSERT_TRUE(shm_exists(kept));
  c10c_storage_release(r);
  ASSERT_FALSE(shm_exists(kept));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_filename(&r, kept, 10));
  ASSERT_MESSAGE_HAS("in read-write mode: No such file or directory (2)");
  ASSERT_OK(c10c_storage_new_using_filename(&s, 0));
  ASSERT_EQ(c10c_storage_nbytes(s), 0);
  c10c_storage_release(s);
}

/* The header count of the named object name, mapped by hand as another process would. */
static _Atomic int32_t *map_count(const char *name) {
  int fd = shm_open(name, O_RDWR, 0);
  void *p = fd < 0 ? MAP_FAILED : mmap(NULL, 64, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (fd >= 0) close(fd);
  return p == MAP_FAILED ? NULL : p;
}

/* torch's header counts in a signed int32: an opener that meets INT32_MAX is refused (before,
 * seen + 1 overflowed: UBSan's "signed integer overflow" in the ASan build, and the count then
 * read INT32_MIN, so every later opener refused the live object as stale). */
TEST(a_named_storages_count_never_overflows_or_goes_below_0) {
  c10c_storage *s = NULL, *r = NULL;
  ASSERT_OK(c10c_storage_new_using_filename(&s, 8));
  const char *name;
  ASSERT_OK(c10c_storage_shared_name(&name, s));
  _Atomic int32_t *count = map_count(name);
  ASSERT_TRUE(count != NULL);
  if (count == NULL) return;
  atomic_store(count, INT32_MAX);
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_storage_new_shared_filename(&r, name, 8));
  ASSERT_MESSAGE_HAS("reference count is already 2147483647 (INT32_MAX)");
  ASSERT_TRUE(r == NULL);
  ASSERT_EQ(atomic_load(count), INT32_MAX); /* untouched */
  int32_t before = 0;
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_storage_shared_refcount_add(&before, s, 1));
  ASSERT_MESSAGE_HAS("cannot add 1 to the reference count 2147483647");
  ASSERT_EQ(atomic_load(count), INT32_MAX);
  atomic_store(count, 1); /* the users went: later openers are served */
  ASSERT_OK(c10c_storage_new_shared_filename(&r, name, 8));
  ASSERT_EQ(atomic_load(count), 2);
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_storage_shared_refcount_add(&before, s, INT32_MAX));
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_storage_shared_refcount_add(&before, s, -3));
  ASSERT_MESSAGE_HAS("cannot add -3 to the reference count 2: it would be -1");
  ASSERT_STATUS(C10C_STATUS_OVERFLOW, c10c_storage_shared_refcount_add(&before, s, INT32_MIN));
  ASSERT_EQ(atomic_load(count), 2);
  ASSERT_OK(c10c_storage_shared_refcount_add(&before, s, -2)); /* down to 0 is a count */
  ASSERT_EQ(before, 2);
  ASSERT_OK(c10c_storage_shared_refcount_add(&before, s, 1));
  ASSERT_EQ(before, 0);
  /* a release never takes the count below 0: a count some process dropped too far stays at 0,
   * and the name goes with the last user this process knows of */
  atomic_store(count, 0);
  char kept[64];
  snprintf(kept, sizeof kept, "%.60s", name);
  c10c_storage_release(r);
  ASSERT_EQ(atomic_load(count), 0);
  ASSERT_FALSE(shm_exists(kept));
  c10c_storage_release(s);
  ASSERT_EQ(atomic_load(count), 0);
  munmap((void *)(uintptr_t)count, 64);
}

/* A shm object made by hand: size bytes, refcount header set to count. */
static void make_object(const char *name, off_t size, int32_t count) {
  shm_unlink(name);
  int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0 || ftruncate(fd, size) != 0) {
    FAIL_AT("cannot make %s", name);
    return;
  }
  if (size >= 4 && pwrite(fd, &count, 4, 0) != 4) FAIL_AT("cannot write %s", name);
  close(fd);
}

TEST(forged_stale_foreign_and_short_names_are_refused) {
  c10c_storage *r = NULL;
  char name[64];
  snprintf(name, sizeof name, "/c10c_test_%d", (int)getpid());
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_filename(&r, name, 8));
  ASSERT_MESSAGE_HAS("unable to open shared memory object </c10c_test_");
  const char *bad[] = {"", "/", "noslash", "/a/b", "/../etc", "/a b", "/a\nb"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_filename(&r, bad[i], 8));
    ASSERT_MESSAGE_HAS("invalid shared memory name");
  }
  char longname[300];
  memset(longname, 'a', sizeof longname);
  longname[0] = '/';
  longname[299] = 0;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_filename(&r, longname, 8));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_storage_new_shared_filename(&r, NULL, 8));

  make_object(name, 64 + 8, 0); /* every user released it */
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_filename(&r, name, 8));
  ASSERT_MESSAGE_HAS("is stale: its reference count is 0");
  make_object(name, 64 + 8, -3);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_filename(&r, name, 8));
  ASSERT_MESSAGE_HAS("its reference count is -3");
  make_object(name, 64 + 8, 1);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_filename(&r, name, 9));
  ASSERT_MESSAGE_HAS("holds 72 bytes, fewer than the 73 a storage of 9 bytes needs");
  make_object(name, 10, 1);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_filename(&r, name, 0));
  ASSERT_MESSAGE_HAS("holds 10 bytes");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_filename(&r, name, -1));
  ASSERT_MESSAGE_HAS("negative size");
  if (geteuid() == 0) {
    make_object(name, 64 + 8, 1);
    char path[128];
    snprintf(path, sizeof path, "/dev/shm%s", name);
    ASSERT_TRUE(chown(path, 65534, 65534) == 0);
    ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_shared_filename(&r, name, 8));
    ASSERT_MESSAGE_HAS(
        "belongs to user 65534, not to this process's user 0: a handle from "
        "another user is refused");
  } else {
    printf("  (not root: the other user's object is not tested)\n");
  }
  make_object(name, 64 + 8, 1); /* torch's own names open too: a valid one */
  ASSERT_OK(c10c_storage_new_shared_filename(&r, name, 8));
  c10c_storage_release(r);
  ASSERT_TRUE(shm_exists(name)); /* count 2 -> 1: the maker still holds it */
  shm_unlink(name);
}

/* ---- the old bytes ---- */

static int64_t cpu_allocated(void) {
  c10c_memory_stats stats;
  stats.struct_size = sizeof stats;
  if (c10c_allocator_get_stats(&stats, c10c_cpu_caching_allocator()) != C10C_STATUS_OK) return -1;
  return stats.allocated_bytes[C10C_STAT_ALL].current;
}

static int deletes;
static void count_delete(void *ctx) {
  (void)ctx;
  deletes++;
}

TEST(old_bytes_are_freed_at_once_unless_their_address_was_handed_out) {
  c10c_storage *s;
  ASSERT_OK(c10c_storage_new(&s, 1 << 20, NULL, C10C_DEVICE_TYPE_CPU, true));
  int64_t with = cpu_allocated();
  ASSERT_OK(c10c_storage_share_fd(s)); /* nobody saw the address: freed */
  ASSERT_EQ(cpu_allocated(), with - (1 << 20));
  c10c_storage_release(s);

  ASSERT_OK(c10c_storage_new(&s, 1 << 20, NULL, C10C_DEVICE_TYPE_CPU, true));
  unsigned char *old = c10c_storage_data(s); /* handed out */
  memset(old, 4, 1 << 20);
  with = cpu_allocated();
  ASSERT_OK(c10c_storage_share_filename(s));
  ASSERT_EQ(cpu_allocated(), with); /* kept */
  ASSERT_EQ(old[(1 << 20) - 1], 4);
  ASSERT_TRUE(c10c_storage_data(s) != old);
  ASSERT_OK(c10c_storage_share_fd(s)); /* shared by name: stays */
  c10c_storage_release(s);
  ASSERT_EQ(cpu_allocated(), with - (1 << 20));

  /* exposed twice, moved twice (by descriptor, then by name): both old blocks are kept */
  ASSERT_OK(c10c_storage_new(&s, 1 << 20, NULL, C10C_DEVICE_TYPE_CPU, true));
  memset(c10c_storage_data(s), 5, 1 << 20);
  ASSERT_OK(c10c_storage_share_fd(s));
  unsigned char *in_memfd = c10c_storage_data(s);
  ASSERT_OK(c10c_storage_share_filename(s));
  ASSERT_EQ(in_memfd[0], 5); /* still mapped */
  ASSERT_EQ(((unsigned char *)c10c_storage_data(s))[(1 << 20) - 1], 5);
  c10c_storage_release(s); /* frees all three (ASan and valgrind watch) */

  /* the same through a tensor's data pointer */
  c10c_tensor *t;
  int64_t n = 1000;
  ASSERT_OK(c10c_tensor_empty(&t, &n, 1, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  with = cpu_allocated();
  ASSERT_OK(c10c_storage_share_fd(c10c_tensor_storage(t)));
  ASSERT_TRUE(cpu_allocated() < with);
  c10c_tensor_release(t);
  ASSERT_OK(c10c_tensor_empty(&t, &n, 1, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS));
  ASSERT_TRUE(c10c_tensor_data(t) != NULL);
  with = cpu_allocated();
  ASSERT_OK(c10c_storage_share_fd(c10c_tensor_storage(t)));
  ASSERT_EQ(cpu_allocated(), with);
  c10c_tensor_release(t);

  /* external memory: its deleter runs at the last release, as c10c_storage_new_external says */
  static char bytes[8];
  ASSERT_OK(c10c_storage_new_external(&s, bytes, 8, cpu, count_delete, bytes));
  ASSERT_OK(c10c_storage_share_fd(s));
  ASSERT_EQ(deletes, 0);
  c10c_storage_release(s);
  ASSERT_EQ(deletes, 1);
}

/* ---- devices ---- */

TEST(only_cpu_storages_are_shared_and_share_memory_leaves_cuda_alone) {
  c10c_storage *m;
  ASSERT_OK(c10c_storage_new(&m, 16, NULL, C10C_DEVICE_TYPE_META, true));
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_share_fd(m));
  ASSERT_ERROR_MESSAGE("_share_fd_: only available on CPU");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_share_filename(m));
  ASSERT_ERROR_MESSAGE("_share_filename_: only available on CPU");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_share_memory(m));
  ASSERT_ERROR_MESSAGE("_share_fd_: only available on CPU");
  ASSERT_FALSE(c10c_storage_is_shared(m));
  c10c_storage_release(m);
  /* CUDA memory from outside the library (no allocator): share_memory leaves it as it is */
  static char fake[16];
  c10c_storage *c;
  ASSERT_OK(
      c10c_storage_new_external(&c, fake, 16, (c10c_device){C10C_DEVICE_TYPE_CUDA, 0}, NULL, NULL));
  ASSERT_OK(c10c_storage_share_memory(c));
  ASSERT_TRUE(c10c_storage_data(c) == fake);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_share_fd(c));
  ASSERT_ERROR_MESSAGE("_share_fd_: only available on CPU");
  c10c_storage_release(c);
  /* external CPU memory is copied like any other */
  static char bytes[16] = "external";
  ASSERT_OK(c10c_storage_new_external(&c, bytes, 16, cpu, NULL, NULL));
  ASSERT_OK(c10c_storage_share_filename(c));
  ASSERT_TRUE(c10c_storage_data(c) != bytes && memcmp(c10c_storage_data(c), "external", 8) == 0);
  c10c_storage_release(c);
}

/* ---- reservation failures ---- */

TEST(a_failed_reservation_names_the_size_and_the_free_space_and_changes_nothing) {
  c10c_storage *s = filled(1000, 3);
  void *before = c10c_storage_data(s);
  bool seen = false;
  for (int k = 1; k < 20 && !seen; k++) {
    c10c_testing_fail_allocation(k);
    c10c_status st = c10c_storage_share_fd(s);
    c10c_testing_fail_allocation(0);
    if (st == C10C_STATUS_OK) break;
    ASSERT_EQ(st, C10C_STATUS_OUT_OF_MEMORY);
    ASSERT_FALSE(c10c_storage_is_shared(s));
    ASSERT_TRUE(c10c_storage_data(s) == before && c10c_storage_resizable(s));
    if (message_has("cannot reserve 1000 bytes of shared memory: No space left on device (28); "))
      seen = message_has(" bytes free on its file system");
  }
  ASSERT_TRUE(seen);
  c10c_storage_release(s);
}

#if defined(__linux__) /* mount namespaces and tmpfs */
static char small_dir[64];

static int shm_on_small_tmpfs(void *arg) {
  (void)arg;
  /* a private view of /dev/shm holding 1 MiB */
  if (unshare(CLONE_NEWNS) != 0 || mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0 ||
      mount("tmpfs", "/dev/shm", "tmpfs", 0, "size=1M") != 0)
    return 77;
  c10c_storage *s = filled(4 << 20, 6);
  void *before = c10c_storage_data(s);
  if (c10c_storage_share_filename(s) != C10C_STATUS_OUT_OF_MEMORY) return 1;
  if (!message_has("cannot reserve 4194368 bytes of shared memory: No space left on device (28); "
                   "1048576 bytes free on its file system"))
    return 2;
  if (c10c_storage_is_shared(s) || c10c_storage_data(s) != before) return 3;
  if (((unsigned char *)before)[4095] != 6) return 4;
  int left = 0;
  FILE *ls = popen("ls /dev/shm | wc -l", "r");
  if (ls == NULL || fscanf(ls, "%d", &left) != 1) return 5;
  pclose(ls);
  if (left != 0) return 6; /* no name left behind */
  c10c_storage_release(s);
  /* fresh memory is reserved whole at creation though its pages come at first touch: a second
   * storage that would not fit beside the untouched first is refused now, and the first can then
   * be written to its last byte (no SIGBUS) */
  c10c_storage *a = NULL, *b = NULL;
  if (c10c_storage_new_using_filename(&a, 600 << 10) != C10C_STATUS_OK) return 7;
  if (c10c_storage_new_using_filename(&b, 600 << 10) != C10C_STATUS_OUT_OF_MEMORY || b != NULL)
    return 8;
  if (!message_has("cannot reserve 614464 bytes of shared memory: No space left on device (28); "))
    return 9;
  memset(c10c_storage_data(a), 7, 600 << 10);
  c10c_storage_release(a);
  return 0;
}

TEST(a_full_tmpfs_refuses_at_share_time_never_by_sigbus) {
  if (geteuid() != 0) {
    printf("  (not root: no small tmpfs)\n");
    return;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) _exit(shm_on_small_tmpfs(NULL));
  int status = 0;
  ASSERT_TRUE(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) {
    printf("  (no mount namespace here: /dev/shm not replaced)\n");
  } else {
    ASSERT_EQ(WEXITSTATUS(status), 0);
  }
  /* a file on a small tmpfs: from_file(shared=true) reserves too */
  snprintf(small_dir, sizeof small_dir, "/tmp/c10c_small_%d", (int)getpid());
  if (mkdir(small_dir, 0700) != 0 || mount("tmpfs", small_dir, "tmpfs", 0, "size=1M") != 0) {
    printf("  (cannot mount a tmpfs)\n");
    rmdir(small_dir);
    return;
  }
  char file[128];
  snprintf(file, sizeof file, "%s/f", small_dir);
  c10c_storage *s = NULL;
  ASSERT_STATUS(C10C_STATUS_OUT_OF_MEMORY, c10c_storage_new_from_file(&s, file, true, 2 << 20));
  ASSERT_MESSAGE_HAS("cannot reserve 2097152 bytes of file space: No space left on device (28); ");
  ASSERT_MESSAGE_HAS("bytes free on its file system");
  ASSERT_TRUE(s == NULL);
  ASSERT_OK(c10c_storage_new_from_file(&s, file, true, 4096));
  c10c_storage_release(s);
  umount(small_dir);
  rmdir(small_dir);
}
#else
TEST(a_full_tmpfs_refuses_at_share_time_never_by_sigbus) { printf("  (no tmpfs mounts here)\n"); }
#endif

/* ---- files ---- */

TEST(from_file_maps_shared_or_private_with_torchs_messages) {
  char file[64];
  snprintf(file, sizeof file, "/tmp/c10c_from_file_%d", (int)getpid());
  FILE *f = fopen(file, "wb");
  fwrite("abc", 1, 3, f);
  fclose(f);
  c10c_storage *s = NULL;
  char msg[256];
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_from_file(&s, file, false, 10));
  snprintf(msg, sizeof msg, "file <%s> size <3> is smaller than the required mapping size <10>",
           file);
  ASSERT_ERROR_MESSAGE(msg);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_from_file(&s, file, true, -1));
  snprintf(msg, sizeof msg, "unable to mmap -1 bytes from file <%s>: Cannot allocate memory (12)",
           file);
  ASSERT_ERROR_MESSAGE(msg);
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_from_file(&s, "/nonexistent/dir/f", false, 2));
  ASSERT_ERROR_MESSAGE(
      "unable to open file </nonexistent/dir/f> in read-only mode: No such file "
      "or directory (2)");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_from_file(&s, "/nonexistent/dir/f", true, 2));
  ASSERT_ERROR_MESSAGE(
      "unable to open file </nonexistent/dir/f> in read-write mode: No such file "
      "or directory (2)");
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_new_from_file(&s, "/tmp", false, 2));
  ASSERT_STATUS(C10C_STATUS_NULL_POINTER, c10c_storage_new_from_file(&s, NULL, false, 2));
  ASSERT_OK(c10c_storage_new_from_file(&s, "/nonexistent/dir/f", false, 0)); /* opens nothing */
  ASSERT_EQ(c10c_storage_nbytes(s), 0);
  c10c_storage_release(s);

  /* private: writes stay here */
  ASSERT_OK(c10c_storage_new_from_file(&s, file, false, 2));
  const char *fname = "x";
  ASSERT_OK(c10c_storage_filename(&fname, s));
  ASSERT_TRUE(fname == NULL);
  ASSERT_FALSE(c10c_storage_is_shared(s));
  unsigned char *p = c10c_storage_data(s);
  ASSERT_EQ(p[0], 'a');
  p[0] = 'z';
  ASSERT_OK(c10c_storage_share_fd(s)); /* a private mapping is copied into a memfd */
  ASSERT_TRUE(c10c_storage_is_shared(s));
  ASSERT_EQ(((unsigned char *)c10c_storage_data(s))[0], 'z');
  c10c_storage_release(s);

  /* shared: grows the file (keeping its bytes) and writes reach it */
  ASSERT_OK(c10c_storage_new_from_file(&s, file, true, 6));
  ASSERT_OK(c10c_storage_filename(&fname, s));
  ASSERT_STR_EQ(fname, file);
  ASSERT_TRUE(c10c_storage_is_shared(s));
  ASSERT_FALSE(c10c_storage_resizable(s));
  p = c10c_storage_data(s);
  ASSERT_TRUE(memcmp(p, "abc\0\0\0", 6) == 0);
  p[5] = 'q';
  ASSERT_OK(c10c_storage_share_fd(s)); /* stays the file's */
  int fd;
  int64_t n;
  ASSERT_STATUS(C10C_STATUS_ERROR, c10c_storage_shared_fd(&fd, &n, s));
  ASSERT_MESSAGE_HAS("storage maps the file <");
  c10c_storage_release(s);
  char back[8] = {0};
  f = fopen(file, "rb");
  ASSERT_EQ(fread(back, 1, 8, f), 6);
  fclose(f);
  ASSERT_TRUE(memcmp(back, "abc\0\0q", 6) == 0);
  unlink(file);
  ASSERT_OK(c10c_storage_filename(&fname, s = filled(4, 0)));
  ASSERT_TRUE(fname == NULL);
  c10c_storage_release(s);
}

RUN_TESTS(T(share_fd_moves_the_bytes_into_a_memfd_other_processes_map),
          T(new_shared_fd_refuses_what_it_cannot_map_in_bounds),
          T(a_received_memory_file_must_be_sealed_against_shrinking),
          T(ten_thousand_received_storages_fit_in_1024_descriptors),
          T(share_filename_uses_torchs_refcounted_layout_and_the_last_user_unlinks),
          T(a_named_storages_header_count_moves_by_refcount_add),
          T(the_last_release_unlinks_the_name),
          T(a_named_storages_count_never_overflows_or_goes_below_0),
          T(forged_stale_foreign_and_short_names_are_refused),
          T(old_bytes_are_freed_at_once_unless_their_address_was_handed_out),
          T(only_cpu_storages_are_shared_and_share_memory_leaves_cuda_alone),
          T(a_failed_reservation_names_the_size_and_the_free_space_and_changes_nothing),
          T(a_full_tmpfs_refuses_at_share_time_never_by_sigbus),
          T(from_file_maps_shared_or_private_with_torchs_messages))
