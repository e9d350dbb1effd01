"""What ``python -m posviz train`` takes to make a shipped run, and whether it wrote the shipped
file again (issue 26). Run from the repository root::

    python benchmarks/training_time.py            # the small-init run, 1,500 steps
    python benchmarks/training_time.py --all      # the three shipped runs
    python benchmarks/training_time.py --length rope   # a Length view run (3,000 steps)
    python benchmarks/training_time.py --docs     # and write the table into docs/performance.md

Each run is the shipped run's own command (``posviz/training/command.py``'s docstring) in a
fresh Python process, writing to a temporary folder: the wall time of the whole command
(imports included, as a user waits for it), the CPU time of its process, and whether its file
equals the shipped one byte for byte (it does on a machine whose CPU runs torch's kernels the
same way; the run records which), and if not, the CPU each was made on and the largest
difference of their snapshots and of their losses. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from benchmarks import report  # noqa: E402

RUNS = ROOT / "posviz" / "data" / "runs"
LENGTH_RUNS = ROOT / "posviz" / "data" / "length"  # train short, test long (issue 41)
SHIPPED = {  # name -> the options that made it (posviz/training/command.py)
    "small-init": ["--init", "small", "--steps", "1500", "--seed", "123"],
    "default-init": ["--init", "default", "--steps", "1500", "--seed", "123"],
    "book-settings": ["--init", "default", "--steps", "1500", "--seed", "123", "--book-stride"],
}
HEADER = ("run", "command", "wall time", "CPU time", "file equals the shipped one")
LOSSES = ("train_loss", "val_loss", "batch_loss")


def compared(made: Path, shipped: Path) -> str:
    """``yes`` if the two run files are equal byte for byte, else the CPU each was made on and
    the largest difference of their snapshots (the positional tables) and of their losses."""
    if filecmp.cmp(made, shipped, shallow=False):
        return "yes"
    with np.load(made) as ours, np.load(shipped) as theirs:
        cpus = [json.loads(bytes(run["metadata"]).decode())["cpu"] for run in (ours, theirs)]
        tables = np.abs(ours["pos_embeddings"] - theirs["pos_embeddings"]).max()
        losses = max(np.abs(ours[name] - theirs[name]).max() for name in LOSSES)
    return (
        f"no: made on {cpus[0]}, shipped from {cpus[1]}; largest difference "
        f"{tables:.1e} (tables), {losses:.1e} (losses)"
    )


def compared_length(made: Path, shipped: Path) -> str:
    """``yes`` if the two length runs are equal byte for byte, else the largest difference of
    their arrays (the mean loss at every position)."""
    if filecmp.cmp(made, shipped, shallow=False):
        return "yes"
    with np.load(made) as ours, np.load(shipped) as theirs:
        numeric = [k for k in ours.files if k in theirs.files and ours[k].dtype.kind == "f"]
        largest = max((np.abs(ours[k] - theirs[k]).max() for k in numeric), default=np.inf)
    return f"no: largest difference {largest:.1e} (losses)"


def train_once(name: str, folder: Path) -> list[str]:
    """Make run ``name`` (a shipped training run, or ``length:SCHEME``) with its command into
    ``folder``; its table row."""
    out = folder / f"{name.replace(':', '-')}.npz"
    if name.startswith("length:"):
        scheme = name.removeprefix("length:")
        options = ["--scheme", scheme]  # its defaults: 3,000 steps, L = 64, Tiny Shakespeare
        shipped = LENGTH_RUNS / f"{scheme}.npz"
    else:
        options = SHIPPED[name]
        shipped = RUNS / f"{name}.npz"
    command = [sys.executable, "-m", "posviz", "train", *options, "--out", str(out)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    shown = "python -m posviz train " + " ".join(options)
    same = (compared_length if name.startswith("length:") else compared)(out, shipped)
    return [name, f"`{shown}`", f"{wall:.1f} s", f"{cpu:.1f} s", same]


def main(argv: list[str] | None = None) -> None:
    """Train, print the table, and with ``--docs`` write it into docs/performance.md."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--all", action="store_true", help="the three shipped runs")
    parser.add_argument(
        "--length",
        action="append",
        default=[],
        metavar="SCHEME",
        help="a Length view run instead (posviz train --scheme SCHEME); repeatable",
    )
    parser.add_argument("--docs", action="store_true", help="write the table into docs/")
    args = parser.parse_args(argv)
    names = list(SHIPPED) if args.all else [] if args.length else ["small-init"]
    names += [f"length:{scheme}" for scheme in args.length]
    started = report.start()
    print(f"load average: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as folder:
        rows = [train_once(name, Path(folder)) for name in names]
    report.print_columns(HEADER, rows)
    if args.docs:
        command = "python benchmarks/training_time.py " + " ".join(argv or sys.argv[1:])
        body = (
            "Each shipped run made again by its own command, in a fresh process (1,500 steps "
            "on one torch thread; a Length view run, `--scheme`, 3,000 steps on two):\n\n"
            f"{report.table(HEADER, rows)}"
        )
        block = "training_time length" if args.length else "training_time"
        report.write_block(block, body, when=report.stamp(started), command=command.strip())


if __name__ == "__main__":
    main()
