#!/usr/bin/env bash
# Issues 18 and 19 on the device: a batch of N moving images to chris_t1 (examples/flirt_cr.yaml:
# 12 DOF, FLIRT's CR and search) under each execution.devices given, with and without the
# registered images, REPEATS times in turn (an entry cpu:K runs K CPU workers instead: cpu.cr
# and resample.cpu, each worker on its share of the cores), each GPU's utilisation sampled by nvidia-smi every
# 250 ms. Everything lands in $OUT/batch_devices.tgz (reports, logs, samples, runs.txt);
# bench/batch_devices/table.py makes the table from it.
#
#   bash bench/batch_devices/device_scaling.sh BUNDLE N REPEATS DEVICES...
#   bash bench/batch_devices/device_scaling.sh .device/lead 96 3 0 0,0 0,1 0,0,1,1
#   bash bench/batch_devices/device_scaling.sh .device/lead 32 1 cpu:16
#
# BUNDLE (../shared/tools/device-bundle.sh) carries data/chris_t1.nii.gz and data/moving/m0..m2
# (bench/batch_devices/make_moving.py); the batch cycles the three.
set -uo pipefail
B=$1; N=$2; REPEATS=$3; shift 3
D=$PWD/$B/data
source $B/env.sh
source "$(dirname "$0")/batch_inputs.sh"
R=$OUT/batch_devices; note_machine $R

W=/tmp/batch_devices; make_batch $W $N $D
cp $W/pipeline.yaml $R/
# Warm-up: the driver's first start and the page cache, paid by no measured run.
regpipe run $W/pipeline.yaml --devices 0 --set "inputs.moving=[$W/in/s$(printf %0${#N}d 1).nii.gz, $W/in/s$(printf %0${#N}d 2).nii.gz]" -q > /dev/null 2>&1

for repeat in $(seq 1 $REPEATS); do
  for devices in "$@"; do
    for images in true false; do
      name="devices_${devices//[,:]/-}_images_${images}_run${repeat}"
      case $devices in
        cpu:*) place="--workers ${devices#cpu:} --set registration.cost.plugin=cpu.cr --set registration.resampler.plugin=resample.cpu";;
        *) place="--devices $devices";;
      esac
      batch_run $R $name $W/out regpipe run $W/pipeline.yaml $place --set outputs.registered_image=$images -q | tee -a $R/runs.txt
    done
  done
done
tar -czf $OUT/batch_devices.tgz -C $OUT batch_devices && rm -rf $R
