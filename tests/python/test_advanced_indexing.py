"""Advanced indexing against torch: t[index] and t[index] = value with index tensors, lists,
numpy arrays and masks, mixed with ints, slices, None, Ellipsis and bools.

Every case runs the same index on a torch tensor and a pyc10 tensor made from the same data and
compares acceptance, shape, dtype, values, strides and that the result is a copy, or the
exception's class and message; writes compare the whole tensor afterwards.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyc10

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

DTYPES = [
    "float32", "float64", "int64", "int32", "int16", "uint8", "int8", "bool", "float16",
    "bfloat16", "complex64", "complex128", "float8_e4m3fn", "float8_e5m2",
]  # fmt: skip


def pair(shape: tuple[int, ...] = (4, 3, 5), dtype: str = "float32") -> tuple[Any, Any]:
    n = int(np.prod(shape))
    base = torch.arange(n, dtype=torch.float64).reshape(shape)
    if dtype == "bool":
        base = base.remainder(3) == 1
    t = base.to(getattr(torch, dtype))
    p = pyc10.from_numpy(base.numpy().copy()).to(getattr(pyc10, dtype))
    return t, p


def to_pyc10(index: Any) -> Any:
    if isinstance(index, tuple):
        return tuple(to_pyc10(i) for i in index)
    if isinstance(index, list):
        return [to_pyc10(i) for i in index]
    if isinstance(index, torch.Tensor):
        return pyc10.from_numpy(index.numpy().copy())
    return index


def outcome(fn: Any) -> tuple[str, Any]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", fn()
    except Exception as e:
        return "error", e


def same_error(ep: BaseException, et: BaseException) -> None:
    base = next(c for c in type(et).__mro__ if c.__module__ == "builtins")
    assert isinstance(ep, base), (ep, et)
    assert str(ep) == str(et), (ep, et)


def values(x: Any) -> Any:
    return x.tolist()


def same(rp: Any, rt: Any) -> None:
    assert tuple(rp.shape) == tuple(rt.shape)
    assert str(rp.dtype).split(".")[-1] == str(rt.dtype).split(".")[-1]
    assert values(rp) == values(rt)
    if rt.numel() > 0:  # torch's layout of the index kernel's output (size-1 dims aside)
        for size, a, b in zip(rt.shape, rp.stride(), rt.stride(), strict=True):
            if size > 1:
                assert a == b, (rp.stride(), rt.stride())


def check_get(t: Any, p: Any, index: Any) -> str:
    kp, rp = outcome(lambda: p[to_pyc10(index)])
    kt, rt = outcome(lambda: t[index])
    assert kp == kt, (index, rp, rt)
    if kt == "error":
        same_error(rp, rt)
        return kt
    same(rp, rt)
    if rt.numel() > 0 and rt.untyped_storage().data_ptr() != t.untyped_storage().data_ptr():
        assert rp.untyped_storage().data_ptr() != p.untyped_storage().data_ptr()
    return kt


def check_set(t: Any, p: Any, index: Any, value: Any) -> str:
    pv = to_pyc10(value)
    kp, rp = outcome(lambda: p.__setitem__(to_pyc10(index), pv))
    kt, rt = outcome(lambda: t.__setitem__(index, value))
    assert kp == kt, (index, value, rp, rt)
    if kt == "error":
        same_error(rp, rt)
        return kt
    assert values(p) == values(t)
    return kt


T = torch.tensor
S = slice
GET_INDICES: list[Any] = [
    [0, 2], [-1, 0], [3, 3, 0], [], [[0, 1], [2, 3]], [True, False, True, False], [0.5, 2.7],
    [4], [-5], [0, 4], (S(None), [0, 2]), (S(None), [2, -1], 1), ([0, 1], [0, 2]),
    ([0, 1], S(None), [0, 2]), (S(None), [[0], [2]], [1, 4]), ([0], 1, [2]), (0, [1, 2]),
    (Ellipsis, [0, 4]), ([1, 2], Ellipsis), ([1], Ellipsis, [2]), (None, [0, 1]),
    ([0, 1], None), ([0, 1], None, [1, 2]), (True, [0, 1]), (False, [0, 1]), ([0, 1], True),
    ([[0, 1]], [[0], [1]]), ([0, 1], [0, 1, 2]), (S(1, 3), [2, 0], S(None, None, 2)),
    ([0, 1], [5]), (S(None), [0], [7]), (1, 2, [3]), ([0], [0], [0], [0]),
    T([0, 2]), T([[0, 1], [2, 3]]), T([0, 2], dtype=torch.int32), T([0, 1], dtype=torch.int16),
    T([0.0, 1.0]), T(1.0), T([True, False, True, True]), T([True, False]),
    T([[True, False, True], [False, False, True], [True, True, True], [False, False, False]]),
    T([1, 0, 1, 0], dtype=torch.uint8), T(True), T(False), T(2), (T([0, 1]), T([[0], [2]])),
    (T([0, 1]), S(None), T([1, 2])), (S(None), T([True, False, True])), (T(1), [0, 2]),
    (T([True, False, True, True]), [0, 1, 2]), (T([True, False, True, True]), [0, 1]),
    np.array([0, 2]), np.array([True, False, True, False]), np.array([[1], [2]]),
    np.array([0, 2], dtype=np.int32), np.array([0.5, 1.5]), (np.array([0, 1]), np.array([1, 2])),
    np.array(1), (S(None), np.array([2, 0])), [T(0), T(1)], [[0, 1], S(None)], [0, S(None)],
    [0, None], [0, Ellipsis], "ab", [0, "a"], [[0, 1], [2]], T([0, 9]), T([-5]),
    ([[0, 1], [2, 3]], [[0], [1]], [0, 4]), (T([], dtype=torch.long),),
]  # fmt: skip


@pytest.mark.parametrize("index", GET_INDICES, ids=repr)
@pytest.mark.parametrize("transpose", [False, True])
def test_getitem_as_torch(index: Any, transpose: bool) -> None:
    t, p = pair()
    if transpose:
        t, p = t.permute(2, 0, 1), p.permute(2, 0, 1)
    check_get(t, p, index)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_is_gathered_and_scattered(dtype: str) -> None:
    t, p = pair((4, 3), dtype)
    for index in ([2, 0], (S(None), [2, 0, 2]), T([True, False, True, True]), ([0, 3], [1, 2])):
        assert check_get(t, p, index) == "ok"
    r = p[[1, 2]]
    assert str(r.dtype) == f"pyc10.{dtype}"
    value = p[[3, 0]]
    t[[0, 1]] = t[[3, 0]]
    p[[0, 1]] = value
    assert values(p) == values(t)


@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 3), (5,), ()], ids=repr)
@pytest.mark.parametrize(
    "index",
    [[0], [], (S(None), [0]), (S(None), []), T([], dtype=torch.bool), [True], (Ellipsis, [0])],
    ids=repr,
)
def test_empty_shapes_as_torch(shape: tuple[int, ...], index: Any) -> None:
    t, p = pair(shape)
    check_get(t, p, index)


def test_the_result_is_a_copy() -> None:
    t, p = pair()
    r = p[[0, 1]]
    r.fill_(-1.0)
    assert values(p) == values(t)
    r = p[:, [0, 1]]
    assert r.untyped_storage().data_ptr() != p.untyped_storage().data_ptr()


SET_INDICES: list[Any] = [
    [0, 2], [-1], [], (S(None), [0, 2]), ([0, 1], [0, 2]), ([0, 1], S(None), [4, 0]),
    T([True, False, True, False]), T([True, False]), [True, False, True, True],
    (S(None), T([True, False, True])), T([1, 0, 1, 0], dtype=torch.uint8), ([0, 9],), [4],
    ([0, 1], [0, 1, 2]), (True, [0, 1]), (False, [1]), (None, [1, 2]), T([0, 1], dtype=torch.int32),
    T([0.0]), (Ellipsis, [1, 3]), np.array([0, 3]), (0, [1, 2], 3),
]  # fmt: skip
SET_VALUES: list[Any] = [
    2.5, 7, True, 1e40, -3, 1 + 2j, np.int64(3), T(9.0), T([9.0]), T(9.0, dtype=torch.float64),
    T([9.0], dtype=torch.float64), T(300), T(4), T([1.0, 2.0]), T([[1.0], [2.0]]),
    T([1.0, 2.0, 3.0, 4.0, 5.0]), torch.ones(1, 1, 5), torch.ones(3, 5), torch.ones(2, 3, 5),
    torch.ones(7), "a", None,
]  # fmt: skip


@pytest.mark.parametrize("value", SET_VALUES, ids=repr)
@pytest.mark.parametrize("index", SET_INDICES, ids=repr)
def test_setitem_as_torch(index: Any, value: Any) -> None:
    t, p = pair()
    check_set(t, p, index, value)


@pytest.mark.parametrize("dtype", ["uint8", "int32", "bool", "float16", "complex64"])
@pytest.mark.parametrize("value", [300, -1, 2.5, True, T(300), T(1.5), T([2.0]), 1 + 1j])
def test_setitem_converts_as_torch(dtype: str, value: Any) -> None:
    for index in ([0, 1], T([True, False, True, False])):
        t, p = pair((4, 2), dtype)
        check_set(t, p, index, value)


def test_setitem_refuses_overlapping_values_as_torch() -> None:
    t, p = pair((4, 3))
    assert outcome(lambda: t.__setitem__([0], t[0]))[0] == "error"
    kp, ep = outcome(lambda: p.__setitem__([0], p[0]))
    assert kp == "error"
    assert "refer to a single memory location" in str(ep)
    kp, ep = outcome(lambda: p.__setitem__([0, 1], p[2:4]))
    assert kp == "error"
    p[[0, 1]] = p[2:4].clone()
    t[[0, 1]] = t[2:4].clone()
    assert values(p) == values(t)


def test_int_index_tensor_aliasing_the_destination_as_torch() -> None:
    t = torch.arange(6)
    p = pyc10.from_numpy(np.arange(6))
    kt, et = outcome(lambda: t.__setitem__(t[:2], 5))
    kp, ep = outcome(lambda: p.__setitem__(p[:2], 5))
    assert kp == kt
    if kt == "error":
        same_error(ep, et)
    assert values(p) == values(t)


def test_read_only_memory_is_refused() -> None:
    a = np.arange(6.0)
    a.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = pyc10.from_numpy(a)
    with pytest.raises(RuntimeError, match="read-only"):
        p[[0, 1]] = 1.0
    assert p[[0, 1]].tolist() == [0.0, 1.0]


def test_uint8_masks_warn_as_torch() -> None:
    _, p = pair((4,))
    with pytest.warns(UserWarning, match="indexing with dtype torch.uint8 is now deprecated"):
        p[to_pyc10(T([1, 0, 1, 0], dtype=torch.uint8))]


def test_non_tuple_sequences_warn_as_torch() -> None:
    t, p = pair((4, 3))
    with pytest.warns(UserWarning, match="Using a non-tuple sequence for multidimensional"):
        r = p[[[0, 1], [1, 2]]]
    assert r.tolist() == t[[[0, 1], [1, 2]]].tolist()


# ---- sweeps: random shapes and index combinations, getitem and setitem against torch ----


@st.composite
def cases(draw: Any) -> tuple[tuple[int, ...], tuple[Any, ...], bool]:
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=4)))
    items: list[Any] = []
    dim = 0
    n_items = draw(st.integers(1, 4))
    ellipsis = False  # several ellipses are basic indexing's (test_indexing.py)
    for _ in range(n_items):
        size = shape[dim] if dim < len(shape) else 3
        kind = draw(
            st.sampled_from(
                ["int", "slice", "none", "ellipsis", "list", "tensor", "mask", "bool", "nd"]
            )
        )
        if kind == "int":
            items.append(draw(st.integers(-size - 1, size)))
        elif kind == "slice":
            bound = st.none() | st.integers(-5, 5)
            items.append(slice(draw(bound), draw(bound), draw(st.none() | st.integers(1, 3))))
        elif kind == "none":
            items.append(None)
            continue
        elif kind == "ellipsis":
            if not ellipsis:
                items.append(Ellipsis)
            ellipsis = True
            continue
        elif kind == "bool":
            items.append(draw(st.booleans()))
            continue
        elif kind == "list":
            items.append(draw(st.lists(st.integers(-size - 1, size), min_size=0, max_size=4)))
        elif kind == "tensor":
            ishape = draw(st.sampled_from([(2,), (1,), (2, 1), (1, 2), (3,), (2, 2), (0,)]))
            m = int(np.prod(ishape))
            vals = draw(st.lists(st.integers(-size, max(size - 1, -size)), min_size=m, max_size=m))
            dt = draw(st.sampled_from([torch.int64, torch.int32]))
            items.append(torch.tensor(vals, dtype=dt).reshape(ishape))
        elif kind == "nd":
            items.append(np.array(draw(st.lists(st.integers(-size, size), min_size=1, max_size=3))))
        else:  # mask over the next one or two dims
            k = draw(st.integers(1, 2))
            mshape = tuple(shape[dim : dim + k]) or (size,)
            m = int(np.prod(mshape))
            bits = draw(st.lists(st.booleans(), min_size=m, max_size=m))
            items.append(torch.tensor(bits, dtype=torch.bool).reshape(mshape))
            dim += len(mshape)
            continue
        dim += 1
    return shape, tuple(items), draw(st.booleans())


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(cases())
def test_sweep_getitem_as_torch(case: tuple[tuple[int, ...], tuple[Any, ...], bool]) -> None:
    shape, index, transpose = case
    t, p = pair(shape)
    if transpose and len(shape) > 1:
        t, p = t.transpose(0, -1), p.transpose(0, -1)
    check_get(t, p, index)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(cases(), st.sampled_from(["number", "tensor", "row"]))
def test_sweep_setitem_as_torch(
    case: tuple[tuple[int, ...], tuple[Any, ...], bool], how: str
) -> None:
    shape, index, transpose = case
    t, p = pair(shape)
    if transpose and len(shape) > 1:
        t, p = t.transpose(0, -1), p.transpose(0, -1)
    kind, r = outcome(lambda: t[index])
    value: Any = -7.5
    if kind == "ok" and how != "number":
        # a value of the indexed shape (or its last dim); duplicates make the written element
        # depend on the kernel's order, so only indices that select each element once
        pos = torch.arange(t.numel()).reshape(t.shape)[index]
        if pos.unique().numel() != pos.numel():
            return
        full = -torch.arange(r.numel(), dtype=torch.float32).reshape(r.shape) - 1
        row = how == "row" and r.dim() > 0 and r.numel() > 0
        value = full[(0,) * (r.dim() - 1)] if row else full
    check_set(t, p, index, value)
