#!/usr/bin/env python3
"""Writes the known-transform cases of regpipe's registration tests as image files.

    make_cases.py DATA_DIR OUT_DIR [CASE...]      # the named known-transform cases only

Each case is a folder with reference.nii.gz, moving.nii.gz and, where the truth is known,
truth_world.txt (regpipe's world matrix file: RAS, moving -> reference). As in
tests/registration/registration_fixture.hpp, the moving image is the reference (or a
synthetic second contrast of it) whose header is moved by a known rigid change G, so the
reference->moving truth is exactly G and nothing is resampled. The `*_resampled_*` cases
instead move the head, not the grid: chris_t1, cut to a box 12 voxels inside its field of
view (the reference of these cases), resampled through G (cubic B-spline) onto its own grid
widened by 40 voxels a side (so the moved head stays whole), the synthetic contrast and its
noise applied afterwards, as a second scan of a moved head would be. Their truth is G up to the resampling's error, and no grid coincides
with another at it (docs/flirt-search.md, "Decoupled level grids").
"""
import os
import sys

import nibabel
import numpy as np
import scipy.ndimage

from transforms import LPS_RAS_FLIP, centre_of_mass, rigid_about, voxel_to_lps, write_world_ras_forward

# name, moving contrast, rotation axis, angle (degrees), shift (mm, LPS). The rotation is about
# the reference's centre of mass. A header change unless the name says "resampled".
KNOWN_CASES = [
    # The conversion check: a pure header shift that elastix must return as it is.
    ("t1_shift", "same", (1, 0, 0), 0.0, (5.0, -3.0, 2.0)),
    # known_transform_test.cpp, (a) and (b): 10 degrees, 10.3 mm.
    ("t1_rot10", "same", (1, 1, 0.5), 10.0, (6.0, -7.0, 4.5)),
    ("synth_rot10", "synthetic", (1, 1, 0.5), 10.0, (6.0, -7.0, 4.5)),
    # More small changes about other axes, for the spread of both tools' errors (elastix.md).
    ("t1_rot5", "same", (0.3, 1, -0.4), 5.0, (-3.0, 4.0, 2.0)),
    ("synth_rot5", "synthetic", (0.3, 1, -0.4), 5.0, (-3.0, 4.0, 2.0)),
    ("t1_rot15", "same", (-1, 0.5, 1), 15.0, (4.0, 2.0, -6.0)),
    ("synth_rot15", "synthetic", (-1, 0.5, 1), 15.0, (4.0, 2.0, -6.0)),
    ("t1_rot20", "same", (0.2, -0.6, 1), 20.0, (-8.0, -5.0, 3.0)),
    ("synth_rot20", "synthetic", (0.2, -0.6, 1), 20.0, (-8.0, -5.0, 3.0)),
    # The head moved instead of the header: no grid coincidence at the truth.
    ("t1_resampled_rot10", "same", (1, 1, 0.5), 10.0, (6.0, -7.0, 4.5)),
    ("synth_resampled_rot10", "synthetic", (1, 1, 0.5), 10.0, (6.0, -7.0, 4.5)),
    # flirt_known_rotation_test.cpp, Rotation45: 45 degrees, 30 mm.
    ("t1_rot45", "same", (1, 1, 0.5), 45.0, (20.0, -20.0, 10.0)),
    ("synth_rot45", "synthetic", (1, 1, 0.5), 45.0, (20.0, -20.0, 10.0)),
]


def contrast_curve(u):
    """phantom.cpp's synthetic_contrast mapping: two Gaussian bumps on a ramp, g(0) = 0."""
    def f(x):
        return (np.exp(-0.5 * ((x - 0.45) / 0.12) ** 2) + 0.6 * np.exp(-0.5 * ((x - 0.9) / 0.08) ** 2)
                + 0.25 * x)
    return f(u) - f(0.0)


def synthetic_contrast(data, seed=7):
    """phantom.cpp's synthetic_contrast (same curve and noise level; numpy's noise stream)."""
    positive = np.sort(data[data > 0])
    scale = 1.0 / positive[int(0.995 * (positive.size - 1))] if positive.size else 1.0
    curve_to_range = 1000.0 / contrast_curve(np.linspace(0.0, 1.0, 1001)).max()
    u = np.clip(data * scale, 0.0, 1.0)
    noise = np.random.default_rng(seed).normal(0.0, 20.0, data.shape)
    return (contrast_curve(u) * curve_to_range + noise).astype(np.float32)


def inner_box(data, border=12):
    """The voxels with the outer `border` of every face set to 0."""
    box = np.zeros_like(data)
    inner = tuple(slice(border, n - border) for n in data.shape)
    box[inner] = data[inner]
    return box


def moved_head(image, data, change, margin=40):
    """The image's content moved by `change` (LPS world, reference -> moving), on its own grid
    widened by `margin` voxels on every side so that no part of the moved head leaves it:
    voxel u of the result (voxel -> LPS: A shifted by -margin voxels) is the image at voxel
    inv(A) inv(change) A' u, by cubic B-spline interpolation, 0 outside. Returns the voxels and
    the RAS affine of the widened grid."""
    a = voxel_to_lps(image)
    widened = a.copy()
    widened[:3, 3] = a[:3, 3] - a[:3, :3] @ np.full(3, float(margin))
    m = np.linalg.inv(a) @ np.linalg.inv(change) @ widened
    shape = tuple(n + 2 * margin for n in data.shape)
    moved = scipy.ndimage.affine_transform(data, m[:3, :3], offset=m[:3, 3], output_shape=shape, order=3,
                                           mode="constant", cval=0.0)
    # The spline's undershoot at edges: intensities stay >= 0.
    return np.clip(moved, 0.0, None).astype(np.float32), LPS_RAS_FLIP @ widened


def write_image(data, affine_ras, path):
    image = nibabel.Nifti1Image(data, affine_ras)
    image.set_qform(affine_ras, code=1)
    image.set_sform(affine_ras, code=1)
    nibabel.save(image, path)


def link(target, path):
    if os.path.lexists(path):
        os.remove(path)
    os.symlink(os.path.abspath(target), path)


def main(data_dir, out_dir, names):
    t1_path = os.path.join(data_dir, "chris_t1.nii.gz")
    t1 = nibabel.load(t1_path)
    t1_data = t1.get_fdata(dtype=np.float32)
    centre = centre_of_mass(t1)
    for name, contrast, axis, angle, shift in KNOWN_CASES:
        if names and name not in names:
            continue
        case = os.path.join(out_dir, name)
        os.makedirs(case, exist_ok=True)
        change = rigid_about(axis, angle, centre, shift)
        if "resampled" in name:
            # chris_t1 ends at its field of view (the neck): cut to a box inside it first, so that
            # the edge moves with the head rather than staying at the reference's border.
            reference = inner_box(t1_data)
            write_image(reference.astype(np.uint8), t1.affine, os.path.join(case, "reference.nii.gz"))
            data, affine_ras = moved_head(t1, reference, change)
        else:
            # with_world_transform: every voxel's LPS position p becomes change * p.
            data, affine_ras = t1_data, LPS_RAS_FLIP @ change @ LPS_RAS_FLIP @ t1.affine
            link(t1_path, os.path.join(case, "reference.nii.gz"))
        if contrast == "synthetic":
            data = synthetic_contrast(data)
        write_image(data, affine_ras, os.path.join(case, "moving.nii.gz"))
        write_world_ras_forward(os.path.join(case, "truth_world.txt"), change)
        print(f"wrote {case}")
    pd_case = os.path.join(out_dir, "pd_t1")
    os.makedirs(pd_case, exist_ok=True)
    link(t1_path, os.path.join(pd_case, "reference.nii.gz"))
    link(os.path.join(data_dir, "chris_PD.nii.gz"), os.path.join(pd_case, "moving.nii.gz"))
    print(f"wrote {pd_case} (no truth)")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: make_cases.py DATA_DIR OUT_DIR [CASE...]  (default: every case)")
    main(sys.argv[1], sys.argv[2], set(sys.argv[3:]))
