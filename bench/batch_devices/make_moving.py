#!/usr/bin/env python3
"""Moving images for the multi-device batch benchmark: chris_PD as it is and turned in its
header by 10 and 25 degrees about its centre (three different starts for the search), written
to OUT_DIR. The benchmark cycles them to make a batch of any size.

    python3 bench/batch_devices/make_moving.py ../shared/data/chris_PD.nii.gz OUT_DIR
"""
import sys
from pathlib import Path

import nibabel as nib
import numpy as np


def turned(image, degrees, axis):
    """The image with its world frame turned about its centre: the data are unchanged."""
    a = np.radians(degrees)
    c, s = np.cos(a), np.sin(a)
    i, j = [k for k in range(3) if k != axis]
    r = np.eye(4)
    r[i, i], r[i, j], r[j, i], r[j, j] = c, -s, s, c
    centre = image.affine @ np.append((np.array(image.shape[:3]) - 1) / 2.0, 1.0)
    shift = np.eye(4)
    shift[:3, 3] = centre[:3]
    affine = shift @ r @ np.linalg.inv(shift) @ image.affine
    out = nib.Nifti1Image(np.asanyarray(image.dataobj), affine, image.header)
    out.set_qform(affine, code=1)
    out.set_sform(affine, code=1)
    return out


def main():
    source, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
    out_dir.mkdir(parents=True, exist_ok=True)
    image = nib.load(source)
    nib.save(image, out_dir / "m0.nii.gz")
    nib.save(turned(image, 10.0, 2), out_dir / "m1.nii.gz")
    nib.save(turned(image, 25.0, 0), out_dir / "m2.nii.gz")


if __name__ == "__main__":
    main()
