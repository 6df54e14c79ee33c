"""The differential engine: calls generated from the signature table, run on pyc10 and torch.

For every signature of a table entry (``_signatures.read_table``) it generates calls: all
positional, all keyword, defaults omitted, each accepted form of each parameter type, wrong
types (for ints and int lists: floats and numpy floats, bools, None, 0-dim and 1-dim ndarrays,
float and 1-dim tensors, as whole values, as list elements and spread as varargs), wrong arity
and out-of-range values. ``run_entry`` runs each call on both libraries and
returns the disagreements in acceptance, result (tensors by shape, stride, storage offset, dtype,
values and identity with self), exception class (pyc10's must be an instance of the builtin class
torch raises) and, for TypeError, message (``pyc10.`` read as ``torch.``).

Run ``python _difftest.py`` (with pyc10 importable) for a count and every disagreement.
"""

from __future__ import annotations

import atexit
import math
import os
import tempfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from _signatures import Entry, Param, Signature, read_table

# ---- abstract argument values, materialized per library ----


@dataclass(frozen=True)
class T:
    """A tensor made from np.arange over shape (same numpy data for both libraries)."""

    shape: tuple[int, ...]
    dtype: str = "float32"

    def __repr__(self) -> str:
        dt = "" if self.dtype == "float32" else f", {self.dtype}"
        return f"T({', '.join(map(str, self.shape))}{dt})"


@dataclass(frozen=True)
class T0:
    """A 0-dim int64 tensor holding value."""

    value: int

    def __repr__(self) -> str:
        return f"tensor({self.value})"


@dataclass(frozen=True)
class Buf:
    """A fresh bytearray of n bytes (a writable buffer for frombuffer and asarray)."""

    n: int

    def __repr__(self) -> str:
        return f"bytearray({self.n})"


@dataclass(frozen=True)
class NpInt:
    """numpy.int64(value)."""

    value: int

    def __repr__(self) -> str:
        return f"np.int64({self.value})"


@dataclass(frozen=True)
class NpFloat:
    """numpy.float64(value)."""

    value: float

    def __repr__(self) -> str:
        return f"np.float64({self.value})"


@dataclass(frozen=True)
class Arr0:
    """A 0-dim numpy ndarray (int64) holding value."""

    value: int

    def __repr__(self) -> str:
        return f"ndarray({self.value})"


@dataclass(frozen=True)
class TF0:
    """A 0-dim float32 tensor holding value."""

    value: float

    def __repr__(self) -> str:
        return f"tensor({self.value})"


@dataclass(frozen=True)
class SizeV:
    """lib.Size(values)."""

    values: tuple[Any, ...]

    def __repr__(self) -> str:
        return f"Size({list(self.values)!r})"


@dataclass(frozen=True)
class Attr:
    """A library attribute by name: dtypes and memory formats."""

    name: str

    def __repr__(self) -> str:
        return f"lib.{self.name}"


@dataclass(frozen=True)
class Arr:
    """A numpy ndarray holding values."""

    values: tuple[int, ...]

    def __repr__(self) -> str:
        return f"ndarray({list(self.values)!r})"


@dataclass(frozen=True)
class St:
    """The untyped storage of a tensor made as T(shape) (for Storage parameters)."""

    spec: T

    def __repr__(self) -> str:
        return f"{self.spec!r}.untyped_storage()"


class _PyType:
    def __init__(self, t: type) -> None:
        self.t = t

    def __repr__(self) -> str:
        return self.t.__name__


def _tensor(lib: Any, spec: T) -> Any:
    a = np.arange(math.prod(spec.shape), dtype=spec.dtype).reshape(spec.shape)
    return lib.from_numpy(a.copy())  # a.copy() keeps 0-dim (ascontiguousarray would not)


def materialize(lib: Any, v: Any) -> Any:  # noqa: PLR0912 - one case per value kind
    """The concrete value of an abstract argument for lib (pyc10 or torch)."""
    if isinstance(v, T):
        return _tensor(lib, v)
    if isinstance(v, St):
        return _tensor(lib, v.spec).untyped_storage()
    if isinstance(v, T0):
        return lib.from_numpy(np.array(v.value, dtype=np.int64))
    if isinstance(v, NpInt):
        return np.int64(v.value)
    if isinstance(v, Buf):
        return bytearray(v.n)
    if isinstance(v, NpFloat):
        return np.float64(v.value)
    if isinstance(v, Arr0):
        return np.array(v.value, dtype=np.int64)
    if isinstance(v, TF0):
        return lib.from_numpy(np.array(v.value, dtype=np.float32))
    if isinstance(v, SizeV):
        return lib.Size(tuple(materialize(lib, x) for x in v.values))
    if isinstance(v, Attr):
        return getattr(lib, v.name)
    if isinstance(v, Arr):
        return np.array(v.values, dtype=np.int64)
    if isinstance(v, _PyType):
        return v.t
    if isinstance(v, tuple):
        return tuple(materialize(lib, x) for x in v)
    if isinstance(v, list):
        return [materialize(lib, x) for x in v]
    return v


@dataclass
class Call:
    """One generated call: receiver (None for a module function), arguments and a label."""

    entry: Entry
    self_spec: T | None
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    what: str = ""

    @property
    def desc(self) -> str:
        """The call as text, e.g. ``T(2, 3, 4).view(4, 6)`` or ``pyc10.split(T(2, 3, 4), 1)``."""
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        recv = repr(self.self_spec) if self.entry.kind == "Tensor" else "lib"
        return f"{recv}.{self.entry.name}({', '.join(parts)})"


# ---- values per parameter ----

SELF = T((2, 3, 4))
SELF_BY_ENTRY = {"squeeze": T((2, 1, 4))}

INT_BY_NAME = {
    "dim": 1, "dim0": 0, "dim1": 2, "dim2": 1, "axis0": 0, "axis1": 2, "start_dim": 1,
    "end_dim": 2, "offset": 1, "dimension": 2, "size": 2, "step": 1, "start": 1, "length": 2,
    "index": 1, "chunks": 2, "split_size": 2, "source": 0, "destination": 2, "storage_offset": 1,
}  # fmt: skip
LIST_BY_NAME = {
    "size": (4, 6), "shape": (6, 4), "dims": (2, 0, 1), "sizes": (3, 1), "stride": (1, 2),
    "split_sizes": (1, 1), "split_size": (1, 1), "dim": (1,), "source": (0, 1),
    "destination": (2, 0),
}  # fmt: skip
TENSOR_BY_NAME = {"other": T((3, 4), "float64"), "start": T0(1), "input": SELF, "out": None}
SCALAR_BY_NAME = {"fill_value": 2.5, "value": 1.5, "end": 6.5, "step": 1.5}
OVERRIDES: dict[tuple[str, str], Any] = {
    ("expand", "size"): (5, 2, 3, 4),
    ("broadcast_to", "size"): (5, 2, 3, 4),
    ("as_strided", "size"): (2, 2),
    ("view_as", "other"): T((4, 6)),
    ("reshape_as", "other"): T((6, 4)),
    ("expand_as", "other"): T((5, 2, 3, 4)),
    ("split", "dim"): 0,
    ("split_with_sizes", "dim"): 0,
    ("split", "split_size"): 1,
    ("tensor_split", "tensor_indices_or_sections"): T((2,), "int64"),
    ("resize_as_", "the_template"): T((4, 6)),
}
# names whose int values are dimensions (out of range: 9, -9) or counts (out of range: -1)
DIM_NAMES = {"dim", "dim0", "dim1", "dim2", "axis0", "axis1", "start_dim", "end_dim",
             "dimension", "source", "destination", "dims"}  # fmt: skip


def good(entry: Entry, p: Param) -> Any:  # noqa: PLR0912 - one case per parameter type
    """A value of p that makes sense for this entry on SELF."""
    key = (entry.name, p.name)
    if key in OVERRIDES and not (p.is_int_list and isinstance(OVERRIDES[key], int)):
        return OVERRIDES[key]
    if p.is_int_list:
        return LIST_BY_NAME.get(p.name, (1,))
    if p.is_int:
        return INT_BY_NAME.get(p.name, 1)
    if p.base == "Tensor":
        return TENSOR_BY_NAME.get(p.name, SELF)
    if p.base == "ScalarType":
        return Attr("int32")
    if p.base == "MemoryFormat":
        return Attr("contiguous_format")
    if p.base == "bool":
        return True
    if p.base == "Scalar":
        return SCALAR_BY_NAME.get(p.name, 2.5)
    if p.base == "Layout":
        return Attr("strided")
    if p.base == "Device":
        return "cpu"
    if p.base == "PyObject*" and p.name == "dtype":  # Tensor.type(dtype)
        return Attr("int32")
    if p.base == "PyObject*" and p.name == "data":  # tensor(), as_tensor()
        return [1.0, 2.0]
    if p.base == "PyObject*" and p.name == "obj":  # asarray()
        return [[1, 2], [3, 4]]
    if p.base == "PyObject*" and p.name == "buffer":  # frombuffer()
        return Buf(16)
    if p.base == "TensorList":  # cat(), stack(): shapes equal, dtypes promoted
        return [T((2, 3, 4)), T((2, 3, 4), "float64"), T((2, 3, 4), "int32")]
    if p.base == "Storage":
        return St(T((24,)))
    if p.base == "std::string" and p.name == "filename":  # from_file()
        return _mapped_file()
    raise NotImplementedError(f"no value for {p.type} {p.name} in {entry.id}")


_FILES: list[str] = []


def _mapped_file() -> str:
    """A file of 4 KiB of zeros for from_file, removed at exit."""
    if not _FILES:
        fd, path = tempfile.mkstemp(prefix="c10c_difftest_")
        os.write(fd, bytes(4096))
        os.close(fd)
        _FILES.append(path)
        atexit.register(os.unlink, path)
    return _FILES[0]


def accepted_forms(p: Param, v: Any, varargs: bool) -> list[tuple[str, Any]]:
    """Other spellings torch accepts for p's value v (excluding v itself)."""
    forms: list[tuple[str, Any]] = []
    if p.is_int:
        forms += [("numpy int", NpInt(v)), ("0-dim int tensor", T0(v))]
    elif p.is_int_list:
        forms += [
            ("list", list(v)),
            ("Size", SizeV(v)),
            ("numpy int element", (NpInt(v[0]), *v[1:])),
            ("0-dim tensor element", (T0(v[0]), *v[1:])),
        ]
        if varargs:
            forms.append(("varargs", VarArgs(v)))
    elif p.base == "ScalarType":
        forms += [("float", _PyType(float)), ("int", _PyType(int)), ("bool", _PyType(bool))]
    elif p.base == "MemoryFormat":
        forms += [("preserve", Attr("preserve_format")), ("channels_last", Attr("channels_last"))]
    elif p.base == "bool":
        forms += [("False", False), ("numpy bool", np.True_)]
    elif p.base == "Scalar":
        forms += [("int", 2), ("bool", True)]
    elif p.base == "PyObject*" and p.name == "data":
        forms += [("int list", [[1, 2], [3, 4]]), ("bool", True), ("ndarray", Arr((1, 2)))]
    if p.optional:
        forms.append(("None", None))
    return forms


def wrong_types(p: Param, v: Any, varargs: bool = False) -> list[tuple[str, Any]]:  # noqa: PLR0912
    """Values of the wrong type for p (varargs: p's int list may be spread)."""
    if p.is_int:
        out = [("str", "a"), ("float", 1.5), ("integral float", 2.0), ("bool", True),
               ("ndarray", Arr((1, 2))), ("numpy float", NpFloat(1.5)),
               ("integral numpy float", NpFloat(2.0)), ("0-dim ndarray", Arr0(1)),
               ("0-dim float tensor", TF0(1.0)), ("1-dim tensor", T((2,), "int64"))]  # fmt: skip
    elif p.is_int_list:
        out = [("str", "a"), ("float element", (1.5, *v[1:])), ("bool element", (True, *v[1:])),
               ("ndarray", Arr(tuple(v))), ("int list of str", ("a",)), ("float", 1.5),
               ("None element", (None, *v[1:])), ("numpy float element", (NpFloat(1.5), *v[1:])),
               ("integral float element", (2.0, *v[1:])),
               ("0-dim ndarray element", (Arr0(v[0]), *v[1:])),
               ("0-dim float tensor element", (TF0(1.0), *v[1:])),
               ("1-dim tensor", T((2,), "int64")),
               ("ndarray element", (Arr((1, 2)), *v[1:]))]  # fmt: skip
        if varargs:
            out += [("varargs floats", VarArgs(tuple(float(x) for x in v))),
                    ("varargs None", VarArgs((None, *v[1:]))),
                    ("varargs ndarray", VarArgs((Arr((1, 2)), *v[1:])))]  # fmt: skip
    elif p.base == "ScalarType":
        out = [("str", "float32"), ("int", 1)]
    elif p.base == "MemoryFormat":
        out = [("str", "a"), ("int", 1)]
    elif p.base == "bool":
        out = [("str", "a"), ("int", 1)]
    elif p.base == "Scalar":
        out = [("str", "a"), ("list", [1])]
    elif p.base == "Layout":
        out = [("str", "strided"), ("int", 1)]
    elif p.base == "Device":
        out = [("float", 1.5), ("list", [1])]
    elif p.base == "PyObject*" and p.name == "data":
        out = [("str", "a"), ("ragged", [[1], [2, 3]])]
    elif p.base == "PyObject*":
        out = [("int", 1), ("list", [1])]
    else:  # Tensor
        out = [("str", "a"), ("int", 1), ("ndarray", Arr((1, 2)))]
    if not p.optional:
        out.append(("None", None))
    return out


def out_of_range(p: Param, v: Any) -> list[tuple[str, Any]]:
    """Values of the right type outside the valid range."""
    if p.is_int:
        if p.name in DIM_NAMES:
            return [("dim 9", 9), ("dim -9", -9)]
        return [("-1", -1), ("100", 100), ("-100", -100)]
    if p.is_int_list:
        if p.name in DIM_NAMES:
            return [("dim 9", (9, *v[1:])), ("empty", ())]
        return [("negative size", (-2, *v[1:])), ("two -1", (-1, -1)), ("empty", ())]
    return []


@dataclass(frozen=True)
class VarArgs:
    """An int list spread as separate positional arguments."""

    values: tuple[int, ...]


def _varargs_ok(sig: Signature) -> bool:
    pos = sig.positional
    return len(pos) == 1 and pos[0].is_int_list


def _build(entry: Entry, self_spec: T, what: str, pos: list[Any], kw: dict[str, Any]) -> Call:
    args: list[Any] = []
    for a in pos:
        if isinstance(a, VarArgs):
            args.extend(a.values)
        else:
            args.append(a)
    return Call(entry, self_spec, tuple(args), dict(kw), what)


def generate(entry: Entry) -> list[Call]:
    """Every generated call for entry's non-hidden signatures (deduplicated by text)."""
    self_spec = SELF_BY_ENTRY.get(entry.name, SELF)
    calls: list[Call] = []
    for sig in entry.signatures:
        if sig.hidden:
            continue
        vals = {p.name: good(entry, p) for p in sig.params}
        pos_params = list(sig.positional)
        kwo = {p.name: vals[p.name] for p in sig.params if p.keyword_only}
        base_pos = [vals[p.name] for p in pos_params]

        def mk(what: str, pos: list[Any], kw: dict[str, Any], spec: T = self_spec) -> None:
            calls.append(_build(entry, spec, what, pos, kw))

        mk("all positional", base_pos, kwo)
        mk("all keyword", [], dict(vals))
        required = [vals[p.name] for p in pos_params if not p.has_default]
        req_kw = {p.name: vals[p.name] for p in sig.params if p.keyword_only and not p.has_default}
        mk("defaults omitted", required, req_kw)
        for i, p in enumerate(sig.params):
            v = vals[p.name]

            def with_value(what: str, nv: Any) -> None:
                if p.keyword_only:  # noqa: B023
                    mk(what, base_pos, {**kwo, p.name: nv})  # noqa: B023
                else:
                    mk(what, [*base_pos[:i], nv, *base_pos[i + 1 :]], kwo)  # noqa: B023
                    if not isinstance(nv, VarArgs):
                        mk(what + " (keyword)", [], {**vals, p.name: nv})  # noqa: B023

            for label, nv in accepted_forms(p, v, _varargs_ok(sig)):
                with_value(f"{p.name}: {label}", nv)
            for label, nv in wrong_types(p, v, _varargs_ok(sig)):
                with_value(f"{p.name}: wrong type {label}", nv)
            for label, nv in out_of_range(p, v):
                with_value(f"{p.name}: {label}", nv)
        # arity
        mk("one too many positional", [*base_pos, 0], kwo)
        if required:
            mk("missing required", required[:-1], req_kw)
        mk("unknown keyword", base_pos, {**kwo, "foo": 1})
        if pos_params:
            mk("keyword given twice", base_pos, {**kwo, pos_params[0].name: base_pos[0]})
        # other receivers: a 0-dim and a 1-dim tensor
        if entry.kind == "Tensor":
            for spec in (T(()), T((5,))):
                mk("all positional", base_pos, kwo, spec)
                mk("defaults omitted", required, req_kw, spec)
    seen: set[str] = set()
    out: list[Call] = []
    for c in calls:
        if c.desc not in seen:
            seen.add(c.desc)
            out.append(c)
    return out


# ---- running and comparing ----

EXC_CLASSES = (IndexError, ValueError, TypeError, NotImplementedError, RuntimeError, AttributeError)


#: entries whose results hold uninitialized memory: their values are not compared
UNINITIALIZED = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"}


def _norm(lib: Any, r: Any, receiver: Any, name: str = "") -> Any:
    if isinstance(r, lib.Tensor):
        try:
            values = "<uninitialized>" if name in UNINITIALIZED else np.asarray(r.numpy()).tolist()
        except Exception as e:  # pyc10's error classes derive from the builtin torch raises
            builtin = next(c for c in type(e).__mro__ if c.__module__ == "builtins")
            values = f"<numpy() failed: {builtin.__name__}: {e}>"
        dtype = str(r.dtype).rsplit(".", 1)[-1]
        same = "self" if r is receiver else "new"
        geometry = (tuple(r.shape), tuple(r.stride()), r.storage_offset())
        return ("Tensor", *geometry, dtype, values, same)
    if isinstance(r, tuple | list) and not isinstance(r, lib.Size):
        return (type(r).__name__, tuple(_norm(lib, x, receiver, name) for x in r))
    if isinstance(r, lib.Size):
        return ("Size", tuple(r))
    if isinstance(r, np.ndarray):  # numpy(): compared by value, layout and dtype
        return ("ndarray", r.dtype.str, r.shape, r.strides, r.tolist())
    if isinstance(r, lib.dtype):  # result_type(): compared by name
        return ("dtype", str(r).rsplit(".", 1)[-1])
    return (type(r).__name__, r)


@dataclass
class Outcome:
    """What one call did on one library: a normalized result or an exception."""

    result: Any = None
    exc: BaseException | None = None

    def __str__(self) -> str:
        if self.exc is not None:
            msg = str(self.exc).split("\nException raised from", 1)[0]
            return f"raises {type(self.exc).__name__}({msg!r})"
        return f"returns {self.result!r}"


def run_on(lib: Any, call: Call) -> Outcome:
    """Run call on lib and normalize what happened."""
    try:
        args = materialize(lib, call.args)
        kwargs = {k: materialize(lib, v) for k, v in call.kwargs.items()}
        if call.entry.kind == "Tensor":
            assert call.self_spec is not None
            receiver = _tensor(lib, call.self_spec)
            fn = getattr(receiver, call.entry.name)
        else:
            receiver = None
            fn = getattr(lib, call.entry.name)
        r = fn(*args, **kwargs)
    except Exception as e:
        return Outcome(exc=e)
    return Outcome(result=_norm(lib, r, receiver, call.entry.name))


def _names(text: str) -> str:
    """text with pyc10's names read as torch's: ``pyc10.`` as ``torch.``, and torch's storage
    classes' module path (torch.storage.UntypedStorage, also torch.UntypedStorage) as pyc10's
    (pyc10.UntypedStorage): the same names in the two libraries' own paths."""
    text = text.replace("pyc10.", "torch.")
    for name in ("UntypedStorage", "TypedStorage"):
        text = text.replace(f"torch.storage.{name}", f"torch.{name}")
    return text


def _message(e: BaseException) -> str:
    return _names(str(e).split("\nException raised from", 1)[0])


def compare(
    ours: Outcome, theirs: Outcome, messages: tuple[type[BaseException], ...] = (TypeError,)
) -> str | None:
    """None when the outcomes agree, else what differs."""
    if theirs.exc is None and ours.exc is None:
        return None if ours.result == theirs.result else "different result"
    if theirs.exc is None or ours.exc is None:
        return "different acceptance"
    cls = next((c for c in EXC_CLASSES if isinstance(theirs.exc, c)), type(theirs.exc))
    if not isinstance(ours.exc, cls):
        return f"exception class (torch {cls.__name__})"
    if cls in messages and _message(ours.exc) != _message(theirs.exc):
        return f"{cls.__name__} message"
    return None


@dataclass
class Disagreement:
    """One call on which pyc10 and torch differ."""

    call: Call
    kind: str
    ours: Outcome
    theirs: Outcome

    def __str__(self) -> str:
        return (f"{self.call.desc}  [{self.call.what}] {self.kind}:\n"
                f"    pyc10: {self.ours}\n    torch: {self.theirs}")  # fmt: skip


def run_entry(entry: Entry, pyc10: Any, torch: Any) -> tuple[int, list[Disagreement]]:
    """Run every generated call of entry; the number of checks and the disagreements."""
    calls = generate(entry)
    out: list[Disagreement] = []
    for c in calls:
        ours, theirs = run_on(pyc10, c), run_on(torch, c)
        kind = compare(ours, theirs)
        if kind is not None:
            out.append(Disagreement(c, kind, ours, theirs))
    return len(calls), out


#: the kinds of table entries the engine calls: Tensor methods (on a T receiver) and pyc10
#: functions. The others are not called as ``lib.name``: kind _VF entries are bound internally
#: (Tensor.split's path through torch._VF.split) and tested through their callers; kind
#: UntypedStorage entries are the storage type's constructor and methods (tests/python/
#: test_storage.py checks them against torch).
CALLED_KINDS = ("Tensor", "pyc10")


def called_entries() -> list[Entry]:
    """The table entries whose calls ``generate`` makes and ``run_on`` runs."""
    return [e for e in read_table() if e.kind in CALLED_KINDS]


def main() -> None:
    """Print the count of checks and every disagreement."""
    import torch

    import pyc10

    total = bad = 0
    for entry in called_entries():
        n, dis = run_entry(entry, pyc10, torch)
        total += n
        bad += len(dis)
        print(f"{entry.id}: {n} checks, {len(dis)} disagree")
        for d in dis:
            print("  " + str(d).replace("\n", "\n  "))
    print(f"total {total} checks, {total - bad} agree, {bad} disagree")


if __name__ == "__main__":
    main()
