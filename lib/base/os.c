/* The portability layer's threads, dynamic loader and clocks on POSIX systems (Linux, macOS);
 * os_win32.c has Windows'. */
#ifndef _WIN32

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "os.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

bool c10c__tls_key_create(c10c__tls_key *key, void (*destructor)(void *)) {
  return pthread_key_create(key, destructor) == 0;
}

void c10c__tls_key_delete(c10c__tls_key key) { pthread_key_delete(key); }

void *c10c__tls_get(c10c__tls_key key) { return pthread_getspecific(key); }

bool c10c__tls_set(c10c__tls_key key, void *value) { return pthread_setspecific(key, value) == 0; }

bool c10c__at_fork(void (*prepare)(void), void (*parent)(void), void (*child)(void)) {
  return pthread_atfork(prepare, parent, child) == 0;
}

void c10c__thread_yield(void) { sched_yield(); }

void *c10c__dl_open(const char *path, char *why, size_t why_size) {
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL && why_size > 0) {
    const char *text = dlerror();
    snprintf(why, why_size, "%s", text != NULL ? text : path);
  }
  return library;
}

void *c10c__dl_symbol(void *library, const char *symbol) { return dlsym(library, symbol); }

void c10c__dl_close(void *library) { dlclose(library); }

const char *c10c__cuda_driver_name(void) {
#if defined(__APPLE__)
  return "libcuda.dylib"; /* no driver exists for macOS since CUDA 10.2: never found */
#else
  return "libcuda.so.1";
#endif
}

static int64_t clock_us(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t c10c__monotonic_us(void) { return clock_us(CLOCK_MONOTONIC); }

int64_t c10c__realtime_us(void) { return clock_us(CLOCK_REALTIME); }

#else
/* ISO C forbids an empty translation unit */
typedef int c10c__os_posix_unused;
#endif
