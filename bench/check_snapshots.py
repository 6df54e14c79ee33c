"""Every published snapshot checked through python -m pyc10.replay's columns.

Per snapshot (its busiest device), the replays the tool prints, and what must hold of them:

- one model: the planned column's arena is the arena --write-plan reports (c10c_plan_make over
  the same requests), and, with --replay, bench/replay_trace --plan-from over the tool's packed
  CSV (--write-csv) makes the same arena;
- the plan of the recording reserves no more than the recorded settings or expandable segments
  replayed, at utilization >= 0.97 (peak live requested bytes over peak reserved);
- online planning (planning:True added to the recorded settings, and to expandable_segments)
  reserves no more than the same settings without it, within 0.5%;
- no invented out-of-memory: no column runs out of memory where the recording did not.

    python bench/check_snapshots.py [DIR or FILES ...] [--jobs 2] [--json OUT] [--check]
                                    [--replay build/tests/bench/replay_trace --stub ...]

DIR defaults to tests/python/data (the snapshots that ship) and ../snapshots beside the
checkout when it is there (fetched ones, not shipped: their licences do not all allow it).
Prints a Markdown table; --check exits 1 when a snapshot fails a target. Files that are not
snapshots, or whose busiest device has no trace, are listed as skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run_plans

ROOT = Path(__file__).resolve().parents[1]
TOLERANCE = 1.005  # online planning may reserve this much more than without it
UTILIZATION = 0.97


def replay_trace_arena(csv: str, replay: str, stub: str) -> int | None:
    """bench/replay_trace --plan-from's arena for csv (None when it printed no report)."""
    report = run_plans.replay(Path(replay), Path(stub), Path(csv), "planned",
                              "--capacity", str(1 << 50))  # fmt: skip
    return None if "error" in report else int(report["plan"]["arena_bytes"])


def check_one(path: str, replay_exe: str | None, stub: str | None) -> dict[str, Any]:
    """The figures and failures of one snapshot."""
    from pyc10 import replay
    from pyc10._replay_sim import planned, with_setting

    name = os.path.basename(path)
    try:
        snap = replay.load(path, 1 << 30)
        t = replay.convert(snap)
        pt = replay.pytorch_figures(snap, t.device)
    except replay.SnapshotError as e:
        return {"name": name, "skipped": str(e)}
    if not t.window:
        return {"name": name, "skipped": "no allocations in the recorded window"}
    rec = t.recorded_settings
    exp = "expandable_segments:True"
    runs = {
        "recorded": replay.replay(t, rec),
        "expandable": replay.replay(t, exp) if "expandable" not in rec else None,
        "online": replay.replay(t, with_setting(rec, "planning:True")),
        "online_expandable": replay.replay(t, with_setting(exp, "planning:True"))
        if "expandable" not in rec
        else None,
        "planned": planned(t, None, None, None),
    }
    runs["expandable"] = runs["expandable"] or runs["recorded"]
    runs["online_expandable"] = runs["online_expandable"] or runs["online"]
    failures = []
    r = {"name": name, "events": pt["events"], "device": t.device, "pt": pt["peak_reserved"],
         "pt_ooms": pt["ooms"]}  # fmt: skip
    for key, run in runs.items():
        if "error" in run:
            failures.append(f"{key}: {run['error']}")
            continue
        r[key] = run["peak_reserved"]
        r[key + "_util"] = run["utilization"]
        if run.get("ended_at") is not None or (run["ooms"] and not pt["ooms"]):
            failures.append(f"{key}: out of memory where the recording was not")
    if failures:
        return {**r, "failures": failures}
    # the plan --write-plan writes (make_plan), and the arena the planned replay served from
    made = runs["planned"]["plan_made"]
    arena, r["bound"] = made["arena_bytes"], made["lower_bound"]
    served = runs["planned"]["plan"]["arena_bytes"]
    if served != arena:
        failures.append(f"planned replay's arena {served}, --write-plan's {arena}")
    if replay_exe and stub:
        with tempfile.TemporaryDirectory() as tmp:
            csv = os.path.join(tmp, "packed.csv")
            replay.write_trace(t, csv)
            other = replay_trace_arena(csv, replay_exe, stub)
        r["replay_trace_arena"] = other
        if other != arena:
            failures.append(f"planned arena {arena}, replay_trace --plan-from's {other}")
    r["arena"] = arena
    failures += targets(r)
    return {**r, "failures": failures}


def targets(r: dict[str, Any]) -> list[str]:
    """The targets of a snapshot's figures that fail (see the module's description)."""
    failures = []
    for base in ("recorded", "expandable"):
        if r["planned"] > r[base]:
            failures.append(f"planned {r['planned']} above {base} {r[base]}")
    # tiny recordings: an arena in whole 2 MiB within 2 MiB of the lower bound is the best
    tiny = r["planned"] <= r["bound"] + (4 << 20)
    if r["planned_util"] < UTILIZATION and not tiny:
        failures.append(f"planned utilization {r['planned_util']:.4f} < {UTILIZATION}")
    for online, base in (("online", "recorded"), ("online_expandable", "expandable")):
        if r[online] > r[base] * TOLERANCE:
            failures.append(f"{online} {r[online]} above {base} {r[base]} (+0.5%)")
    return failures


def gib(n: int | None) -> str:
    """Bytes as GiB, 3 decimals."""
    return "-" if n is None else f"{n / 2**30:.3f}"


def table(results: list[dict[str, Any]]) -> list[str]:
    """The Markdown table of the checked snapshots."""
    head = ["snapshot", "events", "PyTorch GiB", "recorded", "expandable", "planned (util)",
            "online/recorded", "online/expandable", "ok"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in results:
        if "skipped" in r or "planned" not in r:
            continue
        cells = [
            r["name"][:70], str(r["events"]), gib(r["pt"]), gib(r["recorded"]),
            gib(r["expandable"]), f"{gib(r['planned'])} ({r['planned_util']:.3f})",
            f"{r['online'] / r['recorded']:.4f}", f"{r['online_expandable'] / r['expandable']:.4f}",
            "yes" if not r["failures"] else "NO",
        ]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main() -> int:
    """Checks the snapshots; the exit status."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("paths", nargs="*")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--json")
    p.add_argument("--check", action="store_true")
    p.add_argument("--replay", help="bench/replay_trace, to check its plan of the packed CSV")
    p.add_argument("--stub", help="the stand-in driver replay_trace runs on")
    args = p.parse_args()
    paths = args.paths or [str(ROOT / "tests/python/data"), str(ROOT.parent / "snapshots")]
    files: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            files += sorted(
                str(f) for f in Path(path).iterdir()
                if f.name.endswith((".pickle", ".pkl", ".json.gz", ".json", ".pickle.gz"))
            )  # fmt: skip
        elif os.path.exists(path):
            files.append(path)
        else:
            print(f"{path}: not there, skipped")
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(check_one, files, [args.replay] * len(files),
                                [args.stub] * len(files)))  # fmt: skip
    print("\n".join(table(results)))
    checked = [r for r in results if "planned" in r]
    for r in results:
        if "skipped" in r:
            print(f"skipped {r['name']}: {r['skipped']}")
    failed = [r for r in results if r.get("failures")]
    for r in failed:
        for f in r["failures"]:
            print(f"FAILED {r['name']}: {f}")
    if checked:
        utils = [r["planned_util"] for r in checked]
        worst = max(max(r["online"] / r["recorded"], r["online_expandable"] / r["expandable"])
                    for r in checked)  # fmt: skip
        print(
            f"{len(checked)} snapshots checked, {len(failed)} failed; planned utilization median"
            f" {statistics.median(utils):.4f}, min {min(utils):.4f}; online planning at most"
            f" {worst:.4f}x the same settings without it"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 1 if args.check and failed else 0


if __name__ == "__main__":
    sys.exit(main())
