#!/usr/bin/env bash
# The tests that depend on the Kubernetes version, against each supported
# version in turn: the differential suite (kube-scheduler of that version
# as the oracle) and the integration and end-to-end tests (that version's
# kube-apiserver, controller-manager and kube-scheduler).
#
#   scripts/test-versions.sh BUILD_DIR [VERSION...]    # default: every one
#
# Each version's control plane is built into BUILD_DIR/testenv/testenv in
# turn (scripts/build-testenv.sh; Go's cache keeps every version's
# packages, so a second run only links), the tests run against it, and the
# default version is built back at the end, pass or fail. The C++ build is
# the same for every version. MS_DIFF_SCENARIOS (default here 2000) sets
# the differential suite's scenarios per version. Exits non-zero when any
# version failed; prints a line per version either way.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${1:?build directory}"
shift
versions=("$@")
if [ ${#versions[@]} -eq 0 ]; then
  versions=($(bash "$root/scripts/k8s-versions.sh"))
fi
jobs="${JOBS:-$(nproc)}"
export MS_DIFF_SCENARIOS="${MS_DIFF_SCENARIOS:-2000}"

restore() {
  bash "$root/scripts/build-testenv.sh" "$build_dir" >/dev/null 2>&1 ||
    echo "test-versions: could not build the default control plane back; run 'make testenv'" >&2
}
trap restore EXIT

summary=()
failed=0
for v in "${versions[@]}"; do
  started=$SECONDS
  echo "=== Kubernetes $v"
  log="$build_dir/test-versions-$v.log"
  if ! bash "$root/scripts/build-testenv.sh" "$build_dir" "$v"; then
    summary+=("$(printf '%-6s control plane did not build' "$v")")
    failed=1
    continue
  fi
  if ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" \
      -L 'differential|integration|e2e' 2>&1 | tee "$log"; then
    result=passed
  else
    result=FAILED
    failed=1
  fi
  scenarios="$(sed -n 's/^\([0-9]* scenarios\), .*, \([0-9]* disagreements\)$/\1, \2/p' \
    "$build_dir/Testing/Temporary/LastTest.log" | head -n 1)"
  tests="$(grep -m 1 -o '[0-9]*% tests passed, [0-9]* tests failed out of [0-9]*' "$log" || true)"
  summary+=("$(printf '%-6s %-7s %s; differential: %s; %ss' "$v" "$result" \
    "$tests" "${scenarios:-no count}" $((SECONDS - started)))")
done

echo
echo "test-versions:"
for s in "${summary[@]}"; do echo "  $s"; done
exit "$failed"
