"""Typed storages: an UntypedStorage seen as elements of one dtype, as ``torch.TypedStorage``.

torch deprecates the class (``Tensor.storage()`` returns one, with a UserWarning once per
process); code written for torch still reads it. This is torch/storage.py's TypedStorage over
``pyc10.UntypedStorage``, without the legacy per-dtype classes: elements are read and written
through a 1-dim tensor over the storage (``set_``), as torch does.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from ._device import device as _device_cls
from ._dtype import DTYPE_NAMES as _DTYPE_NAMES
from ._dtype import dtype as _dtype_cls
from ._errors import C10RuntimeError, C10TypeError
from ._storage import UntypedStorage, _checked_dtype

__all__ = ["TypedStorage"]

_warned = {"has_warned": False}  # torch keeps the flag on the function's __dict__

#: torch's legacy storage class names (``torch.FloatStorage``) by dtype, for ``type()``
_LEGACY = {
    "float64": "Double",
    "float32": "Float",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
    "complex128": "ComplexDouble",
    "complex64": "ComplexFloat",
}

_INIT_ERROR = (
    "TypedStorage.__init__ received an invalid combination of arguments. Expected one of:\n"
    " * (*, pyc10.device device, pyc10.dtype dtype)\n"
    " * (int size, *, pyc10.device device, pyc10.dtype dtype)\n"
    " * (Sequence data, *, pyc10.device device, pyc10.dtype dtype)\n"
    " * (*, UntypedStorage wrap_storage, pyc10.dtype dtype)"
)


def _warn_typed_storage_removal(stacklevel: int = 2) -> None:
    """Torch's deprecation warning, once per process (stacklevel counts from the caller)."""
    if not _warned["has_warned"]:
        warnings.warn(
            "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will "
            "be the only storage class. This should only matter to you if you are using storages "
            "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead "
            "of tensor.storage()",
            UserWarning,
            stacklevel=stacklevel + 1,
        )
        _warned["has_warned"] = True


def _reset_warn_typed_storage_removal() -> None:
    """Warn again on the next use (torch.storage._reset_warn_typed_storage_removal)."""
    _warned["has_warned"] = False


def _isint(x: object) -> bool:
    return isinstance(x, numbers.Integral)  # numpy's integers register as Integral


def _rebuild_typed_storage(untyped: Any, dtype_name: Any) -> TypedStorage:
    """Unpickle a TypedStorage: its (unpickled) bytes seen as dtype (plain data only)."""
    if type(untyped) is not UntypedStorage:
        raise C10TypeError(f"expected a pyc10 UntypedStorage, not {type(untyped).__name__}")
    return TypedStorage(wrap_storage=untyped, dtype=_checked_dtype(dtype_name), _internal=True)


class TypedStorage:
    """An UntypedStorage seen as elements of ``dtype``, as ``torch.TypedStorage`` (deprecated).

    ``TypedStorage(size=0 | sequence, *, dtype=None, device=None)`` allocates (the default dtype
    and the CPU unless given); ``TypedStorage(wrap_storage=untyped, dtype=dt)`` wraps, sharing
    the bytes. ``Tensor.storage()`` gives one over the tensor's storage. As torch, most uses emit
    a UserWarning once per process.
    """

    __module__ = "pyc10"
    is_sparse: bool = False
    dtype: _dtype_cls
    _untyped_storage: UntypedStorage

    def __new__(
        cls,
        *args: Any,
        wrap_storage: Any = None,
        dtype: Any = None,
        device: Any = None,
        _internal: bool = False,
    ) -> TypedStorage:
        """A TypedStorage; a legacy class (FloatStorage(...)) makes one of its dtype, as torch's.

        As torch's, ``FloatStorage(4)`` is a TypedStorage of float32 (``isinstance(s,
        FloatStorage)`` holds through the class's metaclass), its arguments checked here.
        """
        if not _internal:
            _warn_typed_storage_removal()
        if cls is _LegacyStorage:
            raise C10RuntimeError("Only child classes of _LegacyStorage can be instantiated")
        if cls is TypedStorage:
            return super().__new__(cls)
        return _legacy_new(cls, args, wrap_storage, dtype, device)

    def __init__(
        self,
        *args: Any,
        device: Any = None,
        dtype: Any = None,
        wrap_storage: Any = None,
        _internal: bool = False,
    ) -> None:
        if not _internal:
            _warn_typed_storage_removal()
        if wrap_storage is not None:
            self._wrap(args, device, dtype, wrap_storage)
            return
        from ._defaults import get_default_dtype

        self.dtype = get_default_dtype() if dtype is None else dtype
        dev = _device_cls("cpu" if device is None else device)
        if len(args) == 0:
            self._untyped_storage = UntypedStorage(device=dev)
        elif len(args) == 1:
            if _isint(args[0]):
                self._untyped_storage = UntypedStorage(
                    args[0].__index__() * self._element_size(), device=dev
                )
            elif isinstance(args[0], Sequence):
                from ._ctensor import tensor

                self._untyped_storage = tensor(
                    args[0], dtype=self.dtype, device=dev
                ).untyped_storage()
            else:
                raise C10TypeError(_INIT_ERROR + f"\nArgument type not recognized: {type(args[0])}")
        else:
            raise C10RuntimeError(_INIT_ERROR + "\nToo many positional arguments")

    @classmethod
    def _over(cls, untyped: UntypedStorage, dtype: _dtype_cls) -> TypedStorage:
        """One over untyped's bytes as dtype, without the constructor's checks (Tensor.storage)."""
        self = object.__new__(cls)  # not TypedStorage.__new__: no deprecation warning here
        self.dtype = dtype
        self._untyped_storage = untyped
        return self

    def _wrap(self, args: tuple[Any, ...], device: Any, dtype: Any, wrap_storage: Any) -> None:
        if len(args) != 0:
            raise C10RuntimeError(
                _INIT_ERROR + "\nNo positional arguments should be given when using 'wrap_storage'"
            )
        if dtype is None:
            raise C10RuntimeError(_INIT_ERROR + "\nArgument 'dtype' must be specified")
        if not isinstance(dtype, _dtype_cls):
            raise C10TypeError(
                _INIT_ERROR + f"\nArgument 'dtype' must be pyc10.dtype, not {type(dtype)}"
            )
        if device is not None:
            raise C10RuntimeError(
                _INIT_ERROR
                + "\nArgument 'device' should not be specified when 'wrap_storage' is given"
            )
        self.dtype = dtype
        if not isinstance(wrap_storage, UntypedStorage):
            raise C10TypeError(
                _INIT_ERROR + "\nArgument 'wrap_storage' must be UntypedStorage, but got "
                f"{type(wrap_storage)}"
            )
        self._untyped_storage = wrap_storage

    # ---- what the storage is ----

    @property
    def device(self) -> _device_cls:
        """The device of the bytes."""
        result: _device_cls = self._untyped_storage.device
        return result

    @property
    def is_cuda(self) -> bool:
        """Whether the bytes are on a CUDA device."""
        _warn_typed_storage_removal()
        return self.device.type == "cuda"

    @property
    def filename(self) -> str | None:
        """The file the storage maps with ``from_file(..., shared=True)``, else None."""
        return self._untyped_storage.filename

    def _share_fd_cpu_(self, *args: Any, **kwargs: Any) -> tuple[int, int]:
        """The bytes moved into a memory file: (descriptor, size in elements), as torch's."""
        fd, size = self._untyped_storage._share_fd_cpu_(*args, **kwargs)
        return fd, size // self._element_size()

    def _share_filename_cpu_(self, *args: Any, **kwargs: Any) -> tuple[bytes, bytes, int]:
        """The bytes moved into a named object: (manager, name, size in elements), as torch's."""
        manager, name, size = self._untyped_storage._share_filename_cpu_(*args, **kwargs)
        return manager, name, size // self._element_size()

    @classmethod
    def from_file(cls, filename: str, shared: bool, size: int) -> TypedStorage:
        """A storage of size elements over a memory-mapped file (legacy classes only, as torch)."""
        _warn_typed_storage_removal()
        legacy = getattr(cls, "_legacy_dtype", None)
        if legacy is None:
            raise C10RuntimeError("from_file can only be called on derived classes")
        itemsize = _DTYPE_NAMES[legacy].itemsize
        return cls(wrap_storage=UntypedStorage.from_file(filename, shared, size * itemsize))

    def untyped(self) -> UntypedStorage:
        """The UntypedStorage holding the bytes (shared, not copied)."""
        _warn_typed_storage_removal()
        return self._untyped_storage

    def _new_wrapped_storage(self, untyped: UntypedStorage) -> TypedStorage:
        return TypedStorage(wrap_storage=untyped, dtype=self.dtype, _internal=True)

    def element_size(self) -> int:
        """Bytes per element."""
        _warn_typed_storage_removal()
        return self._element_size()

    def _element_size(self) -> int:
        return int(self.dtype.itemsize)

    def nbytes(self) -> int:
        """The size in bytes."""
        _warn_typed_storage_removal()
        return self._nbytes()

    def _nbytes(self) -> int:
        return int(self._untyped_storage.nbytes())

    def size(self) -> int:
        """The number of elements (whole elements of dtype in the bytes)."""
        _warn_typed_storage_removal()
        return self._size()

    def _size(self) -> int:
        return self._nbytes() // self._element_size()

    def __len__(self) -> int:
        _warn_typed_storage_removal()
        return self._size()

    def data_ptr(self) -> int:
        """The address of the first byte."""
        _warn_typed_storage_removal()
        return int(self._untyped_storage.data_ptr())

    def get_device(self) -> int | None:
        """The device's index (None on the CPU, as torch)."""
        _warn_typed_storage_removal()
        return self._untyped_storage.get_device()

    def is_shared(self) -> bool:
        """Whether the bytes are in shared memory."""
        _warn_typed_storage_removal()
        return bool(self._untyped_storage.is_shared())

    def share_memory_(self) -> TypedStorage:
        """Move the bytes to shared memory (no-op if already there); self."""
        _warn_typed_storage_removal()
        self._untyped_storage.share_memory_()
        return self

    def _share_cuda_(self) -> tuple[Any, ...]:
        """The storage shared through CUDA IPC: ``UntypedStorage._share_cuda_``'s 8-tuple."""
        return self._untyped_storage._share_cuda_()

    @classmethod
    def _new_shared_cuda(cls, *args: Any) -> UntypedStorage:
        """An untyped storage over CUDA memory another process shared (as torch's)."""
        return UntypedStorage._new_shared_cuda(*args)

    @classmethod
    def _release_ipc_counter(cls, *args: Any, device: Any = None) -> None:
        """Decrement a producer's CUDA IPC reference counter (best effort, as torch)."""
        del device
        UntypedStorage._release_ipc_counter_cuda(*args)

    def resizable(self) -> bool:
        """Whether resize_ may change the size."""
        _warn_typed_storage_removal()
        return bool(self._untyped_storage.resizable())

    def resize_(self, size: int) -> None:
        """Grow or shrink to size elements."""
        _warn_typed_storage_removal()
        self._untyped_storage.resize_(size * self._element_size())

    def type(self, dtype: Any = None, non_blocking: bool = False) -> Any:
        """Torch's legacy storage type name ('torch.FloatStorage'), or the bytes converted.

        ``dtype``: a storage class or its dotted name (UntypedStorage.type, as torch's).
        """
        _warn_typed_storage_removal()
        if dtype is not None:
            return self._untyped_storage.type(dtype, non_blocking)
        name = _LEGACY.get(self.dtype._name)
        kind = self.device.type
        if name is None or kind not in ("cpu", "cuda"):
            return f"{self.__module__}.{type(self).__name__}"
        return f"torch.{'cuda.' if kind == 'cuda' else ''}{name}Storage"

    # ---- elements ----

    def _tensor(self) -> Any:
        from ._ctensor import empty

        n = self._size()
        return empty(0, dtype=self.dtype, device=self.device).set_(
            self._untyped_storage, 0, (n,), (1,)
        )

    def _maybe_wrap_index(self, idx: Any) -> int:
        if type(idx) is not int:
            raise C10TypeError(f"can't index a {type(self)} with {type(idx)}")
        n = self._size()
        if idx >= n or idx < -n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return idx % n

    def __getitem__(self, idx: Any) -> Any:
        _warn_typed_storage_removal()
        return self._getitem(idx)

    def _getitem(self, idx: Any) -> Any:
        if self.device.type == "meta":
            raise NotImplementedError("Not available for 'meta' device type")
        if isinstance(idx, slice):
            raise C10RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        if not isinstance(idx, int):
            raise C10RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        return self._tensor()[self._maybe_wrap_index(idx)].item()

    def __setitem__(self, idx: Any, value: Any) -> None:
        _warn_typed_storage_removal()
        self._setitem(idx, value)

    def _setitem(self, idx: Any, value: Any) -> None:
        if not isinstance(idx, (int, slice)):
            raise C10RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        if isinstance(value, (UntypedStorage, TypedStorage)):
            raise C10RuntimeError(f"cannot set item with value type {type(value)}")
        self._tensor()[idx] = value

    def __iter__(self) -> Iterator[Any]:
        _warn_typed_storage_removal()
        return iter([self._getitem(i) for i in range(self._size())])

    def tolist(self) -> list[Any]:
        """The elements as a list of Python numbers."""
        _warn_typed_storage_removal()
        return [self._getitem(i) for i in range(self._size())]

    def fill_(self, value: Any) -> TypedStorage:
        """Every element set to value; self."""
        _warn_typed_storage_removal()
        self._setitem(slice(0, self._size()), value)
        return self

    def copy_(self, source: Any, non_blocking: bool | None = None) -> TypedStorage:
        """The bytes of source (a storage of the same size) copied in; self."""
        _warn_typed_storage_removal()
        if isinstance(source, TypedStorage):
            source = source._untyped_storage
        if non_blocking is None:
            self._untyped_storage.copy_(source)
        else:
            self._untyped_storage.copy_(source, non_blocking)
        return self

    def clone(self) -> TypedStorage:
        """A copy with its own bytes."""
        _warn_typed_storage_removal()
        return self._new_wrapped_storage(self._untyped_storage.clone())

    def cpu(self) -> TypedStorage:
        """Self's bytes on the CPU: wrapped again when already there, else copied."""
        _warn_typed_storage_removal()
        return self._new_wrapped_storage(self._untyped_storage.cpu())

    # ---- copies, pickling, printing ----

    def __copy__(self) -> TypedStorage:
        _warn_typed_storage_removal()
        return self._new_wrapped_storage(self._untyped_storage)

    def __deepcopy__(self, memo: dict[int, Any]) -> TypedStorage:
        _warn_typed_storage_removal()
        import copy

        return self._new_wrapped_storage(copy.deepcopy(self._untyped_storage, memo))

    def __reduce__(self) -> tuple[Any, tuple[UntypedStorage, str]]:
        """Pickle by value: the bytes (UntypedStorage's pickling) and the dtype."""
        return _rebuild_typed_storage, (self._untyped_storage, self.dtype._name)

    def __str__(self) -> str:
        _warn_typed_storage_removal()
        name = f"{self.__module__}.{type(self).__name__}"
        info = f"[{name}(dtype={self.dtype}, device={self.device}) of size {self._size()}]"
        if self.device.type == "meta":
            return "...\n" + info
        return " " + "\n ".join(str(self._getitem(i)) for i in range(self._size())) + "\n" + info

    def __repr__(self) -> str:
        _warn_typed_storage_removal()
        return str(self)


# ---- torch's legacy storage classes (torch.FloatStorage, ...): TypedStorage of one dtype ----


class _LegacyStorageMeta(type):
    """The legacy classes' metaclass (torch.storage._LegacyStorageMeta).

    A TypedStorage of the class's dtype on the CPU is an instance
    (``isinstance(FloatStorage(4), FloatStorage)``), as torch's.
    """

    _legacy_dtype: str

    def __instancecheck__(cls, instance: Any) -> bool:
        if type(instance) is TypedStorage:
            return instance.device.type == "cpu" and instance.dtype._name == cls._legacy_dtype
        return False


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    """A TypedStorage class whose dtype is fixed (torch.storage._LegacyStorage).

    Calling one makes a TypedStorage of that dtype (TypedStorage.__new__).
    """

    _legacy_dtype: ClassVar[str]


def _legacy_new(
    cls: type, args: tuple[Any, ...], wrap_storage: Any, dtype: Any, device: Any
) -> TypedStorage:
    """``FloatStorage(*args, wrap_storage=)``: torch's _LegacyStorage checks, its words."""
    error = (
        f"{cls}.__new__ received an invalid combination of arguments. Expected one of:\n"
        " * no arguments\n"
        " * (int size)\n"
        " * (Sequence data)\n"
        " * (*, UntypedStorage wrap_storage)"
    )
    if device is not None:
        raise C10RuntimeError(error + "\nKeyword argument 'device' cannot be specified")
    if dtype is not None:
        raise C10RuntimeError(error + "\nKeyword argument 'dtype' cannot be specified")
    legacy = _DTYPE_NAMES[cls._legacy_dtype]  # type: ignore[attr-defined]
    if wrap_storage is None:
        if len(args) > 1:
            raise C10RuntimeError(error + "\nToo many positional arguments")
        if len(args) == 1 and not _isint(args[0]) and not isinstance(args[0], Sequence):
            raise C10TypeError(error + f"\nArgument type not recognized: {type(args[0])}")
        return TypedStorage(*args, dtype=legacy, device="cpu", _internal=True)
    if len(args) != 0:
        raise C10RuntimeError(
            error + "\nNo positional arguments should be given when using 'wrap_storage'"
        )
    if not isinstance(wrap_storage, UntypedStorage):
        raise C10TypeError(
            error
            + f"\nArgument 'wrap_storage' must be UntypedStorage, but got {type(wrap_storage)}"
        )
    if wrap_storage.device.type != "cpu":
        raise C10RuntimeError(
            error + f"\nDevice of 'wrap_storage' must be cpu, but got {wrap_storage.device.type}"
        )
    return TypedStorage(wrap_storage=wrap_storage, dtype=legacy, _internal=True)


def _legacy_class(dtype_name: str, name: str) -> type[_LegacyStorage]:
    # type() picks the bases' metaclass, _LegacyStorageMeta
    cls = type(name, (_LegacyStorage,), {"_legacy_dtype": dtype_name, "__module__": "pyc10"})
    cls.__doc__ = f"torch.{name}: a TypedStorage of {dtype_name} elements (deprecated, as torch's)."
    return cls


#: the legacy classes by name (pyc10.FloatStorage, ...), exported by pyc10 as torch's are
LEGACY_CLASSES: dict[str, type[_LegacyStorage]] = {
    f"{n}Storage": _legacy_class(d, f"{n}Storage") for d, n in _LEGACY.items()
}


def legacy_storage_class(dtype: _dtype_cls, device: _device_cls) -> type[_LegacyStorage] | None:
    """The CPU legacy class of dtype, else None (torch's _get_legacy_storage_class).

    torch looks the class up in the device's module (torch.cuda.FloatStorage); pyc10.cuda has
    no legacy classes, so a CUDA tensor's is None, as torch's for a module without them.
    """
    name = _LEGACY.get(dtype._name)
    if name is None or device.type != "cpu":
        return None
    return LEGACY_CLASSES[f"{name}Storage"]
