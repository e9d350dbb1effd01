"""The Attention figure: one head's content part, position part, scores and attention weights
as four heatmaps side by side (one under the other on a phone), and under them what the scheme
adds to a score against the distance between query and key.

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
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np
import plotly.graph_objects as go
import torch

from posviz.config import Scheme
from posviz.plots._figure import Drawn, FigureSpec, as_figure
from posviz.plots._layout import (
    COLORSCALE_STEPS,
    PLOT_BACKGROUND,
    TABLE_COLOURS,
    TOOLBAR_ROOM,
    UNKNOWN,
    Canvas,
    Trace,
    TypeSizes,
    arrange,
    colorbar_step,
    max_labels,
    panel_title,
    short_label,
    text_width,
    title_height,
    trace,
    wrap_title,
)
from posviz.plots.distance import BEYOND_FILL, _rgba  # the Distance figure's shade and bands
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
COLORBAR_BAND: Final = 62  # px under a heatmap's tick labels for its horizontal colour bar
OTHER_HEADS: Final = "#b8b8b8"  # the heads not shown, in the bias chart
# The Geometry and Distance figures' colour of each scheme, and two more of Okabe & Ito's.
SCHEME_COLOURS: Final[dict[str, str]] = {**TABLE_COLOURS, "alibi": "#D55E00", "t5": "#56B4E9"}
# Sequential, colour-blind safe, white at 0: the weights of the masked softmax.
WEIGHT_COLORSCALE: Final = tuple(
    tuple(step) for step in go.layout.Coloraxis(colorscale="Blues").colorscale
)
_PANELS: Final = ("content", "position", "scores", "weights")
_POSITION_TITLES: Final[dict[Scheme, str]] = {
    "learned": "position part<br>(rows added)",
    "sinusoidal": "position part<br>(sin/cos added)",
    "none": "position part<br>(none: zeros)",
    "rope": "position part<br>(rotation)",
    "alibi": "position part<br>= −m·(i − j)",
    "t5": "position part<br>= E[bucket(j − i)]",
}


@dataclass(frozen=True)
class AttentionDecisions:
    """What :func:`attention_chart` decided, for the words beside it to read."""

    stacked: bool  # the heatmaps one under the other (a phone), else side by side
    heads: int  # H
    head: int  # K, the head drawn
    tokens: int  # n, the window's tokens
    step: int  # every step-th row and column drawn (1: all)
    drawn: int  # rows (= columns) drawn
    hover: Literal["all", "own"]  # hover shows all four numbers of a cell, or its panel's
    start: int  # the position of the window's first token, as drawn
    formula: bool  # the bias chart shows ALiBi's or T5's formula for every head

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

    >>> drawn_note(AttentionDecisions(False, 4, 0, 1024, 5, 205, "own", 0, False))
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


def _ticks(positions: list[int], texts: list[str], *, font_size: int, length: float) -> _Ticks:
    """``position · token`` for every drawn row (positions as the window stands), and the
    evenly spaced ones that fit ``length`` px of axis, labelled."""
    categories = [f"{p} · {for_plotly(t)}" for p, t in zip(positions, texts, strict=True)]
    every = max(1, math.ceil(len(positions) / max_labels(length, font_size)))
    chosen = range(0, len(positions), every)
    shorts = [short_label(positions[i], texts[i]) for i in chosen]
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
    sizes: TypeSizes, sequential: bool,
) -> dict[str, object]:  # fmt: skip
    """A horizontal colour bar under a heatmap (``x``: its span as a fraction of the plot's
    width, ``y``: its top as a fraction of the plot's height), 3 to 5 round ticks."""
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
        "thickness": 12,
        "title": {"text": title, "side": "top", "font": {"size": sizes.text}},
        "tickfont": {"size": sizes.text},
        "nticks": 3,
    }
    step = colorbar_step(cmax if sequential else max(-cmin, cmax))
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


def _titles(view: AttentionView) -> tuple[str, str, str, str]:
    return (
        "content part<br>(tokens only)",
        _POSITION_TITLES[view.settings.scheme],
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


def _bias_traces(view: AttentionView, axes: tuple[str, str]) -> list[Trace]:
    """The bias chart's lines: every head of a formula (the shown one bold, last), or the
    shown head's mean with its band."""
    bias = view.bias
    x_ref, y_ref = axes
    colour = SCHEME_COLOURS[view.settings.scheme]
    common: dict[str, object] = {"x0": 0, "dx": 1, "xaxis": x_ref, "yaxis": y_ref}
    hover = "distance k = %{x}<br>%{y:.6g}<extra>%{fullData.name}</extra>"
    if bias.formula:
        shape = "hv" if view.settings.scheme == "t5" else "linear"
        traces: list[Trace] = []
        order = [h for h in bias.heads if h != view.head] + [view.head]
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
                    showlegend=shown or len(order) <= 4,
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


def _bias_title(view: AttentionView) -> str:
    scheme = view.settings.scheme
    if scheme == "alibi":
        return "ALiBi's bias against distance k = i − j, every head"
    if scheme == "t5":
        return "T5's bias against distance k = i − j, every head (seeded init)"
    return f"position part against distance k = i − j, head {view.head}: mean and range over i"


def attention_chart(
    view: AttentionView, *, lecture: bool = False, canvas: Canvas = UNKNOWN, stacked: bool = False
) -> Drawn[AttentionDecisions]:
    """The Attention figure of ``view`` and the decisions it took (see the module docstring).

    ``canvas``: the room the chart has on the page (narrow: the heatmaps one under the other,
    each as tall as wide); with ``Canvas()``, ``stacked`` stacks them. ``lecture``: projector
    type sizes.

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
    sizes, stacked = arrangement.sizes, arrangement.stacked
    decisions = AttentionDecisions(
        stacked=stacked,
        heads=view.heads,
        head=view.head,
        tokens=n,
        step=step,
        drawn=drawn,
        hover="all" if every else "own",
        start=shown.start,
        formula=view.bias.formula,
    )
    # px sizes: a heatmap, its title band, its column labels (upright) and its colour bar
    width = arrangement.panel_width if canvas.measured else (360.0 if stacked else 220.0)
    if stacked:
        panel = width if canvas.measured else 320.0
    elif canvas.measured:
        panel = min(max(width, PANEL_LIMITS[0]), PANEL_LIMITS[1])
    else:
        panel = float(LECTURE_PANEL_HEIGHT if lecture else PANEL_HEIGHT)
    titles = [wrap_title(t, width=width, font_size=sizes.title) for t in _titles(view)]
    # one line over all four panels: which head, where the window stands, what is left out
    last = shown.start + n - 1
    note_size = round(sizes.text * 0.85)
    note = wrap_title(
        " · ".join(
            part
            for part in (
                f"head {view.head} of {view.heads} (d/H = {view.head_dim} columns)",
                f"query i (row) and key j (column) at positions {shown.start}–{last}",
                drawn_note(decisions),
            )
            if part
        ),
        width=width * (1 if stacked else 4),
        font_size=note_size,
    ).replace("<b>", "")
    note_px = (note.count("<br>") + 1) * note_size * 1.3 + 6
    title_px = max(title_height(title, "", sizes) for title in titles)
    columns = _ticks(positions, texts, font_size=sizes.tick, length=width)
    rows = _ticks(positions, texts, font_size=sizes.tick, length=panel)
    x_ticks_px = columns.width + sizes.tick + 12  # the widest label, upright
    bar_px = COLORBAR_BAND * canvas.type_scale
    bias_title = wrap_title(
        _bias_title(view), width=width * (1 if stacked else 4), font_size=sizes.text
    )
    bias_title_px = (bias_title.count("<br>") + 1) * sizes.text * 1.3 + 14
    bias_px = float(LECTURE_BIAS_HEIGHT if lecture else BIAS_HEIGHT)
    bias_ticks_px = sizes.tick * 1.5 + sizes.text * 1.6 + 10
    legend_px = (3 if stacked else 1) * sizes.text * 1.5 + 8
    # top to bottom, in px of the plot area: [title, heatmap, ticks, bar] per row of heatmaps
    # (4 rows stacked, 1 side by side), then the bias chart's title band and the chart
    per_band = panel + x_ticks_px + bar_px
    heat_rows = 4 if stacked else 1
    plot = heat_rows * per_band + (heat_rows - 1) * title_px + bias_title_px + bias_px
    toolbar = TOOLBAR_ROOM if stacked and canvas.measured else 0
    top, bottom = toolbar + note_px + title_px, bias_ticks_px + legend_px
    left = rows.width + 10
    right = 16.0
    layout: dict[str, object] = {
        "font": {"size": sizes.text},
        "hovermode": "closest",
        "hoverlabel": {"font": {"size": sizes.text}},
        "plot_bgcolor": PLOT_BACKGROUND,
        "height": round(top + plot + bottom),
        "margin": {"t": round(top), "b": round(bottom), "l": round(left), "r": round(right)},
        "annotations": [],
        "shapes": [],
        "legend": {
            "orientation": "h", "x": 0.0, "xanchor": "left", "y": 0.0, "yanchor": "bottom",
            "yref": "container", "font": {"size": sizes.text},
        },
    }  # fmt: skip
    annotations: list[dict[str, object]] = []
    traces: list[Trace] = []
    gap = 0.035
    span = (1 - 3 * gap) / 4
    for panel_index, (matrix, title) in enumerate(zip(matrices, titles, strict=True)):
        suffix = "" if panel_index == 0 else str(panel_index + 1)
        if stacked:
            top_px = panel_index * (per_band + title_px)
            x_span = (0.0, 1.0)
        else:
            top_px = 0.0
            start = panel_index * (span + gap)
            x_span = (start, start + span)
        y_span = (1 - (top_px + panel) / plot, 1 - top_px / plot)
        layout[f"xaxis{suffix}"] = {
            "type": "category",
            "domain": list(x_span),
            "anchor": f"y{suffix}",
            "tickangle": -90,
            "tickmode": "array",
            "tickvals": columns.values,
            "ticktext": columns.texts,
            "tickfont": {"size": sizes.tick},
            "automargin": False,
            **({} if panel_index == 0 else {"matches": "x"}),
        }
        layout[f"yaxis{suffix}"] = {
            "type": "category",
            "autorange": "reversed",
            "domain": list(y_span),
            "anchor": f"x{suffix}",
            "tickmode": "array",
            "tickvals": rows.values,
            "ticktext": rows.texts,
            "tickfont": {"size": sizes.tick},
            "automargin": False,
            "showticklabels": stacked or panel_index == 0,
            **({} if panel_index == 0 else {"matches": "y"}),
        }
        annotations.append(
            panel_title(
                title,
                note="",
                x=(x_span[0] + x_span[1]) / 2,
                y=y_span[1],
                font_size=sizes.title,
            )
        )
        sequential = panel_index == 3
        limit = weight_cap(matrix) if sequential else _limit(matrix)
        bar_top = 1 - (top_px + panel + x_ticks_px) / plot
        layout |= _colorbar(
            f"coloraxis{suffix}",
            cmin=0.0 if sequential else -limit,
            cmax=limit,
            title=("weight" if limit == _limit(matrix) else f"weight (darkest: ≥ {limit:.2g})")
            if sequential
            else ("content", "position", "score")[panel_index],
            x=x_span,
            y=bar_top,
            sizes=sizes,
            sequential=sequential,
        )
        traces.append(
            {
                "type": "heatmap",
                "z": matrix,
                "x": columns.categories,
                "y": rows.categories,
                "coloraxis": f"coloraxis{suffix}",
                "hoverongaps": False,
                "hovertemplate": _hovertemplate(panel_index, every),
                **({} if customdata is None else {"customdata": customdata}),
                "xaxis": f"x{suffix}",
                "yaxis": f"y{suffix}",
                "name": title.replace("<br>", " "),
            }
        )
    # the bias chart, under the heatmaps, the whole width
    bias = view.bias
    context = view.settings.context_length
    longest = bias.distances
    layout["xaxis5"] = {
        "domain": [0.0, 1.0],
        "anchor": "y5",
        "range": [-0.5, longest - 0.5],
        "tickfont": {"size": sizes.tick},
        "zeroline": False,
        "gridcolor": "#e5e5e5",
        "automargin": False,
    }
    layout["yaxis5"] = {
        "domain": [0.0, bias_px / plot],
        "anchor": "x5",
        "tickfont": {"size": sizes.tick},
        "zerolinecolor": "#999999",
        "gridcolor": "#e5e5e5",
        "automargin": False,
    }
    traces += _bias_traces(view, ("x5", "y5"))
    annotations.append(
        panel_title(
            bias_title,
            note="",
            x=0.5,
            y=bias_px / plot,
            font_size=sizes.text,
        )
    )
    annotations.append(
        {
            "text": "distance k = i − j", "x": 0.5, "xref": "paper", "xanchor": "center",
            "y": 0.0, "yref": "paper", "yanchor": "top", "yshift": -(sizes.tick * 1.5 + 4),
            "showarrow": False, "font": {"size": sizes.text},
        }
    )  # fmt: skip
    if longest > context:
        layout["shapes"] = [
            {
                "type": "rect", "xref": "x5", "yref": "y5 domain", "x0": context - 0.5,
                "x1": longest - 0.5, "y0": 0, "y1": 1, "fillcolor": BEYOND_FILL,
                "line": {"width": 0}, "layer": "below",
            }
        ]  # fmt: skip
        annotations.append(
            {
                "text": f"past T = {context}", "x": longest - 0.5, "xref": "x5",
                "xanchor": "right", "xshift": -4, "y": 1.0, "yref": "y5 domain",
                "yanchor": "top", "showarrow": False, "font": {"size": sizes.text},
            }
        )  # fmt: skip
    annotations.append(
        {
            "text": note, "x": 0.5, "xref": "paper", "xanchor": "center", "y": 1.0,
            "yref": "paper", "yanchor": "bottom", "yshift": title_px, "showarrow": False,
            "font": {"size": note_size},
        }
    )  # fmt: skip
    layout["annotations"] = annotations
    return Drawn(FigureSpec(traces, layout), decisions)


def attention_spec(
    view: AttentionView, *, lecture: bool = False, canvas: Canvas = UNKNOWN, stacked: bool = False
) -> FigureSpec:
    """:func:`attention_chart`'s figure, without its decisions."""
    return attention_chart(view, lecture=lecture, canvas=canvas, stacked=stacked).spec


attention_figure = as_figure(attention_spec)
