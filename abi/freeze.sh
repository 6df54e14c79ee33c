#!/usr/bin/env bash
# Freeze a release's ABI into abi/<VERSION>/ (abi/README.md). Run once per ABI minor, on the
# release commit's tree, with a build of it:
#
#   meson setup build/freeze -Dpython=disabled -Dtests=false --buildtype=debug
#   meson compile -C build/freeze
#   abi/freeze.sh build/freeze 1.0
#
# It writes, and never overwrites:
#   libc10c.abi     abidw's XML of the library (types of every exported function, --headers-dir)
#   symbols.txt     the exported name@version pairs
#   constants.txt   every public constant, struct layout and scalar typedef (abitool.py snapshot)
#   TARGET/layout.txt  the same and every function's call sizes on each target whose toolchain
#                   is here (abi/check_targets.sh --freeze; not for a scratch C10C_ABI_DIR freeze)
# and then prints how to record COMMIT (the release commit, in a separate later commit).
# C10C_ABI_DIR=DIR writes DIR/<VERSION>/ instead (a scratch freeze, for abi/test_check.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: abi/freeze.sh BUILD_DIR MAJOR.MINOR}" && pwd)
version=${2:?usage: abi/freeze.sh BUILD_DIR MAJOR.MINOR}
lib=$build/lib/libc10c.so.1
tool=(python3 "$here/abitool.py")
src=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["directories"]["source"])' \
  "$build/meson-info/meson-info.json")
releases=${C10C_ABI_DIR:-$here}
out=$releases/$version

[[ $version =~ ^[0-9]+\.[0-9]+$ ]] || { echo "abi/freeze.sh: VERSION is MAJOR.MINOR (the ABI version), e.g. 1.0"; exit 1; }
if [ -e "$out" ]; then
  echo "abi/freeze.sh: $out exists: a frozen release is never rewritten"
  exit 1
fi
if [ -z "${C10C_ABI_DIR:-}" ] && [ "$(cd "$src" && pwd -P)" != "$(cd "$here/.." && pwd -P)" ]; then
  echo "abi/freeze.sh: $build is a build of $src, not of this tree: freeze a build of the release's own tree"
  exit 1
fi
header_abi=$(sed -n 's/^#define C10C_ABI_VERSION_MAJOR \([0-9]*\)$/\1/p' "$src/include/c10c/version.h").$(
  sed -n 's/^#define C10C_ABI_VERSION_MINOR \([0-9]*\)$/\1/p' "$src/include/c10c/version.h")
[ "$header_abi" = "$version" ] || {
  echo "abi/freeze.sh: the build's headers say ABI $header_abi, not $version"
  exit 1
}

# The build must pass every check against the releases frozen before it.
"$here/check.sh" "$build"

mkdir -p "$releases"
tmp=$(mktemp -d "$releases/.freeze.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
project_version=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["version"])' \
  "$build/meson-info/intro-projectinfo.json")
abidw --headers-dir "$src/include" --out-file "$tmp/libc10c.abi" "$lib"
{
  echo "# name@version of every symbol libc10c.so.1 exports: release $project_version, ABI $version"
  "${tool[@]}" symbols "$lib"
} >"$tmp/symbols.txt"
"${tool[@]}" typeinfo "$tmp/libc10c.abi" "$tmp/symbols.txt"
"${tool[@]}" snapshot "$src/include" >"$tmp/constants.txt"
# the layouts and call sizes on every target whose toolchain is here (abi/check_targets.sh)
if [ -z "${C10C_ABI_DIR:-}" ]; then
  "$here/check_targets.sh" --freeze "$tmp" "$src/include"
fi
mv "$tmp" "$out"
trap - EXIT
echo "froze ABI $version (release $project_version) into $out:"
find "$out" -type f -print0 | sort -z | xargs -0 wc -l | sed "s|$out/||; s/^/  /"

if [ -z "${C10C_ABI_DIR:-}" ]; then
  cat <<EOF

Now:
  1. commit abi/$version/ as the release commit:
       git add -A abi && git commit -m "Release $project_version: ABI $version frozen in abi/$version/"
  2. record that commit's hash in a separate commit (abi/old_hosts.sh builds the release's tests
     from it; a tag may not travel with the repository):
       git rev-parse HEAD > abi/$version/COMMIT
       git add abi/$version/COMMIT && git commit -m "abi/$version/COMMIT: the release commit of $project_version"
  3. from now on, a new function goes into a new node C10C_${version%%.*}.$((${version#*.} + 1)) of
     lib/libc10c.map with C10C_ABI_VERSION_MINOR bumped (lib/libc10c.map's comment).
EOF
fi
