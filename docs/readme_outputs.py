"""The outputs README.md shows, made by the commands it names.

Each code block of README.md that follows a line ``<!-- output of: COMMAND -->`` holds
``$ COMMAND`` and what COMMAND prints, run from the repository's root (with the installed pyc10
and, for the commands under bench/, the replayer of --build). This rewrites those blocks (and
whatever files the commands write, such as docs/replay-decomfl.png), or with --check says which
block differs from what its command prints now and exits 1.

    python docs/readme_outputs.py [--check] [--build build/tests]
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARK = re.compile(r"<!-- output of: (?P<cmd>.+?) -->\n```\n(?P<body>.*?)```\n", re.S)


def output(command: str, build: str) -> str:
    """$ command, and what it prints (stdout), run from the root."""
    argv = shlex.split(command)
    if argv[0] == "python":
        argv[0] = sys.executable
    if len(argv) > 1 and argv[1].startswith("bench/") and argv[1].endswith(".py"):
        argv += ["--build", build]  # a benchmark script: the replayer the tests built
    env = dict(os.environ, COLUMNS="100")
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"{command}: exit status {proc.returncode}: {proc.stderr.strip()}")
    return f"$ {command}\n{proc.stdout}"


def main() -> int:
    """Rewrites (or checks) the README's outputs; the exit status."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="compare only; exit 1 where one differs")
    p.add_argument("--build", default=str(ROOT / "build" / "tests"))
    args = p.parse_args()
    readme = ROOT / "README.md"
    text = readme.read_text()
    stale = []

    def redo(m: re.Match[str]) -> str:
        body = output(m["cmd"], args.build)
        if body != m["body"]:
            stale.append(m["cmd"])
        return f"<!-- output of: {m['cmd']} -->\n```\n{body}```\n"

    new = MARK.sub(redo, text)
    if args.check:
        for cmd in stale:
            print(f"README.md: the output of `{cmd}` is not what it prints now")
        return 1 if stale else 0
    readme.write_text(new)
    print(f"README.md: {len(MARK.findall(text))} outputs, {len(stale)} rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
