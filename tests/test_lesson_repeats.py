"""posviz.lesson.repeats: every number the lesson sentences state, against numbers computed
here with tests/reference.py (the book's tables, every pair of rows compared with numpy,
torch's own cosine similarity), and every verdict ("identical", "differ") chosen by them."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
import torch
from reference import (
    axis_rows,
    book_window,
    cosine_similarity,
    decode_array,
    heatmap_z,
    largest_row_difference,
    outlined_rows,
    panel_places,
    repeated_groups,
)

from benchmarks.texts import long_text
from posviz.config import SCHEMES, Scheme, Settings
from posviz.embeddings import SeededEmbeddings
from posviz.lesson.repeats import lesson_sentence, similarity_sentence
from posviz.pipeline import WindowEmbeddings, embed_window
from posviz.plots import Canvas
from posviz.plots._layout import arrange
from posviz.plots.heatmaps import embeddings_chart, similarity_chart
from posviz.tokenizer import encode
from posviz.view import build_view

ROSE = "A rose is a rose is a rose."
FOX = "The quick brown fox jumps over the lazy dog and the quick brown fox runs away"
SIDE = ("left", "right")
STACKED = ("top", "bottom")


@pytest.fixture(scope="module")
def tables() -> SeededEmbeddings:
    return SeededEmbeddings.create(seed=123, emb_dim=64)


def reference_window(scheme: str, text: str) -> list[np.ndarray]:
    ids = encode(text)
    return [m.numpy() for m in book_window(scheme, seed=123, emb_dim=64, context_length=16,
                                           token_ids=ids)]  # fmt: skip


def printed(value: float) -> str:
    """A difference as a reader expects it written: 0.0 exactly, else two decimals."""
    return "0.0" if value == 0.0 else f"{value:.2f}"


@pytest.mark.parametrize("stacked", [False, True])
@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_lesson_sentence_states_the_rose_numbers(
    tables: SeededEmbeddings, scheme: Scheme, stacked: bool
) -> None:
    ids = encode(ROSE)
    window = embed_window(tables, ids, context_length=16, scheme=scheme)
    token, _, inputs = reference_window(scheme, ROSE)
    rose = repeated_groups(ids)[encode(" rose")[0]]
    assert rose == [1, 4, 7]
    token_difference = largest_row_difference(token[rose])
    input_difference = largest_row_difference(inputs[rose])
    sentence = lesson_sentence(embeddings_chart(window, stacked=stacked).decisions, markdown=False)
    assert sentence.startswith("Self-attention on its own is blind to order.")
    assert "'␣rose' is at positions 1, 4 and 7" in sentence
    assert token_difference == 0.0
    assert (
        f"its token rows are identical (token panel, {'top' if stacked else 'left'}: "
        f"largest difference {printed(token_difference)})" in sentence
    )
    rows = "rotated rows" if scheme == "rope" else "input rows"
    if scheme == "none":
        assert input_difference == 0.0
        assert f"its {rows} are identical too" in sentence and "cannot tell" in sentence
    elif scheme in ("alibi", "t5"):  # nothing added to the input: their bias acts on the scores
        assert input_difference == 0.0
        assert f"its {rows} are identical too" in sentence
        assert "adds nothing to the input; only its bias on the attention scores" in sentence
        assert "can tell the 3 occurrences apart (see the Attention tab)" in sentence
    else:
        assert input_difference > 0.5
        assert f"its {rows} differ" in sentence and "identical too" not in sentence
        assert f"largest difference {printed(input_difference)}" in sentence
    if scheme == "rope":
        lengths = np.linalg.norm(inputs[rose].astype(np.float64), axis=1)
        assert np.ptp(lengths) < 5e-6 and "lengths agree to 5 decimals" in sentence
    assert "The same holds for '␣is' (2 and 5) and '␣a' (3 and 6)." in sentence
    for word in SIDE if stacked else STACKED:
        assert not re.search(rf"\b{word}\b", sentence), f"{word!r} in the {stacked=} wording"


def test_the_lesson_sentence_names_the_most_repeated_token_first(tables: SeededEmbeddings) -> None:
    ids = encode(FOX)
    window = embed_window(tables, ids, context_length=16)
    _, _, inputs = reference_window("learned", FOX)
    sentence = lesson_sentence(embeddings_chart(window, stacked=False).decisions, markdown=False)
    groups = repeated_groups(ids)
    assert all(len(g) == 2 for g in groups.values())  # ties: first occurrence first
    quick = groups[encode(" quick")[0]]
    assert f"'␣quick' is at positions {quick[0]} and {quick[1]}" in sentence
    assert f"largest difference {printed(largest_row_difference(inputs[quick]))}" in sentence
    assert "'␣brown' (2 and 12), '␣fox' (3 and 13) and '␣the' (6 and 10)" in sentence


def test_markdown_escapes_the_token_and_bolds_the_verdicts(tables: SeededEmbeddings) -> None:
    window = embed_window(tables, encode("**x** **x**"), context_length=8)
    sentence = lesson_sentence(embeddings_chart(window, stacked=False).decisions)
    assert "“\\*\\*” is at positions" in sentence and "**" in sentence.replace("\\*\\*", "")
    assert "**its input rows differ**" in sentence


def test_without_a_repeat_the_sentence_says_so(tables: SeededEmbeddings) -> None:
    window = embed_window(tables, encode("Every effort moves you"), context_length=4)
    assert repeated_groups(window.token_ids) == {}
    sentence = lesson_sentence(embeddings_chart(window, stacked=False).decisions, markdown=False)
    assert "No token occurs twice in this window of 4 tokens." in sentence
    assert "identical" not in sentence and not re.search(r"\bdiffer\b", sentence)


def test_rows_are_called_identical_only_when_they_are() -> None:
    """A made-up window: scheme learned, but the position signal adds the same row at both
    places, so the input rows stay identical; the sentence must not say they differ."""
    token = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    same = torch.tensor([[0.5, 0.5], [0.1, 0.2], [0.5, 0.5]])
    window = WindowEmbeddings(
        token_ids=(7, 8, 7), token_texts=("a", "b", "a"), context_length=3, scheme="learned",
        token_embeddings=token, pos_embeddings=same, input_embeddings=token + same,
    )  # fmt: skip
    sentence = lesson_sentence(embeddings_chart(window, stacked=False).decisions, markdown=False)
    assert "its input rows are identical too" in sentence
    assert not re.search(r"\bdiffer\b", sentence)
    assert "position vectors added to them tell" not in sentence


@pytest.mark.parametrize("stacked", [False, True])
@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_similarity_sentence_states_the_cells(
    tables: SeededEmbeddings, scheme: Scheme, stacked: bool
) -> None:
    ids = encode(ROSE)
    window = embed_window(tables, ids, context_length=16, scheme=scheme)
    _, _, inputs = reference_window(scheme, ROSE)
    similarity = cosine_similarity(torch.from_numpy(inputs)).numpy()  # torch's own, float64
    sentence = similarity_sentence(
        similarity_chart(window, stacked=stacked).decisions, markdown=False
    )
    pairs = [pair for g in repeated_groups(ids).values() for pair in itertools.combinations(g, 2)]
    assert len(pairs) == 5
    assert "5 pairs of positions read 1.000 in the token panel" in sentence
    assert "exactly the pairs that hold the same token" in sentence
    assert "'␣rose' (1, 4), (1, 7) and (4, 7); '␣is' (2, 5); '␣a' (3, 6)" in sentence
    rose = [similarity[p, q] for p, q in itertools.combinations([1, 4, 7], 2)]
    if scheme in ("none", "alibi", "t5"):
        assert min(rose) >= 0.9995 and "they still read 1.000" in sentence
        assert ("bias on the attention scores" in sentence) is (scheme != "none")
    else:
        assert f"read {min(rose):.3f} to {max(rose):.3f}" in sentence
    assert f"({'bottom' if stacked else 'right'})" in sentence
    for word in SIDE if stacked else STACKED:
        assert not re.search(rf"\b{word}\b", sentence)


def test_the_similarity_sentence_without_repeats(tables: SeededEmbeddings) -> None:
    window = embed_window(tables, encode("Every effort moves you"), context_length=4)
    sentence = similarity_sentence(
        similarity_chart(window, stacked=False).decisions, markdown=False
    )
    assert "No token occurs twice in the 4 positions shown" in sentence
    assert "no cell off the diagonal reads 1.000" in sentence


# --- issue 24: the sentences say what their figure decided ----------------------------------


def test_a_long_window_names_the_token_outlined_first_with_the_cells_drawn() -> None:
    """T = 1024, d = 768: the panels draw every 12th dimension and outline the repeated tokens
    their axis has room to label. The sentence named the most frequent token (not outlined)
    with its largest difference over all 768 dimensions (one not drawn)."""
    settings = Settings(text=long_text(), context_length=1024, emb_dim=768)
    window = build_view(settings).embeddings
    assert window is not None and len(window.token_ids) == 1024
    drawn = embeddings_chart(window)
    figure = drawn.spec.figure().to_plotly_json()
    (rows, dash), *_ = outlined_rows(figure, "x")
    names = axis_rows(figure)
    token = names[rows[0]]  # the first row of the token marked first is always labelled
    labelled = [row for row in rows if row in names]  # twins a label apart (issue 42)
    assert {names[row] for row in labelled} == {token}, "one token outlined, labelled alike"
    assert {window.token_texts[row] for row in rows} == {token}
    columns = decode_array(figure["data"][0]["x"])
    assert len(columns) == 64 and list(columns[:2]) == [0, 12]
    drawn_difference = largest_row_difference(heatmap_z(figure, 2)[list(rows)])
    sentence = lesson_sentence(drawn.decisions, markdown=False)
    assert sentence.split(". ")[1].startswith(f"'{token}' is at positions {rows[0]}")
    assert (
        f"largest difference {printed(drawn_difference)} over the 64 of 768 dimensions drawn"
        in sentence
    )
    _, _, inputs = (m.numpy() for m in book_window(
        "learned", seed=123, emb_dim=768, context_length=1024, token_ids=window.token_ids
    ))  # fmt: skip
    everywhere = largest_row_difference(inputs[list(rows)])
    assert printed(everywhere) != printed(drawn_difference) or everywhere == drawn_difference
    assert dash == "solid", "one id, one row: the token rows' outline is solid"


def test_the_similarity_sentence_places_the_panels_as_the_figure_lays_out_its_rows(
    tables: SeededEmbeddings,
) -> None:
    """A window longer than the 256 rows the similarity figure draws, with a long token only
    after row 256: arranged for all rows the panels would stack on this canvas; the figure
    lays out its 256 and keeps them side by side, and the sentence says left / right."""
    ids = encode(" rose is a rose" * 80)[:255] + encode(" indivisibilities") * 10
    window = embed_window(tables, ids, context_length=len(ids))
    canvas = Canvas(width=770, height=700, window_width=1280, window_height=800)
    drawn = similarity_chart(window, canvas=canvas)
    figure = drawn.spec.figure().to_plotly_json()
    assert panel_places(figure) == ("left", "middle", "right")
    every_row = arrange(canvas, lecture=False, count=3, token_texts=window.token_texts)
    assert every_row.stacked, "all rows' labels would not fit side by side"
    sentence = similarity_sentence(drawn.decisions, markdown=False)
    assert "(left" in sentence
    assert not re.search(r"\b(top|bottom)\b", sentence)
    assert "the 256 positions shown (of 295)" in sentence


def test_a_character_split_over_tokens_is_named_as_the_chips_write_it(
    tables: SeededEmbeddings,
) -> None:
    """'␣\\xf0\\x9f' is at positions 2 and 6" where the chips and tick labels say 🍣."""
    window = embed_window(tables, encode("I like 🍣 and 🍣 a lot"), context_length=16)
    drawn = embeddings_chart(window)
    figure = drawn.spec.figure().to_plotly_json()
    tick = axis_rows(figure)[2]
    assert tick == "␣ + 🍣 (1 of…", "the tick label, cut to 12 characters"
    sentence = lesson_sentence(drawn.decisions, markdown=False)
    assert "\\x" not in sentence
    assert "'␣ + 🍣 (1 of 3)' is at positions 2 and 6" in sentence  # the tick's text, whole
    similarity = similarity_sentence(similarity_chart(window).decisions, markdown=False)
    assert "\\x" not in similarity and "'␣ + 🍣 (1 of 3)' (2, 6)" in similarity
