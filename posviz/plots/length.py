"""The Length figure: train short, test long (a :class:`~posviz.training.length_view.LengthView`).

Panels, top to bottom (each as wide as the chart; the two score panels side by side unless the
chart is narrow):

1. ``loss``: the mean held-out loss at each position for an input of L, 2L and 4L tokens, one
   panel each on one position axis (0 … 4L − 1), one line per scheme chosen in its colour,
   RoPE with the extension dashed; a dotted line marks the trained length L. A learned table
   ends at L: past it an annotation names torch's ``IndexError``. Each point is the mean of
   :data:`SMOOTH` positions (one position over a few hundred windows is noisy);
2. ``wavelengths``: each RoPE pair's wavelength ``2π/θⱼ`` (log scale) before the extension
   (grey) and after it, coloured by what it did to the pair (kept, blended, divided), with L₀
   and 4L marked;
3. ``scores``: the settings' sentence moved past L, one head's scores under RoPE as trained and
   with the extension, on one diverging colour scale.

>>> from posviz.config import Settings
>>> from posviz.training.length_view import build_length
>>> drawn = length_chart(build_length(Settings()))
>>> drawn.decisions.panels
('loss', 'wavelengths', 'scores')
>>> sorted({t["name"] for t in drawn.spec.data if t.get("legendgroup")})[:3]
['ALiBi', 'Learned', 'None']
>>> drawn.decisions.ended
('learned',)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import plotly.graph_objects as go

from posviz.plots._figure import Drawn, FigureSpec
from posviz.plots._layout import (
    COLORSCALE_STEPS,
    NARROWEST_CHART,
    TOOLBAR_ROOM,
    UNKNOWN,
    Canvas,
    Trace,
    TypeSizes,
    bar_step,
    panel_title,
    text_width,
    title_height,
    trace,
    type_sizes,
    wrap_title,
)
from posviz.plots._notes import panel_note
from posviz.token_text import for_plotly
from posviz.training.length_view import LengthView

PANELS: Final = ("loss", "wavelengths", "scores")
SMOOTH: Final = 8  # each point of a loss line: the mean of this many positions, p − 7 … p
LOSS_HEIGHT: Final = 190  # px of each loss panel (lecture: more)
WAVE_HEIGHT: Final = 260
SCORE_HEIGHT: Final = 300
STACK_BELOW: Final = 700  # px of chart width under which the score panels stack
MARGIN_RIGHT: Final = 16
BEFORE_COLOUR: Final = "#888888"
TREATMENT_COLOURS: Final = {"kept": "#0072B2", "blended": "#CC79A7", "divided": "#D55E00"}
MARK_COLOUR: Final = "#444444"


@dataclass(frozen=True)
class LengthDecisions:
    """What :func:`length_chart` decided, for the words beside it to read."""

    stacked: bool  # the score panels one under the other (a phone)
    panels: tuple[str, ...]  # in reading order
    schemes: tuple[str, ...]  # the schemes drawn, in order
    ended: tuple[str, ...]  # the schemes whose table ended at L (annotated past it)
    extension: bool  # RoPE with the extension drawn (the run read it)
    loss_range: tuple[float, float]  # the loss axes' range


@dataclass(frozen=True)
class _Band:
    """One row of panels: their names, titles, notes, the plot's px and the px under it."""

    names: tuple[str, ...]
    titles: tuple[str, ...]
    notes: tuple[str, ...]
    plot: float
    below: float


def _loss_range(view: LengthView) -> tuple[float, float]:
    values = [
        smoothed(r.position_loss.numpy())
        for c in view.curves
        for r in c.readings
        if r.position_loss.numel() > SMOOTH
    ]
    values += [smoothed(r.position_loss.numpy()) for r in view.extension.readings]
    if not values:
        return (0.0, 10.0)
    joined = np.concatenate(values)
    return (float(np.floor(joined.min() * 10) / 10 - 0.1), float(np.ceil(joined.max() * 10) / 10))


def _axes(
    number: int,
    x: tuple[float, float],
    y: tuple[float, float],
    titles: tuple[str, str],
    sizes: TypeSizes,
) -> tuple[dict[str, dict[str, object]], tuple[str, str]]:
    suffix = "" if number == 1 else str(number)
    names, refs = (f"xaxis{suffix}", f"yaxis{suffix}"), (f"x{suffix}", f"y{suffix}")

    def axis(domain: tuple[float, float], anchor: str, title: str) -> dict[str, object]:
        return {
            "domain": list(domain), "anchor": anchor,
            "title": {"text": title, "standoff": 4, "font": {"size": sizes.text}},
            "tickfont": {"size": sizes.tick}, "automargin": False, "zeroline": False,
            "linecolor": "#444444", "gridcolor": "#e5e5e5",
        }  # fmt: skip

    layout = {names[0]: axis(x, refs[1], titles[0]), names[1]: axis(y, refs[0], titles[1])}
    return layout, refs


def smoothed(values: np.ndarray) -> np.ndarray:
    """The mean of the :data:`SMOOTH` positions ``p − SMOOTH + 1 … p`` at each ``p`` from
    ``SMOOTH − 1`` on (float64): one position's loss over a few hundred windows is noisy.

    >>> smoothed(np.arange(10.0))
    array([3.5, 4.5, 5.5])
    """
    return np.convolve(values.astype(np.float64), np.ones(SMOOTH) / SMOOTH, mode="valid")


def _line(
    values: np.ndarray, name: str, refs: tuple[str, str], colour: str, *, dash: str, legend: bool
) -> Trace:
    mean = smoothed(values)
    return trace(
        "scatter", x=np.arange(SMOOTH - 1, len(values)), y=mean.astype(np.float32), xaxis=refs[0],
        yaxis=refs[1], mode="lines", name=name, legendgroup=name, showlegend=legend,
        line={"color": colour, "width": 2, "dash": dash},
        hovertemplate=f"{for_plotly(name)}<br>positions %{{x}} − {SMOOTH - 1}<br>"
        "mean loss %{y:.2f}<extra></extra>",
    )  # fmt: skip


def _vertical(x: float, refs: tuple[str, str]) -> dict[str, object]:
    return {
        "type": "line", "xref": refs[0], "yref": f"{refs[1]} domain", "x0": x, "x1": x,
        "y0": 0, "y1": 1, "line": {"color": MARK_COLOUR, "width": 1.5, "dash": "dot"},
    }  # fmt: skip


def _horizontal(y: float, refs: tuple[str, str]) -> dict[str, object]:
    return {
        "type": "line", "xref": f"{refs[0]} domain", "yref": refs[1], "x0": 0, "x1": 1,
        "y0": y, "y1": y, "line": {"color": MARK_COLOUR, "width": 1.5, "dash": "dot"},
    }  # fmt: skip


def _note(
    text: str, x: float, y: float, refs: tuple[str, str], size: int, **where: object
) -> dict[str, object]:
    return {
        "text": text, "x": x, "y": y, "xref": refs[0], "yref": refs[1], "showarrow": False,
        "font": {"size": size, "color": MARK_COLOUR}, "bgcolor": "rgba(255,255,255,0.85)",
        **where,
    }  # fmt: skip


def _score_bar(
    limit: float, top: float, share: float, plot_width: float, sizes: TypeSizes
) -> dict[str, object]:
    """A horizontal colour bar ``share`` of the plot wide, its top at paper height ``top``,
    ticks at a round step whose labels fit beside its title (:func:`bar_step`)."""
    bar: dict[str, object] = {
        "orientation": "h", "x": 0.5, "xanchor": "center", "len": share, "lenmode": "fraction",
        "y": top, "yanchor": "top", "thickness": 14, "tickfont": {"size": sizes.text},
        "tickangle": 0, "ticklabelposition": "outside right",
        "title": {"text": "score", "side": "right", "font": {"size": sizes.text}},
    }  # fmt: skip
    room = plot_width * share - text_width("score", sizes.text) - 2 * sizes.text
    step = bar_step(limit, sequential=False, length=room, font_size=sizes.text)
    if step is not None:
        bar |= {"tickmode": "linear", "tick0": 0.0, "dtick": step}
    return bar


def _legend_height(names: Sequence[str], sizes: TypeSizes, *, chart: float) -> float:
    rows, used = 1, 0.0
    for name in names:
        width = text_width(name, sizes.text) + 40 + sizes.text
        if used and used + width > chart:
            rows, used = rows + 1, 0.0
        used += width
    return rows * sizes.text * 1.5 + 10


def _scheme_name(label: str) -> str:
    return label.split(" (")[0]


def length_chart(
    view: LengthView,
    *,
    lecture: bool = False,
    canvas: Canvas = UNKNOWN,
    panels: Sequence[str] | None = None,
) -> Drawn[LengthDecisions]:
    """The Length figure for ``view`` (see the module docstring) and its decisions.

    ``canvas``: the room the chart has (narrow: the score panels stacked); ``lecture``:
    projector type sizes; ``panels``: draw only these of :data:`PANELS`.
    """
    if panels is not None and not set(panels) <= set(PANELS):
        raise ValueError(
            f"panels must be among {', '.join(PANELS)}, got {', '.join(map(repr, panels))}"
        )
    chosen = PANELS if panels is None else tuple(p for p in PANELS if p in panels)
    if not chosen:
        raise ValueError("no panel to draw: name at least one of " + ", ".join(PANELS))
    sizes = type_sizes(lecture=lecture, canvas=canvas)
    chart = float(canvas.width or NARROWEST_CHART)
    stacked = canvas.width is not None and canvas.width < STACK_BELOW * canvas.type_scale
    if canvas.width is None:
        chart = float(NARROWEST_CHART)
    left = sizes.tick * 2.4 + sizes.text * 1.6 + 12
    plot_width = max(chart - left - MARGIN_RIGHT, 100.0)
    gap = left / plot_width
    half = plot_width if stacked else plot_width * (1 - gap) / 2
    scale = 1.25 if lecture else 1.0
    L, longest = view.context_length, view.longest
    ticks = sizes.tick * 1.4 + sizes.text * 1.6 + 14
    bar = 14 + sizes.text * 1.5 + 14
    ext = view.extension

    bands: list[_Band] = []
    if "loss" in chosen:
        for length in view.lengths:
            bands.append(
                _Band(
                    (f"loss-{length}",),
                    (f"held-out loss by position, input of {length} tokens",),
                    (f"trained on L\u00a0=\u00a0{L}; each point the mean of {SMOOTH} positions",),
                    LOSS_HEIGHT * scale,
                    ticks,
                )
            )
    if "wavelengths" in chosen:
        bands.append(
            _Band(
                ("wavelengths",),
                (f"RoPE's wavelengths 2π/θⱼ before and with {ext.label}",),
                (f"head dimension {view.head_dim}: {view.head_dim // 2} pairs, fastest first",),
                WAVE_HEIGHT * scale,
                ticks,
            )
        )
    if "scores" in chosen:
        plain = view.attention_plain
        where = f"positions {plain.shown.start}–{plain.shift_test.last_position}"
        titles = (f"RoPE as trained, {where}", f"with {ext.label}, {where}")
        notes = (f"head {plain.head} of {plain.heads}", "the same head")
        height = max(SCORE_HEIGHT * scale, min(half, 520.0)) if stacked else SCORE_HEIGHT * scale
        rows = [
            (("scores-plain",), titles[:1], notes[:1]),
            (("scores-extended",), titles[1:], notes[1:]),
        ]
        if stacked:
            bands += [_Band(*row, height, ticks + (bar if i else 0)) for i, row in enumerate(rows)]
        else:
            bands.append(
                _Band(("scores-plain", "scores-extended"), titles, notes, height, ticks + bar)
            )

    column = {1: plot_width, 2: half}
    wrapped = [
        [
            (
                wrap_title(for_plotly(t), width=column[len(b.names)], font_size=sizes.title),
                panel_note(
                    for_plotly(nt),
                    width=column[len(b.names)],
                    font_size=sizes.text,
                    lecture=lecture,
                ),
            )
            for t, nt in zip(b.titles, b.notes, strict=True)
        ]
        for b in bands
    ]
    title_px = [max(title_height(t, nt, sizes) for t, nt in w) for w in wrapped]
    legend_names = [_scheme_name(c.spec.label) for c in view.curves]
    if ext.in_runs and view.rope is not None:
        legend_names.append(f"RoPE + {ext.label}")
    if "wavelengths" in chosen:
        legend_names += ["before", "kept", "blended", "divided"]
    legend = (
        _legend_height(legend_names, sizes, chart=chart)
        if "loss" in chosen or "wavelengths" in chosen
        else 0.0
    )
    top_margin = title_px[0] + (TOOLBAR_ROOM if stacked else 0)
    plot_height = (
        sum(t + b.plot + b.below for t, b in zip(title_px, bands, strict=True)) - title_px[0]
    )
    layout: dict[str, object] = {
        "font": {"size": sizes.text},
        "hoverlabel": {"font": {"size": sizes.text}},
        "hovermode": "closest",
        "plot_bgcolor": "#ffffff",
        "showlegend": legend > 0,
        "legend": {"orientation": "h", "x": 0.0, "y": 0.0, "xanchor": "left",
                   "yanchor": "bottom", "yref": "container", "font": {"size": sizes.text},
                   "tracegroupgap": 0},
        "annotations": [],
        "shapes": [],
        "margin": {"t": round(top_margin), "b": round(legend + 6), "l": round(left),
                   "r": MARGIN_RIGHT},
        "height": round(top_margin + plot_height + legend + 6),
    }  # fmt: skip
    annotations: list[dict[str, object]] = layout["annotations"]  # type: ignore[assignment]
    shapes: list[dict[str, object]] = layout["shapes"]  # type: ignore[assignment]
    spans = {1: [(0.0, 1.0)], 2: [(0.0, (1 - gap) / 2), ((1 + gap) / 2, 1.0)]}
    traces: list[Trace] = []
    loss_range = _loss_range(view)
    legend_seen: set[str] = set()
    ended: list[str] = []
    number = 0
    top = -title_px[0]
    score_limit = max(
        float(np.nanmax(np.abs(a.shown.scores.numpy())))
        for a in (view.attention_plain, view.attention_extended)
    )
    for band, title, pairs in zip(bands, title_px, wrapped, strict=True):
        top += title
        high, low = 1 - top / plot_height, 1 - (top + band.plot) / plot_height
        top += band.plot + band.below
        y = (max(low, 0.0), min(high, 1.0))
        for name, x, (heading, note) in zip(band.names, spans[len(band.names)], pairs, strict=True):
            annotations.append(
                panel_title(heading, note=note, x=sum(x) / 2, y=high, font_size=sizes.title)
            )
            number += 1
            if name.startswith("loss-"):
                length = int(name.removeprefix("loss-"))
                axes, refs = _axes(number, x, y, ("position", "loss"), sizes)
                axes[f"xaxis{'' if number == 1 else number}"]["range"] = [-1, longest]
                axes[f"yaxis{'' if number == 1 else number}"]["range"] = list(loss_range)
                layout |= axes
                for curves in view.curves:
                    reading = next(r for r in curves.readings if r.length == length)
                    label = _scheme_name(curves.spec.label)
                    if reading.error:
                        if curves.spec.name not in ended:
                            ended.append(curves.spec.name)
                        room = plot_width * (1 - (L + longest * 0.02) / longest) - 12
                        words = f"{label} ends at {L}: {reading.error}"
                        annotations.append(_note(
                            wrap_title(for_plotly(words), width=room, font_size=sizes.text),
                            L + longest * 0.02, 0.92, (refs[0], f"{refs[1]} domain"), sizes.text,
                            xanchor="left", yanchor="top",
                        ))  # fmt: skip
                        continue
                    traces.append(
                        _line(
                            reading.position_loss.numpy(),
                            label,
                            refs,
                            curves.spec.colour,
                            dash="solid",
                            legend=label not in legend_seen,
                        )
                    )
                    legend_seen.add(label)
                    if curves.spec.rotation is not None and ext.in_runs:
                        extended = next(r for r in ext.readings if r.length == length)
                        name_ext = f"RoPE + {ext.label}"
                        traces.append(
                            _line(
                                extended.position_loss.numpy(),
                                name_ext,
                                refs,
                                curves.spec.colour,
                                dash="dash",
                                legend=name_ext not in legend_seen,
                            )
                        )
                        legend_seen.add(name_ext)
                shapes.append(_vertical(L - 0.5, refs))
                annotations.append(_note(
                    f"L\u00a0=\u00a0{L}", L + longest * 0.01, 0.04, (refs[0], f"{refs[1]} domain"),
                    sizes.text, xanchor="left", yanchor="bottom",
                ))  # fmt: skip
            elif name == "wavelengths":
                axes, refs = _axes(
                    number, x, y, ("frequency pair j", "wavelength (positions)"), sizes
                )
                axes[f"yaxis{'' if number == 1 else number}"] |= {"type": "log", "dtick": 1}
                layout |= axes
                facts = view.frequencies
                pairs_j = np.array([p.pair for p in facts.pairs])
                before = np.array(facts.wavelengths(after=False), dtype=np.float64)
                traces.append(trace(
                    "scatter", x=pairs_j, y=before, xaxis=refs[0], yaxis=refs[1],
                    mode="lines+markers", name="before", legendgroup="before",
                    line={"color": BEFORE_COLOUR, "width": 1.5}, marker={"size": 7},
                    hovertemplate="pair %{x}<br>wavelength %{y:,.1f}<extra>before</extra>",
                ))  # fmt: skip
                for treatment, colour in TREATMENT_COLOURS.items():
                    chosen_pairs = [p for p in facts.pairs if p.treatment == treatment]
                    traces.append(trace(
                        "scatter", x=np.array([p.pair for p in chosen_pairs]),
                        y=np.array([p.wavelength_after for p in chosen_pairs]),
                        xaxis=refs[0], yaxis=refs[1], mode="markers", name=treatment,
                        legendgroup=treatment, marker={"color": colour, "size": 10},
                        customdata=np.array([p.divisor for p in chosen_pairs]),
                        hovertemplate=f"pair %{{x}}<br>wavelength %{{y:,.1f}}<br>{treatment}: "
                        "÷ %{customdata:.3g}<extra></extra>",
                    ))  # fmt: skip
                for mark, words in (
                    (L, f"L₀\u00a0=\u00a0{L}"),
                    (longest, f"4L\u00a0=\u00a0{longest}"),
                ):
                    shapes.append(_horizontal(mark, refs))
                    annotations.append(_note(
                        words, 0.0, math.log10(mark), (f"{refs[0]} domain", refs[1]), sizes.text,
                        xanchor="left", yanchor="bottom",
                    ))  # fmt: skip
            else:
                attention = (
                    view.attention_plain if name == "scores-plain" else view.attention_extended
                )
                axes, refs = _axes(number, x, y, ("key", "query"), sizes)
                axes[f"yaxis{'' if number == 1 else number}"]["autorange"] = "reversed"
                layout |= axes
                start = attention.shown.start
                labels = [f"{start + i}" for i in range(attention.shown.size)]
                texts = [for_plotly(t) for t in attention.token_texts]
                traces.append(trace(
                    "heatmap", z=attention.shown.scores.numpy().astype(np.float32),
                    x=labels, y=labels, xaxis=refs[0], yaxis=refs[1], coloraxis="coloraxis",
                    customdata=np.array([[texts[i]] * len(texts) for i in range(len(texts))]),
                    name=name, hovertemplate="query %{y} (%{customdata})<br>key %{x}"
                    "<br>score %{z:.3f}<extra></extra>",
                ))  # fmt: skip
                if (
                    name == "scores-extended"
                ):  # one colour scale, its bar under the last score panel
                    layout["coloraxis"] = {
                        "colorscale": COLORSCALE_STEPS, "cmid": 0.0, "cmin": -score_limit,
                        "cmax": score_limit,
                        "colorbar": _score_bar(score_limit, low - ticks / plot_height,
                                               0.9 if stacked else 0.6, plot_width, sizes),
                    }  # fmt: skip
    decisions = LengthDecisions(
        stacked=stacked,
        panels=tuple(p for p in PANELS if p in chosen),
        schemes=tuple(c.spec.name for c in view.curves),
        ended=tuple(ended),
        extension=ext.in_runs and view.rope is not None and "loss" in chosen,
        loss_range=loss_range,
    )
    return Drawn(FigureSpec(traces, layout), decisions)


def length_figure(
    view: LengthView, *, lecture: bool = False, canvas: Canvas = UNKNOWN
) -> go.Figure:
    """:func:`length_chart`'s figure as ``go.Figure`` (the command line's and the notebook's)."""
    return length_chart(view, lecture=lecture, canvas=canvas).spec.figure()
