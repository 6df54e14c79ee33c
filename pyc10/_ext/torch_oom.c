/* PyTorch's out-of-memory experience for libc10c as torch's pluggable CUDA allocator.
 *
 * torch calls a pluggable allocator's malloc as void *(size_t, int, cudaStream_t) and has no
 * failure path: a NULL becomes a tensor whose data_ptr() is 0, and the first kernel touching it
 * ends the process's CUDA context. torch's own errors reach Python as C++ exceptions caught by
 * its bindings (HANDLE_TH_ERRORS); one of them, python_error, carries a Python exception that
 * is already made and is raised as it is (its catch restores the type, value and traceback the
 * object holds). So when the allocation cannot be met, pyc10's malloc here makes the exception
 * torch would raise, torch.cuda.OutOfMemoryError with libc10c's message (PyTorch's "CUDA out of
 * memory. Tried to allocate ..."; RuntimeError for the other failures, as torch raises them), and
 * throws it as a python_error through the Itanium C++ ABI:
 * the object has python_error's layout (vtable pointer; type, value, traceback; an empty
 * std::string), its type information is named as python_error's (libstdc++ matches a catch by
 * the mangled name across libraries), with std::exception as its base, so a catch of
 * std::exception (autograd's worker threads, which pass the exception on to the caller) sees it
 * too and what() gives the message. The C++ runtime's entry points come from the process
 * (pyc10.allocators.torch looks them up with ctypes once torch has loaded libstdc++); where any
 * is missing, or the runtime is not libstdc++ with its C++11 string, the shim is not set up and
 * torch gets libc10c's entry points themselves (NULL on failure).
 * The throw leaves from the outermost frame of this file: no lock is held and nothing is owed.
 */
#include <string.h>

#include "common.h"

typedef void *(*allocate_exception_fn)(size_t);
typedef void (*throw_fn)(void *obj, void *tinfo, void (*dest)(void *));

/* libstdc++'s std::string (the C++11 ABI): pointer, length, then 16 bytes of local buffer. */
typedef struct cxx_string {
  char *ptr;
  size_t size;
  char local[16];
} cxx_string;

/* python_error's layout (torch/csrc/Exceptions.h): std::exception's vtable pointer, then the
 * Python exception (owned references), then the message; what() is read from text. */
typedef struct python_error {
  const uintptr_t *vptr;
  PyObject *type, *value, *traceback;
  cxx_string message;
  char text[1024];
} python_error;

/* __si_class_type_info: a class with one public non-virtual base. */
typedef struct si_type_info {
  const void *vptr;
  const char *name;
  const void *base;
} si_type_info;

static allocate_exception_fn allocate_exception;
static throw_fn cxa_throw;
static si_type_info type_info;
static uintptr_t vtable[5]; /* offset to top, type info, complete and deleting dtors, what */
static PyObject *oom_class; /* torch.cuda.OutOfMemoryError, kept for the process */

static void pe_destroy(void *self) {
  python_error *e = self;
  if (e->type == NULL && e->value == NULL && e->traceback == NULL) return;
  PyGILState_STATE g = PyGILState_Ensure();
  Py_XDECREF(e->type);
  Py_XDECREF(e->value);
  Py_XDECREF(e->traceback);
  e->type = e->value = e->traceback = NULL;
  PyGILState_Release(g);
}

static const char *pe_what(const void *self) { return ((const python_error *)self)->text; }

/* Throws torch.cuda.OutOfMemoryError with libc10c's message as torch's python_error; returns
 * only when the exception cannot be made (then the caller returns NULL). */
static void throw_out_of_memory(void) {
  char text[sizeof((python_error *)0)->text];
  snprintf(text, sizeof text, "%s", c10c_last_error_message());
  /* torch raises OutOfMemoryError for an allocation the device cannot hold, and RuntimeError
   * for the rest (an invalid device, CUDA unavailable, ...) */
  bool oom = strncmp(text, "CUDA out of memory.", 19) == 0;
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject *type = oom ? oom_class : PyExc_RuntimeError;
  PyObject *value = PyObject_CallFunction(type, "s", text);
  if (value == NULL) {
    PyErr_Clear();
    PyGILState_Release(g);
    return;
  }
  Py_INCREF(type);
  PyGILState_Release(g);
  python_error *e = allocate_exception(sizeof *e);
  memset(e, 0, sizeof *e);
  e->vptr = &vtable[2];
  e->type = type;
  e->value = value;
  e->message.ptr = e->message.local; /* an empty string, as a default-constructed one */
  memcpy(e->text, text, sizeof text);
  cxa_throw(e, &type_info, pe_destroy);
}

static void *torch_malloc(size_t size, int device, void *stream) {
  void *p = c10c_cuda_pluggable_malloc(size, device, stream);
  if (p == NULL && size > 0 && cxa_throw != NULL) throw_out_of_memory();
  return p;
}

static void torch_free(void *ptr, size_t size, int device, void *stream) {
  c10c_cuda_pluggable_free(ptr, size, device, stream);
}

/* _torch_allocator(allocate_exception, throw, si_class_vtable, exception_type_info,
 * out_of_memory_class) -> (malloc, free): the addresses torch._C._cuda_customAllocator takes.
 * The first four are addresses of libstdc++'s symbols (0 for any: no shim, the entry points
 * are libc10c's own and a failure is NULL). */
static PyObject *f_torch_allocator(PyObject *m, PyObject *args) {
  (void)m;
  unsigned long long alloc_addr, throw_addr, si_vtable, exception_ti;
  PyObject *cls;
  if (!PyArg_ParseTuple(args, "KKKKO:_torch_allocator", &alloc_addr, &throw_addr, &si_vtable,
                        &exception_ti, &cls))
    return NULL;
  if (alloc_addr && throw_addr && si_vtable && exception_ti) {
    PyObject *old = oom_class;
    Py_INCREF(cls);
    oom_class = cls;
    Py_XDECREF(old);
    /* a type_info object's vtable pointer is two words into its class's vtable */
    type_info = (si_type_info){(const void *)(uintptr_t)(si_vtable + 2 * sizeof(void *)),
                               "12python_error", (const void *)(uintptr_t)exception_ti};
    vtable[0] = 0;
    vtable[1] = (uintptr_t)&type_info;
    vtable[2] = (uintptr_t)pe_destroy; /* complete destructor */
    vtable[3] = (uintptr_t)pe_destroy; /* deleting destructor: exceptions are not deleted */
    vtable[4] = (uintptr_t)pe_what;
    allocate_exception = (allocate_exception_fn)(uintptr_t)alloc_addr;
    cxa_throw = (throw_fn)(uintptr_t)throw_addr;
  }
  return Py_BuildValue("(KK)", (unsigned long long)(uintptr_t)torch_malloc,
                       (unsigned long long)(uintptr_t)torch_free);
}

PyMethodDef pyc10_torch_oom_functions[] = {
    {"_torch_allocator", f_torch_allocator, METH_VARARGS,
     "_torch_allocator(allocate_exception, throw, si_class_vtable, exception_type_info, "
     "out_of_memory_class) -> (malloc, free)\n\nlibc10c's pluggable entry points for torch, "
     "raising out_of_memory_class through torch's python_error where the C++ runtime's entry "
     "points are given."},
    {NULL, NULL, 0, NULL},
};
