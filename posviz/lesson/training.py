"""The words of the Training view: each sentence built from the numbers of a
:class:`~posviz.training.view.TrainingView`, so none can claim what the run does not show.

>>> from posviz.training.runs import load_named_run
>>> from posviz.training.view import build_training
>>> print(progress_sentence(build_training(load_named_run("small-init"), 0)))
At step 0 (the init) neighbouring positions have cosine 0.00 (distance 16: ...
"""

from __future__ import annotations

import math
from typing import Final

from posviz.training.view import FAR, TrainingView, run_label

BARELY: Final = 0.5  # rows that moved less than this share of their length "barely moved"
STILL_POINTING: Final = 0.9  # a table whose rows keep this cosine with step 0 "still points"
ASKED: Final = (10, 11, 50)  # lecture: "is position 10 more like position 11 or 50?"

INTRO: Final = (
    "The book's GPT (chapter 4: d 128, 4 layers, 4 heads, context 64) trained on *The "
    "Verdict* with chapter 5's loop. The slider steps through the positional tables the run "
    "kept: the table itself, how alike its positions are, the mean cosine against distance "
    "(the Distance tab's curve) beside step 0, its principal components (PC 1 against PC 2; "
    "the switch turns on the first three in 3-D, the Geometry tab's view) and the losses."
)


def _far(view: TrainingView) -> int:
    return min(FAR, view.context_length - 1)


def two(value: float) -> str:
    """``value`` at two decimals, never "-0.00" (a cosine of -0.001 reads 0.00).

    >>> two(-0.001), two(0.8251), two(-0.5)
    ('0.00', '0.83', '-0.50')
    """
    return f"{round(value, 2) + 0.0:.2f}"


def progress_sentence(view: TrainingView) -> str:
    """The mean cosine of neighbouring positions (and at distance 16) at the step and at
    step 0: "After 600 steps neighbouring positions have cosine 0.78 …"."""
    far = _far(view)
    now = [two(float(view.curve.mean[k])) for k in (1, far)]
    start = [two(float(view.start_curve.mean[k])) for k in (1, far)]
    if view.step == 0:
        return (
            f"At step 0 (the init) neighbouring positions have cosine {now[0]} (distance "
            f"{far}: {now[1]}): random rows point in unrelated directions."
        )
    return (
        f"After {view.step:,} steps neighbouring positions have cosine {now[0]} (distance "
        f"{far}: {now[1]}); at step 0 they had {start[0]} ({start[1]})."
    )


def loss_sentence(view: TrainingView) -> str:
    """The losses at the step, and why the validation loss climbs: the text is memorised."""
    facts = view.losses
    vocab = view.run.data.vocab_size
    if view.step == 0:
        return (
            f"At step 0 the training loss is {facts.train:.2f} and the validation loss "
            f"{facts.val:.2f}, close to ln {vocab:,} = {math.log(vocab):.2f}: a uniform guess "
            f"among the text's {vocab:,} tokens."
        )
    head = (
        f"By step {view.step:,} the model has been through the "
        f"{view.run.data.train_windows:,} training windows {facts.epochs:.1f} times; the "
        f"training loss fell from {facts.start_train:.2f} to {facts.train:.2f}"
    )
    if facts.val_climbs:
        return (
            f"{head}, but the validation loss rose from its lowest, {facts.best_val:.2f} at "
            f"step {facts.best_val_step:,}, to {facts.val:.2f}. {facts.train_tokens:,} tokens "
            "of text are far too few to learn English from: the model memorises them "
            f"(overfits), and what it memorised does not predict the {facts.val_tokens:,} "
            "tokens it never trained on."
        )
    return (
        f"{head}, and the validation loss from {facts.start_val:.2f} to {facts.val:.2f}: it "
        "still falls."
    )


def movement_sentence(view: TrainingView) -> str:
    """How far the rows moved against their length at step 0, and for a table that barely
    moved, why (AdamW's steps are about the learning rate, the rows start long)."""
    moved, config = view.movement, view.run.config
    if view.step == 0:
        return (
            f"At step 0 the rows are {moved.mean_start_norm:.3f} long on average (weights of "
            f"spread {moved.start_std:.3f})."
        )
    head = (
        f"Since step 0 the rows moved {moved.mean_moved:.3f} on average, "
        f"{_times(moved.ratio)} their length at step 0 ({moved.mean_start_norm:.3f})"
    )
    if moved.ratio >= BARELY:
        return f"{head}: what the table holds now is mostly what training wrote."
    budget = config.learning_rate * view.step
    return (
        f"{head}: against rows that long the table barely moves. AdamW changes a weight by "
        f"about the learning rate ({config.learning_rate:g}) per step, at most about "
        f"{budget:.2g} in {view.step:,} steps (here {moved.mean_abs_change:.3f} on average, "
        "weight decay's shrinking included), while the weights start with "
        f"spread {moved.start_std:.2f}: the random init's rows still dominate, and "
        f"neighbours keep cosine {two(float(view.curve.mean[1]))}."
    )


def _times(ratio: float) -> str:
    """``0.11`` as "11 % of", ``4.2`` as "4.2 times".

    >>> _times(0.113), _times(4.24)
    ('11 % of', '4.2 times')
    """
    return f"{ratio * 100:.0f} % of" if ratio < 1 else f"{ratio:.1f} times"


def sentences(view: TrainingView) -> list[str]:
    """The paragraphs under the Training figure, in reading order."""
    return [progress_sentence(view), movement_sentence(view), loss_sentence(view)]


def neighbour_answer(view: TrainingView) -> str:
    """Lecture mode's answer to "is position 10 more like position 11 or position 50?" (the
    positions of :data:`ASKED`, the last one moved inside a shorter table)."""
    position, near, far = (min(p, view.context_length - 1) for p in ASKED)
    near_cos = float(view.similarity[position, near])
    far_cos = float(view.similarity[position, far])
    where = f"after {view.step:,} steps of {run_label(view.run)}"
    numbers = f"cos({position}, {near}) = {two(near_cos)}, cos({position}, {far}) = {two(far_cos)}"
    if near_cos - far_cos >= 0.1:
        return f"Position {near}: {numbers} {where}. Training put neighbours close."
    if far_cos - near_cos >= 0.1:
        return f"Position {far}: {numbers} {where}."
    return f"Neither: {numbers} {where}. This table has not learned an order."


def moving_answer(small: TrainingView, default: TrainingView) -> str:
    """Lecture mode's answer to "which table moves?", from both runs at their steps: the one
    whose rows moved more against their starting length (the headline's measure, said first),
    then the other, said so that its distance agrees with the headline (further, where it is,
    but a smaller part of its start), and whether its rows still point where they started.

    >>> from posviz.training.runs import load_named_run
    >>> from posviz.training.view import build_training
    >>> small, default = (build_training(load_named_run(n), 1500) for n in ("small-init",
    ...                                                                 "default-init"))
    >>> print(moving_answer(small, default))  # doctest: +NORMALIZE_WHITESPACE
    The one that starts small, for its size: small-init's rows moved 3.5 times their starting
    length (0.79 from 0.23). default-init's moved further, 3.38, but that is 30 % of their
    starting length 11.27: they still point where they started (cosine 0.99 with step 0;
    small-init's 0.14). AdamW moves a weight by about the learning rate per step, whatever its
    size.
    """
    mover, other = sorted((small, default), key=lambda view: view.movement.ratio, reverse=True)
    which = "The one that starts small" if mover is small else "The one that starts at N(0, 1)"
    moved, still = mover.movement, other.movement
    said = (
        f"{which}, for its size: {run_label(mover.run)}'s rows moved {_times(moved.ratio)} "
        f"their starting length ({moved.mean_moved:.2f} from {moved.mean_start_norm:.2f})."
    )
    if still.mean_moved > moved.mean_moved:
        said += (
            f" {run_label(other.run)}'s moved further, {still.mean_moved:.2f}, but that is "
            f"{_times(still.ratio)} their starting length {still.mean_start_norm:.2f}"
        )
    else:
        said += (
            f" {run_label(other.run)}'s moved {_times(still.ratio)} theirs "
            f"({still.mean_moved:.2f} from {still.mean_start_norm:.2f})"
        )
    cosines = (
        f"cosine {two(still.mean_start_cosine)} with step 0; {run_label(mover.run)}'s "
        f"{two(moved.mean_start_cosine)}"
    )
    if still.mean_start_cosine >= STILL_POINTING:
        said += f": they still point where they started ({cosines})."
    else:
        said += f" ({cosines})."
    return f"{said} AdamW moves a weight by about the learning rate per step, whatever its size."
