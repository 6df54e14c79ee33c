"""Module functions that torch writes in Python (torch.split), checked against torch itself."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyc10


def outcome(fn):
    try:
        r = fn()
    except Exception as e:  # pyc10's error classes derive from the builtin torch raises
        builtin = next(c for c in type(e).__mro__ if c.__module__ == "builtins")
        return ("raises", builtin.__name__, str(e).replace("pyc10.", "torch."))
    return ("returns", [(tuple(t.shape), tuple(t.stride()), t.storage_offset()) for t in r])


CALLS = [
    lambda m, x: m.split(x, 2),
    lambda m, x: m.split(x, 2, 1),
    lambda m, x: m.split(x, [1, 3]),
    lambda m, x: m.split(x, (2, 2, 2), dim=1),
    lambda m, x: m.split(tensor=x, split_size_or_sections=3, dim=-1),
    lambda m, x: m.split(x),
    lambda m, x: m.split(x, "a"),
    lambda m, x: m.split(x, 2, 1, 3),
    lambda m, x: m.split(x, 2, dim=5),
    lambda m, x: m.split(x, [1, 1]),
    lambda m, x: m.split(x, -1),
    lambda m, x: m.split(1, 2),
]


@pytest.mark.parametrize("call", range(len(CALLS)))
def test_split_agrees_with_torch(call):
    a = np.arange(24.0, dtype=np.float32).reshape(4, 6)
    fn = CALLS[call]
    assert outcome(lambda: fn(pyc10, pyc10.from_numpy(a))) == outcome(
        lambda: fn(torch, torch.from_numpy(a))
    )
