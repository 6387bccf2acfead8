#!/usr/bin/env python3
"""Mean displacement (mm) between two reference->moving transforms over the reference head.

    error_mm.py REFERENCE FOUND TRUTH

FOUND and TRUTH are each an elastix TransformParameters file (AffineTransform) or a regpipe
world matrix file (RAS, moving -> reference: truth_world.txt, *world.txt). The metric is
regpipe's: mean_displacement_mm over the voxels above foreground_threshold.
"""
import sys

import nibabel

from transforms import mean_displacement_mm, read_transform

if len(sys.argv) != 4:
    sys.exit("usage: error_mm.py REFERENCE FOUND TRUTH")
try:
    reference = nibabel.load(sys.argv[1])
    found, truth = read_transform(sys.argv[2]), read_transform(sys.argv[3])
except (OSError, ValueError) as e:
    sys.exit(f"error_mm.py: {e}")
print(f"{mean_displacement_mm(found, truth, reference):.4f}")
