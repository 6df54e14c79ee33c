"""Planning and stitching beside PyTorch's allocator: peak reserved and utilization per trace.

Replays each trace through libc10c's CUDA caching allocator over the stand-in driver
(bench/replay_trace.c, fake addresses) under these settings:

- native: ``""`` (PyTorch's defaults); expandable: ``expandable_segments:True``;
- stitched: ``expandable_segments:True,stitching:True`` (free pages mapped into a new range);
- planned: an offline plan of the trace's own requests (``replay_trace --plan-from TRACE``, the
  plan of a run known in advance, served through ``plan_file:PATH``);
- online and online+exp: ``planning:True`` added to native and to expandable (each step
  recorded, the next ones served from its plan where that reserves less than without it).

Utilization is peak live requested bytes over peak reserved bytes (1.0: not a byte reserved
beyond what the program asked for at its peak); on a multi-step trace every figure is its last
step's. PyTorch's own figure, from the recording (pytorch_figures.json), is printed beside them.

The traces, from what ships (bench/traces: DeComFL's and cs336_hanmin_fullstep's layout forms)
and from every --traces DIR where they are (by default ../shared/traces beside the checkout;
each absent one is skipped with a line saying so):

- the real ones cold-start: the blocks alive when the recorded window began, then the window
  (their packed form, or the layout form with its rebuilt free space left out);
- the same window repeated as four steps (bench/repeat_trace.py: the step of a training or
  inference loop), for online planning: "real repeated" rows, marked ``*``;
- the synthetic multi-step traces of bench/trace_gen.py (T-small, 8 steps; --quick: 2 layers,
  5 steps), marked ``*``.

    bash tests/run.sh        # builds build/tests (the replayer and the stand-in)
    python bench/run_plans.py [--build build/tests] [--traces DIR ... | --no-fetched]
                              [--out DIR] [--quick] [--check] [--jobs 2]

Writes OUT/plans.json and, where numpy is importable, OUT/plans.png. --check exits 1 when a
target fails: planned utilization >= 0.97 on every real trace and a median >= 0.99 over them;
planned peak reserved <= native's and expandable's on every trace; stitched <= expandable on
every real trace (within 0.5%: stitching lends pages that a later request may then miss,
0.06% more on cs336_aimetrics_2.7b_train); online planning (on native and on expandable)
never above the same settings without it in any step after the first (within 0.5%), on
every multi-step trace; median last-step utilization >= 0.98 under planning:True (native and
expandable) over the real repeated traces; no unsafe cross-stream reuse anywhere; and
nesta_dit_oom, which ran out of memory under PyTorch, completes under its plan at PyTorch's
capacity then where its peak live bytes fit. Exit status 77 (a skip, for meson) when no real
trace is there.
"""

from __future__ import annotations

import argparse
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

import repeat_trace
import trace_gen

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = {
    "native": "",
    "expandable": "expandable_segments:True",
    "stitched": "expandable_segments:True,stitching:True",
    "planned": None,  # --plan-from the trace itself
    "online": "planning:True",
    "online+exp": "expandable_segments:True,planning:True",
}
BASE = {"online": "native", "online+exp": "expandable"}
OOM_TRACE = "nesta_dit_oom"
SKIP = 77  # meson's exit status for a skipped test
TOLERANCE = 1.005


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


def figures_of(r: dict, multistep: bool) -> tuple[float, float]:
    """(peak reserved, utilization) of a replay: its last step's on a multi-step trace."""
    if "error" in r:
        return math.nan, math.nan
    if multistep and r.get("per_step"):
        last = r["per_step"][-1]
        peak, live = last["peak_reserved"], last["peak_live_requested"]
    else:
        peak, live = r["peak_reserved"], r["peak_live_requested"]
    return float(peak), (live / peak if peak else math.nan)


def packed_rows(layout: list[dict[str, str]]) -> list[dict[str, str]]:
    """A layout form's packed form: the prologue's blocks still alive when it ends, then the
    window (the prologue's rebuilt free space, fillers and cached segments, left out)."""
    start = next(
        k for k, r in enumerate(layout) if r["Action"] == "step_begin" and r["Step"] != "0"
    )
    freed = {r["Pointer"] for r in layout[:start] if r["Action"] == "free"}
    live = [r for r in layout[:start] if r["Action"] == "allocate" and r["Pointer"] not in freed]
    rows = [r for r in layout[:start] if r["Action"] == "step_begin"] + live + layout[start:]
    for k, row in enumerate(rows):
        row["Time"] = str(k + 1)
    return rows


def find_traces(args: argparse.Namespace, tmp: Path) -> dict[str, dict]:
    """{name: {"path", "real", "multistep", "pt"}} of the traces to replay."""
    dirs = [ROOT / "bench" / "traces", *map(Path, args.traces)]
    figures: dict = json.loads((ROOT / "bench" / "traces" / "pytorch_figures.json").read_text())
    found: dict[str, dict] = {}
    for name, entry in figures.items():
        forms = [entry["files"].get("packed"), entry["files"].get("layout")]
        path = next((d / f for f in forms if f for d in dirs if (d / f).exists()), None)
        if path is None:
            if args.traces:  # looked for where fetched ones are: say it was not there
                where = ", ".join(os.path.relpath(d, ROOT) for d in dirs)
                print(f"{name}: skipped (neither form is in {where})")
            continue
        rows = repeat_trace.read_rows(path)
        if ".layout." in path.name:
            rows = packed_rows(rows)
        cold, repeated = tmp / f"{name}.csv", tmp / f"{name}.repeat4.csv"
        repeat_trace.write_rows(rows, cold)
        repeat_trace.write_rows(repeat_trace.repeat_rows(rows, 4), repeated)
        pt = entry["pytorch"]
        found[name] = {"path": cold, "real": True, "multistep": False, "pt": pt}
        found[name + "*4"] = {"path": repeated, "real": True, "multistep": True, "pt": pt}
    model = trace_gen.Model(layers=2) if args.quick else trace_gen.Model()
    steps = 5 if args.quick else 8
    for variant in trace_gen.VARIANTS:
        path = tmp / f"{variant}.csv"
        trace_gen.write(trace_gen.generate(variant, model, steps, seed=0), str(path))
        found[variant] = {"path": path, "real": False, "multistep": True, "pt": None}
    return found


def run_all(args: argparse.Namespace, traces: dict[str, dict]) -> dict[str, dict[str, dict]]:
    """Every trace under every setting (args.jobs replays at a time)."""
    build = Path(args.build)
    exe = Path(args.replay or build / "bench" / "replay_trace")
    stub = Path(args.stub or build / "tests" / "libc10c_cuda_stub.so")
    jobs = {(name, s): (t["path"], s) for name, t in traces.items() for s in SETTINGS}
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {k: pool.submit(replay, exe, stub, p, s) for k, (p, s) in jobs.items()}
        if OOM_TRACE in traces:  # planned, at the capacity PyTorch had when it failed
            capacity = traces[OOM_TRACE]["pt"].get("pt_capacity_at_oom")
            if capacity:
                futures[(OOM_TRACE, "planned@capacity")] = pool.submit(
                    replay, exe, stub, traces[OOM_TRACE]["path"], "planned", "--capacity",
                    str(capacity),
                )  # fmt: skip
        results: dict[str, dict[str, dict]] = {name: {} for name in traces}
        for (name, s), f in futures.items():
            results[name][s] = f.result()
    for name, t in traces.items():
        for r in results[name].values():
            r["peak_shown"], r["utilization"] = figures_of(r, t["multistep"])
    return results


def gib(n: float | None) -> str:
    """Bytes as GiB, 3 decimals ("-" for none)."""
    return "-" if n is None or math.isnan(n) else f"{n / 2**30:.3f}"


def cell(r: dict) -> str:
    """Peak reserved GiB and utilization."""
    if "error" in r:
        return "error"
    u = r["utilization"]
    return f"{gib(r['peak_shown'])} {'-' if math.isnan(u) else f'{u:.3f}'}"


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
        pt_cell = "-" if pt is None else f"{gib(pt['pt_peak_reserved'])} {pt_utilization(pt):.3f}"
        label = name + ("*" if t["multistep"] and not name.endswith("*4") else "")
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

    groups = {
        "real": [k for k, t in traces.items() if t["real"] and not t["multistep"]],
        "real repeated*": [k for k, t in traces.items() if t["real"] and t["multistep"]],
        "synthetic*": [k for k, t in traces.items() if not t["real"]],
    }
    for label, which in groups.items():
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
        "util = peak live requested / peak reserved; *4: the recorded window as four steps,"
        " * multi-step (figures of the last step); cold start, fake-address stand-in driver;"
        " PyTorch's: its one recorded window"
    )
    print("\n".join(lines))
    return lines


def step_failures(name: str, runs: dict[str, dict]) -> list[str]:
    """Online planning above the same settings without it in a step after the first."""
    failed = []
    for online, base in BASE.items():
        steps, base_steps = runs[online].get("per_step") or [], runs[base].get("per_step") or []
        for s, b in list(zip(steps, base_steps, strict=False))[2:]:
            if s["peak_reserved"] > b["peak_reserved"] * TOLERANCE:
                failed.append(
                    f"{name}/{online}: step {s['step']} reserves {s['peak_reserved']}, above"
                    f" {base}'s {b['peak_reserved']} (+0.5%)"
                )
    return failed


def trace_failures(name: str, runs: dict[str, dict], t: dict) -> list[str]:
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
    real_cold = t["real"] and not t["multistep"]
    if real_cold and runs["stitched"]["peak_reserved"] > expandable["peak_reserved"] * TOLERANCE:
        failed.append(
            f"{name}: stitched peak reserved {runs['stitched']['peak_reserved']} above"
            f" expandable's {expandable['peak_reserved']}"
        )
    if real_cold and not planned["utilization"] >= 0.97:
        failed.append(f"{name}: planned utilization {planned['utilization']:.4f} < 0.97")
    if t["multistep"]:
        failed += step_failures(name, runs)
    return failed


def failures_of(traces: dict[str, dict], results: dict[str, dict[str, dict]]) -> list[str]:
    """The targets that fail (see the module's docstring)."""
    failed = []
    for name, runs in results.items():
        failed += trace_failures(name, runs, traces[name])
    cold = [k for k, t in traces.items() if t["real"] and not t["multistep"]]
    planned_real = [results[k]["planned"]["utilization"] for k in cold]
    if planned_real and not statistics.median(planned_real) >= 0.99:
        failed.append(f"planned median utilization {statistics.median(planned_real):.4f} < 0.99")
    repeated = [k for k, t in traces.items() if t["real"] and t["multistep"]]
    for online in BASE:
        utils = [results[k][online]["utilization"] for k in repeated]
        if utils and not statistics.median(utils) >= 0.98:
            failed.append(
                f"{online}: median last-step utilization {statistics.median(utils):.4f} < 0.98"
                " over the real repeated traces"
            )
    at_capacity = results.get(OOM_TRACE, {}).get("planned@capacity")
    if at_capacity is not None:
        capacity = traces[OOM_TRACE]["pt"]["pt_capacity_at_oom"]
        needs = results[OOM_TRACE]["planned"].get("peak_live_requested")
        if "error" in at_capacity:
            failed.append(f"{OOM_TRACE}: planned at PyTorch's capacity: {at_capacity['error']}")
        elif needs is not None and needs <= capacity and not at_capacity["ok"]:
            failed.append(
                f"{OOM_TRACE}: planned, it fails at PyTorch's capacity {capacity} though its"
                f" peak live bytes {needs} fit"
            )
    return failed


def label(name: str) -> str:
    """A trace's short name on the chart."""
    short = name.replace("cs336_", "").split("_")[0]
    return short + (" x4" if name.endswith("*4") else "")


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
        [label(g) for g in groups],
        series,
        [("utilization per trace and setting", values, 0.97)],
        floor=0.0,
    )
    return True


def main() -> int:
    """Runs the comparison; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=str(ROOT / "build" / "tests"))
    parser.add_argument("--replay", help="the replay_trace executable (default: in --build)")
    parser.add_argument("--stub", help="the stand-in driver (default: in --build)")
    parser.add_argument(
        "--traces",
        action="append",
        help="a folder of fetched traces (repeatable; default ../shared/traces beside the"
        " checkout); bench/traces is always read",
    )
    parser.add_argument(
        "--no-fetched", action="store_true", help="only what ships (bench/traces): no --traces"
    )
    parser.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "c10c-plans"))
    parser.add_argument("--quick", action="store_true", help="small synthetic traces (for CI)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target fails")
    parser.add_argument("--jobs", type=int, default=2, help="replays at a time (default 2)")
    args = parser.parse_args()
    if args.no_fetched:
        args.traces = []
    elif args.traces is None:
        args.traces = [str(ROOT.parent / "shared" / "traces")]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        traces = find_traces(args, Path(tmp))
        if not any(t["real"] for t in traces.values()):
            print("no real trace here: skipped")
            return SKIP
        results = run_all(args, traces)
    lines = print_table(traces, results)
    failures = failures_of(traces, results)
    png = out / "plans.png"
    drawn = plot(traces, results, png)
    for runs in results.values():  # JSON has no NaN
        for r in runs.values():
            for key in ("utilization", "peak_shown"):
                if isinstance(r.get(key), float) and math.isnan(r[key]):
                    r[key] = None
    (out / "plans.json").write_text(
        json.dumps({"table": lines, "results": results, "failures": failures}, indent=1)
    )
    print(f"wrote {out / 'plans.json'}" + (f" and {png}" if drawn else ""))
    for failure in failures:
        print(f"FAILED: {failure}")
    return 1 if args.check and failures else 0


if __name__ == "__main__":
    sys.exit(main())
