"""The lesson's words about each positional scheme: its menu label, its note, the tensor
shapes. The formulas are in :mod:`posviz.schemes` and :mod:`posviz.similarity`; what a
repeated token shows is worded in :mod:`posviz.lesson.repeats`.

>>> SCHEME_LABELS["rope"]
'RoPE (rotary, Llama)'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from posviz.config import Scheme

SCHEME_LABELS: Final[dict[Scheme, str]] = {  # the scheme menu
    "learned": "Learned (GPT-2, the book)",
    "sinusoidal": "Sinusoidal (Transformer paper)",
    "none": "None (order-blind)",
    "rope": "RoPE (rotary, Llama)",
    "alibi": "ALiBi (linear bias, BLOOM)",
    "t5": "T5 relative bias",
}
SCHEME_NOTES: Final[dict[Scheme, str]] = {  # Markdown, shown under the embeddings figure
    "learned": "GPT-2 and the book learn the positional table: it starts random, as here, and "
    "training shapes it. Its vectors are **added** to the token vectors.",
    "sinusoidal": "Vaswani et al. (2017) use fixed sine/cosine waves, "
    "PE[p, 2i] = sin(p / 10000^(2i/d)) and PE[p, 2i+1] = cos(…): nothing to learn, and any "
    "length works. Also **added** to the token vectors.",
    "none": "No position signal: the input equals the token embeddings. Self-attention then "
    "treats the text as a bag of tokens: *dog bites man* and *man bites dog* look the same.",
    "rope": "RoPE adds nothing: it **rotates** each pair of dimensions (j, j + d/2) of the "
    "vector at position p by the angle p·θⱼ, θⱼ = 10000^(−2j/d). The middle panel shows "
    "cos(p·θⱼ). Real models (Llama) rotate the queries and keys inside attention, not the "
    "input; posviz rotates the token vectors to show the effect.",
    "alibi": "ALiBi adds nothing to the input: it adds −m·(i − j) to the attention score of "
    "query i and key j, a penalty that grows linearly with the distance, with one slope m per "
    "head. The middle panel is zeros and the input equals the token embeddings; see the "
    "**Attention** tab.",
    "t5": "T5's relative bias adds nothing to the input: it adds a number E[bucket(j − i)] per "
    "head to the attention score of query i and key j, one of 32 buckets of distance (exact "
    "up to 15, wider up to 128, one bucket beyond). The middle panel is zeros and the input "
    "equals the token embeddings; see the **Attention** tab.",
}
POSITION_PANEL_NOTES: Final[dict[Scheme, str]] = {  # under the similarity figure
    "learned": "Middle: similarity of the learned position vectors.",
    "sinusoidal": "Middle: similarity of the sin/cos vectors.",
    "none": (
        "Middle: no position signal, every vector is zero; a zero vector has no direction, "
        "so posviz shows its similarity as 0."
    ),
    "rope": (
        "Middle: similarity of cos(position × θᵢ), the rotation RoPE applies; real models "
        "rotate queries and keys inside attention, not the input."
    ),
    "alibi": (
        "Middle: ALiBi adds no position vectors (every vector is zero, shown as 0); its bias "
        "acts on the attention scores, see the Attention tab."
    ),
    "t5": (
        "Middle: T5's relative bias adds no position vectors (every vector is zero, shown as "
        "0); its bias acts on the attention scores, see the Attention tab."
    ),
}
DISTANCE_ONLY: Final = 1e-4  # a diagonal constant to 4 decimals "depends only on the distance"


def position_panel_note(scheme: Scheme, *, spread: float) -> str:
    """The note under the similarity figure for ``scheme``; for the sinusoidal table, whether
    its similarity depends only on the distance between positions, as its formula promises
    for an even d, read from ``spread`` (:func:`posviz.similarity.distance_spread` of the
    middle panel).

    >>> position_panel_note("sinusoidal", spread=2e-7).endswith("run along the diagonal.")
    True
    """
    note = POSITION_PANEL_NOTES[scheme]
    if scheme != "sinusoidal":
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
    scheme: Scheme, batch_shape: tuple[int, int], emb_dim: int, context_length: int
) -> tuple[ShapeLabel, ...]:
    """The tensor shapes of section 2.8 for a batch ``[B, n]``, worded for ``scheme``: what
    it adds (a table, fixed waves, nothing) or, for RoPE, that it rotates.

    >>> [s.label for s in shape_labels("none", (1, 9), 64, 16)][2:]
    ['+ nothing (no positional signal)', '= input embeddings [B, T, d]']
    >>> shape_labels("learned", (1, 9), 64, 16)[2].note
    'rows 0–8 of the [16, 64] table'
    """
    batch, n = batch_shape
    rows = f"rows 0–{n - 1} of the [{context_length}, {emb_dim}]" if n < context_length else None
    position = {
        "learned": ShapeLabel(
            "+ positional embeddings [T, d]", f"[{n}, {emb_dim}]", rows and f"{rows} table"
        ),
        "sinusoidal": ShapeLabel(
            "+ sinusoidal encoding [T, d]", f"[{n}, {emb_dim}]", rows and f"{rows} encoding"
        ),
        "none": ShapeLabel("+ nothing (no positional signal)", "0"),
        "rope": ShapeLabel("↻ rotation angles [T, d/2]", f"[{n}, {emb_dim // 2}]"),
        "alibi": ShapeLabel("+ nothing (ALiBi biases the scores)", "0"),
        "t5": ShapeLabel("+ nothing (T5 biases the scores)", "0"),
    }[scheme]
    result = "= rotated" if scheme == "rope" else "= input"
    return (
        ShapeLabel("inputs [B, T]", f"[{batch}, {n}]"),
        ShapeLabel("token embeddings [B, T, d]", f"[{batch}, {n}, {emb_dim}]"),
        position,
        ShapeLabel(f"{result} embeddings [B, T, d]", f"[{batch}, {n}, {emb_dim}]"),
    )
