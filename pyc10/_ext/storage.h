/* What storage.c (the StorageBase type, its one-object-per-storage map, construction and
 * _setup) and storage_methods.c (its methods and mapping protocol) share; nothing else includes
 * this file. */
#ifndef PYC10_STORAGE_H
#define PYC10_STORAGE_H

#include "common.h"

typedef struct {
  PyObject_HEAD c10c_storage *s; /* one strong reference, released in tp_dealloc */
  PyObject *handle;              /* the pointer as a cffi cdata, made on first use */
  PyObject *weakreflist;
} StorageObject;

#define TYPE_ERROR_CLASS  (pa_cls.type_error != NULL ? pa_cls.type_error : PyExc_TypeError)
#define VALUE_ERROR_CLASS (pa_cls.value_error != NULL ? pa_cls.value_error : PyExc_ValueError)
#define RUNTIME_ERROR_CLASS \
  (pa_cls.runtime_error != NULL ? pa_cls.runtime_error : PyExc_RuntimeError)
#define INDEX_ERROR_CLASS (pa_cls.index_error != NULL ? pa_cls.index_error : PyExc_IndexError)

/* ---- storage.c ---- */

/* pyc10.C10NotImplementedError once _setup ran, else NULL. */
extern PyObject *storage__not_implemented;
/* StorageBase itself (before _setup). */
extern PyTypeObject *storage__base_type;
/* A new object of type owning s (a new reference, released if the object cannot be made). */
PyObject *storage__wrap_owned(PyTypeObject *type, c10c_storage *s);
/* self's storage, or NULL with a RuntimeError (an object that holds none). */
c10c_storage *storage__of(PyObject *self);
/* A new storage of nbytes on device from its installed allocator. */
c10c_status storage__new(c10c_storage **out, int64_t nbytes, c10c_device device);
/* pyc10.UntypedStorage once _setup ran, else StorageBase. */
PyTypeObject *storage__default_type(void);
/* Raises cls with fmt, whose one %U is o's torch type name; NULL. */
PyObject *storage__raise_with_type(PyObject *cls, const char *fmt, PyObject *o);
/* THPUtils_checkLong: an int (not bool) or a numpy integer. */
bool storage__check_long(PyObject *o);
/* StorageBase._setup(cls, make_handle, make_device, not_implemented). */
PyObject *storage__setup(PyObject *cls, PyObject *args);
/* dst's bytes from src's (same size, any devices); -1 with an error. */
int storage__copy_bytes(c10c_storage *dst, c10c_storage *src);
/* StorageBase's tp_new, tp_dealloc and attributes, which storage_methods.c's type spec names. */
PyObject *storage__tp_new(PyTypeObject *type, PyObject *args, PyObject *kwargs);
void storage__dealloc(PyObject *self);
extern PyGetSetDef storage__getset[];

/* ---- storage_methods.c ---- */
/* StorageBase's methods (NULL-terminated; _setup's entry included). */
extern PyMethodDef storage__methods[];
/* The iteration and mapping slots: iter(s), len(s), s[i] / s[a:b], s[i] = v. */
PyObject *storage__iter(PyObject *self);
Py_ssize_t storage__length(PyObject *self);
PyObject *storage__getitem(PyObject *self, PyObject *index);
int storage__setitem(PyObject *self, PyObject *index, PyObject *value);

#endif
