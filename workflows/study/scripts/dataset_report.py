#!/usr/bin/env python3
"""Gathers the shards' batch_report.json into one dataset report: a CSV row per image (its
cost, time and status) and an HTML page of the QA pictures, failures first, then the highest
final costs (the likeliest misregistrations). Python 3 standard library only.

    dataset_report.py --csv study.csv --html study.html shards/*/batch_report.json
"""
import argparse
import csv
import html
import json
import os
import urllib.parse

COLUMNS = ["image", "subject", "session", "status", "final_cost", "seconds",
           "seconds_registration", "skipped_complete", "shard", "error", "outputs"]


def earlier_seconds(outputs):
    """An image skipped as complete: its times are those of the run that registered it."""
    with open(os.path.join(outputs, "report.json")) as f:
        seconds = json.load(f)["seconds"]
    return seconds.get("total"), seconds.get("registration")


def rows_of(report_path):
    with open(report_path) as f:
        report = json.load(f)
    shard = os.path.basename(os.path.dirname(report_path))
    for entry in report["images"]:
        skipped = entry["status"] == "skipped_complete"
        seconds, registration = (earlier_seconds(entry["outputs"]) if skipped
                                 else (entry["seconds"], entry["seconds_registration"]))
        yield {"image": entry["path"], "subject": entry["bids"].get("sub", ""),
               "session": entry["bids"].get("ses", ""),
               "status": "failed" if entry["status"] == "failed" else "ok",
               "final_cost": entry["final_cost"], "seconds": seconds,
               "seconds_registration": registration,
               "skipped_complete": skipped,
               "shard": shard, "error": entry["error"] or "", "outputs": entry["outputs"] or ""}


def write_csv(rows, path):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def card(row, html_dir):
    name = html.escape(row["image"])
    if row["status"] == "failed":
        return (f'<figure class="failed"><figcaption><b>FAILED</b> {name}<br>'
                f'{html.escape(row["error"])}</figcaption></figure>')
    qa = urllib.parse.quote(os.path.relpath(os.path.join(row["outputs"], "qa.png"), html_dir))
    return (f'<figure><a href="{qa}"><img src="{qa}" loading="lazy" alt="{name}"></a>'
            f'<figcaption>{name}<br>cost {row["final_cost"]:.6g}, {row["seconds"]:.1f} s</figcaption></figure>')


def write_html(rows, path):
    ordered = sorted(rows, key=lambda r: (r["status"] != "failed", -(r["final_cost"] or 0.0), r["image"]))
    failed = sum(r["status"] == "failed" for r in rows)
    html_dir = os.path.dirname(os.path.abspath(path))
    cards = "\n".join(card(r, html_dir) for r in ordered)
    with open(path, "w") as f:
        f.write(f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>regpipe study report</title><style>
body {{ font-family: sans-serif; }}
figure {{ display: inline-block; width: 360px; margin: 6px; vertical-align: top; font-size: 12px; }}
figure img {{ width: 100%; }}
figure.failed {{ border: 3px solid #c00; background: #fee; padding: 4px; }}
</style></head><body>
<h1>regpipe study report</h1>
<p>{len(rows)} images, {failed} failed. Failures first (marked), then by final cost, highest
(the likeliest misregistrations) first. Click a picture for its full-size qa.png.</p>
{cards}
</body></html>
""")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--csv", required=True)
    parser.add_argument("--html", required=True)
    parser.add_argument("reports", nargs="+", help="the shards' batch_report.json")
    args = parser.parse_args()
    rows = [row for report in args.reports for row in rows_of(report)]
    write_csv(rows, args.csv)
    write_html(rows, args.html)
    print(f"dataset_report: {len(rows)} images, {sum(r['status'] == 'failed' for r in rows)} failed "
          f"-> {args.csv}, {args.html}")


if __name__ == "__main__":
    main()
