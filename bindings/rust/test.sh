#!/usr/bin/env bash
# Tests the Rust binding against a meson build of libc10c:
#   bindings/rust/test.sh <meson build dir>      (its lib/libc10c.so, and the repo's include/)
# Runs generate.py --check, cargo fmt --check and clippy (when installed), the unit tests, and the
# conformance suite (bindings/conformance/cases.json) in release mode. Writes only under this
# directory (target/) and the toolchain's own caches; needs no network.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"

if [ $# -ne 1 ]; then
  echo "usage: $0 <meson build dir>" >&2
  exit 2
fi
BUILD="$(cd "$1" && pwd)"
LIB="$BUILD/lib"
if [ ! -e "$LIB/libc10c.so" ]; then
  echo "test.sh: no libc10c.so in $LIB" >&2
  exit 2
fi

for d in "${CARGO_HOME:-$HOME/.cargo}/bin" /root/.cargo/bin; do
  if [ -d "$d" ]; then PATH="$d:$PATH"; fi
done
export PATH
export CARGO_TARGET_DIR="$HERE/target"
export CARGO_NET_OFFLINE=true
export C10C_LIB_DIR="$LIB"
export C10C_INCLUDE_DIR="$ROOT/include"
export C10C_REQUIRE_LAYOUT=1 # the struct layout test must run (needs cc)
export LD_LIBRARY_PATH="$LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
PYTHON="${PYTHON:-python3}"

run() {
  echo "+ $*"
  "$@"
}

cd "$HERE"
start=$SECONDS
run "$PYTHON" generate.py --check
if cargo fmt --version >/dev/null 2>&1; then
  run cargo fmt --check
else
  echo "test.sh: rustfmt not installed, skipping cargo fmt --check"
fi
if cargo clippy --version >/dev/null 2>&1; then
  run cargo clippy --offline --all-targets -- -D warnings
else
  echo "test.sh: clippy not installed, skipping cargo clippy"
fi
run cargo test --offline
run cargo build --offline --release --bin conformance
run "$CARGO_TARGET_DIR/release/conformance" "$HERE/../conformance/cases.json"
echo "test.sh: rust binding OK ($((SECONDS - start)) s)"
