#!/usr/bin/env bash
# optim.flirt's speculation (issue 17) on the device, before and after in one call:
# `regpipe run examples/flirt_cr.yaml` with cuda.cr, no registered image, chris_PD -> chris_t1,
# REPEATS rounds after a warm-up round, the variants interleaved within each round:
#   before  the optim.flirt plugin of the build this work started from (BEFORE_DIR, loaded
#           first with --plugin-override)
#   off     this build, speculate=off
#   auto    this build, the default (speculate=auto)
#   on      this build, speculate=on
# Usage: device_run.sh BUNDLE BEFORE_DIR OUT [REPEATS]; BUNDLE from device-bundle.sh with the
# images in BUNDLE/data. Leaves OUT/runs.tar.gz (each run's report.json, transform.mat and
# log) for table.py.
BUNDLE=$1 BEFORE=$2 OUT=$3 REPEATS=${4:-7}
source "$BUNDLE/env.sh"  # before set -o pipefail: its ldconfig | awk pipe ends early
set -euo pipefail
source "$(dirname "$0")/../flirt_cr_rounds.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt" || true
variant_args() {
  case $1 in
    before) extra=(--plugin-path "$BEFORE" --plugin-override) ;;
    *) extra=(--set "registration.optimizer.params.speculate=$1") ;;
  esac
}
flirt_cr_rounds "$BUNDLE" "$OUT" "$REPEATS" before off auto on
