#!/usr/bin/env bash
# The compilers of the sanitizer and fuzz jobs (scripts/sanitize.sh, scripts/fuzz.sh), from
# Debian 12: clang, since GCC has no libFuzzer, and libclang-rt-14-dev, which holds clang's
# libFuzzer, ASan and UBSan runtimes (clang only recommends it, so a minimal install lacks it).
set -euo pipefail
packages=(clang libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-sanitizer-tools: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
