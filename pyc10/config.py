"""``pyc10-config``: flags to compile and link C code against the libc10c inside pyc10.

In the manner of ``numpy-config`` and ``pybind11-config`` (also ``python -m pyc10.config``)::

    cc $(pyc10-config --cflags) main.c $(pyc10-config --libs) -Wl,-rpath,$(pyc10-config --libdir)
    PKG_CONFIG_PATH=$(pyc10-config --pkgconfigdir) pkg-config --cflags --libs c10c

Each option asked for prints one line, in the order given. The library is linked by name
(``-lc10c``): beside ``libc10c.so.1`` the wheel holds ``libc10c.so``, a linker script naming it,
since a wheel cannot hold the usual symbolic link. A program linked so needs the directory at
run time too: ``-Wl,-rpath`` as above, or ``LD_LIBRARY_PATH``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

import pyc10


def _cflags() -> str:
    return f"-I{pyc10.get_include()}"


def _libs() -> str:
    return f"-L{pyc10.get_library_dir()} -lc10c"


_OPTIONS: dict[str, tuple[Callable[[], str], str]] = {
    "cflags": (_cflags, "compiler flags: -I and the directory holding c10c/c10c.h"),
    "libs": (_libs, "linker flags: -L and the directory of libc10c, -lc10c"),
    "includedir": (pyc10.get_include, "the directory holding c10c/c10c.h"),
    "libdir": (pyc10.get_library_dir, "the directory of libc10c.so.1 and libc10c.so"),
    "pkgconfigdir": (
        pyc10.get_pkgconfig_dir,
        "the directory of c10c.pc (for PKG_CONFIG_PATH); wheel installs only",
    ),
    "version": (lambda: pyc10.__version__, "the release of the bundled libc10c"),
}


def main(argv: Sequence[str] | None = None) -> int:
    """Runs ``pyc10-config``; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="pyc10-config",
        description="Flags to compile and link C code against the libc10c bundled with pyc10.",
    )
    for name, (_, help_text) in _OPTIONS.items():
        parser.add_argument(
            f"--{name}", dest="asked", action="append_const", const=name, help=help_text
        )
    args = parser.parse_args(argv)
    if not args.asked:
        parser.print_help()
        return 0
    for name in args.asked:
        try:
            print(_OPTIONS[name][0]())
        except FileNotFoundError as e:
            print(f"pyc10-config: --{name}: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
