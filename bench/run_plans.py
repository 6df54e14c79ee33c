"""Planning and stitching beside PyTorch's allocator: peak reserved and utilization per trace.

Replays each trace cold-start through libc10c's CUDA caching allocator over the stand-in driver
(bench/replay_trace.c, fake addresses) under five settings:

- native: ``""`` (PyTorch's defaults);
- expandable: ``expandable_segments:True``;
- stitched: ``expandable_segments:True,stitching:True`` (free pages mapped into a new range);
- planned: an offline plan of the trace's own requests (``replay_trace --plan-from TRACE``, the
  plan of a run known in advance, served through ``plan_file:PATH``);
- online: ``planning:True`` (each step recorded, the next ones served from its plan; on the
  multi-step traces utilization and peak reserved count the steps after the recording of the
  plan in use at the end, or after planning was dropped; with expandable segments, so that what
  the recorded steps cached is given back page by page).

Utilization is peak live requested bytes over peak reserved bytes (1.0: not a byte reserved
beyond what the program asked for at its peak). PyTorch's own figure, from the recording
(pt_peak_live_requested / pt_peak_reserved in pytorch_figures.json), is printed beside them.

The traces: the real ones' packed forms (only the live allocations before the recorded window,
then the window; bench/traces/README.md), looked for in bench/traces and ../shared/traces beside
the repository (--shared-traces; each absent one is skipped with a line saying so),
cs336_hanmin_fullstep.repeat4 (the window four times), and the synthetic multi-step training
traces of bench/trace_gen.py (T-small, 8 steps; --quick: 2 layers, 5 steps).

    bash tests/run.sh        # builds build/tests (the replayer and the stand-in)
    python bench/run_plans.py [--build build/tests] [--out /tmp/c10c-plans] [--quick] [--check]

Writes OUT/plans.json and, where numpy is importable, OUT/plans.png (grouped bars of
utilization per trace and setting). --check exits 1 when a target fails: planned utilization
>= 0.97 on every real trace and a median >= 0.99 over them; planned peak reserved <= native's
and <= expandable's on every trace; stitched peak reserved <= expandable's on every real trace
(the synthetic ones are printed, not checked: on inference stitching lends pages that a later
request then misses);
online planning's median utilization >= 0.98 over the multi-step traces; no unsafe cross-stream
reuse anywhere; and nesta_dit_oom, which ran out of memory under PyTorch, completes under its
plan at PyTorch's capacity then (pt_capacity_at_oom; --capacity) where its peak live bytes,
the failing request included, fit in it. Exit status 77 (a skip, for meson) when no real trace
is there.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import check_traces
import trace_gen

SETTINGS = {
    "native": "",
    "expandable": "expandable_segments:True",
    "stitched": "expandable_segments:True,stitching:True",
    "planned": None,  # --plan-from the trace itself
    "online": "planning:True,expandable_segments:True",
}
REPEAT = "cs336_hanmin_fullstep.repeat4"
OOM_TRACE = "nesta_dit_oom"
SKIP = 77  # meson's exit status for a skipped test


def replay(exe: Path, stub: Path, trace: Path, setting: str, *flags: str) -> dict:
    """One cold-start replay's JSON report (or {"error": ...} where it printed none)."""
    env = dict(os.environ, C10C_CUDA_DRIVER=str(stub), C10C_STUB_FAKE="1")
    for name in ("C10C_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "C10C_STUB_ADDRESS_ORDER"):
        env.pop(name, None)
    config = [] if SETTINGS[setting] is None else ["--config", SETTINGS[setting] or ""]
    plan = ["--plan-from", str(trace)] if SETTINGS[setting] is None else []
    argv = [str(exe), str(trace), *config, *plan, "--no-search", "--repeat", "0", "--keep-going"]
    out = subprocess.run([*argv, *flags], env=env, capture_output=True, text=True, check=False)
    if not out.stdout.strip():
        return {"error": out.stderr.strip().splitlines()[-1:] or [f"exit {out.returncode}"]}
    report: dict = json.loads(out.stdout)
    return report


def utilization(r: dict, multistep: bool, setting: str) -> float:
    """Peak live requested over peak reserved (online on a multi-step trace: after its plan)."""
    if "error" in r:
        return math.nan
    if setting == "online" and multistep:
        u = (r.get("plan") or {}).get("utilization_after_plan")
        return math.nan if u is None else float(u)
    if not r["peak_reserved"]:
        return math.nan
    return float(r["peak_live_requested"] / r["peak_reserved"])


def find_traces(args: argparse.Namespace, tmp: Path) -> tuple[dict[str, dict], dict]:
    """{name: {"path", "real", "multistep", "pt"}} of the traces to replay, and the figures."""
    traces_dir, shared = Path(args.traces), Path(args.shared_traces)
    figures: dict = json.loads((traces_dir / "pytorch_figures.json").read_text())
    found: dict[str, dict] = {}

    def unpack(name: str, file: str) -> Path | None:
        for folder in (traces_dir, shared):
            if (folder / file).exists():
                csv = tmp / f"{name}.csv"
                csv.write_bytes(gzip.decompress((folder / file).read_bytes()))
                return csv
        print(f"{name}: skipped ({file} is neither in {traces_dir} nor in {shared})")
        return None

    for name, entry in figures.items():
        path = unpack(name, entry["files"].get("packed", f"{name}.packed.csv.gz"))
        if path is not None:
            found[name] = {"path": path, "real": True, "multistep": False, "pt": entry["pytorch"]}
    base = REPEAT.split(".", maxsplit=1)[0]
    path = unpack(REPEAT, f"{REPEAT}.csv.gz")
    if path is not None:
        found[REPEAT] = {"path": path, "real": False, "multistep": True,
                         "pt": figures.get(base, {}).get("pytorch")}  # fmt: skip
    model = trace_gen.Model(layers=2) if args.quick else trace_gen.Model()
    steps = 5 if args.quick else 8
    for variant in trace_gen.VARIANTS:
        path = tmp / f"{variant}.csv"
        trace_gen.write(trace_gen.generate(variant, model, steps, seed=0), str(path))
        found[variant] = {"path": path, "real": False, "multistep": True, "pt": None}
    return found, figures


def run_all(args: argparse.Namespace, traces: dict[str, dict]) -> dict[str, dict[str, dict]]:
    """Every trace under every setting (args.jobs replays at a time)."""
    build = Path(args.build)
    exe = Path(args.replay or build / "bench" / "replay_trace")
    stub = Path(args.stub or build / "tests" / "libc10c_cuda_stub.so")
    jobs = {(name, s): (t["path"], s) for name, t in traces.items() for s in SETTINGS}
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {k: pool.submit(replay, exe, stub, p, s) for k, (p, s) in jobs.items()}
        if OOM_TRACE in traces:  # planned, at the capacity PyTorch had when it failed
            t = traces[OOM_TRACE]
            capacity = args.capacity or t["pt"].get("pt_capacity_at_oom")
            if capacity:
                futures[(OOM_TRACE, "planned@capacity")] = pool.submit(
                    replay, exe, stub, t["path"], "planned", "--capacity", str(capacity)
                )
        results: dict[str, dict[str, dict]] = {name: {} for name in traces}
        for (name, s), f in futures.items():
            results[name][s] = f.result()
    for name, t in traces.items():
        for s, r in results[name].items():
            r["utilization"] = utilization(r, t["multistep"], s.split("@")[0])
            after = (r.get("plan") or {}).get("peak_reserved_after_plan")
            if s.split("@")[0] == "online" and t["multistep"] and after is not None:
                r["peak_shown"] = after  # the same steps as its utilization
    return results


def gib(n: float | None) -> str:
    """Bytes as GiB, 3 decimals ("-" for none)."""
    return "-" if n is None else f"{n / 2**30:.3f}"


def cell(r: dict) -> str:
    """Peak reserved GiB and utilization."""
    if "error" in r:
        return "error"
    u = r["utilization"]
    peak = r.get("peak_shown", r["peak_reserved"])
    return f"{gib(peak)} {'-' if math.isnan(u) else f'{u:.3f}'}"


def pt_utilization(pt: dict | None) -> float:
    """PyTorch's recorded peak live requested over its peak reserved."""
    if not pt or not pt.get("pt_peak_reserved"):
        return math.nan
    return float(pt["pt_peak_live_requested"] / pt["pt_peak_reserved"])


def print_table(traces: dict[str, dict], results: dict[str, dict[str, dict]]) -> list[str]:
    """The side-by-side table (peak reserved GiB and utilization per setting); its lines."""
    names = ["PyTorch", *SETTINGS]
    head = ["trace", *(f"{n} GiB util" for n in names)]
    rows = [head]
    for name, t in traces.items():
        pt = t["pt"]
        u = pt_utilization(pt)
        pt_cell = "-" if pt is None else f"{gib(pt['pt_peak_reserved'])} {u:.3f}"
        label = name + ("*" if t["multistep"] else "")
        rows.append([label, pt_cell, *(cell(results[name][s]) for s in SETTINGS)])

    def summary(label: str, fn: object, which: list[str]) -> list[str]:
        out = [label]
        for n in names:
            if n == "PyTorch":
                vals = [pt_utilization(traces[k]["pt"]) for k in which]
            else:
                vals = [results[k][n]["utilization"] for k in which]
            vals = [v for v in vals if not math.isnan(v)]
            out.append(f"{fn(vals):.3f}" if vals else "-")  # type: ignore[operator]
        return out

    real = [k for k, t in traces.items() if t["real"]]
    multi = [k for k, t in traces.items() if t["multistep"]]
    for label, which in (("real", real), ("multi-step*", multi), ("all", list(traces))):
        if which:
            rows.append(summary(f"median util, {label}", statistics.median, which))
            rows.append(summary(f"min util, {label}", min, which))
    widths = [max(len(r[k]) for r in rows) for k in range(len(head))]
    lines = []
    for i, r in enumerate(rows):
        lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |")
        if i == 0:
            lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    lines.append(
        "util = peak live requested / peak reserved; * multi-step (online: the steps after the"
        " recording of the plan in use at the end, or after planning was dropped; PyTorch's for"
        f" {REPEAT}: its one recorded window); cold start, fake-address stand-in driver"
    )
    print("\n".join(lines))
    return lines


def trace_failures(name: str, runs: dict[str, dict], real: bool) -> list[str]:
    """The targets one trace's replays fail."""
    failed = []
    for s, r in runs.items():
        if "error" in r:
            failed.append(f"{name}/{s}: the replay failed: {r['error']}")
        elif r["unsafe_reuses"] != 0:
            failed.append(f"{name}/{s}: {r['unsafe_reuses']} unsafe cross-stream reuses")
    if any("error" in runs[s] for s in SETTINGS):
        return failed
    planned, expandable = runs["planned"], runs["expandable"]
    for other in ("native", "expandable"):
        if planned["peak_reserved"] > runs[other]["peak_reserved"]:
            failed.append(
                f"{name}: planned peak reserved {planned['peak_reserved']} above {other}'s"
                f" {runs[other]['peak_reserved']}"
            )
    if real and runs["stitched"]["peak_reserved"] > expandable["peak_reserved"]:
        failed.append(
            f"{name}: stitched peak reserved {runs['stitched']['peak_reserved']} above"
            f" expandable's {expandable['peak_reserved']}"
        )
    if real and not planned["utilization"] >= 0.97:
        failed.append(f"{name}: planned utilization {planned['utilization']:.4f} < 0.97")
    return failed


def failures_of(
    traces: dict[str, dict], results: dict[str, dict[str, dict]], figures: dict
) -> list[str]:
    """The targets that fail (see the module's docstring)."""
    failed = []
    real = [k for k, t in traces.items() if t["real"]]
    for name, runs in results.items():
        failed += trace_failures(name, runs, traces[name]["real"])
    planned_real = [results[k]["planned"].get("utilization", math.nan) for k in real]
    if planned_real and not statistics.median(planned_real) >= 0.99:
        failed.append(f"planned median utilization {statistics.median(planned_real):.4f} < 0.99")
    online = [results[k]["online"]["utilization"] for k, t in traces.items() if t["multistep"]]
    if online and not statistics.median(online) >= 0.98:
        failed.append(f"online median utilization {statistics.median(online):.4f} < 0.98")
    at_capacity = results.get(OOM_TRACE, {}).get("planned@capacity")
    if at_capacity is not None:
        capacity = figures[OOM_TRACE]["pytorch"]["pt_capacity_at_oom"]
        needs = results[OOM_TRACE]["planned"].get("peak_live_requested")
        if "error" in at_capacity:
            failed.append(f"{OOM_TRACE}: planned at PyTorch's capacity: {at_capacity['error']}")
        elif needs is not None and needs <= capacity and not at_capacity["ok"]:
            failed.append(
                f"{OOM_TRACE}: planned, it fails at PyTorch's capacity {capacity} though its"
                f" peak live bytes {needs} fit"
            )
    return failed


def oom_note(results: dict[str, dict[str, dict]], figures: dict) -> str | None:
    """What planning does with the trace that ran out of memory under PyTorch."""
    runs = results.get(OOM_TRACE, {})
    r = runs.get("planned@capacity")
    if r is None or "error" in r:
        return None
    capacity = figures[OOM_TRACE]["pytorch"]["pt_capacity_at_oom"]
    needs = runs["planned"].get("peak_live_requested", 0)
    verdict = "completes" if r["ok"] else "runs out of memory too"
    fits = "fit" if needs <= capacity else "do not fit"
    return (
        f"{OOM_TRACE} at PyTorch's capacity {gib(capacity)} GiB, planned: {verdict} (peak live"
        f" bytes with the failing request, {gib(needs)} GiB, {fits})"
    )


def plot(traces: dict[str, dict], results: dict[str, dict[str, dict]], png: Path) -> bool:
    """Grouped bars of utilization per trace and setting (PyTorch's recorded one first)."""
    try:
        import png_chart
    except ImportError as e:
        print(f"no chart: numpy is not importable ({e})")
        return False
    groups = list(traces)
    series = ["PyTorch", *SETTINGS]
    values = [[pt_utilization(traces[g]["pt"]) for g in groups]]
    values += [[results[g][s]["utilization"] for g in groups] for s in SETTINGS]
    png_chart.bar_panels(
        str(png),
        "peak live requested / peak reserved, cold start",
        [g.replace("cs336_", "").split("_")[0].replace(".repeat4", " x4") for g in groups],
        series,
        [("utilization per trace and setting", values, 0.97)],
        floor=0.0,
    )
    return True


def main() -> int:
    """Runs the comparison; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    check_traces.add_trace_arguments(parser)
    parser.add_argument("--out", default="/tmp/c10c-plans")
    parser.add_argument("--quick", action="store_true", help="small synthetic traces (for CI)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target fails")
    parser.add_argument("--capacity", type=int, help=f"{OOM_TRACE}'s device bytes")
    parser.add_argument("--jobs", type=int, default=2, help="replays at a time (default 2)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        traces, figures = find_traces(args, Path(tmp))
        if not any(t["real"] for t in traces.values()):
            print("no real trace here: skipped")
            return SKIP
        results = run_all(args, traces)
    lines = print_table(traces, results)
    note = oom_note(results, figures)
    if note:
        print(note)
    failures = failures_of(traces, results, figures)
    png = out / "plans.png"
    drawn = plot(traces, results, png)
    for runs in results.values():  # JSON has no NaN
        for r in runs.values():
            if math.isnan(r["utilization"]):
                r["utilization"] = None
    (out / "plans.json").write_text(
        json.dumps({"table": lines, "results": results, "failures": failures}, indent=1)
    )
    print(f"wrote {out / 'plans.json'}" + (f" and {png}" if drawn else ""))
    for failure in failures:
        print(f"FAILED: {failure}")
    return 1 if args.check and failures else 0


if __name__ == "__main__":
    sys.exit(main())
