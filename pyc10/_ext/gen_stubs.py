"""Generate the typed methods of ``pyc10/_ctensor.pyi`` and ``pyc10/_functions.pyi`` from the table.

The parser (argparse.c), the docstrings' signature lines and these stubs all come from
``signatures.h``, so they cannot drift: ``python pyc10/_ext/gen_stubs.py`` rewrites the block
between the GENERATED markers of ``_ctensor.pyi`` (the Tensor methods) and the whole of
``_functions.pyi`` (the function forms, ``pyc10.transpose(x, 0, 1)``, which functions.c makes at
run time for every "Tensor input" entry whose method Tensor has); ``--check`` fails (CI) when
either file differs from what the table gives.
"""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
TABLE = HERE / "signatures.h"
STUB = HERE.parent / "_ctensor.pyi"
FUNCTIONS_STUB = HERE.parent / "_functions.pyi"
BEGIN = "    # BEGIN GENERATED from _ext/signatures.h by _ext/gen_stubs.py: do not edit\n"
END = "    # END GENERATED\n"

_ENTRY = re.compile(r"PA_ENTRY\(\s*(\w+),\s*(\w+),((?:\s*\"(?:[^\"\\]|\\.)*\"\s*,?)+)\)", re.S)
_STRING = re.compile(r"\"((?:[^\"\\]|\\.)*)\"")

#: torch's C++ parameter types as the Python types a caller may pass. Builtins are qualified:
#: TensorBase has methods named bool, int, float and type, which shadow them in the class body.
_TYPES = {
    "Tensor": "TensorBase",
    "Scalar": "_Scalar",
    "int64_t": "SupportsIndex",
    "SymInt": "SupportsIndex",
    "double": "builtins.float",
    "complex": "builtins.complex",
    "IntArrayRef": "Sequence[SupportsIndex]",
    "SymIntArrayRef": "Sequence[SupportsIndex]",
    "bool": "builtins.bool",
    "Storage": "StorageBase",
    "PyObject*": "Any",
    "ScalarType": "_dtype | builtins.type",
    "Layout": "_layout",
    "MemoryFormat": "_memory_format",
    "Device": "_device | builtins.str | builtins.int",
    "Stream": "Any",
    "c10::string_view": "builtins.str",
    "TensorList": "Sequence[TensorBase]",
}
#: return types of the function forms (module level: no Self; the class is pyc10.Tensor)
_FUNCTION_RETURNS = {"Tensor": "Tensor", "tuple[Tensor, ...]": "tuple[Tensor, ...]"}
_RETURNS = {
    "Tensor": "Self",
    "tuple[Tensor, ...]": "tuple[Self, ...]",
    "Size": "Any",
    "int": "builtins.int",
    "bool": "builtins.bool",
    "str": "builtins.str",
    "tuple[int, ...]": "tuple[builtins.int, ...]",
}


def entries(text: str) -> list[tuple[str, str, str, list[str]]]:
    """(kind, name, doc, signatures) for every PA_ENTRY of the table, in table order."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out = []
    for kind, name, body in _ENTRY.findall(text):
        # adjacent literals concatenate, as in C
        pieces = re.split(r"\"\s*,\s*\"", body.strip().rstrip(","))
        strings = ["".join(_STRING.findall('"' + p.strip().strip('"') + '"')) for p in pieces]
        strings = [re.sub(r"\"\s*\"", "", s) for s in strings]
        out.append((kind, name, strings[0], strings[1:]))
    return out


def _param(text: str) -> tuple[str, str, bool]:
    """(name, annotation, has default) of one "Type name=default"."""
    type_, _, rest = text.rpartition(" ")
    name, eq, _default = rest.partition("=")
    optional = type_.endswith("?")
    base = type_.rstrip("?").split("[")[0]
    annotation = _TYPES[base]
    if optional or _default == "None":
        annotation += " | None"
    return name, annotation, bool(eq)


def render_function(name: str, signature: str, overload: bool) -> list[str]:
    """The stub lines of one function form's signature: module level, returning pyc10.Tensor."""
    head, _, tail = signature.partition(")")
    tail = tail.removesuffix("|deprecated").removesuffix("|hidden")
    returns = tail.partition("->")[2].strip() or "Any"
    returns = " | ".join(_FUNCTION_RETURNS.get(r, _RETURNS.get(r, r)) for r in returns.split(" | "))
    returns = _FUNCTION_RETURNS.get(returns, returns)
    parts = []
    for p in [p for p in head.partition("(")[2].split(", ") if p]:
        if p == "*":
            parts.append("*")
            continue
        pname, annotation, has_default = _param(p)
        parts.append(f"{pname}: {annotation}" + (" = ..." if has_default else ""))
    lines = ["@overload\n"] if overload else []
    lines.append(f"def {name}({', '.join(parts)}) -> {returns}: ...\n")
    return lines


def render(name: str, signature: str, overload: bool) -> list[str]:
    """The stub lines of one signature (an @overload when the name has several)."""
    head, _, tail = signature.partition(")")
    params_text = head.partition("(")[2]
    tail = tail.removesuffix("|deprecated").removesuffix("|hidden")
    returns = tail.partition("->")[2].strip() or "Any"
    returns = " | ".join(_RETURNS.get(r.strip(), r.strip()) for r in returns.split(" | "))
    returns = _RETURNS.get(returns, returns)
    params = [p for p in params_text.split(", ") if p]
    parts = ["self"]
    star_at = params.index("*") if "*" in params else len(params)
    lines = ["    @overload\n"] if overload else []
    alternatives = [r.strip() for r in returns.split(" | ")]
    if len(alternatives) == 2 and len(params) == 1 and params[0].endswith("=None"):
        # size(dim=None) -> Size | int: the first without the argument, the second with it
        pname, annotation, _ = _param(params[0])
        return [
            "    @overload\n",
            f"    def {name}(self, {pname}: None = None) -> {alternatives[0]}: ...\n",
            "    @overload\n",
            f"    def {name}(self, {pname}: {annotation.removesuffix(' | None')}) -> "
            f"{alternatives[1]}: ...\n",
        ]
    varargs = (
        star_at == 1
        and params
        and params[0].split(" ")[0].rstrip("?")
        in (
            "IntArrayRef",
            "SymIntArrayRef",
        )
    )
    for p in params:
        if p == "*":
            parts.append("*")
            continue
        pname, annotation, has_default = _param(p)
        parts.append(f"{pname}: {annotation}" + (" = ..." if has_default else ""))
    lines.append(f"    def {name}({', '.join(parts)}) -> {returns}: ...\n")
    if varargs:  # torch takes the list as varargs too: view(2, 3)
        if not overload:
            lines.insert(0, "    @overload\n")
        rest = list(parts[2:])
        if rest and rest[0] != "*":
            rest.insert(0, "*")
        star = ["*" + parts[1].split(":")[0] + ": SupportsIndex"]
        kw = [x for x in rest if x != "*"]
        lines.append("    @overload\n")
        lines.append(f"    def {name}({', '.join(['self', *star, *kw])}) -> {returns}: ...\n")
    return lines


def generate() -> str:
    """The generated block: every Tensor method of the table."""
    out = [BEGIN]
    for kind, name, _doc, sigs in entries(TABLE.read_text()):
        if kind != "Tensor":
            continue
        shown = [s for s in sigs if "|deprecated" not in s and "|hidden" not in s]
        for s in shown:
            out.extend(render(name, s, len(shown) > 1))
    out.append(END)
    return "".join(out)


def generate_functions(tensor_stub: str) -> str:
    """The whole of _functions.pyi, one function per "Tensor input" entry.

    Those whose method (or attribute) TensorBase's stub declares, as functions.c picks them at
    run time.
    """
    out: list[str] = []
    names = []
    for kind, name, _doc, sigs in entries(TABLE.read_text()):
        if kind != "pyc10" or not all(s.partition("(")[2].startswith("Tensor input") for s in sigs):
            continue
        if not re.search(rf"^    def {name}\(", tensor_stub, re.M):
            continue
        names.append(name)
        shown = [s for s in sigs if "|deprecated" not in s and "|hidden" not in s]
        out.append("\n")
        for s in shown:
            out.extend(render_function(name, s, len(shown) > 1))
    out.append("\n__all__ = [\n" + "".join(f'    "{n}",\n' for n in sorted(names)) + "]\n")
    body = "".join(out)
    if "_Scalar" in body:
        body = "\n_Scalar = bool | int | float | complex\n" + body
    return _FUNCTIONS_DOC + "\n" + _imports(body) + body


_FUNCTIONS_DOC = '''"""Types of pyc10's function forms of Tensor methods: pyc10.transpose(x, 0, 1).

Generated from _ext/signatures.h by _ext/gen_stubs.py: do not edit. There is no _functions module:
_ext/functions.c makes these functions at import; pyc10/__init__.py imports this stub's names for
type checkers only. The first parameter is torch's ``input``, which shadows the builtin.
"""

# ruff: noqa: A002
'''

#: the stub's imports (name used, module, what to import), each written only when the generated
#: functions use its name; grouped and ordered as ruff's isort writes them
_FUNCTIONS_IMPORTS = [
    ("builtins", "builtins", ""),
    ("Sequence", "collections.abc", "Sequence"),
    ("Any", "typing", "Any"),
    ("SupportsIndex", "typing", "SupportsIndex"),
    ("overload", "typing", "overload"),
    ("StorageBase", "._ctensor", "StorageBase"),
    ("TensorBase", "._ctensor", "TensorBase"),
    ("_device", "._device", "device as _device"),
    ("_dtype", "._dtype", "dtype as _dtype"),
    ("_layout", "._layout", "layout as _layout"),
    ("_memory_format", "._layout", "memory_format as _memory_format"),
    ("Tensor", "._tensor", "Tensor"),
]


def _imports(body: str) -> str:
    """The import lines the body needs: the standard library, a blank line, pyc10's modules."""
    groups: dict[str, dict[str, list[str]]] = {"std": {}, "local": {}}
    for name, module, what in _FUNCTIONS_IMPORTS:
        if re.search(rf"\b{name}\b", body):
            group = groups["local" if module.startswith(".") else "std"]
            group.setdefault(module, []).append(what)
    blocks = []
    for group in groups.values():
        lines = []
        for module, whats in group.items():
            if module == "builtins":
                lines.append("import builtins")
                continue
            plain = [w for w in whats if " as " not in w]
            if plain:
                lines.append(f"from {module} import {', '.join(plain)}")
            lines.extend(f"from {module} import {w}" for w in whats if " as " in w)
        if lines:
            blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def main(argv: list[str]) -> int:
    """Rewrite the generated stubs, or with --check report whether they are current."""
    stub = STUB.read_text()
    start, end = stub.index(BEGIN), stub.index(END) + len(END)
    new = _formatted(stub[:start] + generate() + stub[end:], STUB)
    new_functions = _formatted(generate_functions(new), FUNCTIONS_STUB)
    old_functions = FUNCTIONS_STUB.read_text() if FUNCTIONS_STUB.exists() else ""
    if "--check" in argv:
        stale = [
            p
            for p, a, b in ((STUB, new, stub), (FUNCTIONS_STUB, new_functions, old_functions))
            if a != b
        ]
        for path in stale:
            print(f"{path} is stale: run python {pathlib.Path(__file__).name}", file=sys.stderr)
        return 1 if stale else 0
    STUB.write_text(new)
    FUNCTIONS_STUB.write_text(new_functions)
    return 0


def _formatted(text: str, path: pathlib.Path) -> str:
    """Return text as ``ruff format`` (the repository formatter) writes it, if ruff is here."""
    try:
        done = subprocess.run(
            ["ruff", "format", "--stdin-filename", str(path), "-"],
            input=text,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return text
    return done.stdout


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
