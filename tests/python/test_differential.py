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
from _difftest import Disagreement, run_entry
from _signatures import read_table

import pyc10

# Deliberate divergences: a call pattern (fnmatch over the call text that _difftest prints, e.g.
# "T(2, 3, 4).split(True, 0)") -> a one-line reason for the README. Keep this short.
KNOWN_DIVERGENCES: dict[str, str] = {}

# Disagreements that are pyc10 bugs, by entry: the test is expected to fail until they are fixed.
_INDEX = "a 0-dim integer tensor is refused where torch takes an int (Tensor has no __index__)"
_KW_ORDER = 'the "got (...)" of a bad combination lists keywords in call order; torch reverses them'
_PY_WRAPPER = (
    "torch's Tensor.{} is a Python function (torch/_tensor.py): its argument errors are Python's "
    "and torch.{}'s own; pyc10's differ"
)
_NO_VALUES = "_difftest.py has no values for {} parameters yet"
BUGS: dict[str, str] = {
    "Tensor.size": _INDEX,
    "Tensor.stride": _INDEX,
    "Tensor.view": _INDEX,
    "Tensor.reshape": _INDEX,
    "Tensor.permute": _INDEX,
    "Tensor.expand": _INDEX,
    "Tensor.broadcast_to": _INDEX,
    "Tensor.transpose": _INDEX,
    "Tensor.swapaxes": _INDEX,
    "Tensor.swapdims": _INDEX,
    "Tensor.squeeze": _INDEX,
    "Tensor.unsqueeze": _INDEX,
    "Tensor.flatten": _INDEX + "; flatten() of a 1-dim tensor is a new object (torch returns self)",
    "Tensor.unflatten": _INDEX + "; " + _PY_WRAPPER.format("unflatten", "unflatten"),
    "Tensor.narrow": _INDEX + "; " + _KW_ORDER,
    "Tensor.select": _INDEX,
    "Tensor.movedim": _INDEX + "; " + _KW_ORDER,
    "Tensor.moveaxis": _INDEX + "; " + _KW_ORDER,
    "Tensor.diagonal": _INDEX,
    "Tensor.unfold": _INDEX,
    "Tensor.as_strided": _INDEX,
    "Tensor.chunk": _INDEX,
    "Tensor.split_with_sizes": _INDEX,
    "Tensor.unbind": _INDEX,
    "Tensor.copy_": "a one-signature TypeError prints (Tensor other, bool non_blocking) without "
    "torch's ' = False' default",
    "Tensor.split": _INDEX + "; " + _PY_WRAPPER.format("split", "split"),
    "pyc10.split_with_sizes": "pyc10.split_with_sizes is in the table but not in pyc10's namespace",
    # data.c's entries: _difftest.py generates no values for these parameter types yet (harness
    # gaps, not pyc10 bugs; test_data_methods.py compares these methods with torch meanwhile)
    "Tensor.fill_": _NO_VALUES.format("Scalar"),
    "Tensor.to": _NO_VALUES.format("Device"),
    "Tensor.cuda": _NO_VALUES.format("Device"),
    "Tensor.type": _NO_VALUES.format("PyObject*"),
    "Tensor.new_empty": _NO_VALUES.format("Layout"),
    "Tensor.new_zeros": _NO_VALUES.format("Layout"),
    "Tensor.new_ones": _NO_VALUES.format("Layout"),
    "Tensor.new_full": _NO_VALUES.format("Scalar"),
    "Tensor.new_empty_strided": _NO_VALUES.format("Layout"),
    "Tensor.bfloat16": "the harness prints numpy()'s failure by class name: pyc10's C10TypeError "
    "(a TypeError) against torch's TypeError",
}

ENTRIES = read_table()


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
