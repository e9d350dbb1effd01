"""The Training view's numbers: a run's positional table at one step, and what it shows.

For a kept step of a :class:`~posviz.training.runs.TrainingRun`, :func:`build_training`
gives the table ``[T, d]``, the cosine similarity between its positions
(:func:`posviz.similarity.cosine_similarity`), the mean cosine against distance ``k`` at that
step and at step 0 (:func:`posviz.distance.distance_curve`, the Distance tab's curve), its
first three principal components (:func:`posviz.geometry.analyse_table`, the Geometry tab's),
how far its rows moved from step 0 against their length (:class:`Movement`), and the losses
up to that step (:class:`LossFacts`). With GPT-2's tables (``gpt2=``, what the page has in
its cache), GPT-2's first ``T`` positions get the same curve and principal components, to
stand beside the small model's.

Everything is computed from the run's stored arrays; ``memo`` keeps the per-step and per-run
numbers (keys start with ``"training"`` and the run's :attr:`~TrainingRun.digest`), so a step
change the app has seen costs a lookup.

>>> from posviz.training.runs import load_named_run
>>> view = build_training(load_named_run("small-init"), 600)
>>> view.step, tuple(view.table.table.shape), tuple(view.similarity.shape)
(600, (64, 128), (64, 64))
>>> abs(float(view.start_curve.mean[1])) < 0.05, view.curve.distances
(True, 64)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import torch

from posviz.distance import DistanceCurve, distance_curve
from posviz.geometry import Memo, TableGeometry, analyse_table, no_memo, per_table
from posviz.pipeline import EmbeddingTables
from posviz.position_tables import PositionalTable, gpt2_table
from posviz.schemes import LEARNED
from posviz.similarity import cosine_similarity
from posviz.training.runs import TrainingRun

FAR: Final = 16  # the second distance the words quote: "distance 16: 0.33"


def run_label(run: TrainingRun) -> str:
    """How the figures and the words name a run: its name, else its init.

    >>> from posviz.training.runs import load_named_run
    >>> run_label(load_named_run("book-settings"))
    'book-settings'
    """
    return run.name or f"{run.config.init}-init (unsaved)"


def step_table(run: TrainingRun, step: int) -> PositionalTable:
    """The run's positional table at ``step`` as a :class:`PositionalTable` (a learned one),
    keyed by the run's digest and the step."""
    return PositionalTable(
        LEARNED,
        f"{run_label(run)}, step {step:,}",
        run.table(step),
        ("training", run.digest, step),
    )


@dataclass(frozen=True, eq=False)
class Movement:
    """How far the table's rows moved from step 0, against how long they were."""

    moved: torch.Tensor  # [T] float64: |row p at the step - row p at step 0|
    start_norms: torch.Tensor  # [T] float64: |row p at step 0|
    norms: torch.Tensor  # [T] float64: |row p at the step|
    mean_abs_change: float  # mean over the T·d weights of |w at the step - w at step 0|
    max_abs_change: float
    start_std: float  # the spread (standard deviation) of the weights at step 0
    start_cosines: torch.Tensor  # [T] float64: cosine of row p at the step with row p at 0

    @property
    def mean_moved(self) -> float:
        """Mean over positions of how far a row moved."""
        return float(self.moved.mean())

    @property
    def mean_start_norm(self) -> float:
        """Mean length of a row at step 0."""
        return float(self.start_norms.mean())

    @property
    def ratio(self) -> float:
        """How far the rows moved, as a multiple of their length at step 0 (mean over mean)."""
        start = self.mean_start_norm
        return self.mean_moved / start if start > 0 else float("inf")

    @property
    def mean_start_cosine(self) -> float:
        """Mean over positions of the cosine of a row with its step-0 self: 1 where the rows
        still point where they started (training wrote little against them), near 0 where
        what training wrote outweighs the start."""
        return float(self.start_cosines.mean())


def movement(start: torch.Tensor, table: torch.Tensor) -> Movement:
    """:class:`Movement` from the table at step 0 and at the step (``[T, d]`` each), float64.

    >>> found = movement(torch.tensor([[3.0, 4.0]]), torch.tensor([[3.0, 5.0]]))
    >>> found.mean_moved, found.mean_start_norm, found.ratio, found.mean_abs_change
    (1.0, 5.0, 0.2, 0.5)
    >>> round(found.mean_start_cosine, 4)  # (9 + 20) / (5 * sqrt(34))
    0.9947
    """
    start64, table64 = start.double(), table.double()  # [T, d]
    change = table64 - start64
    start_norms = torch.linalg.vector_norm(start64, dim=1)  # [T]
    norms = torch.linalg.vector_norm(table64, dim=1)  # [T]
    lengths = (start_norms * norms).clamp_min(torch.finfo(torch.float64).tiny)
    return Movement(
        moved=torch.linalg.vector_norm(change, dim=1),
        start_norms=start_norms,
        norms=norms,
        start_cosines=(start64 * table64).sum(dim=1) / lengths,
        mean_abs_change=float(change.abs().mean()),
        max_abs_change=float(change.abs().max()),
        start_std=float(start64.std(correction=0)),
    )


@dataclass(frozen=True)
class LossFacts:
    """The losses at a step and what they did up to it (each at the kept steps)."""

    step: int
    train: float  # train_loss at the step (the training text's windows cut T apart)
    val: float  # val_loss at the step
    start_train: float  # at step 0
    start_val: float
    best_val: float  # the lowest val_loss at or before the step
    best_val_step: int
    epochs: float  # passes over the training windows by the step: step · batch / windows
    train_tokens: int
    val_tokens: int

    @property
    def val_climbs(self) -> bool:
        """Whether the validation loss is above its lowest so far (by more than 0.05)."""
        return self.val - self.best_val > 0.05


def loss_facts(run: TrainingRun, step: int) -> LossFacts:
    """:class:`LossFacts` of ``run`` at the kept ``step``.

    >>> from posviz.training.runs import load_named_run
    >>> facts = loss_facts(load_named_run("small-init"), 0)
    >>> facts.best_val_step, facts.epochs, facts.train_tokens
    (0, 0.0, 4612)
    """
    index = run.index(step)
    val = run.val_loss[: index + 1]  # [index + 1]
    best = int(torch.argmin(val))  # the first lowest
    return LossFacts(
        step=step,
        train=float(run.train_loss[index]),
        val=float(val[index]),
        start_train=float(run.train_loss[0]),
        start_val=float(run.val_loss[0]),
        best_val=float(val[best]),
        best_val_step=run.steps[best],
        epochs=step * run.config.batch_size / run.data.train_windows,
        train_tokens=run.data.train_tokens,
        val_tokens=run.data.val_tokens,
    )


@dataclass(frozen=True, eq=False)
class StepNumbers:
    """What one step of a run shows, computed once per (run, step)."""

    table: PositionalTable
    similarity: torch.Tensor  # [T, T] float32
    curve: DistanceCurve
    geometry: TableGeometry
    movement: Movement
    losses: LossFacts


@dataclass(frozen=True, eq=False)
class RunNumbers:
    """What every step of a run shares, computed once per run."""

    start: PositionalTable  # the table at step 0
    start_curve: DistanceCurve
    colour_limit: float  # max |value| over every kept table: one colour scale for all steps


@dataclass(frozen=True, eq=False)
class TrainingView:
    """Everything the Training view shows for ``run`` at ``step``."""

    run: TrainingRun
    step: int
    numbers: StepNumbers
    shared: RunNumbers
    gpt2_curve: DistanceCurve | None = None  # GPT-2's first T positions, if the page has them
    gpt2_geometry: TableGeometry | None = None

    @property
    def table(self) -> PositionalTable:
        """The positional table at the step, ``[T, d]``."""
        return self.numbers.table

    @property
    def similarity(self) -> torch.Tensor:
        """Cosine similarity between its positions, ``[T, T]`` float32."""
        return self.numbers.similarity

    @property
    def curve(self) -> DistanceCurve:
        """Mean cosine of positions ``i`` and ``i + k`` at the step."""
        return self.numbers.curve

    @property
    def start_curve(self) -> DistanceCurve:
        """... and at step 0."""
        return self.shared.start_curve

    @property
    def geometry(self) -> TableGeometry:
        """The table's first three principal components at the step."""
        return self.numbers.geometry

    @property
    def movement(self) -> Movement:
        """How far its rows moved from step 0."""
        return self.numbers.movement

    @property
    def losses(self) -> LossFacts:
        """The losses at the step."""
        return self.numbers.losses

    @property
    def context_length(self) -> int:
        """T: the positions of the table."""
        return self.run.config.context_length

    @property
    def last_step(self) -> int:
        """The run's last step."""
        return self.run.steps[-1]


def step_numbers(run: TrainingRun, step: int) -> StepNumbers:
    """The numbers of ``run`` at ``step`` (not kept: see :func:`build_training`)."""
    table = step_table(run, step)
    return StepNumbers(
        table=table,
        similarity=cosine_similarity(table.table),
        curve=distance_curve(table),
        geometry=analyse_table(table),
        movement=movement(run.pos_embeddings[0], table.table),
        losses=loss_facts(run, step),
    )


def run_numbers(run: TrainingRun) -> RunNumbers:
    """The numbers every step of ``run`` shares."""
    start = step_table(run, run.steps[0])
    return RunNumbers(
        start=start,
        start_curve=distance_curve(start),
        colour_limit=float(run.pos_embeddings.abs().max()),
    )


def build_training(
    run: TrainingRun,
    step: int,
    *,
    gpt2: EmbeddingTables | None = None,
    memo: Memo = no_memo,
) -> TrainingView:
    """Everything the Training view shows for ``run`` at the kept ``step``
    (:class:`~posviz.training.runs.RunError` for another step, naming those kept).

    ``gpt2``: GPT-2's tables, when the caller has them (its first ``T`` positions are drawn
    beside the run's); ``memo`` as for :func:`~posviz.geometry.build_geometry`.
    """
    run.index(step)  # a kept step, or RunError
    numbers = memo(("training", run.digest, step), lambda: step_numbers(run, step))
    shared = memo(("training-run", run.digest), lambda: run_numbers(run))
    gpt2_curve = gpt2_geometry = None
    if gpt2 is not None:
        positions = gpt2_table(gpt2, rows=run.config.context_length)
        gpt2_curve = per_table(memo, "distance", positions, distance_curve)
        gpt2_geometry = per_table(memo, "geometry", positions, analyse_table)
    return TrainingView(run, step, numbers, shared, gpt2_curve, gpt2_geometry)
