"""pyc10.UntypedStorage against torch.UntypedStorage, and pyc10.memory statistics."""

from __future__ import annotations

import copy
import gc
import os
import pickle
import re
import resource
import threading
import warnings
import weakref

import numpy as np
import pytest
import torch
from _oracle import TORCH_CUDA_BUILD_WITHOUT_GPU

import pyc10


def test_storage_basics_match_torch():
    for n in (0, 1, 10, 4096, 1 << 20):
        ours, theirs = pyc10.UntypedStorage(n), torch.UntypedStorage(n)
        assert ours.nbytes() == theirs.nbytes() == len(ours) == len(theirs) == ours.size()
        assert ours.resizable() == theirs.resizable()
        assert str(ours.device) == str(theirs.device)
        assert ours.element_size() == theirs.element_size()
        assert (ours.data_ptr() == 0) == (theirs.data_ptr() == 0)
        if n:
            assert ours.data_ptr() % 64 == 0


def test_resize_keeps_the_prefix_like_torch():
    ours, theirs = pyc10.UntypedStorage(4), torch.UntypedStorage(4)
    for i in range(4):
        ours[i] = i + 1
        theirs[i] = i + 1
    ours.resize_(10)
    theirs.resize_(10)
    assert ours.tolist()[:4] == theirs.tolist()[:4] == [1, 2, 3, 4]
    ours.resize_(2)
    theirs.resize_(2)
    assert ours.tolist() == theirs.tolist() == [1, 2]
    assert ours.resize_(0).nbytes() == 0


def torch_error(fn):
    try:
        fn()
    except Exception as e:
        return type(e), str(e)
    raise AssertionError("torch did not raise")


@pytest.mark.parametrize("size", [-1, -(1 << 40)])
def test_negative_sizes_raise_torchs_error(size):
    kind, message = torch_error(lambda: torch.UntypedStorage(size))
    with pytest.raises(kind) as info:
        pyc10.UntypedStorage(size)
    # torch prefixes "[enforce fail at alloc_cpu.cpp:98] ((ptrdiff_t)nbytes) >= 0. "
    assert message.endswith(str(info.value))
    kind, message = torch_error(lambda: torch.UntypedStorage(4).resize_(size))
    with pytest.raises(kind) as info:
        pyc10.UntypedStorage(4).resize_(size)
    assert message.endswith(str(info.value))


def test_impossible_size_raises_memory_error_with_the_size():
    kind, message = torch_error(lambda: torch.UntypedStorage(1 << 50))
    assert kind is RuntimeError
    with pytest.raises(MemoryError) as info:
        pyc10.UntypedStorage(1 << 50)
    assert "you tried to allocate 1125899906842624 bytes" in str(info.value)
    assert "you tried to allocate 1125899906842624 bytes" in message
    for call in (lambda m: m.UntypedStorage(1.5), lambda m: m.UntypedStorage(4).resize_("8")):
        same_error(call)
    with pytest.raises(RuntimeError, match=r"Allocator for MAIA is not set\."):
        pyc10.UntypedStorage(4, device="maia")


def test_indexing_checks_bounds():
    s = pyc10.UntypedStorage(3)
    s[-1] = 300
    assert s[2] == 300 & 0xFF
    with pytest.raises(IndexError):
        s[3]
    with pytest.raises(IndexError):
        s[-4] = 0
    assert repr(s).endswith("[pyc10.UntypedStorage(device=cpu) of size 3]")


def current(key="allocation.all.current"):
    return pyc10.memory.stats()[key]


def test_stats_count_storages_and_their_bytes():
    gc.collect()
    count, nbytes = current(), current("allocated_bytes.all.current")
    small = pyc10.UntypedStorage(100)
    large = pyc10.UntypedStorage(1 << 20)
    assert current() == count + 2
    assert current("allocation.large_pool.current") >= 1
    assert current("allocated_bytes.all.current") - nbytes == 128 + (1 << 20)
    assert current("requested_bytes.large_pool.current") >= 1 << 20
    del small, large
    assert current() == count
    assert current("allocated_bytes.all.current") == nbytes
    stats = pyc10.memory.stats()
    for key in (
        "allocation.all.peak",
        "reserved_bytes.all.current",
        "num_alloc_retries",
        "num_ooms",
        "num_device_alloc",
        "segment.large_pool.current",
        "requested_bytes.small_pool.allocated",
        "oversize_allocations.current",
    ):
        assert key in stats
    assert list(stats) == sorted(stats)
    pyc10.memory.reset_peak_stats()
    assert current("allocated_bytes.all.peak") == current("allocated_bytes.all.current")
    pyc10.memory.empty_cache()
    assert current("reserved_bytes.large_pool.current") == 0
    assert "Allocated memory" in pyc10.memory.summary()


def test_set_config_rejects_unknown_keys():
    with pytest.raises(ValueError, match=r"Unrecognized key 'foo' in CPU allocator config\."):
        pyc10.memory.set_config("foo:1")
    with pytest.raises(TypeError):
        pyc10.memory.set_config(3)  # type: ignore[arg-type]
    pyc10.memory.set_config("max_cached_mb:1024")


def test_storages_are_freed_when_the_last_python_reference_goes():
    gc.collect()
    count = current()
    s = pyc10.UntypedStorage(64)
    w = weakref.ref(s)
    del s
    assert w() is None
    assert current() == count


def test_a_million_create_drop_cycles_leak_nothing():
    gc.collect()
    count = current()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    make = pyc10.UntypedStorage
    for _ in range(1_000_000):
        make(64)
    assert current() == count
    growth_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before
    assert growth_kib < 16 * 1024


def test_storages_dropped_on_other_threads():
    gc.collect()
    count = current()
    made = [pyc10.UntypedStorage(n) for n in (10, 1000, 300000, 3 << 20) * 50]

    def drop(items):
        items.clear()

    threads = [threading.Thread(target=drop, args=(made[i::4],)) for i in range(4)]
    made_ids = len(made)
    del made
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert made_ids == 200
    assert current() == count


def test_numpy_view_of_storage_bytes():
    s = pyc10.UntypedStorage(8)
    for i in range(8):
        s[i] = i
    view = np.frombuffer(bytes(s.tolist()), dtype=np.uint8)
    assert view.tolist() == list(range(8))


def test_junk_fill_writes_cs_pattern_into_new_storages():
    pyc10.memory.set_config("fill:junk")
    try:
        s = pyc10.UntypedStorage(10)
        assert s.tolist() == [0xEF, 0xBE, 0xED, 0x7F] * 2 + [0xEF, 0xBE]
        as_float = np.frombuffer(bytes(s.tolist()[:4]), dtype=np.float32)
        assert np.isnan(as_float[0])
    finally:
        pyc10.memory.set_config("fill:none")
    pyc10.memory.set_config("fill:zero")
    try:
        assert pyc10.UntypedStorage(300000).tolist()[-1] == 0
    finally:
        pyc10.memory.set_config("fill:none")


def same_error(call):
    """call(torch) and call(pyc10) raise the same class (pyc10's derives from it) and message."""
    kind, message = torch_error(lambda: call(torch))
    with pytest.raises(kind) as info:
        call(pyc10)
    assert isinstance(info.value, pyc10.C10Error)
    assert str(info.value) == message.replace("torch.", "pyc10.")


def filled(mod, values=(1, 2, 3, 4)):
    s = mod.UntypedStorage(len(values))
    for i, v in enumerate(values):
        s[i] = v
    return s


def test_constructor_signatures_match_torch():
    for args, kwargs in [
        ((), {}),
        ((), {"size": 3}),
        ((np.int64(3),), {}),
        ((np.int32(2),), {"device": "cpu"}),
        ((3,), {"device": None, "allocator": None}),
        (([1, 2, 300, -1, True],), {}),
        ((b"abc",), {}),
        ((bytearray(b"xy"),), {}),
        ((range(4),), {}),
    ]:
        ours = pyc10.UntypedStorage(*args, **kwargs)
        theirs = torch.UntypedStorage(*args, **kwargs)
        assert ours.nbytes() == theirs.nbytes()
        if not (args and isinstance(args[0], (int, np.integer))) and "size" not in kwargs:
            assert ours.tolist() == theirs.tolist()
    for bad in ([1.5], [1, "a"], "abc", 3.0, True, iter([1]), {1: 2}, np.arange(3)):
        same_error(lambda m, bad=bad: m.UntypedStorage(bad))
    with pytest.raises(TypeError, match="received an invalid combination of arguments"):
        pyc10.UntypedStorage(3, 4)
    with pytest.raises(TypeError, match="received an invalid combination of arguments"):
        pyc10.UntypedStorage(3, foo=1)
    same_error(lambda m: m.UntypedStorage(2**63))


def test_indexing_matches_torch():
    ours, theirs = filled(pyc10), filled(torch)
    for index in (0, -1, 3, np.int64(1), -4):
        assert ours[index] == theirs[index]
    for index in (4, -5):
        same_error(lambda m, i=index: filled(m)[i])
    for index in (True, 1.0, "a", None, ...):
        same_error(lambda m, i=index: filled(m)[i])
    for sl in (slice(1, 3), slice(None), slice(3, 1), slice(5, 10), slice(-3, None)):
        view, tview = ours[sl], theirs[sl]
        assert type(view) is pyc10.UntypedStorage
        assert view.tolist() == tview.tolist() and view.resizable() == tview.resizable()
    view = ours[1:3]
    assert view.data_ptr() - ours.data_ptr() == 1
    view[0] = 77
    assert ours[1] == 77  # a view of the same bytes, as torch
    del ours
    assert view.tolist() == [77, 3]  # the view keeps the base alive
    for sl in (slice(None, None, 2), slice(0, 2, -1)):
        same_error(lambda m, sl=sl: filled(m)[sl])
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        filled(pyc10)[0:2:0]


def test_setitem_matches_torch():
    for index, value in [(0, 300), (0, -1), (0, -129), (1, True), (np.int64(2), 5)]:
        ours, theirs = filled(pyc10), filled(torch)
        ours[index] = value
        theirs[index] = value
        assert ours.tolist() == theirs.tolist()
    for sl, value in [(slice(1, 3), 9), (slice(None), 1000), (slice(5, 9), 3), (slice(3, 1), 3)]:
        ours, theirs = filled(pyc10), filled(torch)
        ours[sl] = value
        theirs[sl] = value
        assert ours.tolist() == theirs.tolist()

    def setter(index, value):
        def call(m):
            s = filled(m)
            s[index] = value

        return call

    for index, value in [(0, 1.5), (0, np.int64(5)), (0, "a"), (slice(1, 3), [1, 2])]:
        same_error(setter(index, value))
    for index in ("a", 1.0, True):
        same_error(setter(index, 1))
    same_error(setter(slice(None, None, 2), 1))
    # deliberate difference: torch's __setitem__ refuses every negative index ("out of bounds")
    s = filled(pyc10)
    s[-1] = 9
    assert s.tolist() == [1, 2, 3, 9]
    with pytest.raises(IndexError, match="index 4 out of range for storage of size 4"):
        s[4] = 0
    with pytest.raises(TypeError):
        del s[0]


def test_methods_match_torch():
    ours, theirs = filled(pyc10), filled(torch)
    assert len(ours) == len(theirs) and list(ours) == list(theirs)
    assert ours.element_size() == theirs.element_size() == 1
    assert ours.is_cuda is theirs.is_cuda is False
    assert ours.is_shared() is theirs.is_shared() is False
    assert ours.cpu() is ours and ours.untyped() is ours
    c = ours.clone()
    assert c.tolist() == theirs.clone().tolist() and c.data_ptr() != ours.data_ptr()
    for value in (7, 300, -1, True, -129):
        assert ours.fill_(value).tolist() == theirs.fill_(value).tolist()
    for value in (1.5, np.int64(3), np.float64(3), "a"):
        same_error(lambda m, v=value: filled(m).fill_(v))
    src_o, src_t = filled(pyc10, (9, 8, 7, 6)), filled(torch, (9, 8, 7, 6))
    assert ours.copy_(src_o) is ours and ours.tolist() == theirs.copy_(src_t).tolist()
    assert ours.copy_(filled(pyc10), non_blocking=True).tolist() == [1, 2, 3, 4]
    assert ours.copy_(src=src_o, non_blocking=None).tolist() == [9, 8, 7, 6]
    for call in (
        lambda m: filled(m).copy_(m.UntypedStorage(3)),
        lambda m: filled(m).copy_(m.zeros(4, dtype=m.uint8)),
        lambda m: filled(m).copy_(1),
        lambda m: filled(m).copy_(),
        lambda m: filled(m).copy_(filled(m), 1),
        lambda m: filled(m).copy_(filled(m), foo=1),
        lambda m: filled(m).copy_(filled(m), True, 3),
        lambda m: filled(m).resize_(1.0),
        lambda m: filled(m).resize_(True),
    ):
        same_error(call)
    assert ours.resize_(np.int64(6)).nbytes() == theirs.resize_(np.int64(6)).nbytes() == 6


def test_from_buffer_matches_torch():
    cases = [
        ((b"abcd", "little"), {"dtype": "int16"}),
        ((b"abcd", "big"), {"dtype": "int16"}),
        ((b"abcd", "native"), {"dtype": "int16"}),
        ((b"abcd", "big"), {"dtype": "int32"}),
        ((b"abcdefgh", "big"), {"dtype": "complex64"}),
        ((b"abcd",), {"dtype": "uint8"}),
        ((b"ab\0d", "little"), {"dtype": "bool"}),
        ((b"abcdef", "little"), {"count": 2, "offset": 1, "dtype": "int16"}),
        ((bytearray(b"xy"),), {"dtype": "int8"}),
        ((memoryview(b"xy"),), {"dtype": "uint8"}),
        ((np.arange(3, dtype=np.int32), "little"), {"dtype": "float32"}),
        ((b"",), {"dtype": "uint8"}),
        ((b"abcd",), {"dtype": "uint8", "count": 0}),
    ]
    for args, kwargs in cases:
        ours = pyc10.UntypedStorage.from_buffer(
            *args, **{**kwargs, "dtype": getattr(pyc10, kwargs["dtype"])}
        )
        theirs = torch.UntypedStorage.from_buffer(
            *args, **{**kwargs, "dtype": getattr(torch, kwargs["dtype"])}
        )
        assert type(ours) is pyc10.UntypedStorage and ours.resizable()
        assert ours.tolist() == theirs.tolist()
    for call in (
        lambda m: m.UntypedStorage.from_buffer(b"abcd"),
        lambda m: m.UntypedStorage.from_buffer(b"abcd", dtype=m.int16),
        lambda m: m.UntypedStorage.from_buffer(b"abcde", "little", dtype=m.int16),
        lambda m: m.UntypedStorage.from_buffer(b"abcd", "bad", dtype=m.int16),
        lambda m: m.UntypedStorage.from_buffer(b"abcd", "little", dtype=m.complex64),
        lambda m: m.UntypedStorage.from_buffer(b"abcd", offset=9, dtype=m.uint8),
        lambda m: m.UntypedStorage.from_buffer(b"abcd", offset=-1, dtype=m.uint8),
        lambda m: m.UntypedStorage.from_buffer(b"abcd", count=9, dtype=m.uint8),
        lambda m: m.UntypedStorage.from_buffer(3, dtype=m.uint8),
    ):
        same_error(call)
    with pytest.raises(TypeError):
        pyc10.UntypedStorage.from_buffer()


def test_from_file_matches_torch(tmp_path):
    path = str(tmp_path / "f")
    with open(path, "wb") as f:
        f.write(bytes(range(10)))
    for args in ((), (False,), (False, 4), (True, 4), (False, 0)):
        ours = pyc10.UntypedStorage.from_file(path, *args)
        theirs = torch.UntypedStorage.from_file(path, *args)
        assert ours.tolist() == theirs.tolist() and ours.resizable() == theirs.resizable()
    private = pyc10.UntypedStorage.from_file(path, False, 4)
    private[0] = 99
    shared = pyc10.UntypedStorage.from_file(path, shared=True, nbytes=4)
    assert shared[0] == 0  # the private mapping's write did not reach the file
    shared[1] = 98
    del shared
    with open(path, "rb") as f:
        assert f.read(2) == b"\x00b"
    grown = str(tmp_path / "g")
    assert pyc10.UntypedStorage.from_file(grown, True, 4).tolist() == [0, 0, 0, 0]
    assert os.path.getsize(grown) == 4
    for call in (
        lambda m: m.UntypedStorage.from_file(path, False, 20),
        lambda m: m.UntypedStorage.from_file(path + "x", False, 4),
    ):
        kind, message = torch_error(lambda call=call: call(torch))
        with pytest.raises(kind) as info:
            call(pyc10)
        assert str(info.value) == message
    with pytest.raises(TypeError):
        pyc10.UntypedStorage.from_file(3)  # type: ignore[arg-type]


def test_share_memory_as_torch():
    ours, theirs = pyc10.UntypedStorage(3), torch.UntypedStorage(3)
    ours.fill_(7)
    theirs.fill_(7)
    assert ours.is_shared() is theirs.is_shared() is False
    assert ours.share_memory_() is ours and theirs.share_memory_() is theirs
    assert ours.is_shared() is theirs.is_shared() is True
    assert ours.tolist() == theirs.tolist()
    empty, tempty = pyc10.UntypedStorage(0).share_memory_(), torch.UntypedStorage(0).share_memory_()
    assert empty.is_shared() is tempty.is_shared() is True
    for call in (lambda s: s.share_memory_(1), lambda s: s.is_shared(1)):
        with pytest.raises(TypeError) as a:
            call(ours)
        with pytest.raises(TypeError) as b:
            call(theirs)
        assert str(a.value) == str(b.value)
    # deliberate difference: torch's shared storage says resizable() and its resize_ crashes
    assert not ours.resizable()
    with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
        ours.resize_(8)


def test_untyped_storage_gives_one_object_per_storage():
    x = pyc10.zeros(4)
    s = x.untyped_storage()
    assert s is x.untyped_storage() is x[1:].untyped_storage()
    assert type(s) is pyc10.UntypedStorage and isinstance(s, pyc10._ctensor.StorageBase)
    assert s.nbytes() == torch.zeros(4).untyped_storage().nbytes()
    y = pyc10.zeros(4)
    assert y.untyped_storage() is not s


def test_pickle_and_copies_keep_the_bytes():
    s = filled(pyc10)
    for t in (pickle.loads(pickle.dumps(s)), copy.copy(s), copy.deepcopy(s)):
        assert t.tolist() == [1, 2, 3, 4] and t.data_ptr() != s.data_ptr()
    assert repr(s) == repr(filled(torch)).replace("torch.storage.", "pyc10.")


def _outcome(call, *args):
    """What call(*args) gives: ("ok", its value) or (the builtin exception's name, message)."""
    try:
        r = call(*args)
    except Exception as e:
        builtin = next(c for c in type(e).__mro__ if c.__module__ == "builtins")
        return builtin.__name__, str(e).replace("torch.", "pyc10.").replace("storage.", "")
    if hasattr(r, "tolist"):
        return "ok", r.tolist()
    return "ok", r


@pytest.mark.parametrize(
    "name", ["float32", "complex64", "int16", "bool", "complex128", "float16", "int64", "uint8"]
)
def test_byteswap_matches_torch(name):
    data = list(range(1, 33))
    ours, theirs = pyc10.UntypedStorage(data), torch.UntypedStorage(data)
    assert ours.byteswap(getattr(pyc10, name)) is None
    theirs.byteswap(getattr(torch, name))
    assert ours.tolist() == theirs.tolist()


def test_byteswap_errors_match_torch():
    for make, call in (
        (lambda m: m.UntypedStorage(8), lambda s, m: s.byteswap("x")),
        (lambda m: m.UntypedStorage(8), lambda s, m: s.byteswap(None)),
        (lambda m: m.UntypedStorage(8), lambda s, m: s.byteswap(3)),
        (lambda m: m.UntypedStorage(3), lambda s, m: s.byteswap(m.int16)),
        (lambda m: m.UntypedStorage(6), lambda s, m: s.byteswap(m.float64)),
        (lambda m: m.UntypedStorage(8), lambda s, m: s._byteswap(3)),
        (lambda m: m.UntypedStorage(8), lambda s, m: s._byteswap(16)),
        (lambda m: m.UntypedStorage(8), lambda s, m: s._byteswap(-1)),
        (lambda m: m.UntypedStorage(8), lambda s, m: s._byteswap("a")),
        (lambda m: m.UntypedStorage(8), lambda s, m: s._byteswap(2.0)),
    ):
        ours, theirs = make(pyc10), make(torch)
        assert _outcome(call, ours, pyc10) == _outcome(call, theirs, torch)


def test_new_is_an_empty_storage_on_the_same_device_as_torchs():
    ours, theirs = pyc10.UntypedStorage([1, 2, 3]), torch.UntypedStorage([1, 2, 3])
    n, tn = ours.new(), theirs.new()
    assert type(n) is pyc10.UntypedStorage and n.nbytes() == tn.nbytes() == 0
    assert str(n.device) == str(tn.device) and n.data_ptr() != ours.data_ptr()
    assert ours.tolist() == [1, 2, 3]
    for call in (lambda s: s.new(1), lambda s: s.new(1, 2), lambda s: s.new(size=1)):
        with pytest.raises(TypeError) as e:
            call(theirs)
        with pytest.raises(TypeError, match=re.escape(str(e.value))):
            call(ours)


def test_to_matches_torch():
    ours, theirs = pyc10.UntypedStorage([1, 2, 3]), torch.UntypedStorage([1, 2, 3])
    for device in ("cpu", pyc10.device("cpu")):
        assert ours.to(device=device) is ours
    assert ours.to(device="cpu", non_blocking=True) is ours
    calls = [
        lambda s: s.to("cpu"),
        lambda s: s.to(),
        lambda s: s.to(device="cpu", foo=1),
        lambda s: s.to(device="meta"),
        lambda s: s.to(device="foo"),
    ]
    if not TORCH_CUDA_BUILD_WITHOUT_GPU:  # which reaches CUDA here (pyc10, as the CPU build: no)
        calls += [lambda s: s.to(device="cuda"), lambda s: s.to(device=3)]
    for call in calls:
        assert _outcome(call, ours) == _outcome(call, theirs)


def test_type_matches_torch():
    ours, theirs = pyc10.UntypedStorage([1, 2, 3]), torch.UntypedStorage([1, 2, 3])
    assert ours.type() == "pyc10.UntypedStorage"
    assert theirs.type() == "torch.storage.UntypedStorage"
    assert ours.type("pyc10.UntypedStorage") is ours
    assert ours.type(pyc10.UntypedStorage) is ours
    assert ours.type(ours.type()) is ours  # the name it gives names it back
    for call in (
        lambda s, m: s.type("foo.bar"),
        lambda s, m: s.type(3),
        lambda s, m: s.type(None, True, x=1),
        lambda s, m: s.type(**{"async": True}),
    ):
        assert _outcome(call, ours, pyc10) == _outcome(call, theirs, torch)
    with pytest.raises(AttributeError, match="module 'pyc10' has no attribute 'is_sparse'"):
        ours.type("pyc10")
    with pytest.raises(AttributeError, match="object has no attribute 'is_sparse'"):
        theirs.type(torch.float32)
    with pytest.raises(AttributeError, match="'dtype' object has no attribute 'is_sparse'"):
        ours.type(pyc10.float32)


def test_meta_storages_convert_as_torchs_and_refuse_a_byteswap():
    ours, theirs = pyc10.UntypedStorage(8, device="meta"), torch.UntypedStorage(8, device="meta")
    for call in (
        lambda s: s.to(device="cpu"),
        lambda s: str(s.to(device="meta").device),
        lambda s: str(s.new().device),
        lambda s: s._byteswap(3),
    ):
        assert _outcome(call, ours) == _outcome(call, theirs)
    assert ours.to(device="meta") is ours
    with pytest.raises(NotImplementedError, match="meta"):
        ours.byteswap(pyc10.int16)  # torch 2.13 crashes here (reads the missing bytes)


def test_type_converts_to_the_legacy_storage_classes_as_torchs():
    data = [1, 2, 3, 4, 5, 6, 7, 8]
    ours, theirs = pyc10.UntypedStorage(data), torch.UntypedStorage(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # TypedStorage is deprecated, in both
        for name in ("ByteStorage", "FloatStorage"):
            mine = _outcome(lambda s, n: s.type(f"pyc10.{n}"), ours, name)
            torchs = _outcome(lambda s, n: s.type(f"torch.{n}"), theirs, name)
            assert mine == torchs
