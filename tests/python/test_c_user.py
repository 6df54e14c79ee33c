"""C code builds against the libc10c inside the installed pyc10, as a C user would build it.

The README's C example is compiled with the flags of ``pyc10-config`` (the console script where
this environment has it, else ``python -m pyc10.config``) and with ``pkg-config`` over the
wheel's relocatable ``c10c.pc``, linked by name (``-lc10c``), run, and must print what the
README says it prints.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import pyc10

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

needs_cc = pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler (cc)")


def _readme_example() -> tuple[str, str]:
    """The README's C example and the line it says the program prints."""
    if not README.is_file():
        pytest.skip("needs the checkout's README.md")
    text = README.read_text()
    blocks = re.findall(r"^```c\n(.*?)^```$", text, re.S | re.M)
    assert len(blocks) == 1, "README.md must hold exactly one ```c block"
    expected = re.search(r"^ */\* (float16 DispatchKeySet.*) \*/$", blocks[0], re.M)
    assert expected is not None
    return blocks[0], expected.group(1)


def _pyc10_config() -> str:
    """A shell command running pyc10-config for this interpreter's pyc10."""
    script = Path(sysconfig.get_path("scripts")) / "pyc10-config"
    pyc10_dir = Path(pyc10.__file__).resolve().parent
    installed_here = any(
        pyc10_dir.is_relative_to(Path(sysconfig.get_path(k)).resolve())
        for k in ("purelib", "platlib")
    )
    if script.is_file() and installed_here:
        return shlex.quote(str(script))
    # pyc10 from PYTHONPATH (a --target build): its console script is not on this PATH.
    return f"{shlex.quote(sys.executable)} -m pyc10.config"


def _pkgconfig_dir() -> str:
    """pyc10's c10c.pc directory; an editable install has none (its pyc10-config works)."""
    try:
        return pyc10.get_pkgconfig_dir()
    except FileNotFoundError as e:
        pytest.skip(str(e))


def _sh(command: str, cwd: Path) -> str:
    proc = subprocess.run(
        ["sh", "-c", command], cwd=cwd, capture_output=True, text=True, check=False, timeout=120
    )
    assert proc.returncode == 0, f"{command}\n{proc.stdout}{proc.stderr}"
    return proc.stdout


def test_entry_point_is_pyc10_config_main():
    scripts = importlib.metadata.entry_points(group="console_scripts")
    assert [e.value for e in scripts if e.name == "pyc10-config"] == ["pyc10.config:main"]


def test_config_prints_the_package_paths_and_version(tmp_path):
    config = _pyc10_config()
    out = _sh(f"{config} --version --includedir --libdir", tmp_path).split("\n")
    assert out[:3] == [pyc10.__version__, pyc10.get_include(), pyc10.get_library_dir()]
    assert _sh(f"{config} --cflags --libs", tmp_path).split("\n")[:2] == [
        f"-I{pyc10.get_include()}",
        f"-L{pyc10.get_library_dir()} -lc10c",
    ]
    assert Path(pyc10.get_include(), "c10c", "c10c.h").is_file()
    pkgconfig_dir = _pkgconfig_dir()
    assert _sh(f"{config} --pkgconfigdir", tmp_path).strip() == pkgconfig_dir
    assert Path(pkgconfig_dir, "c10c.pc").is_file()


def test_library_path_is_the_library_not_the_linker_script():
    libdir = Path(pyc10.get_library_dir())
    assert Path(pyc10.get_library_path()) == libdir / "libc10c.so.1"
    # libc10c.so is a linker script (a wheel holds no symbolic link) naming libc10c.so.1; in an
    # editable install's build directory it is meson's symbolic link
    script = libdir / "libc10c.so"
    if script.is_symlink():
        assert script.resolve() == (libdir / "libc10c.so.1").resolve()
    else:
        assert "INPUT(libc10c.so.1)" in script.read_text()


@needs_cc
def test_readme_example_builds_with_pyc10_config(tmp_path):
    source, expected = _readme_example()
    (tmp_path / "example.c").write_text(source)
    config = _pyc10_config()
    _sh(
        f"cc -std=c11 -Wall -Wextra -Wpedantic -Werror $({config} --cflags) example.c "
        f'$({config} --libs) -Wl,-rpath,"$({config} --libdir)" -o example',
        tmp_path,
    )
    assert _sh("./example", tmp_path).strip() == expected
    # linked by name: the program needs the SONAME, found through its run path
    needed = _sh("readelf -d example", tmp_path) if shutil.which("readelf") else ""
    if needed:
        assert "[libc10c.so.1]" in needed


@needs_cc
@pytest.mark.skipif(shutil.which("pkg-config") is None, reason="needs pkg-config")
def test_readme_example_builds_with_pkg_config(tmp_path):
    source, expected = _readme_example()
    (tmp_path / "example.c").write_text(source)
    pc = f"PKG_CONFIG_PATH={shlex.quote(_pkgconfig_dir())}"
    assert "-lc10c" in _sh(f"{pc} pkg-config --libs c10c", tmp_path).split()
    assert _sh(f"{pc} pkg-config --modversion c10c", tmp_path).strip() == pyc10.__version__
    libdir = _sh(f"{pc} pkg-config --variable=libdir c10c", tmp_path).strip()
    assert os.path.samefile(libdir, pyc10.get_library_dir())
    _sh(
        f"cc -std=c11 -Wall -Werror example.c $({pc} pkg-config --cflags --libs c10c) "
        f"-o example && LD_LIBRARY_PATH={shlex.quote(libdir)} ./example > out",
        tmp_path,
    )
    assert (tmp_path / "out").read_text().strip() == expected


@needs_cc
@pytest.mark.skipif(shutil.which("pkg-config") is None, reason="needs pkg-config")
def test_pkg_config_file_is_relocatable(tmp_path):
    # The wheel may be unpacked anywhere: c10c.pc's paths are relative to the file itself.
    source, expected = _readme_example()
    (tmp_path / "example.c").write_text(source)
    package = Path(_pkgconfig_dir()).parents[1]
    moved = tmp_path / "elsewhere" / "pyc10"
    shutil.copytree(package / "include", moved / "include")
    shutil.copytree(package / "lib", moved / "lib")
    for name in ("libc10c.so", "libc10c.so.1"):
        shutil.copy(package / name, moved / name)
    pc = f"PKG_CONFIG_PATH={shlex.quote(str(moved / 'lib' / 'pkgconfig'))}"
    libdir = _sh(f"{pc} pkg-config --variable=libdir c10c", tmp_path).strip()
    assert os.path.samefile(libdir, moved)
    _sh(
        f"cc -std=c11 example.c $({pc} pkg-config --cflags --libs c10c) "
        f'-Wl,-rpath,"{moved}" -o example && ./example > out',
        tmp_path,
    )
    assert (tmp_path / "out").read_text().strip() == expected
    if shutil.which("ldd"):
        assert str(moved / "libc10c.so.1") in _sh("ldd ./example", tmp_path)
