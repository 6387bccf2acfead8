#!/usr/bin/env bash
# Configures build-sanitize/ (clang, ASan + UBSan, libFuzzer coverage, no CUDA: REGPIPE_FUZZ)
# and builds the targets given. scripts/sanitize.sh and scripts/fuzz.sh share this one build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-sanitizer-tools.sh
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
mkdir -p build-sanitize
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Release -DREGPIPE_WITH_CUDA=OFF -DREGPIPE_FUZZ=ON \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" > build-sanitize/configure.log 2>&1 ||
  { cat build-sanitize/configure.log; exit 1; }
cmake --build build-sanitize -j "${REGPIPE_BUILD_JOBS:-2}" --target "$@"
