#!/usr/bin/env bash
# Prints the Kubernetes minor versions the control plane builds for, oldest
# first: each tests/testenv/versions/k8s-<minor>.mod, then go.mod's (the
# default, last).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../tests/testenv"
{
  for f in versions/k8s-*.mod; do
    [ -e "$f" ] || continue
    v="${f#versions/k8s-}"
    echo "${v%.mod}"
  done
} | sort -t. -k1,1n -k2,2n
sed -n 's/^\tk8s.io\/kubernetes v\([0-9]*\.[0-9]*\)\..*/\1/p' go.mod | head -n 1
