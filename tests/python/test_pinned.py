"""Pinned host memory and non_blocking transfers in pyc10, over the stand-in driver
(tests/cuda_stub/cuda_stub.c, compiled here; each case in a fresh interpreter: the driver loads
once per process), and without a driver against torch's CPU wheel.

Figures follow PyTorch's CachingHostAllocator (aten/src/ATen/core/CachingHostAllocator.h:
power-of-two blocks, reuse after the events of the streams that used a block complete) and
torch.cuda.host_memory_stats()'s keys (torch/cuda/memory.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import torch
from _oracle import needs_torch_cpu_build

ROOT = Path(__file__).resolve().parents[2]


def run(script: str, **env: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd="/",
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def errors(calls: list) -> list[str]:
    out = []
    for call in calls:
        try:
            r = call()
            out.append(f"ok {r!r}")
        except Exception as e:  # the type and text are what we compare
            # pyc10's error classes subclass the builtin ones under a C10 prefix
            out.append(f"{type(e).__name__.removeprefix('C10')}: {e}")
    return out


NO_DRIVER_CALLS = """
    [lambda: M.empty(2).pin_memory(),
     lambda: M.empty(2).is_pinned(),
     lambda: dict(M.cuda.host_memory_stats()),
     lambda: M.cuda.host_memory_stats_as_nested_dict(),
     lambda: M.empty(2, pin_memory=True),
     lambda: M.zeros(2, pin_memory=True),
     lambda: M.tensor([1.0], pin_memory=True),
     lambda: M.UntypedStorage(4).pin_memory(),
     lambda: M.UntypedStorage(4).is_pinned(),
     lambda: M.ones(3).copy_(M.ones(3), non_blocking=True).tolist()]
"""


@needs_torch_cpu_build
def test_without_a_driver_pinning_answers_as_torchs_cpu_wheel():
    expected = errors(eval(textwrap.dedent(NO_DRIVER_CALLS).strip(), {"M": torch}))
    calls = textwrap.dedent(NO_DRIVER_CALLS).strip().replace("\n", " ")
    out = run(
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "import pyc10 as M\n"
        "from test_pinned import errors\n"
        f"for line in errors({calls}):\n"
        "    print(line)\n",
        C10C_CUDA_DRIVER="/nonexistent/libcuda.so.1",
    )
    got = [line.replace("OrderedDict()", "{}") for line in out.splitlines()]
    expected = [line.replace("OrderedDict()", "{}") for line in expected]
    assert got == expected


def test_pin_memory_and_non_blocking_copies_through_the_stand_in(stub: Path):
    out = run(
        """
        import ctypes, os
        import pyc10
        drv = ctypes.CDLL(os.environ["C10C_CUDA_DRIVER"])
        drv.c10c_stub_calls.restype = ctypes.c_long
        drv.c10c_stub_pinned_bytes.restype = ctypes.c_size_t
        calls = lambda name: drv.c10c_stub_calls(name.encode())
        syncs = lambda: calls("cuStreamSynchronize")  # a synchronous copy waits for its stream
        x = pyc10.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
        print(x.is_pinned(), pyc10.cuda.host_memory_stats())
        p = x.pin_memory()
        print(p.is_pinned(), p.pin_memory() is p, p.tolist(), p.stride())
        print(drv.c10c_stub_pinned_bytes())  # 24 bytes round to a 32-byte block
        s = pyc10.cuda.host_memory_stats()
        print(s["allocations.current"], s["allocated_bytes.current"], s["active_requests.current"],
              s["num_host_alloc"], s["host_alloc_time.count"])
        n = syncs()
        d = p.to("cuda:0", non_blocking=True)
        print(calls("cuMemcpyHtoDAsync_v2"), syncs() - n, d.cpu().tolist())
        n = syncs()
        e = x.cuda(non_blocking=True)  # pageable: synchronous
        print(calls("cuMemcpyHtoDAsync_v2"), syncs() - n, calls("cuMemcpyHtoD_v2"))
        n = syncs()
        back = d.to("cpu", non_blocking=True)  # into pinned memory, as ATen's _to_copy
        print(back.is_pinned(), calls("cuMemcpyDtoHAsync_v2"), syncs() - n)
        pyc10.cuda.synchronize()
        print(back.tolist())
        q = pyc10.empty(2, 3, pin_memory=True)
        z = pyc10.zeros(4, pin_memory=True)
        t = pyc10.tensor([1.0, 2.0], pin_memory=True)
        print(q.is_pinned(), z.is_pinned(), z.tolist(), t.is_pinned(), t.tolist())
        st = pyc10.UntypedStorage(5)
        ps = st.pin_memory()
        print(st.is_pinned(), ps.is_pinned(), ps.nbytes())
        dst = pyc10.empty(2, 3, pin_memory=True)
        n = syncs()
        dst.copy_(d, non_blocking=True)
        print(calls("cuMemcpyDtoHAsync_v2"), syncs() - n)
        pyc10.cuda.synchronize()
        print(dst.tolist())
        for f in (lambda: d.pin_memory(), lambda: pyc10.empty(2, device="cuda", pin_memory=True)):
            try:
                f()
            except RuntimeError as err:
                print(err)
        print(d.is_pinned())
        g = p.type("torch.cuda.FloatTensor", non_blocking=True)  # type() is to() with its name
        print(calls("cuMemcpyHtoDAsync_v2"), g.device)
        del p, q, z, t, ps, dst, back, g
        pyc10.cuda.reset_peak_host_memory_stats()
        s = pyc10.cuda.host_memory_stats_as_nested_dict()
        print(s["active_requests"]["current"], s["active_requests"]["peak"])
        drv.c10c_stub_advance(ctypes.c_uint64(10))  # the copies complete on the stand-in's clock
        w = pyc10.empty(8, pin_memory=True)  # 32 bytes: p's block, once its events are seen
        s = pyc10.cuda.host_memory_stats()
        print(s["active_requests.current"], s["num_host_alloc"], s["allocations.current"])
        del w
        pyc10.cuda.memory._host_empty_cache()  # torch._C._host_emptyCache
        s = pyc10.cuda.host_memory_stats()
        print(s["allocations.current"], s["num_host_free"], drv.c10c_stub_pinned_bytes())
        """,
        C10C_CUDA_DRIVER=str(stub),
    )
    lines = out.splitlines()
    assert lines[0] == "False OrderedDict()"  # before CUDA is initialized: {} as torch
    assert lines[1] == "True True [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] (3, 1)"
    assert lines[2] == "32"
    assert lines[3] == "1 32 1 1 1"
    # every copy is queued on the current stream; only the synchronous ones wait for it, never
    # through the legacy stream's synchronous calls
    assert lines[4] == "1 0 [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]"
    assert lines[5] == "2 1 0"  # the pageable copy waited: not asynchronous
    assert lines[6] == "True 2 0"  # d.cpu() above was the first
    assert lines[7] == "[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]"
    assert lines[8] == "True True [0.0, 0.0, 0.0, 0.0] True [1.0, 2.0]"
    assert lines[9] == "False True 5"
    assert lines[10] == "3 0"
    assert lines[11] == "[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]"
    assert lines[12] == "cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can be pinned"
    assert lines[13] == "Only dense CPU tensors can be pinned"
    assert lines[14] == "False"
    # blocks whose copies are still queued stay active (PyTorch: until process_events sees
    # their events complete, at the next allocation)
    assert lines[15] == "3 cuda:0"
    assert lines[16] == "3 3"
    # p, back and dst's blocks (32 bytes each) and q, z, t, ps's, all free now; w takes one
    assert lines[17] == "1 7 7"
    # every block free and its events complete: all go back to the driver
    assert lines[18] == "0 7 0"
