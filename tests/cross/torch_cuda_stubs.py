"""Stand-in CUDA libraries for PyPI's aarch64 torch, so that it imports on a machine without CUDA.

PyPI's torch 2.13.0 for Linux aarch64 is the CUDA build: torch/lib/libtorch_cuda.so needs
libcudart.so.13, libcudnn.so.9, libcublas.so.13, ... from NVIDIA's wheels (nvidia-cudnn-cu13 and
others), which PyPI does not offer for aarch64. The tests use torch as the CPU oracle only; this
writes, beside torch's own libraries (their RPATH has $ORIGIN), one small library per missing
CUDA soname that defines every symbol torch takes from it (with its symbol version): functions
return 100 (cudaErrorNoDevice), objects are zeroed. torch then imports, and
torch.cuda.is_available() is False. Nothing of CUDA runs.

    python tests/cross/torch_cuda_stubs.py SITE_PACKAGES/torch   (CC: an aarch64 C compiler)

Uses readelf and CC (default aarch64-linux-gnu-gcc) on the host; idempotent.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

# the libraries of CUDA, cuDNN, NCCL, NVSHMEM and cuFile (not the system's)
_CUDA_LIB = re.compile(r"lib(cu|nccl|nvrtc|nvshmem|nvToolsExt|nvJitLink)")
_CUDA_SYM = re.compile(r"(cu|nccl|nvrtc|nvshmem|nvtx|__cuda|__nv)")
_CUDA_VERSION = re.compile(r"(lib(cu|nccl|nvrtc|nvshmem)|NVSHMEM|CUDA|NCCL)")


def _readelf(path: Path) -> str:
    return subprocess.run(
        ["readelf", "-d", "--dyn-syms", "-W", str(path)], capture_output=True, text=True, check=True
    ).stdout


def _scan(libs: list[Path]) -> tuple[set[str], set[str], dict[str, tuple[str, str]]]:
    """The sonames torch's libraries need, the symbols they define, the CUDA ones they take."""
    needed: set[str] = set()
    defined: set[str] = set()
    wanted: dict[str, tuple[str, str]] = {}  # name -> (type, version)
    for path in libs:
        if path.is_symlink() or path.read_bytes()[:4] != b"\x7fELF":
            continue
        for line in _readelf(path).splitlines():
            m = re.search(r"\(NEEDED\).*\[(.*)\]", line)
            if m:
                needed.add(m.group(1))
                continue
            f = line.split()
            if len(f) < 8 or not f[0].endswith(":"):
                continue
            kind, ndx, full = f[3], f[6], f[7]
            name, _, version = full.partition("@")
            version = version.lstrip("@")
            if ndx != "UND":
                defined.add(name)
            elif (version and _CUDA_VERSION.match(version)) or (
                not version and _CUDA_SYM.match(name)
            ):
                if name not in wanted or not wanted[name][1]:
                    wanted[name] = (kind, version)
    return needed, defined, wanted


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    lib = Path(argv[1]) / "lib"
    libs = sorted(lib.glob("*.so*")) + sorted(Path(argv[1]).glob("_C*.so"))
    present = {p.name for p in libs}
    needed, defined, wanted = _scan(libs)
    stubs = sorted(n for n in needed - present if _CUDA_LIB.match(n))
    symbols = {n: t for n, t in wanted.items() if n not in defined}
    if not stubs:
        print("torch_cuda_stubs: every library torch needs is there")
        return 0
    asm = [".text"]
    nodes: dict[str, list[str]] = {}
    for name, (kind, version) in sorted(symbols.items()):
        nodes.setdefault(version or "STUB", []).append(name)
        if kind == "OBJECT":
            asm += [".data", f".globl {name}", f".type {name}, %object", f".size {name}, 4096"]
            asm += [f"{name}:", ".zero 4096", ".text"]
        else:
            asm += [f".globl {name}", f".type {name}, %function", f"{name}:", "mov w0, #100", "ret"]
    script = "\n".join(
        f"{node} {{ global: {' '.join(f'{n};' for n in names)} }};"
        for node, names in sorted(nodes.items())
    )
    cc = os.environ.get("CC", "aarch64-linux-gnu-gcc")
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "stub.s").write_text("\n".join(asm) + "\n")
        (Path(tmp) / "stub.map").write_text(script + "\n")
        for soname in stubs:
            out = lib / soname
            subprocess.run(
                [cc, "-shared", "-nostdlib", "-o", str(out), str(Path(tmp) / "stub.s"),
                 f"-Wl,-soname,{soname}", f"-Wl,--version-script={Path(tmp) / 'stub.map'}"],
                check=True,
            )  # fmt: skip
    print(f"torch_cuda_stubs: {len(stubs)} libraries, {len(symbols)} symbols: {' '.join(stubs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
