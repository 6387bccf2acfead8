#!/usr/bin/env python3
"""Per-run lines of served_env.sh: wall clock, GPU utilisation, the batch timeline (components
made, reference prepared, first image started, last image done; seconds from the batch start),
the mean registration seconds of the first four images and the median of the rest; then the
lone registrations' phases and search stages, and each batch run's stages (the median over its
images, written by the --stages form after each run), to see which stages grow when
registrations share the GPU.
    served_env_summary.py RESULTS_DIR
    served_env_summary.py --stages BATCH_OUT_DIR   (one line: the median seconds of each stage)"""
import glob
import json
import os
import statistics
import sys


def stage_medians(out_dir):
    """The median seconds of each search stage over the images of a batch's output folder."""
    seconds = {}
    for p in glob.glob(os.path.join(out_dir, "*", "*report.json")):
        for s in json.load(open(p))["stages"]:
            if not s["level_setup"]:
                seconds.setdefault(s["name"][:10], []).append(s["seconds"])
    return " ".join(f"{k}={statistics.median(v):.4f}" for k, v in seconds.items())


if sys.argv[1] == "--stages":
    print(stage_medians(sys.argv[2]))
    sys.exit(0)

R = sys.argv[1]
walls = {}
for line in open(os.path.join(R, "runs.txt")):
    parts = line.split()
    walls[parts[0]] = parts[2].split("=")[1] + " util=" + parts[3].split("=")[1]
for name in walls:
    p = os.path.join(R, name + ".json")
    if not os.path.exists(p):
        print(name, walls[name], "no json")
        continue
    r = json.load(open(p))
    t = r["workers"][0]["timeline"]
    regs = [i["seconds_registration"] for i in r["images"]]
    print(f"{name:22s} wall={walls[name]:18s} comp={t['components']:.3f} ref={t['reference_prepared']:.3f} "
          f"first={t['first_image_start']:.3f} last={t['last_image_done']:.3f} first4={statistics.mean(regs[:4]):.3f} "
          f"rest_med={statistics.median(regs[4:]) if regs[4:] else float('nan'):.3f} sum={sum(regs):.2f}")
    stages = os.path.join(R, name + ".stages")
    if os.path.exists(stages):
        print("    stages:", open(stages).read().strip())
for p in sorted(glob.glob(os.path.join(R, "lone_*.json"))):
    r = json.load(open(p))
    print(os.path.basename(p), {k: round(v, 3) for k, v in r["seconds"].items()})
    for s in r["stages"]:
        if not s["level_setup"]:
            print("   ", s["name"][:28], round(s["seconds"], 4), s["evaluations"], s["batches"])
