"""pyc10._report: the colours, PNG charts and HTML page of python -m pyc10.replay.

The PNG tests need matplotlib (the plot extra) and skip without it; the page is checked as text
and, where Debian's chromium is installed, as a browser renders it.
"""

from __future__ import annotations

import html
import importlib.util
import os
import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pyc10 import _replay_input, _report, _report_html

GIB = 1 << 30
MIB = 1 << 20
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
needs_matplotlib = pytest.mark.skipif(
    not HAS_MATPLOTLIB, reason="matplotlib is not installed (pip install 'pyc10[plot]')"
)
CHROMIUM = "/usr/bin/chromium"
RECORDED = "PyTorch (recorded)"
OURS = "libc10c, PyTorch's algorithm"
ONLY = "libc10c only"
STITCHED = "expandable_segments:True,stitching:True"
PLAN = "plan_file:(a plan of the recording)"


def column(
    name: str, by: str, settings: str, series: list[int] | None, **more: Any
) -> dict[str, Any]:
    c: dict[str, Any] = {
        "name": name,
        "by": by,
        "settings": settings,
        "peak_reserved": max(series) if series else None,
        "utilization": 0.9 if series else None,
        "device_mallocs": 12 if series else None,
        "ooms": 0 if series else None,
        "error": None,
        "series": series,
        "allocated": None,
        "oom_events": [],
        "ended_at": None,
    }
    c.update(more)
    return c


def report(columns: list[dict[str, Any]], title: str = "trace.json: GPU 0") -> dict[str, Any]:
    return {
        "title": title,
        "subtitle": "simulated device of 80.00 GiB; addresses ascending as the recording's driver",
        "x_label": "trace event",
        "columns": columns,
        "table": {
            "header": ["setting", "of", "peak reserved"],
            "rows": [
                [
                    c["name"],
                    c["by"],
                    "-" if c["peak_reserved"] is None else f"{c['peak_reserved'] / GIB:.3f} GiB",
                ]
                for c in columns
            ],
        },
        "answer": ["least reserved: expandable_segments:True (libc10c), 1.000 GiB"],
        "notes": ["max_split_size_mb:128: refused <by the parser> & skipped"],
    }


def staircase(events: int, top: int, seed: int = 0) -> list[int]:
    """Reserved bytes that climb to top in steps and stay there: events + 1 entries."""
    rng = np.random.default_rng(seed)
    steps = np.sort(rng.integers(0, events // 2, 8))
    values = np.zeros(events + 1, np.int64)
    for k, at in enumerate(steps, start=1):
        values[at:] = top * k // len(steps)
    return [int(v) for v in values]


def sample(events: int = 5000) -> dict[str, Any]:
    """A report as replay.py makes one: the recorded column, four replays, one error."""
    recorded = staircase(events, 2 * GIB)
    allocated = [v * 3 // 4 for v in recorded]
    end = events * 3 // 4
    return report(
        [
            column("as recorded", RECORDED, "", recorded, allocated=allocated, oom_events=[40]),
            column("(defaults)", OURS, "", list(recorded), oom_events=[40]),
            column("expandable_segments:True", OURS, "expandable_segments:True",
                   staircase(events, 3 * GIB // 2, 1)),
            column(STITCHED, ONLY, STITCHED, staircase(events, 5 * GIB // 4, 2)),
            column("planned from the recording", ONLY, PLAN, staircase(events, GIB, 3),
                   ended_at=end, oom_events=[end]),
            column("max_split_size_mb:128", OURS, "max_split_size_mb:128", None,
                   error="libc10c refused the settings"),
        ]
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------
# colours


def test_color_for_is_stable_across_spellings_of_the_same_settings() -> None:
    assert _report.color_for("expandable_segments:True", OURS) == _report.color_for(
        " expandable_segments: true ", ONLY
    )
    assert _report.color_for("max_split_size_mb:64,garbage_collection_threshold:0.7", OURS) == (
        _report.color_for("max_split_size_mb:64, garbage_collection_threshold:0.7", ONLY)
    )
    assert _report.color_for("roundup_power2_divisions:16", OURS) == _report.color_for(
        "roundup_power2_divisions:16", OURS
    )


def test_color_for_gives_the_well_known_settings_fixed_distinct_colours() -> None:
    known = {
        "defaults": _report.color_for("", OURS),
        "expandable": _report.color_for("expandable_segments:True", OURS),
        "stitching": _report.color_for(STITCHED, ONLY),
        "planning": _report.color_for("planning:True", ONLY),
        "plan": _report.color_for(PLAN, ONLY),
        "recorded": _report.color_for("", RECORDED),
    }
    assert known["recorded"] == "#404040"
    assert known["defaults"] == _report.color_for("", ONLY)
    assert len(set(known.values())) == len(known), known
    for color in known.values():
        assert re.fullmatch(r"#[0-9a-f]{6}", color), color
    # a plan of the recording is one colour whatever its path
    assert _report.color_for("plan_file:/tmp/x.plan", ONLY) == known["plan"]
    # other planning settings: green variants, none of them the headline colours
    other = _report.color_for("expandable_segments:True,planning:True", ONLY)
    assert other not in set(known.values()) - {known["planning"]}


def test_color_for_differs_for_different_settings() -> None:
    # every column --compare draws (pyc10.replay's lists), and the default replay's
    from pyc10 import replay

    pytorch = [*replay.PYTORCH_SETTINGS, *replay.GC_SETTINGS]
    settings = [*pytorch, STITCHED, "planning:True", "expandable_segments:True,planning:True",
                PLAN]  # fmt: skip
    colors = [_report.color_for(s, OURS) for s in settings] + [_report.color_for("", RECORDED)]
    assert len(set(colors)) == len(colors), dict(zip([*settings, "recorded"], colors, strict=True))
    # any other settings: a palette colour, never one of the fixed ones nor the failures' red
    fixed = set(colors[:2] + colors[len(pytorch) :])
    for k in range(40):
        c = _report.color_for(f"max_split_size_mb:{100 + k}", OURS)
        assert re.fullmatch(r"#[0-9a-f]{6}", c)
        assert c not in fixed | {"#d62728"}
    spread = {_report.color_for(f"max_split_size_mb:{100 + k}", OURS) for k in range(40)}
    assert len(spread) >= 8


# ---------------------------------------------------------------------------------------------
# downsampling


def test_downsample_bounds_the_points_and_keeps_every_peak() -> None:
    n = 1_000_001
    values = [GIB] * n
    values[123_457] = 5 * GIB  # one event wide
    values[876_543] = 0
    points = _report._downsample(values, n)
    assert len(points) <= 2100
    assert (123_457, 5 * GIB) in points
    assert (876_543, 0) in points
    assert points[0][0] == 0
    assert points[-1][0] == n - 1
    assert [i for i, _ in points] == sorted(i for i, _ in points)


# ---------------------------------------------------------------------------------------------
# PNG charts


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def image(path: Path) -> np.ndarray:
    """The PNG at path as an (height, width, 3) uint8 array."""
    from matplotlib.image import imread

    pixels = imread(str(path))
    return np.asarray(np.round(pixels[..., :3] * 255), np.uint8)


def rightmost(pixels: np.ndarray, color: str) -> int:
    """The largest x of a pixel within a little of color; -1 if there is none."""
    rgb = np.array([int(color[k : k + 2], 16) for k in (1, 3, 5)], np.int16)
    near = np.abs(pixels.astype(np.int16) - rgb).max(axis=2) <= 12
    xs = np.nonzero(near.any(axis=0))[0]
    return int(xs.max()) if len(xs) else -1


def test_plot_unavailable_without_matplotlib_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib: ImportError
    for draw in (_report.timeline_png, _report.bars_png):
        with pytest.raises(_report.PlotUnavailable) as e:
            draw(str(tmp_path / "x.png"), sample(100))
        message = str(e.value)
        assert "pip install 'pyc10[plot]'" in message
        assert "\n" not in message
        assert isinstance(e.value, RuntimeError)
    assert list(tmp_path.iterdir()) == []


@needs_matplotlib
def test_timeline_and_bars_are_valid_pngs(tmp_path: Path) -> None:
    r = sample(20_000)
    for name, draw in (("t.png", _report.timeline_png), ("b.png", _report.bars_png)):
        path = tmp_path / name
        draw(str(path), r)
        width, height = png_size(path)
        assert 600 <= width <= 4000, (name, width)
        assert 300 <= height <= 4000, (name, height)
        pixels = image(path)
        assert pixels.shape[:2] == (height, width)
        # the colour of every setting drawn, and no leftover temporary file
        for c in r["columns"][:5]:
            assert rightmost(pixels, _report.color_for(c["settings"], c["by"])) >= 0, c["name"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.png", "t.png"]


@needs_matplotlib
def test_timeline_line_stops_where_the_replay_ended(tmp_path: Path) -> None:
    events = 4000
    orange = _report.color_for("expandable_segments:True", OURS)

    def draw(ended_at: int | None) -> int:
        r = report(
            [
                column("(defaults)", OURS, "", [GIB] * (events + 1)),
                column("expandable_segments:True", OURS, "expandable_segments:True",
                       [2 * GIB] * (events + 1), ended_at=ended_at),
            ]
        )  # fmt: skip
        path = tmp_path / f"{ended_at}.png"
        _report.timeline_png(str(path), r)
        pixels = image(path)
        return rightmost(pixels, orange) * 100 // int(pixels.shape[1])

    # the whole line reaches the right edge; the ended one stops half way (its marker too)
    assert draw(None) >= 90
    assert 35 <= draw(events // 2) <= 62


def test_a_replay_that_ended_is_marked_where_it_ended() -> None:
    # as replay.py gives it: the series stops at ended_at, the recorded one goes on
    events, end = 1000, 600
    r = report(
        [
            column("as recorded", RECORDED, "", [GIB] * (events + 1)),
            column("planned", ONLY, PLAN, [GIB // 2] * (end + 1), ended_at=end, oom_events=[end]),
        ]
    )
    ns = "{http://www.w3.org/2000/svg}"
    timeline = svg_of(_report_html.html_page(r), "timeline")
    dots = [c for c in timeline.iter(f"{ns}circle") if c.get("fill") != "#ffffff"]
    assert len(dots) == 1
    assert "ends at event 600" in "".join(timeline.itertext())
    lines = timeline.findall(f"{ns}polyline")
    xs = [[float(p.split(",")[0]) for p in line.get("points", "").split()] for line in lines]
    full, ended = max(x[-1] for x in xs), min(x[-1] for x in xs)
    assert float(dots[0].get("cx", "")) == pytest.approx(ended)
    left = min(x[0] for x in xs)
    assert (ended - left) / (full - left) == pytest.approx(end / events, abs=0.01)
    if HAS_MATPLOTLIB:
        ax = _report._timeline_figure(r).axes[0]
        marks = [ln for ln in ax.get_lines() if ln.get_marker() == "o"]
        assert [list(ln.get_xdata()) for ln in marks] == [[end]]
        assert ax.get_xlim() == (0, events)


@needs_matplotlib
@pytest.mark.filterwarnings("ignore:constrained_layout not applied:UserWarning")
def test_charts_cut_no_text_even_with_long_names() -> None:
    long_name = "expandable_segments:True,max_split_size_mb:512," + "x" * 90
    r = sample(3000)
    r["title"] = "a_very_long_snapshot_file_name_" * 6 + ".pickle: GPU 3, 3000 events"
    r["columns"].append(column(long_name, ONLY, long_name, staircase(3000, GIB, 9), ooms=2))
    for make in (_report._timeline_figure, _report._bars_figure):
        fig = make(r)
        assert _report._texts_outside(fig) == [], make.__name__
    # and a figure built to spill is caught (the check can fail)
    fig = _report._bars_figure(r)
    fig.set_size_inches(3, 2)
    assert _report._texts_outside(fig) != []


@needs_matplotlib
def test_bars_show_values_and_list_a_column_without_figures_as_na() -> None:
    from matplotlib.text import Annotation

    r = sample(500)
    texts = [t.get_text() for t in _report._bars_figure(r).axes[0].texts]
    assert any(t.startswith("n/a: libc10c refused") for t in texts)
    values = [t for t in texts if t.endswith("util 0.900")]
    assert f"{r['columns'][2]['peak_reserved'] / GIB:.3f} GiB  ·  util 0.900" in values
    for c in r["columns"]:
        assert c["name"] in texts and c["by"] in texts
    assert all(isinstance(t, Annotation) for t in _report._bars_figure(r).axes[0].texts)


# ---------------------------------------------------------------------------------------------
# the HTML page


def svg_of(page: str, svg_id: str) -> ET.Element:
    """The svg element of that id, parsed as XML (so it is well formed)."""
    m = re.search(rf'<svg id="{svg_id}".*?</svg>', page, re.S)
    assert m, svg_id
    return ET.fromstring(m.group(0))


def test_html_page_holds_every_column_the_charts_and_the_table() -> None:
    r = sample(3000)
    page = _report_html.html_page(r)
    assert page.startswith("<!DOCTYPE html>")
    assert page.rstrip().endswith("</html>")
    for c in r["columns"]:
        assert html.escape(c["name"]) in page, c["name"]
        assert html.escape(c["by"]) in page, c["by"]
    assert 'id="figures"' in page
    ns = "{http://www.w3.org/2000/svg}"
    timeline, bars = svg_of(page, "timeline"), svg_of(page, "bars")
    assert len(timeline.findall(f".//{ns}polyline")) >= 5  # four replays, recorded, allocated
    assert len(bars.findall(f".//{ns}rect")) >= 5
    # nothing fetched from elsewhere
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<script" not in page
    assert html.escape(r["notes"][0]) in page
    assert html.escape(r["answer"][0]) in page


def test_html_page_escapes_names() -> None:
    r = sample(200)
    r["columns"][1]["name"] = "<script>alert(1)</script>"
    r["title"] = "a & b <i>"
    page = _report_html.html_page(r)
    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "a &amp; b &lt;i&gt;" in page
    svg_of(page, "timeline")  # still well formed
    svg_of(page, "bars")


def test_html_page_stays_small_for_a_million_events() -> None:
    events = 1_000_000
    r = sample(50)
    for c in r["columns"]:
        if c["series"] is not None:
            c["series"] = staircase(events, c["peak_reserved"], len(c["name"]))
            c["oom_events"] = list(range(0, events, 997))  # a thousand failures
            if c["ended_at"] is not None:
                c["ended_at"] = events * 3 // 4
    r["columns"][0]["allocated"] = [v // 2 for v in r["columns"][0]["series"]]
    page = _report_html.html_page(r)
    assert len(page.encode()) < 2_000_000, len(page)
    assert len(page.encode()) < 600_000, len(page)  # what it is today, with room


def test_reports_without_lines_still_render(tmp_path: Path) -> None:
    cases = {
        "no columns": report([]),
        "errors only": report(
            [
                column("as recorded", RECORDED, "", None, error="no trace for GPU 1"),
                column("(defaults)", OURS, "", None, error="refused"),
            ]
        ),
        "one event": report([column("(defaults)", OURS, "", [5 * MIB])]),
        "ended at once": report(
            [column("(defaults)", OURS, "", [GIB] * 10, ended_at=0, oom_events=[0, 9, 99, -1])]
        ),
    }
    for what, r in cases.items():
        page = _report_html.html_page(r)
        svg_of(page, "timeline")
        svg_of(page, "bars")
        for c in r["columns"]:
            assert html.escape(c["name"]) in page, what
        if HAS_MATPLOTLIB:
            for draw in (_report.timeline_png, _report.bars_png):
                path = tmp_path / f"{what}.png"
                draw(str(path), r)
                assert min(png_size(path)) > 100, what
            assert _report._texts_outside(_report._timeline_figure(r)) == [], what
            assert _report._texts_outside(_report._bars_figure(r)) == [], what


# ---------------------------------------------------------------------------------------------
# the page in a browser


def decode_png(data: bytes) -> np.ndarray:
    """A non-interlaced 8-bit RGB or RGBA PNG as an (height, width, channels) array."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, head = 8, [], b""
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        if kind == b"IHDR":
            head = data[pos + 8 : pos + 21]
        elif kind == b"IDAT":
            chunks.append(data[pos + 8 : pos + 8 + n])
        pos += 12 + n
    width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", head)
    assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * bpp
    out = np.zeros((height, stride), np.uint8)
    prev = np.zeros(stride, np.int32)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(np.int32)
        if kind == 0:
            cur = line
        elif kind == 1:  # sub: a running sum along the row, per channel
            cur = np.cumsum(line.reshape(width, bpp), axis=0).reshape(-1) & 255
        elif kind == 2:  # up
            cur = (line + prev) & 255
        else:  # average, Paeth: pixel by pixel
            row, up = line.tolist(), prev.tolist()
            for i in range(stride):
                a = row[i - bpp] if i >= bpp else 0
                b = up[i]
                if kind == 3:
                    row[i] = (row[i] + ((a + b) >> 1)) & 255
                    continue
                c = up[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            cur = np.array(row, np.int32)
        out[y] = cur
        prev = cur
    return out.reshape(height, width, bpp)


def chromium(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        # without the sanitizer runtimes CI preloads into Python: Chromium spins under them
        env={k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")},
    )


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"no {CHROMIUM} (Debian's chromium)")
def test_html_page_renders_in_headless_chromium(tmp_path: Path) -> None:
    r = sample(20_000)
    page = tmp_path / "report.html"
    page.write_text(_report_html.html_page(r), encoding="utf-8")
    url = page.as_uri()

    done = chromium("--dump-dom", url, profile=tmp_path / "profile")
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    timeline = re.search(r'<svg id="timeline".*?</svg>', dom, re.S)
    bars = re.search(r'<svg id="bars".*?</svg>', dom, re.S)
    assert timeline and bars, dom[:2000]
    assert len(re.findall(r"<(polyline|path)\b", timeline.group(0))) >= 5
    assert len(re.findall(r"<rect\b", bars.group(0))) >= 5
    assert '<table id="figures"' in dom
    for c in r["columns"]:
        assert html.escape(c["name"], quote=False) in dom, c["name"]

    shot = tmp_path / "shot.png"
    done = chromium(
        f"--screenshot={shot}", "--window-size=1200,2000", url, profile=tmp_path / "profile"
    )
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    pixels = decode_png(shot.read_bytes())[..., :3]
    assert pixels.shape[:2] == (2000, 1200)
    colors = np.unique(pixels.reshape(-1, 3), axis=0)
    assert len(colors) > 1
    # the lines and bars were painted: the colours of the defaults and expandable_segments
    for c in r["columns"][1:3]:
        assert rightmost(pixels, _report.color_for(c["settings"], c["by"])) >= 0, c["name"]


# ---------------------------------------------------------------------------------------------
# writing files


def test_write_atomically_writes_all_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "chart.png"
    _replay_input.write_atomically(str(target), b"old")
    _replay_input.write_atomically(str(target), b"new content")
    assert target.read_bytes() == b"new content"
    assert [p.name for p in tmp_path.iterdir()] == ["chart.png"]
    plain = tmp_path / "plain"
    plain.write_bytes(b"")
    assert target.stat().st_mode & 0o777 == plain.stat().st_mode & 0o777  # as open() makes


def test_write_atomically_into_a_missing_folder_raises_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    target = tmp_path / "missing" / "chart.png"
    with pytest.raises(OSError):
        _replay_input.write_atomically(str(target), b"data")
    assert list(tmp_path.iterdir()) == []


def test_write_atomically_failing_keeps_the_old_file_and_removes_the_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "page.html"
    target.write_bytes(b"old page")

    def fail(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)  # the os module _replay_input uses
    with pytest.raises(OSError, match="No space left"):
        _replay_input.write_atomically(str(target), b"new page")
    assert target.read_bytes() == b"old page"
    assert [p.name for p in tmp_path.iterdir()] == ["page.html"]
