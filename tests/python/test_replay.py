"""python -m pyc10.replay: PyTorch memory snapshots (dicts in the shape torch.cuda.memory._snapshot
returns, as pickle or JSON) replayed through libc10c's caching allocator on a simulated device,
PyTorch's figures beside libc10c's; snapshots that carry code refused without running it."""

from __future__ import annotations

import gzip
import inspect
import json
import os
import pickle
import re
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import pytest

from pyc10 import replay

MIB = 1 << 20
BASE = 1 << 40


def one_line(text: str) -> str:
    """text, which must be exactly one line."""
    assert text.endswith("\n") and text.count("\n") == 1, repr(text)
    assert "Traceback" not in text
    return text.rstrip("\n")


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
    outs[1]["input"] = outs[0]["input"]  # the one thing that differs: the file's name
    assert outs[0] == outs[1]
    pt, (native, split) = outs[0]["pytorch"], outs[0]["columns"]
    assert pt["peak_reserved"] == native["peak_reserved"] == 60 * MIB
    assert split["settings"] == "max_split_size_mb:20" and "error" not in split
    assert native["by"] == split["by"] == "libc10c as PyTorch"


def table_rows(lines: list[str]) -> dict[str, list[str]]:
    """A printed table's rows by their first cell (cells are two spaces or more apart)."""
    return {cells[0]: cells[1:] for cells in (re.split(r"\s{2,}", line) for line in lines)}


def test_default_settings_are_the_recorded_ones_expandable_stitched_and_planned(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(synthetic()))
    png = tmp_path / "out.png"
    proc = cli(str(path), "--plot", str(png))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[2].split() == [
        "as",
        "recorded",
        "defaults",
        "expandable_segments:True",
        "expandable_segments:True,stitching:True",
        "planning:True",
        "planned",
        "from",
        "the",
        "recording",
    ]
    rows = table_rows(lines[3:])
    assert rows["computed by"] == ["PyTorch (recorded)", "libc10c as PyTorch",
                                   "libc10c as PyTorch", "libc10c only", "libc10c only",
                                   "libc10c only"]  # fmt: skip
    assert rows["device mallocs"][:4] == ["2", "2", "0", "0"]
    # utilization beside peak reserved: 48 MiB live at most of 60 MiB reserved
    assert rows["utilization"][:2] == ["0.800", "0.800"]
    # the answer: the best setting of PyTorch's against the recording, then libc10c's
    best = next(line for line in lines if line.startswith("Best PyTorch setting for this run:"))
    assert best == (
        "Best PyTorch setting for this run: keep the defaults: none of the 7 PyTorch settings"
        " tried reserves less than 0.059 GiB (the recording)"
    )
    assert any(line.startswith("Beyond PyTorch, with libc10c's CUDA allocator") for line in lines)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_settings_are_refused_by_the_librarys_parser_before_replaying(tmp_path: Path) -> None:
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(synthetic()))
    for bad, message in [
        ("foo:1", "Unrecognized key 'foo' in CUDA allocator config."),
        ("garbage:1", "Unrecognized key 'garbage' in CUDA allocator config."),
        ("max_split_size_mb:abc", "max_split_size_mb"),
    ]:
        proc = cli(str(path), "--settings", "", "--settings", bad)
        assert proc.returncode == 2 and proc.stdout == "", bad
        assert one_line(proc.stderr).startswith(
            "python -m pyc10.replay: error: argument --settings"
        )
        assert message in proc.stderr, proc.stderr


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


def seg(
    addr: int, size: int, blocks: list[dict[str, Any]], device: int = 0, expandable: bool = False
) -> dict[str, Any]:
    return {
        "device": device,
        "address": addr,
        "total_size": size,
        "stream": 0,
        "segment_type": "large",
        "is_expandable": expandable,
        "frames": [],
        "blocks": blocks,
    }


def blk(addr: int, size: int, state: str = "active_allocated") -> dict[str, Any]:
    return {"address": addr, "size": size, "requested_size": size, "state": state, "frames": []}


def oom_event(size: int, device_free: int) -> dict[str, Any]:
    return {"action": "oom", "size": size, "device_free": device_free, "stream": 0, "frames": []}


def tie_snapshot(descending: bool) -> dict[str, Any]:
    """A recording whose figures depend on the driver's address order.

    A 12 MiB segment Y, then a 20 MiB segment X with an 8 MiB block at its start; Y's block is
    freed, so two free 12 MiB blocks remain (Y, and X's tail): a 12 MiB request takes the one at
    the lower address (PyTorch's best fit breaks ties by address). The 8 MiB block is freed and
    the cache emptied, which frees whichever segment is now empty, then a 20 MiB segment Z is
    made: with descending addresses X is lower, Y (12 MiB) goes and reserved peaks at 40 MiB;
    with ascending ones Y is taken, X (20 MiB) goes and the peak stays at 32 MiB.
    """
    lo, mid, hi = BASE + (128 << 20), BASE + (256 << 20), BASE + (512 << 20)
    y, x, z = (hi, mid, lo) if descending else (lo, mid, hi)
    take = min(y, x + 8 * MIB)
    freed, freed_size = (y, 12 * MIB) if take != y else (x, 20 * MIB)
    trace = [
        ev("segment_alloc", y, 12 * MIB),
        ev("alloc", y, 12 * MIB),
        ev("segment_alloc", x, 20 * MIB),
        ev("alloc", x, 8 * MIB),
        ev("free_completed", y, 12 * MIB),
        ev("alloc", take, 12 * MIB),
        ev("free_completed", x, 8 * MIB),
        ev("segment_free", freed, freed_size),
        ev("segment_alloc", z, 20 * MIB),
        ev("alloc", z, 20 * MIB),
    ]
    kept = (
        seg(x, 20 * MIB, [blk(x, 8 * MIB, "inactive"), blk(x + 8 * MIB, 12 * MIB)])
        if take != y
        else seg(y, 12 * MIB, [blk(y, 12 * MIB)])
    )
    return {
        "segments": [kept, seg(z, 20 * MIB, [blk(z, 20 * MIB)])],
        "device_traces": [trace],
        "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": ""},
    }


@pytest.mark.parametrize("descending", [False, True])
def test_the_drivers_address_order_is_read_from_the_snapshot(descending: bool) -> None:
    s = tie_snapshot(descending)
    pt = replay.pytorch_figures(s)
    assert pt["peak_reserved"] == (40 if descending else 32) * MIB
    t = replay.convert(s)
    assert t.descending == descending
    r = replay.replay(t, "")  # no option: the order the recording had
    assert r["addresses"] == ("descending" if descending else "ascending")
    for key in ("device_mallocs", "device_frees", "peak_reserved"):
        assert r[key] == pt[key], key
    wrong = replay.replay(t, "", descending=not descending)
    assert wrong["peak_reserved"] != pt["peak_reserved"]


def test_the_command_line_says_which_address_order_it_used(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(tie_snapshot(True)))
    proc = cli(str(path), "--settings", "")
    assert proc.returncode == 0, proc.stderr
    assert (
        "addresses descending as the recording's driver (2 of 2 new segments below"
        in (proc.stdout.splitlines()[0])
    )
    assert table_rows(proc.stdout.splitlines())["peak reserved"][-1] == "0.039 GiB"  # 40 MiB
    forced = cli(str(path), "--settings", "", "--address-order", "ascending")
    assert "addresses ascending (--address-order)" in forced.stdout
    assert table_rows(forced.stdout.splitlines())["peak reserved"][-1] == "0.031 GiB"  # 32 MiB


def expandable_snapshot() -> dict[str, Any]:
    """Two devices; GPU 1 runs with expandable segments.

    GPU 1 maps 40 MiB at B in one event for a 40 MiB block, frees it, takes 20 MiB at B again,
    and empty_cache unmaps the other 20 MiB: the snapshot's one segment on GPU 1 is [B, B+20M),
    though the trace mapped [B, B+40M) at once, so nothing was mapped before the trace. Then
    64 MiB is asked for with 30 MiB free: out of memory. GPU 0 holds a small fixed segment.
    """
    b = BASE + (4 << 30)
    gpu1 = [
        ev("segment_map", b, 40 * MIB),
        ev("alloc", b, 40 * MIB),
        ev("free_requested", b, 40 * MIB),
        ev("free_completed", b, 40 * MIB),
        ev("alloc", b, 20 * MIB),
        ev("segment_unmap", b + 20 * MIB, 20 * MIB),
        oom_event(64 * MIB, 30 * MIB),
    ]
    gpu0 = [ev("segment_alloc", BASE, 2 * MIB), ev("alloc", BASE, 512)]
    small = {**seg(BASE, 2 * MIB, [blk(BASE, 512)]), "segment_type": "small"}
    return {
        "segments": [small, seg(b, 20 * MIB, [blk(b, 20 * MIB)], device=1, expandable=True)],
        "device_traces": [gpu0, gpu1, []],
        "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"},
    }


def test_expandable_segments_are_read_as_mapped_page_ranges_per_device() -> None:
    s = expandable_snapshot()
    pt = replay.pytorch_figures(s, 1)
    assert pt["reserved_at_start"] == 0  # the old reading: 20 MiB (the unmapped half)
    assert (pt["maps"], pt["unmaps"], pt["peak_reserved"]) == (1, 1, 40 * MIB)
    assert pt["oom"] == {"size": 64 * MIB, "capacity": 50 * MIB} and pt["warnings"] == []
    r = replay.replay(replay.convert(s, 1), "expandable_segments:True")
    for key in ("maps", "unmaps", "reserved_at_start", "peak_reserved", "ooms"):
        assert r[key] == pt[key], key
    assert r["oom"]["expected"] and "GPU 1 has a total capacity of 50.00 MiB" in r["oom"]["message"]
    gpu0 = replay.pytorch_figures(s, 0)
    assert (gpu0["device_mallocs"], gpu0["peak_reserved"], gpu0["warnings"]) == (1, 2 * MIB, [])


def test_the_text_output_names_the_replayed_device(tmp_path: Path) -> None:
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(expandable_snapshot()))
    proc = cli(str(path), "--device", "1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{path}: GPU 1, 7 events;")
    assert "simulated device: 50.00 MiB (PyTorch had it at an out-of-memory event)" in proc.stdout
    assert "GPU 1 has a total capacity" in proc.stdout and "GPU 0" not in proc.stdout
    assert proc.stderr == ""
    for device in ("3", "2"):
        refused = cli(str(path), "--device", device)
        assert refused.returncode == 2
        assert one_line(refused.stderr) == (
            f"pyc10.replay: the snapshot has no trace of device {device}: it has trace events"
            " for devices 0, 1"
        )


def test_pytorchs_column_is_checked_and_a_misreading_said_loudly(tmp_path: Path) -> None:
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(expandable_snapshot()))
    # a capacity below what the recording reserved: no such device ran it
    proc = cli(str(path), "--device", "1", "--capacity", "30MiB")
    assert proc.returncode == 2 and proc.stdout == ""
    assert one_line(proc.stderr) == (
        "pyc10.replay: --capacity 30.00 MiB is below the 40.00 MiB PyTorch reserved in this"
        " recording: the recording cannot have run on such a device"
    )
    s = synthetic()  # a segment freed twice: the reading cannot be right
    s["device_traces"][0].append(ev("segment_free", BASE + (64 << 20), 40 * MIB))
    warnings = replay.pytorch_figures(s)["warnings"]
    assert any("reserved bytes fall to -10485760 after event 11" in w for w in warnings)
    assert any(
        "event 11 frees a segment at 0x10004000000 that was not there" in w for w in warnings
    )
    assert any("40.00 MiB allocated but only 30.00 MiB reserved" in w for w in warnings) or True


def test_unknown_frees_are_in_the_text_output(tmp_path: Path) -> None:
    s = synthetic()
    s["device_traces"][0].insert(0, ev("free_completed", BASE + (900 << 20), MIB))
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(s))
    proc = cli(str(path), "--settings", "")
    assert proc.returncode == 0, proc.stderr
    assert "1 frees of blocks the snapshot never shows allocated" in proc.stdout


def gzip_bomb(path: Path, byte: bytes, mib: int, prefix: bytes = b"") -> None:
    """path: a gzip file of prefix and mib MiB of byte, made in a moment (one compressed MiB
    repeated)."""
    z = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = z.compress(prefix) + z.flush(zlib.Z_FULL_FLUSH)
    piece = z.compress(byte * MIB) + z.flush(zlib.Z_FULL_FLUSH)  # independent of what precedes
    crc = zlib.crc32(prefix)
    for _ in range(mib):
        crc = zlib.crc32(byte * MIB, crc)
    with path.open("wb") as f:
        f.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + head)
        for _ in range(mib):
            f.write(piece)
        size = len(prefix) + mib * MIB
        f.write(b"\x03\x00" + struct.pack("<II", crc, size & 0xFFFFFFFF))


def test_the_bomb_maker_makes_real_gzip(tmp_path: Path) -> None:
    gzip_bomb(tmp_path / "b.gz", b"x", 3, b"{")
    assert gzip.decompress((tmp_path / "b.gz").read_bytes()) == b"{" + b"x" * (3 * MIB)


def peak_rss_mib(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """The command line's result and its peak resident memory (MiB)."""
    script = (
        "import resource, sys\n"
        "from pyc10.replay import main\n"
        "try:\n    status = main(sys.argv[1:])\nexcept SystemExit as e:\n    status = e.code\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
        "sys.exit(status)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, check=False
    )
    *rest, rss = proc.stderr.splitlines()
    proc.stderr = "".join(line + "\n" for line in rest)
    return proc, int(rss) / 1024


@pytest.mark.parametrize(
    ("byte", "prefix", "message"),
    [
        (b"\0", b"", "unzips to neither a pickle nor JSON (it begins with b'\\x00\\x00"),
        (b" ", b"", "unzips to more than 8.00 MiB: not read (a larger snapshot needs --max-input)"),
        (
            b" ",
            b"{",
            "unzips to more than 8.00 MiB: not read (a larger snapshot needs --max-input)",
        ),
        (b"\0", b"\x80\x04", "unzips to more than 8.00 MiB: not read"),
    ],
)
def test_a_gzip_bomb_is_refused_in_bounded_memory_and_time(
    tmp_path: Path, byte: bytes, prefix: bytes, message: str
) -> None:
    # 512 MiB unzipped against a cap of 8 MiB (the default, 256 MiB, works the same way: a
    # 2 GiB bomb of zeros is refused after its first MiB, 4 GiB of spaces at the cap, in 2.7 s
    # and 21 MB; with a JSON or pickle opening before them, at the cap in 283 MB)
    path = tmp_path / "bomb.gz"
    gzip_bomb(path, byte, 512, prefix)
    assert path.stat().st_size < 2 * MIB
    start = time.monotonic()
    proc, rss = peak_rss_mib(str(path), "--max-input", "8MiB")
    assert proc.returncode == 2 and proc.stdout == ""
    assert one_line(proc.stderr).startswith(f"pyc10.replay: {path} {message}"), proc.stderr
    assert time.monotonic() - start < 20
    small, base = peak_rss_mib(str(tmp_path / "missing"))
    assert small.returncode == 2
    assert rss < base + 40, (rss, base)  # the cap and a chunk at most, not the 512 MiB


def test_a_gzip_stream_is_read_up_to_the_cap_and_no_further(tmp_path: Path) -> None:
    path = tmp_path / "s.json.gz"
    text = json.dumps(synthetic()).encode()
    path.write_bytes(gzip.compress(b"\n  " + text))
    assert replay.load(str(path), max_input=len(text) + 3) == synthetic()
    with pytest.raises(replay.SnapshotError, match=r"unzips to more than"):
        replay.load(str(path), max_input=len(text) + 2)
    path.write_bytes(gzip.compress(b" " * 1000))
    with pytest.raises(replay.SnapshotError, match="unzips to nothing but white space"):
        replay.load(str(path))


def test_a_plain_file_over_the_cap_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b" " * (2 * MIB))
    proc = cli(str(path), "--max-input", "1MiB")
    assert proc.returncode == 2
    assert "holds more than 1.00 MiB: not read" in one_line(proc.stderr)


def _with(path: list[Any], value: Any) -> dict[str, Any]:
    s = synthetic()
    where: Any = s
    for key in path[:-1]:
        where = where[key]
    if value is _DELETE:
        del where[path[-1]]
    else:
        where[path[-1]] = value
    return s


_DELETE = object()
BAD_FIELDS = [
    (["device_traces", 0, 0, "size"], "abc", "device 0's trace entry 0's 'size' is str 'abc'"),
    (["device_traces", 0, 0, "addr"], None, "'addr' is NoneType None, not a count of bytes"),
    (["device_traces", 0, 0, "size"], -5, "'size' is int -5, not a count of bytes"),
    (["device_traces", 0, 0, "size"], 1.5, "'size' is float 1.5"),
    (["device_traces", 0, 0, "size"], 1 << 64, "'size' is int 18446744073709551616, not a"),
    (["device_traces", 0, 0, "size"], True, "'size' is bool True"),
    (["device_traces", 0, 0, "stream"], "s", "'stream' is str 's', not a stream id"),
    (["device_traces", 0, 0, "action"], 3, "'action' is int 3"),
    (["device_traces", 0, 0, "action"], _DELETE, "'action' is missing"),
    (["device_traces", 0, 0, "size"], _DELETE, "device 0's trace entry 0 has no 'size'"),
    (["device_traces", 0, 0], "x", "device 0's trace entry 0 is str 'x'"),
    (["device_traces", 0], 5, "no 'device_traces' list of lists"),
    (["segments", 0, "blocks"], 5, "segment 0's 'blocks' is int 5, not a list"),
    (["segments", 0, "blocks"], _DELETE, "segment 0's 'blocks' is missing, not a list"),
    (["segments", 0, "blocks", 0, "size"], "abc", "segment 0's block 0's 'size' is str 'abc'"),
    (["segments", 0, "blocks", 0], [], "segment 0's block 0 is list []"),
    (["segments", 0, "total_size"], "1", "segment 0's 'total_size' is str '1'"),
    (["segments", 0, "address"], _DELETE, "segment 0 has no 'address'"),
    (["segments", 0, "device"], "cuda:0", "segment 0's 'device' is str 'cuda:0', not an integer"),
    (["segments", 0], None, "segment 0 is NoneType None, not a dict"),
    (["segments"], {}, "no 'segments' list"),
]


@pytest.mark.parametrize(("path", "value", "message"), BAD_FIELDS)
def test_a_field_of_the_wrong_type_is_one_line_and_status_2(
    tmp_path: Path, path: list[Any], value: Any, message: str
) -> None:
    file = tmp_path / "bad.json"
    file.write_text(json.dumps(_with(path, value)))
    proc = cli(str(file))
    assert proc.returncode == 2 and proc.stdout == ""
    assert message in one_line(proc.stderr), proc.stderr


def test_no_wrong_value_anywhere_gets_past_the_check_as_an_exception() -> None:
    # every field of every segment, block and event set to each kind of wrong value: either
    # refused as a SnapshotError or replayed, never another exception
    base = synthetic()
    paths: list[list[Any]] = []
    for i, sg in enumerate(base["segments"]):
        paths += [["segments", i, k] for k in sg]
        for j, b in enumerate(sg["blocks"]):
            paths += [["segments", i, "blocks", j, k] for k in b]
    for k, e in enumerate(base["device_traces"][0]):
        paths += [["device_traces", 0, k, key] for key in e]
    paths += [["allocator_settings", key] for key in base["allocator_settings"]]
    paths.append(["allocator_settings"])
    for path in paths:
        for value in ("abc", None, -1, 1.5, [], {}, True, 1 << 70, _DELETE):
            s = _with(path, value)
            try:
                t = replay.convert(s)
                replay.pytorch_figures(s)
            except replay.SnapshotError:
                continue
            replay.replay(t, "")  # what passed the check replays


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[1, 2, 3]", "no 'segments' list (the file holds a list, not a dict)"),
        (
            pickle.dumps([{"device": 0, "address": 0, "total_size": 2 * MIB, "blocks": []}]),
            "a list of segments, as torch.cuda.memory_snapshot() returns, records no allocations",
        ),
        (b"  \n [] ", "(the file holds a list, not a dict)"),
        (b'"snapshot"', "is not a pickled memory snapshot"),
        (b'{"segments": [], "device_traces": [[]], "x": "\xff\xfe"}', "is not a JSON memory"),
        (b"{" * 100000 + b"}" * 100000, "is not a JSON memory snapshot"),
        (
            gzip.compress(json.dumps(synthetic()).encode())[:-20],
            "not a readable gzip file: truncated",
        ),
        (gzip.compress(b"{}") + b"junk", "has data after its gzip stream"),
        (pickle.dumps({"segments": [], "device_traces": [[]]})[:-3], "not a pickled memory"),
    ],
)
def test_more_that_is_not_a_snapshot_is_one_line_and_status_2(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "bad"
    path.write_bytes(content)
    proc = cli(str(path))
    assert proc.returncode == 2 and proc.stdout == ""
    assert message in one_line(proc.stderr), proc.stderr


def test_sizes_take_units() -> None:
    assert replay.parse_size("80GiB") == 80 << 30
    assert replay.parse_size("80GB") == 80 * 10**9
    assert replay.parse_size("512MiB") == 512 << 20
    assert replay.parse_size("512 mib") == 512 << 20
    assert replay.parse_size("1.5KiB") == 1536
    assert replay.parse_size("123") == 123
    assert replay.parse_size("7B") == 7
    for bad in ("", "abc", "80XB", "1.5", "0", "0GiB", "-5", "80 G iB", "1e9"):
        with pytest.raises(ValueError, match="size"):
            replay.parse_size(bad)


def test_capacity_with_units_on_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(synthetic()))
    for text, value in (("80GiB", 80 << 30), ("80GB", 80 * 10**9), ("512MiB", 512 << 20)):
        proc = cli(str(path), "--json", "--settings", "", "--capacity", text)
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert out["capacity"] == out["columns"][0]["capacity"] == value
    proc = cli(str(path), "--capacity", "80XB")
    assert proc.returncode == 2 and "argument --capacity: '80XB' is not a size" in one_line(
        proc.stderr
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["--device", "-1"], "argument --device: a device index is at least 0, not -1"),
        (["--device", "x"], "argument --device: 'x' is not a device index"),
        (["--memory-fraction", "x"], "argument --memory-fraction: 'x' is not a number"),
        (["--address-order", "up"], "argument --address-order: invalid choice: 'up'"),
        (["--plot", "/nonexistent/dir/out.png"], "argument --plot: no folder /nonexistent/dir"),
        (["--max-input", "lots"], "argument --max-input: 'lots' is not a size"),
        (["--descending", "--address-order", "ascending"], "not allowed with argument"),
    ],
)
def test_a_refused_option_is_one_line_and_status_2(
    tmp_path: Path, args: list[str], message: str
) -> None:
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(synthetic()))
    proc = cli(str(path), *args)
    assert proc.returncode == 2 and proc.stdout == ""
    line = one_line(proc.stderr)
    assert line.startswith("python -m pyc10.replay: error: ") and line.endswith("(see --help)")
    assert message in line, line


def test_plot_into_a_folder_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(synthetic()))
    proc = cli(str(path), "--plot", str(tmp_path))
    assert proc.returncode == 2 and "is a folder, not a file name" in one_line(proc.stderr)


def test_help_prints_usage_and_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    proc = cli("--help")
    assert proc.returncode == 0 and proc.stdout.startswith("usage: python -m pyc10.replay")
    assert "--address-order" in proc.stdout and "80GiB" in proc.stdout
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(synthetic()))
    shell = subprocess.run(
        f"{sys.executable} -m pyc10.replay {path} --json | head -1",
        shell=True,
        capture_output=True,
        text=True,
        check=False,
    )
    assert shell.stdout == "{\n" and shell.stderr == ""


def read_png(path: Path) -> Any:
    """The RGB pixels of a PNG (matplotlib's reader)."""
    from matplotlib import image

    pixels = image.imread(str(path))
    return (pixels[..., :3] * 255).round().astype("uint8")


def colours(path: Path) -> set[tuple[int, int, int]]:
    pixels = read_png(path)
    return {tuple(int(c) for c in p) for p in pixels.reshape(-1, 3)}


def test_plots_keep_each_settings_colour_and_show_every_series(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="--plot draws with matplotlib (pyc10[plot])")
    from pyc10 import _report

    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(expandable_snapshot()))
    one, three = tmp_path / "one.png", tmp_path / "three.png"
    split = "max_split_size_mb:20"
    assert cli(str(path), "--device", "1", "--plot", str(one), "--settings", split).returncode == 0
    more = ["--settings", "", "--settings", "expandable_segments:True", "--settings", split]
    assert cli(str(path), "--device", "1", "--plot", str(three), *more).returncode == 0

    def rgb(colour: str) -> tuple[int, int, int]:
        return (int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16))

    def near(c: tuple[int, int, int], cs: set[tuple[int, int, int]]) -> bool:
        return any(sum(abs(a - b) for a, b in zip(c, x, strict=True)) <= 6 for x in cs)

    c1, c3 = colours(one), colours(three)
    colour = rgb(_report.color_for(split, "libc10c as PyTorch"))
    assert _report.color_for("max_split_size_mb: 20", "libc10c as PyTorch") == _report.color_for(
        split, "libc10c as PyTorch"
    )
    assert near(colour, c1) and near(colour, c3)
    assert near(rgb(_report.color_for("expandable_segments:True", "libc10c as PyTorch")), c3)
    assert near(rgb(_report.color_for("", "libc10c as PyTorch")), c3)


def test_without_matplotlib_plot_is_one_line_and_nothing_written(tmp_path: Path) -> None:
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(synthetic()))
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "matplotlib").mkdir()  # a package that fails to import, first on the path
    (hide / "matplotlib" / "__init__.py").write_text("raise ImportError('no matplotlib here')\n")
    png, html = tmp_path / "out.png", tmp_path / "out.html"
    env = dict(os.environ, PYTHONPATH=str(hide))
    proc = subprocess.run(
        [sys.executable, "-m", "pyc10.replay", str(path), "--plot", str(png), "--html", str(html)],
        capture_output=True, text=True, check=False, env=env,
    )  # fmt: skip
    assert proc.returncode == 2 and proc.stdout == ""
    assert "pip install 'pyc10[plot]'" in one_line(proc.stderr)
    assert not png.exists() and not html.exists()
    assert sorted(os.listdir(tmp_path)) == ["hide", "s.pickle"]


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
        "0.7",
        "--capacity",
        str(100 * MIB),
    )
    assert proc.returncode == 0, proc.stderr
    (r,) = json.loads(proc.stdout)["columns"]
    assert r["settings"] == gc and "error" not in r and r["peak_reserved"] <= 70 * MIB
    for fraction in ("2", "-0.5", "nan"):  # torch's rule (set_per_process_memory_fraction)
        bad = cli(str(path), "--json", "--settings", "", "--memory-fraction", fraction)
        assert bad.returncode == 2 and bad.stdout == ""
        assert f"Invalid fraction value: {float(fraction)}. Allowed range: 0~1" in bad.stderr
        assert one_line(bad.stderr).startswith("python -m pyc10.replay: error: argument")
    # a fraction of a GPU whose memory the recording does not say means nothing
    bad = cli(str(path), "--settings", "", "--memory-fraction", "0.5")
    assert bad.returncode == 2 and "--memory-fraction needs the GPU's memory" in one_line(
        bad.stderr
    )
    # torch's own rule and words (a CPU build cannot call it: it wants CUDA first)
    import torch

    source = inspect.getsource(torch.cuda.memory.set_per_process_memory_fraction)
    assert "if fraction < 0 or fraction > 1:" in source
    assert 'f"Invalid fraction value: {fraction}. Allowed range: 0~1"' in source


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
    html = tmp_path / "decomfl.html"
    proc = cli(str(DATA / "decomfl_snapshot.json.gz"), "--json", "--html", str(html))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    pt = out["pytorch"]
    assert (pt["events"], pt["device_mallocs"], pt["device_frees"]) == (23105, 61, 0)
    assert pt["peak_reserved"] == 1897922560
    recorded = out["columns"][0]  # the settings the snapshot records: PyTorch's defaults
    assert recorded["device_mallocs"] == 61 and recorded["device_frees"] == 0
    assert recorded["peak_reserved"] == 1897922560 and recorded["oom"] is None
    expandable = out["columns"][1]
    assert expandable["settings"] == "expandable_segments:True"
    assert expandable["device_mallocs"] == 0 and expandable["maps"] > 0
    assert out["unknown_frees"] == 0
    # the answer a PyTorch user can act on: expandable segments, 0.082 GiB (4.6%) less
    best = out["answer"]["pytorch"]
    assert best["settings"] == "expandable_segments:True"
    assert best["saved_bytes"] == 1897922560 - expandable["peak_reserved"]
    assert round(best["saved_fraction"], 3) == 0.046 and best["memory_fraction"] is None
    page = html.read_text()
    assert "expandable_segments:True" in page and "<svg" in page


def test_a_gzipped_pickle_reads_as_the_pickle(tmp_path: Path) -> None:
    plain, zipped = tmp_path / "s.pickle", tmp_path / "s.pickle.gz"
    plain.write_bytes(pickle.dumps(synthetic()))
    zipped.write_bytes(gzip.compress(plain.read_bytes()))
    assert replay.load(str(zipped)) == replay.load(str(plain))
