"""Targets of test_shared_memory.py's spawned children (spawn imports them by module name)."""

from __future__ import annotations

from typing import Any

import torch

import pyc10


def by_fd(fd: Any, size: int) -> None:
    """Open a storage from a descriptor passed with multiprocessing.reduction.DupFd; write 77."""
    got = pyc10.UntypedStorage._new_shared_fd_cpu(fd.detach(), size)
    assert got.tolist()[:2] == [1, 2]
    got[0] = 77


def by_name(name: bytes, size: int) -> None:
    """Open a storage by name; write 78 at byte 1."""
    got = pyc10.UntypedStorage._new_shared_filename_cpu(b"", name, size)
    got[1] = 78


def torch_by_name(name: bytes, size: int) -> None:
    """torch opens our name; writes 79 at byte 2."""
    got = torch.UntypedStorage._new_shared_filename_cpu(b"", name, size)
    got[2] = 79
