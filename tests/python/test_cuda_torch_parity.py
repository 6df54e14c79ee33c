"""pyc10.cuda against torch.cuda (2.13, the CPU wheel) on a machine without CUDA.

Every call is made on both modules in one fresh interpreter where pyc10 finds no driver
(C10C_CUDA_DRIVER names a missing file, so a machine with a GPU tests the same thing), and
the outcomes are compared: the value and its type where torch answers; the exception's builtin
class and message where torch refuses the arguments. Where torch needs CUDA, its CPU wheel
raises AssertionError, AttributeError or RuntimeError according to how it happens to lack
CUDA; pyc10 raises RuntimeError saying why (the class torch's CUDA build raises without a
driver), and those cases are compared as such.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch
from _oracle import TORCH_CUDA_BUILD_WITHOUT_GPU

import pyc10

# torch's CUDA build without a GPU (PyPI's aarch64 torch, on tests/cross/python_aarch64.sh's
# stand-in CUDA libraries) is no oracle here: it crashes in torch.cuda.Stream(), and this module
# compares with the CPU wheel's answers.
pytestmark = pytest.mark.skipif(
    TORCH_CUDA_BUILD_WITHOUT_GPU,
    reason="the oracle is torch's CUDA build on stand-in CUDA libraries (it crashes in "
    "torch.cuda.Stream()), not the CPU wheel this module compares with",
)

# Each case: an expression evaluated with c = torch.cuda or pyc10.cuda, dev = torch.device or
# pyc10.device, use(cm) = enter and leave the context manager cm.
ANSWERS = [
    "c.is_available()",
    "c.device_count()",
    "c.is_initialized()",
    "c.memory_stats()",
    "c.memory_stats(0)",
    "c.memory_stats('cpu')",
    "c.memory_stats('cuda:5')",
    "c.memory_stats(dev('cuda', 1))",
    "c.memory_stats(device=1.5)",
    "c.memory.memory_stats()",
    "c.memory_stats_as_nested_dict()",
    "c.memory_stats_as_nested_dict('cpu')",
    "c.memory.memory_stats_as_nested_dict(device=3)",
    "c.memory_allocated()",
    "c.memory_allocated('cpu')",
    "c.memory_allocated(device='cuda:1')",
    "c.max_memory_allocated()",
    "c.max_memory_allocated(0)",
    "c.memory_reserved()",
    "c.memory_reserved(dev('cuda'))",
    "c.max_memory_reserved()",
    "c.memory.max_memory_reserved(2)",
    "c.memory_cached()",
    "c.max_memory_cached(0)",
    "c.empty_cache()",
    "c.memory.empty_cache()",
    "c.set_stream(None)",
    "use(c.stream(None))",
    "use(c.stream(1))",  # without CUDA torch's StreamContext ignores its stream
    "type(c.stream(None)).__name__",
    "use(c.StreamContext(None))",
    "use(c.device(-1))",
    "use(c.device(-7))",
    "c.device(-1).idx",
    "c.device(3).idx",
    "c.device(True).idx",
    "c.device(dev('cuda', 2)).idx",
    "c.device('cuda:1').idx",
    "c.device(c.device(3)).idx",
    "c.device(None).idx",
    "c.device(1.5).idx",
    "c.device(-1).prev_idx",
    "c.set_device(-1)",
    "c.set_device(-5)",
    "c.list_gpu_processes()",
    "c.list_gpu_processes('cpu')",
    "c.list_gpu_processes(device='cpu')",
    "c.memory.list_gpu_processes(device=0)",
    "c.memory._set_allocator_settings('max_split_size_mb:64')",
    "c.memory._set_allocator_settings('max_split_size_mb:64,expandable_segments:True')",
    "c.memory._set_allocator_settings('roundup_power2_divisions:[256:1,>:4]')",
    "c.memory._set_allocator_settings('bogus:1')",
    "c.memory._set_allocator_settings('pinned_num_register_threads:2')",
    "c.memory._set_allocator_settings('backend:foo')",
    "c.memory._set_allocator_settings('')",
]

SAME_ERROR = [
    "c.set_device(None)",
    "c.set_device('cuda')",
    "c.set_device(1.5)",
    "c.set_device('cpu')",
    "c.set_device(dev('meta'))",
    "c.set_device('cuda:x')",
    "c.device('cpu')",
    "c.device(dev('meta', 0))",
    "use(c.device(None))",
    "use(c.device('cuda'))",
    "use(c.device(1.5))",
    "c.mem_get_info('cpu')",
    "c.memory_summary('cpu')",
    "c.memory_summary()",
    "c.memory_summary(0)",
    "c.memory_summary(abbreviated=True)",
    "c.memory.memory_summary(device=None, abbreviated=False)",
    "c.reset_peak_memory_stats('cpu')",
    "c.reset_max_memory_allocated('cpu')",
    "c.memory_stats(xx=1)",
    "c.memory_allocated(1, 2)",
    "c.empty_cache(1)",
    "c.is_initialized(1)",
    "c.memory_summary(0, False, 1)",
    "c.memory._set_allocator_settings(1)",
    "c.memory._set_allocator_settings(None)",
    "c.memory._set_allocator_settings([1])",
    "c.memory._set_allocator_settings(1.5)",
]

NEEDS_CUDA = [
    "c.init()",
    "c.current_device()",
    "c.set_device(0)",
    "c.set_device('cuda:0')",
    "c.set_device(dev('cuda', 1))",
    "c.set_device(True)",
    "use(c.device(0))",
    "use(c.device('cuda:1'))",
    "c.get_device_name()",
    "c.get_device_name(0)",
    "c.get_device_name('cpu')",
    "c.mem_get_info()",
    "c.mem_get_info(0)",
    "c.mem_get_info('cuda')",
    "c.memory.mem_get_info(1)",
    "c.synchronize()",
    "c.synchronize('cpu')",
    "c.synchronize(0)",
    "c.current_stream()",
    "c.current_stream('cpu')",
    "c.default_stream()",
    "c.default_stream(1)",
    "c.Stream()",
    "c.Stream('cpu')",
    "c.Stream(priority=-1)",
    "c.Stream(device=0, priority=0)",
    "c.Event()",
    "c.Event(enable_timing=True)",
    "c.Event(interprocess=True)",
    "c.Event(blocking=True)",
    "c.Event(external=True)",
    "c.Event(True, True, True, False)",
    "c.reset_peak_memory_stats()",
    "c.reset_peak_memory_stats(0)",
    "c.memory.reset_peak_memory_stats(device=dev('cuda', 0))",
    "c.reset_max_memory_allocated()",
    "c.reset_max_memory_cached(0)",
    "c.set_per_process_memory_fraction(0.5)",
    "c.set_per_process_memory_fraction(2.0)",
    "c.set_per_process_memory_fraction('x')",
    "c.set_per_process_memory_fraction(1)",
    "c.set_per_process_memory_fraction(0.5, 'cpu')",
    "c.memory.set_per_process_memory_fraction(0.25, device=0)",
    "c.memory._record_memory_history()",
    "c.memory._record_memory_history(None)",
    "c.memory._record_memory_history('state', max_entries=10)",
    "c.memory._record_memory_history(True, trace_alloc_max_entries=5)",
    "c.memory._record_memory_history(False)",
]

# The messages torch's CPU wheel gives where a call needs CUDA.
TORCH_WITHOUT_CUDA = {
    ("AssertionError", "Torch not compiled with CUDA enabled"),
    ("RuntimeError", "PyTorch was compiled without CUDA support"),
    ("RuntimeError", "torch.cuda.Stream requires CUDA support"),
    ("RuntimeError", "Tried to instantiate dummy base class Event"),
}

# Where torch's CPU wheel lacks the binding (AttributeError naming torch._C._cuda_*), what
# torch's CUDA build answers without a device: the allocator has no device, so no segments.
CUDA_BUILD_ANSWERS = {
    "c.memory_snapshot()": "[]",
    "c.memory_snapshot(include_traces=False)": "[]",
    "c.memory.memory_snapshot()": "[]",
    "c.memory._snapshot()": "{'segments': [], 'device_traces': []}",
    "c.memory._snapshot(0, augment_with_fx_traces=False)": "{'segments': [], 'device_traces': []}",
}

# Differences left: torch's CPU wheel checks four of the allocator options' values without a
# device; pyc10's parser is in libc10c, which needs a driver before it reads the settings.
KNOWN_DIFFERENCES = [
    "c.memory._set_allocator_settings('max_split_size_mb:8')",
    "c.memory._set_allocator_settings('expandable_segments:maybe')",
    "c.memory._set_allocator_settings('garbage_collection_threshold:1.0')",
    "c.memory._set_allocator_settings('roundup_power2_divisions:3')",
]

HARNESS = """
import json, sys, warnings
import torch
import pyc10

def use(cm):
    with cm:
        pass

def outcome(expr, c, dev):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = eval(expr, {"c": c, "dev": dev, "use": use})
        except Exception as e:
            builtin = next(k for k in type(e).__mro__ if k.__module__ == "builtins")
            result = {"exc": builtin.__name__, "msg": str(e)}
        else:
            result = {"value": repr(value), "type": type(value).__name__}
    result["warnings"] = sorted({w.category.__name__ for w in caught})
    return result

out = {"reason": pyc10.cuda._unavailable_reason(), "cases": {}}
for expr in json.loads(sys.argv[1]):
    out["cases"][expr] = {
        "torch": outcome(expr, torch.cuda, torch.device),
        "pyc10": outcome(expr, pyc10.cuda, pyc10.device),
    }
print(json.dumps(out))
"""

ALL_CASES = ANSWERS + SAME_ERROR + NEEDS_CUDA + list(CUDA_BUILD_ANSWERS) + KNOWN_DIFFERENCES


def run_both(cases: list[str], **env: str) -> dict[str, Any]:
    """Outcomes of each case on torch.cuda and pyc10.cuda, in a fresh interpreter without CUDA."""
    proc = subprocess.run(
        [sys.executable, "-c", HARNESS, json.dumps(cases)],
        capture_output=True,
        text=True,
        env={**os.environ, "C10C_CUDA_DRIVER": "/nonexistent/libcuda.so.1", **env},
        cwd="/",
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


@pytest.fixture(scope="module")
def outcomes() -> dict[str, Any]:
    return run_both(ALL_CASES)


def test_the_cases_run_without_cuda_on_both(outcomes):
    assert outcomes["reason"].startswith("CUDA driver not found: /nonexistent/libcuda.so.1")
    assert len(outcomes["cases"]) == len(ALL_CASES)  # no case listed twice


@pytest.mark.parametrize("expr", ANSWERS)
def test_where_torch_answers_pyc10_gives_the_same_answer(outcomes, expr):
    case = outcomes["cases"][expr]
    assert "value" in case["torch"], case  # the oracle answers
    assert case["pyc10"] == case["torch"]


@pytest.mark.parametrize("expr", SAME_ERROR)
def test_where_torch_refuses_the_arguments_pyc10_raises_the_same(outcomes, expr):
    case = outcomes["cases"][expr]
    assert "exc" in case["torch"], case
    assert case["pyc10"] == case["torch"]


@pytest.mark.parametrize("expr", NEEDS_CUDA)
def test_where_torch_needs_cuda_pyc10_raises_runtime_error_saying_why(outcomes, expr):
    case = outcomes["cases"][expr]
    torch_exc = (case["torch"].get("exc"), case["torch"].get("msg"))
    assert torch_exc in TORCH_WITHOUT_CUDA or (
        torch_exc[0] == "AttributeError"
        and "module 'torch._C' has no attribute '_cuda" in torch_exc[1]
    ), case
    assert case["pyc10"]["exc"] == "RuntimeError"
    assert case["pyc10"]["msg"] == outcomes["reason"]
    assert case["pyc10"]["warnings"] == case["torch"]["warnings"]


@pytest.mark.parametrize("expr", list(CUDA_BUILD_ANSWERS))
def test_where_torchs_cpu_wheel_lacks_the_binding_pyc10_answers_as_its_cuda_build(outcomes, expr):
    case = outcomes["cases"][expr]
    assert case["torch"]["exc"] == "AttributeError"
    assert "module 'torch._C' has no attribute '_cuda_memorySnapshot'" == case["torch"]["msg"]
    assert case["pyc10"]["value"] == CUDA_BUILD_ANSWERS[expr]


@pytest.mark.parametrize("expr", KNOWN_DIFFERENCES)
def test_allocator_values_torch_checks_without_cuda_are_accepted_unchecked(outcomes, expr):
    case = outcomes["cases"][expr]
    assert case["torch"]["exc"] == "ValueError"
    assert case["pyc10"]["value"] == "None"
    assert case["pyc10"]["warnings"] == case["torch"]["warnings"]


def public_functions(module: Any) -> dict[str, Any]:
    return {n: getattr(module, n) for n in module.__all__ if callable(getattr(module, n))}


def test_every_public_name_is_torchs_but_pyc10s_own():
    # pyc10's own: driver_version, set_allocator_settings, and step (the planner's step marker)
    ours = set(pyc10.cuda.__all__) - {"driver_version", "set_allocator_settings", "step"}
    assert ours <= set(torch.cuda.__all__)
    memory_names = set(pyc10.cuda.memory.__all__) - {"set_allocator_settings", "step"}
    assert memory_names <= set(torch.cuda.memory.__all__)
    for name in ("_record_memory_history", "_snapshot", "_set_allocator_settings"):
        assert hasattr(torch.cuda.memory, name) and hasattr(pyc10.cuda.memory, name)


def test_cuda_memory_names_are_cuda_names_as_in_torch():
    for name in pyc10.cuda.memory.__all__:
        assert (getattr(pyc10.cuda, name) is getattr(pyc10.cuda.memory, name)) == (
            name in ("set_allocator_settings", "step")
            or getattr(torch.cuda, name) is getattr(torch.cuda.memory, name)
        ), name
    assert pyc10.cuda.memory is sys.modules["pyc10.cuda.memory"]


def parameters(fn: Any) -> list[tuple[str, Any, Any]]:
    return [
        (p.name, p.kind, p.default)
        for p in inspect.signature(fn).parameters.values()
        if p.name not in ("self", "cls")
    ]


@pytest.mark.parametrize(
    "name",
    sorted(
        set(public_functions(pyc10.cuda)) - {"driver_version", "set_allocator_settings", "step"}
    ),
)
def test_signatures_are_torchs(name):
    ours, theirs = getattr(pyc10.cuda, name), getattr(torch.cuda, name)
    if inspect.isclass(ours):
        ours = ours.__init__
        theirs = theirs.__init__ if "__init__" in vars(theirs) else theirs.__new__
    theirs_params = [p for p in parameters(theirs) if p[1] is not inspect.Parameter.VAR_KEYWORD]
    assert parameters(ours) == theirs_params


@pytest.mark.parametrize("name", ["_record_memory_history", "_snapshot", "_set_allocator_settings"])
def test_private_memory_signatures_are_torchs(name):
    assert parameters(getattr(pyc10.cuda.memory, name)) == parameters(
        getattr(torch.cuda.memory, name)
    )


# ---- list_gpu_processes through a stand-in pynvml, the same module for both ----

FAKE_PYNVML = '''
"""A stand-in for nvidia-ml-py: two devices, processes on the second."""
import os


class NVMLError(Exception):
    pass


class NVMLError_DriverNotLoaded(NVMLError):
    pass


class _Proc:
    def __init__(self, pid, used):
        self.pid, self.usedGpuMemory = pid, used


UUIDS = ["GPU-0a1b2c3d-0000", "GPU-0a1b9999-1111"]


def nvmlInit():
    if os.environ.get("FAKE_NVML_NO_DRIVER"):
        raise NVMLError_DriverNotLoaded("Driver Not Loaded")


def nvmlDeviceGetCount():
    return len(UUIDS)


def nvmlDeviceGetHandleByIndex(i):
    if not 0 <= i < len(UUIDS):
        raise NVMLError("Invalid Argument")
    return ("handle", i)


def nvmlDeviceGetUUID(handle):
    return UUIDS[handle[1]]


def nvmlDeviceGetComputeRunningProcesses(handle):
    return [] if handle[1] == 0 else [_Proc(4242, 3 << 20), _Proc(17, 123456789)]
'''

# torch reads UUIDs through ctypes and libnvidia-ml; the stand-in's are given to it instead.
NVML_CASES = [
    ("", None, "c.list_gpu_processes(0)"),
    ("", None, "c.list_gpu_processes(1)"),
    ("", None, "c.list_gpu_processes(dev('cuda', 1))"),
    ("", None, "c.list_gpu_processes()"),
    ("", None, "c.list_gpu_processes('cpu')"),
    ("", "1,0", "c.list_gpu_processes(0)"),
    ("", "1,0", "c.list_gpu_processes(2)"),
    ("", "1gpu,0", "c.list_gpu_processes(0)"),
    ("", "0,0", "c.list_gpu_processes(0)"),
    ("", "-1", "c.list_gpu_processes(0)"),
    ("", "", "c.list_gpu_processes(0)"),
    ("", "+", "c.list_gpu_processes(0)"),
    ("", "GPU-0a1b9", "c.list_gpu_processes(0)"),
    ("", "GPU-0a1b", "c.list_gpu_processes(0)"),  # ambiguous: no device
    ("", "GPU-0a1b2,GPU-0a1b9", "c.list_gpu_processes(1)"),
    ("", "MIG-x", "c.list_gpu_processes(0)"),
    ("1", None, "c.list_gpu_processes(0)"),  # no driver
]

NVML_HARNESS = """
import json, os, sys
import torch
import pyc10
import pynvml

torch.cuda._raw_device_uuid_nvml = lambda: list(pynvml.UUIDS)
out = []
for no_driver, visible, expr in json.loads(sys.argv[1]):
    os.environ.pop("CUDA_VISIBLE_DEVICES", None)
    os.environ.pop("FAKE_NVML_NO_DRIVER", None)
    if visible is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = visible
    if no_driver:
        os.environ["FAKE_NVML_NO_DRIVER"] = no_driver
    row = []
    for c, dev in ((torch.cuda, torch.device), (pyc10.cuda, pyc10.device)):
        try:
            row.append({"value": eval(expr, {"c": c, "dev": dev})})
        except Exception as e:
            builtin = next(k for k in type(e).__mro__ if k.__module__ == "builtins")
            row.append({"exc": builtin.__name__, "msg": str(e)})
    out.append(row)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def nvml_outcomes(tmp_path_factory: pytest.TempPathFactory) -> list[list[dict[str, Any]]]:
    path = tmp_path_factory.mktemp("pynvml")
    (path / "pynvml.py").write_text(FAKE_PYNVML)
    proc = subprocess.run(
        [sys.executable, "-c", NVML_HARNESS, json.dumps(NVML_CASES)],
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "C10C_CUDA_DRIVER": "/nonexistent/libcuda.so.1",
            "PYTHONPATH": os.pathsep.join(
                [str(path), *filter(None, [os.environ.get("PYTHONPATH")])]
            ),
        },
        cwd="/",
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result: list[list[dict[str, Any]]] = json.loads(proc.stdout)
    return result


@pytest.mark.parametrize("i", range(len(NVML_CASES)), ids=[repr(c) for c in NVML_CASES])
def test_list_gpu_processes_reads_nvml_as_torch(nvml_outcomes, i):
    theirs, ours = nvml_outcomes[i]
    assert ours == theirs


def test_list_gpu_processes_cases_cover_answers_and_errors(nvml_outcomes):
    kinds = {next(iter(theirs)) for theirs, _ in nvml_outcomes}
    assert kinds == {"value", "exc"}
    assert any("process       4242 uses" in t.get("value", "") for t, _ in nvml_outcomes)


# ---- the module paths, as torch's ----


def test_pyc10_cuda_is_a_package_with_memory_as_torch():
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                """
                import pyc10.cuda.memory as m
                from pyc10.cuda.memory import _record_memory_history, memory_stats
                from pyc10.cuda import *
                import pyc10
                print(m is pyc10.cuda.memory, memory_stats is pyc10.cuda.memory_stats,
                      callable(_record_memory_history), 'memory' in dir())
                """
            ),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "C10C_CUDA_DRIVER": "/nonexistent/libcuda.so.1"},
        cwd="/",
        check=True,
    ).stdout
    assert out.split() == ["True", "True", "True", "True"]
    assert Path(pyc10.cuda.__file__).name == "__init__.py"
