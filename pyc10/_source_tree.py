"""Import pyc10 from a source checkout by deferring to the installed build.

The repository keeps the package at ``pyc10/``, so running Python in the repository root finds the
sources before the installed package, and the sources lack the compiled extension. Rather than
fail, the installed package (what ``pip install .`` built from these sources) replaces the module
being imported; the import system returns whatever ``sys.modules`` holds once the module's code
has run.

An editable install (``pip install -e .``, meson-python's import hook) also imports the package's
Python files from the checkout, but the hook maps the package to its build directory, where the
compiled extension is: such a checkout is not deferred. The hook rebuilds that directory with
ninja on every import, and ninja calls back into the meson that configured it (after relinking
libc10c, or when a meson.build changed). Made by a plain ``pip install -e .``, that meson was in
pip's isolated build environment, deleted once the install ended: the package imports, then the
first C edit fails with meson-python's "rebuilding the pyc10 editable package failed". Such an
install is refused at import, with the command that makes one that works.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys

__all__ = [
    "editable_rebuild_problem",
    "lacks_compiled_extension",
    "missing_build_tool",
    "use_installed_package",
]

EDITABLE_FIX = (
    "pip install meson-python meson ninja cffi numpy && pip install --no-build-isolation -e ."
)


def lacks_compiled_extension(name: str) -> bool:
    """Whether the package ``name``, being imported, cannot find its compiled extension.

    The package's own search path decides: a plain source checkout has none there, an editable
    install's import hook finds the one in its build directory.
    """
    return importlib.util.find_spec(f"{name}._c10c") is None


def missing_build_tool(build_dir: str) -> str | None:
    """The meson executable that ``build_dir``'s ninja file runs, if it no longer exists."""
    try:
        with open(os.path.join(build_dir, "build.ninja"), encoding="utf-8", errors="replace") as f:
            head = f.read(1 << 16)  # the rules come first
    except OSError:
        return None
    match = re.search(r"^ command = (.+?) --internal regenerate ", head, re.M)
    if match is None:
        return None
    for word in match.group(1).split():  # meson, or python and meson.py
        if os.path.isabs(word) and not os.path.exists(word):
            return word
    return None


def editable_rebuild_problem(name: str) -> str | None:
    """Why meson-python's import hook could not rebuild package ``name`` after an edit, or None.

    None also where ``name`` is not an editable install of meson-python's.
    """
    for finder in sys.meta_path:
        if type(finder).__name__ != "MesonpyMetaFinder" or getattr(finder, "_name", None) != name:
            continue
        build_dir = getattr(finder, "_build_path", None)
        missing = missing_build_tool(build_dir) if isinstance(build_dir, str) else None
        if missing is not None:
            return (
                f"{name} is an editable install that cannot rebuild itself: its build directory "
                f"{build_dir} runs {missing}, which no longer exists (pip made the install in an "
                "isolated build environment and deleted it afterwards), so the first edit of a C "
                "file would fail to import. Install it again without build isolation, in this "
                f"environment: {EDITABLE_FIX}"
            )
    return None


def _installed_package_dir(source_dir: str) -> str | None:
    for entry in sys.path:
        candidate = os.path.join(os.path.abspath(entry or os.curdir), "pyc10")
        if os.path.realpath(candidate) == os.path.realpath(source_dir):
            continue
        if os.path.isfile(os.path.join(candidate, "__init__.py")) and any(
            name.startswith("_c10c.") for name in os.listdir(candidate)
        ):
            return candidate
    return None


def use_installed_package(name: str, source_init: str) -> None:
    """Load the installed pyc10 in place of the source package ``name``, or raise ImportError."""
    source_dir = os.path.dirname(os.path.abspath(source_init))
    installed = _installed_package_dir(source_dir)
    if installed is None:
        raise ImportError(
            "pyc10 is being imported from its source tree, which has no compiled extension, "
            "and no installed pyc10 was found: run `pip install .` first (or, to work on "
            "pyc10, `pip install --no-build-isolation -e .`)"
        )
    spec = importlib.util.spec_from_file_location(
        name,
        os.path.join(installed, "__init__.py"),
        submodule_search_locations=[installed],
    )
    if spec is None or spec.loader is None:  # pragma: no cover - the file exists
        raise ImportError(f"cannot load the installed pyc10 from {installed}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
