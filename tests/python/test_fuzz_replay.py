"""Every build replays the kept corpus of the replay reader's fuzz harness
(tests/fuzz/py/fuzz_replay.py: python -m pyc10.replay on mutated snapshots, each input bounded in
time and memory), then fuzzes it for two seconds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[1] / "fuzz/py/fuzz_replay.py"


def test_the_kept_corpus_and_two_seconds_of_fuzzing_find_nothing() -> None:
    proc = subprocess.run(
        [sys.executable, str(HARNESS), "2", "--seed", "0"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    replayed = int(proc.stderr.split("replayed ")[1].split()[0])
    assert replayed >= 5 and "0 findings" in proc.stderr, proc.stderr[-4000:]


def test_the_harness_behaves_like_a_command() -> None:
    usage = subprocess.run(
        [sys.executable, str(HARNESS)], capture_output=True, text=True, check=False
    )
    assert usage.returncode == 2 and "usage:" in usage.stderr
    helped = subprocess.run(
        [sys.executable, str(HARNESS), "--help"], capture_output=True, text=True, check=False
    )
    assert helped.returncode == 0 and "SECONDS" in helped.stdout.upper()
