"""Replay a PyTorch memory snapshot through libc10c's caching allocator on a simulated device.

    python -m pyc10.replay SNAPSHOT [--settings S ...] [--device N] [--capacity SIZE]
                                    [--memory-fraction F] [--address-order auto|ascending|
                                    descending] [--max-input SIZE] [--json] [--plot OUT.png]
                                    [--compare] [--write-plan PATH]

SNAPSHOT is what ``torch.cuda.memory._dump_snapshot`` (or ``pyc10.cuda.memory._dump_snapshot``)
writes, or the same dict as JSON, either of them gzipped. The pickle is read without running
anything in it: the unpickler refuses every global and persistent id, so a pickle that would call
a function (such as ``os.system``) is refused before any of it runs. At most ``--max-input``
bytes are read (256 MiB unless raised; a gzip file is inflated as a stream that stops there, so a
gzip bomb costs no more), and every field the replay reads is checked for its type first: a file
that is not a snapshot is one line on stderr and exit status 2.

The snapshot's trace of one device (the one with the most events, or ``--device``) becomes a
replay: a prologue that rebuilds the segments as they stood when the recording began, under the
settings the snapshot records (their live blocks and cached free space in address order, the free
space allocated as fillers that are freed when the prologue ends), then the recorded window:
``alloc`` -> malloc of the requested size on the event's stream, ``free_completed`` -> free, each
run of ``segment_free`` / ``segment_unmap`` -> empty_cache, an ``oom`` -> a malloc of the size that
failed (on a device of the capacity PyTorch had: its reserved bytes then plus the free bytes the
event recorded, at the first one), expected to fail; the window goes on after it, as the program
that caught PyTorch's OutOfMemoryError did (a failure where PyTorch did not fail ends the replay,
its figures up to there). The starting state is read back from the snapshot's segments through
the trace: fixed segments by their base address, expandable segments as byte ranges of mapped
pages (a ``segment_map`` may extend a run of pages, an unmap may split one). New segments get
addresses in the order the recording's driver handed them out (inferred from the trace's
``segment_alloc`` addresses; PyTorch's best fit breaks ties between equal free blocks by
address). It runs on a simulated device (include/c10c/replay.h: fabricated addresses, no memory
touched), once per ``--settings`` (PYTORCH_CUDA_ALLOC_CONF syntax, checked by libc10c's parser;
by default the settings the snapshot records, and ``expandable_segments:True``), and prints
PyTorch's figures for the window beside libc10c's: device mallocs and frees (page maps and
unmaps for expandable segments), reserved bytes at the start, peak reserved, out-of-memory
failures; frees of blocks the snapshot never shows; and, loudly on stderr, anything in PyTorch's
column that cannot be right (reserved bytes below zero or above the device's capacity).
``--plot`` draws reserved bytes over the window as a PNG.

Beyond PyTorch's settings, the default table also replays the window with stitching
(``expandable_segments:True,stitching:True``: free pages mapped into a new range for a request no
free range fits) and under a plan of the recording itself ("planned": c10c_plan_make over every
request the replay makes, the prologue's blocks included, each from its allocation to its free,
read back through ``plan_file:PATH`` from the first request on), with utilization (peak live
requested bytes over peak reserved bytes) beside peak reserved. ``--write-plan PATH`` writes that
plan (for ``PYTORCH_CUDA_ALLOC_CONF``-style ``plan_file:PATH`` in libc10c's allocator) and says its
arena and lower bound (the peak of live bytes). ``--compare`` answers a user of plain PyTorch:
what each of PyTorch's settings (the defaults, ``expandable_segments:True``,
``max_split_size_mb`` and ``roundup_power2_divisions`` values, ``garbage_collection_threshold``
values under a memory fraction that allows what the defaults reserved) and of libc10c's
(stitching, online planning, the plan of the recording) would reserve for the recorded run: peak
reserved, utilization, device mallocs (segments plus page runs mapped), out-of-memory failures;
with ``--plot``, as bars.

SNAPSHOT may also be the project's replay CSV (bench/replay_trace's input, ``.csv`` or
``.csv.gz``: RMM's columns with Step): its allocations, frees, empty_cache and step_begin rows
(each a c10c_sim_device_step, which drives ``planning:True``) replayed from a cold device, with
PyTorch's recorded peak reserved and peak live bytes from ``pytorch_figures.json`` beside the
file when it names the trace (bench/traces). Exit status 0, 2 for a refused option, a snapshot
or CSV that cannot be read, a ``--write-plan`` path that cannot be written, or a recording with
nothing to plan.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any, NoReturn

from ._replay_input import (
    _MAX_INPUT,
    SnapshotError,
    _check,
    _size_text,
    is_csv,
    load,
    load_csv,
    parse_size,
)

__all__ = [
    "SnapshotError",
    "convert",
    "convert_csv",
    "load",
    "main",
    "make_plan",
    "parse_size",
    "pytorch_figures",
    "replay",
]

_SMALL = 1 << 20  # PyTorch's kSmallSize
_SMALL_SEGMENT = 2 << 20  # kSmallBuffer
_DEFAULT_CAPACITY = 1 << 40


def _round(size: int) -> int:
    return 512 if size < 512 else (size + 511) // 512 * 512


@dataclass
class Trace:
    """A snapshot converted to a replay.

    Ops are (kind, id, size, stream), kind "malloc", "free", "empty_cache", "step" (a step
    boundary, c10c_sim_device_step: only a replay CSV marks them) or "oom" (a malloc expected to
    fail).
    """

    device: int
    prologue: list[tuple[str, int, int, int]] = field(default_factory=list)
    fillers: list[int] = field(default_factory=list)
    window: list[tuple[str, int, int, int]] = field(default_factory=list)
    window_at: list[int] = field(default_factory=list)  # each window op's trace event index
    events: int = 0  # the trace's events
    expandable: bool = False
    capacity: int | None = None  # PyTorch's at an out-of-memory event
    recorded_settings: str = ""  # the allocator settings the snapshot records
    unknown_frees: int = 0
    # the driver's address order, from the recorded segment_alloc addresses: new segments above
    # the one before (ascending) and below it (descending)
    ascending_steps: int = 0
    descending_steps: int = 0
    csv: bool = False  # read from a replay CSV, not a snapshot

    @property
    def descending(self) -> bool:
        """Whether the driver handed out mostly descending addresses in this recording."""
        return self.descending_steps > self.ascending_steps


def _pick_device(snapshot: dict[str, Any], device: int | None) -> int:
    traces = snapshot["device_traces"]
    if device is not None:
        if not 0 <= device < len(traces):
            raise SnapshotError(f"the snapshot has no trace of device {device}")
        return device
    if not traces:
        raise SnapshotError("the snapshot has no device traces")
    return max(range(len(traces)), key=lambda d: len(traces[d]))


_Segments = dict[int, tuple[int, int, bool, bool]]


def _start_state(
    snapshot: dict[str, Any], device: int
) -> tuple[_Segments, dict[int, int], dict[int, int]]:
    """The device's state before its first trace event.

    Segments {address: (size, stream, small, expandable)}, live blocks {address: size} and
    their requested bytes {address: bytes}. A fixed segment is one cudaMalloc (segment_alloc and
    segment_free name its base); an expandable segment's snapshot entry is one contiguous run of
    mapped pages (PyTorch reports each run as a segment), and segment_map / segment_unmap events
    name any page range in it: those are tracked as byte ranges, so a map that extended a run,
    or an unmap that punched a hole in one, is undone exactly.
    """
    segments, mapped, live, requested = _end_state(snapshot, device)
    for e in reversed(snapshot["device_traces"][device]):
        action, size = e["action"], e["size"]
        addr = e.get("addr", 0)
        stream = e.get("stream", 0)
        if action == "alloc":
            live.pop(addr, None)
            requested.pop(addr, None)
        elif action == "free_completed":
            live[addr] = _round(size)
            requested[addr] = size
        elif action == "segment_alloc":
            segments.pop(addr, None)
        elif action == "segment_free":
            segments[addr] = (size, stream, size == _SMALL_SEGMENT, False)
        elif action == "segment_map":
            mapped.remove(addr, size)
        elif action == "segment_unmap":
            mapped.add(addr, size, stream, None)
    for base, (end, stream, small) in mapped.runs.items():
        segments[base] = (end - base, stream, small, True)
    return segments, live, requested


def _end_state(
    snapshot: dict[str, Any], device: int
) -> tuple[_Segments, _Ranges, dict[int, int], dict[int, int]]:
    """The device's state when the snapshot was taken.

    Fixed segments, mapped page ranges of expandable segments, live blocks and their requested
    bytes.
    """
    segments: _Segments = {}
    mapped = _Ranges()
    live: dict[int, int] = {}
    requested: dict[int, int] = {}
    for seg in snapshot["segments"]:
        if seg.get("device", device) != device:
            continue
        size = seg["total_size"]
        small = seg.get("segment_type", "large" if size != _SMALL_SEGMENT else "small") == "small"
        at = seg["address"]
        if seg.get("is_expandable", False):
            mapped.add(at, size, seg.get("stream", 0), small)
        else:
            segments[at] = (size, seg.get("stream", 0), small, False)
        for b in seg["blocks"]:
            addr = b.get("address", at)
            if b.get("state") in ("active_allocated", "active_pending_free"):
                live[addr] = b["size"]
                requested[addr] = b.get("requested_size", b["size"])
            at = addr + b["size"]
    return segments, mapped, live, requested


class _Ranges:
    """Disjoint byte ranges {start: (end, stream, small)}, adjacent ones of a kind joined."""

    def __init__(self) -> None:
        self.runs: dict[int, tuple[int, int, bool]] = {}

    def remove(self, at: int, size: int) -> None:
        """[at, at + size) is no longer in any range."""
        end = at + size
        for s, (e, stream, small) in list(self.runs.items()):
            if e <= at or s >= end:
                continue
            del self.runs[s]
            if s < at:
                self.runs[s] = (at, stream, small)
            if e > end:
                self.runs[end] = (e, stream, small)

    def covered(self, at: int, size: int) -> int:
        """The bytes of [at, at + size) in some range."""
        end = at + size
        return sum(max(0, min(e, end) - max(s, at)) for s, (e, *_) in self.runs.items())

    def add(self, at: int, size: int, stream: int, small: bool | None) -> None:
        """[at, at + size) is in a range; small None: of the kind of a range it touches."""
        self.remove(at, size)
        end = at + size
        before = next((s for s, (e, *_) in self.runs.items() if e == at), None)
        after = self.runs.get(end)
        if small is None:
            near = self.runs[before] if before is not None else after
            small = near[2] if near is not None else False
        if after is not None and after[1:] == (stream, small):
            end = after[0]
            del self.runs[at + size]
        if before is not None and self.runs[before][1:] == (stream, small):
            at = before
        self.runs[at] = (end, stream, small)


def _pieces(
    base: int, size: int, small: bool, live: dict[int, int], starts: list[int]
) -> list[tuple[int, int | None]]:
    """A segment's blocks at the start, address order: (size, live block's address or None).

    In a large segment a gap of at most 1 MiB joins the block before it (PyTorch leaves such a
    remainder in the block, as large blocks exceed 1 MiB), or the one after it at the segment's
    start; in a small one free space is cut in pieces of at most 1 MiB (small-pool requests).
    """
    # (size, address of the live block or None for free space), address order
    pieces: list[tuple[int, int | None]] = []
    at = base
    for addr in starts:
        if base <= addr < base + size:
            if addr > at:
                pieces.append((addr - at, None))
            pieces.append((live[addr], addr))
            at = addr + live[addr]
    if at < base + size:
        pieces.append((base + size - at, None))
    return _split_small(pieces) if small else _merge_large(pieces)


def _merge_large(pieces: list[tuple[int, int | None]]) -> list[tuple[int, int | None]]:
    """Large blocks exceed 1 MiB: a smaller gap belongs to a neighbour."""
    merged: list[tuple[int, int | None]] = []
    carry = 0
    for n, owner in pieces:
        if n <= _SMALL and owner is None:
            if merged:
                merged[-1] = (merged[-1][0] + n, merged[-1][1])
            else:
                carry += n
        else:
            merged.append((n + carry, owner))
            carry = 0
    if carry:
        merged.append((carry, None))
    return merged


def _split_small(pieces: list[tuple[int, int | None]]) -> list[tuple[int, int | None]]:
    """Small-pool fillers of at most 1 MiB each."""
    split: list[tuple[int, int | None]] = []
    for n, owner in pieces:
        full, rest = divmod(n, _SMALL) if owner is None else (0, n)
        if owner is None and rest == 0:
            full, rest = full - 1, _SMALL
        split += [(_SMALL, None)] * full + [(rest, owner)]
    return split


def convert(  # noqa: PLR0912, PLR0915 - one pass over the trace, one branch per action
    snapshot: dict[str, Any], device: int | None = None
) -> Trace:
    """The replay of one device's trace (see the module's description)."""
    _check(snapshot)
    dev = _pick_device(snapshot, device)
    segments, live, _ = _start_state(snapshot, dev)
    t = Trace(dev, expandable=any(s[3] for s in segments.values()))
    t.recorded_settings = _recorded_settings(snapshot)
    ids: dict[int, int] = {}  # PyTorch's address -> replay id of the block live there
    next_id = 0

    def new_id() -> int:
        nonlocal next_id
        next_id += 1
        return next_id

    bases = [e["addr"] for e in snapshot["device_traces"][dev] if e["action"] == "segment_alloc"]
    t.ascending_steps = sum(b > a for a, b in itertools.pairwise(bases))
    t.descending_steps = sum(b < a for a, b in itertools.pairwise(bases))
    starts = sorted(live)
    for base in sorted(segments):
        size, stream, small, expandable = segments[base]
        pieces = _pieces(base, size, small, live, starts)
        if not small and not expandable:  # a segment of exactly its size, cached
            i = new_id()
            t.prologue += [("malloc", i, size, stream), ("free", i, size, stream)]
        for n, owner in pieces:
            i = new_id()
            t.prologue.append(("malloc", i, n, stream))
            if owner is not None:
                ids[owner] = i
            else:
                t.fillers.append(i)
    reserved = sum(s[0] for s in segments.values())
    in_run = False
    for k, e in enumerate(snapshot["device_traces"][dev]):
        action, size = e["action"], e["size"]
        addr = e.get("addr", 0)
        stream = e.get("stream", 0)
        t.events = k + 1
        n = len(t.window)
        if action in ("segment_free", "segment_unmap"):
            reserved -= size
            if not in_run:
                t.window.append(("empty_cache", 0, 0, 0))
                t.window_at.append(k)
            in_run = True
            continue
        in_run = False
        if action in ("segment_alloc", "segment_map"):
            reserved += size
        elif action == "alloc":
            i = new_id()
            ids[addr] = i
            t.window.append(("malloc", i, size, stream))
        elif action == "free_completed":
            if addr in ids:
                t.window.append(("free", ids.pop(addr), size, stream))
            else:
                t.unknown_frees += 1
        elif action == "oom":
            t.window.append(("oom", new_id(), size, stream))
            if t.capacity is None:
                t.capacity = reserved + e["device_free"]
        t.window_at += [k] * (len(t.window) - n)
    return t


def convert_csv(rows: list[tuple[str, int, int, int, int]]) -> Trace:
    """The replay of a replay CSV's rows (bench/replay_trace's input; _replay_input.load_csv).

    No prologue: the CSV rebuilds whatever state it starts from itself (a layout form's step 0).
    A Pointer allocated again while live, or freed twice, is a SnapshotError.
    """
    t = Trace(0, events=len(rows), csv=True)
    ids: dict[int, int] = {}
    for k, (action, pointer, size, stream, _) in enumerate(rows):
        n = len(t.window)
        if action == "allocate":
            if pointer in ids:
                raise SnapshotError(
                    f"row {k + 1}: Pointer {pointer:#x} is allocated again while live"
                )
            ids[pointer] = k + 1
            t.window.append(("malloc", k + 1, size, stream))
        elif action == "free":
            if pointer in ids:
                t.window.append(("free", ids.pop(pointer), 0, stream))
            else:
                t.unknown_frees += 1
        elif action == "empty_cache":
            t.window.append(("empty_cache", 0, 0, 0))
        elif action == "step_begin":
            t.window.append(("step", 0, 0, 0))
        t.window_at += [k] * (len(t.window) - n)
    return t


def _csv_figures(t: Trace, path: str) -> dict[str, Any]:
    """PyTorch's column for a replay CSV: what the recording's figures beside it say.

    The traces of bench/traces carry PyTorch's figures in pytorch_figures.json next to them
    (keyed by the file name up to its first dot); without it the column is empty.
    """
    live = peak = 0
    sizes: dict[int, int] = {}
    for kind, i, size, _ in t.window:
        if kind == "malloc":
            sizes[i] = size
            live += size
            peak = max(peak, live)
        elif kind == "free":
            live -= sizes.pop(i, 0)
    f: dict[str, Any] = {"device": 0, "events": t.events, "oom": None, "ooms": None,
                         "oom_events": [], "series": [], "warnings": []}  # fmt: skip
    for key in ("device_mallocs", "device_frees", "maps", "unmaps", "reserved_at_start"):
        f[key] = None
    f["peak_reserved"] = None
    f["peak_live_requested"] = peak
    figures = os.path.join(os.path.dirname(os.path.abspath(path)), "pytorch_figures.json")
    name = os.path.basename(path).split(".")[0]
    try:
        with open(figures) as fp:
            recorded = json.load(fp)[name]["pytorch"]
        f["peak_reserved"] = int(recorded["pt_peak_reserved"])
        f["peak_live_requested"] = int(recorded["pt_peak_live_requested"])
        f["recorded"] = True
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return f


def _plan_ops(t: Trace) -> list[tuple[str, int, int, int]]:
    """Every op as a replay sees it: the prologue, its fillers freed, then the window."""
    return [*t.prologue, *(("free", i, 0, 0) for i in t.fillers), *t.window]


def plan_requests(t: Trace) -> tuple[list[int], list[int], list[int], list[int]]:
    """The requests of a replay (prologue blocks included) for c10c_plan_make.

    (sizes, streams, begins, ends): each malloc (and each allocation expected to fail) one
    request, from its op's position to that of the op that frees it (2^64 - 1: never).
    """
    sizes: list[int] = []
    streams: list[int] = []
    begins: list[int] = []
    ends: list[int] = []
    at: dict[int, int] = {}
    for k, (kind, i, size, stream) in enumerate(_plan_ops(t)):
        if kind in ("malloc", "oom"):
            at[i] = len(sizes)
            sizes.append(size)
            streams.append(stream)
            begins.append(k)
            ends.append((1 << 64) - 1)
        elif kind == "free" and i in at:
            ends[at.pop(i)] = k
    return sizes, streams, begins, ends


def make_plan(t: Trace, path: str | None) -> tuple[int, int, int]:
    """An offline plan of t's requests (plan_requests), written to path (a plan_file:PATH).

    (arena bytes, lower bound, requests): the lower bound is the peak of live bytes, each
    request rounded up to 512. SnapshotError when there is nothing to plan; OSError with the
    library's message when the file cannot be written.
    """
    from ._lib import ffi, lib

    sizes, streams, begins, ends = plan_requests(t)
    if not any(sizes):
        raise SnapshotError("the recording allocates nothing: there is nothing to plan")
    events = sorted(
        [(b, 1, _round(n)) for b, n in zip(begins, sizes, strict=True) if n]
        + [(e, 0, -_round(n)) for e, n in zip(ends, sizes, strict=True) if n and e < (1 << 64) - 1]
    )
    live = bound = 0
    for _, _, delta in events:
        live += delta
        bound = max(bound, live)
    arena = ffi.new("uint64_t *")
    status = lib.c10c_plan_make(
        arena,
        ffi.NULL,
        path.encode() if path is not None else ffi.NULL,
        0,
        len(sizes),
        ffi.new("uint64_t[]", sizes),
        ffi.new("int64_t[]", streams),
        ffi.new("uint64_t[]", begins),
        ffi.new("uint64_t[]", ends),
    )
    if status != lib.C10C_STATUS_OK:
        raise OSError(ffi.string(lib.c10c_last_error_message()).decode())
    return int(arena[0]), bound, len(sizes)


def pytorch_figures(  # noqa: PLR0912, PLR0915 - one pass over the trace, a branch per action
    snapshot: dict[str, Any], device: int | None = None, capacity: int | None = None
) -> dict[str, Any]:
    """What PyTorch did in the recorded window of one device.

    Segment mallocs and frees, page maps and unmaps, reserved bytes at the start and their peak
    (over the whole window, past out-of-memory events, as the program went on), peak live
    requested bytes, the series of reserved and allocated (requested) bytes after each event,
    the events that ran out of memory, and "warnings": what in the column cannot be right (bytes
    reserved below zero, below what is allocated, or above the device's capacity: the given
    one, or the one an out-of-memory event implies; a segment freed or a page range mapped that
    the reading says was not there), each a line.
    """
    _check(snapshot)
    dev = _pick_device(snapshot, device)
    segments, _, requested = _start_state(snapshot, dev)
    reserved = start = sum(s[0] for s in segments.values())
    live = sum(requested.values())
    sizes = dict(requested)
    f: dict[str, Any] = {
        "device": dev,
        "events": len(snapshot["device_traces"][dev]),
        "device_mallocs": 0,
        "device_frees": 0,
        "maps": 0,
        "unmaps": 0,
        "reserved_at_start": start,
        "peak_reserved": start,
        "peak_live_requested": live,
        "oom": None,  # the first: the size asked for, reserved plus free bytes then
        "ooms": 0,
        "oom_events": [],  # the trace indices of out-of-memory events
    }
    series: list[tuple[int, int]] = [(reserved, live)]
    names = {
        "segment_alloc": "device_mallocs",
        "segment_free": "device_frees",
        "segment_map": "maps",
        "segment_unmap": "unmaps",
    }
    fixed = {a for a, seg in segments.items() if not seg[3]}
    mapped = _Ranges()
    for a, seg in segments.items():
        if seg[3]:
            mapped.add(a, seg[0], seg[1], seg[2])
    odd: list[str] = []
    lowest = (start, 0)  # reserved bytes and the event after which it was so
    for k, e in enumerate(snapshot["device_traces"][dev]):
        action, size = e["action"], e["size"]
        addr = e.get("addr", 0)
        if action in names:
            f[names[action]] += 1
            reserved += size if action in ("segment_alloc", "segment_map") else -size
            if action == "segment_alloc":
                fixed.add(addr)
            elif action == "segment_free" and addr not in fixed:
                odd.append(f"event {k} frees a segment at {addr:#x} that was not there")
            elif action == "segment_free":
                fixed.discard(addr)
            elif action == "segment_map" and mapped.covered(addr, size):
                odd.append(f"event {k} maps pages at {addr:#x} that were mapped already")
            elif action == "segment_unmap" and mapped.covered(addr, size) != size:
                odd.append(f"event {k} unmaps pages at {addr:#x} that were not mapped")
            if action == "segment_map":
                mapped.add(addr, size, 0, False)
            elif action == "segment_unmap":
                mapped.remove(addr, size)
        elif action == "alloc":
            sizes[addr] = size
            live += size
        elif action == "free_completed":
            live -= sizes.pop(addr, size)
        elif action == "oom":
            f["ooms"] += 1
            f["oom_events"].append(k)
            if f["oom"] is None:
                f["oom"] = {"size": size, "capacity": reserved + e["device_free"]}
        f["peak_reserved"] = max(f["peak_reserved"], reserved)
        f["peak_live_requested"] = max(f["peak_live_requested"], live)
        lowest = min(lowest, (reserved, k))
        series.append((reserved, live))
    f["series"] = series
    f["warnings"] = _sanity(f, series, lowest, odd, capacity)
    return f


def _sanity(
    f: dict[str, Any],
    series: list[tuple[int, int]],
    lowest: tuple[int, int],
    odd: list[str],
    capacity: int | None,
) -> list[str]:
    """What in PyTorch's column read from the snapshot cannot be right, a line each."""
    warnings = []
    if lowest[0] < 0:
        warnings.append(
            f"reserved bytes fall to {lowest[0]} after event {lowest[1]}: the snapshot's"
            " segments do not account for the trace's segment events"
        )
    over = next(((k, r, a) for k, (r, a) in enumerate(series) if a > r), None)
    if over is not None:
        warnings.append(
            f"{_size_text(over[2])} allocated but only {_size_text(over[1])} reserved"
            f" after {over[0]} events"
        )
    limits = []
    if capacity is not None:
        limits.append((capacity, "the device's capacity (--capacity)"))
    if f["oom"] is not None:
        limits.append((f["oom"]["capacity"], "the capacity its first out-of-memory event implies"))
    for limit, what in limits:
        if f["peak_reserved"] > limit:
            warnings.append(
                f"PyTorch's reserved bytes peak at {_size_text(f['peak_reserved'])}, above"
                f" {what}, {_size_text(limit)}"
            )
    if odd:
        more = f" (and {len(odd) - 1} more)" if len(odd) > 1 else ""
        warnings.append(f"{odd[0]}{more}")
    return warnings


def replay(  # noqa: PLR0912, PLR0915 - prologue, window, figures in one place
    t: Trace,
    settings: str = "",
    capacity: int | None = None,
    descending: bool | None = None,
    memory_fraction: float | None = None,
) -> dict[str, Any]:
    """Replays t on a simulated device.

    libc10c's figures for the window (as pytorch_figures'), or "error" with the message where
    the settings are refused or the prologue fails. New segments get addresses above the last
    one, or below it with descending (None: the order the recording's driver used, t.descending:
    PyTorch's best fit breaks ties between equal free blocks by address, so the order decides
    which block a request takes).
    """
    from ._lib import ffi, lib  # only a replay needs libc10c

    cap = capacity or t.capacity or _DEFAULT_CAPACITY
    out: dict[str, Any] = {"settings": settings, "capacity": cap}
    ptr = ffi.new("c10c_sim_device **")
    if descending is None:
        descending = t.descending
    out["addresses"] = "descending" if descending else "ascending"
    flags = lib.C10C_SIM_DESCENDING if descending else 0
    # the recorded state is rebuilt under the recorded settings (where libc10c has them all)
    # ... except under a plan file: its plan covers the prologue's blocks too
    layout = settings if "plan_file:" in settings else t.recorded_settings
    if lib.c10c_sim_device_new(ptr, cap, layout.encode(), flags) != lib.C10C_STATUS_OK:
        layout = settings
        if lib.c10c_sim_device_new(ptr, cap, settings.encode(), flags) != lib.C10C_STATUS_OK:
            out["error"] = ffi.string(lib.c10c_last_error_message()).decode()
            return out
    dev = ffi.gc(ptr[0], lib.c10c_sim_device_destroy)
    stats = ffi.new("c10c_sim_device_stats *")
    addr = ffi.new("uint64_t *")
    blocks: dict[int, int] = {}
    sizes: dict[int, int] = {}  # requested bytes of each live block
    live = peak_live = 0

    def figures() -> Any:
        stats.struct_size = ffi.sizeof("c10c_sim_device_stats")
        lib.c10c_sim_device_get_stats(stats, dev)
        return stats

    def run(op: tuple[str, int, int, int]) -> str | None:
        nonlocal live, peak_live
        kind, i, size, stream = op
        if kind == "empty_cache":
            lib.c10c_sim_device_empty_cache(dev)
        elif kind == "step":
            lib.c10c_sim_device_step(dev)
        elif kind == "free":
            lib.c10c_sim_device_free(dev, blocks.pop(i, 0))
            live -= sizes.pop(i, 0)
        elif lib.c10c_sim_device_malloc(addr, dev, size, stream) == lib.C10C_STATUS_OK:
            blocks[i] = addr[0]
            sizes[i] = size
            live += size
            peak_live = max(peak_live, live)
        else:
            message: str = ffi.string(lib.c10c_last_error_message()).decode()
            # the simulated device is the engine's device 0; the snapshot's may be another
            return re.sub(r"\b(GPU|device) 0\b", rf"\1 {t.device}", message)
        return None

    for op in t.prologue:
        failure = run(op)
        if failure is not None:
            out["error"] = f"the prologue failed: {failure}"
            return out
    for i in t.fillers:
        run(("free", i, 0, 0))
    if layout != settings and lib.c10c_sim_device_configure(dev, settings.encode()) != 0:
        out["error"] = ffi.string(lib.c10c_last_error_message()).decode()
        return out
    if memory_fraction is not None:  # for the window
        if lib.c10c_sim_device_set_memory_fraction(dev, memory_fraction) != lib.C10C_STATUS_OK:
            out["error"] = ffi.string(lib.c10c_last_error_message()).decode()
            return out
    s = figures()
    before = (s.device_mallocs, s.device_frees, s.maps, s.unmaps)
    if layout == settings and "plan_file:" in settings:  # all the plan's: its arena was made first
        before = (0, 0, 0, 0)
    out["reserved_at_start"] = s.reserved
    lib.c10c_sim_device_reset_peaks(dev)
    peak_live = live
    points = [(0, s.reserved, s.allocated)]  # (trace events done, reserved, allocated)
    end = t.events
    out["oom"] = None  # the first failure
    out["ooms"] = out["ooms_not_reproduced"] = 0
    out["oom_events"] = []  # the trace indices where an allocation failed here
    for op, k in zip(t.window, t.window_at, strict=True):
        failure = run(op)
        if op[0] == "oom" and failure is None:  # it fitted here: the program never had it
            out["ooms_not_reproduced"] += 1
            run(("free", op[1], 0, 0))
        elif failure is not None:
            out["ooms"] += 1
            out["oom_events"].append(k)
            if out["oom"] is None:
                out["oom"] = {"size": op[2], "expected": op[0] == "oom", "message": failure}
            if op[0] != "oom":  # PyTorch did not fail here: the figures end at the failure
                end = k
                break
        s = figures()
        points.append((k + 1, s.reserved, s.allocated))
    series: list[tuple[int, int]] = []  # after each trace event, as pytorch_figures'
    for j, (k, r, a) in enumerate(points):
        upto = points[j + 1][0] if j + 1 < len(points) else end + 1
        series += [(r, a)] * (upto - k)
    s = figures()
    out["device_mallocs"] = s.device_mallocs - before[0]
    out["device_frees"] = s.device_frees - before[1]
    out["maps"] = s.maps - before[2]
    out["unmaps"] = s.unmaps - before[3]
    out["peak_reserved"] = s.peak_reserved
    out["peak_live_requested"] = peak_live
    out["utilization"] = peak_live / s.peak_reserved if s.peak_reserved else None
    out["plan"] = {
        "arena_bytes": s.plan_arena_bytes,
        "served": s.plan_served,
        "fallbacks": s.plan_fallbacks,
        "rebuilds": s.plan_rebuilds,
        "drops": s.plan_drops,
    }
    out["num_stitches"] = s.num_stitches
    out["peak_stitched_bytes"] = s.peak_stitched_bytes
    out["series"] = series
    return out


def _recorded_settings(snapshot: dict[str, Any]) -> str:
    s = snapshot.get("allocator_settings")
    if not isinstance(s, dict):
        return ""
    conf = s.get("PYTORCH_CUDA_ALLOC_CONF")
    if isinstance(conf, str):
        return conf
    parts = []
    if s.get("expandable_segments"):
        parts.append("expandable_segments:True")
    split = s.get("max_split_size")
    if isinstance(split, int) and split > 0 and split < (1 << 62):
        parts.append(f"max_split_size_mb:{split >> 20}")
    return ",".join(parts)


def _gib(n: int) -> str:
    return f"{n / (1 << 30):.3f} GiB"


def _name(r: dict[str, Any]) -> str:
    name: str = r.get("name") or r["settings"] or "(defaults)"
    return name


def _ratio(x: Any) -> str:
    return "-" if x is None else f"{x:.3f}"


def _pt_utilization(pt: dict[str, Any]) -> float | None:
    if not pt.get("peak_reserved") or pt.get("peak_live_requested") is None:
        return None
    return float(pt["peak_live_requested"] / pt["peak_reserved"])


def _table(pt: dict[str, Any], runs: list[dict[str, Any]], device: int) -> str:
    rows = [("", "PyTorch", *(_name(r) for r in runs))]

    def row(name: str, key: str, fmt: Any = str) -> None:
        vals = [fmt(r[key]) if "error" not in r and r.get(key) is not None else "-" for r in runs]
        rows.append((name, fmt(pt[key]) if pt.get(key) is not None else "-", *vals))

    row("device mallocs", "device_mallocs")
    row("device frees", "device_frees")
    row("page maps", "maps")
    row("page unmaps", "unmaps")
    row("reserved at start", "reserved_at_start", _gib)
    row("peak reserved", "peak_reserved", _gib)
    pt = dict(pt, utilization=_pt_utilization(pt))
    row("utilization", "utilization", _ratio)
    row("out of memory", "ooms")
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.append("utilization: peak live requested bytes / peak reserved bytes")
    for r in runs:
        name = _name(r)
        if "error" in r:
            lines.append(f"{name}: {r['error']}")
        elif r.get("oom"):
            o = r["oom"]
            if o["expected"]:
                lines.append(
                    f"{name}: out of memory at {o['size']} bytes as PyTorch: {o['message']}"
                )
            else:
                lines.append(
                    f"{name}: out of memory at {o['size']} bytes where PyTorch was not"
                    f" (figures up to there): {o['message']}"
                )
        if r.get("ooms_not_reproduced"):
            lines.append(
                f"{name}: {r['ooms_not_reproduced']} of PyTorch's out-of-memory failures on"
                f" GPU {device} did not happen here"
            )
    return "\n".join(lines)


_STITCHED = "expandable_segments:True,stitching:True"


def _planned(
    t: Trace, capacity: int | None, descending: bool | None, fraction: float | None
) -> dict[str, Any]:
    """The replay under a plan made from t's own requests (plan_file: the run known ahead)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "recording.plan")
        try:
            arena, bound, _ = make_plan(t, path)
        except (OSError, SnapshotError) as e:
            return {"settings": "plan_file", "name": "planned", "error": f"no plan: {e}"}
        r = replay(t, f"plan_file:{path}", capacity, descending, fraction)
    r.update(name="planned", settings="plan_file:(a plan of the recording)")
    r["plan_made"] = {"arena_bytes": arena, "lower_bound": bound}
    return r


# What a user of plain PyTorch can set (PYTORCH_CUDA_ALLOC_CONF), then what only libc10c has.
_PYTORCH_SETTINGS = [
    "",
    "expandable_segments:True",
    "max_split_size_mb:128",
    "max_split_size_mb:512",
    "roundup_power2_divisions:4",
    "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]",
    "garbage_collection_threshold:0.6",  # these act only under a memory fraction
    "garbage_collection_threshold:0.8",
]
# (stream_ordered_reuse is not among them: it needs events and stream waits, which a simulated
# device has not got)
_OUR_SETTINGS = [_STITCHED, "planning:True"]


def _compare(
    t: Trace, capacity: int | None, descending: bool | None, fraction: float | None
) -> list[dict[str, Any]]:
    """Every setting of --compare replayed over t (see _compare_table)."""
    runs: list[dict[str, Any]] = []
    for settings in _PYTORCH_SETTINGS:
        f = fraction
        if f is None and "garbage_collection_threshold" in settings and runs:
            # the allowed bytes: what PyTorch's defaults reserved at their peak
            cap = capacity or t.capacity or _DEFAULT_CAPACITY
            f = min(1.0, runs[0].get("peak_reserved", cap) / cap)
        r = replay(t, settings, capacity, descending, f)
        r["by"] = "PyTorch"
        if f is not None:
            r["memory_fraction"] = f
        runs.append(r)
    for settings in _OUR_SETTINGS:
        r = replay(t, settings, capacity, descending, fraction)
        r["by"] = "libc10c"
        runs.append(r)
    r = _planned(t, capacity, descending, fraction)
    r["by"] = "libc10c"
    r["name"] = "planned from the recording"
    runs.append(r)
    return runs


def _compare_name(r: dict[str, Any]) -> str:
    name = _name(r)
    if r.get("memory_fraction") is not None and "garbage_collection" in name:
        name += f" (limit {_gib(round(r['memory_fraction'] * r['capacity']))})"
    return name


def _compare_table(pt: dict[str, Any], runs: list[dict[str, Any]]) -> str:
    head = ("setting", "of", "peak reserved", "utilization", "device mallocs", "out of memory")
    recorded = [
        "as recorded",
        "PyTorch",
        _gib(pt["peak_reserved"]) if pt.get("peak_reserved") is not None else "-",
        _ratio(_pt_utilization(pt)),
        "-" if pt.get("device_mallocs") is None else str(pt["device_mallocs"] + pt["maps"]),
        "-" if pt.get("ooms") is None else str(pt["ooms"]),
    ]
    rows = [head, tuple(recorded)]
    notes = []
    for r in runs:
        if "error" in r:
            rows.append((_compare_name(r), r["by"], "-", "-", "-", "-"))
            notes.append(f"{_compare_name(r)}: {r['error']}")
            continue
        rows.append(
            (
                _compare_name(r),
                r["by"],
                _gib(r["peak_reserved"]),
                _ratio(r["utilization"]),
                str(r["device_mallocs"] + r["maps"]),
                str(r["ooms"]) + ("" if r["oom"] is None or r["oom"]["expected"] else " (ends)"),
            )
        )
    widths = [max(len(r[k]) for r in rows) for k in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    ok = [r for r in runs if "error" not in r and (r["oom"] is None or r["oom"]["expected"])]
    if ok:
        best = min(ok, key=lambda r: r["peak_reserved"])
        lines.append(
            f"least reserved: {_compare_name(best)} ({best['by']}), {_gib(best['peak_reserved'])}"
        )
    lines.append(
        "utilization: peak live requested bytes / peak reserved bytes; device mallocs: segments"
        " allocated plus page runs mapped"
    )
    return "\n".join(lines + notes)


class _Parser(argparse.ArgumentParser):
    """argparse with a refusal on one line: the error, and where the usage is."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _size_arg(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _fraction_arg(text: str) -> float:
    try:
        fraction = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= fraction <= 1:  # torch.cuda.set_per_process_memory_fraction's rule (NaN too)
        raise argparse.ArgumentTypeError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    return fraction


def _device_arg(text: str) -> int:
    try:
        device = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a device index") from None
    if device < 0:
        raise argparse.ArgumentTypeError(f"a device index is at least 0, not {device}")
    return device


def _settings_error(settings: str) -> str | None:
    """What libc10c's settings parser says of settings, or None where it takes them."""
    from ._lib import ffi, lib

    ptr = ffi.new("c10c_sim_device **")
    if lib.c10c_sim_device_new(ptr, 1 << 30, settings.encode(), 0) != lib.C10C_STATUS_OK:
        message: str = ffi.string(lib.c10c_last_error_message()).decode()
        return message
    lib.c10c_sim_device_destroy(ptr[0])
    return None


def _parser() -> _Parser:
    p = _Parser(
        prog="python -m pyc10.replay",
        description="Replay a PyTorch memory snapshot through libc10c's caching allocator on a"
        " simulated device, PyTorch's figures beside libc10c's.",
        epilog="Sizes take units: 80GiB, 80GB, 512MiB, or plain bytes. Exit status: 0 on a"
        " replay, 2 for a refused option or a snapshot that cannot be read.",
    )
    p.add_argument(
        "snapshot",
        help="a pickle from _dump_snapshot, or the same as JSON, or a replay CSV (.csv; gzip ok)",
    )
    p.add_argument(
        "--settings",
        action="append",
        metavar="S",
        help="allocator settings in PYTORCH_CUDA_ALLOC_CONF syntax (repeatable; default: the"
        " recorded ones and expandable_segments:True)",
    )
    p.add_argument(
        "--device", type=_device_arg, help="the device whose trace to replay (default: busiest)"
    )
    p.add_argument(
        "--capacity",
        type=_size_arg,
        metavar="SIZE",
        help="device memory (default: what PyTorch had at an out-of-memory event, else 1 TiB)",
    )
    p.add_argument(
        "--memory-fraction",
        type=_fraction_arg,
        metavar="F",
        help="set_per_process_memory_fraction (garbage_collection_threshold acts only with it)",
    )
    order = p.add_mutually_exclusive_group()
    order.add_argument(
        "--address-order",
        choices=("auto", "ascending", "descending"),
        default="auto",
        help="the order of new segments' addresses (default auto: the recording driver's, from"
        " the snapshot's segment addresses)",
    )
    order.add_argument(
        "--descending",
        dest="address_order",
        action="store_const",
        const="descending",
        help="the same as --address-order descending",
    )
    p.add_argument(
        "--max-input",
        type=_size_arg,
        default=_MAX_INPUT,
        metavar="SIZE",
        help=f"read at most this much (after gunzip; default {_size_text(_MAX_INPUT)})",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--plot", metavar="PNG", help="draw reserved bytes over the window")
    p.add_argument(
        "--compare",
        action="store_true",
        help="what each of PyTorch's settings and libc10c's would reserve for this run",
    )
    p.add_argument(
        "--write-plan",
        metavar="PATH",
        help="write the plan of the recorded requests for plan_file:PATH, and stop",
    )
    return p


def _check_plot_path(p: _Parser, path: str, option: str = "--plot") -> None:
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        p.error(f"argument {option}: {path} is a folder, not a file name")
    if not os.path.isdir(folder):
        p.error(f"argument {option}: no folder {folder}")
    if not os.access(folder, os.W_OK):
        p.error(f"argument {option}: cannot write into {folder}")


def _order_note(t: Trace, order: str) -> str:
    steps = t.ascending_steps + t.descending_steps
    if order != "auto":
        return f"addresses {order} (--address-order)"
    if t.csv:
        return "addresses ascending"
    if steps == 0:
        return "addresses ascending (the snapshot records no new segments to infer them from)"
    most = max(t.ascending_steps, t.descending_steps)
    return (
        f"addresses {'descending' if t.descending else 'ascending'} as the recording's driver"
        f" ({most} of {steps} new segments {'below' if t.descending else 'above'} the one before)"
    )


def _load(args: argparse.Namespace) -> tuple[Trace, dict[str, Any]]:
    """The replay and PyTorch's column, from a snapshot or a replay CSV."""
    if is_csv(args.snapshot):
        t = convert_csv(load_csv(args.snapshot, args.max_input))
        return t, _csv_figures(t, args.snapshot)
    snapshot = load(args.snapshot, args.max_input)
    pt = pytorch_figures(snapshot, args.device, args.capacity)
    return convert(snapshot, args.device), pt


def _write_plan(t: Trace, path: str) -> int:
    try:
        arena, bound, n = make_plan(t, path)
    except SnapshotError as e:
        print(f"pyc10.replay: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"pyc10.replay: cannot write the plan to {path}: {e}", file=sys.stderr)
        return 2
    print(
        f"{path}: a plan of {n} requests for plan_file:{path}; arena {_gib(arena)} ({arena} bytes),"
        f" lower bound {_gib(bound)} ({bound} bytes: the peak of live bytes, 512-byte rounded)"
    )
    return 0


def _plot_compare(path: str, t: Trace, pt: dict[str, Any], runs: list[dict[str, Any]]) -> None:
    from ._png import bar_chart, setting_color

    gib = float(1 << 30)
    bars = []
    if pt.get("peak_reserved") is not None:
        util = _ratio(_pt_utilization(pt))
        bars.append(("as recorded", pt["peak_reserved"] / gib, (60, 60, 60), f"util {util}"))
    for r in runs:
        value = r["peak_reserved"] / gib if "error" not in r else math.nan
        note = "error" if "error" in r else f"util {_ratio(r['utilization'])}"
        if "error" not in r and r["ooms"]:
            note += " oom"
        color = setting_color(r["settings"])
        bars.append((_compare_name(r)[:48], value, color, note))
    bar_chart(path, f"GPU {t.device}: peak reserved per setting", bars, xlabel="GiB")


def main(argv: list[str] | None = None) -> int:  # noqa: PLR0912, PLR0915 - a branch per option
    """The command line; returns the exit status (2 for a refused option or snapshot)."""
    p = _parser()
    args = p.parse_args(argv)
    if args.plot:
        _check_plot_path(p, args.plot)
    if args.write_plan:
        _check_plot_path(p, args.write_plan, "--write-plan")
    if args.compare and args.settings is not None:
        p.error("argument --compare: not allowed with argument --settings (it tries its own)")
    for s in args.settings or []:
        error = _settings_error(s)
        if error is not None:
            p.error(f"argument --settings: {s!r}: {error}")
    try:
        t, pt = _load(args)
    except SnapshotError as e:
        print(f"pyc10.replay: {e}", file=sys.stderr)
        return 2
    if args.write_plan:
        return _write_plan(t, args.write_plan)
    order = args.address_order
    descending = None if order == "auto" else order == "descending"
    for w in pt["warnings"]:
        print(f"pyc10.replay: WARNING: PyTorch's column for GPU {t.device}: {w}", file=sys.stderr)
    if args.compare:
        runs = _compare(t, args.capacity, descending, args.memory_fraction)
        if args.plot:
            try:
                _plot_compare(args.plot, t, pt, runs)
            except OSError as e:
                print(f"pyc10.replay: cannot write {args.plot}: {e.strerror or e}", file=sys.stderr)
                return 2
        if args.json:
            print(json.dumps([{k: v for k, v in r.items() if k != "series"} for r in runs]))
        else:
            what = f"a replay CSV of {pt['events']} rows" if t.csv else f"GPU {t.device}"
            print(f"{args.snapshot}: {what}: what each setting would reserve for this run"
                  " (simulated device)")  # fmt: skip
            print(_compare_table(pt, runs))
        return 0
    settings = args.settings
    extra = []
    if settings is None:
        recorded = t.recorded_settings
        settings = [recorded]
        if "expandable_segments:true" not in recorded.lower().replace(" ", ""):
            settings.append("expandable_segments:True")
        settings.append(_STITCHED)
        extra = [_planned(t, args.capacity, descending, args.memory_fraction)]
    runs = [replay(t, s, args.capacity, descending, args.memory_fraction) for s in settings]
    runs += extra
    if args.plot:
        from ._png import Series, line_chart, setting_color

        gib = float(1 << 30)
        series = [
            Series("PyTorch reserved", [r / gib for r, _ in pt["series"]], (60, 60, 60), 9,
                   marks=pt["oom_events"]),
            Series("PyTorch allocated", [a / gib for _, a in pt["series"]], (165, 165, 165), 2,
                   dashed=True),
        ] if pt["series"] else []  # fmt: skip
        # each line thinner than the one drawn before it: where lines agree, all show, nested
        for width, r in zip(itertools.count(5, -2), [r for r in runs if "series" in r]):
            name = f"libc10c {r.get('name') or r['settings'] or 'defaults'}"
            values = [x / gib for x, _ in r["series"]]
            color = setting_color(r["settings"])
            series.append(Series(name, values, color, max(width, 1), marks=r["oom_events"]))
        title = f"GPU {t.device}: reserved memory, {pt['events']} events"
        try:
            line_chart(args.plot, title, series, xlabel="trace event", ylabel="GiB")
        except OSError as e:
            print(f"pyc10.replay: cannot write {args.plot}: {e.strerror or e}", file=sys.stderr)
            return 2
    if args.json:
        result = {
            "pytorch": {k: v for k, v in pt.items() if k != "series"},
            "libc10c": [{k: v for k, v in r.items() if k != "series"} for r in runs],
            "unknown_frees": t.unknown_frees,
            "addresses": _order_note(t, order),
        }
        print(json.dumps(result, indent=1))
    else:
        if t.csv:
            print(f"{args.snapshot}: a replay CSV of {pt['events']} rows; {_order_note(t, order)}")
        else:
            print(
                f"{args.snapshot}: GPU {t.device}, {pt['events']} events; {_order_note(t, order)}"
            )
        print(_table(pt, runs, t.device))
        if t.unknown_frees and t.csv:
            print(f"{t.unknown_frees} frees of Pointers the CSV never allocated: skipped")
        elif t.unknown_frees:
            print(
                f"{t.unknown_frees} frees of blocks the snapshot never shows allocated (allocated"
                " before the recording began, in no recorded segment): skipped"
            )
    return 0


def _run() -> int:
    """main() as a command: a closed pipe (| head) ends it quietly, as Ctrl-C does."""
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader went away: nothing more to say, and no traceback at exit's flush either
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130
    return status


if __name__ == "__main__":
    sys.exit(_run())
