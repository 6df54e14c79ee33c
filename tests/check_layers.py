"""No call from a lower layer of lib/ up into a higher one (lib/meson.build lists the layers).

Each folder of lib/ is a layer, lowest first: base, types, memory, cuda, tensor. A file may use
its own layer and the ones below it. Three things are checked:
- every `#include "x.h"` of an internal header in lib/ (the header's folder is its layer);
- every symbol an object file of the static library uses (`nm`: undefined symbols) against the
  object file that defines it, so a call through a public c10c_* function counts as well as one
  through an internal c10c__* one;
- that no files call each other in a circle, inside a layer too (a file that uses another's
  symbols, directly or through others, is not used by it): each layer's files are themselves an
  order, and a file can be understood, tested and moved with only those below it; nor include
  each other in a circle (x.h and x.c are one unit: x.c including y.h while y.c includes x.h);
- that only lib/base talks to the operating system: no other file of lib/ includes an operating
  system header (OS_HEADERS) or calls one of its functions (OS_CALLS), save the (file, header)
  pairs of OS_ALLOWED, which must each still be used.

    python tests/check_layers.py [BUILD_DIR]   (default build/tests; the static library's objects
                                                are BUILD_DIR/lib/libc10c.a.p/*.o)

Without a built static library only the includes are checked. Exits 1 listing each upward use.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIB = ROOT / "lib"
LAYERS = ["base", "types", "memory", "cuda", "tensor"]
RANK = {name: i for i, name in enumerate(LAYERS)}

# Uses allowed to go up, each with its reason: (user file, used header or symbol).
ALLOWED: dict[tuple[str, str], str] = {}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)

# Headers of the operating system, not of C11: above lib/base their calls go through lib/base
# (os.h, shm.h, sysmem.h), so that porting the library to another system touches lib/base alone.
OS_HEADERS = {
    "dlfcn.h",
    "fcntl.h",
    "poll.h",
    "pthread.h",
    "sched.h",
    "semaphore.h",
    "signal.h",
    "unistd.h",
    "windows.h",
    "io.h",
    "process.h",
}  # and every <sys/...> header

# Functions of those headers, each with the header a file must be allowed to use them; matched
# as calls (`name(`) outside comments and string literals, not as members (`x->open(`).
OS_CALLS = {
    **dict.fromkeys(["mmap", "munmap", "mremap", "madvise", "mprotect", "mlock"], "sys/mman.h"),
    **dict.fromkeys(["shm_open", "shm_unlink", "memfd_create"], "sys/mman.h"),
    **dict.fromkeys(["fstat", "stat", "lstat"], "sys/stat.h"),
    "fstatvfs": "sys/statvfs.h",
    **dict.fromkeys(["getrlimit", "setrlimit"], "sys/resource.h"),
    "syscall": "sys/syscall.h",
    "getrandom": "sys/random.h",
    **dict.fromkeys(["socket", "sendmsg", "recvmsg"], "sys/socket.h"),
    **dict.fromkeys(["open", "openat", "fcntl", "posix_fallocate"], "fcntl.h"),
    **dict.fromkeys(
        ["close", "read", "write", "ftruncate", "dup", "dup2", "getpid", "geteuid", "getuid"],
        "unistd.h",
    ),
    **dict.fromkeys(["sysconf", "fork", "usleep", "unlink", "pipe"], "unistd.h"),
    **dict.fromkeys(["dlopen", "dlsym", "dlclose", "dlerror"], "dlfcn.h"),
    **dict.fromkeys(["sched_yield", "sched_getaffinity"], "sched.h"),
    **dict.fromkeys(["kill", "sigaction", "raise"], "signal.h"),
    **dict.fromkeys(["clock_gettime", "nanosleep"], "time.h"),
    **dict.fromkeys(
        ["LoadLibraryA", "LoadLibraryW", "GetProcAddress", "VirtualAlloc"], "windows.h"
    ),
}
OS_CALL = re.compile(r"(?<![\w.>])(" + "|".join(sorted(OS_CALLS)) + r"|pthread_\w+)\s*\(")
DEFINED = re.compile(
    r"^(?:[A-Za-z_][\w \t*]*[\s*])?(\w+)\s*\([^;{)]*\)\s*\{|^\s*#\s*define\s+(?=\w+\()(\w+)",
    re.MULTILINE,
)
OS_INCLUDE = re.compile(r"^\s*#\s*include\s+<([^>]+)>", re.MULTILINE)

# Files above lib/base that use the operating system, each with its reason: none. Threads, the
# dynamic loader and the clocks are lib/base/os.h, memory lib/base/sysmem.h, shareable memory and
# files lib/base/shm.h; porting the library to another system touches lib/base alone.
OS_ALLOWED: dict[tuple[str, str], str] = {}

# comments and string or character literals, blanked before calls are looked for
NOISE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.DOTALL)


def layer_of(path: Path) -> str:
    return path.relative_to(LIB).parts[0]


def check_includes() -> list[str]:
    headers = {p.name: layer_of(p) for p in LIB.glob("*/*.h")}
    found = []
    for src in sorted(LIB.glob("*/*.[ch]")):
        user = layer_of(src)
        for name in INCLUDE.findall(src.read_text()):
            used = headers.get(Path(name).name)
            if used is None or RANK[used] <= RANK[user]:
                continue
            rel = str(src.relative_to(LIB))
            if (rel, name) not in ALLOWED:
                found.append(f"{rel} ({user}) includes {used}/{name}")
    return found


def include_circles() -> list[str]:
    """Circles of lib/'s files through their includes: a header and the .c file of its name are
    one unit (x.h declares what x.c defines), so x.c including y.h while y.c (or y.h) includes
    x.h is a circle even where no call goes both ways yet."""
    headers = {p.name: p for p in LIB.glob("*/*.h")}  # internal ones ("c10c/x.h" are public)

    def unit(path: Path) -> str:  # "memory/plan_engine" for plan_engine.c and plan_engine.h
        return str(path.relative_to(LIB).with_suffix(""))

    uses: dict[str, dict[str, str]] = {}
    for src in sorted(LIB.glob("*/*.[ch]")):
        for name in INCLUDE.findall(src.read_text()):
            header = headers.get(name)
            if header is not None and unit(header) != unit(src):
                why = f"{src.name} includes {name}"
                uses.setdefault(unit(src), {}).setdefault(unit(header), why)
    for targets in list(uses.values()):
        for used in targets:
            uses.setdefault(used, {})
    return circles(uses)


def check_os() -> list[str]:
    """Files above lib/base that include an operating system header or call its functions."""
    found = []
    used: set[tuple[str, str]] = set()
    for src in sorted(LIB.glob("*/*.[ch]")):
        if layer_of(src) == "base":
            continue
        rel = str(src.relative_to(LIB))
        text = src.read_text()
        for header in OS_INCLUDE.findall(text):
            if header in OS_HEADERS or header.startswith("sys/"):
                if (rel, header) in OS_ALLOWED:
                    used.add((rel, header))
                else:
                    found.append(f"{rel} includes <{header}> (only lib/base may)")
        code = NOISE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
        # a function or macro of the file's own that bears a system function's name
        own = {a or b for a, b in DEFINED.findall(code)}
        for m in OS_CALL.finditer(code):
            name = m.group(1)
            if name in own:
                continue
            header = "pthread.h" if name.startswith("pthread_") else OS_CALLS[name]
            line = code.count("\n", 0, m.start()) + 1
            if (rel, header) in OS_ALLOWED:
                used.add((rel, header))
            else:
                found.append(f"{rel}:{line} calls {name} (<{header}>; only lib/base may)")
    for rel, header in sorted(OS_ALLOWED.keys() - used):
        found.append(f"{rel} no longer uses <{header}>: drop it from OS_ALLOWED")
    return found


def check_symbols(objdir: Path) -> list[str]:
    nm = shutil.which("nm")
    if nm is None:
        print("check_layers: no nm, symbols not checked")
        return []
    # not the prelinked whole; .obj for Windows targets
    objects = sorted([*objdir.glob("*.c.o"), *objdir.glob("*.c.obj")])
    sources = {}  # object -> lib-relative source path
    for obj in objects:
        layer, _, rest = obj.name.partition("_")
        src = f"{layer}/{rest.removesuffix('.obj').removesuffix('.o')}"
        if layer not in RANK or not (LIB / src).exists():
            sys.exit(f"check_layers: {obj.name} is not a lib/<layer>/ source")
        sources[obj] = src
    out = subprocess.run(
        [nm, "--defined-only", "-A", *map(str, objects)], check=True, capture_output=True, text=True
    ).stdout
    definer = {}
    for line in out.splitlines():
        path, _, rest = line.rpartition(":")
        parts = rest.split()
        if len(parts) == 3 and parts[1] in "TDBRVWC" and parts[2].startswith("c10c"):
            definer[parts[2]] = sources[Path(path)]
    out = subprocess.run(
        [nm, "--undefined-only", "-A", *map(str, objects)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    found = []
    uses: dict[str, dict[str, str]] = {}  # user file -> used file -> one symbol it calls there
    for line in out.splitlines():
        path, _, rest = line.rpartition(":")
        sym = rest.split()[-1]
        src = definer.get(sym)
        if src is None:
            continue
        user = sources[Path(path)]
        if src != user:
            uses.setdefault(user, {}).setdefault(src, sym)
        if RANK[src.split("/")[0]] > RANK[user.split("/")[0]] and (user, sym) not in ALLOWED:
            found.append(f"{user} calls {sym} ({src})")
    return sorted(set(found)) + circles(uses)


def circles(uses: dict[str, dict[str, str]]) -> list[str]:
    """Each set of files that call each other in a circle (Tarjan's strongly connected
    components over the file graph), named by one circle through it with the calls it takes."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:  # recursion depth: the number of files, a few dozen
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(uses.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                components.append(sorted(comp))

    for v in sorted(uses):
        if v not in index:
            visit(v)
    found = []
    for comp in components:
        members, start = set(comp), comp[0]
        # the shortest circle through the first file: breadth first back to it
        came: dict[str, str] = {}
        frontier = [start]
        while start not in came:
            nxt = []
            for v in frontier:
                for w in sorted(u for u in uses[v] if u in members and u not in came):
                    came[w] = v
                    nxt.append(w)
            frontier = nxt
        path, w = [], start
        while True:
            v = came[w]
            path.append(f"{w} ({uses[v][w]})")
            w = v
            if w == start:
                break
        found.append("circle: " + " -> ".join([start, *reversed(path)]))
    return found


def main() -> int:
    build = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "tests"
    found = check_includes() + include_circles()
    os_found = check_os()
    objdir = build / "lib" / "libc10c.a.p"
    if objdir.is_dir() and any(objdir.glob("*.o")):
        found += check_symbols(objdir)
    else:
        print(f"check_layers: no objects in {objdir}, symbols not checked")
    for line in found:
        print(line if line.startswith("circle: ") else f"upward: {line}")
    for line in os_found:
        print(f"os: {line}")
    if os_found:
        print(f"check_layers: {len(os_found)} uses of the operating system above lib/base")
    if found or os_found:
        order = ", ".join(LAYERS)
        n_circles = sum(line.startswith("circle: ") for line in found)
        if len(found) > n_circles:
            print(
                f"check_layers: {len(found) - n_circles} uses of a higher layer"
                f" (layers, lowest first: {order})"
            )
        if n_circles:
            print(f"check_layers: {n_circles} circles of files calling or including each other")
        return 1
    print(
        f"check_layers: no upward use between {', '.join(LAYERS)}, no circle;"
        " no system call above base"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
