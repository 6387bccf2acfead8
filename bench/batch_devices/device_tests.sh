#!/usr/bin/env bash
# Issue 19's tests on a several-GPU device: the GPU tests on each device one at a time (one
# process per device, all at once: CUDA_VISIBLE_DEVICES picks it), then the multi-device batch
# tests with every device visible. Prints one line per run.
#
#   bash bench/batch_devices/device_tests.sh BUNDLE
set -uo pipefail
B=$1
source $B/env.sh
export REGPIPE_TEST_DATA=$PWD/$B/data
gpus=$(nvidia-smi -L | grep -c '^GPU')
for d in $(seq 0 $((gpus - 1))); do
  CUDA_VISIBLE_DEVICES=$d timeout 300 regpipe_gpu_tests --gtest_brief=1 > $OUT/gpu_tests_device$d.txt 2>&1 &
done
wait
regpipe_gpu_tests --gtest_filter='BatchDevices*' > $OUT/gpu_tests_batch_devices.txt 2>&1
for f in $OUT/gpu_tests_*.txt; do echo "$(basename $f): $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $f | tr '\n' ' ')"; done
