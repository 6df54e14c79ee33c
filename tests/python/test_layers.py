"""tests/check_pyc10_layers.py: pyc10's modules and extension files use no higher layer, and the
checker catches an upward use planted in a copy of the sources."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECKER = ROOT / "tests" / "check_pyc10_layers.py"

pytestmark = pytest.mark.skipif(
    not (ROOT / "pyc10" / "_ext" / "common.h").is_file(), reason="needs pyc10's sources"
)


def run_checker(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECKER), str(root)], capture_output=True, text=True, check=False
    )


def source_copy(tmp_path: Path) -> Path:
    shutil.copytree(
        ROOT / "pyc10",
        tmp_path / "pyc10",
        ignore=shutil.ignore_patterns("*.so", "__pycache__", "*.pyi", "*.typed"),
    )
    return tmp_path


def plant(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def test_the_tree_has_no_upward_use_and_no_circle() -> None:
    r = run_checker(ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no upward use or circle" in r.stdout


def test_a_lazy_import_of_a_higher_module_is_reported(tmp_path: Path) -> None:
    root = source_copy(tmp_path)
    plant(
        root / "pyc10" / "_dtype.py",
        "\n\ndef _planted() -> object:\n    from ._tensor import Tensor\n\n    return Tensor\n",
    )
    r = run_checker(root)
    assert r.returncode == 1
    assert "module pyc10._dtype (values) uses pyc10._tensor (tensor): pyc10/_dtype.py:" in r.stdout


def test_an_import_under_type_checking_is_a_use(tmp_path: Path) -> None:
    # it never runs, but type checkers and readers follow it: _storage and _pickling named
    # _tensor's Tensor this way, a circle with _tensor, which imports both (issue 34)
    root = source_copy(tmp_path)
    plant(
        root / "pyc10" / "_dtype.py",
        "\nfrom typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
        "    from ._tensor import Tensor\n",
    )
    r = run_checker(root)
    assert r.returncode == 1
    assert "module pyc10._dtype (values) uses pyc10._tensor (tensor): pyc10/_dtype.py:" in r.stdout


def test_a_type_only_circle_inside_one_layer_is_reported(tmp_path: Path) -> None:
    root = source_copy(tmp_path)  # _typed_storage imports _storage; a type-only import back
    plant(
        root / "pyc10" / "_storage.py",
        "\nif TYPE_CHECKING:\n    from ._typed_storage import TypedStorage\n",
    )
    r = run_checker(root)
    assert r.returncode == 1
    assert "module circle in layer storage: pyc10._storage, pyc10._typed_storage" in r.stdout


def test_a_circle_inside_one_layer_is_reported(tmp_path: Path) -> None:
    root = source_copy(tmp_path)  # _scalar imports _dtype; make _dtype import _scalar back
    plant(root / "pyc10" / "_dtype.py", "\n\ndef _planted() -> None:\n    from . import _scalar\n")
    r = run_checker(root)
    assert r.returncode == 1
    assert "module circle in layer values: pyc10._dtype, pyc10._scalar" in r.stdout


def test_a_call_into_a_higher_extension_file_is_reported(tmp_path: Path) -> None:
    root = source_copy(tmp_path)
    plant(
        root / "pyc10" / "_ext" / "common.c",
        "\nPyObject *pyc10_planted(PyObject *self);\n"
        "PyObject *pyc10_planted(PyObject *self) { return pyc10_shape(self); }\n",
    )
    r = run_checker(root)
    assert r.returncode == 1
    assert "file common.c (common) uses size.c (shared): pyc10_shape" in r.stdout


def test_a_new_module_must_be_given_a_layer(tmp_path: Path) -> None:
    root = source_copy(tmp_path)
    (root / "pyc10" / "_planted.py").write_text("from . import _dtype\n")
    r = run_checker(root)
    assert r.returncode == 1
    assert "module pyc10._planted is in no layer" in r.stdout


def test_an_operating_system_call_outside_the_allowed_modules_is_reported(tmp_path: Path) -> None:
    root = source_copy(tmp_path)
    plant(root / "pyc10" / "_dtype.py", "\n\ndef _planted() -> int:\n    return os.fork()\n")
    plant(root / "pyc10" / "_ext" / "size.c", "\n#include <unistd.h>\n")
    r = run_checker(root)
    assert r.returncode == 1
    assert "os call in pyc10._dtype, outside libc10c's portability layer: " in r.stdout
    assert "pyc10/_dtype.py:" in r.stdout and " os.fork" in r.stdout
    assert "os call in size.c, outside libc10c's portability layer: " in r.stdout
    assert "<unistd.h>" in r.stdout
