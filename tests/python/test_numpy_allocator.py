"""pyc10.allocators.numpy: numpy's data allocator (NEP 49) over libc10c's caching CPU allocator.

numpy is the oracle: its handler names, its MemoryError, and its own arrays' values compared
with the same computation under numpy's default allocator.
"""

from __future__ import annotations

import gc
import subprocess
import sys
import threading

import numpy as np
import pytest

import pyc10
import pyc10.allocators.numpy as pn

try:
    from numpy._core import multiarray
except ImportError:  # numpy 1
    from numpy.core import multiarray  # type: ignore[no-redef]


@pytest.fixture(autouse=True)
def _default_handler_around_each_test():
    assert not pn.is_installed()
    yield
    while pn.is_installed():
        pn.uninstall()


def _allocated() -> int:
    return pyc10.memory.stats()["allocated_bytes.all.current"]


def test_install_names_the_handler_pyc10_for_new_arrays_only():
    before = np.ones(1000)
    pn.install()
    assert multiarray.get_handler_name() == "pyc10"
    assert multiarray.get_handler_version() == 1
    after = np.ones(1000)
    assert multiarray.get_handler_name(after) == "pyc10"
    assert multiarray.get_handler_name(before) == "default_allocator"
    pn.uninstall()
    assert multiarray.get_handler_name() == "default_allocator"
    assert multiarray.get_handler_name(after) == "pyc10"


def test_arrays_are_counted_and_each_is_freed_by_its_own_handler():
    gc.collect()
    base = _allocated()
    old = np.ones(1 << 20)  # numpy's: not ours to count
    assert _allocated() == base
    pn.install()
    mine = np.ones(1 << 20)  # 8 MiB, a headerless large block
    small = np.ones(100)
    assert _allocated() - base >= (8 << 20) + 800
    del old  # freed by numpy's default allocator after the switch
    assert _allocated() - base >= (8 << 20) + 800
    pn.uninstall()
    assert float(mine.sum()) == float(1 << 20)
    del mine, small  # freed by pyc10's handler after uninstall
    assert _allocated() == base


def test_values_match_numpys_default_allocator():
    rng = np.random.default_rng(1)
    data = [rng.standard_normal(n).astype(t) for n in (1, 17, 4096, 300_000) for t in ("f4", "f8")]
    expected = [((a + 1) * a).cumsum() for a in data]
    with pn.handler():
        got = [((a + 1) * a).cumsum() for a in data]
        assert all(multiarray.get_handler_name(g) == "pyc10" for g in got)
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_array_equal(e, g)


@pytest.mark.parametrize("n", [1, 100, 4096, 70_000, 1 << 20, (16 << 20) + 5])
def test_zeros_are_zero_even_when_the_cache_is_dirty(n):
    pn.install()
    a = np.empty(n, np.uint8)
    a.fill(0xAB)
    del a
    z = np.zeros(n, np.uint8)  # calloc, served from the block just freed
    assert not z.any()


def test_resize_and_fromiter_grow_through_realloc():
    pn.install()
    a = np.arange(1000, dtype=np.int64)
    a.resize(400_000, refcheck=False)  # header block -> large block
    np.testing.assert_array_equal(a[:1000], np.arange(1000))
    assert not a[1000:].any()  # numpy zero-fills what resize adds
    a.resize(10, refcheck=False)
    np.testing.assert_array_equal(a, np.arange(10))
    it = np.fromiter((i * i for i in range(100_000)), dtype=np.int64)  # no count: grows
    np.testing.assert_array_equal(it, np.arange(100_000, dtype=np.int64) ** 2)
    assert multiarray.get_handler_name(it) == "pyc10"


def test_installing_twice_or_uninstalling_without_install_is_an_error():
    pn.install()
    with pytest.raises(RuntimeError, match="already installed in this context"):
        pn.install()
    pn.uninstall()
    with pytest.raises(RuntimeError, match="not installed in this context"):
        pn.uninstall()
    assert multiarray.get_handler_name() == "default_allocator"


def test_the_context_manager_nests_and_restores():
    with pn.handler():
        assert pn.is_installed()
        with pn.handler():
            assert pn.is_installed()
        assert pn.is_installed()
        a = np.ones(10)
    assert not pn.is_installed()
    assert multiarray.get_handler_name(a) == "pyc10"
    with pytest.raises(ValueError):
        with pn.handler():
            raise ValueError("inside")
    assert not pn.is_installed()


def test_an_allocation_that_cannot_be_met_is_numpys_memory_error():
    pn.install()
    with pytest.raises(MemoryError, match="Unable to allocate"):
        np.empty(1 << 60, np.uint8)
    with pytest.raises(MemoryError):
        np.zeros((1 << 30, 1 << 30), np.uint8)
    assert float(np.ones(10).sum()) == 10.0  # numpy still works


def test_threads_install_for_themselves_and_free_each_others_arrays():
    made: list[list[np.ndarray]] = [[] for _ in range(4)]
    names: list[str] = []
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            pn.install()
            for k in range(200):
                made[i].append(np.full(1 + (k * 977) % 300_000, i, np.int32))
            names.append(multiarray.get_handler_name(made[i][-1]))
            pn.uninstall()
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert names == ["pyc10"] * 4
    assert not pn.is_installed()  # the main thread's context was never touched
    base = _allocated()

    def drop(i: int) -> None:  # each thread frees the next one's arrays
        j = (i + 1) % 4
        assert all(int(a[0]) == j for a in made[j])
        made[j].clear()

    threads = [threading.Thread(target=drop, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert _allocated() < base


def test_memory_stays_bounded_by_the_cap_and_empty_cache():
    pn.install()
    try:
        pyc10.memory.set_config("max_cached_mb:16")
        for _ in range(5):
            a = np.ones(8 << 20, np.uint8)
            b = np.ones(24 << 20, np.uint8)  # over the cap: given back when freed
            del a, b
        s = pyc10.memory.stats()  # (thread caches of small blocks are apart from the cap)
        cached = s["reserved_bytes.large_pool.current"] - s["allocated_bytes.large_pool.current"]
        assert cached <= 16 << 20
        pyc10.memory.empty_cache()
        s = pyc10.memory.stats()
        assert s["reserved_bytes.large_pool.current"] == s["allocated_bytes.large_pool.current"]
    finally:
        pyc10.memory.set_config("max_cached_mb:1024")


def test_pickled_and_copied_arrays_round_trip():
    import pickle

    pn.install()
    a = np.arange(100_000, dtype=np.float64).reshape(100, 1000)
    for protocol in (2, 4, 5):  # (numpy may keep the pickle's bytes as the array's memory)
        np.testing.assert_array_equal(a, pickle.loads(pickle.dumps(a, protocol=protocol)))
    assert multiarray.get_handler_name(a.copy()) == "pyc10"
    np.testing.assert_array_equal(np.ascontiguousarray(a.T), a.T.copy())


def test_a_fresh_interpreter_exits_cleanly_with_arrays_alive():
    code = (
        "import numpy as np, pyc10.allocators.numpy as pn\n"
        "pn.install()\n"
        "keep = [np.ones(n) for n in (1, 1000, 1 << 20)]\n"
        "print(sum(float(k.sum()) for k in keep))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(1 + 1000 + float(1 << 20))
