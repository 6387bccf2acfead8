#!/usr/bin/env python3
"""Copies of one moving image with their headers moved by random rigid changes.

    header_changes.py MOVING OUT_DIR N [SEED]

Writes OUT_DIR/change_00.nii.gz (the image as it is) and change_01 .. change_N: the same voxels
with the header moved by a rigid change G (rotation of 2-20 degrees about a random axis through
the image's centre of mass, then a shift of up to 10 mm per axis), and each change as
change_XX.txt (regpipe's world matrix file form, like truth_world.txt). Registering every
copy to one reference must give the first result composed with G (consistency.py): no
resampling is involved, so what differs between the results is how the two images' grids
meet, which is what interpolation artefacts depend on.
"""
import os
import sys

import nibabel
import numpy as np

from transforms import centre_of_mass, rigid_about, save_header_changed


def main(moving_path, out_dir, count, seed):
    image = nibabel.load(moving_path)
    centre = centre_of_mass(image)
    rng = np.random.default_rng(seed)
    os.makedirs(out_dir, exist_ok=True)
    for i in range(count + 1):
        if i == 0:
            change = np.eye(4)
        else:
            axis = rng.normal(size=3)
            change = rigid_about(axis, rng.uniform(2.0, 20.0), centre, rng.uniform(-10.0, 10.0, 3))
        save_header_changed(image, change, out_dir, f"change_{i:02d}")
    print(f"wrote {count + 1} copies of {moving_path} to {out_dir}")


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit("usage: header_changes.py MOVING OUT_DIR N [SEED]")
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) == 5 else 1)
