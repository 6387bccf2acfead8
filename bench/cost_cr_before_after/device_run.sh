#!/usr/bin/env bash
# cuda.cr before and after a change of its plugin, on the device (issue 17):
#   1. regpipe_bench_cr --quick --schemes fused, the plugin before and this build's, interleaved
#      twice (the bench finds its plugins at <exe>/../plugins: a copy with the before plugin);
#   2. `regpipe run examples/flirt_cr.yaml` with cuda.cr, chris_PD -> chris_t1, no registered
#      image, REPEATS rounds after a warm-up round, before (BEFORE_DIR loaded first with
#      --plugin-override) and after interleaved in each round;
#   3. the cuda.cr GPU tests (fused's first), each group under its own time limit
#      (TEST_SECONDS), where the bundle has regpipe_gpu_tests.
# ONLY=tests runs step 3 alone: a bundle with the tests, the bench, regpipe, two plugins and the
# images exceeds the device's 64 MiB carry limit, so they go in two calls.
# Usage: device_run.sh BUNDLE BEFORE_DIR OUT [REPEATS]; BUNDLE from device-bundle.sh with
# chris_t1.nii.gz and chris_PD.nii.gz in BUNDLE/data, BEFORE_DIR holding the earlier
# libregpipe_cost_cr_cuda.so. Leaves OUT/bench_{before,after}_{1,2}.md, OUT/runs.tar.gz (each
# registration's report.json, transform and log) and OUT/tests_*.txt.
BUNDLE=$1 BEFORE=$2 OUT=$3 REPEATS=${4:-7}
source "$BUNDLE/env.sh"  # before set -o pipefail: its ldconfig | awk pipe ends early
set -euo pipefail
source "$(dirname "$0")/../flirt_cr_rounds.sh"
export REGPIPE_TEST_DATA=$BUNDLE/data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt" || true

bench_and_registrations() {
  local old
  old=$(mktemp -d)
  mkdir -p "$old/bin" "$old/plugins"
  cp "$BUNDLE/bin/regpipe_bench_cr" "$old/bin/"
  cp "$BUNDLE"/plugins/*.so "$old/plugins/"
  cp "$BEFORE/libregpipe_cost_cr_cuda.so" "$old/plugins/"
  local bench=(--quick --schemes fused --data "$BUNDLE/data" --out "$old")
  for i in 1 2; do
    "$old/bin/regpipe_bench_cr" "${bench[@]}" > "$OUT/bench_before_$i.md"
    regpipe_bench_cr "${bench[@]}" > "$OUT/bench_after_$i.md"
  done

  flirt_cr_rounds "$BUNDLE" "$OUT" "$REPEATS" before after
}

variant_args() { [[ $1 == before ]] && extra=(--plugin-path "$BEFORE" --plugin-override) || true; }

tests() {  # name seconds filter
  timeout "$2" regpipe_gpu_tests --gtest_filter="$3" > "$OUT/tests_$1.txt" 2>&1 || echo "tests $1: exit $?"
  tail -3 "$OUT/tests_$1.txt"
}

[[ ${ONLY:-} == tests ]] || bench_and_registrations
command -v regpipe_gpu_tests > /dev/null || exit 0
tests fused "${TEST_SECONDS:-60}" \
  'Schemes/CudaCr.*/fused:CudaCrFused.*:CudaCrDevice.*:DeviceImagesCudaCr.*:Costs/DeviceImagesCuda.*/cr_*'
tests known "${TEST_SECONDS:-60}" 'Cuda/KnownTransform.*/CR'
tests schemes "${TEST_SECONDS:-60}" 'Schemes/CudaCr.*:-Schemes/CudaCr.*/fused'
