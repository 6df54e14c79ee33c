"""A numpy that cannot be imported, for the meson test replay_quick_no_numpy (bench/meson.build).

That test puts bench/no_numpy first on PYTHONPATH, so ``import numpy`` fails here as it does
where numpy is not installed: the C library's tests must pass without any Python package.
"""

raise ImportError("numpy is hidden by bench/no_numpy (meson test replay_quick_no_numpy)")
