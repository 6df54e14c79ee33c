"""numpy interop (pyc10/_ext/numpy.c) and copy.deepcopy against torch: Tensor.numpy(), __array__
and numpy.asarray(t) for every dtype numpy has, 0-dim, empty and strided tensors, the memory the
arrays share and keep alive, torch's errors, numpy(force=True), from_numpy and as_tensor of arrays
torch refuses or takes, and deepcopy's one copy per storage.

numpy() and __array__ make arrays through numpy's C API table; where it cannot be had they go
through numpy.asarray over the array interface. The tests of arrays run both ways
(pyc10._ctensor._numpy_c_api switches)."""

from __future__ import annotations

import copy
import gc
import os
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import pyc10
from pyc10 import _ctensor

ROOT = Path(__file__).resolve().parents[2]

# numpy 2 asks torch's __array__ (no copy parameter) for copy= and warns when it is refused
pytestmark = pytest.mark.filterwarnings(
    "ignore:__array__ implementation doesn't accept a copy keyword:DeprecationWarning"
)

# torch's dtypes numpy has, by name (torch's numpy() refuses the others)
NUMPY_DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]
# torch's dtypes numpy has not
OTHER_DTYPES = [
    "bfloat16",
    "complex32",
    "float8_e5m2",
    "float8_e4m3fn",
    "float8_e5m2fnuz",
    "float8_e4m3fnuz",
]


@pytest.fixture(params=["c_api", "asarray"])
def way(request: pytest.FixtureRequest) -> Iterator[str]:
    """Runs a test through numpy's C API table, then through numpy.asarray."""
    old = _ctensor._numpy_c_api(request.param == "c_api")
    try:
        yield request.param
    finally:
        _ctensor._numpy_c_api(old)


def pair(shape: tuple[int, ...], dtype: str) -> tuple[torch.Tensor, pyc10.Tensor]:
    """The same values as a torch and a pyc10 tensor (pyc10's a copy of torch's memory)."""
    t = torch.arange(int(np.prod(shape))).reshape(shape).to(getattr(torch, dtype))
    p = (
        pyc10.from_dlpack(t.clone())
        if t.numel()
        else pyc10.zeros(shape, dtype=getattr(pyc10, dtype))
    )
    return t, p


# (shape, view): views with offsets, steps, transposes, broadcast (stride 0) dims
VIEWS: list[tuple[tuple[int, ...], Callable[[Any], Any]]] = [
    ((), lambda x: x),
    ((0,), lambda x: x),
    ((2, 0, 3), lambda x: x),
    ((5,), lambda x: x),
    ((3, 4), lambda x: x),
    ((3, 4), lambda x: x.t()),
    ((3, 4), lambda x: x[1:, ::2]),
    ((3, 4), lambda x: x[2]),
    ((3, 4), lambda x: x[1, 3]),
    ((2, 3, 4), lambda x: x.permute(2, 0, 1)),
    ((1, 4), lambda x: x.expand(3, 4)),
    ((4,), lambda x: x[None, :, None]),
]


def same_array(a: np.ndarray, b: np.ndarray) -> None:
    assert type(a) is type(b) is np.ndarray
    assert a.dtype == b.dtype and a.dtype.char == b.dtype.char and a.dtype.num == b.dtype.num
    assert a.shape == b.shape and a.strides == b.strides
    assert a.flags.c_contiguous == b.flags.c_contiguous
    assert a.flags.f_contiguous == b.flags.f_contiguous
    assert a.flags.aligned == b.flags.aligned and a.flags.writeable == b.flags.writeable
    assert a.tolist() == b.tolist()


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("view", range(len(VIEWS)))
def test_numpy_as_torch(way: str, dtype: str, view: int) -> None:
    shape, make = VIEWS[view]
    t0, p0 = pair(shape, dtype)
    t, p = make(t0), make(p0)
    a, b = p.numpy(), t.numpy()
    same_array(a, b)
    # over the tensor's memory (numpy's stand-in address for no elements aside)
    if p.numel():
        assert a.__array_interface__["data"][0] == p.data_ptr()
    assert isinstance(a.base if way == "c_api" else a.base.tensor, pyc10.Tensor)
    assert isinstance(b.base, torch.Tensor)
    for call in (np.asarray, lambda x: x.__array__(), lambda x: x.numpy(force=True)):
        c, d = call(p), call(t)
        same_array(c, d)
        if p.numel():
            assert c.__array_interface__["data"][0] == p.data_ptr()


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_array_copies_and_casts_as_torch(way: str, dtype: str) -> None:
    t, p = pair((3, 4), dtype)
    t, p = t.t(), p.t()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy's ComplexWarning, as torch's
        for call in (
            np.array,
            lambda x: np.array(x, order="F"),
            lambda x: np.asarray(x, dtype=np.float64),
            lambda x: np.asarray(x, dtype=np.int8),
            lambda x: x.__array__(np.float32),
            lambda x: np.ascontiguousarray(x),
        ):
            a, b = call(p), call(t)
            assert a.dtype == b.dtype and a.shape == b.shape and a.strides == b.strides
            assert a.tolist() == b.tolist()
            assert np.shares_memory(a, p.numpy()) == np.shares_memory(b, t.numpy())
    copied = p.__array__(copy=True)
    assert copied.base is None and not np.shares_memory(copied, p.numpy())
    assert np.shares_memory(p.__array__(copy=False), p.numpy())


def test_arrays_write_through_and_keep_the_memory_alive(way: str) -> None:
    for m in (pyc10, torch):
        x = m.zeros(2, 3)
        a, b = x.numpy(), np.asarray(x[1])
        a[0, 1] = 5.0
        b[2] = 7.0
        assert x.tolist() == [[0.0, 5.0, 0.0], [0.0, 0.0, 7.0]]
        f = x.numpy(force=True)  # a CPU tensor's memory itself, as torch's
        f[0, 0] = 1.0
        assert x[0, 0].item() == 1.0
        del x
        gc.collect()
        assert a.tolist() == [[1.0, 5.0, 0.0], [0.0, 0.0, 7.0]] and b.tolist() == [0.0, 0.0, 7.0]


def test_numpy_of_read_only_memory_is_read_only(way: str) -> None:
    # pyc10 keeps numpy's promise (torch only warns when it wraps a read-only array)
    a = np.arange(4.0)
    a.flags.writeable = False
    p = pyc10.from_numpy(a)
    for b in (p.numpy(), np.asarray(p), p[1:].numpy(force=True), p.__array__()):
        assert not b.flags.writeable and b.tolist()[-1] == 3.0
        with pytest.raises(ValueError):
            b[-1] = 1.0
    assert p.__array__(copy=True).flags.writeable


@pytest.mark.parametrize("dtype", OTHER_DTYPES)
def test_dtypes_numpy_has_not_raise_as_torch(way: str, dtype: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's "ComplexHalf support is experimental"
        t = torch.zeros(2, dtype=getattr(torch, dtype))
    p = pyc10.zeros(2, dtype=getattr(pyc10, dtype))
    for call in (
        lambda x: x.numpy(),
        lambda x: x.numpy(force=True),
        np.asarray,
        lambda x: x.__array__(),
        lambda x: np.array(x, dtype=np.float32),
    ):
        with pytest.raises(TypeError) as it:
            call(t)
        with pytest.raises(TypeError) as ip:
            call(p)
        assert str(ip.value) == str(it.value)


def test_numpy_arguments_as_torch() -> None:
    x, t = pyc10.zeros(2), torch.zeros(2)
    for call in (
        lambda m: m.numpy(True),
        lambda m: m.numpy(force=1.5),
        lambda m: m.numpy(forced=True),
        lambda m: m.numpy(force=False, extra=1),
    ):
        with pytest.raises(TypeError) as it:
            call(t)
        with pytest.raises(TypeError) as ip:
            call(x)
        assert str(ip.value).replace("pyc10", "torch") == str(it.value)
    assert x.numpy(force=False).tolist() == t.numpy(force=False).tolist()


def test_the_two_ways_make_the_same_arrays() -> None:
    x = pyc10.from_numpy(np.arange(24, dtype=np.int16).reshape(2, 3, 4)).permute(2, 0, 1)[1:]
    old = _ctensor._numpy_c_api(True)
    try:
        fast = x.numpy()
        assert _ctensor._numpy_c_api(False) is True
        slow = x.numpy()
        assert _ctensor._numpy_c_api(True) is False
    finally:
        _ctensor._numpy_c_api(old)
    same_array(fast, slow)
    assert fast.base is x and slow.base.tensor is x
    assert fast.__array_interface__["data"] == slow.__array_interface__["data"]


def test_tensors_have_no_array_interface_as_torch() -> None:
    # numpy reads __array_struct__ and __array_interface__ before __array__: torch's tensors
    # have neither, nor have pyc10's (numpy.asarray(t) goes through __array__, numpy's C API)
    for x in (pyc10.zeros(2), torch.zeros(2)):
        assert not hasattr(x, "__array_interface__") and not hasattr(x, "__array_struct__")
        assert hasattr(x, "__array__")
    assert np.asarray(pyc10.zeros(2)).__array_interface__["typestr"] == "<f4"


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.zeros((2, 3), dtype=">f8"),
        lambda: np.zeros(3, dtype=">i2")[::2],
        lambda: np.zeros(4, dtype=np.int32)[::-1],
        lambda: np.zeros(4, dtype=np.uint8)[1:].view(np.int8),
        lambda: np.ndarray((2,), dtype=np.int32, buffer=np.zeros(12, np.uint8), strides=(6,)),
        lambda: np.ndarray((2,), dtype=np.int32, buffer=np.zeros(12, np.uint8), offset=1),
        lambda: np.zeros(2, dtype=np.longdouble),
        lambda: np.zeros(2, dtype=np.clongdouble),
        lambda: np.zeros(2, dtype=object),
        lambda: np.zeros(2, dtype="datetime64[s]"),
        lambda: np.zeros(2, dtype=[("a", np.int32)]),
        lambda: np.zeros(2, dtype=np.intc),
        lambda: np.zeros(2, dtype=np.uintc),
        lambda: np.zeros(2, dtype=np.longlong),
        lambda: np.zeros(2, dtype=np.ulonglong),
        lambda: np.zeros(2, dtype=np.intp),
        lambda: np.zeros(2, dtype=np.uint64),
        lambda: np.zeros((), dtype=np.complex64),
        lambda: np.zeros((3, 0), dtype=np.bool_),
        lambda: [1.0, 2.0],
        lambda: 3.0,
    ],
)
def test_from_numpy_and_as_tensor_as_torch(make: Any) -> None:
    def outcome(m: Any, call: Callable[[Any], Any]) -> Any:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = call(make())
        except Exception as e:
            base = next(c for c in (ValueError, TypeError, RuntimeError) if isinstance(e, c))
            return (base.__name__, str(e).replace("pyc10", "torch"))
        return (tuple(t.shape), t.stride(), str(t.dtype).split(".")[-1], t.tolist())

    for call in (lambda m: m.from_numpy, lambda m: m.as_tensor):
        assert outcome(pyc10, call(pyc10)) == outcome(torch, call(torch))


def test_as_tensor_of_an_array_shares_its_memory_as_torch() -> None:
    for m in (pyc10, torch):
        a = np.arange(6.0).reshape(2, 3)[:, 1:]
        t = m.as_tensor(a)
        a[0, 0] = 9.0
        assert t.tolist() == [[9.0, 2.0], [4.0, 5.0]] and t.stride() == (3, 1)
        assert m.as_tensor(a, dtype=m.float32).tolist() == [[9.0, 2.0], [4.0, 5.0]]
        assert m.as_tensor(a, device="cpu").data_ptr() == t.data_ptr()
    del t
    before = sys.getrefcount(a)
    t = pyc10.as_tensor(a)
    assert sys.getrefcount(a) == before + 1
    del t
    assert sys.getrefcount(a) == before


# ---- copy.deepcopy ----


def storage_ptr(m: Any, x: Any) -> int:
    """The address of x's storage (x a tensor or a storage)."""
    return int(x.data_ptr() if isinstance(x, m.UntypedStorage) else x.untyped_storage().data_ptr())


def test_deepcopy_copies_each_storage_once_as_torch() -> None:
    def run(m: Any) -> Any:
        x = m.arange(12.0) if m is torch else pyc10.from_dlpack(torch.arange(12.0))
        x = x.view(3, 4)
        y = m.zeros(2, dtype=m.int16)
        things = [x, x[1], x.t(), x[:, 1:3], y, x.untyped_storage(), y[1:], x]
        copies = copy.deepcopy(things)
        x.fill_(-1.0)  # the copies have their own memory
        ptrs = [storage_ptr(m, c) for c in copies]
        tensors = [(c, t) for c, t in zip(copies, things, strict=True) if m.is_tensor(c)]
        return (
            [ptrs.index(p) for p in ptrs],  # which copies share a storage
            [storage_ptr(m, c) != storage_ptr(m, t) for c, t in zip(copies, things, strict=True)],
            copies[0] is copies[-1],
            [(tuple(c.shape), c.stride(), c.storage_offset(), c.tolist()) for c, _ in tensors],
            [c.untyped_storage().nbytes() for c, _ in tensors],
        )

    assert run(pyc10) == run(torch)


@pytest.mark.parametrize("dtype", ["bool", "int64", "bfloat16", "complex64", "float8_e5m2"])
@pytest.mark.parametrize("view", range(len(VIEWS)))
def test_deepcopy_as_torch(dtype: str, view: int) -> None:
    shape, make = VIEWS[view]
    t0, p0 = pair(shape, dtype)
    t, p = copy.deepcopy(make(t0)), copy.deepcopy(make(p0))
    assert str(p.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert (p.shape, p.stride(), p.storage_offset()) == (
        tuple(t.shape),
        t.stride(),
        t.storage_offset(),
    )
    assert p.untyped_storage().nbytes() == t.untyped_storage().nbytes()
    assert p.tolist() == t.tolist()
    if p0.numel():
        assert p.untyped_storage().data_ptr() != p0.untyped_storage().data_ptr()


def test_deepcopy_memo_as_torch() -> None:
    for m in (pyc10, torch):
        x = m.zeros(3)
        memo: dict[int, Any] = {}
        a = x.__deepcopy__(memo)
        assert x.__deepcopy__(memo) is a and memo[id(x)] is a
        assert copy.deepcopy(x, memo) is a
        assert copy.deepcopy(x) is not a  # another deepcopy, another copy
    with pytest.raises(TypeError) as it:
        torch.zeros(2).__deepcopy__(None)
    with pytest.raises(TypeError) as ip:
        pyc10.zeros(2).__deepcopy__(None)
    assert str(ip.value) == str(it.value)


def test_deepcopy_of_read_only_memory_is_writable() -> None:
    a = np.arange(4.0)
    a.flags.writeable = False
    p = copy.deepcopy(pyc10.from_numpy(a))
    p[0] = 5.0
    assert p.tolist() == [5.0, 1.0, 2.0, 3.0] and a.tolist() == [0.0, 1.0, 2.0, 3.0]


# ---- tensors off the CPU, over the stand-in CUDA driver ----


def test_cuda_tensors_as_torch(stub: Path) -> None:
    script = """
        import copy
        import numpy as np
        import pyc10
        g = pyc10.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3)).cuda().t()
        for call in (lambda: g.numpy(), lambda: np.asarray(g), lambda: g.__array__()):
            try:
                call()
            except TypeError as e:
                print("TypeError", e)
        a = g.numpy(force=True)  # torch's detach().cpu(): a host copy
        print(a.tolist(), a.strides, a.flags.writeable, type(a.base).__name__)
        c = copy.deepcopy([g, g[1]])
        print(c[0].device, c[0].tolist(), c[1].tolist(), c[0].stride(),
              c[0].untyped_storage().data_ptr() == c[1].untyped_storage().data_ptr(),
              c[0].data_ptr() != g.data_ptr())
        try:
            pyc10.zeros(2, dtype=pyc10.bfloat16, device="cuda").numpy(force=True)
        except TypeError as e:
            print("TypeError", e)
    """
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        env={**os.environ, "C10C_CUDA_DRIVER": str(stub)},
        cwd="/",
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    # torch's messages: a meta tensor stands in for a CUDA one in torch's CPU build
    with pytest.raises(TypeError) as device_error:
        torch.zeros(2, device="meta").numpy()
    with pytest.raises(TypeError) as dtype_error:
        torch.zeros(2, dtype=torch.bfloat16).numpy(force=True)
    cuda_error = str(device_error.value).replace("meta", "cuda:0")
    t = torch.arange(6.0).reshape(2, 3).t()
    b = t.numpy(force=True)
    assert proc.stdout.splitlines() == [
        f"TypeError {cuda_error}",
        f"TypeError {cuda_error}",
        f"TypeError {cuda_error}",
        f"{b.tolist()} {b.strides} True Tensor",
        f"cuda:0 {t.tolist()} {t[1].tolist()} {t.stride()} True True",
        f"TypeError {dtype_error.value}",
    ]
