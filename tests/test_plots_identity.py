"""Identity drawn in the figures (posviz.plots._identity through both figure builders), tested
as data: which rows and cells are outlined, on which axes, solid or dashed, which rows are
labelled and what their hover says. Expected rows come from tests/reference.py."""

from __future__ import annotations

import itertools
import re

import plotly.graph_objects as go
import pytest
from reference import largest_row_difference, repeated_groups

from posviz.config import Scheme
from posviz.embeddings import SeededEmbeddings
from posviz.pipeline import WindowEmbeddings, embed_window
from posviz.plots._layout import Canvas
from posviz.plots.heatmaps import embeddings_chart, embeddings_figure, similarity_figure
from posviz.repeats import repeat_facts
from posviz.tokenizer import encode

ROSE = "A rose is a rose is a rose."
FOX = "The quick brown fox jumps over the lazy dog and the quick brown fox runs away"
WHITE = "#ffffff"


@pytest.fixture(scope="module")
def tables() -> SeededEmbeddings:
    return SeededEmbeddings.create(seed=123, emb_dim=32)


def window(tables: SeededEmbeddings, text: str, scheme: Scheme = "learned") -> WindowEmbeddings:
    return embed_window(tables, encode(text), context_length=16, scheme=scheme)


def coloured(shapes: list[dict[str, object]]) -> list[dict[str, object]]:
    """The outlines themselves (each has a white casing under it)."""
    return [s for s in shapes if s["line"]["color"] != WHITE]  # type: ignore[index]


def outlined_rows(figure: object, x_ref: str) -> dict[int, str]:
    """Row -> line dash of each row outlined across the panel of ``x_ref``."""
    shapes = coloured([s.to_plotly_json() for s in figure.layout.shapes])  # type: ignore[attr-defined]
    return {
        round(s["y0"] + 0.5): s["line"]["dash"]
        for s in shapes
        if s["xref"] == f"{x_ref} domain" and (s["x0"], s["x1"]) == (0, 1)
    }


def labelled_rows(axis: object) -> set[int]:
    return {int(str(value).split(" · ")[0]) for value in axis.tickvals}  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("scheme", "input_dash"), [("learned", "dash"), ("rope", "dash"), ("none", "solid")]
)
@pytest.mark.parametrize("stacked", [False, True])
def test_repeated_rows_are_outlined_in_the_token_and_input_panels(
    tables: SeededEmbeddings, scheme: Scheme, input_dash: str, stacked: bool
) -> None:
    shown = window(tables, ROSE, scheme)
    figure = embeddings_figure(shown, stacked=stacked)
    rows = sorted(p for group in repeated_groups(shown.token_ids).values() for p in group)
    assert rows == [1, 2, 3, 4, 5, 6, 7]
    token_axis, input_axis = ("x", "x3")
    assert outlined_rows(figure, token_axis) == dict.fromkeys(rows, "solid")  # identical rows
    assert outlined_rows(figure, input_axis) == dict.fromkeys(rows, input_dash)
    assert outlined_rows(figure, "x2") == {}  # the position panel is not marked
    for shape in figure.layout.shapes:  # axis-referenced: they follow any chart height
        assert shape.yref in ("y", "y3") and shape.xref.endswith("domain")
    one_colour = {  # one colour per token: rows 1, 4, 7 share theirs
        round(s["y0"] + 0.5): s["line"]["color"]
        for s in coloured([s.to_plotly_json() for s in figure.layout.shapes])
    }
    assert one_colour[1] == one_colour[4] == one_colour[7] != one_colour[2] == one_colour[5]


def test_dash_follows_the_numbers_not_the_scheme(tables: SeededEmbeddings) -> None:
    """Solid means the rows are identical (largest difference 0.0), read from the matrices."""
    shown = window(tables, FOX)
    figure = embeddings_figure(shown)
    inputs = shown.input_embeddings.numpy()
    for positions in repeated_groups(shown.token_ids).values():
        identical = largest_row_difference(inputs[positions]) == 0.0
        for row in positions:
            assert outlined_rows(figure, "x3")[row] == ("solid" if identical else "dash")


def test_facts_the_caller_measured_are_the_ones_drawn(tables: SeededEmbeddings) -> None:
    """The page measures the window's repeats once (for its sentence) and hands them to the
    figure: the outlines follow those facts, and the window's own give the same figure."""
    learned, none = window(tables, ROSE), window(tables, ROSE, "none")
    same = embeddings_figure(learned, facts=repeat_facts(learned))
    assert same.to_plotly_json() == embeddings_figure(learned).to_plotly_json()
    told = embeddings_figure(learned, facts=repeat_facts(none))  # "the input rows are equal"
    assert set(outlined_rows(same, "x3").values()) == {"dash"}
    assert set(outlined_rows(told, "x3").values()) == {"solid"}


# A 1280 x 720 projector's slide (lecture mode fills the window below the chart's top).
PROJECTOR = Canvas(width=1232, height=560, window_width=1280, window_height=720)


@pytest.mark.parametrize(("lecture", "canvas"), [(False, Canvas()), (True, PROJECTOR)])
@pytest.mark.parametrize("panels", [1, 2, 3])
def test_every_repeated_row_is_labelled_where_rows_have_room(
    tables: SeededEmbeddings, lecture: bool, canvas: Canvas, panels: int
) -> None:
    shown = window(tables, FOX)
    drawn = embeddings_chart(shown, lecture=lecture, panels=panels, canvas=canvas)
    figure = go.Figure(drawn.spec.data, drawn.spec.layout)
    repeated = {p for group in repeated_groups(shown.token_ids).values() for p in group}
    assert repeated == {1, 2, 3, 6, 10, 11, 12, 13}
    axis = figure.layout.yaxis
    assert axis.tickmode == "array"  # never left to Plotly, which could skip one
    assert repeated <= labelled_rows(axis)
    assert drawn.decisions.labelled == tuple(sorted(labelled_rows(axis)))
    assert drawn.decisions.unlabelled == ()
    texts = {int(re.sub(r"<[^>]+>", "", t).split(" · ")[0]): t for t in axis.ticktext}
    for row in repeated:
        assert texts[row].startswith('<span style="color:#') and "<b>" in texts[row]
    if panels < 3:  # outlines only on the panels drawn
        assert outlined_rows(figure, "x3") == {}


def test_a_lecture_figure_for_no_measured_size_keeps_crowded_twins_to_one_label(
    tables: SeededEmbeddings,
) -> None:
    """Canvas() in lecture mode: the labels are spaced for the smallest lecture panel (300 px,
    19 px a row for 16 rows: less than a 20-px label), so "␣quick ␣brown ␣fox" at 1, 2, 3 get
    one label, and every outline and hover stays."""
    shown = window(tables, FOX)
    drawn = embeddings_chart(shown, lecture=True)
    labelled = drawn.decisions.labelled
    assert all(b - a >= 2 for a, b in itertools.pairwise(labelled)), labelled
    assert 1 in labelled and 2 not in labelled, "the most frequent token's rows come first"
    assert set(drawn.decisions.unlabelled) == {1, 2, 3, 6, 10, 11, 12, 13} - set(labelled)
    figure = go.Figure(drawn.spec.data, drawn.spec.layout)
    assert set(outlined_rows(figure, "x")) == {1, 2, 3, 6, 10, 11, 12, 13}
    hover = figure.data[0].y
    assert all("same token vector" in hover[row] for row in drawn.decisions.unlabelled)


def test_a_question_step_labels_the_rows_without_outlining_them(tables: SeededEmbeddings) -> None:
    shown = window(tables, ROSE)
    figure = embeddings_figure(shown, lecture=True, panels=1, outlines=False)
    assert not figure.layout.shapes
    assert {1, 4, 7} <= labelled_rows(figure.layout.yaxis)
    assert not any("<span" in t for t in figure.layout.yaxis.ticktext), "no colour: no answer"


def test_hover_names_the_twins(tables: SeededEmbeddings) -> None:
    shown = window(tables, ROSE)
    y = list(embeddings_figure(shown).data[2].y)
    assert y[1] == "1 · ␣rose (same token vector as rows 4 and 7)"
    assert y[5] == "5 · ␣is (same token vector as row 2)"
    assert y[0] == "0 · A" and y[8] == "8 · ."


def test_many_repeats_mark_what_the_axis_can_label(tables: SeededEmbeddings) -> None:
    text = " ".join(f"w{i} w{i}" for i in range(12))  # 12 tokens, each twice, 36 rows
    shown = embed_window(tables, encode(text)[:64], context_length=64)
    figure = embeddings_figure(shown)
    groups = repeated_groups(shown.token_ids)
    marked = outlined_rows(figure, "x")
    assert 0 < len(marked) < sum(len(g) for g in groups.values())
    title = " ".join(re.sub("<[^>]+>", " ", figure.layout.annotations[0].text).split())
    found = re.search(r"outlined: (\d+) of (\d+) repeated", title)
    assert found, title
    outlined_tokens = {shown.token_ids[row] for row in marked}
    assert (int(found[1]), int(found[2])) == (len(outlined_tokens), len(groups))


def test_similarity_outlines_the_cells_of_each_pair(tables: SeededEmbeddings) -> None:
    shown = window(tables, ROSE)
    figure = similarity_figure(shown)
    shapes = coloured([s.to_plotly_json() for s in figure.layout.shapes])
    cells: dict[str, dict[tuple[int, int], str]] = {}
    for shape in shapes:
        row, column = round(shape["y0"] + 0.5), round(shape["x0"] + 0.5)
        cells.setdefault(shape["xref"], {})[(row, column)] = shape["line"]["dash"]
    pairs = {
        (p, q) for group in repeated_groups(shown.token_ids).values() for p in group for q in group
    } - {(p, p) for p in range(9)}
    assert cells["x"] == dict.fromkeys(pairs, "solid")  # read 1.000 in the token panel
    assert cells["x3"] == dict.fromkeys(pairs, "dash")  # not in the input panel
    assert "x2" not in cells
    assert {1, 4, 7} <= labelled_rows(figure.layout.yaxis)
    none = similarity_figure(window(tables, ROSE, "none"))
    dashes = {s["line"]["dash"] for s in coloured([s.to_plotly_json() for s in none.layout.shapes])}
    assert dashes == {"solid"}  # with no position signal they read 1.000 in both
