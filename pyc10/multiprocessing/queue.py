"""Queues whose connections pickle with ForkingPickler (torch.multiprocessing.queue).

``multiprocessing``'s own queues pickle with it already; these are for code that names them.
"""

from __future__ import annotations

import io
import multiprocessing.queues
import pickle
from multiprocessing.reduction import ForkingPickler
from typing import Any


class ConnectionWrapper:
    """Proxy class for _multiprocessing.Connection which uses ForkingPickler to serialize."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def send(self, obj: object) -> None:
        """Pickle obj with ForkingPickler (shared tensors go by handle) and send its bytes."""
        buf = io.BytesIO()
        ForkingPickler(buf, pickle.HIGHEST_PROTOCOL).dump(obj)
        self.send_bytes(buf.getvalue())

    def recv(self) -> Any:
        """Receive one object sent by ``send``."""
        buf = self.recv_bytes()
        return pickle.loads(buf)

    def __getattr__(self, name: str) -> Any:
        if "conn" in self.__dict__:
            return getattr(self.conn, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute 'conn'")


class Queue(multiprocessing.queues.Queue):  # type: ignore[type-arg]
    """multiprocessing's Queue over ConnectionWrapper connections."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._reader: ConnectionWrapper = ConnectionWrapper(self._reader)
        self._writer: ConnectionWrapper = ConnectionWrapper(self._writer)
        self._send = self._writer.send
        self._recv = self._reader.recv


class SimpleQueue(multiprocessing.queues.SimpleQueue):  # type: ignore[type-arg]
    """multiprocessing's SimpleQueue over ConnectionWrapper connections."""

    def _make_methods(self) -> None:
        if not isinstance(self._reader, ConnectionWrapper):
            self._reader: ConnectionWrapper = ConnectionWrapper(self._reader)
            self._writer: ConnectionWrapper = ConnectionWrapper(self._writer)
        super()._make_methods()  # type: ignore[misc]
