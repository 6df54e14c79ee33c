"""Layouts and memory formats: ``pyc10.strided``, ``pyc10.channels_last`` ..., as torch's."""

from __future__ import annotations

from typing import Any, final

from ._constant import Constant
from ._lib import ffi, lib

__all__ = ["LAYOUTS", "MEMORY_FORMATS", "layout", "memory_format"]


class _Named(Constant):
    __slots__ = ("_c10_name", "_value")

    _value: int
    _c10_name: str

    @classmethod
    def _make(cls, value: int, name: str, c10_name: str) -> Any:
        self = object.__new__(cls)
        self._value = value
        self._name = name
        self._c10_name = c10_name
        return self

    @property
    def value(self) -> int:
        """c10's enum value (the C library's number for it)."""
        return self._value


@final
class layout(_Named):
    """A tensor layout, as ``torch.layout`` (``pyc10.strided``, ``pyc10.sparse_coo`` ...)."""

    __module__ = "pyc10"
    __slots__ = ()


@final
class memory_format(_Named):
    """A memory format, as ``torch.memory_format`` (``pyc10.contiguous_format`` ...)."""

    __module__ = "pyc10"
    __slots__ = ()


def _names(fn: Any, value: int) -> str:
    return str(ffi.string(fn(value)).decode())


#: Every layout by its Python name, and every memory format by its Python name.
LAYOUTS: dict[str, layout] = {}
MEMORY_FORMATS: dict[str, memory_format] = {}
for _v in range(lib.C10C_LAYOUT_COUNT):
    _l = layout._make(_v, _names(lib.c10c_layout_python_name, _v), _names(lib.c10c_layout_name, _v))
    LAYOUTS[_l._name] = _l
for _v in range(lib.C10C_MEMORY_FORMAT_COUNT):
    _m = memory_format._make(
        _v,
        _names(lib.c10c_memory_format_python_name, _v),
        _names(lib.c10c_memory_format_name, _v),
    )
    MEMORY_FORMATS[_m._name] = _m
del _v, _l, _m
