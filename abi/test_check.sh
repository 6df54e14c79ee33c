#!/usr/bin/env bash
# The ABI checker's own test: abi/check.sh must fail for every incompatible change and pass for
# the compatible ones. A copy of the library's sources is built (--buildtype=debug, the shared
# library only, ccache when present, -Dwerror=false: a mutation may leave a warning), frozen
# into a scratch release of the headers' ABI (1.MINOR, abi/freeze.sh with C10C_ABI_DIR), then
# changed one mutation at a time, rebuilt and checked against that release. "The newest node" is
# C10C_1.MINOR, "a new node" C10C_1.(MINOR+1).
#
#   abi/test_check.sh            (about 3 minutes on 2 cores; .ci/run runs it)
#   C10C_TEST_CHECK_KEEP=1 ...   keeps the scratch directory and prints its path
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
scratch=$(mktemp -d)
[ -n "${C10C_TEST_CHECK_KEEP:-}" ] && echo "scratch: $scratch" || trap 'rm -rf "$scratch"' EXIT
src=$scratch/src
build=$scratch/build
export C10C_ABI_DIR=$scratch/releases
minor=$(sed -n 's/^#define C10C_ABI_VERSION_MINOR \([0-9][0-9]*\)$/\1/p' "$root/include/c10c/version.h")
[ -n "$minor" ] || { echo "test_check: no C10C_ABI_VERSION_MINOR in include/c10c/version.h"; exit 1; }
next=$((minor + 1))
frozen=1.$minor      # the scratch release
newest=C10C_1.$minor # its newest node
new=C10C_1.$next     # a node newer than every frozen one

mkdir -p "$src"
# what a -Dtests=false -Dpython=disabled build reads (meson.build installs LICENSE and NOTICE)
cp -r "$root/meson.build" "$root/meson.options" "$root/LICENSE" "$root/NOTICE" "$root/include" "$root/lib" "$src/"
cp -r "$src" "$scratch/pristine"
cc=${CC:-cc}
command -v ccache >/dev/null && cc="ccache $cc"
CC=$cc meson setup "$build" "$src" -Dpython=disabled -Dtests=false --buildtype=debug -Dwerror=false \
  >"$scratch/setup.log" 2>&1 || { cat "$scratch/setup.log"; echo "test_check: meson setup failed"; exit 1; }
target=$(meson introspect "$build" --targets | python3 -c '
import json, sys
print(next(t["name"] + ":" + t["type"].replace(" ", "_") for t in json.load(sys.stdin)
           if t["type"] == "shared library" and t["name"] == "c10c"))')
# (regenerated first: an ABI minor bump renames the library's file, libc10c.so.1.1.0)
rebuild() { { ninja -C "$build" build.ninja && meson compile -C "$build" "$target"; } >"$scratch/build.log" 2>&1 || {
  cat "$scratch/build.log"
  echo "test_check: the mutated library did not build"
  exit 1
}; }
rebuild
"$here/freeze.sh" "$build" "$frozen" >"$scratch/freeze.log" 2>&1 || { cat "$scratch/freeze.log"; exit 1; }

# edit FILE PYTHON-REGEX REPLACEMENT: one substitution that must match exactly once
edit() {
  python3 - "$src/$1" "$2" "$3" <<'EOF'
import re, sys
path, pattern, repl = sys.argv[1:]
text = open(path).read()
new, n = re.subn(pattern, repl, text, flags=re.M)
if n != 1:
    sys.exit(f"test_check: {pattern!r} matched {n} times in {path} (update the mutation)")
open(path, "w").write(new)
EOF
}
restore() {
  rm -rf "$src/include" "$src/lib"
  cp -r "$scratch/pristine/include" "$scratch/pristine/lib" "$scratch/pristine/meson.build" "$src/"
}
bump_minor() { edit include/c10c/version.h "^(#define C10C_ABI_VERSION_MINOR) $minor\$" "\\1 $next"; }
new_node() { # new_node SYMBOL: a node $new holding SYMBOL, after every other
  edit lib/libc10c.map '\Z' "\n$new {\n  global:\n    $1;\n} $newest;\n"
}
add_function() { # add_function NODE: c10c_mutation_added, declared, defined and listed in NODE
  edit include/c10c/version.h '^(C10C_API uint32_t c10c_abi_version\(void\);)$' \
    '\1\nC10C_API uint32_t c10c_mutation_added(void);'
  edit lib/base/version.c '^(uint32_t c10c_abi_version\(void\) \{.*\})$' \
    '\1\nuint32_t c10c_mutation_added(void) { return 1; }'
  if [ "$1" = "$new" ]; then
    new_node c10c_mutation_added
  else # a node the map has
    edit lib/libc10c.map "^($1 \\{\\n  global:\\n)" '\1    c10c_mutation_added;\n'
  fi
}

passed=0
failures=()
expect() { # expect pass|fail NAME: rebuild, run check.sh, compare, restore the sources
  local want=$1 name=$2 got
  rebuild
  if "$here/check.sh" "$build" >"$scratch/check.log" 2>&1; then got=pass; else got=fail; fi
  if [ "$got" = "$want" ]; then
    passed=$((passed + 1))
    echo "ok: $name: check.sh ${got/pass/passe}s"
    [ "$got" = fail ] && grep -E '^  [^ ]' "$scratch/check.log" | grep -v -E '^  [0-9]+ (functions|exported)' |
      head -n 3 | sed 's/^/      /'
  else
    echo "FAILED: $name: check.sh ${got}ed, expected $want"
    sed 's/^/    | /' "$scratch/check.log"
    failures+=("$name")
  fi
  restore
}

expect pass "the clean library"

# remove c10c_tensor_zero_ from the ABI: no longer C10C_API, not in the map (consistent, but an
# old host that calls it fails to load)
edit include/c10c/tensor.h '^C10C_API (c10c_status c10c_tensor_zero_\()' '\1'
edit lib/libc10c.map '^    c10c_tensor_zero_;\n' ''
expect fail "removed symbol"

# the device guard a host allocates on its stack: a field before the others
edit include/c10c/cuda.h '^(typedef struct c10c_cuda_device_guard \{)$' '\1\n  int32_t mutation;'
expect fail "changed layout of c10c_cuda_device_guard"

# ... and a field's type widened: abidiff alone reports nothing for this one (libabigail 2.2,
# tried with --no-default-suppression and --harmless too); the layout snapshot catches it
edit include/c10c/cuda.h '^  c10c_device_index current;' '  int16_t current;'
expect fail "c10c_cuda_device_guard.current widened to int16_t"

# a field inserted in the middle of a size-versioned struct (listed in suppressions.abignore)
bump_minor
edit include/c10c/allocator.h '^(  int64_t num_ooms;)$' '  int64_t mutation;\n\1'
expect fail "field inserted in the middle of c10c_memory_stats (ABI minor bumped)"

# two pointer parameters swapped, header and definition alike (abidiff alone files this under
# "filtered out": the snapshot's function signatures catch it)
edit include/c10c/allocator.h '^(C10C_API c10c_status c10c_allocator_allocate\()c10c_data_ptr \*out, c10c_allocator \*allocator,$' \
  '\1c10c_allocator *allocator, c10c_data_ptr *out,'
edit lib/memory/allocator.c '^(c10c_status c10c_allocator_allocate\()c10c_data_ptr \*out, c10c_allocator \*allocator,' \
  '\1c10c_allocator *allocator, c10c_data_ptr *out,'
expect fail "parameters of c10c_allocator_allocate swapped"

# a callback's signature in a struct the host fills (the allocator vtable's allocate)
edit include/c10c/allocator.h '^(  c10c_status \(\*allocate\)\()c10c_data_ptr \*out, void \*self,' '\1void *self, c10c_data_ptr *out,'
expect fail "parameters of the vtable's allocate callback swapped"

# enum values swapped
edit include/c10c/dtype.h '(C10C_DTYPE_FLOAT32 = )6,' '\g<1>7,'
edit include/c10c/dtype.h '(C10C_DTYPE_FLOAT64 = )7,' '\g<1>6,'
expect fail "C10C_DTYPE_FLOAT32 and C10C_DTYPE_FLOAT64 swapped"

# a macro constant changed
edit include/c10c/dlpack.h '^(#define DLPACK_FLAG_BITMASK_IS_COPIED +\(UINT64_C\(1\) << )1\)' '\g<1>3)'
# (with its enum twin, which dlpack.c static-asserts equal)
edit include/c10c/dlpack.h '^(  C10C_DLPACK_FLAG_BITMASK_IS_COPIED = 1 << )1,' '\g<1>3,'
expect fail "macro DLPACK_FLAG_BITMASK_IS_COPIED changed"

# a return type changed (uint32_t -> uint64_t), header and definition alike
edit include/c10c/version.h '^C10C_API uint32_t (c10c_version_number\(void\);)$' 'C10C_API uint64_t \1'
edit lib/base/version.c '^uint32_t (c10c_version_number\(void\))' 'uint64_t \1'
expect fail "return type of c10c_version_number changed"

# a new function in the frozen node C10C_1.0, or in the newest frozen node (even with the minor
# bumped)
bump_minor
add_function C10C_1.0
expect fail "new function in the frozen node C10C_1.0"
if [ "$newest" != C10C_1.0 ]; then
  bump_minor
  add_function "$newest"
  expect fail "new function in the frozen node $newest"
fi

# a new function in a new node without bumping C10C_ABI_VERSION_MINOR
add_function "$new"
expect fail "new function in $new without an ABI minor bump"

# an existing function moved to a newer node (old hosts ask for c10c_tensor_zero_@C10C_1.0)
bump_minor
edit lib/libc10c.map '^    c10c_tensor_zero_;\n' ''
new_node c10c_tensor_zero_
expect fail "c10c_tensor_zero_ moved from C10C_1.0 to $new"

# a new enumerator without an ABI minor bump
edit include/c10c/allocator.h '(C10C_STAT_LARGE_POOL = 2) \}' '\1, C10C_STAT_MUTATION = 3 }'
expect fail "new constant without an ABI minor bump"

# compatible: a new function in a new node with the minor bumped
bump_minor
add_function "$new"
expect pass "new function in $new, ABI minor $next"

# compatible: a field appended to a size-versioned struct, minor bumped
bump_minor
edit include/c10c/allocator.h '^(\} c10c_memory_stats;)$' '  int64_t mutation_appended;\n\1'
expect pass "field appended to c10c_memory_stats (size-versioned), ABI minor $next"

# compatible: a field appended to the device guard a host allocates (size-versioned), minor bumped
bump_minor
edit include/c10c/cuda.h '^(  c10c_device_index current;.*)$' '\1\n  int32_t mutation_appended;'
expect pass "field appended to c10c_cuda_device_guard (size-versioned), ABI minor $next"

# ... but not to a struct that is not size-versioned
bump_minor
edit include/c10c/cuda_host.h '^(  int64_t count;)$' '\1\n  int64_t mutation_appended;'
expect fail "field appended to c10c_duration_stat (not size-versioned)"

# a frozen baseline cannot be edited away: an exported function dropped from symbols.txt is
# still found by abidiff (checked here by deleting the release's XML entry instead: a missing
# file fails)
mv "$C10C_ABI_DIR/$frozen/libc10c.abi" "$scratch/libc10c.abi"
expect fail "release $frozen without its libc10c.abi"
mv "$scratch/libc10c.abi" "$C10C_ABI_DIR/$frozen/libc10c.abi"

if [ ${#failures[@]} -gt 0 ]; then
  echo "abi/test_check.sh: ${#failures[@]} case(s) wrong:"
  printf '  - %s\n' "${failures[@]}"
  exit 1
fi
echo "abi/test_check.sh: all $passed cases as expected"
