#!/usr/bin/env python3
"""A smooth head weight for an image: its head mask blurred by a Gaussian (issue 15).

    soft_head_weight.py IMAGE SIGMA_MM OUT [HEADER_FROM]

The head mask is regpipe's foreground (above a fifth of the 99th percentile,
bench/elastix/transforms.py's foreground_threshold) with its enclosed holes filled; the
Gaussian's standard deviation is SIGMA_MM in every direction (0: the binary mask). OUT is a
float32 weight image for `inputs.reference_weight` / `inputs.moving_weight`, on IMAGE's grid,
with IMAGE's header or, when given, HEADER_FROM's (a header-changed copy of IMAGE with the
same voxels, as header_starts.py writes).
"""
import os
import sys

import nibabel
import numpy as np
from scipy import ndimage

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "elastix"))
from transforms import foreground_threshold  # noqa: E402


def soft_head_weight(image, sigma_mm):
    data = np.asarray(image.dataobj, np.float32)
    head = ndimage.binary_fill_holes(data > foreground_threshold(data)).astype(np.float32)
    if sigma_mm <= 0:
        return head
    return ndimage.gaussian_filter(head, sigma_mm / np.array(image.header.get_zooms()[:3]))


def main(image_path, sigma_mm, out_path, header_path=None):
    image = nibabel.load(image_path)
    header_image = nibabel.load(header_path) if header_path else image
    if header_image.shape[:3] != image.shape[:3]:
        sys.exit(f"soft_head_weight.py: {header_path} is not on {image_path}'s grid")
    weight = nibabel.Nifti1Image(soft_head_weight(image, sigma_mm), header_image.affine)
    weight.set_qform(header_image.affine, code=1)
    weight.set_sform(header_image.affine, code=1)
    nibabel.save(weight, out_path)


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit("usage: soft_head_weight.py IMAGE SIGMA_MM OUT [HEADER_FROM]")
    try:
        main(sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4] if len(sys.argv) == 5 else None)
    except (OSError, ValueError) as e:
        sys.exit(f"soft_head_weight.py: {e}")
