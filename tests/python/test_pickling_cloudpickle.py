"""cloudpickle (Ray's and Dask's pickler, protocol 5) round trips of views with offsets: the
geometry kept, the views of one storage sharing it, the whole storage's buffer used in place."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

import pyc10

cloudpickle = pytest.importorskip("cloudpickle")


def dumps(obj: Any) -> tuple[bytes, list[pickle.PickleBuffer]]:
    bufs: list[pickle.PickleBuffer] = []
    return cloudpickle.dumps(obj, protocol=5, buffer_callback=bufs.append), bufs


def geometry(t: pyc10.Tensor) -> tuple[Any, ...]:
    return (t.storage_offset(), tuple(t.shape), t.stride(), t.dtype)


def test_views_before_their_base_end_on_the_bases_buffer_without_a_copy() -> None:
    base = pyc10.arange(1 << 16, dtype=pyc10.float32)
    objs = [base[1000:1010], base.view(256, 256)[3:5, 7:9], base, base[5:6].expand(4)]
    data, bufs = dumps(objs)
    loaded = cloudpickle.loads(data, buffers=bufs)
    for got, want in zip(loaded, objs, strict=True):
        assert geometry(got) == geometry(want)
        assert got.tolist() == want.tolist()
        # the base's buffer is the original memory (in one process): every view is over it
        assert got.untyped_storage().data_ptr() == base.data_ptr()
        assert got.data_ptr() == base.data_ptr() + 4 * want.storage_offset()
    base[1000] = -1.0  # the same memory, so writes show through all of them
    assert loaded[0][0].item() == -1.0 and loaded[2][1000].item() == -1.0


def test_in_band_views_of_one_storage_share_it_in_any_order() -> None:
    base = pyc10.arange(64, dtype=pyc10.int16)
    objs = [base[10:20], base.view(8, 8).t(), base, base[3:4]]
    loaded = cloudpickle.loads(cloudpickle.dumps(objs))  # protocol 5, buffers in band
    pointers = {t.untyped_storage().data_ptr() for t in loaded}
    assert len(pointers) == 1 and base.data_ptr() not in pointers
    for got, want in zip(loaded, objs, strict=True):
        assert geometry(got) == geometry(want) and got.tolist() == want.tolist()
    loaded[2][15] = 99
    assert loaded[0][5].item() == 99


def test_a_lone_offset_view_keeps_torchs_geometry() -> None:
    base = pyc10.arange(1 << 18, dtype=pyc10.float64)
    view = base[5000:5010]
    for data, bufs in (dumps(view), (cloudpickle.dumps(view), [])):
        got = cloudpickle.loads(data, buffers=bufs)
        assert geometry(got) == geometry(view) and got.tolist() == view.tolist()
        assert got.untyped_storage().nbytes() == base.untyped_storage().nbytes()
        assert sum(memoryview(b).nbytes for b in bufs) in (0, 80)  # only its elements travel
