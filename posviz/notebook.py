"""One call for a notebook: :func:`show` gives the figure of a view, which Jupyter draws.

The explicit calls read as the book does (``build_view``, then a figure builder);
:func:`show` is the same path in one line, for trying texts and settings quickly::

    import posviz
    posviz.show("A rose is a rose is a rose.", context_length=8)            # the three panels
    posviz.show("A rose is a rose is a rose.", view="similarity")            # cosine similarity
    posviz.show("The dog bites the man", compare_text="The man bites the dog",
                view="word_order")                                           # self-attention
    posviz.show(context_length=256, scheme="sinusoidal", view="geometry")    # helix or cloud
    posviz.show(context_length=64, view="distance", beyond=32)              # cosine by distance

>>> figure = show("A rose is a rose", context_length=8, emb_dim=16)
>>> [trace.type for trace in figure.data], figure.data[0].z.shape
(['heatmap', 'heatmap', 'heatmap'], (5, 16))
"""

from __future__ import annotations

from typing import Literal

import plotly.graph_objects as go

from posviz.config import Settings, SettingsError, with_options
from posviz.distance import build_distance
from posviz.geometry import build_geometry
from posviz.plots.distance import distance_figure
from posviz.plots.geometry import geometry_figure
from posviz.plots.heatmaps import embeddings_figure, similarity_figure
from posviz.plots.word_order import compare_figure
from posviz.schemes import OPTIONS
from posviz.view import build_view, build_word_order

NotebookView = Literal["embeddings", "similarity", "word_order", "geometry", "distance"]


def show(
    text: str = Settings.text,
    *,
    view: NotebookView = "embeddings",
    lecture: bool = False,
    **settings: object,
) -> go.Figure:
    """The figure of ``view`` for ``text`` and ``settings`` (any other field of
    :class:`~posviz.config.Settings`: ``context_length``, ``emb_dim``, ``seed``, ``scheme``,
    ``window``, ``compare_text``..., and a scheme's options by name, such as ``rope_base``; for
    ``view="distance"`` also ``beyond``, positions past the context length), with the book's
    seeded tables.

    Raises :class:`~posviz.config.SettingsError` for a value out of range, a window the text
    does not have, an empty text, and a Word-order view without a reordered second text.
    """
    beyond = settings.pop("beyond", None) if view == "distance" else None
    options = {name: settings.pop(name) for name in OPTIONS if name in settings}  # rope_base...
    chosen = build_view(
        with_options(Settings(text=text, **settings), **options),  # type: ignore[arg-type]
        strict=True,
    )
    if chosen.embeddings is None:
        raise SettingsError("the text is empty: give show() some text")
    if view == "embeddings":
        return embeddings_figure(chosen.embeddings, lecture=lecture)
    if view == "similarity":
        return similarity_figure(chosen.embeddings, lecture=lecture)
    if view == "word_order":
        comparison = build_word_order(chosen)
        if comparison.with_positions is None:
            raise SettingsError(
                "view='word_order' needs compare_text: the same tokens in another order "
                f"(got status {comparison.status!r})"
            )
        return compare_figure(comparison, lecture=lecture)
    if view == "geometry":
        return geometry_figure(build_geometry(chosen), lecture=lecture)
    if view == "distance":
        distance = build_distance(chosen, beyond=beyond)  # type: ignore[arg-type]
        return distance_figure(distance, lecture=lecture)
    raise SettingsError(
        f"view must be embeddings, similarity, word_order, geometry or distance, got {view!r}"
    )
