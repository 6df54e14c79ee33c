"""The Windows DLL exports exactly the functions lib/libc10c.map lists, all c10c_, and imports
only system DLLs (no winpthread or libgcc DLL that a host would have to ship beside it).

PE has no symbol versions: the map's node names do not apply there (hosts are checked by
c10c_abi_check instead), its function names do.

    python tests/check_dll_exports.py OBJDUMP LIBRARY.dll lib/libc10c.map
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "abi"))
import abitool

# the DLLs every Windows process has (the C runtime included)
SYSTEM_DLLS = {"kernel32.dll", "msvcrt.dll", "ucrtbase.dll"}


def dll_table(objdump: str, library: str) -> tuple[set[str], set[str]]:
    """The exported names and the imported DLLs of library, from objdump -p."""
    out = subprocess.run(
        [objdump, "-p", library], check=True, capture_output=True, text=True
    ).stdout
    exports: set[str] = set()
    imports: set[str] = set()
    in_names = False
    for line in out.splitlines():
        if line.strip().startswith("DLL Name:"):
            imports.add(line.split(":", 1)[1].strip().lower())
        if line.startswith("[Ordinal/Name Pointer] Table"):
            in_names = True
            continue
        if in_names:
            f = line.split()
            if not f:
                in_names = False
            elif f[0].startswith("["):
                exports.add(f[-1])
    return exports, imports


def main() -> int:
    """Prints every problem; exit status 1 when there is one."""
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    objdump, library, map_path = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    exports, imports = dll_table(objdump, library)
    nodes, problems = abitool.parse_map(map_path)
    want = {g for _, globs, _, _ in nodes for g in globs}
    for name in sorted(exports):
        if not name.startswith("c10c_") or name.startswith("c10c__"):
            problems.append(f"exported symbol without the public c10c_ prefix: {name}")
    problems += abitool.export_differences(exports, want, map_path.name)
    for dll in sorted(imports - SYSTEM_DLLS):
        problems.append(f"imports {dll}, which is not a system DLL")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(
        f"{len(exports)} exported functions, exactly those of {map_path.name}; imports "
        + ", ".join(sorted(imports))
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
