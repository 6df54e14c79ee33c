"""The file_descriptor strategy survives a sender that exits before its tensors are received.

Each storage's memory file is also held by the process tree's janitor, under a random token the
pickle carries, until its receiver has it (``pyc10/multiprocessing/_janitor.py``). Each scenario
runs in a fresh process tree (its own janitor, a short linger) and counts the memory files the
janitor holds in ``/proc/<janitor pid>/fd``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

import pyc10
from pyc10.multiprocessing import _janitor, reductions

pytestmark = pytest.mark.skipif(not _janitor.SUPPORTED, reason="the janitor is Linux only")

# What the scenarios share: a sender child that puts N tensors of known values and returns;
# the parent drains the queue's pipe as raw bytes while it runs (a pipe holds 64 KiB: a child
# whose feeder thread cannot flush would never exit) and unpickles them only after it exited.
_COMMON = r"""
import os, pickle, socket, sys, time
import pyc10, pyc10.multiprocessing as mp
from pyc10.multiprocessing import _janitor
mp.set_sharing_strategy("file_descriptor")
N = int(sys.argv[1])
ctx = mp.get_context("fork")

def send(q, wait):
    for i in range(N):
        q.put(pyc10.full((3,), float(i)))
    if wait is not None:
        wait.wait(60)

def janitor_pid(address):
    # the process holding the listening socket (SO_PEERCRED names the one that called listen)
    inode = None
    with open("/proc/net/unix") as f:
        for line in f.read().splitlines()[1:]:
            fields = line.split()
            if len(fields) >= 8 and fields[7] == os.fsdecode(address) and fields[3] == "00010000":
                inode = fields[6]
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") == f"socket:[{inode}]":
                    return int(pid)
        except OSError:
            continue
    return None

def held(pid):
    if pid is None:
        return 0
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except FileNotFoundError:
        return 0
    n = 0
    for fd in fds:
        try:
            n += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("/memfd:")
        except OSError:
            pass
    return n

def wait_for(predicate, seconds=10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not predicate():
        time.sleep(0.02)
    return predicate()

address = _janitor.tree_address()  # the children inherit it
"""

_SENDER_EXITS = (
    _COMMON
    + r"""
q = ctx.Queue()
p = ctx.Process(target=send, args=(q, None))
p.start()
raw = [q._reader.recv_bytes() for _ in range(N)]  # read, not received: nothing unpickled
p.join(60)
assert p.exitcode == 0, p.exitcode
pid = janitor_pid(address)
before = held(pid) if wait_for(lambda: held(pid) == N, 5) else held(pid)
got = []
for b in raw:
    try:
        got.append(pickle.loads(b))
    except RuntimeError as e:
        print(e, file=sys.stderr)  # what a user sees
        break
wrong = [i for i, t in enumerate(got) if t.tolist() != [float(i)] * 3]
after = held(pid) if wait_for(lambda: held(pid) == 0) else held(pid)
print(len(got), len(wrong), before, after)
"""
)


def _run(script: str, n: int, linger: float = 30, env: dict[str, str] | None = None) -> list[int]:
    env = {**os.environ, **(env or {})}
    env.pop(_janitor.ENV_VAR, None)  # a fresh janitor, with this test's linger
    env[_janitor.LINGER_ENV_VAR] = str(linger)
    out = subprocess.run(
        [sys.executable, "-c", script, str(n)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Warning" not in out.stderr, out.stderr[-3000:]
    return [int(x) for x in out.stdout.split()]


def test_a_sender_that_exited_before_its_1000_tensors_were_received_loses_none() -> None:
    received, wrong, held_before, held_after = _run(_SENDER_EXITS, 1000)
    assert (received, wrong) == (1000, 0)
    assert held_before == 1000  # the janitor held each one for its receiver
    assert held_after == 0  # and none once received


_SENDER_ALIVE = (
    _COMMON
    + r"""
q, wait = ctx.Queue(), ctx.Event()
p = ctx.Process(target=send, args=(q, wait))
p.start()
got = [q.get(timeout=60) for _ in range(N)]  # from the living sender, as before
wrong = [i for i, t in enumerate(got) if t.tolist() != [float(i)] * 3]
pid = janitor_pid(address)
drained = wait_for(lambda: held(pid) == 0)  # the receiver said each one landed
wait.set()
p.join(60)
print(len(got), len(wrong), int(drained), p.exitcode)
"""
)


def test_a_living_senders_tensors_leave_nothing_in_the_janitor_once_received() -> None:
    assert _run(_SENDER_ALIVE, 200) == [200, 0, 1, 0]


_NEVER_READ = (
    _COMMON
    + r"""
keep = _janitor._connect(address)  # a client: the janitor stays up
pid = janitor_pid(address)
q = ctx.Queue()
p = ctx.Process(target=send, args=(q, None))
p.start()
raw = [q._reader.recv_bytes() for _ in range(N)]  # drained, never unpickled
p.join(60)
exited = time.monotonic()
before = held(pid) if wait_for(lambda: held(pid) == N, 1) else held(pid)
released = wait_for(lambda: held(pid) == 0, 20)
took = time.monotonic() - exited
alive = os.path.exists(f"/proc/{pid}")
print(before, int(released), int(alive), int(took * 1000))
"""
)


def test_descriptors_nobody_receives_are_released_after_the_linger() -> None:
    before, released, janitor_alive, took_ms = _run(_NEVER_READ, 300, linger=3)
    assert before == 300  # held after their sender exited
    assert released == 1 and janitor_alive == 1  # then released, the janitor still serving
    assert 2000 < took_ms < 10000


_SENDER_KILLED = (
    _COMMON
    + r"""
import signal
keep = _janitor._connect(address)
pid = janitor_pid(address)

def send_and_die(q):
    send(q, None)
    q.close()
    q.join_thread()  # all on the pipe
    os.kill(os.getpid(), signal.SIGKILL)

q = ctx.Queue()
p = ctx.Process(target=send_and_die, args=(q,))
p.start()
raw = [q._reader.recv_bytes() for _ in range(N)]
p.join(60)
killed = time.monotonic()
released = wait_for(lambda: held(pid) == 0, 20)
print(p.exitcode, int(released), int((time.monotonic() - killed) * 1000))
"""
)


def test_a_killed_sender_leaves_nothing_held() -> None:
    """SIGKILL hands nothing over (its receivers fail as with torch); nothing stays behind."""
    env = {_janitor.GRACE_ENV_VAR: "0.5"}
    exitcode, released, took_ms = _run(_SENDER_KILLED, 100, linger=60, env=env)
    assert exitcode == -9 and released == 1
    assert took_ms < 5000


class _DeadSender:
    """A DupFd whose sender is gone."""

    def detach(self) -> int:
        raise EOFError("the sender has exited")


def test_a_forged_token_is_refused_with_a_clear_error() -> None:
    address = _janitor.tree_address()
    _janitor._connect(address).close()  # a janitor runs
    with pytest.raises(RuntimeError, match="holds no descriptor under token") as info:
        reductions.rebuild_storage_fd(pyc10.UntypedStorage, _DeadSender(), 16, address, b"0" * 32)
    assert "could not receive the file descriptor" in str(info.value)
    for token in (b"not hex", b"0" * 31, "0" * 32, None):
        with pytest.raises(RuntimeError, match="could not receive the file descriptor"):
            reductions.rebuild_storage_fd(pyc10.UntypedStorage, _DeadSender(), 16, address, token)


def test_a_token_held_by_another_janitor_or_user_is_refused() -> None:
    # a real token, presented to a janitor that does not hold it (another process tree's)
    s = pyc10.UntypedStorage(16)
    s.fill_(3)
    reduced: Any = reductions.reduce_storage(s)
    rebuild, (cls, df, size, address, token) = reduced
    reductions._hand_over_pending({token})  # as at its sender's exit
    assert not reductions._pending.get(token)
    other = _janitor.new_address()
    with pytest.raises(RuntimeError, match=r"holds no descriptor|no janitor"):
        rebuild(cls, _DeadSender(), size, other, token)
    foreign = f"/tmp/pyc10-janitor-{os.geteuid() + 1}/{'0' * 32}".encode()
    with pytest.raises(RuntimeError, match=r"cannot trust|not the manager handle"):
        rebuild(cls, _DeadSender(), size, foreign, token)
    # the right janitor still hands it over, once: the same memory, not a copy
    got = rebuild(cls, _DeadSender(), size, address, token)
    assert list(got) == [3] * 16
    with pytest.raises(RuntimeError, match="holds no descriptor under token"):
        rebuild(cls, _DeadSender(), size, address, token)
    with pytest.raises(EOFError):  # the sender no longer hands it out either
        df.detach()


def _open_fds() -> set[int]:
    return {int(fd) for fd in os.listdir("/proc/self/fd")}


def test_the_janitor_holds_at_most_its_cap_and_only_memory_files(tmp_path: Any) -> None:
    """The protocol driven without a socket: P holds, past the cap or not a file it closes."""
    before = _open_fds()
    janitor = _janitor._Janitor(None, grace=0.0, linger=0.0, shm_dir=str(tmp_path))
    janitor.max_held = 2
    janitor.open(7, None, 1)
    tokens = [os.urandom(16).hex().encode() for _ in range(4)]
    for token in tokens[:3]:
        janitor.feed(7, b"P " + token + b"\n", [os.memfd_create("t")])
    r, w = os.pipe()
    janitor.feed(7, b"P " + tokens[3] + b"\n", [r])  # a pipe: no memory file
    janitor.feed(7, b"T\n", [w, os.memfd_create("stray")])  # descriptors no line claims
    assert sorted(janitor.held) == sorted(tokens[:2])
    janitor.feed(7, b"G " + tokens[0] + b"\nG " + b"f" * 32 + b"\n")  # handed over; unknown
    assert list(janitor.held) == [tokens[1]]
    janitor.close(7)  # its sender is gone: held for the linger (0 here), then closed
    janitor.expire()
    assert janitor.held == {}
    janitor.sel.close()  # its own (epoll)
    assert _open_fds() == before


def test_without_a_janitor_the_pickle_and_the_error_are_torchs(monkeypatch: Any) -> None:
    monkeypatch.setattr(_janitor, "SUPPORTED", False)  # as on a system without one
    s = pyc10.UntypedStorage(16)
    rebuild, args = reductions.reduce_storage(s)
    assert len(args) == 3  # (cls, DupFd, size), as torch's
    os.close(args[1].detach())
    with pytest.raises(
        RuntimeError, match=r"could not receive the file descriptor .*\(it has exited"
    ):
        rebuild(*args)
