#!/usr/bin/env python3
"""Issue 15's five header starts: copies of chris_PD with their headers moved.

    header_starts.py DATA_DIR OUT_DIR

Writes OUT_DIR/NAME.nii.gz (chris_PD's voxels, the header moved by a world change G) and
NAME.txt (G as regpipe's world matrix file) for NAME in identity, rigid5, rigid15, rigid40
(rotations of 5, 15 and 40 degrees about chris_PD's centre of mass, then a shift) and affine9
(an 8 degree rotation and shift after scales of 1.04, 0.97, 1.02 about the centre: 9
parameters). Copy NAME's result M undone by its change, inv(G) M, estimates the same
chris_t1 -> chris_PD transform as every other copy's (starts_distance.py).
"""
import os
import sys

import nibabel
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "elastix"))
from transforms import centre_of_mass, rigid_about, save_header_changed  # noqa: E402

STARTS = ("identity", "rigid5", "rigid15", "rigid40", "affine9")


def changes(centre):
    scale = np.eye(4)
    scale[:3, :3] = np.diag([1.04, 0.97, 1.02])
    scale[:3, 3] = centre - scale[:3, :3] @ centre
    return {
        "identity": np.eye(4),
        "rigid5": rigid_about((0.3, 1, -0.4), 5.0, centre, (-3.0, 4.0, 2.0)),
        "rigid15": rigid_about((-1, 0.5, 1), 15.0, centre, (4.0, 2.0, -6.0)),
        "rigid40": rigid_about((1, 1, 0.5), 40.0, centre, (10.0, -10.0, 5.0)),
        "affine9": rigid_about((0.2, -0.6, 1), 8.0, centre, (-5.0, 3.0, 2.0)) @ scale,
    }


def main(data_dir, out_dir):
    image = nibabel.load(os.path.join(data_dir, "chris_PD.nii.gz"))
    os.makedirs(out_dir, exist_ok=True)
    for name, change in changes(centre_of_mass(image)).items():
        save_header_changed(image, change, out_dir, name)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: header_starts.py DATA_DIR OUT_DIR")
    main(sys.argv[1], sys.argv[2])
