/* What the files of pyc10._ctensor share: the tensor object's layout and the few helpers every
 * method needs (wrapping a new tensor, raising a library error with pyc10's classes). The tensor
 * type itself is in tensor.c; methods by concern in views.c, ...; the parser in argparse.c. */
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
} TensorObject;

/* The default dtype's code (pyc10.set_default_dtype; float32 until set). */
extern int pyc10_default_dtype;

/* This thread's default device for factories (pyc10.set_default_device; the CPU until set). */
c10c_device pyc10_default_device(void);

/* A new pyc10.Tensor owning h (a new reference; released if the object cannot be made). */
PyObject *pyc10_wrap(c10c_tensor *h);
/* Raises the pyc10 exception for a library status; returns NULL. */
PyObject *pyc10_raise(c10c_status st);
/* The tensor a call made in *out, or its error. */
PyObject *pyc10_result(c10c_status st, c10c_tensor *const *out);
/* self's tensor, or NULL with an error. */
c10c_tensor *pyc10_handle(PyObject *self);
/* A pyc10.Size of n sizes (size.c). */
PyObject *pyc10_size_new(const int64_t *sizes, size_t n);
/* Makes the pyc10.Size type (once, at module init); a new reference. */
PyObject *pyc10_size_type_create(void);
/* A tuple of tensors made from the n handles (all released on failure). */
PyObject *pyc10_wrap_tuple(c10c_tensor **hs, size_t n);

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

/* factories.c: pyc10.empty, zeros, ones, full, the *_like forms, empty_strided, tensor,
 * as_tensor, is_tensor, added to the module at init (docs from the signature table). */
int pyc10_factories_init(PyObject *module);

#define PYC10_FASTCALL(fn) (PyCFunction)(void (*)(void))(fn)

#endif
