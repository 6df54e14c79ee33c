"""The public surface of pyc10: names, typing marker, docstrings."""

from __future__ import annotations

import importlib.resources
import types

import pyc10
from pyc10._lib import ffi, lib


def library_dtype_names() -> set[str]:
    names = set()
    for v in range(lib.C10C_DTYPE_UNDEFINED):
        names.add(ffi.string(lib.c10c_dtype_name(v)).decode())
        legacy = ffi.string(lib.c10c_dtype_legacy_name(v)).decode()
        if legacy:
            names.add(legacy)
    return names


def test_module_dtype_names_are_exactly_the_librarys():
    ours = {n for n, v in vars(pyc10).items() if isinstance(v, pyc10.dtype)}
    assert ours == library_dtype_names()
    for n in ours:
        assert getattr(pyc10, n).value in range(lib.C10C_DTYPE_UNDEFINED)


def test_module_layout_and_format_names_are_exactly_the_librarys():
    layouts = {n for n, v in vars(pyc10).items() if isinstance(v, pyc10.layout)}
    assert layouts == {
        ffi.string(lib.c10c_layout_python_name(v)).decode() for v in range(lib.C10C_LAYOUT_COUNT)
    }
    formats = {n for n, v in vars(pyc10).items() if isinstance(v, pyc10.memory_format)}
    # beside the library's names, torch's one alias: legacy_contiguous_format is contiguous_format
    assert formats == {
        ffi.string(lib.c10c_memory_format_python_name(v)).decode()
        for v in range(lib.C10C_MEMORY_FORMAT_COUNT)
    } | {"legacy_contiguous_format"}
    assert pyc10.legacy_contiguous_format is pyc10.contiguous_format


def test_all_names_exist_and_public_ones_are_documented():
    for name in pyc10.__all__:
        obj = getattr(pyc10, name)
        if callable(obj) and not isinstance(obj, (pyc10.dtype, pyc10.layout, pyc10.memory_format)):
            assert obj.__doc__, name


def test_package_is_typed():
    assert importlib.resources.files("pyc10").joinpath("py.typed").is_file()


def test_all_is_exactly_the_public_names():
    public = {n for n in vars(pyc10) if not n.startswith("_")} | {"_mkldnn"}  # torch's name
    # submodules (pyc10.cuda, pyc10.replay once imported), as torch.cuda: not in __all__
    public -= {n for n in public if isinstance(getattr(pyc10, n, None), types.ModuleType)}
    assert set(pyc10.__all__) == public
