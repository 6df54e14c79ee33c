"""Dtypes: one ``pyc10.dtype`` object per c10 ScalarType, built from the library at import."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, final

from ._constant import Constant
from ._errors import C10TypeError, check, no_arguments
from ._lib import ffi, lib

if TYPE_CHECKING:
    import numpy as np

__all__ = ["dtype"]

# cffi releases the GIL around every C call, so out-parameters are allocated per call (a shared
# buffer could be overwritten by another thread between the call and the read).
_DTYPE_PTR = ffi.typeof("c10c_dtype *")
_BOOL_PTR = ffi.typeof("bool *")


@final
class dtype(Constant):
    """A tensor element type, as ``torch.dtype`` (``pyc10.float32``, ``pyc10.int64`` ...).

    There is exactly one object per type, so ``is`` and ``==`` agree. ``value`` is c10's
    ScalarType number, which equals the C library's ``c10c_dtype``.
    """

    __module__ = "pyc10"
    # Read-only attributes kept in slots (read at C speed); __setattr__ refuses changes.
    __slots__ = ("_name", "is_complex", "is_floating_point", "itemsize", "value")

    #: c10's ScalarType number (``c10c_dtype`` in C).
    value: int
    #: Bytes per element (1 for the sub-byte types, as torch).
    itemsize: int
    #: Whether this is a floating point type (float16/32/64, bfloat16, float8, float4).
    is_floating_point: bool
    #: Whether this is a complex type.
    is_complex: bool

    def __new__(cls, *args: Any, **kwargs: Any) -> dtype:
        raise TypeError("cannot create 'pyc10.dtype' instances; use pyc10.float32 and friends")

    @classmethod
    def _make(cls, value: int) -> dtype:
        self = object.__new__(cls)
        setattr_ = object.__setattr__
        setattr_(self, "value", value)
        setattr_(self, "_name", ffi.string(lib.c10c_dtype_name(value)).decode())
        setattr_(self, "itemsize", int(lib.c10c_dtype_itemsize(value)))
        setattr_(self, "is_floating_point", bool(lib.c10c_dtype_is_floating_point(value)))
        setattr_(self, "is_complex", bool(lib.c10c_dtype_is_complex(value)))
        return self

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"attribute '{name}' of 'pyc10.dtype' objects is not writable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"attribute '{name}' of 'pyc10.dtype' objects is not writable")

    @property
    def is_signed(self) -> bool:
        """Whether the type is signed; raises ``RuntimeError`` for quantized and bits types."""
        out = ffi.new(_BOOL_PTR)
        check(lib.c10c_dtype_is_signed(out, self.value))
        return bool(out[0])

    def to_real(self, *args: Any, **kwargs: Any) -> dtype:
        """The real counterpart of a complex type (complex64 -> float32); others unchanged."""
        if args or kwargs:  # torch's is a C method: its words
            no_arguments("dtype.to_real", args, kwargs)
        out = ffi.new(_DTYPE_PTR)
        check(lib.c10c_dtype_to_real(out, self.value))
        return _BY_VALUE[out[0]]

    def to_complex(self, *args: Any, **kwargs: Any) -> dtype:
        """The complex counterpart (float32 -> complex64); ``RuntimeError`` when none exists."""
        if args or kwargs:
            no_arguments("dtype.to_complex", args, kwargs)
        out = ffi.new(_DTYPE_PTR)
        check(lib.c10c_dtype_to_complex(out, self.value))
        return _BY_VALUE[out[0]]

    def to_numpy(self) -> np.dtype[Any]:
        """The numpy dtype with the same element type; ``TypeError`` when numpy has none."""
        import numpy as np

        try:
            return np.dtype(_TO_NUMPY[self._name])
        except KeyError:
            raise C10TypeError(f"{self!r} has no numpy equivalent") from None

    @staticmethod
    def from_numpy(np_dtype: Any) -> dtype:
        """The pyc10 dtype of a numpy dtype (or anything ``numpy.dtype()`` accepts)."""
        import numpy as np

        d = np.dtype(np_dtype)
        if d.byteorder not in ("=", "|") and d.itemsize > 1 and d != d.newbyteorder("="):
            raise C10TypeError(
                f"numpy dtype {d} has a non-native byte order, which pyc10 does not support"
            )
        name = _FROM_NUMPY.get(np.dtype(d.newbyteorder("=")).str[1:])
        if name is None:
            raise C10TypeError(f"numpy dtype {d} has no pyc10 equivalent")
        return _BY_NAME[name]


# numpy's array-protocol type strings without byte-order character.
_TO_NUMPY = {
    "bool": "?",
    "uint8": "u1",
    "int8": "i1",
    "int16": "i2",
    "int32": "i4",
    "int64": "i8",
    "uint16": "u2",
    "uint32": "u4",
    "uint64": "u8",
    "float16": "f2",
    "float32": "f4",
    "float64": "f8",
    "complex64": "c8",
    "complex128": "c16",
}
_FROM_NUMPY = {"b1": "bool", **{v: k for k, v in _TO_NUMPY.items() if k != "bool"}}

_BY_VALUE: dict[int, dtype] = {}
_BY_NAME: dict[str, dtype] = {}
#: Public module-level names: every torch name and legacy alias ("float32", "float", ...).
DTYPE_NAMES: dict[str, dtype] = {}

for _v in range(lib.C10C_DTYPE_UNDEFINED):
    _d = dtype._make(_v)
    _BY_VALUE[_v] = _d
    _BY_NAME[_d._name] = _d
    DTYPE_NAMES[_d._name] = _d
    _legacy = ffi.string(lib.c10c_dtype_legacy_name(_v)).decode()
    if _legacy:
        DTYPE_NAMES[_legacy] = _d
del _v, _d, _legacy


#: Dtypes numpy lacks, and the dtype their values are read and written through exactly (tolist,
#: item, repr, fill_): the reduced floats through float32, complex32 through complex64.
WIDENED = {
    "bfloat16": "float32",
    "float8_e4m3fn": "float32",
    "float8_e5m2": "float32",
    "float8_e4m3fnuz": "float32",
    "float8_e5m2fnuz": "float32",
    "float8_e8m0fnu": "float32",
    "complex32": "complex64",
}
