#!/usr/bin/env bash
# The ecosystem's own readers that the interop tests compare regpipe's files with (never
# runtime dependencies of regpipe): nibabel from Debian, SimpleITK and fslpy from PyPI, in a
# venv at build/interop-venv that also sees Debian's packages. Where PyPI cannot be reached the
# tests that need them skip, saying why. Also Debian's snakemake (7.21), which runs the study
# workflow's test (label workflow, workflows/study); regpipe itself never needs it.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(python3-nibabel python3-venv snakemake)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "install-test-tools: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
venv=build/interop-venv
if [ ! -x "$venv/bin/python" ]; then
  mkdir -p build
  /usr/bin/python3 -m venv --system-site-packages "$venv"
fi
if ! "$venv/bin/python" -c 'import SimpleITK, fsl.transform.flirt' 2>/dev/null; then
  "$venv/bin/python" -m pip install -q --disable-pip-version-check SimpleITK fslpy ||
    echo "install-test-tools: SimpleITK/fslpy not installed; their interop tests will skip"
fi
