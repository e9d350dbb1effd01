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
from dataclasses import dataclass, replace
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
    banded_layout,
    bar_step,
    fill_height,
    legend_height,
    panel_title,
    text_width,
    title_height,
    trace,
    type_sizes,
    wrap_title,
    xy_axes,
)
from posviz.plots._notes import panel_note
from posviz.scores import AttentionView
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
    lengths: tuple[int, ...]  # the input lengths whose loss panels are drawn
    schemes: tuple[str, ...]  # the schemes drawn, in order
    ended: tuple[str, ...]  # the schemes whose table ended at L (annotated past it)
    extension: bool  # RoPE with the extension drawn (the run read it)
    loss_range: tuple[float, float]  # the loss axes' range
    fills: bool  # a slide on a measured canvas: the figure is as tall as the window leaves


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


NOTE_TOP: Final = 0.98  # where a loss panel's notes start (the panel's height is 1)


def note_band(lines: int, font_px: float, plot_px: float) -> float:
    """The share of a loss panel's height its notes take from :data:`NOTE_TOP` down, with a
    line's height of 1.3 font sizes and room below (``lines`` lines of ``font_px``).

    >>> round(note_band(2, 20, 400), 3)  # 0.02 + (2 · 26 + 10) / 400
    0.175
    """
    return (1 - NOTE_TOP) + (lines * 1.3 * font_px + 10) / plot_px


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


def _scheme_name(label: str) -> str:
    return label.split(" (")[0]


@dataclass
class _Panel:
    """Where one panel is drawn: its axes' names and references, its paper domains, and the
    figure's lists it adds to."""

    number: int  # its axes' number: xaxis{number}, 1 for the first ("xaxis")
    x: tuple[float, float]
    y: tuple[float, float]
    traces: list[Trace]
    annotations: list[dict[str, object]]
    shapes: list[dict[str, object]]

    @property
    def names(self) -> tuple[str, str]:
        suffix = "" if self.number == 1 else str(self.number)
        return f"xaxis{suffix}", f"yaxis{suffix}"

    @property
    def refs(self) -> tuple[str, str]:
        suffix = "" if self.number == 1 else str(self.number)
        return f"x{suffix}", f"y{suffix}"

    @property
    def domain(self) -> tuple[str, str]:
        """References to the x axis and to the y axis's domain (0 bottom, 1 top)."""
        return self.refs[0], f"{self.refs[1]} domain"


@dataclass(frozen=True)
class _Room:
    """What every panel reads: the type sizes, the plot's width, the chart's widths, the loss
    axes' range (every loss panel's, computed once)."""

    sizes: TypeSizes
    plot_width: float
    stacked: bool
    loss_range: tuple[float, float]


def _loss_panel(
    view: LengthView,
    length: int,
    panel: _Panel,
    room: _Room,
    *,
    seen: set[str],
    plot_px: float,
) -> tuple[dict[str, dict[str, object]], list[str]]:
    """One input length's loss by position: a line per scheme (RoPE with the extension
    dashed), the trained length marked, a table that ends annotated with torch's words in a
    band of its own above the curves (``plot_px``: the panel's height). Its axes and the
    schemes that ended."""
    sizes, L, longest, ext = room.sizes, view.context_length, view.longest, view.extension
    axes = xy_axes(panel.x, panel.y, panel.names, ("position", "loss"), sizes)
    axes[panel.names[0]]["range"] = [-1, longest]
    low, high = room.loss_range
    axes[panel.names[1]]["range"] = [low, high]
    ended: list[str] = []
    note_lines = 0
    for curves in view.curves:
        reading = next(r for r in curves.readings if r.length == length)
        label = _scheme_name(curves.spec.label)
        if reading.error:
            ended.append(curves.spec.name)
            width = room.plot_width * (1 - (L + longest * 0.02) / longest) - 12
            said = f"{label} ends at {L}: {reading.error}"
            words = wrap_title(for_plotly(said), width=width, font_size=sizes.text)
            if words.count("<br>") > 1:  # a narrow plot: the error's name only
                said = f"{label} ends at {L}: {reading.error.partition(':')[0]}"
                words = wrap_title(for_plotly(said), width=width, font_size=sizes.text)
            panel.annotations.append(
                _note(words, L + longest * 0.02, NOTE_TOP, panel.domain, sizes.text,
                      xanchor="left", yanchor="top")
            )  # fmt: skip
            note_lines += words.count("<br>") + 1
            continue
        lines = [(reading, label, "solid")]
        if curves.spec.rotation is not None and ext.in_runs:
            extended = next(r for r in ext.readings if r.length == length)
            lines.append((extended, f"{label} + {ext.label}", "dash"))
        for shown, name, dash in lines:
            values = shown.position_loss.numpy()
            colour = curves.spec.colour
            panel.traces.append(
                _line(values, name, panel.refs, colour, dash=dash, legend=name not in seen)
            )
            seen.add(name)
    if note_lines:  # the curves stay under the notes: the axis rises by the notes' height
        share = min(note_band(note_lines, sizes.text, plot_px), 0.5)
        axes[panel.names[1]]["range"] = [low, low + (high - low) / (1 - share)]
    panel.shapes.append(_vertical(L - 0.5, panel.refs))
    panel.annotations.append(
        _note(f"L\u00a0=\u00a0{L}", L + longest * 0.01, 0.04, panel.domain, sizes.text,
              xanchor="left", yanchor="bottom")
    )  # fmt: skip
    return axes, ended


def _wavelength_panel(view: LengthView, panel: _Panel, room: _Room) -> dict[str, dict[str, object]]:
    """Each pair's wavelength before the extension and after it, by what it did to the pair,
    on a log axis with L₀ and 4L marked."""
    sizes, L, longest = room.sizes, view.context_length, view.longest
    titles = ("frequency pair j", "wavelength (positions)")
    axes = xy_axes(panel.x, panel.y, panel.names, titles, sizes)
    axes[panel.names[1]] |= {"type": "log", "dtick": 1}
    facts = view.frequencies
    panel.traces.append(trace(
        "scatter", x=np.array([p.pair for p in facts.pairs]),
        y=np.array(facts.wavelengths(after=False), dtype=np.float64), xaxis=panel.refs[0],
        yaxis=panel.refs[1], mode="lines+markers", name="before", legendgroup="before",
        line={"color": BEFORE_COLOUR, "width": 1.5}, marker={"size": 7},
        hovertemplate="pair %{x}<br>wavelength %{y:,.1f}<extra>before</extra>",
    ))  # fmt: skip
    for treatment, colour in TREATMENT_COLOURS.items():
        pairs = [p for p in facts.pairs if p.treatment == treatment]
        panel.traces.append(trace(
            "scatter", x=np.array([p.pair for p in pairs]),
            y=np.array([p.wavelength_after for p in pairs]), xaxis=panel.refs[0],
            yaxis=panel.refs[1], mode="markers", name=treatment, legendgroup=treatment,
            marker={"color": colour, "size": 10},
            customdata=np.array([p.divisor for p in pairs]),
            hovertemplate=f"pair %{{x}}<br>wavelength %{{y:,.1f}}<br>{treatment}: "
            "÷ %{customdata:.3g}<extra></extra>",
        ))  # fmt: skip
    for mark, words in ((L, f"L₀\u00a0=\u00a0{L}"), (longest, f"4L\u00a0=\u00a0{longest}")):
        panel.shapes.append(_horizontal(mark, panel.refs))
        panel.annotations.append(
            _note(words, 0.0, math.log10(mark), (f"{panel.refs[0]} domain", panel.refs[1]),
                  sizes.text, xanchor="left", yanchor="bottom")
        )  # fmt: skip
    return axes


def _score_panel(
    attention: AttentionView, name: str, panel: _Panel, room: _Room
) -> dict[str, dict[str, object]]:
    """One head's scores of the sentence past L (masked cells empty), on the figure's one
    colour axis."""
    axes = xy_axes(panel.x, panel.y, panel.names, ("key", "query"), room.sizes, reversed_y=True)
    start = attention.shown.start
    labels = [f"{start + i}" for i in range(attention.shown.size)]
    texts = [for_plotly(t) for t in attention.token_texts]
    panel.traces.append(trace(
        "heatmap", z=attention.shown.scores.numpy().astype(np.float32), x=labels, y=labels,
        xaxis=panel.refs[0], yaxis=panel.refs[1], coloraxis="coloraxis",
        customdata=np.array([[text] * len(texts) for text in texts]), name=name,
        hovertemplate="query %{y} (%{customdata})<br>key %{x}<br>score %{z:.3f}"
        "<extra></extra>",
    ))  # fmt: skip
    return axes


def _bands(
    view: LengthView,
    chosen: Sequence[str],
    room: _Room,
    *,
    lecture: bool,
    lengths: Sequence[int],
) -> list[_Band]:
    """The rows of panels, top to bottom, with their titles, notes and heights."""
    sizes, L, ext = room.sizes, view.context_length, view.extension
    scale = 1.25 if lecture else 1.0
    ticks = sizes.tick * 1.4 + sizes.text * 1.6 + 14
    bar = 14 + sizes.text * 1.5 + 14
    bands: list[_Band] = []
    if "loss" in chosen:
        note = f"trained on L\u00a0=\u00a0{L}; each point the mean of {SMOOTH} positions"
        bands += [
            _Band((f"loss-{length}",), (f"held-out loss by position, input of {length} tokens",),
                  (note,), LOSS_HEIGHT * scale, ticks)
            for length in lengths
        ]  # fmt: skip
    if "wavelengths" in chosen:
        pairs = f"head dimension {view.head_dim}: {view.head_dim // 2} pairs, fastest first"
        title = f"RoPE's wavelengths 2π/θⱼ before and with {ext.label}"
        bands.append(_Band(("wavelengths",), (title,), (pairs,), WAVE_HEIGHT * scale, ticks))
    plain = view.attention_plain
    if "scores" in chosen and plain is not None:
        where = f"positions {plain.shown.start}–{plain.shift_test.last_position}"
        titles = (f"RoPE as trained, {where}", f"with {ext.label}, {where}")
        notes = (f"head {plain.head} of {plain.heads}", "the same head")
        names = ("scores-plain", "scores-extended")
        if room.stacked:
            height = max(SCORE_HEIGHT * scale, min(room.plot_width, 520.0))
            bands += [
                _Band(names[i : i + 1], titles[i : i + 1], notes[i : i + 1], height,
                      ticks + (bar if i else 0))
                for i in range(2)
            ]  # fmt: skip
        else:
            bands.append(_Band(names, titles, notes, SCORE_HEIGHT * scale, ticks + bar))
    return bands


def _legend_names(view: LengthView, chosen: Sequence[str]) -> list[str]:
    names = []
    if "loss" in chosen:
        names += [_scheme_name(c.spec.label) for c in view.curves]
        rotating = [c.spec for c in view.curves if c.spec.rotation is not None]
        if view.extension.in_runs and rotating:
            names.append(f"{_scheme_name(rotating[0].label)} + {view.extension.label}")
    if "wavelengths" in chosen:
        names += ["before", *TREATMENT_COLOURS]
    return names


def length_chart(
    view: LengthView,
    *,
    lecture: bool = False,
    canvas: Canvas = UNKNOWN,
    panels: Sequence[str] | None = None,
    lengths: Sequence[int] | None = None,
) -> Drawn[LengthDecisions]:
    """The Length figure for ``view`` (see the module docstring) and its decisions.

    ``canvas``: the room the chart has (narrow: the score panels stacked); ``lecture``:
    projector type sizes; ``panels``: draw only these of :data:`PANELS`; ``lengths``: the
    input lengths whose loss panels to draw (default: every one read, L, 2L and 4L).

    >>> from posviz.config import Settings
    >>> from posviz.training.length_view import build_length
    >>> drawn = length_chart(build_length(Settings()), panels=["loss"], lengths=[256])
    >>> drawn.decisions.lengths, len(drawn.spec.layout["annotations"])  # title, learned, L
    ((256,), 3)
    """
    shown_lengths = tuple(view.lengths if lengths is None else lengths)
    if not set(shown_lengths) <= set(view.lengths):
        raise ValueError(
            f"lengths must be among {', '.join(map(str, view.lengths))}, got {shown_lengths}"
        )
    if panels is not None and not set(panels) <= set(PANELS):
        raise ValueError(
            f"panels must be among {', '.join(PANELS)}, got {', '.join(map(repr, panels))}"
        )
    chosen = PANELS if panels is None else tuple(p for p in PANELS if p in panels)
    if view.attention_plain is None or view.attention_extended is None:  # a blank text
        chosen = tuple(p for p in chosen if p != "scores")
    if not chosen:
        raise ValueError("no panel to draw: name at least one of " + ", ".join(PANELS))
    sizes = type_sizes(lecture=lecture, canvas=canvas)
    chart = float(canvas.width or NARROWEST_CHART)
    stacked = canvas.width is not None and canvas.width < STACK_BELOW * canvas.type_scale
    left = sizes.tick * 2.4 + sizes.text * 1.6 + 12
    plot_width = max(chart - left - MARGIN_RIGHT, 100.0)
    gap = left / plot_width
    room = _Room(sizes, plot_width, stacked, _loss_range(view))
    bands = _bands(view, chosen, room, lecture=lecture, lengths=shown_lengths)
    column = {1: plot_width, 2: plot_width if stacked else plot_width * (1 - gap) / 2}
    wrapped = [
        [
            (
                wrap_title(for_plotly(title), width=column[len(b.names)], font_size=sizes.title),
                panel_note(
                    for_plotly(note),
                    width=column[len(b.names)],
                    font_size=sizes.text,
                    lecture=lecture,
                ),
            )
            for title, note in zip(b.titles, b.notes, strict=True)
        ]
        for b in bands
    ]
    title_px = [max(title_height(t, n, sizes) for t, n in w) for w in wrapped]
    legend = legend_height(_legend_names(view, chosen), sizes, chart=chart)
    # A slide fills the window's height (unless stacked: a phone's page scrolls).
    fills = lecture and canvas.height is not None and not stacked
    if fills and canvas.height is not None:
        fixed = sum(t + b.below for t, b in zip(title_px, bands, strict=True)) + legend + 6
        scale = max((fill_height(canvas.height) - fixed) / sum(b.plot for b in bands), 0.25)
        bands = [replace(b, plot=b.plot * scale) for b in bands]
    top_margin = title_px[0] + (TOOLBAR_ROOM if stacked else 0)
    plot_height = sum(t + b.plot + b.below for t, b in zip(title_px, bands, strict=True))
    plot_height -= title_px[0]
    layout = banded_layout(
        sizes, top=top_margin, plot_height=plot_height, legend=legend, left=left,
        right=MARGIN_RIGHT,
    )  # fmt: skip
    annotations: list[dict[str, object]] = layout["annotations"]  # type: ignore[assignment]
    shapes: list[dict[str, object]] = layout["shapes"]  # type: ignore[assignment]
    traces: list[Trace] = []
    spans = {1: [(0.0, 1.0)], 2: [(0.0, (1 - gap) / 2), ((1 + gap) / 2, 1.0)]}
    scored = [a for a in (view.attention_plain, view.attention_extended) if a is not None]
    score_limit = max((float(np.nanmax(np.abs(a.shown.scores.numpy()))) for a in scored),
                      default=1.0)  # fmt: skip
    seen: set[str] = set()
    ended: list[str] = []
    number, top = 0, -title_px[0]
    for band, title, pairs in zip(bands, title_px, wrapped, strict=True):
        top += title
        high, low = 1 - top / plot_height, 1 - (top + band.plot) / plot_height
        top += band.plot + band.below
        for name, x, (heading, note) in zip(band.names, spans[len(band.names)], pairs, strict=True):
            annotations.append(
                panel_title(heading, note=note, x=sum(x) / 2, y=high, font_size=sizes.title)
            )
            number += 1
            panel = _Panel(number, x, (max(low, 0.0), min(high, 1.0)), traces, annotations, shapes)
            if name.startswith("loss-"):
                axes, gone = _loss_panel(
                    view, int(name.removeprefix("loss-")), panel, room, seen=seen,
                    plot_px=band.plot,
                )  # fmt: skip
                ended += [scheme for scheme in gone if scheme not in ended]
            elif name == "wavelengths":
                axes = _wavelength_panel(view, panel, room)
            else:
                axes = _score_panel(scored[name == "scores-extended"], name, panel, room)
            layout |= axes
        if band.names[-1] == "scores-extended":  # one colour scale, its bar under the last
            ticks = band.below - (14 + sizes.text * 1.5 + 14)
            share = 0.9 if stacked else 0.6
            bar_top = low - ticks / plot_height
            layout["coloraxis"] = {
                "colorscale": COLORSCALE_STEPS, "cmid": 0.0, "cmin": -score_limit,
                "cmax": score_limit,
                "colorbar": _score_bar(score_limit, bar_top, share, plot_width, sizes),
            }  # fmt: skip
    decisions = LengthDecisions(
        stacked=stacked,
        panels=chosen,
        lengths=shown_lengths if "loss" in chosen else (),
        schemes=tuple(c.spec.name for c in view.curves),
        ended=tuple(ended),
        extension=view.extension.in_runs and "loss" in chosen
        and any(c.spec.rotation for c in view.curves),
        loss_range=room.loss_range,
        fills=fills,
    )  # fmt: skip
    return Drawn(FigureSpec(traces, layout), decisions)


def length_figure(
    view: LengthView, *, lecture: bool = False, canvas: Canvas = UNKNOWN
) -> go.Figure:
    """:func:`length_chart`'s figure as ``go.Figure`` (the command line's and the notebook's)."""
    return length_chart(view, lecture=lecture, canvas=canvas).spec.figure()
