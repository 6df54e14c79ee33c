"""pyc10.cuda over the stand-in driver (tests/cuda_stub/cuda_stub.c, compiled here): the loader's
unavailable paths as torch's CPU wheel reports them, devices, the per-thread current device and
the device context manager. Each case runs in a fresh interpreter: the driver loads once per
process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]


def run(script: str, **env: str) -> str:
    """Run script in a fresh interpreter with env added; return its stdout (it must succeed)."""
    full = {**os.environ, **env}
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        env=full,
        cwd="/",
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_without_a_driver_cuda_is_unavailable_as_in_torchs_cpu_wheel():
    assert not torch.cuda.is_available() and torch.cuda.device_count() == 0
    out = run(
        """
        import pyc10
        c = pyc10.cuda
        print(c.is_available(), c.device_count())
        print(c._unavailable_reason())
        for call in (c.init, c.current_device, lambda: c.set_device(0), c.mem_get_info,
                     c.synchronize, c.get_device_name, c.driver_version):
            try:
                call()
                print("no error")
            except RuntimeError as e:
                print(type(e).__name__, str(e) == c._unavailable_reason())
        with c.device(-1):  # changes nothing, even without CUDA, as torch
            print("device(-1) ok")
        """,
        C10C_CUDA_DRIVER="/nonexistent/libcuda.so.1",
    )
    lines = out.splitlines()
    assert lines[0] == "False 0"
    assert lines[1].startswith("CUDA driver not found: /nonexistent/libcuda.so.1")
    assert lines[2:9] == ["C10RuntimeError True"] * 7
    assert lines[9] == "device(-1) ok"


@pytest.mark.parametrize(
    ("env", "reason"),
    [
        ({"C10C_STUB_DEVICES": "0"}, "cuInit failed: CUDA_ERROR_NO_DEVICE"),
        ({"C10C_STUB_INIT_ERROR": "3"}, "cuInit failed: CUDA_ERROR_NOT_INITIALIZED"),
    ],
)
def test_a_driver_without_devices_or_failing_init(stub, env, reason):
    out = run(
        "import pyc10; print(pyc10.cuda.device_count()); print(pyc10.cuda._unavailable_reason())",
        C10C_CUDA_DRIVER=str(stub),
        **env,
    )
    count, why = out.splitlines()
    assert count == "0" and why.startswith(reason)


def test_devices_through_the_stand_in(stub):
    out = run(
        """
        import threading
        import pyc10
        c = pyc10.cuda
        print(c.is_available(), c.device_count(), c.driver_version())
        print(c.current_device(), c.get_device_name(1), c.mem_get_info("cuda:1"))
        with c.device(1):
            print("inside", c.current_device(), c.get_device_name())
            seen = []
            t = threading.Thread(target=lambda: seen.append(c.current_device()))
            t.start(); t.join()
            print("other thread", seen[0])
        print("after", c.current_device())
        c.set_device(pyc10.device("cuda", 1)); print("set", c.current_device())
        c.set_device("cuda:0"); print("set", c.current_device())
        c.synchronize(); c.synchronize(1)
        for bad in (5, "cuda:7"):
            try:
                c.set_device(bad)
            except RuntimeError as e:
                print(type(e).__name__, e)
        try:
            c.get_device_name("cpu")
        except ValueError as e:
            print(type(e).__name__, e)
        """,
        C10C_CUDA_DRIVER=str(stub),
    )
    assert out.splitlines() == [
        "True 2 12080",
        "0 libc10c stand-in GPU 1 (1073741824, 1073741824)",
        "inside 1 libc10c stand-in GPU 1",
        "other thread 0",
        "after 0",
        "set 1",
        "set 0",
        "C10RuntimeError CUDA error: invalid device ordinal",
        "C10RuntimeError CUDA error: invalid device ordinal",
        "C10ValueError Expected a cuda device, but got: cpu",
    ]


def test_streams_and_events_through_the_stand_in(stub):
    out = run(
        """
        import ctypes, os
        import pyc10
        c = pyc10.cuda
        driver = ctypes.CDLL(os.environ["C10C_CUDA_DRIVER"])
        driver.c10c_stub_enqueue.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
        driver.c10c_stub_advance.argtypes = [ctypes.c_uint64]
        s, h = c.Stream(), c.Stream(priority=-1, device=1)
        print(s.stream_id, h.stream_id, s.priority, h.priority, h.device, s == s, s != h)
        cur = c.current_stream()
        print(cur.stream_id, c.default_stream(1).stream_id, cur == c.default_stream())
        with c.stream(h):
            print("inside", c.current_device(), c.current_stream() == h)
        after = (c.current_device(), c.current_stream().stream_id, c.current_stream(1).stream_id)
        print("after", *after)
        start, end = c.Event(enable_timing=True), c.Event(enable_timing=True)
        start.record(s)
        driver.c10c_stub_enqueue(s.cuda_stream, 7)  # 7 ms of work on s
        end.record(s)
        print(s.query(), end.query())
        try:
            start.elapsed_time(end)
        except RuntimeError as e:
            print(type(e).__name__, e)
        other = c.Stream()
        other.wait_event(end)
        print(other.query())
        end.synchronize()
        print(end.query(), other.query(), start.elapsed_time(end))
        for bad in (lambda: c.Event().elapsed_time(c.Event()),
                    lambda: c.Event(enable_timing=True).elapsed_time(end)):
            try:
                bad()
            except ValueError as e:
                print(type(e).__name__, e)
        try:
            start.record(h)
        except RuntimeError as e:
            print(type(e).__name__, e)
        """,
        C10C_CUDA_DRIVER=str(stub),
    )
    assert out.splitlines() == [
        "3 5 0 -1 cuda:1 True True",
        "0 0 True",
        "inside 1 True",
        "after 0 0 0",
        "False False",
        "C10RuntimeError Both events must be completed before calculating elapsed time.",
        "False",
        "True True 7.0",
        "C10ValueError Both events must be created with argument 'enable_timing=True'.",
        "C10ValueError Both events must be recorded before calculating elapsed time.",
        "C10RuntimeError Event device 0 does not match recording stream's device 1.",
    ]


def test_cuda_tensors_through_the_stand_in(stub):
    strided = torch.arange(6.0).reshape(2, 3)  # the oracle for g[:, ::2].copy_ below
    strided[:, ::2].copy_(torch.zeros(2, 2))
    out = run(
        """
        import numpy as np
        import pyc10
        a = pyc10.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
        g = a.cuda()
        print(g.device, g.is_cuda, g.cpu().tolist(), g.cuda() is g, a.cpu() is a)
        print(repr(g).replace(chr(10), " "))
        h = a.t().to("cuda:1")  # a non-contiguous source arranged on the host
        print(h.device, h.stride(), h.tolist(), h[2, 1].item())
        z = pyc10.zeros(2, 2, device="cuda")
        z.copy_(pyc10.ones(2, 2))
        z[0].fill_(5.0)
        print(z.tolist(), pyc10.empty(3, device="cuda:1").device)
        try:
            g.numpy()
        except TypeError as e:
            print(type(e).__name__)
        print(g.half().tolist() == a.tolist(), g.to(pyc10.int64).device, g.int().dtype)
        g[:, ::2].copy_(pyc10.zeros(2, 2))  # a strided CUDA view, through its span on the host
        print(g.tolist(), g[:, 1:].clone().tolist())
        g.copy_(a)
        g.record_stream(pyc10.cuda.Stream())  # held back once freed, until that stream is done
        try:
            a.record_stream(pyc10.cuda.Stream())
        except ValueError as e:
            print(type(e).__name__)
        back = pyc10.from_dlpack(g.__dlpack__(max_version=(1, 0)))
        print(g.__dlpack_device__(), back.device, back.data_ptr() == g.data_ptr())
        del back
        stats = pyc10.memory.stats("cuda")
        print(stats["allocated_bytes.all.current"], stats["reserved_bytes.all.current"])
        print(pyc10.cuda.memory_allocated(), pyc10.cuda.memory_reserved("cuda:1"))
        del a, g, z
        import gc
        gc.collect()  # exceptions caught above may hold frames (and views) in cycles
        pyc10.cuda.empty_cache()
        print(pyc10.cuda.memory_reserved(), pyc10.cuda.max_memory_allocated(0))
        pyc10.cuda.reset_peak_memory_stats()
        print(pyc10.cuda.max_memory_allocated(), "Active memory" in pyc10.cuda.memory_summary(1))
        pyc10.cuda.set_allocator_settings("max_split_size_mb:64")
        print(pyc10.cuda.memory_stats()["max_split_size"])
        pyc10.cuda.set_per_process_memory_fraction(0.001)
        try:
            pyc10.empty(1 << 20, device="cuda")
        except MemoryError as e:
            print(type(e).__name__)
        pyc10.cuda.set_per_process_memory_fraction(1.0)
        try:
            pyc10.cuda.set_per_process_memory_fraction(2.0)
        except ValueError as e:
            print(type(e).__name__)
        for bad in (
            "max_split_size_mb:8",
            "garbage_collection_threshold:1.0",
            "pinned_num_register_threads:2",
        ):
            try:
                pyc10.cuda.set_allocator_settings(bad)
            except (ValueError, NotImplementedError) as e:
                print(type(e).__name__)
        """,
        C10C_CUDA_DRIVER=str(stub),
    )
    assert (
        out.splitlines()
        == [
            "cuda:0 True [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] True True",
            "tensor([[0., 1., 2.],         [3., 4., 5.]], device='cuda:0')",
            "cuda:1 (1, 3) [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]] 5.0",
            "[[5.0, 5.0], [1.0, 1.0]] cuda:1",
            "C10TypeError",
            "True cuda:0 pyc10.int32",  # conversions on a device go through the host
            f"{strided.tolist()} {strided[:, 1:].clone().tolist()}",
            "C10ValueError",
            "(2, 0) cuda:0 True",
            "1024 2097152",  # g and z: two 512-byte blocks of one small segment on device 0
            "1024 2097152",  # ... and h's block on device 1
            "0 1536",  # the peak: g, z and the clone of a view of g
            "0 True",
            "67108864",
            "OutOfMemoryError",  # torch.cuda.OutOfMemoryError's counterpart, a MemoryError too
            "C10ValueError",
            "C10ValueError",
            "C10ValueError",
            "C10NotImplementedError",
        ]
    )


def test_values_read_back_wait_for_the_current_stream(stub):
    # ATen's copy_ (Copy.cu copy_kernel_cuda, memcpy_and_sync): zeros/clone are queued on the
    # current stream, reading values back (item, tolist, cpu) waits for that stream's work
    out = run(
        """
        import ctypes, os
        import pyc10
        c = pyc10.cuda
        driver = ctypes.CDLL(os.environ["C10C_CUDA_DRIVER"])
        driver.c10c_stub_enqueue.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
        driver.c10c_stub_stream_busy.argtypes = [ctypes.c_void_p]
        driver.c10c_stub_stream_busy.restype = ctypes.c_uint64
        driver.c10c_stub_now.restype = ctypes.c_uint64
        driver.c10c_stub_set_copy_ticks.argtypes = [ctypes.c_uint64]
        driver.c10c_stub_touch.argtypes = [ctypes.c_uint64, ctypes.c_size_t, ctypes.c_void_p,
                                           ctypes.c_int]
        driver.c10c_stub_set_copy_ticks(3)
        s = c.Stream()
        with c.stream(s):
            a = pyc10.zeros(4, device="cuda")
            b = a.clone()
            queued = driver.c10c_stub_stream_busy(s.cuda_stream)
            print(queued > driver.c10c_stub_now())  # queued, not waited for
            driver.c10c_stub_touch(b.data_ptr(), 16, s.cuda_stream, 0)  # a kernel reading b
            for read in (lambda: b.tolist(), lambda: b[1].item(), lambda: b.cpu().tolist()):
                driver.c10c_stub_enqueue(s.cuda_stream, 5)
                queued = driver.c10c_stub_stream_busy(s.cuda_stream)
                value = read()
                print(value, driver.c10c_stub_now() >= queued)
        print(driver.c10c_stub_races())
        """,
        C10C_CUDA_DRIVER=str(stub),
    )
    assert out.splitlines() == [
        "True",
        "[0.0, 0.0, 0.0, 0.0] True",
        "0.0 True",
        "[0.0, 0.0, 0.0, 0.0] True",
        "0",
    ]


def test_snapshots_array_interface_and_dlpack_streams(stub):
    out = run(
        """
        import ctypes, os
        import pyc10
        c = pyc10.cuda
        driver = ctypes.CDLL(os.environ["C10C_CUDA_DRIVER"])
        driver.c10c_stub_enqueue.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
        driver.c10c_stub_stream_busy.argtypes = [ctypes.c_void_p]
        driver.c10c_stub_stream_busy.restype = ctypes.c_uint64
        c._record_memory_history(max_entries=100)
        a = pyc10.zeros(3, 4, device="cuda")
        segments = c.memory_snapshot()
        s0 = segments[0]
        print(len(segments), s0["segment_type"], s0["total_size"], s0["allocated_size"],
              s0["requested_size"], [b["state"] for b in s0["blocks"]])
        print([e["action"] for e in c._snapshot()["device_traces"][0]])
        cai = a.__cuda_array_interface__
        print(cai["typestr"], cai["shape"], cai["strides"], cai["data"] == (a.data_ptr(), False),
              cai["version"], cai["stream"])
        cpu = pyc10.zeros(2)
        print(a.t().__cuda_array_interface__["strides"], hasattr(cpu, "__cuda_array_interface__"))
        print(a.type(), pyc10.zeros(2, dtype=pyc10.int64).type())
        # __dlpack__(stream=1): the consumer's (default) stream waits for the current stream
        s = c.Stream()
        with c.stream(s):
            driver.c10c_stub_enqueue(s.cuda_stream, 5)
            print(a.__cuda_array_interface__["stream"] == s.cuda_stream)
            a.__dlpack__(stream=1)
            busy = driver.c10c_stub_stream_busy
            print(busy(None) >= busy(s.cuda_stream) > 0)
            for bad in (2, 0, "x"):
                try:
                    a.__dlpack__(stream=bad)
                except (BufferError, AssertionError, TypeError) as e:
                    print(type(e).__name__, e)
        class Producer:  # a CUDA producer that records the stream it is told
            def __init__(self, t):
                self.t, self.streams = t, []

            def __dlpack_device__(self):
                return self.t.__dlpack_device__()

            def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
                self.streams.append(stream)
                return self.t.__dlpack__(stream=stream, max_version=max_version)

        p = Producer(a)
        x = pyc10.from_dlpack(p)
        with c.stream(s):
            y = pyc10.from_dlpack(p, device="cuda:0")
        print(p.streams == [1, s.cuda_stream], x.data_ptr() == y.data_ptr() == a.data_ptr())
        c.set_allocator_settings("expandable_segments:True")
        b = pyc10.empty(30 << 20, dtype=pyc10.uint8, device="cuda")
        print(sorted(x["is_expandable"] for x in c.memory_snapshot()))
        print(c._snapshot()["device_traces"][0][-2:][0]["action"])
        c._record_memory_history(None)
        snapshot = c._snapshot()
        print(snapshot["device_traces"], snapshot["allocator_settings"]["expandable_segments"])
        """,
        C10C_CUDA_DRIVER=str(stub),
    )
    assert out.splitlines() == [
        "1 small 2097152 512 48 ['active_allocated', 'inactive']",
        "['segment_alloc', 'alloc']",
        "<f4 (3, 4) None True 3 1",  # the legacy default stream is 1
        "(4, 16) False",  # torch's: strides in bytes, no attribute off CUDA
        "torch.cuda.FloatTensor torch.LongTensor",
        "True",
        "True",
        "C10BufferError per-thread default stream is not supported.",
        "AssertionError unsupported stream on CUDA: 0.",
        "C10TypeError stream must be ``int`` or ``none``",
        "True True",  # from_dlpack tells a CUDA producer its current stream (1: the default)
        "[False, True]",
        "segment_map",
        "[[], []] True",
    ]


def test_torch_cuda_names_through_the_stand_in(stub):
    """The names and argument rules taken from torch.cuda, with a driver (the stand-in)."""
    out = run(
        """
        import warnings
        import pyc10
        c = pyc10.cuda
        print("before", c.is_initialized(), c.memory_stats(), c.memory_allocated(), c.empty_cache())
        print("available", c.is_available(), c.is_initialized())
        stats = c.memory_stats()
        nested = c.memory_stats_as_nested_dict()
        print(type(stats).__name__, list(stats) == sorted(stats),
              nested["allocated_bytes"]["all"]["current"] == stats["allocated_bytes.all.current"],
              nested["max_split_size"] == stats["max_split_size"],
              nested["oversize_segments"]["peak"] == stats["oversize_segments.peak"])
        print(c.memory.memory_stats is c.memory_stats, c.mem_get_info("cuda") == c.mem_get_info(0))
        for bad in (lambda: c.set_device(None), lambda: c.memory_stats("cpu"),
                    lambda: c.set_per_process_memory_fraction(1),
                    lambda: c.memory._record_memory_history("bad"),
                    lambda: c.memory._record_memory_history(context="x"),
                    lambda: c.memory._record_memory_history(stacks="cpp"),
                    lambda: c.memory._record_memory_history(skip_actions=["nope"]),
                    lambda: c.memory_snapshot(mempool_id="x"),
                    lambda: c.Event().ipc_handle()):
            try:
                bad()
            except (ValueError, TypeError, RuntimeError, NotImplementedError) as e:
                print(type(e).__name__, e)
        d = c.device(1)
        with d:
            print("device", d.idx, d.prev_idx, c.current_device())
        with c.device(None), c.device("cuda"):
            print("current", c.current_device())
        c.set_stream(None)
        with c.stream(None):
            pass
        s = c.Stream(1)
        for ev in (c.Event(interprocess=True), c.Event(blocking=True), c.Event(external=True),
                   c.Event(True, True, False, False)):
            ev.record(s)
            ev.synchronize()
        print("events", ev.query())
        summary = c.memory_summary(abbreviated=True)
        print("from large pool" in summary, "Active memory" in summary,
              "from large pool" in c.memory_summary(0))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c.reset_max_memory_allocated()
            c.memory_cached()
            c.memory._set_allocator_settings("max_split_size_mb:64")
        print([w.category.__name__ for w in caught], c.memory_stats()["max_split_size"])
        c.memory._record_memory_history("state")
        a = pyc10.zeros(4, device="cuda")
        del a
        print("state", len(c.memory._snapshot()["device_traces"][0]))
        c.memory._record_memory_history(max_entries=100, skip_actions=["free_requested"])
        a = pyc10.zeros(4, device="cuda")
        del a
        print("skip", [e["action"] for e in c.memory._snapshot()["device_traces"][0]])
        c.memory._record_memory_history(clear_history=True, max_entries=100)
        print("cleared", c.memory._snapshot()["device_traces"][0])
        c.memory._record_memory_history(True, trace_alloc_max_entries=3)
        for _ in range(3):
            a = pyc10.zeros(4, device="cuda")
            del a
        print("legacy", len(c.memory._snapshot()["device_traces"][0]))
        c.memory._record_memory_history(False)
        print("off", c.memory._snapshot()["device_traces"][0])
        """,
        C10C_CUDA_DRIVER=str(stub),
    )
    assert out.splitlines() == [
        "before False OrderedDict() 0 None",  # torch's answers before CUDA is initialized
        "available True True",  # is_available() loads the driver: it initializes here
        "OrderedDict True True True True",
        "True True",
        "C10ValueError Expected a torch.device with a specified index or an integer, but got:None",
        "C10ValueError Expected a cuda device, but got: cpu",
        "C10TypeError Invalid type for fraction argument, must be `float`",
        "C10RuntimeError expected state to be 'state', 'all', or None",
        "C10RuntimeError expected context to be 'state', 'alloc', 'all', or None",
        "C10RuntimeError expected stacks to be 'python', or 'all'",
        "C10RuntimeError Unknown action in skip_actions: 'nope' (one of alloc, free_completed, "
        "free_requested, oom, segment_alloc, segment_free, segment_map, segment_unmap, snapshot)",
        "C10TypeError mempool_id must be a tuple of two ints, not 'x'",
        # an event made without interprocess=True: the driver refuses its handle
        "C10RuntimeError CUDA driver error: CUDA_ERROR_INVALID_VALUE (invalid argument) in "
        "cuIpcGetEventHandle",
        "device 1 0 1",
        "current 0",
        "events True",
        "False True True",
        "['FutureWarning', 'FutureWarning', 'FutureWarning'] 67108864",
        "state 1",  # torch keeps one entry for "state"
        "skip ['alloc', 'free_completed']",
        "cleared []",
        "legacy 3",
        "off []",
    ]


def test_advanced_indexing_of_cuda_tensors_through_the_stand_in(stub):
    # staged through the host (advindex.c): the same answers as torch on the CPU
    t = torch.arange(24.0).reshape(4, 6)
    got = t[[0, 2]].tolist(), t[:, [1, -1]].tolist(), t[t > 20].tolist()
    w = t.clone()
    w[[1, 3], [0, 5]] = torch.tensor([-1.0, -2.0])
    w[w > 21] = 0.0
    out = run(
        """
        import numpy as np
        import pyc10
        a = pyc10.from_numpy(np.arange(24, dtype=np.float32).reshape(4, 6))
        g = a.cuda()
        mask = pyc10.from_numpy(np.arange(24).reshape(4, 6) > 20).cuda()
        r = g[[0, 2]]
        print(r.device, r.tolist())
        print(g[:, [1, -1]].tolist(), g[mask].tolist(), g[mask].device)
        g[[1, 3], [0, 5]] = pyc10.tensor([-1.0, -2.0], device="cuda")
        g[pyc10.from_numpy(np.asarray(g.cpu()) > 21).cuda()] = 0.0
        print(g.tolist())
        try:
            g[[0, 9]]
        except IndexError as e:
            print(type(e).__name__, e)
        """,
        C10C_CUDA_DRIVER=str(stub),
    )
    assert out.splitlines() == [
        f"cuda:0 {got[0]}",
        f"{got[1]} {got[2]} cuda:0",
        f"{w.tolist()}",
        "C10IndexError index 9 is out of bounds for dimension 0 with size 4",
    ]


def test_share_memory_of_a_cuda_tensor_is_a_no_op_as_torchs(stub):
    out = run(
        """
        import pyc10
        g = pyc10.zeros(4, device="cuda")
        p = g.data_ptr()
        print(g.is_shared(), g.share_memory_() is g, g.data_ptr() == p, g.is_shared())
        """,
        C10C_CUDA_DRIVER=str(stub),
    )
    assert out.split() == ["True", "True", "True", "True"]


def test_the_driver_version_is_reported_when_cuinit_fails(stub):
    # torch._C._cuda_getDriverVersion answers without a device (cudaDriverGetVersion needs no
    # cuInit); so does pyc10.cuda.driver_version, while CUDA stays unavailable
    out = run(
        """
        import pyc10
        c = pyc10.cuda
        print(c.is_available(), c.driver_version())
        try:
            c.current_device()
        except RuntimeError as e:
            print(type(e).__name__, e)
        """,
        C10C_CUDA_DRIVER=str(stub),
        C10C_STUB_INIT_ERROR="3",
    )
    lines = out.splitlines()
    assert lines[0] == "False 12080"
    assert lines[1].startswith("C10RuntimeError cuInit failed: CUDA_ERROR_NOT_INITIALIZED")


def test_a_thread_that_only_uses_cuda1_makes_no_context_on_device_0(stub):
    # c10's MaybeSetDevice: torch.cuda.current_device() stays 0 on the worker, as torch's, but
    # only device 1's primary context is retained (the stand-in counts retains per device)
    out = run(
        f"""
        import ctypes, threading
        import pyc10
        c = pyc10.cuda
        retains = ctypes.CDLL({str(stub)!r}).c10c_stub_retains
        def work():
            x = pyc10.tensor([0.0, 1.0, 2.0, 3.0, 4.0, 5.0]).to("cuda:1")
            y = x.clone().cpu()
            with c.device(1):
                c.synchronize()
            s = c.Stream(device=1)
            with c.stream(s):
                z = pyc10.zeros(3, device="cuda:1")
            s.synchronize()
            print(y.tolist(), z.tolist(), c.mem_get_info(1)[1] > 0, c.current_device())
        t = threading.Thread(target=work)
        t.start(); t.join()
        print(retains(0), retains(1))
        print(c.current_device(), retains(0))
        """,
        C10C_CUDA_DRIVER=str(stub),
    )
    lines = out.splitlines()
    assert lines[0] == "[0.0, 1.0, 2.0, 3.0, 4.0, 5.0] [0.0, 0.0, 0.0] True 0"
    assert lines[1] == "0 1"
    assert lines[2] == "0 0"  # asking the current device makes no context
