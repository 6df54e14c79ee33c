#!/usr/bin/env bash
# CMake users' way in: libc10c installed by meson into a staging prefix, the prefix then moved
# elsewhere (a relocated install), and tests/cmake/consumer built against it with
# find_package(c10c 1.1) and the imported targets c10c::c10c and c10c::c10c_static, both run.
# Then the version rule: find_package(c10c 2) and find_package(c10c 1.99) must fail, saying
# which package was considered; find_package(c10c 1.0) must succeed.
#
#   tests/cmake/run.sh                 # this machine (x86-64 Linux here)
#   tests/cmake/run.sh --mingw         # Windows x64: mingw-w64 and wine (tests/cross's file)
#
# Needs cmake, meson, ninja and a C compiler (for --mingw: x86_64-w64-mingw32-gcc and wine).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
mingw=0
[ "${1:-}" = --mingw ] && mingw=1
tmp=$(mktemp -d)
trap '[ $mingw = 0 ] || wineserver -k 2>/dev/null || true; rm -rf "$tmp"' EXIT

setup_args=(-Dpython=disabled -Dtests=false --buildtype=release --prefix=/opt/c10c)
cmake_args=()
if [ $mingw = 1 ]; then
  setup_args+=(--cross-file tests/cross/x86_64-w64-mingw32.ini)
  cmake_args+=(-DCMAKE_SYSTEM_NAME=Windows -DCMAKE_C_COMPILER=x86_64-w64-mingw32-gcc
               -DCMAKE_FIND_ROOT_PATH_MODE_PACKAGE=BOTH)
  export WINEPREFIX="$tmp/wine" WINEDEBUG=-all
fi
meson setup "$tmp/build" "${setup_args[@]}" >/dev/null
meson compile -C "$tmp/build" >/dev/null
meson install -C "$tmp/build" --destdir "$tmp/stage" >/dev/null
mv "$tmp/stage/opt/c10c" "$tmp/moved" # the prefix the files were installed for is gone
rm -rf "$tmp/stage" "$tmp/build"
config=$(find "$tmp/moved" -name c10cConfig.cmake)
echo "installed, then moved: ${config#"$tmp/moved/"}"

consume() { # build dir, extra cmake arguments...
  local dir=$1
  shift
  cmake -S "$root/tests/cmake/consumer" -B "$dir" -DCMAKE_PREFIX_PATH="$tmp/moved" \
    "${cmake_args[@]}" "$@"
}

consume "$tmp/ok" >"$tmp/ok.log" 2>&1 || { cat "$tmp/ok.log"; exit 1; }
grep -- "-- c10c " "$tmp/ok.log"
cmake --build "$tmp/ok" >/dev/null
for exe in consumer consumer_static; do
  if [ $mingw = 1 ]; then
    find "$tmp/moved" -name "libc10c-*.dll" -exec cp {} "$tmp/ok/" \; # Windows looks beside the program
    out=$(wine "$tmp/ok/$exe.exe" | tr -d '\r')
  else
    out=$("$tmp/ok/$exe") # the shared one through the build tree's RPATH to the moved library
  fi
  echo "$exe: $out"
  case "$out" in "c10c 1."*": float32 tensor of 6 elements") ;; *) echo "unexpected output"; exit 1 ;; esac
done

consume "$tmp/v10" -DC10C_REQUIRE_VERSION=1.0 >"$tmp/v10.log" 2>&1 || {
  cat "$tmp/v10.log"; echo "find_package(c10c 1.0) failed"; exit 1; }
for v in 2 1.99; do
  if consume "$tmp/v$v" -DC10C_REQUIRE_VERSION=$v >"$tmp/v$v.log" 2>&1; then
    echo "find_package(c10c $v) succeeded against $(grep -o 'c10c [0-9.]* (ABI' "$tmp/v$v.log")"
    exit 1
  fi
  grep -q "requested version \"$v\"" "$tmp/v$v.log" || {
    cat "$tmp/v$v.log"; exit 1; }
  echo "find_package(c10c $v): refused ($(grep -o 'version: [0-9.]*' "$tmp/v$v.log" | head -1))"
done
echo "ok"
