"""The differential test: every signature-table entry called the same way on pyc10 and torch.

The calls are generated from pyc10/_ext/signatures.h (see _difftest.py): all positional, all
keyword, defaults omitted, each accepted form of each parameter, wrong types, wrong arity and
out-of-range values. One test per table entry; it reports every disagreement in acceptance,
result, exception class and (for argument errors) message.
"""

from __future__ import annotations

import fnmatch

import pytest
import torch
from _difftest import Disagreement, called_entries, run_entry

import pyc10

# Deliberate divergences: a call pattern (fnmatch over the call text that _difftest prints, e.g.
# "T(2, 3, 4).split(True, 0)") -> a one-line reason for the README. Keep this short.
_NO_AUTOGRAD = "pyc10 has no autograd: requires_grad_(True) raises RuntimeError (README)"
KNOWN_DIVERGENCES: dict[str, str] = {
    "*.requires_grad_(True)*": _NO_AUTOGRAD,
    "*.requires_grad_(requires_grad=True)*": _NO_AUTOGRAD,
    "*.requires_grad_()*": _NO_AUTOGRAD,
    "*.new_tensor(*requires_grad=True)*": _NO_AUTOGRAD,
    "*.frombuffer(*requires_grad=True)*": _NO_AUTOGRAD,
    "*.asarray(*requires_grad=True)*": _NO_AUTOGRAD,
    # torch's CPU-only build raises AssertionError("Torch not compiled with CUDA enabled"); pyc10
    # is one build with and without a GPU: without a driver it raises RuntimeError with the reason
    "*.cuda(*": "without a CUDA driver, cuda() raises RuntimeError naming why (README)",
}

# Disagreements that are pyc10 bugs (or harness gaps), by entry: expected to fail until fixed.
BUGS: dict[str, str] = {}

#: what users call: Tensor methods and pyc10 functions (_difftest.CALLED_KINDS says why)
ENTRIES = called_entries()


def _known(d: Disagreement) -> bool:
    return any(fnmatch.fnmatchcase(d.call.desc, pat) for pat in KNOWN_DIVERGENCES)


def _param(entry_id: str) -> object:
    if entry_id in BUGS:
        return pytest.param(entry_id, marks=pytest.mark.xfail(reason=BUGS[entry_id], strict=False))
    return entry_id


@pytest.mark.parametrize("entry_id", [_param(e.id) for e in ENTRIES])
def test_entry_agrees_with_torch(entry_id: str) -> None:
    entry = next(e for e in ENTRIES if e.id == entry_id)
    n, disagreements = run_entry(entry, pyc10, torch)
    bad = [d for d in disagreements if not _known(d)]
    report = "\n".join(str(d) for d in bad)
    assert not bad, f"{len(bad)} of {n} calls disagree with torch:\n{report}"


def test_the_table_generates_calls_for_every_entry() -> None:
    assert ENTRIES, "no PA_ENTRY read from signatures.h"
    for e in ENTRIES:
        assert e.signatures, e.id
        assert all(s.name == e.name for s in e.signatures), e.id


def test_known_divergences_and_bugs_name_table_entries() -> None:
    ids = {e.id for e in ENTRIES}
    assert set(BUGS) <= ids, set(BUGS) - ids
    for reason in KNOWN_DIVERGENCES.values():
        assert reason and "\n" not in reason


def _message(fn):
    try:
        fn()
    except TypeError as e:
        return str(e).replace("pyc10.", "torch.")
    raise AssertionError("no TypeError")


@pytest.mark.parametrize("count", [3, 5, 8, 13, 14, 20, 29, 30, 40])
@pytest.mark.parametrize("seed", range(4))
def test_many_keywords_are_listed_in_torchs_order(count, seed):
    # torch prints a bad call's keywords in its std::unordered_map's order (libstdc++'s string
    # hashes, buckets and rehashes), which the parser reproduces, past the map's rehash at 14
    import random

    rng = random.Random(count * 100 + seed)
    names = {"dim", "sections", "input", "dtype", "out"}
    keys = rng.sample(sorted(names), 2) + [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz_") for _ in range(rng.randint(1, 19)))
        for _ in range(count)
    ]
    kwargs = dict.fromkeys(keys, 1)
    t = torch.zeros(2, 3)
    p = pyc10.zeros(2, 3)
    assert _message(lambda: p.view(**kwargs)) == _message(lambda: t.view(**kwargs))
    assert _message(lambda: pyc10.tensor_split(p, **kwargs)) == _message(
        lambda: torch.tensor_split(t, **kwargs)
    )
