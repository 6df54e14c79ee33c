"""Dispatch keys and key sets with c10's numbering, bit layout and rules.

``DispatchKey`` is an ``IntEnum`` whose members and values come from the library (c10's names).
``DispatchKeySet`` is an immutable value over the 64-bit word of c10's DispatchKeySet.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, final

from ._device import device as _device_cls
from ._dispatch_keys import DispatchKey
from ._dtype import dtype as _dtype_cls
from ._errors import C10TypeError, check
from ._layout import layout as _layout_cls
from ._lib import ffi, lib

__all__ = ["DispatchKey", "DispatchKeySet"]

_SET_PTR = ffi.typeof("c10c_dispatch_key_set *")
_KEY_PTR = ffi.typeof("c10c_dispatch_key *")
_KEY_ARRAY = ffi.typeof("c10c_dispatch_key[]")
_SMALL_TEXT = ffi.typeof("char[160]")
_SIZE_PTR = ffi.typeof("size_t *")


_KEYS_BY_VALUE: dict[int, DispatchKey] = {int(k): k for k in DispatchKey}

KeyLike = int | str  # a DispatchKey (an int), a key value or a key name


def _settable_key_bits() -> dict[object, int]:
    # The bits of DispatchKeySet(k) for every key, from the library. Only the keys: a failing
    # call (the EndOfFunctionalityKeys sentinel, 47, is no key) would leave the library's
    # thread-local last error set after `import pyc10`, where a C caller sharing it would see it.
    bits: dict[object, int] = {}
    out = ffi.new(_SET_PTR)
    for k in DispatchKey:
        check(lib.c10c_dispatch_key_set_from_key(out, k))
        bits[int(k)] = int(out[0].repr)
    return bits


def _backend_mask() -> int:
    out = ffi.new(_SET_PTR)
    mask = 0
    for b in range(1, lib.C10C_BACKEND_COMPONENT_COUNT + 1):
        check(lib.c10c_dispatch_key_set_from_backend(out, b))
        mask |= int(out[0].repr)
    return mask


def _key_str(self: DispatchKey) -> str:
    return f"DispatchKey.{self.name}"


def _key_format(self: DispatchKey, spec: str) -> str:
    if spec:
        raise C10TypeError("unsupported format string passed to pyc10.DispatchKey.__format__")
    return _key_str(self)


# torch's DispatchKey (a pybind11 enum, not an int) prints as "DispatchKey.CPU", where an IntEnum
# prints its number, and takes no format spec; the repr, "<DispatchKey.CPU: 49>", is the same.
DispatchKey.__str__ = _key_str  # type: ignore[method-assign,assignment]
DispatchKey.__format__ = _key_format  # type: ignore[method-assign,assignment]

#: DispatchKeySet(k).raw for every key value and key name that has one (memoised parsing).
_KEY_BITS: dict[object, int] = _settable_key_bits()
#: The backend-component bits, which c10's difference and remove never clear.
_BACKEND_MASK = _backend_mask()


def _key_value(k: Any) -> int:
    if isinstance(k, int) and not isinstance(k, bool):
        return int(k)
    if isinstance(k, str):
        out = ffi.new(_KEY_PTR)
        check(lib.c10c_dispatch_key_parse(out, k.encode()))
        return int(out[0])
    raise C10TypeError(
        f"expected a pyc10.DispatchKey, an int or a key name, not {type(k).__name__}"
    )


def _bits(k: Any) -> int:
    """DispatchKeySet(k).raw; parses names and raises the library's errors for bad keys."""
    try:
        if type(k) is not bool:  # True == 1 would find Dense's bits; _key_value refuses bools
            return _KEY_BITS[k]
    except (KeyError, TypeError):
        pass
    value = _key_value(k)
    out = ffi.new(_SET_PTR)
    check(lib.c10c_dispatch_key_set_from_key(out, value))
    bits = int(out[0].repr)
    if isinstance(k, str):
        _KEY_BITS[k] = bits
    return bits


def _key(value: int) -> DispatchKey:
    return _KEYS_BY_VALUE[value]


@final
class DispatchKeySet:
    """An immutable set of dispatch keys over c10's 64-bit word.

    ``DispatchKeySet(DispatchKey.CPU, "AutogradCPU")``; per-backend keys form a cross product
    as in c10, ``remove`` and ``-`` clear functionality bits only, and iteration yields runtime
    keys from lowest to highest priority.
    """

    __module__ = "pyc10"
    __slots__ = ("_raw",)

    _raw: int

    def __init__(self, *keys: KeyLike) -> None:
        raw = 0
        for k in keys:
            raw |= _bits(k)
        self._raw = raw

    @classmethod
    def from_raw(cls, raw: int) -> DispatchKeySet:
        """The set with exactly this 64-bit word (c10's ``from_raw_repr``)."""
        if not isinstance(raw, int) or isinstance(raw, bool) or not 0 <= raw < 1 << 64:
            raise C10TypeError("raw must be an int in [0, 2**64)")
        return _new_set(raw)

    @staticmethod
    def from_raw_repr(raw: int) -> DispatchKeySet:
        """:meth:`from_raw` under torch's name (``torch._C.DispatchKeySet.from_raw_repr``)."""
        return DispatchKeySet.from_raw(raw)

    @classmethod
    def full(cls) -> DispatchKeySet:
        """Every backend bit and functionality key (c10's ``DispatchKeySet(FULL)``)."""
        return cls.from_raw(int(lib.c10c_dispatch_key_set_full().repr))

    @classmethod
    def full_after(cls, key: KeyLike) -> DispatchKeySet:
        """Every key below ``key``'s functionality, plus PythonDispatcher (c10's FULL_AFTER)."""
        out = ffi.new(_SET_PTR)
        check(lib.c10c_dispatch_key_set_full_after(out, _key_value(key)))
        return cls.from_raw(int(out[0].repr))

    @classmethod
    def from_alias(cls, key: KeyLike) -> DispatchKeySet:
        """The runtime keys an alias key stands for (c10's ``getRuntimeDispatchKeySet``)."""
        out = ffi.new(_SET_PTR)
        check(lib.c10c_dispatch_key_set_from_alias(out, _key_value(key)))
        return cls.from_raw(int(out[0].repr))

    @classmethod
    def for_tensor(
        cls,
        device: _device_cls | str,
        layout: _layout_cls | None = None,
        inference_mode: bool = False,
        dtype: _dtype_cls | None = None,
    ) -> DispatchKeySet:
        """The keys c10 gives a new tensor (``torch._C._dispatch_keys(torch.empty(...))``)."""
        from ._dtype import DTYPE_NAMES
        from ._layout import LAYOUTS

        dev = _device_cls(device)
        lay = LAYOUTS["strided"] if layout is None else layout
        dt = DTYPE_NAMES["float32"] if dtype is None else dtype
        if type(lay) is not _layout_cls:
            raise C10TypeError(f"layout must be a pyc10.layout, not {type(lay).__name__}")
        if type(dt) is not _dtype_cls:
            raise C10TypeError(f"dtype must be a pyc10.dtype, not {type(dt).__name__}")
        out = ffi.new(_SET_PTR)
        check(
            lib.c10c_dispatch_key_set_for_tensor(
                out, dt.value, lay.value, dev._type, bool(inference_mode)
            )
        )
        return cls.from_raw(int(out[0].repr))

    @property
    def raw(self) -> int:
        """The 64-bit word (c10's ``raw_repr``)."""
        return self._raw

    def raw_repr(self) -> int:
        """The 64-bit word, as torch's ``DispatchKeySet.raw_repr()`` (:attr:`raw`)."""
        return self._raw

    def has(self, key: KeyLike) -> bool:
        """c10's ``has``: whether every bit of ``DispatchKeySet(key)`` is set."""
        bits = _bits(key)
        return self._raw & bits == bits

    def add(self, key: KeyLike) -> DispatchKeySet:
        """A new set with ``key`` added."""
        return _new_set(self._raw | _bits(key))

    def remove(self, key: KeyLike) -> DispatchKeySet:
        """A new set without ``key``'s functionality bit (backend bits stay, as in c10)."""
        return _new_set(self._raw & (_BACKEND_MASK | ~_bits(key)))

    def highest_priority_key(self) -> DispatchKey:
        """c10's ``highestPriorityTypeId`` (``DispatchKey.Undefined`` for an empty set)."""
        return _key(lib.pyc10_ks_highest_priority_key(self._raw))

    def highestPriorityTypeId(self) -> DispatchKey:  # noqa: N802 - torch's name
        """:meth:`highest_priority_key` under torch's name."""
        return self.highest_priority_key()

    def highest_functionality_key(self) -> DispatchKey:
        """c10's ``highestFunctionalityKey``."""
        return _key(lib.pyc10_ks_highest_functionality(self._raw))

    def highest_backend(self) -> int:
        """c10's ``highestBackendKey`` as a backend component number (0 = none)."""
        return int(lib.pyc10_ks_highest_backend(self._raw))

    def dispatch_table_index(self) -> int:
        """c10's ``getDispatchTableIndexForDispatchKeySet``."""
        return int(lib.pyc10_ks_dispatch_table_index(self._raw))

    def _check_other(self, other: object) -> int:
        if type(other) is not DispatchKeySet:
            return -1
        return other._raw

    def __or__(self, other: DispatchKeySet) -> DispatchKeySet:
        raw = self._check_other(other)
        if raw < 0:
            return NotImplemented
        return _new_set(self._raw | raw)

    def __and__(self, other: DispatchKeySet) -> DispatchKeySet:
        raw = self._check_other(other)
        if raw < 0:
            return NotImplemented
        return _new_set(self._raw & raw)

    def __sub__(self, other: DispatchKeySet) -> DispatchKeySet:
        raw = self._check_other(other)
        if raw < 0:
            return NotImplemented
        return _new_set(self._raw & (_BACKEND_MASK | ~raw))

    def __contains__(self, key: object) -> bool:
        return self.has(key)  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[DispatchKey]:
        buf = ffi.new(_KEY_ARRAY, lib.C10C_DISPATCH_KEY_SET_MAX_KEYS)
        n = lib.pyc10_ks_to_array(buf, lib.C10C_DISPATCH_KEY_SET_MAX_KEYS, self._raw)
        return iter([_key(k) for k in ffi.unpack(buf, n)])

    def __len__(self) -> int:
        return int(lib.pyc10_ks_to_array(ffi.NULL, 0, self._raw))

    def __bool__(self) -> bool:
        return self._raw != 0

    def __eq__(self, other: object) -> bool:
        if type(other) is not DispatchKeySet:
            return NotImplemented
        return self._raw == other._raw

    def __hash__(self) -> int:
        return hash(self._raw)

    def __repr__(self) -> str:
        text = _REPRS.get(self._raw)
        if text is None:
            text = self._format()
            if len(_REPRS) < 4096:
                _REPRS[self._raw] = text
        return text

    def _format(self) -> str:
        buf = ffi.new(_SMALL_TEXT)
        needed = ffi.new(_SIZE_PTR)
        if lib.pyc10_ks_to_string(buf, len(buf), needed, self._raw) != lib.C10C_STATUS_OK:
            buf = ffi.new("char[]", needed[0] + 1)
            check(lib.pyc10_ks_to_string(buf, len(buf), ffi.NULL, self._raw))
        return str(ffi.string(buf).decode())

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if spec:
            raise C10TypeError(
                "unsupported format string passed to pyc10.DispatchKeySet.__format__"
            )
        return self.__repr__()

    def __reduce__(self) -> tuple[Any, ...]:
        return (DispatchKeySet.from_raw, (self._raw,))


def _new_set(raw: int) -> DispatchKeySet:
    self = object.__new__(DispatchKeySet)
    self._raw = raw
    return self


# Printed forms of the sets printed so far (a pure function of the word), bounded.
_REPRS: dict[int, str] = {}
