"""pyc10.arange, frombuffer, asarray, view_as_real/complex, broadcast_shapes, typename,
is_storage and the factories' size messages against torch: dtypes, shapes, strides, values and
torch's errors."""

from __future__ import annotations

import array
import gc
import math
import weakref

import numpy as np
import pytest
import torch
from _oracle import needs_torch_cpu_build
from _parity import assert_same

import pyc10


@pytest.mark.parametrize(
    "args",
    [
        "5",
        "5.0",
        "0",
        "2, 7",
        "7, 2, -1",
        "0, 1, 0.1",
        "-5.5, -1.25, 1.0",
        "0, 1, 0.3, dtype=lib.float64",
        "1234567.891, 1234570",
        "-3, 3, 1.5, dtype=lib.float16",
        "0, 1, 0.1, dtype=lib.float16",
        "0, 1, 0.1, dtype=lib.bfloat16",
        "70000, 70002, dtype=lib.float16",
        "0, 300, 7, dtype=lib.int8",
        "-2, 2, dtype=lib.uint8",
        "0, 5, 2.5, dtype=lib.uint8",
        "0, 1, 0.5, dtype=lib.int32",
        "0.5, 3.7, dtype=lib.int32",
        "0.5, 3.7, dtype=lib.int64",
        "0.5, 3.7",
        "3e9, 3e9 + 2, dtype=lib.int32",
        "2**62, 2**63 - 1, 2**61",
        "True, 5, True",
        "0, 5, True",
        "lib.tensor(True), 5",
        "lib.tensor(3)",
        "lib.tensor(3.5)",
        "np.int64(3)",
        "np.float32(2.5)",
        "np.bool_(True), 3",
        "1e-310",
        "end=4",
        "start=1, end=4",
        "start=1, end=4, step=2",
        "4, dtype=lib.float64",
        "4, dtype=lib.int16, device='cpu'",
        "4, layout=lib.strided, pin_memory=False, requires_grad=False",
        # errors
        "0, 1, 0",
        "0, -1, 1",
        "5, 1, 2",
        "0.1, 1e-7",
        "0, 1e30, 1",
        "0, 10, 1e-30",
        "-1e300, 1e300, 1e-300",
        "1.5e300",
        "float('nan')",
        "float('inf')",
        "0.5, float('nan'), dtype=lib.int64",
        "0.5, float('nan'), 0.3, dtype=lib.int32",
        "0.5, float('inf'), 0",
        "1e20, dtype=lib.int64",
        "0, 3, 0.5, dtype=lib.int64",
        "0.5, 3.7, 0.5, dtype=lib.int64",
        "1e20, dtype=lib.int32",
        "2**63",
        "1j",
        "3, dtype=lib.bool",
        "3, dtype=lib.complex64",
        "3, dtype=lib.uint16",
        "3, dtype=lib.float8_e5m2",
        "3, requires_grad=True",
        "lib.tensor([3])",
        "lib.zeros(2, 2)",
        "'a'",
        "",
        "1, 2, 3, 4",
        "1, 2, dtype=lib.float32, out=None, layout=None",
    ],
)
def test_arange_agrees_with_torch(args: str) -> None:
    assert_same(f"lib.arange({args})")


def test_arange_follows_the_default_dtype() -> None:
    old = pyc10.get_default_dtype()
    pyc10.set_default_dtype(pyc10.float64)
    try:
        assert pyc10.arange(0.5, 2).dtype is pyc10.float64
        assert pyc10.arange(2).dtype is pyc10.int64
    finally:
        pyc10.set_default_dtype(old)


def test_arange_long_float_ranges_match_torch_closely() -> None:
    # ATen's vectorized kernel adds step to a rounded base every few elements: values agree
    # with torch's to the last bit or so, not always exactly, past the first vector
    for args in [(0, 100, 0.1), (-7.3, 1000.1, 0.37), (1, 2, 1e-4)]:
        ours = pyc10.arange(*args).tolist()
        theirs = torch.arange(*args).tolist()
        assert len(ours) == len(theirs)
        pairs = zip(ours, theirs, strict=True)
        assert all(math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6) for a, b in pairs)
    assert pyc10.arange(10**6).tolist() == torch.arange(10**6).tolist()


def test_arange_refuses_pinned_memory_without_an_accelerator() -> None:
    if not pyc10.cuda.is_available():
        with pytest.raises(RuntimeError, match="pin_memory=True"):
            pyc10.arange(3, pin_memory=True)


# ---- frombuffer ----


@pytest.mark.parametrize(
    "args",
    [
        "bytearray(8), dtype=lib.float32",
        "bytearray(b'abcd'), dtype=lib.uint8",
        "bytearray(b'abcdefgh'), dtype=lib.int16, offset=2",
        "bytearray(b'abcdefgh'), dtype=lib.int16, count=2, offset=1",
        "bytearray(9), dtype=lib.float32, offset=1",
        "bytearray(8), dtype=lib.float32, count=-2",
        "bytearray(b'\\x01\\x00\\x02'), dtype=lib.bool",
        "array.array('d', [1.5, 2.5]), dtype=lib.float64",
        "np.arange(4.0).reshape(2, 2), dtype=lib.float64",
        "memoryview(bytearray(b'abcdef'))[2:], dtype=lib.uint8",
        # errors
        "bytearray(), dtype=lib.float32",
        "bytearray(8), dtype=lib.float32, count=0",
        "bytearray(8), dtype=lib.float32, offset=9",
        "bytearray(8), dtype=lib.float32, offset=8",
        "bytearray(8), dtype=lib.float32, offset=-1",
        "bytearray(8), dtype=lib.float32, count=3",
        "bytearray(7), dtype=lib.float32",
        "bytearray(8), dtype=lib.float32, offset=2",
        "[1, 2], dtype=lib.uint8",
        "memoryview(bytearray(8))[::2], dtype=lib.uint8",
        "np.arange(4.0).reshape(2, 2).T, dtype=lib.float64",
        "bytearray(4), dtype=lib.int32, requires_grad=True",
        "bytearray(8)",
        "bytearray(8), lib.float32",
        "bytearray(8), dtype=lib.float32, count=1.5",
    ],
)
def test_frombuffer_agrees_with_torch(args: str) -> None:
    assert_same(f"lib.frombuffer({args})", {"array": array})


def test_frombuffer_shares_the_buffer_and_keeps_it_alive() -> None:
    buf = bytearray(8)
    t = pyc10.frombuffer(buf, dtype=pyc10.int32)
    t[1] = 7
    assert buf[4] == 7
    buf[0] = 3
    assert t[0].item() == 3

    class Owner(bytearray):
        pass

    owner = Owner(b"\x05\x00")
    alive = weakref.ref(owner)
    t = pyc10.frombuffer(owner, dtype=pyc10.int16)
    del owner
    gc.collect()
    assert alive() is not None and t.tolist() == [5]
    del t
    gc.collect()
    assert alive() is None


def test_frombuffer_of_read_only_memory_is_read_only() -> None:
    t = pyc10.frombuffer(b"abcd", dtype=pyc10.uint8)  # torch warns and lets writes through
    assert t.tolist() == [97, 98, 99, 100]
    with pytest.raises(RuntimeError):
        t[0] = 1


# ---- asarray ----


@pytest.mark.parametrize(
    "args",
    [
        "[1, 2]",
        "[[1.5, 2], [3, 4]]",
        "[True, False]",
        "[1, 2j]",
        "3",
        "3.0, dtype=lib.int32",
        "(1, 2), dtype=lib.float64, device='cpu'",
        "np.zeros(2)",
        "np.zeros(2), copy=False",
        "np.arange(6).reshape(2, 3).T",
        "np.float32(2)",
        "np.int16(2), dtype=lib.float64",
        "lib.arange(3)",
        "lib.arange(3), dtype=lib.float32",
        "lib.arange(3), copy=True",
        "lib.arange(3), device='cpu', copy=False",
        "lib.arange(6).reshape(2, 3).t(), copy=True",
        "bytearray(8)",
        "bytearray(8), dtype=lib.uint8",
        "bytearray(8), dtype=lib.int16, copy=False",
        "np.zeros(3, dtype=np.int32), requires_grad=False",
        # errors
        "[1, 2], copy=False",
        "lib.zeros(2), dtype=lib.int64, copy=False",
        "np.zeros(2), dtype=lib.float32, copy=False",
        "'ab'",
        "[[1, 2], [3]]",
        "None",
        "bytearray(3)",
        "np.zeros(3)[::-1]",
        "[1, 2], requires_grad=True",
        "lib.zeros(2, dtype=lib.int32), requires_grad=True",
        "",
        "[1], lib.float32",
    ],
)
def test_asarray_agrees_with_torch(args: str) -> None:
    assert_same(f"lib.asarray({args})")


def test_asarray_shares_memory_unless_it_must_copy() -> None:
    a = np.arange(4.0)
    t = pyc10.asarray(a)
    t[0] = 9
    assert a[0] == 9
    t2 = pyc10.asarray(a, copy=True)
    t2[1] = 9
    assert a[1] == 1
    x = pyc10.arange(3)
    assert pyc10.asarray(x) is x
    assert pyc10.asarray(x, copy=True) is not x
    y = pyc10.asarray(x, dtype=pyc10.float64)  # a copy, converted
    assert y.dtype is pyc10.float64 and x.dtype is pyc10.int64
    buf = bytearray(4)
    pyc10.asarray(buf, dtype=pyc10.uint8)[2] = 5
    assert buf[2] == 5


def test_asarray_takes_dlpack_producers() -> None:
    src = torch.arange(4, dtype=torch.int32)
    t = pyc10.asarray(src)
    assert t.tolist() == [0, 1, 2, 3] and t.dtype is pyc10.int32
    src[0] = 7
    assert t[0].item() == 7
    t = pyc10.asarray(src.__dlpack__())
    assert t[0].item() == 7


# ---- view_as_real, view_as_complex ----


@pytest.mark.parametrize(
    "src",
    [
        "lib.view_as_real(lib.zeros(2, 3, dtype=lib.complex64))",
        "lib.view_as_real(lib.tensor([1 + 2j, 3 - 4j]))",
        "lib.view_as_real(lib.zeros(2, 3, dtype=lib.complex128).t())",
        "lib.view_as_real(lib.zeros(4, dtype=lib.complex64)[1::2])",
        "lib.view_as_real(lib.zeros((), dtype=lib.complex128))",
        "lib.view_as_real(lib.zeros(2))",
        "lib.view_as_real(lib.zeros(2, dtype=lib.int64))",
        "lib.view_as_complex(lib.arange(6.0).reshape(3, 2))",
        "lib.view_as_complex(lib.arange(2.0))",
        "lib.view_as_complex(lib.arange(12, dtype=lib.float64).reshape(2, 3, 2).transpose(0, 1))",
        "lib.view_as_complex(lib.zeros(3, 2)[:, None].expand(3, 4, 2))",
        "lib.view_as_complex(lib.zeros(4, 2)[::2])",
        "lib.view_as_complex(lib.zeros(2, 3))",
        "lib.view_as_complex(lib.zeros(2, 2, dtype=lib.int32))",
        "lib.view_as_complex(lib.zeros(2, 2, dtype=lib.bfloat16))",
        "lib.view_as_complex(lib.zeros(2, 2).t())",
        "lib.view_as_complex(lib.zeros(5)[1:].view(2, 2))",
        "lib.view_as_complex(lib.zeros(3, 4)[:, ::2])",
        "lib.view_as_complex(lib.zeros(3, 3, 2)[:, ::2].permute(1, 0, 2)[..., :2])",
        "lib.view_as_complex(lib.zeros(()))",
        "lib.view_as_complex(lib.zeros(2), 1)",
    ],
)
def test_complex_views_agree_with_torch(src: str) -> None:
    assert_same(src)


def test_complex_views_share_memory() -> None:
    c = pyc10.zeros(2, dtype=pyc10.complex64)
    r = pyc10.view_as_real(c)
    r[1, 1] = 5
    assert c.tolist() == [0j, 5j]
    back = pyc10.view_as_complex(r)
    assert back.data_ptr() == c.data_ptr() and back.dtype is pyc10.complex64
    h = pyc10.view_as_complex(pyc10.zeros(2, dtype=pyc10.float16))
    assert h.dtype is pyc10.complex32 and h.shape == ()


# ---- broadcast_shapes, typename, is_storage, legacy_contiguous_format ----


@pytest.mark.parametrize(
    "args",
    [
        "(2,), (3, 1), (1, 1, 1)",
        "(2, 3), 3",
        "5, (1,)",
        "[2, 1], lib.Size([4, 1, 3])",
        "()",
        "",
        "None, (2,)",
        "(0, 1), (1, 5)",
        "(2,), (3,)",
        "(2, 3), (3, 3)",
        "(1,), (-1,)",
        "'ab', (1,)",
        "1.5",
    ],
)
def test_broadcast_shapes_agrees_with_torch(args: str) -> None:
    assert_same(f"lib.broadcast_shapes({args})")


def test_typename_and_is_storage_follow_torch() -> None:
    assert pyc10.typename(pyc10.zeros(2)) == pyc10.zeros(2).type()
    assert pyc10.typename(pyc10.zeros(2, dtype=pyc10.int64)) == "torch.LongTensor"
    for obj in [1, "a", int, np.zeros(2), array.array, weakref.ref]:
        assert pyc10.typename(obj) == torch.typename(obj)
    t = pyc10.arange(3)
    assert pyc10.is_storage(t.untyped_storage())
    assert pyc10.is_storage(pyc10.TypedStorage(2, dtype=pyc10.float32))
    assert not pyc10.is_storage(t)
    assert not pyc10.is_storage([1, 2])


# ---- the other factories: size messages ----


@pytest.mark.parametrize(
    "src",
    [
        "lib.zeros(-3)",
        "lib.zeros(2, -1)",
        "lib.zeros((-3,))",
        "lib.zeros([-3], dtype=lib.int32)",
        "lib.zeros(size=(2, -3))",
        "lib.zeros(-3, requires_grad=True, dtype=lib.int32)",
        "lib.zeros(-3, layout=lib.strided)",
        "lib.zeros(lib.Size([-3]))",
        "lib.zeros(np.int64(-3))",
        "lib.ones(-3)",
        "lib.empty(-3)",
        "lib.full((-3,), 1)",
        "lib.full(-3, 1)",
        "lib.empty_strided((-1,), (1,))",
        "lib.empty(None)",
        "lib.zeros(None)",
        "lib.ones(None)",
        "lib.empty(2, None)",
        "lib.zeros(2, None)",
        "lib.full(None, 1)",
    ],
)
def test_factory_size_errors_agree_with_torch(src: str) -> None:
    assert_same(src)


@pytest.mark.parametrize(
    "src",
    [
        "lib.device('cuda', np.int64(0))",
        "lib.device('cpu', np.int32(0))",
        "lib.device('cuda', np.uint8(1))",
        "lib.device(type='cuda', index=np.int64(2))",
        "lib.device('cuda', np.bool_(0))",
        "lib.device('cuda', np.float64(0))",
        "lib.device('cuda', 0.0)",
        # an integer alone names the current accelerator: torch's CPU build has none
        pytest.param("lib.device(np.int64(0))", marks=needs_torch_cpu_build),
        pytest.param("lib.zeros(1, device=np.int64(0))", marks=needs_torch_cpu_build),
        pytest.param("lib.zeros(1, device='cpu').to(np.int64(0))", marks=needs_torch_cpu_build),
    ],
)
def test_numpy_integers_are_device_indices_as_in_torch(src: str) -> None:
    assert_same(src)


def test_from_dlpack_takes_torchs_parameter_names() -> None:
    t = pyc10.from_dlpack(ext_tensor=np.arange(3))
    assert t.tolist() == [0, 1, 2]
    assert pyc10.from_dlpack(np.arange(2), device="cpu", copy=True).tolist() == [0, 1]
    for src in [
        "lib.from_dlpack()",
        "lib.from_dlpack(np.zeros(2), np.zeros(2))",
        "lib.from_dlpack(np.zeros(2), ext_tensor=np.zeros(2))",
        "lib.from_dlpack(np.zeros(2), stream=1)",
    ]:
        assert_same(src)
