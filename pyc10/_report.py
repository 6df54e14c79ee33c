"""The PNG charts of ``python -m pyc10.replay``, drawn from one report dict.

Pure Python and the standard library: matplotlib (the ``plot`` extra) is imported only when a
PNG chart is drawn; the colours, the lines and the ticks here serve the HTML page's inline SVG
too (_report_html).
The report, as replay.py builds it::

    title, subtitle, x_label: str
    columns: list of {name, by, settings: str; peak_reserved, device_mallocs, ooms: int | None;
              utilization: float | None; error: str | None; series, allocated: list[int] | None;
              oom_events: list[int]; ended_at: int | None}
    table: {header: list[str], rows: list[list[str]]}
    answer, notes: list[str]

A column's ``series`` is the reserved bytes after each trace event (one entry per event plus the
start), ``allocated`` (the recorded column only) the requested bytes alive, ``oom_events`` the
indices where an allocation failed, ``ended_at`` the index where a replay stopped at an
out-of-memory PyTorch did not have. A column with an ``error`` has no line and no bar.
"""

from __future__ import annotations

import io
import math
import re
import textwrap
import zlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ._replay_input import write_atomically

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.figure import Figure

__all__ = [
    "PlotUnavailable",
    "bars_png",
    "color_for",
    "timeline_png",
]

_GIB = float(1 << 30)
# The least a GiB axis shows (1 MiB): tick labels of a few bytes in GiB would be all zeros.
_MIN_GIB = 2.0**-10
# Downsampled lines keep each bucket's minimum and maximum, so this many buckets (two points
# each) draw a peak of any width: a chart is about 1000 pixels wide.
_MAX_POINTS = 2000
# Markers on one line at most: more would merge into a red band that hides the lines (the
# table counts them all).
_MAX_MARKS = 60

RECORDED_COLOR = "#404040"
_ALLOCATED = "#6e6e6e"  # the recorded allocated bytes, dashed: lighter, it crosses every line
_OOM_COLOR = "#d62728"  # red is kept for failures: no setting gets it
_GRID = "#e3e3e3"
_TEXT_GREY = "#555555"

# Colours of the settings one tries most, the same in every chart and page. The --compare
# settings of plain PyTorch are fixed too, so that its chart (the most columns) repeats none.
_FIXED = {
    "": "#1f77b4",  # PyTorch's defaults: blue
    "expandable_segments:True": "#ff7f0e",  # orange
    "expandable_segments:True,stitching:True": "#9467bd",  # purple
    "planning:True": "#2ca02c",  # green
    "expandable_segments:True,planning:True": "#1b7837",  # dark green
    "expandable_segments:True,stitching:True,planning:True": "#74c476",  # light green
    "max_split_size_mb:128": "#8c564b",  # brown
    "max_split_size_mb:512": "#e377c2",  # pink
    "roundup_power2_divisions:4": "#bcbd22",  # olive
    "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]": "#17becf",  # cyan
    "garbage_collection_threshold:0.6": "#bd9e39",  # mustard
    "garbage_collection_threshold:0.8": "#5254a3",  # indigo
    "expandable_segments:True,roundup_power2_divisions:4": "#d6616b",  # salmon
}
_PLAN = "#00666b"  # the plan of the recording (plan_file:): dark teal
_PLANNING = ["#4d9221", "#a1d76a", "#00441b", "#41ab5d"]  # other settings with planning:True
# Any other settings: one of these, by a checksum of the settings' text. None is one of the
# fixed colours above, nor red, nor grey.
_PALETTE = [
    "#e7298a",  # magenta
    "#a55194",  # orchid
    "#843c39",  # maroon
    "#b15928",  # rust
    "#393b79",  # navy
    "#80b1d3",  # sky blue
    "#c49c94",  # dusty rose
    "#8c6d31",  # bronze
    "#637939",  # moss
    "#7b4173",  # plum
    "#3182bd",  # steel blue
    "#e6ab02",  # amber
    "#66a61e",  # leaf
    "#1b9e77",  # jade
]

_TRUE_FALSE = re.compile(r":(true|false)(?=[,\]]|$)", re.IGNORECASE)


class PlotUnavailable(RuntimeError):  # noqa: N818 - the name replay.py catches
    """matplotlib, which draws the PNG charts, is not installed."""


def _normalise(settings: str) -> str:
    """The key of settings: no whitespace, True/False spelled so, the keys in their order."""
    s = "".join(settings.split()).strip(",")
    return _TRUE_FALSE.sub(lambda m: ":" + m.group(1).capitalize(), s)


def _is_recorded(by: str) -> bool:
    return "recorded" in by.lower()


def color_for(settings: str, by: str) -> str:
    """The '#rrggbb' colour of a column replayed under settings, computed by by.

    The same settings (whitespace and the case of True/False aside) get the same colour in every
    chart and page, whatever else is drawn; PyTorch's recorded column (by "PyTorch (recorded)")
    is dark grey; the settings one tries most have fixed colours (the defaults blue,
    expandable_segments orange, stitching purple, planning greens, a plan of the recording
    teal); any other settings one of a palette of 14, by a checksum of their text.
    """
    if _is_recorded(by):
        return RECORDED_COLOR
    key = _normalise(settings)
    if key in _FIXED:
        return _FIXED[key]
    if key.startswith("plan_file"):
        return _PLAN
    checksum = zlib.crc32(key.encode())
    if "planning:True" in key:
        return _PLANNING[checksum % len(_PLANNING)]
    return _PALETTE[checksum % len(_PALETTE)]


# ---------------------------------------------------------------------------------------------
# Data shared by both renderers


def _downsample(values: Sequence[int], stop: int) -> list[tuple[int, int]]:
    """(index, value) pairs of values[:stop], at most about _MAX_POINTS of them.

    Each bucket of consecutive entries gives its minimum and its maximum, in their order, so no
    peak and no trough is lost; the first and the last entry are always kept.
    """
    stop = min(stop, len(values))
    if stop <= _MAX_POINTS:
        return list(enumerate(values[:stop]))
    per = -(-stop // (_MAX_POINTS // 2))
    out: list[tuple[int, int]] = []
    for start in range(0, stop, per):
        chunk = values[start : min(start + per, stop)]
        lo, hi = min(chunk), max(chunk)
        i_lo, i_hi = start + chunk.index(lo), start + chunk.index(hi)
        if i_lo == i_hi:
            out.append((i_lo, lo))
        else:
            out.extend(sorted([(i_lo, lo), (i_hi, hi)]))
    if out[0][0] != 0:
        out.insert(0, (0, values[0]))
    if out[-1][0] != stop - 1:
        out.append((stop - 1, values[stop - 1]))
    return out


def _thin(indices: Sequence[int], limit: int = _MAX_MARKS) -> list[int]:
    """At most limit of the sorted distinct indices, evenly spread."""
    unique = sorted(set(indices))
    if len(unique) <= limit:
        return unique
    step = len(unique) / limit
    return [unique[int(k * step)] for k in range(limit)]


class _Line:
    """One column as drawn on the timeline."""

    def __init__(self, column: Mapping[str, Any], recorded: bool) -> None:
        series: Sequence[int] = column["series"]
        self.name = str(column.get("name", ""))
        self.by = str(column.get("by", ""))
        self.recorded = recorded
        self.color = color_for(str(column.get("settings", "")), self.by)
        ended = column.get("ended_at")
        self.ended_at: int | None = None
        stop = len(series)
        if ended is not None and 0 <= ended < len(series):
            self.ended_at = int(ended)
            stop = self.ended_at + 1
        self.points = _downsample(series, stop)
        self.last = len(series) - 1
        self.peak = column.get("peak_reserved")
        failed = [i for i in column.get("oom_events") or [] if 0 <= i < stop]
        self.ooms = [(i, series[i]) for i in _thin(failed)]
        allocated = column.get("allocated") if recorded else None
        self.allocated = _downsample(allocated, stop) if allocated else None
        self.width = 2.0

    @property
    def label(self) -> str:
        """The legend's text: name [by], the peak and where the line ended."""
        text = f"{self.name} [{self.by}]"
        if self.peak is not None:
            text += f", peak {self.peak / _GIB:.3f} GiB"
        if self.ended_at is not None:
            text += f", ends at {_event(self.ended_at)}: out of memory"
        return text


def _event(i: int) -> str:
    return f"event {i:,}"


def _lines(report: Mapping[str, Any]) -> tuple[list[_Line], list[Mapping[str, Any]]]:
    """The columns that have a line, in drawing order with their widths, and those that do not.

    The recorded line goes first, widest and light, under the others; then each line a little
    thinner than the one before, so where lines coincide every one still shows as a band.
    """
    lines: list[_Line] = []
    missing: list[Mapping[str, Any]] = []
    for c in report.get("columns", []):
        if c.get("error") is None and c.get("series"):
            lines.append(_Line(c, _is_recorded(str(c.get("by", "")))))
        else:
            missing.append(c)
    lines.sort(key=lambda line: not line.recorded)  # stable: table order otherwise
    others = [line for line in lines if not line.recorded]
    step = 1.2 if len(others) <= 5 else 5.0 / (len(others) - 1)
    for k, line in enumerate(others):
        line.width = 2.0 + step * (len(others) - 1 - k)
    top = max((line.width for line in others), default=2.0)
    for line in lines:
        if line.recorded:
            line.width = top + 5.0
    return lines, missing


def _missing_label(c: Mapping[str, Any]) -> str:
    error = str(c.get("error") or "no series")
    return f"{c.get('name', '')} [{c.get('by', '')}]: not drawn, {_shorten(error, 70)}"


def _shorten(text: str, width: int) -> str:
    return textwrap.shorten(text, width, placeholder=" ...")


def _nice_ticks(hi: float, count: int = 6) -> list[float]:
    """Round ticks from 0 to at least hi, about count of them (steps 1, 2, 2.5, 5 x 10^k)."""
    if not hi > 0:
        return [0.0, 1.0]
    raw = hi / count
    mag = 10.0 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * mag >= raw)
    n = math.ceil(hi / step - 1e-9)
    return [k * step for k in range(n + 1)]


def _tick_text(value: float, ticks: Sequence[float]) -> str:
    """The label of a tick: as many decimals as the step between ticks needs."""
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    decimals = 0
    while decimals < 6 and abs(step * 10**decimals - round(step * 10**decimals)) > 1e-6:
        decimals += 1
    return f"{value:.{decimals}f}"


def _wrap(text: str, width: int) -> str:
    """Text in lines of at most width characters, broken after spaces or commas where it can.

    (textwrap breaks only at spaces: settings, which have none, would be cut anywhere.)
    """
    lines: list[str] = []
    line = ""
    for piece in _PIECES.findall(text):
        if line and len(line) + len(piece.rstrip()) > width:
            lines.append(line.rstrip())
            line = ""
        line += piece.lstrip() if not line else piece
        while len(line.rstrip()) > width:
            lines.append(line[:width])
            line = line[width:]
    lines.append(line.rstrip())
    return "\n".join(x for x in lines if x) or text


_PIECES = re.compile(r"[^\s,]*(?:,|\s+|$)")


def _bar_value(c: Mapping[str, Any]) -> str:
    """The text after a bar: peak reserved, utilization, out-of-memory failures."""
    text = f"{c['peak_reserved'] / _GIB:.3f} GiB"
    if c.get("utilization") is not None:
        text += f"  ·  util {c['utilization']:.3f}"
    if c.get("ooms"):
        n = c["ooms"]
        text += f"  ·  {n} OOM" + ("s" if n != 1 else "")
    return text


def _has_bar(c: Mapping[str, Any]) -> bool:
    return c.get("error") is None and c.get("peak_reserved") is not None


# ---------------------------------------------------------------------------------------------
# PNG charts (matplotlib)


def _matplotlib() -> None:
    """Raises PlotUnavailable when matplotlib cannot be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:
        raise PlotUnavailable("the PNG charts need matplotlib: pip install 'pyc10[plot]'") from e


def _new_figure(width: float, height: float) -> Figure:
    """A figure on its own Agg canvas.

    Not through pyplot: pyplot keeps every figure until closed and matplotlib.use("Agg")
    would switch the backend of the whole program; a canvas of its own needs neither, and the
    figure goes with its last reference.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    # constrained: the layout makes room for every title, label and legend inside the figure
    layout = ConstrainedLayoutEngine(h_pad=0.08, w_pad=0.1)
    fig = Figure(figsize=(width, height), dpi=100, layout=layout, facecolor="white")
    FigureCanvasAgg(fig)
    return fig


def _renderer(fig: Figure) -> RendererAgg:
    """The renderer of fig's Agg canvas (_new_figure's), which measures texts."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = fig.canvas
    assert isinstance(canvas, FigureCanvasAgg)
    # (matplotlib's type hints leave get_renderer untyped)
    renderer: RendererAgg = canvas.get_renderer()  # type: ignore[no-untyped-call, unused-ignore]
    return renderer


def _titles(fig: Figure, ax: Axes, report: Mapping[str, Any]) -> None:
    """The report's title over the figure and its subtitle over the axes, wrapped to fit."""
    room = float(fig.get_figwidth()) - 0.4
    title = _fit(fig, str(report.get("title", "")), 14, "bold", room)
    fig.suptitle(title, fontsize=14, fontweight="bold")
    subtitle = str(report.get("subtitle", ""))
    if subtitle:
        ax.set_title(_fit(fig, subtitle, 10, "normal", room), fontsize=10, color=_TEXT_GREY)


def _fit(fig: Figure, text: str, size: float, weight: str, room: float) -> str:
    """Text wrapped into lines no wider than room inches (measured: glyphs differ in width)."""
    chars = max(int(room * 72 / (size * 0.5)), 10)
    while True:
        wrapped = _wrap(text, chars)
        if chars <= 10 or _text_width(fig, wrapped, size, weight) <= room:
            return wrapped
        chars = int(chars * 0.9)


def _style(ax: Axes) -> None:
    ax.grid(True, color=_GRID, linewidth=0.8)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.tick_params(labelsize=10)


def _gib_axis(ax: Axes, which: str) -> None:
    from matplotlib.ticker import MaxNLocator

    axis = ax.yaxis if which == "y" else ax.xaxis
    axis.set_major_locator(MaxNLocator(nbins=8, steps=[1, 2, 2.5, 5, 10], min_n_ticks=3))


def _draw_line(ax: Axes, line: _Line, z: int) -> list[Any]:
    """Draws line (its allocated bytes, its end, its failures too); the legend's handles."""
    handles = ax.plot(
        [i for i, _ in line.points],
        [v / _GIB for _, v in line.points],
        color=line.color,
        linewidth=line.width,
        alpha=0.35 if line.recorded else 1.0,
        zorder=z,
        solid_joinstyle="round",
        solid_capstyle="butt",
        label=_wrap(line.label, 110),
    )
    if line.allocated:
        handles += ax.plot(
            [i for i, _ in line.allocated],
            [v / _GIB for _, v in line.allocated],
            color=_ALLOCATED,
            linewidth=1.6,
            linestyle=(0, (5, 3)),
            zorder=100,  # thin and dashed: over the lines, hiding none
            label=f"{line.name} [{line.by}]: allocated (requested bytes alive)",
        )
    if line.ended_at is not None:
        i, v = line.points[-1]
        ax.plot([i], [v / _GIB], color=line.color, zorder=120, **_END_MARK)
    if line.ooms:
        xs, ys = [i for i, _ in line.ooms], [v / _GIB for _, v in line.ooms]
        ax.plot(xs, ys, linestyle="none", zorder=130, **_OOM_MARK)
    return list(handles)


_OOM_MARK: dict[str, Any] = {
    "marker": "x",
    "markersize": 9,
    "markeredgewidth": 2.2,
    "color": _OOM_COLOR,
}
_END_MARK: dict[str, Any] = {
    "marker": "o",
    "markersize": 9,
    "markeredgecolor": "black",
    "markeredgewidth": 1.5,
}


def _timeline_figure(report: Mapping[str, Any]) -> Figure:
    """The timeline: reserved GiB after each trace event, one line per column."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter, MaxNLocator
    from matplotlib.transforms import ScaledTranslation

    lines, missing = _lines(report)
    entries = len(lines) + len(missing) + sum(1 for line in lines if line.allocated) + 2
    width = 11.0
    fig = _new_figure(width, 5.6 + 0.27 * entries)
    ax = fig.add_subplot()
    _titles(fig, ax, report)
    _style(ax)
    handles: list[Any] = []
    for z, line in enumerate(lines, start=2):
        handles += _draw_line(ax, line, z)
    handles += [Line2D([], [], color="none", label=_missing_label(c)) for c in missing]
    if any(line.ooms for line in lines):
        label = "an allocation that failed: out of memory"
        handles.append(Line2D([], [], linestyle="none", label=label, **_OOM_MARK))
    if any(line.ended_at is not None for line in lines):
        label = "where a replay ended: out of memory PyTorch did not have"
        handles.append(Line2D([], [], linestyle="none", color="white", label=label, **_END_MARK))
    top = max((v for line in lines for _, v in line.points + (line.allocated or [])), default=0)
    ax.set_xlim(0, max((line.last for line in lines), default=1) or 1)
    ax.set_ylim(0, max(top / _GIB * 1.08, _MIN_GIB))
    _gib_axis(ax, "y")
    ax.xaxis.set_major_locator(MaxNLocator(nbins=9, integer=True, steps=[1, 2, 2.5, 5, 10]))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{int(x):,}"))
    ax.set_xlabel(str(report.get("x_label", "trace event")), fontsize=11)
    ax.set_ylabel("reserved memory (GiB)", fontsize=11)
    if not lines:
        text = "no column could be drawn (the table says why)"
        ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center")
    if handles:
        # under the axes, a fixed 40 points below them: clear of the x axis's label whatever
        # height the layout leaves the axes
        below = ax.transAxes + ScaledTranslation(0, -40 / 72, fig.dpi_scale_trans)
        ax.legend(
            handles=handles,
            loc="upper left",
            bbox_to_anchor=(0.0, 0.0),
            bbox_transform=below,
            frameon=False,
            fontsize=9.5,
            handlelength=3.2,
            borderaxespad=0.0,
        )
    return fig


def _text_width(fig: Figure, text: str, size: float, weight: str = "normal") -> float:
    """The width of text at size points on fig, in inches."""
    renderer = _renderer(fig)
    t = fig.text(0, 0, text, fontsize=size, fontweight=weight)
    width = float(t.get_window_extent(renderer).width / fig.dpi)
    t.remove()
    return width


def _bars_figure(report: Mapping[str, Any]) -> Figure:
    """Peak reserved GiB per column, one horizontal bar each, in table order from the top."""
    columns = list(report.get("columns", []))
    probe = _new_figure(1.0, 1.0)
    label_width = max(
        (
            max(_text_width(probe, str(c.get("name", "")), 10.5), _text_width(probe, by, 9.5))
            for c in columns
            for by in [str(c.get("by", ""))]
        ),
        default=1.0,
    )
    width = max(9.5, label_width + 7.5)
    fig = _new_figure(width, 1.9 + 0.62 * max(len(columns), 1))
    ax = fig.add_subplot()
    _titles(fig, ax, report)
    _style(ax)
    ax.grid(False, axis="y")
    ys = list(range(len(columns)))
    values = [c["peak_reserved"] / _GIB if _has_bar(c) else 0.0 for c in columns]
    colors = [color_for(str(c.get("settings", "")), str(c.get("by", ""))) for c in columns]
    ax.barh(ys, values, height=0.62, color=colors, zorder=3)
    ax.set_yticks(ys, [""] * len(ys))
    ax.set_ylim(max(len(columns), 1) - 0.5, -0.5)  # the first column on top
    ax.tick_params(axis="y", length=0)
    # each label two texts, the name over who computed it (tick labels have one style)
    for y, c in zip(ys, columns, strict=True):
        for text, dy, size, color in (
            (str(c.get("name", "")), 7.0, 10.5, "black" if _has_bar(c) else _TEXT_GREY),
            (str(c.get("by", "")), -7.5, 9.5, _TEXT_GREY),
        ):
            ax.annotate(
                text,
                (0, y),
                xycoords=("axes fraction", "data"),
                xytext=(-8, dy),
                textcoords="offset points",
                ha="right",
                va="center",
                fontsize=size,
                color=color,
                annotation_clip=False,
            )
    texts = []
    for y, c, v in zip(ys, columns, values, strict=True):
        text = _bar_value(c) if _has_bar(c) else "n/a: " + _shorten(str(c.get("error")), 60)
        texts.append(
            ax.annotate(
                text,
                (v, y),
                xytext=(6, 0),
                textcoords="offset points",
                va="center",
                fontsize=10,
                color="black" if _has_bar(c) else _TEXT_GREY,
                annotation_clip=False,
                zorder=4,
                # over the dashed line of the recorded peak
                bbox={"boxstyle": "square,pad=0.15", "facecolor": "white", "edgecolor": "none"},
            )
        )
    recorded = [c for c in columns if _has_bar(c) and _is_recorded(str(c.get("by", "")))]
    if recorded:
        ax.axvline(
            recorded[0]["peak_reserved"] / _GIB,
            color=RECORDED_COLOR,
            linewidth=1.2,
            linestyle=(0, (4, 3)),
            zorder=2,
        )
    ax.set_xlabel("peak reserved memory (GiB)", fontsize=11)
    _gib_axis(ax, "x")
    # the texts after the bars inside the axes: widen the GiB range until the longest ends
    # short of the right edge (their width is known only once laid out)
    top = max([*values, _MIN_GIB])
    ax.set_xlim(0, top)
    renderer = _renderer(fig)
    fig.canvas.draw()
    box = ax.get_window_extent(renderer)
    pad = 6 * fig.dpi / 72
    need = top
    for t, v in zip(texts, values, strict=True):
        room = box.width - pad - t.get_window_extent(renderer).width - 4
        need = max(need, v * box.width / room if room > 0 else 3 * top)
    ax.set_xlim(0, need * 1.04)
    return fig


def _texts_outside(fig: Figure) -> list[str]:
    """The texts of fig drawn (partly) outside it: tick labels, titles, legend, annotations.

    For the tests: an empty list says nothing of the chart is cut when it is saved.
    """
    from matplotlib.text import Text

    renderer = _renderer(fig)
    fig.canvas.draw()
    # an axis keeps Text objects for ticks outside its view too, never drawn: not those
    hidden = set()
    for ax in fig.axes:
        for axis, limits in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            lo, hi = min(limits), max(limits)
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                slack = (hi - lo) * 1e-9
                if not lo - slack <= tick.get_loc() <= hi + slack:
                    hidden |= {id(tick.label1), id(tick.label2)}
    box = fig.bbox
    out = []
    for t in fig.findobj(Text):
        assert isinstance(t, Text)
        if id(t) in hidden or not t.get_visible() or not t.get_text():
            continue
        bb = t.get_window_extent(renderer)
        if min(bb.x0 - box.x0, bb.y0 - box.y0, box.x1 - bb.x1, box.y1 - bb.y1) < -0.5:
            out.append(t.get_text())
    return out


def _save(path: str, fig: Figure) -> None:
    buf = io.BytesIO()
    # the layout keeps every text inside the figure; "tight" is a second guard and trims
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight", pad_inches=0.2)
    write_atomically(path, buf.getvalue())


def timeline_png(path: str, report: Mapping[str, Any]) -> None:
    """Writes the timeline of the report to path as a PNG.

    Reserved GiB over the trace events, a line per column that has a series (PyTorch's
    recorded line wide and light underneath, with its allocated bytes dashed), a red x where
    an allocation failed, a dot where a replay ended. Raises PlotUnavailable without
    matplotlib, OSError when path cannot be written.
    """
    _matplotlib()
    _save(path, _timeline_figure(report))


def bars_png(path: str, report: Mapping[str, Any]) -> None:
    """Writes the peak reserved GiB of each column to path as a PNG of horizontal bars.

    Each bar in its column's colour (color_for) with its value and utilization after it; a
    column without a figure is listed with "n/a". Raises PlotUnavailable without matplotlib,
    OSError when path cannot be written.
    """
    _matplotlib()
    _save(path, _bars_figure(report))


# ---------------------------------------------------------------------------------------------
# The HTML page (inline SVG)
