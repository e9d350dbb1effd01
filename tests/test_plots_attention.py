"""The Attention figure as data: four heatmaps whose ``z`` are the book's numbers at the cells
drawn (tests/reference.py), masked cells empty, tick labels the decoded tokens at the positions
the window stands at, hover text, the rows left out above 224 and the payload; the bias chart;
and ``python -m posviz --view attention ... --out fig.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest
import torch
from reference import (
    book_head_attention,
    character_tokens,
    decode_array,
    get_slopes,
    token_ids,
    visible_token,
)

from posviz.cli import main
from posviz.config import Settings
from posviz.export import figure_json
from posviz.plots import Canvas
from posviz.plots.attention import MAX_DRAWN, attention_chart, attention_figure, slope
from posviz.scores import build_attention
from posviz.view import build_view

ROSE = "A rose is a rose is a rose."
PHONE = Canvas(width=358, height=700, window_width=390, window_height=844)


def long_text() -> str:
    words = ["the", "quick", "brown", "fox", "jumps", "over", "a", "rose", "is", "a", "rose"]
    return " ".join(words[i % len(words)] + ("," if i % 7 == 0 else "") for i in range(1200))


def heatmaps(figure: go.Figure) -> list[Any]:
    return [t for t in figure.data if t.type == "heatmap"]


def lines(figure: go.Figure) -> list[Any]:
    """The bias chart's drawn lines (not the legend's entry for the grey ones)."""
    return [
        t for t in figure.data if t.type == "scatter" and t.y is not None and t.y[0] is not None
    ]


@pytest.mark.parametrize("scheme", ["learned", "rope", "alibi", "t5"])
def test_heatmaps_are_the_books_numbers_with_masked_cells_empty(scheme: str) -> None:
    settings = Settings(text=ROSE, scheme=scheme, heads=4, head=2, shift=3)  # type: ignore[arg-type]
    view = build_attention(build_view(settings))
    figure = attention_figure(view)
    traces = heatmaps(figure)
    assert len(traces) == 4
    ids = token_ids(ROSE)
    scores, weights = book_head_attention(
        scheme, seed=123, emb_dim=64, context_length=16, token_ids=ids, num_heads=4, head=2, start=3
    )
    content, _ = book_head_attention(
        "none", seed=123, emb_dim=64, context_length=16, token_ids=ids, num_heads=4, head=2
    )
    n = len(ids)
    above = np.triu(np.ones((n, n), dtype=bool), 1)
    for trace, want in zip(traces, (content, scores - content, scores, weights), strict=True):
        z = np.asarray(trace.z)
        assert z.shape == (n, n) and z.dtype == np.float32
        assert np.isnan(z[above]).all()  # the masked cells: empty, not 0
        np.testing.assert_allclose(z[~above], want.numpy()[~above], rtol=1e-6, atol=1e-6)
        assert trace.hoverongaps is False
    # rows and columns: "position · token", positions 3 ... 11 as the window stands, tiktoken's
    labels = [f"{3 + i} · {visible_token(t)}" for i, t in enumerate(ids)]
    for trace in traces:
        assert list(trace.y) == labels and list(trace.x) == labels


def test_hover_names_both_tokens_and_all_four_numbers() -> None:
    view = build_attention(build_view(Settings(text=ROSE, scheme="alibi")))
    drawn = attention_chart(view)
    assert drawn.decisions.hover == "all"
    traces = heatmaps(drawn.spec.figure())
    for trace in traces:
        template = trace.hovertemplate
        assert template.startswith("query: %{y}<br>key: %{x}<br>")
        assert "content %{customdata[0]:.6g} + position %{customdata[1]:.6g}" in template
        assert "= score %{customdata[2]:.6g} → weight %{customdata[3]:.6g}" in template
        data = np.asarray(trace.customdata)
        assert data.shape == (9, 9, 4)
        # content + position = score, in every cell below the diagonal
        below = ~np.isnan(data[..., 0])
        np.testing.assert_allclose(
            (data[..., 0] + data[..., 1])[below], data[..., 2][below], rtol=1e-5, atol=1e-5
        )


def test_a_long_window_draws_every_kth_row_and_says_so() -> None:
    settings = Settings(
        text=long_text(), context_length=1024, emb_dim=96, heads=12, head=7, scheme="alibi"
    )
    view = build_attention(build_view(settings))
    drawn = attention_chart(view)
    decisions = drawn.decisions
    n = view.shown.size
    assert n == 1024
    step = -(-n // MAX_DRAWN)  # ceil, written out
    assert (decisions.step, decisions.drawn, decisions.hover) == (
        step,
        len(range(0, n, step)),
        "own",
    )
    traces = heatmaps(drawn.spec.figure())
    rows = list(range(0, n, step))
    scores = view.shown.scores.numpy()[np.ix_(rows, rows)]
    z = np.asarray(traces[2].z)
    assert z.shape == (len(rows), len(rows))
    np.testing.assert_allclose(z, scores.astype(np.float32), equal_nan=True)  # exact values
    assert (
        traces[2].hovertemplate
        == "query: %{y}<br>key: %{x}<br>score %{z:.6g}<extra>%{fullData.name}</extra>"
    )
    assert traces[2].customdata is None
    ids = token_ids(long_text())[:1024]
    assert list(traces[0].y)[:3] == [f"{p} · {visible_token(ids[p])}" for p in rows[:3]]
    note = " ".join(a["text"] for a in drawn.spec.layout["annotations"]).replace("<br>", " ")  # type: ignore[union-attr]
    assert f"every {step}th row and column of 1024 (exact values)" in note
    assert len(figure_json(drawn.spec.figure())) < 1_500_000  # the rerun budget


def test_bias_chart_alibi_every_head_the_shown_one_bold() -> None:
    view = build_attention(
        build_view(Settings(text=ROSE, emb_dim=96, heads=6, head=4, scheme="alibi"))
    )
    drawn = lines(attention_figure(view))
    assert len(drawn) == 6
    assert get_slopes(6)[4] == 0.5
    assert drawn[-1].name == "head 4 (m = 1/2) · shown" and drawn[-1].line.width == 3
    for line in drawn:
        head = int(line.name.split()[1])
        y = np.asarray(line.y)
        k = np.arange(len(y))
        np.testing.assert_allclose(y, -get_slopes(6)[head] * k, rtol=1e-6)  # float32 of -m k
        assert len(y) == 256


@pytest.mark.parametrize(("heads", "head"), [(12, 0), (12, 7), (4, 2)])
def test_the_legend_names_every_heads_line(heads: int, head: int) -> None:
    """Issue 42: with 12 ALiBi heads the legend named only the shown one. Up to 4 heads each
    has its entry; more, one entry for the grey lines with their slopes' range (the formula's
    slopes, computed here), which toggles them all."""
    view = build_attention(
        build_view(Settings(text=ROSE, emb_dim=96, heads=heads, head=head, scheme="alibi"))
    )
    figure = attention_figure(view)
    named = [t.name for t in figure.data if t.type == "scatter" and t.showlegend is not False]
    slopes = get_slopes(heads)
    if heads <= 4:
        assert len(named) == heads
        return
    others = sorted((m for h, m in enumerate(slopes) if h != head), reverse=True)
    entry = f"the other {heads - 1} heads, grey (m = {slope(others[0])} … {slope(others[-1])})"
    assert named == [entry, f"head {head} (m = {slope(slopes[head])}) · shown"], named
    grey = [t for t in lines(figure) if t.legendgroup == "other heads"]
    assert len(grey) == heads - 1 and all(t.showlegend is False for t in grey)


def test_bias_chart_t5_is_a_staircase_and_the_others_a_band() -> None:
    t5 = build_attention(build_view(Settings(text=ROSE, scheme="t5")))
    assert {line.line.shape for line in lines(attention_figure(t5))} == {"hv"}
    learned = build_attention(build_view(Settings(text=ROSE, head=1)))
    traces = lines(attention_figure(learned))
    assert [t.name for t in traces] == ["smallest over i", "largest over i", "head 1: mean over i"]
    assert traces[1].fill == "tonexty"
    np.testing.assert_allclose(np.asarray(traces[2].y), learned.bias.mean[0].numpy(), rtol=1e-6)


PROJECTOR = Canvas(width=1460, height=900, window_width=1920, window_height=1080)
TAB_1280 = Canvas(width=820, height=700, window_width=1280, window_height=800)  # its main column


@pytest.mark.parametrize(
    ("canvas", "columns"), [(PHONE, 1), (TAB_1280, 2), (PROJECTOR, 4), (Canvas(), 4)]
)
def test_panels_do_not_overlap(canvas: Canvas, columns: int) -> None:
    view = build_attention(build_view(Settings(text=ROSE, scheme="rope", shift=8)))
    drawn = attention_chart(view, canvas=canvas)
    assert drawn.decisions.columns == columns
    assert drawn.decisions.stacked is (columns == 1)
    layout = drawn.spec.layout
    boxes = [
        (layout[f"xaxis{s}"]["domain"], layout[f"yaxis{s}"]["domain"])  # type: ignore[index]
        for s in ("", "2", "3", "4", "5")
    ]
    for x, y in boxes:
        assert 0.0 <= x[0] < x[1] <= 1.0 and 0.0 <= y[0] < y[1] <= 1.0
    for a in range(5):
        for b in range(a + 1, 5):
            (xa, ya), (xb, yb) = boxes[a], boxes[b]
            apart = xa[1] <= xb[0] or xb[1] <= xa[0] or ya[1] <= yb[0] or yb[1] <= ya[0]
            assert apart, (a, b)


def _grid(layout: dict[str, Any]) -> tuple[set[tuple[float, ...]], set[tuple[float, ...]]]:
    """The four heatmaps' distinct x spans and y spans."""
    spans = [(layout[f"xaxis{s}"]["domain"], layout[f"yaxis{s}"]["domain"]) for s in HEATMAPS]
    return {tuple(x) for x, _ in spans}, {tuple(y) for _, y in spans}


HEATMAPS = ("", "2", "3", "4")


def test_a_laptops_tab_draws_the_heatmaps_two_by_two_and_its_slide_four_in_a_row() -> None:
    """Four in a row in a 1280-px window's tab would be about 160 px each: it draws two by two
    (content beside position, scores beside weights), row labels at the left of each row, each
    heatmap about twice as wide and as tall as wide; a slide, which must fit one screen, keeps
    the four in a row."""
    view = build_attention(build_view(Settings(text=ROSE)))
    layout = attention_chart(view, canvas=TAB_1280).spec.layout
    xs, ys = _grid(layout)
    assert len(xs) == 2 and len(ys) == 2
    for suffix, labelled in zip(HEATMAPS, (True, False, True, False), strict=True):
        assert layout[f"xaxis{suffix}"]["domain"][0] == (0.0 if labelled else max(x[0] for x in xs))
        assert layout[f"yaxis{suffix}"]["showticklabels"] is labelled
    plot_width = 820 - layout["margin"]["l"] - layout["margin"]["r"]
    plot_height = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    for x, y in zip(sorted(xs), sorted(ys), strict=True):
        width, height = (x[1] - x[0]) * plot_width, (y[1] - y[0]) * plot_height
        assert width > 0.45 * plot_width and abs(width - height) < 2, (width, height)
    slide = attention_chart(view, canvas=TAB_1280, lecture=True).spec.layout
    xs, ys = _grid(slide)
    assert len(xs) == 4 and len(ys) == 1


def test_the_command_line_writes_the_figure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fig.json"
    args = ["--text", ROSE, "--view", "attention", "--scheme", "alibi", "--emb-dim", "96",
            "--heads", "6", "--head", "5", "--shift", "8", "--out", str(out),
            "--lesson"]  # fmt: skip
    assert main(args) == 0
    figure = json.loads(out.read_text())  # what a reader of fig.json gets
    traces = [t for t in figure["data"] if t["type"] == "heatmap"]
    assert [t["name"] for t in traces][2:] == [
        "scores q·k/√(d/H) + position",
        "attention weights (softmax over j ≤ i)",
    ]
    assert pio.from_json(out.read_text()).data[3].type == "heatmap"
    weights = decode_array(traces[3]["z"]).astype(np.float64)
    assert weights.shape == (9, 9) and np.isnan(weights[0, 1]) and weights[0, 0] == 1.0
    assert np.allclose(np.nansum(weights, axis=1), 1.0, atol=1e-6)
    printed = capsys.readouterr().out
    assert "Moved 8 positions later (to positions 8–16), ALiBi's scores are unchanged" in printed
    assert "1/4, 1/16, 1/64, 1/256, 1/2, 1/8" in printed  # get_slopes(6), as fractions
    assert get_slopes(6) == [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--heads", "2"], "--heads: for --view attention", id="not-attention"),
        pytest.param(
            ["--view", "attention", "--heads", "6"], "heads must divide emb_dim 64", id="heads"
        ),
        pytest.param(
            ["--view", "attention", "--shift", "2000"], "shift must be from 0 to 1024", id="shift"
        ),
        pytest.param(["--view", "attention", "--head", "4"], "head must be from 0 to 3", id="head"),
    ],
)
def test_bad_attention_flags_exit_2(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as raised:
        main([*args, "--out", str(tmp_path / "fig.json")])
    assert raised.value.code == 2
    assert message in capsys.readouterr().err


def test_figure_masks_only_the_cells_it_draws() -> None:
    """The heatmaps' NaN cells are exactly the masked ones: the view's raw matrices hold every
    cell, and only j > i is left empty."""
    view = build_attention(build_view(Settings(text=ROSE, scheme="none")))
    z = np.asarray(heatmaps(attention_figure(view))[0].z)
    raw = view.shown.raw_content.numpy()
    assert not np.isnan(raw).any()
    assert np.array_equal(np.isnan(z), np.triu(np.ones_like(raw, dtype=bool), 1))
    assert torch.equal(view.shown.content.isnan(), torch.from_numpy(np.isnan(z)))


@pytest.mark.parametrize(
    ("text", "window"),
    [
        pytest.param("I love pizza 🍕🍕 and pizza loves me 😀", 0, id="emoji-cut-at-the-end"),
        pytest.param("東京は日本の首都です。東京", 1, id="cjk-starts-inside-a-character"),
    ],
)
def test_rows_and_hover_name_split_characters_as_the_chips(text: str, window: int) -> None:
    """The issue's texts at T = 8: the rows, columns and hover say "🍕 (1 of 3)" and
    "本 (2 of 2)", as the chips do, read in the whole text (tests/reference.py), not the
    tokens' loose bytes ("\\xf0\\x9f", "\\x8d")."""
    view = build_attention(build_view(Settings(text=text, context_length=8, window=window)))
    names = character_tokens(text)[8 * window : 8 * window + 8]
    assert view.token_texts == tuple(names)
    labels = [f"{position} · {name}" for position, name in enumerate(names)]
    for trace in heatmaps(attention_figure(view)):
        assert list(trace.y) == labels and list(trace.x) == labels
        assert trace.hovertemplate.startswith("query: %{y}<br>key: %{x}<br>")
    assert not any("\\x" in label for label in labels)
