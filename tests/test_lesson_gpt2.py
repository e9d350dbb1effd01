"""posviz.lesson.gpt2: the position-similarity sentences quote numbers computed here
(tests/reference.py), over the positions the similarity figure draws, and state the usual
pattern of trained tables only when those numbers show it beyond chance: made-up "GPT-2"
tables without the pattern must not get the trained claim, and the word comparing the two
numbers ("more alike", "less alike") always fits them."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import numpy as np
import pytest
import torch
from reference import cosine_similarity, neighbour_means

from devtools.fake_hub import made_up_tables
from posviz.lesson.gpt2 import neighbour_sentence, pattern_sentence
from posviz.pipeline import WindowEmbeddings
from posviz.plots.heatmaps import SimilarityDecisions, similarity_chart
from posviz.similarity import NeighbourSimilarity

CLAIM = "These numbers show it: neighbours ("


def decisions_for(positions: torch.Tensor, *, max_positions: int = 256) -> SimilarityDecisions:
    """The similarity figure's decisions for a made-up window whose position signal is
    ``positions`` [n, d] (distinct tokens: the position panel is what is read)."""
    n, d = positions.shape
    generator = torch.Generator().manual_seed(n + d)
    token = torch.randn(n, d, generator=generator)
    window = WindowEmbeddings(
        token_ids=tuple(range(n)), token_texts=tuple(f"t{i}" for i in range(n)),
        context_length=n, scheme="learned", token_embeddings=token,
        pos_embeddings=positions, input_embeddings=token + positions,
    )  # fmt: skip
    return similarity_chart(window, max_positions=max_positions).decisions


def chance(n: int, d: int) -> float:
    """Three standard deviations of the difference of the two means for random rows: each
    cosine has variance 1/d, the pairs are uncorrelated (tests/test_similarity.py checks this
    against random tables)."""
    far = max(2, n // 2)
    distant_pairs = sum(n - k for k in range(far, n))
    return 3 * math.sqrt((1 / (n - 1) + 1 / distant_pairs) / d)


def sentences(positions: torch.Tensor) -> tuple[str, str, float, float | None]:
    decisions = decisions_for(positions)
    adjacent, distant = neighbour_means(cosine_similarity(positions).numpy())
    text = neighbour_sentence(decisions)
    return text, pattern_sentence(decisions, trained=True), adjacent, distant


def test_made_up_gpt2_tables_do_not_get_the_trained_claim() -> None:
    """GPT-2's shapes, random numbers (the loopback Hub's tables): no band on the diagonal."""
    wpe = torch.from_numpy(made_up_tables(8, 1024, 768)["wpe.weight"][:16])
    text, pattern, adjacent, distant = sentences(wpe)
    assert distant is not None and abs(adjacent - distant) < chance(16, 768)
    assert f"**{adjacent:.3f}**" in text and f"**{distant:.3f}**" in text
    assert "Over the 16 positions of this window" in text
    assert CLAIM not in pattern
    assert f"neighbours ({adjacent:.3f}) and positions far apart ({distant:.3f}) differ" in pattern
    assert f"(±{chance(16, 768):.3f}, three standard deviations" in pattern
    assert "no pattern" in pattern and "alike than" not in pattern.split("usually")[1]
    assert "usually" in pattern, "the usual pattern is said as usual, not as this table's"


def test_a_smooth_table_gets_it() -> None:
    """A made-up table that changes smoothly along the positions (a random walk)."""
    generator = torch.Generator().manual_seed(7)
    walk = torch.cumsum(torch.randn(16, 768, generator=generator), dim=0)
    text, pattern, adjacent, distant = sentences(walk)
    assert distant is not None and adjacent - distant > chance(16, 768)
    assert f"**{adjacent:.3f}**" in text
    assert f"{CLAIM}{adjacent:.3f}) are more alike than positions far apart ({distant:.3f})" in (
        pattern
    )


def test_random_init_words_its_own_expectation() -> None:
    rows = torch.from_numpy(np.random.default_rng(1).standard_normal((16, 64)).astype(np.float32))
    words = pattern_sentence(decisions_for(rows), trained=False)
    assert "These numbers show it: neighbours (" in words and "no pattern" in words
    assert words.endswith("see what training makes of this table.")


@pytest.mark.parametrize("n", [2, 3])
def test_too_few_positions_are_not_compared(n: int) -> None:
    words = pattern_sentence(decisions_for(torch.randn(n, 8)), trained=True)
    assert "fewer than 4 positions" in words and "show it" not in words


def test_the_means_are_over_the_positions_drawn() -> None:
    """Issue 24: a window longer than the figure draws: the numbers are the drawn rows'."""
    rows = torch.from_numpy(np.random.default_rng(2).standard_normal((40, 16)).astype(np.float32))
    decisions = decisions_for(rows, max_positions=24)
    adjacent, distant = neighbour_means(cosine_similarity(rows[:24]).numpy())
    text = neighbour_sentence(decisions)
    assert "Over the 24 positions shown (of 40)" in text
    assert f"**{adjacent:.3f}**" in text and f"**{distant:.3f}**" in text


# Issue 24's Similarity tab: -0.131 vs -0.065 was called "no more alike" and -0.086 vs 0.021
# "less alike", whatever chance gives. The word must fit the two numbers printed beside it,
# and a difference within chance gets no comparison word at all.
@pytest.mark.parametrize(
    ("adjacent", "distant", "noise", "word"),
    [
        (-0.131, -0.065, 0.1, None),
        (-0.086, 0.021, 0.115, None),
        (-0.086, 0.021, 0.05, "less"),
        (0.4, 0.1, 0.05, "more"),
        (0.1, 0.12, 0.05, None),
    ],
    ids=["within-chance-below", "within-chance-11", "beyond-chance-below", "above", "close"],
)
@pytest.mark.parametrize("trained", [True, False], ids=["trained", "random"])
def test_the_comparison_word_fits_the_numbers(
    adjacent: float, distant: float, noise: float, word: str | None, trained: bool
) -> None:
    base = decisions_for(torch.randn(16, 8, generator=torch.Generator().manual_seed(0)))
    summary = NeighbourSimilarity(adjacent, distant, 8, noise=noise)
    words = pattern_sentence(replace(base, neighbours=summary), trained=trained)
    found = words.split("These numbers")[1]
    said = re.findall(r"\b(more|less|no more) alike than", found)
    if word is None:
        assert said == [] and "within what chance gives" in found and "no pattern" in found
        assert f"differ by {abs(adjacent - distant):.3f}" in found
    else:
        assert said == [word]
        assert (adjacent > distant) == (word == "more")  # the word fits the two numbers
        assert f"({adjacent:.3f}) are {word} alike than positions far apart ({distant:.3f})" in (
            found
        )
    assert f"±{noise:.3f}" in found  # the threshold is stated
