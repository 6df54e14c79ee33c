"""Allocator statistics and control, as ``torch.cuda.memory_stats`` and friends, for any device.

``pyc10.memory.stats()`` returns a dict with torch's key names ("allocated_bytes.all.current",
...), ``summary()`` the table torch's ``memory_summary()`` prints, and ``empty_cache()``,
``reset_peak_stats()`` and ``set_config()`` control the allocator installed for a device (the
caching CPU allocator by default).
"""

from __future__ import annotations

from ._device import device as _device_cls
from ._errors import C10TypeError, check, read_text
from ._lib import ffi, lib

__all__ = ["empty_cache", "reset_peak_stats", "set_config", "stats", "summary"]

_STAT_ARRAYS = [
    "allocation",
    "segment",
    "active",
    "inactive_split",
    "allocated_bytes",
    "reserved_bytes",
    "active_bytes",
    "inactive_split_bytes",
    "requested_bytes",
]
_POOLS = ["all", "small_pool", "large_pool"]
_FIELDS = ["current", "peak", "allocated", "freed"]
_COUNTERS = [
    "num_alloc_retries",
    "num_ooms",
    "num_sync_all_streams",
    "num_device_alloc",
    "num_device_free",
    "max_split_size",
]
_PLAN_COUNTERS = ["arena_bytes", "served", "fallbacks", "rebuilds", "drops", "declines"]


def _allocator(device: _device_cls | str | None) -> object:
    dev = _device_cls("cpu" if device is None else device)
    out = ffi.new("c10c_allocator **")
    check(lib.c10c_allocator_get(out, dev._type))
    # a new reference (c10c_allocator_get), dropped when the handle is collected
    return ffi.gc(out[0], lib.c10c_allocator_release)


def stats(device: _device_cls | str | None = None) -> dict[str, int]:
    """The allocator's statistics under torch's flattened key names, sorted as torch sorts them.

    Beyond torch's keys, the CUDA caching allocator's planning and stitching (0 elsewhere):
    ``plan.arena_bytes``, ``plan.served``, ``plan.fallbacks``, ``plan.rebuilds``,
    ``plan.drops``, ``plan.declines``, ``num_stitches`` and
    ``stitched_bytes.{current,peak,allocated,freed}``.
    """
    s = ffi.new("c10c_memory_stats *")
    s.struct_size = ffi.sizeof("c10c_memory_stats")
    check(lib.c10c_allocator_get_stats(s, _allocator(device)))
    result: dict[str, int] = {}
    for name in _STAT_ARRAYS:
        array = getattr(s, name)
        for p, pool in enumerate(_POOLS):
            for field in _FIELDS:
                result[f"{name}.{pool}.{field}"] = int(getattr(array[p], field))
    for name in ("oversize_allocations", "oversize_segments"):
        for field in _FIELDS:
            result[f"{name}.{field}"] = int(getattr(getattr(s, name), field))
    for name in _COUNTERS:
        result[name] = int(getattr(s, name))
    # ours, not torch's: the CUDA caching allocator's planning and stitching (0 elsewhere)
    for name in _PLAN_COUNTERS:
        result[f"plan.{name}"] = int(getattr(s, f"plan_{name}"))
    result["num_stitches"] = int(s.num_stitches)
    for field in _FIELDS:
        result[f"stitched_bytes.{field}"] = int(getattr(s.stitched_bytes, field))
    return dict(sorted(result.items()))


def summary(device: _device_cls | str | None = None) -> str:
    """A table of the statistics, laid out as ``torch.cuda.memory_summary()``."""
    return read_text(lib.c10c_allocator_summary, _allocator(device))


def empty_cache(device: _device_cls | str | None = None) -> None:
    """Return the allocator's cached memory to the system."""
    check(lib.c10c_allocator_empty_cache(_allocator(device)))


def reset_peak_stats(device: _device_cls | str | None = None) -> None:
    """Set every statistic's peak to its current value."""
    check(lib.c10c_allocator_reset_peak_stats(_allocator(device)))


def set_config(config: str) -> None:
    """Configure the caching CPU allocator: ``"max_cached_mb:512,huge_pages:False"``.

    Keys: ``max_cached_mb``, ``huge_pages``, ``thread_cache_kb``, ``fill`` (``none``, ``zero``
    or ``junk``); an unknown key raises ``ValueError``. The environment variable
    ``C10C_CPU_ALLOC_CONF`` is read the same way.
    """
    if not isinstance(config, str):
        raise C10TypeError(f"config must be str, not {type(config).__name__}")
    check(lib.c10c_cpu_caching_allocator_configure(config.encode()))
