"""Fuzzes the shared-memory janitor's protocol (pyc10/multiprocessing/_janitor.py).

    python tests/fuzz/py/fuzz_janitor.py SECONDS [--seed N] [--keep] [--socket-share F]

Replays the kept corpus (tests/fuzz/corpus/janitor/) first, then mutates it for SECONDS, guided by
line coverage of the janitor's module. An input is a script of connections sending bytes
(lines, partial lines, huge lines, invalid UTF-8) and closing, fed to the janitor's protocol
(``_Janitor.open/feed/close``) in this process over a directory of its own standing in for
/dev/shm. After every step the harness checks the janitor against a model of what it may do:

- it never raises, and no step takes longer than a second (no hang);
- a name that a well-behaved client registered and still holds is never unlinked, and a name
  nobody ever mentioned (that no creator's pid names) is never unlinked, not even when the
  janitor exits;
- its state stays bounded and consistent: a connection buffers at most one line (512 bytes), the
  table stays within its limit (twice its live names), every name a connection holds is in the
  table and every connection a name lists is open.

A share of the time (``--socket-share``, default 0.2) goes to a real janitor process: up to 200
connections at once send the inputs' bytes through real sockets and close at random; the janitor
must stay alive, greet a new client within a second, keep a well-behaved client's names, keep its
memory bounded, and exit once its last client is gone.

The module is loaded from this checkout's source (it needs only the standard library), so no
build or install is needed. A finding writes its input to build/fuzz/work/janitor/artifacts/
and exits 1; copy it into the corpus under a name that says what it found once it is fixed.
--keep adds the inputs that reached new lines to the kept corpus. Exits 2 on bad usage.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import random
import shutil
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
SOURCE = ROOT / "pyc10" / "multiprocessing" / "_janitor.py"
CORPUS = ROOT / "tests" / "fuzz" / "corpus" / "janitor"
ARTIFACTS = ROOT / "build" / "fuzz" / "work" / "janitor" / "artifacts"
MAX_INPUT = 4096
SLOTS = 8  # fuzzed connections at once (in process)
HONEST = 1000  # the well-behaved client's key
HONEST_PID = 4_000_001
FUZZ_PID = 4_000_100  # slot i's process id: FUZZ_PID + i
GUARDED = [f"/c10c_{HONEST_PID}_guard{i}".encode() for i in range(3)]
BYSTANDERS = [f"/c10c_4999999_bystander{i}".encode() for i in range(2)]
DICTIONARY = [
    b"R ",
    b"F ",
    b"L ",
    b"P ",  # a descriptor held for a receiver (none comes with the fuzzed bytes: ignored)
    b"G ",  # asks for one (the janitor answers on the connection)
    b"0123456789abcdef0123456789abcdef",  # a token's form
    b"T\n",
    b"X\n",
    b"\n",
    b"\r\n",
    b" ",
    b"/",
    b"/c10c_",
    b"/c10c_4000100_",
    b"/c10c_4000101_x",
    b"\xff\xfe\xc3(",
    b"\0",
    b"..",
    *[b"R " + n + b"\n" for n in GUARDED],
    *[b"F " + n + b"\n" for n in GUARDED],
    *[b"L " + n + b"\n" for n in GUARDED],
]


class FindingError(Exception):
    """The janitor did something it must not: the message says what."""


class SlowError(FindingError):
    """A step took more than a second (a hang, or quadratic work)."""


def load_janitor() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fuzzed_janitor", SOURCE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


J = load_janitor()


# ---- the script an input is ---------------------------------------------------------------


def steps(data: bytes) -> list[tuple[str, int, bytes]]:
    """(what, slot, bytes) steps: send, close, huge (a 100 KB line), prune."""
    out: list[tuple[str, int, bytes]] = []
    i = 0
    while i < len(data):
        op = data[i]
        slot = data[i + 1] % SLOTS if i + 1 < len(data) else 0
        i += 2
        kind = op % 8
        if kind <= 4:
            n = data[i] if i < len(data) else 0
            out.append(("send", slot, data[i + 1 : i + 1 + n]))
            i += 1 + n
        elif kind == 5:
            out.append(("close", slot, b""))
        elif kind == 6:
            fill = bytes([data[i] if i < len(data) else 0x41])
            out.append(("send", slot, fill * 100_000 + (b"\n" if op & 0x80 else b"")))
            i += 1
        else:
            out.append(("prune", slot, b""))
    return out


# ---- in process: the protocol against the model ---------------------------------------------


def mentioned(streams: dict[int, bytearray], name: bytes) -> bool:
    """Whether some client sent an R or F line for name (as far as the bytes alone can say)."""
    return any(k + name + b"\n" in s for s in streams.values() for k in (b"R ", b"F "))


def check(j: Any, shm: str, streams: dict[int, bytearray]) -> None:
    for name in GUARDED:
        if not os.path.exists(shm + name.decode()):
            raise FindingError(f"unlinked {name!r}, which an open client holds")
    for name in BYSTANDERS:
        if not os.path.exists(shm + name.decode()) and not mentioned(streams, name):
            raise FindingError(f"unlinked {name!r}, which nobody registered or sent")
    if len(j.names) > j.limit:
        raise FindingError(f"table of {len(j.names)} names over its limit {j.limit}")
    for fd, conn in j.conns.items():
        if len(conn.buf) > J._MAX_LINE:
            raise FindingError(f"connection buffers {len(conn.buf)} bytes")
        for name in conn.held:
            if fd not in j.names.get(name, J._Entry()).conns:
                raise FindingError(f"connection {fd} holds {name!r}, the table disagrees")
    for name, entry in j.names.items():
        for fd in entry.conns:
            if fd not in j.conns:
                raise FindingError(f"{name!r} lists closed connection {fd}")


def run_in_process(data: bytes) -> None:
    shm = tempfile.mkdtemp(prefix="fuzz-janitor-shm-")
    try:
        for name in [*GUARDED, *BYSTANDERS, f"/c10c_{FUZZ_PID + 1}_x".encode()]:
            Path(shm + name.decode()).touch()
        j = J._Janitor(None, 0.0, 0.0, shm_dir=shm)
        j.open(HONEST, None, HONEST_PID)
        j.feed(HONEST, b"T\n" + b"".join(b"R " + n + b"\n" for n in GUARDED))
        open_slots: set[int] = set()
        streams: dict[int, bytearray] = {}  # what each slot sent, over all its connections
        for what, slot, payload in steps(data):
            started = time.monotonic()
            step(j, what, slot, payload, open_slots=open_slots, streams=streams)
            j.expire()
            if time.monotonic() - started > 1.0:
                raise SlowError(f"a {what} step took {time.monotonic() - started:.1f} s")
            check(j, shm, streams)
        for slot in sorted(open_slots):
            j.close(slot)
            check(j, shm, streams)
        finish(j, shm, streams)
    finally:
        shutil.rmtree(shm, ignore_errors=True)


def step(
    j: Any,
    what: str,
    slot: int,
    payload: bytes,
    *,
    open_slots: set[int],
    streams: dict[int, bytearray],
) -> None:
    if what == "send":
        if slot not in open_slots:
            j.open(slot, None, FUZZ_PID + slot)
            open_slots.add(slot)
            streams.setdefault(slot, bytearray()).extend(b"\n")  # a new stream
        streams[slot] += payload
        j.feed(slot, payload)
    elif what == "close" and slot in open_slots:
        j.close(slot)
        open_slots.discard(slot)
    elif what == "prune":
        j.prune()


def finish(j: Any, shm: str, streams: dict[int, bytearray]) -> None:
    """The well-behaved client goes too; then the janitor's exit unlinks what it still knows."""
    j.close(HONEST)
    j.wait_for_late_receivers()
    for entry in j.names.values():
        if entry.expires is not None:
            entry.expires = 0.0
    j.expire()
    for name in list(j.names):
        j.unlink(name)
    for name in BYSTANDERS:
        if not os.path.exists(shm + name.decode()) and not mentioned(streams, name):
            raise FindingError(f"the exiting janitor unlinked {name!r}, which nobody sent")


# ---- coverage of the janitor's lines --------------------------------------------------------


class Coverage:
    def __init__(self) -> None:
        self.seen: set[tuple[int, int]] = set()
        self.new = 0
        self.file = J.__file__

    def tracer(self, frame: FrameType, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename != self.file:
            return None
        return self.local

    def local(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            key = (frame.f_code.co_firstlineno, frame.f_lineno)
            if key not in self.seen:
                self.seen.add(key)
                self.new += 1
        return self.local

    def run(self, data: bytes) -> bool:
        """Run one input; whether it reached a line not seen before."""
        self.new = 0
        sys.settrace(self.tracer)
        try:
            run_in_process(data)
        except SlowError:
            sys.settrace(None)
            run_in_process(data)  # tracing slows it tenfold: a finding only if slow without
        finally:
            sys.settrace(None)
        return self.new > 0


# ---- mutations ------------------------------------------------------------------------------


def mutate(rng: random.Random, data: bytes, corpus: list[bytes]) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        choice = rng.randrange(8)
        pos = rng.randint(0, len(b))
        if choice == 0 and b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif choice == 1:
            b[pos:pos] = bytes([rng.randrange(256)])
        elif choice == 2 and b:
            del b[pos : pos + rng.randint(1, 8)]
        elif choice == 3:
            b[pos:pos] = rng.choice(DICTIONARY)
        elif choice == 4 and b:
            start = rng.randrange(len(b))
            b[pos:pos] = b[start : start + rng.randint(1, 32)]
        elif choice == 5 and corpus:
            other = rng.choice(corpus)
            b[pos:] = other[rng.randint(0, len(other)) :]
        elif choice == 6:  # a whole step: send a dictionary line on some connection
            line = rng.choice([*DICTIONARY[:5], b"R /c10c_4000101_x\n", b"F /c10c_4000101_x\n"])
            b[pos:pos] = bytes([0, rng.randrange(SLOTS), len(line)]) + line
        elif choice == 7:
            b[pos:pos] = bytes([rng.choice([5, 6, 7, 0x86]), rng.randrange(SLOTS)])
    return bytes(b[:MAX_INPUT])


# ---- a real janitor process over real sockets ----------------------------------------------


def _serving_pid(address: bytes) -> int | None:
    wanted = os.fsdecode(address)
    with open("/proc/net/unix") as f:
        inodes = {
            line.split()[6]
            for line in f.read().splitlines()[1:]
            if line.split()[-1:] == [wanted] and line.split()[3] == "00010000"
        }
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    return int(pid)
        except OSError:
            continue
    return None


def _greeted(address: bytes) -> socket.socket:
    """A new connection, greeted within a second (connect retried while the backlog is full)."""
    deadline = time.monotonic() + 1.0
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            sock.connect(address)
            break
        except BlockingIOError:
            sock.close()
            if time.monotonic() > deadline:
                raise FindingError("the janitor's backlog stayed full for a second") from None
            time.sleep(0.005)
    sock.settimeout(max(0.001, deadline - time.monotonic()))
    said = b""
    while len(said) < len(J._GREETING):
        chunk = sock.recv(64)
        if not chunk:
            break
        said += chunk
    if said != J._GREETING:
        raise FindingError(f"the janitor greeted a new client with {said!r}")
    return sock


def run_socket_round(rng: random.Random, corpus: list[bytes], seconds: float) -> None:
    """Many real connections sending corpus bytes to a real janitor, then its checks."""
    os.environ[J.GRACE_ENV_VAR] = "0.05"
    os.environ[J.LINGER_ENV_VAR] = "0.3"
    address = J.new_address()
    guarded = [f"/c10c_{os.getpid()}_fuzzguard{i}_{address[-8:].decode()}" for i in range(2)]
    for name in guarded:
        Path("/dev/shm" + name).touch()
    honest: socket.socket | None = None
    conns: list[socket.socket] = []
    try:
        J._start(address, time.monotonic() + 5)
        honest = _greeted(address)
        honest.sendall(b"".join(b"R " + n.encode() + b"\n" for n in guarded))
        pid = _serving_pid(address)
        if pid is None:
            raise FindingError("no janitor serves the address it was started at")
        storm(rng, corpus, address, conns, time.monotonic() + seconds)
        _greeted(address).close()  # still serving: a new client is greeted within a second
        with open(f"/proc/{pid}/status") as f:
            rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        if rss > 200_000:
            raise FindingError(f"the janitor grew to {rss} kB")
        for c in conns:
            c.close()
        conns.clear()
        time.sleep(0.1)
        for name in guarded:
            if not os.path.exists("/dev/shm" + name):
                raise FindingError(f"the janitor unlinked {name}, which an open client holds")
        honest.close()
        honest = None
        if not _gone(pid, 10):
            raise FindingError("the janitor did not exit once its last client was gone")
    finally:
        for c in conns:
            c.close()
        if honest is not None:
            honest.close()
        for name in guarded:
            try:
                os.unlink("/dev/shm" + name)
            except OSError:
                pass


def storm(
    rng: random.Random, corpus: list[bytes], address: bytes, conns: list[socket.socket], end: float
) -> None:
    """Up to 200 connections at once, each sending mutated inputs, closing at random."""
    while time.monotonic() < end:
        if len(conns) < 200 and rng.random() < 0.5:
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.setblocking(False)
            try:
                c.connect(address)
                conns.append(c)
            except BlockingIOError:
                c.close()
        if conns:
            c = rng.choice(conns)
            try:
                c.send(mutate(rng, rng.choice(corpus), corpus) if corpus else b"\n")
            except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                pass
            if rng.random() < 0.2:
                conns.remove(c)
                c.close()


def _gone(pid: int, seconds: float) -> bool:
    """Whether process pid exits (or is a zombie) within seconds."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


# ---- the driver -----------------------------------------------------------------------------


def save_finding(data: bytes, error: BaseException) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{type(error).__name__}-{hashlib.sha1(data).hexdigest()}"
    path.write_bytes(data)
    return path


def alarm(signum: int, frame: FrameType | None) -> None:
    raise FindingError("an input ran for more than 10 s (a hang)")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="fuzz_janitor.py", description="Fuzz the shared-memory janitor's protocol."
    )
    parser.add_argument("seconds", type=float, help="how long to mutate after the replay")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: time)")
    parser.add_argument("--keep", action="store_true", help="add new-coverage inputs to corpus")
    parser.add_argument(
        "--socket-share", type=float, default=0.2, help="share of the time on a real janitor"
    )
    args = parser.parse_args(argv)
    if args.seconds < 0 or not 0 <= args.socket_share <= 1:
        parser.error("SECONDS must be >= 0 and --socket-share within [0, 1]")
    if not J.SUPPORTED:
        print("fuzz_janitor: the janitor is Linux only; nothing to do")
        return 0
    seed = args.seed if args.seed is not None else int(time.time() * 1000) % (1 << 32)
    rng = random.Random(seed)
    signal.signal(signal.SIGALRM, alarm)
    cov = Coverage()
    corpus: list[bytes] = []
    files = sorted(CORPUS.iterdir()) if CORPUS.is_dir() else []
    current = b""
    try:
        for path in files:
            current = path.read_bytes()
            signal.alarm(10)
            cov.run(current)
            signal.alarm(0)
            corpus.append(current)
        replayed = len(corpus)
        executions = 0
        kept = 0
        start = time.monotonic()
        in_process_until = start + args.seconds * (1 - args.socket_share)
        while time.monotonic() < in_process_until:
            current = mutate(rng, rng.choice(corpus) if corpus else b"", corpus)
            signal.alarm(10)
            new = cov.run(current)
            signal.alarm(0)
            executions += 1
            if new:
                corpus.append(current)
                if args.keep:
                    CORPUS.mkdir(parents=True, exist_ok=True)
                    (CORPUS / hashlib.sha1(current).hexdigest()).write_bytes(current)
                    kept += 1
        current = b""
        rounds = 0
        while time.monotonic() < start + args.seconds:
            run_socket_round(rng, corpus, min(2.0, start + args.seconds - time.monotonic()))
            rounds += 1
    except Exception as e:  # FindingError, or anything the janitor raised
        signal.alarm(0)
        path = save_finding(current, e)
        print(f"fuzz_janitor: FINDING (seed {seed}): {type(e).__name__}: {e}", file=sys.stderr)
        print(f"fuzz_janitor: input saved as {path}", file=sys.stderr)
        import traceback

        traceback.print_exc()
        return 1
    print(
        f"fuzz_janitor: ok (seed {seed}): replayed {replayed} kept inputs, {executions} "
        f"mutated inputs in process, {rounds} rounds on a real janitor; {len(cov.seen)} lines "
        f"of the janitor reached, {len(corpus)} inputs in corpus"
        + (f", {kept} added to {CORPUS}" if args.keep else "")
    )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:
        sys.exit(0)
