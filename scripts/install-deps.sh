#!/usr/bin/env bash
# Installs the Debian packages metrics-scheduler needs to build and test.
# Idempotent: does nothing (and needs no network) when everything is present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates openssl
  libcurl4-openssl-dev libsimdjson-dev libabsl-dev libfmt-dev
  libgoogle-glog-dev libgflags-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  libcpp-httplib-dev libre2-dev prometheus golang-go
  clang libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

# Go may come from the machine rather than Debian; any go >= 1.24 will do.
if command -v go >/dev/null 2>&1; then
  missing=("${missing[@]/golang-go/}")
fi

missing=($(printf '%s\n' "${missing[@]}" | sed '/^$/d'))
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
