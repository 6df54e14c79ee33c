"""Replays real GPU allocation traces through libc10c and compares with PyTorch's figures.

Each trace (bench/traces/README.md) was recorded by someone running PyTorch on a GPU; its layout
form rebuilds PyTorch's segments as they stood when the recording window began (step 0), then
replays the window (step 2). Replayed with the settings PyTorch ran with (alloc_conf in
pytorch_figures.json), the window must make exactly PyTorch's device allocations and frees
(page maps and unmaps with expandable segments), start from the same reserved bytes and peak at
the same reserved bytes. The trace that ended out of memory is replayed at PyTorch's capacity
then (reserved at the failure plus the free memory its oom event recorded): it must fail on
the request that failed for PyTorch, with the free memory PyTorch's event recorded, and, going
on past it as the program did, still give PyTorch's figures for the whole window.

    bash tests/run.sh        # builds build/tests (the replayer and the stand-in)
    python bench/check_traces.py [--build build/tests] [--all-orders]

Only the traces whose source's license allows redistribution ship in bench/traces; the others
(their sources state no license) are looked for in ../shared/traces beside the repository
(--shared-traces), and each one absent there is skipped with a line saying so. --all-orders
also replays every trace in the other address order and prints whether it still matches (for
the record below). Exits non-zero when a figure differs or a shipped trace is missing, 77
(a skip, for meson) when no trace could be checked, else 0.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

# The order in which the stand-in hands out addresses for each trace. PyTorch's best fit breaks
# ties between free blocks of equal size by address, so where a trace has such ties the figures
# depend on the order the real driver gave addresses in. In sqattn_compress it gave mostly
# descending ones: replayed with ascending addresses, libc10c makes 448/448 device mallocs/frees
# and peaks at 6,213,861,376 bytes reserved (PyTorch: 420/420 and 5,802,819,584); with
# descending ones it matches PyTorch. The other seven match in either order (--all-orders).
# Traces added by bench/add_trace.py carry the order pyc10.replay infers from the snapshot's
# segment addresses ("address_order" in pytorch_figures.json) where it is descending.
ADDRESS_ORDER = {"sqattn_compress": "descending"}

WINDOW_STEP = 2  # the layout traces' recorded window
SKIP = 77  # meson's exit status for a skipped test


def replay(exe: Path, stub: Path, trace: Path, config: str, order: str, *flags: str) -> dict:
    """One replay's JSON report."""
    env = dict(os.environ, C10C_CUDA_DRIVER=str(stub), C10C_STUB_FAKE="1")
    env["C10C_STUB_ADDRESS_ORDER"] = order
    for name in ("C10C_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"):
        env.pop(name, None)
    out = subprocess.run(
        [str(exe), str(trace), "--config", config, "--no-search", "--repeat", "0", *flags],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if not out.stdout.strip():
        raise RuntimeError(f"replay of {trace.name} printed nothing: {out.stderr.strip()}")
    return json.loads(out.stdout)


def expected_and_found(pt: dict, report: dict) -> list[tuple[str, int, int]]:
    """(figure, PyTorch's, libc10c's) for every figure compared."""
    window = [s for s in report["per_step"] if s["step"] == WINDOW_STEP]
    if len(window) != 1:
        raise RuntimeError(f"the replay has {len(window)} window steps")
    step = window[0]
    expandable = pt["expandable_segments"]
    rows = [
        (
            "segment maps" if expandable else "cudaMalloc calls",
            "pt_segment_maps" if expandable else "pt_cudamalloc_calls",
            step["device_mallocs"],
        ),
        (
            "segment unmaps" if expandable else "cudaFree calls",
            "pt_segment_unmaps" if expandable else "pt_cudafree_calls",
            step["device_frees"],
        ),
        ("reserved at start", "pt_reserved_at_start", step["reserved_at_begin"]),
        ("peak reserved", "pt_peak_reserved", step["peak_reserved"]),
        ("peak live requested", "pt_peak_live_requested", step["peak_live_requested"]),
    ]
    found = [(label, pt[key], value) for label, key, value in rows]
    for oom in pt["oom"]:
        failure = report["failure"] or {}
        found += [
            ("failing request (bytes)", oom["size"], failure.get("size", -1)),
            ("free memory at the failure", oom["device_free"], failure.get("device_free", -1)),
            # the converter made PyTorch's oom event the trace's last allocation
            ("failing allocation number", report["allocations"], failure.get("allocation", -1)),
        ]
    return found


@dataclass
class Setup:
    """The replayer, the stand-in driver, where each trace's file is, and where to unpack them."""

    exe: Path
    stub: Path
    files: dict[str, Path]
    tmp: Path


def locate(entry: dict, traces: Path, shared: Path) -> tuple[Path | None, str]:
    """Where a trace's layout file is, or None and why it cannot be checked here."""
    name = entry["files"]["layout"]
    if (traces / name).exists():
        return traces / name, ""
    if entry["source"].get("license"):
        return None, f"missing: {traces / name} should ship with the repository"
    if (shared / name).exists():
        return shared / name, ""
    return None, (
        f"skipped ({entry['source']['repo']} states no license, so the trace is not in the "
        f"repository; not in {shared} either)"
    )


def check(setup: Setup, name: str, entry: dict, order: str) -> list[tuple[str, int, int]]:
    """Replays one trace with PyTorch's settings; the compared figures."""
    pt = entry["pytorch"]
    csv = setup.tmp / f"{name}.csv"
    if not csv.exists():
        csv.write_bytes(gzip.decompress(setup.files[name].read_bytes()))
    flags = []
    if pt["oom"]:
        flags = ["--capacity", str(pt["pt_capacity_at_oom"]), "--keep-going"]
    report = replay(setup.exe, setup.stub, csv, pt["alloc_conf"] or "", order, *flags)
    return expected_and_found(pt, report)


def add_trace_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the tools that replay the real traces: --build, --replay, --stub,
    --traces and --shared-traces (bench/run_plans.py uses them too)."""
    root = Path(__file__).resolve().parent.parent
    parser.add_argument("--build", default=str(root / "build" / "tests"))
    parser.add_argument("--replay", help="the replay_trace executable (default: in --build)")
    parser.add_argument("--stub", help="the stand-in driver (default: in --build)")
    parser.add_argument("--traces", default=str(root / "bench" / "traces"))
    parser.add_argument(
        "--shared-traces",
        default=str(root.parent / "shared" / "traces"),
        help="where the traces that do not ship are (default: ../shared/traces beside the "
        "repository; each absent one is skipped)",
    )


def main() -> int:
    """Checks every trace; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_trace_arguments(parser)
    parser.add_argument("--all-orders", action="store_true")
    args = parser.parse_args()
    build = Path(args.build)
    exe = Path(args.replay or build / "bench" / "replay_trace")
    stub = Path(args.stub or build / "tests" / "libc10c_cuda_stub.so")
    traces = Path(args.traces)
    figures = json.loads((traces / "pytorch_figures.json").read_text())
    failures = []
    files = {}
    for name, entry in figures.items():
        found, why = locate(entry, traces, Path(args.shared_traces))
        if found is None:
            print(f"{name}: {why}")
            if entry["source"].get("license"):
                failures.append(f"{name}: {why}")
        else:
            files[name] = found
    with tempfile.TemporaryDirectory() as tmp:
        setup = Setup(exe, stub, files, Path(tmp))
        for name, entry in figures.items():
            if name not in files:
                continue
            order = entry["pytorch"].get("address_order") or ADDRESS_ORDER.get(name, "ascending")
            settings = entry["pytorch"]["alloc_conf"] or "native"
            found = check(setup, name, entry, order)
            print(f"{name} ({settings}, {order} addresses):")
            for label, want, got in found:
                mark = "ok" if want == got else "DIFFERS"
                print(f"  {label:<28} PyTorch {want:>15,}  libc10c {got:>15,}  {mark}")
                if want != got:
                    failures.append(f"{name}: {label} {got} (PyTorch {want})")
            if args.all_orders:
                other = "ascending" if order == "descending" else "descending"
                again = check(setup, name, entry, other)
                same = all(want == got for _, want, got in again)
                print(f"  with {other} addresses: {'matches' if same else 'differs'}")
    for failure in failures:
        print(f"FAILED: {failure}")
    failed = {f.split(":")[0] for f in failures}
    print(
        f"{len(files) - len(failed & set(files))}/{len(files)} traces checked give PyTorch's "
        f"figures ({len(figures) - len(files)} of {len(figures)} not available here)"
    )
    if failures:
        return 1
    return 0 if files else SKIP


if __name__ == "__main__":
    sys.exit(main())
