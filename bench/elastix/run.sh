#!/usr/bin/env bash
# elastix 5.0 against regpipe's CPU path on the known-transform cases (issue 5's comparison).
#
#   bench/elastix/run.sh DATA_DIR WORK_DIR [REGPIPE] [CASE...]
#
# DATA_DIR: the shared data (chris_t1, chris_PD). WORK_DIR: cases and results (outside the
# repository). REGPIPE: the regpipe binary (default build-elastix/bin/regpipe), with its
# plugins found through the build tree. CASE: a subset of the case names (default all).
# Each tool runs each case RUNS times (default 3) with THREADS threads (default: all cores);
# the table gives the median wall-clock seconds and the mean displacement error (mm, regpipe's
# metric over the reference head) against the truth, or against elastix's result for the
# case without a truth (pd_t1). Markdown on stdout; logs and transforms under WORK_DIR.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[[ $# -ge 2 ]] || { echo "usage: run.sh DATA_DIR WORK_DIR [REGPIPE] [CASE...]" >&2; exit 2; }
data=$1 work=$2 regpipe=${3:-$here/../../build-elastix/bin/regpipe}
shift $(( $# >= 3 ? 3 : 2 ))
runs=${RUNS:-3} threads=${THREADS:-$(nproc)}
command -v elastix >/dev/null || { echo "run.sh: elastix not found (apt-get install elastix)" >&2; exit 2; }
[[ -x $regpipe ]] || { echo "run.sh: $regpipe is not an executable regpipe" >&2; exit 2; }

python3 "$here/make_cases.py" "$data" "$work/cases" >&2
"$regpipe" phantom "$work/cases/phantom" >/dev/null
cases=("$@")
[[ ${#cases[@]} -gt 0 ]] || cases=(t1_shift t1_rot10 synth_rot10 t1_rot45 synth_rot45 phantom pd_t1)

# The regpipe pipelines: FLIRT's schedule and search with cpu.cr (examples/flirt_cr.yaml),
# and the built-in example's Powell pipeline (regpipe phantom) on the same levels.
pipeline() {  # case_dir optimizer bins out_dir
  local levels="[8, 4, 2, 1]"
  [[ $(basename "$1") == phantom ]] && levels="[8, 4, 3]"  # the phantom's own voxel is 3 mm
  cat <<YAML
inputs: {reference: $1/reference.nii.gz, moving: $1/moving.nii.gz}
registration:
  dof: 12
  levels_mm: $levels
  cost: {plugin: cpu.cr, params: {bins: $3, threads: $threads}}
  optimizer: {plugin: $2}
outputs: {dir: $4, registered_image: false}
YAML
  # regpipe's own error in its report, a cross-check of error_mm.py's.
  [[ -f $1/truth_world.txt ]] && echo "evaluation: {truth: $1/truth_world.txt}"
  return 0
}

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

timed() {  # log command...: wall-clock seconds of one run
  local start end
  start=$(date +%s.%N)
  "${@:2}" >"$1" 2>&1 || { echo "run.sh: failed, see $1" >&2; return 1; }
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}

error_against() {  # case_dir found_transform [other_transform]
  local truth=${3:-$1/truth_world.txt}
  python3 "$here/error_mm.py" "$1/reference.nii.gz" "$2" "$truth"
}

echo "| case | elastix s | elastix error mm | regpipe flirt s | flirt error mm | regpipe powell s | powell error mm | load (1 min) |"
echo "|---|---|---|---|---|---|---|---|"
for name in "${cases[@]}"; do
  c=$work/cases/$name r=$work/results/$name
  mkdir -p "$r"
  declare -A secs=()
  for tool in elastix flirt powell; do
    times=()
    for i in $(seq "$runs"); do
      out=$r/$tool.$i
      rm -rf "$out" && mkdir -p "$out"
      case $tool in
        elastix) times+=("$(timed "$out/log.txt" elastix -f "$c/reference.nii.gz" -m "$c/moving.nii.gz" \
                   -p "$here/affine_mattes.txt" -out "$out" -threads "$threads")")
                 cp "$out/TransformParameters.0.txt" "$r/elastix.txt" ;;
        flirt|powell)
          bins=256; [[ $tool == powell ]] && bins=64
          pipeline "$c" "optim.$tool" "$bins" "$out" >"$out/pipeline.yaml"
          times+=("$(timed "$out/log.txt" "$regpipe" run "$out/pipeline.yaml")")
          cp "$out/transform_world.txt" "$r/$tool.txt" ;;
      esac
    done
    secs[$tool]=$(printf '%s\n' "${times[@]}" | median)
    printf '%s %s\n' "$tool" "${times[*]}" >"$r/$tool.seconds"
  done
  if [[ -f $c/truth_world.txt ]]; then
    e=$(error_against "$c" "$r/elastix.txt"); f=$(error_against "$c" "$r/flirt.txt")
    p=$(error_against "$c" "$r/powell.txt")
  else  # no truth: distances to elastix's result
    e="(none)"; f="$(error_against "$c" "$r/flirt.txt" "$r/elastix.txt") from elastix"
    p="$(error_against "$c" "$r/powell.txt" "$r/elastix.txt") from elastix"
  fi
  load=$(cut -d' ' -f1 /proc/loadavg)
  printf '| %s | %.2f | %s | %.2f | %s | %.2f | %s | %s |\n' "$name" "${secs[elastix]}" "$e" \
    "${secs[flirt]}" "$f" "${secs[powell]}" "$p" "$load"
done
