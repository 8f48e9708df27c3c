#!/usr/bin/env bash
# Installs the Debian packages metrics-scheduler needs to build and test.
# Idempotent: does nothing (and needs no network) when everything is present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates openssl
  libcurl4-openssl-dev libsimdjson-dev libabsl-dev libfmt-dev
  libgoogle-glog-dev libgflags-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  libcpp-httplib-dev libre2-dev prometheus python3
  clang libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

missing=($(printf '%s\n' "${missing[@]}" | sed '/^$/d'))
if [ ${#missing[@]} -eq 0 ]; then
  # The local control plane's Go is not a Debian package (Debian 12's is
  # too old): check it is there, or say what to install.
  exec bash "$(dirname "${BASH_SOURCE[0]}")/check-go.sh"
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
exec bash "$(dirname "${BASH_SOURCE[0]}")/check-go.sh"
