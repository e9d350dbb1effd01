"""Issue 42, item 1, as data: the position labels of texts with dense repeats never touch, and
no outline reaches them, in the figures laid out for the canvases the browser tests measured
(tests/test_browser_labels.py) and for ``Canvas()`` (the command line, the offline HTML).

Geometry from the figure's layout alone: a side-by-side panel's rows share the plot's height
(the figure's height less its top and bottom margins), a tick label's box is 1.12 of its font
size high (Arial / Liberation Sans), and plotly.js sets a label ``ticklen`` + a fifth of its
font size off the plot, when the axis has its ticks outside.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from reference import repeated_groups
from test_browser_labels import BULLETS, CODE, OPENING, PARAGRAPH

from posviz.config import Settings
from posviz.lesson.repeats import lesson_sentence
from posviz.plots._layout import Canvas
from posviz.plots.heatmaps import embeddings_chart, similarity_chart
from posviz.tokenizer import encode
from posviz.view import build_view

LABEL_BOX = 1.12  # a tick label's height in font sizes
FULL_HD = Canvas(width=1460, height=367, window_width=1920, window_height=1080)
PROJECTOR = Canvas(width=1120, height=526, window_width=1280, window_height=720)


def window(text: str, context_length: int, emb_dim: int = 768) -> Any:
    view = build_view(Settings(text=text, context_length=context_length, emb_dim=emb_dim))
    assert view.embeddings is not None
    return view.embeddings


def labelled_rows(axis: dict[str, Any]) -> list[int]:
    return [int(str(value).split(" · ")[0]) for value in axis["tickvals"]]


def assert_labels_apart(layout: dict[str, Any], rows: int) -> list[int]:
    """Side by side: consecutive labels at least a label's height apart on the plot's height;
    the labelled rows."""
    axis = layout["yaxis"]
    margin = layout["margin"]
    px_per_row = (layout["height"] - margin["t"] - margin["b"]) / rows
    box = LABEL_BOX * axis["tickfont"]["size"]
    labelled = labelled_rows(axis)
    close = [(a, b) for a, b in itertools.pairwise(labelled) if (b - a) * px_per_row < box]
    assert close == [], f"labels closer than {box:.1f} px at {px_per_row:.2f} px a row"
    return labelled


def assert_outlines_clear_of_labels(layout: dict[str, Any]) -> None:
    """Every outline's stroke (its casing: width + 2) ends before the labels begin."""
    for name in ("xaxis", "yaxis"):
        axis = layout[name]
        assert axis["ticks"] == "outside", name
        standoff = axis["ticklen"] + axis["tickfont"]["size"] / 5
        reach = max((shape["line"]["width"] / 2 for shape in layout.get("shapes", [])), default=0)
        assert reach < standoff, (name, reach, standoff)


@pytest.mark.parametrize(
    ("text", "context_length", "canvas", "lecture"),
    [
        (OPENING, 1024, FULL_HD, False),
        (CODE, 256, FULL_HD, False),
        (BULLETS, 256, FULL_HD, False),
        (PARAGRAPH, 512, PROJECTOR, True),
        (OPENING, 1024, Canvas(), False),
        (PARAGRAPH, 512, Canvas(), False),
        (PARAGRAPH, 512, Canvas(), True),
    ],
    ids=[
        "verdict-1920x1080", "code-1920x1080", "bullets-1920x1080", "paragraph-lecture-1280x720",
        "verdict-offline", "paragraph-offline", "paragraph-lecture-offline",
    ],
)  # fmt: skip
def test_labels_of_dense_repeats_stand_apart(
    text: str, context_length: int, canvas: Canvas, lecture: bool
) -> None:
    shown = window(text, context_length)
    drawn = embeddings_chart(shown, lecture=lecture, canvas=canvas)
    layout = drawn.spec.layout
    labelled = assert_labels_apart(layout, len(shown.token_ids))
    assert_outlines_clear_of_labels(layout)
    decisions = drawn.decisions
    assert decisions.labelled == tuple(labelled), "the decisions say which rows are labelled"
    marked = {row for group in decisions.groups for row in group}
    assert marked, "the text has repeats to mark"
    assert set(decisions.unlabelled) == marked - set(labelled)
    hover = drawn.spec.data[0]["y"]
    assert all("same token vector" in hover[row] for row in marked), "hover names every twin"


def test_the_verdicts_crowded_he_rows_share_one_label_and_keep_their_outlines() -> None:
    """Issue 42: "␣he" at 550, 556, 562, 580, 587 and 988, 994 on a 1920 x 1080 page."""
    shown = window(OPENING, 1024)
    drawn = embeddings_chart(shown, canvas=FULL_HD)
    he = next(group for group in drawn.decisions.groups if 550 in group)
    assert he == (39, 550, 556, 562, 580, 587, 988, 994)
    labelled = set(drawn.decisions.labelled)
    assert len({550, 556, 562, 580, 587} & labelled) == 1
    assert len({988, 994} & labelled) == 1
    outlined = {round(s["y0"] + 0.5) for s in drawn.spec.layout["shapes"]}
    assert set(he) <= outlined


def test_similarity_labels_of_the_verdict_stand_apart() -> None:
    shown = window(OPENING, 1024, emb_dim=64)
    drawn = similarity_chart(shown, canvas=FULL_HD)
    layout = drawn.spec.layout
    labelled = assert_labels_apart(layout, len(drawn.decisions.rows))
    assert_outlines_clear_of_labels(layout)
    assert drawn.decisions.labelled == tuple(labelled)


def test_the_sentence_names_the_rows_left_without_a_label() -> None:
    """The lesson sentence reads the figure's decision: the marked rows its axis does not
    label, found here from the drawn ticks and the reference's repeated groups."""
    shown = window(OPENING, 1024)
    drawn = embeddings_chart(shown, canvas=FULL_HD)
    he = repeated_groups(encode(OPENING)[:1024])[encode(" he")[0]]
    ticks = set(labelled_rows(drawn.spec.layout["yaxis"]))
    crowded = [row for row in he if row not in ticks]
    assert crowded == [556, 562, 580, 587, 994]
    sentence = lesson_sentence(drawn.decisions, markdown=False)
    assert sentence.endswith(
        " Rows 556, 562, 580, 587 and 994 stand too close to a labelled twin for a label of "
        "their own: their outlines and hover name them."
    )
    question = embeddings_chart(shown, canvas=FULL_HD, outlines=False).decisions
    assert lesson_sentence(question, markdown=False).endswith(": their hover names them.")
