#!/usr/bin/env bash
# Builds libc10c for another target with -Werror and runs its C suite (and the fuzz corpora's
# replay, suite 'fuzz') there, under the cross file's exe_wrapper (qemu-user, wine); targets with
# no runner here are built and linked only.
#
#   bash tests/cross/run.sh TARGET...     (TARGET: a tests/cross/TARGET.ini, or 'all')
#   C10C_CROSS_INSTALL=1 ...              installs the toolchains first (Debian packages, PyPI)
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
    aarch64-linux-gnu | aarch64-linux-gnu-64k)
      echo "gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user qemu-user-static" ;;
    s390x-linux-gnu) echo "gcc-s390x-linux-gnu g++-s390x-linux-gnu qemu-user" ;;
    i686-linux-gnu) echo "gcc-i686-linux-gnu g++-i686-linux-gnu libc6-i386" ;;
    x86_64-linux-musl | x86_64-linux-musl-static) echo "musl-tools" ;;
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

for t in "${targets[@]}"; do
  build=build/cross-$t
  printf '\n--- %s\n' "$t"
  [ -f "$build/build.ninja" ] ||
    meson setup "$build" --cross-file "$here/$t.ini" -Dpython=disabled >/dev/null
  meson compile -C "$build" >/dev/null
  # The VAR=value words of the exe_wrapper (qemu's QEMU_LD_PREFIX, QEMU_PAGESIZE) go into the
  # environment too: tests that re-execute themselves, and the scripts of the replay suite that
  # run the target's programs, reach qemu through binfmt_misc, without the cross file's wrapper.
  wrapper_env=$(sed -n "s/^exe_wrapper *=//p" "$here/$t.ini" | grep -o "'[A-Z_][A-Z0-9_]*=[^']*'" |
    tr -d "'" || true)
  # shellcheck disable=SC2086
  case "$t" in
    *macos*) echo "built and linked (no runner here)" ;;
    *) env $wrapper_env meson test -C "$build" --num-processes 2 --print-errorlogs ;;
  esac
done
