#!/usr/bin/env bash
# elastix 5.0 against regpipe's CPU path on the known-transform cases (issue 5's comparison).
#
#   bench/elastix/run.sh DATA_DIR WORK_DIR [REGPIPE] [CASE...]
#
# DATA_DIR: the shared data (chris_t1, chris_PD). WORK_DIR: cases and results (outside the
# repository). REGPIPE: the regpipe binary (default build-elastix/bin/regpipe), with its
# plugins found through the build tree. CASE: a subset of the case names (default all).
# Each tool runs each case RUNS times (default 3) with THREADS threads (default: all cores),
# the tools interleaved run by run (elastix, then each regpipe, then again), so that a load
# from other work falls on all of them alike; the table gives the median wall-clock seconds
# (and the median CPU use, %) and the mean displacement error (mm, regpipe's metric over the
# reference head) against the truth, or against elastix's result for the case without a truth
# (pd_t1). TOOLS picks the tools (default "elastix flirt powell"); with BEFORE=<another
# regpipe binary> the tool "before" is that binary's FLIRT pipeline, for a before/after
# comparison in one run (TOOLS="elastix before flirt"). REGPIPE_COST (default cpu.cr) is the
# FLIRT pipelines' cost: cuda.cr on a GPU machine. The tool "served" is the FLIRT pipeline run
# through `regpipe serve` (started here with REGPIPE's plugins; docs/serve.md), as a script of
# one command per subject runs it with REGPIPE_SERVER set; "before-served" the same through a
# server of BEFORE's; each served command SERVED_GAP seconds (default 1) after the tool
# before it. FLIRT_LEVELS and BEFORE_LEVELS (YAML lists, default "[8, 4, 2, 1]") set the
# levels of the regpipe tools and of the "before" ones (the phantom keeps [8, 4, 3]);
# FLIRT_PARAMS and BEFORE_PARAMS (YAML maps, e.g. "{final_tolerance_voxels: 0.005}") the
# optim.flirt params of the FLIRT tools and of the "before" ones. Markdown on stdout; logs and
# transforms under WORK_DIR. Without /usr/bin/time the CPU column is "-"; a served command's
# CPU is its client's only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[[ $# -ge 2 ]] || { echo "usage: run.sh DATA_DIR WORK_DIR [REGPIPE] [CASE...]" >&2; exit 2; }
data=$1 work=$2 regpipe=${3:-$here/../../build-elastix/bin/regpipe}
shift $(( $# >= 3 ? 3 : 2 ))
runs=${RUNS:-3} threads=${THREADS:-$(nproc)}
read -r -a tools <<<"${TOOLS:-elastix flirt powell}"
cost=${REGPIPE_COST:-cpu.cr}
before=${BEFORE:-}
[[ " ${tools[*]} " != *" elastix "* ]] || command -v elastix >/dev/null ||
  { echo "run.sh: elastix not found (apt-get install elastix)" >&2; exit 2; }
[[ -x $regpipe ]] || { echo "run.sh: $regpipe is not an executable regpipe" >&2; exit 2; }
[[ " ${tools[*]} " != *" before"* || -x $before ]] ||
  { echo "run.sh: the tool 'before' needs BEFORE=<an executable regpipe>" >&2; exit 2; }

python3 "$here/make_cases.py" "$data" "$work/cases" "$@" >&2
"$regpipe" phantom "$work/cases/phantom" >/dev/null
cases=("$@")
[[ ${#cases[@]} -gt 0 ]] || cases=(t1_shift t1_rot10 synth_rot10 t1_rot45 synth_rot45 phantom pd_t1)

# The regpipe pipelines: FLIRT's schedule and search with cpu.cr (examples/flirt_cr.yaml),
# and the built-in example's Powell pipeline (regpipe phantom) on the same levels.
pipeline() {  # case_dir optimizer bins out_dir [levels] [optimizer params]
  local levels=${5:-[8, 4, 2, 1]} params=${6:+, params: $6}
  [[ $(basename "$1") == phantom ]] && levels="[8, 4, 3]"  # the phantom's own voxel is 3 mm
  cat <<YAML
inputs: {reference: $1/reference.nii.gz, moving: $1/moving.nii.gz}
registration:
  dof: 12
  levels_mm: $levels
  cost: {plugin: $cost, params: {bins: $3$([[ $cost == cpu.* ]] && echo ", threads: $threads")}}
  optimizer: {plugin: $2$params}
outputs: {dir: $4, registered_image: false}
YAML
  # regpipe's own error in its report, a cross-check of error_mm.py's.
  [[ -f $1/truth_world.txt ]] && echo "evaluation: {truth: $1/truth_world.txt}"
  return 0
}

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

timed() {  # log command...: "wall-clock-seconds cpu-percent" of one run
  local start end
  local timer=(/usr/bin/time -f "%P" -o "$1.cpu")
  [[ -x /usr/bin/time ]] || { timer=(); echo "-" >"$1.cpu"; }
  start=$(date +%s.%N)
  "${timer[@]}" "${@:2}" >"$1" 2>&1 || { echo "run.sh: failed, see $1" >&2; return 1; }
  end=$(date +%s.%N)
  echo "$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.3f", b - a}') $(tr -d '%' <"$1.cpu")"
}

error_against() {  # case_dir found_transform [other_transform]
  local truth=${3:-$1/truth_world.txt}
  python3 "$here/error_mm.py" "$1/reference.nii.gz" "$2" "$truth"
}

declare -A socket=()
servers=()
start_server() {  # tool binary
  socket[$1]=$work/$1.sock
  "$2" serve --socket "${socket[$1]}" --ready 2 2>"$work/$1.log" &
  servers+=($!)
  until [[ -S ${socket[$1]} ]]; do kill -0 $! || { echo "run.sh: regpipe serve failed, see $work/$1.log" >&2; exit 1; }; sleep 0.05; done
}
[[ " ${tools[*]} " == *" served "* ]] && start_server served "$regpipe"
[[ " ${tools[*]} " == *" before-served "* ]] && start_server before-served "$before"
if [[ ${#servers[@]} -gt 0 ]]; then
  trap 'kill -TERM ${servers[*]}; wait ${servers[*]}' EXIT  # TERM: a background job ignores SIGINT
  sleep 2  # their waiting processes started
fi

header="| case |" rule="|---|"
for tool in "${tools[@]}"; do header+=" $tool s | $tool CPU % | $tool error mm |"; rule+="---|---|---|"; done
echo "$header load (1 min) |"
echo "$rule---|"
for name in "${cases[@]}"; do
  c=$work/cases/$name r=$work/results/$name
  mkdir -p "$r"
  declare -A secs=() cpus=()
  for i in $(seq "$runs"); do
    for tool in "${tools[@]}"; do
      out=$r/$tool.$i
      rm -rf "$out" && mkdir -p "$out"
      case $tool in
        elastix) t=$(timed "$out/log.txt" elastix -f "$c/reference.nii.gz" -m "$c/moving.nii.gz" \
                   -p "$here/affine_mattes.txt" -out "$out" -threads "$threads")
                 cp "$out/TransformParameters.0.txt" "$r/elastix.txt" ;;
        flirt|powell|before|served|before-served)
          bins=256 optimizer=optim.flirt binary=$regpipe through=()
          [[ $tool == powell ]] && bins=64 optimizer=optim.powell
          [[ $tool == before* ]] && binary=$before
          # A pause before a served command, as a script's other work between its commands
          # would make: the server that a previous tool used may still be starting a
          # replacement process (CUDA), which would slow this one's GPU work.
          [[ $tool == *served ]] && through=(env REGPIPE_SERVER="${socket[$tool]}") && sleep "${SERVED_GAP:-1}"
          levels=${FLIRT_LEVELS:-} params=${FLIRT_PARAMS:-}
          [[ $tool == before* ]] && levels=${BEFORE_LEVELS:-} params=${BEFORE_PARAMS:-}
          [[ $tool == powell ]] && params=""
          pipeline "$c" "$optimizer" "$bins" "$out" "$levels" "$params" >"$out/pipeline.yaml"
          t=$(timed "$out/log.txt" "${through[@]}" "$binary" run "$out/pipeline.yaml")
          cp "$out/transform_world.txt" "$r/$tool.txt" ;;
      esac
      secs[$tool]+="${t% *} " cpus[$tool]+="${t#* } "
    done
  done
  row="| $name |"
  for tool in "${tools[@]}"; do
    printf '%s %s\n' "$tool" "${secs[$tool]}" >"$r/$tool.seconds"
    s=$(printf '%s\n' ${secs[$tool]} | median) p=$(printf '%s\n' ${cpus[$tool]} | median)
    if [[ $tool == elastix ]]; then
      e=$([[ -f $c/truth_world.txt ]] && error_against "$c" "$r/elastix.txt" || echo "(none)")
    elif [[ -f $c/truth_world.txt ]]; then
      e=$(error_against "$c" "$r/$tool.txt")
    elif [[ -f $r/elastix.txt ]]; then  # no truth: distance to elastix's result
      e="$(error_against "$c" "$r/$tool.txt" "$r/elastix.txt") from elastix"
    else
      e="(none)"
    fi
    row+=" $(printf '%.2f' "$s") | $p | $e |"
  done
  echo "$row $(cut -d' ' -f1 /proc/loadavg) |"
done
