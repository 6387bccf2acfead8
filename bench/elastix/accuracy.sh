#!/usr/bin/env bash
# Accuracy only, on the known-transform cases: elastix with several random seeds (its sampler
# draws 2000 new coordinates every iteration, so its error varies with the seed) against
# regpipe's FLIRT pipeline with cpu.cr in four settings. One run each (all deterministic for
# a given seed); no timing (run.sh times the tools).
#
#   bench/elastix/accuracy.sh DATA_DIR WORK_DIR [REGPIPE] [CASE...]
#
# DATA_DIR, WORK_DIR, REGPIPE as in run.sh. SEEDS: elastix's RandomSeed values (default
# "121212 1 2 3 4 5 6 7"; 121212 is elastix's own default). CASE: default the cases with a
# truth at 5-20 degrees (header changes, and the two whose head was moved instead) and the
# phantom (`regpipe phantom`, levels 8/4/3 mm). Markdown on
# stdout: elastix's median error and its range over the seeds, then regpipe's error with
# `registration.decouple_grids` false and true, each with the default final tolerance (0.02
# voxel) and with `final_tolerance_voxels: 0.005`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[[ $# -ge 2 ]] || { echo "usage: accuracy.sh DATA_DIR WORK_DIR [REGPIPE] [CASE...]" >&2; exit 2; }
data=$1 work=$2 regpipe=${3:-$here/../../build-elastix/bin/regpipe}
shift $(( $# >= 3 ? 3 : 2 ))
seeds=${SEEDS:-121212 1 2 3 4 5 6 7} threads=${THREADS:-$(nproc)}
command -v elastix >/dev/null || { echo "accuracy.sh: elastix not found (apt-get install elastix)" >&2; exit 2; }
[[ -x $regpipe ]] || { echo "accuracy.sh: $regpipe is not an executable regpipe" >&2; exit 2; }

python3 "$here/make_cases.py" "$data" "$work/cases" >&2
"$regpipe" phantom "$work/cases/phantom" >/dev/null
cases=("$@")
[[ ${#cases[@]} -gt 0 ]] || cases=(t1_rot5 synth_rot5 t1_rot10 synth_rot10 t1_rot15 synth_rot15 t1_rot20 synth_rot20
                                    t1_resampled_rot10 synth_resampled_rot10 phantom)

error_of() { python3 "$here/error_mm.py" "$1/reference.nii.gz" "$2" "$1/truth_world.txt"; }

regpipe_error() {  # case_dir out_dir [--set ...]: regpipe's error with the FLIRT pipeline
  local c=$1 out=$2 levels="[8, 4, 2, 1]"; shift 2
  [[ $(basename "$c") == phantom ]] && levels="[8, 4, 3]"  # the phantom's own voxel is 3 mm
  mkdir -p "$out"
  cat >"$out/pipeline.yaml" <<YAML
inputs: {reference: $c/reference.nii.gz, moving: $c/moving.nii.gz}
registration:
  dof: 12
  levels_mm: $levels
  cost: {plugin: cpu.cr, params: {bins: 256, threads: $threads}}
  optimizer: {plugin: optim.flirt}
outputs: {dir: $out, registered_image: false}
YAML
  "$regpipe" run "$out/pipeline.yaml" "$@" >"$out/log.txt" 2>&1 || { echo "accuracy.sh: failed, see $out/log.txt" >&2; return 1; }
  error_of "$c" "$out/transform_world.txt"
}

echo "| case | elastix median mm | elastix min-max mm (seeds ${seeds// /, }) | regpipe aligned grids mm | aligned, tolerance 0.005 mm | decoupled grids mm | decoupled, tolerance 0.005 mm |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for name in "${cases[@]}"; do
  c=$work/cases/$name r=$work/accuracy/$name
  errors=()
  for seed in $seeds; do
    out=$r/elastix.$seed
    rm -rf "$out" && mkdir -p "$out"
    { cat "$here/affine_mattes.txt"; echo "(RandomSeed $seed)"; } >"$out/parameters.txt"
    elastix -f "$c/reference.nii.gz" -m "$c/moving.nii.gz" -p "$out/parameters.txt" -out "$out" \
      -threads "$threads" >"$out/log.txt" 2>&1 || { echo "accuracy.sh: elastix failed, see $out/log.txt" >&2; exit 1; }
    errors+=("$(error_of "$c" "$out/TransformParameters.0.txt")")
  done
  stats=$(printf '%s\n' "${errors[@]}" | sort -g | awk '{v[NR]=$1} END {
    m = NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2; printf "%.4f %.4f-%.4f", m, v[1], v[NR]}')
  tol="--set registration.optimizer.params.final_tolerance_voxels=0.005"
  row=()
  for grids in false true; do
    row+=("$(regpipe_error "$c" "$r/regpipe_decouple_$grids" --set registration.decouple_grids=$grids)")
    row+=("$(regpipe_error "$c" "$r/regpipe_decouple_${grids}_tol" --set registration.decouple_grids=$grids $tol)")
  done
  printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$name" "${stats% *}" "${stats#* }" "${row[@]}"
done
