"""A wheel's extensions use Python 3.10's stable ABI (the limited API pyc10/meson.build builds
them for), checked by abi3audit; one symbol is allowed past it: PyObject_VectorcallMethod, in
the stable ABI since 3.12 and exported by every CPython since 3.9 with the same signature
(pyc10/_ext/common.h declares it for older limited-API headers).

    python tests/cross/abi3_check.py WHEEL      (tests/cross/wheels.sh and musl_wheel.sh run it)

Exits 1 naming each extension that is not abi3 or uses more than that.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ALLOWED = {"PyObject_VectorcallMethod": "3.12"}


def main() -> int:
    """Audit the wheel named by the first argument."""
    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(sys.argv[1]) as whl:
            names = [n for n in whl.namelist() if n.endswith(".abi3.so")]
            whl.extractall(tmp, names)
        # abi3audit's exit status counts the allowed symbol too: its report is judged here
        report = subprocess.run(
            [sys.executable, "-m", "abi3audit", "-R", "--assume-minimum-abi3", "3.10"]
            + [str(Path(tmp, n)) for n in names],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
    bad = []
    for name, spec in json.loads(report)["specs"].items():
        r = spec["object"]["result"]
        if not r["is_abi3"] or r["non_abi3_symbols"]:
            bad.append(f"{name}: not abi3: {r['non_abi3_symbols']}")
        extra = {k: v for k, v in r["future_abi3_objects"].items() if ALLOWED.get(k) != v}
        if extra:
            bad.append(f"{name}: past Python 3.10's stable ABI: {extra}")
        beside = sorted(r["future_abi3_objects"])
        print(
            f"abi3audit: {Path(name).name}: abi3, baseline 3.10"
            + (f" (beside {beside})" if beside else "")
        )
    for line in bad:
        print(f"abi3_check: {line}")
    return 1 if bad or not names else 0


if __name__ == "__main__":
    sys.exit(main())
