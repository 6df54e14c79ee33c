"""finfo, iinfo and the default dtype against torch's: values, reprs, errors, factories."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyc10
from pyc10._dtype import DTYPE_NAMES

# Every dtype, by its canonical name (the library's list; torch has each of them).
NAMES = sorted({d._name for d in DTYPE_NAMES.values()})


def ours_and_theirs(value):
    """The pyc10 and torch forms of an argument: dtypes by name, the rest as it is."""
    if isinstance(value, pyc10.dtype):
        return value, getattr(torch, value._name)
    return value, value


def outcome(fn, *args, **kwargs):
    """('ok', result) or ('raise', exception class torch raises, message as torch words it)."""
    try:
        return ("ok", fn(*args, **kwargs))
    except Exception as e:
        return ("raise", e)


def assert_same_outcome(ours, theirs, why):
    """Both succeeded, or both raised an exception of torch's class with torch's message."""
    assert ours[0] == theirs[0], (why, ours, theirs)
    if ours[0] == "raise":
        assert isinstance(ours[1], type(theirs[1])), (why, ours[1], theirs[1])
        assert str(ours[1]) == str(theirs[1]).replace("torch.", "pyc10."), why


def call_both(name, args=(), kwargs=None):
    kwargs = kwargs or {}
    pairs = [ours_and_theirs(a) for a in args]
    kpairs = {k: ours_and_theirs(v) for k, v in kwargs.items()}
    ours = outcome(
        getattr(pyc10, name), *(p[0] for p in pairs), **{k: p[0] for k, p in kpairs.items()}
    )
    theirs = outcome(
        getattr(torch, name), *(p[1] for p in pairs), **{k: p[1] for k, p in kpairs.items()}
    )
    assert_same_outcome(ours, theirs, (name, args, kwargs))
    return ours, theirs


FINFO_ATTRS = ["bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"]
IINFO_ATTRS = [*FINFO_ATTRS, "type", "foo"]  # the floating ones are missing, as torch's
FINFO_ATTRS += ["type", "foo"]


def assert_same_info(ours, theirs, attrs):
    """Each attribute, repr and str: the same value and type, or the same error."""
    for a in attrs:
        x, y = outcome(getattr, ours, a), outcome(getattr, theirs, a)
        assert_same_outcome(x, y, a)
        if x[0] == "ok":
            assert type(x[1]) is type(y[1]) and x[1] == y[1], (a, x, y)
    for fn in (repr, str):
        assert_same_outcome(outcome(fn, ours), outcome(fn, theirs), fn)
        if outcome(fn, ours)[0] == "ok":
            assert fn(ours) == fn(theirs)


@pytest.mark.parametrize("name", NAMES)
def test_finfo_of_every_dtype_matches_torch(name):
    ours, theirs = call_both("finfo", (DTYPE_NAMES[name],))
    if ours[0] == "ok":
        assert_same_info(ours[1], theirs[1], FINFO_ATTRS)


@pytest.mark.parametrize("name", NAMES)
def test_iinfo_of_every_dtype_matches_torch(name):
    ours, theirs = call_both("iinfo", (DTYPE_NAMES[name],))
    if ours[0] == "ok":
        assert_same_info(ours[1], theirs[1], IINFO_ATTRS)


def test_finfo_and_iinfo_take_pythons_number_types_as_torch():
    for t in (float, int, bool, complex, np.float32, np.int64, object):
        for fn in ("finfo", "iinfo"):
            ours, theirs = call_both(fn, (t,))
            if ours[0] == "ok":
                assert repr(ours[1]) == repr(theirs[1])


ARGUMENT_CASES = [
    ((), {}),
    ((None,), {}),
    (("float32",), {}),
    ((1,), {}),
    ((1.5,), {}),
    ((np.dtype("float32"),), {}),
    ((pyc10.float32, pyc10.float32), {}),
    ((pyc10.int32, 2, 3), {}),
    ((None, None), {}),
    ((), {"type": pyc10.float64}),
    ((), {"type": pyc10.int16}),
    ((), {"type": None}),
    ((), {"type": "x"}),
    ((), {"dtype": pyc10.float32}),
    ((), {"foo": 1}),
    ((), {"type": pyc10.float32, "foo": 1}),
    ((), {"z": 1, "a": 2, "m": 3}),
    ((pyc10.float32,), {"type": pyc10.float32}),
    ((pyc10.int32,), {"type": pyc10.int32}),
    ((1,), {"type": pyc10.int32}),
    ((1, 2), {"x": 3}),
    ((1,), {"type": 2, "a": 3}),
    ((1.5, "a", None, pyc10.float32, [1], (1,), b"x"), {}),
]


@pytest.mark.parametrize(("args", "kwargs"), ARGUMENT_CASES, ids=str)
@pytest.mark.parametrize("fn", ["finfo", "iinfo"])
def test_argument_errors_match_torchs(fn, args, kwargs):
    ours, theirs = call_both(fn, args, kwargs)
    if ours[0] == "ok":
        assert repr(ours[1]) == repr(theirs[1])


def test_finfo_of_a_tensor_argument_is_refused_as_torch():
    ours = outcome(pyc10.finfo, pyc10.zeros(1))
    theirs = outcome(torch.finfo, torch.zeros(1))
    assert_same_outcome(ours, theirs, "tensor")


def test_infos_compare_by_dtype_and_are_unhashable_and_read_only():
    pairs = [
        (pyc10.finfo(pyc10.float32), torch.finfo(torch.float32)),
        (pyc10.finfo(pyc10.complex64), torch.finfo(torch.complex64)),
        (pyc10.finfo(pyc10.float64), torch.finfo(torch.float64)),
        (pyc10.iinfo(pyc10.int32), torch.iinfo(torch.int32)),
        (pyc10.iinfo(pyc10.int64), torch.iinfo(torch.int64)),
    ]
    for a, ta in pairs:
        for b, tb in pairs:
            assert (a == b) == (ta == tb), (a, b)
            assert (a != b) == (ta != tb), (a, b)
        assert (a == 3) == (ta == 3)
        assert (a != "x") == (ta != "x")
        for attempt in (
            lambda x: hash(x),
            lambda x: setattr(x, "bits", 1),
            lambda x: setattr(x, "max", 1),
            lambda x: setattr(x, "foo", 1),
            lambda x: delattr(x, "bits"),
        ):
            ours, theirs = outcome(attempt, a), outcome(attempt, ta)
            assert ours[0] == theirs[0] == "raise"
            assert type(ours[1]) is type(theirs[1])
            if not isinstance(theirs[1], TypeError):  # hash's text names the class
                assert str(ours[1]) == str(theirs[1]).replace("torch.", "pyc10.")
    assert (
        type(pyc10.finfo()).__name__ == "finfo"
        and type(pyc10.iinfo(pyc10.int8)).__module__ == "pyc10"
    )
    public = {n for n in dir(pyc10.finfo()) if not n.startswith("_")}
    assert public == {n for n in dir(torch.finfo()) if not n.startswith("_")}
    public = {n for n in dir(pyc10.iinfo(pyc10.int8)) if not n.startswith("_")}
    assert public == {n for n in dir(torch.iinfo(torch.int8)) if not n.startswith("_")}


@pytest.fixture
def restore_default():
    yield
    torch.set_default_dtype(torch.float32)
    pyc10.set_default_dtype(pyc10.float32)


@pytest.mark.parametrize("name", NAMES)
def test_set_default_dtype_of_every_dtype_matches_torch(name, restore_default):
    call_both("set_default_dtype", (DTYPE_NAMES[name],))
    assert pyc10.get_default_dtype()._name == str(torch.get_default_dtype()).split(".")[1]
    assert repr(pyc10.finfo()) == repr(torch.finfo())


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((), {}),
        ((None,), {}),
        (("float64",), {}),
        ((1,), {}),
        ((float,), {}),
        ((np.float64,), {}),
        ((pyc10.float64, pyc10.float64), {}),
        ((), {"d": pyc10.float64}),
    ],
    ids=str,
)
def test_set_default_dtype_argument_errors_match_torchs(args, kwargs, restore_default):
    call_both("set_default_dtype", args, kwargs)
    assert pyc10.get_default_dtype() is pyc10.float32  # a refused call changes nothing


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((), {}), ((1,), {}), ((1, 2), {}), ((), {"a": 1}), ((1,), {"a": 1})],
    ids=str,
)
def test_get_default_dtype_takes_no_arguments(args, kwargs):
    ours, theirs = call_both("get_default_dtype", args, kwargs)
    if ours[0] == "ok":
        assert ours[1] is pyc10.float32 and theirs[1] is torch.float32


def factory_calls(lib, dtype_of):
    """(label, call) for the factories whose dtype comes from the default or the value."""
    t = lib.ones(2, dtype=dtype_of("float16"))
    return [
        ("empty(size, device)", lambda: lib.empty((2, 3), device="cpu")),
        ("empty(memory_format)", lambda: lib.empty(2, 3, memory_format=lib.contiguous_format)),
        ("zeros(device)", lambda: lib.zeros(2, device="cpu")),
        ("ones", lambda: lib.ones(2, 3)),
        ("ones(dtype=None)", lambda: lib.ones(2, dtype=None)),
        ("empty_strided", lambda: lib.empty_strided((2, 3), (3, 1))),
        ("full float", lambda: lib.full((2,), 1.5)),
        ("full int", lambda: lib.full((2, 3), 1)),
        ("full bool", lambda: lib.full((2,), True)),
        ("full complex", lambda: lib.full((2,), 1 + 2j)),
        ("full numpy float", lambda: lib.full((2,), np.float32(1.5))),
        ("full float, dtype", lambda: lib.full((2,), 1.5, dtype=dtype_of("float64"))),
        ("ones_like", lambda: lib.ones_like(t)),
        ("full_like float", lambda: lib.full_like(t, 2.5)),
        ("empty_like", lambda: lib.empty_like(t)),
        ("zeros_like", lambda: lib.zeros_like(t)),
    ]


def test_factories_take_the_default_dtype_as_torch(restore_default):
    for default in ["float32", "float64", "float16", "bfloat16"]:
        pyc10.set_default_dtype(getattr(pyc10, default))
        torch.set_default_dtype(getattr(torch, default))
        ours = factory_calls(pyc10, lambda n: getattr(pyc10, n))
        theirs = factory_calls(torch, lambda n: getattr(torch, n))
        for (label, o), (_, t) in zip(ours, theirs, strict=True):
            a, b = outcome(o), outcome(t)
            assert_same_outcome(a, b, (default, label))
            if a[0] == "ok":
                assert a[1].dtype._name == str(b[1].dtype).split(".")[1], (default, label)


def test_the_fast_paths_take_the_default_dtype_as_torch(restore_default):
    pyc10.set_default_dtype(pyc10.float64)
    torch.set_default_dtype(torch.float64)
    for call in ("empty(2, 3)", "empty((2, 3))", "zeros(4)", "zeros(2, dtype=None)"):
        ours = eval(f"pyc10.{call}").dtype
        theirs = eval(f"torch.{call}").dtype
        assert ours._name == str(theirs).split(".")[1], call


def test_listeners_hear_every_change_of_the_default(restore_default):
    from pyc10 import _defaults

    heard = []
    _defaults.add_listener(heard.append)
    try:
        pyc10.set_default_dtype(pyc10.float64)
        with pytest.raises(TypeError):
            pyc10.set_default_dtype(pyc10.int64)  # refused: nothing to hear
        pyc10.set_default_dtype(pyc10.bfloat16)
    finally:
        _defaults._listeners.remove(heard.append)
    assert heard == [pyc10.float32, pyc10.float64, pyc10.bfloat16]
