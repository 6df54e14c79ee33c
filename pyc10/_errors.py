"""Exceptions raised by pyc10, and the one place C status codes become exceptions.

Every exception derives from :class:`C10Error`, and also from the builtin exception torch raises
for the same condition, so ``except RuntimeError`` works as it does with torch.
"""

from __future__ import annotations

from typing import Any, NoReturn

from ._lib import ffi, lib

__all__ = [
    "C10BufferError",
    "C10Error",
    "C10IndexError",
    "C10MemoryError",
    "C10NotImplementedError",
    "C10OverflowError",
    "C10RuntimeError",
    "C10TypeError",
    "C10ValueError",
    "OutOfMemoryError",
    "argument_type_error",
    "check",
    "no_arguments",
    "raise_status",
    "torch_type_name",
]


class C10Error(Exception):
    """Base class of every error libc10c reports.

    ``status`` is the C status code (``pyc10.C10Error.status``), ``status_name`` its name.
    """

    status: int = -1
    status_name: str = "ERROR"


class C10RuntimeError(C10Error, RuntimeError):
    """A failed check: what torch raises as ``RuntimeError`` (``TORCH_CHECK``)."""


class C10ValueError(C10Error, ValueError):
    """An invalid argument value (torch: ``ValueError``)."""


class C10IndexError(C10Error, IndexError):
    """A dimension or index out of range (torch: ``IndexError``)."""


class C10TypeError(C10Error, TypeError):
    """An argument of the wrong type (torch: ``TypeError``)."""


class C10AbsentMethodError(C10TypeError, AttributeError):
    """A torch.Tensor math or autograd method pyc10 deliberately lacks (``t.sum``).

    A C10TypeError, as the operators' ``t + 1`` raises, and an AttributeError, so that
    ``hasattr(t, "sum")`` is False and ``getattr(t, "sum", default)`` gives the default.
    """


class C10NotImplementedError(C10Error, NotImplementedError):
    """A combination libc10c does not support (torch: ``NotImplementedError``)."""


class C10MemoryError(C10Error, MemoryError):
    """An allocation failed (raised as ``MemoryError``, as Python's own allocations do)."""


class OutOfMemoryError(C10MemoryError, RuntimeError):
    """CUDA ran out of memory: ``pyc10.cuda.OutOfMemoryError``, as ``torch.cuda.OutOfMemoryError``.

    A RuntimeError, as torch's, and a :class:`C10MemoryError` (so a MemoryError too), as
    every other failed allocation here.
    """

    __module__ = "pyc10.cuda"


class C10OverflowError(C10Error, RuntimeError):
    """A size computation overflowed 64 bits (torch raises ``RuntimeError``)."""


class C10BufferError(C10Error, BufferError):
    """Data DLPack cannot carry (dtype, device, read-only for a legacy consumer)."""


_BY_STATUS: dict[int, type[C10Error]] = {
    lib.C10C_STATUS_ERROR: C10RuntimeError,
    lib.C10C_STATUS_INVALID_ARGUMENT: C10ValueError,
    lib.C10C_STATUS_INDEX_OUT_OF_RANGE: C10IndexError,
    lib.C10C_STATUS_TYPE_ERROR: C10TypeError,
    lib.C10C_STATUS_NOT_IMPLEMENTED: C10NotImplementedError,
    lib.C10C_STATUS_OUT_OF_MEMORY: C10MemoryError,
    lib.C10C_STATUS_OVERFLOW: C10OverflowError,
    lib.C10C_STATUS_NULL_POINTER: C10ValueError,
    lib.C10C_STATUS_BUFFER_TOO_SMALL: C10ValueError,
    lib.C10C_STATUS_UNAVAILABLE: C10RuntimeError,
    lib.C10C_STATUS_ABI_MISMATCH: C10RuntimeError,
    lib.C10C_STATUS_INTERNAL: C10RuntimeError,
    lib.C10C_STATUS_UNSUPPORTED: C10BufferError,
}


# how libc10c's CUDA out-of-memory messages begin: the caching allocator's (torch's words), the
# pinned host allocator's, and a driver call's CUDA_ERROR_OUT_OF_MEMORY
_CUDA_OOM = ("CUDA out of memory", "CUDA driver error: CUDA_ERROR_OUT_OF_MEMORY")


def raise_status(status: int) -> NoReturn:
    """Raise the exception for a failed C call, with the thread's last error message."""
    message = ffi.string(lib.c10c_last_error_message()).decode("utf-8", "replace")
    cls = _BY_STATUS.get(status, C10RuntimeError)
    if status == lib.C10C_STATUS_OUT_OF_MEMORY and message.startswith(_CUDA_OOM):
        cls = OutOfMemoryError
    exc = cls(message)
    exc.status = status
    exc.status_name = ffi.string(lib.c10c_status_name(status)).decode()
    try:
        raise exc
    finally:
        # the traceback holds this frame: were exc still one of its locals, exception, traceback
        # and every frame on it (the storages and tensors their locals hold) would make a cycle
        # that only the garbage collector frees (a shared storage's /dev/shm name lingering)
        del exc


def check(status: int) -> None:
    """Return if ``status`` is OK, else raise the matching :class:`C10Error` subclass."""
    if status:
        raise_status(status)


def read_text(fn: Any, *args: Any, size: int = 8192) -> str:
    """The text a ``fn(out, out_size, out_len, *args)`` call writes (the library's convention).

    The buffer grows to the length the call reports for as long as it reports a larger one.
    """
    needed = ffi.new("size_t *", size - 1)
    while True:
        buf = ffi.new("char[]", needed[0] + 1)
        status = fn(buf, len(buf), needed, *args)
        if status != lib.C10C_STATUS_BUFFER_TOO_SMALL:
            check(status)
            return str(ffi.string(buf).decode())


def torch_type_name(value: object) -> str:
    """The name torch's argument errors give value's type.

    CPython's tp_name, as the C parser's pa__typename_of writes it (``NoneType``,
    ``numpy.float64``, ``Tensor``), with pyc10's own classes as ``pyc10.Name`` where torch's say
    ``torch.Name`` (``pyc10.dtype``).
    """
    t = type(value)
    module = t.__module__
    if module == "pyc10" or module.startswith("pyc10."):
        return "Tensor" if t.__name__ == "Tensor" else f"pyc10.{t.__name__}"
    if module == "builtins" or t.__flags__ & (1 << 9):  # Py_TPFLAGS_HEAPTYPE: a class
        return t.__name__
    return f"{module}.{t.__qualname__}"


def argument_type_error(
    fn: str, name: str, position: int | None, expected: str, value: object
) -> C10TypeError:
    """The error torch's parser raises for an argument of the wrong type.

    ``fn(): argument 'name' (position N) must be expected, not type``: position counts from 1,
    None for an argument given by keyword (torch names no position then).
    """
    where = "" if position is None else f" (position {position})"
    return C10TypeError(
        f"{fn}(): argument '{name}'{where} must be {expected}, not {torch_type_name(value)}"
    )


def no_arguments(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any], *, slot: bool = False
) -> None:
    """Refuse arguments to a method that takes none, in CPython's words for torch's C one.

    torch writes dtype.to_real, device.__repr__... in C; pyc10 in Python, whose own words for a bad
    call differ. ``name`` is the method's qualified name (``dtype.to_real``); ``slot``: the
    method fills a type slot (``__repr__``), where CPython's slot wrapper words it. Keywords are
    refused first, as CPython does.
    """
    if kwargs:
        method = name.rsplit(".", 1)[-1]
        where = f"wrapper {method}()" if slot else f"{name}()"
        raise TypeError(f"{where} takes no keyword arguments")
    if args:
        if slot:
            raise TypeError(f"expected 0 arguments, got {len(args)}")
        raise TypeError(f"{name}() takes no arguments ({len(args)} given)")
