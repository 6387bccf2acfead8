"""Tool-independent metrics for the cross-subject SyN benchmark (issue 16).

Everything here is our own numpy/scipy code, applied in the same way to every tool's output:
the files a tool writes (an ANTs/ITK affine .mat and an ITK displacement field *Warp.nii.gz)
are read here, the moving image is resampled here through them, and the measures are computed
here. No tool's own warped image or metric value enters the table.

Conventions (ITK / ANTs, docs/deformable.md):
- physical space is LPS millimetres; a NIfTI's RAS voxel->world matrix is turned into LPS by
  diag(-1, -1, 1);
- the affine file (AffineTransform_double_3_3, 'fixed' = centre) maps a FIXED point to a MOVING
  point: y = M (x - c) + t + c;
- the warp u lives on the fixed grid; a fixed point p is seen in the moving image at
  A (p + u(p)) (antsApplyTransforms -t Warp -t Affine; regpipe apply -t Affine -t Warp).
"""
import numpy as np
import nibabel as nib
import scipy.io
from scipy import ndimage as ndi

LPS = np.diag([-1.0, -1.0, 1.0, 1.0])


def load(path):
    """(float64 array, 4x4 voxel index -> LPS mm)."""
    img = nib.load(str(path))
    return np.asarray(img.get_fdata(dtype=np.float64)), LPS @ img.affine


def read_ants_affine(path):
    """ANTs/ITK binary .mat -> 4x4 fixed LPS -> moving LPS."""
    m = scipy.io.loadmat(str(path))
    key = [k for k in m if k.startswith('AffineTransform')][0]
    p = np.asarray(m[key], dtype=np.float64).ravel()
    c = np.asarray(m['fixed'], dtype=np.float64).ravel()
    M = p[:9].reshape(3, 3)
    t = p[9:12]
    A = np.eye(4)
    A[:3, :3] = M
    A[:3, 3] = t + c - M @ c
    return A


def read_warp(path, fixed_vox2lps, fixed_shape):
    """ITK displacement field (NIfTI, X x Y x Z x 1 x 3, LPS mm) -> (X, Y, Z, 3) array."""
    img = nib.load(str(path))
    u = np.asarray(img.get_fdata(dtype=np.float64))
    if u.ndim == 5:
        u = u[:, :, :, 0, :]
    if u.shape[:3] != tuple(fixed_shape) or u.shape[3] != 3:
        raise ValueError(f'{path}: field shape {u.shape} is not the fixed grid {fixed_shape} x 3')
    if not np.allclose(LPS @ img.affine, fixed_vox2lps, atol=1e-3):
        raise ValueError(f'{path}: field grid differs from the fixed grid')
    return u


def fixed_points(shape, vox2lps):
    idx = np.indices(shape, dtype=np.float64).reshape(3, -1)
    return (vox2lps[:3, :3] @ idx + vox2lps[:3, 3:4]).T.reshape(*shape, 3)


def resample(moving, moving_vox2lps, fixed_shape, fixed_vox2lps, A, u=None, order=1):
    """moving(A (p + u(p))) at every fixed voxel p; trilinear (order 1), 0 outside."""
    p = fixed_points(fixed_shape, fixed_vox2lps)
    if u is not None:
        p = p + u
    q = p.reshape(-1, 3) @ A[:3, :3].T + A[:3, 3]
    inv = np.linalg.inv(moving_vox2lps)
    ijk = q @ inv[:3, :3].T + inv[:3, 3]
    out = ndi.map_coordinates(moving, ijk.T, order=order, mode='constant', cval=0.0)
    return out.reshape(fixed_shape)


def global_cc(f, m, mask=None):
    if mask is not None:
        f, m = f[mask], m[mask]
    f = f - f.mean()
    m = m - m.mean()
    return float((f * m).sum() / np.sqrt((f * f).sum() * (m * m).sum()))


def local_cc(f, m, radius=4, mask=None):
    """ANTs' neighbourhood CC: mean over voxels of rho^2 in the (2r+1)^3 box about each voxel
    (windows clipped at the border, as mode='constant' with the counts renormalised is not what
    ANTs does; we use 'nearest' padding). Voxels with a flat window (var < 1e-12 of the image
    variance) are left out. Returned positive (ANTs' metric value is its negative)."""
    size = 2 * radius + 1

    def box(x):
        return ndi.uniform_filter(x, size=size, mode='nearest')

    mf, mm = box(f), box(m)
    sff = box(f * f) - mf * mf
    smm = box(m * m) - mm * mm
    sfm = box(f * m) - mf * mm
    eps = 1e-12 * max(f.var(), 1e-30) * max(m.var(), 1e-30)
    ok = (sff * smm) > eps
    if mask is not None:
        ok &= mask
    return float(np.mean(sfm[ok] ** 2 / (sff[ok] * smm[ok])))


def jacobian_det(u, fixed_vox2lps):
    """det(I + du/dx) of the fixed->moving field, derivatives in LPS mm (central differences,
    one-sided at the border). The affine's own determinant is constant and positive, so folding
    is decided by this."""
    Minv = np.linalg.inv(fixed_vox2lps[:3, :3])
    # du_i/dk along index axes k
    g = np.stack([np.stack(np.gradient(u[..., i], axis=(0, 1, 2)), axis=-1) for i in range(3)],
                 axis=-2)  # (..., i, k)
    J = np.eye(3) + g @ Minv  # du_i/dx_j = sum_k du_i/dk dk/dx_j
    return np.linalg.det(J)


def _otsu(v, bins=256):
    h, e = np.histogram(v, bins)
    c = (e[:-1] + e[1:]) / 2
    w0 = np.cumsum(h)
    w1 = w0[-1] - w0
    s0 = np.cumsum(h * c)
    m0 = s0 / np.maximum(w0, 1)
    m1 = (s0[-1] - s0) / np.maximum(w1, 1)
    return c[np.argmax(w0 * w1 * (m0 - m1) ** 2)]


def brain_mask(img, vox2lps, erode_mm=6.0, close_mm=6.0):
    """A crude, tool-independent brain mask from the T1 intensities alone (no registration):
    Otsu threshold of the 1 mm-smoothed image (voxels above 1 % of the 99th percentile),
    erosion by erode_mm (a ball, exact in mm), the largest connected component (the brain,
    cut from scalp and neck), dilation by the same within the threshold, closing by close_mm
    (fills sulcal CSF, so the mask is an envelope like MNI152_mask_2mm), holes filled."""
    sp = np.sqrt((vox2lps[:3, :3] ** 2).sum(axis=0))
    s = ndi.gaussian_filter(img, 1.0 / sp)
    fg = s > _otsu(s[s > 0.01 * np.percentile(s, 99)])

    def erode(x, r):
        return ndi.distance_transform_edt(x, sampling=sp) > r

    def dilate(x, r):
        return ndi.distance_transform_edt(~x, sampling=sp) <= r

    er = erode(fg, erode_mm)
    lab, n = ndi.label(er)
    if n == 0:
        raise ValueError('brain_mask: nothing left after erosion')
    sizes = ndi.sum(er, lab, range(1, n + 1))
    brain = dilate(lab == (np.argmax(sizes) + 1), erode_mm) & fg
    # closing on a padded grid so the border does not erode it
    pad = int(np.ceil(close_mm / sp.min())) + 1
    b = np.pad(brain, pad)
    b = erode(dilate(b, close_mm), close_mm)[pad:-pad, pad:-pad, pad:-pad]
    return ndi.binary_fill_holes(b)


def head_mask(img, vox2lps, close_mm=6.0):
    """A tool-independent head mask from the intensities alone: the 1 mm-smoothed image above
    half the Otsu threshold of all its voxels (background vs tissue), the largest connected
    component, closed by close_mm (a ball, in mm, on a padded grid), holes filled. This is what
    MNI152_mask_2mm is for the template (a head mask, scalp included; not a brain mask)."""
    sp = np.sqrt((vox2lps[:3, :3] ** 2).sum(axis=0))
    s = ndi.gaussian_filter(img, 1.0 / sp)
    fg = s > 0.5 * _otsu(s.ravel())
    lab, n = ndi.label(fg)
    sizes = ndi.sum(fg, lab, range(1, n + 1))
    head = lab == (np.argmax(sizes) + 1)
    pad = int(np.ceil(close_mm / sp.min())) + 1
    b = np.pad(head, pad)
    b = ndi.distance_transform_edt(~b, sampling=sp) <= close_mm
    b = ndi.distance_transform_edt(b, sampling=sp) > close_mm
    b = b[pad:-pad, pad:-pad, pad:-pad]
    return ndi.binary_fill_holes(b)


def dice(a, b):
    a = a.astype(bool)
    b = b.astype(bool)
    return float(2.0 * (a & b).sum() / (a.sum() + b.sum()))


def evaluate(fixed_path, moving_path, fixed_mask_path, affine_path, warp_path=None):
    """All measures for one result (affine file + optional warp), as a dict."""
    f, fv = load(fixed_path)
    m, mv = load(moving_path)
    fm, _ = load(fixed_mask_path)
    fm = fm > 0.5
    A = read_ants_affine(affine_path)
    u = read_warp(warp_path, fv, f.shape) if warp_path else None
    w = resample(m, mv, f.shape, fv, A, u)
    mb = brain_mask(m, mv).astype(np.float64)
    wb = resample(mb, mv, f.shape, fv, A, u) >= 0.5
    fb = brain_mask(f, fv)
    mh = head_mask(m, mv).astype(np.float64)
    wh = resample(mh, mv, f.shape, fv, A, u) >= 0.5
    r = {
        'cc_global': global_cc(f, w),
        'cc_global_brain': global_cc(f, w, fm),
        'lcc4': local_cc(f, w, 4),
        'lcc4_brain': local_cc(f, w, 4, fm),
        'dice_head_mni_mask': dice(wh, fm),
        'dice_brain': dice(wb, fb),
    }
    if u is not None:
        jd = jacobian_det(u, fv)
        r.update(neg_jac=float((jd <= 0).mean()), neg_jac_brain=float((jd[fm] <= 0).mean()),
                 jac_min=float(jd.min()), jac_max=float(jd.max()),
                 max_disp_mm=float(np.sqrt((u ** 2).sum(-1)).max()))
    else:
        r.update(neg_jac=0.0, neg_jac_brain=0.0, jac_min=1.0, jac_max=1.0, max_disp_mm=0.0)
    return r, w


def mask_ceiling(fixed_path, fixed_mask_path):
    """Dice of head_mask(MNI152_T1) with MNI152_mask_2mm: how well the procedure that makes the
    moving subject's head mask reproduces the template's own mask (the ceiling of that Dice)."""
    f, fv = load(fixed_path)
    fm, _ = load(fixed_mask_path)
    return dice(head_mask(f, fv), fm > 0.5)
