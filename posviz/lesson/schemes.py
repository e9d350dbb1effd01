"""The lesson's words about the positional scheme shown: the note on its similarity panel and
the tensor shapes. Each scheme's own words (its menu label, its notes) are its spec's
(:class:`posviz.schemes.SchemeWords`); the formulas are in :mod:`posviz.schemes` and
:mod:`posviz.similarity`; what a repeated token shows is worded in
:mod:`posviz.lesson.repeats`.

>>> scheme("rope").label
'RoPE (rotary, Llama)'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from posviz.schemes import SchemeSpec, scheme

DISTANCE_ONLY: Final = 1e-4  # a diagonal constant to 4 decimals "depends only on the distance"


def position_panel_note(positional: str | SchemeSpec, *, spread: float) -> str:
    """The note under the similarity figure for the scheme ``positional``; for a table made
    by a formula (sinusoidal), whether its similarity depends only on the distance between
    positions, as its formula promises for an even d, read from ``spread``
    (:func:`posviz.similarity.distance_spread` of the middle panel).

    >>> position_panel_note("sinusoidal", spread=2e-7).endswith("run along the diagonal.")
    True
    """
    spec = scheme(positional)
    note = spec.words.position_panel_note
    if spec.table is None:
        return note
    if spread <= DISTANCE_ONLY:
        return (
            f"{note} It depends only on the distance between positions (each diagonal is "
            "constant to 4 decimals), so the stripes run along the diagonal."
        )
    return (
        f"{note} It depends almost only on the distance between positions: along a diagonal "
        f"it varies by up to {spread:.4f} (with an odd d the last dimension has no cos partner)."
    )


@dataclass(frozen=True)
class ShapeLabel:
    """One of the shape metrics: its label, the shape, and an optional small note."""

    label: str
    value: str
    note: str | None = None


def shape_labels(
    positional: str | SchemeSpec, batch_shape: tuple[int, int], emb_dim: int, context_length: int
) -> tuple[ShapeLabel, ...]:
    """The tensor shapes of section 2.8 for a batch ``[B, n]``, worded for the scheme
    ``positional``: what it adds (a table, fixed waves, nothing) or, for RoPE, that it
    rotates.

    >>> [s.label for s in shape_labels("none", (1, 9), 64, 16)][2:]
    ['+ nothing (no positional signal)', '= input embeddings [B, T, d]']
    >>> shape_labels("learned", (1, 9), 64, 16)[2].note
    'rows 0–8 of the [16, 64] table'
    """
    batch, n = batch_shape
    rows = f"rows 0–{n - 1} of the [{context_length}, {emb_dim}]" if n < context_length else None
    spec = scheme(positional)
    words = spec.words
    if spec.adds_to_input:
        note = rows and f"{rows} {words.table_noun}"
        position = ShapeLabel(words.shape, f"[{n}, {emb_dim}]", note)
    elif spec.rotates:
        position = ShapeLabel(words.shape, f"[{n}, {emb_dim // 2}]")
    else:
        position = ShapeLabel(words.shape, "0")
    result = "= rotated" if spec.rotates else "= input"
    return (
        ShapeLabel("inputs [B, T]", f"[{batch}, {n}]"),
        ShapeLabel("token embeddings [B, T, d]", f"[{batch}, {n}, {emb_dim}]"),
        position,
        ShapeLabel(f"{result} embeddings [B, T, d]", f"[{batch}, {n}, {emb_dim}]"),
    )
