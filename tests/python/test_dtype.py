"""pyc10 dtypes against torch.dtype and numpy: values, names, predicates, promotion."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch

import pyc10
from pyc10._lib import lib

TORCH_DTYPES = sorted(
    {v for v in vars(torch).values() if isinstance(v, torch.dtype)}, key=lambda d: str(d)
)
TORCH_NAMES = {n: v for n, v in vars(torch).items() if isinstance(v, torch.dtype)}


def ours(d: torch.dtype) -> pyc10.dtype:
    return getattr(pyc10, str(d).removeprefix("torch."))


def outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:
        return (type(e), str(e))


def same_outcome(ours_fn, torch_fn, convert=lambda x: x):
    a, b = outcome(ours_fn), outcome(torch_fn)
    if b[0] == "ok":
        assert a == ("ok", convert(b[1]))
    else:
        assert a[0] != "ok", f"torch raised {b}, we returned {a}"
        assert issubclass(a[0], b[0]) and a[1] == b[1]


def test_every_torch_dtype_and_alias_exists_with_torchs_name():
    assert len(TORCH_DTYPES) == lib.C10C_DTYPE_UNDEFINED
    for name, d in TORCH_NAMES.items():
        assert getattr(pyc10, name) is ours(d), name
        assert repr(getattr(pyc10, name)) == repr(d).replace("torch.", "pyc10.")


@torch.jit.script
def _scalar_type(d: int) -> int:
    # TorchScript passes a torch.dtype as its c10 ScalarType number.
    return d


def test_values_equal_c10_scalar_type_numbers():
    for d in TORCH_DTYPES:
        assert ours(d).value == _scalar_type(d), d


@pytest.mark.parametrize("d", TORCH_DTYPES, ids=str)
def test_properties_match_torch(d):
    o = ours(d)
    assert o.itemsize == d.itemsize
    assert o.is_floating_point == d.is_floating_point
    assert o.is_complex == d.is_complex
    same_outcome(lambda: o.is_signed, lambda: d.is_signed)
    same_outcome(lambda: o.to_real(), lambda: d.to_real(), ours)
    same_outcome(lambda: o.to_complex(), lambda: d.to_complex(), ours)


def test_full_promotion_matrix_matches_torch():
    mismatches = []
    for a in TORCH_DTYPES:
        for b in TORCH_DTYPES:
            t = outcome(lambda a=a, b=b: torch.promote_types(a, b))
            p = outcome(lambda a=a, b=b: pyc10.promote_types(ours(a), ours(b)))
            if t[0] == "ok":
                if p != ("ok", ours(t[1])):
                    mismatches.append((a, b, t, p))
            elif p[0] == "ok" or not issubclass(p[0], t[0]):
                mismatches.append((a, b, t, p))
            elif "INTERNAL ASSERT FAILED" in t[1]:
                # torch fails an internal assert (int1..7, float4): we give a plain message.
                if "no promotion rule exists" not in p[1]:
                    mismatches.append((a, b, t, p))
            elif p[1] != t[1]:
                mismatches.append((a, b, t, p))
    assert not mismatches, mismatches[:5]


def test_promotion_is_memoised_but_errors_still_raise():
    assert pyc10.promote_types(pyc10.int8, pyc10.uint8) is pyc10.int16
    assert pyc10.promote_types(pyc10.int8, pyc10.uint8) is pyc10.int16
    for _ in range(2):
        with pytest.raises(RuntimeError, match="quantized"):
            pyc10.promote_types(pyc10.qint8, pyc10.float32)


def test_promote_types_rejects_non_dtypes():
    with pytest.raises(TypeError):
        pyc10.promote_types(torch.float32, pyc10.float32)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        pyc10.promote_types(pyc10.float32, "float32")  # type: ignore[arg-type]


def test_can_cast_matches_torch():
    for a in TORCH_DTYPES:
        for b in TORCH_DTYPES:
            t = outcome(lambda a=a, b=b: torch.can_cast(a, b))
            if t[0] == "ok":
                assert pyc10.can_cast(ours(a), ours(b)) == t[1], (a, b)


def test_numpy_conversions_agree_with_torch_from_numpy():
    for d in TORCH_DTYPES:
        o = ours(d)
        try:
            nd = torch.empty(0, dtype=d).numpy().dtype
        except (TypeError, RuntimeError):
            with pytest.raises(TypeError):
                o.to_numpy()
            continue
        assert o.to_numpy() == nd
        assert pyc10.dtype.from_numpy(nd) is o
    assert pyc10.dtype.from_numpy(np.dtype(">f4").newbyteorder("=")) is pyc10.float32
    with pytest.raises(TypeError, match="byte order"):
        pyc10.dtype.from_numpy(np.dtype(">f4") if np.little_endian else np.dtype("<f4"))
    with pytest.raises(TypeError, match="no pyc10 equivalent"):
        pyc10.dtype.from_numpy(np.dtype("U3"))
    with pytest.raises(TypeError, match="no numpy equivalent"):
        pyc10.bfloat16.to_numpy()


def test_dtypes_are_singletons_through_pickle_and_copy():
    for name in ("float32", "float", "qint8", "float4_e2m1fn_x2"):
        d = getattr(pyc10, name)
        assert pickle.loads(pickle.dumps(d)) is d
        assert copy.deepcopy(d) is d
    with pytest.raises(TypeError):
        pyc10.dtype()
