"""``python -m pyc10`` runs and shows each capability."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path


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
        "== storages and the caching CPU allocator",
        "a freed 4 MiB block is reused: new system allocations = 0",
        "== tensors: creation and metadata",
        "== views share memory; copies do not",
        "a[0, 1] = 100.0 (same memory), x._version = 1",
        "x.t().reshape(12) must copy: shares memory = False",
        "tensor([[ 1.,  9.],",
        "stride=(60, 1, 15, 3)",
        "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)",
        "promote_types(pyc10.int64, pyc10.float16) = pyc10.float16",
        "Device index 128 is out of range",
        "== conversions between dtypes",
        "f.to(float8_e4m3fn) = [0.1015625, 288.0, 448.0, -2.5]",
    ]:
        assert text in out
    assert proc.stderr == ""


def test_readme_python_examples_print_what_the_readme_says(tmp_path):
    # The first example is followed by "prints" and its output, verbatim; the others must run.
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    examples = re.findall(r"^```python\n(.*?)^```\n", readme, re.S | re.M)
    assert len(examples) >= 2
    shown = re.search(r"^```python\n.*?^```\n\nprints\n\n```\n(.*?)^```\n", readme, re.S | re.M)
    assert shown is not None, "README's first Python example is not followed by its output"
    for i, code in enumerate(examples):
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True
        )
        if i == 0:
            assert proc.stdout == shown.group(1)
    assert "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)" in proc.stdout


ROOT = Path(__file__).resolve().parents[2]


def test_tour_runs_from_the_source_checkout_with_the_installed_build():
    # In the repository root the source package comes first on sys.path; it defers to the
    # installed build, which has the compiled extension.
    proc = subprocess.run(
        [sys.executable, "-m", "pyc10"], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert "== dispatch keys" in proc.stdout
    code = "import pyc10, os; print(os.path.dirname(pyc10.__file__)); print(pyc10.int8)"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    where, dtype = proc.stdout.split()
    assert Path(where).resolve() != (ROOT / "pyc10").resolve()
    assert dtype == "pyc10.int8"


def test_source_checkout_without_an_installed_build_says_what_to_do():
    # -S leaves site-packages (and so the installed pyc10, or an editable install's import hook)
    # off sys.path, and so does an environment without PYTHONPATH (a build run from there).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, "-S", "-c", "import pyc10"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=False,
    )
    assert proc.returncode != 0
    assert "no installed pyc10 was found: run `pip install .` first" in proc.stderr


def tour(*args: str, **kwargs) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pyc10", *args]
    return subprocess.run(command, capture_output=True, text=True, check=False, **kwargs)


def test_tour_help_prints_usage_and_runs_nothing(tmp_path):
    proc = tour("--help", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.startswith("usage: python -m pyc10 [-h] [--version]")
    assert "== dtypes" not in proc.stdout
    version = tour("--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("pyc10 ")


def test_tour_bad_option_is_one_line_and_status_2(tmp_path):
    proc = tour("--bogus", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (
        "python -m pyc10: error: unrecognized arguments: --bogus (see python -m pyc10 --help)\n"
    )


def test_tour_into_a_closed_pipe_ends_quietly(tmp_path):
    # `python -m pyc10 | head -1` where head has gone: the reading end is closed before the
    # tour writes, so every write (or the final flush) meets a broken pipe.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pyc10"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            check=False,
        )
    finally:
        os.close(write_end)
    assert proc.stderr == ""
    assert proc.returncode == 1
