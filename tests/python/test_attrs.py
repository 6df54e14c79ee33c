"""Tensor attributes, small methods and dunders (pyc10/_ext/attrs.c) against torch.

Each tensor is shared with torch through DLPack (same elements, same geometry), then the same
attribute or call on both must agree on acceptance, value, exception class and message. Where
pyc10 refuses on purpose (requires_grad=True: no autograd; elementwise operators: no math
kernels; conjugating transposes of complex tensors: no conjugate views) the test says so.
"""

from __future__ import annotations

import builtins
import operator
import re
import subprocess
import sys
import warnings

import pytest
import torch

import pyc10

DTYPES = [
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "complex64",
    "complex128",
    "int8",
    "uint8",
    "int16",
    "int32",
    "int64",
    "uint16",
    "uint32",
    "uint64",
    "bool",
    "float8_e4m3fn",
    "float8_e5m2",
]
SHAPES = [(), (0,), (1,), (3,), (2, 3), (4, 1, 2), (1, 1)]


def norm(value):
    """A value comparable across the two libraries (tensors by geometry, dtype and elements)."""
    if isinstance(value, (torch.Tensor, pyc10.Tensor)):
        return (
            "tensor",
            tuple(value.shape),
            tuple(value.stride()),
            value.storage_offset(),
            str(value.dtype).split(".")[-1],
            value.tolist(),
        )
    if isinstance(value, (torch.dtype, pyc10.dtype, torch.layout, type(pyc10.strided))):
        return str(value).split(".")[-1]
    if isinstance(value, (torch.device, pyc10.device)):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [norm(v) for v in value]
    return value


def builtin_class(exc):
    return next(c for c in type(exc).__mro__ if c.__module__ == "builtins").__name__


def outcome(fn):
    """("ok", value, warnings) or (builtin exception class, message), warnings without torch's
    "(Triggered internally at ...)" suffix."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = ("ok", norm(fn()))
        except Exception as e:  # the class is what is compared
            value = (builtin_class(e), str(e))
    texts = [re.sub(r" \(Triggered internally at .*\)$", "", str(w.message)) for w in caught]
    return (*value, [t for t in texts if "ComplexHalf" not in t])


def pair(dtype_name, shape, fill=None):
    t = torch.zeros(shape, dtype=getattr(torch, dtype_name))
    if fill is not None:
        t.fill_(fill)
    return t, pyc10.from_dlpack(t)


def same(fn, t, p):
    assert outcome(lambda: fn(p)) == outcome(lambda: fn(t))


def same_call(fn, pyc10_args, torch_args):
    """outcome() of fn on each library's arguments (a pair: pyc10's, torch's)."""
    return outcome(lambda: fn(*pyc10_args)), outcome(lambda: fn(*torch_args))


FACTS = [
    "dtype",
    "device",
    "is_cuda",
    "is_cpu",
    "is_meta",
    "layout",
    "itemsize",
    "nbytes",
    "_version",
    "requires_grad",
    "grad",
    "is_leaf",
    "grad_fn",
    "ndim",
]
PREDICATES = [
    "is_inference",
    "is_floating_point",
    "is_complex",
    "is_signed",
    "get_device",
    "dim",
    "nelement",
    "ndimension",
]


@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_immutable_facts_and_predicates_match_torch(dtype_name, shape):
    t, p = pair(dtype_name, shape)
    for name in FACTS:
        got, want = same_call(getattr, (p, name), (t, name))
        assert got == want, name
    for name in PREDICATES:
        got, want = same_call(lambda x, n: getattr(x, n)(), (p, name), (t, name))
        assert got == want, name


def test_nbytes_of_an_expanded_tensor_counts_every_element_as_torch():
    t = torch.zeros(3).expand(4, 3)
    same(lambda x: x.nbytes, t, pyc10.from_dlpack(torch.zeros(3)).expand(4, 3))


def test_version_follows_writes_as_torch():
    p = pyc10.zeros(2, 3)
    q = pyc10.zeros(2, 3)
    q.fill_(1.0)
    u = torch.zeros(2, 3)
    u.fill_(1.0)
    assert q._version == u._version
    assert p.detach()._version == p._version


def test_data_ptr_is_the_address_of_the_first_element():
    t, p = pair("float32", (4, 3))
    assert p.data_ptr() == t.data_ptr()
    assert p[2].data_ptr() == t[2].data_ptr()
    assert p[:, 1:].data_ptr() == t[:, 1:].data_ptr()


def test_the_objects_returned_are_pyc10s_interned_ones():
    p = pyc10.zeros(2, dtype=pyc10.int16)
    assert p.dtype is pyc10.int16
    assert p.device is pyc10.device("cpu")
    assert p.layout is pyc10.strided


VALUES = [0, 1, -2, 3.5, -0.0, float("nan"), float("inf"), True, complex(1, 2), complex(0, 0)]


@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("value", VALUES, ids=repr)
@pytest.mark.parametrize("shape", [(), (1,), (1, 1), (0,), (2,)])
def test_conversions_to_python_numbers_match_torch(dtype_name, value, shape):
    try:
        t = torch.zeros(shape, dtype=getattr(torch, dtype_name)).fill_(value)
    except RuntimeError:
        pytest.skip("torch's fill_ refuses the value for the dtype")
    if dtype_name == "uint64" and value.real < 0:
        pytest.skip("item() of a uint64 past int64: torch's overflow, pyc10's Python item()")
    p = pyc10.from_dlpack(t)
    for fn in (bool, int, float, complex, operator_index, lambda x: x.is_nonzero()):
        got, want = same_call(fn, (p,), (t,))
        if want[0] == "ok" and isinstance(want[1], float) and want[1] != want[1]:
            assert got[1] != got[1]  # nan
        elif want[0] == "ok" and isinstance(want[1], complex) and want[1] != want[1]:
            assert got[0] == "ok" and got[1] != got[1]
        elif want[0] == "ValueError" and fn is int and "convert float NaN" in want[1]:
            assert got[0] == "ValueError"  # Python's own int(nan) message
        else:
            assert got == want, fn


def operator_index(x):
    import operator

    return operator.index(x)


def test_an_integer_tensor_is_an_index_as_torch():
    t, p = pair("int64", (), 2)
    assert [10, 20, 30][p] == [10, 20, 30][t]
    assert list(range(5))[p:] == list(range(5))[t:]


@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (3, 1, 2), (0, 2)])
def test_len_iter_and_reversed_match_torch(shape):
    t = torch.arange(int(torch.tensor(shape).prod()), dtype=torch.float32).reshape(shape)
    p = pyc10.from_dlpack(t)
    same(len, t, p)
    same(lambda x: list(iter(x)), t, p)
    same(lambda x: [tuple(r.shape) for r in x], t, p)
    same(reversed, t, p)
    same(lambda x: list(reversed(x)), t, p)


@pytest.mark.parametrize("dtype_name", ["float32", "int8", "complex64", "bool", "bfloat16"])
@pytest.mark.parametrize("transposed", [False, True])
def test_reversed_copies_the_rows_as_torchs_flip(dtype_name, transposed):
    # a contiguous CPU tensor's rows are copied as bytes, any other row by row
    t = torch.arange(12).reshape(3, 4).to(getattr(torch, dtype_name))
    t = t.t() if transposed else t[1:]
    p = pyc10.from_dlpack(t)
    r = reversed(p)
    assert r.is_contiguous() and r.data_ptr() != p.data_ptr()
    assert torch.equal(torch.from_dlpack(r), reversed(t))


def test_iterating_a_0d_tensor_raises_torchs_type_error():
    t, p = pair("float32", ())
    same(iter, t, p)
    assert isinstance(outcome(lambda: iter(p)), tuple)
    with pytest.raises(pyc10.C10TypeError, match="iteration over a 0-d tensor"):
        iter(p)


@pytest.mark.parametrize("dtype_name", ["float32", "int64", "bool"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4), (1, 2, 1, 2)])
def test_transposes_match_torch(dtype_name, shape):
    t = torch.arange(int(torch.tensor(shape).prod())).reshape(shape).to(getattr(torch, dtype_name))
    p = pyc10.from_dlpack(t)
    for fn in (
        lambda x: x.T,
        lambda x: x.mT,
        lambda x: x.H,
        lambda x: x.mH,
        lambda x: x.adjoint(),
        lambda x: x.ravel(),
        lambda x: x.t().ravel() if x.dim() == 2 else x.ravel(),
    ):
        # torch warns once per process (TORCH_WARN_ONCE): the texts are compared below
        got, want = same_call(fn, (p,), (t,))
        assert got[:-1] == want[:-1]


TORCH_WARNINGS = """
import re, torch, warnings
for expr in ["x0.T", "x1.T", "x0.H", "x0.mT", "x0.mH", "x0.adjoint()"]:
    x0, x1 = torch.zeros(()), torch.zeros(3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        eval(expr)
    print(re.sub(r" \\(Triggered internally at .*\\)$", "", str(w[0].message)))
"""


def test_transposes_of_0d_and_1d_tensors_warn_as_torch():
    want = subprocess.run(
        [sys.executable, "-c", TORCH_WARNINGS], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    x0, x1 = pyc10.zeros(()), pyc10.zeros(3)
    got = []
    for fn in (
        lambda: x0.T,
        lambda: x1.T,
        lambda: x0.H,
        lambda: x0.mT,
        lambda: x0.mH,
        lambda: x0.adjoint(),
    ):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn()
        assert [w.category for w in caught] == [UserWarning]
        got.append(str(caught[0].message))
    assert got == want


@pytest.mark.parametrize("name", ["H", "mH"])
def test_conjugating_transposes_of_complex_tensors_are_refused(name):
    # torch gives a conjugate view; pyc10 has none (a deliberate divergence)
    p = pyc10.zeros(2, 2, dtype=pyc10.complex64)
    with pytest.raises(pyc10.C10RuntimeError, match="conjugate view"):
        getattr(p, name)
    with pytest.raises(pyc10.C10RuntimeError, match="conjugate view"):
        p.adjoint()
    assert tuple(p.mT.shape) == (2, 2)  # mT does not conjugate


def test_a_transpose_shares_storage_as_torch():
    p = pyc10.zeros(2, 3)
    assert p.T.untyped_storage().data_ptr() == p.untyped_storage().data_ptr()
    assert p.T.stride() == (1, 3)


@pytest.mark.parametrize("dtype_name", ["float32", "complex64", "int64", "bool"])
def test_requires_grad_false_is_accepted_and_bad_values_get_torchs_errors(dtype_name):
    t, p = pair(dtype_name, (2,))
    for fn in (
        lambda x: x.requires_grad_(False) is x,
        lambda x: x.requires_grad_(requires_grad=False) is x,
        lambda x: x.requires_grad_(1),
        lambda x: x.requires_grad_(None),
        lambda x: x.requires_grad_(foo=1),
        lambda x: x.requires_grad_(False, False),
        lambda x: setattr(x, "requires_grad", False),
        lambda x: setattr(x, "requires_grad", 1),
        lambda x: x.requires_grad,
    ):
        same(fn, t, p)


def test_requiring_grad_of_an_integer_tensor_gets_torchs_message():
    t, p = pair("int64", (2,))
    same(lambda x: x.requires_grad_(), t, p)
    same(lambda x: x.requires_grad_(True), t, p)
    same(lambda x: setattr(x, "requires_grad", True), t, p)


def test_requiring_grad_of_a_float_tensor_says_pyc10_has_no_autograd():
    p = pyc10.zeros(2)
    with pytest.raises(pyc10.C10RuntimeError, match="pyc10 has no autograd"):
        p.requires_grad_()
    with pytest.raises(pyc10.C10RuntimeError, match="pyc10 has no autograd"):
        p.requires_grad = True
    assert p.requires_grad is False


def test_grad_is_none_and_only_none_may_be_set():
    t, p = pair("float32", (2,))
    same(lambda x: setattr(x, "grad", None), t, p)
    same(lambda x: x.grad, t, p)
    with pytest.raises(pyc10.C10RuntimeError, match="no autograd"):
        p.grad = pyc10.zeros(2)
    for name in ("grad_fn", "is_leaf"):
        with pytest.raises(AttributeError, match="not writable"):
            setattr(p, name, None)


def test_detach_and_data_share_the_storage_as_torch():
    t, p = pair("float32", (2, 3))
    for fn in (
        lambda x: x.detach(),
        lambda x: x.data,
        lambda x: x[1].detach(),
        lambda x: x.t().data,
    ):
        same(fn, t, p)
        assert fn(p).data_ptr() == fn(t).data_ptr()
        assert fn(p) is not p
    assert p.detach_() is p
    same(lambda x: x.detach(1), t, p)
    same(lambda x: x.detach_(1), t, p)


def test_assigning_data_makes_the_tensor_the_other_one():
    t, p = pair("float32", (2, 3))
    same(lambda x: setattr(x, "data", 3), t, p)
    same(lambda x: setattr(x, "data", None), t, p)
    t2, p2 = pair("int64", (4,), 7)
    t.data, p.data = t2, p2
    assert norm(p) == norm(t)
    assert p.data_ptr() == p2.data_ptr()


def test_is_same_size_is_set_to_and_type_as_match_torch():
    t, p = pair("float32", (2, 3))
    ti, pi = pair("int32", (2, 3))
    for fn in (
        lambda x, y: x.is_same_size(y),
        lambda x, y: x.is_same_size(other=y),
        lambda x, y: x.is_same_size(y.t()),
        lambda x, y: x.is_same_size(1),
        lambda x, y: x.is_same_size(),
        lambda x, y: x.is_set_to(x),
        lambda x, y: x.is_set_to(tensor=x.detach()),
        lambda x, y: x.is_set_to(x.view(3, 2)),
        lambda x, y: x.is_set_to(x[:1]),
        lambda x, y: x.is_set_to(y),
        lambda x, y: x.is_set_to(None),
        lambda x, y: x.type_as(y),
        lambda x, y: x.type_as(other=y),
        lambda x, y: x.type_as(x) is x,
        lambda x, y: x.type_as(1),
    ):
        got, want = same_call(fn, (p, pi), (t, ti))
        assert got == want


OPERATORS = [
    lambda a, b: a + b,
    lambda a, b: a - b,
    lambda a, b: a * b,
    lambda a, b: a / b,
    lambda a, b: a // b,
    lambda a, b: a % b,
    lambda a, b: a**b,
    lambda a, b: a @ b,
    lambda a, b: a & b,
    lambda a, b: a | b,
    lambda a, b: a ^ b,
    lambda a, b: a << b,
    lambda a, b: a >> b,
    lambda a, b: 1 + a,
    lambda a, b: a == b,
    lambda a, b: a != b,
    lambda a, b: a < b,
    lambda a, b: a <= b,
    lambda a, b: a > b,
    lambda a, b: a >= b,
    lambda a, b: a == 1,
    lambda a, b: -a,
    lambda a, b: +a,
    lambda a, b: abs(a),
    lambda a, b: ~a,
]


@pytest.mark.parametrize("op", range(len(OPERATORS)))
def test_math_operators_raise_a_type_error_that_says_why(op):
    a, b = pyc10.zeros(2, dtype=pyc10.int64), pyc10.zeros(2, dtype=pyc10.int64)
    with pytest.raises(pyc10.C10TypeError, match=r"pyc10\.Tensor has no math operators"):
        OPERATORS[op](a, b)


def test_inplace_operators_raise_too():
    a = pyc10.zeros(2)
    with pytest.raises(TypeError, match="no math operators"):
        a += 1
    with pytest.raises(TypeError, match="no math operators"):
        a *= 2


def test_tensors_hash_by_identity_and_work_in_containers_as_torchs():
    a, b = pyc10.zeros(2), pyc10.zeros(2)
    assert hash(a) == hash(a) and hash(a) != hash(b)
    assert {a: 1, b: 2}[a] == 1
    assert len({a, b, a}) == 2
    assert a in [a] and a in {a}
    # torch answers None comparisons by identity (NotImplemented); so does pyc10
    assert (a == None) is False  # noqa: E711 - the operator is what is tested
    assert (a != None) is True  # noqa: E711
    assert builtins.bool(a is not None)


@pytest.mark.parametrize("dtype_name", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize(
    "value", [0, 1, -2, 0.5, -0.0, float("nan"), float("inf"), 2**53 + 1, -(2**62)]
)
def test_one_element_numbers_as_torch(dtype_name, value):
    # bool(), float(), int() and operator.index read these dtypes' element directly
    t = torch.tensor(value).to(getattr(torch, dtype_name))
    p = pyc10.from_dlpack(t.clone())
    for fn in (bool, float, int, operator.index, lambda x: x.item()):
        same(lambda x, fn=fn: repr(fn(x)), t, p)  # repr: nan equals nan
