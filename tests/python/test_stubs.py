"""The generated stubs (pyc10/_ctensor.pyi's Tensor methods, pyc10/_functions.pyi's function
forms) are current with the signature table and name what the extension makes at run time."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pyc10
from pyc10 import _api

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _stub_functions() -> dict[str, list[list[str]]]:
    """name -> the parameter names of each of its stub signatures (overloads in order)."""
    tree = ast.parse((ROOT / "pyc10" / "_functions.pyi").read_text())
    out: dict[str, list[list[str]]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            a = node.args
            out.setdefault(node.name, []).append([p.arg for p in a.args + a.kwonlyargs])
    return out


def test_gen_stubs_check_passes() -> None:
    script = ROOT / "pyc10" / "_ext" / "gen_stubs.py"
    done = subprocess.run(
        [sys.executable, str(script), "--check"], check=False, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_function_stubs_are_the_function_forms_the_extension_makes() -> None:
    assert sorted(_stub_functions()) == sorted(_api._FUNCTIONS)
    for name in _api._FUNCTIONS:
        assert name in pyc10.__all__ and callable(getattr(pyc10, name))


def test_function_stubs_take_input_first_and_the_docstrings_parameters() -> None:
    for name, overloads in _stub_functions().items():
        doc = getattr(pyc10, name).__doc__ or ""
        for params in overloads:
            assert params[0] == "input", name
            # each stub signature is one of the signature lines the docstring shows
            shown = [line for line in doc.splitlines() if line.startswith(f"{name}(")]
            assert any(all(f"{p}" in line for p in params) for line in shown), (name, params)
