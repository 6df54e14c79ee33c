"""out= of the factories, arange, cat (concat, concatenate) and stack against torch 2.13.

Each case is called the same way on pyc10 and torch: the result must be out itself, with the
same shape, strides, dtype and values, the same warnings (class and text, less torch's
"(Triggered internally at ...)" suffix) and the same exception (builtin class and message).
"""

import re
import warnings
from typing import Any

import numpy as np
import pytest
import torch

import pyc10

_SUFFIX = re.compile(r" \(Triggered internally at .*\)$")
_BASES = (NotImplementedError, ValueError, TypeError, IndexError, RuntimeError)


def observe(m: Any, make_out: str, call: str, values: bool = True) -> Any:
    """What `call` (evaluated with m, out = eval(make_out) and inputs X, Y, XI) does to out."""
    names: dict[str, Any] = {"m": m, "np": np}
    names["X"] = m.arange(6.0).reshape(2, 3)
    names["Y"] = m.arange(6.0, 12.0).reshape(2, 3)
    names["XI"] = m.arange(6).reshape(2, 3)
    out = eval(make_out, names)
    names["out"] = out
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            r = eval(call, names)
            seen: Any = (
                "returned",
                r is out,
                tuple(out.shape),
                out.stride(),
                str(out.dtype).split(".")[-1],
                out.tolist() if values and out.device.type != "meta" else None,
            )
        except Exception as e:
            base = next(c for c in _BASES if isinstance(e, c))
            seen = ("raised", base.__name__, str(e))
    said = [(w.category.__name__, _SUFFIX.sub("", str(w.message))) for w in caught]
    return seen, said


def same(make_out: str, call: str, values: bool = True) -> None:
    ours = observe(pyc10, make_out, call, values)
    theirs = observe(torch, make_out, call, values)
    assert ours == theirs
    if ours[0][0] == "returned" and "out=out" in call:
        assert ours[0][1] is True


FACTORIES = [
    ("m.zeros(2, 3)", "m.empty(2, 3, out=out)", False),
    ("m.zeros(4)", "m.empty(2, 3, out=out)", False),
    ("m.zeros(0)", "m.empty((2, 3), out=out)", False),
    ("m.zeros(2, 3).t()", "m.empty(3, 2, out=out)", False),
    ("m.zeros(2, 3)", "m.empty(2, 3, out=out, memory_format=m.contiguous_format)", True),
    ("m.zeros(2, 3)", "m.empty(2, 3, out=out, dtype=m.int32)", True),
    ("m.zeros(2, 3)", "m.empty(2, 3, out=out, dtype=m.float32)", False),
    ("m.zeros(2, 3)", "m.empty(2, 3, out=out, device='meta')", True),
    ("m.zeros(2, 3)", "m.empty(2, 3, out=out, device='cpu')", False),
    ("m.zeros(2, 3)", "m.empty(2, 3, out=out, layout=m.strided)", False),
    ("m.zeros(2, 3)", "m.empty(-1, out=out)", True),
    ("m.zeros(2, 3)", "m.zeros(-1, out=out)", True),
    ("m.zeros(2, 3)", "m.zeros(2, out=[1])", True),
    ("m.ones(3)", "m.zeros(2, 2, out=out)", True),
    ("m.ones(3)", "m.zeros(2, 2, out=None)", True),
    ("m.ones(6).reshape(3, 2).t()", "m.zeros(2, 3, out=out)", True),
    ("m.zeros(3, dtype=m.int32)", "m.ones(2, 2, out=out)", True),
    ("m.zeros(3, dtype=m.int32)", "m.ones((2, 2), out=out, pin_memory=True)", True),
    ("m.zeros(3, dtype=m.int32)", "m.full((2, 2), 7, out=out)", True),
    ("m.zeros(3, dtype=m.int32)", "m.full((2,), 7.5, out=out)", True),
    ("m.zeros(3, dtype=m.int32)", "m.full((2,), 7.5, out=out, dtype=m.float64)", True),
    ("m.zeros(3, dtype=m.uint8)", "m.full((2,), 300, out=out)", True),
    ("m.zeros(3)", "m.full((2,), True, out=out)", True),
    ("m.zeros(3)", "m.full((2,), 1j, out=out)", True),
    ("m.zeros(3, dtype=m.bool)", "m.ones(2, out=out)", True),
    ("m.zeros(3, dtype=m.bfloat16)", "m.full((2, 1), 0.1, out=out)", True),
    ("m.zeros(3, dtype=m.complex64)", "m.full((2,), 1 + 2j, out=out)", True),
    ("m.zeros(1).expand(4)", "m.zeros(4, out=out)", True),
    ("m.zeros(1).expand(4)", "m.full((4,), 2.0, out=out)", True),
    ("m.from_numpy(np.zeros(3, dtype=np.float32))", "m.zeros(5, out=out)", True),
    ("m.from_numpy(np.zeros(3, dtype=np.float32))", "m.ones(2, out=out)", True),
    ("m.zeros(2)[:1]", "m.ones(4, out=out)", True),
    ("m.empty(2, device='meta')", "m.zeros(4, out=out)", True),
    ("m.empty(2, device='meta')", "m.empty(4, out=out)", True),
    ("m.empty(2, device='meta')", "m.ones(2, 2, out=out)", True),
    ("m.empty(2, device='meta')", "m.full((3,), 2, out=out)", True),
    ("m.empty(0, device='meta')", "m.ones(3, out=out)", True),
    ("m.empty(2, 3, device='meta').t()", "m.zeros(3, 2, out=out)", True),
    ("m.empty(2, device='meta')", "m.zeros(-1, out=out)", True),
    ("m.empty(2, device='meta')", "m.zeros(4, out=out, device='cpu')", True),
]

ARANGE = [
    ("m.zeros(5)", "m.arange(5, out=out)"),
    ("m.zeros(2, 3)", "m.arange(6, out=out)"),
    ("m.zeros(2, 3).t()", "m.arange(6, out=out)"),
    ("m.zeros(2, 3)", "m.arange(5, out=out)"),
    ("m.zeros(0)", "m.arange(5, out=out)"),
    ("m.zeros(0)", "m.arange(1, 4, out=out)"),
    ("m.zeros(0)", "m.arange(1, 4, 2, out=out)"),
    ("m.zeros(0)", "m.arange(start=1, end=4, step=2, out=out)"),
    ("m.zeros(0, dtype=m.int64)", "m.arange(0.5, 3.7, 0.5, out=out)"),
    ("m.zeros(0, dtype=m.int32)", "m.arange(0.5, 3.7, 0.5, out=out)"),
    ("m.zeros(0, dtype=m.int32)", "m.arange(0.5, 7.7, 1.5, out=out)"),
    ("m.zeros(0, dtype=m.int64)", "m.arange(0, 3, 0.5, out=out)"),
    ("m.zeros(0, dtype=m.float64)", "m.arange(0, 1, 0.1, out=out)"),
    ("m.zeros(0, dtype=m.float16)", "m.arange(0, 1, 0.1, out=out)"),
    ("m.zeros(0, dtype=m.bfloat16)", "m.arange(0, 1, 0.1, out=out)"),
    ("m.zeros(0, dtype=m.uint8)", "m.arange(-3, 0, out=out)"),
    ("m.zeros(0, dtype=m.bool)", "m.arange(3, out=out)"),
    ("m.zeros(0, dtype=m.complex64)", "m.arange(3, out=out)"),
    ("m.zeros(0)", "m.arange(3, out=out, dtype=m.int64)"),
    ("m.zeros(0)", "m.arange(3, out=out, dtype=m.float32)"),
    ("m.zeros(0)", "m.arange(3, out=out, device='meta')"),
    ("m.zeros(0)", "m.arange(3, out=out, pin_memory=True)"),
    ("m.zeros(3)", "m.arange(0, 4, 0, out=out)"),
    ("m.zeros(3)", "m.arange(4, 0, 1, out=out)"),
    ("m.zeros(3)", "m.arange(0, float('inf'), out=out)"),
    ("m.zeros(1).expand(4)", "m.arange(4, out=out)"),
    ("m.from_numpy(np.zeros(3, dtype=np.float32))", "m.arange(6, out=out)"),
    ("m.from_numpy(np.zeros(3, dtype=np.float32))", "m.arange(3, out=out)"),
    ("m.empty(5, device='meta')", "m.arange(3, out=out)"),
    ("m.empty(0, device='meta')", "m.arange(3, out=out)"),
    ("m.empty(2, 3, device='meta')", "m.arange(6, out=out)"),
    ("m.empty(3, device='meta')", "m.arange(3, out=out)"),
]

JOINING = [
    ("m.zeros(4, 3)", "m.cat([X, Y], out=out)"),
    ("m.zeros(5)", "m.cat([X, Y], out=out)"),
    ("m.zeros(0)", "m.cat([X, Y], out=out)"),
    ("m.zeros(0)", "m.cat(tensors=(X, Y), dim=1, out=out)"),
    ("m.zeros(3, 4).t()", "m.cat([X, Y], out=out)"),
    ("m.zeros(5)", "m.cat([X, Y], out=None)"),
    ("m.zeros(1)", "m.concat([X, Y], 1, out=out)"),
    ("m.zeros(2, 6)", "m.concatenate([X, Y], dim=1, out=out)"),
    ("m.zeros(4, 3, dtype=m.int32)", "m.cat([X, Y], out=out)"),
    ("m.zeros(5, dtype=m.int64)", "m.cat([X, X], out=out)"),
    ("m.zeros(4, 3, dtype=m.bool)", "m.cat([XI, XI], out=out)"),
    ("m.zeros(4, 3, dtype=m.float64)", "m.cat([X, Y], out=out)"),
    ("m.zeros(5, dtype=m.float64)", "m.cat([XI, XI], out=out)"),
    ("m.zeros(1, dtype=m.uint8)", "m.cat([m.tensor([300])], out=out)"),
    ("m.zeros(1)", "m.cat([m.tensor([1j])], out=out)"),
    ("m.zeros(1, dtype=m.complex64)", "m.cat([X], out=out)"),
    ("m.zeros(1, dtype=m.float16)", "m.cat([X.double()], out=out)"),
    ("m.zeros(6, 3)", "m.cat([m.zeros(0, dtype=m.int64), X], out=out)"),
    ("m.zeros(3)", "m.cat([m.zeros(0)], out=out)"),
    ("m.zeros(0)", "m.cat([], out=out)"),
    ("m.zeros(0)", "m.cat([X], out=3)"),
    ("m.zeros(0)", "m.stack([X], out=out.numpy())"),
    ("m.zeros(0)", "m.cat([m.tensor(1.0)], out=out)"),
    ("m.zeros(0)", "m.cat([X, X.t()], out=out)"),
    ("m.zeros(0)", "m.cat([X], 2, out=out)"),
    ("m.zeros(4, 3)", "m.cat([out[:2], Y], out=out)"),
    ("m.zeros(4, 3)", "m.cat([out[2:].clone(), out[:2]], out=out)"),
    ("m.zeros(2, 3)", "m.cat([out, out], out=out)"),
    ("m.zeros(0)", "m.cat([out, X], out=out)"),
    ("m.zeros(2, 3)", "m.concat([X, out], 1, out=out)"),
    ("m.zeros(0)", "m.stack([X, out], out=out)"),
    ("m.zeros(2, 3)", "m.stack([X, out], 2, out=out)"),
    ("m.zeros(4, 6)[:, :3]", "m.cat([X, Y], out=out)"),
    ("m.zeros(3).expand(4, 3)", "m.cat([X, Y], out=out)"),
    ("m.zeros(1).expand(4)", "m.cat([X], out=out)"),
    ("m.from_numpy(np.zeros(3, dtype=np.float32))", "m.cat([X, Y], out=out)"),
    ("m.from_numpy(np.zeros(12, dtype=np.float32)).view(4, 3)", "m.cat([X, Y], out=out)"),
    ("m.zeros(0)", "m.cat([m.zeros(1, 2, 3, 3).to(memory_format=m.channels_last)] * 2, out=out)"),
    (
        "m.zeros(2, 2, 3, 3)",
        "m.cat([m.zeros(1, 2, 3, 3).to(memory_format=m.channels_last)] * 2, out=out)",
    ),
    ("m.empty(4, 3, device='meta')", "m.cat([X, Y], out=out)"),
    ("m.empty(3, device='meta')", "m.cat([X.to('meta'), Y.to('meta')], out=out)"),
    ("m.empty(0, device='meta')", "m.cat([X.to('meta'), Y.to('meta')], 1, out=out)"),
    ("m.zeros(2, 3)", "m.cat([X.to('meta')], out=out)"),
    ("m.zeros(3)", "m.cat([X.to('meta')], out=out)"),
    ("m.empty(3, device='meta', dtype=m.int32)", "m.cat([X.to('meta')], out=out)"),
    ("m.empty(2, 3, device='meta', dtype=m.float16)", "m.cat([XI.to('meta')], out=out)"),
    ("m.zeros(2, 2, 3)", "m.stack([X, Y], out=out)"),
    ("m.zeros(5)", "m.stack([X, Y], out=out)"),
    ("m.zeros(5)", "m.stack([X, Y], dim=2, out=out)"),
    ("m.zeros(0)", "m.stack([X, Y], -1, out=out)"),
    ("m.zeros(2, 3, 2)", "m.stack([X, Y], dim=2, out=out)"),
    ("m.zeros(3, 2, 2).permute(2, 1, 0)", "m.stack([X, Y], out=out)"),
    ("m.zeros(3, 2, 2).permute(2, 1, 0)", "m.stack([X, Y], 1, out=out)"),
    ("m.zeros(5, dtype=m.int32)", "m.stack([X, Y], out=out)"),
    ("m.zeros(5, dtype=m.int32)", "m.stack([X, Y], 2, out=out)"),
    ("m.zeros(2, 2, 3, dtype=m.float64)", "m.stack([X, Y], out=out)"),
    ("m.zeros(2, 2, 3, dtype=m.float64)", "m.stack([XI, XI], out=out)"),
    ("m.zeros(2, 2, 3)", "m.stack([out[0], out[1]], out=out)"),
    ("m.zeros(2, 3, 2)", "m.stack([out[..., 0], Y], 2, out=out)"),
    ("m.zeros(3)", "m.stack([m.tensor(1.0), m.tensor(2.0)], out=out)"),
    ("m.zeros(3)", "m.stack([], out=out)"),
    ("m.zeros(3)", "m.stack([X, X.t()], out=out)"),
    ("m.zeros(3)", "m.stack([X], 4, out=out)"),
    ("m.from_numpy(np.zeros(3, dtype=np.float32))", "m.stack([X, Y], out=out)"),
    ("m.empty(1, device='meta')", "m.stack([X, Y], out=out)"),
    ("m.empty(5, device='meta')", "m.stack([X.to('meta')] * 2, dim=1, out=out)"),
    ("m.zeros(1, 2, 3)", "m.stack([X.to('meta')], out=out)"),
]


@pytest.mark.parametrize(("make_out", "call", "values"), FACTORIES, ids=[c[1] for c in FACTORIES])
def test_factories_write_into_out_as_torch(make_out: str, call: str, values: bool) -> None:
    same(make_out, call, values)


@pytest.mark.parametrize(("make_out", "call"), ARANGE, ids=[f"{c[0]}-{c[1]}" for c in ARANGE])
def test_arange_writes_into_out_as_torch(make_out: str, call: str) -> None:
    same(make_out, call)


@pytest.mark.parametrize(("make_out", "call"), JOINING, ids=[f"{c[0]}-{c[1]}" for c in JOINING])
def test_cat_and_stack_write_into_out_as_torch(make_out: str, call: str) -> None:
    same(make_out, call)


def test_out_of_the_right_shape_keeps_its_memory() -> None:
    for m in (pyc10, torch):
        out = m.zeros(4, 3)
        ptr = out.data_ptr()
        m.cat([m.ones(2, 3), m.ones(2, 3)], out=out)
        m.stack([m.ones(2, 3), m.ones(2, 3)], out=out.view(2, 2, 3))
        m.full((4, 3), 2.0, out=out)
        m.arange(12, out=out)
        assert out.data_ptr() == ptr
        assert out.tolist() == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]]


def test_resized_out_is_visible_through_every_name_of_it() -> None:
    for m in (pyc10, torch):
        out = m.zeros(0)
        alias = out
        m.cat([m.ones(2), m.zeros(1)], out=out)
        assert alias.tolist() == [1.0, 1.0, 0.0]
        assert alias.untyped_storage().nbytes() == 12
