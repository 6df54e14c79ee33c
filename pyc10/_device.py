"""Devices: ``pyc10.device`` behaves as ``torch.device`` (parsing, printing, equality, errors)."""

from __future__ import annotations

from typing import Any, final

from ._errors import C10RuntimeError, C10TypeError, check
from ._lib import ffi, lib

__all__ = ["device"]

_DEVICE_PTR = ffi.typeof("c10c_device *")

# Lower-case names of the device types, from the library.
_TYPE_NAMES: tuple[str, ...] = tuple(
    ffi.string(lib.c10c_device_type_name(t, True)).decode()
    for t in range(lib.C10C_DEVICE_TYPE_COUNT)
)

_SIGNATURES = "(pyc10.device device), (str type, int index = -1)"
_CACHE_LIMIT = 1024


@final
class device:
    """A device, as ``torch.device``: ``device("cuda:1")``, ``device("cuda", 1)``, ``device("cpu")``.

    ``type`` is the device type's name and ``index`` the device index or ``None``. Device strings
    follow c10's grammar and messages exactly; one deliberate difference: an index above 127
    (c10 stores indices in 8 bits) raises ``RuntimeError`` where torch silently wraps it.
    """

    __slots__ = ("_type", "_index", "_str")

    _type: int
    _index: int
    _str: str

    def __new__(cls, type: Any = None, index: Any = None) -> device:  # noqa: A002 - torch's name
        if index is None:
            if builtin_type(type) is str:
                cached = _PARSED.get(type)
                if cached is not None:
                    return cached
                return _parse(type)
            if builtin_type(type) is device:
                return type  # type: ignore[no-any-return]
            if builtin_type(type) is bytes:
                return _parse(type.decode("utf-8", "surrogateescape"))
            if builtin_type(type) is int:
                # torch.device(int) means an index on the current accelerator.
                raise C10RuntimeError("Cannot access accelerator device when none is available.")
            got = "" if type is None else builtin_type(type).__name__
            raise C10TypeError(
                f"device() received an invalid combination of arguments - got ({got}), but "
                f"expected one of: {_SIGNATURES}"
            )
        if builtin_type(type) is bytes:
            type = type.decode("utf-8", "surrogateescape")
        if builtin_type(type) is not str:
            raise C10TypeError(
                f"device(): argument 'type' (position 1) must be str, not {builtin_type(type).__name__}"
            )
        if builtin_type(index) is not int:
            raise C10TypeError(
                f"device(): argument 'index' (position 2) must be int, not "
                f"{builtin_type(index).__name__}"
            )
        base = _parse(type)
        if base._index != -1:
            raise C10RuntimeError(
                "type (string) must not include an index because index was passed explicitly: "
                f"{type}"
            )
        out = ffi.new(_DEVICE_PTR)
        check(lib.c10c_device_init(out, base._type, index))
        return _make(out[0].type, out[0].index)

    @property
    def type(self) -> str:
        """The device type's name: ``"cpu"``, ``"cuda"``, ``"meta"`` ..."""
        return _TYPE_NAMES[self._type]

    @property
    def index(self) -> int | None:
        """The device index, or ``None`` when the device has none."""
        return None if self._index == -1 else self._index

    def __str__(self) -> str:
        return self._str

    def __repr__(self) -> str:
        if self._index == -1:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self._index})"

    def __eq__(self, other: object) -> bool:
        if builtin_type(other) is not device:
            return NotImplemented
        return self._type == other._type and self._index == other._index  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self._type, self._index))

    def __reduce__(self) -> tuple[Any, ...]:
        return (device, (self.type, self.index))

    def __copy__(self) -> device:
        return self

    def __deepcopy__(self, memo: Any) -> device:
        return self


builtin_type = type  # the constructor's parameter is named "type", as torch's


def _make(type_value: int, index: int) -> device:
    self = object.__new__(device)
    self._type = type_value
    self._index = index
    name = _TYPE_NAMES[type_value]
    self._str = name if index == -1 else f"{name}:{index}"
    return self


# Devices are immutable, so a parsed string can be answered from memory next time.
_PARSED: dict[str, device] = {}


def _parse(s: str) -> device:
    data = s.encode("utf-8", "surrogateescape")
    out = ffi.new(_DEVICE_PTR)
    check(lib.c10c_device_from_chars(out, data, len(data)))
    d = _make(out[0].type, out[0].index)
    if len(_PARSED) < _CACHE_LIMIT:
        _PARSED[s] = d
    return d


def _from_c(c_device: Any) -> device:
    """The pyc10.device of a ``c10c_device`` value."""
    return _make(c_device.type, c_device.index)
