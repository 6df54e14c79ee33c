"""Generate the typed methods of ``pyc10/_ctensor.pyi`` from the signature table.

The parser (argparse.c), the docstrings' signature lines and these stubs all come from
``signatures.h``, so they cannot drift: ``python pyc10/_ext/gen_stubs.py`` rewrites the block
between the GENERATED markers of ``_ctensor.pyi``; ``--check`` fails (CI) when the file differs
from what the table gives.
"""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
TABLE = HERE / "signatures.h"
STUB = HERE.parent / "_ctensor.pyi"
BEGIN = "    # BEGIN GENERATED from _ext/signatures.h by _ext/gen_stubs.py: do not edit\n"
END = "    # END GENERATED\n"

_ENTRY = re.compile(r"PA_ENTRY\((\w+),\s*(\w+),((?:\s*\"(?:[^\"\\]|\\.)*\"\s*,?)+)\)", re.S)
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


def main(argv: list[str]) -> int:
    """Rewrite the stub's generated block, or with --check report whether it is current."""
    stub = STUB.read_text()
    start, end = stub.index(BEGIN), stub.index(END) + len(END)
    new = _formatted(stub[:start] + generate() + stub[end:])
    if "--check" in argv:
        if new != stub:
            print(f"{STUB} is stale: run python {pathlib.Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    STUB.write_text(new)
    return 0


def _formatted(text: str) -> str:
    """Return text as ``ruff format`` (the repository formatter) writes it, if ruff is here."""
    try:
        done = subprocess.run(
            ["ruff", "format", "--stdin-filename", str(STUB), "-"],
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
