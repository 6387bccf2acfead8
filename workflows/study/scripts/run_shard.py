#!/usr/bin/env python3
"""Registers one shard of a study: one `regpipe run` batch (one CUDA start, one reference
preparation) over the shard's images, then a workflow_status.json in each image's folder.

regpipe's exit status 2 with a batch_report.json means some images failed: their failure is
recorded and the shard succeeds, so that the rest of the study goes on. Any other non-zero
status (a bad pipeline, an unreadable reference, a crash) has no batch_report.json and fails
the shard, with the end of regpipe's messages. Python 3 standard library only.
"""
import argparse
import contextlib
import fcntl
import json
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the repository's folder
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from study_images import exact_pattern, output_folder  # noqa: E402

# One --set argument is one argv string, which Linux caps at 128 KiB (MAX_ARG_STRLEN).
MAX_ARGUMENT = 120_000
STATUS_FILE = "workflow_status.json"


def yaml_list(items):
    """A YAML flow list of single-quoted strings (any path, commas and brackets included)."""
    return "[" + ", ".join("'" + i.replace("'", "''") + "'" for i in items) + "]"


def regpipe_command(args):
    moving = "inputs.moving=" + yaml_list([exact_pattern(args.root, i) for i in args.images])
    if len(moving) > MAX_ARGUMENT:
        sys.exit(f"run_shard: the shard's {len(args.images)} image paths make a {len(moving)}-byte "
                 f"argument, more than one command-line argument may hold: lower shard_size")
    command = [args.regpipe, "run", args.pipeline, "--set", moving,
               "--set", f"outputs.dir={args.outdir}", "--set", "outputs.qa_png=true"]
    if args.reference:
        command += ["--set", f"inputs.reference={args.reference}"]
    for override in args.set:
        command += ["--set", override]
    return command


def log_tail(path, lines=20):
    with open(path, errors="replace") as f:
        return "".join(f.readlines()[-lines:])


@contextlib.contextmanager
def gpu_slot(slots, lock_dir, log):
    """One of this host's `slots` GPUs for the job's lifetime, as CUDA_VISIBLE_DEVICES: the
    first whose lock file no other job holds. Without slots (a SLURM job, whose GPUs SLURM
    sets) the environment is left as it is."""
    if slots == 0:
        yield dict(os.environ)
        return
    os.makedirs(lock_dir, exist_ok=True)
    while True:
        for slot in range(slots):
            with open(os.path.join(lock_dir, f"gpu-{slot}.lock"), "w") as lock:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue
                log.write(f"run_shard: GPU slot {slot} of {slots} (CUDA_VISIBLE_DEVICES={slot})\n")
                log.flush()
                yield dict(os.environ, CUDA_VISIBLE_DEVICES=str(slot))
                return
        time.sleep(1)


def run_regpipe(args, report):
    if os.path.exists(report):  # a report left by an earlier run would hide this run's error
        os.remove(report)
    os.makedirs(args.outdir, exist_ok=True)
    with open(args.log, "w") as log, gpu_slot(args.gpu_slots, args.gpu_lock_dir, log) as env:
        status = subprocess.run(regpipe_command(args), stdout=log, stderr=subprocess.STDOUT, env=env).returncode
    if status == 0 or (status == 2 and os.path.exists(report)):
        return
    why = f"signal {-status}" if status < 0 else f"exit status {status}"
    sys.exit(f"run_shard: regpipe run ended with {why} and no batch_report.json for shard "
             f"{args.outdir} (log {args.log}):\n{log_tail(args.log)}")


def write_status(path, status):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(status, f, indent=1)
    os.replace(path + ".tmp", path)


def record_outcomes(args, report):
    with open(report) as f:
        entries = {os.path.realpath(e["path"]): e for e in json.load(f)["images"]}
    for image in args.images:
        entry = entries.get(os.path.realpath(image))
        if entry is None:
            sys.exit(f"run_shard: {report} does not list {image}")
        folder = os.path.join(args.outdir, output_folder(args.root, image))
        ok = entry["status"] in ("ok", "skipped_complete")
        if ok and os.path.realpath(entry["outputs"]) != os.path.realpath(folder):
            sys.exit(f"run_shard: regpipe wrote {image}'s results to {entry['outputs']}, not {folder}")
        write_status(os.path.join(folder, STATUS_FILE),
                     {"image": image, "status": "ok" if ok else "failed", "error": entry["error"]})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--regpipe", default="regpipe", help="the regpipe executable")
    parser.add_argument("--pipeline", required=True, help="regpipe pipeline YAML")
    parser.add_argument("--reference", help="overrides the pipeline's inputs.reference")
    parser.add_argument("--set", action="append", default=[], help="more regpipe --set KEY=VALUE")
    parser.add_argument("--root", required=True, help="the folder the images' folders are mirrored from")
    parser.add_argument("--outdir", required=True, help="the shard's outputs.dir")
    parser.add_argument("--log", required=True, help="regpipe's messages go here")
    parser.add_argument("--gpu-slots", type=int, default=0,
                        help="GPUs of this host to share out between concurrent jobs (0: leave CUDA_VISIBLE_DEVICES)")
    parser.add_argument("--gpu-lock-dir", help="where the GPU slots' lock files are (needed with --gpu-slots)")
    parser.add_argument("images", nargs="+")
    args = parser.parse_args()
    report = os.path.join(args.outdir, "batch_report.json")
    run_regpipe(args, report)
    record_outcomes(args, report)


if __name__ == "__main__":
    main()
