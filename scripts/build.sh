#!/usr/bin/env bash
# Configures and builds regpipe in build/ (Release; CUDA plugins for sm_90 + PTX when nvcc
# is on PATH). Executables land in build/bin, plugins in build/plugins.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/cuda/bin"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > build-configure.log 2>&1 || { cat build-configure.log; exit 1; }
rm -f build-configure.log
cmake --build build -j "${REGPIPE_BUILD_JOBS:-2}"
