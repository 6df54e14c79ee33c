"""The C paths of pyc10._ctensor (empty, zeros, view, transpose, t, t[i], t[a:b], shape, dim, numel,
is_contiguous) against torch, including the arguments they hand to the Python implementation
(numpy ints, bools, Size, keyword arguments, errors), and the tensor object's lifetime."""

from __future__ import annotations

import gc
import itertools
import weakref

import numpy as np
import pytest
import torch

import pyc10
import pyc10.memory


def pair(shape, transpose=False):
    t = torch.empty(shape)
    p = pyc10.empty(shape)
    if transpose and len(shape) >= 2:
        t, p = t.transpose(0, 1), p.transpose(0, 1)
    return t, p


def same_geometry(p, t):
    assert type(p) is pyc10.Tensor
    assert tuple(p.shape) == tuple(t.shape)
    assert p.stride() == t.stride()
    assert p.storage_offset() == t.storage_offset()
    assert p.dim() == t.dim() and p.ndim == t.ndim and p.numel() == t.numel()
    assert p.is_contiguous() == t.is_contiguous()


def outcome(fn, *args):
    try:
        return fn(*args), None
    except Exception as e:
        return None, e


def agree(p_fn, t_fn):
    """Both succeed with the same geometry, or both fail with the same builtin exception."""
    p, pe = outcome(p_fn)
    t, te = outcome(t_fn)
    if te is None:
        assert pe is None, f"pyc10 raised {pe!r}, torch succeeded"
        same_geometry(p, t)
    else:
        assert pe is not None, f"torch raised {te!r}, pyc10 succeeded"
        builtin = next(c for c in type(te).__mro__ if c.__module__ == "builtins")
        assert isinstance(pe, builtin), (pe, te)


SHAPES = [(0,), (5,), (2, 3), (3, 1, 4), (2, 0, 3), (1, 2, 3, 4), (2, 1, 2, 1, 2)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("transpose", [False, True])
def test_getitem_ints_and_slices_as_torch(shape, transpose):
    t, p = pair(shape, transpose)
    size = t.shape[0]
    for i in range(-size - 2, size + 2):
        agree(lambda i=i: p[i], lambda i=i: t[i])
        agree(lambda i=i: p[np.int64(i)], lambda i=i: t[np.int64(i)])  # the Python path
    bounds = [None, -(2**62), -size - 1, -1, 0, 1, size, size + 3, 2**62]
    for start, stop, step in itertools.product(bounds, bounds, [None, 1, 2, 3, 2**62]):
        s = slice(start, stop, step)
        agree(lambda s=s: p[s], lambda s=s: t[s])
    for s in [slice(None, None, 0), slice(None, None, -1), slice(0, 2, 1.5)]:
        agree(lambda s=s: p[s], lambda s=s: t[s])
    for index in [None, Ellipsis, (0,), (slice(1, None), 0)]:
        agree(lambda index=index: p[index], lambda index=index: t[index])
    # a bool is torch's one-element advanced index (a copy), not an int; the strides torch gives
    # an empty result follow no layout rule pyc10 copies: only its shape is compared
    if t.numel() > 0:
        agree(lambda: p[True], lambda: t[True])
    for b in [True, False]:
        assert tuple(p[b].shape) == tuple(t[b].shape)


def test_getitem_of_a_0_dim_tensor_goes_to_python():
    t, p = pair(())
    for index in [0, -1, slice(None), None, Ellipsis]:
        agree(lambda index=index: p[index], lambda index=index: t[index])


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("transpose", [False, True])
def test_view_forms_as_torch(shape, transpose):
    t, p = pair(shape, transpose)
    n = t.numel()
    targets = [(n,), (-1,), (1, -1), (-1, 1), (n, 1, 1), (2, -1), (-1, -1), (n + 1,), ()]
    for target in targets:
        agree(lambda a=target: p.view(*a), lambda a=target: t.view(*a))
        agree(lambda a=target: p.view(a), lambda a=target: t.view(a))
        agree(lambda a=target: p.view(list(a)), lambda a=target: t.view(list(a)))
        as_numpy = tuple(np.int64(v) for v in target)
        agree(lambda a=as_numpy: p.view(*a), lambda a=as_numpy: t.view(*a))
    agree(lambda: p.view(pyc10.Size(t.shape)), lambda: t.view(t.shape))
    agree(lambda: p.view(2**70), lambda: t.view(2**70))
    agree(lambda: p.view("a"), lambda: t.view("a"))
    agree(lambda: p.view(), lambda: t.view())


def test_view_as_dtype_goes_to_python():
    p = pyc10.empty(2, 4)
    v = p.view(pyc10.int16)
    assert v.dtype == pyc10.int16 and tuple(v.shape) == (2, 8)


@pytest.mark.parametrize("shape", [(), (4,), (2, 3), (2, 3, 4)])
def test_transpose_and_t_as_torch(shape):
    t, p = pair(shape)
    agree(lambda: p.t(), lambda: t.t())
    n = max(len(shape), 1)
    for d0, d1 in itertools.product(range(-n - 1, n + 1), repeat=2):
        agree(lambda a=d0, b=d1: p.transpose(a, b), lambda a=d0, b=d1: t.transpose(a, b))
    agree(lambda: p.transpose(np.int32(0), 0), lambda: t.transpose(np.int32(0), 0))
    agree(lambda: p.swapdims(0, -1), lambda: t.swapdims(0, -1))
    agree(lambda: p.transpose(0), lambda: t.transpose(0))
    agree(lambda: p.transpose(0, 1.0), lambda: t.transpose(0, 1.0))


def test_t_message_is_torchs():
    with pytest.raises(RuntimeError, match=r"t\(\) expects a tensor with <= 2 dimensions"):
        pyc10.empty(2, 3, 4).t()


@pytest.mark.parametrize("factory", ["empty", "zeros"])
def test_factories_as_torch(factory):
    pf, tf = getattr(pyc10, factory), getattr(torch, factory)
    for args in [(2, 3), ((2, 3),), ([2, 3],), (), ((),), (0,), (1,) * 70]:
        agree(lambda a=args: pf(*a), lambda a=args: tf(*a))
    for bad in [(-1,), (2, -3), (2**62, 2**62), (2**70,), ("2",), (2.0,), (None,)]:
        agree(lambda a=bad: pf(*a), lambda a=bad: tf(*a))
    for name in ["float64", "int8", "bool", "complex64", "bfloat16"]:
        p = pf(2, 3, dtype=getattr(pyc10, name))
        assert p.dtype == getattr(pyc10, name)
        assert p.element_size() == tf(1, dtype=getattr(torch, name)).element_size()
    assert pf(2, dtype=None).dtype == pyc10.float32
    assert pf(2, device="cpu").device == pyc10.device("cpu")
    with pytest.raises(TypeError):
        pf(2, dtype="float32")
    with pytest.raises(TypeError):
        pf(2, nonsense=1)


def test_zeros_is_zero_and_empty_with_format_goes_to_python():
    z = pyc10.zeros(3, 5, dtype=pyc10.int32)
    assert not z.numpy().any()
    e = pyc10.empty(2, 3, 4, 5, memory_format=pyc10.channels_last)
    assert e.stride() == torch.empty(2, 3, 4, 5, memory_format=torch.channels_last).stride()


def test_is_contiguous_with_and_without_a_format():
    t, p = pair((2, 3, 4, 5), transpose=True)
    assert p.is_contiguous() == t.is_contiguous()
    assert p.is_contiguous(memory_format=pyc10.channels_last) == t.is_contiguous(
        memory_format=torch.channels_last
    )
    with pytest.raises(TypeError):
        p.is_contiguous("contiguous")


def test_the_object_cannot_be_made_directly():
    with pytest.raises(TypeError):
        pyc10.Tensor()
    with pytest.raises(TypeError):
        pyc10._ctensor.TensorBase()
    with pytest.raises(ValueError):
        pyc10._ctensor.wrap(0, None)


def test_shape_and_handle_are_cached():
    p = pyc10.empty(2, 3)
    assert p.shape is p.shape
    assert type(p.shape) is pyc10.Size
    assert p._handle is p._handle


def test_tensors_are_freed_with_their_python_objects():
    gc.collect()  # tensors other tests left in reference cycles (tracebacks) go first
    base = pyc10.memory.stats()["allocated_bytes.all.current"]
    made = [pyc10.empty(10, 10) for _ in range(100)]
    views = [m[1:].view(-1, 10).t()[0] for m in made[:50]]
    refs = [weakref.ref(v) for v in views]
    assert pyc10.memory.stats()["allocated_bytes.all.current"] > base
    del made
    gc.collect()
    assert pyc10.memory.stats()["allocated_bytes.all.current"] > base  # the views hold 50
    del views
    assert all(r() is None for r in refs)
    assert pyc10.memory.stats()["allocated_bytes.all.current"] == base


def test_a_view_keeps_its_base_storage_alive():
    a = np.arange(6, dtype=np.float32)
    p = pyc10.from_numpy(a)
    v = p.view(2, 3)[1:].t()
    del p, a
    gc.collect()
    assert v.tolist() == [[3.0], [4.0], [5.0]]


def test_keywords_built_at_run_time_bind_as_spelled_ones():
    # the parser matches keywords by identity with its interned names first; a key made at run
    # time is another string of the same text and must bind the same way
    name = "".join(["dt", "ype"])
    assert name is not "dtype"  # noqa: F632
    p = pyc10.empty(2, 3, **{name: pyc10.float64})
    assert p.dtype is pyc10.float64 and p.shape == (2, 3)
    x = pyc10.zeros(2, 3)
    assert x.view(**{"".join(["si", "ze"]): (3, 2)}).shape == (3, 2)
    assert x.transpose(**{"".join(["di", "m0"]): 0, "dim1": 1}).shape == (3, 2)
