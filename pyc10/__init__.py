"""pyc10: PyTorch's c10 core (dtypes, devices, dispatch keys, ...) over the stable C ABI of libc10c.

The names follow torch: ``pyc10.float32``, ``pyc10.device("cuda:1")``, ``pyc10.promote_types``,
``pyc10.strided``, ``pyc10.channels_last``, ``pyc10.DispatchKeySet``. Every value (dtype
numbers, names, key numbering) comes from the C library at import time.
"""

from __future__ import annotations

import os as _os

from ._lib import ffi as _ffi
from ._lib import lib as _lib
from ._device import device
from ._dispatch import DispatchKey, DispatchKeySet
from ._dtype import DTYPE_NAMES as _DTYPE_NAMES
from ._dtype import can_cast, dtype, promote_types
from ._errors import (
    C10Error,
    C10IndexError,
    C10MemoryError,
    C10NotImplementedError,
    C10OverflowError,
    C10RuntimeError,
    C10TypeError,
    C10ValueError,
)
from ._layout import LAYOUTS as _LAYOUTS
from ._layout import MEMORY_FORMATS as _MEMORY_FORMATS
from ._layout import layout, memory_format

#: The release of the loaded libc10c ("0.1.0").
__version__: str = _ffi.string(_lib.c10c_version_string()).decode()
#: The ABI version of the loaded libc10c as (major, minor).
abi_version: tuple[int, int] = (_lib.c10c_abi_version() >> 16, _lib.c10c_abi_version() & 0xFFFF)

# pyc10.float32, pyc10.float, pyc10.int64, pyc10.long, ... and pyc10.strided,
# pyc10.channels_last, ...: one module attribute per name the library gives.
globals().update(_DTYPE_NAMES)
globals().update(_LAYOUTS)
globals().update(_MEMORY_FORMATS)


def get_library_path() -> str:
    """Path of the libc10c shared library pyc10 uses, for ctypes, Julia, Rust ... users."""
    here = _os.path.dirname(__file__)
    for name in sorted(_os.listdir(here)):
        if name.startswith("libc10c.so"):
            return _os.path.join(here, name)
    import ctypes.util

    found = ctypes.util.find_library("c10c")
    if found is None:
        raise FileNotFoundError("libc10c shared library not found next to pyc10")
    return found


__all__ = [
    "C10Error",
    "C10IndexError",
    "C10MemoryError",
    "C10NotImplementedError",
    "C10OverflowError",
    "C10RuntimeError",
    "C10TypeError",
    "C10ValueError",
    "DispatchKey",
    "DispatchKeySet",
    "abi_version",
    "can_cast",
    "device",
    "dtype",
    "get_library_path",
    "layout",
    "memory_format",
    "promote_types",
    *sorted(_DTYPE_NAMES),
    *sorted(_LAYOUTS),
    *sorted(_MEMORY_FORMATS),
]
