"""Allocator benchmark runner: libc10c's CPU allocators against glibc, c10 (torch's libc10) and,
when installed, mimalloc and jemalloc, measured in one run, one process per (allocator, case)
so that peak RSS is each one's own. Prints ns per operation and ratios.

    python bench/run_alloc.py [--build-dir build/tests] [--csv FILE]

c10's allocator is reached through bench/c10_shim.cpp, compiled here against the installed
torch's headers and libc10 (skipped without torch or a C++ compiler). mimalloc and jemalloc are
the Debian packages libmimalloc2.0 and libjemalloc2, preloaded as the process's malloc.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRELOADS = {
    "mimalloc": "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2",
    "jemalloc": "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
}
SIZES = [24, 4096, 1 << 20, 64 << 20]


def build_shim(tmp: Path) -> str | None:
    try:
        import torch
    except ImportError:
        return None
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        return None
    base = Path(torch.__file__).parent
    out = tmp / "libc10_shim.so"
    cmd = [
        cxx,
        "-O2",
        "-std=c++17",
        "-shared",
        "-fPIC",
        str(ROOT / "bench" / "c10_shim.cpp"),
        "-I",
        str(base / "include"),
        "-L",
        str(base / "lib"),
        "-lc10",
        f"-Wl,-rpath,{base / 'lib'}",
        "-o",
        str(out),
    ]
    return str(out) if subprocess.run(cmd, check=False).returncode == 0 else None


def run_best(
    binary: Path, allocator: str, case: str, size: int, shim: str | None, *, repeat: int
) -> tuple | None:
    """The fastest of `repeat` processes (this machine's noise is mostly between processes)."""
    results = [run(binary, allocator, case, size, shim) for _ in range(repeat)]
    ok = [r for r in results if r is not None]
    return min(ok) if ok else None


def run(binary: Path, allocator: str, case: str, size: int, shim: str | None) -> tuple | None:
    name, env = allocator, dict(os.environ)
    if allocator in PRELOADS:
        if not Path(PRELOADS[allocator]).exists():
            return None
        env["LD_PRELOAD"] = PRELOADS[allocator]
        name = "glibc_memalign"
    args = [str(binary), name, case, str(size)] + ([shim] if shim else [])
    out = subprocess.run(args, capture_output=True, text=True, env=env, check=True).stdout.split()
    if not out or out[0] == "unavailable":
        return None
    return float(out[0]), int(out[1]), int(out[2])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=str(ROOT / "build" / "tests"))
    parser.add_argument("--csv")
    parser.add_argument("--repeat", type=int, default=3, help="processes per pair case")
    parser.add_argument(
        "--quick", action="store_true", help="skip the slow page-touching 64 MiB case"
    )
    args = parser.parse_args(argv)
    binary = Path(args.build_dir) / "bench" / "bench_alloc"
    if not binary.exists():
        subprocess.run(
            ["meson", "setup", args.build_dir, "-Dpython=disabled"], cwd=ROOT, check=False
        )
        subprocess.run(["meson", "compile", "-C", args.build_dir], cwd=ROOT, check=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        shim = build_shim(Path(tmp))
        allocators = [
            "c10c_caching",
            "c10c_default",
            "glibc_malloc",
            "glibc_memalign",
            "c10",
            "mimalloc",
            "jemalloc",
        ]
        touched = SIZES[2:3] if args.quick else SIZES[2:]
        cases = [("pair", s) for s in SIZES] + [("pair_touch", s) for s in touched]
        cases.append(("trace", 0))
        results: dict[tuple[str, str, int], tuple] = {}
        for case, size in cases:
            for a in allocators:
                repeat = args.repeat if case == "pair" else 1
                r = run_best(binary, a, case, size, shim if a == "c10" else None, repeat=repeat)
                if r is not None:
                    results[(a, case, size)] = r
        print(
            f"{'case':24} {'allocator':15} {'ns/op':>11} {'vs glibc':>9} {'vs c10':>8} "
            f"{'peak RSS':>10}"
        )
        for case, size in cases:
            label = f"{case} {size}" if size else case
            glibc = results.get(("glibc_malloc", case, size))
            c10 = results.get(("c10", case, size))
            for a in allocators:
                r = results.get((a, case, size))
                if r is None:
                    continue
                vs_glibc = r[0] / glibc[0] if glibc else float("nan")
                vs_c10 = r[0] / c10[0] if c10 else float("nan")
                rss = f"{r[1] / 1024:8.1f}MB" if case == "trace" else ""
                print(f"{label:24} {a:15} {r[0]:11.1f} {vs_glibc:9.2f} {vs_c10:8.2f} {rss:>10}")
                rows.append([label, a, r[0], vs_glibc, vs_c10, r[1], r[2]])
            if case == "trace":
                live = results[("glibc_malloc", case, size)][2]
                print(
                    f"{'':24} peak live bytes of the trace: {live / 1024:.1f} MB; "
                    "peak RSS / peak live:",
                    ", ".join(
                        f"{a} {results[(a, case, size)][1] / live:.2f}"
                        for a in allocators
                        if (a, case, size) in results
                    ),
                )
        retain = run_best(binary, "c10c_caching", "retain", 0, None, repeat=args.repeat)
        atomic = run_best(binary, "c10c_caching", "atomic", 0, None, repeat=args.repeat)
        if retain and atomic:
            print(
                f"storage retain+release {retain[0]:.2f} ns, bare atomic add+sub pair "
                f"{atomic[0]:.2f} ns, ratio {retain[0] / atomic[0]:.2f}"
            )
            rows.append(
                [
                    "retain+release vs atomic pair",
                    "c10c",
                    retain[0],
                    atomic[0],
                    retain[0] / atomic[0],
                    0,
                    0,
                ]
            )
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(
                [
                    "case",
                    "allocator",
                    "ns_per_op",
                    "ratio_vs_glibc",
                    "ratio_vs_c10",
                    "peak_rss_kib",
                    "peak_live_kib",
                ]
            )
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
