#!/usr/bin/env bash
# Issue 16's speed measurements in one device call (bench/results/syn_speed_<device>.md), from
# the repository root:
#   bash bench/syn/device_speed.sh BUNDLE OUT [STEPS]
# BUNDLE: a device bundle (../shared/tools/device-bundle.sh) of regpipe, regpipe_gpu_tests and
# regpipe_bench_syn with the plugins, its data/ holding chris_t1.nii.gz and, for FireANTs,
# data/whl/ (the fireants and nibabel wheels: bench/syn/prepare_fireants_device.sh fetches
# them) and data/SimpleITK.py (../shared/tools/fireants); its lib/ may come as lib.tar.xz
# (a device call carries 64 MiB at most). STEPS (default "tests bench pipeline fireants"):
#   tests     the GPU tests of SyN and local CC, the 1 mm known-truth test among them
#   bench     regpipe_bench_syn --repeats 5 --cpu (writes the 1 mm pair to /tmp/syn_pair)
#   pipeline  regpipe run bench/syn/speed_pipeline.yaml on that pair, three times
#   fireants  FireANTs' SyN on that pair (bench/syn/fireants_cross_subject.py --timing-only)
# Everything goes to OUT: gpu.txt, gpu_tests.txt, bench_syn.md, pipeline.txt (each run's
# summary: the stages' and the run's seconds), fireants.txt, fireants/timing.json.
set -uo pipefail
B=$1
OUT=$2
STEPS=${3:-tests bench pipeline fireants}
if [ -f "$B/lib.tar.xz" ] && [ ! -d "$B/lib" ]; then tar -xJf "$B/lib.tar.xz" -C "$B"; fi
bash "$B/check.sh" > "$OUT/check.txt" 2>&1 || { tail -20 "$OUT/check.txt"; exit 1; }
source "$B/env.sh"
export REGPIPE_TEST_DATA="$B/data" REGPIPE_PLUGIN_PATH="$B/plugins"
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,driver_version --format=csv > "$OUT/gpu.txt" 2>&1
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

for step in $STEPS; do
  start=$(now)
  case $step in
    tests)
      timeout 240 regpipe_gpu_tests --gtest_filter='SynKnownWarpCuda*:DeviceSyn*:DeviceFields*:*CudaLcc*:OptimSyn*' \
        > "$OUT/gpu_tests.txt" 2>&1
      grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran|chris_t1 at 1 mm" "$OUT/gpu_tests.txt" ;;
    bench)
      timeout 240 regpipe_bench_syn --repeats 5 --cpu --write-pair /tmp/syn_pair > "$OUT/bench_syn.md" 2>&1
      cat "$OUT/bench_syn.md" ;;
    pipeline)
      for i in 1 2 3; do
        t=$(now)
        timeout 120 regpipe run bench/syn/speed_pipeline.yaml --set inputs.reference=/tmp/syn_pair/fixed.nii.gz \
          --set inputs.moving=/tmp/syn_pair/moving.nii.gz --set outputs.dir=/tmp/syn_run_$i > /tmp/syn_run_$i.txt 2>&1
        echo "regpipe run $i: exit $?, wall $(since "$t") s" >> /tmp/syn_run_$i.txt
        grep -vE "^regpipe progress" /tmp/syn_run_$i.txt | tail -6 | tee -a "$OUT/pipeline.txt"
      done ;;
    fireants)
      python3 -m pip install -q --no-index --no-deps --target /tmp/site "$B"/data/whl/*.whl > "$OUT/fireants_pip.txt" 2>&1
      PYTHONPATH="$B/data:/tmp/site" PYTHONUNBUFFERED=1 timeout 200 python3 bench/syn/fireants_cross_subject.py \
        --fixed /tmp/syn_pair/fixed.nii.gz --moving /tmp/syn_pair/moving.nii.gz --timing-only --repeats 3 \
        --out "$OUT/fireants" > "$OUT/fireants.txt" 2>&1
      tail -5 "$OUT/fireants.txt" ;;
  esac
  echo "== step $step: $(since "$start") s"
done
