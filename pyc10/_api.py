"""The public names of pyc10, re-exported by ``pyc10/__init__.py``."""

from __future__ import annotations

import builtins as _builtins
import os as _os
from typing import Any

from . import _ctensor
from ._creation import (
    arange,
    asarray,
    broadcast_shapes,
    can_cast,
    cat,
    concat,
    concatenate,
    from_file,
    frombuffer,
    is_storage,
    legacy_contiguous_format,
    promote_types,
    result_type,
    stack,
    typename,
    view_as_complex,
    view_as_real,
)
from ._defaults import (
    get_default_device,
    set_default_device,
    set_default_dtype,
)
from ._device import device, get_privateuse1_backend_name, rename_privateuse1_backend
from ._dispatch import DispatchKey, DispatchKeySet
from ._dtype import DTYPE_NAMES as _DTYPE_NAMES
from ._dtype import dtype
from ._errors import (
    C10AbsentMethodError,
    C10BufferError,
    C10Error,
    C10IndexError,
    C10MemoryError,
    C10NotImplementedError,
    C10OverflowError,
    C10RuntimeError,
    C10TypeError,
    C10ValueError,
    OutOfMemoryError,
)
from ._finfo import finfo, iinfo
from ._layout import LAYOUTS as _LAYOUTS
from ._layout import MEMORY_FORMATS as _MEMORY_FORMATS
from ._layout import layout, memory_format
from ._lib import ffi as _ffi
from ._lib import lib as _lib
from ._repr import set_printoptions
from ._storage import UntypedStorage
from ._tensor import (
    Size,
    Tensor,
    as_tensor,
    empty,
    empty_like,
    empty_strided,
    from_dlpack,
    from_numpy,
    full,
    full_like,
    is_tensor,
    ones,
    ones_like,
    split,
    tensor,
    zeros,
    zeros_like,
)
from ._typed_storage import LEGACY_CLASSES as _LEGACY_STORAGE_CLASSES
from ._typed_storage import TypedStorage

get_default_dtype = _ctensor.get_default_dtype
"""The default floating point dtype (``pyc10.float32`` until changed), as torch's (a builtin)."""
get_default_dtype.__module__ = "pyc10"  # named pyc10.get_default_dtype in its errors, as torch's

#: The release of the loaded libc10c ("1.1.0").
__version__: str = _ffi.string(_lib.c10c_version_string()).decode()
#: The ABI version of the loaded libc10c as (major, minor).
abi_version: tuple[_builtins.int, _builtins.int] = (
    _lib.c10c_abi_version() >> 16,
    _lib.c10c_abi_version() & 0xFFFF,
)

# Module attributes with torch's names. The values come from the library; the names are
# spelled out so type checkers see them (tests/python/test_api.py checks both agree).
uint8: dtype = _DTYPE_NAMES["uint8"]
int8: dtype = _DTYPE_NAMES["int8"]
int16: dtype = _DTYPE_NAMES["int16"]
short: dtype = _DTYPE_NAMES["short"]
int32: dtype = _DTYPE_NAMES["int32"]
int: dtype = _DTYPE_NAMES["int"]
int64: dtype = _DTYPE_NAMES["int64"]
long: dtype = _DTYPE_NAMES["long"]
float16: dtype = _DTYPE_NAMES["float16"]
half: dtype = _DTYPE_NAMES["half"]
float32: dtype = _DTYPE_NAMES["float32"]
float: dtype = _DTYPE_NAMES["float"]
float64: dtype = _DTYPE_NAMES["float64"]
double: dtype = _DTYPE_NAMES["double"]
complex32: dtype = _DTYPE_NAMES["complex32"]
chalf: dtype = _DTYPE_NAMES["chalf"]
complex64: dtype = _DTYPE_NAMES["complex64"]
cfloat: dtype = _DTYPE_NAMES["cfloat"]
complex128: dtype = _DTYPE_NAMES["complex128"]
cdouble: dtype = _DTYPE_NAMES["cdouble"]
bool: dtype = _DTYPE_NAMES["bool"]
qint8: dtype = _DTYPE_NAMES["qint8"]
quint8: dtype = _DTYPE_NAMES["quint8"]
qint32: dtype = _DTYPE_NAMES["qint32"]
bfloat16: dtype = _DTYPE_NAMES["bfloat16"]
quint4x2: dtype = _DTYPE_NAMES["quint4x2"]
quint2x4: dtype = _DTYPE_NAMES["quint2x4"]
bits1x8: dtype = _DTYPE_NAMES["bits1x8"]
bits2x4: dtype = _DTYPE_NAMES["bits2x4"]
bits4x2: dtype = _DTYPE_NAMES["bits4x2"]
bits8: dtype = _DTYPE_NAMES["bits8"]
bits16: dtype = _DTYPE_NAMES["bits16"]
float8_e5m2: dtype = _DTYPE_NAMES["float8_e5m2"]
float8_e4m3fn: dtype = _DTYPE_NAMES["float8_e4m3fn"]
float8_e5m2fnuz: dtype = _DTYPE_NAMES["float8_e5m2fnuz"]
float8_e4m3fnuz: dtype = _DTYPE_NAMES["float8_e4m3fnuz"]
uint16: dtype = _DTYPE_NAMES["uint16"]
uint32: dtype = _DTYPE_NAMES["uint32"]
uint64: dtype = _DTYPE_NAMES["uint64"]
uint1: dtype = _DTYPE_NAMES["uint1"]
bit: dtype = _DTYPE_NAMES["bit"]
uint2: dtype = _DTYPE_NAMES["uint2"]
uint3: dtype = _DTYPE_NAMES["uint3"]
uint4: dtype = _DTYPE_NAMES["uint4"]
uint5: dtype = _DTYPE_NAMES["uint5"]
uint6: dtype = _DTYPE_NAMES["uint6"]
uint7: dtype = _DTYPE_NAMES["uint7"]
int1: dtype = _DTYPE_NAMES["int1"]
int2: dtype = _DTYPE_NAMES["int2"]
int3: dtype = _DTYPE_NAMES["int3"]
int4: dtype = _DTYPE_NAMES["int4"]
int5: dtype = _DTYPE_NAMES["int5"]
int6: dtype = _DTYPE_NAMES["int6"]
int7: dtype = _DTYPE_NAMES["int7"]
float8_e8m0fnu: dtype = _DTYPE_NAMES["float8_e8m0fnu"]
float4_e2m1fn_x2: dtype = _DTYPE_NAMES["float4_e2m1fn_x2"]
strided: layout = _LAYOUTS["strided"]
sparse_coo: layout = _LAYOUTS["sparse_coo"]
sparse_csr: layout = _LAYOUTS["sparse_csr"]
_mkldnn: layout = _LAYOUTS["_mkldnn"]
sparse_csc: layout = _LAYOUTS["sparse_csc"]
sparse_bsr: layout = _LAYOUTS["sparse_bsr"]
sparse_bsc: layout = _LAYOUTS["sparse_bsc"]
jagged: layout = _LAYOUTS["jagged"]
contiguous_format: memory_format = _MEMORY_FORMATS["contiguous_format"]
preserve_format: memory_format = _MEMORY_FORMATS["preserve_format"]
channels_last: memory_format = _MEMORY_FORMATS["channels_last"]
channels_last_3d: memory_format = _MEMORY_FORMATS["channels_last_3d"]


# These look the files up through the package's resources, which find them where they are: the
# package directory once installed, the source and build directories of an editable install
# (meson-python's import hook maps them). importlib.resources is imported when asked for: it
# costs more than all of pyc10's import.


def get_include() -> str:
    """Directory holding ``c10c/c10c.h``, to compile C code against the bundled libc10c.

    ``cc -I "$(python -c 'import pyc10; print(pyc10.get_include())')" ...``, or
    ``pyc10-config --cflags``.
    """
    import importlib.resources as _resources

    header = _resources.files(__package__) / "include" / "c10c" / "c10c.h"
    if header.is_file():
        return _os.path.dirname(_os.path.dirname(str(header)))
    return _os.path.join(_os.path.dirname(__file__), "include")


def _is_soname_file(name: str) -> _builtins.bool:
    """Whether name is ``libc10c.so.<digits>``: the library, not the ``libc10c.so`` beside it.

    That one is a linker script that lets ``-lc10c`` find the library (see get_library_dir).
    """
    prefix = "libc10c.so."
    return name.startswith(prefix) and name[len(prefix) :].isdigit()


def get_library_path() -> str:
    """Path of the libc10c shared library pyc10 uses, for ctypes, Julia, Rust ... users."""
    import importlib.resources as _resources

    bundled = sorted(
        str(entry)
        for entry in _resources.files(__package__).iterdir()
        if _is_soname_file(entry.name) and entry.is_file()
    )
    if bundled:
        return bundled[0]
    import ctypes.util

    found = ctypes.util.find_library("c10c")
    if found is None:
        raise FileNotFoundError("libc10c shared library not found next to pyc10")
    return found


def get_library_dir() -> str:
    """Directory holding the bundled libc10c, for ``-L`` (then ``-lc10c``) and ``-Wl,-rpath``.

    Beside ``libc10c.so.1`` it holds ``libc10c.so``, a linker script naming it (a wheel cannot
    hold a symbolic link), so ``cc main.c -L DIR -lc10c -Wl,-rpath,DIR`` links as against an
    installed library; ``pyc10-config --libs`` prints those flags. Raises
    ``FileNotFoundError`` where pyc10 uses a libc10c installed on the system instead (then
    ``pkg-config c10c`` gives its flags).
    """
    path = get_library_path()
    if not _os.path.isabs(path):
        raise FileNotFoundError(
            f"pyc10 uses the system's libc10c ({path}), not a bundled one: "
            "pkg-config --cflags --libs c10c gives its flags"
        )
    return _os.path.dirname(path)


def get_pkgconfig_dir() -> str:
    """Directory holding ``c10c.pc``, the pkg-config file of the bundled libc10c.

    ``PKG_CONFIG_PATH="$(pyc10-config --pkgconfigdir)" pkg-config --cflags --libs c10c``; the
    file finds the headers and the library relative to itself, so it stays right wherever the
    wheel is installed. Raises ``FileNotFoundError`` where there is no such file: pyc10 built
    without its wheel layout, or an editable install (``pip install -e .``), whose headers and
    library stay in the checkout and its build directory (``pyc10-config --cflags --libs`` works
    there).
    """
    import importlib.resources as _resources

    pc = _resources.files(__package__) / "lib" / "pkgconfig" / "c10c.pc"
    if pc.is_file():
        directory = _os.path.dirname(str(pc))
        package = _os.path.dirname(_os.path.dirname(directory))
        if _os.path.isfile(_os.path.join(package, "include", "c10c", "c10c.h")):
            return directory
    raise FileNotFoundError(
        "pyc10 has no relocatable c10c.pc here (installed from a wheel it has one; an editable "
        "install or a system libc10c does not): use pyc10-config --cflags --libs"
    )


__all__ = [
    "C10AbsentMethodError",
    "C10BufferError",
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
    "OutOfMemoryError",
    "Size",
    "Tensor",
    "TypedStorage",
    "UntypedStorage",
    "_mkldnn",
    "abi_version",
    "arange",
    "as_tensor",
    "asarray",
    "bfloat16",
    "bit",
    "bits1x8",
    "bits2x4",
    "bits4x2",
    "bits8",
    "bits16",
    "bool",
    "broadcast_shapes",
    "can_cast",
    "cat",
    "cdouble",
    "cfloat",
    "chalf",
    "channels_last",
    "channels_last_3d",
    "complex32",
    "complex64",
    "complex128",
    "concat",
    "concatenate",
    "contiguous_format",
    "device",
    "double",
    "dtype",
    "empty",
    "empty_like",
    "empty_strided",
    "finfo",
    "float",
    "float4_e2m1fn_x2",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float16",
    "float32",
    "float64",
    "from_dlpack",
    "from_file",
    "from_numpy",
    "frombuffer",
    "full",
    "full_like",
    "get_default_device",
    "get_default_dtype",
    "get_include",
    "get_library_dir",
    "get_library_path",
    "get_pkgconfig_dir",
    "get_privateuse1_backend_name",
    "half",
    "iinfo",
    "int",
    "int1",
    "int2",
    "int3",
    "int4",
    "int5",
    "int6",
    "int7",
    "int8",
    "int16",
    "int32",
    "int64",
    "is_storage",
    "is_tensor",
    "jagged",
    "layout",
    "legacy_contiguous_format",
    "long",
    "memory_format",
    "ones",
    "ones_like",
    "preserve_format",
    "promote_types",
    "qint8",
    "qint32",
    "quint2x4",
    "quint4x2",
    "quint8",
    "rename_privateuse1_backend",
    "result_type",
    "set_default_device",
    "set_default_dtype",
    "set_printoptions",
    "short",
    "sparse_bsc",
    "sparse_bsr",
    "sparse_coo",
    "sparse_csc",
    "sparse_csr",
    "split",
    "stack",
    "strided",
    "tensor",
    "typename",
    "uint1",
    "uint2",
    "uint3",
    "uint4",
    "uint5",
    "uint6",
    "uint7",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "view_as_complex",
    "view_as_real",
    "zeros",
    "zeros_like",
]

#: torch's function forms of Tensor methods (pyc10.transpose(x, 0, 1), pyc10.chunk(x, 2), ...),
#: made by the extension from the signature table: one per entry whose method Tensor has.
_FUNCTIONS: dict[str, Any] = _ctensor.functions(Tensor, "pyc10")
globals().update(_FUNCTIONS)
__all__ += sorted(_FUNCTIONS)  # noqa: PLE0605

#: torch's legacy storage classes (pyc10.FloatStorage, ...), which Tensor.storage_type() returns
globals().update(_LEGACY_STORAGE_CLASSES)
__all__ += sorted(_LEGACY_STORAGE_CLASSES)  # noqa: PLE0605
