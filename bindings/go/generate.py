#!/usr/bin/env python3
"""Generates the Go binding's low-level layer, raw/raw_gen.go, from abi/api.json.

    python generate.py           # writes raw/raw_gen.go
    python generate.py --check   # exits 1 when raw/raw_gen.go is stale

What it writes (package raw, cgo):

* one Go constant per enum value and constant macro of api.json, spelled as in C
  (``C10C_DTYPE_FLOAT32``; DLPack's ``kDLCPU`` becomes ``KDLCPU`` so that it is exported);
* one Go type per typedef (``Dtype int8``, ``Status int32``, ``Deleter unsafe.Pointer``, ...),
  per opaque handle (``Tensor``: only used behind a pointer) and per struct (a Go mirror with the
  C layout, exported CamelCase fields; the layout is checked at compile time against the C
  compiler's sizeof/offsetof);
* one Go function per C function (all of them), named in CamelCase without the ``c10c_`` prefix
  (``c10c_tensor_empty`` -> ``TensorEmpty``), with Go types: pointers stay pointers to the Go
  mirrors, ``size_t`` is ``uint``, ``const char *`` results are copied into Go strings. A function
  returning ``c10c_status`` returns ``error`` instead: nil for C10C_STATUS_OK, else ``*Error``
  whose Message is the thread's ``c10c_last_error_message()``, read by a static C helper in the
  same cgo call (so on the same OS thread) as the failing call.

Doc comments carry each function's summary, header, ABI version, parameter roles and
nullability, Ownership, Errors and thread safety, from api.json.

Stdlib only; the output is passed through ``gofmt`` (which comes with every Go toolchain).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
API = Path(__file__).resolve().parents[2] / "abi" / "api.json"
OUT = HERE / "raw" / "raw_gen.go"

SCALARS = {
    # C type: (Go type, cgo type)
    "int8_t": ("int8", "C.int8_t"),
    "uint8_t": ("uint8", "C.uint8_t"),
    "int16_t": ("int16", "C.int16_t"),
    "uint16_t": ("uint16", "C.uint16_t"),
    "int32_t": ("int32", "C.int32_t"),
    "uint32_t": ("uint32", "C.uint32_t"),
    "int64_t": ("int64", "C.int64_t"),
    "uint64_t": ("uint64", "C.uint64_t"),
    "size_t": ("uint", "C.size_t"),
    "int": ("int32", "C.int"),
    "float": ("float32", "C.float"),
    "double": ("float64", "C.double"),
    "bool": ("bool", "C.bool"),
    "char": ("byte", "C.char"),
}

# Functions whose types cgo cannot express: none (kept for the report the brief asks for).
UNSUPPORTED: dict[str, str] = {}

GO_KEYWORDS = {
    "break",
    "case",
    "chan",
    "const",
    "continue",
    "default",
    "defer",
    "else",
    "fallthrough",
    "for",
    "func",
    "go",
    "goto",
    "if",
    "import",
    "interface",
    "map",
    "package",
    "range",
    "return",
    "select",
    "struct",
    "switch",
    "type",
    "var",
    "error",
    "string",
    "len",
    "cap",
    "copy",
    "new",
    "make",
    "append",
    "delete",
    "close",
    "panic",
    "print",
    "real",
    "imag",
    "unsafe",
    "C",
    "r",
    "s",
    "true",
    "false",
    "nil",
    "complex",
}


def camel(name: str) -> str:
    """c10c_tensor_empty -> TensorEmpty; c10c_tensor_copy_ -> TensorCopy_."""
    if name.startswith("c10c_"):
        name = name[5:]
    trail = "_" if name.endswith("_") else ""
    parts = [p for p in name.split("_") if p]
    return "".join(p[:1].upper() + p[1:] for p in parts) + trail


def lower_camel(name: str) -> str:
    """Parameter name as a Go identifier: lowerCamelCase, with "_" after a Go keyword."""
    c = camel(name)
    c = c[:1].lower() + c[1:]
    if c in GO_KEYWORDS:
        c += "_"
    return c


def const_name(name: str) -> str:
    """A C constant's Go name: exported, so DLPack's kDLCPU becomes KDLCPU."""
    if name.startswith("k"):
        return "K" + name[1:]
    return name


def wrap_comment(text: str, indent: str = "") -> list[str]:
    """Text as Go // comment lines wrapped at 96 columns; blank lines become bare //."""
    out = []
    for para in text.split("\n"):
        if not para.strip():
            out.append(indent + "//")
            continue
        for line in textwrap.wrap(
            para, width=96, break_long_words=False, break_on_hyphens=False
        ) or [""]:
            out.append(indent + "// " + line)
    return out


class Gen:
    """Turns api.json into the Go source of package raw."""

    def __init__(self, api: dict) -> None:
        self.api = api
        self.structs = {s["name"]: s for s in api["structs"]}
        self.typedefs = {t["name"]: t["type"] for t in api["typedefs"]}
        self.opaque = set(api["opaque_types"])
        self.enum_types = {e["name"] for e in api["enums"] if not e["name"].startswith("(")}
        self.intconsts: dict[str, int] = dict(api["constants"])
        for e in api["enums"]:
            self.intconsts.update(e["values"])

    # ---- type mapping ----

    def go_name_of_type(self, base: str) -> str:
        """The Go name of a C typedef, struct, opaque or enum type (CamelCase without c10c_)."""
        if base in self.structs or base in self.typedefs or base in self.opaque:
            return camel(base) if base.startswith("c10c_") else base
        if base in self.enum_types:
            return base
        raise KeyError(base)

    @staticmethod
    def split(ctype: str) -> tuple[str, int]:
        """A C type as its base type name (no const or struct) and pointer depth."""
        t = ctype.replace("const ", "").replace("struct ", "").strip()
        depth = t.count("*")
        base = t.replace("*", "").strip()
        return base, depth

    def is_funcptr(self, ctype: str) -> bool:
        """Whether a C type spelling is a function pointer."""
        return "(*)" in ctype

    def go_base(self, base: str) -> tuple[str, str]:
        """(Go type, cgo type) of a C base type (no pointer)."""
        if base in SCALARS:
            return SCALARS[base]
        if base == "void":
            return ("unsafe.Pointer", "unsafe.Pointer")
        if base in self.typedefs and self.is_funcptr(self.typedefs[base]):
            return (self.go_name_of_type(base), "C." + base)
        return (self.go_name_of_type(base), "C." + base)

    def go_type(self, ctype: str) -> str:
        """The Go type of a C parameter or result type ("" for void)."""
        if self.is_funcptr(ctype):
            return "unsafe.Pointer"
        base, depth = self.split(ctype)
        if base == "void":
            if depth == 0:
                return ""
            return "*" * (depth - 1) + "unsafe.Pointer"
        return "*" * depth + self.go_base(base)[0]

    def kind(self, base: str) -> str:
        """Classifies a C base type: scalar, struct, opaque, funcptr or void."""
        if base in SCALARS:
            return "scalar"
        if base in self.structs:
            return "struct"
        if base in self.opaque:
            return "opaque"
        if base in self.typedefs:
            t = self.typedefs[base]
            if self.is_funcptr(t):
                return "funcptr"
            return "scalar"
        if base in self.enum_types:
            return "scalar"
        if base == "void":
            return "void"
        raise KeyError(base)

    def to_c(self, ctype: str, expr: str) -> str:
        """Go expression converting Go value expr (of go_type(ctype)) to the cgo argument."""
        base, depth = self.split(ctype)
        if depth == 0:
            k = self.kind(base)
            cgo = self.go_base(base)[1]
            if k == "scalar":
                return f"{cgo}({expr})"
            if k == "struct":
                return f"*(*{cgo})(unsafe.Pointer(&{expr}))"
            if k == "funcptr":
                return f"{cgo}({expr})"
            raise ValueError(ctype)
        if base == "void":
            if depth == 1:
                return expr
            return f"({'*' * (depth - 1)}unsafe.Pointer)(unsafe.Pointer({expr}))"
        cgo = self.go_base(base)[1]
        return f"({'*' * depth}{cgo})(unsafe.Pointer({expr}))"

    def from_c(self, ctype: str, expr: str) -> str:
        """Go expression converting cgo value expr of C type ctype to its Go type."""
        base, depth = self.split(ctype)
        gt = self.go_type(ctype)
        if depth == 0:
            k = self.kind(base)
            if k == "scalar":
                return f"{gt}({expr})"
            if k == "struct":
                return f"*(*{gt})(unsafe.Pointer(&{expr}))"
            raise ValueError(ctype)
        if base == "char" and depth == 1:
            return f"C.GoString({expr})"
        if base == "void" and depth == 1:
            return f"unsafe.Pointer({expr})"
        return f"({gt})(unsafe.Pointer({expr}))"

    def field_type(self, ctype: str) -> str:
        """The Go type of a struct field (arrays and function pointers included)."""
        m = re.fullmatch(r"(.+?)\s*\[(\w+)\]", ctype)
        if m:
            n = m.group(2)
            n = str(self.intconsts[n]) if n in self.intconsts else n
            return f"[{n}]{self.field_type(m.group(1))}"
        if self.is_funcptr(ctype):
            return "unsafe.Pointer"
        base, depth = self.split(ctype)
        if base in self.typedefs and self.is_funcptr(self.typedefs[base]) and depth == 0:
            return self.go_name_of_type(base)
        return self.go_type(ctype)

    # ---- output ----

    def c_param_decl(self, p: dict) -> str:
        """A parameter as a C declaration, for the cgo helper functions."""
        t = p["type"]
        return f"{t}{'' if t.endswith('*') else ' '}{p['name']}"

    def generate(self) -> str:
        """The Go source of raw/raw_gen.go, before gofmt."""
        lines: list[str] = []
        lines.extend(self.cgo_preamble())
        lines.extend(self.constants())
        lines.extend(self.type_decls())
        lines.extend(self.layout_mismatches())
        names: dict[str, str] = {}
        lines.extend(self.wrappers(names))
        lines.extend(self.tables(names))
        types = set(self.typedefs) | self.opaque | set(self.structs)
        for g in names:
            if g in {self.go_name_of_type(t) for t in types}:
                raise SystemExit(f"function {g} clashes with a type")
        return "\n".join(lines) + "\n"

    def cgo_preamble(self) -> list[str]:
        """The file header and the cgo preamble: status helpers and layout enum constants."""
        api = self.api
        lines = [
            "// Code generated by generate.py from abi/api.json; DO NOT EDIT.",
            "",
            f"// libc10c ABI {api['abi']}, release {api['release']}: {len(api['functions'])} "
            "functions, every one wrapped below.",
            "",
            "package raw",
            "",
            "/*",
            "#include <stdlib.h>",
            "#include <stddef.h>",
            "#include <string.h>",
            "#include <c10c/c10c.h>",
            "",
            "typedef struct { c10c_status status; char *message; } c10cgo_result;",
            "",
            "static c10cgo_result c10cgo_result_of(c10c_status s) {",
            "  c10cgo_result r = {s, NULL};",
            "  if (s != C10C_STATUS_OK) {",
            "    const char *m = c10c_last_error_message();",
            '    r.message = strdup(m ? m : "");',
            "  }",
            "  return r;",
            "}",
            "",
        ]
        status_funcs = [
            f
            for f in api["functions"]
            if f["returns"] == "c10c_status" and f["name"] not in UNSUPPORTED
        ]
        for f in status_funcs:
            decl = ", ".join(self.c_param_decl(p) for p in f["params"]) or "void"
            args = ", ".join(p["name"] for p in f["params"])
            lines.append(f"static c10cgo_result c10cgo_{f['name']}({decl}) {{")
            lines.append(f"  return c10cgo_result_of({f['name']}({args}));")
            lines.append("}")
        lines.append("")
        # layout checks: sizeof / offsetof as enum constants cgo reads
        for s in api["structs"]:
            n = s["name"]
            lines.append(f"enum {{ c10cgo_sizeof_{n} = sizeof({n}) }};")
            for fl in s["fields"]:
                lines.append(
                    f"enum {{ c10cgo_off_{n}_{fl['name']} = offsetof({n}, {fl['name']}) }};"
                )
        lines += ["*/", 'import "C"', "", 'import "unsafe"', ""]
        return lines

    def constants(self) -> list[str]:
        """The Go const block: every constant macro and enum value, spelled as in C."""
        api = self.api
        lines = ["// Enum values and constants of api.json, spelled as in C.", "const ("]
        seen = set()
        for name, value in api["constants"].items():
            lines.append(f"\t// {name} is the constant macro {name}.")
            lines.append(f"\t{const_name(name)} = {value}")
            seen.add(name)
        for e in api["enums"]:
            lines.append(f"\t// enum {e['name']}")
            for name, value in e["values"].items():
                if name in seen:
                    continue
                seen.add(name)
                lines.append(f"\t{const_name(name)} = {value}")
        lines += [")", ""]
        return lines

    def type_decls(self) -> list[str]:
        """Go types for the typedefs, the enums used as types, the opaque handles and structs."""
        api = self.api
        lines: list[str] = []
        for name, ctype in sorted(self.typedefs.items()):
            gname = self.go_name_of_type(name)
            if self.is_funcptr(ctype):
                lines.append(f"// {gname} is the C function pointer type {name}, {ctype}.")
                lines.append(f"type {gname} unsafe.Pointer")
            else:
                lines.append(f"// {gname} is the C typedef {name} ({ctype}).")
                lines.append(f"type {gname} {SCALARS[ctype][0]}")
            lines.append("")
        for name in sorted(self.enum_types):
            if any(name in (fl["type"]) for s in api["structs"] for fl in s["fields"]) or any(
                self.split(p["type"])[0] == name for f in api["functions"] for p in f["params"]
            ):
                lines.append(
                    f"// {name} is the C enum type {name} (an unsigned int on the supported ABIs)."
                )
                lines.append(f"type {name} uint32")
                lines.append("")
        for name in sorted(self.opaque):
            gname = self.go_name_of_type(name)
            lines.append(
                f"// {gname} is the opaque C handle type {name}; use it only behind a pointer."
            )
            lines.append(f"type {gname} struct{{ _ [0]byte }}")
            lines.append("")
        for s in api["structs"]:
            lines.extend(self.struct_mirror(s))
        return lines

    def struct_mirror(self, s: dict) -> list[str]:
        """A Go mirror of one C struct, with compile-time checks of its size and offsets."""
        n = s["name"]
        gname = self.go_name_of_type(n)
        extra = " Its first field, struct_size, versions it." if s["versioned"] else ""
        hdr = f" ({s['header']})" if s.get("header") else ""
        lines = [
            f"// {gname} mirrors the C struct {n}{hdr} field for field, with the same layout."
            + extra,
            f"type {gname} struct {{",
        ]
        for fl in s["fields"]:
            fname, ftype = fl["name"], fl["type"]
            lines.append(f"\t{camel(fname)} {self.field_type(ftype)} // {ftype} {fname}")
        lines.append("}")
        lines.append("")
        lines.append(f"var _ [C.c10cgo_sizeof_{n} - unsafe.Sizeof({gname}{{}})]struct{{}}")
        for fl in s["fields"]:
            off = f"unsafe.Offsetof({gname}{{}}.{camel(fl['name'])})"
            lines.append(f"var _ [C.c10cgo_off_{n}_{fl['name']} - {off}]struct{{}}")
            lines.append(f"var _ [{off} - C.c10cgo_off_{n}_{fl['name']}]struct{{}}")
        lines.append("")
        return lines

    def layout_mismatches(self) -> list[str]:
        """The Go function LayoutMismatches, which checks every mirror's size at run time."""
        lines = [
            "// LayoutMismatches compares every struct mirror's size with the C compiler's sizeof"
            " at run",
            "// time (the compile-time checks above cover offsets and that no mirror is larger"
            " than its",
            "// C struct; go vet sizes trailing padding differently, so the exact size is checked"
            " here).",
            "// It returns the names of the mirrors that differ; the tests require none.",
            "func LayoutMismatches() []string {",
            "\tvar bad []string",
        ]
        for s_ in self.api["structs"]:
            n = s_["name"]
            g = self.go_name_of_type(n)
            lines.append(f"\tif unsafe.Sizeof({g}{{}}) != C.sizeof_{n} {{")
            lines.append(f"\t\tbad = append(bad, {json.dumps(g)})")
            lines.append("\t}")
        lines += ["\treturn bad", "}", ""]
        return lines

    def wrappers(self, names: dict[str, str]) -> list[str]:
        """A Go wrapper per supported C function; fills names (Go name -> C name)."""
        lines: list[str] = []
        for f in self.api["functions"]:
            if f["name"] in UNSUPPORTED:
                continue
            gname = camel(f["name"])
            if gname in names:
                raise SystemExit(f"name clash: {f['name']} and {names[gname]} -> {gname}")
            names[gname] = f["name"]
            lines.extend(self.function(f))
            lines.append("")
        return lines

    def tables(self, names: dict[str, str]) -> list[str]:
        """The Unsupported map, FunctionCount and the Functions map (C name -> Go name)."""
        count = len(self.api["functions"])
        lines = [
            "// Unsupported lists the functions that have no wrapper, with why: "
            f"{'none' if not UNSUPPORTED else ''}.",
            "var Unsupported = map[string]string{",
        ]
        for k, v in UNSUPPORTED.items():
            lines.append(f"\t{json.dumps(k)}: {json.dumps(v)},")
        lines += [
            "}",
            "",
            f"// FunctionCount is the number of C functions api.json lists ({count}).",
            f"const FunctionCount = {count}",
            "",
            "// Functions lists the C names of the wrapped functions and their Go names.",
            "var Functions = map[string]string{",
        ]
        for g, c in sorted(names.items(), key=lambda kv: kv[1]):
            lines.append(f"\t{json.dumps(c)}: {json.dumps(g)},")
        lines.append("}")
        return lines

    @staticmethod
    def function_doc(f: dict) -> list[str]:
        """The doc comment of one function's wrapper, as lines before wrapping."""
        gname = camel(f["name"])
        doc = [f"{gname} calls {f['name']} ({f['header']}, since ABI {f['since']})."]
        doc.append("")
        doc.append(f["summary"])
        doc.append("")
        plist = []
        for p in f["params"]:
            nb = p.get("nullable", "n/a")
            if "*" not in p["type"]:
                nbs = ""
            elif nb is True:
                nbs = ", may be NULL"
            elif nb is False:
                nbs = ", not NULL"
            else:
                nbs = ", NULL unspecified"
            plist.append(f"{p['name']} ({p['type']}, {p['role']}{nbs})")
        if plist:
            doc.append("Parameters: " + "; ".join(plist) + ".")
        doc.append(
            f"Returns: {f['returns']}"
            + (
                " as error (nil for C10C_STATUS_OK, else *Error)."
                if f["returns"] == "c10c_status"
                else "."
            )
        )
        ok = f.get("ownership_kind") or {}
        if f.get("ownership") or ok:
            s = "Ownership: " + (f.get("ownership") or "")
            if ok.get("result"):
                s += f" [result: {ok['result']}"
                if ok.get("release_with"):
                    s += f", release with {ok['release_with']}"
                s += "]"
            doc.append(s)
        doc.append("Errors: " + (", ".join(f["errors"]) if f["errors"] else "none") + ".")
        doc.append(f"Thread safety: {f['thread_safety']}")
        return doc

    def function(self, f: dict) -> list[str]:
        """The Go wrapper of one C function: its doc comment and its body."""
        gname = camel(f["name"])
        out = wrap_comment("\n".join(self.function_doc(f)))
        params = []
        pnames = []
        for p in f["params"]:
            n = lower_camel(p["name"])
            pnames.append(n)
            params.append(f"{n} {self.go_type(p['type'])}")
        args = ", ".join(self.to_c(p["type"], n) for p, n in zip(f["params"], pnames, strict=True))
        rt = f["returns"]
        if rt == "c10c_status":
            out.append(f"func {gname}({', '.join(params)}) error {{")
            out.append(f"\tr := C.c10cgo_{f['name']}({args})")
            out.append("\tif r.status != 0 {")
            out.append("\t\treturn newError(Status(r.status), r.message)")
            out.append("\t}")
            out.append("\treturn nil")
            out.append("}")
        elif rt == "void":
            out.append(f"func {gname}({', '.join(params)}) {{")
            out.append(f"\tC.{f['name']}({args})")
            out.append("}")
        else:
            gret = "string" if self.split(rt) == ("char", 1) else self.go_type(rt)
            call = f"C.{f['name']}({args})"
            out.append(f"func {gname}({', '.join(params)}) {gret} {{")
            base, depth = self.split(rt)
            if depth == 0 and self.kind(base) == "struct":
                out.append(f"\tr := {call}")
                out.append(f"\treturn {self.from_c(rt, 'r')}")
            else:
                out.append(f"\treturn {self.from_c(rt, call)}")
            out.append("}")
        return out


def gofmt(src: str) -> str:
    """Formats Go source with gofmt (from PATH or `go env GOROOT`); exits when it fails."""
    exe = shutil.which("gofmt")
    if exe is None:
        goroot = subprocess.run(
            ["go", "env", "GOROOT"], capture_output=True, text=True, check=False
        )
        cand = Path(goroot.stdout.strip()) / "bin" / "gofmt"
        if goroot.returncode == 0 and cand.exists():
            exe = str(cand)
    if exe is None:
        raise SystemExit("generate.py: gofmt not found (it comes with the Go toolchain)")
    r = subprocess.run([exe], input=src, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise SystemExit("generate.py: gofmt failed:\n" + r.stderr)
    return r.stdout


def main() -> int:
    """Writes (or with --check, compares) raw/raw_gen.go; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if raw/raw_gen.go is stale")
    a = ap.parse_args()
    api = json.loads(API.read_text())
    src = gofmt(Gen(api).generate())
    if a.check:
        cur = OUT.read_text() if OUT.exists() else None
        if cur != src:
            print(
                f"generate.py: {OUT.relative_to(HERE)} is stale; run python generate.py",
                file=sys.stderr,
            )
            return 1
        print(
            f"generate.py: {OUT.relative_to(HERE)} is up to date "
            f"({len(api['functions'])} functions)"
        )
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(src)
    print(f"generate.py: wrote {OUT.relative_to(HERE)} ({len(api['functions'])} functions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
