"""pyc10.multiprocessing: torch.multiprocessing for pyc10, a wrapper around :mod:`multiprocessing`.

It registers reducers with ``multiprocessing.reduction.ForkingPickler`` so that tensors and
storages sent through queues, pipes and pools travel as handles to shared memory: the receiver
gets a view of the same memory (writes are seen both ways), with the same offset, sizes and
strides, and a storage sent twice arrives as one. Everything ``multiprocessing`` exports is
re-exported (``Queue``, ``Pool``, ``Process``, ``get_context``, ...), so changing
``import multiprocessing`` to ``import pyc10.multiprocessing`` is enough, as with torch.

Two sharing strategies, as torch's (``set_sharing_strategy``):

- ``"file_descriptor"`` (the default on Linux): memory files without names (memfd), sent as
  file descriptors. Nothing can be left behind in /dev/shm, whoever dies and however.
- ``"file_system"``: named shared memory objects with torch's reference-counted header. A
  janitor process per process tree unlinks the names of processes killed by SIGKILL (see
  ``pyc10.multiprocessing._janitor`` for its design); each process keeps one connection to it.

In both, a process receiving many storages does not keep one open file descriptor per storage
(the storage layer maps them and closes the descriptors when they run short), and handles that
are forged, stale, of another user or claim more bytes than the memory holds are refused with
an exception when unpickled. ``spawn``/``start_processes`` are torch's process launchers.
"""

import multiprocessing
from multiprocessing import *  # noqa: F403

from .. import _sharing
from .._sharing import get_all_sharing_strategies as get_all_sharing_strategies
from .._sharing import get_sharing_strategy as get_sharing_strategy
from .._sharing import set_sharing_strategy as set_sharing_strategy
from . import _janitor
from ._prctl import _get_thread_name as _get_thread_name
from ._prctl import _prctl_pr_set_pdeathsig as _prctl_pr_set_pdeathsig
from ._prctl import _set_thread_name as _set_thread_name
from .reductions import init_reductions as init_reductions
from .spawn import ENV_VAR_PARALLEL_START as ENV_VAR_PARALLEL_START
from .spawn import ProcessContext as ProcessContext
from .spawn import ProcessExitedException as ProcessExitedException
from .spawn import ProcessRaisedException as ProcessRaisedException
from .spawn import SpawnContext as SpawnContext
from .spawn import spawn as spawn
from .spawn import start_processes as start_processes

__all__ = ["get_all_sharing_strategies", "get_sharing_strategy", "set_sharing_strategy"]
__all__ += multiprocessing.__all__

# The storages' hooks for named memory: each name created or opened is registered with the
# process tree's janitor, whose address is the manager handle the pickles carry (Linux only).
if _janitor.SUPPORTED:
    _sharing.name_created = _janitor.name_created
    _sharing.name_opened = _janitor.name_opened
    _janitor.install_exit_hook()

init_reductions()
