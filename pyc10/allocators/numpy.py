"""numpy's data allocator (NEP 49) over libc10c's caching CPU allocator.

numpy gives every large temporary back to the kernel (glibc unmaps blocks above its mmap
threshold, and numpy caches only blocks under 1 KiB), so a loop over large arrays pays page
faults and zeroing on every temporary. Under pyc10's handler the data of new arrays comes from
libc10c's caching CPU allocator: freed blocks are kept (up to its cap, ``max_cached_mb``) and
reused without faults. ::

    import pyc10.allocators.numpy as pyc10_numpy

    pyc10_numpy.install()           # this context's new arrays use libc10c's allocator
    with pyc10_numpy.handler():     # or only inside a block
        ...

What numpy decides, and what follows from it:

- The handler is numpy's per context (a ``contextvars.ContextVar``): ``install()`` covers the
  calling thread (and the asyncio tasks it starts); a thread started later begins with numpy's
  default, so a worker thread calls ``install()`` itself.
- Every array keeps the handler it was made under and is freed through it: arrays made before
  ``install()`` are freed by numpy's default allocator, and arrays made under pyc10's are freed by
  it even after ``uninstall()``.
- An allocation that cannot be met returns NULL and numpy raises ``MemoryError``.

The memory is the caching CPU allocator's: ``pyc10.memory.stats()`` counts numpy's arrays,
``pyc10.memory.empty_cache()`` gives the cached blocks back, and ``pyc10.memory.set_config``
(or ``C10C_CPU_ALLOC_CONF``) sets its cap.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

__all__ = ["NAME", "handler", "install", "is_installed", "uninstall"]

NAME = "pyc10"
"""The handler's name, as ``numpy.core.multiarray.get_handler_name()`` reports it."""

# The handler install() replaced in this context, restored by uninstall().
_previous: contextvars.ContextVar[Any] = contextvars.ContextVar("pyc10_numpy_previous")


def _multiarray() -> Any:
    try:
        from numpy._core import multiarray
    except ImportError:  # numpy 1
        from numpy.core import multiarray  # type: ignore[no-redef]
    return multiarray


def _set(new: Any) -> Any:
    from .._ctensor import _numpy_set_handler

    return _numpy_set_handler(new)


def is_installed() -> bool:
    """Whether new arrays of this context get pyc10's allocator."""
    return bool(_multiarray().get_handler_name() == NAME)


def install() -> None:
    """Make libc10c's caching CPU allocator numpy's data allocator in this context.

    Raises ``RuntimeError`` when it is already installed here (``uninstall()`` first), or when
    numpy's C API cannot be loaded (numpy older than 1.22).
    """
    from .._ctensor import _numpy_handler

    if is_installed():
        raise RuntimeError(
            "pyc10's numpy allocator is already installed in this context; "
            "call pyc10.allocators.numpy.uninstall() first"
        )
    _previous.set(_set(_numpy_handler()))


def uninstall() -> None:
    """Give this context back the numpy allocator ``install()`` replaced.

    Arrays made under pyc10's allocator stay valid: numpy frees each through the handler it was
    made under. Raises ``RuntimeError`` when pyc10's allocator is not installed in this context.
    """
    if not is_installed():
        raise RuntimeError(
            f"pyc10's numpy allocator is not installed in this context (numpy's allocator here "
            f"is {_multiarray().get_handler_name()!r})"
        )
    _set(_previous.get(None))


@contextlib.contextmanager
def handler() -> Iterator[None]:
    """Use libc10c's allocator for new arrays inside a ``with`` block (nesting is allowed)."""
    from .._ctensor import _numpy_handler

    old = _set(_numpy_handler())
    try:
        yield
    finally:
        _set(old)
