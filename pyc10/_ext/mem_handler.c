/* numpy's data allocator (NEP 49) over libc10c's caching CPU allocator: the C part of
 * pyc10.allocators.numpy.
 *
 * numpy keeps the handler of new arrays in a context variable holding a "mem_handler" capsule of
 * a PyDataMem_Handler (name, version 1, then ctx and malloc/calloc/realloc/free, each taking ctx
 * first); every array keeps the capsule it was made under and is freed through it, so arrays
 * made before or after a switch are always freed by their own allocator. numpy calls the four
 * functions with or without the GIL, from any thread: they only call libc10c's c10c_cpu_*
 * (lib/memory/cpu_malloc.c), which frees by address, as numpy's free size is not always what
 * was allocated (numpy's own NEP 49 text says so). PyDataMem_SetHandler is slot 304 of numpy's C
 * API table (numpy_api.py; numpy >= 1.22, C feature version 15).
 */
#include <string.h>

#include "common.h"

enum {
  API_FEATURE_VERSION = 211, /* unsigned int PyArray_GetNDArrayCFeatureVersion(void) */
  API_SET_HANDLER = 304,     /* PyObject *PyDataMem_SetHandler(PyObject *handler) */
  FEATURE_1_22 = 15,
};

/* numpy's PyDataMemAllocator and PyDataMem_Handler (ndarraytypes.h), version 1. */
typedef struct np_allocator {
  void *ctx;
  void *(*malloc)(void *ctx, size_t size);
  void *(*calloc)(void *ctx, size_t nelem, size_t elsize);
  void *(*realloc)(void *ctx, void *ptr, size_t new_size);
  void (*free)(void *ctx, void *ptr, size_t size);
} np_allocator;

typedef struct np_handler {
  char name[127];
  uint8_t version;
  np_allocator allocator;
} np_handler;

static void *h_malloc(void *ctx, size_t size) {
  (void)ctx;
  void *p = NULL;
  return c10c_cpu_malloc(&p, size) == C10C_STATUS_OK ? p : NULL;
}

static void *h_calloc(void *ctx, size_t nelem, size_t elsize) {
  (void)ctx;
  void *p = NULL;
  return c10c_cpu_calloc(&p, nelem, elsize) == C10C_STATUS_OK ? p : NULL;
}

static void *h_realloc(void *ctx, void *ptr, size_t new_size) {
  (void)ctx;
  void *p = NULL;
  return c10c_cpu_realloc(&p, ptr, new_size) == C10C_STATUS_OK ? p : NULL;
}

static void h_free(void *ctx, void *ptr, size_t size) {
  (void)ctx, (void)size; /* freed by address: numpy's size may differ from the allocation's */
  c10c_cpu_free(ptr);
}

/* Lives for the process: arrays hold its capsule, and the capsule points here. */
static np_handler handler = {
    .name = "pyc10",
    .version = 1,
    .allocator = {NULL, h_malloc, h_calloc, h_realloc, h_free},
};

static PyObject *capsule; /* made once, kept for the process */

/* _numpy_handler() -> the "mem_handler" capsule of pyc10's handler. */
static PyObject *f_numpy_handler(PyObject *m, PyObject *unused) {
  (void)m, (void)unused;
  if (capsule == NULL) {
    capsule = PyCapsule_New(&handler, "mem_handler", NULL);
    if (capsule == NULL) return NULL;
  }
  Py_INCREF(capsule);
  return capsule;
}

typedef PyObject *(*set_handler_fn)(PyObject *);
typedef unsigned int (*version_fn)(void);

/* _numpy_set_handler(capsule or None) -> the handler it replaces in this context. */
static PyObject *f_numpy_set_handler(PyObject *m, PyObject *new_handler) {
  (void)m;
  void **table = pyc10_numpy_table();
  if (table == NULL || ((version_fn)table[API_FEATURE_VERSION])() < FEATURE_1_22) {
    PyErr_SetString(PyExc_RuntimeError,
                    "numpy's C API table with PyDataMem_SetHandler (numpy >= 1.22) could not be "
                    "loaded, so numpy's data allocator cannot be changed");
    return NULL;
  }
  if (new_handler != Py_None && !PyCapsule_IsValid(new_handler, "mem_handler")) {
    PyErr_SetString(PyExc_TypeError, "expected a 'mem_handler' capsule or None");
    return NULL;
  }
  return ((set_handler_fn)table[API_SET_HANDLER])(new_handler == Py_None ? NULL : new_handler);
}

PyMethodDef pyc10_mem_handler_functions[] = {
    {"_numpy_handler", f_numpy_handler, METH_NOARGS,
     "_numpy_handler() -> capsule\n\nThe 'mem_handler' capsule of numpy's data allocator "
     "'pyc10' (libc10c's caching CPU allocator)."},
    {"_numpy_set_handler", f_numpy_set_handler, METH_O,
     "_numpy_set_handler(handler, /) -> capsule\n\nnumpy's PyDataMem_SetHandler: makes handler "
     "(None: numpy's default) this context's allocator of array data; returns the one before."},
    {NULL, NULL, 0, NULL},
};
