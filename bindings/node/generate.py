"""Generates the Node.js binding's low-level declarations, lib/ffi.js, from abi/api.json.

lib/ffi.js holds koffi declarations for every opaque type, typedef, struct, enum value, constant
and function (all of them) that abi/api.json describes, each function with a JSDoc comment that
carries its summary, parameter roles and nullability, ownership, errors, ABI version and
thread-safety. Functions are declared lazily (one ``lib.func(...)`` per function, run on first
use) so that loading stays fast; ``declareAll()`` declares every one at once.

    python generate.py           # writes lib/ffi.js
    python generate.py --check   # exits 1 when lib/ffi.js is stale

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
OUT = HERE / "lib" / "ffi.js"

# Scalar C types koffi knows under the same name.
SCALARS = {
    "void",
    "bool",
    "char",
    "int",
    "float",
    "double",
    "size_t",
    "int8_t",
    "uint8_t",
    "int16_t",
    "uint16_t",
    "int32_t",
    "uint32_t",
    "int64_t",
    "uint64_t",
}
# Pointer-to-bytes types that an "out" parameter uses as a caller-provided buffer (a Buffer or
# TypedArray is passed and written in place, so no _Out_ copy-back is wanted).
BUFFER_POINTEES = {"char", "uint8_t"}
FNPTR = re.compile(r"^(?P<ret>.+?)\s*\(\s*\*\s*\)\s*\((?P<args>.*)\)$")
ARRAY = re.compile(r"^(?P<elem>.+?)\s*\[(?P<n>[^\]]+)\]$")

# Functions koffi cannot declare, with why. There are none: every signature of api.json maps to
# koffi types (structs by value included).
UNDECLARABLE: dict[str, str] = {}


def js_str(s: str) -> str:
    """A Python string as a JavaScript string literal."""
    return json.dumps(s)


def norm(t: str) -> str:
    """A C type as koffi's prototype parser reads it: no 'struct ' tag, single spaces."""
    t = re.sub(r"\bstruct\s+", "", t)
    t = re.sub(r"\s+", " ", t).strip()
    t = re.sub(r"\s*\*", " *", t).replace("* *", "**").replace("* *", "**")
    return t


def base_of(t: str) -> str:
    """The named type under pointers and const."""
    t = norm(t).replace("*", " ")
    t = re.sub(r"\bconst\b", " ", t)
    return t.split()[0] if t.split() else t


def pointer_depth(t: str) -> int:
    """How many pointer levels a C type has."""
    return norm(t).count("*")


class Gen:
    """Turns api.json into the text of lib/ffi.js, section by section."""

    def __init__(self, api: dict):
        self.api = api
        self.lines: list[str] = []
        self.protos: dict[str, str] = {}  # proto name -> proto name (declared once)
        self.enum_names = {e["name"] for e in api["enums"] if not e["name"].startswith("(")}
        self.values: dict[str, int] = {}
        for e in api["enums"]:
            self.values.update(e["values"])
        self.values.update(api["constants"])
        self.struct_names = {s["name"] for s in api["structs"]}
        self.owning = {
            s["name"] for s in api["structs"] if any(f["name"] == "deleter" for f in s["fields"])
        }
        self.versioned = {s["name"] for s in api["structs"] if s.get("versioned")}
        self.opaque = set(api["opaque_types"])
        self.typedefs = {t["name"]: t["type"] for t in api["typedefs"]}

    # --- type translation -------------------------------------------------------------------

    def proto_for(self, ctype: str, hint: str) -> str:
        """Registers a koffi.proto for a function pointer type; returns '<name> *'."""
        key = hint  # one named proto per field, so each reads as its own C field type
        if key not in self.protos:
            m = FNPTR.match(norm(ctype))
            assert m, ctype
            args = [
                a.strip() for a in m.group("args").split(",") if a.strip() and a.strip() != "void"
            ]
            name = hint
            self.protos[key] = name
            params = ", ".join(norm(a) for a in args)
            proto = f"{norm(m.group(1))} {name}({params})"
            self.lines.append(
                f"/** C function pointer type `{ctype}`. */\n"
                f"types[{js_str(name)}] = koffi.proto({js_str(proto)});"
            )
        return self.protos[key] + " *"

    def field_type(self, sname: str, fname: str, ctype: str) -> str:
        """A JS expression for a struct field's koffi type."""
        if FNPTR.match(norm(ctype)):
            return js_str(self.proto_for(ctype, f"{sname}_{fname}_fn"))
        m = ARRAY.match(ctype.strip())
        if m:
            n = m.group("n").strip()
            count = int(n) if n.isdigit() else self.values[n]
            elem = norm(m.group("elem"))
            hint = ", 'Array'" if elem != "char" else ""
            return f"koffi.array({js_str(elem)}, {count}{hint})"
        return js_str(norm(ctype))

    # --- sections ---------------------------------------------------------------------------

    def header(self):
        """The generated-file notice, the koffi import and the types table."""
        api = self.api
        self.lines.append(
            "// GENERATED by bindings/node/generate.py from abi/api.json: do not edit.\n"
            f"// libc10c ABI {api['abi']}, release {api['release']}; "
            f"{len(api['functions'])} functions, {len(api['structs'])} structs, "
            f"{len(api['enums'])} enums.\n"
            "'use strict';\n\n"
            "const koffi = require('koffi');\n\n"
            "/** Every koffi type this file declares, by C name. */\n"
            "const types = Object.create(null);"
        )

    def opaque_types(self):
        """A koffi.opaque declaration per opaque handle type."""
        self.lines.append("\n// ---- opaque handle types ----")
        for name in self.api["opaque_types"]:
            self.lines.append(
                f"/** Opaque `{name}` (used through pointers only). */\n"
                f"types[{js_str(name)}] = koffi.opaque({js_str(name)});"
            )

    def typedef_section(self):
        """The typedefs as koffi aliases and prototypes, and aliases for the enums used as types."""
        self.lines.append("\n// ---- typedefs ----")
        for td in self.api["typedefs"]:
            name, ctype = td["name"], td["type"]
            if FNPTR.match(norm(ctype)):
                m = FNPTR.match(norm(ctype))
                args = [
                    a.strip()
                    for a in m.group("args").split(",")
                    if a.strip() and a.strip() != "void"
                ]
                proto = f"{norm(m.group('ret'))} {name}_fn({', '.join(norm(a) for a in args)})"
                fn_key = js_str(name + "_fn")
                self.lines.append(
                    f"/** `typedef {ctype} {name}`: a pointer to the function type {name}_fn. */\n"
                    f"types[{fn_key}] = koffi.proto({js_str(proto)});\n"
                    f"types[{js_str(name)}] = koffi.pointer({js_str(name)}, types[{fn_key}]);"
                )
            else:
                self.lines.append(
                    f"/** `typedef {ctype} {name}`. */\n"
                    f"types[{js_str(name)}] = koffi.alias({js_str(name)}, {js_str(ctype)});"
                )
        used = set()
        for s in self.api["structs"]:
            for f in s["fields"]:
                used.add(base_of(f["type"]))
        for fn in self.api["functions"]:
            used.add(base_of(fn["returns"]))
            for p in fn["params"]:
                used.add(base_of(p["type"]))
        for name in sorted(self.enum_names & used):
            self.lines.append(
                f"/** C enum `{name}` used as a type: an int. */\n"
                f"types[{js_str(name)}] = koffi.alias({js_str(name)}, 'int');"
            )

    def struct_section(self):
        """A koffi.struct per struct, each after the structs it names."""
        self.lines.append("\n// ---- structs (in dependency order) ----")
        structs = {s["name"]: s for s in self.api["structs"]}
        done: set[str] = set()
        order: list[str] = []

        def visit(name: str):
            if name in done:
                return
            done.add(name)
            for f in structs[name]["fields"]:
                t = norm(f["type"])
                m = FNPTR.match(t)
                parts = [m.group("ret"), *m.group("args").split(",")] if m else [t]
                for raw_part in parts:
                    part = raw_part.strip()
                    a = ARRAY.match(part)
                    b = base_of(a.group("elem") if a else part) if part else ""
                    if b in structs and b != name:
                        visit(b)  # koffi needs every named type before use, pointees too
            order.append(name)

        for name in sorted(structs):
            visit(name)
        for name in order:
            s = structs[name]
            pending = []
            fields = []
            for f in s["fields"]:
                ctype = f["type"]
                if FNPTR.match(norm(ctype)) and name in ctype:
                    pending.append(f)
                    fields.append(
                        f"    {f['name']}: 'void *', // {ctype} (see {name}_{f['name']}_fn)"
                    )
                else:
                    fields.append(
                        f"    {f['name']}: {self.field_type(name, f['name'], ctype)}, // {ctype}"
                    )
            doc = f"/** struct {name}" + (f" ({s['header']})" if s.get("header") else "")
            if s.get("versioned"):
                doc += "; versioned: set struct_size to its size (koffi.sizeof) before passing it"
            doc += ". */"
            self.lines.append(
                doc
                + f"\ntypes[{js_str(name)}] = koffi.struct({js_str(name)}, {{\n"
                + "\n".join(fields)
                + "\n});"
            )
            for f in pending:
                # A deleter taking the struct itself: declared after the struct, stored as void *
                # in the layout (same size and alignment); call it with koffi.call.
                self.proto_for(f["type"], f"{name}_{f['name']}_fn")

    def enums_section(self):
        """The frozen enums and constants tables."""
        self.lines.append("\n// ---- enums and constants ----")
        self.lines.append(
            "/** Every enum of api.json: name -> {VALUE_NAME: number}. Anonymous enums are"
            " listed under their api.json name. */\nconst enums = Object.freeze({"
        )
        for e in self.api["enums"]:
            vals = ", ".join(f"{k}: {v}" for k, v in e["values"].items())
            self.lines.append(f"  {js_str(e['name'])}: Object.freeze({{ {vals} }}),")
        self.lines.append("});")
        self.lines.append(
            "/** Every enum value and constant macro by its C name. */\n"
            "const constants = Object.freeze({"
        )
        for e in self.api["enums"]:
            for k, v in e["values"].items():
                self.lines.append(f"  {k}: {v},")
        for k, v in self.api["constants"].items():
            self.lines.append(f"  {k}: {v},")
        self.lines.append("});")

    def param_decl(self, p: dict) -> str:
        """A parameter as koffi reads it, marked _Out_ or _Inout_ where koffi copies back."""
        t = norm(p["type"])
        depth = pointer_depth(t)
        const = bool(re.match(r"^const\b", t))
        base = base_of(t)
        prefix = ""
        if depth and not const and (depth >= 2 or base not in self.opaque):
            if depth >= 2:
                prefix = "_Out_ " if p["role"] == "out" else ""
            elif base in BUFFER_POINTEES and base != "bool":
                prefix = ""  # caller's buffer, written in place
            elif base == "void":
                prefix = ""
            elif base in self.owning:
                # A managed struct (it has a deleter): the function keeps the pointer itself, so
                # pass its address (a BigInt), never a copy.
                prefix = ""
            elif base in self.versioned:
                # A versioned struct: the caller sets struct_size, so koffi copies it in too.
                prefix = "_Inout_ "
            elif p["role"] == "out":
                prefix = "_Out_ "
            elif base in self.struct_names:
                prefix = "_Inout_ "
            else:
                # A pointer to a scalar the function writes (api.json calls it "in" when it does
                # not come first: bool *done, size_t *out_len, ...).
                prefix = "_Out_ "
        name = p["name"]
        return f"{prefix}{t} {name}"

    def jsdoc(self, fn: dict) -> str:
        """The JSDoc comment of one function's prototype entry."""
        out = ["/**", f" * {fn['summary']}" if fn.get("summary") else " * (no summary)"]
        out.append(" *")
        c_params = ", ".join(p["type"] + " " + p["name"] for p in fn["params"])
        out.append(f" * C: `{fn['returns']} {fn['name']}({c_params})`")
        for p in fn["params"]:
            nul = p.get("nullable")
            nl = (
                {True: "nullable", False: "non-null", None: "nullability unstated"}[nul]
                if "nullable" in p
                else ""
            )
            extra = ", ".join(x for x in (p["role"], nl) if x)
            out.append(f" * @param {p['name']} `{p['type']}` ({extra})")
        out.append(f" * @returns `{fn['returns']}`")
        if fn.get("ownership"):
            out.append(f" * Ownership: {fn['ownership']}")
        ok = fn.get("ownership_kind") or {}
        if ok:
            out.append(
                f" * Result: {ok.get('result')}"
                + (f", release with {ok['release_with']}" if ok.get("release_with") else "")
            )
        out.append(f" * Errors: {', '.join(fn['errors']) if fn['errors'] else 'none'}")
        out.append(f" * Thread-safety: {fn.get('thread_safety')}")
        out.append(f" * @since ABI {fn['since']} ({fn['header']})")
        out.append(" */")
        return "\n".join(
            "  " + line.replace("*/", "* /") if i not in (0, len(out) - 1) else "  " + line
            for i, line in enumerate(out)
        )

    def functions_section(self):
        """The prototypes, meta and undeclarable tables of the functions."""
        self.lines.append("\n// ---- functions ----")
        self.lines.append(
            "/**\n"
            " * The C prototype koffi declares for each function (one lib.func per function).\n"
            " * _Out_ marks what koffi copies back into the JS array/object passed.\n */\n"
            "const prototypes = Object.freeze({"
        )
        for fn in self.api["functions"]:
            if fn["name"] in UNDECLARABLE:
                continue
            ret = norm(fn["returns"])
            params = ", ".join(self.param_decl(p) for p in fn["params"]) or "void"
            self.lines.append(self.jsdoc(fn))
            name = fn["name"]
            self.lines.append(f"  {name}: {js_str(f'{ret} {name}({params})')},")
        self.lines.append("});")
        self.lines.append(
            "/** Per function: ABI version it appeared in, ownership of its result, errors. */\n"
            "const meta = Object.freeze({"
        )
        for fn in self.api["functions"]:
            ok = fn.get("ownership_kind") or {}
            result = js_str(ok.get("result")) if ok.get("result") else "null"
            release_with = js_str(ok.get("release_with")) if ok.get("release_with") else "null"
            self.lines.append(
                f"  {fn['name']}: Object.freeze({{ since: {js_str(fn['since'])}, "
                f"result: {result}, "
                f"releaseWith: {release_with}, "
                f"errors: Object.freeze({json.dumps(fn['errors'])}) }}),"
            )
        self.lines.append("});")
        self.lines.append(
            "/** Functions koffi cannot declare, with why (none). */\n"
            "const undeclarable = Object.freeze({"
            + "".join(f"\n  {k}: {js_str(v)}," for k, v in UNDECLARABLE.items())
            + "});"
        )

    def loader(self):
        """The open() loader, which declares each function lazily, and the exports."""
        self.lines.append(
            r"""
// ---- loading ----
/**
 * Opens libc10c and returns an object with one property per C function (named as in C). Each
 * is declared with lib.func(prototype) on its first use and cached, so opening costs one dlopen.
 * @param {string} path library path or SONAME for the system's search (e.g. 'libc10c.so.1')
 * @returns {{lib: object, fn: Record<string, Function>, declareAll: () => number}}
 */
function open(path) {
  const lib = koffi.load(path);
  const fn = Object.create(null);
  for (const name of Object.keys(prototypes)) {
    Object.defineProperty(fn, name, {
      configurable: true,
      enumerable: true,
      get() {
        const f = lib.func(prototypes[name]);
"""
            "        Object.defineProperty(fn, name,"
            " { value: f, enumerable: true, configurable: false, writable: false });\n"
            r"""        return f;
      },
    });
  }
  /** Declares every function now; returns how many. */
  function declareAll() {
    let n = 0;
    for (const name of Object.keys(prototypes)) if (fn[name]) n++;
    return n;
  }
  return { lib, fn, declareAll };
}

module.exports = { koffi, types, enums, constants, prototypes, meta, undeclarable, open };
"""
        )

    def run(self) -> str:
        """The whole text of lib/ffi.js."""
        self.header()
        self.opaque_types()
        self.typedef_section()
        self.struct_section()
        self.enums_section()
        self.functions_section()
        self.loader()
        return "\n".join(self.lines).rstrip() + "\n"


def main() -> int:
    """Writes (or with --check, compares) lib/ffi.js; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when lib/ffi.js is stale")
    args = ap.parse_args()
    api = json.loads(API.read_text())
    text = Gen(api).run()
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT.relative_to(HERE)} is stale: run python generate.py", file=sys.stderr)
            return 1
        print(f"{OUT.relative_to(HERE)} is up to date ({len(api['functions'])} functions)")
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(HERE)} ({len(api['functions'])} functions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
