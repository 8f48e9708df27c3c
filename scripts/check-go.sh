#!/usr/bin/env bash
# Checks that the `go` on PATH can build the local control plane
# (tests/testenv): the Go version its go.mod names, or newer. Exits 0 when
# it can; otherwise prints one line saying what to install and exits 1.
# Debian 12's golang-go (1.19) is too old; Go's own releases are not Debian
# packages, so this script does not install one.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
need="$(awk '$1 == "go" { print $2; exit }' "$root/tests/testenv/go.mod")"
fix="install Go $need or newer from https://go.dev/dl/ and put its bin/ first on PATH"

if ! command -v go >/dev/null 2>&1; then
  echo "check-go: no go on PATH; tests/testenv needs Go >= $need: $fix" >&2
  exit 1
fi
# "go1.26.8", "go1.24", "go1.25rc1": the numbers, three of them.
have="$(go env GOVERSION 2>/dev/null || true)"
version="$(printf '%s' "${have#go}" | sed -E 's/^([0-9]+(\.[0-9]+)*).*/\1/')"
case "$version" in
  *.*.*) ;;
  *.*) version="$version.0" ;;
  *) version="0.0.0" ;;
esac
lowest="$(printf '%s\n%s\n' "$need" "$version" | sort -V | head -n 1)"
if [ "$lowest" != "$need" ]; then
  echo "check-go: $(command -v go) is ${have:-an unknown Go}; tests/testenv needs Go >= $need: $fix" >&2
  exit 1
fi
