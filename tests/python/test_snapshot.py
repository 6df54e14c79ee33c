"""pyc10.cuda.memory._dump_snapshot over the stand-in driver: a pickle that torch's own snapshot
tools (torch.cuda._memory_viz, pure Python in the CPU wheel) read, as they read
torch.cuda.memory._dump_snapshot's."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from torch.cuda import _memory_viz

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dumped(stub: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A snapshot dumped after allocations, frees, an empty_cache and an out-of-memory error."""
    path = tmp_path_factory.mktemp("snap") / "dump_snapshot.pickle"
    script = f"""
        import ctypes, os
        import pyc10
        c = pyc10.cuda
        driver = ctypes.CDLL(os.environ["C10C_CUDA_DRIVER"])
        driver.c10c_stub_set_capacity.argtypes = [ctypes.c_size_t]
        driver.c10c_stub_set_capacity(1 << 30)
        c.memory._record_memory_history(max_entries=1000)
        a = pyc10.empty(1000, dtype=pyc10.uint8, device="cuda")
        b = pyc10.empty(3 << 20, dtype=pyc10.uint8, device="cuda")
        d = pyc10.empty(25 << 20, dtype=pyc10.uint8, device="cuda")
        del b
        c.empty_cache()
        try:
            pyc10.empty(2 << 30, dtype=pyc10.uint8, device="cuda")
        except Exception as e:
            print("oom" if "MemoryError" in type(e).__name__ else repr(e))
        c.memory._dump_snapshot({str(path)!r})
    """
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        env={**os.environ, "C10C_CUDA_DRIVER": str(stub)},
        cwd="/",
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["oom"]
    return path


def load(path: Path) -> dict:
    with open(path, "rb") as f:
        return pickle.load(f)  # written by this test


def test_the_pickle_holds_torchs_fields(dumped: Path) -> None:
    s = load(dumped)
    assert set(s) >= {"segments", "device_traces"}
    seg_keys = {"device", "address", "total_size", "allocated_size", "active_size"}
    seg_keys |= {"requested_size", "stream", "segment_type", "is_expandable", "frames", "blocks"}
    for seg in s["segments"]:
        assert set(seg) >= seg_keys
        for b in seg["blocks"]:
            assert set(b) >= {"address", "size", "requested_size", "state", "frames"}
    actions = [e["action"] for e in s["device_traces"][0]]
    assert actions.count("alloc") == 3 and "segment_free" in actions and actions[-1] == "oom"
    for e in s["device_traces"][0][:-1]:
        assert set(e) >= {"action", "addr", "size", "stream", "time_us", "frames"}
    oom = s["device_traces"][0][-1]  # as torch's: the free bytes instead of an address
    assert set(oom) >= {"action", "device_free", "size", "stream", "time_us", "frames"}
    assert oom["size"] == 2 << 30 and oom["device_free"] > 0 and "addr" not in oom


def test_memory_viz_reads_it(dumped: Path) -> None:
    s = load(dumped)
    assert "segments: 2" in _memory_viz.segsum(s)
    trace = _memory_viz.trace(s)
    assert "cudaMalloc" in trace and "raise OutOfMemoryError" in trace
    assert "<gaps>" in "".join(_memory_viz.segments(s, format_flamegraph=lambda lines: lines))
    assert "stream_0" in "".join(_memory_viz.memory(s, format_flamegraph=lambda lines: lines))
    for html in (
        _memory_viz.trace_plot(s),
        _memory_viz.trace_plot(s, plot_segments=True, filter_freed=True),
        _memory_viz.segment_plot(s),
    ):
        assert html.startswith("<!DOCTYPE html>") or "snapshot.pickle" in html


@pytest.mark.parametrize("action", ["stats", "trace"])
def test_memory_viz_command_line_reads_it(dumped: Path, action: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "torch.cuda._memory_viz", action, str(dumped)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert ("segments: 2" if action == "stats" else "raise OutOfMemoryError") in proc.stdout


def test_dump_snapshot_without_cuda_writes_an_empty_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "empty.pickle"
    script = f"import pyc10; pyc10.cuda.memory._dump_snapshot({str(path)!r})"
    subprocess.run(
        [sys.executable, "-c", script],
        check=True,
        env={**os.environ, "C10C_CUDA_DRIVER": "/nonexistent/libcuda.so.1"},
    )
    assert load(path) == {"segments": [], "device_traces": []}
    assert "segments: 0" in _memory_viz.segsum(load(path))


def test_pyc10_replay_reproduces_the_allocator_that_dumped_it(dumped: Path) -> None:
    # libc10c's own snapshot replayed on the simulated device: the same device allocations,
    # peak and out-of-memory failure as the stand-in driver's run that recorded it
    proc = subprocess.run(
        [sys.executable, "-m", "pyc10.replay", str(dumped), "--json", "--settings", ""],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    pt, (mine,) = out["pytorch"], out["columns"]
    assert (pt["device_mallocs"], pt["device_frees"], pt["ooms"]) == (3, 1, 1)
    for key in ("device_mallocs", "device_frees", "reserved_at_start", "peak_reserved", "ooms"):
        assert mine[key] == pt[key], key
    assert mine["oom"]["expected"] and mine["capacity"] == 1 << 30


def test_history_events_carry_the_sizes_torch_records(stub: Path, tmp_path: Path) -> None:
    # torch's CUDACachingAllocator records the requested size for alloc, free_requested and
    # free_completed, and the segment's size for segment_alloc/segment_free; the blocks list
    # has both the block's size and the requested one. A 1-byte tensor is a 512 B block of a
    # 2 MiB segment; 20,480,000 B is a whole 20 MiB segment (the rest is too small to split).
    path = tmp_path / "sizes.pickle"
    script = f"""
        import pyc10
        c = pyc10.cuda
        c.memory._record_memory_history(max_entries=100)
        a = pyc10.empty(1, dtype=pyc10.uint8, device="cuda")
        b = pyc10.empty(20_480_000, dtype=pyc10.uint8, device="cuda")
        keep = pyc10.empty(1000, dtype=pyc10.uint8, device="cuda")
        del a, b
        c.memory._dump_snapshot({str(path)!r})
        c.empty_cache()
        c.memory._dump_snapshot({str(path) + "2"!r})
        del keep
    """
    subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        check=True,
        env={**os.environ, "C10C_CUDA_DRIVER": str(stub)},
        cwd="/",
    )
    events = [(e["action"], e["size"]) for e in load(path)["device_traces"][0]]
    assert events == [
        ("segment_alloc", 2 << 20),
        ("alloc", 1),
        ("segment_alloc", 20 << 20),
        ("alloc", 20_480_000),
        ("alloc", 1000),
        ("free_requested", 1),
        ("free_completed", 1),
        ("free_requested", 20_480_000),
        ("free_completed", 20_480_000),
    ]
    live = [b for seg in load(path)["segments"] for b in seg["blocks"]]
    assert {(b["size"], b["requested_size"]) for b in live if b["state"] == "active_allocated"} == {
        (1024, 1000)
    }
    after = load(Path(str(path) + "2"))["device_traces"][0][len(events) :]
    assert [(e["action"], e["size"]) for e in after] == [("segment_free", 20 << 20)]
