"""Every view's sentences say what their figure shows (issue 24, item 2).

Each case builds a view's figure with its ``*_chart`` builder, writes the view's sentences from
the decisions, and checks each sentence's facts against the figure itself, read from its plotly
JSON with tests/reference.py (never from the decisions): the token a sentence names is the
figure's first outlined token (by its tick label), the positions it lists are that token's
rows, a number it quotes is the reference computed from the figure's own ``z`` arrays (of the
cells drawn; a number over all of d says so), "left / right" or "top / bottom" match the
panels' domains, and the texts a comparison names are the ones its figure labels.

Cases: the tab and every lecture slide of a view (panels 1 / 2 / 3, outlines on and off,
question and answer), on canvases not known yet, 1920 x 1080, 1280 x 720 and a phone, for
T from 1 to 1,024, d from 2 to 768, every scheme, and texts with repeats, with no repeat, with
characters split over tokens, identical pairs and pairs cut to a window. Sizes where size does
not matter stay small; T = 1024 and d = 768 have their own cases.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from typing import Any

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from reference import (
    axis_rows,
    decode_array,
    heatmap_z,
    largest_row_difference,
    neighbour_means,
    outlined_cells,
    outlined_rows,
    panel_places,
    tiktoken_gpt2,
    token_ids,
)

from benchmarks.texts import long_text
from posviz.attention import book_attention_weights
from posviz.compare import DEFAULT_COMPARE_TEXT, DEFAULT_TEXT, compare_with_text
from posviz.config import SCHEMES, Scheme, Settings
from posviz.distance import build_distance
from posviz.embeddings import SeededEmbeddings
from posviz.geometry import build_geometry
from posviz.lesson import distance as distance_lesson
from posviz.lesson import geometry as geometry_lesson
from posviz.lesson.gpt2 import neighbour_sentence, pattern_sentence
from posviz.lesson.lecture import (
    SLIDES,
    Slide,
    input_answer,
    question_text,
    similarity_answer,
    token_answer,
    word_order_answer,
)
from posviz.lesson.repeats import lesson_sentence, similarity_sentence
from posviz.lesson.word_order import cut_note, findings, status_message
from posviz.pipeline import WindowEmbeddings
from posviz.plots import UNKNOWN, Canvas
from posviz.plots.distance import distance_chart
from posviz.plots.geometry import geometry_chart
from posviz.plots.heatmaps import embeddings_chart, similarity_chart
from posviz.plots.word_order import compare_chart
from posviz.token_text import for_markdown
from posviz.view import build_view

# The room a chart reports (its width, its room to the window's bottom, the window).
CANVASES = {
    "unknown": (UNKNOWN, False),
    "unknown-stacked": (UNKNOWN, True),
    "1920x1080": (Canvas(width=1500, height=760, window_width=1920, window_height=1080), False),
    "1280x720": (Canvas(width=900, height=420, window_width=1280, window_height=720), False),
    "phone": (Canvas(width=358, height=439, window_width=390, window_height=844), False),
}
TEXTS = {
    "rose": "A rose is a rose is a rose.",
    "no-repeat": "Every effort moves you",
    "emoji": "I like 🍣 and 🍣 a lot 🍕, 東京 and 東京",
    "fox": "The quick brown fox jumps over the lazy dog and the quick brown fox runs away",
    "long": long_text()[:4000],
}
EMBEDDING_SLIDES = [s for s in SLIDES if s.step.view == "embeddings"]
SIMILARITY_SLIDES = [s for s in SLIDES if s.step.view == "similarity"]
WORD_ORDER_SLIDES = [s for s in SLIDES if s.step.view == "word-order"]
FEW = settings(
    max_examples=30,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@functools.cache
def tables(seed: int, emb_dim: int) -> SeededEmbeddings:
    return SeededEmbeddings.create(seed=seed, emb_dim=emb_dim)


def window_for(text: str, context_length: int, emb_dim: int, scheme: Scheme) -> WindowEmbeddings:
    shown = Settings(text=text, context_length=context_length, emb_dim=emb_dim, scheme=scheme)
    window = build_view(shown, tables=lambda s: tables(s.seed, s.emb_dim)).embeddings
    assert window is not None
    return window


def as_json(drawn: Any) -> dict[str, Any]:
    figure: dict[str, Any] = drawn.spec.figure().to_plotly_json()
    return figure


# --- reading sentences (plain text) ---------------------------------------------------------

WHERE = r"\d+(?:, \d+)*(?: and \d+(?: more)?)?"
PAIRS = r"\(\d+, \d+\)(?:(?:, | and )\(\d+, \d+\))*(?: and \d+ more)?"


def listed(text: str) -> tuple[list[str], int]:
    """``"1, 4 and 7"`` -> (["1", "4", "7"], 0); ``"0, 1 and 5 more"`` -> (["0", "1"], 5);
    pairs alike: ``"(1, 4) and (4, 7)"`` -> (["(1, 4)", "(4, 7)"], 0)."""
    more = re.fullmatch(r"(.*) and (\d+) more", text)
    items, rest = (more.group(1), int(more.group(2))) if more else (text, 0)
    if items.startswith("("):
        return re.findall(r"\(\d+, \d+\)", items), rest
    return re.split(r", | and ", items), rest


def printed(value: float) -> str:
    """A difference as the sentences promise to print it: 0.0 only for exactly 0, two
    decimals from 0.005, else one significant decimal in scientific notation."""
    if value == 0.0:
        return "0.0"
    return f"{value:.2f}" if abs(value) >= 0.005 else f"{value:.1e}"


def names(name: str, tick: str) -> bool:
    """Whether a sentence's token ``name`` is what the tick label ``tick`` shows (a tick cuts
    a long token to 12 characters with "…")."""
    return name == tick or (tick.endswith("…") and name.startswith(tick[:-1]))


def check_named_rows(
    figure: dict[str, Any], name: str, where: str, *, outlined: bool, cells: bool = False
) -> tuple[int, ...]:
    """The sentence names ``name`` at ``where``: the figure's first outlined token (or, with
    no outlines, a token whose rows the figure labels as twins), by its tick label; returns
    its rows."""
    ticks = axis_rows(figure)
    if outlined:
        groups = outlined_cells(figure) if cells else outlined_rows(figure)
        assert groups, "a token is named, so the figure outlines one"
        rows = groups[0][0]
    else:
        first = int(listed(where)[0][0])
        categories = [str(c) for c in decode_array(figure["data"][0]["y"])]
        note = re.search(r"\(same token vector as rows? (.+)\)$", categories[first])
        assert note, f"row {first} is named but not labelled as a repeated token"
        twins, more = listed(note.group(1))
        assert not more, "short groups only in these cases"
        rows = tuple(sorted([first, *map(int, twins)]))
    shown, more = listed(where)
    assert [int(p) for p in shown] == list(rows[: len(shown)]) and len(shown) + more == len(rows)
    assert rows[0] in ticks, "the named token's first row is labelled"
    hover = [str(c) for c in decode_array(figure["data"][0]["y"])]
    crowded = [row for row in rows if row not in ticks]  # a label's height from a twin's
    assert all("same token vector" in hover[row] for row in crowded), "hover names the rest"
    assert names(name, ticks[rows[0]]), f"{name!r} is not the tick label {ticks[rows[0]]!r}"
    return rows


def check_difference(
    sentence: str, figure: dict[str, Any], panel: int, rows: tuple[int, ...], emb_dim: int
) -> None:
    """``largest difference X`` for ``panel`` quotes the drawn cells, and says they are a
    sample when the panel draws every k-th of the ``emb_dim`` dimensions."""
    z = heatmap_z(figure, panel)
    columns = decode_array(figure["data"][panel]["x"])
    want = printed(largest_row_difference(z[list(rows)]))
    sampled = len(columns) < emb_dim
    suffix = f" over the {len(columns)} of {emb_dim} dimensions drawn" if sampled else ""
    assert f"largest difference {want}{suffix}" in sentence or (
        f"differs by up to {want}{suffix}" in sentence
    ), f"{want}{suffix!r} not in {sentence!r}"
    if not sampled:
        assert "dimensions drawn" not in sentence


def check_places(sentence: str, figure: dict[str, Any], panels: int = 3) -> None:
    places = panel_places(figure, panels)
    other = {"left": "top", "right": "bottom", "top": "left", "bottom": "right"}
    assert f"token panel ({places[0]}" in sentence or f"token panel, {places[0]}" in sentence
    if panels == 3:
        assert re.search(rf"(input|rotated) panel[ ,(]+{places[2]}\b", sentence), sentence
    for word in (other[places[0]], other[places[-1]]) if panels == 3 else (other[places[0]],):
        assert not re.search(rf"\b{word}\b", sentence), f"{word!r} in {sentence!r}"


# --- embeddings: the tab and its slides -----------------------------------------------------


def check_embeddings_tab(window: WindowEmbeddings, canvas: Canvas, stacked: bool) -> None:
    drawn = embeddings_chart(window, canvas=canvas, stacked=stacked)
    figure = as_json(drawn)
    sentence = lesson_sentence(drawn.decisions, markdown=False)
    named = re.search(rf"'(?P<name>.+?)' is at positions (?P<where>{WHERE}): its token", sentence)
    repeats = len(set(window.token_ids)) < len(window.token_ids)
    if not repeats:
        assert named is None and "No token occurs twice" in sentence
        return
    if named is None:
        assert not outlined_rows(figure) and "none is outlined" in sentence
        return
    rows = check_named_rows(figure, named["name"], named["where"], outlined=True)
    token_part, input_part = sentence.split("panel, ")[1:3]
    check_difference(token_part, figure, 0, rows, window.emb_dim)
    check_difference(input_part, figure, 2, rows, window.emb_dim)
    check_places(sentence, figure)


def check_embeddings_slide(window: WindowEmbeddings, slide: Slide, canvas: Canvas) -> None:
    drawn = embeddings_chart(
        window, lecture=True, panels=slide.panels, outlines=slide.outlines, canvas=canvas
    )
    figure = as_json(drawn)
    assert len(figure["data"]) == slide.panels
    if slide.panels > 1:  # a lecture figure fills the window only with its panels side by side
        assert drawn.decisions.fills == (panel_places(figure, 2)[0] == "left")
    question = question_text(slide, window.scheme, drawn.decisions, markdown=False)
    if slide.step.question is None:
        assert question == ""
        return
    if not slide.revealed:
        named = re.search(
            rf"'(?P<name>.+?)' (?:stands at positions|at) (?P<where>{WHERE})", question
        )
        if named is None:
            assert "occurrences" in question
            return
        check_named_rows(figure, named["name"], named["where"], outlined=slide.outlines)
        return
    answer = (token_answer if slide.step.panels == 1 else input_answer)(
        drawn.decisions, markdown=False
    )
    named = re.search(rf"'(?P<name>.+?)' at (?P<where>{WHERE})", answer)
    if named is None:
        assert "No token repeats" in answer or not outlined_rows(figure)
        return
    rows = check_named_rows(figure, named["name"], named["where"], outlined=True)
    check_difference(answer, figure, 0 if slide.step.panels == 1 else 2, rows, window.emb_dim)


# --- similarity: the tab and its slides -----------------------------------------------------


def reads_one(value: float) -> bool:
    return f"{value:.3f}" == "1.000"


def check_similarity_tab(window: WindowEmbeddings, canvas: Canvas, stacked: bool) -> None:
    drawn = similarity_chart(window, canvas=canvas, stacked=stacked)
    figure = as_json(drawn)
    token, position, inputs = (heatmap_z(figure, i) for i in range(3))
    n = len(token)
    sentence = similarity_sentence(drawn.decisions, markdown=False)
    check_places(sentence, figure, 3 if " (right)" in sentence or "(bottom)" in sentence else 2)
    if n < len(window.token_ids):
        assert f"the {n} positions shown (of {len(window.token_ids)})" in sentence
    ones = sum(reads_one(token[p, q]) for p, q in itertools.combinations(range(n), 2))
    named = re.search(rf": '(?P<name>.+?)' (?P<pairs>{PAIRS})", sentence)
    if named is None:
        assert not outlined_cells(figure)
        if ones:
            assert re.search(rf"\b{ones} pairs?\b", sentence)
    else:
        assert re.search(rf"\b{ones} pairs? of positions", sentence), (ones, sentence)
        check_pairs(figure, named["name"], named["pairs"], sentence, inputs, decimals=3)
    check_neighbours(drawn, position, window.emb_dim)


def check_pairs(
    figure: dict[str, Any], name: str, pairs: str, text: str, inputs: np.ndarray, decimals: int
) -> None:
    """The pairs named are the first outlined token's, and what they read in the input panel
    is quoted from its cells."""
    (rows, _), *_ = outlined_cells(figure)
    shown, more = listed(pairs)
    want = list(itertools.combinations(rows, 2))
    assert [tuple(map(int, re.findall(r"\d+", p))) for p in shown] == want[: len(shown)]
    assert len(shown) + more == len(want)
    assert names(name, axis_rows(figure)[rows[0]])
    values = [inputs[p, q] for p, q in want]
    low, high = f"{min(values):.{decimals}f}", f"{max(values):.{decimals}f}"
    if reads_one(min(values)):
        assert "still read 1." in text
    else:
        assert (f"read {low} to {high}" if low != high else f"read {low}") in text, text


def check_neighbours(drawn: Any, position: np.ndarray, emb_dim: int) -> None:
    """The position panel's means are the drawn cells'; the word comparing them fits them and
    is said only beyond chance (three standard deviations for random rows, stated)."""
    n = len(position)
    text = neighbour_sentence(drawn.decisions)
    pattern = pattern_sentence(drawn.decisions, trained=False)
    if n < 2:
        assert text == ""
        return
    adjacent, distant = neighbour_means(position)
    assert f"**{adjacent:.3f}**" in text
    if distant is None:
        assert "fewer than 4 positions" in pattern
        return
    assert f"**{distant:.3f}**" in text
    far = max(2, n // 2)
    pairs = sum(n - k for k in range(far, n))
    chance = 3 * math.sqrt((1 / (n - 1) + 1 / pairs) / emb_dim)
    assert f"±{chance:.3f}" in pattern
    said = re.findall(r"\b(more|less) alike than positions far apart", pattern.split("numbers")[1])
    if abs(adjacent - distant) <= chance * (1 - 1e-9):
        assert said == [] and "no pattern" in pattern
    elif abs(adjacent - distant) > chance * (1 + 1e-9):
        assert said == ["more" if adjacent > distant else "less"]


def check_similarity_slide(window: WindowEmbeddings, slide: Slide, canvas: Canvas) -> None:
    drawn = similarity_chart(window, lecture=True, outlines=slide.outlines, canvas=canvas)
    figure = as_json(drawn)
    if not slide.revealed:
        assert not outlined_cells(figure)
        return
    answer = similarity_answer(drawn.decisions, markdown=False)
    named = re.search(rf"such as '(?P<name>.+?)' (?P<pairs>{PAIRS})", answer)
    if named is not None:
        check_pairs(figure, named["name"], named["pairs"], answer, heatmap_z(figure, 2), 2)


# --- the properties -------------------------------------------------------------------------


@FEW
@given(
    text=st.sampled_from(sorted(TEXTS)),
    context_length=st.sampled_from([1, 3, 9, 16, 40]),
    emb_dim=st.sampled_from([2, 8, 64]),
    scheme=st.sampled_from(SCHEMES),
    canvas=st.sampled_from(sorted(CANVASES)),
)
def test_the_embeddings_and_similarity_tabs_say_what_they_draw(
    text: str, context_length: int, emb_dim: int, scheme: Scheme, canvas: str
) -> None:
    window = window_for(TEXTS[text], context_length, emb_dim, scheme)
    room, stacked = CANVASES[canvas]
    check_embeddings_tab(window, room, stacked)
    check_similarity_tab(window, room, stacked)


@FEW
@given(
    text=st.sampled_from(sorted(TEXTS)),
    context_length=st.sampled_from([1, 4, 12, 32]),
    emb_dim=st.sampled_from([2, 16]),
    scheme=st.sampled_from(SCHEMES),
    canvas=st.sampled_from(["unknown", "1920x1080", "1280x720", "phone"]),
    slide=st.sampled_from([s.number for s in EMBEDDING_SLIDES + SIMILARITY_SLIDES]),
)
def test_every_slide_says_what_it_draws(
    text: str, context_length: int, emb_dim: int, scheme: Scheme, canvas: str, slide: int
) -> None:
    window = window_for(TEXTS[text], context_length, emb_dim, scheme)
    chosen = SLIDES[slide - 1]
    room = CANVASES[canvas][0]
    if chosen.step.view == "embeddings":
        check_embeddings_slide(window, chosen, room)
    else:
        check_similarity_slide(window, chosen, room)


@pytest.mark.parametrize(
    ("context_length", "emb_dim", "canvas"),
    [(1024, 768, "1920x1080"), (1024, 768, "phone"), (260, 64, "1280x720"), (260, 64, "unknown")],
    ids=["T1024-d768-1920x1080", "T1024-d768-phone", "T260-d64-1280x720", "T260-d64-unknown"],
)
def test_long_windows_say_what_they_draw(context_length: int, emb_dim: int, canvas: str) -> None:
    """Every 12th dimension, the first 256 similarity rows, many more repeats than outlines."""
    window = window_for(long_text(), context_length, emb_dim, "learned")
    assert len(window.token_ids) == context_length
    room, stacked = CANVASES[canvas]
    check_embeddings_tab(window, room, stacked)
    check_similarity_tab(window, room, stacked)
    for slide in (EMBEDDING_SLIDES[1], EMBEDDING_SLIDES[-1]):  # a token answer, an input answer
        check_embeddings_slide(window, slide, room)


# --- word order -----------------------------------------------------------------------------

PAIRS_OF_TEXTS = {
    "reordered": (DEFAULT_TEXT, DEFAULT_COMPARE_TEXT),
    "identical": (DEFAULT_TEXT, DEFAULT_TEXT),
    "emoji": ("I like 🍣 and tea", "I like tea and 🍣"),
    "other-tokens": ("a b c", "a b"),
    "leading-space": ("The dog", "dog The"),
}


def reference_text(token_ids_: list[int]) -> str:
    return tiktoken_gpt2().decode(token_ids_)


@settings(FEW, max_examples=20)
@given(
    pair=st.sampled_from(sorted(PAIRS_OF_TEXTS)),
    context_length=st.sampled_from([2, 4, 16]),
    emb_dim=st.sampled_from([8, 768]),
    scheme=st.sampled_from(SCHEMES),
    causal=st.booleans(),
    canvas=st.sampled_from(["unknown", "1280x720", "phone"]),
)
def test_word_order_names_what_it_compared(
    pair: str, context_length: int, emb_dim: int, scheme: Scheme, causal: bool, canvas: str
) -> None:
    first, second = PAIRS_OF_TEXTS[pair]
    ids_a, ids_b = token_ids(first)[:context_length], token_ids(second)[:context_length]
    comparison = compare_with_text(
        tables(123, emb_dim), ids_a, second, context_length=context_length, scheme=scheme,
        weights=book_attention_weights(d_in=emb_dim, d_out=emb_dim), causal=causal,
    )  # fmt: skip
    text_a, text_b = reference_text(ids_a), reference_text(ids_b)
    question = question_text(
        WORD_ORDER_SLIDES[0], scheme, None, markdown=False, compared=comparison
    )
    assert f"'{text_a}' and '{text_b}'" in question
    answer = word_order_answer(comparison, markdown=False)
    assert f"'{text_a}'" in answer and f"'{text_b}'" in answer
    note = cut_note(comparison)
    left_out = len(token_ids(second)) - len(ids_b)
    assert (note is None) == (left_out == 0)
    if note is not None:
        assert f"({for_markdown(text_b)})" in note.replace("*", "") and f"{left_out} more" in note
    if sorted(ids_a) != sorted(ids_b):
        message = status_message(comparison)
        assert message is not None
        assert f"*{for_markdown(text_a)}*" in message and f"*{for_markdown(text_b)}*" in message
        return
    drawn = compare_chart(comparison, lecture=canvas != "unknown", canvas=CANVASES[canvas][0])
    figure = as_json(drawn)
    for axis, ids in (("yaxis", ids_a), ("yaxis5", ids_b)):
        ticks = [axis_rows(figure, axis)[row] for row in range(len(ids))]
        if not any("(1 of" in tick or "…" in tick for tick in ticks):
            assert "".join(ticks).replace("␣", " ") == reference_text(ids)
    said = " ".join(findings(comparison, drawn.decisions))
    if ids_a == ids_b:
        assert not re.search(r"\bdiffer(s|ent)?\b|not the same rows|another order", said)
    columns = decode_array(figure["data"][0]["x"])
    if len(columns) < emb_dim:
        for quoted in re.findall(r"largest difference [^,;)]*", said):
            assert f"over all {emb_dim} dimensions" in quoted, quoted


# --- geometry and distance ------------------------------------------------------------------


@settings(max_examples=12, deadline=None, database=None)
@given(
    context_length=st.sampled_from([4, 16, 64]),
    emb_dim=st.sampled_from([2, 8, 16]),
    scheme=st.sampled_from(SCHEMES),
    canvas=st.sampled_from(["unknown", "1280x720", "phone"]),
    lecture=st.booleans(),
)
def test_geometry_and_distance_say_what_they_draw(
    context_length: int, emb_dim: int, scheme: Scheme, canvas: str, lecture: bool
) -> None:
    shown = Settings(text="A rose is a rose", context_length=context_length, emb_dim=emb_dim,
                     scheme=scheme)  # fmt: skip
    view = build_view(shown, tables=lambda s: tables(s.seed, s.emb_dim))
    room = CANVASES[canvas][0]
    geometry = build_geometry(view)
    drawn = geometry_chart(geometry, lecture=lecture, spectrum=not lecture, canvas=room)
    layout = as_json(drawn)["layout"]
    scenes = [layout[name]["domain"] for name in ("scene", "scene2")]
    stacked = scenes[1]["y"][1] <= scenes[0]["y"][0]
    assert drawn.decisions.stacked == stacked
    assert drawn.decisions.fills == (lecture and not stacked)
    said = " ".join(geometry_lesson.sentences(geometry, drawn.decisions))
    points = [t for t in as_json(drawn)["data"] if t["type"] == "scatter3d"]
    for trace in points:
        drawn_axes = sum(bool(np.any(decode_array(trace[a]) != 0)) for a in "xyz")
        label = trace["name"]
        if f"**{label}**: 90 %" in said:
            words = {1: "one direction", 2: "two", 3: "three"}[max(drawn_axes, 1)]
            assert f"the {words} drawn hold" in said.split(f"**{label}**: 90 %")[1].split("%")[0]
    distance = build_distance(view, beyond=max(1, context_length // 4))
    plotted = distance_chart(distance, lecture=lecture, canvas=room)
    figure = as_json(plotted)
    shaded = bool(figure["layout"].get("shapes"))
    assert plotted.decisions.shaded == shaded
    text = " ".join(distance_lesson.sentences(distance, plotted.decisions))
    assert ("Past the context length (T = " in text) == shaded
    last = round(figure["layout"]["xaxis"]["range"][1] + 0.5) - 1
    for k in re.findall(r"at k = (\d+)", text):
        assert int(k) <= last
    answer = distance_lesson.lecture_answer(distance, plotted.decisions)
    assert f"Past T = {context_length} " in answer
