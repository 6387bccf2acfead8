#!/usr/bin/env bash
# Issue 17's file I/O on the device, before and after in one call:
#   1. regpipe_bench_io: chris_t1 on 256x256x160 (float32, resampled as a registered image is)
#      and MNI152_T1_2mm, ITK's zlib against libdeflate, medians of 7;
#   2. the whole `regpipe run` of examples/flirt_cr.yaml with cuda.cr (chris_PD -> chris_t1),
#      with the registered image (the moving image's uint8, and float32) and without it, RUNS
#      times each, the "before" and "after" builds alternating; wall seconds and report.json's
#      reading / registration / writing phases;
#   3. the outputs of the two builds compared: transforms bit for bit, the registered images
#      voxel for voxel (decompressed bytes).
#
#   bench/io_device_run.sh [RUNS] [--no-bench]   # on the device, in the repository root, $OUT set
#
# Needs the bundle .device/gzio (../shared/tools/device-bundle.sh on this build, --data with
# chris_t1, chris_PD and MNI152_T1_2mm .nii.gz as data/) with the "before" build's bin/regpipe
# and plugins/ copied into .device/gzio/before/ (its shared libraries are the bundle's, less
# libdeflate: device-bundle.sh lists the same closure).
set -uo pipefail
RUNS=${1:-7}
BENCH=${2:-}
B=$PWD/.device/gzio; D=$B/data
source $B/env.sh
bash $B/check.sh > $OUT/check.txt 2>&1 || { cat $OUT/check.txt; exit 1; }
nvidia-smi -L > $OUT/device.txt 2>&1; nproc >> $OUT/device.txt

[ "$BENCH" = --no-bench ] || regpipe_bench_io "$D/chris_t1.nii.gz@256x256x160" "$D/MNI152_T1_2mm.nii.gz" \
  --repeats 7 --dir /tmp/iobench > $OUT/io_bench.md 2>&1

sed -e "s#../../shared/data#$D#" -e "s#plugin: \[cuda.cr, cpu.cr\]#plugin: cuda.cr#" examples/flirt_cr.yaml > /tmp/flirt_cr.yaml
cp /tmp/flirt_cr.yaml $OUT/
now() { date +%s.%N; }
# report.json's "seconds": {"reading": r, "registration": g, "writing": w, ...} (no python needed)
phases() { tr -d ' \n' < $1 | grep -o '"seconds":{[^}]*}' | sed -E 's/.*"reading":([^,]*).*"registration":([^,]*).*"writing":([^,}]*).*/\1 \2 \3/'; }
echo "build image run wall_s reading_s registration_s writing_s" > $OUT/runs.txt
for i in $(seq 1 "$RUNS"); do
  for image in uint8 float32 without; do
    for build in before after; do
      exe=$B/bin/regpipe; [ $build = before ] && exe=$B/before/bin/regpipe
      case $image in
        without) set_image="--set outputs.registered_image=false";;
        float32) set_image="--set outputs.datatype=float32";;
        *) set_image="";;
      esac
      dir=/tmp/run_${build}_$image; rm -rf $dir
      t0=$(now)
      $exe run /tmp/flirt_cr.yaml -q --set outputs.dir=$dir $set_image > $OUT/${build}_$image.log 2>&1 || echo "$build $image run $i failed" >> $OUT/runs.txt
      t1=$(now)
      echo "$build $image $i $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", b-a}') $(phases $dir/*report.json)" >> $OUT/runs.txt
    done
  done
done
# Medians per build and image (awk: no python needed).
{
  echo '| build | registered image | runs | wall s | reading s | registration s | writing s |'
  echo '|---|---|---|---|---|---|---|'
  for image in uint8 float32 without; do
    for build in before after; do
      grep "^$build $image " $OUT/runs.txt | grep -v failed | awk -v b=$build -v im=$image '
        { for (k = 4; k <= 7; ++k) v[k, NR] = $k; n = NR }
        function med(k,   i, j, t, a) { for (i = 1; i <= n; ++i) a[i] = v[k, i] + 0;
          for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
          return a[int(n / 2) + 1] }
        END { printf "| %s | %s | %d | %.3f | %.3f | %.3f | %.3f |\n", b, im, n, med(4), med(5), med(6), med(7) }'
    done
  done
} > $OUT/runs_median.md

# The two builds' outputs: transforms bit for bit, the registered image's decompressed bytes.
{
  for image in uint8 float32; do
    for f in $(cd /tmp/run_before_$image && ls); do
      x=/tmp/run_before_$image/$f; y=/tmp/run_after_$image/$f
      case $f in *.nii.gz) a=$(zcat $x | md5sum); b=$(zcat $y | md5sum);;
                  *report.json) continue;;
                  *) a=$(md5sum < $x); b=$(md5sum < $y);;
      esac
      [ "$a" = "$b" ] && echo "same    $image $f" || echo "DIFFERS $image $f"
    done
    ls -l /tmp/run_before_$image/*.nii.gz /tmp/run_after_$image/*.nii.gz
  done
} > $OUT/outputs_compared.txt 2>&1
cat $OUT/device.txt $OUT/io_bench.md $OUT/runs_median.md $OUT/outputs_compared.txt 2>/dev/null
tail -n +2 $OUT/runs.txt | awk '{printf "%s ", $0} NR % 6 == 0 {print ""}' 
