"""A small training loop on torch's CUDA allocator and on libc10c's (pyc10.allocators.torch).

Each setting runs in its own process (torch takes one allocator per process, before its first
CUDA allocation): a two-layer transformer encoder, 30 steps of AdamW on fixed random data, the
same seed. Printed per setting: whether the 30 losses equal torch's bit for bit (and the largest
difference), peak reserved bytes, the median step time and its ratio to torch's (target <=
1.02x). Then CuPy allocations through pyc10.allocators.cupy, when CuPy is installed.

    python tests/gpu/torch_allocator.py            # every setting; exit 1 when a loss differs
    python tests/gpu/torch_allocator.py --one SETTING   # one run, JSON (used by the above)
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

SETTINGS = {
    "torch": None,
    "pyc10": "",
    "pyc10 expandable+stitching": "expandable_segments:True,stitching:True",
    "pyc10 planning": "planning:True",
}
STEPS = 30


def one(name: str) -> dict[str, object]:
    settings = SETTINGS[name]
    if settings is not None:
        import pyc10.allocators.torch as pt

        pt.use(settings or None)
    import torch

    torch.manual_seed(0)
    torch.backends.cudnn.deterministic = True
    torch.use_deterministic_algorithms(True, warn_only=True)
    dev = torch.device("cuda")
    layer = torch.nn.TransformerEncoderLayer(256, 8, 1024, dropout=0.0, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, 2).to(dev)
    head = torch.nn.Linear(256, 10).to(dev)
    params = list(model.parameters()) + list(head.parameters())
    opt = torch.optim.AdamW(params, lr=1e-3)
    g = torch.Generator(device="cpu").manual_seed(1)
    xs = torch.randn(STEPS, 32, 128, 256, generator=g).to(dev)
    ys = torch.randint(0, 10, (STEPS, 32), generator=g).to(dev)
    losses, times = [], []
    for i in range(STEPS):
        torch.cuda.synchronize()
        t = time.perf_counter()
        out = head(model(xs[i]).mean(dim=1))
        loss = torch.nn.functional.cross_entropy(out, ys[i])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if settings is not None:
            pt.step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
        losses.append(loss.item())
    if settings is None:
        peak = torch.cuda.max_memory_reserved()
        stats = {}
    else:
        peak = pt.max_memory_reserved()
        s = pt.memory_stats()
        stats = {k: s[k] for k in ("plan.served", "plan.fallbacks", "num_stitches") if k in s}
    return {
        "losses": losses,
        "peak": peak,
        "step_ms": statistics.median(times[5:]) * 1e3,
        "stats": stats,
    }


def cupy_check() -> str:
    try:
        import cupy
    except ImportError:
        return "skip cupy: not installed"
    import pyc10.allocators.cupy as pc
    import pyc10.allocators.torch as pt

    pc.use()
    a = cupy.arange(1 << 20, dtype=cupy.float32)
    b = (a * 2).sum()
    ok = float(b) == float((1 << 20) * ((1 << 20) - 1))
    allocated = pt.memory_allocated(0)
    del a
    return f"cupy through libc10c: sum {'ok' if ok else 'WRONG'}, libc10c allocated {allocated}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--one", choices=list(SETTINGS))
    ap.add_argument("--cupy", action="store_true")
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one)))
        return 0
    if args.cupy:
        print(cupy_check())
        return 0
    runs = {}
    for name in SETTINGS:
        out = subprocess.run(
            [sys.executable, __file__, "--one", name],
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        if out.returncode != 0:
            print(f"{name}: FAILED\n{out.stderr[-2000:]}")
            return 1
        runs[name] = json.loads(out.stdout.strip().splitlines()[-1])
    base = runs["torch"]
    failed = 0
    print(f"{'setting':28} {'losses':>22} {'peak reserved':>16} {'step ms':>9} {'ratio':>7}")
    for name, r in runs.items():
        diff = max(abs(a - b) for a, b in zip(r["losses"], base["losses"], strict=True))
        same = r["losses"] == base["losses"]
        failed += not same
        ratio = r["step_ms"] / base["step_ms"]
        print(
            f"{name:28} {'identical' if same else f'max diff {diff:.3g}':>22} "
            f"{r['peak'] / 2**20:13.1f} MiB {r['step_ms']:9.2f} {ratio:6.3f}x {r['stats']}"
        )
    out = subprocess.run(
        [sys.executable, __file__, "--cupy"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    print(out.stdout.strip() or out.stderr[-1000:])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
