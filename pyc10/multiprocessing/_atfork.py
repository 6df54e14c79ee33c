"""register_after_fork: a function run in the child after a fork (torch.multiprocessing._atfork)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

__all__ = ["register_after_fork"]


def register_after_fork(func: Callable[[], object]) -> None:
    """Register a callable to be executed in the child process after a fork.

    Any fork runs it: ``multiprocessing``'s and a plain ``os.fork()`` (``os.register_at_fork``);
    on Windows, which has no fork, as torch: the processes ``multiprocessing`` starts run it.

    Args:
        func (function): Function taking no arguments to be called in the child after fork

    """
    if sys.platform == "win32":
        import multiprocessing.util

        # keyed by a module function, as torch's: the registry holds its key weakly
        multiprocessing.util.register_after_fork(register_after_fork, lambda _: func())
    else:
        os.register_at_fork(after_in_child=func)
