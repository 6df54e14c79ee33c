"""Shared fixtures: torch (exactly 2.13.0) is the oracle every behaviour test compares with."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

if not torch.__version__.startswith("2.13.0"):
    pytest.exit(f"the tests compare with torch 2.13.0, found {torch.__version__}", returncode=2)

# Importing pyc10.multiprocessing installs the storages' janitor hooks for the whole process (as
# it should); most tests expect a pyc10 without them, so they are off until a module asks for
# them with the janitor_hooks fixture (pytest imports every test file before running any).
import pyc10.multiprocessing  # installs the hooks, removed just below
from pyc10 import _sharing

_JANITOR_HOOKS = (_sharing.name_created, _sharing.name_opened)
_sharing.name_created = _sharing.name_opened = None


def _check_pythonpath_build() -> None:
    """A build put on PYTHONPATH from this checkout (README's --target recipe) is what must be
    tested: if its directory holds no pyc10 (its build failed), `import pyc10` quietly found an
    installed one instead."""
    root = Path(__file__).resolve().parents[2]
    ours = [
        Path(e).resolve()
        for e in os.environ.get("PYTHONPATH", "").split(os.pathsep)
        if e and Path(e).resolve().is_relative_to(root)
    ]
    found = Path(pyc10.__file__).resolve().parents[1]
    if ours and found not in ours:
        pytest.exit(
            f"PYTHONPATH names {', '.join(map(str, ours))} in this checkout, which holds no pyc10"
            f" (did its build fail?): the tests would run against {found / 'pyc10'} instead",
            returncode=4,
        )


_check_pythonpath_build()


@pytest.fixture(scope="module")
def janitor_hooks() -> Iterator[None]:
    """pyc10.multiprocessing's janitor hooks, on while a module's tests run, then off again."""
    _sharing.name_created, _sharing.name_opened = _JANITOR_HOOKS
    yield
    _sharing.name_created = _sharing.name_opened = None
    # and the manager handles it remembered (a name shared again reports the last one seen)
    if hasattr(_sharing, "_managers"):
        _sharing._managers.clear()
        _sharing._last_manager = b""


@pytest.fixture(scope="session")
def stub(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The stand-in CUDA driver (tests/cuda_stub/), built once per run: C10C_CUDA_DRIVER=stub.

    C10C_TEST_DRIVER=libcuda.so.1 gives the real driver instead (tests/gpu/check.sh, for the
    suites that run on a GPU as well).
    """
    real = os.environ.get("C10C_TEST_DRIVER")
    if real:
        return Path(real)
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        pytest.skip("no C compiler to build the stand-in driver")
    out = tmp_path_factory.mktemp("stub") / "libcuda_stub.so"
    src = Path(__file__).resolve().parents[2] / "tests/cuda_stub/cuda_stub.c"
    subprocess.run(
        [cc, "-shared", "-fPIC", "-O1", "-pthread", "-o", str(out), str(src)], check=True
    )
    return out
