# Sourced by the batch_devices scripts, from the repository root on the device.
#   note_machine DIR   DIR made, with the GPUs (gpus.txt) and the host cores (cores.txt)
#   make_batch W N D   W/in/s01..sN: links cycling D/moving/m0..m2; W/pipeline.yaml:
#                      examples/flirt_cr.yaml over them to D/chris_t1.nii.gz, outputs in W/out
note_machine() {
  mkdir -p "$1"
  nvidia-smi -L > "$1/gpus.txt" 2>&1
  nproc > "$1/cores.txt"
}
make_batch() {
  local w=$1 n=$2 d=$3 i
  rm -rf "$w"; mkdir -p "$w/in"
  for i in $(seq -w 1 "$n"); do ln -s "$d/moving/m$(( (10#$i - 1) % 3 )).nii.gz" "$w/in/s$i.nii.gz"; done
  sed -e "s#reference: .*#reference: $d/chris_t1.nii.gz#" -e "s#moving: .*#moving: $w/in/*.nii.gz#" \
      -e "s#dir: .*#dir: $w/out#" examples/flirt_cr.yaml > "$w/pipeline.yaml"
}
