"""torch.cuda's device properties, allocator entry points, pools, external streams, device_of,
OutOfMemoryError and the memory statistics' keys and summary, in pyc10.cuda.

Without a driver each call is compared with torch's CPU wheel (test_cuda_torch_parity's
harness); with the stand-in driver (tests/cuda_stub/cuda_stub.c) against what torch's sources
say: the statistics keys listed in torch.cuda.memory_stats's docstring, torch's own
memory_summary code run over pyc10's statistics, _CudaDeviceProperties' attributes in torch's
stubs and its repr as torch/csrc/cuda/Module.cpp prints it.
"""

from __future__ import annotations

import inspect
import itertools
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from _oracle import TORCH_CUDA_BUILD_WITHOUT_GPU
from test_cuda_torch_parity import TORCH_WITHOUT_CUDA, run_both

import pyc10

ROOT = Path(__file__).resolve().parents[2]

NEEDS_CUDA = [
    "c.get_device_properties()",
    "c.get_device_properties(0)",
    "c.get_device_properties(-1)",
    "c.get_device_capability()",
    "c.get_device_capability(1)",
    "c.get_per_process_memory_fraction()",
    "c.caching_allocator_alloc(10)",
    "c.MemPool()",
    "use(c.use_mem_pool(None))",
    "c.ExternalStream(0, 1)",
]
ANSWERS = [
    "c.is_bf16_supported()",
    "c.is_bf16_supported(False)",
    "c.is_bf16_supported(including_emulation=True)",
    "c.device_of(type('T', (), {'is_cuda': False})()).idx",
    "use(c.device_of(type('T', (), {'is_cuda': False})()))",
]
SAME_ERROR = [
    "c.caching_allocator_alloc(10, 'cpu')",
    "c.caching_allocator_alloc(10, 0, 'x')",
    "c.caching_allocator_alloc(10, device='cuda:x')",
    "c.device_of(1)",
]
# torch's CPU wheel lacks these bindings (AttributeError); its CUDA build answers so without a
# device: the native allocator, nothing to free at 0, no segments in any pool
CUDA_BUILD_ANSWERS = {
    "c.get_allocator_backend()": "'native'",
    "c.caching_allocator_delete(0)": "None",
    "c.memory_snapshot((0, 1))": "[]",
    "c.memory.memory_snapshot(mempool_id=(0, 0))": "[]",
}


@pytest.fixture(scope="module")
def outcomes():
    return run_both(NEEDS_CUDA + ANSWERS + SAME_ERROR + list(CUDA_BUILD_ANSWERS))


@pytest.mark.parametrize("expr", NEEDS_CUDA)
def test_without_a_driver_what_needs_cuda_is_runtime_error_saying_why(outcomes, expr):
    case = outcomes["cases"][expr]
    theirs = (case["torch"].get("exc"), case["torch"].get("msg"))
    # (torch's CUDA build without a GPU refuses too, in its own words: without a driver, what
    # pip's torch says on most machines, or with a driver and no device)
    cuda_build = (
        {
            ("RuntimeError", "No CUDA GPUs are available"),
            (
                "RuntimeError",
                "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU"
                " and installed a driver from http://www.nvidia.com/Download/index.aspx",
            ),
        }
        if TORCH_CUDA_BUILD_WITHOUT_GPU
        else set()
    )
    assert theirs in TORCH_WITHOUT_CUDA | cuda_build | {
        ("RuntimeError", "Tried to instantiate dummy base class MemPool")
    }
    assert case["pyc10"]["exc"] == "RuntimeError"
    assert case["pyc10"]["msg"] == outcomes["reason"]


@pytest.mark.parametrize("expr", ANSWERS)
def test_without_a_driver_torchs_answers(outcomes, expr):
    case = outcomes["cases"][expr]
    assert case["pyc10"] == case["torch"]


@pytest.mark.parametrize("expr", SAME_ERROR)
def test_without_a_driver_torchs_errors(outcomes, expr):
    case = outcomes["cases"][expr]
    assert "exc" in case["torch"]
    theirs = {**case["torch"], "msg": case["torch"]["msg"].replace("torch.", "pyc10.")}
    assert case["pyc10"] == theirs


@pytest.mark.parametrize("expr", list(CUDA_BUILD_ANSWERS))
def test_without_a_driver_what_torchs_cuda_build_answers(outcomes, expr):
    case = outcomes["cases"][expr]
    if TORCH_CUDA_BUILD_WITHOUT_GPU:  # the oracle is that build: the same answer
        assert case["torch"] == case["pyc10"]
    else:
        assert case["torch"]["exc"] == "AttributeError" and "torch._C" in case["torch"]["msg"]
    assert case["pyc10"]["value"] == CUDA_BUILD_ANSWERS[expr]


def test_out_of_memory_error_is_torchs_class_shape():
    ours, theirs = pyc10.cuda.OutOfMemoryError, torch.cuda.OutOfMemoryError
    assert ours.__name__ == theirs.__name__ and issubclass(ours, RuntimeError)
    assert issubclass(ours, pyc10.C10Error) and issubclass(ours, MemoryError)
    assert "OutOfMemoryError" not in pyc10.cuda.__all__  # a name of torch.cuda, not in __all__
    assert "OutOfMemoryError" not in torch.cuda.__all__
    # torch.OutOfMemoryError is the same class, in torch's __all__
    assert torch.OutOfMemoryError is theirs and "OutOfMemoryError" in torch.__all__
    assert pyc10.OutOfMemoryError is ours and "OutOfMemoryError" in pyc10.__all__


def test_signatures_are_torchs():
    for name in (
        "get_device_properties",
        "get_device_capability",
        "is_bf16_supported",
        "caching_allocator_alloc",
        "caching_allocator_delete",
        "get_per_process_memory_fraction",
        "get_allocator_backend",
        "use_mem_pool",
    ):
        ours = inspect.signature(getattr(pyc10.cuda, name))
        theirs = inspect.signature(getattr(torch.cuda, name))
        assert list(ours.parameters) == list(theirs.parameters), name
        assert [p.default for p in ours.parameters.values()] == [
            p.default for p in theirs.parameters.values()
        ], name
    for cls in ("MemPool", "ExternalStream", "device_of"):
        ours = inspect.signature(getattr(pyc10.cuda, cls))
        theirs = inspect.signature(getattr(torch.cuda, cls))
        named = [n for n, p in theirs.parameters.items() if p.kind != p.VAR_KEYWORD]
        assert list(ours.parameters) == named, cls  # ExternalStream's **kwargs go to Stream


def torch_stats_keys() -> set[str]:
    """The keys torch.cuda.memory_stats's docstring lists, braces expanded.

    The docstring calls the allocation counts "allocated.*"; c10 (and torch's own
    memory_summary) names them "allocation.*". reserved_bytes_by_private_pools is keyed by
    private pools, which pyc10 has none of (no keys then, in torch too).
    """
    doc = torch.cuda.memory_stats.__doc__ or ""
    keys: set[str] = set()
    for pattern in re.findall(r'``"([a-z][a-z_{},.]*)"``', doc):
        parts = [p.split(",") for p in re.split(r"[{}]", pattern)]
        for combo in itertools.product(*parts):
            keys.add("".join(combo))
    keys = {
        k.replace("allocated.", "allocation.", 1) if k.startswith("allocated.") else k for k in keys
    }
    keys.discard("reserved_bytes_by_private_pools")
    return keys


def run(stub: Path, script: str, **env: str) -> list[str]:
    """Run script with the stand-in driver in a fresh interpreter; its stdout's lines."""
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        env={**os.environ, "C10C_CUDA_DRIVER": str(stub), **env},
        cwd="/",
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_memory_stats_keys_are_torchs_and_the_summary_is_torchs_table(stub):
    out = run(
        stub,
        """
        import json
        import pyc10, torch.cuda.memory as tm
        c = pyc10.cuda
        x = pyc10.zeros(3, device="cuda")
        y = pyc10.empty(800 << 20, dtype=pyc10.uint8, device="cuda")  # MiB and GiB cells
        z = [pyc10.empty(1 << 10, device="cuda") for _ in range(100)]
        del z[::2]
        print(json.dumps(sorted(c.memory_stats())))
        stats = c.memory_stats()
        # torch's own memory_summary, run over pyc10's statistics
        tm.memory_stats = lambda device=None: stats
        tm._get_device_index = lambda device, optional=False: 0
        for abbreviated in (False, True):
            ours = c.memory_summary(abbreviated=abbreviated)
            theirs = tm.memory_summary(abbreviated=abbreviated).replace("PyTorch", "libc10c")
            print(json.dumps([ours.splitlines(), theirs.splitlines()]))
        """,
    )
    keys = json.loads(out[0])
    # ours beyond torch's: planning and stitching (tests/python/test_planning.py)
    ours = {k for k in keys if k.startswith(("plan.", "num_stitches", "stitched_bytes."))}
    assert len(ours) == 11
    assert set(keys) - ours == torch_stats_keys()
    assert len(keys) == len(set(keys)) == 134
    for line in out[1:]:
        ours, theirs = json.loads(line)
        assert ours == theirs
        assert len({len(row) for row in ours}) == 1  # every row 77 wide, as torch's
    assert "GiB" in out[1] or "MiB" in out[1]


def test_device_properties_as_torch_prints_them(stub):
    out = run(
        stub,
        """
        import pyc10
        c = pyc10.cuda
        p = c.get_device_properties()
        print(repr(p))
        print(sorted(a for a in dir(p) if not a.startswith("_")))
        print(p is c.get_device_properties("cuda:0"), c.get_device_properties(1).pci_bus_id)
        print(c.get_device_capability(), c.get_device_capability(pyc10.device("cuda", 1)))
        print(c.is_bf16_supported(), c.is_bf16_supported(False))
        print(p.total_memory == c.mem_get_info(0)[1], p.gcnArchName == p.name)
        for bad in (2, -1, "cuda:7", "cpu", None):
            try:
                c.get_device_properties(bad) if bad is not None else setattr(p, "major", 1)
                print("no error")
            except Exception as e:
                print(type(e).__name__, e)
        """,
    )
    name = "libc10c stand-in GPU 0"
    assert out[0] == (
        f"_CudaDeviceProperties(name='{name}', major=8, minor=0, total_memory=1024MB, "
        "multi_processor_count=108, uuid=10111213-1415-1617-1819-1a1b1c1d1e00, pci_bus_id=1, "
        "pci_device_id=0, pci_domain_id=0, L2_cache_size=40MB)"
    )
    stub_pyi = Path(torch.__file__).parent / "_C" / "__init__.pyi"
    block = stub_pyi.read_text().split("class _CudaDeviceProperties:")[1].split("\n\n")[0]
    torch_attrs = set(re.findall(r"^\s+(\w+):", block, re.M))
    assert torch_attrs and torch_attrs <= set(eval(out[1]))
    assert out[2:6] == ["True 2", "(8, 0) (8, 0)", "True True", "True True"]
    assert out[6:] == [
        "AssertionError Invalid device id",
        "AssertionError Invalid device id",
        "AssertionError Invalid device id",
        "C10ValueError Expected a cuda device, but got: cpu",
        "AttributeError property 'major' of '_CudaDeviceProperties' object has no setter",
    ]


def test_bf16_below_compute_capability_8_is_emulated_as_torch_says(stub):
    out = run(
        stub,
        """
        import pyc10
        c = pyc10.cuda
        print(c.get_device_capability(), c.is_bf16_supported(), c.is_bf16_supported(False))
        """,
        C10C_STUB_CC_MAJOR="7",
        C10C_STUB_CC_MINOR="5",
    )
    assert out == ["(7, 5) True False"]


def test_allocator_entry_points_pools_and_out_of_memory(stub):
    out = run(
        stub,
        """
        import pyc10
        c = pyc10.cuda
        def show(call):
            try:
                r = call()
                print("ok", r)
            except Exception as e:
                print(type(e).__name__, e)
        print(c.get_allocator_backend(), c.get_per_process_memory_fraction())
        c.set_per_process_memory_fraction(0.5, "cuda:1")
        print(c.get_per_process_memory_fraction(1), c.get_per_process_memory_fraction(0))
        a = c.caching_allocator_alloc(1000)
        print(a != 0, c.memory_allocated(0))  # 1000 bytes rounded up to 512s
        c.caching_allocator_delete(a)
        print(c.memory_allocated(0))
        show(lambda: c.caching_allocator_delete(a))
        s = c.Stream(1)
        b = c.caching_allocator_alloc(4096, 1, s)
        print(c.memory_allocated(1), c.memory_allocated(0))
        c.caching_allocator_delete(b)
        b = c.caching_allocator_alloc(0)
        print(b, c.caching_allocator_delete(b))
        show(lambda: c.caching_allocator_alloc(10, 0, 12345))
        show(lambda: c.caching_allocator_alloc(-1))
        pool = c.MemPool()
        print(pool.id, c.MemPool().id[0], pool.use_count(), pool.snapshot())
        show(lambda: c.MemPool(allocator=object()))
        def enter(p, d=None):
            with c.use_mem_pool(p, d):
                pass
        show(lambda: enter(pool))
        show(lambda: enter(pool, "cpu"))
        show(lambda: enter(None))
        x = pyc10.zeros(4, device="cuda")
        print(len(c.memory_snapshot((0, 0))), c.memory_snapshot((0, 1)))
        show(lambda: c.memory_snapshot([1]))
        c.set_per_process_memory_fraction(0.001)
        try:
            pyc10.empty(1 << 24, device="cuda")
        except RuntimeError as e:
            print(type(e).__module__, type(e).__name__, isinstance(e, MemoryError))
            print(str(e).startswith("CUDA out of memory. Tried to allocate 64.00 MiB."))
        print(c.memory_stats()["num_ooms"], c.get_per_process_memory_fraction())
        """,
    )
    assert out[:4] == ["native 1.0", "0.5 1.0", "True 1024", "0"]
    assert re.fullmatch(r"C10RuntimeError invalid device pointer: 0x[0-9a-f]+", out[4])
    assert out[5:] == [
        "4096 0",
        "0 None",
        "C10NotImplementedError caching_allocator_alloc: stream 0x3039 is not a stream of "
        "libc10c; pass a pyc10.cuda.Stream",
        "C10ValueError caching_allocator_alloc: size must be non-negative, got -1",
        "(0, 1) 0 1 []",
        "C10NotImplementedError MemPool: pluggable CUDA allocators are not supported",
        "C10NotImplementedError use_mem_pool: the CUDA caching allocator has no private memory "
        "pools",
        "C10ValueError Expected a cuda device, but got: cpu",
        "C10TypeError use_mem_pool(): pool must be a MemPool, not NoneType",
        "2 []",  # a segment on each device, all in the default pool
        "C10TypeError mempool_id must be a tuple of two ints, not [1]",
        "pyc10.cuda OutOfMemoryError True",
        "True",
        "1 0.001",
    ]


def test_external_streams_and_device_of(stub):
    out = run(
        stub,
        """
        import pyc10
        c = pyc10.cuda
        s = c.Stream(1)
        e = c.ExternalStream(s.cuda_stream, device=1)
        print(e.cuda_stream == s.cuda_stream == e.stream_id, e.device, e.query())
        print(e.synchronize(), e == c.ExternalStream(s.cuda_stream, 1), isinstance(e, c.Stream))
        print(c.ExternalStream(s.cuda_stream).device)
        for call in (e.record_event, lambda: e.wait_stream(s), lambda: c.ExternalStream("x")):
            try:
                call()
            except Exception as err:
                print(type(err).__name__, err)
        t = pyc10.zeros(2, device="cuda:1")
        with c.device_of(t):
            print(c.current_device())
        with c.device_of(t.untyped_storage()):
            print(c.current_device())
        with c.device_of(pyc10.zeros(2)):
            print(c.current_device())
        print(c.device_of(t).idx, c.device_of(pyc10.zeros(1)).idx)
        """,
    )
    assert out == [
        "True cuda:1 True",
        "None True True",
        "cuda:0",
        "C10NotImplementedError ExternalStream.record_event: libc10c cannot use a stream it did "
        "not make",
        "C10NotImplementedError ExternalStream.wait_stream: libc10c cannot use a stream it did "
        "not make",
        "C10TypeError ExternalStream(): stream_ptr must be an int, not str",
        "1",
        "1",
        "0",
        "1 -1",
    ]


def test_storage_to_and_from_cuda_as_torchs_to(stub):
    out = run(
        stub,
        """
        import pyc10
        s = pyc10.UntypedStorage([1, 2, 3, 4])
        g = s.to(device="cuda:1")
        print(g.device, g.tolist(), g.to(device="cuda:1") is g, g.new().device)
        h = g.to(device="cpu", non_blocking=True)
        print(h.device, h.tolist(), h.is_pinned(), g.to(device="cpu").is_pinned())
        g.byteswap(pyc10.int16)
        print(g.tolist(), g.type(), g.to(device=pyc10.device("cuda", 0)).device)
        """,
    )
    assert out == [
        "cuda:1 [1, 2, 3, 4] True cuda:1",
        "cpu [1, 2, 3, 4] True False",
        "[2, 1, 4, 3] pyc10.UntypedStorage cuda:0",
    ]


def test_storages_are_made_on_their_device_not_the_current_one(stub):
    # torch.UntypedStorage(n, device="cuda:1") allocates on cuda:1 whatever the current device
    out = run(
        stub,
        """
        import pyc10
        c = pyc10.cuda
        s = pyc10.UntypedStorage(4096, device="cuda:1")
        print(s.device, c.current_device(), c.memory_allocated(0), c.memory_allocated(1))
        t = s.clone()
        print(t.device, c.memory_allocated(1), s.new().device)
        print(pyc10.UntypedStorage([1, 2], device="cuda:1").device)
        try:
            pyc10.UntypedStorage(4, device="cuda:5")
        except RuntimeError as e:
            print(type(e).__name__, e)
        """,
    )
    assert out == [
        "cuda:1 0 0 4096",
        "cuda:1 8192 cuda:1",
        "cuda:1",
        "C10RuntimeError CUDA error: invalid device ordinal",
    ]
