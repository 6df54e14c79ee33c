"""The replays of pyc10.replay on libc10c's simulated device, and PyTorch's own figures.

``pytorch_figures`` reads what PyTorch did in the recorded window from the snapshot itself;
``replay`` runs the one model (_replay_model) through libc10c's caching allocator under some
settings, from PyTorch's state at the start (the prologue) or from a cold start (the requests
alone, as a plan places them); ``make_plan`` and ``planned`` are the plan of the recording;
``run_columns`` replays every setting a table shows.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from typing import Any

from ._replay_input import SnapshotError, _check, _size_text
from ._replay_model import (
    Op,
    Trace,
    _pick_device,
    _Ranges,
    _round,
    _start_state,
    cold_ops,
    plan_requests,
)

# A device whose memory the recording does not say: large enough that no replay of a real
# program runs out of it (16 TiB, some fifty times the largest GPU's), so that an out-of-memory
# failure is never invented; no larger, as an expandable segment's reservation spans it and a
# request that fails walks its page table (at 1 PiB: 0.8 s and 430 MiB for each column).
UNLIMITED = 1 << 44


def last_error() -> str:
    """libc10c's message for this thread's last failed call."""
    from ._lib import ffi, lib

    message: str = ffi.string(lib.c10c_last_error_message()).decode("utf-8", "replace")
    return message


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
    *,
    cold: bool = False,
) -> dict[str, Any]:
    """Replays t on a simulated device.

    libc10c's figures for the window (as pytorch_figures'), or "error" with the message where
    the settings are refused or the prologue fails. The start: PyTorch's segments rebuilt under
    the recorded settings (the prologue), or with cold, none: the blocks alive when recording
    began allocated first under the settings themselves (request_ops; a plan file's plan
    places them). New segments get addresses above the last one, or below it with descending
    (None: the order the recording's driver used, t.descending: PyTorch's best fit breaks ties
    between equal free blocks by address, so the order decides which block a request takes).
    The device's capacity: capacity, else PyTorch's at an out-of-memory event, else UNLIMITED.
    """
    from ._lib import ffi, lib  # only a replay needs libc10c

    cap = capacity or t.capacity or UNLIMITED
    out: dict[str, Any] = {"settings": settings, "capacity": cap, "cold": cold}
    ptr = ffi.new("c10c_sim_device **")
    if descending is None:
        descending = t.descending
    out["addresses"] = "descending" if descending else "ascending"
    flags = lib.C10C_SIM_DESCENDING if descending else 0
    # the recorded state is rebuilt under the recorded settings (where libc10c has them all)
    # ... except under a plan file: its plan covers the prologue's blocks too
    layout = settings if "plan_file:" in settings or cold else t.recorded_settings
    if lib.c10c_sim_device_new(ptr, cap, layout.encode(), flags) != lib.C10C_STATUS_OK:
        layout = settings
        if lib.c10c_sim_device_new(ptr, cap, settings.encode(), flags) != lib.C10C_STATUS_OK:
            out["error"] = last_error()
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

    def run(op: Op) -> str | None:
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
            sizes[i] = t.requested.get(i, size)  # a prologue block: its request's bytes
            live += sizes[i]
            peak_live = max(peak_live, live)
        else:
            message = last_error()
            # the simulated device is the engine's device 0; the snapshot's may be another
            return re.sub(r"\b(GPU|device) 0\b", rf"\1 {t.device}", message)
        return None

    if cold:
        pre, body = cold_ops(t)
    else:
        pre = [*t.prologue, *(("free", i, 0, 0) for i in t.fillers)]
        body = list(zip(t.window, t.window_at, strict=True))
    for op in pre:
        failure = run(op)
        if failure is not None:
            out["error"] = f"the prologue failed: {failure}"
            return out
    if layout != settings and lib.c10c_sim_device_configure(dev, settings.encode()) != 0:
        out["error"] = last_error()
        return out
    if memory_fraction is not None:  # for the window
        if lib.c10c_sim_device_set_memory_fraction(dev, memory_fraction) != lib.C10C_STATUS_OK:
            out["error"] = last_error()
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
    out["ended_at"] = None  # the trace event where a failure PyTorch did not have ended it
    out["ooms"] = out["ooms_not_reproduced"] = 0
    out["oom_events"] = []  # the trace indices where an allocation failed here
    for op, k in body:
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
                end = out["ended_at"] = k
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
        "declines": s.plan_declines,
    }
    out["num_stitches"] = s.num_stitches
    out["peak_stitched_bytes"] = s.peak_stitched_bytes
    out["series"] = series
    return out


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
        raise OSError(last_error())
    return int(arena[0]), bound, len(sizes)


def planned(
    t: Trace, capacity: int | None, descending: bool | None, fraction: float | None
) -> dict[str, Any]:
    """The replay under a plan made from t's own requests, from a cold start.

    The plan places the blocks alive when recording began too (request_ops), so its arena is
    what --write-plan and replay_trace --plan-from report for the same recording.
    """
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "recording.plan")
        try:
            arena, bound, _ = make_plan(t, path)
        except (OSError, SnapshotError) as e:
            return {"settings": "plan_file", "name": "planned", "error": f"no plan: {e}"}
        r = replay(t, f"plan_file:{path}", capacity, descending, fraction, cold=True)
    r.update(name="planned", settings="plan_file:(a plan of the recording)")
    r["plan_made"] = {"arena_bytes": arena, "lower_bound": bound}
    return r


def with_setting(settings: str, extra: str) -> str:
    """Settings with extra appended (PYTORCH_CUDA_ALLOC_CONF syntax)."""
    return f"{settings},{extra}" if settings.strip() else extra


def found_steps(r: dict[str, Any]) -> bool:
    """Whether a replay with planning:True found a repeated step (made or declined a plan)."""
    plan = r.get("plan") or {}
    return bool(plan.get("rebuilds") or plan.get("declines") or plan.get("drops"))


def csv_figures(t: Trace, path: str) -> dict[str, Any]:
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
