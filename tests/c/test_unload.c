/* A host that unloads libc10c (dlclose) while its threads live on: every thread-local key the
 * library made (the last error message's buffer, the tensor shells' cache, the CPU caching
 * allocator's thread cache) must go with it, so that those threads exit afterwards without
 * calling the library's destructors in memory no longer mapped. The library is loaded by path
 * (argument 1); this program does not link it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "c10c/c10c.h"

typedef c10c_status (*from_string_fn)(c10c_device *, const char *);
typedef c10c_status (*empty_fn)(c10c_tensor **, const int64_t *, size_t, c10c_dtype, c10c_device,
                                c10c_memory_format);
typedef void (*release_fn)(c10c_tensor *);
typedef const char *(*message_fn)(void);

static void *library;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int stage; /* 1: the thread used the library; 2: the library is unloaded */
static int thread_result = 1;

static void *symbol(const char *name) {
  void *address = dlsym(library, name);
  if (address == NULL) fprintf(stderr, "no %s: %s\n", name, dlerror());
  return address;
}

static void wait_for(int value) {
  pthread_mutex_lock(&mutex);
  while (stage < value) pthread_cond_wait(&changed, &mutex);
  pthread_mutex_unlock(&mutex);
}

static void set_stage(int value) {
  pthread_mutex_lock(&mutex);
  stage = value;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&mutex);
}

/* A failure (the message buffer) and tensors made and freed (shells and CPU blocks cached for
 * this thread), then it waits until the library is gone and exits. */
static void *worker(void *unused) {
  (void)unused;
  from_string_fn from_string;
  empty_fn empty;
  release_fn release;
  message_fn message;
  void *a = symbol("c10c_device_from_string"), *b = symbol("c10c_tensor_empty"),
       *c = symbol("c10c_tensor_release"), *d = symbol("c10c_last_error_message");
  if (a && b && c && d) {
    memcpy(&from_string, &a, sizeof a); /* POSIX: a function address through void * */
    memcpy(&empty, &b, sizeof b);
    memcpy(&release, &c, sizeof c);
    memcpy(&message, &d, sizeof d);
    c10c_device device;
    bool ok = from_string(&device, "bogus") != C10C_STATUS_OK && message()[0] != '\0';
    c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
    for (int i = 0; ok && i < 100; i++) {
      int64_t n = 64 + i;
      c10c_tensor *t = NULL;
      ok = empty(&t, &n, 1, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS) ==
           C10C_STATUS_OK;
      if (ok) release(t);
    }
    thread_result = ok ? 0 : 1;
  }
  set_stage(1);
  wait_for(2);
  return NULL; /* the thread's exit: no destructor of the library may run now */
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_unload LIBRARY\n");
    return 2;
  }
  library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  pthread_t thread;
  if (pthread_create(&thread, NULL, worker, NULL) != 0) return 1;
  wait_for(1);
  dlclose(library);
  bool unloaded = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD) == NULL;
#if defined(__GLIBC__)
  if (!unloaded) {
    fprintf(stderr, "FAIL: dlclose left the library loaded, so this tests nothing\n");
    return 1;
  }
#endif
  set_stage(2);
  pthread_join(thread, NULL);
  if (thread_result != 0) {
    fprintf(stderr, "FAIL: the thread's calls did not behave\n");
    return 1;
  }
  if (unloaded)
    printf("ok   threads outlive an unloaded libc10c\n");
  else /* musl's dlclose never unloads */
    printf("skipped: this C library's dlclose keeps libraries loaded\n");
  return 0;
}
