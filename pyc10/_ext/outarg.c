/* out= of the factories, arange, cat and stack: the out tensor checked against a factory's
 * options as torch's check_out_type_matches, and resized as ATen's resize_ and resize_output
 * (with torch's deprecation warning), through the tensor's own resize_ method (inplace.c) so
 * that every holder of the Python object sees the new geometry.
 */
#include <stdio.h>
#include <string.h>

#include "common.h"

void pyc10_sizes_text(char *buf, size_t cap, const int64_t *s, size_t n) {
  size_t used = (size_t)snprintf(buf, cap, "[");
  for (size_t i = 0; i < n && used < cap; i++)
    used += (size_t)snprintf(buf + used, cap - used, i ? ", %lld" : "%lld", (long long)s[i]);
  if (used < cap) snprintf(buf + used, cap - used, "]");
}

int pyc10_out_arg(const pa_args *r, int i, int first, PyObject **out) {
  *out = NULL;
  if (!pa_has(r, i) || r->obj[i] == Py_None) return 0;
  c10c_tensor *h = pyc10_handle(r->obj[i]);
  if (h == NULL) return -1;
  int dtype, layout;
  c10c_device device;
  bool has_device, grad;
  /* pin_memory is not read: torch ignores it when out= is given */
  if (pa_dtype(r, first, &dtype) < 0 || pa_layout(r, first + 1, &layout) < 0 ||
      pa_device(r, first + 2, &device, &has_device) < 0 || pa_bool(r, first + 4, &grad) < 0)
    return -1;
  c10c_dtype have = c10c_tensor_dtype(h);
  if (dtype >= 0 && (c10c_dtype)dtype != have) {
    RUNTIME_ERROR("dtype %s does not match dtype of out parameter (%s)",
                  c10c_dtype_c10_name((c10c_dtype)dtype), c10c_dtype_c10_name(have));
    return -1;
  }
  if (layout >= 0 && layout != C10C_LAYOUT_STRIDED) {
    pyc10_not_implemented(
        "pyc10 tensors are strided: layouts other than pyc10.strided are not implemented");
    return -1;
  }
  c10c_device_type at = c10c_tensor_device(h).type;
  if (has_device && device.type != at) {
    const char *want = c10c_device_type_name(device.type, true);
    const char *got = c10c_device_type_name(at, true);
    RUNTIME_ERROR("device type %s does not match device type of out parameter (%s)",
                  want ? want : "?", got ? got : "?");
    return -1;
  }
  if (grad) {
    pyc10_not_implemented("requires_grad=True: pyc10 has no autograd");
    return -1;
  }
  *out = r->obj[i];
  return 0;
}

int pyc10_resize_(PyObject *out, const int64_t *sizes, size_t n, int format) {
  static PyObject *resize_name, *format_name;
  if (resize_name == NULL && (resize_name = PyUnicode_InternFromString("resize_")) == NULL)
    return -1;
  if (format_name == NULL && (format_name = PyUnicode_InternFromString("memory_format")) == NULL)
    return -1;
  PyObject *shape = PyTuple_New((Py_ssize_t)n);
  if (shape == NULL) return -1;
  for (size_t i = 0; i < n; i++) {
    PyObject *v = PyLong_FromLongLong(sizes[i]);
    if (v == NULL) {
      Py_DECREF(shape);
      return -1;
    }
    PyTuple_SetItem(shape, (Py_ssize_t)i, v);
  }
  PyObject *fmt = NULL;
  if (format == C10C_MEMORY_FORMAT_CHANNELS_LAST || format == C10C_MEMORY_FORMAT_CHANNELS_LAST_3D) {
    fmt = PyDict_GetItemString(pa_cls.formats_by_name, format == C10C_MEMORY_FORMAT_CHANNELS_LAST
                                                           ? "channels_last"
                                                           : "channels_last_3d");
    if (fmt == NULL) {
      Py_DECREF(shape);
      RUNTIME_ERROR("pyc10: memory formats are not set up");
      return -1;
    }
  }
  PyObject *call[3] = {out, shape, fmt};
  PyObject *kw = NULL;
  if (fmt != NULL && (kw = PyTuple_Pack(1, format_name)) == NULL) {
    Py_DECREF(shape);
    return -1;
  }
  PyObject *res = PyObject_VectorcallMethod(resize_name, call, 2, kw);
  Py_XDECREF(kw);
  Py_DECREF(shape);
  if (res == NULL) return -1;
  Py_DECREF(res);
  return 0;
}

int pyc10_resize_output(PyObject *out, const int64_t *sizes, size_t n, int format, bool meta) {
  c10c_tensor *h = pyc10_handle(out);
  if (h == NULL) return -1;
  size_t have = c10c_tensor_dim(h);
  const int64_t *hs = c10c_tensor_sizes(h);
  if (have == n && (n == 0 || memcmp(hs, sizes, n * sizeof *sizes) == 0)) return 0;
  if (c10c_tensor_numel(h) != 0) {
    char was[512], want[512], text[1536];
    pyc10_sizes_text(was, sizeof was, hs, have);
    pyc10_sizes_text(want, sizeof want, sizes, n);
    /* torch's meta kernels resize in Python (torch/_prims_common/wrappers.py), whose message
     * prints torch.Size and leaves its second placeholder unformatted */
    if (meta)
      snprintf(text, sizeof text,
               "An output with one or more elements was resized since it had shape "
               "torch.Size(%s) which does not match the required output shape {str(shape)}. ",
               was);
    else
      snprintf(text, sizeof text,
               "An output with one or more elements was resized since it had shape %s, which "
               "does not match the required output shape %s. ",
               was, want);
    PyObject *msg = PyUnicode_FromFormat(
        "%sThis behavior is deprecated, and in a future PyTorch release outputs will not be "
        "resized unless they have zero elements. You can explicitly reuse an out tensor t by "
        "resizing it, inplace, to zero elements with t.resize_(0).",
        text);
    if (msg == NULL) return -1;
    const char *utf8 = PyUnicode_AsUTF8AndSize(msg, NULL);
    int rc = utf8 == NULL ? -1 : PyErr_WarnEx(PyExc_UserWarning, utf8, 1);
    Py_DECREF(msg);
    if (rc < 0) return -1;
  }
  if (pyc10_resize_(out, sizes, n, format) < 0) return -1;
  return 1;
}
