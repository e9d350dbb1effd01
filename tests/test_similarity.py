"""Cosine similarity between positions: the numbers against torch's own cosine_similarity,
the figure as data, the facts the sentences quote (repeated pairs, neighbours) against
tests/reference.py."""

from __future__ import annotations

import itertools
import re

import numpy as np
import plotly.graph_objects as go
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import cosine_similarity as reference_similarity
from reference import neighbour_means, repeated_groups

from posviz.config import SCHEMES, Scheme
from posviz.embeddings import SeededEmbeddings
from posviz.pipeline import WindowEmbeddings, embed_window
from posviz.plots.heatmaps import similarity_figure
from posviz.similarity import (
    READS_ONE,
    NeighbourSimilarity,
    chance_difference,
    cosine_similarity,
    distance_spread,
    neighbour_similarity,
    repeated_token_pairs,
    similarity_facts,
)
from posviz.token_text import visible
from posviz.tokenizer import encode, token_bytes

ROSE = "A rose is a rose is a rose."


@pytest.fixture(scope="module")
def tables() -> SeededEmbeddings:
    return SeededEmbeddings.create(seed=123, emb_dim=16)


def rose_window(tables: SeededEmbeddings, scheme: Scheme) -> tuple[WindowEmbeddings, list[str]]:
    token_ids = encode(ROSE)
    window = embed_window(tables, token_ids, context_length=16, scheme=scheme)
    return window, [visible(b) for b in token_bytes(token_ids)]  # texts built here, independently


@pytest.mark.parametrize(("n", "d"), [(1, 2), (5, 3), (16, 64), (40, 7)])
def test_cosine_similarity_matches_torch(n: int, d: int) -> None:
    matrix = torch.randn(n, d, generator=torch.Generator().manual_seed(n * d))
    result = cosine_similarity(matrix)
    assert result.shape == (n, n)
    assert result.dtype == torch.float32
    torch.testing.assert_close(result.double(), reference_similarity(matrix), atol=1e-6, rtol=0)
    assert torch.equal(result, result.T)
    assert torch.all(torch.diagonal(result) == 1.0)


def test_identical_and_opposite_rows_are_exactly_one_and_minus_one() -> None:
    row = torch.randn(1, 33, generator=torch.Generator().manual_seed(4))
    result = cosine_similarity(torch.cat([row, row, -row, 2.5 * row]))
    assert result[0, 1].item() == 1.0
    assert result[0, 3].item() == 1.0
    assert result[0, 2].item() == -1.0


def test_zero_rows_have_similarity_zero_even_with_themselves() -> None:
    matrix = torch.randn(4, 5, generator=torch.Generator().manual_seed(1))
    matrix[2] = 0.0
    result = cosine_similarity(matrix)
    assert torch.all(result[2] == 0.0)
    assert torch.all(result[:, 2] == 0.0)
    keep = [0, 1, 3]
    torch.testing.assert_close(
        result[keep][:, keep].double(), reference_similarity(matrix[keep]), atol=1e-6, rtol=0
    )
    assert torch.equal(cosine_similarity(torch.zeros(3, 4)), torch.zeros(3, 3))


def test_cosine_similarity_rejects_other_shapes() -> None:
    with pytest.raises(ValueError, match=r"shape \[n, d\], got \[2, 3, 4\]"):
        cosine_similarity(torch.zeros(2, 3, 4))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 4), max_size=12))
def test_repeated_token_pairs_are_all_equal_pairs(token_ids: list[int]) -> None:
    expected = [
        (i, j)
        for i, j in itertools.combinations(range(len(token_ids)), 2)
        if token_ids[i] == token_ids[j]
    ]
    assert repeated_token_pairs(token_ids) == expected


def test_repeated_token_pairs_known_values() -> None:
    # "A rose is a rose is a rose.": ' rose' at 1, 4, 7; ' is' at 2, 5; ' a' at 3, 6
    assert repeated_token_pairs(encode(ROSE)) == [
        (1, 4),
        (1, 7),
        (2, 5),
        (3, 6),
        (4, 7),
    ]


@pytest.mark.parametrize("scheme", SCHEMES)
def test_figure_holds_the_three_similarity_matrices(
    tables: SeededEmbeddings, scheme: Scheme
) -> None:
    window, texts = rose_window(tables, scheme)
    figure = similarity_figure(window)
    assert [trace.type for trace in figure.data] == ["heatmap"] * 3
    n = len(texts)
    for trace, matrix in zip(
        figure.data,
        (window.token_embeddings, window.pos_embeddings, window.input_embeddings),
        strict=True,
    ):
        z = np.asarray(trace.z)
        assert z.shape == (n, n)
        assert z.dtype == np.float32
        if scheme in ("none", "alibi", "t5") and matrix is window.pos_embeddings:
            assert np.all(z == 0.0)  # zero vectors: defined as similarity 0
        else:
            np.testing.assert_allclose(z, reference_similarity(matrix).numpy(), atol=1e-6)
    if scheme in ("none", "alibi", "t5"):
        assert np.array_equal(figure.data[0].z, figure.data[2].z)


def test_figure_layout_follows_the_embeddings_figure(tables: SeededEmbeddings) -> None:
    window, texts = rose_window(tables, "learned")
    figure = similarity_figure(window, lecture=True)
    expected_labels = [f"{p} · {t}" for p, t in enumerate(texts)]
    layout = figure.layout
    assert layout.coloraxis.cmin == -1.0
    assert layout.coloraxis.cmax == 1.0
    assert layout.coloraxis.colorscale == go.layout.Coloraxis(colorscale="RdBu_r").colorscale
    assert layout.yaxis.autorange == "reversed"
    assert [re.sub(r"</?(b|span)[^>]*>", "", t) for t in layout.yaxis.ticktext] == expected_labels
    assert layout.xaxis2.matches == "x"
    assert layout.xaxis3.matches == "x"
    assert layout.font.size == 22
    for index, trace in enumerate(figure.data):
        assert list(trace.x) == expected_labels
        assert [label.split(" (same token vector as")[0] for label in trace.y] == expected_labels
        assert (
            trace.y[1] == "1 · ␣rose (same token vector as rows 4 and 7)"
        )  # hover names the twins
        assert trace.coloraxis == "coloraxis"
        assert trace.yaxis == "y"
        assert trace.xaxis == ("x" if index == 0 else f"x{index + 1}")
        for part in ("%{y}", "%{x}", "%{z:.4f}"):
            assert part in trace.hovertemplate
    titles = [a.text.replace("<br>", " ") for a in layout.annotations]  # wrapped titles
    assert "token embeddings" in titles[0]
    assert "learned" in titles[1]


def test_labels_are_escaped_and_repeated_tokens_stay_apart(tables: SeededEmbeddings) -> None:
    token_ids = encode("<b>x</b> <b>x</b>")
    window = embed_window(tables, token_ids, context_length=16)
    figure = similarity_figure(window)
    labels = list(figure.data[0].y)
    assert len(set(labels)) == len(labels)
    assert all("<" not in label for label in labels)
    assert labels[0] == "0 · &lt;"


def test_long_windows_show_their_first_positions(tables: SeededEmbeddings) -> None:
    token_ids = list(range(300, 340))
    window = embed_window(tables, token_ids, context_length=64)
    figure = similarity_figure(window, max_positions=10)
    assert all(np.asarray(trace.z).shape == (10, 10) for trace in figure.data)
    note = " ".join(figure.layout.annotations[0].text.replace("<br>", " ").split())
    assert "first 10 of 40 positions" in note.replace("<sup>", "").replace("</sup>", "")
    with pytest.raises(ValueError, match="max_positions"):
        similarity_figure(window, max_positions=0)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize(
    "text", [ROSE, "The quick brown fox jumps over the lazy dog and the quick brown fox runs away"]
)
def test_similarity_facts_read_the_figures_cells(
    tables: SeededEmbeddings, scheme: Scheme, text: str
) -> None:
    token_ids = encode(text)
    window = embed_window(tables, token_ids, context_length=16, scheme=scheme)
    facts = similarity_facts(window)
    figure = similarity_figure(window)
    z = [np.asarray(trace.z, dtype=np.float64) for trace in figure.data]  # what is drawn
    groups = repeated_groups(token_ids)
    assert {r.token_id: list(r.positions) for r in facts.tokens} == groups
    assert facts.repeated_pairs == sum(len(g) * (len(g) - 1) // 2 for g in groups.values())
    for repeat in facts.tokens:
        pairs = list(itertools.combinations(repeat.positions, 2))
        assert repeat.pairs == pairs
        for panel, values in zip(z, (repeat.token, repeat.position, repeat.input), strict=True):
            cells = [panel[p, q] for p, q in pairs]
            assert values == (min(cells), max(cells))
        assert repeat.token == (1.0, 1.0)  # the same row twice: exactly 1
        if scheme in ("none", "alibi", "t5"):
            assert repeat.input == (1.0, 1.0)
        else:
            assert repeat.input[1] < 0.99
    n = len(token_ids)
    above = [(p, q) for p in range(n) for q in range(p + 1, n)]
    ones = [(p, q) for p, q in above if round(z[0][p, q], 3) == 1.0]
    assert facts.token_ones == len(ones)
    assert facts.token_ones_repeated == sum(token_ids[p] == token_ids[q] for p, q in ones)
    assert facts.input_ones == sum(round(z[2][p, q], 3) == 1.0 for p, q in above)
    assert facts.token_ones == facts.repeated_pairs  # no other pair of rows points one way


def test_similarity_facts_without_repeats(tables: SeededEmbeddings) -> None:
    window = embed_window(tables, encode("Every effort moves you"), context_length=4)
    facts = similarity_facts(window)
    assert facts.tokens == () and facts.repeated_pairs == 0 and facts.token_ones == 0


def test_similarity_facts_cover_the_positions_shown(tables: SeededEmbeddings) -> None:
    window = embed_window(tables, [5, 6, 7, 5, 6], context_length=8)
    facts = similarity_facts(window, max_positions=4)
    assert facts.shown == 4 and [r.positions for r in facts.tokens] == [(0, 3)]
    with pytest.raises(ValueError, match="max_positions"):
        similarity_facts(window, max_positions=0)


def test_reads_one_is_what_three_decimals_print_as_one() -> None:
    assert f"{READS_ONE:.3f}" == "1.000" and f"{np.nextafter(READS_ONE, 0):.3f}" == "0.999"


@pytest.mark.parametrize("n", [2, 3, 4, 9, 16])
def test_neighbour_similarity_matches_the_reference(n: int) -> None:
    rows = torch.randn(n, 8, generator=torch.Generator().manual_seed(n))
    matrix = cosine_similarity(rows)
    summary = neighbour_similarity(matrix, emb_dim=8)
    assert summary is not None
    adjacent, distant = neighbour_means(matrix.double().numpy())
    assert summary.adjacent == pytest.approx(adjacent, abs=1e-12)
    if distant is None:
        assert summary.distant is None and summary.pattern == "too_short"
    else:
        assert summary.distant == pytest.approx(distant, abs=1e-12)


@pytest.mark.parametrize(
    ("adjacent", "distant", "pattern"),
    [
        (0.9, 0.2, "neighbours_alike"),
        (0.2 + 0.1001, 0.2, "neighbours_alike"),
        (0.25, 0.2, "no_pattern"),
        (0.02, -0.01, "no_pattern"),
        (-0.131, -0.065, "no_pattern"),  # issue 24: within chance, not "no more alike"
        (0.2, 0.2 + 0.1001, "neighbours_apart"),
        (0.0, 0.5, "neighbours_apart"),
        (0.9, None, "too_short"),
    ],
)
def test_neighbour_pattern_is_the_difference_beyond_chance(
    adjacent: float, distant: float | None, pattern: str
) -> None:
    assert NeighbourSimilarity(adjacent, distant, 4, noise=0.1).pattern == pattern


# 4,000 random tables, 1,000 of the largest (a gigabyte and 8 s for 4,000): the sample's
# standard deviation is then within 2.2 % of the true one (1 s.d.), against the test's 6 %.
@pytest.mark.parametrize(("n", "d", "tables"), [(8, 4, 4000), (16, 32, 4000), (40, 768, 1000)])
def test_chance_is_three_standard_deviations_of_random_tables(n: int, d: int, tables: int) -> None:
    """The noise the verdicts are weighed against, against random tables of n rows of d
    standard normal values (the book's random init), drawn here: the difference of the two
    means has the standard deviation chance_difference / 3, and a table goes past it rarely."""
    generator = torch.Generator().manual_seed(n * d)
    rows = torch.randn(tables, n, d, generator=generator, dtype=torch.float64)
    unit = rows / torch.linalg.vector_norm(rows, dim=2, keepdim=True)
    cosines = unit @ unit.transpose(1, 2)  # [tables, n, n]
    adjacent = cosines.diagonal(1, dim1=1, dim2=2).mean(dim=1)  # [tables]
    far = n // 2
    distant = torch.cat([cosines.diagonal(k, dim1=1, dim2=2) for k in range(far, n)], dim=1)
    difference = adjacent - distant.mean(dim=1)
    noise = chance_difference(n - 1, distant.shape[1], d)
    assert float(difference.std()) == pytest.approx(noise / 3, rel=0.06)
    assert float((difference.abs() > noise).double().mean()) < 0.01


def test_random_positions_show_no_band_and_smooth_ones_do() -> None:
    generator = torch.Generator().manual_seed(3)
    random_rows = torch.randn(64, 768, generator=generator)
    smooth = torch.cumsum(torch.randn(64, 768, generator=generator), dim=0)  # a random walk
    random_summary = neighbour_similarity(cosine_similarity(random_rows), emb_dim=768)
    smooth_summary = neighbour_similarity(cosine_similarity(smooth), emb_dim=768)
    assert random_summary is not None and random_summary.pattern == "no_pattern"
    assert smooth_summary is not None and smooth_summary.pattern == "neighbours_alike"


def test_distance_spread_is_the_widest_diagonal(tables: SeededEmbeddings) -> None:
    sinusoidal = embed_window(tables, encode(ROSE), context_length=16, scheme="sinusoidal")
    matrix = reference_similarity(sinusoidal.pos_embeddings)  # torch's own, float64
    widest = max(float(np.ptp(np.diagonal(matrix.numpy(), k))) for k in range(len(matrix)))
    assert distance_spread(matrix) == pytest.approx(widest, abs=1e-12)
    assert distance_spread(matrix) < 1e-4  # sin/cos: only the distance counts
    learned = embed_window(tables, encode(ROSE), context_length=16, scheme="learned")
    assert distance_spread(reference_similarity(learned.pos_embeddings)) > 0.1


def test_rope_input_similarity_depends_only_on_distance(tables: SeededEmbeddings) -> None:
    """One token repeated: rotated copies at equal distances have equal similarity."""
    window = embed_window(tables, [11398] * 6, context_length=8, scheme="rope")
    result = cosine_similarity(window.input_embeddings)
    for distance in range(1, 6):
        diagonal = torch.diagonal(result, offset=distance)
        torch.testing.assert_close(diagonal, diagonal[:1].expand_as(diagonal), atol=1e-5, rtol=0)
