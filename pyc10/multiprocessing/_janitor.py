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
  fork: nobody has to reap it). It serves a unix socket *file* in a directory only its user can
  enter: ``$XDG_RUNTIME_DIR/pyc10-janitor-<uid>/`` or ``/tmp/pyc10-janitor-<uid>/`` (mode 0700,
  created with ``mkdir`` and then checked with ``lstat``: a directory, not a link, owned by this
  user, no access for others; if another user made that name first, a fresh
  ``pyc10-janitor-<uid>-<random>`` beside it). The address, ``<that directory>/<32 hex digits>``,
  is the manager handle that ``_share_filename_cpu_`` reports (the storage's ``name_created``
  hook returns it) and that the pickled tuple carries; the process that first needs one puts it
  in the environment (``PYC10_SHM_JANITOR``) so that every process it starts, forked or spawned,
  uses the same janitor. (An abstract socket name, which this used before, carries no
  permissions and is listed to everyone in /proc/net/unix: another user could bind it once the
  janitor was gone, or fill its backlog so that every client hung in ``connect``.)
- Nobody else can bind, connect to or replace the socket. A client still trusts nothing it is
  handed: a handle must name such a directory of its own user (``check_handle`` refuses one of
  another uid's directory, an abstract address, a directory others may write: before anything is
  opened); on connect it requires the server to run as its own user (SO_PEERCRED) and to greet
  it with ``pyc10-janitor 1``. Every connect, greeting and send has a deadline
  (``PYC10_SHM_JANITOR_TIMEOUT`` seconds, default 5): a client never blocks a share for longer.
  When a janitor cannot be had (refused, timed out), the process warns once and shares without
  it: sharing works, only the names of processes then killed by SIGKILL may stay in /dev/shm.
- The first process to need the janitor binds the address itself and passes the listening
  socket to the janitor it starts (``pass_fds``): it can connect at once, with no race. Starting
  happens under ``flock`` of the directory, so of two processes racing to start one, one binds;
  the other finds it listening and connects. A socket file whose janitor was killed refuses
  connections: the starter removes it (under the lock) and binds anew. A janitor that exits
  removes its own socket file under the same lock (only if it is still its own), then closes.
- Each process keeps ONE connection per janitor (not one fd per storage) and sends one line per
  event: ``R name`` (this process created or opened name: the ``name_created``/``name_opened``
  hooks), ``F name`` (a message carrying name was sent: in flight), ``L name`` (such a message
  was unpickled: landed), ``T`` (this is the janitor of the names this process creates), ``X``
  (goodbye: a normal exit, from atexit and multiprocessing's exit finalizers). The janitor
  checks that each client runs as its own user (SO_PEERCRED, which also gives its pid) and
  keeps, per name, the connections that registered it and the number of messages in flight.
- Descriptors for receivers of exited senders (strategy ``file_descriptor``, torch's limit:
  its ``DupFd`` is handed out by a thread of the sender, gone when the sender is). Each pickle
  carries a token (16 random bytes in hex) with this address; a sender that exits normally
  sends, for each descriptor no receiver has fetched yet, ``P token`` with the memory file's
  descriptor attached (SCM_RIGHTS, one ``sendmsg`` each: ``reductions._hand_over_pending``).
  A receiver whose sender is gone connects anew and sends ``G token``: the janitor answers
  ``+`` with the descriptor attached (then holds it no more) or ``-``. A ``G`` for a token not
  seen yet first makes the janitor read what its other clients sent (the sender's ``P`` may
  wait unread). It holds a descriptor only while it is in flight: until its receiver has it,
  or, after its sender's connection closed, for the linger (``PYC10_SHM_JANITOR_LINGER``),
  whatever other clients remain; and no more than half its descriptor limit (65,536 at most)
  at once: past that, and for what is not a regular file, the descriptor is closed at once
  (its receiver then fails as in torch). A held descriptor keeps its memory allocated: at most
  that many memory files, for at most that long after their senders exited. It is the
  sender's sealed memory file itself, not a copy; a receiver checks it as any it is sent.
  Linux returns the descriptors of one ``sendmsg`` at most with each read, never after the
  bytes of their line, so each ``P`` line takes the oldest descriptor not yet taken;
  descriptors no line takes are closed. A sender killed by SIGKILL hands nothing over, and a
  janitor that is killed loses what it held: their receivers fail as in torch.
- Linux only (SO_PEERCRED, /dev/shm; ``SUPPORTED``): elsewhere
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
- At its descriptor limit (``accept`` fails with EMFILE or ENFILE while the listener stays
  readable) the janitor stops watching the listener until a connection closes or 0.5 s pass, as
  nginx disables accept events; waiting clients stay queued in the backlog and are served when
  a descriptor is free (libuv's trick, closing a spare descriptor to accept and drop the
  client, would turn each of them away). It raises its own soft limit to the hard one first.
- Abuse: the janitor only unlinks names of the same user that a client of the same user named,
  which that client could unlink itself, or that its own creating client's pid names; it hands a
  descriptor only to a client of its own user that names its token, unguessable and sent
  only in the pickle; a line that is not ``R|F|L /name``, ``P|G token``, ``T`` or ``X`` is
  ignored, a line longer than 512 bytes is
  dropped whole, and names that no longer exist are dropped from the table as it grows (it
  stays within twice the live names). ``_Janitor.feed`` is the whole protocol, driven without a
  socket by ``tests/fuzz/py/fuzz_janitor.py``.

``check_handle`` refuses a manager handle that is not such an address (a forged or foreign
pickle, another user's janitor), before anything is opened.
"""

from __future__ import annotations

import errno
import heapq
import os
import re
import selectors
import socket
import stat
import struct
import sys
import threading
import time
from typing import Any

ENV_VAR = "PYC10_SHM_JANITOR"
GRACE_ENV_VAR = "PYC10_SHM_JANITOR_GRACE"
LINGER_ENV_VAR = "PYC10_SHM_JANITOR_LINGER"
TIMEOUT_ENV_VAR = "PYC10_SHM_JANITOR_TIMEOUT"
_GREETING = b"pyc10-janitor 1\n"  # the janitor's first words on each connection
# <dir>/pyc10-janitor-<uid>[-<random>]/<32 hex digits>; at most 107 bytes (sun_path)
_HANDLE_RE = re.compile(
    rb"(?:/[^\0\n]*)?/pyc10-janitor-([0-9]{1,10})(?:-[0-9a-f]{16})?/[0-9a-f]{32}\Z"
)
_MAX_ADDRESS = 107
_NAME_RE = re.compile(rb"/[^/\0\n\r ]{1,250}\Z")
_MAX_LINE = 512  # "R " and a name of at most 251 bytes; a longer line is dropped whole
_KINDS = (b"R", b"F", b"L")
_FD_KINDS = (b"P", b"G")
_TOKEN_RE = re.compile(rb"[0-9a-f]{32}\Z")  # a descriptor's token: 16 random bytes in hex
_MAX_HELD = 65536  # descriptors held at most (and half the janitor's descriptor limit)
_MAX_FDS_READ = 16  # descriptors one read takes at most (a client sends one a line)
_PAUSE = 0.5  # seconds the listener is left alone at the descriptor limit
_SHM_DIR = "/dev/shm"
_UCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid
# Whether this system has what the janitor is made of (see the module's docstring).
SUPPORTED = sys.platform.startswith("linux")


def _exists(name: bytes, shm_dir: str = _SHM_DIR) -> bool:
    """Whether the shared memory object name still exists (Linux: its file in /dev/shm)."""
    return os.path.exists(shm_dir + os.fsdecode(name))


def unlink(name: bytes) -> None:
    """Unlink a shared memory name if it exists."""
    _unlink(name)


def _unlink(name: bytes, shm_dir: str = _SHM_DIR) -> None:
    try:
        os.unlink(shm_dir + os.fsdecode(name))
    except OSError:
        pass


def _peer_pid_uid(sock: socket.socket) -> tuple[int, int]:
    pid, uid, _ = _UCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size))
    return int(pid), int(uid)


def _lock(fd: int, deadline: float) -> bool:
    """Lock fd (a directory: flock) before deadline; whether it was locked."""
    import fcntl

    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.002)


# ---- the janitor process --------------------------------------------------------------------


class _Entry:
    __slots__ = ("conns", "expires", "flight")

    def __init__(self) -> None:
        self.conns: set[int] = set()
        self.flight = 0
        self.expires: float | None = None  # in flight, every user dead: unlinked at this time


class _Held:
    """A memory file's descriptor held for its receiver (``P token``), and whose it is."""

    __slots__ = ("expires", "fd", "owner")

    def __init__(self, fd: int, owner: int) -> None:
        self.fd = fd
        self.owner = owner  # the sender's connection
        self.expires: float | None = None  # its sender is gone: closed at this time


class _Conn:
    __slots__ = ("buf", "clean", "creator", "fds", "held", "pid", "sent", "skip", "sock")

    def __init__(self, sock: socket.socket | None, pid: int) -> None:
        self.sock = sock
        self.pid = pid
        self.buf = bytearray()
        self.skip = False  # the rest of a line longer than _MAX_LINE is dropped
        self.held: set[bytes] = set()
        self.clean = False  # the process said goodbye before closing (a normal exit)
        self.creator = False  # this is the janitor of the names the process creates
        self.fds: list[int] = []  # descriptors received, not yet claimed by a P line
        self.sent: set[bytes] = set()  # tokens of the descriptors it handed over, still held


class _Janitor:
    """The server: names by connection, unlinked when their connections are all gone.

    ``open``/``feed``/``close`` are the protocol (a connection came, sent bytes, went), which
    the socket loop (``run``) only feeds; the fuzz harness drives them directly, with
    ``listener`` None and a directory of its own as ``shm_dir``.
    """

    def __init__(
        self,
        listener: socket.socket | None,
        grace: float,
        linger: float,
        shm_dir: str = _SHM_DIR,
    ) -> None:
        self.listener = listener
        self.grace = grace
        self.linger = linger
        self.shm_dir = shm_dir
        self.sel = selectors.DefaultSelector()
        if listener is not None:
            self.sel.register(listener, selectors.EVENT_READ, None)
        self.paused_until: float | None = None  # at the descriptor limit: listener not watched
        self.conns: dict[int, _Conn] = {}
        self.names: dict[bytes, _Entry] = {}
        self.held: dict[bytes, _Held] = {}  # token -> descriptor, for receivers of exited senders
        self.expiring: list[tuple[float, bytes]] = []  # heap of (expires, token); some stale
        self.max_held = 512  # set from the descriptor limit by _serve
        self.draining = False
        self.limit = 1024
        self.uid = os.geteuid()

    def run(self) -> None:
        deadline: float | None = None
        while True:
            wake = [e.expires for e in self.names.values() if e.expires is not None]
            if self.expiring:  # O(1) a round: a sender may leave thousands behind
                wake.append(self.expiring[0][0])
            if deadline is not None:
                wake.append(deadline)
            if self.paused_until is not None:
                wake.append(self.paused_until)
            timeout = max(0.0, min(wake) - time.monotonic()) if wake else None
            for key, _ in self.sel.select(timeout):
                if key.data is None:
                    self.accept()
                else:
                    self.read(key.fd)
            self.expire()
            if self.paused_until is not None and time.monotonic() >= self.paused_until:
                self.resume()
            if self.conns:
                deadline = None
            elif deadline is None:
                # No client: wait for late ones (a receiver not connected yet) a short while.
                deadline = time.monotonic() + self.wait_for_late_receivers()
            elif time.monotonic() >= deadline:
                break
        self.unbind()  # the next user starts a new janitor
        self.release_all()

    def release_all(self) -> None:
        """Exiting: unlink every name still known, close every descriptor still held."""
        for name in self.names:
            self.unlink(name)
        for held in self.held.values():
            os.close(held.fd)
        self.held.clear()

    def unbind(self) -> None:
        """Remove this janitor's socket file (if still its own, under the directory's lock)."""
        listener = self.listener
        if listener is None:
            return
        if self.paused_until is None:
            self.sel.unregister(listener)
        path = listener.getsockname()
        if isinstance(path, str) and path.startswith("/"):
            try:
                dfd = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY)
            except OSError:
                dfd = -1
            try:
                if dfd >= 0 and _lock(dfd, time.monotonic() + 5):
                    st = os.lstat(path)
                    if stat.S_ISSOCK(st.st_mode) and st.st_ino == self.inode:
                        os.unlink(path)
            except OSError:
                pass
            finally:
                listener.close()  # before the lock goes: a starter then finds no janitor
                if dfd >= 0:
                    os.close(dfd)
        listener.close()

    inode = -1  # the socket file's inode (set by _serve)

    def accept(self) -> None:
        """Take the clients waiting in the backlog, up to 32 a round (nginx's multi_accept).

        One a round let a flood of connections fill the backlog: new clients waited.
        """
        for _ in range(32):
            if not self.accept_one():
                return

    def accept_one(self) -> bool:
        assert self.listener is not None
        try:
            sock, _ = self.listener.accept()
        except BlockingIOError:
            return False
        except OSError as e:
            if e.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                self.pause()
                return False
            return True  # that client is gone (ECONNABORTED): the next one may be there
        try:
            pid, uid = _peer_pid_uid(sock)
            if uid != self.uid:
                raise PermissionError
            sock.setblocking(False)
        except OSError:
            sock.close()
            return True
        try:
            sock.send(_GREETING)
        except OSError:
            pass  # gone while queued: what it sent before it went still counts
        self.open(sock.fileno(), sock, pid)
        self.sel.register(sock, selectors.EVENT_READ, sock.fileno())
        return True

    def pause(self) -> None:
        """Out of descriptors: leave the listener alone until a connection goes or _PAUSE."""
        if self.listener is not None and self.paused_until is None:
            self.sel.unregister(self.listener)
        self.paused_until = time.monotonic() + _PAUSE

    def resume(self) -> None:
        if self.listener is not None and self.paused_until is not None:
            self.sel.register(self.listener, selectors.EVENT_READ, None)
        self.paused_until = None

    def open(self, fd: int, sock: socket.socket | None, pid: int) -> None:
        """A client connected (fd: its key, unique among open connections)."""
        self.conns[fd] = _Conn(sock, pid)

    def read(self, fd: int) -> bool:
        """Read what client fd sent (with the descriptors it passed); whether there was any."""
        sock = self.conns[fd].sock
        assert sock is not None
        fds: list[int] = []
        try:
            # Linux returns the descriptors of one sendmsg at most, with its bytes (or before
            # its last bytes, when the buffer is full): never after the line they belong to.
            data, fds, _, _ = socket.recv_fds(sock, 65536, _MAX_FDS_READ, socket.MSG_CMSG_CLOEXEC)
        except BlockingIOError:
            return False
        except OSError:
            data = b""
        if data:
            self.feed(fd, data, fds)
            return True
        for extra in fds:
            os.close(extra)
        self.close(fd)
        return False

    def feed(self, fd: int, data: bytes, fds: list[int] | tuple[int, ...] = ()) -> None:
        """Bytes that client fd sent (and the descriptors with them): each line is one message."""
        conn = self.conns[fd]
        conn.fds.extend(fds)
        conn.buf += data
        *lines, rest = conn.buf.split(b"\n")
        for line in lines:
            if conn.skip:  # the end of a line too long to be one
                conn.skip = False
                continue
            self.handle(fd, conn, bytes(line))
        if len(rest) > _MAX_LINE:
            conn.skip = True
            rest = bytearray()
        conn.buf = rest
        # A descriptor no line claimed: only the one of a line still incomplete may wait.
        keep = 1 if rest.startswith(b"P ") else 0
        while len(conn.fds) > keep:
            os.close(conn.fds.pop(0))
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
        if kind in _FD_KINDS:
            if _TOKEN_RE.match(name):
                self.handle_fd(fd, conn, kind, name)
            return
        if kind not in _KINDS or not _NAME_RE.match(name):
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
        else:
            entry.flight -= 1
            self.settle(name, entry, clean=True)

    def handle_fd(self, fd: int, conn: _Conn, kind: bytes, token: bytes) -> None:
        """``P token`` (with a descriptor): hold it; ``G token``: hand it over."""
        if kind == b"P":
            if not conn.fds:
                return  # no descriptor came with it
            passed = conn.fds.pop(0)
            try:
                regular = stat.S_ISREG(os.fstat(passed).st_mode)
            except OSError:
                regular = False
            if not regular or token in self.held or len(self.held) >= self.max_held:
                os.close(passed)  # not a memory file, a token again, or full: not held
                return
            self.held[token] = _Held(passed, fd)
            conn.sent.add(token)
            return
        held = self.held.get(token)
        if held is None:
            # Its sender's P may still wait unread on the sender's connection (sent as the
            # sender exited, before its connection closed, but maybe read after this line).
            self.drain(fd)
            held = self.held.get(token)
        self.hand_over(conn, token, held)

    def hand_over(self, conn: _Conn, token: bytes, held: _Held | None) -> None:
        """Answer ``G token``: ``+`` with the descriptor (then no longer held), or ``-``."""
        sock = conn.sock
        try:
            if held is None:
                if sock is not None:
                    sock.send(b"-\n")
                return
            if sock is not None:
                socket.send_fds(sock, [b"+\n"], [held.fd])
        except OSError:
            return  # it does not read: the descriptor stays for a receiver that does
        self.drop(token)

    def drop(self, token: bytes) -> None:
        held = self.held.pop(token)
        os.close(held.fd)
        owner = self.conns.get(held.owner)
        if owner is not None:
            owner.sent.discard(token)

    def drain(self, but: int) -> None:
        """Read every other client's waiting lines now (not again from within)."""
        if self.draining or self.listener is None:
            return
        self.draining = True
        try:
            for key in list(self.conns):
                while key != but and key in self.conns and self.read(key):
                    pass
        finally:
            self.draining = False

    def unlink(self, name: bytes) -> None:
        _unlink(name, self.shm_dir)

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
            self.unlink(name)
        elif not clean and entry.expires is None:
            entry.expires = time.monotonic() + self.grace

    def wait_for_late_receivers(self) -> float:
        """Seconds to wait, with no client left, for a receiver to connect before exiting."""
        held = max((h.expires or 0.0 for h in self.held.values()), default=0.0)
        wait = max(0.0, held - time.monotonic())  # the descriptors' own deadlines
        if any(e.flight > 0 and e.expires is None for e in self.names.values()):
            return max(wait, self.linger)  # sent by a process that exited normally
        return max(wait, self.grace if self.names else 0.2)

    def expire(self) -> None:
        now = time.monotonic()
        for name in [
            n for n, e in self.names.items() if e.expires is not None and e.expires <= now
        ]:
            del self.names[name]
            self.unlink(name)
        while self.expiring and self.expiring[0][0] <= now:
            expires, token = heapq.heappop(self.expiring)
            held = self.held.get(token)
            if held is not None and held.expires == expires:  # not received, nor held anew
                self.drop(token)

    def close(self, fd: int) -> None:
        """Client fd is gone (exited, or killed: the kernel closed its socket)."""
        conn = self.conns.pop(fd)
        if conn.sock is not None:
            self.sel.unregister(conn.sock)
            conn.sock.close()
            self.resume()  # a descriptor is free again
        for extra in conn.fds:
            os.close(extra)
        # Its descriptors still held wait for their receivers: after a normal exit for the
        # linger, after SIGKILL for the grace period (its receivers may be dead too).
        expires = time.monotonic() + (self.linger if conn.clean else self.grace)
        for token in conn.sent:
            self.held[token].expires = expires
            heapq.heappush(self.expiring, (expires, token))
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
            entries = os.listdir(self.shm_dir)
        except OSError:
            return
        for entry in entries:
            if entry.startswith(prefix):
                name = b"/" + os.fsencode(entry)
                if name not in self.names and not any(c.pid == pid for c in self.conns.values()):
                    self.unlink(name)

    def prune(self) -> None:
        """Forget the names their last user unlinked already."""
        gone = [name for name in self.names if not _exists(name, self.shm_dir)]
        for name in gone:
            for fd in self.names.pop(name).conns:
                self.conns[fd].held.discard(name)
        self.limit = max(1024, 2 * len(self.names))


def _serve(fd: int) -> None:
    listener = socket.socket(fileno=fd)
    listener.setblocking(False)  # accept says EAGAIN when the backlog is empty
    janitor = _Janitor(listener, _seconds(GRACE_ENV_VAR, 2.0), _seconds(LINGER_ENV_VAR, 60.0))
    janitor.max_held = _max_held()
    path = listener.getsockname()
    if isinstance(path, str) and path.startswith("/"):
        try:
            janitor.inode = os.lstat(path).st_ino
        except OSError:
            pass
    janitor.run()


def _seconds(variable: str, default: float) -> float:
    try:
        value = float(os.environ.get(variable, default))
    except ValueError:
        return default
    return value if 0.0 <= value < 1e9 else default


def _max_held() -> int:
    """How many descriptors the janitor holds for receivers: half its limit, at most _MAX_HELD."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):
        return 512
    if soft == resource.RLIM_INFINITY:
        return _MAX_HELD
    return max(16, min(_MAX_HELD, soft // 2))


def _raise_descriptor_limit() -> None:
    """Soft RLIMIT_NOFILE up to the hard limit: one descriptor per client process."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard == resource.RLIM_INFINITY:
            hard = 1 << 20
        if soft != resource.RLIM_INFINITY and soft < hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ImportError, OSError, ValueError):
        pass


def main(argv: list[str]) -> int:
    """Entry point: ``_janitor.py FD`` serves the listening socket FD (detached first)."""
    if len(argv) != 2 or not argv[1].isdigit():
        print("usage: _janitor.py FD  (started by pyc10.multiprocessing)", file=sys.stderr)
        return 2
    if os.fork() != 0:  # the starter reaps this process at once; the janitor is init's child
        os._exit(0)
    os.chdir("/")  # hold no directory busy
    _raise_descriptor_limit()
    _serve(int(argv[1]))
    return 0


# ---- the client side (in each process using shared names) -----------------------------------


def _timeout() -> float:
    """Seconds a client waits for a janitor at most (connect, greeting, each send)."""
    return max(0.001, _seconds(TIMEOUT_ENV_VAR, 5.0))


def _owner_uid(handle: bytes) -> int | None:
    """The uid a well-formed handle names (its directory's), or None if it is not one."""
    if not isinstance(handle, bytes) or len(handle) > _MAX_ADDRESS:
        return None
    match = _HANDLE_RE.match(handle)
    return int(match.group(1)) if match else None


def _untrusted_dir(directory: bytes) -> str | None:
    """Why directory may not hold this user's janitor (None: it may, or it does not exist)."""
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"{os.fsdecode(directory)} cannot be checked ({e.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return f"{os.fsdecode(directory)} is not a directory"
    if st.st_uid != os.geteuid():
        return f"{os.fsdecode(directory)} belongs to user {st.st_uid}, not to user {os.geteuid()}"
    if st.st_mode & 0o077:
        return f"{os.fsdecode(directory)} is open to other users (mode {st.st_mode & 0o777:o})"
    return None


def _private_dir() -> bytes:
    """The directory of this user's janitor sockets (mode 0700, made if missing)."""
    uid = os.geteuid()
    bases = []
    runtime = os.fsencode(os.environ.get("XDG_RUNTIME_DIR", "")).rstrip(b"/")
    # only this user's own (not the one sudo kept from the user it was run by)
    if runtime.startswith(b"/") and os.path.isdir(runtime) and _untrusted_dir(runtime) is None:
        bases.append(os.fsdecode(runtime))
    bases.append("/tmp")
    reasons = []
    for base in bases:
        # the usual name first; if another user made it already, a fresh one beside it
        for suffix in ["", *(f"-{os.urandom(8).hex()}" for _ in range(3))]:
            path = os.fsencode(f"{base}/pyc10-janitor-{uid}{suffix}")
            if len(path) + 33 > _MAX_ADDRESS:
                break
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                pass
            except OSError as e:
                reasons.append(f"{base}: {e.strerror}")
                break
            why = _untrusted_dir(path)
            if why is None and os.path.isdir(path):
                return path
            reasons.append(why or f"{os.fsdecode(path)} vanished")
    raise RuntimeError("no private directory for its socket: " + "; ".join(reasons))


def new_address() -> bytes:
    """A fresh janitor address for this user (a socket path in its private directory)."""
    return _private_dir() + b"/" + os.urandom(16).hex().encode()


def check_handle(handle: object) -> None:
    """Raise RuntimeError unless handle is a janitor address this user can trust."""
    uid = _owner_uid(handle)  # type: ignore[arg-type]
    if uid is None:
        raise RuntimeError(
            f"pyc10.multiprocessing: {handle!r} is not the manager handle of a shared memory "
            "janitor; the pickle was not made by pyc10.multiprocessing's file_system strategy"
        )
    assert isinstance(handle, bytes)
    why = (
        f"it is user {uid}'s, not user {os.geteuid()}'s"
        if uid != os.geteuid()
        else _untrusted_dir(os.path.dirname(handle))
    )
    if why is not None:
        raise RuntimeError(
            f"pyc10.multiprocessing: the manager handle {handle!r} names a shared memory "
            f"janitor this process cannot trust: {why}"
        )


class _NotHeldError(Exception):
    """A descriptor could not be passed (too many in flight, no memory); nothing was sent."""


# sendmsg's errors with descriptors that leave the connection as it was
_NOT_PASSED = (errno.ETOOMANYREFS, errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS)


class _NotServedError(Exception):
    """Nobody served this connection yet (no socket, refused, backlog full, closed early).

    Arguments: the errno (None: closed before the greeting) and what to say.
    """


def _greet(sock: socket.socket, address: bytes, deadline: float) -> None:
    """Check that the server at address is this user's janitor (before deadline)."""
    uid = _peer_pid_uid(sock)[1]
    if uid != os.geteuid():
        raise RuntimeError(
            f"the server at {os.fsdecode(address)} runs as user {uid}, not as this "
            f"process's user {os.geteuid()}: refused"
        )
    said = b""
    while len(said) < len(_GREETING):
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        try:
            chunk = sock.recv(len(_GREETING) - len(said))
        except TimeoutError:
            raise RuntimeError(
                f"timed out after {_timeout():g} s waiting for the janitor at "
                f"{os.fsdecode(address)} to answer"
            ) from None
        except OSError as e:
            raise _NotServedError(e.errno, e.strerror) from None
        if not chunk:
            raise _NotServedError(None, "it closed the connection")  # a janitor exiting, or not one
        said += chunk
        if not _GREETING.startswith(said):
            raise RuntimeError(
                f"the server at {os.fsdecode(address)} is not a pyc10 shared memory janitor "
                f"(it said {said[:32]!r})"
            )


def _open(address: bytes, deadline: float) -> socket.socket:
    """A connection to the janitor at address, greeted; _NotServedError if nobody serves it yet."""
    why = _untrusted_dir(os.path.dirname(address))
    if why is not None:
        raise RuntimeError(f"refused: {why}")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)  # never waits: a full backlog says EAGAIN
        try:
            sock.connect(address)
        except (BlockingIOError, ConnectionRefusedError, FileNotFoundError) as e:
            raise _NotServedError(e.errno, e.strerror) from None
        _greet(sock, address, deadline)
        sock.settimeout(_timeout())  # every send has a deadline too
        return sock
    except BaseException:
        sock.close()
        raise


def _start(address: bytes, deadline: float) -> None:
    """Start a janitor at address unless one is listening there already."""
    import subprocess  # here: most processes never start one

    directory = os.path.dirname(address)
    dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if not _lock(dfd, deadline):  # another process of this user is starting it
            return
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            try:
                listener.bind(address)
            except OSError as e:
                if e.errno != errno.EADDRINUSE or _listening(address):
                    return
                os.unlink(address)  # the socket file of a janitor that was killed
                listener.bind(address)
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
    finally:
        os.close(dfd)


def _listening(address: bytes) -> bool:
    """Whether a server listens at address (a socket file refusing connections has none)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.setblocking(False)
        probe.connect(address)
    except BlockingIOError:
        return True  # listening, its backlog full
    except OSError:
        return False
    finally:
        probe.close()
    return True


def _connect(address: bytes) -> socket.socket:
    """A greeted connection to the janitor at address (started if none runs), or RuntimeError."""
    deadline = time.monotonic() + _timeout()
    why = ""
    while True:
        try:
            return _open(address, deadline)
        except _NotServedError as e:
            code, why = e.args
            if code in (errno.ECONNREFUSED, errno.ENOENT):
                try:
                    _start(address, deadline)
                except OSError as failed:
                    raise RuntimeError(f"could not start it: {failed}") from None
        if time.monotonic() >= deadline:
            raise RuntimeError(
                f"timed out after {_timeout():g} s connecting to {os.fsdecode(address)} ({why})"
            )
        time.sleep(0.005)


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
        self.down = False  # gave up on this janitor (warned): the process shares without it

    def _ensure(self, dead: socket.socket | None) -> socket.socket:
        """The live connection; a new one (names registered again) if ``dead`` is current."""
        sock = self.sock
        if sock is not None and sock is not dead:
            return sock
        if sock is not None:
            sock.close()
            self.sock = None
        sock = _connect(self.address)
        self.sock = sock
        hello = b"T\n" if self.creator else b""
        if hello or self.held:
            self._sendall(sock, hello + b"".join(b"R " + n + b"\n" for n in self.held))
        if self.watcher is None or not self.watcher.is_alive():
            watcher = threading.Thread(
                target=self._watch, name="pyc10-shm-janitor-watch", daemon=True
            )
            try:
                watcher.start()
                self.watcher = watcher
            except RuntimeError:
                pass  # the interpreter is shutting down (a hand-over at exit): no need
        return sock

    def _sendall(self, sock: socket.socket, data: bytes, fds: tuple[int, ...] = ()) -> None:
        try:
            if fds:  # the descriptors go with the first bytes: with the line that names them
                try:
                    sent = socket.send_fds(sock, [data], fds)
                except OSError as e:
                    if e.errno in _NOT_PASSED:
                        raise _NotHeldError from None  # the connection itself is fine
                    raise
                data = data[sent:]
            if data:  # (sendall of nothing waits for room, with a timeout set)
                sock.sendall(data)
        except TimeoutError:
            # It does not read: keep the connection (closing it would read as this process's
            # death and unlink its names) and send nothing more.
            raise RuntimeError(
                f"timed out after {_timeout():g} s sending to {os.fsdecode(self.address)}"
            ) from None

    def _watch(self) -> None:
        """Wait on the connection; when the janitor dies, reconnect (restarting it) at once."""
        while True:
            with self.lock:
                sock = None if self.down else self.sock
            if sock is None:
                return
            try:
                data = sock.recv(1)  # the janitor never writes again: returns when it is gone
            except TimeoutError:
                continue
            except OSError:
                data = b""
            if data:
                continue
            with self.lock:
                if self.sock is not sock or self.down:
                    continue  # already replaced (or closed after a fork)
                try:
                    self._ensure(sock)
                except Exception as e:
                    self.down = True
                    _warn(e)
                    return

    def send(self, kind: bytes, name: bytes, fds: tuple[int, ...] = ()) -> bool:
        """Send one line (kind C: a name this process created, registered as R) and fds.

        Whether it was sent (False: this process gave up on this janitor already).
        """
        first = b""
        with self.lock:
            if self.down:
                return False
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
            try:
                sock = self._ensure(None)
                try:
                    self._sendall(sock, line, fds)
                except OSError:  # the janitor died: registered again on the new connection
                    self._sendall(self._ensure(sock), line, fds)
            except _NotHeldError:
                return False
            except Exception:
                self.down = True
                raise
            return True


_lock_clients = threading.Lock()
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
    global _lock_clients, _exiting  # noqa: PLW0603  (per-process state, new in each child)
    _lock_clients = threading.Lock()
    _exiting = False
    for client in _clients.values():
        if client.sock is not None:
            client.sock.close()
    _clients.clear()


if SUPPORTED:
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _client(address: bytes) -> _Client:
    with _lock_clients:
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
        if sock is not None and not client.down:
            try:
                sock.sendall(b"X\n")
            except OSError:
                pass


_tree: tuple[str, bytes] = ("", b"")  # the last (environment value, address) checked


def tree_address() -> bytes:
    """The janitor address of this process tree (made, and put in the environment, on first use)."""
    global _tree  # noqa: PLW0603  (a cache of the check below: it is on every put's path)
    value = os.environ.get(ENV_VAR)
    if value is not None and value == _tree[0]:
        return _tree[1]
    if value is not None:
        address = os.fsencode(value)
        if _owner_uid(address) == os.geteuid():
            _tree = (value, address)
            return address
    address = new_address()
    os.environ[ENV_VAR] = os.fsdecode(address)
    return address


def name_created(name: bytes) -> bytes:
    """The storage hook for a new shared name: register it; the manager handle to report."""
    try:
        address = tree_address()
    except RuntimeError as e:  # no private directory: share unguarded, say so once
        _warn(e)
        return os.fsencode(f"/tmp/pyc10-janitor-{os.geteuid()}/{'0' * 32}")
    _report(address, b"C", name)
    return address


def name_opened(manager_handle: bytes, name: bytes) -> None:
    """The storage hook for a name opened from a pickle: register it with its janitor."""
    if _owner_uid(manager_handle) == os.geteuid():
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


def hand_over(address: bytes, token: bytes, fd: int) -> bool:
    """Pass fd to the janitor at address, held there under token for a receiver (at exit).

    Whether it was passed (not: no janitor could be had, warned once; or too many descriptors
    in flight: that one's receiver then needs its sender, as in torch).
    """
    try:
        return _client(address).send(b"P", token, (fd,))
    except Exception as e:  # the guard failed, not the sharing: say so once, carry on
        _warn(e)
        return False


def fetch_fd(address: bytes, token: bytes) -> int:
    """The descriptor the janitor at address holds under token (then no longer held there).

    RuntimeError saying why if it holds none (a token it was never given, received already,
    or released after its sender exited), or if address is no janitor of this user's.
    """
    if not isinstance(token, bytes) or not _TOKEN_RE.match(token):
        raise RuntimeError(f"{token!r} is not the token of a descriptor held by a janitor")
    check_handle(address)
    deadline = time.monotonic() + _timeout()
    where = os.fsdecode(address)
    try:
        sock = _open(address, deadline)
    except _NotServedError:
        raise RuntimeError(
            f"no janitor runs at {where} any more (it holds a descriptor for "
            f"{LINGER_ENV_VAR} seconds after its sender exits, default 60)"
        ) from None
    except OSError as e:
        raise RuntimeError(f"the janitor at {where} cannot be reached: {e}") from None
    reply, fds = b"", []
    try:
        sock.sendall(b"G " + token + b"\n")
        while not reply.endswith(b"\n") and len(reply) < 16:
            sock.settimeout(max(0.001, deadline - time.monotonic()))
            data, got, _, _ = socket.recv_fds(sock, 16, 4, socket.MSG_CMSG_CLOEXEC)
            fds += got
            if not data:
                break
            reply += data
    except OSError as e:
        for fd in fds:
            os.close(fd)
        why = "timed out" if isinstance(e, TimeoutError) else str(e)
        raise RuntimeError(f"the janitor at {where} did not answer ({why})") from None
    finally:
        sock.close()
    if reply == b"+\n" and len(fds) == 1:
        return fds[0]
    for fd in fds:
        os.close(fd)
    raise RuntimeError(
        f"the janitor at {where} holds no descriptor under token {token.decode()} (it was "
        f"never given one, it was received already, or its sender exited more than "
        f"{LINGER_ENV_VAR} seconds ago)"
    )


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
