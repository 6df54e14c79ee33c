"""The differential engine beyond the signature table: public names implemented outside it.

``_difftest.py`` generates calls from pyc10/_ext/signatures.h. What users also call, and the
table does not describe, is listed here as probes: module functions and classes written in
Python (promote_types, can_cast, set_default_dtype, device, finfo, Size, the storage classes...)
and the methods, dunders and property setters of Tensor, Size, the storages, device and dtype
that torch also has. A probe gives one right call (its arguments are inputs, never expected
outputs); the engine derives the others from it: each positional argument replaced by each value
of a pool of wrong types (None, str, float, list, bool, int, a tensor, a dtype, a device, a
layout, a dict), each passed by keyword (names read from torch's own Python signature where it
has one), one positional too many, one too few, none at all, and an unknown keyword. Every call
runs on pyc10 and on torch; torch is the oracle. They must agree in acceptance, result kind,
exception class (pyc10's must be an instance of the builtin class torch raises) and, for
TypeError and ValueError, message (``pyc10.`` read as ``torch.``).

A probe whose right call fails on either library (a method pyc10 does not implement, such as
the math it leaves to torch) is not compared: ``skipped`` lists it.

Run ``python _difftest_api.py`` (with pyc10 importable) for a count and every disagreement.
"""

from __future__ import annotations

import contextlib
import inspect
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from _difftest import (
    T0,
    Attr,
    Disagreement,
    Outcome,
    SizeV,
    St,
    T,
    _names,
    compare,
    materialize,
)


@dataclass(frozen=True)
class Dev:
    """lib.device(spec)."""

    spec: str

    def __repr__(self) -> str:
        return f"device({self.spec!r})"


@dataclass(frozen=True)
class TSt:
    """lib.<name>Storage(n): a legacy typed storage of n elements."""

    name: str
    n: int

    def __repr__(self) -> str:
        return f"{self.name}({self.n})"


def _mat(lib: Any, v: Any) -> Any:
    if isinstance(v, Dev):
        return lib.device(v.spec)
    if isinstance(v, TSt):
        return getattr(lib, v.name)(v.n)
    if isinstance(v, tuple):
        return tuple(_mat(lib, x) for x in v)
    if isinstance(v, list):
        return [_mat(lib, x) for x in v]
    if isinstance(v, dict):
        return {k: _mat(lib, x) for k, x in v.items()}
    return materialize(lib, v)


#: receivers of methods, by the name a probe's path starts with
RECEIVERS: dict[str, Any] = {
    "T": T((2, 3)),
    "T1": T((1,)),  # one element: __bool__, __int__, item()...
    "TI": T0(3),  # a 0-dim int64 tensor: __index__
    "Size": SizeV((2, 3)),
    "US": St(T((4,))),
    "TS": TSt("FloatStorage", 4),
    "device": Dev("cpu"),
    "dtype": Attr("float32"),
}

#: wrong values tried in place of each positional argument
WRONG: list[tuple[str, Any]] = [
    ("None", None), ("str", "a"), ("float", 1.5), ("list", [1]), ("bool", True), ("int", 7),
    ("tensor", T((2,))), ("dtype", Attr("float32")), ("device", Dev("cpu")),
    ("layout", Attr("strided")), ("dict", {}),
]  # fmt: skip


@dataclass
class Probe:
    """One right call: a path (``lib.name``, ``<receiver>.name`` or ``<receiver>.name=`` for a
    property setter), positional arguments and keyword arguments."""

    path: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


def _p(path: str, *args: Any, **kwargs: Any) -> Probe:
    return Probe(path, args, kwargs)


F32, I64 = Attr("float32"), Attr("int64")

PROBES: list[Probe] = [
    # module functions and classes written in Python or outside the table
    _p("lib.promote_types", F32, I64),
    _p("lib.can_cast", F32, I64),
    _p("lib.is_tensor", T((2,))),
    _p("lib.is_storage", St(T((2,)))),
    _p("lib.typename", T((2,))),
    _p("lib.get_default_dtype"),
    _p("lib.set_default_dtype", Attr("float64")),
    _p("lib.get_default_device"),
    _p("lib.set_default_device", "cpu"),
    _p("lib.broadcast_shapes", (2, 1), (1, 3)),
    _p("lib.split", T((4, 2)), 2, 0),
    _p("lib.set_printoptions", 4),
    _p("lib.from_dlpack", T((2,))),
    _p("lib.device", "cpu", 0),
    _p("lib.device", "cpu"),
    _p("lib.finfo", F32),
    _p("lib.iinfo", Attr("int32")),
    _p("lib.Size", (2, 3)),
    _p("lib.UntypedStorage", 4),
    _p("lib.FloatStorage", 4),
    _p("lib.LongStorage", 3),
    _p("lib.TypedStorage", 4, dtype=F32),
    # Tensor dunders, methods and setters outside the table
    _p("T.__len__"),
    _p("T.__getitem__", 0),
    _p("T.__setitem__", 0, 1.0),
    _p("T1.__bool__"),
    _p("T1.__int__"),
    _p("T1.__float__"),
    _p("T1.__complex__"),
    _p("TI.__index__"),
    _p("T.__iter__"),
    _p("T.__reversed__"),
    _p("T.__array__"),
    _p("T.__array__", np.float64),
    _p("T.__dlpack__"),
    _p("T.__dlpack_device__"),
    _p("T.__reduce_ex__", 2),
    _p("T.__deepcopy__", {}),
    _p("T.__format__", ""),
    _p("T1.__format__", ".2f"),
    _p("T.__repr__"),
    _p("T.__sizeof__"),
    _p("T.__eq__", T((2, 3))),
    _p("T.dim"),
    _p("T.ndimension"),
    _p("T.element_size"),
    _p("T.get_device"),
    _p("T.is_complex"),
    _p("T.is_conj"),
    _p("T.is_neg"),
    _p("T.is_floating_point"),
    _p("T.is_inference"),
    _p("T.is_signed"),
    _p("T1.is_nonzero"),
    _p("T1.item"),
    _p("T.nelement"),
    _p("T.numel"),
    _p("T.storage_offset"),
    _p("T.tolist"),
    _p("T.untyped_storage"),
    _p("T.zero_"),
    _p("T.data_ptr"),
    _p("T.const_data_ptr"),
    _p("T.detach"),
    _p("T.detach_"),
    _p("T.conj"),
    _p("T.adjoint"),
    _p("T.resolve_conj"),
    _p("T.resolve_neg"),
    _p("T.t"),
    _p("T.t_"),
    _p("T.ravel"),
    _p("T.dim_order"),
    _p("T.is_pinned"),
    _p("T.is_shared"),
    _p("T.storage"),
    _p("T.storage_type"),
    _p("T.data=", T((2, 3))),
    _p("T.requires_grad=", False),
    # Size
    _p("Size.numel"),
    _p("Size.__getitem__", 0),
    _p("Size.__add__", (1,)),
    _p("Size.__radd__", (1,)),
    _p("Size.__reduce__"),
    # storages
    _p("US.size"),
    _p("US.nbytes"),
    _p("US.element_size"),
    _p("US.tolist"),
    _p("US.clone"),
    _p("US.cpu"),
    _p("US.get_device"),
    _p("US.is_pinned"),
    _p("US.is_shared"),
    _p("US.resizable"),
    _p("US.type"),
    _p("US.untyped"),
    # US.new(): torch 2.13 crashes (SIGSEGV) on a storage from from_numpy; not probed
    _p("US.__len__"),
    _p("US.__getitem__", 0),
    _p("US.__setitem__", 0, 1),
    _p("US.__deepcopy__", {}),
    _p("US.__reduce_ex__", 2),
    _p("US.byteswap", F32),
    _p("US.to", device="cpu"),
    _p("TS.size"),
    _p("TS.nbytes"),
    _p("TS.element_size"),
    _p("TS.tolist"),
    _p("TS.clone"),
    _p("TS.cpu"),
    _p("TS.get_device"),
    _p("TS.is_shared"),
    _p("TS.resizable"),
    _p("TS.type"),
    _p("TS.untyped"),
    _p("TS.fill_", 1.0),
    _p("TS.copy_", TSt("FloatStorage", 4)),
    _p("TS.resize_", 3),
    _p("TS.__len__"),
    _p("TS.__getitem__", 0),
    _p("TS.__setitem__", 0, 1.0),
    _p("TS.__deepcopy__", {}),
    _p("TS.__reduce_ex__", 2),
    # device and dtype
    _p("device.__reduce_ex__", 2),
    _p("device.__repr__"),
    _p("dtype.to_complex"),
    _p("dtype.to_real"),
    _p("dtype.__reduce_ex__", 2),
    _p("dtype.__repr__"),
]


@dataclass
class Call:
    """One generated call of a probe."""

    probe: Probe
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    what: str

    @property
    def desc(self) -> str:
        """The call as text, e.g. ``lib.promote_types(None, lib.float32)``."""
        path = self.probe.path
        if path.endswith("="):
            return f"{path[:-1]} = {self.args[0]!r}" if self.args else f"{path[:-1]} = <none>"
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"{path}({', '.join(parts)})"


def _target(lib: Any, path: str) -> tuple[Any, Any, str]:
    """(owner, receiver or None, attribute name) of a probe's path on lib."""
    head, name = path.rstrip("=").split(".", 1)
    if head == "lib":
        return lib, None, name
    receiver = _mat(lib, RECEIVERS[head])
    return receiver, receiver, name


def param_names(probe: Probe) -> list[str] | None:
    """torch's names of probe's positional parameters, where torch's callable has a Python
    signature (its C functions have none)."""
    import torch

    if probe.path.endswith("="):
        return None
    owner, _, name = _target(torch, probe.path)
    try:
        sig = inspect.signature(getattr(owner, name))
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD,)
    names = [p.name for p in sig.parameters.values() if p.kind in kinds]
    return names if len(names) >= len(probe.args) else None


def generate(probe: Probe) -> list[Call]:
    """Every call derived from probe (deduplicated by text)."""
    args, kw = probe.args, probe.kwargs
    calls = [Call(probe, args, kw, "right call")]
    if probe.path.endswith("="):
        calls += [Call(probe, (v,), {}, f"wrong type {label}") for label, v in WRONG]
        return calls
    for i in range(len(args)):
        for label, v in WRONG:
            calls.append(Call(probe, (*args[:i], v, *args[i + 1 :]), kw, f"arg {i}: {label}"))
    names = param_names(probe)
    if names:
        for i in range(len(args)):
            by_kw = {**dict(zip(names[i:], args[i:], strict=False)), **kw}
            calls.append(Call(probe, args[:i], by_kw, f"keyword from {i}"))
            calls.append(Call(probe, args[: i + 1], {names[i]: args[i], **kw}, f"twice {i}"))
    calls.append(Call(probe, (*args, 0), kw, "one too many positional"))
    calls.append(Call(probe, (*args, 0, 0, 0), kw, "three too many positional"))
    if args:
        calls.append(Call(probe, args[:-1], kw, "one too few positional"))
        calls.append(Call(probe, (), kw, "no positional"))
    calls.append(Call(probe, args, {**kw, "foo": 1}, "unknown keyword"))
    seen: set[str] = set()
    out = []
    for c in calls:
        if c.desc not in seen:
            seen.add(c.desc)
            out.append(c)
    return out


# ---- running and comparing ----

_STATE: list[Any] = []


@contextlib.contextmanager
def _restored(lib: Any) -> Any:
    """Put back the global state a probe may change (default dtype and device, print options)."""
    dtype, device = lib.get_default_dtype(), lib.get_default_device()
    try:
        yield
    finally:
        lib.set_default_dtype(dtype)
        lib.set_default_device(None if str(device) == "cpu" else device)
        lib.set_printoptions(profile="default")


def kind(lib: Any, r: Any) -> Any:
    """What a result is: its type's name (library prefixes dropped) and, for the small values
    whose text is the same in both libraries, the value."""
    name = type(r).__name__
    if isinstance(r, lib.Tensor):
        return ("Tensor", tuple(r.shape), str(r.dtype).rsplit(".", 1)[-1])
    if isinstance(r, lib.dtype | lib.device | lib.Size | bool | str) or r is None:
        return (name, _names(str(r)))
    if isinstance(r, tuple):
        return (name, len(r))
    return (name,)


def run_on(lib: Any, call: Call) -> Outcome:
    """Run call on lib (on a fresh receiver, global state restored after)."""
    with _restored(lib), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage's deprecation warning
        try:
            owner, _, name = _target(lib, call.probe.path)
            args = _mat(lib, call.args)
            kwargs = _mat(lib, call.kwargs)
            if call.probe.path.endswith("="):
                setattr(owner, name, *args)
                return Outcome(result=("set",))
            r = getattr(owner, name)(*args, **kwargs)
            if call.probe.path.endswith("__iter__"):
                r = list(r)
            return Outcome(result=kind(lib, r))
        except Exception as e:
            return Outcome(exc=e)


def comparable(probe: Probe, pyc10: Any, torch: Any) -> bool:
    """Whether probe's right call succeeds on both libraries."""
    right = generate(probe)[0]
    return run_on(pyc10, right).exc is None and run_on(torch, right).exc is None


def run_probe(probe: Probe, pyc10: Any, torch: Any) -> tuple[int, list[Disagreement]]:
    """Run every call of probe; the number of checks and the disagreements."""
    calls = generate(probe)
    out = []
    for c in calls:
        ours, theirs = run_on(pyc10, c), run_on(torch, c)
        what = compare(ours, theirs, (TypeError, ValueError))
        if what is not None:
            out.append(Disagreement(c, what, ours, theirs))
    return len(calls), out


def main() -> None:
    """Print the count of checks and every disagreement."""
    import torch

    import pyc10

    total = bad = 0
    for probe in PROBES:
        if not comparable(probe, pyc10, torch):
            print(f"{probe.path}: skipped (the right call fails on one library)")
            continue
        n, dis = run_probe(probe, pyc10, torch)
        total += n
        bad += len(dis)
        print(f"{probe.path}: {n} checks, {len(dis)} disagree")
        for d in dis:
            print("  " + str(d).replace("\n", "\n  "))
    print(f"total {total} checks, {total - bad} agree, {bad} disagree")


if __name__ == "__main__":
    main()
