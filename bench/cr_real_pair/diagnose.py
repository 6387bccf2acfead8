#!/usr/bin/env python3
"""Why the correlation ratio's optimum on chris_PD -> chris_t1 sits away from MI's (issue 15).

    diagnose.py DATA_DIR CENTRE_WORLD_TXT

DATA_DIR holds chris_t1.nii.gz and chris_PD.nii.gz; CENTRE_WORLD_TXT is a regpipe world matrix
file (moving_to_reference_world.txt), normally the cpu.mi 12-DOF result. An independent numpy
implementation (not regpipe's code): the reference at every second voxel (1.76 mm), the moving
image sampled trilinearly inside its field of view. Prints, along z translation and z scale
about the head's centre:
  - where CR (256 reference bins, FLIRT's direction), CR over a FIXED sample set (reference
    voxels inside the moving field of view at every offset tried: no region selection at the
    slab's ends), CR with each squared deviation capped at 20^2, MI (64x64 bins) and NGF (normalised gradient fields: edges only, no intensity
    model; Haber & Modersitzki 2006) have their minima;
  - which reference voxels pay for CR's preferred z scale, by depth below the reference head's
    surface: the sum over them of the change in (y - bin mean)^2.
Needs python3-numpy, python3-scipy, python3-nibabel.
"""
import os
import sys

import nibabel
import numpy as np
from scipy import ndimage

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "elastix"))
from transforms import foreground_threshold, read_transform, voxel_to_lps  # noqa: E402


def load(data_dir):
    ref = nibabel.load(os.path.join(data_dir, "chris_t1.nii.gz"))
    mov = nibabel.load(os.path.join(data_dir, "chris_PD.nii.gz"))
    return ref, np.asarray(ref.dataobj, np.float32), mov, np.asarray(mov.dataobj, np.float32)


class Pair:
    def __init__(self, ref, R, mov, M, step=2):
        self.R, self.M = R, M
        grid = np.meshgrid(*[np.arange(0, n, step) for n in R.shape], indexing="ij")
        index = np.stack(grid, -1).reshape(-1, 3).astype(np.float64)
        a_ref = voxel_to_lps(ref)
        self.world = index @ a_ref[:3, :3].T + a_ref[:3, 3]
        self.values = R[::step, ::step, ::step].reshape(-1)
        threshold = foreground_threshold(R)
        self.centre = self.world[self.values > threshold].mean(0)
        self.mov_from_world = np.linalg.inv(voxel_to_lps(mov))
        # World gradients for NGF: reference on its grid, moving sampled per transform.
        self.ref_gradient = (np.stack(np.gradient(R), -1)[::step, ::step, ::step].reshape(-1, 3)
                             @ np.linalg.inv(a_ref[:3, :3]))
        self.mov_gradient = np.gradient(M)
        mask = R > threshold
        spacing = np.linalg.norm(a_ref[:3, :3], axis=0)
        depth = (ndimage.distance_transform_edt(mask, sampling=spacing)
                 - ndimage.distance_transform_edt(~mask, sampling=spacing))
        self.depth = depth[::step, ::step, ::step].reshape(-1)

    def sample(self, ref_to_mov):
        m = self.mov_from_world @ ref_to_mov
        p = self.world @ m[:3, :3].T + m[:3, 3]
        inside = np.all((p >= 0) & (p <= np.array(self.M.shape) - 1), axis=1)
        values = ndimage.map_coordinates(self.M, p.T, order=1, mode="nearest")
        return inside, values, p, m


def correlation_ratio(x, y, bins, lo, hi, cap=np.inf):
    """1 - eta^2(Y|X): within-bin variance of y over its total variance, x binned on [lo, hi].
    With a finite cap, each squared deviation (from its bin's mean, and from the mean) counts
    at most cap^2: the bounded form that issue 15's fix may take."""
    b = np.clip(((x - lo) / (hi - lo) * bins).astype(int), 0, bins - 1)
    n = np.bincount(b, minlength=bins)
    bin_mean = np.bincount(b, y, bins) / np.maximum(n, 1)
    within = np.minimum((y - bin_mean[b]) ** 2, cap * cap).sum()
    return within / np.minimum((y - y.mean()) ** 2, cap * cap).sum()


def neg_mutual_information(x, y, bins):
    h, _, _ = np.histogram2d(x, y, bins=bins, range=[[x.min(), x.max()], [y.min(), y.max()]])
    p = h / h.sum()
    nz = p > 0
    return -(p[nz] * np.log(p[nz] / np.outer(p.sum(1), p.sum(0))[nz])).sum()


def neg_ngf(pair, inside, p, m, eps=10.0):
    g = np.stack([ndimage.map_coordinates(c, p[inside].T, order=1) for c in pair.mov_gradient], -1)
    g = g @ m[:3, :3]  # gradient of the moving image seen through the map, in reference world
    r = pair.ref_gradient[inside]
    dot = (r * g).sum(1)
    return -np.mean(dot ** 2 / ((r ** 2).sum(1) + eps ** 2) / ((g ** 2).sum(1) + eps ** 2))


def parabolic_minimum(offsets, costs):
    j = min(max(int(np.argmin(costs)), 1), len(costs) - 2)
    a, b, c = costs[j - 1], costs[j], costs[j + 1]
    den = a - 2 * b + c
    return offsets[j] + (0.5 * (a - c) / den * (offsets[1] - offsets[0]) if den > 0 else 0.0)


def minima(pair, centre, offsets, change):
    samples = [pair.sample(centre @ change(d)) for d in offsets]
    fixed = np.logical_and.reduce([s[0] for s in samples])
    lo, hi = pair.R.min(), pair.R.max()
    x = pair.values
    costs = {"CR": [], "CR, fixed sample set": [], "CR, deviations capped at 20": [], "MI": [], "NGF": []}
    for inside, y, p, m in samples:
        costs["CR"].append(correlation_ratio(x[inside], y[inside], 256, lo, hi))
        costs["CR, deviations capped at 20"].append(correlation_ratio(x[inside], y[inside], 256, lo, hi, cap=20.0))
        costs["CR, fixed sample set"].append(correlation_ratio(x[fixed], y[fixed], 256, lo, hi))
        costs["MI"].append(neg_mutual_information(x[inside], y[inside], 64))
        costs["NGF"].append(neg_ngf(pair, inside, p, m))
    return {k: parabolic_minimum(offsets, np.array(v)) for k, v in costs.items()}


def main(data_dir, centre_path):
    pair = Pair(*load(data_dir))
    centre = read_transform(centre_path)
    c = pair.centre

    def shift_z(d):
        s = np.eye(4)
        s[2, 3] = d
        return s

    def scale_z(d):
        s = np.eye(4)
        s[2, 2] = 1 + d
        s[2, 3] = -d * c[2]
        return s

    names = ["CR", "CR, fixed sample set", "CR, deviations capped at 20", "MI", "NGF"]
    print("| change about the centre transform | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for name, change, offsets, unit in (("z translation (mm)", shift_z, np.linspace(-2.5, 2.5, 21), 1.0),
                                        ("z scale (%)", scale_z, np.linspace(-0.03, 0.03, 25), 100.0)):
        m = minima(pair, centre, offsets, change)
        print(f"| {name} | " + " | ".join(f"{v * unit:+.2f}" for v in m.values()) + " |")

    # Who pays for CR's preferred z scale: per-voxel (y - bin mean)^2 at -2% against 0.
    s0, s1 = pair.sample(centre), pair.sample(centre @ scale_z(-0.02))
    fixed = s0[0] & s1[0]
    b = np.clip(pair.values[fixed].astype(int), 0, 255)

    def residual_squares(values):
        y = values[fixed]
        mean = np.bincount(b, y, 256) / np.maximum(np.bincount(b, minlength=256), 1)
        return (y - mean[b]) ** 2
    change = residual_squares(s1[1]) - residual_squares(s0[1])
    depth = pair.depth[fixed]
    print("\n| depth below the reference head surface (mm) | voxels | change of sum (y - bin mean)^2 at z scale -2% |")
    print("|---|---:|---:|")
    for a, z in ((-60, -5), (-5, -2), (-2, 0), (0, 2), (2, 5), (5, 10), (10, 20), (20, 100)):
        sel = (depth >= a) & (depth < z)
        print(f"| [{a}, {z}) | {sel.sum()} | {change[sel].sum():+.3g} |")
    print(f"| all | {fixed.sum()} | {change.sum():+.3g} |")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: diagnose.py DATA_DIR CENTRE_WORLD_TXT")
    main(sys.argv[1], sys.argv[2])
