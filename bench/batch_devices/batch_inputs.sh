# Sourced by the batch_devices scripts, from the repository root on the device.
#   note_machine DIR   DIR made, with the GPUs (gpus.txt) and the host cores (cores.txt)
#   make_batch W N D   W/in/s01..sN: links cycling D/moving/m0..m2; W/pipeline.yaml:
#                      examples/flirt_cr.yaml over them to D/chris_t1.nii.gz, outputs in W/out
#   await_server SOCKET PID
#                      waits until `regpipe serve` (process PID) listens on SOCKET; exits
#                      the script when that process ended instead
#   batch_run R NAME OUT COMMAND...
#                      COMMAND (a batch writing OUT, removed first) with the GPUs sampled by
#                      nvidia-smi every 250 ms into R/NAME.util.csv, its output in R/NAME.log,
#                      its batch report copied to R/NAME.json; prints "NAME rc=RC wall_s=S"
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
await_server() {
  until [[ -S $1 ]]; do
    kill -0 "$2" 2>/dev/null || { echo "regpipe serve for $1 ended before it listened" >&2; exit 1; }
    sleep 0.05
  done
}
batch_run() {
  local r=$1 name=$2 out=$3; shift 3
  rm -rf "$out"
  nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv,noheader -lms 250 \
    > "$r/$name.util.csv" 2>/dev/null &
  local sampler=$! t0 t1 rc
  t0=$(date +%s.%N)
  "$@" > "$r/$name.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  kill $sampler 2>/dev/null; wait $sampler 2>/dev/null
  cp "$out/batch_report.json" "$r/$name.json" 2>/dev/null
  echo "$name rc=$rc wall_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')"
}
