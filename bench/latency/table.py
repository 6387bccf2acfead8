#!/usr/bin/env python3
"""Medians of bench/latency/device_latency.sh's output as markdown tables.

    table.py LOG
"""
import re
import statistics
import sys


def median(values):
    return f"{statistics.median(values):.3f}" if values else "-"


def main(path):
    floor = {"cuInit": [], "primary context": [], "allocation and kernel": [], "wall": [],
             "context teardown": []}
    process = {"regpipe --version": [], "regpipe plugins": []}
    runs = {}
    device = ""
    for line in open(path):
        line = line.strip()
        if line.startswith("device: "):
            device = line[len("device: "):]
        elif line.startswith("cuda_floor"):
            for key in floor:
                m = re.search(re.escape(key) + r" ([0-9.]+)", line)
                if m:
                    floor[key].append(float(m.group(1)))
        elif line.split(":")[0] in process:
            process[line.split(":")[0]].append(float(line.split("wall ")[1]))
        elif line.startswith("run "):
            label = line[4:line.index(":")]
            r = runs.setdefault(label, {k: [] for k in ("wall", "total", "reading", "registration", "writing")})
            r["wall"].append(float(re.search(r"wall ([0-9.]+)", line).group(1)))
            r["total"].append(float(re.search(r"total ([0-9.]+)", line).group(1)))
            for key in ("reading", "registration", "writing"):
                r[key].append(float(re.search(key + r" ([0-9.]+)", line).group(1)))
    print(f"device: {device}; medians of {len(floor['wall'])} rounds, seconds\n")
    print("| any CUDA process (cuda_floor) | cuInit | primary context | allocation and kernel | process wall | context teardown (reset) |")
    print("|---|---:|---:|---:|---:|---:|")
    print("| | " + " | ".join(median(floor[k]) for k in ("cuInit", "primary context", "allocation and kernel", "wall", "context teardown")) + " |\n")
    print("| process without CUDA | wall |")
    print("|---|---:|")
    for key, values in process.items():
        print(f"| `{key}` | {median(values)} |")
    print()
    print("| `regpipe run` (flirt_cr, cuda.cr), registered image | wall | regpipe's total | reading | registration | writing |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, r in runs.items():
        print(f"| {label} | " + " | ".join(median(r[k]) for k in ("wall", "total", "reading", "registration", "writing")) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
