"""pyc10.multiprocessing.spawn/start_processes/ProcessContext against torch.multiprocessing's.

The child functions live at module level (spawned children import this module by name); this
module imports torch only inside tests, so a spawned child starts without it.
"""

from __future__ import annotations

import os
import pickle
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import pyc10.multiprocessing as mp

pytestmark = pytest.mark.usefixtures("janitor_hooks")


METHODS = ["fork", "spawn"]

# pytest imports this file as tests.python.test_multiprocessing_spawn (--import-mode=importlib);
# spawned children import it by that name, so the checkout's root goes last on the path (last:
# pyc10 itself still comes from the installed package).
_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.append(_ROOT)


def _success(i: int) -> None:
    pass


def _put_index(i: int, queue: Any) -> None:
    queue.put(i)


def _raise_in(i: int, which: int) -> None:
    if i == which:
        raise ValueError(f"legitimate exception from process {i}")
    time.sleep(1.0)


def _raise_all(i: int) -> None:
    raise ValueError(f"legitimate exception from process {i}")


def _abort_first(i: int) -> None:
    if i == 0:
        os.kill(os.getpid(), signal.SIGABRT)
    time.sleep(1.0)


def _exit_first(i: int, code: int) -> None:
    if i == 0:
        sys.exit(code)
    time.sleep(1.0)


def _sleep(i: int, seconds: float) -> None:
    time.sleep(seconds)


def _daemon_flag(i: int, queue: Any) -> None:
    import multiprocessing

    queue.put(multiprocessing.current_process().daemon)


def _nested_child(i: int, ready: Any) -> None:
    ready.put(None)
    time.sleep(20.0)


def _nested(i: int, pids: Any, start_method: str) -> None:
    ctx = mp.get_context(start_method)
    ready = ctx.Queue()
    context = mp.start_processes(
        _nested_child, args=(ready,), nprocs=2, join=False, start_method=start_method
    )
    assert context is not None
    pids.put(context.pids())
    pids.close()
    pids.join_thread()  # flushed before the SIGTERM below ends this process
    for _ in range(2):  # both called prctl(PR_SET_PDEATHSIG) before this
        ready.get()
    os.kill(os.getpid(), signal.SIGTERM)


def _outcome(module: Any, fn: Any, args: tuple[Any, ...], nprocs: int, method: str) -> Any:
    """What start_processes raises: (class name, message's last line, exit code, signal)."""
    with pytest.raises(Exception) as info:
        module.start_processes(fn, args=args, nprocs=nprocs, start_method=method)
    e = info.value
    last = str(e).rstrip("\n").splitlines()[-1]
    return type(e).__name__, last, getattr(e, "exit_code", None), getattr(e, "signal_name", None)


@pytest.mark.parametrize("method", METHODS)
def test_success_returns_none_after_joining_all(method: str) -> None:
    assert mp.start_processes(_success, nprocs=2, start_method=method) is None


def test_join_is_true_once_all_have_joined_and_stays_true() -> None:
    context = mp.start_processes(_success, nprocs=2, join=False, start_method="fork")
    assert isinstance(context, mp.ProcessContext)
    context.join(timeout=None)
    context.join(timeout=None)
    assert context.join(timeout=None) is True
    assert context.join() is True


def test_first_argument_is_the_process_index() -> None:
    queue = mp.get_context("fork").SimpleQueue()
    mp.start_processes(_put_index, args=(queue,), nprocs=3, start_method="fork")
    assert sorted(queue.get() for _ in range(3)) == [0, 1, 2]


@pytest.mark.parametrize("method", METHODS)
def test_exception_in_one_child_is_raised_with_its_traceback(method: str) -> None:
    import torch.multiprocessing as tmp

    for i in range(2):
        with pytest.raises(mp.ProcessRaisedException) as info:
            mp.start_processes(_raise_in, args=(i,), nprocs=2, start_method=method)
        e = info.value
        assert re.search(f"\nValueError: legitimate exception from process {i}$", str(e))
        assert str(e).startswith(f"\n\n-- Process {i} terminated with the following error:\n")
        assert "Traceback (most recent call last)" in str(e)
        assert e.error_index == i
        assert e.error_pid > 0
    assert _outcome(mp, _raise_in, (1,), 2, "fork") == _outcome(tmp, _raise_in, (1,), 2, "fork")


def test_exception_in_every_child_names_one() -> None:
    with pytest.raises(
        mp.ProcessRaisedException, match=r"legitimate exception from process (0|1)$"
    ):
        mp.start_processes(_raise_all, nprocs=2, start_method="fork")


def test_signal_is_reported_by_name_as_torch_does() -> None:
    import torch.multiprocessing as tmp

    ours = _outcome(mp, _abort_first, (), 2, "fork")
    assert ours == (
        "ProcessExitedException",
        "process 0 terminated with signal SIGABRT",
        -6,
        "SIGABRT",
    )
    assert ours == _outcome(tmp, _abort_first, (), 2, "fork")


@pytest.mark.parametrize("method", METHODS)
def test_exit_code_is_reported_as_torch_does(method: str) -> None:
    import torch.multiprocessing as tmp

    ours = _outcome(mp, _exit_first, (123,), 2, method)
    assert ours == ("ProcessExitedException", "process 0 terminated with exit code 123", 123, None)
    if method == "fork":
        assert ours == _outcome(tmp, _exit_first, (123,), 2, method)


def test_signal_sent_from_outside_raises_process_exited() -> None:
    context = mp.start_processes(_sleep, args=(30.0,), nprocs=1, join=False, start_method="fork")
    assert context is not None
    for pid in context.pids():
        os.kill(pid, signal.SIGTERM)
    with pytest.raises(mp.ProcessExitedException) as info:
        context.join()
    assert info.value.exit_code == -signal.SIGTERM
    assert info.value.signal_name == "SIGTERM"


def test_join_timeout_returns_false_while_running_and_the_rest_are_ended_on_failure() -> None:
    context = mp.start_processes(_sleep, args=(0.5,), nprocs=2, join=False, start_method="fork")
    assert context is not None
    start = time.monotonic()
    assert context.join(timeout=0.05) is False
    assert time.monotonic() - start < 0.4
    while not context.join(timeout=5):
        pass
    assert all(p.exitcode == 0 for p in context.processes)
    # One fails: the other (sleeping 30 s) is terminated after the grace period, not awaited.
    failing = mp.start_processes(_raise_in, args=(0,), nprocs=2, join=False, start_method="fork")
    assert failing is not None
    start = time.monotonic()
    with pytest.raises(mp.ProcessRaisedException):
        while not failing.join(grace_period=0.1):
            pass
    assert time.monotonic() - start < 5
    assert not any(p.is_alive() for p in failing.processes)


@pytest.mark.parametrize("daemon", [False, True])
def test_daemon_flag_reaches_the_children(daemon: bool) -> None:
    queue = mp.get_context("fork").SimpleQueue()
    mp.start_processes(_daemon_flag, args=(queue,), nprocs=2, daemon=daemon, start_method="fork")
    assert [queue.get(), queue.get()] == [daemon, daemon]


def test_spawn_always_spawns_and_warns_for_another_method() -> None:
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        mp.spawn(_success, nprocs=1, start_method="fork")


def test_spawn_context_warns_about_its_rename() -> None:
    with pytest.warns(UserWarning, match="SpawnContext is renamed to ProcessContext"):
        context = mp.SpawnContext([], [])
    assert context.join() is True


def test_exceptions_pickle_with_their_attributes() -> None:
    raised = pickle.loads(pickle.dumps(mp.ProcessRaisedException("m", 1, 42)))
    assert (raised.msg, raised.error_index, raised.error_pid) == ("m", 1, 42)
    exited = pickle.loads(pickle.dumps(mp.ProcessExitedException("x", 0, 7, -9, "SIGKILL")))
    assert (exited.exit_code, exited.signal_name, exited.error_pid) == (-9, "SIGKILL", 7)
    assert issubclass(mp.ProcessRaisedException, mp.spawn.__globals__["ProcessException"])


@pytest.mark.skipif(sys.platform != "linux", reason="prctl(2)")
@pytest.mark.parametrize("sigint", ["handled", "ignored"])
def test_children_die_with_their_parent(sigint: str) -> None:
    # ignored: as under nohup, in a background job or on some CI runners (the disposition is
    # inherited), where torch's children, whose parent-death signal is SIGINT, outlive it
    if sigint == "handled":
        _children_die_with_their_parent()
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        _children_die_with_their_parent()
    finally:
        signal.signal(signal.SIGINT, previous)


def _children_die_with_their_parent() -> None:
    ctx = mp.get_context("fork")
    pids = ctx.Queue()
    context = mp.start_processes(
        _nested, args=(pids, "fork"), nprocs=1, join=False, start_method="fork"
    )
    assert context is not None
    children = pids.get(timeout=30)
    start = time.monotonic()
    while children:
        for pid in list(children):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                children.remove(pid)
        assert time.monotonic() - start < 10
        time.sleep(0.05)
    with pytest.raises(mp.ProcessExitedException, match="signal SIGTERM"):
        context.join()


def test_thread_name_round_trips() -> None:
    import threading

    def body(out: list[str]) -> None:
        mp._set_thread_name("pyc10-worker")
        out.append(mp._get_thread_name())

    out: list[str] = []
    t = threading.Thread(target=body, args=(out,))
    t.start()
    t.join()
    assert out == ["pyc10-worker"]
