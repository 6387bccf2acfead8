#!/usr/bin/env bash
# cuda.cr before and after a change of its plugin, on the device (issue 17):
#   0. bench/cost_cr_before_after/call_floor.cu (the round trips a call is made of), built with
#      the device's nvcc, twice; ncu's duration of fused's first 6 launches (8 mm, k=1) for each
#      variant;
#   1. regpipe_bench_cr --quick --schemes fused, the plugin before and this build's, interleaved
#      twice (the bench finds its plugins at <exe>/../plugins: a copy with the before plugin);
#   2. `regpipe run examples/flirt_cr.yaml` with cuda.cr, chris_PD -> chris_t1, no registered
#      image, REPEATS rounds after a warm-up round, before (BEFORE_DIR loaded first with
#      --plugin-override) and after interleaved in each round;
#   3. the cuda.cr GPU tests (fused's first), each group under its own time limit
#      (TEST_SECONDS), where the bundle has regpipe_gpu_tests.
# VARIANTS="name=DIR ..." adds plugin folders to steps 0-2 (alternatives tried in the same call,
# between before and after); TEST_ALSO="name ..." runs step 3's fused group for those variants
# too.
# ONLY=tests runs step 3 alone: a bundle with the tests, the bench, regpipe, two plugins and the
# images may exceed the device's 64 MiB carry limit (strip them), so they may go in two calls.
# Usage: device_run.sh BUNDLE BEFORE_DIR OUT [REPEATS]; BUNDLE from device-bundle.sh with
# chris_t1.nii.gz and chris_PD.nii.gz in BUNDLE/data, BEFORE_DIR holding the earlier
# libregpipe_cost_cr_cuda.so. Leaves OUT/floor.txt, OUT/ncu_<variant>.csv,
# OUT/bench_<variant>_{1,2}.md, OUT/runs.tar.gz (each registration's report.json, transform and
# log) and OUT/tests_*.txt.
BUNDLE=$1 BEFORE=$2 OUT=$3 REPEATS=${4:-7}
source "$BUNDLE/env.sh"  # before set -o pipefail: its ldconfig | awk pipe ends early
set -euo pipefail
source "$(dirname "$0")/../flirt_cr_rounds.sh"
export REGPIPE_TEST_DATA=$BUNDLE/data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt" || true

declare -A PLUGINS=([before]=$BEFORE)
NAMES=(before)
for v in ${VARIANTS:-}; do
  PLUGINS[${v%%=*}]=${v#*=}
  NAMES+=("${v%%=*}")
done
NAMES+=(after)

# A copy of the bundle's bin/ and plugins/ with variant $1's cuda.cr plugin (after: the bundle).
variant_root() {
  [[ $1 == after ]] && { echo "$BUNDLE"; return; }
  local root=/tmp/variant_$1
  if [[ ! -d $root ]]; then
    mkdir -p "$root/plugins"
    cp -r "$BUNDLE/bin" "$root/"
    cp "$BUNDLE"/plugins/*.so "$root/plugins/"
    cp "${PLUGINS[$1]}/libregpipe_cost_cr_cuda.so" "$root/plugins/"
  fi
  echo "$root"
}

floor_and_kernel_times() {
  nvcc -O2 -std=c++20 -arch=sm_90 -o /tmp/call_floor "$(dirname "$0")/call_floor.cu"
  { /tmp/call_floor; /tmp/call_floor; } > "$OUT/floor.txt" 2>&1
  local name
  for name in "${NAMES[@]}"; do
    timeout 120 ncu --kernel-name regex:fused_kernel --launch-count 6 --metrics gpu__time_duration.sum --csv \
      "$(variant_root "$name")/bin/regpipe_bench_cr" --quick --schemes fused --data "$BUNDLE/data" --out /tmp/ncu \
      > "$OUT/ncu_$name.csv" 2>&1 || echo "ncu $name: exit $?"
  done
}

bench_and_registrations() {
  local bench=(--quick --schemes fused --data "$BUNDLE/data" --out /tmp/bench) i name
  for i in 1 2; do
    for name in "${NAMES[@]}"; do
      "$(variant_root "$name")/bin/regpipe_bench_cr" "${bench[@]}" > "$OUT/bench_${name}_$i.md"
    done
  done

  flirt_cr_rounds "$BUNDLE" "$OUT" "$REPEATS" "${NAMES[@]}"
}

variant_args() { [[ $1 == after ]] || extra=(--plugin-path "${PLUGINS[$1]}" --plugin-override); }

tests() {  # name seconds filter [variant]
  local root
  root=$(variant_root "${4:-after}")
  timeout "$2" "$root/bin/regpipe_gpu_tests" --gtest_filter="$3" > "$OUT/tests_$1.txt" 2>&1 || echo "tests $1: exit $?"
  tail -3 "$OUT/tests_$1.txt"
}

if [[ ${ONLY:-} != tests ]]; then
  floor_and_kernel_times
  bench_and_registrations
fi
[[ -x $BUNDLE/bin/regpipe_gpu_tests ]] || exit 0
fused='Schemes/CudaCr.*/fused:CudaCrFused.*:CudaCrDevice.*:DeviceImagesCudaCr.*:Costs/DeviceImagesCuda.*/cr_*'
schemes='Schemes/CudaCr.*:-Schemes/CudaCr.*/fused'
tests fused "${TEST_SECONDS:-60}" "$fused"
tests known "${TEST_SECONDS:-60}" 'Cuda/KnownTransform.*'
tests schemes "${TEST_SECONDS:-60}" "$schemes"
tests batch "${TEST_SECONDS:-60}" 'BatchDevices*'
for name in ${TEST_ALSO:-}; do tests "fused_$name" "${TEST_SECONDS:-60}" "$fused" "$name"; done
