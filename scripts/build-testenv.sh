#!/usr/bin/env bash
# Builds the local control plane for tests, tests/testenv, into
# BUILD_DIR/testenv/testenv.
#
#   scripts/build-testenv.sh [BUILD_DIR] [K8S_VERSION]
#
# BUILD_DIR defaults to "build". K8S_VERSION is a Kubernetes minor version
# ("1.35"); empty means the default, go.mod's. Every version builds from the
# same sources: go.mod pins the default version's modules, and
# tests/testenv/versions/k8s-<minor>.mod (with its .sum) each other
# supported version's, passed to Go as -modfile. Sources that differ between
# versions are split by the build tag k8s_<major>_<minor> (k8s_1_35).
#
# Idempotent and quick when nothing changed: Go's build cache does the work.
# A version's first build compiles k8s.io/kubernetes and takes many minutes.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${1:-build}"
want="${2:-}"
case "$build_dir" in
  /*) ;;
  *) build_dir="$PWD/$build_dir" ;;
esac
mkdir -p "$build_dir/testenv"

cd "$root/tests/testenv"
default_minor="$(sed -n 's/^\tk8s.io\/kubernetes v\([0-9]*\.[0-9]*\)\..*/\1/p' go.mod | head -n 1)"
modfile=()
if [ -n "$want" ] && [ "$want" != "$default_minor" ]; then
  if [ ! -f "versions/k8s-$want.mod" ]; then
    supported="$default_minor"
    for f in versions/k8s-*.mod; do
      v="${f#versions/k8s-}"
      supported+=" ${v%.mod}"
    done
    echo "build-testenv: Kubernetes $want is not supported; supported: $supported" >&2
    exit 2
  fi
  modfile=(-modfile="versions/k8s-$want.mod")
fi

# Stamp the release version, as Kubernetes' own build does (otherwise every
# component, and /version, reports v0.0.0-master).
k8s_version="$(go list "${modfile[@]}" -m -f '{{.Version}}' k8s.io/kubernetes)"   # v1.37.2
major="${k8s_version#v}"; minor="${major#*.}"; major="${major%%.*}"; minor="${minor%%.*}"
ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.gitCommit="
done

# -mod=readonly: the module files are committed and must already be complete.
echo "build-testenv: Kubernetes $k8s_version" >&2
go build "${modfile[@]}" -mod=readonly -tags "k8s_${major}_${minor}" \
  -ldflags "$ldflags" -o "$build_dir/testenv/testenv" .
