"""pyc10 against torch, measured in the same run: value-type calls from Python.

Prints ns per call (best of several timeit repeats) for each operation in pyc10 and in torch,
and the ratio pyc10/torch (below 1 means pyc10 is faster).

    python bench/bench_python.py [--repeat N] [--csv FILE]
"""

from __future__ import annotations

import argparse
import os
import sys

import torch

import pyc10

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import best_ns, write_csv

C = torch._C

# (name, pyc10 statement, torch statement); each runs with the namespace below.
CASES = [
    ("promote_types(int64, float16)", "pt(p_i64, p_f16)", "tt(t_i64, t_f16)"),
    ("promote_types(uint8, int8)", "pt(p_u8, p_i8)", "tt(t_u8, t_i8)"),
    ('device("cuda:0")', 'pd("cuda:0")', 'td("cuda:0")'),
    ('device("cuda", 1)', 'pd("cuda", 1)', 'td("cuda", 1)'),
    ("str(device)", "str(p_dev)", "str(t_dev)"),
    ("device == device", "p_dev == p_dev2", "t_dev == t_dev2"),
    ("dtype.itemsize", "p_f16.itemsize", "t_f16.itemsize"),
    ("dtype.is_floating_point", "p_f16.is_floating_point", "t_f16.is_floating_point"),
    ("DispatchKeySet.has(CPU)", "p_ks.has(p_cpu)", "t_ks.has(t_cpu)"),
    ("DispatchKeySet.add(Conjugate)", "p_ks.add(p_conj)", "t_ks.add(t_conj)"),
    ("DispatchKeySet.remove(AutogradCPU)", "p_ks.remove(p_acpu)", "t_ks.remove(t_acpu)"),
    ("DispatchKeySet | DispatchKeySet", "p_ks | p_ks2", "t_ks | t_ks2"),
    (
        "DispatchKeySet.highest_priority_key()",
        "p_ks.highest_priority_key()",
        "t_ks.highestPriorityTypeId()",
    ),
    ("repr(DispatchKeySet)", "repr(p_ks)", "str(t_ks)"),
    ("UntypedStorage(64) create+drop", "p_st(64)", "t_st(64)"),
    ("UntypedStorage(1 MiB) create+drop", "p_st(1048576)", "t_st(1048576)"),
    ("storage.nbytes()", "p_s.nbytes()", "t_s.nbytes()"),
]


def namespace() -> dict[str, object]:
    tk = C.DispatchKey
    return {
        "pt": pyc10.promote_types,
        "tt": torch.promote_types,
        "pd": pyc10.device,
        "td": torch.device,
        "p_i64": pyc10.int64,
        "p_f16": pyc10.float16,
        "p_u8": pyc10.uint8,
        "p_i8": pyc10.int8,
        "t_i64": torch.int64,
        "t_f16": torch.float16,
        "t_u8": torch.uint8,
        "t_i8": torch.int8,
        "p_dev": pyc10.device("cuda:0"),
        "p_dev2": pyc10.device("cuda", 0),
        "t_dev": torch.device("cuda:0"),
        "t_dev2": torch.device("cuda", 0),
        "p_ks": pyc10.DispatchKeySet.for_tensor("cpu"),
        "t_ks": C._dispatch_keys(torch.zeros(1)),
        "p_ks2": pyc10.DispatchKeySet("Conjugate"),
        "t_ks2": C.DispatchKeySet(tk.Conjugate),
        "p_cpu": pyc10.DispatchKey.CPU,
        "t_cpu": tk.CPU,
        "p_conj": pyc10.DispatchKey.Conjugate,
        "t_conj": tk.Conjugate,
        "p_acpu": pyc10.DispatchKey.AutogradCPU,
        "t_acpu": tk.AutogradCPU,
        "p_st": pyc10.UntypedStorage,
        "t_st": torch.UntypedStorage,
        "p_s": pyc10.UntypedStorage(64),
        "t_s": torch.UntypedStorage(64),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--csv", help="also write the table to this CSV file")
    args = parser.parse_args(argv)
    ns = namespace()
    rows = []
    print(f"pyc10 {pyc10.__version__} vs torch {torch.__version__}, best of {args.repeat}")
    print(f"{'operation':40} {'pyc10 ns':>10} {'torch ns':>10} {'ratio':>7}")
    for name, ours, theirs in CASES:
        a, b = best_ns(ours, ns, args.repeat), best_ns(theirs, ns, args.repeat)
        rows.append((name, a, b, a / b))
        print(f"{name:40} {a:10.1f} {b:10.1f} {a / b:7.2f}")
    write_csv(args.csv, ["operation", "pyc10_ns", "torch_ns", "ratio"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
