#!/usr/bin/env bash
# Builds and runs tests under a sanitizer, in a build directory of its own
# (the plain build in build/ is left alone).
#
#   scripts/sanitize.sh asan BUILD_DIR TESTENV_BIN [JOBS]
#       AddressSanitizer + UndefinedBehaviorSanitizer (-DMS_ASAN=ON): every
#       test labelled unit or integration. The integration tests start the
#       control plane from TESTENV_BIN (the plain build's, `make testenv`).
#   scripts/sanitize.sh tsan BUILD_DIR TESTENV_BIN [JOBS] [TEST...]
#       ThreadSanitizer (-DMS_TSAN=ON): the named unit tests, those of the
#       concurrent parts. Known reports inside uninstrumented Debian
#       libraries are suppressed by tests/tsan.supp (see the comments there).
#
# Only the test targets the run needs are built. Any sanitizer report fails
# the test that triggered it.
set -euo pipefail

kind=${1:?asan|tsan}
build=${2:?build directory}
testenv_bin=${3:?testenv binary}
jobs=${4:-2}
shift $(( $# < 4 ? $# : 4 ))
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
case "$testenv_bin" in
  /*) ;;
  *) testenv_bin="$root/$testenv_bin" ;;
esac

case "$kind" in
  asan)
    cmake -S "$root" -B "$build" -G Ninja -DMS_ASAN=ON \
      -DMS_TESTENV_BIN="$testenv_bin" >/dev/null
    labels='unit|integration'
    # Every test binary that ctest would run with these labels (the names
    # of ms_add_test targets; testenv_start/stop and scripts_test are
    # scripts).
    mapfile -t tests < <(ctest --test-dir "$build" -N -L "$labels" |
      sed -n 's/^ *Test *#[0-9]*: *//p' |
      grep -v -e '^testenv_' -e '^scripts_test$')
    cmake --build "$build" -j "$jobs" --target "${tests[@]}"
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    ctest --test-dir "$build" --output-on-failure -j "$jobs" -L "$labels"
    ;;
  tsan)
    tests=("$@")
    if [ ${#tests[@]} -eq 0 ]; then
      echo "sanitize.sh tsan: name the tests to run" >&2
      exit 2
    fi
    cmake -S "$root" -B "$build" -G Ninja -DMS_TSAN=ON \
      -DMS_TESTENV_BIN="$testenv_bin" >/dev/null
    cmake --build "$build" -j "$jobs" --target "${tests[@]}"
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan.supp"
    regex="^($(IFS='|'; echo "${tests[*]}"))\$"
    ctest --test-dir "$build" --output-on-failure -j "$jobs" -R "$regex"
    ;;
  *)
    echo "sanitize.sh: unknown sanitizer $kind (asan or tsan)" >&2
    exit 2
    ;;
esac
