"""pyc10.multiprocessing: tensors and storages through queues as shared memory, as torch's.

Each scenario runs the same code with torch.multiprocessing over torch tensors and with
pyc10.multiprocessing over pyc10 tensors, and compares what the other process saw, in both
sharing strategies. Beyond torch: SIGKILLed processes leave no /dev/shm entry, 10,000 received
storages fit in RLIMIT_NOFILE 1024, and forged handles are refused when unpickled.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import pyc10
import pyc10.multiprocessing as mp
from pyc10.multiprocessing import _janitor, reductions

pytestmark = pytest.mark.usefixtures("janitor_hooks")


# pytest imports this file as tests.python.test_multiprocessing (--import-mode=importlib);
# spawned children import it by that name: the checkout's root goes last on the path.
_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.append(_ROOT)

STRATEGIES = ["file_descriptor", "file_system"]
TIMEOUT = 60


@pytest.fixture(params=STRATEGIES)
def strategy(request: pytest.FixtureRequest) -> Any:
    """Run the test under each strategy, in both libraries, restoring the defaults after."""
    import torch.multiprocessing as tmp

    before = (mp.get_sharing_strategy(), tmp.get_sharing_strategy())
    mp.set_sharing_strategy(request.param)
    tmp.set_sharing_strategy(request.param)
    yield request.param
    mp.set_sharing_strategy(before[0])
    tmp.set_sharing_strategy(before[1])


def _lib(name: str) -> tuple[Any, Any]:
    """(tensor library, its multiprocessing module) by name."""
    if name == "torch":
        import torch
        import torch.multiprocessing as tmp

        return torch, tmp
    return pyc10, mp


# ---- children (module level: spawned children import them) -----------------------------------


def _child_views(lib_name: str, q: Any, back: Any, done: Any) -> None:
    base = q.get()
    views = q.get()
    report = [
        (tuple(v.shape), v.stride(), v.storage_offset(), v.tolist(), v.dtype == base.dtype)
        for v in views
    ]
    shared = [v.untyped_storage() is base.untyped_storage() for v in views]
    base.view(-1)[0] = 100  # seen by the sender
    back.put((report, shared))
    done.wait(TIMEOUT)  # the sender writes; this process then reads
    back.put(base.view(-1)[1].item())
    done.clear()
    done.wait(TIMEOUT)  # alive until the sender has what it needs (fd strategy)


def _child_storage_twice(lib_name: str, q: Any, back: Any, done: Any) -> None:
    a, b, (c, d) = q.get(), q.get(), q.get()
    back.put([a is b, c is d, a is c, a.nbytes(), type(a).__name__])
    done.wait(TIMEOUT)


def _child_typed(lib_name: str, q: Any, back: Any, done: Any) -> None:
    typed, legacy = q.get(), q.get()
    typed[0] = 7
    legacy[1] = 8
    back.put([type(typed).__name__, str(typed.dtype), type(legacy).__name__, typed.size()])
    done.wait(TIMEOUT)


def _child_echo(lib_name: str, q: Any, back: Any, done: Any) -> None:
    t = q.get()
    back.put(t)  # sent back as received (by name: whatever the default strategy is here)
    done.wait(TIMEOUT)


def _run(lib_name: str, target: Any, send: list[Any], method: str = "fork") -> tuple[Any, ...]:
    """Start target(lib_name, q, back, done) in a process of method, put send on q.

    The queue q is kept alive with the process (its semaphores go with it).
    """
    _, m = _lib(lib_name)
    ctx = m.get_context(method)
    q, back, done = ctx.Queue(), ctx.Queue(), ctx.Event()
    p = ctx.Process(target=target, args=(lib_name, q, back, done))
    p.start()
    for item in send:
        q.put(item)
    p.keep = q
    return p, back, done


def _finish(p: Any, done: Any) -> None:
    done.set()
    p.join(TIMEOUT)
    assert p.exitcode == 0


def _views_scenario(lib_name: str, method: str) -> Any:
    lib, _ = _lib(lib_name)
    base = lib.arange(24, dtype=lib.float32).view(4, 6)
    views = [base, base[1:, 2:5], base.t(), base[::2, ::3], base[2], base.view(-1)[5:6]]
    p, back, done = _run(lib_name, _child_views, [base, views], method)
    report, shared = back.get(timeout=TIMEOUT)
    seen_here = base.view(-1)[0].item()
    base.view(-1)[1] = -5
    done.set()
    seen_there = back.get(timeout=TIMEOUT)
    _finish(p, done)
    return report, shared, seen_here, seen_there


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_tensors_arrive_as_views_of_the_same_memory_as_torch(strategy: str, method: str) -> None:
    ours = _views_scenario("pyc10", method)
    if method == "fork":
        assert ours == _views_scenario("torch", method)
    report, shared, seen_here, seen_there = ours
    assert shared == [True] * 6
    assert (seen_here, seen_there) == (100.0, -5.0)
    assert report[1][:3] == ((3, 3), (6, 1), 8)


def _storage_twice_scenario(lib_name: str) -> Any:
    lib, _ = _lib(lib_name)
    s = lib.UntypedStorage(24)
    p, back, done = _run(lib_name, _child_storage_twice, [s, s, (s, s)])
    result = back.get(timeout=TIMEOUT)
    _finish(p, done)
    result[4] = result[4].replace("pyc10.", "")
    return result


def test_a_storage_sent_twice_arrives_as_one_as_torch(strategy: str) -> None:
    ours = _storage_twice_scenario("pyc10")
    assert ours == [True, True, True, 24, "UntypedStorage"]
    assert ours == _storage_twice_scenario("torch")


def _typed_scenario(lib_name: str) -> Any:
    lib, _ = _lib(lib_name)
    typed = lib.TypedStorage(4, dtype=lib.int64)
    typed.fill_(0)
    legacy = lib.FloatStorage(3)
    legacy.fill_(0)
    p, back, done = _run(lib_name, _child_typed, [typed, legacy])
    result = back.get(timeout=TIMEOUT)
    _finish(p, done)
    result[1] = result[1].split(".")[-1]
    # the class arrives as sent (torch's FloatStorage(3) makes a TypedStorage, pyc10's does not)
    result[2] = result[2] == type(legacy).__name__
    return result, typed.tolist(), legacy.tolist()


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
def test_typed_and_legacy_storages_arrive_typed_and_shared_as_torch(strategy: str) -> None:
    ours = _typed_scenario("pyc10")
    assert ours == (["TypedStorage", "int64", True, 4], [7, 0, 0, 0], [0.0, 8.0, 0.0])
    assert ours == _typed_scenario("torch")


def test_empty_tensors_and_storages_arrive_empty(strategy: str) -> None:
    p, back, done = _run("pyc10", _child_echo, [(pyc10.empty(0, 3), pyc10.UntypedStorage(0))])
    t, s = back.get(timeout=TIMEOUT)
    _finish(p, done)
    assert (tuple(t.shape), s.nbytes()) == ((0, 3), 0)


def test_a_spawned_child_sends_back_what_it_received_by_name() -> None:
    """A spawned child has the default strategy: a storage shared by name goes back by name."""
    mp.set_sharing_strategy("file_system")
    try:
        t = pyc10.arange(5, dtype=pyc10.int32)
        p, back, done = _run("pyc10", _child_echo, [t], "spawn")
        echoed = back.get(timeout=TIMEOUT)
        _finish(p, done)
    finally:
        mp.set_sharing_strategy("file_descriptor")
    assert echoed.untyped_storage() is t.untyped_storage()


def _produce_and_drop(q: Any) -> None:
    q.put(pyc10.full((4,), 3.0))  # dropped at once: the message holds the memory


def test_the_sender_may_drop_its_tensor_and_exit_before_it_is_received() -> None:
    mp.set_sharing_strategy("file_system")
    try:
        ctx = mp.get_context("fork")
        q = ctx.Queue()
        p = ctx.Process(target=_produce_and_drop, args=(q,))
        p.start()
        p.join(TIMEOUT)  # gone before the message is read
        time.sleep(2.5)  # longer than the janitor's grace for names of processes killed
        t = q.get(timeout=TIMEOUT)
    finally:
        mp.set_sharing_strategy("file_descriptor")
    assert t.tolist() == [3.0] * 4


def _square(t: Any) -> Any:
    t.copy_(pyc10.full(tuple(t.shape), t[0].item() ** 2))  # in place: the sender sees it
    return t


def test_pool_workers_receive_and_return_shared_tensors(strategy: str) -> None:
    tensors = [pyc10.full((3,), float(i)) for i in range(4)]
    with mp.Pool(2) as pool:
        out = pool.map(_square, tensors)
    assert [o.tolist() for o in out] == [[float(i * i)] * 3 for i in range(4)]
    assert [t.tolist() for t in tensors] == [[float(i * i)] * 3 for i in range(4)]


# ---- SIGKILL in the middle of a transfer ------------------------------------------------------


def _shm_names_of(pids: list[int], stale: frozenset[str] = frozenset()) -> list[str]:
    """The names in /dev/shm that carry one of the pids, less those in stale: names an earlier
    process with the same pid left (CI's /dev/shm outlives runs, and pids wrap)."""
    keys = tuple(f"_{pid}_" for pid in pids)
    return [n for n in os.listdir("/dev/shm") if any(k in n for k in keys) and n not in stale]


def _shm_now() -> frozenset[str]:
    return frozenset(os.listdir("/dev/shm"))


def _killed_producer(q: Any, ready: Any) -> None:
    for i in range(1000):
        q.put(pyc10.full((1024,), float(i)))
        if i == 20:
            ready.set()


def _killed_consumer(q: Any, got: Any) -> None:
    kept = []
    while True:
        kept.append(q.get())
        got.value += 1


@pytest.mark.parametrize("strategy_name", STRATEGIES)
def test_sigkill_of_producer_and_consumer_mid_transfer_leaves_no_shm_entry(
    strategy_name: str,
) -> None:
    mp.set_sharing_strategy(strategy_name)
    try:
        ctx = mp.get_context("fork")
        q, ready, got = ctx.Queue(16), ctx.Event(), ctx.Value("i", 0)
        producer = ctx.Process(target=_killed_producer, args=(q, ready))
        consumer = ctx.Process(target=_killed_consumer, args=(q, got))
        stale = _shm_now()
        producer.start()
        consumer.start()
        assert ready.wait(TIMEOUT)
        deadline = time.monotonic() + TIMEOUT
        while got.value < 10 and time.monotonic() < deadline:
            time.sleep(0.01)
        pids = [producer.pid, consumer.pid]
        before = _shm_names_of(pids, stale)
        for proc in (producer, consumer):
            os.kill(proc.pid, signal.SIGKILL)
            proc.join()
    finally:
        mp.set_sharing_strategy("file_descriptor")
    assert got.value >= 10
    if strategy_name == "file_system":
        assert before, "the producer's names were in /dev/shm while it ran"
    else:
        assert before == []  # memory files have no names
    deadline = time.monotonic() + 10
    while _shm_names_of(pids, stale) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _shm_names_of(pids, stale) == []


# ---- descriptors: 10,000 received storages at RLIMIT_NOFILE 1024 ------------------------------

MANY = 10_000


def _many_consumer(q: Any, back: Any) -> None:
    resource.setrlimit(
        resource.RLIMIT_NOFILE, (1024, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
    )
    kept: list[Any] = []
    while len(kept) < MANY:
        kept.extend(q.get())
    values = [int(t[0].item()) for t in kept]
    back.put((len(kept), values == list(range(MANY)), len(os.listdir("/proc/self/fd"))))


@pytest.mark.parametrize("strategy_name", STRATEGIES)
def test_ten_thousand_received_storages_fit_in_1024_descriptors(strategy_name: str) -> None:
    mp.set_sharing_strategy(strategy_name)
    try:
        ctx = mp.get_context("fork")
        q, back = ctx.Queue(8), ctx.Queue()
        p = ctx.Process(target=_many_consumer, args=(q, back))
        p.start()
        for start in range(0, MANY, 250):
            q.put([pyc10.full((2,), float(i)) for i in range(start, start + 250)])
        n, ordered, open_fds = back.get(timeout=300)
        p.join(TIMEOUT)
    finally:
        mp.set_sharing_strategy("file_descriptor")
    assert (n, ordered, p.exitcode) == (MANY, True, 0)
    assert open_fds < 1024


# ---- forged, stale and foreign handles: refused when unpickled ---------------------------------


class _Pickled:
    """Pickles as the call (fn, args): a hand-made message."""

    def __init__(self, fn: Any, args: tuple[Any, ...]) -> None:
        self.fn, self.args = fn, args

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return self.fn, self.args


class FakeDupFd:
    """A DupFd whose detach() gives a duplicate of a descriptor of this process."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def detach(self) -> int:
        return os.dup(self.fd)


def _loads(fn: Any, *args: Any) -> Any:
    return pickle.loads(pickle.dumps(_Pickled(fn, args)))


def _name_of(storage: Any) -> bytes:
    return bytes(storage._share_filename_cpu_()[1])


def test_a_descriptor_claiming_more_bytes_than_its_file_is_refused() -> None:
    fd = os.memfd_create("small", os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, 64)
    try:
        with pytest.raises(RuntimeError, match="not sealed against shrinking"):
            _loads(reductions.rebuild_storage_fd, pyc10.UntypedStorage, FakeDupFd(fd), 64)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK)
        with pytest.raises(RuntimeError):
            _loads(reductions.rebuild_storage_fd, pyc10.UntypedStorage, FakeDupFd(fd), 1 << 20)
        ok = _loads(reductions.rebuild_storage_fd, pyc10.UntypedStorage, FakeDupFd(fd), 64)
        assert ok.nbytes() == 64
    finally:
        os.close(fd)


def test_a_descriptor_that_is_no_memory_file_is_refused() -> None:
    r, w = os.pipe()
    try:
        with pytest.raises(RuntimeError):
            _loads(reductions.rebuild_storage_fd, pyc10.UntypedStorage, FakeDupFd(r), 16)
    finally:
        os.close(r)
        os.close(w)


def test_a_stale_descriptor_handle_is_refused() -> None:
    """A DupFd whose sender is gone (or that was received already) cannot be unpickled."""
    s = pyc10.UntypedStorage(16)
    data = _dumps_forking(s)
    pickle.loads(data)  # received once: the sender's copy is handed out
    with pytest.raises(RuntimeError, match="could not receive the file descriptor"):
        pickle.loads(data)


def _dumps_forking(obj: Any) -> bytes:
    import io
    from multiprocessing.reduction import ForkingPickler

    buf = io.BytesIO()
    ForkingPickler(buf, pickle.HIGHEST_PROTOCOL).dump(obj)
    return buf.getvalue()


@pytest.mark.parametrize(
    "name",
    [b"/c10c_no_such_name_0123456789", b"/../etc/passwd", b"relative", b"/" + b"x" * 300],
)
def test_a_name_that_does_not_exist_or_is_malformed_is_refused(name: bytes) -> None:
    handle = _janitor.tree_address()
    with pytest.raises((RuntimeError, ValueError), match="shared memory"):
        _loads(reductions.rebuild_storage_filename, pyc10.UntypedStorage, handle, name, 16)


def test_a_forged_manager_handle_is_refused_before_anything_is_opened() -> None:
    mp.set_sharing_strategy("file_system")
    try:
        s = pyc10.UntypedStorage(16).share_memory_()
        name = _name_of(s)
    finally:
        mp.set_sharing_strategy("file_descriptor")
    for handle in [b"/tmp/torch-shm-socket", b"\0other-manager", "text", b""]:
        with pytest.raises(RuntimeError, match="not the manager handle of a shared memory"):
            _loads(reductions.rebuild_storage_filename, pyc10.UntypedStorage, handle, name, 16)


def test_a_name_claiming_more_bytes_than_its_object_is_refused() -> None:
    mp.set_sharing_strategy("file_system")
    try:
        s = pyc10.UntypedStorage(4096).share_memory_()
        handle, name, size = s._share_filename_cpu_()
    finally:
        mp.set_sharing_strategy("file_descriptor")
    with pytest.raises(RuntimeError):
        _loads(reductions.rebuild_storage_filename, pyc10.UntypedStorage, handle, name, 1 << 30)
    ok = _loads(reductions.rebuild_storage_filename, pyc10.UntypedStorage, handle, name, size)
    assert ok.nbytes() == size == 4096


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_a_name_of_another_user_is_refused() -> None:
    name = f"/c10c_{os.getpid()}_foreign0123456789"
    path = "/dev/shm" + name
    fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_EXCL, 0o666)
    try:
        os.ftruncate(fd, 4096)
        os.fchown(fd, 65534, 65534)
        handle = _janitor.tree_address()
        with pytest.raises(RuntimeError):
            _loads(
                reductions.rebuild_storage_filename, pyc10.UntypedStorage, handle, name.encode(), 16
            )
    finally:
        os.close(fd)
        os.unlink(path)


# ---- the janitor --------------------------------------------------------------------------------


def _listening_inode(address: bytes) -> int | None:
    """The inode of the socket bound to the janitor's address (/proc/net/unix), or None."""
    wanted = os.fsdecode(address)
    with open("/proc/net/unix") as f:
        for line in f.read().splitlines()[1:]:
            fields = line.split()
            # the listening socket (__SO_ACCEPTCON), not a connection made to it
            if len(fields) >= 8 and fields[7] == wanted and fields[3] == "00010000":
                return int(fields[6])
    return None


def _janitor_pid(address: bytes) -> int | None:
    """The process serving address (it alone holds the listening socket), or None."""
    inode = _listening_inode(address)
    if inode is None:
        return None
    target = f"socket:[{inode}]"
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                    return int(pid)
        except OSError:
            continue
    return None


_HOLDER = r"""
import sys, time
import pyc10, pyc10.multiprocessing as mp
mp.set_sharing_strategy("file_system")
kept = [pyc10.UntypedStorage(64).share_memory_() for _ in range(3)]
print(kept[0]._share_filename_cpu_()[0].hex(), flush=True)
time.sleep(60)
"""


def _socket_count(pid: int) -> int:
    """How many sockets process pid holds open (a janitor: its listener and one per client)."""
    try:
        links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
    except OSError:
        return 0
    return sum(link.startswith("socket:") for link in links)


def _wait_for(predicate: Any, seconds: float = 10) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    return predicate()


def test_a_killed_janitor_is_restarted_and_names_stay_guarded() -> None:
    env = dict(os.environ)
    env.pop(_janitor.ENV_VAR, None)
    stale = _shm_now()
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER], stdout=subprocess.PIPE, env=env)
    try:
        assert holder.stdout is not None
        address = bytes.fromhex(holder.stdout.readline().decode())
        assert len(_shm_names_of([holder.pid], stale)) == 3
        first = _janitor_pid(address)
        assert first is not None and first != holder.pid
        os.kill(first, signal.SIGKILL)
        # (the holder itself holds the new listener for a moment while it starts the janitor)
        second = _wait_for(
            lambda: (pid := _janitor_pid(address)) not in (first, holder.pid) and pid
        )
        assert second and second != first
        # the holder connects to the janitor it restarted and registers its names again: wait
        # for the connection (slow under emulation), then for the lines that follow it
        assert _wait_for(lambda: _socket_count(second) >= 2)
        time.sleep(0.5)
    finally:
        holder.kill()
        holder.wait()
    assert _wait_for(lambda: _shm_names_of([holder.pid]) == [])
    assert _wait_for(lambda: _listening_inode(address) is None)  # and the new janitor exits


_CREATOR = r"""
import os, time
import pyc10, pyc10.multiprocessing as mp
mp.set_sharing_strategy("file_system")
kept = pyc10.UntypedStorage(64).share_memory_()
# as if killed between creating a name and registering it: one the janitor never heard of
fd = os.open(f"/dev/shm/c10c_{os.getpid()}_00000000deadbeef", os.O_CREAT | os.O_RDWR, 0o600)
os.close(fd)
print(kept._share_filename_cpu_()[0].hex(), flush=True)
time.sleep(60)
"""


def test_names_a_killed_process_created_but_never_registered_are_swept() -> None:
    env = dict(os.environ)
    env.pop(_janitor.ENV_VAR, None)
    stale = _shm_now()
    creator = subprocess.Popen([sys.executable, "-c", _CREATOR], stdout=subprocess.PIPE, env=env)
    assert creator.stdout is not None
    creator.stdout.readline()
    assert len(_shm_names_of([creator.pid], stale)) == 2
    creator.kill()
    creator.wait()
    assert _wait_for(lambda: _shm_names_of([creator.pid]) == [])


def test_the_janitor_exits_when_its_last_client_is_gone() -> None:
    env = dict(os.environ)
    env.pop(_janitor.ENV_VAR, None)
    code = _HOLDER.replace("time.sleep(60)", "")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, check=True)
    address = bytes.fromhex(out.stdout.decode().strip())
    assert _wait_for(lambda: _listening_inode(address) is None, 5)


def test_a_child_process_uses_its_parents_janitor() -> None:
    address = _janitor.tree_address()
    assert os.environ[_janitor.ENV_VAR] == os.fsdecode(address)
    code = "from pyc10.multiprocessing import _janitor; print(_janitor.tree_address().hex())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, text=True)
    assert bytes.fromhex(out.stdout.strip()) == address


# ---- the module -------------------------------------------------------------------------------


def test_names_match_torch_multiprocessing() -> None:
    import torch.multiprocessing as tmp

    assert sorted(mp.__all__) == sorted(tmp.__all__)
    for name in [
        "spawn",
        "start_processes",
        "ProcessContext",
        "ProcessRaisedException",
        "ProcessExitedException",
        "SpawnContext",
        "init_reductions",
        "ENV_VAR_PARALLEL_START",
        "_prctl_pr_set_pdeathsig",
        "_set_thread_name",
        "_get_thread_name",
    ]:
        assert hasattr(mp, name), name
    for name in dir(tmp.reductions):
        if not name.startswith("_") and callable(getattr(tmp.reductions, name)):
            if "nested" in name or "sparse" in name or name in ("torch",):
                continue
            assert hasattr(reductions, name), name
    assert mp.get_all_sharing_strategies() == tmp.get_all_sharing_strategies()
    assert mp.get_sharing_strategy() == "file_descriptor"
    with pytest.raises(AssertionError, match="invalid sharing strategy 'nope'"):
        mp.set_sharing_strategy("nope")


def test_import_pyc10_does_not_import_multiprocessing_until_asked() -> None:
    code = (
        "import sys, pyc10; a = 'pyc10.multiprocessing' in sys.modules; "
        "m = pyc10.multiprocessing; print(a, m.__name__, m.spawn.__module__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, text=True)
    assert out.stdout.split() == ["False", "pyc10.multiprocessing", "pyc10.multiprocessing.spawn"]


def test_storage_weak_refs_see_the_storage_go() -> None:
    s = pyc10.UntypedStorage(8)
    ref = reductions.StorageWeakRef(s)
    assert not ref.expired()
    assert reductions._new_with_weak_ptr(ref.cdata) is s
    del s
    assert ref.expired()
    assert reductions._new_with_weak_ptr(ref.cdata) is None


def test_a_storage_alive_only_in_tensors_is_found_again_by_its_weak_ref() -> None:
    t = pyc10.arange(4)
    ref = reductions.StorageWeakRef(t.untyped_storage())
    import gc

    gc.collect()
    again = reductions._new_with_weak_ptr(ref.cdata)
    assert again is t.untyped_storage()
