"""``pyc10.finfo`` and ``pyc10.iinfo``: the numeric limits of a dtype, as torch's.

The floating values are c10's ``std::numeric_limits`` specialisations (which torch.finfo
reads), written out once below as exact binary fractions; integer limits follow from the
library's itemsize and signedness of each dtype. Arguments are read by torch's parser rules
for the signatures ``finfo(ScalarType type)``, ``finfo()`` and ``iinfo(ScalarType type)``.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any, ClassVar, final

from . import _ctensor, _defaults
from ._dtype import DTYPE_NAMES, dtype
from ._errors import C10NotImplementedError, C10TypeError, argument_type_error, torch_type_name

__all__ = ["finfo", "iinfo"]

# name: (eps, max, lowest, smallest normal, digits10), from c10's numeric_limits<T>.
# resolution is 10 ** -digits10, as torch computes it. c10's epsilon for float8_e5m2fnuz is
# 2**-3 (not 2**-2 as its two mantissa bits would give): torch reports that value, and so do we.
_BF16_MAX = (2 - 2.0**-7) * 2.0**127
_F32_MAX = (2 - 2.0**-23) * 2.0**127
_F64_MAX = (2 - 2.0**-52) * 2.0**1023
_FLOATING: dict[str, tuple[float, float, float, float, int]] = {
    "float16": (2.0**-10, 65504.0, -65504.0, 2.0**-14, 3),
    "bfloat16": (2.0**-7, _BF16_MAX, -_BF16_MAX, 2.0**-126, 2),
    "float32": (2.0**-23, _F32_MAX, -_F32_MAX, 2.0**-126, 6),
    "float64": (2.0**-52, _F64_MAX, -_F64_MAX, 2.0**-1022, 15),
    "float8_e4m3fn": (2.0**-3, 448.0, -448.0, 2.0**-6, 0),
    "float8_e5m2": (2.0**-2, 57344.0, -57344.0, 2.0**-14, 0),
    "float8_e4m3fnuz": (2.0**-3, 240.0, -240.0, 2.0**-7, 0),
    "float8_e5m2fnuz": (2.0**-3, 57344.0, -57344.0, 2.0**-15, 0),
    "float8_e8m0fnu": (1.0, 2.0**127, 2.0**-127, 2.0**-127, 0),
}

# c10's isIntegralType(t, includeBool=false): the types iinfo describes.
_INTEGRAL = ("uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64")
_QUANTIZED = ("qint8", "quint8", "qint32", "quint4x2", "quint2x4")

# The Python types torch's parser takes for a ScalarType argument (float means float64 ...).
_PYTHON_TYPES = {
    builtins.float: DTYPE_NAMES["float64"],
    builtins.int: DTYPE_NAMES["int64"],
    builtins.bool: DTYPE_NAMES["bool"],
    builtins.complex: DTYPE_NAMES["complex128"],
}


def _c10_name(d: dtype) -> str:
    """c10's name of a dtype ("QUInt8"), as torch's messages give it."""
    from ._lib import ffi, lib

    return str(ffi.string(lib.c10c_dtype_c10_name(d.value)).decode())


_type_name = torch_type_name  # the name torch's parser gives an argument's type


def _invalid_combination(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """Torch's text for a call no signature of finfo takes (keywords sorted, as torch's)."""
    got = ", ".join(_type_name(a) for a in args)
    named = [f"{k}={_type_name(v)}" for k, v in sorted(kwargs.items())]
    if args and named:
        got += ", " + ", ".join(named)
    elif named:
        got = "".join(n + ", " for n in named)
    return (
        f"{name}() received an invalid combination of arguments - got ({got}), but "
        f"expected one of:\n * (pyc10.dtype type)\n * ()\n"
    )


def _parse(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], optional: bool) -> dtype:
    """The ``type`` argument of ``finfo``/``iinfo``, or torch's TypeError for the call.

    ``optional``: finfo's second signature ``finfo()``, which gives the default dtype.
    """
    given = len(args) + len(kwargs)
    if given == 0 and optional:
        return _defaults.current()
    if given > 1 and optional:  # neither finfo(type) nor finfo() can take it: both listed
        raise C10TypeError(_invalid_combination(name, args, kwargs))
    if len(args) > 1:
        raise C10TypeError(f"{name}() takes 1 positional argument but {len(args)} were given")
    if args:
        value, position = args[0], 1
    elif "type" in kwargs:
        value, position = kwargs["type"], None
    else:
        raise C10TypeError(f'{name}() missing 1 required positional arguments: "type"')
    if type(value) is dtype:
        d = value
    elif type(value) is type and value in _PYTHON_TYPES:
        d = _PYTHON_TYPES[value]
    else:
        raise argument_type_error(name, "type", position, "pyc10.dtype", value)
    for key in kwargs:  # what is left once 'type' is read
        if key != "type":
            raise C10TypeError(f"{name}() got an unexpected keyword argument '{key}'")
        if args:
            raise C10TypeError(f"{name}() got multiple values for argument 'type'")
    return d


_MISSING: Any = object()  # no argument given (finfo() is the default dtype; None is refused)


class _TypeInfoMeta(type):
    """Calls finfo(dtype)/iinfo(dtype) answer the object made at import, before type.__call__.

    The call's fast path runs in the metaclass's ``__call__`` (one frame, no ``__new__`` and
    ``__init__`` lookups; the dict is a module global, not a class attribute): finfo(float32)
    costs one dict lookup past the call itself. Anything else goes through ``__new__``.
    """


class _FInfoMeta(_TypeInfoMeta):
    def __call__(cls, type_: Any = _MISSING, /, *args: Any, **kwargs: Any) -> Any:
        if not args and not kwargs:
            try:  # every dtype finfo accepts is a key; anything else misses (or is unhashable)
                return _FINFO[type_]
            except (KeyError, TypeError):
                pass
        return super().__call__(*((type_, *args) if type_ is not _MISSING else args), **kwargs)


class _IInfoMeta(_TypeInfoMeta):
    def __call__(cls, type_: Any = _MISSING, /, *args: Any, **kwargs: Any) -> Any:
        if not args and not kwargs:
            try:  # as finfo's
                return _IINFO[type_]
            except (KeyError, TypeError):
                pass
        return super().__call__(*((type_, *args) if type_ is not _MISSING else args), **kwargs)


class _TypeInfo(metaclass=_TypeInfoMeta):
    """What finfo and iinfo share: read-only attributes, equality by dtype, torch's repr.

    The attributes are slots, set to what torch can answer; one it cannot (float4_e2m1fn_x2's
    limits, a quantized dtype's name) stays empty and raises torch's NotImplementedError when
    read, which names the ``numeric_limits`` member c10 lacks. One object per dtype is made
    at import and handed out by every call (they are read-only).
    """

    __slots__ = ("_type",)
    _type: dtype
    _fields: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def _make(cls, d: dtype, values: dict[str, object]) -> Any:
        self = object.__new__(cls)
        object.__setattr__(self, "_type", d)
        for name, value in values.items():
            object.__setattr__(self, name, value)
        return self

    if not TYPE_CHECKING:  # (type checkers keep reporting unknown attributes)

        def __getattr__(self, name: str) -> Any:
            # only reached for what is not set: a declared attribute torch cannot answer
            if name in type(self).__slots__:
                raise C10NotImplementedError(
                    f"\"{_C10_MEMBERS[name]}\" not implemented for '{_c10_name(self._type)}'"
                )
            cls = f"pyc10.{type(self).__name__}"
            raise AttributeError(f"'{cls}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: object) -> None:
        cls = f"pyc10.{type(self).__name__}"
        if name in type(self).__slots__:
            raise AttributeError(f"attribute '{name}' of '{cls}' objects is not writable")
        raise AttributeError(f"'{cls}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        self.__setattr__(name, None)

    def __eq__(self, other: object) -> builtins.bool:
        if not isinstance(other, _TypeInfo):
            return NotImplemented
        return self._type is other._type

    def __ne__(self, other: object) -> builtins.bool:
        if not isinstance(other, _TypeInfo):
            return NotImplemented
        return self._type is not other._type

    # unhashable, as torch's
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        # torch writes each value through a C++ stream: %g of the value as a double; a value
        # it cannot read fails there as a TypeError
        try:
            fields = ", ".join(f"{f}={builtins.float(getattr(self, f)):g}" for f in self._fields)
        except NotImplementedError:
            raise C10TypeError("bad argument type for built-in operation") from None
        return f"{type(self).__name__}({fields}, dtype={getattr(self, 'dtype')})"  # noqa: B009

    __str__ = __repr__


# The numeric_limits member (or trait) torch reads for each attribute, named in its errors.
_C10_MEMBERS = {
    "dtype": "dtype",
    "eps": "epsilon",
    "max": "max",
    "min": "lowest",
    "tiny": "min",
    "smallest_normal": "min",
    "resolution": "digits10",
}


@final
class finfo(_TypeInfo, metaclass=_FInfoMeta):
    """The numeric limits of a floating dtype, as ``torch.finfo``.

    ``finfo(type)`` or ``finfo()`` (the default dtype, :func:`pyc10.get_default_dtype`). A
    complex dtype gives its real counterpart's limits. float4_e2m1fn_x2 is accepted but
    answers only ``bits``, as torch's.
    """

    __module__ = "pyc10"
    __slots__ = ("bits", "dtype", "eps", "max", "min", "resolution", "smallest_normal", "tiny")
    _fields = ("resolution", "min", "max", "eps", "smallest_normal", "tiny")

    #: Bits per element.
    bits: int
    #: Name of the (real) dtype described, as ``"float32"``.
    dtype: str
    #: Smallest ``x`` with ``1.0 + x != 1.0``.
    eps: float
    #: Largest finite value.
    max: float
    #: Lowest finite value (``-max`` for the signed formats).
    min: float
    #: Smallest positive normal value.
    tiny: float
    #: Smallest positive normal value (the same as ``tiny``).
    smallest_normal: float
    #: Approximate decimal resolution, ``10 ** -digits10``.
    resolution: float

    def __new__(cls, *args: Any, **kwargs: Any) -> finfo:
        if len(args) == 1 and not kwargs and type(args[0]) is dtype:
            known = _FINFO.get(args[0])  # the common calls, at once
            if known is not None:
                return known
        elif not args and not kwargs:
            return _FINFO[_defaults.current()]
        d = _parse("finfo", args, kwargs, optional=True)
        _finfo_of(d)  # raises torch's error (every dtype it accepts is in _FINFO)
        return _FINFO[d]


@final
class iinfo(_TypeInfo, metaclass=_IInfoMeta):
    """The numeric limits of an integer dtype, as ``torch.iinfo``.

    ``iinfo(type)``. bool, the floating, complex, bits and sub-byte dtypes are refused with
    torch's TypeError. The quantized dtypes are accepted with the limits of their underlying
    integer, and no ``dtype`` (NotImplementedError), as torch's.
    """

    __module__ = "pyc10"
    __slots__ = ("bits", "dtype", "max", "min")
    _fields = ("min", "max")

    #: Bits per element.
    bits: int
    #: Name of the dtype described, as ``"int32"``.
    dtype: str
    #: Largest value.
    max: int
    #: Smallest value.
    min: int

    def __new__(cls, *args: Any, **kwargs: Any) -> iinfo:
        if len(args) == 1 and not kwargs and type(args[0]) is dtype:
            known = _IINFO.get(args[0])
            if known is not None:
                return known
        d = _parse("iinfo", args, kwargs, optional=False)
        _iinfo_of(d)  # raises torch's error (every dtype it accepts is in _IINFO)
        return _IINFO[d]


def _finfo_of(d: dtype) -> tuple[dtype, dict[str, object]]:
    """What finfo(d) holds (its real dtype, the values torch can give), or torch's error."""
    if not (d.is_floating_point or d.is_complex):
        raise C10TypeError(
            "pyc10.finfo() requires a floating point input type. Use pyc10.iinfo to "
            "handle 'pyc10.finfo'"
        )
    real = d.to_real()
    values: dict[str, object] = {"bits": real.itemsize * 8}
    limits = _FLOATING.get(real._name)  # none for float4_e2m1fn_x2
    if limits is not None:
        eps, high, low, tiny, digits10 = limits
        values.update(
            dtype=real._name,
            eps=eps,
            max=high,
            min=low,
            tiny=tiny,
            smallest_normal=tiny,
            resolution=10.0**-digits10,
        )
    return real, values


def _iinfo_of(d: dtype) -> tuple[dtype, dict[str, object]]:
    """What iinfo(d) holds (d, the values torch can give), or torch's error."""
    if d._name == "bool":
        raise C10TypeError("pyc10.bool is not supported by pyc10.iinfo")
    quantized = d._name in _QUANTIZED
    if d._name not in _INTEGRAL and not quantized:
        raise C10TypeError(
            "pyc10.iinfo() requires an integer input type. Use pyc10.finfo to handle 'pyc10.iinfo'"
        )
    bits = d.itemsize * 8
    signed = d._name.startswith("qint") if quantized else d.is_signed
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    values: dict[str, object] = {"bits": bits, "min": low, "max": high}
    if not quantized:  # c10 has no name for a quantized type's underlying values
        values["dtype"] = d._name
    return d, values


# One object for every dtype finfo and iinfo accept (complex dtypes share their real one's).
_FINFO: dict[dtype, finfo] = {
    d: finfo._make(*_finfo_of(d)) for d in DTYPE_NAMES.values() if d.is_floating_point
}
_FINFO.update({d: _FINFO[d.to_real()] for d in DTYPE_NAMES.values() if d.is_complex})
_IINFO: dict[dtype, iinfo] = {
    d: iinfo._make(*_iinfo_of(d)) for d in DTYPE_NAMES.values() if d._name in _INTEGRAL + _QUANTIZED
}


def _made(cls: type) -> Any:
    """What a call of cls does past its metaclass's fast path: type.__call__ (__new__, __init__)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return type.__call__(cls, *args, **kwargs)

    return call


# The calls' fast path in C: finfo(float32) is one dict lookup with no Python frame (the
# metaclasses' __call__ above stay what type checkers read, and the documentation of the path).
_FInfoMeta.__call__ = _ctensor.memo(_FINFO, _made(finfo))  # type: ignore[method-assign]
_IInfoMeta.__call__ = _ctensor.memo(_IINFO, _made(iinfo))  # type: ignore[method-assign]
