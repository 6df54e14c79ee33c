"""CUDA, optional at run time, as ``torch.cuda`` names it.

libc10c loads the CUDA driver (``libcuda.so.1``, or the path in ``C10C_CUDA_DRIVER``) on first
use; without a driver or a device ``is_available()`` is False, ``device_count()`` is 0, and the
other functions raise :class:`pyc10.C10RuntimeError` saying why. The current device is per
thread, as in torch.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._device import device as _device_cls
from ._errors import C10ValueError, check
from ._lib import ffi, lib

__all__ = [
    "current_device",
    "device",
    "device_count",
    "driver_version",
    "get_device_name",
    "init",
    "is_available",
    "mem_get_info",
    "set_device",
    "synchronize",
]


def init() -> None:
    """Load the driver now (it otherwise loads on first use); raise if CUDA is unavailable."""
    check(lib.c10c_cuda_init())


def is_available() -> bool:
    """Whether a CUDA driver loaded and has at least one device."""
    return bool(lib.c10c_cuda_is_available())


def device_count() -> int:
    """Number of CUDA devices (0 without a driver or device)."""
    return int(lib.c10c_cuda_device_count())


def _unavailable_reason() -> str:
    """Why CUDA is unavailable ("" when it is available)."""
    return str(ffi.string(lib.c10c_cuda_unavailable_reason()).decode("utf-8", "replace"))


def driver_version() -> int:
    """The driver's version number (1000 * major + 10 * minor)."""
    out = ffi.new("int *")
    check(lib.c10c_cuda_driver_version(out))
    return int(out[0])


def _index(d: Any, *, optional: bool = False) -> int:
    """A CUDA device index from an int, "cuda[:n]" or a pyc10.device (torch's _get_device_index)."""
    if d is None:
        if optional:
            return -1
        return current_device()
    if isinstance(d, int) and not isinstance(d, bool):
        return d
    dev = _device_cls(d)
    if dev.type != "cuda":
        raise C10ValueError(f"Expected a cuda device, but got: {dev}")
    return current_device() if dev.index is None else dev.index


def current_device() -> int:
    """The calling thread's current CUDA device (0 until set)."""
    out = ffi.new("c10c_device_index *")
    check(lib.c10c_cuda_current_device(out))
    return int(out[0])


def set_device(device: Any) -> None:
    """Make ``device`` (an int, "cuda:n" or a pyc10.device) this thread's current device."""
    index = _index(device)
    if index < 0:  # torch ignores negative indices here
        return
    check(lib.c10c_cuda_set_device(index))


@contextmanager
def device(device: Any) -> Iterator[None]:
    """Context manager making ``device`` current, restoring the previous one on exit.

    ``None`` or a negative index changes nothing, even without CUDA (torch's ``cuda.device``).
    """
    index = _index(device, optional=True)
    if index < 0:
        yield
        return
    guard = ffi.new("c10c_cuda_device_guard *")
    check(lib.c10c_cuda_device_guard_enter(guard, index))
    try:
        yield
    finally:
        check(lib.c10c_cuda_device_guard_exit(guard))


def get_device_name(device: Any = None) -> str:
    """The device's name (the current device by default)."""
    buf = ffi.new("char[]", 256)
    check(lib.c10c_cuda_device_name(buf, 256, _index(device)))
    return str(ffi.string(buf).decode("utf-8", "replace"))


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """(free, total) bytes of the device, as the driver reports them."""
    free_bytes = ffi.new("int64_t *")
    total = ffi.new("int64_t *")
    check(lib.c10c_cuda_mem_get_info(free_bytes, total, _index(device)))
    return int(free_bytes[0]), int(total[0])


def synchronize(device: Any = None) -> None:
    """Wait for all work on the device (the current device by default)."""
    check(lib.c10c_cuda_synchronize(_index(device)))
