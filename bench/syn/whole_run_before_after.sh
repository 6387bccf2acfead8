#!/usr/bin/env bash
# The whole `regpipe run` of a staged pipeline (rigid + affine + syn), two builds back to back
# in one device call (bench/results/syn_speed_h100.md, "whole command"), from the repository root:
#   bash bench/syn/whole_run_before_after.sh BUNDLE OUT [RUNS]
# BUNDLE: a device bundle (../shared/tools/device-bundle.sh) of the after build (bin/regpipe,
# plugins/), with data/before/bin/regpipe and data/before/plugins/ the before build (a folder of
# its own: a regpipe also loads the plugins beside its bin/, and two libraries of one id are
# refused), data/pair/ the pair regpipe_bench_syn --write-pair writes (fixed.nii.gz,
# moving.nii.gz), data/MNI152_T1_2mm.nii.gz and data/T1_head_ext2.nii.gz; its lib/, bin/ and
# plugins/ may come as payload.tar.xz (a device call carries 64 MiB at most). RUNS (default 5)
# runs of each build of each pipeline, alternating before and after, each with -v. Writes
# OUT/runs.tsv (pipeline, build, run, wall and report.json's seconds, the syn stage's seconds,
# cost_before and final_cost) and the first run's logs.
set -uo pipefail
B=$(cd "$1" && pwd)
OUT=$2
RUNS=${3:-5}
if [ -f "$B/payload.tar.xz" ] && [ ! -d "$B/lib" ]; then tar -xJf "$B/payload.tar.xz" -C "$B"; fi
bash "$B/check.sh" > "$OUT/check.txt" 2>&1 || { tail -20 "$OUT/check.txt"; exit 1; }
source "$B/env.sh"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/gpu.txt" 2>&1
nproc >> "$OUT/gpu.txt"
now() { date +%s.%N; }

sed "s#\.\./\.\./shared/data#$B/data#" examples/syn_t1_to_mni.yaml > /tmp/syn_t1_to_mni.yaml
printf "pipeline\tbuild\trun\twall_s\ttotal_s\treading_s\tregistration_s\twriting_s\tsyn_stage_s\tcost_before\tfinal_cost\n" \
  > "$OUT/runs.tsv"
for run in $(seq 1 "$RUNS"); do
  for build in before after; do
    if [ $build = before ]; then exe=$B/data/before/bin/regpipe; plugins="$B/data/before/plugins"; else exe=$B/bin/regpipe; plugins="$B/plugins"; fi
    for pipeline in speed mni; do
      dir=/tmp/whole_$pipeline-$build-$run
      if [ $pipeline = speed ]; then
        args=(bench/syn/speed_pipeline.yaml --set "inputs.reference=$B/data/pair/fixed.nii.gz"
              --set "inputs.moving=$B/data/pair/moving.nii.gz" --set "outputs.dir=$dir")
      else
        args=(/tmp/syn_t1_to_mni.yaml --set "outputs.dir=$dir")
      fi
      t=$(now)
      log=/tmp/whole_$pipeline-$build-$run.log
      REGPIPE_PLUGIN_PATH=$plugins timeout 120 "$exe" run "${args[@]}" -v > "$log" 2>&1
      status=$?
      [ "$run" = 1 ] && grep -v "progress" "$log" > "$OUT/$pipeline-$build-$run.log"
      wall=$(awk -v a="$t" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }')
      report=$(ls "$dir"/*report.json 2>/dev/null | head -1)
      python3 - "$report" "$pipeline" "$build" "$run" "$wall" "$status" >> "$OUT/runs.tsv" <<'EOF'
import json, sys
report, pipeline, build, run, wall, status = sys.argv[1:]
if status != "0" or not report:
    print(f"{pipeline}\t{build}\t{run}\t{wall}\texit {status}")
    sys.exit()
r = json.load(open(report))
s = r["seconds"]
syn = [x for x in r["registration_stages"] if x.get("transform") == "syn"][0]
print("\t".join([pipeline, build, run, wall] + ["%.3f" % s[k] for k in ("total", "reading", "registration", "writing")]
                + ["%.3f" % syn["seconds"], "%.9f" % syn["cost_before"], "%.9f" % syn["final_cost"]]))
EOF
    done
  done
done
cat "$OUT/runs.tsv"
