#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang and runs each for a
# while (`make fuzz-smoke`, `make fuzz FUZZ_SECONDS=600`), JOBS targets at
# a time.
#
#   scripts/fuzz.sh BUILD_DIR SECONDS [JOBS] [TARGET...]
#
# BUILD_DIR is the ASan tree (`make asan`'s, scripts/configure-sanitizer.sh),
# whose libraries carry libFuzzer's coverage: the targets share its build.
# Each target starts from its seeds (tests/fuzz/corpus/NAME plus recorded
# answers under tests/testdata/) and a corpus of its own kept in
# BUILD_DIR/fuzz-corpus/NAME, which grows from run to run. A crash, leak,
# sanitizer report or timeout fails the run with a non-zero exit once every
# target has run; the input is saved as BUILD_DIR/fuzz-artifacts/NAME-crash-...
# and can be replayed with `BUILD_DIR/fuzz/NAME FILE`.
set -euo pipefail

build=${1:?build directory}
seconds=${2:?seconds per target}
jobs=${3:-2}
shift $(( $# < 3 ? $# : 3 ))
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

bash "$root/scripts/configure-sanitizer.sh" asan "$build"
cmake --build "$build" -j "$jobs" --target fuzzers

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$root"/tests/fuzz/*_fuzz.cc; do
    targets+=("$(basename "$f" .cc)")
  done
fi

# Recorded answers and shipped files that make good seeds.
extra_seeds() {
  case "$1" in
    kube_decode_fuzz) ls "$root"/tests/testdata/kube/*.json ;;
    manifest_fuzz) ls "$root"/tests/testdata/kube/*.yaml \
                      "$root"/manifests/example/*.yaml ;;
    config_fuzz) ls "$root"/manifests/config.yaml \
                    "$root"/manifests/overlays/sysdig/config.yaml ;;
  esac
}

mkdir -p "$build/fuzz-artifacts" "$build/fuzz-tmp"
export TMPDIR="$build/fuzz-tmp"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for t in "${targets[@]}"; do
  mkdir -p "$build/fuzz-corpus/$t"
  for f in $(extra_seeds "$t"); do
    cp "$f" "$build/fuzz-corpus/$t/seed-$(basename "$f")"
  done
  rm -f "$build/fuzz-$t.failed"
done

# One target for `seconds`; its log in BUILD_DIR/fuzz-NAME.log, and
# BUILD_DIR/fuzz-NAME.failed if it found something.
fuzz_one() {
  local t=$1 start=$SECONDS
  echo "fuzz: $t for ${seconds}s" >&2
  if ! "$build/fuzz/$t" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="$build/fuzz-artifacts/$t-" \
      "$build/fuzz-corpus/$t" "$root/tests/fuzz/corpus/$t" \
      >"$build/fuzz-$t.log" 2>&1; then
    touch "$build/fuzz-$t.failed"
    echo "fuzz: $t FAILED after $((SECONDS - start))s" >&2
    return
  fi
  echo "fuzz: $t ok ($(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' \
    "$build/fuzz-$t.log" | grep -o '[0-9]*$') runs, $((SECONDS - start))s)" >&2
}

running=0
for t in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait

failed=0
for t in "${targets[@]}"; do
  if [ -e "$build/fuzz-$t.failed" ]; then
    tail -n 60 "$build/fuzz-$t.log" >&2
    echo "fuzz: $t FAILED; the input is in $build/fuzz-artifacts/" >&2
    failed=1
  fi
done
exit "$failed"
