"""The CUDA caching allocator's planning (libc10c's, not torch's): pyc10.cuda.memory.step() marks
steps, planning:True serves repeated steps from an offset plan, memory_stats() reports it.

Each case runs in a fresh interpreter over the stand-in driver (tests/cuda_stub/), as the other
CUDA tests do: the driver is loaded once per process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import torch

PLAN_KEYS = [
    "plan.arena_bytes",
    "plan.served",
    "plan.fallbacks",
    "plan.rebuilds",
    "plan.drops",
    "plan.declines",
    "num_stitches",
    "stitched_bytes.current",
    "stitched_bytes.peak",
    "stitched_bytes.allocated",
    "stitched_bytes.freed",
]


def run(stub: Path, script: str, **env: str) -> list[str]:
    """Run script with the stand-in driver in a fresh interpreter; its stdout's lines."""
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        env={**os.environ, "C10C_CUDA_DRIVER": str(stub), **env},
        cwd="/",
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_repeated_steps_are_served_from_the_plan(stub: Path) -> None:
    out = run(
        stub,
        """
        import json
        import pyc10
        c = pyc10.cuda
        c.set_allocator_settings("planning:True")
        for _ in range(4):
            a = pyc10.empty(1 << 20, device="cuda")
            b = pyc10.empty(1 << 18, device="cuda")
            del a
            d = pyc10.empty(1 << 19, device="cuda")
            del b, d
            c.memory.step()
        s = c.memory_stats()
        print(json.dumps({k: v for k, v in s.items() if k.startswith("plan.")}))
        snapshot = c.memory_snapshot()
        print(sorted({seg["segment_type"] for seg in snapshot}))
        """,
    )
    stats = json.loads(out[0])
    assert stats["plan.served"] == 9  # 3 requests in each step after the first
    assert stats["plan.fallbacks"] == 0
    assert stats["plan.rebuilds"] == 1
    assert stats["plan.drops"] == 0
    assert stats["plan.arena_bytes"] == 6 << 20  # float32: 4 MiB and 1 MiB live at once
    assert json.loads(out[1].replace("'", '"')) == ["plan"]


def test_memory_stats_has_torchs_keys_and_the_planning_keys(stub: Path) -> None:
    out = run(
        stub,
        """
        import json
        import pyc10
        x = pyc10.zeros(3, device="cuda")
        print(json.dumps(list(pyc10.cuda.memory_stats())))
        print(json.dumps(sorted(pyc10.memory.stats("cpu"))))
        """,
    )
    keys = json.loads(out[0])
    for key in PLAN_KEYS:
        assert key in keys
    assert keys == sorted(keys)
    assert "plan.served" in json.loads(out[1])  # 0 for allocators without planning
    # torch's own keys are all there (torch answers {} without CUDA; its docstring lists them)
    assert "allocated_bytes.all.current" in keys
    assert "num_device_alloc" in keys
    assert not any(k.startswith("plan.") for k in torch.cuda.memory_stats())


def test_step_checks_its_device_and_needs_cuda(stub: Path) -> None:
    out = run(
        stub,
        """
        import pyc10
        c = pyc10.cuda
        c.memory.step()  # without planning it does nothing
        c.memory.step(0)
        c.memory.step("cuda:1")
        c.memory.step(pyc10.device("cuda", 0))
        print(c.step is c.memory.step, "step" in c.__all__, "step" in c.memory.__all__)
        for bad in (7, "cpu"):
            try:
                c.memory.step(bad)
            except (RuntimeError, ValueError) as e:
                print("ValueError" if isinstance(e, ValueError) else "RuntimeError", e)
        """,
        C10C_STUB_DEVICES="2",
    )
    assert out[0] == "True True True"
    assert out[1] == "RuntimeError CUDA error: invalid device ordinal"
    assert out[2] == "ValueError Expected a cuda device, but got: cpu"


def test_step_without_cuda_is_a_runtime_error() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import pyc10\ntry:\n    pyc10.cuda.memory.step()\n"
            "except RuntimeError as e:\n    print(type(e).__name__)",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "C10C_CUDA_DRIVER": "/nonexistent/libcuda.so.1"},
        cwd="/",
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() in {"C10RuntimeError", "RuntimeError"}


def test_planning_settings_errors_are_value_errors(stub: Path, tmp_path: Path) -> None:
    missing = tmp_path / "missing.plan"
    damaged = tmp_path / "damaged.plan"
    damaged.write_bytes(b"not a plan file at all")
    out = run(
        stub,
        f"""
        import pyc10
        c = pyc10.cuda
        for bad in ("planning:maybe", "plan_file:", "plan_file:{damaged}",
                    "plan_file:{missing}", "stitching:1"):
            try:
                c.set_allocator_settings(bad)
                print("accepted", bad)
            except (RuntimeError, ValueError) as e:
                print("ValueError" if isinstance(e, ValueError) else "RuntimeError")
        c.set_allocator_settings("planning:True,stitching:False")
        c.set_allocator_settings("planning:False")
        print("ok")
        """,
    )
    assert out == ["ValueError", "ValueError", "ValueError", "RuntimeError", "ValueError", "ok"]
