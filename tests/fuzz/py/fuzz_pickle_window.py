"""Fuzzes the protocol-5 window rebuild of pyc10 tensors (pyc10/_pickling.py): untrusted input.

    python tests/fuzz/py/fuzz_pickle_window.py SECONDS [--keep] [--seed N] [--corpus DIR]

Replays every input kept in tests/fuzz/corpus/pickle_window/ first, then mutates pickled
tensors, views and storages for SECONDS: the arguments of the rebuild (window start, storage
size, offset, sizes, strides, dtype, the buffer's length; in band and out of band) and the
pickle's bytes. Each input must either raise an exception (one raised inside pyc10 must be a
pyc10 error, never an AttributeError, KeyError or the like) or load tensors whose every element
lies inside the bytes of their storage, as this harness computes it from sizes, strides and
offsets (its own model, not pyc10's formulas); small ones are read in full. Loading goes through
an unpickler that finds only the globals pyc10.serialization.safe_globals() names (what a
weights-only loader allows), so a mutated pickle calls nothing else. A finding is written to
build/fuzz/work/pickle_window/ and the exit status is 1; --keep adds the inputs with new
outcomes to the corpus. The input that was being loaded when the process died is
build/fuzz/work/pickle_window/last (a crash: copy it into the corpus under a name that says what
it found, after the fix).

An input file: b"PW5" + a byte (the number of out-of-band buffers, n), then n times a 4-byte
little-endian length and the buffer's bytes, then the pickle.
"""

from __future__ import annotations

import faulthandler
import hashlib
import io
import os
import pickle
import pickletools
import random
import re
import struct
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import _harness  # tests/fuzz/py, beside this script

import pyc10
from pyc10 import _pickling
from pyc10._errors import C10Error
from pyc10.serialization import safe_globals

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "tests/fuzz/corpus/pickle_window"
WORK = ROOT / "build/fuzz/work/pickle_window"
MAGIC = b"PW5"
_ALLOWED = {
    (g[0] if isinstance(g, tuple) else g): (g[1] if isinstance(g, tuple) else None)
    for g in safe_globals()
}
GLOBALS = {
    name if name is not None else f"{obj.__module__}.{obj.__qualname__}": obj
    for obj, name in _ALLOWED.items()
}
INTS = [0, 1, -1, 2, 3, 7, 8, 63, 64, 255, 256, 4096, 1 << 20, 1 << 31, 1 << 32, 1 << 62,
        -(1 << 62), (1 << 63) - 1, 1 << 63, -(1 << 63), 1 << 80]  # fmt: skip
DTYPES = ["uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128", "bool", "float8_e4m3fn", "bits16", "x", ""]  # fmt: skip


class Restricted(pickle.Unpickler):
    """pickle's unpickler that finds only pyc10's admitted globals."""

    def find_class(self, module: str, name: str) -> Any:
        found = GLOBALS.get(f"{module}.{name}")
        if found is None:
            raise pickle.UnpicklingError(f"global {module}.{name} is not admitted")
        return found


def encode(data: bytes, buffers: list[bytes]) -> bytes:
    out = bytearray(MAGIC + bytes([len(buffers)]))
    for b in buffers:
        out += struct.pack("<I", len(b)) + b
    return bytes(out + data)


def decode(raw: bytes) -> tuple[bytes, list[bytes]]:
    """The pickle and its buffers (a damaged header: the rest is the pickle, no buffers)."""
    if raw[:3] != MAGIC or len(raw) < 4:
        return raw, []
    n, at = raw[3], 4
    buffers: list[bytes] = []
    for _ in range(n):
        if at + 4 > len(raw):
            return raw[at:], buffers
        (length,) = struct.unpack_from("<I", raw, at)
        buffers.append(raw[at + 4 : at + 4 + length])
        at += 4 + length
    return raw[at:], buffers


# ---- the model: where a tensor's elements are -------------------------------------------------


def span(t: pyc10.Tensor) -> tuple[int, int] | None:
    """The lowest and one past the highest byte address t's elements reach (None: no elements)."""
    sizes, strides = list(t.shape), list(t.stride())
    if any(n == 0 for n in sizes):
        return None
    lo = hi = t.data_ptr()
    for n, s in zip(sizes, strides, strict=True):
        step = (n - 1) * s * t.element_size()
        lo, hi = (lo + step, hi) if step < 0 else (lo, hi + step)
    return lo, hi + t.element_size()


def tensors_in(obj: Any, depth: int = 0) -> list[pyc10.Tensor]:
    if depth > 20:
        return []
    if isinstance(obj, pyc10.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for x in obj[:64] for t in tensors_in(x, depth + 1)]
    if isinstance(obj, dict):
        return [t for x in list(obj.values())[:64] for t in tensors_in(x, depth + 1)]
    return []


def check(raw: bytes) -> str:
    """Loads one input; the outcome's signature, or raises AssertionError on a finding."""
    data, buffers = decode(raw)
    try:
        # a stream pickle itself cannot parse tests CPython, not pyc10; and CPython 3.11's
        # unpickler, told of a counted bytearray larger than it can allocate, frees it with a
        # buffer still exported (a SystemError printed, not raised), which would hide findings
        for _ in pickletools.genops(data):
            pass
    except Exception:
        return "malformed"
    try:
        loaded = Restricted(io.BytesIO(data), buffers=[bytearray(b) for b in buffers]).load()
    except C10Error as e:  # the outcome: the error and its words, without the numbers
        return f"{type(e).__name__}: {re.sub(r'-?[0-9]+', 'N', str(e))[:48]}"
    except Exception as e:  # raised by pickle itself, or a finding if pyc10 raised it
        frames = traceback.extract_tb(e.__traceback__)
        inside = [f for f in frames if "/pyc10/" in f.filename.replace(os.sep, "/")]
        assert not inside, f"pyc10 raised {type(e).__name__}, not a pyc10 error: {e}"
        return f"pickle {type(e).__name__}"
    found = tensors_in(loaded)
    for t in found:
        storage = t.untyped_storage()
        reach = span(t)
        if reach is None:
            continue
        base, end = storage.data_ptr(), storage.data_ptr() + storage.nbytes()
        assert base <= reach[0] and reach[1] <= end, (
            f"tensor bytes [{reach[0] - base}, {reach[1] - base}) outside its storage of "
            f"{storage.nbytes()} bytes (offset {t.storage_offset()}, sizes {tuple(t.shape)}, "
            f"strides {t.stride()}, {t.dtype})"
        )
        if t.numel() <= 4096 and t.dtype.itemsize > 0:
            t.contiguous()  # reads every element
    return f"loaded {len(found)} " + " ".join(str(t.dtype) for t in found[:4])


# ---- inputs ----------------------------------------------------------------------------------


class Edited:
    """Pickles as the window rebuild with edited arguments (the storage reference kept)."""

    def __init__(self, args: list[Any]) -> None:
        self.args = tuple(args)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _pickling._rebuild_tensor_window, self.args


class Slot:
    def __init__(self, nbytes: Any) -> None:
        self.nbytes = nbytes

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _pickling._rebuild_storage_slot, (self.nbytes,)


def dumps(obj: Any, out_of_band: bool) -> bytes:
    bufs: list[pickle.PickleBuffer] = []
    data = pickle.dumps(obj, protocol=5, buffer_callback=bufs.append if out_of_band else None)
    return encode(data, [bytes(memoryview(b)) for b in bufs])


def originals() -> list[Any]:
    base = pyc10.arange(96, dtype=pyc10.int16)
    m = base.view(8, 12)
    return [
        base,
        base[3:20],
        m[1:5, 2:6],
        m.t(),
        base[5:6].expand(3, 2),
        base.view(pyc10.float32)[4:9],
        base.view(pyc10.complex64)[1:3],
        base[7:8].view(()),
        base[4:4],
        [base[10:20], base],
        [m[2:4], m[::2, ::3], base.view(pyc10.uint8)[9:40]],
        base.untyped_storage(),
    ]


def seeds() -> list[bytes]:
    return [dumps(o, oob) for o in originals() for oob in (False, True)]


def structured(rng: random.Random) -> bytes:
    """A tensor's rebuild arguments, some edited; the storage reference's size too, at times."""
    t = rng.choice([o for o in originals() if isinstance(o, pyc10.Tensor)])
    args = list(t.__reduce_ex__(5)[1])
    window = bytes(memoryview(args[1]))
    nbytes: Any = t.untyped_storage().nbytes()
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(1, 8)
        if i == 1:
            cut = rng.randrange(len(window) + 1)
            window = rng.choice([window[:cut], window + bytes(rng.randrange(1, 64)), b""])
        elif i in (2, 3):
            near = args[i] + rng.randint(-9, 9) if type(args[i]) is int else 0
            args[i] = rng.choice([*INTS, near, 1.0, "0", None])
        elif i in (4, 5):
            n = rng.randint(0, 4)
            args[i] = tuple(rng.choice([*INTS, rng.randint(-4, 40)]) for _ in range(n))
            if rng.random() < 0.1:
                args[i] = list(args[i])
        elif i == 6:
            args[6] = rng.choice(DTYPES)
        else:
            near = nbytes + rng.randint(-9, 9) if type(nbytes) is int else 8
            nbytes = rng.choice([*INTS, near, "8"])
    args[0] = Slot(nbytes)
    args[1] = pickle.PickleBuffer(bytearray(window))
    objs: list[Any] = [Edited(args)]
    if rng.random() < 0.3:  # a second window of the same slot (a whole one at times)
        second = list(args)
        if rng.random() < 0.5:
            second[1] = pickle.PickleBuffer(bytearray(rng.randrange(0, 2 * len(window) + 2)))
            second[2] = 0
        objs.append(Edited(second))
    return dumps(objs, rng.random() < 0.5)


def mutate_bytes(rng: random.Random, raw: bytes) -> bytes:
    data, buffers = decode(raw)
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(5)
        if not b:
            break
        at = rng.randrange(len(b))
        if op == 0:
            b[at] = rng.randrange(256)
        elif op == 1:
            b[at] ^= 1 << rng.randrange(8)
        elif op == 2:
            del b[at : at + rng.randint(1, 8)]
        elif op == 3:
            b[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        else:
            b[at : at + 8] = struct.pack("<Q", rng.choice(INTS) & ((1 << 64) - 1))
    if buffers and rng.random() < 0.3:
        i = rng.randrange(len(buffers))
        buffers[i] = buffers[i][: rng.randrange(len(buffers[i]) + 1)]
    return encode(bytes(b), buffers)


# ---- the run ---------------------------------------------------------------------------------


def main() -> int:
    a = _harness.arguments(__doc__, CORPUS)
    _harness.limit_address_space(16 << 30)  # a claimed storage of 2^62 bytes fails to map
    WORK.mkdir(parents=True, exist_ok=True)
    last = WORK / "last"
    crash_log = open(WORK / "crash.txt", "w")  # open while the process lives, for faulthandler
    faulthandler.enable(crash_log)
    seed = a.seed if a.seed is not None else int.from_bytes(os.urandom(4), "little")
    rng = random.Random(seed)
    findings = 0

    def run(raw: bytes) -> str | None:
        nonlocal findings
        last.write_bytes(raw)
        try:
            return check(raw)
        except AssertionError as e:
            findings += 1
            name = WORK / f"finding-{hashlib.sha1(raw).hexdigest()[:16]}"
            name.write_bytes(raw)
            print(f"finding: {e}\n  input: {name}", file=sys.stderr)
            return None

    kept = sorted(a.corpus.glob("*")) if a.corpus.is_dir() else []
    pool = seeds() + [p.read_bytes() for p in kept]
    outcomes = {run(raw) for raw in pool}
    print(f"replayed {len(kept)} kept inputs and {len(pool) - len(kept)} seeds", file=sys.stderr)
    end, runs, new = time.monotonic() + a.seconds, 0, 0
    while time.monotonic() < end:
        raw = structured(rng) if rng.random() < 0.5 else mutate_bytes(rng, rng.choice(pool))
        outcome = run(raw)
        runs += 1
        if outcome is not None and outcome not in outcomes:
            outcomes.add(outcome)
            pool.append(raw)
            new += 1
            if a.keep:
                a.corpus.mkdir(parents=True, exist_ok=True)
                (a.corpus / hashlib.sha1(raw).hexdigest()).write_bytes(raw)
    print(
        f"{runs} inputs in {a.seconds:g} s (seed {seed}): {len(outcomes)} outcomes, {new} new, "
        f"{findings} findings",
        file=sys.stderr,
    )
    last.unlink(missing_ok=True)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
