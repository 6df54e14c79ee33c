"""The driver's state and device indices, shared by ``pyc10.cuda`` and ``pyc10.cuda.memory``.

Device arguments follow torch's ``torch.cuda._utils._get_device_index`` to the letter, including
what it does on a machine without CUDA: where torch would ask for the current device with
``optional=True`` and no CUDA device is usable, the index is ``None`` (the caller then raises,
or answers as torch does).
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

from .._device import device as _device_cls
from .._errors import C10TypeError, C10ValueError, check
from .._lib import ffi, lib


def init() -> None:
    """Load the driver now (it otherwise loads on first use); raise if CUDA is unavailable."""
    check(lib.c10c_cuda_init())


def is_available() -> bool:
    """Whether a CUDA driver loaded and has at least one device."""
    return bool(lib.c10c_cuda_is_available())


def is_initialized() -> bool:
    """Whether CUDA is initialized: the driver loaded and has a device (torch's ``is_initialized``).

    It never loads the driver. ``is_available()`` loads it, so it counts as initialization
    here, where torch's ``is_available()`` does not initialize its CUDA state.
    """
    return bool(lib.c10c_cuda_is_initialized())


def device_count() -> int:
    """Number of CUDA devices (0 without a driver or device)."""
    return int(lib.c10c_cuda_device_count())


def _unavailable_reason() -> str:
    """Why CUDA is unavailable ("" when it is available)."""
    return str(ffi.string(lib.c10c_cuda_unavailable_reason()).decode("utf-8", "replace"))


def _require() -> None:
    """Raise ``RuntimeError`` saying why when CUDA is unavailable (torch's ``_lazy_init``)."""
    check(lib.c10c_cuda_init())


def driver_version() -> int:
    """The driver's version number (1000 * major + 10 * minor).

    Reported whenever the driver library loads, even if ``cuInit`` fails or there is no device,
    as ``torch._C._cuda_getDriverVersion`` (``cudaDriverGetVersion`` needs no initialization).
    """
    out = ffi.new("int *")
    check(lib.c10c_cuda_driver_version(out))
    return int(out[0])


def current_device() -> int:
    """The calling thread's current CUDA device (0 until set)."""
    out = ffi.new("c10c_device_index *")
    check(lib.c10c_cuda_current_device(out))
    return int(out[0])


def _device_index(d: Any, optional: bool = False) -> int | None:
    """A CUDA device index from an int, "cuda[:n]", a pyc10.device or a ``cuda.device`` context.

    torch's ``torch.cuda._utils._get_device_index``: ints (bools too) are returned as they are,
    a device of another type is a ValueError, and anything else without an index is the current
    device when ``optional`` (``None`` when no CUDA device is usable), else a ValueError.
    """
    if isinstance(d, int):
        return d  # a bool too, as torch
    if isinstance(d, str):
        d = _device_cls(d)
    if isinstance(d, _device_cls):
        if d.type != "cuda":
            raise C10ValueError(f"Expected a cuda device, but got: {d}")
        if d.index is not None:
            return d.index
    elif isinstance(d, device):
        return d.idx
    if optional:
        return current_device() if is_available() else None
    raise C10ValueError(
        f"Expected a torch.device with a specified index or an integer, but got:{d}"
    )


def _none_compared(index: int | None) -> int:
    """The index, or the TypeError torch raises comparing a ``None`` index with 0 (no CUDA)."""
    if index is None:
        raise C10TypeError("'<' not supported between instances of 'NoneType' and 'int'")
    return index


class device:
    """Context manager making a CUDA device current, restoring the previous one on exit.

    As ``torch.cuda.device``: ``idx`` is the index (resolved when made), ``prev_idx`` the device
    current before entering. A negative index changes nothing, even without CUDA. ``None`` and
    ``"cuda"`` mean the current device; on a machine without CUDA entering then raises
    torch's ``TypeError``, as torch does there.
    """

    idx: int | None
    prev_idx: int

    def __init__(self, device: Any) -> None:
        self.idx = _device_index(device, optional=True)
        self.prev_idx = -1
        self._guards: list[Any] = []

    def __enter__(self) -> None:
        index = _none_compared(self.idx)
        guard = ffi.new(
            "c10c_cuda_device_guard *",
            {"struct_size": ffi.sizeof("c10c_cuda_device_guard"), "original": -1, "current": -1},
        )
        if index >= 0:  # a negative one changes nothing, even without CUDA (_exchange_device)
            check(lib.c10c_cuda_device_guard_enter(guard, index))
        self.prev_idx = int(guard.original)
        self._guards.append(guard)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        check(lib.c10c_cuda_device_guard_exit(self._guards.pop()))  # no-op for a guard unused


def set_device(device: Any) -> None:
    """Make ``device`` (an int, "cuda:n" or a pyc10.device) this thread's current device.

    A negative index changes nothing (torch); ``None`` and ``"cuda"`` name no device: ValueError.
    """
    index = _none_compared(_device_index(device))  # not optional: never None
    if index >= 0:
        check(lib.c10c_cuda_set_device(index))
