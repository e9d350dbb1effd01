"""Figures as plain data: what a figure builder makes, before plotly.py's objects.

Every builder in :mod:`posviz.plots` writes its traces and layout as dicts, typed and checked
where they are built, and :class:`FigureSpec` holds them. The public builders
(``embeddings_figure``...) return ``go.Figure``, as a notebook or ``plotly.io`` expects;
the app's chart component takes the spec itself (``*_spec``), which skips building
plotly.py's objects and copying them back to JSON (a third of a rerun's figure work): the
JSON is the same, template included.

>>> spec = FigureSpec([{"type": "heatmap", "z": [[1]]}], {"height": 200})
>>> spec.plotly_json()["layout"]["height"], spec.figure().layout.height
(200, 200)
>>> figure = spec.figure()
>>> spec.plotly_json() == {"data": [trace.to_plotly_json() for trace in figure.data],
...                        "layout": figure.layout.to_plotly_json()}
True

A view's words must never re-decide what its figure decided (which rows, columns and
dimensions it shows, whether its panels are stacked, which token it outlines first, which texts
it compared). A builder that decides such things returns :class:`Drawn`: the spec beside its
decisions, a frozen dataclass of the builder's own, which the sentences read.

>>> drawn = Drawn(spec, decisions=("stacked", False))
>>> drawn.spec is spec, drawn.decisions
(True, ('stacked', False))
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, wraps
from typing import Any, Generic, ParamSpec, TypeVar

import plotly.graph_objects as go
import plotly.io as pio

P = ParamSpec("P")
D = TypeVar("D")
B = TypeVar("B", bound=Callable[..., object])  # a builder being named


@cache
def _template(name: str) -> dict[str, Any]:
    template: dict[str, Any] = pio.templates[name].to_plotly_json()
    return template


def default_template() -> dict[str, Any]:
    """The layout template ``go.Figure`` gives a figure that names none (plotly.io's default),
    one object per template name: shared, read it only."""
    return _template(str(pio.templates.default))


# A cartesian axis of the layout (``xaxis``, ``yaxis3``...).
_AXIS = re.compile(r"[xy]axis\d*")


@dataclass(frozen=True, eq=False)
class FigureSpec:
    """A figure's traces and layout as plain data (numpy arrays stay arrays).

    Every axis and colour bar gets ``ticklabeloverflow="allow"`` unless its builder set one:
    posviz lays its tick labels out inside the figure, and plotly.js's default ("hide past
    div") measures every tick label's box on every draw to hide those outside it.

    >>> spec = FigureSpec([], {"xaxis2": {"title": "k"}, "coloraxis": {"colorbar": {}}})
    >>> spec.layout["xaxis2"]["ticklabeloverflow"], spec.layout["coloraxis"]["colorbar"]
    ('allow', {'ticklabeloverflow': 'allow'})
    """

    data: list[dict[str, Any]]
    layout: dict[str, Any]

    def __post_init__(self) -> None:
        for name, value in self.layout.items():
            if not isinstance(value, dict):
                continue
            if _AXIS.fullmatch(name):
                value.setdefault("ticklabeloverflow", "allow")
            elif name.startswith("coloraxis") and isinstance(value.get("colorbar"), dict):
                value["colorbar"].setdefault("ticklabeloverflow", "allow")

    def figure(self) -> go.Figure:
        """The figure as ``go.Figure``. Every property was built to plotly.js's schema from
        typed values, so plotly's per-property validation is skipped: it took half of a rerun
        at the default sizes and walked every row label at T = 1024; the JSON is the same."""
        return go.Figure(data=self.data, layout=self.layout, _validate=False)

    def plotly_json(self) -> dict[str, Any]:
        """What the figure's traces and layout give as plotly JSON (``to_plotly_json`` of each;
        numpy arrays stay arrays), without building the figure: the layout gets plotly.io's
        default template (shared, not copied: read it only)."""
        layout = self.layout
        if "template" not in layout:
            layout = {**layout, "template": default_template()}
        return {"data": self.data, "layout": layout}


@dataclass(frozen=True, eq=False)
class Drawn(Generic[D]):
    """What a figure builder made: the figure's spec and the decisions it took on the way
    (a frozen dataclass per builder), for the words beside the figure to read."""

    spec: FigureSpec
    decisions: D


def spec_of(chart: Callable[P, Drawn[Any]]) -> Callable[P, FigureSpec]:
    """The spec builder of ``chart``: the same arguments, the figure's spec without the
    decisions, named for it (``embeddings_chart`` gives ``embeddings_spec``), for callers that
    word nothing (the command line, the notebook, the exports).

    >>> def dots_chart(n: int) -> Drawn[int]:
    ...     "Dots, and how many."
    ...     return Drawn(FigureSpec([{"type": "scatter", "y": list(range(n))}], {}), n)
    >>> dots_spec = spec_of(dots_chart)
    >>> dots_spec.__name__, dots_spec(3).data[0]["y"]
    ('dots_spec', [0, 1, 2])
    """

    @wraps(chart)
    def build(*args: P.args, **kwargs: P.kwargs) -> FigureSpec:
        return chart(*args, **kwargs).spec

    return _named_for(
        build, chart, "_chart", "_spec",
        f"The spec alone; :func:`{chart.__name__}` gives its decisions too.",
    )  # fmt: skip


def as_figure(spec: Callable[P, FigureSpec]) -> Callable[P, go.Figure]:
    """The public builder of ``spec``: the same arguments, the figure as ``go.Figure``, named
    for it (``embeddings_spec`` gives ``embeddings_figure``).

    >>> def dots_spec(n: int) -> FigureSpec:
    ...     "Dots."
    ...     return FigureSpec([{"type": "scatter", "y": list(range(n))}], {})
    >>> dots_figure = as_figure(dots_spec)
    >>> dots_figure.__name__, dots_figure.__doc__.splitlines()[0], dots_figure(3).data[0].y
    ('dots_figure', 'Dots.', (0, 1, 2))
    """

    @wraps(spec)
    def build(*args: P.args, **kwargs: P.kwargs) -> go.Figure:
        return spec(*args, **kwargs).figure()

    return _named_for(
        build, spec, "_spec", "_figure",
        f"As ``go.Figure``; :func:`{spec.__name__}` gives the spec.",
    )  # fmt: skip


def _named_for(build: B, source: Callable[..., object], old: str, new: str, note: str) -> B:
    """``build`` named as ``source`` with its suffix ``old`` turned to ``new``, and documented
    as ``source`` is, with ``note`` after."""
    name = source.__name__.removesuffix(old) + new
    build.__name__ = name
    build.__qualname__ = source.__qualname__.removesuffix(source.__name__) + name
    build.__doc__ = f"{source.__doc__ or ''}\n\n{note}"
    return build
