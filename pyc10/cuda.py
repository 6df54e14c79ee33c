"""CUDA, optional at run time, as ``torch.cuda`` names it.

libc10c loads the CUDA driver (``libcuda.so.1``, or the path in ``C10C_CUDA_DRIVER``) on first
use; without a driver or a device ``is_available()`` is False, ``device_count()`` is 0, and the
other functions raise :class:`pyc10.C10RuntimeError` saying why. The current device is per
thread, as in torch.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._device import device as _device_cls
from ._errors import C10ValueError, check, read_text
from ._lib import ffi, lib

__all__ = [
    "Event",
    "Stream",
    "current_device",
    "current_stream",
    "default_stream",
    "device",
    "device_count",
    "driver_version",
    "empty_cache",
    "get_device_name",
    "init",
    "is_available",
    "max_memory_allocated",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "memory_snapshot",
    "memory_stats",
    "memory_summary",
    "reset_peak_memory_stats",
    "set_allocator_settings",
    "set_device",
    "set_per_process_memory_fraction",
    "set_stream",
    "stream",
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


# ---- streams and events ----


class Stream:
    """A CUDA stream, as ``torch.cuda.Stream``: a new one comes from the device's pool.

    ``Stream(device=None, priority=0)``: ``priority`` 0 is normal, a negative number high (CUDA
    counts higher priorities downwards). Equal streams compare equal and hash alike.
    """

    __slots__ = ("_value",)
    _value: Any

    def __init__(self, device: Any = None, priority: int = 0) -> None:
        self._value = ffi.new("c10c_stream *")
        check(lib.c10c_cuda_stream_from_pool(self._value, int(priority), _index(device)))

    @classmethod
    def _of(cls, value: Any) -> Stream:
        self = object.__new__(cls)
        self._value = ffi.new("c10c_stream *", value)
        return self

    @property
    def device(self) -> _device_cls:
        """The stream's device."""
        return _device_cls("cuda", int(self._value.device.index))

    @property
    def stream_id(self) -> int:
        """c10's stream id (0 for the default stream)."""
        return int(self._value.id)

    @property
    def cuda_stream(self) -> int:
        """The driver's handle as an int (0 for the default stream), for interop."""
        out = ffi.new("void **")
        check(lib.c10c_cuda_stream_handle(out, self._value[0]))
        return int(ffi.cast("uintptr_t", out[0]))

    @property
    def priority(self) -> int:
        """The stream's priority (0 normal, negative higher)."""
        out = ffi.new("int *")
        check(lib.c10c_cuda_stream_priority(out, self._value[0]))
        return int(out[0])

    def query(self) -> bool:
        """Whether all work queued on the stream has completed."""
        out = ffi.new("bool *")
        check(lib.c10c_cuda_stream_query(out, self._value[0]))
        return bool(out[0])

    def synchronize(self) -> None:
        """Wait for the stream's work."""
        check(lib.c10c_cuda_stream_synchronize(self._value[0]))

    def record_event(self, event: Event | None = None) -> Event:
        """Record an event (a new one by default) on this stream and return it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def wait_event(self, event: Event) -> None:
        """Make this stream's later work wait for the event."""
        event.wait(self)

    def wait_stream(self, stream: Stream) -> None:
        """Make this stream's later work wait for the work queued on ``stream`` so far."""
        self.wait_event(stream.record_event())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and bool(
            lib.c10c_stream_equal(self._value[0], other._value[0])
        )

    def __hash__(self) -> int:
        return hash((self.device, self.stream_id))

    def __repr__(self) -> str:
        return f"<pyc10.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"


def _stream_value(d: Any) -> Any:
    out = ffi.new("c10c_stream *")
    return out, _index(d)


def current_stream(device: Any = None) -> Stream:
    """The calling thread's current stream on the device (its default stream until set)."""
    out, index = _stream_value(device)
    check(lib.c10c_cuda_current_stream(out, index))
    return Stream._of(out[0])


def default_stream(device: Any = None) -> Stream:
    """The device's default stream (id 0)."""
    out, index = _stream_value(device)
    check(lib.c10c_cuda_default_stream(out, index))
    return Stream._of(out[0])


def set_stream(stream: Stream) -> None:
    """Make ``stream`` the calling thread's current stream on its device."""
    check(lib.c10c_cuda_set_current_stream(stream._value[0]))


@contextmanager
def stream(stream: Stream | None) -> Iterator[None]:
    """Context manager making ``stream`` current (and its device, as torch), then restoring both.

    ``None`` changes nothing.
    """
    if stream is None:
        yield
        return
    with device(stream.device.index):
        previous = current_stream()
        set_stream(stream)
        try:
            yield
        finally:
            set_stream(previous)


class Event:
    """A CUDA event, as ``torch.cuda.Event(enable_timing=False)``.

    The driver event is made on the first ``record``, on the recording stream's device, and
    the event belongs to that device from then on.
    """

    __slots__ = ("_handle",)
    _handle: Any

    def __init__(
        self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
    ) -> None:
        if interprocess:
            raise C10ValueError("interprocess CUDA events are not supported yet")
        out = ffi.new("c10c_cuda_event **")
        check(lib.c10c_cuda_event_new(out, bool(enable_timing)))
        self._handle = ffi.gc(out[0], lib.c10c_cuda_event_free)
        del blocking  # the driver's blocking-sync flag: synchronize() waits either way

    def record(self, stream: Stream | None = None) -> None:
        """Record the work queued so far on ``stream`` (the current stream by default)."""
        s = current_stream() if stream is None else stream
        check(lib.c10c_cuda_event_record(self._handle, s._value[0]))

    def wait(self, stream: Stream | None = None) -> None:
        """Make ``stream``'s later work wait for the recorded work."""
        s = current_stream() if stream is None else stream
        check(lib.c10c_cuda_event_wait(self._handle, s._value[0]))

    def query(self) -> bool:
        """Whether the recorded work has completed (True if never recorded)."""
        out = ffi.new("bool *")
        check(lib.c10c_cuda_event_query(out, self._handle))
        return bool(out[0])

    def synchronize(self) -> None:
        """Wait for the recorded work."""
        check(lib.c10c_cuda_event_synchronize(self._handle))

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds from this event to ``end_event`` (both timed, recorded and complete)."""
        out = ffi.new("float *")
        check(lib.c10c_cuda_event_elapsed_time(out, self._handle, end_event._handle))
        return float(out[0])


# ---- memory (the caching allocator's statistics, as torch.cuda names them) ----


@contextmanager
def _on(which: Any) -> Iterator[None]:
    """The device's statistics are read with it current (the allocator reports its current one)."""
    with device(_index(which)):
        yield


def memory_stats(device: Any = None) -> dict[str, int]:
    """The caching allocator's statistics for the device, under torch's key names."""
    from . import memory

    with _on(device):
        return memory.stats("cuda")


def memory_allocated(device: Any = None) -> int:
    """Bytes of tensors currently allocated on the device."""
    return memory_stats(device)["allocated_bytes.all.current"]


def max_memory_allocated(device: Any = None) -> int:
    """Peak of ``memory_allocated`` since the start or the last reset."""
    return memory_stats(device)["allocated_bytes.all.peak"]


def memory_reserved(device: Any = None) -> int:
    """Bytes the caching allocator holds from the driver on the device."""
    return memory_stats(device)["reserved_bytes.all.current"]


def max_memory_reserved(device: Any = None) -> int:
    """Peak of ``memory_reserved`` since the start or the last reset."""
    return memory_stats(device)["reserved_bytes.all.peak"]


def memory_summary(device: Any = None) -> str:
    """The statistics as the table ``torch.cuda.memory_summary()`` prints."""
    from . import memory

    with _on(device):
        return memory.summary("cuda")


def reset_peak_memory_stats(device: Any = None) -> None:
    """Set every peak statistic of the device to its current value."""
    from . import memory

    with _on(device):
        memory.reset_peak_stats("cuda")


def empty_cache() -> None:
    """Return every cached, unused segment to the driver (all devices)."""
    from . import memory

    memory.empty_cache("cuda")


def set_allocator_settings(config: str) -> None:
    """Configure the CUDA caching allocator with PyTorch's key names.

    ``"max_split_size_mb:128,roundup_power2_divisions:[256:1,>:4],expandable_segments:True,
    garbage_collection_threshold:0.6"``, as ``C10C_ALLOC_CONF`` (or ``PYTORCH_CUDA_ALLOC_CONF``)
    and ``torch.cuda.memory._set_allocator_settings``; also ``stream_ordered_reuse:True`` (not
    PyTorch's: a block cached for another stream is reused after making the allocating stream
    wait for an event). A setting replaces all earlier ones. Unknown keys and bad values raise
    ValueError (PyTorch's messages); options not implemented (``pinned_*``, expandable segments
    without the driver's virtual memory API) NotImplementedError.
    """
    if not isinstance(config, str):
        raise C10ValueError(f"config must be str, not {type(config).__name__}")
    check(lib.c10c_cuda_set_allocator_settings(config.encode()))


def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
    """Let the caching allocator reserve at most ``fraction`` of the device's memory (torch's)."""
    if not isinstance(fraction, (int, float)) or isinstance(fraction, bool):
        raise C10ValueError(f"Invalid type for fraction argument, must be `float`: {fraction!r}")
    check(lib.c10c_cuda_set_memory_fraction(float(fraction), _index(device)))


_MAX_HISTORY = 1 << 24  # entries per device libc10c keeps at most


def _snapshot(device: Any = None) -> dict[str, Any]:
    """The allocator's state, as ``torch.cuda.memory._snapshot()``.

    ``{"segments": [...], "device_traces": [[...] per device], "allocator_settings": {...}}``:
    segments with their blocks (``state`` "active_allocated", "active_pending_free" or
    "inactive"), and the events kept by :func:`_record_memory_history` (``action`` alloc,
    free_requested, free_completed, segment_alloc, segment_free, segment_map, segment_unmap,
    oom). ``device`` is accepted for torch's signature; every device is reported, as torch.
    """
    if device is not None:
        _index(device)
    return dict(json.loads(read_text(lib.c10c_cuda_memory_snapshot)))


def memory_snapshot() -> list[dict[str, Any]]:
    """The segments of every device with their blocks, as ``torch.cuda.memory_snapshot()``."""
    return list(_snapshot()["segments"])


def _record_memory_history(
    enabled: str | None = "all", *, max_entries: int = sys.maxsize, **_ignored: Any
) -> None:
    """Keep the last ``max_entries`` allocator events per device for :func:`_snapshot`.

    As ``torch.cuda.memory._record_memory_history``; ``enabled=None`` stops and drops them.

    No stack frames are recorded (``context``/``stacks`` are accepted and ignored), and at most
    2**24 entries are kept per device (a larger ``max_entries`` keeps that many).
    """
    if enabled not in (None, "all", "state"):
        raise C10ValueError(f"enabled must be None, 'all' or 'state', not {enabled!r}")
    if not isinstance(max_entries, int) or isinstance(max_entries, bool) or max_entries < 0:
        raise C10ValueError(f"max_entries must be a non-negative int, not {max_entries!r}")
    entries = 0 if enabled is None else min(max_entries, _MAX_HISTORY)
    check(lib.c10c_cuda_record_memory_history(entries))
