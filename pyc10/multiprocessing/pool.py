"""A Pool over the ForkingPickler queues of ``queue`` (torch.multiprocessing.pool)."""

from __future__ import annotations

import multiprocessing.pool
from multiprocessing import util
from typing import Any

from .queue import SimpleQueue


def clean_worker(*args: Any, **kwargs: Any) -> None:
    """Run the pool worker of ``multiprocessing``, then collect garbage so destructors run."""
    import gc

    multiprocessing.pool.worker(*args, **kwargs)  # type: ignore[attr-defined]
    # Regular workers leave cycles behind; shared storages in them would outlive the worker's
    # use of them otherwise.
    gc.collect()


class Pool(multiprocessing.pool.Pool):
    """Pool implementation which uses our version of SimpleQueue.

    This lets us pass tensors in shared memory across processes instead of
    serializing the underlying data.
    """

    def _setup_queues(self) -> None:
        self._inqueue = SimpleQueue()
        self._outqueue = SimpleQueue()
        self._quick_put = self._inqueue._writer.send
        self._quick_get = self._outqueue._reader.recv

    def _repopulate_pool(self) -> None:
        """Increase the number of pool processes to the specified number.

        Bring the number of pool processes up to the specified number, for use after
        reaping workers which have exited.
        """
        for _ in range(self._processes - len(self._pool)):  # type: ignore[attr-defined]
            args: tuple[Any, ...] = (
                self._inqueue,
                self._outqueue,
                self._initializer,  # type: ignore[attr-defined]
                self._initargs,  # type: ignore[attr-defined]
                self._maxtasksperchild,  # type: ignore[attr-defined]
            )
            if hasattr(self, "_wrap_exception"):
                args += (self._wrap_exception,)
            w = self.Process(target=clean_worker, args=args)  # type: ignore[call-arg]
            self._pool.append(w)  # type: ignore[attr-defined]
            w.name = w.name.replace("Process", "PoolWorker")
            w.daemon = True
            w.start()
            util.debug("added worker")
