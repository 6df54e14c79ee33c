"""Replay a PyTorch memory snapshot through libc10c's caching allocator on a simulated device.

    python -m pyc10.replay SNAPSHOT [--compare | --settings S ...] [--device N] [--capacity SIZE]
                                    [--memory-fraction F] [--address-order auto|ascending|
                                    descending] [--max-input SIZE] [--json] [--plot OUT.png]
                                    [--html OUT.html] [--write-plan PATH] [--write-csv PATH]

SNAPSHOT is what ``torch.cuda.memory._dump_snapshot`` (or ``pyc10.cuda.memory._dump_snapshot``)
writes, or the same dict as JSON, either of them gzipped. The pickle is read without running
anything in it: the unpickler refuses every global and persistent id, so a pickle that would call
a function (such as ``os.system``) is refused before any of it runs. At most ``--max-input``
bytes are read (256 MiB unless raised; a gzip file is inflated as a stream that stops there, so a
gzip bomb costs no more), and every field the replay reads is checked for its type first: a file
that is not a snapshot is one line on stderr and exit status 2.

One model of the recording behind every column (pyc10._replay_model): the blocks alive when
recording began are requests at time zero, then the recorded window of one device (the busiest,
or ``--device``): ``alloc`` -> malloc of the requested size on the event's stream,
``free_completed`` -> free, each run of ``segment_free`` / ``segment_unmap`` -> empty_cache, an
``oom`` -> an allocation that fails at the capacity PyTorch had (reserved plus the free bytes the
event recorded), after which the window goes on as the program that caught the error did.

What is printed, every column saying who computed it:

- PyTorch's own figures for the window, read from the snapshot ("PyTorch (recorded)"), checked
  (reserved never below allocated nor above the device's capacity: a WARNING otherwise);
- libc10c's replay of PyTorch's caching allocator ("libc10c, PyTorch's algorithm") under the
  recorded settings, from PyTorch's own segments at the start (rebuilt in address order; new
  segments get addresses in the order the recording's driver handed them out, inferred from the
  snapshot), and under ``expandable_segments:True``: it reproduces the recorded figures;
- what only libc10c's allocator has ("libc10c only"): stitching, online planning
  (``planning:True`` on the recorded settings: steps found in the requests are served from an
  offset plan where that reserves less than the caching allocator, never more), and a plan of
  the whole recording (``plan_file``, from a cold start: the plan places the blocks alive at the
  start too; ``--write-plan`` writes it and ``bench/replay_trace --plan-from`` on the
  ``--write-csv`` trace makes the same plan);
- the answer: the best PYTORCH_CUDA_ALLOC_CONF a PyTorch user can set today among PyTorch's
  settings tried (``--compare`` lists them all), with the bytes and percent it saves against
  the recording, and any ``torch.cuda.set_per_process_memory_fraction`` it assumes; then what
  libc10c adds and how to use it.

``--settings`` replaces the columns by the ones given (PYTORCH_CUDA_ALLOC_CONF syntax, checked by
libc10c's parser). The simulated device has the capacity PyTorch had at an out-of-memory event
(or ``--capacity``); without either it is unlimited, so that no column runs out of memory where
the recording did not. ``--json`` prints the same as one JSON object; ``--plot`` draws reserved
bytes over the window (with ``--compare``: peak reserved per setting, as bars) and ``--html`` a
self-contained page with the timeline, the bars and the table (matplotlib for ``--plot``: ``pip
install 'pyc10[plot]'``).

SNAPSHOT may also be the project's replay CSV (bench/replay_trace's input, ``.csv`` or
``.csv.gz``: RMM's columns with Step): its allocations, frees, empty_cache and step_begin rows
(each a c10c_sim_device_step, which drives ``planning:True``) replayed from a cold device, with
PyTorch's recorded peak reserved and peak live bytes from ``pytorch_figures.json`` beside the
file when it names the trace (bench/traces). Exit status 0; 2 for a refused option, a snapshot
or CSV that cannot be read, a device with no trace, a capacity below what the recording
reserved, ``planning:True`` on a recording with no repeated step, a plan file made from another
recording, an output that cannot be written (nothing is left half-written), or a recording with
nothing to plan.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import struct
import sys
from typing import Any, NoReturn

from ._replay_input import (
    _MAX_INPUT,
    SnapshotError,
    _size_text,
    is_csv,
    load,
    load_csv,
    parse_size,
    write_atomically,
)
from ._replay_model import (
    Trace,
    convert,
    convert_csv,
    plan_requests,
    request_ops,
    write_trace,
)
from ._replay_sim import (
    csv_figures,
    found_steps,
    last_error,
    make_plan,
    planned,
    pytorch_figures,
    replay,
    with_setting,
)

__all__ = [
    "SnapshotError",
    "Trace",
    "convert",
    "convert_csv",
    "load",
    "main",
    "make_plan",
    "parse_size",
    "plan_requests",
    "pytorch_figures",
    "replay",
    "request_ops",
    "write_trace",
]

# Who computed a column.
BY_RECORDED = "PyTorch (recorded)"
BY_PYTORCH = "libc10c as PyTorch"
BY_LIBC10C = "libc10c only"
_LEGEND = (
    f"computed by: {BY_RECORDED!r} = PyTorch's own figures, read from the snapshot;"
    f" {BY_PYTORCH!r} = libc10c's replay of PyTorch's caching allocator (it reproduces the"
    f" recorded figures under the recorded settings); {BY_LIBC10C!r} = what PyTorch's allocator"
    " does not have. utilization: peak live requested bytes / peak reserved bytes; device"
    " mallocs: segments allocated plus page runs mapped"
)

# What a user of plain PyTorch can set (PYTORCH_CUDA_ALLOC_CONF); garbage_collection_threshold
# acts only under a memory fraction, so it is tried where the device's memory is known.
PYTORCH_SETTINGS = [
    "",
    "expandable_segments:True",
    "max_split_size_mb:128",
    "max_split_size_mb:512",
    "roundup_power2_divisions:4",
    "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]",
    "expandable_segments:True,roundup_power2_divisions:4",
]
GC_SETTINGS = ["garbage_collection_threshold:0.6", "garbage_collection_threshold:0.8"]
STITCHED = "expandable_segments:True,stitching:True"
_OURS = ("stitching", "planning", "plan_file", "stream_ordered_reuse")


def _keys(settings: str) -> list[str]:
    return [p.split(":", 1)[0].strip() for p in settings.split(",") if ":" in p]


def _by(settings: str) -> str:
    return BY_LIBC10C if any(k in _OURS for k in _keys(settings)) else BY_PYTORCH


def _gib(n: int | None) -> str:
    return "-" if n is None else f"{n / (1 << 30):.3f} GiB"


def _ratio(x: Any) -> str:
    return "-" if x is None else f"{x:.3f}"


def _pt_utilization(pt: dict[str, Any]) -> float | None:
    if not pt.get("peak_reserved") or pt.get("peak_live_requested") is None:
        return None
    return float(pt["peak_live_requested"] / pt["peak_reserved"])


def _name(r: dict[str, Any]) -> str:
    name: str = r.get("name") or r["settings"] or "defaults"
    return name


# ---- the columns ----


def _fraction_for(limit: int, capacity: int) -> float:
    """set_per_process_memory_fraction allowing limit bytes of capacity, to 4 decimals (up)."""
    return min(1.0, math.ceil(limit / capacity * 10000) / 10000)


def _run(
    t: Trace, settings: str, args: argparse.Namespace, fraction: float | None = None
) -> dict[str, Any]:
    """One replay of t under settings (a plan file's from a cold start), named and attributed."""
    r = replay(
        t,
        settings,
        args.capacity,
        args.descending,
        fraction if fraction is not None else args.memory_fraction,
        cold="plan_file:" in settings,
    )
    r.setdefault("name", settings or "defaults")
    r["by"] = _by(settings)
    if fraction is not None:
        r["memory_fraction"] = fraction
        r["name"] = f"{r['name']} (memory fraction {fraction:g})"
    if "planning:true" in settings.lower().replace(" ", "") and "error" not in r:
        r["steps_found"] = found_steps(r)
    return r


def _online(t: Trace, base: str, args: argparse.Namespace) -> dict[str, Any]:
    r = _run(t, with_setting(base, "planning:True"), args)
    r["base"] = base
    return r


def _columns(t: Trace, args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[str]]:
    """The replayed columns of the table, and notes on what was not tried.

    Beyond the columns shown, the rest of PyTorch's settings are replayed for the answer
    ("shown" False).
    """
    recorded = t.recorded_settings
    notes: list[str] = []
    if args.settings is not None:
        return [_run(t, s, args) for s in args.settings], notes
    runs: list[dict[str, Any]] = []
    tried = [recorded, *(s for s in PYTORCH_SETTINGS if s != recorded)]
    for s in tried:
        r = _run(t, s, args)
        r["shown"] = args.compare or s in (recorded, "expandable_segments:True")
        runs.append(r)
    capacity = args.capacity or t.capacity
    base = next((r for r in runs if r["settings"] == recorded and "error" not in r), None)
    if capacity is not None and base is not None:
        fraction = _fraction_for(base["peak_reserved"], capacity)
        for s in GC_SETTINGS:
            r = _run(t, s, args, fraction)
            r["shown"] = args.compare
            runs.append(r)
    else:
        notes.append(
            "garbage_collection_threshold was not tried: it acts only under"
            " set_per_process_memory_fraction, a fraction of the GPU's memory, which this"
            " recording does not say (--capacity gives it)"
        )
    expandable = "expandable_segments:true" in recorded.lower().replace(" ", "")
    ours = [_run(t, STITCHED, args), _online(t, recorded, args)]
    if args.compare and not expandable:
        ours.append(_online(t, "expandable_segments:True", args))
    ours.append(planned(t, args.capacity, args.descending, args.memory_fraction))
    for r in ours:
        r["by"] = BY_LIBC10C
        r["shown"] = True
        if r.get("name") == "planned":
            r["name"] = "planned from the recording"
    return runs + ours, notes


# ---- the answer ----


def _completed(r: dict[str, Any]) -> bool:
    """Whether a replay ran the whole window (an out-of-memory PyTorch had is fine)."""
    return "error" not in r and r.get("ended_at") is None


def _saving(base: int, peak: int) -> str:
    saved = base - peak
    return f"saves {_gib(saved)} ({saved / base:.1%})" if base else ""


def _how(r: dict[str, Any]) -> str:
    """How a user gets what a libc10c-only column shows."""
    if r.get("name") == "planned from the recording":
        return (
            "python -m pyc10.replay SNAPSHOT --write-plan run.plan, then the setting"
            " plan_file:run.plan"
        )
    if "planning" not in r["settings"]:
        return f"C10C_ALLOC_CONF={r['settings']}"
    if not r.get("steps_found"):
        return "no repeated step found in the recording: served as the caching allocator"
    if not (r.get("plan") or {}).get("served"):
        return (
            "steps found in the requests, but no plan of them reserves less here (the cache"
            " they use stays: marked steps, pyc10.cuda.memory.step(), let it go)"
        )
    return "mark each step with pyc10.cuda.memory.step() or c10c_cuda_allocator_step"


def _best_pytorch(
    against: int, what: str, ok: list[dict[str, Any]], t: Trace, args: argparse.Namespace
) -> tuple[dict[str, Any], list[str]]:
    """The least reserving of PyTorch's settings that completed, and its lines."""
    best = min(ok, key=lambda r: (r["peak_reserved"], len(r["settings"])))
    conf, peak = best["settings"], best["peak_reserved"]
    entry = {
        "settings": conf,
        "peak_reserved": peak,
        "saved_bytes": max(0, against - peak),
        "saved_fraction": max(0, against - peak) / against,
        "memory_fraction": best.get("memory_fraction"),
    }
    if peak >= against:
        keep = f"PYTORCH_CUDA_ALLOC_CONF={t.recorded_settings}" if t.recorded_settings else None
        return entry, [
            f"Best PyTorch setting for this run: keep {keep or 'the defaults'}: none of the"
            f" {len(ok)} PyTorch settings tried reserves less than {_gib(against)} ({what})"
        ]
    env = f"PYTORCH_CUDA_ALLOC_CONF={conf}" if conf else "PYTORCH_CUDA_ALLOC_CONF unset"
    lines = [
        f"Best PyTorch setting for this run: {env}: peak reserved {_gib(peak)} instead of"
        f" {_gib(against)} ({what}), {_saving(against, peak)}"
    ]
    if best.get("memory_fraction") is not None:
        cap = args.capacity or t.capacity or 0
        lines.append(
            f"  with torch.cuda.set_per_process_memory_fraction({best['memory_fraction']:g})"
            f" (a GPU of {_size_text(cap)})"
        )
    return entry, lines


def _answer(
    pt: dict[str, Any], runs: list[dict[str, Any]], t: Trace, args: argparse.Namespace
) -> dict[str, Any]:
    """The best setting a PyTorch user can set today, and what libc10c adds (see main)."""
    recorded_peak = pt.get("peak_reserved")
    same = next((r for r in runs if r["settings"] == t.recorded_settings and _completed(r)), None)
    against = recorded_peak if recorded_peak else (same or {}).get("peak_reserved")
    what = "the recording" if recorded_peak else "the recorded settings replayed"
    ok = [r for r in runs if r["by"] == BY_PYTORCH and _completed(r) and r.get("peak_reserved")]
    lines: list[str] = []
    answer: dict[str, Any] = {"against": what, "against_bytes": against, "pytorch": None}
    if ok and against:
        answer["pytorch"], lines = _best_pytorch(against, what, ok, t, args)
    ours = []
    for r in (r for r in runs if r["by"] == BY_LIBC10C):
        item: dict[str, Any] = {"name": _name(r), "settings": r["settings"]}
        ours.append(item)
        if "error" in r:
            item["error"] = r["error"]
            continue
        item["peak_reserved"] = r["peak_reserved"]
        item["how"] = _how(r)
        if against:
            item["saved_bytes"] = against - r["peak_reserved"]
            saving = (
                _saving(against, r["peak_reserved"])
                if r["peak_reserved"] < against
                else "saves nothing"
            )
            item["line"] = f"  {_name(r)}: {_gib(r['peak_reserved'])}, {saving}; {item['how']}"
    if ours:
        lines.append(
            "Beyond PyTorch, with libc10c's CUDA allocator (programs on pyc10.cuda, or C hosts"
            " through C10C_ALLOC_CONF / c10c_cuda_set_allocator_settings):"
        )
        lines += [o["line"] for o in ours if "line" in o]
        lines += [f"  {o['name']}: {o['error']}" for o in ours if "error" in o]
    answer["libc10c"] = ours
    answer["lines"] = lines
    return answer


# ---- tables ----


def _ooms_cell(r: dict[str, Any]) -> str:
    if "error" in r or r.get("ooms") is None:
        return "-"
    if r.get("ended_at") is not None:
        return f"{r['ooms']}, replay stopped"
    return str(r["ooms"])


def _table(pt: dict[str, Any], runs: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """The default table: a column per replay, PyTorch's recorded one first."""
    header = ["", "as recorded", *(_name(r) for r in runs)]
    rows = [["computed by", BY_RECORDED, *(r["by"] for r in runs)]]

    def row(name: str, key: str, fmt: Any = str) -> None:
        vals = [fmt(r[key]) if "error" not in r and r.get(key) is not None else "-" for r in runs]
        rows.append([name, fmt(pt[key]) if pt.get(key) is not None else "-", *vals])

    row("device mallocs", "device_mallocs")
    row("device frees", "device_frees")
    row("page maps", "maps")
    row("page unmaps", "unmaps")
    row("reserved at start", "reserved_at_start", _gib)
    row("peak reserved", "peak_reserved", _gib)
    row("utilization", "utilization", _ratio)
    rows[-1][1] = _ratio(_pt_utilization(pt))
    rows.append(["out of memory", str(pt["ooms"]) if pt.get("ooms") is not None else "-",
                 *(_ooms_cell(r) for r in runs)])  # fmt: skip
    return header, rows


def _compare_table(
    pt: dict[str, Any], runs: list[dict[str, Any]]
) -> tuple[list[str], list[list[str]]]:
    """--compare: a row per setting."""
    header = ["setting", "computed by", "peak reserved", "utilization", "device mallocs",
              "out of memory"]  # fmt: skip
    maps = None if pt.get("device_mallocs") is None else pt["device_mallocs"] + pt["maps"]
    rows = [["as recorded", BY_RECORDED, _gib(pt.get("peak_reserved")),
             _ratio(_pt_utilization(pt)), "-" if maps is None else str(maps),
             "-" if pt.get("ooms") is None else str(pt["ooms"])]]  # fmt: skip
    for r in runs:
        if "error" in r:
            rows.append([_name(r), r["by"], "-", "-", "-", "-"])
            continue
        rows.append([_name(r), r["by"], _gib(r["peak_reserved"]), _ratio(r["utilization"]),
                     str(r["device_mallocs"] + r["maps"]), _ooms_cell(r)])  # fmt: skip
    return header, rows


def _format(header: list[str], rows: list[list[str]]) -> str:
    table = [header, *rows]
    widths = [max(len(r[k]) for r in table) for k in range(len(header))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in table
    )


def _notes(pt: dict[str, Any], runs: list[dict[str, Any]], t: Trace) -> list[str]:
    lines = []
    for r in runs:
        name = _name(r)
        if "error" in r:
            lines.append(f"{name}: {r['error']}")
        elif r.get("oom"):
            o = r["oom"]
            where = "as PyTorch" if o["expected"] else "where PyTorch was not (replay stopped)"
            lines.append(f"{name}: out of memory at {o['size']} bytes {where}: {o['message']}")
        if r.get("ooms_not_reproduced"):
            lines.append(
                f"{name}: {r['ooms_not_reproduced']} of PyTorch's out-of-memory failures on"
                f" GPU {t.device} did not happen here"
            )
    if t.unknown_frees and t.csv:
        lines.append(f"{t.unknown_frees} frees of Pointers the CSV never allocated: skipped")
    elif t.unknown_frees:
        lines.append(
            f"{t.unknown_frees} frees of blocks the snapshot never shows allocated (allocated"
            " before the recording began, in no recorded segment): skipped"
        )
    return lines


# ---- the command line ----


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
        return last_error()
    lib.c10c_sim_device_destroy(ptr[0])
    return None


_EPILOG = """\
printed: PyTorch's figures for the window read from the snapshot, beside libc10c's replays of
PyTorch's caching allocator (the recorded settings and expandable_segments:True; with --compare
every PyTorch setting tried) and of what only libc10c has (stitching, online planning, a plan of
the recording); device mallocs and frees (page maps and unmaps with expandable segments),
reserved bytes at the start and at their peak, utilization (peak live requested bytes over peak
reserved bytes), out-of-memory failures; then the best PYTORCH_CUDA_ALLOC_CONF for this run with
what it saves against the recording, and what libc10c adds and how to use it. Sizes take units:
80GiB, 80GB, 512MiB, or plain bytes. Exit status: 0 on a replay, 2 for a refused option or input
(one line on stderr, nothing written)."""


def _parser() -> _Parser:
    p = _Parser(
        prog="python -m pyc10.replay",
        description="Replay a PyTorch memory snapshot through libc10c's caching allocator on a"
        " simulated device: PyTorch's recorded figures beside libc10c's replays of PyTorch's"
        " settings and of its own, and the setting that would save memory.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "snapshot",
        help="a pickle from _dump_snapshot, or the same as JSON, or a replay CSV (.csv; gzip ok)",
    )
    p.add_argument(
        "--settings",
        action="append",
        metavar="S",
        help="replay only these allocator settings, PYTORCH_CUDA_ALLOC_CONF syntax (repeatable;"
        " default: the recorded ones, expandable_segments:True, stitching, planning:True and a"
        " plan of the recording, with PyTorch's other settings tried for the answer)",
    )
    p.add_argument(
        "--compare",
        action="store_true",
        help="a row for every setting tried: PyTorch's and libc10c's",
    )
    p.add_argument(
        "--device", type=_device_arg, help="the device whose trace to replay (default: busiest)"
    )
    p.add_argument(
        "--capacity",
        type=_size_arg,
        metavar="SIZE",
        help="the GPU's memory (default: what PyTorch had at an out-of-memory event, else"
        " unlimited); not below what the recording reserved",
    )
    p.add_argument(
        "--memory-fraction",
        type=_fraction_arg,
        metavar="F",
        help="set_per_process_memory_fraction for every replay (needs a known capacity)",
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
    p.add_argument("--json", action="store_true", help="print one JSON object instead")
    p.add_argument(
        "--plot",
        metavar="PNG",
        help="draw reserved GiB over the window (with --compare: peak reserved per setting)",
    )
    p.add_argument("--html", metavar="REPORT", help="write a self-contained page: timeline, bars,"
                   " table and answer")  # fmt: skip
    p.add_argument(
        "--write-plan",
        metavar="PATH",
        help="write the plan of the recording for plan_file:PATH, and stop",
    )
    p.add_argument(
        "--write-csv",
        metavar="PATH",
        help="write the recording as bench/replay_trace's CSV (packed: a cold start), and stop",
    )
    return p


def _device_text(args: argparse.Namespace, t: Trace) -> str:
    """The simulated device's memory, and where it comes from."""
    if args.capacity:
        return f"{_size_text(args.capacity)} (--capacity)"
    if t.capacity:
        return f"{_size_text(t.capacity)} (PyTorch had it at an out-of-memory event)"
    return "unlimited memory (the recording does not say the GPU's)"


def _check_output(p: _Parser, path: str, option: str) -> None:
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
        return t, csv_figures(t, args.snapshot)
    snapshot = load(args.snapshot, args.max_input)
    t = convert(snapshot, args.device)
    return t, pytorch_figures(snapshot, t.device, args.capacity)


def read_plan_sizes(path: str) -> list[int]:
    """The request sizes of a plan file (lib/memory/planner.h's layout), in allocation order.

    SnapshotError for a file that is not a plan.
    """
    try:
        with open(path, "rb") as f:
            data = f.read(64 << 20)
    except OSError as e:
        raise SnapshotError(f"cannot read the plan file {path}: {e.strerror or e}") from None
    if len(data) < 44 or data[:8] != b"C10CPLAN":
        raise SnapshotError(f"{path} is not a plan file")
    count = struct.unpack_from("<Q", data, 20)[0]
    if len(data) != 36 + 37 * count + 8:
        raise SnapshotError(f"{path} is not a whole plan file")
    return [struct.unpack_from("<Q", data, 36 + 37 * k)[0] for k in range(count)]


def _refuse(message: str) -> int:
    print(f"pyc10.replay: {message}", file=sys.stderr)
    return 2


def _check_inputs(t: Trace, pt: dict[str, Any], args: argparse.Namespace) -> str | None:
    """What makes this recording and these options refused (one line), or None."""
    peak = pt.get("peak_reserved")
    if args.capacity is not None and peak and args.capacity < peak:
        return (
            f"--capacity {_size_text(args.capacity)} is below the {_size_text(peak)} PyTorch"
            " reserved in this recording: the recording cannot have run on such a device"
        )
    if args.memory_fraction is not None and args.capacity is None and t.capacity is None:
        return (
            "--memory-fraction needs the GPU's memory: give --capacity (the recording says it"
            " only at an out-of-memory event)"
        )
    for s in args.settings or []:
        for part in s.split(","):
            key, _, value = part.partition(":")
            if key.strip() != "plan_file":
                continue
            sizes = read_plan_sizes(value.strip())
            ours = plan_requests(t)[0]
            if sizes != ours:
                pairs = zip(sizes, ours, strict=False)
                first = next((k for k, (a, b) in enumerate(pairs) if a != b), None)
                why = (
                    f"{len(sizes)} requests there, {len(ours)} here"
                    if first is None
                    else f"request {first} is {sizes[first]} bytes there, {ours[first]} here"
                )
                return f"the plan file {value.strip()} was made from another recording ({why})"
    return None


def _report_data(
    *,
    args: argparse.Namespace,
    t: Trace,
    pt: dict[str, Any],
    runs: list[dict[str, Any]],
    table: tuple[list[str], list[list[str]]],
    answer: dict[str, Any],
    notes: list[str],
) -> dict[str, Any]:
    """What _report draws (see pyc10/_report.py)."""
    head = f"GPU {t.device}, {pt['events']} events" if not t.csv else f"{pt['events']} CSV rows"
    columns = [
        {
            "name": "as recorded",
            "by": BY_RECORDED,
            "settings": t.recorded_settings,
            "peak_reserved": pt.get("peak_reserved"),
            "utilization": _pt_utilization(pt),
            "device_mallocs": pt.get("device_mallocs"),
            "ooms": pt.get("ooms"),
            "error": None,
            "series": [r for r, _ in pt["series"]] or None,
            "allocated": [a for _, a in pt["series"]] or None,
            "oom_events": list(pt.get("oom_events", [])),
            "ended_at": None,
        }
    ]
    for r in runs:
        columns.append(
            {
                "name": _name(r),
                "by": r["by"],
                "settings": r["settings"],
                "peak_reserved": r.get("peak_reserved"),
                "utilization": r.get("utilization"),
                "device_mallocs": None if "error" in r else r["device_mallocs"] + r["maps"],
                "ooms": r.get("ooms"),
                "error": r.get("error"),
                "series": [x for x, _ in r["series"]] if "series" in r else None,
                "allocated": None,
                "oom_events": list(r.get("oom_events", [])),
                "ended_at": r.get("ended_at"),
            }
        )
    return {
        "title": f"{os.path.basename(args.snapshot)}: {head}",
        "subtitle": f"simulated device of {_device_text(args, t)};"
        f" {_order_note(t, args.address_order)}",
        "x_label": "CSV row" if t.csv else "trace event",
        "columns": columns,
        "table": {"header": table[0], "rows": table[1]},
        "answer": answer["lines"],
        "notes": notes,
    }


def _write_outputs(args: argparse.Namespace, report: dict[str, Any]) -> str | None:
    """The --plot and --html files, each written whole or not at all; an error line or None."""
    from . import _report, _report_html

    written = []
    try:
        if args.plot:
            if args.compare:
                _report.bars_png(args.plot, report)
            else:
                _report.timeline_png(args.plot, report)
            written.append(args.plot)
        if args.html:
            write_atomically(args.html, _report_html.html_page(report).encode())
            written.append(args.html)
    except _report.PlotUnavailable as e:
        return str(e)
    except OSError as e:
        for path in written:  # nothing half-written: the whole output or none of it
            os.remove(path)
        return f"cannot write {e.filename or 'the output'}: {e.strerror or e}"
    return None


def _json_run(r: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in r.items() if k not in ("series", "shown")}


def main(argv: list[str] | None = None) -> int:  # noqa: PLR0912 - a branch per option
    """The command line; returns the exit status (2 for a refused option or input)."""
    p = _parser()
    args = p.parse_args(argv)
    for option in ("plot", "html", "write_plan", "write_csv"):
        if getattr(args, option):
            _check_output(p, getattr(args, option), "--" + option.replace("_", "-"))
    if args.compare and args.settings is not None:
        p.error("argument --compare: not allowed with argument --settings (it tries its own)")
    for s in args.settings or []:
        error = _settings_error(s)
        if error is not None:
            p.error(f"argument --settings: {s!r}: {error}")
    args.descending = None if args.address_order == "auto" else args.address_order == "descending"
    try:
        t, pt = _load(args)
        refused = _check_inputs(t, pt, args)
    except SnapshotError as e:
        return _refuse(str(e))
    if refused is not None:
        return _refuse(refused)
    if args.write_plan or args.write_csv:
        return _write_files(t, args)
    for w in pt["warnings"]:
        print(f"pyc10.replay: WARNING: PyTorch's column for GPU {t.device}: {w}", file=sys.stderr)
    runs, notes = _columns(t, args)
    for r in runs:
        if args.settings is not None and r.get("steps_found") is False:
            return _refuse(
                f"--settings {r['settings']!r}: planning:True found no repeated step in this"
                " recording, so it would serve as the caching allocator does (the same figures"
                " as without it)"
            )
    shown = [r for r in runs if r.get("shown", True)]
    answer = _answer(pt, runs, t, args)
    table = _compare_table(pt, shown) if args.compare else _table(pt, shown)
    notes = _notes(pt, shown, t) + notes
    if args.plot or args.html:
        report = _report_data(
            args=args, t=t, pt=pt, runs=shown, table=table, answer=answer, notes=notes
        )
        failure = _write_outputs(args, report)
        if failure is not None:
            return _refuse(failure)
    if args.json:
        result = _json_result(args=args, t=t, pt=pt, runs=runs, answer=answer, notes=notes)
        print(json.dumps(result, indent=1))
        return 0
    what = (
        f"a replay CSV of {pt['events']} rows"
        if t.csv
        else f"GPU {t.device}, {pt['events']} events"
    )
    print(f"{args.snapshot}: {what}; {_order_note(t, args.address_order)}")
    print(f"simulated device: {_device_text(args, t)}")
    print(_format(*table))
    print(_LEGEND)
    for line in notes:
        print(line)
    for line in answer["lines"]:
        print(line)
    return 0


def _json_result(
    *,
    args: argparse.Namespace,
    t: Trace,
    pt: dict[str, Any],
    runs: list[dict[str, Any]],
    answer: dict[str, Any],
    notes: list[str],
) -> dict[str, Any]:
    return {
        "input": args.snapshot,
        "device": t.device,
        "addresses": _order_note(t, args.address_order),
        "capacity": args.capacity or t.capacity,
        "pytorch": {k: v for k, v in pt.items() if k != "series"},
        "columns": [_json_run(r) for r in runs if r.get("shown", True)],
        "also_tried": [_json_run(r) for r in runs if not r.get("shown", True)],
        "answer": dict(answer),
        "notes": notes,
        "unknown_frees": t.unknown_frees,
    }


def _write_files(t: Trace, args: argparse.Namespace) -> int:
    if args.write_csv:
        try:
            n = write_trace(t, args.write_csv)
        except (OSError, SnapshotError) as e:
            return _refuse(f"cannot write {args.write_csv}: {getattr(e, 'strerror', None) or e}")
        print(f"{args.write_csv}: {n} rows for bench/replay_trace (a cold start: the blocks alive"
              " when recording began, then the window)")  # fmt: skip
    if args.write_plan:
        try:
            arena, bound, n = make_plan(t, args.write_plan)
        except SnapshotError as e:
            return _refuse(str(e))
        except OSError as e:
            return _refuse(f"cannot write the plan to {args.write_plan}: {e}")
        print(
            f"{args.write_plan}: a plan of {n} requests for plan_file:{args.write_plan}; arena"
            f" {_gib(arena)} ({arena} bytes), lower bound {_gib(bound)} ({bound} bytes: the peak"
            " of live bytes, 512-byte rounded)"
        )
    return 0


def _cli() -> int:
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
    sys.exit(_cli())
