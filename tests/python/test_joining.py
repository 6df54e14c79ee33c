"""pyc10.cat (concat, concatenate), pyc10.stack and pyc10.result_type against torch: result
shapes, strides, dtypes and values, and torch's errors."""

from __future__ import annotations

import pytest
from _parity import assert_same

import pyc10

A = "lib.arange(6, dtype=lib.float32).reshape(2, 3)"
B = "lib.arange(6, 12).reshape(2, 3)"


@pytest.mark.parametrize("name", ["cat", "concat", "concatenate"])
@pytest.mark.parametrize(
    "args",
    [
        f"[{A}, {B}]",
        f"[{A}, {B}], 1",
        f"[{A}, {B}], dim=-1",
        f"({A}, {A}, {A}), -2",
        f"[{A}]",
        # legacy empty 1-dim tensors are skipped, whatever their dtype takes part in promotion
        f"[lib.zeros(0, dtype=lib.float64), {B}]",
        f"[{A}, lib.zeros(0)], 1",
        "[lib.zeros(0), lib.zeros(0, dtype=lib.int64)], 5",
        "[lib.zeros(0), lib.zeros(0)]",
        # other empty tensors are not skipped
        f"[lib.zeros(0, 3), {A}]",
        f"[lib.zeros(2, 0), {A}], 1",
        # promotion across inputs
        "[lib.zeros(2, dtype=lib.uint8), lib.ones(1, dtype=lib.int8)]",
        "[lib.zeros(2, dtype=lib.bool), lib.ones(1, dtype=lib.bool)]",
        "[lib.zeros(2, dtype=lib.bool), lib.arange(3)]",
        "[lib.arange(2), lib.ones(1, dtype=lib.complex64)]",
        "[lib.arange(2, dtype=lib.float16), lib.ones(1, dtype=lib.bfloat16)]",
        # views and non-contiguous inputs
        f"[{A}.t(), {B}.t()], 1",
        f"[{A}[:, ::2], {B}[:, 1:]], 1",
        f"[{A}.expand(3, 2, 3), {B}.expand(1, 2, 3)]",
        "[lib.arange(24).reshape(2, 3, 4).permute(2, 0, 1), lib.zeros(1, 2, 3)]",
        # memory formats: channels_last kept only when every input has it
        "[lib.zeros(2, 3, 4, 5).to(memory_format=lib.channels_last)] * 2, 1",
        "[lib.zeros(2, 3, 4, 5).to(memory_format=lib.channels_last), lib.zeros(2, 3, 4, 5)], 1",
        "[lib.zeros(0), lib.zeros(2, 3, 4, 5).to(memory_format=lib.channels_last)], 1",
        # errors
        "[]",
        "()",
        "[lib.zeros(()), lib.zeros(())]",
        "[lib.zeros(2), lib.zeros(())]",
        f"[{A}, lib.zeros(2, 4)]",
        f"[{A}, lib.zeros(2)]",
        f"[{A}], 2",
        f"[{A}], -3",
        f"[{A}], True",
        f"{A}",
        "[lib.zeros(2), 1]",
        f"[{A}], 1.5",
    ],
)
def test_cat_agrees_with_torch(name: str, args: str) -> None:
    assert_same(f"lib.{name}({args})")


def test_cat_copies_into_a_new_tensor() -> None:
    a = pyc10.arange(4)
    out = pyc10.cat([a])
    out[0] = 9
    assert a.tolist() == [0, 1, 2, 3]
    assert out.data_ptr() != a.data_ptr()


@pytest.mark.parametrize(
    "args",
    [
        f"[{A}, {B}]",
        f"[{A}, {B}], 1",
        f"[{A}, {B}], 2",
        f"[{A}, {B}], -1",
        f"[{A}, {B}], -3",
        f"[{A}.t(), {B}.t()], 1",
        "[lib.zeros(()), lib.ones(())]",
        "[lib.zeros(0), lib.zeros(0)]",
        "[lib.zeros(0), lib.zeros(0)], 1",
        "[lib.arange(3), lib.arange(3.0)]",
        "[lib.zeros(2, 3, 4, 5).to(memory_format=lib.channels_last)] * 2, 1",
        "[lib.zeros(2, 3, 4, 5).to(memory_format=lib.channels_last)] * 2, 4",
        # errors
        "[]",
        "[lib.zeros(2), lib.zeros(3)]",
        "[lib.zeros(2), lib.zeros(3)], 1",
        "[lib.zeros(2), lib.zeros(3, 1)], 1",
        "[lib.zeros(2)], 2",
        "[lib.zeros(2)], -3",
        "[lib.zeros(2)], 1.5",
    ],
)
def test_stack_agrees_with_torch(args: str) -> None:
    assert_same(f"lib.stack({args})")


T32 = "lib.zeros(2, dtype=lib.int32)"
T0F16 = "lib.zeros((), dtype=lib.float16)"


@pytest.mark.parametrize(
    "args",
    [
        f"{T32}, {T32}",
        f"{T32}, lib.zeros(2)",
        f"{T32}, {T0F16}",
        f"{T0F16}, {T32}",
        f"{T32}, lib.zeros((), dtype=lib.int64)",
        f"{T32}, 2",
        f"{T32}, 2.5",
        f"{T32}, 2j",
        f"{T32}, True",
        "lib.zeros(2, dtype=lib.bool), 2",
        "lib.zeros(2, dtype=lib.bool), True",
        "lib.zeros(2, dtype=lib.float16), 2.5",
        "lib.zeros(2, dtype=lib.float16), 2j",
        "lib.zeros(2, dtype=lib.float64), 2j",
        "lib.zeros(2, dtype=lib.uint8), -1",
        f"{T0F16}, 2.5",
        f"{T0F16}, 2j",
        "2, 2.5",
        "True, 2",
        "2j, True",
        "2.5, lib.zeros(2, dtype=lib.int16)",
        f"np.float32(2.5), {T32}",
        "np.int8(2), lib.zeros(2, dtype=lib.uint8)",
        f"np.bool_(True), {T32}",
        f"{T32}, lib.zeros(2, dtype=lib.complex64)",
        # errors
        "1, 2, 3",
        f"{T32}",
        f"'a', {T32}",
    ],
)
def test_result_type_agrees_with_torch(args: str) -> None:
    assert_same(f"lib.result_type({args})")


def test_result_type_follows_the_default_dtype() -> None:
    old = pyc10.get_default_dtype()
    pyc10.set_default_dtype(pyc10.float64)
    try:
        assert pyc10.result_type(pyc10.zeros(2, dtype=pyc10.int32), 2.5) is pyc10.float64
        assert pyc10.result_type(pyc10.zeros(2, dtype=pyc10.int32), 2j) is pyc10.complex128
    finally:
        pyc10.set_default_dtype(old)
