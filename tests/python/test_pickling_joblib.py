"""joblib.dump / joblib.load(mmap_mode=...) of pyc10 tensors: their bytes are written raw, as
numpy arrays', and loading with mmap_mode maps the file instead of reading it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import pyc10

joblib = pytest.importorskip("joblib")


def mapped_from(path: Path, address: int) -> bool:
    """Whether address lies in a mapping of the file at path (Linux's /proc/self/maps)."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and os.path.realpath(fields[5]) == os.path.realpath(path):
                lo, hi = (int(x, 16) for x in fields[0].split("-"))
                if lo <= address < hi:
                    return True
    return False


pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc")


def test_joblib_load_with_mmap_mode_maps_tensors(tmp_path: Path) -> None:
    big = pyc10.arange(1 << 18, dtype=pyc10.float32)
    half = pyc10.arange(64, dtype=pyc10.int64).to(pyc10.bfloat16)
    obj = {"big": big, "view": big.view(512, 512)[1:3, 5:9], "half": half, "n": 3}
    path = tmp_path / "model.joblib"
    joblib.dump(obj, path)
    loaded = joblib.load(path, mmap_mode="r")
    assert loaded["n"] == 3
    for key in ("big", "half"):
        got = loaded[key]
        assert got.dtype is obj[key].dtype and got.tolist() == obj[key].tolist()
        assert mapped_from(path, got.data_ptr())
        with pytest.raises(RuntimeError, match="read-only"):
            got[0] = 1
    view = loaded["view"]
    assert view.storage_offset() == 517 and view.stride() == (512, 1)
    assert view.tolist() == obj["view"].tolist()
    assert view.untyped_storage().data_ptr() == loaded["big"].untyped_storage().data_ptr()
    # the pages are the file's: a write to the file shows through
    raw = path.read_bytes()
    where = raw.find(big[1000:1004].numpy().tobytes())
    with open(path, "r+b") as f:
        f.seek(where)
        f.write(pyc10.tensor([-5.0], dtype=pyc10.float32).numpy().tobytes())
    assert loaded["big"][1000].item() == -5.0


def test_joblib_without_mmap_mode_and_copy_on_write(tmp_path: Path) -> None:
    t = pyc10.arange(1000, dtype=pyc10.int32)
    path = tmp_path / "t.joblib"
    joblib.dump([t, t[10:20]], path)
    a, v = joblib.load(path)
    assert a.tolist() == t.tolist() and v.tolist() == list(range(10, 20))
    a[10] = -1  # writable, and one storage
    assert v[0].item() == -1
    c, _ = joblib.load(path, mmap_mode="c")
    c[0] = 7  # copy on write: the file keeps its bytes
    assert joblib.load(path)[0][0].item() == 0


def test_joblib_maps_storages_too(tmp_path: Path) -> None:
    storage = pyc10.arange(1 << 16, dtype=pyc10.int64).untyped_storage()
    path = tmp_path / "s.joblib"
    joblib.dump(storage, path)
    got = joblib.load(path, mmap_mode="r")
    assert type(got) is pyc10.UntypedStorage and bytes(got) == bytes(storage)
    assert mapped_from(path, got.data_ptr())
