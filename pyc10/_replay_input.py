"""Reading a memory snapshot file for ``python -m pyc10.replay``, whatever the file holds.

Pickle or JSON, either gzipped; at most a given number of bytes after decompression (gzip is
inflated a MiB at a time and stops there, leading white space is not kept, and a file that
begins as neither pickle nor JSON is refused at once); a pickle is read without running anything
in it; every field a replay reads is checked for its type and range. Every failure is a
SnapshotError of one line. Sizes with units (parse_size) for the command line, and the tool's
outputs written whole or not at all (write_atomically).
"""

from __future__ import annotations

import io
import json
import os
import pickle
import pickletools
import re
import secrets
import zlib
from typing import Any


class SnapshotError(ValueError):
    """A file that is not a memory snapshot, or a pickle that carries code."""


class _DataOnly(pickle.Unpickler):
    """Builds only dicts, lists, tuples, strings, bytes, numbers, booleans and None."""

    def find_class(self, module: str, name: str) -> Any:
        raise SnapshotError(
            f"the pickle refers to {module}.{name}: a memory snapshot holds only plain data, "
            "so it was refused without running anything"
        )

    def persistent_load(self, pid: Any) -> Any:
        raise SnapshotError("the pickle refers to a persistent object: refused")


_MAX_INPUT = 256 << 20  # bytes of pickle or JSON (after gunzip) read by default; --max-input


def load(path: str, max_input: int = _MAX_INPUT) -> dict[str, Any]:
    """The snapshot in path (pickle or JSON, either gzipped), checked for what a replay reads.

    At most max_input bytes are read (after decompression, which stops there: a gzip bomb costs
    no more memory than that); every malformed file is a SnapshotError with one line.
    """
    data = _read(path, max_input)
    start = _JSON_START.match(data)
    first = data[start.end() : start.end() + 1] if start else b""
    if first in (b"{", b"[") or (start and start.end() == len(data) and data):
        try:
            snapshot = json.loads(data)
        except (ValueError, RecursionError) as e:  # UnicodeDecodeError is a ValueError
            raise SnapshotError(f"{path} is not a JSON memory snapshot: {_one_line(e)}") from None
    else:
        _scan_pickle(path, data)
        try:
            snapshot = _DataOnly(io.BytesIO(data)).load()
        except SnapshotError:
            raise
        except Exception as e:  # every malformed pickle is one kind of error
            raise SnapshotError(
                f"{path} is not a pickled memory snapshot: {_one_line(e)}"
            ) from None
    _check(snapshot, budget=max(len(data), _MIN_BUDGET))
    checked: dict[str, Any] = snapshot
    return checked


_PUTS = frozenset(("PUT", "BINPUT", "LONG_BINPUT"))


def _scan_pickle(path: str, data: bytes) -> None:
    """Reads the pickle's opcodes without building anything; a SnapshotError for a bad one.

    The unpickler trusts what an opcode claims before it reads what follows: a memo slot's
    number grows the memo to twice that many entries (LONG_BINPUT 2^31 - 1 in a 9-byte file
    asks for 32 GiB, and fills them), and a counted bytearray is allocated at its claimed length
    (and, if that fails, freed with an exported buffer: CPython prints a SystemError). Here every
    length is checked against the bytes that follow it, and a memo slot may be numbered at most
    as high as the file is long (a pickler numbers them from 0, one per object it wrote), so
    what the unpickler allocates grows with the bytes read.
    """
    try:
        for op, arg, _ in pickletools.genops(data):
            if op.name in _PUTS and isinstance(arg, int) and arg > len(data):
                raise SnapshotError(
                    f"{path} is not a pickled memory snapshot: it numbers a memo slot {arg}"
                    f" in {len(data)} bytes (as no pickler does)"
                )
    except SnapshotError:
        raise
    except Exception as e:  # every malformed pickle is one kind of error
        raise SnapshotError(f"{path} is not a pickled memory snapshot: {_one_line(e)}") from None


_JSON_START = re.compile(rb"[ \t\r\n]*")  # JSON may open with white space; a pickle never does


def _one_line(e: BaseException) -> str:
    text = str(e) or type(e).__name__
    return " ".join(text.split())[:300]


def _too_big(path: str, max_input: int, unzipped: bool) -> SnapshotError:
    what = "unzips to" if unzipped else "holds"
    return SnapshotError(
        f"{path} {what} more than {_size_text(max_input)}: not read (a larger snapshot needs"
        " --max-input)"
    )


def _read(path: str, max_input: int, first: tuple[int, ...] | None = None) -> bytes:
    """The file's bytes, gunzipped as a stream that stops past max_input bytes.

    first: the bytes the text may begin with (after white space; default a snapshot's).
    """
    try:
        with open(path, "rb") as f:
            head = f.read(2)
            if head != b"\x1f\x8b":  # not gzip: the file itself, if it is small enough
                data = head + f.read(max_input + 1 - len(head))
                if len(data) > max_input:
                    raise _too_big(path, max_input, False)
                return data
            return _gunzip(path, head, f, max_input, first or _FIRST)
    except OSError as e:
        raise SnapshotError(f"cannot read {path}: {e.strerror or e}") from None


_STEP = 1 << 20  # bytes inflated at a time
_WHITE = b" \t\r\n"
# How a snapshot can begin: JSON's object or array, or a pickle (protocol 2 and later open with
# PROTO, 0x80; protocols 0 and 1 with MARK or EMPTY_DICT)
_FIRST = (ord("{"), ord("["), 0x80, ord("("), ord("}"))


def _next_member(path: str, data: bytes) -> Any:
    if not data.startswith(b"\x1f\x8b") and len(data) >= 2:
        raise SnapshotError(f"{path} has data after its gzip stream")
    return zlib.decompressobj(16 + zlib.MAX_WBITS)


def _gunzip(path: str, head: bytes, f: Any, max_input: int, first: tuple[int, ...]) -> bytes:
    """The gzip stream in f (head: its first bytes, read already), inflated a MiB at a time.

    Past max_input bytes it stops; leading white space is counted but not kept, and the first
    byte after it must be one a snapshot can begin with, so a bomb of zeros or of spaces is
    refused at once or in constant memory.
    """
    chunks: list[bytes] = []
    total = 0
    z = zlib.decompressobj(16 + zlib.MAX_WBITS)  # one gzip member; more follow as gzip allows
    pending = head
    try:
        while True:
            data = pending or f.read(_STEP)
            pending = b""
            if not data:
                break
            while data:
                if z.eof:  # a member ended: another may follow, or zero padding
                    if not data.strip(b"\0"):
                        break
                    z = _next_member(path, data)
                piece = z.decompress(data, min(_STEP, max_input + 1 - total))  # never 0 ("all")
                total += len(piece)
                if total > max_input:
                    raise _too_big(path, max_input, True)
                if not chunks:  # nothing kept yet: skip white space, look at the first byte
                    piece = piece.lstrip(_WHITE)
                    if piece and piece[0] not in first:
                        what = (
                            "no replay CSV" if first is _CSV_FIRST else "neither a pickle nor JSON"
                        )
                        raise SnapshotError(
                            f"{path} unzips to {what} (it begins with {piece[:8]!r}): not a"
                            " memory snapshot"
                        )
                if piece:
                    chunks.append(piece)
                data = z.unconsumed_tail or z.unused_data
    except zlib.error as e:
        raise SnapshotError(f"{path} is not a readable gzip file: {_one_line(e)}") from None
    if not z.eof:
        raise SnapshotError(f"{path} is not a readable gzip file: truncated, it ends in its stream")
    if not chunks:
        raise SnapshotError(f"{path} unzips to nothing but white space: not a memory snapshot")
    return b"".join(chunks)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _describe(v: Any) -> str:
    """The value's type and the first 40 characters of its repr, whatever it holds.

    Never the whole repr first: a field may be a million-digit integer (whose repr Python
    refuses), a list nested 200,000 deep, or 20,000 pickle references to one 1 MiB string.
    """
    if _is_int(v) and v.bit_length() > 128:
        return f"int of {v.bit_length()} bits"
    text = _brief(v, 41)
    return f"{type(v).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


_BRACKETS = {list: "[]", tuple: "()", dict: "{}", set: "{}", frozenset: "{}"}


def _brief(v: Any, room: int) -> str:
    """At most room characters of repr(v), reading no more of v than they show.

    Each level of nesting spends a bracket, so the recursion is at most room deep.
    """
    if room <= 0:
        return ""
    if _is_int(v) and v.bit_length() > 128:
        return f"<int of {v.bit_length()} bits>"[:room]
    if isinstance(v, (str, bytes, bytearray)):
        return repr(v[:room])[:room]
    brackets = next((b for t, b in _BRACKETS.items() if isinstance(v, t)), None)
    if brackets is None:
        return repr(v)[:room]  # None, bools, floats and small ints: short
    text = brackets[0]
    items = iter(v.items()) if isinstance(v, dict) else iter(v)
    for i, item in enumerate(items):
        if len(text) >= room:
            return text[:room]
        if i:
            text += ", "
        if isinstance(v, dict):
            text += _brief(item[0], room - len(text)) + ": "
            text += _brief(item[1], room - len(text))
        else:
            text += _brief(item, room - len(text))
    return (text + brackets[1])[:room]


def _want_int(where: str, d: dict[str, Any], key: str, required: bool = True) -> None:
    if key not in d:
        if required:
            raise SnapshotError(f"not a memory snapshot: {where} has no {key!r}")
        return
    v = d[key]
    if not _is_int(v) or not 0 <= v < 1 << 63:  # what the C side's int64 and size_t hold
        raise SnapshotError(
            f"not a memory snapshot: {where}'s {key!r} is {_describe(v)}, not a count of bytes"
            if key not in {"stream", "device"}
            else f"not a memory snapshot: {where}'s {key!r} is {_describe(v)}, not an integer"
        )


def _want_stream(where: str, d: dict[str, Any]) -> None:
    v = d.get("stream", 0)
    if not _is_int(v) or not -(1 << 63) <= v < 1 << 63:  # a stream id is an int64
        raise SnapshotError(
            f"not a memory snapshot: {where}'s 'stream' is {_describe(v)}, not a stream id"
        )


_MIN_BUDGET = 1 << 16


class _Budget:
    """The objects a check may walk: one per byte read (any object torch writes takes more).

    A pickle refers to an object it wrote already in two bytes, so a 16 KB file can hold a list
    of 4,000 references to a list of 4,000 references: 16 million objects to walk, and as many
    for the replay after the check. Counting every object walked (repeats too) against the bytes
    read keeps the work linear in the file.
    """

    def __init__(self, limit: int | None) -> None:
        self.left = limit

    def spend(self, n: int) -> None:
        if self.left is None:
            return
        self.left -= n
        if self.left < 0:
            raise SnapshotError(
                "not a memory snapshot: the file refers to the same objects over and over "
                "(more objects to read than it has bytes), as torch never writes one"
            )


def _check(snapshot: Any, budget: int | None = None) -> None:
    """Every field a replay reads has its type: a SnapshotError names the first that does not.

    budget (load's: the bytes read) bounds the objects walked, repeats included (_Budget).
    """
    if (
        isinstance(snapshot, list)
        and snapshot
        and all(isinstance(s, dict) and "blocks" in s for s in snapshot)
    ):
        raise SnapshotError(
            "not a memory snapshot with a trace: a list of segments, as"
            " torch.cuda.memory_snapshot() returns, records no allocations to replay"
            " (torch.cuda.memory._record_memory_history, then _dump_snapshot)"
        )
    if not isinstance(snapshot, dict):
        raise SnapshotError(
            f"not a memory snapshot: no 'segments' list (the file holds a"
            f" {type(snapshot).__name__}, not a dict)"
        )
    if not isinstance(snapshot.get("segments"), list):
        raise SnapshotError("not a memory snapshot: no 'segments' list")
    traces = snapshot.get("device_traces")
    if not isinstance(traces, list) or not all(isinstance(t, list) for t in traces):
        raise SnapshotError("not a memory snapshot: no 'device_traces' list of lists")
    spend = _Budget(budget).spend
    _check_segments(snapshot["segments"], spend)
    _check_traces(traces, spend)


def _check_segments(segments: list[Any], spend: Any) -> None:
    spend(len(segments))
    for i, seg in enumerate(segments):
        where = f"segment {i}"
        if not isinstance(seg, dict):
            raise SnapshotError(f"not a memory snapshot: {where} is {_describe(seg)}, not a dict")
        _want_int(where, seg, "address")
        _want_int(where, seg, "total_size")
        _want_int(where, seg, "device", required=False)
        _want_stream(where, seg)
        if not isinstance(seg.get("blocks"), list):
            got = _describe(seg["blocks"]) if "blocks" in seg else "missing"
            raise SnapshotError(f"not a memory snapshot: {where}'s 'blocks' is {got}, not a list")
        spend(len(seg["blocks"]))
        for j, b in enumerate(seg["blocks"]):
            bwhere = f"segment {i}'s block {j}"
            if not isinstance(b, dict):
                raise SnapshotError(f"not a memory snapshot: {bwhere} is {_describe(b)}")
            _want_int(bwhere, b, "size")
            _want_int(bwhere, b, "address", required=False)
            _want_int(bwhere, b, "requested_size", required=False)


def _check_traces(traces: list[list[Any]], spend: Any) -> None:
    spend(len(traces))
    for d, trace in enumerate(traces):
        spend(len(trace))
        for k, e in enumerate(trace):
            where = f"device {d}'s trace entry {k}"
            if not isinstance(e, dict):
                raise SnapshotError(f"not a memory snapshot: {where} is {_describe(e)}")
            if not isinstance(e.get("action"), str):
                got = _describe(e["action"]) if "action" in e else "missing"
                raise SnapshotError(f"not a memory snapshot: {where}'s 'action' is {got}")
            # torch's oom entries name the device's free bytes instead of an address
            _want_int(where, e, "device_free" if e["action"] == "oom" else "addr")
            _want_int(where, e, "size")
            _want_stream(where, e)


def _size_text(n: int) -> str:
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.2f} {unit}"
    return f"{n} bytes"


_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 1 << 10,
    "mib": 1 << 20,
    "gib": 1 << 30,
    "tib": 1 << 40,
}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([A-Za-z]*)\s*")


def parse_size(text: str) -> int:
    """Bytes from "80GiB", "80GB", "512MiB", "1.5TiB" or a plain count of bytes.

    KB, MB, GB, TB are powers of 1000 and KiB, MiB, GiB, TiB powers of 1024 (either case); the
    result is a positive whole number of bytes. ValueError otherwise.
    """
    m = _SIZE.fullmatch(text)
    unit = m.group(2).lower() if m else ""
    if m is None or unit not in _UNITS or (unit in ("", "b") and "." in m.group(1)):
        raise ValueError(
            f"{text!r} is not a size: a number of bytes, or a number with a unit"
            " (KB, MB, GB, TB: powers of 1000; KiB, MiB, GiB, TiB: powers of 1024)"
        )
    number = m.group(1)
    whole, _, frac = number.partition(".")
    scale = _UNITS[unit]
    n = int(whole) * scale + (int(frac) * scale // 10 ** len(frac) if frac else 0)
    if n <= 0:
        raise ValueError(f"{text!r}: a size must be at least 1 byte")
    return n


# The replay CSV of bench/replay_trace (RMM's columns plus Step, Tag and Phase): the actions a
# simulated device replays; record_stream and enqueue (work on streams) are read and ignored.
_CSV_FIRST = tuple(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")  # a header's name
_CSV_ACTIONS = ("allocate", "free", "empty_cache", "step_begin", "record_stream", "enqueue")


def is_csv(path: str) -> bool:
    """Whether path names a replay CSV (.csv or .csv.gz) rather than a snapshot."""
    return path.endswith((".csv", ".csv.gz"))


def load_csv(path: str, max_input: int = _MAX_INPUT) -> list[tuple[str, int, int, int, int]]:
    """The rows of a replay CSV as (action, pointer, size, stream, step), checked.

    The header names the columns (Action, Pointer and Size required; Stream and Step optional);
    Pointer is hexadecimal, Size and Step decimal, Stream any integer; rows of other actions and
    blank lines are skipped. Every malformed file is a SnapshotError of one line.
    """
    data = _read(path, max_input, _CSV_FIRST)
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise SnapshotError(f"{path} is not a replay CSV: it is not ASCII text") from None
    lines = text.splitlines()
    header = [c.strip() for c in lines[0].split(",")] if lines else []
    missing = [c for c in ("Action", "Pointer", "Size") if c not in header]
    if missing:
        raise SnapshotError(
            f"{path} is not a replay CSV: its header names no {', '.join(missing)} column"
        )
    col = {name: k for k, name in enumerate(header)}
    rows: list[tuple[str, int, int, int, int]] = []
    for n, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split(",")
        if len(cells) < len(header):
            cells += [""] * (len(header) - len(cells))
        action = cells[col["Action"]].strip()
        if action not in _CSV_ACTIONS:
            continue
        try:
            pointer = int(cells[col["Pointer"]].strip() or "0", 16)
            size = int(cells[col["Size"]].strip() or "0")
            stream = int(cells[col["Stream"]].strip() or "0", 0) if "Stream" in col else 0
            step = int(cells[col["Step"]].strip() or "0") if "Step" in col else 0
        except ValueError:
            raise SnapshotError(f"{path} line {n}: a malformed number in {line[:80]!r}") from None
        if size < 0 or step < 0 or pointer < 0:
            raise SnapshotError(f"{path} line {n}: a negative number in {line[:80]!r}")
        rows.append((action, pointer, size, stream, step))
    return rows


def write_atomically(path: str, data: bytes) -> None:
    """Writes data to path through a temporary file in the same folder and os.replace.

    path then holds either its old content or all of data, never part of it; on failure the
    temporary file is removed and the OSError raised.
    """
    folder, base = os.path.split(os.path.abspath(path))
    for _ in range(100):
        tmp = os.path.join(folder, f".{base}.{secrets.token_hex(6)}.tmp")
        try:
            # O_EXCL: never another's file; 0o666 through the umask: the modes of a plain open()
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError(f"no free temporary name beside {path}")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
