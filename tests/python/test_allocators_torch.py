"""pyc10.allocators.torch and .cupy without a GPU: libc10c's pluggable entry points called as
torch's CUDAPluggableAllocator calls them (ctypes over the library's path, raw stream handles),
over the stand-in driver, and what the module gives that torch cannot ask a pluggable allocator
for (statistics under torch's keys, snapshots torch's tools read, planning steps). The install
itself needs torch's CUDA build and a GPU: tests/gpu/check.sh runs it for real.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys

import pytest
import torch
from test_cuda_parity import run, torch_stats_keys

import pyc10
import pyc10.allocators.torch as pt

TORCH_HAS_CUDA = hasattr(torch._C, "_cuda_customAllocator")


def test_the_entry_points_are_found_as_torch_finds_them():
    # CUDAPluggableAllocator: ctypes.CDLL(path), then the two names' addresses
    lib = ctypes.CDLL(pyc10.get_library_path())
    for name in (pt.MALLOC, pt.FREE, "c10c_cuda_pluggable_record_stream"):
        assert ctypes.cast(getattr(lib, name), ctypes.c_void_p).value


def test_use_says_why_it_cannot_install_here():
    env = {k: v for k, v in os.environ.items() if k != "C10C_CUDA_DRIVER"}
    env["C10C_CUDA_DRIVER"] = "/nonexistent/libcuda.so.1"
    code = (
        "import pyc10.allocators.torch as pt, torch\n"
        "try:\n    pt.use()\nexcept RuntimeError as e:\n    print(e)\n"
        "print(pt.is_used(), torch.cuda.memory._get_current_allocator is not None)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/", check=True
    ).stdout.splitlines()
    if TORCH_HAS_CUDA:  # the CUDA build pip gives users, on a machine without a driver
        assert out[0].startswith("libc10c cannot use CUDA: ")
    else:
        assert out[0] == (
            f"torch {torch.__version__} was built without CUDA: it has no "
            "pluggable CUDA allocator to install"
        )
    assert out[1] == "False True"


def test_record_stream_refuses_a_tensor_off_the_gpu():
    with pytest.raises(ValueError, match="record_stream: the tensor is on cpu"):
        pt.record_stream(torch.zeros(2), 0)


PLUGGABLE = """
    import ctypes, pickle, json
    import pyc10, pyc10.allocators.torch as pt
    lib = ctypes.CDLL(pyc10.get_library_path())
    malloc, free = lib.c10c_cuda_pluggable_malloc, lib.c10c_cuda_pluggable_free
    malloc.restype = ctypes.c_void_p
    malloc.argtypes = [ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p]
    free.argtypes = [ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p]
    stream = ctypes.c_void_p(pyc10.cuda.Stream(0).cuda_stream)  # a raw handle, as torch passes
    pt._record_memory_history(max_entries=1000)
    a = malloc(1000, 0, stream)
    b = malloc(3 << 20, 0, stream)
    s = pt.memory_stats(0)
    print(json.dumps(sorted(s)))
    print(s["allocation.all.current"], s["requested_bytes.all.current"], pt.memory_allocated(0))
    segs = pt.memory_snapshot()
    print(sorted(blk["address"] for seg in segs for blk in seg["blocks"]
                 if blk["state"] == "active_allocated") == sorted([a, b]))
    print({seg["stream"] for seg in segs} == {stream.value})
    pt._dump_snapshot(PATH)
    free(a, 1000, 0, stream)
    free(b, 3 << 20, 0, stream)
    print(pt.memory_allocated(0), pt.memory_reserved(0) > 0)
    pt.empty_cache()
    print(pt.memory_reserved(0), pt.max_memory_reserved(0) > 0)
    pyc10.cuda.memory.set_allocator_settings("planning:True")
    for step in range(6):
        live = [malloc(n, 0, stream) for n in (1 << 20, 4096, 5 << 20)]
        for p, n in zip(live, (1 << 20, 4096, 5 << 20)):
            free(p, n, 0, stream)
        pt.step(0)
    s = pt.memory_stats(0)
    print(s["plan.rebuilds"] >= 1, s["plan.served"] > 0)
    print(pt.memory_summary(0).splitlines()[1].strip("| "))
"""


def test_torchs_calls_are_served_and_shown_in_torchs_formats(stub, tmp_path):
    from torch.cuda import _memory_viz

    path = tmp_path / "snap.pickle"
    out = run(stub, PLUGGABLE.replace("PATH", repr(str(path))))
    keys = set(__import__("json").loads(out[0]))
    assert torch_stats_keys() <= keys  # torch's 123 keys (and ours beside them)
    assert out[1:] == [
        "2 3146728 3146752",
        "True",
        "True",
        "0 True",
        "0 True",
        "True True",
        "libc10c CUDA memory summary, device ID 0",
    ]
    import pickle

    with open(path, "rb") as f:
        snapshot = pickle.load(f)
    assert "segments: " in _memory_viz.segsum(snapshot)
    assert "alloc" in _memory_viz.trace(snapshot)


def test_cupy_without_cupy_says_so():
    import importlib.util

    import pyc10.allocators.cupy as pc

    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed: tests/gpu/check.sh runs it on a GPU")
    with pytest.raises(RuntimeError, match=r"pyc10.allocators.cupy needs CuPy \(import cupy"):
        pc.use()


# A binding as torch's are made (a C++ function whose errors are caught by HANDLE_TH_ERRORS):
# python_error, which carries a Python exception already made, is restored and raised as it is;
# another std::exception becomes a RuntimeError with its what(). python_error's layout is that
# of torch/csrc/Exceptions.h. The GIL is released around the call, as torch's bindings do.
CATCH_SITE = r"""
#include <Python.h>
#include <exception>
#include <stdexcept>
#include <string>

struct python_error : public std::exception {
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  std::string message;
  const char *what() const noexcept override { return message.c_str(); }
  void restore() {
    if (!type) return;
    Py_XINCREF(type);
    Py_XINCREF(value);
    Py_XINCREF(traceback);
    PyErr_Restore(type, value, traceback);
  }
};

struct without_gil {
  PyThreadState *state = PyEval_SaveThread();
  ~without_gil() { PyEval_RestoreThread(state); }
};

typedef void *(*malloc_fn)(size_t, int, void *);

static void *call(PyObject *args) {
  unsigned long long fn, size;
  int device;
  if (!PyArg_ParseTuple(args, "KKi", &fn, &size, &device)) throw std::runtime_error("args");
  without_gil released;
  return reinterpret_cast<malloc_fn>(fn)(size, device, nullptr);
}

static PyObject *as_binding(PyObject *, PyObject *args) {
  try {
    return PyLong_FromVoidPtr(call(args));
  } catch (python_error &e) {
    e.restore();
    return nullptr;
  } catch (const std::exception &e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
}

static PyObject *as_worker(PyObject *, PyObject *args) {  // autograd's threads: std::exception
  try {
    return PyLong_FromVoidPtr(call(args));
  } catch (const std::exception &e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
}

static PyMethodDef methods[] = {{"as_binding", as_binding, METH_VARARGS, nullptr},
                                {"as_worker", as_worker, METH_VARARGS, nullptr},
                                {nullptr, nullptr, 0, nullptr}};
static PyModuleDef def = {PyModuleDef_HEAD_INIT, "catch_site", nullptr, -1, methods};
PyMODINIT_FUNC PyInit_catch_site(void) { return PyModule_Create(&def); }
"""

OOM_SCRIPT = """
    import ctypes, sys
    import torch
    import pyc10.allocators.torch as pt
    from pyc10._ctensor import _torch_allocator
    sys.path.insert(0, SITE)
    import catch_site
    cxx = pt._cxx_runtime(torch)
    print(all(cxx))
    malloc, free = _torch_allocator(*cxx, torch.cuda.OutOfMemoryError)
    refs = sys.getrefcount(torch.cuda.OutOfMemoryError)
    p = catch_site.as_binding(malloc, 1000, 0)
    print(p != 0)
    for call in (catch_site.as_binding, catch_site.as_worker):
        for size, device in ((1 << 50, 0), (16, 7)):
            try:
                call(malloc, size, device)
            except Exception as e:
                print(type(e).__name__, str(e).split(";")[0].split(". GPU")[0])
    print(sys.getrefcount(torch.cuda.OutOfMemoryError) - refs)
    ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p)(free)(
        p, 1000, 0, None
    )
    print(pt.memory_allocated(0))
"""


def test_a_failed_allocation_is_raised_as_torch_raises_it(stub, tmp_path):
    import shutil
    import sysconfig

    cxx = shutil.which(os.environ.get("CXX", "c++"))
    if cxx is None:
        pytest.skip("no C++ compiler to build the catch site")
    src = tmp_path / "catch_site.cpp"
    src.write_text(CATCH_SITE)
    site = tmp_path / ("catch_site" + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run(
        [
            cxx,
            "-shared",
            "-fPIC",
            "-O1",
            f"-I{sysconfig.get_paths()['include']}",
            str(src),
            "-o",
            str(site),
        ],
        check=True,
    )
    out = run(stub, OOM_SCRIPT.replace("SITE", repr(str(tmp_path))))
    assert out == [
        "True",
        "True",
        "OutOfMemoryError CUDA out of memory. Tried to allocate 1024.00 TiB",
        "RuntimeError CUDA error: invalid device ordinal (device 7",
        "RuntimeError CUDA out of memory. Tried to allocate 1024.00 TiB",
        "RuntimeError CUDA error: invalid device ordinal (device 7",
        "0",
        "0",
    ]
