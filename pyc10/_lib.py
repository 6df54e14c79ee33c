"""Load the cffi extension and check that it matches the libc10c it loaded.

``ffi`` and ``lib`` are the raw cffi objects; the rest of pyc10 wraps them.
"""

from __future__ import annotations

try:
    from ._c10c import ffi, lib
except ImportError as e:  # pragma: no cover - only without a built extension
    raise ImportError(
        f"pyc10's compiled extension could not be loaded ({e}); install the package with "
        "`pip install .` and import it from outside the source tree"
    ) from e

__all__ = ["ffi", "lib"]


def _check_abi() -> None:
    """Refuse a libc10c whose ABI differs from the one the extension was built with."""
    if lib.pyc10_abi_check() != lib.C10C_STATUS_OK:
        message = ffi.string(lib.c10c_last_error_message()).decode("utf-8", "replace")
        raise ImportError(f"pyc10 cannot use the loaded libc10c: {message}")


_check_abi()
