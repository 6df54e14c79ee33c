"""README's --target recipe: when the build put on PYTHONPATH holds no pyc10 (it failed), the
suite refuses to run instead of quietly testing an installed pyc10."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_a_failed_target_build_on_pythonpath_stops_the_suite() -> None:
    empty = HERE.parents[1] / "build" / "no-such-target-build"
    env = dict(os.environ, PYTHONPATH=str(empty))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_dtype.py"],
        cwd=HERE,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 4, proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    assert f"PYTHONPATH names {empty} in this checkout, which holds no pyc10" in out
    assert "passed" not in out
