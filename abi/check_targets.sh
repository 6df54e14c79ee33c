#!/usr/bin/env bash
# The public headers on every target a toolchain here builds for (abi/README.md, "Per target"):
#   - they compile as C11 and as C++11 and C++17 with -Wall -Wextra -Wpedantic -Werror (all of
#     them in one translation unit; on the build machine also each header alone);
#   - every public constant, struct layout and scalar typedef, and every public function's return
#     and parameter sizes and alignments, as the target's compiler sees them
#     (abi/abitool.py target-snapshot: read from the object file; on targets that run here,
#     under qemu-user or wine, also printed by the program run there), keep what each frozen
#     release recorded in abi/<MAJOR.MINOR>/<TARGET>/layout.txt, under abi/check.sh's rules
#     (a size-versioned struct grows at its end only, anything new needs an ABI minor bump).
#
#   abi/check_targets.sh [TARGET...]           check (default: every target below)
#   abi/check_targets.sh --list                the targets and whether their toolchain is here
#   abi/check_targets.sh --freeze DIR INCLUDE_DIR [TARGET...]
#                                              write DIR/<TARGET>/layout.txt from INCLUDE_DIR's
#                                              headers (abi/freeze.sh; never overwrites)
#
# A target whose compiler is missing is skipped with a line saying so;
# C10C_TARGETS_REQUIRE_ALL=1 makes that a failure. C10C_ABI_DIR=DIR takes the releases from DIR,
# C10C_INCLUDE_DIR=DIR the headers (abi/test_check_targets.sh); C10C_TARGETS_NO_RUN=1 reads the
# object files only (no qemu or wine).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
tool=(python3 "$here/abitool.py")
releases=${C10C_ABI_DIR:-$here}
zig="python3 -m ziglang"

all_targets=(x86_64-linux-gnu i686-linux-gnu aarch64-linux-gnu s390x-linux-gnu x86_64-linux-musl
  x86_64-w64-mingw32 aarch64-macos x86_64-macos)

# target NAME: sets cc, cxx (empty: no C++ compiler for it), flags, run (unset: cannot run here),
# suffix (of an executable)
target() {
  unset run
  flags="" suffix=""
  case "$1" in
    x86_64-linux-gnu) cc=gcc cxx=g++ run="" ;;
    i686-linux-gnu | aarch64-linux-gnu | s390x-linux-gnu)
      cc=$1-gcc cxx=$1-g++
      local q=${1%%-*}
      [ "$q" = i686 ] && q=i386
      run="qemu-$q -L /usr/$1"
      ;;
    x86_64-linux-musl) cc=musl-gcc cxx="" flags=-static run="" ;;
    x86_64-w64-mingw32)
      cc=$1-gcc cxx=$1-g++ flags=-static suffix=.exe
      local wine=/usr/lib/wine/wine64
      [ -x "$wine" ] || wine=$(command -v wine64 || command -v wine || true)
      [ -n "$wine" ] && run=$wine
      ;;
    aarch64-macos | x86_64-macos) cc="$zig cc -target $1" cxx="$zig c++ -target $1" ;;
    *)
      echo "abi/check_targets.sh: unknown target $1 (known: ${all_targets[*]})"
      exit 2
      ;;
  esac
}

have() { # have COMMAND-LINE: its program is here
  case "$1" in
    "$zig"*) python3 -c 'import ziglang' 2>/dev/null ;;
    *) command -v "${1%% *}" >/dev/null ;;
  esac
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export WINEDEBUG=-all

snapshot() { # snapshot TARGET INCLUDE_DIR OUT
  target "$1"
  local runarg=()
  [ -n "${run+x}" ] && [ "${C10C_TARGETS_NO_RUN:-0}" != 1 ] && runarg=("--run=$run")
  "${tool[@]}" target-snapshot "$2" --target "$1" "--cc=$cc" "--flags=$flags" "--exe-suffix=$suffix" \
    "${runarg[@]}" >"$3"
}

if [ "${1:-}" = --list ]; then
  for t in "${all_targets[@]}"; do
    target "$t"
    if have "$cc"; then
      echo "$t: ${cc}${cxx:+, $cxx}${run+, runs under ${run:-this machine}}"
    else
      echo "$t: no $cc here"
    fi
  done
  exit 0
fi

if [ "${1:-}" = --freeze ]; then
  out=${2:?usage: abi/check_targets.sh --freeze DIR INCLUDE_DIR [TARGET...]}
  inc=$(cd "${3:?usage: abi/check_targets.sh --freeze DIR INCLUDE_DIR [TARGET...]}" && pwd)
  shift 3
  targets=("$@")
  [ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
  for t in "${targets[@]}"; do
    target "$t"
    if [ -e "$out/$t/layout.txt" ]; then
      echo "abi/check_targets.sh: $out/$t/layout.txt exists: a frozen snapshot is never rewritten"
      exit 1
    fi
    if ! have "$cc"; then
      echo "skipped $t: no $cc here"
      continue
    fi
    mkdir -p "$out/$t"
    snapshot "$t" "$inc" "$work/layout.txt"
    mv "$work/layout.txt" "$out/$t/layout.txt"
    echo "froze $t: $(grep -vc '^#' "$out/$t/layout.txt") facts"
  done
  exit 0
fi

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
inc=$(cd "${C10C_INCLUDE_DIR:-$root/include}" && pwd)
skipped=()
check_tail=2
. "$here/check_lib.sh" # check NAME COMMAND...: run it, remember a failure, go on
warn=(-Wall -Wextra -Wpedantic -Werror)
# one translation unit with every public header
for h in "$inc"/c10c/*.h; do echo "#include <c10c/$(basename "$h")>"; done >"$work/all.h"
printf '#include "all.h"\nint c10c_headers_compile;\n' >"$work/all.c"
cp "$work/all.c" "$work/all.cpp"
compile() { # compile COMPILER-LINE STD SOURCE: one object, warnings are errors
  # shellcheck disable=SC2086
  $1 "-std=$2" "${warn[@]}" -I "$inc" -I "$work" -c "$3" -o "$work/out.o"
}
alone() { # alone COMPILER-LINE STD EXT: each header alone in its own translation unit
  local h
  for h in "$inc"/c10c/*.h; do
    printf '#include <c10c/%s>\nint c10c_header_alone;\n' "$(basename "$h")" >"$work/alone.$3"
    compile "$1" "$2" "$work/alone.$3" || {
      echo "$(basename "$h") does not compile alone"
      return 1
    }
  done
  echo "$(ls "$inc"/c10c/*.h | wc -l) headers"
}
compare_releases() { # compare_releases TARGET SNAPSHOT
  local found=0 rel
  for rel in $(cd "$releases" 2>/dev/null && ls -d [0-9]*.[0-9]*/ 2>/dev/null | tr -d / | sort -V); do
    found=1
    if [ ! -s "$releases/$rel/$1/layout.txt" ]; then
      echo "release $rel has no $1/layout.txt (abi/check_targets.sh --freeze records one)"
      return 1
    fi
    "${tool[@]}" compare-target "$releases/$rel/$1/layout.txt" "$2" "$here/suppressions.abignore" \
      "$here/constants.allow" || return 1
  done
  [ "$found" = 1 ] || echo "no release frozen under $releases"
}

for t in "${targets[@]}"; do
  target "$t"
  echo "== $t"
  if ! have "$cc"; then
    echo "  skipped: no $cc here"
    skipped+=("$t")
    continue
  fi
  start=$SECONDS
  check "$t: the headers as C11" compile "$cc" c11 "$work/all.c"
  if [ -n "$cxx" ] && have "$cxx"; then
    check "$t: the headers as C++11" compile "$cxx" c++11 "$work/all.cpp"
    check "$t: the headers as C++17" compile "$cxx" c++17 "$work/all.cpp"
  else
    echo "  (no C++ compiler for $t)"
  fi
  if [ "$t" = x86_64-linux-gnu ]; then
    check "$t: each header alone as C11" alone "$cc" c11 c
    check "$t: each header alone as C++11" alone "$cxx" c++11 cpp
  fi
  if snapshot "$t" "$inc" "$work/$t.txt" 2>"$work/err"; then
    check "$t: constants, layouts and call sizes of every frozen release" compare_releases "$t" "$work/$t.txt"
  else
    sed 's/^/  /' "$work/err"
    echo "FAIL: $t: the snapshot program"
    failed+=("$t: the snapshot program")
  fi
  echo "  ($((SECONDS - start)) s)"
done

# the build machine's target snapshot says what abi/check.sh's constants.txt says
for rel in $(cd "$releases" 2>/dev/null && ls -d [0-9]*.[0-9]*/ 2>/dev/null | tr -d / | sort -V); do
  native=$releases/$rel/x86_64-linux-gnu/layout.txt
  [ -s "$native" ] && [ -s "$releases/$rel/constants.txt" ] || continue
  check "release $rel: x86_64-linux-gnu/layout.txt agrees with constants.txt" diff \
    <(grep -v '^#\|^func ' "$releases/$rel/constants.txt") <(grep -v '^#\|^abi ' "$native")
done

if [ ${#skipped[@]} -gt 0 ]; then
  echo "skipped (no toolchain here): ${skipped[*]}"
  [ "${C10C_TARGETS_REQUIRE_ALL:-0}" = 1 ] && failed+=("toolchains for ${skipped[*]}")
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "abi/check_targets.sh: ${#failed[@]} check(s) failed:"
  printf '  - %s\n' "${failed[@]}"
  exit 1
fi
echo "abi/check_targets.sh: the headers and their ABI hold on ${targets[*]}"
