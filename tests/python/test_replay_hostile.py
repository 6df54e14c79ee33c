"""python -m pyc10.replay on hostile snapshots: whatever a field holds, the message is one short
line, and the reader's work grows with the bytes it read, not with how often a pickle refers to
one object (memo references cost a pickle two bytes each)."""

from __future__ import annotations

import contextlib
import gc
import io
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pyc10 import replay

BASE = 1 << 40


def cli(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pyc10.replay", str(path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )


def refused_in_one_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.endswith("\n") and proc.stderr.count("\n") == 1, proc.stderr[-2000:]
    assert len(proc.stderr) < 400, len(proc.stderr)
    return proc.stderr


def snapshot(size: Any) -> dict[str, Any]:
    """One segment, one allocation whose size is the hostile value."""
    event = {"action": "alloc", "addr": BASE, "size": size, "stream": 0, "frames": []}
    segment = {"device": 0, "address": BASE, "total_size": 2 << 20, "stream": 0, "blocks": []}
    return {"segments": [segment], "device_traces": [[event]], "allocator_settings": {}}


def nested(depth: int) -> list[Any]:
    v: list[Any] = []
    for _ in range(depth):
        v = [v]
    return v


HOSTILE: list[tuple[str, Any, str]] = [
    (
        "a million-digit integer",
        lambda: 10**1_000_000 + 7,
        f"int of {(10**1_000_000 + 7).bit_length()} bits",
    ),
    ("a list nested 200,000 deep", None, "list [[[[[[[[[["),
    ("20,000 references to one 1 MiB string", lambda: ["x" * (1 << 20)] * 20_000, "list ['xxxxxx"),
    ("a 1 MiB string", lambda: "y" * (1 << 20), "str 'yyyyyyy"),
    ("a 1 MiB bytes", lambda: b"z" * (1 << 20), "bytes b'zzzzzz"),
    ("a dict with a 1 MiB key", lambda: {"k" * (1 << 20): 1}, "dict {'kkkkk"),
]


@pytest.mark.parametrize(("make", "shown"), [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE])
def test_a_hostile_field_is_described_in_a_short_line(
    tmp_path: Path, make: Any, shown: str
) -> None:
    file = tmp_path / "hostile.pickle"
    file.write_bytes(
        _nested_pickle(200_000) if make is None else pickle.dumps(snapshot(make()), protocol=4)
    )
    t = time.perf_counter()
    err = refused_in_one_line(cli(file))
    assert time.perf_counter() - t < 60
    assert "device 0's trace entry 0's 'size' is " + shown in err, err


def _nested_pickle(depth: int) -> bytes:
    """snapshot(nested(depth)) as pickle bytes, written by hand: pickle.dumps itself recurses."""
    head = pickle.dumps(snapshot("HOLE"), protocol=2)
    hole = pickle.dumps("HOLE", protocol=2)[2:-3]  # the string's opcodes, not its memo put
    assert head.count(hole) == 1
    deep = b"]" * depth + b"a" * (depth - 1)  # EMPTY_LIST x depth, APPEND x (depth - 1)
    return head.replace(hole, deep)


def test_repeated_references_cost_a_budget_not_the_square_of_the_file(tmp_path: Path) -> None:
    # 4,000 references to one trace of 4,000 references to one event: a 16 KB pickle whose
    # objects, counted as a reader walks them, are 16 million
    event = {"action": "alloc", "addr": BASE, "size": 512, "stream": 0}
    trace = [event] * 4000
    s = {"segments": [], "device_traces": [trace] * 4000, "allocator_settings": {}}
    data = pickle.dumps(s, protocol=4)
    assert len(data) < 20_000
    file = tmp_path / "shared.pickle"
    file.write_bytes(data)
    t = time.perf_counter()
    err = refused_in_one_line(cli(file))
    assert time.perf_counter() - t < 10, "the reader's work grew past the bytes it read"
    assert "refers to the same objects over and over" in err, err
    # a shared block list between segments: the same
    seg = {
        "device": 0,
        "address": BASE,
        "total_size": 2 << 20,
        "stream": 0,
        "blocks": [{"size": 512, "address": BASE}] * 4000,
    }
    file.write_bytes(pickle.dumps({"segments": [seg] * 4000, "device_traces": [[]]}, protocol=4))
    assert "refers to the same objects over and over" in refused_in_one_line(cli(file))


def test_a_real_sized_snapshot_stays_within_the_budget(tmp_path: Path) -> None:
    # every object once, as torch writes them: far inside the budget
    events = [
        {"action": "alloc", "addr": BASE + 512 * i, "size": 512, "stream": 0, "frames": []}
        for i in range(20_000)
    ]
    s = {"segments": [], "device_traces": [events], "allocator_settings": {}}
    file = tmp_path / "real.pickle"
    file.write_bytes(pickle.dumps(s, protocol=4))
    assert len(replay.load(str(file))["device_traces"][0]) == 20_000


def cli_limited(path: Path, address_space: int = 1 << 30) -> subprocess.CompletedProcess[str]:
    """cli(path) in a process of at most address_space bytes: an allocation a claim in the file
    asks for fails there instead of taking the machine's memory."""

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    # AddressSanitizer (CI's sanitized run preloads it) reserves terabytes of shadow address
    # space at start: under a limit it cannot start at all, so there the refusal is checked alone
    asan = "libasan" in os.environ.get("LD_PRELOAD", "")
    return subprocess.run(
        [sys.executable, "-m", "pyc10.replay", str(path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=None if asan else limit,
    )


def test_a_memo_slot_numbered_past_the_file_is_refused_before_the_memo_grows(
    tmp_path: Path,
) -> None:
    # found by tests/fuzz/py/fuzz_replay.py: LONG_BINPUT 2^27 in a 9-byte pickle grows the
    # unpickler's memo to 2^28 entries (2 GiB, filled), a 2^31 - 1 to 32 GiB; slot numbers of a
    # real pickle never pass its length
    file = tmp_path / "memo.pickle"
    file.write_bytes(b"\x80\x02N" + b"r" + (1 << 27).to_bytes(4, "little") + b".")
    t = time.perf_counter()
    err = refused_in_one_line(cli_limited(file))
    assert time.perf_counter() - t < 10
    assert "numbers a memo slot 134217728 in 9 bytes" in err, err


def test_a_counted_bytearray_longer_than_the_file_is_one_line(tmp_path: Path) -> None:
    # found by tests/fuzz/py/fuzz_replay.py: BYTEARRAY8 of 2^60 bytes; CPython allocates the
    # claimed length first, and when that fails prints "SystemError: deallocated bytearray object
    # has exported buffers" on stderr beside the refusal (seen on a terminal; in process here)
    file = tmp_path / "bytearray.pickle"
    file.write_bytes(b"\x80\x05\x96" + (1 << 60).to_bytes(8, "little") + b"abc.")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = replay.main([str(file)])
        gc.collect()
    assert status == 2 and out.getvalue() == ""
    assert err.getvalue().count("\n") == 1, err.getvalue()
    assert "is not a pickled memory snapshot" in err.getvalue(), err.getvalue()


def test_a_huge_small_pool_segment_is_refused_not_rebuilt_a_mib_at_a_time(tmp_path: Path) -> None:
    # found by tests/fuzz/py/fuzz_replay.py: a 1 KB snapshot whose one small-pool segment claims
    # 1 TiB; the replay rebuilt its free space as a million 1 MiB requests, for every setting
    # replayed (over a minute, then hours for 2^62)
    seg = {
        "device": 0,
        "address": BASE,
        "total_size": 1 << 40,
        "stream": 0,
        "segment_type": "small",
        "blocks": [{"address": BASE, "size": 512, "state": "active_allocated"}],
    }
    event = {"action": "free_completed", "addr": BASE, "size": 512, "stream": 0}
    file = tmp_path / "small.pickle"
    file.write_bytes(pickle.dumps({"segments": [seg], "device_traces": [[event]]}, protocol=4))
    t = time.perf_counter()
    err = refused_in_one_line(cli(file))
    assert time.perf_counter() - t < 10
    assert (
        "the small-pool segment at 0x10000000000 holds 1099511627776 bytes, where PyTorch's" in err
    )
    # an expandable one may be larger, but not past the bound
    seg["is_expandable"] = True
    file.write_bytes(pickle.dumps({"segments": [seg], "device_traces": [[event]]}, protocol=4))
    err = refused_in_one_line(cli(file))
    assert "small-pool segments hold 1099511627776 bytes, more than 4 GiB" in err, err


def test_an_allocation_past_any_device_fails_fast_under_expandable_segments() -> None:
    # found by tests/fuzz/py/fuzz_replay.py: a 1 KB snapshot with one allocation of 2^62 bytes
    # took 3.4 s and 440 MiB: each expandable-segments column's simulated device (of 1 PiB, as
    # the recording says no capacity) walked a page table of its whole reservation to fail it
    file = Path(__file__).resolve().parents[1] / (
        "fuzz/corpus/replay/found-an-alloc-of-2-62-under-expandable-segments.pickle"
    )
    out, err = io.StringIO(), io.StringIO()
    t = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = replay.main([str(file)])
    assert time.perf_counter() - t < 1.5
    assert status == 0 and "expandable_segments:True" in out.getvalue()


def test_a_device_larger_than_any_gpu_is_refused() -> None:
    # found by tests/fuzz/py/fuzz_replay.py: an out-of-memory event's free bytes saying the GPU
    # holds 1 PiB made every simulated device that large (5.9 s, 440 MiB for a 500-byte file)
    file = Path(__file__).resolve().parents[1] / (
        "fuzz/corpus/replay/found-a-device-of-1-PiB-under-expandable-segments.json"
    )
    err = refused_in_one_line(cli(file))
    assert "more than any GPU (16 TiB)" in err, err
