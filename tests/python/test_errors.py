"""The exception hierarchy: one base class, builtin bases as torch's, C messages carried over."""

from __future__ import annotations

import gc
import os
import threading
import weakref
from collections.abc import Iterator

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


@pytest.fixture
def gc_disabled() -> Iterator[None]:
    """The garbage collector off: only reference counts free objects."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _fails_holding(storage: pyc10.UntypedStorage) -> None:
    """A call that fails (through raise_status) while its frame holds storage."""
    pyc10.empty(-1)


def test_a_failing_call_frees_what_its_frames_held_without_gc(gc_disabled: None) -> None:
    # the exception's traceback holds every frame it passed; a cycle through one of them (the
    # raising frame's own local) would keep them, and the storage, until a collection
    storage = pyc10.UntypedStorage(16)
    ref = weakref.ref(storage)
    with pytest.raises(RuntimeError, match="negative dimension"):
        _fails_holding(storage)
    del storage
    assert ref() is None


def test_a_failing_call_drops_a_shared_name_without_gc(gc_disabled: None) -> None:
    storage = pyc10.UntypedStorage(16)
    name = storage._share_filename_cpu_()[1]
    path = b"/dev/shm" + name
    assert os.path.exists(path)
    try:
        _fails_holding(storage)
    except RuntimeError:
        pass
    del storage
    assert not os.path.exists(path)


def test_an_absent_method_frees_its_tensor_without_gc(gc_disabled: None) -> None:
    t = pyc10.empty(4)
    ref = weakref.ref(t)
    with pytest.raises(AttributeError) as info:
        t.sum  # noqa: B018
    assert info.value.obj is t
    del t, info
    assert ref() is None
