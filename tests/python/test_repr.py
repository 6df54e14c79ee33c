"""repr(tensor) against torch's, character for character, for random tensors."""

from __future__ import annotations

import random

import numpy as np
import torch

import pyc10

DTYPES = ["float32", "float64", "float16", "int64", "int32", "uint8", "int8", "bool"]


def random_values(rng, dtype, n):
    if dtype == "bool":
        return np.array([rng.random() < 0.5 for _ in range(n)])
    if dtype.startswith(("int", "uint")):
        lo, hi = (0, 255) if dtype == "uint8" else (-100, 100)
        scale = rng.choice([1, 1, 1000, 10**6]) if dtype in ("int64", "int32") else 1
        return np.array([rng.randint(lo, hi) * scale for _ in range(n)])
    kind = rng.choice(["int", "small", "big", "mixed", "tiny", "special"])
    vals = []
    for _ in range(n):
        if kind == "int":
            vals.append(float(rng.randint(-50, 50)))
        elif kind == "small":
            vals.append(rng.uniform(-10, 10))
        elif kind == "big":
            vals.append(rng.uniform(-1e9, 1e9))
        elif kind == "mixed":
            vals.append(rng.choice([1e-5, 3.0, 12345.678, -0.5]))
        elif kind == "tiny":
            vals.append(rng.uniform(-1e-6, 1e-6))
        else:
            vals.append(rng.choice([0.0, float("inf"), float("-inf"), float("nan"), 1.5, 2.0]))
    return np.array(vals)


def test_repr_matches_torch_for_random_tensors():
    rng = random.Random(8)
    for _ in range(400):
        dtype = rng.choice(DTYPES)
        n = rng.randint(0, 4)
        shape = tuple(rng.choice([0, 1, 2, 3, 5, 9]) for _ in range(n))
        if rng.random() < 0.05:
            shape = (rng.choice([1001, 40]), rng.choice([1, 30]))  # summarised past 1000
        count = int(np.prod(shape)) if shape else 1
        with np.errstate(over="ignore"):  # big values become inf in float16, as intended
            a = random_values(rng, dtype, count).astype(getattr(np, dtype)).reshape(shape)
        theirs = repr(torch.from_numpy(a.copy()))
        ours = repr(pyc10.from_numpy(a.copy()))
        assert ours == theirs.replace("torch.", "pyc10."), (shape, dtype)


def test_repr_of_views_and_fallback():
    t = pyc10.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3)).t()
    assert repr(t) == repr(torch.arange(6, dtype=torch.float32).reshape(2, 3).t())
    assert repr(pyc10.zeros(2, dtype=pyc10.quint8)).startswith("pyc10.Tensor(shape=[2]")
