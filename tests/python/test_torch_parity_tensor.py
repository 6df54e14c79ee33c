"""Tensor names torch has beside the table's methods: _base and _is_view, _use_count, the flags
(is_sparse, is_conj, ...), const_data_ptr, storage_type and _typed_storage, dim_order.

Each is called the same way on pyc10 and torch and the results (or errors) compared. The
table-driven methods (unsafe_chunk, unsafe_split, unsafe_split_with_sizes, narrow_copy) are
checked by test_differential.py; their view bookkeeping is checked here.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import pyc10


def _pair(shape: tuple[int, ...] = (2, 3, 4), dtype: str = "float32") -> tuple[Any, Any]:
    a = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    return pyc10.from_numpy(a.copy()), torch.from_numpy(a.copy())


def _outcome(fn: Callable[[], Any]) -> tuple[str, str]:
    try:
        r = fn()
    except Exception as e:  # pyc10's classes derive from the builtin torch raises
        builtin = next(c for c in type(e).__mro__ if c.__module__ == "builtins")
        return builtin.__name__, str(e).replace("pyc10.", "torch.")
    return "ok", repr(r).replace("pyc10.", "torch.")


# (what a tensor is made into, as code over `t`): whether torch records the result as a view
VIEW_MAKERS = [
    "t.view(6, 4)", "t.view(6, 4).view(24)", "t.reshape(4, 6)", "t.transpose(0, 1).reshape(24)",
    "t.permute(2, 0, 1)", "t.mT", "t[0]", "t[:, 1:]", "t[..., 0]", "t[None]", "t[[0, 1]]",
    "t.narrow(1, 0, 2)", "t.select(2, 1)", "t.expand(2, 2, 3, 4)", "t.unsqueeze(0)",
    "t.flatten()", "t.ravel()", "t.unfold(2, 2, 1)", "t.diagonal()", "t.as_strided((2,), (1,))",
    "t.split(1)[0]", "t.chunk(2)[1]", "t.unbind()[0]", "t.tensor_split(2)[0]", "t.hsplit(3)[0]",
    "t.unsafe_split(1)[0]", "t.unsafe_chunk(2)[1]", "t.unsafe_split_with_sizes([1, 1])[0]",
    "t.narrow_copy(1, 0, 2)", "t.clone()", "t.contiguous()", "t.detach()", "t.data",
    "t.view(lib.int32)", "t.view(lib.float32)", "t.real", "t.transpose(0, 2)",
    "t.movedim(0, 2)", "t.swapaxes(0, 1)", "t.squeeze()", "t.expand_as(t)", "t.view_as(t)",
    # views of views through the hot paths (int and slice indexing, view, t, transpose)
    "t[1:]", "t[-1]", "t[0][1:]", "t[1:][0]", "t[0].t()", "t[0].t().t()", "t.view(24)[3:9]",
    "t[1:].transpose(0, 1)", "t.transpose(0, 1)[1].view(2, 2, 2)", "t.unflatten(2, (2, 2))",
    "t.squeeze(0)", "t.unsqueeze(0).squeeze(0)", "t.reshape(24)[2:].reshape(2, 11)",
]  # fmt: skip


@pytest.mark.parametrize("code", VIEW_MAKERS)
def test_base_and_is_view_follow_torch(code: str) -> None:
    outcomes = []
    for lib, t in zip((pyc10, torch), _pair(), strict=True):
        v = eval(code, {"t": t, "lib": lib, "pyc10": pyc10, "torch": torch})
        base = v._base
        outcomes.append((v._is_view(), "self" if base is t else None if base is None else "other"))
    assert outcomes[0] == outcomes[1]


def test_base_is_the_ultimate_base_and_a_plain_tensor_has_none() -> None:
    p, _ = _pair()
    v = p.view(6, 4).transpose(0, 1)[1:]
    assert v._base is p and p._base is None and not p._is_view()
    s = p.squeeze_()  # in place: self stays what it was
    assert s is p and p._base is None


def test_complex_parts_are_views() -> None:
    p = pyc10.zeros(2, 2, dtype=pyc10.complex64)
    assert p.real._base is p and p.imag._base is p and p.T._base is p


def test_use_count_counts_live_views_as_torch() -> None:
    p, t = _pair()
    counts = []
    for x in (p, t):
        v = x.view(24)
        w = x[0]
        row = [x._use_count(), v._use_count()]
        del v
        row.append(x._use_count())
        del w
        row.append(x._use_count())
        row.append(x.unsafe_split(1)[0]._use_count())
        row.append(x._use_count())
        counts.append(row)
    assert counts[0] == counts[1] == [3, 1, 2, 1, 1, 1]


def test_use_count_through_views_of_views_as_torch() -> None:
    p, t = _pair()
    counts = []
    for x in (p, t):
        a = x[1:]
        b = a[0].t()
        c = b.transpose(0, 1)[1].view(2, 2)
        row = [x._use_count(), a._use_count(), b._use_count(), c._use_count()]
        del a
        row.append(x._use_count())
        del b
        row.append(x._use_count())
        c = c[0]  # the old c dies as its view is made
        row.append(x._use_count())
        del c
        row.append(x._use_count())
        counts.append(row)
    assert counts[0] == counts[1]


FLAGS = ["is_sparse", "is_sparse_csr", "is_quantized", "is_mkldnn", "is_nested"]


@pytest.mark.parametrize("name", FLAGS)
def test_layout_flags_are_false_attributes(name: str) -> None:
    p, t = _pair()
    assert getattr(p, name) is getattr(t, name) is False
    with pytest.raises(AttributeError):
        setattr(p, name, True)


@pytest.mark.parametrize("name", ["is_conj", "is_neg", "resolve_conj", "resolve_neg", "_is_view",
                                  "_use_count", "const_data_ptr"])  # fmt: skip
def test_no_argument_methods_refuse_arguments_as_torch(name: str) -> None:
    p, t = _pair()
    assert _outcome(lambda: getattr(p, name)(1)) == _outcome(lambda: getattr(t, name)(1))


def test_conj_and_neg_bits() -> None:
    for dtype in ("float32", "int64", "complex64"):
        p, t = _pair((3,), dtype)
        assert p.is_conj() is t.is_conj() is False
        assert p.is_neg() is t.is_neg() is False
        assert p.resolve_conj() is p and t.resolve_conj() is t
        assert p.resolve_neg() is p and t.resolve_neg() is t


def test_const_data_ptr_is_data_ptr() -> None:
    p, _ = _pair()
    assert p.const_data_ptr() == p.data_ptr() == p[1].data_ptr() - 12 * 4


@pytest.mark.parametrize(
    "dtype",
    [
        "float64",
        "float32",
        "float16",
        "int64",
        "int32",
        "int16",
        "int8",
        "uint8",
        "bool",
        "complex64",
        "complex128",
        "bfloat16",
        "uint16",
    ],
)
def test_storage_type_is_torchs_legacy_class(dtype: str) -> None:
    p = pyc10.zeros(2, dtype=getattr(pyc10, dtype))
    t = torch.zeros(2, dtype=getattr(torch, dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = p.storage_type(), t.storage_type()
    if theirs is None:
        assert ours is None
        return
    assert ours is not None
    assert ours.__name__ == theirs.__name__ and ours.__module__ == "pyc10"
    assert getattr(pyc10, ours.__name__) is ours
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = ours(3)
    assert isinstance(s, pyc10.TypedStorage) and s.dtype == p.dtype and s.size() == 3


def test_storage_type_warns_and_takes_no_arguments_as_torch() -> None:
    p, t = _pair()
    assert _outcome(lambda: p.storage_type(1)) == _outcome(lambda: t.storage_type(1))
    from pyc10 import _typed_storage

    _typed_storage._reset_warn_typed_storage_removal()
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        p.storage_type()


def test_typed_storage_is_the_storage_without_a_warning() -> None:
    p, t = _pair()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ts, tt = p._typed_storage(), t._typed_storage()
    assert isinstance(ts, pyc10.TypedStorage) and ts.dtype == p.dtype
    assert ts.size() == tt.size() and ts.data_ptr() == p.data_ptr()


def _dim_order_cases() -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    out = []
    for shape in [
        (2, 3, 5, 7),
        (1, 2, 3, 4),
        (2, 1),
        (3,),
        (),
        (2, 2),
        (4, 1, 1, 3),
        (2, 3, 4, 5, 6),
    ]:
        for perm in itertools.islice(itertools.permutations(range(len(shape))), 6):
            out.append((shape, perm))
    return out


CHECKS: list[Any] = [False, True, [], "x", ["contiguous_format", "channels_last"],
                     ["channels_last"], [1]]  # fmt: skip


@pytest.mark.parametrize(("shape", "perm"), _dim_order_cases())
def test_dim_order_agrees_with_torch(shape: tuple[int, ...], perm: tuple[int, ...]) -> None:
    p, t = _pair(shape)
    p, t = p.permute(perm), t.permute(perm)
    for check in CHECKS:

        def arg(lib: Any, check: Any = check) -> Any:
            if isinstance(check, list):
                return [getattr(lib, f) if isinstance(f, str) else f for f in check]
            return check

        ours = _outcome(lambda: p.dim_order(ambiguity_check=arg(pyc10)))
        theirs = _outcome(lambda: t.dim_order(ambiguity_check=arg(torch)))
        assert ours == theirs, (shape, perm, check)


def test_dim_order_binds_as_torchs_python_method() -> None:
    p, t = _pair()
    for call in (
        lambda x: x.dim_order(True),
        lambda x: x.dim_order(foo=1),
        lambda x: x.dim_order(),
    ):
        assert _outcome(lambda: call(p)) == _outcome(lambda: call(t))  # noqa: B023
    cl_p = pyc10.empty(2, 3, 4, 5, memory_format=pyc10.channels_last)
    cl_t = torch.empty(2, 3, 4, 5, memory_format=torch.channels_last)
    assert cl_p.dim_order() == cl_t.dim_order() == (0, 2, 3, 1)
