"""Cosine similarity between positions: the numbers against torch's own cosine_similarity,
the figure as data, and the sentence quoting the figure's values."""

from __future__ import annotations

import itertools

import numpy as np
import plotly.graph_objects as go
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import cosine_similarity as reference_similarity

from posviz.config import SCHEMES, Scheme
from posviz.embeddings import SeededEmbeddings
from posviz.lesson.schemes import repeat_sentence
from posviz.pipeline import WindowEmbeddings, embed_window
from posviz.plots.heatmaps import similarity_figure
from posviz.similarity import cosine_similarity, first_repeat, repeated_token_pairs
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
        if scheme == "none" and matrix is window.pos_embeddings:
            assert np.all(z == 0.0)  # zero vectors: defined as similarity 0
        else:
            np.testing.assert_allclose(z, reference_similarity(matrix).numpy(), atol=1e-6)
    if scheme == "none":
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
    assert list(layout.yaxis.ticktext) == expected_labels
    assert layout.xaxis2.matches == "x"
    assert layout.xaxis3.matches == "x"
    assert layout.font.size == 22
    for index, trace in enumerate(figure.data):
        assert list(trace.x) == expected_labels
        assert list(trace.y) == expected_labels
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
def test_first_repeat_quotes_the_figures_values(tables: SeededEmbeddings, scheme: Scheme) -> None:
    window, _ = rose_window(tables, scheme)
    note = first_repeat(window)
    assert note is not None
    rose_id = encode(" rose")[0]
    assert (note.first, note.second, note.token_id, note.token_text) == (1, 4, rose_id, "␣rose")
    figure = similarity_figure(window)
    values = [float(np.asarray(trace.z)[1, 4]) for trace in figure.data]
    assert [note.token_similarity, note.position_similarity, note.input_similarity] == values
    assert note.token_similarity == 1.0
    rows = window.input_embeddings.double()
    expected_input = F.cosine_similarity(rows[1], rows[4], dim=0).item()
    assert note.input_similarity == pytest.approx(expected_input, abs=1e-6)
    if scheme == "none":
        assert note.input_similarity == 1.0
        assert "cannot tell" in repeat_sentence(note)
    else:
        assert note.input_similarity < 0.999
    sentence = repeat_sentence(note)
    assert f"{note.token_similarity:.3f}" in sentence
    assert f"{note.input_similarity:.3f}" in sentence
    assert "positions 1 and 4" in sentence


def test_first_repeat_is_none_without_repeats(tables: SeededEmbeddings) -> None:
    token_ids = encode("Every effort moves you")
    window = embed_window(tables, token_ids, context_length=4)
    assert first_repeat(window) is None


def test_markdown_sentence_escapes_the_token(tables: SeededEmbeddings) -> None:
    token_ids = encode("**x** **x**")
    window = embed_window(tables, token_ids, context_length=8)
    note = first_repeat(window)
    assert note is not None
    assert note.token_text == "**"
    assert "“\\*\\*”" in repeat_sentence(note, markdown=True)
    assert "'**'" in repeat_sentence(note)


def test_rope_input_similarity_depends_only_on_distance(tables: SeededEmbeddings) -> None:
    """One token repeated: rotated copies at equal distances have equal similarity."""
    window = embed_window(tables, [11398] * 6, context_length=8, scheme="rope")
    result = cosine_similarity(window.input_embeddings)
    for distance in range(1, 6):
        diagonal = torch.diagonal(result, offset=distance)
        torch.testing.assert_close(diagonal, diagonal[:1].expand_as(diagonal), atol=1e-5, rtol=0)
