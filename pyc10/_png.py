"""Line charts as PNG files with numpy and zlib only (matplotlib is not a dependency).

For ``python -m pyc10.replay --plot``; the font and the PNG writer are bench/png_chart.py's.

A 3x5 pixel font (upper case, digits and a little punctuation), scaled up, labels the chart.
"""

from __future__ import annotations

import math
import struct
import zlib
from dataclasses import dataclass, field

import numpy as np

_FONT = {
    "A": "010101111101101", "B": "110101110101110", "C": "011100100100011",
    "D": "110101101101110", "E": "111100110100111", "F": "111100110100100",
    "G": "011100101101011", "H": "101101111101101", "I": "111010010010111",
    "J": "001001001101010", "K": "101101110101101", "L": "100100100100111",
    "M": "101111111101101", "N": "110101101101101", "O": "010101101101010",
    "P": "110101110100100", "Q": "010101101110011", "R": "110101110101101",
    "S": "011100010001110", "T": "111010010010010", "U": "101101101101111",
    "V": "101101101101010", "W": "101101111111101", "X": "101101010101101",
    "Y": "101101010010010", "Z": "111001010100111", "0": "111101101101111",
    "1": "010110010010111", "2": "110001010100111", "3": "110001010001110",
    "4": "101101111001001", "5": "111100110001110", "6": "011100111101111",
    "7": "111001010010010", "8": "111101111101111", "9": "111101111001110",
    ".": "000000000000010", ":": "000010000010000", "/": "001001010100100",
    "-": "000000111000000", "=": "000111000111000", "(": "010100100100010",
    ")": "010001001001010", "<": "001010100010001", ">": "100010001010100",
    " ": "000000000000000", "_": "000000000000111", "+": "000010111010000",
    ",": "000000000010100",
}  # fmt: skip

PALETTE = [(70, 110, 180), (120, 120, 120), (230, 140, 50), (90, 170, 90), (200, 70, 70)]
OOM_RED = (220, 30, 30)

# Colours of the settings one tries most, the same in every chart; others get a colour of
# their own from their text (setting_color), so no setting's colour depends on what else is drawn.
_KNOWN = {
    "": (50, 100, 200),  # PyTorch's defaults: blue
    "expandable_segments:true": (235, 130, 30),  # orange
    "expandable_segments:false": (50, 100, 200),
}


# Other settings: a colour of this list picked by a checksum of the settings' text.
_MORE = [
    (40, 160, 70),  # green
    (150, 60, 190),  # purple
    (0, 150, 160),  # teal
    (140, 90, 40),  # brown
    (210, 60, 150),  # magenta
    (120, 140, 20),  # olive
    (90, 90, 200),  # indigo
    (230, 190, 0),  # gold
]


def setting_color(settings: str) -> tuple[int, int, int]:
    """The colour of a series replayed under settings.

    Fixed per settings text (spaces and case aside), whatever else the chart holds.
    """
    key = settings.replace(" ", "").lower()
    return _KNOWN.get(key) or _MORE[zlib.crc32(key.encode()) % len(_MORE)]


def text(
    img: np.ndarray,
    x: int,
    y: int,
    s: str,
    *,
    scale: int = 2,
    color: tuple[int, int, int] = (0, 0, 0),
) -> None:
    """Draws s with its top-left corner at (x, y)."""
    for ch in s.upper():
        glyph = _FONT.get(ch, _FONT[" "])
        for i, bit in enumerate(glyph):
            if bit == "1":
                r, c = divmod(i, 3)
                y0, x0 = y + r * scale, x + c * scale
                img[y0 : y0 + scale, x0 : x0 + scale] = color
        x += 4 * scale


def text_width(s: str, scale: int = 2) -> int:
    """Width in pixels of s drawn by text()."""
    return len(s) * 4 * scale


def write_png(path: str, img: np.ndarray) -> None:
    """Writes an RGB uint8 image (height x width x 3)."""
    h, w, _ = img.shape
    raw = b"".join(b"\x00" + img[row].tobytes() for row in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    png = b"\x89PNG\r\n\x1a\n"
    png += chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 9))
    png += chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(png)


@dataclass
class Series:
    """One line of a chart: a value per step, drawn width pixels thick, dashed or not.

    marks are the steps to flag (out-of-memory failures), drawn as red diamonds on the line.
    """

    name: str
    values: list[float]
    color: tuple[int, int, int]
    width: int = 2
    dashed: bool = False
    marks: list[int] = field(default_factory=list)


def nice_ticks(vmax: float, count: int = 5) -> list[float]:
    """Round tick values from 0 to at least vmax: steps of 1, 2, 2.5 or 5 times a power of ten."""
    if not vmax > 0:
        return [0.0, 1.0]
    raw = vmax / count
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    n = math.ceil(vmax / step - 1e-9)
    return [i * step for i in range(n + 1)]


def tick_label(v: float) -> str:
    """A tick value as short text: 2.5, 40, 120K, 1.5M."""
    for div, suffix in ((1e6, "M"), (1e3, "K")):
        if v >= div and v % (div / 10) == 0:
            return f"{v / div:g}{suffix}"
    return f"{v:g}" if v == round(v, 6) else f"{v:.3g}"


def _column_spans(v: np.ndarray, plot_w: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pixel column the lowest, highest and last value of the steps it covers (NaN: none)."""
    cols = np.minimum((np.arange(len(v)) * plot_w) // max(1, len(v)), plot_w - 1)
    lo = np.full(plot_w, np.nan)
    hi = np.full(plot_w, np.nan)
    last = np.full(plot_w, np.nan)
    np.fmin.at(lo, cols, v)
    np.fmax.at(hi, cols, v)
    last[cols] = v  # the last assignment per column wins
    return lo, hi, last


def line_chart(
    path: str,
    title: str,
    lines: list[Series],
    *,
    xlabel: str,
    ylabel: str,
    width: int = 960,
) -> None:
    """The series over the same steps (steps across, values up from 0) as a PNG in path.

    Drawn in order, so a thick line first shows around thinner ones drawn on it where they
    agree; axes with round ticks and their labels, a legend, and out-of-memory marks.
    """
    plot_w, plot_h = width - 110, 380
    legend = len(lines) + (1 if any(s.marks for s in lines) else 0)
    top = 80 + 24 * legend
    img = np.full((top + plot_h + 64, width, 3), 255, dtype=np.uint8)
    text(img, _LEFT, 16, title, scale=3)
    _legend(img, lines)
    steps = max([len(s.values) for s in lines] + [1])
    ticks = nice_ticks(max([max(s.values) for s in lines if s.values] + [0.0]))
    box = _Box(top, plot_w, plot_h, ticks[-1], steps)
    _axes(img, box, ticks, xlabel, ylabel)
    for s in lines:
        _draw(img, box, s)
    for s in lines:
        for k in s.marks:
            if 0 <= k < len(s.values):
                _diamond(img, box.x(k), box.y(s.values[k]), OOM_RED)
    img[top : top + plot_h, _LEFT - 2 : _LEFT] = 0  # the axes over everything
    img[top + plot_h : top + plot_h + 2, _LEFT - 2 : _LEFT + plot_w] = 0
    write_png(path, img)


_LEFT = 80  # the plot's left edge: room for the y tick labels


@dataclass
class _Box:
    """The plot area: its top row, width and height in pixels, and the values it spans."""

    top: int
    w: int
    h: int
    vmax: float
    steps: int

    def y(self, value: float) -> int:
        """The pixel row of value."""
        return self.top + self.h - 1 - round(value / self.vmax * (self.h - 1))

    def x(self, step: float) -> int:
        """The pixel column of step."""
        return _LEFT + min(int(step * self.w / self.steps), self.w - 1)


def _legend(img: np.ndarray, lines: list[Series]) -> None:
    for k, s in enumerate(lines):
        y = 56 + 24 * k
        img[y + 4 : y + 4 + min(s.width, 8), _LEFT : _LEFT + 24] = s.color
        if s.dashed:
            img[y + 4 : y + 12, _LEFT + 8 : _LEFT + 16] = 255
        text(img, _LEFT + 32, y + 1, s.name)
    if any(s.marks for s in lines):
        y = 56 + 24 * len(lines)
        _diamond(img, _LEFT + 12, y + 6, OOM_RED)
        text(img, _LEFT + 32, y + 1, "out of memory")


def _axes(img: np.ndarray, box: _Box, ticks: list[float], xlabel: str, ylabel: str) -> None:
    for tick in ticks:  # y: grid lines and labels
        y = box.y(tick)
        img[y, _LEFT : _LEFT + box.w] = (225, 225, 225)
        img[y, _LEFT - 6 : _LEFT] = 0
        label = tick_label(tick)
        text(img, _LEFT - 10 - text_width(label), y - 5, label)
    text(img, _LEFT - 10 - text_width(ylabel), box.top - 26, ylabel)
    bottom = box.top + box.h
    last = max(box.steps - 1, 1)
    for tick in nice_ticks(last, 8):  # x: ticks and labels
        if tick <= last:
            x = box.x(tick)
            img[bottom : bottom + 6, x] = 0
            label = tick_label(tick)
            text(img, x - text_width(label) // 2, bottom + 10, label)
    text(img, _LEFT + (box.w - text_width(xlabel)) // 2, bottom + 36, xlabel)


def _draw(img: np.ndarray, box: _Box, s: Series) -> None:
    """The series as a vertical run per pixel column.

    Each run spans the column's lowest to highest value (and the last value of the column
    before), so no step's value is lost however many steps share a pixel.
    """
    if not s.values:
        return
    lo, hi, last = _column_spans(np.asarray(s.values, dtype=float), box.w)
    prev: float | None = None
    half = s.width // 2
    for x in range(box.w):
        if np.isnan(hi[x]):
            continue
        y_lo = box.y(min(lo[x], prev) if prev is not None else lo[x])
        y_hi = box.y(max(hi[x], prev) if prev is not None else hi[x])
        prev = float(last[x])
        if s.dashed and (x // 8) % 2:
            continue
        y0, y1 = max(box.top, y_hi - half), min(box.top + box.h - 1, y_lo + s.width - half - 1)
        img[y0 : y1 + 1, _LEFT + max(0, x - half) : _LEFT + x - half + s.width] = s.color


def _diamond(img: np.ndarray, cx: int, cy: int, color: tuple[int, int, int]) -> None:
    h, w, _ = img.shape
    for dy in range(-6, 7):
        r = 6 - abs(dy)
        y = cy + dy
        if 0 <= y < h:
            img[y, max(0, cx - r) : min(w, cx + r + 1)] = color


def bar_chart(
    path: str,
    title: str,
    bars: list[tuple[str, float, tuple[int, int, int], str]],
    *,
    xlabel: str,
) -> None:
    """Horizontal bars (label, value, colour, note drawn after the bar) from 0 as a PNG in path."""
    row_h, left, bar_w = 30, 16 + max([text_width(b[0]) for b in bars] + [0]) + 12, 560
    width = left + bar_w + 16 + max([text_width(b[3]) for b in bars] + [0]) + 16
    height = 70 + row_h * len(bars) + 50
    img = np.full((height, max(width, 640), 3), 255, dtype=np.uint8)
    text(img, 16, 16, title, scale=3)
    vmax = max([b[1] for b in bars if not math.isnan(b[1])] + [0.0])
    ticks = nice_ticks(vmax)
    top = 60
    for k, (label, value, color, note) in enumerate(bars):
        y = top + k * row_h
        text(img, 16, y + 8, label)
        n = 0 if math.isnan(value) else round(value / ticks[-1] * bar_w)
        img[y + 4 : y + row_h - 4, left : left + n] = color
        text(img, left + n + 8, y + 8, note)
    bottom = top + row_h * len(bars) + 4
    img[top - 4 : bottom, left - 2 : left] = 0
    img[bottom : bottom + 2, left - 2 : left + bar_w] = 0
    for tick in ticks:
        x = left + round(tick / ticks[-1] * bar_w)
        img[bottom + 2 : bottom + 8, x : x + 2] = 0
        text(img, x - text_width(tick_label(tick)) // 2, bottom + 12, tick_label(tick))
    text(img, left + bar_w // 2 - text_width(xlabel) // 2, bottom + 30, xlabel)
    write_png(path, img)
