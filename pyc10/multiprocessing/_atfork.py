"""register_after_fork: a function run in the child after a fork (torch.multiprocessing._atfork)."""

from __future__ import annotations

import os
from collections.abc import Callable

__all__ = ["register_after_fork"]


def register_after_fork(func: Callable[[], object]) -> None:
    """Register a callable to be executed in the child process after a fork.

    Any fork runs it: ``multiprocessing``'s and a plain ``os.fork()`` (``os.register_at_fork``).

    Args:
        func (function): Function taking no arguments to be called in the child after fork

    """
    os.register_at_fork(after_in_child=func)
