#!/usr/bin/env bash
# Issue 5's device measurements in one call: the GPU tests, a batch of 20 moving images (with
# and without registered images, parallel and sequential file I/O, and as 20 separate
# processes), the known-transform cases of bench/elastix through `regpipe run` on the GPU,
# and the registration bench (chris_PD -> chris_t1, the 256x256x160 grid, MI).
#
#   bench/device_run.sh          # on the device, in the repository root, $OUT set by the device tool
#
# Needs a bundle at .device/bundle (../shared/tools/device-bundle.sh build .device/bundle
# --data DATA:data) whose DATA holds chris_t1.nii.gz, chris_PD.nii.gz and elx/: the cases
# t1_rot10 and t1_rot45 of bench/elastix/make_cases.py (moving.nii.gz + truth_world.txt; their
# reference is chris_t1) and phantom (`regpipe phantom`). Results: a tarball $OUT/all.tgz.
set -uo pipefail
B=.device/bundle; D=$PWD/$B/data
source $B/env.sh
export REGPIPE_TEST_DATA=$D
sed -e "s#../../shared/data#$D#" -e "s#dir: ../out#dir: /tmp/out#" examples/flirt_cr.yaml > /tmp/flirt_cr.yaml
( time regpipe_gpu_tests --gtest_brief=1 ) > $OUT/gpu_tests.txt 2>&1; echo "gpu_tests rc=$?" >> $OUT/gpu_tests.txt
grep -E "PASSED|FAILED|rc=" $OUT/gpu_tests.txt
now() { date +%s.%N; }
el() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.3f", b-a}'; }
# 1. batch of 20 moving images (three different scans, cycled) to chris_t1
mkdir -p /tmp/b20 /tmp/single $OUT/batch
srcs=($D/chris_PD.nii.gz $D/elx/t1_rot10/moving.nii.gz $D/elx/t1_rot45/moving.nii.gz)
for i in $(seq -w 1 20); do ln -sf ${srcs[$(( (10#$i - 1) % 3 ))]} /tmp/b20/m$i.nii.gz; done
sed -e "s#moving: .*#moving: /tmp/b20/*.nii.gz#" -e "s#dir: /tmp/out#dir: /tmp/batch#" /tmp/flirt_cr.yaml > /tmp/batch.yaml
cp /tmp/batch.yaml $OUT/batch/
for mode in images noimages images_seq noimages_seq; do
  set_img=""; case $mode in noimages*) set_img="--set outputs.registered_image=false";; esac
  case $mode in *_seq) set_img="$set_img --set outputs.parallel_io=false";; esac
  rm -rf /tmp/batch; t0=$(now)
  regpipe run /tmp/batch.yaml $set_img > $OUT/batch/$mode.log 2>&1; rc=$?
  echo "batch $mode rc=$rc wall_s=$(el $t0)" | tee -a $OUT/batch/summary.txt
  cp /tmp/batch/batch_report.json $OUT/batch/batch_report_$mode.json
done
# the same 20 as separate processes (no reuse of the reference, components, CUDA context)
t0=$(now)
for i in $(seq -w 1 20); do regpipe run /tmp/batch.yaml --set inputs.moving=/tmp/b20/m$i.nii.gz --set outputs.dir=/tmp/single/$i --set outputs.registered_image=false > /dev/null 2>&1 || echo "single $i failed" >> $OUT/batch/summary.txt; done
echo "20 separate processes noimages wall_s=$(el $t0)" | tee -a $OUT/batch/summary.txt
# 2. known-transform cases (elastix comparison) with cuda.cr + optim.flirt, wall clock per process
mkdir -p $OUT/elx /tmp/elxout
for c in t1_rot10 t1_rot45 phantom; do
  case_dir=$D/elx/$c; ref=$D/chris_t1.nii.gz; levels="[8, 4, 2, 1]"
  [ $c = phantom ] && { ref=$case_dir/reference.nii.gz; levels="[8, 4, 3]"; }
  cat > /tmp/elx_$c.yaml <<YAML
inputs: {reference: $ref, moving: $case_dir/moving.nii.gz}
registration:
  dof: 12
  levels_mm: $levels
  cost: {plugin: cuda.cr, params: {bins: 256}}
  optimizer: {plugin: optim.flirt}
outputs: {dir: /tmp/elxout/$c, registered_image: false}
evaluation: {truth: $case_dir/truth_world.txt}
YAML
  for i in 0 1 2 3; do
    t0=$(now); regpipe run /tmp/elx_$c.yaml > $OUT/elx/$c.$i.log 2>&1; rc=$?; w=$(el $t0)
    err=$(grep -o '"mean_displacement_mm": *[0-9.e-]*' /tmp/elxout/$c/report.json | awk -F: '{print $2}')
    echo "$c run $i rc=$rc wall_s=$w error_mm=$err" | tee -a $OUT/elx/summary.txt
  done
  cp /tmp/elxout/$c/report.json $OUT/elx/$c.report.json
done
# 3. registration bench: chris and the 256 grid, CR and MI, against the CPU plugins on the host's cores
mkdir -p $OUT/reg_chris $OUT/reg_grid
CPU="registration.cost.plugin=cpu.cr; registration.resampler.plugin=resample.cpu"
MI="--set registration.cost.plugin=cuda.mi --set registration.cost.params.bins=64"
CPU_MI="registration.cost.plugin=cpu.mi; registration.resampler.plugin=resample.cpu"
regpipe_bench_registration /tmp/flirt_cr.yaml --repeats 5 --variant "cpu16: $CPU" --out $OUT/reg_chris > $OUT/reg_chris/out.txt 2>&1
regpipe_bench_registration /tmp/flirt_cr.yaml --repeats 5 --grid 256x256x160 --variant "cpu16: $CPU" --out $OUT/reg_grid > $OUT/reg_grid/out.txt 2>&1
regpipe_bench_registration /tmp/flirt_cr.yaml --repeats 3 $MI --variant "cpu16: $CPU_MI" > $OUT/reg_chris/mi.txt 2>&1
regpipe_bench_registration /tmp/flirt_cr.yaml --repeats 3 $MI --grid 256x256x160 > $OUT/reg_grid/mi.txt 2>&1
head -8 $OUT/reg_chris/out.txt $OUT/reg_grid/out.txt $OUT/reg_chris/mi.txt $OUT/reg_grid/mi.txt
cd $OUT && tar czf /tmp/all.tgz . && rm -rf ./* && mv /tmp/all.tgz . && cp /dev/null done.txt
