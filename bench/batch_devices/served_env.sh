#!/usr/bin/env bash
# A served batch (issue 17) through three servers of one build that differ only in the CUDA
# environment they start their processes with: "a" as it is, "b" CUDA_DEVICE_MAX_CONNECTIONS=32
# (more hardware queues than the 4-8 lanes' streams), "c" CUDA_MODULE_LOADING=EAGER (every
# kernel loaded while the process is started ahead). N chris_PD copies to chris_t1
# (examples/flirt_cr.yaml, cuda.cr) at 4 and 8 registrations at once without registered
# images, and at 4 with them; REPEATS rounds, the servers' order reversed every other round;
# then one lone registration through each. Prints, per run, the wall clock, the mean GPU
# utilisation (nvidia-smi every 250 ms), the batch's timeline and its registrations' seconds
# (served_env_summary.py), with the median seconds of each search stage over a run's images.
#
#   bash bench/batch_devices/served_env.sh BUNDLE [REPEATS] [N]
#
# BUNDLE as for served_batch.sh (data/chris_t1.nii.gz, data/moving/m0..m2).
set -uo pipefail
B=$1; REPEATS=${2:-4}; N=${3:-24}
here=$(cd "$(dirname "$0")" && pwd)
source $B/env.sh
source $here/batch_inputs.sh
W=/tmp/served_env; make_batch $W $N $PWD/$B/data
R=$OUT/served_env; note_machine $R
regpipe serve --socket $W/a.sock --ready 3 2> $R/serve_a.log & A=$!
CUDA_DEVICE_MAX_CONNECTIONS=32 regpipe serve --socket $W/b.sock --ready 3 2> $R/serve_b.log & Bp=$!
CUDA_MODULE_LOADING=EAGER regpipe serve --socket $W/c.sock --ready 3 2> $R/serve_c.log & Cp=$!
await_server $W/a.sock $A; await_server $W/b.sock $Bp; await_server $W/c.sock $Cp
sleep 3  # the processes started ahead are ready
one() {  # name server at_once registered_image
  sleep 2
  local run
  run=$(batch_run $R $1 $W/out env REGPIPE_SERVER=$W/$2.sock regpipe run $W/pipeline.yaml --devices 0 -q \
    --set outputs.registered_image=$4 --set execution.registrations_per_worker=$3)
  python3 $here/served_env_summary.py --stages $W/out > $R/$1.stages
  echo "$run util=$(awk -F', ' '{s+=$3; n++} END {printf "%.0f", n ? s/n : 0}' $R/$1.util.csv)" >> $R/runs.txt
}
for s in a b c; do one warm_$s $s 4 false; done
: > $R/runs.txt
for rep in $(seq 1 $REPEATS); do
  order="a b c"; (( rep % 2 == 0 )) && order="c b a"
  for count in 4 8; do for s in $order; do one ${s}_${count}_noimg_run$rep $s $count false; done; done
  for s in $order; do one ${s}_4_img_run$rep $s 4 true; done
done
sed -e "s#moving: .*#moving: $PWD/$B/data/moving/m0.nii.gz#" -e "s#dir: .*#dir: $W/lone#" $W/pipeline.yaml > $W/lone.yaml
for s in a b c; do
  sleep 2
  REGPIPE_SERVER=$W/$s.sock regpipe run $W/lone.yaml --devices 0 -q --set outputs.registered_image=false
  cp $W/lone/*report.json $R/lone_$s.json
done
kill -INT $A $Bp $Cp; wait
python3 $here/served_env_summary.py $R
