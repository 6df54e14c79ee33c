"""Python scalars as one element of a dtype, with ATen's overflow checks (``fill_``, ``full``)."""

from __future__ import annotations

import math
import operator
from typing import Any

from ._dtype import DTYPE_NAMES, WIDENED, dtype
from ._errors import C10NotImplementedError, C10RuntimeError, C10TypeError

__all__ = ["scalar_bytes", "scalar_dtype"]

# The C++ type names ATen's "value cannot be converted to type ... without overflow" uses.
_CPP_NAMES = {
    "uint8": "uint8_t",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int",
    "int64": "int64_t",
    "uint16": "uint16_t",
    "uint32": "uint32_t",
    "uint64": "uint64_t",
    "float16": "c10::Half",
    "float32": "float",
    "float64": "double",
    "bfloat16": "c10::BFloat16",
    "float8_e4m3fn": "c10::Float8_e4m3fn",
    "float8_e5m2": "c10::Float8_e5m2",
    "float8_e4m3fnuz": "c10::Float8_e4m3fnuz",
    "float8_e5m2fnuz": "c10::Float8_e5m2fnuz",
    "float8_e8m0fnu": "c10::Float8_e8m0fnu",
    "complex32": "c10::complex<c10::Half>",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def scalar_dtype(value: Any) -> dtype:
    """The dtype torch.full infers from a Python scalar (bool, int64, float32, complex64)."""
    v = _as_number(value)
    for kind, name in ((bool, "bool"), (int, "int64"), (float, "float32")):
        if isinstance(v, kind):
            return DTYPE_NAMES[name]
    return DTYPE_NAMES["complex64"]


# Largest finite values: a finite scalar beyond them is an overflow error (ATen's fill_ of more
# than one element; torch skips the check for reduced floats when the tensor has one element).
_FLOAT_MAX = {
    "float16": 65504.0,
    "bfloat16": 3.3895313892515355e38,
    "float32": 3.4028234663852886e38,
    "float8_e4m3fn": 448.0,
    "float8_e5m2": 57344.0,
    "float8_e4m3fnuz": 240.0,
    "float8_e5m2fnuz": 57344.0,
    "float8_e8m0fnu": 2.0**127,
}

#: Formats without negative values: the smallest value is their lowest (c10's numeric_limits).
_FLOAT_LOWEST = {"float8_e8m0fnu": 2.0**-127}


def _converted_bytes(value: float | complex, d: dtype) -> bytes:
    """One element of d holding value, through libc10c's conversion from float64.

    As c10 converts a Scalar: double (complex128) -> float -> the reduced type.
    """
    import ctypes

    import numpy as np

    from ._ctensor import from_numpy  # pyc10._tensor's, below it

    wide = np.array([value], dtype=np.complex128 if isinstance(value, complex) else np.float64)
    out = from_numpy(wide).to(d)
    return ctypes.string_at(out.data_ptr(), d.itemsize)


def _as_number(value: Any) -> int | float | complex:
    if isinstance(value, (bool, int, float, complex)):
        return value
    try:
        return operator.index(value)
    except TypeError:
        pass
    for conv in (float, complex):
        try:
            return conv(value)
        except (TypeError, ValueError):
            pass
    raise C10TypeError(f"expected a number, got {type(value).__name__}")


def _overflow_name(name: str) -> C10RuntimeError:
    return C10RuntimeError(
        f"value cannot be converted to type {_CPP_NAMES.get(name, name)} without overflow"
    )


def scalar_bytes(value: Any, d: dtype) -> bytes:
    """One element of ``d`` holding ``value`` in its native representation.

    Follows c10's checked_convert: integers must fit (unsigned types also accept negatives that
    wrap, as C++), floats truncate toward zero into integer types, floating and complex types
    refuse finite values beyond their largest (inf and nan pass), a complex value with an
    imaginary part only fits complex types, and bool takes any value's truth.
    """
    import numpy as np

    v = _as_number(value)
    name = d._name
    if isinstance(v, int) and not -(2**63) <= v < 2**64:
        raise OverflowError("int too big to convert")
    if name == "bool":
        return b"\x01" if v else b"\x00"
    if d.is_complex:
        c = complex(v)
        if name == "complex32":  # no overflow check, as torch (values become inf)
            return _converted_bytes(c, d)
        limit = _FLOAT_MAX["float32"] if name == "complex64" else math.inf
        for part in (c.real, c.imag):
            if math.isfinite(part) and abs(part) > limit:
                raise _overflow_name(name)
        return np.array(c, dtype=d.to_numpy()).tobytes()
    if isinstance(v, complex):
        if v.imag != 0:
            raise _overflow_name(name)
        v = v.real
    if d.is_floating_point:
        return _float_bytes(float(v), d)
    return _int_bytes(v, d)


def _numpy_dtype(d: dtype) -> Any:
    try:
        return d.to_numpy()
    except TypeError:
        raise C10NotImplementedError(f"fill of {d} tensors is not implemented yet") from None


def _float_bytes(f: float, d: dtype) -> bytes:
    import numpy as np

    name = d._name
    if math.isfinite(f) and (
        abs(f) > _FLOAT_MAX.get(name, math.inf) or f < _FLOAT_LOWEST.get(name, -math.inf)
    ):
        raise _overflow_name(name)
    if name in WIDENED:
        return _converted_bytes(f, d)
    npd = _numpy_dtype(d)
    with np.errstate(over="ignore"):
        return np.array(f, dtype=npd).tobytes()


def _int_bytes(v: float, d: dtype) -> bytes:
    import numpy as np

    name = d._name
    npd = _numpy_dtype(d)
    info = np.iinfo(npd)
    if isinstance(v, float):
        if not (math.isfinite(v) and info.min <= v <= info.max):
            raise _overflow_name(name)
        v = int(v)  # C++ truncation toward zero
    elif info.min == 0:  # unsigned: negatives wrap as in C++ unless their magnitude is too big
        if v > info.max or (v < 0 and -v > info.max):
            raise _overflow_name(name)
        v %= int(info.max) + 1
    elif not info.min <= v <= info.max:
        raise _overflow_name(name)
    return np.array(v, dtype=npd).tobytes()
