"""One machine-readable description of libc10c's API, abi/api.json.

It is generated from the public headers and the version script; the bindings' declarations are
generated from it.

For every exported function: its header, the ABI version it appeared in (its node in
lib/libc10c.map), return and parameter types as the headers write them, each parameter's role
(``out`` for the out-parameters that come first, ``in`` otherwise) and nullability, the doc
comment's summary, its Ownership text and what that says in a form a generator can use (a result
that is a new reference and the function that releases it, or borrowed), the C10C_STATUS_ codes
its Errors text names, and its thread-safety text (DESIGN.md: any thread, unless the comment says
otherwise). Then every struct (fields; whether it is versioned by a first ``struct_size``),
every enum (its values, as a C compiler sees them) and every constant macro, and the opaque
handle types.

Nullability, read from the comments as they are written (STYLE.md's doc rules): a pointer
parameter is ``"nullable": true`` when the comment calls the function NULL-safe (its first
parameter) or says the parameter "may be NULL"; ``false`` when the Errors text lists it under
C10C_STATUS_NULL_POINTER (or lists the status with no names: every pointer); else ``null``
(the comment does not say).

    python abi/describe.py               # writes abi/api.json
    python abi/describe.py --check       # fails when abi/api.json is stale or misses a symbol
"""

from __future__ import annotations

import argparse
import copy
import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import abitool  # noqa: E402

OUT = HERE / "api.json"
STATUS = re.compile(r"C10C_STATUS_[A-Z_]+")
SCALAR_OUT = re.compile(r"(?:bool|u?int(?:8|16|32|64)_t|size_t|int|float|double|char|uint8_t) \*")


def _join(body: str) -> str:
    return " ".join(
        " ".join(line.strip().lstrip("*").strip() for line in body.splitlines()).split()
    )


def section_comments(include_dir: Path) -> dict[str, str]:
    """Name -> the text of the ``/* ---- section ---- ... */`` comment its prototype is under.

    A section's comment states what its functions share (tensor.h's views: "Each makes *out a
    new reference ..."); a function whose own comment says nothing of ownership inherits it.
    """
    out = {}
    sect = re.compile(r"/\*\s*----[^\n]*?----*\s*((?:[^*]|\*(?!/))*)\*/")
    proto = re.compile(r"C10C_API[^;(]*?\b(c10c_\w+)\s*\([^;]*;")
    for header in sorted((include_dir / "c10c").glob("*.h")):
        text = header.read_text()
        marks = [(m.start(), _join(m.group(1))) for m in sect.finditer(text)]
        for m in proto.finditer(text):
            above = [body for pos, body in marks if pos < m.start()]
            out[m.group(1)] = above[-1] if above else ""
    return out


def doc_comments(include_dir: Path) -> dict[str, tuple[str, str]]:
    """Name -> (header, the comment right above its C10C_API prototype, joined into one line).

    Prototypes written one after another under one comment (the O(1) getters) share it.
    """
    docs = {}
    proto = re.compile(r"C10C_API[^;(]*?\b(c10c_\w+)\s*\([^;]*;")
    comment = re.compile(r"/\*((?:[^*]|\*(?!/))*)\*/\s*$")
    for header in sorted((include_dir / "c10c").glob("*.h")):
        text = header.read_text()
        last_doc, last_end = "", -1
        for m in proto.finditer(text):
            gap = text[last_end : m.start()] if last_end >= 0 else ""
            if last_end >= 0 and not gap.strip():
                doc = last_doc  # one comment for a group of prototypes
            else:
                c = comment.search(text[: m.start()])
                doc = _join(c.group(1) if c else "")
            docs[m.group(1)] = (header.name, doc)
            last_doc, last_end = doc, m.end()
    return docs


def sections(doc: str) -> dict[str, str]:
    """The summary (first sentence) and the Ownership:, Errors: and thread texts of a comment."""
    out = {"summary": re.split(r"(?<=[.!?])\s", doc, maxsplit=1)[0]}
    for key in ("Ownership", "Errors"):
        m = re.search(rf"\b{key}:\s*(.*?)(?=\b(?:Ownership|Errors|Thread safety):|$)", doc)
        if m:
            out[key.lower()] = m.group(1).strip()
    for sentence in re.split(r"(?<=[.])\s", doc):
        # a sentence that states a rule about threads, not one that names a thread in passing
        # ("the thread's last error says so", a key named thread_cache_kb)
        rule = re.search(
            r"\b(?:calling|this|each|any|that|one|same) thread\b|Thread[- ]safety|per thread",
            sentence,
        )
        if rule and len(sentence) < 400 and not re.search(r"Ownership:|Errors:|^Keys:", sentence):
            out["threads"] = re.sub(r"^Thread[- ]safety:\s*", "", sentence.strip())
            break
    return out


def type_text(gen: Any, node: Any) -> str:
    """A type as C writes it, without the declared name ("const int64_t *")."""
    c_ast = importlib.import_module("pycparser.c_ast")
    node = copy.deepcopy(node)
    inner = node
    while not isinstance(inner, c_ast.TypeDecl):
        if isinstance(inner, c_ast.FuncDecl):
            abitool._strip_names(inner)
        inner = inner.type
    inner.declname = None
    decl = c_ast.Typename(name=None, quals=[], align=None, type=node)
    return " ".join(gen.visit(decl).split())


def ownership(text: str, params: list[dict[str, Any]], returns: str, names: set[str]) -> dict:
    """What an Ownership text says, for a generator.

    A new reference through *out or returned, and which function releases it; or borrowed.
    """
    kind: dict[str, Any] = {}
    low = text.lower()
    if low.startswith("borrowed") or re.match(r"\*?out is borrowed", low):
        kind["result"] = "borrowed"
    elif re.search(r"new (?:weak )?reference|owned|owns|is the caller's|\bfree\b|freed with", low):
        kind["result"] = "owned"
    elif "borrowed" in low:
        kind["result"] = "borrowed"
    # the handle type the result is: the first out-parameter's pointee, or the return type
    handle = None
    out = [p for p in params if p["role"] == "out"]
    if out:
        handle = re.sub(r"\s*\*\s*\*$", "", out[0]["type"]).replace("struct ", "")
    elif returns.endswith("*"):
        handle = returns.rstrip("* ").replace("const ", "").replace("struct ", "")
    if handle and kind.get("result") == "owned":
        for release in (f"{handle}_release", f"{handle}_free"):
            if release in names:
                kind["release_with"] = release
                break
        named = re.search(r"(?:freed with|free (?:\S+ ){0,3}with|released? with) (c10c_\w+)", text)
        if named and named.group(1) in names:
            kind["release_with"] = named.group(1)
        elif "c10c_data_ptr_free" in text:
            kind["release_with"] = "c10c_data_ptr_free"
        elif "its deleter" in text:
            kind["release_with"] = "(its deleter)"
    return kind


def describe(include_dir: Path, map_path: Path, cc: list[str]) -> dict[str, Any]:  # noqa: PLR0912, PLR0915
    """The description: functions, structs, enums, opaque types and constants."""
    c_ast = importlib.import_module("pycparser.c_ast")
    ast, gen = abitool._parse_public_headers(include_dir, cc)
    nodes, problems = abitool.parse_map(map_path)
    if problems:
        raise SystemExit("\n".join(problems))
    since = {name: node.split("_", 1)[1] for node, globs, _, _ in nodes for name in globs}
    docs = doc_comments(include_dir)
    section = section_comments(include_dir)
    struct_headers = {
        m.group(1): h.name
        for h in sorted((include_dir / "c10c").glob("*.h"))
        for m in re.finditer(r"^\}\s*(\w+);", h.read_text(), re.M)
    }
    functions, structs, enums, opaque = [], [], [], []
    typedefs: list[dict[str, str]] = []
    decls = [d for d in ast.ext if getattr(d, "name", "") or isinstance(d, c_ast.Typedef)]
    all_names = {d.name for d in decls if isinstance(getattr(d, "type", None), c_ast.FuncDecl)}
    for d in ast.ext:
        if isinstance(d, c_ast.Decl) and isinstance(d.type, c_ast.FuncDecl):
            if not d.name.startswith("c10c_"):
                continue
            header, doc = docs.get(d.name, ("", ""))
            sec = sections(doc)
            shared = section.get(d.name, "")
            m_own = re.search(r"[^.;]*\bnew reference[^.;]*", shared)
            if "ownership" not in sec and m_own:
                sec["ownership"] = m_own.group(0).strip()
            if shared and "errors" in sec:  # the section's statuses apply to each
                sec["errors"] += " " + " ".join(STATUS.findall(shared))
            params = []
            for i, p in enumerate(d.type.args.params if d.type.args else []):
                if isinstance(p, c_ast.Typename):  # (void)
                    continue
                t = type_text(gen, p.type)
                role = "out" if (p.name or "").startswith("out") and t.endswith("*") else "in"
                if i > 0 and params and params[-1]["role"] == "in":
                    role = "in"  # out-parameters come first
                if SCALAR_OUT.fullmatch(t):
                    role = "out"  # a non-const pointer to a scalar is written (done, ms, out_len)
                params.append({"name": p.name, "type": t, "role": role})
            returns = type_text(gen, d.type.type)
            errors = sec.get("errors", "")
            null_listed = re.search(r"C10C_STATUS_NULL_POINTER(?:\s*\(([^)]*)\))?", errors)
            for i, p in enumerate(params):
                p["nullable"] = None
                if not p["type"].endswith("*"):
                    del p["nullable"]
                    continue
                if (i == 0 and "NULL-safe" in doc) or re.search(
                    rf"\b{re.escape(p['name'] or '')} (?:may be|can be) NULL", doc
                ):
                    p["nullable"] = True
                elif null_listed and (
                    null_listed.group(1) is None
                    or re.search(rf"\b{re.escape(p['name'] or '')}\b", null_listed.group(1))
                ):
                    p["nullable"] = False
            functions.append(
                {
                    "name": d.name,
                    "header": header,
                    "since": since.get(d.name),
                    "returns": returns,
                    "params": params,
                    "summary": sec.get("summary", ""),
                    "ownership": sec.get("ownership"),
                    "ownership_kind": ownership(
                        sec.get("ownership", ""), params, returns, all_names
                    ),
                    "errors": sorted(set(STATUS.findall(errors))),
                    "thread_safety": sec.get("threads", "any thread"),
                }
            )
        elif isinstance(d, c_ast.Typedef) and d.name.startswith(("c10c_", "DL")):
            t = d.type.type
            if isinstance(d.type, c_ast.PtrDecl) or isinstance(t, c_ast.IdentifierType):
                # scalar and function-pointer typedefs: c10c_dtype is int8_t, c10c_deleter ...
                typedefs.append({"name": d.name, "type": type_text(gen, d.type)})
            elif isinstance(t, c_ast.Struct):
                if t.decls is None:
                    opaque.append(d.name)
                else:
                    fields = [{"name": f.name, "type": type_text(gen, f.type)} for f in t.decls]
                    structs.append(
                        {
                            "name": d.name,
                            "header": struct_headers.get(d.name),
                            "fields": fields,
                            "versioned": bool(fields) and fields[0]["name"] == "struct_size",
                        }
                    )
            elif isinstance(t, c_ast.Enum):
                enums.append({"name": d.name, "values": [e.name for e in t.values.enumerators]})
        elif isinstance(d, c_ast.Decl) and isinstance(d.type, c_ast.Enum) and d.type.values:
            values_of = [e.name for e in d.type.values.enumerators]
            enums.append(
                {"name": d.type.name or f"(anonymous: {values_of[0]}, ...)", "values": values_of}
            )
    # every enumerator's value and every constant macro, as a C compiler sees them
    _, macros, _ = abitool.public_text(include_dir, cc)
    values = {}
    for line in subprocess_snapshot(include_dir):
        m = re.match(r"const (\w+) = (-?\d+)$", line)
        if m:
            values[m.group(1)] = int(m.group(2))
    for e in enums:
        e["values"] = {v: values.get(v) for v in e["values"]}
    # integer and string macros (not C10C_API, nor the brace initializers, which are C only)
    constants = {
        k: values[k] if k in values else v.strip('"')
        for k, v in sorted(macros.items())
        if k.startswith("C10C_") and (k in values or re.fullmatch(r'"[^"]*"', v))
    }
    return {
        "description": __doc__.split("\n\n")[0].replace("\n", " "),
        "abi": f"{values['C10C_ABI_VERSION_MAJOR']}.{values['C10C_ABI_VERSION_MINOR']}",
        "release": (
            f"{values['C10C_VERSION_MAJOR']}.{values['C10C_VERSION_MINOR']}."
            f"{values['C10C_VERSION_PATCH']}"
        ),
        "functions": sorted(functions, key=lambda f: f["name"]),
        "structs": sorted(structs, key=lambda s: s["name"]),
        "enums": sorted(enums, key=lambda e: e["name"] or ""),
        "opaque_types": sorted(opaque),
        "typedefs": sorted(typedefs, key=lambda t: t["name"]),
        "constants": constants,
    }


def subprocess_snapshot(include_dir: Path) -> list[str]:
    """Abitool's snapshot lines (constants and layouts, as a compiler sees them)."""
    out = subprocess.run(
        [sys.executable, str(HERE / "abitool.py"), "snapshot", str(include_dir)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return out.splitlines()


def main() -> int:
    """Write abi/api.json, or with --check compare it and the map's coverage."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if abi/api.json is stale")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    include_dir, map_path = ROOT / "include", ROOT / "lib" / "libc10c.map"
    api = describe(include_dir, map_path, [os.environ.get("CC", "cc")])
    nodes, _ = abitool.parse_map(map_path)
    exported = {name for _, globs, _, _ in nodes for name in globs}
    described = {f["name"] for f in api["functions"]}
    problems = [
        f"{n}: exported (lib/libc10c.map) but not described" for n in sorted(exported - described)
    ]
    problems += [f"{n}: described but not exported" for n in sorted(described - exported)]
    problems += [
        f"{f['name']}: no doc comment above its prototype"
        for f in api["functions"]
        if not f["summary"]
    ]
    text = json.dumps(api, indent=1, sort_keys=False) + "\n"
    if args.check:
        if Path(args.out).read_text() != text:
            problems.append(f"{args.out} is stale: run python abi/describe.py")
    else:
        Path(args.out).write_text(text)
    for p in problems:
        print(f"describe: {p}")
    if problems:
        return 1
    print(
        f"describe: {len(api['functions'])} functions (all {len(exported)} the map exports), "
        f"{len(api['structs'])} structs, {len(api['enums'])} enums, "
        f"{len(api['constants'])} constants"
        + ("; abi/api.json is current" if args.check else f"; wrote {args.out}")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
