r"""The janitor: unlinks the shared memory names of processes that died without unlinking them.

Why: strategy ``file_system`` shares a storage as a named POSIX shared memory object (torch's
RefcountedMapAllocator file: a reference count at offset 0, the creator counts 1, each opener +1,
and whoever drops it to 0 unlinks the name). A process killed by SIGKILL never drops its count,
so its names would stay in /dev/shm until reboot. torch hands them to ``torch_shm_manager``,
which unlinks everything once its last client is gone, and leaks everything if it is gone first.

Design (one small process per process tree, one connection per process):

- The janitor is this file run by the interpreter (``python -I -S .../_janitor.py``, standard
  library only, so it starts in ~20 ms), in its own session (``start_new_session``: signals to
  the terminal's process group and ``killpg`` of the tree leave it alone), detached (double
  fork: nobody has to reap it). It serves an *abstract* unix socket (Linux: no file to leave
  behind, gone with the last process holding it). The address, ``\0pyc10-janitor-<uid>-<random>``,
  is the manager handle that ``_share_filename_cpu_`` reports (the storage's ``name_created``
  hook returns it) and that the pickled tuple carries; the process that first needs one puts it
  in the environment (``PYC10_SHM_JANITOR``) so that every process it starts, forked or spawned,
  uses the same janitor.
- The first process to need the janitor binds the address itself and passes the listening
  socket to the janitor it starts (``pass_fds``): it can connect at once, with no race, and
  when two processes race to start it, ``bind`` lets one win (the other gets EADDRINUSE and
  connects to the winner's).
- Each process keeps ONE connection per janitor (not one fd per storage) and sends one line per
  event: ``R name`` (this process created or opened name: the ``name_created``/``name_opened``
  hooks), ``F name`` (a message carrying name was sent: in flight), ``L name`` (such a message
  was unpickled: landed), ``T`` (this is the janitor of the names this process creates), ``X``
  (goodbye: a normal exit, from atexit and multiprocessing's exit finalizers). The janitor
  checks that each client runs as its own user (SO_PEERCRED, which also gives its pid) and
  keeps, per name, the connections that registered it and the number of messages in flight.
- Linux only (abstract sockets, SO_PEERCRED, /dev/shm; ``SUPPORTED``): elsewhere
  pyc10.multiprocessing does not install the hooks, and the names of processes killed by SIGKILL
  stay, as with torch when its manager dies first.
- When a connection closes (the process exited, or was SIGKILLed: the kernel closes its socket),
  every name it registered that no open connection holds and that has nothing in flight is
  unlinked if it still exists (a name already unlinked by its last user is simply forgotten).
  In flight: the sender's message holds a reference (torch's ``_shared_incref``) and the name
  stays for the receiver, which registers it before saying it landed; the sender may exit
  right after putting it on a queue. If the last user was killed (no goodbye), a name still in
  flight is kept only for a grace period (``PYC10_SHM_JANITOR_GRACE`` seconds, default 2): its
  receivers may be dead too, and a name nobody can open any more must not outlive them.
- A process can die between creating a name and registering it: when a creating process's
  connection closes, the names in /dev/shm that the storage layer named after its pid
  (``c10c_<pid>_<random>``) and that nobody registered are unlinked too.
- When no client is left, the janitor waits for late receivers (a process that has not needed
  the janitor yet may read a queue later), then unlinks every name it still knows and exits:
  ``PYC10_SHM_JANITOR_LINGER`` seconds (default 60) while a name sent by a process that exited
  normally is in flight, else the grace period (0.2 s with no name at all). torch's manager
  exits, unlinking, as soon as its last client is gone, which fails such a receiver.
- The table stays bounded: when it has grown to twice its live size, names that no longer
  exist (unlinked by their last user, the normal case) are dropped; clients prune their own
  list of names the same way.
- If the janitor itself is killed: names keep their reference counts, so normal lifetimes are
  unaffected (the last user unlinks), as in torch. Unlike torch, every client notices at once (a
  thread per process waits on its connection) and restarts a janitor at the same address, then
  registers again every name it still holds, so a process SIGKILLed later still leaves nothing.
  Only names of processes that die while no janitor runs (a window of milliseconds) can leak,
  and a name still in flight when the janitor dies is guarded again only once its receiver
  registers it.
- Abuse: the janitor only unlinks names of the same user that a client of the same user named,
  which that client could unlink itself, or that its own creating client's pid names; a line
  that is not ``R|F|L /name``, ``T`` or ``X`` is ignored.

``check_handle`` refuses a manager handle that is not such an address (a forged or foreign
pickle), before anything is opened.
"""

from __future__ import annotations

import os
import re
import selectors
import socket
import struct
import sys
import threading
import time
from typing import Any

ENV_VAR = "PYC10_SHM_JANITOR"
GRACE_ENV_VAR = "PYC10_SHM_JANITOR_GRACE"
LINGER_ENV_VAR = "PYC10_SHM_JANITOR_LINGER"
_PREFIX = b"\0pyc10-janitor-"
_HANDLE_RE = re.compile(rb"\0pyc10-janitor-[0-9]{1,10}-[0-9a-f]{16,64}\Z")
_NAME_RE = re.compile(rb"/[^/\0\n\r ]{1,250}\Z")
_SHM_DIR = "/dev/shm"
_UCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid
# Whether this system has what the janitor is made of (see the module's docstring).
SUPPORTED = sys.platform.startswith("linux")


def _exists(name: bytes) -> bool:
    """Whether the shared memory object name still exists (Linux: its file in /dev/shm)."""
    return os.path.exists(_SHM_DIR + os.fsdecode(name))


def unlink(name: bytes) -> None:
    """Unlink a shared memory name if it exists."""
    _unlink(name)


def _unlink(name: bytes) -> None:
    try:
        os.unlink(_SHM_DIR + os.fsdecode(name))
    except OSError:
        pass


def _peer_pid_uid(sock: socket.socket) -> tuple[int, int]:
    pid, uid, _ = _UCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size))
    return int(pid), int(uid)


# ---- the janitor process --------------------------------------------------------------------


class _Entry:
    __slots__ = ("conns", "expires", "flight")

    def __init__(self) -> None:
        self.conns: set[int] = set()
        self.flight = 0
        self.expires: float | None = None  # in flight, every user dead: unlinked at this time


class _Conn:
    __slots__ = ("buf", "clean", "creator", "held", "pid", "sock")

    def __init__(self, sock: socket.socket, pid: int) -> None:
        self.sock = sock
        self.pid = pid
        self.buf = bytearray()
        self.held: set[bytes] = set()
        self.clean = False  # the process said goodbye before closing (a normal exit)
        self.creator = False  # this is the janitor of the names the process creates


class _Janitor:
    """The server loop: names by connection, unlinked when their connections are all gone."""

    def __init__(self, listener: socket.socket, grace: float, linger: float) -> None:
        self.listener = listener
        self.grace = grace
        self.linger = linger
        self.sel = selectors.DefaultSelector()
        self.sel.register(listener, selectors.EVENT_READ, None)
        self.conns: dict[int, _Conn] = {}
        self.names: dict[bytes, _Entry] = {}
        self.limit = 1024
        self.uid = os.geteuid()

    def run(self) -> None:
        deadline: float | None = None
        while True:
            wake = [e.expires for e in self.names.values() if e.expires is not None]
            if deadline is not None:
                wake.append(deadline)
            timeout = max(0.0, min(wake) - time.monotonic()) if wake else None
            for key, _ in self.sel.select(timeout):
                if key.data is None:
                    self.accept()
                else:
                    self.read(key.fd)
            self.expire()
            if self.conns:
                deadline = None
            elif deadline is None:
                # No client: wait for late ones (a receiver not connected yet) a short while.
                deadline = time.monotonic() + self.wait_for_late_receivers()
            elif time.monotonic() >= deadline:
                break
        self.sel.unregister(self.listener)
        self.listener.close()  # unbinds the address: the next user starts a new janitor
        for name in self.names:
            _unlink(name)

    def accept(self) -> None:
        try:
            sock, _ = self.listener.accept()
        except OSError:
            return
        pid, uid = _peer_pid_uid(sock)
        if uid != self.uid:
            sock.close()
            return
        sock.setblocking(False)
        self.conns[sock.fileno()] = _Conn(sock, pid)
        self.sel.register(sock, selectors.EVENT_READ, sock.fileno())

    def read(self, fd: int) -> None:
        conn = self.conns[fd]
        try:
            data = conn.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.close(fd)
            return
        conn.buf += data
        *lines, rest = bytes(conn.buf).split(b"\n")
        conn.buf[:] = rest[-4096:]  # a line is short; a client sending garbage cannot grow it
        for line in lines:
            self.handle(fd, conn, line)
        if len(self.names) > self.limit:
            self.prune()

    def handle(self, fd: int, conn: _Conn, line: bytes) -> None:
        if line == b"X":
            conn.clean = True
            return
        if line == b"T":
            conn.creator = True
            return
        kind, _, name = line.partition(b" ")
        if not _NAME_RE.match(name):
            return
        entry = self.names.get(name)
        if entry is None:
            if kind == b"L":  # nothing registered it here (a foreign or replayed line)
                return
            entry = self.names[name] = _Entry()
        if kind == b"R":
            entry.conns.add(fd)
            entry.expires = None
            conn.held.add(name)
        elif kind == b"F":
            entry.flight += 1
        elif kind == b"L":
            entry.flight -= 1
            self.settle(name, entry, clean=True)

    def settle(self, name: bytes, entry: _Entry, clean: bool) -> None:
        """Unlink name if nobody holds it and nothing carrying it is in flight.

        Still in flight with every user gone: kept for the receiver, which is not connected yet
        (a sender may exit right after putting it on a queue). When the last user died without
        saying goodbye (SIGKILL), only for the grace period: its receivers may be dead too.
        """
        if entry.conns:
            return
        if entry.flight <= 0:
            del self.names[name]
            _unlink(name)
        elif not clean and entry.expires is None:
            entry.expires = time.monotonic() + self.grace

    def wait_for_late_receivers(self) -> float:
        """Seconds to wait, with no client left, for a receiver to connect before exiting."""
        if any(e.flight > 0 and e.expires is None for e in self.names.values()):
            return self.linger  # sent by a process that exited normally: someone will read it
        return self.grace if self.names else 0.2

    def expire(self) -> None:
        now = time.monotonic()
        for name in [
            n for n, e in self.names.items() if e.expires is not None and e.expires <= now
        ]:
            del self.names[name]
            _unlink(name)

    def close(self, fd: int) -> None:
        conn = self.conns.pop(fd)
        self.sel.unregister(conn.sock)
        conn.sock.close()
        for name in conn.held:
            entry = self.names.get(name)
            if entry is not None:
                entry.conns.discard(fd)
                self.settle(name, entry, conn.clean)
        if conn.creator:
            self.sweep(conn.pid)

    def sweep(self, pid: int) -> None:
        """Unlink the names pid created that nobody registered here.

        Those it died with between creating one and telling this janitor: the storage layer
        names its objects c10c_<pid>_<random> (lib/tensor/storage_shared.c).
        """
        prefix = f"c10c_{pid}_"
        try:
            entries = os.listdir(_SHM_DIR)
        except OSError:
            return
        for entry in entries:
            if entry.startswith(prefix):
                name = b"/" + os.fsencode(entry)
                if name not in self.names and not any(c.pid == pid for c in self.conns.values()):
                    _unlink(name)

    def prune(self) -> None:
        """Forget the names their last user unlinked already."""
        gone = [name for name in self.names if not _exists(name)]
        for name in gone:
            for fd in self.names.pop(name).conns:
                self.conns[fd].held.discard(name)
        self.limit = max(1024, 2 * len(self.names))


def _serve(fd: int) -> None:
    listener = socket.socket(fileno=fd)
    _Janitor(listener, _seconds(GRACE_ENV_VAR, 2.0), _seconds(LINGER_ENV_VAR, 60.0)).run()


def _seconds(variable: str, default: float) -> float:
    try:
        return max(0.0, float(os.environ.get(variable, default)))
    except ValueError:
        return default


def main(argv: list[str]) -> int:
    """Entry point: ``_janitor.py FD`` serves the listening socket FD (detached first)."""
    if len(argv) != 2 or not argv[1].isdigit():
        print("usage: _janitor.py FD  (started by pyc10.multiprocessing)", file=sys.stderr)
        return 2
    if os.fork() != 0:  # the starter reaps this process at once; the janitor is init's child
        os._exit(0)
    os.chdir("/")  # hold no directory busy
    _serve(int(argv[1]))
    return 0


# ---- the client side (in each process using shared names) -----------------------------------


def new_address() -> bytes:
    """A fresh janitor address for this user."""
    return _PREFIX + f"{os.geteuid()}-{os.urandom(8).hex()}".encode()


def check_handle(handle: object) -> None:
    """Raise RuntimeError unless handle is a janitor address (a manager handle pyc10 made)."""
    if not isinstance(handle, bytes) or not _HANDLE_RE.match(handle):
        raise RuntimeError(
            f"pyc10.multiprocessing: {handle!r} is not the manager handle of a shared memory "
            "janitor; the pickle was not made by pyc10.multiprocessing's file_system strategy"
        )


def _start(address: bytes) -> None:
    """Start a janitor at address unless one is bound there already."""
    import subprocess  # here: most processes never start one

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            listener.bind(address)
        except OSError:  # EADDRINUSE: another process started it first
            return
        listener.listen(1024)
        fd = listener.fileno()
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", os.path.abspath(__file__), str(fd)],
            pass_fds=(fd,),
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        proc.wait()
    finally:
        listener.close()


class _Client:
    """A process's one connection to one janitor, with the names it registered there."""

    def __init__(self, address: bytes) -> None:
        self.address = address
        self.lock = threading.Lock()
        self.held: set[bytes] = set()
        self.limit = 1024
        self.sock: socket.socket | None = None
        self.watcher: threading.Thread | None = None
        self.creator = False  # this process creates its names here (its tree's janitor)

    def _connect(self) -> socket.socket:
        """A connection to the janitor (started if none is running); caller holds the lock."""
        for attempt in range(200):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(self.address)
            except (ConnectionRefusedError, FileNotFoundError):
                sock.close()
                _start(self.address)
                if attempt:
                    time.sleep(0.01)
                continue
            except BaseException:
                sock.close()
                raise
            uid = _peer_pid_uid(sock)[1]
            if uid != os.geteuid():
                sock.close()
                raise RuntimeError(
                    f"pyc10.multiprocessing: the shared memory janitor at {self.address!r} "
                    f"runs as user {uid}, not as this process's user {os.geteuid()}"
                )
            return sock
        raise RuntimeError(f"pyc10.multiprocessing: could not reach a janitor at {self.address!r}")

    def _ensure(self, dead: socket.socket | None) -> socket.socket:
        """The live connection; a new one (names registered again) if ``dead`` is current."""
        sock = self.sock
        if sock is not None and sock is not dead:
            return sock
        if sock is not None:
            sock.close()
        sock = self.sock = self._connect()
        hello = b"T\n" if self.creator else b""
        if hello or self.held:
            sock.sendall(hello + b"".join(b"R " + n + b"\n" for n in self.held))
        if self.watcher is None or not self.watcher.is_alive():
            self.watcher = threading.Thread(
                target=self._watch, name="pyc10-shm-janitor-watch", daemon=True
            )
            self.watcher.start()
        return sock

    def _watch(self) -> None:
        """Wait on the connection; when the janitor dies, reconnect (restarting it) at once."""
        while True:
            with self.lock:
                sock = self.sock
            if sock is None:
                return
            try:
                data = sock.recv(1)  # the janitor never writes: this returns when it is gone
            except OSError:
                data = b""
            if data:
                continue
            with self.lock:
                if self.sock is not sock:
                    continue  # already replaced (or closed after a fork)
                try:
                    self._ensure(sock)
                except Exception:
                    self.sock = None
                    return

    def send(self, kind: bytes, name: bytes) -> None:
        """Send one line (kind C: a name this process created, registered as R)."""
        first = b""
        with self.lock:
            if kind == b"C":
                kind = b"R"
                if not self.creator:
                    self.creator = True
                    first = b"T\n"  # the janitor may sweep this process's names when it dies
            line = first + kind + b" " + name + b"\n"
            if _exiting:  # sent while exiting (the queue's feeder flushing): still a goodbye
                line += b"X\n"
            if kind == b"R":
                self.held.add(name)
                if len(self.held) > self.limit:
                    self.held = {n for n in self.held if _exists(n)}
                    self.limit = max(1024, 2 * len(self.held))
            sock = self._ensure(None)
            try:
                sock.sendall(line)
            except OSError:
                self._ensure(sock).sendall(line)  # the janitor died: registered again above


_lock = threading.Lock()
_clients: dict[bytes, _Client] = {}
_exiting = False


class _ExitHook:
    """Registers _goodbye where this process will run it at a normal exit."""

    def __init__(self) -> None:
        import atexit
        from multiprocessing import util

        atexit.register(_goodbye)
        self.register()
        # A multiprocessing child clears the finalizers it inherited (or made while being
        # unpickled, under spawn) before running its target, then runs these after-fork hooks.
        util.register_after_fork(self, _ExitHook.register)

    def register(self) -> None:
        from multiprocessing import util

        # multiprocessing's children leave through os._exit after its exit finalizers, without
        # atexit; priority >= 0: before the queues' feeder threads are joined
        util.Finalize(None, _goodbye, exitpriority=0)


_exit_hook: _ExitHook | None = None


def install_exit_hook() -> None:
    """Say goodbye to the janitors at a normal exit (done on import of pyc10.multiprocessing)."""
    global _exit_hook  # noqa: PLW0603  (once per process)
    if _exit_hook is None:
        _exit_hook = _ExitHook()


def _after_fork_in_child() -> None:
    # The child must not speak on its parent's connections (its names would be the parent's,
    # and the parent's connection would stay open as long as the child lives).
    global _lock, _exiting  # noqa: PLW0603  (per-process state, new in each child)
    _lock = threading.Lock()
    _exiting = False
    for client in _clients.values():
        if client.sock is not None:
            client.sock.close()
    _clients.clear()


if SUPPORTED:
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _client(address: bytes) -> _Client:
    with _lock:
        client = _clients.get(address)
        if client is None:
            client = _clients[address] = _Client(address)
        return client


def _goodbye() -> None:
    """Tell each janitor this process exits normally (its names in flight stay for receivers).

    Lines sent after this (the queue's feeder thread pickling what was put last) say it again.
    """
    global _exiting  # noqa: PLW0603  (set once, at exit)
    _exiting = True
    for client in list(_clients.values()):
        sock = client.sock
        if sock is not None:
            try:
                sock.sendall(b"X\n")
            except OSError:
                pass


def tree_address() -> bytes:
    """The janitor address of this process tree (made, and put in the environment, on first use)."""
    value = os.environ.get(ENV_VAR)
    if value is not None:
        address = b"\0" + value.encode()
        if _HANDLE_RE.match(address):
            return address
    address = new_address()
    os.environ[ENV_VAR] = address[1:].decode()
    return address


def name_created(name: bytes) -> bytes:
    """The storage hook for a new shared name: register it; the manager handle to report."""
    address = tree_address()
    _report(address, b"C", name)
    return address


def name_opened(manager_handle: bytes, name: bytes) -> None:
    """The storage hook for a name opened from a pickle: register it with its janitor."""
    if _HANDLE_RE.match(manager_handle):
        _report(manager_handle, b"R", name)


def in_flight(manager_handle: bytes, name: bytes) -> None:
    """A message carrying name is being sent."""
    _report(manager_handle, b"F", name)


def landed(manager_handle: bytes, name: bytes) -> None:
    """A message carrying name has been unpickled here."""
    _report(manager_handle, b"L", name)


def _report(address: bytes, kind: bytes, name: bytes) -> None:
    if not _NAME_RE.match(name):
        return
    try:
        _client(address).send(kind, name)
    except Exception as e:  # the guard failed, not the sharing: say so once, carry on
        _warn(e)


_warned = False


def _warn(error: Any) -> None:
    global _warned  # noqa: PLW0603  (warn once per process)
    if not _warned:
        _warned = True
        import warnings

        warnings.warn(
            f"pyc10.multiprocessing: the shared memory janitor is unreachable ({error}); names "
            "of processes killed by SIGKILL may stay in /dev/shm",
            RuntimeWarning,
            stacklevel=3,
        )


if __name__ == "__main__":
    sys.exit(main(sys.argv))
