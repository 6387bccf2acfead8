#!/usr/bin/env python3
"""The Markdown table of bench/batch_devices/device_scaling.sh's results.

    python3 bench/batch_devices/table.py RESULTS_DIR

For each configuration, medians over its runs: the batch's registrations per minute
(batch_report.json's wall clock, from the start of `regpipe run` to its last file), each
worker's own rate (its first image's start to its last image's end), the time one image holds
its worker's registering thread (registration and the registered image's resampling), and
each GPU's mean utilisation while the batch ran (nvidia-smi, 250 ms samples).
"""
import csv
import json
import sys
from collections import defaultdict
from pathlib import Path


def utilisation(path):
    """Mean utilisation per GPU index over the samples, in percent."""
    per_gpu = defaultdict(list)
    if not path.exists():
        return {}
    for row in csv.reader(path.open()):
        if len(row) < 3:
            continue
        try:
            per_gpu[int(row[1])].append(float(row[2].strip().rstrip(" %")))
        except ValueError:
            continue
    return {gpu: sum(v) / len(v) for gpu, v in per_gpu.items() if v}


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def runs_by_config(results):
    """runs.txt's runs grouped by configuration (the name before _run<k>), in order."""
    runs = defaultdict(list)
    for line in (results / "runs.txt").read_text().splitlines():
        name = line.split()[0]
        runs[name.rsplit("_run", 1)[0]].append(name)
    return runs


def main():
    results = Path(sys.argv[1])
    runs = runs_by_config(results)
    print("| execution.devices | GPUs | workers | registered images written | runs | failed | "
          "registrations / min | per worker / min | per image, registering thread s | mean GPU utilisation |")
    print("|---|---:|---:|---|---:|---:|---:|---|---:|---|")
    for config, names in runs.items():
        reports = [json.loads((results / f"{n}.json").read_text()) for n in names if (results / f"{n}.json").exists()]
        if not reports:
            print(f"| {config} | | | | {len(names)} | all | | | | |")
            continue
        workers = reports[0]["workers"]
        devices = config.split("_")[1]
        devices = devices.replace("-", ":", 1) if devices.startswith("cpu") else devices.replace("-", ",")
        gpus = len({w["device_index"] for w in workers if w["device_index"] is not None})
        rate = median([r["summary"]["registrations_per_minute"] for r in reports])
        per_worker = ", ".join(
            f"{median([r['workers'][k]['registrations_per_minute'] for r in reports]):.0f}" for k in range(len(workers)))
        # What one image holds its worker's registering thread for: registration and resampling.
        thread = median([(r["summary"]["seconds_registration"] + r["summary"]["seconds_resampling"]) /
                         max(1, r["summary"]["images"] - r["summary"]["failures"]) for r in reports])
        utils = [utilisation(results / f"{n}.util.csv") for n in names]
        gpu_ids = sorted({g for u in utils for g in u})
        util_text = ", ".join(f"GPU{g} {median([u[g] for u in utils if g in u]):.0f} %" for g in gpu_ids)
        failed = sum(r["summary"]["failures"] for r in reports)
        images = "yes" if config.endswith("true") else "no"
        print(f"| `{devices}` | {gpus} | {len(workers)} | {images} | {len(reports)} | {failed} | {rate:.0f} | "
              f"{per_worker} | {thread:.3f} | {util_text} |")


if __name__ == "__main__":
    main()
