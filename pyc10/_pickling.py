"""Protocol-5 pickling of CPU tensors: each tensor sends its window, out of band where it can.

A tensor pickled with protocol 5 sends the bytes its elements reach (its *window*) as a
``pickle.PickleBuffer``, so ``pickle.dumps(t, protocol=5, buffer_callback=...)`` copies nothing
(numpy's arrays pickle so) and a 10-element view of a large storage sends 10 elements. Next to
the window goes a small *reference* to the storage: one object per storage in the dumping process
(kept weakly), so pickle's memo writes it once per dump; loading makes it once per load (the
unpickler's memo) and it holds the one storage, of the original size, that every tensor over it
in that pickle shares after loading, as they shared it before. A window that covers its whole
storage is the loaded storage itself, zero-copy (read-only when its buffer is: Ray's object
store), whatever the order the tensors come in (views loaded before their base move onto it);
the windows of a storage whose whole window is not in the pickle are copied into a storage of
the original size at their place (torch's geometry: the offsets stay; a lone view of a large
storage costs the copy of its elements, the rest are zero pages not yet touched).

Loading checks every argument (types, the window inside the storage, the tensor inside its
window; the library checks sizes, strides and offsets against the storage), so an edited pickle
raises a fitting exception and never reads outside the bytes it carries.
"""

from __future__ import annotations

import ctypes
import functools
import mmap
import pickle
import weakref
from typing import TYPE_CHECKING, Any

from ._ctensor import TensorBase
from ._dtype import DTYPE_NAMES
from ._errors import C10RuntimeError, C10TypeError, C10ValueError
from ._storage import (
    _INT64_MAX,
    UntypedStorage,
    _bytes_view,
    _checked_dtype,
    _checked_ints,
    _checked_offset,
    _storage_over_buffer,
    _tensor_over,
)

if TYPE_CHECKING:
    from ._dtype import dtype

__all__: list[str] = []

# Storages of at least this many bytes that are rebuilt from partial windows come from an
# anonymous mapping: zeros that cost no memory until written (a 10-element view of 1 GiB).
_MAPPED_MIN = 1 << 20


class _StorageRef:
    """The dumping side's reference to one storage: pickled once per dump (pickle's memo)."""

    __slots__ = ("__weakref__", "storage")

    def __init__(self, storage: UntypedStorage) -> None:
        self.storage = storage  # keeps the storage, so its id is not reused while this lives

    def __reduce__(self) -> tuple[Any, tuple[int]]:
        return _rebuild_storage_slot, (self.storage.nbytes(),)


# id(storage) -> a weak reference to its _StorageRef, while a pickler's memo (or anything else)
# holds that; a plain dict of weakrefs costs a third of a WeakValueDictionary per tensor
_refs: dict[int, weakref.ref[_StorageRef]] = {}


def _forget(key: int, dead: weakref.ref[_StorageRef]) -> None:
    if _refs.get(key) is dead:  # not a newer reference to a storage with the same id
        del _refs[key]


def _ref(storage: UntypedStorage) -> _StorageRef:
    key = id(storage)
    held = _refs.get(key)
    ref = held() if held is not None else None
    if ref is None or ref.storage is not storage:
        ref = _StorageRef(storage)
        _refs[key] = weakref.ref(ref, functools.partial(_forget, key))
    return ref


class _StorageSlot:
    """The loading side's storage: made once per load, filled by the windows that follow."""

    __slots__ = ("complete", "nbytes", "storage", "tensors")

    def __init__(self, nbytes: int) -> None:
        self.nbytes = nbytes
        self.storage: UntypedStorage | None = None
        self.complete = False  # a whole-storage window is in: later windows hold the same bytes
        # the tensors made over a storage of copied windows, while no whole window has come:
        # one that comes later (a view pickled before its base) becomes their storage
        self.tensors: list[TensorBase] = []


def _rebuild_storage_slot(nbytes: Any) -> _StorageSlot:
    """Unpickle a storage reference: the size of the storage the windows that follow fill."""
    if type(nbytes) is not int:
        raise C10TypeError(f"storage size must be int, not {type(nbytes).__name__}")
    if nbytes < 0 or nbytes > _INT64_MAX:
        raise C10RuntimeError(f"invalid storage size {nbytes}")
    return _StorageSlot(nbytes)


def _zeroed_storage(nbytes: int) -> UntypedStorage:
    """A writable CPU storage of nbytes zeros (mapped lazily when large)."""
    if nbytes < _MAPPED_MIN:
        return UntypedStorage.from_buffer(bytearray(nbytes), dtype=DTYPE_NAMES["uint8"])
    try:
        mapping = mmap.mmap(-1, nbytes)
    except (OSError, OverflowError) as e:
        raise C10RuntimeError(
            f"unable to allocate a storage of {nbytes} bytes to unpickle into: {e}"
        ) from None
    owner = ctypes.c_char.from_buffer(mapping)  # holds an export: mapped while the storage lives
    storage: UntypedStorage = UntypedStorage._from_owner(
        ctypes.addressof(owner), nbytes, owner, False
    )
    return storage


def _extent(offset: int, size: tuple[int, ...], stride: tuple[int, ...], itemsize: int) -> range:
    """The byte range a tensor's elements reach in its storage (empty when it has none)."""
    last = offset
    for n, s in zip(size, stride, strict=True):
        if n == 0:
            return range(0)
        last += (n - 1) * s
    return range(offset * itemsize, (last + 1) * itemsize)


def _checked_geometry(
    start: Any, offset: Any, size: Any, stride: Any, dtype_name: Any
) -> tuple[dtype, int, tuple[int, ...], tuple[int, ...]]:
    """The dtype, offset, sizes and strides of a window's tensor, once every type is right."""
    d = _checked_dtype(dtype_name)
    if type(start) is not int:
        raise C10TypeError(f"window start must be int, not {type(start).__name__}")
    offset = _checked_offset(offset)
    size = _checked_ints(size, "size")
    stride = _checked_ints(stride, "stride")
    if len(size) != len(stride):
        raise C10RuntimeError(
            f"mismatch in length of strides and shape: {len(stride)} strides, {len(size)} sizes"
        )
    return d, offset, size, stride


def _place(slot: _StorageSlot, data: Any, start: int) -> int:
    """Put a window's bytes into its slot's storage (the storage itself when whole); its length."""
    try:
        view = memoryview(data)
    except TypeError:
        raise C10TypeError(
            f"expected a bytes-like object holding the window, not {type(data).__name__}"
        ) from None
    length = view.nbytes
    if start < 0 or start + length > slot.nbytes:
        raise C10RuntimeError(
            f"window of {length} bytes at {start} is outside its storage of {slot.nbytes} bytes"
        )
    if start == 0 and length == slot.nbytes and not slot.complete:
        # the whole storage: the buffer itself, zero-copy, for the tensors made before it too
        # (their windows' copies are dropped; set_ keeps their geometry, checked again)
        slot.storage = _storage_over_buffer(view)
        slot.complete = True
        for t in slot.tensors:
            t.set_(slot.storage, t.storage_offset(), tuple(t.shape), t.stride())
        slot.tensors.clear()
        return length
    if slot.storage is None:
        slot.storage = _zeroed_storage(slot.nbytes)
    if not slot.complete and length:
        if not view.c_contiguous:
            raise C10ValueError("the window's buffer is not contiguous")
        import numpy

        _bytes_view(slot.storage, start, length)[:] = numpy.frombuffer(view.cast("B"), numpy.uint8)
        slot.complete = length == slot.nbytes
    return length


def _rebuild_tensor_window(  # noqa: PLR0917 - pickle calls it with positional arguments
    slot: Any,
    data: Any,
    start: Any,
    offset: Any,
    size: Any,
    stride: Any,
    dtype_name: Any,
) -> TensorBase:
    """Unpickle a CPU tensor pickled with protocol 5: place its window, then view the storage.

    ``data`` holds the storage's bytes from ``start``; the tensor (``offset``, ``size`` and
    ``stride`` in elements of ``dtype_name``) must lie inside that window.
    """
    if type(slot) is not _StorageSlot:
        raise C10TypeError(f"expected a storage reference, not {type(slot).__name__}")
    d, offset, size, stride = _checked_geometry(start, offset, size, stride, dtype_name)
    length = _place(slot, data, start)
    assert slot.storage is not None
    t = _tensor_over(slot.storage, offset, size, stride, d)
    reach = _extent(offset, size, stride, d.itemsize)
    if reach and (reach.start < start or reach.stop > start + length):
        raise C10RuntimeError(
            f"the tensor's bytes [{reach.start}, {reach.stop}) are outside its window "
            f"[{start}, {start + length})"
        )
    if not slot.complete:
        slot.tensors.append(t)
    return t


def reduce_window(t: TensorBase, as_array: bool = False) -> tuple[Any, tuple[Any, ...]]:
    """A CPU tensor's protocol-5 reduction: its storage's reference and its window's buffer.

    The window is a ``pickle.PickleBuffer``, or with ``as_array`` the numpy array of its bytes
    (for joblib, which maps the arrays it writes: ``_storage._pickled_by_joblib``).
    """
    storage = t.untyped_storage()
    size = tuple(t.shape)
    stride = t.stride()
    offset = t.storage_offset()
    itemsize = t.element_size()
    numel = t.numel()
    if numel == 0:
        start = length = 0
    elif t.is_contiguous():
        start, length = offset * itemsize, numel * itemsize
    else:
        reach = _extent(offset, size, stride, itemsize)
        start, length = reach.start, len(reach)
    window = _bytes_view(storage, start, length)
    buffer = window if as_array else pickle.PickleBuffer(window)
    return _rebuild_tensor_window, (
        _ref(storage),
        buffer,
        start,
        offset,
        size,
        stride,
        t.dtype._name,
    )
