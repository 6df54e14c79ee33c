"""libc10c's allocators inside other programs: numpy, PyTorch and CuPy.

- :mod:`pyc10.allocators.numpy`: numpy's data allocator (NEP 49) over libc10c's caching CPU
  allocator: ``pyc10.allocators.numpy.install()``.
- :mod:`pyc10.allocators.torch`: PyTorch's pluggable CUDA allocator over libc10c's CUDA caching
  allocator (expandable segments, stitching, planning): ``pyc10.allocators.torch.use()``.
- :mod:`pyc10.allocators.cupy`: CuPy's allocator over the same: ``pyc10.allocators.cupy.use()``.

Each submodule is imported on first use, so importing this package imports neither numpy, torch
nor CuPy.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["cupy", "numpy", "torch"]


def __getattr__(name: str) -> ModuleType:
    """Import ``pyc10.allocators.<name>`` on first use."""
    if name in __all__:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
