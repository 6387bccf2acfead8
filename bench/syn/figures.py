#!/usr/bin/env python3
"""Pictures for docs/deformable.md: a registered pair and the Jacobian determinant of its warp.

    regpipe run examples/syn_t1_to_mni.yaml --set outputs.dir=OUT
    regpipe apply -i T1_head_ext2.nii.gz -r MNI152_T1_2mm.nii.gz -t OUT/syn_t1_to_mni_0GenericAffine.mat \
        -o OUT/affine_only.nii.gz
    bench/syn/figures.py MNI152_T1_2mm.nii.gz OUT docs/deformable

Writes registered_pair.png (the reference's edges over the moving image after the affine stages
alone and after affine + SyN, three orthogonal slices) and jacobian.png (det of the Jacobian of
x -> x + u(x), u the forward warp 1Warp.nii.gz, on the same slices). nibabel, numpy, scipy and
matplotlib: a documentation tool, not a regpipe dependency.
"""
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import nibabel as nib
import numpy as np
from scipy import ndimage


def slices(volume, centre):
    """Axial, coronal and sagittal slices through `centre` (voxel indices), shown upright."""
    i, j, k = centre
    return [np.rot90(volume[:, :, k]), np.rot90(volume[:, j, :]), np.rot90(volume[i, :, :])]


def edges(volume):
    magnitude = np.hypot(*[ndimage.sobel(ndimage.gaussian_filter(volume, 1.0), a) for a in range(2)])
    return magnitude > np.percentile(magnitude, 92)


def jacobian_determinant(warp_file):
    """det(I + du/dx) per voxel, u in mm on the warp's grid (ITK's 5D vector NIfTI, LPS)."""
    img = nib.load(warp_file)
    u = np.asarray(img.dataobj, dtype=np.float64).reshape(img.shape[:3] + (3,))
    spacing = np.asarray(img.header.get_zooms()[:3], dtype=np.float64)
    # ITK stores LPS components. The grid is axis-aligned (as MNI152's): voxel axis a runs along
    # LPS axis a, in the direction `sign[a]` (the header's RAS diagonal, x and y flipped to LPS).
    sign = np.sign(np.diag(img.affine[:3, :3])) * np.array([-1.0, -1.0, 1.0])
    if not np.allclose(img.affine[:3, :3], np.diag(np.diag(img.affine[:3, :3]))):
        raise SystemExit("figures.py: the warp's grid is not axis-aligned")
    grad = np.empty(u.shape[:3] + (3, 3))
    for c in range(3):
        for a in range(3):
            grad[..., c, a] = np.gradient(u[..., c], spacing[a], axis=a) * sign[a]
    return np.linalg.det(np.eye(3) + grad)


def main(reference_file, out_dir, figure_dir):
    out = Path(out_dir)
    figure_dir = Path(figure_dir)
    figure_dir.mkdir(parents=True, exist_ok=True)
    reference = nib.load(reference_file).get_fdata()
    centre = [n // 2 for n in reference.shape]
    centre[2] = int(reference.shape[2] * 0.55)
    rows = [("after rigid + affine", nib.load(out / "affine_only.nii.gz").get_fdata()),
            ("after rigid + affine + SyN", nib.load(out / "syn_t1_to_mni_registered.nii.gz").get_fdata())]
    reference_edges = slices(edges(reference), centre)

    fig, axes = plt.subplots(2, 3, figsize=(9, 6.4))
    for r, (title, moving) in enumerate(rows):
        for c, (view, edge) in enumerate(zip(slices(moving, centre), reference_edges)):
            ax = axes[r, c]
            ax.imshow(view, cmap="gray")
            overlay = np.zeros(edge.shape + (4,))
            overlay[edge] = (1.0, 0.15, 0.15, 0.9)
            ax.imshow(overlay)
            ax.set_axis_off()
        axes[r, 0].set_title(f"T1_head_ext2 {title}", loc="left", fontsize=9)
    fig.suptitle("MNI152_T1_2mm's edges (red) over the registered T1", fontsize=10)
    fig.tight_layout()
    fig.savefig(figure_dir / "registered_pair.png", dpi=90)

    det = jacobian_determinant(out / "syn_t1_to_mni_1Warp.nii.gz")
    fig, axes = plt.subplots(1, 3, figsize=(9, 3.4))
    for ax, view in zip(axes, slices(det, centre)):
        shown = ax.imshow(view, cmap="RdBu_r", vmin=0.0, vmax=2.0)
        ax.set_axis_off()
    fig.colorbar(shown, ax=axes, fraction=0.02, label="det J")
    fig.suptitle(f"Jacobian determinant of the forward warp: min {det.min():.3f}, max {det.max():.3f}, "
                 f"{100 * np.mean(det <= 0):.2f} % <= 0", fontsize=10)
    fig.savefig(figure_dir / "jacobian.png", dpi=90)
    print(f"det J min {det.min():.4f} max {det.max():.4f} folds {np.sum(det <= 0)}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
