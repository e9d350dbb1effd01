"""The lesson's words: what the page says about each positional scheme and about a repeated
token. The formulas are in :mod:`posviz.schemes` and :mod:`posviz.similarity`; this module
holds only sentences, so they can be read (and reworded) in one place.

>>> SCHEME_LABELS["rope"]
'RoPE (rotary, Llama)'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from posviz.config import Scheme
from posviz.similarity import RepeatedToken
from posviz.token_text import for_markdown

SCHEME_LABELS: Final[dict[Scheme, str]] = {  # the scheme menu
    "learned": "Learned (GPT-2, the book)",
    "sinusoidal": "Sinusoidal (Transformer paper)",
    "none": "None (order-blind)",
    "rope": "RoPE (rotary, Llama)",
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
}
POSITION_PANEL_NOTES: Final[dict[Scheme, str]] = {  # under the similarity figure
    "learned": "Middle: similarity of the learned position vectors (random before training).",
    "sinusoidal": (
        "Middle: similarity of the sin/cos vectors; it depends only on the distance between "
        "positions, so the stripes run parallel to the diagonal."
    ),
    "none": (
        "Middle: no position signal, every vector is zero; a zero vector has no direction, "
        "so posviz shows its similarity as 0."
    ),
    "rope": (
        "Middle: similarity of cos(position × θᵢ), the rotation RoPE applies; real models "
        "rotate queries and keys inside attention, not the input."
    ),
}
# What the scheme does to two occurrences of one token, for the repeat sentence.
_WHY: Final[dict[Scheme, str]] = {
    "learned": "the learned position vectors added to them make the two input vectors differ",
    "sinusoidal": "the sin/cos position vectors added to them make the two input vectors differ",
    "none": (
        "without a position signal the two input vectors are identical too, so attention "
        "cannot tell the occurrences apart (it is blind to order)"
    ),
    "rope": (
        "rotating each vector by its position makes them differ; for RoPE the similarity "
        "depends only on the distance between the positions"
    ),
}


def repeat_sentence(repeat: RepeatedToken, *, markdown: bool = False) -> str:
    """The sentence under the similarity figure, quoting its values for ``repeat``.

    Plain text by default; with ``markdown=True`` the token text is escaped for
    ``st.markdown`` and put in typographic quotes.

    >>> from posviz.similarity import RepeatedToken
    >>> repeat = RepeatedToken("none", 8278, "␣rose", 1, 4, 1.0, 0.0, 1.0)
    >>> repeat_sentence(repeat)[:60]
    "Token '␣rose' (id 8278) appears at positions 1 and 4. The to"
    """
    token = f"“{for_markdown(repeat.token_text)}”" if markdown else f"'{repeat.token_text}'"
    return (
        f"Token {token} (id {repeat.token_id}) appears at positions {repeat.first} and "
        f"{repeat.second}. The token panel shows similarity {repeat.token_similarity:.3f} "
        f"between them (same token id, same vector); the input panel shows "
        f"{repeat.input_similarity:.3f}: {_WHY[repeat.scheme]}."
    )


# What the page says under the embeddings figure: only the scheme's own signal tells a
# repeated token's rows apart (or, without one, nothing does).
ORDER_NOTES: Final[dict[Scheme, str]] = {
    "learned": "Self-attention on its own is blind to order: a repeated token has the same "
    "token vector wherever it stands (compare its rows in the left panel). Only the added "
    "position vectors make its rows of the right panel differ. Positions count from 0.",
    "sinusoidal": "Self-attention on its own is blind to order: a repeated token has the same "
    "token vector wherever it stands (compare its rows in the left panel). Only the added "
    "sin/cos vectors make its rows of the right panel differ. Positions count from 0.",
    "none": "Self-attention on its own is blind to order: a repeated token has the same "
    "token vector wherever it stands, and with nothing added its rows of the right panel "
    "are the same too: attention cannot tell the occurrences apart.",
    "rope": "Self-attention on its own is blind to order: a repeated token has the same "
    "token vector wherever it stands (compare its rows in the left panel). Only the rotation "
    "by position makes its rows of the right panel differ. Positions count from 0.",
}


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
    }[scheme]
    result = "= rotated" if scheme == "rope" else "= input"
    return (
        ShapeLabel("inputs [B, T]", f"[{batch}, {n}]"),
        ShapeLabel("token embeddings [B, T, d]", f"[{batch}, {n}, {emb_dim}]"),
        position,
        ShapeLabel(f"{result} embeddings [B, T, d]", f"[{batch}, {n}, {emb_dim}]"),
    )
