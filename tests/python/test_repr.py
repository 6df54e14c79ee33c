"""repr, str and format of tensors against torch's, character for character.

Every tensor is made once in torch and handed to pyc10 (DLPack, or its bytes for the dtypes
DLPack cannot carry), so both print the same elements; torch's text with ``torch.`` read as
``pyc10.`` is the expected one.
"""

from __future__ import annotations

import math
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import pyc10
from pyc10._repr import get_printoptions, printoptions

FLOATS = [
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "float8_e4m3fn",
    "float8_e5m2",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
]
COMPLEX = ["complex64", "complex128", "complex32"]
INTS = ["int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64"]
BYTES = ["float8_e8m0fnu", "float4_e2m1fn_x2"]  # every bit pattern is a value worth printing
ALL = [*FLOATS, *COMPLEX, *INTS, *BYTES, "bool"]


def to_pyc10(t: torch.Tensor) -> pyc10.Tensor:
    """The same elements in a pyc10 tensor (contiguous, on the CPU)."""
    t = t.contiguous()
    if t.dtype == torch.float4_e2m1fn_x2:  # DLPack cannot carry it: its bytes, viewed
        raw = pyc10.from_numpy(t.view(torch.uint8).numpy().copy())
        return raw.view(pyc10.float4_e2m1fn_x2)
    return pyc10.from_dlpack(t.clone())


def expected(text: str) -> str:
    return text.replace("torch.", "pyc10.")


def float_values(rng: random.Random, n: int) -> list[float]:
    kind = rng.choice(["int", "small", "big", "mixed", "tiny", "special", "huge"])
    out = []
    for _ in range(n):
        if kind == "int":
            out.append(float(rng.randint(-50, 50)))
        elif kind == "small":
            out.append(rng.uniform(-10, 10))
        elif kind == "big":
            out.append(rng.uniform(-1e9, 1e9))
        elif kind == "mixed":
            out.append(rng.choice([1e-5, 3.0, 12345.678, -0.5, -0.0]))
        elif kind == "tiny":
            out.append(rng.uniform(-1e-6, 1e-6))
        elif kind == "huge":
            out.append(rng.choice([1e30, -2.5e38, 7.0, 1e300]))
        else:
            out.append(rng.choice([0.0, -0.0, math.inf, -math.inf, math.nan, 1.5, 2.0, -3.0]))
    return out


def random_tensor(rng: random.Random, name: str, shape: tuple[int, ...]) -> torch.Tensor:
    n = math.prod(shape)
    if name == "bool":
        return torch.tensor([rng.random() < 0.5 for _ in range(n)]).reshape(shape)
    if name in INTS:
        info = np.iinfo(name)
        lo, hi = rng.choice([(0, 9), (-100, 100), (int(info.min), int(info.max))])
        lo = max(lo, int(info.min))
        a = np.array([rng.randint(lo, hi) for _ in range(n)], dtype=name)
        return torch.from_numpy(a.reshape(shape))
    if name in BYTES:
        a = np.array([rng.randrange(256) for _ in range(n)], dtype=np.uint8)
        return torch.from_numpy(a.reshape(shape)).view(getattr(torch, name))
    d = getattr(torch, name)
    with np.errstate(over="ignore"):
        re = torch.tensor(float_values(rng, n), dtype=torch.float64)
        if name in COMPLEX:
            im = torch.tensor(float_values(rng, n), dtype=torch.float64)
            return torch.complex(re, im).to(d).reshape(shape)
        return re.to(d).reshape(shape)


def random_shape(rng: random.Random) -> tuple[int, ...]:
    if rng.random() < 0.06:  # summarised past 1000 elements
        return rng.choice([(1001,), (1001, 1), (40, 30), (3, 20, 20), (2, 2, 2, 130)])
    return tuple(rng.choice([0, 1, 1, 2, 3, 5, 9]) for _ in range(rng.randint(0, 4)))


def check_same(t: torch.Tensor, p: pyc10.Tensor, why: object) -> None:
    theirs = expected(repr(t))
    assert repr(p) == theirs, why
    assert str(p) == expected(str(t)), why
    assert f"{p}" == expected(f"{t}"), why


@pytest.mark.parametrize("name", ALL)
def test_repr_matches_torch_for_random_tensors_of_each_dtype(name):
    rng = random.Random(name)
    for i in range(60):
        shape = random_shape(rng)
        if name == "float4_e2m1fn_x2" and shape == ():
            continue  # torch cannot print it (test_float4_0_dim_prints_its_byte...)
        t = random_tensor(rng, name, shape)
        check_same(t, to_pyc10(t), (name, shape, i))


def test_repr_of_views_matches_torch():
    rng = random.Random(3)
    for i in range(60):
        name = rng.choice(ALL)
        t = random_tensor(rng, name, (4, 6, 5))
        p = to_pyc10(t)
        for view in (
            lambda x: x.transpose(0, 2),
            lambda x: x[1:, ::2],
            lambda x: x[:, 3],
            lambda x: x[2, 1:4, 2],
            lambda x: x.t() if x.dim() == 2 else x[0].t(),
            lambda x: x[:, :1, 2].expand(4, 7),  # stride 0
        ):
            check_same(view(t), view(p), (name, i))


@pytest.mark.parametrize(
    "values",
    [
        [0.0, -0.0],
        [-0.0],
        [math.nan, math.inf, -math.inf],
        [math.nan, 1.5],
        [math.inf, 2.0, -0.0],
        [1e-4, 1.0],
        [0.99e-4, 1.0],
        [1e8, 1.0],
        [1.01e8],
        [1000.0, 1.0],
        [1001.0, 1.0],
        [123456789.0],
        [0.1, 0.25, 1e-10],
        [5e-324, 1.0],
        [1.7976931348623157e308, 5e-324],
    ],
)
@pytest.mark.parametrize("name", ["float32", "float64", "float16", "bfloat16", "complex64"])
def test_repr_of_special_values_and_sci_mode_thresholds(values, name):
    d = getattr(torch, name)
    t = torch.tensor(values, dtype=torch.float64).to(d)
    check_same(t, to_pyc10(t), values)
    check_same(t[0], to_pyc10(t)[0], values)  # 0-dim


def test_repr_of_every_float8_e8m0_and_float4_byte_matches_torch():
    raw = torch.arange(256, dtype=torch.uint8)
    for name in BYTES:
        t = raw.view(getattr(torch, name))
        check_same(t, to_pyc10(t), name)
        for b in (0, 1, 127, 128, 254, 255):  # one element at a time: zero, NaN, the edges
            check_same(t[b : b + 1], to_pyc10(t)[b : b + 1], (name, b))
        check_same(t[:3], to_pyc10(t)[:3], name)


def test_repr_of_empty_tensors_names_every_dtype_but_the_default():
    for name in [*ALL, "uint4", "int3", "bits8", "bits16", "uint1"]:
        for shape in [(0,), (2, 0), (0, 3, 1), (1, 0, 0)]:
            t = torch.empty(shape, dtype=getattr(torch, name))
            p = pyc10.empty(shape, dtype=getattr(pyc10, name))
            check_same(t, p, (name, shape))


def test_repr_of_integer_extremes_matches_torch():
    for name in INTS:
        info = np.iinfo(name)
        a = np.array([info.min, info.max, 0], dtype=name)
        check_same(torch.from_numpy(a), pyc10.from_numpy(a), name)


def test_repr_names_the_dtype_by_the_default_dtype():
    tensors = [torch.tensor([1.5, 2.0], dtype=getattr(torch, n)) for n in FLOATS + COMPLEX]
    tensors += [torch.empty(0, dtype=torch.float64), torch.empty(0, dtype=torch.complex128)]
    tensors += [torch.tensor([1, 2]), torch.tensor([True])]
    try:
        for default in ["float64", "float16", "bfloat16", "float32"]:
            torch.set_default_dtype(getattr(torch, default))
            pyc10.set_default_dtype(getattr(pyc10, default))
            for t in tensors:
                check_same(t, to_pyc10(t), (default, t.dtype))
    finally:
        torch.set_default_dtype(torch.float32)
        pyc10.set_default_dtype(pyc10.float32)


@pytest.fixture
def restore_printoptions():
    yield
    torch.set_printoptions(profile="default")
    pyc10.set_printoptions(profile="default")


OPTIONS = [
    {"precision": 0},
    {"precision": 2},
    {"precision": 8},
    {"threshold": 5},
    {"threshold": 5, "edgeitems": 1},
    {"threshold": 5, "edgeitems": 0},
    {"edgeitems": 0},
    {"threshold": math.inf},
    {"linewidth": 20},
    {"linewidth": 200},
    {"linewidth": 3},
    {"sci_mode": True},
    {"sci_mode": False},
    {"profile": "short"},
    {"profile": "full"},
    {"profile": "short", "precision": 6},
    {"sci_mode": True, "precision": 1, "linewidth": 40},
]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_set_printoptions_matches_torch(options, restore_printoptions):
    torch.set_printoptions(**options)
    pyc10.set_printoptions(**options)
    assert get_printoptions() == torch._tensor_str.get_printoptions()
    rng = random.Random(str(options))
    for i in range(40):
        name = rng.choice(ALL)
        shape = rng.choice([(), (7,), (3, 4), (8, 2), (2, 3, 9), (0, 2), (12,), (5, 5, 5)])
        if name == "float4_e2m1fn_x2" and shape == ():
            continue  # torch cannot print it
        t = random_tensor(rng, name, shape)
        check_same(t, to_pyc10(t), (options, name, shape, i))


def test_printoptions_context_restores_the_options():
    before = get_printoptions()
    t = torch.tensor([1.123456, 2.0])
    with printoptions(precision=2), torch._tensor_str.printoptions(precision=2):
        assert repr(to_pyc10(t)) == repr(t)
    assert get_printoptions() == before
    assert repr(to_pyc10(t)) == repr(t)


def test_set_printoptions_takes_torchs_arguments(restore_printoptions):
    # torch checks nothing; a later call without sci_mode sets it back to None
    torch.set_printoptions(4, 1000, 3, 80, None, True)
    pyc10.set_printoptions(4, 1000, 3, 80, None, True)
    assert get_printoptions() == torch._tensor_str.get_printoptions()
    torch.set_printoptions(profile="unknown", precision=3)
    pyc10.set_printoptions(profile="unknown", precision=3)
    assert get_printoptions() == torch._tensor_str.get_printoptions()
    with pytest.raises(TypeError):
        pyc10.set_printoptions(color=True)


FORMAT_CASES = [
    ("float32", 2.5, ["", ".3f", "e", "10.2f", "<8", "+.1%", "g"]),
    ("float64", -1.0 / 3.0, ["", ".3f", "e", ".12g", "^20"]),
    ("float16", 0.1, ["", ".5f"]),
    ("bfloat16", 0.1, ["", ".10f"]),
    ("float8_e4m3fn", 0.3, [""]),
    ("int64", 42, ["", "05d", "x", "+d", ",", ".2f"]),
    ("uint8", 200, ["", "b"]),
    ("bool", True, ["", "d", "^7"]),
    ("complex64", 1 + 2j, ["", ".2f"]),
    ("complex128", -0.5j, [""]),
    ("complex32", 1.5 - 0.25j, [""]),
]


@pytest.mark.parametrize(("name", "value", "specs"), FORMAT_CASES)
def test_format_of_a_0_dim_tensor_formats_its_item(name, value, specs):
    t = torch.tensor(value).to(getattr(torch, name))
    p = to_pyc10(t)
    assert p.dim() == 0
    for spec in specs:
        assert format(p, spec) == format(t, spec), spec
        assert f"{p}" == f"{t}"


def test_format_of_a_0_dim_tensor_refuses_what_its_item_refuses():
    t, p = torch.tensor(3), pyc10.full((), 3)
    for spec in ["q", ".2s"]:
        with pytest.raises(ValueError) as theirs:
            format(t, spec)
        with pytest.raises(ValueError) as ours:
            format(p, spec)
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("shape", [(2,), (1,), (0,), (2, 3), (1, 1)])
def test_format_of_other_tensors_is_str_or_refused_as_torch(shape):
    t = torch.arange(math.prod(shape), dtype=torch.float32).reshape(shape)
    p = to_pyc10(t)
    assert format(p, "") == format(t, "") == str(t)
    assert f"{p}" == f"{t}"
    with pytest.raises(TypeError) as theirs:
        format(t, ".2f")
    with pytest.raises(TypeError) as ours:
        format(p, ".2f")
    assert str(ours.value) == str(theirs.value)


def meta_tensor(shape, stride, d, keep):
    """A pyc10 tensor on the meta device (a storage over host memory no one reads)."""
    from pyc10._errors import check
    from pyc10._lib import ffi, lib
    from pyc10._tensor import Tensor

    buf = ffi.new("char[]", 4096)
    keep.append(buf)
    storage = ffi.new("c10c_storage **")
    meta = ffi.new("c10c_device *", {"type": lib.C10C_DEVICE_TYPE_META, "index": -1})
    check(lib.c10c_storage_new_external(storage, buf, 4096, meta[0], ffi.NULL, ffi.NULL))
    out = ffi.new("c10c_tensor **")
    st = lib.c10c_tensor_new_from_storage(
        out, storage[0], list(shape), list(stride), len(shape), 0, d.value
    )
    lib.c10c_storage_release(storage[0])
    check(st)
    return Tensor._wrap(out[0])


@pytest.mark.parametrize("name", ["float32", "int64", "float64", "complex64", "bool"])
@pytest.mark.parametrize(("shape", "stride"), [((2, 3), (3, 1)), ((), ()), ((0,), (1,))])
def test_repr_of_meta_tensors_matches_torch(name, shape, stride):
    keep: list[object] = []
    p = meta_tensor(shape, stride, getattr(pyc10, name), keep)
    t = torch.empty(shape, dtype=getattr(torch, name), device="meta")
    assert p.device.type == "meta"
    check_same(t, p, (name, shape))


@pytest.mark.parametrize("linewidth", [20, 26, 30, 33, 40])
def test_suffixes_wrap_as_torchs(linewidth, restore_printoptions):
    # a meta tensor has three suffixes: where one goes on its own line moves the next
    torch.set_printoptions(linewidth=linewidth)
    pyc10.set_printoptions(linewidth=linewidth)
    keep: list[object] = []
    for name, shape in [("int64", (2, 3)), ("float64", (2, 3, 4, 5)), ("int8", (7,))]:
        stride = tuple(math.prod(shape[i + 1 :]) for i in range(len(shape)))
        p = meta_tensor(shape, stride, getattr(pyc10, name), keep)
        check_same(torch.empty(shape, dtype=getattr(torch, name), device="meta"), p, name)


def test_repr_where_torch_has_no_text_is_the_metadata_repr():
    # torch prints a quantizer pyc10 does not have, and cannot read bits or sub-byte elements
    for name in ["quint8", "qint8", "qint32", "bits8", "bits16", "uint4", "int2"]:
        p = pyc10.zeros(2, 3, dtype=getattr(pyc10, name))
        assert repr(p) == (
            f"pyc10.Tensor(shape=[2, 3], stride=[3, 1], dtype=pyc10.{name}, device='cpu')"
        )
    with pytest.raises(NotImplementedError):
        repr(torch.zeros(2, 3, dtype=torch.uint4))


def test_float4_0_dim_prints_its_byte_where_torch_raises():
    t = torch.tensor([0x12], dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
    with pytest.raises(NotImplementedError):
        repr(t[0])
    assert repr(to_pyc10(t)[0]) == "tensor(18., dtype=pyc10.float4_e2m1fn_x2)"
    assert repr(to_pyc10(t)) == expected(repr(t))


def test_device_suffix_comes_first_and_wraps_as_torchs(tmp_path):
    """CUDA tensors through the stand-in driver (tests/cuda_stub), in a fresh interpreter.

    torch here has no CUDA: the expected text is torch's own pieces, its CPU body and its
    _add_suffixes, with the suffixes its _str_intern gives a CUDA tensor (device first).
    """
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        pytest.skip("no C compiler to build the stand-in driver")
    stub = tmp_path / "libcuda_stub.so"
    source = Path(__file__).resolve().parents[1] / "cuda_stub/cuda_stub.c"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-pthread", "-o", stub, source], check=True)
    cases = [
        ("np.arange(6, dtype=np.float32).reshape(2, 3)", "cuda:0"),
        ("np.arange(6, dtype=np.float64)", "cuda:1"),
        ("np.linspace(0, 1e9, 30)", "cuda:1"),
        ("np.arange(3, dtype=np.int64)", "cuda:0"),
        ("np.zeros((2, 0), dtype=np.int32)", "cuda:0"),
        ("np.array(2.5, dtype=np.float32)", "cuda:1"),
    ]
    script = "import numpy as np, pyc10\n" + "".join(
        f"g = pyc10.from_numpy({a}).to('{dev}')\n"
        "print(repr(g).replace(chr(10), '|'))\n"
        "print(f'{g}'.replace(chr(10), '|'))\n"
        for a, dev in cases
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "C10C_CUDA_DRIVER": str(stub)},
        cwd="/",
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    ts = torch._tensor_str
    for i, (a, dev) in enumerate(cases):
        t = torch.from_numpy(eval(a))  # the literals above
        suffixes = [f"device='{dev}'"]
        if t.numel() == 0:
            suffixes += [f"size={tuple(t.shape)}", f"dtype={t.dtype}"]
        elif t.dtype not in (torch.float32, torch.int64):
            suffixes.append(f"dtype={t.dtype}")
        theirs = ts._add_suffixes("tensor(" + ts._tensor_str(t, 7), suffixes, 7, False)
        assert out[2 * i] == expected(theirs).replace("\n", "|"), a
        assert out[2 * i + 1] == (f"{t}" if t.dim() == 0 else out[2 * i]), a
