"""What the Python fuzz harnesses of tests/fuzz/py share: their command line and the address
space they run in."""

from __future__ import annotations

import argparse
import resource
from pathlib import Path


def arguments(doc: str, corpus: Path) -> argparse.Namespace:
    """SECONDS [--keep] [--seed N] [--corpus DIR], as every harness takes them."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n", maxsplit=1)[0])
    parser.add_argument("seconds", type=float)
    parser.add_argument("--keep", action="store_true", help="add new outcomes to the corpus")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--corpus", type=Path, default=corpus)
    return parser.parse_args()


def asan() -> bool:
    """Whether AddressSanitizer's runtime is in this process (CI's sanitized run preloads it)."""
    try:
        return "libasan" in Path("/proc/self/maps").read_text()
    except OSError:
        return False


def limit_address_space(nbytes: int) -> None:
    """At most nbytes of address space (or the hard limit, if lower), so that a claim in an input
    fails to map instead of taking the machine's memory; nothing under AddressSanitizer, whose
    shadow needs terabytes (it refuses such allocations itself: allocator_may_return_null)."""
    if asan():
        return
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    resource.setrlimit(
        resource.RLIMIT_AS, (nbytes if hard == resource.RLIM_INFINITY else min(nbytes, hard), hard)
    )
