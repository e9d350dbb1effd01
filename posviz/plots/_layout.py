"""The layout both three-panel figures share (embeddings and similarity): where the panels go,
their titles, the position axis, the colour bars, type sizes and margins.

Two arrangements:

* side by side (``stacked=False``): the panels in one row sharing the position axis on the
  left, the colour bar on the right: screens from 1024 px wide up, and projectors;
* stacked (``stacked=True``): one panel under the other, each the full width with its own
  position labels: phones. Plotly lays a figure out once for the size it is given and the
  server is not told the window's width, so the app chooses (see ``app.py``).

Margins are computed here, not by Plotly's ``automargin``: automargin measures every tick
label in the browser and then lays the whole figure out again, which was about half of
plotly.js's drawing time for posviz's figures. posviz knows its labels, so it estimates their
width generously from their characters, shortens long tokens in the tick labels (hover keeps
them whole), and leaves room for the colour bars so that Plotly never has to push a margin.

>>> wrap_title("positional embeddings<br>(learned)", width=150, font_size=17)
'positional<br>embeddings<br>(learned)'
>>> wrap_title("positional embeddings<br>(learned)", width=250, font_size=17)
'positional embeddings<br>(learned)'
>>> short_label(3, "␣indivisibility")
'3 · ␣indivisibi…'
"""

from __future__ import annotations

import bisect
import math
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import plotly.graph_objects as go

from posviz.token_text import for_plotly

COLORSCALE: Final = "RdBu_r"  # ColorBrewer RdBu: diverging, colour-blind safe; red = positive
# COLORSCALE as the [position, colour] steps plotly's validation would expand it to (once).
COLORSCALE_STEPS: Final = tuple(
    tuple(step) for step in go.layout.Coloraxis(colorscale=COLORSCALE).colorscale
)
# One colour per positional table in the Geometry and Distance figures (Okabe & Ito's
# colour-blind-safe palette), the same in both.
TABLE_COLOURS: Final = {
    "learned": "#E69F00",  # orange: the book's random init
    "gpt2": "#CC79A7",  # reddish purple: GPT-2's trained table
    "sinusoidal": "#0072B2",  # blue
    "rope": "#009E73",  # bluish green
    "none": "#000000",
}
POSITION_COLORSCALE: Final = "Viridis"  # sequential: position 0 dark, the last bright
TICK_CHARS: Final = 12  # token characters in a tick label; hover shows the whole token
PLOT_BACKGROUND: Final = "#f4f4f4"  # light grey: an all-zero panel is not mistaken for empty


@dataclass(frozen=True)
class TypeSizes:
    """Font sizes in CSS px."""

    text: int  # axis titles, colour-bar ticks, hover labels
    tick: int  # tick labels
    title: int  # panel titles (bold)


# Projector rule (issue 9): in lecture mode everything a student reads is at least 20 px.
NORMAL_TYPE: Final = TypeSizes(text=15, tick=15, title=17)
LECTURE_TYPE: Final = TypeSizes(text=22, tick=20, title=24)


@dataclass(frozen=True)
class Room:
    """The smallest panel posviz promises to lay out without collisions, in px.

    Side by side, the narrowest panel is a third of the chart in a 1024-px window with the
    sidebar open (about 560 px of chart, less the position labels); in lecture mode the
    sidebar is closed but the type is larger. The height is what a panel keeps when the chart
    follows a 1280 x 800 window in lecture mode.
    """

    panel_width: float
    panel_height: float


NORMAL_ROOM: Final = Room(panel_width=120, panel_height=360)
LECTURE_ROOM: Final = Room(panel_width=200, panel_height=300)
STACKED_WIDTH: Final = 300  # a 390-px phone less the page's padding and the labels
TOOLBAR_ROOM: Final = 28  # px over a phone's figure: a touch screen always shows its toolbar


Trace = dict[str, object]  # one Plotly trace, as plotly.js reads it (figures skip validation)


def trace(kind: str, **fields: object) -> Trace:
    """A Plotly trace of type ``kind`` (``"scatter"``, ``"scatter3d"``...) with ``fields``.

    >>> trace("scatter", y=[1, 2])
    {'type': 'scatter', 'y': [1, 2]}
    """
    return {"type": kind, **fields}


def type_sizes(*, lecture: bool) -> TypeSizes:
    """Font sizes for lecture mode (projector: every label at least 20 px) or normal mode."""
    return LECTURE_TYPE if lecture else NORMAL_TYPE


def room(*, lecture: bool) -> Room:
    """The smallest panel the layout must fit without collisions, per mode."""
    return LECTURE_ROOM if lecture else NORMAL_ROOM


def text_width(text: str, font_size: float, *, bold: bool = False) -> float:
    """A generous estimate of ``text``'s rendered width in px (``text`` not escaped).

    Wide East Asian characters and emoji count one em; everything else 0.62 em (0.6 in bold,
    which only posviz's own lowercase titles use): a little more than Latin text measures in
    the sans-serif fonts Plotly falls back to.

    >>> text_width("abc", 10)
    18.6
    """
    em = sum(1.0 if unicodedata.east_asian_width(ch) in "WF" else 0.0 for ch in text)
    narrow = len(text) - em
    return round((em + narrow * (0.6 if bold else 0.62)) * font_size, 2)


def wrap_title(title: str, *, width: float, font_size: int) -> str:
    """``title`` (posviz's own words) word-wrapped with ``<br>`` into lines of at most
    ``width`` px; a single word longer than that keeps its own line. A ``<br>`` already in
    ``title`` marks where a break reads best, and is kept."""
    lines: list[str] = []
    for part in title.split("<br>"):
        start = len(lines)
        for word in part.split(" "):
            candidate = f"{lines[-1]} {word}" if len(lines) > start else word
            if len(lines) > start and text_width(candidate, font_size, bold=True) <= width:
                lines[-1] = candidate
            else:
                lines.append(word)
    return "<br>".join(lines)


def short_label(position: int, text: str, max_chars: int = TICK_CHARS) -> str:
    """``"position · token"`` for a tick, the token cut to ``max_chars`` characters (not
    escaped)."""
    if len(text) > max_chars:
        text = text[: max_chars - 1] + "…"
    return f"{position} · {text}"


def row_labels(token_texts: Sequence[str]) -> list[str]:
    """``"position · token"`` for each row, escaped for Plotly; positions make repeated
    tokens distinct. These are the rows' category names, shown whole in hover."""
    return [f"{position} · {for_plotly(text)}" for position, text in enumerate(token_texts)]


@dataclass(frozen=True)
class PositionTicks:
    """Which rows of a position axis are labelled, and with what (escaped) text."""

    values: list[str]  # category names (row_labels) of the labelled rows
    texts: list[str]  # their short labels
    width: float  # px of the widest short label
    categories: list[str]  # every row's category name: the heatmaps' y values
    auto: bool = False  # Plotly picks the labelled rows for the axis length it draws


@dataclass(frozen=True)
class RowMarks:
    """Rows a figure marks (a repeated token's, :mod:`posviz.plots._identity`): each is always
    labelled, its label bold in its colour (plain for ``None``), and its hover says ``note``.

    ``tick_texts`` (optional, one per row) replaces the token texts in the tick labels only:
    a character split over several tokens, named (hover keeps the exact bytes; with ``auto``
    ticks, whose labels are the category names hover shows, they are not used).
    """

    colours: Mapping[int, str | None] = field(default_factory=dict)  # row -> CSS colour
    notes: Mapping[int, str] = field(default_factory=dict)  # row -> words added in hover
    tick_texts: Sequence[str] | None = None


def max_labels(length: float, font_size: float) -> int:
    """How many labels ``1.3 * font_size`` px apart fit ``length`` px of axis (at least 1).

    >>> max_labels(300, 20)
    11
    """
    return max(1, int(length // (1.3 * font_size)))


def _labelled_rows(rows: int, step: int, marked: Sequence[int]) -> list[int]:
    """Every ``step``-th row from 0, and every ``marked`` row; a spaced row closer than
    ``step`` to a marked one gives way to it (marked rows may stand closer to each other)."""
    if not marked:
        return list(range(0, rows, step))
    required = sorted(marked)
    spaced = []
    for row in range(0, rows, step):
        at = bisect.bisect_left(required, row)
        nearest = min(
            (abs(row - required[i]) for i in (at - 1, at) if 0 <= i < len(required)),
            default=step,
        )
        if nearest >= step:
            spaced.append(row)
    return sorted({*spaced, *required})


def position_ticks(
    token_texts: Sequence[str],
    *,
    font_size: int,
    length: float,
    auto: bool = False,
    marks: RowMarks | None = None,
) -> PositionTicks:
    """Label evenly spaced rows so that labels ``1.3 * font_size`` px apart fit ``length``
    px of axis; every row keeps its hover.

    ``auto``: for a chart whose height the page sets (lecture mode follows the window), so
    ``length`` is not known here. The rows' category names are then their short labels and
    Plotly labels one row in every ``ceil(rows / (length / (1.2 * font_size)))`` for the length
    it draws (plotly.js ``prepTicks`` on category axes), at every redraw.

    ``marks``: rows that are always labelled (labels bold, in their colour) and whose hover
    carries a note; with marks, ``auto`` is not used (Plotly could skip a marked row) and the
    spaced rows are chosen for ``length``.
    """
    marks = marks or RowMarks()
    rows = len(token_texts)
    auto = auto and not marks.colours
    if auto:
        chosen: Sequence[int] = range(rows)
    else:
        step = max(1, math.ceil(rows / max_labels(length, font_size)))
        chosen = _labelled_rows(rows, step, [row for row in marks.colours if row < rows])
    # auto: the labels are the rows' category names, shown in hover too: exact bytes there
    names = token_texts if marks.tick_texts is None or auto else marks.tick_texts
    shorts = [short_label(position, names[position]) for position in chosen]
    width = max(
        (
            text_width(label, font_size) * (_BOLD if marks.colours.get(position) else 1.0)
            for position, label in zip(chosen, shorts, strict=True)
        ),
        default=0.0,
    )
    texts = [for_plotly(label) for label in shorts]
    if auto:  # the short labels name the rows, and Plotly chooses which to show
        return PositionTicks(values=[], texts=[], width=width, categories=texts, auto=True)
    texts = [
        _coloured(text, colour) if (colour := marks.colours.get(position)) else text
        for position, text in zip(chosen, texts, strict=True)
    ]
    categories = row_labels(token_texts)
    for row, note in marks.notes.items():
        if row < rows:
            categories[row] = f"{categories[row]} ({for_plotly(note)})"
    return PositionTicks(
        values=[categories[position] for position in chosen],
        texts=texts,
        width=width,
        categories=categories,
    )


_BOLD: Final = 1.1  # a bold label is about this much wider than text_width estimates


def _coloured(label: str, colour: str) -> str:
    """An escaped tick label, bold in ``colour`` (posviz's own CSS colour, never user text)."""
    return f'<span style="color:{colour}"><b>{label}</b></span>'


def position_axis(ticks: PositionTicks, *, font_size: int, title: str | None) -> dict[str, object]:
    """A position axis: position 0 at the top, the chosen rows labelled."""
    axis: dict[str, object] = {
        "autorange": "reversed",
        "type": "category",
        "tickfont": {"size": font_size},
        "automargin": False,
    }
    if ticks.auto:
        axis["tickmode"] = "auto"
    else:
        axis |= {"tickmode": "array", "tickvals": ticks.values, "ticktext": ticks.texts}
    if title is not None:
        axis["title"] = {"text": title, "standoff": 6}
    return axis


def panel_title(title: str, *, note: str, x: float, y: float, font_size: int) -> dict[str, object]:
    """A bold ``title`` (posviz's own words, may hold ``<br>``) and a small ``note`` centred
    above the panel whose middle is at paper coordinate ``x`` and whose top is at ``y``."""
    return {
        "text": f"<b>{title}</b>{note}",
        "x": x,
        "y": y,
        "xref": "paper",
        "yref": "paper",
        "xanchor": "center",
        "yanchor": "bottom",
        "yshift": 6,
        "showarrow": False,
        "font": {"size": font_size},
    }


def title_height(title: str, note: str, sizes: TypeSizes) -> float:
    """px a panel title takes: its lines, its note's lines and a little air."""
    lines = title.count("<br>") + 1 + note.count("<br>")  # Plotly spaces every line alike
    return lines * sizes.title * 1.3 + 10


def small_note(text: str, *, width: float, font_size: int) -> str:
    """``text`` as small lines under a panel title (``""`` for no note), wrapped to
    ``width`` px like :func:`wrap_title`."""
    if not text:
        return ""
    lines = wrap_title(text, width=width, font_size=round(font_size * 0.75)).split("<br>")
    return "".join(f"<br><sup>{line}</sup>" for line in lines)


@dataclass(frozen=True)
class Colorbar:
    """One colour axis: its name in the layout, range, title, and the panel it belongs to
    (``None``: all of them)."""

    name: str  # "coloraxis" or "coloraxis2"
    cmin: float
    cmax: float
    title: str
    under_panel: int | None = None


@dataclass(frozen=True)
class PanelLayout:
    """A figure's layout and, for each drawn panel, the axes its heatmap uses."""

    layout: dict[str, object]
    axes: list[tuple[str, str]]  # ("x2", "y2") ...
    rows: list[str]  # the category name of each row: the heatmaps' y values


COLORBAR_HEIGHT: Final = 110  # px under a panel for a horizontal bar, its ticks and title


def label_length(*, lecture: bool, stacked: bool, panel_height: float) -> float:
    """px of position axis the labels are spaced for: the panel's height, or side by side at
    most the smallest panel's (the page may give the chart less height than asked: lecture
    mode follows the window)."""
    return panel_height if stacked else min(panel_height, room(lecture=lecture).panel_height)


def three_panels(
    *,
    titles: Sequence[str],
    note: str,
    token_texts: Sequence[str],
    x_axis: dict[str, object],
    colorbars: Sequence[Colorbar],
    lecture: bool,
    stacked: bool,
    panel_height: float,
    x_tick_height: float,
    square: bool = False,
    follows_page: bool = False,
    marks: RowMarks | None = None,
) -> PanelLayout:
    """The layout of ``len(titles)`` panels (1 to 3) over the rows ``token_texts``.

    ``note`` is plain text put in small lines under each title. ``x_axis`` holds the
    settings every panel's horizontal axis shares; ``x_tick_height`` is
    the px its tick labels and title need under a panel. Side by side the figure is
    ``panel_height`` px of plot plus margins; stacked, each panel is ``panel_height`` px (or
    as tall as wide, ``square``, for a 300-px phone panel). ``follows_page``: side by side,
    the page sets the chart's height (lecture mode fills the window), so Plotly spaces the
    position labels for the height it draws (:func:`position_ticks` ``auto``). ``marks``:
    rows always labelled, see :class:`RowMarks`.
    """
    sizes = type_sizes(lecture=lecture)
    count = len(titles)
    if not 1 <= count <= 3:
        raise ValueError(f"a figure has 1 to 3 panels, got {count}")
    if stacked:
        panel_height = STACKED_WIDTH if square else panel_height
        width = float(STACKED_WIDTH)
    else:
        width = room(lecture=lecture).panel_width * 3 / count
    wrapped = [wrap_title(title, width=width, font_size=sizes.title) for title in titles]
    note = small_note(note, width=width, font_size=sizes.text)
    title_px = max(title_height(title, note, sizes) for title in wrapped)
    length = label_length(lecture=lecture, stacked=stacked, panel_height=panel_height)
    auto = follows_page and not stacked
    ticks = position_ticks(token_texts, font_size=sizes.tick, length=length, auto=auto, marks=marks)
    left = ticks.width + 8 + sizes.text * 1.6  # labels, their pad, the rotated axis title
    # Side by side the shared bar stands at the right and RoPE's cos bar lies under its panel;
    # stacked, all bars lie under the panels (width is what a phone lacks).
    vertical = [bar for bar in colorbars if bar.under_panel is None or stacked]
    horizontal = [bar for bar in colorbars if bar not in vertical]
    # Each vertical bar: its pad, thickness, tick labels and the title along it.
    right = 16 + (sizes.text * 4.5 + 36 if not stacked else 0)
    layout: dict[str, object] = {
        "font": {"size": sizes.text},
        "hovermode": "closest",
        "hoverlabel": {"font": {"size": sizes.text}},
        "plot_bgcolor": PLOT_BACKGROUND,
        "annotations": [],
    }
    axes: list[tuple[str, str]] = []
    if stacked:
        # px from the top of the plot area: panel, its tick band, the next title band...
        band = title_px
        below = x_tick_height
        plot_height = count * panel_height + (count - 1) * (below + band)
        bottom_bars = COLORBAR_HEIGHT * len(vertical)
        height = round(title_px + plot_height + below + bottom_bars)
        for index in range(count):
            top = index * (panel_height + below + band)
            low = 1 - (top + panel_height) / plot_height
            high = 1 - top / plot_height
            x_name, y_name = _axis_names(index)
            x_ref, y_ref = x_name.replace("axis", ""), y_name.replace("axis", "")
            axes.append((x_ref, y_ref))
            layout[x_name] = {
                **x_axis,
                "domain": [0.0, 1.0],
                "anchor": y_ref,
                **({} if index == 0 else {"matches": "x"}),
            }
            layout[y_name] = {
                **position_axis(ticks, font_size=sizes.tick, title=None),
                "domain": [max(low, 0.0), min(high, 1.0)],
                "anchor": x_ref,
                **({} if index == 0 else {"matches": "y"}),
            }
            layout["annotations"].append(  # type: ignore[attr-defined]
                panel_title(wrapped[index], note=note, x=0.5, y=high, font_size=sizes.title)
            )
        for order, bar in enumerate(reversed(vertical)):
            lift = order * COLORBAR_HEIGHT + sizes.text * 1.4 + 8  # px: its tick labels below
            layout[bar.name] = _colorbar_axis(bar, sizes, x=(0.0, 1.0), y=lift / height)
        margin = {"t": title_px, "b": below + bottom_bars, "l": left, "r": 16}
        layout["height"] = height
    else:
        gap = 0.04
        span = (1 - gap * (count - 1)) / count
        for index in range(count):
            start = index * (span + gap)
            x_name, y_name = _axis_names(index)
            axes.append((x_name.replace("axis", ""), "y"))
            layout[x_name] = {
                **x_axis,
                "domain": [start, start + span],
                "anchor": "y",
                **({} if index == 0 else {"matches": "x"}),
            }
            layout["annotations"].append(  # type: ignore[attr-defined]
                panel_title(
                    wrapped[index], note=note, x=start + span / 2, y=1.0, font_size=sizes.title
                )
            )
        layout["yaxis"] = {
            **position_axis(ticks, font_size=sizes.tick, title="position · token"),
            "domain": [0.0, 1.0],
        }
        for order, bar in enumerate(vertical):  # a second bar (RoPE's cos) at the right edge
            layout[bar.name] = _colorbar_axis(bar, sizes, x=None, y=None, edge=order > 0)
        bottom = x_tick_height + (COLORBAR_HEIGHT if horizontal else 0)
        height = round(panel_height + title_px + bottom)
        for bar in horizontal:
            index = bar.under_panel or 0
            start = index * (span + gap)
            # A fraction of the figure's height: when the page makes the chart taller or
            # shorter, the gap under the bar scales with it and its tick labels keep room.
            lift = (sizes.text * 1.4 + 8) / height
            layout[bar.name] = _colorbar_axis(bar, sizes, x=(start, start + span), y=lift)
        margin = {"t": title_px, "b": bottom, "l": left, "r": right}
        layout["height"] = height
    layout["margin"] = {side: round(value) for side, value in margin.items()}
    return PanelLayout(layout=layout, axes=axes, rows=ticks.categories)


def _axis_names(index: int) -> tuple[str, str]:
    suffix = "" if index == 0 else str(index + 1)
    return f"xaxis{suffix}", f"yaxis{suffix}"


def _colorbar_axis(
    bar: Colorbar,
    sizes: TypeSizes,
    *,
    x: tuple[float, float] | None,
    y: float | None,
    edge: bool = False,
) -> dict[str, object]:
    """A colour axis on posviz's diverging scale; vertical at the right unless ``x`` (its
    span, as a fraction of the plot's width) and ``y`` (its bottom, as a fraction of the
    figure's height from the bottom) place it horizontally under the plot: measured from the
    figure's edge, it stays under the tick labels whatever height the page gives the chart."""
    colorbar: dict[str, object] = {
        # Along the bar, right of its tick labels: above it, the top label would touch it.
        "title": {"text": bar.title, "side": "right", "font": {"size": sizes.text}},
        "tickfont": {"size": sizes.text},
        "thickness": 16,
    }
    if edge:  # at the figure's right edge, clear of a first bar beside the plot
        colorbar |= {"x": 1.0, "xref": "container", "xanchor": "right", "xpad": 10}
    if x is not None and y is not None:
        colorbar |= {
            "orientation": "h",
            "x": (x[0] + x[1]) / 2,
            "xanchor": "center",
            "len": x[1] - x[0],
            "lenmode": "fraction",
            "y": y,
            "yref": "container",
            "yanchor": "bottom",
            "ypad": 0,
            "title": {"text": bar.title, "side": "top", "font": {"size": sizes.text}},
            "nticks": 3,  # a bar under one panel is short: upright labels, not turned ones
        }
    return {
        "colorscale": COLORSCALE_STEPS,
        "cmid": 0.0,
        "cmin": bar.cmin,
        "cmax": bar.cmax,
        "colorbar": colorbar,
    }
