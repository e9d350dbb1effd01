"""posviz.plots.heatmaps tested as data, the way plotly's own test_imshow.py tests px.imshow.

Every expected value is computed here from the inputs (matrices made in the test, labels
written with ``html.escape``), never copied from the code under test.
"""

from __future__ import annotations

import html
import itertools
import json
import re
from collections.abc import Callable, Sequence

import numpy as np
import plotly.colors
import plotly.graph_objects as go
import plotly.io as pio
import pytest
import torch

from posviz.embeddings import SeededEmbeddings
from posviz.pipeline import WindowEmbeddings, embed_window
from posviz.plots._layout import Canvas
from posviz.plots.heatmaps import (
    HOVER_CELLS,
    embeddings_chart,
    embeddings_figure,
    similarity_chart,
    similarity_figure,
)

MAX_FIGURE_JSON = 1_500_000  # bytes per rerun, issue 4
# Tags posviz itself writes into titles and hover; anything else with "<" came from user text.
OWN_TAGS = re.compile(r"</?(b|br|sup|extra)>")
# ColorBrewer diverging scales that stay readable with red-green colour blindness.
COLOUR_BLIND_SAFE = ("RdBu", "PuOr", "BrBG", "PiYG", "PRGn", "RdYlBu")


def random_window(
    num_rows: int,
    emb_dim: int,
    *,
    seed: int = 0,
    token_ids: Sequence[int] | None = None,
    token_texts: Sequence[str] | None = None,
) -> WindowEmbeddings:
    """A window with known random matrices (input = token + position, as the book adds them)
    and the given token texts (default ``tok0``, ``tok1``...)."""
    generator = torch.Generator().manual_seed(seed)
    token = torch.randn(num_rows, emb_dim, generator=generator)
    position = torch.randn(num_rows, emb_dim, generator=generator)
    ids = tuple(token_ids) if token_ids is not None else tuple(range(100, 100 + num_rows))
    texts = tuple(token_texts) if token_texts is not None else tuple(f"tok{i}" for i in ids)
    return WindowEmbeddings(
        token_ids=ids,
        token_texts=texts,
        context_length=max(num_rows, 1),
        scheme="learned",
        token_embeddings=token,
        pos_embeddings=position,
        input_embeddings=token + position,
    )


def strip_tags(label: str) -> str:
    """A tick label without the bold, coloured span posviz puts on a repeated token's row."""
    return re.sub(r'</?(b|span)( style="[^"<>]*")?>', "", label)


def words(title: str) -> str:
    """A panel title's words: its line breaks (it wraps on narrow panels) and tags gone."""
    return " ".join(re.sub(r"</?(b|sup)>", "", title).replace("<br>", " ").split())


def shipped(figure: go.Figure) -> dict[str, object]:
    """The figure as the browser receives it."""
    return dict(json.loads(pio.to_json(figure)))


def matrices(window: WindowEmbeddings) -> list[np.ndarray]:
    return [
        window.token_embeddings.numpy(),
        window.pos_embeddings.numpy(),
        window.input_embeddings.numpy(),
    ]


def test_three_heatmaps_in_book_order_with_exact_float32_values(
    decode_array: Callable[[object], np.ndarray],
) -> None:
    tables = SeededEmbeddings.create(seed=7, emb_dim=12)
    window = embed_window(tables, [464, 8278, 318, 257, 8278], context_length=8)
    texts = ["The", "␣rose", "␣is", "␣a", "␣rose"]
    assert list(window.token_texts) == texts
    data = shipped(embeddings_figure(window))["data"]

    assert [trace["type"] for trace in data] == ["heatmap"] * 3
    names = [trace["name"].lower() for trace in data]
    assert "token" in names[0] and "position" in names[1] and "input" in names[2]
    for trace, expected in zip(data, matrices(window), strict=True):
        z = decode_array(trace["z"])
        assert z.dtype == np.float32
        assert z.shape == (5, 12)
        np.testing.assert_array_equal(z, expected)
        np.testing.assert_array_equal(decode_array(trace["x"]), np.arange(12))


def test_input_panel_is_the_sum_of_the_other_two(
    decode_array: Callable[[object], np.ndarray],
) -> None:
    window = random_window(6, 10, seed=3)
    token, position, total = (
        decode_array(trace["z"]) for trace in shipped(embeddings_figure(window))["data"]
    )
    np.testing.assert_allclose(total, token + position, rtol=0, atol=1e-6)


def test_one_shared_colour_axis_symmetric_around_zero() -> None:
    window = random_window(7, 9, seed=11)
    figure = embeddings_figure(window)
    layout = figure.layout
    assert [trace.coloraxis for trace in figure.data] == ["coloraxis"] * 3
    assert not any(key.startswith("coloraxis") and key != "coloraxis" for key in layout)
    assert all(trace.showscale is not True for trace in figure.data)
    largest = max(float(np.abs(m).max()) for m in matrices(window))
    assert layout.coloraxis.cmid == 0
    assert layout.coloraxis.cmin == -layout.coloraxis.cmax
    assert layout.coloraxis.cmax == pytest.approx(largest, rel=1e-6)


def test_colour_scale_is_a_colour_blind_safe_diverging_one() -> None:
    scale = embeddings_figure(random_window(2, 3)).layout.coloraxis.colorscale
    colours = [colour for _, colour in scale]
    candidates = {name: getattr(plotly.colors.diverging, name) for name in COLOUR_BLIND_SAFE}
    candidates |= {f"{name}_r": list(reversed(c)) for name, c in candidates.items()}
    matching = [name for name, c in candidates.items() if c == colours]
    assert matching, f"colour scale {colours} is not a colour-blind-safe diverging scale"


def test_rows_are_position_dot_token_and_repeated_tokens_stay_apart() -> None:
    texts = ["A", "␣rose", "␣is", "␣a", "␣rose", "␣is", "␣a", "␣rose"]
    ids = [32, 8278, 318, 257, 8278, 318, 257, 8278]
    figure = embeddings_figure(random_window(8, 4, token_ids=ids, token_texts=texts))
    labels = [f"{position} · {text}" for position, text in enumerate(texts)]
    twins = {  # each repeated row's hover names the other rows of its token
        1: "rows 4 and 7", 4: "rows 1 and 7", 7: "rows 1 and 4",
        2: "row 5", 5: "row 2", 3: "row 6", 6: "row 3",
    }  # fmt: skip
    expected = [
        f"{label} (same token vector as {twins[row]})" if row in twins else label
        for row, label in enumerate(labels)
    ]
    for trace in figure.data:
        assert list(trace.y) == expected
        assert trace.yaxis == "y"
    assert len(set(expected)) == len(expected)
    assert figure.layout.yaxis.type == "category"
    assert figure.layout.yaxis.title.text == "position · token"
    assert [strip_tags(text) for text in figure.layout.yaxis.ticktext] == labels


def test_zoom_stays_in_step_across_panels() -> None:
    figure = embeddings_figure(random_window(3, 5))
    assert [trace.xaxis for trace in figure.data] == ["x", "x2", "x3"]
    assert figure.layout.xaxis2.matches == "x"
    assert figure.layout.xaxis3.matches == "x"
    domains = [figure.layout[axis].domain for axis in ("xaxis", "xaxis2", "xaxis3")]
    assert all(left[1] <= right[0] for left, right in itertools.pairwise(domains))


def test_small_figure_hover_names_position_token_id_dimension_and_three_values(
    decode_array: Callable[[object], np.ndarray],
) -> None:
    ids = [15496, 11, 466, 345]
    window = random_window(4, 6, seed=5, token_ids=ids)
    data = shipped(embeddings_figure(window))["data"]
    token, position, total = matrices(window)
    for trace in data:
        template = trace["hovertemplate"]
        assert "position" in template and "%{y}" in template
        assert "dimension" in template and "%{x}" in template
        assert "token id" in template
        for index in range(4):
            assert f"customdata[{index}]" in template
        custom = decode_array(trace["customdata"])
        assert custom.shape == (4, 6, 4)
        np.testing.assert_array_equal(custom[..., 0], token)
        np.testing.assert_array_equal(custom[..., 1], position)
        np.testing.assert_array_equal(custom[..., 2], total)
        np.testing.assert_array_equal(custom[..., 3], np.repeat([ids], 6, axis=0).T)


def test_large_figure_keeps_exact_values_of_the_columns_it_shows(
    decode_array: Callable[[object], np.ndarray],
) -> None:
    num_rows, emb_dim, max_cells = 5, 100, 120
    window = random_window(num_rows, emb_dim, seed=2)
    figure = embeddings_figure(window, max_cells=max_cells)
    data = shipped(figure)["data"]
    for trace, full in zip(data, matrices(window), strict=True):
        columns = decode_array(trace["x"]).astype(int)
        z = decode_array(trace["z"])
        assert z.size <= max_cells
        assert z.shape == (num_rows, len(columns))
        assert len(columns) < emb_dim and columns[0] == 0
        steps = set(np.diff(columns).tolist())
        assert len(steps) == 1, "evenly spaced dimensions"
        assert columns[-1] + steps.pop() >= emb_dim, "reaching the last dimension"
        np.testing.assert_array_equal(z, full[:, columns])
    notes = " ".join(words(a.text) for a in figure.layout.annotations)
    assert "exact" in notes and str(emb_dim) in notes


def test_unreduced_figure_does_not_claim_a_reduction() -> None:
    figure = embeddings_figure(random_window(3, 8))
    assert len(figure.layout.annotations) == 3
    assert not any("every" in a.text for a in figure.layout.annotations)


HOSTILE_TOKENS = [
    "<img␣src=x␣onerror=alert(1)>",
    "<script>alert(1)</script>",
    '<a␣href="javascript:alert(1)">x</a>',
    "<b>bold</b>",
    "<br>",
    "<sup>2</sup>",
    "<span␣style='color:red'>",
    "&amp;",
    "%{y}",
]


def _all_strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _all_strings(item)]
    if isinstance(value, list | tuple):
        return [s for item in value for s in _all_strings(item)]
    return []


@pytest.mark.parametrize(
    "num_rows",
    [pytest.param(len(HOSTILE_TOKENS), id="hover"), pytest.param(60, id="reduced-ticks")],
)
def test_user_text_is_escaped_in_every_label_hover_and_title(num_rows: int) -> None:
    texts = [HOSTILE_TOKENS[i % len(HOSTILE_TOKENS)] for i in range(num_rows)]
    window = random_window(num_rows, 4, token_texts=texts)
    figure = embeddings_figure(window, max_cells=num_rows * 2)
    spec = shipped(figure)
    spec["layout"].pop("template", None)
    for text in _all_strings(spec):
        assert "<" not in OWN_TAGS.sub("", text), text
    for trace in spec["data"]:
        unescaped = [html.unescape(label) for label in trace["y"]]
        assert unescaped == [f"{i} · {text}" for i, text in enumerate(texts)]


def test_token_texts_must_match_the_window() -> None:
    with pytest.raises(ValueError, match="2 token texts for 3 tokens"):
        random_window(3, 4, token_texts=["a", "b"])


@pytest.mark.parametrize(
    ("emb_dim", "ordinal"),
    [(100, "2nd"), (150, "3rd"), (200, "4th"), (550, "11th"), (600, "12th"), (1050, "21st")],
)
def test_reduction_note_writes_correct_ordinals(emb_dim: int, ordinal: str) -> None:
    # 5 rows x emb_dim cells in panels of at most 250 cells: every (emb_dim // 50)-th dimension
    figure = embeddings_figure(random_window(5, emb_dim), max_cells=250)
    note = f"every {ordinal} of {emb_dim} dims"
    assert all(note in words(annotation.text) for annotation in figure.layout.annotations)


@pytest.mark.parametrize(
    ("num_rows", "emb_dim"),
    [
        pytest.param(1024, 768, id="T1024-d768"),
        pytest.param(64, HOVER_CELLS // 64, id="at-hover-threshold"),
        pytest.param(1024, HOVER_CELLS // 1024, id="at-hover-threshold-T1024"),
    ],
)
def test_serialized_figure_stays_under_budget(num_rows: int, emb_dim: int) -> None:
    window = random_window(num_rows, emb_dim)
    figure = embeddings_figure(window)
    if num_rows * emb_dim == HOVER_CELLS:
        assert figure.data[0].customdata is not None, "threshold case must carry 3-way hover"
    size = len(pio.to_json(figure).encode())
    assert size <= MAX_FIGURE_JSON, f"{size:,} bytes of figure JSON"


@pytest.mark.parametrize(
    ("num_rows", "emb_dim", "lecture"),
    [
        pytest.param(9, 64, False, id="small-three-way-hover"),
        pytest.param(300, 768, True, id="reduced-lecture"),
    ],
)
def test_figure_built_without_validation_is_valid_plotly(
    num_rows: int, emb_dim: int, lecture: bool
) -> None:
    """figures.py skips plotly's per-property validation for speed: plotly must accept the
    same figure when it does validate, and ship the same JSON."""
    window = random_window(num_rows, emb_dim, token_texts=["<b>x</b>"] * num_rows)
    figure = embeddings_figure(window, lecture=lecture)
    validated = go.Figure(figure.to_dict())  # raises on any invalid property
    assert shipped(validated) == shipped(figure)


@pytest.mark.parametrize("panels", [1, 2])
def test_lecture_steps_draw_only_the_panels_shown(panels: int) -> None:
    """Hidden panels are not drawn as empty axes; colours keep the scale of all three."""
    window = random_window(4, 6, seed=9)
    full = embeddings_figure(window)
    figure = embeddings_figure(window, panels=panels)
    assert len(figure.data) == panels
    assert len(figure.layout.annotations) == panels
    axes = [key for key in figure.to_dict()["layout"] if key.startswith("xaxis")]
    assert len(axes) == panels
    assert figure.layout.coloraxis.cmax == full.layout.coloraxis.cmax
    for trace, expected in zip(figure.data, matrices(window), strict=False):
        np.testing.assert_array_equal(np.asarray(trace.z), expected)
    with pytest.raises(ValueError, match="panels"):
        embeddings_figure(window, panels=4)


def test_stacked_figure_gives_each_panel_its_own_full_width_row() -> None:
    texts = ["A", "␣rose", "␣is", "␣a", "␣rose"]
    figure = embeddings_figure(random_window(5, 8, token_texts=texts), stacked=True)
    layout = figure.layout
    assert [(t.xaxis, t.yaxis) for t in figure.data] == [("x", "y"), ("x2", "y2"), ("x3", "y3")]
    tops = [layout[name].domain for name in ("yaxis", "yaxis2", "yaxis3")]
    assert tops[0][0] > tops[1][1] and tops[1][0] > tops[2][1]
    assert all(layout[name].domain == (0.0, 1.0) for name in ("xaxis", "xaxis2", "xaxis3"))
    labels = [f"{p} · {t}" for p, t in enumerate(texts)]
    assert all(list(layout[name].tickvals) == labels for name in ("yaxis", "yaxis2", "yaxis3"))


def test_a_phone_canvas_stacks_both_figures_and_squares_the_similarity_panels() -> None:
    texts = ["A", "␣rose", "␣is", "␣a", "␣rose"]
    window = random_window(5, 8, token_texts=texts)
    phone = Canvas(width=358, height=700, window_width=390, window_height=844)
    figure = embeddings_figure(window, canvas=phone)
    assert [(t.xaxis, t.yaxis) for t in figure.data] == [("x", "y"), ("x2", "y2"), ("x3", "y3")]
    assert figure.layout.coloraxis.colorbar.orientation == "h"
    similarity = similarity_figure(window, canvas=phone).layout
    plot_width = 358 - similarity.margin.l - similarity.margin.r
    plot_height = similarity.height - similarity.margin.t - similarity.margin.b
    low, high = similarity.yaxis.domain
    assert (high - low) * plot_height == pytest.approx(plot_width, abs=1.5), "square panels"
    # The command line and the exports (no canvas) keep the side-by-side figure.
    assert embeddings_figure(window).layout.xaxis2.domain[0] > 0


# --- issue 24 item 5: the room the figures take ---------------------------------------------

ROSE_IDS = (32, 8278, 318, 257, 8278, 318, 257, 8278, 13)  # "A rose is a rose is a rose."
PHONE = Canvas(width=358, height=439, window_width=390, window_height=844)


def row_bottom_px(figure: go.Figure, row: int, rows: int) -> float:
    """px from the figure's top to the bottom of row ``row`` of a side-by-side panel, from its
    layout: top margin, then the plot's rows in order."""
    layout = figure.layout
    plot = layout.height - layout.margin.t - layout.margin.b
    return layout.margin.t + plot * (row + 1) / rows


@pytest.mark.parametrize("room", [260, 330, 420, 600], ids=lambda r: f"room-{r}px")
def test_side_by_side_the_figure_ends_at_the_windows_bottom_when_it_can(room: int) -> None:
    """At 1280 x 720 the first screen shows the rose's rows 1, 4 and 7: the figure takes the
    room to the window's bottom, never more than its own height, never so little that its
    row labels would touch."""
    window = random_window(9, 16, token_ids=ROSE_IDS)
    # The same width with no height known: the figure's own height.
    own = embeddings_figure(window, canvas=Canvas(width=1100, window_width=1280)).layout.height
    canvas = Canvas(width=1100, height=room, window_width=1280, window_height=720)
    figure = embeddings_figure(window, canvas=canvas)
    layout = figure.layout
    panel = layout.height - layout.margin.t - layout.margin.b
    every_row = 9 * 1.3 * 15  # 15-px labels 1.3 font sizes apart: each of the 9 labelled
    assert panel >= every_row - 1, "a readable panel"
    assert layout.height <= max(own, 1)
    if room - 18 >= layout.margin.t + every_row + layout.margin.b:
        assert layout.height <= room - 18, "ends at the window's bottom, less the page's gap"
    assert all(row_bottom_px(figure, row, 9) <= room for row in (1, 4, 7)), "on the first screen"
    if room >= own + 18:
        assert layout.height == own, "a window with room keeps the figure's own height"
    ticks = {strip_tags(t) for t in layout.yaxis.ticktext}
    assert {"1 · tok8278", "4 · tok8278", "7 · tok8278"} <= ticks, "the repeated rows labelled"


def test_lecture_slides_on_a_phone_take_the_height_their_panels_need() -> None:
    """A phone's lecture slide stacks the panels and no longer fills the window: the figure is
    as tall as its three panels need (taller than the 439 px left below the chart's top), and
    says so, so the page lets it scroll."""
    window = random_window(9, 16, token_ids=ROSE_IDS)
    drawn = embeddings_chart(window, lecture=True, canvas=PHONE)
    assert drawn.decisions.stacked and not drawn.decisions.fills
    layout = drawn.spec.layout
    assert layout["height"] > PHONE.height
    domains = [layout[f"yaxis{s}"]["domain"] for s in ("", "2", "3")]
    plot = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    assert all((high - low) * plot >= 190 for low, high in domains), "every panel readable"
    similarity = similarity_chart(window, lecture=True, canvas=PHONE).decisions
    assert similarity.stacked and not similarity.fills
    laptop = Canvas(width=1200, height=600, window_width=1280, window_height=800)
    assert embeddings_chart(window, lecture=True, canvas=laptop).decisions.fills
    assert similarity_chart(window, lecture=True, canvas=laptop).decisions.fills
