"""The settings of one training run: the book's GPT at a size a laptop trains in a minute.

The defaults are issue 26's measured configuration: ``GPTModel`` with d 128, 4 layers,
4 heads, context 64, dropout 0.1; AdamW with learning rate 1e-3 and weight decay 0.1
(chapter 5's optimiser); batches of 8 windows cut every token (stride 1); the book's seed
123; 1,500 steps. Only the positional table's init differs between the shipped runs
(:data:`~posviz.training.model.POSITION_INITS`), and for the third run the stride: the book's
chapter 5 cuts windows ``context_length`` tokens apart (:meth:`TrainingConfig.book_stride`).

>>> config = TrainingConfig(init="small")
>>> config.model(vocab_size=1417).emb_dim, config.stride, validate_training(config) is config
(128, 1, True)
>>> TrainingConfig(init="default").with_book_stride().stride
64
>>> validate_training(TrainingConfig(init="small", steps=0))
Traceback (most recent call last):
...
posviz.training.config.TrainingConfigError: steps must be a whole number from 1 to 100000, \
got 0: train at least one step
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Final

from posviz.config import SEED_RANGE
from posviz.training.model import POSITION_INITS, GPTConfig, PositionInit

MAX_STEPS: Final = 100_000
MAX_THREADS: Final = 256


class TrainingConfigError(ValueError):
    """Settings no run can have; the message names the value, the range and the fix."""


@dataclass(frozen=True)
class TrainingConfig:
    """One run's settings (the book's ``GPT_CONFIG_124M`` keys, then chapter 5's)."""

    init: PositionInit  # the positional table: "small" N(0, 0.02²) or "default" N(0, 1)
    steps: int = 1500  # optimiser steps; small-init's structure is clear after about 600
    seed: int = 123  # torch.manual_seed before GPTModel, as the book does
    context_length: int = 64
    emb_dim: int = 128
    n_heads: int = 4
    n_layers: int = 4
    drop_rate: float = 0.1
    qkv_bias: bool = False
    learning_rate: float = 1e-3
    weight_decay: float = 0.1
    batch_size: int = 8
    stride: int = 1  # tokens between training windows (the book's chapter 5: context_length)
    train_ratio: float = 0.9  # the book's split of the text's characters
    snapshot_every: int = 50  # steps between two stored positional tables (and evaluations)
    threads: int = 1  # torch.set_num_threads: one thread sums in one order on any machine

    def model(self, vocab_size: int) -> GPTConfig:
        """The model's config, with the vocabulary of the text (known once it is read)."""
        return GPTConfig(
            vocab_size=vocab_size,
            context_length=self.context_length,
            emb_dim=self.emb_dim,
            n_heads=self.n_heads,
            n_layers=self.n_layers,
            drop_rate=self.drop_rate,
            qkv_bias=self.qkv_bias,
        )

    @property
    def book_stride(self) -> bool:
        """Whether windows are cut ``context_length`` apart, as the book's chapter 5 does."""
        return self.stride == self.context_length

    def with_book_stride(self) -> TrainingConfig:
        """The same settings with the book's stride (= ``context_length``)."""
        return dataclasses.replace(self, stride=self.context_length)

    @property
    def snapshot_steps(self) -> tuple[int, ...]:
        """The steps whose positional table a run keeps: 0, every ``snapshot_every``, and the
        last.

        >>> TrainingConfig(init="small", steps=120).snapshot_steps
        (0, 50, 100, 120)
        """
        kept = list(range(0, self.steps + 1, self.snapshot_every))
        if kept[-1] != self.steps:
            kept.append(self.steps)
        return tuple(kept)

    def arguments(self) -> tuple[str, ...]:
        """The ``posviz train`` options that make this run (defaults left out; ``--out`` is
        the caller's).

        >>> TrainingConfig(init="default", stride=64).arguments()
        ('--init', 'default', '--steps', '1500', '--seed', '123', '--book-stride')
        """
        found = ["--init", self.init, "--steps", str(self.steps), "--seed", str(self.seed)]
        if self.book_stride:
            found.append("--book-stride")
        if self.snapshot_every != TrainingConfig.snapshot_every:
            found += ["--snapshot-every", str(self.snapshot_every)]
        if self.threads != TrainingConfig.threads:
            found += ["--threads", str(self.threads)]
        return tuple(found)


def _whole(name: str, value: object, low: int, high: int, fix: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise TrainingConfigError(
            f"{name} must be a whole number from {low} to {high}, got {value!r}: {fix}"
        )


def _fraction(name: str, value: object, low: float, high: float, fix: str) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not low <= value <= high
    ):
        raise TrainingConfigError(f"{name} must be from {low} to {high}, got {value!r}: {fix}")


def validate_training(config: TrainingConfig) -> TrainingConfig:
    """``config`` if every setting is in range, else :class:`TrainingConfigError`."""
    if config.init not in POSITION_INITS:
        raise TrainingConfigError(
            f"init must be one of {', '.join(POSITION_INITS)}, got {config.init!r}: small is "
            "GPT-2's N(0, 0.02²), default nn.Embedding's N(0, 1)"
        )
    _whole("steps", config.steps, 1, MAX_STEPS, "train at least one step")
    _whole("seed", config.seed, *SEED_RANGE, "pick another seed")
    _whole("context_length", config.context_length, 1, 256, "the validation text is 534 tokens")
    _whole("emb_dim", config.emb_dim, 1, 1024, "pick a smaller model")
    _whole("n_heads", config.n_heads, 1, config.emb_dim, "use at most emb_dim heads")
    if config.emb_dim % config.n_heads:
        raise TrainingConfigError(
            f"emb_dim ({config.emb_dim}) must be a multiple of n_heads ({config.n_heads}): "
            "pick a number of heads that divides it"
        )
    _whole("n_layers", config.n_layers, 1, 48, "pick fewer layers")
    _fraction("drop_rate", config.drop_rate, 0.0, 0.9, "the book uses 0.1")
    _fraction("learning_rate", config.learning_rate, 1e-8, 1.0, "the book uses 4e-4 to 5e-4")
    _fraction("weight_decay", config.weight_decay, 0.0, 10.0, "the book uses 0.1")
    _whole("batch_size", config.batch_size, 1, 1024, "the book uses 2 to 8")
    _whole("stride", config.stride, 1, config.context_length, "at most context_length")
    _fraction("train_ratio", config.train_ratio, 0.05, 0.95, "the book uses 0.9")
    _whole("snapshot_every", config.snapshot_every, 1, MAX_STEPS, "keep a table every N steps")
    _whole("threads", config.threads, 1, MAX_THREADS, "one thread is reproducible anywhere")
    if not isinstance(config.qkv_bias, bool):
        raise TrainingConfigError(f"qkv_bias must be True or False, got {config.qkv_bias!r}")
    return config
