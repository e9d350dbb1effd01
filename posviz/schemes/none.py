"""``none``: nothing; the input equals the token embeddings and attention is blind to order."""

from __future__ import annotations

from typing import Final

from posviz.schemes._spec import Acts, PanelTitles, SchemeSpec, SchemeWords

NONE: Final = SchemeSpec(
    name="none",
    label="None (order-blind)",
    acts=Acts.NOTHING,
    colour="#000000",
    table_label="none (all zeros)",
    titles=PanelTitles(
        embeddings=(
            "token embeddings",
            "no positional signal<br>(zeros)",
            "input = token<br>embeddings",
        ),
        similarity=(
            "token embeddings",
            "no positional signal<br>(all 0)",
            "input = token<br>embeddings",
        ),
        attention_position="position part<br>(none: zeros)",
    ),
    words=SchemeWords(
        note="No position signal: the input equals the token embeddings. Self-attention then "
        "treats the text as a bag of tokens: *dog bites man* and *man bites dog* look the same.",
        position_panel_note=(
            "Middle: no position signal, every vector is zero; a zero vector has no direction, "
            "so posviz shows its similarity as 0."
        ),
        what_it_does="Without positions the position part is zero: a query scores a key by its "
        "token alone, wherever the two stand.",
        name="none",
        scores="the scores, with no positions,",
        positions="no position signal",
        added="nothing",
        shape="+ nothing (no positional signal)",
        table_noun="table",
        table_name="the zero table",
    ),
)
