"""Tensors through real Ray and Dask clusters started here: zero-copy reads and view-sized sends.

Ray (``ray.init(num_cpus=2)``): a 1 GiB tensor put into the object store is read by a task in a
worker process straight from the store's shared mapping (its data address lies in that mapping
of the worker's /proc/<pid>/maps and the worker's RSS barely grows), and ``ray.get`` gives it
back. Dask (``distributed.LocalCluster(processes=True, n_workers=2)``): tensors go to worker
processes and back, a 1 GiB tensor is serialized as its own bytes and deserialized by wrapping
them (a worker's peak RSS stays under two copies), and a 10-element view of a large tensor sends
its 40 bytes, as numpy and torch do. Skipped, with the reason, when ray or distributed is not
installed.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import pyc10

pytestmark = pytest.mark.cluster

GIB = 1 << 30


@pytest.fixture(scope="module")
def ray() -> Iterator[Any]:
    ray = pytest.importorskip("ray", reason="ray is not installed (pip install ray)")
    ray.init(
        num_cpus=2,
        object_store_memory=2 * GIB + (256 << 20),
        include_dashboard=False,
        log_to_driver=False,
    )
    try:
        yield ray
    finally:
        ray.shutdown()


def test_a_ray_task_reads_a_1gib_tensor_in_the_object_store_without_a_copy(ray: Any) -> None:
    t = pyc10.empty(GIB // 4, dtype=pyc10.float32)
    t[0], t[12345], t[-1] = 1.5, 2.5, 3.5
    ref = ray.put(t)
    del t

    # functions the workers run are defined in the tests (cloudpickle sends them by value: the
    # workers cannot import this file)
    @ray.remote
    def probe(refs: list[Any]) -> dict[str, Any]:
        def rss() -> int:
            with open("/proc/self/status") as f:
                return next(int(s.split()[1]) * 1024 for s in f if s.startswith("VmRSS:"))

        before = rss()
        x = ray.get(refs[0])  # deserialized here, between the two readings
        after = rss()
        ptr = x.data_ptr()
        mapping = ""
        with open(f"/proc/{os.getpid()}/maps") as f:
            for line in f:
                lo, hi = (int(a, 16) for a in line.split()[0].split("-"))
                if lo <= ptr and ptr + x.nbytes <= hi:
                    mapping = line.split(maxsplit=5)[-1].strip()
        try:
            x[1] = 0.0
            writable = True
        except RuntimeError:
            writable = False
        return {
            "pid": os.getpid(),
            "mapping": mapping,
            "growth": after - before,
            "values": (x[0].item(), x[12345].item(), x[-1].item()),
            "shape": tuple(x.shape),
            "writable": writable,
        }

    seen = ray.get(probe.remote([ref]))
    assert seen["pid"] != os.getpid()
    assert "plasma" in seen["mapping"], seen["mapping"]  # Ray's shared object-store mapping
    assert seen["growth"] < GIB // 20, seen["growth"]
    assert seen["values"] == (1.5, 2.5, 3.5)
    assert seen["shape"] == (GIB // 4,)
    assert seen["writable"] is False  # the store's memory is shared read-only, as numpy's is

    back = ray.get(ref)
    assert back.shape == (GIB // 4,) and back.dtype == pyc10.float32
    assert (back[0].item(), back[-1].item()) == (1.5, 3.5)
    with pytest.raises(RuntimeError, match="read-only"):
        back[0] = 0.0
    del back, ref


def test_a_view_through_ray_keeps_its_values_and_geometry(ray: Any) -> None:
    big = pyc10.arange(1 << 20, dtype=pyc10.int64)
    view = big.view(1024, 1024)[3:5, 10:14]

    @ray.remote
    def echo(x: Any) -> Any:
        return x, x.untyped_storage().nbytes()

    back, nbytes = ray.get(echo.remote(view))
    assert back.tolist() == view.tolist()
    assert back.stride() == view.stride() and back.storage_offset() == view.storage_offset()
    assert nbytes == big.nbytes


@pytest.fixture(scope="module")
def dask_client() -> Iterator[Any]:
    distributed = pytest.importorskip(
        "distributed", reason="distributed is not installed (pip install distributed)"
    )
    with (
        distributed.LocalCluster(
            processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def test_dask_workers_receive_tensors_and_send_them_back(dask_client: Any) -> None:
    t = pyc10.arange(60, dtype=pyc10.float64).view(3, 4, 5)
    out = dask_client.submit(operator.getitem, t, (slice(None), 1)).result()
    assert out.tolist() == t[:, 1].tolist()
    assert out.stride() == t[:, 1].stride()

    def where(x: Any) -> tuple[int, list[Any]]:
        return os.getpid(), x.tolist()

    pid, values = dask_client.submit(where, t).result()
    assert pid != os.getpid() and values == t.tolist()
    # tensors that share a storage still share it on the worker
    a = pyc10.arange(8, dtype=pyc10.int32)

    def shared(pair: list[Any]) -> bool:
        first, second = pair
        first[3] = 100
        return bool(second.tolist() == [2, 100, 4])

    assert dask_client.submit(shared, [a, a[2:5]]).result() is True
    assert a[3].item() == 3  # the worker wrote its own copy


def test_dask_sends_a_view_of_a_large_tensor_as_its_elements_only() -> None:
    protocol = pytest.importorskip("distributed.protocol", reason="distributed is not installed")
    torch = pytest.importorskip("torch")
    n = (100 << 20) // 4
    sent = {}
    for name, big in [
        ("pyc10", pyc10.zeros(n, dtype=pyc10.float32)),
        ("torch", torch.zeros(n, dtype=torch.float32)),
        ("numpy", np.zeros(n, dtype=np.float32)),
    ]:
        header, frames = protocol.serialize(big[10:20])
        sizes = [memoryview(f).nbytes for f in frames]
        sent[name] = sizes
        # distributed's whole message, as it goes on the wire
        wire = protocol.dumps({"x": protocol.to_serialize(big[10:20])})
        assert sum(memoryview(f).nbytes for f in wire) < 1000, name
    assert 40 in sent["pyc10"] and sum(sent["pyc10"]) < 400, sent
    assert 40 in sent["numpy"] and 40 in sent["torch"]
    header, frames = protocol.serialize(pyc10.zeros(n, dtype=pyc10.float32)[10:20])
    back = protocol.deserialize(header, frames)
    assert back.tolist() == [0.0] * 10 and back.storage_offset() == 10


def _address(frame: Any) -> int:
    """The first byte's address of a frame (a buffer), read through numpy."""
    return int(np.frombuffer(frame, dtype=np.uint8).__array_interface__["data"][0])


def test_dask_moves_a_1gib_tensor_without_copying_it(dask_client: Any) -> None:
    protocol = pytest.importorskip("distributed.protocol", reason="distributed is not installed")
    t = pyc10.empty(GIB // 4, dtype=pyc10.float32)
    t[0], t[12345], t[-1] = 1.5, 2.5, 3.5
    # serializing hands the tensor's own bytes over as a frame, and deserializing wraps a frame
    header, frames = protocol.serialize(t)
    big = [f for f in frames if memoryview(f).nbytes == GIB]
    assert len(big) == 1 and sum(memoryview(f).nbytes for f in frames) < GIB + 1000
    assert _address(big[0]) == t.data_ptr()
    back = protocol.deserialize(header, frames)
    assert back.data_ptr() == t.data_ptr() and back[12345].item() == 2.5

    def probe(x: Any) -> tuple[int, list[float], int]:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        return os.getpid(), [x[0].item(), x[12345].item(), x[-1].item()], peak

    def peak_rss() -> int:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    # a round trip through a worker process: the 1 GiB arrives once (the socket's bytes, wrapped),
    # never copied again on the worker, so its peak RSS stays well under two copies
    before = dask_client.run(peak_rss)
    [future] = dask_client.scatter([t], hash=False)
    pid, values, peak = dask_client.submit(probe, future).result()
    assert pid != os.getpid() and values == [1.5, 2.5, 3.5]
    assert peak - min(before.values()) < GIB + GIB // 2, (peak, before)
    # and back to the client
    out = future.result()
    assert out.shape == t.shape and out[-1].item() == 3.5
    del future, out, back, t
