#!/usr/bin/env python3
"""FireANTs' SyN on the cross-subject pair (issue 16), for the GPU device; the peer of
bench/syn/cross_subject.py (ANTs and regpipe on the CPU).

T1_head_ext2 (moving) -> MNI152_T1_2mm (fixed), started from the SAME affine as the CPU runs
(cross_subject.py's affine/0GenericAffine.mat, fixed LPS -> moving LPS, which is what FireANTs'
init_affine means), SyN with local CC (box window 2r+1 = 9 for radius 4), the same levels and
iterations (scales 8,4,2,1 and 100,70,50,20 by default).

FireANTs' optimiser is not ANTs' greedy step: Adam on the two half-way fields with its own
gradient and field smoothing; we keep FireANTs' documented example settings (Adam, lr 0.5,
smooth_grad_sigma 1, smooth_warp_sigma 0.5) rather than pretend to map SyN[0.1,3,0] onto them.

Writes into --out:
  1Warp.nii.gz        the forward field in OUR convention (as ANTs' and regpipe's 1Warp with
                      the affine separate): u(p) = A^-1 (p + d(p)) - p, where d is the full
                      fixed->moving displacement FireANTs' save_as_ants_transforms would write
                      (affine included), so that A (p + u(p)) = p + d(p). LPS mm, fixed grid,
                      NIfTI vector intent, X x Y x Z x 1 x 3 (written with nibabel; the
                      SimpleITK stand-in cannot write).
  d_total.nii.gz      d itself (affine included), for a check with antsApplyTransforms -t d.
  0GenericAffine.mat  a copy of the affine it started from.
  warped.nii.gz       FireANTs' own moved image (its evaluate()), for the convention check.
  timing.json         wall time of the SyN optimisation (CUDA-synchronised), of the whole
                      script part from loading to field written, device name, settings.
Then, here on the CPU machine:
  /usr/bin/python3 bench/syn/cross_subject.py --skip-ants --skip-regpipe --fireants DIR
puts the same numpy metrics in the table (or without --skip-* to have all rows in one table).

Any other pair with --fixed and --moving (no --affine: the identity), e.g. regpipe_bench_syn's
256x256x160 pair for bench/results/syn_speed_*.md, with --timing-only (no fields written).

On the device (see bench/results/syn_cross_subject.md for the carry list):
  python3 -m pip install -q --no-index --no-deps --target /tmp/site .device/fireants/whl/*.whl
  export PYTHONPATH=.device/fireants:/tmp/site PYTHONUNBUFFERED=1
  python3 bench/syn/fireants_cross_subject.py --data .device/fireants/data \
      --affine .device/fireants/0GenericAffine.mat --out $OUT/fireants
"""
import argparse
import json
import shutil
import time
from pathlib import Path

import numpy as np


def read_ants_affine(path):
    import scipy.io
    m = scipy.io.loadmat(str(path))
    key = [k for k in m if k.startswith('AffineTransform')][0]
    p = np.asarray(m[key], dtype=np.float64).ravel()
    c = np.asarray(m['fixed'], dtype=np.float64).ravel()
    M = p[:9].reshape(3, 3)
    A = np.eye(4)
    A[:3, :3] = M
    A[:3, 3] = p[9:12] + c - M @ c
    return A


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--data', type=Path, help='folder with MNI152_T1_2mm.nii.gz and T1_head_ext2.nii.gz')
    ap.add_argument('--fixed', type=Path, help='the fixed image (default DATA/MNI152_T1_2mm.nii.gz)')
    ap.add_argument('--moving', type=Path, help='the moving image (default DATA/T1_head_ext2.nii.gz)')
    ap.add_argument('--affine', type=Path, help="cross_subject.py's affine/0GenericAffine.mat (default: the identity)")
    ap.add_argument('--timing-only', action='store_true', help='write timing.json only (no fields, no warped image)')
    ap.add_argument('--out', type=Path, required=True)
    ap.add_argument('--scales', default='8,4,2,1')
    ap.add_argument('--iterations', default='100,70,50,20')
    ap.add_argument('--radius', type=int, default=4)
    ap.add_argument('--lr', type=float, default=0.5)
    ap.add_argument('--smooth-grad-sigma', type=float, default=1.0)
    ap.add_argument('--smooth-warp-sigma', type=float, default=0.5)
    ap.add_argument('--device', default='cuda', help='cuda (the benchmark) or cpu (a smoke test of this script only)')
    ap.add_argument('--repeats', type=int, default=2, help='run the SyN this many times; the first is a warm-up (CUDA context, kernels), the table takes the last')
    a = ap.parse_args()

    import torch
    import nibabel as nib
    from fireants.io.image import Image, BatchedImages
    from fireants.registration.syn import SyNRegistration
    from fireants.interpolator import fireants_interpolator

    a.out.mkdir(parents=True, exist_ok=True)
    dev = a.device

    def sync():
        if dev.startswith('cuda'):
            torch.cuda.synchronize()
    fixed_path = str(a.fixed or a.data / 'MNI152_T1_2mm.nii.gz')
    moving_path = str(a.moving or a.data / 'T1_head_ext2.nii.gz')
    A = read_ants_affine(a.affine) if a.affine else np.eye(4)
    scales = [float(s) for s in a.scales.split(',')]
    iters = [int(s) for s in a.iterations.split(',')]

    def one_run():
        sync()
        t0 = time.perf_counter()
        fixed = BatchedImages([Image.load_file(fixed_path, device=dev)])
        moving = BatchedImages([Image.load_file(moving_path, device=dev)])
        init = torch.tensor(A, dtype=torch.float32, device=dev).unsqueeze(0)
        reg = SyNRegistration(scales=scales, iterations=iters, fixed_images=fixed, moving_images=moving,
                              loss_type='cc', cc_kernel_type='rectangular', cc_kernel_size=2 * a.radius + 1,
                              deformation_type='compositive', optimizer='Adam', optimizer_lr=a.lr,
                              smooth_grad_sigma=a.smooth_grad_sigma, smooth_warp_sigma=a.smooth_warp_sigma,
                              init_affine=init, progress_bar=False)
        sync()
        t1 = time.perf_counter()
        reg.optimize()
        sync()
        t2 = time.perf_counter()
        if a.timing_only:
            return dict(setup_s=t1 - t0, syn_s=t2 - t1, field_s=0.0, wall_s=t2 - t0), None, None
        # the full fixed->moving displacement, exactly as FireANTs' save_as_ants_transforms makes it
        with torch.no_grad():
            params = reg.get_warp_parameters(fixed, moving)
            mt2p, ft2p = moving.get_torch2phy(), fixed.get_torch2phy()
            coords = torch.einsum('bij, b...j->b...i', mt2p[:, :3, :3], params['grid'].detach()).contiguous()
            aff = params['affine']
            row = torch.zeros((aff.shape[0], 1, 4), device=aff.device, dtype=aff.dtype)
            row[:, 0, -1] = 1
            aff = ((mt2p @ torch.cat([aff, row], dim=1) - ft2p)[:, :3]).contiguous()
            d = fireants_interpolator.affine_warp(affine=aff, grid=coords)[0].detach().cpu().numpy()  # [Z, Y, X, 3] LPS
        sync()
        t3 = time.perf_counter()
        with torch.no_grad():
            moved = reg.evaluate(fixed, moving)[0, 0].detach().cpu().numpy()  # [Z, Y, X]
        return dict(setup_s=t1 - t0, syn_s=t2 - t1, field_s=t3 - t2, wall_s=t3 - t0), d, moved

    runs = []
    for i in range(a.repeats):
        t, d, moved = one_run()
        runs.append(t)
        print(f'run {i}: load+setup {t["setup_s"]:.2f} s, SyN {t["syn_s"]:.2f} s, field {t["field_s"]:.2f} s, '
              f'wall {t["wall_s"]:.2f} s', flush=True)

    import fireants
    last = runs[-1]
    info = dict(device=torch.cuda.get_device_name(0) if dev.startswith('cuda') else 'cpu', fireants=getattr(fireants, '__version__', '1.5.0'),
                torch=torch.__version__, wall_s=last['wall_s'], syn_s=last['syn_s'], runs=runs,
                settings=vars(a) | {'data': str(a.data), 'affine': str(a.affine), 'out': str(a.out),
                                    'fixed': fixed_path, 'moving': moving_path})
    (a.out / 'timing.json').write_text(json.dumps(info, indent=1, default=str))
    print(json.dumps(info, default=str))
    if a.timing_only:
        return

    fimg = nib.load(fixed_path)
    X = fimg.shape
    d = d.transpose(2, 1, 0, 3).astype(np.float64)  # -> X, Y, Z, 3
    assert d.shape[:3] == X, (d.shape, X)
    # our convention: u(p) = A^-1 (p + d(p)) - p
    lps = np.diag([-1.0, -1.0, 1.0, 1.0]) @ fimg.affine
    idx = np.indices(X, dtype=np.float64).reshape(3, -1)
    p = (lps[:3, :3] @ idx + lps[:3, 3:4]).T.reshape(*X, 3)
    Ainv = np.linalg.inv(A)
    u = (p + d) @ Ainv[:3, :3].T + Ainv[:3, 3] - p

    def write_field(v, name):
        img = nib.Nifti1Image(v[:, :, :, None, :].astype(np.float32), fimg.affine)
        img.header.set_intent('vector')
        img.header.set_xyzt_units('mm')
        nib.save(img, str(a.out / name))

    write_field(u, '1Warp.nii.gz')
    write_field(d, 'd_total.nii.gz')
    nib.save(nib.Nifti1Image(moved.transpose(2, 1, 0).astype(np.float32), fimg.affine), str(a.out / 'warped.nii.gz'))
    if a.affine:
        shutil.copyfile(a.affine, a.out / '0GenericAffine.mat')


if __name__ == '__main__':
    main()
