#!/usr/bin/env bash
# Old hosts against the new library, a new host against the old library (abi/README.md).
#
#   abi/old_hosts.sh BUILD_DIR
#
# 1. The C tests of the latest frozen release (its sources from the commit in abi/<X.Y>/COMMIT,
#    extracted with git archive; a tag may not travel with the repository) are built against
#    that release's headers and library, then run against BUILD_DIR's library, the way an
#    installed host meets an upgrade. The release's own libc10c is deleted from its build first,
#    and the dynamic loader's log (LD_DEBUG=libs) of every test must show BUILD_DIR's
#    libc10c.so.1 being initialised. Tests that do not load libc10c.so.1 (the white-box tests
#    that link the static library: refcount, engine, static) are listed and skipped.
# 2. A host built against BUILD_DIR's headers that needs a newer ABI minor than the release's
#    (the real one if the headers' minor is higher, else one compiled with the minor raised by
#    one) runs on the release's library and must be refused cleanly: by the loader ("version
#    `C10C_1.N' not found") or by c10c_abi_check with a message naming ABI 1.N; a host of the
#    release's own minor must run.
#
# C10C_RELEASE_COMMIT=<commit> [C10C_RELEASE_VERSION=X.Y] tests against that commit instead
# (before abi/<X.Y>/COMMIT exists, or for a demonstration). Without a frozen release there is
# nothing to compare: the script says so and succeeds; a release without COMMIT fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=$(cd "${1:?usage: abi/old_hosts.sh BUILD_DIR}" && pwd)
newlib=$build/lib/libc10c.so.1
[ -f "$newlib" ] || { echo "abi/old_hosts.sh: no $newlib"; exit 1; }
src=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["directories"]["source"])' \
  "$build/meson-info/meson-info.json")

if [ -n "${C10C_RELEASE_COMMIT:-}" ]; then
  commit=$C10C_RELEASE_COMMIT
  release=${C10C_RELEASE_VERSION:-"(C10C_RELEASE_COMMIT)"}
else
  release=$(cd "$here" && ls -d [0-9]*.[0-9]*/ 2>/dev/null | tr -d / | sort -V | tail -n 1 || true)
  if [ -z "$release" ]; then
    echo "abi/old_hosts.sh: no release frozen under abi/ yet: no old hosts to run"
    exit 0
  fi
  [ -s "$here/$release/COMMIT" ] || {
    echo "abi/old_hosts.sh: abi/$release/COMMIT is missing: record the release commit (abi/freeze.sh's instructions)"
    exit 1
  }
  commit=$(tr -d '[:space:]' <"$here/$release/COMMIT")
fi
git -C "$root" cat-file -e "$commit^{commit}" 2>/dev/null || {
  echo "abi/old_hosts.sh: the release commit $commit of $release is not in this clone"
  echo "  (a shallow or partial clone? git fetch --unshallow, or fetch that commit)"
  exit 1
}
echo "== release $release: commit $(git -C "$root" log -1 --format='%h %s' "$commit" | cut -c1-100)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/release" "$work/release-lib"
git -C "$root" archive --format=tar "$commit" | tar -x -C "$work/release"
cc=${CC:-cc}
command -v ccache >/dev/null && cc="ccache $cc"
# The release as it was, except -Dwerror=false: a newer compiler's new warnings are not the point.
CC=$cc meson setup "$work/rbuild" "$work/release" -Dpython=disabled -Dwerror=false >"$work/setup.log" 2>&1 ||
  { cat "$work/setup.log"; exit 1; }
# Only the executables of the C suite (and what they depend on: the release's library, stubs).
mapfile -t targets < <(
  cd "$work/rbuild" && meson introspect --tests --targets . | python3 -c '
import json, sys
info = json.load(sys.stdin)
ids = {d for t in info["tests"] if "c10c:c" in t["suite"] for d in t["depends"]}
for t in info["targets"]:
    if t["id"] in ids:
        print(t["name"] + ":" + t["type"].replace(" ", "_"))
'
)
meson compile -C "$work/rbuild" "${targets[@]}" >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; exit 1; }
find "$work/rbuild/lib" -maxdepth 1 -name 'libc10c.so*' ! -type d -exec cp -P {} "$work/release-lib/" \; -delete

echo "== the release's C tests against $newlib"
status=0
python3 - "$work" "$newlib" <<'EOF' || status=1
import json, os, subprocess, sys
from pathlib import Path

work, newlib = Path(sys.argv[1]), Path(sys.argv[2]).resolve()
rbuild = work / "rbuild"
tests = json.loads(subprocess.run(["meson", "introspect", "--tests", str(rbuild)],
                                  check=True, capture_output=True, text=True).stdout)
failed, skipped, ran = [], [], 0
for t in tests:
    if "c10c:c" not in t["suite"]:
        continue
    exe = t["cmd"][0]
    dyn = subprocess.run(["readelf", "-d", exe], capture_output=True, text=True).stdout
    if "[libc10c.so.1]" not in dyn:
        skipped.append(t["name"])
        continue
    env = dict(os.environ)
    env.update(t["env"])
    # the new library first; the release's lib/ (now empty of libc10c) dropped
    paths = [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p and Path(p) != rbuild / "lib"]
    env["LD_LIBRARY_PATH"] = ":".join([str(newlib.parent), *paths])
    log = work / f"ld.{t['name']}"
    env["LD_DEBUG"] = "libs"
    env["LD_DEBUG_OUTPUT"] = str(log)
    try:
        r = subprocess.run(t["cmd"], env=env, cwd=t["workdir"] or rbuild, capture_output=True,
                           text=True, timeout=max(60, 2 * (t["timeout"] or 30)))
        rc, out = r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        rc, out = "timeout", ""
    inits = set()
    for f in work.glob(f"ld.{t['name']}.*"):
        for line in f.read_text(errors="replace").splitlines():
            if "calling init:" in line and "libc10c.so.1" in line:
                inits.add(Path(line.split("calling init:")[1].strip()).resolve())
        f.unlink()
    ran += 1
    if inits != {newlib}:
        failed.append(t["name"])
        print(f"FAIL {t['name']}: loaded {sorted(map(str, inits)) or 'no libc10c'}, not {newlib}")
    elif rc not in (0, 77):
        failed.append(t["name"])
        print(f"FAIL {t['name']} (exit {rc}):")
        print("\n".join("    " + ln for ln in out.splitlines()[-25:]))
    else:
        print(f"ok   {t['name']}" + (" (skipped by the test)" if rc == 77 else ""))
print(f"{ran} release tests run against the new library, {len(failed)} failed; "
      f"not run (they do not load libc10c.so.1: static or white-box): {', '.join(skipped) or 'none'}")
sys.exit(1 if failed else 0)
EOF

echo "== a host of the new headers needing a newer ABI minor, on the release's library"
minor_of() { sed -n 's/^#define C10C_ABI_VERSION_MINOR \([0-9]*\)$/\1/p' "$1/include/c10c/version.h"; }
major=$(sed -n 's/^#define C10C_ABI_VERSION_MAJOR \([0-9]*\)$/\1/p' "$src/include/c10c/version.h")
new_minor=$(minor_of "$src")
rel_minor=$(minor_of "$work/release")
cat >"$work/host.c" <<'EOF'
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <c10c/c10c.h>
#ifdef NEED_MINOR /* a host of a later minor, simulated */
#undef C10C_ABI_VERSION_MINOR
#define C10C_ABI_VERSION_MINOR NEED_MINOR
#endif
#ifdef NEW_FUNCTION /* a function of the newest version node: the loader must resolve it */
volatile uintptr_t new_function_address;
#endif

int main(void) {
#ifdef NEW_FUNCTION
  new_function_address = (uintptr_t)&NEW_FUNCTION;
#endif
  c10c_abi_info info = C10C_ABI_INFO_INIT;
  if (c10c_abi_check(&info) != C10C_STATUS_OK) {
    fprintf(stderr, "refused by c10c_abi_check: %s\n", c10c_last_error_message());
    return 3;
  }
  /* the constants of these headers mean the same to the library */
  const char *name = c10c_dtype_name(C10C_DTYPE_FLOAT32);
  if (!name || strcmp(name, "float32") != 0 || c10c_dtype_itemsize(C10C_DTYPE_FLOAT32) != 4) {
    fprintf(stderr, "C10C_DTYPE_FLOAT32 (%d) is %s to the library\n", (int)C10C_DTYPE_FLOAT32,
            name ? name : "unknown");
    return 4;
  }
  printf("ran on libc10c %s: C10C_DTYPE_FLOAT32 is float32, 4 bytes\n", c10c_version_string());
  return 0;
}
EOF
hosts=0
host() { # host NAME EXPECT(run|refused) NEED_MINOR [CFLAGS...]
  local name=$1 expect=$2 need=$3 rc=0 got
  shift 3
  hosts=$((hosts + 1))
  cc -std=c11 -I"$src/include" "$@" "$work/host.c" -L"$build/lib" -l:libc10c.so.1 -o "$work/$name"
  LD_LIBRARY_PATH=$work/release-lib "$work/$name" >"$work/$name.out" 2>&1 || rc=$?
  if [ "$rc" = 0 ]; then
    got=run
  elif [ "$rc" -lt 128 ] && grep -q "version \`C10C_$major.$need' not found" "$work/$name.out"; then
    got=refused
  elif [ "$rc" = 3 ] && grep -q "ABI $major.$need" "$work/$name.out"; then
    got=refused
  else
    got="broken (exit $rc)"
  fi
  if [ "$got" = "$expect" ]; then
    echo "ok   $name: $got: $(head -n 1 "$work/$name.out")"
  else
    echo "FAIL $name: $got, expected $expect:"
    sed 's/^/    /' "$work/$name.out"
    status=1
  fi
}
echo "  new headers: ABI $major.$new_minor; release: ABI $major.$rel_minor"
if [ "$new_minor" -gt "$rel_minor" ]; then
  host abi_check_host refused "$new_minor"
  newest=$(python3 - "$src/lib/libc10c.map" <<'EOF'
import re, sys
text = re.sub(r"/\*.*?\*/", "", open(sys.argv[1]).read(), flags=re.S)
nodes = re.findall(r"([\w.]+)\s*\{(.*?)\}", text, re.S)
names = [n.strip() for n in nodes[-1][1].split("local:")[0].replace("global:", "").split(";") if n.strip()]
print(names[0] if len(nodes) > 1 and names else "")
EOF
  )
  [ -n "$newest" ] && host new_symbol_host refused "$new_minor" -DNEW_FUNCTION="$newest"
else
  host same_minor_host run "$rel_minor"
  host newer_minor_host refused "$((rel_minor + 1))" -DNEED_MINOR="$((rel_minor + 1))"
fi

if [ "$status" != 0 ]; then
  echo "abi/old_hosts.sh: FAILED: the new library breaks hosts of release $release (above)"
  exit 1
fi
echo "abi/old_hosts.sh: release $release's hosts run on the new library; $hosts host(s) of the new headers behave on the release's"
