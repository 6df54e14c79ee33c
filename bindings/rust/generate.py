#!/usr/bin/env python3
"""Generates the Rust binding's low-level declarations from abi/api.json.

Writes (both checked in):

* ``src/sys.rs``: ``extern "C"`` declarations of every function in api.json, ``#[repr(C)]``
  structs, opaque handle types, typedefs, enum constants and constants, with the ownership,
  nullability, errors, thread-safety and "since" of each function in its doc comment; and, at its
  end, a layout test comparing the size, alignment and field offsets of every struct (and every
  enum constant's value) with what a C compiler gives for the headers.
* ``layout.c``: the C side of that test. ``build.rs`` compiles and runs it against the headers
  (include/ of the repository, or ``C10C_INCLUDE_DIR``) and the test reads its output.

    python generate.py            # writes the files
    python generate.py --check    # exits 1 when a checked-in file differs from what it would write

Python 3.10+, standard library only.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
API = Path(__file__).resolve().parents[2] / "abi" / "api.json"
SYS_RS = HERE / "src" / "sys.rs"
LAYOUT_C = HERE / "layout.c"

SCALARS = {
    "void": "c_void",
    "bool": "bool",
    "_Bool": "bool",
    "char": "c_char",
    "int": "c_int",
    "unsigned": "c_uint",
    "float": "f32",
    "double": "f64",
    "size_t": "usize",
    "int8_t": "i8",
    "int16_t": "i16",
    "int32_t": "i32",
    "int64_t": "i64",
    "uint8_t": "u8",
    "uint16_t": "u16",
    "uint32_t": "u32",
    "uint64_t": "u64",
}

# Rust keywords that may appear as C names (fields, parameters).
KEYWORDS = {
    "as",
    "async",
    "await",
    "box",
    "break",
    "const",
    "continue",
    "crate",
    "dyn",
    "else",
    "enum",
    "extern",
    "false",
    "fn",
    "for",
    "if",
    "impl",
    "in",
    "let",
    "loop",
    "match",
    "mod",
    "move",
    "mut",
    "pub",
    "ref",
    "return",
    "static",
    "struct",
    "super",
    "trait",
    "true",
    "type",
    "unsafe",
    "use",
    "where",
    "while",
    "yield",
    "abstract",
    "become",
    "do",
    "final",
    "macro",
    "override",
    "priv",
    "typeof",
    "unsized",
    "virtual",
    "try",
    "gen",
}
NOT_RAW = {"self", "Self", "super", "crate"}  # cannot be raw identifiers


def ident(name: str) -> str:
    """Spells a C name as a Rust identifier (raw identifier or trailing '_' for keywords)."""
    if name in NOT_RAW:
        return name + "_"
    if name in KEYWORDS:
        return "r#" + name
    return name


class Types:
    """Resolves C type spellings from api.json into Rust types."""

    def __init__(self, api: dict):
        self.known = set(SCALARS)
        self.known |= {t["name"] for t in api["typedefs"]}
        self.known |= {s["name"] for s in api["structs"]}
        self.known |= set(api["opaque_types"])
        self.known |= {e["name"] for e in api["enums"] if not e["name"].startswith("(")}
        self.values: dict[str, int] = dict(api["constants"])
        for e in api["enums"]:
            self.values.update(e["values"])

    def base(self, name: str) -> str:
        """The Rust type of a known C base type name (no pointers or qualifiers)."""
        if name not in self.known:
            raise SystemExit(f"generate.py: unknown C type {name!r} in api.json")
        return SCALARS.get(name, name)

    def rust(self, ctype: str, position: str = "value") -> str:
        """The Rust type of a C type spelling; position is "return" where a bare void is allowed."""
        t = " ".join(ctype.replace("*", " * ").split())
        m = re.fullmatch(r"(.+?)\s*\(\s*\*\s*\)\s*\((.*)\)", t)
        if m:
            return self.fn_pointer(m.group(1), m.group(2))
        m = re.fullmatch(r"(.+?)\s*\[\s*(\w+)\s*\]", t)
        if m:
            n = m.group(2)
            count = int(n) if n.isdigit() else self.values[n]
            return f"[{self.rust(m.group(1))}; {count}]"
        return self.pointer_or_base(ctype, t.split(), position)

    def fn_pointer(self, ret_ctype: str, args_text: str) -> str:
        """A C function pointer as Option<unsafe extern "C" fn(...) -> ...>."""
        ret = self.rust(ret_ctype, "return")
        args = [a.strip() for a in args_text.split(",") if a.strip()]
        if args == ["void"]:
            args = []
        rargs = ", ".join(self.rust(a) for a in args)
        tail = "" if ret == "()" else f" -> {ret}"
        return f'Option<unsafe extern "C" fn({rargs}){tail}>'

    def pointer_or_base(self, ctype: str, toks: list[str], position: str) -> str:
        """A (possibly pointer, possibly const) C type, given as tokens, as a Rust type."""
        # base type: the tokens before the first '*', without qualifiers
        i = 0
        base_const = False
        words = []
        while i < len(toks) and toks[i] != "*":
            w = toks[i]
            if w == "const":
                base_const = True
            elif w in ("struct", "enum", "volatile"):
                pass
            else:
                words.append(w)
            i += 1
        name = " ".join(words)
        if name == "unsigned int":
            name = "unsigned"
        if i == len(toks):
            if name == "void":
                if position != "return":
                    raise SystemExit(f"generate.py: bare void in {ctype!r}")
                return "()"
            return self.base(name)
        r = self.base(name)
        pointee_const = base_const
        while i < len(toks):
            assert toks[i] == "*", ctype
            r = f"*{'const' if pointee_const else 'mut'} {r}"
            i += 1
            pointee_const = False
            while i < len(toks) and toks[i] == "const":
                pointee_const = True
                i += 1
        return r


def doc(lines: list[str], indent: str = "") -> str:
    """Lines as a rustdoc `///` comment block, each indented by indent."""
    out = []
    for line in lines:
        out.append(f"{indent}///{(' ' + line) if line else ''}".rstrip())
    return "\n".join(out) + "\n"


def md(text: str) -> str:
    """Keeps C text readable in rustdoc: no HTML tags, no bare links."""
    return text.replace("<", "&lt;").replace(">", "&gt;").replace("`", "'")


def function_doc(f: dict) -> list[str]:
    """The doc comment lines of one api.json function (summary, ownership, errors, ...)."""
    lines = [md(f["summary"] or f["name"]), ""]
    lines.append(f"Since ABI {f['since']} ({f['header']}).")
    lines.append("")
    own = f.get("ownership")
    kind = f.get("ownership_kind") or {}
    parts = []
    if own:
        parts.append(md(own.rstrip(".")) + ".")
    if kind:
        k = f"Result: {kind.get('result')}"
        if kind.get("release_with"):
            k += f", released with `{kind['release_with']}`"
        parts.append(k + ".")
    lines.append("Ownership: " + (" ".join(parts) if parts else "nothing is handed over."))
    lines.append("")
    errs = f.get("errors") or []
    lines.append(
        "Errors: "
        + (", ".join(f"`{e}`" for e in errs) if errs else "none.")
        + (" (the message: `c10c_last_error_message()` on this thread)" if errs else "")
    )
    lines.append("")
    lines.append("Thread-safety: " + md(f.get("thread_safety") or "any thread") + ".")
    params = []
    for p in f["params"]:
        desc = f"`{p['name']}`: `{p['type']}`, {p['role']}"
        if "*" in p["type"]:
            nb = p.get("nullable")
            desc += {True: ", may be NULL", False: ", must not be NULL", None: ""}[nb]
        params.append(desc)
    if params:
        lines.append("")
        lines.append("Parameters: " + "; ".join(params) + ".")
    return lines


def enum_const_type(enum: dict, typedefs: set[str]) -> str:
    """The Rust type of an enum's constants: its typedef where api.json has one."""
    name = enum["name"]
    if name.startswith("("):
        return "c_int"
    for suffix in ("_value", "_code"):
        if name.endswith(suffix) and name[: -len(suffix)] in typedefs:
            return name[: -len(suffix)]
    return name


def enum_alias_type(enum: dict) -> str:
    """An enum's underlying type as GCC and Clang pick it: unsigned int when none is negative."""
    return "c_int" if any(v < 0 for v in enum["values"].values()) else "c_uint"


SYS_PREAMBLE = (
    "// @generated by bindings/rust/generate.py from abi/api.json. Do not edit: run\n"
    "// `python generate.py` (and `python generate.py --check` in CI).\n"
)

SYS_ATTRIBUTES = (
    "#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case, dead_code)]\n"
    "#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags,"
    " rustdoc::bare_urls)]\n"
    "#![allow(clippy::all)]\n\n"
    "use core::ffi::{c_char, c_int, c_uint, c_void};\n"
    "use core::marker::{PhantomData, PhantomPinned};\n\n"
)

# The layout test's body after rust_layout() and rust_values(): it parses layout.c's output.
LAYOUT_TEST_BODY = (
    """    const C_LAYOUT: &str = include_str!(concat!(env!("OUT_DIR"), "/c_layout.txt"));

    #[test]
    fn struct_layouts_and_values_match_c() {
        if let Some(why) = C_LAYOUT.strip_prefix("unavailable:") {
            eprintln!("layout test skipped: layout.c could not be built ({})", why.trim());
            return;
        }
        let mut sizes = std::collections::HashMap::new();
        let mut offsets = std::collections::HashMap::new();
        let mut values = std::collections::HashMap::new();
        for line in C_LAYOUT.lines() {
            let w: Vec<&str> = line.split_whitespace().collect();
            match w.as_slice() {
                ["S", name, size, align] => {
"""
    "                    sizes.insert(name.to_string(),"
    " (size.parse::<usize>().unwrap(), align.parse::<usize>().unwrap()));\n"
    """                }
                ["F", name, field, off] => {
                    offsets.insert(format!("{name}.{field}"), off.parse::<usize>().unwrap());
                }
                ["V", name, v] => {
                    values.insert(name.to_string(), v.parse::<i64>().unwrap());
                }
                _ => panic!("bad layout line {line:?}"),
            }
        }
        let mut checked = 0;
        for (name, size, align, fields) in rust_layout() {
            let (csize, calign) = sizes[name];
            assert_eq!((size, align), (csize, calign), "size/align of {name}: Rust vs C");
            for (field, off) in fields {
                assert_eq!(off, offsets[&format!("{name}.{field}")], "offset of {name}.{field}");
                checked += 1;
            }
        }
        for (name, v) in rust_values() {
            assert_eq!(v, values[name], "value of {name}");
        }
        assert!(checked > 0);
    }
}
"""
)


def sys_header(api: dict) -> list[str]:
    """The generated-file notice, the module doc comment and the crate attributes of sys.rs."""
    return [
        SYS_PREAMBLE,
        "//! Low-level declarations of libc10c: every function, struct, enum value, typedef and\n"
        f"//! constant of abi/api.json (ABI {api['abi']}, release {api['release']}).\n"
        "//!\n"
        "//! Everything here is `unsafe` to call and follows the C API's rules"
        " (include/c10c/*.h):\n"
        "//! functions return a `c10c_status` (0 is `C10C_STATUS_OK`) and on failure leave a"
        " message\n"
        "//! in the calling thread's last error (`c10c_last_error_message`). The idiomatic layer"
        " of\n"
        "//! this crate (`Tensor`, `Storage`, ...) is built on these declarations.\n",
        SYS_ATTRIBUTES,
    ]


def sys_opaque_types(api: dict) -> list[str]:
    """One zero-sized #[repr(C)] struct per opaque handle type."""
    o = ["// ---- opaque handle types ----\n\n"]
    for name in sorted(api["opaque_types"]):
        o.append(doc([f"Opaque C type `{name}`: only ever used behind a pointer."]))
        o.append(
            f"#[repr(C)]\npub struct {name} {{\n    _p: [u8; 0],\n"
            "    _m: PhantomData<(*mut u8, PhantomPinned)>,\n}\n\n"
        )
    return o


def sys_typedefs(api: dict, ty: Types) -> list[str]:
    """One `pub type` per C typedef."""
    o = ["// ---- typedefs ----\n\n"]
    for t in sorted(api["typedefs"], key=lambda t: t["name"]):
        o.append(doc([f"C `typedef {t['type']} {t['name']}`."]))
        o.append(f"pub type {t['name']} = {ty.rust(t['type'])};\n")
    o.append("\n")
    return o


def sys_enums(api: dict) -> list[str]:
    """A type alias per named enum and a `pub const` per enum value."""
    typedef_names = {t["name"] for t in api["typedefs"]}
    o = ["// ---- enums ----\n\n"]
    for e in api["enums"]:
        if not e["name"].startswith("("):
            o.append(doc([f"C `enum {e['name']}` (its constants follow)."]))
            o.append(f"pub type {e['name']} = {enum_alias_type(e)};\n")
        ct = enum_const_type(e, typedef_names)
        o.append(f"// {e['name']}\n")
        for k, v in e["values"].items():
            o.append(f"pub const {k}: {ct} = {v};\n")
        o.append("\n")
    return o


def sys_constants(api: dict) -> list[str]:
    """A `pub const` per constant macro of api.json."""
    o = ["// ---- constants (macros) ----\n\n"]
    for k, v in sorted(api["constants"].items()):
        rt = "u32" if 0 <= v < 2**32 else "i64"
        o.append(doc([f"C macro `{k}`."]))
        o.append(f"pub const {k}: {rt} = {v};\n")
    o.append("\n")
    return o


def sys_structs(api: dict, ty: Types) -> list[str]:
    """A #[repr(C)] mirror of every struct of api.json."""
    o = ["// ---- structs ----\n\n"]
    for s in sorted(api["structs"], key=lambda s: s["name"]):
        lines = [f"C `struct {s['name']}`" + (f" ({s['header']})." if s.get("header") else ".")]
        if s.get("versioned"):
            lines += [
                "",
                "Versioned: set `struct_size` to `size_of::<Self>()` before passing it in.",
            ]
        o.append(doc(lines))
        o.append("#[repr(C)]\n#[derive(Copy, Clone, Debug)]\n")
        o.append(f"pub struct {s['name']} {{\n")
        for fld in s["fields"]:
            o.append(f"    /// C type `{fld['type']}`.\n")
            o.append(f"    pub {ident(fld['name'])}: {ty.rust(fld['type'])},\n")
        o.append("}\n\n")
    return o


def sys_functions(api: dict, ty: Types) -> list[str]:
    """The `extern "C"` block declaring every function, and FUNCTION_COUNT."""
    o = ["// ---- functions ----\n\n", 'extern "C" {\n']
    for f in sorted(api["functions"], key=lambda f: f["name"]):
        o.append(doc(function_doc(f), "    "))
        params = ", ".join(f"{ident(p['name'])}: {ty.rust(p['type'])}" for p in f["params"])
        ret = ty.rust(f["returns"], "return")
        tail = "" if ret == "()" else f" -> {ret}"
        o.append(f"    pub fn {f['name']}({params}){tail};\n")
    o.append("}\n\n")
    o.append(
        f"/// The number of functions declared above (all of abi/api.json).\n"
        f"pub const FUNCTION_COUNT: usize = {len(api['functions'])};\n\n"
    )
    return o


def sys_layout_test(api: dict) -> list[str]:
    """The layout test module comparing Rust struct layouts and values with layout.c's output."""
    o = [
        "/// Layout test: every struct's size, alignment and field offsets, and every enum\n"
        "/// constant's value, against what a C compiler gives for the headers (layout.c, built"
        " and\n"
        "/// run by build.rs).\n",
        "#[cfg(test)]\nmod layout_tests {\n    use super::*;\n"
        "    use core::mem::{align_of, offset_of, size_of};\n\n",
        "    #[allow(clippy::type_complexity)]\n",
        "    fn rust_layout() -> Vec<(&'static str, usize, usize, Vec<(&'static str, usize)>)> {\n"
        "        vec![\n",
    ]
    for s in sorted(api["structs"], key=lambda s: s["name"]):
        n = s["name"]
        fields = ", ".join(
            f'("{fld["name"]}", offset_of!({n}, {ident(fld["name"])}))' for fld in s["fields"]
        )
        o.append(f'            ("{n}", size_of::<{n}>(), align_of::<{n}>(), vec![{fields}]),\n')
    o.append("        ]\n    }\n\n")
    o.append("    fn rust_values() -> Vec<(&'static str, i64)> {\n        vec![\n")
    for e in api["enums"]:
        for k in e["values"]:
            o.append(f'            ("{k}", {k} as i64),\n')
    for k in sorted(api["constants"]):
        o.append(f'            ("{k}", {k} as i64),\n')
    o.append("        ]\n    }\n\n")
    o.append(LAYOUT_TEST_BODY)
    return o


def generate_sys(api: dict) -> str:
    """The text of src/sys.rs: every declaration of api.json and the layout test."""
    ty = Types(api)
    o = [
        *sys_header(api),
        *sys_opaque_types(api),
        *sys_typedefs(api, ty),
        *sys_enums(api),
        *sys_constants(api),
        *sys_structs(api, ty),
        *sys_functions(api, ty),
        *sys_layout_test(api),
    ]
    return "".join(o)


def generate_layout_c(api: dict) -> str:
    """The text of layout.c, which prints the C layout of every struct and every constant."""
    o = [
        "/* @generated by bindings/rust/generate.py from abi/api.json. Do not edit.\n"
        " * Prints the size, alignment and field offsets of every struct of api.json and the value"
        " of\n"
        " * every enum constant, as this C compiler lays them out for the headers; build.rs runs it"
        " and\n"
        " * src/sys.rs's layout test compares the Rust declarations with the output. */\n"
        "#include <stdalign.h>\n#include <stddef.h>\n#include <stdio.h>\n\n"
    ]
    for h in sorted(
        {f["header"] for f in api["functions"]}
        | {s["header"] for s in api["structs"] if s.get("header")}
    ):
        o.append(f"#include <c10c/{h}>\n")
    o.append("\nint main(void) {\n")
    for s in sorted(api["structs"], key=lambda s: s["name"]):
        n = s["name"]
        ctype = n if not n.startswith("DLManaged") else f"struct {n}"
        o.append(f'  printf("S {n} %zu %zu\\n", sizeof({ctype}), alignof({ctype}));\n')
        for fld in s["fields"]:
            fname = fld["name"]
            o.append(f'  printf("F {n} {fname} %zu\\n", offsetof({ctype}, {fname}));\n')
    for e in api["enums"]:
        for k in e["values"]:
            o.append(f'  printf("V {k} %lld\\n", (long long)({k}));\n')
    for k in sorted(api["constants"]):
        o.append(f'  printf("V {k} %lld\\n", (long long)({k}));\n')
    o.append("  return 0;\n}\n")
    return "".join(o)


def main() -> int:
    """Writes (or with --check, compares) src/sys.rs and layout.c; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a generated file is stale")
    args = ap.parse_args()
    api = json.loads(API.read_text())
    outputs = {SYS_RS: generate_sys(api), LAYOUT_C: generate_layout_c(api)}
    stale = [p for p, text in outputs.items() if not p.exists() or p.read_text() != text]
    if args.check:
        for p in stale:
            print(
                f"generate.py: {p.relative_to(HERE)} is stale; run python generate.py",
                file=sys.stderr,
            )
        return 1 if stale else 0
    for p, text in outputs.items():
        p.parent.mkdir(parents=True, exist_ok=True)
        if p in stale:
            p.write_text(text)
            print(f"wrote {p.relative_to(HERE)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
