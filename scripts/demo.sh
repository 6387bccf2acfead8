#!/usr/bin/env bash
# The built-in example: install, build, write a synthetic two-contrast phantom with a known
# misalignment, and register it (CUDA cost when a GPU is present, the CPU reference otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
build/bin/regpipe phantom demo
build/bin/regpipe run demo/pipeline.yaml
