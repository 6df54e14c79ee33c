"""Every build replays the kept corpus of the protocol-5 window rebuild's fuzz harness
(tests/fuzz/py/fuzz_pickle_window.py), as meson's suite 'fuzz' replays the C harnesses'."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[1] / "fuzz/py/fuzz_pickle_window.py"


def test_the_kept_corpus_and_two_seconds_of_fuzzing_find_nothing() -> None:
    proc = subprocess.run(
        [sys.executable, str(HARNESS), "2", "--seed", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    replayed = int(proc.stderr.split("replayed ")[1].split()[0])
    assert replayed >= 70 and "0 findings" in proc.stderr


def test_the_harness_behaves_like_a_command() -> None:
    usage = subprocess.run(
        [sys.executable, str(HARNESS)], capture_output=True, text=True, check=False
    )
    assert usage.returncode == 2 and "usage:" in usage.stderr
    helped = subprocess.run(
        [sys.executable, str(HARNESS), "--help"], capture_output=True, text=True, check=False
    )
    assert helped.returncode == 0 and "SECONDS" in helped.stdout.upper()
