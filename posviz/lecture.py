"""Lecture mode: the input pipeline of section 2.8 revealed one step per click.

>>> [step.title for step in STEPS][:2]
['1. Text', '2. Token IDs']
>>> STEPS[-1].panels
3
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import plotly.graph_objects as go


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


def reveal_panels(figure: go.Figure, panels: int) -> go.Figure:
    """Hide the heatmaps (and their titles) after the first ``panels`` ones, in place."""
    for index, trace in enumerate(figure.data):
        trace.visible = index < panels
    for index, annotation in enumerate(figure.layout.annotations):
        annotation.visible = index < panels
    return figure
