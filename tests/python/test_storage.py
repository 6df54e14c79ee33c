"""pyc10.UntypedStorage against torch.UntypedStorage, and pyc10.memory statistics."""

from __future__ import annotations

import gc
import resource
import threading
import weakref

import numpy as np
import pytest
import torch

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
    with pytest.raises(TypeError):
        pyc10.UntypedStorage(1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        pyc10.UntypedStorage(4).resize_("8")  # type: ignore[arg-type]
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
