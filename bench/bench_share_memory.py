"""Moving a storage into shared memory: pyc10 against torch, measured in the same run.

For a storage of --mib MiB whose bytes were written first: ``share_memory_()`` (the
file_descriptor strategy: a memory file, its space reserved, one copy), ``_share_filename_cpu_()``
(a named object), and sharing by descriptor then mapping that descriptor again; then a data-loader
batch (``--batch-bytes``, default 32x3x224x224 float32: 19.3 MB) made in new shared memory
(``_new_using_fd_cpu``/``_new_using_filename_cpu``), filled and freed, as default_collate's
workers do per batch. Each figure is the best of --repeat runs of CPU time (user + system: the
machine may be shared with other work).

    python bench/bench_share_memory.py [--mib 1024] [--repeat 3] [--batch-bytes N]
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


BATCH_BYTES = 32 * 3 * 224 * 224 * 4


def batch_act(mod: Any, method: str, nbytes: int) -> Callable[[Any], None]:
    """A batch made in new shared memory by method, filled (as floats where they fit), freed."""

    def act(_: Any) -> None:
        storage = getattr(mod.UntypedStorage, method)(nbytes)
        if nbytes % 4 == 0:
            mod.empty(0, dtype=mod.float32).set_(storage, 0, (nbytes // 4,)).fill_(1.5)
        else:
            storage.fill_(7)
        del storage

    return act


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=1024, help="storage size in MiB")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (best taken)")
    parser.add_argument(
        "--batch-bytes", type=int, default=BATCH_BYTES, help="data-loader batch size in bytes"
    )
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
    batch = args.batch_bytes
    print(f"batch of {batch} bytes: new shared memory, fill_, free; best of {5 * args.repeat}")
    for name, method in (
        ("_new_using_fd + fill", "_new_using_fd_cpu"),
        ("_new_using_filename+fill", "_new_using_filename_cpu"),
    ):
        ours = best(lambda: None, batch_act(pyc10, method, batch), 5 * args.repeat)
        theirs = best(lambda: None, batch_act(torch, method, batch), 5 * args.repeat)
        print(f"{name:<24}{ours * 1e3:>10.1f}{theirs * 1e3:>10.1f}{ours / theirs:>8.2f}")


if __name__ == "__main__":
    main()
