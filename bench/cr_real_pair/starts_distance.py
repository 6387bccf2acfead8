#!/usr/bin/env python3
"""Distance of each header start's result from one anchor result (issue 15).

    starts_distance.py DATA_DIR STARTS_DIR ANCHOR RESULT_PATTERN...

STARTS_DIR is header_starts.py's output. ANCHOR is a world matrix file (normally cpu.mi's
result from the identity start). Each RESULT_PATTERN names one registration per start with
{start} in its path (e.g. runs/cr_{start}/moving_to_reference_world.txt); start NAME's result
M is undone by its change G, inv(G) M, and compared with ANCHOR: mean displacement over
chris_t1's head (bench/elastix/error_mm.py's metric). Prints a markdown table, one column per
pattern.
"""
import os
import sys

import nibabel
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "elastix"))
sys.path.insert(0, here)
from header_starts import STARTS  # noqa: E402
from transforms import mean_displacement_mm, read_transform  # noqa: E402


def main(data_dir, starts_dir, anchor_path, patterns):
    reference = nibabel.load(os.path.join(data_dir, "chris_t1.nii.gz"))
    anchor = read_transform(anchor_path)
    print("| start | " + " | ".join(patterns) + " |")
    print("|---|" + "---:|" * len(patterns))
    for start in STARTS:
        change = read_transform(os.path.join(starts_dir, f"{start}.txt"))
        cells = []
        for pattern in patterns:
            found = np.linalg.inv(change) @ read_transform(pattern.format(start=start))
            cells.append(f"{mean_displacement_mm(found, anchor, reference):.2f}")
        print(f"| {start} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit("usage: starts_distance.py DATA_DIR STARTS_DIR ANCHOR RESULT_PATTERN...")
    try:
        main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"starts_distance.py: {e}")
