"""Pickling that sends shared memory instead of bytes: torch.multiprocessing.reductions for pyc10.

``init_reductions()`` registers these reducers with ``multiprocessing.reduction.ForkingPickler``,
which every ``multiprocessing`` queue, pipe and pool pickles with. A CPU storage goes by handle,
after ``share_memory_``-style moving into shared memory:

- strategy ``file_descriptor``: ``(rebuild_storage_fd, (cls, DupFd, size, janitor, token))``,
  the memory file (a memfd: it has no name, so nothing is left behind whoever dies) travels as a
  descriptor; torch's tuple plus two fields, so that its sender may exit first (below);
- strategy ``file_system``: ``(rebuild_storage_filename, (cls, manager_handle, name, size))``,
  a named POSIX shared memory object, held for the receiver while in flight, and guarded by the
  janitor whose address is ``manager_handle`` (``_janitor``).

A tensor goes as its (typed) storage plus offset, sizes and strides (``rebuild_tensor``), so the
receiver's tensor is a view of the same memory; a storage sent twice (or two tensors over one
storage) arrives as one object, through ``shared_cache`` (handle -> weak reference). CUDA
tensors go by CUDA IPC handle (``rebuild_cuda_tensor``), meta tensors by their metadata.
The tuples are torch's, so the names and argument orders match torch 2.13's reductions.py.

A file_descriptor sender may exit before its tensors are received (torch loses them: its
``DupFd`` is handed out by a thread of the sender, multiprocessing's resource sharer, which is
gone with it). Here the pickle also carries its process tree's janitor's address and a token
(16 random bytes), and the sender remembers the descriptor under that token until a receiver
fetches it (``_guarded_dup_fd``: multiprocessing's own ``DupFd``, registered with the resource
sharer as it registers itself). When the sender exits normally it passes the descriptors no
receiver has fetched yet to the janitor (``_hand_over_pending``: SCM_RIGHTS, after the queues'
feeder threads flushed); a receiver that cannot get one from its sender asks the janitor
(``_janitor.fetch_fd``: a connection checked as every janitor connection is; the descriptor
back with SCM_RIGHTS, then no longer held there). Fetching and handing over take the
descriptor under one lock: each goes one way, once. It is the same memory file (sealed against
shrinking, checked as any received one), not a copy. The janitor holds such a descriptor for
``PYC10_SHM_JANITOR_LINGER`` seconds (default 60) after its sender exited, at most, and at most
half its descriptor limit (65,536 at most) of them at once (``_janitor``): memory that nobody
receives stays allocated that long after its sender exited, no longer. While the sender lives
nothing changes (a token and one ``dup`` a storage; the janitor is not even asked), so the
normal path costs what it did. A sender killed by SIGKILL hands nothing over: its receivers
fail as with torch.

Why through the janitor rather than with the message: a multiprocessing queue or pipe carries
bytes (a pipe cannot carry descriptors, and a socket-based connection would pass them only when
the pickle is written straight to it, not through the queue's buffer and feeder thread); the
janitor already serves every process of the tree over a socket only its user can reach, checks
its peers' user, and outlives the sender. Why at exit rather than at each put: passing each
descriptor to the janitor when it is pickled (and dropping it when received) made a put -> get
about 1.5 to 2 times as slow on a 2-CPU machine (the janitor's two lines a tensor). Without a
janitor (not Linux, or one that could not be had: warned once) the pickle is torch's and so is
the error when the sender has exited.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.reduction
import os
import threading
from multiprocessing import reduction
from multiprocessing.util import register_after_fork
from typing import Any

from .. import _sharing
from .._dtype import dtype as _dtype_cls
from .._lib import ffi, lib
from .._storage import UntypedStorage
from .._tensor import Tensor
from .._tensor import _rebuild_tensor as _tensor_from_storage
from .._typed_storage import LEGACY_CLASSES, TypedStorage
from ..cuda._runtime import _require
from . import _janitor

try:
    # Loaded now so that a fork while the queue's feeder thread pickles (DupFd imports it) does
    # not leave a half-initialized module to the child (torch's reason too).
    import multiprocessing.resource_sharer
except ImportError:  # pragma: no cover - platforms without it
    pass

# The shared-memory methods (_share_fd_cpu_, _new_shared_cuda, ...) as torch names them; typed
# Any here, as torch's stubs leave them.
_STORAGE: Any = UntypedStorage
_reduction: Any = multiprocessing.reduction
_WEAK_PTR = "c10c_weak_storage *"
_UINTPTR = "uintptr_t"


def _free_weak_ref(
    cdata: int,
    _release: Any = lib.c10c_weak_storage_release,
    _cast: Any = ffi.cast,
    _ptr: str = _WEAK_PTR,
) -> None:
    # What it uses is bound now: module globals are None by the time the last weak reference
    # goes at interpreter shutdown.
    _release(_cast(_ptr, cdata))


def _expired(cdata: int) -> bool:
    return bool(lib.c10c_weak_storage_expired(ffi.cast(_WEAK_PTR, cdata)))


def _untyped(storage: Any) -> UntypedStorage:
    if isinstance(storage, TypedStorage):
        return storage._untyped_storage
    result: UntypedStorage = storage
    return result


def _new_with_weak_ptr(cdata: int) -> UntypedStorage | None:
    """The storage a weak reference names, as its (one) Python object; None once it is freed."""
    out = ffi.new("c10c_storage **")
    if lib.c10c_weak_storage_lock(out, ffi.cast(_WEAK_PTR, cdata)) != 0 or out[0] == ffi.NULL:
        return None
    # The Python object of a storage comes from a tensor over it (every tensor over one storage
    # gives the same object): an empty byte view, which holds its own reference.
    t = ffi.new("c10c_tensor **")
    status = lib.c10c_tensor_new_from_storage(t, out[0], [0], [1], 1, 0, 0)
    lib.c10c_storage_release(out[0])
    if status != 0:
        return None
    result: UntypedStorage = Tensor._wrap(t[0]).untyped_storage()
    return result


class StorageWeakRef:
    r"""A weak reference to a Storage.

    The cdata member is a Python number containing the integer representation of
    the Storage pointer (here: of a libc10c weak storage reference, which it owns).
    """

    __slots__ = ["_free_weak_ref", "cdata"]

    def __init__(self, storage: Any) -> None:
        out = ffi.new("c10c_weak_storage **")
        if lib.c10c_storage_weak_ref(out, _untyped(storage)._handle) != 0:
            raise MemoryError("StorageWeakRef: could not make a weak reference")
        self.cdata: int = int(ffi.cast(_UINTPTR, out[0]))
        # Kept here: the module may be cleared before this object at interpreter shutdown.
        self._free_weak_ref = _free_weak_ref

    @classmethod
    def from_weakref(cls, cdata: int) -> StorageWeakRef:
        """One owning the weak reference ``cdata`` (an address as ``cdata`` holds)."""
        instance = cls.__new__(cls)
        instance.cdata = cdata
        instance._free_weak_ref = _free_weak_ref
        return instance

    def expired(self) -> bool:
        """Whether the storage has been freed."""
        return _expired(self.cdata)

    def __del__(self) -> None:
        self._free_weak_ref(self.cdata)

    def __hash__(self) -> int:
        return self.cdata

    def __eq__(self, other: object) -> bool:
        if id(self) == id(other):
            return True
        return isinstance(other, StorageWeakRef) and self.cdata == other.cdata


class SharedCache(dict[Any, StorageWeakRef]):
    """Dictionary from multiprocessing handles to StorageWeakRef."""

    def __init__(self) -> None:
        # free_dead_references() runs when the length passes the limit, which scales with the
        # number of live entries: amortized O(1) per insertion.
        self.limit = 128
        # A fork may happen while another thread holds the lock: the child gets a new one.
        self._after_fork()
        register_after_fork(self, SharedCache._after_fork)

    def _after_fork(self) -> None:
        self.lock = threading.Lock()

    def get(self, key: Any) -> StorageWeakRef | None:  # type: ignore[override]
        """The weak reference stored for key, or None."""
        with self.lock:
            return dict.get(self, key)

    def __setitem__(self, key: Any, storage_ref: StorageWeakRef) -> None:
        with self.lock:
            dict.__setitem__(self, key, storage_ref)
            if len(self) > self.limit:
                self.free_dead_references()

    def free_dead_references(self) -> None:
        """Drop the entries whose storage is gone."""
        live = 0
        for key, storage_ref in list(self.items()):
            if storage_ref.expired():
                del self[key]
            else:
                live += 1
        self.limit = max(128, live * 2)


# mapping from handles to StorageWeakRef objects
shared_cache = SharedCache()


def rebuild_event(device: Any, handle: bytes) -> Any:
    """Unpickle a CUDA event: the sender's, opened from its IPC handle."""
    from .. import cuda

    event_cls: Any = cuda.Event  # from_ipc_handle: pyc10.cuda's CUDA IPC
    return event_cls.from_ipc_handle(device, handle)


def reduce_event(event: Any) -> tuple[Any, tuple[Any, ...]]:
    """Pickle a CUDA event by IPC handle."""
    handle = event.ipc_handle()
    device = getattr(event, "device", None)
    if device is None:  # an Event without torch's device property: the current device's
        from .. import cuda

        device = cuda.current_device()
    return (rebuild_event, (device, handle))


def _rebuild_tensor(storage: TypedStorage, storage_offset: int, size: Any, stride: Any) -> Tensor:
    """A tensor over storage's bytes (torch._utils._rebuild_tensor), checked against its size."""
    return _tensor_from_storage(
        storage._untyped_storage, storage_offset, tuple(size), tuple(stride), storage.dtype._name
    )


def rebuild_tensor(cls: type, storage: TypedStorage, metadata: tuple[Any, ...]) -> Tensor:
    """Unpickle a CPU tensor: a view of the shared storage (pyc10 has no autograd)."""
    storage_offset, size, stride, _requires_grad = metadata
    return _rebuild_tensor(storage, storage_offset, size, stride)


def rebuild_meta_tensor(  # noqa: PLR0917  (torch's signature: the pickle calls it so)
    tensor_cls: type,
    tensor_size: Any,
    tensor_stride: Any,
    tensor_offset: int,
    dtype: _dtype_cls,
    storage_size_bytes: int,
    requires_grad: bool,
) -> Tensor:
    """Unpickle a meta tensor: a meta storage of the same size and the same view of it."""
    untyped_storage = UntypedStorage(storage_size_bytes, device="meta")
    typed_storage = TypedStorage(wrap_storage=untyped_storage, dtype=dtype, _internal=True)
    return _rebuild_tensor(typed_storage, tensor_offset, tensor_size, tensor_stride)


def rebuild_cuda_tensor(  # noqa: PLR0917  (torch's signature: the pickle calls it so)
    tensor_cls: type,
    tensor_size: Any,
    tensor_stride: Any,
    tensor_offset: int,
    storage_cls: Any,
    dtype: _dtype_cls,
    storage_device: int,
    storage_handle: bytes | None,
    storage_size_bytes: int,
    storage_offset_bytes: int,
    requires_grad: bool,
    ref_counter_handle: bytes,
    ref_counter_offset: int,
    event_handle: bytes,
    event_sync_required: bool,
) -> Tensor:
    """Unpickle a CUDA tensor: the sender's allocation opened by IPC handle, cached per handle.

    The storage is opened once per (handle, offset) while it lives; a second arrival releases
    the producer's reference counter at once, since this process already counts as a user.
    """
    if storage_handle is None or storage_size_bytes == 0:  # no allocation behind it
        untyped = UntypedStorage(0, device=f"cuda:{storage_device}")
    else:
        key = (storage_handle, storage_offset_bytes)
        cached = storage_from_cache(storage_cls, key)
        if cached is None:
            _require()  # torch's _lazy_init: a clear error without CUDA
            untyped = _STORAGE._new_shared_cuda(
                storage_device,
                storage_handle,
                storage_size_bytes,
                storage_offset_bytes,
                ref_counter_handle,
                ref_counter_offset,
                event_handle,
                event_sync_required,
            )
            shared_cache[key] = StorageWeakRef(untyped)
        else:
            untyped = cached
            # Counted already: the producer's counter for this message is released now.
            _STORAGE._release_ipc_counter(
                ref_counter_handle, ref_counter_offset, device=storage_device
            )
    typed = TypedStorage(wrap_storage=untyped, dtype=dtype, _internal=True)
    return _rebuild_tensor(typed, tensor_offset, tensor_size, tensor_stride)


def reduce_tensor(tensor: Tensor) -> tuple[Any, tuple[Any, ...]]:
    """Pickle a tensor as a view of shared memory: its storage (moved there) and metadata.

    CUDA tensors go by CUDA IPC handle of their allocation (torch's Note [CUDA IPC and the
    caching allocator]: the receiver rebuilds the storage from the allocation's handle and the
    storage's offset in it), meta tensors by their sizes alone.
    """
    untyped = tensor.untyped_storage()
    device_type = untyped.device.type
    if device_type == "cuda":
        (
            device,
            handle,
            storage_size_bytes,
            storage_offset_bytes,
            ref_counter_handle,
            ref_counter_offset,
            event_handle,
            event_sync_required,
        ) = _STORAGE._share_cuda_(untyped)
        shared_cache[handle] = StorageWeakRef(untyped)
        return (
            rebuild_cuda_tensor,
            (
                type(tensor),
                tensor.size(),
                tensor.stride(),
                tensor.storage_offset(),  # tensor offset in its storage
                TypedStorage,
                tensor.dtype,
                device,
                handle,  # which CUDA allocation the storage is in
                storage_size_bytes,  # size (in bytes) of the storage
                storage_offset_bytes,  # offset (in bytes) of the storage in the allocation
                False,  # requires_grad: pyc10 has no autograd
                ref_counter_handle,
                ref_counter_offset,
                event_handle,
                event_sync_required,
            ),
        )
    if device_type == "meta":
        return (
            rebuild_meta_tensor,
            (
                type(tensor),
                tensor.size(),
                tensor.stride(),
                tensor.storage_offset(),
                tensor.dtype,
                untyped.size(),
                False,
            ),
        )
    storage = TypedStorage._over(untyped, tensor.dtype)
    metadata = (tensor.storage_offset(), tensor.size(), tensor.stride(), False)
    return (rebuild_tensor, (type(tensor), storage, metadata))


def fd_id(fd: int) -> tuple[int, int]:
    """(inode, device) of an open file: the same memory file gives the same pair, whatever fd."""
    stat = os.fstat(fd)
    return (stat.st_ino, stat.st_dev)


def storage_from_cache(cls: Any, key: Any) -> UntypedStorage | None:
    """The live storage cached under key, or None."""
    storage_ref = shared_cache.get(key)
    if storage_ref is None:
        return None
    return _new_with_weak_ptr(storage_ref.cdata)


# The file_descriptor strategy's descriptors that no receiver has fetched yet, by token:
# (the descriptor, the process that made it, its janitor's address). At exit they go to the
# janitor (_hand_over_pending); a receiver's fetch takes one out (under the lock, so one or the
# other has it).
_pending_lock = threading.Lock()
_pending: dict[bytes, tuple[int, int, bytes]] = {}


def _guarded_dup_fd(fd: int) -> tuple[Any, bytes, bytes] | None:
    """A DupFd of fd (multiprocessing's) that goes to the janitor if this process exits first.

    (df, janitor address, token); None where there is no janitor (not Linux, no private
    directory) or the pickle goes to a child being started (its descriptors go with its start).
    """
    if not _janitor.SUPPORTED or multiprocessing.context.get_spawning_popen() is not None:
        return None
    try:
        address = _janitor.tree_address()
    except RuntimeError:
        return None
    from multiprocessing import resource_sharer

    token = os.urandom(16).hex().encode()
    new_fd = os.dup(fd)
    with _pending_lock:
        _pending[token] = (new_fd, os.getpid(), address)

    def send(conn: Any, pid: int) -> None:  # in the resource sharer's thread, when fetched
        with _pending_lock:
            entry = _pending.pop(token, None)
        if entry is None:
            return  # handed to the janitor (exiting): the receiver asks it instead
        try:
            reduction.send_handle(conn, entry[0], pid)
        finally:
            os.close(entry[0])

    def close() -> None:  # after send, or never fetched (the sharer stops, or after a fork)
        with _pending_lock:
            entry = _pending.pop(token, None)
        if entry is not None:
            os.close(entry[0])

    # resource_sharer.DupFd itself, registered with these two instead of its own (the same
    # pickle; only what its sender does differs).
    df: Any = resource_sharer.DupFd.__new__(resource_sharer.DupFd)
    df._id = resource_sharer._resource_sharer.register(send, close)  # type: ignore[attr-defined]
    return df, address, token


def _hand_over_pending(only: set[bytes] | None = None) -> None:
    """Exiting: pass the descriptors no receiver fetched yet to the janitor, by token."""
    with _pending_lock:
        mine = [
            (token, entry)
            for token, entry in _pending.items()
            if entry[1] == os.getpid() and (only is None or token in only)
        ]
        for token, _ in mine:
            del _pending[token]
    for token, (fd, _, address) in mine:
        try:
            _janitor.hand_over(address, token, fd)
        finally:
            os.close(fd)


class _HandOverHook:
    """Runs _hand_over_pending at a normal exit: after the queues' feeder threads flushed."""

    def __init__(self) -> None:
        self.register()
        register_after_fork(self, _HandOverHook.register)  # a child clears its finalizers

    def register(self) -> None:
        from multiprocessing import util

        # multiprocessing's exit runs finalizers by priority, highest first; the feeder threads
        # are joined at -5, and may pickle what was put last.
        util.Finalize(None, _hand_over_pending, exitpriority=-100)


_hand_over_hook: _HandOverHook | None = None


def rebuild_storage_fd(
    cls: Any, df: Any, size: int, janitor: bytes | None = None, token: bytes | None = None
) -> UntypedStorage:
    """Unpickle a storage sent by file descriptor: map the memory file (once per file).

    The descriptor comes from the sender's process (multiprocessing's resource sharer); when
    that has exited, from the janitor that holds it under token (see the module's docstring).
    A handle neither can serve is a RuntimeError saying why.
    """
    try:
        fd = df.detach()
    except (OSError, EOFError, multiprocessing.AuthenticationError) as e:
        if janitor is None and token is None:
            raise RuntimeError(
                "pyc10.multiprocessing: could not receive the file descriptor of a shared "
                "storage from its sender (it has exited, or this handle was received already; "
                "with the file_descriptor strategy a sender must run until its tensors are "
                f"received): {e!r}"
            ) from e
        try:
            fd = _janitor.fetch_fd(janitor, token)  # type: ignore[arg-type]
        except RuntimeError as why:
            raise RuntimeError(
                "pyc10.multiprocessing: could not receive the file descriptor of a shared "
                f"storage from its sender ({e!r}: it has exited, or this handle was received "
                f"already), nor from its janitor: {why}"
            ) from e
    try:
        storage = storage_from_cache(cls, fd_id(fd))
        if storage is not None:
            return storage
        new: UntypedStorage = _STORAGE._new_shared_fd_cpu(fd, size)
        shared_cache[fd_id(fd)] = StorageWeakRef(new)
        return new
    finally:
        os.close(fd)


def rebuild_storage_filename(
    cls: Any, manager: bytes, handle: bytes, size: int, dtype: _dtype_cls | None = None
) -> Any:
    """Unpickle a storage sent by name: open the named memory (once per name).

    ``manager`` must be a janitor's address; the janitor learns that this process uses the name
    (the storage's ``name_opened`` hook) and that the message has landed. The sender's in-flight
    reference is dropped (``_shared_decref``) once this process holds its own.
    """
    _janitor.check_handle(manager)
    storage: Any = storage_from_cache(cls, handle)
    if storage is None:
        untyped = _STORAGE._new_shared_filename_cpu(
            manager, handle, size if dtype is None else size * dtype.itemsize
        )
        storage = (
            untyped
            if dtype is None
            else TypedStorage(wrap_storage=untyped, dtype=dtype, _internal=True)
        )
        shared_cache[handle] = StorageWeakRef(storage)
    _janitor.landed(manager, handle)
    _shared_decref(_untyped(storage))
    return storage


def _refcount_add(storage: UntypedStorage, delta: int) -> int | None:
    """Add delta to a named storage's shared reference count; the count before (None: not named).

    The count is the one in torch's RefcountedMapAllocator header, as torch's
    StorageBase._shared_incref/_shared_decref move it.
    """
    before: int | None = storage._shared_refcount_add(delta)
    return before


def _shared_incref(storage: UntypedStorage) -> None:
    """One more reference to a named storage's object: held for a message in flight."""
    _refcount_add(storage, 1)


def _shared_decref(storage: UntypedStorage) -> None:
    """Drop the reference a message in flight held (the receiver holds its own by now)."""
    before = _refcount_add(storage, -1)
    if before == 1:  # the last reference: unlink as the allocator's close would
        name = _STORAGE._shared_name(storage)
        if name is not None:
            _janitor.unlink(name)


def rebuild_storage_empty(cls: Any) -> Any:
    """Unpickle an empty storage (nothing to map)."""
    return cls()


def rebuild_typed_storage(storage: UntypedStorage, dtype: _dtype_cls) -> TypedStorage:
    """Unpickle a TypedStorage: the untyped storage (already shared) seen as dtype."""
    return TypedStorage(wrap_storage=storage, dtype=dtype, _internal=True)


def reduce_typed_storage(storage: TypedStorage) -> tuple[Any, tuple[Any, ...]]:
    """Pickle a TypedStorage as its untyped storage (shared) and dtype."""
    return (rebuild_typed_storage, (storage._untyped_storage, storage.dtype))


def rebuild_typed_storage_child(storage: UntypedStorage, storage_type: type) -> Any:
    """Unpickle a legacy storage class (FloatStorage, ...) over the shared untyped storage."""
    return storage_type(wrap_storage=storage, _internal=True)


def reduce_typed_storage_child(storage: TypedStorage) -> tuple[Any, tuple[Any, ...]]:
    """Pickle a legacy storage (FloatStorage, ...) as its untyped storage and class."""
    return (rebuild_typed_storage_child, (storage._untyped_storage, type(storage)))


def reduce_storage(storage: Any) -> tuple[Any, tuple[Any, ...]]:
    """Pickle a CPU storage by handle, moving it into shared memory first (in place)."""
    if storage.is_cuda:
        raise RuntimeError("Cannot pickle CUDA storage; try pickling a CUDA tensor instead")
    if storage.device.type == "meta":
        raise RuntimeError("Cannot pickle meta storage; try pickling a meta tensor instead")
    if storage.size() == 0:
        # Empty storages cannot be mapped (in either strategy; torch special-cases fds only).
        return (rebuild_storage_empty, (type(storage),))
    metadata: tuple[Any, ...]
    # A storage shared already goes the way it was shared, whatever the strategy now (a spawned
    # child has the default strategy and may send back what it received by name).
    by_name = _STORAGE._shared_name(_untyped(storage)) is not None
    if by_name or _sharing.get_sharing_strategy() == "file_system":
        try:
            metadata = storage._share_filename_cpu_()
        except RuntimeError:
            if by_name:
                raise
            metadata = ()  # shared by descriptor already
    else:
        metadata = ()
    if metadata:
        manager, cache_key = metadata[0], metadata[1]
        rebuild: Any = rebuild_storage_filename
        if isinstance(storage, TypedStorage):
            metadata += (storage.dtype,)
        # Held for the receiver until it opens the name (it then drops this reference), and
        # guarded by the janitor while in flight even if this process dies.
        _shared_incref(_untyped(storage))
        _janitor.in_flight(manager, cache_key)
    else:
        fd, size = storage._share_fd_cpu_()
        guarded = _guarded_dup_fd(fd)  # so that this process may exit before it is received
        metadata = (
            (_reduction.DupFd(fd), size) if guarded is None else (guarded[0], size, *guarded[1:])
        )
        cache_key = fd_id(fd)
        rebuild = rebuild_storage_fd
    shared_cache[cache_key] = StorageWeakRef(storage)
    return (rebuild, (type(storage), *metadata))


def init_reductions() -> None:
    """Register the reducers with ForkingPickler (done on import of pyc10.multiprocessing)."""
    from .. import cuda

    reduction.register(cuda.Event, reduce_event)
    reduction.register(UntypedStorage, reduce_storage)
    for t in LEGACY_CLASSES.values():
        reduction.register(t, reduce_typed_storage_child)
    reduction.register(TypedStorage, reduce_typed_storage)
    reduction.register(Tensor, reduce_tensor)
    global _hand_over_hook  # noqa: PLW0603  (once per process)
    if _hand_over_hook is None and _janitor.SUPPORTED:
        _hand_over_hook = _HandOverHook()
