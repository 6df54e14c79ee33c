"""Data against torch: copy_, clone, contiguous, fill_, zero_, factories, basic indexing and
numpy exchange. Random view chains over the same numbered storage go through pyc10 and torch,
and the results agree on success or failure (type and message), geometry and every element."""

from __future__ import annotations

import ctypes
import gc
import random
import weakref

import numpy as np
import pytest
import torch
from test_views import outcome, random_op  # type: ignore[import-not-found]

import pyc10

N = 8192  # elements in the numbered base storage (covers every geometry pair() makes)


def pair(rng):
    """The same random view (as_strided + a view chain) of a numbered base, in both libraries."""
    data = np.arange(N, dtype=np.float32)
    ours, theirs = pyc10.from_numpy(data.copy()), torch.from_numpy(data.copy())
    n = rng.randint(0, 4)
    sizes = [rng.choice([0, 1, 1, 2, 3, 4]) for _ in range(n)]
    perm = list(range(n))
    rng.shuffle(perm)
    strides, s = [0] * n, 1
    for d in reversed(perm):
        strides[d] = s * rng.choice([1, 1, 2])
        s = strides[d] * max(sizes[d], 1)
    offset = rng.randint(0, 8)
    ours = ours.as_strided(sizes, strides, offset)
    theirs = theirs.as_strided(sizes, strides, offset)
    for _ in range(rng.randint(0, 3)):
        name, args = random_op(rng, list(theirs.shape))
        if name == "as_strided":
            continue
        t_out = outcome(theirs, name, args, True)
        if t_out[0] != "ok":
            continue
        ours, theirs = outcome(ours, name, args, False)[1], t_out[1]
    return ours, theirs


def same_data(ours, theirs):
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def unique_addresses(t):
    idx = np.indices(tuple(t.shape)).reshape(t.dim(), -1) if t.dim() else np.zeros((0, 1), int)
    addresses = (idx * np.array(t.stride()).reshape(-1, 1)).sum(0)
    return len(set(addresses.tolist())) == t.numel()


def test_clone_and_contiguous_agree_with_torch():
    rng = random.Random(77)
    for _ in range(600):
        ours, theirs = pair(rng)
        for fmt in ("preserve", "contiguous", "channels_last"):
            if fmt == "preserve":
                o, t = ours.clone(), theirs.clone()
            elif fmt == "contiguous":
                o, t = ours.contiguous(), theirs.contiguous()
                assert (o.data_ptr() == ours.data_ptr()) == (t.data_ptr() == theirs.data_ptr())
            else:
                try:
                    t = theirs.clone(memory_format=torch.channels_last)
                except RuntimeError as e:
                    with pytest.raises(RuntimeError) as info:
                        ours.clone(memory_format=pyc10.channels_last)
                    assert str(info.value) == str(e)
                    continue
                o = ours.clone(memory_format=pyc10.channels_last)
            assert o.stride() == t.stride(), (fmt, theirs.shape, theirs.stride())
            same_data(o, t)


def test_copy_between_random_views_agrees_with_torch():
    rng = random.Random(99)
    copied = 0
    for _ in range(800):
        (o_dst, t_dst), (o_src, t_src) = pair(rng), pair(rng)
        if rng.random() < 0.5:  # views of the same storage: overlap checks
            o_src, t_src = o_dst, t_dst
            name, args = random_op(rng, list(t_dst.shape))
            t_out = outcome(t_dst, name, args, True)
            if t_out[0] == "ok" and name != "as_strided":
                o_src, t_src = outcome(o_dst, name, args, False)[1], t_out[1]
        try:
            t_dst.copy_(t_src)
            t_err = None
        except RuntimeError as e:
            t_err = str(e)
        if t_err is None:
            o_dst.copy_(o_src)
            if unique_addresses(t_dst):
                same_data(o_dst, t_dst)
                copied += 1
        else:
            with pytest.raises(RuntimeError) as info:
                o_dst.copy_(o_src)
            assert str(info.value) == t_err
    assert copied > 300


def test_copy_broadcasts_and_checks_like_torch():
    src = pyc10.from_numpy(np.arange(3, dtype=np.float32))
    dst = pyc10.zeros(2, 3)
    assert dst.copy_(src) is dst
    assert dst.tolist() == [[0, 1, 2], [0, 1, 2]]
    assert dst._version == 1  # zero_ does not count: a fresh tensor's version is 0 before it
    cases = [
        (
            (3, 4),
            (3,),
            "The size of tensor a (4) must match the size of tensor b (3) at "
            "non-singleton dimension 1",
        ),
        ((3,), (2, 3), "output with shape [3] doesn't match the broadcast shape [2, 3]"),
        ((1, 3), (2, 3), "output with shape [1, 3] doesn't match the broadcast shape [2, 3]"),
    ]
    for d, s, msg in cases:
        with pytest.raises(RuntimeError) as theirs:
            torch.empty(d).copy_(torch.empty(s))
        assert str(theirs.value) == msg
        with pytest.raises(RuntimeError, match=r"^" + __import__("re").escape(msg) + "$"):
            pyc10.empty(d).copy_(pyc10.empty(s))
    ints = pyc10.from_numpy(np.array([-2, 0, 7], dtype=np.int32))
    assert (
        pyc10.empty(3).copy_(ints).tolist()
        == torch.empty(3).copy_(torch.tensor([-2, 0, 7])).tolist()
    )
    # quantized sources as torch refuses them; into a quantized dtype needs a quantizer
    quantized = torch.quantize_per_tensor(torch.ones(3), 0.1, 0, torch.quint8)
    for dst, src in [
        (torch.empty(3), quantized),
        (torch.empty(3, dtype=torch.int8), quantized),
        (torch.quantize_per_tensor(torch.ones(3), 0.1, 0, torch.qint8), quantized),
    ]:
        with pytest.raises(RuntimeError) as theirs:
            dst.copy_(src)
        with pytest.raises(RuntimeError) as ours:
            pyc10.empty(3, dtype=getattr(pyc10, str(dst.dtype)[6:])).copy_(
                pyc10.empty(3, dtype=pyc10.quint8)
            )
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(NotImplementedError):
        pyc10.empty(3, dtype=pyc10.quint8).copy_(pyc10.empty(3))
    with pytest.raises(TypeError):
        pyc10.empty(3).copy_(np.zeros(3))  # type: ignore[arg-type]


def test_zero_and_fill_bump_the_version_like_torch():
    for make in (lambda m: m.empty(0), lambda m: m.empty(2, 3)):
        o, t = make(pyc10), make(torch)
        for op in (lambda x: x.zero_(), lambda x: x.fill_(2), lambda x: x.copy_(x)):
            op(o)
            op(t)
            assert o._version == t._version
        view = o.unsqueeze(0)
        view.fill_(1)
        assert o._version == view._version


FILL_DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "uint16",
    "uint32",
    "uint64",
]
FILL_VALUES = [
    0,
    1,
    -1,
    2.7,
    -2.7,
    200,
    300,
    -129,
    70000,
    2**31,
    2**63 - 1,
    1e10,
    1e300,
    float("inf"),
    float("nan"),
    True,
    1 + 2j,
    3 + 0j,
]


@pytest.mark.parametrize("name", FILL_DTYPES)
def test_fill_converts_and_overflows_like_torch(name):
    for value in FILL_VALUES:
        try:
            t = torch.empty(3, dtype=getattr(torch, name)).fill_(value)
        except RuntimeError as e:
            with pytest.raises(RuntimeError) as info:
                pyc10.empty(3, dtype=getattr(pyc10, name)).fill_(value)
            assert str(info.value) == str(e), value
            continue
        o = pyc10.empty(3, dtype=getattr(pyc10, name)).fill_(value)
        # raw bits: NaN payloads, bfloat16 (no numpy type) and the sign of zero all count
        got = ctypes.string_at(o.data_ptr(), o.nbytes)
        assert got == ctypes.string_at(t.data_ptr(), t.nbytes), value


def test_factories_agree_with_torch():
    for size in [(), (0,), (2, 3), (1, 2, 3, 4)]:
        for fn in ("zeros", "ones"):
            o, t = getattr(pyc10, fn)(size), getattr(torch, fn)(size)
            assert o.dtype is pyc10.float32 and o.stride() == t.stride()
            same_data(o, t)
    for value in (True, 3, 2.5, 1 + 1j):
        o, t = pyc10.full((2, 2), value), torch.full((2, 2), value)
        assert str(o.dtype).split(".")[1] == str(t.dtype).split(".")[1]
        same_data(o, t)
    o = pyc10.full((2,), 7, dtype=pyc10.float64)
    assert o.dtype is pyc10.float64 and o.tolist() == [7.0, 7.0]
    base_o, base_t = pyc10.empty(2, 3, 4).transpose(0, 2), torch.empty(2, 3, 4).transpose(0, 2)
    for fn in ("empty_like", "zeros_like", "ones_like"):
        assert getattr(pyc10, fn)(base_o).stride() == getattr(torch, fn)(base_t).stride()
    sliced_o, sliced_t = base_o[:, ::2], base_t[:, ::2]
    assert pyc10.empty_like(sliced_o).stride() == torch.empty_like(sliced_t).stride()
    assert pyc10.full_like(base_o, 5).tolist() == torch.full_like(base_t, 5).tolist()
    cl = pyc10.zeros_like(pyc10.empty(2, 3, 4, 5), memory_format=pyc10.channels_last)
    want = torch.zeros_like(torch.empty(2, 3, 4, 5), memory_format=torch.channels_last)
    assert cl.stride() == want.stride() and cl._version == 0 and cl.tolist() == want.tolist()
    assert pyc10.full((2,), 1).clone()._version == 0


def random_index(rng, n):
    items = []
    for _ in range(rng.randint(0, n + 1)):
        kind = rng.random()
        if kind < 0.35:
            items.append(rng.randint(-4, 4))
        elif kind < 0.75:
            items.append(
                slice(
                    rng.choice([None, -5, -1, 0, 1, 2, 7]),
                    rng.choice([None, -5, -1, 0, 1, 3, 9]),
                    rng.choice([None, 1, 2, 3, 0]),
                )
            )
        elif kind < 0.9:
            items.append(None)
        elif Ellipsis not in items:  # torch reads past the sizes with two; numpy and we refuse
            items.append(Ellipsis)
    return items[0] if len(items) == 1 and rng.random() < 0.5 else tuple(items)


def test_getitem_and_setitem_agree_with_torch():
    rng = random.Random(5)
    agreed = 0
    for _ in range(1500):
        ours, theirs = pair(rng)
        index = random_index(rng, theirs.dim())
        try:
            t = theirs[index]
        except (IndexError, ValueError, RuntimeError) as e:
            with pytest.raises(type(e)) as info:
                ours[index]
            assert str(info.value) == str(e), index
            continue
        o = ours[index]
        assert o.shape == t.shape and o.stride() == t.stride(), index
        assert o.storage_offset() == t.storage_offset(), index
        same_data(o, t)
        if unique_addresses(t):
            theirs[index] = -1.5
            ours[index] = -1.5
            assert ours._version == theirs._version
            same_data(ours, theirs)
        agreed += 1
    assert agreed > 800


def test_setitem_with_a_tensor_broadcasts():
    o, t = pyc10.zeros(3, 4), torch.zeros(3, 4)
    row = np.arange(4, dtype=np.float32)
    o[1:] = pyc10.from_numpy(row)
    t[1:] = torch.from_numpy(row)
    same_data(o, t)
    same_data(o[[0, 1]], t[[0, 1]])  # advanced indexing: test_advanced_indexing.py
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        o[0, 0, 0]
    # torch 2.13 takes several ellipses (each skips the dims the other items leave)
    assert tuple(o[..., ...].shape) == tuple(t[..., ...].shape)
    assert tuple(o[..., 0, ...].shape) == tuple(t[..., 0, ...].shape)


def test_from_numpy_shares_memory_and_keeps_the_array_alive():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)[:, 1:]
    t = pyc10.from_numpy(a)
    assert t.shape == (3, 3) and t.stride() == (4, 1) and t.dtype is pyc10.int32
    assert t.data_ptr() == a.ctypes.data
    t[0, 0] = 100
    assert a[0, 0] == 100
    a[2, 2] = -7
    assert t[2, 2].item() == -7
    ref = weakref.ref(a.base)
    del a
    gc.collect()
    assert ref() is not None  # the tensor's storage holds it
    view = t.t()
    del t
    gc.collect()
    assert ref() is not None and view.tolist()[2][2] == -7
    del view
    gc.collect()
    assert ref() is None


def test_from_numpy_refuses_what_torch_refuses():
    bad = [
        np.arange(6.0).reshape(2, 3)[:, ::-1],
        [1, 2],
        np.array(["a"]),
        np.lib.stride_tricks.as_strided(np.zeros(4, np.float32), (2,), (2,)),
    ]
    for a in bad:
        with pytest.raises(Exception) as theirs:
            torch.from_numpy(a)
        with pytest.raises(type(theirs.value)) as ours:
            pyc10.from_numpy(a)
        assert str(ours.value) == str(theirs.value)
    for dt in (np.float16, np.complex128, np.bool_, np.uint64):
        a = np.ones((2, 2), dtype=dt)
        assert (
            str(pyc10.from_numpy(a).dtype).split(".")[1]
            == str(torch.from_numpy(a).dtype).split(".")[1]
        )
    empty = pyc10.from_numpy(np.zeros((0, 3), np.float32))
    assert empty.shape == (0, 3) and empty.numpy().shape == (0, 3)


def test_numpy_item_and_tolist():
    t = pyc10.from_numpy(np.arange(6, dtype=np.int64).reshape(2, 3)).t()
    a = t.numpy()
    assert a.shape == (3, 2) and a.strides == (8, 24) and a.base is not None
    assert t.tolist() == torch.arange(6).reshape(2, 3).t().tolist()
    assert t[1, 1].item() == 4 and isinstance(t[1, 1].item(), int)
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    with pytest.raises(
        RuntimeError, match="a Tensor with 6 elements cannot be converted to Scalar"
    ):
        t.item()
    with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
        pyc10.zeros(2, dtype=pyc10.bfloat16).numpy()
    with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
        torch.zeros(2, dtype=torch.bfloat16).numpy()
