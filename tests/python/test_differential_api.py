"""The differential test beyond the signature table: public names written outside it.

The probes of _difftest_api.py (module functions and classes written in Python, dunders,
methods and property setters of Tensor, Size, the storages, device and dtype) are each called
right, with each positional argument of a wrong type, by keyword, with too many and too few
positionals and with an unknown keyword, on pyc10 and torch. One test per probe; it reports
every disagreement in acceptance, result kind, exception class and TypeError/ValueError message.
"""

from __future__ import annotations

import fnmatch

import pytest
import torch
from _difftest_api import PROBES, RECEIVERS, Disagreement, _target, comparable, run_probe

import pyc10

# Deliberate divergences: a call pattern (fnmatch over the call text) -> a one-line reason.
KNOWN_DIVERGENCES: dict[str, str] = {}

# Probes whose disagreements are pyc10 bugs not fixed yet (expected to fail until fixed), by
# probe path (with an index where a path has several probes).
_OPEN = (
    "issue 34 item 6: messages or acceptance still differ from torch's (python _difftest_api.py)"
)
BUGS: dict[str, str] = dict.fromkeys(
    [
        "lib.promote_types", "lib.can_cast", "lib.is_tensor", "lib.set_default_device",
        "lib.from_dlpack", "lib.device", "lib.Size", "lib.FloatStorage", "lib.LongStorage",
        "lib.TypedStorage", "T1.__bool__", "T1.__int__", "T1.__float__", "TI.__index__",
        "T.__reduce_ex__", "T.__deepcopy__", "T.__format__", "T.is_pinned", "T.storage_type",
        "T.data=", "T.requires_grad=", "Size.__getitem__", "US.size", "US.tolist", "US.clone",
        "US.cpu", "US.get_device", "US.is_pinned", "US.type", "US.untyped", "US.__getitem__",
        "US.__reduce_ex__", "US.byteswap", "TS.type", "TS.fill_", "TS.copy_", "TS.resize_",
        "TS.__getitem__", "TS.__reduce_ex__", "device.__reduce_ex__", "device.__repr__",
        "dtype.to_complex", "dtype.to_real", "dtype.__reduce_ex__", "dtype.__repr__",
    ],
    _OPEN,
)  # fmt: skip


def _known(d: Disagreement) -> bool:
    return any(fnmatch.fnmatchcase(d.call.desc, pat) for pat in KNOWN_DIVERGENCES)


def _param(i: int) -> object:
    path = PROBES[i].path
    if path in BUGS:
        return pytest.param(i, id=f"{path}-{i}", marks=pytest.mark.xfail(reason=BUGS[path]))
    return pytest.param(i, id=f"{path}-{i}")


@pytest.mark.parametrize("index", [_param(i) for i in range(len(PROBES))])
def test_probe_agrees_with_torch(index: int) -> None:
    probe = PROBES[index]
    if not comparable(probe, pyc10, torch):
        pytest.skip("the right call fails on one of the libraries (not implemented in pyc10)")
    n, disagreements = run_probe(probe, pyc10, torch)
    bad = [d for d in disagreements if not _known(d)]
    report = "\n".join(str(d) for d in bad)
    assert not bad, f"{len(bad)} of {n} calls disagree with torch:\n{report}"


def test_probes_name_attributes_torch_has() -> None:
    # what pyc10 lacks (UntypedStorage.__deepcopy__) is skipped by the probe's test
    for probe in PROBES:
        assert probe.path.split(".", 1)[0] in {"lib", *RECEIVERS}, probe.path
        for lib in (torch,):
            owner, _, name = _target(lib, probe.path)
            assert name in dir(type(owner) if owner is not lib else lib), (lib.__name__, probe.path)


def test_argument_errors_give_position_and_torchs_type_names() -> None:
    # the defects of issue 34 item 6, measured against torch
    from _parity import assert_same

    assert_same("lib.promote_types(None, lib.float32)")
    assert_same("lib.can_cast(1, lib.float32)")
    assert_same("lib.promote_types(lib.float32, lib.device('cpu'))")
    assert_same("lib.device(lib.float32, 0)")
    assert_same("lib.finfo(lib.device('cpu'))")
    assert_same("lib.zeros(2).__len__(1)")
    assert_same("lib.zeros(2).__iter__(1)")
    assert_same("lib.zeros(2).__array__(None, 1)")
    assert_same("lib.zeros(2).__dlpack__(1)")
    assert_same("lib.zeros(2).__deepcopy__()")
