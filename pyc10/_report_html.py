"""The self-contained HTML page of ``python -m pyc10.replay --html``.

The timeline and the bars as inline SVG, the table and the answer, from the report dict of
pyc10/_report.py (its colours, lines and ticks). No network and no plotting library: the page
is one string.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any

from ._report import (
    _ALLOCATED,
    _GIB,
    _GRID,
    _MIN_GIB,
    _OOM_COLOR,
    _TEXT_GREY,
    RECORDED_COLOR,
    _bar_value,
    _has_bar,
    _is_recorded,
    _Line,
    _lines,
    _missing_label,
    _nice_ticks,
    _shorten,
    _tick_text,
    color_for,
)

__all__ = ["html_page"]

_FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', Arial, sans-serif"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _text_px(text: str, size: float) -> float:
    """A generous estimate of text's width in pixels (SVG text cannot be measured here)."""
    return len(text) * size * 0.62


def _f(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _svg_legend(lines: list[_Line], missing: list[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """The timeline's legend: (a swatch drawn from x=0 to 40 at y=0, its text) per entry."""
    legend: list[tuple[str, str]] = []
    for line in lines:
        opacity = ' stroke-opacity="0.35"' if line.recorded else ""
        swatch = (
            f'<line x1="0" x2="40" y1="0" y2="0" stroke="{line.color}"'
            f' stroke-width="{_f(min(line.width, 12))}"{opacity}/>'
        )
        legend.append((swatch, line.label))
        if line.allocated:
            dash = (
                f'<line x1="0" x2="40" y1="0" y2="0" stroke="{_ALLOCATED}"'
                ' stroke-width="2" stroke-dasharray="6 4"/>'
            )
            legend.append((dash, f"{line.name} [{line.by}]: allocated (requested bytes alive)"))
    legend += [("", _missing_label(c)) for c in missing]
    if any(line.ooms for line in lines):
        legend.append((_x_mark(20, 0), "an allocation that failed: out of memory"))
    if any(line.ended_at is not None for line in lines):
        legend.append((_dot(20, 0, "#ffffff"), "where a replay ended: out of memory"))
    return legend


def _svg_timeline(report: Mapping[str, Any]) -> str:
    lines, missing = _lines(report)
    left, right, top, plot_h = 78.0, 24.0, 16.0, 380.0
    legend = _svg_legend(lines, missing)
    width = max(1100.0, left + 56 + max((_text_px(t, 13) for _, t in legend), default=0))
    plot_w = width - left - right
    height = top + plot_h + 64 + 24 * len(legend) + 8
    last = max((line.last for line in lines), default=1) or 1
    peak = 0.0
    for line in lines:
        peak = max(peak, *(v / _GIB for _, v in line.points))
        if line.allocated:
            peak = max(peak, *(v / _GIB for _, v in line.allocated))
    yticks = _nice_ticks(max(peak * 1.04, _MIN_GIB))
    ymax = yticks[-1]

    def sx(i: float) -> float:
        return left + i / last * plot_w

    def sy(gib: float) -> float:
        return top + plot_h - gib / ymax * plot_h

    out = [
        f'<svg id="timeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_f(width)}'
        f' {_f(height)}" width="100%" role="img" aria-labelledby="timeline-title"'
        f' font-family="{_e(_FONT)}">',
        '<title id="timeline-title">reserved memory (GiB) after each trace event</title>',
        f'<rect width="{_f(width)}" height="{_f(height)}" fill="#ffffff"/>',
    ]
    for t in yticks:
        y = sy(t)
        out.append(
            f'<line x1="{_f(left)}" x2="{_f(left + plot_w)}" y1="{_f(y)}" y2="{_f(y)}"'
            f' stroke="{_GRID}"/><text x="{_f(left - 8)}" y="{_f(y + 4)}"'
            f' text-anchor="end" font-size="12">{_tick_text(t, yticks)}</text>'
        )
    for t in _nice_ticks(last, 8):
        if t > last:
            break
        x = sx(t)
        out.append(
            f'<line x1="{_f(x)}" x2="{_f(x)}" y1="{_f(top)}" y2="{_f(top + plot_h)}"'
            f' stroke="{_GRID}"/><text x="{_f(x)}" y="{_f(top + plot_h + 18)}"'
            f' text-anchor="middle" font-size="12">{int(t):,}</text>'
        )
    out.append(
        f'<line x1="{_f(left)}" x2="{_f(left)}" y1="{_f(top)}" y2="{_f(top + plot_h)}"'
        f' stroke="#333"/><line x1="{_f(left)}" x2="{_f(left + plot_w)}"'
        f' y1="{_f(top + plot_h)}" y2="{_f(top + plot_h)}" stroke="#333"/>'
    )
    out.append(
        f'<text x="{_f(left + plot_w / 2)}" y="{_f(top + plot_h + 42)}"'
        f' text-anchor="middle" font-size="13">{_e(report.get("x_label", ""))}</text>'
        f'<text transform="translate(18 {_f(top + plot_h / 2)}) rotate(-90)"'
        ' text-anchor="middle" font-size="13">reserved memory (GiB)</text>'
    )
    marks: list[str] = []
    for line in lines:
        points = " ".join(f"{_f(sx(i))},{_f(sy(v / _GIB))}" for i, v in line.points)
        opacity = ' stroke-opacity="0.35"' if line.recorded else ""
        out.append(
            f'<polyline fill="none" stroke="{line.color}"'
            f' stroke-width="{_f(line.width)}"{opacity} stroke-linejoin="round"'
            f' points="{points}"><title>{_e(line.label)}</title></polyline>'
        )
        if line.allocated:
            points = " ".join(f"{_f(sx(i))},{_f(sy(v / _GIB))}" for i, v in line.allocated)
            marks.append(
                f'<polyline fill="none" stroke="{_ALLOCATED}" stroke-width="2"'
                f' stroke-dasharray="6 4" points="{points}"><title>{_e(line.name)}:'
                " allocated</title></polyline>"
            )
        if line.ended_at is not None:
            i, v = line.points[-1]
            marks.append(_dot(sx(i), sy(v / _GIB), line.color, f"{line.label}"))
        marks += [_x_mark(sx(i), sy(v / _GIB)) for i, v in line.ooms]
    out += marks
    y = top + plot_h + 72
    for swatch, text in legend:
        out.append(
            f'<g transform="translate({_f(left)} {_f(y)})">{swatch}<text x="52" y="4.5"'
            f' font-size="13">{_e(text)}</text></g>'
        )
        y += 24
    out.append("</svg>")
    return "\n".join(out)


def _x_mark(x: float, y: float) -> str:
    return (
        f'<path d="M{_f(x - 5)} {_f(y - 5)}L{_f(x + 5)} {_f(y + 5)}M{_f(x - 5)} {_f(y + 5)}'
        f'L{_f(x + 5)} {_f(y - 5)}" stroke="{_OOM_COLOR}" stroke-width="2.5"/>'
    )


def _dot(x: float, y: float, color: str, title: str = "") -> str:
    tip = f"<title>{_e(title)}</title>" if title else ""
    return (
        f'<circle cx="{_f(x)}" cy="{_f(y)}" r="6" fill="{color}" stroke="#000"'
        f' stroke-width="1.5">{tip}</circle>'
    )


def _svg_bars(report: Mapping[str, Any]) -> str:
    columns = list(report.get("columns", []))
    left, right, top, row = 16.0, 24.0, 12.0, 52.0
    texts = [_bar_value(c) if _has_bar(c) else "n/a" for c in columns]
    labels = [f"{c.get('name', '')}  [{c.get('by', '')}]" for c in columns]
    text_room = max((_text_px(t, 13) for t in texts), default=0) + 16
    width = max(1100.0, left + right + max((_text_px(s, 14) for s in labels), default=0))
    plot_w = width - left - right - text_room
    peak = max((c["peak_reserved"] / _GIB for c in columns if _has_bar(c)), default=0.0)
    ticks = _nice_ticks(max(peak, _MIN_GIB))
    xmax = ticks[-1]
    height = top + row * len(columns) + 52

    def sx(gib: float) -> float:
        return left + gib / xmax * plot_w

    bottom = top + row * len(columns)
    out = [
        f'<svg id="bars" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_f(width)}'
        f' {_f(height)}" width="100%" role="img" aria-labelledby="bars-title"'
        f' font-family="{_e(_FONT)}">',
        '<title id="bars-title">peak reserved memory (GiB) of each column</title>',
        f'<rect width="{_f(width)}" height="{_f(height)}" fill="#ffffff"/>',
    ]
    for t in ticks:
        x = sx(t)
        out.append(
            f'<line x1="{_f(x)}" x2="{_f(x)}" y1="{_f(top)}" y2="{_f(bottom)}"'
            f' stroke="{_GRID}"/><text x="{_f(x)}" y="{_f(bottom + 18)}"'
            f' text-anchor="middle" font-size="12">{_tick_text(t, ticks)}</text>'
        )
    out.append(
        f'<text x="{_f(left + plot_w / 2)}" y="{_f(bottom + 42)}" text-anchor="middle"'
        ' font-size="13">peak reserved memory (GiB)</text>'
    )
    recorded = [c for c in columns if _has_bar(c) and _is_recorded(str(c.get("by", "")))]
    if recorded:  # under the bars and texts
        x = sx(recorded[0]["peak_reserved"] / _GIB)
        out.append(
            f'<line x1="{_f(x)}" x2="{_f(x)}" y1="{_f(top)}" y2="{_f(bottom)}"'
            f' stroke="{RECORDED_COLOR}" stroke-dasharray="5 4"/>'
        )
    for k, c in enumerate(columns):
        y = top + k * row
        name, by = _e(c.get("name", "")), _e(c.get("by", ""))
        grey = "" if _has_bar(c) else f' fill="{_TEXT_GREY}"'
        out.append(
            f'<text x="{_f(left)}" y="{_f(y + 15)}" font-size="14"{grey}>'
            f'<tspan font-weight="600">{name}</tspan><tspan fill="{_TEXT_GREY}">'
            f"  [{by}]</tspan></text>"
        )
        if _has_bar(c):
            v = c["peak_reserved"] / _GIB
            color = color_for(str(c.get("settings", "")), str(c.get("by", "")))
            out.append(
                f'<rect x="{_f(left)}" y="{_f(y + 22)}" width="{_f(sx(v) - left)}"'
                f' height="22" fill="{color}"><title>{name}: {_e(_bar_value(c))}'
                f'</title></rect><text x="{_f(sx(v) + 8)}" y="{_f(y + 37.5)}"'
                f' font-size="13" stroke="#fff" stroke-width="5" paint-order="stroke">'
                f"{_e(_bar_value(c))}</text>"
            )
        else:
            error = _e(_shorten(str(c.get("error") or "no figure"), 110))
            out.append(
                f'<text x="{_f(left)}" y="{_f(y + 37.5)}" font-size="13"'
                f' fill="{_TEXT_GREY}">n/a: {error}</text>'
            )
    out.append("</svg>")
    return "\n".join(out)


_BREAK = re.compile(r"([,:])")
_NUM = ' class="num"'
_NUMBER = re.compile(r"^[-+]?[\d.,]+( ?(GiB|MiB|KiB|B|%))?( \(.*\))?$|^-$")

_CSS = """
body { font-family: %s; color: #1a1a1a; background: #fafafa; margin: 0; }
main { max-width: 1200px; margin: 0 auto; padding: 24px 28px 48px; background: #fff; }
h1 { font-size: 1.55em; margin: 0 0 4px; overflow-wrap: anywhere; }
.subtitle { color: #555; margin: 0 0 20px; }
.answer { border-left: 6px solid #1f77b4; background: #eef5fb; padding: 12px 18px;
          margin: 0 0 28px; font-size: 1.15em; }
.answer p { margin: 4px 0; overflow-wrap: anywhere; }
h2 { font-size: 1.15em; margin: 32px 0 10px; }
figure { margin: 0; }
svg { display: block; max-width: 100%%; height: auto; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.95em; }
th, td { padding: 5px 12px; border-bottom: 1px solid #e3e3e3; text-align: left;
         white-space: nowrap; }
th { background: #f2f2f2; white-space: normal; vertical-align: bottom; min-width: 5em; }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; }
.notes li { margin: 3px 0; overflow-wrap: anywhere; }
footer { color: #777; font-size: 0.85em; margin-top: 36px; }
""" % (_FONT,)  # noqa: UP031 - the CSS's braces would all need doubling in an f-string


def _breakable(text: str) -> str:
    """A header cell's text, escaped, free to break after its commas and colons only."""
    return _BREAK.sub(r"\1<wbr>", _e(text))


def _table_html(table: Mapping[str, Any]) -> str:
    """The text table as an HTML table, numbers (and their headers) right-aligned."""
    header = [str(h) for h in table.get("header", [])]
    rows = [[str(cell) for cell in row] for row in table.get("rows", [])]
    width = max([len(header), *(len(r) for r in rows)])
    # a column of numbers ("-" where there is none): every cell but the first column's
    numeric = [
        k > 0
        and any(k < len(r) for r in rows)
        and all(_NUMBER.match(r[k].strip()) for r in rows if k < len(r))
        for k in range(width)
    ]
    out = ['<div class="table-wrap"><table id="figures">']
    if header:
        cells = "".join(
            f"<th{_NUM if numeric[k] else ''}>{_breakable(h)}</th>" for k, h in enumerate(header)
        )
        out.append(f"<thead><tr>{cells}</tr></thead>")
    out.append("<tbody>")
    for row in rows:
        cells = "".join(
            f"<td{_NUM if numeric[k] else ''}>{_e(cell)}</td>" for k, cell in enumerate(row)
        )
        out.append(f"<tr>{cells}</tr>")
    out.append("</tbody></table></div>")
    return "\n".join(out)


def html_page(report: Mapping[str, Any]) -> str:
    """The report as one self-contained HTML5 page.

    Title, subtitle, the answer, the timeline (svg#timeline) and the bars (svg#bars) as inline
    SVG in the colours of the PNG charts, the table (table#figures) and the notes; nothing
    loaded from elsewhere, every text escaped. Lines are downsampled (each bucket's minimum and
    maximum kept), so a page stays a few hundred kilobytes whatever the trace's length.
    """
    title = str(report.get("title", ""))
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body><main>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="subtitle">{_e(report.get("subtitle", ""))}</p>',
    ]
    answer = [str(s) for s in report.get("answer", [])]
    if answer:
        parts.append('<section class="answer">')
        parts += [f"<p>{_e(s)}</p>" for s in answer]
        parts.append("</section>")
    parts += [
        "<h2>Reserved memory over the trace</h2>",
        f"<figure>{_svg_timeline(report)}</figure>",
        "<h2>Peak reserved memory</h2>",
        f"<figure>{_svg_bars(report)}</figure>",
        "<h2>Figures</h2>",
        _table_html(report.get("table", {})),
    ]
    notes = [str(s) for s in report.get("notes", [])]
    if notes:
        parts.append('<h2>Notes</h2><ul class="notes">')
        parts += [f"<li>{_e(s)}</li>" for s in notes]
        parts.append("</ul>")
    parts += ["<footer>python -m pyc10.replay</footer>", "</main></body>", "</html>", ""]
    return "\n".join(parts)
