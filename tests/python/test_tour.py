"""``python -m pyc10`` runs and shows each capability."""

from __future__ import annotations

import subprocess
import sys


def test_tour_runs_and_shows_every_section(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "pyc10"], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    out = proc.stdout
    for text in [
        "== dtypes",
        "== type promotion",
        "== devices",
        "== layouts",
        "== dispatch keys",
        "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)",
        "promote_types(pyc10.int64, pyc10.float16) = pyc10.float16",
        "Device index 128 is out of range",
    ]:
        assert text in out
    assert proc.stderr == ""
