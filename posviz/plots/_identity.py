"""Identity drawn in the figures: the rows of a token that repeats in the window, outlined.

One colour per repeated token id (the most frequent first, as the lesson sentence names
them). In the embeddings figure each occurrence's row is outlined in the token panel and in the
input panel: a solid outline where the rows are identical (largest difference 0.0), a dashed
one where they differ, so the line says it too, not only the colour. In the similarity figure
the cells of each pair of occurrences are outlined in the token and input panels. The rows'
tick labels are shown bold in the token's colour, and their hover names the twins ("same
token vector as rows 4 and 7"). Twins closer than a label's height share one label (the first
marked: :func:`posviz.plots._layout.spread_marks`), so labels never print over each other; the
others keep their outline and their hover.

Every outline is a Plotly shape placed in the axes' own coordinates (``x domain`` across a
panel, a row's category index ± 0.5 down it), so the outlines stay on their rows whatever height
the page gives the chart. Each is drawn twice, a white casing under the coloured line, so it
shows on red, white and blue cells alike. The casing reaches :data:`MAX_OUTLINE_REACH` px out
of the plot at most: less than the tick marks' length, which keeps the labels off it.

A window with many repeats marks as many tokens (most frequent first) as the position axis has
room to label (:func:`posviz.plots._layout.max_labels`); the rest are left out, and
:attr:`Identity.left_out` says how many.

>>> marks = identity([32, 8278, 318, 8278, 318, 8278], max_rows=10)
>>> marks.groups, marks.left_out
(((1, 3, 5), (2, 4)), 0)
>>> marks.row_marks().notes[1]
'same token vector as rows 3 and 5'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from posviz.plots._layout import RowMarks
from posviz.repeats import repeated_positions

# Saturated, distinct from the heatmaps' red / white / blue, readable as text on white:
# orange (as the chips of repeated tokens), violet, green, black, then again.
MARK_COLOURS: Final = ("#c65102", "#6a3d9a", "#1b7837", "#111111")
CASING: Final = "#ffffff"
MAX_MARKED_CELLS: Final = 200  # outlined cells per similarity panel (2 shapes each)
_NAMED_TWINS: Final = 4  # rows named in a hover note before "and N more"
MAX_OUTLINE_REACH: Final = 3  # px a casing (width + 2, at most 6) reaches past its rectangle


@dataclass(frozen=True)
class Identity:
    """The repeated tokens a figure marks: each one's positions, and its colour."""

    groups: tuple[tuple[int, ...], ...]  # positions of each marked token, most frequent first
    left_out: int  # repeated tokens not marked (no room to label their rows)

    def colour(self, index: int) -> str:
        """The colour of group ``index``."""
        return MARK_COLOURS[index % len(MARK_COLOURS)]

    def row_marks(
        self, *, coloured: bool = True, tick_texts: Sequence[str] | None = None
    ) -> RowMarks:
        """The marked rows for :func:`posviz.plots._layout.position_ticks`, the most frequent
        token's first (labelled first where twins crowd): bold in their colour unless
        ``coloured`` is false, hover naming the twins."""
        colours: dict[int, str | None] = {}
        notes: dict[int, str] = {}
        for index, positions in enumerate(self.groups):
            for position in positions:
                colours[position] = self.colour(index) if coloured else None
                notes[position] = _twins(position, positions)
        return RowMarks(colours=colours, notes=notes, tick_texts=tick_texts)


def _twins(position: int, positions: Sequence[int]) -> str:
    others = [str(p) for p in positions if p != position]
    if len(others) > _NAMED_TWINS:
        shown = ", ".join(others[:_NAMED_TWINS])
        return f"same token vector as rows {shown} and {len(others) - _NAMED_TWINS} more"
    if len(others) == 1:
        return f"same token vector as row {others[0]}"
    return f"same token vector as rows {', '.join(others[:-1])} and {others[-1]}"


def identity(token_ids: Sequence[int], *, max_rows: int) -> Identity:
    """The repeated tokens of ``token_ids`` to mark: most frequent first (then by first
    position), as many as keep the marked rows within ``max_rows``."""
    groups = sorted(repeated_positions(token_ids).values(), key=lambda g: (-len(g), g[0]))
    chosen: list[tuple[int, ...]] = []
    rows = 0
    for positions in groups:
        if rows + len(positions) <= max_rows:
            chosen.append(positions)
            rows += len(positions)
    return Identity(tuple(chosen), len(groups) - len(chosen))


def _outline(
    *, x_ref: str, y_ref: str, x: tuple[float, float], y: tuple[float, float], colour: str,
    width: float, dash: str, x_domain: bool
) -> list[dict[str, object]]:  # fmt: skip
    """A rectangle as two shapes: a white casing, then the coloured line on top."""
    if (width + 2) / 2 > MAX_OUTLINE_REACH:
        raise ValueError(
            f"outline width {width} px reaches past {MAX_OUTLINE_REACH} px with its casing: "
            f"use at most {2 * MAX_OUTLINE_REACH - 2} px"
        )
    base: dict[str, object] = {
        "type": "rect",
        "xref": f"{x_ref} domain" if x_domain else x_ref,
        "yref": y_ref,
        "x0": x[0],
        "x1": x[1],
        "y0": y[0],
        "y1": y[1],
        "fillcolor": "rgba(0,0,0,0)",
        "layer": "above",
    }
    return [
        {**base, "line": {"color": CASING, "width": width + 2, "dash": "solid"}},
        {**base, "line": {"color": colour, "width": width, "dash": dash}},
    ]


def row_outlines(
    marks: Identity, *, axes: tuple[str, str], identical: Sequence[bool], width: float
) -> list[dict[str, object]]:
    """Shapes outlining each marked row across the panel drawn on ``axes`` (``("x3", "y")``);
    ``identical[i]``: group ``i``'s rows are identical in this panel (solid line, else
    dashed)."""
    x_ref, y_ref = axes
    shapes: list[dict[str, object]] = []
    for index, positions in enumerate(marks.groups):
        dash = "solid" if identical[index] else "dash"
        for position in positions:
            shapes += _outline(
                x_ref=x_ref, y_ref=y_ref, x=(0.0, 1.0), y=(position - 0.5, position + 0.5),
                colour=marks.colour(index), width=width, dash=dash, x_domain=True,
            )  # fmt: skip
    return shapes


def pair_cells(marks: Identity, *, limit: int = MAX_MARKED_CELLS) -> list[tuple[int, int, int]]:
    """``(row, column, group)`` of each cell holding two occurrences of one marked token (both
    halves of the symmetric matrix, the diagonal left out), at most ``limit``."""
    cells = [
        (p, q, index)
        for index, positions in enumerate(marks.groups)
        for p in positions
        for q in positions
        if p != q
    ]
    return cells[:limit]


def cell_outlines(
    marks: Identity, *, axes: tuple[str, str], identical: Sequence[bool], width: float
) -> list[dict[str, object]]:
    """Shapes outlining the cells of :func:`pair_cells` in the similarity panel on ``axes``;
    ``identical[i]``: group ``i``'s pairs read 1.000 in this panel (solid, else dashed)."""
    x_ref, y_ref = axes
    shapes: list[dict[str, object]] = []
    for row, column, index in pair_cells(marks):
        shapes += _outline(
            x_ref=x_ref, y_ref=y_ref, x=(column - 0.5, column + 0.5), y=(row - 0.5, row + 0.5),
            colour=marks.colour(index), width=width,
            dash="solid" if identical[index] else "dash", x_domain=False,
        )  # fmt: skip
    return shapes
