"""The meta device as torch 2.13 has it: tensors and storages with sizes, strides and dtypes but no
data. Every case calls torch and pyc10 the same way and compares what comes out: the geometry of
the tensors made (sizes, strides, offset, dtype, device, storage size), reprs, and for refusals
the builtin exception class and the message.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import pyc10


def normalize(v: Any) -> Any:
    """What a result looks like to a user, with torch's and pyc10's names made the same."""
    if isinstance(v, (torch.Tensor, pyc10.Tensor)):
        return (
            "tensor",
            tuple(v.shape),
            tuple(v.stride()),
            v.storage_offset(),
            str(v.dtype).split(".")[-1],
            str(v.device),
            v.untyped_storage().nbytes(),
            v.untyped_storage().data_ptr(),
        )
    if isinstance(v, (torch.UntypedStorage, pyc10.UntypedStorage)):
        return ("storage", str(v.device), v.nbytes(), v.data_ptr())
    if isinstance(v, (torch.device, pyc10.device)):
        return ("device", str(v))
    if isinstance(v, (torch.Size, pyc10.Size)):
        return ("size", tuple(v))
    if isinstance(v, str):
        return v.replace("torch.storage.", "pyc10.").replace("torch.", "pyc10.")
    if isinstance(v, (tuple, list)):
        return type(v)(normalize(x) for x in v)
    return v


def builtin_class(e: BaseException) -> type:
    """The builtin exception class a caller catches (pyc10's classes derive from torch's)."""
    return next(c for c in type(e).__mro__ if c.__module__ == "builtins")


def outcome(lib: Any, call: Callable[[Any], Any]) -> Any:
    try:
        return ("ok", normalize(call(lib)))
    except Exception as e:  # the exception is what is compared
        return ("raised", builtin_class(e), str(e))


def meta(lib: Any, *sizes: int, **kw: Any) -> Any:
    return lib.zeros(*sizes, device="meta", **kw)


def same(call: Callable[[Any], Any]) -> None:
    expected, got = outcome(torch, call), outcome(pyc10, call)
    assert got == expected


def resized(lib: Any, t: Any, *args: Any) -> Any:
    t.resize_(*args)
    return t


def is_itself(t: Any, *args: Any, **kwargs: Any) -> bool:
    return t.to(*args, **kwargs) is t


def version_after_writes(lib: Any, t: Any) -> int:
    t.copy_(lib.ones(3))
    t.fill_(1)
    t.zero_()
    return int(t._version)


def writes_after_shrinking(lib: Any, t: Any) -> tuple[Any, ...]:
    """Writes into a meta tensor whose storage shrank: no bytes to protect, nothing refused."""
    t.untyped_storage().resize_(0)
    return (t.fill_(1), t.clone(), t.copy_(lib.ones(4)))


CASES: dict[str, Callable[[Any], Any]] = {
    # factories
    "zeros": lambda lib: meta(lib, 2, 3),
    "zeros meta:1 (no index)": lambda lib: lib.zeros(2, device="meta:1"),
    "empty": lambda lib: lib.empty(2, 3, dtype=lib.int16, device="meta"),
    "ones": lambda lib: lib.ones(4, device="meta"),
    "full": lambda lib: lib.full((2, 2), 3.5, device="meta"),
    "empty_strided": lambda lib: lib.empty_strided((2, 3), (1, 2), device="meta"),
    "empty_strided gaps": lambda lib: lib.empty_strided((2, 3), (10, 3), device="meta"),
    "zeros_like of cpu": lambda lib: lib.zeros_like(lib.ones(2, 3).t(), device="meta"),
    "ones_like of meta": lambda lib: lib.ones_like(meta(lib, 2, 3).t()),
    "full_like": lambda lib: lib.full_like(meta(lib, 3), 7),
    "empty_like": lambda lib: lib.empty_like(meta(lib, 3, 4)[:, ::2]),
    "new_zeros": lambda lib: meta(lib, 2).new_zeros(4),
    "new_ones": lambda lib: meta(lib, 2).new_ones((2, 2)),
    "new_full": lambda lib: meta(lib, 2).new_full((4,), 2),
    "new_empty": lambda lib: meta(lib, 2).new_empty(4, dtype=lib.float64),
    "tensor(device=meta)": lambda lib: lib.tensor([1, 2], device="meta"),
    "huge": lambda lib: lib.empty(2**40, dtype=lib.uint8, device="meta"),
    "huge 2-d": lambda lib: lib.empty(2**20, 2**20, device="meta"),
    "negative size": lambda lib: lib.zeros(-1, device="meta"),
    # metadata
    "device": lambda lib: meta(lib, 2).device,
    "is_meta": lambda lib: meta(lib, 2).is_meta,
    "is_cpu": lambda lib: meta(lib, 2).is_cpu,
    "nbytes": lambda lib: meta(lib, 2, 3).nbytes,
    "nbytes expanded": lambda lib: meta(lib, 1).expand(10).nbytes,
    "itemsize": lambda lib: meta(lib, 1, dtype=lib.float64).itemsize,
    "element_size": lambda lib: meta(lib, 1).element_size(),
    "is_contiguous": lambda lib: meta(lib, 2, 3).t().is_contiguous(),
    "len": lambda lib: len(meta(lib, 5, 2)),
    "iter": lambda lib: list(meta(lib, 2, 3)),
    "type": lambda lib: meta(lib, 2).type(),
    "is_pinned": lambda lib: meta(lib, 2).is_pinned(),
    "pin_memory": lambda lib: meta(lib, 2).pin_memory(),
    "pin_memory int64": lambda lib: meta(lib, 2, dtype=lib.int64).pin_memory(),
    "is_shared": lambda lib: meta(lib, 2).is_shared(),
    "untyped_storage": lambda lib: meta(lib, 2, 3).untyped_storage(),
    "data_ptr": lambda lib: meta(lib, 2, 3).data_ptr(),
    "data_ptr of a view": lambda lib: meta(lib, 2, 3)[1, 1:].data_ptr(),
    "data_ptr int16 view": lambda lib: meta(lib, 8, dtype=lib.int16)[5:].data_ptr(),
    # views
    "view": lambda lib: meta(lib, 2, 3).view(3, 2),
    "view -1": lambda lib: meta(lib, 2, 3, 4).view(-1, 4),
    "view dtype": lambda lib: meta(lib, 2, 3).view(lib.int16),
    "reshape copies": lambda lib: meta(lib, 2, 3).t().reshape(6),
    "permute": lambda lib: meta(lib, 2, 3, 4).permute(2, 0, 1),
    "transpose": lambda lib: meta(lib, 2, 3, 4).transpose(0, 2),
    "t": lambda lib: meta(lib, 2, 3).t(),
    "expand": lambda lib: meta(lib, 1, 3).expand(5, 3),
    "expand_as": lambda lib: meta(lib, 3).expand_as(meta(lib, 2, 3)),
    "as_strided": lambda lib: meta(lib, 2, 3).as_strided((2, 2), (1, 1), 1),
    "as_strided past the storage": lambda lib: meta(lib, 2, 3).as_strided((20, 2), (1, 1), 1),
    "as_strided negative stride": lambda lib: meta(lib, 3).as_strided((2,), (-1,)),
    "int": lambda lib: meta(lib, 2, 3)[1],
    "negative int": lambda lib: meta(lib, 2, 3)[-1, -2],
    "int out of range": lambda lib: meta(lib, 2, 3)[5],
    "slice": lambda lib: meta(lib, 4, 6)[1:, ::2],
    "None and Ellipsis": lambda lib: meta(lib, 2, 3)[None, ..., 1],
    "bool": lambda lib: meta(lib, 2, 3)[True],
    "index tensor": lambda lib: meta(lib, 4, 3)[lib.tensor([0, 2])],
    "index list": lambda lib: meta(lib, 4, 3)[[0, 2]],
    "index out of range (unchecked)": lambda lib: meta(lib, 4)[lib.tensor([0, 5])],
    "index tensors apart": lambda lib: meta(lib, 4, 3, 5)[lib.tensor([[0], [1]]), :, [0, 1, 2]],
    "mask": lambda lib: meta(lib, 4)[lib.tensor([True, False, True, True])],
    "narrow": lambda lib: meta(lib, 4, 3).narrow(0, 1, 2),
    "select": lambda lib: meta(lib, 4, 3).select(1, 2),
    "unsqueeze": lambda lib: meta(lib, 4, 3).unsqueeze(1),
    "squeeze": lambda lib: meta(lib, 4, 1, 3).squeeze(),
    "flatten": lambda lib: meta(lib, 4, 3, 2).flatten(),
    "unflatten": lambda lib: meta(lib, 4, 6).unflatten(1, (2, 3)),
    "unfold": lambda lib: meta(lib, 8).unfold(0, 3, 2),
    "diagonal": lambda lib: meta(lib, 4, 4).diagonal(),
    "movedim": lambda lib: meta(lib, 2, 3, 4).movedim(0, 2),
    "split": lambda lib: meta(lib, 5, 2).split(2),
    "chunk": lambda lib: meta(lib, 5, 2).chunk(2, 1),
    "unbind": lambda lib: meta(lib, 3, 2).unbind(),
    # to and copies
    "to('meta')": lambda lib: lib.ones(2, 3).to("meta"),
    "to(device='meta') keeps strides": lambda lib: lib.ones(2, 3).t().to(device="meta"),
    "to meta of a strided view": lambda lib: lib.ones(4, 6)[::2, 1:].to("meta"),
    "to meta of an expanded view": lambda lib: lib.ones(1, 6).expand(4, 6).to("meta"),
    "to meta with a dtype": lambda lib: lib.ones(4, 6).to("meta", lib.float64),
    "to meta of a meta tensor is itself": lambda lib: is_itself(meta(lib, 2), "meta"),
    "to meta copy=True": lambda lib: is_itself(meta(lib, 2), "meta", copy=True),
    "meta.to(dtype)": lambda lib: meta(lib, 2, 3).to(lib.float64),
    "double": lambda lib: meta(lib, 2, 3).double(),
    "clone": lambda lib: meta(lib, 2, 3).clone(),
    "clone of a view": lambda lib: meta(lib, 4, 6)[:, 1::2].clone(),
    "contiguous": lambda lib: meta(lib, 2, 3).t().contiguous(),
    "copy_ cpu into meta": lambda lib: meta(lib, 2, 3).copy_(lib.ones(2, 3)),
    "copy_ broadcast into meta": lambda lib: meta(lib, 2, 3).copy_(lib.ones(3)),
    "copy_ bad shape into meta": lambda lib: meta(lib, 2, 3).copy_(lib.ones(4, 3)),
    "copy_ meta into meta": lambda lib: meta(lib, 2, 3).copy_(meta(lib, 2, 3)),
    "copy_ into expanded meta": lambda lib: meta(lib, 1).expand(3).copy_(lib.ones(3)),
    "copy_ complex into meta": lambda lib: meta(lib, 3).copy_(lib.ones(3, dtype=lib.complex64)),
    "copy_ meta into cpu": lambda lib: lib.zeros(2, 3).copy_(meta(lib, 2, 3)),
    "copy_ meta into cpu, bad shape": lambda lib: lib.zeros(4, 3).copy_(meta(lib, 2, 3)),
    "cpu()": lambda lib: meta(lib, 2, 3).cpu(),
    "to('cpu')": lambda lib: meta(lib, 2, 3).to("cpu"),
    "fill_": lambda lib: meta(lib, 2, 3).fill_(3),
    "zero_": lambda lib: meta(lib, 2, 3).zero_(),
    "fill_ expanded": lambda lib: meta(lib, 1).expand(3).fill_(1),
    "setitem": lambda lib: meta(lib, 2, 3).__setitem__(0, 1.0),
    "setitem with an index tensor": lambda lib: meta(lib, 4).__setitem__(lib.tensor([0, 5]), 1.0),
    "version after copy_ and fill_": lambda lib: version_after_writes(lib, meta(lib, 3)),
    "resize_": lambda lib: resized(lib, meta(lib, 2), 4, 5),
    "resize_ huge": lambda lib: resized(lib, meta(lib, 2, dtype=lib.uint8), 2**40),
    "resize_ smaller": lambda lib: resized(lib, meta(lib, 3), 1),
    "resize_as_": lambda lib: meta(lib, 3).resize_as_(lib.ones(4, 4)),
    "set_ meta storage past its size": lambda lib: lib.empty(0, device="meta").set_(
        lib.UntypedStorage(4, device="meta"), 0, (2, 3)
    ),
    "set_ cpu storage": lambda lib: meta(lib, 2).set_(lib.UntypedStorage(8)),
    "set_ cpu storage, sizes": lambda lib: meta(lib, 2).set_(lib.UntypedStorage(8), 0, (2,)),
    "set_ cpu tensor": lambda lib: meta(lib, 2).set_(lib.ones(3)),
    "set_ cpu tensor of another dtype": lambda lib: meta(lib, 2).set_(lib.ones(3, dtype=lib.int64)),
    "set_ meta storage into cpu": lambda lib: lib.zeros(2).set_(
        lib.UntypedStorage(8, device="meta")
    ),
    "set_ unequal lengths first": lambda lib: meta(lib, 2).set_(
        lib.UntypedStorage(8), 0, (2,), (1, 2)
    ),
    "shrunk storage: fill_, clone, copy_": lambda lib: writes_after_shrinking(lib, meta(lib, 4)),
    # data access
    "item": lambda lib: meta(lib).item(),
    "item of 6 elements": lambda lib: meta(lib, 2, 3).item(),
    "item of no element": lambda lib: meta(lib, 0).item(),
    "bool()": lambda lib: bool(meta(lib)),
    "float()": lambda lib: float(meta(lib, 1)),
    "int()": lambda lib: int(meta(lib)),
    "complex()": lambda lib: complex(meta(lib)),
    "__index__": lambda lib: meta(lib, dtype=lib.int64).__index__(),
    "tolist": lambda lib: meta(lib, 2, 3).tolist(),
    "tolist 0-dim": lambda lib: meta(lib).tolist(),
    "tolist empty": lambda lib: meta(lib, 0).tolist(),
    "numpy": lambda lib: meta(lib, 2).numpy(),
    "numpy(force=True)": lambda lib: meta(lib, 2).numpy(force=True),
    "__array__": lambda lib: meta(lib, 2).__array__(),
    "np.asarray": lambda lib: np.asarray(meta(lib, 2)),
    "__array_interface__": lambda lib: hasattr(meta(lib, 2), "__array_interface__"),
    "__dlpack__": lambda lib: meta(lib, 2).__dlpack__(),
    "__dlpack__ versioned": lambda lib: meta(lib, 2).__dlpack__(max_version=(1, 0)),
    "__dlpack_device__": lambda lib: meta(lib, 2).__dlpack_device__(),
    "share_memory_": lambda lib: meta(lib, 2).share_memory_(),
    "repr": lambda lib: repr(meta(lib, 2, 3)),
    "repr 0-dim": lambda lib: repr(meta(lib)),
    "repr empty": lambda lib: repr(meta(lib, 0, 3)),
    "repr int64": lambda lib: repr(meta(lib, 2, dtype=lib.int64)),
    "repr bool": lambda lib: repr(meta(lib, 2, dtype=lib.bool)),
    "str": lambda lib: str(meta(lib, 2, 3)),
    "format": lambda lib: f"{meta(lib, 2)}",
    # pickling and copies
    "pickle": lambda lib: pickle.loads(pickle.dumps(meta(lib, 2, 3))),
    "pickle a view": lambda lib: pickle.loads(pickle.dumps(meta(lib, 4, 6)[1:, ::2])),
    "pickle int16": lambda lib: pickle.loads(pickle.dumps(meta(lib, 4, dtype=lib.int16))),
    "copy.copy": lambda lib: copy.copy(meta(lib, 2)),
    "copy.deepcopy": lambda lib: copy.deepcopy(meta(lib, 2)),
    # storages
    "UntypedStorage(4, device='meta')": lambda lib: lib.UntypedStorage(4, device="meta"),
    "storage huge": lambda lib: lib.UntypedStorage(2**40, device="meta"),
    "storage repr": lambda lib: repr(lib.UntypedStorage(4, device="meta")),
    "storage str": lambda lib: str(lib.UntypedStorage(4, device="meta")),
    "tensor's storage repr": lambda lib: repr(meta(lib, 2, 3).untyped_storage()),
    "storage len": lambda lib: len(lib.UntypedStorage(4, device="meta")),
    "storage data_ptr": lambda lib: lib.UntypedStorage(4, device="meta").data_ptr(),
    "storage [0]": lambda lib: lib.UntypedStorage(4, device="meta")[0],
    "storage [1:3]": lambda lib: lib.UntypedStorage(4, device="meta")[1:3],
    "storage [0] = 1": lambda lib: lib.UntypedStorage(4, device="meta").__setitem__(0, 1),
    "storage tolist": lambda lib: lib.UntypedStorage(4, device="meta").tolist(),
    "storage tolist empty": lambda lib: lib.UntypedStorage(0, device="meta").tolist(),
    "storage iter": lambda lib: list(lib.UntypedStorage(4, device="meta")),
    "storage iter empty": lambda lib: list(lib.UntypedStorage(0, device="meta")),
    "storage [1:1]": lambda lib: lib.UntypedStorage(4, device="meta")[1:1],
    "storage resize_": lambda lib: lib.UntypedStorage(4, device="meta").resize_(10),
    "storage resize_ huge": lambda lib: lib.UntypedStorage(0, device="meta").resize_(2**50),
    "tensor's storage resize_": lambda lib: meta(lib, 2).untyped_storage().resize_(100),
    "storage fill_": lambda lib: lib.UntypedStorage(4, device="meta").fill_(1),
    "storage clone": lambda lib: lib.UntypedStorage(4, device="meta").clone(),
    "storage cpu": lambda lib: lib.UntypedStorage(4, device="meta").cpu(),
    "storage copy_ from cpu": lambda lib: lib.UntypedStorage(3, device="meta").copy_(
        lib.UntypedStorage(3)
    ),
    "storage copy_ into cpu": lambda lib: lib.UntypedStorage(3).copy_(
        lib.UntypedStorage(3, device="meta")
    ),
    "storage copy_ sizes differ": lambda lib: lib.UntypedStorage(3, device="meta").copy_(
        lib.UntypedStorage(5)
    ),
    "storage pickle": lambda lib: pickle.dumps(lib.UntypedStorage(3, device="meta")),
    "storage is_shared": lambda lib: lib.UntypedStorage(3, device="meta").is_shared(),
    "storage share_memory_": lambda lib: lib.UntypedStorage(3, device="meta").share_memory_(),
    "storage is_pinned": lambda lib: lib.UntypedStorage(3, device="meta").is_pinned(),
    "storage element_size": lambda lib: lib.UntypedStorage(3, device="meta").element_size(),
}


@pytest.mark.parametrize("name", list(CASES))
def test_meta_matches_torch(name: str) -> None:
    same(CASES[name])


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
@pytest.mark.parametrize(
    "call",
    [
        lambda lib: repr(meta(lib, 3, dtype=lib.int16).storage()),
        lambda lib: len(meta(lib, 3, dtype=lib.int16).storage()),
        lambda lib: meta(lib, 3, dtype=lib.int16).storage().tolist(),
        lambda lib: meta(lib, 3, dtype=lib.int16).storage()[0],
        lambda lib: meta(lib, 3).storage().cpu(),
    ],
    ids=["repr", "len", "tolist", "[0]", "cpu"],
)
def test_typed_storage_of_a_meta_tensor_matches_torch(call: Callable[[Any], Any]) -> None:
    same(call)


def test_refusals_are_pyc10_errors_of_torchs_classes() -> None:
    t = pyc10.zeros(2, 3, device="meta")
    with pytest.raises(pyc10.C10Error) as info:
        t.cpu()
    assert isinstance(info.value, NotImplementedError)
    with pytest.raises(pyc10.C10Error) as info:
        t[0, 0].item()
    assert isinstance(info.value, RuntimeError)


def test_a_huge_meta_tensor_allocates_no_memory() -> None:
    before = pyc10.memory.stats()["allocated_bytes.all.current"]
    t = pyc10.empty(2**30, 2**10, dtype=pyc10.uint8, device="meta")
    views = [t.t(), t[1:, ::3], t.view(-1), t.clone(), t.contiguous()]
    t.untyped_storage().resize_(2**50)
    assert t.untyped_storage().nbytes() == 2**50
    assert pyc10.memory.stats()["allocated_bytes.all.current"] == before
    assert all(v.is_meta and v.untyped_storage().data_ptr() == 0 for v in views)


def _on(lib: Any, device: str, data: list[Any], **kw: Any) -> Any:
    return lib.tensor(data, device=device, **kw)


def _geometry(t: Any) -> Any:
    return tuple(t.shape), tuple(t.stride()), str(t.dtype).split(".")[-1], str(t.device)


def _indexed(lib: Any, call: Callable[[Any], Any]) -> Any:
    """A getitem's geometry (a CPU result's memory is uninitialized, as torch's), or its error."""
    try:
        return ("ok", _geometry(call(lib)))
    except Exception as e:  # the exception is what is compared
        return ("raised", builtin_class(e), normalize(str(e)))


# the meta index kernel runs when any operand is meta: no index value is read or checked, a mask
# must be on a real device (its nonzero elements), and the checks say torch's meta words
META_INDEXING: dict[str, Callable[[Any], Any]] = {
    "meta[meta long]": lambda lib: meta(lib, 5, 3)[_on(lib, "meta", [0, 2])],
    "meta[meta int32]": lambda lib: meta(lib, 4, 5)[_on(lib, "meta", [1, 2], dtype=lib.int32)],
    "meta[meta long, meta long]": lambda lib: meta(lib, 5, 4)[
        _on(lib, "meta", [0, 2]), _on(lib, "meta", [[1], [3]])
    ],
    "meta[:, meta long]": lambda lib: meta(lib, 5, 4)[:, _on(lib, "meta", [0, 2])],
    "meta[meta, :, meta] apart": lambda lib: meta(lib, 4, 5, 6)[
        _on(lib, "meta", [1, 2]), :, _on(lib, "meta", [0, 1])
    ],
    "meta.t()[meta]": lambda lib: meta(lib, 4, 5).t()[_on(lib, "meta", [1, 2])],
    "meta of size 0 [meta]": lambda lib: meta(lib, 0, 5)[_on(lib, "meta", [1, 2])],
    "meta[meta out of range]": lambda lib: meta(lib, 3, 5)[_on(lib, "meta", [1, 7])],
    "meta[[meta long]]": lambda lib: meta(lib, 4)[[_on(lib, "meta", [1])]],
    "cpu[meta long]": lambda lib: lib.zeros(5)[_on(lib, "meta", [0, 2])],
    "cpu[:, meta 2-d]": lambda lib: lib.zeros(4, 5)[:, _on(lib, "meta", [[1, 2]])],
    "cpu.t()[meta 2-d]": lambda lib: lib.zeros(4, 5).t()[_on(lib, "meta", [[1, 2]])],
    "meta[cpu long]": lambda lib: meta(lib, 5)[_on(lib, "cpu", [0, 2])],
    "meta[cpu mask]": lambda lib: meta(lib, 3)[_on(lib, "cpu", [True, False, True])],
    "meta[cpu bad mask]": lambda lib: meta(lib, 4)[_on(lib, "cpu", [True, False, True])],
    "meta[cpu bad 2-d mask]": lambda lib: meta(lib, 4, 2)[_on(lib, "cpu", [[True, False, True]])],
    "meta[:, cpu bad mask]": lambda lib: meta(lib, 4, 5)[:, _on(lib, "cpu", [True, False])],
    "meta[cpu 2-d mask, cpu bad mask]": lambda lib: meta(lib, 2, 3, 4)[
        lib.ones(2, 3, dtype=lib.bool), lib.ones(5, dtype=lib.bool)
    ],
    "meta[cpu bad 2-d mask at dim 1]": lambda lib: meta(lib, 2, 3, 4)[
        lib.ones(2, 2, dtype=lib.bool)
    ],
    "meta[cpu int8 'mask']": lambda lib: meta(lib, 4)[_on(lib, "cpu", [1], dtype=lib.int8)],
    "meta[cpu uint8]": lambda lib: meta(lib, 4)[_on(lib, "cpu", [1], dtype=lib.uint8)],
    "meta[meta float]": lambda lib: meta(lib, 4)[_on(lib, "meta", [1.0])],
    "meta[meta 0-dim long]": lambda lib: meta(lib, 3)[_on(lib, "meta", 1)],
    "meta[meta 0-dim bool]": lambda lib: meta(lib, 3)[_on(lib, "meta", True)],
    "cpu[meta 0-dim long]": lambda lib: lib.zeros(3)[_on(lib, "meta", 1)],
    "meta[meta, meta] not broadcastable": lambda lib: meta(lib, 4, 5)[
        _on(lib, "meta", [1, 2]), _on(lib, "meta", [1, 2, 3])
    ],
    "meta[meta 2-d, meta 2-d, meta] not broadcastable": lambda lib: meta(lib, 4, 5, 6)[
        _on(lib, "meta", [[1, 2]]), _on(lib, "meta", [[1], [2]]), _on(lib, "meta", [1, 2, 3])
    ],
    "cpu[meta, cpu] not broadcastable": lambda lib: lib.zeros(4, 5)[
        _on(lib, "meta", [1, 2]), _on(lib, "cpu", [1, 2, 3])
    ],
}


@pytest.mark.parametrize("name", list(META_INDEXING))
def test_indexing_with_a_meta_operand_runs_torchs_meta_kernel(name: str) -> None:
    assert _indexed(pyc10, META_INDEXING[name]) == _indexed(torch, META_INDEXING[name])


@pytest.mark.parametrize("self_device", ["cpu", "meta"])
def test_a_meta_mask_cannot_index_as_torchs_nonzero(self_device: str) -> None:
    # torch's meta nonzero() is data-dependent: NotImplementedError (its first sentence here)
    errors = []
    for lib in (torch, pyc10):
        mask = _on(lib, "meta", [True, False, True])
        with pytest.raises(NotImplementedError) as info:
            lib.zeros(3, 2, device=self_device)[mask]
        errors.append(str(info.value))
    assert errors[0].startswith(errors[1]) and "nonzero()" in errors[1]


@pytest.mark.parametrize("value_device", ["cpu", "meta", None])
@pytest.mark.parametrize("index_device", ["cpu", "meta"])
@pytest.mark.parametrize("self_device", ["cpu", "meta"])
@pytest.mark.parametrize("index", ["long", "mask", "bad mask", "out of range", "float"])
def test_setitem_with_a_meta_operand_checks_and_writes_nothing_as_torch(
    index: str, self_device: str, index_device: str, value_device: str | None
) -> None:
    # torch's meta index_put_ returns self: no check, no write, whichever operand is meta
    def call(lib: Any) -> Any:
        t = lib.zeros(5, 3, device=self_device)
        i = {
            "long": [0, 2],
            "mask": [True, False, True, False, True],
            "bad mask": [True, False, True],
            "out of range": [0, 9],
            "float": [1.0],
        }[index]
        value = 1.5 if value_device is None else lib.ones(3, device=value_device)
        try:
            t[_on(lib, index_device, i)] = value
        except Exception as e:  # the exception is what is compared
            return ("raised", builtin_class(e), normalize(str(e)))
        return ("ok", _geometry(t), t.tolist() if self_device == "cpu" else None)

    assert call(pyc10) == call(torch)


def test_setitem_with_a_meta_0_dim_index_calls_item_as_torch() -> None:
    for lib in (torch, pyc10):
        t = lib.zeros(4, device="meta")
        with pytest.raises(RuntimeError, match=r"Tensor.item\(\) cannot be called on meta"):
            t[_on(lib, "meta", 1)] = 1.0
