"""posviz.lesson.schemes: every scheme has its words, and the note on the sinusoidal panel says
"only the distance" only when its numbers show it."""

from __future__ import annotations

import numpy as np
import pytest
from reference import cosine_similarity, sinusoidal

from posviz.lesson.schemes import position_panel_note
from posviz.schemes import SCHEMES, scheme
from posviz.similarity import distance_spread


def test_every_scheme_has_a_label_and_notes() -> None:
    for spec in SCHEMES:
        texts = (spec.label, spec.words.note, spec.words.position_panel_note)
        assert all(text.strip() for text in texts)
    assert len({spec.label for spec in SCHEMES}) == len(SCHEMES)


@pytest.mark.parametrize("emb_dim", [8, 64, 7])
def test_sinusoidal_note_follows_its_diagonals(emb_dim: int) -> None:
    table = sinusoidal(16, emb_dim)  # the formula, cell by cell
    similarity = cosine_similarity(table).numpy()
    widest = max(float(np.ptp(np.diagonal(similarity, k))) for k in range(16))
    note = position_panel_note("sinusoidal", spread=distance_spread(cosine_similarity(table)))
    if widest <= 1e-4:
        assert "depends only on the distance" in note
    else:
        assert "almost only" in note and f"{widest:.4f}" in note


def test_a_table_that_is_not_distance_only_is_not_called_so() -> None:
    note = position_panel_note("sinusoidal", spread=0.25)
    assert "depends only" not in note and "0.2500" in note


@pytest.mark.parametrize("name", ["learned", "none", "rope"])
def test_other_schemes_make_no_distance_claim(name: str) -> None:
    note = position_panel_note(name, spread=0.0)
    assert note == scheme(name).words.position_panel_note and "distance" not in note
