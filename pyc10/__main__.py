"""``python -m pyc10``: a short tour of what libc10c and pyc10 do so far."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

import pyc10


class _Parser(argparse.ArgumentParser):
    """argparse, with a bad option reported in one line (then exit status 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = _Parser(
        prog="python -m pyc10",
        description="Prints a short tour of what libc10c and pyc10 do: dtypes, devices, "
        "dispatch keys, storages and the CPU allocator, tensors and their views, dtype "
        "conversions, DLPack and pickling, CUDA. It needs no GPU and changes nothing.",
        epilog="Replaying a PyTorch memory snapshot: python -m pyc10.replay --help. "
        "Flags for C code built against the bundled libc10c: pyc10-config --help.",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"pyc10 {pyc10.__version__} (libc10c ABI "
        f"{pyc10.abi_version[0]}.{pyc10.abi_version[1]})",
    )
    return parser.parse_args(argv)


def _run(argv: Sequence[str] | None = None) -> int:
    """``python -m pyc10 [--help | --version]``: the tour; a closed pipe ends it quietly."""
    _parse(argv)
    try:
        main()
        sys.stdout.flush()  # inside the try: a reader that went away is met here, not at exit
    except BrokenPipeError:
        # `python -m pyc10 | head`: the reader closed the pipe. Nothing more can be shown, and
        # Python would otherwise report the failed flush of stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return 0


def _section(title: str) -> None:
    print(f"\n== {title}")


def main() -> None:
    """Print the tour."""
    print(
        f"pyc10 {pyc10.__version__} over libc10c "
        f"(ABI {pyc10.abi_version[0]}.{pyc10.abi_version[1]})"
    )
    print(f"library: {pyc10.get_library_path()}")

    _section("dtypes: c10's ScalarType numbers, torch's names")
    for d in (
        pyc10.bool,
        pyc10.uint8,
        pyc10.int64,
        pyc10.bfloat16,
        pyc10.float32,
        pyc10.complex64,
        pyc10.float8_e4m3fn,
    ):
        print(
            f"  {d!r:22} value={d.value:2} itemsize={d.itemsize} "
            f"floating={d.is_floating_point} complex={d.is_complex}"
        )
    print(f"  pyc10.float is pyc10.float32: {pyc10.float is pyc10.float32}")
    print(f"  as numpy: {pyc10.float16.to_numpy()!r}, from numpy: {pyc10.dtype.from_numpy('i2')!r}")

    _section("type promotion (torch.promote_types)")
    for a, b in (
        (pyc10.uint8, pyc10.int8),
        (pyc10.int64, pyc10.float16),
        (pyc10.bfloat16, pyc10.float16),
        (pyc10.complex32, pyc10.float64),
    ):
        print(f"  promote_types({a!r}, {b!r}) = {pyc10.promote_types(a, b)!r}")
    try:
        pyc10.promote_types(pyc10.uint16, pyc10.int32)
    except RuntimeError as e:
        print(f"  uint16 with int32 -> {type(e).__name__}: {e}")

    _section("devices (torch.device's grammar and messages)")
    for s in ("cpu", "cuda:1", "meta", "privateuseone:0"):
        dev = pyc10.device(s)
        print(f"  device({s!r:18}) -> {dev!r}  str={str(dev)!r}")
    for bad in ("cuda:01", "gpu", "cuda:128"):
        try:
            pyc10.device(bad)
        except RuntimeError as e:
            print(f"  device({bad!r}) -> RuntimeError: {e}")

    _section("layouts and memory formats")
    print(f"  {pyc10.strided!r}, {pyc10.sparse_coo!r}, {pyc10.sparse_csr!r}, {pyc10.jagged!r}")
    print(f"  {pyc10.contiguous_format!r}, {pyc10.channels_last!r}, {pyc10.channels_last_3d!r}")

    _section("dispatch keys (c10's bit layout)")
    cpu = pyc10.DispatchKeySet.for_tensor("cpu")
    print(f"  new CPU tensor:        {cpu}  raw={cpu.raw:#x}")
    print(f"  highest priority key:  {cpu.highest_priority_key().name}")
    print(f"  inference mode:        {pyc10.DispatchKeySet.for_tensor('cpu', inference_mode=True)}")
    print(f"  meta tensor:           {pyc10.DispatchKeySet.for_tensor('meta')}")
    print(f"  sparse CUDA tensor:    {pyc10.DispatchKeySet.for_tensor('cuda', pyc10.sparse_coo)}")
    ks = pyc10.DispatchKeySet("CPU", "AutogradCUDA")
    print(f"  {{CPU, AutogradCUDA}} is a cross product: {ks}")
    print(f"  ... remove(CPU) keeps backend bits: {ks.remove('CPU')}")
    print(
        "  alias Autograd expands to "
        f"{len(pyc10.DispatchKeySet.from_alias('Autograd'))} runtime keys"
    )
    _memory_tour()
    _tensor_tour()
    _exchange_tour()
    _section("CUDA (loaded at run time; C10C_CUDA_DRIVER names another driver library)")
    if pyc10.cuda.is_available():
        names = [pyc10.cuda.get_device_name(i) for i in range(pyc10.cuda.device_count())]
        print(f"  {pyc10.cuda.device_count()} device(s): {names}")
    else:
        print(f"  not available here: {pyc10.cuda._unavailable_reason()}")
        print(
            "  (the test suite drives the CUDA code through a stand-in driver, and "
            "bench/run_replay.py replays training traces through the caching allocator)"
        )


def _memory_tour() -> None:
    _section("storages and the caching CPU allocator")
    before = pyc10.memory.stats()
    small = pyc10.UntypedStorage(100)
    large = pyc10.UntypedStorage(3 << 20)
    print(
        f"  UntypedStorage(100):     nbytes={small.nbytes()} aligned64={small.data_ptr() % 64 == 0}"
    )
    print(
        f"  UntypedStorage(3 MiB):   2 MiB-aligned={large.data_ptr() % (2 << 20) == 0} "
        "(transparent huge pages)"
    )
    large.resize_(4 << 20)
    print(f"  resize_(4 MiB):          nbytes={large.nbytes()}, first bytes kept")
    now = pyc10.memory.stats()
    print(
        f"  allocations live: {now['allocation.all.current'] - before['allocation.all.current']}"
        f", bytes allocated: {now['allocated_bytes.all.current']}"
        f", reserved: {now['reserved_bytes.all.current']}"
    )
    del small, large
    again = pyc10.UntypedStorage(4 << 20)
    hits = pyc10.memory.stats()["num_device_alloc"] - now["num_device_alloc"]
    print(f"  a freed 4 MiB block is reused: new system allocations = {hits}")
    del again
    try:
        pyc10.UntypedStorage(1 << 50)
    except MemoryError as e:
        print(f"  UntypedStorage(2**50) -> MemoryError: {str(e)[:88]}...")
    print("  pyc10.memory.summary() prints torch's memory_summary table:")
    for line in pyc10.memory.summary().splitlines()[6:10]:
        print("    " + line)


def _tensor_tour() -> None:
    _section("tensors: creation and metadata")
    t = pyc10.empty(2, 3, 4, 5)
    c = pyc10.empty(2, 3, 4, 5, memory_format=pyc10.channels_last)
    print(f"  empty(2, 3, 4, 5):              shape={t.shape} stride={t.stride()}")
    print(f"  ... memory_format=channels_last: stride={c.stride()}")
    print(
        f"      contiguous={c.is_contiguous()} "
        f"channels_last_contiguous={c.is_contiguous(memory_format=pyc10.channels_last)}"
    )
    s = pyc10.empty_strided((4, 3), (1, 4))
    print(
        f"  empty_strided((4, 3), (1, 4)):  contiguous={s.is_contiguous()} "
        f"non_overlapping_and_dense={s._is_non_overlapping_and_dense()}"
    )
    print(f"  keys of a new tensor: {t._dispatch_keys()}, version {t._version}")

    _section("views share memory; copies do not")
    import numpy as np

    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = pyc10.from_numpy(a)  # zero-copy: x and a are the same bytes
    v = x.t()[1:, ::2]
    print("  x = from_numpy(arange(12).reshape(3, 4)); v = x.t()[1:, ::2]")
    print(f"  v: shape={v.shape} stride={v.stride()} offset={v.storage_offset()}")
    print("     " + repr(v).replace("\n", "\n     "))
    print(f"     contiguous={v.is_contiguous()}, values={v.tolist()}")
    v[0, 0] = 100.0
    print(f"  v[0, 0] = 100  ->  a[0, 1] = {a[0, 1]} (same memory), x._version = {x._version}")
    c2 = v.contiguous()
    print(f"  v.contiguous(): stride={c2.stride()}, shares memory: {c2.data_ptr() == v.data_ptr()}")
    r = x.t().reshape(12)
    print(f"  x.t().reshape(12) must copy: shares memory = {r.data_ptr() == x.data_ptr()}")
    print(
        f"  x.view(2, 6) is a view:      shares memory = {x.view(2, 6).data_ptr() == x.data_ptr()}"
    )
    print(f"  x.unfold(1, 2, 2).shape = {x.unfold(1, 2, 2).shape}")
    print(f"  x.diagonal() = {x.diagonal().tolist()}")
    try:
        x.t().view(12)
    except RuntimeError as e:
        print(f"  x.t().view(12) -> RuntimeError: {str(e)[:60]}...")
    z = pyc10.zeros(2, 3)
    z[:, 1:] = pyc10.full((2,), 7.0).unsqueeze(1)
    print(f"  zeros(2, 3) with z[:, 1:] = full((2,), 7).unsqueeze(1): {z.numpy().tolist()}")
    _section("conversions between dtypes (c10's casts, bit for bit as torch)")
    f = pyc10.zeros(4)
    for i, value in enumerate((0.1, 300.7, 1e6, -2.5)):
        f[i] = value
    print(f"  f = {f.tolist()}")
    print(f"  f.half()       = {f.half().tolist()}")
    print(f"  f.bfloat16()   = {f.bfloat16().tolist()}")
    e4m3 = f.to(pyc10.float8_e4m3fn).tolist()
    print(f"  f.to(float8_e4m3fn) = {e4m3}  (saturates at 448, as torch 2.13)")
    print(f"  f.int()        = {f.int().tolist()},  f.byte() = {f.byte().tolist()}")


def _exchange_tour() -> None:
    _section("exchange: DLPack with numpy (and torch), zero-copy; pickling")
    import pickle

    import numpy as np

    t = pyc10.zeros(2, 3)
    a = np.from_dlpack(t)  # numpy reads pyc10's memory through t.__dlpack__()
    a[1, 2] = 42.0
    print(f"  a = np.from_dlpack(zeros(2, 3)); a[1, 2] = 42  ->  t[1, 2] = {t[1, 2].item()}")
    print(f"  same memory: {a.ctypes.data == t.data_ptr()}, device {t.__dlpack_device__()}")
    b = np.arange(6.0).reshape(2, 3)[:, ::2]
    u = pyc10.from_dlpack(b)  # and pyc10 reads numpy's, strides and all
    print(
        f"  pyc10.from_dlpack(numpy view): shape={u.shape} stride={u.stride()} "
        f"same memory: {u.data_ptr() == b.ctypes.data}"
    )
    capsule = t.__dlpack__(max_version=(1, 0))
    name = repr(capsule).split(" at ")[0] + ">"
    print(f"  t.__dlpack__(max_version=(1, 0)) -> {name}")
    pyc10.from_dlpack(capsule)
    print(f"  once consumed the capsule is renamed: {repr(capsule).split(' at ')[0]}>")
    frozen = np.arange(3.0)
    frozen.flags.writeable = False
    r = pyc10.from_dlpack(frozen)
    try:
        r.fill_(1.0)
    except RuntimeError as e:
        print(f"  a read-only numpy array stays read-only: fill_ -> {str(e)[:40]}...")
    views = pickle.loads(pickle.dumps([t, t[1]]))
    views[1].fill_(7.0)
    print(
        f"  pickle keeps shared storage shared: after loaded[1].fill_(7), loaded[0] = "
        f"{views[0].tolist()}"
    )


if __name__ == "__main__":
    sys.exit(_run())
