"""Untyped storages: refcounted bytes on a device, as ``torch.UntypedStorage``.

The type is in C (``pyc10._ctensor.StorageBase``, pyc10/_ext/storage.c); this subclass adds what
is rare, as torch's ``torch.storage.UntypedStorage`` adds to ``torch._C.StorageBase``: the repr,
pickling, the sharing strategy and a few conveniences.
"""

from __future__ import annotations

import builtins
import os
import pickle
import sys
from types import FrameType
from typing import TYPE_CHECKING, Any, cast

from . import _ctensor, _sharing
from ._adopt import adopt as _adopt
from ._ctensor import TensorBase
from ._device import _make as _make_device
from ._device import device as _device_cls
from ._dtype import DTYPE_NAMES as _DTYPE_NAMES
from ._dtype import dtype as _dtype_cls
from ._errors import (
    C10NotImplementedError,
    C10RuntimeError,
    C10TypeError,
    C10ValueError,
    check,
)
from ._lib import ffi, lib

if TYPE_CHECKING:
    from ._dtype import dtype

__all__ = ["UntypedStorage"]


def _import_dotted_name(name: str) -> Any:
    """The object a dotted name names, importing its first component (torch's helper)."""
    components = name.split(".")
    obj = __import__(components[0])
    for component in components[1:]:
        obj = getattr(obj, component)
    return obj


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _checked_ints(value: Any, what: str) -> tuple[int, ...]:
    """A pickle's tuple of int64s, or a clear error (pickles are untrusted input)."""
    if type(value) is not tuple:
        raise C10TypeError(f"{what} must be a tuple of ints, not {type(value).__name__}")
    for v in value:
        if type(v) is not int:
            raise C10TypeError(f"{what} must be a tuple of ints, but found {type(v).__name__}")
        if not _INT64_MIN <= v <= _INT64_MAX:
            raise C10RuntimeError(f"{what}: {v} is out of the range of int64")
    return cast("tuple[int, ...]", value)


def _checked_dtype(name: Any) -> _dtype_cls:
    """The dtype a pickle names, or a clear error."""
    if type(name) is not str:
        raise C10TypeError(f"dtype name must be str, not {type(name).__name__}")
    d = _DTYPE_NAMES.get(name)
    if d is None:
        raise C10ValueError(f"unknown dtype name {name!r}")
    return d


def _checked_offset(offset: Any) -> int:
    """A pickle's storage offset, or a clear error."""
    if type(offset) is not int:
        raise C10TypeError(f"storage offset must be int, not {type(offset).__name__}")
    if not _INT64_MIN <= offset <= _INT64_MAX:
        raise C10RuntimeError(f"storage offset {offset} is out of the range of int64")
    return offset


def _rebuild_storage(data: Any, device: Any) -> UntypedStorage:
    """Unpickle an UntypedStorage: new memory holding ``data``.

    Only plain data is accepted (``bytes`` or ``bytearray`` and a device string): it is one of
    the functions ``pyc10.serialization.safe_globals()`` lets torch's weights-only loader call.
    """
    if type(data) not in (bytes, bytearray):
        raise C10TypeError(f"storage data must be bytes, not {type(data).__name__}")
    if type(device) is not str:
        raise C10TypeError(f"storage device must be str, not {type(device).__name__}")
    host = UntypedStorage.from_buffer(data, dtype=_DTYPE_NAMES["uint8"])
    if _device_cls(device).type == "cpu":
        return host
    return UntypedStorage(len(data), device=device).copy_(host)


def _tensor_over(
    storage: UntypedStorage,
    offset: int,
    size: tuple[int, ...] | list[int],
    stride: tuple[int, ...] | list[int],
    dtype: _dtype_cls,
) -> TensorBase:
    """A tensor viewing ``storage`` with this geometry (the library checks it fits the storage)."""
    out = ffi.new("c10c_tensor **")
    check(
        lib.c10c_tensor_new_from_storage(
            out, storage._handle, list(size), list(stride), len(size), offset, dtype.value
        )
    )
    return cast("TensorBase", _ctensor.wrap(int(ffi.cast("uintptr_t", out[0])), out[0]))


def _bytes_view(storage: UntypedStorage, start: int, length: int) -> Any:
    """A 1-dim uint8 numpy array over ``length`` bytes of a CPU storage from ``start``.

    Zero-copy: the array holds a tensor over the storage, so the bytes stay alive while it
    lives; it is read-only when the storage is. The caller has checked the range.
    """
    return _tensor_over(storage, start, (length,), (1,), _DTYPE_NAMES["uint8"]).numpy()


def _storage_over_buffer(data: Any) -> UntypedStorage:
    """A CPU storage over a buffer's bytes, zero-copy (protocol 5's loads, as numpy's).

    The storage keeps the buffer alive; it is read-only when the buffer is (Ray's object store,
    a ``bytes`` object). A non-contiguous buffer is a ValueError, anything else a TypeError.
    """
    try:
        view = memoryview(data)
    except TypeError:
        raise C10TypeError(
            f"expected a bytes-like object holding the storage, not {type(data).__name__}"
        ) from None
    if not view.c_contiguous:
        raise C10ValueError("the storage's buffer is not contiguous")
    n = view.nbytes
    if n == 0:
        return UntypedStorage(0)
    import numpy  # not at import: import pyc10 stays free of numpy's start-up time

    # numpy reads any buffer, read-only ones too (the limited API of 3.10 has no buffer
    # protocol); the array holds the memoryview, which holds the buffer, and from_numpy's
    # storage holds the array (read-only when it is)
    array = numpy.frombuffer(view, numpy.uint8)
    storage: UntypedStorage = _ctensor.from_numpy(array).untyped_storage()
    return storage


# pickle's Python pickler's save, the caller of __reduce_ex__ in joblib's pickler (typeshed
# does not declare it)
_PICKLER_SAVE: Any = pickle._Pickler.save  # type: ignore[attr-defined]


def _pickled_by_joblib(caller: FrameType) -> bool:
    """Whether caller, the frame that called a ``__reduce_ex__``, is joblib's pickler's.

    ``joblib.dump`` writes the numpy arrays it meets raw beside the pickle and
    ``joblib.load(f, mmap_mode=...)`` maps them: bytes that go to joblib as a numpy array are
    mapped so too. joblib's pickler is pickle's Python one, which calls ``__reduce_ex__`` from
    its ``save``, whose ``self`` is the pickler.
    """
    numpy_pickle = sys.modules.get("joblib.numpy_pickle")
    pickler = getattr(numpy_pickle, "NumpyPickler", None)
    if pickler is None or caller.f_code is not _PICKLER_SAVE.__code__:
        return False  # (f_locals only of pickle's own frame: it copies a frame's variables)
    return isinstance(caller.f_locals.get("self"), pickler)


def _rebuild_storage_buffer(data: Any) -> UntypedStorage:
    """Unpickle an UntypedStorage pickled with protocol 5: a storage over the buffer itself."""
    return _storage_over_buffer(data)


def _pinned_strided(size: tuple[int, ...], stride: tuple[int, ...], d: dtype) -> TensorBase:
    """An uninitialized CPU tensor of these sizes and strides over pinned memory."""
    numel = 1
    for n in size:
        numel *= n
    span = 0 if numel == 0 else 1 + sum((n - 1) * st for n, st in zip(size, stride, strict=True))
    storage = ffi.new("c10c_storage **")
    check(
        lib.c10c_storage_new(
            storage,
            span * d.itemsize,
            lib.c10c_cuda_host_allocator(),
            lib.C10C_DEVICE_TYPE_CPU,
            False,
        )
    )
    out = ffi.new("c10c_tensor **")
    try:
        check(
            lib.c10c_tensor_new_from_storage(
                out, storage[0], list(size), list(stride), len(size), 0, d.value
            )
        )
    finally:
        lib.c10c_storage_release(storage[0])
    return cast("TensorBase", _ctensor.wrap(int(ffi.cast("uintptr_t", out[0])), out[0]))


def _no_arguments(method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Raise torch's arity errors for a StorageBase method without parameters."""
    if kwargs:
        raise C10TypeError(f"UntypedStorage.{method}() takes no keyword arguments")
    if args:
        raise C10TypeError(f"UntypedStorage.{method}() takes no arguments ({len(args)} given)")


_c_share_cuda = _ctensor.StorageBase._share_cuda_  # the C method, before the Python part's
_release_arranged_in = [0]  # the process that arranged _release_counter_files_at_exit


def _release_counter_files_at_exit() -> None:
    """Make this process's CUDA IPC reference-counter files go as it ends.

    The library does so from an exit hook, which ``os._exit`` skips: multiprocessing ends its
    fork and Pool children with ``os._exit`` after its own exit function, whose finalizers run,
    so one of them calls ``c10c_cuda_ipc_release_files`` (before, each such child that shared
    CUDA memory left a ``/dev/shm/c10c_*`` file for good, as torch's do). A forked child
    arranges its own: its parent's finalizers are cleared when it starts.
    """
    pid = os.getpid()
    if _release_arranged_in[0] == pid:
        return
    import multiprocessing.util  # a process that shares CUDA memory has it loaded already

    multiprocessing.util.Finalize(None, lib.c10c_cuda_ipc_release_files, exitpriority=-100)
    _release_arranged_in[0] = pid


class UntypedStorage(_ctensor.StorageBase):
    """Bytes on a device, as ``torch.UntypedStorage``.

    ``UntypedStorage(size=0, *, device=None)`` or ``UntypedStorage(sequence_of_ints)``: the bytes
    come from the device's installed allocator (the caching CPU allocator by default) and are
    freed when the last reference goes, from Python or from C. Every tensor over one storage
    gives the same object while it lives.
    """

    __module__ = "pyc10"
    __slots__ = ()

    def cpu(self) -> UntypedStorage:
        """Self on the CPU, else a CPU copy."""
        if self.device.type == "cpu":
            return self
        return UntypedStorage(self.nbytes()).copy_(self)

    def is_pinned(self, device: Any = None) -> bool:
        """Whether the bytes are pinned (page-locked, from the pinned host allocator).

        torch's: a tensor over the storage is asked (Tensor.is_pinned, which parses device).
        """
        from ._ctensor import empty

        return bool(
            empty(0, dtype=_DTYPE_NAMES["uint8"], device=self.device).set_(self).is_pinned(device)
        )

    def pin_memory(self, device: Any = None) -> UntypedStorage:
        """A copy of these CPU bytes in pinned memory (self when already pinned), as torch's."""
        from ._dtype import DTYPE_NAMES
        from ._lib import lib

        if self.device.type != "cpu":
            name = f"{type(self).__module__}.{type(self).__name__}"
            raise C10TypeError(f"cannot pin '{name}' only CPU memory can be pinned")
        if not lib.c10c_cuda_is_available():
            raise C10RuntimeError("Cannot access accelerator device when none is available.")
        if self.is_pinned():
            return self
        n = self.nbytes()
        pinned: UntypedStorage = _pinned_strided((n,), (1,), DTYPE_NAMES["uint8"]).untyped_storage()
        return pinned.copy_(self)

    def untyped(self) -> UntypedStorage:
        """Self (torch's typed/untyped bridge)."""
        return self

    def get_device(self) -> int | None:
        """The device's index (None on the CPU, as torch's ``device.index``)."""
        index: int | None = self.device.index
        return index

    def share_memory_(self) -> UntypedStorage:
        """Move the bytes into memory other processes can open; self (torch's share_memory_).

        In place: every tensor over the storage sees the new memory, which is no longer
        resizable. The strategy (:func:`pyc10.multiprocessing.get_sharing_strategy`) picks a
        memory file shared by descriptor (``_share_fd_cpu_``) or a named shared memory object
        (``_share_filename_cpu_``). A storage shared already, or on CUDA (shared through CUDA
        IPC), is left as it is. The old bytes are freed, unless their address was handed out
        (``data_ptr()``, numpy, DLPack): then they stay valid until the storage goes.
        """
        if self.device.type not in ("cpu", "meta"):
            pass  # only CPU uses POSIX shared memory (torch)
        elif _sharing.get_sharing_strategy() == "file_system":
            self._share_filename_cpu_()
        else:
            self._share_fd_cpu_()
        return self

    # torch's is a Python method of torch.storage._StorageBase, which names its arity errors
    share_memory_.__qualname__ = "_StorageBase.share_memory_"

    @classmethod
    def _release_ipc_counter(cls, *args: Any, device: Any = None) -> None:
        """Decrement a producer's CUDA IPC reference counter, as torch's (``device`` unused)."""
        del device
        cls._release_ipc_counter_cuda(*args)

    def _share_cuda_(self, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Share CUDA memory through CUDA IPC: torch's 8-tuple.

        (device, handle, size, offset, reference-counter file and offset, event handle,
        event_sync_required). The reference-counter file goes as this process ends, also where
        it ends with ``os._exit`` after multiprocessing's exit function (fork and Pool
        children), which runs no exit hook of the library: ``_release_counter_files_at_exit``.
        """
        _no_arguments("_share_cuda_", args, kwargs)
        shared = _c_share_cuda(self)
        _release_counter_files_at_exit()
        return shared

    def _share_fd_cpu_(self, *args: Any, **kwargs: Any) -> tuple[int, int]:
        """Move the bytes into a memory file; (its descriptor, size) as torch's.

        The descriptor stays the storage's (closed when it goes); another process maps it with
        ``_new_shared_fd_cpu`` once it arrives there (over a Unix socket: SCM_RIGHTS).
        """
        _no_arguments("_share_fd_cpu_", args, kwargs)
        return self._share_fd()

    def _share_filename_cpu_(self, *args: Any, **kwargs: Any) -> tuple[bytes, bytes, int]:
        """Move the bytes into a named shared memory object; (manager handle, name, size).

        The object has torch's RefcountedMapAllocator layout, so a torch process opens it with
        ``_new_shared_filename_cpu`` (and we open torch's). The manager handle is what
        pyc10.multiprocessing's manager reports (b"" without one).
        """
        _no_arguments("_share_filename_cpu_", args, kwargs)
        name, size, created = self._share_filename()
        manager = _sharing.created(name) if created else _sharing.manager_of(name)
        return manager, name, size

    @classmethod
    def _new_shared_filename_cpu(cls, *args: Any) -> UntypedStorage:
        """A storage over a named shared memory object: ``(manager_handle, name, size)``."""
        storage: UntypedStorage = cls._new_shared_filename(*args)
        _sharing.opened(args[0], args[1])
        return storage

    @classmethod
    def _new_using_filename_cpu(cls, *args: Any) -> UntypedStorage:
        """A new storage of ``size`` zero bytes in a new named shared memory object."""
        storage: UntypedStorage = cls._new_using_filename(*args)
        name = storage._shared_name()
        if name is not None:
            _sharing.created(name)
        return storage

    @classmethod
    def _new_shared(cls, size: int, *, device: Any = "cpu") -> UntypedStorage:
        """A new storage of size bytes in shared memory (by the strategy), as torch's."""
        dev = _device_cls(device)
        if dev.type != "cpu":
            return cls(size, device=dev)
        if _sharing.get_sharing_strategy() == "file_system":
            return cls._new_using_filename_cpu(size)
        return cls._new_using_fd_cpu(size)

    @property
    def filename(self) -> str | None:
        """The file this storage maps with ``from_file(..., shared=True)``, else None (torch's)."""
        return self._get_filename()

    def new(self, *args: Any, **kwargs: Any) -> UntypedStorage:
        """An empty storage on the same device (torch's ``StorageBase.new()``, no arguments)."""
        if kwargs:
            raise C10TypeError("StorageBase.new() takes no keyword arguments")
        if args:
            raise C10TypeError(f"StorageBase.new() takes no arguments ({len(args)} given)")
        return UntypedStorage(0, device=self.device)

    def to(self, *, device: Any, non_blocking: bool = False) -> UntypedStorage:
        """Self when already on ``device``, else a copy there (torch's ``_StorageBase.to``).

        As torch's ``torch._utils._to``: a CPU copy of a CUDA storage is pinned when
        ``non_blocking``; a device type without a pyc10 module (meta) is torch's AssertionError
        "META device module is not loaded".
        """
        if not isinstance(device, _device_cls):
            device = _device_cls(device)
        if self.device == device:
            return self
        if device.type == "cpu":
            n = self.nbytes()
            if non_blocking and self.device.type == "cuda":
                out: UntypedStorage = _pinned_strided(
                    (n,), (1,), _DTYPE_NAMES["uint8"]
                ).untyped_storage()
            else:
                out = UntypedStorage(n)
            return out.copy_(self, non_blocking)
        from . import cuda  # a lower layer; torch looks its device modules up on torch

        module = {"cuda": cuda}.get(device.type)
        if module is None:
            raise AssertionError(f"{device.type.upper()} device module is not loaded")
        with module.device(device):
            return UntypedStorage(self.size(), device=device).copy_(self, non_blocking)

    def byteswap(self, dtype: Any) -> None:
        """Reverse the bytes of every ``dtype`` element in place (each half of a complex one).

        As torch's: a dtype that is no ``pyc10.dtype`` is a RuntimeError, as is a size that is
        no multiple of the element size.
        """
        if not isinstance(dtype, _dtype_cls):
            raise C10RuntimeError(f"expected pyc10.dtype, but got {builtins.type(dtype)}")
        elem_size = dtype.itemsize
        if dtype.is_complex:  # the real and imaginary parts are swapped each, not exchanged
            elem_size = max(elem_size // 2, 1)
        self._byteswap(elem_size)

    def _byteswap(self, elem_size: int) -> None:
        """Reverse every ``elem_size`` bytes in place (torch's ``StorageBase._byteswap``)."""
        if not isinstance(elem_size, int):
            raise C10RuntimeError("_byteswap(): arg must be an 'int'")
        if elem_size not in (1, 2, 4, 8):
            raise C10RuntimeError("elem_size must be 1, 2, 4, or 8")
        n = self.nbytes()
        if n % elem_size:
            raise C10RuntimeError(f"the length of data is not a multiple of {elem_size}")
        if elem_size == 1:
            return
        data = self._bytes()
        swapped = bytearray(n)
        for k in range(elem_size):
            swapped[k::elem_size] = data[elem_size - 1 - k :: elem_size]
        self.copy_(UntypedStorage.from_buffer(swapped, dtype=_DTYPE_NAMES["uint8"]))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickle (and copy, deepcopy) by value: the bytes and the device."""
        if self.device.type == "meta":
            raise C10NotImplementedError("Cannot copy out of meta tensor; no data!")
        return _rebuild_storage, (self._bytes(), str(self.device))

    def _reduce_ex(self, protocol: int) -> tuple[Any, tuple[Any, ...]]:
        """__reduce_ex__'s work (its C part converts protocol as torch's, object's, does).

        Pickle: with protocol 5 a CPU storage's bytes go as one ``pickle.PickleBuffer``.

        With a ``buffer_callback`` nothing is copied (the buffer goes out of band, as numpy's
        arrays do) and loading with ``buffers=`` wraps the buffer itself (read-only when it is);
        without one the buffer is pickled in band. Lower protocols and other devices: the bytes
        and the device (``__reduce__``). ``joblib.dump`` gets the bytes as a numpy array, which
        it writes raw, so that ``joblib.load(f, mmap_mode="r")`` maps them.
        """
        if self.device.type == "cpu":
            joblib = "joblib.numpy_pickle" in sys.modules and _pickled_by_joblib(sys._getframe(1))
            if protocol >= 5 or joblib:
                window = _bytes_view(self, 0, self.nbytes())
                return _rebuild_storage_buffer, (window if joblib else pickle.PickleBuffer(window),)
        return self.__reduce__()

    def type(self, dtype: Any = None, non_blocking: bool = False) -> Any:
        """The type's name ("pyc10.UntypedStorage"), or self converted to ``dtype``.

        torch's ``torch._utils._type``: ``dtype`` is a class or its dotted name (imported);
        self when it is this type, else ``dtype(self.size()).copy_(self, non_blocking)``.
        """
        if dtype is None:
            return self.__module__ + "." + self.__class__.__name__
        if isinstance(dtype, str):
            dtype = _import_dotted_name(dtype)
        if dtype is builtins.type(self):
            return self
        if dtype.is_sparse:
            raise C10RuntimeError("Cannot cast dense tensor to sparse tensor")
        return dtype(self.size()).copy_(self, non_blocking)

    def __repr__(self) -> str:
        n = self.nbytes()
        header = f"[pyc10.UntypedStorage(device={self.device}) of size {n}]"
        if self.device.type == "meta":
            return "...\n" + header
        if n == 0:
            return " \n" + header
        return " " + "\n ".join(str(b) for b in self._bytes()) + "\n" + header


# torch's are Python methods of torch.storage._StorageBase, which names their arity errors
for _name in ("to", "type"):
    vars(UntypedStorage)[_name].__qualname__ = f"_StorageBase.{_name}"

if not TYPE_CHECKING:
    UntypedStorage = _adopt(UntypedStorage, _ctensor.StorageBase, "StorageBase")

UntypedStorage._setup(
    UntypedStorage,
    lambda address: ffi.cast("c10c_storage *", address),
    _make_device,
    C10NotImplementedError,
)
