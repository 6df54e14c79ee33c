"""Devices: ``pyc10.device`` behaves as ``torch.device`` (parsing, printing, equality, errors).

The default device of factories (``set_default_device``, ``with pyc10.device(...)``) is kept
here too, per thread as torch's, beside the type whose ``__enter__`` sets it; ``pyc10._defaults``
re-exports it with the default dtype.
"""

from __future__ import annotations

import threading
from typing import Any, final

from ._errors import C10RuntimeError, C10TypeError, argument_type_error, check, no_arguments
from ._lib import ffi, lib

__all__ = [
    "device",
    "device_context_enter",
    "device_context_exit",
    "get_default_device",
    "get_privateuse1_backend_name",
    "rename_privateuse1_backend",
    "set_default_device",
]

_DEVICE_PTR = ffi.typeof("c10c_device *")

# Lower-case names of the device types, from the library (PrivateUse1's can be renamed).
_TYPE_NAMES: list[str] = list(
    ffi.string(lib.c10c_device_type_name(t, True)).decode()
    for t in range(lib.C10C_DEVICE_TYPE_COUNT)
)

_CACHE_LIMIT = 1024


@final
class device:
    """A device, as ``torch.device``: ``device("cuda:1")``, ``device("cuda", 1)``, ``"cpu"``.

    There is one object per (type, index), so equality and hashing are identity's, at C speed.

    ``type`` is the device type's name and ``index`` the device index or ``None``. Device strings
    follow c10's grammar and messages exactly; one deliberate difference: an index above 127
    (c10 stores indices in 8 bits) raises ``RuntimeError`` where torch silently wraps it.
    """

    __module__ = "pyc10"
    __slots__ = ("_index", "_str", "_type")

    _type: int
    _index: int
    _str: str

    def __new__(cls, *args: Any, **kwargs: Any) -> device:
        # torch.device has two overloads: (device or str) with exactly one positional argument,
        # and (str type, int? index) for every other call, including type= as a keyword.
        if len(args) == 1 and not kwargs:
            try:
                return _PARSED[args[0]]  # a string parsed before
            except (KeyError, TypeError):
                return _from_one(args[0])
        if len(args) == 2 and not kwargs:
            if args[1].__class__ is int:  # not bool, whose hash equals an int's
                try:
                    return _PAIRS[args]  # a (str, int) pair made before
                except (KeyError, TypeError):
                    pass
            return _from_type_and_index(args[0], args[1])
        return _from_type_and_index(*_type_and_index_arguments(args, kwargs))

    @property
    def type(self) -> str:
        """The device type's name: ``"cpu"``, ``"cuda"``, ``"meta"`` ..."""
        return _TYPE_NAMES[self._type]

    @property
    def index(self) -> int | None:
        """The device index, or ``None`` when the device has none."""
        return None if self._index == -1 else self._index

    def __str__(self, *args: Any, **kwargs: Any) -> str:
        if args or kwargs:  # torch.device is a C type: its slot wrapper's words
            no_arguments("device.__str__", args, kwargs, slot=True)
        return self._str

    def __repr__(self, *args: Any, **kwargs: Any) -> str:
        if args or kwargs:
            no_arguments("device.__repr__", args, kwargs, slot=True)
        if self._index == -1:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self._index})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (device, (self.type, self.index))

    def __copy__(self) -> device:
        return self

    def __deepcopy__(self, memo: Any) -> device:
        return self

    def __enter__(self) -> device:
        """Make this the default device of factories in the block, on this thread, as torch's."""
        device_context_enter(self)
        return self

    def __exit__(self, *exc: object) -> None:
        """The previous default device comes back."""
        device_context_exit()


builtin_type = type  # the property is named "type", as torch's


def _invalid_combination(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Exception:
    """The error torch.device gives a call neither of its overloads takes.

    The C parser's, over the table's device entry: its "invalid combination" layout, or the one
    plausible overload's own error.
    """
    from . import _ctensor

    try:
        _ctensor._device_error(*args, **kwargs)
    except TypeError as e:
        return e
    return C10TypeError("device() received an invalid combination of arguments")  # not reached


def _is_numpy_int(value: Any) -> bool:
    """Whether value is a numpy integer scalar (np.int64(0)), which torch takes as an index."""
    if builtin_type(value).__module__ != "numpy":
        return False
    import numpy

    return isinstance(value, numpy.integer)


def _from_one(arg: Any) -> device:
    kind = builtin_type(arg)
    if kind is str:
        return _parse(arg)
    if kind is device:
        return arg  # type: ignore[no-any-return]
    if kind is bytes:
        return _parse(arg.decode("utf-8", "surrogateescape"))
    if kind is int or _is_numpy_int(arg):
        # torch.device(int) means that index of the current accelerator.
        raise C10RuntimeError("Cannot access accelerator device when none is available.")
    raise _invalid_combination((arg,), {})


def _type_and_index_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    if len(args) > 2 or set(kwargs) - {"type", "index"}:
        raise _invalid_combination(args, kwargs)
    named = dict(zip(("type", "index"), args, strict=False))
    for key, value in kwargs.items():
        if key in named:
            raise _invalid_combination(args, kwargs)
        named[key] = value
    if "type" not in named:
        raise _invalid_combination(args, kwargs)
    return named["type"], named.get("index")


def _from_type_and_index(type_arg: Any, index: Any) -> device:
    if builtin_type(type_arg) is bytes:
        type_arg = type_arg.decode("utf-8", "surrogateescape")
    if builtin_type(type_arg) is not str:
        raise argument_type_error("device", "type", 1, "str", type_arg)
    if index is not None and builtin_type(index) is not int:
        if not _is_numpy_int(index):
            raise argument_type_error("device", "index", 2, "int", index)
        index = int(index)  # torch's THPUtils_checkLong takes numpy's integers
    base = _PARSED.get(type_arg) or _parse(type_arg)
    if base._index != -1:
        raise C10RuntimeError(
            "type (string) must not include an index because index was passed explicitly: "
            f"{type_arg}"
        )
    if index is None:
        return base
    if index < 0:
        # -1 means "no index" in C; torch.device refuses any explicit negative index.
        raise C10RuntimeError("Device index must not be negative")
    out = ffi.new(_DEVICE_PTR)
    check(lib.c10c_device_init(out, base._type, index))
    made = _make(out[0].type, out[0].index)
    if builtin_type(type_arg) is str and len(_PAIRS) < _CACHE_LIMIT:
        _PAIRS[type_arg, index] = made
    return made


# Every device object ever made, by (type, index): at most 21 * 129 of them.
_INTERNED: dict[tuple[int, int], device] = {}


def _make(type_value: int, index: int) -> device:
    known = _INTERNED.get((type_value, index))
    if known is not None:
        return known
    self = object.__new__(device)
    self._type = type_value
    self._index = index
    name = _TYPE_NAMES[type_value]
    self._str = name if index == -1 else f"{name}:{index}"
    return _INTERNED.setdefault((type_value, index), self)


# Devices are immutable, so a parsed string (or a (str, int) pair) can be answered from memory
# next time; both caches are bounded.
_PARSED: dict[str, device] = {}
_PAIRS: dict[tuple[str, int], device] = {}


def _parse(s: str) -> device:
    data = s.encode("utf-8", "surrogateescape")
    out = ffi.new(_DEVICE_PTR)
    check(lib.c10c_device_from_chars(out, data, len(data)))
    d = _make(out[0].type, out[0].index)
    if len(_PARSED) < _CACHE_LIMIT:
        _PARSED[s] = d
    return d


def rename_privateuse1_backend(backend_name: str) -> None:
    """Name the PrivateUse1 device type, as ``torch.utils.rename_privateuse1_backend``.

    Afterwards ``pyc10.device("<name>:1")`` works and PrivateUse1 devices print under the name.
    Once per process: the same name again is accepted, another raises ``RuntimeError``.
    """
    if builtin_type(backend_name) is not str:
        raise C10TypeError(f"backend_name must be str, not {builtin_type(backend_name).__name__}")
    check(lib.c10c_privateuse1_backend_register(backend_name.encode("utf-8", "surrogateescape")))
    name = get_privateuse1_backend_name()
    pu1 = lib.C10C_DEVICE_TYPE_PRIVATEUSE1
    if _TYPE_NAMES[pu1] != name:
        _TYPE_NAMES[pu1] = name
        _PARSED.clear()
        _PAIRS.clear()
        for (type_value, index), d in list(_INTERNED.items()):
            if type_value == pu1:
                d._str = name if index == -1 else f"{name}:{index}"


def get_privateuse1_backend_name() -> str:
    """The PrivateUse1 device type's name: the registered one, else ``"privateuseone"``."""
    return str(ffi.string(lib.c10c_privateuse1_backend_name(True)).decode())


def _from_c(c_device: Any) -> device:
    """The pyc10.device of a ``c10c_device`` value."""
    return _make(c_device.type, c_device.index)


# ---- the default device: per thread, as torch's (torch.set_default_device, `with torch.device`)


class _DeviceState(threading.local):
    def __init__(self) -> None:
        self.device: Any = None  # None: the CPU
        self.stack: list[Any] = []


_device_state = _DeviceState()


def get_default_device() -> Any:
    """The device factories use when given none, as ``torch.get_default_device()``."""
    current = _device_state.device
    return device("cpu") if current is None else current


def _install(d: Any) -> None:
    from . import _ctensor

    _ctensor.set_default_device(device("cpu") if d is None else d)
    _device_state.device = d


_device_class = device


def set_default_device(device: Any) -> None:  # torch's parameter name
    """Set this thread's default device for factories, as ``torch.set_default_device``."""
    _install(None if device is None else _device_class(device))


def device_context_enter(d: Any) -> None:
    """``with pyc10.device(d):``: d is the default device until the block ends."""
    _device_state.stack.append(_device_state.device)
    _install(d)


def device_context_exit() -> None:
    """The end of a ``with pyc10.device(...)`` block: the previous default comes back."""
    _install(_device_state.stack.pop())
