#!/usr/bin/env bash
# One run of regpipe's FLIRT pipeline per case with settings changed, for accuracy (one run
# is enough: the pipeline is deterministic) and a first look at the time (one run, not
# interleaved with elastix: run.sh times tools against each other).
#
#   bench/elastix/variant.sh WORK_DIR REGPIPE TAG [--set KEY=VALUE ...]
#   bench/elastix/variant.sh /tmp/c9 build/bin/regpipe last125 \
#     --set "registration.levels_mm=[8, 4, 2, 1.25]" \
#     --set registration.optimizer.params.final_tolerance_voxels=0.005
#
# WORK_DIR: a run.sh work folder; every case of it with a FLIRT pipeline (results/CASE/
# flirt.1/pipeline.yaml, written by run.sh) runs again with the --set overrides, outputs in
# WORK_DIR/variants/TAG/CASE. Markdown on stdout: seconds, the error in mm against the truth
# (against elastix's result where there is none and run.sh ran elastix), evaluations.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[[ $# -ge 3 ]] || { echo "usage: variant.sh WORK_DIR REGPIPE TAG [--set KEY=VALUE ...]" >&2; exit 2; }
work=$1 regpipe=$2 tag=$3
shift 3
[[ -x $regpipe ]] || { echo "variant.sh: $regpipe is not an executable regpipe" >&2; exit 2; }

echo "| case | $tag s | $tag error mm | evaluations |"
echo "|---|---|---|---|"
for pipeline in "$work"/results/*/flirt.1/pipeline.yaml; do
  [[ -f $pipeline ]] || { echo "variant.sh: no run.sh FLIRT results under $work/results" >&2; exit 2; }
  r=$(dirname "$(dirname "$pipeline")") name=$(basename "$(dirname "$(dirname "$pipeline")")")
  c=$work/cases/$name out=$work/variants/$tag/$name
  rm -rf "$out" && mkdir -p "$out"
  start=$(date +%s.%N)
  "$regpipe" run "$pipeline" "$@" --set "outputs.dir=$out" >"$out/log.txt" 2>&1 ||
    { echo "variant.sh: $name failed, see $out/log.txt" >&2; exit 1; }
  end=$(date +%s.%N)
  if [[ -f $c/truth_world.txt ]]; then
    e=$(python3 "$here/error_mm.py" "$c/reference.nii.gz" "$out/transform_world.txt" "$c/truth_world.txt")
  elif [[ -f $r/elastix.txt ]]; then
    e="$(python3 "$here/error_mm.py" "$c/reference.nii.gz" "$out/transform_world.txt" "$r/elastix.txt") from elastix"
  else
    e="(none)"
  fi
  evaluations=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['result']['evaluations'])" "$out/report.json")
  echo "| $name | $(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}') | $e | $evaluations |"
done
