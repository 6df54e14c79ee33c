"""Grouped bar charts as PNG files with numpy and zlib only (no plotting library is a dependency).

A 3x5 pixel font (upper case, digits and a little punctuation), scaled up, labels the chart.
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Callable

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
}  # fmt: skip

PALETTE = [
    (70, 110, 180), (230, 140, 50), (90, 170, 90), (200, 70, 70), (150, 60, 190), (0, 150, 160),
    (120, 120, 120),
]  # fmt: skip


def text(
    img: np.ndarray, x: int, y: int, s: str, *, scale: int = 2, color: tuple = (0, 0, 0)
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


def _scale(floor: float, vmax: float, pixels: int) -> Callable[[float], int]:
    """Bar height in pixels of a value on an axis from floor to vmax."""
    return lambda v: int(max(0.0, v - floor) / (vmax - floor) * pixels)


def bar_panels(
    path: str,
    title: str,
    groups: list[str],
    series: list[str],
    panels: list[tuple[str, list[list[float]], float | None]],
    *,
    floor: float = 0.0,
) -> None:
    """One panel per (label, values[series][group], target line or None), bars grouped by
    group, one colour per series, each bar labelled with its value; the axis starts at floor
    (ratios near 1 read better from 0.9 up); a legend names the series."""
    panel_w, panel_h, margin = 120 + max(110, 30 + 22 * len(series)) * len(groups), 300, 60
    width = panel_w + 2 * margin
    height = 90 + len(panels) * (panel_h + 70)
    img = np.full((height, width, 3), 255, dtype=np.uint8)
    text(img, margin, 16, title, scale=3)
    for k, name in enumerate(series):
        x = margin + k * 240
        img[56:68, x : x + 12] = PALETTE[k % len(PALETTE)]
        text(img, x + 18, 57, name)
    for p, (label, values, target) in enumerate(panels):
        top = 90 + p * (panel_h + 70) + 30
        text(img, margin, top - 26, label)
        finite = [v for row in values for v in row if not math.isnan(v)]
        if target:
            finite.append(target)
        vmax = floor + (max([*finite, floor + 1e-9]) - floor) * 1.15
        left, bottom = margin + 50, top + panel_h
        height = _scale(floor, vmax, panel_h)

        img[top:bottom, left - 2 : left] = 0
        img[bottom : bottom + 2, left : margin + panel_w] = 0
        for tick in np.linspace(floor, vmax, 5):
            y = bottom - height(tick)
            img[y, left - 6 : left] = 0
            text(img, margin - 8, y - 5, f"{tick:.2f}")
        if target is not None:
            y = bottom - height(target)
            img[y : y + 2, left : margin + panel_w : 2] = (200, 0, 0)
            text(img, margin + panel_w - text_width("TARGET"), y - 14, "target", color=(200, 0, 0))
        group_w = (panel_w - 60) // len(groups)
        bar_w = max(4, (group_w - 20) // len(series))
        for g, group in enumerate(groups):
            x0 = left + 10 + g * group_w
            for k in range(len(series)):
                v = values[k][g]
                if math.isnan(v):  # not measured
                    continue
                h = height(v)
                x = x0 + k * bar_w
                img[bottom - h : bottom, x : x + bar_w - 2] = PALETTE[k % len(PALETTE)]
                small = bar_w < 34  # a label as wide as its bar
                text(img, x, bottom - h - (8 if small else 14), f"{v:.2f}", scale=1 if small else 2)
            text(img, x0, bottom + 8, group[:12], scale=2)
    write_png(path, img)
