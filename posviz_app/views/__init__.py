"""posviz's views, one module each, each with one renderer (``render(room)``) that its tab and
its lecture slides both call (see :mod:`posviz_app.room`).

:data:`TABS` lists the tabs in order, by the name links give them (``tab=``,
:data:`posviz.query.TABS`) with their labels; :data:`SLIDE_VIEWS` gives the renderer of each
view a lecture step names (:attr:`posviz.lesson.lecture.Step.view`). A new view adds its module
and one entry in each.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from posviz.query import TABS as TAB_NAMES
from posviz_app.room import Room
from posviz_app.state import WORD_ORDER_TAB
from posviz_app.views import (
    attention,
    code,
    distance,
    download,
    embeddings,
    geometry,
    similarity,
    tokens,
    training,
    word_order,
)

Render = Callable[[Room], None]


@dataclass(frozen=True)
class Tab:
    """A tab of the page: its name in links, its label, its renderer."""

    name: str
    label: str
    render: Render


TABS: Final = (
    Tab("embeddings", "Embeddings", embeddings.render),
    Tab("similarity", "Similarity", similarity.render),
    Tab("geometry", "Geometry", geometry.render),
    Tab("distance", "Distance & length", distance.render),
    Tab("word-order", WORD_ORDER_TAB, word_order.render),
    Tab("attention", "Attention", attention.render),
    Tab("training", "Training", training.render),
    Tab("code", "Show the code", code.render),
    Tab("download", "Download", download.render),
)
if tuple(tab.name for tab in TABS) != TAB_NAMES:  # the links' names, in the same order
    raise RuntimeError(f"posviz_app.views.TABS must follow posviz.query.TABS: {TAB_NAMES}")
LABELS: Final = {tab.name: tab.label for tab in TABS}

SLIDE_VIEWS: Final[dict[str, Render]] = {
    "text": tokens.render_text,
    "tokens": tokens.render_tokens,
    "embeddings": embeddings.render,
    "similarity": similarity.render,
    "word_order": word_order.render,
    "geometry": geometry.render,
    "distance": distance.render,
    "attention": attention.render,
    "training": training.render,
}


def tab_named(label: object) -> Tab:
    """The tab with ``label`` (the tabs widget's value), else the first.

    >>> tab_named("Distance & length").name, tab_named(None).name
    ('distance', 'embeddings')
    """
    return next((tab for tab in TABS if tab.label == label), TABS[0])
