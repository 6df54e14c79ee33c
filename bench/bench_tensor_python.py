"""Tensor calls from Python: pyc10 against torch and numpy, measured in the same run.

Prints ns per call (best of several timeit repeats) and the ratios pyc10/torch and pyc10/numpy
(below 1 means pyc10 is faster), next to the project's targets.

    python bench/bench_tensor_python.py [--repeat N] [--csv FILE]
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

# (name, pyc10, torch, numpy, target pyc10/torch, target pyc10/numpy)
CASES = [
    ("empty((2,3)) create+drop", "pe((2, 3))", "te((2, 3))", "ne((2, 3))", 0.3, 2.0),
    ("t.view(3, 2)", "p.view(3, 2)", "t.view(3, 2)", "n.reshape(3, 2)", 0.35, 3.0),
    ("t.t()", "p.t()", "t.t()", "n.T", 0.35, 3.0),
    ("t[1:]", "p[1:]", "t[1:]", "n[1:]", 0.35, 3.0),
    ("t.shape", "p.shape", "t.shape", "n.shape", None, None),
    ("t.is_contiguous()", "p.is_contiguous()", "t.is_contiguous()", None, None, None),
    ("zeros((64,64))", "pz((64, 64))", "tz((64, 64))", "nz((64, 64))", None, None),
    ("clone 1024x1024 transposed", "pb.clone()", "tb.clone()", "nb.copy(order='K')", None, None),
    # conversions of 1M float32 (torch single-threaded; numpy's astype into a preallocated array)
    ("copy_ 1M float32 -> float16", "ph.copy_(pf)", "th.copy_(tf)", "nh[...] = nf", None, None),
    ("copy_ 1M float16 -> float32", "pf.copy_(ph)", "tf.copy_(th)", "nf[...] = nh", None, None),
    ("copy_ 1M float32 -> float64", "pd.copy_(pf)", "td.copy_(tf)", "nd[...] = nf", None, None),
    ("copy_ 1M float32 -> int32", "pi.copy_(pf)", "ti.copy_(tf)", "ni[...] = nf", None, None),
    ("copy_ 1M float32 -> bfloat16", "pbf.copy_(pf)", "tbf.copy_(tf)", None, None, None),
    ("copy_ 1M float32 -> e4m3fn", "p8.copy_(pf)", "t8.copy_(tf)", None, None, None),
]


def namespace() -> dict[str, object]:
    torch.set_num_threads(1)
    big_t = torch.zeros(1024, 1024).t()
    return {
        "pe": pyc10.empty,
        "te": torch.empty,
        "ne": np.empty,
        "pz": pyc10.zeros,
        "tz": torch.zeros,
        "nz": np.zeros,
        "p": pyc10.empty(2, 3),
        "t": torch.empty(2, 3),
        "n": np.empty((2, 3), dtype=np.float32),
        "pb": pyc10.zeros(1024, 1024).t(),
        "tb": big_t,
        "nb": big_t.numpy(),
        **conversions(),
    }


def conversions() -> dict[str, object]:
    """1M-element tensors of each dtype for the conversion cases (tf, th, ... and pyc10's)."""
    n = 1 << 20
    values = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    out: dict[str, object] = {"nf": values.copy()}
    for key, name, numpy_name in [
        ("h", "float16", "float16"),
        ("d", "float64", "float64"),
        ("i", "int32", "int32"),
        ("bf", "bfloat16", None),
        ("8", "float8_e4m3fn", None),
    ]:
        out["t" + key] = torch.empty(n, dtype=getattr(torch, name))
        out["p" + key] = pyc10.empty(n, dtype=getattr(pyc10, name))
        if numpy_name:
            out["n" + key] = np.empty(n, dtype=numpy_name)
    out["tf"] = torch.from_numpy(values.copy())
    out["pf"] = pyc10.from_numpy(values.copy())
    return out


def fmt_ratio(value: float | None, target: float | None) -> str:
    if value is None:
        return f"{'-':>7} {'':>7}"
    mark = "" if target is None else ("ok" if value <= target else f">{target:g}")
    return f"{value:7.2f} {mark:>7}"


def main(argv: list[str]) -> int:
    """Run every case and print the table (and a CSV when asked)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--csv")
    args = parser.parse_args(argv)
    ns = namespace()
    print(f"pyc10 {pyc10.__version__}, torch {torch.__version__}, numpy {np.__version__}")
    print(
        f"{'operation':30} {'pyc10 ns':>10} {'torch ns':>10} {'numpy ns':>10} "
        f"{'/torch':>7} {'target':>7} {'/numpy':>7} {'target':>7}"
    )
    rows = []
    for name, p, t, n, target_t, target_n in CASES:
        a = best_ns(p, ns, args.repeat)
        b = best_ns(t, ns, args.repeat)
        c = best_ns(n, ns, args.repeat) if n else None
        cs = f"{c:10.1f}" if c is not None else f"{'-':>10}"
        print(
            f"{name:30} {a:10.1f} {b:10.1f} {cs} {fmt_ratio(a / b, target_t)} "
            f"{fmt_ratio(a / c if c else None, target_n)}"
        )
        rows.append([name, a, b, c, a / b, a / c if c else None])
    header = ["operation", "pyc10_ns", "torch_ns", "numpy_ns", "vs_torch", "vs_numpy"]
    write_csv(args.csv, header, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
