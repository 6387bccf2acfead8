"""The study's moving images, where regpipe writes each one's results, and the shards.

Used by the Snakefile when it builds the job graph; Python 3 standard library only.
"""
import glob
import os
import re

WILDCARDS = "*?["


class ConfigError(Exception):
    """A config value that names no image, or images regpipe could not tell apart."""


def has_wildcard(part):
    return any(c in part for c in WILDCARDS)


def fixed_root(pattern):
    """The pattern's folders before its first wildcard: regpipe mirrors what lies below it."""
    parts = pattern.split(os.sep)
    first = next((i for i, p in enumerate(parts) if has_wildcard(p)), len(parts) - 1)
    return os.sep.join(parts[:min(first, len(parts) - 1)]) or "."


def find_images(config):
    """(root, sorted image paths) from config `bids:` (a BIDS dataset) or `moving:` (a glob)."""
    if "bids" in config:
        bids = config["bids"]
        root = bids["dir"]
        if not os.path.isdir(root):
            raise ConfigError(f"bids.dir {root}: no such folder")
        name = f"*_{bids.get('suffix', 'T1w')}{bids.get('extension', '.nii.gz')}"
        datatype = bids.get("datatype", "anat")
        patterns = [os.path.join(root, "sub-*", datatype, name),
                    os.path.join(root, "sub-*", "ses-*", datatype, name)]
    elif "moving" in config:
        patterns = [config["moving"]]
        root = fixed_root(config["moving"])
    else:
        raise ConfigError("the config needs `bids:` (dir, suffix) or `moving:` (a glob of images)")
    if has_wildcard(root):
        raise ConfigError(f"{root}: a folder name with *, ? or [ cannot be addressed exactly")
    images = sorted({p for pattern in patterns for p in glob.glob(pattern) if os.path.isfile(p)})
    if not images:
        raise ConfigError("no image matches " + " or ".join(patterns) +
                          " (check the folder and, for BIDS, bids.suffix / bids.datatype)")
    return root, images


def output_folder(root, image):
    """regpipe's folder for `image` below outputs.dir: the folders below `root`, then the file
    name without .gz and one more extension (moving_stem in framework/src/pipeline)."""
    name = os.path.basename(image)
    if name.endswith(".gz"):
        name = name[:-3]
    relative_dir = os.path.dirname(os.path.relpath(image, root))
    return os.path.normpath(os.path.join(relative_dir, os.path.splitext(name)[0]))


def check_distinct_folders(root, images):
    """Two images with one output folder (sub-01_T1w.nii and .nii.gz) would overwrite each other."""
    seen = {}
    for image in images:
        other = seen.setdefault(output_folder(root, image), image)
        if other != image:
            raise ConfigError(f"{other} and {image} have the same output folder "
                              f"{output_folder(root, image)}: leave one out")


def exact_pattern(root, image):
    """A glob matching `image` alone, with a wildcard in its first folder below `root`.

    A plain path in a list of moving images gets a flat folder (its stem); a pattern has
    its matches' folders mirrored below its fixed part. So each image is handed to regpipe as
    a pattern of itself: glob characters in names are escaped as classes ([*]) and the first
    component's last letter or digit becomes a class ([1]) to make it a pattern.
    """
    parts = [re.sub(r"([*?\[])", r"[\1]", p) for p in os.path.relpath(image, root).split(os.sep)]
    if not has_wildcard(parts[0]):
        last = max((i for i, c in enumerate(parts[0]) if c.isalnum()), default=None)
        if last is None:
            raise ConfigError(f"{image}: its first folder below {root} has no letter or digit")
        parts[0] = f"{parts[0][:last]}[{parts[0][last]}]{parts[0][last + 1:]}"
    return os.path.join(root, *parts)


def shards(images, size):
    """Consecutive runs of `size` images in sorted order, so that images added at the end
    leave the earlier shards as they were. A last shard of one joins the one before: regpipe
    runs a list of one as a single registration, without a batch_report.json."""
    if not isinstance(size, int) or size < 2:
        raise ConfigError(f"shard_size: {size!r}; it must be an integer of at least 2")
    if len(images) < 2:
        raise ConfigError(f"{images[0]} is the only image: run `regpipe run` on it directly")
    out = [images[i:i + size] for i in range(0, len(images), size)]
    if len(out[-1]) == 1:
        out[-2] += out.pop()
    return out
