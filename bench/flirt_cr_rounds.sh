# Sourced by the device scripts that time `regpipe run examples/flirt_cr.yaml` with cuda.cr
# (chris_PD -> chris_t1 from BUNDLE/data, no registered image, -v) under several variants.
# flirt_cr_rounds BUNDLE OUT REPEATS VARIANT... runs REPEATS + 1 rounds (round 0 the warm-up),
# the variants interleaved within each round, into OUT/runs/<variant>_<round> (log, report,
# transform), then packs them as OUT/runs.tar.gz. The caller defines `variant_args VARIANT`,
# which sets the array `extra` to that variant's arguments.
flirt_cr_rounds() {
  local bundle=$1 out=$2 repeats=$3 round variant dir
  shift 3
  local common=(--set registration.cost.plugin=cuda.cr --set outputs.registered_image=false
                --set "inputs.reference=$bundle/data/chris_t1.nii.gz"
                --set "inputs.moving=$bundle/data/chris_PD.nii.gz" -v)
  for round in $(seq 0 "$repeats"); do
    for variant in "$@"; do
      extra=()
      variant_args "$variant"
      dir=$out/runs/${variant}_$round
      mkdir -p "$dir"
      regpipe run examples/flirt_cr.yaml "${common[@]}" "${extra[@]}" --set "outputs.dir=$dir" \
        > "$dir/log.txt" 2>&1
      rm -f "$dir"/*.tfm "$dir"/*.txt.tmp
    done
  done
  tar -C "$out" -czf "$out/runs.tar.gz" runs
  rm -rf "$out/runs"
}
