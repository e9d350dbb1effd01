"""The words of the Geometry tab: every sentence is built from the numbers of a
:class:`~posviz.geometry.GeometryView`, so none can claim what the figure does not show.

>>> from posviz.config import Settings
>>> from posviz.geometry import build_geometry
>>> from posviz.view import build_view
>>> view = build_geometry(build_view(Settings(context_length=64, emb_dim=16, scheme="sinusoidal")))
>>> print(shape_sentence(view.main))
**sinusoidal (formula)**: 90 % of the variance of its 64 centred rows lies in **6 of 16** \
directions; the three drawn hold 55 %.
"""

from __future__ import annotations

from typing import Final

from posviz.geometry import GeometryView, TableGeometry, TokenCosines
from posviz.plots.geometry import GeometryDecisions
from posviz.schemes import scheme
from posviz.token_text import for_markdown

CURVE_BELOW: Final = 0.5  # step ratio under this: neighbours are close, the rows trace a curve
CLOUD_ABOVE: Final = 0.8  # over this: neighbours are no closer than any two rows, a cloud
SAME_LENGTH: Final = 1e-5  # rows whose lengths differ by less than this have "one length"

INTRO: Final = (
    "Each dot is one position's row of the positional table, centred (the mean row "
    "subtracted) and projected on the table's first three principal components; a line "
    "joins consecutive positions and the colour runs from position 0 to the last. Drag to "
    "turn a cloud, hover for a position's coordinates."
)
ROPE_NOTE: Final = (
    "RoPE adds no vectors: its table here is where it carries the vector (1, 0) of every "
    "pair of dimensions (j, j + d/2) at position p, cos(p·θⱼ) then sin(p·θⱼ)."
)
NONE_NOTE: Final = (
    "The *none* scheme adds nothing: its table is all zeros, so there is nothing to project."
)


def shape_sentence(shape: TableGeometry, drawn: int | None = None) -> str:
    """How many directions hold 90 % of the table's variance, and how much the picture shows
    (``drawn``: the components its scene draws, :class:`GeometryDecisions`; default the
    table's own)."""
    label, rows = shape.table.label, shape.table.rows
    if shape.directions_90 == 0:
        return f"**{label}**: all {rows} rows are the same, so there is nothing to project."
    components = shape.components if drawn is None else drawn
    return (
        f"**{label}**: 90 % of the variance of its {rows} centred rows lies in "
        f"**{shape.directions_90} of {len(shape.singular_values)}** directions; the "
        f"{_count(components)} drawn hold {shape.shown_share * 100:.0f} %."
    )


def _count(components: int) -> str:
    return {1: "one direction", 2: "two", 3: "three"}.get(components, "none")


def order_sentence(shape: TableGeometry) -> str | None:
    """Cloud or curve, from how far apart neighbouring positions are (``None`` if the table
    has under 3 rows or no variance)."""
    ratio = shape.step_ratio
    if ratio is None:
        return None
    if ratio < CURVE_BELOW:
        verdict = "neighbours are close, so the positions trace a **curve**"
    elif ratio > CLOUD_ABOVE:
        verdict = "neighbours are no closer than any two positions: a **cloud**"
    else:
        verdict = "neighbours are somewhat closer than any two positions"
    return (
        f"**{shape.table.label}**: neighbouring positions are {ratio:.2f} times as far apart "
        f"as two positions taken at random (root mean square, all {shape.table.emb_dim} "
        f"dimensions): {verdict}."
    )


def length_sentence(shape: TableGeometry) -> str:
    """The range of the row lengths |row p|."""
    norms = shape.row_norms
    low, high = float(norms.min()), float(norms.max())
    label = shape.table.label
    if high - low < SAME_LENGTH:
        return f"**{label}**: every position vector has length {high:.4f}."
    return (
        f"**{label}**: position vectors are {low:.3f} to {high:.3f} long "
        f"(mean {float(norms.mean()):.3f})."
    )


def cosines_sentence(cosines: tuple[TokenCosines, ...]) -> str | None:
    """GPT-2's largest |cos| between position and token rows, beside the random init's."""
    if not cosines:
        return None
    by = {(c.positions, c.tokens): c for c in cosines}
    trained, baseline = cosines[0].positions, cosines[-1].positions
    window, sample = by[(trained, "window")], by[(trained, "sample")]
    text = for_markdown(window.token_text)
    return (
        f"Largest |cosine| between a row of **{trained}**'s positional table and a token row: "
        f"**{window.max_abs:.3f}** with the window's {window.count} distinct tokens (position "
        f"{window.position}, token {text}), **{sample.max_abs:.3f}** with {sample.count:,} "
        f"tokens of the vocabulary (every 50th id); mean |cosine| {window.mean_abs:.3f} and "
        f"{sample.mean_abs:.3f}. The {baseline} table against the same token rows: "
        f"{by[(baseline, 'window')].max_abs:.3f} and {by[(baseline, 'sample')].max_abs:.3f} "
        f"(mean {by[(baseline, 'window')].mean_abs:.3f} and "
        f"{by[(baseline, 'sample')].mean_abs:.3f})."
    )


def sentences(view: GeometryView, decisions: GeometryDecisions) -> list[str]:
    """The Markdown paragraphs under the Geometry figure ``decisions`` describe (the
    components each scene draws), in reading order."""
    main, contrast = decisions.components
    found = [shape_sentence(view.main, main), shape_sentence(view.contrast, contrast)]
    bias = scheme(view.settings.scheme).bias
    if bias is not None:
        found.insert(0, bias.geometry_note)
    for shape in (view.main, view.contrast):
        order = order_sentence(shape)
        if order is not None:
            found.append(order)
    found += [length_sentence(view.main), length_sentence(view.contrast)]
    cosines = cosines_sentence(view.cosines)
    if cosines is not None:
        found.append(cosines)
    if view.main.table.scheme.rotates:
        found.append(ROPE_NOTE)
        rotation = view.main.table.scheme.rotation
        said = (
            ""
            if rotation is None
            else rotation.describe(
                view.settings.emb_dim, view.settings.options(), view.main.table.table.shape[0]
            )
        )
        if said:
            found.append(said)
    if view.main.table.scheme.positionless:
        found.append(NONE_NOTE)
    return found


def _verdict(shape: TableGeometry) -> str:
    """Curve, cloud, in between or nothing, from the step ratio (see :func:`order_sentence`)."""
    ratio = shape.step_ratio
    if ratio is None:
        return "nothing to draw"
    if ratio < CURVE_BELOW:
        return "a curve"
    return "a cloud" if ratio > CLOUD_ABOVE else "in between"


def lecture_answer(view: GeometryView, decisions: GeometryDecisions) -> str:
    """Lecture mode's answer to "cloud or curve?", from the numbers of both tables the figure
    ``decisions`` describe (a table whose scene draws nothing has nothing to say)."""

    def one(shape: TableGeometry, drawn: int) -> str:
        if shape.step_ratio is None or not drawn:
            return f"**{shape.table.label}**: all rows the same, nothing to draw"
        return (
            f"**{shape.table.label}**: {_verdict(shape)} (neighbours "
            f"{shape.step_ratio:.2f}× as far apart as any two; 90 % of the variance in "
            f"{shape.directions_90} of {len(shape.singular_values)} directions)"
        )

    main, contrast = decisions.components
    return f"{one(view.main, main)}. Beside it, {one(view.contrast, contrast)}."
