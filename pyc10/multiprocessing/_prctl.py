"""Linux process and thread knobs torch sets from C (torch._C._multiprocessing_init): here via libc.

``_prctl_pr_set_pdeathsig(sig)``: the signal this process gets when its parent thread ends
(prctl PR_SET_PDEATHSIG). ``_set_thread_name``/``_get_thread_name``: the calling thread's name as
the kernel shows it (15 bytes at most). All are no-ops (or return "") off Linux.
"""

from __future__ import annotations

import ctypes
import sys

_PR_SET_PDEATHSIG = 1
_PR_SET_NAME = 15
_PR_GET_NAME = 16

_libc: ctypes.CDLL | None = None
if sys.platform.startswith("linux"):
    _libc = ctypes.CDLL(None, use_errno=True)  # the process's own symbols: libc's prctl
    _libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong]
    _libc.prctl.restype = ctypes.c_int


def _prctl_pr_set_pdeathsig(signal: int) -> None:
    """Deliver ``signal`` to this process when its parent ends (Linux; a no-op elsewhere)."""
    if _libc is not None:
        _libc.prctl(_PR_SET_PDEATHSIG, int(signal))


def _set_thread_name(name: str) -> None:
    """Set the name of the current thread (its first 15 bytes, as pthread_setname_np)."""
    if _libc is not None:
        buf = ctypes.create_string_buffer(name.encode()[:15])
        _libc.prctl(_PR_SET_NAME, ctypes.cast(buf, ctypes.c_void_p).value or 0)


def _get_thread_name() -> str:
    """The name of the current thread."""
    if _libc is None:
        return ""
    buf = ctypes.create_string_buffer(16)
    _libc.prctl(_PR_GET_NAME, ctypes.cast(buf, ctypes.c_void_p).value or 0)
    return buf.value.decode(errors="replace")
