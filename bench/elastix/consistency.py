#!/usr/bin/env python3
"""How far the registrations of header-changed copies disagree (header_changes.py's copies).

    consistency.py REFERENCE CHANGES_DIR RESULT_DIR...

Each RESULT_DIR holds one registration per copy: RESULT_DIR/change_XX/[prefix]transform_world.txt
(a regpipe batch over CHANGES_DIR/change_*.nii.gz writes exactly that). Copy XX's result M_XX
undone by its change G_XX, inv(G_XX) M_XX, estimates the same reference -> moving transform
as every other copy's; the table gives, per RESULT_DIR, the mean displacement (regpipe's
metric over the reference head) of each estimate from their mean matrix: median and largest.
"""
import glob
import os
import sys

import nibabel
import numpy as np

from transforms import mean_displacement_mm, read_transform


def spread(reference, changes_dir, result_dir):
    estimates = []
    for path in sorted(glob.glob(os.path.join(changes_dir, "change_*.txt"))):
        name = os.path.splitext(os.path.basename(path))[0]
        change = read_transform(path)
        found_paths = glob.glob(os.path.join(result_dir, name, "*transform_world.txt"))
        if len(found_paths) != 1:
            sys.exit(f"consistency.py: expected one *transform_world.txt in {result_dir}/{name}")
        found = read_transform(found_paths[0])
        estimates.append(np.linalg.inv(change) @ found)
    mean = np.mean(estimates, axis=0)
    d = sorted(mean_displacement_mm(e, mean, reference) for e in estimates)
    return len(d), float(np.median(d)), d[-1]


def main(reference_path, changes_dir, result_dirs):
    reference = nibabel.load(reference_path)
    print("| results | copies | median mm from the mean | largest mm |")
    print("|---|---:|---:|---:|")
    for r in result_dirs:
        n, median, largest = spread(reference, changes_dir, r)
        print(f"| {r} | {n} | {median:.4f} | {largest:.4f} |")


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit("usage: consistency.py REFERENCE CHANGES_DIR RESULT_DIR...")
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
