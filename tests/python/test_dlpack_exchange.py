"""DLPack's C exchange API (DLPack 1.3's DLPackExchangeAPI): pyc10.Tensor publishes a table as
torch 2.13 does, and pyc10.from_dlpack / as_tensor / tensor read a producer's table (torch's)
before __dlpack__. torch is the oracle: its own table is called through ctypes to hand tensors
to pyc10's and back, and pyc10's results are compared with torch.from_dlpack's.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
import torch
from test_dlpack import _DLTensor as DLTensor

import pyc10

ctypes.pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
ctypes.pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
ctypes.pythonapi.PyCapsule_New.restype = ctypes.py_object
ctypes.pythonapi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

# the table's functions are called holding the GIL (PYFUNCTYPE: CFUNCTYPE would release it)
FROM_PY = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(ctypes.c_void_p))
TO_PY = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.py_object))
STREAM = ctypes.PYFUNCTYPE(
    ctypes.c_int, ctypes.c_int, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p)
)
SET_ERROR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
ALLOCATE = ctypes.PYFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, SET_ERROR
)


class Table(ctypes.Structure):
    """DLPackExchangeAPI as dlpack.h 1.3 lays it out."""

    _fields_ = [
        ("major", ctypes.c_uint32),
        ("minor", ctypes.c_uint32),
        ("prev_api", ctypes.c_void_p),
        ("allocator", ctypes.c_void_p),
        ("from_py", ctypes.c_void_p),
        ("to_py", ctypes.c_void_p),
        ("dltensor_from_py", ctypes.c_void_p),
        ("current_work_stream", ctypes.c_void_p),
    ]


def table(cls: type) -> Table:
    capsule = cls.__dlpack_c_exchange_api__
    return Table.from_address(
        ctypes.pythonapi.PyCapsule_GetPointer(capsule, b"dlpack_exchange_api")
    )


def test_pyc10_publishes_a_table_as_torch_does():
    ours, theirs = table(pyc10.Tensor), table(torch.Tensor)
    assert (ours.major, ours.minor) == (1, 3) == (theirs.major, theirs.minor)
    assert ours.prev_api is None
    assert ours.allocator and ours.from_py and ours.to_py and ours.current_work_stream
    assert ours.dltensor_from_py is None  # optional in the specification: left out
    stream = ctypes.c_void_p(123)
    assert STREAM(ours.current_work_stream)(1, 0, ctypes.byref(stream)) == 0  # kDLCPU
    assert stream.value is None


def handoff(producer: Table, consumer: Table, x: object) -> object:
    """x exported by producer's table and imported by consumer's, as a C consumer does."""
    managed = ctypes.c_void_p()
    assert FROM_PY(producer.from_py)(x, ctypes.byref(managed)) == 0
    out = ctypes.py_object()
    assert TO_PY(consumer.to_py)(managed, ctypes.byref(out)) == 0
    return out.value


def test_tensors_cross_both_tables_without_a_copy():
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)[:, 1:3]
    p = handoff(table(torch.Tensor), table(pyc10.Tensor), t)
    assert isinstance(p, pyc10.Tensor)
    assert p.data_ptr() == t.data_ptr() and p.stride() == t.stride() and p.tolist() == t.tolist()
    back = handoff(table(pyc10.Tensor), table(torch.Tensor), p)
    assert isinstance(back, torch.Tensor) and back.data_ptr() == t.data_ptr()
    assert back.stride() == t.stride() and torch.equal(back, t)
    del t, back
    assert p.tolist() == [[1.0, 2.0], [5.0, 6.0], [9.0, 10.0]]  # memory held by the export


def test_the_allocator_makes_a_tensor_of_the_prototype():
    shape = (ctypes.c_int64 * 2)(2, 5)
    proto = DLTensor(None, 1, 0, 2, 2, 64, 1, shape, None, 0)  # float64 (2, 5) on the CPU
    managed, errors = ctypes.c_void_p(), []
    set_error = SET_ERROR(lambda ctx, kind, msg: errors.append((kind, msg)))
    ours = table(pyc10.Tensor)
    assert (
        ALLOCATE(ours.allocator)(ctypes.addressof(proto), ctypes.byref(managed), None, set_error)
        == 0
    )
    out = ctypes.py_object()
    assert TO_PY(ours.to_py)(managed, ctypes.byref(out)) == 0
    assert out.value.shape == (2, 5) and out.value.dtype == pyc10.float64 and not errors
    bad = DLTensor(None, 1, 0, 1, 7, 8, 1, shape, None, 0)  # a dtype code DLPack does not have
    assert (
        ALLOCATE(ours.allocator)(ctypes.addressof(bad), ctypes.byref(managed), None, set_error)
        == -1
    )
    assert managed.value is None and errors == [(b"BufferError", b"Unsupported code 7")]


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.arange(16.0),
        lambda: torch.ones(2, 3, dtype=torch.bfloat16),
        lambda: torch.arange(24).reshape(2, 3, 4).permute(2, 0, 1),
        lambda: torch.tensor(3.5),
        lambda: torch.empty(0, 5),
        lambda: torch.ones(3, dtype=torch.uint32),
        lambda: torch.tensor([1 + 2j]).conj().imag,  # the negative bit: __dlpack__ resolves it
    ],
)
def test_from_dlpack_of_torch_tensors_is_what_torch_gives(make):
    t = make()
    ours, theirs = pyc10.from_dlpack(t), torch.from_dlpack(t)
    assert ours.shape == theirs.shape and ours.stride() == theirs.stride()
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    assert ours.data_ptr() == theirs.data_ptr()
    assert np.array_equal(
        ours.float().numpy() if ours.numel() else ours.numpy(),
        theirs.float().numpy() if theirs.numel() else theirs.numpy(),
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.ones(3, requires_grad=True),
        lambda: torch.tensor([1 + 2j]).conj(),  # torch's table would hand out the raw memory
        lambda: torch.ones(3).to_sparse(),
        lambda: torch.empty(3, device="meta"),
    ],
)
def test_what_torch_refuses_pyc10_refuses_with_torchs_error(make):
    t = make()
    with pytest.raises(Exception) as theirs:
        torch.from_dlpack(t)
    with pytest.raises(Exception) as ours:
        pyc10.from_dlpack(t)
    assert (type(ours.value).__name__, str(ours.value)) == (
        type(theirs.value).__name__,
        str(theirs.value),
    )


def test_copy_and_as_tensor_and_tensor_over_torch_tensors():
    t = torch.arange(6.0)
    copied = pyc10.from_dlpack(t, copy=True)
    assert copied.data_ptr() != t.data_ptr() and copied.tolist() == t.tolist()
    shared = pyc10.as_tensor(t)
    assert shared.data_ptr() == t.data_ptr() and shared.dtype == pyc10.float32
    converted = pyc10.as_tensor(t, dtype=pyc10.float64)
    assert converted.data_ptr() != t.data_ptr() and converted.dtype == pyc10.float64
    new = pyc10.tensor(t)
    assert new.data_ptr() != t.data_ptr() and new.tolist() == t.tolist()
    t[0] = 7
    assert shared[0].item() == 7 and new[0].item() == 0


class Holder:
    """A producer with a table pyc10 cannot read, and __dlpack__ to fall back on."""

    def __init__(self, t: pyc10.Tensor) -> None:
        self.t = t

    def __dlpack__(self, **kwargs: object) -> object:
        return self.t.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.t.__dlpack_device__()


def test_a_table_of_another_major_version_or_name_is_passed_over():
    future = Table(2, 0, None, None, None, None, None, None)  # major 2, no older table chained
    Holder.__dlpack_c_exchange_api__ = ctypes.pythonapi.PyCapsule_New(
        ctypes.addressof(future), b"dlpack_exchange_api", None
    )
    p = pyc10.arange(4)
    assert pyc10.from_dlpack(Holder(p)).data_ptr() == p.data_ptr()
    Holder.__dlpack_c_exchange_api__ = ctypes.pythonapi.PyCapsule_New(
        ctypes.addressof(future), b"something_else", None
    )
    assert pyc10.from_dlpack(Holder(p)).tolist() == [0, 1, 2, 3]
    del Holder.__dlpack_c_exchange_api__
