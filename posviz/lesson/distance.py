"""The words of the Distance & length tab, each built from the numbers of a
:class:`~posviz.distance.DistanceView`.

>>> from posviz.config import Settings
>>> from posviz.distance import build_distance
>>> from posviz.view import build_view
>>> view = build_distance(build_view(Settings(context_length=32, emb_dim=16)), beyond=8)
>>> print(band_sentence(view.curves[0]))
**learned, random init (seed 123)**: at one distance the cosine varies by up to 1.17 over i: \
it depends on where the two positions are, not only on how far apart.
"""

from __future__ import annotations

from typing import Final

from posviz.distance import DistanceCurve, DistanceView
from posviz.plots.distance import DistanceDecisions
from posviz.schemes import scheme

FLAT: Final = 1e-4  # a band narrower than this at every distance is flat (float32 rounding)

INTRO: Final = (
    "For every distance k: the mean cosine similarity of positions i and i + k over all i "
    "(the line) and the smallest and largest of those cosines (the band). A flat band means "
    "the similarity depends only on how far apart two positions are: translation invariance. "
    "RoPE's line is the cosine of one token vector rotated to positions i and i + k, averaged "
    "over the window's token vectors."
)
BEYOND_HELP: Final = (
    "Positions T … T+E−1 past the context length: the sinusoidal table and RoPE compute them "
    "by formula; a learned table has no rows there."
)
NONE_NOTE: Final = (
    "The *none* scheme has no positional signal (every position vector is zero), so it has no "
    "curve here."
)


def band_sentence(curve: DistanceCurve) -> str:
    """Whether the band is flat (translation invariance), from its widest point."""
    if curve.scheme.rotates:  # its curve is computed, not measured over i
        return (
            f"**{curve.label}**: rotations compose, (Rᵢx)·(Rᵢ₊ₖx) = x·Rₖx, so the score is "
            "the same for every i: no band."
        )
    if curve.spread < FLAT:
        return (
            f"**{curve.label}**: at every distance the cosine varies by at most "
            f"{curve.spread:.1e} over i (a flat band): it depends only on the distance k, not "
            "on where the pair starts."
        )
    return (
        f"**{curve.label}**: at one distance the cosine varies by up to {curve.spread:.2f} "
        "over i: it depends on where the two positions are, not only on how far apart."
    )


def decay_sentence(curve: DistanceCurve) -> str | None:
    """The mean cosine at distance 1, halfway and at the last distance (``None`` below 3)."""
    last = curve.distances - 1
    if last < 2:
        return None
    middle = last // 2
    mean = curve.mean
    return (
        f"**{curve.label}**: mean cosine {float(mean[1]):.3f} at k = 1, "
        f"{float(mean[middle]):.3f} at k = {middle}, {float(mean[last]):.3f} at k = {last}; "
        f"for k ≥ 1 it stays between {float(mean[1:].min()):.3f} and "
        f"{float(mean[1:].max()):.3f}."
    )


def ends_sentences(view: DistanceView, decisions: DistanceDecisions) -> list[str]:
    """What each table does past the context length, with torch's own error message; the
    positions past it named only when the figure shades them."""
    context, beyond = view.context_length, view.beyond
    found = []
    formulas = [end.scheme.words.table_name for end in view.ends if end.rows is None]
    if beyond and decisions.shaded:
        found.append(
            f"Past the context length (T = {context}): positions {context}–"
            f"{context + beyond - 1} come from the formulas of {' and '.join(formulas)}."
        )
    for end in view.ends:
        if end.rows is None or end.error is None:
            continue
        if end.trained:
            found.append(
                f"**{end.label}**: `wpe` has {end.rows:,} rows, positions 0–{end.rows - 1}, "
                f"and nothing beyond: looking up position {end.rows} raises `{end.error}`."
            )
        else:
            found.append(
                f"**{end.label}**: `nn.Embedding({end.rows}, {view.settings.emb_dim})` has "
                f"rows 0–{end.rows - 1} only; looking up position {end.rows} raises "
                f"`{end.error}` (torch's message, from running it)."
            )
    return found


def sentences(view: DistanceView, decisions: DistanceDecisions) -> list[str]:
    """The Markdown paragraphs under the Distance figure ``decisions`` describe, in reading
    order."""
    found = [band_sentence(curve) for curve in view.curves]
    found += [s for s in (decay_sentence(curve) for curve in view.curves) if s is not None]
    found += ends_sentences(view, decisions)
    options = view.settings.options()
    for curve in view.curves:  # what the options did to a rotation's curve
        rotation = curve.scheme.rotation
        said = (
            ""
            if rotation is None
            else rotation.describe(view.settings.emb_dim, options, curve.distances)
        )
        if said:
            found.append(f"**{curve.label}**: {said}")
    spec = scheme(view.settings.scheme)
    if spec.positionless:
        found.append(NONE_NOTE)
    if spec.bias is not None:
        found.append(spec.bias.distance_note)
    return found


def lecture_answer(view: DistanceView, decisions: DistanceDecisions) -> str:
    """Lecture mode's answer, from the curves: how alike neighbours are per scheme, whether
    the band is flat, and what the learned table says past the context length (the figure's
    ``decisions``: the T it shades from)."""
    parts = []
    for curve in view.curves:
        last = curve.distances - 1
        near = float(curve.mean[min(1, last)])
        shape = (
            "the same for every i"
            if curve.scheme.rotates or curve.spread < FLAT
            else f"band up to {curve.spread:.2f} wide"
        )
        parts.append(
            f"**{curve.label}**: {near:.2f} at k = 1, {float(curve.mean[last]):.2f} at k = {last} "
            f"({shape})"
        )
    learned = next(end for end in view.ends if end.scheme.learned and not end.trained)
    return (
        "; ".join(parts)
        + f". Past T = {decisions.context_length} the formulas go on; the learned table raises "
        f"`{learned.error}`."
    )
