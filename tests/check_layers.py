"""No call from a lower layer of lib/ up into a higher one (lib/meson.build lists the layers).

Each folder of lib/ is a layer, lowest first: base, types, memory, cuda, tensor. A file may use
its own layer and the ones below it. Two things are checked:
- every `#include "x.h"` of an internal header in lib/ (the header's folder is its layer);
- every symbol an object file of the static library uses (`nm`: undefined symbols) against the
  object file that defines it, so a call through a public c10c_* function counts as well as one
  through an internal c10c__* one.

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


def check_symbols(objdir: Path) -> list[str]:
    nm = shutil.which("nm")
    if nm is None:
        print("check_layers: no nm, symbols not checked")
        return []
    objects = sorted(objdir.glob("*.c.o"))  # not the prelinked whole
    sources = {}  # object -> lib-relative source path
    for obj in objects:
        layer, _, rest = obj.name.partition("_")
        src = f"{layer}/{rest.removesuffix('.o')}"
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
    for line in out.splitlines():
        path, _, rest = line.rpartition(":")
        sym = rest.split()[-1]
        src = definer.get(sym)
        if src is None:
            continue
        user = sources[Path(path)]
        if RANK[src.split("/")[0]] > RANK[user.split("/")[0]] and (user, sym) not in ALLOWED:
            found.append(f"{user} calls {sym} ({src})")
    return sorted(set(found))


def main() -> int:
    build = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "tests"
    found = check_includes()
    objdir = build / "lib" / "libc10c.a.p"
    if objdir.is_dir() and any(objdir.glob("*.o")):
        found += check_symbols(objdir)
    else:
        print(f"check_layers: no objects in {objdir}, symbols not checked")
    for line in found:
        print(f"upward: {line}")
    if found:
        order = ", ".join(LAYERS)
        print(f"check_layers: {len(found)} uses of a higher layer (layers, lowest first: {order})")
        return 1
    print(f"check_layers: no upward use between {', '.join(LAYERS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
