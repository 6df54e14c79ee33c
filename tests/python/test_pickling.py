"""Pickling with protocol 5: out-of-band buffers, windows of views, sharing, and edited pickles.

torch is the oracle for values, geometry and for sharing (torch.save/torch.load
keep tensors over one storage on one storage, as pyc10's pickle does); numpy for what goes out of
band.
"""

from __future__ import annotations

import copy
import io
import os
import pickle
import random
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest
import torch

import pyc10
from pyc10 import _pickling

DTYPES = [
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "int8",
    "uint8",
    "int16",
    "int32",
    "int64",
    "bool",
    "complex64",
    "complex128",
    "float8_e4m3fn",
    "float8_e5m2",
]


def pair(name: str, n: int = 24) -> tuple[torch.Tensor, pyc10.Tensor]:
    """The same n elements of dtype name in torch and in pyc10 (pyc10 built from torch's bytes)."""
    t = torch.arange(n, dtype=torch.float64)
    t = (t % 2).to(torch.bool) if name == "bool" else t.to(getattr(torch, name))
    raw = bytearray(t.view(torch.uint8).numpy().tobytes())
    p = pyc10.frombuffer(raw, dtype=pyc10.uint8).clone().view(getattr(pyc10, name))
    return t, p


def pbytes(x: pyc10.Tensor) -> bytes:
    return bytes(x.contiguous().reshape(-1).view(pyc10.uint8).numpy())


def tbytes(x: torch.Tensor) -> bytes:
    return bytes(x.contiguous().reshape(-1).view(torch.uint8).numpy())


def views(x: Any) -> list[Any]:
    """Views of a 24-element tensor: the same calls on torch and pyc10."""
    m = x.view(4, 6)
    return [
        x,
        x[5:9],
        m.t(),
        m[1:, ::2],
        x[7:8].view(()),  # 0-d
        x[3:3],  # no elements
        x[4:7].expand(5, 3),  # stride 0
        m[:, 2:3].expand(4, 3),
    ]


def torch_round_trip(obj: Any) -> Any:
    """torch.save then torch.load (torch's pickle fails on float8 storages)."""
    f = io.BytesIO()
    torch.save(obj, f)
    return torch.load(io.BytesIO(f.getvalue()))


def dumps5(obj: Any) -> tuple[bytes, list[pickle.PickleBuffer]]:
    bufs: list[pickle.PickleBuffer] = []
    data = pickle.dumps(obj, protocol=5, buffer_callback=bufs.append)
    return data, bufs


@pytest.mark.parametrize("name", DTYPES)
def test_views_round_trip_as_torchs_pickle_does(name: str) -> None:
    t, p = pair(name)
    for mode in ("in band", "out of band"):
        tv, pv = views(t), views(p)
        if mode == "in band":
            loaded = pickle.loads(pickle.dumps(pv, protocol=5))
        else:
            data, bufs = dumps5(pv)
            loaded = pickle.loads(data, buffers=bufs)
        tl = torch_round_trip(tv)
        for a, b in zip(tl, loaded, strict=True):
            assert str(b.dtype) == str(a.dtype).replace("torch", "pyc10")
            assert tuple(b.shape) == tuple(a.shape)
            assert b.stride() == a.stride()
            assert b.storage_offset() == a.storage_offset()
            assert pbytes(b) == tbytes(a)
            assert b._version == 0  # torch's is 1 (its rebuild calls set_): pyc10 writes none


def test_out_of_band_copies_nothing_as_numpys() -> None:
    big = pyc10.arange(1 << 18, dtype=pyc10.float32)  # 1 MiB
    arr = np.arange(1 << 18, dtype=np.float32)
    data, bufs = dumps5(big)
    ndata, nbufs = dumps5(arr)
    assert len(bufs) == len(nbufs) == 1
    assert memoryview(bufs[0]).nbytes == memoryview(nbufs[0]).nbytes == big.nbytes
    assert len(data) < 200 and len(ndata) < 200
    # the buffer is the tensor's memory, and loading wraps it: still the same memory
    assert np.frombuffer(bufs[0], np.uint8).ctypes.data == big.data_ptr()
    loaded = pickle.loads(data, buffers=bufs)
    assert loaded.data_ptr() == big.data_ptr()
    big[3] = 7.0
    assert loaded[3].item() == 7.0


def test_a_lone_view_sends_only_its_elements() -> None:
    big = pyc10.zeros(1 << 20, dtype=pyc10.float32)
    view = big[1000:1010]
    view.copy_(pyc10.arange(10, dtype=pyc10.float32))
    data, bufs = dumps5(view)
    assert [memoryview(b).nbytes for b in bufs] == [40]
    assert len(data) < 300
    assert len(pickle.dumps(view, protocol=5)) < 400  # in band too
    loaded = pickle.loads(data, buffers=bufs)
    # torch's geometry: the offset in a storage of the original size
    assert loaded.storage_offset() == 1000
    assert loaded.untyped_storage().nbytes() == big.untyped_storage().nbytes()
    assert loaded.tolist() == list(range(10))
    loaded.untyped_storage()[0] = 1  # writable, though not the buffer itself
    # a strided view sends the bytes from its first to its last element
    _, bufs = dumps5(big.view(1024, 1024)[2:4, 10:12])
    assert [memoryview(b).nbytes for b in bufs] == [4 * (1024 + 2)]


def test_tensors_over_one_storage_share_it_after_loading_as_torch_save() -> None:
    ta, tb = torch.arange(8.0), torch.ones(3)
    tl = torch_round_trip([ta, ta[2:5], tb])
    a, b = pyc10.arange(8.0), pyc10.ones(3)
    for protocol in (2, 4, 5):
        for band in ("in", "out"):
            if band == "out" and protocol < 5:
                continue
            objs = [a, a[2:5], b]
            if band == "out":
                data, bufs = dumps5(objs)
                pl = pickle.loads(data, buffers=bufs)
            else:
                pl = pickle.loads(pickle.dumps(objs, protocol=protocol))

            def same(x: Any, y: Any) -> bool:
                return bool(x.untyped_storage().data_ptr() == y.untyped_storage().data_ptr())

            assert same(pl[0], pl[1]) == same(tl[0], tl[1]) is True
            assert same(pl[0], pl[2]) == same(tl[0], tl[2]) is False
            if band == "in":
                assert pl[0].data_ptr() != a.data_ptr()
                pl[0][3] = 100.0
                assert pl[1].tolist() == [2.0, 100.0, 4.0]
    # a view first, then its whole base: one storage, all of it filled
    pl = pickle.loads(pickle.dumps([a[2:5], a], protocol=5))
    assert pl[1].tolist() == a.tolist()
    assert pl[0].untyped_storage().data_ptr() == pl[1].untyped_storage().data_ptr()
    # the dumping side's references to storages live only as long as a dump
    assert len(_pickling._refs) == 0
    # separate dumps give separate storages
    first, second = (pickle.loads(pickle.dumps(a, protocol=5)) for _ in range(2))
    assert first.untyped_storage().data_ptr() != second.untyped_storage().data_ptr()


def test_read_only_buffers_give_read_only_tensors() -> None:
    t = pyc10.arange(4.0)
    data, bufs = dumps5(t)
    frozen = pickle.loads(data, buffers=[bytes(bufs[0])])
    assert frozen.tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="cannot write to a read-only tensor"):
        frozen[0] = 1.0
    with pytest.raises(RuntimeError, match="read-only"):
        frozen.untyped_storage().fill_(0)
    thawed = frozen.clone()
    thawed[0] = 5.0
    assert thawed.tolist() == [5.0, 1.0, 2.0, 3.0]
    # a read-only tensor pickles (in band it loads writable, as numpy's read-only arrays load
    # read-only: the bytes object pickle makes of a read-only buffer)
    again = pickle.loads(pickle.dumps(frozen, protocol=5))
    assert again.tolist() == frozen.tolist()
    # a writable buffer is wrapped writable: writes reach it
    mine = bytearray(bytes(bufs[0]))
    live = pickle.loads(data, buffers=[mine])
    live[1] = 9.0
    assert np.frombuffer(mine, np.float32)[1] == 9.0
    # and numpy agrees on both counts
    ndata, nbufs = dumps5(np.arange(4.0))
    assert not pickle.loads(ndata, buffers=[bytes(nbufs[0])]).flags.writeable
    assert pickle.loads(ndata, buffers=[bytearray(bytes(nbufs[0]))]).flags.writeable


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated:UserWarning")
def test_storages_go_out_of_band_too() -> None:
    s = pyc10.arange(6, dtype=pyc10.int16).untyped_storage()
    data, bufs = dumps5(s)
    assert [memoryview(b).nbytes for b in bufs] == [12] and len(data) < 150
    loaded = pickle.loads(data, buffers=bufs)
    assert type(loaded) is pyc10.UntypedStorage and loaded.data_ptr() == s.data_ptr()
    assert pickle.loads(pickle.dumps(s, protocol=5)).tolist() == s.tolist()
    typed = pyc10.arange(6, dtype=pyc10.int16).storage()
    data, bufs = dumps5(typed)
    assert len(bufs) == 1
    back = pickle.loads(data, buffers=bufs)
    assert back.dtype == pyc10.int16 and back.tolist() == list(range(6))
    data, bufs = dumps5(pyc10.UntypedStorage(0))
    assert pickle.loads(data, buffers=bufs).nbytes() == 0


def test_lower_protocols_and_copies_keep_their_behaviour() -> None:
    a = pyc10.arange(10.0)
    v = a[2:4]
    for protocol in range(5):
        loaded = pickle.loads(pickle.dumps(v, protocol=protocol))
        # the whole storage, as torch's pickle sends it
        assert loaded.untyped_storage().tolist() == a.untyped_storage().tolist()
        assert loaded.storage_offset() == 2
    shallow = copy.copy(v)
    assert shallow.untyped_storage().data_ptr() == a.untyped_storage().data_ptr()
    tv = torch.arange(10.0)[2:4]
    assert copy.copy(tv).data_ptr() == tv.data_ptr()  # torch's copy.copy shares too
    deep = copy.deepcopy([a, v])
    assert deep[0].data_ptr() != a.data_ptr()
    assert deep[1].untyped_storage().data_ptr() == deep[0].untyped_storage().data_ptr()
    assert deep[1].untyped_storage().tolist() == a.untyped_storage().tolist()


def test_meta_tensors_pickle_as_before_with_protocol_5() -> None:
    m = pyc10.empty(4, 6, device="meta")[1:, ::2]
    for protocol in (4, 5):
        data, bufs = dumps5(m) if protocol == 5 else (pickle.dumps(m, protocol=4), [])
        assert bufs == []
        u = pickle.loads(data)
        assert u.is_meta and u.shape == m.shape and u.stride() == m.stride()


# ---- edited pickles -------------------------------------------------------------------------


class _Edited:
    """Pickles as the window rebuild with edited arguments (the storage reference kept real)."""

    def __init__(self, args: tuple[Any, ...]) -> None:
        self.args = args

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _pickling._rebuild_tensor_window, self.args


def _args(t: pyc10.Tensor) -> list[Any]:
    fn, args = t.__reduce_ex__(5)
    assert fn is _pickling._rebuild_tensor_window
    return list(args)


EXPECTED = (RuntimeError, ValueError, TypeError)


@pytest.mark.parametrize(
    ("index", "value", "error"),
    [
        (2, 3, RuntimeError),  # window start moved: the window leaves the storage
        (2, -1, RuntimeError),
        (2, 1.0, TypeError),
        (3, 40, RuntimeError),  # offset beyond the window / storage
        (3, -1, RuntimeError),
        (3, "0", TypeError),
        (4, (-3,), RuntimeError),  # negative size
        (4, (1 << 62,), RuntimeError),  # huge size
        (4, (1 << 70,), RuntimeError),
        (4, (2, 3), RuntimeError),  # sizes without strides
        (4, [6], TypeError),
        (5, (1 << 40,), RuntimeError),  # stride beyond the window
        (5, (-1,), RuntimeError),
        (6, "float128", ValueError),
        (6, "complex128", RuntimeError),  # a wider dtype reaches past the window
        (6, 3, TypeError),
        (1, 12345, TypeError),  # no buffer
        (1, b"\0" * 8, RuntimeError),  # a buffer shorter than claimed
        (0, 96, TypeError),  # no storage reference
    ],
)
def test_edited_arguments_raise_fitting_errors(index: int, value: Any, error: type) -> None:
    base = pyc10.arange(24, dtype=pyc10.float32)
    args = _args(base[4:10])
    args[index] = value
    with pytest.raises(error):
        pickle.loads(pickle.dumps(_Edited(tuple(args)), protocol=5))


def test_a_slot_smaller_than_its_window_is_refused() -> None:
    slot = _pickling._rebuild_storage_slot(8)
    with pytest.raises(RuntimeError, match="outside its storage"):
        _pickling._rebuild_tensor_window(slot, b"\0" * 16, 0, 0, (4,), (1,), "float32")
    # a huge storage claimed for a small window: the allocation fails cleanly
    huge = _pickling._rebuild_storage_slot(1 << 62)
    with pytest.raises(RuntimeError, match="unable to allocate"):
        _pickling._rebuild_tensor_window(huge, b"\0" * 8, 0, 0, (2,), (1,), "float32")
    for bad in (-1, 1 << 64, 2.0, "8"):
        with pytest.raises((RuntimeError, TypeError)):
            _pickling._rebuild_storage_slot(bad)


def test_fuzzed_arguments_never_read_outside_the_pickle() -> None:
    """Random edits of every argument: an error of a fitting class, or a tensor inside its bytes."""
    rng = random.Random(5)
    base = pyc10.arange(64, dtype=pyc10.int16)
    originals = [base, base[3:20], base.view(8, 8)[1:5, 2:6], base[5:6].expand(3, 2)]
    ints = [0, 1, -1, 2, 3, 7, 64, 127, 128, 1 << 31, 1 << 62, -(1 << 62), 1 << 63, 1 << 80]
    for _ in range(400):
        args = _args(rng.choice(originals))
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(2, 7)
            if i in (2, 3):
                args[i] = rng.choice([*ints, args[i] + rng.randint(-4, 4)])
            elif i in (4, 5):
                n = rng.randint(0, 3)
                args[i] = tuple(rng.choice(ints) for _ in range(n))
            else:
                args[i] = rng.choice(["int16", "int8", "int64", "complex128", "bool", "x"])
        if rng.random() < 0.3:
            raw = bytes(args[1])
            args[1] = raw[: rng.randrange(len(raw) + 1)]
        try:
            t = pickle.loads(pickle.dumps(_Edited(tuple(args)), protocol=5))
        except EXPECTED:
            continue
        window = range(args[2], args[2] + memoryview(args[1]).nbytes)
        reach = _pickling._extent(t.storage_offset(), tuple(t.shape), t.stride(), t.itemsize)
        assert not reach or (reach.start in window and reach.stop - 1 in window)
        if t.numel() <= 4096 and max(t.shape, default=0) <= 4096:  # stride 0: huge, few bytes
            t.tolist()  # and reading every element works


def test_cuda_tensors_pickle_as_before_with_protocol_5(stub: Any) -> None:
    """Through the stand-in driver: no buffer goes out of band, and the tensor comes back."""
    script = """
        import pickle, pyc10
        t = pyc10.arange(6.0).cuda()[1:4]
        bufs = []
        data = pickle.dumps(t, protocol=5, buffer_callback=bufs.append)
        u = pickle.loads(data)
        s = u.untyped_storage()
        print(len(bufs), u.device, u.cpu().tolist(), u.storage_offset(), s.nbytes())
    """
    env = {**os.environ, "C10C_CUDA_DRIVER": str(stub)}
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        env=env,
        cwd="/",
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0", "cuda:0", "[1.0,", "2.0,", "3.0]", "1", "24"]
