"""Lecture mode: the input pipeline of section 2.8 revealed one step per click.

>>> [step.title for step in STEPS][:2]
['1. Text', '2. Token IDs']
>>> STEPS[-1].panels
3
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from posviz.config import Scheme


@dataclass(frozen=True)
class Step:
    """One slide of lecture mode: its title, what it says, and how much of the view it shows."""

    title: str
    caption: str
    panels: int  # heatmap panels shown: 0 (none yet) to 3 (token | position | input)
    show_ids: bool  # token chips with their ids


STEPS: Final = (
    Step(
        "1. Text",
        "We start from raw text. The model never sees letters, only numbers.",
        panels=0,
        show_ids=False,
    ),
    Step(
        "2. Token IDs",
        "GPT-2's byte-pair tokenizer cuts the text into tokens and gives each one of "
        "50,257 IDs. A word that repeats gets the same ID each time.",
        panels=0,
        show_ids=True,
    ),
    Step(
        "3. Token embeddings",
        "Each ID selects one row of the token embedding table, nn.Embedding(50257, d). "
        "Same ID, same row: the repeated tokens have identical vectors.",
        panels=1,
        show_ids=True,
    ),
    Step(
        "4. Positional embeddings",
        "A second table, nn.Embedding(context_length, d), holds one vector per position, "
        "counting from 0. Row p is the same whatever token stands at p.",
        panels=2,
        show_ids=True,
    ),
    Step(
        "5. Input embeddings = token + position",
        "Adding the two gives the input embeddings. Now the repeated tokens differ, so "
        "attention can tell them apart. (In training GPT-2 also applies dropout after this "
        "sum; posviz does not show it.)",
        panels=3,
        show_ids=True,
    ),
)

# Steps 4 and 5 say what the chosen positional scheme does (STEPS words them for "learned").
_SCHEME_STEPS: Final[dict[Scheme, tuple[tuple[str, str], tuple[str, str]]]] = {
    "sinusoidal": (
        (
            "4. Positional encoding (sin/cos)",
            "A fixed table of sine and cosine waves holds one vector per position, counting "
            "from 0: nothing to learn. Row p is the same whatever token stands at p.",
        ),
        (
            "5. Input embeddings = token + position",
            "Adding the two gives the input embeddings. Now the repeated tokens differ, so "
            "attention can tell them apart.",
        ),
    ),
    "none": (
        (
            "4. No positional signal",
            "Without a positional scheme nothing is added: every position contributes a row "
            "of zeros.",
        ),
        (
            "5. Input embeddings = token embeddings",
            "With nothing added, the repeated tokens keep identical vectors: attention cannot "
            "tell them apart and sees the text as a bag of tokens.",
        ),
    ),
    "rope": (
        (
            "4. RoPE: an angle per position",
            "RoPE adds no vectors: it rotates each pair of dimensions by an angle that grows "
            "with the position. The panel shows cos(position × θᵢ).",
        ),
        (
            "5. Rotated token vectors",
            "Rotating each token vector by its position makes the repeated tokens differ. "
            "(Real models such as Llama rotate queries and keys inside attention.)",
        ),
    ),
}


def step_text(index: int, scheme: Scheme) -> tuple[str, str]:
    """Title and caption of step ``index`` (0-4) for ``scheme``.

    >>> step_text(4, "none")[0]
    '5. Input embeddings = token embeddings'
    >>> step_text(4, "learned") == (STEPS[4].title, STEPS[4].caption)
    True
    """
    if index >= 3 and scheme in _SCHEME_STEPS:
        return _SCHEME_STEPS[scheme][index - 3]
    return STEPS[index].title, STEPS[index].caption
