"""How CPU storages are shared with other processes: torch.multiprocessing's strategy state.

``share_memory_`` reads the strategy here (``"file_descriptor"``: a memory file whose descriptor
travels over a Unix socket; ``"file_system"``: a named shared memory object). pyc10.multiprocessing
re-exports the three functions and sets the two hooks, which tell its manager about every name
this process makes or opens, so names are unlinked even when their users die by SIGKILL.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

__all__ = [
    "get_all_sharing_strategies",
    "get_sharing_strategy",
    "name_created",
    "name_opened",
    "set_sharing_strategy",
]

# As torch.multiprocessing: macOS and Windows have no memory files to send as descriptors (memfd,
# SCM_RIGHTS), so only named shared memory is offered there.
if sys.platform in ("darwin", "win32"):
    _all_sharing_strategies = {"file_system"}
    _strategy = "file_system"
else:
    _all_sharing_strategies = {"file_descriptor", "file_system"}
    _strategy = "file_descriptor"

# Called with each shm name this process creates; returns the manager handle that
# _share_filename_cpu_ reports for it (b"" without a manager).
name_created: Callable[[bytes], bytes] | None = None
# Called with (manager handle, name) for each name this process opens.
name_opened: Callable[[bytes, bytes], None] | None = None

# The manager handle of each name shared or opened here (the newest few thousand; older names
# report the last handle seen, as a process registers with one manager).
_managers: dict[bytes, bytes] = {}
_last_manager = b""
_MANAGERS_KEPT = 4096


def set_sharing_strategy(new_strategy: str) -> None:
    """Set the strategy for sharing CPU tensors (one of :func:`get_all_sharing_strategies`)."""
    global _strategy  # noqa: PLW0603 (the mp helper reads and sets this module state)
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(
            f"invalid sharing strategy {new_strategy!r}, expected one of {_all_sharing_strategies}"
        )
    _strategy = new_strategy


def get_sharing_strategy() -> str:
    """Return the current strategy for sharing CPU tensors."""
    return _strategy


def get_all_sharing_strategies() -> set[str]:
    """Return a set of sharing strategies supported on a current system."""
    return _all_sharing_strategies


def remember_manager(name: bytes, manager: bytes) -> None:
    """Record the manager handle reported for name."""
    global _last_manager  # noqa: PLW0603
    if not manager:
        return
    _last_manager = manager
    _managers[name] = manager
    if len(_managers) > _MANAGERS_KEPT:
        del _managers[next(iter(_managers))]


def manager_of(name: bytes) -> bytes:
    """The manager handle recorded for name (the last one seen if none)."""
    return _managers.get(name, _last_manager)


def created(name: bytes) -> bytes:
    """Tell the hook about a name made here; the manager handle to report."""
    manager = name_created(name) if name_created is not None else b""
    remember_manager(name, manager)
    return manager


def opened(manager: bytes, name: bytes) -> None:
    """Tell the hook about a name opened here."""
    if name_opened is not None:
        name_opened(manager, name)
    remember_manager(name, manager)
