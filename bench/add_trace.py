"""A published memory snapshot as a trace of bench/traces, with PyTorch's own figures.

Writes NAME.layout.csv.gz (python -m pyc10.replay's layout form: a prologue that rebuilds
PyTorch's segments as they stood when the recorded window began, then the window; requested
sizes; an out-of-memory event as an allocation never freed) into the traces folder and adds
NAME's entry to its pytorch_figures.json: what PyTorch did in the window (cudaMalloc and
cudaFree calls or page maps and unmaps, reserved bytes at the start and at the peak, peak live
requested bytes, the settings it ran with, the failing request and the capacity then), read
from the snapshot itself, and where the snapshot comes from. bench/check_traces.py then
replays it with PyTorch's settings and compares every figure.

Only snapshots whose source states a licence that allows redistribution belong in
bench/traces (bench/traces/README.md; the attribution goes into NOTICE).

    python bench/add_trace.py SNAPSHOT NAME --repo OWNER/NAME --commit SHA --path PATH
                              --license SPDX --description TEXT [--traces DIR] [--device N]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pyc10 import replay

ROOT = Path(__file__).resolve().parent.parent


def entry_for(t: replay.Trace, pt: dict, source: dict, name: str) -> dict:
    """NAME's pytorch_figures.json entry, from the replay and PyTorch's figures."""
    if pt["warnings"]:
        raise SystemExit(f"PyTorch's column cannot be right: {'; '.join(pt['warnings'])}")
    streams = sorted({op[3] for op in t.window if op[0] in ("malloc", "oom")} or {0})
    freed = {op[1] for op in t.window if op[0] == "free"}
    figures = {
        "alloc_conf": t.recorded_settings,
        # every block the window allocates is freed in it
        "closed": all(op[1] in freed for op in t.window if op[0] == "malloc"),
        "device": t.device,
        "events": pt["events"],
        "expandable_segments": t.expandable,
        "oom": [],
        "pt_cudafree_calls": pt["device_frees"],
        "pt_cudamalloc_calls": pt["device_mallocs"],
        "pt_peak_live_requested": pt["peak_live_requested"],
        "pt_peak_reserved": pt["peak_reserved"],
        "pt_reserved_at_start": pt["reserved_at_start"],
        "pt_segment_maps": pt["maps"],
        "pt_segment_unmaps": pt["unmaps"],
        "streams": streams,
    }
    if t.descending:  # the driver's order, inferred from the segments' addresses
        figures["address_order"] = "descending"
    return {"files": {"layout": f"{name}.layout.csv.gz"}, "pytorch": figures, "source": source}


def main() -> int:
    """Adds one trace; the exit status."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("snapshot")
    p.add_argument("name")
    p.add_argument("--repo", required=True)
    p.add_argument("--commit", required=True)
    p.add_argument("--path", required=True)
    p.add_argument("--license", required=True)
    p.add_argument("--description", required=True)
    p.add_argument("--device", type=int)
    p.add_argument("--traces", default=str(ROOT / "bench" / "traces"))
    args = p.parse_args()
    snapshot = replay.load(args.snapshot, 1 << 30)
    source = {"commit": args.commit, "description": args.description, "license": args.license,
              "path": args.path, "repo": args.repo}  # fmt: skip
    t = replay.convert(snapshot, args.device)
    pt = replay.pytorch_figures(snapshot, t.device)
    if pt["oom"] is not None:
        raise SystemExit("a recording with an out-of-memory event: add it by hand (check_traces)")
    entry = entry_for(t, pt, source, args.name)
    traces = Path(args.traces)
    rows = replay.write_trace(t, str(traces / entry["files"]["layout"]), "layout")
    figures_path = traces / "pytorch_figures.json"
    figures = json.loads(figures_path.read_text())
    figures[args.name] = entry
    figures_path.write_text(json.dumps(figures, indent=1) + "\n")
    print(f"{traces / entry['files']['layout']}: {rows} rows; {figures_path}: {args.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
