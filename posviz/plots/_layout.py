"""The layout both three-panel figures share (embeddings and similarity): where the panels go,
their titles, the position axis, the colour bars, type sizes and margins, for the room the
chart has on the page (a :class:`Canvas`).

Two arrangements:

* side by side: the panels in one row sharing the position axis on the left, the colour bar on
  the right, when each panel gets at least :data:`SIDE_BY_SIDE_PANEL` px;
* stacked: one panel under the other, each the full width with its own position labels
  (phones, a split screen, a 1024-px window with the sidebar open).

A measured canvas (the app's chart reports its width and the window's size, see
``posviz_app/chart.py``) decides between them, scales the type on large screens and gives
lecture mode's chart the window's height below its top; ``Canvas()``, a size not known yet
(the command line, the exports, a page's first run), lays a figure out as posviz always has,
for the smallest panels it promises (:class:`Room`), side by side unless ``stacked``.

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
>>> arrange(Canvas(width=358, window_width=390, window_height=844), lecture=False,
...         count=3, token_texts=["A", "␣rose"]).stacked
True
"""

from __future__ import annotations

import bisect
import functools
import math
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

import plotly.graph_objects as go

from posviz.schemes import SchemeSpec
from posviz.token_text import for_plotly

COLORSCALE: Final = "RdBu_r"  # ColorBrewer RdBu: diverging, colour-blind safe; red = positive
# COLORSCALE as the [position, colour] steps plotly's validation would expand it to (once).
COLORSCALE_STEPS: Final = tuple(
    tuple(step) for step in go.layout.Coloraxis(colorscale=COLORSCALE).colorscale
)
# One colour per positional table in the Geometry and Distance figures (Okabe & Ito's
# colour-blind-safe palette), the same in both: each scheme's own (SchemeSpec.colour), and
# GPT-2's trained table's.
GPT2_COLOUR: Final = "#CC79A7"  # reddish purple: GPT-2's trained table


def table_colour(scheme: SchemeSpec, *, trained: bool = False) -> str:
    """The colour of a positional table: the scheme's, or GPT-2's for its trained one."""
    return GPT2_COLOUR if trained else scheme.colour


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

# Canvas sizes the browser may report, in CSS px: anything outside is not a real window.
CANVAS_RANGE: Final = (1, 20_000)
LARGE_SCREEN: Final = 1600  # px of window width from which the chart's type grows
MAX_TYPE_SCALE: Final = 1.2  # ... up to this factor (1920-px screens and wider)
SIDE_BY_SIDE_PANEL: Final = 150  # px a panel needs, at least, to stand beside the others
CHART_BOTTOM_GAP: Final = 18  # px left under a chart that fills the window (page padding)
MIN_FILL_HEIGHT: Final = 320  # px: a chart that fills the window is never shorter
# Position labels at least this many font sizes apart: a Plotly tick label's box is 1.12 of
# its font size high in Arial (Liberation Sans), the first of Plotly's fonts most systems
# have. A measured canvas draws the figure exactly as tall as laid out, so its labels may stand
# that close; a figure for Canvas() may be squeezed by the page, so it keeps more air.
ROW_PITCH: Final = 1.3
MEASURED_ROW_PITCH: Final = 1.15
# Tick marks outside the plot, 5 px long: plotly.js then sets the tick labels 5 px and a fifth
# of their font size off the plot, clear of an outline's casing (at most 3 px outside the plot,
# posviz.plots._identity). Written into the axes, not left to the template: Streamlit's
# template (the page) has them, plotly's (the command line, the offline HTML) does not, and
# there the outlines covered the labels' last letters (issue 42).
TICK_LENGTH: Final = 5
OUTSIDE_TICKS: Final = {"ticks": "outside", "ticklen": TICK_LENGTH}


class CanvasError(ValueError):
    """A canvas size that no browser window has (negative, zero or absurdly large)."""


@dataclass(frozen=True)
class Canvas:
    """The room a chart has on the page, in CSS px, as the browser measured it.

    ``width``: the chart's own width; ``height``: from the chart's top to the bottom of the
    window (what a chart that fills the window may take); ``window_width`` and
    ``window_height``: the window's inner size. ``Canvas()`` is a size not known yet: figures
    are laid out as they always were (the command line and the exports use it).

    >>> Canvas().measured, Canvas(width=800, window_width=1280, window_height=800).measured
    (False, True)
    >>> Canvas(width=-3)
    Traceback (most recent call last):
    ...
    posviz.plots._layout.CanvasError: canvas width -3 px is outside 1..20000 px: pass the \
size the browser measured, or Canvas() for a size not known yet
    """

    width: int | None = None
    height: int | None = None
    window_width: int | None = None
    window_height: int | None = None

    def __post_init__(self) -> None:
        low, high = CANVAS_RANGE
        for name in ("width", "height", "window_width", "window_height"):
            value = getattr(self, name)
            if value is not None and not low <= value <= high:
                raise CanvasError(
                    f"canvas {name} {value} px is outside {low}..{high} px: pass the size the "
                    "browser measured, or Canvas() for a size not known yet"
                )

    @property
    def measured(self) -> bool:
        """Whether the browser has told the chart its width (else: lay out as always)."""
        return self.width is not None

    @property
    def type_scale(self) -> float:
        """How much larger the chart's type is than on a laptop: 1 below
        :data:`LARGE_SCREEN` px of window width, growing with it to :data:`MAX_TYPE_SCALE`
        (the page's own captions grow from the same width).

        >>> Canvas(width=1000, window_width=1280).type_scale, Canvas(width=1500,
        ...     window_width=1920).type_scale
        (1.0, 1.2)
        """
        window = self.window_width or 0
        if window < LARGE_SCREEN:
            return 1.0
        return min(MAX_TYPE_SCALE, round(window / LARGE_SCREEN * 17 / 15, 3))


UNKNOWN: Final = Canvas()  # the size before the browser has measured it


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
NARROWEST_CHART: Final = 560  # px: the chart in a 1024-px window with the sidebar open
TOOLBAR_ROOM: Final = 28  # px over a phone's figure: a touch screen always shows its toolbar


def narrow(canvas: Canvas) -> bool:
    """Whether the Geometry, Distance figures stack (a phone's layout) on ``canvas``: a chart
    narrower than the narrowest side-by-side one they promise (a 1024-px window with the
    sidebar open), as the browser measured it.

    >>> narrow(Canvas(width=358, window_width=390)), narrow(Canvas(width=900)), narrow(Canvas())
    (True, False, False)
    """
    return canvas.width is not None and canvas.width < NARROWEST_CHART


Trace = dict[str, object]  # one Plotly trace, as plotly.js reads it (figures skip validation)


def trace(kind: str, **fields: object) -> Trace:
    """A Plotly trace of type ``kind`` (``"scatter"``, ``"scatter3d"``...) with ``fields``.

    >>> trace("scatter", y=[1, 2])
    {'type': 'scatter', 'y': [1, 2]}
    """
    return {"type": kind, **fields}


def type_sizes(*, lecture: bool, canvas: Canvas = UNKNOWN) -> TypeSizes:
    """Font sizes for lecture mode (projector: every label at least 20 px) or normal mode,
    scaled for large screens (:attr:`Canvas.type_scale`).

    >>> type_sizes(lecture=False, canvas=Canvas(width=1500, window_width=1920))
    TypeSizes(text=18, tick=18, title=20)
    """
    sizes = LECTURE_TYPE if lecture else NORMAL_TYPE
    scale = canvas.type_scale
    if scale == 1.0:
        return sizes
    return TypeSizes(*(round(size * scale) for size in (sizes.text, sizes.tick, sizes.title)))


def room(*, lecture: bool) -> Room:
    """The smallest panel the layout must fit without collisions, per mode."""
    return LECTURE_ROOM if lecture else NORMAL_ROOM


PANEL_GAP: Final = 0.04  # side by side: the gap between two panels, a fraction of the plot


@dataclass(frozen=True)
class Arrangement:
    """How a figure of ``count`` panels sits on its canvas, decided once by :func:`arrange`
    for the figure's builder and :func:`three_panels` alike."""

    stacked: bool  # one panel under the other (else side by side)
    sizes: TypeSizes
    panel_width: float  # px of one panel's plot area (what titles and column labels fit)
    label_width: float = 0.0  # px of the widest position label (measured canvases)


def arrange(
    canvas: Canvas,
    *,
    lecture: bool,
    count: int,
    token_texts: Sequence[str],
    stacked: bool = False,
) -> Arrangement:
    """Side by side or stacked, type sizes and the px each panel gets.

    A measured canvas stacks the panels when side by side each would get less than
    :data:`SIDE_BY_SIDE_PANEL` px (more on large screens, whose type is larger) after the
    position labels and the colour bar; ``stacked`` is then ignored. ``Canvas()`` keeps
    ``stacked`` as given and the panel widths posviz promises for any screen (:func:`room`;
    stacked: a 300-px phone).
    """
    sizes = type_sizes(lecture=lecture, canvas=canvas)
    if canvas.width is None:
        width = STACKED_WIDTH if stacked else room(lecture=lecture).panel_width * 3 / count
        return Arrangement(stacked=stacked, sizes=sizes, panel_width=float(width))
    labels = (short_label(position, text) for position, text in enumerate(token_texts))
    label_width = max((text_width(label, sizes.tick) for label in labels), default=0.0)
    left = label_width + 8 + sizes.text * 1.6
    side = (canvas.width - left - _right_margin(sizes, stacked=False)) * _span(count)
    if side >= SIDE_BY_SIDE_PANEL * canvas.type_scale:
        return Arrangement(stacked=False, sizes=sizes, panel_width=side, label_width=label_width)
    width = max(canvas.width - left - _right_margin(sizes, stacked=True), 1.0)
    return Arrangement(stacked=True, sizes=sizes, panel_width=width, label_width=label_width)


def _span(count: int) -> float:
    """Side by side: one panel's share of the plot's width."""
    return (1 - PANEL_GAP * (count - 1)) / count


def _right_margin(sizes: TypeSizes, *, stacked: bool) -> float:
    """px right of the plot: a little air, and side by side the vertical colour bar (its pad,
    thickness, tick labels and the title along it)."""
    return 16 + (0 if stacked else sizes.text * 4.5 + 36)


@functools.lru_cache(maxsize=4096)  # the same titles and notes on every rerun
def text_width(text: str, font_size: float, *, bold: bool = False) -> float:
    """A generous estimate of ``text``'s rendered width in px (``text`` not escaped).

    Wide East Asian characters and emoji count one em; everything else 0.62 em (0.6 in bold,
    which only posviz's own lowercase titles use): a little more than Latin text measures in
    the sans-serif fonts Plotly falls back to.

    >>> text_width("abc", 10)
    18.6
    """
    if text.isascii():  # no wide character: the common case, without a lookup per character
        em = 0.0
    else:
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
    rows: tuple[int, ...] = ()  # the rows labelled (auto: none chosen here)


@dataclass(frozen=True)
class RowMarks:
    """Rows a figure marks (a repeated token's, :mod:`posviz.plots._identity`): each is
    labelled where its label has room (:func:`spread_marks`: first come, first labelled, in
    the order of ``colours``), its label bold in its colour (plain for ``None``), and its hover
    says ``note`` whether labelled or not.

    ``tick_texts`` (optional, one per row) replaces the token texts in the tick labels only:
    a character split over several tokens, named (hover keeps the exact bytes; with ``auto``
    ticks, whose labels are the category names hover shows, they are not used).
    """

    colours: Mapping[int, str | None] = field(default_factory=dict)  # row -> CSS colour
    notes: Mapping[int, str] = field(default_factory=dict)  # row -> words added in hover
    tick_texts: Sequence[str] | None = None


def max_labels(length: float, font_size: float, *, pitch: float = ROW_PITCH) -> int:
    """How many labels ``pitch * font_size`` px apart fit ``length`` px of axis (at least 1).

    >>> max_labels(300, 20)
    11
    """
    return max(1, int(length // (pitch * font_size)))


def spread_marks(marked: Sequence[int], *, apart: float) -> tuple[int, ...]:
    """The ``marked`` rows that get a label: each in turn, unless it stands closer than
    ``apart`` rows to one labelled before it (then its label would print over that one's: a
    cluster of twins gets one label, and the first rows in ``marked`` win). Sorted.

    >>> spread_marks([550, 556, 562, 580, 587, 983, 988], apart=12.5)
    (550, 580, 983)
    >>> spread_marks([9, 3, 4, 5], apart=2)
    (3, 5, 9)
    """
    labelled: list[int] = []
    for row in marked:
        at = bisect.bisect_left(labelled, row)
        neighbours = labelled[max(at - 1, 0) : at + 1]
        if all(abs(row - other) >= apart for other in neighbours):
            labelled.insert(at, row)
    return tuple(labelled)


def _labelled_rows(
    rows: int, step: int, marked: Sequence[int], labelled: Sequence[int]
) -> list[int]:
    """Every ``step``-th row from 0, and the ``labelled`` ones of the ``marked`` rows; a spaced
    row closer than ``step`` to a marked one gives way to it."""
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
    return sorted({*spaced, *labelled})


def position_ticks(
    token_texts: Sequence[str],
    *,
    font_size: int,
    length: float,
    auto: bool = False,
    pitch: float = ROW_PITCH,
    marks: RowMarks | None = None,
) -> PositionTicks:
    """Label evenly spaced rows so that labels ``pitch * font_size`` px apart fit ``length``
    px of axis; every row keeps its hover.

    ``auto``: for a chart whose height the page sets (lecture mode follows the window), so
    ``length`` is not known here. The rows' category names are then their short labels and
    Plotly labels one row in every ``ceil(rows / (length / (1.2 * font_size)))`` for the length
    it draws (plotly.js ``prepTicks`` on category axes), at every redraw.

    ``marks``: rows labelled before the spaced ones (labels bold, in their colour), where
    their labels stand ``pitch * font_size`` px apart: of twins closer than that, only the
    first in ``marks.colours`` is labelled (:func:`spread_marks`); every marked row's hover
    carries its note. With marks, ``auto`` is not used (Plotly could skip a marked row) and
    the rows are chosen for ``length``. ``rows`` of the result: the rows labelled.
    """
    marks = marks or RowMarks()
    rows = len(token_texts)
    auto = auto and not marks.colours
    if auto:
        chosen: Sequence[int] = range(rows)
    else:
        step = max(1, math.ceil(rows / max_labels(length, font_size, pitch=pitch)))
        marked = [row for row in marks.colours if row < rows]
        # rows between two labels that do not touch: a label's height in rows of the axis
        apart = pitch * font_size * rows / max(length, 1.0)
        chosen = _labelled_rows(rows, step, marked, spread_marks(marked, apart=apart))
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
        rows=tuple(chosen),
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
        **OUTSIDE_TICKS,
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
    labelled: tuple[int, ...] = ()  # the rows whose position label is drawn


COLORBAR_HEIGHT: Final = 110  # px under a panel for a horizontal bar, its ticks and title
READABLE_PANEL: Final = 200  # px: a long window's panel fitted to the room, at least


def room_panel_height(
    canvas: Canvas,
    arrangement: Arrangement,
    *,
    titles: Sequence[str],
    note: str,
    x_tick_height: float,
    panel_height: float,
    rows: int,
    bars_under: int = 0,
) -> float:
    """Side by side, outside lecture mode: the px of plot that end the figure at the window's
    bottom (``canvas.height``, the room below the chart's top, less
    :data:`CHART_BOTTOM_GAP`), so a first screen shows the rows it can; never taller than
    ``panel_height`` (the figure's own) nor too short to read: a panel of its own height that
    labels every one of its ``rows`` keeps room to (:data:`ROW_PITCH` font sizes a row: the
    marked rows are labelled side by side), a longer window's keeps :data:`READABLE_PANEL`
    px. ``note``: the widest note the
    titles may carry; ``bars_under``: horizontal colour bars under the panels. Without a
    measured height, or stacked: ``panel_height``.

    >>> canvas = Canvas(width=1100, height=400, window_width=1280, window_height=720)
    >>> room = arrange(canvas, lecture=False, count=3, token_texts=["A", "␣rose"])
    >>> room_panel_height(canvas, room, titles=["token embeddings"], note="",
    ...                   x_tick_height=55, panel_height=360, rows=9)
    294.9
    """
    if canvas.height is None or arrangement.stacked:
        return panel_height
    sizes, width = arrangement.sizes, arrangement.panel_width
    wrapped = [wrap_title(title, width=width, font_size=sizes.title) for title in titles]
    small = small_note(note, width=width, font_size=sizes.text)
    title_px = max(title_height(title, small, sizes) for title in wrapped)
    below = x_tick_height + COLORBAR_HEIGHT * canvas.type_scale * bars_under
    room = canvas.height - CHART_BOTTOM_GAP - title_px - below
    every_row = rows * ROW_PITCH * sizes.tick
    least = every_row if every_row <= panel_height else READABLE_PANEL
    return max(min(panel_height, room), min(panel_height, least))


STACKED_MAX_HEIGHT: Final = 420  # px: a stacked panel grows for its rows up to this


def square_height(width: float, *, rows: int, sizes: TypeSizes) -> float:
    """px of a stacked square panel ``width`` px wide: as tall as wide, or taller (up to
    :data:`STACKED_MAX_HEIGHT`) when its ``rows`` need more to stand
    :data:`MEASURED_ROW_PITCH` font sizes apart (a phone's lecture slide: 20-px labels on a
    narrow panel).

    >>> square_height(300, rows=9, sizes=NORMAL_TYPE)
    300
    >>> square_height(190, rows=9, sizes=LECTURE_TYPE)
    216
    """
    row = math.ceil(MEASURED_ROW_PITCH * sizes.tick) + 1
    return max(width, min(STACKED_MAX_HEIGHT, row * rows))


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
    canvas: Canvas = UNKNOWN,
) -> PanelLayout:
    """The layout of ``len(titles)`` panels (1 to 3) over the rows ``token_texts``.

    ``note`` is plain text put in small lines under each title. ``x_axis`` holds the
    settings every panel's horizontal axis shares; ``x_tick_height`` is
    the px its tick labels and title need under a panel. Side by side the figure is
    ``panel_height`` px of plot plus margins; stacked, each panel is ``panel_height`` px (or,
    ``square``, :func:`square_height`). ``canvas`` arranges the panels (:func:`arrange`; with
    ``Canvas()``, ``stacked`` does). ``follows_page``: side by side, the chart takes the
    window's height below its top (lecture mode): with a measured canvas the figure is laid out
    for exactly that height; with ``Canvas()`` the page stretches it, so Plotly spaces the
    position labels for the height it draws (:func:`position_ticks` ``auto``). ``marks``:
    rows always labelled, see :class:`RowMarks`.
    """
    count = len(titles)
    if not 1 <= count <= 3:
        raise ValueError(f"a figure has 1 to 3 panels, got {count}")
    arrangement = arrange(
        canvas, lecture=lecture, count=count, token_texts=token_texts, stacked=stacked
    )
    sizes, stacked, width = arrangement.sizes, arrangement.stacked, arrangement.panel_width
    if stacked and square:
        panel_height = square_height(width, rows=len(token_texts), sizes=sizes)
    wrapped = [wrap_title(title, width=width, font_size=sizes.title) for title in titles]
    raw_note = note
    note = small_note(raw_note, width=width, font_size=sizes.text)
    title_px = max(title_height(title, note, sizes) for title in wrapped)
    # Side by side the shared bar stands at the right and RoPE's cos bar lies under its panel;
    # stacked, all bars lie under the panels (width is what a phone lacks).
    vertical = [bar for bar in colorbars if bar.under_panel is None or stacked]
    horizontal = [bar for bar in colorbars if bar not in vertical]
    colorbar_height = COLORBAR_HEIGHT * canvas.type_scale
    fill = follows_page and not stacked
    auto, axis_title = False, True
    pitch = MEASURED_ROW_PITCH if canvas.measured else ROW_PITCH
    right = _right_margin(sizes, stacked=stacked)
    if fill and canvas.width is not None and canvas.height is not None:  # lecture mode
        side_bottom = x_tick_height + (colorbar_height if horizontal else 0)
        filled = fill_height(canvas.height)
        panel_height = filled - title_px - side_bottom
        every_row = len(token_texts) * pitch * sizes.tick
        if panel_height < every_row and sizes.title > LECTURE_TYPE.tick:
            # Too short to label every row: titles at the projector's smallest type, and no
            # rotated axis title beside labels that say "position · token" themselves.
            sizes, axis_title = replace(sizes, title=LECTURE_TYPE.tick), False
            left = arrangement.label_width + 14
            width = (canvas.width - left - right) * _span(count)
            wrapped = [wrap_title(title, width=width, font_size=sizes.title) for title in titles]
            note = small_note(raw_note, width=width, font_size=sizes.text)
            title_px = max(title_height(title, note, sizes) for title in wrapped)
            panel_height = filled - title_px - side_bottom
        panel_height = max(panel_height, 1.0)
        length = panel_height
    elif canvas.measured:  # the figure is drawn exactly as tall as laid out
        length = panel_height
    else:  # the page may squeeze the chart: label_length
        length = label_length(lecture=lecture, stacked=stacked, panel_height=panel_height)
        auto = fill
    ticks = position_ticks(
        token_texts, font_size=sizes.tick, length=length, auto=auto, pitch=pitch, marks=marks
    )
    # The labels, their pad, and the rotated axis title (or a little air).
    left = ticks.width + 8 + (sizes.text * 1.6 if axis_title else 6)
    toolbar = TOOLBAR_ROOM if stacked and canvas.measured else 0
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
        bottom_bars = colorbar_height * len(vertical)
        height = round(toolbar + title_px + plot_height + below + bottom_bars)
        for index in range(count):
            top = index * (panel_height + below + band)
            low = 1 - (top + panel_height) / plot_height
            high = 1 - top / plot_height
            x_name, y_name = _axis_names(index)
            x_ref, y_ref = x_name.replace("axis", ""), y_name.replace("axis", "")
            axes.append((x_ref, y_ref))
            layout[x_name] = {
                **OUTSIDE_TICKS,
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
            lift = order * colorbar_height + sizes.text * 1.4 + 8  # px: its tick labels below
            layout[bar.name] = _colorbar_axis(
                bar, sizes, x=(0.0, 1.0), y=lift / height, spread_ticks=True
            )
        margin = {"t": toolbar + title_px, "b": below + bottom_bars, "l": left, "r": 16}
        layout["height"] = height
    else:
        gap = PANEL_GAP
        span = _span(count)
        for index in range(count):
            start = index * (span + gap)
            x_name, y_name = _axis_names(index)
            axes.append((x_name.replace("axis", ""), "y"))
            layout[x_name] = {
                **OUTSIDE_TICKS,
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
            **position_axis(
                ticks, font_size=sizes.tick, title="position · token" if axis_title else None
            ),
            "domain": [0.0, 1.0],
        }
        for order, bar in enumerate(vertical):  # a second bar (RoPE's cos) at the right edge
            layout[bar.name] = _colorbar_axis(bar, sizes, x=None, y=None, edge=order > 0)
        bottom = x_tick_height + (colorbar_height if horizontal else 0)
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
    return PanelLayout(layout=layout, axes=axes, rows=ticks.categories, labelled=ticks.rows)


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
    spread_ticks: bool = False,
) -> dict[str, object]:
    """A colour axis on posviz's diverging scale; vertical at the right unless ``x`` (its
    span, as a fraction of the plot's width) and ``y`` (its bottom, as a fraction of the
    figure's height from the bottom) place it horizontally under the plot: measured from the
    figure's edge, it stays under the tick labels whatever height the page gives the chart.
    ``spread_ticks``: three to five ticks at a round step (:func:`colorbar_step`), not the
    ones Plotly picks (on a phone's bar, with ``nticks`` 3, often "0" alone)."""
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
    step = colorbar_step(max(-bar.cmin, bar.cmax))
    if spread_ticks and step is not None:
        colorbar |= {"tickmode": "linear", "tick0": 0.0, "dtick": step}
    return {
        "colorscale": COLORSCALE_STEPS,
        "cmid": 0.0,
        "cmin": bar.cmin,
        "cmax": bar.cmax,
        "colorbar": colorbar,
    }


def fill_height(window_room: int) -> int:
    """px of a figure that fills the window (lecture mode), ``window_room`` px from its top to
    the window's bottom (:attr:`Canvas.height`): as tall as that less
    :data:`CHART_BOTTOM_GAP`, never under :data:`MIN_FILL_HEIGHT`, as the chart component
    sizes it (``fill_room`` in its payload).

    >>> fill_height(900), fill_height(200)
    (882, 320)
    """
    return max(window_room - CHART_BOTTOM_GAP, MIN_FILL_HEIGHT)


def colorbar_step(limit: float) -> float | None:
    """A round tick step (1, 2, 2.5 or 5 times a power of ten) for a bar from ``-limit`` to
    ``limit``: at least ``limit / 3``, at most ``limit / 1.5``, so the bar shows 3 to 5 ticks
    (``-step, 0, step`` at least); ``None`` for an empty range.

    >>> colorbar_step(1.0), colorbar_step(4.7), colorbar_step(0.31)
    (0.5, 2.5, 0.2)
    """
    if not math.isfinite(limit) or limit <= 0:
        return None
    wanted = limit / 1.5
    power = 10.0 ** math.floor(math.log10(wanted))
    return max(m * power for m in (1.0, 2.0, 2.5, 5.0) if m * power <= wanted * (1 + 1e-9))


def bar_step(limit: float, *, sequential: bool, length: float, font_size: int) -> float | None:
    """A round tick step for a colour bar from ``-limit`` (0 if ``sequential``) to ``limit``
    whose labels fit side by side in ``length`` px, each at least its width plus a little
    from the next: 3 to 5 ticks (:func:`colorbar_step`, doubled while they do not fit), and
    where even ``-step, 0, step`` would not, the limit to one digit (0.45: 0.4), so a short bar
    keeps a tick each side of 0.

    >>> bar_step(0.5, sequential=False, length=400, font_size=15)
    0.25
    >>> bar_step(0.5, sequential=False, length=200, font_size=22)
    0.5
    >>> bar_step(0.45, sequential=False, length=190, font_size=18)  # 0.25: "−0.25" and "0" touch
    0.4
    """
    step = colorbar_step(limit)
    while step is not None and int(limit / step + 1e-9) >= 1:
        if _labels_fit(step, limit, sequential=sequential, length=length, font_size=font_size):
            return step
        step *= 2
    if step is None:
        return None
    power = 10.0 ** math.floor(math.log10(limit))
    return round(math.floor(limit / power + 1e-9) * power, 12)


def _labels_fit(
    step: float, limit: float, *, sequential: bool, length: float, font_size: int
) -> bool:
    """Whether a bar of ``length`` px from ``-limit`` (0 if ``sequential``) to ``limit`` has
    room for its labels every ``step``: all of them side by side, each its width and a little
    from the next."""
    ticks = int(limit / step + 1e-9)
    values = [k * step for k in range(0 if sequential else -ticks, ticks + 1)]
    widths = [text_width(f"{value:g}".replace("-", "−"), font_size) for value in values]
    apart = step * length / (limit if sequential else 2 * limit)
    return (
        sum(widths) + font_size * len(widths) <= length and apart >= max(widths) + 0.3 * font_size
    )


# --- panels stacked in bands (the Training and Length figures) -----------------------------


def xy_axes(
    x: tuple[float, float],
    y: tuple[float, float],
    names: tuple[str, str],
    titles: tuple[str, str],
    sizes: TypeSizes,
    *,
    reversed_y: bool = False,
) -> dict[str, dict[str, object]]:
    """An x axis and a y axis (``names``: ``("xaxis2", "yaxis2")``) anchored to each other
    over the paper domains ``x`` and ``y``, titled ``titles``.

    >>> axes = xy_axes((0, 1), (0, 0.5), ("xaxis2", "yaxis2"), ("k", "cosine"), NORMAL_TYPE)
    >>> axes["xaxis2"]["anchor"], axes["yaxis2"]["anchor"], axes["yaxis2"]["domain"]
    ('y2', 'x2', [0, 0.5])
    """
    x_name, y_name = names

    def axis(domain: tuple[float, float], anchor: str, title: str) -> dict[str, object]:
        return {
            "domain": list(domain), "anchor": anchor.replace("axis", ""),
            "title": {"text": title, "standoff": 4, "font": {"size": sizes.text}},
            "tickfont": {"size": sizes.tick}, "automargin": False, "zeroline": False,
            "linecolor": "#444444", "gridcolor": "#e5e5e5",
        }  # fmt: skip

    x_axis, y_axis = axis(x, y_name, titles[0]), axis(y, x_name, titles[1])
    if reversed_y:
        y_axis["autorange"] = "reversed"
    return {x_name: x_axis, y_name: y_axis}


def legend_height(
    names: Sequence[str], sizes: TypeSizes, *, chart: float, stacked: bool = False
) -> float:
    """px under the plot for a legend of ``names``: one entry a row on a phone (``stacked``),
    else as many rows as its entries (a 40-px line sample and gap each) need across ``chart``
    px; 0 for no entry.

    >>> legend_height([], NORMAL_TYPE, chart=500), legend_height(["a", "b"], NORMAL_TYPE,
    ...     chart=500, stacked=True)
    (0.0, 55.0)
    """
    if not names:
        return 0.0
    if stacked:
        rows = len(names)
    else:
        rows, used = 1, 0.0
        for name in names:
            width = text_width(name, sizes.text) + 40 + sizes.text
            if used and used + width > chart:
                rows, used = rows + 1, 0.0
            used += width
    return rows * sizes.text * 1.5 + 10


def banded_layout(
    sizes: TypeSizes,
    *,
    top: float,
    plot_height: float,
    legend: float,
    left: float,
    right: float,
    vertical_legend: bool = False,
) -> dict[str, object]:
    """The layout every band of panels starts from: type sizes, a white plot, the legend
    under the plot (``legend`` px, anchored to the figure's bottom), empty lists of
    annotations and shapes, margins and the height (``top`` px above the plot area,
    ``plot_height`` px of bands)."""
    return {
        "font": {"size": sizes.text},
        "hoverlabel": {"font": {"size": sizes.text}},
        "hovermode": "closest",
        "plot_bgcolor": "#ffffff",
        "showlegend": legend > 0,
        "legend": {"orientation": "v" if vertical_legend else "h", "x": 0.0, "y": 0.0,
                   "xanchor": "left", "yanchor": "bottom", "yref": "container",
                   "font": {"size": sizes.text}, "tracegroupgap": 0},
        "annotations": [],
        "shapes": [],
        "margin": {"t": round(top), "b": round(legend + 6), "l": round(left), "r": right},
        "height": round(top + plot_height + legend + 6),
    }  # fmt: skip
