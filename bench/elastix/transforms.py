"""Transforms and the accuracy metric of regpipe, in numpy, for comparing other tools' results.

Everything is a 4x4 reference->moving map in LPS world millimetres (abi.h's convention,
ITK's and elastix's world frame). The definitions mirror framework/src/transform/transform.cpp
(rigid_about, centre_of_mass, mean_displacement_mm), framework/src/driver/run_pipeline.cpp
(foreground_threshold) and framework/src/io/transform_io.cpp (the RAS world matrix file).
"""
import os
import re

import nibabel
import numpy as np

LPS_RAS_FLIP = np.diag([-1.0, -1.0, 1.0, 1.0])


def voxel_to_lps(image):
    return LPS_RAS_FLIP @ image.affine


def read_world_ras_forward(path):
    """regpipe's world matrix file (RAS, moving -> reference) as reference->moving LPS."""
    forward_ras = np.loadtxt(path).reshape(4, 4)
    return np.linalg.inv(LPS_RAS_FLIP @ forward_ras @ LPS_RAS_FLIP)


def write_world_ras_forward(path, ref_to_mov):
    forward_ras = LPS_RAS_FLIP @ np.linalg.inv(ref_to_mov) @ LPS_RAS_FLIP
    np.savetxt(path, forward_ras, fmt="%.17g")


def save_header_changed(image, change, out_dir, name):
    """Writes OUT_DIR/NAME.nii.gz, the image's voxels with its header moved by the world change
    (LPS, as rigid_about gives), and NAME.txt, the change as a world matrix file."""
    affine_ras = LPS_RAS_FLIP @ change @ LPS_RAS_FLIP @ image.affine
    copy = nibabel.Nifti1Image(np.asarray(image.dataobj), affine_ras, image.header)
    copy.set_qform(affine_ras, code=1)
    copy.set_sform(affine_ras, code=1)
    nibabel.save(copy, os.path.join(out_dir, f"{name}.nii.gz"))
    write_world_ras_forward(os.path.join(out_dir, f"{name}.txt"), change)


def read_elastix_affine(path):
    """An elastix AffineTransform parameter file as reference(fixed)->moving LPS.

    elastix maps a fixed point x to A (x - c) + t + c, with A the first nine parameters
    (row-major), t the last three and c the CenterOfRotationPoint (elastix manual 2.6).
    """
    text = open(path).read()

    def field(name):
        m = re.search(r"\(" + name + r"\s+([^)]*)\)", text)
        if not m:
            raise ValueError(f"{path}: no ({name} ...) entry")
        return m.group(1)

    if field("Transform").strip('" ') != "AffineTransform":
        raise ValueError(f"{path}: Transform is {field('Transform')}, not \"AffineTransform\"")
    if field("InitialTransformParametersFileName").strip('" ') != "NoInitialTransform":
        raise ValueError(f"{path}: chained initial transforms are not supported")
    p = np.array(field("TransformParameters").split(), dtype=float)
    c = np.array(field("CenterOfRotationPoint").split(), dtype=float)
    if p.size != 12 or c.size != 3:
        raise ValueError(f"{path}: expected 12 parameters and a 3D centre, got {p.size} and {c.size}")
    a = p[:9].reshape(3, 3)
    m = np.eye(4)
    m[:3, :3] = a
    m[:3, 3] = p[9:] + c - a @ c
    return m


def read_transform(path):
    """An elastix TransformParameters file or a regpipe world matrix file, by its content."""
    with open(path) as f:
        head = f.read(200)
    return read_elastix_affine(path) if "(Transform " in head else read_world_ras_forward(path)


def rigid_about(axis, angle_deg, centre, translation):
    """Rotation by angle about axis through centre, then translation (Rodrigues)."""
    k = np.asarray(axis, float) / np.linalg.norm(axis)
    cross = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    a = np.radians(angle_deg)
    r = np.eye(3) + np.sin(a) * cross + (1 - np.cos(a)) * cross @ cross
    m = np.eye(4)
    m[:3, :3] = r
    m[:3, 3] = np.asarray(centre) + np.asarray(translation) - r @ centre
    return m


def centre_of_mass(image):
    """Intensity-weighted centre (positive voxels) in LPS mm."""
    data = np.clip(np.asarray(image.dataobj, dtype=np.float64), 0, None)
    total = data.sum()
    idx = [np.arange(n) for n in data.shape]
    index = np.array([(data.sum(axis=tuple(j for j in range(3) if j != i)) * idx[i]).sum() / total
                      for i in range(3)])
    return (voxel_to_lps(image) @ np.append(index, 1.0))[:3]


def foreground_threshold(data):
    """A fifth of the 99th percentile of all voxels (regpipe's head mask)."""
    v = data.ravel()
    k = min(v.size - 1, int(0.99 * v.size))
    return 0.2 * np.partition(v, k)[k]


def mean_displacement_mm(a, b, reference):
    """Mean |(a - b) x| over the reference voxels above the foreground threshold."""
    data = np.asarray(reference.dataobj, dtype=np.float32)
    index = np.argwhere(data > foreground_threshold(data)).astype(np.float64)
    d = (a - b) @ voxel_to_lps(reference)
    return float(np.linalg.norm(index @ d[:3, :3].T + d[:3, 3], axis=1).mean())
