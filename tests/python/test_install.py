"""``pip install -e .`` (meson-python's editable mode) gives a working pyc10.

The editable install is made for real, into a throwaway virtual environment that sees this
interpreter's packages (pip, meson-python, meson, ninja, cffi, numpy), with its build directory
kept in ``build/test-editable`` of the checkout: the first run compiles the whole package (about
20 s on two cores), later ones only what changed (about 3 s).
"""

from __future__ import annotations

import fcntl
import os
import site
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD_DIR = ROOT / "build" / "test-editable"

pytestmark = pytest.mark.skipif(
    not (ROOT / "meson.build").is_file(), reason="needs the source checkout the tests came from"
)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    # Only the environment's own site directories: no PYTHONPATH build, no skipped rebuilds.
    env.pop("PYTHONPATH", None)
    env.pop("MESONPY_EDITABLE_SKIP", None)
    # meson and ninja of this interpreter's environment, for pip's build and the import hook.
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
    return env


def _run(args: list[str | os.PathLike[str]], cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [os.fspath(a) for a in args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=_env(),
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


@pytest.fixture(scope="module")
def editable_python(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The interpreter of a fresh virtual environment with pyc10 installed by ``pip install -e``."""
    pytest.importorskip("mesonpy")
    venv = tmp_path_factory.mktemp("editable") / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", venv], ROOT)
    python = venv / "bin" / "python"
    # --system-site-packages reaches the base interpreter's packages, not those of the virtual
    # environment running these tests: a .pth file adds them (after the new one's own).
    purelib = _run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], ROOT)
    parents = site.getsitepackages()
    if site.ENABLE_USER_SITE:
        parents.append(site.getusersitepackages())
    Path(purelib.stdout.strip(), "_parent_env.pth").write_text("\n".join(parents))
    BUILD_DIR.parent.mkdir(exist_ok=True)
    with open(BUILD_DIR.parent / "test-editable.lock", "w") as lock:
        # One build at a time in the shared build directory (parallel test runs in one checkout).
        fcntl.flock(lock, fcntl.LOCK_EX)
        _run(
            [
                python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                "--no-index", "--no-deps", "--no-build-isolation",
                "--editable", ROOT, f"--config-settings=build-dir={BUILD_DIR}",
            ],
            ROOT,
        )  # fmt: skip
        yield python


CHECK = """
import os, sys
import pyc10
from pyc10._lib import ffi, lib
t = pyc10.empty((2, 3)).t()
print(os.path.realpath(pyc10.__file__))
print(os.path.realpath(sys.modules["pyc10._c10c"].__file__))
print(os.path.realpath(sys.modules["pyc10._ctensor"].__file__))
print(os.path.realpath(pyc10.get_library_path()))
print(os.path.isfile(os.path.join(pyc10.get_include(), "c10c", "c10c.h")))
print(tuple(t.shape), t.stride(), pyc10.DispatchKey.CPU.name)
"""


def _check_editable(python: Path, cwd: Path) -> None:
    out = _run([python, "-c", CHECK], cwd).stdout.split("\n")
    # Python files from the checkout (edits show without a reinstall), compiled ones from the
    # build directory.
    assert out[0] == str((ROOT / "pyc10" / "__init__.py").resolve())
    for compiled in out[1:4]:
        assert Path(compiled).is_relative_to(BUILD_DIR.resolve()), out
    assert out[4] == "True"
    assert out[5] == "(3, 2) (1, 3) CPU"


def test_editable_install_imports_from_the_checkout_and_its_build(editable_python, tmp_path):
    _check_editable(editable_python, tmp_path)


def test_editable_install_wins_over_the_source_tree_in_the_repository_root(editable_python):
    # In the root, the checkout's pyc10/ comes first on sys.path, but the import hook comes first
    # of all: the package is the editable one, not a deferral to some other installed pyc10.
    _check_editable(editable_python, ROOT)
    proc = _run([editable_python, "-m", "pyc10"], ROOT)
    assert f"library: {BUILD_DIR.resolve()}" in proc.stdout
    assert "== dispatch keys" in proc.stdout
    assert proc.stderr == ""


def test_editable_install_rebuilds_what_is_missing_on_import(editable_python, tmp_path):
    # meson-python's hook runs ninja on import: a build product removed (or a source changed)
    # is rebuilt before the package loads.
    generated = BUILD_DIR / "pyc10" / "_dispatch_keys.py"
    generated.unlink()
    _check_editable(editable_python, tmp_path)
    assert generated.is_file()


class _Finder:
    """Stands for meson-python's MesonpyMetaFinder: the two attributes pyc10 reads."""

    def __init__(self, name: str, build_path: str) -> None:
        self._name = name
        self._build_path = build_path


def test_an_editable_install_whose_build_tools_are_gone_is_refused_with_the_command(
    tmp_path, monkeypatch
):
    # A plain `pip install -e .` builds in an isolated environment that pip deletes afterwards;
    # the build directory's ninja file still runs that environment's meson (to relink libc10c,
    # to regenerate), so the import hook would fail at the first C edit.
    from pyc10 import _source_tree

    gone = tmp_path / "pip-build-env-x" / "overlay" / "bin" / "meson"
    (tmp_path / "build.ninja").write_text(
        "ninja_required_version = 1.8.2\n\n"
        "rule SHSYM\n"
        f" command = {gone} --internal symbolextractor {tmp_path} $in $IMPLIB $out $CROSS\n\n"
        "rule REGENERATE_BUILD\n"
        f" command = {gone} --internal regenerate {ROOT} .\n"
    )
    assert _source_tree.missing_build_tool(str(tmp_path)) == str(gone)
    finder = type("MesonpyMetaFinder", (_Finder,), {})("pyc10", str(tmp_path))
    monkeypatch.setattr(sys, "meta_path", [finder, *sys.meta_path])
    problem = _source_tree.editable_rebuild_problem("pyc10")
    assert problem is not None and str(gone) in problem
    assert problem.endswith(
        "pip install meson-python meson ninja cffi numpy && pip install --no-build-isolation -e ."
    )
    assert _source_tree.editable_rebuild_problem("other") is None
    # meson still there (python and meson.py alike): nothing to say
    (tmp_path / "build.ninja").write_text(
        f"rule REGENERATE_BUILD\n command = {sys.executable} {__file__} --internal regenerate x .\n"
    )
    assert _source_tree.missing_build_tool(str(tmp_path)) is None
    assert _source_tree.editable_rebuild_problem("pyc10") is None
    assert _source_tree.missing_build_tool(str(tmp_path / "nothing")) is None
