/* pyc10._ctensor.StorageBase's methods (nbytes, data_ptr, resize_, fill_, copy_, from_buffer,
 * tolist, clone, ...) and its iteration and mapping protocol (s[i], s[a:b], s[i] = v), as
 * torch's StorageMethods.cpp and Storage.cpp. Byte copies and fills go through uint8 tensors over
 * the storages (storage__copy_bytes), so they work on every device libc10c's copy_ and fill_
 * serve. Its identity map, construction and attributes are in storage.c, below this file; the
 * type's spec, which puts them together with these methods, and its creation at module init
 * (pyc10_storage_init) are here.
 */
#include <Python.h>
#include <stdbool.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>

#include "storage.h"

static bool is_meta(c10c_storage *s) {
  return c10c_storage_device(s).type == C10C_DEVICE_TYPE_META;
}

static PyObject *meta_error(void) {
  PyErr_SetString(
      storage__not_implemented != NULL ? storage__not_implemented : PyExc_NotImplementedError,
      "Not available for 'meta' device type");
  return NULL;
}

/* A bytes object of n bytes from offset start of s (copied to the host first off the CPU). */
static PyObject *read_bytes(c10c_storage *s, int64_t start, int64_t n) {
  if (n == 0) return PyBytes_FromStringAndSize(NULL, 0); /* a 0-byte meta storage too, as torch */
  if (is_meta(s)) return meta_error();
  if (c10c_storage_device(s).type == C10C_DEVICE_TYPE_CPU)
    return PyBytes_FromStringAndSize((const char *)c10c_storage_data(s) + start, (Py_ssize_t)n);
  c10c_storage *host = NULL;
  c10c_status st =
      c10c_storage_new(&host, c10c_storage_nbytes(s), NULL, C10C_DEVICE_TYPE_CPU, true);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  PyObject *r =
      storage__copy_bytes(host, s) < 0
          ? NULL
          : PyBytes_FromStringAndSize((const char *)c10c_storage_data(host) + start, (Py_ssize_t)n);
  c10c_storage_release(host);
  return r;
}

/* Sets bytes [start, stop) of s to value. */
static int fill_bytes(c10c_storage *s, int64_t start, int64_t stop, uint8_t value) {
  if (stop <= start) return 0;
  if (c10c_storage_is_read_only(s)) {
    PyErr_SetString(RUNTIME_ERROR_CLASS, "cannot write to a read-only storage");
    return -1;
  }
  if (c10c_storage_device(s).type == C10C_DEVICE_TYPE_CPU) {
    memset((unsigned char *)c10c_storage_data(s) + start, value, (size_t)(stop - start));
    return 0;
  }
  c10c_tensor *t = NULL;
  int64_t n = stop - start, one = 1;
  c10c_status st = c10c_tensor_new_from_storage(&t, s, &n, &one, 1, start, C10C_DTYPE_UINT8);
  if (st == C10C_STATUS_OK) st = c10c_tensor_fill_(t, &value);
  c10c_tensor_release(t);
  return st == C10C_STATUS_OK ? 0 : (pyc10_raise(st), -1);
}

/* ---- methods without arguments ------------------------------------------------------------- */

static PyObject *s_nbytes(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_storage *s = storage__of(self);
  return s ? PyLong_FromLongLong((long long)c10c_storage_nbytes(s)) : NULL;
}

static PyObject *s_element_size(PyObject *self, PyObject *unused) {
  (void)unused;
  return storage__of(self) ? PyLong_FromLong(1) : NULL;
}

static PyObject *s_data_ptr(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_storage *s = storage__of(self);
  return s ? PyLong_FromVoidPtr(c10c_storage_data(s)) : NULL;
}

static PyObject *s_resizable(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_storage *s = storage__of(self);
  return s ? PyBool_FromLong(c10c_storage_resizable(s)) : NULL;
}

static PyObject *s_use_count(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_storage *s = storage__of(self);
  return s ? PyLong_FromUnsignedLong(c10c_storage_use_count(s)) : NULL;
}

/* Whether the bytes are in shared memory (c10c_storage_share_memory); a CUDA storage always
 * is (shared through CUDA IPC), as torch's THPStorage_isShared. */
static PyObject *s_is_shared(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_storage *s = storage__of(self);
  if (s == NULL) return NULL;
  return PyBool_FromLong(c10c_storage_is_shared(s) ||
                         c10c_storage_device(s).type == C10C_DEVICE_TYPE_CUDA);
}

static PyObject *s_tolist(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_storage *s = storage__of(self);
  if (s == NULL) return NULL;
  PyObject *bytes = read_bytes(s, 0, c10c_storage_nbytes(s));
  if (bytes == NULL) return NULL;
  Py_ssize_t n = PyBytes_Size(bytes);
  const unsigned char *data = (const unsigned char *)PyBytes_AsString(bytes);
  PyObject *list = PyList_New(n);
  for (Py_ssize_t i = 0; list != NULL && i < n; i++) {
    PyObject *v = PyLong_FromLong(data[i]); /* small ints: cached, cannot fail */
    PyList_SetItem(list, i, v);
  }
  Py_DECREF(bytes);
  return list;
}

static PyObject *s_bytes(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_storage *s = storage__of(self);
  return s ? read_bytes(s, 0, c10c_storage_nbytes(s)) : NULL;
}

PyObject *storage__iter(PyObject *self) {
  PyObject *list = s_tolist(self, NULL);
  if (list == NULL) return NULL;
  PyObject *it = PyObject_GetIter(list);
  Py_DECREF(list);
  return it;
}

/* A storage of the same size on the same device holding a copy of the bytes (torch's clone). */
static PyObject *s_clone(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_storage *s = storage__of(self);
  if (s == NULL) return NULL;
  c10c_storage *out = NULL;
  c10c_status st = storage__new(&out, c10c_storage_nbytes(s), c10c_storage_device(s));
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  if (!is_meta(s) && storage__copy_bytes(out, s) < 0) {
    c10c_storage_release(out);
    return NULL;
  }
  return storage__wrap_owned(storage__default_type(), out);
}

/* ---- sharing with other processes (torch's StorageSharing.cpp over c10c_storage_share_*) ---- */

/* The calls below that copy or fault in many pages run without the GIL, as torch copies into
 * shared memory without it: they touch no Python object, the storage's handle is held by self
 * (a method call keeps self alive) and a name or file name by the args tuple. What another thread
 * does to the same storage meanwhile is its race, as for copy_ (and as in torch, where writes
 * during the copy can be lost). */

static PyObject *wrap_new(PyObject *cls, c10c_status st, c10c_storage *s) {
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  return storage__wrap_owned(
      cls == (PyObject *)storage__base_type ? storage__default_type() : (PyTypeObject *)cls, s);
}

/* THPUtils_invalidArguments for the sharing constructors: "<name> received an invalid
 * combination of arguments - got (str, int), but expected <expected>" (a TypeError). */
static PyObject *invalid_arguments(PyObject *args, const char *name, const char *expected) {
  PyObject *names = PyList_New(0);
  if (names == NULL) return NULL;
  for (Py_ssize_t i = 0; i < PyTuple_Size(args); i++) {
    PyObject *tn =
        PyObject_GetAttrString((PyObject *)Py_TYPE(PyTuple_GetItem(args, i)), "__name__");
    if (tn == NULL || PyList_Append(names, tn) < 0) {
      Py_XDECREF(tn);
      Py_DECREF(names);
      return NULL;
    }
    Py_DECREF(tn);
  }
  PyObject *sep = PyUnicode_FromString(", ");
  PyObject *got = sep ? PyUnicode_Join(sep, names) : NULL;
  Py_XDECREF(sep);
  Py_DECREF(names);
  if (got == NULL) return NULL;
  PyErr_Format(TYPE_ERROR_CLASS,
               "%s received an invalid combination of arguments - got (%U), but expected %s", name,
               got, expected);
  Py_DECREF(got);
  return NULL;
}

/* THPUtils_unpackLong: ValueError "Overflow when unpacking long long" past 64 bits. */
static int unpack_long(PyObject *o, long long *out) {
  int overflow = 0;
  PyObject *index = PyNumber_Index(o);
  if (index == NULL) return -1;
  *out = PyLong_AsLongLongAndOverflow(index, &overflow);
  Py_DECREF(index);
  if (*out == -1 && PyErr_Occurred()) return -1;
  if (overflow != 0) {
    PyErr_SetString(VALUE_ERROR_CLASS, "Overflow when unpacking long long");
    return -1;
  }
  return 0;
}

/* _share_fd() -> (fd, size) (_storage.py's _share_fd_cpu_): the bytes moved into a memory file
 * (c10c_storage_share_fd); the descriptor stays the storage's. */
static PyObject *s_share_fd_cpu_(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_storage *s = storage__of(self);
  if (s == NULL) return NULL;
  c10c_status st;
  Py_BEGIN_ALLOW_THREADS
  st = c10c_storage_share_fd(s);
  Py_END_ALLOW_THREADS
  int fd = -1;
  int64_t n = 0;
  if (st == C10C_STATUS_OK) st = c10c_storage_shared_fd(&fd, &n, s);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  return Py_BuildValue("(iL)", fd, (long long)n);
}

/* _share_filename() -> (name, size, created): the bytes moved into a named object
 * (c10c_storage_share_filename); created when this call made the name. _storage.py's
 * _share_filename_cpu_ adds the manager handle. */
static PyObject *s_share_filename(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_storage *s = storage__of(self);
  if (s == NULL) return NULL;
  const char *name = NULL;
  bool created = c10c_storage_shared_name(&name, s) != C10C_STATUS_OK;
  c10c_status st;
  Py_BEGIN_ALLOW_THREADS
  st = c10c_storage_share_filename(s);
  Py_END_ALLOW_THREADS
  if (st == C10C_STATUS_OK) st = c10c_storage_shared_name(&name, s);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  return Py_BuildValue("(yLO)", name, (long long)c10c_storage_nbytes(s),
                       created ? Py_True : Py_False);
}

/* _new_shared_fd_cpu(fd, size): torch's argument checks, then c10c_storage_new_shared_fd (the
 * caller keeps fd). */
static PyObject *s_new_shared_fd_cpu(PyObject *cls, PyObject *args) {
  if (PyTuple_Size(args) != 2) return RUNTIME_ERROR("tuple of 2 items expected");
  PyObject *a = PyTuple_GetItem(args, 0), *b = PyTuple_GetItem(args, 1);
  if (!storage__check_long(a) || !storage__check_long(b))
    return invalid_arguments(args, "_new_shared in file descriptor mode",
                             "a file descriptor (int) and storage size (int)");
  long long fd, size;
  if (unpack_long(a, &fd) < 0 || unpack_long(b, &size) < 0) return NULL;
  c10c_storage *s = NULL;
  int as_int = fd < INT_MIN || fd > INT_MAX ? -1 : (int)fd;
  c10c_status st;
  Py_BEGIN_ALLOW_THREADS
  st = c10c_storage_new_shared_fd(&s, as_int, (int64_t)size);
  Py_END_ALLOW_THREADS
  return wrap_new(cls, st, s);
}

/* _new_shared_filename(manager, name, size): torch's argument checks, then
 * c10c_storage_new_shared_filename; _storage.py's _new_shared_filename_cpu tells the hook. */
static PyObject *s_new_shared_filename(PyObject *cls, PyObject *args) {
  if (PyTuple_Size(args) != 3) return RUNTIME_ERROR("tuple of 3 items expected");
  PyObject *manager = PyTuple_GetItem(args, 0), *name = PyTuple_GetItem(args, 1);
  PyObject *size = PyTuple_GetItem(args, 2);
  if (!PyBytes_Check(manager) || !PyBytes_Check(name) || !storage__check_long(size))
    return invalid_arguments(args, "_new_shared in file system mode",
                             "a handle (string/bytes) and storage size (int)");
  PyObject *index = PyNumber_Index(size);
  if (index == NULL) return NULL;
  unsigned long long n = PyLong_AsUnsignedLongLong(index); /* THPUtils_unpackUInt64 */
  Py_DECREF(index);
  if (n == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
  if (n > (unsigned long long)INT64_MAX)
    return RUNTIME_ERROR("shared memory object storage size %llu is too large", n);
  c10c_storage *s = NULL;
  const char *text = PyBytes_AsString(name);
  c10c_status st;
  Py_BEGIN_ALLOW_THREADS
  st = c10c_storage_new_shared_filename(&s, text, (int64_t)n);
  Py_END_ALLOW_THREADS
  return wrap_new(cls, st, s);
}

/* _new_using_fd_cpu(size), _new_using_filename(size): PyArg_ParseTuple "L", as torch. */
static PyObject *new_using(PyObject *cls, PyObject *args,
                           c10c_status (*make)(c10c_storage **, int64_t)) {
  long long size;
  if (!PyArg_ParseTuple(args, "L", &size)) return NULL;
  c10c_storage *s = NULL;
  c10c_status st;
  Py_BEGIN_ALLOW_THREADS
  st = make(&s, (int64_t)size);
  Py_END_ALLOW_THREADS
  return wrap_new(cls, st, s);
}

static PyObject *s_new_using_fd_cpu(PyObject *cls, PyObject *args) {
  return new_using(cls, args, c10c_storage_new_using_fd);
}

static PyObject *s_new_using_filename(PyObject *cls, PyObject *args) {
  return new_using(cls, args, c10c_storage_new_using_filename);
}

/* _shared_name() -> bytes | None: the name of a storage shared by name. */
static PyObject *s_shared_name(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_storage *s = storage__of(self);
  if (s == NULL) return NULL;
  const char *name = NULL;
  if (c10c_storage_shared_name(&name, s) != C10C_STATUS_OK) Py_RETURN_NONE;
  return PyBytes_FromString(name);
}

/* _shared_refcount_add(delta) -> int | None: delta added to the reference count in the header of
 * a storage shared by name; the count before, None for any other storage. */
static PyObject *s_shared_refcount_add(PyObject *self, PyObject *arg) {
  c10c_storage *s = storage__of(self);
  if (s == NULL) return NULL;
  long delta = PyLong_AsLong(arg);
  if (delta == -1 && PyErr_Occurred()) return NULL;
  if (delta < INT32_MIN || delta > INT32_MAX)
    return PyErr_Format(PyExc_OverflowError, "delta %ld does not fit a 32-bit count", delta);
  const char *name = NULL;
  if (c10c_storage_shared_name(&name, s) != C10C_STATUS_OK) Py_RETURN_NONE;
  int32_t before = 0;
  c10c_status st = c10c_storage_shared_refcount_add(&before, s, (int32_t)delta);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  return PyLong_FromLong(before);
}

/* from_file(filename, shared=False, nbytes=0): torch's parsing (its PyArg_ParseTupleAndKeywords
 * messages), then c10c_storage_new_from_file. */
static PyObject *s_from_file(PyObject *cls, PyObject *args, PyObject *kwargs) {
  static char k_filename[] = "filename", k_shared[] = "shared", k_nbytes[] = "nbytes";
  static char *keywords[] = {k_filename, k_shared, k_nbytes, NULL};
  const char *filename;
  int shared = 0;
  long long nbytes = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|iL", keywords, &filename, &shared, &nbytes))
    return NULL;
  c10c_storage *s = NULL;
  c10c_status st;
  Py_BEGIN_ALLOW_THREADS
  st = c10c_storage_new_from_file(&s, filename, shared != 0, (int64_t)nbytes);
  Py_END_ALLOW_THREADS
  return wrap_new(cls, st, s);
}

/* _get_filename() -> str | None: the file a storage maps with shared=True (torch's). */
static PyObject *s_get_filename(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_storage *s = storage__of(self);
  if (s == NULL) return NULL;
  const char *name = NULL;
  c10c_status st = c10c_storage_filename(&name, s);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  if (name == NULL) Py_RETURN_NONE;
  return PyUnicode_DecodeFSDefault(name);
}

/* ---- CUDA IPC (include/c10c/cuda_ipc.h), torch's StorageSharing.cpp methods -------------- */

static PyObject *bytes_or_none(const void *bytes, size_t n, bool present) {
  if (!present) Py_RETURN_NONE;
  return PyBytes_FromStringAndSize((const char *)bytes, (Py_ssize_t)n);
}

/* _share_cuda_(): torch's 8-tuple (device, handle, storage_size_bytes, storage_offset_bytes,
 * ref_counter_handle, ref_counter_offset, event_handle, event_sync_required); None for the
 * handle, counter and event of an empty storage, as torch. */
static PyObject *s_share_cuda(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_storage *s = storage__of(self);
  if (s == NULL) return NULL;
  if (c10c_storage_device(s).type != C10C_DEVICE_TYPE_CUDA) {
    PyErr_SetString(RUNTIME_ERROR_CLASS, "_share_cuda_: only available on CUDA");
    return NULL;
  }
  c10c_cuda_ipc_info info = {.struct_size = sizeof info};
  uint8_t small[256], *handle = small;
  c10c_status st = c10c_storage_share_cuda(&info, handle, sizeof small, s);
  if (st == C10C_STATUS_BUFFER_TOO_SMALL) { /* an expandable segment's many pages */
    handle = PyMem_Malloc(info.handle_len);
    if (handle == NULL) return PyErr_NoMemory();
    st = c10c_storage_share_cuda(&info, handle, info.handle_len, s);
  }
  PyObject *result = NULL;
  if (st != C10C_STATUS_OK) {
    pyc10_raise(st);
  } else {
    bool has = info.handle_len > 0;
    result =
        Py_BuildValue("(iNLLNLNN)", (int)info.device, bytes_or_none(handle, info.handle_len, has),
                      (long long)info.storage_size_bytes, (long long)info.storage_offset_bytes,
                      bytes_or_none(info.ref_counter_handle, strlen(info.ref_counter_handle), has),
                      (long long)info.ref_counter_offset,
                      bytes_or_none(info.event_handle, sizeof info.event_handle, has),
                      has ? PyBool_FromLong(info.event_sync_required) : Py_NewRef(Py_None));
  }
  if (handle != small) PyMem_Free(handle);
  return result;
}

static bool is_int(PyObject *o) { return PyLong_Check(o) && !PyBool_Check(o); }

/* _new_shared_cuda(device, handle, storage_size_bytes, storage_offset_bytes, ref_counter_handle,
 * ref_counter_offset, event_handle, event_sync_required): torch's THPStorage_newSharedCuda. */
static PyObject *s_new_shared_cuda(PyObject *cls, PyObject *args) {
  if (PyTuple_Size(args) != 8) {
    PyErr_SetString(RUNTIME_ERROR_CLASS, "tuple of 8 items expected");
    return NULL;
  }
  PyObject *a[8];
  for (int i = 0; i < 8; i++) a[i] = PyTuple_GetItem(args, i);
  if (!(is_int(a[0]) && PyBytes_Check(a[1]) && is_int(a[2]) && is_int(a[3]) &&
        PyBytes_Check(a[4]) && is_int(a[5]) && PyBytes_Check(a[6]) && PyBool_Check(a[7]))) {
    PyErr_SetString(TYPE_ERROR_CLASS,
                    "_new_shared in CUDA mode received an invalid combination of arguments - "
                    "expected (int device, bytes handle, int storage_size_bytes, int "
                    "storage_offset_bytes, bytes _ref_counter, int _ref_counter_offset, bytes "
                    "event_handle, bool event_sync_required)");
    return NULL;
  }
  c10c_cuda_ipc_info info = {.struct_size = sizeof info};
  long long device = PyLong_AsLongLong(a[0]), size = PyLong_AsLongLong(a[2]),
            offset = PyLong_AsLongLong(a[3]), ref_offset = PyLong_AsLongLong(a[5]);
  if (PyErr_Occurred()) return NULL;
  if (device < INT32_MIN || device > INT32_MAX) {
    PyErr_Format(RUNTIME_ERROR_CLASS, "value cannot be converted to type int8_t without overflow");
    return NULL;
  }
  info.device = (int32_t)device;
  info.storage_size_bytes = size;
  info.storage_offset_bytes = offset;
  info.ref_counter_offset = ref_offset;
  char *ref = PyBytes_AsString(a[4]), *event = NULL, *handle = NULL;
  Py_ssize_t event_len = 0, handle_len = 0;
  if (ref == NULL || PyBytes_AsStringAndSize(a[6], &event, &event_len) < 0 ||
      PyBytes_AsStringAndSize(a[1], &handle, &handle_len) < 0)
    return NULL;
  if ((size_t)PyBytes_Size(a[4]) >= sizeof info.ref_counter_handle) {
    PyErr_SetString(RUNTIME_ERROR_CLASS,
                    "_new_shared_cuda: the reference counter's name is too long");
    return NULL;
  }
  memcpy(info.ref_counter_handle, ref, (size_t)PyBytes_Size(a[4]));
  info.event_sync_required = a[7] == Py_True;
  if (info.event_sync_required) {
    if (event_len != C10C_CUDA_IPC_HANDLE_SIZE) {
      PyErr_SetString(RUNTIME_ERROR_CLASS, "incorrect handle");
      return NULL;
    }
    memcpy(info.event_handle, event, C10C_CUDA_IPC_HANDLE_SIZE);
  }
  c10c_storage *s = NULL;
  c10c_status st;
  Py_BEGIN_ALLOW_THREADS /* the producer's event may be waited for */
  st = c10c_storage_new_shared_cuda(&s, &info, (const uint8_t *)handle, (size_t)handle_len);
  Py_END_ALLOW_THREADS
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  return storage__wrap_owned(
      cls == (PyObject *)storage__base_type ? storage__default_type() : (PyTypeObject *)cls, s);
}

/* _release_ipc_counter_cuda(ref_counter_handle, ref_counter_offset): best effort, as torch. */
static PyObject *s_release_ipc_counter_cuda(PyObject *cls, PyObject *args) {
  (void)cls;
  if (PyTuple_Size(args) != 2) {
    PyErr_SetString(RUNTIME_ERROR_CLASS, "tuple of 2 items expected");
    return NULL;
  }
  PyObject *name = PyTuple_GetItem(args, 0), *offset = PyTuple_GetItem(args, 1);
  if (!PyBytes_Check(name) || !is_int(offset)) {
    PyErr_SetString(TYPE_ERROR_CLASS,
                    "_release_ipc_counter in CUDA mode received an invalid combination of "
                    "arguments - expected (bytes _ref_counter, int _ref_counter_offset)");
    return NULL;
  }
  long long index = PyLong_AsLongLong(offset);
  if (index == -1 && PyErr_Occurred()) return NULL;
  c10c_status st = c10c_cuda_ipc_release_counter(PyBytes_AsString(name), index);
  if (st != C10C_STATUS_OK) return pyc10_raise(st);
  Py_RETURN_NONE;
}

/* Whether the storage came from another process (torch's StorageImpl::received_cuda). */
static PyObject *s_is_received_cuda(PyObject *self, PyObject *unused) {
  (void)unused;
  c10c_storage *s = storage__of(self);
  if (s == NULL) return NULL;
  return PyBool_FromLong(c10c_storage_is_received_cuda(s));
}

/* ---- methods with arguments (the parser, kind UntypedStorage) ------------------------------ */

/* resize_(size): torch checks the type itself (RuntimeError "resize_ expects an int"). */
static PyObject *s_resize_(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  static pa_parser p = PA_PARSER("UntypedStorage", "resize_");
  pa_args r;
  c10c_storage *s = storage__of(self);
  if (s == NULL || pa_parse(&p, args, nargs, kwnames, &r) < 0) return NULL;
  if (!storage__check_long(r.obj[0]))
    return storage__raise_with_type(RUNTIME_ERROR_CLASS, "resize_ expects an int, but got %U",
                                    r.obj[0]);
  int64_t size;
  if (pa_index(r.obj[0], &size) < 0) return NULL;
  c10c_status st = c10c_storage_resize(s, size);
  return st == C10C_STATUS_OK ? Py_NewRef(self) : pyc10_raise(st);
}

/* torch's THPByteUtils_checkReal and unpackReal: an int or bool, kept modulo 256. */
static int byte_value(PyObject *o, uint8_t *out) {
  int overflow;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow) {
    PyErr_SetString(VALUE_ERROR_CLASS, "Overflow when unpacking long long");
    return -1;
  }
  if (v == -1 && PyErr_Occurred()) return -1;
  *out = (uint8_t)v;
  return 0;
}

static PyObject *s_fill_(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
  static pa_parser p = PA_PARSER("UntypedStorage", "fill_");
  pa_args r;
  c10c_storage *s = storage__of(self);
  if (s == NULL || pa_parse(&p, args, nargs, kwnames, &r) < 0) return NULL;
  if (!PyLong_Check(r.obj[0]))
    return storage__raise_with_type(RUNTIME_ERROR_CLASS, "fill_ expects int, but got %U", r.obj[0]);
  uint8_t v;
  if (byte_value(r.obj[0], &v) < 0) return NULL;
  if (is_meta(s)) return Py_NewRef(self);
  return fill_bytes(s, 0, c10c_storage_nbytes(s), v) < 0 ? NULL : Py_NewRef(self);
}

static PyObject *s_copy_(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
  static pa_parser p = PA_PARSER("UntypedStorage", "copy_");
  pa_args r;
  c10c_storage *s = storage__of(self);
  if (s == NULL || pa_parse(&p, args, nargs, kwnames, &r) < 0) return NULL;
  c10c_storage *src = storage__of(r.obj[0]);
  if (src == NULL) return NULL;
  int64_t n = c10c_storage_nbytes(s), m = c10c_storage_nbytes(src);
  if (n != m)
    return PyErr_Format(RUNTIME_ERROR_CLASS,
                        "size does not match, self was %lld bytes but src was %lld bytes",
                        (long long)n, (long long)m);
  if (c10c_storage_is_read_only(s) && n > 0) {
    PyErr_SetString(RUNTIME_ERROR_CLASS, "cannot write to a read-only storage");
    return NULL;
  }
  /* into a meta storage: nothing to write; out of one: torch's tensor copy_ refusal */
  if (is_meta(s)) return Py_NewRef(self);
  if (is_meta(src)) {
    PyErr_SetString(
        storage__not_implemented != NULL ? storage__not_implemented : PyExc_NotImplementedError,
        "Cannot copy out of meta tensor; no data!");
    return NULL;
  }
  return storage__copy_bytes(s, src) < 0 ? NULL : Py_NewRef(self);
}

/* Reverses each unit-byte group of n bytes at p. */
static void swap_units(unsigned char *p, size_t n, size_t unit) {
  for (size_t i = 0; i + unit <= n; i += unit)
    for (size_t a = i, b = i + unit - 1; a < b; a++, b--) {
      unsigned char t = p[a];
      p[a] = p[b];
      p[b] = t;
    }
}

/* from_buffer(buffer, byte_order=None, count=-1, offset=0, dtype=None): torch's
 * THPStorage_fromBuffer (its checks, in its order, and its messages). */
static PyObject *s_from_buffer(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
  static pa_parser p = PA_PARSER("UntypedStorage", "from_buffer");
  pa_args r;
  if (pa_parse(&p, args, nargs, kwnames, &r) < 0) return NULL;
  int64_t count, offset;
  int dtype;
  if (pa_int(&r, 2, &count) < 0 || pa_int(&r, 3, &offset) < 0 || pa_dtype(&r, 4, &dtype) < 0)
    return NULL;
  if (dtype < 0) {
    PyErr_SetString(RUNTIME_ERROR_CLASS, "argument 'dtype' cannot be None");
    return NULL;
  }
  c10c_dtype d = (c10c_dtype)dtype;
  bool independent = d == C10C_DTYPE_UINT8 || d == C10C_DTYPE_INT8 || d == C10C_DTYPE_FLOAT8_E5M2 ||
                     d == C10C_DTYPE_FLOAT8_E5M2FNUZ || d == C10C_DTYPE_FLOAT8_E4M3FN ||
                     d == C10C_DTYPE_FLOAT8_E4M3FNUZ;
  const char *order = NULL;
  if (r.obj[1] != NULL && (order = PyUnicode_AsUTF8AndSize(r.obj[1], NULL)) == NULL) return NULL;
  if (!independent && order == NULL) {
    PyErr_SetString(RUNTIME_ERROR_CLASS, "function missing required argument 'byte_order' (pos 2)");
    return NULL;
  }
  const uint16_t probe = 1;
  bool little = *(const unsigned char *)&probe == 1, swap = false;
  if (!independent) {
    if (strcmp(order, "native") == 0) {
      swap = false;
    } else if (strcmp(order, "big") == 0) {
      swap = little;
    } else if (strcmp(order, "little") == 0) {
      swap = !little;
    } else {
      return PyErr_Format(VALUE_ERROR_CLASS,
                          "invalid byte_order '%s' (expected 'big', 'little', or 'native')", order);
    }
  }
  /* the bytes through a memoryview: the limited API (3.10) has no buffer protocol */
  PyObject *mv = PyMemoryView_FromObject(r.obj[0]);
  if (mv == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) return NULL;
    PyErr_Clear();
    return storage__raise_with_type(TYPE_ERROR_CLASS, "a bytes-like object is required, not '%U'",
                                    r.obj[0]);
  }
  PyObject *bytes = PyBytes_FromObject(mv);
  Py_DECREF(mv);
  if (bytes == NULL) return NULL;
  PyObject *result = NULL;
  int64_t size = (int64_t)c10c_dtype_itemsize(d), len = (int64_t)PyBytes_Size(bytes);
  if (offset < 0 || offset > len) {
    /* torch's fmt arguments are in this order */
    PyErr_Format(VALUE_ERROR_CLASS,
                 "offset must be non-negative and no greater than buffer length (%lld) , but got "
                 "%lld",
                 (long long)offset, (long long)len);
    goto done;
  }
  if (count < 0) {
    if ((len - offset) % size != 0) {
      PyErr_Format(VALUE_ERROR_CLASS,
                   "buffer size (%lld) must be a multiple of element size (%lld)", (long long)len,
                   (long long)size);
      goto done;
    }
    count = (len - offset) / size;
  }
  if (count > (len - offset) / size) {
    PyErr_Format(VALUE_ERROR_CLASS,
                 "buffer has only %lld elements after offset %lld, but specified a size of %lld",
                 (long long)(len - offset), (long long)offset, (long long)count);
    goto done;
  }
  bool known = independent || d == C10C_DTYPE_BOOL || d == C10C_DTYPE_INT16 ||
               d == C10C_DTYPE_INT32 || d == C10C_DTYPE_INT64 || d == C10C_DTYPE_FLOAT16 ||
               d == C10C_DTYPE_BFLOAT16 || d == C10C_DTYPE_FLOAT32 || d == C10C_DTYPE_FLOAT64 ||
               d == C10C_DTYPE_COMPLEX64 || d == C10C_DTYPE_COMPLEX128;
  if (!known) {
    PyErr_Format(RUNTIME_ERROR_CLASS, "Unknown type: %s", c10c_dtype_c10_name(d));
    goto done;
  }
  c10c_storage *s = NULL;
  size_t nbytes = (size_t)(count * size);
  c10c_status st = c10c_storage_new(&s, (int64_t)nbytes, NULL, C10C_DEVICE_TYPE_CPU, true);
  if (st != C10C_STATUS_OK) {
    pyc10_raise(st);
    goto done;
  }
  unsigned char *data = c10c_storage_data(s);
  if (nbytes > 0) memcpy(data, PyBytes_AsString(bytes) + offset, nbytes);
  if (d == C10C_DTYPE_BOOL) {
    for (size_t i = 0; i < nbytes; i++) data[i] = data[i] != 0;
  } else if (swap) {
    /* complex numbers swap their real and imaginary parts each (torch's decode) */
    bool complex = d == C10C_DTYPE_COMPLEX64 || d == C10C_DTYPE_COMPLEX128;
    swap_units(data, nbytes, (size_t)size / (complex ? 2 : 1));
  }
  result = storage__wrap_owned(
      cls == (PyObject *)storage__base_type ? storage__default_type() : (PyTypeObject *)cls, s);
done:
  Py_DECREF(bytes);
  return result;
}

/* ---- memory owned by a Python object (from_file's mappings) -------------------------------- */

/* The storage deleter of _from_owner: drops the owner with the GIL held (it may run on any
 * thread), keeping any exception in flight; after the interpreter is gone nothing is released. */
static void release_owner(void *ctx) {
  if (!Py_IsInitialized()) return;
  PyGILState_STATE gil = PyGILState_Ensure();
  KEEPING_ERROR(Py_DECREF((PyObject *)ctx));
  PyGILState_Release(gil);
}

/* _from_owner(address, nbytes, owner, read_only): a CPU storage over nbytes at address, memory
 * that owner keeps valid (from_file's mapping), holding owner until its last reference goes. */
static PyObject *s_from_owner(PyObject *cls, PyObject *args) {
  PyObject *address, *owner;
  long long nbytes;
  int read_only;
  if (!PyArg_ParseTuple(args, "OLOp:_from_owner", &address, &nbytes, &owner, &read_only))
    return NULL;
  void *data = PyLong_AsVoidPtr(address);
  if (data == NULL && PyErr_Occurred()) return NULL;
  c10c_storage *s = NULL;
  c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
  Py_INCREF(owner);
  c10c_status st = c10c_storage_new_external(&s, data, (int64_t)nbytes, cpu, release_owner, owner);
  if (st != C10C_STATUS_OK) {
    Py_DECREF(owner);
    return pyc10_raise(st);
  }
  if (read_only) c10c_storage_set_read_only(s);
  return storage__wrap_owned(
      cls == (PyObject *)storage__base_type ? storage__default_type() : (PyTypeObject *)cls, s);
}

/* ---- mapping protocol ---------------------------------------------------------------------- */

Py_ssize_t storage__length(PyObject *self) {
  c10c_storage *s = storage__of(self);
  return s ? (Py_ssize_t)c10c_storage_nbytes(s) : -1;
}

/* The slice's bounds on n bytes, or -1 with torch's error for a step other than 1. */
static int unit_slice(PyObject *slice, int64_t n, Py_ssize_t *start, Py_ssize_t *length) {
  Py_ssize_t stop, step;
  if (PySlice_Unpack(slice, start, &stop, &step) < 0) return -1;
  *length = PySlice_AdjustIndices((Py_ssize_t)n, start, &stop, step);
  if (step != 1) {
    PyErr_Format(RUNTIME_ERROR_CLASS,
                 "Trying to slice with a step of %zd, but only a step of 1 is supported", step);
    return -1;
  }
  return 0;
}

/* The byte at an index (negative from the end); a slice is a new storage over the same bytes
 * (not resizable, keeping the base alive), as torch. */
PyObject *storage__getitem(PyObject *self, PyObject *index) {
  c10c_storage *s = storage__of(self);
  if (s == NULL) return NULL;
  if (is_meta(s)) return meta_error();
  int64_t n = c10c_storage_nbytes(s);
  if (storage__check_long(index)) {
    int64_t i;
    if (pa_index(index, &i) < 0) return NULL;
    if (i < 0) i += n;
    if (i < 0 || i >= n)
      return PyErr_Format(INDEX_ERROR_CLASS, "index %lld out of range for storage of size %lld",
                          (long long)i, (long long)n);
    if (c10c_storage_device(s).type == C10C_DEVICE_TYPE_CPU)
      return PyLong_FromLong(((const unsigned char *)c10c_storage_data(s))[i]);
    PyObject *b = read_bytes(s, i, 1);
    if (b == NULL) return NULL;
    PyObject *v = PyLong_FromLong(((const unsigned char *)PyBytes_AsString(b))[0]);
    Py_DECREF(b);
    return v;
  }
  if (PySlice_Check(index)) {
    Py_ssize_t start, length;
    if (unit_slice(index, n, &start, &length) < 0) return NULL;
    unsigned char *data = c10c_storage_data(s);
    c10c_storage *view = NULL;
    c10c_status st = c10c_storage_new_external(
        &view, data != NULL ? data + start : NULL, (int64_t)length, c10c_storage_device(s),
        (c10c_deleter)c10c_storage_release, c10c_storage_retain(s));
    if (st != C10C_STATUS_OK) {
      c10c_storage_release(s); /* the base reference the view did not take */
      return pyc10_raise(st);
    }
    if (c10c_storage_is_read_only(s)) c10c_storage_set_read_only(view);
    return storage__wrap_owned(storage__default_type(), view);
  }
  return storage__raise_with_type(TYPE_ERROR_CLASS, "can't index a pyc10.UntypedStorage with %U",
                                  index);
}

/* s[i] = v and s[a:b] = v for an int v (modulo 256). Deliberate differences from torch, whose
 * __setitem__ raises RuntimeError "out of bounds" for every negative index: a negative index
 * counts from the end and an index out of range raises __getitem__'s IndexError. */
int storage__setitem(PyObject *self, PyObject *index, PyObject *value) {
  c10c_storage *s = storage__of(self);
  if (s == NULL) return -1;
  if (value == NULL) {
    PyErr_SetString(TYPE_ERROR_CLASS, "'UntypedStorage' object doesn't support item deletion");
    return -1;
  }
  if (!PyLong_Check(value)) {
    storage__raise_with_type(RUNTIME_ERROR_CLASS,
                             "can only set storage content with a int types, but got %U instead",
                             value);
    return -1;
  }
  uint8_t v;
  if (byte_value(value, &v) < 0) return -1;
  int64_t n = c10c_storage_nbytes(s);
  if (storage__check_long(index)) {
    int64_t i;
    if (pa_index(index, &i) < 0) return -1;
    if (i < 0) i += n;
    if (i < 0 || i >= n) {
      PyErr_Format(INDEX_ERROR_CLASS, "index %lld out of range for storage of size %lld",
                   (long long)i, (long long)n);
      return -1;
    }
    return fill_bytes(s, i, i + 1, v);
  }
  if (PySlice_Check(index)) {
    Py_ssize_t start, length;
    if (unit_slice(index, n, &start, &length) < 0) return -1;
    return fill_bytes(s, start, start + length, v);
  }
  storage__raise_with_type(RUNTIME_ERROR_CLASS, "can't index a pyc10.UntypedStorage with %U",
                           index);
  return -1;
}

#define FAST(fn) (PyCFunction)(void (*)(void))(fn)

/* The methods torch writes in Python (torch.storage._StorageBase: size, tolist, clone): their work
 * here, a bad call's error in Python's own words, as torch's. */
#define PYTHON_NOARGS(wrapper, fn, name)                                                     \
  static PyObject *wrapper(PyObject *self, PyObject *const *args, Py_ssize_t nargs,          \
                           PyObject *kwnames) {                                              \
    PyObject *none[1];                                                                       \
    if (pyc10_bind_python((PyObject *)Py_TYPE(self), name, NULL, 0, 0, args, nargs, kwnames, \
                          none) < 0)                                                         \
      return NULL;                                                                           \
    return fn(self, NULL);                                                                   \
  }
PYTHON_NOARGS(py_size, s_nbytes, "size")
PYTHON_NOARGS(py_tolist, s_tolist, "tolist")
PYTHON_NOARGS(py_clone, s_clone, "clone")

/* __reduce_ex__(protocol): object's conversion of the protocol (an int: "'str' object cannot be
 * interpreted as an integer", the arity of a one-argument C method), as torch's storages inherit
 * it; the work in Python (UntypedStorage._reduce_ex: protocol 5's out-of-band buffers). */
static PyObject *s_reduce_ex(PyObject *self, PyObject *arg) {
  int overflow;
  PyObject *index = PyNumber_Index(arg);
  if (index == NULL) return NULL;
  long protocol = PyLong_AsLongAndOverflow(index, &overflow);
  Py_DECREF(index);
  if (protocol == -1 && PyErr_Occurred()) return NULL;
  if (overflow || protocol < INT_MIN || protocol > INT_MAX) {
    PyErr_SetString(PyExc_OverflowError, "Python int too large to convert to C int");
    return NULL;
  }
  return PyObject_CallMethod(self, "_reduce_ex", "l", protocol);
}

PyMethodDef storage__methods[] = {
    {"nbytes", s_nbytes, METH_NOARGS, "nbytes() -> int\n\nSize in bytes."},
    {"size", FAST(py_size), METH_FASTCALL | METH_KEYWORDS,
     "size() -> int\n\nSize in bytes (nbytes())."},
    {"element_size", s_element_size, METH_NOARGS,
     "element_size() -> int\n\n1: an untyped storage counts bytes."},
    {"data_ptr", s_data_ptr, METH_NOARGS,
     "data_ptr() -> int\n\nAddress of the first byte (0 for an empty storage)."},
    {"resizable", s_resizable, METH_NOARGS,
     "resizable() -> bool\n\nWhether resize_ may change the size (storages over external "
     "memory, such as slices and from_file mappings, may not)."},
    {"use_count", s_use_count, METH_NOARGS,
     "use_count() -> int\n\nStrong references to the storage (Python objects and C holders)."},
    {"is_shared", s_is_shared, METH_NOARGS,
     "is_shared() -> bool\n\nWhether the bytes are in shared memory (share_memory_; CUDA: "
     "always)."},
    {"tolist", FAST(py_tolist), METH_FASTCALL | METH_KEYWORDS,
     "tolist() -> list[int]\n\nThe bytes as a list of ints."},
    {"__reduce_ex__", s_reduce_ex, METH_O,
     "__reduce_ex__(protocol) -> tuple\n\nPickle (protocol 5: the bytes out of band)."},
    {"_bytes", s_bytes, METH_NOARGS, "The bytes as a bytes object (copied to the host)."},
    {"clone", FAST(py_clone), METH_FASTCALL | METH_KEYWORDS,
     "clone() -> UntypedStorage\n\nA copy of the bytes in a new storage on the same device."},
    {"_share_fd", s_share_fd_cpu_, METH_NOARGS,
     "_share_fd() -> tuple[int, int]\n\nThe bytes moved into a memory file; its "
     "descriptor (the storage's) and size."},
    {"_share_filename", s_share_filename, METH_NOARGS,
     "_share_filename() -> tuple[bytes, int, bool]\n\nThe bytes moved into a named shared "
     "memory object; its name, size and whether this call made it."},
    {"_shared_name", s_shared_name, METH_NOARGS,
     "_shared_name() -> bytes | None\n\nThe name of a storage shared by name."},
    {"_shared_refcount_add", s_shared_refcount_add, METH_O,
     "_shared_refcount_add(delta) -> int | None\n\ndelta added to the reference count of a "
     "storage shared by name; the count before (None: not shared by name)."},
    {"_get_filename", s_get_filename, METH_NOARGS,
     "_get_filename() -> str | None\n\nThe file a storage maps with shared=True."},
    {"_new_shared_fd_cpu", s_new_shared_fd_cpu, METH_VARARGS | METH_CLASS,
     "_new_shared_fd_cpu(fd, size)\n\nA storage over a memory file another process shared "
     "(the caller keeps fd)."},
    {"_new_shared_filename", s_new_shared_filename, METH_VARARGS | METH_CLASS,
     "_new_shared_filename(manager, name, size)\n\nA storage over a named shared memory "
     "object."},
    {"_new_using_fd_cpu", s_new_using_fd_cpu, METH_VARARGS | METH_CLASS,
     "_new_using_fd_cpu(size)\n\nA new storage of zero bytes in a memory file."},
    {"_new_using_filename", s_new_using_filename, METH_VARARGS | METH_CLASS,
     "_new_using_filename(size)\n\nA new storage of zero bytes in a named shared memory "
     "object."},
    {"from_file", (PyCFunction)(void (*)(void))s_from_file,
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "from_file(filename, shared=False, nbytes=0)\n\nThe bytes of a file, mapped "
     "(torch.UntypedStorage.from_file)."},
    {"resize_", FAST(s_resize_), METH_FASTCALL | METH_KEYWORDS, NULL},
    {"fill_", FAST(s_fill_), METH_FASTCALL | METH_KEYWORDS, NULL},
    {"copy_", FAST(s_copy_), METH_FASTCALL | METH_KEYWORDS, NULL},
    {"from_buffer", FAST(s_from_buffer), METH_FASTCALL | METH_KEYWORDS | METH_CLASS, NULL},
    {"_share_cuda_", s_share_cuda, METH_NOARGS,
     "_share_cuda_() -> tuple\n\nThe storage shared through CUDA IPC: torch's 8-tuple."},
    {"_new_shared_cuda", s_new_shared_cuda, METH_VARARGS | METH_CLASS,
     "A storage over CUDA memory another process shared (_share_cuda_'s tuple)."},
    {"_release_ipc_counter_cuda", s_release_ipc_counter_cuda, METH_VARARGS | METH_CLASS,
     "Decrements a producer's CUDA IPC reference counter (best effort)."},
    {"_is_received_cuda", s_is_received_cuda, METH_NOARGS,
     "Whether the storage is CUDA memory received from another process."},
    {"_from_owner", s_from_owner, METH_VARARGS | METH_CLASS,
     "A CPU storage over memory a Python object keeps valid, holding the object."},
    {"_setup", storage__setup, METH_VARARGS | METH_CLASS, "Connect StorageBase to pyc10._storage."},
    {NULL, NULL, 0, NULL},
};

/* ---- the type: storage.c's construction and attributes with this file's methods ---------- */

static PyMemberDef storage_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(StorageObject, weakreflist), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot storage_slots[] = {
    {Py_tp_new, (void *)storage__tp_new},
    {Py_tp_dealloc, (void *)storage__dealloc},
    {Py_tp_methods, storage__methods},
    {Py_tp_getset, storage__getset},
    {Py_tp_members, storage_members},
    {Py_tp_iter, (void *)storage__iter},
    {Py_mp_length, (void *)storage__length},
    {Py_sq_length, (void *)storage__length},
    {Py_mp_subscript, (void *)storage__getitem},
    {Py_mp_ass_subscript, (void *)storage__setitem},
    {Py_tp_doc, (void *)"The C part of pyc10.UntypedStorage: one reference to a libc10c storage."},
    {0, NULL},
};

static PyType_Spec storage_spec = {
    .name = "pyc10.UntypedStorage",
    .basicsize = sizeof(StorageObject),
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .slots = storage_slots,
};

int pyc10_storage_init(PyObject *module) {
  for (PyMethodDef *m = storage__methods; m->ml_name != NULL; m++)
    if (m->ml_doc == NULL) m->ml_doc = pa_doc("UntypedStorage", m->ml_name);
  PyObject *type = PyType_FromSpec(&storage_spec);
  if (type == NULL) return -1;
  storage__base_type = (PyTypeObject *)type;
  Py_INCREF(type); /* storage__base_type keeps one */
  if (PyModule_AddObject(module, "StorageBase", type) < 0) {
    Py_DECREF(type);
    return -1;
  }
  return 0;
}
