#!/usr/bin/env bash
# A CPython 3.11 linked against musl, to run pyc10's musllinux wheel and its Python suite on this
# (glibc) machine: neither Debian nor PyPI packages one, and Alpine's mirrors are out of reach.
# Built here from Debian bookworm's source packages (apt-get source, from a deb-src entry this
# script adds beside the deb ones) with Debian's musl-gcc (musl-tools):
#   zlib 1.2.13 and libffi 3.4.4   static, -fPIC, into $cache/deps (zlib for zipfile and pip,
#                                  libffi for ctypes, which pyc10 and its tests import)
#   CPython 3.11.2 (upstream tarball, Debian's patches left out: they are for Debian's layout)
#                                  into $cache/python, dynamically linked against musl, so that it
#                                  loads musllinux wheels' extension modules
#   musl 1.2.5 (trixie's source)   into $cache/musl, whose loader the interpreter then names as
#                                  its PT_INTERP (patchelf): bookworm's musl 1.2.3 cannot load
#                                  numpy's wheel (DT_RELR, see below); with a shared libz.so.1
#                                  on that loader's path, as Alpine has (Pillow's wheel needs it)
# configure is told --build=x86_64-pc-linux-musl so that the platform triplet, and with it SOABI,
# is cpython-311-x86_64-linux-musl (what musllinux wheels name their extensions); musl-gcc would
# answer gcc's x86_64-linux-gnu to --print-multiarch, which configure checks against the
# triplet, and from whose -print-multiarch setup.py adds -I/usr/include/x86_64-linux-gnu (glibc's
# headers: the modules it builds then fail on __time64_t), so a wrapper ($cache/bin/musl-cc)
# answers x86_64-linux-musl to both (it also adds the kernel's headers, see below). pkg-config
# only sees $cache/deps (PKG_CONFIG_LIBDIR), so nothing of the host's glibc libraries is picked
# up. CPython is built at -O1 without -g (half the build time; it only runs tests). Left
# out for want of musl builds of their libraries: _ssl/_hashlib (hashlib falls back to its
# builtin digests), _bz2, _lzma, _sqlite3, readline, curses, _tkinter, _gdbm, _dbm, _uuid.
#
#   bash tests/cross/musl_python.sh        (as root the first time: apt-get; prints the python)
#   C10C_MUSL_CACHE=DIR                    where it is kept (default ~/.cache/c10c-musl)
#
# Idempotent: each step leaves a mark in $cache and is skipped once done (about 7 minutes on two
# busy cores the first time: CPython 4.5, musl 1.5, libffi and zlib under a minute; well under
# a second after); delete $cache/python/.c10c-done to rebuild CPython, $cache to redo it all.
set -euo pipefail
cache=${C10C_MUSL_CACHE:-$HOME/.cache/c10c-musl}
src=$cache/src
deps=$cache/deps
prefix=$cache/python
t0=$(date +%s)
say() { printf '[musl_python %4ss] %s\n' $(($(date +%s) - t0)) "$*" >&2; }
jobs=$(nproc)

if [ -f "$prefix/.c10c-done" ] && [ -f "$prefix/.c10c-loader" ] && [ -f "$cache/musl/.c10c-libz" ]; then
  echo "$prefix/bin/python3.11"
  exit 0
fi
mkdir -p "$src" "$deps" "$cache/bin"

# ---- musl-gcc and the sources -------------------------------------------------------------------
if ! command -v musl-gcc >/dev/null || ! command -v dpkg-source >/dev/null; then
  say "installing musl-tools dpkg-dev"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq musl-tools musl-dev dpkg-dev >/dev/null
fi
# the bookworm versions (not bookworm-security's: the mirror here has no source pool for it)
versions=(python3.11=3.11.2-6+deb12u8 zlib=1:1.2.13.dfsg-1 libffi=3.4.4-1)
if [ ! -f "$src/.c10c-sources" ]; then
  list=/etc/apt/sources.list.d/c10c-deb-src.sources
  if ! grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    say "adding $list"
    # the deb entries of debian.sources, as deb-src
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >"$list"
    apt-get update -qq
  fi
  say "apt-get source ${versions[*]}"
  (cd "$src" && apt-get source -qq --download-only "${versions[@]}" 2>&1 |
    grep -v 'unsandboxed' >&2 || true)
  ls "$src"/python3.11_3.11.2.orig.tar.gz "$src"/zlib_1.2.13.dfsg.orig.tar.bz2 \
    "$src"/libffi_3.4.4.orig.tar.gz >/dev/null
  touch "$src/.c10c-sources"
fi

# musl-gcc, but saying musl's multiarch (see above), and with the kernel's headers (linux/,
# asm/, asm-generic/: libffi's tramp.c and some CPython modules include them), which musl-gcc
# leaves out with the rest of /usr/include; after musl's own (-idirafter)
kinc=$cache/kernel-include
mkdir -p "$kinc"
ln -sfn /usr/include/linux "$kinc/linux"
ln -sfn /usr/include/asm-generic "$kinc/asm-generic"
ln -sfn /usr/include/x86_64-linux-gnu/asm "$kinc/asm"
cat >"$cache/bin/musl-cc" <<EOF
#!/bin/sh
for a; do case "\$a" in -print-multiarch | --print-multiarch) echo x86_64-linux-musl; exit 0 ;; esac; done
exec musl-gcc "\$@" -idirafter "$kinc"
EOF
chmod +x "$cache/bin/musl-cc"
export CC=$cache/bin/musl-cc

build=$cache/build
mkdir -p "$build"
# ---- zlib ---------------------------------------------------------------------------------------
if [ ! -f "$deps/.c10c-zlib" ]; then
  say "zlib"
  rm -rf "$build/zlib" && mkdir -p "$build/zlib"
  tar -xjf "$src/zlib_1.2.13.dfsg.orig.tar.bz2" -C "$build/zlib" --strip-components=1
  (cd "$build/zlib" && CFLAGS='-O2 -fPIC' ./configure --static --prefix="$deps" >/dev/null &&
    nice make -s -j"$jobs" libz.a >/dev/null && make -s install >/dev/null)
  touch "$deps/.c10c-zlib"
fi
# ---- libffi -------------------------------------------------------------------------------------
if [ ! -f "$deps/.c10c-libffi" ]; then
  say "libffi"
  rm -rf "$build/libffi" && mkdir -p "$build/libffi"
  tar -xzf "$src/libffi_3.4.4.orig.tar.gz" -C "$build/libffi" --strip-components=1
  (cd "$build/libffi" && CFLAGS='-O2 -fPIC' ./configure --prefix="$deps" --libdir="$deps/lib" \
    --disable-shared --enable-static --with-pic --disable-docs --disable-multi-os-directory \
    >/dev/null && nice make -s -j"$jobs" >"$build/libffi.log" 2>&1 &&
    make -s install >>"$build/libffi.log" 2>&1) || { tail -20 "$build/libffi.log" >&2; exit 1; }
  touch "$deps/.c10c-libffi"
fi
# ---- CPython ------------------------------------------------------------------------------------
py=$prefix/bin/python3.11
if [ ! -f "$prefix/.c10c-done" ]; then
say "CPython 3.11.2 (configure, make -j$jobs, install)"
rm -rf "$build/python" "$prefix" && mkdir -p "$build/python"
tar -xzf "$src/python3.11_3.11.2.orig.tar.gz" -C "$build/python" --strip-components=1
cd "$build/python"
# -O1, no -g: the interpreter only runs the tests, and builds in half the time at -O1 (OPT
# replaces configure's "-DNDEBUG -g -fwrapv -O3 -Wall")
PKG_CONFIG_LIBDIR=$deps/lib/pkgconfig PKG_CONFIG_PATH='' OPT='-DNDEBUG -fwrapv -O1' \
  ./configure --build=x86_64-pc-linux-musl --host=x86_64-pc-linux-musl --prefix="$prefix" \
  --with-ensurepip=no --disable-test-modules --without-doc-strings \
  CPPFLAGS="-I$deps/include" LDFLAGS="-L$deps/lib" >"$build/configure.log" 2>&1 ||
  { tail -30 "$build/configure.log" >&2; exit 1; }
nice make -j"$jobs" >"$build/make.log" 2>&1 || { tail -40 "$build/make.log" >&2; exit 1; }
make install >"$build/install.log" 2>&1 || { tail -40 "$build/install.log" >&2; exit 1; }
grep -i 'failed to build\|following modules' -A4 "$build/make.log" >&2 || true
touch "$prefix/.c10c-done"
fi

# ---- musl 1.2.5's loader for it -----------------------------------------------------------------
# bookworm's musl is 1.2.3, whose loader does not apply DT_RELR relocations (musl 1.2.4 does):
# the shared libraries in PyPI's musllinux wheels that were linked with -z pack-relative-relocs
# (numpy 2.4.6's numpy.libs/libgcc_s, libstdc++, libgfortran, OpenBLAS) crash it at dlopen,
# jumping to an unrelocated constructor address (SIGSEGV in `import numpy`). So musl 1.2.5,
# from trixie's source package (fetched with an apt configuration of its own under $cache/apt,
# leaving the system's alone), is built with the host's gcc into $cache/musl, and the
# interpreter's PT_INTERP is set to its loader (patchelf). The programs that the tests compile
# with musl-gcc keep Debian's loader.
loader=$cache/musl/lib/ld-musl-x86_64.so.1
if [ ! -f "$cache/musl/.c10c-musl" ]; then
  say "musl 1.2.5 (trixie's source package)"
  mkdir -p "$cache/apt/lists/partial"
  echo 'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main' >"$cache/apt/trixie.list"
  apt_trixie=(-o Dir::Etc::SourceList="$cache/apt/trixie.list" -o Dir::Etc::SourceParts=/dev/null
    -o Dir::State::Lists="$cache/apt/lists")
  apt-get "${apt_trixie[@]}" update -qq 2>&1 | grep -v unsandboxed >&2 || true
  (cd "$src" && apt-get "${apt_trixie[@]}" source -qq --download-only musl 2>&1 |
    grep -v unsandboxed >&2 || true)
  tarball=$(ls "$src"/musl_1.2.5.orig.tar.gz)
  rm -rf "$build/musl" "$cache/musl" && mkdir -p "$build/musl"
  tar -xzf "$tarball" -C "$build/musl" --strip-components=1
  (cd "$build/musl" && ./configure --prefix="$cache/musl" --syslibdir="$cache/musl/lib" >/dev/null &&
    nice make -s -j"$jobs" >"$build/musl.log" 2>&1 && make -s install >>"$build/musl.log" 2>&1) ||
    { tail -20 "$build/musl.log" >&2; exit 1; }
  touch "$cache/musl/.c10c-musl"
fi
# libz.so.1 beside it: the musllinux policies count zlib as part of the system (Alpine has it),
# so wheels need it without bundling it (Pillow's, which matplotlib's charts load: "Error loading
# shared library libz.so.1"). Built from the same zlib source, shared, into $cache/musl/lib, which
# the loader searches: it reads $cache/musl/etc/ld-musl-x86_64.path (beside its own directory).
if [ ! -f "$cache/musl/.c10c-libz" ]; then
  say "libz.so.1 for the loader's path"
  rm -rf "$build/zlib-shared" && mkdir -p "$build/zlib-shared"
  tar -xjf "$src/zlib_1.2.13.dfsg.orig.tar.bz2" -C "$build/zlib-shared" --strip-components=1
  (cd "$build/zlib-shared" && ./configure --shared --prefix="$cache/musl" >/dev/null &&
    nice make -s -j"$jobs" >/dev/null 2>&1 && make -s install >/dev/null 2>&1)
  mkdir -p "$cache/musl/etc"
  echo "$cache/musl/lib" >"$cache/musl/etc/ld-musl-x86_64.path"
  touch "$cache/musl/.c10c-libz"
fi
if ! command -v patchelf >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq patchelf >/dev/null
fi
patchelf --set-interpreter "$loader" "$py"
readelf -l "$py" | grep -q "interpreter: $loader" ||
  { echo "$py is not linked against musl's loader" >&2; exit 1; }
# what musllinux wheels need of it
"$py" - <<'PY' >&2
import sys, sysconfig, zlib, ctypes, _ctypes, ensurepip, pyexpat, _decimal, _multiprocessing
print("musl python:", sys.version.split()[0], sysconfig.get_config_var("SOABI"),
      sysconfig.get_config_var("EXT_SUFFIX"))
PY
touch "$prefix/.c10c-loader"
say "done"
echo "$py"
