"""Tensors: ``pyc10.Tensor`` over libc10c's tensor object, with torch's names and behaviour.

This first part covers creation (``empty``, ``empty_strided``) and metadata; views, copies and
data access follow.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, cast, final

from ._device import _from_c as _device_from_c
from ._device import device as _device_cls
from ._dispatch import DispatchKeySet
from ._dtype import DTYPE_NAMES, dtype
from ._errors import C10RuntimeError, C10TypeError, check, raise_status
from ._layout import LAYOUTS, MEMORY_FORMATS, memory_format
from ._lib import ffi, lib
from ._storage import UntypedStorage

__all__ = ["Size", "Tensor", "empty", "empty_strided"]

_DTYPES_BY_VALUE = {d.value: d for d in DTYPE_NAMES.values()}
_FLOAT32 = DTYPE_NAMES["float32"]
_CONTIGUOUS = MEMORY_FORMATS["contiguous_format"]
_STRIDED = LAYOUTS["strided"]
_release = lib.c10c_tensor_release
_gc = ffi.gc
_BOOL_PTR = ffi.typeof("bool *")
_TENSOR_PTR = ffi.typeof("c10c_tensor **")
_INT64_MAX = (1 << 63) - 1
_I64_PTR = ffi.typeof("int64_t *")


@final
class Size(tuple):  # type: ignore[type-arg]
    """A tensor's shape, as ``torch.Size``: a tuple of ints printed ``pyc10.Size([2, 3])``."""

    __module__ = "pyc10"
    __slots__ = ()

    def __repr__(self) -> str:
        return f"pyc10.Size({list(self)!r})"

    def numel(self) -> int:
        """The number of elements a tensor of this shape has."""
        n = 1
        for s in self:
            n *= s
        return n


def _int_list(values: Sequence[Any], what: str, allow_bool: bool = False) -> list[int]:
    # torch's argument parser takes bools as sizes (True is 1) but not as strides.
    out = []
    for i, v in enumerate(values):
        if (isinstance(v, bool) and not allow_bool) or not hasattr(v, "__index__"):
            raise C10TypeError(
                f"{what} must be tuple of ints, but found element of type "
                f"{type(v).__name__} at pos {i}"
            )
        out.append(operator.index(v))
    return out


def _sizes_from_args(args: tuple[Any, ...], name: str, argname: str = "size") -> list[int]:
    if not args:
        raise C10TypeError(f'{name}() missing 1 required positional arguments: "{argname}"')
    if len(args) == 1 and isinstance(args[0], (tuple, list, Size)):
        return _int_list(args[0], f"{name}(): argument '{argname}'", allow_bool=True)
    return _int_list(args, f"{name}(): argument '{argname}'", allow_bool=True)


def _check_dtype(d: Any) -> dtype:
    if d is None:
        return _FLOAT32
    if type(d) is not dtype:
        raise C10TypeError(f"dtype must be pyc10.dtype, not {type(d).__name__}")
    return d


def _check_device(d: Any) -> _device_cls:
    return _device_cls("cpu" if d is None else d)


@final
class Tensor:
    """A view of a storage with sizes, strides, an offset, a dtype and a device (torch.Tensor)."""

    __module__ = "pyc10"
    __slots__ = ("__weakref__", "_handle")

    _handle: Any

    def __new__(cls, *args: Any, **kwargs: Any) -> Tensor:
        raise C10TypeError("create tensors with pyc10.empty, pyc10.empty_strided, ...")

    @classmethod
    def _wrap(cls, handle: Any) -> Tensor:
        """Own a new reference (``c10c_tensor *``), raising the library's error if it is NULL."""
        if handle == ffi.NULL:
            raise_status(lib.c10c_last_error_status())
        self = object.__new__(cls)
        self._handle = _gc(handle, _release)
        return self

    # ---- shape ----

    @property
    def shape(self) -> Size:
        """The sizes, as ``torch.Tensor.shape``."""
        n = lib.c10c_tensor_dim(self._handle)
        return Size(ffi.unpack(lib.c10c_tensor_sizes(self._handle), n))

    def size(self, dim: int | None = None) -> Any:
        """The shape, or one dimension's size (negative dims count from the end)."""
        if dim is None:
            return self.shape
        out = ffi.new(_I64_PTR)
        check(lib.c10c_tensor_size(out, self._handle, operator.index(dim)))
        return int(out[0])

    def stride(self, dim: int | None = None) -> Any:
        """The strides in elements, or one dimension's stride."""
        if dim is None:
            n = lib.c10c_tensor_dim(self._handle)
            return tuple(ffi.unpack(lib.c10c_tensor_strides(self._handle), n))
        out = ffi.new(_I64_PTR)
        check(lib.c10c_tensor_stride(out, self._handle, operator.index(dim)))
        return int(out[0])

    def storage_offset(self) -> int:
        """Offset of the first element in the storage, in elements."""
        return int(lib.c10c_tensor_storage_offset(self._handle))

    def dim(self) -> int:
        """Number of dimensions."""
        return int(lib.c10c_tensor_dim(self._handle))

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return self.dim()

    def numel(self) -> int:
        """Number of elements."""
        return int(lib.c10c_tensor_numel(self._handle))

    def __len__(self) -> int:
        if self.dim() == 0:
            raise C10TypeError("len() of a 0-d tensor")
        return int(lib.c10c_tensor_sizes(self._handle)[0])

    # ---- element type and place ----

    @property
    def dtype(self) -> dtype:
        """The element type."""
        return _DTYPES_BY_VALUE[lib.c10c_tensor_dtype(self._handle)]

    @property
    def device(self) -> _device_cls:
        """The device of the elements."""
        return _device_from_c(lib.c10c_tensor_device(self._handle))

    @property
    def layout(self) -> Any:
        """``pyc10.strided``."""
        return _STRIDED

    def element_size(self) -> int:
        """Bytes per element."""
        return int(lib.c10c_tensor_itemsize(self._handle))

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self.element_size()

    @property
    def nbytes(self) -> int:
        """numel() * itemsize."""
        return int(lib.c10c_tensor_nbytes(self._handle))

    def data_ptr(self) -> int:
        """Address of the first element (0 when the storage has no bytes)."""
        return int(ffi.cast("uintptr_t", lib.c10c_tensor_data(self._handle)))

    def untyped_storage(self) -> UntypedStorage:
        """The storage (shared, not copied)."""
        storage = lib.c10c_tensor_storage(self._handle)
        return UntypedStorage._from_handle(lib.c10c_storage_retain(storage))

    # ---- layout facts ----

    def is_contiguous(self, memory_format: memory_format = _CONTIGUOUS) -> bool:
        """c10's is_contiguous for a memory format (row-major by default)."""
        if type(memory_format) is not type(_CONTIGUOUS):
            raise C10TypeError(
                "is_contiguous(): argument 'memory_format' must be pyc10.memory_format, not "
                f"{type(memory_format).__name__}"
            )
        out = ffi.new(_BOOL_PTR)
        check(lib.c10c_tensor_is_contiguous(out, self._handle, memory_format.value))
        return bool(out[0])

    def _is_strides_like(self, memory_format: memory_format) -> bool:
        return bool(lib.c10c_tensor_is_strides_like(self._handle, memory_format.value))

    def _is_non_overlapping_and_dense(self) -> bool:
        return bool(lib.c10c_tensor_is_non_overlapping_and_dense(self._handle))

    def is_inference(self) -> bool:
        """Whether the tensor was made in inference mode."""
        return bool(lib.c10c_tensor_is_inference(self._handle))

    @property
    def _version(self) -> int:
        out = ffi.new(_I64_PTR)
        check(lib.c10c_tensor_version(out, self._handle))
        return int(out[0])

    def _dispatch_keys(self) -> DispatchKeySet:
        """The dispatch key set (as ``torch._C._dispatch_keys(t)``)."""
        return DispatchKeySet.from_raw(int(lib.c10c_tensor_keys(self._handle).repr))

    # ---- views (sharing the storage and its version counter) ----

    def _view_call(self, fn: Any, *args: Any) -> Tensor:
        out = ffi.new(_TENSOR_PTR)
        check(fn(out, self._handle, *args))
        result = object.__new__(Tensor)
        result._handle = _gc(out[0], _release)
        return result

    def view(self, *shape: Any) -> Tensor:
        """The same elements under another shape (one -1 is inferred), as ``Tensor.view``."""
        sizes = _sizes_from_args(shape, "view")
        return self._view_call(lib.c10c_tensor_view, sizes, len(sizes))

    def as_strided(
        self, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
    ) -> Tensor:
        """A view with these sizes, strides and storage offset, as ``Tensor.as_strided``."""
        sizes = _int_list(size, "as_strided(): argument 'size'", allow_bool=True)
        strides = _int_list(stride, "as_strided(): argument 'stride'")
        offset = ffi.NULL if storage_offset is None else ffi.new(_I64_PTR, storage_offset)
        return self._view_call(
            lib.c10c_tensor_as_strided, sizes, len(sizes), strides, len(strides), offset
        )

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        """Swap two dimensions."""
        return self._view_call(
            lib.c10c_tensor_transpose, operator.index(dim0), operator.index(dim1)
        )

    swapdims = transpose
    swapaxes = transpose

    def t(self) -> Tensor:
        """Transpose a tensor of at most 2 dims (0- and 1-dim tensors come back as they are)."""
        n = self.dim()
        if n > 2:
            raise C10RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
        return self.transpose(0, 0 if n < 2 else 1)

    def permute(self, *dims: Any) -> Tensor:
        """Reorder the dimensions."""
        order = _sizes_from_args(dims, "permute", "dims")
        return self._view_call(lib.c10c_tensor_permute, order, len(order))

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        """Elements start .. start + length - 1 along dim."""
        return self._view_call(
            lib.c10c_tensor_narrow,
            operator.index(dim),
            operator.index(start),
            operator.index(length),
        )

    def select(self, dim: int, index: int) -> Tensor:
        """The slice at index along dim, without that dim."""
        return self._view_call(lib.c10c_tensor_select, operator.index(dim), operator.index(index))

    def _slice(
        self, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1
    ) -> Tensor:
        """aten::slice: elements start, start+step, ... before end along dim."""
        return self._view_call(
            lib.c10c_tensor_slice,
            operator.index(dim),
            0 if start is None else operator.index(start),
            _INT64_MAX if end is None else operator.index(end),
            operator.index(step),
        )

    def unsqueeze(self, dim: int) -> Tensor:
        """Insert a dimension of size 1."""
        return self._view_call(lib.c10c_tensor_unsqueeze, operator.index(dim))

    def squeeze(self, dim: int | Sequence[int] | None = None) -> Tensor:
        """Drop dimensions of size 1 (all of them, or those listed)."""
        if dim is None:
            return self._view_call(lib.c10c_tensor_squeeze)
        if isinstance(dim, (tuple, list)):
            dims = _int_list(dim, "squeeze(): argument 'dim'")
        else:
            dims = [operator.index(cast(int, dim))]
        return self._view_call(lib.c10c_tensor_squeeze_dims, dims, len(dims))

    def expand(self, *sizes: Any) -> Tensor:
        """Broadcast size-1 dimensions (and new leading ones) to sizes; -1 keeps a size."""
        target = _sizes_from_args(sizes, "expand")
        return self._view_call(lib.c10c_tensor_expand, target, len(target))

    def expand_as(self, other: Tensor) -> Tensor:
        """expand(other.shape)."""
        return self.expand(other.shape)

    def __repr__(self) -> str:
        return (
            f"pyc10.Tensor(shape={list(self.shape)}, stride={list(self.stride())}, "
            f"dtype={self.dtype!r}, device='{self.device}')"
        )


def empty(
    *size: Any,
    dtype: dtype | None = None,
    device: _device_cls | str | None = None,
    memory_format: memory_format = _CONTIGUOUS,
) -> Tensor:
    """A tensor with uninitialized elements, as ``torch.empty``."""
    sizes = _sizes_from_args(size, "empty")
    d = _check_dtype(dtype)
    dev = _check_device(device)
    if type(memory_format) is not type(_CONTIGUOUS):
        raise C10TypeError(
            f"empty(): argument 'memory_format' must be pyc10.memory_format, not "
            f"{type(memory_format).__name__}"
        )
    return Tensor._wrap(
        lib.pyc10_tensor_empty(
            sizes, len(sizes), d.value, dev._type, dev._index, memory_format.value
        )
    )


def empty_strided(
    size: Sequence[int],
    stride: Sequence[int],
    *,
    dtype: dtype | None = None,
    device: _device_cls | str | None = None,
) -> Tensor:
    """A tensor with these sizes and strides over a fresh storage, as ``torch.empty_strided``."""
    sizes = _int_list(size, "empty_strided(): argument 'size'", allow_bool=True)
    strides = _int_list(stride, "empty_strided(): argument 'stride'")
    if len(sizes) != len(strides):
        raise C10RuntimeError(
            f"dimensionality of sizes ({len(sizes)}) must match dimensionality of strides "
            f"({len(strides)})"
        )
    d = _check_dtype(dtype)
    dev = _check_device(device)
    return Tensor._wrap(
        lib.pyc10_tensor_empty_strided(sizes, strides, len(sizes), d.value, dev._type, dev._index)
    )
