"""A pytest plugin that runs numpy's own tests with pyc10's numpy allocator installed.

    python -m pytest -p pyc10_numpy_handler --pyargs numpy._core ...   (tests/numpy_suite/run.py)

The handler is installed when pytest starts; every test then checks that new arrays still get
it (a test of numpy's that changes the handler and leaves it changed would otherwise let the
tests after it run on numpy's default), and the run ends by saying how many arrays numpy made
under pyc10's allocator.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import pyc10
import pyc10.allocators.numpy as pn

_reinstalled: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    """Install pyc10's handler for the main thread's context, where pytest runs the tests."""
    pn.install()


@pytest.fixture(autouse=True)
def _pyc10_handler_is_installed(request: pytest.FixtureRequest) -> Iterator[None]:
    if not pn.is_installed():
        _reinstalled.append(request.node.nodeid)
        pn.install()
    yield


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say that the arrays really came from libc10c."""
    s = pyc10.memory.stats()
    terminalreporter.write_line(
        f"pyc10 numpy allocator: installed; libc10c's CPU allocator served "
        f"{s['allocation.all.allocated']} allocations; reinstalled after "
        f"{len(_reinstalled)} tests that changed numpy's handler"
    )
