#!/usr/bin/env bash
# Prepares the folder the device call carries for bench/syn/fireants_cross_subject.py:
#   DEST/whl/       fireants and nibabel wheels (pure Python; the device has torch, numpy, scipy, tqdm)
#   DEST/SimpleITK.py  the reading stand-in from ../shared/tools/fireants (README there)
#   DEST/data/      MNI152_T1_2mm.nii.gz and T1_head_ext2.nii.gz (2.3 MB; DEST must be an
#                   ignored folder such as .device/ -- never commit data)
#   DEST/0GenericAffine.mat  the shared affine written by cross_subject.py (AFFINE)
# Usage (repo root):  bash bench/syn/prepare_fireants_device.sh [AFFINE] [DEST]
#   AFFINE default /tmp/regpipe_syn_bench/affine/0GenericAffine.mat, DEST default .device/fireants
set -euo pipefail
AFFINE=${1:-/tmp/regpipe_syn_bench/affine/0GenericAffine.mat}
DEST=${2:-.device/fireants}
SHARED=$(cd "$(dirname "$0")/../../../shared" && pwd)
mkdir -p "$DEST/whl" "$DEST/data"
if ! ls "$DEST"/whl/fireants-*.whl >/dev/null 2>&1; then
  python3 -m pip download -q --no-deps --only-binary=:all: -d "$DEST/whl" fireants==1.5.0 nibabel==5.4.2
fi
cp "$SHARED/tools/fireants/SimpleITK.py" "$DEST/"
cp "$SHARED/data/MNI152_T1_2mm.nii.gz" "$SHARED/data/T1_head_ext2.nii.gz" "$DEST/data/"
cp "$AFFINE" "$DEST/0GenericAffine.mat"
TOP=$(git rev-parse --show-toplevel)
case "$(realpath "$DEST")" in
  "$TOP"/*) git check-ignore -q "$DEST" || { echo "ERROR: $DEST is not ignored by git; use .device/" >&2; exit 1; } ;;
esac
du -sh "$DEST"
