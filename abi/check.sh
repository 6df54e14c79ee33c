#!/usr/bin/env bash
# Compare the ABI of a libc10c build with the stored baseline (libabigail), and the exported
# symbols with the checked-in list. Any difference fails: a struct, enum or signature change,
# a removed function, or a new symbol missing from exported_symbols.txt.
#
#   abi/check.sh BUILD_DIR            check (the build must have debug info: -g)
#   abi/check.sh BUILD_DIR --update   rewrite the baseline and the list (a deliberate ABI change)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: abi/check.sh BUILD_DIR [--update]}
lib="$build/lib/libc10c.so.1"
baseline=abi/libc10c.so.1.abi

if [ "${2:-}" = "--update" ]; then
  abidw --headers-dir include --out-file "$baseline" "$lib"
  { echo "# Symbols libc10c.so.1 exports (ABI 1.0). tests/check_symbols.py compares the built library with this list."
    nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | grep -v '^C10C_' | sort; } \
    > abi/exported_symbols.txt
  echo "updated $baseline and abi/exported_symbols.txt"
  exit 0
fi

# A stripped library or a baseline without types would pass silently: refuse both.
readelf -S "$lib" | grep -q '\.debug_info' || { echo "abi/check.sh: $lib has no debug info"; exit 1; }
grep -q '<abi-instr' "$baseline" || { echo "abi/check.sh: $baseline holds no types"; exit 1; }
abidw --abidiff "$lib" >/dev/null || { echo "abi/check.sh: DWARF self-check failed"; exit 1; }
python3 tests/check_symbols.py "$lib" abi/exported_symbols.txt
if ! abidiff --no-added-syms --headers-dir2 include "$baseline" "$lib"; then
  echo "abi/check.sh: the ABI differs from $baseline (see above)"
  exit 1
fi
echo "ABI matches $baseline"
