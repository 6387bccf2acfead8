#!/usr/bin/env python3
"""Markdown tables from device_run.sh's runs.tar.gz: per variant the median registration and
search seconds over the rounds after the warm-up (round 0), the single-search stages' calls,
evaluations and median seconds, and whether every run's transform equals the first before-run's
bit for bit.  Usage: table.py runs.tar.gz [VARIANT ...] (default: speculation's four; other
variants, e.g. cost_cr_before_after's, list every search stage)."""
import io
import json
import statistics
import sys
import tarfile

SPECULATION = ["before", "off", "auto", "on"]


def load(path):
    runs = {}  # (variant, round) -> (report, transform text, log)
    with tarfile.open(path) as tar:
        files = {m.name: m for m in tar.getmembers() if m.isfile()}
        for name in files:
            if not name.endswith("flirt_cr_report.json"):
                continue
            folder = name.rsplit("/", 1)[0]
            variant, round_ = folder.rsplit("/", 1)[1].rsplit("_", 1)
            read = lambda n: tar.extractfile(files[n]).read().decode()
            report = json.loads(read(name))
            runs[(variant, int(round_))] = (report, read(folder + "/flirt_cr_transform.mat"),
                                            read(folder + "/log.txt"))
    return runs


def main():
    runs = load(sys.argv[1])
    variants = sys.argv[2:] or SPECULATION
    rounds = sorted({r for _, r in runs if r > 0})
    reference = runs[("before", 0)][1]
    print("| variant | registration s (median) | search s | calls, whole search | evaluations |"
          " transform = before's |")
    print("|---|---:|---:|---:|---:|---|")
    for v in variants:
        reps = [runs[(v, r)][0] for r in rounds if (v, r) in runs]
        if not reps:
            continue
        same = all(runs[(v, r)][1] == reference for r in [0] + rounds if (v, r) in runs)
        calls = statistics.median(sum(s["batches"] for s in x["stages"]) for x in reps)
        evals = statistics.median(sum(s["evaluations"] for s in x["stages"]) for x in reps)
        print(f"| {v} | {statistics.median(x['seconds']['registration'] for x in reps):.4f} |"
              f" {statistics.median(x['seconds']['search'] for x in reps):.4f} | {calls:.0f} |"
              f" {evals:.0f} | {'yes' if same else 'NO'} |")
    print()
    names = [s["name"] for s in runs[("before", rounds[0])][0]["stages"]
             if ("(1 start)" in s["name"] if variants == SPECULATION else not s["level_setup"])]
    print("| stage | " + " | ".join(f"{v} calls / evaluations / ms" for v in variants) + " |")
    print("|---|" + "---:|" * len(variants))
    for name in names:
        cells = []
        for v in variants:
            stages = [next(s for s in runs[(v, r)][0]["stages"] if s["name"] == name)
                      for r in rounds if (v, r) in runs]
            cells.append(f"{statistics.median(s['batches'] for s in stages):.0f} / "
                         f"{statistics.median(s['evaluations'] for s in stages):.0f} / "
                         f"{1e3 * statistics.median(s['seconds'] for s in stages):.1f}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()
    for v in ("auto", "on") if variants == SPECULATION else ():
        for line in runs[(v, rounds[-1])][2].splitlines():
            if "(1 start)" in line and "fastest calls" in line:
                print(f"- {v}: {line.split('optim.flirt ', 1)[1]}")


if __name__ == "__main__":
    main()
