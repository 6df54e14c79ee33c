"""The factories and joins of torch that pyc10._ctensor binds (arange, cat, stack, ...).

Beside them, the small module functions torch writes in Python (broadcast_shapes, typename,
is_storage).

frombuffer and asarray are bound by the extension's parser (torch's signatures and messages)
and finished here: the buffer protocol is outside the limited C API the extension keeps to.
"""

from __future__ import annotations

import builtins
import sys
from collections.abc import Callable, Sequence
from typing import Any

from . import _ctensor
from ._dtype import _BY_VALUE, DTYPE_NAMES, dtype
from ._errors import C10NotImplementedError, C10RuntimeError, C10ValueError
from ._layout import MEMORY_FORMATS, memory_format
from ._storage import UntypedStorage
from ._tensor import Size, Tensor, from_dlpack, from_numpy
from ._tensor import tensor as _new_tensor
from ._typed_storage import TypedStorage

arange: Callable[..., Tensor] = _ctensor.arange
"""The values start, start + step, ... below end, as ``torch.arange`` (int64 when start, end
and step are all integers, else the default dtype)."""
cat: Callable[..., Tensor] = _ctensor.cat
"""tensors joined along dim, as ``torch.cat``: promoted to their result_type; legacy empty 1-dim
tensors are skipped."""
concat: Callable[..., Tensor] = _ctensor.concat
"""``cat(tensors, dim)``, as ``torch.concat``."""
concatenate: Callable[..., Tensor] = _ctensor.concatenate
"""``cat(tensors, dim)``, as ``torch.concatenate``."""
stack: Callable[..., Tensor] = _ctensor.stack
"""Tensors of one shape joined along a new dimension dim, as ``torch.stack``."""
result_type: Callable[..., dtype] = _ctensor.result_type
"""The dtype an operation on tensor/scalar arguments gives, as ``torch.result_type``."""
promote_types: Callable[[dtype, dtype], dtype] = _ctensor.promote_types
"""The smallest dtype both can be cast to, as ``torch.promote_types`` (c10's rules)."""
can_cast: Callable[[dtype, dtype], bool] = _ctensor.can_cast
"""Whether casting is allowed under torch's casting rules, as ``torch.can_cast``."""
view_as_real: Callable[[Tensor], Tensor] = _ctensor.view_as_real
"""A complex tensor's memory as (real, imag) pairs in a new last dim, as ``torch.view_as_real``."""
view_as_complex: Callable[[Tensor], Tensor] = _ctensor.view_as_complex
"""A last dimension of size 2 viewed as complex numbers, as ``torch.view_as_complex``."""
frombuffer: Callable[..., Tensor] = _ctensor.frombuffer
"""A 1-dim CPU tensor over a buffer's memory, as ``torch.frombuffer`` (zero-copy: it keeps the
buffer alive; a read-only buffer gives a read-only tensor, where torch only warns)."""
from_file: Callable[..., Tensor] = _ctensor.from_file
"""A 1-dim CPU tensor over a memory-mapped file, as ``torch.from_file``: ``size`` elements of
``dtype`` mapped shared (writes reach the file, which is created or grown) or privately."""
asarray: Callable[..., Tensor] = _ctensor.asarray
"""obj as a tensor, as ``torch.asarray``: tensors, numpy arrays and scalars, DLPack producers and
buffers are shared where dtype and device allow (copy=False refuses a copy), other data copied."""

#: torch.legacy_contiguous_format: the same object as contiguous_format.
legacy_contiguous_format: memory_format = MEMORY_FORMATS["contiguous_format"]


def _grad_check(d: dtype, requires_grad: builtins.bool) -> None:
    """Refuse requires_grad as torch does for other dtypes; pyc10 has no autograd for the rest."""
    if not requires_grad:
        return
    if not (d.is_floating_point or d.is_complex):
        raise C10RuntimeError(
            "Only Tensors of floating point and complex dtype can require gradients"
        )
    raise C10NotImplementedError("requires_grad=True: pyc10 has no autograd")


def _frombuffer(
    buffer: Any, code: int, count: int, offset: int, requires_grad: builtins.bool
) -> Tensor:
    """Make frombuffer's tensor (torch's tensor_frombuffer) once the parser bound the arguments."""
    d = _BY_VALUE[code]
    try:
        view = memoryview(buffer)
    except TypeError:
        raise C10ValueError("object does not implement Python buffer protocol.") from None
    if not view.c_contiguous:
        raise C10RuntimeError("could not retrieve buffer from object")
    length = view.nbytes
    elsize = d.itemsize
    if length <= 0 or count == 0:
        raise C10ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise C10ValueError(
            f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
            f"({length} bytes) minus 1"
        )
    if count < 0 and (length - offset) % elsize != 0:
        raise C10ValueError(
            f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
            f"multiple of element size ({elsize})"
        )
    actual = (length - offset) // elsize if count < 0 else count
    if offset + actual * elsize > length:
        raise C10ValueError(
            f"requested buffer length ({actual} * {elsize} bytes) after offset ({offset} bytes) "
            f"must not be greater than actual buffer length ({length} bytes)"
        )
    _grad_check(d, requires_grad)
    import numpy  # not at import: import pyc10 stays free of numpy's start-up time

    data = numpy.frombuffer(view.cast("B"), numpy.uint8, actual * elsize, offset)
    t = from_numpy(data)  # the array holds the memoryview, which holds the buffer
    return t if d is DTYPE_NAMES["uint8"] else t.view(d)


def _is_buffer(obj: Any) -> builtins.bool:
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def _aliasable(obj: Any, d: dtype | None) -> Tensor | None:
    """Obj as a tensor over its own memory: a tensor, array, DLPack producer or buffer."""
    if isinstance(obj, Tensor):
        return obj
    numpy = sys.modules.get("numpy")  # no numpy object exists unless numpy is imported
    if numpy is not None and isinstance(obj, numpy.ndarray):
        return from_numpy(obj)
    if numpy is not None and isinstance(obj, numpy.generic):
        return from_numpy(numpy.asarray(obj))
    if type(obj).__name__ == "PyCapsule" or hasattr(obj, "__dlpack__"):
        return from_dlpack(obj)
    if _is_buffer(obj):
        return frombuffer(obj, dtype=d if d is not None else _ctensor.get_default_dtype())
    return None


def _asarray(
    obj: Any, code: int, device: Any, copy: builtins.bool | None, requires_grad: builtins.bool
) -> Tensor:
    """Make asarray's tensor (torch's, in tensor_new.cpp) once the parser bound the arguments."""
    d = _BY_VALUE[code] if code >= 0 else None
    t = _aliasable(obj, d)
    if t is None:
        if copy is False:
            raise C10ValueError("can't alias arbitrary sequence into a tensor.")
        t = _new_tensor(obj, dtype=d, device=device)
        _grad_check(t.dtype, requires_grad)
        return t
    wrong_device = device is not None and device != t.device
    wrong_dtype = d is not None and d != t.dtype
    if copy or (copy is None and (wrong_device or wrong_dtype)):
        if wrong_device or wrong_dtype:
            t = t.to(
                device if device is not None else t.device,
                d if d is not None else t.dtype,
                False,
                builtins.bool(copy),
            )
        else:
            t = t.clone()
    else:
        if wrong_device:
            raise C10ValueError(f"can't alias tensor from device '{t.device}' to '{device}'.")
        if wrong_dtype:
            raise C10ValueError(
                f"can't alias tensor with dtype '{_c10_name(t.dtype)}' into dtype '{_c10_name(d)}'."
            )
    _grad_check(t.dtype, requires_grad)
    return t


def _c10_name(d: Any) -> str:
    """c10's ScalarType name ("Float", "Long"), as torch prints a dtype in C++ messages."""
    from ._lib import ffi, lib

    return builtins.str(ffi.string(lib.c10c_dtype_c10_name(d.value)).decode())


def broadcast_shapes(*shapes: Any) -> Size:
    """The shape tensors of these shapes broadcast to, as ``torch.broadcast_shapes``.

    Each shape is an int, a sequence of ints or None (ignored); incompatible shapes raise
    RuntimeError with torch's message.
    """
    given = tuple((s,) if isinstance(s, builtins.int) else s for s in shapes if s is not None)
    if not given:
        return Size([])
    for shape in given:
        if not isinstance(shape, Sequence):
            raise C10RuntimeError(
                "Input shapes should be of type ints, a tuple of ints, or a list of ints, got "
                f"{shape}"
            )
    common: list[Any] = [1] * max(len(s) for s in given)
    for arg_idx, shape in enumerate(given):
        for idx in range(-1, -1 - len(shape), -1):
            if shape[idx] == common[idx]:
                continue
            if common[idx] == 1:
                if shape[idx] < 0:
                    raise C10ValueError("Attempting to broadcast a dimension with negative length!")
                common[idx] = shape[idx]
            if shape[idx] == 1:
                continue
            if common[idx] != shape[idx]:
                raise C10RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[idx]} at {idx}! "
                    f"Mismatching argument at index {arg_idx} had {shape}; but expected shape "
                    f"should be broadcastable to {common}"
                )
    return Size(common)


def typename(obj: Any, /) -> str:
    """The fully qualified name of obj's type (a tensor's legacy type), as ``torch.typename``."""
    if isinstance(obj, Tensor):
        return builtins.str(obj.type())
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    if module in {"", "builtins"}:
        return builtins.str(qualname)
    return f"{module}.{qualname}"


def is_storage(obj: Any, /) -> builtins.bool:
    """Whether obj is a pyc10 storage (UntypedStorage or TypedStorage), as ``torch.is_storage``."""
    return type(obj) in (UntypedStorage, TypedStorage)
