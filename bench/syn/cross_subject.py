#!/usr/bin/python3
"""Cross-subject SyN benchmark (issue 16, second "Done when" bullet), CPU part:
T1_head_ext2 (moving) -> MNI152_T1_2mm (fixed), ANTs (antspyx) against regpipe, both SyN with
local CC radius 4 from ONE shared affine, measured by our own code (synmetrics.py).

Steps
1. The shared affine: `regpipe run` with a rigid then an affine stage (cpu.cr, Powell), from the
   centres of mass. Its 0GenericAffine.mat (ANTs' binary format, fixed LPS -> moving LPS) is
   the initial transform of both SyN runs.
2. ANTs: antsRegistration (antspyx's bundled library, called with explicit command-line
   arguments through ants.registration([...])) with --initial-moving-transform that .mat and
   one SyN stage only.
3. regpipe: `regpipe run` of the same rigid and affine stages followed by a syn stage (a syn
   stage cannot take an initial transform; the affine stages are deterministic, so we check that
   this run's 0GenericAffine.mat is byte for byte step 1's, and time the syn stage from
   report.json as well as the whole run).
4. Metrics, the same code for every result: the moving image and its masks resampled by us
   through each tool's affine file and warp file; global CC, local CC (radius 4), Dice of the
   moving subject's head mask with MNI152_mask_2mm (a head mask), Dice of brain masks made by
   one intensity procedure on both sides, fraction of voxels with det(Jacobian) <= 0.

Usage:  /usr/bin/python3 bench/syn/cross_subject.py [--out DIR] [--iterations 100x70x50x20]
        [--skip-ants] [--skip-regpipe] [--fireants DIR]
The FireANTs part runs on the device (bench/syn/fireants_cross_subject.py); --fireants DIR
adds the files it wrote (0GenericAffine.mat + 1Warp.nii.gz, copied back) to the table.
"""
import argparse
import filecmp
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

DATA = (REPO / '..' / 'shared' / 'data').resolve()
FIXED = DATA / 'MNI152_T1_2mm.nii.gz'
MOVING = DATA / 'T1_head_ext2.nii.gz'
FIXED_MASK = DATA / 'MNI152_mask_2mm.nii.gz'
REGPIPE = REPO / 'build' / 'bin' / 'regpipe'

AFFINE_STAGES = """\
    - {transform: rigid, levels_mm: [8, 4, 2]}
    - {transform: affine, levels_mm: [8, 4, 2]}
"""


def pipeline(out, syn=None):
    text = f"""inputs:
  reference: {FIXED}
  moving: {MOVING}
registration:
  initialisation: centre_of_mass
  stages:
{AFFINE_STAGES}"""
    if syn:
        text += f"""    - transform: syn
      cost: {{plugin: cpu.lcc, params: {{radius: {syn['radius']}, threads: {syn['threads']}}}}}
      optimizer:
        plugin: optim.syn
        params: {{gradient_step: 0.1, update_field_variance: 3, total_field_variance: 0,
                 iterations: {syn['iterations']}, shrink_factors: {syn['shrink']},
                 smoothing_sigmas: {syn['sigmas']}, convergence_threshold: 1e-6,
                 convergence_window: 10}}
"""
    text += f"""outputs:
  dir: {out}
  interpolation: trilinear
"""
    return text


def run_regpipe(out, syn=None):
    out.mkdir(parents=True, exist_ok=True)
    yml = out / 'pipeline.yaml'
    yml.write_text(pipeline(out, syn))
    t0 = time.perf_counter()
    p = subprocess.run([str(REGPIPE), 'run', '-v', str(yml)], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    (out / 'stdout.txt').write_text(p.stdout + p.stderr)
    if p.returncode != 0:
        sys.exit(f'regpipe run {yml} failed ({p.returncode}):\n{p.stderr[-3000:]}')
    report = json.loads((out / 'report.json').read_text())
    return wall, report, yml


def ants_args(out, affine, syn):
    prefix = str(out) + '/'
    return ['-d', '3', '--float', '0', '--verbose', '1',
            '-o', f'[{prefix},{prefix}Warped.nii.gz]',
            '--interpolation', 'Linear', '--use-histogram-matching', '0',
            '--collapse-output-transforms', '1', '--write-composite-transform', '0',
            '--initial-moving-transform', str(affine),
            '--metric', f'CC[{FIXED},{MOVING},1,{syn["radius"]}]',
            '--transform', 'SyN[0.1,3,0]',
            '--convergence', f'[{syn["iterations"]},1e-6,10]',
            '--shrink-factors', syn['shrink'],
            '--smoothing-sigmas', syn['sigmas'] + 'vox']


def run_ants(out, affine, syn):
    import ants  # after ITK_GLOBAL_DEFAULT_NUMBER_OF_THREADS is set
    out.mkdir(parents=True, exist_ok=True)
    args = ants_args(out, affine, syn)
    (out / 'command.txt').write_text('antsRegistration ' + ' '.join(args) + '\n')
    # antsRegistration's --verbose 1 output (one DIAGNOSTIC line per iteration) goes to a file:
    # the C++ library writes to file descriptor 1, so redirect that around the call
    sys.stdout.flush()
    saved = os.dup(1)
    with open(out / 'log.txt', 'w') as log:
        os.dup2(log.fileno(), 1)
        try:
            t0 = time.perf_counter()
            ants.registration(args, None)
            wall = time.perf_counter() - t0
        finally:
            os.dup2(saved, 1)
            os.close(saved)
    return wall, args


def ants_iterations(log):
    """Per level (iterations run, last metric value), from antsRegistration's DIAGNOSTIC lines."""
    import re
    levels = []
    for line in Path(log).read_text(errors='replace').splitlines():
        if line.startswith('XXDIAGNOSTIC'):
            levels.append([0, None])
        elif re.match(r'^\s*\d+DIAGNOSTIC,', line) and levels:
            levels[-1][0] += 1
            levels[-1][1] = float(line.split(',')[2])
    return levels


def regpipe_levels(stdout):
    """optim.syn's INFO line (regpipe run -v): iterations and metric per level."""
    for line in Path(stdout).read_text(errors='replace').splitlines():
        if 'optim.syn:' in line and 'levels' in line:
            return line.split('optim.syn:', 1)[1].strip()
    return None


def load_avg():
    return os.getloadavg()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--out', type=Path, default=Path('/tmp/regpipe_syn_bench'))
    ap.add_argument('--iterations', default='100x70x50x20')
    ap.add_argument('--shrink', default='8x4x2x1')
    ap.add_argument('--sigmas', default='3x2x1x0')
    ap.add_argument('--radius', type=int, default=4)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--skip-ants', action='store_true')
    ap.add_argument('--skip-regpipe', action='store_true')
    ap.add_argument('--fireants', type=Path, help="folder with FireANTs' 0GenericAffine.mat, 1Warp.nii.gz, timing.json")
    ap.add_argument('--json', type=Path, help='write the results here too')
    a = ap.parse_args()
    os.environ['ITK_GLOBAL_DEFAULT_NUMBER_OF_THREADS'] = str(a.threads)
    syn = dict(iterations=a.iterations, shrink=a.shrink, sigmas=a.sigmas, radius=a.radius, threads=a.threads)
    import synmetrics as S

    import hashlib
    info = {'load_before': load_avg(), 'syn': syn,
            'binaries_sha256_16': {p.name: hashlib.sha256(p.read_bytes()).hexdigest()[:16] for p in
                                   [REGPIPE, REPO / 'build' / 'plugins' / 'libregpipe_optim_syn.so',
                                    REPO / 'build' / 'plugins' / 'libregpipe_cost_cpu.so']}}
    # 1. the shared affine
    aff_wall, aff_rep, aff_yml = run_regpipe(a.out / 'affine')
    affine = a.out / 'affine' / '0GenericAffine.mat'
    info['affine_wall_s'] = aff_wall
    print(f'affine: {aff_wall:.1f} s  ({affine})', flush=True)
    rows = {}
    rows['affine only (shared start)'] = dict(files=(affine, None), wall=None, syn_s=None)
    own = {}  # each tool's own warped image, to check that we read its files as it meant them

    if not a.skip_ants:
        info['load_before_ants'] = load_avg()
        wall, args = run_ants(a.out / 'ants', affine, syn)
        warp = a.out / 'ants' / '1Warp.nii.gz'
        aff_ants = a.out / 'ants' / '0GenericAffine.mat'
        if not warp.exists():
            sys.exit(f'ANTs wrote no {warp}: {sorted(p.name for p in (a.out / "ants").iterdir())}')
        # ANTs writes the initial transform back as 0GenericAffine.mat; use our file if absent
        rows['ANTs SyN (antspyx 0.6.3, CPU)'] = dict(files=(aff_ants if aff_ants.exists() else affine, warp),
                                                     wall=wall, syn_s=None)
        own['ANTs SyN (antspyx 0.6.3, CPU)'] = a.out / 'ants' / 'Warped.nii.gz'
        info['ants_command'] = 'antsRegistration ' + ' '.join(args)
        info['ants_levels'] = ants_iterations(a.out / 'ants' / 'log.txt')
        print(f'ANTs: {wall:.1f} s', flush=True)

    if not a.skip_regpipe:
        info['load_before_regpipe'] = load_avg()
        wall, rep, yml = run_regpipe(a.out / 'regpipe', syn)
        aff_rp = a.out / 'regpipe' / '0GenericAffine.mat'
        same = filecmp.cmp(aff_rp, affine, shallow=False)
        info['regpipe_affine_identical_to_shared'] = same
        if not same:
            print('WARNING: the regpipe run\'s affine differs from the shared one', flush=True)
        st = [s for s in rep['registration_stages'] if s.get('transform') == 'syn'][0]
        aff_s = sum(s['seconds'] for s in rep['registration_stages'] if s.get('transform') != 'syn')
        rows['regpipe SyN (cpu.lcc + optim.syn, CPU)'] = dict(
            files=(aff_rp, a.out / 'regpipe' / '1Warp.nii.gz'), wall=wall - aff_s, syn_s=st['seconds'],
            whole=wall)
        own['regpipe SyN (cpu.lcc + optim.syn, CPU)'] = a.out / 'regpipe' / 'registered.nii.gz'
        info['regpipe_pipeline'] = yml.read_text()
        info['regpipe_syn_stage'] = st
        info['regpipe_levels'] = regpipe_levels(a.out / 'regpipe' / 'stdout.txt')
        print(f'regpipe: whole run {wall:.1f} s, syn stage {st["seconds"]:.1f} s', flush=True)

    if a.fireants:
        t = json.loads((a.fireants / 'timing.json').read_text())
        if not filecmp.cmp(a.fireants / '0GenericAffine.mat', affine, shallow=False):
            print('WARNING: FireANTs started from another affine than this run\'s shared one', flush=True)
        name = f'FireANTs {t.get("fireants", "")} SyN ({t.get("device", "GPU")})'
        rows[name] = dict(files=(a.fireants / '0GenericAffine.mat', a.fireants / '1Warp.nii.gz'),
                          wall=t['wall_s'], syn_s=t['syn_s'])
        own[name] = a.fireants / 'warped.nii.gz'
        info['fireants_timing'] = t
    info['load_after'] = load_avg()

    results = {}
    checks = []
    for name, r in rows.items():
        m, warped = S.evaluate(FIXED, MOVING, FIXED_MASK, *r['files'])
        if name in own and own[name].exists():  # a device reply may leave it behind
            import numpy as np
            t = S.load(own[name])[0]
            d = np.abs(t - warped)[3:-3, 3:-3, 3:-3]
            checks.append(f'{name}: our resampling vs its own warped image: correlation '
                          f'{S.global_cc(t, warped):.5f}, median |difference| {np.median(d):.3g}, '
                          f'99th percentile {np.percentile(d, 99):.3g} (intensities 0-{warped.max():.0f})')
        m.update(wall=r['wall'], syn_s=r['syn_s'], whole=r.get('whole'))
        results[name] = m
    info['head_mask_ceiling'] = S.mask_ceiling(FIXED, FIXED_MASK)

    def f(x, fmt):
        return '-' if x is None else format(x, fmt)

    print()
    print(f'SyN {a.iterations}, shrink {a.shrink}, sigmas {a.sigmas} vox, CC radius {a.radius}, '
          f'{a.threads} threads; load average before/after: '
          f'{" ".join(f"{x:.2f}" for x in info["load_before"])} / {" ".join(f"{x:.2f}" for x in info["load_after"])}')
    print('1-minute load average just before ANTs / regpipe: ' +
          ' / '.join(f'{info[k][0]:.2f}' for k in ('load_before_ants', 'load_before_regpipe') if k in info))
    print('binaries (sha256, 16 hex): ' + ', '.join(f'{k} {v}' for k, v in info['binaries_sha256_16'].items()))
    print(f'shared affine md5: {hashlib.md5(affine.read_bytes()).hexdigest()}')
    print()
    print('| run | SyN wall (s) | SyN stage (s) | global CC | global CC (head mask) | local CC r4 | local CC r4 (head mask) '
          '| Dice head vs MNI152_mask_2mm | Dice brain (same procedure) | det J <= 0 | det J min / max | max |u| (mm) |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for name, m in results.items():
        print(f'| {name} | {f(m["wall"], ".1f")} | {f(m["syn_s"], ".1f")} | {m["cc_global"]:.4f} | {m["cc_global_brain"]:.4f} | '
              f'{m["lcc4"]:.4f} | {m["lcc4_brain"]:.4f} | {m["dice_head_mni_mask"]:.4f} | {m["dice_brain"]:.4f} | '
              f'{m["neg_jac"]:.2e} | {m["jac_min"]:.3f} / {m["jac_max"]:.2f} | {m["max_disp_mm"]:.1f} |')
    print()
    print(f'head-mask procedure on MNI152_T1_2mm itself vs MNI152_mask_2mm (ceiling): {info["head_mask_ceiling"]:.4f}')
    if 'regpipe_affine_identical_to_shared' in info:
        print(f'regpipe run\'s affine identical to the shared one: {info["regpipe_affine_identical_to_shared"]}; '
              f'its whole run {results["regpipe SyN (cpu.lcc + optim.syn, CPU)"]["whole"]:.1f} s')
    for c in checks:
        print(c)
    if 'ants_levels' in info:
        print('ANTs SyN per level (iterations, last metric): ' +
              ', '.join(f'{n} ({v:.6f})' if v is not None else f'{n}' for n, v in info['ants_levels']))
    if info.get('regpipe_levels'):
        print('regpipe optim.syn: ' + info['regpipe_levels'])
    info['checks'] = checks
    if a.json:
        a.json.write_text(json.dumps({'info': info, 'results': results}, indent=1, default=str))


if __name__ == '__main__':
    main()
