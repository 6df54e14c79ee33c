"""What the Python benchmarks share: calibrated best-of timing and the optional CSV table."""

from __future__ import annotations

import csv
import timeit
from collections.abc import Sequence
from typing import Any


def best_ns(stmt: str, ns: dict[str, object], repeat: int) -> float:
    """Best ns per call of stmt over repeat timeit rounds (the loop count is calibrated)."""
    timer = timeit.Timer(stmt, globals=ns)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=repeat, number=number)) / number * 1e9


def write_csv(path: str | None, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Write the table to path (nothing when path is None)."""
    if path is None:
        return
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
