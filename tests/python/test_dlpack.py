"""DLPack and pickling against numpy and torch themselves: zero-copy round trips for every dtype
both sides know and for random strided views, writes visible on both sides, lifetimes in both
orders, capsule rules (renamed once consumed, freed by the collector when never consumed), the
protocol's keywords, read-only memory, refusals, threads, and pickle/deepcopy."""

from __future__ import annotations

import copy
import ctypes
import gc
import pickle
import random
import sys
import threading

import numpy as np
import pytest
import torch

import pyc10
import pyc10.memory

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def versioned_header(capsule):
    """(major, minor, flags) of a "dltensor_versioned" capsule."""
    p = _get_pointer(capsule, b"dltensor_versioned")
    major = ctypes.c_uint32.from_address(p).value
    minor = ctypes.c_uint32.from_address(p + 4).value
    return major, minor, ctypes.c_uint64.from_address(p + 24).value


def allocated():
    gc.collect()
    return pyc10.memory.stats()["allocated_bytes.all.current"]


NUMPY_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
NUMPY_DTYPES += ["float16", "float32", "float64", "complex64", "complex128"]
TORCH_ONLY = ["bfloat16", "complex32", "float8_e5m2", "float8_e4m3fn", "float8_e5m2fnuz"]
TORCH_ONLY += ["float8_e4m3fnuz", "float8_e8m0fnu"]


def filled(name, shape=(3, 4)):
    """A pyc10 tensor of dtype name holding distinct values (as bytes)."""
    t = pyc10.empty(*shape, dtype=getattr(pyc10, name))
    raw = np.frombuffer(
        ctypes.string_at(t.data_ptr(), t.nbytes) if t.nbytes else b"", dtype=np.uint8
    )
    data = (np.arange(raw.size) * 7 % 251).astype(np.uint8)
    if name == "bool":
        data = data % 2
    ctypes.memmove(t.data_ptr(), data.tobytes(), data.size)
    return t


def same_bytes(t, other_ptr):
    return ctypes.string_at(t.data_ptr(), t.nbytes) == ctypes.string_at(other_ptr, t.nbytes)


@pytest.mark.parametrize("name", NUMPY_DTYPES)
def test_numpy_round_trips_share_memory(name):
    t = filled(name)
    a = np.from_dlpack(t)
    assert a.dtype == np.dtype(name) and a.shape == (3, 4)
    assert a.ctypes.data == t.data_ptr() and a.flags.writeable
    back = pyc10.from_dlpack(a)
    assert back.data_ptr() == t.data_ptr() and back.dtype == t.dtype
    # and the other way: numpy's memory through pyc10 and back to numpy
    src = np.asarray(np.arange(12).reshape(3, 4) % 2, dtype=name)
    p = pyc10.from_dlpack(src)
    assert p.data_ptr() == src.ctypes.data and p.tolist() == src.tolist()
    assert np.from_dlpack(p).ctypes.data == src.ctypes.data


@pytest.mark.parametrize("name", NUMPY_DTYPES + TORCH_ONLY)
def test_torch_round_trips_share_memory(name):
    t = filled(name)
    tt = torch.from_dlpack(t)
    assert tt.dtype == getattr(torch, name) and tuple(tt.shape) == (3, 4)
    assert tt.data_ptr() == t.data_ptr()
    back = pyc10.from_dlpack(tt)
    assert back.data_ptr() == t.data_ptr() and back.dtype == t.dtype
    src = torch.zeros(3, 4, dtype=getattr(torch, name))
    p = pyc10.from_dlpack(src)
    assert p.data_ptr() == src.data_ptr() and p.dtype == getattr(pyc10, name)
    assert tuple(p.stride()) == src.stride()


def dl_dtype(capsule):
    """(code, bits, lanes) of the DLTensor in an unused capsule of either kind."""
    name = b"dltensor_versioned" if "versioned" in repr(capsule) else b"dltensor"
    p = _get_pointer(capsule, name) + (32 if name == b"dltensor_versioned" else 0)
    code = ctypes.c_uint8.from_address(p + 20).value
    bits = ctypes.c_uint8.from_address(p + 21).value
    return code, bits, ctypes.c_uint16.from_address(p + 22).value


@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_float4_e2m1fn_x2_round_trips_with_torch_both_ways(max_version):
    # the dtype triple is torch 2.13's own (its export is the oracle), and each side imports it
    src = torch.arange(12, dtype=torch.uint8).reshape(3, 4).view(torch.float4_e2m1fn_x2)
    kw = {} if max_version is None else {"max_version": max_version}
    t = filled("float4_e2m1fn_x2")
    assert dl_dtype(t.__dlpack__(**kw)) == dl_dtype(src.__dlpack__(**kw))
    # pyc10 -> torch -> pyc10, zero-copy
    tt = torch.from_dlpack(t)
    assert tt.dtype == torch.float4_e2m1fn_x2 and tuple(tt.shape) == (3, 4)
    assert tt.data_ptr() == t.data_ptr()
    assert tt.view(torch.uint8).tolist() == t.view(pyc10.uint8).tolist()
    back = pyc10.from_dlpack(tt)
    assert back.dtype == pyc10.float4_e2m1fn_x2 and back.data_ptr() == t.data_ptr()
    # torch -> pyc10 -> torch, a strided view included
    for s in (src, src.t(), src[:, 1::2]):
        p = pyc10.from_dlpack(s)
        assert p.dtype == pyc10.float4_e2m1fn_x2
        assert tuple(p.shape) == tuple(s.shape) and tuple(p.stride()) == s.stride()
        assert p.data_ptr() == s.data_ptr()
        again = torch.from_dlpack(p)
        assert again.dtype == s.dtype and again.stride() == s.stride()
        assert again.view(torch.uint8).tolist() == s.view(torch.uint8).tolist()


def random_view(rng, t):
    """A random strided view of t (transposes, steps, offsets, size-1 and size-0 dims)."""
    for _ in range(rng.randint(0, 4)):
        n = t.dim()
        if n == 0:
            break
        kind = rng.choice(["t", "slice", "select", "unsqueeze"])
        if kind == "t" and n >= 2:
            t = t.transpose(rng.randrange(n), rng.randrange(n))
        elif kind == "slice":
            d = rng.randrange(n)
            start = rng.randint(0, t.shape[d])
            t = t._slice(d, start, None, rng.randint(1, 3))
        elif kind == "select" and t.shape[0] > 0:
            t = t[rng.randrange(t.shape[0])]
        else:
            t = t.unsqueeze(rng.randint(0, n))
    return t


def test_random_strided_views_go_both_ways_zero_copy():
    rng = random.Random(5)
    for _ in range(300):
        shape = [rng.randint(0, 4) for _ in range(rng.randint(0, 4))]
        base = pyc10.from_numpy(np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape))
        v = random_view(rng, base)
        for other in (np.from_dlpack(v), torch.from_dlpack(v)):
            assert tuple(other.shape) == tuple(v.shape)
            assert np.asarray(other).tolist() == v.tolist()
            if v.numel():
                ptr = other.ctypes.data if isinstance(other, np.ndarray) else other.data_ptr()
                assert ptr == v.data_ptr()
        # numpy views into pyc10: same strides for every dim that has two elements or more
        a = np.arange(60.0).reshape(3, 4, 5)[:, ::2].transpose(2, 0, 1)[1:]
        p = pyc10.from_dlpack(a)
        assert p.tolist() == a.tolist() and p.data_ptr() == a.ctypes.data
        assert [s * 8 for s in p.stride()] == list(a.strides)


def test_writes_are_seen_on_both_sides():
    t = pyc10.zeros(2, 3)
    a, tt = np.from_dlpack(t), torch.from_dlpack(t)
    a[0, 1] = 5
    tt[1, 2] = 7
    assert t.tolist() == [[0, 5, 0], [0, 0, 7]]
    t[0, 0] = 9
    assert a[0, 0] == 9 and tt[0, 0] == 9
    src = np.zeros(4)
    p = pyc10.from_dlpack(src)
    p[1:3] = 2.5
    assert src.tolist() == [0, 2.5, 2.5, 0]


@pytest.mark.parametrize("consumer", ["numpy", "torch"])
@pytest.mark.parametrize("producer_first", [True, False])
def test_exports_live_until_both_sides_let_go(consumer, producer_first):
    before = allocated()
    t = pyc10.from_numpy(np.arange(1000, dtype=np.float32)).clone()  # pyc10's own memory
    other = np.from_dlpack(t) if consumer == "numpy" else torch.from_dlpack(t)
    assert allocated() > before
    if producer_first:
        del t
        assert allocated() > before
        assert float(other[999]) == 999.0  # still valid
        del other
    else:
        del other
        assert allocated() > before
        assert t[999].item() == 999.0
        del t
    assert allocated() == before


@pytest.mark.parametrize("producer", ["numpy", "torch"])
def test_imports_release_the_producer_exactly_once(producer):
    a = np.arange(10.0) if producer == "numpy" else torch.arange(10.0)
    refs = sys.getrefcount(a)
    p = pyc10.from_dlpack(a)
    views = [p[1:], p.view(2, 5).t(), p[3]]
    assert sys.getrefcount(a) > refs  # the capsule's owner holds a
    del p
    gc.collect()
    assert sys.getrefcount(a) > refs
    assert views[1].tolist()[4][1] == 9.0
    del views
    gc.collect()
    assert sys.getrefcount(a) == refs


def test_capsule_rules():
    before = allocated()
    t = pyc10.ones(1000)
    capsule = t.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(capsule)
    del t
    assert allocated() > before  # the export holds the tensor
    del capsule  # never consumed: its destructor frees the export
    assert allocated() == before
    # in a reference cycle, the collector frees it
    holder = [pyc10.ones(1000).__dlpack__()]
    holder.append(holder)
    del holder
    assert allocated() == before
    t = pyc10.ones(2)
    # consumed once, renamed, refused the second time
    capsule = t.__dlpack__(max_version=(1, 3))
    p = pyc10.from_dlpack(capsule)
    assert "used_dltensor_versioned" in repr(capsule)
    with pytest.raises(ValueError, match="can be consumed only once"):
        pyc10.from_dlpack(capsule)
    del capsule
    assert p.tolist() == [1.0, 1.0]
    legacy = t.__dlpack__()
    assert repr(legacy).startswith('<capsule object "dltensor"')
    q = torch.from_dlpack(legacy)
    with pytest.raises(ValueError):
        pyc10.from_dlpack(legacy)
    assert q.tolist() == [1.0, 1.0]
    with pytest.raises(ValueError):
        pyc10.from_dlpack(_new_capsule(t.data_ptr(), b"not_dltensor", None))
    with pytest.raises(TypeError):
        pyc10.from_dlpack(3)
    with pytest.raises(TypeError):
        pyc10.from_dlpack(t, nonsense=1)


def test_protocol_keywords():
    t = pyc10.zeros(3)
    assert t.__dlpack_device__() == (1, 0)
    assert versioned_header(t.__dlpack__(max_version=(1, 0))) == (1, 0, 0)
    assert versioned_header(t.__dlpack__(max_version=(1, 2))) == (1, 2, 0)
    assert versioned_header(t.__dlpack__(max_version=(1, 9))) == (1, 3, 0)
    assert versioned_header(t.__dlpack__(max_version=(2, 0))) == (1, 3, 0)
    assert "versioned" not in repr(t.__dlpack__(max_version=(0, 8)))
    assert t.__dlpack__(dl_device=(1, 0), stream=None, copy=False) is not None
    assert t.__dlpack__(stream=-1) is not None
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError):
        t.__dlpack__(stream=1)
    with pytest.raises(TypeError):
        t.__dlpack__(None)
    with pytest.raises(TypeError):
        t.__dlpack__(max_version=3)
    copied = t.__dlpack__(max_version=(1, 0), copy=True)
    assert versioned_header(copied)[2] == 2  # IS_COPIED
    c = pyc10.from_dlpack(copied)
    assert c.data_ptr() != t.data_ptr()
    # consumer keywords
    a = np.arange(4.0)
    assert pyc10.from_dlpack(a, copy=True).data_ptr() != a.ctypes.data
    assert pyc10.from_dlpack(a, copy=False).data_ptr() == a.ctypes.data
    assert pyc10.from_dlpack(a, device="cpu").data_ptr() == a.ctypes.data
    assert pyc10.from_dlpack(a, device=pyc10.device("cpu"), copy=True).tolist() == a.tolist()
    with pytest.raises(BufferError, match="unsupported device requested"):  # numpy's refusal
        pyc10.from_dlpack(a, device="cuda:0")
    with pytest.raises(BufferError, match="only CPU and CUDA"):
        pyc10.from_dlpack(a, device="meta")
    with pytest.raises(RuntimeError):
        pyc10.from_dlpack(a, device="nonsense")
    assert np.from_dlpack(t, copy=True).ctypes.data != t.data_ptr()


def test_an_old_producer_without_keywords_is_retried():
    class Old:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__()

    a = np.arange(3.0)
    p = pyc10.from_dlpack(Old(a))
    assert p.data_ptr() == a.ctypes.data and p.tolist() == [0.0, 1.0, 2.0]


def test_read_only_memory_stays_read_only():
    a = np.arange(4.0)
    a.flags.writeable = False
    for p in (pyc10.from_dlpack(a), pyc10.from_numpy(a)):
        with pytest.raises(RuntimeError, match="read-only"):
            p.fill_(1)
        with pytest.raises(RuntimeError, match="read-only"):
            p[1:] = 3.0
        with pytest.raises(RuntimeError, match="read-only"):
            p[0].zero_()
        assert not np.from_dlpack(p).flags.writeable
        assert not p.numpy().flags.writeable
        assert versioned_header(p.__dlpack__(max_version=(1, 0)))[2] == 1  # READ_ONLY
        with pytest.raises(BufferError, match="read-only"):
            p.__dlpack__()  # legacy: no flag to say so
        assert p.clone().fill_(1).tolist() == [1.0] * 4
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_what_dlpack_cannot_carry_is_refused():
    with pytest.raises(BufferError, match="QUInt/QInt types are not supported by dlpack"):
        pyc10.empty(2, dtype=pyc10.qint8).__dlpack__()
    with pytest.raises(BufferError, match="Bit types are not supported by dlpack"):
        pyc10.empty(2, dtype=pyc10.bits8).__dlpack__(max_version=(1, 0))
    with pytest.raises(BufferError, match="negative strides"):
        pyc10.from_dlpack(np.arange(5)[::-1])
    refs = sys.getrefcount(np)  # nothing leaks from a refused import: the capsule frees it
    a = np.arange(5)[::-1]
    before = sys.getrefcount(a)
    with pytest.raises(BufferError):
        pyc10.from_dlpack(a)
    gc.collect()
    assert sys.getrefcount(a) == before and sys.getrefcount(np) == refs


@pytest.mark.parametrize("kwargs", [{}, {"device": "cpu"}, {"copy": True}, {"device": "xla"}])
def test_a_meta_tensor_fails_in_dlpack_device_first_as_torchs(kwargs):
    # torch's from_dlpack asks __dlpack_device__() before anything else: its ValueError, not the
    # BufferError __dlpack__ would raise, whatever the other arguments
    errors = []
    for lib in (torch, pyc10):
        with pytest.raises(ValueError) as info:
            lib.from_dlpack(lib.empty(2, device="meta"), **kwargs)
        errors.append(str(info.value))
    assert errors[1] == errors[0] == "Unknown device type meta for Dlpack"


def test_zero_dim_and_empty_tensors():
    s = pyc10.full((), 3.5)
    assert np.from_dlpack(s).shape == () and float(np.from_dlpack(s)) == 3.5
    assert torch.from_dlpack(s).item() == 3.5
    assert pyc10.from_dlpack(np.array(2.0)).item() == 2.0
    e = pyc10.empty(0, 3)
    assert np.from_dlpack(e).shape == (0, 3) and tuple(torch.from_dlpack(e).shape) == (0, 3)
    assert tuple(pyc10.from_dlpack(np.empty((2, 0))).shape) == (2, 0)


def test_exports_dropped_on_other_threads():
    before = allocated()
    t = pyc10.zeros(64)
    base_uses = t.untyped_storage().use_count()
    capsules = [t.__dlpack__(max_version=(1, 3)) for _ in range(500)]
    arrays = [np.from_dlpack(t) for _ in range(500)]
    imported = [pyc10.from_dlpack(np.arange(8.0)) for _ in range(500)]

    def drop(items):
        while items:
            items.pop()

    threads = [threading.Thread(target=drop, args=(x,)) for x in (capsules, arrays, imported)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    gc.collect()
    assert t.untyped_storage().use_count() == base_uses
    del t
    assert allocated() == before


def test_pickle_and_deepcopy_keep_data_geometry_and_sharing():
    a = pyc10.from_numpy(np.arange(24, dtype=np.int32).reshape(2, 3, 4)).clone()
    views = [a, a.transpose(0, 2)[1:], a[1, :, ::2], a.view(6, 4)]
    for loaded in (pickle.loads(pickle.dumps(views)), copy.deepcopy(views)):
        for old, new in zip(views, loaded, strict=True):
            assert new.dtype == old.dtype and new.shape == old.shape
            assert new.stride() == old.stride()
            assert new.storage_offset() == old.storage_offset()
            assert new.tolist() == old.tolist()
        storages = {id(x.untyped_storage()) for x in loaded}
        assert len(storages) == 1  # still one storage for all four
        assert loaded[0].data_ptr() != a.data_ptr()
        loaded[0].zero_()
        assert not any(np.asarray(loaded[2].tolist()).ravel())
    for name in NUMPY_DTYPES + TORCH_ONLY + ["complex32", "uint3"]:
        t = filled(name, (2, 3))
        u = pickle.loads(pickle.dumps(t))
        assert u.dtype == t.dtype and same_bytes(u, t.data_ptr())
    s = pickle.loads(pickle.dumps(pyc10.UntypedStorage(5)))
    assert s.nbytes() == 5


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device_type", ctypes.c_int32),
        ("device_id", ctypes.c_int32),
        ("ndim", ctypes.c_int32),
        ("code", ctypes.c_uint8),
        ("bits", ctypes.c_uint8),
        ("lanes", ctypes.c_uint16),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _Versioned(ctypes.Structure):
    _fields_ = [
        ("major", ctypes.c_uint32),
        ("minor", ctypes.c_uint32),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", _DELETER),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", _DLTensor),
    ]


def test_malformed_structs_in_capsules_are_refused_and_stay_with_the_capsule():
    deleted = []
    deleter = _DELETER(lambda p: deleted.append(p))
    buffer = (ctypes.c_float * 6)(*range(6))
    shape = (ctypes.c_int64 * 2)(2, 3)

    def capsule(**changes):
        m = _Versioned(1, 3, None, deleter, 0)
        m.dl_tensor = _DLTensor(ctypes.addressof(buffer), 1, 0, 2, 2, 32, 1, shape, None, 0)
        for key, value in changes.items():
            target = m if hasattr(m, key) and key in dict(_Versioned._fields_) else m.dl_tensor
            setattr(target, key, value)
        return m, _new_capsule(ctypes.addressof(m), b"dltensor_versioned", None)

    _struct, good = capsule()
    t = pyc10.from_dlpack(good)
    assert t.tolist() == [[0, 1, 2], [3, 4, 5]] and t.data_ptr() == ctypes.addressof(buffer)
    del t
    gc.collect()
    assert len(deleted) == 1  # once, when the tensor went
    cases = [
        ({"major": 2}, BufferError, "DLPack version 2.3 is not supported"),
        ({"shape": None}, ValueError, "shape"),
        ({"data": None}, ValueError, "data"),
        ({"lanes": 4}, BufferError, "lanes"),
        ({"device_type": 5}, BufferError, "Unsupported device_type: 5"),
        ({"ndim": -3}, RuntimeError, "negative ndim"),
    ]
    for changes, error, text in cases:
        _struct, bad = capsule(**changes)  # _struct: the memory the capsule points at
        with pytest.raises(error, match=text):
            pyc10.from_dlpack(bad)
        assert "used" not in repr(bad)  # still the producer's to free
    assert len(deleted) == 1
