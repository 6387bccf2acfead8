#!/usr/bin/env python3
"""SVG plots of regpipe_bench_cr's CSV (no plotting library needed): microseconds per
evaluation versus bins, thread blocks and batch size (1 mm), and versus level, one curve per
scheme, log y axis.

    python3 bench/plot_cr.py bench/results/cost_cr_h100.csv bench/results/
"""
import csv
import sys
from collections import defaultdict

from svg_plot import plot


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    out = sys.argv[2].rstrip("/")
    for experiment, key, label, title in [("bins", "bins", "bins", "k=1"), ("blocks", "blocks", "thread blocks", "k=1"),
                                          ("batch", "k", "transforms per call (k)", "bins 256")]:
        series = defaultdict(list)
        for r in rows:
            if r["experiment"] == experiment:
                series[r["scheme"]].append((float(r[key]), float(r["us_per_eval"])))
        if series:
            plot(series, f"cuda.cr at 1 mm, {title}: versus {label}", label, f"{out}/cost_cr_vs_{experiment}.svg")
    series = defaultdict(list)
    for r in rows:
        if r["experiment"] == "levels" and int(r["k"]) > 1:
            series[r["scheme"]].append((float(r["level_mm"]), float(r["us_per_eval"])))
    if series:
        plot(series, "cuda.cr, bins 256, batched (k=256 at 8/4 mm, 64 at 2/1 mm)", "level (mm)",
             f"{out}/cost_cr_vs_level.svg")


if __name__ == "__main__":
    main()
