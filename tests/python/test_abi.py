"""The Python binding against the C ABI: every exported function is bound, every struct has the
header's layout, only c10c_ symbols are exported, and a mismatched library fails the import."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import pyc10
from pyc10._lib import ffi, lib

ROOT = Path(__file__).resolve().parents[2]
HEADERS = sorted((ROOT / "include" / "c10c").glob("*.h"))


def declared_functions() -> set[str]:
    names = set()
    for h in HEADERS:
        text = h.read_text()
        names |= set(re.findall(r"C10C_API[^;(]*?\b(c10c_\w+)\s*\(", text, re.S))
    return names


def exported_symbols(path: str) -> dict[str, str]:
    """name -> version node of every symbol the library defines (readelf), nodes left out."""
    out = subprocess.run(
        ["readelf", "-W", "--dyn-syms", path], check=True, capture_output=True, text=True
    ).stdout
    found = {}
    for line in out.splitlines():
        f = line.split()
        # (aarch64's linker also puts LOCAL section symbols, .init and .data, in .dynsym)
        if len(f) >= 8 and f[0].rstrip(":").isdigit() and f[6] not in ("UND", "ABS"):
            if f[4] == "LOCAL":
                continue
            name, _, version = f[7].replace("@@", "@").partition("@")
            found[name] = version
    return found


def map_nodes() -> dict[str, str]:
    """name -> version node of lib/libc10c.map."""
    text = re.sub(r"/\*.*?\*/", "", (ROOT / "lib" / "libc10c.map").read_text(), flags=re.S)
    listed = {}
    for node, body in re.findall(r"([\w.]+)\s*\{(.*?)\}", text, re.S):
        globs = body.split("local:")[0].replace("global:", "")
        listed |= {n.strip(): node for n in globs.split(";") if n.strip()}
    return listed


def test_exported_symbols_are_the_declared_functions_in_the_maps_nodes():
    exported = exported_symbols(pyc10.get_library_path())
    assert set(exported) == declared_functions()
    assert exported == map_nodes()
    assert all(n.startswith("c10c_") and not n.startswith("c10c__") for n in exported)


def test_every_struct_has_the_headers_layout():
    # cffi checks a struct's layout against the C compiler's when the type is first used.
    structs = ffi.list_types()[0]
    names = [n for n in structs if n.startswith("c10c_")] + [
        "struct " + n for n in ffi.list_types()[1] if n.startswith("c10c_")
    ]
    assert {
        "c10c_device",
        "c10c_stream",
        "c10c_dispatch_key_set",
        "c10c_abi_info",
        "c10c_data_ptr",
        "c10c_memory_stats",
        "c10c_allocator_vtable",
    } <= set(names)
    opaque = set()
    for n in names:
        try:
            assert ffi.sizeof(n) > 0
        except ffi.error:
            opaque.add(n)
    # handles whose layout the ABI keeps private
    assert opaque == {
        "c10c_allocator",
        "struct c10c_allocator",
        "c10c_storage",
        "struct c10c_storage",
        "c10c_weak_storage",
        "struct c10c_weak_storage",
        "c10c_tensor",
        "struct c10c_tensor",
        "c10c_cuda_event",
        "struct c10c_cuda_event",
        "c10c_sim_device",
        "struct c10c_sim_device",
    }
    # 88 bytes in ABI 1.0 (up to capacity); 1.1 appended nine int64 fields (planning, stitching,
    # plan_declines)
    assert ffi.offsetof("c10c_sim_device_stats", "capacity") == 80
    assert ffi.sizeof("c10c_sim_device_stats") == 160
    assert ffi.sizeof("c10c_data_ptr") == 32
    assert ffi.sizeof("c10c_stat") == 32
    assert ffi.sizeof("c10c_device") == 2
    assert ffi.sizeof("c10c_stream") == 16
    assert ffi.offsetof("c10c_stream", "id") == 8


def test_versions():
    assert pyc10.__version__ == "1.1.0"
    assert pyc10.abi_version == (1, 2)
    assert lib.c10c_abi_version() == lib.C10C_ABI_VERSION


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_import_fails_cleanly_against_a_mismatched_library(tmp_path):
    # A stand-in libc10c whose ABI check refuses every caller, preloaded ahead of the real one.
    src = tmp_path / "fake.c"
    src.write_text(
        textwrap.dedent("""
        #include <stdint.h>
        typedef struct { uint32_t struct_size, abi_version; } info;
        __attribute__((visibility("default"))) int32_t c10c_abi_check(const info *i) {
          (void)i; return -11;
        }
        __attribute__((visibility("default"))) const char *c10c_last_error_message(void) {
          return "libc10c ABI mismatch: the caller was compiled against ABI 1.0, the loaded "
                 "library (release 9.0.0) provides ABI 2.0";
        }
    """)
    )
    lib_path = tmp_path / "libfake.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib_path), str(src)], check=True)
    env = dict(os.environ, LD_PRELOAD=str(lib_path))
    proc = subprocess.run(
        [sys.executable, "-c", "import pyc10"],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode != 0
    assert "ImportError: pyc10 cannot use the loaded libc10c: libc10c ABI mismatch" in proc.stderr


def test_ctypes_can_use_the_bundled_library():
    import ctypes

    lib_c = ctypes.CDLL(pyc10.get_library_path())
    promote = lib_c.c10c_promote_types
    promote.argtypes = [ctypes.POINTER(ctypes.c_int8), ctypes.c_int8, ctypes.c_int8]
    promote.restype = ctypes.c_int32
    out = ctypes.c_int8()
    assert promote(ctypes.byref(out), pyc10.int64.value, pyc10.float16.value) == 0
    assert out.value == pyc10.float16.value
    message = lib_c.c10c_last_error_message
    message.restype = ctypes.c_char_p
    assert promote(ctypes.byref(out), pyc10.qint8.value, pyc10.float32.value) != 0
    assert message().decode().startswith("promoteTypes with quantized numbers")


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_c_program_builds_against_the_wheels_headers_and_library(tmp_path):
    src = tmp_path / "main.c"
    src.write_text(
        textwrap.dedent("""
        #include <stdio.h>
        #include <c10c/c10c.h>
        int main(void) {
          c10c_abi_info info = C10C_ABI_INFO_INIT;
          if (c10c_abi_check(&info) != C10C_STATUS_OK) return 1;
          c10c_storage *s;
          if (c10c_storage_new(&s, 10, NULL, C10C_DEVICE_TYPE_CPU, true)) return 2;
          printf("%lld\\n", (long long)c10c_storage_nbytes(s));
          c10c_storage_release(s);
          return 0;
        }
    """)
    )
    exe = tmp_path / "main"
    lib_path = pyc10.get_library_path()
    subprocess.run(
        [
            "cc",
            "-std=c11",
            "-Wall",
            "-Werror",
            str(src),
            "-I",
            pyc10.get_include(),
            lib_path,
            f"-Wl,-rpath,{os.path.dirname(lib_path)}",
            "-o",
            str(exe),
        ],
        check=True,
    )
    assert (
        subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.strip()
        == "10"
    )


def test_thread_locals_fit_the_static_tls_reserve_for_dlopen():
    """libc10c reads its hottest thread-locals with the initial-exec TLS model, so its whole TLS
    block must fit the static reserve glibc keeps for libraries loaded with dlopen (pyc10 loads
    it that way; the reserve is shared with every other such library and is ~1.6 KiB by
    default). A 512-byte array once made a fresh interpreter fail to import pyc10 ("cannot
    allocate memory in static TLS block"): keep the block small."""
    import struct

    with open(pyc10.get_library_path(), "rb") as f:
        data = f.read()
    assert data[:4] == b"\x7fELF" and data[4] == 2  # 64-bit
    (phoff,) = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    tls = [
        struct.unpack_from("<Q", data, phoff + i * phentsize + 0x28)[0]  # p_memsz
        for i in range(phnum)
        if struct.unpack_from("<I", data, phoff + i * phentsize)[0] == 7  # PT_TLS
    ]
    assert tls and tls[0] <= 1152, f"libc10c's TLS block is {tls[0]} bytes"


def _preprocessed_header() -> str:
    """The public header as FFI parsers read it: preprocessed with -DC10C_CDEF (no system headers,
    no attributes, no macros), as pyc10's own build makes its cdef."""
    return subprocess.run(
        ["cc", "-E", "-P", "-DC10C_CDEF", "-I", pyc10.get_include(), "-"],
        input="#include <c10c/c10c.h>\n",
        check=True,
        capture_output=True,
        text=True,
    ).stdout


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C preprocessor")
def test_cffi_abi_mode_checks_the_abi_from_the_preprocessed_header_alone():
    """A binding with no C compiler (cffi's ABI mode; ctypes, LuaJIT or koffi declared the same
    way) reads the ABI version and the DLPack flags from enum constants, which survive the
    preprocessing that drops C10C_ABI_VERSION, C10C_ABI_INFO_INIT and DLPack's macros, and fills
    c10c_abi_info from its own declarations: the check then passes against the library."""
    import cffi

    text = _preprocessed_header()
    assert "C10C_ABI_VERSION_VALUE" in text and "C10C_ABI_INFO_INIT" not in text
    abi = cffi.FFI()
    abi.cdef(text)
    clib = abi.dlopen(pyc10.get_library_path())
    assert clib.C10C_ABI_VERSION_VALUE == (
        clib.C10C_ABI_VERSION_MAJOR_VALUE << 16 | clib.C10C_ABI_VERSION_MINOR_VALUE
    )
    assert clib.C10C_ABI_VERSION_VALUE == clib.c10c_abi_version()
    assert clib.C10C_VERSION_NUMBER_VALUE == clib.c10c_version_number()
    fields = {
        "struct_size": abi.sizeof("c10c_abi_info"),
        "abi_version": clib.C10C_ABI_VERSION_VALUE,
    }
    for name, _ in abi.typeof("c10c_abi_info").fields[2:]:
        fields[name] = abi.sizeof("c10c_" + name.removeprefix("sizeof_"))
    info = abi.new("c10c_abi_info *", fields)
    assert clib.c10c_abi_check(info) == clib.C10C_STATUS_OK
    # a caller that claims a newer minor than the library has is refused, with the reason
    info.abi_version = clib.C10C_ABI_VERSION_VALUE + 1
    assert clib.c10c_abi_check(info) == clib.C10C_STATUS_ABI_MISMATCH
    assert b"ABI" in abi.string(clib.c10c_last_error_message())
    # DLPack's flags, as the macros of dlpack.h have them
    assert clib.C10C_DLPACK_FLAG_BITMASK_READ_ONLY == 1 << 0
    assert clib.C10C_DLPACK_FLAG_BITMASK_IS_COPIED == 1 << 1
    assert clib.C10C_DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED == 1 << 2
    # the constants agree with the ones pyc10's compiled extension took from the C header
    assert clib.C10C_ABI_VERSION_VALUE == lib.C10C_ABI_VERSION
    assert abi.sizeof("c10c_cuda_device_guard") == ffi.sizeof("c10c_cuda_device_guard")
