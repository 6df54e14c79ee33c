#!/usr/bin/env bash
# Tests the Node.js binding against a meson build of libc10c:
#   bindings/node/test.sh <meson build dir>
# Checks that lib/ffi.js matches abi/api.json, installs koffi (npm ci, from package-lock.json),
# runs the unit tests (node:test) and the conformance suite against <build dir>/lib/libc10c.so.
# Writes nothing outside this directory except npm's cache.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"

if [[ $# -ne 1 ]]; then
  echo "usage: $0 <meson build dir>" >&2
  exit 2
fi
BUILD="$(cd "$1" && pwd)"
export C10C_LIBRARY="${C10C_LIBRARY:-$BUILD/lib/libc10c.so}"
if [[ ! -e "$C10C_LIBRARY" ]]; then
  echo "test.sh: $C10C_LIBRARY not found (build libc10c first)" >&2
  exit 1
fi
export C10C_INCLUDE="$ROOT/include"

run() {
  echo "+ $*"
  "$@"
}

cd "$HERE"
echo "node $(node --version), npm $(npm --version); C10C_LIBRARY=$C10C_LIBRARY"
run python3 generate.py --check
# --ignore-scripts: koffi 3 ships its native code in prebuilt @koromix/koffi-<platform> packages;
# its own install script is not needed (and would try a source build where none is found).
run npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
run node --expose-gc --test --test-reporter=spec test/*.test.js
run node scripts/conformance.js
