#!/usr/bin/env python3
"""The study workflow (workflows/study) run by Snakemake's local executor on phantoms.

Five BIDS images in two shards: three registrations in shard-0000, and shard-0001 whose two
images are unreadable (all fail). Checks the dataset report (CSV rows, statuses, the HTML
naming every image, failures first), that a rerun after one image's outputs are deleted
registers that image alone, that concurrent shards take distinct GPU slots (local_gpus), and
the messages for a BIDS folder with no match and for a
regpipe usage error. Exit 77 (ctest: skipped) without snakemake.

    study_workflow_test.py path/to/regpipe
"""
import csv
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SNAKEFILE = os.path.join(SOURCE, "workflows", "study", "Snakefile")
PIPELINE = """inputs: {reference: unused.nii.gz, moving: unused.nii.gz}
registration:
  dof: 12
  levels_mm: [8, 4]
  cost: {plugin: cpu.cr, params: {bins: 64}}
  optimizer: {plugin: optim.powell}
outputs: {dir: unused}
"""
# The BIDS file (below bids/) of each image, and what it is a copy of (None: not an image).
IMAGES = {"sub-01/anat/sub-01_T1w.nii.gz": "moving.nii.gz",
          "sub-02/ses-1/anat/sub-02_ses-1_T1w.nii.gz": "moving.nii.gz",
          "sub-03/anat/sub-03_T1w.nii.gz": "reference.nii.gz",
          "sub-04/anat/sub-04_T1w.nii.gz": None,
          "sub-05/anat/sub-05_T1w.nii.gz": None}
FAILING = {"sub-04", "sub-05"}


def fail(message):
    print("FAILED: " + message)
    sys.exit(1)


def make_study(regpipe, work):
    subprocess.run([regpipe, "phantom", os.path.join(work, "phantom")], check=True, stdout=subprocess.DEVNULL)
    for name, source in IMAGES.items():
        path = os.path.join(work, "bids", name)
        os.makedirs(os.path.dirname(path))
        if source:
            shutil.copy(os.path.join(work, "phantom", source), path)
        else:
            with open(path, "w") as f:
                f.write("not an image\n")
    with open(os.path.join(work, "pipeline.yaml"), "w") as f:
        f.write(PIPELINE)


def write_config(work, name, **changes):
    config = {"bids": {"dir": "bids"}, "reference": "phantom/reference.nii.gz", "pipeline": "pipeline.yaml",
              "outdir": "results", "shard_size": 3, "gpus_per_job": 0, "threads_per_job": 1,
              "regpipe": sys.argv[1]}
    config.update(changes)
    with open(os.path.join(work, name), "w") as f:
        json.dump(config, f)  # JSON is YAML
    return name


def snakemake(work, config, *extra):
    run = subprocess.run(["snakemake", "-s", SNAKEFILE, "--configfile", config, "--cores", "2", *extra],
                         cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return run.returncode, run.stdout


def subject(row):
    return "sub-" + row["subject"]


def check_report(work, skipped):
    with open(os.path.join(work, "results", "dataset_report.csv")) as f:
        rows = list(csv.DictReader(f))
    images = [os.path.relpath(r["image"], os.path.join(work, "bids")) for r in rows]
    if sorted(images) != sorted(IMAGES):
        fail(f"the CSV lists {images}, not {sorted(IMAGES)}")
    for row in rows:
        failed = subject(row) in FAILING
        if row["status"] != ("failed" if failed else "ok"):
            fail(f"{row['image']}: status {row['status']}")
        if failed and "cannot read image" not in row["error"]:
            fail(f"{row['image']}: error {row['error']!r}")
        if not failed and not (float(row["final_cost"]) >= 0 and float(row["seconds"]) > 0 and
                               os.path.isfile(os.path.join(row["outputs"], "qa.png"))):
            fail(f"{row['image']}: cost {row['final_cost']}, {row['seconds']} s, outputs {row['outputs']}")
        if (row["skipped_complete"] == "True") != (subject(row) in skipped):
            fail(f"{row['image']}: skipped_complete {row['skipped_complete']}, expected it for {skipped}")
    with open(os.path.join(work, "results", "dataset_report.html")) as f:
        page = f.read()
    positions = {r["image"]: page.find(r["image"]) for r in rows}
    if min(positions.values()) < 0:
        fail(f"the HTML page does not name every image: {positions}")
    failures = [positions[r["image"]] for r in rows if r["status"] == "failed"]
    successes = [positions[r["image"]] for r in rows if r["status"] == "ok"]
    if max(failures) > min(successes) or page.count('class="failed"') != len(failures):
        fail("the HTML page does not put the failures first, marked")
    for r in rows:
        qa = os.path.relpath(os.path.join(r["outputs"], "qa.png"), os.path.join(work, "results"))
        if r["status"] == "ok" and f'href="{qa}"' not in page:
            fail(f"the HTML page does not link {qa}")


def shard_statuses(work, shard):
    with open(os.path.join(work, "results", "shards", shard, "batch_report.json")) as f:
        return {os.path.basename(e["path"]).split("_")[0]: e["status"] for e in json.load(f)["images"]}


def test_run_and_rerun(work):
    config = write_config(work, "config.yaml", local_gpus=2)
    # With GPU slot 0 taken, the two shards (at once or in turn) both get slot 1.
    os.makedirs(os.path.join(work, "results", ".gpu-slots"))
    with open(os.path.join(work, "results", ".gpu-slots", "gpu-0.lock"), "w") as slot_0:
        fcntl.flock(slot_0, fcntl.LOCK_EX)
        status, log = snakemake(work, config)
    if status != 0:
        fail("the first run failed:\n" + log)
    for shard in ("shard-0000", "shard-0001"):
        with open(os.path.join(work, "results", "logs", shard + ".log")) as f:
            if "GPU slot 1 of 2 (CUDA_VISIBLE_DEVICES=1)" not in f.read():
                fail(f"{shard} did not take the free GPU slot")
    check_report(work, skipped=set())
    if shard_statuses(work, "shard-0001") != {"sub-04": "failed", "sub-05": "failed"}:
        fail(f"shard-0001: {shard_statuses(work, 'shard-0001')}")

    shards = os.path.join(work, "results", "shards")
    failed_report = os.path.join(shards, "shard-0001", "batch_report.json")
    kept = os.path.join(shards, "shard-0000", "sub-02", "ses-1", "anat", "sub-02_ses-1_T1w", "report.json")
    before = (os.path.getmtime(failed_report), os.path.getmtime(kept))
    shutil.rmtree(os.path.join(shards, "shard-0000", "sub-01"))
    status, log = snakemake(work, config)
    if status != 0:
        fail("the rerun failed:\n" + log)
    if "register_shard_0001" in log or (os.path.getmtime(failed_report), os.path.getmtime(kept)) != before:
        fail("the rerun touched more than the missing image:\n" + log)
    expected = {"sub-01": "ok", "sub-02": "skipped_complete", "sub-03": "skipped_complete"}
    if shard_statuses(work, "shard-0000") != expected:
        fail(f"the rerun's shard-0000: {shard_statuses(work, 'shard-0000')}, expected {expected}")
    check_report(work, skipped={"sub-02", "sub-03"})
    status, log = snakemake(work, config, "--dry-run")
    if status != 0 or "Nothing to be done" not in log:
        fail("a third run would do work:\n" + log)


def test_bad_input(work):
    status, log = snakemake(work, write_config(work, "t2w.yaml", bids={"dir": "bids", "suffix": "T2w"}))
    if status == 0 or "no image matches bids/sub-*/anat/*_T2w.nii.gz" not in log:
        fail(f"a BIDS folder without a match: status {status}\n{log}")
    status, log = snakemake(work, write_config(work, "dof5.yaml", outdir="dof5", set=["registration.dof=5"]))
    if status == 0 or "no batch_report.json" not in log or "registration.dof=5 is not one of" not in log:
        fail(f"a regpipe usage error: status {status}\n{log}")


def main():
    if shutil.which("snakemake") is None:
        print("snakemake is not installed (scripts/install-test-tools.sh installs it): skipped")
        sys.exit(77)
    with tempfile.TemporaryDirectory(prefix="regpipe-study-") as work:
        make_study(sys.argv[1], work)
        test_run_and_rerun(work)
        test_bad_input(work)
    print("study workflow: run, rerun and bad input as expected")


if __name__ == "__main__":
    main()
