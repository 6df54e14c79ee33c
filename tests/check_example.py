"""Runs a documented C example and compares what it prints with the output its comment shows
(the lines after `prints`, each indented by two spaces more than the comment's text)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path


def expected(source: Path) -> list[str]:
    """The lines the source's first comment says the program prints."""
    comment = source.read_text().split("*/", 1)[0]
    lines = [re.sub(r"^\s*/?\*", "", line) for line in comment.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.strip() == "prints")
    block = lines[start + 1 :]
    while block and not block[0].strip():
        block.pop(0)
    out = []
    for line in block:
        if not line.strip():
            break
        out.append(line.strip())
    return out


def main() -> int:
    """exe source: exit 1 (with both texts) when the program prints anything else."""
    exe, source = sys.argv[1], Path(sys.argv[2])
    got = subprocess.run([exe], capture_output=True, text=True, check=False, timeout=60)
    want = expected(source)
    if got.returncode != 0 or got.stdout.splitlines() != want:
        print(f"{source.name}: exit {got.returncode}; printed:\n{got.stdout}{got.stderr}")
        print("the comment says it prints:\n" + "\n".join(want))
        return 1
    print(f"{source.name}: prints what its comment shows ({len(want)} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
