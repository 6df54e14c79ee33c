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

# The suite must leave no shared-memory name of the library behind (c10c_* in /dev/shm: named
# storages and CUDA IPC reference counters). Names there before the run, or made meanwhile by
# processes outside it, are not ours to judge: only new ones count, after the janitor's grace.
# C10C_TEST_SHM_CHECK=0 skips the check (a machine where other runs share /dev/shm).
shm_names() { [ -d /dev/shm ] && find /dev/shm -maxdepth 1 -name 'c10c_*' -printf '%f\n' | sort || true; }
before=$(shm_names)

# From tests/python, so that `import pyc10` finds the installed package, not the source tree.
(cd tests/python && python -m pytest -q "$@")

if [ "${C10C_TEST_SHM_CHECK:-1}" != 0 ] && [ -d /dev/shm ]; then
  for _ in $(seq 50); do # the janitor unlinks a dead process's names within its grace (2 s)
    left=$(comm -13 <(echo "$before") <(shm_names))
    [ -z "$left" ] && break
    sleep 0.2
  done
  if [ -n "$left" ]; then
    echo "tests/run.sh: the suite left these names in /dev/shm:" >&2
    echo "$left" | sed 's/^/  /' >&2
    exit 1
  fi
fi
