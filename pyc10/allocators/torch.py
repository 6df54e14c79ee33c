"""PyTorch's CUDA allocations served by libc10c's CUDA caching allocator (a pluggable allocator).

::

    import pyc10.allocators.torch as pyc10_torch

    pyc10_torch.use("expandable_segments:True,stitching:True")  # before torch's first CUDA use
    ...                                       # every CUDA tensor of torch now comes from libc10c
    pyc10_torch.memory_stats()                # torch's keys; torch's own call raises here
    pyc10_torch._dump_snapshot("snap.pickle")  # opens in torch.cuda._memory_viz and memory_viz

``use()`` hands ``torch.cuda.memory.CUDAPluggableAllocator`` libc10c's entry points
``c10c_cuda_pluggable_malloc`` and ``c10c_cuda_pluggable_free`` (PyTorch's signatures) and makes
it torch's allocator with ``torch.cuda.memory.change_current_allocator``. The settings are
``PYTORCH_CUDA_ALLOC_CONF``'s (``expandable_segments``, ``max_split_size_mb``,
``garbage_collection_threshold``, ``roundup_power2_divisions``, ...) plus libc10c's own:
``stitching:True`` (free pages of expandable segments mapped into one new range instead of
growing), ``planning:True`` (offsets planned from the repeating requests of training steps; mark
steps with :func:`step`) and ``plan_file:PATH`` (a plan written by ``python -m pyc10.replay
--write-plan``). Without settings, ``C10C_ALLOC_CONF`` or else ``PYTORCH_CUDA_ALLOC_CONF`` apply.

PyTorch asks a pluggable allocator for nothing but allocations and frees, so
``torch.cuda.memory_stats()``, ``memory_snapshot()``, ``_record_memory_history()`` and
``empty_cache()`` raise or do nothing under it; this module gives each of them over libc10c,
in torch's format.

Streams: torch passes the stream each allocation is for, and a block freed is reused only on
that stream (as torch's own allocator does), so work queued on it orders itself. A tensor used
on another stream too needs what ``Tensor.record_stream`` does under torch's allocator, which
torch does not pass to a pluggable allocator: call :func:`record_stream` (or synchronize the
streams before the tensor is freed).

Out of memory: torch gives a pluggable allocator no way to fail (in torch 2.13's
``CUDAPluggableAllocator::malloc`` a NULL becomes a tensor whose ``data_ptr()`` is 0, and the
first kernel to touch it ends the process's CUDA context with an illegal address; RMM's C++
allocator throws ``std::bad_alloc``, which torch raises as a plain ``RuntimeError``). libc10c
releases its cache and retries first, as torch's allocator does; what still cannot be met is
raised as torch raises it, ``torch.cuda.OutOfMemoryError`` with PyTorch's message ("CUDA out of
memory. Tried to allocate ..."): pyc10 hands torch entry points that throw the exception as
torch's own ``python_error`` (see ``pyc10/_ext/torch_oom.c``). Where the C++ runtime is not
libstdc++ (``_GLIBCXX_USE_CXX11_ABI``), torch gets libc10c's entry points themselves, and a
failure is a NULL whose reason :func:`last_error` gives.
"""

from __future__ import annotations

import collections
import ctypes
import os
import sys
from typing import Any

from .. import cuda as _cuda
from .._api import get_library_path
from .._errors import check
from .._lib import ffi, lib

__all__ = [
    "_dump_snapshot",
    "_record_memory_history",
    "empty_cache",
    "is_used",
    "last_error",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_snapshot",
    "memory_stats",
    "memory_summary",
    "record_stream",
    "reset_peak_memory_stats",
    "set_per_process_memory_fraction",
    "step",
    "use",
]

MALLOC = "c10c_cuda_pluggable_malloc"
FREE = "c10c_cuda_pluggable_free"

_installed: list[Any] = []  # the CUDAPluggableAllocator torch holds, once use() succeeded


def _torch() -> Any:
    try:
        import torch
    except ImportError as e:
        raise RuntimeError("pyc10.allocators.torch needs PyTorch (import torch failed)") from e
    return torch


def is_used() -> bool:
    """Whether :func:`use` made libc10c torch's CUDA allocator in this process."""
    return bool(_installed)


def use(settings: str | None = None) -> None:
    """Make libc10c's CUDA caching allocator serve every CUDA allocation of PyTorch.

    Call it before torch's first CUDA allocation (before anything initializes ``torch.cuda``):
    PyTorch cannot change its allocator afterwards, and says so as a ``RuntimeError`` here.
    ``settings``: ``PYTORCH_CUDA_ALLOC_CONF`` syntax plus libc10c's ``stitching``,
    ``planning`` and ``plan_file`` (checked first, with PyTorch's messages: ``ValueError`` for a
    bad value, ``NotImplementedError`` for an option libc10c does not have).

    Raises ``RuntimeError`` when torch was built without CUDA, when libc10c cannot use CUDA (the
    reason: no driver, no device, ...), when called a second time, and when torch has already
    initialized its own allocator. Nothing is changed then.
    """
    torch = _torch()
    if _installed:
        raise RuntimeError(
            "pyc10.allocators.torch.use() was called already: libc10c is torch's CUDA allocator "
            "in this process (torch cannot change it again; change settings with "
            "pyc10.cuda.memory.set_allocator_settings)"
        )
    if not hasattr(torch._C, "_cuda_customAllocator"):
        raise RuntimeError(
            f"torch {torch.__version__} was built without CUDA: it has no pluggable CUDA "
            "allocator to install"
        )
    if not _cuda.is_available():
        raise RuntimeError(f"libc10c cannot use CUDA: {_cuda._unavailable_reason()}")
    if settings is not None:
        _cuda.memory.set_allocator_settings(settings)
    allocator = _allocator(torch)
    try:
        torch.cuda.memory.change_current_allocator(allocator)
    except RuntimeError as e:
        raise RuntimeError(
            "pyc10.allocators.torch.use() must come before torch's first CUDA allocation: "
            f"torch's allocator is already in use ({e})"
        ) from e
    _installed.append(allocator)


_CXX_SYMBOLS = (
    "__cxa_allocate_exception",
    "__cxa_throw",
    "_ZTVN10__cxxabiv120__si_class_type_infoE",  # vtable for __si_class_type_info
    "_ZTISt9exception",  # typeid(std::exception)
)


def _cxx_runtime(torch: Any) -> tuple[int, int, int, int]:
    """The addresses torch_oom.c throws with: libstdc++'s, as torch loaded it (else zeros)."""
    if not sys.platform.startswith("linux") or not getattr(
        torch._C, "_GLIBCXX_USE_CXX11_ABI", False
    ):
        return (0, 0, 0, 0)
    try:
        cxx = ctypes.CDLL("libstdc++.so.6", mode=os.RTLD_NOLOAD | os.RTLD_GLOBAL)
        found = tuple(
            ctypes.cast(getattr(cxx, n), ctypes.c_void_p).value or 0 for n in _CXX_SYMBOLS
        )
    except (OSError, AttributeError):
        return (0, 0, 0, 0)
    return found if all(found) else (0, 0, 0, 0)  # type: ignore[return-value]


def _allocator(torch: Any) -> Any:
    """The allocator object torch installs: pyc10's entry points (torch_oom.c), or libc10c's."""
    from .._ctensor import _torch_allocator

    cxx = _cxx_runtime(torch)
    if not all(cxx):
        return torch.cuda.memory.CUDAPluggableAllocator(get_library_path(), MALLOC, FREE)
    malloc, free = _torch_allocator(*cxx, torch.cuda.OutOfMemoryError)
    # what CUDAPluggableAllocator does with the two addresses it finds in a library
    return torch.cuda.memory._CUDAAllocator(torch._C._cuda_customAllocator(malloc, free))


def last_error() -> str:
    """The message of libc10c's last failure on this thread (why an allocation got NULL)."""
    return str(ffi.string(lib.c10c_last_error_message()).decode("utf-8", "replace"))


def _index(device: Any) -> int | None:
    """A CUDA device index from torch's device forms (None, int, "cuda:n", torch.device)."""
    if device is None:
        torch = _torch()
        return int(torch.cuda.current_device()) if torch.cuda.is_available() else None
    if hasattr(device, "type") and hasattr(device, "index") and not isinstance(device, str):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        return _index(device.index)
    return _cuda._runtime._device_index(device, optional=True)


def memory_stats(device: Any = None) -> collections.OrderedDict[str, int]:
    """``torch.cuda.memory_stats()`` for memory libc10c serves torch: torch's keys, sorted."""
    return _cuda.memory.memory_stats(_index(device))


def memory_allocated(device: Any = None) -> int:
    """``torch.cuda.memory_allocated()``: bytes of torch's live tensors on the device."""
    return _cuda.memory.memory_allocated(_index(device))


def max_memory_allocated(device: Any = None) -> int:
    """``torch.cuda.max_memory_allocated()``."""
    return _cuda.memory.max_memory_allocated(_index(device))


def memory_reserved(device: Any = None) -> int:
    """``torch.cuda.memory_reserved()``: bytes libc10c holds from the driver for the device."""
    return _cuda.memory.memory_reserved(_index(device))


def max_memory_reserved(device: Any = None) -> int:
    """``torch.cuda.max_memory_reserved()``."""
    return _cuda.memory.max_memory_reserved(_index(device))


def reset_peak_memory_stats(device: Any = None) -> None:
    """``torch.cuda.reset_peak_memory_stats()``."""
    _cuda.memory.reset_peak_memory_stats(_index(device))


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    """``torch.cuda.memory_summary()``'s table."""
    return _cuda.memory.memory_summary(_index(device), abbreviated=abbreviated)


def memory_snapshot(include_traces: bool = True) -> list[dict[str, Any]]:
    """``torch.cuda.memory_snapshot()``: the segments and their blocks, in torch's format."""
    return _cuda.memory.memory_snapshot(include_traces=include_traces)


def _dump_snapshot(filename: str = "dump_snapshot.pickle") -> None:
    """``torch.cuda.memory._dump_snapshot()``: a pickle memory_viz and torch's viewer open."""
    _cuda.memory._dump_snapshot(filename)


def _record_memory_history(enabled: Any = "all", *args: Any, **kwargs: Any) -> None:
    """``torch.cuda.memory._record_memory_history()``: keep allocator events for snapshots."""
    _cuda.memory._record_memory_history(enabled, *args, **kwargs)


def empty_cache() -> None:
    """``torch.cuda.empty_cache()``: give libc10c's cached blocks back to the driver."""
    _cuda.memory.empty_cache()


def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
    """``torch.cuda.set_per_process_memory_fraction()`` for libc10c's allocator."""
    _cuda.memory.set_per_process_memory_fraction(fraction, _index(device))


def step(device: Any = None) -> None:
    """Mark the end of a training step for libc10c's planning (``planning:True``).

    See :func:`pyc10.cuda.memory.step`.
    """
    _cuda.memory.step(_index(device))


def record_stream(tensor: Any, stream: Any) -> None:
    """``tensor.record_stream(stream)`` for memory libc10c serves torch.

    The tensor's memory is not reused after it is freed until the work queued on ``stream`` by
    then has completed. torch's own ``Tensor.record_stream`` does nothing under a pluggable
    allocator.
    """
    storage = tensor.untyped_storage()
    if storage.device.type != "cuda":
        raise ValueError(f"record_stream: the tensor is on {storage.device}, not a CUDA device")
    handle = int(getattr(stream, "cuda_stream", stream))
    ptr = ffi.cast("void *", storage.data_ptr())
    check(lib.c10c_cuda_pluggable_record_stream(ptr, ffi.cast("void *", handle)))
