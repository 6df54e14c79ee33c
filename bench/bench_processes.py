"""Tensors across processes: pickle (in and out of band) and Ray, pyc10 against numpy and torch.

Each figure is the best of --repeat runs, in milliseconds, with its ratio to numpy's measured in the
same run; the project's targets are each pyc10 time within 1.2x of numpy's and a receiving
worker's RSS growth under 5% of the tensor.

- pickle: ``pickle.dumps`` and ``pickle.loads`` with protocol 5, in band (no buffer_callback:
  the bytes are copied into the pickle) and out of band (buffer_callback / buffers=).
- Ray (a local cluster, ``ray.init(num_cpus=2)``): ``ray.put``; a task handed the object (it
  deserializes it in a worker, reads one element and reports the worker's RSS growth across the
  deserialization); ``ray.get`` in the driver. torch twice: Ray's default, and with
  ``RAY_ENABLE_ZERO_COPY_TORCH_TENSORS=1`` (Ray's zero-copy setting for torch tensors, read when
  Ray starts: a second cluster).
- data loader (``bench/bench_dataloader.py``): 4 worker processes send batches of
  32x3x224x224 float32 made in shared memory through one queue, pyc10.multiprocessing against
  torch.multiprocessing in both sharing strategies; batches/s and the ratio to torch's (the
  target: at least torch's throughput). ``--loader-batches 0`` leaves it out.

    python bench/bench_processes.py [--size 1G] [--repeat 3] [--no-ray] [--loader-batches 200]
                                    [--csv FILE]

``--size 64M --repeat 1`` is a bounded run (under a minute, most of it starting Ray twice;
``--no-ray`` leaves a few seconds).
"""

from __future__ import annotations

import argparse
import gc
import os
import pickle
import sys
import time
import timeit
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np
import torch

import pyc10

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import write_csv

# Ray's notices about its zero-copy torch setting (it is what the torch rows measure)
warnings.filterwarnings("ignore", message=r".*([Zz]ero-copy|not writable).*")

TIME_TARGET = 1.2  # pyc10 within 1.2x of numpy
RSS_TARGET = 0.05  # worker RSS growth under 5% of the tensor


class Row(NamedTuple):
    """One measurement: section, case, library, best seconds, worker RSS growth (bytes) or None."""

    section: str
    case: str
    library: str
    seconds: float
    rss_growth: int | None = None


def parse_size(text: str) -> int:
    """Bytes from '1G', '64M', '4096' (binary units)."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().removesuffix("IB").removesuffix("B")
    scale = units.get(text[-1:], 1)
    number = text[:-1] if text[-1:] in units else text
    try:
        n = int(float(number) * scale)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 64M, 1G)") from None
    if n < 16:
        raise argparse.ArgumentTypeError("size must be at least 16 bytes")
    return n - n % 16


def make(library: str, nbytes: int) -> Any:
    """A float32 tensor or array of nbytes, every page written (so copies are real copies)."""
    n = nbytes // 4
    if library == "numpy":
        return np.ones(n, dtype=np.float32)
    if library.startswith("torch"):
        return torch.ones(n, dtype=torch.float32)
    return pyc10.ones(n, dtype=pyc10.float32)


def best(fn: Callable[[], Any], repeat: int) -> float:
    """Best seconds per call: single calls for the copies, calibrated loops for microseconds."""
    timer = timeit.Timer(fn)
    t0 = time.perf_counter()
    fn()
    if time.perf_counter() - t0 < 1e-3:
        number, _ = timer.autorange()
        return min(timer.repeat(repeat=max(repeat, 3), number=number)) / number
    times = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        del out
    return min(times)


def pickle_rows(nbytes: int, repeat: int) -> list[Row]:
    rows = []
    for library in ("numpy", "pyc10", "torch"):
        x = make(library, nbytes)
        in_band = pickle.dumps(x, protocol=5)
        bufs: list[pickle.PickleBuffer] = []
        out_of_band = pickle.dumps(x, protocol=5, buffer_callback=bufs.append)
        cases = [
            ("dumps in band", lambda x=x: pickle.dumps(x, protocol=5)),
            (
                "dumps out of band",
                lambda x=x: pickle.dumps(x, protocol=5, buffer_callback=[].append),
            ),
            ("loads in band", lambda d=in_band: pickle.loads(d)),
            ("loads out of band", lambda d=out_of_band, b=bufs: pickle.loads(d, buffers=b)),
        ]
        for case, fn in cases:
            rows.append(Row("pickle", case, library, best(fn, repeat)))
        del x, in_band, out_of_band, bufs
    return rows


@contextmanager
def ray_cluster(nbytes: int, zero_copy_torch: bool) -> Iterator[Any]:
    import ray
    from ray._private import ray_constants

    # (again: Ray puts its own filter for them first when it imports their module)
    warnings.filterwarnings("ignore", message=r".*([Zz]ero-copy|not writable).*")

    # the workers read the variable when they start; the driver read it when ray was imported,
    # and its serializer reads the constant when ray.init makes it
    if zero_copy_torch:
        os.environ["RAY_ENABLE_ZERO_COPY_TORCH_TENSORS"] = "1"
    else:
        os.environ.pop("RAY_ENABLE_ZERO_COPY_TORCH_TENSORS", None)
    ray_constants.RAY_ENABLE_ZERO_COPY_TORCH_TENSORS = zero_copy_torch
    ray.init(
        num_cpus=2,
        object_store_memory=max(2 * nbytes + (256 << 20), 512 << 20),
        include_dashboard=False,
        log_to_driver=False,
        logging_level="ERROR",
    )
    try:
        yield ray
    finally:
        ray.shutdown()
        os.environ.pop("RAY_ENABLE_ZERO_COPY_TORCH_TENSORS", None)


def ray_rows(nbytes: int, repeat: int, libraries: list[str], zero_copy_torch: bool) -> list[Row]:
    rows = []
    with ray_cluster(nbytes, zero_copy_torch) as ray:

        @ray.remote
        def receive(refs: list[Any], pause: float = 0.0) -> int:
            time.sleep(pause)

            def rss() -> int:
                with open("/proc/self/status") as f:
                    return next(int(s.split()[1]) * 1024 for s in f if s.startswith("VmRSS:"))

            before = rss()
            x = ray.get(refs[0])  # what a task handed the object does before it runs
            x[0].item()
            return rss() - before

        for library in libraries:
            # both workers started and the library imported in each (two tasks at once)
            small = ray.put(make(library, 64))
            ray.get([receive.remote([small], 0.5) for _ in range(2)])
            del small
            x = make(library, nbytes)
            puts, tasks, gets, growths = [], [], [], []
            for _ in range(repeat):
                gc.collect()
                t0 = time.perf_counter()
                ref = ray.put(x)
                puts.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                growths.append(ray.get(receive.remote([ref])))
                tasks.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                back = ray.get(ref)
                gets.append(time.perf_counter() - t0)
                del back, ref
            name = library
            if library == "torch" and zero_copy_torch:
                name = "torch (zero-copy setting)"
            rows.append(Row("ray", "ray.put", name, min(puts)))
            rows.append(Row("ray", "task receives it", name, min(tasks), min(growths)))
            rows.append(Row("ray", "ray.get", name, min(gets)))
            del x
    return rows


def loader_table(batches: int, repeat: int) -> list[list[Any]]:
    """The data-loader section: bench_dataloader's rows, printed with their ratio to torch."""
    from bench_dataloader import run_dataloader

    rows = run_dataloader(batches, 4, repeat)
    print(f"\ndata loader: {batches} batches of 32x3x224x224 float32, 4 workers, best of {repeat}")
    print(f"{'library':<8} {'strategy':<16} {'batches/s':>10} {'vs torch':>9}  target")
    table = []
    for r in rows:
        verdict = ""
        if r["library"] == "pyc10":
            verdict = "met" if r["ratio_to_torch"] >= 1.0 else "MISSED"
        print(
            f"{r['library']:<8} {r['strategy']:<16} {r['batches_per_s']:>10.1f} "
            f"{r['ratio_to_torch']:>8.2f}x  {verdict}"
        )
        table.append(
            [
                "loader",
                r["strategy"],
                r["library"],
                r["seconds"],
                r["ratio_to_torch"],
                None,
                verdict,
            ]
        )
    return table


def report(rows: list[Row], nbytes: int) -> list[list[Any]]:
    numpy_time = {(r.section, r.case): r.seconds for r in rows if r.library == "numpy"}
    header = f"{'section':<8} {'case':<18} {'library':<26} {'ms':>10} {'vs numpy':>9}"
    header += f" {'worker RSS growth':>22}  target"
    print(header)
    print("-" * len(header))
    table = []
    for r in rows:
        ref = numpy_time.get((r.section, r.case))
        ratio = r.seconds / ref if ref else None
        growth = ""
        verdict = ""
        if r.rss_growth is not None:
            growth = f"{r.rss_growth / (1 << 20):.1f} MiB ({100 * r.rss_growth / nbytes:.1f}%)"
        if r.library == "pyc10":
            ok = ratio is not None and ratio <= TIME_TARGET
            if r.rss_growth is not None:
                ok = ok and r.rss_growth < RSS_TARGET * nbytes
            verdict = "met" if ok else "MISSED"
        ratio_text = f"{ratio:.2f}x" if ratio is not None else "-"
        print(
            f"{r.section:<8} {r.case:<18} {r.library:<26} {r.seconds * 1e3:>10.3f} {ratio_text:>9}"
            f" {growth:>22}  {verdict}"
        )
        table.append([r.section, r.case, r.library, r.seconds, ratio, r.rss_growth, verdict])
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=parse_size, default=1 << 30, help="bytes (default 1G)")
    parser.add_argument("--repeat", type=int, default=3, help="best of N (default 3)")
    parser.add_argument("--no-ray", action="store_true", help="no Ray rows")
    parser.add_argument(
        "--loader-batches", type=int, default=200, help="data-loader batches (0: no loader rows)"
    )
    parser.add_argument("--csv", help="also write the table to this CSV file")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    nbytes = args.size
    print(f"tensor: {nbytes / (1 << 20):.1f} MiB float32, best of {args.repeat}")
    print(
        f"targets: pyc10 within {TIME_TARGET}x of numpy; worker RSS growth < "
        f"{RSS_TARGET:.0%} of the tensor\n"
    )
    rows = pickle_rows(nbytes, args.repeat)
    if not args.no_ray:
        rows += ray_rows(nbytes, args.repeat, ["numpy", "pyc10", "torch"], False)
        rows += ray_rows(nbytes, args.repeat, ["torch"], True)
    table = report(rows, nbytes)
    if args.loader_batches > 0:
        table += loader_table(args.loader_batches, args.repeat)
    # vs_reference: numpy's time over ours for pickle and Ray, torch's batches/s ratio for loader
    header = ["section", "case", "library", "seconds", "vs_reference", "rss_growth", "target"]
    write_csv(args.csv, header, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
