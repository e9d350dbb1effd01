"""``learned``: GPT-2's and the book's ``nn.Embedding(context_length, emb_dim)``, added to the
token embeddings. Its rows are looked up (the book's seeded init, or GPT-2's trained table),
so the spec has no formula: :class:`~posviz.pipeline.EmbeddingTables` gives the rows."""

from __future__ import annotations

from typing import Final

from posviz.schemes._spec import Acts, PanelTitles, SchemeSpec, SchemeWords

LEARNED: Final = SchemeSpec(
    name="learned",
    label="Learned (GPT-2, the book)",
    acts=Acts.ADDS_TO_INPUT,
    colour="#E69F00",  # orange: the book's random init
    table_label="learned, random init",
    learned=True,
    titles=PanelTitles(
        embeddings=(
            "token embeddings",
            "positional embeddings<br>(learned)",
            "input embeddings<br>= sum",
        ),
        similarity=("token embeddings", "positional embeddings<br>(learned)", "input embeddings"),
        attention_position="position part<br>(rows added)",
    ),
    words=SchemeWords(
        note="GPT-2 and the book learn the positional table: it starts random, as here, and "
        "training shapes it. Its vectors are **added** to the token vectors.",
        position_panel_note="Middle: similarity of the learned position vectors.",
        what_it_does="The learned scheme adds row p of its table to the token at position p, "
        "before W_query and W_key: its position part depends on where both tokens are.",
        name="the learned scheme",
        scores="the learned scheme's scores",
        positions="learned positions added",
        added="the position vectors added to them",
        shape="+ positional embeddings [T, d]",
        table_noun="table",
        table_name="the learned table",
    ),
)
