#!/usr/bin/python3
"""cuda.lcc's z-marching pass emulated in numpy on a pair, in three accumulations, to tell what
a float path's cost error comes from (bench/results/syn_speed_h100.md, "precision=float").

    regpipe_bench_syn --write-pair /tmp/pair     # the 256x256x160 pair (no GPU needed for this)
    /usr/bin/python3 bench/syn/lcc_float_emulation.py /tmp/pair [double|drift|nodrift ...]

As lcc_march.cu does it, per block (a 32x32 x-y tile and a z-segment of 54 planes, each image's
values centred on a constant of the block's), the five window sums of the centred values (no
weights: the window's weight is its voxel count) are kept as running z-sums of x-window sums
of each halo row, updated plane by plane by the entering plane minus the leaving one, then
summed over the y-window; the correlation is local_cc.hpp's with its flat-window rule
(1e-10 of W times the global variance; in float also 1e-5 of the window's sum of squares).
  double:  float64 throughout, values centred on the global means (cpu.lcc's arithmetic);
  drift:   float32 throughout, the running z-sums fed with the float x-window sums of the
           product differences (the kernel tried on an H100), centred on the block's minimum;
  nodrift: float32 products and x-window sums, the running z-sums in float64 fed with the
           entering and the leaving plane's float x-window sums apart (the same float added and
           later subtracted: no drift), the y-window in float64, the correlation in float32.
Prints the cost, -(1/N) sum rho^2, of each. Emulates the order of the sums, not every rounding
of the kernel (the kernel slides its x- and y-windows; here they are direct sums).
"""
import sys

import nibabel as nib
import numpy as np

RADIUS, TILE, SEGMENT = 4, 32, 54


def load(path):
    return np.asarray(nib.load(path).dataobj, dtype=np.float32).transpose(2, 1, 0).copy()  # z, y, x


def window_sum(a, axis, dtype):
    """Sums over [i - r, i + r] along `axis`, zero outside, direct."""
    pad = [(0, 0)] * a.ndim
    pad[axis] = (RADIUS, RADIUS)
    p = np.pad(a, pad)
    out = np.zeros(a.shape, dtype)
    for u in range(2 * RADIUS + 1):
        out += np.take(p, range(u, u + a.shape[axis]), axis=axis).astype(dtype)
    return out


def extent(at, n):
    return np.minimum(at + RADIUS, n - 1) - np.maximum(at - RADIUS, 0) + 1


def cost(fixed, moving, mode):
    nz, ny, nx = fixed.shape
    real = np.float64 if mode == "double" else np.float32
    running = np.float32 if mode == "drift" else np.float64
    variance = (np.float64(fixed).var(), np.float64(moving).var())
    total = 0.0
    for z0 in range(0, nz, SEGMENT):
        z1 = min(z0 + SEGMENT, nz)
        for y0 in range(0, ny, TILE):
            for x0 in range(0, nx, TILE):
                if mode == "double":
                    centre = (np.float64(fixed).mean(), np.float64(moving).mean())
                else:
                    planes = [z0, (z0 + z1) // 2, z1 - 1]
                    centre = tuple(im[planes, y0:y0 + TILE, x0:x0 + TILE].min() for im in (fixed, moving))
                ya, yb, xa, xb = max(y0 - RADIUS, 0), min(y0 + TILE + RADIUS, ny), max(x0 - RADIUS, 0), min(x0 + TILE + RADIUS, nx)

                def products(p):
                    if p < 0 or p >= nz:
                        return None
                    f = fixed[p, ya:yb, xa:xb].astype(real) - real(centre[0])
                    m = moving[p, ya:yb, xa:xb].astype(real) - real(centre[1])
                    return [f, m, f * f, m * m, f * m]

                sums = [np.zeros((yb - ya, xb - xa), running) for _ in range(5)]
                for p in range(z0 - RADIUS, z1 + RADIUS):
                    entering = products(p)
                    leaving = products(p - 2 * RADIUS - 1) if p - 2 * RADIUS - 1 >= z0 - RADIUS else None
                    for k in range(5):
                        if mode == "drift":
                            if entering is None and leaving is None:
                                continue
                            zero = np.zeros(sums[k].shape, real)
                            difference = (entering[k] if entering is not None else zero) - (
                                leaving[k] if leaving is not None else zero)
                            sums[k] += window_sum(difference, 1, real)
                        else:
                            if entering is not None:
                                sums[k] += window_sum(entering[k], 1, real).astype(running)
                            if leaving is not None:
                                sums[k] -= window_sum(leaving[k], 1, real).astype(running)
                    z = p - RADIUS
                    if z < z0:
                        continue
                    ty, tx = y0 - ya, x0 - xa
                    h, w = min(TILE, ny - y0), min(TILE, nx - x0)
                    sf, sm, sff, smm, sfm = (window_sum(s, 0, running)[ty:ty + h, tx:tx + w].astype(real) for s in sums)
                    weight = (extent(z, nz) * extent(np.arange(y0, y0 + h), ny)[:, None] *
                              extent(np.arange(x0, x0 + w), nx)[None, :]).astype(real)
                    fbar, mbar = sf / weight, sm / weight
                    cross, fss, mss = sfm - fbar * sm, sff - fbar * sf, smm - mbar * sm
                    flat = ~(fss > real(1e-10) * weight * real(variance[0])) | ~(mss > real(1e-10) * weight * real(variance[1]))
                    if mode != "double":
                        flat |= ~(fss > real(1e-5) * sff) | ~(mss > real(1e-5) * smm)
                    with np.errstate(all="ignore"):
                        rho2 = np.where(flat, real(1), cross * cross / (fss * mss))
                    total += rho2.astype(np.float64).sum()
    return -total / (nx * ny * nz)


def main():
    folder = sys.argv[1]
    fixed, moving = load(folder + "/fixed.nii.gz"), load(folder + "/moving.nii.gz")
    for mode in sys.argv[2:] or ["double", "drift", "nodrift"]:
        print(f"{mode}: cost {cost(fixed, moving, mode):.9f}", flush=True)


if __name__ == "__main__":
    main()
