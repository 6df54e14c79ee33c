"""The exception hierarchy: one base class, builtin bases as torch's, C messages carried over."""

from __future__ import annotations

import threading

import pytest

import pyc10
from pyc10._errors import check
from pyc10._lib import ffi, lib


@pytest.mark.parametrize(
    ("cls", "builtin"),
    [
        (pyc10.C10RuntimeError, RuntimeError),
        (pyc10.C10ValueError, ValueError),
        (pyc10.C10IndexError, IndexError),
        (pyc10.C10TypeError, TypeError),
        (pyc10.C10NotImplementedError, NotImplementedError),
        (pyc10.C10MemoryError, MemoryError),
        (pyc10.C10OverflowError, RuntimeError),
    ],
)
def test_every_error_is_a_c10error_and_its_builtin(cls, builtin):
    assert issubclass(cls, pyc10.C10Error) and issubclass(cls, builtin)


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (lib.C10C_STATUS_ERROR, RuntimeError),
        (lib.C10C_STATUS_INVALID_ARGUMENT, ValueError),
        (lib.C10C_STATUS_INDEX_OUT_OF_RANGE, IndexError),
        (lib.C10C_STATUS_TYPE_ERROR, TypeError),
        (lib.C10C_STATUS_NOT_IMPLEMENTED, NotImplementedError),
        (lib.C10C_STATUS_OUT_OF_MEMORY, MemoryError),
        (lib.C10C_STATUS_NULL_POINTER, ValueError),
    ],
)
def test_status_codes_map_to_torchs_exception_types(status, cls):
    with pytest.raises(cls) as info:
        check(status)
    assert info.value.status == status
    assert info.value.status_name == ffi.string(lib.c10c_status_name(status)).decode()


def test_ok_does_not_raise():
    check(lib.C10C_STATUS_OK)


def test_message_comes_from_the_failing_call():
    with pytest.raises(pyc10.C10RuntimeError, match=r"^Invalid device string: 'cuda:x'$") as info:
        pyc10.device("cuda:x")
    assert info.value.status_name == "ERROR"


def test_messages_are_per_thread():
    results: dict[str, str] = {}

    def fail(s: str) -> None:
        for _ in range(200):
            try:
                pyc10.device(s)
            except RuntimeError as e:
                if s not in str(e):
                    results[s] = str(e)
                    return
        results.setdefault(s, "ok")

    threads = [threading.Thread(target=fail, args=(f"bad{i}:x",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(v == "ok" for v in results.values()), results
