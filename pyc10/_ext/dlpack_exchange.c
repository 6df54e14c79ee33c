/* DLPack's C exchange API (DLPack 1.3, dlpack.h's DLPackExchangeAPI): the function table a
 * tensor type publishes as `type(x).__dlpack_c_exchange_api__`, a PyCapsule named
 * "dlpack_exchange_api", so that another library exchanges tensors through C calls instead of
 * __dlpack__'s Python round trip (torch 2.13 publishes one).
 *
 * Consumer: pyc10.from_dlpack(x) looks the table up on x's type (cached for the last type seen),
 * takes an owning DLManagedTensorVersioned from the producer and imports it. The "no sync"
 * functions leave stream ordering to the consumer, which libc10c cannot do for streams it did not
 * make: memory on a GPU is handed back (its deleter) and imported through __dlpack__(stream=...)
 * instead, which orders the producer's work before ours. Host memory needs no ordering. The
 * result must be what __dlpack__ gives, and torch 2.13's table skips the checks its __dlpack__
 * makes (a tensor that requires grad, or has the conjugate or negative bit, is exported as its
 * raw memory: conj().numpy() values unconjugated): a torch tensor with any of these, and any
 * table failure, goes through __dlpack__, which raises torch's own error or resolves the bit.
 * Producer: pyc10.Tensor's own table (the type attribute set by tensor.c), over libc10c's export
 * and import; the non-owning DLTensor fill is left out (optional in the specification).
 */
#include "c10c/dlpack.h"
#include "common.h"

typedef int (*allocator_fn)(DLTensor *prototype, DLManagedTensorVersioned **out, void *error_ctx,
                            void (*set_error)(void *error_ctx, const char *kind,
                                              const char *message));
typedef int (*from_py_fn)(void *py_object, DLManagedTensorVersioned **out);
typedef int (*to_py_fn)(DLManagedTensorVersioned *tensor, void **out_py_object);
typedef int (*dltensor_from_py_fn)(void *py_object, DLTensor *out);
typedef int (*current_stream_fn)(DLDeviceType device_type, int32_t device_id, void **out_stream);

/* DLPackExchangeAPIHeader and DLPackExchangeAPI, as dlpack.h 1.3 lays them out. */
typedef struct exchange_header {
  DLPackVersion version;
  struct exchange_header *prev_api;
} exchange_header;

typedef struct exchange_api {
  exchange_header header;
  allocator_fn managed_tensor_allocator;
  from_py_fn managed_tensor_from_py_object_no_sync;
  to_py_fn managed_tensor_to_py_object_no_sync;
  dltensor_from_py_fn dltensor_from_py_object_no_sync;
  current_stream_fn current_work_stream;
} exchange_api;

static const char CAPSULE_NAME[] = "dlpack_exchange_api";

/* ---- consumer ---- */

static PyObject *cached_type; /* the last type looked up (a strong reference), and its table */
static const exchange_api *cached_api;
static bool cached_torch;   /* whether it is torch.Tensor or a subclass */
static PyObject *attr_name; /* "__dlpack_c_exchange_api__", interned */

static PyObject *torch_is_conj, *torch_is_neg; /* torch._C.TensorBase's methods, kept */

/* Whether type is torch.Tensor or derives from it (its MRO holds torch._C.TensorBase, whose
 * is_conj and is_neg are kept to be called directly: a method lookup through torch.Tensor's
 * Python class costs more than the call). */
static bool is_torch_type(PyTypeObject *type) {
  PyObject *mro = PyObject_GetAttrString((PyObject *)type, "__mro__");
  bool found = false;
  for (Py_ssize_t i = 0; mro != NULL && PyTuple_Check(mro) && i < PyTuple_Size(mro); i++) {
    PyObject *base = PyTuple_GetItem(mro, i);
    PyObject *name = PyObject_GetAttrString(base, "__qualname__");
    PyObject *module = PyObject_GetAttrString(base, "__module__");
    found = name != NULL && module != NULL && PyUnicode_Check(name) && PyUnicode_Check(module) &&
            PyUnicode_CompareWithASCIIString(name, "TensorBase") == 0 &&
            PyUnicode_CompareWithASCIIString(module, "torch._C") == 0;
    Py_XDECREF(name);
    Py_XDECREF(module);
    if (found && torch_is_conj == NULL) {
      torch_is_conj = PyObject_GetAttrString(base, "is_conj");
      torch_is_neg = PyObject_GetAttrString(base, "is_neg");
      if (torch_is_conj == NULL || torch_is_neg == NULL) {
        Py_CLEAR(torch_is_conj);
        Py_CLEAR(torch_is_neg);
        found = false;
      }
    }
    if (found) break;
  }
  PyErr_Clear();
  Py_XDECREF(mro);
  return found;
}

/* Whether torch's __dlpack__ would refuse or resolve x where its table exports raw memory:
 * requires_grad, or the conjugate or negative bit. -1 with an error. */
static int torch_needs_dlpack(PyObject *x) {
  static PyObject *requires_grad; /* interned */
  if (requires_grad == NULL &&
      (requires_grad = PyUnicode_InternFromString("requires_grad")) == NULL)
    return -1;
  for (int i = 0; i < 3; i++) {
    PyObject *v =
        i == 0 ? PyObject_GetAttr(x, requires_grad)
               : PyObject_CallFunctionObjArgs(i == 1 ? torch_is_conj : torch_is_neg, x, NULL);
    int truth = v == Py_False ? 0 : v == Py_True ? 1 : v != NULL ? PyObject_IsTrue(v) : -1;
    Py_XDECREF(v);
    if (truth != 0) return truth;
  }
  return 0;
}

/* The table of a major version 1 that type publishes, or NULL (none, or one this code cannot
 * read: another major, a capsule of another name), without an error. */
static const exchange_api *table_of(PyTypeObject *type) {
  if ((PyObject *)type == cached_type) return cached_api;
  if (attr_name == NULL &&
      (attr_name = PyUnicode_InternFromString("__dlpack_c_exchange_api__")) == NULL) {
    PyErr_Clear();
    return NULL;
  }
  PyObject *capsule = PyObject_GetAttr((PyObject *)type, attr_name);
  const exchange_api *api = NULL;
  if (capsule != NULL && PyCapsule_IsValid(capsule, CAPSULE_NAME)) {
    const exchange_header *h = PyCapsule_GetPointer(capsule, CAPSULE_NAME);
    /* walk to a version this layout is (1.x, x >= 3: the capsule form; a newer major may keep
     * an older table in its chain) */
    while (h != NULL && !(h->version.major == 1 && h->version.minor >= 3)) h = h->prev_api;
    const exchange_api *a = (const exchange_api *)h;
    if (a != NULL && a->managed_tensor_from_py_object_no_sync != NULL) api = a;
  }
  PyErr_Clear();
  Py_XDECREF(capsule); /* the table itself is static in its library, for the process */
  Py_INCREF(type);
  Py_XDECREF(cached_type);
  cached_type = (PyObject *)type;
  cached_api = api;
  cached_torch = api != NULL && is_torch_type(type);
  return api;
}

PyObject *pyc10_from_exchange(PyObject *x, int copy_wanted) {
  const exchange_api *api = table_of(Py_TYPE(x));
  if (api == NULL) return Py_None; /* not a new reference: the caller takes the other way */
  if (cached_torch) {
    int slow = torch_needs_dlpack(x);
    if (slow < 0) return NULL;
    if (slow) return Py_None;
  }
  DLManagedTensorVersioned *m = NULL;
  if (api->managed_tensor_from_py_object_no_sync(x, &m) != 0 || m == NULL) {
    PyErr_Clear(); /* __dlpack__ says it in the producer's own words */
    return Py_None;
  }
  int type = m->dl_tensor.device.device_type;
  if (type != kDLCPU && type != kDLCUDAHost && type != kDLROCMHost) {
    if (m->deleter != NULL) m->deleter(m); /* device memory: ordered through __dlpack__ */
    return Py_None;
  }
  c10c_tensor *out = NULL;
  c10c_status st = c10c_tensor_from_dlpack_versioned(&out, m);
  if (st != C10C_STATUS_OK) {
    if (m->deleter != NULL) m->deleter(m); /* still ours on failure */
    return pyc10_raise(st);
  }
  return pyc10_dlpack_wrap_import(out, copy_wanted && !(m->flags & DLPACK_FLAG_BITMASK_IS_COPIED));
}

/* ---- producer: pyc10.Tensor's table ---- */

static int from_py(void *py_object, DLManagedTensorVersioned **out) {
  *out = NULL;
  c10c_tensor *h = pyc10_handle((PyObject *)py_object);
  if (h == NULL) return -1;
  c10c_status st = c10c_tensor_to_dlpack_versioned(out, h);
  if (st == C10C_STATUS_OK) return 0;
  pyc10_raise(st);
  return -1;
}

static int to_py(DLManagedTensorVersioned *tensor, void **out_py_object) {
  *out_py_object = NULL;
  c10c_tensor *t = NULL;
  c10c_status st = c10c_tensor_from_dlpack_versioned(&t, tensor);
  if (st != C10C_STATUS_OK) {
    if (tensor->deleter != NULL) tensor->deleter(tensor); /* the table's contract: stolen */
    pyc10_raise(st);
    return -1;
  }
  PyObject *obj = pyc10_wrap(t);
  *out_py_object = obj;
  return obj != NULL ? 0 : -1;
}

static void no_delete(DLManagedTensorVersioned *self) { (void)self; }

/* What the prototype's dtype and device are in libc10c's terms, read by importing a tensor of no
 * elements of them (libc10c's own mapping and checks). */
static c10c_status prototype_of(const DLTensor *prototype, c10c_dtype *dtype, c10c_device *dev) {
  int64_t zero[1] = {0};
  DLManagedTensorVersioned probe = {
      .version = {1, 3},
      .deleter = no_delete,
      .dl_tensor = {.device = prototype->device,
                    .ndim = 1,
                    .dtype = prototype->dtype,
                    .shape = zero},
  };
  c10c_tensor *t = NULL;
  c10c_status st = c10c_tensor_from_dlpack_versioned(&t, &probe);
  if (st != C10C_STATUS_OK) return st;
  *dtype = c10c_tensor_dtype(t);
  *dev = c10c_tensor_device(t);
  c10c_tensor_release(t);
  return C10C_STATUS_OK;
}

static int allocate(DLTensor *prototype, DLManagedTensorVersioned **out, void *error_ctx,
                    void (*set_error)(void *error_ctx, const char *kind, const char *message)) {
  *out = NULL;
  c10c_dtype dtype;
  c10c_device dev;
  c10c_tensor *t = NULL;
  c10c_status st = prototype_of(prototype, &dtype, &dev);
  if (st == C10C_STATUS_OK && prototype->ndim < 0)
    st = C10C_STATUS_INVALID_ARGUMENT; /* (the probe had one dim) */
  if (st == C10C_STATUS_OK)
    st = c10c_tensor_empty(&t, prototype->shape, (size_t)prototype->ndim, dtype, dev,
                           C10C_MEMORY_FORMAT_CONTIGUOUS);
  if (st == C10C_STATUS_OK) {
    st = c10c_tensor_to_dlpack_versioned(out, t);
    c10c_tensor_release(t); /* the export holds its own reference */
  }
  if (st == C10C_STATUS_OK) return 0;
  set_error(error_ctx,
            st == C10C_STATUS_OUT_OF_MEMORY ? "MemoryError"
            : st == C10C_STATUS_UNSUPPORTED ? "BufferError"
                                            : "RuntimeError",
            st == C10C_STATUS_INVALID_ARGUMENT && prototype->ndim < 0
                ? "DLPack tensor with negative ndim"
                : c10c_last_error_message());
  return -1;
}

static int current_stream(DLDeviceType device_type, int32_t device_id, void **out_stream) {
  *out_stream = NULL;
  if (device_type != kDLCUDA || !c10c_cuda_is_initialized()) return 0; /* nothing to order */
  c10c_stream s;
  c10c_status st = c10c_cuda_current_stream(&s, (c10c_device_index)device_id);
  if (st == C10C_STATUS_OK) st = c10c_cuda_stream_handle(out_stream, s);
  if (st == C10C_STATUS_OK) return 0;
  pyc10_raise(st);
  return -1;
}

static exchange_api table = {
    .header = {.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION}, .prev_api = NULL},
    .managed_tensor_allocator = allocate,
    .managed_tensor_from_py_object_no_sync = from_py,
    .managed_tensor_to_py_object_no_sync = to_py,
    .dltensor_from_py_object_no_sync = NULL,
    .current_work_stream = current_stream,
};

int pyc10_exchange_publish(PyObject *type) {
  PyObject *capsule = PyCapsule_New(&table, CAPSULE_NAME, NULL);
  if (capsule == NULL) return -1;
  int r = PyObject_SetAttrString(type, "__dlpack_c_exchange_api__", capsule);
  Py_DECREF(capsule);
  return r;
}
