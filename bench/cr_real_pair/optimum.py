#!/usr/bin/env python3
"""Where forms of the correlation ratio have their 12-DOF optimum on chris_PD -> chris_t1 (issue 15).

    optimum.py DATA_DIR START_WORLD_TXT FORM [OUT_WORLD_TXT]

An independent numpy implementation (not regpipe's code): chris_t1 at every second voxel
(1.76 mm), a fixed random 30 % of those near chris_PD's field of view, chris_PD sampled
trilinearly; CR = within-bin over total variance of chris_PD's samples, 256 equal-width
chris_t1 bins (FLIRT's form). scipy's Powell minimises it over an affine about the head's
centre from START (normally cpu.mi's result; steps beyond 8 mm or 8 % are refused) and the
result's mean displacement over chris_t1's head from START is printed. FORM is a Python
dict of the variations:
  {}                           FLIRT's CR over the overlap
  {'fixed_margin': 5}          a fixed sample set: the chris_t1 voxels 5 mm inside chris_PD's
                               field of view at START, whatever the transform
  {'ref_head': 1}              only chris_t1 voxels inside its head mask (binary)
  {'ref_soft': 2, 'mov_soft': 2}   each sample weighted by both images' head masks blurred by
                               a 2 mm Gaussian (soft_head_weight.py), chris_PD's sampled
                               trilinearly at the sample's position
  {'bins': 32}                 another number of bins
"""
import ast
import os
import sys
import time

import nibabel
import numpy as np
from scipy import ndimage, optimize

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "elastix"))
sys.path.insert(0, here)
from soft_head_weight import soft_head_weight  # noqa: E402
from transforms import (foreground_threshold, mean_displacement_mm, read_transform,  # noqa: E402
                        voxel_to_lps, write_world_ras_forward)

STEP, SUBSAMPLE, MARGIN_VOXELS, LIMIT = 2, 0.3, 12, 8.0


class Samples:
    """chris_t1 sample positions and values, and chris_PD with its sampling."""

    def __init__(self, ref, mov, start, form):
        r = np.asarray(ref.dataobj, np.float32)
        self.mov = np.asarray(mov.dataobj, np.float32)
        grid = np.meshgrid(*[np.arange(0, n, STEP) for n in r.shape], indexing="ij")
        index = np.stack(grid, -1).reshape(-1, 3).astype(np.float64)
        a = voxel_to_lps(ref)
        world = index @ a[:3, :3].T + a[:3, 3]
        values = r[::STEP, ::STEP, ::STEP].reshape(-1)
        self.centre = world[values > foreground_threshold(r)].mean(0)
        self.mov_from_world = np.linalg.inv(voxel_to_lps(mov))
        self.start = start
        self.world = world
        near = self.inside(start, -MARGIN_VOXELS)
        near &= np.random.default_rng(0).random(near.size) < SUBSAMPLE
        self.world, self.x = world[near], values[near]
        self.range = (float(r.min()), float(r.max()))
        self.ref_weight = np.ones(self.x.size)
        if form.get("ref_head"):
            head = ndimage.binary_fill_holes(r > foreground_threshold(r))
            self.ref_weight = head[::STEP, ::STEP, ::STEP].reshape(-1)[near].astype(np.float64)
        if "ref_soft" in form:
            soft = soft_head_weight(ref, form["ref_soft"])
            self.ref_weight = soft[::STEP, ::STEP, ::STEP].reshape(-1)[near].astype(np.float64)
        self.mov_weight = soft_head_weight(mov, form["mov_soft"]) if "mov_soft" in form else None
        self.fixed = None
        if "fixed_margin" in form:
            self.fixed = self.inside(start, form["fixed_margin"] / np.array(mov.header.get_zooms()[:3]))

    def positions(self, transform):
        m = self.mov_from_world @ transform
        return self.world @ m[:3, :3].T + m[:3, 3]

    def inside(self, transform, margin_voxels):
        p = self.positions(transform)
        return np.all((p >= margin_voxels) & (p <= np.array(self.mov.shape) - 1 - margin_voxels), axis=1)

    def transform(self, params):
        """START after an affine about the head's centre: shift (mm), matrix change (%)."""
        change = np.eye(4)
        change[:3, :3] += params[3:].reshape(3, 3) * 0.01
        change[:3, 3] = self.centre + params[:3] - change[:3, :3] @ self.centre
        return self.start @ change


def correlation_ratio(x, y, w, bins, lo, hi):
    b = np.clip(((x - lo) / (hi - lo) * bins).astype(int), 0, bins - 1)
    n, s, ss = (np.bincount(b, w * y ** k, bins) for k in range(3))
    within = (ss - s * s / np.maximum(n, 1e-12)).sum()
    return within / (ss.sum() - s.sum() ** 2 / n.sum())


def main(data_dir, start_path, form, out_path):
    ref = nibabel.load(os.path.join(data_dir, "chris_t1.nii.gz"))
    mov = nibabel.load(os.path.join(data_dir, "chris_PD.nii.gz"))
    start = read_transform(start_path)
    s = Samples(ref, mov, start, form)
    bins = form.get("bins", 256)

    def cost(params):
        if np.abs(params).max() > LIMIT:
            return 10.0
        t = s.transform(params)
        p = s.positions(t)
        keep = s.fixed if s.fixed is not None else s.inside(t, 0.0)
        w = s.ref_weight[keep]
        if s.mov_weight is not None:
            w = w * ndimage.map_coordinates(s.mov_weight, p[keep].T, order=1, mode="nearest")
        y = ndimage.map_coordinates(s.mov, p[keep].T, order=1, mode="nearest")
        return correlation_ratio(s.x[keep], y, w, bins, *s.range)

    began = time.time()
    r = optimize.minimize(cost, np.zeros(12), method="Powell",
                          options={"xtol": 1e-3, "ftol": 1e-7, "maxfev": 4000})
    found = s.transform(r.x)
    print(f"{form}: {mean_displacement_mm(found, start, ref):.3f} mm from the start "
          f"({r.nfev} evaluations, {time.time() - began:.0f} s)")
    if out_path:
        write_world_ras_forward(out_path, found)


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit("usage: optimum.py DATA_DIR START_WORLD_TXT FORM [OUT_WORLD_TXT]")
    try:
        main(sys.argv[1], sys.argv[2], ast.literal_eval(sys.argv[3]), sys.argv[4] if len(sys.argv) == 5 else None)
    except (OSError, ValueError, SyntaxError) as e:
        sys.exit(f"optimum.py: {e}")
