"""pyc10.Tensor against torch.Tensor: creation and metadata (shape, strides, contiguity flags,
dispatch keys, version), for fixed and random geometries."""

from __future__ import annotations

import random

import pytest
import torch

import pyc10

aten = torch.ops.aten
FORMATS = [
    (pyc10.contiguous_format, torch.contiguous_format),
    (pyc10.channels_last, torch.channels_last),
    (pyc10.channels_last_3d, torch.channels_last_3d),
]


def ours_dtype(d):
    return getattr(pyc10, str(d).removeprefix("torch."))


def flags(t, is_torch):
    if is_torch:
        return (
            t.is_contiguous(),
            t.is_contiguous(memory_format=torch.channels_last),
            t.is_contiguous(memory_format=torch.channels_last_3d),
            aten.is_strides_like_format(t, torch.channels_last),
            aten.is_strides_like_format(t, torch.channels_last_3d),
            aten.is_non_overlapping_and_dense(t),
        )
    return (
        t.is_contiguous(),
        t.is_contiguous(memory_format=pyc10.channels_last),
        t.is_contiguous(memory_format=pyc10.channels_last_3d),
        t._is_strides_like(pyc10.channels_last),
        t._is_strides_like(pyc10.channels_last_3d),
        t._is_non_overlapping_and_dense(),
    )


def same_metadata(ours, theirs):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.stride() == theirs.stride()
    assert ours.storage_offset() == theirs.storage_offset()
    assert ours.numel() == theirs.numel()
    assert ours.dim() == theirs.dim() == ours.ndim
    assert ours.nbytes == theirs.nbytes
    assert ours.element_size() == theirs.element_size()
    assert ours.untyped_storage().nbytes() == theirs.untyped_storage().nbytes()
    assert flags(ours, False) == flags(theirs, True)
    assert repr(ours._dispatch_keys()) == str(torch._C._dispatch_keys(theirs))


@pytest.mark.parametrize(
    "shape",
    [
        (),
        (0,),
        (1,),
        (2, 3),
        (0, 3),
        (2, 3, 4, 5),
        (2, 1, 4, 1),
        (2, 3, 4, 5, 6),
        (1,) * 7,
        (2, 0, 3, 1, 1, 2),
    ],
)
@pytest.mark.parametrize("dt", [torch.float32, torch.int8, torch.complex128, torch.bool])
def test_empty_matches_torch(shape, dt):
    same_metadata(pyc10.empty(shape, dtype=ours_dtype(dt)), torch.empty(shape, dtype=dt))
    if shape:
        same_metadata(pyc10.empty(*shape, dtype=ours_dtype(dt)), torch.empty(*shape, dtype=dt))


@pytest.mark.parametrize(("ours_fmt", "torch_fmt"), FORMATS)
@pytest.mark.parametrize(
    "shape", [(2, 3, 4, 5), (2, 3, 4, 5, 6), (0, 3, 4, 5), (1, 3, 1, 1), (2, 3)]
)
def test_memory_formats_match_torch(ours_fmt, torch_fmt, shape):
    try:
        theirs = torch.empty(shape, memory_format=torch_fmt)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as info:
            pyc10.empty(shape, memory_format=ours_fmt)
        assert str(info.value) == str(e)
        return
    same_metadata(pyc10.empty(shape, memory_format=ours_fmt), theirs)


def test_random_strided_geometries_match_torch():
    rng = random.Random(2024)
    for _ in range(3000):
        n = rng.randint(0, 7)
        sizes = [rng.choice([0, 1, 1, 2, 3, 4, 5]) for _ in range(n)]
        strides = [rng.choice([0, 1, 2, 3, 4, 6, 12, 20, 60]) for _ in range(n)]
        if rng.random() < 0.5 and n:  # a permuted contiguous layout
            perm = list(range(n))
            rng.shuffle(perm)
            s = 1
            for d in reversed(perm):
                strides[d] = s
                s *= max(sizes[d], 1)
        same_metadata(pyc10.empty_strided(sizes, strides), torch.empty_strided(sizes, strides))


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.empty(-1),
        lambda m: m.empty(2, -3),
        lambda m: m.empty(2**40, 2**40),
        lambda m: m.empty(2**62, 4),
        lambda m: m.empty_strided((2, 3), (1, -1)),
        lambda m: m.empty_strided((2, 3), (1,)),
        lambda m: m.empty_strided((-2, 3), (1, 1)),
        lambda m: m.empty(2, 3).size(2),
        lambda m: m.empty(2, 3).stride(-3),
        lambda m: m.empty(()).size(0),
        lambda m: m.empty(()).stride(-1),
        lambda m: len(m.empty(())),
        lambda m: m.empty(2, 3.0),
        lambda m: m.empty_strided((2, 3), (True, 1)),
    ],
)
def test_errors_match_torch(call):
    try:
        call(torch)
    except Exception as e:
        kind, message = type(e), str(e)
    else:
        raise AssertionError("torch did not raise")
    with pytest.raises(kind) as info:
        call(pyc10)
    if kind is not TypeError:
        assert str(info.value) == message.splitlines()[0]


def test_sizes_accept_bools_and_numpy_ints_as_torch():
    import numpy as np

    assert pyc10.empty((2, True)).shape == tuple(torch.empty((2, True)).shape)
    assert pyc10.empty(np.int64(2), 3).shape == (2, 3)


def test_metadata_accessors():
    t = pyc10.empty(2, 3, dtype=pyc10.float64)
    assert t.shape == pyc10.Size([2, 3]) == (2, 3)
    assert repr(t.shape) == "pyc10.Size([2, 3])"
    assert t.size() == t.shape and t.size(-1) == 3 and t.stride(0) == 3
    assert t.dtype is pyc10.float64 and t.device == pyc10.device("cpu")
    assert t.layout is pyc10.strided and t.itemsize == 8 and len(t) == 2
    assert t.data_ptr() == t.untyped_storage().data_ptr() and t.data_ptr() % 64 == 0
    assert t._version == 0 and not t.is_inference()
    assert t.untyped_storage().use_count() >= 2
    with pytest.raises(TypeError):
        pyc10.Tensor()
    with pytest.raises(TypeError):
        t.is_contiguous("contiguous")  # type: ignore[arg-type]
