/* What the files of pyc10._ctensor share: the tensor object's layout and the few helpers every
 * method needs (wrapping a new tensor, raising a library error with pyc10's classes), defined in
 * common.c, and each file's entry points.
 *
 * The files form layers, as lib/ does, lowest first; a file calls only into its own layer and
 * lower ones, and the calls inside a layer form no circle (tests/check_pyc10_layers.py checks it,
 * declaring the same list):
 *   common   common.c: the state pyc10's Python side hands over at import (setup, setup_parser,
 *            the default dtype and device, pa_cls), wrapping, raising, a tensor's handle
 *   parser   argparse_match.c (which values each type takes, binding a call to one signature),
 *            under argparse_convert.c (bound values to C) and argparse_errors.c (torch's
 *            "invalid combination" TypeError), under argparse.c (the table, its grammar, pa_parse)
 *   shared   what methods build on: size.c (Size, a tensor's shape), storage.c (StorageBase's
 *            objects, one per storage), numpy.c, dlpack.c, memo.c, functions.c, outarg.c (out=
 *            checked and resized), factories.c (the factories and the options every factory
 *            takes), data.c (fills, conversions, a Python number to an element and back)
 *   methods  views.c, attrs.c, inplace.c, advindex.c under indexing.c, storage_methods.c (with
 *            StorageBase's spec)
 *   module   tensor.c: TensorBase's spec and module init, merging every file's tables */
#ifndef PYC10_COMMON_H
#define PYC10_COMMON_H

#include <Python.h>
#include <stdbool.h>

#include "argparse.h"
#include "c10c/c10c.h"

typedef struct {
  PyObject_HEAD c10c_tensor *h; /* one reference, released in tp_dealloc */
  PyObject *handle;  /* the same pointer as a cffi cdata, made on first use by Python code */
  PyObject *shape;   /* pyc10.Size, made on first use */
  PyObject *strides; /* tuple, cached by Python code (stride()) */
  PyObject *storage; /* the pyc10.UntypedStorage untyped_storage() gave, or NULL (storage.c) */
  PyObject *weakreflist;
  PyObject *base;   /* torch's _base: the tensor this one is a view of (its own base), or NULL */
  Py_ssize_t views; /* the live tensors whose base this is (they hold it, as torch's do) */
} TensorObject;

/* The default dtype's code (pyc10.set_default_dtype; float32 until set). */
extern int pyc10_default_dtype;

/* This thread's default device for factories (pyc10.set_default_device; the CPU until set). */
c10c_device pyc10_default_device(void);

/* value (a Python number, numpy scalar, ...) as one element of dt in out (16 bytes), with
 * ATen's overflow checks (data.c); -1 with an error. */
int pyc10_encode_scalar(unsigned char *out, c10c_dtype dt, PyObject *value);

/* dlpack.c: Tensor.__dlpack__/__dlpack_device__, and the module's from_dlpack/setup_dlpack. */
extern PyMethodDef pyc10_dlpack_methods[];
extern PyMethodDef pyc10_dlpack_functions[];

/* The options every factory and new_* ends with: dtype, layout, device, pin_memory,
 * requires_grad at parameters first..first+4 of r. *dt and *device hold the defaults on entry;
 * what pyc10 has not (other layouts, pinned memory, autograd) is refused (factories.c). */
int pyc10_tensor_options(const pa_args *r, int first, c10c_dtype *dt, c10c_device *device);

/* The same options for factories that take pin_memory and out= as empty() does (creation.c):
 * pin_memory=True is honoured by passing the result through pyc10_pinned_result. */
int pyc10_factory_options(const pa_args *r, int first, c10c_dtype *dt, c10c_device *device);
PyObject *pyc10_pinned_result(PyObject *t);
/* out= (parameter i of r) of a factory whose options are at first..first+4, as torch's
 * check_out_type_matches: *out is the tensor (borrowed), NULL when out= is absent or None; a given
 * dtype or device type other than out's raises torch's RuntimeError, pin_memory is ignored
 * (torch's is), other layouts and requires_grad=True are refused as without out= (outarg.c). */
int pyc10_out_arg(const pa_args *r, int i, int first, PyObject **out);
/* out.resize_(sizes) (then restrided to a channels-last format when format is one); -1 with the
 * error (torch's "Trying to resize storage that is not resizable", ...). */
int pyc10_resize_(PyObject *out, const int64_t *sizes, size_t n, int format);
/* ATen's resize_output: out resized as pyc10_resize_ when its shape is not sizes, after torch's
 * UserWarning when it had elements (with meta, the text of torch's Python meta kernels);
 * 1 when resized, 0 when not, -1 with an error. */
int pyc10_resize_output(PyObject *out, const int64_t *sizes, size_t n, int format, bool meta);
/* sizes as c10 prints an IntArrayRef ("[2, 3]"), cut to cap bytes. */
void pyc10_sizes_text(char *buf, size_t cap, const int64_t *s, size_t n);
/* creation.c (arange, frombuffer, asarray, view_as_real, view_as_complex) and joining.c (cat and
 * its aliases, stack, result_type): their module functions, added at module init (tensor.c). */
int pyc10_creation_init(PyObject *module);
int pyc10_joining_init(PyObject *module);

/* The module functions of factories.c (NULL-terminated), added at module init. */
extern PyMethodDef pyc10_factory_functions[];

/* A new pyc10.Tensor owning h (a new reference; released if the object cannot be made). */
PyObject *pyc10_wrap(c10c_tensor *h);
/* TensorBase's tp_dealloc (its memory kept for the next pyc10_wrap) and its _handle getter. */
void pyc10_tensor_dealloc(PyObject *self);
PyObject *pyc10_tensor_get_handle(PyObject *self, void *closure);
/* setup, setup_parser, wrap, set_default_device, get_/set_default_dtype: the module functions
 * that hand pyc10's Python side over to this state (common.c; added at module init). */
extern PyMethodDef pyc10_setup_functions[];
/* Raises the pyc10 exception for a library status; returns NULL. */
PyObject *pyc10_raise(c10c_status st);
/* The tensor a call made in *out, or its error. */
PyObject *pyc10_result(c10c_status st, c10c_tensor *const *out);
/* In-place geometry: self's object takes new_h (a new reference, consumed) in place of its tensor
 * and drops its cached shape and strides; returns self (a new reference). When st is an error,
 * new_h is released and the error raised (NULL). */
PyObject *pyc10_become(PyObject *self, c10c_status st, c10c_tensor *new_h);
/* self's tensor, or NULL with an error. */
c10c_tensor *pyc10_handle(PyObject *self);
/* One element at p of a dtype C reads natively (bool, the ints, float32/64, complex64/128) as a
 * Python number; NULL without an error for the other dtypes (data.c). */
PyObject *pyc10_load_element(const void *p, c10c_dtype dt);

/* self.shape: the tensor's pyc10.Size, made once (size.c). */
PyObject *pyc10_shape(PyObject *self);

/* A pyc10.Size of n sizes (size.c). */
PyObject *pyc10_size_new(const int64_t *sizes, size_t n);
/* Makes the pyc10.Size type (once, at module init); a new reference. */
PyObject *pyc10_size_type_create(void);
/* A tuple of tensors made from the n handles (all released on failure). */
PyObject *pyc10_wrap_tuple(c10c_tensor **hs, size_t n);

/* result (a tensor, a tuple of tensors, or NULL with an error) recorded as a view of self where
 * it shares self's storage: its _base becomes self's base, or self (views.c). Returns result. */
PyObject *pyc10_viewed(PyObject *self, PyObject *result);

/* pyc10_result for the methods whose result is always a view of self's storage (view, t,
 * transpose, select, slicing, ...: all but reshape's copy), recorded as pyc10_viewed records it
 * without its checks, which such a result always passes (self a tensor, the result a new one over
 * self's storage): its _base is self's base, or self (common.c, beside wrapping). */
PyObject *pyc10_view_result(PyObject *self, c10c_status st, c10c_tensor *const *out);

/* The methods of views.c (NULL-terminated), merged into TensorBase's at module init. */
extern PyMethodDef pyc10_view_methods[];
/* attrs.c: attributes, small methods, and the number/sequence slots (dunders) of TensorBase. */
extern PyMethodDef pyc10_attr_methods[];
extern PyGetSetDef pyc10_attr_getset[];
extern PyType_Slot pyc10_attr_slots[];

/* The function forms of the table's "Tensor input" entries (functions.c). */
PyObject *pyc10_functions(PyObject *module_name, PyObject *tensor_class);

/* Vectorcall entered the limited API's headers in 3.12, but every CPython since 3.9 exports these
 * functions: declared here, calls with keywords skip building a dict per call. */
#if defined(Py_LIMITED_API) && Py_LIMITED_API + 0 < 0x030C0000
PyAPI_FUNC(PyObject *) PyObject_VectorcallMethod(PyObject *name, PyObject *const *args,
                                                 size_t nargsf, PyObject *kwnames);
#endif
/* The methods of data.c: fill_, zero_, to and the conversions, new_*. */
extern PyMethodDef pyc10_data_methods[];

/* storage.c: Tensor.untyped_storage (merged into TensorBase's methods), StorageBase added to the
 * module at init, and the one Python object of a borrowed storage (a new reference). */
extern PyMethodDef pyc10_storage_tensor_methods[];
int pyc10_storage_init(PyObject *module);
PyObject *pyc10_storage_wrap(c10c_storage *s);
/* The c10c storage a pyc10.UntypedStorage holds (borrowed; the object must be one). */
c10c_storage *pyc10_storage_of(PyObject *storage);

/* inplace.c: in-place views (t_, transpose_, resize_, set_, ...), tensor_split/hsplit/vsplit/
 * dsplit, conj, is_shared, share_memory_, and the real/imag attributes. */
extern PyMethodDef pyc10_inplace_methods[];
extern PyGetSetDef pyc10_inplace_getset[];

/* indexing.c: t[index], t[index] = value (the mapping slots), item, tolist. */
extern PyMethodDef pyc10_index_methods[];
extern PyType_Slot pyc10_index_slots[];

/* ---- what every method file uses ---- */

#define FASTCALL_ARGS PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames

/* self's tensor as h, or return NULL (the error set by pyc10_handle). Read inline: every method
 * starts here, and a call per method is a measurable part of the hot views. */
#define SELF_HANDLE(h)                        \
  c10c_tensor *h = ((TensorObject *)self)->h; \
  if (h == NULL && pyc10_handle(self) == NULL) return NULL

/* self's handle read again (h from SELF_HANDLE): converting arguments may run Python code
 * (__index__) that swaps self's handle (resize_, set_, ...) and releases the one read before. */
#define SELF_HANDLE_AGAIN(h) (h = ((TensorObject *)self)->h)

/* Binds this method's arguments as r, or returns NULL with torch's TypeError. */
#define PARSE(parser, r) \
  pa_args r;             \
  if (pa_parse(&parser, args, nargs, kwnames, &r) < 0) return NULL

/* Binds a call as CPython binds a function written in Python (torch writes these in Python:
 * Tensor.__len__, is_tensor, _StorageBase.size...) whose n parameters, names[0..n), are all
 * required, the first posonly positional-only, the others positional-or-keyword; out[0..n) get
 * borrowed references. self_cls: the class of
 * self for a method (counted as one more parameter, and named before the function: "Tensor.
 * __len__"), NULL for a function. -1 with CPython's own TypeError ("f() takes 1 positional
 * argument but 2 were given", "f() missing 1 required positional argument: 'obj'", "f() got an
 * unexpected keyword argument 'foo'", "f() got multiple values for argument 'obj'"). */
int pyc10_bind_python(PyObject *self_cls, const char *fn, const char *const *names, int n,
                      int posonly, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                      PyObject **out);

/* Raises cls (fallback before pyc10 set its classes) with a formatted message; NULL. */
PyObject *pyc10_raise_in(PyObject *cls, PyObject *fallback, const char *fmt, ...);
#define RUNTIME_ERROR(...) pyc10_raise_in(pa_cls.runtime_error, PyExc_RuntimeError, __VA_ARGS__)
#define TYPE_ERROR(...)    pyc10_raise_in(pa_cls.type_error, PyExc_TypeError, __VA_ARGS__)
#define VALUE_ERROR(...)   pyc10_raise_in(pa_cls.value_error, PyExc_ValueError, __VA_ARGS__)
#define INDEX_ERROR(...)   pyc10_raise_in(pa_cls.index_error, PyExc_IndexError, __VA_ARGS__)
/* Raises pyc10's C10NotImplementedError (a RuntimeError) with what; NULL. */
PyObject *pyc10_not_implemented(const char *what);

/* Runs stmt with any exception in flight set aside: dropping the last reference to memory another
 * library owns runs its deleter, which may run Python code (pyc10.from_numpy's deleter; numpy's
 * and torch's DLPack deleters) that must neither see nor clear that exception (a failing call
 * dropping its temporary tensor has one set). */
#define KEEPING_ERROR(stmt)                    \
  do {                                         \
    PyObject *type_, *value_, *traceback_;     \
    PyErr_Fetch(&type_, &value_, &traceback_); \
    stmt;                                      \
    PyErr_Restore(type_, value_, traceback_);  \
  } while (0)

/* Drops a tensor reference (NULL-safe), keeping any exception in flight. */
void pyc10_release_tensor(c10c_tensor *h);
/* Stores a new reference to value in *slot, dropping the old one. */
void pyc10_replace(PyObject **slot, PyObject *value);

/* factories.c: pyc10.empty, zeros, ones, full, the *_like forms, empty_strided, tensor,
 * as_tensor, is_tensor, added to the module at init (docs from the signature table). */
int pyc10_factories_init(PyObject *module);

#define PYC10_FASTCALL(fn) (PyCFunction)(void (*)(void))(fn)

/* data.c: self.to(device, dtype), self itself where that aliases (torch's to_impl). */
PyObject *pyc10_to(PyObject *self, c10c_device device, c10c_dtype dtype);

/* ---- advindex.c: torch's advanced indexing (index tensors, lists, ndarrays, masks) ----
 * indexing.c walks an index as torch's applySlicing and records each tensor index (a new
 * reference) with the dim of the sliced view where it starts; the functions here index that view
 * with them (at::index, index_put_). */
enum { PYC10_MAX_ADV = 64 };
typedef struct {
  size_t n;
  int64_t dims[PYC10_MAX_ADV];
  c10c_tensor *tensors[PYC10_MAX_ADV];
} pyc10_adv;
/* Drops the recorded tensors (keeping any exception in flight). */
void pyc10_adv_release(pyc10_adv *a);
/* Records t (a new reference, consumed) at dim; -1 with an error. */
int pyc10_adv_add(pyc10_adv *a, int64_t dim, c10c_tensor *t);
/* Records a bool item as torch's one-element (True) or empty (False) long index. */
int pyc10_adv_add_bool(pyc10_adv *a, int64_t dim, bool value);
/* torch's treatSequenceAsTuple for a non-tuple index (with its deprecation warning): 1, 0, or -1
 * when the warning raised. */
int pyc10_adv_sequence_as_tuple(PyObject *index);
/* Whether o is exactly a numpy.ndarray. */
bool pyc10_adv_is_ndarray(PyObject *o);
/* A sequence index (list, ndarray, ...) as torch's index tensor: bool or uint8 as pyc10.tensor
 * infers it, else int64. A new reference, or NULL with the error. */
c10c_tensor *pyc10_adv_from_sequence(PyObject *seq);
/* TensorIterator's reorder_dimensions: perm[0..n), the dims innermost first, by an insertion
 * sort over nops operands' strides ops[o][d] (a 0 stride compares with nothing; equal strides
 * put the larger size outer). */
void pyc10_iter_order(size_t n, size_t nops, const int64_t *const *ops, const int64_t *sizes,
                      int64_t *perm);
/* sliced[indices]: a new tensor (a copy), or NULL with torch's error. */
c10c_tensor *pyc10_adv_get(c10c_tensor *sliced, const pyc10_adv *a);
/* sliced[indices] = value (a tensor), or = the element at number (of sliced's dtype) when value
 * is NULL; -1 with torch's error. */
int pyc10_adv_put(c10c_tensor *sliced, const pyc10_adv *a, c10c_tensor *value, const void *number);

/* memo.c: pyc10._ctensor.memo (finfo's and iinfo's calls). */
extern PyMethodDef pyc10_memo_functions[];

/* numpy.c: Tensor.numpy and __array__ (merged into TensorBase's methods), and pyc10.from_numpy
 * (in factories.c's module functions). */
extern PyMethodDef pyc10_numpy_methods[];
/* from_numpy(a): a CPU tensor over an ndarray's memory (METH_O; m unused). */
PyObject *pyc10_from_numpy(PyObject *m, PyObject *a);
/* _numpy_c_api(use): whether numpy() and __array__ go through numpy's C API table (True: where
 * it can be had) or numpy.asarray (False, for the tests of that way); returns the old setting. */
PyObject *pyc10_numpy_c_api(PyObject *m, PyObject *use);
/* Whether o is a numpy.ndarray (false, without an error, when numpy cannot be imported). */
bool pyc10_is_ndarray(PyObject *o);
/* numpy's C API table (numpy.c's comment says how it is found and checked), or NULL without
 * an error where it cannot be had. */
void **pyc10_numpy_table(void);

/* dlpack_exchange.c: DLPack's C exchange API. pyc10_from_exchange(x, copy) imports x through
 * its type's table: a new reference, NULL with an error, or Py_None (not a new reference) when x
 * has no table pyc10 reads or its memory must be ordered on a stream (the caller then goes
 * through __dlpack__). pyc10_exchange_publish(type) sets the type's __dlpack_c_exchange_api__. */
PyObject *pyc10_from_exchange(PyObject *x, int copy_wanted);
/* dlpack.c: pyc10.from_dlpack(x) (a new reference, or NULL with the error). */
PyObject *pyc10_dlpack_import(PyObject *x);
/* common.c: a just-imported tensor (DLPack, dlpack.c and dlpack_exchange.c) as a pyc10.Tensor,
 * first cloned (the import released) when clone is true: the caller asked for a copy and the
 * producer did not make one. Takes the reference; a new reference, or NULL with the error. */
PyObject *pyc10_dlpack_wrap_import(c10c_tensor *imported, bool clone);
int pyc10_exchange_publish(PyObject *type);

/* mem_handler.c: numpy's data allocator over libc10c's (pyc10.allocators.numpy's C part). */
extern PyMethodDef pyc10_mem_handler_functions[];
/* torch_oom.c: libc10c's entry points for torch's pluggable allocator, with torch's
 * out-of-memory exception (pyc10.allocators.torch's C part). */
extern PyMethodDef pyc10_torch_oom_functions[];

#endif
