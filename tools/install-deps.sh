#!/usr/bin/env bash
# Installs every Debian package dfs needs to build, test and benchmark. Idempotent:
# does nothing when everything is already there. Needs root (or sudo) to install.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libboost1.81-dev librocksdb-dev libprotobuf-dev protobuf-compiler
  libfuse3-dev fuse3 libspdlog-dev libfmt-dev doctest-dev libisal-dev libcli11-dev libssl-dev
  libjemalloc-dev  # the MDS's malloc
  fio rsync attr acl procps iproute2 python3 bc
  e2fsprogs  # mkfs.ext4: dfs-osd --mkfs --loop-file
  systemd    # systemd-analyze: the tests verify the units (systemd need not be running)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
