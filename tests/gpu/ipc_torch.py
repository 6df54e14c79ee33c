"""CUDA IPC between pyc10 and torch on a real GPU, both ways: a producer shares a CUDA tensor's
storage (``_share_cuda_``, torch's 8-tuple), a consumer of the other library opens it
(``_new_shared_cuda``) in another process, checks the producer's values, writes, and the producer
sees the writes; with and without expandable segments. Run by tests/gpu/check.sh.

    python tests/gpu/ipc_torch.py [--expandable]
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

CONSUMER = r"""
import os, pickle, sys
which = sys.argv[1]
args = pickle.loads(bytes.fromhex(sys.stdin.read().strip()))
if which == "torch":
    import torch as lib
else:
    import pyc10 as lib
s = lib.UntypedStorage._new_shared_cuda(*args)
t = lib.empty(0, dtype=lib.float32, device="cuda").set_(s, 0, (s.nbytes() // 4,), (1,))
values = t.cpu().tolist()
t.fill_(-1.0)
lib.cuda.synchronize()
print(values[:4], len(values))
"""


def share(which: str) -> tuple[object, tuple]:
    if which == "torch":
        import torch as lib
    else:
        import pyc10 as lib
    x = lib.arange(1000, dtype=lib.float32).to("cuda")
    lib.cuda.synchronize()
    return x, x.untyped_storage()._share_cuda_()


def one_way(producer: str, consumer: str) -> bool:
    x, args = share(producer)
    proc = subprocess.run(
        [sys.executable, "-c", CONSUMER, consumer],
        input=pickle.dumps(args).hex(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    seen = x.cpu().tolist()
    ok = proc.returncode == 0 and proc.stdout.startswith("[0.0, 1.0, 2.0, 3.0] 1000")
    ok = ok and seen == [-1.0] * 1000
    version, kind = args[1][0], chr(args[1][1])
    print(
        f"{producer} -> {consumer}: {'ok' if ok else 'FAIL'} (handle version {version} "
        f"type {kind!r}, {len(args[1])} bytes)"
    )
    if not ok:
        print(proc.stdout, proc.stderr)
    return ok


def main() -> int:
    if "--expandable" in sys.argv:
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
    results = []
    for producer, consumer in (("pyc10", "torch"), ("torch", "pyc10"), ("pyc10", "pyc10")):
        # each producer in its own process: the two libraries' allocators do not meet
        here = os.path.dirname(os.path.abspath(__file__))
        code = (
            f"import sys; sys.path.insert(0, {here!r}); import ipc_torch; "
            f"sys.exit(0 if ipc_torch.one_way({producer!r}, {consumer!r}) else 1)"
        )
        proc = subprocess.run([sys.executable, "-c", code], timeout=300, check=False)
        results.append(proc.returncode == 0)
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
