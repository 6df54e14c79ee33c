"""The module factories (factories.c) against torch: dtype inference, tensor()/as_tensor() data,
memory sharing, the refused options, and torch's errors."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch
from _oracle import needs_torch_cpu_build

import pyc10


def _dtype_name(d: Any) -> str:
    return str(d).rsplit(".", 1)[-1]


def outcome(fn: Any) -> Any:
    """What a call gives: (shape, dtype name, values) or (exception builtin class, message)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = fn()
    except Exception as e:
        base = next(
            c for c in (ValueError, TypeError, RuntimeError, IndexError) if isinstance(e, c)
        )
        return (base.__name__, str(e).replace("pyc10", "torch"))
    return (tuple(t.shape), _dtype_name(t.dtype), repr(np.asarray(t.numpy()).tolist()))


def same(make: Any) -> None:
    assert outcome(lambda: make(pyc10)) == outcome(lambda: make(torch))


@pytest.mark.parametrize(
    "value", [True, 3, -2, 1.5, 2j, 1 + 0.5j, np.float32(2.5), np.int16(3), np.bool_(True)]
)
def test_full_infers_the_dtype_of_its_fill_value_as_torch(value: Any) -> None:
    same(lambda m: m.full((2, 3), value))
    same(lambda m: m.full_like(m.zeros(2, dtype=m.int32), value))


def test_full_follows_the_default_dtype_as_torch() -> None:
    pyc10.set_default_dtype(pyc10.float64)
    torch.set_default_dtype(torch.float64)
    try:
        same(lambda m: m.full((2,), 1.5))
        same(lambda m: m.full((2,), 1j))
        same(lambda m: m.tensor([1.5, 2.0]))
        same(lambda m: m.tensor([1j]))
        same(lambda m: m.ones(2))
    finally:
        pyc10.set_default_dtype(pyc10.float32)
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8", "bool", "complex64",
                                   "float16", "uint8"])  # fmt: skip
def test_ones_and_full_of_every_common_dtype(dtype: str) -> None:
    same(lambda m: m.ones(2, 3, dtype=getattr(m, dtype)))
    same(lambda m: m.ones_like(m.empty(2, 3), dtype=getattr(m, dtype)))
    same(lambda m: m.full((2,), 7, dtype=getattr(m, dtype)))
    same(lambda m: m.zeros((3,), dtype=getattr(m, dtype)))


@pytest.mark.parametrize("value", [300, -1, 1e300, float("inf"), float("nan")])
def test_full_refuses_values_the_dtype_cannot_hold_as_torch(value: float) -> None:
    same(lambda m: m.full((2,), value, dtype=m.uint8))
    same(lambda m: m.full((2,), value, dtype=m.float32))


@pytest.mark.parametrize(
    "data",
    [
        [1.0, 2.0, 3.0],
        [[1, 2], [3, 4]],
        [True, False],
        [True, 1],
        [1, 2.5],
        [1, 2j],
        (1, (2, 3)),
        [],
        [[], []],
        2.5,
        7,
        False,
        3j,
        [[1, 2], [3]],
        [[1, 2], 3],
        "abc",
        [1, "a"],
        [2**63],
        np.arange(6).reshape(2, 3),
        np.arange(6, dtype=np.float32)[::-2],
        np.float64(2.5),
        np.int8(3),
    ],
)
def test_tensor_builds_data_as_torch(data: Any) -> None:
    same(lambda m: m.tensor(data))
    same(lambda m: m.tensor(data, dtype=m.float64))
    same(lambda m: m.as_tensor(data))
    same(lambda m: m.as_tensor(data, dtype=m.int32))


def test_tensor_of_an_object_without_a_dtype_raises_as_torch() -> None:
    same(lambda m: m.tensor(object()))
    same(lambda m: m.as_tensor(None, dtype=m.int32))
    same(lambda m: m.as_tensor(None, dtype=m.float32))


def test_tensor_copies_and_as_tensor_shares_numpy_memory_as_torch() -> None:
    for m in (pyc10, torch):
        a = np.arange(3.0)
        copied, shared, converted = m.tensor(a), m.as_tensor(a), m.as_tensor(a, dtype=m.float32)
        a[0] = 9.0
        assert copied.tolist() == [0.0, 1.0, 2.0]
        assert shared.tolist() == [9.0, 1.0, 2.0]
        assert converted.tolist() == [0.0, 1.0, 2.0]


def test_tensor_of_a_tensor_copies_and_warns_as_torch() -> None:
    texts = []
    for m in (pyc10, torch):
        x = m.ones(2)
        with pytest.warns(UserWarning) as record:
            y = m.tensor(x)
        texts.append(str(record[0].message))
        assert y is not x
        assert m.as_tensor(x) is x
        assert m.as_tensor(x, dtype=m.float64).dtype == m.float64
    assert texts[0] == texts[1]


def test_factories_use_the_default_device_context() -> None:
    with pyc10.device("cpu"):
        assert pyc10.empty(2).device == pyc10.device("cpu")
        assert pyc10.tensor([1.0]).device == pyc10.device("cpu")


def test_is_tensor_as_torch() -> None:
    for m in (pyc10, torch):
        assert m.is_tensor(m.empty(1))
        assert not m.is_tensor([1])
        assert not m.is_tensor(np.zeros(1))


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.empty(2, layout=m.sparse_coo),
        lambda m: m.ones(2, requires_grad=True),
        lambda m: m.empty_like(m.empty(2), requires_grad=True),
        lambda m: m.tensor([1.0], requires_grad=True),
    ],
)
def test_what_pyc10_cannot_do_raises_a_clear_error(call: Any) -> None:
    with pytest.raises(pyc10.C10NotImplementedError):
        call(pyc10)


@needs_torch_cpu_build
def test_pin_memory_without_a_driver_raises_torchs_cpu_error() -> None:
    # with the stand-in driver: tests/python/test_pinned.py
    if pyc10.cuda.is_available():
        pytest.skip("a CUDA driver is present")
    same(lambda m: m.zeros(2, pin_memory=True))
    same(lambda m: m.tensor([1.0], pin_memory=True))
    same(lambda m: m.empty_strided((2,), (1,), pin_memory=True))


def test_requires_grad_on_an_integer_dtype_raises_torchs_error() -> None:
    same(lambda m: m.zeros(2, dtype=m.int64, requires_grad=True))
    same(lambda m: m.full((2,), 1, requires_grad=True))


def test_like_factories_preserve_the_layout_as_torch() -> None:
    def strides(m: Any, fn: str) -> Any:
        x = m.empty(2, 3, 4, 5).permute(0, 2, 3, 1)
        args = (x, 1.0) if fn == "full_like" else (x,)
        return getattr(m, fn)(*args).stride()

    for fn in ("empty_like", "zeros_like", "ones_like", "full_like"):
        assert strides(pyc10, fn) == strides(torch, fn)


def test_many_dimensions_as_torch() -> None:
    for m in (pyc10, torch):
        assert m.zeros((1,) * 70).dim() == 70
        assert m.ones(*(1,) * 70).dim() == 70


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.ones((2, 0, 3), dtype=np.float32),
        lambda: np.ones((3, 1, 2), dtype=np.float32),
        lambda: np.arange(24).reshape(2, 3, 4).transpose(2, 0, 1),
        lambda: np.arange(10, dtype=np.int16)[::3],
        lambda: np.array(5.5),
        lambda: np.array([1, 2], dtype=">i4"),
        lambda: np.array([1], dtype=np.longlong),
        lambda: np.array([1], dtype=np.uint16),
        lambda: np.array(["a"]),
        lambda: np.zeros(3, dtype=np.float16),
        lambda: np.arange(10.0)[::-1],
        lambda: np.zeros(4, dtype=np.uint8)[1:].view(np.int8),
    ],
)
def test_from_numpy_as_torch(make: Any) -> None:
    def geometry(m: Any) -> Any:
        try:
            t = m.from_numpy(make())
        except Exception as e:
            base = next(c for c in (ValueError, TypeError, RuntimeError) if isinstance(e, c))
            return (base.__name__, str(e))
        return (tuple(t.shape), t.stride(), _dtype_name(t.dtype), t.tolist())

    assert geometry(pyc10) == geometry(torch)


def test_from_numpy_shares_memory_and_releases_the_array() -> None:
    import sys

    a = np.arange(12.0)
    before = sys.getrefcount(a)
    t = pyc10.from_numpy(a)
    a[0] = 7.0
    assert t[0].item() == 7.0
    del t
    assert sys.getrefcount(a) == before
    # a failing call that drops the last reference raises its own error (not SystemError)
    with pytest.raises(RuntimeError, match="invalid for input of size 12"):
        pyc10.from_numpy(a).view(5, 5)
    assert sys.getrefcount(a) == before


class _Seq:
    """A sequence by __len__ and __getitem__ only, as torch's data walk reads one."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> Any:
        return self.items[i]


class _NoItems:
    """A length with no items: torch cannot find the shape."""

    def __len__(self) -> int:
        return 2

    def __getitem__(self, i: int) -> Any:
        raise IndexError(i)


def _outcome(make: Any, lib: Any) -> Any:
    try:
        t = make(lib)
    except (TypeError, ValueError, RuntimeError) as e:
        builtin = next(c for c in type(e).__mro__ if c.__module__ == "builtins")
        return builtin, str(e).replace("torch.", "pyc10.")
    return str(t.dtype).split(".")[1], tuple(t.shape), t.tolist()


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.tensor(range(3)),
        lambda m: m.tensor(range(0)),
        lambda m: m.tensor(range(3), dtype=m.float64),
        lambda m: m.as_tensor(range(2, 5)),
        lambda m: m.tensor([range(2), range(2)]),
        lambda m: m.tensor([range(3), range(2)]),
        lambda m: m.tensor(_Seq([1, 2.5])),
        lambda m: m.tensor(_Seq([_Seq([1, 2]), _Seq([3, 4])])),
        lambda m: m.tensor(_NoItems()),
        lambda m: m.tensor(bytearray(b"ab")),
        lambda m: m.tensor(b"ab"),
        lambda m: m.tensor({1, 2}),
        lambda m: m.tensor([1.0, None]),
        lambda m: m.ones(1).new_tensor(range(3)),
    ],
)
def test_tensor_reads_any_sequence_as_torch(make: Any) -> None:
    assert _outcome(make, pyc10) == _outcome(make, torch)


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.tensor([m.tensor(1.0), 2]),
        lambda m: m.tensor([m.tensor(1), 2.0]),
        lambda m: m.tensor([[m.tensor(1.0)], [2]]),
        lambda m: m.tensor([m.tensor(1, dtype=m.int32), 2]),
        lambda m: m.tensor([m.tensor(1, dtype=m.int16), m.tensor(2, dtype=m.uint8)]),
        lambda m: m.tensor([m.tensor(1.0, dtype=m.float16), m.tensor(2.0, dtype=m.bfloat16)]),
        lambda m: m.tensor([m.tensor(1.0, dtype=m.float64), np.float32(2)]),
        lambda m: m.tensor([1j, m.tensor(1)]),
        lambda m: m.tensor([2**63, m.tensor(1.0)]),
        lambda m: m.tensor([m.tensor(1.5), 2], dtype=m.int64),
        lambda m: m.tensor([m.tensor([1, 2]), m.tensor([3, 4])]),
        lambda m: m.tensor([m.tensor(1.0), "a"]),
        lambda m: m.as_tensor([m.tensor(1.0), 2]),
        lambda m: m.tensor((np.float32(1), np.int64(2))),
        lambda m: m.tensor([np.float16(1), 2.5]),
        lambda m: m.tensor([np.int32(1), 2]),
        lambda m: m.tensor([np.uint8(1), np.int8(2)]),
        lambda m: m.tensor([np.bool_(True), True]),
        lambda m: m.tensor([np.float32(1.5)], dtype=m.int64),
        lambda m: m.tensor(np.float32(1.5), dtype=m.int64),
        lambda m: m.tensor([np.float64(1.5)], dtype=m.int32),
        lambda m: m.tensor([np.float64(1.5), 2]),
        lambda m: m.tensor([np.complex128(1), 2]),
        lambda m: m.tensor(np.float64(1.5)),
        lambda m: m.tensor([np.arange(2, dtype=np.float32), [1, 2]]),
        lambda m: m.tensor([np.arange(2, dtype=np.int32), np.arange(2, dtype=np.int16)]),
        lambda m: m.tensor([np.array(1, dtype=np.uint8), 300]),
        lambda m: m.tensor([np.array([1.5, 2.5], dtype=np.float32)], dtype=m.int64),
        lambda m: m.tensor([np.array([1.5, 2.5])], dtype=m.int64),
        lambda m: m.tensor([np.array([1 + 1j])], dtype=m.float32),
        lambda m: m.tensor([np.array([1 + 1j])], dtype=m.bool),
        lambda m: m.tensor([np.array([0, 2], dtype=np.int16)], dtype=m.bool),
        lambda m: m.tensor([np.array([True]), np.array([2.5], dtype=np.float16)]),
    ],
)
def test_tensor_infers_the_dtype_of_tensor_and_numpy_leaves_as_torch(make: Any) -> None:
    # torch's infer_scalar_type: a tensor or numpy leaf counts with its own dtype, a Python float
    # as the default dtype, all promoted together (not numpy's float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _outcome(make, pyc10) == _outcome(make, torch)


def _t(m: Any, value: Any, dt: str = "") -> Any:
    return m.tensor(value, dtype=getattr(m, dt)) if dt else m.tensor(value)


@pytest.mark.parametrize(
    "make",
    [
        # tensor leaves copied as they are (one CPU element of the tensor's dtype) or unpacked
        lambda m: [_t(m, 1.5)] * 3,
        lambda m: [[_t(m, 1)], [_t(m, 2)]],
        lambda m: ([_t(m, 1.5), _t(m, 2)], {"dtype": m.float64}),
        lambda m: [_t(m, True), _t(m, False)],
        lambda m: ([_t(m, 5, "uint8")], {"dtype": m.bool}),
        lambda m: [_t(m, 1 + 2j), _t(m, 1.0)],
        lambda m: ([_t(m, 1 + 2j)], {"dtype": m.float32}),
        lambda m: ([_t(m, 3.7)], {"dtype": m.int64}),
        lambda m: ([_t(m, 2**60 + 1)], {"dtype": m.float32}),  # through float(): rounded once
        lambda m: ([_t(m, 2.5, "float64")], {"dtype": m.float16}),
        lambda m: ([_t(m, [2.5])], {"dtype": m.float16}),
        lambda m: [_t(m, [1.0, 2.0, 3.0])[1:2], _t(m, [4.0, 5.0])[1]],
        lambda m: [_t(m, [1.0, 2.0]), [3, 4]],
        lambda m: [[_t(m, [1.0, 2.0])], [[3, 4]]],
        lambda m: ([[_t(m, [1.0, 2.0])], []], {"dtype": m.float32}),
        lambda m: [[_t(m, 1.0)], [_t(m, 2.0), _t(m, 3.0)]],
        lambda m: (((_t(m, 1.0), 2), [3, _t(m, 4.0, "float64")]), {}),
        lambda m: [[_t(m, 1.0), 2], [3, np.float32(4)]],
        lambda m: ([_t(m, 1.0), _t(m, [1.0, 2.0])], {"dtype": m.float64}),
        lambda m: [_t(m, 1.0), 3, np.float32(2)],
        # a last dim of numpy scalars of one type, read at once where that gives the same values
        lambda m: [np.float64(1.5), np.float64(-2.25)],
        lambda m: ([np.float64(1e300), np.float64(2)], {"dtype": m.float32}),
        lambda m: ([np.float64(2.5), np.float64(-1.5)], {"dtype": m.bool}),
        lambda m: ([np.float64(2.5), np.float64(-1.5)], {"dtype": m.int64}),
        lambda m: ([np.float32(1.5), np.float32(2)], {"dtype": m.int64}),
        lambda m: [[np.int32(3), np.int32(4)], [np.int32(5), np.int32(6)]],
        lambda m: [np.bool_(True), np.bool_(False)],
        lambda m: [np.complex64(1 + 1j), np.complex64(2)],
        lambda m: ([np.complex64(1 + 1j), np.complex64(2)], {"dtype": m.float32}),
        lambda m: [np.float16(1.5), np.float16(2)],
        lambda m: ([np.int64(2**62 + 1), np.int64(3)], {"dtype": m.float32}),
        lambda m: [np.longdouble(1.5), np.longdouble(2)],
        lambda m: [np.datetime64(1, "s"), np.datetime64(2, "s")],
    ],
)
@pytest.mark.parametrize("f", ["tensor", "as_tensor"])
def test_tensor_of_many_tensor_or_numpy_leaves_as_torch(make: Any, f: str) -> None:
    def call(m: Any) -> Any:
        made = make(m)
        data, kwargs = made if isinstance(made, tuple) else (made, {})
        return getattr(m, f)(data, **kwargs)

    same(call)


@pytest.mark.parametrize("nbytes", [0, 1, 4, 8, 12])
@pytest.mark.parametrize("dt", [None, "uint8", "int16", "float64"])
def test_tensor_of_a_storage_reads_its_bytes_as_torch(nbytes: int, dt: str | None) -> None:
    # torch reads an untyped storage's bytes as elements of the dtype (int64 inferred from its
    # int items, the default dtype when empty), as many as fit
    data = bytes(range(1, nbytes + 1))
    theirs = torch.UntypedStorage(nbytes)
    ours = pyc10.UntypedStorage(nbytes)
    for i, b in enumerate(data):
        theirs[i] = b
        ours[i] = b
    t = torch.tensor(theirs, dtype=getattr(torch, dt) if dt else None)
    p = pyc10.tensor(ours, dtype=getattr(pyc10, dt) if dt else None)
    assert str(p.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert tuple(p.shape) == tuple(t.shape) and p.tolist() == t.tolist()
