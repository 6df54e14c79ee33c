"""``repr(tensor)`` as torch prints it.

A port of torch/_tensor_str.py with the default print options: precision 4, linewidth 80,
summarised past 1000 elements with 3 edge items.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["tensor_repr"]

PRECISION = 4
LINEWIDTH = 80
THRESHOLD = 1000
EDGEITEMS = 3


class _Formatter:
    """Torch's _Formatter: one width and one mode (int, fixed or scientific) for all elements."""

    def __init__(self, values: list[Any], floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not floating:
            for v in values:
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        finite = [v for v in values if math.isfinite(v) and v != 0]
        if not finite:
            return
        absolute = [abs(v) for v in finite]
        lo, hi = min(absolute), max(absolute)
        self.int_mode = all(v == math.ceil(v) for v in finite)
        if self.int_mode:
            if hi / lo > 1000.0 or hi > 1.0e8:
                self.sci_mode = True
                widths = [len(f"{v:.{PRECISION}e}") for v in finite]
            else:
                widths = [len(f"{v:.0f}") + 1 for v in finite]
        elif hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4:
            self.sci_mode = True
            widths = [len(f"{v:.{PRECISION}e}") for v in finite]
        else:
            widths = [len(f"{v:.{PRECISION}f}") for v in finite]
        self.max_width = max([self.max_width, *widths])

    def format(self, value: Any) -> str:
        if self.floating:
            if self.sci_mode:
                text = f"{value:{self.max_width}.{PRECISION}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{PRECISION}f}"
        else:
            text = f"{value}"
        return (self.max_width - len(text)) * " " + text


def _summarized(a: Any, summarize: bool) -> list[Any]:
    """The elements the formatter measures: all of them, or the printed edges."""
    if a.ndim == 0:
        return [a.item()]
    if summarize and a.shape[0] > 2 * EDGEITEMS:
        rows = [*range(EDGEITEMS), *range(a.shape[0] - EDGEITEMS, a.shape[0])]
    else:
        rows = list(range(a.shape[0]))
    out: list[Any] = []
    for i in rows:
        out.extend(_summarized(a[i], summarize) if a.ndim > 1 else [a[i].item()])
    return out


def _vector(a: Any, indent: int, summarize: bool, fmt: _Formatter) -> str:
    per_line = max(1, math.floor((LINEWIDTH - indent) / (fmt.max_width + 2)))
    if summarize and a.shape[0] > 2 * EDGEITEMS:
        data = [fmt.format(v) for v in a[:EDGEITEMS].tolist()] + [" ..."]
        data += [fmt.format(v) for v in a[-EDGEITEMS:].tolist()]
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(a: Any, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if a.ndim == 0:
        return str(fmt.format(a.item()))
    if a.ndim == 1:
        return _vector(a, indent, summarize, fmt)
    n = a.shape[0]
    if summarize and n > 2 * EDGEITEMS:
        parts = [_nested(a[i], indent + 1, summarize, fmt) for i in range(EDGEITEMS)]
        parts.append("...")
        parts += [_nested(a[i], indent + 1, summarize, fmt) for i in range(n - EDGEITEMS, n)]
    else:
        parts = [_nested(a[i], indent + 1, summarize, fmt) for i in range(n)]
    separator = "," + "\n" * (int(a.ndim) - 1) + " " * (indent + 1)
    return "[" + separator.join(parts) + "]"


_DEFAULT_DTYPES = ("float32", "int64", "bool", "complex64")


def tensor_repr(t: Any) -> str | None:
    """Torch's repr of a CPU or CUDA tensor of a real numpy-representable dtype, else None."""
    d = t.dtype
    if d.is_complex or t.device.type not in ("cpu", "cuda"):
        return None
    suffixes = []
    if t.device.type == "cuda":  # torch's Note [Print tensor device]: the device comes first
        suffixes.append(f"device='{t.device}'")
        try:
            t = t.cpu()
        except RuntimeError:  # a layout a copy cannot handle yet: the metadata repr
            return None
    try:
        a = t._readable()  # bfloat16 and float8 widened exactly to float32
    except (TypeError, NotImplementedError):
        return None
    prefix = "tensor("
    indent = len(prefix)
    if t.numel() == 0 and t.dim() != 1:
        suffixes.append(f"size={tuple(t.shape)}")
    # an empty tensor has no values to tell an int64 from a float: only float32 goes unnamed
    if d._name not in (_DEFAULT_DTYPES if t.numel() else ("float32",)):
        suffixes.append(f"dtype={d!r}")
    if t.numel() == 0:
        body = "[]"
    else:
        summarize = t.numel() > THRESHOLD
        fmt = _Formatter(_summarized(a, summarize), d.is_floating_point)
        body = _nested(a, indent, summarize, fmt)
    return _add_suffixes(prefix + body, suffixes, indent)


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """Torch's _add_suffixes: a suffix that would pass the line width goes on its own line."""
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1  # (sic, torch's arithmetic)
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    return "".join(parts) + ")"
