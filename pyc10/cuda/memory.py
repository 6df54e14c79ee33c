"""The CUDA caching allocator's statistics and controls, as ``torch.cuda.memory`` names them.

Every function here is also a name of ``pyc10.cuda`` (as torch re-exports ``torch.cuda.memory``).
They answer as torch does where CUDA is not initialized: ``memory_stats()`` is an empty
``OrderedDict``, ``memory_allocated()`` and the other counters 0, ``memory_snapshot()`` ``[]``,
``empty_cache()`` does nothing; allocator settings are accepted (no allocator will be made in
a process without CUDA). Functions that need a device raise ``RuntimeError`` saying why CUDA is
unavailable, as torch's CUDA build does.
"""

from __future__ import annotations

import collections
import contextlib
import importlib
import inspect
import itertools
import json
import operator
import os
import pickle
import sys
import warnings
from collections.abc import Iterator
from typing import Any

from .. import memory as _alloc
from .._errors import (
    C10NotImplementedError,
    C10RuntimeError,
    C10TypeError,
    C10ValueError,
    check,
    read_text,
)
from .._lib import ffi, lib
from ._runtime import (
    _device_index,
    _none_compared,
    _require,
    current_device,
    device,
    is_available,
    is_initialized,
)

__all__ = [
    "MemPool",
    "caching_allocator_alloc",
    "caching_allocator_delete",
    "empty_cache",
    "get_allocator_backend",
    "get_per_process_memory_fraction",
    "host_memory_stats",
    "host_memory_stats_as_nested_dict",
    "list_gpu_processes",
    "max_memory_allocated",
    "max_memory_cached",
    "max_memory_reserved",
    "mem_get_info",
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
    "set_per_process_memory_fraction",
    "step",
    "use_mem_pool",
]

_device_ctx = device  # the context manager, under a name the ``device`` parameters do not hide


def host_memory_stats_as_nested_dict() -> dict[str, Any]:
    """The pinned host allocator's statistics as torch's nested dict.

    ``{}`` before CUDA is initialized, as torch. Keys: allocations, allocated_bytes,
    active_requests, active_bytes (each current/peak/allocated/freed), num_host_alloc,
    num_host_free, host_alloc_time and host_free_time (total/max/min/count/avg, microseconds).
    """
    if not is_initialized():
        return {}
    s = ffi.new("c10c_cuda_host_stats *")
    s.struct_size = ffi.sizeof("c10c_cuda_host_stats")
    check(lib.c10c_cuda_host_get_stats(s))

    def stat(v: Any) -> dict[str, int]:
        return {"current": v.current, "peak": v.peak, "allocated": v.allocated, "freed": v.freed}

    def duration(v: Any) -> dict[str, int]:
        avg = v.total // v.count if v.count else 0
        return {"total": v.total, "max": v.max, "min": v.min, "count": v.count, "avg": avg}

    return {
        "allocations": stat(s.allocations),
        "allocated_bytes": stat(s.allocated_bytes),
        "active_requests": stat(s.active_requests),
        "active_bytes": stat(s.active_bytes),
        "num_host_alloc": s.num_host_alloc,
        "num_host_free": s.num_host_free,
        "host_alloc_time": duration(s.host_alloc_time),
        "host_free_time": duration(s.host_free_time),
    }


def host_memory_stats() -> collections.OrderedDict[str, Any]:
    """:func:`host_memory_stats_as_nested_dict` flattened, keys sorted, as torch's."""
    result: list[tuple[str, Any]] = []

    def add(prefix: str, obj: Any) -> None:
        if isinstance(obj, dict):
            for k, v in obj.items():
                add(f"{prefix}.{k}" if prefix else k, v)
        else:
            result.append((prefix, obj))

    add("", host_memory_stats_as_nested_dict())
    return collections.OrderedDict(sorted(result))


def reset_peak_host_memory_stats() -> None:
    """Set the pinned host allocator's peaks to their current values."""
    if is_initialized():
        check(lib.c10c_cuda_host_reset_peak_stats())


def reset_accumulated_host_memory_stats() -> None:
    """Zero the pinned host allocator's cumulative amounts, counters and durations."""
    if is_initialized():
        check(lib.c10c_cuda_host_reset_accumulated_stats())


def _host_empty_cache() -> None:
    """Give the pinned host allocator's free blocks back to the driver (torch._C._host_emptyCache).

    Blocks still awaiting the events of streams that used them stay cached.
    """
    if is_initialized():
        check(lib.c10c_cuda_host_empty_cache())


def memory_stats(device: Any = None) -> collections.OrderedDict[str, int]:
    """The caching allocator's statistics for the device, under torch's key names, sorted.

    Empty when CUDA is not initialized (the device is then not looked at), as torch.
    """
    if not is_initialized():
        return collections.OrderedDict()
    with _device_ctx(device):  # the allocator reports its current device
        stats = _alloc.stats("cuda")
    # torch 2.13's counter of allocations refused up front under its throw_on_cudamalloc_oom
    # setting, which libc10c does not have: none ever is
    stats.setdefault("num_oom_rejections", 0)
    return collections.OrderedDict(sorted(stats.items()))


def memory_stats_as_nested_dict(device: Any = None) -> dict[str, Any]:
    """:func:`memory_stats` as nested dicts: ``stats["allocated_bytes"]["all"]["current"]``."""
    nested: dict[str, Any] = {}
    for key, value in memory_stats(device).items():
        *path, last = key.split(".")
        level = nested
        for part in path:
            level = level.setdefault(part, {})
        level[last] = value
    return nested


def memory_allocated(device: Any = None) -> int:
    """Bytes of tensors currently allocated on the device (0 when CUDA is not initialized)."""
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device: Any = None) -> int:
    """Peak of ``memory_allocated`` since the start or the last reset."""
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device: Any = None) -> int:
    """Bytes the caching allocator holds from the driver on the device."""
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device: Any = None) -> int:
    """Peak of ``memory_reserved`` since the start or the last reset."""
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def memory_cached(device: Any = None) -> int:
    """Deprecated name of :func:`memory_reserved` (a FutureWarning, as torch)."""
    warnings.warn(
        "`pyc10.cuda.memory_cached` has been renamed to `pyc10.cuda.memory_reserved`",
        FutureWarning,
        stacklevel=2,
    )
    return memory_reserved(device)


def max_memory_cached(device: Any = None) -> int:
    """Deprecated name of :func:`max_memory_reserved` (a FutureWarning, as torch)."""
    warnings.warn(
        "`pyc10.cuda.max_memory_cached` has been renamed to `pyc10.cuda.max_memory_reserved`",
        FutureWarning,
        stacklevel=2,
    )
    return max_memory_reserved(device)


def reset_peak_memory_stats(device: Any = None) -> None:
    """Set every peak statistic of the device to its current value (needs CUDA)."""
    index = _device_index(device, optional=True)
    _require()
    with _device_ctx(index):
        _alloc.reset_peak_stats("cuda")


def step(device: Any = None) -> None:
    """Mark a step boundary (the end of one training or inference step) for the caching allocator.

    Not torch's: libc10c's planning. With ``planning:True`` (:func:`set_allocator_settings`) the
    requests of each step are recorded; at a boundary those allocated and freed within the step
    that ended get offsets in one arena, and the matching requests of the following steps are
    served there (``memory_stats()``'s ``plan.*`` counters say how many). Until the first call,
    steps are found in the repeating requests; after it, only these marks count. Without
    planning it does nothing. ``device``: an index, ``"cuda:n"`` or a device; ``None`` for the
    current device. Needs CUDA (RuntimeError); a device the machine does not have is a RuntimeError.
    """
    index = _device_index(device, optional=True)
    _require()
    check(lib.c10c_cuda_allocator_step(current_device() if index is None else index))


def reset_max_memory_allocated(device: Any = None) -> None:
    """Deprecated: :func:`reset_peak_memory_stats`, which resets every peak (a FutureWarning)."""
    warnings.warn(
        "pyc10.cuda.reset_max_memory_allocated now calls pyc10.cuda.reset_peak_memory_stats, "
        "which resets /all/ peak memory stats.",
        FutureWarning,
        stacklevel=2,
    )
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device: Any = None) -> None:
    """Deprecated: :func:`reset_peak_memory_stats`, which resets every peak (a FutureWarning)."""
    warnings.warn(
        "pyc10.cuda.reset_max_memory_cached now calls pyc10.cuda.reset_peak_memory_stats, "
        "which resets /all/ peak memory stats.",
        FutureWarning,
        stacklevel=2,
    )
    reset_peak_memory_stats(device)


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    """The statistics as the table ``torch.cuda.memory_summary()`` prints, line for line.

    torch's layout, rows and units (the header names libc10c where torch's names PyTorch).
    ``abbreviated`` leaves out the rows of the large and small pools. Without CUDA
    initialized torch finds no statistics and raises ``KeyError('allocated_bytes.all.current')``;
    so does this.
    """
    index = _device_index(device, optional=True)
    stats = memory_stats(device=index)
    if not stats:  # where torch's first look-up fails
        raise KeyError("allocated_bytes.all.current")
    lines = ["=" * 75]
    lines.append(f" {'':16} libc10c CUDA memory summary, device ID {index:<17d} ")
    lines.append("-" * 75)
    lines.append(
        f"  {'':9} CUDA OOMs: {stats['num_ooms']:<12d} | {'':6} cudaMalloc retries: "
        f"{stats['num_alloc_retries']:<8d}  "
    )
    lines.append("=" * 75)
    lines.append("        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ")
    for key, name, fmt in _SUMMARY_METRICS:
        lines.append("-" * 75)
        rows = [("all", name)]
        if not abbreviated:
            rows += [
                ("large_pool", "      from large pool"),
                ("small_pool", "      from small pool"),
            ]
        first = [stats[f"{key}.all.{m}"] for m in _SUMMARY_COLUMNS]  # the unit of every row
        for pool, row in rows:
            values = [stats[f"{key}.{pool}.{m}"] for m in _SUMMARY_COLUMNS]
            cells = " | ".join(fmt(v, p) for v, p in zip(values, first, strict=True))
            lines.append(f" {row:<21} | {cells} ")
    for key, name in (
        ("oversize_allocations", "Oversize allocations"),
        ("oversize_segments", "Oversize GPU segments"),
    ):
        lines.append("-" * 75)
        values = [stats[f"{key}.{m}"] for m in _SUMMARY_COLUMNS]
        cells = " | ".join(_format_count(v, v) for v in values)
        lines.append(f" {name:<21} | {cells} ")
    lines.append("=" * 75)
    return "|" + "|\n|".join(lines) + "|\n"


def _format_size(size: int, unit_of: int) -> str:
    """A memory_summary cell for bytes, as torch's: the unit chosen by ``unit_of`` (the all row)."""
    prefix = "B  "
    for new_prefix in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        if unit_of < 768 * 1024:
            break
        prefix = new_prefix
        size //= 1024
        unit_of //= 1024  # torch divides a float; the comparison comes out the same
    return f"{size:6d} {prefix}"


def _format_count(count: int, unit_of: int) -> str:
    """A memory_summary cell for counts, as torch's (K, M steps of 1000)."""
    prefix = " "
    for new_prefix in ("K", "M"):
        if unit_of < 750 * 1000:
            break
        prefix = new_prefix
        count //= 1000
        unit_of //= 1000
    return f"{count:7d} {prefix} "


_SUMMARY_COLUMNS = ("current", "peak", "allocated", "freed")
_LARGE_POOL_ROW = "      from large pool"
_SMALL_POOL_ROW = "      from small pool"
_SUMMARY_METRICS = (
    ("allocated_bytes", "Allocated memory", _format_size),
    ("active_bytes", "Active memory", _format_size),
    ("requested_bytes", "Requested memory", _format_size),
    ("reserved_bytes", "GPU reserved memory", _format_size),
    ("inactive_split_bytes", "Non-releasable memory", _format_size),
    ("allocation", "Allocations", _format_count),
    ("active", "Active allocs", _format_count),
    ("segment", "GPU reserved segments", _format_count),
    ("inactive_split", "Non-releasable allocs", _format_count),
)


def empty_cache() -> None:
    """Return every cached, unused segment to the driver (all devices; nothing without CUDA)."""
    if is_initialized():
        _alloc.empty_cache("cuda")


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """(free, total) bytes of the device, as the driver reports them (needs CUDA)."""
    if device is None:
        device = current_device()
    index = _device_index(device, optional=True)
    _require()
    free_bytes = ffi.new("int64_t *")
    total = ffi.new("int64_t *")
    check(lib.c10c_cuda_mem_get_info(free_bytes, total, _none_compared(index)))
    return int(free_bytes[0]), int(total[0])


def set_allocator_settings(config: str | bytes) -> None:
    """Configure the CUDA caching allocator with PyTorch's key names.

    ``"max_split_size_mb:128,roundup_power2_divisions:[256:1,>:4],expandable_segments:True,
    garbage_collection_threshold:0.6"``, as ``C10C_ALLOC_CONF`` (or ``PYTORCH_CUDA_ALLOC_CONF``)
    and ``torch.cuda.memory._set_allocator_settings``; also ``stream_ordered_reuse:True`` (not
    PyTorch's: a block cached for another stream is reused after making the allocating stream
    wait for an event), ``planning:True`` (steps marked by :func:`step` are served from an offset
    plan in one arena), ``plan_file:PATH`` (a plan written by ``c10c_plan_make``, served from the
    next request) and ``stitching:True``. A setting replaces all earlier ones. Unknown keys and
    bad values raise ValueError (PyTorch's messages), as does a plan file that is not one;
    options not implemented (``pinned_*``, expandable segments without the driver's virtual
    memory API) NotImplementedError. Without CUDA any text is accepted and changes nothing: no
    allocator will be made in this process.
    """
    if isinstance(config, str):
        raw = config.encode()
    elif isinstance(config, bytes):
        raw = config
    else:
        raise C10TypeError(f"config must be str, not {type(config).__name__}")
    if is_available():
        check(lib.c10c_cuda_set_allocator_settings(raw))


def _set_allocator_settings(env: str | bytes) -> None:
    """:func:`set_allocator_settings` under ``torch.cuda.memory``'s name, deprecated as torch's.

    A FutureWarning first, as torch's; a type other than str or bytes raises torch's TypeError.
    """
    warnings.warn(
        "pyc10.cuda.memory._set_allocator_settings is deprecated, as torch's. Use "
        "pyc10.cuda.set_allocator_settings instead.",
        FutureWarning,
        stacklevel=2,
    )
    if not isinstance(env, (str, bytes)):  # pybind11's text, as torch's binding raises it
        raise C10TypeError(
            "_accelerator_setAllocatorSettings(): incompatible function arguments. The following"
            f" argument types are supported:\n    1. (arg0: str) -> None\n\nInvoked with: {env!r}"
        )
    set_allocator_settings(env)


def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
    """Let the caching allocator reserve at most ``fraction`` of the device's memory.

    torch's checks in torch's order: CUDA first (RuntimeError), the device, then ``fraction``
    must be a ``float`` (TypeError; an int is refused, as torch) in 0..1 (ValueError).
    """
    _require()
    if device is None:
        device = current_device()
    index = _none_compared(_device_index(device))
    if not isinstance(fraction, float):
        raise C10TypeError("Invalid type for fraction argument, must be `float`")
    check(lib.c10c_cuda_set_memory_fraction(fraction, index))
    _fractions[index if index >= 0 else current_device()] = fraction


_fractions: dict[int, float] = {}  # set_per_process_memory_fraction's, by device


def get_per_process_memory_fraction(device: Any = None) -> float:
    """The fraction of the device's memory the caching allocator may reserve (1.0 until set).

    torch's checks in torch's order: CUDA first (RuntimeError), then the device. libc10c has
    no getter for it (ABI 1.0), so this is the last fraction :func:`set_per_process_memory_fraction`
    set for the device in this process (one a C caller set is not seen).
    """
    _require()
    if device is None:
        device = current_device()
    index = _none_compared(_device_index(device))
    return _fractions.get(index, 1.0)


def get_allocator_backend() -> str:
    """The CUDA allocator's backend: ``"native"`` (PyTorch's caching allocator; the only one)."""
    return "native"


_raw_blocks: dict[int, Any] = {}  # caching_allocator_alloc's blocks by address (c10c_data_ptr)


def caching_allocator_alloc(size: int, device: Any = None, stream: Any = None) -> int:
    """``size`` bytes from the CUDA caching allocator, as ``torch.cuda.caching_allocator_alloc``.

    On ``device`` (the current device by default) for ``stream`` (a :class:`pyc10.cuda.Stream`;
    the device's current stream by default). Returns the address; free it with
    :func:`caching_allocator_delete`. A stream given as an int must be 0 (the default stream) or
    the handle of the device's current stream: libc10c cannot allocate for a stream it did not
    make (NotImplementedError); any other type is torch's TypeError.
    """
    from . import Stream, current_stream, default_stream, set_stream

    if device is None:
        device = current_device()
    index = _none_compared(_device_index(device))
    if stream is None:
        stream = current_stream(index)
    if not isinstance(stream, (Stream, int)):
        raise C10TypeError(
            "Invalid type for stream argument, must be `pyc10.cuda.Stream` or `int` "
            "representing a pointer to an existing stream"
        )
    if isinstance(stream, int):
        if stream == 0:
            stream = default_stream(index)
        elif stream == current_stream(index).cuda_stream:
            stream = current_stream(index)
        else:
            raise C10NotImplementedError(
                f"caching_allocator_alloc: stream {stream:#x} is not a stream of libc10c; pass "
                "a pyc10.cuda.Stream"
            )
    nbytes = operator.index(size)
    if nbytes < 0:
        raise C10ValueError(f"caching_allocator_alloc: size must be non-negative, got {nbytes}")
    block = ffi.new("c10c_data_ptr *")
    with _device_ctx(index):
        previous = current_stream(index)
        set_stream(stream)
        try:
            allocator = _alloc._allocator("cuda")
            check(lib.c10c_allocator_allocate(block, allocator, nbytes))
        finally:
            set_stream(previous)
    address = int(ffi.cast("uintptr_t", block.data))
    if address:
        _raw_blocks[address] = block
    return address


def caching_allocator_delete(mem_ptr: int) -> None:
    """Free a block of :func:`caching_allocator_alloc` (0 is ignored), as torch's.

    An address it did not give is torch's RuntimeError "invalid device pointer: 0x...".
    """
    address = operator.index(mem_ptr)
    if address == 0:
        return
    block = _raw_blocks.pop(address, None)
    if block is None:
        raise C10RuntimeError(f"invalid device pointer: {address:#x}")
    lib.c10c_data_ptr_free(block)


# ---- memory pools ----

_pool_ids = itertools.count(1)


class MemPool:
    """A private pool of the CUDA caching allocator, as ``torch.cuda.MemPool``: not supported.

    libc10c's caching allocator has one pool per device (its segments' ``segment_pool_id`` is
    always ``(0, 0)``) and ABI 1.0 has no call to route allocations elsewhere, so a pool can be
    made and looked at but never used: it holds no memory (``snapshot()`` is ``[]``), and
    :func:`use_mem_pool` raises NotImplementedError. ``id`` is ``(0, n)`` as torch numbers the
    pools users make; ``allocator`` must be None (no pluggable allocators here).
    """

    __slots__ = ("_id",)
    _id: tuple[int, int]

    def __init__(self, allocator: Any = None, use_on_oom: bool = False, no_split: bool = False):
        _require()
        if allocator is not None:
            raise C10NotImplementedError("MemPool: pluggable CUDA allocators are not supported")
        del use_on_oom, no_split
        self._id = (0, next(_pool_ids))

    @property
    def id(self) -> tuple[int, int]:
        """The pool's id, two ints."""
        return self._id

    def use_count(self) -> int:
        """References to the pool held by the allocator and this object: 1 (never in use)."""
        return 1

    def snapshot(self, include_traces: bool = True) -> list[dict[str, Any]]:
        """The pool's segments, as :func:`memory_snapshot` with this pool's id: none."""
        return memory_snapshot(self.id, include_traces=include_traces)

    def __repr__(self) -> str:
        return f"<pyc10.cuda.MemPool id={self._id}>"


@contextlib.contextmanager
def use_mem_pool(pool: MemPool, device: Any = None) -> Iterator[None]:
    """Route this thread's allocations to ``pool``: not supported (NotImplementedError).

    The device is looked at first (the current one needs CUDA), as torch's; then the pool;
    libc10c's caching allocator has no private pools.
    """
    if device is None:
        current_device()  # needs CUDA, as torch's
    else:
        _device_index(device)
    if not isinstance(pool, MemPool):
        raise C10TypeError(f"use_mem_pool(): pool must be a MemPool, not {type(pool).__name__}")
    raise C10NotImplementedError(
        "use_mem_pool: the CUDA caching allocator has no private memory pools"
    )
    yield  # pragma: no cover - a generator, for contextmanager


# ---- snapshots and the allocator's event history ----

_MAX_HISTORY = 1 << 24  # entries per device libc10c keeps at most
_ACTIONS = frozenset(
    {
        "alloc",
        "free_requested",
        "free_completed",
        "segment_alloc",
        "segment_free",
        "segment_map",
        "segment_unmap",
        "oom",
        "snapshot",
    }
)
_skipped_actions: set[str] = set()  # _record_memory_history(skip_actions=...)


def _snapshot(device: Any = None, augment_with_fx_traces: bool = False) -> dict[str, Any]:
    """The allocator's state, as ``torch.cuda.memory._snapshot()``.

    ``{"segments": [...], "device_traces": [[...] per device], "allocator_settings": {...}}``:
    segments with their blocks (``state`` "active_allocated", "active_pending_free" or
    "inactive"), and the events kept by :func:`_record_memory_history` (``action`` alloc,
    free_requested, free_completed, segment_alloc, segment_free, segment_map, segment_unmap,
    oom). Every device is reported and ``device`` is not looked at, as torch; no frames are
    recorded, so ``augment_with_fx_traces`` has nothing to add. Without CUDA:
    ``{"segments": [], "device_traces": []}``.
    """
    del device, augment_with_fx_traces
    if not is_available():
        return {"segments": [], "device_traces": []}
    snapshot: dict[str, Any] = json.loads(read_text(lib.c10c_cuda_memory_snapshot))
    if _skipped_actions:
        snapshot["device_traces"] = [
            [e for e in trace if e["action"] not in _skipped_actions]
            for trace in snapshot["device_traces"]
        ]
    for trace in snapshot["device_traces"]:
        for e in trace:
            if e["action"] == "oom":
                # torch's TraceEntry keeps the device's free bytes in addr for an oom; its
                # snapshot names them device_free and has no addr there (as real snapshots
                # show); torch.cuda._memory_viz.trace reads that name.
                e["device_free"] = e.pop("addr")
    return snapshot


def _dump_snapshot(
    filename: str | os.PathLike[str] = "dump_snapshot.pickle", augment_with_fx_traces: bool = False
) -> None:
    """Write :func:`_snapshot` to ``filename`` as a pickle, as ``torch.cuda.memory._dump_snapshot``.

    The pickle holds only dicts, lists, strings, numbers and booleans, so torch's tools read it
    (``torch.cuda._memory_viz``, pytorch.org/memory_viz) and ``python -m pyc10.replay`` replays it.
    """
    s = _snapshot(augment_with_fx_traces=augment_with_fx_traces)
    with open(filename, "wb") as f:
        pickle.dump(s, f)


def memory_snapshot(mempool_id: Any = None, include_traces: bool = True) -> list[dict[str, Any]]:
    """The segments of every device with their blocks, as ``torch.cuda.memory_snapshot()``.

    ``[]`` without CUDA. With ``mempool_id`` (two ints) only that pool's segments: every segment
    is in the default pool, ``(0, 0)``, as there are no private pools here (:class:`MemPool`).
    ``include_traces`` is accepted (the segments do not carry traces).
    """
    del include_traces
    segments = list(_snapshot()["segments"])
    if mempool_id is None:
        return segments
    wanted = _pool_id(mempool_id)
    return [s for s in segments if tuple(s["segment_pool_id"]) == wanted]


def _pool_id(value: Any) -> tuple[int, int]:
    """A pool id: two ints (a tuple or list), as torch's MempoolId_t."""
    if (
        isinstance(value, (tuple, list))
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return int(value[0]), int(value[1])
    raise C10TypeError(f"mempool_id must be a tuple of two ints, not {value!r}")


def _record_memory_history(enabled: Any = "all", *args: Any, **kwargs: Any) -> None:
    """Keep the last ``max_entries`` allocator events per device for :func:`_snapshot`.

    As ``torch.cuda.memory._record_memory_history(enabled="all", context="all",
    stacks="all", max_entries=sys.maxsize, device=None, clear_history=False,
    compile_context=False, global_record_annotations=False, skip_actions=None)``, and
    torch's legacy form with a bool ``enabled``. ``enabled=None`` stops and drops the events,
    "state" keeps one (torch keeps 1 entry then), "all" ``max_entries``. torch's argument checks
    come first, then CUDA is needed (RuntimeError without it, as torch's CUDA build).

    No stack frames are recorded (``context``, ``stacks``, ``compile_context`` and
    ``global_record_annotations`` are checked and otherwise ignored), at most 2**24 entries are
    kept per device, and ``skip_actions`` are left out of the snapshots (they still take room
    among the ``max_entries`` kept).
    """
    if isinstance(enabled, bool):
        _record_memory_history_legacy(enabled, *args, **kwargs)
    else:
        _record_memory_history_impl(enabled, *args, **kwargs)


def _record_memory_history_legacy(  # noqa: PLR0917 - torch's signature
    enabled: bool,
    record_context: bool = True,
    trace_alloc_max_entries: int = 1,
    trace_alloc_record_context: bool = False,
    device: Any = None,
    record_context_cpp: bool = False,
    clear_history: bool = False,
    compile_context: bool = False,
    global_record_annotations: bool = False,
    skip_actions: list[str] | None = None,
) -> None:
    del record_context, trace_alloc_record_context, device, record_context_cpp
    del compile_context, global_record_annotations
    _set_history(
        _entries(trace_alloc_max_entries, "trace_alloc_max_entries") if enabled else 0,
        clear_history,
        skip_actions,
    )


def _record_memory_history_impl(  # noqa: PLR0917 - torch's signature
    enabled: str | None = "all",
    context: str | None = "all",
    stacks: str = "all",
    max_entries: int = sys.maxsize,
    device: Any = None,
    clear_history: bool = False,
    compile_context: bool = False,
    global_record_annotations: bool = False,
    skip_actions: list[str] | None = None,
) -> None:
    del device, compile_context, global_record_annotations  # torch ignores device too
    for name, value, optional in (
        ("enabled", enabled, True),
        ("context", context, True),
        ("stacks", stacks, False),
    ):
        if not isinstance(value, str) and not (optional and value is None):
            raise C10TypeError(
                f"_record_memory_history(): {name} must be str{' or None' if optional else ''},"
                f" not {type(value).__name__}"
            )
    # torch's checks (torch/csrc/cuda/memory_snapshot.cpp), in its order and words.
    if enabled is not None and enabled not in ("state", "all"):
        raise C10RuntimeError("expected state to be 'state', 'all', or None")
    if context is not None and context not in ("state", "alloc", "all"):
        raise C10RuntimeError("expected context to be 'state', 'alloc', 'all', or None")
    if stacks not in ("python", "all"):
        raise C10RuntimeError("expected stacks to be 'python', or 'all'")
    entries = _entries(max_entries, "max_entries")
    if enabled is None:
        entries = 0
    elif enabled == "state":
        entries = 1
    _set_history(entries, clear_history, skip_actions)


_record_memory_history.__signature__ = inspect.signature(_record_memory_history_impl)  # type: ignore[attr-defined]


def _entries(value: Any, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise C10TypeError(f"_record_memory_history(): {name} must be a non-negative int")
    return value


def _set_history(entries: int, clear_history: bool, skip_actions: list[str] | None) -> None:
    skipped = frozenset(skip_actions or ())
    unknown = sorted(skipped - _ACTIONS)
    if unknown:
        raise C10RuntimeError(
            f"Unknown action in skip_actions: '{unknown[0]}' (one of {', '.join(sorted(_ACTIONS))})"
        )
    _require()
    if clear_history and entries:
        check(lib.c10c_cuda_record_memory_history(0))  # 0 drops what was kept
    check(lib.c10c_cuda_record_memory_history(min(entries, _MAX_HISTORY)))
    _skipped_actions.clear()
    if entries:
        _skipped_actions.update(skipped)


# ---- processes (NVML, through pynvml when it is installed, as torch) ----


def list_gpu_processes(device: Any = None) -> str:
    """The processes using the device and their memory, as ``torch.cuda.list_gpu_processes``.

    Through ``pynvml`` (nvidia-ml-py) as torch: without it, torch's message saying to install it;
    with it but no driver, torch's "cuda driver can't be loaded" message. The device index is
    mapped through ``CUDA_VISIBLE_DEVICES`` to NVML's, as torch does.
    """
    try:
        pynvml: Any = importlib.import_module("pynvml")
    except ModuleNotFoundError:
        return "pynvml module not found, please install nvidia-ml-py"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_DriverNotLoaded:
        return "cuda driver can't be loaded, is cuda enabled?"
    index = _nvml_device_index(pynvml, device)
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    procs = pynvml.nvmlDeviceGetComputeRunningProcesses(handle)
    lines = [f"GPU:{index}"]
    if len(procs) == 0:
        lines.append("no processes are running")
    for p in procs:
        mem = p.usedGpuMemory / (1024 * 1024)
        lines.append(f"process {p.pid:>10d} uses {mem:>12.3f} MB GPU memory")
    return "\n".join(lines)


def _nvml_device_index(pynvml: Any, device: Any) -> int:
    """The NVML index of a CUDA device index, through CUDA_VISIBLE_DEVICES (torch's rules)."""
    optional_index = _device_index(device, optional=True)
    visible = _parse_visible_devices()
    if type(visible[0]) is str:  # IndexError for an empty list, as torch
        visible = _uuids_to_ordinals([str(v) for v in visible], _nvml_uuids(pynvml))
    index = _none_compared(optional_index)
    if index < 0 or index >= len(visible):
        raise C10RuntimeError(f"device {index} is not visible (CUDA_VISIBLE_DEVICES={visible})")
    return int(visible[index])


def _parse_visible_devices() -> list[int] | list[str]:
    """CUDA_VISIBLE_DEVICES as the driver reads it (torch's ``_parse_visible_devices``).

    Unset: 64 devices. "GPU-"/"MIG-" lists: the UUID prefixes up to the first other entry.
    Otherwise each entry's leading integer (``strtoul``) up to the first negative or invalid
    one; a repeated entry makes the list empty.
    """
    var = os.getenv("CUDA_VISIBLE_DEVICES")
    if var is None:
        return list(range(64))
    for prefix in ("GPU-", "MIG-"):
        if var.startswith(prefix):
            uuids: list[str] = []
            for elem in var.split(","):
                if elem in uuids:
                    return []
                if not elem.startswith(prefix):
                    break
                uuids.append(elem)
            return uuids
    ordinals: list[int] = []
    for elem in var.split(","):
        x = _strtoul(elem.strip())
        if x in ordinals:
            return []
        if x < 0:
            break
        ordinals.append(x)
    return ordinals


def _strtoul(s: str) -> int:
    """The integer ``s`` starts with (a sign allowed first), -1 when there is none."""
    end = 0
    while end < len(s) and (s[end].isdigit() or (end == 0 and s[end] in "+-")):
        end += 1
    return int(s[:end]) if end > 0 else -1  # a sign alone: ValueError, as torch


def _nvml_uuids(pynvml: Any) -> list[str]:
    """The UUID of every device NVML sees, in NVML's order."""
    try:
        uuids = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            uuid = pynvml.nvmlDeviceGetUUID(pynvml.nvmlDeviceGetHandleByIndex(i))
            uuids.append(uuid.decode("ascii") if isinstance(uuid, bytes) else str(uuid))
    except pynvml.NVMLError:
        raise C10RuntimeError("Can't get device UUIDs") from None
    return uuids


def _uuids_to_ordinals(candidates: list[str], uuids: list[str]) -> list[int]:
    """NVML ordinals of UUID prefixes, up to the first unknown or ambiguous one (torch's rule)."""
    ordinals: list[int] = []
    for candidate in candidates:
        matches = [i for i, uuid in enumerate(uuids) if uuid.startswith(candidate)]
        if len(matches) != 1:
            break
        if matches[0] in ordinals:
            return []
        ordinals.append(matches[0])
    return ordinals
