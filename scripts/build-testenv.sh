#!/usr/bin/env bash
# Builds the local control plane for tests, tests/testenv, into
# BUILD_DIR/testenv/testenv (BUILD_DIR is $1, default "build").
# Idempotent and quick when nothing changed: Go's build cache does the work.
# The first build compiles k8s.io/kubernetes and takes many minutes.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${1:-build}"
case "$build_dir" in
  /*) ;;
  *) build_dir="$PWD/$build_dir" ;;
esac
mkdir -p "$build_dir/testenv"

cd "$root/tests/testenv"
# Stamp the release version, as Kubernetes' own build does (otherwise every
# component, and /version, reports v0.0.0-master).
k8s_version="$(go list -m -f '{{.Version}}' k8s.io/kubernetes)"   # v1.34.4
major="${k8s_version#v}"; minor="${major#*.}"; major="${major%%.*}"; minor="${minor%%.*}"
ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.gitCommit="
done

# -mod=readonly: go.mod/go.sum are committed and must already be complete.
go build -mod=readonly -ldflags "$ldflags" -o "$build_dir/testenv/testenv" .
