#!/usr/bin/env bash
# Typical FLIRT command lines, run unchanged by `regpipe flirt` on the built-in phantom (no
# data outside the checkout): 12 DOF with FLIRT's defaults (as for T1 -> MNI), 6 DOF with
# mutual information (as for EPI -> T1), and a matrix applied to an image with -applyxfm.
# usage: examples/flirt/flirt_examples.sh [OUTPUT_DIR]   (default: out/flirt_examples)
# With real data the same lines read, e.g.:
#   regpipe flirt -in T1 -ref MNI152_T1_2mm -omat t1_to_mni.mat -out t1_in_mni
#   regpipe flirt -in epi_mean -ref T1 -dof 6 -cost mutualinfo -omat epi_to_t1.mat
#   regpipe flirt -in labels -ref MNI152_T1_2mm -applyxfm -init t1_to_mni.mat -interp nearestneighbour -out labels_in_mni
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
regpipe=${REGPIPE:-$root/build/bin/regpipe}
out=${1:-out/flirt_examples}
mkdir -p "$out"
cd "$out"
# reference.nii.gz (T1-like) and moving.nii.gz (T2-like, its header turned 12 degrees and moved 6 mm)
"$regpipe" phantom . --size 64 --voxel-mm 3 --angle-deg 12 --shift-mm 6 > /dev/null
# -minsampling 3: the phantom's voxels are 3 mm, so FLIRT's 2 and 1 mm levels would add nothing
"$regpipe" flirt -in moving -ref reference -omat moving_to_reference.mat -out moving_in_reference -minsampling 3
"$regpipe" flirt -in moving -ref reference -dof 6 -cost mutualinfo -omat rigid.mat -minsampling 3
"$regpipe" flirt -in moving -ref reference -applyxfm -init moving_to_reference.mat -interp nearestneighbour -out applied
echo "flirt examples: wrote $(ls moving_to_reference.mat moving_in_reference.nii.gz rigid.mat applied.nii.gz | tr '\n' ' ')in $out"
