"""Tensor.storage() and pyc10.TypedStorage against torch.TypedStorage: the same expression on
both libraries (acceptance, results, exception class and message), the deprecation warning once
per process, sharing with the tensor, pickling and copies."""

from __future__ import annotations

import copy
import pickle
import re
import warnings

import numpy as np
import pytest
import torch
import torch.storage

import pyc10
from pyc10 import _typed_storage

pytestmark = pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")


def run(expr: str, lib: object, dtype: str) -> object:
    """expr with T the library, x a 1-dim tensor of [1.5, -2, 3, 0] in dtype and s x.storage()."""
    x = lib.tensor([1.5, -2, 3, 0]).to(getattr(lib, dtype))  # type: ignore[attr-defined]
    s = x.storage()
    try:
        r = eval(expr, {"T": lib, "x": x, "s": s, "np": np})
    except Exception as e:
        text = re.sub(r"torch\.storage\.(\w+)", r"pyc10.\1", str(e))
        return ("raised", builtin_class(e), text.replace("torch.", "pyc10."))
    if isinstance(r, (torch.Tensor, pyc10.Tensor)):
        return ("tensor", r.tolist())
    if isinstance(r, (torch.TypedStorage, pyc10.TypedStorage)):
        return ("storage", str(r.dtype).split(".")[1], str(r.device), r.tolist())
    if isinstance(r, (torch.UntypedStorage, pyc10.UntypedStorage)):
        return ("untyped", r.tolist())
    if isinstance(r, (torch.dtype, pyc10.dtype)):
        return ("dtype", str(r).split(".")[1])
    if isinstance(r, str):
        return ("str", r.replace("torch.storage.", "pyc10.").replace("torch.", "pyc10."))
    return ("value", r if not isinstance(r, (torch.device, pyc10.device)) else str(r))


def builtin_class(e: BaseException) -> type:
    """The builtin exception class an exception is (pyc10's classes also derive from it)."""
    return next(c for c in type(e).__mro__ if c.__module__ == "builtins")


def agree(expr: str, dtype: str = "float32") -> None:
    ours, theirs = run(expr, pyc10, dtype), run(expr, torch, dtype)
    assert ours == theirs, expr


EXPRS = [
    "s.dtype",
    "s.device",
    "s.size()",
    "len(s)",
    "s.nbytes()",
    "s.element_size()",
    "s.get_device()",
    "s.is_cuda",
    "s.is_sparse",
    "s.type()",
    "s.tolist()",
    "list(s)",
    "s[0]",
    "s[3]",
    "s[-1]",
    "s[-4]",
    "s.data_ptr() == x.data_ptr()",
    "s.untyped().nbytes()",
    "s._untyped_storage.data_ptr() == x.untyped_storage().data_ptr()",
    "s.is_shared()",
    "s.resizable()",
    "s.fill_(7)",
    "s.fill_(7) and x",
    "s.copy_(T.tensor([9, 8, 7, 6]).to(x.dtype).storage())",
    "s.copy_(T.tensor([9, 8, 7, 6]).to(x.dtype).untyped_storage()) and x",
    "s.clone()",
    "s.clone().data_ptr() != s.data_ptr()",
    "s.cpu().data_ptr() == s.data_ptr()",
    "str(s)",
    "repr(s)",
    "str(x[:0].storage())",
    "s.__setitem__(1, 5) or x",
    "s.__setitem__(slice(1, 3), 4) or x",
    "s.__setitem__(slice(None), 2) or x",
    "T.TypedStorage(3, dtype=T.int16).size()",
    "T.TypedStorage(3, dtype=T.int16).dtype",
    "T.TypedStorage(np.int64(2), dtype=T.float64).nbytes()",
    "T.TypedStorage([1, 2, 3], dtype=T.int8)",
    "T.TypedStorage((1.5, 2.5))",
    "T.TypedStorage().size()",
    "T.TypedStorage(dtype=T.float64).dtype",
    "T.TypedStorage(wrap_storage=x.untyped_storage(), dtype=T.uint8).size()",
    "T.TypedStorage(wrap_storage=x.untyped_storage(), dtype=T.int16).tolist()",
    "T.TypedStorage(2, dtype=T.bool).type()",
    "T.TypedStorage(2, dtype=T.complex64).type()",
    # refused
    "s[4]",
    "s[-5]",
    "s[1:2]",
    "s[1.0]",
    "s[np.int64(1)]",
    "s.__setitem__(1.0, 2)",
    "s.__setitem__(0, s)",
    "T.TypedStorage(1, 2)",
    "T.TypedStorage(1.5)",
    "T.TypedStorage(wrap_storage=x.untyped_storage())",
    "T.TypedStorage(wrap_storage=x.untyped_storage(), dtype=1)",
    "T.TypedStorage(3, wrap_storage=x.untyped_storage(), dtype=T.int8)",
    "T.TypedStorage(wrap_storage=x.untyped_storage(), dtype=T.int8, device='cpu')",
    "T.TypedStorage(wrap_storage=x, dtype=T.int8)",
]


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64", "uint8"])
@pytest.mark.parametrize("expr", EXPRS)
def test_typed_storage_agrees_with_torch(expr: str, dtype: str) -> None:
    agree(expr, dtype)


def test_storage_warns_once_per_process_as_torch() -> None:
    _typed_storage._reset_warn_typed_storage_removal()
    torch.storage._reset_warn_typed_storage_removal()
    got = {}
    for lib in (pyc10, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            s = lib.zeros(2).storage()
            s.size()
            s.tolist()
        got[lib] = [(w_.category, str(w_.message), w_.filename) for w_ in w]
    assert got[pyc10] == got[torch]
    assert len(got[pyc10]) == 1 and got[pyc10][0][2] == __file__


def test_storage_shares_memory_with_the_tensor() -> None:
    x = pyc10.zeros(3, dtype=pyc10.int32)
    s = x.storage()
    s[2] = 5
    assert x.tolist() == [0, 0, 5]
    assert s.untyped() is x.untyped_storage()
    assert isinstance(s, pyc10.TypedStorage)


def test_pickle_and_copies_keep_dtype_and_values() -> None:
    s = pyc10.tensor([1, 2, 3], dtype=pyc10.int16).storage()
    for other in (pickle.loads(pickle.dumps(s)), copy.deepcopy(s)):
        assert other.dtype == pyc10.int16 and other.tolist() == [1, 2, 3]
        assert other.data_ptr() != s.data_ptr()
    assert copy.copy(s).data_ptr() == s.data_ptr()


def test_share_memory_is_untyped_storages() -> None:
    s = pyc10.tensor([1.0, 2.0]).storage()
    assert s.is_shared() == s.untyped().is_shared() is False
    assert s.share_memory_() is s
    assert s.is_shared() == s.untyped().is_shared() is True
    assert s.tolist() == [1.0, 2.0]
