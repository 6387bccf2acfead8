#!/usr/bin/env bash
# Issue 17's batch target on the device, and where a batch's wall clock goes: N moving images
# to chris_t1 (examples/flirt_cr.yaml: 12 DOF, cuda.cr, FLIRT's search) on device 0, one worker,
# with and without the registered images, by the regpipe binary BEFORE and by the bundle's
# regpipe, each run plainly and through its own `regpipe serve` (docs/serve.md; READY processes
# kept ready, GAP_S seconds between served commands so that the server has replaced those a
# batch took, as with a script's other work between its commands). COUNTS: the after build's
# execution.registrations_per_worker values measured through its server beside `auto`.
# REPEATS times, every configuration in turn within each repeat; GPU utilisation sampled by
# nvidia-smi every 250 ms. Prints the tables (served_batch_table.py) at the end; everything
# lands in $OUT/served_batch.tgz, rewritten after each run.
#
#   bash bench/batch_devices/served_batch.sh BUNDLE BEFORE [REPEATS] [N] [COUNTS] [READY] [GAP_S]
#   bash bench/batch_devices/served_batch.sh .device/h33 .device/h33/before/bin/regpipe 3 24 "6 8" 3 2
#
# BUNDLE (../shared/tools/device-bundle.sh, lib/ unpacked) carries data/chris_t1.nii.gz and
# data/moving/m0..m2 (bench/batch_devices/make_moving.py); the batch cycles the three.
set -uo pipefail
B=$1; BEFORE=$PWD/$2; REPEATS=${3:-3}; N=${4:-24}; COUNTS=${5:-}; READY=${6:-3}; GAP=${7:-2}
here=$(cd "$(dirname "$0")" && pwd)
D=$PWD/$B/data
source $B/env.sh
AFTER=$(command -v regpipe)
source $here/batch_inputs.sh
R=$OUT/served_batch; note_machine $R
W=/tmp/served_batch; make_batch $W $N $D

declare -A server
for build in before after; do
  bin=$BEFORE; [[ $build == after ]] && bin=$AFTER
  $bin serve --socket $W/$build.sock --ready $READY 2> $R/serve_$build.log &
  server[$build]=$!
done
for build in before after; do await_server $W/$build.sock ${server[$build]}; done
sleep 3  # the processes started ahead are ready

one() {  # name, binary, served (yes/no), build, then regpipe run's extra options
  local name=$1 bin=$2 served=$3 build=$4; shift 4
  local env=()
  if [[ $served == yes ]]; then sleep $GAP; env=(REGPIPE_SERVER=$W/$build.sock); fi
  batch_run $R $name $W/out env "${env[@]}" $bin run $W/pipeline.yaml --devices 0 -q "$@" | tee -a $R/runs.txt
  tar -czf $OUT/served_batch.tgz -C $OUT served_batch
}

# Warm-up: the driver's first start and the page cache, paid by no measured run.
for build in before after; do
  bin=$BEFORE; [[ $build == after ]] && bin=$AFTER
  one warm_${build}_plain $bin no $build > /dev/null
  one warm_${build}_served $bin yes $build > /dev/null
done
: > $R/runs.txt

for repeat in $(seq 1 $REPEATS); do
  for images in true false; do
    for build in before after; do
      bin=$BEFORE; [[ $build == after ]] && bin=$AFTER
      for served in no yes; do
        mode=plain; [[ $served == yes ]] && mode=served
        one "n${N}_${build}_${mode}_auto_images_${images}_run${repeat}" $bin $served $build \
          --set outputs.registered_image=$images
      done
    done
    for count in $COUNTS; do
      one "n${N}_after_served_${count}_images_${images}_run${repeat}" $AFTER yes after \
        --set outputs.registered_image=$images --set execution.registrations_per_worker=$count
    done
  done
done
for build in before after; do kill -INT ${server[$build]}; wait ${server[$build]}; done
tar -czf $OUT/served_batch.tgz -C $OUT served_batch
if command -v python3 > /dev/null; then python3 $here/served_batch_table.py $R
else echo "no python3 here: python3 bench/batch_devices/served_batch_table.py on \$OUT/served_batch.tgz's folder"; fi
