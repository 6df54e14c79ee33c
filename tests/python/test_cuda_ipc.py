"""CUDA storages and events shared between processes over the stand-in driver, whose device memory
another process maps: ``UntypedStorage._share_cuda_`` gives torch's 8-tuple, a spawned child opens
it with ``_new_shared_cuda``, writes, and the parent sees the writes; events order the consumer;
``ipc_collect`` frees what consumers let go. Each case runs in a fresh interpreter (the driver
loads once per process) with one stand-in clock file shared by parent and child."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from torch.multiprocessing import reductions

CHILD = """
import multiprocessing as mp
import pyc10

def floats(storage):
    t = pyc10.empty(0, dtype=pyc10.float32, device="cuda")
    return t.set_(storage, 0, (storage.nbytes() // 4,), (1,))

def consume(args, q, value):
    s = pyc10.UntypedStorage._new_shared_cuda(*args)
    t = floats(s)
    q.put((t.cpu().tolist(), s._is_received_cuda()))
    t.fill_(value)
    del t, s

def ctx():
    return mp.get_context("spawn")
"""


def run(stub: Path, tmp_path: Path, script: str) -> str:
    """Run CHILD + script as a file (spawn needs an importable __main__); return its stdout."""
    path = tmp_path / "case.py"
    path.write_text(CHILD + textwrap.dedent(script))
    env = {
        **os.environ,
        "C10C_CUDA_DRIVER": str(stub),
        "C10C_STUB_CLOCK": str(tmp_path / "clock"),
    }
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
    return proc.stdout


def test_the_tuple_has_torchs_fields_in_torchs_order(stub, tmp_path):
    # the names torch's reduce_tensor unpacks _share_cuda_() into, in order
    source = inspect.getsource(reductions.reduce_tensor)
    unpacked = re.search(r"\(\s*([\w,\s]+?)\s*\) = storage\._share_cuda_\(\)", source)
    assert unpacked is not None
    names = [n.strip() for n in unpacked.group(1).split(",") if n.strip()]
    assert names == [
        "device",
        "handle",
        "storage_size_bytes",
        "storage_offset_bytes",
        "ref_counter_handle",
        "ref_counter_offset",
        "event_handle",
        "event_sync_required",
    ]
    out = run(
        stub,
        tmp_path,
        """
        x = pyc10.arange(10, dtype=pyc10.float32).to("cuda")
        y = pyc10.zeros(3, device="cuda")  # the next block of the same segment
        a, b = x.untyped_storage()._share_cuda_(), y.untyped_storage()._share_cuda_()
        print(repr(a[0]), len(a))
        print(a[1][:2], len(a[1]), a[1] == b[1])
        print(a[2], a[3], b[2], b[3])
        print(a[4].startswith(b"/c10c_"), a[4] == b[4], a[5] + 1 == b[5])
        print(type(a[6]).__name__, len(a[6]), a[7])
        empty = pyc10.empty(0, device="cuda").untyped_storage()._share_cuda_()
        print(empty)
        typed = x.storage()._share_cuda_()  # TypedStorage passes it on, as torch's
        print(typed[1] == a[1], typed[3])
        try:
            pyc10.zeros(2).untyped_storage()._share_cuda_()
        except RuntimeError as e:
            print(type(e).__name__, e)
        """,
    )
    lines = out.splitlines()
    assert lines[0] == "0 8"
    assert lines[1] == "b'\\x02c' 66 True"  # version 2, cudaMalloc'd, the segment's handle
    assert lines[2] == "40 0 12 512"  # sizes in bytes; offsets in the segment
    assert lines[3] == "True True True"
    assert lines[4] == "bytes 64 True"
    assert lines[5] == "(0, None, 0, 0, None, 0, None, None)"  # torch's for an empty storage
    assert lines[6] == "True 0"
    assert lines[7] == "C10RuntimeError _share_cuda_: only available on CUDA"


def test_a_spawned_child_writes_memory_the_parent_sees(stub, tmp_path):
    out = run(
        stub,
        tmp_path,
        """
        import os, struct

        def counter_file(name, index):
            # torch's RefcountedMapAllocator layout: int32 users at 0, int64 counters from 64
            path = "/dev/shm/" + name.decode().lstrip("/")
            if not os.path.exists(path):
                return "gone"
            with open(path, "rb") as f:
                data = f.read()
            users = struct.unpack_from("<i", data, 0)[0]
            return len(data), users, struct.unpack_from("<q", data, 64 + 8 * index)[0]

        if __name__ == "__main__":
            x = pyc10.arange(6, dtype=pyc10.float32).to("cuda")
            args = x.untyped_storage()._share_cuda_()
            print(counter_file(args[4], args[5]))
            q = ctx().Queue()
            p = ctx().Process(target=consume, args=(args, q, 7.0))
            p.start()
            print(q.get())
            p.join()
            print(p.exitcode, x.cpu().tolist())
            print(counter_file(args[4], args[5]))
            del x
            pyc10.cuda.ipc_collect()  # the child let go: nothing kept, the file goes
            print(pyc10._lib.lib.c10c_cuda_ipc_limbo_count(), counter_file(args[4], args[5]))
        """,
    )
    assert out.splitlines() == [
        "(80064, 1, 1)",  # 64 + 8 * 10000 bytes; the producer maps it; one consumer reference
        "([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], True)",
        "0 [7.0, 7.0, 7.0, 7.0, 7.0, 7.0]",
        "(80064, 1, 0)",  # the child released its reference and unmapped the file
        "0 gone",
    ]


def test_memory_a_child_holds_waits_in_limbo_until_collected(stub, tmp_path):
    out = run(
        stub,
        tmp_path,
        """
        def hold(args, q, go):
            s = pyc10.UntypedStorage._new_shared_cuda(*args)
            q.put("open")
            go.get()
            del s

        if __name__ == "__main__":
            lib = pyc10._lib.lib
            x = pyc10.ones(1000, device="cuda")
            args = x.untyped_storage()._share_cuda_()
            q, go = ctx().Queue(), ctx().Queue()
            p = ctx().Process(target=hold, args=(args, q, go))
            p.start()
            print(q.get())
            del x
            pyc10.cuda.ipc_collect()
            print(lib.c10c_cuda_ipc_limbo_count())  # held by the child
            go.put(1)
            p.join()
            pyc10.cuda.ipc_collect()
            print(lib.c10c_cuda_ipc_limbo_count())
        """,
    )
    assert out.splitlines() == ["open", "1", "0"]


def test_a_received_storage_is_shared_again_with_the_original_handle(stub, tmp_path):
    out = run(
        stub,
        tmp_path,
        """
        def relay(args, q, go):
            s = pyc10.UntypedStorage._new_shared_cuda(*args)
            again = s._share_cuda_()  # torch refuses; pyc10 passes the handle on
            q.put(again)
            go.get()
            del s

        if __name__ == "__main__":
            x = pyc10.full((4,), 3.0, device="cuda")
            args = x.untyped_storage()._share_cuda_()
            q, go = ctx().Queue(), ctx().Queue()
            p = ctx().Process(target=relay, args=(args, q, go))
            p.start()
            again = q.get()
            print(again[1] == args[1], again[3] == args[3], again[4] == args[4], again[7])
            r = ctx().Queue()
            c = ctx().Process(target=consume, args=(again, r, 5.0))
            c.start()
            print(r.get()[0])
            c.join()
            go.put(True)
            p.join()
            print(x.cpu().tolist())
            del x
            pyc10.cuda.ipc_collect()
            print(pyc10._lib.lib.c10c_cuda_ipc_limbo_count())
        """,
    )
    assert out.splitlines() == [
        "True True True False",  # the same handle, offset and counter; synchronized, no event
        "[3.0, 3.0, 3.0, 3.0]",
        "[5.0, 5.0, 5.0, 5.0]",
        "0",  # both consumers' references came back
    ]


def test_events_open_in_another_process_as_torchs(stub, tmp_path):
    out = run(
        stub,
        tmp_path,
        """
        def opened(device, handle, q):
            e = pyc10.cuda.Event.from_ipc_handle(device, handle)
            q.put((e.query(), str(e.device)))

        if __name__ == "__main__":
            e = pyc10.cuda.Event(interprocess=True)
            print(e.device)  # None until made, as torch's
            h = e.ipc_handle()  # made on the current device before any record, as torch's
            print(type(h).__name__, len(h), e.device)
            e.record()
            q = ctx().Queue()
            p = ctx().Process(target=opened, args=(0, h, q))
            p.start()
            print(q.get())
            p.join()
            timed = pyc10.cuda.Event(enable_timing=True, interprocess=True)
            for bad in (lambda: pyc10.cuda.Event().ipc_handle(),
                        lambda: timed.ipc_handle(),
                        lambda: pyc10.cuda.Event.from_ipc_handle(0, b"short"),
                        lambda: pyc10.cuda.Event.from_ipc_handle(0, bytes(64))):
                try:
                    bad()
                    print("no error")
                except RuntimeError as err:
                    print(type(err).__name__, str(err).split(":")[0])
        """,
    )
    lines = out.splitlines()
    assert lines[:3] == ["None", "bytes 64 cuda:0", "(True, 'cuda:0')"]
    assert lines[3] == "C10RuntimeError CUDA driver error"
    assert lines[4] == "C10RuntimeError CUDA driver error"
    assert lines[5] == (
        "C10RuntimeError cudaIpcEventHandle_t expects byte-like object of size 64, but got 5"
    )
    assert lines[6] == "C10RuntimeError CUDA driver error"


def test_a_counter_naming_a_shared_storage_is_refused_and_its_bytes_unchanged(stub, tmp_path):
    """A storage of 80000 bytes shared by name has a counter file's size: never taken for one."""
    out = run(
        stub,
        tmp_path,
        """
        s = pyc10.UntypedStorage._new_using_filename_cpu(80000)
        s.fill_(17)
        name = s._share_filename_cpu_()[1]
        try:
            pyc10.UntypedStorage._release_ipc_counter(name, 0, device=0)
            print("no error")
        except ValueError as e:
            print(str(e).split(": ")[1])
            print(str(e).split(": it ", 1)[1].split(" (")[0])
        print(set(s.tolist()))
        """,
    )
    name_free = re.sub(r"</c10c_\d+_[0-9a-f]+>", "<NAME>", out)
    assert name_free.splitlines() == [
        "its reference counter file <NAME>",
        "is not a CUDA IPC reference counter file",
        "{17}",
    ]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ((0, b"", 0), "RuntimeError: tuple of 8 items expected"),
        ((0, "x", 4, 0, b"", 0, b"", False), "TypeError: _new_shared in CUDA mode"),
        ((0, b"\x04c" + bytes(64), 4, 0, b"", 0, bytes(64), False), "future version"),
        ((0, b"\x03e" + bytes(28), 4, 0, b"", 0, bytes(64), False), "future version"),
        ((0, b"\x02x" + bytes(64), 4, 0, b"", 0, bytes(64), False), "illformed"),
        # the driver's refusal (the stand-in's: CUDA_ERROR_INVALID_VALUE)
        ((0, b"\x02c" + bytes(64), 4, 0, b"", 0, bytes(64), False), "CUDA driver error"),
    ],
)
def test_bad_tuples_are_refused(stub, tmp_path, args, error):
    out = run(
        stub,
        tmp_path,
        f"""
        pyc10.zeros(1, device="cuda")
        try:
            pyc10.UntypedStorage._new_shared_cuda(*{args!r})
            print("no error")
        except (RuntimeError, TypeError, ValueError) as e:
            base = "TypeError" if isinstance(e, TypeError) else "RuntimeError"
            print(base + ": " + str(e))
        for bad in ((b"x",), ("x", 0), (b"/c10c_gone", 0)):
            try:
                print(pyc10.UntypedStorage._release_ipc_counter(*bad, device=0))
            except (RuntimeError, TypeError) as e:
                print("TypeError" if isinstance(e, TypeError) else "RuntimeError")
        """,
    )
    lines = out.splitlines()
    assert error in lines[0]
    assert lines[1:] == ["RuntimeError", "TypeError", "None"]


def test_fork_and_pool_children_that_share_leave_no_counter_file(stub, tmp_path):
    """multiprocessing ends fork and Pool children with os._exit, which skips the library's exit
    hook: a finalizer releases the child's reference-counter files (torch's stay in /dev/shm).
    A process killed by a signal (Pool.terminate, as leaving a ``with Pool`` block does) still
    leaves them, as torch's."""
    out = run(
        stub,
        tmp_path,
        """
        import os

        def share(q):
            s = pyc10.empty(16, device="cuda").untyped_storage()
            held = s._share_cuda_()  # never released by a consumer: the file is in use
            q.put((os.getpid(), held[4]))

        def pooled(_):
            s = pyc10.empty(16, device="cuda").untyped_storage()
            return os.getpid(), s._share_cuda_()[4]

        if __name__ == "__main__":
            fork = mp.get_context("fork")
            q = fork.Queue()
            p = fork.Process(target=share, args=(q,))
            p.start()
            pid, name = q.get()
            p.join()
            print(p.exitcode, name.decode().startswith(f"/c10c_{pid}_"))
            print(os.path.exists("/dev/shm" + name.decode()))
            pool = fork.Pool(2)  # closed and joined: its workers end as fork children do
            made = pool.map(pooled, range(4))
            pool.close()
            pool.join()
            print(any(os.path.exists("/dev/shm" + n.decode()) for _, n in made))
        """,
    )
    assert out.splitlines() == ["0 True", "False", "False"]
