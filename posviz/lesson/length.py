"""The words of the Length view: each sentence built from the numbers of a
:class:`~posviz.training.length_view.LengthView`, so none can claim what the runs do not show.

A band's loss is the mean over its windows of each window's mean loss over the second half of
its positions (positions 32–63 of an input of 64, 128–255 of one of 256); two bands differ in
words ("rises", "falls") only when they differ by more than :data:`SPREAD` standard errors of
their difference, else they are "as" each other.

>>> from posviz.config import Settings
>>> from posviz.training.length_view import build_length
>>> print(headline(build_length(Settings())))  # doctest: +ELLIPSIS
Trained on 64 tokens and read on held-out text, the loss at positions 128–255 of an input ...
"""

from __future__ import annotations

import math
from typing import Final

from posviz.schemes._spec import SchemeSpec
from posviz.schemes.rope_scaling import scaling_sentence
from posviz.training.length import Reading
from posviz.training.length_view import LengthView, SchemeCurves, band

SPREAD: Final = 2.0  # standard errors of a difference under which two bands read "as" each other

INTRO: Final = (
    "Train short, test long: each scheme's model (the book's GPT, only the positional scheme "
    "differs) was trained on inputs of L tokens of *Tiny Shakespeare* and then reads held-out "
    "text in inputs of L, 2L and 4L tokens. The curves are the mean loss at each position; "
    "the dotted line marks L. Nothing is trained here: the numbers are the shipped runs'."
)


def two(value: float) -> str:
    """``value`` at two decimals.

    >>> two(4.5468), two(5.0)
    ('4.55', '5.00')
    """
    return f"{value:.2f}"


def short_name(spec: SchemeSpec) -> str:
    """A scheme's name in a list of numbers: ``ALiBi``, ``sinusoidal``, ``no positions``.

    >>> from posviz.schemes import scheme
    >>> short_name(scheme("alibi")), short_name(scheme("sinusoidal")), short_name(scheme("none"))
    ('ALiBi', 'sinusoidal', 'no positions')
    """
    if spec.positionless:
        return "no positions"
    label = spec.label.split(" (")[0]
    return label if any(c.isupper() for c in label[1:]) or label[:2].isupper() else label.lower()


def same(later: Reading, first: Reading) -> bool:
    """Whether two bands differ by no more than :data:`SPREAD` standard errors of their
    difference."""
    error = math.hypot(later.band_error, first.band_error)
    return abs(later.band_mean - first.band_mean) <= SPREAD * error


def subject(spec: SchemeSpec) -> str:
    """A scheme's name as a sentence's subject: ``ALiBi``, ``the model without positions``.

    >>> from posviz.schemes import scheme
    >>> subject(scheme("none")), subject(scheme("rope"))
    ('the model without positions', 'RoPE')
    """
    return "the model without positions" if spec.positionless else short_name(spec)


def compared(later: Reading, first: Reading) -> str:
    """``rises to 5.39 (4.66 within 64)``, ``falls to …``, or ``4.55, as within 64 (4.63)``:
    the verb read from the difference against :data:`SPREAD` standard errors."""
    difference = later.band_mean - first.band_mean
    within = f"within {first.length}"
    if same(later, first):
        return f"{two(later.band_mean)}, as {within} ({two(first.band_mean)})"
    verb = "rises" if difference > 0 else "falls"
    return f"{verb} to {two(later.band_mean)} ({two(first.band_mean)} {within})"


def _clause(view: LengthView, curves: SchemeCurves) -> str:
    first, last = curves.readings[0], curves.readings[-1]
    said = f"{short_name(curves.spec)} {compared(last, first)}"
    rotation = curves.spec.rotation is not None
    if rotation and view.extension.in_runs:
        extended = view.extension.readings[-1]
        difference = extended.band_mean - last.band_mean
        error = math.hypot(extended.band_error, last.band_error)
        if abs(difference) <= SPREAD * error:
            verb = "leaves it at"
        else:
            verb = "brings it down to" if difference < 0 else "raises it to"
        said += f", and {view.extension.label} {verb} {two(extended.band_mean)} without retraining"
    return said


def headline(view: LengthView) -> str:
    """ "Trained on 64 tokens …, ALiBi 4.55, as within 64 (4.63); sinusoidal rises to 5.39
    (4.66 within 64); …": every chosen scheme's last band against its first."""
    readable = [c for c in view.curves if not c.error]
    ended = [c for c in view.curves if c.error]
    if not view.curves:
        return "Choose a scheme to see its loss past the length it was trained on."
    parts = []
    if readable:
        low, high = band(readable[0].readings[-1])
        first_low, first_high = band(readable[0].readings[0])
        parts.append(
            f"Trained on {view.context_length} tokens and read on held-out text, the loss at "
            f"positions {low}–{high} of an input of {view.longest} against positions "
            f"{first_low}–{first_high} of an input of {view.context_length}: "
            + "; ".join(_clause(view, c) for c in readable)
            + "."
        )
    for curves in ended:
        parts.append(
            f"The {short_name(curves.spec)} table has {view.context_length} rows and cannot "
            f"read position {view.context_length}: "
            f"torch raises {curves.error}."
        )
    return " ".join(parts)


def extension_sentence(view: LengthView) -> str:
    """What the extension does to RoPE's pairs (the registry's sentence) and how many pairs
    never finished a turn within L, where training could not show them a whole one."""
    facts = view.frequencies
    unseen = sum(p.wavelength_before > view.context_length for p in facts.pairs)
    return (
        f"{scaling_sentence(facts)} At head dimension {facts.head_dim} (the runs'), "
        f"{unseen} of {len(facts.pairs)} pairs have a wavelength longer than L = "
        f"{view.context_length}: training never turned them through a whole circle."
    )


def attention_sentence(view: LengthView) -> str:
    """The settings' sentence past L: RoPE's scores as at position 0 (it is relative), and
    how far the extension moves them."""
    plain = view.attention_plain
    if plain is None:
        return "Type a sentence in the text box to see its attention scores past L."
    first, last = plain.shown.start, plain.shift_test.last_position
    change = plain.shift_test.scores_change
    same = f"{change:.1g}" if change else "0"
    return (
        f"Your sentence moved to positions {first}–{last}, head {plain.head} of "
        f"{plain.heads}: under RoPE as trained its scores are those at positions "
        f"0–{last - first} (they differ by at most {same}: RoPE depends on distance only); "
        f"with {view.extension.label} they change by up to {view.scores_change:.2f}."
    )


def _rise(curves: SchemeCurves) -> float:
    return curves.readings[-1].band_mean - curves.readings[0].band_mean


def keeps_answer(view: LengthView) -> str:
    """The first slide's answer: which schemes keep their loss at 4L (within
    :data:`SPREAD` standard errors of their loss within L), which rises most, and the table
    that cannot read past L."""
    readable = [c for c in view.curves if not c.error]
    if not readable:
        return headline(view)
    last = readable[0].readings[-1]
    low, high = band(last)
    keep = [c for c in readable if same(c.readings[-1], c.readings[0])]
    worst = max(readable, key=_rise)
    parts = []
    if keep:
        parts.append(
            " and ".join(
                f"{subject(c.spec)} keeps it ({two(c.readings[-1].band_mean)} at positions "
                f"{low}–{high}, {two(c.readings[0].band_mean)} within {view.context_length})"
                for c in keep
            )
        )
    else:
        parts.append("No scheme keeps it")
    parts.append(f"{subject(worst.spec)} {compared(worst.readings[-1], worst.readings[0])}")
    said = "; ".join(parts) + "."
    said = said[0].upper() + said[1:]
    for curves in view.curves:
        if curves.error:
            said += (
                f" The {short_name(curves.spec)} table cannot read position "
                f"{view.context_length} at all: {curves.error}."
            )
    return said


def stretch_answer(view: LengthView) -> str:
    """The second slide's answer: RoPE's loss at 4L as trained and with the extension, and
    what the extension did to its pairs."""
    rope, ext = view.rope, view.extension
    if rope is None or not ext.in_runs:
        return extension_sentence(view)
    plain, stretched, first = rope.readings[-1], ext.readings[-1], rope.readings[0]
    low, high = band(plain)
    where, before, after = f"positions {low}–{high}", two(plain.band_mean), two(stretched.band_mean)
    difference = stretched.band_mean - plain.band_mean
    if same(stretched, plain):
        verdict = (
            f"Not much: with {ext.label} RoPE's loss at {where} is {after}, against {before} as "
            "trained"
        )
    elif difference < 0:
        answer = "Yes" if same(stretched, first) else "Partly"
        verdict = (
            f"{answer}: {ext.label} brings RoPE's loss at {where} down from {before} to "
            f"{after} without retraining"
        )
    else:
        verdict = (
            f"Not this way: {ext.label} raises RoPE's loss at {where} from {before} to {after}"
        )
    facts = view.frequencies
    kept, blended = facts.count("kept"), facts.count("blended")
    divisors = facts.divisors("divided")
    said = f"{verdict} ({two(first.band_mean)} within {view.context_length}). It keeps {kept} "
    said += f"of {len(facts.pairs)} pairs as trained"
    if blended:
        said += f", blends {blended}"
    if divisors:
        divisor = max(divisors)
        said += (
            f" and divides {len(divisors)} by {divisor:.3g}: in {view.longest} positions those "
            f"turn as far as in {view.longest / divisor:.3g} before"
        )
    return said + "."


def limits_note(view: LengthView) -> str:
    """The honest limits: a toy model, one text, one seed, and each band's standard error."""
    shown = [r for c in view.curves for r in c.readings if not r.error]
    shown += list(view.extension.readings)
    if not shown:
        return ""
    errors = [r.band_error for r in shown]
    windows = [r.band_loss.numel() for r in shown]
    return (
        f"Limits: a toy model (the book's GPT, trained at L = {view.context_length}), one "
        "text, one seed. Each band's mean has a standard error of "
        f"{two(min(errors))}–{two(max(errors))} (over {min(windows)}–{max(windows)} windows): "
        f"differences under about {two(SPREAD * math.sqrt(2) * max(errors))} are "
        "within the noise."
    )


def sentences(view: LengthView) -> list[str]:
    """The view's sentences in reading order: the notices, the headline, the frequencies, the
    attention, the limits."""
    return [
        *view.notices,
        headline(view),
        extension_sentence(view),
        attention_sentence(view),
        limits_note(view),
    ]
