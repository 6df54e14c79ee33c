"""Data-loader throughput: batches through a multiprocessing queue, pyc10 against torch.

As torch's DataLoader does with worker processes: each of ``workers`` forked processes makes
batches of 32x3x224x224 float32 (19.3 MB) directly in shared memory (default_collate's
``_new_shared``: ``_new_using_fd_cpu``/``_new_using_filename_cpu`` by strategy), fills them
(the stand-in for stacking samples) and puts them on one queue holding at most two batches per
worker (DataLoader's prefetch_factor); the main process gets every batch and reads an element of
it, then drops it. Measured from the moment every worker is ready (process start excluded) to
the last batch received; pyc10.multiprocessing and torch.multiprocessing in the same run, in
both sharing strategies, with the ratio of pyc10's batches/s to torch's (target: >= 1).

    python bench/bench_dataloader.py [--batches N] [--workers N] [--repeat N]

``run_dataloader(batches, workers=4)`` returns the rows as dicts (bench_processes.py calls it).
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from typing import Any

SHAPE = (32, 3, 224, 224)
STRIDE = (3 * 224 * 224, 224 * 224, 224, 1)
NBYTES = 32 * 3 * 224 * 224 * 4
STRATEGIES = ("file_descriptor", "file_system")
LIBRARIES = ("torch", "pyc10")


def _modules(library: str) -> tuple[Any, Any]:
    if library == "torch":
        import torch
        import torch.multiprocessing as tmp

        return torch, tmp
    import pyc10
    import pyc10.multiprocessing as pmp

    return pyc10, pmp


def _batch(lib: Any, strategy: str, value: float) -> Any:
    """A batch in new shared memory, filled (default_collate's way of making it)."""
    if strategy == "file_system":
        storage = lib.UntypedStorage._new_using_filename_cpu(NBYTES)
    else:
        storage = lib.UntypedStorage._new_using_fd_cpu(NBYTES)
    t = lib.empty(0, dtype=lib.float32).set_(storage, 0, SHAPE, STRIDE)
    t.fill_(value)
    return t


def _worker(  # noqa: PLR0917  (a Process target: called with positional args)
    library: str, strategy: str, count: int, first: int, q: Any, ready: Any, go: Any, done: Any
) -> None:
    lib, mp = _modules(library)
    if library == "torch":
        lib.set_num_threads(1)  # as DataLoader's _worker_loop does in each worker
    mp.set_sharing_strategy(strategy)
    _batch(lib, strategy, 0.0)  # warm: first-use costs (janitor start, page tables) not timed
    ready.release()
    go.wait()
    for i in range(first, first + count):
        q.put(_batch(lib, strategy, float(i)))
    done.wait()  # the descriptors are served from this process until every batch is received


def _measure(library: str, strategy: str, batches: int, workers: int) -> float:
    """Seconds to receive ``batches`` batches made by ``workers`` processes."""
    _, mp = _modules(library)
    mp.set_sharing_strategy(strategy)
    ctx = mp.get_context("fork")
    q = ctx.Queue(2 * workers)
    ready, go, done = ctx.Semaphore(0), ctx.Event(), ctx.Event()
    share = [batches // workers + (w < batches % workers) for w in range(workers)]
    starts = [sum(share[:w]) for w in range(workers)]
    procs = [
        ctx.Process(
            target=_worker,
            args=(library, strategy, share[w], starts[w], q, ready, go, done),
            daemon=True,
        )
        for w in range(workers)
    ]
    for p in procs:
        p.start()
    for _ in procs:
        ready.acquire()
    seen = set()
    start = time.perf_counter()
    go.set()
    for _ in range(batches):
        t = q.get()
        seen.add(int(t[31, 2, 223, 223].item()))
        del t
    elapsed = time.perf_counter() - start
    done.set()
    for p in procs:
        p.join()
    if seen != set(range(batches)):
        raise RuntimeError(f"{library}/{strategy}: batches lost or corrupted")
    return elapsed


def run_dataloader(batches: int, workers: int = 4, repeat: int = 1) -> list[dict[str, Any]]:
    """Batches/s of pyc10.multiprocessing and torch.multiprocessing, per strategy (best of repeat).

    One dict per (library, strategy): library, strategy, batches, workers, seconds,
    batches_per_s, mb_per_s and ratio_to_torch (pyc10's batches/s over torch's in the same
    strategy; 1.0 on torch's rows).
    """
    rows: list[dict[str, Any]] = []
    for strategy in STRATEGIES:
        best: dict[str, float] = {}
        for _ in range(repeat):
            for library in LIBRARIES:
                seconds = _measure(library, strategy, batches, workers)
                best[library] = min(best.get(library, seconds), seconds)
        for library in LIBRARIES:
            rate = batches / best[library]
            rows.append(
                {
                    "library": library,
                    "strategy": strategy,
                    "batches": batches,
                    "workers": workers,
                    "seconds": best[library],
                    "batches_per_s": rate,
                    "mb_per_s": rate * NBYTES / 1e6,
                    "ratio_to_torch": best["torch"] / best[library],
                }
            )
    return rows


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=200, help="batches per run (default 200)")
    parser.add_argument("--workers", type=int, default=4, help="worker processes (default 4)")
    parser.add_argument("--repeat", type=int, default=3, help="runs; the best counts (default 3)")
    args = parser.parse_args()
    if args.batches < 1 or args.workers < 1 or args.repeat < 1:
        parser.error("--batches, --workers and --repeat must be at least 1")
    rows = run_dataloader(args.batches, args.workers, args.repeat)
    print(
        f"{args.batches} batches of 32x3x224x224 float32, {args.workers} workers, best of "
        f"{args.repeat}, cpus={multiprocessing.cpu_count()}"
    )
    print(f"{'library':<8} {'strategy':<16} {'batches/s':>10} {'MB/s':>9} {'vs torch':>9}")
    for r in rows:
        print(
            f"{r['library']:<8} {r['strategy']:<16} {r['batches_per_s']:>10.1f} "
            f"{r['mb_per_s']:>9.0f} {r['ratio_to_torch']:>8.2f}x"
        )


if __name__ == "__main__":
    main()
