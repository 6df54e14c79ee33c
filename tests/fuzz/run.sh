#!/usr/bin/env bash
# Runs the libFuzzer harnesses of tests/fuzz for SECONDS each, under ASan + UBSan (nothing
# recovers; leak detection on), starting from the kept corpora, then reports line coverage of the
# library's files by replaying every input through a coverage build.
#
#   tests/fuzz/run.sh SECONDS [--keep] [--no-coverage] [--parallel N] [HARNESS ...]
#
# HARNESS names (parsers, engine, dlpack, geometry, storage, ipc_handle, plan_file, cpu_malloc) pick
# some; default: all. --keep
# merges the inputs that reached new edges into tests/fuzz/corpus/<name>/ (commit them);
# --parallel runs N harnesses at once. A finding stops nothing else: its input is left under
# build/fuzz/work/<name>/artifacts/ and the script exits 1. Fix the bug, then copy the input into
# the harness's corpus (a name that says what it found) so that every build replays it.
# Needs clang, libFuzzer (Debian: libclang-rt-<version>-dev) and, for coverage, llvm-profdata
# and llvm-cov (Debian: llvm).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ $# -ge 1 ] || usage
seconds=$1
shift
case "$seconds" in '' | *[!0-9]*) usage ;; esac
keep=0 coverage=1 parallel=1 names=()
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=1 ;;
    --no-coverage) coverage=0 ;;
    --parallel) parallel=${2:?}; shift ;;
    -h | --help) usage ;;
    *) names+=("$1") ;;
  esac
  shift
done
if [ ${#names[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.c; do
    n=${f#tests/fuzz/fuzz_}
    names+=("${n%.c}")
  done
fi

build=${C10C_FUZZ_BUILD_DIR:-build/fuzz}
setup() { # dir, meson options...
  local dir=$1
  shift
  if [ -f "$dir/build.ninja" ]; then
    meson setup --reconfigure "$dir" "$@" >/dev/null
  else
    CC=clang meson setup "$dir" "$@" >/dev/null
  fi
}
echo "building the harnesses (clang, ASan + UBSan, libFuzzer) in $build"
setup "$build" -Dfuzz=true -Dpython=disabled -Db_sanitize=address,undefined -Db_lundef=false \
  --buildtype=debugoptimized
targets=(tests/c10c_cuda_stub)
for n in "${names[@]}"; do targets+=("tests/fuzz/fuzz_$n"); done
meson compile -C "$build" "${targets[@]}" >/dev/null
# CUDA through the stand-in driver, as the meson tests replay the corpora
export C10C_CUDA_DRIVER=$root/$build/tests/libc10c_cuda_stub.so

# allocator_may_return_null: the library asks for absurd sizes on purpose and must see NULL.
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

run_one() { # name
  local n=$1 work=$build/work/$1
  # inputs that failed stay (artifacts/) until they are in the kept corpus; a run's scratch
  # corpus starts empty
  rm -rf "$work/corpus"
  mkdir -p "$work/corpus" "$work/artifacts" "tests/fuzz/corpus/$n"
  touch "$work/started"
  # malloc_limit_mb: only the process's memory counts, not the size a single request asks for.
  if "$build/tests/fuzz/fuzz_$n" -max_total_time="$seconds" -print_final_stats=1 -timeout=30 \
    -rss_limit_mb=4096 -malloc_limit_mb=1048576 -artifact_prefix="$work/artifacts/" \
    "$work/corpus" "tests/fuzz/corpus/$n" >"$work/log" 2>&1; then
    echo ok >"$work/result"
  else
    echo FAILED >"$work/result"
  fi
}

echo "fuzzing ${names[*]} for ${seconds}s each (parallel $parallel)"
running=0
for n in "${names[@]}"; do
  run_one "$n" &
  running=$((running + 1))
  if [ "$running" -ge "$parallel" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

status=0
printf '\n%-10s %-7s %12s %9s %8s %8s %8s\n' harness result executions exec/s edges features corpus
for n in "${names[@]}"; do
  work=$build/work/$n
  log=$work/log
  stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -n 1; }
  last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
  edges=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  features=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corpus=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  result=$(cat "$work/result")
  printf '%-10s %-7s %12s %9s %8s %8s %8s\n' "$n" "$result" "$(stat number_of_executed_units)" \
    "$(stat average_exec_per_sec)" "${edges:-?}" "${features:-?}" "${corpus:-?}"
  if [ "$result" != ok ]; then
    status=1
    echo "--- $n: the end of $log"
    grep -v -E '^#[0-9]+' "$log" | tail -n 40
    echo "--- input(s) that failed: $(find "$work/artifacts" -type f -newer "$work/started" | tr '\n' ' ')"
  elif [ "$keep" = 1 ]; then
    # one input per new edge (not per hit-count bucket): a corpus of hundreds, not thousands
    "$build/tests/fuzz/fuzz_$n" -merge=1 -use_counters=0 "tests/fuzz/corpus/$n" "$work/corpus" \
      >/dev/null 2>&1
    echo "    kept corpus of $n: $(ls "tests/fuzz/corpus/$n" | wc -l) inputs"
  fi
done

if [ "$coverage" = 1 ]; then
  cov=${build}-coverage
  echo
  echo "line coverage of lib/ by every input (kept corpus + this run's), built in $cov"
  setup "$cov" -Dpython=disabled --buildtype=debug \
    -Dc_args="-fprofile-instr-generate -fcoverage-mapping" -Dc_link_args=-fprofile-instr-generate
  replays=(tests/c10c_cuda_stub)
  for n in "${names[@]}"; do replays+=("tests/fuzz/replay_$n"); done
  meson compile -C "$cov" "${replays[@]}" >/dev/null
  export C10C_CUDA_DRIVER=$root/$cov/tests/libc10c_cuda_stub.so
  rm -rf "$cov/profiles"
  mkdir -p "$cov/profiles"
  binaries=()
  for n in "${names[@]}"; do
    LLVM_PROFILE_FILE="$cov/profiles/$n-%p.profraw" ASAN_OPTIONS= \
      "$cov/tests/fuzz/replay_$n" "tests/fuzz/corpus/$n" "$build/work/$n/corpus" >/dev/null 2>&1 ||
      { echo "replay of $n failed in the coverage build"; status=1; }
    binaries+=("$cov/tests/fuzz/replay_$n")
  done
  llvm-profdata merge -sparse "$cov"/profiles/*.profraw -o "$cov/profiles/merged.profdata"
  objects=("${binaries[0]}")
  for b in "${binaries[@]:1}"; do objects+=(-object "$b"); done
  # columns: file, regions (3), functions (3), lines: count, missed, cover
  llvm-cov report "${objects[@]}" -instr-profile="$cov/profiles/merged.profdata" "$root"/lib/*/*.c |
    awk '$1 ~ /^lib\/.*\.c$/ || $1 == "TOTAL" {
      n = split($1, parts, "/")
      printf "  %-22s %6s lines, %6s missed, %8s covered\n", parts[n], $8, $9, $10 }'
fi
exit $status
