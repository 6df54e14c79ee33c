"""Tensors: ``pyc10.Tensor`` over libc10c's tensor object, with torch's names and behaviour.

This first part covers creation (``empty``, ``empty_strided``) and metadata; views, copies and
data access follow.
"""

from __future__ import annotations

import builtins
import itertools
import operator
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast, final

from . import _ctensor, _defaults, _repr, _torch_methods, _typed_storage
from ._adopt import adopt as _adopt
from ._device import _make as _device_make
from ._device import device as _device_cls
from ._dispatch import DispatchKeySet
from ._dtype import DTYPE_NAMES, dtype
from ._errors import (
    C10AbsentMethodError,
    C10BufferError,
    C10IndexError,
    C10RuntimeError,
    C10TypeError,
    C10ValueError,
    check,
    raise_status,
    torch_type_name,
)
from ._layout import LAYOUTS, MEMORY_FORMATS, memory_format
from ._layout import layout as _layout_cls
from ._lib import ffi, lib
from ._storage import (
    UntypedStorage,
    _checked_dtype,
    _checked_ints,
    _checked_offset,
    _pickled_by_joblib,
    _pinned_strided,
    _tensor_over,
)

if TYPE_CHECKING:
    from ._typed_storage import TypedStorage

#: torch's _dtype_to_typestr: the dtypes __cuda_array_interface__ can describe.
_CAI_TYPESTR = {
    DTYPE_NAMES["complex64"]: "<c8",
    DTYPE_NAMES["complex128"]: "<c16",
    DTYPE_NAMES["bfloat16"]: "<V2",
    DTYPE_NAMES["float16"]: "<f2",
    DTYPE_NAMES["float32"]: "<f4",
    DTYPE_NAMES["float64"]: "<f8",
    DTYPE_NAMES["uint8"]: "|u1",
    DTYPE_NAMES["int8"]: "|i1",
    DTYPE_NAMES["uint16"]: "<u2",
    DTYPE_NAMES["int16"]: "<i2",
    DTYPE_NAMES["uint32"]: "<u4",
    DTYPE_NAMES["int32"]: "<i4",
    DTYPE_NAMES["uint64"]: "<u8",
    DTYPE_NAMES["int64"]: "<i8",
    DTYPE_NAMES["bool"]: "|b1",
}

__all__ = [
    "Size",
    "Tensor",
    "empty",
    "empty_like",
    "empty_strided",
    "from_dlpack",
    "from_numpy",
    "full",
    "full_like",
    "ones",
    "ones_like",
    "zeros",
    "zeros_like",
]

_DTYPES_BY_VALUE = {d.value: d for d in DTYPE_NAMES.values()}
_FLOAT32 = DTYPE_NAMES["float32"]
_CONTIGUOUS = MEMORY_FORMATS["contiguous_format"]
_PRESERVE = MEMORY_FORMATS["preserve_format"]
_STRIDED = LAYOUTS["strided"]
_wrap_address = _ctensor.wrap
_UINTPTR = ffi.typeof("uintptr_t")
_TENSOR_PTR = ffi.typeof("c10c_tensor **")
_INT64_MAX = (1 << 63) - 1


Size = _ctensor.Size
"""A tensor's shape, as ``torch.Size``: a tuple of ints printed ``pyc10.Size([2, 3])``."""


def _int_list(values: Sequence[Any], what: str) -> list[int]:
    """Ints as torch 2.13's parser reads an int list.

    The first item picks the overload, so it may not be a bool; later items may be anything with
    ``__index__`` (True is 1, as in torch).
    """
    if all(type(v) is int and -_INT64_MAX - 1 <= v <= _INT64_MAX for v in values):
        return list(values)  # the common case, without the per-item checks
    out = []
    for i, v in enumerate(values):
        if i == 0 and (isinstance(v, bool) or not hasattr(v, "__index__")):
            raise C10TypeError(
                f"{what} must be tuple of ints, but found element of type "
                f"{type(v).__name__} at pos {i}"
            )
        if not hasattr(v, "__index__"):
            raise C10TypeError(
                f"{what} failed to unpack the object at pos {i + 1} with error "
                f'"type must be tuple of ints,but got {type(v).__name__}"'
            )
        out.append(operator.index(v))
    for i, v in enumerate(out):
        if not -_INT64_MAX - 1 <= v <= _INT64_MAX:
            raise C10TypeError(
                f"{what} failed to unpack the object at pos {i + 1} with error "
                '"Overflow when unpacking long long"'
            )
    return out


def _int(value: Any, what: str) -> int:
    """An int argument as torch's parser reads one.

    Anything with ``__index__`` but a bool (a TypeError naming ``what``), within int64 (torch's
    ValueError past it).
    """
    if type(value) is int and -_INT64_MAX - 1 <= value <= _INT64_MAX:
        return value
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise C10TypeError(f"{what} must be int, not {torch_type_name(value)}")
    v = operator.index(value)
    if not -_INT64_MAX - 1 <= v <= _INT64_MAX:
        raise C10ValueError("Overflow when unpacking long long")
    return v


def _wrap64(value: int) -> int:
    """The value ATen's int64 arithmetic leaves (two's complement wrap)."""
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


def _c_div(a: int, b: int) -> int:
    """C++'s integer division (truncating toward zero)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _clamped(value: Any) -> int:
    """A slice bound as Python's slicing reads one (``__index__``), clamped to int64."""
    return max(-_INT64_MAX - 1, min(_INT64_MAX, operator.index(value)))


def _sizes_from_args(args: tuple[Any, ...], name: str, argname: str = "size") -> list[int]:
    if not args:
        raise C10TypeError(f'{name}() missing 1 required positional arguments: "{argname}"')
    values = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
    return _int_list(values, f"{name}(): argument '{argname}'")


def _check_dtype(d: Any) -> dtype:
    if d is None:
        return _defaults.current()
    if type(d) is not dtype:
        raise C10TypeError(f"dtype must be pyc10.dtype, not {torch_type_name(d)}")
    return d


_CPU = _device_cls("cpu")
_ALL_DIMS: Any = object()  # squeeze()'s default: no dim given


def _check_device(d: Any) -> _device_cls:
    return _CPU if d is None else _device_cls(d)


# The C methods behind the dunders torch writes in Python (torch/_tensor.py): Tensor's Python
# methods of the same name call them, so that a bad call's error is Python's own, as torch's
# ("Tensor.__len__() takes 1 positional argument but 2 were given")
_C_REVERSED = _ctensor.TensorBase.__reversed__
_C_DLPACK_DEVICE = _ctensor.TensorBase.__dlpack_device__
_C_ARRAY = _ctensor.TensorBase.__array__
_C_DLPACK = _ctensor.TensorBase.__dlpack__
_C_DEEPCOPY = _ctensor.TensorBase.__deepcopy__


@final
class Tensor(_ctensor.TensorBase):
    """A view of a storage with sizes, strides, an offset, a dtype and a device (torch.Tensor).

    The object itself (its reference to the libc10c tensor, ``shape``, ``dim()``, ``numel()``,
    ``is_contiguous()``) and the hottest views (``view``, ``transpose``/``t``, ``t[i]``,
    ``t[a:b]``) are in C (pyc10._ctensor); they hand whatever they do not handle to the
    ``_*_py`` methods here. A tensor's geometry never changes after creation (no resize_/set_
    yet), so shape and strides are kept once read.
    """

    __module__ = "pyc10"
    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Tensor:
        raise C10TypeError("create tensors with pyc10.empty, pyc10.empty_strided, ...")

    @classmethod
    def _wrap(cls, handle: Any) -> Tensor:
        """Own a new reference (``c10c_tensor *``), raising the library's error if it is NULL."""
        if not handle:
            raise_status(lib.c10c_last_error_status())
        # the C object releases the reference when it goes
        return cast(Tensor, _wrap_address(int(ffi.cast(_UINTPTR, handle)), handle))

    # ---- shape, dtype, device, data_ptr(), __bool__, __len__ ...: in C (_ext/attrs.c) ----

    # ---- the dunders torch writes in Python: its signatures, the work in C ----

    def __reversed__(self) -> Tensor:
        """The tensor flipped along its first dimension, as torch's."""
        return _C_REVERSED(self)

    def __dlpack_device__(self) -> tuple[builtins.int, builtins.int]:
        """DLPack's (device type, device index) of the tensor, as torch's."""
        return _C_DLPACK_DEVICE(self)

    def __array__(self, dtype: Any = None, *, copy: builtins.bool | None = None) -> Any:  # type: ignore[override]
        """The tensor as a numpy array (numpy's protocol; ``copy`` as numpy 2 passes it)."""
        if copy is None:
            return _C_ARRAY(self, dtype)
        return _C_ARRAY(self, dtype, copy)

    def __dlpack__(
        self,
        *,
        stream: Any = -1,
        max_version: tuple[builtins.int, builtins.int] | None = None,
        dl_device: tuple[builtins.int, builtins.int] | None = None,
        copy: builtins.bool | None = None,
    ) -> Any:
        """A DLPack capsule of the tensor (the array API's protocol), as torch's."""
        kwargs: dict[str, Any] = {}
        if stream != -1:
            kwargs["stream"] = stream
        if max_version is not None:
            kwargs["max_version"] = max_version
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        if copy is not None:
            kwargs["copy"] = copy
        return _C_DLPACK(self, **kwargs)

    def __deepcopy__(self, memo: dict[builtins.int, Any]) -> Tensor:
        """A copy of the tensor and its storage (tensors sharing one share the copy's)."""
        # torch's reads memo so first: TypeError for no container, AttributeError for no mapping
        if id(self) in memo:
            return cast(Tensor, memo[id(self)])
        memo.get  # noqa: B018
        return _C_DEEPCOPY(self, memo)

    def __reduce_ex__(self, proto: Any) -> tuple[Any, tuple[Any, ...]]:
        """Pickle (and copy.copy) as torch does: the storage, offset, sizes, strides and dtype.

        Tensors pickled together that share a storage share one after loading (the storage is
        one object to pickle), which torch's ``pickle`` does not do and ``torch.save`` does.
        A meta tensor has no bytes to pickle: its dtype, sizes and strides (torch's
        ``_rebuild_meta_tensor_no_storage``). With protocol 5 a CPU tensor sends only the bytes
        its elements reach, as a ``pickle.PickleBuffer`` (out of band with a ``buffer_callback``,
        so nothing is copied; loading wraps the buffer) and still shares its storage with the
        tensors pickled with it (pyc10._pickling). ``joblib.dump`` gets the window as a numpy
        array, which it writes raw, so that ``joblib.load(f, mmap_mode="r")`` maps it.
        """
        # torch takes any proto (its pickling ignores it); pyc10 reads protocol 5 from it
        protocol = proto if type(proto) is builtins.int else 0
        if self.device.type == "cpu" and (protocol >= 5 or "joblib.numpy_pickle" in sys.modules):
            from . import _pickling  # on first use: import pyc10 stays as fast as it was

            joblib = _pickled_by_joblib(sys._getframe(1))
            if protocol >= 5 or joblib:
                return _pickling.reduce_window(self, as_array=joblib)
        if self.is_meta:
            return _rebuild_meta_tensor_no_storage, (
                self.dtype._name,
                tuple(self.shape),
                self.stride(),
            )
        return _rebuild_tensor, (
            self.untyped_storage(),
            self.storage_offset(),
            tuple(self.shape),
            self.stride(),
            self.dtype._name,
        )

    def storage(self) -> TypedStorage:
        """The storage as a ``pyc10.TypedStorage`` of self's dtype (deprecated, as torch's).

        Emits torch's UserWarning once per process; ``untyped_storage()`` is the supported form.
        """
        _typed_storage._warn_typed_storage_removal(stacklevel=2)
        return _typed_storage.TypedStorage._over(self.untyped_storage(), self.dtype)

    def _typed_storage(self) -> TypedStorage:
        """The storage as a ``pyc10.TypedStorage`` of self's dtype, without storage()'s warning."""
        return _typed_storage.TypedStorage._over(self.untyped_storage(), self.dtype)

    def storage_type(self) -> type[TypedStorage] | None:
        """Torch's legacy storage class of self's dtype (pyc10.FloatStorage for float32).

        Deprecated, as torch's (its UserWarning once per process). None where torch has no such
        class: a dtype without one, a device other than the CPU (pyc10.cuda has no legacy classes).
        """
        _typed_storage._warn_typed_storage_removal(stacklevel=2)
        return _typed_storage.legacy_storage_class(self.dtype, self.device)

    def dim_order(self, *, ambiguity_check: bool | list[memory_format] = False) -> tuple[int, ...]:
        """The dims from the outermost to the innermost in memory (torch's dim_order).

        torch's algorithm (torch/_tensor.py and _prims_common's logical-to-physical permutation)
        with its errors: a RuntimeError when ambiguity_check asks for a unique order (True, or a
        list of memory formats of which self must match exactly one) and there is none, a
        TypeError when ambiguity_check is neither a bool nor a list of memory formats.
        """
        error = "The ambiguity_check argument must be a bool or a list of memory formats."
        if not isinstance(ambiguity_check, bool):
            if not isinstance(ambiguity_check, list):
                raise C10TypeError(error)
            if not all(isinstance(f, memory_format) for f in ambiguity_check):
                raise C10TypeError(error)
        sizes, strides = tuple(self.shape), self.stride()
        formats = ambiguity_check if isinstance(ambiguity_check, list) else []
        check = ambiguity_check if isinstance(ambiguity_check, bool) else True
        multiple = any(a == b for a, b in itertools.pairwise(strides)) or 1 in sizes
        legal = sum(1 for f in formats if self.is_contiguous(memory_format=f))
        if check and multiple and legal != 1:
            raise C10RuntimeError(
                "The tensor does not have unique dim order, or cannot map to exact one of the "
                "given memory formats."
            )
        perm, ambiguous = _logical_to_physical_perm(self, sizes, strides, bool(ambiguity_check))
        if ambiguous:
            raise C10RuntimeError("The tensor does not have unique dim order.")
        return tuple(perm)

    def __dir__(self) -> list[str]:
        """The attributes, without torch's math and autograd names (which only explain)."""
        return [n for n in object.__dir__(self) if n not in _ABSENT]

    # ---- shared memory (Python methods in torch too, with their arity errors) ----

    def is_shared(self) -> bool:
        """Whether the storage is in memory other processes can open (CUDA: always)."""
        return bool(self.untyped_storage().is_shared())

    def share_memory_(self) -> Tensor:
        """Move the storage into memory other processes can open; self.

        In place, as torch's: every tensor over the storage sees the new memory, which is no
        longer resizable (torch says it is, and its resize_ then crashes). The sharing strategy
        picks a memory file (file_descriptor) or a named object (file_system); a CUDA storage is
        left as it is. Memory whose address was handed out before stays valid (torch frees it).
        """
        self.untyped_storage().share_memory_()
        return self

    # ---- layout facts ----

    def _is_strides_like(self, memory_format: memory_format) -> bool:
        return bool(lib.c10c_tensor_is_strides_like(self._handle, memory_format.value))

    def _is_non_overlapping_and_dense(self) -> bool:
        return bool(lib.c10c_tensor_is_non_overlapping_and_dense(self._handle))

    def _dispatch_keys(self) -> DispatchKeySet:
        """The dispatch key set (as ``torch._C._dispatch_keys(t)``)."""
        return DispatchKeySet.from_raw(int(lib.c10c_tensor_keys(self._handle).repr))

    # ---- views (sharing the storage and its version counter) ----

    def _view_call(self, fn: Any, *args: Any) -> Tensor:
        out = ffi.new(_TENSOR_PTR)
        check(fn(out, self._handle, *args))
        return self._wrap(out[0])

    def _slice(
        self, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1
    ) -> Tensor:
        """aten::slice: elements start, start+step, ... before end along dim."""
        return self._wrap(
            lib.pyc10_slice(
                self._handle,
                _int(dim, "slice(): argument 'dim'"),
                0 if start is None else _clamped(start),
                _INT64_MAX if end is None else _clamped(end),
                _clamped(step),
            )
        )

    # ---- devices ----

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """The CUDA Array Interface (version 3) of a CUDA tensor.

        As torch's (which says version 2): typestr, shape, strides (None when contiguous), data
        (pointer, read-only flag); and the current stream's handle (1 for the legacy default
        stream) for consumers to wait on. Raises AttributeError for a tensor not on CUDA, so
        ``hasattr`` is False there.
        """
        if not self.is_cuda:
            raise AttributeError(
                f"Can't get __cuda_array_interface__ on non-CUDA tensor type: {self.type()} "
                "If CUDA data is required use tensor.cuda() to copy tensor to device memory."
            )
        from . import cuda

        typestr = _CAI_TYPESTR[self.dtype]  # KeyError for other dtypes, as torch
        itemsize = self.element_size()
        strides = None if self.is_contiguous() else tuple(s * itemsize for s in self.stride())
        data_ptr = self.data_ptr() if self.numel() > 0 else 0
        stream = cuda.current_stream(self.device).cuda_stream or 1
        read_only = bool(lib.c10c_tensor_is_read_only(self._handle))
        return {
            "typestr": typestr,
            "shape": tuple(self.shape),
            "strides": strides,
            "data": (data_ptr, read_only),
            "version": 3,
            "stream": stream,
        }

    def record_stream(self, stream: Any) -> None:
        """Hold this CUDA tensor's memory back from reuse, once freed, for ``stream``'s work.

        The work queued on ``stream`` (a ``pyc10.cuda.Stream``) by the time the memory is freed
        must complete first, as torch's ``record_stream``.
        """
        check(lib.c10c_tensor_record_stream(self._handle, stream._value[0]))

    # ---- pinned memory (torch's pin_memory / is_pinned, over libc10c's pinned host allocator) ----

    def pin_memory(self, device: Any = None) -> Tensor:
        """A copy of this CPU tensor in pinned memory (self when already pinned), as torch's.

        The copy keeps the sizes and strides. Without a CUDA driver: torch's RuntimeError
        "Cannot access accelerator device when none is available.".
        """
        if self.device.type != "cpu":
            name = self.type()
            if self.is_meta:  # ATen's toString(): torch renames only CPU and CUDA types
                name = f"Meta{ffi.string(lib.c10c_dtype_c10_name(self.dtype.value)).decode()}Type"
            raise C10RuntimeError(f"cannot pin '{name}' only dense CPU tensors can be pinned")
        if not lib.c10c_cuda_is_available():
            raise C10RuntimeError("Cannot access accelerator device when none is available.")
        if self.is_pinned():
            return self
        out = cast("Tensor", _pinned_strided(tuple(self.shape), self.stride(), self.dtype))
        out.copy_(self)
        return out

    def __repr__(self) -> str:
        """Torch's format (``tensor([[0., 1.], ...])``): pyc10._repr.tensor_repr."""
        return _repr.tensor_repr(self)

    def __format__(self, format_spec: str) -> str:
        """A 0-dim tensor formats its item (``f"{t:.2f}"``), as torch: pyc10._repr."""
        return _repr.tensor_format(self, format_spec)


if not TYPE_CHECKING:
    Tensor = _adopt(Tensor, _ctensor.TensorBase, "TensorBase")


class _Absent:
    """A torch.Tensor math or autograd name on pyc10.Tensor: reading it raises why pyc10 has none.

    The explanation the operators give for ``t + 1``, as a C10AbsentMethodError, which is an
    AttributeError too (hasattr False, getattr's default). A class attribute rather than a
    ``__getattr__``, which would make CPython bind every method call through a bound-method
    object (slower, and its arity errors name ``Tensor.`` where torch's name ``TensorBase.``).
    """

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __get__(self, obj: object, objtype: type | None = None) -> Any:
        name = self._name
        if name in _torch_methods.MATH_METHODS:
            what, why = "math methods", "math kernels; compute with torch or numpy"
            how = "torch.from_dlpack(t), t.numpy()"
        else:
            what, why = "autograd", "autograd; use torch for gradients"
            how = "torch.from_dlpack(t)"
        e = C10AbsentMethodError(
            f"pyc10.Tensor has no {what} ({name}): pyc10 is a tensor runtime without {why} ({how})"
        )
        e.name, e.obj = name, obj
        try:
            raise e
        finally:
            del e  # no cycle through this frame: obj is freed with the exception (_errors.py)


_ABSENT = _torch_methods.MATH_METHODS | _torch_methods.AUTOGRAD_METHODS
for _name in _ABSENT:
    setattr(Tensor, _name, _Absent(_name))


def _logical_to_physical_perm(
    t: Tensor, shape: tuple[int, ...], strides: tuple[int, ...], check: bool
) -> tuple[list[int], bool]:
    """torch._prims_common.compute_elementwise_output_logical_to_physical_perm for one tensor."""
    ndim = len(shape)
    if ndim <= 1:
        return list(range(ndim)), False
    contiguous = t.is_contiguous()
    channels_last = ndim in (4, 5) and t.is_contiguous(
        memory_format=MEMORY_FORMATS["channels_last" if ndim == 4 else "channels_last_3d"]
    )
    if contiguous and not channels_last:
        return list(range(ndim)), False
    if channels_last and not contiguous:
        return [0, *range(2, ndim), 1], False

    def ge(a: int, b: int) -> bool:
        if b == 0:
            return True
        if a == 0:
            return False
        return a >= b or a % b == 0

    def should_swap(a: int, b: int) -> int:
        sa, sb = strides[a], strides[b]
        if sa == 0 or sb == 0:
            return 0
        if sa == sb:
            return 0 if ge(shape[b], shape[a]) else 1
        if ge(sb, sa):
            return -1
        return 1 if ge(sa, sb) else 0

    perm = list(reversed(range(ndim)))
    for i in range(1, ndim):  # insertion sort, ambiguous comparisons leave the order
        dim1 = i
        for dim0 in reversed(range(i)):
            c = should_swap(perm[dim0], perm[dim1])
            if c > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif c < 0:
                break
    ambiguous = check and any(should_swap(perm[i], perm[i + 1]) != -1 for i in range(ndim - 1))
    return list(reversed(perm)), ambiguous


def _dims_arg(value: Any, what: str) -> list[int]:
    if isinstance(value, (list, tuple)):
        return _int_list(value, what)
    return [_int(value, what)]


def _c10_name(d: dtype) -> str:
    """c10's name of a dtype ("BFloat16")."""
    return str(ffi.string(lib.c10c_dtype_c10_name(d.value)).decode())


def _check_format(fmt: Any, name: str) -> memory_format:
    if type(fmt) is not type(_CONTIGUOUS):
        raise C10TypeError(
            f"{name}(): argument 'memory_format' must be pyc10.memory_format, not "
            f"{torch_type_name(fmt)}"
        )
    return fmt


def _checked_sizes(size: Any, stride: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    size = _checked_ints(size, "size")
    stride = _checked_ints(stride, "stride")
    if len(size) != len(stride):
        raise C10RuntimeError(
            f"mismatch in length of strides and shape: {len(stride)} strides, {len(size)} sizes"
        )
    return size, stride


def _rebuild_tensor(storage: Any, offset: Any, size: Any, stride: Any, dtype_name: Any) -> Tensor:
    """Unpickle a tensor: a view of ``storage`` (checked against its size, as ATen does).

    Only a pyc10 storage and plain data are accepted (pickles are untrusted input, and
    ``pyc10.serialization.safe_globals()`` lets torch's weights-only loader call this).
    """
    if type(storage) is not UntypedStorage:
        raise C10TypeError(f"expected a pyc10 UntypedStorage, not {type(storage).__name__}")
    d = _checked_dtype(dtype_name)
    offset = _checked_offset(offset)
    size, stride = _checked_sizes(size, stride)
    return cast("Tensor", _tensor_over(storage, offset, size, stride, d))


def _rebuild_meta_tensor_no_storage(dtype_name: Any, size: Any, stride: Any) -> Tensor:
    """Unpickle a meta tensor: ``empty_strided`` on the meta device, as torch's."""
    d = _checked_dtype(dtype_name)
    size, stride = _checked_sizes(size, stride)
    out = ffi.new(_TENSOR_PTR)
    meta = ffi.new("c10c_device *", {"type": lib.C10C_DEVICE_TYPE_META, "index": -1})
    check(lib.c10c_tensor_empty_strided(out, list(size), list(stride), len(size), d.value, meta[0]))
    return Tensor._wrap(out[0])


_COPY_WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor)."
)


def _is_sequence(obj: Any) -> builtins.bool:
    """CPython's PySequence_Check, as torch's data walk asks it, for pyc10's types as torch's.

    A tensor is no sequence (torch's C type has no sq_item); a storage is one (torch's is a
    Python class with __getitem__).
    """
    if isinstance(obj, Tensor):
        return False
    if isinstance(obj, UntypedStorage):
        return True
    return builtins.bool(_sequence_check(obj))


def _sequence_check_fn() -> Callable[[Any], int]:
    import ctypes

    fn = ctypes.pythonapi.PySequence_Check
    fn.argtypes = [ctypes.py_object]
    fn.restype = ctypes.c_int
    return cast(Callable[[Any], int], fn)


_sequence_check = _sequence_check_fn()


def _compute_sizes(data: Any, d: dtype) -> list[int]:
    """Torch's compute_sizes (tensor_new.cpp): the lengths along the first items."""
    is_storage = isinstance(data, UntypedStorage)
    sizes: list[int] = []
    seq = data
    while _is_sequence(seq):
        length = len(seq)
        if is_storage:  # a storage is read as its bytes reinterpreted
            length //= d.itemsize
        sizes.append(length)
        if len(sizes) > 64:
            raise C10ValueError(f"too many dimensions '{type(seq).__name__}'")
        if length == 0:
            break
        try:
            seq = seq[0]
        except Exception:
            raise C10ValueError(
                f"could not determine the shape of object type '{_type_path(seq)}'"
            ) from None
    return sizes


def _type_path(obj: Any) -> str:
    """A type's tp_name, as torch's messages print it.

    A class's own name, a C type's dotted path (pyc10.UntypedStorage in place of
    torch.storage.UntypedStorage).
    """
    t = type(obj)
    if t is UntypedStorage:
        return "pyc10.UntypedStorage"
    if t.__module__ == "builtins" or t.__flags__ & (1 << 9):  # Py_TPFLAGS_HEAPTYPE
        return t.__name__
    return f"{t.__module__}.{t.__qualname__}"


def _infer_dtype(obj: Any) -> dtype:
    """Torch's infer_scalar_type (tensor_new.cpp): a leaf's own dtype, sequences promoted."""
    import numpy as np

    if isinstance(obj, (np.ndarray, np.generic)):  # before float: numpy's float64 is a float
        found = _NUMPY_DTYPES.get(obj.dtype)
        if found is None:
            found = cast(dtype, from_numpy(np.empty(0, dtype=obj.dtype)).dtype)
            _NUMPY_DTYPES[obj.dtype] = found
        return found
    if isinstance(obj, float):
        return _defaults.current()
    if isinstance(obj, builtins.bool):
        return DTYPE_NAMES["bool"]
    if isinstance(obj, int):
        return DTYPE_NAMES["int64"]
    if isinstance(obj, complex):
        return _defaults.default_complex()
    if isinstance(obj, Tensor):
        return cast(dtype, obj.dtype)
    if isinstance(obj, (str, bytes)):
        raise C10TypeError(f"new(): invalid data type '{type(obj).__name__}'")
    if _is_sequence(obj):
        return _infer_sequence_dtype(obj)
    raise C10RuntimeError(f"Could not infer dtype of {_type_path(obj)}")


def _infer_sequence_dtype(obj: Any, simple: dict[type, dtype] | None = None) -> dtype:
    """_infer_dtype of a sequence: its items' dtypes promoted (the default dtype when empty).

    simple: the dtypes by leaf type found so far (the nested lists and tuples share one).
    """
    import numpy as np

    length = len(obj)
    if length == 0:
        return _defaults.current()
    if type(obj) is range:
        return DTYPE_NAMES["int64"]
    if simple is None:  # Python numbers by their type, without a call each
        simple = {
            float: _defaults.current(),
            int: DTYPE_NAMES["int64"],
            builtins.bool: DTYPE_NAMES["bool"],
            complex: _defaults.default_complex(),
        }
    found: dtype | None = None
    for i in range(length):
        item = obj[i]
        d = simple.get(type(item))
        if d is None:
            if type(item) is Tensor:
                d = item.dtype
            elif type(item) in _LIST_TYPES and item is not obj:
                d = _infer_sequence_dtype(item, simple)
            else:
                if item is obj:
                    raise C10TypeError("new(): self-referential lists are incompatible")
                d = _infer_dtype(item)
                if isinstance(item, np.generic):  # a numpy scalar's dtype is its type's
                    simple[type(item)] = d
        if d is found:
            continue
        found = d if found is None else _promote(found, d)
        if found == DTYPE_NAMES["complex128"]:
            break
    return cast(dtype, found)


_LIST_TYPES = frozenset((list, tuple))
_NUMPY_DTYPES: dict[Any, dtype] = {}  # numpy dtype -> pyc10 dtype, as _infer_dtype found it


def _promote(a: dtype, b: dtype) -> dtype:
    return _ctensor.promote_types(a, b)


def _leaf(obj: Any, d: dtype) -> Any:
    """Torch's store_scalar's unpacking: the Python number a leaf is for dtype d.

    Exactly an int, float, complex or bool: what _ctensor.tensor writes itself. Which unpacking
    applies depends on the leaf's type and d only, so it is found once per pair.
    """
    key = (type(obj), d)
    op = _LEAF_OPS.get(key)
    if op is None:
        op = _LEAF_OPS[key] = _leaf_op(type(obj), d)
    return op(obj)


def _leaf_op(t: type, d: dtype) -> Callable[[Any], Any]:
    """The unpacking of a leaf of type t for dtype d, or a function raising its error.

    Torch's PyFloat_AsDouble, PyComplex_AsCComplex, unpackNumberAsBool or __index__.
    """

    def refuse(obj: Any) -> Any:
        raise C10TypeError(f"must be real number, not {t.__name__}")

    real = d.is_complex or d.is_floating_point or issubclass(t, float)
    if real and (
        issubclass(t, (str, bytes))
        or not any(hasattr(t, m) for m in ("__complex__", "__float__", "__index__"))
    ):
        return refuse
    if d.is_complex:
        return complex
    if d.is_floating_point or issubclass(t, float):
        return refuse if t is complex else float  # numpy's complex has __float__ (real part)
    if d == DTYPE_NAMES["bool"] and (issubclass(t, complex) or t.__name__ == "bool"):
        return lambda obj: builtins.bool(obj != 0)  # a complex, or numpy's bool
    return lambda obj: int(operator.index(obj))


_LEAF_OPS: dict[tuple[type, dtype], Callable[[Any], Any]] = {}


def _leaf_of_value(obj: Any, value: int) -> Any:
    """_leaf for the dtype of that value: _ctensor.tensor's unpacking of a tensor leaf."""
    return _leaf(obj, _DTYPES_BY_VALUE[value])


_PY_NUMBERS = frozenset((int, float, complex, builtins.bool))
#: the leaves _ctensor.tensor takes as they are once the dtype is known (a tensor leaf unpacked
#: there as _leaf unpacks it, its element copied when it is one CPU element of that dtype)
_STORED_AS_IS = frozenset((int, float, complex, builtins.bool, Tensor))


def _tolist_is_leaves(a: Any, d: dtype) -> builtins.bool:
    """Whether a.tolist() gives what _leaf gives for each element of a.

    numpy's float32 (say) is refused by an integral dtype, where tolist()'s Python float is not.
    """
    kind: str = a.dtype.kind
    size: int = a.dtype.itemsize
    if kind not in "biufc" or size > 8:
        return False
    if d.is_complex:
        return True
    if d.is_floating_point:
        return kind != "c"
    return kind in "biu" or (kind == "f" and size == 8)


def _stored(data: Any, sizes: list[int], dim: int, d: dtype, as_is: frozenset[type]) -> Any:
    """Torch's recursive_store: the leaves of data as nested lists of Python numbers.

    Leaves of the types in as_is stay as they are (_ctensor.tensor converts them as torch's
    store_scalar does), and a numpy array that fills the remaining dims, or a last dim of numpy
    scalars of one type, gives its values at once.
    """
    import numpy as np

    if dim == len(sizes):
        return data if type(data) in as_is else _leaf(data, d)
    if (
        isinstance(data, np.ndarray)
        and data.shape == tuple(sizes[dim:])
        and _tolist_is_leaves(data, d)
    ):
        return data.tolist()
    items = data if isinstance(data, (list, tuple)) else list(data)
    if len(items) != sizes[dim]:
        raise C10ValueError(
            f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(items)})"
        )
    if dim + 2 == len(sizes):  # rows of leaves kept as they are, at once
        n = sizes[dim + 1]
        if all(
            type(r) in _LIST_TYPES and len(r) == n and all(type(x) in as_is for x in r)
            for r in items
        ):
            return items
    elif dim + 1 == len(sizes):
        if all(type(x) in as_is for x in items):
            return items
        t = type(items[0])
        if isinstance(items[0], np.generic) and all(type(x) is t for x in items):
            # numpy scalars of one type: their values at once, where tolist() gives _leaf's
            a = np.array(items)
            if a.dtype == items[0].dtype and _tolist_is_leaves(a, d):
                return a.tolist()
    return [_stored(x, sizes, dim + 1, d, as_is) for x in items]


def _tensor_from_data(data: Any, d: Any, device: Any, copy: builtins.bool) -> Tensor:
    """tensor()/as_tensor() for the data _ctensor does not build itself.

    pyc10 tensors, storages and the sequences whose leaves are not all Python numbers (range,
    objects with __len__ and __getitem__, numpy scalars and arrays, tensors), walked as torch's
    internal_new_from_data walks them: the shape along the first items, the dtype inferred from
    every leaf (a tensor's or a numpy value's own dtype, promoted), each leaf unpacked for it.
    """
    import numpy as np

    kwargs: dict[str, Any] = {}
    if d is not None:
        kwargs["dtype"] = d
    if device is not None:
        kwargs["device"] = device
    if isinstance(data, Tensor):
        if copy:
            warnings.warn(_COPY_WARNING, UserWarning, stacklevel=2)
            return data.to(**kwargs, copy=True)
        return data.to(**kwargs)
    if isinstance(data, (str, bytes)):
        raise C10TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if isinstance(data, np.generic) and d is None:  # its own dtype, exactly
        t = from_numpy(np.asarray(data))
        return t.to(**kwargs, copy=True)
    if isinstance(data, UntypedStorage):  # its bytes as elements of the dtype
        inferred = d if d is not None else _infer_dtype(data)
        sizes = _compute_sizes(data, inferred)
        n = sizes[0]
        t = _rebuild_tensor(data, 0, (n,), (1,), _c10_name_key(inferred))
        return t.to(**kwargs, copy=True)
    sizes = _compute_sizes(data, d if d is not None else _defaults.current())  # torch's order
    inferred = d if d is not None else _infer_dtype(data)
    try:
        nested = _stored(data, sizes, 0, inferred, _STORED_AS_IS)
    except Exception:
        # a tensor leaf before the one that failed may fail first: the error torch gives first
        _stored(data, sizes, 0, inferred, _PY_NUMBERS)
        raise
    out: Tensor = _ctensor.tensor(nested, dtype=inferred, device=device)
    return out


def _c10_name_key(d: dtype) -> str:
    """The key of d in DTYPE_NAMES ("float32")."""
    return next(k for k, v in DTYPE_NAMES.items() if v == d)


def split(
    tensor: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0
) -> tuple[Tensor, ...]:
    """Split tensor into chunks of a size, or of the listed sizes, along dim (views).

    As ``torch.split`` (torch/functional.py, a Python function): ``tensor.split(...)``.
    """
    return tensor.split(split_size_or_sections, dim)


empty: Callable[..., Tensor] = _ctensor.empty
"""A tensor with uninitialized elements, as ``torch.empty`` (pyc10._ctensor)."""
zeros: Callable[..., Tensor] = _ctensor.zeros
"""A tensor of zeros, as ``torch.zeros``."""
ones: Callable[..., Tensor] = _ctensor.ones
"""A tensor of ones, as ``torch.ones``."""
full: Callable[..., Tensor] = _ctensor.full
"""A tensor filled with fill_value, as ``torch.full``."""
empty_like: Callable[..., Tensor] = _ctensor.empty_like
"""An uninitialized tensor shaped like input, as ``torch.empty_like``."""
zeros_like: Callable[..., Tensor] = _ctensor.zeros_like
"""Zeros shaped like input, as ``torch.zeros_like``."""
ones_like: Callable[..., Tensor] = _ctensor.ones_like
"""Ones shaped like input, as ``torch.ones_like``."""
full_like: Callable[..., Tensor] = _ctensor.full_like
"""fill_value shaped like input, as ``torch.full_like``."""
empty_strided: Callable[..., Tensor] = _ctensor.empty_strided
"""A tensor with these sizes and strides, as ``torch.empty_strided``."""
tensor: Callable[..., Tensor] = _ctensor.tensor
"""A new tensor holding a copy of data, as ``torch.tensor``."""
as_tensor: Callable[..., Tensor] = _ctensor.as_tensor
"""data as a tensor, sharing its memory where it can, as ``torch.as_tensor``."""
is_tensor: Callable[[Any], bool] = _ctensor.is_tensor
"""Whether obj is a pyc10.Tensor, as ``torch.is_tensor``."""
from_numpy: Callable[[Any], Tensor] = _ctensor.from_numpy
"""A CPU tensor sharing a numpy array's memory (zero-copy; keeps the array alive), as torch's.

A read-only array gives a read-only tensor: in-place writes raise instead of corrupting memory
numpy promised not to change (torch warns and lets them through)."""
"""Whether obj is a pyc10.Tensor, as ``torch.is_tensor``."""

_ctensor.setup(
    Tensor,
    Size,
    lambda address: ffi.cast("c10c_tensor *", address),
    raise_status,
    _FLOAT32,
)
Tensor._setup_attrs(_DTYPES_BY_VALUE, _device_make, _STRIDED)
_defaults.add_listener(_ctensor.set_default_dtype)
_ctensor.setup_parser(
    dtype,
    _layout_cls,
    memory_format,
    _device_cls,
    UntypedStorage,
    dict(MEMORY_FORMATS),
    C10TypeError,
    C10ValueError,
    C10RuntimeError,
    C10IndexError,
)

from_dlpack: Callable[..., Tensor] = _ctensor.from_dlpack
"""A tensor sharing the memory of a DLPack producer (numpy, torch, ...) or capsule (pyc10._ctensor).

``from_dlpack(ext_tensor, *, device=None, copy=None)``: asks ``ext_tensor.__dlpack__`` for a
DLPack 1.x export (legacy producers are retried without keywords), renames the capsule once the
tensor owns it, and calls the producer's deleter when the last tensor over the memory goes.
``copy=True`` gives memory of its own; ``device`` may only name the CPU for now.
"""


def _dlpack_device_of(device: Any) -> tuple[int, int]:
    """from_dlpack's ``device``: the DLPack (type, id) to ask the producer for."""
    d = _device_cls(device)
    if d.type == "cuda":
        if d.index is not None:
            return (2, d.index)
        from . import cuda

        return (2, cuda.current_device())
    if d.type != "cpu":
        raise C10BufferError(
            f"from_dlpack(): cannot import to {d}: only CPU and CUDA are supported"
        )
    return (1, 0)


_ctensor.setup_dlpack(C10BufferError, C10TypeError, C10ValueError, _dlpack_device_of)
