"""Emit the C source of the cffi extension ``pyc10._c10c`` (API mode, out of line).

Run by meson: ``python _build_ffi.py CDEF OUT.c``, where CDEF is the public header preprocessed
with ``-DC10C_CDEF`` (declarations only, no system headers or attributes). Keeping the cdef a
product of the headers means the Python binding cannot drift from the C API; the C compiler then
checks every declaration and struct layout against the real header.
"""

from __future__ import annotations

import sys

import cffi  # type: ignore[import-untyped]

# C helpers that live in the extension itself. pyc10_abi_check runs the ABI check with the sizes
# this extension was compiled with, exactly as a C host application would.
PREAMBLE = """
#include "c10c/c10c.h"

static c10c_status pyc10_abi_check(void) {
  c10c_abi_info info = C10C_ABI_INFO_INIT;
  return c10c_abi_check(&info);
}

/* Dispatch key set calls taking the raw 64-bit word: cffi converts a Python int to uint64_t
 * far faster than it builds a struct argument from a dict. */
static c10c_dispatch_key_set pyc10_ks(uint64_t raw) {
  c10c_dispatch_key_set ks;
  ks.repr = raw;
  return ks;
}
static c10c_dispatch_key pyc10_ks_highest_priority_key(uint64_t raw) {
  return c10c_dispatch_key_set_highest_priority_key(pyc10_ks(raw));
}
static c10c_dispatch_key pyc10_ks_highest_functionality(uint64_t raw) {
  return c10c_dispatch_key_set_highest_functionality(pyc10_ks(raw));
}
static c10c_backend_component pyc10_ks_highest_backend(uint64_t raw) {
  return c10c_dispatch_key_set_highest_backend(pyc10_ks(raw));
}
static int32_t pyc10_ks_dispatch_table_index(uint64_t raw) {
  return c10c_dispatch_key_set_dispatch_table_index(pyc10_ks(raw));
}
static size_t pyc10_ks_to_array(c10c_dispatch_key *out, size_t capacity, uint64_t raw) {
  return c10c_dispatch_key_set_to_array(out, capacity, pyc10_ks(raw));
}
static c10c_status pyc10_ks_to_string(char *out, size_t out_size, size_t *out_len,
                                      uint64_t raw) {
  return c10c_dispatch_key_set_to_string(out, out_size, out_len, pyc10_ks(raw));
}

/* A new resizable storage from the installed allocator, or NULL with the error left in
 * c10c_last_error_status(): one call and no out-parameter to allocate from Python. */
static c10c_storage *pyc10_storage_new(int64_t nbytes, c10c_device_type device_type) {
  c10c_storage *s = NULL;
  return c10c_storage_new(&s, nbytes, NULL, device_type, true) == C10C_STATUS_OK ? s : NULL;
}

/* empty_strided returning the handle, or NULL with the error in c10c_last_error_status(). */
static c10c_tensor *pyc10_tensor_empty_strided(const int64_t *sizes, const int64_t *strides,
                                               size_t ndim, c10c_dtype dtype,
                                               c10c_device_type type, c10c_device_index index) {
  c10c_tensor *t = NULL;
  c10c_device device;
  device.type = type;
  device.index = index;
  return c10c_tensor_empty_strided(&t, sizes, strides, ndim, dtype, device) == C10C_STATUS_OK
             ? t : NULL;
}

/* The views Python indexing makes (t[0, 1:] goes item by item), returning the new handle, or
 * NULL with the error in c10c_last_error_status(): an out-parameter costs a cffi allocation. */
static c10c_tensor *pyc10_slice(const c10c_tensor *t, int64_t dim, int64_t start, int64_t end,
                                int64_t step) {
  c10c_tensor *out = NULL;
  c10c_tensor_slice(&out, t, dim, start, end, step);
  return out;
}
static c10c_tensor *pyc10_select(const c10c_tensor *t, int64_t dim, int64_t index) {
  c10c_tensor *out = NULL;
  c10c_tensor_select(&out, t, dim, index);
  return out;
}

/* C code that calls into Python, or that may run a deleter that does (pyc10.from_numpy's, or
 * numpy's and torch's DLPack deleters over an import), can run while an exception is in flight:
 * a failing call that drops the last tensor over a numpy array frees the array on the way out.
 * Python code run then sees that exception set (cffi reports a SystemError from the callback,
 * which then never drops its reference: the array leaked) and clears it (the caller's
 * exception is lost: "error return without exception set"). These wrappers take the GIL (a
 * deleter may run on any thread, after a DLPack consumer released it) and set the exception
 * aside around the work; after the interpreter is gone nothing is released (numpy's rule).
 *
 * libc10c calls no Python function of pyc10's: from_numpy's deleter is C (pyc10/_ext/
 * factories.c: it drops the array with the GIL held and any exception set aside). */

/* Runs stmt with the GIL held and any exception in flight set aside. */
#define PYC10_KEEPING_ERROR(stmt)                                 \
  do {                                                            \
    PyGILState_STATE gil_ = PyGILState_Ensure();                  \
    PyObject *type_, *value_, *traceback_;                        \
    PyErr_Fetch(&type_, &value_, &traceback_);                    \
    stmt;                                                         \
    PyErr_Restore(type_, value_, traceback_);                     \
    PyGILState_Release(gil_);                                     \
  } while (0)

/* The storage release of UntypedStorage's ffi.gc (cffi calls it with the GIL released). */
static void pyc10_storage_release(c10c_storage *storage) {
  if (Py_IsInitialized())
    PYC10_KEEPING_ERROR(c10c_storage_release(storage));
  else
    c10c_storage_release(storage);
}
"""

# Declarations of the preamble and of the macros Python needs; "..." takes values from the header.
EXTRA_CDEF = """
c10c_status pyc10_abi_check(void);
c10c_dispatch_key pyc10_ks_highest_priority_key(uint64_t raw);
c10c_dispatch_key pyc10_ks_highest_functionality(uint64_t raw);
c10c_backend_component pyc10_ks_highest_backend(uint64_t raw);
int32_t pyc10_ks_dispatch_table_index(uint64_t raw);
size_t pyc10_ks_to_array(c10c_dispatch_key *out, size_t capacity, uint64_t raw);
c10c_status pyc10_ks_to_string(char *out, size_t out_size, size_t *out_len, uint64_t raw);
c10c_storage *pyc10_storage_new(int64_t nbytes, c10c_device_type device_type);
c10c_tensor *pyc10_tensor_empty_strided(const int64_t *sizes, const int64_t *strides, size_t ndim,
                                        c10c_dtype dtype, c10c_device_type type,
                                        c10c_device_index index);
void pyc10_storage_release(c10c_storage *storage);
c10c_tensor *pyc10_slice(const c10c_tensor *t, int64_t dim, int64_t start, int64_t end,
                         int64_t step);
c10c_tensor *pyc10_select(const c10c_tensor *t, int64_t dim, int64_t index);
#define C10C_VERSION_NUMBER ...
#define C10C_ABI_VERSION ...
"""


def make_ffi(cdef: str) -> cffi.FFI:
    """Build the FFI object for the given preprocessed declarations."""
    ffi = cffi.FFI()
    ffi.cdef(cdef + EXTRA_CDEF)
    ffi.set_source("pyc10._c10c", PREAMBLE)
    return ffi


def main(argv: list[str]) -> int:
    """Write the extension's C source: ``_build_ffi.py CDEF OUT``."""
    if len(argv) != 3:
        sys.stderr.write("usage: _build_ffi.py CDEF OUT.c\n")
        return 2
    with open(argv[1], encoding="utf-8") as f:
        cdef = f.read()
    make_ffi(cdef).emit_c_code(argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
