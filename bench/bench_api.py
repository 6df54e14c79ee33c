"""pyc10's whole Python surface against torch (CPU) and numpy, in one interleaved run.

Every Tensor method and attribute, factory, Size and storage operation is one row, defined once
below: a statement (the same text usually serves pyc10 and torch, with M bound to the library's
module and x, y, s ... to its objects) and numpy's statement where numpy has the same operation.
For each repeat, every row runs pyc10, torch and numpy one after the other, so machine noise
hits all three alike; a figure is the best of the repeats, in ns per call, after subtracting the
loop overhead (an empty statement timed the same way). Rows whose call is slow run fewer calls
per sample (each sample stays near 25 ms), the same number for the three libraries.

Where the operation moves a tensor to or from numpy, numpy's figure is numpy doing the same
with its own kind: a new array over the same memory (x.view(), a.view(), np.asarray(memoryview)).

A name pyc10 (or torch) lacks today prints as "missing" (and a call that raises as "error")
rather than stopping the run, so the table fills in as names land. The summary judges the
project's targets: every row <= 1.0x torch, the median <= 0.3x torch, <= 2x numpy where numpy has
the operation, and creating and dropping a tensor plus the hottest views at <= 90 ns.

    python bench/bench_api.py [--repeat N] [--number K] [--filter SUBSTR] [--json PATH] [--quick]
"""

from __future__ import annotations

import argparse
import copy
import json
import operator
import pickle
import platform
import statistics
import sys
import time
import timeit
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

import pyc10

LIBS = ("pyc10", "torch", "numpy")
MODULES: dict[str, Any] = {"pyc10": pyc10, "torch": torch, "numpy": np}
SAME = "<same as pyc10>"

# The project's targets for pyc10's API.
TORCH_TARGET = 1.0  # every row, pyc10 / torch
MEDIAN_TARGET = 0.3  # the median of pyc10 / torch
NUMPY_TARGET = 2.0  # pyc10 / numpy where numpy has the operation
HOT_NS = 90.0  # create+drop and the hottest views, ns per call ("stay at 60-90 ns")

SAMPLE_S = 0.025  # a slow row's sample is cut to about this many seconds
QUICK_SAMPLE_S = 0.002


@dataclass(frozen=True)
class Row:
    """One benchmark row: a statement per library (None where the library lacks the operation)."""

    label: str
    pyc10: str
    torch: str | None
    numpy: str | None
    setup: str  # run once in pyc10's and torch's namespaces before timing
    np_setup: str  # run once in numpy's namespace
    hot: bool  # judged against HOT_NS as well
    needs: tuple[str, ...]  # special methods the tensor type must have (else "missing", not run)

    def stmt(self, lib: str) -> str | None:
        """The statement timed for lib."""
        return {"pyc10": self.pyc10, "torch": self.torch, "numpy": self.numpy}[lib]


def row(
    stmt: str,
    numpy: str | None = None,
    *,
    label: str | None = None,
    torch: str | None = SAME,
    setup: str = "",
    np_setup: str | None = None,
    hot: bool = False,
    needs: tuple[str, ...] = (),
) -> Row:
    """A row whose torch statement is pyc10's unless given, numpy's setup the others' unless given,
    and whose label is the statement read as x's method or a module function (no "M.", "own.")."""
    return Row(
        label=label or stmt.replace("M.", "").replace("own.", "x."),
        pyc10=stmt,
        torch=stmt if torch == SAME else torch,
        numpy=numpy,
        setup=setup,
        np_setup=setup if np_setup is None else np_setup,
        hot=hot,
        needs=needs,
    )


# The objects every statement sees (per library, see namespace()): M the module; x a 4x6 float32
# tensor holding 0..23; x2 another; y 2x3x4; b an empty 3x4x6 (expand_as target); w a 1x4x6 view
# of x; xt = x.t() (not contiguous); e a one-element zero; z a 0-dim float32; zi a 0-dim int64;
# c a 4x6 complex64; a a 4x6 float32 numpy array; s x's storage, s2 a 96-byte storage, sr a
# resizable 64-byte one. Rows that mutate their tensor's geometry set up their own (own = ...).
OWN = "own = x.clone()"
NP_OWN = "own = x.copy()"
ROWS: list[Row] = [
    # attributes
    row("x.dtype", "x.dtype"),
    row("x.device", "x.device"),
    row("x.shape", "x.shape"),
    row("x.ndim", "x.ndim"),
    row("x.layout"),
    row("x.is_cuda"),
    row("x.is_cpu"),
    row("x.is_meta"),
    row("x._version"),
    row("x.nbytes", "x.nbytes"),
    row("x.itemsize", "x.itemsize"),
    row("x.T", "x.T"),
    row("x.mT", "x.mT"),
    row("x.H"),
    row("x.mH"),
    row("x.requires_grad"),
    row("x.grad"),
    row("x.is_leaf"),
    row("x.grad_fn"),
    row("x.data"),
    row("c.real", "c.real"),
    row("c.imag", "c.imag"),
    row("x.dtype.itemsize", "x.dtype.itemsize"),
    # queries
    row("x.data_ptr()"),
    row("x.storage_offset()"),
    row("x.size()", "x.shape"),
    row("x.size(1)", "x.shape[1]"),
    row("x.stride()", "x.strides"),
    row("x.stride(1)", "x.strides[1]"),
    row("x.numel()", "x.size"),
    row("x.nelement()", "x.size"),
    row("x.dim()", "x.ndim"),
    row("x.ndimension()", "x.ndim"),
    row("x.element_size()", "x.itemsize"),
    row("x.is_contiguous()", "x.flags.c_contiguous"),
    row(
        "x.is_contiguous(memory_format=M.contiguous_format)",
        label="x.is_contiguous(memory_format=)",
    ),
    row("x.is_inference()"),
    row("x.is_floating_point()"),
    row("x.is_complex()"),
    row("x.is_signed()"),
    row("x.get_device()"),
    row("x.is_same_size(x2)"),
    row("x.is_set_to(x)"),
    row("x.is_shared()"),
    row("x.untyped_storage()"),
    row("x.storage()"),
    row("x.type()"),
    # views
    row("x.contiguous()", "np.ascontiguousarray(x)", label="x.contiguous() (contiguous)"),
    row("x.view(6, 4)", "x.reshape(6, 4)", hot=True),
    row("x.view(-1)", "x.reshape(-1)"),
    row("x.view(size=(6, 4))", label="x.view(size=)"),
    row("x.view(M.int32)", "x.view(M.int32)", label="x.view(dtype)"),
    row("x.view_as(x2)"),
    row("x.reshape(6, 4)", "x.reshape(6, 4)"),
    row("x.reshape_as(x2)"),
    row("x.t()", "x.T", hot=True),
    row("x.transpose(0, 1)", "x.swapaxes(0, 1)", hot=True),
    row("x.swapaxes(0, 1)", "x.swapaxes(0, 1)"),
    row("x.swapdims(0, 1)", "x.swapaxes(0, 1)"),
    row("y.permute(2, 0, 1)", "y.transpose(2, 0, 1)"),
    row("x.expand(3, 4, 6)", "np.broadcast_to(x, (3, 4, 6))"),
    row("x.expand_as(b)", "np.broadcast_to(x, b.shape)"),
    row("M.broadcast_to(x, (3, 4, 6))", "np.broadcast_to(x, (3, 4, 6))"),
    # numpy's squeeze() returns the array itself when no dim has size 1, where torch and pyc10
    # make a view: not the same operation, so x's row has no numpy figure; w's rows are the
    # like-for-like ones (numpy makes a view there too)
    row("x.squeeze()"),
    row("w.squeeze()", "w.squeeze()"),
    row("w.squeeze(0)", "w.squeeze(0)"),
    row("x.unsqueeze(1)", "np.expand_dims(x, 1)"),
    row("x.flatten()", "x.ravel()"),
    row("x.ravel()", "x.ravel()"),
    row("x.unflatten(1, (2, 3))", "x.reshape(4, 2, 3)"),
    row("x.narrow(1, 1, 2)", "x[:, 1:3]"),
    row("x.select(1, 2)", "x[:, 2]"),
    row("x.movedim(0, 1)", "np.moveaxis(x, 0, 1)"),
    row("x.moveaxis(0, 1)", "np.moveaxis(x, 0, 1)"),
    row("x.as_strided((2, 2), (1, 2))", "np.lib.stride_tricks.as_strided(x, (2, 2), (4, 8))"),
    row("x.diagonal()", "x.diagonal()"),
    row("x.unfold(1, 2, 2)"),
    row("x.chunk(2, 1)", "np.split(x, 2, 1)"),
    row("x.split(2)", "np.split(x, 2)"),
    row("x.split([1, 3])", "np.split(x, [1])"),
    row("x.split_with_sizes([1, 3])", "np.split(x, [1])"),
    row("x.tensor_split(2, 1)", "np.array_split(x, 2, 1)"),
    row("x.hsplit(2)", "np.hsplit(x, 2)"),
    row("x.vsplit(2)", "np.vsplit(x, 2)"),
    row("x.unbind(0)", "tuple(x)"),
    row("x.detach()"),
    row("x.adjoint()"),
    row("x.conj()"),
    row("x.type_as(x2)"),
    # indexing
    row("x[1]", "x[1]", hot=True),
    row("x[1:3]", "x[1:3]", hot=True),
    row("x[-1]", "x[-1]"),
    row("x[::2]", "x[::2]"),
    row("x[:, 1:3]", "x[:, 1:3]"),
    row("x[..., 1]", "x[..., 1]"),
    row("x[None]", "x[None]"),
    row("x[1, 2]", "x[1, 2]"),
    row("x[1, 2] = 3.0", "x[1, 2] = 3.0"),
    row("x[1] = 0.0", "x[1] = 0.0"),
    row("x[[0, 2]]", "x[[0, 2]]", label="x[[0, 2]] (advanced)"),
    # in-place geometry and autograd flags (each on its own tensor)
    row("own.t_()", setup=OWN),
    row("own.transpose_(0, 1)", setup=OWN),
    row("own.swapdims_(0, 1)", setup=OWN),
    row("own.unsqueeze_(0).squeeze_(0)", setup=OWN),
    row("own.as_strided_((4, 6), (6, 1))", setup=OWN),
    row("own.resize_(4, 6)", "own.resize((4, 6), refcheck=False)", setup=OWN, np_setup=NP_OWN),
    row("own.resize_as_(x2)", setup=OWN),
    row("own.set_(x2)", setup=OWN),
    row("own.requires_grad_(False)", setup=OWN),
    row("own.detach_()", setup=OWN),
    row("own.share_memory_()", setup=OWN),
    # copies and conversions
    row("x.clone()", "x.copy()"),
    row("xt.contiguous()", "np.ascontiguousarray(xt)", label="x.t().contiguous() (copies)"),
    row("x.copy_(x2)", "np.copyto(x, x2)"),
    row("x.zero_()", "x.fill(0)"),
    row("x.fill_(1.5)", "x.fill(1.5)"),
    row("x.to(M.float64)", "x.astype(M.float64)"),
    row("x.to(dtype=M.float64)", "x.astype(dtype=M.float64)"),
    row("x.to(M.float32)", "x.astype(M.float32, copy=False)", label="x.to(float32) (same)"),
    row("x.to('cpu')"),
    row("x.to(device='cpu')"),
    row("x.cpu()"),
    row("x.float()", "x.astype(M.float32, copy=False)", label="x.float() (same)"),
    row("x.double()", "x.astype(M.float64)"),
    row("x.half()", "x.astype(M.float16)"),
    row("x.bfloat16()"),
    row("x.long()", "x.astype(M.int64)"),
    row("x.int()", "x.astype(M.int32)"),
    row("x.bool()", "x.astype(M.bool_)"),
    row("x.type(M.float64)", "x.astype(M.float64)"),
    row("x.new_empty((2, 3))"),
    row("x.new_zeros((2, 3))"),
    row("x.new_ones((2, 3))"),
    row("x.new_full((2, 3), 1.0)"),
    row("x.new_empty_strided((2, 3), (3, 1))"),
    row("x.new_tensor([1.0, 2.0])"),
    # to and from Python and numpy, DLPack
    row("x.tolist()", "x.tolist()", label="x.tolist() (4x6)"),
    row("x[0, 0].item()", "x[0, 0].item()"),
    row("z.item()", "z.item()", label="z.item() (0-dim)"),
    row("int(zi)", "int(zi)", needs=("__int__",)),
    row("float(z)", "float(z)", needs=("__float__",)),
    row("operator.index(zi)", "operator.index(zi)", needs=("__index__",)),
    row("x.numpy()", "x.view()"),
    row("M.from_numpy(a)", "a.view()"),
    row("np.asarray(x)", "np.asarray(mv)", np_setup="mv = memoryview(x)"),
    # np.asarray of an ndarray returns the array itself; as_tensor makes a tensor over its memory,
    # as from_numpy does: numpy's like-for-like is a new array object over the same memory
    row("M.as_tensor(a)", "a.view()"),
    row("x.__dlpack__()", "x.__dlpack__()"),
    row("x.__dlpack_device__()", "x.__dlpack_device__()"),
    row("M.from_dlpack(a)", "np.from_dlpack(a)", label="from_dlpack(numpy array)"),
    row("M.from_dlpack(x)", "np.from_dlpack(x)", label="from_dlpack(x) (own kind)"),
    row("np.from_dlpack(x)", "np.from_dlpack(x)", label="numpy.from_dlpack(x)"),
    row("torch.from_dlpack(x)", "torch.from_dlpack(x)", label="torch.from_dlpack(x)"),
    # Python protocols
    row("len(x)", "len(x)"),
    row("bool(e)", "bool(e)", label="bool(x) (one element)"),
    row(
        "for r in x: pass", "for r in x: pass", label="iteration (for r in x)", needs=("__iter__",)
    ),
    row("list(reversed(x))", "list(reversed(x))", needs=("__reversed__",)),
    row("repr(x)", "repr(x)"),
    row(
        "pickle.loads(pickle.dumps(x))", "pickle.loads(pickle.dumps(x))", label="pickle round trip"
    ),
    row("copy.deepcopy(x)", "copy.deepcopy(x)"),
    # Size
    row("x.shape[1]", "x.shape[1]"),
    row("x.shape[1:]", "x.shape[1:]"),
    row("x.shape.numel()"),
    row("x.shape[1:].numel()"),
    row("len(x.shape)", "len(x.shape)"),
    row("x.shape == (4, 6)", "x.shape == (4, 6)"),
    row("M.Size([2, 3])"),
    # factories
    row("M.empty((2, 3))", "np.empty((2, 3))", label="empty((2,3)) create+drop", hot=True),
    row("M.empty(2, 3)", "np.empty((2, 3))"),
    row(
        "M.empty(2, 3, dtype=M.float64)", "np.empty((2, 3), M.float64)", label="empty(2, 3, dtype=)"
    ),
    row("M.zeros(2, 3)", "np.zeros((2, 3))"),
    row("M.ones(2, 3)", "np.ones((2, 3))"),
    row("M.full((2, 3), 1.0)", "np.full((2, 3), 1.0)"),
    row(
        "M.zeros((256, 256), dtype=M.float32)",
        "M.zeros((256, 256), dtype=M.float32)",
        label="zeros((256, 256))",
    ),
    row("M.empty_like(x)", "M.empty_like(x)"),
    row("M.zeros_like(x)", "M.zeros_like(x)"),
    row("M.ones_like(x)", "M.ones_like(x)"),
    row("M.full_like(x, 2.0)", "M.full_like(x, 2.0)"),
    row("M.empty_strided((2, 3), (3, 1))"),
    row("M.tensor([1.0, 2.0, 3.0])", "np.array([1.0, 2.0, 3.0])"),
    row("M.is_tensor(x)"),
    # storage
    row("M.UntypedStorage(64)"),
    row("s.nbytes()", label="storage.nbytes()"),
    row("s.size()", label="storage.size()"),
    row("len(s)", label="len(storage)"),
    row("s.data_ptr()", label="storage.data_ptr()"),
    row("s.element_size()", label="storage.element_size()"),
    row("s.device", label="storage.device"),
    row("s.resizable()", label="storage.resizable()"),
    row("s[0]", label="storage[0]"),
    row("s[0] = 1", label="storage[0] = 1"),
    row("s[0:8]", label="storage[0:8]"),
    row("s.tolist()", label="storage.tolist() (96 bytes)"),
    row("sr.resize_(64)", label="storage.resize_(64)"),
    row("s2.copy_(s)", label="storage.copy_(storage)"),
    row("s2.fill_(0)", label="storage.fill_(0)"),
    row("s.clone()", label="storage.clone()"),
    row("s.is_shared()", label="storage.is_shared()"),
    row("x.untyped_storage().nbytes()"),
    row("M.UntypedStorage.from_buffer(buf, dtype=M.uint8)", label="UntypedStorage.from_buffer"),
    # dtypes, devices and the rest of the module
    row(
        "M.promote_types(M.float32, M.int64)",
        "M.promote_types(M.float32, M.int64)",
        label="promote_types",
    ),
    row("M.can_cast(M.int32, M.float32)", "M.can_cast(M.int32, M.float32)", label="can_cast"),
    row("M.finfo(M.float32)", "M.finfo(M.float32)", label="finfo(float32)"),
    row("M.iinfo(M.int32)", "M.iinfo(M.int32)", label="iinfo(int32)"),
    row("M.get_default_dtype()"),
    row("M.device('cpu')"),
    row("x.device.type"),
    # function forms
    row("M.transpose(x, 0, 1)", "np.swapaxes(x, 0, 1)"),
    row("M.t(x)", "np.transpose(x)"),
    row("M.reshape(x, (6, 4))", "np.reshape(x, (6, 4))"),
    row("M.permute(y, (2, 0, 1))", "np.transpose(y, (2, 0, 1))"),
    row("M.squeeze(w)", "np.squeeze(w)"),
    row("M.unsqueeze(x, 1)", "np.expand_dims(x, 1)"),
    row("M.flatten(x)", "np.ravel(x)"),
    row("M.narrow(x, 1, 1, 2)"),
    row("M.select(x, 1, 2)"),
    row("M.movedim(x, 0, 1)", "np.moveaxis(x, 0, 1)"),
    row("M.chunk(x, 2, 1)", "np.split(x, 2, 1)"),
    row("M.split(x, 2)", "np.split(x, 2)"),
    row("M.unbind(x)"),
    row("M.diagonal(x)", "np.diagonal(x)"),
    row("M.numel(x)", "np.size(x)"),
    row("M.clone(x)", "np.copy(x)"),
]


def namespace(lib: str) -> dict[str, Any]:
    """The objects every statement of lib sees (see the comment above ROWS)."""
    m = MODULES[lib]
    grid = np.arange(24, dtype=np.float32).reshape(4, 6)
    cube = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    ns: dict[str, Any] = {
        "np": np,
        "torch": torch,
        "pyc10": pyc10,
        "pickle": pickle,
        "copy": copy,
        "operator": operator,
        "M": m,
        "a": grid.copy(),
        "buf": bytearray(64),
    }
    if lib == "numpy":
        ns.update(x=grid.copy(), x2=grid.copy(), y=cube.copy())
    else:
        ns.update(x=m.empty(4, 6), x2=m.empty(4, 6), y=m.empty(2, 3, 4))
        for name, values in (("x", grid), ("x2", grid), ("y", cube)):
            ns[name].copy_(m.from_numpy(values))
        ns.update(
            s=ns["x"].untyped_storage(),
            s2=m.empty(4, 6).untyped_storage(),
            sr=m.UntypedStorage(64),
        )
    x = ns["x"]
    ns.update(
        w=x.reshape(1, 4, 6),
        xt=x.T if lib == "numpy" else x.t(),
        b=m.empty((3, 4, 6), dtype=m.float32),
        e=m.zeros((1,), dtype=m.float32),
        z=m.zeros((), dtype=m.float32),
        zi=m.zeros((), dtype=m.int64),
        c=m.zeros((4, 6), dtype=m.complex64),
    )
    ns["_ns"] = ns
    return ns


def names_used(code: Any) -> set[str]:
    """Every global name a compiled statement (and any code nested in it) reads or writes."""
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= names_used(const)
    return names


def make_timer(stmt: str, ns: dict[str, Any]) -> timeit.Timer:
    """A timeit.Timer for stmt whose namespace objects are bound to locals in its setup, so the
    timed loop reads them as fast locals, as a function body would, not as dict lookups."""
    used = names_used(compile(stmt, "<row>", "exec"))
    setup = "; ".join(f"{n} = _ns[{n!r}]" for n in sorted(used) if n in ns) or "pass"
    return timeit.Timer(stmt, setup=setup, globals=ns)


def failure(exc: BaseException) -> tuple[str, str]:
    """A failed call's status ("missing" for a name the library lacks) and its message."""
    status = "missing" if isinstance(exc, (AttributeError, NameError, ImportError)) else "error"
    return status, f"{type(exc).__name__}: {exc}"


@dataclass
class Cell:
    """One library's result for one row."""

    stmt: str | None
    status: str = "ok"  # ok, missing, error, none (the library has no such operation)
    message: str = ""
    timer: timeit.Timer | None = None
    best: float = float("inf")  # seconds per call, before the overhead is subtracted

    def ns(self, overhead: float) -> float | None:
        """ns per call less the loop overhead, or None when it was not measured."""
        if self.status != "ok":
            return None
        return max((self.best - overhead) * 1e9, 0.1)


@dataclass
class Result:
    """One row's cells and the number of calls per sample it runs."""

    row: Row
    cells: dict[str, Cell]
    number: int = 0


def prepare(rows: Sequence[Row], number: int, sample_s: float) -> list[Result]:
    """Set each row up in each library, run its statement once (a failure marks the cell), and
    pick its calls per sample: number, cut so that the slowest library's sample is about
    sample_s."""
    bases = {lib: namespace(lib) for lib in LIBS}
    results = []
    for r in rows:
        cells: dict[str, Cell] = {}
        slowest = 0.0
        for lib in LIBS:
            cell = Cell(r.stmt(lib))
            cells[lib] = cell
            if cell.stmt is None:
                cell.status = "none"
                continue
            ns = dict(bases[lib])
            ns["_ns"] = ns
            lacking = [n for n in r.needs if lib != "numpy" and not hasattr(type(ns["x"]), n)]
            if lacking:
                cell.status, cell.message = "missing", f"the tensor type has no {lacking[0]}"
                continue
            try:
                exec(r.np_setup if lib == "numpy" else r.setup, ns)
                cell.timer = make_timer(cell.stmt, ns)
                cell.timer.timeit(1)
                probe = min(number, 100)  # best of 3, so one cold or interrupted probe is not kept
                per_call = min(cell.timer.timeit(probe) for _ in range(3)) / probe
                slowest = max(slowest, per_call)
            except Exception as exc:  # any failure is reported, not raised
                cell.status, cell.message = failure(exc)
                cell.timer = None
        n = number if slowest == 0.0 else int(min(number, max(1, sample_s / slowest)))
        results.append(Result(r, cells, max(1, n)))
    return results


def measure(results: list[Result], repeat: int, number: int) -> float:
    """Time every cell repeat times, interleaved (each repeat runs every row's pyc10, torch and
    numpy one after the other); keeps each cell's best and returns the loop overhead per call."""
    empty = timeit.Timer("pass")
    overhead = float("inf")
    for _ in range(repeat):
        overhead = min(overhead, empty.timeit(number) / number)
        for res in results:
            for cell in res.cells.values():
                if cell.timer is None:
                    continue
                try:
                    cell.best = min(cell.best, cell.timer.timeit(res.number) / res.number)
                except Exception as exc:  # a call that fails later is reported too
                    cell.status, cell.message = failure(exc)
                    cell.timer = None
    return overhead


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a / b


def row_record(res: Result, overhead: float) -> dict[str, Any]:
    """One row's figures, ratios and judged targets, as --json writes them."""
    ns = {lib: res.cells[lib].ns(overhead) for lib in LIBS}
    vs_torch = ratio(ns["pyc10"], ns["torch"])
    vs_numpy = ratio(ns["pyc10"], ns["numpy"])
    missed = []
    if res.cells["pyc10"].status != "ok":
        missed.append(res.cells["pyc10"].status)
    if vs_torch is not None and vs_torch > TORCH_TARGET:
        missed.append("torch")
    if vs_numpy is not None and vs_numpy > NUMPY_TARGET:
        missed.append("numpy")
    if res.row.hot and ns["pyc10"] is not None and ns["pyc10"] > HOT_NS:
        missed.append("ns")
    return {
        "row": res.row.label,
        "hot": res.row.hot,
        "number": res.number,
        "pyc10_ns": ns["pyc10"],
        "torch_ns": ns["torch"],
        "numpy_ns": ns["numpy"],
        "vs_torch": vs_torch,
        "vs_numpy": vs_numpy,
        "met": not missed,
        "missed": missed,
        **{f"{lib}_stmt": res.cells[lib].stmt for lib in LIBS},
        **{f"{lib}_status": res.cells[lib].status for lib in LIBS},
        **{f"{lib}_message": res.cells[lib].message for lib in LIBS if res.cells[lib].message},
    }


def target_text(rec: dict[str, Any]) -> str:
    parts = [f"<={TORCH_TARGET:g}t"]
    if rec["numpy_stmt"] is not None:
        parts.append(f"<={NUMPY_TARGET:g}n")
    if rec["hot"]:
        parts.append(f"<={HOT_NS:g}ns")
    missed = rec["missed"]
    if not missed:
        mark = "ok"
    elif missed[0] in ("missing", "error"):
        mark = missed[0]
    else:
        mark = "over " + ",".join(f"{HOT_NS:g}ns" if m == "ns" else m for m in missed)
    return f"{' '.join(parts):18} {mark}"


def fmt_ns(value: float | None, status: str) -> str:
    if value is not None:
        return f"{value:10.1f}"
    return f"{'-' if status == 'none' else status:>10}"


def fmt_ratio(value: float | None) -> str:
    return f"{value:8.2f}" if value is not None else f"{'-':>8}"


def verdict(judged: bool, met: bool) -> bool | None:
    """A target's verdict: None when this run has no row to judge it on (a --filter left none)."""
    return met if judged else None


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The summary's counts and the four targets, judged."""
    have = [r for r in records if r["pyc10_status"] == "ok"]
    absent = [r["row"] for r in records if r["pyc10_status"] == "missing"]
    failing = [r["row"] for r in records if r["pyc10_status"] == "error"]
    vs_torch = [r for r in records if r["vs_torch"] is not None]
    within = [r for r in vs_torch if r["vs_torch"] <= TORCH_TARGET]
    over_torch = [r["row"] for r in vs_torch if r["vs_torch"] > TORCH_TARGET]
    median = statistics.median(r["vs_torch"] for r in vs_torch) if vs_torch else None
    vs_numpy = [r for r in records if r["vs_numpy"] is not None]
    over_numpy = [r["row"] for r in vs_numpy if r["vs_numpy"] > NUMPY_TARGET]
    hot = {r["row"]: r["pyc10_ns"] for r in records if r["hot"]}
    hot_met = all(v is not None and v <= HOT_NS for v in hot.values())
    targets = {
        f"every row <= {TORCH_TARGET:g}x torch (none missing)": verdict(
            bool(vs_torch or absent or failing), not (over_torch or absent or failing)
        ),
        f"median <= {MEDIAN_TARGET:g}x torch": verdict(
            median is not None, median is not None and median <= MEDIAN_TARGET
        ),
        f"<= {NUMPY_TARGET:g}x numpy where numpy has the operation": verdict(
            bool(vs_numpy), not over_numpy
        ),
        f"create+drop and hottest views <= {HOT_NS:g} ns": verdict(bool(hot), hot_met),
    }
    return {
        "rows": len(records),
        "pyc10_has": len(have),
        "missing": absent,
        "error": failing,
        "vs_torch_rows": len(vs_torch),
        "within_torch": len(within),
        "over_torch": over_torch,
        "median_vs_torch": median,
        "vs_numpy_rows": len(vs_numpy),
        "over_numpy": over_numpy,
        "hot_ns": hot,
        "targets": targets,
    }


def wrap(names: Sequence[str], indent: str = "    ", width: int = 100) -> str:
    lines, line = [], indent
    for name in names:
        if len(line) + len(name) + 2 > width and line.strip():
            lines.append(line.rstrip())
            line = indent
        line += name + "; "
    lines.append(line.rstrip().rstrip(";"))
    return "\n".join(lines)


def print_report(records: list[dict[str, Any]], summary: dict[str, Any]) -> None:
    print(
        f"target: <={TORCH_TARGET:g}t pyc10/torch at most {TORCH_TARGET:g}, <={NUMPY_TARGET:g}n "
        f"pyc10/numpy at most {NUMPY_TARGET:g}, <={HOT_NS:g}ns pyc10 at most {HOT_NS:g} ns per call"
    )
    print(
        f"{'row':40} {'pyc10 ns':>10} {'torch ns':>10} {'numpy ns':>10} "
        f"{'/torch':>8} {'/numpy':>8}  target"
    )
    for r in records:
        figures = " ".join(fmt_ns(r[f"{lib}_ns"], r[f"{lib}_status"]) for lib in LIBS)
        ratios = f"{fmt_ratio(r['vs_torch'])} {fmt_ratio(r['vs_numpy'])}"
        print(f"{r['row'][:40]:40} {figures} {ratios}  {target_text(r)}")
    s = summary
    print()
    missing, raising = len(s["missing"]), len(s["error"])
    measured = s["pyc10_has"]
    print(f"rows: {s['rows']} ({measured} measured on pyc10, {missing} missing, {raising} raising)")
    within, both = s["within_torch"], s["vs_torch_rows"]
    print(f"<= {TORCH_TARGET:g}x torch: {within} of {both} rows measured on both")
    median = "-" if s["median_vs_torch"] is None else f"{s['median_vs_torch']:.2f}x"
    print(f"median pyc10/torch: {median} (target <= {MEDIAN_TARGET:g}x)")
    over, has = len(s["over_numpy"]), s["vs_numpy_rows"]
    print(f"over {NUMPY_TARGET:g}x numpy: {over} of {has} rows numpy has (target: none)")
    if s["over_numpy"]:
        print(wrap(s["over_numpy"]))
    hot = "; ".join(f"{k} {'-' if v is None else f'{v:.0f}'}" for k, v in s["hot_ns"].items())
    hot = hot or "none in this run"
    print(f"create+drop and hottest views, pyc10 ns (target <= {HOT_NS:g}, aim 60-90): {hot}")
    if s["missing"]:
        print(f"missing in pyc10 ({len(s['missing'])}):")
        print(wrap(s["missing"]))
    if s["error"]:
        print(f"raising in pyc10 ({len(s['error'])}):")
        for r in records:
            if r["pyc10_status"] == "error":
                print(f"    {r['row']}: {r['pyc10_message'][:120]}")
    broken = [r for r in records if r["torch_status"] in ("missing", "error")]
    for r in broken:
        print(f"torch {r['torch_status']}: {r['row']}: {r['torch_message'][:120]}")
    judged = {k: v for k, v in s["targets"].items() if v is not None}
    print(f"targets met: {sum(judged.values())} of {len(judged)} judged in this run")
    for k, v in s["targets"].items():
        print(f"    {'no rows' if v is None else 'met' if v else 'not met':7}  {k}")


def main(argv: list[str]) -> int:
    """Measure the rows, print the table and the summary (and write JSON when asked)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="samples per cell, best kept (5)")
    parser.add_argument("--number", type=int, default=20000, help="calls per sample (20000)")
    parser.add_argument("--filter", help="only rows whose label contains this (any case)")
    parser.add_argument("--json", help="write the rows and the summary to this file")
    parser.add_argument("--quick", action="store_true", help="CI smoke: 1 repeat of few calls")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.number < 1:
        parser.error("--repeat and --number must be at least 1")
    sample_s = SAMPLE_S
    if args.quick:
        args.repeat, args.number, sample_s = 1, min(args.number, 100), QUICK_SAMPLE_S
    rows = ROWS
    if args.filter:
        rows = [r for r in ROWS if args.filter.lower() in r.label.lower()]
    # torch's TypedStorage deprecation and the like would print once per call site
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    start = time.perf_counter()
    results = prepare(rows, args.number, sample_s)
    overhead = measure(results, args.repeat, args.number)
    records = [row_record(res, overhead) for res in results]
    summary = summarize(records)
    elapsed = time.perf_counter() - start
    print(
        f"pyc10 {pyc10.__version__}, torch {torch.__version__}, numpy {np.__version__}, "
        f"Python {platform.python_version()}; best of {args.repeat} x up to {args.number} calls, "
        f"loop overhead {overhead * 1e9:.1f} ns subtracted; {elapsed:.0f} s"
    )
    print_report(records, summary)
    if args.json:
        meta = {
            "pyc10": pyc10.__version__,
            "torch": torch.__version__,
            "numpy": np.__version__,
            "python": platform.python_version(),
            "machine": platform.machine(),
            "repeat": args.repeat,
            "number": args.number,
            "overhead_ns": overhead * 1e9,
            "seconds": elapsed,
            "targets": {
                "torch": TORCH_TARGET,
                "median": MEDIAN_TARGET,
                "numpy": NUMPY_TARGET,
                "hot_ns": HOT_NS,
            },
        }
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"meta": meta, "rows": records, "summary": summary}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
