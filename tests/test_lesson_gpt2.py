"""posviz.lesson.gpt2: the position-similarity sentences quote numbers computed here
(tests/reference.py) and state the usual pattern of trained tables only when those numbers
show it: made-up "GPT-2" tables without the pattern must not get the trained claim."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from reference import cosine_similarity, neighbour_means

from devtools.fake_hub import made_up_tables
from posviz.lesson.gpt2 import neighbour_sentence, pattern_sentence
from posviz.similarity import cosine_similarity as posviz_similarity
from posviz.similarity import neighbour_similarity

CLAIM = "These numbers show it: neighbours are more alike than positions far apart."


def summary_and_reference(positions: torch.Tensor) -> tuple[str, str, float, float | None]:
    summary = neighbour_similarity(posviz_similarity(positions))
    assert summary is not None
    adjacent, distant = neighbour_means(cosine_similarity(positions).numpy())
    text = neighbour_sentence(summary, len(positions))
    return text, pattern_sentence(summary, trained=True), adjacent, distant


def test_made_up_gpt2_tables_do_not_get_the_trained_claim() -> None:
    """GPT-2's shapes, random numbers (the loopback Hub's tables): no band on the diagonal."""
    wpe = torch.from_numpy(made_up_tables(8, 1024, 768)["wpe.weight"][:16])
    text, pattern, adjacent, distant = summary_and_reference(wpe)
    assert distant is not None and abs(adjacent - distant) < 0.1
    assert f"**{adjacent:.3f}**" in text and f"**{distant:.3f}**" in text
    assert CLAIM not in pattern
    assert "These numbers do not show it: neighbours are no more alike" in pattern
    assert "usually" in pattern, "the usual pattern is said as usual, not as this table's"


def test_a_smooth_table_gets_it() -> None:
    """A made-up table that changes smoothly along the positions (a random walk)."""
    generator = torch.Generator().manual_seed(7)
    walk = torch.cumsum(torch.randn(16, 768, generator=generator), dim=0)
    text, pattern, adjacent, distant = summary_and_reference(walk)
    assert distant is not None and adjacent - distant >= 0.1
    assert f"**{adjacent:.3f}**" in text
    assert pattern.endswith(CLAIM)


def test_random_init_words_its_own_expectation() -> None:
    rows = torch.from_numpy(np.random.default_rng(1).standard_normal((16, 64)).astype(np.float32))
    summary = neighbour_similarity(posviz_similarity(rows))
    assert summary is not None
    words = pattern_sentence(summary, trained=False)
    assert "These numbers show it: neighbours are no more alike than positions far apart." in (
        words
    )
    assert words.endswith("see what training makes of this table.")


@pytest.mark.parametrize("n", [2, 3])
def test_too_few_positions_are_not_compared(n: int) -> None:
    summary = neighbour_similarity(posviz_similarity(torch.randn(n, 8)))
    assert summary is not None
    words = pattern_sentence(summary, trained=True)
    assert "fewer than 4 positions" in words and "show it" not in words
