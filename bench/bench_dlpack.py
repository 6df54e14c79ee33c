"""DLPack exchange from Python: pyc10 against numpy-to-numpy and against the same exchange through
torch, measured in the same run, next to the project's targets.

Each figure is ns per exchange (best of several timeit repeats), including dropping the result
(so the producer's deleter runs): a 2x3 float32 array or tensor made once and exchanged again
and again.

    python bench/bench_dlpack.py [--repeat N] [--csv FILE]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import torch

import pyc10

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import best_ns, write_csv

# (name, statement, reference statements with their target ratios)
CASES = [
    (
        "numpy.from_dlpack(pyc10 tensor)",
        "np.from_dlpack(p)",
        [
            ("np.from_dlpack(numpy)", "np.from_dlpack(n)", 1.5),
            ("np.from_dlpack(torch tensor)", "np.from_dlpack(t)", 0.5),
        ],
    ),
    (
        "pyc10.from_dlpack(numpy array)",
        "pyc10.from_dlpack(n)",
        [
            ("np.from_dlpack(numpy)", "np.from_dlpack(n)", 1.5),
            ("torch.from_dlpack(numpy array)", "torch.from_dlpack(n)", 0.5),
        ],
    ),
    (
        # through torch's C exchange table (DLPack 1.3), no __dlpack__ call
        "pyc10.from_dlpack(torch tensor)",
        "pyc10.from_dlpack(t)",
        [("torch.from_dlpack(torch tensor)", "torch.from_dlpack(t)", 0.1)],
    ),
    (
        "pyc10.as_tensor(torch tensor)",
        "pyc10.as_tensor(t)",
        [("torch.as_tensor(pyc10 tensor)", "torch.as_tensor(p)", None)],
    ),
    (
        # torch 2.13's from_dlpack reads no producer's table: __dlpack__ each time
        "torch.from_dlpack(pyc10 tensor)",
        "torch.from_dlpack(p)",
        [
            ("torch.from_dlpack(numpy array)", "torch.from_dlpack(n)", None),
            ("torch.from_dlpack(torch tensor)", "torch.from_dlpack(t)", 1.0),
        ],
    ),
]
# absolute targets, ns: one run, a 16-element tensor (issue 33)
LIMITS_NS = {"pyc10.from_dlpack(torch tensor)": 500.0}


def main(argv: list[str]) -> int:
    """Run every case and print the table (and a CSV when asked)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--csv")
    args = parser.parse_args(argv)
    ns: dict[str, object] = {
        "np": np,
        "torch": torch,
        "pyc10": pyc10,
        "n": np.empty((2, 3), dtype=np.float32),
        "t": torch.empty(16),
        "p": pyc10.empty(16),
    }
    print(f"pyc10 {pyc10.__version__}, torch {torch.__version__}, numpy {np.__version__}")
    print(f"{'exchange':34} {'ns':>8}   {'reference':32} {'ns':>8} {'ratio':>6} {'target':>8}")
    measured: dict[str, float] = {}

    def ns_of(stmt: str) -> float:
        if stmt not in measured:
            measured[stmt] = best_ns(stmt, ns, args.repeat)
        return measured[stmt]

    rows = []
    for name, stmt, references in CASES:
        ours = ns_of(stmt)
        if name in LIMITS_NS:
            limit = LIMITS_NS[name]
            mark = "ok" if ours <= limit else "MISSED"
            print(
                f"{name:34} {ours:8.1f}   {'absolute target':32} {limit:8.1f} {'':6} {'':>6} {mark}"
            )
            rows.append([name, ours, "absolute target", limit, ours / limit, 1.0])
        for ref_name, ref_stmt, target in references:
            ref = ns_of(ref_stmt)
            ratio = ours / ref
            mark = "" if target is None else ("ok" if ratio <= target else "MISSED")
            goal = "" if target is None else f"<={target:g}"
            print(f"{name:34} {ours:8.1f}   {ref_name:32} {ref:8.1f} {ratio:6.2f} {goal:>6} {mark}")
            rows.append([name, ours, ref_name, ref, ratio, target])
    write_csv(args.csv, ["exchange", "ns", "reference", "reference_ns", "ratio", "target"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
