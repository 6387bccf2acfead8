#!/usr/bin/env bash
# Installs regpipe's build dependencies from Debian 12 packages (the CUDA toolkit comes from
# the machine: nvcc on PATH builds the CUDA plugins, its absence skips them).
set -euo pipefail
packages=(cmake ninja-build g++ pkg-config libboost-dev libboost-filesystem-dev libeigen3-dev
          libyaml-cpp-dev libinsighttoolkit5-dev libdeflate-dev libgtest-dev libcli11-dev nlohmann-json3-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
