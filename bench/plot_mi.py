#!/usr/bin/env python3
"""SVG plots of regpipe_bench_mi's CSV: microseconds per evaluation versus joint bins at 1 mm
(256x256x160), one curve per cuda.mi scheme, one figure per data set and batch size (the two
cases of Shams et al. 2010, Fig. 7: brain images and uniform random data).

    python3 bench/plot_mi.py bench/results/cost_mi_h100.csv bench/results/
"""
import csv
import sys
from collections import defaultdict

from svg_plot import plot


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    out = sys.argv[2].rstrip("/")
    for data in sorted({r["data"] for r in rows}):
        for k in sorted({int(r["k"]) for r in rows}):
            series = defaultdict(list)
            for r in rows:
                if r["data"] == data and int(r["k"]) == k and r["cost"] == "cuda.mi":
                    series[r["scheme"]].append((float(r["bins"]), float(r["us_per_eval"])))
            if series:
                plot(series, f"cuda.mi at 1 mm, {data}, k={k}: versus bins per image", "bins per image",
                     f"{out}/cost_mi_{data}_k{k}.svg")


if __name__ == "__main__":
    main()
