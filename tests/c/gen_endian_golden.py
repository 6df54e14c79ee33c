"""Writes tests/c/endian_golden.h: values computed on a little-endian x86-64 machine that
tests/c/test_endian.c checks the library against on every target (big-endian s390x included).

The oracles are torch 2.13 (every dtype conversion, DLPack's dtype codes and a view's export)
and this script's own reading of the plan file format (struct '<' and FNV-1a written out here);
the plan file's bytes come from the library built natively on this machine (--lib), checked by
that reading before they are kept.

    python tests/c/gen_endian_golden.py --lib build/tests/lib/libc10c.so > tests/c/endian_golden.h

(formatted with clang-format when it is on PATH, as CI checks tests/c/*.h).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import platform
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import warnings

import torch

SMALL = [  # name in C, torch dtype, bytes
    ("FLOAT16", torch.float16, 2),
    ("BFLOAT16", torch.bfloat16, 2),
    ("FLOAT8_E4M3FN", torch.float8_e4m3fn, 1),
    ("FLOAT8_E5M2", torch.float8_e5m2, 1),
    ("FLOAT8_E4M3FNUZ", torch.float8_e4m3fnuz, 1),
    ("FLOAT8_E5M2FNUZ", torch.float8_e5m2fnuz, 1),
    ("FLOAT8_E8M0FNU", torch.float8_e8m0fnu, 1),
]


def fnv1a(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def bits_of(t: torch.Tensor) -> list[int]:
    """The bit patterns of t's elements, as unsigned integers."""
    view = {1: torch.uint8, 2: torch.uint16, 4: torch.uint32, 8: torch.uint64}[t.element_size()]
    return [int(v) & ((1 << (8 * t.element_size())) - 1) for v in t.view(view).tolist()]


def floats(patterns: list[int]) -> torch.Tensor:
    return torch.tensor(patterns, dtype=torch.uint32).view(torch.float32)


def from_float_inputs() -> list[int]:
    """float32 patterns: zeros, subnormals, ties of each format, overflow edges, NaN, random."""
    f = [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.0, 3.0, 0.1, -0.1, 1e-30, 1e30, -1e30]
    f += [65504.0, 65519.0, 65520.0, 65536.0, 2.0**-14, 2.0**-24, 2.0**-25, 3 * 2.0**-26]
    f += [1 + 2.0**-11, 1 + 3 * 2.0**-11, 1 + 2.0**-8, 1 + 3 * 2.0**-8, 1 + 2.0**-4]
    f += [448.0, 464.0, 465.0, 480.0, 240.0, 247.0, 248.0, 256.0, 57344.0, 61439.0, 61440.0]
    f += [2.0**-6, 2.0**-9, 2.0**-10, 3 * 2.0**-10, 2.0**-16, 2.0**-17, 2.0**-127, 2.0**127]
    f += [1.75, 2.5, 3.5, 6.0, 7.0, 0.75]
    out = [struct.unpack("<I", struct.pack("<f", v))[0] for v in f]
    out += [0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF]
    out += [0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FA00000, 0x7F800001]
    out += [0x3F808000, 0x3F818000, 0x3F808001, 0x3F7F8000]  # bfloat16 ties and near-ties
    rng = random.Random(20261129)
    for _ in range(40):  # random magnitudes across the exponent range, both signs
        out.append(rng.getrandbits(1) << 31 | rng.randrange(0x30000000, 0x48000000))
    return out


def emit(lines: list[str], name: str, ctype: str, rows: list[str]) -> None:
    lines.append(f"static const {ctype} {name}[] = {{")
    lines += [f"    {r}," for r in rows]
    lines.append("};")


def plan_file(lib: str) -> tuple[bytes, list[int], int]:
    """A plan file written by the native library, and the offsets and arena it returned."""
    c = ctypes.CDLL(lib)
    n = 5
    sizes = (ctypes.c_uint64 * n)(1 << 20, 3 << 19, 4096, 1 << 21, 512)
    streams = (ctypes.c_int64 * n)(0, 0, 7, 0, 7)
    begins = (ctypes.c_uint64 * n)(0, 1, 2, 3, 4)
    ends = (ctypes.c_uint64 * n)(2, 5, 6, 7, 8)
    offsets = (ctypes.c_uint64 * n)()
    arena = ctypes.c_uint64()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "golden.plan")
        st = c.c10c_plan_make(
            ctypes.byref(arena), offsets, path.encode(), ctypes.c_int32(1), ctypes.c_size_t(n),
            sizes, streams, begins, ends,
        )  # fmt: skip
        if st != 0:
            raise SystemExit(f"c10c_plan_make failed: {st}")
        with open(path, "rb") as fh:
            data = fh.read()
    # the format, read here independently (planner.h): header, 37-byte records, FNV-1a 64
    magic, version, device, nstreams, count, arena_bytes = struct.unpack_from("<8sIiIQQ", data)
    assert (magic, version, device, count) == (b"C10CPLAN", 1, 1, n), (magic, version, count)
    assert arena_bytes == arena.value and nstreams == 2
    records = [struct.unpack_from("<QQQIBQ", data, 36 + 37 * i) for i in range(n)]
    assert sorted(r[0] for r in records) == sorted(sizes)
    assert len(data) == 36 + 37 * n + 8
    assert struct.unpack_from("<Q", data, len(data) - 8)[0] == fnv1a(data[:-8])
    return data, list(offsets), arena.value


def dlpack_of(t: torch.Tensor) -> tuple[int, int, int, int, int]:
    """(code, bits, lanes, byte_offset, data - t's storage start) of torch's legacy export."""
    cap = torch.utils.dlpack.to_dlpack(t)
    api = ctypes.pythonapi
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    p = api.PyCapsule_GetPointer(cap, b"dltensor")
    raw = ctypes.string_at(p, 48)
    data, code, bits, lanes, byte_offset = struct.unpack_from("<Q12xBBH16xQ", raw)
    start = t.untyped_storage().data_ptr()
    result = (code, bits, lanes, byte_offset, data - start)
    del cap  # its deleter frees the export
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True, help="the native build's libc10c.so")
    args = ap.parse_args()
    if sys.byteorder != "little" or platform.machine() not in ("x86_64", "AMD64"):
        raise SystemExit("run this on little-endian x86-64: its values are the reference")
    warnings.filterwarnings("ignore", "ComplexHalf support is experimental")
    lines = [
        "/* Generated by tests/c/gen_endian_golden.py on little-endian x86-64 (torch "
        f"{torch.__version__}): do not",
        " * edit. Values are bit patterns as numbers; byte strings are as written to files. */",
        "#ifndef C10C_ENDIAN_GOLDEN_H",
        "#define C10C_ENDIAN_GOLDEN_H",
        "#include <stdint.h>",
        "",
        '#include "c10c/c10c.h"',
        "",
    ]
    # 1. every pattern of each small format to float32: an FNV-1a 64 over the results' bits,
    # each written as four little-endian bytes; and the patterns' values for a sample
    lines.append(
        "/* dtype, FNV-1a 64 of the float32 bits (little-endian bytes) of every pattern */"
    )
    rows, samples = [], []
    for name, dt, size in SMALL:
        n = 1 << (8 * size)
        pats = torch.arange(n, dtype=torch.int32).to(torch.uint8 if size == 1 else torch.uint16)
        got = bits_of(pats.view(dt).to(torch.float32))
        rows.append(f"{{C10C_DTYPE_{name}, UINT64_C({fnv1a(struct.pack(f'<{n}I', *got)):#x})}}")
        for p in sorted(
            {q % n for q in (0, 1, n // 2 - 1, n // 2, n // 2 + 1, n - 1, 0x3C, 0x3C00, 0x7C01)}
        ):
            samples.append(f"{{C10C_DTYPE_{name}, {p:#x}, {got[p]:#010x}u}}")
    emit(lines, "golden_all_patterns", "struct { c10c_dtype type; uint64_t fnv; }", rows)
    emit(lines, "golden_patterns", "struct { c10c_dtype type; uint32_t pattern, f32; }", samples)

    # 2. float32 to each small format (torch's copy_ kernel), flagged where torch gives a NaN
    ins = from_float_inputs()
    x = floats(ins)
    outs = [bits_of(x.to(dt)) for _, dt, _ in SMALL]
    nans = [x.to(dt).float().isnan().tolist() for _, dt, _ in SMALL]
    rows = []
    for i, v in enumerate(ins):
        mask = sum(1 << k for k in range(len(SMALL)) if nans[k][i])
        rows.append(f"{{{v:#010x}u, {{{', '.join(f'{o[i]:#x}' for o in outs)}}}, {mask:#x}}}")
    lines.append("/* float32 bits -> FLOAT16, BFLOAT16, E4M3FN, E5M2, E4M3FNUZ, E5M2FNUZ, E8M0FNU;")
    lines.append(" * nan: bit k set where torch's result k is a NaN (its payload is the CPU's) */")
    emit(lines, "golden_from_float", "struct { uint32_t in; uint16_t out[7]; unsigned nan; }", rows)

    # 3. float64 to half and bfloat16 (through float, twice rounded, as c10), and to int types
    ds = [1 + 2.0**-11 + 2.0**-40, 1 + 2.0**-9 + 2.0**-40, 1 + 2.0**-8 + 2.0**-30, 0.1, -2.5]
    ds += [1e300, -1e-300, 65519.99, 2.0**31 - 0.5, -(2.0**31), 300.7, -129.5]
    xd = torch.tensor(ds, dtype=torch.float64)
    cols = [torch.float16, torch.bfloat16, torch.int32, torch.int16, torch.uint8, torch.int8]
    outs = [bits_of(xd.to(dt)) for dt in cols]
    rows = []
    for i, v in enumerate(ds):
        rows.append(
            f"{{UINT64_C({struct.unpack('<Q', struct.pack('<d', v))[0]:#x}), "
            f"{{{', '.join(f'{o[i]:#x}' for o in outs)}}}}}"
        )
    lines.append("/* float64 bits -> FLOAT16, BFLOAT16, INT32, INT16, UINT8, INT8 (bits) */")
    emit(lines, "golden_from_double", "struct { uint64_t in; uint32_t out[6]; }", rows)

    # 4. integers between widths, and to float types
    ints = [0, 1, -1, 127, 128, 255, 256, -129, 32767, -32769, 65535, 2**31 - 1, -(2**31)]
    ints += [2**40 + 5, -(2**53) - 1, 2**63 - 1, -(2**63), 0x0123456789ABCDEF, 16777217]
    xi = torch.tensor(ints, dtype=torch.int64)
    cols = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.float32, torch.float16]
    cols += [torch.bfloat16, torch.float64]
    outs = [bits_of(xi.to(dt)) for dt in cols]
    rows = [
        f"{{{'INT64_MIN' if v == -(2**63) else f'INT64_C({v})'}, "
        f"{{{', '.join(f'UINT64_C({o[i]:#x})' for o in outs)}}}}}"
        for i, v in enumerate(ints)
    ]
    lines.append(
        "/* int64 -> INT8, UINT8, INT16, INT32, FLOAT32, FLOAT16, BFLOAT16, FLOAT64 (bits) */"
    )
    emit(lines, "golden_from_int64", "struct { int64_t in; uint64_t out[8]; }", rows)
    # int16 and uint16, int32 sources: the loads of each width
    i16 = [0, 1, -1, 0x1234, -0x1234, 32767, -32768]
    xs = torch.tensor(i16, dtype=torch.int16)
    cols = [torch.int64, torch.float32, torch.uint8]
    outs = [bits_of(xs.to(dt)) for dt in cols]
    rows = [
        f"{{{v}, {{{', '.join(f'UINT64_C({o[i]:#x})' for o in outs)}}}}}" for i, v in enumerate(i16)
    ]
    lines.append("/* int16 -> INT64, FLOAT32, UINT8 (bits) */")
    emit(lines, "golden_from_int16", "struct { int16_t in; uint64_t out[3]; }", rows)

    # 5. float32 to integers and bool (x86's truncation; NaN and out of range as torch's)
    fi = [0.0, -0.0, 0.9, -0.9, 1.5, -1.5, 127.9, 128.0, 255.5, 256.0, -129.0, 65535.0, 70000.5]
    fi += [2.0**31, -(2.0**31), 1e10, -1e10, float("inf"), float("-inf"), float("nan"), 2.0**-149]
    xf = torch.tensor(fi, dtype=torch.float32)
    cols = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool]
    outs = [bits_of(xf.to(dt)) for dt in cols]
    rows = [
        f"{{{bits_of(xf[i : i + 1])[0]:#010x}u, "
        f"{{{', '.join(f'UINT64_C({o[i]:#x})' for o in outs)}}}}}"
        for i in range(len(fi))
    ]
    lines.append("/* float32 bits -> INT8, UINT8, INT16, INT32, INT64, BOOL (bits) */")
    emit(lines, "golden_float_to_int", "struct { uint32_t in; uint64_t out[6]; }", rows)

    # 6. complex: parts in order (real first), complex32's halves, to bool and to real
    zs = [1 + 2j, -0.5 + 0.25j, 0j, 3e-8 - 7e5j, 65520 + 1j, complex(float("inf"), -1)]
    xc = torch.tensor(zs, dtype=torch.complex64)
    c32 = bits_of(xc.to(torch.complex32).view(torch.float16))
    c128 = bits_of(xc.to(torch.complex128).view(torch.float64))
    back = bits_of(xc.to(torch.complex32).to(torch.complex64).view(torch.float32))
    re32 = bits_of(xc.real.contiguous())
    im32 = bits_of(xc.imag.contiguous())
    to_bool = bits_of(xc.to(torch.bool))
    to_half = bits_of(xc.real.to(torch.float16))
    rows = [
        f"{{{{{re32[i]:#010x}u, {im32[i]:#010x}u}}, {{{c32[2 * i]:#x}, {c32[2 * i + 1]:#x}}}, "
        f"{{UINT64_C({c128[2 * i]:#x}), UINT64_C({c128[2 * i + 1]:#x})}}, {to_bool[i]}, "
        f"{to_half[i]:#x}, {{{back[2 * i]:#010x}u, {back[2 * i + 1]:#010x}u}}}}"
        for i in range(len(zs))
    ]
    lines.append(
        "/* complex64 (re, im bits) -> COMPLEX32 halves, COMPLEX128 bits, BOOL, FLOAT16; the"
    )
    lines.append(" * COMPLEX32 back to COMPLEX64 */")
    emit(
        lines,
        "golden_complex",
        "struct { uint32_t in[2]; uint16_t c32[2]; uint64_t c128[2]; uint8_t b; uint16_t h;"
        " uint32_t back[2]; }",
        rows,
    )

    # 7. DLPack: torch's (code, bits, lanes) for every dtype both export, and a view's offset
    names = ["BOOL", "UINT8", "INT8", "INT16", "UINT16", "INT32", "UINT32", "INT64", "UINT64"]
    names += ["FLOAT16", "BFLOAT16", "FLOAT32", "FLOAT64", "COMPLEX32", "COMPLEX64", "COMPLEX128"]
    names += [n for n, _, _ in SMALL[2:]] + ["FLOAT4_E2M1FN_X2"]
    rows = []
    for n in names:
        code, bits, lanes, _, _ = dlpack_of(torch.zeros(4, dtype=getattr(torch, n.lower())))
        rows.append(f"{{C10C_DTYPE_{n}, {code}, {bits}, {lanes}}}")
    lines.append("/* dtype -> torch's DLPack (code, bits, lanes) */")
    emit(
        lines,
        "golden_dlpack",
        "struct { c10c_dtype type; uint8_t code, bits; uint16_t lanes; }",
        rows,
    )
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    code, bits, lanes, byte_offset, data_off = dlpack_of(base[1:, 2::2])
    lines.append("/* a float32 (4, 6) tensor's [1:, 2::2] exported: byte_offset, data - storage */")
    lines.append(f"static const uint64_t golden_dlpack_view[2] = {{{byte_offset}, {data_off}}};")

    # 8. the plan file
    data, offsets, arena = plan_file(args.lib)
    lines.append(
        "/* c10c_plan_make(device 1; sizes 1 MiB, 1.5 MiB, 4 KiB, 2 MiB, 512; streams 0 0 7 0"
    )
    lines.append(" * 7; begins 0..4; ends 2 5 6 7 8): its file's bytes, offsets and arena */")
    emit(
        lines,
        "golden_plan_file",
        "uint8_t",
        [", ".join(f"{b:#04x}" for b in data[i : i + 12]) for i in range(0, len(data), 12)],
    )
    lines.append(
        f"static const uint64_t golden_plan_offsets[] = {{{', '.join(map(str, offsets))}}};"
    )
    lines.append(f"static const uint64_t golden_plan_arena = {arena};")
    lines.append(f"static const uint64_t golden_plan_fnv = UINT64_C({fnv1a(data[:-8]):#x});")
    lines += ["", "#endif /* C10C_ENDIAN_GOLDEN_H */"]
    text = "\n".join(lines) + "\n"
    if shutil.which("clang-format"):  # the repository's style (CI checks tests/c/*.h)
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        text = subprocess.run(
            ["clang-format", "--assume-filename=tests/c/endian_golden.h"],
            input=text, capture_output=True, text=True, check=True, cwd=root,
        ).stdout  # fmt: skip
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
