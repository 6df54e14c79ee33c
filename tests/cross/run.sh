#!/usr/bin/env bash
# Builds libc10c for another target with -Werror and runs its C suite (and the fuzz corpora's
# replay, suite 'fuzz') there, under the cross file's exe_wrapper (qemu-user, wine); targets with
# no runner here are built and linked only.
#
#   bash tests/cross/run.sh TARGET...     (TARGET: a tests/cross/TARGET.ini, or 'all')
#   C10C_CROSS_INSTALL=1 ...              installs the toolchains first (Debian packages, PyPI)
#   C10C_CROSS_SUITES="c fuzz" ...        runs only those meson suites (CI's bounded form: leaves
#                                         out 'abi', the host-side checks of the exports and layers,
#                                         and 'replay', the allocator benchmarks' replays)
#
# Each target builds into build/cross-TARGET.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=tests/cross
targets=("$@")
if [ "${targets[0]:-all}" = all ]; then
  targets=()
  for f in "$here"/*.ini; do targets+=("$(basename "$f" .ini)"); done
fi

# what each target runs on: a command to check for, and the Debian packages that bring it
packages() {
  case "$1" in
    aarch64-linux-gnu) echo "gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user" ;;
    s390x-linux-gnu) echo "gcc-s390x-linux-gnu g++-s390x-linux-gnu qemu-user qemu-user-static" ;;
    i686-linux-gnu) echo "gcc-i686-linux-gnu g++-i686-linux-gnu qemu-user" ;;
    *) echo "" ;;
  esac
}

if [ "${C10C_CROSS_INSTALL:-0}" = 1 ]; then
  need=()
  for t in "${targets[@]}"; do
    # shellcheck disable=SC2207
    need+=($(packages "$t"))
  done
  if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi
fi

suite_args=()
for s in ${C10C_CROSS_SUITES:-}; do suite_args+=(--suite "$s"); done

for t in "${targets[@]}"; do
  build=build/cross-$t
  printf '\n--- %s\n' "$t"
  [ -f "$build/build.ninja" ] ||
    meson setup "$build" --cross-file "$here/$t.ini" -Dpython=disabled >/dev/null
  meson compile -C "$build" >/dev/null
  case "$t" in
    *macos*) echo "built and linked (no runner here)" ;;
    *) meson test -C "$build" --num-processes 2 --print-errorlogs "${suite_args[@]}" ;;
  esac
done
