"""DLPack structs built field by field (ctypes), imported by pyc10 and by torch: the edge cases
tests/fuzz/fuzz_dlpack.c found, against torch.from_dlpack of the same struct where torch can take
it safely."""

from __future__ import annotations

import ctypes
import gc

import numpy as np
import pytest
import torch

import pyc10


class DLDevice(ctypes.Structure):
    _fields_ = (("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32))


class DLDataType(ctypes.Structure):
    _fields_ = (("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16))


class DLTensor(ctypes.Structure):
    _fields_ = (
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    )


class Versioned(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(Versioned))
Versioned._fields_ = (
    ("major", ctypes.c_uint32),
    ("minor", ctypes.c_uint32),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", DELETER),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor),
)

_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_NAME = ctypes.c_char_p(b"dltensor_versioned")  # capsule names must outlive the capsules


class Producer:
    """One float32 struct over a buffer of 64 floats (0, 1, 2, ...), counting deleter calls."""

    def __init__(self, shape, strides, device=(1, 0), offset_floats=8):
        self.buffer = (ctypes.c_float * 64)(*range(64))
        n = len(shape)
        self.shape = (ctypes.c_int64 * max(n, 1))(*shape)
        self.strides = (ctypes.c_int64 * max(n, 1))(*strides)
        self.deletes = 0
        self.deleter = DELETER(self._delete)  # kept alive with the producer
        self.struct = Versioned(
            1,
            0,
            None,
            self.deleter,
            0,
            DLTensor(
                ctypes.addressof(self.buffer) + 4 * offset_floats,
                DLDevice(*device),
                n,
                DLDataType(2, 32, 1),
                self.shape,
                self.strides,
                0,
            ),
        )

    def _delete(self, _self):
        self.deletes += 1

    def capsule(self):
        """A capsule without a destructor: the struct stays this object's until consumed."""
        return _new_capsule(ctypes.addressof(self.struct), _NAME, None)


# (shape, strides): a negative stride on a dim that never moves (size 0 or 1, or any dim of a
# tensor without elements). torch 2.13 imports these; numpy exports np.arange(1.)[::-1] so.
NEVER_MOVING = [
    ([1], [-1]),
    ([1, 3], [-5, 2]),
    ([2, 1], [1, -7]),
    ([2, 1, 4], [8, -1, 2]),
    ([2, 1, 4], [4, -100, 1]),
    ([0, 3], [5, -1]),
    ([2, 0, 4], [-4, 1, -1]),
    ([0], [-1]),
    ([3, 0], [-1, 1]),
]


@pytest.mark.parametrize(("shape", "strides"), NEVER_MOVING)
def test_negative_strides_that_never_move_import_as_torch_imports_them(shape, strides):
    theirs_producer, ours_producer = Producer(shape, strides), Producer(shape, strides)
    theirs = torch.from_dlpack(theirs_producer.capsule())
    ours = pyc10.from_dlpack(ours_producer.capsule())
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.stride() == theirs.stride()
    if theirs.numel():
        assert ours.tolist() == theirs.tolist()
        assert ours.data_ptr() - ctypes.addressof(ours_producer.buffer) == (
            theirs.data_ptr() - ctypes.addressof(theirs_producer.buffer)
        )
    del ours, theirs
    gc.collect()
    assert ours_producer.deletes == theirs_producer.deletes == 1


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.arange(1.0)[::-1],
        lambda: np.arange(6.0).reshape(2, 3)[:, ::-1][:, :1],
        lambda: np.zeros((0, 3))[:, ::-1],
        lambda: np.arange(24.0).reshape(2, 3, 4)[:, ::-1][:, :1, ::2],
    ],
)
def test_numpy_arrays_reversed_along_dims_that_never_move_import_as_in_torch(make):
    a = make()
    theirs, ours = torch.from_dlpack(a), pyc10.from_dlpack(a)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
    assert ours.tolist() == theirs.tolist() == a.tolist()


def test_a_negative_stride_that_moves_is_refused_and_the_struct_stays_the_callers():
    # (torch 2.13 aborts the process here: "Storage size calculation overflowed with sizes=[3]
    # and strides=[-1]" escapes as an uncaught c10::Error; not run)
    p = Producer([3], [-1], offset_floats=10)
    capsule = p.capsule()
    with pytest.raises(BufferError) as info:
        pyc10.from_dlpack(capsule)
    assert isinstance(info.value, pyc10.C10Error)
    assert str(info.value).startswith("DLPack tensor with negative strides [-1]")
    assert p.deletes == 0
    assert ctypes.pythonapi.PyCapsule_IsValid(ctypes.py_object(capsule), _NAME) == 1
    with pytest.raises(BufferError):
        pyc10.from_dlpack(np.arange(3.0)[::-1])  # the same through numpy's export


def test_opencl_is_refused_before_the_struct_changes_hands():
    # torch 2.13 consumes the struct, then fails inside from_blob with an internal assert
    # ("This is a grandfathered Caffe2 device type opencl, it shouldn't ever convert to a
    # DispatchKey"), a RuntimeError; here the import refuses the device up front, leaving the
    # capsule unconsumed, as torch does for the device types it does not know.
    p = Producer([2], [1], device=(4, 0))
    capsule = p.capsule()
    with pytest.raises(BufferError) as info:
        pyc10.from_dlpack(capsule)
    assert isinstance(info.value, pyc10.C10Error)
    assert str(info.value) == (
        "Unsupported device_type: 4 (kDLOpenCL: c10's OpenCL is a grandfathered Caffe2 device "
        "type without tensors)"
    )
    assert p.deletes == 0
    assert ctypes.pythonapi.PyCapsule_IsValid(ctypes.py_object(capsule), _NAME) == 1
    unknown = Producer([2], [1], device=(7, 0))  # kDLVulkan: refused by both
    with pytest.raises(BufferError) as theirs:
        torch.from_dlpack(unknown.capsule())
    with pytest.raises(BufferError) as ours:
        pyc10.from_dlpack(unknown.capsule())
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("device", [(10, 1), (17, 2), (14, 1), (12, 5)])
def test_an_import_goes_back_out_on_the_device_it_came_from(device):
    # ATen names device 0 for every HIP and MAIA tensor; the index is kept here (see dlpack.h).
    # (CUDA exports wait on the consumer's stream, which needs a driver: tests/c/test_dlpack.c)
    p = Producer([2, 2], [2, 1], device=device)
    t = pyc10.from_dlpack(p.capsule())
    assert t.__dlpack_device__() == device
    back = pyc10.from_dlpack(t.__dlpack__(max_version=(1, 0)))
    assert back.__dlpack_device__() == device and back.device == t.device
    del t, back
    gc.collect()
    assert p.deletes == 1
