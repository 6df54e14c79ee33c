"""python -m pyc10.replay beyond PyTorch's settings: the plan of a recording (--write-plan, read
back through plan_file:PATH), --compare over PyTorch's settings and libc10c's, and the project's
replay CSV (bench/replay_trace's input) read as a recording."""

from __future__ import annotations

import gzip
import json
import os
import pickle
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_replay import MIB, cli, one_line, synthetic

from pyc10 import replay

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "bench" / "traces" / "decomfl.layout.csv.gz"
DATA = ROOT / "tests" / "python" / "data"


def table(lines: list[str]) -> dict[str, list[str]]:
    """A printed table's rows by their first cell (cells are two spaces or more apart)."""
    return {cells[0]: cells[1:] for cells in (re.split(r"\s{2,}", line) for line in lines)}


def snapshot_file(tmp_path: Path, snapshot: dict[str, Any] | None = None) -> Path:
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(snapshot or synthetic()))
    return path


def test_the_plan_covers_the_blocks_alive_at_the_start_and_the_window() -> None:
    t = replay.convert(synthetic())
    sizes, streams, begins, ends = replay.plan_requests(t)
    # one model: the 3 MiB block alive when recording began, a request at time zero (between
    # the two step markers of the cold start), then the window: 5, 40 and 30 MiB
    assert sizes == [3 * MIB, 5 * MIB, 40 * MIB, 30 * MIB]
    assert begins[0] == 1 and begins[1] == 3  # the step markers take times 0 and 2
    assert set(streams) == {0}
    assert all(b < e for b, e in zip(begins, ends, strict=True))
    assert ends[-1] == (1 << 64) - 1  # the last 30 MiB block is never freed
    # the prologue that rebuilds PyTorch's segments (a cached 20 MiB segment, fillers) is not
    # in the plan: only the PyTorch columns start from PyTorch's state
    assert [op[0] for op, _ in replay.request_ops(t)][:3] == ["step", "malloc", "step"]


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
    r = replay.replay(t, f"plan_file:{plan}", cold=True)
    assert "error" not in r, r.get("error")
    planned = sum(1 for n in replay.plan_requests(t)[0] if n > 0)
    assert r["plan"]["served"] == planned and r["plan"]["fallbacks"] == 0
    assert r["plan"]["rebuilds"] == 1 and r["plan"]["arena_bytes"] == arena
    assert r["ooms"] == 0 and r["peak_reserved"] == arena  # one arena, nothing beside it
    # the same file through --settings: the plan of this recording, from a cold start
    proc = cli(str(snapshot_file(tmp_path)), "--json", "--settings", f"plan_file:{plan}")
    assert proc.returncode == 0, proc.stderr
    (col,) = json.loads(proc.stdout)["columns"]
    assert col["peak_reserved"] == arena and col["plan"]["fallbacks"] == 0


def test_the_planned_column_is_the_plans_replay(tmp_path: Path) -> None:
    proc = cli(str(snapshot_file(tmp_path)), "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    runs = out["columns"]
    assert [r.get("name") for r in runs][-1] == "planned from the recording"
    stitched, online, planned = runs[-3], runs[-2], runs[-1]
    assert stitched["settings"] == "expandable_segments:True,stitching:True"
    assert online["settings"] == "planning:True" and online["by"] == "libc10c only"
    assert "error" not in planned, planned.get("error")
    assert planned["plan"]["served"] > 0 and planned["plan_made"]["lower_bound"] > 0
    assert planned["utilization"] == planned["peak_live_requested"] / planned["peak_reserved"]
    # the arena the planned column serves is the one --write-plan reports
    arena, _, _ = replay.make_plan(replay.convert(synthetic()), None)
    assert planned["plan"]["arena_bytes"] == planned["plan_made"]["arena_bytes"] == arena
    names = [o["name"] for o in out["answer"]["libc10c"]]
    assert names == ["expandable_segments:True,stitching:True", "planning:True",
                     "planned from the recording"]  # fmt: skip


def replay_trace_paths() -> tuple[Path, Path] | None:
    """bench/replay_trace and the stand-in driver of the C tests' build (tests/run.sh)."""
    build = ROOT / os.environ.get("C10C_TEST_BUILD_DIR", "build/tests")
    exe, stub = build / "bench" / "replay_trace", build / "tests" / "libc10c_cuda_stub.so"
    return (exe, stub) if exe.exists() and stub.exists() else None


@pytest.mark.parametrize("source", ["synthetic", "decomfl"])
def test_one_plan_for_the_planned_column_write_plan_and_replay_trace(
    tmp_path: Path, source: str
) -> None:
    """The planned column, --write-plan and bench/replay_trace --plan-from over --write-csv's
    packed trace make the same plan of the same recording (one model behind every column)."""
    snap = snapshot_file(tmp_path) if source == "synthetic" else DATA / "decomfl_snapshot.json.gz"
    plan, csv = tmp_path / "r.plan", tmp_path / "r.csv"
    proc = cli(str(snap), "--write-plan", str(plan))
    assert proc.returncode == 0, proc.stderr
    written = int(re.search(r"arena [0-9.]+ GiB \(([0-9]+) bytes\)", proc.stdout).group(1))
    proc = cli(str(snap), "--json")
    planned = json.loads(proc.stdout)["columns"][-1]
    assert planned["plan"]["arena_bytes"] == planned["plan_made"]["arena_bytes"] == written
    proc = cli(str(snap), "--write-csv", str(csv))
    assert proc.returncode == 0, proc.stderr
    assert csv.read_text().startswith("Thread,Time,Action,Pointer,Size,Stream,Step,Tag,Phase\n")
    paths = replay_trace_paths()
    if paths is None:
        pytest.skip("bench/replay_trace is not built (bash tests/run.sh builds build/tests)")
    exe, stub = paths
    env = dict(os.environ, C10C_CUDA_DRIVER=str(stub), C10C_STUB_FAKE="1")
    for name in ("C10C_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "C10C_STUB_ADDRESS_ORDER"):
        env.pop(name, None)
    out = subprocess.run(
        [str(exe), str(csv), "--plan-from", str(csv), "--no-search", "--repeat", "0",
         "--capacity", str(1 << 45)],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["plan"]["arena_bytes"] == written
    assert report["peak_reserved"] == planned["peak_reserved"]


def test_compare_lists_pytorchs_settings_and_libc10cs(tmp_path: Path) -> None:
    html = tmp_path / "compare.html"
    proc = cli(str(snapshot_file(tmp_path)), "--compare", "--html", str(html))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = ["setting", "computed by", "peak reserved", "utilization", "device mallocs",
              "out of memory"]  # fmt: skip
    assert re.split(r"\s{2,}", lines[2]) == header
    rows = table(lines[3:])
    assert rows["as recorded"] == ["PyTorch (recorded)", "0.059 GiB", "0.800", "2", "0"]
    assert rows["defaults"] == ["libc10c as PyTorch", "0.059 GiB", "0.800", "2", "0"]
    assert rows["expandable_segments:True"][0] == "libc10c as PyTorch"
    assert "max_split_size_mb:128" in rows and "roundup_power2_divisions:4" in rows
    # no GPU memory in the recording: no memory fraction, so no garbage collection tried
    assert not any(name.startswith("garbage_collection_threshold:") for name in rows)
    assert any(line.startswith("garbage_collection_threshold was not tried") for line in lines)
    assert rows["expandable_segments:True,stitching:True"][0] == "libc10c only"
    assert rows["planned from the recording"][0] == "libc10c only"
    assert any(line.startswith("Best PyTorch setting for this run: ") for line in lines)
    assert "planned from the recording" in html.read_text()
    # with the GPU's memory, garbage collection under the fraction the defaults' peak allows
    proc = cli(str(snapshot_file(tmp_path)), "--compare", "--capacity", "1GiB")
    rows = table(proc.stdout.splitlines()[3:])
    gc = [name for name in rows if name.startswith("garbage_collection_threshold:0.8")]
    assert gc == ["garbage_collection_threshold:0.8 (memory fraction 0.0586)"]
    proc = cli(str(snapshot_file(tmp_path)), "--compare", "--json")
    out = json.loads(proc.stdout)
    assert {r["by"] for r in out["columns"]} == {"libc10c as PyTorch", "libc10c only"}
    assert all("error" not in r for r in out["columns"]), [r.get("error") for r in out["columns"]]
    assert out["answer"]["lines"][0].startswith("Best PyTorch setting for this run: ")


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
    native = out["columns"][0]
    assert (native["device_mallocs"], native["peak_reserved"]) == (2, 50 * MIB)
    assert native["peak_live_requested"] == 34 * MIB and out["unknown_frees"] == 1
    proc = cli(str(path))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"{path}: a replay CSV of 10 rows; addresses ascending"
    rows = table(lines[2:])
    assert rows["peak reserved"][:3] == ["-", "0.049 GiB", "0.039 GiB"]
    assert rows["utilization"][:3] == ["-", "0.680", "0.850"]
    assert "1 frees of Pointers the CSV never allocated: skipped" in lines


def test_a_shipped_trace_compares_with_pytorchs_recorded_figures() -> None:
    proc = cli(str(SHIPPED), "--compare")
    assert proc.returncode == 0, proc.stderr
    rows = table(proc.stdout.splitlines()[3:])
    # bench/traces/pytorch_figures.json: PyTorch reserved 1,897,922,560 bytes at its peak
    assert rows["as recorded"] == ["PyTorch (recorded)", "1.768 GiB", "0.940", "-", "-"]
    assert rows["defaults"][:3] == ["libc10c as PyTorch", "1.768 GiB", "0.940"]


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


def steps_csv(tmp_path: Path, steps: int = 4) -> Path:
    rows = ["Action,Pointer,Size,Step"]
    for step in range(steps):  # identical steps: 4 and 30 MiB, then 2 MiB
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
    return path


def test_the_csvs_step_markers_drive_online_planning(tmp_path: Path) -> None:
    path = steps_csv(tmp_path)
    proc = cli(str(path), "--json", "--settings", "planning:True", "--settings", "")
    assert proc.returncode == 0, proc.stderr
    planned, native = json.loads(proc.stdout)["columns"]
    assert planned["plan"]["rebuilds"] >= 1 and planned["plan"]["served"] > 0, planned["plan"]
    assert native["plan"]["served"] == 0 and native["plan"]["rebuilds"] == 0
    assert planned["peak_reserved"] <= native["peak_reserved"]


def test_planning_on_a_recording_with_no_repeated_step_is_refused(tmp_path: Path) -> None:
    # one window, nothing repeats: planning:True would print the caching allocator's figures
    proc = cli(str(snapshot_file(tmp_path)), "--settings", "planning:True")
    assert proc.returncode == 2 and proc.stdout == ""
    assert "planning:True found no repeated step in this recording" in one_line(proc.stderr)
    # in the default table the column stays, saying so
    proc = cli(str(snapshot_file(tmp_path)))
    assert proc.returncode == 0
    assert (
        "  planning:True: 0.059 GiB, saves nothing; no repeated step found in the recording:"
        " served as the caching allocator" in proc.stdout
    )


def test_a_plan_file_of_another_recording_is_refused(tmp_path: Path) -> None:
    plan = tmp_path / "other.plan"
    proc = cli(str(DATA / "decomfl_snapshot.json.gz"), "--write-plan", str(plan))
    assert proc.returncode == 0, proc.stderr
    proc = cli(str(snapshot_file(tmp_path)), "--settings", f"plan_file:{plan}")
    assert proc.returncode == 2 and proc.stdout == ""
    assert one_line(proc.stderr).startswith(
        f"pyc10.replay: the plan file {plan} was made from another recording ("
    )
    garbage = tmp_path / "garbage.plan"
    garbage.write_bytes(b"not a plan")
    proc = cli(str(snapshot_file(tmp_path)), "--settings", f"plan_file:{garbage}")
    assert proc.returncode == 2 and proc.stdout == ""
