"""No import or call from a lower layer of pyc10 up into a higher one, and no circle in a layer.

pyc10 is read as layers, lowest first, as lib/ is (tests/check_layers.py): a module or file may
use its own layer and the ones below it, and the uses inside one layer form no circle. Two graphs
are checked, from the sources alone (nothing needs to be built):
- Python: every import of a pyc10 module by a pyc10 module, at module level, inside a function
  (a lazy import that goes up is an upward use too) or under ``if TYPE_CHECKING:`` (it never
  runs, but type checkers and readers follow it: a lower module that needs a higher one's type
  names the type below it, as pyc10._storage names pyc10._ctensor.TensorBase). Importing
  pyc10.a.b runs pyc10/__init__.py and pyc10/a/__init__.py first; those implicit imports of a
  package by its own modules are not counted. The extension modules
  are the lowest layer; their calls back into Python modules (PyImport_ImportModule("pyc10.x")
  in pyc10/_ext) count as uses by pyc10._ctensor.
- C (pyc10/_ext/*.c, the files of pyc10._ctensor): every identifier a file uses, the macros of
  the headers expanded, that another file defines at file scope without ``static``. Every file
  includes common.h, which declares them all, so includes say nothing and are not checked.

And a third rule, for portability: pyc10 calls the operating system through libc10c, whose
portability layer (lib/base) is the only code that knows the system. A Python module may use an
API that only some systems have (os.fork, os.register_at_fork, AF_UNIX sockets, SO_PEERCRED,
prctl, /dev/shm, /proc, fcntl, resource, ...) only when it is in OS_ALLOWED, with the reason, and
says ``sys.platform`` or ``hasattr(os, ...)`` somewhere (its guard); the extension's C files
include no system header beyond the C standard's and Python's.

    python tests/check_pyc10_layers.py [ROOT]   (default: this checkout; ROOT holds pyc10/)

Exits 1 listing each upward use and each circle; 0 with a one-line summary.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable
from pathlib import Path

# Python modules, lowest layer first. A module missing from every layer is an error, so a new
# module is placed on purpose.
PY_LAYERS: list[tuple[str, list[str]]] = [
    ("extensions", ["pyc10._c10c", "pyc10._ctensor", "pyc10._dispatch_keys"]),
    (
        "base",
        [
            "pyc10._lib",
            "pyc10._errors",
            "pyc10._sharing",
            "pyc10._constant",
            "pyc10._adopt",
            "pyc10._build_ffi",
            "pyc10._source_tree",
            "pyc10._report",
            "pyc10._report_html",
            "pyc10._replay_input",
            "pyc10._replay_model",
            "pyc10._replay_sim",
            "pyc10._torch_methods",
        ],
    ),
    (
        "values",
        ["pyc10._dtype", "pyc10._layout", "pyc10._device", "pyc10._scalar", "pyc10.memory"],
    ),
    (
        "state",
        [
            "pyc10._defaults",
            "pyc10._dispatch",
            "pyc10._finfo",
            "pyc10._repr",
            "pyc10.cuda._runtime",
            "pyc10.cuda._properties",
            "pyc10.cuda.memory",
            "pyc10.cuda",
        ],
    ),
    ("storage", ["pyc10._storage", "pyc10._typed_storage", "pyc10._pickling"]),
    ("tensor", ["pyc10._tensor"]),
    ("api", ["pyc10._creation", "pyc10._api", "pyc10._functions"]),
    (
        "package",
        [
            "pyc10",
            "pyc10.__main__",
            "pyc10.config",
            "pyc10.replay",
            "pyc10.serialization",
            "pyc10.multiprocessing._atfork",
            "pyc10.multiprocessing._janitor",
            "pyc10.multiprocessing._prctl",
            "pyc10.multiprocessing.spawn",
            "pyc10.multiprocessing.queue",
            "pyc10.multiprocessing.pool",
            "pyc10.multiprocessing.reductions",
            "pyc10.multiprocessing",
            "pyc10.allocators",
            "pyc10.allocators.numpy",
            "pyc10.allocators.torch",
            "pyc10.allocators.cupy",
        ],
    ),
]

# The files of pyc10._ctensor, lowest layer first.
C_LAYERS: list[tuple[str, list[str]]] = [
    ("common", ["common.c"]),
    ("parser", ["argparse_match.c", "argparse_convert.c", "argparse_errors.c", "argparse.c"]),
    (
        "shared",
        [
            "size.c",
            "storage.c",
            "numpy.c",
            "mem_handler.c",
            "torch_oom.c",
            "memo.c",
            "dlpack_exchange.c",
            "dlpack.c",
            "functions.c",
            "outarg.c",
            "factories.c",
            "data.c",
        ],
    ),
    (
        "methods",
        [
            "views.c",
            "attrs.c",
            "inplace.c",
            "advindex.c",
            "indexing.c",
            "storage_methods.c",
            "creation.c",
            "joining.c",
        ],
    ),
    ("module", ["tensor.c"]),
]

# Uses allowed to go up, each with its reason: (user, used) -> why.
ALLOWED: dict[tuple[str, str], str] = {
    ("pyc10._ctensor", "pyc10._errors"): (
        "common.c's pyc10_not_implemented looks C10NotImplementedError up on first use, after "
        "import pyc10 has finished"
    ),
    ("pyc10._ctensor", "pyc10._scalar"): (
        "data.c hands the values and dtypes C does not encode to _scalar.scalar_bytes, at run time"
    ),
    ("pyc10._ctensor", "pyc10._defaults"): (
        "factories.c calls _defaults.scalar_dtype for full()'s inferred dtype, at run time"
    ),
    ("pyc10._ctensor", "pyc10._tensor"): (
        "factories.c and data.c hand tensor()/new_tensor() of data C does not read (nested "
        "sequences of tensors, objects with __array__) to _tensor._tensor_from_data, at run time"
    ),
    ("pyc10._ctensor", "pyc10._dtype"): (
        "joining.c's result_type returns the pyc10.dtype of a code from _dtype._BY_VALUE, looked "
        "up on its first call, after import pyc10 has finished"
    ),
    ("pyc10._ctensor", "pyc10._creation"): (
        "creation.c binds frombuffer and asarray and hands them to pyc10._creation (the limited "
        "API has no buffer protocol), imported on their first call"
    ),
    ("pyc10._ctensor", "pyc10"): (
        "advindex.c makes index tensors with pyc10.tensor's rules through the package, at run time"
    ),
}

# Modules allowed to call the operating system themselves, each with its reason and its guard.
OS_ALLOWED: dict[str, str] = {
    "pyc10.multiprocessing._janitor": (
        "file_system's janitor: AF_UNIX socket files in a 0700 directory of its user "
        "(mkdir/lstat/flock), SO_PEERCRED, RLIMIT_NOFILE, /dev/shm, a double fork; "
        "Linux only (SUPPORTED), pyc10.multiprocessing installs its hooks only there"
    ),
    "pyc10.multiprocessing._prctl": "prctl(2) through ctypes when sys.platform is linux",
    "pyc10.multiprocessing._atfork": "os.register_at_fork, except on Windows (as torch)",
    "pyc10.cuda._properties": "dlopen's RTLD_NOLOAD; a clear error where os has none",
    "pyc10.allocators.torch": (
        "dlopen's RTLD_NOLOAD for libstdc++ as torch loaded it (torch_oom.c's throw); Linux "
        "only (sys.platform), libc10c's own entry points elsewhere"
    ),
}
_OS_ATTRS = {
    "os": {
        "fork",
        "forkpty",
        "register_at_fork",
        "memfd_create",
        "pidfd_open",
        "geteuid",
        "getuid",
        "getegid",
        "getgid",
        "setsid",
        "getpgid",
        "killpg",
        "sched_getaffinity",
        "sched_setaffinity",
        "sysconf",
        "posix_fallocate",
        "RTLD_NOLOAD",
        "RTLD_LOCAL",
        "RTLD_GLOBAL",
        "RTLD_NOW",
        "RTLD_LAZY",
        "pipe2",
        "O_CLOEXEC",
        "mkfifo",
    },
    "socket": {"AF_UNIX", "SO_PEERCRED", "SCM_RIGHTS", "CMSG_LEN", "CMSG_SPACE", "socketpair"},
    "signal": {"SIGKILL", "SIGCHLD", "SIGUSR1", "SIGUSR2", "pthread_kill", "setitimer", "alarm"},
}
_OS_METHODS = {"sendmsg", "recvmsg", "prctl", "send_fds", "recv_fds"}
_OS_MODULES = {
    "fcntl", "resource", "termios", "pwd", "grp", "posix", "msvcrt", "winreg", "_winapi",
    "_posixshmem",
}  # fmt: skip
_OS_PATHS = re.compile(r"/proc/|/dev/shm|/sys/")
_C_HEADERS = re.compile(r"#\s*include\s*<([^>]+)>")
_C_STANDARD = {
    "assert.h", "complex.h", "ctype.h", "errno.h", "fenv.h", "float.h", "inttypes.h",
    "iso646.h", "limits.h", "locale.h", "math.h", "setjmp.h", "signal.h", "stdalign.h",
    "stdarg.h", "stdatomic.h", "stdbool.h", "stddef.h", "stdint.h", "stdio.h", "stdlib.h",
    "stdnoreturn.h", "string.h", "tgmath.h", "time.h", "uchar.h", "wchar.h", "wctype.h",
    "Python.h", "structmember.h",
}  # fmt: skip

ROOT = Path(__file__).resolve().parent.parent


def _rank(layers: list[tuple[str, list[str]]]) -> dict[str, int]:
    return {name: i for i, (_, names) in enumerate(layers) for name in names}


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    nodes = sorted(set(edges) | {w for ws in edges.values() for w in ws})
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on_stack.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


# ---- Python ------------------------------------------------------------------------------------


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _python_files(root: Path) -> list[Path]:
    """pyc10's modules: not pyc10/_ext's build scripts (gen_stubs.py), which are not installed."""
    ext = root / "pyc10" / "_ext"
    return sorted(p for p in (root / "pyc10").rglob("*.py") if ext not in p.parents)


def python_uses(root: Path) -> dict[tuple[str, str], list[str]]:
    """(user, used) -> where, for every import of a pyc10 module by a pyc10 module."""
    known = {name for _, names in PY_LAYERS for name in names}
    files = _python_files(root)
    known |= {_module_name(root, p) for p in files}
    uses: dict[tuple[str, str], list[str]] = {}

    def add(user: str, used: str, where: str) -> None:
        # pyc10.a.b importing pyc10 or pyc10.a: the package runs before its modules anyway
        if used != user and not user.startswith(used + "."):
            uses.setdefault((user, used), []).append(where)

    for path in files:
        user = _module_name(root, path)
        package = user.split(".") if path.name == "__init__.py" else user.split(".")[:-1]
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            where = f"{path.relative_to(root)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == "pyc10" or alias.name.startswith("pyc10."):
                        add(user, alias.name, where)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                if module != "pyc10" and not module.startswith("pyc10."):
                    continue
                for alias in node.names:  # `from . import _tensor` imports a module
                    sub = f"{module}.{alias.name}"
                    add(user, sub if sub in known else module, where)
    for pair, places in _extension_imports(root).items():
        uses.setdefault(pair, []).extend(places)
    return uses


def _extension_imports(root: Path) -> dict[tuple[str, str], list[str]]:
    """The extension's calls back into Python modules, as uses by pyc10._ctensor."""
    call = re.compile(r'(?:PyImport_ImportModule|py_attr)\s*\([^;]*?"(pyc10(?:\.\w+)*)"')
    uses: dict[tuple[str, str], list[str]] = {}
    for path in sorted((root / "pyc10" / "_ext").glob("*.c")):
        text = path.read_text()
        for m in call.finditer(text):
            if m.group(1) == "pyc10._ctensor":
                continue
            line = text.count("\n", 0, m.start()) + 1
            uses.setdefault(("pyc10._ctensor", m.group(1)), []).append(
                f"{path.relative_to(root)}:{line}"
            )
    return uses


# ---- C -------------------------------------------------------------------------------------------

_LEXEMES = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', re.S)
_IDENT = re.compile(r"[A-Za-z_]\w*")


def _strip(text: str) -> tuple[str, dict[str, set[str]]]:
    """The code without comments, string contents and preprocessor lines; the macros defined."""
    text = _LEXEMES.sub(lambda m: '""' if m.group()[0] in "\"'" else " ", text)
    macros: dict[str, set[str]] = {}
    out: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("#"):
            full = line
            while full.endswith("\\") and i + 1 < len(lines):
                i += 1
                full = full[:-1] + " " + lines[i]
                out.append("")
            m = re.match(r"\s*#\s*define\s+(\w+)(\([^)]*\))?(.*)", full)
            if m:
                macros[m.group(1)] = set(_IDENT.findall(m.group(3)))
            line = ""
        out.append(line)
        i += 1
    return "\n".join(out), macros


def _definitions(code: str) -> set[str]:
    """The names a file defines at file scope without ``static``: functions and variables."""
    names: set[str] = set()
    depth = 0
    start = 0
    head = ""  # the text before the last top-level `{`
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                head = code[start:i]
            depth += 1
        elif c == "}":
            depth -= 1
            h = " ".join(head.split())
            if depth == 0 and h.endswith(")") and "=" not in h:  # a function's body
                _define(h, names, function=True)
                head = ""
                start = i + 1
        elif c == ";" and depth == 0:
            stmt = " ".join((head or code[start:i]).split())  # `x[] = {...};` or `int x = 1;`
            _define(stmt, names, function=False)
            head = ""
            start = i + 1
    return names


def _define(stmt: str, names: set[str], function: bool) -> None:
    if not stmt or re.match(r"(static|typedef|extern)\b", stmt):
        return
    if function:
        m = re.match(r"[^(]*?(\w+)\s*\(", stmt)
        if m:
            names.add(m.group(1))
        return
    lhs = stmt.split("=", maxsplit=1)[0]
    if "(" in lhs or re.match(r"(struct|enum|union)(\s+\w+)?\s*$", lhs):
        return  # a prototype, or a type's definition
    found = _IDENT.findall(lhs.split("[")[0])
    if found:
        names.add(found[-1])


def c_uses(root: Path) -> dict[tuple[str, str], list[str]]:
    """(user file, defining file) -> the names, for every use of another file's definition."""
    ext = root / "pyc10" / "_ext"
    code: dict[str, str] = {}
    own: dict[str, dict[str, set[str]]] = {}  # a file's own macros (`#define wrap pyc10_wrap`)
    macros: dict[str, set[str]] = {}
    for path in sorted(ext.glob("*.[ch]")):
        text, defined = _strip(path.read_text())
        if path.suffix == ".c":
            code[path.name] = text
            own[path.name] = defined
        else:
            macros.update(defined)
    definer = {}
    for name, text in code.items():
        for d in _definitions(text):
            definer[d] = name
    uses: dict[tuple[str, str], list[str]] = {}
    for name, text in code.items():
        seen: set[str] = set()
        todo = list(set(_IDENT.findall(text)))
        while todo:
            t = todo.pop()
            if t not in seen:
                seen.add(t)
                todo.extend(own[name].get(t, macros.get(t, ())))
        for t in sorted(seen):
            where = definer.get(t)
            if where is not None and where != name:
                uses.setdefault((name, where), []).append(t)
    return uses


# ---- operating system calls ---------------------------------------------------------------------


def _os_use(node: ast.AST, docstrings: set[int]) -> str | None:
    """What node calls of the operating system, or None."""
    if isinstance(node, ast.Attribute):
        base = node.value.id if isinstance(node.value, ast.Name) else None
        if base in _OS_ATTRS and node.attr in _OS_ATTRS[base]:
            return f"{base}.{node.attr}"
        return f".{node.attr}" if node.attr in _OS_METHODS else None
    if isinstance(node, ast.Import):
        return next((a.name for a in node.names if a.name in _OS_MODULES), None)
    if isinstance(node, ast.ImportFrom):
        return node.module if node.module in _OS_MODULES else None
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ):
        return repr(node.value) if _OS_PATHS.search(node.value) else None
    return None


def os_uses(root: Path) -> tuple[dict[str, list[str]], set[str]]:
    """Module -> where it calls the operating system itself; the modules that have a guard."""
    uses: dict[str, list[str]] = {}
    guarded: set[str] = set()
    for path in _python_files(root):
        module = _module_name(root, path)
        text = path.read_text()
        if "sys.platform" in text or "hasattr(os," in text:
            guarded.add(module)
        tree = ast.parse(text, str(path))
        docstrings = {
            id(n.value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
        }
        for node in ast.walk(tree):
            what = _os_use(node, docstrings)
            if what is not None:
                line = getattr(node, "lineno", 0)
                uses.setdefault(module, []).append(f"{path.relative_to(root)}:{line} {what}")
    for path in sorted((root / "pyc10" / "_ext").glob("*.[ch]")):
        for m in _C_HEADERS.finditer(path.read_text()):
            if m.group(1) not in _C_STANDARD:
                uses.setdefault(path.name, []).append(f"{path.relative_to(root)} <{m.group(1)}>")
    return uses, guarded


def check_os(root: Path) -> list[str]:
    uses, guarded = os_uses(root)
    found = []
    for unit, where in sorted(uses.items()):
        if unit not in OS_ALLOWED:
            found.append(
                f"os call in {unit}, outside libc10c's portability layer: "
                + ", ".join(where)
                + " (go through the library, or guard it and add the module to OS_ALLOWED)"
            )
        elif unit not in guarded:
            found.append(f"os call in {unit} without a guard (sys.platform, hasattr(os, ...))")
    stale = [u for u in OS_ALLOWED if u not in uses]
    found += [f"os call allowed in {u} no longer happens: drop it" for u in stale]
    return found


# ---- the check -----------------------------------------------------------------------------------


def check(
    kind: str,
    layers: list[tuple[str, list[str]]],
    units: Iterable[str],
    uses: dict[tuple[str, str], list[str]],
) -> list[str]:
    rank = _rank(layers)
    found = [
        f"{kind} {u} is in no layer: add it to the layers" for u in sorted(units) if u not in rank
    ]
    same: dict[str, set[str]] = {}
    for (user, used), where in sorted(uses.items()):
        if user not in rank or used not in rank:
            continue
        if rank[used] > rank[user] and (user, used) not in ALLOWED:
            found.append(
                f"{kind} {user} ({layers[rank[user]][0]}) uses {used} ({layers[rank[used]][0]}): "
                + ", ".join(where)
            )
        elif rank[used] == rank[user]:
            same.setdefault(user, set()).add(used)
    for comp in _circles(same):
        found.append(f"{kind} circle in layer {layers[rank[comp[0]]][0]}: {', '.join(comp)}")
    return found


def main(argv: list[str]) -> int:
    root = Path(argv[1]).resolve() if len(argv) > 1 else ROOT
    py = python_uses(root)
    py_units = {u for pair in py for u in pair} | {
        _module_name(root, p) for p in _python_files(root)
    }
    cc = c_uses(root)
    c_units = {p.name for p in (root / "pyc10" / "_ext").glob("*.c")}
    found = check("module", PY_LAYERS, py_units, py) + check("file", C_LAYERS, c_units, cc)
    stale = [pair for pair in ALLOWED if pair not in py and pair not in cc]
    found += [f"allowed use {user} -> {used} no longer happens: drop it" for user, used in stale]
    found += check_os(root)
    for line in found:
        print(f"upward: {line}")
    if found:
        print(
            f"check_pyc10_layers: {len(found)} problems (layers, lowest first: Python "
            f"{', '.join(n for n, _ in PY_LAYERS)}; C {', '.join(n for n, _ in C_LAYERS)})"
        )
        return 1
    print(
        f"check_pyc10_layers: no upward use or circle among {len(py_units)} modules "
        f"({len(py)} imports) and {len(c_units)} extension files ({len(cc)} file pairs); "
        f"operating system calls only in {len(OS_ALLOWED)} guarded modules"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
