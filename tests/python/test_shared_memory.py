"""Storages shared across processes, side by side with torch 2.13.

Every method is called on pyc10 and torch the same way; names open across the two (byte-level
interop of torch's RefcountedMapAllocator layout); descriptors and names travel to spawned and
forked children; nothing is left in /dev/shm.
"""

from __future__ import annotations

import fcntl
import gc
import multiprocessing
import multiprocessing.reduction
import os
import re
import struct
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy
import pytest
import torch
import torch.multiprocessing

import pyc10
from pyc10 import _sharing

S = pyc10.UntypedStorage
T = torch.UntypedStorage


def _ours() -> set[str]:
    """The shm names this process made (pyc10's and torch's); other programs' are left out."""
    mine = re.compile(rf"(c10c_{os.getpid()}_[0-9a-f]{{16}}|torch_{os.getpid()}_\d+_\d+)$")
    return {n for n in os.listdir("/dev/shm") if mine.match(n)}


@pytest.fixture(autouse=True)
def no_names_left_behind() -> Iterator[None]:
    """Every test leaves /dev/shm as it found it, and the strategy and hooks as they were."""
    before = _ours()
    yield
    _sharing.set_sharing_strategy("file_descriptor")
    _sharing.name_created = None
    _sharing.name_opened = None
    gc.collect()
    assert _ours() - before == set()


def filled(mod: Any, n: int = 8) -> Any:
    s = mod.UntypedStorage(n)
    for i in range(n):
        s[i] = i + 1
    return s


def same_error(call: Callable[[Any], Any]) -> BaseException:
    """call(pyc10) and call(torch) raise the same class (ours a subclass) and message."""
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(Exception) as ours:
        call(pyc10)
    assert isinstance(ours.value, type(theirs.value)), (ours.value, theirs.value)
    assert str(ours.value) == str(theirs.value)
    return ours.value


# ---- by descriptor ----


def test_share_fd_cpu_returns_the_descriptor_and_size_as_torch() -> None:
    ours, theirs = filled(pyc10), filled(torch)
    a, b = ours._share_fd_cpu_(), theirs._share_fd_cpu_()
    assert type(a) is type(b) is tuple and len(a) == len(b) == 2
    assert type(a[0]) is int and a[1] == b[1] == 8
    assert ours._share_fd_cpu_() == a  # idempotent, as torch
    assert theirs._share_fd_cpu_() == b
    assert ours.is_shared() is theirs.is_shared() is True
    assert os.readlink(f"/proc/self/fd/{a[0]}").startswith("/memfd:")
    assert ours.filename is theirs.filename is None
    # torch opens our (sealed) memory file; torch's file is an unlinked POSIX shm object, which
    # takes no seals, so its sender could shrink it under our mapping: refused
    mine = T._new_shared_fd_cpu(*a)
    assert mine.tolist() == list(range(1, 9))
    mine[0] = 100
    assert ours[0] == 100
    with pytest.raises(RuntimeError, match=r"is not sealed against shrinking \(F_SEAL_SHRINK\)"):
        S._new_shared_fd_cpu(*b)
    assert S(0)._share_fd_cpu_()[1] == T(0)._share_fd_cpu_()[1] == 0


def test_a_received_memory_file_must_be_sealed_against_shrinking() -> None:
    """An unsealed file could shrink under the mapping (SIGBUS in torch): refused, never mapped."""
    fd = os.memfd_create("unsealed", os.MFD_ALLOW_SEALING)
    try:
        os.ftruncate(fd, 64)
        with pytest.raises(RuntimeError, match="its sender could shrink it"):
            S._new_shared_fd_cpu(fd, 64)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK)
        got = S._new_shared_fd_cpu(fd, 64)
        assert got.nbytes() == 64 and got.is_shared()
        with pytest.raises(PermissionError):
            os.ftruncate(fd, 0)  # the kernel holds the sender to it
    finally:
        os.close(fd)


def test_new_using_fd_cpu_as_torch() -> None:
    ours, theirs = S._new_using_fd_cpu(10), T._new_using_fd_cpu(10)
    assert ours.tolist() == theirs.tolist() == [0] * 10
    assert ours.is_shared() and ours._share_fd_cpu_()[1] == theirs._share_fd_cpu_()[1]
    same_error(lambda m: m.UntypedStorage._new_using_fd_cpu())
    same_error(lambda m: m.UntypedStorage._new_using_fd_cpu("x"))
    # torch returns NULL without an exception (SystemError); a RuntimeError here
    with pytest.raises(RuntimeError, match="negative size"):
        S._new_using_fd_cpu(-1)


def test_new_shared_fd_cpu_argument_errors_as_torch() -> None:
    keep = S._new_using_fd_cpu(4)
    fd, _ = keep._share_fd_cpu_()
    same_error(lambda m: m.UntypedStorage._new_shared_fd_cpu(fd))
    same_error(lambda m: m.UntypedStorage._new_shared_fd_cpu(fd, 4, 5))
    same_error(lambda m: m.UntypedStorage._new_shared_fd_cpu("a", 4))
    same_error(lambda m: m.UntypedStorage._new_shared_fd_cpu(True, 4))
    same_error(lambda m: m.UntypedStorage._new_shared_fd_cpu(fd, 2**70))


def test_new_shared_fd_cpu_refuses_what_torch_would_map_out_of_bounds() -> None:
    keep = S._new_using_fd_cpu(4)
    fd, _ = keep._share_fd_cpu_()
    with pytest.raises(RuntimeError, match="storage size 100 is larger than the mapping"):
        S._new_shared_fd_cpu(fd, 100)  # torch grows the file instead
    r, w = os.pipe()
    try:
        with pytest.raises(RuntimeError, match="not a shared memory file"):
            S._new_shared_fd_cpu(r, 4)
    finally:
        os.close(r)
        os.close(w)
    with pytest.raises(RuntimeError, match="Bad file descriptor"):
        S._new_shared_fd_cpu(-1, 4)
    with pytest.raises(RuntimeError, match="negative size"):
        S._new_shared_fd_cpu(fd, -1)


# ---- by name ----


def _refcount(name: bytes) -> int:
    with open(b"/dev/shm" + name, "rb") as f:
        value: int = struct.unpack("i", f.read(4))[0]
        return value


def test_share_filename_cpu_returns_manager_name_and_size_as_torch() -> None:
    ours, theirs = filled(pyc10), filled(torch)
    a, b = ours._share_filename_cpu_(), theirs._share_filename_cpu_()
    assert [type(x) for x in a] == [type(x) for x in b] == [bytes, bytes, int]
    assert a[0] == b""  # no manager without pyc10.multiprocessing
    assert a[1].startswith(f"/c10c_{os.getpid()}_".encode()) and a[2] == b[2] == 8
    assert ours._share_filename_cpu_() == a
    assert os.stat(b"/dev/shm" + a[1]).st_size == 8 + 64
    assert oct(os.stat(b"/dev/shm" + a[1]).st_mode & 0o777) == "0o600"
    assert _refcount(a[1]) == 1
    assert ours.filename is theirs.filename is None
    # torch opens ours and we open torch's: the same bytes, the same count
    theirs_of_ours = T._new_shared_filename_cpu(b"", a[1], a[2])
    ours_of_theirs = S._new_shared_filename_cpu(b"", b[1], b[2])
    assert _refcount(a[1]) == 2
    assert theirs_of_ours.tolist() == ours_of_theirs.tolist() == list(range(1, 9))
    theirs_of_ours[0] = 50
    ours_of_theirs[0] = 60
    assert ours[0] == 50 and theirs[0] == 60
    del theirs_of_ours
    assert _refcount(a[1]) == 1
    # shared by name already: share_fd leaves it so
    with pytest.raises(RuntimeError, match="shared by name") as info:
        ours._share_fd_cpu_()
    del ours, info
    gc.collect()  # the exception's traceback held the storage in a cycle
    assert not os.path.exists(b"/dev/shm" + a[1])  # the last user unlinked it


def test_new_using_filename_cpu_and_the_argument_errors_as_torch() -> None:
    ours, theirs = S._new_using_filename_cpu(6), T._new_using_filename_cpu(6)
    assert ours.tolist() == theirs.tolist() == [0] * 6
    assert ours.is_shared() and ours._shared_name() is not None
    same_error(lambda m: m.UntypedStorage._new_shared_filename_cpu(b"", b"/x"))
    same_error(lambda m: m.UntypedStorage._new_shared_filename_cpu("", "/x", 4))
    same_error(lambda m: m.UntypedStorage._new_shared_filename_cpu(b"", b"/x", -1))
    same_error(lambda m: m.UntypedStorage._new_shared_filename_cpu(b"", b"/c10c_no_such_name", 4))
    same_error(lambda m: m.UntypedStorage._new_using_filename_cpu("x"))


def test_forged_stale_and_short_names_are_refused(tmp_path: Any) -> None:
    for bad in (b"", b"/", b"noslash", b"/a/b", b"/../x"):
        with pytest.raises(RuntimeError, match="invalid shared memory name"):
            S._new_shared_filename_cpu(b"", bad, 4)
    name = f"/c10c_test_{os.getpid()}"
    path = "/dev/shm" + name
    try:
        for header, size, nbytes, message in (
            (0, 72, 8, "is stale: its reference count is 0"),
            (1, 72, 9, "holds 72 bytes, fewer than the 73"),
        ):
            with open(path, "wb") as f:
                f.write(struct.pack("i", header) + bytes(size - 4))
            with pytest.raises(RuntimeError, match=message):
                S._new_shared_filename_cpu(b"", name.encode(), nbytes)
        if os.geteuid() == 0:
            with open(path, "wb") as f:
                f.write(struct.pack("i", 1) + bytes(68))
            os.chown(path, 65534, 65534)
            with pytest.raises(RuntimeError, match="a handle from another user is refused"):
                S._new_shared_filename_cpu(b"", name.encode(), 8)
    finally:
        os.unlink(path)


def test_hooks_hear_of_every_name_made_and_opened() -> None:
    made: list[bytes] = []
    opened: list[tuple[bytes, bytes]] = []

    def created(name: bytes) -> bytes:
        made.append(name)
        return b"/tmp/manager.sock"

    _sharing.name_created = created
    _sharing.name_opened = lambda manager, name: opened.append((manager, name))
    s = filled(pyc10)
    manager, name, _ = s._share_filename_cpu_()
    assert manager == b"/tmp/manager.sock" and made == [name]
    assert s._share_filename_cpu_()[0] == manager and made == [name]  # not made again
    r = S._new_shared_filename_cpu(manager, name, 8)
    assert opened == [(manager, name)]
    u = S._new_using_filename_cpu(3)
    assert made[-1] == u._shared_name() and len(made) == 2
    del r, s, u


def test_the_sharing_strategy_as_torch_multiprocessing() -> None:
    assert _sharing.get_sharing_strategy() == torch.multiprocessing.get_sharing_strategy()
    assert (
        _sharing.get_all_sharing_strategies() == torch.multiprocessing.get_all_sharing_strategies()
    )
    same_error(lambda m: (m.multiprocessing if m is torch else _sharing).set_sharing_strategy("x"))
    _sharing.set_sharing_strategy("file_system")
    s = filled(pyc10).share_memory_()
    assert s._shared_name() is not None and s.is_shared()
    t = pyc10.arange(4).share_memory_()
    assert t.is_shared() and t.untyped_storage()._shared_name() is not None
    _sharing.set_sharing_strategy("file_descriptor")
    u = filled(pyc10).share_memory_()
    assert u._shared_name() is None and u._share_fd_cpu_()[1] == 8
    del s, t, u


def test_only_cpu_storages_share_with_torchs_messages() -> None:
    same_error(lambda m: m.UntypedStorage(4, device="meta")._share_fd_cpu_())
    same_error(lambda m: m.UntypedStorage(4, device="meta")._share_filename_cpu_())
    same_error(lambda m: m.UntypedStorage(4, device="meta").share_memory_())
    same_error(lambda m: m.zeros(3, device="meta").share_memory_())
    assert pyc10.zeros(3, device="meta").is_shared() is torch.zeros(3, device="meta").is_shared()
    same_error(lambda m: m.UntypedStorage(3)._share_fd_cpu_(1))


def test_tensor_and_typed_storage_share_memory_as_torch() -> None:
    ours, theirs = pyc10.arange(6), torch.arange(6)
    assert ours.is_shared() is theirs.is_shared() is False
    assert ours.share_memory_() is ours and theirs.share_memory_() is theirs
    assert ours.is_shared() is theirs.is_shared() is True
    view = ours[2:]
    assert view.is_shared() and view.tolist() == [2, 3, 4, 5]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage is deprecated, as torch's
        typed = pyc10.zeros(2).storage()
        assert typed.share_memory_() is typed and typed.is_shared()


def test_memory_whose_address_was_handed_out_stays_valid() -> None:
    t = pyc10.arange(1000, dtype=pyc10.float64)
    array = t.numpy()  # the address leaves the library
    t.share_memory_()
    assert array[999] == 999.0 and t.data_ptr() != array.ctypes.data
    array[0] = -1  # the old bytes: still mapped, no longer the tensor's
    assert t[0].item() == 0.0
    assert numpy.asarray(t)[0] == 0.0


# ---- across processes ----


# spawn imports the children's targets by module name: a plain module beside this file
sys.path.insert(0, os.path.dirname(__file__))
import shared_memory_children as children  # noqa: E402


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_children_open_by_descriptor_and_by_name(method: str) -> None:
    ctx = multiprocessing.get_context(method)
    s = filled(pyc10)
    fd, size = s._share_fd_cpu_()
    p = ctx.Process(target=children.by_fd, args=(multiprocessing.reduction.DupFd(fd), size))
    p.start()
    p.join(60)
    assert p.exitcode == 0 and s[0] == 77
    n = filled(pyc10)
    _, name, size = n._share_filename_cpu_()
    p = ctx.Process(target=children.by_name, args=(name, size))
    p.start()
    p.join(60)
    assert p.exitcode == 0 and n[1] == 78
    assert _refcount(name) == 1  # the child's count went with it


def test_a_torch_process_opens_our_name() -> None:
    s = filled(pyc10)
    _, name, size = s._share_filename_cpu_()
    p = multiprocessing.get_context("spawn").Process(
        target=children.torch_by_name, args=(name, size)
    )
    p.start()
    p.join(60)
    assert p.exitcode == 0 and s[2] == 79


# ---- files ----


def test_from_file_as_torch(tmp_path: Any) -> None:
    path = str(tmp_path / "f")
    with open(path, "wb") as f:
        f.write(b"abc")
    for args in ((False, 2), (False, 0), (True, 0)):
        ours, theirs = S.from_file(path, *args), T.from_file(path, *args)
        assert ours.tolist() == theirs.tolist() and ours.filename == theirs.filename
    assert S.from_file(path, nbytes=2, shared=False).tolist() == [97, 98]
    for call in (
        lambda m: m.UntypedStorage.from_file(path, False, 10),
        lambda m: m.UntypedStorage.from_file(path, True, -1),
        lambda m: m.UntypedStorage.from_file(path + "/x", True, 2),
        lambda m: m.UntypedStorage.from_file(path + "/x", False, 2),
        lambda m: m.UntypedStorage.from_file(path.encode(), False, 0),
        lambda m: m.UntypedStorage.from_file(path, "x", 0),
        lambda m: m.UntypedStorage.from_file(path, False, 2.0),
        lambda m: m.UntypedStorage.from_file(),
    ):
        same_error(call)
    shared = S.from_file(path, True, 6)
    assert shared.filename == path == T.from_file(path, True, 6).filename
    # deliberate difference: torch's growth writes a zero over the file's first byte
    assert shared.tolist()[:3] == [97, 98, 99]
    shared[5] = 113
    del shared
    with open(path, "rb") as f:
        assert f.read()[3:] == b"\x00\x00q"
    grown = str(tmp_path / "g")
    with open(grown, "wb") as f:
        f.write(b"xyz")
    assert S.from_file(grown, True, 5).tolist() == [120, 121, 122, 0, 0]


def test_pyc10_from_file_as_torch_from_file(tmp_path: Any) -> None:
    path = str(tmp_path / "f")
    with open(path, "wb") as f:
        f.write(b"abcdefgh")
    for kwargs in ({"size": 2, "dtype": "int16"}, {"size": None}, {"shared": None, "size": 2}):
        k = dict(kwargs)
        if "dtype" in k:
            ours = pyc10.from_file(path, **{**k, "dtype": getattr(pyc10, str(k["dtype"]))})
            theirs = torch.from_file(path, **{**k, "dtype": getattr(torch, str(k["dtype"]))})
        else:
            ours, theirs = pyc10.from_file(path, **k), torch.from_file(path, **k)
        assert ours.tolist() == theirs.tolist() and ours.dtype.itemsize == theirs.dtype.itemsize
        assert ours.untyped_storage().filename == theirs.untyped_storage().filename
    ours = pyc10.from_file(path, True, 2, dtype=pyc10.uint8)
    assert ours.is_shared() and ours.untyped_storage().filename == path
    ours[0] = 65
    del ours
    with open(path, "rb") as f:
        assert f.read(1) == b"A"
    for call in (
        lambda m: m.from_file(path, bogus=1),
        lambda m: m.from_file(path, 1, 2, 3),
        lambda m: m.from_file(path, size=-1),
        lambda m: m.from_file(path, pin_memory=True, size=1),
        lambda m: m.from_file(1),
        lambda m: m.from_file(path, size=100),
        lambda m: m.from_file(path + "/x", size=1),
    ):
        same_error(call)


def test_typed_storages_and_new_shared_as_torch(tmp_path: Any) -> None:
    path = str(tmp_path / "f")
    with open(path, "wb") as f:
        f.write(bytes(16))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage is deprecated, as torch's
        for m in (pyc10, torch):
            s = m.FloatStorage(4)
            assert s._share_fd_cpu_()[1] == 4 and s.filename is None
            assert m.TypedStorage(4, dtype=m.float32)._share_filename_cpu_()[2] == 4
            mapped = m.FloatStorage.from_file(path, True, 4)
            assert mapped.filename == path and mapped.tolist() == [0.0] * 4
            assert m.FloatStorage.from_file(path, False, 2).tolist() == [0.0, 0.0]
            del s, mapped
        same_error(lambda m: m.TypedStorage.from_file(path, True, 4))
    for strategy in ("file_descriptor", "file_system"):
        _sharing.set_sharing_strategy(strategy)
        torch.multiprocessing.set_sharing_strategy(strategy)
        ours, theirs = S._new_shared(8), T._new_shared(8)
        assert ours.is_shared() and theirs.is_shared() and ours.nbytes() == theirs.nbytes()
        assert (ours._shared_name() is not None) == (strategy == "file_system")
        del ours, theirs
    torch.multiprocessing.set_sharing_strategy("file_descriptor")


def _turns_of_another_thread_during(call: Callable[[], object]) -> int:
    """How many loop turns another Python thread made while call ran: 0 when it held the GIL.

    The other thread gives the GIL up at each turn (a 0.1 ms wait) and, with the switch interval
    made long, never asks for it: it can run only while this one has let the GIL go."""
    recording = stop = False
    turns = spins = 0
    pause = threading.Event()

    def spin() -> None:
        nonlocal turns, spins
        while not stop:
            spins += 1
            if recording:  # set and cleared by this thread holding the GIL around call
                turns += 1
            pause.wait(1e-4)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(100.0)
    worker = threading.Thread(target=spin)
    worker.start()
    try:
        while spins == 0:
            pause.wait(1e-3)
        recording = True
        call()
        recording = False
    finally:
        stop = True
        worker.join()
        sys.setswitchinterval(interval)
    return turns


@pytest.mark.parametrize("how", ["_share_fd_cpu_", "_share_filename_cpu_"])
def test_sharing_a_large_storage_lets_other_threads_run(how: str) -> None:
    # torch copies into shared memory without the GIL; 256 MiB take tens of milliseconds
    nbytes = 256 << 20
    for _ in range(3):  # a loaded machine may not run the thread in one window: progress, no rate
        s = S(nbytes)
        turns = _turns_of_another_thread_during(getattr(s, how))
        assert s.is_shared()
        del s
        if turns > 0:
            break
    assert turns > 0


def test_opening_a_large_shared_storage_lets_other_threads_run() -> None:
    nbytes = 256 << 20
    for _ in range(3):
        turns = _turns_of_another_thread_during(lambda: S._new_using_fd_cpu(nbytes))
        if turns > 0:
            break
    assert turns > 0
