"""CuPy's device allocations served by libc10c's CUDA caching allocator.

::

    import pyc10.allocators.cupy as pyc10_cupy

    pyc10_cupy.use("expandable_segments:True")  # cupy.cuda.set_allocator over libc10c

Each allocation is a block of libc10c's caching allocator for CuPy's current device and stream
(``c10c_cuda_pluggable_malloc``), handed to CuPy as a ``MemoryPointer`` over ``UnownedMemory``
whose owner gives the block back when CuPy drops its last reference. The settings, statistics
and snapshots are those of :mod:`pyc10.allocators.torch` (one allocator per process serves
both: torch and CuPy tensors share its cache). An allocation that cannot be met raises CuPy's
``cupy.cuda.memory.OutOfMemoryError``.
"""

from __future__ import annotations

import importlib
from typing import Any

from .. import cuda as _cuda
from .._lib import ffi, lib

__all__ = ["malloc", "use"]


class _Block:
    """Owns one block: frees it when CuPy's memory object lets go of it."""

    __slots__ = ("device", "ptr", "size", "stream")

    def __init__(self, ptr: Any, size: int, device: int, stream: Any) -> None:
        self.ptr, self.size, self.device, self.stream = ptr, size, device, stream

    def __del__(self) -> None:
        lib.c10c_cuda_pluggable_free(self.ptr, self.size, self.device, self.stream)


def _cupy() -> Any:
    try:  # (by name: CuPy is optional, and its typing is not needed here)
        return importlib.import_module("cupy")
    except ImportError as e:
        raise RuntimeError("pyc10.allocators.cupy needs CuPy (import cupy failed)") from e


def malloc(nbytes: int) -> Any:
    """CuPy's allocator function: ``nbytes`` on CuPy's current device, for its current stream."""
    cupy = _cupy()
    device = cupy.cuda.Device().id
    stream = ffi.cast("void *", cupy.cuda.get_current_stream().ptr)
    if nbytes == 0:
        return cupy.cuda.MemoryPointer(cupy.cuda.UnownedMemory(0, 0, None, device), 0)
    ptr = lib.c10c_cuda_pluggable_malloc(nbytes, device, stream)
    if ptr == ffi.NULL:
        free, total = cupy.cuda.runtime.memGetInfo()
        raise cupy.cuda.memory.OutOfMemoryError(nbytes, total - free, total)
    owner = _Block(ptr, nbytes, device, stream)
    memory = cupy.cuda.UnownedMemory(int(ffi.cast("uintptr_t", ptr)), nbytes, owner, device)
    return cupy.cuda.MemoryPointer(memory, 0)


def use(settings: str | None = None) -> None:
    """Make libc10c's CUDA caching allocator CuPy's (``cupy.cuda.set_allocator``).

    ``settings`` as :func:`pyc10.allocators.torch.use` takes them. Raises ``RuntimeError``
    without CuPy or when libc10c cannot use CUDA.
    """
    cupy = _cupy()
    if not _cuda.is_available():
        raise RuntimeError(f"libc10c cannot use CUDA: {_cuda._unavailable_reason()}")
    if settings is not None:
        _cuda.memory.set_allocator_settings(settings)
    cupy.cuda.set_allocator(malloc)
