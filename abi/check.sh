#!/usr/bin/env bash
# Compare a libc10c build with EVERY frozen release under abi/<MAJOR.MINOR>/ (abi/README.md):
#   - symbols: every name@version pair a release exported is still exported with that version;
#     a new symbol must be in a version node newer than every frozen one;
#   - constants and layouts: every enumerator and integer macro of the public headers keeps its
#     value, every public struct its size, alignment and field offsets, sizes and types, every
#     scalar typedef its width and signedness (abi/abitool.py snapshot); a struct listed in
#     abi/suppressions.abignore may grow at the end only; abi/constants.allow names the few
#     constants that change by design (the release number);
#   - anything added since a release needs C10C_ABI_VERSION_MINOR above that release's;
#   - types and signatures: abidiff of the release's XML with the library (--no-added-syms,
#     abi/suppressions.abignore).
# Before any of that: the library has debug info with type information for every exported
# function, lib/libc10c.map lists exactly the public headers' C10C_API functions, and the library
# exports exactly the map's name@node pairs. A frozen release is never rewritten: there is no
# option to update a baseline, and in a git checkout a frozen file that was ever modified,
# renamed or deleted fails the check.
#
#   abi/check.sh BUILD_DIR
#
# BUILD_DIR is a meson build of this tree (or a copy of it: the headers are taken from the
# build's source directory) with full type information: --buildtype=debug (gcc's link-time
# optimization at -O2 leaves some functions without DWARF, which abidiff would skip silently).
# C10C_ABI_DIR=DIR takes the releases from DIR instead of abi/ (abi/test_check.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: abi/check.sh BUILD_DIR}" && pwd)
lib=$build/lib/libc10c.so.1
tool=(python3 "$here/abitool.py")
src=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["directories"]["source"])' \
  "$build/meson-info/meson-info.json")
releases=${C10C_ABI_DIR:-$here}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

check_tail=3
. "$here/check_lib.sh" # check NAME COMMAND...: run it, remember a failure, go on with the next check

[ -f "$lib" ] || { echo "abi/check.sh: no $lib (build the library first)"; exit 1; }
# A stripped library would pass abidiff silently.
readelf -S "$lib" | grep -q '\.debug_info' || { echo "abi/check.sh: $lib has no debug info"; exit 1; }

echo "== $lib (sources: $src)"
check "map lists exactly the public functions" "${tool[@]}" map-check "$src/include" "$src/lib/libc10c.map"
check "library exports exactly the map" "${tool[@]}" exports "$lib" "$src/lib/libc10c.map"
"${tool[@]}" symbols "$lib" >"$work/symbols.txt"
check "constants and layouts snapshot" sh -c '"$@" > "'"$work/constants.txt"'"' - "${tool[@]}" snapshot "$src/include"
abidw --headers-dir "$src/include" --out-file "$work/current.abi" "$lib"
check "type information for every exported function" "${tool[@]}" typeinfo "$work/current.abi" "$work/symbols.txt"
check "DWARF round trip (abidw --abidiff)" abidw --abidiff "$lib"

# Frozen files are never changed (git history of this checkout).
if [ -z "${C10C_ABI_DIR:-}" ] && git -C "$here" rev-parse --git-dir >/dev/null 2>&1; then
  touched=$(git -C "$here" log --format= --name-status --diff-filter=DMRT -- ':(glob)[0-9]*.[0-9]*/**' | sort -u)
  check "frozen releases never rewritten" sh -c '[ -z "$1" ] || { printf "%s\n" "$1"; echo "frozen release files were changed after the freeze (history above)"; exit 1; }' - "$touched"
fi

found=0
for rel in $(cd "$releases" 2>/dev/null && ls -d [0-9]*.[0-9]*/ 2>/dev/null | tr -d / | sort -V); do
  found=1
  dir=$releases/$rel
  echo "== release $rel ($dir)"
  missing=""
  for f in libc10c.abi symbols.txt constants.txt; do
    [ -s "$dir/$f" ] || missing="$missing $f"
  done
  if [ -n "$missing" ]; then
    echo "  $dir lacks:$missing"
    failed+=("release $rel is complete")
    continue
  fi
  check "release $rel: symbols, constants and layouts" "${tool[@]}" compare "$dir" "$work/symbols.txt" \
    "$work/constants.txt" "$here/suppressions.abignore" "$here/constants.allow"
  check "release $rel: abidiff" abidiff --no-added-syms --suppressions "$here/suppressions.abignore" \
    --headers-dir2 "$src/include" "$dir/libc10c.abi" "$lib"
done

if [ "$found" = 0 ]; then
  echo "== no release frozen under $releases: only the checks above ran (abi/freeze.sh records one)"
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "abi/check.sh: ${#failed[@]} check(s) failed:"
  printf '  - %s\n' "${failed[@]}"
  exit 1
fi
echo "abi/check.sh: the ABI is compatible with every frozen release"
