"""``python -m posviz train`` (``posviz train`` once installed): make a training run.

The shipped runs in ``posviz/data/runs/`` are exactly what these commands write (one torch
thread, the default; about a minute each on a quiet laptop)::

    python -m posviz train --init small --steps 1500 --seed 123 \\
        --out posviz/data/runs/small-init.npz
    python -m posviz train --init default --steps 1500 --seed 123 \\
        --out posviz/data/runs/default-init.npz
    python -m posviz train --init default --steps 1500 --seed 123 --book-stride \\
        --out posviz/data/runs/book-settings.npz

``--init small`` starts the positional table at N(0, 0.02²) (GPT-2's init), ``--init default``
at ``nn.Embedding``'s N(0, 1) (section 2.8's table). ``--book-stride`` cuts the training
windows ``context_length`` tokens apart, as the book's chapter 5 does, instead of every token.
A run written to the cache folder's ``runs/`` (``$POSVIZ_CACHE_DIR/runs/NAME.npz``, default
``~/.cache/posviz/runs/``) is shown by the app and by ``python -m posviz --view training --run
NAME``. A progress bar goes to standard error, and at the end the wall time the run took.

Bad options exit with status 2, a file that cannot be written with status 1.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final, TextIO

from posviz.schemes import SCHEME_NAMES
from posviz.training.config import (
    MAX_STEPS,
    MAX_THREADS,
    TrainingConfig,
    TrainingConfigError,
    validate_training,
)
from posviz.training.length import (
    MULTIPLES,
    TEXTS,
    LengthConfig,
    LengthRun,
    save_length_run,
    train_length,
)
from posviz.training.model import POSITION_INITS
from posviz.training.runs import RUN_SUFFIX, RunError, cache_runs_dir, save_run
from posviz.training.train import Progress, train

PROG = "python -m posviz train"
BAR_WIDTH = 30  # characters of the progress bar
# Steps timed before the bar says how long is left: the time to the first step (building the
# model, reading the text, a first evaluation) says nothing about the steps after it (the
# first estimate read 18 minutes for a run of 77 seconds).
TIMED_STEPS: Final = 5


def build_train_parser(
    parser_class: type[argparse.ArgumentParser] = argparse.ArgumentParser,
) -> argparse.ArgumentParser:
    """The options of ``posviz train`` (``parser_class``: the command line's, which prints a
    usage error on one line).

    >>> build_train_parser().parse_args(["--scheme", "alibi", "--out", "r.npz"]).scheme
    'alibi'
    """
    default = TrainingConfig(init="small")
    parser = parser_class(
        prog=PROG,
        description="Train the book's GPT (chapter 4) on The Verdict with chapter 5's loop "
        "and keep its positional table every few steps, for posviz's Training view.",
        epilog=f"Write into {cache_runs_dir()} for the app to find the run by its name.",
    )
    length = LengthConfig(scheme=SCHEME_NAMES[0])  # the defaults every scheme shares
    parser.add_argument(
        "--init",
        choices=POSITION_INITS,
        help="the positional table's init: small, N(0, 0.02²) as GPT-2; default, "
        "nn.Embedding's N(0, 1) as section 2.8 (needed without --scheme; with --scheme "
        "learned, default small)",
    )
    parser.add_argument(
        "--scheme",
        choices=SCHEME_NAMES,
        help="train short, test long: the book's GPT with this positional scheme, trained at "
        "--context-length L on --text and read at L, 2L and 4L (held out and training text; "
        "RoPE also with each context extension), for the Length view",
    )
    parser.add_argument(
        "--text",
        choices=TEXTS,
        default=length.text,
        help=f"with --scheme: the text (default {length.text}: Tiny Shakespeare)",
    )
    parser.add_argument(
        "--context-length",
        type=int,
        default=length.context_length,
        help=f"with --scheme: the trained length L (default {length.context_length})",
    )
    parser.add_argument(
        "--steps",
        type=int,
        help=f"optimiser steps, 1-{MAX_STEPS} (default {default.steps}; with --scheme "
        f"{length.steps})",
    )
    parser.add_argument(
        "--seed", type=int, default=default.seed, help=f"torch.manual_seed (default {default.seed})"
    )
    parser.add_argument(
        "--book-stride",
        action="store_true",
        help=f"cut training windows context_length ({default.context_length}) tokens apart, as "
        "the book's chapter 5 does (default: every token, stride 1)",
    )
    parser.add_argument(
        "--snapshot-every",
        type=int,
        default=default.snapshot_every,
        help=f"steps between two kept positional tables (default {default.snapshot_every})",
    )
    parser.add_argument(
        "--threads",
        type=int,
        help=f"torch.set_num_threads, 1-{MAX_THREADS} (default {default.threads}: the same "
        "numbers on any machine; more threads give other roundings; with --scheme "
        f"{length.threads}: within 1e-5 of one thread (the same bits on some CPUs), in 0.65 "
        "of the time)",
    )
    parser.add_argument(
        "--out", type=Path, required=True, help=f"the run file to write (NAME{RUN_SUFFIX})"
    )
    return parser


def config_from(args: argparse.Namespace) -> TrainingConfig:
    """The run's settings from parsed options (:class:`TrainingConfigError` if out of range).

    >>> args = build_train_parser().parse_args(["--init", "default", "--book-stride",
    ...                                         "--out", "r.npz"])
    >>> config_from(args).stride
    64
    """
    config = TrainingConfig(
        init=args.init,
        steps=TrainingConfig(init="small").steps if args.steps is None else args.steps,
        seed=args.seed,
        snapshot_every=args.snapshot_every,
        threads=TrainingConfig.threads if args.threads is None else args.threads,
    )
    if args.book_stride:
        config = config.with_book_stride()
    return validate_training(config)


def _clock(seconds: float) -> str:
    """``1m05s`` or ``42s``.

    >>> _clock(65.2), _clock(9.96)
    ('1m05s', '10s')
    """
    whole = round(seconds)
    return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{whole}s"


def progress_bar(
    stream: TextIO, *, started: float | None = None, clock: Callable[[], float] = time.monotonic
) -> Progress:
    """A progress bar on ``stream``: redrawn in place on a terminal (at most every 1 %),
    a line every 10 % elsewhere (a log, CI). What is left is estimated from the pace of the
    steps after the first (``TIMED_STEPS`` of them at least); until then the bar says it is
    timing them. ``started``: when the run started, on ``clock``'s scale (default: now)."""
    start = clock() if started is None else started
    terminal = stream.isatty()
    shown = {"last": -1}
    first: list[tuple[float, int]] = []  # (time, step) of the first report: the pace's start

    def show(done: int, total: int) -> None:
        now = clock()
        if not first:
            first.append((now, done))
        hundredths = 100 * done // total
        step = 1 if terminal else 10
        if hundredths // step == shown["last"] // step and done != total:
            return
        shown["last"] = hundredths
        since, from_step = first[0]
        timed = done - from_step
        left = (
            f"{_clock((now - since) / timed * (total - done))} left"
            if timed >= TIMED_STEPS
            else "done"
            if done == total
            else "timing the first steps"
        )
        filled = BAR_WIDTH * done // total
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        line = (
            f"[{bar}] {done:,}/{total:,} steps {hundredths:3d}% "
            f"{_clock(now - start)} elapsed, {left}"
        )
        if terminal:
            stream.write(f"\r{line}" + ("\n" if done == total else ""))
        else:
            stream.write(f"{line}\n")
        stream.flush()

    return show


def train_main(
    argv: Sequence[str], *, parser_class: type[argparse.ArgumentParser] = argparse.ArgumentParser
) -> int:
    """Run ``posviz train`` with ``argv``; the exit status (usage errors: ``SystemExit(2)``)."""
    parser = build_train_parser(parser_class)
    args = parser.parse_args(list(argv))
    if args.out.suffix != RUN_SUFFIX:
        parser.error(f"--out must end in {RUN_SUFFIX}, got {str(args.out)!r}")
    if args.scheme is not None:
        return _length_main(parser, args)
    if args.init is None:
        parser.error("--init is needed (small or default), or --scheme for a length run")
    try:
        config = config_from(args)
    except TrainingConfigError as error:
        parser.error(str(error))
    started = time.monotonic()
    sys.stderr.write(f"training: {' '.join(config.arguments())} (threads {config.threads})\n")
    run = train(config, progress=progress_bar(sys.stderr, started=started))
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        size = save_run(run, args.out)
    except (OSError, RunError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        sys.stderr.write(f"{PROG}: error: cannot write {str(args.out)!r}: {reason}\n")
        return 1
    sys.stderr.write(
        f"wrote {args.out} ({size:,} bytes): {len(run.steps)} positional tables, losses "
        f"{run.val_loss[0]:.3f} -> {run.val_loss[-1]:.3f} (validation)\n"
        f"wall time: {time.monotonic() - started:.1f} s for {config.steps:,} steps\n"
    )
    return 0


def length_config_from(args: argparse.Namespace) -> LengthConfig:
    """A length run's settings from parsed options (``ValueError`` if out of range)."""
    default = LengthConfig(scheme=args.scheme)
    return LengthConfig(
        scheme=args.scheme,
        init=args.init or default.init,
        text=args.text,
        steps=default.steps if args.steps is None else args.steps,
        seed=args.seed,
        context_length=args.context_length,
        threads=default.threads if args.threads is None else args.threads,
    ).check()


def length_summary(run: LengthRun) -> str:
    """The held-out band means at L, 2L and 4L: ``held out: 4.57 (L) 4.76 (2L) 4.96 (4L)``."""
    parts = []
    for multiple in MULTIPLES:
        reading = run.reading("held-out", multiple)
        said = "IndexError" if reading.error else f"{reading.band_mean:.2f}"
        parts.append(f"{said} ({'' if multiple == 1 else multiple}L)")
    return "held-out loss in the last half of each input: " + " ".join(parts)


def _length_main(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    try:
        config = length_config_from(args)
    except ValueError as error:
        parser.error(str(error))
    started = time.monotonic()
    sys.stderr.write(
        f"training ({config.scheme} at L = {config.context_length} on {config.text}, "
        f"{config.steps:,} steps, threads {config.threads}), then reading it at L, 2L and 4L\n"
    )

    def said(words: str) -> None:
        sys.stderr.write(f"{words}, {time.monotonic() - started:.0f} s elapsed\n")

    run = train_length(config, progress=progress_bar(sys.stderr, started=started), said=said)
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        size = save_length_run(run, args.out)
    except OSError as error:
        sys.stderr.write(f"{PROG}: error: cannot write {str(args.out)!r}: {error.strerror}\n")
        return 1
    sys.stderr.write(
        f"wrote {args.out} ({size:,} bytes): {length_summary(run)}\n"
        f"wall time: {time.monotonic() - started:.1f} s\n"
    )
    return 0
