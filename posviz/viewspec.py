"""posviz's views, one :class:`ViewSpec` each: the only list of views.

A view has one name, the same wherever a user types it: a link's ``tab=``, the command
line's ``--view``, the notebook's ``posviz.show(..., view=...)``, a lecture step's ``view``
and the code tab's script. Its spec carries the tab's label, where it shows (a tab of the
page, lecture slides only) and how the core draws its figure from
:class:`~posviz.config.Settings` (``None`` for the pages that draw no figure: the code, the
downloads, the lecture's text and tokens). Every other list of views (``posviz.query.TABS``,
the command line's choices, the notebook's, the app's tabs and slide views) is derived from
:data:`VIEWS`.

>>> [spec.name for spec in VIEWS if spec.figure is not None][-3:]
['attention', 'training', 'length']
>>> view_named("distance").label
'Distance & length'

Names older versions used still work and say the new word:

>>> view_named("compare").name, renamed("compare")
('word-order', "'compare' is now called 'word-order'")
>>> renamed("word-order") is None
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Literal, get_args

import plotly.graph_objects as go

from posviz.config import Settings, SettingsError
from posviz.distance import build_distance
from posviz.geometry import build_geometry
from posviz.pipeline import EmbeddingTables, WindowEmbeddings
from posviz.plots.attention import attention_chart
from posviz.plots.distance import distance_figure
from posviz.plots.geometry import geometry_figure
from posviz.plots.heatmaps import embeddings_figure, similarity_figure
from posviz.plots.length import length_figure
from posviz.plots.training import training_figure
from posviz.plots.word_order import compare_figure
from posviz.scores import build_attention
from posviz.training.length_view import build_length
from posviz.training.runs import load_named_run
from posviz.training.view import build_training
from posviz.view import TablesFor, View, build_view, build_word_order, seeded_tables

# Every view's one name. mypy checks every mapping keyed by it; VIEWS must follow this order.
ViewName = Literal[
    "embeddings",
    "similarity",
    "geometry",
    "distance",
    "word-order",
    "attention",
    "training",
    "length",
    "code",
    "download",
    "text",
    "tokens",
]
# The views the core draws as a figure (the command line's --view, the notebook's view=).
FigureName = Literal[
    "embeddings", "similarity", "geometry", "distance", "word-order", "attention", "training",
    "length",
]  # fmt: skip
# The views whose numbers the code tab's script reproduces (posviz.codegen's ``view=``).
CodeName = Literal["embeddings", "geometry", "distance", "attention"]
ComponentView = Literal["2d", "3d"]


@dataclass(frozen=True)
class Drawing:
    """How to draw a view's figure, beyond its settings (every field has a default).

    ``tables``: the token and positional tables of the settings (the book's seeded ones, or
    GPT-2's, which the caller loads). ``beyond``: the Distance view's positions past the
    context length (``None``: a quarter of it). ``components``: the Training view's
    principal components, ``"2d"`` or ``"3d"``. ``gpt2``: GPT-2's tables for the Training
    view to draw beside a run's, if the caller has them. ``schemes``: the Length view's
    schemes (``None``: every one with a shipped run).
    """

    lecture: bool = False
    tables: TablesFor = seeded_tables
    beyond: int | None = None
    components: ComponentView = "2d"
    gpt2: EmbeddingTables | None = field(default=None, repr=False)
    schemes: tuple[str, ...] | None = None


FigureBuilder = Callable[[Settings, Drawing], go.Figure]


@dataclass(frozen=True)
class ViewSpec:
    """One view: its one name, its tab's label, where it shows and how it is drawn."""

    name: ViewName
    label: str  # the tab's label (and a slide's view, when it has no tab)
    figure: FigureBuilder | None  # its figure from Settings (None: a page without a figure)
    tab: bool = True  # a tab of the page (False: only lecture mode's stage shows it)
    old_names: tuple[str, ...] = ()  # spellings older versions used, still read


def _shown(settings: Settings, drawing: Drawing) -> tuple[View, WindowEmbeddings]:
    """The settings' view (checked strictly, as the command line and the notebook take them)
    and its window."""
    view = build_view(settings, strict=True, tables=drawing.tables)
    if view.embeddings is None:
        raise SettingsError("the text is empty: give some text")
    return view, view.embeddings


def _view(settings: Settings, drawing: Drawing) -> View:
    return _shown(settings, drawing)[0]


def _window(settings: Settings, drawing: Drawing) -> WindowEmbeddings:
    return _shown(settings, drawing)[1]


def _embeddings(settings: Settings, drawing: Drawing) -> go.Figure:
    return embeddings_figure(_window(settings, drawing), lecture=drawing.lecture)


def _similarity(settings: Settings, drawing: Drawing) -> go.Figure:
    return similarity_figure(_window(settings, drawing), lecture=drawing.lecture)


def _geometry(settings: Settings, drawing: Drawing) -> go.Figure:
    geometry = build_geometry(_view(settings, drawing), tables=drawing.tables)
    return geometry_figure(geometry, lecture=drawing.lecture)


def _distance(settings: Settings, drawing: Drawing) -> go.Figure:
    view = _view(settings, drawing)
    distance = build_distance(view, beyond=drawing.beyond, tables=drawing.tables)
    return distance_figure(distance, lecture=drawing.lecture)


def _word_order(settings: Settings, drawing: Drawing) -> go.Figure:
    comparison = build_word_order(_view(settings, drawing), tables=drawing.tables)
    if comparison.status != "permutation":  # identical texts too: a sentence, not a chart
        raise SettingsError(
            "the Word-order view needs compare_text (--compare): the same tokens in another "
            f"order (got status {comparison.status!r})"
        )
    return compare_figure(comparison, lecture=drawing.lecture)


def _attention(settings: Settings, drawing: Drawing) -> go.Figure:
    attention = build_attention(_view(settings, drawing), tables=drawing.tables)
    return attention_chart(attention, lecture=drawing.lecture).spec.figure()


def _training(settings: Settings, drawing: Drawing) -> go.Figure:
    run = load_named_run(settings.run)
    training = build_training(run, settings.train_step, gpt2=drawing.gpt2)
    return training_figure(training, lecture=drawing.lecture, components=drawing.components)


def _length(settings: Settings, drawing: Drawing) -> go.Figure:
    length = build_length(settings, schemes=drawing.schemes, tables=drawing.tables)
    return length_figure(length, lecture=drawing.lecture)


VIEWS: Final[tuple[ViewSpec, ...]] = (
    ViewSpec("embeddings", "Embeddings", _embeddings),
    ViewSpec("similarity", "Similarity", _similarity),
    ViewSpec("geometry", "Geometry", _geometry),
    ViewSpec("distance", "Distance & length", _distance),
    ViewSpec("word-order", "Word order", _word_order, old_names=("compare", "word_order")),
    ViewSpec("attention", "Attention", _attention),
    ViewSpec("training", "Training", _training),
    ViewSpec("length", "Length", _length),
    ViewSpec("code", "Show the code", None),
    ViewSpec("download", "Download", None),
    ViewSpec("text", "The text", None, tab=False),
    ViewSpec("tokens", "Tokens", None, tab=False),
)
NAMES: Final[tuple[ViewName, ...]] = tuple(spec.name for spec in VIEWS)
TAB_NAMES: Final[tuple[ViewName, ...]] = tuple(spec.name for spec in VIEWS if spec.tab)
FIGURE_NAMES: Final[tuple[FigureName, ...]] = get_args(FigureName)
_BY_NAME: Final[dict[str, ViewSpec]] = {spec.name: spec for spec in VIEWS}
_OLD_NAMES: Final = {old: spec for spec in VIEWS for old in spec.old_names}
OLD_NAMES: Final[tuple[str, ...]] = tuple(_OLD_NAMES)
if get_args(ViewName) != NAMES or tuple(s.name for s in VIEWS if s.figure) != FIGURE_NAMES:
    raise RuntimeError(f"posviz.viewspec.VIEWS must follow ViewName and FigureName: {NAMES}")
if not set(get_args(CodeName)) <= set(NAMES) or set(_OLD_NAMES) & set(NAMES):
    raise RuntimeError("posviz.viewspec: CodeName must name views; old names must not")


class UnknownViewError(ValueError):
    """A view name that is neither a view's name nor an old spelling of one."""


def view_named(name: str, *, among: tuple[str, ...] = NAMES) -> ViewSpec:
    """The view called ``name`` (or an old spelling of it), one of ``among``.

    >>> view_named("word_order").name
    'word-order'
    >>> view_named("code", among=FIGURE_NAMES)
    Traceback (most recent call last):
    ...
    posviz.viewspec.UnknownViewError: view 'code' is not one of embeddings, similarity, \
geometry, distance, word-order, attention, training, length
    """
    spec = _BY_NAME.get(name) or _OLD_NAMES.get(name)
    if spec is None or spec.name not in among:
        raise UnknownViewError(f"view {name[:40]!r} is not one of {', '.join(among)}")
    return spec


def renamed(name: str) -> str | None:
    """The sentence saying what an old spelling of a view is now called; ``None`` for a
    view's own name (and for a name that is neither)."""
    spec = _OLD_NAMES.get(name)
    return None if spec is None else f"{name!r} is now called {spec.name!r}"
