"""A memory snapshot (or a replay CSV) as the requests every replay of pyc10.replay makes.

One model behind every column: the blocks alive when recording began are requests at time zero,
then the recorded window's allocations and frees. A replay under PyTorch's settings starts from
the segments PyTorch had then (the prologue: live blocks and cached free space rebuilt in address
order, fillers freed when it ends), so that the recorded settings give PyTorch's figures; a plan
of the recording places the same requests from a cold start (``request_ops``): the blocks alive
at the start, then the window, exactly the rows of the packed replay CSV (``write_trace``) that
bench/replay_trace reads, so that ``--write-plan``, the planned column and ``replay_trace
--plan-from`` make one plan.
"""

from __future__ import annotations

import gzip
import io
import itertools
from dataclasses import dataclass, field
from typing import Any

from ._replay_input import SnapshotError, _check, write_atomically

_SMALL = 1 << 20  # PyTorch's kSmallSize
_SMALL_SEGMENT = 2 << 20  # kSmallBuffer
# The most small-pool memory a snapshot may hold when recording began: the replay rebuilds its
# free space as requests of at most 1 MiB each, every setting replayed, so a claimed size is as
# many requests as MiB (4 GiB: 4,096 of them, some seconds for the whole table; PyTorch's small
# pool holds blocks under 1 MiB, and 4 GiB of them is 2,048 fixed segments of 2 MiB)
_MAX_SMALL_POOL = 4 << 30
# The most memory a recorded device may hold (a simulated device spans it, and an expandable
# segment's failed request walks a page table of all of it): _replay_sim.UNLIMITED
_MAX_DEVICE = 1 << 44

Op = tuple[str, int, int, int]


def _round(size: int) -> int:
    return 512 if size < 512 else (size + 511) // 512 * 512


@dataclass
class Trace:
    """A snapshot converted to a replay.

    Ops are (kind, id, size, stream), kind "malloc", "free", "empty_cache", "step" (a step
    boundary, c10c_sim_device_step: only a replay CSV marks them) or "oom" (a malloc expected to
    fail). ``live`` are the blocks alive when recording began, (id, requested bytes, stream) in
    address order: the prologue allocates them (with the blocks' own sizes, among the fillers
    that rebuild the free space), a cold start (``request_ops``) as requests of their own.
    """

    device: int
    prologue: list[tuple[str, int, int, int]] = field(default_factory=list)
    fillers: list[int] = field(default_factory=list)
    window: list[tuple[str, int, int, int]] = field(default_factory=list)
    window_at: list[int] = field(default_factory=list)  # each window op's trace event index
    events: int = 0  # the trace's events
    expandable: bool = False
    capacity: int | None = None  # PyTorch's at an out-of-memory event
    live: list[tuple[int, int, int]] = field(default_factory=list)
    requested: dict[int, int] = field(default_factory=dict)  # prologue id -> requested bytes
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
        busy = [d for d, t in enumerate(traces) if t]
        if not 0 <= device < len(traces) or not traces[device]:
            has = (
                f"it has trace events for device{'s' if len(busy) > 1 else ''}"
                f" {', '.join(map(str, busy))}"
                if busy
                else "it has no trace events at all"
            )
            raise SnapshotError(f"the snapshot has no trace of device {device}: {has}")
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
    segments, live, requested = _start_state(snapshot, dev)
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
    odd = next(
        (a for a, s in segments.items() if s[2] and not s[3] and s[0] != _SMALL_SEGMENT), None
    )
    if odd is not None:
        raise SnapshotError(
            f"not a memory snapshot: the small-pool segment at {odd:#x} holds {segments[odd][0]}"
            f" bytes, where PyTorch's hold {_SMALL_SEGMENT} (kSmallBuffer)"
        )
    small_pool = sum(s[0] for s in segments.values() if s[2])
    if small_pool > _MAX_SMALL_POOL:
        raise SnapshotError(
            f"not a memory snapshot: its small-pool segments hold {small_pool} bytes, more than"
            f" {_MAX_SMALL_POOL >> 30} GiB: as many blocks under 1 MiB as no program keeps"
        )
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
                t.requested[i] = requested.get(owner, n)
                t.live.append((i, t.requested[i], stream))
            else:
                t.fillers.append(i)
    reserved = sum(s[0] for s in segments.values())
    if reserved > _MAX_DEVICE:
        raise SnapshotError(
            f"not a memory snapshot: its segments hold {reserved} bytes, more than any GPU"
            f" ({_MAX_DEVICE >> 40} TiB)"
        )
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
                if t.capacity > _MAX_DEVICE:
                    raise SnapshotError(
                        f"not a memory snapshot: its out-of-memory event {k} says the GPU holds"
                        f" {t.capacity} bytes, more than any GPU ({_MAX_DEVICE >> 40} TiB)"
                    )
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


def cold_ops(t: Trace) -> tuple[list[Op], list[tuple[Op, int]]]:
    """A cold start's ops: what comes before the window, and the window with its event indices.

    Before it, a step marker, the blocks alive when recording began, a step marker (nothing for
    a replay CSV, which rebuilds its own start); in it, an allocation that failed in the
    recording is followed by its free (the program went on without it: a request alive for an
    instant).
    """
    pre: list[Op] = []
    if not t.csv:
        live: list[Op] = [("malloc", i, size, stream) for i, size, stream in t.live]
        pre = [("step", 0, 0, 0), *live, ("step", 0, 0, 0)]
    window: list[tuple[Op, int]] = []
    for op, k in zip(t.window, t.window_at, strict=True):
        window.append((op, k))
        if op[0] == "oom":
            window.append((("free", op[1], 0, op[3]), k))
    return pre, window


def request_ops(t: Trace) -> list[tuple[Op, int]]:
    """Every request of the one model with its time, as a cold start replays it (cold_ops).

    A replay CSV's rows at their row positions (bench/replay_trace's event indices); a
    snapshot's packed rows (write_trace's "packed" form) at theirs.
    """
    pre, window = cold_ops(t)
    if t.csv:
        return window
    return [(op, k) for k, op in enumerate([*pre, *(op for op, _ in window)])]


def plan_requests(t: Trace) -> tuple[list[int], list[int], list[int], list[int]]:
    """The requests of the one model for c10c_plan_make (request_ops).

    (sizes, streams, begins, ends): each malloc (and each allocation expected to fail) one
    request, from its time to that of the op that frees it (2^64 - 1: never).
    """
    sizes: list[int] = []
    streams: list[int] = []
    begins: list[int] = []
    ends: list[int] = []
    at: dict[int, int] = {}
    for (kind, i, size, stream), k in request_ops(t):
        if kind in ("malloc", "oom"):
            at[i] = len(sizes)
            sizes.append(size)
            streams.append(stream)
            begins.append(k)
            ends.append((1 << 64) - 1)
        elif kind == "free" and i in at:
            ends[at.pop(i)] = k
    return sizes, streams, begins, ends


_CSV_HEADER = "Thread,Time,Action,Pointer,Size,Stream,Step,Tag,Phase\n"
_CSV_ACTION = {"malloc": "allocate", "oom": "allocate", "free": "free",
               "empty_cache": "empty_cache", "step": "step_begin"}  # fmt: skip


def _prologue_size(block: int, requested: int) -> int:
    """What a layout's prologue asks for a live block of block bytes (requested: the program's).

    Its request where PyTorch's allocator gives that the same block (a small block is its
    request rounded to 512; a large one keeps a rest of at most 1 MiB unsplit), so that the
    replay counts requested bytes; else the block's size.
    """
    rounded = _round(requested)
    if rounded == block or (block > _SMALL and rounded > _SMALL and block - rounded <= _SMALL):
        return requested
    return block


def write_trace(t: Trace, path: str, form: str = "packed") -> int:
    """Writes the replay as bench/replay_trace's CSV (gzipped where path ends in .gz).

    form "packed": the blocks alive when recording began, then the window (request_ops: a cold
    start); "layout": the prologue that rebuilds PyTorch's segments (fillers freed at its end),
    then the window. Sizes are requested bytes (the layout's blocks: their own sizes); an
    allocation that failed in the recording is an allocation freed at once (in the layout form,
    one never freed, as replay_trace --keep-going replays it: PyTorch's capacity makes it
    fail). Written whole or not at all; returns the rows written.
    """
    if t.csv:
        raise SnapshotError("the input is a replay CSV already")
    if form == "packed":
        boundary = len(t.live) + 1  # the second step marker: the window begins
        rows = [(op, 0 if k < boundary else 2) for k, (op, _) in enumerate(request_ops(t))]
    elif form == "layout":
        ops: list[Op] = [("step", 0, 0, 0), *t.prologue]
        ops += [("free", i, 0, 0) for i in t.fillers]
        rows = [(op, 0) for op in ops] + [(("step", 0, 0, 0), 2)] + [(op, 2) for op in t.window]
    else:
        raise ValueError(f"unknown trace form {form!r} (packed or layout)")
    out = io.StringIO()
    out.write(_CSV_HEADER)
    step = 0
    for k, ((kind, i, n, stream), phase) in enumerate(rows):
        if kind == "step":
            step = phase
        size = _prologue_size(n, t.requested[i]) if phase == 0 and i in t.requested else n
        out.write(f"0,{k + 1},{_CSV_ACTION[kind]},0x{i:x},{size},{stream},{step},,"
                  f"{'prologue' if phase == 0 else 'window'}\n")  # fmt: skip
    data = out.getvalue().encode("ascii")
    write_atomically(path, gzip.compress(data, mtime=0) if path.endswith(".gz") else data)
    return len(rows)
