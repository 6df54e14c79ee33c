#!/usr/bin/env bash
# Tests the Go binding against a meson build of libc10c:
#
#   bindings/go/test.sh <meson build dir>     # e.g. bindings/go/test.sh build/dev
#
# Checks that raw/raw_gen.go matches abi/api.json, gofmt, go vet; builds; runs the unit tests
# (with cgo's strict pointer checks) and the conformance suite (bindings/conformance/cases.json)
# against <build dir>/lib/libc10c.so and the headers in the repository's include/. Needs Go 1.19+
# and a C compiler (cgo); no network, no Go modules besides the standard library. Writes nothing
# outside this directory but the Go toolchain's caches (in .cache/ here when HOME is unwritable).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"

if [ $# -ne 1 ]; then
  echo "usage: $0 <meson build dir>" >&2
  exit 2
fi
if [ -d "$1" ]; then
  BUILD="$(cd "$1" && pwd)"
elif [ -d "$ROOT/$1" ]; then
  BUILD="$(cd "$ROOT/$1" && pwd)"
else
  echo "test.sh: no build directory $1" >&2
  exit 2
fi
LIB="$BUILD/lib"
if [ ! -e "$LIB/libc10c.so" ]; then
  echo "test.sh: $LIB/libc10c.so not found (build libc10c first)" >&2
  exit 2
fi

run() {
  echo "+ $*"
  "$@"
}

# The toolchain's caches: the usual ones, or .cache/ here when HOME is missing or unwritable.
if [ -z "${HOME:-}" ] || [ ! -w "${HOME:-/nonexistent}" ]; then
  export GOCACHE="${GOCACHE:-$HERE/.cache/go-build}"
  export GOPATH="${GOPATH:-$HERE/.cache/gopath}"
fi
export GOFLAGS="${GOFLAGS:-}"
export GOPROXY=off        # the binding uses the standard library only
export GOTOOLCHAIN=local  # never download a toolchain (Go >= 1.21; ignored by older ones)
export CGO_ENABLED=1
export CGO_CFLAGS="-I$ROOT/include"
export CGO_LDFLAGS="-L$LIB -lc10c -Wl,-rpath,$LIB"
echo "+ CGO_CFLAGS=$CGO_CFLAGS"
echo "+ CGO_LDFLAGS=$CGO_LDFLAGS"
run go version

cd "$HERE"
run python3 generate.py --check

echo "+ gofmt -l ."
unformatted="$(gofmt -l .)"
if [ -n "$unformatted" ]; then
  echo "test.sh: gofmt would change:" >&2
  echo "$unformatted" >&2
  exit 1
fi

run go vet ./...
run go build ./...
run env GODEBUG=cgocheck=2 go test -count=1 ./...
mkdir -p "$HERE/.cache/bin"
run go build -o "$HERE/.cache/bin/conformance" ./cmd/conformance
run "$HERE/.cache/bin/conformance" -cases "$ROOT/bindings/conformance/cases.json"
