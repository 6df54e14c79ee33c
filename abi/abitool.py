"""libc10c's ABI facts and the rules that compare them with a frozen release (abi/README.md).

Subcommands (each exits 1 and prints every finding when a rule is broken):

  map-check INCLUDE_DIR MAP        the version script lists exactly the C10C_API functions of
                                   the public headers, in nodes C10C_<major>.0, .1, ... (each
                                   sorted, no wildcard, no name twice), the newest node no
                                   newer than C10C_ABI_VERSION_MINOR
  exports LIBRARY MAP              the library exports exactly the map's name@node pairs
  symbols LIBRARY                  prints the exported name@version pairs (symbols.txt)
  snapshot INCLUDE_DIR             prints every public constant (enumerators, integer and string
                                   macros), the size, alignment and field offsets of every public
                                   struct and the width and signedness of every scalar typedef,
                                   as a C program compiled against the headers sees them
                                   (constants.txt); $CC compiles it (default cc)
  typeinfo ABI_XML SYMBOLS         every exported function has type information in the abidw XML
  compare RELEASE_DIR SYMBOLS SNAPSHOT SUPPRESSIONS CONSTANTS_ALLOW
                                   the rules of abi/README.md between a frozen release and the
                                   current library's symbols and snapshot
  target-snapshot INCLUDE_DIR --target NAME --cc CC [--flags F] [--run RUNNER] [--exe-suffix S]
                                   the snapshot's constants and layouts plus every function's
                                   return and parameter sizes and alignments ('abi' lines) as
                                   CC's target sees them: read from the object file, and with
                                   --run also printed by the program run there (both must agree)
  compare-target RELEASE/TARGET/layout.txt SNAPSHOT SUPPRESSIONS CONSTANTS_ALLOW
                                   compare's constant and layout rules for one target
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

NODE = re.compile(r"^C10C_(\d+)\.(\d+)$")


# ---- public headers and the version script ----


def strip_comments(text: str) -> str:
    """C and C++ comments removed (string literals in headers hold no comment markers)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def declared_functions(include_dir: Path) -> tuple[set[str], list[str]]:
    """The c10c_ functions the public headers declare with C10C_API, and parse problems.

    Every C10C_API use must parse as a function declaration: nothing may slip past.
    """
    names: set[str] = set()
    problems = []
    for h in sorted((include_dir / "c10c").glob("*.h")):
        text = strip_comments(h.read_text())
        text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
        uses = len(re.findall(r"\bC10C_API\b", text))
        found = re.findall(r"\bC10C_API\b[^;(]*?\b(c10c_\w+)\s*\(", text, re.S)
        if uses != len(found):
            problems.append(
                f"{h.name}: {uses} C10C_API declarations but {len(found)} parsed as functions "
                "(exported variables or unusual declarators are not allowed)"
            )
        names |= set(found)
    return names, problems


def abi_minor(include_dir: Path) -> int:
    """C10C_ABI_VERSION_MINOR of version.h."""
    text = (include_dir / "c10c" / "version.h").read_text()
    m = re.search(r"#define\s+C10C_ABI_VERSION_MINOR\s+(\d+)", text)
    if not m:
        raise SystemExit("version.h defines no C10C_ABI_VERSION_MINOR")
    return int(m.group(1))


def parse_map(path: Path) -> tuple[list[tuple[str, list[str], list[str], str]], list[str]]:
    """Nodes of a GNU ld version script as (name, globals, locals, parent), in file order."""
    text = re.sub(r"#[^\n]*", " ", strip_comments(path.read_text()))
    nodes = []
    problems = []
    pos = 0
    node_re = re.compile(r"\s*([\w.]+)\s*\{(.*?)\}\s*([\w.]*)\s*;", re.S)
    while text[pos:].strip():
        m = node_re.match(text, pos)
        if not m:
            problems.append(
                f"{path}: cannot parse the version script near {text[pos : pos + 40]!r}"
            )
            break
        name, body, parent = m.group(1), m.group(2), m.group(3)
        globs: list[str] = []
        locs: list[str] = []
        current = None
        for raw in re.split(r"(global:|local:|;)", body):
            part = raw.strip()
            if part == "global:":
                current = globs
            elif part == "local:":
                current = locs
            elif part and part != ";":
                if current is None:
                    problems.append(f"{name}: {part!r} outside global:/local:")
                else:
                    current.append(part)
        nodes.append((name, globs, locs, parent))
        pos = m.end()
    return nodes, problems


def map_check(include_dir: Path, map_path: Path) -> int:  # noqa: PLR0912
    """The map-check subcommand."""
    declared, problems = declared_functions(include_dir)
    nodes, more = parse_map(map_path)
    problems += more
    minor = abi_minor(include_dir)
    listed: dict[str, str] = {}
    major = None
    for i, (name, globs, locs, parent) in enumerate(nodes):
        m = NODE.match(name)
        if not m:
            problems.append(f"node {name}: not named C10C_<major>.<minor>")
            continue
        if major is None:
            major = m.group(1)
        if m.group(1) != major or int(m.group(2)) != i:
            problems.append(
                f"node {name}: expected C10C_{major}.{i} (one node per ABI minor, in order)"
            )
        expected_parent = nodes[i - 1][0] if i else ""
        if parent != expected_parent:
            problems.append(
                f"node {name}: inherits {parent or 'nothing'}, expected "
                f"{expected_parent or 'nothing'}"
            )
        if i == 0 and locs != ["*"]:
            problems.append(f"node {name}: needs 'local: *;' (hide everything not listed)")
        if i and locs:
            problems.append(f"node {name}: 'local:' belongs to the first node only")
        if int(m.group(2)) > minor:
            problems.append(
                f"node {name} is newer than C10C_ABI_VERSION_MINOR {minor} "
                "(bump it in include/c10c/version.h)"
            )
        if globs != sorted(globs):
            problems.append(f"node {name}: names are not sorted")
        for g in globs:
            if re.search(r"[*?\[]", g):
                problems.append(f"node {name}: wildcard {g!r} (list every function by name)")
            elif g in listed:
                problems.append(f"{g} is listed in {listed[g]} and in {name}")
            else:
                listed[g] = name
    for n in sorted(declared - set(listed)):
        newest = nodes[-1][0] if nodes else "C10C_1.0"
        problems.append(
            f"{n} is declared C10C_API in include/c10c but not listed in {map_path.name} "
            f"(add it to the newest node; if {newest} is frozen, to a new one)"
        )
    for n in sorted(set(listed) - declared):
        problems.append(
            f"{n} is listed in {map_path.name} ({listed[n]}) but no public header "
            "declares it C10C_API"
        )
    for p in problems:
        print(p)
    if problems:
        return 1
    print(
        f"{len(listed)} functions in {len(nodes)} node(s) of {map_path.name}, all declared C10C_API"
    )
    return 0


# ---- the built library ----


def exported(library: str) -> tuple[set[str], list[str]]:
    """name@version of every defined dynamic symbol (readelf), and problems.

    A problem is an unversioned symbol or one without the public c10c_ prefix.
    """
    out = subprocess.run(
        ["readelf", "-W", "--dyn-syms", library], check=True, capture_output=True, text=True
    ).stdout
    pairs = set()
    problems = []
    for line in out.splitlines():
        f = line.split()
        if len(f) < 8 or not f[0].rstrip(":").isdigit() or f[6] == "UND":
            continue
        if f[4] == "LOCAL":
            continue  # not exported (aarch64's ld lists section symbols such as .init)
        name = f[7]
        if f[6] == "ABS" and NODE.match(name):
            continue  # the definition of a version node
        base, _, version = name.replace("@@", "@").partition("@")
        if not base.startswith("c10c_") or base.startswith("c10c__"):
            problems.append(f"exported symbol without the public c10c_ prefix: {name}")
        if not version:
            problems.append(f"exported symbol without a version node: {name}")
        pairs.add(f"{base}@{version}")
    return pairs, problems


def export_differences(have: set[str], want: set[str], map_name: str) -> list[str]:
    """A line for each export the map lacks and each map entry not exported."""
    return [f"exported but not in {map_name}: {p}" for p in sorted(have - want)] + [
        f"in {map_name} but not exported: {p}" for p in sorted(want - have)
    ]


def exports_check(library: str, map_path: Path) -> int:
    """The exports subcommand."""
    pairs, problems = exported(library)
    nodes, more = parse_map(map_path)
    want = {f"{g}@{name}" for name, globs, _, _ in nodes for g in globs}
    problems += more + export_differences(pairs, want, map_path.name)
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"{len(pairs)} exported symbols, exactly the name@node pairs of {map_path.name}")
    return 0


def typeinfo_check(xml: str, symbols: str) -> int:
    """The typeinfo subcommand."""
    text = Path(xml).read_text()
    decls = set(re.findall(r"<function-decl name='(c10c_\w+)'", text))
    names = {s.split("@")[0] for s in read_lines(symbols)}
    missing = sorted(names - decls)
    for n in missing:
        print(
            f"{xml}: no type information for {n} (abidiff could not compare its signature; "
            "build with --buildtype=debug: gcc's LTO at -O2 drops some functions' DWARF)"
        )
    if "<abi-instr" not in text:
        print(f"{xml}: holds no types at all (a stripped library?)")
        return 1
    return 1 if missing else 0


# ---- constants and layouts ----

SCALARS = {
    "char",
    "signed",
    "unsigned",
    "short",
    "int",
    "long",
    "bool",
    "_Bool",
    "float",
    "double",
    "size_t",
    "ptrdiff_t",
    "intptr_t",
    "uintptr_t",
} | {f"{u}int{n}_t" for u in ("", "u") for n in (8, 16, 32, 64)}


def _public_headers(include_dir: Path) -> tuple[list[str], str]:
    """The public headers' names, and a C source including every one of them."""
    headers = sorted(h.name for h in (include_dir / "c10c").glob("*.h"))
    return headers, "".join(f"#include <c10c/{h}>\n" for h in headers)


def public_text(include_dir: Path, cc: list[str]) -> tuple[str, dict[str, str], list[str]]:
    """The public headers preprocessed (their own lines), their object-like macros, their names."""
    headers, src = _public_headers(include_dir)
    args = [*cc, "-std=c11", "-I", str(include_dir), "-x", "c", "-"]
    pre = subprocess.run(
        [*args[:1], "-E", *args[1:]], input=src, check=True, capture_output=True, text=True
    ).stdout
    own = []
    keep = False
    inc = str((include_dir / "c10c").resolve())
    for line in pre.splitlines():
        m = re.match(r'#\s*\d+\s+"([^"]*)"', line)
        if m:
            keep = os.path.abspath(m.group(1)).startswith(inc) or m.group(1).startswith(
                str(include_dir / "c10c")
            )
            continue
        if keep:
            own.append(line)
    defined_here = set()
    for h in headers:
        defined_here |= set(
            re.findall(r"#\s*define\s+(\w+)", (include_dir / "c10c" / h).read_text())
        )
    dm = subprocess.run(
        [*args[:1], "-E", "-dM", *args[1:]], input=src, check=True, capture_output=True, text=True
    ).stdout
    macros = {}
    for line in dm.splitlines():
        m = re.match(r"#define (\w+)(\(?)\s*(.*)$", line)
        if m and m.group(1) in defined_here and not m.group(2) and m.group(3).strip():
            macros[m.group(1)] = m.group(3).strip()
    return "\n".join(own), macros, headers


def split_top(text: str, sep: str) -> list[str]:
    """Split at sep outside parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


# One snapshot fact: a line template whose {} take the values of its C expressions, in order.
# Each {} is formatted by the marker after it: "{}" an unsigned number, "{c}" a constant
# (two values: whether it is negative, its magnitude), "{s}" signed or unsigned (one value).
Fact = tuple[str, list[str]]


def _const(name: str) -> Fact:
    return (
        f"const {name} = {{c}}",
        [
            f"(({name}) < 0)",
            f"(({name}) < 0 ? 0ULL - (unsigned long long)(long long)({name}) "
            f": (unsigned long long)({name}))",
        ],
    )


def snapshot_facts(include_dir: Path, cc: list[str]) -> list[Fact]:  # noqa: PLR0912
    """Every public constant, struct layout and scalar typedef, as facts to evaluate in C."""
    text, macros, _ = public_text(include_dir, cc)
    facts: list[Fact] = []
    for m in re.finditer(r"\benum\s*\w*\s*\{([^}]*)\}", text):
        for item in split_top(m.group(1), ","):
            facts.append(_const(item.split("=")[0].strip()))
    for name, value in sorted(macros.items()):
        if value.startswith('"'):
            raise SystemExit(f"{name}: string macros are not part of the snapshot's C program")
        if re.fullmatch(r"[\w\s()<>|&+\-*/~%!^?:]+", value) and not re.search(
            r"\b(__attribute__|__declspec|extern|typedef|struct)\b", value
        ):
            facts.append(_const(name))
    for m in re.finditer(r"\b(typedef\s+)?struct\s+(\w*)\s*\{([^{}]*)\}\s*(\w*)\s*;", text):
        tag, fields, tname = m.group(2), m.group(3), m.group(4)
        t = tname if m.group(1) and tname else f"struct {tag}"
        facts.append((f"sizeof {t} = {{}}", [f"sizeof({t})"]))
        facts.append((f"alignof {t} = {{}}", [f"_Alignof({t})"]))
        for raw in split_top(fields, ";"):
            decl = " ".join(raw.split())
            fp = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)
            if fp:
                declarators = [(fp.group(1), decl.replace(fp.group(0), "(*)"))]
            else:
                first = split_top(decl, ",")
                base = re.match(r"(.*?)\s*\**\s*(\w+)\s*(\[[^\]]*\])?$", first[0])
                if not base:
                    raise SystemExit(f"cannot parse field {decl!r} of {t}")
                btype = base.group(1)
                declarators = []
                for d in first:
                    dm = re.match(r"(?:.*?\s)?(\**)\s*(\w+)\s*(\[[^\]]*\])?$", d)
                    if not dm:
                        raise SystemExit(f"cannot parse field {decl!r} of {t}")
                    declarators.append(
                        (dm.group(2), f"{btype} {dm.group(1)}{dm.group(3) or ''}".strip())
                    )
            for fname, declared in declarators:
                facts.append(
                    (
                        f"field {t}.{fname} = {{}} {{}} {declared}",
                        [f"offsetof({t}, {fname})", f"sizeof((({t} *)0)->{fname})"],
                    )
                )
    for m in re.finditer(r"\btypedef\s+([\w\s]+?)\s+(\w+)\s*;", text):
        words = m.group(1).split()
        if all(w in SCALARS for w in words):
            name = m.group(2)
            if words[-1] in ("float", "double"):
                facts.append((f"typedef {name} = {{}}", [f"sizeof({name})"]))
            else:
                facts.append(
                    (f"typedef {name} = {{}} {{s}}", [f"sizeof({name})", f"((({name})-1) < 0)"])
                )
    return facts


MAGIC = "c10c-abi-facts:"  # 15 characters and the NUL: the 16 bytes before the values


def snapshot_program(include_dir: Path, facts: list[Fact]) -> str:
    """The C program that holds every fact's values in one array and prints them.

    The array is an initialized constant behind MAGIC, so its values can also be read from the
    object file of a target that cannot run here (read_object_values); the first value, 1,
    tells the byte order.
    """
    headers, _ = _public_headers(include_dir)
    exprs = [e for _, es in facts for e in es]
    lines = ["#include <stdio.h>", "#include <stddef.h>"]
    lines += [f"#include <c10c/{h}>" for h in headers]
    lines += [
        f"struct c10c_abi_facts {{ char magic[16]; unsigned long long v[{len(exprs) + 1}]; }};",
        "const struct c10c_abi_facts c10c_abi_facts = {",
        f'  "{MAGIC}",',
        "  {1ULL,",
    ]
    lines += [f"   (unsigned long long)({e})," for e in exprs]
    lines += [
        "  }",
        "};",
        "int main(void) {",
        "  size_t i;",
        "  for (i = 1; i < sizeof c10c_abi_facts.v / sizeof c10c_abi_facts.v[0]; i++)",
        '    printf("%llu\\n", c10c_abi_facts.v[i]);',
        "  return 0;",
        "}",
    ]
    return "\n".join(lines) + "\n"


def read_object_values(data: bytes, count: int) -> list[int]:
    """The values snapshot_program's array holds, from its object file's bytes."""
    at = data.find(MAGIC.encode() + b"\0")
    if at < 0 or data.find(MAGIC.encode() + b"\0", at + 1) >= 0:
        raise SystemExit("abitool: the object file holds the facts array not exactly once")
    at += 16
    order = "little" if int.from_bytes(data[at : at + 8], "little") == 1 else "big"
    if int.from_bytes(data[at : at + 8], order) != 1:
        raise SystemExit("abitool: the facts array does not start with 1 (unsupported object file)")
    return [int.from_bytes(data[at + 8 * i : at + 8 * i + 8], order) for i in range(1, count + 1)]


def format_facts(facts: list[Fact], values: list[int]) -> list[str]:
    """Each fact's line, its values filled in."""
    out = []
    it = iter(values)
    for template, exprs in facts:
        parts = re.split(r"\{(c|s|)\}", template)
        line = parts[0]
        for kind, tail in zip(parts[1::2], parts[2::2], strict=True):
            if kind == "c":
                neg = next(it)
                line += ("-" if neg else "") + str(next(it))
            elif kind == "s":
                line += "signed" if next(it) else "unsigned"
            else:
                line += str(next(it))
            line += tail
        out.append(line)
        del exprs
    return out


# names a C10C_CDEF preprocessing leaves undeclared (the standard headers are skipped there)
_STD_TYPES = (
    "int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t intptr_t uintptr_t "
    "size_t ptrdiff_t bool"
).split()


def _strip_names(node: Any) -> None:
    """Parameter names out of a pycparser declaration (they are not part of the ABI)."""
    c_ast = importlib.import_module("pycparser.c_ast")

    for param in getattr(getattr(node, "args", None), "params", None) or []:
        if isinstance(param, c_ast.Decl):
            param.name = None
        inner = param.type if isinstance(param, c_ast.Decl) else param
        while not isinstance(inner, (c_ast.TypeDecl, c_ast.IdentifierType, type(None))):
            _strip_names(inner)
            inner = getattr(inner, "type", None)
        if isinstance(inner, c_ast.TypeDecl):
            inner.declname = None


def _parse_public_headers(include_dir: Path, cc: list[str]) -> tuple[Any, Any]:
    """The public headers, preprocessed by cc, as a pycparser AST and a C writer.

    Declarations only (-DC10C_CDEF); the writer turns the AST's nodes back into C.
    """
    c_generator = importlib.import_module("pycparser.c_generator")
    c_parser = importlib.import_module("pycparser.c_parser")
    _, src = _public_headers(include_dir)
    text = subprocess.run(
        [*cc, "-E", "-P", "-DC10C_CDEF", "-std=c11", "-I", str(include_dir), "-x", "c", "-"],
        input=src,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    preamble = "".join(f"typedef int {t};\n" for t in _STD_TYPES)
    return c_parser.CParser().parse(preamble + text), c_generator.CGenerator()


def signatures(include_dir: Path, cc: list[str]) -> list[str]:
    """'func NAME = TYPE (PARAMETER TYPES)' of every public function, parameter names left out.

    abidiff does not report every signature change (two pointer parameters swapped, for
    instance, passed it as 'filtered out'), so the snapshot records them as the headers write
    them, typedef names kept.
    """
    c_ast = importlib.import_module("pycparser.c_ast")
    ast, gen = _parse_public_headers(include_dir, cc)
    out = []
    for decl in ast.ext:
        if isinstance(decl, c_ast.Decl) and isinstance(decl.type, c_ast.FuncDecl):
            if not (decl.name or "").startswith("c10c_"):
                continue
            _strip_names(decl.type)
            sig = " ".join(gen.visit(decl).split())
            out.append(f"func {decl.name} = {sig}")
    return out


def function_facts(include_dir: Path, cc: list[str]) -> list[Fact]:
    """'abi NAME = RETURN SIZE/ALIGN (PARAMETER SIZE/ALIGN, ...)' of every public function.

    The sizes and alignments of what a call passes, as each target sees them (a parameter of
    type long, or a struct passed by value, would differ between targets).
    """
    c_ast = importlib.import_module("pycparser.c_ast")
    ast, gen = _parse_public_headers(include_dir, cc)
    facts: list[Fact] = []
    for decl in ast.ext:
        if not (isinstance(decl, c_ast.Decl) and isinstance(decl.type, c_ast.FuncDecl)):
            continue
        if not (decl.name or "").startswith("c10c_"):
            continue
        _strip_names(decl.type)
        types = [gen.visit(decl.type.type)]
        for param in getattr(decl.type.args, "params", None) or []:
            if isinstance(param, c_ast.EllipsisParam):
                raise SystemExit(f"{decl.name}: variadic public functions are not supported")
            inner = param.type if isinstance(param, c_ast.Decl) else param
            if isinstance(inner, c_ast.ArrayDecl):
                raise SystemExit(f"{decl.name}: an array parameter (write a pointer)")
            types.append(" ".join(gen.visit(param).split()))
        if types[1:] == ["void"]:
            types = types[:1]
        sizes = ["void" if t == "void" else "{}/{}" for t in types]
        exprs = [e for t in types if t != "void" for e in (f"sizeof({t})", f"_Alignof({t})")]
        facts.append((f"abi {decl.name} = {sizes[0]} ({', '.join(sizes[1:])})", exprs))
    return facts


def evaluate_facts(
    include_dir: Path,
    facts: list[Fact],
    *,
    cc: list[str],
    flags: list[str],
    run: list[str] | None,
    exe_suffix: str = "",
) -> list[str]:
    """The facts' lines as cc's target sees them.

    The values are read from the compiled object file; when run is given (a runner such as
    ['qemu-aarch64'], or [] for the build machine) the program is also linked and run, and
    what it prints must agree with the object file.
    """
    program = snapshot_program(include_dir, facts)
    count = sum(len(es) for _, es in facts)
    with tempfile.TemporaryDirectory() as tmp:
        src, obj = Path(tmp) / "snapshot.c", Path(tmp) / "snapshot.o"
        exe = Path(tmp) / f"snapshot{exe_suffix}"
        src.write_text(program)
        base = [*cc, "-std=c11", *flags, "-I", str(include_dir)]
        r = subprocess.run(
            [*base, "-c", str(src), "-o", str(obj)], check=False, capture_output=True, text=True
        )
        if r.returncode:
            print(r.stderr, file=sys.stderr)
            raise SystemExit(f"abitool: the generated program did not compile with {cc}")
        values = read_object_values(obj.read_bytes(), count)
        if run is not None:
            r = subprocess.run(
                [*cc, *flags, str(obj), "-o", str(exe)], check=False, capture_output=True, text=True
            )
            if r.returncode:
                print(r.stderr, file=sys.stderr)
                raise SystemExit(f"abitool: the generated program did not link with {cc}")
            out = subprocess.run(
                [*run, str(exe)], check=True, capture_output=True, text=True
            ).stdout
            ran = [int(v) for v in out.split()]
            if ran != values:
                raise SystemExit(
                    f"abitool: the program run under {run or 'this machine'} printed other "
                    "values than its object file holds"
                )
    return format_facts(facts, values)


def snapshot(include_dir: Path) -> int:
    """The snapshot subcommand."""
    cc = (os.environ.get("CC") or "cc").split()
    facts = snapshot_facts(include_dir, cc)
    out = evaluate_facts(include_dir, facts, cc=cc, flags=[], run=[])
    lines = sorted(set(out) | set(signatures(include_dir, cc)))
    print("# libc10c's public constants and layouts (abi/abitool.py snapshot); x86-64 LP64")
    print("\n".join(lines))
    return 0


# ---- comparison with a frozen release ----


def read_lines(path: str) -> list[str]:
    """Lines that are neither empty nor comments."""
    return [
        ln.strip()
        for ln in Path(path).read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]


def parse_snapshot(path: str) -> dict[str, str]:
    """'kind name' -> value."""
    facts = {}
    for ln in read_lines(path):
        key, _, value = ln.partition(" = ")
        facts[key] = value
    return facts


def size_versioned(suppressions: str) -> set[str]:
    """Struct names a [suppress_type] section lets grow at the end."""
    names = set()
    for section in re.split(r"^\s*\[", Path(suppressions).read_text(), flags=re.M):
        if not section.startswith("suppress_type]"):
            continue
        kv = dict(re.findall(r"^\s*(\w+)\s*=\s*(.*?)\s*$", section, flags=re.M))
        if kv.get("has_data_member_inserted_at") == "end" and "name" in kv:
            names.add(kv["name"])
    return names


def node_minor(version: str) -> int:
    """1 for C10C_1.1; -1 for anything else."""
    m = NODE.match(version)
    return int(m.group(2)) if m else -1


def compare_facts(  # noqa: PLR0912
    release: str,
    rel_minor: int,
    old_f: dict[str, str],
    new_f: dict[str, str],
    *,
    suppressions: str,
    allow: str,
    problems: list[str],
) -> list[str]:
    """The layout and constant rules between a release's facts and today's; returns additions."""
    rules = {}
    for ln in read_lines(allow):
        rule, name = ln.split()[:2]
        rules[name] = rule
    growing = size_versioned(suppressions)
    cur_minor = int(new_f.get("const C10C_ABI_VERSION_MINOR", "-1"))
    additions = []
    for t in sorted(growing):
        if new_f.get(f"field {t}.struct_size", "").split(" ")[:1] != ["0"]:
            problems.append(
                f"{suppressions}: {t} is listed as size-versioned but has no "
                "struct_size field at offset 0"
            )
    for key, value in sorted(old_f.items()):
        kind, _, name = key.partition(" ")
        cur = new_f.get(key)
        if cur == value:
            continue
        if cur is None:
            problems.append(f"{key} = {value} of release {release} is gone")
            continue
        if kind == "const" and name in rules:
            rule = rules[name]
            if rule == "release" or (rule == "grows" and int(cur) >= int(value)):
                continue
            problems.append(f"{key} went from {value} to {cur}; abi/constants.allow lets it {rule}")
            continue
        if kind == "sizeof" and name in growing and int(cur) > int(value):
            additions.append(f"{name} grew from {value} to {cur} bytes")
            continue
        problems.append(f"{key} changed: {value} in release {release}, {cur} now")
    for key, value in sorted(new_f.items()):
        if key in old_f:
            continue
        kind, _, name = key.partition(" ")
        if kind == "field":
            struct = name.rsplit(".", 1)[0]
            if struct in growing and f"sizeof {struct}" in old_f:
                if int(value.split()[0]) < int(old_f[f"sizeof {struct}"]):
                    problems.append(
                        f"{key} = {value}: a field inside release {release}'s "
                        f"{old_f[f'sizeof {struct}']} bytes of {struct} (append only)"
                    )
                continue
            if f"sizeof {struct}" in old_f:
                problems.append(
                    f"{key} = {value}: new field in {struct}, which is not "
                    "size-versioned (abi/suppressions.abignore)"
                )
                continue
        additions.append(f"{key} = {value}")
    if additions and cur_minor <= rel_minor:
        for a in additions:
            problems.append(
                f"added since release {release} without an ABI minor bump: {a} "
                f"(C10C_ABI_VERSION_MINOR is {cur_minor})"
            )
    return additions


def compare(release_dir: str, symbols: str, snap: str, suppressions: str, allow: str) -> int:
    """The compare subcommand: the rules of abi/README.md."""
    rel = Path(release_dir)
    release = rel.name
    m = re.fullmatch(r"(\d+)\.(\d+)", release)
    if not m:
        raise SystemExit(f"{rel}: a release directory is named MAJOR.MINOR")
    rel_minor = int(m.group(2))
    problems = []

    # symbols: every frozen pair stays; anything new is in a node newer than the release's
    old = set(read_lines(str(rel / "symbols.txt")))
    new = set(read_lines(symbols))
    frozen_newest = max((node_minor(p.split("@")[1]) for p in old), default=-1)
    for p in sorted(old - new):
        problems.append(
            f"symbol {p} of release {release} is gone or changed version (old hosts fail to load)"
        )
    for p in sorted(new - old):
        version = p.split("@")[1]
        if node_minor(version) <= max(frozen_newest, rel_minor):
            problems.append(
                f"new symbol {p} is in a node frozen by release {release}: put it into "
                f"C10C_1.{max(frozen_newest, rel_minor) + 1} and bump C10C_ABI_VERSION_MINOR"
            )

    # constants and layouts
    old_f = parse_snapshot(str(rel / "constants.txt"))
    new_f = parse_snapshot(snap)
    additions = compare_facts(
        release, rel_minor, old_f, new_f, suppressions=suppressions, allow=allow, problems=problems
    )
    for p in problems:
        print(p)
    if problems:
        return 1
    print(
        f"release {release}: {len(old)} symbols and {len(old_f)} constants and layouts kept"
        + (
            f"; {len(additions)} additions under ABI minor {new_f['const C10C_ABI_VERSION_MINOR']}"
            if additions
            else ""
        )
    )
    return 0


def target_snapshot(args: list[str]) -> int:
    """The target-snapshot subcommand."""
    ap = argparse.ArgumentParser(prog="abitool.py target-snapshot")
    ap.add_argument("include_dir", type=Path)
    ap.add_argument("--target", required=True)
    ap.add_argument("--cc", required=True, help="the target's C compiler, a command line")
    ap.add_argument("--flags", default="", help="compiler and linker flags")
    ap.add_argument("--run", help="run the program under this runner too ('' for this machine)")
    ap.add_argument("--exe-suffix", default="")
    a = ap.parse_args(args)
    cc = a.cc.split()
    facts = snapshot_facts(a.include_dir, ["cc"]) + function_facts(a.include_dir, ["cc"])
    run = None if a.run is None else a.run.split()
    out = evaluate_facts(
        a.include_dir, facts, cc=cc, flags=a.flags.split(), run=run, exe_suffix=a.exe_suffix
    )
    print(
        f"# libc10c's constants, layouts and call sizes on {a.target}: abi/abitool.py "
        f"target-snapshot ({'object file and run' if run is not None else 'object file'})"
    )
    print("\n".join(sorted(set(out))))
    return 0


def compare_target(release_snapshot: str, snap: str, suppressions: str, allow: str) -> int:
    """The compare-target subcommand: a target's facts against a frozen release's."""
    path = Path(release_snapshot)
    release = path.parent.parent.name
    m = re.fullmatch(r"(\d+)\.(\d+)", release)
    if not m:
        raise SystemExit(f"{path}: a release's target snapshot is MAJOR.MINOR/TARGET/FILE")
    problems: list[str] = []
    old_f, new_f = parse_snapshot(release_snapshot), parse_snapshot(snap)
    additions = compare_facts(
        release,
        int(m.group(2)),
        old_f,
        new_f,
        suppressions=suppressions,
        allow=allow,
        problems=problems,
    )
    for p in problems:
        print(p)
    if problems:
        return 1
    print(
        f"release {release} on {path.parent.name}: {len(old_f)} facts kept, "
        f"{len(additions)} additions"
    )
    return 0


def main() -> int:
    """Dispatch a subcommand."""
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "map-check":
        return map_check(Path(args[0]), Path(args[1]))
    if cmd == "exports":
        return exports_check(args[0], Path(args[1]))
    if cmd == "symbols":
        pairs, problems = exported(args[0])
        for p in problems:
            print(p, file=sys.stderr)
        print("\n".join(sorted(pairs)))
        return 1 if problems else 0
    if cmd == "snapshot":
        return snapshot(Path(args[0]))
    if cmd == "typeinfo":
        return typeinfo_check(args[0], args[1])
    if cmd == "compare":
        return compare(*args[:5])
    if cmd == "target-snapshot":
        return target_snapshot(args)
    if cmd == "compare-target":
        return compare_target(*args[:4])
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
