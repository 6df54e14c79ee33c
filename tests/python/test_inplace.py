"""inplace.c against torch: in-place views, resize_/set_, tensor_split and its kin, real/imag/conj.

Every case runs the same call on pyc10 and torch (tensors made from the same numpy data) and
compares what comes back (geometry, values, identity with self) or the exception's class and
message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import pyc10


def _pair(a: np.ndarray) -> tuple[Any, Any]:
    return pyc10.from_numpy(a.copy()), torch.from_numpy(a.copy())


def _arange(*shape: int, dtype: str = "float32") -> tuple[Any, Any]:
    return _pair(np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape))


def _geometry(t: Any) -> tuple[Any, ...]:
    return tuple(t.shape), tuple(t.stride()), t.storage_offset(), str(t.dtype).rsplit(".", 1)[-1]


def _same(ours: Any, theirs: Any, values: bool = True) -> None:
    assert _geometry(ours) == _geometry(theirs)
    if values:
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def _both(fn: Callable[[Any, Any], Any], ours: Any, theirs: Any) -> tuple[Any, Any]:
    """fn(lib, tensor) on both; the same exception (class and message) or both results."""
    try:
        r_t = fn(torch, theirs)
    except Exception as e:
        with pytest.raises(type(e) if isinstance(e, RuntimeError | TypeError) else Exception) as ei:
            fn(pyc10, ours)
        assert str(ei.value).replace("pyc10", "torch") == str(e).split("\nException raised")[0]
        return None, None
    return fn(pyc10, ours), r_t


# ---- in-place views ----

VIEW_CALLS = [
    ("t_ 2d", (2, 3), lambda lib, x: x.t_()),
    ("t_ 1d", (4,), lambda lib, x: x.t_()),
    ("t_ 3d", (2, 3, 4), lambda lib, x: x.t_()),
    ("transpose_", (2, 3, 4), lambda lib, x: x.transpose_(0, 2)),
    ("transpose_ kw", (2, 3, 4), lambda lib, x: x.transpose_(dim0=-1, dim1=1)),
    ("transpose_ bad dim", (2, 3, 4), lambda lib, x: x.transpose_(0, 5)),
    ("swapdims_", (2, 3, 4), lambda lib, x: x.swapdims_(1, 2)),
    ("swapaxes_", (2, 3, 4), lambda lib, x: x.swapaxes_(axis0=0, axis1=1)),
    ("squeeze_", (2, 1, 4, 1), lambda lib, x: x.squeeze_()),
    ("squeeze_ dim", (2, 1, 4, 1), lambda lib, x: x.squeeze_(1)),
    ("squeeze_ dim not 1", (2, 1, 4, 1), lambda lib, x: x.squeeze_(0)),
    ("squeeze_ dims", (2, 1, 4, 1), lambda lib, x: x.squeeze_((1, 3))),
    ("squeeze_ repeated", (2, 1, 4, 1), lambda lib, x: x.squeeze_((1, 1))),
    ("unsqueeze_", (2, 3), lambda lib, x: x.unsqueeze_(-1)),
    ("unsqueeze_ bad", (2, 3), lambda lib, x: x.unsqueeze_(4)),
    ("as_strided_", (2, 3, 4), lambda lib, x: x.as_strided_((3, 2), (1, 3), 2)),
    ("as_strided_ out", (2, 3, 4), lambda lib, x: x.as_strided_((3, 2), (1, 30))),
    ("as_strided_ fn", (2, 3, 4), lambda lib, x: lib.as_strided_(x, (4,), (2,))),
]


@pytest.mark.parametrize("name, shape, fn", VIEW_CALLS, ids=[c[0] for c in VIEW_CALLS])
def test_in_place_views_change_self_as_torch(name: str, shape: tuple[int, ...], fn: Any) -> None:
    ours, theirs = _arange(*shape)
    r_ours, r_theirs = _both(fn, ours, theirs)
    if r_theirs is None:
        _same(ours, theirs)  # a refused call leaves self as it was
        return
    assert r_theirs is theirs and r_ours is ours
    _same(ours, theirs)


def test_an_in_place_view_keeps_sharing_the_storage() -> None:
    x = pyc10.zeros(2, 3)
    alias = x[:]
    x.t_()
    x[2, 1] = 5.0
    assert alias[1, 2].item() == 5.0
    assert x.shape == (3, 2) and x.stride() == (1, 3)
    assert x.untyped_storage().data_ptr() == alias.untyped_storage().data_ptr()


# ---- resize_, resize_as_, set_ ----

RESIZE_CALLS = [
    ("grow", (2, 3), lambda lib, x: x.resize_(4, 5)),
    ("shrink", (2, 3), lambda lib, x: x.resize_(4)),
    ("list", (2, 3), lambda lib, x: x.resize_([3, 2])),
    ("zero", (2, 3), lambda lib, x: x.resize_(0)),
    ("0-dim", (2, 3), lambda lib, x: x.resize_(())),
    ("negative", (2, 3), lambda lib, x: x.resize_(-1, 2)),
    ("channels_last", (2, 3), lambda lib, x: x.resize_(1, 2, 3, 1,
                                                       memory_format=lib.channels_last)),
    ("channels_last rank", (2, 3), lambda lib, x: x.resize_(6, memory_format=lib.channels_last)),
    ("channels_last_3d", (2, 3), lambda lib, x: x.resize_(1, 2, 1, 3, 1,
                                                          memory_format=lib.channels_last_3d)),
    ("preserve", (2, 3), lambda lib, x: x.resize_(3, 2, memory_format=lib.preserve_format)),
    ("contiguous", (2, 3), lambda lib, x: x.resize_(2, 3, memory_format=lib.contiguous_format)),
    ("as_ bigger", (2, 3), lambda lib, x: x.resize_as_(lib.zeros(3, 4))),
    ("as_ fn", (2, 3), lambda lib, x: lib.resize_as_(x, lib.zeros(5))),
    ("as_ preserve cl", (2, 3), lambda lib, x: x.resize_as_(
        lib.zeros(1, 2, 3, 4).permute(0, 2, 3, 1), memory_format=lib.preserve_format)),
]  # fmt: skip


def _owned(*shape: int) -> tuple[Any, Any]:
    """Tensors over resizable storages (from_numpy's are not) holding arange."""
    a = np.arange(int(np.prod(shape)), dtype="float32").reshape(shape)
    return tuple(lib.zeros(*shape).copy_(lib.from_numpy(a.copy())) for lib in (pyc10, torch))


@pytest.mark.parametrize("name, shape, fn", RESIZE_CALLS, ids=[c[0] for c in RESIZE_CALLS])
def test_resize_as_torch(name: str, shape: tuple[int, ...], fn: Any) -> None:
    ours, theirs = _owned(*shape)
    r_ours, r_theirs = _both(fn, ours, theirs)
    if r_theirs is not None:
        assert r_theirs is theirs and r_ours is ours
    elif name == "negative":
        # divergence: torch leaves a tensor of size -1 behind; pyc10 leaves self as it was
        assert tuple(ours.shape) == shape
        return
    # torch resizes before it refuses a memory format: self is as torch left it either way
    assert _geometry(ours) == _geometry(theirs)
    assert ours.untyped_storage().nbytes() == theirs.untyped_storage().nbytes()
    n = min(6, ours.numel())  # the elements that were there before are kept
    kept_ours = np.frombuffer(bytes(ours.untyped_storage()), "float32")[:n]
    kept_theirs = np.frombuffer(bytes(theirs.untyped_storage()), "float32")[:n]
    np.testing.assert_array_equal(kept_ours, kept_theirs)


def test_resize_keeps_strides_of_unchanged_sizes() -> None:
    ours, theirs = _owned(3, 4)
    ours.t_().resize_(4, 3)
    theirs.t_().resize_(4, 3)
    _same(ours, theirs)


def test_resize_of_an_external_storage_is_refused_as_torch() -> None:
    a = np.arange(6, dtype=np.float32)
    ours, theirs = pyc10.from_numpy(a), torch.from_numpy(a)
    with pytest.raises(RuntimeError) as e:
        theirs.resize_(10)
    with pytest.raises(RuntimeError) as o:
        ours.resize_(10)
    assert str(o.value) == str(e.value).split("\nException raised")[0]


def _storage_calls() -> list[tuple[str, Any]]:
    return [
        ("empty", lambda lib, x, s: x.set_()),
        ("storage", lambda lib, x, s: x.set_(s)),
        ("storage kw", lambda lib, x, s: x.set_(source=s)),
        ("storage geometry", lambda lib, x, s: x.set_(s, 2, (2, 3))),
        ("storage strides", lambda lib, x, s: x.set_(s, 1, (2, 3), (1, 2))),
        ("storage grows", lambda lib, x, s: x.set_(s, 20, (4, 5))),
        ("storage negative offset", lambda lib, x, s: x.set_(s, -1, (2,))),
        ("storage unequal", lambda lib, x, s: x.set_(s, 0, (2,), (1, 1))),
        ("storage negative size", lambda lib, x, s: x.set_(s, 0, (-2,))),
        ("tensor", lambda lib, x, s: x.set_(lib.zeros(3, 4)[:, 1:])),
        ("tensor geometry", lambda lib, x, s: x.set_(lib.zeros(3, 4), 1, (2, 2), (1, 4))),
        ("tensor dtype", lambda lib, x, s: x.set_(lib.zeros(3, dtype=lib.int64))),
        ("tensor dtype geometry", lambda lib, x, s: x.set_(lib.zeros(3, dtype=lib.int16), 0, (1,))),
        ("self", lambda lib, x, s: x.set_(x)),
    ]


@pytest.mark.parametrize("name, fn", _storage_calls(), ids=[c[0] for c in _storage_calls()])
def test_set_as_torch(name: str, fn: Any) -> None:
    ours, theirs = _arange(2, 3)
    src_ours, src_theirs = _arange(24, dtype="int8")
    s_ours, s_theirs = src_ours.untyped_storage(), src_theirs.untyped_storage()
    try:
        r_theirs = fn(torch, theirs, s_theirs)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as o:
            fn(pyc10, ours, s_ours)
        assert str(o.value) == str(e).split("\nException raised")[0]
        return
    r_ours = fn(pyc10, ours, s_ours)
    assert r_theirs is theirs and r_ours is ours
    _same(ours, theirs, values=False)
    assert ours.untyped_storage().nbytes() == theirs.untyped_storage().nbytes()
    if name.startswith("storage"):
        assert ours.untyped_storage() is s_ours
        assert s_ours.nbytes() == s_theirs.nbytes()  # grown as torch grows it
        if theirs.numel():
            m = min(24, s_ours.nbytes()) // 4 * 4  # the bytes that were there before
            assert bytes(s_ours)[:m] == bytes(s_theirs)[:m]


def test_set_shares_the_source_tensors_storage() -> None:
    src = pyc10.zeros(4)
    x = pyc10.zeros(2).set_(src)
    x[1] = 3.0
    assert src[1].item() == 3.0 and x.is_set_to(src)


# ---- tensor_split, hsplit, vsplit, dsplit ----

SPLIT_CALLS = [
    ("sections", (7, 2), lambda lib, x: x.tensor_split(3)),
    ("sections dim", (2, 7), lambda lib, x: x.tensor_split(3, dim=-1)),
    ("more sections than elements", (3,), lambda lib, x: x.tensor_split(5)),
    ("zero sections", (3,), lambda lib, x: x.tensor_split(0)),
    ("0-dim", (), lambda lib, x: x.tensor_split(2)),
    ("0-dim indices", (), lambda lib, x: x.tensor_split([1])),
    ("bad dim", (3,), lambda lib, x: x.tensor_split(2, 1)),
    ("indices", (8,), lambda lib, x: x.tensor_split([2, 5])),
    ("indices negative", (8,), lambda lib, x: x.tensor_split((-3, -1))),
    ("indices decreasing", (8,), lambda lib, x: x.tensor_split([5, 2, 9, 20])),
    ("indices empty", (8,), lambda lib, x: x.tensor_split([])),
    ("tensor indices", (8,), lambda lib, x: x.tensor_split(lib.from_numpy(np.array([1, 6])))),
    ("tensor sections", (8,), lambda lib, x: x.tensor_split(lib.from_numpy(np.array(3)))),
    (
        "tensor strided",
        (8,),
        lambda lib, x: x.tensor_split(lib.from_numpy(np.array([1, 4, 6]))[::2]),
    ),
    ("tensor float", (8,), lambda lib, x: x.tensor_split(lib.zeros(2))),
    ("tensor 2d", (8,), lambda lib, x: x.tensor_split(lib.zeros(1, 1, dtype=lib.int64))),
    ("fn", (8,), lambda lib, x: lib.tensor_split(x, [3], 0)),
    ("fn kw", (8,), lambda lib, x: lib.tensor_split(input=x, sections=2)),
    ("hsplit 1d", (6,), lambda lib, x: x.hsplit(3)),
    ("hsplit 2d", (2, 6), lambda lib, x: x.hsplit([1, 4])),
    ("hsplit indivisible", (2, 5), lambda lib, x: x.hsplit(2)),
    ("hsplit zero", (2, 5), lambda lib, x: x.hsplit(0)),
    ("hsplit -1", (2, 5), lambda lib, x: x.hsplit(-1)),
    ("hsplit 0-dim", (), lambda lib, x: x.hsplit(1)),
    ("vsplit", (4, 2), lambda lib, x: x.vsplit(2)),
    ("vsplit 1d", (4,), lambda lib, x: x.vsplit(2)),
    ("vsplit indices", (4, 2), lambda lib, x: lib.vsplit(x, [3])),
    ("dsplit", (1, 2, 4), lambda lib, x: x.dsplit(2)),
    ("dsplit 2d", (2, 4), lambda lib, x: x.dsplit([1])),
    ("dsplit indivisible", (1, 2, 3), lambda lib, x: lib.dsplit(x, 2)),
]


@pytest.mark.parametrize("name, shape, fn", SPLIT_CALLS, ids=[c[0] for c in SPLIT_CALLS])
def test_splits_as_torch(name: str, shape: tuple[int, ...], fn: Any) -> None:
    ours, theirs = _arange(*shape)
    r_ours, r_theirs = _both(fn, ours, theirs)
    if r_theirs is None:
        return
    assert type(r_ours) is tuple and len(r_ours) == len(r_theirs)
    for a, b in zip(r_ours, r_theirs, strict=True):
        _same(a, b)


def test_split_pieces_are_views() -> None:
    x = pyc10.zeros(6)
    _, b = x.tensor_split([2])
    b[0] = 7.0
    assert x[2].item() == 7.0


# ---- real, imag, conj ----

COMPLEX = np.array([[1 + 2j, -3.5 - 0.5j, 0j], [4j, 5, -1e30 + 1e-30j]])


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize(
    "view", [lambda x: x, lambda x: x.t(), lambda x: x[1:, ::2], lambda x: x[1, 1]]
)
def test_real_and_imag_are_float_views_as_torch(dtype: str, view: Any) -> None:
    ours, theirs = _pair(COMPLEX.astype(dtype))
    ours, theirs = view(ours), view(theirs)
    for part in ("real", "imag"):
        _same(getattr(ours, part), getattr(theirs, part))
        _same(getattr(pyc10, part)(ours), getattr(torch, part)(theirs))


def test_writes_through_real_and_imag_reach_self() -> None:
    ours, theirs = _pair(COMPLEX.astype("complex64"))
    for x in (ours, theirs):
        x.imag[0, 0] = 9.0
        x.real.fill_(-1.0)
        x.imag = x.real  # the setter copies, as torch
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert ours._version == theirs._version or ours._version > 0


def test_real_of_a_real_tensor_is_self_and_imag_refuses() -> None:
    ours, theirs = _arange(2, 3)
    assert ours.real is ours and theirs.real is theirs
    assert pyc10.real(ours) is ours
    with pytest.raises(RuntimeError) as e:
        theirs.imag  # noqa: B018
    with pytest.raises(RuntimeError) as o:
        ours.imag  # noqa: B018
    assert str(o.value) == str(e.value)
    with pytest.raises(RuntimeError):
        pyc10.imag(ours)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_conj_values_as_torch(dtype: str) -> None:
    a = COMPLEX.astype(dtype)
    a[1, 2] = complex(1, np.nan)
    ours, theirs = _pair(a)
    for o, t in ((ours.conj(), theirs.conj()), (pyc10.conj(ours.t()), torch.conj(theirs.t()))):
        assert tuple(o.shape) == tuple(t.shape) and o.dtype == getattr(pyc10, dtype)
        np.testing.assert_array_equal(o.numpy(), t.resolve_conj().numpy())


def test_conj_of_complex32_flips_the_half_imag_sign() -> None:
    ours = pyc10.from_numpy(np.array([1 + 2j, -3j], dtype="complex64")).to(pyc10.complex32)
    theirs = torch.tensor([1 + 2j, -3j], dtype=torch.complex32)
    out = ours.conj().to(pyc10.complex64).numpy()
    np.testing.assert_array_equal(out, theirs.conj().resolve_conj().to(torch.complex64).numpy())


def test_conj_of_real_tensors_is_self() -> None:
    ours, theirs = _arange(3, dtype="int64")
    assert ours.conj() is ours and theirs.conj() is theirs
    assert pyc10.conj(ours) is ours


# ---- shared memory; function forms of attrs.c's methods ----


def test_is_shared_and_share_memory() -> None:
    ours, theirs = _arange(3)
    assert ours.is_shared() is theirs.is_shared() is False
    view, tview = ours[1:], theirs[1:]
    assert ours.share_memory_() is ours and theirs.share_memory_() is theirs
    assert ours.is_shared() is theirs.is_shared() is True
    assert view.is_shared() is tview.is_shared() is True  # the storage moved, in place
    assert ours.tolist() == theirs.tolist() and view.tolist() == tview.tolist()
    assert ours.share_memory_() is ours  # once shared, nothing to do
    for call in (lambda x: x.share_memory_(1), lambda x: x.is_shared(1)):
        with pytest.raises(TypeError) as a:
            call(ours)
        with pytest.raises(TypeError) as b:
            call(theirs)
        assert str(a.value) == str(b.value)


def test_share_memory_is_seen_by_a_forked_child_and_keeps_earlier_arrays_valid() -> None:
    import os

    x = pyc10.zeros(4)
    early = x.numpy()  # torch frees the memory under such an array; pyc10 keeps it
    x.share_memory_()
    pid = os.fork()
    if pid == 0:  # the child writes through the shared mapping, and exits at once
        x[1] = 5.0
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert status == 0
    assert x.tolist() == [0.0, 5.0, 0.0, 0.0]
    assert early.tolist() == [0.0, 0.0, 0.0, 0.0]
    with pytest.raises(RuntimeError, match="not resizable"):  # torch's resize_ crashes here
        x.untyped_storage().resize_(64)


FUNCTION_FORMS = [
    ("ravel", lambda lib, x: lib.ravel(x.t())),
    ("adjoint", lambda lib, x: lib.adjoint(x)),
    ("detach", lambda lib, x: lib.detach(x)),
    ("is_complex", lambda lib, x: lib.is_complex(x)),
    ("is_floating_point", lambda lib, x: lib.is_floating_point(input=x)),
    ("is_nonzero", lambda lib, x: lib.is_nonzero(x[1:2, 1])),
    ("is_nonzero many", lambda lib, x: lib.is_nonzero(x)),
    ("is_same_size", lambda lib, x: lib.is_same_size(x, other=x.t())),
    ("is_signed", lambda lib, x: lib.is_signed(x)),
    ("get_device", lambda lib, x: lib.get_device(x)),
]


@pytest.mark.parametrize("name, fn", FUNCTION_FORMS, ids=[c[0] for c in FUNCTION_FORMS])
def test_function_forms_as_torch(name: str, fn: Any) -> None:
    ours, theirs = _arange(2, 3)
    r_ours, r_theirs = _both(fn, ours, theirs)
    if isinstance(r_theirs, torch.Tensor):
        _same(r_ours, r_theirs)
    else:
        assert r_ours == r_theirs and type(r_ours) is type(r_theirs)
