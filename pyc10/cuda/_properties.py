"""Device properties (``torch.cuda.get_device_properties`` and what builds on it).

libc10c's public ABI gives a device's name (``c10c_cuda_device_name``) but not its other
attributes, and ABI 1.0 is frozen; so the attributes come from the driver itself: the library
that libc10c loaded (``C10C_CUDA_DRIVER`` or ``libcuda.so.1``), opened again here without
loading anything new (``RTLD_NOLOAD``), after libc10c initialized it. ``cuDeviceGetAttribute``,
``cuDeviceTotalMem_v2`` and ``cuDeviceGetUuid_v2`` make no context.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from typing import Any

from .._errors import C10RuntimeError, check
from .._lib import ffi, lib
from ._runtime import _device_index, _require, current_device, device_count, is_available

__all__ = [
    "_CudaDeviceProperties",
    "get_device_capability",
    "get_device_properties",
    "is_bf16_supported",
]

# CUdevice_attribute numbers (cuda.h), by the name torch gives the property
_ATTRIBUTES = {
    "major": 75,
    "minor": 76,
    "multi_processor_count": 16,
    "is_integrated": 18,
    "is_multi_gpu_board": 84,
    "max_threads_per_multi_processor": 39,
    "max_threads_per_block": 1,
    "warp_size": 10,
    "regs_per_multiprocessor": 82,
    "L2_cache_size": 38,
    "clock_rate": 13,
    "memory_clock_rate": 36,
    "memory_bus_width": 37,
    "shared_memory_per_block": 8,
    "shared_memory_per_multiprocessor": 81,
    "shared_memory_per_block_optin": 97,
    "pci_bus_id": 33,
    "pci_device_id": 34,
    "pci_domain_id": 50,
}


class _CudaDeviceProperties:
    """A device's properties, as ``torch._C._CudaDeviceProperties`` (read-only attributes).

    ``name``, ``major``, ``minor``, ``total_memory`` (bytes), ``multi_processor_count``,
    ``uuid`` (text), the PCI ids, ``L2_cache_size`` (bytes), clock rates (kHz), ... with torch's
    names; ``gcnArchName`` is the name on CUDA, as torch's. The repr is torch's.
    """

    __slots__ = ("_values",)
    _values: dict[str, Any]

    def __init__(self, values: dict[str, Any]) -> None:
        object.__setattr__(self, "_values", dict(values))

    def __getattr__(self, name: str) -> Any:
        try:
            return object.__getattribute__(self, "_values")[name]
        except KeyError:
            raise AttributeError(
                f"'_CudaDeviceProperties' object has no attribute '{name}'"
            ) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"property '{name}' of '_CudaDeviceProperties' object has no setter")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._values))

    def __repr__(self) -> str:
        v = self._values
        mib = 1024 * 1024
        return (
            f"_CudaDeviceProperties(name='{v['name']}', major={v['major']}, minor={v['minor']}, "
            f"total_memory={v['total_memory'] // mib}MB, "
            f"multi_processor_count={v['multi_processor_count']}, uuid={v['uuid']}, "
            f"pci_bus_id={v['pci_bus_id']}, pci_device_id={v['pci_device_id']}, "
            f"pci_domain_id={v['pci_domain_id']}, L2_cache_size={v['L2_cache_size'] // mib}MB)"
        )


@functools.cache
def _driver() -> ctypes.CDLL:
    """The driver library libc10c loaded (never a second one)."""
    path = os.environ.get("C10C_CUDA_DRIVER") or "libcuda.so.1"
    if not hasattr(os, "RTLD_NOLOAD"):  # Windows: no dlopen flags to find the loaded library
        raise C10RuntimeError(
            "pyc10.cuda: reading device properties through the CUDA driver needs dlopen's "
            f"RTLD_NOLOAD, which {sys.platform} does not have"
        )
    try:
        return ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LOCAL)
    except OSError:
        raise C10RuntimeError(
            f"the CUDA driver {path} is not the one libc10c loaded (C10C_CUDA_DRIVER changed "
            "after CUDA was initialized?)"
        ) from None


def _driver_error(result: int, name: str) -> C10RuntimeError:
    """The error of a failed driver call, named as libc10c names them."""
    text = ctypes.c_char_p()
    _driver().cuGetErrorName(result, ctypes.byref(text))
    what = text.value.decode() if text.value else str(result)
    return C10RuntimeError(f"CUDA driver error: {what} in {name}")


def _call(name: str, *args: Any) -> None:
    """Call a driver function; a failure raises RuntimeError with the driver's error name."""
    result = getattr(_driver(), name)(*args)
    if result:
        raise _driver_error(result, name)


def _uuid(dev: int) -> str:
    """The device's UUID as torch prints it (8-4-4-4-12 hex digits), "" without the call."""
    raw = (ctypes.c_ubyte * 16)()
    for name in ("cuDeviceGetUuid_v2", "cuDeviceGetUuid"):
        if hasattr(_driver(), name):
            _call(name, raw, dev)
            h = bytes(raw).hex()
            return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    return ""


@functools.cache
def _properties(index: int) -> _CudaDeviceProperties:
    buf = ffi.new("char[]", 256)
    check(lib.c10c_cuda_device_name(buf, 256, index))
    name = ffi.string(buf).decode("utf-8", "replace")
    dev = ctypes.c_int()
    _call("cuDeviceGet", ctypes.byref(dev), index)
    values: dict[str, Any] = {"name": name, "gcnArchName": name}
    value = ctypes.c_int()
    for prop, attribute in _ATTRIBUTES.items():
        _call("cuDeviceGetAttribute", ctypes.byref(value), attribute, dev)
        values[prop] = int(value.value)
    total = ctypes.c_size_t()
    _call("cuDeviceTotalMem_v2", ctypes.byref(total), dev)
    values["total_memory"] = int(total.value)
    values["uuid"] = _uuid(dev.value)
    return _CudaDeviceProperties(values)


def get_device_properties(device: Any = None) -> _CudaDeviceProperties:
    """The device's properties (the current device by default), as torch's.

    Needs CUDA (RuntimeError saying why without it); an index outside 0..count-1 is torch's
    AssertionError "Invalid device id".
    """
    _require()
    index = _device_index(device, optional=True)
    if index is None or index < 0 or index >= device_count():
        raise AssertionError("Invalid device id")
    return _properties(index)


def get_device_capability(device: Any = None) -> tuple[int, int]:
    """The device's compute capability (major, minor), as torch's."""
    prop = get_device_properties(device)
    return int(prop.major), int(prop.minor)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the current device supports bfloat16, as torch's.

    False without CUDA; True from compute capability 8.0; below it, with
    ``including_emulation``, whether a bfloat16 tensor can be made on the device (it can: memory
    holds any dtype here).
    """
    if not is_available():
        return False
    index = current_device()
    if get_device_properties(index).major >= 8:
        return True
    if not including_emulation:
        return False
    return _check_bf16_tensor_supported(index)


@functools.cache
def _check_bf16_tensor_supported(index: int) -> bool:
    from .._ctensor import tensor  # pyc10.tensor, from the layer below
    from .._dtype import DTYPE_NAMES

    try:
        tensor([1.0], dtype=DTYPE_NAMES["bfloat16"], device=f"cuda:{index}")
    except Exception:  # torch's: any failure means no
        return False
    return True
