"""python -m pyc10.replay beyond PyTorch's settings: the plan of a recording (--write-plan, read
back through plan_file:PATH), --compare over PyTorch's settings and libc10c's, and the project's
replay CSV (bench/replay_trace's input) read as a recording."""

from __future__ import annotations

import gzip
import json
import pickle
import re
from pathlib import Path
from typing import Any

import pytest
from test_replay import MIB, cli, one_line, synthetic

from pyc10 import replay

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "bench" / "traces" / "decomfl.layout.csv.gz"


def table(lines: list[str]) -> dict[str, list[str]]:
    """A printed table's rows by their first cell (cells are two spaces or more apart)."""
    return {cells[0]: cells[1:] for cells in (re.split(r"\s{2,}", line) for line in lines)}


def snapshot_file(tmp_path: Path, snapshot: dict[str, Any] | None = None) -> Path:
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(snapshot or synthetic()))
    return path


def test_the_plan_covers_the_prologue_and_the_window() -> None:
    t = replay.convert(synthetic())
    sizes, streams, begins, ends = replay.plan_requests(t)
    # the prologue: the cached 30 MiB... no: a 20 MiB segment (made and freed), its 3 MiB live
    # block and the filler after it; the window: 5, 40 and 30 MiB
    mallocs = [op for op in [*t.prologue, *t.window] if op[0] == "malloc"]
    assert sizes == [op[2] for op in mallocs]
    assert set(streams) == {0}
    assert all(b < e for b, e in zip(begins, ends, strict=True))
    assert ends[-1] == (1 << 64) - 1  # the last 30 MiB block is never freed


def test_write_plan_is_accepted_by_plan_file_and_serves_every_request(tmp_path: Path) -> None:
    plan = tmp_path / "run.plan"
    proc = cli(str(snapshot_file(tmp_path)), "--write-plan", str(plan))
    assert proc.returncode == 0, proc.stderr
    line = one_line(proc.stdout)
    assert f"plan_file:{plan}" in line and "arena" in line and "lower bound" in line
    assert plan.stat().st_size > 0
    t = replay.convert(synthetic())
    arena, bound, _ = replay.make_plan(t, None)
    assert arena >= bound and arena % (2 * MIB) == 0
    assert f"arena {arena / (1 << 30):.3f} GiB ({arena} bytes)" in line
    r = replay.replay(t, f"plan_file:{plan}")
    assert "error" not in r, r.get("error")
    planned = sum(1 for n in replay.plan_requests(t)[0] if n > 0)
    assert r["plan"]["served"] == planned and r["plan"]["fallbacks"] == 0
    assert r["plan"]["rebuilds"] == 1 and r["plan"]["arena_bytes"] == arena
    assert r["ooms"] == 0 and r["peak_reserved"] >= bound - 3 * MIB  # the prologue's 3 MiB


def test_the_planned_column_is_the_plans_replay(tmp_path: Path) -> None:
    proc = cli(str(snapshot_file(tmp_path)), "--json")
    assert proc.returncode == 0, proc.stderr
    runs = json.loads(proc.stdout)["libc10c"]
    assert [r.get("name") for r in runs][-1] == "planned"
    stitched, planned = runs[-2], runs[-1]
    assert stitched["settings"] == "expandable_segments:True,stitching:True"
    assert "error" not in planned, planned.get("error")
    assert planned["plan"]["served"] > 0 and planned["plan_made"]["lower_bound"] > 0
    assert planned["utilization"] == planned["peak_live_requested"] / planned["peak_reserved"]


def test_compare_lists_pytorchs_settings_and_libc10cs(tmp_path: Path) -> None:
    png = tmp_path / "compare.png"
    proc = cli(str(snapshot_file(tmp_path)), "--compare", "--plot", str(png))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[1].split() == [
        "setting", "of", "peak", "reserved", "utilization", "device", "mallocs", "out", "of",
        "memory",
    ]  # fmt: skip
    rows = table(lines[2:])
    assert rows["as recorded"] == ["PyTorch", "0.059 GiB", "0.800", "2", "0"]
    assert rows["(defaults)"] == ["PyTorch", "0.059 GiB", "0.800", "2", "0"]
    assert rows["expandable_segments:True"][0] == "PyTorch"
    assert "max_split_size_mb:128" in rows and "roundup_power2_divisions:4" in rows
    gc = [name for name in rows if name.startswith("garbage_collection_threshold:0.8")]
    assert gc == ["garbage_collection_threshold:0.8 (limit 0.059 GiB)"]
    assert rows["expandable_segments:True,stitching:True"][0] == "libc10c"
    assert rows["planned from the recording"][0] == "libc10c"
    assert any(line.startswith("least reserved: ") for line in lines)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    proc = cli(str(snapshot_file(tmp_path)), "--compare", "--json")
    runs = json.loads(proc.stdout)
    assert {r["by"] for r in runs} == {"PyTorch", "libc10c"}
    assert all("error" not in r for r in runs), [r.get("error") for r in runs]


CSV = (
    "Thread,Time,Action,Pointer,Size,Stream,Step,Tag,Phase\n"
    "0,1,step_begin,0x0,0,0,0,,\n"
    f"0,2,allocate,0xa,{4 * MIB},0,0,,\n"  # a 20 MiB segment
    f"0,3,allocate,0xb,{30 * MIB},0,0,,\n"  # a 30 MiB one
    "0,4,free,0xa,0,0,0,,\n"
    "0,5,record_stream,0xb,0,7,0,,\n"  # read, and nothing for a simulated device
    "0,6,step_begin,0x0,0,0,1,,\n"
    f"0,7,allocate,0xc,{4 * MIB},0,1,,\n"  # from the cache
    "0,8,free,0xc,0,0,1,,\n"
    "0,9,free,0xb,0,0,1,,\n"
    "0,10,free,0xdead,0,0,1,,\n"  # allocated before the log began
)


@pytest.mark.parametrize("zipped", [False, True])
def test_a_replay_csv_is_a_recording_too(tmp_path: Path, zipped: bool) -> None:
    path = tmp_path / ("t.csv.gz" if zipped else "t.csv")
    path.write_bytes(gzip.compress(CSV.encode()) if zipped else CSV.encode())
    proc = cli(str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["pytorch"]["peak_live_requested"] == 34 * MIB
    assert out["pytorch"]["peak_reserved"] is None  # no figures of PyTorch's beside it
    native = out["libc10c"][0]
    assert (native["device_mallocs"], native["peak_reserved"]) == (2, 50 * MIB)
    assert native["peak_live_requested"] == 34 * MIB and out["unknown_frees"] == 1
    proc = cli(str(path))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"{path}: a replay CSV of 10 rows; addresses ascending"
    rows = table(lines[1:])
    assert rows["peak reserved"][:3] == ["-", "0.049 GiB", "0.039 GiB"]
    assert rows["utilization"][:3] == ["-", "0.680", "0.850"]
    assert lines[-1] == "1 frees of Pointers the CSV never allocated: skipped"


def test_a_shipped_trace_compares_with_pytorchs_recorded_figures() -> None:
    proc = cli(str(SHIPPED), "--compare")
    assert proc.returncode == 0, proc.stderr
    rows = table(proc.stdout.splitlines()[2:])
    # bench/traces/pytorch_figures.json: PyTorch reserved 1,897,922,560 bytes at its peak
    assert rows["as recorded"] == ["PyTorch", "1.768 GiB", "0.940", "-", "-"]
    assert rows["(defaults)"][:3] == ["PyTorch", "1.768 GiB", "0.940"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"Action,Size\nallocate,512\n", "its header names no Pointer column"),
        (b"Action,Pointer,Size\nallocate,0x1,many\n", "line 2: a malformed number"),
        (b"Action,Pointer,Size\nallocate,0x1,512\nallocate,0x1,512\n", "allocated again while"),
        (b"\xff\xfe", "is not a replay CSV: it is not ASCII text"),
    ],
)
def test_a_bad_csv_is_one_line_and_status_2(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(content)
    proc = cli(str(path))
    assert proc.returncode == 2 and proc.stdout == ""
    assert message in one_line(proc.stderr)


def test_write_plan_refuses_what_it_cannot_write_or_plan(tmp_path: Path) -> None:
    path = snapshot_file(tmp_path)
    for target, message in [
        ("/nonexistent/dir/p.plan", "argument --write-plan: no folder /nonexistent/dir"),
        (str(tmp_path), "argument --write-plan: " + str(tmp_path) + " is a folder"),
    ]:
        proc = cli(str(path), "--write-plan", target)
        assert proc.returncode == 2 and proc.stdout == ""
        assert message in one_line(proc.stderr)
    nothing = {"segments": [], "device_traces": [[{"action": "free_completed", "addr": 4096,
               "size": 512, "stream": 0, "frames": []}]]}  # fmt: skip
    proc = cli(str(snapshot_file(tmp_path, nothing)), "--write-plan", str(tmp_path / "p.plan"))
    assert proc.returncode == 2 and proc.stdout == ""
    assert "there is nothing to plan" in one_line(proc.stderr)
    assert not (tmp_path / "p.plan").exists()


def test_compare_refuses_unknown_options_and_settings_of_its_own(tmp_path: Path) -> None:
    proc = cli(str(snapshot_file(tmp_path)), "--compare", "--bogus")
    assert proc.returncode == 2 and "unrecognized arguments: --bogus" in one_line(proc.stderr)
    proc = cli(str(snapshot_file(tmp_path)), "--compare", "--settings", "")
    assert proc.returncode == 2 and proc.stdout == ""
    assert "argument --compare: not allowed with argument --settings" in one_line(proc.stderr)


def test_the_csvs_step_markers_drive_online_planning(tmp_path: Path) -> None:
    rows = ["Action,Pointer,Size,Step"]
    for step in range(4):  # four identical steps: 4 and 30 MiB, then 2 MiB
        p = 8 * step
        rows += [
            f"step_begin,0x0,0,{step}",
            f"allocate,{p + 1:#x},{4 * MIB},{step}",
            f"allocate,{p + 2:#x},{30 * MIB},{step}",
            f"free,{p + 1:#x},0,{step}",
            f"allocate,{p + 3:#x},{2 * MIB},{step}",
            f"free,{p + 2:#x},0,{step}",
            f"free,{p + 3:#x},0,{step}",
        ]
    path = tmp_path / "steps.csv"
    path.write_text("\n".join(rows) + "\n")
    proc = cli(str(path), "--json", "--settings", "planning:True", "--settings", "")
    assert proc.returncode == 0, proc.stderr
    planned, native = json.loads(proc.stdout)["libc10c"]
    assert planned["plan"]["rebuilds"] >= 1 and planned["plan"]["served"] > 0, planned["plan"]
    assert native["plan"]["served"] == 0 and native["plan"]["rebuilds"] == 0
