#!/usr/bin/env python3
"""SVG plots of regpipe_bench_cr's CSV (no plotting library needed): microseconds per
evaluation versus bins and versus thread blocks (1 mm), one curve per scheme, log y axis.

    python3 bench/plot_cr.py bench/results/cost_cr_h100.csv bench/results/
"""
import csv
import math
import sys
from collections import defaultdict

COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"]


def plot(series, title, xlabel, path):
    width, height, left, right, top, bottom = 640, 400, 70, 150, 40, 50
    xs = sorted({x for points in series.values() for x, _ in points})
    ys = [y for points in series.values() for _, y in points]
    lo, hi = math.log10(min(ys)), math.log10(max(ys))
    lo, hi = math.floor(lo), math.ceil(hi) if hi > lo else lo + 1

    def px(x):
        return left + (width - left - right) * xs.index(x) / max(1, len(xs) - 1)

    def py(y):
        return top + (height - top - bottom) * (hi - math.log10(y)) / (hi - lo)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>',
           f'<text x="{(left + width - right) / 2}" y="{height - 10}" text-anchor="middle">{xlabel}</text>',
           f'<text x="15" y="{height / 2}" transform="rotate(-90 15 {height / 2})" text-anchor="middle">microseconds per evaluation</text>']
    for decade in range(lo, hi + 1):
        y = py(10 ** decade)
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y}" y2="{y}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 5}" y="{y + 4}" text-anchor="end">{10 ** decade:g}</text>')
    for x in xs:
        out.append(f'<text x="{px(x)}" y="{height - bottom + 18}" text-anchor="middle">{x:g}</text>')
    for i, (name, points) in enumerate(sorted(series.items())):
        colour = COLOURS[i % len(COLOURS)]
        pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in sorted(points))
        out.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{width - right + 10}" y="{top + 16 * i + 10}" fill="{colour}">{name}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    out = sys.argv[2].rstrip("/")
    for experiment, key, label in [("bins", "bins", "bins"), ("blocks", "blocks", "thread blocks")]:
        series = defaultdict(list)
        for r in rows:
            if r["experiment"] == experiment:
                series[r["scheme"]].append((float(r[key]), float(r["us_per_eval"])))
        if series:
            plot(series, f"cuda.cr at 1 mm, k=1: versus {label}", label, f"{out}/cost_cr_vs_{experiment}.svg")
    series = defaultdict(list)
    for r in rows:
        if r["experiment"] == "levels" and int(r["k"]) > 1:
            series[r["scheme"]].append((float(r["level_mm"]), float(r["us_per_eval"])))
    if series:
        plot(series, "cuda.cr, bins 256, batched (k=256 at 8/4 mm, 64 at 2/1 mm)", "level (mm)",
             f"{out}/cost_cr_vs_level.svg")


if __name__ == "__main__":
    main()
