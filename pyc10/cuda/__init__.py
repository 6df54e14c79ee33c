"""CUDA, optional at run time, as ``torch.cuda`` names it.

libc10c loads the CUDA driver (``libcuda.so.1``, or the path in ``C10C_CUDA_DRIVER``) on first
use; without a driver or a device ``is_available()`` is False, ``device_count()`` is 0, and
the functions that need a device raise :class:`pyc10.C10RuntimeError` saying why (torch's CUDA
build raises RuntimeError there too; its CPU-only build an AssertionError or AttributeError).
What torch answers without CUDA is answered the same: ``is_initialized()`` False, the memory
statistics empty or 0, ``memory_snapshot()`` ``[]``, ``set_stream(None)`` and ``stream(...)``
no-ops, device arguments checked by torch's rules. The current device is per thread, as in
torch. The allocator's functions live in :mod:`pyc10.cuda.memory` (as ``torch.cuda.memory``)
and are names of this module too.
"""

from __future__ import annotations

import ctypes
from types import TracebackType
from typing import Any

from .._device import device as _device_cls
from .._errors import C10NotImplementedError, C10RuntimeError, C10TypeError, check
from .._errors import OutOfMemoryError as OutOfMemoryError  # a name, not in __all__, as torch's
from .._lib import ffi, lib
from . import memory as memory
from ._properties import (
    _CudaDeviceProperties as _CudaDeviceProperties,
)
from ._properties import (
    get_device_capability,
    get_device_properties,
    is_bf16_supported,
)
from ._runtime import (
    _device_index,
    _none_compared,
    _require,
    current_device,
    device,
    device_count,
    driver_version,
    init,
    is_available,
    is_initialized,
    set_device,
)
from ._runtime import (
    _unavailable_reason as _unavailable_reason,
)
from .memory import (
    MemPool,
    caching_allocator_alloc,
    caching_allocator_delete,
    empty_cache,
    get_allocator_backend,
    get_per_process_memory_fraction,
    host_memory_stats,
    host_memory_stats_as_nested_dict,
    list_gpu_processes,
    max_memory_allocated,
    max_memory_cached,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_cached,
    memory_reserved,
    memory_snapshot,
    memory_stats,
    memory_stats_as_nested_dict,
    memory_summary,
    reset_accumulated_host_memory_stats,
    reset_max_memory_allocated,
    reset_max_memory_cached,
    reset_peak_host_memory_stats,
    reset_peak_memory_stats,
    set_allocator_settings,
    set_per_process_memory_fraction,
    step,
    use_mem_pool,
)
from .memory import (
    _record_memory_history as _record_memory_history,  # pyc10.cuda's since before .memory
)
from .memory import (
    _snapshot as _snapshot,
)

__all__ = [
    "Event",
    "ExternalStream",
    "MemPool",
    "Stream",
    "StreamContext",
    "caching_allocator_alloc",
    "caching_allocator_delete",
    "current_device",
    "current_stream",
    "default_stream",
    "device",
    "device_count",
    "device_of",
    "driver_version",
    "empty_cache",
    "get_allocator_backend",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "get_per_process_memory_fraction",
    "host_memory_stats",
    "host_memory_stats_as_nested_dict",
    "init",
    "ipc_collect",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "list_gpu_processes",
    "max_memory_allocated",
    "max_memory_cached",
    "max_memory_reserved",
    "mem_get_info",
    "memory",
    "memory_allocated",
    "memory_cached",
    "memory_reserved",
    "memory_snapshot",
    "memory_stats",
    "memory_stats_as_nested_dict",
    "memory_summary",
    "reset_accumulated_host_memory_stats",
    "reset_max_memory_allocated",
    "reset_max_memory_cached",
    "reset_peak_host_memory_stats",
    "reset_peak_memory_stats",
    "set_allocator_settings",
    "set_device",
    "set_per_process_memory_fraction",
    "set_stream",
    "step",
    "stream",
    "synchronize",
    "use_mem_pool",
]

_device_ctx = device  # the context manager, under a name the ``device`` parameters do not hide


class device_of(device):
    """Context manager making the device of a tensor or storage current (torch's ``device_of``).

    A no-op for an object not on a CUDA device.
    """

    def __init__(self, obj: Any) -> None:
        super().__init__(obj.get_device() if obj.is_cuda else -1)


def get_device_name(device: Any = None) -> str:
    """The device's name (the current device by default; needs CUDA)."""
    _require()
    index = _none_compared(_device_index(device, optional=True))
    buf = ffi.new("char[]", 256)
    check(lib.c10c_cuda_device_name(buf, 256, index))
    return str(ffi.string(buf).decode("utf-8", "replace"))


def synchronize(device: Any = None) -> None:
    """Wait for all work on the device (the current device by default; needs CUDA)."""
    _require()
    check(lib.c10c_cuda_synchronize(_none_compared(_device_index(device, optional=True))))


# ---- streams and events ----


class Stream:
    """A CUDA stream, as ``torch.cuda.Stream``: a new one comes from the device's pool.

    ``Stream(device=None, priority=0)``: ``priority`` 0 is normal, a negative number high (CUDA
    counts higher priorities downwards). Equal streams compare equal and hash alike. Needs CUDA
    (RuntimeError without it, before the arguments are looked at, as torch).
    """

    __slots__ = ("_value",)
    _value: Any

    def __init__(self, device: Any = None, priority: int = 0) -> None:
        _require()
        index = _none_compared(_device_index(device, optional=True))
        self._value = ffi.new("c10c_stream *")
        check(lib.c10c_cuda_stream_from_pool(self._value, int(priority), index))

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


class ExternalStream(Stream):
    """A stream made outside pyc10 (a ``CUstream`` / ``cudaStream_t`` as an int), as torch's.

    ``ExternalStream(stream_ptr, device=None)``: ``cuda_stream`` is the handle, ``device`` its
    device (the current one by default); ``query()`` and ``synchronize()`` ask the driver.
    The caller keeps the stream alive. libc10c (ABI 1.0) knows only the streams it made, so an
    external stream cannot be made current, record or wait for events, or be waited for
    (NotImplementedError); torch's ``stream_id`` for it is the handle.
    """

    __slots__ = ("_handle", "_index")
    _handle: int
    _index: int

    def __init__(self, stream_ptr: int, device: Any = None) -> None:
        _require()
        if not isinstance(stream_ptr, int) or isinstance(stream_ptr, bool):
            raise C10TypeError(
                f"ExternalStream(): stream_ptr must be an int, not {type(stream_ptr).__name__}"
            )
        self._index = _none_compared(_device_index(device, optional=True))
        self._handle = stream_ptr

    @property
    def device(self) -> _device_cls:
        """The stream's device."""
        return _device_cls("cuda", self._index)

    @property
    def stream_id(self) -> int:
        """c10's id of an external stream: its handle."""
        return self._handle

    @property
    def cuda_stream(self) -> int:
        """The driver's handle."""
        return self._handle

    @property
    def priority(self) -> int:
        """Unknown to libc10c: NotImplementedError."""
        raise self._unsupported("priority")

    def query(self) -> bool:
        """Whether the work queued on the stream has completed (cuStreamQuery)."""
        from ._properties import _driver

        result = int(_driver().cuStreamQuery(ctypes.c_void_p(self._handle)))
        if result == 600:  # CUDA_ERROR_NOT_READY
            return False
        self._check(result, "cuStreamQuery")
        return True

    def synchronize(self) -> None:
        """Wait for the stream's work (cuStreamSynchronize)."""
        from ._properties import _driver

        self._check(
            int(_driver().cuStreamSynchronize(ctypes.c_void_p(self._handle))),
            "cuStreamSynchronize",
        )

    @staticmethod
    def _check(result: int, name: str) -> None:
        if result:
            from ._properties import _driver_error

            raise _driver_error(result, name)

    def _unsupported(self, what: str) -> C10NotImplementedError:
        return C10NotImplementedError(
            f"ExternalStream.{what}: libc10c cannot use a stream it did not make"
        )

    def record_event(self, event: Event | None = None) -> Event:
        """Not supported (NotImplementedError)."""
        raise self._unsupported("record_event")

    def wait_event(self, event: Event) -> None:
        """Not supported (NotImplementedError)."""
        raise self._unsupported("wait_event")

    def wait_stream(self, stream: Stream) -> None:
        """Not supported (NotImplementedError)."""
        raise self._unsupported("wait_stream")

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ExternalStream)
            and other._handle == self._handle
            and other._index == self._index
        )

    def __hash__(self) -> int:
        return hash((self.device, self._handle))

    def __repr__(self) -> str:
        return f"<pyc10.cuda.ExternalStream device={self.device} cuda_stream={self._handle:#x}>"


def ipc_collect() -> None:
    """Free the CUDA memory this process shared with others that they no longer use.

    As ``torch.cuda.ipc_collect``: a storage sent to another process and then freed here is kept
    while the consumer holds it; this frees those whose consumers let go (an allocation that runs
    out of memory does the same first).
    """
    _require()
    check(lib.c10c_cuda_ipc_collect(ffi.NULL))


def _stream_value(d: Any) -> tuple[Any, int]:
    _require()  # first, as torch's _lazy_init
    return ffi.new("c10c_stream *"), _none_compared(_device_index(d, optional=True))


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


def set_stream(stream: Stream | None) -> None:
    """Make ``stream`` the calling thread's current stream on its device (``None``: a no-op)."""
    if stream is None:
        return
    check(lib.c10c_cuda_set_current_stream(stream._value[0]))


class StreamContext:
    """Context manager making ``stream`` current (and its device), then restoring both.

    As ``torch.cuda.StreamContext``: a no-op for ``None``, and for any argument on a machine
    without a usable CUDA device (torch resolves the current device when the context is made).
    """

    stream: Stream | None
    idx: int

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream
        self.idx = current_device() if is_available() else -1
        self._restore: list[tuple[_device_ctx, Stream]] = []

    def __enter__(self) -> None:
        s = self.stream
        if s is None or self.idx == -1:
            return
        guard = _device_ctx(s.device.index)
        guard.__enter__()
        try:
            previous = current_stream()
            set_stream(s)
        except BaseException:
            guard.__exit__(None, None, None)
            raise
        self._restore.append((guard, previous))

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.stream is None or self.idx == -1:
            return
        guard, previous = self._restore.pop()
        try:
            set_stream(previous)
        finally:
            guard.__exit__(None, None, None)


def stream(stream: Stream | None) -> StreamContext:
    """A :class:`StreamContext` for ``stream`` (a no-op for ``None``), as ``torch.cuda.stream``."""
    return StreamContext(stream)


class Event:
    """A CUDA event, as ``torch.cuda.Event``.

    ``Event(enable_timing=False, blocking=False, interprocess=False, external=False)``. The
    driver event is made on the first ``record``, on the recording stream's device, and the
    event belongs to that device from then on. Needs CUDA (RuntimeError without it, as torch).
    ``blocking`` is the driver's blocking-sync flag. ``interprocess`` makes an event another
    process can open (``ipc_handle()`` / ``Event.from_ipc_handle(device, handle)``; the driver
    refuses it with timing enabled). ``external`` only matters while a CUDA graph is captured,
    which pyc10 does not do.
    """

    __slots__ = ("_device", "_handle")
    _handle: Any
    _device: _device_cls | None

    def __init__(
        self,
        enable_timing: bool = False,
        blocking: bool = False,
        interprocess: bool = False,
        external: bool = False,
    ) -> None:
        _require()
        out = ffi.new("c10c_cuda_event **")
        check(
            lib.c10c_cuda_event_new_with_flags(
                out, bool(enable_timing), bool(blocking), bool(interprocess)
            )
        )
        self._handle = ffi.gc(out[0], lib.c10c_cuda_event_free)
        self._device = None
        del external

    @property
    def device(self) -> _device_cls | None:
        """The event's device: None until it is first recorded (or its IPC handle is taken)."""
        return self._device

    @classmethod
    def from_ipc_handle(cls, device: Any, handle: bytes) -> Event:
        """Reconstruct an event from an IPC handle on the given device (``torch``'s)."""
        _require()
        index = _device_index(device)
        data = bytes(handle)
        if len(data) != 64:
            raise C10RuntimeError(
                f"cudaIpcEventHandle_t expects byte-like object of size 64, but got {len(data)}"
            )
        out = ffi.new("c10c_cuda_event **")
        check(lib.c10c_cuda_event_from_ipc_handle(out, index, data))
        event = cls.__new__(cls)
        event._handle = ffi.gc(out[0], lib.c10c_cuda_event_free)
        event._device = _device_cls("cuda", index)
        return event

    def ipc_handle(self) -> bytes:
        """Return an IPC handle of this event (made on the current device if not yet recorded)."""
        out = ffi.new("uint8_t[64]")
        check(lib.c10c_cuda_event_ipc_handle(out, self._handle))
        if self._device is None:
            self._device = _device_cls("cuda", current_device())
        return bytes(ffi.buffer(out))

    def record(self, stream: Stream | None = None) -> None:
        """Record the work queued so far on ``stream`` (the current stream by default)."""
        s = current_stream() if stream is None else stream
        check(lib.c10c_cuda_event_record(self._handle, s._value[0]))
        if self._device is None:
            self._device = s.device

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
