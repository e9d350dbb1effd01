"""The Distance & length figure: mean cosine similarity of positions ``i`` and ``i + k``
against the distance ``k``, one line per scheme with a band from the smallest to the largest
cosine over ``i``, and the distances past the context length shaded.

Each scheme has its colour (:func:`~posviz.plots._layout.table_colour`) and its name in the
legend; clicking a name hides its line and band together. Hover on a line shows the distance,
the mean and the band. Payload: three float32 values per distance per scheme (the x values are
``x0``/``dx``): about 0.1 MB of JSON at T = 1024 with 256 positions past it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from posviz.distance import DistanceCurve, DistanceView
from posviz.plots._figure import Drawn, FigureSpec, as_figure
from posviz.plots._layout import (
    TOOLBAR_ROOM,
    UNKNOWN,
    Canvas,
    Trace,
    narrow,
    table_colour,
    trace,
    type_sizes,
)
from posviz.token_text import for_plotly

PLOT_HEIGHT: Final = 420  # px of the plot (lecture mode: the page decides)
LECTURE_PLOT_HEIGHT: Final = 480
BEYOND_FILL: Final = "rgba(0, 0, 0, 0.07)"  # the shaded distances past the context length


def beyond_shade(context: int, longest: int, *, xref: str, yref: str) -> dict[str, object]:
    """The shade behind the distances past the context length (``context`` ... ``longest - 1``)
    on the x axis ``xref``, as high as ``yref`` (the Distance figure's and the Attention
    figure's bias chart's)."""
    return {
        "type": "rect", "xref": xref, "yref": yref, "x0": context - 0.5, "x1": longest - 0.5,
        "y0": 0, "y1": 1, "fillcolor": BEYOND_FILL, "line": {"width": 0}, "layer": "below",
    }  # fmt: skip


def _rgba(colour: str, alpha: float) -> str:
    """``#RRGGBB`` as ``rgba(r, g, b, alpha)``.

    >>> _rgba("#0072B2", 0.2)
    'rgba(0, 114, 178, 0.2)'
    """
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red}, {green}, {blue}, {alpha})"


def _traces(curve: DistanceCurve) -> list[Trace]:
    """The band (two invisible edges, the upper one filled down to the lower) and the line."""
    colour = table_colour(curve.scheme, trained=curve.trained)
    label = for_plotly(curve.label)
    mean = curve.mean.numpy().astype(np.float32)  # [P]
    low = curve.low.numpy().astype(np.float32)
    high = curve.high.numpy().astype(np.float32)
    edge: dict[str, object] = {
        "x0": 0,
        "dx": 1,
        "mode": "lines",
        "line": {"width": 0, "color": colour},
        "legendgroup": label,
        "showlegend": False,
        "hoverinfo": "skip",
    }
    return [
        trace("scatter", y=low, name=f"{label}: smallest over i", **edge),
        trace(
            "scatter",
            y=high,
            name=f"{label}: largest over i",
            fill="tonexty",
            fillcolor=_rgba(colour, 0.22),
            **edge,
        ),
        trace(
            "scatter",
            y=mean,
            x0=0,
            dx=1,
            mode="lines",
            name=label,
            legendgroup=label,
            line={"color": colour, "width": 2.5},
            customdata=np.stack([low, high], axis=1),  # [P, 2]
            hovertemplate="distance k = %{x}<br>mean cosine %{y:.4f}<br>over i: "
            f"%{{customdata[0]:.4f}} to %{{customdata[1]:.4f}}<extra>{label}</extra>",
        ),
    ]


@dataclass(frozen=True)
class DistanceDecisions:
    """What :func:`distance_chart` drew."""

    stacked: bool  # a phone's layout: the legend in one row per scheme
    curves: tuple[str, ...]  # the labels of the lines drawn, in order
    distances: int  # distances k drawn: 0 .. distances - 1
    context_length: int  # T: distances from T on are shaded (past the context length)
    fills: bool  # the figure takes the window's height below its top

    @property
    def shaded(self) -> bool:
        """Whether the figure shades distances past the context length."""
        return self.distances > self.context_length


def distance_chart(
    view: DistanceView, *, lecture: bool = False, stacked: bool = False, canvas: Canvas = UNKNOWN
) -> Drawn[DistanceDecisions]:
    """:func:`distance_spec`'s figure (stacked on a narrow ``canvas``, see
    :func:`~posviz.plots._layout.narrow`; with ``Canvas()``, when ``stacked``) and what it
    decided.

    >>> from posviz.config import Settings
    >>> from posviz.distance import build_distance
    >>> from posviz.view import build_view
    >>> shown = build_distance(build_view(Settings(context_length=16, emb_dim=8)), beyond=4)
    >>> decisions = distance_chart(shown).decisions
    >>> decisions.distances, decisions.shaded, decisions.stacked
    (20, True, False)
    """
    if canvas.measured:
        stacked = narrow(canvas)
    spec = distance_spec(view, lecture=lecture, stacked=stacked)
    decisions = DistanceDecisions(
        stacked=stacked,
        curves=tuple(curve.label for curve in view.curves),
        distances=max(curve.distances for curve in view.curves),
        context_length=view.context_length,
        fills=lecture and not stacked,
    )
    return Drawn(spec, decisions)


def distance_spec(
    view: DistanceView, *, lecture: bool = False, stacked: bool = False
) -> FigureSpec:
    """One line and band per scheme (``stacked``: a phone's narrower layout, the legend in
    more rows); distances ``k ≥ T`` past the context length are shaded and labelled."""
    sizes = type_sizes(lecture=lecture)
    traces: list[Trace] = []
    for curve in view.curves:
        traces += _traces(curve)
    context = view.context_length
    longest = max(curve.distances for curve in view.curves)
    legend_rows = len(view.curves) if stacked else 2
    legend = legend_rows * sizes.text * 1.5 + 10
    ticks = sizes.tick * 1.4 + sizes.text * 1.6 + 14
    top = 12 + (TOOLBAR_ROOM if stacked else 0)  # a phone always shows the chart toolbar
    plot = LECTURE_PLOT_HEIGHT if lecture else (300 if stacked else PLOT_HEIGHT)
    layout: dict[str, object] = {
        "font": {"size": sizes.text},
        "hoverlabel": {"font": {"size": sizes.text}},
        "hovermode": "closest",
        "plot_bgcolor": "#ffffff",
        "xaxis": {
            "tickfont": {"size": sizes.tick},
            "range": [-0.5, longest - 0.5],
            "zeroline": False,
            "gridcolor": "#e5e5e5",
            "linecolor": "#444444",
            "automargin": False,
        },
        "yaxis": {
            "title": {
                "text": "cosine of positions i and i + k",
                "standoff": 4,
                "font": {"size": sizes.text},
            },
            "tickfont": {"size": sizes.tick},
            "range": [-1.05, 1.05],
            "zerolinecolor": "#999999",
            "gridcolor": "#e5e5e5",
            "linecolor": "#444444",
            "automargin": False,
        },
        "legend": {
            "orientation": "v" if stacked else "h",
            "x": 0.0,
            "xanchor": "left",
            "y": 0.0,
            "yanchor": "bottom",
            "yref": "container",
            "font": {"size": sizes.text},
            "tracegroupgap": 0,  # each scheme is a group: no gap between their rows
        },
        "margin": {
            "t": top,
            "b": round(ticks + legend),
            "l": round(sizes.tick * 2.6 + sizes.text * 1.6 + 16),
            "r": 16,
        },
        "height": round(top + plot + ticks + legend),
        "shapes": [],
        # The x axis's title, placed under its tick labels here (without automargin plotly
        # would set it at a fixed offset that a 15-px tick label can touch).
        "annotations": [
            {
                "text": "distance k", "x": 0.5, "xref": "paper", "xanchor": "center", "y": 0.0,
                "yref": "paper", "yanchor": "top", "yshift": -(sizes.tick * 1.5 + 6),
                "showarrow": False, "font": {"size": sizes.text},
            }
        ],
    }  # fmt: skip
    if longest > context:
        layout["shapes"] = [beyond_shade(context, longest, xref="x", yref="paper")]
        layout["annotations"] += [  # type: ignore[operator]
            {
                "text": f"past T = {context}", "x": longest - 0.5, "xref": "x",
                "xanchor": "right", "xshift": -4, "y": 0.0, "yref": "paper", "yanchor": "bottom",
                "yshift": 4, "showarrow": False, "font": {"size": sizes.text},
            }
        ]  # fmt: skip
    return FigureSpec(traces, layout)


distance_figure = as_figure(distance_spec)
