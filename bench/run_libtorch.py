"""Build and run bench/bench_libtorch.cpp: libc10c beside raw c10 and ATen from the torch wheel.

The benchmark links the libc10c that pyc10 installed (its bundled headers and library) and the
wheel's libc10/libtorch_cpu, so both run in one process on the same machine state.

    python bench/run_libtorch.py [--rounds N] [--cxx g++]

Needs torch (``pip install torch==2.13.0``) and a C++17 compiler; compiling against ATen's headers
takes about ten seconds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    """Compile the benchmark in a temporary directory and run it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("torch is not installed: pip install torch==2.13.0", file=sys.stderr)
        return 2
    import pyc10

    if shutil.which(args.cxx) is None:
        print(f"no C++ compiler {args.cxx!r}", file=sys.stderr)
        return 2
    torch_dir = Path(torch.__file__).parent
    lib = Path(pyc10.get_library_path())
    abi = int(torch.compiled_with_cxx11_abi())
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "bench_libtorch"
        cmd = [
            args.cxx,
            "-O2",
            "-std=c++17",
            f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
            f'-DBENCH_TORCH_VERSION="{torch.__version__}"',
            f"-I{pyc10.get_include()}",
            "-isystem",
            str(torch_dir / "include"),
            "-isystem",
            str(torch_dir / "include/torch/csrc/api/include"),
            str(HERE / "bench_libtorch.cpp"),
            "-o",
            str(exe),
            str(lib),
            f"-L{torch_dir / 'lib'}",
            "-ltorch_cpu",
            "-lc10",
            f"-Wl,-rpath,{lib.parent}:{torch_dir / 'lib'}",
        ]
        subprocess.run(cmd, check=True)
        out = subprocess.run(
            [str(exe), str(args.rounds)], check=True, capture_output=True, text=True
        ).stdout
    print(out, end="")
    rows = {line[:32].strip(): line[32:].split() for line in out.splitlines()[2:]}
    empty = float(rows["empty 2x3 float32 + destroy"][0])
    c10 = float(rows["empty 2x3 float32 + destroy"][1])
    aten = float(rows["empty 2x3 float32 + destroy"][2])
    print(
        f"targets: create+destroy <= 30 ns ({empty:.1f}: "
        f"{'ok' if empty <= 30 else 'MISSED'}), about 5x faster than raw c10 "
        f"({c10 / empty:.1f}x) and 7x than at::empty ({aten / empty:.1f}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
