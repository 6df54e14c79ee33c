"""python -m pyc10.replay: PyTorch memory snapshots (dicts in the shape torch.cuda.memory._snapshot
returns, as pickle or JSON) replayed through libc10c's caching allocator on a simulated device,
PyTorch's figures beside libc10c's; snapshots that carry code refused without running it."""

from __future__ import annotations

import gzip
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pyc10 import replay

MIB = 1 << 20
BASE = 1 << 40


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pyc10.replay", *args],
        capture_output=True,
        text=True,
        check=False,
        env=os.environ,
    )


def ev(action: str, addr: int, size: int, stream: int = 0, **extra: Any) -> dict[str, Any]:
    return {"action": action, "addr": addr, "size": size, "stream": stream, "frames": [], **extra}


def synthetic() -> dict[str, Any]:
    """A 20 MiB segment cached before the window with a 3 MiB block live at its start (freed in
    the window); the window allocates 5 MiB into it, 40 MiB in a new segment, frees all,
    empties the cache (two segment_free events: one empty_cache), then 30 MiB anew."""
    seg_b = BASE + (64 << 20)
    seg_c = BASE + (128 << 20)
    trace = [
        ev("alloc", BASE + 3 * MIB, 5 * MIB),
        ev("segment_alloc", seg_b, 40 * MIB),
        ev("alloc", seg_b, 40 * MIB),
        ev("free_requested", BASE, 3 * MIB),
        ev("free_completed", BASE, 3 * MIB),
        ev("free_completed", BASE + 3 * MIB, 5 * MIB),
        ev("free_completed", seg_b, 40 * MIB),
        ev("segment_free", BASE, 20 * MIB),
        ev("segment_free", seg_b, 40 * MIB),
        ev("segment_alloc", seg_c, 30 * MIB),
        ev("alloc", seg_c, 30 * MIB),
    ]
    segments = [
        {
            "device": 0,
            "address": seg_c,
            "total_size": 30 * MIB,
            "allocated_size": 30 * MIB,
            "active_size": 30 * MIB,
            "requested_size": 30 * MIB,
            "stream": 0,
            "segment_type": "large",
            "is_expandable": False,
            "frames": [],
            "blocks": [
                {
                    "address": seg_c,
                    "size": 30 * MIB,
                    "requested_size": 30 * MIB,
                    "state": "active_allocated",
                    "frames": [],
                }
            ],
        }
    ]
    return {
        "segments": segments,
        "device_traces": [trace],
        "allocator_settings": {"expandable_segments": False, "max_split_size": -1},
    }


def test_pytorchs_figures_from_the_trace() -> None:
    f = replay.pytorch_figures(synthetic())
    assert (f["device_mallocs"], f["device_frees"]) == (2, 2)
    assert f["reserved_at_start"] == 20 * MIB
    assert f["peak_reserved"] == 60 * MIB
    assert f["peak_live_requested"] == 48 * MIB


def test_the_conversion_rebuilds_the_segments_then_replays_the_window() -> None:
    t = replay.convert(synthetic())
    # the cached 20 MiB segment made and freed, then its live block and the filler after it
    assert [(k, n) for k, _, n, _ in t.prologue] == [
        ("malloc", 20 * MIB),
        ("free", 20 * MIB),
        ("malloc", 3 * MIB),
        ("malloc", 17 * MIB),
    ]
    assert len(t.fillers) == 1
    kinds = [k for k, *_ in t.window]
    assert kinds == ["malloc", "malloc", "free", "free", "free", "empty_cache", "malloc"]
    r = replay.replay(t)
    assert (r["device_mallocs"], r["device_frees"]) == (2, 2)
    assert r["reserved_at_start"] == 20 * MIB and r["peak_reserved"] == 60 * MIB
    e = replay.replay(t, "expandable_segments:True")
    assert e["maps"] > 0 and e["device_mallocs"] == 0


def test_an_oom_becomes_a_last_allocation_at_pytorchs_capacity() -> None:
    s = synthetic()
    s["device_traces"][0].append(
        {k: v for k, v in ev("oom", 0, 100 * MIB, device_free=70 * MIB).items() if k != "addr"}
    )
    t = replay.convert(s)
    assert t.window[-1][0] == "oom" and t.capacity == 100 * MIB
    r = replay.replay(t)
    assert r["oom"]["expected"] and "Tried to allocate 100.00 MiB" in r["oom"]["message"]
    assert replay.pytorch_figures(s)["oom"] == {"size": 100 * MIB, "capacity": 100 * MIB}


def test_command_line_pickle_and_json_agree(tmp_path: Path) -> None:
    pk, js = tmp_path / "s.pickle", tmp_path / "s.json"
    pk.write_bytes(pickle.dumps(synthetic()))
    js.write_text(json.dumps(synthetic()))
    outs = []
    for path in (pk, js):
        proc = cli(str(path), "--json", "--settings", "", "--settings", "max_split_size_mb:20")
        assert proc.returncode == 0, proc.stderr
        outs.append(json.loads(proc.stdout))
    assert outs[0] == outs[1]
    pt, (native, split) = outs[0]["pytorch"], outs[0]["libc10c"]
    assert pt["peak_reserved"] == native["peak_reserved"] == 60 * MIB
    assert split["settings"] == "max_split_size_mb:20" and "error" not in split


def test_default_settings_are_the_recorded_ones_and_expandable(tmp_path: Path) -> None:
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(synthetic()))
    png = tmp_path / "out.png"
    proc = cli(str(path), "--plot", str(png))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[1].split() == ["PyTorch", "(defaults)", "expandable_segments:True"]
    assert lines[2].split() == ["device", "mallocs", "2", "2", "0"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_settings_are_reported_per_row(tmp_path: Path) -> None:
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(synthetic()))
    proc = cli(str(path), "--settings", "foo:1")
    assert proc.returncode == 0, proc.stderr
    assert "foo:1: Unrecognized key 'foo' in CUDA allocator config." in proc.stdout


class _Boom:
    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, ("touch " + os.environ["PYC10_REPLAY_MARKER"],))


def test_a_pickle_that_carries_code_is_refused_without_running_it(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    os.environ["PYC10_REPLAY_MARKER"] = str(marker)
    try:
        data = pickle.dumps({"segments": [], "device_traces": [[]], "x": _Boom()})
    finally:
        del os.environ["PYC10_REPLAY_MARKER"]
    path = tmp_path / "evil.pickle"
    path.write_bytes(data)
    proc = cli(str(path))
    assert proc.returncode == 2
    assert "refers to posix.system" in proc.stderr and "refused" in proc.stderr
    assert proc.stdout == "" and not marker.exists()
    with pytest.raises(replay.SnapshotError, match="refused"):
        replay.load(str(path))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "not a pickled memory snapshot"),
        (b"{not json", "not a JSON memory snapshot"),
        (pickle.dumps([1, 2]), "no 'segments' list"),
        (pickle.dumps({"segments": [], "device_traces": [[{"action": "alloc"}]]}), "addr"),
        (pickle.dumps({"segments": [], "device_traces": []}), "no device traces"),
        (b"\x80\x05\x95", "not a pickled memory snapshot"),
        (b"\x1f\x8b\x08\x00garbage", "not a readable gzip file"),
        (gzip.compress(b"\x80\x05K\x01."), "no 'segments' list"),
    ],
)
def test_what_is_not_a_snapshot_is_an_error(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad"
    path.write_bytes(content)
    proc = cli(str(path))
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr
    assert cli(str(tmp_path / "missing")).returncode == 2


def test_the_window_goes_on_after_an_oom_as_the_program_did() -> None:
    s = synthetic()
    oom = {k: v for k, v in ev("oom", 0, 100 * MIB, device_free=70 * MIB).items() if k != "addr"}
    after = [
        ev("segment_alloc", BASE + (256 << 20), 60 * MIB),
        ev("alloc", BASE + (256 << 20), 60 * MIB),
    ]
    s["device_traces"][0] += [oom, *after]
    s["segments"].append(
        {
            **s["segments"][0],
            "address": BASE + (256 << 20),
            "total_size": 60 * MIB,
            "blocks": [
                {
                    "address": BASE + (256 << 20),
                    "size": 60 * MIB,
                    "requested_size": 60 * MIB,
                    "state": "active_allocated",
                }
            ],
        }
    )
    pt = replay.pytorch_figures(s)
    assert (pt["device_mallocs"], pt["ooms"], pt["peak_reserved"]) == (3, 1, 90 * MIB)
    r = replay.replay(replay.convert(s))
    assert (r["device_mallocs"], r["ooms"], r["peak_reserved"]) == (3, 1, 90 * MIB)
    assert r["oom"]["expected"] and r["ooms_not_reproduced"] == 0
    roomy = replay.replay(replay.convert(s), capacity=1 << 30)  # it fits: not reproduced
    assert roomy["ooms"] == 0 and roomy["ooms_not_reproduced"] == 1
    # the 100 MiB segment made for it stays cached and serves the 60 MiB after it
    assert roomy["device_mallocs"] == 3 and roomy["peak_reserved"] == 130 * MIB


def test_a_memory_fraction_caps_reserved_bytes_with_gc_settings(tmp_path: Path) -> None:
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(synthetic()))
    gc = "garbage_collection_threshold:0.5"
    proc = cli(
        str(path),
        "--json",
        "--settings",
        gc,
        "--memory-fraction",
        "0.5",
        "--capacity",
        str(100 * MIB),
    )
    assert proc.returncode == 0, proc.stderr
    (r,) = json.loads(proc.stdout)["libc10c"]
    assert r["settings"] == gc and "error" not in r and r["peak_reserved"] <= 50 * MIB
    bad = cli(str(path), "--json", "--settings", "", "--memory-fraction", "2")
    assert "Invalid fraction value: 2" in json.loads(bad.stdout)["libc10c"][0]["error"]


def test_the_start_is_rebuilt_under_the_recorded_settings_whatever_is_tried() -> None:
    t = replay.convert(synthetic())
    tried = ("max_split_size_mb:20", "roundup_power2_divisions:4", "expandable_segments:True")
    for settings in tried:
        r = replay.replay(t, settings)
        assert "error" not in r and r["reserved_at_start"] == 20 * MIB, settings


DATA = Path(__file__).parent / "data"


def test_a_real_snapshot_replays_to_pytorchs_figures(tmp_path: Path) -> None:
    """DeComFL's published snapshot (tests/python/data/README.md): PyTorch's own figures in
    bench/traces/pytorch_figures.json ("decomfl"), reproduced to the byte."""
    png = tmp_path / "decomfl.png"
    proc = cli(str(DATA / "decomfl_snapshot.json.gz"), "--json", "--plot", str(png))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    pt = out["pytorch"]
    assert (pt["events"], pt["device_mallocs"], pt["device_frees"]) == (23105, 61, 0)
    assert pt["peak_reserved"] == 1897922560
    recorded = out["libc10c"][0]  # the settings the snapshot records: PyTorch's defaults
    assert recorded["device_mallocs"] == 61 and recorded["device_frees"] == 0
    assert recorded["peak_reserved"] == 1897922560 and recorded["oom"] is None
    expandable = out["libc10c"][1]
    assert expandable["settings"] == "expandable_segments:True"
    assert expandable["device_mallocs"] == 0 and expandable["maps"] > 0
    assert out["unknown_frees"] == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_gzipped_pickle_reads_as_the_pickle(tmp_path: Path) -> None:
    plain, zipped = tmp_path / "s.pickle", tmp_path / "s.pickle.gz"
    plain.write_bytes(pickle.dumps(synthetic()))
    zipped.write_bytes(gzip.compress(plain.read_bytes()))
    assert replay.load(str(zipped)) == replay.load(str(plain))
