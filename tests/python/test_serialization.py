"""torch.load(weights_only=True) reads torch.save'd pyc10 objects with pyc10.serialization's
globals, and those globals take plain data only (a hostile file makes pyc10 raise, nothing more)."""

from __future__ import annotations

import io
import pickle
import warnings

import numpy as np
import pytest
import torch

import pyc10
from pyc10 import serialization
from pyc10._errors import C10Error
from pyc10._pickling import _rebuild_storage_slot, _rebuild_tensor_window
from pyc10._storage import _rebuild_storage, _rebuild_storage_buffer
from pyc10._tensor import _rebuild_meta_tensor_no_storage, _rebuild_tensor
from pyc10._typed_storage import _rebuild_typed_storage

DTYPES = sorted(
    {d for d in vars(pyc10).values() if isinstance(d, pyc10.dtype)}, key=lambda d: str(d)
)


def saved(obj: object) -> io.BytesIO:
    # torch.save's default protocol, 2: torch's weights-only loader reads no later one (it
    # refuses protocol 4's FRAME, torch's own tensors too)
    f = io.BytesIO()
    torch.save(obj, f)
    f.seek(0)
    return f


def test_torch_load_refuses_pyc10_without_the_globals() -> None:
    with pytest.raises(pickle.UnpicklingError, match=r"pyc10\._tensor\._rebuild_tensor"):
        torch.load(saved(pyc10.ones(3)))


def test_torch_load_reads_tensors_of_every_dtype() -> None:
    raw = pyc10.arange(48, dtype=pyc10.uint8)
    tensors = {str(d): raw.view(d) for d in DTYPES}  # every dtype, bits and float8 ones too
    with serialization.torch_safe_globals():
        loaded = torch.load(saved(tensors), weights_only=True)
    assert set(loaded) == set(tensors)
    for name, t in tensors.items():
        assert loaded[name].dtype is t.dtype and loaded[name].shape == t.shape
        assert bytes(loaded[name].untyped_storage()) == bytes(range(48))


def test_torch_load_reads_views_with_offsets_sharing_one_storage() -> None:
    base = pyc10.arange(24, dtype=pyc10.float64)
    views = {"v": base[3:9], "s": base.view(4, 6)[1:, ::2], "t": base.view(4, 6).t()[2]}
    with torch.serialization.safe_globals(serialization.safe_globals()):
        loaded = torch.load(saved(views), weights_only=True)
    for name, v in views.items():
        got = loaded[name]
        assert (got.storage_offset(), got.shape, got.stride()) == (
            v.storage_offset(),
            v.shape,
            v.stride(),
        )
        assert got.tolist() == v.tolist()
    pointers = {loaded[k].untyped_storage().data_ptr() for k in views}
    assert len(pointers) == 1


def test_torch_load_reads_storages_meta_tensors_and_values() -> None:
    t = pyc10.arange(5, dtype=pyc10.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage is deprecated, as torch's
        typed = t.storage()
    obj = {
        "storage": t.untyped_storage(),
        "typed": typed,
        "meta": pyc10.empty(2, 3, device="meta"),
        "size": t.shape,
        "dtype": pyc10.bfloat16,
        "device": pyc10.device("cpu"),
    }
    serialization.add_safe_globals()
    got = torch.load(saved(obj), weights_only=True)
    assert bytes(got["storage"]) == bytes(t.untyped_storage())
    assert got["typed"].dtype == pyc10.int32 and got["typed"].tolist() == [0, 1, 2, 3, 4]
    assert got["meta"].is_meta and got["meta"].shape == (2, 3)
    assert got["size"] == pyc10.Size([5]) and type(got["size"]) is pyc10.Size
    assert got["dtype"] is pyc10.bfloat16 and got["device"] == pyc10.device("cpu")


def test_safe_globals_admits_no_class_with_state() -> None:
    for g in serialization.safe_globals():
        obj = g[0] if isinstance(g, tuple) else g
        if isinstance(obj, type):
            assert not hasattr(obj, "__dict__") or obj in (pyc10.Size, pyc10.device)
            assert not hasattr(obj, "__setstate__") or obj.__setstate__ is object.__setstate__


HOSTILE = [
    (_rebuild_tensor, (torch.zeros(4).untyped_storage(), 0, (1,), (1,), "float32")),
    (_rebuild_tensor, (pyc10.ones(2).untyped_storage(), 0.0, (1,), (1,), "float32")),
    (_rebuild_tensor, (pyc10.ones(2).untyped_storage(), 0, [1], (1,), "float32")),
    (_rebuild_tensor, (pyc10.ones(2).untyped_storage(), 0, (1,), (1,), ["float32"])),
    (_rebuild_tensor, (pyc10.ones(2).untyped_storage(), 0, (True,), (1,), "float32")),
    (_rebuild_tensor, (pyc10.ones(2).untyped_storage(), 1 << 64, (1,), (1,), "float32")),
    (_rebuild_tensor, (pyc10.ones(2).untyped_storage(), 0, (1, 1), (1,), "float32")),
    (_rebuild_tensor, (pyc10.ones(2).untyped_storage(), 0, (1,), (1,), "os.system")),
    (_rebuild_meta_tensor_no_storage, ("float32", "12", (1,))),
    (_rebuild_meta_tensor_no_storage, (np.float32, (1,), (1,))),
    (_rebuild_storage, ("text", "cpu")),
    (_rebuild_storage, (np.zeros(3), "cpu")),
    (_rebuild_storage, (b"1234", pyc10.device("cpu"))),
    (_rebuild_storage_buffer, (object(),)),
    (_rebuild_typed_storage, (b"1234", "float32")),
    (_rebuild_typed_storage, (pyc10.ones(1).untyped_storage(), 3)),
    (_rebuild_storage_slot, ("8",)),
    (_rebuild_tensor_window, (object(), b"", 0, 0, (0,), (1,), "float32")),
]


@pytest.mark.parametrize(("fn", "args"), HOSTILE, ids=lambda x: getattr(x, "__name__", ""))
def test_admitted_functions_refuse_anything_but_plain_data(fn: object, args: tuple) -> None:
    with pytest.raises((TypeError, ValueError, RuntimeError)) as e:
        fn(*args)  # type: ignore[operator]
    assert isinstance(e.value, C10Error)
    assert not isinstance(e.value, (KeyError, AttributeError))


def test_a_hostile_file_raises_through_torch_load() -> None:
    # _rebuild_tensor called on a torch storage and on an out-of-range view of a pyc10 one
    class Evil:
        def __reduce__(self) -> tuple:
            return _rebuild_tensor, (torch.zeros(2).untyped_storage(), 0, (2,), (1,), "float32")

    class Outside:
        def __reduce__(self) -> tuple:
            s = pyc10.ones(2).untyped_storage()
            return _rebuild_tensor, (s, 1, (8,), (1,), "float32")

    for obj in (Evil(), Outside()):
        f = io.BytesIO()
        torch.save(obj, f)
        f.seek(0)
        with serialization.torch_safe_globals(), pytest.raises(C10Error):
            torch.load(f, weights_only=True)
