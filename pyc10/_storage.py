"""Untyped storages: refcounted bytes on a device, as ``torch.UntypedStorage``."""

from __future__ import annotations

import weakref
from typing import Any, final

from ._device import _from_c as _device_from_c
from ._device import device as _device_cls
from ._errors import C10IndexError, C10RuntimeError, C10TypeError, check, raise_status
from ._lib import ffi, lib

__all__ = ["UntypedStorage"]

# (keeps an exception in flight: the last reference may run a deleter that runs Python code)
_release = lib.pyc10_storage_release
_new = lib.pyc10_storage_new
_gc = ffi.gc
_UINTPTR = ffi.typeof("uintptr_t")

# The Python object of each C storage that has one, so that every tensor over a storage gives the
# same UntypedStorage: pickle and deepcopy then keep tensors that shared a storage sharing one.
_objects: weakref.WeakValueDictionary[int, UntypedStorage] = weakref.WeakValueDictionary()


def _storage_object(handle: Any) -> UntypedStorage:
    """The UntypedStorage of a borrowed ``c10c_storage *`` (made, with a new reference, once)."""
    key = int(ffi.cast(_UINTPTR, handle))
    found = _objects.get(key)
    if found is None:
        found = _objects[key] = UntypedStorage._from_handle(lib.c10c_storage_retain(handle))
    return found


def _rebuild_storage(data: bytes, device: str) -> UntypedStorage:
    """Unpickle an UntypedStorage: new memory holding ``data``."""
    storage = UntypedStorage(len(data), device=device)
    if data:
        ffi.memmove(lib.c10c_storage_data(storage._handle), data, len(data))
    return storage


@final
class UntypedStorage:
    """Bytes on a device, as ``torch.UntypedStorage(nbytes, device=...)``.

    The bytes come from the device's installed allocator (the caching CPU allocator by default)
    and are freed when the last reference goes, from Python or from C.
    """

    __module__ = "pyc10"
    __slots__ = ("__weakref__", "_handle", "_keepalive")

    _handle: Any
    _keepalive: Any

    def __init__(self, nbytes: int = 0, *, device: _device_cls | str | None = None) -> None:
        if type(nbytes) is not int:
            raise C10TypeError(
                f"UntypedStorage(): argument 'size' must be int, not {type(nbytes).__name__}"
            )
        device_type = 0 if device is None else _device_cls(device)._type  # 0: CPU
        handle = _new(nbytes, device_type)
        if handle == ffi.NULL:
            raise_status(lib.c10c_last_error_status())
        self._handle = _gc(handle, _release)
        self._keepalive = None

    @classmethod
    def _from_handle(cls, handle: Any, keepalive: Any = None) -> UntypedStorage:
        """Wrap a new reference (``c10c_storage *``) that this object then owns."""
        self = object.__new__(cls)
        self._handle = ffi.gc(handle, _release)
        self._keepalive = keepalive
        return self

    def nbytes(self) -> int:
        """Size in bytes."""
        return int(lib.c10c_storage_nbytes(self._handle))

    def size(self) -> int:
        """Size in bytes (torch's ``UntypedStorage.size``)."""
        return self.nbytes()

    def __len__(self) -> int:
        return self.nbytes()

    def element_size(self) -> int:
        """1: an untyped storage counts bytes."""
        return 1

    def data_ptr(self) -> int:
        """Address of the first byte (0 for an empty storage)."""
        return int(ffi.cast("uintptr_t", lib.c10c_storage_data(self._handle)))

    @property
    def device(self) -> _device_cls:
        """The device of the bytes."""
        return _device_from_c(lib.c10c_storage_device(self._handle))

    def resizable(self) -> bool:
        """Whether ``resize_`` may change the size (storages over external memory may not)."""
        return bool(lib.c10c_storage_resizable(self._handle))

    def resize_(self, size: int) -> UntypedStorage:
        """Resize to ``size`` bytes, keeping the common prefix; returns self."""
        if type(size) is not int:
            raise C10TypeError(f"resize_(): argument 'size' must be int, not {type(size).__name__}")
        check(lib.c10c_storage_resize(self._handle, size))
        return self

    def use_count(self) -> int:
        """Number of strong references to the storage (Python objects and C holders)."""
        return int(lib.c10c_storage_use_count(self._handle))

    def tolist(self) -> list[int]:
        """The bytes as a list of ints (CPU storages)."""
        return list(self._bytes())

    def _bytes(self) -> bytes:
        n = self.nbytes()
        if n == 0:
            return b""
        if self.device.type != "cpu":
            raise C10TypeError("reading bytes needs a CPU storage")
        return bytes(ffi.buffer(lib.c10c_storage_data(self._handle), n))

    def _host_bytes(self) -> Any:
        """The bytes as ``unsigned char *`` (CPU storages: other memory is not the host's)."""
        if self.device.type != "cpu":
            raise C10TypeError("reading bytes needs a CPU storage")
        return ffi.cast("unsigned char *", lib.c10c_storage_data(self._handle))

    def __getitem__(self, index: int) -> int:
        n = self.nbytes()
        if type(index) is not int:
            raise C10TypeError(f"storage indices must be integers, not {type(index).__name__}")
        if not -n <= index < n:
            raise C10IndexError(f"index {index} out of range for storage of size {n}")
        return int(self._host_bytes()[index % n])

    def __setitem__(self, index: int, value: int) -> None:
        if lib.c10c_storage_is_read_only(self._handle):
            raise C10RuntimeError("cannot write to a read-only storage")
        n = self.nbytes()
        if type(index) is not int:
            raise C10TypeError(f"storage indices must be integers, not {type(index).__name__}")
        if not -n <= index < n:
            raise C10IndexError(f"index {index} out of range for storage of size {n}")
        self._host_bytes()[index % n] = value & 0xFF

    def __reduce__(self) -> tuple[Any, tuple[bytes, str]]:
        """Pickle (and deepcopy) by value: the bytes and the device (CPU storages)."""
        return _rebuild_storage, (self._bytes(), str(self.device))

    def __repr__(self) -> str:
        header = f"[pyc10.UntypedStorage(device={self.device}) of size {self.nbytes()}]"
        if self.nbytes() == 0 or self.device.type != "cpu":
            return " \n" + header if self.nbytes() == 0 else header
        return " " + "\n ".join(str(b) for b in self._bytes()) + "\n" + header
