"""The file_system strategy's janitor under attack: squatters at its address, hostile handles and
clients, its descriptor limit (issue 34, defects 1 and 6).

Every case ends in what a user sees: a share that returns within the janitor timeout with one
warning (or none where the janitor still guards), a refused handle, a janitor that stays idle and
serves its queued clients. Each ran against the janitor before the fix and hung, was accepted, or
spun (the commit messages say how).
"""

from __future__ import annotations

import errno
import os
import pickle
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pyc10
from pyc10.multiprocessing import _janitor, reductions

pytestmark = [
    pytest.mark.usefixtures("janitor_hooks"),
    pytest.mark.skipif(not _janitor.SUPPORTED, reason="the janitor is Linux only"),
]

NOBODY = 65534
TIMEOUT = 1.0  # PYC10_SHM_JANITOR_TIMEOUT in the victims: a share waits at most about this

_VICTIM = r"""
import os, sys, time, warnings
warnings.simplefilter("always")
import pyc10, pyc10.multiprocessing as mp
mp.set_sharing_strategy("file_system")
t = time.monotonic()
kept = [pyc10.UntypedStorage(64).share_memory_() for _ in range(3)]
print(f"{time.monotonic() - t:.3f}", flush=True)
if sys.argv[1] == "wait":
    time.sleep(60)
"""


def _names_of(pid: int) -> list[str]:
    return [n for n in os.listdir("/dev/shm") if n.startswith(f"c10c_{pid}_")]


def _unlink_names_of(pid: int) -> None:
    for n in _names_of(pid):
        try:
            os.unlink("/dev/shm/" + n)
        except OSError:
            pass


def _wait_for(predicate: Any, seconds: float = 10) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    return predicate()


def _victim_env(address: bytes) -> dict[str, str]:
    env = dict(os.environ)
    env[_janitor.ENV_VAR] = os.fsdecode(address.lstrip(b"\0"))
    env[_janitor.TIMEOUT_ENV_VAR] = str(TIMEOUT)
    return env


def _run_victim(address: bytes) -> tuple[float, str]:
    """Share three storages in a new process that uses address; (seconds it took, its stderr)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _VICTIM, "exit"],
        env=_victim_env(address),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=TIMEOUT + 20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("share_memory_() hung on the janitor's address")
    finally:
        _unlink_names_of(proc.pid)
    assert proc.returncode == 0, err
    return float(out.split()[0]), err


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "RuntimeWarning" in line]


def _bind(address: bytes) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(address)
    return sock


def _fork_squatter(address: bytes, uid: int) -> tuple[int, str]:
    """A child process of user uid that binds address and accepts (holding) every connection.

    Returns (pid, what happened: "bound" or the bind's error name). The interpreter cannot be run
    by nobody here (it lives under /root), so the child is forked and calls only the OS.
    """
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(r)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.bind(address)
                sock.listen(64)
                os.write(w, b"bound")
            except OSError as e:
                os.write(w, errno.errorcode.get(e.errno or 0, "error").encode())
                os._exit(0)
            os.close(w)
            held = []
            while True:
                held.append(sock.accept()[0])
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        what = f.read().decode()
    return pid, what


def _end(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)


@pytest.fixture
def address() -> Iterator[bytes]:
    """A fresh janitor address of this user (nothing listens there yet)."""
    address = _janitor.new_address()
    yield address
    if not address.startswith(b"\0"):
        try:
            os.unlink(address)
        except OSError:
            pass


# ---- defect 1: another user at the address --------------------------------------------------


@pytest.mark.skipif(os.geteuid() != 0, reason="becoming another user (nobody) needs root")
def test_another_user_cannot_take_the_janitors_address(address: bytes) -> None:
    """A squatter of another uid that binds the address before the janitor starts: the victim's
    names stay guarded (no warning) and nothing is left when the victim is SIGKILLed."""
    squatter, what = _fork_squatter(address, NOBODY)
    victim = None
    try:
        assert what in ("EACCES", "EPERM", "ENOENT")  # the address is not another user's to take
        victim = subprocess.Popen(
            [sys.executable, "-c", _VICTIM, "wait"],
            env=_victim_env(address),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert victim.stdout is not None
            assert victim.stdout.readline()
            assert len(_names_of(victim.pid)) == 3
        finally:
            victim.kill()
            _, err = victim.communicate()
        assert _warnings(err) == []
        assert _wait_for(lambda: _names_of(victim.pid) == [])
    finally:
        _end(squatter)
        if victim is not None:
            _unlink_names_of(victim.pid)


@pytest.mark.skipif(os.geteuid() != 0, reason="becoming another user (nobody) needs root")
def test_a_janitor_address_served_by_another_user_is_refused(address: bytes) -> None:
    """Whatever put it there, a server of another uid is never taken for the janitor: the share
    goes on unguarded, with one warning that says why."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child: bound as root where root may, served as nobody
        try:
            os.close(r)
            sock = _bind(address)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            sock.listen(64)  # SO_PEERCRED reports who listened
            os.write(w, b"ok")
            os.close(w)
            held = []
            while True:
                held.append(sock.accept()[0])
        finally:
            os._exit(0)
    os.close(w)
    try:
        assert os.read(r, 2) == b"ok"
        seconds, err = _run_victim(address)
        assert seconds < TIMEOUT + 2
        (warning,) = _warnings(err)
        assert f"runs as user {NOBODY}" in warning
    finally:
        os.close(r)
        _end(pid)


def test_a_squatter_with_a_full_backlog_does_not_block_a_share(address: bytes) -> None:
    """A server that accepts nothing, its backlog full: connect would wait forever. The share
    returns within the janitor timeout with one warning."""
    squatter = _bind(address)
    squatter.listen(0)
    filled = []
    try:
        for _ in range(8):  # a unix socket's backlog 0 queues one connection; the next must wait
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.setblocking(False)
            try:
                c.connect(address)
            except BlockingIOError:
                c.close()
                break
            filled.append(c)
        seconds, err = _run_victim(address)
        assert seconds < TIMEOUT + 2
        (warning,) = _warnings(err)
        assert "janitor is unreachable" in warning and "timed out" in warning
    finally:
        for c in filled:
            c.close()
        squatter.close()


def test_a_server_of_this_user_that_speaks_garbage_is_not_taken_for_the_janitor(
    address: bytes,
) -> None:
    """A process of this user listening at the address that is not a janitor (it answers
    garbage): the victim says once that it shares unguarded, and does not wait."""
    server = _bind(address)
    server.listen(64)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(r)
            os.close(w)
            held = []
            while True:
                c = server.accept()[0]
                c.sendall(b"\xff\xfeHTTP/1.1 400 Bad Request\r\n\r\n" * 4)
                held.append(c)
        finally:
            os._exit(0)
    os.close(w)
    os.close(r)
    server.close()
    try:
        seconds, err = _run_victim(address)
        assert seconds < TIMEOUT + 2
        (warning,) = _warnings(err)
        assert "is not a pyc10 shared memory janitor" in warning
    finally:
        _end(pid)


def test_handles_naming_an_address_this_user_cannot_trust_are_refused(tmp_path: Path) -> None:
    """Manager handles are untrusted input: an abstract address (anyone may bind it), another
    user's janitor directory, a directory others may write: refused before anything is opened."""
    mp_storage = pyc10.UntypedStorage(16)
    from pyc10 import _sharing

    before = _sharing.get_sharing_strategy()
    _sharing.set_sharing_strategy("file_system")
    try:
        name = mp_storage.share_memory_()._share_filename_cpu_()[1]
    finally:
        _sharing.set_sharing_strategy(before)
    uid = os.geteuid()
    hex32 = "0" * 32
    loose = tmp_path / f"pyc10-janitor-{uid}"
    loose.mkdir(mode=0o777)
    loose.chmod(0o777)
    handles = [
        b"\0pyc10-janitor-%d-0123456789abcdef" % uid,  # the old abstract form
        os.fsencode(f"/tmp/pyc10-janitor-{uid + 1}/{hex32}"),  # another user's
        os.fsencode(f"{loose}/{hex32}"),  # a directory others may write
    ]
    if uid == 0:
        foreign = tmp_path / "foreign" / f"pyc10-janitor-{uid}"
        foreign.mkdir(parents=True, mode=0o700)
        os.chown(foreign, NOBODY, NOBODY)
        handles.append(os.fsencode(f"{foreign}/{hex32}"))
    for handle in handles:
        data = pickle.dumps(
            (reductions.rebuild_storage_filename, (pyc10.UntypedStorage, handle, name, 16))
        )
        with pytest.raises(RuntimeError, match="manager handle") as info:
            func, args = pickle.loads(data)
            func(*args)
        assert "janitor" in str(info.value)


def test_the_address_is_in_a_private_directory_of_this_user(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$XDG_RUNTIME_DIR/pyc10-janitor-<uid>/<hex>, mode 0700; where another user made that name
    first, a fresh directory beside it; an XDG_RUNTIME_DIR not this user's own is passed over."""
    runtime = Path(tempfile.mkdtemp(prefix="xdg-"))  # short: a socket path has 107 bytes
    request.addfinalizer(lambda: shutil.rmtree(runtime))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    uid = os.geteuid()
    address = _janitor.new_address()
    directory = os.path.dirname(address)
    assert directory == os.fsencode(f"{runtime}/pyc10-janitor-{uid}")
    assert os.lstat(directory).st_mode & 0o777 == 0o700
    _janitor.check_handle(address)
    if uid == 0:
        os.chown(directory, NOBODY, NOBODY)  # as if another user had made it first
        fresh = os.path.dirname(_janitor.new_address())
        assert fresh.startswith(directory + b"-") and os.lstat(fresh).st_uid == uid
        os.chown(runtime, NOBODY, NOBODY)  # sudo kept another user's XDG_RUNTIME_DIR
        assert _janitor.new_address().startswith(os.fsencode(f"/tmp/pyc10-janitor-{uid}"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/" + "x" * 90)  # too long for a socket path
    assert _janitor.new_address().startswith(os.fsencode(f"/tmp/pyc10-janitor-{uid}"))


# ---- defect 6: the descriptor limit ---------------------------------------------------------


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _server_pid(listener_inode_of: socket.socket) -> int | None:
    """The process (not this one) that holds a descriptor of the socket listener_inode_of."""
    target = f"socket:[{os.fstat(listener_inode_of.fileno()).st_ino}]"
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) == os.getpid():
            continue
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                    return int(pid)
        except OSError:
            continue
    return None


def test_the_janitor_idles_at_its_descriptor_limit_and_serves_queued_clients_later(
    address: bytes,
) -> None:
    """accept fails with EMFILE and the listener stays readable: the janitor must not spin, and
    once connections close it serves the clients that waited in its backlog."""
    limit = 32
    listener = _bind(address)
    listener.listen(1024)
    started = subprocess.Popen(
        [sys.executable, "-I", "-S", _janitor.__file__, str(listener.fileno())],
        pass_fds=(listener.fileno(),),
        start_new_session=True,
    )
    assert started.wait(10) == 0
    pid = _wait_for(lambda: _server_pid(listener))
    assert pid
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (limit, limit))
    listener.close()
    name = f"c10c_{os.getpid()}_queued{os.urandom(4).hex()}"
    clients = []
    try:
        for _ in range(2 * limit):
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.connect(address)  # queued in the backlog once the janitor is at its limit
            clients.append(c)
        fd = os.open("/dev/shm/" + name, os.O_CREAT | os.O_RDWR, 0o600)
        os.close(fd)
        queued = clients[-1]
        queued.sendall(f"R /{name}\n".encode())
        time.sleep(0.3)  # the janitor reaches its limit
        cpu = _cpu_seconds(pid)
        time.sleep(1.0)
        spent = _cpu_seconds(pid) - cpu
        assert spent < 0.2, f"the janitor spent {spent:.2f} s of CPU in 1 s at its limit"
        assert os.path.exists("/dev/shm/" + name)
        queued.close()  # it waited in the backlog; what it sent is served once it is accepted
        for c in clients[: limit + 4]:  # every client the janitor had accepted, and a few more
            c.close()
        del clients[: limit + 4]
        time.sleep(0.2)
        for c in clients[:-1]:  # the other waiting clients
            c.close()
        clients.clear()
        assert _wait_for(lambda: not os.path.exists("/dev/shm/" + name), 5)
    finally:
        for c in clients:
            c.close()
        try:
            os.unlink("/dev/shm/" + name)
        except OSError:
            pass
        _wait_for(lambda: not os.path.exists(f"/proc/{pid}"), 5)


# ---- the protocol fuzz harness (tests/fuzz/py/fuzz_janitor.py) ------------------------------

_FUZZ = Path(__file__).resolve().parents[1] / "fuzz" / "py" / "fuzz_janitor.py"


def _fuzz(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(_FUZZ), *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_the_janitor_protocol_corpus_replays_clean() -> None:
    """Every kept input (each a case once found or worth keeping) passes the harness's checks."""
    out = _fuzz("0", timeout=60)
    assert out.returncode == 0, out.stderr
    assert "replayed" in out.stdout and " 0 mutated" in out.stdout


def test_the_janitor_fuzz_harness_refuses_bad_usage() -> None:
    out = _fuzz("soon", timeout=30)
    assert out.returncode == 2
    assert "invalid float value" in out.stderr


@pytest.mark.slow
def test_fuzz_the_janitor_protocol_for_20_seconds() -> None:
    """The bounded run CI does: replay, 16 s of mutations in process, 4 s on a real janitor."""
    out = _fuzz("20", timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
