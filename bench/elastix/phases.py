#!/usr/bin/env python3
"""Where regpipe's time goes on run.sh's cases: the phases of each run's report.json.

    phases.py WORK_DIR [TOOL]      # TOOL: flirt (default), served, before, powell

Reads WORK_DIR/results/<case>/<TOOL>.<run>/report.json (run.sh keeps them) and prints, per
case, the medians over the runs of the reported phases (seconds; "rest" is the total less
reading, registration and writing: evaluation.truth's error, mostly) and the evaluations and
calls of each level, with the wall time run.sh measured (<TOOL>.seconds) beside them.
"""
import glob
import json
import os
import statistics
import sys


def median(values):
    return statistics.median(values) if values else float("nan")


def main():
    work = sys.argv[1]
    tool = sys.argv[2] if len(sys.argv) > 2 else "flirt"
    levels = ["8", "4", "2", "1"]
    print(f"| case | wall | total | reading | registration | pyramid | search | writing | rest | "
          + " | ".join(f"{mm} mm s (evals/calls)" for mm in levels) + " |")
    print("|---|" + "---:|" * (8 + len(levels)))
    for case_dir in sorted(glob.glob(os.path.join(work, "results", "*"))):
        reports = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(case_dir, tool + ".*", "report.json")))]
        if not reports:
            continue
        walls = []
        seconds_file = os.path.join(case_dir, tool + ".seconds")
        if os.path.exists(seconds_file):
            walls = [float(v) for v in open(seconds_file).read().split()[1:]]
        cells = [median(walls)] + [median([r["seconds"][k] for r in reports])
                                   for k in ("total", "reading", "registration", "pyramid", "search", "writing")]
        # What the phases leave out of the total: evaluation.truth's error, the output folder.
        cells.append(median([r["seconds"]["total"] - r["seconds"]["reading"] - r["seconds"]["registration"]
                             - r["seconds"]["writing"] for r in reports]))
        row = [f"{v:.3f}" for v in cells]
        for mm in levels:
            # optim.flirt names its stages "8mm coarse search (...)", "1mm 12dof (...)"; optim.powell "1 mm".
            stages = [[s for s in r["stages"] if not s["level_setup"] and
                       (s["name"] == f"{mm} mm" or s["name"].startswith(f"{mm}mm "))] for r in reports]
            if not all(stages):
                row.append("-")
                continue
            row.append(f"{median([sum(s['seconds'] for s in st) for st in stages]):.3f} "
                       f"({median([sum(s['evaluations'] for s in st) for st in stages]):.0f}/"
                       f"{median([sum(s['batches'] for s in st) for st in stages]):.0f})")
        print(f"| {os.path.basename(case_dir)} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
