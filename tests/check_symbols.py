"""Check that a shared library exports exactly the symbols in a checked-in list.

Usage: check_symbols.py LIBRARY LIST. Prints the difference and exits 1 when they differ, so an
accidental export (or a removed function) fails the tests before it reaches a release.
"""

from __future__ import annotations

import subprocess
import sys


def exported(library: str) -> list[str]:
    """Names of the defined dynamic symbols of a library, without version suffixes."""
    out = subprocess.run(
        ["nm", "-D", "--defined-only", library], check=True, capture_output=True, text=True
    ).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            names.add(parts[2].split("@")[0])
    names.discard("C10C_1.0")  # the version node itself
    return sorted(names)


def main() -> int:
    """Compare and report."""
    library, listing = sys.argv[1], sys.argv[2]
    have = exported(library)
    with open(listing, encoding="utf-8") as f:
        want = sorted(line.strip() for line in f if line.strip() and not line.startswith("#"))
    bad = [n for n in have if not n.startswith("c10c_") or n.startswith("c10c__")]
    extra = sorted(set(have) - set(want))
    missing = sorted(set(want) - set(have))
    for n in bad:
        print(f"exported symbol without the public c10c_ prefix: {n}")
    for n in extra:
        print(f"exported but not in {listing}: {n}")
    for n in missing:
        print(f"listed in {listing} but not exported: {n}")
    if bad or extra or missing:
        return 1
    print(f"{len(have)} exported symbols, all c10c_ and all listed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
