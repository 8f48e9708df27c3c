#!/usr/bin/env bash
# scripts/check-go.sh against PATHs holding no go, an old go and new
# enough ones (fake `go` commands that only answer `go env GOVERSION`).
set -euo pipefail

check="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/check-go.sh"
need="$(awk '$1 == "go" { print $2; exit }' \
  "$(dirname "$check")/../tests/testenv/go.mod")"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The tools the check uses, and nothing else: no go.
mkdir "$tmp/tools"
for tool in bash awk sed sort head dirname; do
  ln -s "$(command -v "$tool")" "$tmp/tools/$tool"
done

failures=0
# expect NAME GOVERSION|"" EXIT_CODE STDERR_SUBSTRING
expect() {
  local name="$1" version="$2" want_code="$3" want_text="$4"
  local path="$tmp/tools"
  if [ -n "$version" ]; then
    mkdir -p "$tmp/$name"
    printf '#!/bin/sh\n[ "$1 $2" = "env GOVERSION" ] && echo %s\n' \
      "$version" >"$tmp/$name/go"
    chmod +x "$tmp/$name/go"
    path="$tmp/$name:$path"
  fi
  local code=0
  PATH="$path" bash "$check" 2>"$tmp/err" || code=$?
  local lines
  lines="$(wc -l <"$tmp/err")"
  if [ "$code" != "$want_code" ]; then
    echo "FAIL $name: exit $code, want $want_code; stderr: $(cat "$tmp/err")"
    failures=$((failures + 1))
  elif [ "$want_code" != 0 ] && { [ "$lines" != 1 ] ||
      ! grep -qF -- "$want_text" "$tmp/err"; }; then
    echo "FAIL $name: want one line with '$want_text', got: $(cat "$tmp/err")"
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}

expect no-go "" 1 "no go on PATH; tests/testenv needs Go >= $need: install Go $need or newer from https://go.dev/dl/"
expect debian-12 go1.19.8 1 "is go1.19.8; tests/testenv needs Go >= $need"
expect one-below go1.25.12 1 "is go1.25.12"
expect exact "go$need" 0 ""
expect no-patch "go${need%.*}" 0 ""
expect newer go1.30.1 0 ""
expect release-candidate go1.99rc1 0 ""
[ "$failures" -eq 0 ]
