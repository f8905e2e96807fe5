#!/usr/bin/env bash
# `make test` after the lock check: ruff, mypy and the migrations check in the background
# while pytest runs on its workers (mypy alone is half a minute on a fresh clone, and pytest
# waits on the processes its tests start), so the whole takes about as long as pytest.
# Usage: scripts/check_and_test.sh BIN [pytest arguments...]
# Exits non-zero when any check or pytest failed. Each check's output is printed after
# pytest's, under its command; pytest's closing line is repeated last.
set -u
BIN=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

checks() {
  local failed=0
  run() {
    echo "+ $*"
    "$@" || { echo "FAILED: $*"; failed=1; }
  }
  run "$BIN/ruff" check .
  run "$BIN/ruff" format --check .
  run "$BIN/mypy" config core ingest catalog api
  run "$BIN/python" manage.py makemigrations --check --dry-run --settings=config.settings.test
  return "$failed"
}

checks >"$work/checks.log" 2>&1 &
checks_pid=$!

color=()
[ -t 1 ] && color=(--color=yes)  # tee below is not a terminal; keep pytest's colors for one
echo "+ $BIN/python -m pytest $*"
"$BIN/python" -m pytest "${color[@]}" "$@" 2>&1 | tee "$work/pytest.log"
tests=${PIPESTATUS[0]}

wait "$checks_pid"
static=$?
echo
echo "=== ruff, mypy and the migrations check (run beside pytest) ==="
cat "$work/checks.log"
echo
if [ "$static" -ne 0 ]; then
  echo "make test: a check failed (above)"
fi
# pytest's closing line, last, so the result is the last thing read.
grep -E "(passed|failed|error|no tests ran)" "$work/pytest.log" | tail -n 1
if [ "$static" -ne 0 ] || [ "$tests" -ne 0 ]; then
  exit 1
fi
