"""The Attention figure: one head's content part, position part, scores and attention weights
as four heatmaps side by side (two by two where four would each get less than
:data:`GRID_PANEL` px, as in a laptop's tab; one under the other on a phone), and under them
what the scheme adds to a score against the distance between query and key.

Rows are queries ``i``, columns keys ``j``, both labelled ``position · token`` with the
positions the window stands at (the shift moves them). Masked cells (``j > i``) are empty
(NaN, no hover). Each heatmap has its own colour bar under it: the position part of ALiBi at
T = 1,024 reaches hundreds while the content part stays near 1, so a shared scale would hide
one of them; the three score panels are diverging around 0, the weights sequential from 0.

Payload rules (a rerun stays under 1.5 MB of figure JSON): a window of more than
:data:`MAX_DRAWN` tokens draws every k-th row and column (exact values of the cells drawn, and
says so in the note under the titles); up to :data:`HOVER_CELLS` drawn cells every panel's hover
shows all four numbers of its cell (content + position = score → weight), above that its own.

The bias chart: ALiBi's line and T5's staircase for every head, the head shown bold, to past
the context length (shaded); for the other schemes the head's position part averaged over the
window's cells at each distance, with a band from the smallest to the largest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Final, Literal

import numpy as np
import plotly.graph_objects as go
import torch

from posviz.plots._figure import Drawn, FigureSpec, as_figure, spec_of
from posviz.plots._layout import (
    COLORSCALE_STEPS,
    PLOT_BACKGROUND,
    ROW_PITCH,
    SIDE_BY_SIDE_PANEL,
    TOOLBAR_ROOM,
    UNKNOWN,
    Canvas,
    Trace,
    TypeSizes,
    arrange,
    bar_step,
    fill_height,
    max_labels,
    panel_title,
    short_label,
    text_width,
    title_height,
    trace,
    wrap_title,
)
from posviz.plots._notes import LECTURE_SMALLEST
from posviz.plots.distance import _rgba, beyond_shade  # the Distance figure's bands and shade
from posviz.schemes import scheme
from posviz.scores import AttentionView, masked
from posviz.token_text import for_plotly

# Rows (and columns) a heatmap draws at most, every k-th above: four heatmaps of 224 x 224
# float32 cells are 0.8 MB (1.1 MB of base64 in a figure's JSON), half of them the empty
# masked cells; more rows than a panel has pixels would not be read anyway.
MAX_DRAWN: Final = 224
HOVER_CELLS: Final = 4_096  # drawn cells up to which each hover shows all four numbers
PANEL_HEIGHT: Final = 300  # px of a heatmap side by side when the canvas is not measured
LECTURE_PANEL_HEIGHT: Final = 380
PANEL_LIMITS: Final = (160, 460)  # px: a measured side-by-side heatmap is square, within these
BIAS_HEIGHT: Final = 200  # px of the bias chart
LECTURE_BIAS_HEIGHT: Final = 240
MIN_BIAS_HEIGHT: Final = 110  # px: the bias chart when a slide's window is short
LEAST_BIAS_HEIGHT: Final = 60  # px: ... and when the heatmaps need that room too
MIN_PANEL: Final = 120  # px: the heatmaps when a slide's window is short
COLORBAR_THICKNESS: Final = 12  # px of a heatmap's horizontal colour bar (under its labels)
PANEL_GAP: Final = 0.035  # side by side: the gap between two heatmaps, a fraction of the plot
# px a heatmap needs, at least, for four to stand in a row in a tab (a slide: SIDE_BY_SIDE_PANEL,
# as it must fit one screen); below it two by two, each twice as wide and tall
GRID_PANEL: Final = 200
OTHER_HEADS: Final = "#b8b8b8"  # the heads not shown, in the bias chart
# Sequential, colour-blind safe, white at 0: the weights of the masked softmax.
WEIGHT_COLORSCALE: Final = tuple(
    tuple(step) for step in go.layout.Coloraxis(colorscale="Blues").colorscale
)
_PANELS: Final = ("content", "position", "scores", "weights")


@dataclass(frozen=True)
class AttentionDecisions:
    """What :func:`attention_chart` decided, for the words beside it to read."""

    columns: int  # heatmaps in a row: 4 side by side, 2 two by two, 1 one under the other
    heads: int  # H
    head: int  # K, the head drawn
    tokens: int  # n, the window's tokens
    step: int  # every step-th row and column drawn (1: all)
    drawn: int  # rows (= columns) drawn
    hover: Literal["all", "own"]  # hover shows all four numbers of a cell, or its panel's
    start: int  # the position of the window's first token, as drawn
    formula: bool  # the bias chart shows ALiBi's or T5's formula for every head
    fills: bool = False  # a slide laid out to exactly the window's height below the chart's top
    bias_chart: bool = True  # the bias against distance is drawn under the heatmaps

    @property
    def stacked(self) -> bool:
        """The heatmaps one under the other (a phone)."""
        return self.columns == 1

    @property
    def reduced(self) -> bool:
        """Whether the heatmaps leave rows and columns out."""
        return self.step > 1


def draw_step(tokens: int, *, max_drawn: int = MAX_DRAWN) -> int:
    """Every how many rows and columns a heatmap of ``tokens`` draws: 1 up to ``max_drawn``.

    >>> draw_step(9), draw_step(224), draw_step(225), draw_step(1024)
    (1, 1, 2, 5)
    """
    return max(1, math.ceil(tokens / max_drawn))


def positions(first: int, last: int, *, noun: str = "position") -> str:
    """``"positions 3–5"``, or ``"position 3"`` for a single one (never "3–3").

    >>> positions(3, 5), positions(3, 3), positions(0, 0, noun="token")
    ('positions 3–5', 'position 3', 'token 0')
    """
    return f"{noun} {first}" if first == last else f"{noun}s {first}–{last}"


def ordinal(number: int) -> str:
    """``2nd``, ``3rd``, ``4th``, ``11th``.

    >>> ordinal(2), ordinal(4), ordinal(12)
    ('2nd', '4th', '12th')
    """
    suffix = "th" if number % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(number % 10)
    return f"{number}{suffix or 'th'}"


def slope(value: float) -> str:
    """An ALiBi slope as a reader checks it: ``1/4`` for a power of two, else 4 digits.

    >>> slope(0.25), slope(0.7071067811865476)
    ('1/4', '0.7071')
    """
    top, bottom = value.as_integer_ratio()
    return f"1/{bottom}" if top == 1 else f"{value:.4g}"


def drawn_note(decisions: AttentionDecisions) -> str:
    """What the note under the titles says about the rows left out (``""`` for none).

    >>> drawn_note(AttentionDecisions(4, 4, 0, 1024, 5, 205, "own", 0, False))
    'every 5th row and column of 1024 (exact values)'
    """
    if not decisions.reduced:
        return ""
    return f"every {ordinal(decisions.step)} row and column of {decisions.tokens} (exact values)"


@dataclass(frozen=True)
class _Ticks:
    categories: list[str]  # every drawn row's category name, shown whole in hover
    values: list[str]  # the labelled ones
    texts: list[str]  # their short labels
    width: float  # px of the widest short label


def _ticks(
    positions: list[int],
    texts: list[str],
    *,
    font_size: int,
    length: float,
    numbers: bool = False,
) -> _Ticks:
    """``position · token`` for every drawn row (positions as the window stands), and the
    evenly spaced ones that fit ``length`` px of axis, labelled (``numbers``: with their
    positions alone, upright labels spaced by their width, as a slide's columns are)."""
    categories = [f"{p} · {for_plotly(t)}" for p, t in zip(positions, texts, strict=True)]
    pitch = len(str(positions[-1])) * 0.62 + 1.2 if numbers else ROW_PITCH
    every = max(1, math.ceil(len(positions) / max_labels(length, font_size, pitch=pitch)))
    chosen = range(0, len(positions), every)
    shorts = [str(positions[i]) if numbers else short_label(positions[i], texts[i]) for i in chosen]
    width = max((text_width(label, font_size) for label in shorts), default=0.0)
    return _Ticks(
        categories, [categories[i] for i in chosen], [for_plotly(s) for s in shorts], width
    )


def _limit(matrix: np.ndarray) -> float:
    """The largest |value| of the drawn cells (1 for none), for a symmetric colour bar."""
    finite = np.abs(matrix[np.isfinite(matrix)])
    largest = float(finite.max()) if finite.size else 0.0
    return largest if largest > 0 else 1.0


def weight_cap(weights: np.ndarray) -> float:
    """The top of the weights' colour bar: the largest weight drawn, or, when a few cells
    (the first queries, which see one or two keys) hold far more than the rest, the 99th
    percentile, so the other rows keep their colours (larger cells are the darkest).

    >>> weight_cap(np.array([[1.0, np.nan], [0.5, 0.5]]))
    1.0
    """
    finite = weights[np.isfinite(weights)]
    if not finite.size:
        return 1.0
    largest, high = float(finite.max()), float(np.quantile(finite, 0.99))
    return high if 0 < high < largest / 2 else max(largest, 1e-12)


def _colorbar(
    name: str, *, cmin: float, cmax: float, title: str, x: tuple[float, float], y: float,
    sizes: TypeSizes, sequential: bool, length: float,
) -> dict[str, object]:  # fmt: skip
    """A horizontal colour bar under a heatmap (``x``: its span as a fraction of the plot's
    width, ``y``: its top as a fraction of the plot's height, ``length``: its px), with round
    ticks whose labels fit it."""
    colorbar: dict[str, object] = {
        "orientation": "h",
        "x": (x[0] + x[1]) / 2,
        "xanchor": "center",
        "len": x[1] - x[0],
        "lenmode": "fraction",
        "y": y,
        "yref": "paper",
        "yanchor": "top",
        "ypad": 0,
        "thickness": COLORBAR_THICKNESS,
        "title": {"text": title, "side": "top", "font": {"size": sizes.text}},
        "tickfont": {"size": sizes.text},
        "nticks": 3,
    }
    step = bar_step(
        cmax if sequential else max(-cmin, cmax),
        sequential=sequential,
        length=length,
        font_size=sizes.text,
    )
    if step is not None:
        colorbar |= {"tickmode": "linear", "tick0": 0.0, "dtick": step}
    axis: dict[str, object] = {
        "colorscale": WEIGHT_COLORSCALE if sequential else COLORSCALE_STEPS,
        "cmin": cmin,
        "cmax": cmax,
        "colorbar": colorbar,
    }
    if not sequential:
        axis["cmid"] = 0.0
    return {name: axis}


_LECTURE_TITLES: Final = ("content", "position part", "scores", "weights")
_BAR_TITLES: Final = ("content", "position", "score", "weight")


def _note(view: AttentionView, decisions: AttentionDecisions, *, lecture: bool) -> str:
    """The line over the panels: which head, where the window stands, what is left out."""
    start, last = view.shown.start, view.shown.start + view.shown.size - 1
    where = positions(start, last)
    parts = (
        f"head {view.head} of {view.heads} (d/H = {view.head_dim} columns)",
        where if lecture else f"query i (row) and key j (column) at {where}",
        drawn_note(decisions),
    )
    return " · ".join(part for part in parts if part)


def _titles(view: AttentionView) -> tuple[str, str, str, str]:
    return (
        "content part<br>(tokens only)",
        scheme(view.settings.scheme).titles.attention_position,
        "scores<br>q·k/√(d/H) + position",
        "attention weights<br>(softmax over j ≤ i)",
    )


def _hovertemplate(index: int, every: bool) -> str:
    """Row and column tokens, and the cell's numbers: all four (``every``) or its own."""
    head = "query: %{y}<br>key: %{x}<br>"
    if every:
        return (
            head + "content %{customdata[0]:.6g} + position %{customdata[1]:.6g}<br>"
            "= score %{customdata[2]:.6g} → weight %{customdata[3]:.6g}"
            "<extra>%{fullData.name}</extra>"
        )
    name = ("content", "position part", "score", "weight")[index]
    return head + f"{name} %{{z:.6g}}<extra>%{{fullData.name}}</extra>"


LEGEND_HEADS: Final = 4  # up to this many heads each has its legend entry
OTHER_HEADS_GROUP: Final = "other heads"  # their one entry toggles all their grey lines


def _other_heads_entry(view: AttentionView, others: list[int], common: dict[str, object]) -> Trace:
    """The legend's one entry for the grey lines of ``others`` (every head but the shown
    one), with their slopes' range where the scheme has slopes: "the other 11 heads, grey (m =
    1/4 … 1/4096)". It draws nothing; hover names each line."""
    slopes = ""
    if view.slopes:
        ends = sorted((view.slopes[head] for head in others), reverse=True)
        slopes = f" (m = {slope(ends[0])} … {slope(ends[-1])})"
    return trace(
        "scatter", x=[0], y=[None], mode="lines",  # one gap: plotly.js lists no empty trace
        name=f"the other {len(others)} heads, grey{slopes}",
        line={"color": OTHER_HEADS, "width": 1.2}, legendgroup=OTHER_HEADS_GROUP,
        showlegend=True, hoverinfo="skip", xaxis=common["xaxis"], yaxis=common["yaxis"],
    )  # fmt: skip


def _bias_traces(view: AttentionView, axes: tuple[str, str]) -> list[Trace]:
    """The bias chart's lines: every head of a formula (the shown one bold, last), or the
    shown head's mean with its band."""
    bias = view.bias
    x_ref, y_ref = axes
    spec = scheme(view.settings.scheme)
    colour = spec.colour
    common: dict[str, object] = {"x0": 0, "dx": 1, "xaxis": x_ref, "yaxis": y_ref}
    hover = "distance k = %{x}<br>%{y:.6g}<extra>%{fullData.name}</extra>"
    if bias.formula:
        shape = "linear" if spec.bias is None else spec.bias.line_shape
        traces: list[Trace] = []
        order = [h for h in bias.heads if h != view.head] + [view.head]
        named = len(order) <= LEGEND_HEADS  # each head its own legend entry, else one for all
        if not named:
            traces.append(_other_heads_entry(view, order[:-1], common))
        for head in order:
            shown = head == view.head
            label = f"head {head}" + (f" (m = {slope(view.slopes[head])})" if view.slopes else "")
            traces.append(
                trace(
                    "scatter",
                    y=bias.mean[head].numpy().astype(np.float32),
                    mode="lines",
                    name=label + (" · shown" if shown else ""),
                    line={
                        "color": colour if shown else OTHER_HEADS,
                        "width": 3 if shown else 1.2,
                        "shape": shape,
                    },
                    hovertemplate=hover,
                    showlegend=shown or named,
                    legendgroup=None if shown or named else OTHER_HEADS_GROUP,
                    **common,
                )
            )
        return traces
    mean = bias.mean[0].numpy().astype(np.float32)
    low, high = (t[0].numpy().astype(np.float32) for t in (bias.low, bias.high))
    edge: dict[str, object] = {
        "mode": "lines", "line": {"width": 0, "color": colour}, "showlegend": False,
        "hoverinfo": "skip", **common,
    }  # fmt: skip
    return [
        trace("scatter", y=low, name="smallest over i", **edge),
        trace(
            "scatter",
            y=high,
            name="largest over i",
            fill="tonexty",
            fillcolor=_rgba(colour, 0.22),
            **edge,
        ),
        trace(
            "scatter",
            y=mean,
            mode="lines",
            name=f"head {view.head}: mean over i",
            line={"color": colour, "width": 2.5},
            customdata=np.stack([low, high], axis=1),
            hovertemplate="distance k = %{x}<br>mean %{y:.6g}<br>over i: "
            "%{customdata[0]:.6g} to %{customdata[1]:.6g}<extra></extra>",
            **common,
        ),
    ]


def _span(columns: int) -> float:
    """One heatmap's share of the plot's width, ``columns`` in a row."""
    return (1 - (columns - 1) * PANEL_GAP) / columns


def _panel_width(canvas: Canvas, *, columns: int, label_width: float) -> float:
    """px of one heatmap: a measured canvas less the row labels, shared by ``columns`` in a row
    (the colour bars lie under the heatmaps, none at the right); else as posviz assumes."""
    if canvas.width is None:
        return 360.0 if columns == 1 else 220.0
    return max(canvas.width - label_width - 10 - 16, 1.0) * _span(columns)


def _columns(canvas: Canvas, *, lecture: bool, label_width: float) -> int:
    """Heatmaps in a row on a measured canvas: four while each keeps its room (in a tab
    :data:`GRID_PANEL` px, on a slide, which must fit one screen, ``SIDE_BY_SIDE_PANEL``; more
    on large screens, whose type is larger), else two by two in a tab, else one."""
    least = SIDE_BY_SIDE_PANEL * canvas.type_scale
    four = _panel_width(canvas, columns=4, label_width=label_width)
    if four >= (least if lecture else GRID_PANEL * canvas.type_scale):
        return 4
    if not lecture and _panel_width(canvas, columns=2, label_width=label_width) >= least:
        return 2
    return 1


def _bias_title(view: AttentionView) -> str:
    bias = scheme(view.settings.scheme).bias
    if bias is not None:
        return bias.title
    return f"position part against distance k = i − j, head {view.head}: mean and range over i"


@dataclass(frozen=True)
class _Bands:
    """The figure's heights in px, top to bottom: the note over the panels, the panels' titles,
    per row of heatmaps the heatmap, its column labels and its colour bar (one row side by side,
    two rows two by two, four stacked), then the bias chart's title, the chart, its ticks and its
    legend."""

    note: float
    title: float
    panel: float
    x_ticks: float
    bar: float
    bias_title: float  # 0 without the bias chart
    bias: float  # 0 without the bias chart
    bottom: float
    rows: int  # rows of heatmaps: 1 side by side, 2 two by two, 4 stacked
    fills: bool  # laid out to exactly the window's height below the chart's top (a slide)

    @property
    def per_row(self) -> float:
        """A heatmap, its column labels and its colour bar."""
        return self.panel + self.x_ticks + self.bar

    @property
    def plot(self) -> float:
        """The plot area: the rows of heatmaps (a title band between two) and the bias chart."""
        return self.rows * self.per_row + (self.rows - 1) * self.title + self.bias_title + self.bias


def _bands(
    *, lecture: bool, canvas: Canvas, columns: int, bias_chart: bool, sizes: TypeSizes,
    width: float, note: str, titles: list[str], bias_title: str, x_ticks: float,
) -> _Bands:  # fmt: skip
    """The heights for the room the chart has (see :class:`_Bands`). A lecture slide side by
    side that would not fit the window's height below its top gives the bias chart, then the
    heatmaps, what the window leaves, and then fills it exactly (:attr:`_Bands.fills`)."""
    stacked = columns == 1
    if stacked:
        panel = width if canvas.measured else 320.0
    elif canvas.measured:
        panel = min(max(width, PANEL_LIMITS[0]), PANEL_LIMITS[1])
    else:
        panel = float(LECTURE_PANEL_HEIGHT if lecture else PANEL_HEIGHT)
    note_px = (note.count("<br>") + 1) * round(sizes.text * 0.85) * 1.3 + 6
    title_px = max(title_height(title, "", sizes) for title in titles)
    bias_title_px = (bias_title.count("<br>") + 1) * sizes.text * 1.3 + 14 if bias_chart else 0.0
    bias_px = float(LECTURE_BIAS_HEIGHT if lecture else BIAS_HEIGHT) if bias_chart else 0.0
    legend = 0.0 if lecture else (3 if stacked else 1) * sizes.text * 1.5 + 8
    bottom = sizes.tick * 1.5 + sizes.text * 1.6 + 10 + legend if bias_chart else 8.0
    bar = sizes.text * 2.6 + COLORBAR_THICKNESS + 8  # its title, the bar, its tick labels
    others = note_px + title_px + x_ticks + bar + bias_title_px + bottom
    fills = False
    if lecture and columns == 4 and canvas.height is not None:  # a slide: the window's height
        available = fill_height(canvas.height)
        if others + panel + bias_px > available:
            if bias_chart:  # a third of what is left, at least MIN_BIAS_HEIGHT
                bias_px = min(bias_px, max(MIN_BIAS_HEIGHT, (available - others) / 3))
                if available - others - bias_px < MIN_PANEL:  # the heatmaps come first
                    bias_px = max(available - others - MIN_PANEL, LEAST_BIAS_HEIGHT)
            fits = available - others - bias_px
            fills = fits >= MIN_PANEL  # else a page to scroll, as on a phone
            panel = fits if fills else MIN_PANEL
    return _Bands(
        note_px, title_px, panel, x_ticks, bar, bias_title_px, bias_px, bottom,
        4 // columns, fills,
    )  # fmt: skip


def _heatmap_axes(
    index: int, *, bands: _Bands, per_row: int, columns: _Ticks, rows: _Ticks,
    sizes: TypeSizes, lecture: bool,
) -> tuple[dict[str, object], tuple[float, float], tuple[float, float], float]:  # fmt: skip
    """Heatmap ``index``'s two axes (by layout name), its x and y spans (fractions of the plot
    area) and where its colour bar's top stands; ``per_row`` heatmaps in a row, row by row."""
    suffix = "" if index == 0 else str(index + 1)
    span = _span(per_row)
    row, column = divmod(index, per_row)
    top_px = row * (bands.per_row + bands.title)
    left = column * (span + PANEL_GAP)
    x_span = (left, left + span)
    plot = bands.plot
    y_span = (1 - (top_px + bands.panel) / plot, 1 - top_px / plot)
    axes: dict[str, object] = {
        f"xaxis{suffix}": {
            "type": "category",
            "domain": list(x_span),
            "anchor": f"y{suffix}",
            "tickangle": 0 if lecture else -90,  # a slide labels positions only, upright
            "tickmode": "array",
            "tickvals": columns.values,
            "ticktext": columns.texts,
            "tickfont": {"size": sizes.tick},
            "ticks": "",
            "automargin": False,
            **({} if index == 0 else {"matches": "x"}),
        },
        f"yaxis{suffix}": {
            "type": "category",
            "autorange": "reversed",
            "domain": list(y_span),
            "anchor": f"x{suffix}",
            "tickmode": "array",
            "tickvals": rows.values,
            "ticktext": rows.texts,
            "tickfont": {"size": sizes.tick},
            "ticks": "",
            "automargin": False,
            "showticklabels": column == 0,
            **({} if index == 0 else {"matches": "y"}),
        },
    }
    return axes, x_span, y_span, 1 - (top_px + bands.panel + bands.x_ticks) / plot


def _bias_panel(
    view: AttentionView, *, bands: _Bands, title: str, sizes: TypeSizes
) -> tuple[dict[str, object], list[Trace], list[dict[str, object]]]:
    """The bias chart under the heatmaps, the whole width: its layout entries, traces and
    annotations (its title, its x axis's title, "past T" over the shaded distances)."""
    context, longest = view.settings.context_length, view.bias.distances
    top = bands.bias / bands.plot
    layout: dict[str, object] = {
        "xaxis5": {
            "domain": [0.0, 1.0], "anchor": "y5", "range": [-0.5, longest - 0.5],
            "tickfont": {"size": sizes.tick}, "zeroline": False, "gridcolor": "#e5e5e5",
            "automargin": False,
        },
        "yaxis5": {
            "domain": [0.0, top], "anchor": "x5", "tickfont": {"size": sizes.tick},
            "zerolinecolor": "#999999", "gridcolor": "#e5e5e5", "automargin": False,
        },
    }  # fmt: skip
    annotations = [
        panel_title(title, note="", x=0.5, y=top, font_size=sizes.text),
        {
            "text": "distance k = i − j", "x": 0.5, "xref": "paper", "xanchor": "center",
            "y": 0.0, "yref": "paper", "yanchor": "top", "yshift": -(sizes.tick * 1.5 + 4),
            "showarrow": False, "font": {"size": sizes.text},
        },
    ]  # fmt: skip
    if longest > context:
        layout["shapes"] = [beyond_shade(context, longest, xref="x5", yref="y5 domain")]
        annotations.append(
            {
                "text": f"past T = {context}", "x": longest - 0.5, "xref": "x5",
                "xanchor": "right", "xshift": -4, "y": 1.0, "yref": "y5 domain",
                "yanchor": "top", "showarrow": False, "font": {"size": sizes.text},
            }
        )  # fmt: skip
    return layout, _bias_traces(view, ("x5", "y5")), annotations


def attention_chart(
    view: AttentionView,
    *,
    lecture: bool = False,
    canvas: Canvas = UNKNOWN,
    stacked: bool = False,
    bias_chart: bool = True,
) -> Drawn[AttentionDecisions]:
    """The Attention figure of ``view`` and the decisions it took (see the module docstring).

    ``canvas``: the room the chart has on the page (:func:`_columns`: four in a row, two by
    two, or one under the other, each as tall as wide); with ``Canvas()``, ``stacked`` stacks
    them. ``lecture``: projector type sizes, short titles, positions alone under the columns,
    and on a measured canvas the window's height. ``bias_chart``: draw the bias against
    distance under the heatmaps.

    >>> from posviz.config import Settings
    >>> from posviz.scores import build_attention
    >>> from posviz.view import build_view
    >>> drawn = attention_chart(build_attention(build_view(Settings(scheme="alibi"))))
    >>> [t["type"] for t in drawn.spec.data][:4], drawn.decisions.drawn
    (['heatmap', 'heatmap', 'heatmap', 'heatmap'], 9)
    """
    shown = view.shown
    n = shown.size
    step = draw_step(n)
    index = torch.arange(0, n, step)  # the drawn rows and columns
    drawn = len(index)
    content, scores, weights = (
        m[index][:, index] for m in (shown.raw_content, shown.raw_scores, shown.raw_weights)
    )  # [drawn, drawn] each: only the cells drawn
    matrices = [
        masked(m, index, index).numpy().astype(np.float32)
        for m in (content, scores - content, scores, weights)
    ]  # NaN where j > i
    every = drawn * drawn <= HOVER_CELLS
    customdata = np.ascontiguousarray(np.stack(matrices, axis=-1)) if every else None
    positions = [shown.start + int(i) for i in index]
    texts = [view.token_texts[int(i)] for i in index]
    arrangement = arrange(canvas, lecture=lecture, count=4, token_texts=texts, stacked=stacked)
    sizes, label_width = arrangement.sizes, arrangement.label_width
    per_row = 1 if stacked else 4
    if canvas.measured:  # in a row while a heatmap keeps its room (no bar at the right)
        per_row = _columns(canvas, lecture=lecture, label_width=label_width)
    decisions = AttentionDecisions(
        columns=per_row, heads=view.heads, head=view.head, tokens=n, step=step, drawn=drawn,
        hover="all" if every else "own", start=shown.start, formula=view.bias.formula,
        bias_chart=bias_chart,
    )  # fmt: skip
    width = _panel_width(canvas, columns=per_row, label_width=label_width)
    full = width / _span(per_row)  # the plot's width: the note's and the bias title's
    titles = [
        wrap_title(t, width=width, font_size=sizes.title)
        for t in (_LECTURE_TITLES if lecture else _titles(view))
    ]
    note_size = (
        max(round(sizes.text * 0.85), LECTURE_SMALLEST) if lecture else round(sizes.text * 0.85)
    )
    note = wrap_title(_note(view, decisions, lecture=lecture), width=full, font_size=note_size)
    bias_title = wrap_title(_bias_title(view), width=full, font_size=sizes.text)
    columns = _ticks(positions, texts, font_size=sizes.tick, length=width, numbers=lecture)
    # upright positions on a slide: a line of them, and room for the bar's title Plotly sets
    # a little above the bar; else the widest label, turned
    x_ticks = (
        sizes.tick * 1.5 + sizes.text * 0.8 + 8 if lecture else columns.width + sizes.tick + 12
    )
    bands = _bands(
        lecture=lecture, canvas=canvas, columns=per_row, bias_chart=bias_chart, sizes=sizes,
        width=width, note=note, titles=titles, bias_title=bias_title, x_ticks=x_ticks,
    )  # fmt: skip
    decisions = replace(decisions, fills=bands.fills)
    rows = _ticks(positions, texts, font_size=sizes.tick, length=bands.panel)
    toolbar = TOOLBAR_ROOM if per_row == 1 and canvas.measured else 0
    top = toolbar + bands.note + bands.title
    layout: dict[str, object] = {
        "font": {"size": sizes.text},
        "hovermode": "closest",
        "hoverlabel": {"font": {"size": sizes.text}},
        "plot_bgcolor": PLOT_BACKGROUND,
        "height": round(top + bands.plot + bands.bottom),
        "margin": {
            "t": round(top), "b": round(bands.bottom), "l": round(rows.width + 10), "r": 16
        },
        "shapes": [],
        "showlegend": not lecture,  # a slide: the shown head is the bold line
        "legend": {
            "orientation": "h", "x": 0.0, "xanchor": "left", "y": 0.0, "yanchor": "bottom",
            "yref": "container", "font": {"size": sizes.text},
        },
    }  # fmt: skip
    annotations: list[dict[str, object]] = [
        {
            "text": note, "x": 0.5, "xref": "paper", "xanchor": "center", "y": 1.0,
            "yref": "paper", "yanchor": "bottom", "yshift": bands.title, "showarrow": False,
            "font": {"size": note_size},
        }
    ]  # fmt: skip
    traces: list[Trace] = []
    for panel, (matrix, title) in enumerate(zip(matrices, titles, strict=True)):
        axes, x_span, y_span, bar_top = _heatmap_axes(
            panel, bands=bands, per_row=per_row, columns=columns, rows=rows, sizes=sizes,
            lecture=lecture,
        )  # fmt: skip
        layout |= axes
        suffix = "" if panel == 0 else str(panel + 1)
        middle = (x_span[0] + x_span[1]) / 2
        annotations.append(
            panel_title(title, note="", x=middle, y=y_span[1], font_size=sizes.title)
        )
        sequential = panel == 3
        limit = weight_cap(matrix) if sequential else _limit(matrix)
        capped = sequential and limit != _limit(matrix)
        layout |= _colorbar(
            f"coloraxis{suffix}",
            cmin=0.0 if sequential else -limit,
            cmax=limit,
            title=f"weight (darkest: ≥ {limit:.2g})" if capped else _BAR_TITLES[panel],
            x=x_span,
            y=bar_top,
            sizes=sizes,
            sequential=sequential,
            length=width,
        )
        traces.append(
            {
                "type": "heatmap",
                "z": matrix,
                "x": columns.categories,
                "y": rows.categories,
                "coloraxis": f"coloraxis{suffix}",
                "hoverongaps": False,
                "hovertemplate": _hovertemplate(panel, every),
                **({} if customdata is None else {"customdata": customdata}),
                "xaxis": f"x{suffix}",
                "yaxis": f"y{suffix}",
                "name": _titles(view)[panel].replace("<br>", " "),
            }
        )
    if bias_chart:
        entries, lines, said = _bias_panel(view, bands=bands, title=bias_title, sizes=sizes)
        layout |= entries
        traces += lines
        annotations += said
    layout["annotations"] = annotations
    return Drawn(FigureSpec(traces, layout), decisions)


attention_spec = spec_of(attention_chart)
attention_figure = as_figure(attention_spec)
