"""Fuzzes the memory snapshot reader of python -m pyc10.replay: untrusted input.

    python tests/fuzz/py/fuzz_replay.py SECONDS [--keep] [--seed N] [--corpus DIR]

Replays every input kept in tests/fuzz/corpus/replay/ first, then mutates snapshot files for
SECONDS: at the byte level (pickle opcodes, JSON text, the gzip wrapping: bytes changed,
inserted, deleted, cut short, memo references repeated, huge counts and lengths) and at the level
of the snapshot (a field a replay reads, in segments, blocks, trace entries or
allocator_settings, replaced by a huge integer, a wrong type, a deeply nested list, many
references to one object; then pickled with protocol 2, 4 or 5, or written as JSON, gzipped at
times). Each input runs through what ``python -m pyc10.replay FILE`` runs (pyc10.replay.main, in
this process: load, convert, PyTorch's figures, every replay, the table or the JSON result) and
must end in a result (exit status 0) or a refusal: exit status 2 and one line of at most 400
characters. Anything else is a finding: another exception, an input that takes more than 2 s
(SIGALRM raises in the process), one that raises the process's peak memory by more than 512
MiB, a MemoryError (the whole run is limited to 6 GiB of address space). A finding is written to
build/fuzz/work/replay/ and the exit status is 1; --keep adds the inputs with new outcomes to the
corpus. The input that was being read when the process died (a crash, or a hang in C that the
alarm cannot interrupt: the watchdog ends the process after 60 s) is build/fuzz/work/replay/last.
"""

from __future__ import annotations

import contextlib
import copy
import faulthandler
import gzip
import hashlib
import io
import json
import os
import pickle
import random
import re
import resource
import signal
import struct
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import _harness  # tests/fuzz/py, beside this script

from pyc10 import replay

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "tests/fuzz/corpus/replay"
WORK = ROOT / "build/fuzz/work/replay"
PER_INPUT_S = 2.0
PER_INPUT_RSS = 512 << 20
ADDRESS_SPACE = 6 << 30
MAX_INPUT = "4MiB"  # --max-input: what one input may unzip to
MAX_LINE = 400
MIB = 1 << 20
BASE = 1 << 40
INTS = [0, 1, -1, 2, 511, 512, 513, MIB - 1, MIB, MIB + 1, 2 * MIB, 20 * MIB, 1 << 31, 1 << 32,
        1 << 40, 1 << 50, 1 << 62, (1 << 63) - 1, 1 << 63, 1 << 64, -(1 << 63), -(1 << 64),
        10**400]  # fmt: skip
ACTIONS = ["alloc", "free_requested", "free_completed", "segment_alloc", "segment_free",
           "segment_map", "segment_unmap", "oom", "snapshot", "empty_cache", "",
           "ALLOC"]  # fmt: skip
STATES = ["active_allocated", "active_pending_free", "inactive", "", None]
CONFS = ["", "expandable_segments:True", "max_split_size_mb:20", "garbage_collection_threshold:0.6",
         "roundup_power2_divisions:4", "expandable_segments:maybe", "max_split_size_mb:-1",
         "max_split_size_mb:99999999999999999999", ",,,", "x" * 300, "planning:True",
         "plan_file:/nonexistent", "backend:cudaMallocAsync", "pinned_num_register_threads:8",
         "expandable_segments:True,max_split_size_mb:1"]  # fmt: skip


class Overtime(BaseException):
    """Raised by SIGALRM in an input that ran past PER_INPUT_S (BaseException: not caught)."""


class Finding(Exception):  # noqa: N818 - what the harness reports
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise Overtime


# ---- running one input -----------------------------------------------------------------------


def check(raw: bytes, path: Path) -> str:  # noqa: PLR0912 - a branch per way to fail
    """Runs one input as the command runs it; the outcome's signature, or raises Finding."""
    path.write_bytes(raw)
    argv = [str(path), "--max-input", MAX_INPUT]
    digest = hashlib.sha1(raw).digest()
    if digest[0] & 1:
        argv.append("--json")  # half the inputs: the JSON result, the rest the table
    out, err = io.StringIO(), io.StringIO()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10
    signal.setitimer(signal.ITIMER_REAL, PER_INPUT_S)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = replay.main(argv)
    except Overtime:
        raise Finding(f"more than {PER_INPUT_S:g} s on one input") from None
    except MemoryError:
        raise Finding("MemoryError (the run's address space is limited)") from None
    except SystemExit as e:
        raise Finding(f"SystemExit({e.code}): {err.getvalue()[-300:]!r}") from None
    except Exception as e:
        tb = "".join(traceback.format_exception(e)[-6:])
        raise Finding(f"{type(e).__name__} escaped: {str(e)[:300]}\n{tb[-2000:]}") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10) - before
    if grown > PER_INPUT_RSS:
        raise Finding(f"peak memory grew by {grown >> 20} MiB on one input")
    text = err.getvalue()
    if status == 0:
        if out.getvalue() == "":
            raise Finding("exit status 0 and nothing printed")
        if "--json" in argv:
            json.loads(out.getvalue())
        return "result"
    if status != 2:
        raise Finding(f"exit status {status}: {text[-300:]!r}")
    if out.getvalue():
        raise Finding(f"refused, yet printed on stdout: {out.getvalue()[:200]!r}")
    if not text.endswith("\n") or text.count("\n") != 1 or len(text) > MAX_LINE:
        raise Finding(
            f"a refusal of {text.count(chr(10))} lines, {len(text)} chars: {text[:300]!r}"
        )
    words = re.sub(r"0x[0-9a-f]+|-?[0-9]+|'[^']*'|\S*/\S*", "N", text)
    return "refused: " + words[:60]


# ---- seeds -------------------------------------------------------------------------------------


def ev(action: str, addr: int, size: int, stream: int = 0, **extra: Any) -> dict[str, Any]:
    return {"action": action, "addr": addr, "size": size, "stream": stream, "frames": [], **extra}


def segment(addr: int, size: int, blocks: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    seg = {"device": 0, "address": addr, "total_size": size, "allocated_size": 0,
           "active_size": 0, "requested_size": 0, "stream": 0, "segment_type": "large",
           "segment_pool_id": [0, 0], "is_expandable": False, "frames": [],
           "blocks": blocks}  # fmt: skip
    seg.update(extra)
    return seg


def block(addr: int, size: int, state: str, requested: int | None = None) -> dict[str, Any]:
    return {"address": addr, "size": size, "requested_size": size if requested is None else
            requested, "state": state, "frames": []}  # fmt: skip


def settings(conf: str = "", expandable: bool = False) -> dict[str, Any]:
    return {"PYTORCH_CUDA_ALLOC_CONF": conf, "max_split_size": -1,
            "garbage_collection_threshold": 0.0, "expandable_segments": expandable,
            "roundup_power2_divisions": {"1": 0, "2": 0}}  # fmt: skip


def fixed_snapshot() -> dict[str, Any]:
    """Fixed segments: a cached one with a live block, a new one, an empty_cache, a small pool."""
    seg_b, seg_c, small = BASE + 64 * MIB, BASE + 128 * MIB, BASE + 256 * MIB
    trace = [
        ev("alloc", BASE + 3 * MIB, 5 * MIB),
        ev("segment_alloc", seg_b, 40 * MIB),
        ev("alloc", seg_b, 40 * MIB),
        ev("alloc", small, 1000),
        ev("free_requested", BASE, 3 * MIB),
        ev("free_completed", BASE, 3 * MIB),
        ev("free_completed", BASE + 3 * MIB, 5 * MIB),
        ev("free_completed", seg_b, 40 * MIB),
        ev("segment_free", BASE, 20 * MIB),
        ev("segment_free", seg_b, 40 * MIB),
        ev("segment_alloc", seg_c, 30 * MIB, stream=7),
        ev("alloc", seg_c, 30 * MIB - 100, stream=7),
        ev("free_completed", small, 1000),
    ]
    return {
        "segments": [
            segment(
                seg_c,
                30 * MIB,
                [block(seg_c, 30 * MIB, "active_allocated", 30 * MIB - 100)],
                stream=7,
            ),
            segment(small, 2 * MIB, [block(small, 2 * MIB, "inactive")], segment_type="small"),
        ],
        "device_traces": [trace],
        "allocator_settings": settings(),
    }


def expandable_snapshot() -> dict[str, Any]:
    """Expandable segments: page maps and unmaps, and an out-of-memory event."""
    trace = [
        ev("segment_map", BASE + 20 * MIB, 20 * MIB),
        ev("alloc", BASE + 10 * MIB, 25 * MIB),
        ev("oom", 0, 80 * MIB, device_free=4 * MIB),
        ev("free_completed", BASE + 10 * MIB, 25 * MIB),
        ev("segment_unmap", BASE + 20 * MIB, 20 * MIB),
        ev("alloc", BASE + 10 * MIB, 5 * MIB, stream=1),
    ]
    seg = segment(BASE, 20 * MIB, [block(BASE, 10 * MIB, "active_allocated"),
                                   block(BASE + 10 * MIB, 10 * MIB, "active_allocated", 5 * MIB)],
                  is_expandable=True)  # fmt: skip
    return {
        "segments": [seg],
        "device_traces": [[], trace],
        "allocator_settings": settings("expandable_segments:True", True),
    }


def encode(snapshot: Any, how: str) -> bytes:
    if how == "json":
        return json.dumps(snapshot, default=lambda b: b.decode("latin-1")).encode()
    return pickle.dumps(snapshot, protocol=int(how[1:]))


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def seeds() -> list[bytes]:
    out = []
    for snap in (fixed_snapshot(), expandable_snapshot()):
        for how in ("json", "p2", "p4", "p5"):
            out.append(encode(snap, how))
        out.append(gz(encode(snap, "json")))
    return out


def decoded(raw: bytes) -> Any:
    """The snapshot in a seed or kept input (read as the command reads it), or None."""
    tmp = WORK / "decode"
    tmp.write_bytes(raw)
    try:
        return replay.load(str(tmp), 1 << 20)
    except replay.SnapshotError:
        return None


# ---- structure-level mutation ------------------------------------------------------------------

DEEP = "@@deep@@"  # a string an encoder's output has once, replaced by deep nesting
REPEAT = "@@repeat@@"  # replaced by many memo references to one object


def hostile(rng: random.Random) -> Any:
    kind = rng.randrange(12)
    if kind < 4:
        return rng.choice(INTS) + rng.choice([0, 0, 1, -1])
    if kind == 4:
        return rng.choice([1.5, float("nan"), float("inf"), -0.0, True, False, None])
    if kind == 5:
        return rng.choice(["", "0", "alloc", "x" * rng.choice([10, 1000, 100000]), b"\x00\xff"])
    if kind == 6:
        return rng.choice([[], {}, [1, 2], {"a": 1}, (), [[]] * 3, {"size": 1}])
    if kind == 7:
        return DEEP
    if kind == 8:
        return REPEAT
    if kind == 9:
        return list(range(rng.choice([10, 1000, 20000])))
    if kind == 10:
        return rng.choice(ACTIONS + STATES + CONFS)
    return {str(i): i for i in range(rng.choice([3, 500]))}


def fields(snap: Any) -> list[tuple[Any, Any]]:
    """(container, key) of every field a replay reads, and of the containers themselves."""
    found: list[tuple[Any, Any]] = []
    if not isinstance(snap, dict):
        return found
    found += [(snap, k) for k in ("segments", "device_traces", "allocator_settings", "extra")]
    segs = snap.get("segments")
    for seg in segs if isinstance(segs, list) else []:
        if isinstance(seg, dict):
            found += [(seg, k) for k in ("address", "total_size", "device", "stream", "blocks",
                                         "segment_type", "is_expandable")]  # fmt: skip
            for b in seg.get("blocks") if isinstance(seg.get("blocks"), list) else []:
                if isinstance(b, dict):
                    found += [(b, k) for k in ("address", "size", "requested_size", "state")]
    traces = snap.get("device_traces")
    for d, trace in enumerate(traces if isinstance(traces, list) else []):
        found.append((traces, d))
        for e in trace if isinstance(trace, list) else []:
            if isinstance(e, dict):
                found += [(e, k) for k in ("action", "addr", "size", "stream", "device_free")]
    conf = snap.get("allocator_settings")
    if isinstance(conf, dict):
        found += [(conf, k) for k in ("PYTORCH_CUDA_ALLOC_CONF", "max_split_size",
                                      "expandable_segments")]  # fmt: skip
    return found


def edit_structure(rng: random.Random, snap: Any) -> Any:
    snap = copy.deepcopy(snap)
    for _ in range(rng.randint(1, 3)):
        spots = fields(snap)
        if not spots:
            break
        container, key = rng.choice(spots)
        r = rng.random()
        if r < 0.1 and isinstance(container, dict):
            container.pop(key, None)  # a field missing
        elif r < 0.25 and key in ("action", "state", "PYTORCH_CUDA_ALLOC_CONF", "segment_type"):
            container[key] = rng.choice(ACTIONS + STATES + CONFS)
        elif r < 0.35 and isinstance(container.get(key) if isinstance(container, dict) else None,
                                     int):  # fmt: skip
            container[key] += rng.choice([-1, 1, 512, -512, MIB, -MIB, 1 << 40])
        elif r < 0.45 and isinstance(container, dict) and isinstance(container.get(key), list):
            lst = container[key]
            if lst:  # repeat or drop entries (the same objects: memo references in a pickle)
                if rng.random() < 0.5:
                    lst.extend(rng.choice(lst) for _ in range(rng.choice([1, 5, 300])))
                else:
                    del lst[rng.randrange(len(lst)) :]
        else:
            container[key] = hostile(rng)
    return snap


def deep_pickle(n: int) -> bytes:
    """Opcodes that push one list nested n deep (no memo)."""
    return b"]" * n + b"a" * (n - 1)


def repeat_pickle(rng: random.Random) -> bytes:
    """Opcodes that push a list of many references to one big object (memo slot 60000)."""
    inner = rng.choice([b"X" + struct.pack("<I", 100000) + b"a" * 100000,
                        b"]" + b"K\x01a" * 1000 + b"", b"}"])  # fmt: skip
    n = rng.choice([100, 5000, 40000])
    put, get = b"r" + struct.pack("<I", 60000), b"j" + struct.pack("<I", 60000)
    if rng.random() < 0.5:  # a list of references to a list of references to it
        put2, get2 = b"r" + struct.pack("<I", 60001), b"j" + struct.pack("<I", 60001)
        return b"((" + inner + put + get * n + b"l" + put2 + get2 * n + b"l"
    return b"(" + inner + put + get * n + b"l"


def encode_hostile(rng: random.Random, snap: Any) -> bytes:
    how = rng.choice(["json", "json", "p2", "p4", "p5"])
    data = encode(snap, how)
    depth = rng.choice([100, 990, 5000, 200000])
    if how == "json":
        data = data.replace(json.dumps(DEEP).encode(), b"[" * depth + b"]" * depth, 1)
        data = data.replace(json.dumps(REPEAT).encode(), b"[" + b"1e999," * 2000 + b"1]", 1)
    else:
        for marker, make in (
            (DEEP, lambda: deep_pickle(depth)),
            (REPEAT, lambda: repeat_pickle(rng)),
        ):
            text = marker.encode()
            n = len(text)
            op = b"\x8c" + bytes([n]) if how != "p2" else b"X" + struct.pack("<I", n)
            at = data.find(op + text)
            if at >= 0:
                data = data[:at] + make() + data[at + len(op) + n :]
    return gz(data) if rng.random() < 0.2 else data


# ---- byte-level mutation -----------------------------------------------------------------------


def unwrap(raw: bytes) -> tuple[bytes, bool]:
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw), True
        except (OSError, EOFError, zlib_error()):
            return raw, False
    return raw, False


def zlib_error() -> type[Exception]:
    import zlib

    return zlib.error


PICKLE_OPS = [b"r\xff\xff\xff\x7f", b"r\x00\x00\x00\x10", b"q\xff", b"h\x00", b"j\x00\x00\x00\x00",
              b"\x94", b"(", b"0", b"2", b"l", b"t", b"a", b"e", b"s", b"u", b"]", b"}", b")",
              b"\x85", b"N", b"\x88", b"\x89", b"K\xff", b"J\xff\xff\xff\xff",
              b"\x8a\x08" + b"\xff" * 8, b"\x8b\xff\xff\x00\x00" + b"\x01" * 64,
              b"X\xff\xff\xff\x7f", b"\x8d" + b"\xff" * 8, b"\x96" + b"\xff" * 8,
              b"\x95" + b"\xff\xff\xff\x7f\x00\x00\x00\x00", b"B\xff\xff\xff\x7f",
              b"\x8e" + b"\xff" * 8,
              b"L" + b"9" * 5000 + b"L\n", b"I" + b"9" * 5000 + b"\n", b"V" + b"x" * 50 + b"\n",
              b".", b"\x80\x05", b"c__builtin__\nlist\n", b"\x93", b"P0\n", b"Q", b"R", b"b",
              b"\x81", b"\x8f", b"\x90", b"\x97", b"\x98"]  # fmt: skip
JSON_BITS = [b"[", b"]", b"{", b"}", b",", b":", b'"', b"null", b"true", b"1e999", b"-0", b"NaN",
             b"Infinity", b"9" * 5000, b'"\\ud800"', b"\\u0000", b"\xff", b"[" * 3000, b"]" * 10,
             b'"size":', b'"action":"alloc"', b'"addr":', b"1" + b"0" * 400]  # fmt: skip


def mutate_bytes(rng: random.Random, raw: bytes) -> bytes:  # noqa: PLR0912
    data, zipped = unwrap(raw)
    b = bytearray(data)
    is_json = data.lstrip()[:1] in (b"{", b"[")
    for _ in range(rng.randint(1, 4)):
        if not b:
            break
        op = rng.randrange(8)
        at = rng.randrange(len(b))
        if op == 0:
            b[at] = rng.randrange(256)
        elif op == 1:
            b[at] ^= 1 << rng.randrange(8)
        elif op == 2:
            del b[at : at + rng.randint(1, 16)]
        elif op == 3:
            b[at:at] = rng.choice(JSON_BITS if is_json else PICKLE_OPS)
        elif op == 4:
            del b[at:]  # cut short
        elif op == 5:
            b[at : at + 8] = struct.pack("<Q", rng.choice(INTS) & ((1 << 64) - 1))
        elif op == 6 and not is_json:  # a memo reference repeated
            ref = rng.choice([b"h\x00", b"h\x01", b"h\x05", b"j\x02\x00\x00\x00"])
            b[at:at] = ref * rng.choice([2, 100, 3000])
        else:  # a span repeated
            end = min(len(b), at + rng.randint(1, 64))
            b[at:at] = bytes(b[at:end]) * rng.randint(1, 50)
    out = bytes(b)
    r = rng.random()
    if zipped or r < 0.1:
        z = gz(out)
        r2 = rng.random()
        if r2 < 0.2:
            z = z[: rng.randrange(len(z) + 1)]  # a truncated stream
        elif r2 < 0.3:
            z = z + rng.choice([b"\x00" * 8, b"junk", gz(b"{}"), z])  # what follows the member
        elif r2 < 0.4:
            zb = bytearray(z)
            zb[rng.randrange(len(zb))] ^= 1 << rng.randrange(8)
            z = bytes(zb)
        return z
    if r < 0.13:
        return rng.choice([b" \n\t", b"\x1f\x8b", b""]) + out
    return out


def bombs() -> list[bytes]:
    """Inputs that unzip past --max-input, or to white space, or refer to one object a lot."""
    return [
        gz(b" " * (8 << 20)),
        gz(b"{" + b" " * (8 << 20)),
        gz(b"\x00" * (1 << 20)),
        gz(b"[" * 200000 + b"]" * 200000),
        b"\x80\x02N" + b"r\xff\xff\xff\x7f" + b".",  # a memo slot 2^31 - 1: the memo grows to it
        b"\x80\x04\x95" + struct.pack("<Q", 1 << 62) + b"N.",  # a frame larger than the file
        b"\x80\x05\x96" + struct.pack("<Q", 1 << 40) + b"abc.",  # a bytearray of 1 TiB
        b"\x80\x02X" + struct.pack("<I", 0x7FFFFFFF) + b"abc.",
        b"("
        + b"X"
        + struct.pack("<I", 1 << 20)
        + b"a" * (1 << 20)
        + b"q\x00"
        + b"h\x00" * 20000
        + b"l.",
    ]


# ---- the run -----------------------------------------------------------------------------------


def main() -> int:
    a = _harness.arguments(__doc__, CORPUS)
    _harness.limit_address_space(ADDRESS_SPACE)
    signal.signal(signal.SIGALRM, _alarm)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    WORK.mkdir(parents=True, exist_ok=True)
    last = WORK / "last"
    crash_log = open(WORK / "crash.txt", "w")  # open while the process lives, for faulthandler
    faulthandler.enable(crash_log)
    seed = a.seed if a.seed is not None else int.from_bytes(os.urandom(4), "little")
    rng = random.Random(seed)
    findings = 0

    def run(raw: bytes) -> str | None:
        nonlocal findings
        faulthandler.dump_traceback_later(60, exit=True, file=crash_log)
        try:
            return check(raw, last)
        except Finding as e:
            findings += 1
            name = WORK / "artifacts" / f"finding-{hashlib.sha1(raw).hexdigest()[:16]}"
            name.parent.mkdir(exist_ok=True)
            name.write_bytes(raw)
            print(f"finding: {e}\n  input: {name}", file=sys.stderr)
            return None
        finally:
            faulthandler.cancel_dump_traceback_later()

    kept = sorted(a.corpus.glob("*")) if a.corpus.is_dir() else []
    pool = seeds() + [p.read_bytes() for p in kept]
    outcomes = {run(raw) for raw in pool + bombs()}
    print(f"replayed {len(kept)} kept inputs and {len(pool) - len(kept)} seeds", file=sys.stderr)
    snaps = [s for s in (decoded(raw) for raw in pool) if s is not None]
    end, runs, new = time.monotonic() + a.seconds, 0, 0
    while time.monotonic() < end:
        if snaps and rng.random() < 0.5:
            raw = encode_hostile(rng, edit_structure(rng, rng.choice(snaps)))
        else:
            raw = mutate_bytes(rng, rng.choice(pool))
        outcome = run(raw)
        runs += 1
        if outcome is not None and outcome not in outcomes:
            outcomes.add(outcome)
            if len(raw) < 100_000:
                pool.append(raw)
            new += 1
            if a.keep and len(raw) < 100_000:
                a.corpus.mkdir(parents=True, exist_ok=True)
                (a.corpus / hashlib.sha1(raw).hexdigest()[:16]).write_bytes(raw)
    print(
        f"{runs} inputs in {a.seconds:g} s (seed {seed}): {len(outcomes)} outcomes, {new} new, "
        f"{findings} findings",
        file=sys.stderr,
    )
    last.unlink(missing_ok=True)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
