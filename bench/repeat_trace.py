"""A replay CSV whose recorded window repeats: the steps of a training or inference loop.

A packed or layout trace (bench/traces/README.md) is a prologue (step 0: the blocks alive when
recording began, and for the layout form the segments as they stood) and one recorded window
(step 2). This writes the prologue, then the window N times as steps 1..N, each copy behind its
own step_begin row, as a program whose step repeats would run it:

- each copy's allocations get Pointers of their own;
- a window that frees a block allocated before it (a gradient of the step before, freed at
  zero_grad) frees, in the copies after the first, the block of the copy before that took its
  place: a block the window allocates and never frees, of the same size (matched in order);
- a block the window allocates and never frees that takes no such place is freed at the end of
  its copy (after the window's last row, so no copy's peak changes): every copy begins with
  the same live blocks, as repeated steps do;
- frees of Pointers the trace never allocates stay as they are, in every copy (replay_trace
  counts and skips them).

    python bench/repeat_trace.py TRACE.csv[.gz] OUT.csv[.gz] [--steps 4]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import sys
from collections import defaultdict, deque
from pathlib import Path

HEADER = ["Thread", "Time", "Action", "Pointer", "Size", "Stream", "Step", "Tag", "Phase"]


def read_rows(path: Path) -> list[dict[str, str]]:
    """The CSV's rows as dicts (gzip or plain)."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return list(csv.DictReader(io.StringIO(data.decode("ascii"))))


def _places(
    prologue: list[dict[str, str]], window: list[dict[str, str]]
) -> tuple[set[int], set[int], dict[int, int], list[int]]:
    """What each copy after the first frees in place of the prologue's blocks.

    (blocks allocated before the window, the ones of them the window frees, their heirs: a
    window block the window leaves alive that takes each one's place (same size, in order),
    and the window blocks left alive that take no place).
    """
    before = {int(r["Pointer"], 16) for r in prologue if r["Action"] == "allocate"}
    sizes = {int(r["Pointer"], 16): int(r["Size"]) for r in prologue if r["Action"] == "allocate"}
    live_window: dict[int, int] = {}  # window Pointer -> size, alive at the window's end
    freed: list[int] = []  # prologue Pointers the window frees
    for r in window:
        p = int(r["Pointer"], 16)
        if r["Action"] == "allocate":
            live_window[p] = int(r["Size"])
        elif r["Action"] == "free" and p in live_window:
            del live_window[p]
        elif r["Action"] == "free" and p in before:
            freed.append(p)
    survivors: dict[int, deque[int]] = defaultdict(deque)
    for p, size in live_window.items():
        survivors[size].append(p)
    heir: dict[int, int] = {}
    for p in freed:
        queue = survivors.get(sizes[p])
        if queue:
            heir[p] = queue.popleft()
    orphans = [p for queue in survivors.values() for p in queue]
    return before, set(freed), heir, orphans


def repeat_rows(rows: list[dict[str, str]], steps: int) -> list[dict[str, str]]:
    """The prologue, then the window `steps` times (see the module's description)."""
    window_start = next(
        (k for k, r in enumerate(rows) if r["Action"] == "step_begin" and int(r["Step"]) > 0),
        len(rows),
    )
    prologue, window = rows[:window_start], rows[window_start + 1 :]
    before, freed_set, heir, orphans = _places(prologue, window)
    out = [dict(r) for r in prologue]

    def pointer(copy: int, p: int) -> str:
        return f"0x{(copy << 40) | p:x}"

    for copy in range(1, steps + 1):
        out.append(_row("step_begin", "0x0", copy, "step"))
        for r in window:
            action, p = r["Action"], int(r["Pointer"], 16)
            if action == "step_begin":
                continue
            row = dict(r, Step=str(copy))
            if action in ("allocate", "free", "record_stream"):
                if p not in before:
                    row["Pointer"] = pointer(copy, p)
                elif copy > 1 and p in freed_set:  # the block of the copy before in its place
                    if p not in heir:
                        continue
                    row["Pointer"] = pointer(copy - 1, heir[p])
            out.append(row)
        for p in orphans:
            out.append(_row("free", pointer(copy, p), copy, "step_end"))
    for k, row in enumerate(out):
        row["Time"] = str(k + 1)
    return out


def _row(action: str, pointer: str, step: int, phase: str) -> dict[str, str]:
    return {"Thread": "0", "Time": "0", "Action": action, "Pointer": pointer, "Size": "0",
            "Stream": "0", "Step": str(step), "Tag": "", "Phase": phase}  # fmt: skip


def write_rows(rows: list[dict[str, str]], path: Path) -> None:
    """Writes the rows as CSV (gzip where the name ends in .gz)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=HEADER, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    data = buf.getvalue().encode("ascii")
    path.write_bytes(gzip.compress(data, mtime=0) if path.name.endswith(".gz") else data)


def main() -> int:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trace", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--steps", type=int, default=4)
    args = p.parse_args()
    write_rows(repeat_rows(read_rows(args.trace), args.steps), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
