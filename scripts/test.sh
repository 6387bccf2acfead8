#!/usr/bin/env bash
# The test suite: install, build, run every ctest label (gpu tests skip without a device; the
# interop tests use the readers scripts/install-test-tools.sh installs), then the sanitizer
# and fuzz jobs (clang builds in build-sanitize/, docs/robustness.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
bash scripts/install-test-tools.sh
export REGPIPE_TEST_PYTHON="$PWD/build/interop-venv/bin/python"
ctest --test-dir build --output-on-failure -j "${REGPIPE_TEST_JOBS:-2}" --timeout 1500
bash scripts/sanitize.sh
bash scripts/fuzz.sh
