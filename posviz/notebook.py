"""One call for a notebook: :func:`show` gives the figure of a view, which Jupyter draws.

The explicit calls read as the book does (``build_view``, then a figure builder);
:func:`show` is the same path in one line, for trying texts and settings quickly. ``view`` is
the view's one name (:data:`posviz.viewspec.FIGURE_NAMES`, as in links and on the command
line)::

    import posviz
    posviz.show("A rose is a rose is a rose.", context_length=8)            # the three panels
    posviz.show("A rose is a rose is a rose.", view="similarity")            # cosine similarity
    posviz.show("The dog bites the man", compare_text="The man bites the dog",
                view="word-order")                                           # self-attention
    posviz.show(context_length=256, scheme="sinusoidal", view="geometry")    # helix or cloud
    posviz.show(context_length=64, view="distance", beyond=32)              # cosine by distance
    posviz.show("Every effort moves you", scheme="rope", view="attention", heads=4, shift=8)
    posviz.show(view="training", run="small-init", train_step=600)          # a training run
    posviz.show(view="length", schemes=["alibi", "rope"], rope_scaling="yarn")  # past L

>>> figure = show("A rose is a rose", context_length=8, emb_dim=16)
>>> [trace.type for trace in figure.data], figure.data[0].z.shape
(['heatmap', 'heatmap', 'heatmap'], (5, 16))
"""

from __future__ import annotations

import warnings

import plotly.graph_objects as go

from posviz.config import Settings, SettingsError, with_options
from posviz.schemes import OPTIONS
from posviz.viewspec import FIGURE_NAMES, Drawing, FigureName, UnknownViewError, renamed, view_named

NotebookView = FigureName  # the views show() draws


def _schemes(value: object) -> tuple[str, ...] | None:
    """The Length view's ``schemes`` as a tuple of names (``None``: every one)."""
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise SettingsError(f"schemes must be a list of scheme names, got {value!r}")
    return tuple(str(name) for name in value)


def show(
    text: str = Settings.text,
    *,
    view: NotebookView = "embeddings",
    lecture: bool = False,
    **settings: object,
) -> go.Figure:
    """The figure of ``view`` for ``text`` and ``settings`` (any other field of
    :class:`~posviz.config.Settings`: ``context_length``, ``emb_dim``, ``seed``, ``scheme``,
    ``window``, ``compare_text``, ``heads``, ``head``, ``shift``, ``run``, ``train_step``...,
    and a scheme's options by name, such as ``rope_base``; for ``view="distance"`` also
    ``beyond``, positions past the context length; for ``view="training"`` also
    ``components``, ``"2d"`` or ``"3d"``; for ``view="length"`` also ``schemes``, the
    schemes whose losses to draw), with the book's seeded tables. An old spelling of
    a view (``"word_order"``) still works, with a :class:`DeprecationWarning` naming the new
    one.

    Raises :class:`~posviz.config.SettingsError` for a value out of range, a view it does not
    draw, a window the text does not have, an empty text, and a Word-order view without a
    reordered second text.
    """
    try:
        spec = view_named(view, among=FIGURE_NAMES)
    except UnknownViewError as error:
        raise SettingsError(str(error)) from None
    note = renamed(view)
    if note is not None:
        warnings.warn(f"posviz.show: view {note}", DeprecationWarning, stacklevel=2)
    owners = (("beyond", "distance"), ("components", "training"), ("schemes", "length"))
    for option, owner in owners:
        if option in settings and spec.name != owner:
            raise SettingsError(f"{option} is for view={owner!r}, not view={spec.name!r}")
    options = {name: settings.pop(name) for name in OPTIONS if name in settings}  # rope_base...
    drawing = Drawing(
        lecture=lecture,
        beyond=settings.pop("beyond", None),  # type: ignore[arg-type]
        components=settings.pop("components", "2d"),  # type: ignore[arg-type]
        schemes=_schemes(settings.pop("schemes", None)),
    )
    if spec.figure is None:  # FIGURE_NAMES have one; for mypy
        raise SettingsError(f"view {view!r} draws no figure")
    chosen = with_options(Settings(text=text, **settings), **options)  # type: ignore[arg-type]
    return spec.figure(chosen, drawing)
