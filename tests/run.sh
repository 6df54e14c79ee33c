#!/usr/bin/env bash
# The whole test suite: the C tests (meson test, in build/tests) and the Python tests (pytest,
# against the installed pyc10). Run after `pip install '.[test]'`; README's second command.
set -euo pipefail
cd "$(dirname "$0")/.."

build=${C10C_TEST_BUILD_DIR:-build/tests}
if [ -f "$build/build.ninja" ]; then
  meson setup --reconfigure "$build" -Dpython=disabled >/dev/null
else
  meson setup "$build" -Dpython=disabled >/dev/null
fi
meson compile -C "$build"
meson test -C "$build" --print-errorlogs

# From tests/python, so that `import pyc10` finds the installed package, not the source tree.
cd tests/python
python -m pytest -q "$@"
