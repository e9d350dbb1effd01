"""posviz's two figures, three panels each (token | positional | input), side by side or
stacked (a phone, a narrow window); their layout is :mod:`posviz.plots._layout`'s, for the
:class:`~posviz.plots._layout.Canvas` the chart has on the page.

* :func:`embeddings_figure`: the three matrices of a window;
* :func:`similarity_figure`: cosine similarity between their positions
  (:mod:`posviz.similarity` computes it).

Rows are positions (labelled ``position · token``), columns are embedding dimensions. The
panels share one symmetric, colour-blind-safe diverging colour scale and one colour bar, and
zoom together. Hover shows the position, token, token id, dimension and the three values
``token + position = input``. The rows of a token that repeats in the window are outlined and
always labelled (:mod:`posviz.plots._identity`); a character split over several tokens is
named in the tick labels (``東 (1 of 2)``), hover keeps the exact bytes.

Payload rules (a rerun must stay under 1.5 MB of figure JSON):

* a panel of at most ``HOVER_CELLS`` cells carries its values and the two other panels'
  values for the three-way hover;
* up to ``MAX_CELLS`` cells a panel carries its exact values, and hover shows that panel's;
* above that posviz shows every k-th dimension (exact values of the cells shown) and says so
  in the panel's title.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import numpy as np

from posviz.pipeline import WindowEmbeddings
from posviz.plots._figure import Drawn, FigureSpec, as_figure, spec_of
from posviz.plots._identity import Identity, cell_outlines, identity, row_outlines
from posviz.plots._layout import (
    UNKNOWN,
    Canvas,
    Colorbar,
    RowMarks,
    arrange,
    label_length,
    max_labels,
    position_ticks,
    room_panel_height,
    row_labels,
    square_height,
    three_panels,
)
from posviz.repeats import RepeatedToken, RepeatFacts, repeat_facts, token_names
from posviz.schemes import SchemeSpec, scheme
from posviz.similarity import (
    MAX_POSITIONS,
    READS_ONE,
    NeighbourSimilarity,
    RepeatSimilarity,
    SimilarityFacts,
    distance_spread,
    neighbour_similarity,
    similarities_shown,
    similarity_facts,
)

MAX_CELLS: Final = 65_536  # exact values per panel, about 350 kB of JSON each
HOVER_CELLS: Final = 12_288  # three-way hover (4 floats per cell per panel) up to this size

# A scheme's panel titles are its spec's (SchemeSpec.titles): "<br>" marks where a title
# breaks best when a panel is too narrow for one line.
_VALUE_NAMES: Final = ("token", "position", "input")
_ROPE_VALUE_NAMES: Final = ("token", "cos(p·θ)", "rotated")


@dataclass(frozen=True)
class Reduction:
    """Which dimensions a panel shows: ``range(0, emb_dim, column_step)``."""

    emb_dim: int
    column_step: int

    @property
    def columns(self) -> range:
        """The dimensions a panel shows (every one, or every ``column_step``-th)."""
        return range(0, self.emb_dim, self.column_step)

    @property
    def note(self) -> str:
        """What a panel title says about the dimensions left out (``""`` for none)."""
        if self.column_step == 1:
            return ""
        return f"every {_ordinal(self.column_step)} of {self.emb_dim} dims (exact values)"


def _ordinal(number: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th`` ... ``11th``, ``12th``, ``13th`` ... ``22nd``.

    >>> [_ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 112)]
    ['1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '21st', '22nd', '23rd', '101st', '112th']
    """
    suffixes = {1: "st", 2: "nd", 3: "rd"}
    suffix = "th" if number % 100 in (11, 12, 13) else suffixes.get(number % 10, "th")
    return f"{number}{suffix}"


def reduction_for(num_rows: int, emb_dim: int, *, max_cells: int = MAX_CELLS) -> Reduction:
    """Keep every position; stride the dimensions until a panel fits ``max_cells``."""
    step = max(1, math.ceil(num_rows * emb_dim / max_cells))
    while num_rows * len(range(0, emb_dim, step)) > max_cells:
        step += 1
    return Reduction(emb_dim, step)


def _hovertemplate(index: int, three_way: bool, positional: SchemeSpec) -> str:
    where = "position · token: %{y}<br>dimension: %{x}<br>"
    names = _ROPE_VALUE_NAMES if positional.rotates else _VALUE_NAMES
    if not three_way:
        return where + f"{names[index]} value: %{{z:.4f}}<extra></extra>"
    # customdata per cell: [token value, position value, input value, token id]
    if positional.rotates:  # nothing is added: the pair (j, j + d/2) is rotated
        combined = (
            "token %{customdata[0]:.4f}, cos(p·θ) %{customdata[1]:.4f}"
            " → rotated %{customdata[2]:.4f}"
        )
    else:
        combined = (
            "token %{customdata[0]:.4f} + position %{customdata[1]:.4f}"
            " = input %{customdata[2]:.4f}"
        )
    return where + "token id: %{customdata[3]:.0f}<br>" + combined + "<extra></extra>"


def _marks_note(note: str, marks: Identity, outlines: bool) -> str:
    """The panel note, saying how many repeated tokens had no room to be outlined (when some
    are: with none outlined there is nothing to explain)."""
    if not (outlines and marks.left_out and marks.groups):
        return note
    total = len(marks.groups) + marks.left_out
    left = f"outlined: {len(marks.groups)} of {total} repeated tokens"
    return f"{note}; {left}" if note else left


@dataclass(frozen=True)
class EmbeddingsDecisions:
    """What :func:`embeddings_chart` decided, for the words beside the figure to read.

    ``repeats`` holds the repeated tokens measured on the cells drawn (the dimensions in
    ``columns``), the tokens the figure marks first, in the order it marks them: the first is
    the one the sentences name (:attr:`main`). Marked rows are always labelled; ``outlined``
    says whether they are outlined too (not on a question slide).
    """

    stacked: bool  # panels one under the other (the words say top / bottom)
    panels: int  # panels drawn, 1 to 3 (token | position | input)
    rows: range  # positions drawn: every one of the window
    columns: range  # dimensions drawn: range(0, emb_dim, step)
    emb_dim: int  # d, the dimensions the window has
    groups: tuple[tuple[int, ...], ...]  # the repeated tokens' positions marked, in order
    outlined: bool  # the marked rows are outlined (else only labelled)
    left_out: int  # repeated tokens not marked (no room to label their rows)
    repeats: RepeatFacts  # measured on the drawn columns; marked tokens first
    fills: bool  # the figure takes the window's height below its top (else its own height)

    @property
    def sampled(self) -> bool:
        """Whether the panels draw only every k-th dimension."""
        return len(self.columns) < self.emb_dim

    @property
    def main(self) -> RepeatedToken | None:
        """The repeated token the figure marks first, the one the sentences name (``None``:
        no token is marked)."""
        return self.repeats.tokens[0] if self.groups else None


@dataclass(frozen=True)
class SimilarityDecisions:
    """What :func:`similarity_chart` decided, and the numbers of the cells it drew.

    ``facts`` and ``neighbours`` are read from the matrices of the rows drawn (the first
    ``len(rows)`` positions of ``positions``); ``facts.tokens`` lists the marked tokens
    first, in the order the figure marks them.
    """

    stacked: bool
    rows: range  # positions drawn (rows and columns): the first len(rows)
    positions: int  # n, the window's length
    groups: tuple[tuple[int, ...], ...]  # the repeated tokens' positions marked, in order
    outlined: bool
    left_out: int
    facts: SimilarityFacts  # of the rows drawn; marked tokens first
    neighbours: NeighbourSimilarity | None  # the position panel's neighbours vs distant pairs
    spread: float  # the position panel's widest spread along a diagonal (distance_spread)
    fills: bool

    @property
    def cut(self) -> bool:
        """Whether the window has more positions than the figure draws."""
        return len(self.rows) < self.positions

    @property
    def main(self) -> RepeatSimilarity | None:
        """The repeated token the figure marks first (``None``: none marked)."""
        return self.facts.tokens[0] if self.groups else None


def embeddings_chart(
    window: WindowEmbeddings,
    *,
    lecture: bool = False,
    panels: int = 3,
    stacked: bool = False,
    outlines: bool = True,
    canvas: Canvas = UNKNOWN,
    facts: RepeatFacts | None = None,
    max_cells: int = MAX_CELLS,
    hover_cells: int = HOVER_CELLS,
) -> Drawn[EmbeddingsDecisions]:
    """One figure, three heatmaps: token, positional and input embeddings of ``window``, and
    what it decided (:class:`EmbeddingsDecisions`).

    Rows are labelled with the window's tokens as the chips write them; a repeated token's
    rows are always labelled and, with ``outlines`` (lecture mode's question steps turn them
    off), outlined in the token and input panels: solid where its rows are identical in the
    cells drawn, dashed where not. ``panels`` draws only the first 1, 2 or 3 panels (lecture
    mode's steps; the colour scale stays the one of all three, so colours do not shift
    between steps). ``canvas``: the room the chart has on the page (narrow: the panels are
    stacked, one under the other, each the full width, and the figure is as tall as they need;
    lecture mode side by side: as tall as the window below the chart's top); with
    ``Canvas()`` ``stacked`` stacks them. ``lecture`` uses projector type sizes (every label
    at least 20 px). ``facts``: ``repeat_facts(window, columns=...)`` over the dimensions the
    figure draws, if the caller has it already (``ValueError`` if measured over others).

    >>> from posviz.embeddings import SeededEmbeddings
    >>> from posviz.pipeline import embed_window
    >>> w = embed_window(SeededEmbeddings.create(seed=1, emb_dim=4), [5, 7, 5], context_length=4)
    >>> drawn = embeddings_chart(w)
    >>> [trace["type"] for trace in drawn.spec.data], drawn.decisions.groups
    (['heatmap', 'heatmap', 'heatmap'], ((0, 2),))
    >>> len(embeddings_figure(w, panels=1).data)
    1
    """
    if not 1 <= panels <= 3:
        raise ValueError(f"panels must be 1, 2 or 3, got {panels}")
    matrices = [
        window.token_embeddings.numpy(),
        window.pos_embeddings.numpy(),
        window.input_embeddings.numpy(),
    ]  # each [n, d] float32
    num_rows = len(window.token_ids)
    reduction = reduction_for(num_rows, window.emb_dim, max_cells=max_cells)
    columns = np.asarray(reduction.columns)
    shown = [np.ascontiguousarray(m[:, columns], dtype=np.float32) for m in matrices]  # [n, k]
    three_way = num_rows * len(columns) <= hover_cells
    customdata = None
    if three_way:
        ids = np.broadcast_to(
            np.asarray(window.token_ids, dtype=np.float32)[:, None], shown[0].shape
        )
        customdata = np.ascontiguousarray(np.stack([*shown, ids], axis=-1))  # [n, k, 4]

    # RoPE's middle panel is cos(angle), not something added: it gets its own [-1, 1] axis.
    spec = scheme(window.scheme)
    own_axis = spec.rotates
    on_shared_axis = [m for index, m in enumerate(shown) if not (own_axis and index == 1)]
    limit = float(max(np.abs(m).max() for m in on_shared_axis)) if num_rows else 1.0
    colorbars = [Colorbar("coloraxis", -limit, limit, "value")]
    if own_axis and panels >= 2:
        colorbars.append(Colorbar("coloraxis2", -1.0, 1.0, "cos", under_panel=1))
    arrangement = arrange(
        canvas, lecture=lecture, count=panels, token_texts=window.token_texts, stacked=stacked
    )
    sizes = arrangement.sizes
    titles = spec.titles.embeddings[:panels]
    note = reduction.note
    x_tick_height = sizes.tick * 1.5 + sizes.text * 1.5 + 10
    panel_height: float
    if arrangement.stacked:  # a row per label, lecture type included (20 px, 1.15 apart)
        panel_height = max(200, min(420, (24 if lecture else 22) * num_rows))
    else:
        panel_height = max(360, min(720, (30 if lecture else 24) * num_rows))
    if not lecture:  # side by side on a measured window: end at its bottom, if readable
        # The titles' note at its longest: the dimensions left out and the tokens not outlined.
        widest = "; ".join(filter(None, (note, "outlined: 99 of 999 repeated tokens")))
        panel_height = room_panel_height(
            canvas, arrangement, titles=titles, note=widest, x_tick_height=x_tick_height,
            panel_height=panel_height, rows=num_rows, bars_under=len(colorbars) - 1,
        )  # fmt: skip
    budget = max_labels(
        label_length(lecture=lecture, stacked=arrangement.stacked, panel_height=panel_height),
        sizes.tick,
    )
    marks = identity(window.token_ids, max_rows=budget)
    names = token_names(window)
    if facts is None:
        facts = repeat_facts(window, columns=reduction.columns, names=names)
    elif (facts.columns or range(window.emb_dim)).step != reduction.column_step:
        raise ValueError(
            f"facts measured over the dimensions {facts.columns or 'all'}, the figure draws "
            f"{reduction.columns}: pass repeat_facts(window, columns={reduction.columns})"
        )
    facts = facts.led_by(marks.groups)
    fills = lecture and not arrangement.stacked
    grid = three_panels(
        titles=titles,
        note=_marks_note(note, marks, outlines),
        token_texts=window.token_texts,
        x_axis={
            "title": {"text": "dimension", "standoff": 4},
            "tickfont": {"size": sizes.tick},
            "nticks": 6,
            "automargin": False,
        },
        colorbars=colorbars,
        lecture=lecture,
        stacked=stacked,
        panel_height=panel_height,
        x_tick_height=x_tick_height,
        follows_page=lecture,  # lecture mode: the chart takes the window's height
        marks=marks.row_marks(coloured=outlines, tick_texts=names),
        canvas=canvas,
    )
    traces: list[dict[str, object]] = [
        {
            "type": "heatmap",
            "z": z,
            "x": columns,
            "y": grid.rows,
            "coloraxis": "coloraxis2" if own_axis and index == 1 else "coloraxis",
            **({} if customdata is None else {"customdata": customdata}),
            "hovertemplate": _hovertemplate(index, three_way, spec),
            "xaxis": x_axis,
            "yaxis": y_axis,
            "name": spec.titles.embeddings[index].replace("<br>", " "),
        }
        for index, (z, (x_axis, y_axis)) in enumerate(zip(shown, grid.axes, strict=False))
    ]
    layout = grid.layout
    marked = facts.tokens[: len(marks.groups)]  # the marked tokens, in the marks' order
    if outlines and marks.groups:
        width = 4 if lecture else 3
        shapes = row_outlines(
            marks,
            axes=grid.axes[0],
            identical=[token.token_difference == 0.0 for token in marked],
            width=width,
        )
        if panels == 3:
            shapes += row_outlines(
                marks,
                axes=grid.axes[2],
                identical=[token.input_difference == 0.0 for token in marked],
                width=width,
            )
        layout["shapes"] = shapes
    decisions = EmbeddingsDecisions(
        stacked=arrangement.stacked,
        panels=panels,
        rows=range(num_rows),
        columns=reduction.columns,
        emb_dim=window.emb_dim,
        groups=marks.groups,
        outlined=outlines and bool(marks.groups),
        left_out=marks.left_out,
        repeats=facts,
        fills=fills,
    )
    return Drawn(FigureSpec(traces, layout), decisions)


def similarity_chart(
    window: WindowEmbeddings,
    *,
    lecture: bool = False,
    stacked: bool = False,
    outlines: bool = True,
    canvas: Canvas = UNKNOWN,
    max_positions: int = MAX_POSITIONS,
) -> Drawn[SimilarityDecisions]:
    """Three ``n × n`` heatmaps: cosine similarity between positions of the token, position
    and input matrices, on one colour axis fixed to ``[-1, 1]``, and what the figure decided
    with the numbers of its cells (:class:`SimilarityDecisions`).

    Rows and columns are labelled ``position · token`` (escaped). Windows longer than
    ``max_positions`` show their first ``max_positions`` positions and say so in the titles.
    A repeated token's rows are always labelled and, with ``outlines``, the cells of each pair
    of its occurrences are outlined in the token and input panels (solid where they read
    1.000, dashed where not). ``canvas`` and ``stacked`` arrange the panels as in
    :func:`embeddings_chart`.

    >>> from posviz.embeddings import SeededEmbeddings
    >>> from posviz.pipeline import embed_window
    >>> w = embed_window(SeededEmbeddings.create(seed=1, emb_dim=4), [5, 9, 5], context_length=4)
    >>> drawn = similarity_chart(w)
    >>> [trace["z"].shape for trace in drawn.spec.data], drawn.decisions.main.positions
    ([(3, 3), (3, 3), (3, 3)], (0, 2))
    """
    if max_positions < 1:
        raise ValueError(f"max_positions must be at least 1, got {max_positions}")
    shown_rows = min(len(window.token_ids), max_positions)
    matrices = similarities_shown(window, shown_rows)  # each [shown, shown]
    texts = window.token_texts[:shown_rows]
    labels = row_labels(texts)
    note = ""
    if shown_rows < len(window.token_ids):
        note = f"first {shown_rows} of {len(window.token_ids)} positions"
    arrangement = arrange(canvas, lecture=lecture, count=3, token_texts=texts, stacked=stacked)
    sizes = arrangement.sizes
    # Column labels stand upright (-90°): each needs one line of width along the axis.
    names = token_names(window, shown_rows)
    columns = position_ticks(
        texts,
        font_size=sizes.tick,
        length=arrangement.panel_width,
        marks=RowMarks(tick_texts=names),
    )
    panel_height = max(300, min(720, 22 * shown_rows)) + (60 if lecture else 0)
    # Stacked panels are square, or taller when their rows need it (three_panels' own rule).
    length = (
        square_height(arrangement.panel_width, rows=shown_rows, sizes=sizes)
        if arrangement.stacked
        else panel_height
    )
    budget = max_labels(
        label_length(lecture=lecture, stacked=arrangement.stacked, panel_height=length),
        sizes.tick,
    )
    marks = identity(window.token_ids[:shown_rows], max_rows=budget)
    facts = similarity_facts(
        window, max_positions=shown_rows, matrices=matrices, names=names
    ).led_by(marks.groups)
    grid = three_panels(
        titles=scheme(window.scheme).titles.similarity,
        note=_marks_note(note, marks, outlines),
        token_texts=texts,
        x_axis={
            "type": "category",
            "tickangle": -90,
            "tickmode": "array",
            "tickvals": columns.values,
            "ticktext": columns.texts,
            "tickfont": {"size": sizes.tick},
            "automargin": False,
        },
        colorbars=[Colorbar("coloraxis", -1.0, 1.0, "cosine")],
        lecture=lecture,
        stacked=stacked,
        panel_height=panel_height,
        x_tick_height=columns.width + sizes.tick + 12,  # the widest label, upright
        square=True,
        marks=marks.row_marks(coloured=outlines, tick_texts=names),
        # Lecture mode on a measured canvas: as tall as the window leaves (Canvas(): as always).
        follows_page=lecture and canvas.measured,
        canvas=canvas,
    )
    hovertemplate = (
        "row: %{y}<br>column: %{x}<br>cosine similarity: %{z:.4f}<extra>%{fullData.name}</extra>"
    )
    traces = [
        {
            "type": "heatmap",
            "z": np.ascontiguousarray(matrix.numpy(), dtype=np.float32),
            "x": labels,
            "y": grid.rows,
            "coloraxis": "coloraxis",
            "hovertemplate": hovertemplate,
            "xaxis": x_axis,
            "yaxis": y_axis,
            "name": scheme(window.scheme).titles.similarity[index].replace("<br>", " "),
        }
        for index, (matrix, (x_axis, y_axis)) in enumerate(
            zip((matrices.token, matrices.position, matrices.input), grid.axes, strict=True)
        )
    ]
    layout = grid.layout
    marked = facts.tokens[: len(marks.groups)]  # the marked tokens, in the marks' order
    if outlines and marks.groups:
        width = 3 if lecture else 2
        shapes: list[dict[str, object]] = []
        for panel, reads in ((0, "token"), (2, "input")):
            reads_one = [getattr(token, reads)[0] >= READS_ONE for token in marked]
            shapes += cell_outlines(marks, axes=grid.axes[panel], identical=reads_one, width=width)
        layout["shapes"] = shapes
    decisions = SimilarityDecisions(
        stacked=arrangement.stacked,
        rows=range(shown_rows),
        positions=len(window.token_ids),
        groups=marks.groups,
        outlined=outlines and bool(marks.groups),
        left_out=marks.left_out,
        facts=facts,
        neighbours=neighbour_similarity(matrices.position, emb_dim=window.emb_dim),
        spread=distance_spread(matrices.position),
        fills=lecture and not arrangement.stacked,
    )
    return Drawn(FigureSpec(traces, layout), decisions)


embeddings_spec = spec_of(embeddings_chart)
embeddings_figure = as_figure(embeddings_spec)


similarity_spec = spec_of(similarity_chart)
similarity_figure = as_figure(similarity_spec)
