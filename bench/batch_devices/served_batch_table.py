#!/usr/bin/env python3
"""The Markdown tables of bench/batch_devices/served_batch.sh's results.

    python3 bench/batch_devices/served_batch_table.py RESULTS_DIR

Throughput: for each build, mode (plain `regpipe run`, or through `regpipe serve`),
registrations at once and registered images or not, medians over its runs of the whole
command's wall clock (the client's, from its start to its exit) and the registrations per
minute it gives, batch_report.json's own rate (from the batch's start in the supervisor to its
last file: no process start before it nor exit after), the worker's rate (its first image's
start to its last image's end) and the GPU's mean utilisation.

Timeline: where the wall clock goes, medians in seconds from the batch's start (the batch
reports of builds that have them): the supervisor process's start before it, the worker
process started (or taken from the server), its own process start (long before, for a served
one), its entry, components made, reference read and prepared, its first image handed,
started, its last image done, its end, the report written (seconds_total) and the client's
exit (the command's wall clock, measured from the client's start).
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from table import median, utilisation  # noqa: E402

EVENTS = ["started", "process_start", "entered", "components", "reference_read", "reference_prepared",
          "first_handed", "first_image_start", "last_image_done", "summary", "ended"]


def runs(results):
    """runs.txt's runs: configuration -> [(name, rc, wall_s)]."""
    out = {}
    for line in (results / "runs.txt").read_text().splitlines():
        name, rc, wall = line.split()
        out.setdefault(name.rsplit("_run", 1)[0], []).append((name, int(rc[3:]), float(wall[7:])))
    return out


def cell(values, form="{:.3f}"):
    values = [v for v in values if v is not None]
    return form.format(median(values)) if values else ""


def main():
    results = Path(sys.argv[1])
    by_config = runs(results)
    order = sorted(by_config, key=lambda c: (c.endswith("false"), c.split("_")[1] != "before", c.split("_")[2],
                                              c.split("_")[3] != "auto", c.split("_")[3]))
    print("| images | registered images | build | mode | at once | runs | failed | command wall s | "
          "registrations / min (command) | registrations / min (batch report) | worker / min | mean GPU utilisation |")
    print("|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    timelines = []
    for config in order:
        n, build, mode, count = config.split("_")[:4]
        n = n[1:]
        images = "yes" if config.endswith("true") else "no"
        entries = by_config[config]
        reports = [json.loads((results / f"{name}.json").read_text()) for name, rc, _ in entries
                   if rc == 0 and (results / f"{name}.json").exists()]
        walls = [wall for _, rc, wall in entries if rc == 0]
        failed = sum(1 for _, rc, _ in entries if rc != 0) + sum(r["summary"]["failures"] for r in reports)
        at_once = reports[0]["workers"][0].get("registrations_at_once", "") if reports else ""
        utils = [u[0] for u in (utilisation(results / f"{name}.util.csv") for name, _, _ in entries) if 0 in u]
        per_minute = [60.0 * int(n) / w for w in walls]
        print(f"| {n} | {images} | {build} | {mode} | {at_once} | {len(entries)} | {failed} | {cell(walls, '{:.2f}')} | "
              f"{cell(per_minute, '{:.0f}')} | {cell([r['summary']['registrations_per_minute'] for r in reports], '{:.0f}')} | "
              f"{cell([r['workers'][0]['registrations_per_minute'] for r in reports], '{:.0f}')} | "
              f"{cell(utils, '{:.0f} %')} |")
        timelines.append((n, images, build, mode, at_once, entries, reports, walls))

    print()
    print("| registered images | build | mode | at once | supervisor process start | "
          + " | ".join(e.replace("_", " ") for e in EVENTS) + " | report written | command exit |")
    print("|---|---|---|---:|" + "---:|" * (len(EVENTS) + 3))
    for n, images, build, mode, at_once, entries, reports, walls in timelines:
        if not reports:
            continue
        before = [-r["summary"]["seconds_before_batch"] for r in reports if r["summary"].get("seconds_before_batch") is not None]
        events = [cell([r["workers"][0].get("timeline", {}).get(e) for r in reports], "{:.2f}") for e in EVENTS]
        if build == "before" or not any(events):  # no timeline: its first and last image only
            events = [""] * len(EVENTS)
        total = cell([r["summary"]["seconds_total"] for r in reports], "{:.2f}")
        # The client's exit, in the batch's time: its wall clock less the supervisor's start.
        exits = [w - (r["summary"].get("seconds_before_batch") or 0.0) for w, r in zip(walls, reports)]
        print(f"| {images} | {build} | {mode} | {at_once} | {cell(before, '{:.2f}')} | " + " | ".join(events) +
              f" | {total} | {cell(exits, '{:.2f}') if before else ''} |")


if __name__ == "__main__":
    main()
