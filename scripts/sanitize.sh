#!/usr/bin/env bash
# Builds and runs tests under a sanitizer, in a build directory of its own
# (the plain build in build/ is left alone).
#
#   scripts/sanitize.sh asan BUILD_DIR TESTENV_BIN [JOBS]
#       AddressSanitizer + UndefinedBehaviorSanitizer: every test labelled
#       unit or integration. The integration tests start the control plane
#       from TESTENV_BIN (the plain build's, `make testenv`). The fuzz
#       targets share this tree (scripts/fuzz.sh).
#   scripts/sanitize.sh tsan BUILD_DIR TESTENV_BIN [JOBS] [TEST...]
#       ThreadSanitizer: the named unit tests, those of the concurrent
#       parts. Known reports inside uninstrumented Debian libraries are
#       suppressed by tests/tsan.supp (see the comments there).
#
# Both trees are clang's at -O0 with line tables
# (scripts/configure-sanitizer.sh). Only the test targets the run needs are
# built. Any sanitizer report fails the test that triggered it.
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
    bash "$root/scripts/configure-sanitizer.sh" asan "$build" "$testenv_bin"
    labels='unit|integration'
    # Every test binary that ctest would run with these labels (the names
    # of ms_add_test targets; testenv_start/stop, scripts_test and
    # layering_test are scripts).
    mapfile -t tests < <(ctest --test-dir "$build" -N -L "$labels" |
      sed -n 's/^ *Test *#[0-9]*: *//p' |
      grep -v -e '^testenv_' -e '^scripts_test$' -e '^layering_test$')
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
    bash "$root/scripts/configure-sanitizer.sh" tsan "$build" "$testenv_bin"
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
