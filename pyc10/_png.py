"""Line charts as PNG files with numpy and zlib only (matplotlib is not a dependency).

For ``python -m pyc10.replay --plot``; the font and the PNG writer are bench/png_chart.py's.

A 3x5 pixel font (upper case, digits and a little punctuation), scaled up, labels the chart.
"""

from __future__ import annotations

import struct
import zlib

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

PALETTE = [(70, 110, 180), (120, 120, 120), (230, 140, 50), (90, 170, 90), (200, 70, 70)]


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


def line_chart(
    path: str, title: str, lines: list[tuple[str, list[float]]], width: int = 900
) -> None:
    """One line per (name, values over the same steps): steps across, values up from 0.

    The series are resampled to the plot's width (each column its maximum); a legend names them.
    """
    margin, plot_h = 70, 360
    plot_w = width - 2 * margin
    height = 100 + 24 * len(lines) + plot_h + 40
    img = np.full((height, width, 3), 255, dtype=np.uint8)
    text(img, margin, 16, title, scale=3)
    for k, (name, _) in enumerate(lines):
        y = 56 + 24 * k
        img[y : y + 12, margin : margin + 12] = PALETTE[k % len(PALETTE)]
        text(img, margin + 18, y + 1, name)
    top = 70 + 24 * len(lines) + 20
    bottom, left = top + plot_h, margin
    vmax = max([max(v) for _, v in lines if v] + [1e-9]) * 1.1
    img[top:bottom, left - 2 : left] = 0
    img[bottom : bottom + 2, left : left + plot_w] = 0
    for tick in np.linspace(0, vmax, 5):
        y = bottom - int(tick / vmax * plot_h)
        img[y, left - 6 : left] = 0
        text(img, 4, y - 5, f"{tick:.2f}")
    for k, (_, values) in enumerate(lines):
        if not values:
            continue
        v = np.asarray(values, dtype=float)
        cols = np.minimum((np.arange(len(v)) * plot_w) // max(1, len(v)), plot_w - 1)
        top_of = np.full(plot_w, np.nan)
        np.fmax.at(top_of, cols, v)
        last = None
        for x in range(plot_w):
            if np.isnan(top_of[x]):
                continue
            y = bottom - 1 - int(top_of[x] / vmax * (plot_h - 1))
            y0, y1 = (y, y) if last is None else (min(y, last), max(y, last))
            img[max(top, y0 - 1) : y1 + 1, left + x : left + x + 2] = PALETTE[k % len(PALETTE)]
            last = y
    write_png(path, img)
