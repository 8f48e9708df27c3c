#!/usr/bin/env bash
# Configures a sanitizer build tree; the one place each tree's CMake flags
# live, so that the scripts sharing a tree never configure it differently
# (which would rebuild it).
#
#   scripts/configure-sanitizer.sh asan BUILD_DIR [TESTENV_BIN]
#       clang, AddressSanitizer + UndefinedBehaviorSanitizer, and libFuzzer's
#       coverage: `make asan` runs its tests, `make fuzz-smoke` and
#       `make fuzz` its fuzz targets, from one build.
#   scripts/configure-sanitizer.sh tsan BUILD_DIR [TESTENV_BIN]
#       clang, ThreadSanitizer.
#
# TESTENV_BIN: the control plane the tree's integration tests start (the
# plain build's, `make testenv`); unchanged when not given.
set -euo pipefail

kind=${1:?asan|tsan}
build=${2:?build directory}
testenv_bin=${3:-}
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

case "$kind" in
  asan) flags=(-DMS_ASAN=ON -DMS_FUZZ=ON) ;;
  tsan) flags=(-DMS_TSAN=ON) ;;
  *)
    echo "configure-sanitizer.sh: unknown tree $kind (asan or tsan)" >&2
    exit 2
    ;;
esac
if [ -n "$testenv_bin" ]; then
  case "$testenv_bin" in
    /*) ;;
    *) testenv_bin="$root/$testenv_bin" ;;
  esac
  flags+=(-DMS_TESTENV_BIN="$testenv_bin")
fi
# The compilers are named explicitly: a tree configured earlier with
# another compiler is then reconfigured from scratch by CMake.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ "${flags[@]}" >/dev/null
