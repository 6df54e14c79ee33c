"""Calling pyc10 and torch the same way and comparing what users see (shared by the parity tests).

``outcome(lib, src)`` evaluates ``src`` with ``lib`` bound to pyc10 or torch (and ``np``) and
describes the result: a tensor's shape, strides, storage offset, dtype name and values, or an
exception's builtin class and message (pyc10's names read as torch's).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

import pyc10

EXC = (IndexError, ValueError, TypeError, NotImplementedError, RuntimeError, OverflowError)


def describe(lib: Any, r: Any) -> Any:
    if isinstance(r, lib.Tensor):
        dtype = str(r.dtype).rsplit(".", 1)[-1]
        values = r.tolist()
        return ("Tensor", tuple(r.shape), tuple(r.stride()), r.storage_offset(), dtype, values)
    if isinstance(r, lib.dtype):
        return ("dtype", str(r).rsplit(".", 1)[-1])
    if isinstance(r, lib.device):
        return ("device", str(r))
    if isinstance(r, lib.Size):
        return ("Size", tuple(r))
    if isinstance(r, tuple | list):
        return tuple(describe(lib, x) for x in r)
    return r


def outcome(lib: Any, src: str, env: dict[str, Any] | None = None) -> Any:
    scope = {"lib": lib, "np": np, **(env or {})}
    try:
        return describe(lib, eval(src, scope))
    except EXC as e:
        builtin = next(c for c in type(e).__mro__ if c.__module__ == "builtins")
        return (builtin.__name__, str(e).replace("pyc10.", "torch."))


def assert_same(src: str, env: dict[str, Any] | None = None) -> None:
    """src (an expression over lib) gives the same outcome with pyc10 and with torch."""
    ours, theirs = outcome(pyc10, src, env), outcome(torch, src, env)
    assert ours == theirs, f"{src}\n  pyc10: {ours}\n  torch: {theirs}"
