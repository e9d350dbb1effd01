"""The compare figure: two texts, one above the other, four matrices each.

Columns: token embeddings | what the scheme makes of them (input embeddings; for RoPE the
rotated queries) | context vectors of self-attention without positions | with positions.
Rows: the first text, then the second. Each column has its own symmetric colour range, shared
by both texts, so the same vector looks the same in both rows. Each panel title says what the
numbers show: "same rows, reordered" or "differ". On a canvas too narrow for four titles side
by side (a phone), the four matrices stand one under the other, each as two full-width panels
(first text, second text).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import numpy as np
import torch

from posviz.compare import OrderComparison
from posviz.plots._figure import Drawn, FigureSpec, as_figure, spec_of
from posviz.plots._layout import (
    COLORSCALE_STEPS,
    MEASURED_ROW_PITCH,
    TOOLBAR_ROOM,
    UNKNOWN,
    Canvas,
    fill_height,
    panel_title,
    row_labels,
    text_width,
    wrap_title,
)
from posviz.plots._notes import lecture_line, panel_note
from posviz.repeats import token_names
from posviz.schemes import scheme

MAX_PANEL_CELLS: Final = 8_192  # 8 panels: about 0.4 MB of figure JSON at most
_SAME: Final = "same rows, reordered"
_DIFFER: Final = "differ"


def _verdict(same: bool) -> str:
    return _SAME if same else _DIFFER


def _dims_shown(num_rows: int, emb_dim: int) -> range:
    """Every dimension, or every k-th one so a panel stays within ``MAX_PANEL_CELLS``."""
    step = max(1, math.ceil(num_rows * emb_dim / MAX_PANEL_CELLS))
    return range(0, emb_dim, step)


def _position_axis(
    labels: list[str], texts: list[str], *, font_size: int, step: int = 1
) -> dict[str, object]:
    """A row axis of ``position · token`` labels (``texts``, as the chips write the tokens),
    every ``step``-th row labelled, position 0 at the top; ``labels`` are the rows' category
    names (hover: exact bytes)."""
    return {
        "autorange": "reversed",
        "type": "category",
        "tickfont": {"size": font_size},
        "automargin": True,
        "tickmode": "array",
        "tickvals": labels[::step],
        "ticktext": texts[::step],
    }


def _label_step(rows: int, panel_px: float, font_size: int) -> int:
    """Every how many rows a panel ``panel_px`` tall labels, so that labels of ``font_size``
    px stand :data:`~posviz.plots._layout.MEASURED_ROW_PITCH` font sizes apart.

    >>> _label_step(5, 200, 20), _label_step(5, 75, 20), _label_step(0, 75, 20)
    (1, 2, 1)
    """
    if rows == 0 or panel_px <= 0:
        return 1
    return max(1, math.ceil(rows * MEASURED_ROW_PITCH * font_size / panel_px))


@dataclass(frozen=True)
class CompareDecisions:
    """What :func:`compare_chart` drew: the two texts it compared, token by token (the rows of
    its panels), the dimensions its panels show, its verdicts and its arrangement."""

    token_ids_a: tuple[int, ...]  # the first text's rows, as compared
    token_ids_b: tuple[int, ...]  # the second text's rows
    labels_a: tuple[str, ...]  # their tokens as the chips and tick labels write them
    labels_b: tuple[str, ...]
    dims: range  # dimensions each panel draws
    emb_dim: int  # d, the dimensions each matrix has
    verdicts: tuple[str, ...]  # each column's title note: "same rows, reordered" or "differ"
    stacked: bool  # the four matrices one under the other (a phone)
    fills: bool  # the figure takes the window's height below its top

    @property
    def sampled(self) -> bool:
        """Whether the panels draw only every k-th dimension."""
        return len(self.dims) < self.emb_dim


def compare_chart(
    comparison: OrderComparison, *, lecture: bool = False, canvas: Canvas = UNKNOWN
) -> Drawn[CompareDecisions]:
    """Eight heatmaps (2 texts x 4 matrices) for a comparison of two reorderings, and what
    the figure decided (:class:`CompareDecisions`).

    ``canvas``: the room the chart has on the page; when a panel of the 4 x 2 grid would be
    narrower than its title, the matrices are stacked (:class:`_StackedGrid`) and the figure
    is as tall as they need. ``Canvas()``: the grid, as always. Raises ``ValueError`` if
    ``comparison`` is not a reordering (nothing to draw).

    >>> from posviz.view import book_attention
    >>> from posviz.compare import compare_order
    >>> from posviz.embeddings import SeededEmbeddings
    >>> from posviz.tokenizer import encode
    >>> comparison = compare_order(SeededEmbeddings.create(seed=1, emb_dim=8),
    ...     encode("The dog bites the man"), encode("The man bites the dog"),
    ...     context_length=8, scheme="learned", weights=book_attention(8))
    >>> drawn = compare_chart(comparison)
    >>> drawn.decisions.labels_b, drawn.decisions.verdicts[2]
    (('The', '␣man', '␣bites', '␣the', '␣dog'), 'same rows, reordered')
    """
    a, b = comparison.a, comparison.b
    without, positioned = comparison.without_positions, comparison.with_positions
    if a is None or b is None or without is None or positioned is None:
        raise ValueError(f"nothing to draw for a comparison with status {comparison.status!r}")
    spec = scheme(comparison.scheme)
    rope = spec.rotates
    mask = " · causal mask" if comparison.causal else ""
    if rope:
        second = (
            "queries<br>rotated by RoPE",
            positioned.attention_a.queries,
            positioned.attention_b.queries,
        )
        second_same = False
    elif not spec.adds_to_input:  # none, and ALiBi and T5 bias the scores
        second = ("input = token<br>embeddings", a.input_embeddings, b.input_embeddings)
        second_same = True
    else:
        second = ("input<br>embeddings", a.input_embeddings, b.input_embeddings)
        second_same = False
    columns: list[tuple[str, torch.Tensor, torch.Tensor]] = [
        ("token<br>embeddings", a.token_embeddings, b.token_embeddings),
        second,
        ("context vectors<br>no positions", without.context_a, without.context_b),
        ("context vectors<br>with positions", positioned.context_a, positioned.context_b),
    ]
    verdicts = [
        _verdict(comparison.token_rows_equal),
        _verdict(second_same),
        _verdict(without.permuted) + mask,
        _verdict(positioned.permuted) + mask,
    ]
    labels = (row_labels(a.token_texts), row_labels(b.token_texts))
    names = (token_names(a), token_names(b))
    tick_texts = (row_labels(names[0]), row_labels(names[1]))
    n = len(a.token_ids)
    font_size = round((22 if lecture else 14) * canvas.type_scale)
    gap, row_gap = 0.03, 0.12
    width, height = (1 - 3 * gap) / 4, (1 - row_gap) / 2
    stacked = _stacks(canvas, [c[0] for c in columns], tick_texts, font_size, width)
    emb_dim = int(a.token_embeddings.shape[1])
    drawn_dims = _dims_shown(n, emb_dim)
    sample = f"; 1 in {drawn_dims.step} of {emb_dim} dims" if len(drawn_dims) < emb_dim else ""
    notes = [verdict + sample for verdict in verdicts]
    if stacked:  # one title a row, wrapped to the plot's width; its band as tall as they need
        room = _plot_width(canvas, tick_texts, font_size)
        titles = [
            wrap_title(c[0].replace("<br>", " "), width=room, font_size=font_size) for c in columns
        ]
        notes = [
            panel_note(note, width=room, font_size=font_size, lecture=lecture) for note in notes
        ]
        lines = max(
            t.count("<br>") + 1 + m.count("<br>") for t, m in zip(titles, notes, strict=True)
        )
        grid: _StackedGrid | None = _StackedGrid(n, font_size, title_lines=lines)
    else:
        titles = [c[0] for c in columns]
        notes = [
            f"<br>{lecture_line(note)}" if lecture else f"<br><sup>{note}</sup>" for note in notes
        ]
        grid = None
    traces: list[dict[str, object]] = [{} for _ in range(8)]  # row by row: first text, second
    layout: dict[str, object] = {
        "font": {"size": font_size},
        "hovermode": "closest",
        "hoverlabel": {"font": {"size": font_size}},
        "plot_bgcolor": "#f4f4f4",
        # Lecture mode's stage may give the chart less height than asked: room for the bottom
        # row's ticks and title in px, and no tick labels under the top row (the gap between
        # the rows is a fraction of the height).
        "margin": {"t": 140 if lecture else 100, "b": 90 if lecture else 50, "l": 10, "r": 10},
        "height": max(560, min(1000, 260 + 2 * 28 * n)) + (200 if lecture else 0),
        "annotations": [],
    }
    if grid is not None:
        # The labels' room is laid out here, as on the heatmaps (no automargin: Plotly would
        # measure, then push the rotated "first text" into the widest label on a phone).
        label = max(text_width(text, font_size - 2) for text in (*tick_texts[0], *tick_texts[1]))
        left = round(10 + label + 8 + font_size * 1.6)
        layout |= {"margin": {"t": 0, "b": 0, "l": left, "r": 10}, "height": round(grid.height)}
    elif lecture and canvas.height is not None:  # lecture mode: as tall as the window leaves
        layout["height"] = fill_height(canvas.height)
    step = 1  # the grid of a window too short for every row's label labels every step-th
    if grid is None and canvas.measured:
        margin = layout["margin"]
        plot = float(layout["height"]) - margin["t"] - margin["b"]  # type: ignore[index, arg-type]
        step = _label_step(n, plot * height, font_size - 2)
    for column, (title, matrix_a, matrix_b) in enumerate(columns):
        dims = np.asarray(_dims_shown(n, int(matrix_a.shape[1])))
        shown = [
            np.ascontiguousarray(m.to(torch.float32).numpy()[:, dims]) for m in (matrix_a, matrix_b)
        ]  # each [n, k] float32
        limit = float(max(np.abs(z).max() for z in shown)) or 1.0
        axis = "coloraxis" if column == 0 else f"coloraxis{column + 1}"
        layout[axis] = {
            "colorscale": COLORSCALE_STEPS,
            "cmin": -limit,
            "cmid": 0.0,
            "cmax": limit,
            "showscale": False,
        }
        start = column * (width + gap)
        name = title.replace("<br>", " ")
        for row, z in enumerate(shown):
            text = ("first", "second")[row]
            index = row * 4 + column + 1
            suffix = "" if index == 1 else str(index)  # plotly's names: x, x2, ... (not x1)
            traces[index - 1] = {
                "type": "heatmap",
                "z": z,
                "x": dims,
                "y": labels[row],
                "coloraxis": axis,
                "xaxis": f"x{suffix}",
                "yaxis": f"y{suffix}",
                "name": f"{text} text: {name}",
                "hovertemplate": f"{text} text<br>{name}<br>"
                "position · token: %{y}<br>dimension: %{x}<br>value: %{z:.4f}<extra></extra>",
            }
            bottom = (1 - height) if row == 0 else 0.0
            x_domain, y_domain = [start, start + width], [bottom, bottom + height]
            if grid is not None:
                x_domain, y_domain = [0.0, 1.0], grid.panel(column, row)
            layout[f"xaxis{suffix}"] = {
                "domain": x_domain,
                "anchor": f"y{suffix}",
                "title": {"text": "dimension" if row == 1 else ""},
                "showticklabels": row == 1 or not lecture,
                **({} if column == 0 else {"matches": "x" if row == 0 else "x5"}),
            }
            labelled = column == 0 or grid is not None  # stacked: every panel has its rows
            layout[f"yaxis{suffix}"] = {
                **_position_axis(labels[row], tick_texts[row], font_size=font_size - 2, step=step),
                "domain": y_domain,
                "anchor": f"x{suffix}",
                "showticklabels": labelled,
                "title": {
                    "text": ("first text" if row == 0 else "second text") if labelled else "",
                    **({} if grid is None else {"standoff": 6}),
                },
                **({} if grid is None else {"automargin": False}),
            }
        layout["annotations"].append(  # type: ignore[attr-defined]
            panel_title(
                titles[column],
                note=notes[column],
                x=start + width / 2 if grid is None else 0.5,
                y=1.0 if grid is None else grid.panel(column, 0)[1],
                font_size=font_size,
            )
        )
    decisions = CompareDecisions(
        token_ids_a=a.token_ids,
        token_ids_b=b.token_ids,
        labels_a=names[0],
        labels_b=names[1],
        dims=drawn_dims,
        emb_dim=emb_dim,
        verdicts=tuple(verdicts),
        stacked=stacked,
        fills=lecture and not stacked,
    )
    return Drawn(FigureSpec(traces, layout), decisions)


def _stacks(
    canvas: Canvas,
    titles: list[str],
    labels: tuple[list[str], list[str]],
    font_size: int,
    width: float,
) -> bool:
    """Whether a measured canvas is too narrow for the 4 x 2 grid: a panel (``width`` of the
    plot, right of the first column's position labels) narrower than its widest title line."""
    if canvas.width is None:
        return False
    plot = _plot_width(canvas, labels, font_size)
    lines = [line for title in titles for line in title.split("<br>")]
    widest = max(text_width(line, font_size, bold=True) for line in lines)
    return plot * width < widest + 12


def _plot_width(canvas: Canvas, labels: tuple[list[str], list[str]], font_size: int) -> float:
    """px of plot a measured canvas leaves right of the position labels (the figure's side
    margins, the widest label, the rotated axis title)."""
    label = max(text_width(text, font_size - 2) for text in (*labels[0], *labels[1]))
    return (canvas.width or 0) - 20 - label - font_size * 1.6


compare_spec = spec_of(compare_chart)
compare_figure = as_figure(compare_spec)  # compare_chart(...).spec.figure()


class _StackedGrid:
    """The four matrices one under the other, each a title band, the first text's panel, a
    small gap, the second text's panel and its dimension ticks; px from the top, as paper
    fractions for Plotly."""

    def __init__(self, rows: int, font_size: int, *, title_lines: int = 2) -> None:
        self.toolbar = float(TOOLBAR_ROOM)  # a phone shows Plotly's toolbar all the time
        self.title = font_size * 1.3 * title_lines + 12  # the title's lines and its verdict's
        # Every row labelled, its tick labels (font_size - 2) apart as on every measured chart.
        row = max(22, math.ceil(MEASURED_ROW_PITCH * (font_size - 2)) + 1)
        self.panel_px = max(70.0, float(row * rows))
        self.gap = 10.0
        self.ticks = font_size * 3 + 24  # tick labels, the "dimension" title and air
        self.group = self.title + 2 * self.panel_px + self.gap + self.ticks
        self.height = self.toolbar + 4 * self.group

    def panel(self, group: int, text: int) -> list[float]:
        """``[bottom, top]`` of text ``text``'s panel of matrix ``group``, paper fractions."""
        top = self.toolbar + group * self.group + self.title + text * (self.panel_px + self.gap)
        return [1 - (top + self.panel_px) / self.height, 1 - top / self.height]
