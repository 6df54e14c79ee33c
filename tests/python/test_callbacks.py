"""Every place libc10c calls back into Python keeps Python's exception state whole.

The storage deleter of memory a Python object owns (``pyc10.from_numpy``'s: C in
pyc10/_ext/factories.c, which drops the array with the GIL held and any exception set aside;
earlier a cffi ``extern "Python"`` function, whose tests below skip themselves now) runs
wherever the last reference
to such a storage goes: a tensor or ``UntypedStorage`` dropped while an exception unwinds, a
DLPack capsule or consumer, a thread that does not hold the GIL, a thread Python never saw. Other
libraries' DLPack deleters (numpy's, torch's) run the same way under an import.

(a) An exception already in flight when the deleter runs is set aside and restored: the caller
    sees its own exception, never a SystemError, and the array is freed. pyc10's own releases
    (TensorBase's tp_dealloc in _ext/common.c, the DLPack capsule destructor, cffi's ffi.gc) and
    numpy's and torch's deleters set it aside before they release too; the deleter's own bracket
    is what keeps it for any other C caller (the test with a C shim).
(b) An exception raised inside the deleter cannot reach any caller (a deleter returns nothing,
    and runs wherever the last reference happens to go): it is reported through
    ``sys.unraisablehook``, as Python reports one raised by ``__del__``, naming the callback;
    the exception in flight, if any, is kept.
"""

from __future__ import annotations

import ctypes
import gc
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import threading
import weakref

import numpy as np
import pytest
import torch

import pyc10
from pyc10 import _tensor
from pyc10._lib import ffi, lib


def _freed(alive):
    gc.collect()
    return alive() is None


def test_view_failure_dropping_a_from_numpy_tensor_raises_torchs_error():
    a = np.arange(12.0)
    refs = sys.getrefcount(a)
    with pytest.raises(RuntimeError) as theirs:
        torch.from_numpy(a).view(2, 5)
    with pytest.raises(RuntimeError) as ours:
        pyc10.from_numpy(a).view(2, 5)
    assert type(ours.value) is pyc10.C10RuntimeError
    assert str(ours.value) == str(theirs.value) == "shape '[2, 5]' is invalid for input of size 12"
    del ours, theirs
    assert sys.getrefcount(a) == refs


def _raise_holding(make, a):
    # The frame's locals are dropped while KeyError unwinds: the deleter runs with it in flight.
    held = make(a)  # noqa: F841
    raise KeyError("the caller's own")


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda a: pyc10.from_numpy(a), id="tensor"),
        pytest.param(lambda a: pyc10.from_numpy(a)[1:5].t(), id="view"),
        pytest.param(lambda a: pyc10.from_numpy(a).untyped_storage(), id="UntypedStorage"),
        pytest.param(lambda a: pyc10.from_numpy(a).__dlpack__(), id="unconsumed-capsule"),
        pytest.param(lambda a: torch.from_dlpack(pyc10.from_numpy(a)), id="torch-consumer"),
        pytest.param(lambda a: np.from_dlpack(pyc10.from_numpy(a)), id="numpy-consumer"),
        pytest.param(lambda a: pyc10.from_dlpack(a), id="numpy-import"),
        pytest.param(lambda a: pyc10.from_dlpack(torch.from_numpy(a)), id="torch-import"),
    ],
)
def test_deleter_run_while_an_exception_unwinds_keeps_it(make):
    a = np.arange(12.0)
    alive, refs = weakref.ref(a), sys.getrefcount(a)
    with pytest.raises(KeyError, match="the caller's own"):
        _raise_holding(make, a)
    gc.collect()
    assert sys.getrefcount(a) == refs
    del a
    assert _freed(alive)


def _release_address():
    return int(ffi.cast("uintptr_t", ffi.addressof(lib, "c10c_storage_release")))


def _release_fn():
    # c10c_storage_release called through ctypes, which releases the GIL around the call.
    return ctypes.CFUNCTYPE(None, ctypes.c_void_p)(_release_address())


def _last_storage_reference(a):
    # A reference to the storage over a that only C holds: the deleter runs when it goes.
    t = pyc10.from_numpy(a)
    handle = lib.c10c_storage_retain(t.untyped_storage()._handle)
    del t
    gc.collect()
    return int(ffi.cast("uintptr_t", handle))


def test_deleter_run_without_the_gil_takes_it():
    a = np.arange(12.0)
    alive, refs = weakref.ref(a), sys.getrefcount(a)
    handle = _last_storage_reference(a)
    assert sys.getrefcount(a) == refs + 1
    _release_fn()(handle)
    assert sys.getrefcount(a) == refs
    del a
    assert _freed(alive)


def test_deleter_run_on_a_thread_python_never_saw():
    # A DLPack consumer may drop its reference on a thread of its own: the deleter gets a thread
    # state and the GIL (this thread waits in pthread_join with the GIL released).
    libc = ctypes.CDLL(None)
    a = np.arange(12.0)
    alive, refs = weakref.ref(a), sys.getrefcount(a)
    handle = _last_storage_reference(a)
    start = ctypes.c_void_p(_release_address())
    tid = ctypes.c_ulong()
    assert libc.pthread_create(ctypes.byref(tid), None, start, ctypes.c_void_p(handle)) == 0
    assert libc.pthread_join(tid, None) == 0
    assert sys.getrefcount(a) == refs
    del a
    assert _freed(alive)


SHIM = """
#include <Python.h>
/* A consumer's release as any C code may make it: with an exception set on the calling thread
 * (and the GIL held). */
void release_with_an_exception_set(void (*release)(void *), void *handle) {
  PyErr_SetString(PyExc_KeyError, "set before the release");
  release(handle);
}
"""


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_deleter_run_by_c_code_with_an_exception_set_keeps_it(tmp_path):
    # numpy's and torch's deleters, pyc10's own releases and cffi's ffi.gc all set an exception
    # aside before they release; any other C caller may not: the deleter itself keeps it.
    (tmp_path / "shim.c").write_text(SHIM)
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-I", sysconfig.get_paths()["include"], "shim.c", "-o",
         "shim.so"],
        cwd=tmp_path,
        check=True,
    )  # fmt: skip
    shim = ctypes.PyDLL(str(tmp_path / "shim.so"))  # keeps the GIL, raises what is set after
    shim.release_with_an_exception_set.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    a = np.arange(12.0)
    alive, refs = weakref.ref(a), sys.getrefcount(a)
    handle = _last_storage_reference(a)
    with pytest.raises(KeyError, match="set before the release"):
        shim.release_with_an_exception_set(_release_address(), handle)
    assert sys.getrefcount(a) == refs
    del a
    assert _freed(alive)


def test_deleters_run_on_many_python_threads():
    a = np.arange(12.0)
    refs = sys.getrefcount(a)
    tensors = [pyc10.from_numpy(a) for _ in range(32)]
    threads = [threading.Thread(target=tensors.pop) for _ in range(32)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sys.getrefcount(a) == refs


class _FailingOwners(dict):
    """Stands in for pyc10's table of owners: dropping an owner raises."""

    def pop(self, *args):
        raise ValueError("raised inside the deleter")


@pytest.fixture
def failing_deleter(monkeypatch):
    """Every pyc10_release_owner call raises; yields what sys.unraisablehook received."""
    if not hasattr(_tensor, "_owners"):
        pytest.skip("from_numpy's deleter runs no Python code of pyc10's any more")
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    monkeypatch.setattr(_tensor, "_owners", _FailingOwners(_tensor._owners))
    yield reported


def _check_reported(reported, capfd):
    assert len(reported) == 1
    (report,) = reported
    assert report.exc_type is ValueError
    assert str(report.exc_value) == "raised inside the deleter"
    assert "pyc10_release_owner" in report.err_msg
    assert capfd.readouterr().err == ""  # reported through the hook, not written by cffi


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda a: pyc10.from_numpy(a), id="tensor"),
        pytest.param(lambda a: pyc10.from_numpy(a).untyped_storage(), id="UntypedStorage"),
        pytest.param(lambda a: pyc10.from_numpy(a).__dlpack__(), id="unconsumed-capsule"),
        pytest.param(lambda a: torch.from_dlpack(pyc10.from_numpy(a)), id="torch-consumer"),
    ],
)
def test_exception_raised_inside_the_deleter_is_reported_as_unraisable(
    make, failing_deleter, capfd
):
    a = np.arange(12.0)
    held = make(a)
    del held
    gc.collect()
    _check_reported(failing_deleter, capfd)


def test_exception_raised_inside_the_deleter_leaves_the_callers_exception(failing_deleter, capfd):
    a = np.arange(12.0)
    with pytest.raises(RuntimeError, match=r"shape '\[2, 5\]' is invalid for input of size 12"):
        pyc10.from_numpy(a).view(2, 5)
    _check_reported(failing_deleter, capfd)


def test_exception_raised_inside_the_deleter_with_none_in_flight_sets_none(failing_deleter, capfd):
    # After a deleter that raised, the caller goes on as if it had succeeded.
    a = np.arange(12.0)
    assert pyc10.from_numpy(a).view(3, 4).shape == (3, 4)
    _check_reported(failing_deleter, capfd)


def test_tensors_over_python_memory_alive_at_exit_shut_down_quietly(tmp_path):
    # Deleters that run while the interpreter is finalizing (module globals, a reference cycle
    # the last collection finds) neither crash nor print.
    code = textwrap.dedent("""
        import numpy as np, torch, pyc10
        import pyc10._tensor as T

        class Cycle:
            pass

        c = Cycle()
        c.self = c
        c.t = pyc10.from_numpy(np.ones(4))
        c.s = pyc10.from_numpy(np.ones(5)).untyped_storage()
        c.capsule = pyc10.from_numpy(np.ones(6)).__dlpack__()
        c.torch = torch.from_dlpack(pyc10.from_numpy(np.ones(7)))
        t = pyc10.from_numpy(np.arange(12.0))
        T.kept = pyc10.from_numpy(np.ones(3))
        del c
    """)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
