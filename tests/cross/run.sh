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
    aarch64-linux-gnu | aarch64-linux-gnu-64k)
      echo "gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user qemu-user-static" ;;
    s390x-linux-gnu) echo "gcc-s390x-linux-gnu g++-s390x-linux-gnu qemu-user qemu-user-static" ;;
    i686-linux-gnu) echo "gcc-i686-linux-gnu g++-i686-linux-gnu libc6-i386" ;;
    x86_64-linux-musl | x86_64-linux-musl-static) echo "musl-tools" ;;
    x86_64-w64-mingw32) echo "gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64 binutils-mingw-w64-x86-64 wine64" ;;
    *-macos) echo "" ;; # zig's compiler and linker, from PyPI (ziglang, below)
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

# macOS: zig cc, from ziglang on PyPI, in the Python that runs meson
for t in "${targets[@]}"; do
  case "$t" in
    *-macos)
      python3 -c 'import ziglang' 2>/dev/null || python3 -m pip install -q ziglang
      break
      ;;
  esac
done

# Tests that start a copy of themselves (test_cuda_ipc, the replay suite's scripts) run the
# target's program directly: the kernel hands it to qemu through binfmt_misc, which Debian's
# qemu-user-static describes but, in a container without systemd, does not always register.
register_binfmt() {
  local arch=$1 dir=/proc/sys/fs/binfmt_misc spec=/usr/share/binfmts/qemu-$1
  [ -e "$dir/qemu-$arch" ] && return 0
  [ -w "$dir/register" ] || mount -t binfmt_misc binfmt_misc "$dir" 2>/dev/null || true
  if [ ! -w "$dir/register" ] || [ ! -f "$spec" ]; then
    echo "note: qemu-$arch is not registered with binfmt_misc: tests that start themselves again fail"
    return 0
  fi
  printf ':qemu-%s:M:%s:%s:%s:%s:POF' "$arch" "$(sed -n 's/^offset //p' "$spec")" \
    "$(sed -n 's/^magic //p' "$spec")" "$(sed -n 's/^mask //p' "$spec")" \
    "$(sed -n 's/^interpreter //p' "$spec")" >"$dir/register"
}
for t in "${targets[@]}"; do
  case "$t" in
    aarch64-linux-gnu*) register_binfmt aarch64 ;;
    s390x-linux-gnu) register_binfmt s390x ;;
  esac
done

suite_args=()
for s in ${C10C_CROSS_SUITES:-}; do suite_args+=(--suite "$s"); done

for t in "${targets[@]}"; do
  # 64 KiB pages are the 4 KiB build's programs run under qemu presenting larger pages
  built=$t
  [ "$t" = aarch64-linux-gnu-64k ] && built=aarch64-linux-gnu
  build=build/cross-$built
  printf '\n--- %s\n' "$t"
  [ -f "$build/build.ninja" ] ||
    meson setup "$build" --cross-file "$here/$built.ini" -Dpython=disabled >/dev/null
  meson compile -C "$build" >/dev/null
  # The VAR=value words of the exe_wrapper (qemu's QEMU_LD_PREFIX, QEMU_PAGESIZE) go into the
  # environment too: tests that re-execute themselves, and the scripts of the replay suite that
  # run the target's programs, reach qemu through binfmt_misc, without the cross file's wrapper.
  wrapper_env=$(sed -n "s/^exe_wrapper *=//p" "$here/$t.ini" | grep -o "'[A-Z_][A-Z0-9_]*=[^']*'" |
    tr -d "'" || true)
  case "$t" in
    *mingw32)
      # wine: a throwaway prefix (its first start, wineboot, takes about 10 s), quiet
      export WINEPREFIX="${WINEPREFIX:-/tmp/c10c-wine-$t}" WINEDEBUG="${WINEDEBUG:--all}"
      [ -d "$WINEPREFIX" ] || /usr/lib/wine/wine64 wineboot --init >/dev/null 2>&1
      # one server for the whole run, kept 60 s past its last client: by default it exits 3 s
      # after one, and a test starting just then failed with "wine client error:0: recvmsg:
      # Connection reset by peer" (seen once in CI, test_engine.exe, which passes on its own).
      # A first client starts wine's system processes (services.exe, ...), which live as long
      # as the server: started by a test, they would hold its output pipe open and meson would
      # time the test out; started here, they hold /dev/null.
      "$(command -v wineserver || echo /usr/lib/wine/wineserver64)" -p60 </dev/null >/dev/null 2>&1 || true
      /usr/lib/wine/wine64 cmd /c exit </dev/null >/dev/null 2>&1 || true
      ;;
  esac
  case "$t" in
    *macos*)
      # the .dylib exports exactly the map's functions (and the two symbols the linker adds)
      nm=$(command -v llvm-nm || echo nm)
      diff <(grep -o '^ *c10c_[a-z0-9_]*;' lib/libc10c.map | tr -d ' ;' | sort -u) \
        <("$nm" -gUj "$build"/lib/libc10c.*.dylib | sed 's/^_//' |
          grep -vx '_mh_dylib_header\|__dso_handle' | sort) ||
        { echo "$build/lib: the .dylib exports other symbols than lib/libc10c.map's (> lines)"; exit 1; }
      echo "built and linked (no runner here); the .dylib exports the map's $(grep -c '^ *c10c_' lib/libc10c.map) functions"
      ;;
    # shellcheck disable=SC2086
    *) env $wrapper_env meson test -C "$build" --num-processes 2 --print-errorlogs "${suite_args[@]}" ;;
  esac
done
