"""CUDA tensors and events through pyc10.multiprocessing queues, over the stand-in driver.

torch's reductions.py path: the producer's storage goes by CUDA IPC handle (``_share_cuda_``'s
8-tuple), the consumer opens it once per handle (a second arrival releases the producer's
reference counter at once), views keep offset, sizes and strides, writes are seen both ways.
Each case runs in a fresh interpreter (the driver loads once per process), spawned children
sharing the stand-in's clock file with their parent.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import pyc10

pytestmark = pytest.mark.skipif(
    not hasattr(pyc10.UntypedStorage, "_share_cuda_")
    or importlib.util.find_spec("pyc10._sharing") is None,
    reason="needs CUDA IPC and shared storages in pyc10",
)

SCRIPT = """
import pyc10, pyc10.multiprocessing as mp

def child(q, back, done):
    t, v, again = q.get(), q.get(), q.get()
    event = q.get()
    event.synchronize()
    back.put((
        t.cpu().tolist(), v.cpu().tolist(), tuple(v.shape), v.stride(), v.storage_offset(),
        v.untyped_storage() is t.untyped_storage(), again.untyped_storage() is t.untyped_storage(),
        str(t.device), type(event).__name__,
    ))
    t.fill_(7.0)
    pyc10.cuda.synchronize()
    del t, v, again
    back.put(None)
    done.wait()

if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    q, back, done = ctx.Queue(), ctx.Queue(), ctx.Event()
    p = ctx.Process(target=child, args=(q, back, done))
    p.start()
    t = pyc10.arange(12, dtype=pyc10.float32).cuda()
    v = t.view(3, 4)[1:, 1:3]
    event = pyc10.cuda.Event(interprocess=True)
    event.record()
    for item in (t, v, t, event):
        q.put(item)
    print(back.get(timeout=60))
    back.get(timeout=60)
    print(t.cpu().tolist())
    done.set()
    p.join()
    pyc10.cuda.ipc_collect()
    print(p.exitcode)
"""


def test_cuda_tensors_and_events_cross_processes_as_torchs_reductions_send_them(
    stub: Path, tmp_path: Path
) -> None:
    path = tmp_path / "case.py"
    path.write_text(textwrap.dedent(SCRIPT))
    env = {**os.environ, "C10C_CUDA_DRIVER": str(stub), "C10C_STUB_CLOCK": str(tmp_path / "clock")}
    proc = subprocess.run(
        [sys.executable, str(path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    seen, after, code = proc.stdout.splitlines()
    assert seen == str(
        (
            [float(i) for i in range(12)],
            [[5.0, 6.0], [9.0, 10.0]],
            (2, 2),
            (4, 1),
            5,
            True,
            True,
            "cuda:0",
            "Event",
        )
    )
    assert after == str([7.0] * 12)
    assert code == "0"


def test_cuda_storages_alone_are_refused_as_torch_refuses_them() -> None:
    import torch.multiprocessing  # noqa: F401  (torch's message, for comparison)
    from torch.multiprocessing import reductions as torch_reductions

    from pyc10.multiprocessing import reductions

    class FakeCudaStorage:
        is_cuda = True

    with pytest.raises(RuntimeError) as ours:
        reductions.reduce_storage(FakeCudaStorage())
    with pytest.raises(RuntimeError) as theirs:
        torch_reductions.reduce_storage(FakeCudaStorage())
    assert str(ours.value) == str(theirs.value)
