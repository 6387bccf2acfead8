#!/usr/bin/env bash
# Issue 17 on the device: batches of N moving images to chris_t1 (examples/flirt_cr.yaml: 12 DOF,
# cuda.cr, FLIRT's search) on device 0, one worker process, with and without the registered
# images, by the regpipe binary BEFORE (one registration at a time) and by the bundle's regpipe
# with each execution.registrations_per_worker given; REPEATS times, the builds in turn within
# each repeat. GPU utilisation is sampled by nvidia-smi every 250 ms. Everything lands in
# $OUT/at_once.tgz (reports, logs, samples, runs.txt), rewritten after each run so that a run
# cut short still returns what it made; bench/batch_devices/at_once_table.py makes the table.
#
#   bash bench/batch_devices/at_once_before_after.sh BUNDLE BEFORE REPEATS "SIZES" COUNTS...
#   bash bench/batch_devices/at_once_before_after.sh .device/h21 .device/h21/bin/regpipe_before 3 "24 96" 2 3 4
#
# BUNDLE (../shared/tools/device-bundle.sh) carries data/chris_t1.nii.gz and data/moving/m0..m2
# (bench/batch_devices/make_moving.py); each batch cycles the three.
set -uo pipefail
B=$1; BEFORE=$PWD/$2; REPEATS=$3; SIZES=$4; shift 4
D=$PWD/$B/data
source $B/env.sh
source "$(dirname "$0")/batch_inputs.sh"
R=$OUT/at_once; note_machine $R
W=/tmp/at_once
for n in $SIZES; do make_batch $W/$n $n $D; done
# Warm-up: the driver's first start and the page cache, paid by no measured run.
for build in "$BEFORE" regpipe; do
  $build run $W/${SIZES%% *}/pipeline.yaml --devices 0 --set outputs.dir=$W/warm -q > /dev/null 2>&1; rm -rf $W/warm
done

for repeat in $(seq 1 $REPEATS); do
  for n in $SIZES; do
    for images in true false; do
      for build in before "$@"; do
        name="n${n}_${build}_images_${images}_run${repeat}"
        if [[ $build == before ]]; then cmd="$BEFORE"; at_once=""; else cmd=regpipe; at_once="--set execution.registrations_per_worker=$build"; fi
        batch_run $R $name $W/$n/out $cmd run $W/$n/pipeline.yaml --devices 0 \
          --set outputs.registered_image=$images $at_once -q | tee -a $R/runs.txt
        tar -czf $OUT/at_once.tgz -C $OUT at_once
      done
    done
  done
done
