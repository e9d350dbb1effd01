"""posviz's views, one module each, each with one renderer (``render(room)``) that its tab and
its lecture slides both call (see :mod:`posviz_app.room`).

The views themselves, their names, labels and order, are :data:`posviz.viewspec.VIEWS`; this
package only attaches a renderer to each (:data:`RENDERERS`, keyed by the view's one name and
checked complete when it is imported). :data:`TABS` are the registry's tabs with their
renderers; :data:`SLIDE_VIEWS` gives the renderer of the view a lecture step names
(:attr:`posviz.lesson.lecture.Step.view`). A new view adds its spec to the registry, its module
here and one entry in :data:`RENDERERS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from posviz.viewspec import NAMES, VIEWS, ViewName
from posviz_app.room import Room
from posviz_app.views import (
    attention,
    code,
    distance,
    download,
    embeddings,
    geometry,
    length,
    similarity,
    tokens,
    training,
    word_order,
)

Render = Callable[[Room], None]

RENDERERS: Final[Mapping[ViewName, Render]] = {
    "embeddings": embeddings.render,
    "similarity": similarity.render,
    "geometry": geometry.render,
    "distance": distance.render,
    "word-order": word_order.render,
    "attention": attention.render,
    "training": training.render,
    "length": length.render,
    "code": code.render,
    "download": download.render,
    "text": tokens.render_text,
    "tokens": tokens.render_tokens,
}
if set(RENDERERS) != set(NAMES):  # every view in the registry has exactly one renderer
    raise RuntimeError(
        "posviz_app.views.RENDERERS must give a renderer to each view of posviz.viewspec: "
        f"missing {sorted(set(NAMES) - set(RENDERERS))}, unknown "
        f"{sorted(set(RENDERERS) - set(NAMES))}"
    )


@dataclass(frozen=True)
class Tab:
    """A tab of the page: its name in links, its label, its renderer."""

    name: ViewName
    label: str
    render: Render


TABS: Final = tuple(Tab(spec.name, spec.label, RENDERERS[spec.name]) for spec in VIEWS if spec.tab)
LABELS: Final[Mapping[ViewName, str]] = {tab.name: tab.label for tab in TABS}
SLIDE_VIEWS: Final = RENDERERS  # a lecture step's view draws with its tab's renderer


def tab_named(label: object) -> Tab:
    """The tab with ``label`` (the tabs widget's value), else the first.

    >>> tab_named("Distance & length").name, tab_named(None).name
    ('distance', 'embeddings')
    """
    return next((tab for tab in TABS if tab.label == label), TABS[0])
