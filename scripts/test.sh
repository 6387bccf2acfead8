#!/usr/bin/env bash
# The test suite: install, build, run every ctest label (gpu tests skip without a device).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "${REGPIPE_TEST_JOBS:-2}" --timeout 1500
