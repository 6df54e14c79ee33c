"""Copies between dtypes against torch 2.13.0, bit for bit: every pair of the dtypes libc10c
converts, over values that probe rounding, subnormals, infinities, NaN and wrapping, plus every
Half / Float8 bit pattern and a million random float32 patterns to the reduced types."""

from __future__ import annotations

import ctypes
import platform

import numpy as np
import pytest
import torch

import pyc10

NAMES = [
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
    "bfloat16",
    "float8_e4m3fn",
    "float8_e5m2",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float32",
    "float64",
    "complex32",
    "complex64",
    "complex128",
]
# the floating types narrower than float32 (Half, BFloat16, Float8), torch's order
REDUCED = [
    n for n in NAMES if getattr(torch, n).is_floating_point and getattr(torch, n).itemsize < 4
]
FLOATS = [
    0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, 0.1, 1 / 3, 255.9, 256.0, 300.7, -300.7,
    65504.0, 65519.0, 65520.0, 70000.5, 1e-8, 6e-8, 3e-5, 1e-3, 2.0**-10, 448.0, 464.0, 480.0,
    57344.0, 61440.0, 1e10, 3e9, -3e9, 2.0**31, -(2.0**31), 2.0**53 + 2, 1e20, -1e20,
    float("inf"), -float("inf"), float("nan"), 3.4e38, 1e-40, -1e-45,
]  # fmt: skip
INTS = [
    0, 1, -1, 2, 127, -128, 128, 255, 256, -129, 32767, -32768, 65535, 65536, 2**24 + 1,
    2**31 - 1, -(2**31), 2**32 - 1, 2**32 + 7, 2**53 + 1, 2**62 + 123, 2**63 - 1, -(2**63),
]  # fmt: skip


def torch_values(dt: torch.dtype) -> torch.Tensor:
    """The probe values represented in dt (through torch's own conversions)."""
    if dt == torch.bool:
        return torch.tensor([True, False, True])
    if dt.is_floating_point or dt.is_complex:
        real = torch.tensor(FLOATS, dtype=torch.float64)
        if dt.is_complex:
            return torch.complex(real, torch.flip(real, [0])).to(dt)
        return real.to(dt)
    return torch.tensor(INTS, dtype=torch.int64).to(dt)  # wraps into the smaller types


def to_pyc10(t: torch.Tensor) -> pyc10.Tensor:
    """A pyc10 tensor holding t's bytes."""
    out = pyc10.empty(t.numel(), dtype=getattr(pyc10, str(t.dtype).split(".")[1]))
    raw = t.contiguous().view(torch.uint8).numpy().tobytes()
    ctypes.memmove(out.data_ptr(), raw, len(raw))
    return out


def bytes_of(t: pyc10.Tensor) -> bytes:
    return ctypes.string_at(t.data_ptr(), t.numel() * t.element_size())


def as_float64(raw: bytes, dt: torch.dtype) -> torch.Tensor:
    """Values of raw bytes of dt as float64 (complex: both parts), for the NaN comparison."""
    t = torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(dt)
    if dt.is_complex:
        t = torch.view_as_real(t.to(torch.complex128))
    return t.to(torch.float64)


# C++ leaves these undefined and torch's vector loops give other values than x86's scalar
# conversions (which libc10c follows): NaN, infinities and out-of-range floats to 32- and
# 64-bit unsigned integers.
UNDEFINED = {"uint32", "uint64"}
# Every float to integer conversion whose truncated value the integer type cannot hold (NaN, the
# infinities, -1 to an unsigned type, 1e20) is undefined in C and C++ alike, so torch answers what
# its CPU does: x86 gives the "indefinite" most negative value, aarch64's fcvtzs / fcvtzu (and
# other machines' instructions) saturate. libc10c gives x86-64 torch's answer on every target
# (lib/types/convert.c), so elsewhere those elements are left out; every in-range one is compared.
X86 = platform.machine() in {"x86_64", "AMD64", "i686", "i386"}


def in_range_of(real64: torch.Tensor, ddt: torch.dtype) -> torch.Tensor:
    """Where the float64 values truncate to a value of the integer type ddt."""
    bits = 8 * ddt.itemsize
    lo, hi = (-(2.0 ** (bits - 1)), 2.0 ** (bits - 1)) if ddt.is_signed else (0.0, 2.0**bits)
    t = torch.trunc(real64)
    return torch.isfinite(real64) & (t >= lo) & (t < hi)


def expected_and_ours(src: str, dst: str) -> tuple[bytes, bytes, torch.Tensor]:
    sdt, ddt = getattr(torch, src), getattr(torch, dst)
    values = torch_values(sdt)
    if dst in UNDEFINED and (sdt.is_floating_point or sdt.is_complex):
        real = values.real if sdt.is_complex else values
        real64 = real.to(torch.float64)
        keep = torch.isfinite(real64) & (real64 > -(2.0**31)) & (real64 < 2.0**32)
        values = values[keep]
    integer = not (ddt.is_floating_point or ddt.is_complex or ddt == torch.bool)
    if not X86 and integer and (sdt.is_floating_point or sdt.is_complex):
        real = values.real if sdt.is_complex else values
        values = values[in_range_of(real.to(torch.float64), ddt)]
    ours = to_pyc10(values).to(getattr(pyc10, dst))
    theirs = values.to(ddt)
    return theirs.contiguous().view(torch.uint8).numpy().tobytes(), bytes_of(ours), values


@pytest.mark.filterwarnings("ignore:Casting complex values")
@pytest.mark.parametrize("src", NAMES)
def test_every_conversion_matches_torch_bit_for_bit(src: str) -> None:
    for dst in NAMES:
        if dst == src:
            continue
        theirs, ours, values = expected_and_ours(src, dst)
        if theirs == ours:
            continue
        ddt = getattr(torch, dst)
        if not (ddt.is_floating_point or ddt.is_complex):
            pytest.fail(f"{src} -> {dst}: {values.tolist()} gave {ours!r}, torch {theirs!r}")
        a, b = as_float64(theirs, ddt).reshape(-1), as_float64(ours, ddt).reshape(-1)
        nan = torch.isnan(a)
        assert torch.equal(nan, torch.isnan(b)), f"{src} -> {dst}: NaNs differ"
        # NaN payloads may differ; everything else must be the same bits
        width = len(theirs) // a.numel()
        for i in range(a.numel()):
            if not nan[i]:
                same = theirs[i * width : (i + 1) * width] == ours[i * width : (i + 1) * width]
                assert same, f"{src} -> {dst} at {i}: {a[i].item()} vs {b[i].item()}"


@pytest.mark.parametrize("name", REDUCED)
def test_every_reduced_float_pattern_widens_as_torch(name: str) -> None:
    dt = getattr(torch, name)
    bits = torch.arange(2 ** (8 * dt.itemsize), dtype=torch.int32).to(
        torch.int16 if dt.itemsize == 2 else torch.uint8
    )
    values = bits.view(dt)
    ours = as_float64(bytes_of(to_pyc10(values).to(pyc10.float32)), torch.float32)
    theirs = values.to(torch.float32).to(torch.float64)
    assert torch.equal(torch.isnan(ours), torch.isnan(theirs))
    keep = ~torch.isnan(theirs)
    assert torch.equal(ours[keep], theirs[keep])


@pytest.mark.parametrize("name", REDUCED)
def test_random_float32_patterns_round_as_torch(name: str) -> None:
    rng = np.random.default_rng(7)
    patterns = rng.integers(0, 2**32, size=1_000_000, dtype=np.uint64).astype(np.uint32)
    values = torch.from_numpy(patterns.view(np.float32))
    dt = getattr(torch, name)
    theirs = values.to(dt).view(torch.uint8).numpy()
    ours = np.frombuffer(bytes_of(to_pyc10(values).to(getattr(pyc10, name))), dtype=np.uint8)
    nan = torch.isnan(values.to(dt).to(torch.float32)).numpy()
    per = dt.itemsize
    mismatch = (theirs.reshape(-1, per) != ours.reshape(-1, per)).any(axis=1) & ~nan
    assert not mismatch.any(), f"{mismatch.sum()} of 1e6 differ, first at {np.argmax(mismatch)}"


def test_to_follows_torchs_signatures() -> None:
    a = pyc10.from_numpy(np.array([1.5, -2.5], dtype=np.float32))
    assert a.to(pyc10.float32) is a and a.to("cpu") is a and a.to(a) is a
    assert a.to(pyc10.float32, copy=True) is not a
    assert a.to("cpu", pyc10.float64).dtype == pyc10.float64
    assert a.to(dtype=pyc10.int64).tolist() == [1, -2]
    assert a.to(pyc10.zeros(1, dtype=pyc10.int8)).dtype == pyc10.int8
    assert a.to(pyc10.int16, False, True).tolist() == [1, -2]
    t = torch.tensor([1.5, -2.5])
    for method in ("float", "double", "half", "bfloat16", "int", "long", "short", "char", "bool"):
        assert getattr(a, method)().tolist() == getattr(t, method)().tolist(), method
    assert a.byte().tolist() == torch.tensor([1.5, -2.5]).byte().tolist()  # 254, as c10
    assert a.cfloat().tolist() == t.cfloat().tolist()
    # torch binds a number to to(Tensor tensor): a 0-dim float64 tensor's dtype
    assert a.to(1.5).dtype == pyc10.float64 and torch.tensor([1.0]).to(1.5).dtype == torch.float64
    with pytest.raises(TypeError, match="invalid combination"):
        a.to(colour="red")
    with pytest.raises(NotImplementedError, match="conversions of QInt8 are not implemented"):
        a.to(pyc10.qint8)


@pytest.mark.parametrize("name", REDUCED)
def test_reduced_floats_print_and_list_as_torch(name: str) -> None:
    t = torch.tensor([1.5, -2.25, 200.7, 0.1]).to(getattr(torch, name))
    ours = to_pyc10(torch.tensor([1.5, -2.25, 200.7, 0.1])).to(getattr(pyc10, name))
    assert repr(ours).replace("pyc10.", "torch.") == repr(t)
    assert ours.tolist() == t.tolist()
    assert ours[2].item() == t[2].item()


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
@pytest.mark.parametrize("name", [*REDUCED[1:], "complex32"])
def test_fill_of_reduced_types_as_torch(name: str) -> None:
    for value in [1.5, 0.1, -460.0, 250.0, 1e10, -1.0, 0.0, 3 + 4j]:
        try:
            expected = torch.zeros(2, dtype=getattr(torch, name)).fill_(value).tolist()
        except RuntimeError as e:
            with pytest.raises(RuntimeError, match=__import__("re").escape(str(e))):
                pyc10.zeros(2, dtype=getattr(pyc10, name)).fill_(value)
            continue
        assert pyc10.zeros(2, dtype=getattr(pyc10, name)).fill_(value).tolist() == expected
