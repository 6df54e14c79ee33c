# Sourced by abi/check.sh and abi/check_targets.sh (they set work=, a scratch directory, and
# check_tail=, how many lines of a passing check's output to show).
# check NAME COMMAND...: runs one check; prints all its output and "FAIL: NAME" when it fails
# (NAME is added to failed[]), else its last check_tail lines and "ok: NAME"; then goes on.
failed=()
check() {
  local name=$1
  shift
  if ! "$@" >"$work/out" 2>&1; then
    sed 's/^/  /' "$work/out"
    echo "FAIL: $name"
    failed+=("$name")
  else
    sed 's/^/  /' "$work/out" | tail -n "$check_tail"
    echo "ok: $name"
  fi
}
