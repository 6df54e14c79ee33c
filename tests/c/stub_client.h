/* Calling the stand-in CUDA driver's control functions (tests/cuda_stub/cuda_stub.c: the clock,
 * enqueued work, touches, counters) from a test: they live in the library C10C_CUDA_DRIVER
 * names, already loaded by libc10c. STUB_FN(type, name, "c10c_stub_...") declares name, the
 * function or NULL (with a line on stderr). */
#ifndef C10C_TEST_STUB_CLIENT_H
#define C10C_TEST_STUB_CLIENT_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *stub(const char *symbol) {
  void *handle = dlopen(getenv("C10C_CUDA_DRIVER"), RTLD_NOW | RTLD_NOLOAD);
  void *address = handle ? dlsym(handle, symbol) : NULL;
  if (handle) dlclose(handle);
  if (address == NULL) fprintf(stderr, "  the stand-in lacks %s\n", symbol);
  return address;
}

#define STUB_FN(type, name, symbol)        \
  type name = NULL;                        \
  do {                                     \
    void *address_ = stub(symbol);         \
    memcpy(&name, &address_, sizeof name); \
  } while (0)

#endif
