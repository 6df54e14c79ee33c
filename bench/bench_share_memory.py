"""Moving a storage into shared memory: pyc10 against torch, measured in the same run.

For a storage of --mib MiB whose bytes were written first: ``share_memory_()`` (the
file_descriptor strategy: a memory file, its space reserved, one copy), ``_share_filename_cpu_()``
(a named object), and sharing by descriptor then mapping that descriptor again. Each figure is the
best of --repeat runs of CPU time (user + system: the machine may be shared with other work).

    python bench/bench_share_memory.py [--mib 1024] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import torch

import pyc10


def best(make: Callable[[], Any], act: Callable[[Any], Any], repeat: int) -> float:
    """Best seconds of act(x) over repeat fresh x = make()."""
    times = []
    for _ in range(repeat):
        x = make()
        t0 = time.process_time()
        act(x)
        times.append(time.process_time() - t0)
        del x
    return min(times)


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=1024, help="storage size in MiB")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (best taken)")
    args = parser.parse_args()
    n = args.mib << 20

    def fresh(mod: Any) -> Callable[[], Any]:
        return lambda: mod.ones(n, dtype=mod.uint8).untyped_storage()

    rows = [
        ("share_memory_ (fd)", lambda s: s.share_memory_()),
        ("_share_filename_cpu_", lambda s: s._share_filename_cpu_()),
        (
            "share fd + open fd",
            lambda s: type(s)._new_shared_fd_cpu(*s._share_fd_cpu_()),
        ),
    ]
    print(f"{args.mib} MiB, best of {args.repeat}")
    print(f"{'operation':<24}{'pyc10 ms':>10}{'torch ms':>10}{'ratio':>8}")
    for name, act in rows:
        ours = best(fresh(pyc10), act, args.repeat)
        theirs = best(fresh(torch), act, args.repeat)
        print(f"{name:<24}{ours * 1e3:>10.1f}{theirs * 1e3:>10.1f}{ours / theirs:>8.2f}")


if __name__ == "__main__":
    main()
