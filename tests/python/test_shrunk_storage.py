"""Tensors whose storage shrank under them: every path that hands out or reads their data refuses
with the library's message, where torch 2.13 reads or writes freed memory.

None of these calls is made in torch: after ``t.untyped_storage().resize_(0)`` torch's tensor
keeps its sizes over a NULL data pointer, and ``numpy()``, ``tolist()``, ``repr``, ``__dlpack__``
and the rest read through it (a segfault), or past the end of a smaller allocation (silently
wrong, or a crash). The oracle here is the library's own check (tensor.h: "reach N bytes of its
storage, which holds M bytes now"); torch is used only to show the geometry is torch's.
"""

from __future__ import annotations

import gc
import sys
import weakref

import numpy as np
import pytest
import torch
from test_cuda import run  # type: ignore[import-not-found]

import pyc10
from pyc10._lib import lib

SHRINK_TO = [0, 8]  # bytes: no memory at all, and a smaller block (the first two floats)


def shrunk(nbytes: int) -> pyc10.Tensor:
    """A 3x4 float32 tensor (48 bytes) whose storage was resized to nbytes after it was made."""
    t = pyc10.from_numpy(np.arange(12, dtype=np.float32)).clone().view(3, 4)
    t.untyped_storage().resize_(nbytes)
    return t


def refused(call, t: pyc10.Tensor, nbytes: int) -> None:
    with pytest.raises(pyc10.C10Error) as info:
        call(t)
    assert isinstance(info.value, RuntimeError)
    assert f"of its storage, which holds {nbytes} bytes now" in str(info.value), str(info.value)


READS = {
    "data_ptr": lambda t: t.data_ptr(),
    "numpy": lambda t: t.numpy(),
    "numpy(force=True)": lambda t: t.numpy(force=True),
    "__array__": lambda t: t.__array__(),
    "np.asarray": np.asarray,
    "np.array": np.array,
    "np.asarray(dtype)": lambda t: np.asarray(t, dtype=np.float64),
    "tolist": lambda t: t.tolist(),
    "item": lambda t: t[2, 3].item(),
    "repr": repr,
    "str": str,
    "__dlpack__": lambda t: t.__dlpack__(max_version=(1, 3)),
    "__dlpack__ legacy": lambda t: t.__dlpack__(),
    "__dlpack__(copy=True)": lambda t: t.__dlpack__(max_version=(1, 3), copy=True),
    "np.from_dlpack": np.from_dlpack,
    "torch.from_dlpack": torch.from_dlpack,
    "pyc10.from_dlpack": pyc10.from_dlpack,
    "pyc10.from_dlpack(copy=True)": lambda t: pyc10.from_dlpack(t, copy=True),
    "clone": lambda t: t.clone(),
    "contiguous": lambda t: t.t().contiguous(),
    "to(dtype)": lambda t: t.to(pyc10.float64),
    "bfloat16 tolist": lambda t: t.bfloat16(),
    "copy_ from": lambda t: pyc10.empty(3, 4).copy_(t),
    "reshape (a copy)": lambda t: t.t().reshape(12),
}

WRITES = {
    "fill_": lambda t: t.fill_(1.0),
    "zero_": lambda t: t.zero_(),
    "copy_ into": lambda t: t.copy_(pyc10.ones(3, 4)),
    "__setitem__ scalar": lambda t: t.__setitem__((2, 3), 5.0),
    "__setitem__ tensor": lambda t: t.__setitem__(2, pyc10.ones(4)),
}


@pytest.mark.parametrize("nbytes", SHRINK_TO)
@pytest.mark.parametrize("name", list(READS) + list(WRITES))
def test_every_access_to_the_data_refuses_with_the_librarys_message(name, nbytes):
    t = shrunk(nbytes)
    refused({**READS, **WRITES}[name], t, nbytes)
    # the geometry is still torch's, and the storage's size what resize_ made it
    assert tuple(t.shape) == tuple(torch.empty(3, 4).shape) and t.stride() == (4, 1)
    assert t.untyped_storage().nbytes() == nbytes


def test_views_that_still_fit_work_and_the_prefix_is_kept():
    t = shrunk(8)
    head = t[0, :2]  # the two floats the smaller block kept
    assert head.tolist() == [0.0, 1.0] and head.data_ptr() == t.untyped_storage().data_ptr()
    assert np.asarray(head).tolist() == [0.0, 1.0]
    assert repr(head) == repr(torch.tensor([0.0, 1.0]))
    refused(lambda v: v.tolist(), t[0, :3], 8)  # one float too many
    empty = t[3:]  # no elements: nothing to read, wherever it sits
    assert empty.tolist() == [] and empty.data_ptr() == 0
    assert np.from_dlpack(empty).shape == (0, 4)
    t.untyped_storage().resize_(48)  # grown back: everything works again
    assert t.numpy().shape == (3, 4) and t[0, :2].tolist() == [0.0, 1.0]


def test_storage_reads_stay_inside_its_current_size():
    t = shrunk(8)
    s = t.untyped_storage()
    assert len(s.tolist()) == 8 and s.tolist() == list(np.arange(2, dtype=np.float32).tobytes())
    for index in (8, 47, -9):
        with pytest.raises(IndexError):
            s[index]
        with pytest.raises(IndexError):
            s[index] = 1
    assert s[7] == s[-1]
    t.untyped_storage().resize_(0)
    assert s.tolist() == [] and repr(s).endswith("of size 0]")
    with pytest.raises(IndexError):
        s[0]


def test_a_set_nbytes_shrink_is_refused_too():
    # c10c_storage_set_nbytes (c10's set_nbytes): a smaller size without touching the memory
    a = np.arange(12, dtype=np.float32)
    t = pyc10.from_numpy(a).view(3, 4)
    storage = t.untyped_storage()
    assert lib.c10c_storage_set_nbytes(storage._handle, 20) == 0
    refused(lambda x: x.numpy(), t, 20)
    refused(lambda x: x.__dlpack__(max_version=(1, 0)), t, 20)
    assert t[1, 0].item() == 4.0  # the fifth float is inside the 20 bytes
    assert lib.c10c_storage_set_nbytes(storage._handle, 48) == 0
    assert t.numpy().base is not None and t.tolist() == a.reshape(3, 4).tolist()


def test_cuda_array_interface_refuses_a_shrunk_cuda_tensor(stub):
    out = run(
        """
        import pyc10
        a = pyc10.zeros(3, 4, device="cuda")
        a.untyped_storage().resize_(16)
        for call in (lambda: a.__cuda_array_interface__, lambda: a.data_ptr(),
                     lambda: a.__dlpack__(max_version=(1, 0)), lambda: a.cpu()):
            try:
                call()
            except RuntimeError as e:
                print(type(e).__name__, "holds 16 bytes now" in str(e))
        print(a[0, :4].__cuda_array_interface__["shape"])
        """,
        C10C_CUDA_DRIVER=str(stub),
    )
    assert out.splitlines() == ["C10RuntimeError True"] * 4 + ["(4,)"]


def test_a_failing_call_that_frees_a_numpy_array_keeps_its_exception():
    # The call fails and drops the last tensor over the array on the way out: the storage's
    # deleter runs with the exception in flight. It used to lose it (SystemError "error return
    # without exception set") and to leak the array.
    a = np.arange(10.0)
    alive = weakref.ref(a)
    refs = sys.getrefcount(a)
    with pytest.raises(RuntimeError) as theirs:
        torch.from_numpy(a).view(3, 5)
    with pytest.raises(RuntimeError) as ours:
        pyc10.from_numpy(a).view(3, 5)
    assert isinstance(ours.value, pyc10.C10Error)
    assert str(ours.value) == str(theirs.value)
    del theirs, ours
    gc.collect()
    assert sys.getrefcount(a) == refs
    del a
    gc.collect()
    assert alive() is None


@pytest.mark.parametrize(
    "fail",
    [
        lambda t: t.view(7),
        lambda t: t.transpose(0, 5),
        lambda t: t.view(size=(7,)),  # the argument parser
        lambda t: t.as_strided((2,), (1,), -1),
        lambda t: t[99],
        lambda t: t.untyped_storage()[99],  # a temporary storage over the array, dropped
        lambda t: pyc10.from_dlpack(t.__dlpack__(max_version=(1, 0)), device="meta"),
    ],
)
def test_every_failing_path_keeps_its_exception_and_frees_the_array(fail):
    a = np.arange(10.0)
    alive = weakref.ref(a)
    with pytest.raises(pyc10.C10Error):
        fail(pyc10.from_numpy(a))
    del a
    gc.collect()
    assert alive() is None


def test_a_numpy_import_dropped_during_an_exception_keeps_it():
    # numpy's DLPack deleter runs when the last pyc10 tensor over an import goes
    a = np.arange(6.0)
    alive = weakref.ref(a)
    with pytest.raises(IndexError):
        pyc10.from_dlpack(a)[7]
    del a
    gc.collect()
    assert alive() is None
