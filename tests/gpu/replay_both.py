"""Replays an allocation trace (bench/traces' CSV: Action, Pointer, Size, Stream) through one CUDA
caching allocator on a real GPU and prints its figures as JSON: ``torch`` (c10's) or ``pyc10``
(libc10c's), each in its own process, so tests/gpu/check.sh can put them side by side with the
figures PyTorch recorded (../shared/traces/pytorch_figures.json).

    python tests/gpu/replay_both.py torch|pyc10 TRACE.csv.gz [--conf ALLOC_CONF]

The allocator settings go in through the environment before CUDA starts (PYTORCH_CUDA_ALLOC_CONF,
which both read). Streams: the first stream named is the default stream, others new streams.
record_stream rows need tensors and are skipped (both allocators see the same trace). For
pyc10, step_begin rows mark steps (pyc10.cuda.memory.step(), which drives planning:True), and
the figures include the planner's and stitching's counters; --conf may name a plan file
("plan_file:PATH", written by python -m pyc10.replay TRACE --write-plan PATH).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("which", choices=["torch", "pyc10"])
    parser.add_argument("trace")
    parser.add_argument("--conf", default="")
    args = parser.parse_args()
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = args.conf
    if args.which == "torch":
        import torch as lib

        cuda = lib.cuda
    else:
        import pyc10 as lib

        cuda = lib.cuda
    streams: dict[str, object] = {}
    live: dict[str, int] = {}
    failed = None
    opener = gzip.open if args.trace.endswith(".gz") else open
    with opener(args.trace, "rt") as f:
        for row in csv.DictReader(f):
            action = row["Action"]
            name = row["Stream"]
            if name not in streams:
                streams[name] = cuda.default_stream(0) if not streams else cuda.Stream(0)
            if action == "allocate":
                try:
                    live[row["Pointer"]] = cuda.caching_allocator_alloc(
                        int(row["Size"]), 0, streams[name]
                    )
                except RuntimeError as e:  # OutOfMemoryError: the figures up to it
                    failed = f"{row['Size']}: {str(e).splitlines()[0]}"
                    break
            elif action == "free" and row["Pointer"] in live:
                cuda.caching_allocator_delete(live.pop(row["Pointer"]))
            elif action == "empty_cache":
                cuda.empty_cache()
            elif action == "step_begin" and args.which == "pyc10":
                cuda.memory.step(0)
    stats = cuda.memory_stats(0)
    out = {
        "which": args.which,
        "device_mallocs": stats.get("segment.all.allocated", 0),
        "device_frees": stats.get("segment.all.freed", 0),
        "peak_reserved": stats.get("reserved_bytes.all.peak", 0),
        "peak_allocated": stats.get("allocated_bytes.all.peak", 0),
        "alloc_retries": stats.get("num_alloc_retries", 0),
        "failed": failed,
    }
    if args.which == "pyc10":  # libc10c's own counters (planning, stitching)
        for key in ("plan.arena_bytes", "plan.served", "plan.fallbacks", "plan.rebuilds",
                    "plan.drops", "plan.declines", "num_stitches",
                    "stitched_bytes.peak"):  # fmt: skip
            out[key] = stats.get(key, 0)
    for p in list(live.values()):
        cuda.caching_allocator_delete(p)
    json.dump(out, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
