"""Replay a PyTorch memory snapshot through libc10c's caching allocator on a simulated device.

    python -m pyc10.replay SNAPSHOT [--settings S ...] [--device N] [--capacity BYTES]
                                    [--memory-fraction F] [--descending] [--json]
                                    [--plot OUT.png]

SNAPSHOT is what ``torch.cuda.memory._dump_snapshot`` (or ``pyc10.cuda.memory._dump_snapshot``)
writes, or the same dict as JSON, either of them gzipped. The pickle is read without running
anything in it: the unpickler refuses every global and persistent id, so a pickle that would call
a function (such as ``os.system``) is refused before any of it runs (exit status 2).

The snapshot's trace of one device (the one with the most events, or ``--device``) becomes a
replay: a prologue that rebuilds the segments as they stood when the recording began, under the
settings the snapshot records (their live blocks and cached free space in address order, the free
space allocated as fillers that are freed when the prologue ends), then the recorded window:
``alloc`` -> malloc of the requested size on the event's stream, ``free_completed`` -> free, each
run of ``segment_free`` / ``segment_unmap`` -> empty_cache, an ``oom`` -> a malloc of the size that
failed (on a device of the capacity PyTorch had: its reserved bytes then plus the free bytes the
event recorded, at the first one), expected to fail; the window goes on after it, as the program
that caught PyTorch's OutOfMemoryError did (a failure where PyTorch did not fail ends the replay,
its figures up to there). It runs on a simulated device (include/c10c/replay.h: fabricated
addresses, no memory touched), once per ``--settings`` (PYTORCH_CUDA_ALLOC_CONF syntax; by default
the settings the snapshot records, and ``expandable_segments:True``), and prints PyTorch's figures
for the window beside libc10c's: device mallocs and frees (page maps and unmaps for expandable
segments), reserved bytes at the start, peak reserved; ``--plot`` draws reserved and allocated
bytes over the window as a PNG. Exit status 0, 2 for a snapshot that cannot be read.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import pickle
import sys
import zlib
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SnapshotError", "convert", "load", "main", "pytorch_figures", "replay"]

_SMALL = 1 << 20  # PyTorch's kSmallSize
_SMALL_SEGMENT = 2 << 20  # kSmallBuffer
_DEFAULT_CAPACITY = 1 << 40


class SnapshotError(ValueError):
    """A file that is not a memory snapshot, or a pickle that carries code."""


class _DataOnly(pickle.Unpickler):
    """Builds only dicts, lists, tuples, strings, bytes, numbers, booleans and None."""

    def find_class(self, module: str, name: str) -> Any:
        raise SnapshotError(
            f"the pickle refers to {module}.{name}: a memory snapshot holds only plain data, "
            "so it was refused without running anything"
        )

    def persistent_load(self, pid: Any) -> Any:
        raise SnapshotError("the pickle refers to a persistent object: refused")


def load(path: str) -> dict[str, Any]:
    """The snapshot in path (pickle or JSON), checked for the keys a replay needs."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise SnapshotError(f"cannot read {path}: {e.strerror or e}") from None
    if data[:2] == b"\x1f\x8b":  # gzip (snapshot.pickle.gz, snapshot.json.gz)
        data = _gunzip(path, data)
    if data[:1] in (b"{", b" ", b"\n", b"\t", b"\r"):
        try:
            snapshot = json.loads(data)
        except (ValueError, UnicodeDecodeError) as e:
            raise SnapshotError(f"{path} is not a JSON memory snapshot: {e}") from None
    else:
        try:
            snapshot = _DataOnly(io.BytesIO(data)).load()
        except SnapshotError:
            raise
        except Exception as e:  # every malformed pickle is one kind of error
            raise SnapshotError(f"{path} is not a pickled memory snapshot: {e}") from None
    _check(snapshot)
    checked: dict[str, Any] = snapshot
    return checked


_MAX_UNZIPPED = 4 << 30  # far above any snapshot's size; a gzip bomb stops here


def _gunzip(path: str, data: bytes) -> bytes:
    out = bytearray()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as g:
            while chunk := g.read(1 << 20):
                out += chunk
                if len(out) > _MAX_UNZIPPED:
                    raise SnapshotError(
                        f"{path} unzips to more than {_MAX_UNZIPPED} bytes: not a memory snapshot"
                    )
    except (OSError, EOFError, zlib.error) as e:
        raise SnapshotError(f"{path} is not a readable gzip file: {e}") from None
    return bytes(out)


def _check(snapshot: Any) -> None:
    if not isinstance(snapshot, dict) or not isinstance(snapshot.get("segments"), list):
        raise SnapshotError("not a memory snapshot: no 'segments' list")
    traces = snapshot.get("device_traces")
    if not isinstance(traces, list) or not all(isinstance(t, list) for t in traces):
        raise SnapshotError("not a memory snapshot: no 'device_traces' list of lists")
    for seg in snapshot["segments"]:
        if not isinstance(seg, dict) or not {"address", "total_size", "blocks"} <= set(seg):
            raise SnapshotError("a segment without address, total_size or blocks")
    for trace in traces:
        for e in trace:
            # torch's oom entries name the device's free bytes instead of an address
            addr = "device_free" if isinstance(e, dict) and e.get("action") == "oom" else "addr"
            if not isinstance(e, dict) or not {"action", addr, "size"} <= set(e):
                raise SnapshotError(f"a trace entry without action, {addr} or size")


def _round(size: int) -> int:
    return 512 if size < 512 else (size + 511) // 512 * 512


@dataclass
class Trace:
    """A snapshot converted to a replay.

    Ops are (kind, id, size, stream), kind "malloc", "free", "empty_cache" or "oom" (a malloc
    expected to fail).
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
    their requested bytes {address: bytes}.
    """
    segments: dict[int, tuple[int, int, bool, bool]] = {}
    live: dict[int, int] = {}
    requested: dict[int, int] = {}
    for seg in snapshot["segments"]:
        if seg.get("device", device) != device:
            continue
        size = int(seg["total_size"])
        small = seg.get("segment_type", "large" if size != _SMALL_SEGMENT else "small") == "small"
        segments[int(seg["address"])] = (
            size,
            int(seg.get("stream", 0)),
            small,
            bool(seg.get("is_expandable", False)),
        )
        at = int(seg["address"])
        for b in seg["blocks"]:
            addr = int(b.get("address", at))
            if b.get("state") in ("active_allocated", "active_pending_free"):
                live[addr] = int(b["size"])
                requested[addr] = int(b.get("requested_size", b["size"]))
            at = addr + int(b["size"])
    for e in reversed(snapshot["device_traces"][device]):
        action, size = e["action"], int(e["size"])
        addr = int(e.get("addr", e.get("device_free", 0)))
        stream = int(e.get("stream", 0))
        if action == "alloc":
            live.pop(addr, None)
            requested.pop(addr, None)
        elif action == "free_completed":
            live[addr] = _round(size)
            requested[addr] = size
        elif action in ("segment_alloc", "segment_map"):
            segments.pop(addr, None)
        elif action in ("segment_free", "segment_unmap"):
            small = size == _SMALL_SEGMENT and action == "segment_free"
            segments[addr] = (size, stream, small, action == "segment_unmap")
    return segments, live, requested


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
        action, size = e["action"], int(e["size"])
        addr = int(e.get("addr", e.get("device_free", 0)))
        stream = int(e.get("stream", 0))
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
                t.capacity = reserved + int(e.get("device_free", 0))
        t.window_at += [k] * (len(t.window) - n)
    return t


def pytorch_figures(snapshot: dict[str, Any], device: int | None = None) -> dict[str, Any]:
    """What PyTorch did in the recorded window of one device.

    Segment mallocs and frees, page maps and unmaps, reserved bytes at the start and their peak
    (over the whole window, past out-of-memory events, as the program went on), peak live
    requested bytes, and the series of reserved and allocated (requested) bytes after each
    event.
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
    }
    series: list[tuple[int, int]] = [(reserved, live)]
    names = {
        "segment_alloc": "device_mallocs",
        "segment_free": "device_frees",
        "segment_map": "maps",
        "segment_unmap": "unmaps",
    }
    for e in snapshot["device_traces"][dev]:
        action, size = e["action"], int(e["size"])
        addr = int(e.get("addr", e.get("device_free", 0)))
        if action in names:
            f[names[action]] += 1
            reserved += size if action in ("segment_alloc", "segment_map") else -size
        elif action == "alloc":
            sizes[addr] = size
            live += size
        elif action == "free_completed":
            live -= sizes.pop(addr, size)
        elif action == "oom":
            f["ooms"] += 1
            if f["oom"] is None:
                f["oom"] = {"size": size, "capacity": reserved + int(e.get("device_free", 0))}
        f["peak_reserved"] = max(f["peak_reserved"], reserved)
        f["peak_live_requested"] = max(f["peak_live_requested"], live)
        series.append((reserved, live))
    f["series"] = series
    return f


def replay(  # noqa: PLR0912, PLR0915 - prologue, window, figures in one place
    t: Trace,
    settings: str = "",
    capacity: int | None = None,
    descending: bool = False,
    memory_fraction: float | None = None,
) -> dict[str, Any]:
    """Replays t on a simulated device.

    libc10c's figures for the window (as pytorch_figures'), or "error" with the message where
    the settings are refused or the prologue fails.
    """
    from ._lib import ffi, lib  # only a replay needs libc10c

    cap = capacity or t.capacity or _DEFAULT_CAPACITY
    out: dict[str, Any] = {"settings": settings, "capacity": cap}
    ptr = ffi.new("c10c_sim_device **")
    flags = 1 if descending else 0
    # the recorded state is rebuilt under the recorded settings (where libc10c has them all)
    layout = t.recorded_settings
    if lib.c10c_sim_device_new(ptr, cap, layout.encode(), flags) != lib.C10C_STATUS_OK:
        layout = settings
        if lib.c10c_sim_device_new(ptr, cap, settings.encode(), flags) != lib.C10C_STATUS_OK:
            out["error"] = ffi.string(lib.c10c_last_error_message()).decode()
            return out
    dev = ffi.gc(ptr[0], lib.c10c_sim_device_destroy)
    stats = ffi.new("c10c_sim_device_stats *")
    addr = ffi.new("uint64_t *")
    blocks: dict[int, int] = {}

    def figures() -> Any:
        stats.struct_size = ffi.sizeof("c10c_sim_device_stats")
        lib.c10c_sim_device_get_stats(stats, dev)
        return stats

    def run(op: tuple[str, int, int, int]) -> str | None:
        kind, i, size, stream = op
        if kind == "empty_cache":
            lib.c10c_sim_device_empty_cache(dev)
        elif kind == "free":
            lib.c10c_sim_device_free(dev, blocks.pop(i, 0))
        elif lib.c10c_sim_device_malloc(addr, dev, size, stream) == lib.C10C_STATUS_OK:
            blocks[i] = addr[0]
        else:
            message: str = ffi.string(lib.c10c_last_error_message()).decode()
            return message
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
    out["reserved_at_start"] = s.reserved
    lib.c10c_sim_device_reset_peaks(dev)
    points = [(0, s.reserved, s.allocated)]  # (trace events done, reserved, allocated)
    end = t.events
    out["oom"] = None  # the first failure
    out["ooms"] = out["ooms_not_reproduced"] = 0
    for op, k in zip(t.window, t.window_at, strict=True):
        failure = run(op)
        if op[0] == "oom" and failure is None:  # it fitted here: the program never had it
            out["ooms_not_reproduced"] += 1
            run(("free", op[1], 0, 0))
        elif failure is not None:
            out["ooms"] += 1
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


def _table(pt: dict[str, Any], runs: list[dict[str, Any]]) -> str:
    rows = [("", "PyTorch", *(r["settings"] or "(defaults)" for r in runs))]

    def row(name: str, key: str, fmt: Any = str) -> None:
        vals = [fmt(r[key]) if "error" not in r and key in r else "-" for r in runs]
        rows.append((name, fmt(pt[key]), *vals))

    row("device mallocs", "device_mallocs")
    row("device frees", "device_frees")
    row("page maps", "maps")
    row("page unmaps", "unmaps")
    row("reserved at start", "reserved_at_start", _gib)
    row("peak reserved", "peak_reserved", _gib)
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    for r in runs:
        if "error" in r:
            lines.append(f"{r['settings'] or '(defaults)'}: {r['error']}")
        elif r.get("oom"):
            o, name = r["oom"], r["settings"] or "(defaults)"
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
                f"{r['settings'] or '(defaults)'}: {r['ooms_not_reproduced']} of PyTorch's"
                " out-of-memory failures did not happen here"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status (2 for a snapshot that cannot be read)."""
    p = argparse.ArgumentParser(
        prog="python -m pyc10.replay",
        description="Replay a PyTorch memory snapshot through libc10c's caching allocator.",
    )
    p.add_argument("snapshot", help="a pickle from _dump_snapshot, or the same as JSON")
    p.add_argument("--settings", action="append", help="allocator settings (repeatable)")
    p.add_argument("--device", type=int, default=None, help="the device whose trace to replay")
    p.add_argument("--capacity", type=int, default=None, help="device bytes (default: 1 TiB)")
    p.add_argument(
        "--memory-fraction",
        type=float,
        default=None,
        help="set_per_process_memory_fraction (garbage_collection_threshold acts only with it)",
    )
    p.add_argument("--descending", action="store_true", help="hand out addresses downwards")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--plot", metavar="PNG", help="reserved and allocated over the window")
    args = p.parse_args(argv)
    try:
        snapshot = load(args.snapshot)
        pt = pytorch_figures(snapshot, args.device)
        t = convert(snapshot, args.device)
    except SnapshotError as e:
        print(f"pyc10.replay: {e}", file=sys.stderr)
        return 2
    settings = args.settings
    if settings is None:
        recorded = _recorded_settings(snapshot)
        settings = [recorded]
        if "expandable_segments:true" not in recorded.lower():
            settings.append("expandable_segments:True")
    runs = [replay(t, s, args.capacity, args.descending, args.memory_fraction) for s in settings]
    if args.plot:
        from ._png import line_chart

        gib = float(1 << 30)
        lines = [("PyTorch reserved", [r / gib for r, _ in pt["series"]])]
        lines.append(("PyTorch allocated (requested)", [a / gib for _, a in pt["series"]]))
        for r in runs:
            if "series" in r:
                name = f"libc10c {r['settings'] or 'defaults'}"
                lines.append((name, [x / gib for x, _ in r["series"]]))
        line_chart(args.plot, f"reserved GiB over {pt['events']} events", lines)
    if args.json:
        result = {
            "pytorch": {k: v for k, v in pt.items() if k != "series"},
            "libc10c": [{k: v for k, v in r.items() if k != "series"} for r in runs],
            "unknown_frees": t.unknown_frees,
        }
        print(json.dumps(result, indent=1))
    else:
        print(f"{args.snapshot}: device {pt['device']}, {pt['events']} events")
        print(_table(pt, runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
