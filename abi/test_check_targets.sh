#!/usr/bin/env bash
# abi/check_targets.sh's own test: against the frozen 1.0 snapshots of three targets
# (x86_64-linux-gnu, i686-linux-gnu, x86_64-w64-mingw32; object files only), a copy of today's
# headers passes, and each mutation below fails on the targets it changes, with a line naming
# the fact. The first one is what only a per-target snapshot sees: a typedef from int64_t to
# long keeps every x86-64 Linux fact (abi/check.sh passes it) but is 4 bytes on i686 and Windows.
#
#   abi/test_check_targets.sh        (about a minute on 2 cores; needs the i686 and mingw gcc)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
targets=(x86_64-linux-gnu i686-linux-gnu x86_64-w64-mingw32)
for t in "${targets[@]}"; do
  mkdir -p "$scratch/releases/1.0/$t"
  cp "$here/1.0/$t/layout.txt" "$scratch/releases/1.0/$t/"
done
export C10C_ABI_DIR=$scratch/releases C10C_INCLUDE_DIR=$scratch/include C10C_TARGETS_NO_RUN=1
export C10C_TARGETS_REQUIRE_ALL=1
failures=0

# edit FILE PYTHON-REGEX REPLACEMENT: one substitution that must match exactly once
edit() {
  python3 - "$scratch/include/c10c/$1" "$2" "$3" <<'EOF'
import re, sys
path, pattern, repl = sys.argv[1:]
text = open(path).read()
new, n = re.subn(pattern, repl, text, flags=re.M)
if n != 1:
    sys.exit(f"test_check_targets: {pattern!r} matched {n} times in {path} (update the mutation)")
open(path, "w").write(new)
EOF
}
# expect NAME pass|fail TARGET [TEXT]: check_targets.sh on TARGET passes or fails (printing TEXT)
expect() {
  local name=$1 want=$2 t=$3 text=${4:-} got=pass
  "$here/check_targets.sh" "$t" >"$scratch/out" 2>&1 || got=fail
  if [ "$got" != "$want" ] || { [ -n "$text" ] && ! grep -qF -- "$text" "$scratch/out"; }; then
    sed 's/^/    /' "$scratch/out"
    echo "FAIL: $name on $t: expected $want${text:+ with '$text'}, got $got"
    failures=$((failures + 1))
  else
    echo "ok: $name on $t: $got${text:+ ($text)}"
  fi
}
fresh() {
  rm -rf "$scratch/include"
  cp -r "$root/include" "$scratch/include"
}

fresh
for t in "${targets[@]}"; do expect "today's headers" pass "$t"; done

fresh
edit stream.h '^typedef int64_t c10c_stream_id;' 'typedef long c10c_stream_id;'
expect "c10c_stream_id as long" pass x86_64-linux-gnu
expect "c10c_stream_id as long" fail i686-linux-gnu "typedef c10c_stream_id changed: 8 signed in release 1.0, 4 signed now"
expect "c10c_stream_id as long" fail x86_64-w64-mingw32 "sizeof c10c_stream changed: 16 in release 1.0, 8 now"

fresh
edit stream.h '^(\s*c10c_stream_id id;.*)$' '\1\n  int32_t extra;'
expect "a field appended to c10c_stream (not size-versioned)" fail i686-linux-gnu \
  "new field in c10c_stream, which is not size-versioned"

fresh
edit dtype.h '\bC10C_DTYPE_FLOAT32 = (\d+)' 'C10C_DTYPE_FLOAT32 = 99'
expect "an enum value changed" fail x86_64-w64-mingw32 "const C10C_DTYPE_FLOAT32"

fresh
edit dtype.h '^(#include [^\n]*)$' '\1\nstatic int c10c_unused_in_cxx;'
expect "a header that warns (-Werror)" fail x86_64-linux-gnu "FAIL: x86_64-linux-gnu: the headers as C11"

if [ "$failures" -gt 0 ]; then
  echo "abi/test_check_targets.sh: $failures expectation(s) failed"
  exit 1
fi
echo "abi/test_check_targets.sh: check_targets.sh fails for every mutation and passes today's headers"
