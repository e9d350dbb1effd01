"""The compare view's figure (as data) and words: they show the comparison's own numbers."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from posviz.attention import book_attention_weights
from posviz.compare import (
    DEFAULT_COMPARE_TEXT,
    DEFAULT_TEXT,
    OrderComparison,
    compare_order,
    compare_with_text,
)
from posviz.config import SCHEMES, Scheme
from posviz.embeddings import SeededEmbeddings
from posviz.lesson.lecture import SLIDES, question_text, word_order_answer
from posviz.lesson.word_order import (
    CAUSAL_NOTE,
    compared_text,
    cut_note,
    findings,
    status_message,
    texts_line,
)
from posviz.plots._layout import Canvas
from posviz.plots.word_order import compare_chart, compare_figure
from posviz.tokenizer import decode, encode

EMB_DIM = 16


@pytest.fixture(scope="module")
def tables() -> SeededEmbeddings:
    return SeededEmbeddings.create(seed=123, emb_dim=EMB_DIM)


def compare(
    tables: SeededEmbeddings, text_a: str, text_b: str, scheme: Scheme = "learned", **options: bool
) -> OrderComparison:
    return compare_order(
        tables,
        encode(text_a),
        encode(text_b),
        context_length=16,
        scheme=scheme,
        weights=book_attention_weights(d_in=EMB_DIM, d_out=EMB_DIM),
        **options,
    )


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("causal", [False, True], ids=["no-mask", "causal"])
def test_figure_shows_both_texts_and_the_comparisons_numbers(
    tables: SeededEmbeddings, scheme: Scheme, causal: bool
) -> None:
    result = compare(tables, DEFAULT_TEXT, DEFAULT_COMPARE_TEXT, scheme, causal=causal)
    figure = compare_figure(result)
    assert [trace.type for trace in figure.data] == ["heatmap"] * 8
    first, second = figure.data[0], figure.data[4]
    assert list(first.y) == [
        f"{i} · {t}" for i, t in enumerate(["The", "␣dog", "␣bites", "␣the", "␣man"])
    ]
    assert list(second.y)[1] == "1 · ␣man"
    assert result.a is not None and result.without_positions is not None
    assert np.array_equal(first.z, result.a.token_embeddings.numpy())
    assert result.with_positions is not None
    np.testing.assert_array_equal(figure.data[7].z, result.with_positions.context_b.float().numpy())
    titles = [a.text for a in figure.layout.annotations]
    assert "same rows, reordered" in titles[0]  # token embeddings, always
    assert ("same rows, reordered" in titles[2]) is (not causal)  # the mask breaks it
    assert ("differ" in titles[3]) is (scheme != "none" or causal)
    # one colour range per column, shared by both texts
    assert figure.data[0].coloraxis == figure.data[4].coloraxis == "coloraxis"
    assert figure.data[3].coloraxis == figure.data[7].coloraxis == "coloraxis4"


def test_figure_refuses_a_comparison_without_a_reordering(tables: SeededEmbeddings) -> None:
    result = compare(tables, "a b", "a b c")
    with pytest.raises(ValueError, match="different_tokens"):
        compare_figure(result)


def _numbers(markdown: str) -> list[str]:
    return re.findall(r"\d+\.\d+(?:e-\d+)?", markdown)


def test_findings_quote_the_comparison(tables: SeededEmbeddings) -> None:
    result = compare(tables, DEFAULT_TEXT, DEFAULT_COMPARE_TEXT)
    assert result.without_positions is not None and result.with_positions is not None
    tokens, inputs, blind, positioned = findings(result, compare_chart(result).decisions)
    assert "bit for bit" in tokens
    assert f"{result.input_max_difference:.3f}" in _numbers(inputs)
    assert "**1.000000**" in blind
    assert f"**{result.with_positions.mean_cosine:.6f}**" in positioned
    assert result.with_positions.mean_cosine < 0.9999995  # so it does not print as 1.000000
    assert "different sentences" in positioned


def test_findings_with_the_mask_say_the_mask_breaks_the_symmetry(
    tables: SeededEmbeddings,
) -> None:
    result = compare(tables, DEFAULT_TEXT, DEFAULT_COMPARE_TEXT, "none", causal=True)
    blind = findings(result, compare_chart(result).decisions)[2]
    assert "Causal self-attention" in blind
    assert "mask alone breaks the symmetry" in blind
    assert "position(s) 0 keep" in blind
    assert "Haviv" in CAUSAL_NOTE and "does **not** mean" in CAUSAL_NOTE


@pytest.mark.parametrize(
    ("text_a", "text_b", "expected"),
    [
        pytest.param("", "x", "The first text is empty", id="first-empty"),
        pytest.param("x", "", "The second text is empty", id="second-empty"),
        pytest.param("", "", "Both texts are empty", id="both-empty"),
        pytest.param("a b", "a b", "same order", id="identical"),
        pytest.param("a b c", "a b", "*a b c* (3 tokens) and *a b* (2 tokens)", id="counts"),
        pytest.param("The dog", "dog The", "loses its space", id="leading-space"),
        pytest.param("a " * 130, "a " * 130, "up to 128 tokens", id="too-long"),
    ],
)
def test_status_messages_explain(
    tables: SeededEmbeddings, text_a: str, text_b: str, expected: str
) -> None:
    result = compare(tables, text_a, text_b)
    message = status_message(result)
    assert message is not None and expected in message
    assert result.with_positions is None or text_a == text_b  # no figure, no findings
    assert cut_note(result) is None


def test_token_chips_in_messages_are_escaped(tables: SeededEmbeddings) -> None:
    message = status_message(compare(tables, "x", "x **[link](javascript:1)**"))
    assert message is not None
    assert ":gray-badge[\\]\\(]" in message  # the token "](" escaped
    assert "](javascript" not in message and "**[" not in message
    assert status_message(compare(tables, DEFAULT_TEXT, DEFAULT_COMPARE_TEXT)) is None
    assert decode(encode(DEFAULT_COMPARE_TEXT)) == DEFAULT_COMPARE_TEXT


def test_wide_panels_show_every_kth_dimension_and_say_so() -> None:
    tables = SeededEmbeddings.create(seed=123, emb_dim=768)
    ids = encode(" " + " ".join(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"] * 3))
    result = compare_order(
        tables,
        ids,
        ids[::-1],
        context_length=len(ids),
        scheme="learned",
        weights=book_attention_weights(d_in=768, d_out=768),
    )
    figure = compare_figure(result)
    step = -(-len(ids) * 768 // 8_192)  # ceil: cells per panel stay within 8,192
    assert np.asarray(figure.data[0].z).shape == (len(ids), len(range(0, 768, step)))
    assert list(figure.data[0].x)[:2] == [0, step]
    assert f"1 in {step} of 768 dims" in figure.layout.annotations[0].text
    np.testing.assert_array_equal(
        figure.data[0].z,
        result.a.token_embeddings[:, ::step].numpy(),  # type: ignore[union-attr]
    )


def test_on_a_phone_the_matrices_stand_one_under_the_other(tables: SeededEmbeddings) -> None:
    result = compare(tables, DEFAULT_TEXT, DEFAULT_COMPARE_TEXT)
    phone = Canvas(width=358, height=844, window_width=390, window_height=844)
    layout = compare_figure(result, canvas=phone).layout
    names = [f"{axis}axis{i}" for i in range(1, 9) for axis in "xy"]
    x_domains = [layout[n].domain for n in names if n.startswith("x")]
    assert all(domain == (0.0, 1.0) for domain in x_domains), "every panel the full width"
    y_domains = sorted((layout[f"yaxis{i}"].domain for i in range(1, 9)), reverse=True)
    assert all(low[1] < high[0] for high, low in itertools.pairwise(y_domains)), "no overlap"
    assert all(layout[f"yaxis{i}"].showticklabels for i in range(1, 9)), "each labels its rows"
    tops = sorted((a.y for a in layout.annotations), reverse=True)
    assert len(tops) == 4 and tops[0] < 1.0, "titles under the phone's toolbar"
    # The same figure on a laptop keeps the 4 x 2 grid, as for a canvas not known yet.
    laptop = Canvas(width=820, height=400, window_width=1280, window_height=800)
    assert compare_figure(result, canvas=laptop).layout.xaxis2.domain == (
        compare_figure(result).layout.xaxis2.domain
    )


# --- issue 24: the words name what was compared ---------------------------------------------


@pytest.mark.parametrize("scheme", SCHEMES)
def test_identical_texts_are_not_said_to_differ(tables: SeededEmbeddings, scheme: Scheme) -> None:
    """Two identical texts got "Input embeddings: not the same rows ... differ by up to
    0.000"."""
    result = compare(tables, DEFAULT_TEXT, DEFAULT_TEXT, scheme)
    assert result.status == "identical" and result.input_max_difference == 0.0
    text = " ".join(findings(result, compare_chart(result).decisions))
    assert "not the same rows" not in text and "0.000" not in text.replace("0.000000", "")
    assert "reordered" not in text and "another order" not in text
    assert not re.search(r"\bdiffer(ent)?\b", text)
    assert "in the same order, bit for bit" in text
    answer = word_order_answer(result, markdown=False)
    assert answer.startswith("No: 'The dog bites the man' and 'The dog bites the man' are the")


def test_a_pair_cut_to_the_context_length_is_named_as_compared(tables: SeededEmbeddings) -> None:
    """The lecture's example pair under the preset "Every effort moves you" (T = 4): the
    window is "The dog bites the", the second text's first window "The man bites the"; the
    slides said "the same tokens in another order" of the texts typed."""
    result = compare_with_text(
        tables, encode(DEFAULT_TEXT)[:4], DEFAULT_COMPARE_TEXT, context_length=4,
        scheme="learned", weights=book_attention_weights(d_in=EMB_DIM, d_out=EMB_DIM),
    )  # fmt: skip
    assert result.status == "different_tokens" and result.second_text_cut == 1
    first, second = "*The dog bites the*", "*The man bites the*"
    assert texts_line(result) == f"{first}  ·  {second}"
    message = status_message(result)
    assert message is not None and f"{first} (4 tokens) and {second} (4 tokens)" in message
    assert ":gray-badge[␣dog]" in message and ":gray-badge[␣man]" in message
    assert f"its first 4 tokens ({second}) are compared, 1 more are left out" in (
        cut_note(result) or ""
    )
    slide = next(s for s in SLIDES if s.step.view == "word-order" and not s.revealed)
    question = question_text(slide, "learned", None, compared=result)
    assert question == f"Without positions, can self-attention tell {first} and {second} apart?"
    answer = word_order_answer(result)
    assert answer.startswith(f"Yes, trivially: {first} and {second} are not the same tokens")
    assert DEFAULT_TEXT not in answer + message + question


def test_the_compared_texts_are_the_figures_rows(tables: SeededEmbeddings) -> None:
    """The texts the words name are the rows the figure labels (tick texts, chips' characters)."""
    result = compare(tables, "I like 🍣 and tea", "I like tea and 🍣")
    drawn = compare_chart(result)
    figure = drawn.spec.figure()
    rows = [
        [text.split(" · ", 1)[1] for text in figure.layout[axis].ticktext]
        for axis in ("yaxis", "yaxis5")
    ]
    assert rows[0][2:5] == ["␣ + 🍣 (1 of 3)", "🍣 (2 of 3)", "🍣 (3 of 3)"]
    assert (tuple(rows[0]), tuple(rows[1])) == (drawn.decisions.labels_a, drawn.decisions.labels_b)
    assert compared_text(drawn.decisions.token_ids_a) == "*I like 🍣 and tea*"


def test_a_short_lecture_window_labels_rows_that_do_not_touch(tables: SeededEmbeddings) -> None:
    """Lecture mode at 1280 x 720: the grid takes the room left (about 300 px), too little for
    five 20-px labels a panel; it labels every other row, 1.15 font sizes apart at least."""
    result = compare(tables, DEFAULT_TEXT, DEFAULT_COMPARE_TEXT)
    short = Canvas(width=1240, height=330, window_width=1280, window_height=720)
    layout = compare_figure(result, lecture=True, canvas=short).layout
    plot = layout.height - layout.margin.t - layout.margin.b
    for index in (1, 5):
        axis = layout[f"yaxis{index}"]
        panel = (axis.domain[1] - axis.domain[0]) * plot
        labelled = [int(text.split(" · ")[0]) for text in axis.ticktext]
        gaps = [b - a for a, b in itertools.pairwise(labelled)]
        assert labelled[0] == 0 and gaps and min(gaps) * panel / 5 >= 1.15 * axis.tickfont.size
    tall = Canvas(width=1240, height=900, window_width=1920, window_height=1080)
    assert len(compare_figure(result, lecture=True, canvas=tall).layout.yaxis.ticktext) == 5
