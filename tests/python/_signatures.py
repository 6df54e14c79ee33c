"""A reader of pyc10/_ext/signatures.h, the signature table the argument parser binds.

The table is C: ``PA_ENTRY(kind, name, "doc", "sig", ...)`` with string literals that
clang-format may split over lines (adjacent literals concatenate). This module turns it into
``Entry`` records whose signatures are parsed into parameters, so that tests can be generated
from the same table the parser reads and cannot drift from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

TABLE = Path(__file__).resolve().parents[2] / "pyc10" / "_ext" / "signatures.h"

_NO_DEFAULT = object()


@dataclass(frozen=True)
class Param:
    """One parameter of a signature: torch's type string, name and default (if any)."""

    type: str
    name: str
    default: object = _NO_DEFAULT
    keyword_only: bool = False

    @property
    def has_default(self) -> bool:
        """Whether the parameter may be omitted."""
        return self.default is not _NO_DEFAULT

    @property
    def optional(self) -> bool:
        """Whether None is an accepted value (``T?`` or a None default)."""
        return self.type.endswith("?") or self.default == "None"

    @property
    def base(self) -> str:
        """The type without its ``?``."""
        return self.type.rstrip("?")

    @property
    def is_int_list(self) -> bool:
        """An int list (IntArrayRef, SymIntArrayRef, possibly with a fixed length)."""
        return bool(re.fullmatch(r"(Sym)?IntArrayRef(\[\d+\])?", self.base))

    @property
    def is_int(self) -> bool:
        """A single int (int64_t, SymInt)."""
        return self.base in ("int64_t", "SymInt")


@dataclass(frozen=True)
class Signature:
    """One overload: its name, parameters, return annotation and flags."""

    text: str
    name: str
    params: tuple[Param, ...]
    returns: str
    hidden: bool = False
    deprecated: bool = False

    @property
    def positional(self) -> tuple[Param, ...]:
        """The parameters that may be given positionally."""
        return tuple(p for p in self.params if not p.keyword_only)


@dataclass(frozen=True)
class Entry:
    """One PA_ENTRY: kind (Tensor or pyc10), name, doc and its signatures in torch's order."""

    kind: str
    name: str
    doc: str
    signatures: tuple[Signature, ...] = field(default_factory=tuple)

    @property
    def id(self) -> str:
        """A test id: ``Tensor.view`` or ``pyc10.split_with_sizes``."""
        return f"{self.kind}.{self.name}"


def _parse_default(text: str) -> object:
    if text == "None":
        return "None"
    if text in ("True", "False"):
        return text == "True"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def parse_signature(text: str) -> Signature:
    """Parse ``name(T a, *, T b=default) -> Ret|flag`` into a Signature."""
    flags: list[str] = []
    while "|" in text and text.rsplit("|", 1)[1].strip() in ("hidden", "deprecated"):
        text, flag = text.rsplit("|", 1)
        flags.append(flag.strip())
    m = re.fullmatch(r"\s*([\w.]+)\((.*)\)\s*(?:->\s*(.*))?", text.strip())
    if m is None:
        raise ValueError(f"unreadable signature {text!r}")
    name, body, returns = m.group(1), m.group(2).strip(), (m.group(3) or "").strip()
    params: list[Param] = []
    keyword_only = False
    for part in [p.strip() for p in body.split(",")] if body else []:
        if part == "*":
            keyword_only = True
            continue
        decl, _, default = part.partition("=")
        type_, _, pname = decl.strip().rpartition(" ")
        if not type_:
            raise ValueError(f"parameter without a type in {text!r}")
        params.append(
            Param(
                type_.strip(),
                pname,
                _parse_default(default.strip()) if default else _NO_DEFAULT,
                keyword_only,
            )
        )
    return Signature(
        text.strip(), name, tuple(params), returns, "hidden" in flags, "deprecated" in flags
    )


def _strip_comments(src: str) -> str:
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    return re.sub(r"//[^\n]*", " ", src)


_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _split_args(body: str) -> list[str]:
    """Split a macro's arguments at top-level commas (commas inside literals do not count)."""
    args, cur, i = [], [], 0
    while i < len(body):
        ch = body[i]
        if ch == '"':
            m = _STRING.match(body, i)
            if m is None:
                raise ValueError("unterminated string literal in signatures.h")
            cur.append(m.group(0))
            i = m.end()
            continue
        if ch == ",":
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    args.append("".join(cur).strip())
    return args


def _literal(arg: str) -> str:
    """Adjacent C string literals concatenated, with the simple escapes decoded."""
    parts = _STRING.findall(arg)
    if not parts or _STRING.sub("", arg).strip():
        raise ValueError(f"expected string literals, got {arg!r}")
    return "".join(parts).encode().decode("unicode_escape")


def read_table(path: Path = TABLE) -> list[Entry]:
    """Every PA_ENTRY of the table, in file order."""
    src = _strip_comments(path.read_text())
    entries: list[Entry] = []
    pos = 0
    while (start := src.find("PA_ENTRY(", pos)) >= 0:
        i, depth, in_str = start + len("PA_ENTRY("), 1, False
        while depth:
            ch = src[i]
            if in_str:
                if ch == "\\":
                    i += 1
                elif ch == '"':
                    in_str = False
            elif ch == '"':
                in_str = True
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            i += 1
        args = _split_args(src[start + len("PA_ENTRY(") : i - 1])
        kind, name, doc, *sigs = args
        entries.append(
            Entry(kind, name, _literal(doc), tuple(parse_signature(_literal(s)) for s in sigs))
        )
        pos = i
    return entries
