"""The bindings' conformance suite: its cases, with expected values from torch itself.

Every binding (bindings/rust, bindings/go, bindings/node) reads ``cases.json`` and runs each case
through its own API; none computes an expected value.  The values come from torch 2.13 (the
reference the library matches: view metadata, error classes and messages), written here:

    python bindings/conformance/make_cases.py           # writes cases.json
    python bindings/conformance/make_cases.py --check   # fails when cases.json is stale

The cases (README.md in this directory says what each binding must do with them):
- ``cycles``: create / view / release ``count`` times; resident memory may grow by at most
  ``rss_growth_limit_bytes`` (measured after a warm-up of ``warmup`` cycles).
  ``C10C_CONFORMANCE_CYCLES`` lowers the count for a quick run; ``.ci/run`` runs the full 10^6.
- ``views``: a base tensor, a view op with its arguments, and torch's sizes, strides and offset.
- ``errors``: an op torch refuses, with the library status and torch's message, which the
  binding's error must carry word for word.
- ``dlpack``: a tensor exported and imported through DLPack must keep its data pointer.
- ``release_on_other_thread``: tensors made on one thread are released on another.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "cases.json"

# (op, args as the C function takes them, after out and tensor)
VIEWS: list[tuple[list[int], str, dict[str, Any]]] = [
    ([4, 6], "narrow", {"dim": 1, "start": 2, "length": 3}),
    ([4, 6], "transpose", {"dim0": 0, "dim1": 1}),
    ([4, 6], "select", {"dim": 0, "index": 1}),
    ([4, 6], "select", {"dim": -1, "index": -2}),
    ([2, 3, 4], "permute", {"dims": [2, 0, 1]}),
    ([4, 6], "view", {"shape": [3, -1, 2]}),
    ([4, 6], "unsqueeze", {"dim": 1}),
    ([4, 1], "expand", {"sizes": [4, 5]}),
    ([4, 6], "slice", {"dim": 1, "start": 1, "end": 6, "step": 2}),
    ([4, 6], "as_strided", {"sizes": [2, 2], "strides": [1, 3], "storage_offset": 5}),
    ([4, 6], "diagonal", {"offset": 1, "dim1": 0, "dim2": 1}),
    ([4, 6], "unfold", {"dim": 1, "size": 2, "step": 2}),
]

ERRORS: list[tuple[list[int], str, dict[str, Any], str]] = [
    ([2, 3], "view", {"shape": [5, 5]}, "C10C_STATUS_ERROR"),
    ([2, 3], "transpose", {"dim0": 0, "dim1": 5}, "C10C_STATUS_INDEX_OUT_OF_RANGE"),
    ([2, 3], "narrow", {"dim": 0, "start": 1, "length": 5}, "C10C_STATUS_ERROR"),
    ([2, 3], "select", {"dim": 1, "index": 3}, "C10C_STATUS_INDEX_OUT_OF_RANGE"),
    ([2, 3], "permute", {"dims": [0, 0]}, "C10C_STATUS_ERROR"),
]


def torch_view(torch: Any, base: Any, op: str, a: dict[str, Any]) -> Any:
    """The op as torch spells it."""
    if op == "narrow":
        return base.narrow(a["dim"], a["start"], a["length"])
    if op == "transpose":
        return base.transpose(a["dim0"], a["dim1"])
    if op == "select":
        return base.select(a["dim"], a["index"])
    if op == "permute":
        return base.permute(a["dims"])
    if op == "view":
        return base.view(a["shape"])
    if op == "unsqueeze":
        return base.unsqueeze(a["dim"])
    if op == "expand":
        return base.expand(a["sizes"])
    if op == "slice":
        return base[(slice(None),) * a["dim"] + (slice(a["start"], a["end"], a["step"]),)]
    if op == "as_strided":
        return base.as_strided(a["sizes"], a["strides"], a["storage_offset"])
    if op == "diagonal":
        return base.diagonal(a["offset"], a["dim1"], a["dim2"])
    if op == "unfold":
        return base.unfold(a["dim"], a["size"], a["step"])
    raise ValueError(op)


def make() -> dict[str, Any]:
    """The cases, with torch's values."""
    import torch

    views = []
    for shape, op, args in VIEWS:
        v = torch_view(torch, torch.empty(shape), op, args)
        views.append(
            {
                "base": {"shape": shape, "dtype": "float32"},
                "op": op,
                "args": args,
                "sizes": list(v.shape),
                "strides": list(v.stride()),
                "storage_offset": v.storage_offset(),
            }
        )
    errors = []
    for shape, op, args, status in ERRORS:
        try:
            torch_view(torch, torch.empty(shape), op, args)
        except (RuntimeError, IndexError) as e:
            message = str(e).split("\n")[0]
        else:
            raise AssertionError(f"torch accepted {op}{args}")
        errors.append(
            {
                "base": {"shape": shape, "dtype": "float32"},
                "op": op,
                "args": args,
                "status": status,
                "message": message,
            }
        )
    return {
        "reference": f"torch {torch.__version__.split('+')[0]}",
        "cycles": {
            "count": 1_000_000,
            "warmup": 10_000,
            "base": {"shape": [2, 3], "dtype": "float32"},
            "view": {"op": "transpose", "args": {"dim0": 0, "dim1": 1}},
            "rss_growth_limit_bytes": 1 << 20,
        },
        "views": views,
        "errors": errors,
        "dlpack": {"shape": [2, 3], "dtype": "float32", "values": [0, 1, 2, 3, 4, 5]},
        "release_on_other_thread": {"count": 1000, "shape": [8], "dtype": "float32"},
    }


def main() -> int:
    """Write or check cases.json."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    text = json.dumps(make(), indent=1) + "\n"
    if args.check:
        if OUT.read_text() != text:
            print("make_cases: cases.json is stale: run python bindings/conformance/make_cases.py")
            return 1
        print("make_cases: cases.json matches torch")
        return 0
    OUT.write_text(text)
    print(f"make_cases: wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
