"""The trace replayer's report (bench/replay_trace.c) on small hand-made traces.

Totals are reported whether or not the trace marks steps, per-step figures only when it does;
a replay that runs out of memory reports its figures up to the failure and the failing
allocation's own number; a pointer allocated again while live, or freed twice, is refused; frees
of pointers allocated before the log began are counted. Expected figures follow PyTorch's
caching allocator (c10/cuda/CUDACachingAllocator.cpp): a request of 1-10 MiB gets a 20 MiB
segment, a larger one its size rounded to 2 MiB, at most 1 MiB a 2 MiB segment; a cached block
splits when more than 1 MiB would remain.

    python bench/check_replay_report.py [--build build/tests]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

MiB = 1 << 20
TESTS: list[Callable[[], None]] = []
args = argparse.Namespace()


def test(fn: Callable[[], None]) -> Callable[[], None]:
    """Registers a test."""
    TESTS.append(fn)
    return fn


def replay(csv: str, *flags: str) -> tuple[int, dict | None, str]:
    """Replays the trace text; (exit status, report or None, stderr)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.csv"
        path.write_text(csv)
        # "trace.csv" among the flags (--plan-from trace.csv) is the trace itself
        flags = tuple(str(path) if f == "trace.csv" else f for f in flags)
        env = dict(os.environ, C10C_CUDA_DRIVER=str(args.stub), C10C_STUB_FAKE="1")
        for name in ("C10C_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "C10C_STUB_ADDRESS_ORDER"):
            env.pop(name, None)
        out = subprocess.run(
            [str(args.replay), str(path), "--no-search", "--repeat", "1", *flags],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    report = json.loads(out.stdout) if out.stdout.strip() else None
    return out.returncode, report, out.stderr


def expect(report: dict, **figures: object) -> None:
    """Each named figure of the report equals the given value."""
    for key, want in figures.items():
        got = report.get(key, "<missing>")
        assert got == want, f"{key}: {got!r}, expected {want!r}"


@test
def totals_are_reported_without_step_markers() -> None:
    _, r, _ = replay(
        "Action,Pointer,Size\n"
        f"allocate,0x1,{4 * MiB}\n"  # a 20 MiB segment
        "free,0x1,0\n"
        f"allocate,0x2,{4 * MiB}\n"  # from the cache, split
        f"allocate,0x3,{4 * MiB}\n"  # from the rest
    )
    assert r is not None
    expect(r, ok=True, steps=0, device_mallocs=1, device_frees=0, allocations_replayed=3)
    expect(r, hit_rate=round(2 / 3, 6), peak_reserved=20 * MiB, peak_allocated=8 * MiB)
    expect(r, peak_live_requested=8 * MiB, unknown_frees=0, failure=None)
    # per-step figures need steps
    expect(r, per_step=None, steady_steps=0, device_mallocs_per_step=None)
    expect(r, device_frees_per_step=None, steady_hit_rate=None, address_stability=None)
    assert isinstance(r["host_ns_p50"], float), "host times are measured over every allocation"


@test
def marked_steps_have_their_own_figures() -> None:
    _, r, _ = replay(
        "Action,Pointer,Size,Step\n"
        "step_begin,0,0,0\n"
        f"allocate,0x1,{4 * MiB}\n"  # a 20 MiB segment
        "free,0x1,0\n"
        "step_begin,0,0,1\n"
        f"allocate,0x2,{4 * MiB}\n"  # cached
        "free,0x2,0\n"
        "step_begin,0,0,2\n"
        f"allocate,0x3,{24 * MiB}\n"  # a 24 MiB segment
        "free,0x3,0\n"
        "step_begin,0,0,3\n"
        f"allocate,0x4,{24 * MiB}\n"  # cached, at the same address
        "free,0x4,0\n"
    )
    assert r is not None
    expect(r, ok=True, steps=4, device_mallocs=2, allocations_replayed=4, hit_rate=0.5)
    expect(r, steady_steps=2, device_mallocs_per_step=0.5, device_frees_per_step=0.0)
    expect(r, steady_hit_rate=0.5, address_stability=1.0, peak_reserved=44 * MiB)
    steps = [(s["step"], s["device_mallocs"], s["allocations"], s["hits"]) for s in r["per_step"]]
    assert steps == [(0, 1, 1, 0), (1, 0, 1, 1), (2, 1, 1, 0), (3, 0, 1, 1)], steps
    two = r["per_step"][2]
    assert (two["reserved_at_begin"], two["peak_reserved"]) == (20 * MiB, 44 * MiB), two
    assert two["peak_live_requested"] == 24 * MiB, two


OOM_TRACE = (
    "Action,Pointer,Size,Step\n"  # line 1
    "step_begin,0,0,0\n"
    f"allocate,0x1,{8 * MiB}\n"  # a 20 MiB segment
    f"allocate,0x2,{8 * MiB}\n"  # its rest
    "free,0x2,0\n"  # line 5
    "step_begin,0,0,2\n"
    f"allocate,0x3,{8 * MiB}\n"  # cached
    f"allocate,0x4,{16 * MiB}\n"  # a 16 MiB segment: 36 MiB reserved
    f"allocate,0x5,{30 * MiB}\n"  # line 9: 66 MiB > 50 MiB, nothing to release
    "allocate,0x6,1024\n"  # a 2 MiB segment
    "free,0x5,0\n"
)


@test
def an_out_of_memory_replay_reports_its_figures_up_to_the_failure() -> None:
    status, r, err = replay(OOM_TRACE, "--capacity", str(50 * MiB))
    assert status == 1 and r is not None, (status, err)
    expect(r, ok=False, device_mallocs=2, device_frees=0, allocations_replayed=4)
    expect(r, peak_reserved=36 * MiB, peak_allocated=32 * MiB, peak_live_requested=32 * MiB)
    expect(r, hit_rate=0.5, ooms=1, retries=1, min_capacity=None, host_ns_p50=None)
    f = r["failure"]
    # the fifth allocation of the trace (the ninth event), the third of step 2
    assert (f["allocation"], f["allocation_in_step"], f["step"], f["line"]) == (5, 3, 2, 9), f
    assert (f["size"], f["device_free"], f["failures"]) == (30 * MiB, 14 * MiB, 1), f
    assert "Tried to allocate 30.00 MiB" in f["message"], f
    assert "line 9: allocation 5 (3 of step 2)" in err, err
    assert r["per_step"][1]["device_mallocs"] == 1, r["per_step"]


@test
def keep_going_replays_past_the_failure() -> None:
    status, r, _ = replay(OOM_TRACE, "--capacity", str(50 * MiB), "--keep-going")
    assert status == 1 and r is not None
    expect(r, ok=False, device_mallocs=3, allocations_replayed=5, unknown_frees=0)
    assert (r["failure"]["allocation"], r["failure"]["failures"]) == (5, 1), r["failure"]


@test
def a_pointer_allocated_again_while_live_is_refused() -> None:
    status, r, err = replay("Action,Pointer,Size\nallocate,0x10,1024\nallocate,0x10,2048\n")
    assert status == 1 and r is None, (status, r)
    assert (
        "line 3: Pointer 0x10 is allocated again while live (allocated at line 2, not freed "
        "since)" in err
    ), err


@test
def a_pointer_freed_twice_is_refused() -> None:
    status, r, err = replay("Action,Pointer,Size\nallocate,0x10,1024\nfree,0x10,0\nfree,0x10,0\n")
    assert status == 1 and r is None, (status, r)
    assert "line 4: Pointer 0x10 is freed again (freed at line 3" in err, err


@test
def frees_of_pointers_from_before_the_log_are_counted() -> None:
    status, r, err = replay(
        "Action,Pointer,Size\nfree,0xabc,0\nallocate,0x10,1024\nfree,0x10,0\nfree,0xdef,0\n"
    )
    assert status == 0 and r is not None, (status, err)
    expect(r, ok=True, unknown_frees=2, allocations_replayed=1, device_mallocs=1)
    assert "2 frees of pointers the log never allocated" in err, err


@test
def an_allocation_beyond_a_32_bit_address_space_is_refused_there() -> None:
    status, r, err = replay("Action,Pointer,Size\nallocate,0x10,3293642752\nfree,0x10,0\n")
    if args.pointer_bits == 32:
        assert status == 1 and r is None, (status, r)
        assert (
            "line 2: an allocation of 3293642752 bytes is beyond this build's address space "
            "(at most 2147483647 bytes)" in err
        ), err
    else:
        assert status == 0 and r is not None, (status, err)
        expect(r, ok=True, allocations_replayed=1, device_mallocs=1)


@test
def pointers_zero_and_all_ones_are_ordinary_ids() -> None:
    _, r, _ = replay(
        "Action,Pointer,Size\n"
        f"allocate,0x0,{20 * MiB}\n"
        f"allocate,0xffffffffffffffff,{20 * MiB}\n"
        "free,0x0,0\n"
        "free,0xffffffffffffffff,0\n"
        f"allocate,0x1,{20 * MiB}\n"  # one of the two freed segments
    )
    assert r is not None
    expect(r, ok=True, device_mallocs=2, hit_rate=round(1 / 3, 6), peak_allocated=40 * MiB)


@test
def many_live_pointers() -> None:
    n = 5000  # past the live table's first size
    rows = [f"allocate,{i + 1:#x},512" for i in range(n)] + [f"free,{i + 1:#x},0" for i in range(n)]
    rows += [f"allocate,{i + 1:#x},512" for i in range(n)]
    _, r, _ = replay("Action,Pointer,Size\n" + "\n".join(rows) + "\n")
    assert r is not None
    # 4096 blocks of 512 bytes fill a 2 MiB segment: two segments, reused the second time
    expect(r, ok=True, allocations_replayed=2 * n, device_mallocs=2, peak_allocated=n * 512)


STEPS_TRACE = "Action,Pointer,Size,Step\n" + "".join(
    f"step_begin,0x0,0,{step}\n"
    f"allocate,{8 * step + 1:#x},{4 * MiB},{step}\n"
    f"allocate,{8 * step + 2:#x},{30 * MiB},{step}\n"
    f"free,{8 * step + 1:#x},0,{step}\n"
    f"allocate,{8 * step + 3:#x},{2 * MiB},{step}\n"
    f"free,{8 * step + 2:#x},0,{step}\n"
    f"free,{8 * step + 3:#x},0,{step}\n"
    for step in range(4)
)  # four identical steps of 4, 30 and 2 MiB
PLAN_KEYS = {"arena_bytes", "served", "fallbacks", "rebuilds", "drops", "declines",
             "after_plan_from_step",
             "peak_reserved_after_plan",
             "peak_live_requested_after_plan", "utilization_after_plan"}  # fmt: skip


@test
def plan_and_stitching_figures_come_with_their_settings() -> None:
    _, r, _ = replay(STEPS_TRACE)
    assert r is not None and "plan" not in r and "stitching" not in r, r
    _, r, err = replay(STEPS_TRACE, "--config", "planning:True")
    assert r is not None and set(r["plan"]) == PLAN_KEYS, (r, err)
    assert "stitching" not in r
    _, r, err = replay(STEPS_TRACE, "--config", "expandable_segments:True,stitching:True")
    assert r is not None and "plan" not in r, (r, err)
    assert set(r["stitching"]) == {"num_stitches", "peak_stitched_bytes"}, r["stitching"]
    _, r, _ = replay(STEPS_TRACE, "--config", "planning:True,planning:False")
    assert r is not None and "plan" not in r, "the last setting of a key wins"


@test
def online_planning_serves_the_steps_after_the_first() -> None:
    status, r, err = replay(STEPS_TRACE, "--config", "planning:True")
    assert status == 0 and r is not None, (status, err)
    plan = r["plan"]
    assert plan["rebuilds"] >= 1 and plan["served"] > 0, plan
    assert plan["peak_live_requested_after_plan"] == 34 * MiB, plan
    assert plan["utilization_after_plan"] == round(34 * MiB / plan["peak_reserved_after_plan"], 6)


@test
def a_trace_planned_from_itself_is_served_from_its_plan() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TMPDIR"] = tmp  # where the plan file goes, and is removed from
        try:
            status, r, err = replay(STEPS_TRACE, "--plan-from", "trace.csv")
        finally:
            del os.environ["TMPDIR"]
        assert os.listdir(tmp) == [], "the temporary plan file is removed at exit"
    assert status == 0 and r is not None, (status, err)
    assert r["config"].startswith("plan_file:"), r["config"]
    plan = r["plan"]
    assert (plan["served"], plan["fallbacks"], plan["rebuilds"]) == (12, 0, 1), plan
    # 4 + 30 MiB live at most, in a 34 MiB arena (rounded to 2 MiB): nothing else reserved
    assert plan["arena_bytes"] == 34 * MiB and r["peak_reserved"] == 34 * MiB, r
    assert plan["utilization_after_plan"] == 1.0 and r["unsafe_reuses"] == 0


def run_bare(*argv: str) -> subprocess.CompletedProcess[str]:
    """replay_trace with exactly these arguments (no trace added)."""
    env = dict(os.environ, C10C_CUDA_DRIVER=str(args.stub), C10C_STUB_FAKE="1")
    return subprocess.run(
        [str(args.replay), *argv], env=env, capture_output=True, text=True, check=False
    )


@test
def a_refused_command_line_is_one_line_with_the_usage_and_status_2() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace.csv"
        trace.write_text(f"Action,Pointer,Size\nallocate,0x1,{MiB}\n")
        for argv, says in [
            ((str(trace), "--bogus"), "unknown option --bogus"),
            (("--bogus", str(trace)), "unknown option --bogus"),
            ((str(trace), "--capacity", "80GiB"), "--capacity takes a number of bytes, not 80GiB"),
            ((str(trace), "--capacity", "-1"), "--capacity takes a number of bytes, not -1"),
            ((str(trace), "--repeat", "x"), "--repeat takes a count, not x"),
            ((str(trace), "--config"), "option needs a value: --config"),
            ((str(trace), str(trace)), "one trace at a time; also given"),
            ((str(trace), "--plan-from"), "option needs a value: --plan-from"),
        ]:
            out = run_bare(*argv)
            assert out.returncode == 2, (argv, out.returncode, out.stderr)
            assert out.stdout == "", (argv, out.stdout)
            lines = out.stderr.splitlines()
            assert len(lines) == 1 and lines[0].startswith(f"replay_trace: {says}"), out.stderr
            assert "usage: replay_trace TRACE.csv" in lines[0], out.stderr
        missing = run_bare(str(trace), "--plan-from", str(Path(tmp) / "none.csv"))
        assert missing.returncode == 1 and "cannot open" in missing.stderr, missing.stderr
        ok = run_bare(str(trace), "--no-search", "--repeat", "0", "--capacity", str(64 * MiB))
        assert ok.returncode == 0 and json.loads(ok.stdout)["device_mallocs"] == 1, ok.stderr
    usage = run_bare("--help")
    assert usage.returncode == 0 and usage.stdout.startswith("usage: replay_trace"), usage
    none = run_bare()
    assert none.returncode == 2 and none.stderr.startswith("usage: replay_trace"), none


def main() -> int:
    """Runs every test; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = Path(__file__).resolve().parent.parent
    parser.add_argument("--build", default=str(root / "build" / "tests"))
    parser.add_argument("--replay", help="the replay_trace executable (default: in --build)")
    parser.add_argument("--stub", help="the stand-in driver (default: in --build)")
    parser.add_argument(
        "--pointer-bits", type=int, default=64, help="the build's pointer width (32 or 64)"
    )
    parser.parse_args(namespace=args)
    build = Path(args.build)
    args.replay = Path(args.replay or build / "bench" / "replay_trace")
    args.stub = Path(args.stub or build / "tests" / "libc10c_cuda_stub.so")
    failed = 0
    for fn in TESTS:
        try:
            fn()
            print(f"ok   {fn.__name__}")
        except Exception as exc:  # report every test, then fail
            failed += 1
            print(f"FAIL {fn.__name__}: {type(exc).__name__}: {exc}")
    print(f"{len(TESTS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
