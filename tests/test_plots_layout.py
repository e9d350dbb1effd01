"""posviz.plots._layout: the layout both three-panel figures share, tested as numbers.

Widths are checked against the rule they promise (lines no wider than asked, ticks no closer
than their font allows, panels that do not overlap), with expected values computed here.
"""

from __future__ import annotations

import html
import itertools
import math

import pytest

from posviz.plots._layout import (
    CHART_BOTTOM_GAP,
    LECTURE_TYPE,
    NORMAL_TYPE,
    TOOLBAR_ROOM,
    Canvas,
    CanvasError,
    Colorbar,
    RowMarks,
    TypeSizes,
    arrange,
    colorbar_step,
    position_ticks,
    short_label,
    text_width,
    three_panels,
    type_sizes,
    wrap_title,
)

TITLES = ("token embeddings", "positional embeddings<br>(learned)", "input embeddings<br>= sum")
ROSE = ["A", "␣rose", "␣is", "␣a", "␣rose", "␣is", "␣a", "␣rose", "."]


def test_text_width_counts_wide_characters_as_one_em() -> None:
    assert text_width("", 20) == 0
    assert text_width("ab", 10) == pytest.approx(2 * 0.62 * 10)
    assert text_width("漢字", 10) == pytest.approx(20)
    assert text_width("ab", 10, bold=True) == pytest.approx(2 * 0.6 * 10)


@pytest.mark.parametrize("width", [60, 120, 200, 400])
def test_wrapped_title_lines_fit_unless_a_single_word_is_wider(width: int) -> None:
    for title in TITLES:
        lines = wrap_title(title, width=width, font_size=17).split("<br>")
        assert " ".join(lines) == title.replace("<br>", " "), "no word lost or split"
        for line in lines:
            assert text_width(line, 17, bold=True) <= width or " " not in line, line


def test_wrap_keeps_a_break_posviz_wrote() -> None:
    assert wrap_title("input embeddings<br>= sum", width=1000, font_size=17) == (
        "input embeddings<br>= sum"
    )


def test_short_labels_cut_long_tokens_and_keep_short_ones() -> None:
    assert short_label(7, "␣rose") == "7 · ␣rose"
    long = "x" * 40
    label = short_label(12, long, max_chars=10)
    assert label == "12 · " + "x" * 9 + "…"


@pytest.mark.parametrize("rows", [1, 9, 64, 1024])
@pytest.mark.parametrize("length", [200, 600])
def test_position_ticks_are_spaced_for_their_font(rows: int, length: int) -> None:
    texts = [f"<t{i}>" for i in range(rows)]
    ticks = position_ticks(texts, font_size=20, length=length)
    positions = [int(html.unescape(value).split(" · ")[0]) for value in ticks.values]
    assert positions[0] == 0
    assert len(positions) * 20 * 1.3 <= max(length, 26), "labels closer than 1.3 lines"
    assert len(set(itertools.starmap(lambda a, b: b - a, itertools.pairwise(positions)))) <= 1
    for value, text in zip(ticks.values, ticks.texts, strict=True):
        assert "<" not in value and "<" not in text, "labels are escaped for plotly"
        assert html.unescape(text).startswith(html.unescape(value).split(" · ")[0] + " · ")


def _layout(
    *, count: int = 3, stacked: bool = False, lecture: bool = False, **options: object
) -> dict[str, object]:
    """three_panels' layout of the rose sentence, with ``options`` (canvas, token_texts...)
    in place of the defaults."""
    arguments: dict[str, object] = {
        "titles": TITLES[:count],
        "note": "",
        "token_texts": ROSE,
        "x_axis": {"title": {"text": "dimension"}},
        "colorbars": [Colorbar("coloraxis", -2.0, 2.0, "value")],
        "lecture": lecture,
        "stacked": stacked,
        "panel_height": 300,
        "x_tick_height": 50,
    }
    return three_panels(**(arguments | options)).layout  # type: ignore[arg-type]


@pytest.mark.parametrize("count", [1, 2, 3])
def test_side_by_side_panels_do_not_overlap_and_share_the_position_axis(count: int) -> None:
    layout = _layout(count=count)
    domains = [layout["xaxis" if i == 0 else f"xaxis{i + 1}"]["domain"] for i in range(count)]
    assert domains[0][0] == 0 and domains[-1][1] == pytest.approx(1)
    assert all(left[1] < right[0] for left, right in itertools.pairwise(domains))
    assert "yaxis2" not in layout and layout["yaxis"]["autorange"] == "reversed"
    assert len(layout["annotations"]) == count
    assert f"xaxis{count + 1}" not in layout, "no empty axes for panels not drawn"


@pytest.mark.parametrize("count", [1, 2, 3])
def test_stacked_panels_are_full_width_one_under_the_other(count: int) -> None:
    layout = _layout(count=count, stacked=True)
    names = ["" if i == 0 else str(i + 1) for i in range(count)]
    y_domains = [layout[f"yaxis{name}"]["domain"] for name in names]
    assert all(layout[f"xaxis{name}"]["domain"] == [0.0, 1.0] for name in names)
    assert all(upper[0] > lower[1] for upper, lower in itertools.pairwise(y_domains))
    assert [a["y"] for a in layout["annotations"]] == [d[1] for d in y_domains]
    bar = layout["coloraxis"]["colorbar"]
    assert bar["orientation"] == "h", "the colour bar goes under the panels on a phone"


def test_margins_are_computed_not_measured_by_plotly() -> None:
    for lecture, stacked in itertools.product([False, True], repeat=2):
        layout = _layout(lecture=lecture, stacked=stacked)
        axes = [value for key, value in layout.items() if key[1:5] == "axis"]
        assert all(axis.get("automargin") is not True for axis in axes)
        sizes = LECTURE_TYPE if lecture else NORMAL_TYPE
        widest = max(text_width(short_label(i, t), sizes.tick) for i, t in enumerate(ROSE))
        assert layout["margin"]["l"] >= widest, "room for the widest position label"


def test_lecture_type_is_projector_sized() -> None:
    layout = _layout(lecture=True)
    assert layout["font"]["size"] >= 20
    assert layout["yaxis"]["tickfont"]["size"] >= 20
    assert all(a["font"]["size"] >= 20 for a in layout["annotations"])


def test_panel_count_outside_one_to_three_is_refused() -> None:
    with pytest.raises(ValueError, match="1 to 3"):
        _layout(count=0)


def test_auto_ticks_leave_the_spacing_to_plotly_and_name_rows_by_their_short_label() -> None:
    texts = ["<b>", "x" * 40, "␣rose"]
    ticks = position_ticks(texts, font_size=20, length=100, auto=True)
    assert ticks.auto and ticks.values == [] and ticks.texts == []
    assert [html.unescape(name) for name in ticks.categories] == [
        "0 · <b>",
        "1 · " + "x" * 11 + "…",
        "2 · ␣rose",
    ]
    assert all("<" not in name for name in ticks.categories), "escaped for plotly"
    assert ticks.width == max(text_width(html.unescape(n), 20) for n in ticks.categories)


def test_a_chart_whose_height_the_page_sets_gets_auto_ticks_side_by_side_only() -> None:
    common = {
        "titles": TITLES,
        "note": "",
        "token_texts": ROSE,
        "x_axis": {},
        "colorbars": [Colorbar("coloraxis", -2.0, 2.0, "value")],
        "lecture": True,
        "panel_height": 300,
        "x_tick_height": 60,
        "follows_page": True,
    }
    side = three_panels(stacked=False, **common)  # type: ignore[arg-type]
    axis = side.layout["yaxis"]
    assert isinstance(axis, dict) and axis["tickmode"] == "auto" and "tickvals" not in axis
    assert len(side.rows) == len(ROSE) and len(set(side.rows)) == len(ROSE)
    stacked = three_panels(stacked=True, **common)  # type: ignore[arg-type]
    axis = stacked.layout["yaxis"]
    assert isinstance(axis, dict) and axis["tickmode"] == "array"


# --- marked rows (a repeated token's): labelled a label apart (issue 42) ---------------------


@pytest.mark.parametrize("rows", [9, 64, 1024])
@pytest.mark.parametrize("marked", [(1, 2, 3, 500), (0, 7), (5,), (40, 3, 41, 2, 63, 60)])
def test_marked_rows_are_labelled_a_label_apart_and_spaced_rows_keep_clear(
    rows: int, marked: tuple[int, ...]
) -> None:
    texts = [f"t{i}" for i in range(rows)]
    inside = [row for row in marked if row < rows]
    marks = RowMarks(colours=dict.fromkeys(inside, "#123456"), notes=dict.fromkeys(inside, "twin"))
    ticks = position_ticks(texts, font_size=20, length=300, marks=marks)
    labelled = [int(value.split(" · ")[0]) for value in ticks.values]
    assert tuple(labelled) == ticks.rows
    label = 20 * 1.3  # px from one label to the next, at least (ROW_PITCH font sizes)
    px_per_row = 300 / rows
    gaps = [(b - a) * px_per_row for a, b in itertools.pairwise(labelled)]
    assert all(gap >= label - 1e-9 for gap in gaps), "no two labels touch"
    if inside:
        assert inside[0] in labelled, "the first marked row is always labelled"
    for row in inside:  # labelled, or a twin stands within a label's height
        near = [m for m in inside if m in labelled and abs(m - row) * px_per_row < label]
        assert row in labelled or near, row
        assert ticks.categories[row] == f"{row} · t{row} (twin)", "hover names every marked row"
    step = math.ceil(rows / (300 // 26))
    spaced = [row for row in labelled if row not in inside]
    for row in spaced:
        assert row % step == 0, "a spaced row is one of the evenly spaced ones"
        assert all(abs(row - m) >= step for m in inside), "and keeps clear of marked rows"
    for row in set(inside) & set(labelled):
        text = ticks.texts[labelled.index(row)]
        assert text == f'<span style="color:#123456"><b>{row} · t{row}</b></span>'


def test_twins_a_label_apart_each_keep_their_label() -> None:
    """Nine rows on 300 px: 33 px a row, every twin labelled (issue 15's rose sentence)."""
    marks = RowMarks(colours=dict.fromkeys((1, 4, 7, 2, 5), "#123456"))
    ticks = position_ticks(ROSE, font_size=20, length=300, marks=marks)
    assert {1, 2, 4, 5, 7} <= set(ticks.rows)


def test_marks_replace_auto_ticks_and_tick_texts_name_the_rows_only_in_labels() -> None:
    marks = RowMarks(colours={1: None, 4: None}, tick_texts=[f"x{i}" for i in range(len(ROSE))])
    ticks = position_ticks(ROSE, font_size=20, length=300, auto=True, marks=marks)
    assert not ticks.auto, "Plotly could leave a marked row unlabelled"
    assert "1 · x1" in ticks.texts and "4 · x4" in ticks.texts  # plain: colour None
    assert ticks.categories[1] == "1 · ␣rose", "hover keeps the exact token text"
    auto = position_ticks(ROSE, font_size=20, length=300, auto=True, marks=RowMarks(tick_texts=[
        f"x{i}" for i in range(len(ROSE))
    ]))  # fmt: skip
    assert auto.auto and auto.categories[1] == "1 · ␣rose", "auto labels are the hover names"


# --- laid out for a measured canvas (issue 19) ----------------------------------------------

# The 16 tokens of issue 19's lecture sentence, "The quick brown fox jumps over the lazy dog
# and the quick brown fox runs away", as posviz writes them.
LECTURE_TEXT = "The quick brown fox jumps over the lazy dog and the quick brown fox runs away"
SENTENCE = [word if i == 0 else f"␣{word}" for i, word in enumerate(LECTURE_TEXT.split())]


def _canvas(width: int, window: tuple[int, int], height: int | None = None) -> Canvas:
    """The canvas of a chart ``width`` px wide in a window ``window``, ``height`` px from its
    top to the window's bottom (default: the whole window)."""
    return Canvas(width=width, height=height or window[1], window_width=window[0],
                  window_height=window[1])  # fmt: skip


def test_a_canvas_the_browser_cannot_have_is_refused_with_the_fix() -> None:
    for bad in ({"width": 0}, {"height": -5}, {"window_width": 10**6}):
        with pytest.raises(CanvasError, match=r"outside 1\.\.20000 px.*Canvas\(\)"):
            Canvas(**bad)
    assert not Canvas().measured and _canvas(800, (1280, 800)).measured


@pytest.mark.parametrize(
    ("width", "window", "stacked"),
    [
        pytest.param(358, (390, 844), True, id="phone"),
        pytest.param(568, (600, 900), True, id="600-px-window"),
        pytest.param(564, (1024, 768), True, id="1024-sidebar-open"),
        pytest.param(820, (1280, 800), False, id="laptop"),
        pytest.param(1460, (1920, 1080), False, id="1920"),
    ],
)
def test_the_measured_width_decides_stacking_not_the_device(
    width: int, window: tuple[int, int], stacked: bool
) -> None:
    canvas = _canvas(width, window)
    arrangement = arrange(canvas, lecture=False, count=3, token_texts=ROSE)
    assert arrangement.stacked is stacked
    sizes = arrangement.sizes
    labels = max(text_width(short_label(i, t), sizes.tick) for i, t in enumerate(ROSE))
    if stacked:  # each panel the chart's width less its labels: at least 400 px from 600 up
        assert arrangement.panel_width == pytest.approx(
            width - (labels + 8 + 1.6 * sizes.text) - 16
        )
        assert width < 560 or arrangement.panel_width >= 400
    else:
        assert arrangement.panel_width >= 150
    # The stacking flag given for Canvas() is ignored once the width is known.
    assert (
        arrange(canvas, lecture=False, count=3, token_texts=ROSE, stacked=True).stacked is stacked
    )
    assert arrange(Canvas(), lecture=False, count=3, token_texts=ROSE, stacked=True).stacked


def test_large_screens_get_larger_chart_type_and_laptops_do_not() -> None:
    assert type_sizes(lecture=False, canvas=_canvas(1000, (1440, 900))) == NORMAL_TYPE
    big = type_sizes(lecture=False, canvas=_canvas(1500, (1920, 1080)))
    assert big == TypeSizes(text=18, tick=18, title=20)  # 1.2 x 15 and 17
    assert type_sizes(lecture=True, canvas=_canvas(1760, (1920, 1080))).tick == 24
    assert type_sizes(lecture=False, canvas=_canvas(1200, (1600, 900))).tick == 17


def _lecture_layout(texts: list[str], room: int) -> dict[str, object]:
    """Lecture mode's chart 1120 px wide, ``room`` px from its top to the window's bottom."""
    canvas = _canvas(1120, (1280, 720), room)
    return _layout(lecture=True, token_texts=texts, x_tick_height=73, follows_page=True,
                   canvas=canvas)  # fmt: skip


@pytest.mark.parametrize("room", [570, 700, 900])
def test_lecture_chart_is_as_tall_as_the_window_leaves_and_labels_every_row(room: int) -> None:
    layout = _lecture_layout(SENTENCE, room)
    assert layout["height"] == room - CHART_BOTTOM_GAP  # nothing to scroll
    axis = layout["yaxis"]
    assert axis["tickmode"] == "array" and len(axis["tickvals"]) == len(SENTENCE), "every row"
    margin = layout["margin"]
    plot = room - CHART_BOTTOM_GAP - margin["t"] - margin["b"]
    assert plot >= len(SENTENCE) * 1.15 * axis["tickfont"]["size"], "labels 1.15 lines apart"
    assert axis["tickfont"]["size"] >= 20 and all(
        a["font"]["size"] >= 20 for a in layout["annotations"]
    ), "the projector rule holds"


def test_a_short_lecture_chart_labels_evenly_spaced_rows_it_has_room_for() -> None:
    layout = _lecture_layout(SENTENCE, 420)
    axis = layout["yaxis"]
    positions = [int(html.unescape(v).split(" · ")[0]) for v in axis["tickvals"]]
    plot = 420 - CHART_BOTTOM_GAP - layout["margin"]["t"] - layout["margin"]["b"]
    assert 1 < len(positions) < len(SENTENCE)
    assert len(positions) * 1.15 * 20 <= plot
    assert len(set(itertools.starmap(lambda a, b: b - a, itertools.pairwise(positions)))) == 1


@pytest.mark.parametrize("limit", [0.07, 0.31, 1.0, 2.2, 4.7, 9.99, 31.0])
def test_a_colour_bar_step_gives_three_to_five_round_ticks(limit: float) -> None:
    step = colorbar_step(limit)
    assert step is not None
    ticks = [k * step for k in range(-10, 11) if abs(k * step) <= limit + 1e-12]
    assert 3 <= len(ticks) <= 5, (limit, step, ticks)
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert round(mantissa, 6) in (1.0, 2.0, 2.5, 5.0)
    assert colorbar_step(0.0) is None


def test_a_stacked_colour_bar_shows_at_least_three_ticks() -> None:
    layout = _layout(
        colorbars=[Colorbar("coloraxis", -4.7, 4.7, "value")], canvas=_canvas(358, (390, 844))
    )
    bar = layout["coloraxis"]
    assert bar["colorbar"]["orientation"] == "h"
    step = bar["colorbar"]["dtick"]
    assert bar["colorbar"]["tickmode"] == "linear"
    assert len([k for k in range(-5, 6) if abs(k * step) <= 4.7]) >= 3
    assert layout["margin"]["t"] >= TOOLBAR_ROOM, "room for the toolbar a phone always shows"


def test_measured_titles_wrap_to_the_panels_real_width() -> None:
    canvas = _canvas(1460, (1920, 1080))
    arrangement = arrange(canvas, lecture=False, count=3, token_texts=ROSE)
    layout = _layout(canvas=canvas)
    size = arrangement.sizes.title
    for annotation in layout["annotations"]:
        title = annotation["text"].removeprefix("<b>").split("</b>")[0]
        for line in title.split("<br>"):
            assert text_width(line, size, bold=True) <= arrangement.panel_width, line
    # 1460 px leave room for "positional embeddings" on one line (17 px: 1.2 x 17 = 20 px)
    assert "positional embeddings<br>(learned)" in layout["annotations"][1]["text"]
