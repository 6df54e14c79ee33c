"""Views against torch: random chains of view operations on random strided tensors agree on
success or failure (exception type and message), shape, strides, storage offset, contiguity flags,
and sharing of storage and version counter."""

from __future__ import annotations

import random

import pytest
import torch
from test_tensor import flags  # type: ignore[import-not-found]

import pyc10

aten = torch.ops.aten


def rand_dim(rng, n):
    return rng.randint(-n - 1, n) if n else rng.choice([0, -1, 1, -2])


def random_op(rng, shape):  # noqa: PLR0912 - one branch per operation
    """A (name, args) pair, sometimes invalid on purpose."""
    n = len(shape)
    numel = 1
    for s in shape:
        numel *= s
    kind = rng.choice(
        [
            "view",
            "transpose",
            "permute",
            "narrow",
            "select",
            "slice",
            "unsqueeze",
            "squeeze",
            "squeeze_dim",
            "squeeze_dims",
            "expand",
            "as_strided",
            "t",
            "reshape",
            "flatten",
            "unflatten",
            "movedim",
            "diagonal",
            "unfold",
            "mT",
        ]
    )
    if kind in ("reshape", "mT"):
        return kind, _reshape_args(rng, numel) if kind == "reshape" else ()
    if kind == "flatten":
        return kind, tuple(rand_dim(rng, n) for _ in range(rng.choice([0, 1, 2, 2])))
    if kind == "unflatten":
        dim = rand_dim(rng, n)
        size = shape[dim] if n and -n <= dim < n else 1
        divisors = [d for d in range(1, size + 1) if size % d == 0] or [1]
        d = rng.choice(divisors)
        sizes = [d, size // d] if size else [rng.choice([0, 1, 2]), rng.choice([0, -1, 3])]
        if rng.random() < 0.3:
            sizes[rng.randrange(2)] = -1
        if rng.random() < 0.1:
            sizes = [rng.choice([2, 3, -1, -2]) for _ in range(rng.randint(0, 3))]
        return kind, (dim, tuple(sizes))
    if kind == "movedim":
        k = rng.randint(0, min(n, 3)) if n else rng.randint(0, 1)
        src = [rand_dim(rng, n) for _ in range(k)]
        dst = [rand_dim(rng, n) for _ in range(k if rng.random() < 0.9 else k + 1)]
        if k == 1 and rng.random() < 0.5:
            return kind, (src[0], dst[0])
        return kind, (tuple(src), tuple(dst))
    if kind == "diagonal":
        return kind, (rng.randint(-4, 4), rand_dim(rng, n), rand_dim(rng, n))
    if kind == "unfold":
        dim = rand_dim(rng, n)
        size = shape[dim] if n and -n <= dim < n else 1
        return kind, (dim, rng.randint(-1, size + 1), rng.choice([0, 1, 1, 2, 3]))
    if kind == "view":
        if rng.random() < 0.7 and numel:
            dims, rest = [], numel
            for _ in range(rng.randint(0, 4)):
                divisors = [d for d in range(1, rest + 1) if rest % d == 0]
                d = rng.choice(divisors)
                dims.append(d)
                rest //= d
            dims.append(rest)
            if rng.random() < 0.3:
                dims[rng.randrange(len(dims))] = -1
            rng.shuffle(dims)
            return kind, (tuple(dims),)
        return kind, (tuple(rng.choice([-2, -1, 0, 1, 2, 3, 6]) for _ in range(rng.randint(0, 3))),)
    if kind == "transpose":
        return kind, (rand_dim(rng, n), rand_dim(rng, n))
    if kind == "permute":
        perm = list(range(n))
        rng.shuffle(perm)
        if rng.random() < 0.15 and n:
            perm[0] = perm[-1]
        if rng.random() < 0.1:
            perm = perm[:-1]
        return kind, tuple(perm)
    if kind in ("narrow", "select", "slice"):
        dim = rand_dim(rng, n)
        size = shape[dim] if n and -n <= dim < n else 3
        if kind == "narrow":
            return kind, (dim, rng.randint(-size - 1, size + 1), rng.randint(-1, size + 1))
        if kind == "select":
            return kind, (dim, rng.randint(-size - 1, size))
        return kind, (
            dim,
            rng.randint(-size - 2, size + 2),
            rng.randint(-size - 2, size + 2),
            rng.choice([1, 1, 2, 3, 0]),
        )
    if kind == "unsqueeze":
        return kind, (rng.randint(-n - 2, n + 1),)
    if kind == "squeeze":
        return kind, ()
    if kind == "squeeze_dim":
        return "squeeze", (rand_dim(rng, n),)
    if kind == "squeeze_dims":
        return "squeeze", (tuple(rand_dim(rng, n) for _ in range(rng.randint(0, 3))),)
    if kind == "expand":
        target = [s if s != 1 or rng.random() < 0.5 else rng.choice([1, 2, 3]) for s in shape]
        if rng.random() < 0.3:
            target = [-1 if rng.random() < 0.5 else s for s in target]
        lead = [rng.choice([1, 2, 3, -1]) for _ in range(rng.randint(0, 2))]
        if rng.random() < 0.1 and target:
            target = target[1:]
        if rng.random() < 0.1 and target:
            target[0] += 1
        return kind, tuple(lead + target)
    if kind == "as_strided":
        m = rng.randint(0, 3)
        sizes = tuple(rng.randint(0, 3) for _ in range(m))
        strides = tuple(
            rng.choice([0, 1, 2, 3, -1] if rng.random() < 0.1 else [0, 1, 2, 3])
            for _ in range(m if rng.random() < 0.95 else m + 1)
        )
        offset = rng.choice([None, 0, 1, 2, 5, -1, 1000])
        return kind, (sizes, strides, offset)
    return "t", ()


def _reshape_args(rng, numel):
    dims, rest = [], numel
    for _ in range(rng.randint(0, 3)):
        divisors = [d for d in range(1, rest + 1) if rest % d == 0] or [0, 1]
        d = rng.choice(divisors)
        dims.append(d)
        rest = rest // d if d else rest
    dims.append(rest)
    if rng.random() < 0.3:
        dims[rng.randrange(len(dims))] = -1
    if rng.random() < 0.1:
        dims.append(rng.choice([2, 5]))
    return (tuple(dims),)


def apply(t, name, args, is_torch):
    if name == "mT":
        return t.mT
    if name == "slice":
        return aten.slice.Tensor(t, *args) if is_torch else t._slice(*args)
    if name == "permute":
        return t.permute(*args)
    if name == "view":
        return t.view(*args)
    if name == "expand":
        return t.expand(*args)
    if name == "reshape":
        return t.reshape(*args)
    return getattr(t, name)(*args)


def outcome(t, name, args, is_torch):
    try:
        return ("ok", apply(t, name, args, is_torch))
    except (RuntimeError, IndexError, ValueError, TypeError) as e:
        return (type(e), str(e).splitlines()[0])


def same(ours, theirs):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.stride() == theirs.stride()
    assert ours.storage_offset() == theirs.storage_offset()
    assert flags(ours, False) == flags(theirs, True)


def test_random_view_chains_agree_with_torch():
    rng = random.Random(4321)
    checked = 0
    for _ in range(1500):
        n = rng.randint(0, 5)
        sizes = [rng.choice([0, 1, 1, 2, 3, 4]) for _ in range(n)]
        perm = list(range(n))
        rng.shuffle(perm)
        strides, s = [0] * n, 1
        for d in reversed(perm):
            strides[d] = s
            s *= max(sizes[d], 1)
        ours, theirs = pyc10.empty_strided(sizes, strides), torch.empty_strided(sizes, strides)
        for _ in range(4):
            name, args = random_op(rng, list(theirs.shape))
            t_out = outcome(theirs, name, args, True)
            o_out = outcome(ours, name, args, False)
            where = f"{name}{args} on {tuple(theirs.shape)}/{theirs.stride()}"
            if t_out[0] == "ok":
                assert o_out[0] == "ok", (where, o_out)
                same(o_out[1], t_out[1])
                copied = (
                    t_out[1].untyped_storage().data_ptr() != theirs.untyped_storage().data_ptr()
                )
                if copied and theirs.numel():  # reshape of a layout view() cannot express
                    assert (
                        o_out[1].untyped_storage().data_ptr() != ours.untyped_storage().data_ptr()
                    )
                    assert o_out[1]._version == 0
                elif ours.data_ptr():  # storages of 0 bytes have no address
                    moved = (o_out[1].storage_offset() - ours.storage_offset()) * 4
                    if o_out[1].storage_offset() * 4 > ours.untyped_storage().nbytes():
                        # no elements past the storage's end: torch's pointer lies outside
                        # the storage, ours is NULL
                        assert o_out[1].numel() == 0
                        assert o_out[1].data_ptr() == 0
                    else:
                        assert o_out[1].data_ptr() == ours.data_ptr() + moved
                ours, theirs = o_out[1], t_out[1]
                checked += 1
            else:
                assert o_out[0] != "ok", (where, t_out)
                assert issubclass(o_out[0], t_out[0]), (where, t_out, o_out)
                assert o_out[1] == t_out[1], (where, t_out, o_out)
                break
    assert checked > 1500  # ~2000 agreeing ops with this seed


def test_views_share_storage_and_version_counter():
    base = pyc10.empty(2, 3, 4)
    view = base.transpose(0, 2).narrow(0, 1, 2).unsqueeze(1)
    assert view.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
    assert view._version == base._version == 0
    assert base.untyped_storage().use_count() >= 2
    with pyc10_inference():
        inner = base.view(-1)
    assert not inner.is_inference()  # a view of a normal tensor stays normal


class pyc10_inference:  # a context manager, lower-case as torch.inference_mode
    def __enter__(self):
        from pyc10._lib import lib

        self.previous = lib.c10c_inference_mode_set(True)

    def __exit__(self, *exc):
        from pyc10._lib import lib

        lib.c10c_inference_mode_set(self.previous)


@pytest.mark.parametrize(
    ("make", "call"),
    [
        ((2, 3, 4), lambda t: t.t()),
        ((3,), lambda t: t.t()),
        ((), lambda t: t.t()),
        ((2, 3), lambda t: t.t()),
        ((3, 1), lambda t: t.expand(4)),
        ((3, 1), lambda t: t.expand(2, 3, 4)),
        ((3, 1), lambda t: t.expand(4, 4)),
        ((3, 1), lambda t: t.expand(-1, 2, 1)),
        ((2, 3, 4), lambda t: t.permute(0, 1)),
        ((2, 3, 4), lambda t: t.permute(0, 1, 1)),
        ((), lambda t: t.narrow(0, 0, 1)),
        ((3,), lambda t: t.narrow(0, 4, 0)),
        ((3,), lambda t: t.narrow(0, 2, 2)),
        ((2, 3, 4), lambda t: t.select(1, 3)),
        ((), lambda t: t.select(0, 0)),
        ((4, 6), lambda t: t.view(5, 5)),
        ((4, 6), lambda t: t.view(-1, -1)),
        ((0, 3), lambda t: t.view(0, -1)),
        ((2,), lambda t: t.view(())),
        ((2, 1), lambda t: t.squeeze((1, 1))),
        ((2, 3), lambda t: t.as_strided((2, 2), (1, -1))),
        ((2, 3), lambda t: t.as_strided((2, 2), (1,))),
        ((2, 3), lambda t: t.as_strided((2,), (1,), -1)),
        ((2, 3), lambda t: t.as_strided((2, 2), (1, 2), 23)),
        ((2,), lambda t: t.unsqueeze(3)),
    ],
)
def test_view_errors_and_edges_match_torch(make, call):
    theirs, ours = torch.empty(make), pyc10.empty(make)
    try:
        expected = ("ok", call(theirs))
    except (RuntimeError, IndexError) as e:
        expected = (type(e), str(e).splitlines()[0])
    if expected[0] == "ok":
        same(call(ours), expected[1])
    else:
        with pytest.raises(expected[0]) as info:
            call(ours)
        assert str(info.value) == expected[1]


VIEW_DTYPES = ["int8", "int16", "float16", "float32", "int64", "float64", "complex128", "bool"]


def test_view_as_dtype_agrees_with_torch():
    rng = random.Random(11)
    agreed = 0
    for _ in range(600):
        n = rng.randint(0, 3)
        sizes = [rng.choice([0, 1, 2, 3, 4, 8]) for _ in range(n)]
        src_dtype, dst_dtype = rng.choice(VIEW_DTYPES), rng.choice(VIEW_DTYPES)
        theirs = torch.empty(64 * 16, dtype=getattr(torch, src_dtype))
        ours = pyc10.empty(64 * 16, dtype=getattr(pyc10, src_dtype))
        strides = [rng.choice([1, 1, 2, 4, 8, 16]) for _ in range(n)]
        offset = rng.choice([0, 0, 1, 2, 4])
        theirs = theirs.as_strided(sizes, strides, offset)
        ours = ours.as_strided(sizes, strides, offset)
        t_out = outcome(theirs, "view", (getattr(torch, dst_dtype),), True)
        o_out = outcome(ours, "view", (getattr(pyc10, dst_dtype),), False)
        if t_out[0] == "ok":
            assert o_out[0] == "ok", o_out
            same(o_out[1], t_out[1])
            assert str(o_out[1].dtype) == str(t_out[1].dtype).replace("torch", "pyc10")
            assert o_out[1].data_ptr() == ours.data_ptr()
            assert o_out[1]._dispatch_keys() == ours._dispatch_keys()
            agreed += 1
        else:
            assert (o_out[0], o_out[1]) == t_out or issubclass(o_out[0], t_out[0])
            assert o_out[1] == t_out[1]
    assert agreed > 150  # ~200 successes (and ~400 agreeing errors) with this seed


def test_split_chunk_and_unbind_agree_with_torch():
    rng = random.Random(3)
    for _ in range(400):
        n = rng.randint(0, 3)
        sizes = [rng.choice([0, 1, 2, 3, 5]) for _ in range(n)]
        ours, theirs = pyc10.empty(sizes), torch.empty(sizes)
        dim = rand_dim(rng, n)
        name = rng.choice(["split", "split_sizes", "chunk", "unbind"])
        if name == "split":
            args = (rng.randint(-1, 4), dim)
        elif name == "split_sizes":
            size = theirs.shape[dim] if n and -n <= dim < n else 2
            parts = [rng.randint(0, size) for _ in range(rng.randint(1, 3))]
            if rng.random() < 0.6:
                parts.append(size - sum(parts))
            name, args = "split", (parts, dim)
        elif name == "chunk":
            args = (rng.randint(-1, 5), dim)
        else:
            args = (dim,)
        try:
            t = getattr(theirs, name)(*args)
        except (RuntimeError, IndexError) as e:
            with pytest.raises(type(e)) as info:
                getattr(ours, name)(*args)
            assert str(info.value).splitlines()[0] == str(e).splitlines()[0], (name, args)
            continue
        o = getattr(ours, name)(*args)
        assert isinstance(o, tuple) and len(o) == len(t), (name, args, sizes)
        for a, b in zip(o, t, strict=True):
            same(a, b)


INT64_MAX = 2**63 - 1


@pytest.mark.parametrize(
    "args",
    [(0, 1, 1), (0, 0, 2), (0, 0, INT64_MAX), (0, INT64_MAX, 1), (1, 0, 1), (0, 0, 1), (-2, 0, 1)],
)
def test_unfold_of_a_dim_of_int64_max_matches_torch_or_overflows_where_torch_wraps(args):
    # a dim of 2**63 - 1 elements beside a 0 (an empty storage): the windows of size 0 with
    # step 1 number 2**63, which torch's count wraps (its error is about the wrapped value)
    theirs = torch.empty(0).as_strided([INT64_MAX, 0], [1, 1])
    ours = pyc10.empty(0).as_strided([INT64_MAX, 0], [1, 1])
    expected = outcome(theirs, "unfold", args, True)
    if expected[0] == "ok":
        same(ours.unfold(*args), expected[1])
        return
    assert expected == (
        RuntimeError,
        "IntArrayRef contains an int that cannot be represented as a SymInt: -9223372036854775808",
    )
    with pytest.raises(pyc10.C10OverflowError) as info:
        ours.unfold(*args)
    assert isinstance(info.value, RuntimeError)
    assert str(info.value) == (
        "unfold: the number of windows, (size of dim - size) / step + 1 "
        "(9223372036854775807 and 0) overflows int64"
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.split(2),
        lambda t: t.split(INT64_MAX),
        lambda t: t.split(INT64_MAX - 1),
        lambda t: t.split([INT64_MAX, INT64_MAX, 2]),
        lambda t: t.split([INT64_MAX, 1]),
        lambda t: t.chunk(2),
        lambda t: t.chunk(INT64_MAX),
    ],
)
def test_split_and_chunk_of_a_dim_of_int64_max_agree_with_torchs_int64_arithmetic(call):
    # ATen counts pieces and sums sizes in int64, which wraps here; pyc10 gives the same answers
    theirs = torch.empty(0).as_strided([INT64_MAX, 0], [1, 1])
    ours = pyc10.empty(0).as_strided([INT64_MAX, 0], [1, 1])
    try:
        expected = [tuple(p.shape) for p in call(theirs)]
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as info:
            call(ours)
        assert str(info.value) == str(e)
        return
    assert [tuple(p.shape) for p in call(ours)] == expected


@pytest.mark.parametrize("n", [0, 1, 4, 5, 9])
@pytest.mark.parametrize(
    "sizes",
    [
        [INT64_MAX, INT64_MAX, 2],
        [INT64_MAX, INT64_MAX, 6],
        [INT64_MAX, INT64_MAX, 7],
        [2, INT64_MAX, INT64_MAX],
        [INT64_MAX, 1, INT64_MAX, 1],
        [INT64_MAX, 2, INT64_MAX, 2],
        [INT64_MAX, 1, INT64_MAX],
    ],
)
@pytest.mark.parametrize("name", ["split", "split_with_sizes"])
def test_split_sizes_whose_int64_sum_wraps_slice_as_torchs(name, n, sizes):
    # ATen's split_with_sizes sums the sizes and takes each piece as slice(start, start + size)
    # in wrapping int64: sizes summing to the dim modulo 2**64 give clamped slices, not an error
    theirs, ours = torch.arange(float(n)), pyc10.arange(float(n))
    expected = outcome(theirs, name, (sizes,), True)
    if expected[0] != "ok":
        with pytest.raises(expected[0]) as info:
            getattr(ours, name)(sizes)
        assert str(info.value) == expected[1]
        return
    got = getattr(ours, name)(sizes)
    assert len(got) == len(expected[1])
    for a, b in zip(got, expected[1], strict=True):
        assert a.tolist() == b.tolist() and a.storage_offset() == b.storage_offset()
