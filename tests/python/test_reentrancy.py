"""Methods whose argument conversion runs Python code (``__index__``) that swaps the handle of the
very tensor being operated on (``resize_``, ``set_``): the method works on the tensor as it is after
the swap, as torch's methods see the TensorImpl mutated in place, and never on the released
handle."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import pyc10 as m


class Swapping:
    """An int whose ``__index__`` first resizes ``target`` (swapping its handle)."""

    def __init__(self, value: int, swap: Callable[[], object]) -> None:
        self.value = value
        self.swap = swap

    def __index__(self) -> int:
        self.swap()
        return self.value


def _run(lib: Any, call: Callable[[Any, Callable[[int], Swapping]], Any]) -> Any:
    x = lib.arange(24.0).reshape(2, 3, 4)

    def idx(v: int) -> Swapping:
        def swap() -> None:
            # a new handle on other data, of another geometry; the old one released
            x.set_(lib.arange(100.0, 124.0).reshape(6, 4))

        return Swapping(v, swap)

    try:
        out = call(x, idx)
    except (TypeError, RuntimeError, IndexError, ValueError) as e:
        return next(c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins")
    if isinstance(out, (tuple, list)):
        return [(tuple(o.shape), tuple(o.stride()), o.tolist()) for o in out]
    return (tuple(out.shape), tuple(out.stride()), out.tolist(), tuple(x.shape))


CASES: list[str] = [
    "x.view(i(4), i(6))",
    "x.reshape(i(24))",
    "x.expand(i(6), i(4))",
    "x.broadcast_to((i(6), i(4)))",
    "x.permute(i(1), i(0))",
    "x.transpose(i(0), i(1))",
    "x.swapdims(i(0), i(1))",
    "x.transpose_(i(0), i(1))",
    "x.squeeze(i(0))",
    "x.squeeze_(i(0))",
    "x.unsqueeze(i(0))",
    "x.unsqueeze_(i(2))",
    "x.unflatten(i(0), (2, 3))",
    "x.narrow(i(0), 1, 2)",
    "x.select(i(0), 1)",
    "x.movedim(i(0), 1)",
    "x.diagonal(i(0))",
    "x.unfold(i(0), 2, 1)",
    "x.as_strided((i(2), 2), (1, 1))",
    "x.as_strided_((i(2), 2), (1, 1))",
    "x.split(i(2))",
    "x.chunk(i(2))",
    "x.tensor_split(i(2))",
    "x.unbind(i(0))",
    "x.flatten(i(0))",
    "x.split([i(2), 4])",
    "x.unsafe_split(i(2))",
    "x.unsafe_chunk(i(2))",
    "x.split_with_sizes([i(2), 4])",
    "x.narrow_copy(i(0), 0, 1)",
    "x.tensor_split(i(2), 1)",
    "x.tensor_split([i(1)], 1)",
    "x.tensor_split(x.new_tensor(1).long(), i(1))",
    "x.hsplit(i(2))",
    "x.set_(x, i(1), (2,), (1,))",
    "x.set_(x.untyped_storage(), i(1), (2,))",
    "x[i(0) : i(2)]",
    "x.new_zeros(i(2))",
    "x.new_ones((i(2),))",
    "x.new_full((i(2),), 1.0)",
    "x.new_empty((i(2),)).fill_(3)",
]


@pytest.mark.parametrize("expr", CASES)
def test_index_swaps_self(expr: str) -> None:
    def run(lib: Any) -> Any:
        return _run(lib, lambda x, i: eval(expr, {"x": x, "i": i}))

    assert run(m) == run(torch)


# Indexing holds self's handle as it was when indexing began (torch's indexes the TensorImpl as the
# swap left it): the items index that tensor, and a write lands in it, not in the new one.
INDEXING: list[tuple[str, str]] = [
    ("x[i(1)]", "x[1]"),
    ("x[i(0), i(1)]", "x[0, 1]"),
    ("x[i(0), 1:i(3)]", "x[0, 1:3]"),
]


def _swapped(x: Any) -> tuple[Callable[[int], Swapping], list[Any]]:
    junk: list[Any] = []

    def swap() -> None:
        x.set_(m.arange(100.0, 124.0).reshape(6, 4))
        # reuse what the swap released: a read from it shows these
        junk.extend(m.full((2, 3, 4), -1.0) for _ in range(8))

    return (lambda v: Swapping(v, swap)), junk


@pytest.mark.parametrize(("expr", "plain"), INDEXING)
def test_index_swaps_self_while_indexing(expr: str, plain: str) -> None:
    x = m.arange(24.0).reshape(2, 3, 4)
    i, _junk = _swapped(x)
    got = eval(expr, {"x": x, "i": i})
    want = eval(plain, {"x": torch.arange(24.0).reshape(2, 3, 4)})
    assert got.tolist() == want.tolist()
    assert x.tolist() == torch.arange(100.0, 124.0).reshape(6, 4).tolist()


@pytest.mark.parametrize("index", ["i(0)", "(i(0), i(1))", "(i(0), slice(i(1), 2))"])
def test_index_swaps_self_while_writing(index: str) -> None:
    x = m.arange(24.0).reshape(2, 3, 4)
    i, _junk = _swapped(x)
    x[eval(index, {"i": i})] = 5.0
    assert x.tolist() == torch.arange(100.0, 124.0).reshape(6, 4).tolist()


def test_index_swaps_value_while_writing() -> None:
    x = m.zeros(2, 4)
    y = m.arange(4.0)
    i = Swapping(0, lambda: y.set_(m.full((3,), 7.0)))
    x[i] = y
    assert x.tolist() == [[0.0, 1.0, 2.0, 3.0], [0.0] * 4]
    assert y.tolist() == [7.0] * 3


@pytest.mark.parametrize(
    "expr",
    [
        "x.new_zeros(i(2))",
        "x.new_full((i(2),), 3)",
        "x.new_empty_strided((i(2),), (1,)).fill_(0)",
        "x.new_tensor([1, 2], device=i(0) if 0 else None)",
    ],
)
def test_index_swaps_dtype_of_self(expr: str) -> None:
    def run(lib: Any) -> Any:
        x = lib.zeros(3)
        # once (the parser and the conversion may both call __index__); the shell of the released
        # handle is not reused by a later swap then
        todo = [lambda: setattr(x, "data", lib.arange(4))]
        out = eval(expr, {"x": x, "i": lambda v: Swapping(v, lambda: todo and todo.pop()())})
        return str(out.dtype).split(".")[-1], out.tolist()

    assert run(m) == run(torch)
