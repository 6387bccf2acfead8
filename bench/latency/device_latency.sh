#!/usr/bin/env bash
# Whole-command latency of `regpipe run` against what any CUDA process pays (issue 17).
#
#   bash bench/latency/device_latency.sh BUNDLE [ROUNDS] [GAP_S]
#
# On the device, from the repository root, BUNDLE a device-bundle.sh folder (lib/ unpacked)
# whose data/ holds chris_t1.nii.gz and chris_PD.nii.gz. Prints, ROUNDS times each (default 5):
# cuda_floor's phases and its process wall time; `regpipe --version` and `regpipe plugins`
# (process start, loading every plugin library); and `regpipe run examples/flirt_cr.yaml` with
# cuda.cr without the registered image, with it (uint8, the moving image's type) and as
# float32: the process wall time and regpipe's own summary (its total counts from the
# pipeline's start); then the same three through `regpipe serve` (REGPIPE_SERVER: processes
# with CUDA started ahead, docs/serve.md), labelled "served ...", back to back; with GAP_S > 0
# also "served after GAP_S s ..." rounds, each command GAP_S seconds after the previous one (as a
# script with other work between its commands: the server's replacement process has started
# CUDA by then). Medians by bench/latency/table.py.
set -euo pipefail
bundle=$1 rounds=${2:-5} gap=${3:-0}
here=$(cd "$(dirname "$0")" && pwd)
bash "$bundle/check.sh" >/dev/null
source "$bundle/env.sh"
data=$(cd "$bundle/data" && pwd)
nvidia-smi --query-gpu=name,persistence_mode,driver_version --format=csv,noheader | sed 's/^/device: /'
nvcc -O2 -arch=sm_90 -o /tmp/cuda_floor "$here/cuda_floor.cu" -lcuda
wall() { /usr/bin/time -f "wall %e" "$@" 2>&1 >/dev/null | tail -1; }
for i in $(seq "$rounds"); do
  echo "cuda_floor: $(/tmp/cuda_floor) $(wall /tmp/cuda_floor)"
  echo "cuda_floor reset: $(/tmp/cuda_floor reset)"
  echo "regpipe --version: $(wall regpipe --version)"
  echo "regpipe plugins: $(wall regpipe plugins)"
done
run() {  # label, then --set options
  local label=$1; shift
  local out
  out=$( { /usr/bin/time -f "wall %e" regpipe run examples/flirt_cr.yaml \
      --set inputs.reference="$data/chris_t1.nii.gz" --set inputs.moving="$data/chris_PD.nii.gz" \
      --set registration.cost.plugin=cuda.cr --set outputs.dir=/tmp/latency_out "$@"; } 2>&1 |
      grep -E "^total|^wall" | tr '\n' ' ')
  echo "run $label: $out"
}
runs() {  # label prefix, seconds to wait before each command
  local pause=${2:-0}
  for i in $(seq "$rounds"); do
    sleep "$pause"; run "${1}without" --set outputs.registered_image=false
    sleep "$pause"; run "${1}uint8"
    sleep "$pause"; run "${1}float32" --set outputs.datatype=float32
  done
}
runs ""
socket=/tmp/regpipe_latency.sock
regpipe serve --socket "$socket" --ready 2 2>/tmp/serve.log &
server=$!
while [ ! -S "$socket" ]; do sleep 0.05; done
sleep 2  # both waiting processes started
export REGPIPE_SERVER=$socket
runs "served "
if [ "$gap" != 0 ]; then runs "served after ${gap} s, " "$gap"; fi
unset REGPIPE_SERVER
kill -TERM "$server"  # not INT: a background job of a script ignores SIGINT
wait "$server"
