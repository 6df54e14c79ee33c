"""torch's weights-only loader and pyc10's pickles: the globals torch may call to load them.

``torch.load`` is ``weights_only=True`` by default since torch 2.6: it runs only the functions
and classes it allows, so a file that ``torch.save`` wrote with pyc10 tensors in it is refused
(``Unsupported global: GLOBAL pyc10._tensor._rebuild_tensor``). torch's documented route is to
allow more globals, with ``torch.serialization.add_safe_globals(...)`` for the process or the
``torch.serialization.safe_globals(...)`` context manager for one load; ``safe_globals()`` here
is the list to give them::

    import torch, pyc10
    from pyc10.serialization import safe_globals

    torch.save({"w": pyc10.ones(3), "v": pyc10.arange(10)[2:5]}, "ckpt.pt")
    with torch.serialization.safe_globals(safe_globals()):
        ckpt = torch.load("ckpt.pt")  # weights_only=True

    pyc10.serialization.add_safe_globals()  # or for the whole process

It reads every pyc10 object ``torch.save`` writes with its default protocol (2; torch's
weights-only loader reads no later one, for torch's own tensors neither): CPU and meta tensors of
every dtype, views with their offsets (views of one storage in one file still share it),
``UntypedStorage``, ``TypedStorage``, ``Size``, dtypes and devices. The protocol-5 rebuild
functions are in the list too, for loaders that read protocol 5 with the same allow-list.

Every function admitted accepts plain data only (ints, tuples of ints, strings, bytes and the
pyc10 storages the others make), checks it and raises a ``pyc10`` exception otherwise, so a
hostile file can make pyc10 raise but not call anything else; tensors are checked against their
storage's bytes, which is what the loaded file carries. No class with a ``__setstate__`` or a
``__dict__`` is admitted, so torch's ``BUILD`` cannot set attributes on what they return.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from . import _pickling, _storage, _tensor, _typed_storage
from ._device import device
from ._dtype import DTYPE_NAMES

__all__ = ["add_safe_globals", "safe_globals", "torch_safe_globals"]


def safe_globals() -> list[Callable[..., Any] | tuple[Any, str]]:
    """The globals pyc10's pickles name, for ``torch.serialization.(add_)safe_globals``.

    The rebuild functions of tensors (protocol 2 and 5 forms, meta tensors), storages and typed
    storages, ``pyc10.Size``, ``pyc10.device`` and the dtypes (``pyc10.float32``, ...; pickled
    by name, given as ``(object, "pyc10.float32")`` pairs as torch's API allows).
    """
    from ._api import Size

    found: list[Callable[..., Any] | tuple[Any, str]] = [
        _tensor._rebuild_tensor,
        _tensor._rebuild_meta_tensor_no_storage,
        _storage._rebuild_storage,
        _storage._rebuild_storage_buffer,
        _typed_storage._rebuild_typed_storage,
        _pickling._rebuild_tensor_window,
        _pickling._rebuild_storage_slot,
        Size,
        device,
    ]
    found += [(d, f"pyc10.{name}") for name, d in DTYPE_NAMES.items()]
    return found


def add_safe_globals() -> None:
    """Let ``torch.load(weights_only=True)`` read pyc10's pickles in this process.

    ``torch.serialization.add_safe_globals(pyc10.serialization.safe_globals())``.
    """
    import torch.serialization

    torch.serialization.add_safe_globals(safe_globals())


@contextmanager
def torch_safe_globals() -> Iterator[None]:
    """A context in which ``torch.load(weights_only=True)`` reads pyc10's pickles.

    ``torch.serialization.safe_globals(pyc10.serialization.safe_globals())``: the globals are
    allowed inside the ``with`` block only.
    """
    import torch.serialization

    with torch.serialization.safe_globals(safe_globals()):
        yield
