"""pyc10: PyTorch's c10 core (dtypes, devices, dispatch keys, ...) over the stable C ABI of libc10c.

The names follow torch: ``pyc10.float32``, ``pyc10.device("cuda:1")``, ``pyc10.promote_types``,
``pyc10.strided``, ``pyc10.channels_last``, ``pyc10.DispatchKeySet``. Every value (dtype
numbers, names, key numbering) comes from the C library at import time.
"""

# The modules form layers, lowest first; a module imports only from its own layer and lower ones,
# at module level or inside a function, and the imports inside a layer form no circle
# (tests/check_pyc10_layers.py checks it, with the list there):
#   extensions  _c10c (cffi), _ctensor (the C types, pyc10/_ext), _dispatch_keys (generated)
#   base        _lib, _errors, _constant, _adopt, _build_ffi, _source_tree, _report,
#               _report_html, _replay_input, _replay_model, _replay_sim
#   values      _dtype, _layout, _device (with the default device), _scalar, memory
#   state       _defaults, _dispatch, _finfo, _repr, cuda (_runtime, memory)
#   storage     _storage, _typed_storage
#   tensor      _tensor
#   api         _api
#   package     this file, __main__, config, replay
# A piece two modules share goes down to a module both import, as the default device went from
# _defaults to _device; the C extension, lowest, finds the Python classes it makes (Tensor,
# UntypedStorage, the dtype, device and error classes) through setup calls at import.
import os as _os

# Imported from a source checkout (``python -m pyc10`` in the repository root puts the checkout
# first on sys.path), this directory has no compiled extension: use the installed build instead.
# An editable install (``pip install -e .``) runs this file from the checkout too, but its import
# hook provides the compiled modules from its build directory: that is an installed pyc10.
if _os.path.isfile(_os.path.join(_os.path.dirname(__file__), "meson.build")):
    from ._source_tree import editable_rebuild_problem as _editable_rebuild_problem
    from ._source_tree import lacks_compiled_extension, use_installed_package

    _unbuilt = lacks_compiled_extension(__name__)
    # An editable install whose build tools are gone: refused now, with the command that works,
    # rather than by meson-python's hook after the first C edit.
    _problem = None if _unbuilt else _editable_rebuild_problem(__name__)
    if _problem is not None:
        raise ImportError(_problem)
else:
    _unbuilt = False

if _unbuilt:
    use_installed_package(__name__, __file__)
else:
    from typing import TYPE_CHECKING as _TYPE_CHECKING

    from . import cuda as cuda
    from . import memory as memory
    from ._api import *  # noqa: F403
    from ._api import __all__ as __all__
    from ._api import __version__ as __version__

    if _TYPE_CHECKING:  # the function forms (pyc10.transpose, ...) are made at import by _api
        from ._functions import *  # noqa: F403

    def __getattr__(name: str) -> object:
        """``pyc10.multiprocessing`` and ``pyc10.serialization`` on first use.

        ``import pyc10`` imports neither.
        """
        if name in ("multiprocessing", "serialization"):
            import importlib

            return importlib.import_module(f".{name}", __name__)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
