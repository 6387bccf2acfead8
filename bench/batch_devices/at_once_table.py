#!/usr/bin/env python3
"""The Markdown table of bench/batch_devices/at_once_before_after.sh's results.

    python3 bench/batch_devices/at_once_table.py RESULTS_DIR

For each batch size, registered images or not, and build (`before`, or the
execution.registrations_per_worker of the build after), medians over its runs: the batch's
registrations per minute (batch_report.json: from the start of `regpipe run` to its last
file), the worker's own rate (its first image's start to its last image's end), the seconds
one image spends registering (its registration and the registered image's resampling, on its
thread) and the GPU's mean utilisation while the batch ran.
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from table import median, runs_by_config, utilisation  # noqa: E402


def main():
    results = Path(sys.argv[1])
    runs = runs_by_config(results)
    print("| images | registered images written | build | registrations at once | runs | failed | "
          "registrations / min | worker / min | per image, registering s | mean GPU utilisation |")
    print("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for config in sorted(runs, key=lambda c: (int(c.split("_")[0][1:]), c.endswith("false"), c.split("_")[1] != "before",
                                               c.split("_")[1])):
        names = runs[config]
        n, build = config.split("_")[0][1:], config.split("_")[1]
        reports = [json.loads((results / f"{r}.json").read_text()) for r in names if (results / f"{r}.json").exists()]
        images = "yes" if config.endswith("true") else "no"
        if not reports:
            print(f"| {n} | {images} | {build} | | {len(names)} | all | | | | |")
            continue
        rate = median([r["summary"]["registrations_per_minute"] for r in reports])
        worker = median([r["workers"][0]["registrations_per_minute"] for r in reports])
        per_image = median([(r["summary"]["seconds_registration"] + r["summary"]["seconds_resampling"]) /
                            max(1, r["summary"]["images"] - r["summary"]["failures"]) for r in reports])
        at_once = reports[0]["workers"][0].get("registrations_at_once", 1)
        utils = [u[0] for u in (utilisation(results / f"{r}.util.csv") for r in names) if 0 in u]
        failed = sum(r["summary"]["failures"] for r in reports)
        label = "before" if build == "before" else "after"
        print(f"| {n} | {images} | {label} | {at_once} | {len(reports)} | {failed} | {rate:.0f} | {worker:.0f} | "
              f"{per_image:.3f} | {median(utils):.0f} % |")


if __name__ == "__main__":
    main()
