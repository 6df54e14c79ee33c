#!/usr/bin/env bash
# The checks only a real GPU can make, in one run of under 8 minutes on one NVIDIA GPU (sized for
# an H100 or H200). First every CUDA test of both suites against the real driver (libcuda.so.1,
# not the stand-in): the C tests of devices, streams and copies, the caching allocator, pinned
# host memory and non-blocking copies, CUDA IPC (plain and expandable segments), the planned
# mode and stitching, PyTorch's pluggable allocator entry points; then the Python CUDA suites
# (tensors, streams, copies, the allocator's statistics against torch's, pinned memory, IPC,
# multiprocessing, planning, pyc10.allocators.torch). Then torch's caching allocator and
# libc10c's side by side on the shared traces, pyc10 and torch exchanging CUDA IPC handles both
# ways, a training loop on torch's allocator beside pyc10.allocators.torch (losses, peak
# reserved, step time) and CuPy on pyc10.allocators.cupy, and libc10c beyond PyTorch on the real
# driver: stitching, a plan file, and online planning over four repeated steps. Needs meson,
# ninja and a C compiler; the
# torch parts need torch with CUDA (skipped, and said so, without it).
#
# The tests were written against the stand-in driver (tests/cuda_stub), which the real driver
# is not: a check of a stand-in-only figure (its fake addresses, clock or capacity) fails here
# until it asks whether the driver is the stand-in, as test_cuda_ipc does; the logs say which.
#
#   bash tests/gpu/check.sh [OUT_DIR]        # from the repository root; logs in OUT_DIR
#
# Exit status 0 when every step that ran passed. Each step has its own time limit, so one that
# hangs cannot eat the others' time.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=${1:-${OUT:-/tmp/c10c-gpu}}
mkdir -p "$OUT"
TRACES=${TRACES:-$ROOT/../shared/traces}
[ -d "$TRACES" ] || TRACES=$ROOT/bench/traces
failed=0
start=$(date +%s)

# step NAME SECONDS COMMAND...: runs it with its log in OUT/NAME.log, says ok/FAIL.
step() {
  local name=$1 limit=$2
  shift 2
  if timeout "$limit" "$@" >"$OUT/$name.log" 2>&1; then
    echo "ok   $name ($(($(date +%s) - start)) s)"
  else
    echo "FAIL $name (status $?; $OUT/$name.log)"
    tail -15 "$OUT/$name.log" | sed 's/^/     /'
    failed=1
  fi
}

nvidia-smi -L 2>/dev/null || echo "(no nvidia-smi)"
export C10C_CUDA_DRIVER=libcuda.so.1 # the real driver, everywhere below

# 1. Build (release; only what the steps use).
C_TESTS="test_cuda test_cuda_devices test_cuda_streams test_cuda_host test_cuda_ipc test_plan_engine
  test_stitch test_cuda_pluggable"
step build 240 bash -c '{ [ -d build/gpu ] || meson setup build/gpu -Dpython=disabled \
  --buildtype=release >/dev/null; } && ninja -C build/gpu -j"$(nproc)" '"$(for t in $C_TESTS; do
    printf 'tests/%s ' "$t"; done)"' bench/replay_trace'
[ -x build/gpu/tests/test_cuda_ipc ] || { echo "build failed: nothing to run"; exit 1; }

# 2. Every C CUDA test on the real driver (none of the stand-in's C10C_STUB_* knobs): devices,
# streams and copies, the allocator and its settings, pinned memory, IPC between two processes
# (the test runs itself as the consumer), the planned mode, stitching.
unset C10C_STUB_FAKE C10C_STUB_DEVICES C10C_STUB_CLOCK C10C_ALLOC_CONF
step c_cuda 90 build/gpu/tests/test_cuda available
step c_cuda_config 90 env C10C_ALLOC_CONF=max_split_size_mb:30 build/gpu/tests/test_cuda config
step c_cuda_devices 90 build/gpu/tests/test_cuda_devices contexts
step c_cuda_devices_fork 90 build/gpu/tests/test_cuda_devices fork
step c_cuda_streams 90 build/gpu/tests/test_cuda_streams
step c_cuda_host 90 build/gpu/tests/test_cuda_host available
step c_cuda_host_contexts 90 build/gpu/tests/test_cuda_host contexts
step c_ipc 90 build/gpu/tests/test_cuda_ipc
step c_ipc_expandable 90 env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
  build/gpu/tests/test_cuda_ipc expandable
step c_plan_engine 90 build/gpu/tests/test_plan_engine cuda
step c_stitch 90 build/gpu/tests/test_stitch stub
step c_cuda_pluggable 90 build/gpu/tests/test_cuda_pluggable

# 3. Python: pyc10 built into a scratch venv that sees the system's packages (torch).
PY=python3
if ! $PY -c 'import pyc10' 2>/dev/null; then
  step pyc10_install 200 bash -c "python3 -m venv --system-site-packages '$OUT/venv' &&
    '$OUT/venv/bin/pip' install -q --no-build-isolation --no-deps . ||
    '$OUT/venv/bin/pip' install -q --no-deps ."
  PY=$OUT/venv/bin/python
fi
HAVE_TORCH_CUDA=$($PY -c 'import torch; print(int(torch.cuda.is_available()))' 2>/dev/null || echo 0)
# the suite's oracle is torch 2.13.0 (conftest.py stops otherwise)
if $PY -c 'import pyc10, torch; assert torch.__version__.startswith("2.13.0")' 2>/dev/null; then
  # every CUDA test of the Python suite on the real driver (C10C_TEST_DRIVER replaces the
  # stand-in in conftest.py), one step per file so that one that hangs leaves the others
  for t in test_cuda test_cuda_parity test_cuda_torch_parity test_pinned test_planning \
           test_cuda_ipc test_multiprocessing_cuda test_allocators_torch; do
    step "py_${t#test_}" 150 env C10C_TEST_DRIVER=libcuda.so.1 $PY -m pytest -q \
      -p no:cacheprovider "tests/python/$t.py"
  done
else
  echo "skip the Python CUDA suites: pyc10 could not be built here, or torch is not 2.13.0"
fi

if [ "$HAVE_TORCH_CUDA" = 1 ]; then
  # 4. torch <-> pyc10 handle exchange, both ways, plain and expandable.
  step ipc_torch 120 $PY tests/gpu/ipc_torch.py
  step ipc_torch_expandable 120 $PY tests/gpu/ipc_torch.py --expandable
  # torch's allocator and libc10c's as torch's pluggable allocator (defaults, expandable
  # segments with stitching, planning with step marks) on one training loop: identical losses,
  # peak reserved, step time; then CuPy through pyc10.allocators.cupy.
  step torch_allocator 300 $PY tests/gpu/torch_allocator.py
  cat "$OUT/torch_allocator.log" 2>/dev/null | sed "s/^/     /"
  # 5. The shared traces through both allocators (packed: a cold cache, the recorded window).
  for trace in decomfl nesta_dit_oom codelocation_train_expandable; do
    f=$TRACES/$trace.packed.csv.gz
    [ -f "$f" ] || continue
    conf=$([ "$trace" = codelocation_train_expandable ] && echo expandable_segments:True)
    step "replay_${trace}" 120 bash -c "
      $PY tests/gpu/replay_both.py torch '$f' --conf '$conf' &&
      $PY tests/gpu/replay_both.py pyc10 '$f' --conf '$conf'"
    cat "$OUT/replay_${trace}.log" 2>/dev/null | sed "s/^/     $trace /"
  done
  # 6. libc10c beyond PyTorch on the real driver: stitching (cuMemMap of pages already mapped,
  # at a second address; sqattn_compress stitches 84 times on the stand-in) beside expandable
  # segments alone, a plan of the trace (plan_file: one cuMemAlloc'd arena) beside torch, and
  # online planning (planning:True) over the window repeated as four marked steps.
  for trace in sqattn_compress selectn_llama_10streams; do
    f=$TRACES/$trace.packed.csv.gz
    [ -f "$f" ] || continue
    plan=$OUT/$trace.plan
    repeated=$OUT/$trace.repeat4.csv
    step "beyond_${trace}" 300 bash -c "
      $PY tests/gpu/replay_both.py torch '$f' --conf expandable_segments:True &&
      $PY tests/gpu/replay_both.py pyc10 '$f' --conf expandable_segments:True &&
      $PY tests/gpu/replay_both.py pyc10 '$f' --conf expandable_segments:True,stitching:True &&
      $PY -m pyc10.replay '$f' --write-plan '$plan' &&
      $PY tests/gpu/replay_both.py pyc10 '$f' --conf 'plan_file:$plan' &&
      $PY bench/repeat_trace.py '$f' '$repeated' &&
      $PY tests/gpu/replay_both.py torch '$repeated' &&
      $PY tests/gpu/replay_both.py pyc10 '$repeated' &&
      $PY tests/gpu/replay_both.py pyc10 '$repeated' --conf planning:True"
    cat "$OUT/beyond_${trace}.log" 2>/dev/null | sed "s/^/     $trace /"
  done
else
  echo "skip ipc_torch, replay: no torch with CUDA here"
fi

echo "done in $(($(date +%s) - start)) s; logs in $OUT"
exit $failed
