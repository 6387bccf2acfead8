"""One SVG line plot, log y axis, one curve per series (no plotting library needed); shared by
the benchmark plot scripts (plot_cr.py, plot_mi.py)."""
import math

COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"]


def plot(series, title, xlabel, path, ylabel="microseconds per evaluation"):
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
           f'<text x="15" y="{height / 2}" transform="rotate(-90 15 {height / 2})" text-anchor="middle">{ylabel}</text>']
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
