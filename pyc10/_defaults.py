"""The default floating dtype (``get_default_dtype`` / ``set_default_dtype``), in one place.

Process-wide, as torch's: factories without a ``dtype`` (``empty``, ``zeros``, ``ones``,
``empty_strided``), ``full`` of a Python float or complex, and the ``dtype=`` suffix of
``repr(tensor)`` read it here. Code that keeps its own copy (the C extension's fast paths)
registers with :func:`add_listener` and is told of every change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._device import (  # the default device's state lives with the device type, below
    device_context_enter,
    device_context_exit,
    get_default_device,
    set_default_device,
)
from ._dtype import DTYPE_NAMES, dtype
from ._errors import C10TypeError
from ._scalar import scalar_dtype as _inferred

__all__ = [
    "add_listener",
    "current",
    "default_complex",
    "device_context_enter",
    "device_context_exit",
    "get_default_device",
    "get_default_dtype",
    "scalar_dtype",
    "set_default_device",
    "set_default_dtype",
]

_FLOAT32 = DTYPE_NAMES["float32"]
_FLOAT64 = DTYPE_NAMES["float64"]
_COMPLEX64 = DTYPE_NAMES["complex64"]
_COMPLEX128 = DTYPE_NAMES["complex128"]

# torch keeps a storage class per default dtype (torch.FloatStorage, ...); a floating dtype
# without one is refused with "couldn't find storage object <c10 name>Storage".
_WITH_STORAGE = frozenset(DTYPE_NAMES[n] for n in ("float16", "bfloat16", "float32", "float64"))

_default: dtype = _FLOAT32
_listeners: list[Callable[[dtype], object]] = []


def current() -> dtype:
    """The default floating dtype, without argument checks (for pyc10's own callers)."""
    return _default


def default_complex() -> dtype:
    """The complex dtype that goes with the default: complex128 for float64, else complex64.

    torch's rule in ``full`` of a complex value and in repr's dtype suffix (not ``tensor()``'s,
    which makes float16 go with complex32).
    """
    return _COMPLEX128 if _default is _FLOAT64 else _COMPLEX64


def scalar_dtype(value: Any) -> dtype:
    """The dtype ``full`` infers from a Python scalar: bool, int64, the default, its complex."""
    d = _inferred(value)  # float32 and complex64 for floats and complex numbers
    if d is _FLOAT32:
        return _default
    if d is _COMPLEX64:
        return default_complex()
    return d


def get_default_dtype(*args: object, **kwargs: object) -> dtype:
    """The default floating point dtype (``pyc10.float32`` until changed), as torch's."""
    if kwargs:
        raise C10TypeError("pyc10.get_default_dtype() takes no keyword arguments")
    if args:
        raise C10TypeError(f"pyc10.get_default_dtype() takes no arguments ({len(args)} given)")
    return _default


def set_default_dtype(d: dtype, /) -> None:
    """Make ``d`` the default floating point dtype, as ``torch.set_default_dtype``.

    Only float16, bfloat16, float32 and float64 are accepted (torch's TypeErrors otherwise).
    The default complex dtype follows: complex128 with float64, complex64 with the others.
    """
    global _default  # noqa: PLW0603  (process-wide state, as torch's)
    if type(d) is not dtype:
        raise C10TypeError(
            "invalid dtype object: only floating-point types are supported as the default type"
        )
    if not d.is_floating_point:
        raise C10TypeError("only floating-point types are supported as the default type")
    if d not in _WITH_STORAGE:
        from ._lib import ffi, lib

        c10_name = ffi.string(lib.c10c_dtype_c10_name(d.value)).decode()
        raise C10TypeError(f"couldn't find storage object {c10_name}Storage")
    _default = d
    for listener in _listeners:
        listener(d)


def add_listener(listener: Callable[[dtype], object]) -> None:
    """Call ``listener(d)`` now and after every change of the default dtype.

    For code that keeps its own copy of the default, such as the C extension's factory fast
    paths, so that reading it costs nothing per call.
    """
    _listeners.append(listener)
    listener(_default)
